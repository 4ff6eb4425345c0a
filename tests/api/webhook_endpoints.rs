//! `/v1/webhooks/`: endpoint CRUD with generated secrets, URL, event and secret validation
//! (no private or loopback targets unless allowed, never Tollgate itself), scopes and
//! tenancy, the delivery log and redelivery (Polar's `webhook/endpoints.py`).

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate::config::Settings;

use crate::helpers::{assert_utc_timestamp, spawn_app, spawn_app_with, Reply, TestApp};

const ENDPOINTS: &str = "/v1/webhooks/endpoints";
const DELIVERIES: &str = "/v1/webhooks/deliveries";
const UNKNOWN_ID: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";
const HOOK_URL: &str = "https://hooks.example.com/tollgate";

fn endpoint_path(id: &str) -> String {
    format!("{ENDPOINTS}/{id}")
}

fn redeliver_path(event_id: &str) -> String {
    format!("/v1/webhooks/events/{event_id}/redeliver")
}

/// A user holding `scopes` (plus organizations:write) and one organization of their own.
async fn seller(app: &TestApp, email: &str, slug: &str, scopes: &[Scope]) -> (String, String) {
    let mut all = vec![Scope::OrganizationsWrite];
    all.extend_from_slice(scopes);
    let (_, token) = app.new_user_with_scopes(email, &all).await;
    let org = app.created_org_as(&token, "Seller Org", slug).await;
    (token, org["id"].as_str().unwrap().to_string())
}

async fn writer(app: &TestApp, email: &str, slug: &str) -> (String, String) {
    seller(app, email, slug, &[Scope::WebhooksWrite]).await
}

/// A create body with the given URL, for `org`.
fn body(org: &str, url: &str) -> Value {
    json!({
        "url": url,
        "format": "raw",
        "events": ["order.created", "license_key.created"],
        "organization_id": org,
    })
}

async fn create(app: &TestApp, token: Option<&str>, body: &Value) -> Reply {
    app.post_json(ENDPOINTS, token, body).await
}

/// Creates an endpoint and returns it, failing the test unless it is a 201.
async fn created(app: &TestApp, token: &str, body: &Value) -> Value {
    let r = create(app, Some(token), body).await;
    r.expect(201);
    r.body
}

async fn list(app: &TestApp, token: &str, query: &str) -> Reply {
    app.get(&format!("{ENDPOINTS}?{query}"), Some(token)).await
}

async fn deliveries(app: &TestApp, token: &str, query: &str) -> Reply {
    app.get(&format!("{DELIVERIES}?{query}"), Some(token)).await
}

async fn delete(app: &TestApp, token: Option<&str>, id: &str) -> Reply {
    app.send(app.request(Method::DELETE, &endpoint_path(id), token))
        .await
}

async fn redeliver(app: &TestApp, token: Option<&str>, event_id: &str) -> Reply {
    app.send(app.request(Method::POST, &redeliver_path(event_id), token))
        .await
}

