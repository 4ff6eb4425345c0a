//! Issue 44, part 1 and part 7: a checkout's confirm never hands a stranger someone else's
//! customer portal, and one buyer's purchases confirmed at the same time never collide.
//!
//! A stranger confirms checkouts (a free product, a trial, and with Stripe a card left in
//! 3-D Secure) typing a victim's e-mail address: the session the confirm answers reads
//! only the stranger's own purchase, never the victim's keys, orders, subscriptions or
//! address, changes nothing (no rotation, no cancellation, no activation freed), opens no
//! portal page, and opens nothing at all before the payment succeeded; the victim's
//! customer record keeps its name, billing address and tax id. A buyer whose address is
//! new, or whom the seller named, still gets a session of the whole portal.

use std::collections::BTreeSet;

use futures_util::stream::{self, StreamExt};
use serde_json::{json, Value};

use crate::checkouts::{buyer, by_price, confirm, created, id_of, secret, seed, with, Api};
use crate::helpers::{spawn_app, TestApp};

const KEYS: &str = "/v1/customer-portal/license-keys/";

fn token_of(r: &crate::helpers::Reply) -> String {
    r.body["customer_session_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no customer_session_token: {}", r.body))
        .to_string()
}

/// The victim: buys the ebook with a full billing address and a tax id; returns the
/// session token, the customer id, the key's id and value.
async fn victim_buys(app: &TestApp, price: &str) -> (String, String, String, String) {
    let api = Api::of(app);
    let c = created(api, &by_price(price)).await;
    let mut body = buyer("victim@example.com");
    body["customer_name"] = json!("Victoria Victim");
    body["customer_billing_address"] = json!({
        "country": "FR", "line1": "1 rue de la Paix", "postal_code": "75002", "city": "Paris"
    });
    body["customer_tax_id"] = json!("FR40303265045");
    let r = confirm(api, &secret(&c), &body).await;
    r.expect(200);
    let token = token_of(&r);
    let customer = r.body["customer_id"].as_str().unwrap().to_string();
    let keys = app.get(KEYS, Some(&token)).await;
    keys.expect(200);
    let items = keys.items();
    assert_eq!(
        items.len(),
        1,
        "the victim's own session sees its key: {items:?}"
    );
    let key_id = items[0]["id"].as_str().unwrap().to_string();
    let key = items[0]["key"].as_str().unwrap().to_string();
    (token, customer, key_id, key)
}

/// What the seller sees of a customer.
async fn seller_view(app: &TestApp, customer: &str) -> Value {
    let r = app
        .get(&format!("/v1/customers/{customer}"), Some(&app.token))
        .await;
    r.expect(200);
    r.body
}

/// The victim's record as the seller saw it `before`, unchanged.
#[track_caller]
fn assert_untouched(before: &Value, after: &Value) {
    for field in [
        "name",
        "billing_address",
        "tax_id",
        "email",
        "external_id",
        "metadata",
    ] {
        assert_eq!(after[field], before[field], "{field} changed: {after}");
    }
}

/// The stranger's confirm of `checkout` with the victim's address (in another case) and
/// the stranger's own name and billing details.
async fn stranger_confirms(app: &TestApp, checkout: &Value) -> crate::helpers::Reply {
    let mut body = buyer("Victim@Example.com");
    body["customer_name"] = json!("Mallory");
    body["customer_billing_address"] = json!({
        "country": "DE", "line1": "Evil Str. 1", "postal_code": "10115", "city": "Berlin"
    });
    body["customer_tax_id"] = json!("DE123456788");
    let r = confirm(Api::of(app), &secret(checkout), &body).await;
    r.expect(200);
    r
}

