//! Plan changes and billing details by the buyer, over HTTP with the test processor on a
//! manual clock (issue 47, items 4 and 5): Polar's portal subscription update with
//! `product_id` (charged now and at the renewal what the preview said), its refusals
//! (the organization's setting off, archived, one-time and foreign products, mixed
//! shapes, another customer's subscription), `PATCH customers/me` with Polar's 422s, the
//! e-mail change confirmed by a code sent to the new address (wrong, expired and used
//! codes, a taken address, the old session refused after), and the portal's plan and
//! account pages posting their forms.

use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use reqwest::Method;
use serde_json::{json, Value};
use tollgate_actors::domain::mail::{MailKind, MailMessage};
use tollgate_actors::ManualClock;

use crate::checkouts::store_values;
use crate::helpers::{spawn_app_with, Reply, TestApp};
use crate::oauth::Browser;
use crate::portal_pages::{roomy, status};

const ME: &str = "/v1/customer-portal/customers/me";
const EMAIL: &str = "/v1/customer-portal/customers/me/email-update";

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap()
}

struct App {
    app: TestApp,
    clock: Arc<ManualClock>,
}

impl std::ops::Deref for App {
    type Target = TestApp;
    fn deref(&self) -> &TestApp {
        &self.app
    }
}

/// The server on a manual clock at [`t0`]; `roomy`: sign-in limits the test does not
/// reach.
async fn app(roomy_limits: bool) -> App {
    let dir = tempfile::tempdir().unwrap();
    let settings = if roomy_limits {
        roomy(dir.path())
    } else {
        tollgate::config::Settings::for_tests(dir.path())
    };
    let (clock, shared) = ManualClock::shared(t0());
    App {
        app: spawn_app_with(dir, settings, shared).await,
        clock,
    }
}

fn time(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("not a time: {v}")))
        .unwrap()
        .with_timezone(&Utc)
}

/// Basic ($10.00 a month), Pro ($30.00 a month), a one-time product and an archived
/// monthly one; Ada subscribed to Basic at t0 (with `tok_visa`).
struct Shop {
    org: String,
    slug: String,
    basic: String,
    pro: String,
    one_time: String,
    archived: String,
    ada: String,
    sub: String,
}

async fn product(app: &TestApp, org: &str, name: &str, price: Value) -> String {
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": name, "organization_id": org, "prices": [price]}),
        )
        .await;
    r.expect(201);
    r.id()
}

fn monthly(amount: i64) -> Value {
    json!({"type": "recurring", "amount_type": "fixed", "price_amount": amount,
           "price_currency": "usd", "recurring_interval": "month"})
}

/// A checkout of `product` paid by `email`: the customer's id, once it succeeded.
async fn buy(app: &TestApp, product: &str, email: &str) -> String {
    crate::benefit_grants::buy(app, product, email)
        .await
        .customer
}

async fn shop(app: &TestApp, slug: &str) -> Shop {
    let org = app.created_org_as(&app.token, slug, slug).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let basic = product(app, &org, "Basic", monthly(1000)).await;
    let pro = product(app, &org, "Pro", monthly(3000)).await;
    let one_time = product(
        app,
        &org,
        "Once",
        json!({"type": "one_time", "amount_type": "fixed", "price_amount": 500,
               "price_currency": "usd"}),
    )
    .await;
    let archived = product(app, &org, "Old", monthly(2000)).await;
    app.patch_json(
        &format!("/v1/products/{archived}"),
        Some(&app.token),
        &json!({"is_archived": true}),
    )
    .await
    .expect(200);
    let ada = buy(app, &basic, &format!("ada@{slug}.example")).await;
    let sub = crate::benefit_grants::subscription_of(app, &ada).await;
    Shop {
        org,
        slug: slug.to_string(),
        basic,
        pro,
        one_time,
        archived,
        ada,
        sub,
    }
}

/// A customer session the seller opens for `customer`.
async fn session(app: &TestApp, customer: &str) -> String {
    let r = app
        .post_json(
            "/v1/customer-sessions/",
            Some(&app.token),
            &json!({ "customer_id": customer }),
        )
        .await;
    r.expect(201);
    r.body["token"].as_str().unwrap().to_string()
}

