//! Issue 51: a metered subscription renewed on a manual clock bills the ended period's
//! usage beside the next period's fixed price (`polar-2026.md` §7.5): one line per
//! metered price, consumed less credited, rounded half away from zero, capped, labelled
//! as Polar labels it; each event is billed in exactly one period, a retried renewal
//! bills the same, and a trial's usage is not billed.

use std::str::FromStr;

use chrono::Duration;
use serde_json::{json, Value};
use tollgate::domain::ids::{OrganizationId, ProductId};
use tollgate::domain::product::{Price, Product};
use tollgate_actors::subscription::renewal_order_id;

use crate::subscriptions::{purchase, spawn_app_with_clock, t0, ClockApp};

/// A meter counting `api_call` events.
pub(crate) async fn meter(app: &ClockApp, org: OrganizationId) -> String {
    let r = app
        .post_json(
            "/v1/meters/",
            Some(&app.token),
            &json!({"name": "API calls", "organization_id": org,
                    "filter": {"conjunction": "and",
                               "clauses": [{"property": "name", "operator": "eq", "value": "api_call"}]},
                    "aggregation": {"func": "count"}}),
        )
        .await;
    r.expect(201);
    r.body["id"].as_str().unwrap().to_string()
}

/// A monthly product of 15.00 plus half a cent per call, capped at `cap` cents.
pub(crate) async fn product(
    app: &ClockApp,
    org: OrganizationId,
    meter: &str,
    cap: Option<i64>,
) -> Product {
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": "API plan", "organization_id": org, "recurring_interval": "month",
                    "prices": [
                        {"amount_type": "fixed", "price_amount": 1500, "price_currency": "usd"},
                        {"amount_type": "metered_unit", "price_currency": "usd", "meter_id": meter,
                         "unit_amount": "0.5", "cap_amount": cap}]}),
        )
        .await;
    r.expect(201);
    let id = ProductId::from_str(r.body["id"].as_str().unwrap()).unwrap();
    app.state
        .store
        .get::<Product>(&id.key())
        .await
        .unwrap()
        .unwrap()
        .value
}

/// `n` calls of the customer, with external ids `{tag}-{i}`, ingested now (in requests of
/// at most 1,000 events); the summed `{inserted, duplicates}`.
pub(crate) async fn calls(
    app: &ClockApp,
    org: OrganizationId,
    customer: &str,
    tag: &str,
    n: usize,
) -> Value {
    let events: Vec<Value> = (0..n)
        .map(|i| {
            json!({"name": "api_call", "customer_id": customer, "organization_id": org,
                   "external_id": format!("{tag}-{i}")})
        })
        .collect();
    let (mut inserted, mut duplicates) = (0, 0);
    for chunk in events.chunks(1000) {
        let r = app
            .post_json(
                "/v1/events/ingest",
                Some(&app.token),
                &json!({ "events": chunk }),
            )
            .await;
        assert_eq!(
            r.status,
            200,
            "{}",
            &r.body.to_string()[..300.min(r.body.to_string().len())]
        );
        inserted += r.body["inserted"].as_i64().unwrap();
        duplicates += r.body["duplicates"].as_i64().unwrap();
    }
    json!({"inserted": inserted, "duplicates": duplicates})
}

/// The product's metered price, or its fixed one.
pub(crate) fn price_of(product: &Product, metered: bool) -> Price {
    product
        .prices
        .iter()
        .find(|p| p.kind.is_metered() == metered)
        .expect("the test product has a fixed and a metered price")
        .clone()
}

async fn order_json(app: &ClockApp, id: impl std::fmt::Display) -> Value {
    let r = app.get(&format!("/v1/orders/{id}"), Some(&app.token)).await;
    r.expect(200);
    r.body
}

