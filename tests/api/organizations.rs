//! `/v1/organizations/`: authentication and scopes, tenancy, create validation, update,
//! filters, pagination, sorting and concurrent creates (reference sections 4, 6, 8, 9.6).

use std::collections::HashSet;

use chrono::{Duration, Utc};
use futures_util::future::join_all;
use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::helpers::{assert_utc_timestamp, spawn_app, Reply, TestApp};

const ORGS: &str = "/v1/organizations/";

const RESERVED: &[&str] = &[
    "benefits",
    "donations",
    "issue-funding",
    "newsletters",
    "products",
    "careers",
    "legal",
    "docs",
    "login",
    "signup",
    "oauth2",
    "checkout",
    "embed",
    "maintainer",
    "dashboard",
    "feed",
    "for-you",
    "posts",
    "purchases",
    "funding",
    "rewards",
    "settings",
    "backoffice",
    "finance",
    ".well-known",
];

fn org_path(id: &str) -> String {
    format!("{ORGS}{id}")
}

const UNKNOWN_ID: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";

/// A user with organizations:write and one organization of their own.
async fn member_with_org(app: &TestApp, email: &str, slug: &str) -> (String, Value) {
    let (_, token) = app
        .new_user_with_scopes(email, &[Scope::OrganizationsWrite])
        .await;
    let org = app.created_org_as(&token, "Member Org", slug).await;
    (token, org)
}

#[track_caller]
fn assert_unauthorized(r: &Reply) {
    assert_eq!(r.expect_error(401), "Unauthorized", "{}", r.body);
    assert_eq!(r.body["detail"], "Unauthorized");
    assert!(
        r.www_authenticate().contains("Bearer realm=\"polar\""),
        "WWW-Authenticate: {:?}",
        r.www_authenticate()
    );
}

#[track_caller]
fn assert_invalid_token(r: &Reply) {
    r.expect(401);
    assert!(r.content_type().starts_with("application/json"));
    assert_eq!(r.body["error"], "invalid_token", "{}", r.body);
    assert!(r.body["error_description"].is_string(), "{}", r.body);
    let h = r.www_authenticate();
    assert!(h.contains("Bearer realm=\"polar\""), "{h}");
    assert!(h.contains("error=\"invalid_token\""), "{h}");
}

#[track_caller]
fn assert_insufficient_scope(r: &Reply) {
    r.expect(403);
    assert!(r.content_type().starts_with("application/json"));
    assert_eq!(r.body["error"], "insufficient_scope", "{}", r.body);
    assert_eq!(
        r.body["error_description"],
        "The request requires higher privileges than provided by the access token."
    );
    let h = r.www_authenticate();
    assert!(h.contains("Bearer realm=\"polar\""), "{h}");
    assert!(h.contains("scope=\""), "{h}");
    assert!(h.contains("error=\"insufficient_scope\""), "{h}");
}

// ---------------------------------------------------------------------------------------
// Authentication and scopes
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn every_endpoint_without_a_token_is_401_unauthorized() {
    let app = spawn_app().await;
    let org = app.created_org_as(&app.token, "Acme", "acme").await;
    let id = org["id"].as_str().unwrap();

    assert_unauthorized(&app.get(ORGS, None).await);
    assert_unauthorized(&app.get(&org_path(id), None).await);
    assert_unauthorized(&app.get(&org_path(UNKNOWN_ID), None).await);
    assert_unauthorized(
        &app.post_json(ORGS, None, &json!({"name": "Acme 2", "slug": "acme-two"}))
            .await,
    );
    assert_unauthorized(
        &app.patch_json(&org_path(id), None, &json!({"name": "Renamed"}))
            .await,
    );
    // Nothing changed.
    let r = app.get_org(id, &app.token).await;
    r.expect(200);
    assert_eq!(r.body["name"], "Acme");
    assert_eq!(app.list_orgs(&app.token, "").await.total_count(), 1);
}

#[actix_web::test]
async fn a_non_bearer_authorization_header_counts_as_no_credentials() {
    let app = spawn_app().await;
    let r = app
        .send(
            app.request(Method::GET, ORGS, None)
                .basic_auth("admin", Some("secret")),
        )
        .await;
    assert_unauthorized(&r);
}

#[actix_web::test]
async fn unknown_or_garbage_bearer_tokens_are_401_invalid_token() {
    let app = spawn_app().await;
    let mut almost = app.token.clone();
    let last = almost.pop().unwrap();
    almost.push(if last == 'a' { 'b' } else { 'a' });
    for token in [
        "garbage",
        "polar_pat_",
        "polar_pat_0000000000000000000000000000000000000000000",
        "polar_at_u_unknown",
        almost.as_str(),
    ] {
        assert_invalid_token(&app.get(ORGS, Some(token)).await);
        assert_invalid_token(
            &app.post_json(ORGS, Some(token), &json!({"name": "Acme", "slug": "acme"}))
                .await,
        );
    }
    assert_eq!(app.list_orgs(&app.token, "").await.total_count(), 0);
}

#[actix_web::test]
async fn a_bad_token_is_refused_before_the_body_is_validated() {
    let app = spawn_app().await;
    let r = app
        .send(
            app.request(Method::POST, ORGS, Some("garbage"))
                .header("content-type", "application/json")
                .body("{not json"),
        )
        .await;
    assert_invalid_token(&r);
    let r = app
        .send(
            app.request(Method::POST, ORGS, None)
                .header("content-type", "application/json")
                .body("{not json"),
        )
        .await;
    assert_unauthorized(&r);
}