fn ids(r: &Reply) -> Vec<String> {
    r.items()
        .iter()
        .map(|e| e["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[track_caller]
fn assert_endpoint_shape(v: &Value) {
    for key in [
        "id",
        "created_at",
        "modified_at",
        "url",
        "name",
        "format",
        "secret",
        "organization_id",
        "events",
        "enabled",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_utc_timestamp(&v["created_at"]);
    assert!(v["events"].is_array(), "{v}");
    assert!(v["enabled"].is_boolean(), "{v}");
    assert!(v["secret"].is_string(), "{v}");
}

/// Asserts a 422 whose items include one at `["body", "url"]`.
#[track_caller]
fn assert_bad_url(r: &Reply, url: &str) {
    assert_eq!(
        r.status.as_u16(),
        422,
        "{url} should be refused; body: {}",
        r.body
    );
    r.expect_invalid_at(json!(["body", "url"]));
}

/// Settings for a fresh app that accepts loopback and private targets.
async fn spawn_app_allowing_private_targets() -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.webhooks.allow_private_targets = true;
    spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await
}

#[actix_web::test]
async fn create_get_list_patch_delete_round_trip() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "crud@example.com", "crud-org").await;

    // Created without a secret: one is generated, and shown.
    let e = created(&app, &token, &body(&org, HOOK_URL)).await;
    assert_endpoint_shape(&e);
    let id = e["id"].as_str().unwrap().to_string();
    let secret = e["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"), "{secret}");
    assert!(secret.len() >= 32, "{secret}");
    assert_eq!(e["url"], HOOK_URL);
    assert_eq!(e["name"], Value::Null);
    assert_eq!(e["format"], "raw");
    assert_eq!(e["events"], json!(["order.created", "license_key.created"]));
    assert_eq!(e["organization_id"], org.as_str());
    assert_eq!(e["enabled"], true);
    assert_eq!(e["modified_at"], Value::Null);

    // Every endpoint gets its own secret.
    let other = created(
        &app,
        &token,
        &json!({
            "url": "https://hooks.example.com/second",
            "format": "slack",
            "events": ["license_key.created"],
            "organization_id": org,
            "name": "Second",
            "secret": "s".repeat(40),
        }),
    )
    .await;
    assert_endpoint_shape(&other);
    assert_eq!(other["secret"], "s".repeat(40), "a given secret is kept");
    assert_eq!(other["name"], "Second");
    assert_eq!(other["format"], "slack");
    let other_id = other["id"].as_str().unwrap().to_string();
    let third = created(&app, &token, &body(&org, HOOK_URL)).await;
    assert_ne!(third["secret"], e["secret"], "secrets are random");
    assert!(third["secret"].as_str().unwrap().starts_with("whsec_"));
    let third_id = third["id"].as_str().unwrap().to_string();

    // Get shows the secret too.
    let got = app.get(&endpoint_path(&id), Some(&token)).await;
    got.expect(200);
    assert_eq!(got.body, e);
    assert_eq!(got.body["secret"], secret.as_str());

    // List.
    let r = list(&app, &token, "").await;
    r.expect(200);
    assert_eq!(r.total_count(), 3, "{}", r.body);
    let mut listed = ids(&r);
    listed.sort();
    let mut expected = vec![id.clone(), other_id.clone(), third_id.clone()];
    expected.sort();
    assert_eq!(listed, expected);
    let mine = r.items().into_iter().find(|i| i["id"] == id.as_str());
    assert_eq!(mine.as_ref(), Some(&e), "a listed endpoint is as created");
    let r = list(&app, &token, &format!("organization_id={org}")).await;
    assert_eq!(r.total_count(), 3);
    let r = list(&app, &token, "limit=2&page=1").await;
    r.expect(200);
    assert_eq!(r.items().len(), 2);
    assert_eq!(r.total_count(), 3);
    assert_eq!(r.max_page(), 2);
    let r = list(&app, &token, "limit=2&page=2").await;
    assert_eq!(r.items().len(), 1);

    // Pause it.
    let p = app
        .patch_json(
            &endpoint_path(&id),
            Some(&token),
            &json!({"enabled": false}),
        )
        .await;
    p.expect(200);
    assert_endpoint_shape(&p.body);
    assert_eq!(p.body["enabled"], false);
    assert_eq!(p.body["url"], HOOK_URL, "unchanged");
    assert_eq!(p.body["events"], e["events"], "unchanged");
    assert_eq!(p.body["secret"], secret.as_str(), "unchanged");
    assert_eq!(p.body["created_at"], e["created_at"]);
    assert_utc_timestamp(&p.body["modified_at"]);

    // Change its events.
    let p = app
        .patch_json(
            &endpoint_path(&id),
            Some(&token),
            &json!({"events": ["order.paid", "subscription.created", "order.paid"]}),
        )
        .await;
    p.expect(200);
    assert_eq!(
        p.body["events"],
        json!(["order.paid", "subscription.created"]),
        "duplicates collapse"
    );
    assert_eq!(p.body["enabled"], false, "still paused");

    // Change its URL, name, format and secret.
    let new_url = "https://other.example.org/in?source=tollgate";
    let new_secret = "x".repeat(32);
    let p = app
        .patch_json(
            &endpoint_path(&id),
            Some(&token),
            &json!({"url": new_url, "name": "Backend", "format": "discord", "secret": new_secret}),
        )
        .await;
    p.expect(200);
    assert_eq!(p.body["url"], new_url);
    assert_eq!(p.body["name"], "Backend");
    assert_eq!(p.body["format"], "discord");
    assert_eq!(p.body["secret"], new_secret.as_str());
    assert_eq!(
        p.body["events"],
        json!(["order.paid", "subscription.created"])
    );

    // Resume it.
    let p = app
        .patch_json(&endpoint_path(&id), Some(&token), &json!({"enabled": true}))
        .await;
    p.expect(200);
    assert_eq!(p.body["enabled"], true);

    // An empty patch changes nothing but modified_at.
    let p = app
        .patch_json(&endpoint_path(&id), Some(&token), &json!({}))
        .await;
    p.expect(200);
    assert_eq!(p.body["url"], new_url);
    assert_eq!(p.body["name"], "Backend");

    // Get reflects every change.
    let got = app.get(&endpoint_path(&id), Some(&token)).await;
    got.expect(200);
    assert_eq!(got.body["url"], new_url);
    assert_eq!(got.body["name"], "Backend");
    assert_eq!(got.body["format"], "discord");
    assert_eq!(got.body["secret"], new_secret.as_str());
    assert_eq!(got.body["enabled"], true);
    assert_eq!(
        got.body["events"],
        json!(["order.paid", "subscription.created"])
    );
    assert_eq!(got.body["created_at"], e["created_at"]);
    assert_utc_timestamp(&got.body["modified_at"]);

    // Invalid patches change nothing.
    let r = app
        .patch_json(
            &endpoint_path(&id),
            Some(&token),
            &json!({"url": "http://hooks.example.com/x"}),
        )
        .await;
    assert_bad_url(&r, "http://hooks.example.com/x");
    let r = app
        .patch_json(&endpoint_path(&id), Some(&token), &json!({"url": null}))
        .await;
    r.expect_invalid_at(json!(["body", "url"]));
    let r = app
        .patch_json(
            &endpoint_path(&id),
            Some(&token),
            &json!({"secret": "too-short"}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "secret"]));
    let r = app
        .patch_json(
            &endpoint_path(&id),
            Some(&token),
            &json!({"events": ["order.exploded"]}),
        )
        .await;
    r.expect_validation();
    let r = app
        .patch_json(&endpoint_path(&id), Some(&token), &json!({"format": "xml"}))
        .await;
    r.expect_validation();
    let got = app.get(&endpoint_path(&id), Some(&token)).await;
    assert_eq!(got.body["url"], new_url);
    assert_eq!(got.body["secret"], new_secret.as_str());
    assert_eq!(got.body["format"], "discord");

    // Delete.
    delete(&app, Some(&token), &id).await.expect(204);
    let gone = app.get(&endpoint_path(&id), Some(&token)).await;
    assert_eq!(gone.expect_error(404), "ResourceNotFound");
    delete(&app, Some(&token), &id).await.expect_error(404);
    app.patch_json(&endpoint_path(&id), Some(&token), &json!({"enabled": true}))
        .await
        .expect_error(404);
    let r = list(&app, &token, "").await;
    assert_eq!(r.total_count(), 2, "{}", r.body);
    assert!(!ids(&r).contains(&id), "deleted endpoints leave the list");

    // Unknown and malformed ids.
    app.get(&endpoint_path(UNKNOWN_ID), Some(&token))
        .await
        .expect_error(404);
    delete(&app, Some(&token), UNKNOWN_ID)
        .await
        .expect_error(404);
    let r = app.get(&endpoint_path("nope"), Some(&token)).await;
    assert_eq!(
        r.expect_invalid_at(json!(["path", "id"]))["type"],
        "uuid_parsing"
    );
}