#[actix_web::test]
async fn a_metered_subscription_bills_each_periods_usage_once_at_its_renewal() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "usage-billing").await;
    let meter_id = meter(&app, org).await;
    let product = product(&app, org, &meter_id, None).await;
    let customer = app.customer(&app.token, org, "jane@example.com").await;
    let fixed = price_of(&product, false);
    let metered = price_of(&product, true);
    let mut bought = purchase(&product, &customer, None);
    bought.price = fixed.clone();
    bought.amount = Some(1500);
    let s = app.subscribe(bought, t0()).await;
    let cid = customer.id.to_string();

    // Period 1: 1,250 calls (and 10 sent again: duplicates, not counted).
    app.clock.set(t0() + Duration::days(3));
    assert_eq!(calls(&app, org, &cid, "p1", 1250).await["inserted"], 1250);
    let again = calls(&app, org, &cid, "p1", 10).await;
    assert_eq!(
        (again["inserted"].as_i64(), again["duplicates"].as_i64()),
        (Some(0), Some(10))
    );
    let end = s.current_period_end.unwrap();
    app.clock.set(end + Duration::minutes(5));
    assert_eq!(app.sweep().await.renewed, 1);
    let first = app.order(renewal_order_id(s.id, 1)).await.unwrap();
    // 15.00 for the next month and 1,250 × 0.5 cents for the ended one.
    assert_eq!(first.amount, 1500 + 625);
    let o = order_json(&app, first.id).await;
    let items = o["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{o}");
    assert_eq!(items[0]["amount"], 1500);
    assert_eq!(items[1]["amount"], 625);
    assert_eq!(
        items[1]["label"],
        "API calls — (1,250 consumed units) × $0.005"
    );
    assert_eq!(items[1]["product_price_id"], metered.id.to_string());
    assert_eq!(
        items[1]["start_timestamp"]
            .as_str()
            .map(|t| t.parse::<chrono::DateTime<chrono::Utc>>().unwrap()),
        Some(s.current_period_start)
    );
    assert_eq!(o["subtotal_amount"], 2125);

    // Period 2: three calls; the 1,250 of period 1 are not billed again.
    let renewed = app.stored(s.id).await;
    app.clock
        .set(renewed.current_period_start + Duration::days(1));
    calls(&app, org, &cid, "p2", 3).await;
    app.clock
        .set(renewed.current_period_end.unwrap() + Duration::minutes(5));
    assert_eq!(app.sweep().await.renewed, 1);
    let second = app.order(renewal_order_id(s.id, 2)).await.unwrap();
    // 3 × 0.5 = 1.5 cents, rounded half away from zero: 2.
    assert_eq!(second.amount, 1500 + 2);
    assert_eq!(second.usage_lines.len(), 1);
    assert!(second.usage_lines[0].label.contains("(3 consumed units)"));

    // Period 3: nothing used: a line of 0.
    let renewed = app.stored(s.id).await;
    app.clock
        .set(renewed.current_period_end.unwrap() + Duration::minutes(5));
    assert_eq!(app.sweep().await.renewed, 1);
    let third = app.order(renewal_order_id(s.id, 3)).await.unwrap();
    assert_eq!((third.amount, third.usage_amount()), (1500, 0));
    // The customer's meter starts anew after each renewal.
    let r = app
        .get(
            &format!("/v1/customer-meters/?customer_id={cid}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["items"][0]["consumed_units"], 0.0, "{}", r.body);
}

#[actix_web::test]
async fn the_cap_limits_a_periods_usage_and_a_trial_bills_none() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "usage-cap").await;
    let meter_id = meter(&app, org).await;
    let product = product(&app, org, &meter_id, Some(100)).await;
    let fixed = price_of(&product, false);

    // Capped: 400 calls are 2.00, billed 1.00 with the cap said.
    let jane = app.customer(&app.token, org, "jane@example.com").await;
    let mut bought = purchase(&product, &jane, None);
    bought.price = fixed.clone();
    bought.amount = Some(1500);
    let s = app.subscribe(bought, t0()).await;
    calls(&app, org, &jane.id.to_string(), "cap", 400).await;
    app.clock
        .set(s.current_period_end.unwrap() + Duration::minutes(5));
    assert_eq!(app.sweep().await.renewed, 1);
    let o = app.order(renewal_order_id(s.id, 1)).await.unwrap();
    assert_eq!(o.amount, 1500 + 100);
    assert_eq!(
        o.usage_lines[0].label,
        "API calls — (400 consumed units) × $0.005 — Capped at $1.00"
    );

    // A trial: its usage is not billed at the first charge.
    let joe = app.customer(&app.token, org, "joe@example.com").await;
    let mut bought = purchase(&product, &joe, None);
    bought.price = fixed;
    bought.amount = Some(1500);
    bought.trial_end = Some(t0() + Duration::days(14));
    let trial = app.subscribe(bought, t0()).await;
    calls(&app, org, &joe.id.to_string(), "trial", 50).await;
    app.clock
        .set(trial.current_period_end.unwrap() + Duration::minutes(5));
    app.sweep().await;
    let first = app.order(renewal_order_id(trial.id, 1)).await.unwrap();
    assert_eq!((first.amount, first.usage_lines.len()), (1500, 0));
}

