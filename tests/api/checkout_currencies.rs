//! Issue 49, the checkout side: the currency a checkout is presented in (an explicit
//! `currency`, the country of the buyer's IP address through a GeoIP database, the
//! organization's default), Polar's 422s, switching products, discounts per currency, and
//! an order in the checkout's currency (zero-decimal amounts as they are).

use reqwest::Method;
use serde_json::{json, Value};
use tollgate::config::Settings;

use crate::helpers::{spawn_app_with, Reply, TestApp};

const CHECKOUTS: &str = "/v1/checkouts/";
const NOT_AVAILABLE: &str = "Product is not available in the specified currency.";

/// A GeoIP country database of three networks: 81/8 in France, 126/8 in Japan, 5/8
/// registered in Germany.
fn geoip_database() -> Vec<u8> {
    use mmdb_writer::{Value as V, Writer};
    let mut w = Writer::new("Tollgate-Test-Country");
    let country =
        |key: &str, iso: &str| V::map([(key, V::map([("iso_code", V::String(iso.to_string()))]))]);
    for (net, value) in [
        ("81.0.0.0/8", country("country", "FR")),
        ("126.0.0.0/8", country("country", "JP")),
        ("5.0.0.0/8", country("registered_country", "DE")),
    ] {
        w.insert_value(net.parse::<ipnet::IpNet>().unwrap(), value)
            .unwrap();
    }
    w.to_bytes().unwrap()
}

/// The application with the test GeoIP database configured; the loopback peer is a
/// trusted proxy, so a test names the buyer's address in `X-Forwarded-For`.
async fn spawn() -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("country.mmdb");
    std::fs::write(&path, geoip_database()).unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.checkout.geoip_database = path;
    settings.server.trusted_proxies = vec!["127.0.0.1".into()];
    spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await
}

struct Catalog {
    org: String,
    /// usd 2000, eur 1800, jpy 3000.
    world: String,
    /// usd 1000, eur 900.
    western: String,
    /// Pay what you want in usd, eur and jpy.
    tip: String,
}

fn fixed(currency: &str, amount: i64) -> Value {
    json!({"type": "one_time", "amount_type": "fixed", "price_currency": currency, "price_amount": amount})
}

fn custom(currency: &str) -> Value {
    json!({"type": "one_time", "amount_type": "custom", "price_currency": currency})
}

async fn product(app: &TestApp, org: &str, name: &str, prices: Value) -> String {
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": name, "organization_id": org, "prices": prices}),
        )
        .await;
    r.expect(201);
    r.id()
}

async fn catalog(app: &TestApp, slug: &str) -> Catalog {
    let org = app.created_org_as(&app.token, "Seller", slug).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let world = product(
        app,
        &org,
        "World",
        json!([fixed("usd", 2000), fixed("eur", 1800), fixed("jpy", 3000)]),
    )
    .await;
    let western = product(
        app,
        &org,
        "Western",
        json!([fixed("usd", 1000), fixed("eur", 900)]),
    )
    .await;
    let tip = product(
        app,
        &org,
        "Tip",
        json!([custom("usd"), custom("eur"), custom("jpy")]),
    )
    .await;
    Catalog {
        org,
        world,
        western,
        tip,
    }
}

async fn create(app: &TestApp, body: Value) -> Reply {
    app.post_json(CHECKOUTS, Some(&app.token), &body).await
}

async fn created(app: &TestApp, body: Value) -> Value {
    let r = create(app, body).await;
    r.expect(201);
    r.body
}

async fn patch(app: &TestApp, id: &str, body: Value) -> Reply {
    app.patch_json(&format!("{CHECKOUTS}{id}"), Some(&app.token), &body)
        .await
}

#[track_caller]
fn assert_priced(c: &Value, currency: &str, amount: i64) {
    assert_eq!(c["currency"], currency, "{c}");
    assert_eq!(c["amount"], amount, "{c}");
    assert_eq!(c["product_price"]["price_currency"], currency, "{c}");
    assert_eq!(c["product_price"]["id"], c["product_price_id"], "{c}");
}