async fn set_org(app: &TestApp, org: &str, body: Value) {
    app.patch_json(&format!("/v1/organizations/{org}"), Some(&app.token), &body)
        .await
        .expect(200);
}

fn proration(behavior: &str) -> Value {
    json!({"subscription_settings": {"allow_multiple_subscriptions": false,
        "allow_customer_updates": true, "proration_behavior": behavior}})
}

fn portal_settings(update_plan: bool) -> Value {
    json!({"customer_portal_settings": {"usage": {"show": false},
        "subscription": {"update_seats": false, "update_plan": update_plan}}})
}

async fn seller_subscription(app: &TestApp, id: &str) -> Value {
    let r = app
        .get(&format!("/v1/subscriptions/{id}"), Some(&app.token))
        .await;
    r.expect(200);
    r.body
}

/// The customer's orders, oldest first.
async fn orders(app: &TestApp, customer: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/orders/?customer_id={customer}&sorting=created_at"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    r.items()
}

async fn sweep(app: &TestApp) -> tollgate::app::subscription::SweepReport {
    tollgate::app::subscription::sweep_subscriptions(&app.state)
        .await
        .unwrap()
}

async fn update(app: &TestApp, token: &str, sub: &str, body: Value) -> Reply {
    app.patch_json(
        &format!("/v1/customer-portal/subscriptions/{sub}"),
        Some(token),
        &body,
    )
    .await
}

async fn preview(app: &TestApp, token: &str, sub: &str, product: &str) -> Reply {
    app.post_json(
        &format!("/v1/customer-portal/subscriptions/{sub}/change-preview"),
        Some(token),
        &json!({ "product_id": product }),
    )
    .await
}

// ---------------------------------------------------------------------------------------
// Plan changes

#[actix_web::test]
async fn a_buyer_switches_plans_and_pays_what_the_preview_said_now_and_at_renewal() {
    let app = app(false).await;
    let shop = shop(&app, "plan-switch").await;
    let end = time(&seller_subscription(&app, &shop.sub).await["current_period_end"]);

    // Up to Pro, the difference charged now (sessions last an hour: one per visit).
    set_org(&app, &shop.org, proration("invoice")).await;
    app.clock.set(t0() + Duration::days(10));
    let token = session(&app, &shop.ada).await;
    let p = preview(&app, &token, &shop.sub, &shop.pro).await;
    p.expect(200);
    let due = p.body["due_amount"].as_i64().unwrap();
    assert!(due > 0, "{}", p.body);
    assert_eq!(p.body["next_amount"], 3000, "{}", p.body);
    assert_eq!(
        seller_subscription(&app, &shop.sub).await["product_id"],
        shop.basic.as_str(),
        "a preview writes nothing"
    );
    let r = update(&app, &token, &shop.sub, json!({"product_id": shop.pro})).await;
    r.expect(200);
    assert_eq!(r.body["product_id"], shop.pro.as_str());
    assert_eq!(r.body["amount"], 3000);
    assert_eq!(r.body["product"]["name"], "Pro");
    assert_eq!(r.body["product"]["organization"]["slug"], "plan-switch");
    assert!(r.body.get("customer").is_none(), "a CustomerSubscription");
    let changes: Vec<Value> = orders(&app, &shop.ada)
        .await
        .into_iter()
        .filter(|o| o["billing_reason"] == "subscription_update")
        .collect();
    assert_eq!(changes.len(), 1, "charged once");
    assert_eq!(changes[0]["total_amount"], due);

    // Back to Basic on `prorate`: nothing now, the credit taken off the renewal.
    set_org(&app, &shop.org, proration("prorate")).await;
    app.clock.set(t0() + Duration::days(20));
    let token = session(&app, &shop.ada).await;
    let p = preview(&app, &token, &shop.sub, &shop.basic).await;
    p.expect(200);
    assert_eq!(p.body["due_amount"], 0, "{}", p.body);
    let next = p.body["next_amount"].as_i64().unwrap();
    assert!((0..1000).contains(&next), "a credit off $10.00: {}", p.body);
    update(&app, &token, &shop.sub, json!({"product_id": shop.basic}))
        .await
        .expect(200);
    app.clock.set(end + Duration::minutes(1));
    assert_eq!(sweep(&app).await.renewed, 1);
    let renewals: Vec<Value> = orders(&app, &shop.ada)
        .await
        .into_iter()
        .filter(|o| o["billing_reason"] == "subscription_cycle")
        .collect();
    assert_eq!(renewals.len(), 1);
    assert_eq!(renewals[0]["subtotal_amount"], next, "{}", renewals[0]);
}

