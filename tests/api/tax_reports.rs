//! Issue 48, reports over HTTP: a French seller (FR40303265045, EU One-Stop-Shop) sells a
//! price of 1200 (VAT inside, `location`) to two German consumers, an Austrian, a French
//! consumer (domestic) and a German business (reverse charge), and refunds half of one
//! German sale. The quarter's OSS return is exactly the Austrian and the German rows (the
//! refund netted; no domestic, no reverse charge); the tax summary has every line. The
//! refusals: a quarter 5 (422), another organization's token (404), no token (401).

use chrono::Datelike;
use serde_json::json;

use crate::checkouts::{create_org, id_of, product, Api};
use crate::helpers::spawn_app;
use crate::tax_checkout::{bought, consumer, quoted};
use tollgate::auth::Scope;

fn german_business() -> serde_json::Value {
    json!({
        "is_business_customer": true,
        "customer_billing_name": "Muster GmbH",
        "customer_billing_address": {"country": "DE", "line1": "Hauptstraße 1",
                                     "city": "Berlin", "postal_code": "10117"},
        "customer_tax_id": "DE136695976",
    })
}

#[actix_web::test]
async fn the_oss_return_and_the_tax_summary_of_a_quarter() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "reports-fr").await;
    api.patch(
        &format!("/v1/organizations/{org}"),
        Some(api.token),
        &json!({"tax": {"country": "FR", "tax_id": "FR40303265045", "registrations": ["eu_oss"]}}),
    )
    .await
    .expect(200);
    let p = product(
        api,
        &org,
        "Lifetime",
        json!([{"amount_type": "fixed", "price_amount": 1200, "price_currency": "usd"}]),
    )
    .await;
    let price = id_of(&p["prices"][0]);
    let mut germans = Vec::new();
    for (n, buyer) in [
        consumer("DE"),
        consumer("DE"),
        consumer("AT"),
        consumer("FR"),
        german_business(),
    ]
    .iter()
    .enumerate()
    {
        let (c, _) = quoted(api, &price, buyer).await;
        let o = bought(api, &c, buyer, &format!("buyer{n}@example.com")).await;
        if n < 2 {
            germans.push(o);
        }
    }
    assert_eq!(germans[0]["tax_amount"], 192, "{}", germans[0]);
    let r = app
        .post_json(
            "/v1/refunds/",
            Some(&app.token),
            &json!({"order_id": id_of(&germans[0]), "reason": "customer_request", "amount": 504}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["tax_amount"], 96, "{}", r.body);

    let now = chrono::Utc::now();
    let (year, quarter) = (now.year(), (now.month() - 1) / 3 + 1);
    let path = format!("/v1/reports/oss?organization_id={org}&year={year}&quarter={quarter}");
    let r = app
        .request(reqwest::Method::GET, &path, Some(&app.token))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/csv; charset=utf-8");
    assert!(r.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .contains(&format!("oss-{year}-Q{quarter}.csv")));
    assert_eq!(
        r.text().await.unwrap(),
        "country,rate,taxable_amount,tax_amount,currency\r\n\
         AT,20,10.00,2.00,USD\r\n\
         DE,19,15.12,2.88,USD\r\n"
    );
    // The previous quarter has nothing.
    let (py, pq) = if quarter == 1 {
        (year - 1, 4)
    } else {
        (year, quarter - 1)
    };
    let r = app
        .request(
            reqwest::Method::GET,
            &format!("/v1/reports/oss?organization_id={org}&year={py}&quarter={pq}"),
            Some(&app.token),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.text().await.unwrap(),
        "country,rate,taxable_amount,tax_amount,currency\r\n"
    );

    // The summary: every line, the domestic sale and the reverse charge too.
    let start = format!("{year}-{:02}-01", 3 * quarter - 2);
    let end = if quarter == 4 {
        format!("{}-01-01", year + 1)
    } else {
        format!("{year}-{:02}-01", 3 * quarter + 1)
    };
    let r = app
        .request(
            reqwest::Method::GET,
            &format!("/v1/reports/tax?organization_id={org}&start={start}&end={end}"),
            Some(&app.token),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let text = r.text().await.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "country,rate,taxable_amount,tax_amount,currency");
    assert!(lines.contains(&"AT,20,10.00,2.00,USD"), "{text}");
    assert!(lines.contains(&"DE,19,15.12,2.88,USD"), "{text}");
    assert!(lines.contains(&"FR,20,10.00,2.00,USD"), "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("DE,") && l.ends_with(",12.00,0.00,USD")),
        "the reverse-charged sale: {text}"
    );
    assert_eq!(lines.len(), 5, "{text}");

    // Refusals.
    let r = app
        .get(
            &format!("/v1/reports/oss?organization_id={org}&year={year}&quarter=5"),
            Some(&app.token),
        )
        .await;
    r.expect_invalid_at(json!(["query", "quarter"]));
    let r = app
        .get(
            &format!("/v1/reports/oss?organization_id={org}&year={year}"),
            Some(&app.token),
        )
        .await;
    let item = r.expect_invalid_at(json!(["query", "quarter"]));
    assert_eq!(item["msg"], "Field required", "{}", r.body);
    let r = app
        .get(
            &format!("/v1/reports/tax?organization_id={org}&start={start}"),
            Some(&app.token),
        )
        .await;
    r.expect_invalid_at(json!(["query", "end"]));
    let r = app
        .get(
            &format!("/v1/reports/tax?organization_id={org}&start={end}&end={start}"),
            Some(&app.token),
        )
        .await;
    r.expect_invalid_at(json!(["query", "end"]));
    let (_, stranger) = app
        .new_user_with_scopes("stranger@example.com", &[Scope::OrdersRead])
        .await;
    app.get(&path, Some(&stranger)).await.expect(404);
    app.get(&path, None).await.expect(401);
}
