//! Recurring seat-based purchases end to end, on a manual clock: 3 seats of a monthly
//! seat-based product under each key quantity rule, the seats on the subscription, its
//! orders and the customer state, a renewal that keeps the keys and bills the tier, plan
//! changes between seat-based and other products, and the revocation that takes every
//! key back.

use chrono::Duration;
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate::domain::ids::{OrderId, SubscriptionId};
use tollgate_actors::subscription::renewal_order_id;

use crate::subscriptions::{spawn_app_with_clock, ClockApp};

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap_or_default().to_string()
}

async fn post(app: &ClockApp, path: &str, body: Value) -> crate::helpers::Reply {
    app.post_json(path, Some(&app.token), &body).await
}

async fn key_benefit(app: &ClockApp, org: &str, quantity: &str) -> String {
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
    id(&r.body)
}

/// A monthly product of `org` with `price` (a `prices` item) granting `benefits`.
async fn monthly(app: &ClockApp, org: &str, name: &str, price: Value, benefits: &[&str]) -> String {
    let r = post(
        app,
        "/v1/products/",
        json!({"name": name, "organization_id": org, "recurring_interval": "month",
               "prices": [price]}),
    )
    .await;
    r.expect(201);
    let product = id(&r.body);
    post(
        app,
        &format!("/v1/products/{product}/benefits"),
        json!({"benefits": benefits}),
    )
    .await
    .expect(200);
    product
}

fn seat_price(per_seat: i64) -> Value {
    json!({"amount_type": "seat_based", "seat_tiers": {"tiers": [
        {"min_seats": 1, "max_seats": 2, "price_per_seat": per_seat + 200},
        {"min_seats": 3, "max_seats": 10, "price_per_seat": per_seat}]}})
}

/// The license keys of `benefit` held by `customer`.
async fn keys_of(app: &ClockApp, customer: &str, benefit: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/license-keys/?benefit_id={benefit}&limit=100"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    r.items()
        .into_iter()
        .filter(|k| k["customer_id"] == customer)
        .collect()
}

