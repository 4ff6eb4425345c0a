//! Organization access tokens (issue 27): `/v1/organization-access-tokens/` (list, create,
//! change, delete) for a member holding `organization_access_tokens:*`, the `polar_oat_…`
//! token acting as its organization (expiry, deletion, scopes, tenancy, `last_used_at`),
//! and the `Polar-Organization` header that narrows any request to one organization.

use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, Utc};
use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate::config::Settings;
use tollgate::domain::ids::OrganizationId;
use tollgate::domain::organization::Organization;
use tollgate_actors::ManualClock;

use crate::helpers::{spawn_app, spawn_app_with, Reply, TestApp};
use crate::oauth::signed_in;

const TOKENS: &str = "/v1/organization-access-tokens/";
const PRODUCTS: &str = "/v1/products/";

fn token_path(id: &str) -> String {
    format!("{TOKENS}{id}")
}

fn str_of(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v}"))
        .to_string()
}

fn ids(r: &Reply) -> Vec<String> {
    r.items().iter().map(|i| str_of(&i["id"])).collect()
}

fn time(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&str_of(v))
        .unwrap_or_else(|e| panic!("{v}: {e}"))
        .with_timezone(&Utc)
}

async fn org(app: &TestApp, token: &str, slug: &str) -> String {
    str_of(&app.created_org_as(token, "Seller", slug).await["id"])
}

