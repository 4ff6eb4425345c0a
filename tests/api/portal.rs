//! The customer portal's JSON API: signing in by e-mailed code
//! (`/v1/customer-portal/customer-session/request` and `/authenticate`), the session
//! (`introspect`, `user`), and what the signed-in customer reads and does: `customers/me`,
//! orders and their receipts, subscriptions (cancel, uncancel), benefit grants, and the
//! activations of its keys. Denials throughout: codes that are wrong, expired, reused or
//! worn out, rate limits, other customers' ids, a customer token on the seller's API and a
//! seller's token on the portal.

use chrono::{Duration, Utc};
use serde_json::{json, Value};
use tollgate::config::Settings;
use tollgate_actors::domain::mail::{MailKind, MailMessage};
use tollgate_actors::ManualClock;

use crate::benefit_grants::{buy, key_of, order_of, shop, subscription_of};
use crate::checkouts::store_values;
use crate::helpers::{spawn_app, spawn_app_with, TestApp};

const REQUEST: &str = "/v1/customer-portal/customer-session/request";
const AUTHENTICATE: &str = "/v1/customer-portal/customer-session/authenticate";
const PORTAL: &str = "/v1/customer-portal";

/// The sign-in codes the outbox holds for `to`, oldest first.
async fn codes_sent_to(app: &TestApp, to: &str) -> Vec<String> {
    let mut messages: Vec<MailMessage> = store_values::<MailMessage>(&app.state.store)
        .await
        .into_iter()
        .filter(|m| m.kind == MailKind::SignInCode && m.to.eq_ignore_ascii_case(to))
        .collect();
    messages.sort_by_key(|m| m.created_at);
    messages
        .iter()
        .map(|m| {
            // The code stands alone on its line, indented.
            m.text
                .lines()
                .map(str::trim)
                .find(|l| l.len() == 6 && l.bytes().all(|b| b.is_ascii_alphanumeric()))
                .unwrap_or_else(|| panic!("no code in: {}", m.text))
                .to_string()
        })
        .collect()
}

/// Asks for a code for `email` at `org` (202, no body) and returns the newest one sent.
async fn request_code(app: &TestApp, org: &str, email: &str) -> Option<String> {
    let r = app
        .post_json(
            REQUEST,
            None,
            &json!({"email": email, "organization_id": org}),
        )
        .await;
    r.expect(202);
    assert_eq!(r.body, Value::String(String::new()), "202 has no body");
    codes_sent_to(app, email).await.pop()
}

async fn authenticate(app: &TestApp, code: &str) -> crate::helpers::Reply {
    app.post_json(AUTHENTICATE, None, &json!({ "code": code }))
        .await
}

/// Signs `email` in by code: the session token.
async fn sign_in(app: &TestApp, org: &str, email: &str) -> String {
    let code = request_code(app, org, email)
        .await
        .expect("a code was sent");
    let r = authenticate(app, &code).await;
    r.expect(200);
    let token = r.body["token"].as_str().unwrap().to_string();
    assert!(token.starts_with("polar_cst_"), "{token}");
    token
}

fn invalid_code(r: &crate::helpers::Reply) {
    assert_eq!(r.expect_error(401), "CustomerSessionCodeInvalidOrExpired");
    assert_eq!(
        r.body["detail"],
        "This customer session code is invalid or has expired."
    );
}

/// The events of a type the organization's endpoint was sent.
async fn events(app: &TestApp, kind: &str) -> Vec<Value> {
    crate::checkouts::webhook_events(&app.state)
        .await
        .into_iter()
        .filter(|e| e.event_type == kind)
        .map(|e| serde_json::from_str(&e.payload).unwrap())
        .collect()
}

