//! `POST /v1/customer-sessions/`: a seller opens the customer portal for one of its
//! customers (by id or external id); the `polar_cst_…` token reads that customer's
//! portal only, and only for an hour.

use std::collections::BTreeSet;

use chrono::{Duration, Utc};
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate::config::Settings;
use tollgate_actors::ManualClock;

use crate::benefit_grants::{buy, key_of, shop};
use crate::helpers::{assert_utc_timestamp, spawn_app, spawn_app_with, TestApp};

const SESSIONS: &str = "/v1/customer-sessions/";
const PORTAL_KEYS: &str = "/v1/customer-portal/license-keys/";

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

async fn open(app: &TestApp, body: Value) -> Value {
    let r = app.post_json(SESSIONS, Some(&app.token), &body).await;
    r.expect(201);
    r.body
}

#[actix_web::test]
async fn a_session_is_opened_by_customer_id_or_external_id() {
    let app = spawn_app().await;
    let shop = shop(&app, "sessions").await;
    let ada = buy(&app, &shop.one_time, "ada@sessions.example").await;
    app.patch_json(
        &format!("/v1/customers/{}", ada.customer),
        Some(&app.token),
        &json!({"external_id": "ext-ada"}),
    )
    .await
    .expect(200);

    let s = open(
        &app,
        json!({"customer_id": ada.customer, "return_url": "https://example.com/account"}),
    )
    .await;
    assert_eq!(
        keys(&s),
        [
            "created_at",
            "modified_at",
            "id",
            "token",
            "expires_at",
            "return_url",
            "customer_portal_url",
            "customer_id",
            "customer"
        ]
        .map(String::from)
        .into_iter()
        .collect()
    );
    let token = s["token"].as_str().unwrap();
    assert!(token.starts_with("polar_cst_"), "{token}");
    assert_eq!(s["customer_id"], ada.customer.as_str());
    assert_eq!(s["customer"]["id"], ada.customer.as_str());
    assert_eq!(s["customer"]["external_id"], "ext-ada");
    assert_eq!(s["return_url"], "https://example.com/account");
    assert!(s["modified_at"].is_null());
    assert_utc_timestamp(&s["created_at"]);
    let created = chrono::DateTime::parse_from_rfc3339(s["created_at"].as_str().unwrap()).unwrap();
    let expires = chrono::DateTime::parse_from_rfc3339(s["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!(expires - created, Duration::hours(1));
    let url = s["customer_portal_url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{}/portal/sessions?", app.address)),
        "{url}"
    );
    assert!(
        url.contains(&format!("customer_session_token={token}")),
        "{url}"
    );
    assert!(url.contains("email=ada%40sessions.example"), "{url}");

    // By external id, under both spellings; each session has its own token.
    let by_ext = open(&app, json!({"external_customer_id": "ext-ada"})).await;
    assert_eq!(by_ext["customer_id"], ada.customer.as_str());
    assert!(by_ext["return_url"].is_null());
    assert_ne!(by_ext["token"], s["token"]);
    let alias = open(&app, json!({"customer_external_id": "ext-ada"})).await;
    assert_eq!(alias["customer_id"], ada.customer.as_str());
    // Member fields (Polar's member model) are accepted and ignored.
    open(
        &app,
        json!({"customer_id": ada.customer, "member_id": uuid::Uuid::new_v4()}),
    )
    .await;
}