#[actix_web::test]
async fn plan_changes_are_refused_as_polar_refuses_them_and_change_nothing() {
    let app = app(false).await;
    let shop = shop(&app, "plan-refusals").await;
    let token = session(&app, &shop.ada).await;
    let patch = |body: Value| {
        let (app, token, sub) = (&app, token.clone(), shop.sub.clone());
        async move { update(app, &token, &sub, body).await }
    };

    // The organization's setting off: 403 for the change and its preview.
    set_org(&app, &shop.org, portal_settings(false)).await;
    let r = patch(json!({"product_id": shop.pro})).await;
    assert_eq!(r.expect_error(403), "UpdateSubscriptionPlanNotAllowed");
    assert_eq!(
        r.body["detail"],
        "Updating subscription plan is not allowed."
    );
    let r = preview(&app, &token, &shop.sub, &shop.pro).await;
    assert_eq!(r.expect_error(403), "UpdateSubscriptionPlanNotAllowed");
    // Cancelling is still the buyer's.
    let r = patch(json!({"cancel_at_period_end": true})).await;
    r.expect(200);
    assert_eq!(r.body["cancel_at_period_end"], true);
    patch(json!({"cancel_at_period_end": false}))
        .await
        .expect(200);
    set_org(&app, &shop.org, portal_settings(true)).await;

    // A subscription canceled at the period's end keeps its plan.
    patch(json!({"cancel_at_period_end": true}))
        .await
        .expect(200);
    let r = patch(json!({"product_id": shop.pro})).await;
    assert_eq!(r.expect_error(403), "AlreadyCanceledSubscription");
    let mut b = browser(&app, &shop.slug, &shop.ada).await;
    let page = b
        .get(&format!(
            "/portal/{}/subscriptions/{}/plan",
            shop.slug, shop.sub
        ))
        .await;
    status(&page, 200);
    assert!(page.body.contains("id=\"error\""), "{}", page.body);
    assert!(!page.body.contains(&format!("id=\"plan-{}\"", shop.pro)));
    patch(json!({"cancel_at_period_end": false}))
        .await
        .expect(200);

    // Products it cannot move to: Polar's messages at body.product_id.
    let other_org = app.created_org_as(&app.token, "Other", "plan-other").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let foreign = product(&app, &other_org, "Theirs", monthly(3000)).await;
    let unknown = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e".to_string();
    for (product, msg) in [
        (&shop.archived, "Product is archived."),
        (&shop.one_time, "Product is not recurring."),
        (&foreign, "Product does not exist."),
        (&unknown, "Product does not exist."),
    ] {
        let r = patch(json!({ "product_id": product })).await;
        let e = r.expect_invalid_at(json!(["body", "product_id"]));
        assert_eq!(e["msg"], msg, "{}", r.body);
        let r = preview(&app, &token, &shop.sub, product).await;
        assert_eq!(
            r.expect_invalid_at(json!(["body", "product_id"]))["msg"],
            msg
        );
    }
    // Tollgate has no private products: a seller cannot make one.
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": "Hidden", "organization_id": shop.org, "visibility": "private",
                    "prices": [monthly(100)]}),
        )
        .await;
    r.expect(422);

    // Two shapes at once, or keys of none: 422, the extra key named.
    let r = patch(json!({"product_id": shop.pro, "cancel_at_period_end": true})).await;
    let e = r.expect_invalid_at(json!(["body", "cancel_at_period_end"]));
    assert_eq!(e["type"], "extra_forbidden");
    let r = patch(json!({"cancel_at_period_end": true, "seats": 2})).await;
    r.expect_invalid_at(json!(["body", "seats"]));
    let r = app
        .post_json(
            &format!(
                "/v1/customer-portal/subscriptions/{}/change-preview",
                shop.sub
            ),
            Some(&token),
            &json!({"product_id": shop.pro, "proration_behavior": "invoice"}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "proration_behavior"]));
    // `pending_update: null`: there is never one; the subscription as it is.
    patch(json!({"pending_update": null})).await.expect(200);

    // Another customer's subscription: 404, nothing changed.
    let bob = buy(&app, &shop.basic, "bob@plan-refusals.example").await;
    let bob_token = session(&app, &bob).await;
    let r = update(&app, &bob_token, &shop.sub, json!({"product_id": shop.pro})).await;
    r.expect_error(404);
    preview(&app, &bob_token, &shop.sub, &shop.pro)
        .await
        .expect_error(404);
    // A seller's token is not a customer session.
    update(&app, &app.token, &shop.sub, json!({"product_id": shop.pro}))
        .await
        .expect(401);
    let s = seller_subscription(&app, &shop.sub).await;
    assert_eq!(s["product_id"], shop.basic.as_str());
    assert_eq!(s["cancel_at_period_end"], false);
    let changes = orders(&app, &shop.ada)
        .await
        .into_iter()
        .filter(|o| o["billing_reason"] == "subscription_update")
        .count();
    assert_eq!(changes, 0);
}