#[track_caller]
fn assert_refused(r: &Reply, loc: Value, msg: &str) {
    let item = r.expect_invalid_at(loc);
    assert_eq!(item["msg"], msg, "{item}");
}

#[actix_web::test]
async fn an_explicit_currency_picks_the_prices_and_every_price_is_listed() {
    let app = spawn().await;
    let cat = catalog(&app, "explicit").await;
    for (currency, amount) in [("usd", 2000), ("eur", 1800), ("jpy", 3000)] {
        let c = created(&app, json!({"products": [cat.world], "currency": currency})).await;
        assert_priced(&c, currency, amount);
        // The checkout lists the product's prices in every currency (Polar).
        assert_eq!(c["products"][0]["prices"].as_array().unwrap().len(), 3);
        assert_eq!(c["prices"][&cat.world].as_array().unwrap().len(), 3);
        // The legacy shape by product takes it too.
        let c = created(&app, json!({"product_id": cat.world, "currency": currency})).await;
        assert_priced(&c, currency, amount);
    }
    // jpy is zero-decimal: the amount is yen, as given.
    let c = created(&app, json!({"products": [cat.world], "currency": "jpy"})).await;
    assert_eq!(c["total_amount"], 3000);

    // The legacy price shape: the price's currency, whatever else is said.
    let r = app
        .get(&format!("/v1/products/{}", cat.world), Some(&app.token))
        .await;
    let yen = r.body["prices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["price_currency"] == "jpy")
        .unwrap()["id"]
        .clone();
    let c = created(&app, json!({"product_price_id": yen})).await;
    assert_priced(&c, "jpy", 3000);
}

#[actix_web::test]
async fn a_currency_the_product_lacks_or_an_unknown_code_is_refused() {
    let app = spawn().await;
    let cat = catalog(&app, "refusals").await;
    let r = create(&app, json!({"products": [cat.western], "currency": "jpy"})).await;
    assert_refused(&r, json!(["body", "products", 0]), NOT_AVAILABLE);
    let r = create(&app, json!({"product_id": cat.western, "currency": "jpy"})).await;
    assert_refused(&r, json!(["body", "product_id"]), NOT_AVAILABLE);
    // Not a presentment currency: pydantic's enum error.
    for bad in ["xau", "EUR", "euro"] {
        let r = create(&app, json!({"products": [cat.world], "currency": bad})).await;
        let item = r.expect_invalid_at(json!(["body", "currency"]));
        assert_eq!(item["type"], "enum", "{item}");
    }
    // PATCH: a currency the product lacks, an unknown one.
    let c = created(&app, json!({"products": [cat.western]})).await;
    let id = c["id"].as_str().unwrap();
    let r = patch(&app, id, json!({"currency": "jpy"})).await;
    assert_refused(&r, json!(["body", "currency"]), NOT_AVAILABLE);
    let r = patch(&app, id, json!({"currency": "xau"})).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "currency"]))["type"],
        "enum"
    );
    // A currency it has: its prices in it.
    let r = patch(&app, id, json!({"currency": "eur"})).await;
    r.expect(200);
    assert_priced(&r.body, "eur", 900);
}

#[actix_web::test]
async fn the_buyers_ip_country_then_the_default_pick_the_currency() {
    let app = spawn().await;
    let cat = catalog(&app, "geo").await;
    let c = created(
        &app,
        json!({"products": [cat.world], "customer_ip_address": "81.1.2.3"}),
    )
    .await;
    assert_priced(&c, "eur", 1800);
    // The IP country pre-fills the billing country.
    assert_eq!(c["customer_billing_address"]["country"], "FR");
    let c = created(
        &app,
        json!({"products": [cat.world], "customer_ip_address": "126.10.20.30"}),
    )
    .await;
    assert_priced(&c, "jpy", 3000);
    assert_eq!(c["customer_billing_address"]["country"], "JP");
    // Registered in Germany: euros.
    let c = created(
        &app,
        json!({"products": [cat.world], "customer_ip_address": "5.6.7.8"}),
    )
    .await;
    assert_priced(&c, "eur", 1800);
    // Unknown to the database: the organization's default.
    let c = created(
        &app,
        json!({"products": [cat.world], "customer_ip_address": "8.8.8.8"}),
    )
    .await;
    assert_priced(&c, "usd", 2000);
    assert!(c["customer_billing_address"].is_null(), "{c}");
    // Japan, for a product without yen: the default.
    let c = created(
        &app,
        json!({"products": [cat.western], "customer_ip_address": "126.1.1.1"}),
    )
    .await;
    assert_priced(&c, "usd", 1000);
    // An explicit currency wins over the IP; a given address is kept.
    let c = created(
        &app,
        json!({"products": [cat.world], "customer_ip_address": "81.1.2.3", "currency": "jpy",
               "customer_billing_address": {"country": "US"}}),
    )
    .await;
    assert_priced(&c, "jpy", 3000);
    assert_eq!(c["customer_billing_address"]["country"], "US");
    // The billing country never picks the currency.
    let c = created(
        &app,
        json!({"products": [cat.world], "customer_billing_address": {"country": "FR"}}),
    )
    .await;
    assert_priced(&c, "usd", 2000);
}

