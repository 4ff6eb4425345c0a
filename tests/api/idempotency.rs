//! `Idempotency-Key` on POST: a retried create answers the stored response and creates
//! nothing more; another body with the same key is 422; keys are per caller; concurrent
//! duplicates create once; expired keys are purged.

use chrono::Utc;
use futures_util::future::join_all;
use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate::config::Settings;
use tollgate_actors::ManualClock;

use crate::helpers::{spawn_app, spawn_app_with, Reply, TestApp};

async fn post_with_key(app: &TestApp, token: &str, path: &str, key: &str, body: &Value) -> Reply {
    app.send(
        app.request(Method::POST, path, Some(token))
            .header("Idempotency-Key", key)
            .json(body),
    )
    .await
}

fn product(org: &str, name: &str) -> Value {
    json!({
        "name": name,
        "organization_id": org,
        "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 1000,
                    "price_currency": "usd"}],
    })
}

async fn org(app: &TestApp, token: &str, slug: &str) -> String {
    app.created_org_as(token, "Seller", slug).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn count(app: &TestApp, token: &str, path: &str) -> u64 {
    let r = app.get(path, Some(token)).await;
    r.expect(200);
    r.total_count()
}

#[actix_web::test]
async fn a_retried_product_create_answers_the_same_and_creates_once() {
    let app = spawn_app().await;
    let org = org(&app, &app.token, "acme").await;
    let body = product(&org, "E-book");
    let first = post_with_key(&app, &app.token, "/v1/products/", "retry-1", &body).await;
    first.expect(201);
    assert!(first.headers.get("idempotency-replayed").is_none());
    let again = post_with_key(&app, &app.token, "/v1/products/", "retry-1", &body).await;
    again.expect(201);
    assert_eq!(again.header("idempotency-replayed"), "true");
    assert_eq!(again.body, first.body);
    assert_eq!(again.content_type(), first.content_type());
    assert_eq!(count(&app, &app.token, "/v1/products/").await, 1);
    // Without a key, or with another key, the request runs again.
    post_with_key(&app, &app.token, "/v1/products/", "retry-2", &body)
        .await
        .expect(201);
    app.post_json("/v1/products/", Some(&app.token), &body)
        .await
        .expect(201);
    assert_eq!(count(&app, &app.token, "/v1/products/").await, 3);
}

#[actix_web::test]
async fn the_same_key_with_another_body_is_422() {
    let app = spawn_app().await;
    let org = org(&app, &app.token, "acme").await;
    post_with_key(
        &app,
        &app.token,
        "/v1/products/",
        "k",
        &product(&org, "One"),
    )
    .await
    .expect(201);
    let r = post_with_key(
        &app,
        &app.token,
        "/v1/products/",
        "k",
        &product(&org, "Two"),
    )
    .await;
    let item = r.expect_invalid_at(json!(["header", "idempotency-key"]));
    assert_eq!(item["type"], "idempotency_key_reused", "{item}");
    assert!(item["msg"].as_str().unwrap().contains("different request"));
    // Another path with the same key is another request too.
    let r = post_with_key(
        &app,
        &app.token,
        "/v1/customers/",
        "k",
        &json!({"email": "a@example.com", "organization_id": org}),
    )
    .await;
    r.expect_invalid_at(json!(["header", "idempotency-key"]));
    assert_eq!(count(&app, &app.token, "/v1/products/").await, 1);
    assert_eq!(count(&app, &app.token, "/v1/customers/").await, 0);
    // A key that is too long is refused before anything runs.
    let r = post_with_key(
        &app,
        &app.token,
        "/v1/products/",
        &"x".repeat(256),
        &product(&org, "Three"),
    )
    .await;
    r.expect_invalid_at(json!(["header", "idempotency-key"]));
    assert_eq!(count(&app, &app.token, "/v1/products/").await, 1);
}

/// A refusal changed nothing, so it is not stored: the same key runs again, and once the
/// body is fixed it does the work (and that answer is the one replayed).
#[actix_web::test]
async fn a_validation_error_is_not_stored_and_the_fixed_body_runs_with_the_same_key() {
    let app = spawn_app().await;
    let org = org(&app, &app.token, "acme").await;
    let bad = json!({"email": "not-an-email", "organization_id": org});
    let first = post_with_key(&app, &app.token, "/v1/customers/", "c-1", &bad).await;
    first.expect_validation();
    let again = post_with_key(&app, &app.token, "/v1/customers/", "c-1", &bad).await;
    again.expect_validation();
    assert!(again.headers.get("idempotency-replayed").is_none());
    let good = json!({"email": "a@example.com", "organization_id": org});
    let created = post_with_key(&app, &app.token, "/v1/customers/", "c-1", &good).await;
    created.expect(201);
    let replay = post_with_key(&app, &app.token, "/v1/customers/", "c-1", &good).await;
    replay.expect(201);
    assert_eq!(replay.header("idempotency-replayed"), "true");
    assert_eq!(replay.body, created.body);
    assert_eq!(count(&app, &app.token, "/v1/customers/").await, 1);
}

#[actix_web::test]
async fn keys_are_per_caller() {
    let app = spawn_app().await;
    let (_, other) = app
        .new_user_with_scopes(
            "other@example.com",
            &[
                Scope::OrganizationsWrite,
                Scope::OrganizationsRead,
                Scope::CustomersWrite,
                Scope::CustomersRead,
            ],
        )
        .await;
    let mine = org(&app, &app.token, "mine").await;
    let theirs = org(&app, &other, "theirs").await;
    let a = post_with_key(
        &app,
        &app.token,
        "/v1/customers/",
        "shared",
        &json!({"email": "a@example.com", "organization_id": mine}),
    )
    .await;
    a.expect(201);
    // The same key and even the same body shape from another tenant: its own result.
    let b = post_with_key(
        &app,
        &other,
        "/v1/customers/",
        "shared",
        &json!({"email": "a@example.com", "organization_id": theirs}),
    )
    .await;
    b.expect(201);
    assert!(b.headers.get("idempotency-replayed").is_none());
    assert_ne!(a.id(), b.id());
    assert_eq!(b.body["organization_id"], theirs.as_str());
    assert_eq!(count(&app, &other, "/v1/customers/").await, 1);
    assert_eq!(count(&app, &app.token, "/v1/customers/").await, 1);
}

#[actix_web::test]
async fn concurrent_duplicates_create_one_checkout() {
    let app = spawn_app().await;
    let org = org(&app, &app.token, "acme").await;
    let p = app
        .post_json("/v1/products/", Some(&app.token), &product(&org, "E-book"))
        .await;
    p.expect(201);
    let price = p.body["prices"][0]["id"].as_str().unwrap().to_string();
    let body = json!({"payment_processor": "stripe", "product_price_id": price});
    let replies = join_all(
        (0..8).map(|_| post_with_key(&app, &app.token, "/v1/checkouts/custom/", "buy-once", &body)),
    )
    .await;
    let mut ids = std::collections::BTreeSet::new();
    for r in &replies {
        match r.status.as_u16() {
            201 => {
                ids.insert(r.id());
            }
            409 => assert_eq!(r.body["error"], "ResourceAlreadyExists", "{}", r.body),
            other => panic!("unexpected {other}: {}", r.body),
        }
    }
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(count(&app, &app.token, "/v1/checkouts/custom/").await, 1);
    // A later retry answers the same checkout.
    let r = post_with_key(&app, &app.token, "/v1/checkouts/custom/", "buy-once", &body).await;
    r.expect(201);
    assert_eq!(ids.into_iter().next().unwrap(), r.id());
}

#[actix_web::test]
async fn expired_keys_are_purged_and_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.idempotency.ttl_hours = 1;
    let (clock, shared) = ManualClock::shared(Utc::now());
    let app = spawn_app_with(dir, settings, shared).await;
    let org = org(&app, &app.token, "acme").await;
    let body = json!({"email": "a@example.com", "organization_id": org});
    let first = post_with_key(&app, &app.token, "/v1/customers/", "c", &body).await;
    first.expect(201);
    // Within the TTL nothing is purged.
    assert_eq!(
        tollgate::idempotency::purge_expired(&app.state)
            .await
            .unwrap(),
        0
    );
    clock.advance(chrono::Duration::minutes(61));
    assert_eq!(
        tollgate::idempotency::purge_expired(&app.state)
            .await
            .unwrap(),
        1
    );
    // The key is free again: the request runs (and the e-mail is now taken: its own answer).
    let again = post_with_key(&app, &app.token, "/v1/customers/", "c", &body).await;
    assert!(again.headers.get("idempotency-replayed").is_none());
    assert_ne!(again.body, first.body);
    assert_eq!(count(&app, &app.token, "/v1/customers/").await, 1);
}