#[actix_web::test]
async fn requests_without_a_token_are_401() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "owner@example.com", "owner-org").await;
    let e = created(&app, &token, &body(&org, HOOK_URL)).await;
    let id = e["id"].as_str().unwrap().to_string();
    for r in [
        app.get(ENDPOINTS, None).await,
        create(&app, None, &body(&org, HOOK_URL)).await,
        app.get(&endpoint_path(&id), None).await,
        app.patch_json(&endpoint_path(&id), None, &json!({"enabled": false}))
            .await,
        delete(&app, None, &id).await,
        app.get(DELIVERIES, None).await,
        redeliver(&app, None, UNKNOWN_ID).await,
    ] {
        assert_eq!(r.expect_error(401), "Unauthorized");
        assert!(
            r.www_authenticate().contains("Bearer realm=\"polar\""),
            "{}",
            r.www_authenticate()
        );
    }
    let r = app.get(ENDPOINTS, Some("polar_pat_nope")).await;
    r.expect(401);
    assert_eq!(r.body["error"], "invalid_token");
    // Nothing changed.
    let got = app.get(&endpoint_path(&id), Some(&token)).await;
    got.expect(200);
    assert_eq!(got.body, e);
}

#[actix_web::test]
async fn webhooks_scopes_are_required() {
    let app = spawn_app().await;
    let (owner, org) = writer(&app, "owner@example.com", "owner-org").await;
    let e = created(&app, &owner, &body(&org, HOOK_URL)).await;
    let id = e["id"].as_str().unwrap().to_string();

    // A token without any webhooks scope: 403 insufficient_scope.
    let (products_only, products_org) = seller(
        &app,
        "products@example.com",
        "products-org",
        &[Scope::ProductsRead],
    )
    .await;
    let r = app.get(ENDPOINTS, Some(&products_only)).await;
    r.expect(403);
    assert_eq!(r.body["error"], "insufficient_scope");
    assert!(
        r.www_authenticate()
            .contains("scope=\"web_default webhooks:read webhooks:write\""),
        "{}",
        r.www_authenticate()
    );
    let r = create(&app, Some(&products_only), &body(&products_org, HOOK_URL)).await;
    r.expect(403);
    assert_eq!(r.body["error"], "insufficient_scope");
    assert!(
        r.www_authenticate()
            .contains("scope=\"web_default webhooks:write\""),
        "{}",
        r.www_authenticate()
    );
    app.get(DELIVERIES, Some(&products_only)).await.expect(403);
    redeliver(&app, Some(&products_only), UNKNOWN_ID)
        .await
        .expect(403);

    // webhooks:read reads but does not write.
    let (reader, reader_org) = seller(
        &app,
        "reader@example.com",
        "reader-org",
        &[Scope::WebhooksRead],
    )
    .await;
    let r = list(&app, &reader, "").await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);
    deliveries(&app, &reader, "").await.expect(200);
    let r = create(&app, Some(&reader), &body(&reader_org, HOOK_URL)).await;
    r.expect(403);
    assert_eq!(r.body["error"], "insufficient_scope");
    let r = app
        .patch_json(
            &endpoint_path(&id),
            Some(&reader),
            &json!({"enabled": false}),
        )
        .await;
    r.expect(403);
    delete(&app, Some(&reader), &id).await.expect(403);
    redeliver(&app, Some(&reader), UNKNOWN_ID).await.expect(403);
    let r = list(&app, &reader, "").await;
    assert_eq!(r.total_count(), 0, "nothing was created: {}", r.body);

    // The owner's endpoint is untouched.
    let got = app.get(&endpoint_path(&id), Some(&owner)).await;
    got.expect(200);
    assert_eq!(got.body, e);
}