/// Buys `seats` seats of `product` (checkout, seats, confirm; no seats for a price that
/// is not seat-based) and waits for the checkout to succeed: the subscription it created.
async fn buy(app: &ClockApp, product: &str, seats: Option<u32>, email: &str) -> Value {
    let mut body = json!({"products": [product]});
    if let Some(n) = seats {
        body["seats"] = json!(n);
    }
    let c = post(app, "/v1/checkouts/", body).await;
    c.expect(201);
    let secret = c.body["client_secret"].as_str().unwrap_or_default();
    app.post_json(
        &format!("/v1/checkouts/client/{secret}/confirm"),
        None,
        &json!({"customer_name": "Ada Lovelace", "customer_email": email,
                "customer_billing_address": {"country": "FR"},
                "confirmation_token_id": "tok_visa"}),
    )
    .await
    .expect(200);
    let checkout = id(&c.body);
    for _ in 0..100 {
        let r = app
            .get(&format!("/v1/checkouts/{checkout}"), Some(&app.token))
            .await;
        if r.body["status"] == "succeeded" {
            let customer = r.body["customer_id"].as_str().unwrap_or_default();
            let subs = app
                .get(
                    &format!("/v1/subscriptions/?customer_id={customer}"),
                    Some(&app.token),
                )
                .await;
            subs.expect(200);
            let found = subs
                .items()
                .into_iter()
                .find(|s| s["checkout_id"] == checkout.as_str());
            return found.unwrap_or_else(|| panic!("no subscription of {checkout}"));
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the checkout did not succeed");
}

#[actix_web::test]
async fn three_seats_renew_with_their_keys_and_a_revocation_takes_them_all() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "seatsubs").await.to_string();
    let one_key = key_benefit(&app, &org, "one_key").await;
    let per_unit = key_benefit(&app, &org, "key_per_unit").await;
    let product = monthly(&app, &org, "Team", seat_price(1000), &[&one_key, &per_unit]).await;

    let s = buy(&app, &product, Some(3), "ada@seatsubs.example").await;
    let sid = id(&s);
    let customer = s["customer_id"].as_str().unwrap_or_default().to_string();
    // The subscription has its seats and their tier's amount, everywhere it shows.
    assert_eq!(
        (s["seats"].clone(), s["amount"].clone()),
        (json!(3), json!(3000))
    );
    let full = app
        .get(&format!("/v1/subscriptions/{sid}"), Some(&app.token))
        .await;
    full.expect(200);
    assert_eq!(full.body["seats"], 3);
    let state = app
        .get(&format!("/v1/customers/{customer}/state"), Some(&app.token))
        .await;
    state.expect(200);
    assert_eq!(state.body["active_subscriptions"][0]["seats"], 3);
    let orders = app
        .get(
            &format!("/v1/orders/?customer_id={customer}"),
            Some(&app.token),
        )
        .await;
    orders.expect(200);
    let first = orders.items();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0]["seats"], 3);
    assert_eq!(first[0]["billing_reason"], "subscription_create");
    assert_eq!(first[0]["subscription"]["seats"], 3);
    // The subscriptions export fills its Seats column.
    let (header, rows) = crate::exports::csv_of(
        &app,
        "/v1/subscriptions/export?columns=email&columns=seats",
        &app.token,
    )
    .await;
    assert_eq!(header, ["Email", "Seats"]);
    assert_eq!(rows, [["ada@seatsubs.example", "3"]]);

    // One key with 3 × 2 activations; three keys of 2 each.
    let one = keys_of(&app, &customer, &one_key).await;
    let per = keys_of(&app, &customer, &per_unit).await;
    assert_eq!((one.len(), per.len()), (1, 3), "{one:?} {per:?}");
    assert_eq!(one[0]["limit_activations"], 6);
    assert!(per.iter().all(|k| k["limit_activations"] == 2));

    // The renewal bills the tier for the same seats and keeps every key.
    let end = s["current_period_end"].as_str().unwrap_or_default();
    let end = chrono::DateTime::parse_from_rfc3339(end)
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(|e| panic!("period end: {e}"));
    app.clock.set(end + Duration::hours(1));
    let report = app.sweep().await;
    assert_eq!((report.renewed, report.errors), (1, 0));
    let sub_id: SubscriptionId = sid.parse().unwrap_or_else(|e| panic!("{e:?}"));
    let order_id: OrderId = renewal_order_id(sub_id, 1);
    let stored = app.order(order_id).await.expect("the renewal order");
    assert_eq!((stored.seats, stored.amount), (Some(3), 3000));
    let renewal = app
        .get(&format!("/v1/orders/{order_id}"), Some(&app.token))
        .await;
    renewal.expect(200);
    assert_eq!(renewal.body["billing_reason"], "subscription_cycle");
    assert_eq!(renewal.body["seats"], 3);
    assert_eq!(renewal.body["net_amount"], 3000);
    let one_after = keys_of(&app, &customer, &one_key).await;
    let per_after = keys_of(&app, &customer, &per_unit).await;
    let ids = |ks: &[Value]| {
        let mut v: Vec<String> = ks.iter().map(id).collect();
        v.sort();
        v
    };
    assert_eq!(ids(&one_after), ids(&one));
    assert_eq!(ids(&per_after), ids(&per));
    assert!(one_after
        .iter()
        .chain(per_after.iter())
        .all(|k| k["status"] == "granted"));
    assert_eq!(one_after[0]["limit_activations"], 6);
    let after = app
        .get(&format!("/v1/subscriptions/{sid}"), Some(&app.token))
        .await;
    assert_eq!(
        (after.body["seats"].clone(), after.body["amount"].clone()),
        (json!(3), json!(3000))
    );

    // Another organization's member does not see it.
    let stranger = app
        .user_with_scopes(
            "eve@seatsubs.example",
            &[Scope::SubscriptionsRead, Scope::OrdersRead],
        )
        .await;
    app.get(&format!("/v1/subscriptions/{sid}"), Some(&stranger))
        .await
        .expect(404);
    app.get(&format!("/v1/orders/{order_id}"), Some(&stranger))
        .await
        .expect(404);

    // Revoked: all four keys are revoked.
    app.send(app.request(
        reqwest::Method::DELETE,
        &format!("/v1/subscriptions/{sid}"),
        Some(&app.token),
    ))
    .await
    .expect(200);
    app.sweep().await;
    let all: Vec<Value> = keys_of(&app, &customer, &one_key)
        .await
        .into_iter()
        .chain(keys_of(&app, &customer, &per_unit).await)
        .collect();
    assert_eq!(all.len(), 4);
    assert!(all.iter().all(|k| k["status"] == "revoked"), "{all:?}");
}