#[actix_web::test]
async fn an_expired_personal_access_token_is_401_invalid_token() {
    let app = spawn_app().await;
    let (user, _) = app
        .new_user_with_scopes("expired@example.com", &[Scope::OrganizationsWrite])
        .await;
    let expired = app
        .issue_token_expiring(
            user,
            &[Scope::OrganizationsWrite],
            Some(Utc::now() - Duration::hours(1)),
        )
        .await;
    assert_invalid_token(&app.get(ORGS, Some(&expired)).await);
    let valid = app
        .issue_token_expiring(
            user,
            &[Scope::OrganizationsWrite],
            Some(Utc::now() + Duration::hours(1)),
        )
        .await;
    app.get(ORGS, Some(&valid)).await.expect(200);
}

#[actix_web::test]
async fn a_token_without_organizations_scopes_is_403_insufficient_scope() {
    let app = spawn_app().await;
    let (user, token) = app
        .new_user_with_scopes(
            "noscope@example.com",
            &[Scope::MetricsRead, Scope::ProductsWrite, Scope::Openid],
        )
        .await;
    // Even for an organization the user is a member of.
    let writer = app.issue_token(user, &[Scope::OrganizationsWrite]).await;
    let org = app.created_org_as(&writer, "Mine", "mine-org").await;
    let id = org["id"].as_str().unwrap();

    let r = app.get(ORGS, Some(&token)).await;
    assert_insufficient_scope(&r);
    assert!(
        r.www_authenticate()
            .contains("scope=\"web_default organizations:read organizations:write\""),
        "{}",
        r.www_authenticate()
    );
    assert_insufficient_scope(&app.get_org(id, &token).await);
    assert_insufficient_scope(&app.patch_org(id, &token, &json!({"name": "Nope"})).await);
    let r = app
        .post_json(ORGS, Some(&token), &json!({"name": "Acme", "slug": "acme"}))
        .await;
    assert_insufficient_scope(&r);
    assert!(
        r.www_authenticate()
            .contains("scope=\"web_default organizations:write\""),
        "{}",
        r.www_authenticate()
    );
    // Nothing changed.
    let list = app.list_orgs(&writer, "").await;
    assert_eq!(list.total_count(), 1);
    assert_eq!(list.items()[0]["name"], "Mine");
}

#[actix_web::test]
async fn organizations_read_can_list_and_get_but_not_write() {
    let app = spawn_app().await;
    let (user, writer) = app
        .new_user_with_scopes("reader@example.com", &[Scope::OrganizationsWrite])
        .await;
    let org = app.created_org_as(&writer, "Readable", "readable").await;
    let id = org["id"].as_str().unwrap();
    let reader = app.issue_token(user, &[Scope::OrganizationsRead]).await;

    let list = app.list_orgs(&reader, "").await;
    list.expect(200);
    assert_eq!(list.total_count(), 1);
    assert_eq!(list.items()[0]["id"], id);
    let r = app.get_org(id, &reader).await;
    r.expect(200);
    assert_eq!(r.body["slug"], "readable");

    let r = app
        .patch_org(id, &reader, &json!({"name": "Changed"}))
        .await;
    assert_insufficient_scope(&r);
    assert!(
        r.www_authenticate()
            .contains("scope=\"web_default organizations:write\""),
        "{}",
        r.www_authenticate()
    );
    let r = app
        .post_json(
            ORGS,
            Some(&reader),
            &json!({"name": "New", "slug": "new-org"}),
        )
        .await;
    assert_insufficient_scope(&r);

    assert_eq!(app.get_org(id, &writer).await.body["name"], "Readable");
    assert_eq!(app.list_orgs(&writer, "").await.total_count(), 1);
}

#[actix_web::test]
async fn organizations_write_alone_can_also_read() {
    let app = spawn_app().await;
    let (token, org) = member_with_org(&app, "writer@example.com", "writer-org").await;
    app.list_orgs(&token, "").await.expect(200);
    app.get_org(org["id"].as_str().unwrap(), &token)
        .await
        .expect(200);
}

// ---------------------------------------------------------------------------------------
// Tenancy
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn a_non_member_gets_404_and_an_empty_list() {
    let app = spawn_app().await;
    let (owner, org) = member_with_org(&app, "owner@example.com", "owned-org").await;
    let id = org["id"].as_str().unwrap();
    let (_, stranger) = app
        .new_user_with_scopes("stranger@example.com", &[Scope::OrganizationsWrite])
        .await;

    let r = app.get_org(id, &stranger).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app
        .patch_org(id, &stranger, &json!({"name": "Hijacked"}))
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");

    let list = app.list_orgs(&stranger, "").await;
    list.expect(200);
    assert_eq!(list.total_count(), 0);
    assert_eq!(list.max_page(), 0);
    assert!(list.items().is_empty());
    let list = app.list_orgs(&stranger, "slug=owned-org").await;
    assert_eq!(list.total_count(), 0);
    assert!(list.items().is_empty());

    // The owner's organization is untouched and still theirs.
    let r = app.get_org(id, &owner).await;
    r.expect(200);
    assert_eq!(r.body["name"], "Member Org");
    assert_eq!(app.list_orgs(&owner, "").await.total_count(), 1);
}

