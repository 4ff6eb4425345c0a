//! Everything after the sale stays in the checkout's currency (issue 49, Polar's
//! "Where the currency lands"): a subscription bought in euros renews in euros on the
//! manual clock, is refunded in euros, changes plan only to a product with a euro price,
//! and `POST /v1/subscriptions/` starts one in the organization's default currency; euro and
//! yen invoices show their amounts in their currency (`€18.00`, `¥3,000`).

use chrono::Duration;
use serde_json::{json, Value};
use tollgate::domain::ids::OrganizationId;

use crate::subscription_plans::{orders, subscription, subscription_of_checkout};
use crate::subscriptions::{spawn_app_with_clock, ClockApp};

const NO_PRICE_IN_CURRENCY: &str =
    "This product doesn't have a price for the subscription currency.";

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap().to_string()
}

fn monthly_price(currency: &str, amount: i64) -> Value {
    json!({"amount_type": "fixed", "price_amount": amount, "price_currency": currency})
}

/// A monthly product of `org` with `prices`: its id and its prices' ids by currency.
async fn product(
    app: &ClockApp,
    org: OrganizationId,
    name: &str,
    prices: Value,
) -> (String, Vec<(String, String)>) {
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": name, "organization_id": org, "recurring_interval": "month",
                    "prices": prices}),
        )
        .await;
    r.expect(201);
    let prices = r.body["prices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["price_currency"].as_str().unwrap().to_string(), id(p)))
        .collect();
    (id(&r.body), prices)
}

fn price_in(prices: &[(String, String)], currency: &str) -> String {
    prices
        .iter()
        .find(|(c, _)| c == currency)
        .map(|(_, id)| id.clone())
        .unwrap_or_else(|| panic!("no {currency} price"))
}

/// A checkout of the legacy `product_price_id` shape (its currency is the price's),
/// confirmed with the test processor's card; the subscription it created.
async fn subscribe(app: &ClockApp, price: &str, email: &str) -> Value {
    let c = app
        .post_json(
            "/v1/checkouts/custom/",
            Some(&app.token),
            &json!({"product_price_id": price}),
        )
        .await;
    c.expect(201);
    let secret = c.body["client_secret"].as_str().unwrap().to_string();
    app.post_json(
        &format!("/v1/checkouts/custom/client/{secret}/confirm"),
        None,
        &json!({"customer_name": "Ada Lovelace", "customer_email": email,
                "customer_billing_address": {"country": "FR"},
                "confirmation_token_id": "tok_visa"}),
    )
    .await
    .expect(200);
    subscription_of_checkout(app, &id(&c.body)).await
}

fn period_end(s: &Value) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(s["current_period_end"].as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc)
}

#[actix_web::test]
async fn a_euro_subscription_renews_twice_in_euros_and_is_refunded_in_euros() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "euro-renewals").await;
    let (_, prices) = product(
        &app,
        org,
        "Pro",
        json!([monthly_price("usd", 1500), monthly_price("eur", 1800)]),
    )
    .await;
    let s = subscribe(&app, &price_in(&prices, "eur"), "ada@euro.example").await;
    assert_eq!(s["currency"], "eur", "{s}");
    assert_eq!(s["amount"], 1800);
    let sub = id(&s);
    let customer = s["customer_id"].as_str().unwrap().to_string();

    for cycle in 1..=2 {
        let end = period_end(&subscription(&app, &sub).await);
        app.clock.set(end + Duration::hours(1));
        let report = app.sweep().await;
        assert_eq!((report.renewed, report.errors), (1, 0), "cycle {cycle}");
        let s = subscription(&app, &sub).await;
        assert_eq!(
            s["currency"], "eur",
            "a subscription's currency never changes"
        );
        assert_eq!(s["amount"], 1800);
    }
    let all = orders(&app, &customer).await;
    assert_eq!(all.len(), 3, "the purchase and two renewals");
    let cycles: Vec<&Value> = all
        .iter()
        .filter(|o| o["billing_reason"] == "subscription_cycle")
        .collect();
    assert_eq!(cycles.len(), 2);
    for o in &all {
        assert_eq!(o["currency"], "eur", "{o}");
        assert_eq!(o["subtotal_amount"], 1800, "{o}");
        for item in o["items"].as_array().unwrap() {
            assert_eq!(item["amount"], 1800, "{item}");
        }
    }

    // A partial refund of the last renewal is in its order's currency.
    let last = cycles[1];
    let r = app
        .post_json(
            "/v1/refunds/",
            Some(&app.token),
            &json!({"order_id": last["id"], "reason": "customer_request", "amount": 500}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["currency"], "eur", "{}", r.body);
    assert_eq!(r.body["amount"], 500);
    let o = app
        .get(
            &format!("/v1/orders/{}", last["id"].as_str().unwrap()),
            Some(&app.token),
        )
        .await;
    o.expect(200);
    assert_eq!(o.body["refunded_amount"], 500);
    assert_eq!(o.body["currency"], "eur");
}