/// A meter_credit benefit of 100 units that rolls over.
async fn credit_benefit(app: &ClockApp, org: OrganizationId, meter: &str, product: &Product) {
    let b = app
        .post_json(
            "/v1/benefits/",
            Some(&app.token),
            &json!({"type": "meter_credit", "description": "100 API calls / month",
                    "organization_id": org,
                    "properties": {"meter_id": meter, "units": 100, "rollover": true}}),
        )
        .await;
    b.expect(201);
    app.post_json(
        &format!("/v1/products/{}/benefits", product.id),
        Some(&app.token),
        &json!({ "benefits": [b.body["id"]] }),
    )
    .await
    .expect(200);
}

async fn customer_meter(app: &ClockApp, customer: &str) -> Value {
    crate::state_events::settled(app).await;
    let r = app
        .get(
            &format!("/v1/customer-meters/?customer_id={customer}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    r.body["items"][0].clone()
}

#[actix_web::test]
async fn credits_are_granted_used_first_rolled_over_and_taken_back() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "usage-credits").await;
    let meter_id = meter(&app, org).await;
    let product = product(&app, org, &meter_id, None).await;
    credit_benefit(&app, org, &meter_id, &product).await;
    let jane = app.customer(&app.token, org, "jane@example.com").await;
    let cid = jane.id.to_string();
    let mut bought = purchase(&product, &jane, None);
    bought.price = price_of(&product, false);
    bought.amount = Some(1500);
    let s = app.subscribe(bought, t0()).await;

    // The purchase credits 100 units.
    let m = customer_meter(&app, &cid).await;
    assert_eq!(
        (m["credited_units"].as_i64(), m["balance"].as_f64()),
        (Some(100), Some(100.0)),
        "{m}"
    );
    // 130 calls: 30 over the credits are billed at the renewal.
    calls(&app, org, &cid, "c1", 130).await;
    let m = customer_meter(&app, &cid).await;
    assert_eq!(m["balance"].as_f64(), Some(-30.0), "{m}");
    app.clock
        .set(s.current_period_end.unwrap() + Duration::minutes(5));
    assert_eq!(app.sweep().await.renewed, 1);
    let first = app.order(renewal_order_id(s.id, 1)).await.unwrap();
    assert_eq!(first.amount, 1500 + 15, "30 × 0.5 cents");
    assert!(first.usage_lines[0].label.contains("(30 consumed units)"));
    // The new period: 100 units again, nothing left to roll over.
    let m = customer_meter(&app, &cid).await;
    assert_eq!(
        (m["credited_units"].as_i64(), m["consumed_units"].as_f64()),
        (Some(100), Some(0.0)),
        "{m}"
    );

    // 40 calls: 60 units are left and roll over into the next period.
    calls(&app, org, &cid, "c2", 40).await;
    let renewed = app.stored(s.id).await;
    app.clock
        .set(renewed.current_period_end.unwrap() + Duration::minutes(5));
    assert_eq!(app.sweep().await.renewed, 1);
    let second = app.order(renewal_order_id(s.id, 2)).await.unwrap();
    assert_eq!(second.amount, 1500, "no usage beyond the credits");
    let m = customer_meter(&app, &cid).await;
    assert_eq!(m["credited_units"].as_i64(), Some(160), "{m}");

    // The system events are listed as Polar lists them.
    let r = app
        .get(
            &format!("/v1/events/?organization_id={org}&source=system&limit=100"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    let names: Vec<&str> = r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names.iter().filter(|n| **n == "meter.reset").count(),
        2,
        "{names:?}"
    );
    assert_eq!(
        names.iter().filter(|n| **n == "meter.credited").count(),
        4,
        "{names:?}"
    );

    // Revoked: the last 100 units are taken back.
    app.patch_json(
        &format!("/v1/subscriptions/{}", s.id),
        Some(&app.token),
        &json!({"revoke": true}),
    )
    .await
    .expect(200);
    let m = customer_meter(&app, &cid).await;
    assert_eq!(m["credited_units"].as_i64(), Some(60), "{m}");
}

/// A subscription of `product`'s fixed price (15.00) for `email`, from `t0()`.
pub(crate) async fn subscribed(
    app: &ClockApp,
    org: OrganizationId,
    product: &Product,
    email: &str,
) -> (tollgate_actors::subscription::Subscription, String) {
    let customer = app.customer(&app.token, org, email).await;
    let mut bought = purchase(product, &customer, None);
    bought.price = price_of(product, false);
    bought.amount = Some(1500);
    let s = app.subscribe(bought, t0()).await;
    (s, customer.id.to_string())
}

async fn end_at_period_end(app: &ClockApp, id: impl std::fmt::Display) {
    let r = app
        .patch_json(
            &format!("/v1/subscriptions/{id}"),
            Some(&app.token),
            &json!({"cancel_at_period_end": true}),
        )
        .await;
    r.expect(200);
}

/// Polar: a subscription canceled at its period end writes a final order of its last
/// period's usage only (`subscription_cancel`, shown as `subscription_cycle`); none when
/// it comes to 0; a subscription revoked at once bills nothing more.
#[actix_web::test]
async fn the_last_periods_usage_is_billed_when_a_subscription_ends() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "usage-final").await;
    let meter_id = meter(&app, org).await;
    let product = product(&app, org, &meter_id, None).await;
    let metered = price_of(&product, true);

    // 1,250 calls, then canceled at the period end: a final order of 6.25.
    let (s, jane) = subscribed(&app, org, &product, "jane@example.com").await;
    app.clock.set(t0() + Duration::days(3));
    calls(&app, org, &jane, "last", 1250).await;
    end_at_period_end(&app, s.id).await;
    // Two calls after the sweep planned nothing yet: still this period's.
    calls(&app, org, &jane, "late", 2).await;
    let end = s.current_period_end.unwrap();
    app.clock.set(end + Duration::minutes(5));
    let report = app.sweep().await;
    assert_eq!((report.ended, report.renewed), (1, 0), "{report:?}");
    let ended = app.stored(s.id).await;
    assert_eq!(ended.ended_at, Some(end));
    let order = app.order(renewal_order_id(s.id, 1)).await.unwrap();
    // 1,252 × 0.5 cents = 6.26: the usage only, no fixed price for a period not served.
    assert_eq!((order.amount, order.usage_amount()), (626, 626));
    let o = order_json(&app, order.id).await;
    assert_eq!(o["billing_reason"], "subscription_cycle");
    assert_eq!(o["status"], "paid");
    assert_eq!(o["subtotal_amount"], 626);
    // The order view lists the usage line alone (no product line at 0), as Polar's.
    let items = o["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{o}");
    let usage = items.last().unwrap();
    assert_eq!(
        usage["label"],
        "API calls — (1,252 consumed units) × $0.005"
    );
    assert_eq!(usage["amount"], 626);
    assert_eq!(usage["product_price_id"], metered.id.to_string());
    assert_eq!(
        items
            .iter()
            .map(|i| i["amount"].as_i64().unwrap())
            .sum::<i64>(),
        626
    );
    // Its paid order is mailed as a renewal's receipt (with the usage line; the
    // organization invoices on request, so the receipt does not wait for an invoice).
    let mails = tollgate::app::mail::order_paid_messages(&app.state, None, &order)
        .await
        .unwrap();
    let receipt = mails
        .iter()
        .find(|m| m.kind == tollgate::domain::mail::MailKind::RenewalReceipt)
        .unwrap_or_else(|| panic!("no renewal receipt: {mails:#?}"));
    assert_eq!(receipt.to, "jane@example.com");
    assert!(receipt.text.contains("$6.26"), "{}", receipt.text);
    // Billed once: later sweeps and calls add nothing.
    calls(&app, org, &jane, "after", 7).await;
    app.clock.set(end + Duration::days(40));
    let again = app.sweep().await;
    assert_eq!((again.ended, again.renewed), (0, 0));
    assert_eq!(app.order(renewal_order_id(s.id, 1)).await.unwrap(), order);
    assert!(app.order(renewal_order_id(s.id, 2)).await.is_none());
    let r = app
        .get(&format!("/v1/orders/?customer_id={jane}"), Some(&app.token))
        .await;
    r.expect(200);
    assert_eq!(r.body["pagination"]["total_count"], 1, "{}", r.body);

    // Nothing used: it ends without an order.
    let (idle, _) = subscribed(&app, org, &product, "idle@example.com").await;
    end_at_period_end(&app, idle.id).await;
    app.clock
        .set(idle.current_period_end.unwrap() + Duration::minutes(5));
    assert_eq!(app.sweep().await.ended, 1);
    assert!(app.stored(idle.id).await.ended_at.is_some());
    assert!(app.order(renewal_order_id(idle.id, 1)).await.is_none());

    // Revoked at once: its usage is not billed (Polar writes no order).
    let (gone, joe) = subscribed(&app, org, &product, "joe@example.com").await;
    calls(&app, org, &joe, "gone", 100).await;
    let r = app
        .patch_json(
            &format!("/v1/subscriptions/{}", gone.id),
            Some(&app.token),
            &json!({"revoke": true}),
        )
        .await;
    r.expect(200);
    app.clock
        .set(gone.current_period_end.unwrap() + Duration::days(1));
    app.sweep().await;
    assert!(app.order(renewal_order_id(gone.id, 1)).await.is_none());
}
