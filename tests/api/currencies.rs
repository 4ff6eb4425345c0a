//! Issue 49, the catalogue side: products priced in several of Polar's presentment
//! currencies (one price set per currency, all of the same types, the organization's
//! default among them) and the organization's `default_presentment_currency`.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app, Reply, TestApp};

const PRODUCTS: &str = "/v1/products/";

async fn org(app: &TestApp, slug: &str) -> String {
    app.created_org_as(&app.token, "Seller", slug).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn fixed(currency: &str, amount: i64) -> Value {
    json!({"type": "one_time", "amount_type": "fixed", "price_currency": currency, "price_amount": amount})
}

fn monthly(currency: &str, amount: i64) -> Value {
    json!({"type": "recurring", "amount_type": "fixed", "recurring_interval": "month",
           "price_currency": currency, "price_amount": amount})
}

fn yearly(currency: &str, amount: i64) -> Value {
    json!({"type": "recurring", "amount_type": "fixed", "recurring_interval": "year",
           "price_currency": currency, "price_amount": amount})
}

async fn create(app: &TestApp, org: &str, prices: Value) -> Reply {
    app.post_json(
        PRODUCTS,
        Some(&app.token),
        &json!({"name": "Pro", "organization_id": org, "prices": prices}),
    )
    .await
}

#[track_caller]
fn assert_refused(r: &Reply, loc: Value, msg: &str) {
    let item = r.expect_invalid_at(loc);
    assert_eq!(item["type"], "value_error", "{item}");
    assert_eq!(item["msg"], msg, "{item}");
}

fn currencies(product: &Value) -> Vec<(String, i64)> {
    product["prices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["price_currency"].as_str().unwrap().to_string(),
                p["price_amount"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

#[actix_web::test]
async fn a_product_is_priced_in_dollars_euros_and_yen() {
    let app = spawn_app().await;
    let org = org(&app, "world").await;
    let r = create(
        &app,
        &org,
        json!([fixed("usd", 2000), fixed("eur", 1800), fixed("jpy", 3000)]),
    )
    .await;
    r.expect(201);
    let want = vec![
        ("usd".to_string(), 2000),
        ("eur".to_string(), 1800),
        ("jpy".to_string(), 3000),
    ];
    assert_eq!(currencies(&r.body), want);
    let id = r.body["id"].as_str().unwrap();
    let read = app.get(&format!("{PRODUCTS}{id}"), Some(&app.token)).await;
    read.expect(200);
    assert_eq!(currencies(&read.body), want);

    // Monthly and yearly in two currencies.
    let r = create(
        &app,
        &org,
        json!([
            monthly("usd", 1000),
            yearly("usd", 10000),
            monthly("eur", 900),
            yearly("eur", 9000)
        ]),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["prices"].as_array().unwrap().len(), 4);
}

#[actix_web::test]
async fn each_currency_has_the_same_types_of_prices_and_the_default_is_among_them() {
    let app = spawn_app().await;
    let org = org(&app, "shapes").await;
    let r = create(
        &app,
        &org,
        json!([
            monthly("usd", 1000),
            yearly("usd", 10000),
            monthly("eur", 900)
        ]),
    )
    .await;
    assert_refused(
        &r,
        json!(["body", "prices"]),
        "All price currencies must define the same set of price types.",
    );
    let r = create(&app, &org, json!([fixed("usd", 1000), monthly("eur", 900)])).await;
    assert_refused(
        &r,
        json!(["body", "prices"]),
        "All price currencies must define the same set of price types.",
    );
    // Two one-time prices in one currency are still too many.
    let r = create(&app, &org, json!([fixed("usd", 1000), fixed("usd", 2000)])).await;
    let item = r.expect_invalid_at(json!(["body", "prices"]));
    assert_eq!(item["type"], "too_long", "{item}");
    // No price in the organization's default (US dollars).
    let r = create(&app, &org, json!([fixed("eur", 1000), fixed("jpy", 1500)])).await;
    assert_refused(
        &r,
        json!(["body", "prices"]),
        "The organization's default presentment currency must be present in the prices.",
    );
    // The same rules on an update: the default stays, the types stay.
    let p = create(&app, &org, json!([fixed("usd", 1000)])).await;
    p.expect(201);
    let path = format!("{PRODUCTS}{}", p.body["id"].as_str().unwrap());
    let kept = json!({"id": p.body["prices"][0]["id"]});
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"prices": [kept, fixed("eur", 900)]}),
        )
        .await;
    r.expect(200);
    assert_eq!(currencies(&r.body).len(), 2);
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"prices": [fixed("eur", 900)]}),
        )
        .await;
    assert_refused(
        &r,
        json!(["body", "prices"]),
        "The organization's default presentment currency must be present in the prices.",
    );
}