#[actix_web::test]
async fn a_plan_change_finds_a_price_in_the_subscriptions_currency_or_is_refused() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "euro-plans").await;
    let (_, basic) = product(
        &app,
        org,
        "Basic",
        json!([monthly_price("usd", 1000), monthly_price("eur", 900)]),
    )
    .await;
    let (dollars_only, _) =
        product(&app, org, "Dollars", json!([monthly_price("usd", 3000)])).await;
    let (pro, pro_prices) = product(
        &app,
        org,
        "Pro",
        json!([monthly_price("usd", 3000), monthly_price("eur", 2700)]),
    )
    .await;
    let s = subscribe(&app, &price_in(&basic, "eur"), "ada@plans-eur.example").await;
    let sub = id(&s);
    assert_eq!(s["currency"], "eur");

    // A product without a euro price: Polar's 422 on product_id, for the change and its
    // preview alike.
    let path = format!("/v1/subscriptions/{sub}");
    let refused = json!({"product_id": dollars_only});
    let change = app.patch_json(&path, Some(&app.token), &refused).await;
    let preview = app
        .post_json(
            &format!("{path}/change-preview"),
            Some(&app.token),
            &refused,
        )
        .await;
    for r in [change, preview] {
        let item = r.expect_invalid_at(json!(["body", "product_id"]));
        assert_eq!(item["msg"], NO_PRICE_IN_CURRENCY, "{item}");
    }
    assert_eq!(
        subscription(&app, &sub).await["product_id"],
        s["product_id"]
    );

    // A product with one: the preview and the change are in euros, at its euro price.
    let body = json!({"product_id": pro, "proration_behavior": "invoice"});
    let p = app
        .post_json(&format!("{path}/change-preview"), Some(&app.token), &body)
        .await;
    p.expect(200);
    let r = app.patch_json(&path, Some(&app.token), &body).await;
    r.expect(200);
    assert_eq!(r.body["product_id"], pro);
    assert_eq!(r.body["currency"], "eur");
    assert_eq!(r.body["amount"], 2700);
    assert_eq!(r.body["prices"][0]["id"], price_in(&pro_prices, "eur"));
    let customer = s["customer_id"].as_str().unwrap();
    let update = orders(&app, customer)
        .await
        .into_iter()
        .find(|o| o["billing_reason"] == "subscription_update")
        .expect("the prorated charge");
    assert_eq!(update["currency"], "eur", "{update}");
    assert_eq!(update["total_amount"], p.body["due_amount"]);
}

#[actix_web::test]
async fn the_api_starts_a_free_subscription_in_the_organizations_default_currency() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "euro-free").await;
    let free = |c: &str| json!({"amount_type": "free", "price_currency": c});
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": "Community", "organization_id": org, "recurring_interval": "month",
                    "prices": [free("usd"), free("eur")]}),
        )
        .await;
    r.expect(201);
    let product_id = id(&r.body);
    // The prices as listed: the second is the euro one.
    let eur_price = id(&r.body["prices"][1]);
    app.patch_json(
        &format!("/v1/organizations/{org}"),
        Some(&app.token),
        &json!({"default_presentment_currency": "eur"}),
    )
    .await
    .expect(200);
    let customer = app.customer(&app.token, org, "ada@free-eur.example").await;
    let r = app
        .post_json(
            "/v1/subscriptions/",
            Some(&app.token),
            &json!({"product_id": product_id, "customer_id": customer.id.to_string()}),
        )
        .await;
    r.expect(201);
    assert_eq!(r.body["currency"], "eur", "{}", r.body);
    assert_eq!(r.body["prices"][0]["id"], eur_price);
}

