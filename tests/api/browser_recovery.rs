//! Issue 47's check in a real browser: a declined renewal the buyer fixes. The server
//! charges through localstripe (its fake Stripe.js with our additions), runs on a manual
//! clock and mails through a real SMTP server (aiosmtpd). A 14-day trial is bought with a
//! card that attaches but fails every charge (4000000000000341); at the trial's end the
//! renewal is declined: `past_due`, and the "payment failed" mail with its one-use link.
//! `tests/clients/browser/recovery.py` drives headless Chromium: the buyer opens the mail's
//! link (signed in, on the subscription's page), adds a working card in Stripe's card
//! Element on the cards page, pays now with it, and looks at the plan page.
//!
//! Afterwards this test reads what came of it: exactly one succeeded charge at Stripe for
//! the buyer, the subscription `active`, the key valid without `grace_until`, the receipt at
//! the SMTP server, `subscription.active` and `order.paid` in the event log. Screenshots of
//! the pages at phone and desktop sizes go to `<CARGO_TARGET_TMPDIR>/recovery-screenshots`.

use std::path::PathBuf;
use std::time::Duration;

use chrono::DateTime;
use serde_json::{json, Value};

use crate::browser::{ensure_chromium, run_script};
use crate::checkouts::id_of;
use crate::mail::{mail_settings, SmtpServer};
use crate::portal_recovery::stripe_declining_trial;
use crate::stripe::{spawn_shop_with, str_of};

/// The whole script takes well under a minute; this only stops a hung browser.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);
/// Fewer checks than this means the script stopped early.
const MIN_CHECKS: u32 = 20;
const BUYER: &str = "ada@recovery-browser.example";
const SLUG: &str = "recovery-browser";

fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("recovery-screenshots")
}

/// The mail's link: the first address in the text with `/recover/` in it.
fn recover_link(text: &str) -> String {
    text.split_whitespace()
        .find(|w| w.starts_with("http") && w.contains("/recover/"))
        .map(|w| w.trim_end_matches(['.', ',', ')']).to_string())
        .unwrap_or_else(|| panic!("no link in:\n{text}"))
}

