//! `PATCH /v1/webhooks/endpoints/{id}/secret` (Polar's `reset_webhook_endpoint_secret`):
//! a new secret in Polar's format, no body, `webhooks:write`, 404 for an unknown endpoint
//! or another organization's; and no grace period: once rotated, every delivery, the retry
//! of an event from before the rotation included, verifies with the new secret (with an
//! independent verifier, `tests/clients/webhooks/receiver.py`) and not with the old one.

use std::sync::Arc;

use chrono::Utc;
use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate_actors::ManualClock;

use crate::checkouts::{create_org, id_of, Api};
use crate::helpers::{spawn_app, spawn_app_with, Reply, TestApp};
use crate::webhooks::{assert_verified, settings, Receiver};

const ENDPOINTS: &str = "/v1/webhooks/endpoints";
const UNKNOWN_ID: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";

fn secret_path(id: &str) -> String {
    format!("{ENDPOINTS}/{id}/secret")
}

async fn rotate(app: &TestApp, token: Option<&str>, id: &str) -> Reply {
    app.send(app.request(Method::PATCH, &secret_path(id), token))
        .await
}

/// Polar's `generate_token(prefix="whsec_")`: 37 of `[A-Za-z0-9]` and a 6-character
/// base62 CRC32 of them.
#[track_caller]
fn assert_polar_secret(secret: &str) {
    assert_eq!(secret.len(), 49, "{secret}");
    let tail = secret.strip_prefix("whsec_").expect("the whsec_ prefix");
    assert!(tail.chars().all(|c| c.is_ascii_alphanumeric()), "{secret}");
}

/// A user with `scopes` (plus organizations:write) and an organization of their own.
async fn seller(app: &TestApp, email: &str, slug: &str, scopes: &[Scope]) -> (String, String) {
    let mut all = vec![Scope::OrganizationsWrite];
    all.extend_from_slice(scopes);
    let (_, token) = app.new_user_with_scopes(email, &all).await;
    let org = app.created_org_as(&token, "Seller Org", slug).await;
    (token, org["id"].as_str().unwrap().to_string())
}

async fn new_endpoint(app: &TestApp, token: &str, org: &str) -> Value {
    let r = app
        .post_json(
            ENDPOINTS,
            Some(token),
            &json!({
                "url": "https://hooks.example.com/tollgate",
                "format": "raw",
                "events": ["order.created"],
                "organization_id": org,
            }),
        )
        .await;
    r.expect(201);
    r.body
}

#[actix_web::test]
async fn rotating_answers_the_endpoint_with_a_new_secret_in_polars_format() {
    let app = spawn_app().await;
    let (token, org) = seller(
        &app,
        "rotate@example.com",
        "rotate",
        &[Scope::WebhooksWrite],
    )
    .await;
    let created = new_endpoint(&app, &token, &org).await;
    let id = id_of(&created);
    let first = created["secret"].as_str().unwrap().to_string();
    // Created endpoints get Polar's format too.
    assert_polar_secret(&first);

    let r = rotate(&app, Some(&token), &id).await;
    r.expect(200);
    let second = r.body["secret"].as_str().unwrap().to_string();
    assert_polar_secret(&second);
    assert_ne!(second, first);
    // The whole WebhookEndpoint, unchanged but for its secret and modified_at.
    for key in [
        "id",
        "url",
        "name",
        "format",
        "organization_id",
        "events",
        "enabled",
        "created_at",
        "api_version",
        "uses_standard_webhook_signature",
    ] {
        assert_eq!(r.body[key], created[key], "{key}");
    }
    assert!(r.body["modified_at"].is_string(), "{}", r.body);
    let got = app.get(&format!("{ENDPOINTS}/{id}"), Some(&token)).await;
    got.expect(200);
    assert_eq!(got.body["secret"], second.as_str());

    // A body, if one is sent, is ignored (Polar's route takes none); each rotation is new.
    let r = app
        .patch_json(
            &secret_path(&id),
            Some(&token),
            &json!({"secret": "x".repeat(40)}),
        )
        .await;
    r.expect(200);
    let third = r.body["secret"].as_str().unwrap();
    assert_polar_secret(third);
    assert_ne!(third, second);
}

#[actix_web::test]
async fn rotating_needs_a_token_the_write_scope_and_an_endpoint_of_ones_own() {
    let app = spawn_app().await;
    let (owner, org) = seller(&app, "owner@example.com", "owner", &[Scope::WebhooksWrite]).await;
    let created = new_endpoint(&app, &owner, &org).await;
    let id = id_of(&created);
    let secret = created["secret"].as_str().unwrap().to_string();

    // No token: 401.
    let r = rotate(&app, None, &id).await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(r.body["error"], "Unauthorized");
    // Read scope only: 403.
    let (reader, _) = seller(&app, "reader@example.com", "reader", &[Scope::WebhooksRead]).await;
    let r = rotate(&app, Some(&reader), &id).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(r.body["error"], "insufficient_scope");
    // Another organization's seller with the write scope: 404, as an unknown endpoint.
    let (stranger, _) = seller(
        &app,
        "stranger@example.com",
        "stranger",
        &[Scope::WebhooksWrite],
    )
    .await;
    for target in [id.as_str(), UNKNOWN_ID] {
        let r = rotate(&app, Some(&stranger), target).await;
        assert_eq!(r.status, 404, "{target}: {}", r.body);
        assert_eq!(r.body["error"], "ResourceNotFound");
    }
    let r = rotate(&app, Some(&owner), UNKNOWN_ID).await;
    assert_eq!(r.status, 404, "{}", r.body);
    // Not an id: 422 at the path.
    let r = rotate(&app, Some(&owner), "not-a-uuid").await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.body["detail"][0]["loc"], json!(["path", "id"]));
    // None of it changed the secret.
    let got = app.get(&format!("{ENDPOINTS}/{id}"), Some(&owner)).await;
    got.expect(200);
    assert_eq!(got.body["secret"], secret.as_str());
}