#[actix_web::test]
async fn another_users_endpoint_is_not_found_and_not_listed() {
    let app = spawn_app().await;
    let (alice, alice_org) = writer(&app, "alice@example.com", "alice-org").await;
    let (bob, bob_org) = writer(&app, "bob@example.com", "bob-org").await;
    let a = created(&app, &alice, &body(&alice_org, HOOK_URL)).await;
    let a_id = a["id"].as_str().unwrap().to_string();
    let b = created(&app, &bob, &body(&bob_org, "https://hooks.example.com/bob")).await;
    let b_id = b["id"].as_str().unwrap().to_string();

    // Bob cannot see, change or delete Alice's endpoint.
    assert_eq!(
        app.get(&endpoint_path(&a_id), Some(&bob))
            .await
            .expect_error(404),
        "ResourceNotFound"
    );
    app.patch_json(
        &endpoint_path(&a_id),
        Some(&bob),
        &json!({"url": "https://evil.example.net/steal", "enabled": false}),
    )
    .await
    .expect_error(404);
    delete(&app, Some(&bob), &a_id).await.expect_error(404);
    redeliver(&app, Some(&bob), &a_id).await.expect_error(404);

    // Lists: each sees only their own, and a filter on the other's organization is empty.
    let r = list(&app, &bob, "").await;
    r.expect(200);
    assert_eq!(ids(&r), std::slice::from_ref(&b_id));
    let r = list(&app, &bob, &format!("organization_id={alice_org}")).await;
    r.expect(200);
    assert_eq!(r.total_count(), 0, "{}", r.body);
    let r = list(&app, &alice, "").await;
    assert_eq!(ids(&r), std::slice::from_ref(&a_id));
    let r = deliveries(&app, &bob, &format!("endpoint_id={a_id}")).await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);

    // Bob cannot create an endpoint in Alice's organization: 422, as for other resources.
    let r = create(&app, Some(&bob), &body(&alice_org, HOOK_URL)).await;
    let item = r.expect_invalid_at(json!(["body", "organization_id"]));
    assert_eq!(item["msg"], "Organization not found.", "{item}");
    let r = create(&app, Some(&bob), &body(UNKNOWN_ID, HOOK_URL)).await;
    r.expect_invalid_at(json!(["body", "organization_id"]));
    // A user token must name the organization.
    let mut no_org = body(&bob_org, HOOK_URL);
    no_org.as_object_mut().unwrap().remove("organization_id");
    let r = create(&app, Some(&bob), &no_org).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "organization_id"]))["type"],
        "missing"
    );
    let r = list(&app, &alice, "").await;
    assert_eq!(
        ids(&r),
        std::slice::from_ref(&a_id),
        "nothing was added for Alice"
    );

    // Alice's endpoint is intact.
    let got = app.get(&endpoint_path(&a_id), Some(&alice)).await;
    got.expect(200);
    assert_eq!(got.body, a);

    // The bootstrap admin holds every scope but belongs to neither organization.
    let r = list(&app, &app.token, "").await;
    r.expect(200);
    assert_eq!(r.total_count(), 0, "the admin is a member of neither");
    app.get(&endpoint_path(&a_id), Some(&app.token))
        .await
        .expect_error(404);
}

