//! Stripe's Payment Element on the hosted checkout in a real browser:
//! `tests/clients/browser/payments.py` drives headless Chromium through the pages of a
//! server whose processor is Stripe, pointed at localstripe, whose fake Stripe.js has the
//! Payment Element (`tests/clients/stripe/stripe-js-additions.js`) and whose API has
//! ConfirmationTokens, iDEAL's bank page and SEPA debits held `processing`
//! (`tests/clients/stripe/payment_element.py`). The buyer pays by card; with iDEAL, through
//! the bank's page and back to the confirmation page; by SEPA Direct Debit, which shows
//! processing until localstripe settles it (Stripe's signed event then grants the key); and
//! by a debit that fails (the checkout fails, nothing granted). Afterwards this test reads
//! what Stripe and Tollgate hold. Screenshots go to
//! `<CARGO_TARGET_TMPDIR>/payments-browser-screenshots`.

use std::path::PathBuf;
use std::time::Duration;

use crate::browser::{ensure_chromium, run_script};
use crate::checkouts::{by_price, client_get, created, id_of, secret, seed};
use crate::stripe::{orders_of, spawn_shop, str_of, SECRET_KEY};

/// The whole script takes about a minute; this only stops a hung browser.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);
/// Fewer checks than this means the script stopped early.
const MIN_CHECKS: u32 = 60;

fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("payments-browser-screenshots")
}

#[actix_web::test]
async fn a_buyer_pays_by_card_ideal_and_sepa_debit_through_the_payment_element() {
    ensure_chromium();
    let shop = spawn_shop(false).await;
    let api = shop.api();
    // `ACME-` keys; a one-time product at $25.
    let cat = seed(api, "browser-payments").await;
    let mut checkouts = Vec::new();
    for _ in 0..4 {
        checkouts.push(created(api, &by_price(&cat.ebook_price)).await);
    }
    let url = |i: usize| checkouts[i]["url"].as_str().expect("a url").to_string();
    let ls = shop.ls.base.clone();
    run_script(
        "payments.py",
        &screenshot_dir(),
        &[
            ("CARD_URL", url(0).as_str()),
            ("IDEAL_URL", url(1).as_str()),
            ("SEPA_OK_URL", url(2).as_str()),
            ("SEPA_FAIL_URL", url(3).as_str()),
            ("TOLLGATE_URL", shop.app.address.as_str()),
            ("ORG_ID", cat.org.as_str()),
            ("STRIPE_JS_ORIGIN", ls.as_str()),
            ("LOCALSTRIPE_URL", ls.as_str()),
            ("LOCALSTRIPE_KEY", SECRET_KEY),
        ],
        SCRIPT_TIMEOUT,
        MIN_CHECKS,
    )
    .await;

    let ids: Vec<String> = checkouts.iter().map(id_of).collect();
    let orders = shop.orders(&cat.org).await;
    let intents = shop.ls.intents().await;
    let of = |checkout: &str| -> Vec<serde_json::Value> {
        intents
            .iter()
            .filter(|i| i["metadata"]["checkout_id"] == checkout)
            .cloned()
            .collect()
    };
    // Card, iDEAL and the settled debit: paid once each; the failed debit: nothing.
    for (i, kind) in [(0, "card"), (1, "ideal"), (2, "sepa_debit")] {
        assert_eq!(orders_of(&orders, &ids[i]).len(), 1, "{kind}: {orders:?}");
        assert_eq!(
            client_get(api, &secret(&checkouts[i])).await.body["status"],
            "succeeded",
            "{kind}"
        );
        let paid = of(&ids[i]);
        assert_eq!(paid.len(), 1, "{kind}: {paid:?}");
        assert_eq!(paid[0]["status"], "succeeded", "{kind}");
        // Stripe's automatic payment methods, not a list of types.
        assert_eq!(
            paid[0]["automatic_payment_methods"]["enabled"], true,
            "{kind}: {}",
            paid[0]
        );
        let method = shop
            .ls
            .get(&format!(
                "/v1/payment_methods/{}",
                str_of(&paid[0], "payment_method")
            ))
            .await;
        assert_eq!(method["type"], kind, "{method}");
        assert!(
            method["billing_details"]["email"].as_str().is_some(),
            "{method}"
        );
    }
    assert!(orders_of(&orders, &ids[3]).is_empty(), "{orders:?}");
    assert_eq!(
        client_get(api, &secret(&checkouts[3])).await.body["status"],
        "failed"
    );
    let failed = of(&ids[3]);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["status"], "requires_payment_method");
    // One key each for the three paid checkouts, none for the failed one.
    let keys = shop.license_keys(&cat.org).await;
    assert_eq!(keys.len(), 3, "{keys:?}");
}