#[actix_web::test]
async fn unknown_customers_and_bad_bodies_are_422_and_scopes_are_checked() {
    let app = spawn_app().await;
    let shop = shop(&app, "sessions-bad").await;
    let ada = buy(&app, &shop.one_time, "ada@bad.example").await;

    let invalid = |r: &crate::helpers::Reply, field: &str, msg: &str| {
        let item = r.expect_invalid_at(json!(["body", field]));
        assert_eq!(item["msg"], msg, "{item}");
    };
    let unknown = uuid::Uuid::new_v4().to_string();
    let r = app
        .post_json(SESSIONS, Some(&app.token), &json!({"customer_id": unknown}))
        .await;
    invalid(&r, "customer_id", "Customer does not exist.");
    assert_eq!(r.expect_validation()[0]["input"], unknown.as_str());
    let r = app
        .post_json(
            SESSIONS,
            Some(&app.token),
            &json!({"external_customer_id": "nobody"}),
        )
        .await;
    invalid(&r, "external_customer_id", "Customer does not exist.");
    let r = app.post_json(SESSIONS, Some(&app.token), &json!({})).await;
    invalid(&r, "customer_id", "Field required");
    let r = app
        .post_json(SESSIONS, Some(&app.token), &json!({"customer_id": "x"}))
        .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "customer_id"]))["type"],
        "uuid_parsing"
    );
    let r = app
        .post_json(
            SESSIONS,
            Some(&app.token),
            &json!({"customer_id": ada.customer, "return_url": "not a url"}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "return_url"]));
    // A deleted customer does not exist.
    let other = buy(&app, &shop.one_time, "gone@bad.example").await;
    app.send(app.request(
        reqwest::Method::DELETE,
        &format!("/v1/customers/{}", other.customer),
        Some(&app.token),
    ))
    .await
    .expect(204);
    let r = app
        .post_json(
            SESSIONS,
            Some(&app.token),
            &json!({"customer_id": other.customer}),
        )
        .await;
    invalid(&r, "customer_id", "Customer does not exist.");

    // Another organization's customer does not exist for the caller.
    let (user, rival) = app
        .new_user_with_scopes("rival@example.com", &[Scope::CustomerSessionsWrite])
        .await;
    let r = app
        .post_json(
            SESSIONS,
            Some(&rival),
            &json!({"customer_id": ada.customer}),
        )
        .await;
    invalid(&r, "customer_id", "Customer does not exist.");

    let r = app
        .post_json(SESSIONS, None, &json!({"customer_id": ada.customer}))
        .await;
    assert_eq!(r.expect_error(401), "Unauthorized");
    let reader = app.issue_token(user, &[Scope::CustomersWrite]).await;
    let r = app
        .post_json(
            SESSIONS,
            Some(&reader),
            &json!({"customer_id": ada.customer}),
        )
        .await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    assert!(r.www_authenticate().contains("customer_sessions:write"));
}

#[actix_web::test]
async fn the_token_reads_its_customers_portal_only_and_expires_after_an_hour() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings::for_tests(dir.path());
    let (clock, shared) = ManualClock::shared(Utc::now());
    let app = spawn_app_with(dir, settings, shared).await;
    let shop = shop(&app, "portal").await;
    let ada = buy(&app, &shop.one_time, "ada@portal.example").await;
    let bob = buy(&app, &shop.one_time, "bob@portal.example").await;
    let adas_key = &key_of(&app, &ada.customer, &shop.keys).await[0];
    let bobs_key = &key_of(&app, &bob.customer, &shop.keys).await[0];

    let s = open(&app, json!({"customer_id": ada.customer})).await;
    let token = s["token"].as_str().unwrap().to_string();
    let r = app.get(PORTAL_KEYS, Some(&token)).await;
    r.expect(200);
    let ids: Vec<&Value> = r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| &k["id"])
        .collect();
    assert_eq!(ids, vec![&adas_key["id"]]);
    let get = |id: &Value| format!("{PORTAL_KEYS}{}", id.as_str().unwrap());
    app.get(&get(&adas_key["id"]), Some(&token))
        .await
        .expect(200);
    let r = app.get(&get(&bobs_key["id"]), Some(&token)).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    // Not a seller's credential.
    let r = app.get("/v1/customers/", Some(&token)).await;
    r.expect_error(401);

    // Within the hour it works; after it, it is refused.
    clock.advance(Duration::minutes(59));
    app.get(PORTAL_KEYS, Some(&token)).await.expect(200);
    clock.advance(Duration::minutes(2));
    let r = app.get(PORTAL_KEYS, Some(&token)).await;
    r.expect_error(401);
    // A new session works again.
    let s = open(&app, json!({"customer_id": ada.customer})).await;
    app.get(PORTAL_KEYS, Some(s["token"].as_str().unwrap()))
        .await
        .expect(200);
}