#[actix_web::test]
async fn the_organizations_default_is_the_fallback() {
    let app = spawn().await;
    let cat = catalog(&app, "default").await;
    let r = app
        .patch_org(
            &cat.org,
            &app.token,
            &json!({"default_presentment_currency": "eur"}),
        )
        .await;
    r.expect(200);
    let c = created(&app, json!({"products": [cat.world]})).await;
    assert_priced(&c, "eur", 1800);
    let c = created(
        &app,
        json!({"products": [cat.world], "customer_ip_address": "8.8.8.8"}),
    )
    .await;
    assert_priced(&c, "eur", 1800);
    let c = created(
        &app,
        json!({"products": [cat.world], "customer_ip_address": "126.0.0.1"}),
    )
    .await;
    assert_priced(&c, "jpy", 3000);
}

#[actix_web::test]
async fn switching_product_keeps_the_currency_or_falls_back_to_the_default() {
    let app = spawn().await;
    let cat = catalog(&app, "switch").await;
    let c = created(
        &app,
        json!({"products": [cat.world, cat.western], "currency": "eur"}),
    )
    .await;
    let id = c["id"].as_str().unwrap();
    let r = patch(&app, id, json!({"product_id": cat.western})).await;
    r.expect(200);
    assert_priced(&r.body, "eur", 900);
    let r = patch(&app, id, json!({"product_id": cat.world})).await;
    r.expect(200);
    assert_priced(&r.body, "eur", 1800);

    let c = created(
        &app,
        json!({"products": [cat.world, cat.western], "currency": "jpy"}),
    )
    .await;
    let id = c["id"].as_str().unwrap();
    // Asked for in yen, which it lacks: refused.
    let r = patch(
        &app,
        id,
        json!({"product_id": cat.western, "currency": "jpy"}),
    )
    .await;
    assert_refused(&r, json!(["body", "currency"]), NOT_AVAILABLE);
    // Without yen: the organization's default.
    let r = patch(&app, id, json!({"product_id": cat.western})).await;
    r.expect(200);
    assert_priced(&r.body, "usd", 1000);
    // The buyer's public update names no currency: ignored there.
    let secret = r.body["client_secret"].as_str().unwrap().to_string();
    let r = app
        .patch_json(
            &format!("{CHECKOUTS}client/{secret}"),
            None,
            &json!({"product_id": cat.world}),
        )
        .await;
    r.expect(200);
    assert_priced(&r.body, "usd", 2000);
}

#[actix_web::test]
async fn custom_amounts_are_within_the_currencys_bounds() {
    let app = spawn().await;
    let cat = catalog(&app, "custom").await;
    // Yen: at least ¥80, written as it is.
    let r = create(
        &app,
        json!({"products": [cat.tip], "currency": "jpy", "amount": 79}),
    )
    .await;
    let item = r.expect_invalid_at(json!(["body", "amount"]));
    assert_eq!(item["type"], "greater_than_equal", "{item}");
    let c = created(
        &app,
        json!({"products": [cat.tip], "currency": "jpy", "amount": 80}),
    )
    .await;
    assert_eq!((&c["currency"], &c["amount"]), (&json!("jpy"), &json!(80)));
    // Dollars: at least 50 cents.
    let r = create(
        &app,
        json!({"products": [cat.tip], "currency": "usd", "amount": 49}),
    )
    .await;
    r.expect_invalid_at(json!(["body", "amount"]));
    let id = c["id"].as_str().unwrap();
    let r = patch(&app, id, json!({"amount": 100_000_000})).await;
    let item = r.expect_invalid_at(json!(["body", "amount"]));
    assert_eq!(item["type"], "less_than_equal", "{item}");
    let r = patch(&app, id, json!({"amount": 12_345})).await;
    r.expect(200);
    assert_eq!(r.body["amount"], 12_345);
}

