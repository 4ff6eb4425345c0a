//! Issue 48's check in a real browser: VAT on the hosted checkout page. A seller established
//! in Germany (VAT number, EU One-Stop-Shop; prices include VAT by location) sells a $12.00
//! product; `tests/clients/browser/tax.py` buys it as a German consumer (19 % inside the
//! price), as a French business (20 % as a consumer, then a refused number, then a valid
//! one: reverse charge, the page quoting again on each change) and from the United States (no
//! tax). Afterwards the orders say the same: net, tax, breakdown, the business's billing
//! name and number. Screenshots of the pages at phone and desktop sizes go to
//! `<CARGO_TARGET_TMPDIR>/tax-screenshots`.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::browser::{ensure_chromium, run_script};
use crate::checkouts::{by_price, create_org, created, Api};
use crate::helpers::spawn_app;

/// The whole script takes well under a minute; this only stops a hung browser.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(240);
/// Fewer checks than this means the script stopped early.
const MIN_CHECKS: u32 = 30;

fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tax-screenshots")
}

#[actix_web::test]
async fn buyers_see_their_vat_on_the_checkout_page_in_a_real_browser() {
    ensure_chromium();
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "vat-browser").await;
    let r = api
        .patch(
            &format!("/v1/organizations/{org}"),
            Some(&app.token),
            &json!({"tax": {"country": "DE", "tax_id": "DE136695976", "registrations": ["eu_oss"]}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["tax"]["provider"], "builtin", "{}", r.body);
    let product = api
        .posted(
            "/v1/products/",
            &json!({"name": "Ebook", "organization_id": org,
                "prices": [{"amount_type": "fixed", "price_amount": 1200, "price_currency": "usd"}]}),
            201,
        )
        .await;
    let price = product["prices"][0]["id"].as_str().expect("a price id");
    let consumer = created(api, &by_price(price)).await;
    let business = created(api, &by_price(price)).await;
    let us = created(api, &by_price(price)).await;
    let url = |c: &Value| c["url"].as_str().expect("a checkout url").to_string();

    run_script(
        "tax.py",
        &screenshot_dir(),
        &[
            ("CONSUMER_URL", url(&consumer).as_str()),
            ("BUSINESS_URL", url(&business).as_str()),
            ("US_URL", url(&us).as_str()),
        ],
        SCRIPT_TIMEOUT,
        MIN_CHECKS,
    )
    .await;

    // The orders say what the pages said.
    let r = api
        .read(&format!("/v1/orders/?organization_id={org}"))
        .await;
    r.expect(200);
    let orders = r.items();
    assert_eq!(orders.len(), 3, "{orders:?}");
    let of = |c: &Value| {
        orders
            .iter()
            .find(|o| o["checkout_id"] == c["id"])
            .unwrap_or_else(|| panic!("no order of {}", c["id"]))
            .clone()
    };
    let o = of(&consumer);
    assert_eq!(
        (&o["net_amount"], &o["tax_amount"], &o["total_amount"]),
        (&json!(1008), &json!(192), &json!(1200)),
        "{o}"
    );
    assert_eq!(o["tax_behavior"], "inclusive");
    assert_eq!(o["tax_breakdown"][0]["country"], "DE");
    assert_eq!(o["tax_breakdown"][0]["rate"], 19.0);
    let o = of(&business);
    assert_eq!(
        (&o["net_amount"], &o["tax_amount"], &o["total_amount"]),
        (&json!(1200), &json!(0), &json!(1200)),
        "{o}"
    );
    assert_eq!(o["billing_name"], "Acme SAS");
    assert_eq!(o["customer_tax_id"], "FR40303265045");
    assert_eq!(o["tax_breakdown"][0]["taxability_reason"], "reverse_charge");
    let o = of(&us);
    assert_eq!(
        (&o["tax_amount"], &o["total_amount"], &o["tax_behavior"]),
        (&json!(0), &json!(1200), &json!("exclusive")),
        "{o}"
    );
}