/// Everything the stranger tries with the session its confirm answered; `own_order` is
/// the order of the stranger's checkout.
async fn stranger_gains_nothing(
    app: &TestApp,
    token: &str,
    org_slug: &str,
    victim_key_id: &str,
    victim_checkout: &str,
) {
    // The victim's key: not listed, not readable, not rotatable; the stranger's own keys
    // and grants show none of the victim's details.
    let keys = app.get(KEYS, Some(token)).await;
    keys.expect(200);
    for k in keys.items() {
        assert_ne!(k["id"], victim_key_id, "the victim's key is listed: {k}");
        assert_shows_no_details(&k["customer"]);
    }
    let grants = app
        .get("/v1/customer-portal/benefit-grants/", Some(token))
        .await;
    grants.expect(200);
    for g in grants.items() {
        assert_shows_no_details(&g["customer"]);
    }
    app.get(&format!("{KEYS}{victim_key_id}"), Some(token))
        .await
        .expect(404);
    let r = app
        .post_json(
            &format!("{KEYS}{victim_key_id}/rotate"),
            Some(token),
            &json!({}),
        )
        .await;
    assert!(
        r.status == 403 || r.status == 404,
        "rotating the victim's key: {} {}",
        r.status,
        r.body
    );
    // The victim's profile (name, billing address) is not the stranger's to read.
    let me = app
        .get("/v1/customer-portal/customers/me", Some(token))
        .await;
    assert_eq!(me.status, 403, "customers/me: {}", me.body);
    assert!(!me.body.to_string().contains("Paris"), "{}", me.body);
    // The victim's orders are not listed.
    let orders = app.get("/v1/customer-portal/orders/", Some(token)).await;
    orders.expect(200);
    for o in orders.items() {
        assert_ne!(o["checkout_id"], victim_checkout, "the victim's order: {o}");
        assert!(o["billing_name"].is_null(), "{o}");
        assert!(!o.to_string().contains("Paris"), "{o}");
    }
    // No portal page opens with it.
    let page = app
        .get(
            &format!("/portal/{org_slug}?customer_session_token={token}"),
            None,
        )
        .await;
    assert_eq!(page.status, 401, "the portal's link opens: {}", page.status);
}

/// A customer as a limited session shows it: the address typed and the id, nothing else.
#[track_caller]
fn assert_shows_no_details(customer: &Value) {
    for field in [
        "name",
        "billing_name",
        "billing_address",
        "tax_id",
        "external_id",
    ] {
        assert!(customer[field].is_null(), "{field}: {customer}");
    }
    assert_eq!(customer["metadata"], json!({}), "{customer}");
}