#[actix_web::test]
async fn a_non_member_gets_404_even_with_an_invalid_patch_body() {
    let app = spawn_app().await;
    let (_, org) = member_with_org(&app, "owner@example.com", "owned-org").await;
    let (_, stranger) = app
        .new_user_with_scopes("stranger@example.com", &[Scope::OrganizationsWrite])
        .await;
    let r = app
        .patch_org(
            org["id"].as_str().unwrap(),
            &stranger,
            &json!({"default_upfront_split_to_contributors": 1000}),
        )
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
}

#[actix_web::test]
async fn unknown_organizations_are_404() {
    let app = spawn_app().await;
    let r = app.get_org(UNKNOWN_ID, &app.token).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    assert_eq!(r.body["detail"], "Not found");
    let r = app
        .patch_org(
            UNKNOWN_ID,
            &app.token,
            &json!({"default_upfront_split_to_contributors": 50}),
        )
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
}

// ---------------------------------------------------------------------------------------
// Create
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn create_returns_201_with_the_full_organization_shape() {
    let app = spawn_app().await;
    let r = app
        .create_org("Polar Software Inc", "polar-software-inc")
        .await;
    r.expect(201);
    assert!(r.content_type().starts_with("application/json"));
    let o = &r.body;
    for field in [
        "id",
        "created_at",
        "modified_at",
        "name",
        "slug",
        "avatar_url",
        "bio",
        "company",
        "blog",
        "location",
        "email",
        "twitter_username",
        "pledge_minimum_amount",
        "pledge_badge_show_amount",
        "default_upfront_split_to_contributors",
        "profile_settings",
        "feature_settings",
        "subscription_settings",
    ] {
        assert!(o.get(field).is_some(), "missing field {field}: {o}");
    }
    uuid::Uuid::parse_str(o["id"].as_str().unwrap()).expect("id is a UUID");
    assert_utc_timestamp(&o["created_at"]);
    if !o["modified_at"].is_null() {
        assert_utc_timestamp(&o["modified_at"]);
    }
    assert_eq!(o["name"], "Polar Software Inc");
    assert_eq!(o["slug"], "polar-software-inc");
    for nullable in [
        "avatar_url",
        "bio",
        "company",
        "blog",
        "location",
        "email",
        "twitter_username",
    ] {
        assert!(o[nullable].is_null(), "{nullable} should be null: {o}");
    }
    assert!(o["pledge_minimum_amount"].is_i64(), "{o}");
    assert!(o["pledge_badge_show_amount"].is_boolean(), "{o}");
    assert!(
        o["default_upfront_split_to_contributors"].is_null()
            || o["default_upfront_split_to_contributors"].is_i64()
    );
    assert!(o["profile_settings"].is_object(), "{o}");
    assert_eq!(o["feature_settings"], json!({}), "defaults to {{}} (9.6)");
    let s = &o["subscription_settings"];
    assert!(s["allow_multiple_subscriptions"].is_boolean(), "{s}");
    assert!(s["allow_customer_updates"].is_boolean(), "{s}");
    assert!(
        s["proration_behavior"] == "invoice" || s["proration_behavior"] == "prorate",
        "{s}"
    );
}

#[actix_web::test]
async fn create_accepts_optional_fields_and_ignores_unknown_ones() {
    let app = spawn_app().await;
    let r = app
        .post_json(
            ORGS,
            Some(&app.token),
            &json!({
                "name": "Acme",
                "slug": "slug-with-dashes",
                "avatar_url": "https://example.com/a.png",
                "feature_settings": {"issue_funding_enabled": true},
                "subscription_settings": {
                    "allow_multiple_subscriptions": true,
                    "allow_customer_updates": false,
                    "proration_behavior": "invoice"
                },
                "no_such_field": 42
            }),
        )
        .await;
    r.expect(201);
    assert_eq!(r.body["slug"], "slug-with-dashes");
    assert_eq!(r.body["avatar_url"], "https://example.com/a.png");
    assert_eq!(r.body["feature_settings"]["issue_funding_enabled"], true);
    assert_eq!(
        r.body["subscription_settings"],
        json!({
            "allow_multiple_subscriptions": true,
            "allow_customer_updates": false,
            "proration_behavior": "invoice",
            "benefit_revocation_grace_period": 0,
            "prevent_trial_abuse": true
        })
    );
    // Polar's 2026 copies, where it keeps them now.
    assert_eq!(r.body["proration_behavior"], "invoice");
    assert_eq!(r.body["allow_customer_updates"], false);
    assert!(r.body.get("no_such_field").is_none());
    let got = app.get_org(&r.id(), &app.token).await;
    assert_eq!(got.body, r.body, "GET returns what create returned");
}

#[actix_web::test]
async fn the_creator_becomes_a_member() {
    let app = spawn_app().await;
    let (_, token) = app
        .new_user_with_scopes("creator@example.com", &[Scope::OrganizationsWrite])
        .await;
    assert_eq!(app.list_orgs(&token, "").await.total_count(), 0);
    let created = app.created_org_as(&token, "Creator Co", "creator-co").await;
    let id = created["id"].as_str().unwrap();

    let r = app.get_org(id, &token).await;
    r.expect(200);
    assert_eq!(r.body, created);
    let list = app.list_orgs(&token, "").await;
    list.expect(200);
    assert_eq!(list.total_count(), 1);
    assert_eq!(list.max_page(), 1);
    assert_eq!(list.items(), vec![created.clone()]);
    // The admin is not a member of it.
    assert_eq!(
        app.get_org(id, &app.token).await.expect_error(404),
        "ResourceNotFound"
    );
    assert_eq!(app.list_orgs(&app.token, "").await.total_count(), 0);
}

