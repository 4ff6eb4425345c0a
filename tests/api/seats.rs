//! Seat-based prices end to end: a product sold by the seat, a checkout of 3 seats priced
//! by its tier, and the keys the purchase grants under each quantity rule.

use serde_json::{json, Value};

use crate::benefit_grants::key_of;
use crate::checkout_pages::{assert_page, page};
use crate::helpers::{spawn_app, Reply, TestApp};

async fn post(app: &TestApp, path: &str, body: Value) -> Reply {
    app.post_json(path, Some(&app.token), &body).await
}

async fn key_benefit(app: &TestApp, org: &str, quantity: &str) -> String {
    let r = post(
        app,
        "/v1/benefits/",
        json!({"type": "license_keys", "description": format!("Key {quantity}"),
               "organization_id": org,
               "properties": {"prefix": "TG", "quantity": quantity,
                              "activations": {"limit": 2, "enable_customer_admin": false}}}),
    )
    .await;
    r.expect(201);
    r.id()
}

#[actix_web::test]
async fn a_purchase_of_three_seats_grants_per_each_benefits_quantity_rule() {
    let app = spawn_app().await;
    let org = app.created_org_as(&app.token, "seats", "seats").await["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let one_key = key_benefit(&app, &org, "one_key").await;
    let per_unit = key_benefit(&app, &org, "key_per_unit").await;
    let r = post(
        &app,
        "/v1/products/",
        json!({"name": "Team", "organization_id": org,
               "prices": [{"amount_type": "seat_based", "seat_tiers": {"tiers": [
                   {"min_seats": 3, "max_seats": 4, "price_per_seat": 1000},
                   {"min_seats": 1, "max_seats": 2, "price_per_seat": 1200},
                   {"min_seats": 5, "max_seats": 10, "price_per_seat": 800}]}}]}),
    )
    .await;
    r.expect(201);
    let price = &r.body["prices"][0];
    assert_eq!(price["amount_type"], "seat_based");
    assert_eq!(price["seat_tiers"]["seat_tier_type"], "volume");
    assert_eq!(price["seat_tiers"]["minimum_seats"], 1);
    assert_eq!(price["seat_tiers"]["maximum_seats"], 10);
    assert_eq!(price["seat_tiers"]["tiers"][0]["price_per_seat"], 1200);
    let product = r.id();
    post(
        &app,
        &format!("/v1/products/{product}/benefits"),
        json!({"benefits": [one_key, per_unit]}),
    )
    .await
    .expect(200);

    // Too many seats, or seats for nothing seat-based: 422 at `seats`.
    let r = post(
        &app,
        "/v1/checkouts/",
        json!({"products": [product], "seats": 11}),
    )
    .await;
    r.expect_invalid_at(json!(["body", "seats"]));
    let r = post(
        &app,
        "/v1/checkouts/",
        json!({"products": [product], "seats": 0}),
    )
    .await;
    r.expect_invalid_at(json!(["body", "seats"]));

    // The fewest seats by default, then 3 at the tier of 3 (volume pricing).
    let checkout = post(&app, "/v1/checkouts/", json!({"products": [product]})).await;
    checkout.expect(201);
    assert_eq!(checkout.body["seats"], 1);
    assert_eq!(checkout.body["min_seats"], 1);
    assert_eq!(checkout.body["max_seats"], 10);
    assert_eq!(checkout.body["amount"], 1200);
    let secret = checkout.body["client_secret"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let r = app
        .patch_json(
            &format!("/v1/checkouts/client/{secret}"),
            None,
            &json!({"seats": 3}),
        )
        .await;
    r.expect(200);
    assert_eq!(
        (r.body["seats"].clone(), r.body["amount"].clone()),
        (json!(3), json!(3000))
    );
    let r = app
        .post_json(
            &format!("/v1/checkouts/client/{secret}/confirm"),
            None,
            &json!({"customer_name": "Ada Lovelace", "customer_email": "ada@seats.example",
                    "customer_billing_address": {"country": "FR"},
                    "confirmation_token_id": "tok_visa"}),
        )
        .await;
    r.expect(200);
    let id = checkout.id();
    let mut customer = String::new();
    for _ in 0..100 {
        let c = app
            .get(&format!("/v1/checkouts/{id}"), Some(&app.token))
            .await;
        if c.body["status"] == "succeeded" {
            customer = c.body["customer_id"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!customer.is_empty(), "the checkout did not succeed");

    // One key with 3 × 2 activations; three keys of 2 each.
    let one = key_of(&app, &customer, &one_key).await;
    assert_eq!(one.len(), 1, "{one:?}");
    assert_eq!(one[0]["limit_activations"], 6);
    let per = key_of(&app, &customer, &per_unit).await;
    assert_eq!(per.len(), 3, "{per:?}");
    assert!(per.iter().all(|k| k["limit_activations"] == 2));
    let mut values: Vec<&str> = per.iter().filter_map(|k| k["key"].as_str()).collect();
    values.dedup();
    assert_eq!(values.len(), 3);

    // A fixed price takes no seats.
    let r = post(
        &app,
        "/v1/products/",
        json!({"name": "Solo", "organization_id": org,
               "prices": [{"amount_type": "fixed", "price_amount": 900}]}),
    )
    .await;
    r.expect(201);
    let r = post(
        &app,
        "/v1/checkouts/",
        json!({"products": [r.id()], "seats": 2}),
    )
    .await;
    let item = r.expect_invalid_at(json!(["body", "seats"]));
    assert_eq!(item["msg"], "Seats can only be set for seat-based pricing.");
}

/// A checkout link with seats preset: accepted for seat-based products only, within their
/// tiers; the checkouts it opens start with those seats, priced by their tier.
#[actix_web::test]
async fn a_link_presets_the_seats_of_the_checkouts_it_opens() {
    let app = spawn_app().await;
    let org = app
        .created_org_as(&app.token, "linkseats", "linkseats")
        .await["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let product = |name: &str, price: Value| {
        let body = json!({"name": name, "organization_id": org, "prices": [price]});
        let app = &app;
        async move {
            let r = post(app, "/v1/products/", body).await;
            r.expect(201);
            r.id()
        }
    };
    let team = product(
        "Team",
        json!({"amount_type": "seat_based", "seat_tiers": {"tiers": [
            {"min_seats": 1, "max_seats": 2, "price_per_seat": 1200},
            {"min_seats": 3, "max_seats": 10, "price_per_seat": 1000}]}}),
    )
    .await;
    let solo = product("Solo", json!({"amount_type": "fixed", "price_amount": 900})).await;
    let link_of = |products: Vec<&str>, seats: Value| json!({"payment_processor": "stripe", "products": products, "seats": seats});

    // Refused: a product not sold by the seat, seats its tiers don't sell, seats below 1.
    let r = post(
        &app,
        "/v1/checkout-links/",
        link_of(vec![&team, &solo], json!(3)),
    )
    .await;
    let item = r.expect_invalid_at(json!(["body", "seats"]));
    assert_eq!(
        item["msg"],
        "Seats can only be preconfigured when all products use seat-based pricing."
    );
    let r = post(&app, "/v1/checkout-links/", link_of(vec![&team], json!(11))).await;
    r.expect_invalid_at(json!(["body", "seats"]));
    let r = post(&app, "/v1/checkout-links/", link_of(vec![&team], json!(0))).await;
    r.expect_invalid_at(json!(["body", "seats"]));

    let link = post(&app, "/v1/checkout-links/", link_of(vec![&team], json!(3))).await;
    link.expect(201);
    assert_eq!(link.body["seats"], 3);
    let url = link.body["url"].as_str().unwrap_or_default().to_string();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default();
    let r = app.send(http.get(&url)).await;
    assert_eq!(r.status, 307, "{}", r.body);
    let location = r.header("location");
    let secret = location.rsplit('/').next().unwrap_or_default().to_string();
    let c = app
        .get(&format!("/v1/checkouts/client/{secret}"), None)
        .await;
    c.expect(200);
    assert_eq!(
        (c.body["seats"].clone(), c.body["amount"].clone()),
        (json!(3), json!(3000))
    );
    // A link sets no bounds of its own: the checkout sells what the price sells.
    assert_eq!(
        (c.body["min_seats"].clone(), c.body["max_seats"].clone()),
        (json!(1), json!(10))
    );

    // Adding a product not sold by the seat keeps the seats refused; clearing them works.
    let path = format!("/v1/checkout-links/{}", link.id());
    let r = app
        .patch_json(&path, Some(&app.token), &json!({"products": [team, solo]}))
        .await;
    r.expect_invalid_at(json!(["body", "seats"]));
    let r = app
        .patch_json(&path, Some(&app.token), &json!({"seats": null}))
        .await;
    r.expect(200);
    assert!(r.body["seats"].is_null());
}

/// The seller's bounds on a checkout's seats (Polar's `min_seats` and `max_seats` of
/// create): refused as Polar refuses them, shown narrowed in the answer and on the hosted
/// page, and enforced on every later update and on confirm.
#[actix_web::test]
async fn a_seller_bounds_the_seats_of_a_checkout() {
    let app = spawn_app().await;
    let org = app
        .created_org_as(&app.token, "seatbounds", "seatbounds")
        .await["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let product = |name: &str, price: Value| {
        let body = json!({"name": name, "organization_id": org, "prices": [price]});
        let app = &app;
        async move {
            let r = post(app, "/v1/products/", body).await;
            r.expect(201);
            r.id()
        }
    };
    let team = product(
        "Team",
        json!({"amount_type": "seat_based", "seat_tiers": {"tiers": [
            {"min_seats": 1, "max_seats": 2, "price_per_seat": 1200},
            {"min_seats": 3, "max_seats": 10, "price_per_seat": 1000}]}}),
    )
    .await;
    let solo = product("Solo", json!({"amount_type": "fixed", "price_amount": 900})).await;

    // Refused: counts out of 1-1000, bounds out of order, seats outside them, bounds the
    // price can't meet, bounds of a price that is not seat-based.
    let refusals = [
        (
            json!({"products": [team], "min_seats": 0}),
            json!(["body", "min_seats"]),
            "Input should be greater than or equal to 1",
        ),
        (
            json!({"products": [team], "max_seats": 1001}),
            json!(["body", "max_seats"]),
            "Input should be less than or equal to 1000",
        ),
        (
            json!({"products": [team], "min_seats": 5, "max_seats": 4}),
            json!(["body"]),
            "Value error, min_seats must be less than or equal to max_seats",
        ),
        (
            json!({"products": [team], "seats": 2, "min_seats": 3}),
            json!(["body"]),
            "Value error, seats must be greater than or equal to min_seats",
        ),
        (
            json!({"products": [team], "seats": 9, "max_seats": 8}),
            json!(["body"]),
            "Value error, seats must be less than or equal to max_seats",
        ),
        (
            json!({"products": [team], "min_seats": 11}),
            json!(["body", "min_seats"]),
            "The price doesn't sell 11 seats.",
        ),
        (
            json!({"products": [solo], "min_seats": 2}),
            json!(["body", "min_seats"]),
            "min_seats can only be set for seat-based pricing.",
        ),
        (
            json!({"products": [solo], "max_seats": 2}),
            json!(["body", "max_seats"]),
            "max_seats can only be set for seat-based pricing.",
        ),
    ];
    for (body, loc, msg) in refusals {
        let r = post(&app, "/v1/checkouts/", body.clone()).await;
        let item = r.expect_invalid_at(loc);
        assert!(
            item["msg"].as_str().unwrap_or_default().contains(msg),
            "{body}: {item}"
        );
    }

    // 3 to 5 seats: the fewest by default, the narrowed bounds in the answer.
    let checkout = post(
        &app,
        "/v1/checkouts/",
        json!({"products": [team], "min_seats": 3, "max_seats": 5}),
    )
    .await;
    checkout.expect(201);
    let fields = |b: &Value| {
        ["seats", "min_seats", "max_seats", "amount"].map(|f| b[f].as_i64().unwrap_or(-1))
    };
    assert_eq!(fields(&checkout.body), [3, 3, 5, 3000]);
    let id = checkout.id();
    let secret = checkout.body["client_secret"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    // The hosted page's input is bounded by them.
    let r = page(&app, &format!("/checkout/{secret}")).await;
    let body = assert_page(&r, 200);
    for needle in [r#"min="3" max="5" value="3""#, "From 3 to 5 seats."] {
        assert!(body.contains(needle), "missing {needle:?} in {body}");
    }

    // Updates (the buyer's and the seller's) outside them are refused at `seats`.
    let client = format!("/v1/checkouts/client/{secret}");
    for (n, msg) in [
        (2, "Input should be greater than or equal to 3"),
        (6, "Input should be less than or equal to 5"),
    ] {
        let r = app.patch_json(&client, None, &json!({"seats": n})).await;
        let item = r.expect_invalid_at(json!(["body", "seats"]));
        assert_eq!(item["msg"], msg);
        let r = app
            .patch_json(
                &format!("/v1/checkouts/{id}"),
                Some(&app.token),
                &json!({"seats": n}),
            )
            .await;
        let item = r.expect_invalid_at(json!(["body", "seats"]));
        assert_eq!(item["msg"], msg);
    }
    let r = app.patch_json(&client, None, &json!({"seats": 5})).await;
    r.expect(200);
    assert_eq!(fields(&r.body), [5, 3, 5, 5000]);

    // A confirm outside them is refused too, and leaves the checkout open.
    let buyer = json!({"customer_name": "Ada Lovelace", "customer_email": "ada@bounds.example",
                       "customer_billing_address": {"country": "FR"},
                       "confirmation_token_id": "tok_visa"});
    let mut over = buyer.clone();
    over["seats"] = json!(6);
    let r = app
        .post_json(&format!("{client}/confirm"), None, &over)
        .await;
    r.expect_invalid_at(json!(["body", "seats"]));
    let r = app
        .get(&format!("/v1/checkouts/{id}"), Some(&app.token))
        .await;
    r.expect(200);
    assert_eq!(r.body["status"], "open");
    assert_eq!(fields(&r.body), [5, 3, 5, 5000]);
    let mut within = buyer;
    within["seats"] = json!(4);
    let r = app
        .post_json(&format!("{client}/confirm"), None, &within)
        .await;
    r.expect(200);
    assert_eq!(fields(&r.body), [4, 3, 5, 4000]);
}

async fn in_version(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    version: &str,
    body: Option<Value>,
) -> Reply {
    let req = app
        .request(method, path, Some(&app.token))
        .header("Polar-Version", version);
    app.send(match body {
        Some(b) => req.json(&b),
        None => req,
    })
    .await
}

/// 2027-01's seat-based price (`tiers: {type, tiers: [{bound, unit_amount}]}`,
/// `minimum_units`, `maximum_units`) on the way in and out, beside the 2026 `seat_tiers`
/// (which @polar-sh/sdk 1.0.1's 2027-01 types require); the earlier versions show only
/// `seat_tiers`; a fractional rate or bounds that do not rise are a 422 where they are.
#[actix_web::test]
async fn a_seat_based_price_speaks_the_2027_01_shape_in_that_version() {
    use reqwest::Method;
    let app = spawn_app().await;
    let org = app.created_org_as(&app.token, "tiers", "tiers").await["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let body = |tiers: Value| {
        json!({"name": "Team 2027", "organization_id": org, "recurring_interval": "month",
               "prices": [{"amount_type": "seat_based", "price_currency": "usd",
                           "minimum_units": 2, "tiers": tiers}]})
    };
    let r = in_version(
        &app,
        Method::POST,
        "/v1/products/",
        "2027-01",
        Some(body(json!({"type": "graduated", "tiers": [
            {"bound": 4, "unit_amount": "1000.00"}, {"bound": null, "unit_amount": 800}]}))),
    )
    .await;
    r.expect(201);
    let price = &r.body["prices"][0];
    assert_eq!(price["seat_tiers"]["tiers"][1]["min_seats"], 5, "{price}");
    assert_eq!(
        price["tiers"],
        json!({"type": "graduated", "tiers": [{"bound": 4, "unit_amount": "1000"},
                                              {"bound": null, "unit_amount": "800"}]})
    );
    assert_eq!(
        (&price["minimum_units"], &price["maximum_units"]),
        (&json!(2), &Value::Null)
    );
    let product = r.id();
    let path = format!("/v1/products/{product}");
    for version in ["2026-04", "2026-10"] {
        let r = in_version(&app, Method::GET, &path, version, None).await;
        r.expect(200);
        let old = &r.body["prices"][0];
        assert!(
            old.get("tiers").is_none() && old.get("minimum_units").is_none(),
            "{old}"
        );
        assert_eq!(
            old["seat_tiers"],
            json!({"seat_tier_type": "graduated", "minimum_seats": 2, "maximum_seats": null,
                   "tiers": [{"min_seats": 2, "max_seats": 4, "price_per_seat": 1000},
                             {"min_seats": 5, "max_seats": null, "price_per_seat": 800}]}),
            "{version}"
        );
    }
    // A checkout of 6 seats in 2027-01, priced by the tiers read from that shape
    // (graduated, the first tier billing from the first seat: 1-4 at 1000, 5-6 at 800).
    let r = in_version(
        &app,
        Method::POST,
        "/v1/checkouts/",
        "2027-01",
        Some(json!({"products": [product], "seats": 6})),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["seats"], 6);
    assert_eq!(r.body["amount"], 4 * 1000 + 2 * 800);
    assert!(
        r.body["product"]["prices"][0]["tiers"].is_object(),
        "{}",
        r.body
    );

    // Refusals, each where it is.
    let r = in_version(
        &app,
        Method::POST,
        "/v1/products/",
        "2027-01",
        Some(body(
            json!({"type": "volume", "tiers": [{"bound": 3, "unit_amount": "9.5"}]}),
        )),
    )
    .await;
    let e = r.expect_invalid_at(json!([
        "body",
        "prices",
        0,
        "tiers",
        "tiers",
        0,
        "unit_amount"
    ]));
    assert!(
        e["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("whole cents"),
        "{e}"
    );
    let r = in_version(
        &app,
        Method::POST,
        "/v1/products/",
        "2027-01",
        Some(body(
            json!({"type": "volume", "tiers": [{"bound": 1, "unit_amount": 100}]}),
        )),
    )
    .await;
    r.expect_invalid_at(json!(["body", "prices", 0, "tiers", "tiers"]));
    let old_body = json!({"name": "Old shape", "organization_id": org, "recurring_interval": "month",
        "prices": [{"amount_type": "seat_based",
                    "seat_tiers": {"tiers": [{"min_seats": 1, "price_per_seat": 500}]}}]});
    // The 2026 body is still read in 2027-01 (@polar-sh/sdk 1.0.1 sends it there); a body
    // with neither shape misses 2027-01's.
    in_version(
        &app,
        Method::POST,
        "/v1/products/",
        "2027-01",
        Some(old_body.clone()),
    )
    .await
    .expect(201);
    let mut neither = old_body;
    if let Some(p) = neither["prices"][0].as_object_mut() {
        p.remove("seat_tiers");
    }
    let r = in_version(
        &app,
        Method::POST,
        "/v1/products/",
        "2027-01",
        Some(neither),
    )
    .await;
    r.expect_invalid_at(json!(["body", "prices", 0, "tiers"]));
}
