//! The hosted checkout paying through Stripe.js in a real browser:
//! `tests/clients/browser/stripe_checkout.py` drives headless Chromium through the page of a
//! server whose processor is Stripe, pointed at localstripe (`stripe.rs`), whose fake
//! Stripe.js the page loads from `payments.stripe_js_url` (with the additions of
//! `tests/clients/stripe/stripe-js-additions.js`). The buyer types cards into the card
//! Element: an approved one, a declined one then another, a 3-D Secure one authenticated in
//! localstripe's dialog, one whose authentication fails then another, and a subscription.
//! The script fails on any error in the browser's console. Afterwards this test reads what
//! Stripe holds: the intents of each checkout, the saved card, the webhooks handled.
//! Screenshots go to `<CARGO_TARGET_TMPDIR>/stripe-browser-screenshots`.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::browser::{ensure_chromium, run_script};
use crate::checkouts::{by_price, client_get, created, id_of, secret, seed};
use crate::stripe::{orders_of, spawn_shop, str_of, Shop};

/// The whole script takes well under a minute; this only stops a hung browser.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);
/// Fewer checks than this means the script stopped early.
const MIN_CHECKS: u32 = 60;

fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stripe-browser-screenshots")
}

/// The PaymentIntents Stripe holds for one checkout, oldest first.
async fn intents_of(shop: &Shop, checkout: &str) -> Vec<Value> {
    shop.ls
        .intents()
        .await
        .into_iter()
        .filter(|i| i["metadata"]["checkout_id"] == checkout)
        .collect()
}

/// The PaymentMethod of an intent.
async fn method_of(shop: &Shop, intent: &Value) -> Value {
    shop.ls
        .get(&format!(
            "/v1/payment_methods/{}",
            str_of(intent, "payment_method")
        ))
        .await
}

#[actix_web::test]
async fn a_buyer_pays_by_card_through_stripe_js_in_a_real_browser() {
    ensure_chromium();
    let shop = spawn_shop(false).await;
    let api = shop.api();
    // `ACME-` keys; a one-time product at $25 and a monthly plan at $15.
    let cat = seed(api, "browser-stripe").await;
    let mut checkouts = Vec::new();
    for price in [
        &cat.ebook_price,
        &cat.ebook_price,
        &cat.ebook_price,
        &cat.ebook_price,
        &cat.monthly,
    ] {
        checkouts.push(created(api, &by_price(price)).await);
    }
    let url = |i: usize| checkouts[i]["url"].as_str().expect("a url").to_string();
    let js_origin = shop.ls.base.clone();
    run_script(
        "stripe_checkout.py",
        &screenshot_dir(),
        &[
            ("APPROVED_URL", url(0).as_str()),
            ("DECLINED_URL", url(1).as_str()),
            ("THREEDS_URL", url(2).as_str()),
            ("THREEDS_FAIL_URL", url(3).as_str()),
            ("SUBSCRIPTION_URL", url(4).as_str()),
            ("TOLLGATE_URL", shop.app.address.as_str()),
            ("ORG_ID", cat.org.as_str()),
            ("STRIPE_JS_ORIGIN", js_origin.as_str()),
        ],
        SCRIPT_TIMEOUT,
        MIN_CHECKS,
    )
    .await;

    let ids: Vec<String> = checkouts.iter().map(id_of).collect();
    // Every checkout paid once: one order each, nothing else.
    let orders = shop.orders(&cat.org).await;
    assert_eq!(orders.len(), 5, "{orders:?}");
    for (id, c) in ids.iter().zip(&checkouts) {
        assert_eq!(orders_of(&orders, id).len(), 1, "{id}: {orders:?}");
        assert_eq!(
            client_get(api, &secret(c)).await.body["status"],
            "succeeded"
        );
    }

    // The approved card: one intent, its card a PaymentMethod the browser created with the
    // publishable key, carrying the buyer's name and e-mail.
    let paid = intents_of(&shop, &ids[0]).await;
    assert_eq!(paid.len(), 1, "{paid:?}");
    assert_eq!(paid[0]["status"], "succeeded");
    assert_eq!(paid[0]["amount"], 2500);
    let method = method_of(&shop, &paid[0]).await;
    assert_eq!(method["card"]["last4"], "4242", "{method}");
    assert_eq!(
        method["billing_details"]["name"], "Ada Lovelace",
        "{method}"
    );
    assert_eq!(
        method["billing_details"]["email"], "ada@example.com",
        "{method}"
    );

    // Declined, then another card: two intents on one checkout.
    let two = intents_of(&shop, &ids[1]).await;
    assert_eq!(two.len(), 2, "{two:?}");
    assert_eq!(two[0]["status"], "requires_payment_method");
    assert_eq!(two[0]["last_payment_error"]["code"], "card_declined");
    assert_eq!(two[1]["status"], "succeeded");
    assert_eq!(method_of(&shop, &two[1]).await["card"]["last4"], "4242");

    // 3-D Secure, authenticated: one intent, and Stripe's signed webhook for it handled.
    let three = intents_of(&shop, &ids[2]).await;
    assert_eq!(three.len(), 1, "{three:?}");
    assert_eq!(three[0]["status"], "succeeded");
    assert_eq!(method_of(&shop, &three[0]).await["card"]["last4"], "3220");
    let event = shop
        .ls
        .event_for("payment_intent.succeeded", str_of(&three[0], "id"))
        .await;
    shop.wait_handled(str_of(&event, "id")).await;

    // A failed authentication charged nothing; the next card paid.
    let failed = intents_of(&shop, &ids[3]).await;
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert_eq!(failed[0]["status"], "requires_payment_method");
    assert_eq!(
        failed[0]["last_payment_error"]["code"],
        "payment_intent_authentication_failure"
    );
    assert_eq!(failed[1]["status"], "succeeded");
    let event = shop
        .ls
        .event_for("payment_intent.payment_failed", str_of(&failed[0], "id"))
        .await;
    shop.wait_handled(str_of(&event, "id")).await;
    assert_eq!(orders_of(&shop.orders(&cat.org).await, &ids[3]).len(), 1);

    // The subscription keeps the card for renewals.
    let sub = intents_of(&shop, &ids[4]).await;
    assert_eq!(sub.len(), 1, "{sub:?}");
    assert_eq!(sub[0]["status"], "succeeded");
    assert_eq!(sub[0]["amount"], 1500);
    assert_eq!(sub[0]["setup_future_usage"], "off_session", "{}", sub[0]);
    let method = method_of(&shop, &sub[0]).await;
    assert_eq!(method["customer"], sub[0]["customer"], "{method}");
}