#[actix_web::test]
async fn a_seat_subscription_changes_only_to_seat_based_products_and_keeps_its_seats() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "seatplans").await.to_string();
    let per_unit = key_benefit(&app, &org, "key_per_unit").await;
    let extra = key_benefit(&app, &org, "key_per_unit").await;
    let team = monthly(&app, &org, "Team", seat_price(1000), &[&per_unit]).await;
    let bigger = monthly(
        &app,
        &org,
        "Business",
        seat_price(1500),
        &[&per_unit, &extra],
    )
    .await;
    let solo = monthly(
        &app,
        &org,
        "Solo",
        json!({"amount_type": "fixed", "price_amount": 900}),
        &[&per_unit],
    )
    .await;
    let narrow = monthly(
        &app,
        &org,
        "Duo",
        json!({"amount_type": "seat_based", "seat_tiers": {"tiers": [
            {"min_seats": 1, "max_seats": 2, "price_per_seat": 700}]}}),
        &[],
    )
    .await;

    let s = buy(&app, &team, Some(3), "ada@seatplans.example").await;
    let sid = id(&s);
    let customer = s["customer_id"].as_str().unwrap_or_default().to_string();
    let patch = |body: Value| {
        let path = format!("/v1/subscriptions/{sid}");
        let app = &app;
        async move { app.patch_json(&path, Some(&app.token), &body).await }
    };

    // Seat-based to fixed: Polar's 422.
    let r = patch(json!({"product_id": solo, "proration_behavior": "prorate"})).await;
    let item = r.expect_invalid_at(json!(["body", "product_id"]));
    assert_eq!(
        item["msg"],
        "Can't switch from a seat-based to a non-seat-based product."
    );
    // To seat-based tiers that do not sell 3 seats: 422.
    let r = patch(json!({"product_id": narrow, "proration_behavior": "prorate"})).await;
    r.expect_invalid_at(json!(["body", "product_id"]));

    // Seat-based to seat-based: the 3 seats are kept, at the new tier's amount, and the
    // new benefit grants a key per seat.
    let r = patch(json!({"product_id": bigger, "proration_behavior": "prorate"})).await;
    r.expect(200);
    assert_eq!(r.body["product_id"], bigger.as_str());
    assert_eq!(
        (r.body["seats"].clone(), r.body["amount"].clone()),
        (json!(3), json!(4500))
    );
    assert_eq!(keys_of(&app, &customer, &per_unit).await.len(), 3);
    let extra_keys = keys_of(&app, &customer, &extra).await;
    assert_eq!(extra_keys.len(), 3, "{extra_keys:?}");
    let mut distinct: Vec<String> = extra_keys.iter().map(id).collect();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3);

    // A subscription that is not seat-based has no seats, and does not move to a
    // seat-based product.
    let fixed = buy(&app, &solo, None, "bob@seatplans.example").await;
    assert!(fixed["seats"].is_null(), "{fixed}");
    let r = app
        .patch_json(
            &format!("/v1/subscriptions/{}", id(&fixed)),
            Some(&app.token),
            &json!({"product_id": team, "proration_behavior": "prorate"}),
        )
        .await;
    let item = r.expect_invalid_at(json!(["body", "product_id"]));
    assert_eq!(
        item["msg"],
        "Can't switch from a non-seat-based to a seat-based product."
    );
    let order = app
        .get(
            &format!(
                "/v1/orders/?customer_id={}",
                fixed["customer_id"].as_str().unwrap_or_default()
            ),
            Some(&app.token),
        )
        .await;
    assert!(order.items()[0]["seats"].is_null());
}