// ---------------------------------------------------------------------------------------
// Billing details

async fn patch_me(app: &TestApp, token: &str, body: Value) -> Reply {
    app.patch_json(ME, Some(token), &body).await
}

#[actix_web::test]
async fn a_buyer_sets_its_billing_details_with_polar_s_422s() {
    let app = app(false).await;
    let shop = shop(&app, "billing-me").await;
    let token = session(&app, &shop.ada).await;

    let r = patch_me(
        &app,
        &token,
        json!({"billing_name": "ACME SAS",
               "billing_address": {"country": "FR", "line1": "1 rue de Rivoli",
                                   "postal_code": "75001", "city": "Paris"},
               "tax_id": "FR61954506077"}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["billing_name"], "ACME SAS");
    assert_eq!(r.body["billing_address"]["city"], "Paris");
    assert_eq!(r.body["billing_address"]["country"], "FR");
    assert_eq!(r.body["tax_id"], json!(["FR61954506077", "eu_vat"]));
    assert_eq!(r.body["oauth_accounts"], json!({}));
    let me = app.get(ME, Some(&token)).await;
    assert_eq!(me.body["billing_name"], "ACME SAS");
    // The seller sees the same customer.
    let seller = app
        .get(&format!("/v1/customers/{}", shop.ada), Some(&app.token))
        .await;
    assert_eq!(seller.body["tax_id"], json!(["FR61954506077", "eu_vat"]));

    // Each field alone; a blank name leaves it, a null tax id clears it.
    let r = patch_me(&app, &token, json!({"billing_name": "", "tax_id": null})).await;
    r.expect(200);
    assert_eq!(r.body["billing_name"], "ACME SAS");
    assert_eq!(r.body["tax_id"], Value::Null);
    let r = patch_me(
        &app,
        &token,
        json!({"billing_address": {"country": "us", "state": "NY"}}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["billing_address"]["state"], "US-NY");

    // Polar's 422s.
    let r = patch_me(&app, &token, json!({"tax_id": "FR123"})).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "tax_id"]))["msg"],
        "Invalid tax ID."
    );
    let r = patch_me(&app, &token, json!({"billing_address": null})).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "billing_address"]))["msg"],
        "Customer billing address cannot be reset to null once set."
    );
    let r = patch_me(&app, &token, json!({"default_payment_method_id": null})).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "default_payment_method_id"]))["msg"],
        "Default payment method cannot be reset to null."
    );
    let r = patch_me(&app, &token, json!({"billing_address": {"city": "Paris"}})).await;
    r.expect_invalid_at(json!(["body", "billing_address", "country"]));

    // The default card: one of the customer's only.
    let bob = buy(&app, &shop.basic, "bob@billing-me.example").await;
    let bob_token = session(&app, &bob).await;
    let methods = "/v1/customer-portal/customers/me/payment-methods";
    let bobs = app.get(methods, Some(&bob_token)).await.items()[0]["id"].clone();
    let r = patch_me(&app, &token, json!({"default_payment_method_id": bobs})).await;
    let e = r.expect_invalid_at(json!(["body", "default_payment_method_id"]));
    assert_eq!(e["msg"], "Payment method not found.");
    assert_eq!(e["type"], "invalid");
    let adas = app.get(methods, Some(&token)).await.items()[0]["id"].clone();
    let r = patch_me(&app, &token, json!({"default_payment_method_id": adas})).await;
    r.expect(200);
    assert_eq!(r.body["default_payment_method_id"], adas);

    // A seller's token is not a customer session.
    patch_me(&app, &app.token, json!({"billing_name": "X"}))
        .await
        .expect(401);
}