/// The attempts of one delivery id in what a receiver got.
fn of_id<'a>(got: &'a [Value], id: &Value) -> Vec<&'a Value> {
    got.iter().filter(|v| v["id"] == *id).collect()
}

#[actix_web::test]
async fn after_a_rotation_every_delivery_and_the_retry_of_an_earlier_event_use_the_new_secret() {
    let dir = tempfile::tempdir().expect("a data directory");
    let mut s = settings(dir.path());
    // One retry, an hour later (±20%): the test moves the clock past it.
    s.webhooks.retry_delays_secs = vec![3600.0];
    let (clock, shared): (Arc<ManualClock>, _) = ManualClock::shared(Utc::now());
    let app = spawn_app_with(dir, s, shared).await;
    let api = Api::of(&app);
    let org = create_org(api, "rotation-deliveries").await;
    let e = api
        .posted(
            ENDPOINTS,
            &json!({"url": "http://localhost:9/x", "format": "raw",
                    "events": ["customer.created"], "organization_id": org}),
            201,
        )
        .await;
    let endpoint = id_of(&e);
    let old = e["secret"].as_str().unwrap().to_string();
    // A receiver that knows only the old secret and answers 500 to everything.
    let with_old = Receiver::start(&old, u32::MAX);
    app.patch_json(
        &format!("{ENDPOINTS}/{endpoint}"),
        Some(&app.token),
        &json!({"url": with_old.url()}),
    )
    .await
    .expect(200);

    // An event before the rotation: its first attempt is signed with the old secret, and
    // fails.
    api.posted(
        "/v1/customers/",
        &json!({"email": "before@example.com", "organization_id": org}),
        201,
    )
    .await;
    let got = with_old
        .wait_for("the first attempt", |got| !got.is_empty())
        .await;
    assert_verified(&got);
    assert_eq!(got[0]["answered"], 500);
    let earlier = got[0]["id"].clone();

    // Rotated; the endpoint now points at a receiver that knows only the new secret.
    let r = app
        .send(app.request(Method::PATCH, &secret_path(&endpoint), Some(&app.token)))
        .await;
    r.expect(200);
    let new = r.body["secret"].as_str().unwrap().to_string();
    assert_ne!(new, old);
    let with_new = Receiver::start(&new, 0);
    app.patch_json(
        &format!("{ENDPOINTS}/{endpoint}"),
        Some(&app.token),
        &json!({"url": with_new.url()}),
    )
    .await
    .expect(200);
    // Past the retry's time; a change (its name) wakes the endpoint's worker.
    clock.advance(chrono::Duration::seconds(4500));
    app.patch_json(
        &format!("{ENDPOINTS}/{endpoint}"),
        Some(&app.token),
        &json!({"name": "rotated"}),
    )
    .await
    .expect(200);
    // The retry of the earlier event: signed with the new secret.
    let got = with_new
        .wait_for("the retry of the earlier event", |got| {
            !of_id(got, &earlier).is_empty()
        })
        .await;
    assert_verified(&got);
    let retry = of_id(&got, &earlier)[0];
    assert_eq!(retry["body"]["data"]["email"], "before@example.com");
    assert_eq!(retry["answered"], 200);

    // A new event, sent to the receiver of the old secret: it does not verify there.
    app.patch_json(
        &format!("{ENDPOINTS}/{endpoint}"),
        Some(&app.token),
        &json!({"url": with_old.url()}),
    )
    .await
    .expect(200);
    api.posted(
        "/v1/customers/",
        &json!({"email": "after@example.com", "organization_id": org}),
        201,
    )
    .await;
    let got = with_old
        .wait_for("the event after the rotation", |got| {
            got.iter()
                .any(|v| v["body"]["data"]["email"] == "after@example.com")
        })
        .await;
    let after: Vec<&Value> = got
        .iter()
        .filter(|v| v["body"]["data"]["email"] == "after@example.com")
        .collect();
    assert!(
        after.iter().all(|v| v["verified"] == false),
        "the old secret verified a delivery after the rotation: {after:?}"
    );
    // Only the one attempt before the rotation reached the old receiver's verifier intact.
    assert_eq!(
        got.iter().filter(|v| v["verified"] == true).count(),
        1,
        "{got:?}"
    );
}