#[actix_web::test]
async fn a_strangers_confirm_with_a_victims_address_gains_nothing_and_changes_nothing() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "takeover").await;
    let (_, victim, victim_key_id, victim_key) = victim_buys(&app, &cat.ebook_price).await;
    let victim_checkout = {
        let orders = app
            .get(
                &format!("/v1/orders/?customer_id={victim}"),
                Some(&app.token),
            )
            .await;
        orders.expect(200);
        orders.items()[0]["checkout_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The victim also subscribes (no trial).
    let plan = created(api, &by_price(&cat.yearly)).await;
    confirm(api, &secret(&plan), &buyer("victim@example.com"))
        .await
        .expect(200);
    let victim_sub = {
        let subs = app
            .get(
                &format!("/v1/subscriptions/?customer_id={victim}"),
                Some(&app.token),
            )
            .await;
        subs.expect(200);
        subs.items()[0]["id"].as_str().unwrap().to_string()
    };
    let before = seller_view(&app, &victim).await;
    assert_eq!(before["billing_address"]["city"], "Paris", "{before}");

    // A free product, then a trial: nothing is charged, the confirm completes at once.
    let free = created(api, &by_price(&cat.free_price)).await;
    let trial = created(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"trial_interval": "day", "trial_interval_count": 7}),
        ),
    )
    .await;
    for checkout in [&free, &trial] {
        let r = stranger_confirms(&app, checkout).await;
        assert_eq!(
            r.body["customer_id"], victim,
            "the purchase goes to the address's customer, as Polar's"
        );
        let token = token_of(&r);
        assert!(token.starts_with("polar_cst_"), "{token}");
        stranger_gains_nothing(&app, &token, "takeover", &victim_key_id, &victim_checkout).await;

        // Its own purchase it reads: the key and the order of this checkout only.
        let keys = app.get(KEYS, Some(&token)).await;
        let items = keys.items();
        assert!(!items.is_empty(), "the stranger's own key is listed");
        let own_key = items[0]["id"].as_str().unwrap().to_string();
        app.get(&format!("{KEYS}{own_key}"), Some(&token))
            .await
            .expect(200);
        let orders = app.get("/v1/customer-portal/orders/", Some(&token)).await;
        let orders = orders.items();
        assert_eq!(orders.len(), 1, "{orders:?}");
        assert_eq!(orders[0]["checkout_id"], id_of(checkout));
        // ... and changes nothing, not even its own.
        let r = app
            .post_json(&format!("{KEYS}{own_key}/rotate"), Some(&token), &json!({}))
            .await;
        assert_eq!(r.status, 403, "{}", r.body);
        let subs = app
            .get("/v1/customer-portal/subscriptions/", Some(&token))
            .await
            .items();
        // The victim's subscription: neither readable nor cancellable.
        let path = format!("/v1/customer-portal/subscriptions/{victim_sub}");
        app.get(&path, Some(&token)).await.expect(404);
        let r = app
            .patch_json(&path, Some(&token), &json!({"cancel_at_period_end": true}))
            .await;
        assert!(
            r.status == 403 || r.status == 404,
            "{} {}",
            r.status,
            r.body
        );
        if std::ptr::eq(checkout, &trial) {
            // The trial's subscription: readable, not cancellable.
            assert_eq!(subs.len(), 1, "only this purchase's subscription: {subs:?}");
            let sub = subs[0]["id"].as_str().unwrap().to_string();
            let r = app
                .request(
                    reqwest::Method::DELETE,
                    &format!("/v1/customer-portal/subscriptions/{sub}"),
                    Some(&token),
                )
                .send()
                .await
                .expect("DELETE");
            assert_eq!(r.status().as_u16(), 403);
        } else {
            assert!(subs.is_empty(), "{subs:?}");
        }
    }

    // The victim's key still validates, with its own value.
    let v = app
        .post_json(
            "/v1/customer-portal/license-keys/validate",
            None,
            &json!({"key": victim_key, "organization_id": cat.org}),
        )
        .await;
    v.expect(200);
    assert_eq!(v.body["id"], victim_key_id);
    let sub = app
        .get(&format!("/v1/subscriptions/{victim_sub}"), Some(&app.token))
        .await;
    sub.expect(200);
    assert_eq!(sub.body["cancel_at_period_end"], false, "{}", sub.body);
    // The victim's record keeps its name, address and tax id.
    assert_untouched(&before, &seller_view(&app, &victim).await);
}

#[actix_web::test]
async fn a_new_buyer_and_a_buyer_the_seller_named_get_the_whole_portal() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "whole-portal").await;
    // A new address: the customer is this checkout's own.
    let c = created(api, &by_price(&cat.ebook_price)).await;
    let r = confirm(api, &secret(&c), &buyer("new@example.com")).await;
    r.expect(200);
    let token = token_of(&r);
    let me = app
        .get("/v1/customer-portal/customers/me", Some(&token))
        .await;
    me.expect(200);
    assert_eq!(me.body["email"], "new@example.com");
    let keys = app.get(KEYS, Some(&token)).await.items();
    let key = keys[0]["id"].as_str().unwrap().to_string();
    app.post_json(&format!("{KEYS}{key}/rotate"), Some(&token), &json!({}))
        .await
        .expect(200);

    // The seller names the customer: its checkout's session is the whole portal, and the
    // buyer's new billing details reach the record.
    let customer = r.body["customer_id"].as_str().unwrap().to_string();
    let c = created(
        api,
        &with(by_price(&cat.ebook_price), json!({"customer_id": customer})),
    )
    .await;
    let mut body = buyer("new@example.com");
    body["customer_billing_address"] = json!({"country": "IT"});
    let r = confirm(api, &secret(&c), &body).await;
    r.expect(200);
    let token = token_of(&r);
    let me = app
        .get("/v1/customer-portal/customers/me", Some(&token))
        .await;
    me.expect(200);
    assert_eq!(me.body["billing_address"]["country"], "IT", "{}", me.body);
    assert_eq!(app.get(KEYS, Some(&token)).await.items().len(), 2);
}