#[actix_web::test]
async fn a_user_in_two_organizations_sees_both_and_can_filter() {
    let app = spawn_app().await;
    let (token, org_a) = writer(&app, "multi@example.com", "multi-a").await;
    let org_b = app.created_org_as(&token, "Second", "multi-b").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let a = created(&app, &token, &body(&org_a, HOOK_URL)).await;
    let b = created(&app, &token, &body(&org_b, HOOK_URL)).await;
    assert_eq!(b["organization_id"], org_b.as_str());
    let r = list(&app, &token, "").await;
    assert_eq!(r.total_count(), 2);
    let r = list(&app, &token, &format!("organization_id={org_a}")).await;
    assert_eq!(ids(&r), [a["id"].as_str().unwrap().to_string()]);
    let r = list(&app, &token, &format!("organization_id={org_b}")).await;
    assert_eq!(ids(&r), [b["id"].as_str().unwrap().to_string()]);
    let r = list(&app, &token, "organization_id=nope").await;
    r.expect_invalid_at(json!(["query", "organization_id"]));
}

#[actix_web::test]
async fn malformed_urls_are_422_at_body_url() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "urls@example.com", "urls-org").await;
    let too_long = format!("https://hooks.example.com/{}", "a".repeat(2100));
    for url in [
        "not a url",
        "",
        "hooks.example.com/in",
        "https://",
        "ftp://hooks.example.com/in",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "http://hooks.example.com/in",
        "https://user:pw@hooks.example.com/in",
        "https://user@hooks.example.com/in",
        too_long.as_str(),
    ] {
        let r = create(&app, Some(&token), &body(&org, url)).await;
        assert_bad_url(&r, url);
    }
    // Just within the limit is fine.
    let longest = format!("https://hooks.example.com/{}", "a".repeat(2083 - 26));
    assert_eq!(longest.len(), 2083);
    let e = created(&app, &token, &body(&org, &longest)).await;
    assert_eq!(e["url"], longest.as_str());
    // A non-string URL is a 422 too.
    let r = create(
        &app,
        Some(&token),
        &json!({"url": 42, "format": "raw", "events": [], "organization_id": org}),
    )
    .await;
    r.expect_validation();
    // Nothing refused was stored.
    let r = list(&app, &token, "").await;
    assert_eq!(r.total_count(), 1, "{}", r.body);
}

