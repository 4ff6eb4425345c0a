//! The customer portal in a real browser: `tests/clients/browser/portal.py` drives headless
//! Chromium (Debian's `chromium` and `chromium-driver`, as `browser.rs` does) with pinned
//! selenium through a buyer's story against a fresh server that mails through a real SMTP
//! server (aiosmtpd, `crate::mail::SmtpServer`):
//!
//! the buyer pays for "Desktop App" (a one-time product whose license key allows two
//! activations the customer may manage) and "Cloud Sync" (monthly) on the hosted checkout
//! pages (test processor); the key is activated twice over the public API; then the buyer
//! opens `/portal/{slug}`, asks for a code, reads it from the SMTP server (through a small
//! HTTP helper this test serves), types a wrong code then the right one, sees the order
//! and the key, opens the printable receipt, copies the key, deactivates an activation
//! (the public `activate` then succeeds again within the limit, and `validate` with the
//! old `activation_id` is refused), sees the "Features" section (the product also grants a
//! feature flag) and the "Move to a new device" buttons of a key at its limit, cancels the subscription then resumes it, rotates the
//! key (the old key is refused, the new one validates) and signs out.
//!
//! The script fails on any console error and must end with `N passed, 0 failed`.
//! Screenshots of every page at phone and desktop sizes (and 375 px wide checks of no
//! horizontal scroll) are left under `<CARGO_TARGET_TMPDIR>/portal-screenshots`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::{json, Value};

use crate::browser::{ensure_chromium, run_script};
use crate::helpers::spawn_app_with;
use crate::mail::{mail_settings, SmtpServer};
use crate::portal_pages::{portal_shop, PortalShop};

/// The whole script takes about a minute; this only stops a hung browser.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);

/// Fewer checks than this means the script stopped early.
const MIN_CHECKS: u32 = 130;

const BUYER: &str = "ada@portal-browser.example";

fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("portal-screenshots")
}

/// `GET /messages`: every message the SMTP server received, as it parsed them (the
/// script reads its sign-in code there, as a buyer reads its mailbox).
async fn messages(smtp: web::Data<Arc<SmtpServer>>) -> HttpResponse {
    HttpResponse::Ok().json(Value::Array(smtp.messages()))
}

/// Serves [`messages`] on a loopback port: its base URL and handle.
fn mailbox_helper(smtp: Arc<SmtpServer>) -> (String, actix_web::dev::ServerHandle) {
    let server = HttpServer::new(move || {
        App::new()
            .app_data(web::Data::new(smtp.clone()))
            .route("/messages", web::get().to(messages))
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .expect("binding the mailbox helper");
    let port = server.addrs()[0].port();
    let server = server.run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    (format!("http://127.0.0.1:{port}"), handle)
}

/// Issue 46's pages in the story: the "Desktop App" key's benefit lets its customer move an
/// activation to a new device (`allow_replacement`), and the product also grants the
/// public feature flag "Pro features" (its id), which the portal's overview lists.
async fn features_and_moves(app: &crate::helpers::TestApp, shop: &PortalShop) -> String {
    let token = Some(app.token.as_str());
    app.patch_json(
        &format!("/v1/benefits/{}", shop.benefit),
        token,
        &json!({"type": "license_keys", "properties": {"prefix": "ACME",
                "activations": {"limit": 2, "enable_customer_admin": true, "allow_replacement": true}}}),
    )
    .await
    .expect(200);
    let r = app
        .post_json(
            "/v1/benefits/",
            token,
            &json!({"type": "feature_flag", "description": "Pro features",
                    "organization_id": shop.org, "properties": {},
                    "metadata": {"tier": "pro"}}),
        )
        .await;
    r.expect(201);
    let flag = r.id();
    app.post_json(
        &format!("/v1/products/{}/benefits", shop.app_product),
        token,
        &json!({"benefits": [shop.benefit, flag]}),
    )
    .await
    .expect(200);
    flag
}

/// A checkout of `product`'s first price as the admin: its hosted page's URL.
async fn checkout_url(app: &crate::helpers::TestApp, product: &str) -> String {
    let r = app
        .post_json(
            "/v1/checkouts/custom/",
            Some(&app.token),
            &json!({"product_id": product}),
        )
        .await;
    r.expect(201);
    r.body["url"].as_str().expect("a checkout url").to_string()
}

#[actix_web::test]
async fn a_buyer_manages_its_purchases_in_the_customer_portal_in_a_real_browser() {
    ensure_chromium();
    let smtp = Arc::new(SmtpServer::start(0, 0));
    let dir = tempfile::tempdir().expect("creating the data directory");
    let settings = mail_settings(dir.path(), &smtp.url());
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let (helper, helper_handle) = mailbox_helper(smtp.clone());
    let shop: PortalShop = portal_shop(&app, "acme-tools").await;
    let flag = features_and_moves(&app, &shop).await;
    let app_checkout = checkout_url(&app, &shop.app_product).await;
    let sync_checkout = checkout_url(&app, &shop.sync_product).await;

    run_script(
        "portal.py",
        &screenshot_dir(),
        &[
            ("TOLLGATE_URL", app.address.as_str()),
            ("ORG_ID", shop.org.as_str()),
            ("ORG_SLUG", shop.slug.as_str()),
            ("APP_CHECKOUT_URL", app_checkout.as_str()),
            ("SYNC_CHECKOUT_URL", sync_checkout.as_str()),
            ("BUYER_EMAIL", BUYER),
            ("MAILBOX_URL", helper.as_str()),
        ],
        SCRIPT_TIMEOUT,
        MIN_CHECKS,
    )
    .await;
    helper_handle.stop(false).await;

    // What the buyer did, as the seller sees it.
    let customers = app
        .get(
            &format!("/v1/customers/?organization_id={}&email={BUYER}", shop.org),
            Some(&app.token),
        )
        .await;
    customers.expect(200);
    let customer = customers.items()[0]["id"].as_str().unwrap().to_string();
    let subs = app
        .get(
            &format!("/v1/subscriptions/?customer_id={customer}"),
            Some(&app.token),
        )
        .await;
    subs.expect(200);
    let sub = &subs.items()[0];
    assert_eq!(sub["status"], "active");
    assert_eq!(sub["cancel_at_period_end"], false, "resumed: {sub}");
    let key = &crate::benefit_grants::key_of(&app, &customer, &shop.benefit).await[0];
    let key = app
        .get(
            &format!("/v1/license-keys/{}", key["id"].as_str().unwrap()),
            Some(&app.token),
        )
        .await;
    key.expect(200);
    let labels: Vec<&str> = key.body["activations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(
        labels.contains(&"tablet") && !labels.contains(&"laptop"),
        "{labels:?}"
    );
    // The sign-in code went through SMTP, to the buyer.
    let codes: Vec<Value> = smtp
        .messages()
        .into_iter()
        .filter(|m| {
            m["headers"]["Subject"]
                .as_str()
                .is_some_and(|s| s.starts_with("Access your"))
        })
        .collect();
    assert!(!codes.is_empty(), "no sign-in code mailed");
    assert!(codes[0]["headers"]["To"].as_str().unwrap().contains(BUYER));
    // The feature flag the overview listed is the customer's.
    let state = app
        .get(&format!("/v1/customers/{customer}/state"), Some(&app.token))
        .await;
    state.expect(200);
    assert!(
        state.body["granted_benefits"]
            .as_array()
            .is_some_and(|g| g.iter().any(|b| b["benefit_id"] == flag.as_str())),
        "{}",
        state.body
    );
}