async fn discount(app: &TestApp, body: Value) -> String {
    let r = app
        .post_json("/v1/discounts/", Some(&app.token), &body)
        .await;
    r.expect(201);
    r.id()
}

#[actix_web::test]
async fn a_fixed_discount_applies_only_in_its_currencies() {
    let app = spawn().await;
    let cat = catalog(&app, "discounts").await;
    let dollars = discount(
        &app,
        json!({"name": "Five dollars", "type": "fixed", "amount": 500, "currency": "usd",
               "duration": "once", "organization_id": cat.org}),
    )
    .await;
    let tenth = discount(
        &app,
        json!({"name": "Tenth", "type": "percentage", "basis_points": 1000,
               "duration": "once", "organization_id": cat.org}),
    )
    .await;
    let r = create(
        &app,
        json!({"products": [cat.world], "currency": "eur", "discount_id": dollars}),
    )
    .await;
    assert_refused(
        &r,
        json!(["body", "discount_id"]),
        "Discount does not exist.",
    );
    let c = created(
        &app,
        json!({"products": [cat.world], "currency": "eur", "discount_id": tenth}),
    )
    .await;
    assert_eq!(c["discount_amount"], 180, "{c}");
    let c = created(
        &app,
        json!({"products": [cat.world], "currency": "usd", "discount_id": dollars}),
    )
    .await;
    assert_eq!(c["discount_amount"], 500, "{c}");
    let id = c["id"].as_str().unwrap();
    // On update, by id.
    let e = created(&app, json!({"products": [cat.world], "currency": "eur"})).await;
    let r = patch(
        &app,
        e["id"].as_str().unwrap(),
        json!({"discount_id": dollars}),
    )
    .await;
    assert_refused(
        &r,
        json!(["body", "discount_id"]),
        "Discount does not exist.",
    );
    // Another currency checks the applied discount again: the dollars no longer apply.
    let r = patch(&app, id, json!({"currency": "eur"})).await;
    r.expect(200);
    assert_priced(&r.body, "eur", 1800);
    assert!(r.body["discount_id"].is_null(), "{}", r.body);
    assert_eq!(r.body["discount_amount"], 0);
    // A percentage follows the currency.
    let r = patch(&app, id, json!({"discount_id": tenth})).await;
    r.expect(200);
    let r = patch(&app, id, json!({"currency": "jpy"})).await;
    r.expect(200);
    assert_eq!(r.body["discount_id"], json!(tenth));
    assert_eq!(r.body["discount_amount"], 300);
}