#[actix_web::test]
async fn invalid_slugs_are_422_at_body_slug() {
    let app = spawn_app().await;
    let bad = [
        "",
        "a",
        "ab",
        "Polar Software Inc 🌀",
        "slug/with/slashes",
        "-abc",
        "abc-",
        "a--bc",
        "under_score",
        "dot.ted",
        "café-org",
        "with space",
    ];
    for slug in bad {
        let r = app.create_org("Valid Name", slug).await;
        let item = r.expect_invalid_at(json!(["body", "slug"]));
        assert!(
            item["type"] == "value_error" || item["type"] == "string_too_short",
            "{slug:?}: {item}"
        );
        assert_eq!(item["input"], slug, "{slug:?}: {item}");
    }
    for slug in ["slug/with/slashes", "-abc", "Polar Software Inc 🌀"] {
        let r = app.create_org("Valid Name", slug).await;
        let item = r.expect_invalid_at(json!(["body", "slug"]));
        assert_eq!(
            item["msg"],
            "Value error, The slug can only contain ASCII letters, numbers and hyphens.",
            "{slug:?}"
        );
    }
    assert_eq!(app.list_orgs(&app.token, "").await.total_count(), 0);
}

#[actix_web::test]
async fn reserved_slugs_are_422() {
    let app = spawn_app().await;
    for slug in RESERVED
        .iter()
        .map(|s| s.to_string())
        .chain(["DASHBOARD".to_string(), "Settings".to_string()])
    {
        let r = app.create_org("Valid Name", &slug).await;
        let item = r.expect_invalid_at(json!(["body", "slug"]));
        assert_eq!(item["type"], "value_error", "{slug}: {item}");
        assert_eq!(item["msg"], "Value error, This slug is reserved.", "{slug}");
    }
    assert_eq!(app.list_orgs(&app.token, "").await.total_count(), 0);
}

#[actix_web::test]
async fn valid_slugs_from_polars_tests_are_accepted() {
    let app = spawn_app().await;
    for slug in [
        "polar-software-inc",
        "slug-with-dashes",
        "abc",
        "a1b2c3",
        "123",
    ] {
        let r = app.create_org("Valid Name", slug).await;
        r.expect(201);
        assert_eq!(r.body["slug"], slug);
    }
}

#[actix_web::test]
async fn an_uppercase_slug_is_lowercased() {
    let app = spawn_app().await;
    let r = app.create_org("Shouty", "MyOrg-ABC").await;
    r.expect(201);
    assert_eq!(r.body["slug"], "myorg-abc");
    let got = app.get_org(&r.id(), &app.token).await;
    assert_eq!(got.body["slug"], "myorg-abc");
}

#[actix_web::test]
async fn a_duplicate_slug_is_422_even_in_another_case_or_for_another_user() {
    let app = spawn_app().await;
    app.create_org("First", "dup-slug").await.expect(201);
    let (_, other) = app
        .new_user_with_scopes("other@example.com", &[Scope::OrganizationsWrite])
        .await;
    for (token, slug) in [
        (app.token.as_str(), "dup-slug"),
        (app.token.as_str(), "DUP-SLUG"),
        (app.token.as_str(), "Dup-Slug"),
        (other.as_str(), "dup-slug"),
    ] {
        let r = app.create_org_as(token, "Second", slug).await;
        let item = r.expect_invalid_at(json!(["body", "slug"]));
        assert_eq!(
            item["msg"], "An organization with this slug already exists.",
            "{slug}: {item}"
        );
    }
    assert_eq!(app.list_orgs(&app.token, "").await.total_count(), 1);
    assert_eq!(app.list_orgs(&other, "").await.total_count(), 0);
}

#[actix_web::test]
async fn a_name_shorter_than_3_characters_is_422() {
    let app = spawn_app().await;
    for name in ["", "a", "ab"] {
        let r = app.create_org(name, "fine-slug").await;
        let item = r.expect_invalid_at(json!(["body", "name"]));
        assert_eq!(item["type"], "string_too_short", "{name:?}: {item}");
    }
    app.create_org("abc", "fine-slug").await.expect(201);
}

#[actix_web::test]
async fn name_and_slug_errors_are_reported_together() {
    let app = spawn_app().await;
    let r = app.create_org("a", "a").await;
    r.expect_invalid_at(json!(["body", "name"]));
    r.expect_invalid_at(json!(["body", "slug"]));
}

#[actix_web::test]
async fn avatar_url_must_be_http_or_https() {
    let app = spawn_app().await;
    for url in [
        "ftp://example.com/a.png",
        "javascript:alert(1)",
        "not a url",
        "example.com/a.png",
        "https://",
    ] {
        let r = app
            .post_json(
                ORGS,
                Some(&app.token),
                &json!({"name": "Acme", "slug": "acme", "avatar_url": url}),
            )
            .await;
        r.expect_invalid_at(json!(["body", "avatar_url"]));
    }
    for (i, url) in ["http://example.com/a.png", "https://example.com"]
        .iter()
        .enumerate()
    {
        let slug = format!("acme-{i}");
        let r = app
            .post_json(
                ORGS,
                Some(&app.token),
                &json!({"name": "Acme", "slug": slug, "avatar_url": url}),
            )
            .await;
        r.expect(201);
        assert_eq!(r.body["avatar_url"], *url);
    }
    let r = app
        .post_json(
            ORGS,
            Some(&app.token),
            &json!({"name": "Acme", "slug": "acme-null", "avatar_url": null}),
        )
        .await;
    r.expect(201);
    assert!(r.body["avatar_url"].is_null());
}