/// Waits until the fan-out wrote `n` events of a type.
async fn wait_events(app: &TestApp, kind: &str, n: usize) -> Vec<Value> {
    for _ in 0..200 {
        let got = events(app, kind).await;
        if got.len() >= n {
            return got;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("fewer than {n} {kind} events");
}

async fn hook(app: &TestApp, org: &str, events: &[&str]) {
    app.post_json(
        "/v1/webhooks/endpoints",
        Some(&app.token),
        &json!({"url": "https://hooks.example.com/tollgate", "format": "raw",
                "events": events, "organization_id": org}),
    )
    .await
    .expect(201);
}

#[actix_web::test]
async fn a_code_signs_in_once_and_the_session_reads_the_customers_purchases() {
    let app = spawn_app().await;
    let shop = shop(&app, "portal-api").await;
    let ada = buy(&app, &shop.one_time, "ada@portal.example").await;
    let order = order_of(&app, &ada.checkout).await;

    // The code e-mail: its subject, the code, the sign-in page.
    let code = request_code(&app, &shop.org, "Ada@Portal.example")
        .await
        .expect("a code for a customer's address, whatever its case");
    assert!(
        code.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()),
        "{code}"
    );
    let message = store_values::<MailMessage>(&app.state.store)
        .await
        .into_iter()
        .find(|m| m.kind == MailKind::SignInCode)
        .unwrap();
    assert_eq!(message.subject, "Access your portal-api purchases");
    assert!(
        message.text.contains("expires in 30 minutes"),
        "{}",
        message.text
    );
    assert!(message.html.contains(&code));
    assert!(message
        .text
        .contains(&format!("{}/portal/portal-api", app.address)));

    let r = authenticate(&app, &code.to_lowercase()).await;
    r.expect(200);
    let token = r.body["token"].as_str().unwrap().to_string();
    // Single use.
    invalid_code(&authenticate(&app, &code).await);

    // The session.
    let r = app
        .get(
            &format!("{PORTAL}/customer-session/introspect"),
            Some(&token),
        )
        .await;
    r.expect(200);
    let expires = chrono::DateTime::parse_from_rfc3339(r.body["expires_at"].as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc);
    assert!(expires > Utc::now() + Duration::minutes(59));
    assert!(expires <= Utc::now() + Duration::minutes(61));
    let r = app
        .get(&format!("{PORTAL}/customer-session/user"), Some(&token))
        .await;
    r.expect(200);
    assert_eq!(r.body["type"], "customer");
    assert_eq!(r.body["customer_id"], ada.customer.as_str());
    assert_eq!(r.body["email"], "ada@portal.example");

    // The customer, verified by the code.
    let r = app
        .get(&format!("{PORTAL}/customers/me"), Some(&token))
        .await;
    r.expect(200);
    assert_eq!(r.body["id"], ada.customer.as_str());
    assert_eq!(r.body["email_verified"], true);
    assert_eq!(r.body["oauth_accounts"], json!({}));

    // Orders, with the product and its organization, and the receipt link.
    let r = app.get(&format!("{PORTAL}/orders/"), Some(&token)).await;
    r.expect(200);
    let items = r.items();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], order.as_str());
    assert_eq!(items[0]["product"]["name"], "Pro");
    assert_eq!(items[0]["product"]["organization"]["slug"], "portal-api");
    assert_eq!(
        items[0]["total_amount"],
        items[0]["net_amount"].as_i64().unwrap() + items[0]["tax_amount"].as_i64().unwrap()
    );
    assert_eq!(r.body["pagination"]["total_count"], 1);
    let r = app
        .get(&format!("{PORTAL}/orders/{order}"), Some(&token))
        .await;
    r.expect(200);
    assert_eq!(r.body["product"]["benefits"].as_array().unwrap().len(), 2);
    let r = app
        .get(&format!("{PORTAL}/orders/{order}/receipt"), Some(&token))
        .await;
    r.expect(200);
    let url = r.body["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{}/portal/receipts/{order}?expires=", app.address)),
        "{url}"
    );
    assert!(url.contains("&signature="), "{url}");

    // Benefit grants: the key and the note.
    let r = app
        .get(&format!("{PORTAL}/benefit-grants/"), Some(&token))
        .await;
    r.expect(200);
    let grants = r.items();
    assert_eq!(grants.len(), 2, "{}", r.body);
    // Polar's default order: the product's benefits in its order (the key, then the note).
    assert_eq!(grants[0]["benefit_id"], shop.keys.as_str());
    assert_eq!(grants[1]["benefit_id"], shop.note.as_str());
    let key_grant = &grants[0];
    let ordered = |query: String| {
        let app = &app;
        let token = token.clone();
        async move {
            let r = app
                .get(&format!("{PORTAL}/benefit-grants/?{query}"), Some(&token))
                .await;
            r.expect(200);
            r.items()
                .iter()
                .map(|g| g["benefit_id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        ordered("sorting=-product_benefit".into()).await,
        [shop.note.clone(), shop.keys.clone()]
    );
    assert_eq!(
        ordered("sorting=product_benefit&sorting=-granted_at&sorting=organization".into()).await,
        [shop.keys.clone(), shop.note.clone()]
    );
    assert_eq!(ordered("type=custom".into()).await, vec![shop.note.clone()]);
    assert_eq!(ordered(format!("order_id={order}")).await.len(), 2);
    assert!(ordered(format!("subscription_id={}", uuid::Uuid::new_v4()))
        .await
        .is_empty());
    let r = app
        .get(
            &format!("{PORTAL}/benefit-grants/?sorting=bogus"),
            Some(&token),
        )
        .await;
    r.expect(422);
    assert!(!key_grant["properties"]["display_key"]
        .as_str()
        .unwrap()
        .is_empty());
    assert!(key_grant["properties"]["license_key_id"].is_string());
    assert_eq!(key_grant["benefit"]["organization"]["slug"], "portal-api");
    assert_eq!(key_grant["customer"]["email"], "ada@portal.example");
    let r = app
        .get(
            &format!(
                "{PORTAL}/benefit-grants/{}",
                key_grant["id"].as_str().unwrap()
            ),
            Some(&token),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["id"], key_grant["id"]);

    // Its license keys.
    let r = app
        .get(&format!("{PORTAL}/license-keys/"), Some(&token))
        .await;
    r.expect(200);
    assert_eq!(r.items().len(), 1);
}

#[actix_web::test]
async fn the_answer_is_the_same_for_strangers_and_bad_requests_are_refused() {
    let app = spawn_app().await;
    let shop = shop(&app, "portal-strangers").await;
    buy(&app, &shop.one_time, "ada@strangers.example").await;
    let other = shop_org(&app, "portal-other").await;

    // Not a customer, another organization's customer, an unknown organization: 202, and
    // nothing is sent.
    assert_eq!(
        request_code(&app, &shop.org, "eve@strangers.example").await,
        None
    );
    assert_eq!(
        request_code(&app, &other, "ada@strangers.example").await,
        None
    );
    let unknown = uuid::Uuid::new_v4().to_string();
    assert_eq!(
        request_code(&app, &unknown, "ada@strangers.example").await,
        None
    );

    // Malformed bodies.
    let r = app
        .post_json(
            REQUEST,
            None,
            &json!({"email": "not-an-address", "organization_id": shop.org}),
        )
        .await;
    r.expect(422);
    assert_eq!(r.body["detail"][0]["loc"], json!(["body", "email"]));
    let r = app
        .post_json(
            REQUEST,
            None,
            &json!({"email": "ada@strangers.example", "organization_id": "nope"}),
        )
        .await;
    r.expect(422);
    app.post_json(AUTHENTICATE, None, &json!({}))
        .await
        .expect(422);

    // Codes nobody was sent.
    for code in ["AAAAAA", "", "A", "ÀÀÀÀÀÀ", "polar_cst_x"] {
        invalid_code(&authenticate(&app, code).await);
    }
}

async fn del(app: &TestApp, path: &str, token: Option<&str>) -> crate::helpers::Reply {
    app.send(app.request(reqwest::Method::DELETE, path, token))
        .await
}

async fn shop_org(app: &TestApp, slug: &str) -> String {
    app.created_org_as(&app.token, slug, slug).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[actix_web::test]
async fn codes_expire_after_thirty_minutes_and_sessions_after_an_hour() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings::for_tests(dir.path());
    let (clock, shared) = ManualClock::shared(Utc::now());
    let app = spawn_app_with(dir, settings, shared).await;
    let shop = shop(&app, "portal-clock").await;
    buy(&app, &shop.one_time, "ada@clock.example").await;

    let late = request_code(&app, &shop.org, "ada@clock.example")
        .await
        .unwrap();
    clock.advance(Duration::minutes(29));
    let timely = request_code(&app, &shop.org, "ada@clock.example")
        .await
        .unwrap();
    clock.advance(Duration::minutes(1));
    // Both were live at once (a new code leaves the older one alone); the first is
    // now 30 minutes old.
    invalid_code(&authenticate(&app, &late).await);
    let r = authenticate(&app, &timely).await;
    r.expect(200);
    let token = r.body["token"].as_str().unwrap().to_string();
    let me = format!("{PORTAL}/customers/me");
    clock.advance(Duration::minutes(59));
    app.get(&me, Some(&token)).await.expect(200);
    clock.advance(Duration::minutes(2));
    assert_eq!(
        app.get(&me, Some(&token)).await.expect_error(401),
        "invalid_token"
    );

    // The purge removes the dead code at once.
    let report = tollgate::retention::purge(&app.state).await.unwrap();
    assert_eq!(report.customer_session_codes, 1, "{report:?}");
}

#[actix_web::test]
async fn wrong_tries_and_too_many_requests_are_stopped() {
    let app = spawn_app().await;
    let shop = shop(&app, "portal-limits").await;
    buy(&app, &shop.one_time, "ada@limits.example").await;

    // Five codes per address an hour; the sixth request is refused.
    for _ in 0..5 {
        assert!(request_code(&app, &shop.org, "ada@limits.example")
            .await
            .is_some());
    }
    let r = app
        .post_json(
            REQUEST,
            None,
            &json!({"email": "ada@limits.example", "organization_id": shop.org}),
        )
        .await;
    r.expect(429);
    assert!(r.header("retry-after").parse::<u64>().unwrap() > 0);
    assert_eq!(codes_sent_to(&app, "ada@limits.example").await.len(), 5);

    // Typing codes: twelve per client address in ten minutes (the good codes above
    // stay usable up to the limit).
    let codes = codes_sent_to(&app, "ada@limits.example").await;
    for i in 0..11 {
        invalid_code(&authenticate(&app, &format!("ZZZZ{i:02}")).await);
    }
    authenticate(&app, &codes[0]).await.expect(200);
    let r = authenticate(&app, &codes[1]).await;
    r.expect(429);
    assert!(r.header("retry-after").parse::<u64>().unwrap() > 0);
}

#[actix_web::test]
async fn subscriptions_are_canceled_and_resumed_by_their_customer_only() {
    let app = spawn_app().await;
    let shop = shop(&app, "portal-subs").await;
    hook(
        &app,
        &shop.org,
        &[
            "subscription.canceled",
            "subscription.uncanceled",
            "subscription.updated",
        ],
    )
    .await;
    let ada = buy(&app, &shop.monthly, "ada@subs.example").await;
    let bob = buy(&app, &shop.monthly, "bob@subs.example").await;
    let adas = subscription_of(&app, &ada.customer).await;
    let bobs = subscription_of(&app, &bob.customer).await;
    let token = sign_in(&app, &shop.org, "ada@subs.example").await;
    let bob_token = sign_in(&app, &shop.org, "bob@subs.example").await;

    let r = app
        .get(&format!("{PORTAL}/subscriptions/"), Some(&token))
        .await;
    r.expect(200);
    let items = r.items();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], adas.as_str());
    assert_eq!(items[0]["status"], "active");
    assert_eq!(items[0]["product"]["organization"]["slug"], "portal-subs");
    let r = app
        .get(
            &format!("{PORTAL}/subscriptions/?active=false"),
            Some(&token),
        )
        .await;
    assert!(r.items().is_empty());

    let path = format!("{PORTAL}/subscriptions/{adas}");
    // Cancel at the period's end, with the customer's reason.
    let r = app
        .patch_json(
            &path,
            Some(&token),
            &json!({"cancel_at_period_end": true, "cancellation_reason": "too_expensive",
                    "cancellation_comment": "Later, maybe"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["cancel_at_period_end"], true);
    assert_eq!(r.body["customer_cancellation_reason"], "too_expensive");
    assert_eq!(r.body["customer_cancellation_comment"], "Later, maybe");
    assert_eq!(r.body["ends_at"], r.body["current_period_end"]);
    assert_eq!(r.body["status"], "active");
    let r = app
        .patch_json(&path, Some(&token), &json!({"cancel_at_period_end": true}))
        .await;
    assert_eq!(r.expect_error(403), "AlreadyCanceledSubscription");
    del(&app, &path, Some(&token)).await.expect_error(403);
    wait_events(&app, "subscription.canceled", 1).await;

    // Resume.
    let r = app
        .patch_json(&path, Some(&token), &json!({"cancel_at_period_end": false}))
        .await;
    r.expect(200);
    assert_eq!(r.body["cancel_at_period_end"], false);
    assert!(r.body["ends_at"].is_null());
    assert!(r.body["customer_cancellation_reason"].is_null());
    let r = app
        .patch_json(&path, Some(&token), &json!({"cancel_at_period_end": false}))
        .await;
    assert_eq!(r.expect_error(400), "BadRequest");
    let uncanceled = wait_events(&app, "subscription.uncanceled", 1).await;
    assert_eq!(uncanceled[0]["data"]["id"], adas.as_str());

    // DELETE cancels at the period's end too; nothing asked changes nothing.
    let r = del(&app, &path, Some(&token)).await;
    r.expect(200);
    assert_eq!(r.body["cancel_at_period_end"], true);
    let r = app.patch_json(&path, Some(&token), &json!({})).await;
    r.expect(200);
    assert_eq!(r.body["cancel_at_period_end"], true);
    // Unknown fields are refused (Polar's `extra=forbid`).
    app.patch_json(&path, Some(&token), &json!({"revoke": true}))
        .await
        .expect(422);

    // Another customer's subscription: 404 for every method, and it is unchanged.
    let theirs = format!("{PORTAL}/subscriptions/{bobs}");
    assert_eq!(
        app.get(&theirs, Some(&token)).await.expect_error(404),
        "ResourceNotFound"
    );
    app.patch_json(
        &theirs,
        Some(&token),
        &json!({"cancel_at_period_end": true}),
    )
    .await
    .expect_error(404);
    del(&app, &theirs, Some(&token)).await.expect_error(404);
    let r = app.get(&theirs, Some(&bob_token)).await;
    r.expect(200);
    assert_eq!(r.body["cancel_at_period_end"], false);
    // And Ada's is not Bob's.
    app.get(&path, Some(&bob_token)).await.expect_error(404);
}

#[actix_web::test]
async fn activations_are_freed_by_their_customer_and_keys_rotated() {
    let app = spawn_app().await;
    let shop = shop(&app, "portal-keys").await;
    hook(
        &app,
        &shop.org,
        &["license_key.deactivated", "license_key.updated"],
    )
    .await;
    let token_opt = Some(app.token.as_str());
    // A benefit that lets customers manage activations (two), and one that does not.
    let benefit = |admin: bool| {
        json!({"type": "license_keys", "description": if admin { "Admin" } else { "Locked" },
               "organization_id": shop.org,
               "properties": {"prefix": "PK", "activations": {"limit": 2, "enable_customer_admin": admin},
                              "allow_customer_rotation": admin}})
    };
    let admin = app
        .post_json("/v1/benefits/", token_opt, &benefit(true))
        .await
        .id();
    let locked = app
        .post_json("/v1/benefits/", token_opt, &benefit(false))
        .await
        .id();
    let product = app
        .post_json(
            "/v1/products/",
            token_opt,
            &json!({"name": "Seats", "organization_id": shop.org,
                    "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 500}]}),
        )
        .await
        .id();
    app.post_json(
        &format!("/v1/products/{product}/benefits"),
        token_opt,
        &json!({"benefits": [admin, locked]}),
    )
    .await
    .expect(200);
    let ada = buy(&app, &product, "ada@keys.example").await;
    let bob = buy(&app, &product, "bob@keys.example").await;
    let adas = key_of(&app, &ada.customer, &admin).await.remove(0);
    let adas_locked = key_of(&app, &ada.customer, &locked).await.remove(0);
    let bobs = key_of(&app, &bob.customer, &admin).await.remove(0);
    let key = adas["key"].as_str().unwrap().to_string();
    let activate = |key: String, label: &'static str| {
        let org = shop.org.clone();
        let app = &app;
        async move {
            app.post_json(
                "/v1/customer-portal/license-keys/activate",
                None,
                &json!({"key": key, "organization_id": org, "label": label}),
            )
            .await
        }
    };
    let first = activate(key.clone(), "laptop").await;
    first.expect(200);
    activate(key.clone(), "desktop").await.expect(200);
    activate(key.clone(), "new laptop").await.expect_error(403);
    let bobs_activation = activate(bobs["key"].as_str().unwrap().to_string(), "bob").await;
    bobs_activation.expect(200);
    let locked_activation =
        activate(adas_locked["key"].as_str().unwrap().to_string(), "locked").await;
    locked_activation.expect(200);

    let token = sign_in(&app, &shop.org, "ada@keys.example").await;
    let key_id = adas["id"].as_str().unwrap();
    let r = app
        .get(&format!("{PORTAL}/license-keys/{key_id}"), Some(&token))
        .await;
    r.expect(200);
    assert_eq!(r.body["activations"].as_array().unwrap().len(), 2);

    let remove = |key: &str, activation: &str| {
        format!("{PORTAL}/license-keys/{key}/activations/{activation}")
    };
    let laptop = first.body["id"].as_str().unwrap();
    // Bob cannot remove Ada's activation, nor Ada Bob's (404, nothing changed).
    let bob_token = sign_in(&app, &shop.org, "bob@keys.example").await;
    del(&app, &remove(key_id, laptop), Some(&bob_token))
        .await
        .expect_error(404);
    let bobs_id = bobs["id"].as_str().unwrap();
    let bobs_act = bobs_activation.body["id"].as_str().unwrap();
    del(&app, &remove(bobs_id, bobs_act), Some(&token))
        .await
        .expect_error(404);
    // Ada's own key with Bob's activation id: 404.
    del(&app, &remove(key_id, bobs_act), Some(&token))
        .await
        .expect_error(404);
    // A benefit without customer admin: 403.
    let r = del(
        &app,
        &remove(
            adas_locked["id"].as_str().unwrap(),
            locked_activation.body["id"].as_str().unwrap(),
        ),
        Some(&token),
    )
    .await;
    assert_eq!(r.expect_error(403), "NotPermitted");
    // A seller's token is not a customer session.
    del(&app, &remove(key_id, laptop), Some(&app.token))
        .await
        .expect_error(401);

    // Ada frees the laptop's slot: the new laptop activates, the old activation no
    // longer validates.
    let r = del(&app, &remove(key_id, laptop), Some(&token)).await;
    r.expect(204);
    del(&app, &remove(key_id, laptop), Some(&token))
        .await
        .expect_error(404);
    activate(key.clone(), "new laptop").await.expect(200);
    let r = app
        .post_json(
            "/v1/customer-portal/license-keys/validate",
            None,
            &json!({"key": key, "organization_id": shop.org, "activation_id": laptop}),
        )
        .await;
    r.expect_error(404);
    let deactivated = wait_events(&app, "license_key.deactivated", 1).await;
    assert_eq!(deactivated[0]["data"]["id"], laptop);
    assert_eq!(deactivated[0]["data"]["license_key_id"], key_id);
    // Bob's activation is still there.
    let r = app
        .get(
            &format!("{PORTAL}/license-keys/{bobs_id}"),
            Some(&bob_token),
        )
        .await;
    assert_eq!(r.body["activations"].as_array().unwrap().len(), 1);

    // Rotation: the old key is refused at once, the new one validates.
    let r = app
        .post_json(
            &format!("{PORTAL}/license-keys/{key_id}/rotate"),
            Some(&token),
            &json!({}),
        )
        .await;
    r.expect(200);
    let new_key = r.body["key"].as_str().unwrap().to_string();
    assert_ne!(new_key, key);
    assert!(new_key.starts_with("PK-"), "{new_key}");
    let validate = |key: &str| json!({"key": key, "organization_id": shop.org});
    app.post_json(
        "/v1/customer-portal/license-keys/validate",
        None,
        &validate(&key),
    )
    .await
    .expect_error(404);
    app.post_json(
        "/v1/customer-portal/license-keys/validate",
        None,
        &validate(&new_key),
    )
    .await
    .expect(200);
    let updated = wait_events(&app, "license_key.updated", 1).await;
    assert!(updated.iter().any(|e| e["data"]["id"] == key_id));
    // The locked benefit lets no customer rotate, and an update of its properties that
    // does not name the setting keeps it.
    let r = app
        .patch_json(
            &format!("/v1/benefits/{locked}"),
            token_opt,
            &json!({"type": "license_keys", "properties": {"prefix": "LK",
                    "activations": {"limit": 2, "enable_customer_admin": false}}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["properties"]["allow_customer_rotation"], false);
    let locked_id = adas_locked["id"].as_str().unwrap();
    let r = app
        .post_json(
            &format!("{PORTAL}/license-keys/{locked_id}/rotate"),
            Some(&token),
            &json!({}),
        )
        .await;
    assert_eq!(r.expect_error(403), "NotPermitted");
    // The seller still can.
    app.post_json(
        &format!("/v1/license-keys/{locked_id}/rotate"),
        token_opt,
        &json!({}),
    )
    .await
    .expect(200);
    // Bob cannot rotate Ada's key.
    app.post_json(
        &format!("{PORTAL}/license-keys/{key_id}/rotate"),
        Some(&bob_token),
        &json!({}),
    )
    .await
    .expect_error(404);
}

#[actix_web::test]
async fn sessions_reach_their_own_customer_and_only_the_portal() {
    let app = spawn_app().await;
    let shop = shop(&app, "portal-tenancy").await;
    let ada = buy(&app, &shop.one_time, "ada@tenancy.example").await;
    let bob = buy(&app, &shop.one_time, "bob@tenancy.example").await;
    let bobs_order = order_of(&app, &bob.checkout).await;
    let token = sign_in(&app, &shop.org, "ada@tenancy.example").await;
    let bob_token = sign_in(&app, &shop.org, "bob@tenancy.example").await;
    let bobs_grant = app
        .get(&format!("{PORTAL}/benefit-grants/"), Some(&bob_token))
        .await
        .items()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();

    for path in [
        format!("{PORTAL}/orders/{bobs_order}"),
        format!("{PORTAL}/orders/{bobs_order}/receipt"),
        format!("{PORTAL}/benefit-grants/{bobs_grant}"),
        format!("{PORTAL}/subscriptions/{}", uuid::Uuid::new_v4()),
    ] {
        assert_eq!(
            app.get(&path, Some(&token)).await.expect_error(404),
            "ResourceNotFound",
            "{path}"
        );
    }
    let r = app.get(&format!("{PORTAL}/orders/"), Some(&token)).await;
    assert!(r
        .items()
        .iter()
        .all(|o| o["customer_id"] == ada.customer.as_str()));
    assert_eq!(r.items().len(), 1);
    // Filters cannot reach further: an unknown parameter is ignored, as FastAPI does.
    let r = app
        .get(
            &format!("{PORTAL}/orders/?customer_id={}", bob.customer),
            Some(&token),
        )
        .await;
    r.expect(200);
    assert_eq!(r.items().len(), 1);
    assert_eq!(r.items()[0]["customer_id"], ada.customer.as_str());

    // A customer session on the seller's API: 401; a seller's token on the portal: 401.
    for path in [
        "/v1/orders/",
        "/v1/customers/",
        "/v1/subscriptions/",
        "/v1/license-keys/",
    ] {
        assert_eq!(
            app.get(path, Some(&token)).await.expect_error(401),
            "invalid_token",
            "{path}"
        );
    }
    for path in [
        "orders/",
        "customers/me",
        "subscriptions/",
        "benefit-grants/",
        "customer-session/user",
    ] {
        let path = format!("{PORTAL}/{path}");
        assert_eq!(
            app.get(&path, Some(&app.token)).await.expect_error(401),
            "invalid_token",
            "{path}"
        );
        app.get(&path, None).await.expect_error(401);
    }

    // A deleted customer's session ends.
    app.send(app.request(
        reqwest::Method::DELETE,
        &format!("/v1/customers/{}", ada.customer),
        Some(&app.token),
    ))
    .await
    .expect(204);
    app.get(&format!("{PORTAL}/customers/me"), Some(&token))
        .await
        .expect_error(401);
    // And it gets no code any more.
    assert_eq!(codes_sent_to(&app, "ada@tenancy.example").await.len(), 1);
    request_code(&app, &shop.org, "ada@tenancy.example").await;
    assert_eq!(codes_sent_to(&app, "ada@tenancy.example").await.len(), 1);
}