async fn confirm_and_order(app: &TestApp, org: &str, c: &Value) -> Value {
    let secret = c["client_secret"].as_str().unwrap();
    let r = app
        .post_json(
            &format!("{CHECKOUTS}client/{secret}/confirm"),
            None,
            &json!({"customer_name": "Ada Lovelace", "customer_email": "ada@example.com",
                    "customer_billing_address": {"country": "US"},
                    "confirmation_token_id": "tok_visa"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["currency"], c["currency"], "{}", r.body);
    let r = app
        .send(app.request(
            Method::GET,
            &format!("/v1/orders/?organization_id={org}&limit=100"),
            Some(&app.token),
        ))
        .await;
    r.expect(200);
    let items = r.items();
    items
        .into_iter()
        .find(|o| o["checkout_id"] == c["id"])
        .unwrap_or_else(|| panic!("no order of checkout {}", c["id"]))
}

#[actix_web::test]
async fn a_confirmed_checkout_orders_in_its_currency() {
    let app = spawn().await;
    let cat = catalog(&app, "orders").await;
    let c = created(&app, json!({"products": [cat.world], "currency": "eur"})).await;
    let order = confirm_and_order(&app, &cat.org, &c).await;
    assert_eq!(order["currency"], "eur", "{order}");
    assert_eq!(order["subtotal_amount"], 1800, "{order}");
    assert_eq!(order["net_amount"], 1800, "{order}");
    // Yen, unscaled: ¥3,000 is 3000.
    let c = created(&app, json!({"products": [cat.world], "currency": "jpy"})).await;
    let order = confirm_and_order(&app, &cat.org, &c).await;
    assert_eq!(order["currency"], "jpy", "{order}");
    assert_eq!(order["subtotal_amount"], 3000, "{order}");
    assert_eq!(order["net_amount"], 3000, "{order}");
}

#[actix_web::test]
async fn a_free_subscription_is_in_its_checkouts_currency() {
    let app = spawn().await;
    let cat = catalog(&app, "free").await;
    let free = |c: &str| {
        json!({"type": "recurring", "amount_type": "free", "recurring_interval": "month",
               "price_currency": c})
    };
    let plan = product(
        &app,
        &cat.org,
        "Free plan",
        json!([free("usd"), free("eur")]),
    )
    .await;
    let c = created(&app, json!({"products": [plan], "currency": "eur"})).await;
    assert_eq!(c["currency"], "eur", "{c}");
    let secret = c["client_secret"].as_str().unwrap();
    let r = app
        .post_json(
            &format!("{CHECKOUTS}client/{secret}/confirm"),
            None,
            &json!({"customer_name": "Ada Lovelace", "customer_email": "ada@example.com",
                    "customer_billing_address": {"country": "FR"}}),
        )
        .await;
    r.expect(200);
    let r = app
        .send(app.request(
            Method::GET,
            &format!("/v1/subscriptions/?organization_id={}&limit=100", cat.org),
            Some(&app.token),
        ))
        .await;
    r.expect(200);
    let items = r.items();
    let s = items
        .iter()
        .find(|s| s["checkout_id"] == c["id"])
        .unwrap_or_else(|| panic!("no subscription of checkout {}: {items:?}", c["id"]));
    assert_eq!(s["currency"], "eur", "{s}");
    assert_eq!(s["amount"], 0, "{s}");
}

#[actix_web::test]
async fn a_bad_geoip_database_stops_the_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a-database.mmdb");
    std::fs::write(&path, b"not a MaxMind database").unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.checkout.geoip_database = path;
    let err = match tollgate::startup::Application::build(settings).await {
        Ok(_) => panic!("started with a bad GeoIP database"),
        Err(e) => format!("{e:#}"),
    };
    assert!(err.contains("checkout.geoip_database"), "{err}");
    assert!(err.contains("not-a-database.mmdb"), "{err}");
}

#[actix_web::test]
async fn a_checkout_link_is_presented_in_the_currency_of_the_requests_country() {
    let app = spawn().await;
    let cat = catalog(&app, "links").await;
    let r = app
        .post_json(
            "/v1/checkout-links/",
            Some(&app.token),
            &json!({"payment_processor": "stripe", "products": [cat.world]}),
        )
        .await;
    r.expect(201);
    let url = r.body["url"].as_str().unwrap().to_string();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(crate::helpers::CLIENT_TIMEOUT)
        .build()
        .unwrap();
    for (ip, currency, amount) in [
        ("126.3.4.5", "jpy", 3000),
        ("81.3.4.5", "eur", 1800),
        ("8.8.4.4", "usd", 2000),
    ] {
        let r = app.send(http.get(&url).header("X-Forwarded-For", ip)).await;
        assert_eq!(r.status, 307, "{}", r.body);
        let location = r.header("location");
        let secret = location.rsplit('/').next().unwrap().to_string();
        let r = app.get(&format!("{CHECKOUTS}client/{secret}"), None).await;
        r.expect(200);
        assert_eq!(r.body["currency"], currency, "{ip}: {}", r.body);
        assert_eq!(r.body["amount"], amount, "{ip}: {}", r.body);
    }
}