#[actix_web::test]
async fn missing_required_fields_are_422_missing() {
    let app = spawn_app().await;
    let r = app
        .post_json(ORGS, Some(&app.token), &json!({"slug": "abc-def"}))
        .await;
    let item = r.expect_invalid_at(json!(["body", "name"]));
    assert_eq!(item["type"], "missing", "{item}");
    assert_eq!(item["msg"], "Field required");
    let r = app
        .post_json(ORGS, Some(&app.token), &json!({"name": "Acme"}))
        .await;
    let item = r.expect_invalid_at(json!(["body", "slug"]));
    assert_eq!(item["type"], "missing", "{item}");
    let r = app.post_json(ORGS, Some(&app.token), &json!({})).await;
    r.expect_validation();
}

// ---------------------------------------------------------------------------------------
// Update
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn patch_updates_default_upfront_split_to_contributors() {
    let app = spawn_app().await;
    let (token, org) = member_with_org(&app, "member@example.com", "split-org").await;
    let id = org["id"].as_str().unwrap();

    let r = app
        .patch_org(
            id,
            &token,
            &json!({"default_upfront_split_to_contributors": 50}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["default_upfront_split_to_contributors"], 50);
    assert_eq!(r.body["id"], id);
    assert_eq!(r.body["slug"], "split-org");
    assert_eq!(r.body["created_at"], org["created_at"]);
    assert_utc_timestamp(&r.body["modified_at"]);
    let got = app.get_org(id, &token).await;
    assert_eq!(got.body["default_upfront_split_to_contributors"], 50);

    for bad in [101, -1] {
        let r = app
            .patch_org(
                id,
                &token,
                &json!({"default_upfront_split_to_contributors": bad}),
            )
            .await;
        r.expect_invalid_at(json!(["body", "default_upfront_split_to_contributors"]));
    }
    for ok in [0, 100] {
        let r = app
            .patch_org(
                id,
                &token,
                &json!({"default_upfront_split_to_contributors": ok}),
            )
            .await;
        r.expect(200);
        assert_eq!(r.body["default_upfront_split_to_contributors"], ok);
    }
}

#[actix_web::test]
async fn a_rejected_patch_changes_nothing() {
    let app = spawn_app().await;
    let (token, org) = member_with_org(&app, "member@example.com", "atomic-org").await;
    let id = org["id"].as_str().unwrap();
    let r = app
        .patch_org(
            id,
            &token,
            &json!({"name": "Renamed Org", "default_upfront_split_to_contributors": 101}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "default_upfront_split_to_contributors"]));
    let got = app.get_org(id, &token).await;
    assert_eq!(got.body, org, "nothing applied from a rejected update");
}

#[actix_web::test]
async fn patch_applies_only_the_fields_sent() {
    let app = spawn_app().await;
    let (token, org) = member_with_org(&app, "member@example.com", "partial-org").await;
    let id = org["id"].as_str().unwrap();
    let r = app
        .patch_org(
            id,
            &token,
            &json!({
                "name": "Renamed Org",
                "avatar_url": "https://example.com/logo.png",
                "pledge_badge_show_amount": true,
                "bio": "We make things"
            }),
        )
        .await;
    r.expect(200);
    let r = app
        .patch_org(id, &token, &json!({"company": "Acme Inc"}))
        .await;
    r.expect(200);
    assert_eq!(r.body["name"], "Renamed Org");
    assert_eq!(r.body["avatar_url"], "https://example.com/logo.png");
    assert_eq!(r.body["pledge_badge_show_amount"], true);
    assert_eq!(r.body["bio"], "We make things");
    assert_eq!(r.body["company"], "Acme Inc");
    assert_eq!(r.body["slug"], "partial-org");
    // An empty body is a valid no-op.
    let r2 = app.patch_org(id, &token, &json!({})).await;
    r2.expect(200);
    for field in [
        "name",
        "avatar_url",
        "bio",
        "company",
        "pledge_badge_show_amount",
    ] {
        assert_eq!(r2.body[field], r.body[field], "{field}");
    }
}

#[actix_web::test]
async fn patch_name_validation() {
    let app = spawn_app().await;
    let (token, org) = member_with_org(&app, "member@example.com", "named-org").await;
    let id = org["id"].as_str().unwrap();
    let r = app.patch_org(id, &token, &json!({"name": "ab"})).await;
    let item = r.expect_invalid_at(json!(["body", "name"]));
    assert_eq!(item["type"], "string_too_short");
    assert_eq!(app.get_org(id, &token).await.body["name"], "Member Org");
}