#[actix_web::test]
async fn a_past_due_buyer_adds_a_card_and_pays_now_in_a_real_browser() {
    ensure_chromium();
    let smtp = SmtpServer::start(0, 0);
    let smtp_url = smtp.url();
    let shop = spawn_shop_with(true, |s| {
        let mailing = mail_settings(&s.storage.data_dir, &smtp_url);
        s.email = mailing.email;
    })
    .await;
    let clock = shop.clock.clone().expect("a manual clock");
    let api = shop.api();
    let trial = stripe_declining_trial(&shop, SLUG, BUYER).await;
    let (org, product, c) = (trial.org, trial.product, trial.checkout);
    // Another plan, for the plan page.
    api.posted(
        "/v1/products/",
        &json!({"name": "Team", "organization_id": org, "recurring_interval": "month",
                "prices": [{"amount_type": "fixed", "price_amount": 3000,
                            "price_currency": "usd"}]}),
        201,
    )
    .await;
    let trial_end: DateTime<chrono::Utc> = c["trial_end"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("a trial end");
    clock.set(trial_end + chrono::Duration::minutes(1));
    let report = tollgate::app::subscription::sweep_subscriptions(&shop.app.state)
        .await
        .unwrap();
    assert_eq!(report.declined, 1, "{report:?}");
    let subs = api
        .read(&format!("/v1/subscriptions/?organization_id={org}"))
        .await
        .items();
    let sub = subs
        .iter()
        .find(|s| s["product_id"] == product.as_str())
        .expect("the subscription")
        .clone();
    assert_eq!(sub["status"], "past_due", "{sub}");
    let sub_id = id_of(&sub);
    let keys = shop.license_keys(&org).await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    let key = str_of(&keys[0], "key").to_string();
    let before = shop.ls.intents().await;

    // The "payment failed" mail, with its link.
    let mut link = String::new();
    let mut failure_mail = Value::Null;
    for _ in 0..200 {
        if let Some(m) = smtp.messages().into_iter().find(|m| {
            m["text"].as_str().is_some_and(|t| t.contains("/recover/"))
                && m["rcpt_tos"] == json!([BUYER])
        }) {
            link = recover_link(m["text"].as_str().unwrap());
            failure_mail = m;
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        !link.is_empty(),
        "no payment-failed mail: {:#?}",
        smtp.messages()
    );
    let mails_before = smtp.messages().len();

    let js_origin = shop.ls.base.clone();
    run_script(
        "recovery.py",
        &screenshot_dir(),
        &[
            ("TOLLGATE_URL", shop.app.address.as_str()),
            ("ORG_ID", org.as_str()),
            ("ORG_SLUG", SLUG),
            ("SUBSCRIPTION_ID", sub_id.as_str()),
            ("RECOVER_URL", link.as_str()),
            ("LICENSE_KEY", key.as_str()),
            ("STRIPE_JS_ORIGIN", js_origin.as_str()),
        ],
        SCRIPT_TIMEOUT,
        MIN_CHECKS,
    )
    .await;

    // At Stripe: exactly one new charge, succeeded, on-session, for the pending order.
    let after = shop.ls.intents().await;
    let new: Vec<&Value> = after
        .iter()
        .filter(|i| !before.iter().any(|b| b["id"] == i["id"]))
        .collect();
    let succeeded: Vec<&&Value> = new.iter().filter(|i| i["status"] == "succeeded").collect();
    assert_eq!(succeeded.len(), 1, "{new:#?}");
    assert_eq!(succeeded[0]["amount"], 1000, "{}", succeeded[0]);
    assert_ne!(succeeded[0]["off_session"], true, "{}", succeeded[0]);
    let s = api.read(&format!("/v1/subscriptions/{sub_id}")).await;
    assert_eq!(s.body["status"], "active", "{}", s.body);
    assert_eq!(s.body["past_due_at"], Value::Null, "{}", s.body);
    let v = shop
        .app
        .post_json(
            "/v1/customer-portal/license-keys/validate",
            None,
            &json!({"key": key, "organization_id": org}),
        )
        .await;
    v.expect(200);
    assert_eq!(v.body["grace_until"], Value::Null, "{}", v.body);

    // The receipt at the SMTP server: the renewal's, with the amount and the key's new end.
    let expires = v.body["expires_at"]
        .as_str()
        .and_then(|t| t.parse::<DateTime<chrono::Utc>>().ok())
        .expect("the key's end");
    assert!(
        expires > trial_end + chrono::Duration::days(28),
        "{}",
        v.body
    );
    let mut receipt = None;
    for _ in 0..200 {
        receipt = smtp.messages().into_iter().skip(mails_before).find(|m| {
            m["rcpt_tos"] == json!([BUYER])
                && m["headers"]["Subject"]
                    .as_str()
                    .is_some_and(|s| s.contains("subscription renewed: $10.00"))
        });
        if receipt.is_some() {
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    let receipt = receipt.unwrap_or_else(|| panic!("no receipt: {:#?}", smtp.messages()));
    // The two mails as the buyer reads them, kept beside the screenshots.
    for (name, m) in [
        ("payment-failed.txt", &failure_mail),
        ("receipt.txt", &receipt),
    ] {
        let text = format!(
            "{}\n\n{}",
            m["headers"]["Subject"],
            m["text"].as_str().unwrap_or("")
        );
        std::fs::write(screenshot_dir().join(name), text).expect("keeping a mail");
    }
    let text = receipt["text"].as_str().unwrap_or("");
    assert!(text.contains("Total paid: $10.00"), "{text}");
    assert!(text.contains(&key), "{text}");
    assert!(
        text.contains(&format!(
            "valid until {}",
            tollgate::app::mail::date(expires)
        )),
        "the key's new end in:\n{text}"
    );

    // The events, as the event cursor keeps them.
    let mut types = Vec::new();
    for _ in 0..200 {
        let r = shop
            .app
            .get(
                &format!("/v1/webhooks/events?organization_id={org}&limit=100"),
                Some(&shop.app.token),
            )
            .await;
        r.expect(200);
        types = r
            .items()
            .iter()
            .filter(|e| {
                e["data"]["id"] == sub_id.as_str()
                    || e["data"]["subscription_id"] == sub_id.as_str()
            })
            .map(|e| e["type"].as_str().unwrap_or("").to_string())
            .collect();
        if types.iter().any(|t| t == "order.paid")
            && types.iter().any(|t| t == "subscription.active")
        {
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        types.iter().any(|t| t == "subscription.active"),
        "{types:?}"
    );
    assert!(types.iter().any(|t| t == "order.paid"), "{types:?}");
}