#[actix_web::test]
async fn private_and_loopback_targets_are_refused_by_default() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "ssrf@example.com", "ssrf-org").await;
    let own = format!("{}/v1/products/", app.address);
    for url in [
        "https://127.0.0.1/x",
        "https://127.1.2.3/x",
        "https://10.0.0.1/x",
        "https://172.16.0.1/x",
        "https://192.168.1.1/x",
        "https://169.254.169.254/latest",
        "https://100.64.0.1/x",
        "https://0.0.0.0/x",
        "https://[::1]/x",
        "https://[fe80::1]/x",
        "https://[fd00::1]/x",
        "https://[::ffff:127.0.0.1]/x",
        "https://localhost/x",
        "http://localhost:9/x",
        "http://127.0.0.1:9/x",
        "http://app.localhost:9/x",
        own.as_str(),
    ] {
        let r = create(&app, Some(&token), &body(&org, url)).await;
        assert_bad_url(&r, url);
    }
    // A public address literal is fine.
    created(&app, &token, &body(&org, "https://93.184.216.34/hook")).await;
    // Nor can an existing endpoint be re-pointed at one.
    let e = created(&app, &token, &body(&org, HOOK_URL)).await;
    let id = e["id"].as_str().unwrap();
    for url in ["https://169.254.169.254/latest", "http://localhost:9/x"] {
        let r = app
            .patch_json(&endpoint_path(id), Some(&token), &json!({"url": url}))
            .await;
        assert_bad_url(&r, url);
    }
    let got = app.get(&endpoint_path(id), Some(&token)).await;
    assert_eq!(got.body["url"], HOOK_URL);
    let r = list(&app, &token, "").await;
    assert_eq!(r.total_count(), 2, "{}", r.body);
}

#[actix_web::test]
async fn private_targets_are_accepted_when_allowed_but_never_tollgate_itself() {
    let app = spawn_app_allowing_private_targets().await;
    let (token, org) = writer(&app, "local@example.com", "local-org").await;
    for url in [
        "http://localhost:9/x",
        "http://127.0.0.1:9/x",
        "https://10.0.0.1/x",
        "https://192.168.1.1/x",
        "https://[::1]/x",
    ] {
        let e = created(&app, &token, &body(&org, url)).await;
        assert_eq!(e["url"], url);
    }
    // Still only https beyond localhost.
    let r = create(&app, Some(&token), &body(&org, "http://10.0.0.1/x")).await;
    assert_bad_url(&r, "http://10.0.0.1/x");
    // Tollgate's own address, under any of its local names.
    let port = app.address.rsplit(':').next().unwrap().to_string();
    for url in [
        format!("{}/v1/products/", app.address),
        format!("http://localhost:{port}/"),
        format!("http://[::1]:{port}/x"),
    ] {
        let r = create(&app, Some(&token), &body(&org, &url)).await;
        assert_bad_url(&r, &url);
    }
    let r = list(&app, &token, "").await;
    assert_eq!(r.total_count(), 5, "{}", r.body);
}