#[actix_web::test]
async fn patch_avatar_url_validation_and_explicit_null_clears_it() {
    let app = spawn_app().await;
    let (token, org) = member_with_org(&app, "member@example.com", "avatar-org").await;
    let id = org["id"].as_str().unwrap();
    let r = app
        .patch_org(
            id,
            &token,
            &json!({"avatar_url": "ftp://example.com/x.png"}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "avatar_url"]));

    let r = app
        .patch_org(
            id,
            &token,
            &json!({"avatar_url": "https://example.com/x.png"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["avatar_url"], "https://example.com/x.png");
    // Absent leaves it.
    let r = app
        .patch_org(id, &token, &json!({"name": "Still Here"}))
        .await;
    assert_eq!(r.body["avatar_url"], "https://example.com/x.png");
    // Explicit null clears it.
    let r = app
        .patch_org(id, &token, &json!({"avatar_url": null}))
        .await;
    r.expect(200);
    assert!(r.body["avatar_url"].is_null(), "{}", r.body);
    assert!(app.get_org(id, &token).await.body["avatar_url"].is_null());
}

#[actix_web::test]
async fn profile_settings_and_feature_settings_are_merged() {
    let app = spawn_app().await;
    let (token, org) = member_with_org(&app, "member@example.com", "merge-org").await;
    let id = org["id"].as_str().unwrap();

    let r = app
        .patch_org(
            id,
            &token,
            &json!({"profile_settings": {"description": "Hello", "accent_color": "#ff0000"}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["profile_settings"]["description"], "Hello");
    let r = app
        .patch_org(
            id,
            &token,
            &json!({
                "profile_settings": {"enabled": true},
                "feature_settings": {"issue_funding_enabled": true}
            }),
        )
        .await;
    r.expect(200);
    let p = &r.body["profile_settings"];
    assert_eq!(p["enabled"], true, "{p}");
    assert_eq!(p["description"], "Hello", "merged, not replaced: {p}");
    assert_eq!(p["accent_color"], "#ff0000", "{p}");
    assert_eq!(r.body["feature_settings"]["issue_funding_enabled"], true);

    // An empty settings object changes nothing; other fields leave the settings alone.
    let r = app
        .patch_org(
            id,
            &token,
            &json!({"feature_settings": {}, "profile_settings": {}, "bio": "x"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["feature_settings"]["issue_funding_enabled"], true);
    assert_eq!(r.body["profile_settings"]["description"], "Hello");
    assert_eq!(r.body["profile_settings"]["enabled"], true);

    let r = app
        .patch_org(
            id,
            &token,
            &json!({"profile_settings": {"description": "Bye"}}),
        )
        .await;
    assert_eq!(r.body["profile_settings"]["description"], "Bye");
    assert_eq!(r.body["profile_settings"]["enabled"], true);
    assert_eq!(r.body["profile_settings"]["accent_color"], "#ff0000");
    let got = app.get_org(id, &token).await;
    assert_eq!(got.body["profile_settings"], r.body["profile_settings"]);
    assert_eq!(got.body["feature_settings"], r.body["feature_settings"]);
}

#[actix_web::test]
async fn per_user_spending_limit_requires_a_total_not_below_it() {
    let app = spawn_app().await;
    let (token, org) = member_with_org(&app, "member@example.com", "limits-org").await;
    let id = org["id"].as_str().unwrap();

    let r = app
        .patch_org(id, &token, &json!({"per_user_monthly_spending_limit": 100}))
        .await;
    let item = r.expect_invalid_at(json!(["body", "per_user_monthly_spending_limit"]));
    assert_eq!(item["type"], "value_error", "{item}");

    let r = app
        .patch_org(
            id,
            &token,
            &json!({"total_monthly_spending_limit": 50, "per_user_monthly_spending_limit": 100}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "per_user_monthly_spending_limit"]));

    app.patch_org(
        id,
        &token,
        &json!({"total_monthly_spending_limit": 1000, "per_user_monthly_spending_limit": 100}),
    )
    .await
    .expect(200);
    // Now the total is stored, a per-user limit alone is fine if it fits.
    app.patch_org(id, &token, &json!({"per_user_monthly_spending_limit": 500}))
        .await
        .expect(200);
    app.patch_org(
        id,
        &token,
        &json!({"per_user_monthly_spending_limit": 5000}),
    )
    .await
    .expect_invalid_at(json!(["body", "per_user_monthly_spending_limit"]));
}

#[actix_web::test]
async fn patch_rejects_wrongly_typed_fields() {
    let app = spawn_app().await;
    let (token, org) = member_with_org(&app, "member@example.com", "typed-org").await;
    let id = org["id"].as_str().unwrap();
    let r = app
        .patch_org(
            id,
            &token,
            &json!({"default_upfront_split_to_contributors": "fifty"}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "default_upfront_split_to_contributors"]));
    let r = app
        .patch_org(
            id,
            &token,
            &json!({"profile_settings": {"enabled": "maybe"}}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "profile_settings", "enabled"]));
}

#[actix_web::test]
async fn concurrent_patches_of_different_fields_all_apply() {
    let app = spawn_app().await;
    let (token, org) = member_with_org(&app, "member@example.com", "busy-org").await;
    let id = org["id"].as_str().unwrap();
    let bodies = [
        json!({"bio": "bio"}),
        json!({"company": "company"}),
        json!({"blog": "https://blog.example.com"}),
        json!({"location": "Earth"}),
        json!({"twitter_username": "acme"}),
    ];
    let replies = join_all(bodies.iter().map(|b| app.patch_org(id, &token, b))).await;
    for r in &replies {
        r.expect(200);
    }
    let got = app.get_org(id, &token).await;
    assert_eq!(got.body["bio"], "bio");
    assert_eq!(got.body["company"], "company");
    assert_eq!(got.body["blog"], "https://blog.example.com");
    assert_eq!(got.body["location"], "Earth");
    assert_eq!(got.body["twitter_username"], "acme");
}

// ---------------------------------------------------------------------------------------
// List: filter, pagination, sorting
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_slug_filter_matches_exactly() {
    let app = spawn_app().await;
    let a = app.created_org_as(&app.token, "Alpha", "alpha-org").await;
    app.created_org_as(&app.token, "Alpha Two", "alpha-org-two")
        .await;
    let r = app.list_orgs(&app.token, "slug=alpha-org").await;
    r.expect(200);
    assert_eq!(r.total_count(), 1);
    assert_eq!(r.max_page(), 1);
    assert_eq!(r.items(), vec![a.clone()]);
    let r = app.list_orgs(&app.token, "slug=alpha").await;
    assert_eq!(r.total_count(), 0);
    assert!(r.items().is_empty());
    let r = app.list_orgs(&app.token, "slug=no-such-org").await;
    assert_eq!(r.total_count(), 0);
    assert_eq!(r.max_page(), 0);
    // A page beyond the end keeps the count.
    let r = app.list_orgs(&app.token, "slug=alpha-org&page=2").await;
    assert_eq!(r.total_count(), 1);
    assert!(r.items().is_empty());
}

#[actix_web::test]
async fn pagination_follows_polars_numbers() {
    let app = spawn_app().await;
    let (_, token) = app
        .new_user_with_scopes("pager@example.com", &[Scope::OrganizationsWrite])
        .await;
    let mut created = Vec::new();
    for i in 0..25 {
        let slug = format!("page-org-{i:02}");
        created.push(app.created_org_as(&token, &slug, &slug).await);
    }

    let mut seen = Vec::new();
    for (page, expected_len) in [(1, 10), (2, 10), (3, 5), (4, 0), (10, 0)] {
        let r = app
            .list_orgs(&token, &format!("limit=10&page={page}"))
            .await;
        r.expect(200);
        assert_eq!(r.total_count(), 25, "page {page}");
        assert_eq!(r.max_page(), 3, "page {page}");
        assert_eq!(r.items().len(), expected_len, "page {page}");
        seen.extend(r.items());
    }
    assert_eq!(
        seen, created,
        "pages cover every organization once, in order"
    );

    // Defaults: page 1, limit 10.
    let r = app.list_orgs(&token, "").await;
    assert_eq!(r.items().len(), 10);
    assert_eq!(r.max_page(), 3);
    let r = app.list_orgs(&token, "limit=7").await;
    assert_eq!(r.max_page(), 4);
    let r = app.list_orgs(&token, "limit=25").await;
    assert_eq!(r.max_page(), 1);
    assert_eq!(r.items().len(), 25);
    let r = app.list_orgs(&token, "limit=1&page=25").await;
    assert_eq!(r.items(), vec![created[24].clone()]);
}

#[actix_web::test]
async fn sorting_by_created_at_and_by_name() {
    let app = spawn_app().await;
    let (_, token) = app
        .new_user_with_scopes("sorter@example.com", &[Scope::OrganizationsWrite])
        .await;
    // Names sort the other way round from slugs, so a sort by name would be visible.
    let specs = [
        ("Zulu", "charlie-org"),
        ("Yankee", "alpha-org"),
        ("Xray", "echo-org"),
        ("Whiskey", "bravo-org"),
        ("Victor", "delta-org"),
    ];
    let mut in_creation_order = Vec::new();
    for (name, slug) in specs {
        app.created_org_as(&token, name, slug).await;
        in_creation_order.push(slug.to_string());
    }
    let mut by_slug = in_creation_order.clone();
    by_slug.sort();
    let reversed = |v: &[String]| v.iter().rev().cloned().collect::<Vec<_>>();

    assert_eq!(app.list_orgs(&token, "").await.slugs(), in_creation_order);
    assert_eq!(
        app.list_orgs(&token, "sorting=created_at").await.slugs(),
        in_creation_order
    );
    assert_eq!(
        app.list_orgs(&token, "sorting=-created_at").await.slugs(),
        reversed(&in_creation_order)
    );
    assert_eq!(app.list_orgs(&token, "sorting=name").await.slugs(), by_slug);
    assert_eq!(
        app.list_orgs(&token, "sorting=-name").await.slugs(),
        reversed(&by_slug)
    );
    // Sorting composes with pagination.
    let r = app.list_orgs(&token, "sorting=-name&limit=2&page=2").await;
    assert_eq!(r.slugs(), reversed(&by_slug)[2..4].to_vec());
    assert_eq!(r.total_count(), 5);
    // Several criteria: the first decides (slugs and creation times are unique).
    assert_eq!(
        app.list_orgs(&token, "sorting=name&sorting=-created_at")
            .await
            .slugs(),
        by_slug
    );
}

#[actix_web::test]
async fn each_user_lists_only_their_own_organizations() {
    let app = spawn_app().await;
    let (_, a) = app
        .new_user_with_scopes("a@example.com", &[Scope::OrganizationsWrite])
        .await;
    let (_, b) = app
        .new_user_with_scopes("b@example.com", &[Scope::OrganizationsWrite])
        .await;
    for i in 0..3 {
        app.created_org_as(&a, "Org of A", &format!("a-org-{i}"))
            .await;
    }
    for i in 0..2 {
        app.created_org_as(&b, "Org of B", &format!("b-org-{i}"))
            .await;
    }
    let la = app.list_orgs(&a, "").await;
    assert_eq!(la.total_count(), 3);
    assert!(la.slugs().iter().all(|s| s.starts_with("a-org-")));
    let lb = app.list_orgs(&b, "").await;
    assert_eq!(lb.total_count(), 2);
    assert!(lb.slugs().iter().all(|s| s.starts_with("b-org-")));
    assert_eq!(app.list_orgs(&a, "slug=b-org-0").await.total_count(), 0);
    assert_eq!(app.list_orgs(&b, "slug=b-org-0").await.total_count(), 1);
}

// ---------------------------------------------------------------------------------------
// Concurrency
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn concurrent_creates_of_one_slug_yield_exactly_one_201() {
    let app = spawn_app().await;
    for round in 0..3 {
        let slug = format!("race-slug-{round}");
        let replies = join_all((0..10).map(|_| app.create_org("Racer", &slug))).await;
        let created: Vec<&Reply> = replies.iter().filter(|r| r.status == 201).collect();
        assert_eq!(created.len(), 1, "round {round}: {replies:?}");
        for r in replies.iter().filter(|r| r.status != 201) {
            let item = r.expect_invalid_at(json!(["body", "slug"]));
            assert_eq!(
                item["msg"],
                "An organization with this slug already exists."
            );
        }
        let list = app.list_orgs(&app.token, &format!("slug={slug}")).await;
        assert_eq!(list.total_count(), 1);
        assert_eq!(list.items()[0]["id"], created[0].body["id"]);
    }
    assert_eq!(app.list_orgs(&app.token, "").await.total_count(), 3);
}

#[actix_web::test]
async fn concurrent_creates_of_one_slug_in_different_cases_yield_one_201() {
    let app = spawn_app().await;
    let spellings = [
        "case-race",
        "CASE-RACE",
        "Case-Race",
        "cAsE-rAcE",
        "case-RACE",
    ];
    let replies = join_all(spellings.iter().map(|s| app.create_org("Racer", s))).await;
    assert_eq!(
        replies.iter().filter(|r| r.status == 201).count(),
        1,
        "{replies:?}"
    );
    for r in replies.iter().filter(|r| r.status != 201) {
        r.expect_invalid_at(json!(["body", "slug"]));
    }
}

#[actix_web::test]
async fn concurrent_creates_of_different_slugs_all_succeed() {
    let app = spawn_app().await;
    let slugs: Vec<String> = (0..20).map(|i| format!("parallel-{i:02}")).collect();
    let replies = join_all(slugs.iter().map(|s| app.create_org("Parallel", s))).await;
    let mut ids = HashSet::new();
    for r in &replies {
        r.expect(201);
        ids.insert(r.id());
    }
    assert_eq!(ids.len(), 20);
    let list = app.list_orgs(&app.token, "limit=100").await;
    assert_eq!(list.total_count(), 20);
    let listed: HashSet<String> = list
        .items()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, ids);
}

// ---------------------------------------------------------------------------------------
// Odds and ends
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_slug_filter_is_case_insensitive_like_polars_citext() {
    let app = spawn_app().await;
    let a = app.created_org_as(&app.token, "Alpha", "alpha-org").await;
    let r = app.list_orgs(&app.token, "slug=ALPHA-Org").await;
    r.expect(200);
    assert_eq!(r.total_count(), 1);
    assert_eq!(r.items(), vec![a]);
}

#[actix_web::test]
async fn ids_in_paths_are_parsed_like_uuids_in_any_case() {
    let app = spawn_app().await;
    let org = app.created_org_as(&app.token, "Cased", "cased-org").await;
    let id = org["id"].as_str().unwrap();
    let r = app.get_org(&id.to_uppercase(), &app.token).await;
    r.expect(200);
    assert_eq!(
        r.body["id"], id,
        "ids are returned in canonical lowercase form"
    );
}

#[actix_web::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let app = spawn_app().await;
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let r = app
            .send(
                app.request(Method::GET, ORGS, None)
                    .header("authorization", format!("{scheme} {}", app.token)),
            )
            .await;
        r.expect(200);
    }
}

#[actix_web::test]
async fn the_bootstrap_token_is_a_personal_access_token_with_every_scope() {
    let app = spawn_app().await;
    assert!(app.token.starts_with("polar_pat_"), "{}", app.token);
    app.list_orgs(&app.token, "").await.expect(200);
    app.create_org("Boot", "boot-org").await.expect(201);
}

#[actix_web::test]
async fn the_collection_path_without_its_trailing_slash_redirects_307() {
    let app = spawn_app().await;
    let no_redirects = reqwest::Client::builder()
        .timeout(crate::helpers::CLIENT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = no_redirects
        .get(app.url("/v1/organizations"))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap();
    let r = Reply::read(resp).await;
    r.expect(307);
    assert!(
        r.header("location").ends_with("/v1/organizations/"),
        "Location: {:?}",
        r.header("location")
    );
    // Followed (method and body kept, as 307 requires), it works.
    let r = app
        .post_json(
            "/v1/organizations",
            Some(&app.token),
            &json!({"name": "Redirected", "slug": "redirected"}),
        )
        .await;
    r.expect(201);
}