// ---------------------------------------------------------------------------------------
// Invoices in the order's currency

/// The PDF's text (`pdftotext -layout`); `None` where poppler is missing outside CI.
fn pdf_text(bytes: &[u8]) -> Option<String> {
    use std::io::Write;
    let child = std::process::Command::new("pdftotext")
        .args(["-layout", "-", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("pdftotext not available ({e}): the PDF's text is not checked");
            return None;
        }
        Err(e) => panic!("pdftotext is needed under CI: {e}"),
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(bytes)
        .expect("the PDF written");
    let out = child.wait_with_output().expect("pdftotext ran");
    assert!(out.status.success(), "pdftotext failed");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The invoice PDF of order `id` (issued on payment; bounded wait), as bytes.
async fn invoice_pdf(app: &crate::helpers::TestApp, id: &str) -> Vec<u8> {
    for _ in 0..100 {
        let r = app.get(&format!("/v1/orders/{id}"), Some(&app.token)).await;
        r.expect(200);
        if r.body["is_invoice_generated"] == true {
            let r = app
                .get(&format!("/v1/orders/{id}/invoice"), Some(&app.token))
                .await;
            r.expect(200);
            let url = r.body["url"].as_str().unwrap();
            let resp = crate::helpers::client()
                .get(url)
                .send()
                .await
                .expect("the link answers");
            assert_eq!(resp.status(), 200, "{url}");
            let bytes = resp.bytes().await.expect("the PDF").to_vec();
            assert!(bytes.starts_with(b"%PDF-"), "not a PDF");
            return bytes;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("order {id} was not invoiced");
}

#[actix_web::test]
async fn euro_and_yen_invoices_show_their_amounts_in_their_currency() {
    use crate::checkouts::{create_org, product as create_product, Api};
    use crate::tax_checkout::{bought, french_business, quoted, SELLER_TAX};
    let app = crate::helpers::spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "invoices-in-currencies").await;
    api.patch(
        &format!("/v1/organizations/{org}"),
        Some(api.token),
        &json!({"tax": {"country": "DE", "tax_id": SELLER_TAX,
                        "registrations": ["eu_oss"], "invoice_timing": "on_payment",
                        "invoice_prefix": "CUR", "legal_name": "Acme Software GmbH",
                        "address": {"line1": "Friedrichstraße 12", "postal_code": "10117",
                                    "city": "Berlin", "country": "DE"}},
                "default_tax_behavior": "location"}),
    )
    .await
    .expect(200);
    let one_time = |currency: &str, amount: i64| json!({"amount_type": "fixed", "price_amount": amount, "price_currency": currency});
    let p = create_product(
        api,
        &org,
        "Lifetime",
        json!([
            one_time("usd", 2000),
            one_time("eur", 1800),
            one_time("jpy", 3000)
        ]),
    )
    .await;
    let price_of = |currency: &str| {
        id(p["prices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["price_currency"] == currency)
            .unwrap())
    };
    // A French business buys: reverse charge, so the total is the price.
    for (currency, shown, email) in [
        ("eur", "€18.00", "compta@eur.example"),
        ("jpy", "¥3,000", "compta@jpy.example"),
    ] {
        let (c, _) = quoted(api, &price_of(currency), &french_business()).await;
        let o = bought(api, &c, &french_business(), email).await;
        assert_eq!(o["currency"], currency, "{o}");
        let bytes = invoice_pdf(&app, &id(&o)).await;
        if let Some(text) = pdf_text(&bytes) {
            assert!(text.contains(shown), "{shown} missing from:\n{text}");
            assert!(!text.contains('$'), "a dollar amount in:\n{text}");
        }
    }
}