#[actix_web::test]
async fn unknown_events_formats_and_short_secrets_are_422() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "valid@example.com", "valid-org").await;

    let mut b = body(&org, HOOK_URL);
    b["events"] = json!(["order.created", "order.exploded"]);
    let items = create(&app, Some(&token), &b).await.expect_validation();
    assert!(
        items
            .iter()
            .any(|i| i["loc"][0] == "body" && i["loc"][1] == "events"),
        "{items:?}"
    );

    let mut b = body(&org, HOOK_URL);
    b["events"] = json!("order.created");
    create(&app, Some(&token), &b).await.expect_validation();

    let mut b = body(&org, HOOK_URL);
    b["format"] = json!("xml");
    let r = create(&app, Some(&token), &b).await;
    r.expect_invalid_at(json!(["body", "format"]));

    let mut b = body(&org, HOOK_URL);
    b.as_object_mut().unwrap().remove("events");
    let r = create(&app, Some(&token), &b).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "events"]))["type"],
        "missing"
    );

    let mut b = body(&org, HOOK_URL);
    b.as_object_mut().unwrap().remove("format");
    let r = create(&app, Some(&token), &b).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "format"]))["type"],
        "missing"
    );

    let mut b = body(&org, HOOK_URL);
    b["secret"] = json!("s".repeat(31));
    let r = create(&app, Some(&token), &b).await;
    r.expect_invalid_at(json!(["body", "secret"]));

    let mut b = body(&org, HOOK_URL);
    b["name"] = json!("n".repeat(101));
    let r = create(&app, Some(&token), &b).await;
    r.expect_invalid_at(json!(["body", "name"]));

    let r = list(&app, &token, "").await;
    assert_eq!(r.total_count(), 0, "nothing refused was stored: {}", r.body);

    // 32 characters is enough; every documented event type is accepted.
    let mut b = body(&org, HOOK_URL);
    b["secret"] = json!("s".repeat(32));
    b["events"] = json!([
        "checkout.created",
        "order.created",
        "order.paid",
        "order.refunded",
        "subscription.created",
        "subscription.canceled",
        "subscription.past_due",
        "subscription.cycled",
        "benefit_grant.cycled",
        "product.created",
        "benefit.created",
        "customer.created",
        "organization.updated",
        "license_key.created",
        "license_key.revoked",
        "license_key.limit_reached",
    ]);
    let e = created(&app, &token, &b).await;
    assert_eq!(e["secret"], "s".repeat(32));
    assert_eq!(e["events"], b["events"]);
}

#[actix_web::test]
async fn a_fresh_endpoint_has_no_deliveries_and_unknown_events_cannot_be_redelivered() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "log@example.com", "log-org").await;
    let e = created(&app, &token, &body(&org, HOOK_URL)).await;
    let id = e["id"].as_str().unwrap();

    for query in [
        format!("endpoint_id={id}"),
        format!("organization_id={org}"),
        format!("endpoint_id={id}&organization_id={org}"),
        format!("endpoint_id={id}&page=1&limit=10"),
        String::new(),
    ] {
        let r = deliveries(&app, &token, &query).await;
        r.expect(200);
        assert_eq!(r.items(), Vec::<Value>::new(), "{query}: {}", r.body);
        assert_eq!(r.total_count(), 0, "{query}");
    }
    let r = deliveries(&app, &token, "endpoint_id=nope").await;
    r.expect_invalid_at(json!(["query", "endpoint_id"]));

    let r = redeliver(&app, Some(&token), UNKNOWN_ID).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = redeliver(&app, Some(&token), &uuid::Uuid::new_v4().to_string()).await;
    r.expect_error(404);
    // An endpoint id is not an event id.
    redeliver(&app, Some(&token), id).await.expect_error(404);
    let r = redeliver(&app, Some(&token), "nope").await;
    assert_eq!(
        r.expect_invalid_at(json!(["path", "id"]))["type"],
        "uuid_parsing"
    );
}