/// The messages of `kind` to `to`, oldest first.
async fn mails(app: &TestApp, kind: MailKind, to: &str) -> Vec<MailMessage> {
    let mut all: Vec<MailMessage> = store_values::<MailMessage>(&app.state.store)
        .await
        .into_iter()
        .filter(|m| m.kind == kind && m.to.eq_ignore_ascii_case(to))
        .collect();
    all.sort_by_key(|m| m.created_at);
    all
}

/// The code of the last e-mail change code sent to `to`.
async fn code_for(app: &TestApp, to: &str) -> String {
    let sent = mails(app, MailKind::EmailChangeCode, to).await;
    let text = &sent
        .last()
        .unwrap_or_else(|| panic!("no code to {to}"))
        .text;
    text.lines()
        .map(str::trim)
        .find(|l| {
            l.len() == 8
                && l.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        })
        .unwrap_or_else(|| panic!("no code in: {text}"))
        .to_string()
}

async fn request_change(app: &TestApp, token: &str, email: &str) -> Reply {
    app.post_json(
        &format!("{EMAIL}/request"),
        Some(token),
        &json!({ "email": email }),
    )
    .await
}

async fn verify(app: &TestApp, code: &str) -> Reply {
    app.post_json(&format!("{EMAIL}/verify"), None, &json!({ "token": code }))
        .await
}

#[actix_web::test]
async fn the_email_changes_with_a_code_sent_to_the_new_address_only() {
    let app = app(false).await;
    let shop = shop(&app, "email-change").await;
    let old = "ada@email-change.example";
    let token = session(&app, &shop.ada).await;

    let r = request_change(&app, &token, "Ada.New@Example.com").await;
    r.expect(202);
    assert_eq!(r.body, Value::Null, "the JSON null");
    let code = code_for(&app, "ada.new@example.com").await;
    assert!(mails(&app, MailKind::EmailChangeCode, old).await.is_empty());
    // Nothing changed yet.
    assert_eq!(app.get(ME, Some(&token)).await.body["email"], old);

    let check = |code: String| {
        let app = &app;
        async move { app.get(&format!("{EMAIL}/check?token={code}"), None).await }
    };
    check(code.clone()).await.expect(204);
    assert_eq!(
        check("WRONG123".into()).await.expect_error(401),
        "InvalidCustomerEmailUpdate"
    );
    app.get(&format!("{EMAIL}/check"), None).await.expect(422);
    let r = verify(&app, "WRONG123").await;
    assert_eq!(r.expect_error(401), "InvalidCustomerEmailUpdate");
    assert_eq!(
        r.body["detail"],
        "This email update request is invalid or has expired."
    );

    let r = verify(&app, &code).await;
    r.expect(200);
    let new_token = r.body["token"].as_str().unwrap().to_string();
    assert!(new_token.starts_with("polar_cst_"));
    let me = app.get(ME, Some(&new_token)).await;
    me.expect(200);
    assert_eq!(me.body["email"], "ada.new@example.com");
    assert_eq!(me.body["email_verified"], true);
    // The old session ends; the old address is told; the code is spent.
    app.get(ME, Some(&token)).await.expect(401);
    let told = mails(&app, MailKind::EmailChanged, old).await;
    assert_eq!(told.len(), 1);
    assert!(told[0].text.contains("ada.new@example.com"));
    assert_eq!(
        verify(&app, &code).await.expect_error(401),
        "InvalidCustomerEmailUpdate"
    );
    check(code).await.expect(401);

    // Its own address again: 422; a malformed one: 422.
    let r = request_change(&app, &new_token, "ADA.NEW@example.com").await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "email"]))["msg"],
        "New email is the same as your current email."
    );
    request_change(&app, &new_token, "not an address")
        .await
        .expect_invalid_at(json!(["body", "email"]));

    // An expired code.
    request_change(&app, &new_token, "late@example.com")
        .await
        .expect(202);
    let late = code_for(&app, "late@example.com").await;
    app.clock.advance(Duration::minutes(31));
    assert_eq!(
        verify(&app, &late).await.expect_error(401),
        "InvalidCustomerEmailUpdate"
    );

    // An address another customer took meanwhile: 422, nothing changed.
    let new_token = session(&app, &shop.ada).await;
    request_change(&app, &new_token, "bob@email-change.example")
        .await
        .expect(202);
    let taken = code_for(&app, "bob@email-change.example").await;
    buy(&app, &shop.basic, "bob@email-change.example").await;
    let r = verify(&app, &taken).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "token"]))["msg"],
        "This email address is already in use."
    );
    assert_eq!(
        app.get(ME, Some(&new_token)).await.body["email"],
        "ada.new@example.com"
    );
}