async fn product(app: &TestApp, token: &str, org: &str, name: &str) -> String {
    let r = app
        .post_json(
            PRODUCTS,
            Some(token),
            &json!({"name": name, "organization_id": org,
                    "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 900}]}),
        )
        .await;
    r.expect(201);
    r.id()
}

/// Creates a token of `org` as `token`'s user; returns the whole answer (201 required).
async fn created(app: &TestApp, token: &str, body: Value) -> Value {
    let r = app.post_json(TOKENS, Some(token), &body).await;
    r.expect(201);
    r.body
}

async fn get_with(app: &TestApp, path: &str, token: &str, organization: &str) -> Reply {
    app.send(
        app.request(Method::GET, path, Some(token))
            .header("Polar-Organization", organization),
    )
    .await
}

async fn post_with(
    app: &TestApp,
    path: &str,
    token: &str,
    organization: &str,
    body: &Value,
) -> Reply {
    app.send(
        app.request(Method::POST, path, Some(token))
            .header("Polar-Organization", organization)
            .json(body),
    )
    .await
}

/// The token's `last_used_at` as the list shows it, once recorded (it is written after the
/// request that used the token).
async fn last_used(app: &TestApp, id: &str) -> Value {
    for _ in 0..50 {
        let r = app.get(TOKENS, Some(&app.token)).await;
        r.expect(200);
        if let Some(t) = r.items().iter().find(|t| t["id"] == id) {
            if !t["last_used_at"].is_null() {
                return t["last_used_at"].clone();
            }
        }
        actix_web::rt::time::sleep(StdDuration::from_millis(20)).await;
    }
    Value::Null
}

#[actix_web::test]
async fn a_member_creates_a_token_that_acts_as_its_organization_until_deleted() {
    let app = spawn_app().await;
    let own = org(&app, &app.token, "oat-own").await;
    let other = org(&app, &app.token, "oat-other").await;
    let ebook = product(&app, &app.token, &own, "E-book").await;
    let foreign = product(&app, &app.token, &other, "Course").await;

    let before = Utc::now();
    let answer = created(
        &app,
        &app.token,
        json!({"organization_id": own, "comment": "Server", "expires_in": "P30D",
               "scopes": ["products:write", "products:read"]}),
    )
    .await;
    let keys: Vec<&String> = answer.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["organization_access_token", "token"]);
    let secret = str_of(&answer["token"]);
    assert!(
        secret.starts_with("polar_oat_") && secret.len() == 53,
        "{secret}"
    );
    let oat = &answer["organization_access_token"];
    let mut fields: Vec<&String> = oat.as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            "comment",
            "created_at",
            "expires_at",
            "id",
            "last_used_at",
            "modified_at",
            "organization_id",
            "scopes"
        ]
    );
    assert_eq!(oat["organization_id"], own.as_str());
    assert_eq!(oat["comment"], "Server");
    assert_eq!(oat["scopes"], json!(["products:read", "products:write"]));
    assert_eq!(
        (&oat["last_used_at"], &oat["modified_at"]),
        (&Value::Null, &Value::Null)
    );
    let expires = time(&oat["expires_at"]);
    assert!(expires >= before + Duration::days(30) && expires <= Utc::now() + Duration::days(30));
    let id = str_of(&oat["id"]);
    // The secret is never shown again, nor stored as it is.
    let listed = app.get(TOKENS, Some(&app.token)).await;
    listed.expect(200);
    assert_eq!(ids(&listed), [id.as_str()]);
    assert!(listed.items()[0].get("token").is_none());

    // The token acts as its organization: its records only, creates in it.
    let r = app.get(PRODUCTS, Some(&secret)).await;
    r.expect(200);
    assert_eq!(ids(&r), [ebook.as_str()]);
    app.get(&format!("{PRODUCTS}{foreign}"), Some(&secret))
        .await
        .expect_error(404);
    let made = app
        .post_json(
            PRODUCTS,
            Some(&secret),
            &json!({"name": "Made by the token",
                    "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 500}]}),
        )
        .await;
    made.expect(201);
    assert_eq!(made.body["organization_id"], own.as_str());
    let item = app
        .post_json(
            PRODUCTS,
            Some(&secret),
            &json!({"name": "Elsewhere", "organization_id": own,
                    "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 500}]}),
        )
        .await
        .expect_invalid_at(json!(["body", "organization_id"]));
    assert_eq!(item["type"], "organization_token");
    // Only its scopes: no organizations:read.
    let r = app.get("/v1/organizations/", Some(&secret)).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    // Its use is recorded.
    let used = last_used(&app, &id).await;
    assert!(!used.is_null(), "last_used_at never recorded");
    assert!(time(&used) >= before);

    // Changed: comment and scopes (within the caller's own).
    let r = app
        .patch_json(
            &token_path(&id),
            Some(&app.token),
            &json!({"comment": "Read only", "scopes": ["products:read"]}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["comment"], "Read only");
    assert_eq!(r.body["scopes"], json!(["products:read"]));
    assert!(!r.body["modified_at"].is_null());
    assert_eq!(r.body["expires_at"], oat["expires_at"]);
    let r = app
        .post_json(
            PRODUCTS,
            Some(&secret),
            &json!({"name": "No more", "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 500}]}),
        )
        .await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    // A key left out is unchanged.
    let r = app
        .patch_json(
            &token_path(&id),
            Some(&app.token),
            &json!({"comment": "Kept scopes"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["scopes"], json!(["products:read"]));

    // Deleted: refused from then on, no longer listed, gone for every call.
    let r = app
        .send(app.request(Method::DELETE, &token_path(&id), Some(&app.token)))
        .await;
    r.expect(204);
    let r = app.get(PRODUCTS, Some(&secret)).await;
    assert_eq!(r.expect_error(401), "invalid_token");
    assert!(app.get(TOKENS, Some(&app.token)).await.items().is_empty());
    app.send(app.request(Method::DELETE, &token_path(&id), Some(&app.token)))
        .await
        .expect_error(404);
    app.patch_json(&token_path(&id), Some(&app.token), &json!({"comment": "x"}))
        .await
        .expect_error(404);
}

#[actix_web::test]
async fn expired_unknown_and_deleted_organization_tokens_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings::for_tests(dir.path());
    let (clock, shared) = ManualClock::shared(Utc::now());
    let app = spawn_app_with(dir, settings, shared).await;
    let own = org(&app, &app.token, "oat-expiry").await;

    // `expires_in` as seconds, as `[D days, ]HH:MM:SS`, or never.
    let short = created(
        &app,
        &app.token,
        json!({"organization_id": own, "comment": "a minute", "expires_in": 60,
               "scopes": ["products:read"]}),
    )
    .await;
    let oat = &short["organization_access_token"];
    assert_eq!(
        time(&oat["expires_at"]) - time(&oat["created_at"]),
        Duration::seconds(60)
    );
    let clocked = created(
        &app,
        &app.token,
        json!({"organization_id": own, "comment": "a day", "expires_in": "1 day, 00:00:00",
               "scopes": ["products:read"]}),
    )
    .await;
    let oat = &clocked["organization_access_token"];
    assert_eq!(
        time(&oat["expires_at"]) - time(&oat["created_at"]),
        Duration::days(1)
    );
    let forever = created(
        &app,
        &app.token,
        json!({"organization_id": own, "comment": "forever", "expires_in": null,
               "scopes": ["products:read"]}),
    )
    .await;
    assert!(forever["organization_access_token"]["expires_at"].is_null());

    let short = str_of(&short["token"]);
    let forever = str_of(&forever["token"]);
    app.get(PRODUCTS, Some(&short)).await.expect(200);
    clock.advance(Duration::seconds(61));
    let r = app.get(PRODUCTS, Some(&short)).await;
    assert_eq!(r.expect_error(401), "invalid_token");
    app.get(PRODUCTS, Some(&forever)).await.expect(200);
    // Still listed once expired, as Polar lists them.
    assert_eq!(app.get(TOKENS, Some(&app.token)).await.total_count(), 3);

    // Unknown tokens of the format, and a token one character off.
    let last = if forever.ends_with('A') { "B" } else { "A" };
    for bad in [
        "polar_oat_unknown".to_string(),
        format!("{}{last}", &forever[..forever.len() - 1]),
    ] {
        let r = app.get(PRODUCTS, Some(&bad)).await;
        assert_eq!(r.expect_error(401), "invalid_token", "{bad}");
    }

    // The tokens of an organization that is blocked (or deleted) are refused.
    let key = OrganizationId(own.parse().unwrap()).key();
    app.state
        .store
        .update::<Organization, ()>(&key, async |o| {
            let mut o = o.clone();
            o.blocked_at = Some(Utc::now());
            Ok(Some(o))
        })
        .await
        .unwrap();
    let r = app.get(PRODUCTS, Some(&forever)).await;
    assert_eq!(r.expect_error(401), "invalid_token");
}

#[actix_web::test]
async fn scopes_expiry_and_callers_are_checked() {
    let app = spawn_app().await;
    let (_, narrow) = app
        .new_user_with_scopes(
            "narrow@example.com",
            &[
                Scope::OrganizationsWrite,
                Scope::ProductsRead,
                Scope::OrganizationAccessTokensWrite,
            ],
        )
        .await;
    let own = org(&app, &narrow, "oat-narrow").await;
    let body = |scopes: Value| json!({"organization_id": own, "comment": "c", "scopes": scopes});

    // Within the caller's own scopes only.
    let r = app
        .post_json(
            TOKENS,
            Some(&narrow),
            &body(json!(["products:read", "products:write", "orders:read"])),
        )
        .await;
    let item = r.expect_invalid_at(json!(["body", "scopes"]));
    assert_eq!(
        item["msg"],
        "Requested scopes exceed the caller's own scopes."
    );
    assert_eq!(item["input"], json!(["products:write", "orders:read"]));
    created(&app, &narrow, body(json!(["products:read"]))).await;
    // Never the token-management scopes, reserved or unknown ones.
    for (scope, msg) in [
        (
            "organization_access_tokens:write",
            "Organization access tokens cannot hold this scope.",
        ),
        (
            "organization_access_tokens:read",
            "Organization access tokens cannot hold this scope.",
        ),
        ("web_default", "Input should be a supported scope"),
        ("admin", "Input should be a supported scope"),
        ("nope:read", "Input should be a supported scope"),
    ] {
        let r = app
            .post_json(
                TOKENS,
                Some(&app.token),
                &body(json!(["products:read", scope])),
            )
            .await;
        let item = r.expect_invalid_at(json!(["body", "scopes", 1]));
        assert_eq!(item["msg"], msg, "{scope}");
    }
    // `expires_in`: a duration of 1 second to ten years.
    for (bad, kind) in [
        (json!("soon"), "time_delta_parsing"),
        (json!("3600"), "time_delta_parsing"),
        (json!("PT0S"), "value_error"),
        (json!("-P1D"), "value_error"),
        (json!(0.5), "value_error"),
        (json!("P3651D"), "value_error"),
        (json!(1e300), "value_error"),
        (json!(true), "time_delta_type"),
    ] {
        let mut b = body(json!(["products:read"]));
        b["expires_in"] = bad.clone();
        let item = app
            .post_json(TOKENS, Some(&narrow), &b)
            .await
            .expect_invalid_at(json!(["body", "expires_in"]));
        assert_eq!(item["type"], kind, "{bad}");
    }
    // Every problem of a body at once.
    let r = app
        .post_json(
            TOKENS,
            Some(&narrow),
            &json!({"organization_id": own, "comment": "c", "expires_in": "later",
                    "scopes": ["nope"]}),
        )
        .await;
    let locs: Vec<Value> = r
        .expect_validation()
        .iter()
        .map(|i| i["loc"].clone())
        .collect();
    assert_eq!(
        locs,
        [json!(["body", "scopes", 0]), json!(["body", "expires_in"])]
    );
    // A user names the organization.
    let item = app
        .post_json(
            TOKENS,
            Some(&narrow),
            &json!({"comment": "c", "scopes": []}),
        )
        .await
        .expect_invalid_at(json!(["body", "organization_id"]));
    assert_eq!(item["type"], "missing");
    app.post_json(
        TOKENS,
        Some(&narrow),
        &json!({"organization_id": own, "scopes": []}),
    )
    .await
    .expect_invalid_at(json!(["body", "comment"]));

    // A change is held to the same rules.
    let id = str_of(&app.get(TOKENS, Some(&narrow)).await.items()[0]["id"]);
    app.patch_json(
        &token_path(&id),
        Some(&narrow),
        &json!({"scopes": ["orders:read"]}),
    )
    .await
    .expect_invalid_at(json!(["body", "scopes"]));
    app.patch_json(&token_path("not-a-uuid"), Some(&narrow), &json!({}))
        .await
        .expect_invalid_at(json!(["path", "id"]));

    // Without the scopes: 403; read alone does not write.
    let (_, reader) = app
        .new_user_with_scopes(
            "reader@example.com",
            &[
                Scope::OrganizationsWrite,
                Scope::OrganizationAccessTokensRead,
            ],
        )
        .await;
    app.get(TOKENS, Some(&reader)).await.expect(200);
    let r = app.post_json(TOKENS, Some(&reader), &body(json!([]))).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    let (_, none) = app
        .new_user_with_scopes("none@example.com", &[Scope::OrganizationsWrite])
        .await;
    let r = app.get(TOKENS, Some(&none)).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    // No credentials, and an organization token: never.
    assert_eq!(
        app.get(TOKENS, None).await.expect_error(401),
        "Unauthorized"
    );
    let admins = org(&app, &app.token, "oat-admins").await;
    let oat = created(
        &app,
        &app.token,
        json!({"organization_id": admins, "comment": "c", "scopes": ["products:read"]}),
    )
    .await;
    let oat = str_of(&oat["token"]);
    let r = app.get(TOKENS, Some(&oat)).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    let r = app.post_json(TOKENS, Some(&oat), &body(json!([]))).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
}

#[actix_web::test]
async fn a_user_reaches_the_tokens_of_its_own_organizations_only() {
    let app = spawn_app().await;
    let admins = org(&app, &app.token, "oat-admins").await;
    let admin_token = created(
        &app,
        &app.token,
        json!({"organization_id": admins, "comment": "admin", "scopes": ["products:read"]}),
    )
    .await;
    let admin_token_id = str_of(&admin_token["organization_access_token"]["id"]);
    let (_, stranger) = app
        .new_user_with_scopes(
            "stranger@example.com",
            &[
                Scope::OrganizationsWrite,
                Scope::ProductsRead,
                Scope::OrganizationAccessTokensWrite,
            ],
        )
        .await;
    let theirs = org(&app, &stranger, "oat-theirs").await;
    let their_token = created(
        &app,
        &stranger,
        json!({"organization_id": theirs, "comment": "theirs", "scopes": ["products:read"]}),
    )
    .await;
    let their_token_id = str_of(&their_token["organization_access_token"]["id"]);

    // Lists: each sees its own, a filter on another's organization shows nothing.
    assert_eq!(
        ids(&app.get(TOKENS, Some(&stranger)).await),
        [their_token_id]
    );
    assert_eq!(
        ids(&app.get(TOKENS, Some(&app.token)).await),
        [admin_token_id.as_str()]
    );
    let r = app
        .get(
            &format!("{TOKENS}?organization_id={admins}"),
            Some(&stranger),
        )
        .await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);
    // Another's organization: not found.
    let item = app
        .post_json(
            TOKENS,
            Some(&stranger),
            &json!({"organization_id": admins, "comment": "x", "scopes": []}),
        )
        .await
        .expect_invalid_at(json!(["body", "organization_id"]));
    assert_eq!(item["msg"], "Organization not found.");
    app.patch_json(
        &token_path(&admin_token_id),
        Some(&stranger),
        &json!({"comment": "x"}),
    )
    .await
    .expect_error(404);
    app.send(app.request(
        Method::DELETE,
        &token_path(&admin_token_id),
        Some(&stranger),
    ))
    .await
    .expect_error(404);
    // The admin's token still works.
    app.get(PRODUCTS, Some(&str_of(&admin_token["token"])))
        .await
        .expect(200);
}

#[actix_web::test]
async fn tokens_list_sorted_and_paged() {
    let app = spawn_app().await;
    let a = org(&app, &app.token, "oat-sort-a").await;
    let b = org(&app, &app.token, "oat-sort-b").await;
    let mut made = Vec::new();
    for (org, comment) in [(&a, "charlie"), (&b, "alpha"), (&a, "bravo")] {
        let t = created(
            &app,
            &app.token,
            json!({"organization_id": org, "comment": comment, "scopes": []}),
        )
        .await;
        made.push(str_of(&t["organization_access_token"]["id"]));
    }
    let comments =
        |r: &Reply| -> Vec<String> { r.items().iter().map(|t| str_of(&t["comment"])).collect() };
    let r = app.get(TOKENS, Some(&app.token)).await;
    assert_eq!(ids(&r), made);
    let r = app
        .get(&format!("{TOKENS}?sorting=-created_at"), Some(&app.token))
        .await;
    assert_eq!(comments(&r), ["bravo", "alpha", "charlie"]);
    let r = app
        .get(&format!("{TOKENS}?sorting=comment"), Some(&app.token))
        .await;
    assert_eq!(comments(&r), ["alpha", "bravo", "charlie"]);
    let r = app
        .get(
            &format!("{TOKENS}?sorting=comment&limit=1&page=2"),
            Some(&app.token),
        )
        .await;
    assert_eq!(comments(&r), ["bravo"]);
    assert_eq!((r.total_count(), r.max_page()), (3, 3));
    let r = app
        .get(
            &format!("{TOKENS}?organization_id={a}&sorting=-comment"),
            Some(&app.token),
        )
        .await;
    assert_eq!(comments(&r), ["charlie", "bravo"]);
    let r = app
        .get(
            &format!("{TOKENS}?sorting=organization_id&sorting=comment"),
            Some(&app.token),
        )
        .await;
    let mut want = [
        (a.clone(), "bravo"),
        (a.clone(), "charlie"),
        (b.clone(), "alpha"),
    ];
    want.sort();
    assert_eq!(
        comments(&r),
        want.iter().map(|(_, c)| *c).collect::<Vec<_>>()
    );
    // Never used: nulls last ascending.
    let r = app
        .get(&format!("{TOKENS}?sorting=last_used_at"), Some(&app.token))
        .await;
    assert_eq!(r.total_count(), 3);
    app.get(&format!("{TOKENS}?sorting=secret"), Some(&app.token))
        .await
        .expect_invalid_at(json!(["query", "sorting", 0]));
}

#[actix_web::test]
async fn a_browser_session_manages_tokens_with_every_scope_a_token_may_hold() {
    let app = spawn_app().await;
    let browser = signed_in(&app, "web-oat@example.com").await;
    let r = browser
        .api(
            Method::POST,
            "/v1/organizations/",
            Some(&json!({"name": "Web shop", "slug": "oat-web"})),
        )
        .await;
    r.expect(201);
    let own = r.id();
    let r = browser
        .api(
            Method::POST,
            TOKENS,
            Some(&json!({"organization_id": own, "comment": "from the web",
                         "scopes": ["orders:read", "webhooks:write", "customers:write"]})),
        )
        .await;
    r.expect(201);
    let id = str_of(&r.body["organization_access_token"]["id"]);
    let r = browser.api(Method::GET, TOKENS, None).await;
    r.expect(200);
    assert_eq!(ids(&r), [id.as_str()]);
    browser
        .api(Method::DELETE, &token_path(&id), None)
        .await
        .expect(204);
}

#[actix_web::test]
async fn an_organization_holds_at_most_the_cap_of_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings
        .retention
        .max_organization_access_tokens_per_organization = 2;
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let own = org(&app, &app.token, "oat-cap").await;
    let body = json!({"organization_id": own, "comment": "c", "scopes": []});
    let first = created(&app, &app.token, body.clone()).await;
    created(&app, &app.token, body.clone()).await;
    let r = app.post_json(TOKENS, Some(&app.token), &body).await;
    assert_eq!(r.expect_error(403), "NotPermitted");
    // A deleted token frees its place.
    let id = str_of(&first["organization_access_token"]["id"]);
    app.send(app.request(Method::DELETE, &token_path(&id), Some(&app.token)))
        .await
        .expect(204);
    created(&app, &app.token, body).await;
}

#[actix_web::test]
async fn polar_organization_narrows_a_request_to_one_organization() {
    let app = spawn_app().await;
    let a = org(&app, &app.token, "narrow-a").await;
    let b = org(&app, &app.token, "narrow-b").await;
    let in_a = product(&app, &app.token, &a, "In A").await;
    let in_b = product(&app, &app.token, &b, "In B").await;
    let admin = app.token.clone();

    // Without the header the user reaches both; with it, one.
    assert_eq!(app.get(PRODUCTS, Some(&admin)).await.total_count(), 2);
    assert_eq!(
        ids(&get_with(&app, PRODUCTS, &admin, &a).await),
        [in_a.as_str()]
    );
    assert_eq!(
        ids(&get_with(&app, PRODUCTS, &admin, &b).await),
        [in_b.as_str()]
    );
    let r = get_with(&app, &format!("{PRODUCTS}?organization_id={b}"), &admin, &a).await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);
    get_with(&app, &format!("{PRODUCTS}{in_b}"), &admin, &a)
        .await
        .expect_error(404);
    get_with(&app, &format!("{PRODUCTS}{in_a}"), &admin, &a)
        .await
        .expect(200);
    let r = get_with(&app, "/v1/organizations/", &admin, &b).await;
    assert_eq!(ids(&r), [b.as_str()]);
    get_with(&app, &format!("/v1/organizations/{a}"), &admin, &b)
        .await
        .expect_error(404);

    // Creates default to it; naming another organization is not found.
    let price = json!([{"type": "one_time", "amount_type": "fixed", "price_amount": 700}]);
    let r = post_with(
        &app,
        PRODUCTS,
        &admin,
        &b,
        &json!({"name": "Made in B", "prices": price}),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["organization_id"], b.as_str());
    let r = post_with(
        &app,
        PRODUCTS,
        &admin,
        &b,
        &json!({"name": "Made in B", "organization_id": b, "prices": price}),
    )
    .await;
    r.expect(201);
    let item = post_with(
        &app,
        PRODUCTS,
        &admin,
        &b,
        &json!({"name": "Not in A", "organization_id": a, "prices": price}),
    )
    .await
    .expect_invalid_at(json!(["body", "organization_id"]));
    assert_eq!(item["msg"], "Organization not found.");
    // Organization access tokens of the named organization only.
    let r = post_with(
        &app,
        TOKENS,
        &admin,
        &a,
        &json!({"comment": "A", "scopes": ["products:read"]}),
    )
    .await;
    r.expect(201);
    assert_eq!(
        r.body["organization_access_token"]["organization_id"],
        a.as_str()
    );
    let oat = str_of(&r.body["token"]);
    created(
        &app,
        &admin,
        json!({"organization_id": b, "comment": "B", "scopes": []}),
    )
    .await;
    assert_eq!(get_with(&app, TOKENS, &admin, &a).await.total_count(), 1);
    assert_eq!(app.get(TOKENS, Some(&admin)).await.total_count(), 2);

    // An organization the caller does not reach: 404, whoever asks.
    let (_, stranger) = app
        .new_user_with_scopes(
            "elsewhere@example.com",
            &[Scope::OrganizationsWrite, Scope::ProductsRead],
        )
        .await;
    let theirs = org(&app, &stranger, "narrow-theirs").await;
    for (token, organization) in [
        (admin.as_str(), theirs.as_str()),
        (admin.as_str(), "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e"),
        (stranger.as_str(), a.as_str()),
        (oat.as_str(), b.as_str()),
    ] {
        let r = get_with(&app, PRODUCTS, token, organization).await;
        assert_eq!(r.expect_error(404), "ResourceNotFound", "{organization}");
    }
    // An organization token naming its own organization, and an empty header.
    assert_eq!(
        ids(&get_with(&app, PRODUCTS, &oat, &a).await),
        [in_a.as_str()]
    );
    assert_eq!(get_with(&app, PRODUCTS, &admin, "").await.total_count(), 4);
    // Not a UUID: 422 at the header.
    let item = get_with(&app, PRODUCTS, &admin, "acme")
        .await
        .expect_invalid_at(json!(["header", "polar-organization"]));
    assert_eq!(item["type"], "uuid_parsing");
    // No credentials: 401 as without the header.
    let r = app
        .send(
            app.request(Method::GET, PRODUCTS, None)
                .header("Polar-Organization", &a),
        )
        .await;
    assert_eq!(r.expect_error(401), "Unauthorized");
}

#[actix_web::test]
async fn oauth_clients_cannot_be_granted_the_token_management_scopes() {
    let app = spawn_app().await;
    let r = app.get("/.well-known/openid-configuration", None).await;
    r.expect(200);
    let supported = r.body["scopes_supported"].as_array().unwrap();
    assert!(supported.contains(&json!("products:read")));
    assert!(!supported.contains(&json!("organization_access_tokens:read")));
    assert!(!supported.contains(&json!("organization_access_tokens:write")));
}