/// A loopback port nothing listens on: deliveries to it fail at once.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[actix_web::test]
async fn only_the_owner_sees_deliveries_and_redelivers_its_events() {
    let app = spawn_app_allowing_private_targets().await;
    let (alice, alice_org) = writer(&app, "alice@example.com", "alice-org").await;
    let (bob, _) = writer(&app, "bob@example.com", "bob-org").await;
    let url = format!("http://127.0.0.1:{}/hook", closed_port());
    let mut b = body(&alice_org, &url);
    b["events"] = json!(["organization.updated"]);
    let e = created(&app, &alice, &b).await;
    let endpoint_id = e["id"].as_str().unwrap().to_string();

    // Changing the organization makes an event; its first attempt fails (nothing listens).
    app.patch_org(&alice_org, &alice, &json!({"name": "Renamed"}))
        .await
        .expect(200);
    let deadline = Instant::now() + Duration::from_secs(30);
    let delivery = loop {
        let r = deliveries(&app, &alice, &format!("endpoint_id={endpoint_id}")).await;
        r.expect(200);
        if let Some(d) = r.items().into_iter().next() {
            break d;
        }
        assert!(
            Instant::now() < deadline,
            "no delivery was logged for the organization.updated event"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(delivery["succeeded"], false, "{delivery}");
    assert_eq!(delivery["http_code"], Value::Null, "{delivery}");
    assert_eq!(
        delivery["webhook_event"]["type"], "organization.updated",
        "{delivery}"
    );
    let event_id = delivery["webhook_event"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = deliveries(&app, &alice, &format!("organization_id={alice_org}")).await;
    assert!(r.total_count() >= 1, "{}", r.body);

    // Bob sees none of it and cannot redeliver it.
    let r = deliveries(&app, &bob, &format!("endpoint_id={endpoint_id}")).await;
    r.expect(200);
    assert_eq!(r.total_count(), 0, "{}", r.body);
    let r = deliveries(&app, &bob, "").await;
    assert_eq!(r.total_count(), 0, "{}", r.body);
    let r = deliveries(&app, &bob, &format!("organization_id={alice_org}")).await;
    assert_eq!(r.total_count(), 0, "{}", r.body);
    assert_eq!(
        redeliver(&app, Some(&bob), &event_id)
            .await
            .expect_error(404),
        "ResourceNotFound"
    );

    // Alice can.
    redeliver(&app, Some(&alice), &event_id).await.expect(202);

    // Once the endpoint is deleted its events cannot be redelivered.
    delete(&app, Some(&alice), &endpoint_id).await.expect(204);
    redeliver(&app, Some(&alice), &event_id)
        .await
        .expect_error(404);
}

#[actix_web::test]
async fn the_openapi_document_lists_the_webhook_operations() {
    let app = spawn_app().await;
    let r = app.get("/openapi.json", None).await;
    r.expect(200);
    let paths = r.body["paths"].as_object().unwrap();
    for (path, methods) in [
        ("/v1/webhooks/endpoints", &["get", "post"][..]),
        (
            "/v1/webhooks/endpoints/{id}",
            &["get", "patch", "delete"][..],
        ),
        ("/v1/webhooks/deliveries", &["get"][..]),
        ("/v1/webhooks/events/{id}/redeliver", &["post"][..]),
    ] {
        let item = paths
            .get(path)
            .unwrap_or_else(|| panic!("{path} missing from /openapi.json"));
        for method in methods {
            assert!(item.get(*method).is_some(), "{method} {path} undocumented");
        }
    }
    let schemas = r.body["components"]["schemas"].as_object().unwrap();
    for name in [
        "WebhookEndpoint",
        "WebhookEndpointCreate",
        "WebhookEndpointUpdate",
        "WebhookDelivery",
        "WebhookEvent",
        "WebhookFormat",
        "WebhookEventType",
    ] {
        assert!(schemas.contains_key(name), "schema {name} missing");
    }
}