/// 240 checkouts confirmed by one buyer, 64 at a time: each answers 200 with its own
/// order, one customer in all.
#[actix_web::test]
async fn concurrent_confirms_by_one_buyer_all_succeed() {
    // The seller creates the 240 checkouts faster than its token's default rate allows.
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = tollgate::config::Settings::for_tests(dir.path());
    settings.rate_limits.api_per_token.requests = 100_000;
    let app =
        crate::helpers::spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let api = Api::of(&app);
    let cat = seed(api, "one-buyer").await;
    // Known to the shop already, as a returning buyer is.
    confirm(
        api,
        &secret(&created(api, &by_price(&cat.ebook_price)).await),
        &buyer("busy@example.com"),
    )
    .await
    .expect(200);
    let mut secrets = Vec::new();
    for _ in 0..240 {
        secrets.push(secret(&created(api, &by_price(&cat.ebook_price)).await));
    }
    let body = buyer("busy@example.com");
    let replies: Vec<crate::helpers::Reply> = stream::iter(secrets.iter())
        .map(|s| confirm(api, s, &body))
        .buffer_unordered(64)
        .collect()
        .await;
    let mut ids = BTreeSet::new();
    for r in &replies {
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["status"], "confirmed", "{}", r.body);
        ids.insert(r.body["id"].as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 240);
    let customers: BTreeSet<String> = replies
        .iter()
        .map(|r| r.body["customer_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(customers.len(), 1, "one customer for one address");
    let orders =
        crate::checkouts::store_values::<tollgate::domain::order::Order>(&app.state.store).await;
    assert_eq!(orders.len(), 241);
    let per_checkout: BTreeSet<String> = orders
        .iter()
        .map(|o| o.checkout_id.map(|c| c.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(per_checkout.len(), 241, "one order per checkout");
}

/// With Stripe: a stranger's card left in 3-D Secure. The session the confirm answered
/// opens nothing while the payment is under way, and once it succeeded reaches the
/// stranger's own purchase only; the victim's record is untouched throughout.
#[actix_web::test]
async fn a_session_answered_while_3d_secure_is_pending_opens_nothing_until_paid() {
    use crate::stripe::{paying, spawn_shop, str_of, wait_status, CARD_3DS, CARD_OK};
    let shop = spawn_shop(false).await;
    let app = &shop.app;
    let api = shop.api();
    let cat = seed(api, "takeover-3ds").await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    let pm = shop.ls.card(CARD_OK).await;
    let mut body = paying("victim@example.com", &pm);
    body["customer_billing_address"] = json!({"country": "FR", "city": "Paris", "line1": "1 rue de la Paix", "postal_code": "75002"});
    let r = confirm(api, &secret(&c), &body).await;
    r.expect(200);
    let victim = r.body["customer_id"].as_str().unwrap().to_string();
    let victim_checkout = id_of(&c);
    let victim_key_id = {
        let keys = app.get(KEYS, Some(&token_of(&r))).await.items();
        keys[0]["id"].as_str().unwrap().to_string()
    };
    let before = seller_view(app, &victim).await;

    let c = created(api, &by_price(&cat.ebook_price)).await;
    let s = secret(&c);
    let pm = shop.ls.card(CARD_3DS).await;
    let mut body = paying("VICTIM@example.com", &pm);
    body["customer_name"] = json!("Mallory");
    body["customer_billing_address"] =
        json!({"country": "DE", "city": "Berlin", "line1": "Evil Str. 1", "postal_code": "10115"});
    let r = confirm(api, &s, &body).await;
    r.expect(200);
    assert_eq!(
        r.body["payment_processor_metadata"]["intent_status"], "requires_action",
        "{}",
        r.body
    );
    let token = token_of(&r);
    for path in [
        KEYS.to_string(),
        format!("{KEYS}{victim_key_id}"),
        "/v1/customer-portal/customers/me".into(),
        "/v1/customer-portal/orders/".into(),
        "/v1/customer-portal/customer-session/introspect".into(),
    ] {
        let g = app.get(&path, Some(&token)).await;
        assert_eq!(g.status, 401, "{path} before the payment: {}", g.body);
    }
    let r = app
        .post_json(
            &format!("{KEYS}{victim_key_id}/rotate"),
            Some(&token),
            &json!({}),
        )
        .await;
    assert_eq!(r.status, 401, "{}", r.body);
    let page = app
        .get(
            &format!("/portal/takeover-3ds?customer_session_token={token}"),
            None,
        )
        .await;
    assert_eq!(page.status, 401);
    assert_eq!(seller_view(app, &victim).await, before);

    // The stranger passes 3-D Secure: the session now reads the stranger's purchase only.
    let confirmed = crate::checkouts::client_get(api, &s).await.body;
    let intent = crate::stripe::intent_of(&confirmed);
    let intent_secret = str_of(
        &confirmed["payment_processor_metadata"],
        "intent_client_secret",
    )
    .to_string();
    shop.ls.authenticate(&intent, &intent_secret, true).await;
    wait_status(&shop, &s, "succeeded").await;
    stranger_gains_nothing(
        app,
        &token,
        "takeover-3ds",
        &victim_key_id,
        &victim_checkout,
    )
    .await;
    let keys = app.get(KEYS, Some(&token)).await.items();
    assert_eq!(keys.len(), 1, "the stranger's own key: {keys:?}");
    assert_untouched(&before, &seller_view(app, &victim).await);
}

/// A checkout the seller's app made for the stranger (its own external id), with the
/// victim's address typed in, gives the victim's record nothing: no second checkout with
/// that external id then reaches the victim's portal.
#[actix_web::test]
async fn a_strangers_external_id_never_names_the_victim() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "takeover-ext").await;
    let (_, victim, _, _) = victim_buys(&app, &cat.ebook_price).await;
    for _ in 0..2 {
        let c = created(
            api,
            &with(
                by_price(&cat.free_price),
                json!({"external_customer_id": "stranger-1", "customer_metadata": {"plan": "pro"}}),
            ),
        )
        .await;
        let r = stranger_confirms(&app, &c).await;
        let token = token_of(&r);
        let me = app
            .get("/v1/customer-portal/customers/me", Some(&token))
            .await;
        assert_eq!(me.status, 403, "{}", me.body);
        let after = seller_view(&app, &victim).await;
        assert!(after["external_id"].is_null(), "{after}");
        assert_eq!(after["metadata"], json!({}), "{after}");
    }
}

/// A buyer whose first card was declined pays again: the customer the first attempt
/// created is still this checkout's own, and the session reaches the whole portal.
#[actix_web::test]
async fn a_buyer_who_pays_again_after_a_decline_gets_the_whole_portal() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "retry-portal").await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    let mut body = buyer("retry@example.com");
    body["confirmation_token_id"] = json!("tok_decline_insufficient_funds");
    let r = confirm(api, &secret(&c), &body).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = confirm(api, &secret(&c), &buyer("retry@example.com")).await;
    r.expect(200);
    let me = app
        .get("/v1/customer-portal/customers/me", Some(&token_of(&r)))
        .await;
    me.expect(200);
    assert_eq!(me.body["email"], "retry@example.com");
}