#[actix_web::test]
async fn email_codes_are_rate_limited_like_sign_in_codes() {
    let app = app(false).await;
    let shop = shop(&app, "email-limits").await;
    let token = session(&app, &shop.ada).await;
    for _ in 0..5 {
        request_change(&app, &token, "flood@example.com")
            .await
            .expect(202);
    }
    let r = request_change(&app, &token, "flood@example.com").await;
    r.expect(429);
    assert!(!r.header("retry-after").is_empty());
    // Five codes went out, the sixth was refused.
    assert_eq!(
        mails(&app, MailKind::EmailChangeCode, "flood@example.com")
            .await
            .len(),
        5
    );
    let req = app.request(Method::POST, &format!("{EMAIL}/verify"), None);
    let mut last = 0;
    for _ in 0..13 {
        last = app
            .send(req.try_clone().unwrap().json(&json!({"token": "WRONG123"})))
            .await
            .status
            .as_u16();
    }
    assert_eq!(last, 429, "verify shares the sign-in's per-client limit");
}

// ---------------------------------------------------------------------------------------
// Pages

/// A browser signed in to `slug`'s portal as `email`, with the seller's link.
async fn browser(app: &TestApp, slug: &str, customer: &str) -> Browser {
    let r = app
        .post_json(
            "/v1/customer-sessions/",
            Some(&app.token),
            &json!({ "customer_id": customer }),
        )
        .await;
    r.expect(201);
    let url = r.body["customer_portal_url"].as_str().unwrap().to_string();
    let path = url.split_once("/portal/").map(|(_, p)| p).unwrap();
    let mut b = Browser::new(app);
    let page = b.get(&format!("/portal/{path}")).await;
    status(&page, 303);
    assert_eq!(page.location, format!("/portal/{slug}/overview"));
    b
}