#[actix_web::test]
async fn amounts_follow_each_currencys_bounds() {
    let app = spawn_app().await;
    let org = org(&app, "bounds").await;
    // ¥80 is the least a yen price may be; ₹60.00 a rupee one.
    let r = create(
        &app,
        &org,
        json!([fixed("usd", 50), fixed("jpy", 80), fixed("inr", 6000)]),
    )
    .await;
    r.expect(201);
    let r = create(&app, &org, json!([fixed("usd", 50), fixed("inr", 5999)])).await;
    let item = r.expect_invalid_at(json!(["body", "prices", 1, "price_amount"]));
    assert_eq!(item["type"], "minimum_price", "{item}");
    // Weak currencies are raised: 1 600 000 000 rupiah is allowed, one more is not.
    let r = create(
        &app,
        &org,
        json!([fixed("usd", 5000), fixed("idr", 1_600_000_000)]),
    )
    .await;
    r.expect(201);
    let r = create(
        &app,
        &org,
        json!([fixed("usd", 5000), fixed("idr", 1_600_000_001)]),
    )
    .await;
    let item = r.expect_invalid_at(json!(["body", "prices", 1, "price_amount"]));
    assert_eq!(item["type"], "maximum_price", "{item}");
    // A custom price's default minimum is its currency's.
    let r = create(
        &app,
        &org,
        json!([{"type": "one_time", "amount_type": "custom", "price_currency": "usd"},
               {"type": "one_time", "amount_type": "custom", "price_currency": "jpy"}]),
    )
    .await;
    r.expect(201);
    let minimums: Vec<(Value, Value)> = r.body["prices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["price_currency"].clone(), p["minimum_amount"].clone()))
        .collect();
    assert_eq!(
        minimums,
        vec![(json!("usd"), json!(50)), (json!("jpy"), json!(80))]
    );
}

#[actix_web::test]
async fn the_default_presentment_currency_changes_only_when_every_active_product_has_it() {
    let app = spawn_app().await;
    let org = org(&app, "default").await;
    let read = app.get_org(&org, &app.token).await;
    read.expect(200);
    assert_eq!(read.body["default_presentment_currency"], "usd");

    let only_usd = create(&app, &org, json!([fixed("usd", 1000)])).await;
    only_usd.expect(201);
    create(&app, &org, json!([fixed("usd", 1000), fixed("eur", 900)]))
        .await
        .expect(201);
    let r = app
        .patch_org(
            &org,
            &app.token,
            &json!({"default_presentment_currency": "eur"}),
        )
        .await;
    assert_refused(
        &r,
        json!(["body", "default_presentment_currency"]),
        "All active products must have prices in the new currency.",
    );
    let r = app
        .patch_org(
            &org,
            &app.token,
            &json!({"default_presentment_currency": "xau"}),
        )
        .await;
    let item = r.expect_invalid_at(json!(["body", "default_presentment_currency"]));
    assert_eq!(item["type"], "enum", "{item}");

    // Once the dollar-only product is archived, euros may be the default.
    let path = format!("{PRODUCTS}{}", only_usd.body["id"].as_str().unwrap());
    app.patch_json(&path, Some(&app.token), &json!({"is_archived": true}))
        .await
        .expect(200);
    let r = app
        .patch_org(
            &org,
            &app.token,
            &json!({"default_presentment_currency": "eur"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["default_presentment_currency"], "eur");
    let read = app.get_org(&org, &app.token).await;
    assert_eq!(read.body["default_presentment_currency"], "eur");
    // Now a new product needs a price in euros, and may leave out dollars.
    let r = create(&app, &org, json!([fixed("usd", 1000)])).await;
    assert_refused(
        &r,
        json!(["body", "prices"]),
        "The organization's default presentment currency must be present in the prices.",
    );
    create(&app, &org, json!([fixed("eur", 900)]))
        .await
        .expect(201);

    // An organization may start in yen.
    let r = app
        .post_json(
            "/v1/organizations/",
            Some(&app.token),
            &json!({"name": "Tokyo", "slug": "tokyo", "default_presentment_currency": "jpy"}),
        )
        .await;
    r.expect(201);
    assert_eq!(r.body["default_presentment_currency"], "jpy");
}

#[actix_web::test]
async fn a_free_price_keeps_its_currency() {
    let app = spawn_app().await;
    let org = org(&app, "free").await;
    let free = |c: &str| json!({"type": "one_time", "amount_type": "free", "price_currency": c});
    let r = create(&app, &org, json!([free("usd"), free("eur")])).await;
    r.expect(201);
    let id = r.body["id"].as_str().unwrap();
    // Polar's 2026 shapes write a free price as a fixed one of 0 in its currency.
    let read = crate::helpers::Reply::read(
        app.request(Method::GET, &format!("{PRODUCTS}{id}"), Some(&app.token))
            .header("Polar-Version", "2026-10")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(read.status, 200, "{}", read.body);
    let got: Vec<(Value, Value, Value)> = read.body["prices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["amount_type"].clone(),
                p["price_currency"].clone(),
                p["price_amount"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (json!("fixed"), json!("usd"), json!(0)),
            (json!("fixed"), json!("eur"), json!(0)),
        ]
    );
}