#[actix_web::test]
async fn the_plan_page_shows_the_preview_and_its_form_changes_the_plan() {
    let app = app(true).await;
    let shop = shop(&app, "plan-page").await;
    app.clock.set(t0() + Duration::days(10));
    let mut b = browser(&app, &shop.slug, &shop.ada).await;
    let overview = b.get(&format!("/portal/{}/overview", shop.slug)).await;
    status(&overview, 200);
    let plan = format!("/portal/{}/subscriptions/{}/plan", shop.slug, shop.sub);
    assert!(overview.body.contains(&format!("href=\"{plan}\"")));
    assert!(overview.body.contains("id=\"account-link\""));

    let token = session(&app, &shop.ada).await;
    let p = preview(&app, &token, &shop.sub, &shop.pro).await;
    let page = b.get(&plan).await;
    status(&page, 200);
    assert!(page.body.contains(&format!("id=\"plan-{}\"", shop.pro)));
    assert!(!page
        .body
        .contains(&format!("id=\"plan-{}\"", shop.archived)));
    assert!(!page
        .body
        .contains(&format!("id=\"plan-{}\"", shop.one_time)));
    let now = format!("${:.2}", p.body["due_amount"].as_f64().unwrap() / 100.0);
    let renewal = format!("${:.2}", p.body["next_amount"].as_f64().unwrap() / 100.0);
    assert!(
        page.body.contains(&format!("<dd data-now>{now}</dd>")),
        "{now}: {}",
        page.body
    );
    assert!(
        page.body
            .contains(&format!("<dd data-renewal>{renewal} on")),
        "{renewal}"
    );

    // A forged form changes nothing.
    let forged = b
        .post(
            &plan,
            &[
                ("csrf_token", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
                ("product_id", &shop.pro),
            ],
        )
        .await;
    status(&forged, 403);
    let posted = b
        .post(
            &plan,
            &[("csrf_token", &page.csrf()), ("product_id", &shop.archived)],
        )
        .await;
    status(&posted, 422);
    assert!(posted.body.contains("Product is archived."));
    let posted = b
        .post(
            &plan,
            &[("csrf_token", &page.csrf()), ("product_id", &shop.pro)],
        )
        .await;
    status(&posted, 303);
    assert_eq!(posted.location, format!("{plan}?done=changed"));
    let landed = b.get(&posted.location).await;
    status(&landed, 200);
    assert!(landed.body.contains("Your plan is now Pro."));
    assert_eq!(
        seller_subscription(&app, &shop.sub).await["product_id"],
        shop.pro.as_str()
    );

    // The setting off: the page is not there (nor its link), its form refused.
    set_org(&app, &shop.org, portal_settings(false)).await;
    status(&b.get(&plan).await, 404);
    let overview = b.get(&format!("/portal/{}/overview", shop.slug)).await;
    assert!(!overview.body.contains(&format!("href=\"{plan}\"")));
    let refused = b
        .post(
            &plan,
            &[("csrf_token", &page.csrf()), ("product_id", &shop.basic)],
        )
        .await;
    status(&refused, 403);
    assert_eq!(
        seller_subscription(&app, &shop.sub).await["product_id"],
        shop.pro.as_str()
    );

    // Another customer's subscription: 404 whatever the setting.
    let bob = buy(&app, &shop.basic, "bob@plan-page.example").await;
    let mut bob_b = browser(&app, &shop.slug, &bob).await;
    set_org(&app, &shop.org, portal_settings(true)).await;
    status(&bob_b.get(&plan).await, 404);
}

#[actix_web::test]
async fn the_account_page_saves_details_and_changes_the_email_by_code() {
    let app = app(true).await;
    let shop = shop(&app, "account-page").await;
    let mut b = browser(&app, &shop.slug, &shop.ada).await;
    let account = format!("/portal/{}/account", shop.slug);
    let page = b.get(&account).await;
    status(&page, 200);
    let csrf = page.csrf();

    let bad = b
        .post(
            &account,
            &[
                ("csrf_token", &csrf),
                ("action", "details"),
                ("country", "FR"),
                ("tax_id", "FR123"),
            ],
        )
        .await;
    status(&bad, 422);
    assert!(bad.body.contains("Invalid tax ID."));
    let saved = b
        .post(
            &account,
            &[
                ("csrf_token", &csrf),
                ("action", "details"),
                ("billing_name", "ACME SAS"),
                ("line1", "1 rue de Rivoli"),
                ("postal_code", "75001"),
                ("city", "Paris"),
                ("country", "fr"),
                ("tax_id", "FR61954506077"),
            ],
        )
        .await;
    status(&saved, 303);
    assert_eq!(saved.location, format!("{account}?done=details"));
    let landed = b.get(&saved.location).await;
    status(&landed, 200);
    assert!(landed.body.contains("Your billing details are saved."));
    assert!(landed.body.contains("value=\"FR61954506077\""));
    let token = session(&app, &shop.ada).await;
    let me = app.get(ME, Some(&token)).await;
    assert_eq!(me.body["billing_name"], "ACME SAS");
    assert_eq!(me.body["tax_id"], json!(["FR61954506077", "eu_vat"]));

    // The e-mail: a code to the new address, typed back.
    let asked = b
        .post(
            &account,
            &[
                ("csrf_token", &csrf),
                ("action", "email"),
                ("email", "ada@moved.example"),
            ],
        )
        .await;
    status(&asked, 200);
    assert!(asked.body.contains("id=\"code-form\""));
    let code = code_for(&app, "ada@moved.example").await;
    let wrong = b
        .post(
            &account,
            &[
                ("csrf_token", &csrf),
                ("action", "code"),
                ("email", "ada@moved.example"),
                ("code", "WRONG123"),
            ],
        )
        .await;
    status(&wrong, 401);
    let done = b
        .post(
            &account,
            &[
                ("csrf_token", &csrf),
                ("action", "code"),
                ("email", "ada@moved.example"),
                ("code", &code),
            ],
        )
        .await;
    status(&done, 303);
    assert_eq!(done.location, format!("{account}?done=email"));
    let landed = b.get(&done.location).await;
    status(&landed, 200);
    assert!(landed
        .body
        .contains("Your e-mail address is now ada@moved.example."));
    // The seller's session opened before the change is over.
    app.get(ME, Some(&token)).await.expect(401);
}

/// The organization's portal settings as the seller's API reads them.
async fn portal_settings_of(app: &TestApp, org: &str) -> Value {
    let r = app
        .get(&format!("/v1/organizations/{org}"), Some(&app.token))
        .await;
    r.expect(200);
    r.body["customer_portal_settings"].clone()
}

#[actix_web::test]
async fn the_seller_turns_plan_changes_off_and_on_in_the_api_and_the_dashboard() {
    let app = app(false).await;
    let org = app
        .created_org_as(&app.token, "Portal Settings", "portal-settings")
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    // A new organization lets buyers change plans (Polar's default).
    assert_eq!(
        portal_settings_of(&app, &org).await["subscription"]["update_plan"],
        true
    );
    set_org(&app, &org, portal_settings(false)).await;
    assert_eq!(
        portal_settings_of(&app, &org).await,
        json!({"usage": {"show": false},
               "subscription": {"update_seats": false, "update_plan": false}})
    );
    // All three keys or none.
    let r = app
        .patch_json(
            &format!("/v1/organizations/{org}"),
            Some(&app.token),
            &json!({"customer_portal_settings": {"subscription": {"update_plan": true}}}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "customer_portal_settings", "usage"]));
    assert_eq!(
        portal_settings_of(&app, &org).await["subscription"]["update_plan"],
        false
    );

    // The dashboard's settings form: the three boxes.
    let (mut b, dash_org) =
        crate::dashboard::seller(&app, "owner@portal-settings.example", "Dash Shop").await;
    let path = format!("/dashboard/{dash_org}/settings");
    let page = b.get(&path).await;
    status(&page, 200);
    assert!(page
        .body
        .contains("id=\"portal_update_plan\" name=\"portal_update_plan\" checked"));
    let page = crate::dashboard::form_post(
        &mut b,
        &path,
        &[("name", "Dash Shop"), ("portal_usage_show", "on")],
    )
    .await;
    status(&page, 303);
    let stored = app
        .state
        .store
        .get::<tollgate::domain::organization::Organization>(
            &dash_org
                .parse::<tollgate::domain::ids::OrganizationId>()
                .unwrap()
                .key(),
        )
        .await
        .unwrap()
        .unwrap()
        .value;
    let s = stored.customer_portal_settings;
    assert_eq!(
        (s.usage_show, s.update_seats, s.update_plan),
        (true, false, false)
    );
    let page = b.get(&path).await;
    assert!(!page
        .body
        .contains("id=\"portal_update_plan\" name=\"portal_update_plan\" checked"));
    assert!(page
        .body
        .contains("id=\"portal_usage_show\" name=\"portal_usage_show\" checked"));
}
