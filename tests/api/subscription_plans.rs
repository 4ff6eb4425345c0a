//! Subscriptions as a billing system runs them (issue 31, parts 2 to 4), over HTTP with
//! the test processor on a `ManualClock`: intervals of days, weeks, months and years with
//! a count; free trials (nothing charged at checkout, one charge at the trial's end, a
//! reminder before it, one trial per customer and product, a declined first charge past
//! due with the key in its grace); plan changes with proration (the preview's amount
//! charged once, credits carried to the next renewal, keys switched to the new product's).

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};
use tollgate::domain::ids::{OrganizationId, SubscriptionId};
use tollgate_actors::domain::mail::{MailKind, MailMessage};
use tollgate_actors::subscription::{prorate, SubscriptionStatus, DUNNING_PERIOD};

use crate::checkouts::store_values;
use crate::subscriptions::{spawn_app_with_clock, t0, ClockApp};

const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";

fn time(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("not a time: {v}")))
        .unwrap()
        .with_timezone(&Utc)
}

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap().to_string()
}

/// A license-key benefit of `org` with a 3-day grace.
async fn key_benefit(app: &ClockApp, org: OrganizationId, name: &str) -> String {
    let r = app
        .post_json(
            "/v1/benefits/",
            Some(&app.token),
            &json!({"type": "license_keys", "description": name, "organization_id": org,
                    "properties": {"prefix": name, "grace_days": 3}}),
        )
        .await;
    r.expect(201);
    id(&r.body)
}

/// A product (Polar's 2026 shape) with `extra` fields and the given benefits.
async fn product(
    app: &ClockApp,
    org: OrganizationId,
    name: &str,
    amount: i64,
    extra: Value,
    benefits: &[&str],
) -> String {
    let mut body = json!({"name": name, "organization_id": org, "recurring_interval": "month",
        "prices": [{"amount_type": "fixed", "price_amount": amount, "price_currency": "usd"}]});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let r = app
        .post_json("/v1/products/", Some(&app.token), &body)
        .await;
    r.expect(201);
    let product = id(&r.body);
    app.post_json(
        &format!("/v1/products/{product}/benefits"),
        Some(&app.token),
        &json!({ "benefits": benefits }),
    )
    .await
    .expect(200);
    product
}

/// A checkout of `product` confirmed by `email` with `token`: the checkout as created, and
/// the confirm's reply.
async fn checkout(
    app: &ClockApp,
    product: &str,
    email: &str,
    token: &str,
    extra: Value,
) -> (Value, crate::helpers::Reply) {
    let mut body = json!({"product_id": product});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let c = app
        .post_json("/v1/checkouts/custom/", Some(&app.token), &body)
        .await;
    c.expect(201);
    let secret = c.body["client_secret"].as_str().unwrap().to_string();
    let r = app
        .post_json(
            &format!("/v1/checkouts/custom/client/{secret}/confirm"),
            None,
            &json!({"customer_name": "Ada Lovelace", "customer_email": email,
                    "customer_billing_address": {"country": "FR"},
                    "confirmation_token_id": token}),
        )
        .await;
    (c.body, r)
}

/// Waits for the checkout to succeed; the subscription it created.
pub(crate) async fn subscription_of_checkout(app: &ClockApp, checkout: &str) -> Value {
    for _ in 0..100 {
        let c = app
            .get(
                &format!("/v1/checkouts/custom/{checkout}"),
                Some(&app.token),
            )
            .await;
        if c.body["status"] == "succeeded" {
            let customer = c.body["customer_id"].as_str().unwrap();
            let r = app
                .get(
                    &format!("/v1/subscriptions/?customer_id={customer}"),
                    Some(&app.token),
                )
                .await;
            r.expect(200);
            return r.body["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["checkout_id"] == checkout)
                .unwrap_or_else(|| panic!("no subscription of {checkout}: {}", r.body))
                .clone();
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the checkout did not succeed");
}

pub(crate) async fn subscription(app: &ClockApp, id: &str) -> Value {
    let r = app
        .get(&format!("/v1/subscriptions/{id}"), Some(&app.token))
        .await;
    r.expect(200);
    r.body
}

/// The customer's orders, oldest first.
pub(crate) async fn orders(app: &ClockApp, customer: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/orders/?customer_id={customer}&sorting=created_at"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    r.body["items"].as_array().unwrap().clone()
}

/// The customer's keys of `benefit`.
async fn keys(app: &ClockApp, customer: &str, benefit: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/license-keys/?benefit_id={benefit}&limit=100"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["customer_id"] == customer)
        .cloned()
        .collect()
}

async fn validate(app: &ClockApp, key: &Value, org: OrganizationId) -> crate::helpers::Reply {
    app.post_json(
        VALIDATE,
        None,
        &json!({"key": key["key"], "organization_id": org}),
    )
    .await
}

/// Waits until the change feed was consumed (mails and webhooks decided).
async fn settled(app: &ClockApp) {
    for _ in 0..400 {
        if app.state.store.changes(None, 1).await.unwrap().is_empty() {
            return;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("the change feed was not consumed");
}

async fn mails(app: &ClockApp, kind: MailKind, subscription: &str) -> Vec<MailMessage> {
    settled(app).await;
    let id: SubscriptionId = subscription.parse().unwrap();
    store_values::<MailMessage>(&app.state.store)
        .await
        .into_iter()
        .filter(|m| m.kind == kind && m.subscription_id == Some(id))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Intervals
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn products_recur_every_day_week_month_or_year_with_a_count() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "intervals").await;
    let post = |body: Value| {
        let app = &app;
        async move {
            let mut b = json!({"name": "Plan", "organization_id": org,
                "prices": [{"amount_type": "fixed", "price_amount": 500, "price_currency": "usd"}]});
            b.as_object_mut()
                .unwrap()
                .extend(body.as_object().unwrap().clone());
            app.post_json("/v1/products/", Some(&app.token), &b).await
        }
    };
    for (interval, count) in [("day", 1), ("week", 2), ("month", 3), ("year", 1)] {
        let r =
            post(json!({"recurring_interval": interval, "recurring_interval_count": count})).await;
        r.expect(201);
        assert_eq!(r.body["recurring_interval"], interval);
        assert_eq!(r.body["recurring_interval_count"], count);
        assert_eq!(r.body["prices"][0]["recurring_interval"], interval);
    }
    // Counts 1 to 999; an interval Polar knows; both trial fields or neither; trials on
    // recurring products only.
    for (body, loc, kind) in [
        (
            json!({"recurring_interval": "month", "recurring_interval_count": 0}),
            json!(["body", "recurring_interval_count"]),
            "greater_than_equal",
        ),
        (
            json!({"recurring_interval": "month", "recurring_interval_count": 1000}),
            json!(["body", "recurring_interval_count"]),
            "less_than_equal",
        ),
        (
            json!({"recurring_interval": "month", "recurring_interval_count": "two"}),
            json!(["body", "recurring_interval_count"]),
            "int_type",
        ),
        (
            json!({"recurring_interval": "fortnight"}),
            json!(["body", "recurring_interval"]),
            "enum",
        ),
        (
            json!({"recurring_interval": "month", "trial_interval": "day"}),
            json!(["body", "trial_interval_count"]),
            "missing",
        ),
        (
            json!({"recurring_interval": "month", "trial_interval": "day", "trial_interval_count": 1001}),
            json!(["body", "trial_interval_count"]),
            "less_than_equal",
        ),
        (
            json!({"trial_interval": "day", "trial_interval_count": 7}),
            json!(["body", "trial_interval"]),
            "value_error",
        ),
    ] {
        let r = post(body.clone()).await;
        let item = r.expect_invalid_at(loc);
        assert_eq!(item["type"], kind, "{body} → {}", r.body);
    }
    // A period's length is fixed once sold; the trial can change or go.
    let r = post(
        json!({"recurring_interval": "week", "recurring_interval_count": 2,
                        "trial_interval": "day", "trial_interval_count": 7}),
    )
    .await;
    r.expect(201);
    assert_eq!(
        (&r.body["trial_interval"], &r.body["trial_interval_count"]),
        (&json!("day"), &json!(7))
    );
    let path = format!("/v1/products/{}", id(&r.body));
    app.patch_json(
        &path,
        Some(&app.token),
        &json!({"recurring_interval_count": 3}),
    )
    .await
    .expect_invalid_at(json!(["body", "recurring_interval_count"]));
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"trial_interval": null, "trial_interval_count": null}),
        )
        .await;
    r.expect(200);
    assert!(r.body["trial_interval"].is_null(), "{}", r.body);

    // A fortnightly subscription: periods of 14 days from the purchase, renewed on them.
    let (c, r) = checkout(
        &app,
        &id(&r.body),
        "ada@intervals.example",
        "tok_visa",
        json!({}),
    )
    .await;
    r.expect(200);
    let s = subscription_of_checkout(&app, &id(&c)).await;
    assert_eq!(s["recurring_interval"], "week");
    assert_eq!(s["recurring_interval_count"], 2);
    assert_eq!(time(&s["current_period_end"]), t0() + Duration::days(14));
    app.clock
        .set(t0() + Duration::days(14) + Duration::minutes(1));
    assert_eq!(app.sweep().await.renewed, 1);
    let s = subscription(&app, &id(&s)).await;
    assert_eq!(time(&s["current_period_start"]), t0() + Duration::days(14));
    assert_eq!(time(&s["current_period_end"]), t0() + Duration::days(28));
}

// ---------------------------------------------------------------------------------------
// Trials
// ---------------------------------------------------------------------------------------

struct TrialShop {
    org: OrganizationId,
    benefit: String,
    product: String,
}

async fn trial_shop(app: &ClockApp, slug: &str) -> TrialShop {
    let org = app.org(&app.token, slug).await;
    let benefit = key_benefit(app, org, "TRIAL").await;
    let product = product(
        app,
        org,
        "Pro",
        1000,
        json!({"trial_interval": "day", "trial_interval_count": 14}),
        &[&benefit],
    )
    .await;
    TrialShop {
        org,
        benefit,
        product,
    }
}

#[actix_web::test]
async fn a_14_day_trial_charges_nothing_then_once_at_its_end() {
    let app = spawn_app_with_clock().await;
    let shop = trial_shop(&app, "trial").await;
    let trial_end = t0() + Duration::days(14);
    let (c, r) = checkout(
        &app,
        &shop.product,
        "ada@trial.example",
        "tok_visa",
        json!({}),
    )
    .await;
    assert_eq!(c["active_trial_interval"], "day");
    assert_eq!(c["active_trial_interval_count"], 14);
    assert_eq!(time(&c["trial_end"]), trial_end);
    assert_eq!(c["is_payment_required"], false);
    assert_eq!(c["is_payment_setup_required"], true);
    assert_eq!(c["total_amount"], 1000);
    r.expect(200);

    let s = subscription_of_checkout(&app, &id(&c)).await;
    let sub = id(&s);
    let customer = s["customer_id"].as_str().unwrap().to_string();
    assert_eq!(s["status"], "trialing");
    assert_eq!(time(&s["trial_start"]), t0());
    assert_eq!(time(&s["trial_end"]), trial_end);
    assert_eq!(time(&s["current_period_end"]), trial_end);
    assert_eq!(s["amount"], 1000);
    // The trial's order is free.
    let o = orders(&app, &customer).await;
    assert_eq!(o.len(), 1);
    assert_eq!(
        (&o[0]["total_amount"], &o[0]["billing_reason"]),
        (&json!(0), &json!("subscription_create"))
    );
    // The key lasts the trial plus its grace.
    let key = keys(&app, &customer, &shop.benefit).await.remove(0);
    assert_eq!(time(&key["expires_at"]), trial_end + Duration::days(3));
    validate(&app, &key, shop.org).await.expect(200);

    // Three days before the first charge, one reminder (a second sweep sends no other).
    app.clock.set(trial_end - Duration::days(3));
    let report = app.sweep().await;
    assert_eq!((report.trials_reminded, report.renewed), (1, 0));
    assert_eq!(app.sweep().await.trials_reminded, 0);
    let reminders = mails(&app, MailKind::TrialEnding, &sub).await;
    assert_eq!(reminders.len(), 1);
    assert!(
        reminders[0].subject.contains("trial is ending soon"),
        "{}",
        reminders[0].subject
    );
    assert_eq!(subscription(&app, &sub).await["status"], "trialing");

    // At the trial's end: one charge of the full amount, then monthly from the end.
    app.clock.set(trial_end + Duration::minutes(1));
    let report = app.sweep().await;
    assert_eq!(report.renewed, 1);
    assert_eq!(app.sweep().await.renewed, 0, "charged once");
    let s = subscription(&app, &sub).await;
    assert_eq!(s["status"], "active");
    assert_eq!(time(&s["current_period_start"]), trial_end);
    assert_eq!(
        time(&s["current_period_end"]),
        tollgate::domain::product::RecurringInterval::Month.add(trial_end, 1)
    );
    let o = orders(&app, &customer).await;
    assert_eq!(o.len(), 2);
    assert_eq!(
        (&o[1]["subtotal_amount"], &o[1]["billing_reason"]),
        (&json!(1000), &json!("subscription_cycle"))
    );
    // The key now lasts the paid period plus the grace.
    let key = keys(&app, &customer, &shop.benefit).await.remove(0);
    assert_eq!(
        time(&key["expires_at"]),
        time(&s["current_period_end"]) + Duration::days(3)
    );
}

#[actix_web::test]
async fn a_declined_first_charge_after_a_trial_is_past_due_then_revoked_when_dunning_ends() {
    let app = spawn_app_with_clock().await;
    let shop = trial_shop(&app, "declined-trial").await;
    let trial_end = t0() + Duration::days(14);
    // A card that can be saved but not charged (Stripe's `tok_chargeDeclined`).
    let (c, r) = checkout(
        &app,
        &shop.product,
        "bob@trial.example",
        "tok_chargeDeclined",
        json!({}),
    )
    .await;
    r.expect(200);
    let s = subscription_of_checkout(&app, &id(&c)).await;
    let sub = id(&s);
    let customer = s["customer_id"].as_str().unwrap().to_string();
    assert_eq!(s["status"], "trialing");

    app.clock.set(trial_end + Duration::minutes(1));
    assert_eq!(app.sweep().await.declined, 1);
    assert_eq!(subscription(&app, &sub).await["status"], "past_due");
    // Inside the grace, the key still validates and says until when.
    let key = keys(&app, &customer, &shop.benefit).await.remove(0);
    let r = validate(&app, &key, shop.org).await;
    r.expect(200);
    assert_eq!(time(&r.body["grace_until"]), trial_end + Duration::days(3));
    // The free order, and the renewal's order pending (nothing was paid).
    let o = orders(&app, &customer).await;
    assert_eq!(o.len(), 2, "{o:?}");
    assert_eq!(o[1]["status"], "pending");
    assert_eq!(o[1]["paid"], false);

    // Past the grace it no longer validates; when dunning gives up, it is revoked.
    app.clock
        .set(trial_end + Duration::days(3) + Duration::minutes(1));
    app.sweep().await;
    validate(&app, &key, shop.org).await.expect(404);
    app.clock
        .set(trial_end + DUNNING_PERIOD + Duration::minutes(1));
    for _ in 0..4 {
        app.sweep().await;
    }
    let s = subscription(&app, &sub).await;
    assert_eq!(s["status"], "canceled");
    let key = keys(&app, &customer, &shop.benefit).await.remove(0);
    assert_eq!(key["status"], "revoked");
    assert_eq!(
        app.stored(sub.parse().unwrap()).await.status,
        SubscriptionStatus::Canceled
    );
}

#[actix_web::test]
async fn one_trial_per_customer_and_product_and_a_checkout_may_set_or_drop_it() {
    let app = spawn_app_with_clock().await;
    let shop = trial_shop(&app, "once").await;
    let (c, r) = checkout(
        &app,
        &shop.product,
        "ada@once.example",
        "tok_visa",
        json!({}),
    )
    .await;
    r.expect(200);
    subscription_of_checkout(&app, &id(&c)).await;
    // The same buyer, the same product: no second trial (Polar's 403).
    let (_, r) = checkout(
        &app,
        &shop.product,
        "ADA@once.example",
        "tok_visa",
        json!({}),
    )
    .await;
    r.expect(403);
    assert_eq!(r.body["error"], "TrialAlreadyRedeemed");
    // Without the trial, the same buyer pays at once.
    let (c, r) = checkout(
        &app,
        &shop.product,
        "ada@once.example",
        "tok_visa",
        json!({"allow_trial": false}),
    )
    .await;
    assert!(c["active_trial_interval"].is_null() && c["trial_end"].is_null());
    assert_eq!(c["is_payment_required"], true);
    r.expect(200);
    let s = subscription_of_checkout(&app, &id(&c)).await;
    assert_eq!(s["status"], "active");
    assert!(s["trial_end"].is_null());

    // A checkout's own trial replaces the product's, on create and on update.
    let (c, _) = checkout(
        &app,
        &shop.product,
        "eve@once.example",
        "tok_visa",
        json!({"trial_interval": "week", "trial_interval_count": 1}),
    )
    .await;
    assert_eq!(
        (&c["trial_interval"], &c["active_trial_interval"]),
        (&json!("week"), &json!("week"))
    );
    assert_eq!(time(&c["trial_end"]), t0() + Duration::days(7));
    let open = app
        .post_json(
            "/v1/checkouts/custom/",
            Some(&app.token),
            &json!({"product_id": shop.product}),
        )
        .await;
    open.expect(201);
    let path = format!("/v1/checkouts/custom/{}", id(&open.body));
    let r = app
        .patch_json(&path, Some(&app.token), &json!({"trial_interval": "month"}))
        .await;
    r.expect_invalid_at(json!(["body", "trial_interval_count"]));
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"trial_interval": "month", "trial_interval_count": 2}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["active_trial_interval"], "month");
    assert_eq!(
        time(&r.body["trial_end"]),
        tollgate::domain::product::RecurringInterval::Month.add(t0(), 2)
    );
    // Both `null`: the product's trial again.
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"trial_interval": null, "trial_interval_count": null}),
        )
        .await;
    r.expect(200);
    assert_eq!(
        (
            &r.body["active_trial_interval"],
            &r.body["active_trial_interval_count"]
        ),
        (&json!("day"), &json!(14))
    );
    // A one-time product has no trial, whatever the checkout says.
    let one_time = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": "Book", "organization_id": shop.org,
                    "prices": [{"amount_type": "fixed", "price_amount": 900, "price_currency": "usd"}]}),
        )
        .await;
    one_time.expect(201);
    let (c, _) = checkout(
        &app,
        &id(&one_time.body),
        "eve@once.example",
        "tok_visa",
        json!({"trial_interval": "week", "trial_interval_count": 1}),
    )
    .await;
    assert!(c["trial_end"].is_null() && c["active_trial_interval"].is_null());
}

#[actix_web::test]
async fn a_checkout_link_gives_its_own_trial_to_each_checkout() {
    let app = spawn_app_with_clock().await;
    let shop = trial_shop(&app, "link-trial").await;
    let r = app
        .post_json(
            "/v1/checkout-links/",
            Some(&app.token),
            &json!({"payment_processor": "stripe", "products": [shop.product],
                    "trial_interval": "week", "trial_interval_count": 1}),
        )
        .await;
    r.expect(201);
    assert_eq!(
        (&r.body["trial_interval"], &r.body["trial_interval_count"]),
        (&json!("week"), &json!(1))
    );
    let secret = r.body["client_secret"].as_str().unwrap().to_string();
    let link = id(&r.body);
    // Followed in a browser: the checkout page tells the trial.
    let page = app
        .client
        .get(format!(
            "{}/v1/checkout-links/{secret}/redirect",
            app.address
        ))
        .send()
        .await
        .unwrap();
    assert!(page.status().is_success(), "{}", page.status());
    let html = page.text().await.unwrap();
    assert!(
        html.contains(r#"Free for 1 week, then <span id="trial-amount">$10.00</span>/month"#)
            && html.contains("Start free trial"),
        "the page does not tell the trial"
    );
    let list = app
        .get(
            &format!("/v1/checkouts/custom/?organization_id={}", shop.org),
            Some(&app.token),
        )
        .await;
    list.expect(200);
    let c = &list.body["items"][0];
    assert_eq!(c["active_trial_interval"], "week");
    assert_eq!(time(&c["trial_end"]), t0() + Duration::days(7));
    // Dropped from the link: its checkouts get the product's trial again.
    let r = app
        .patch_json(
            &format!("/v1/checkout-links/{link}"),
            Some(&app.token),
            &json!({"trial_interval": null, "trial_interval_count": null}),
        )
        .await;
    r.expect(200);
    assert!(r.body["trial_interval"].is_null(), "{}", r.body);
}

// ---------------------------------------------------------------------------------------
// Plan changes
// ---------------------------------------------------------------------------------------

struct PlanShop {
    org: OrganizationId,
    /// A key benefit both plans grant, and one only Pro grants.
    shared: String,
    pro_only: String,
    basic: String,
    pro: String,
    sub: String,
    customer: String,
}

/// Basic (10.00 a month) and Pro (30.00 a month); Ada subscribed to Basic at t0.
async fn plan_shop(app: &ClockApp, slug: &str) -> PlanShop {
    let org = app.org(&app.token, slug).await;
    let shared = key_benefit(app, org, "SHARED").await;
    let pro_only = key_benefit(app, org, "PRO").await;
    let basic = product(app, org, "Basic", 1000, json!({}), &[&shared]).await;
    let pro = product(app, org, "Pro", 3000, json!({}), &[&shared, &pro_only]).await;
    let (c, r) = checkout(app, &basic, "ada@plans.example", "tok_visa", json!({})).await;
    r.expect(200);
    let s = subscription_of_checkout(app, &id(&c)).await;
    PlanShop {
        org,
        shared,
        pro_only,
        basic,
        pro,
        customer: s["customer_id"].as_str().unwrap().to_string(),
        sub: id(&s),
    }
}

#[actix_web::test]
async fn an_upgrade_mid_period_charges_the_previewed_amount_once_and_switches_keys() {
    let app = spawn_app_with_clock().await;
    let shop = plan_shop(&app, "upgrade").await;
    let shared_key = keys(&app, &shop.customer, &shop.shared).await.remove(0);
    let s = subscription(&app, &shop.sub).await;
    let (start, end) = (
        time(&s["current_period_start"]),
        time(&s["current_period_end"]),
    );
    let at = t0() + Duration::days(10) + Duration::hours(5);
    app.clock.set(at);
    let body = json!({"product_id": shop.pro, "proration_behavior": "invoice"});
    let preview_path = format!("/v1/subscriptions/{}/change-preview", shop.sub);
    let p = app.post_json(&preview_path, Some(&app.token), &body).await;
    p.expect(200);
    // Computed independently: the unused part of the period at each price, in cents.
    let (remaining, period) = ((end - at).num_seconds(), (end - start).num_seconds());
    let expected = prorate(3000, remaining, period) - prorate(1000, remaining, period);
    assert_eq!(p.body["proration_amount"], expected, "{}", p.body);
    let tax = p.body["tax_amount"].as_i64().unwrap();
    assert_eq!(p.body["due_amount"], expected + tax);
    assert_eq!(p.body["carried_amount"], 0);
    let lines = p.body["prorations"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["amount"], -prorate(1000, remaining, period));
    // A preview writes nothing.
    assert_eq!(
        subscription(&app, &shop.sub).await["product_id"],
        shop.basic
    );

    let r = app
        .patch_json(
            &format!("/v1/subscriptions/{}", shop.sub),
            Some(&app.token),
            &body,
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["product_id"], shop.pro);
    assert_eq!(r.body["amount"], 3000);
    assert_eq!(time(&r.body["current_period_end"]), end, "same period");
    // The same request again changes nothing and charges nothing.
    app.patch_json(
        &format!("/v1/subscriptions/{}", shop.sub),
        Some(&app.token),
        &body,
    )
    .await
    .expect(200);
    let o = orders(&app, &shop.customer).await;
    let updates: Vec<&Value> = o
        .iter()
        .filter(|o| o["billing_reason"] == "subscription_update")
        .collect();
    assert_eq!(updates.len(), 1, "charged once");
    assert_eq!(updates[0]["total_amount"], p.body["due_amount"]);
    assert_eq!(updates[0]["product_id"], shop.pro);

    // The shared benefit keeps its key; Pro's own benefit grants a new one.
    let shared = keys(&app, &shop.customer, &shop.shared).await;
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0]["key"], shared_key["key"]);
    let pro_keys = keys(&app, &shop.customer, &shop.pro_only).await;
    assert_eq!(pro_keys.len(), 1);
    assert_eq!(time(&pro_keys[0]["expires_at"]), end + Duration::days(3));
    validate(&app, &pro_keys[0], shop.org).await.expect(200);
    let changed = mails(&app, MailKind::PlanChanged, &shop.sub).await;
    assert_eq!(changed.len(), 1);

    // Back to Basic with `prorate`: the credit goes on the next renewal, Pro's key goes.
    let back = app
        .patch_json(
            &format!("/v1/subscriptions/{}", shop.sub),
            Some(&app.token),
            &json!({"product_id": shop.basic, "proration_behavior": "prorate"}),
        )
        .await;
    back.expect(200);
    assert_eq!(back.body["amount"], 1000);
    let pro_keys = keys(&app, &shop.customer, &shop.pro_only).await;
    assert_eq!(pro_keys[0]["status"], "revoked");
    validate(&app, &pro_keys[0], shop.org).await.expect(404);
    // The change's own mail says so: no "a key was revoked" mail besides it.
    settled(&app).await;
    let revoked_mails = store_values::<MailMessage>(&app.state.store)
        .await
        .into_iter()
        .filter(|m| m.kind == MailKind::KeyRevoked)
        .count();
    assert_eq!(revoked_mails, 0);
    let changed = mails(&app, MailKind::PlanChanged, &shop.sub).await;
    assert_eq!(changed.len(), 2);
    assert!(changed.iter().any(|m| m.text.contains("no longer work")));
    // The credit (more than a Basic period) pays the next renewal and part of the one
    // after: nothing is lost.
    let credit = expected;
    assert!(credit > 1000 && credit < 2000, "{credit}");
    app.clock.set(end + Duration::minutes(1));
    assert_eq!(app.sweep().await.renewed, 1);
    let next_end = time(&subscription(&app, &shop.sub).await["current_period_end"]);
    app.clock.set(next_end + Duration::minutes(1));
    assert_eq!(app.sweep().await.renewed, 1);
    let o = orders(&app, &shop.customer).await;
    let renewals: Vec<&Value> = o
        .iter()
        .filter(|o| o["billing_reason"] == "subscription_cycle")
        .collect();
    assert_eq!(renewals.len(), 2);
    assert_eq!(renewals[0]["subtotal_amount"], 0);
    assert_eq!(renewals[1]["subtotal_amount"], 2000 - credit);
}

#[actix_web::test]
async fn plan_changes_are_refused_as_polar_refuses_them() {
    let app = spawn_app_with_clock().await;
    let shop = plan_shop(&app, "refusals").await;
    let path = format!("/v1/subscriptions/{}", shop.sub);
    let preview = format!("{path}/change-preview");
    // Polar's January 2025 shape: the price, not the product.
    let pro = app
        .get(&format!("/v1/products/{}", shop.pro), Some(&app.token))
        .await;
    let price = pro.body["prices"][0]["id"].clone();
    let p = app
        .post_json(
            &preview,
            Some(&app.token),
            &json!({"product_price_id": price, "proration_behavior": "prorate"}),
        )
        .await;
    p.expect(200);
    assert_eq!(p.body["due_amount"], 0);
    assert_eq!(p.body["carried_amount"], p.body["proration_amount"]);
    for (body, loc) in [
        (
            json!({"product_id": shop.pro, "proration_behavior": "next_period"}),
            json!(["body", "proration_behavior"]),
        ),
        (
            json!({"product_id": shop.pro, "proration_behavior": "sometimes"}),
            json!(["body", "proration_behavior"]),
        ),
        (
            json!({"product_id": crate::subscriptions::UNKNOWN_ID}),
            json!(["body", "product_id"]),
        ),
        (
            json!({"product_price_id": crate::subscriptions::UNKNOWN_ID}),
            json!(["body", "product_price_id"]),
        ),
        (
            json!({"product_id": shop.pro, "cancel_at_period_end": true}),
            json!(["body", "product_id"]),
        ),
    ] {
        app.patch_json(&path, Some(&app.token), &body)
            .await
            .expect_invalid_at(loc);
    }
    // Another organization's product is not found in this one.
    let other = app.org(&app.token, "elsewhere").await;
    let foreign = product(&app, other, "Foreign", 500, json!({}), &[]).await;
    app.patch_json(&path, Some(&app.token), &json!({"product_id": foreign}))
        .await
        .expect_invalid_at(json!(["body", "product_id"]));
    // A one-time product is no plan.
    let book = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": "Book", "organization_id": shop.org,
                    "prices": [{"amount_type": "fixed", "price_amount": 900, "price_currency": "usd"}]}),
        )
        .await;
    app.patch_json(
        &path,
        Some(&app.token),
        &json!({"product_id": id(&book.body)}),
    )
    .await
    .expect_invalid_at(json!(["body", "product_id"]));

    // Scopes and tenancy: a read token may preview, not change; a stranger finds nothing.
    use tollgate::domain::scope::Scope;
    let reader = app
        .user_with_scopes("reader@plans.example", &[Scope::SubscriptionsRead])
        .await;
    let body = json!({"product_id": shop.pro});
    app.patch_json(&path, Some(&reader), &body)
        .await
        .expect(403);
    // The reader is not a member of the organization: not found either way.
    app.post_json(&preview, Some(&reader), &body)
        .await
        .expect(404);

    // A subscription set to cancel cannot change plan (Polar's 403).
    app.patch_json(
        &path,
        Some(&app.token),
        &json!({"cancel_at_period_end": true}),
    )
    .await
    .expect(200);
    let r = app.patch_json(&path, Some(&app.token), &body).await;
    r.expect(403);
    assert_eq!(r.body["error"], "AlreadyCanceledSubscription");
    assert_eq!(
        subscription(&app, &shop.sub).await["product_id"],
        shop.basic
    );
}

#[actix_web::test]
async fn a_new_interval_restarts_the_cycle_now_and_the_kept_keys_follow_it() {
    let app = spawn_app_with_clock().await;
    let shop = plan_shop(&app, "yearly").await;
    let yearly = product(
        &app,
        shop.org,
        "Yearly",
        10_000,
        json!({"recurring_interval": "year"}),
        &[&shop.shared],
    )
    .await;
    let at = t0() + Duration::days(10);
    app.clock.set(at);
    let body = json!({"product_id": yearly, "proration_behavior": "prorate"});
    let p = app
        .post_json(
            &format!("/v1/subscriptions/{}/change-preview", shop.sub),
            Some(&app.token),
            &body,
        )
        .await;
    p.expect(200);
    let r = app
        .patch_json(
            &format!("/v1/subscriptions/{}", shop.sub),
            Some(&app.token),
            &body,
        )
        .await;
    r.expect(200);
    let year_end = tollgate::domain::product::RecurringInterval::Year.add(at, 1);
    assert_eq!(
        (
            time(&r.body["current_period_start"]),
            time(&r.body["current_period_end"])
        ),
        (at, year_end)
    );
    assert_eq!(r.body["recurring_interval"], "year");
    // Paid at once, whatever the behavior: the year, less the unused month.
    let o = orders(&app, &shop.customer).await;
    let update = o
        .iter()
        .find(|o| o["billing_reason"] == "subscription_update")
        .unwrap();
    assert_eq!(update["total_amount"], p.body["due_amount"]);
    assert!(p.body["due_amount"].as_i64().unwrap() > 9000);
    // The key both plans grant now lasts the year (plus the grace).
    let key = keys(&app, &shop.customer, &shop.shared).await.remove(0);
    assert_eq!(time(&key["expires_at"]), year_end + Duration::days(3));
}

#[actix_web::test]
async fn a_free_subscription_needs_a_card_for_a_paid_plan() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "free-to-paid").await;
    let free = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": "Free", "organization_id": org, "recurring_interval": "month",
                    "prices": [{"amount_type": "free"}]}),
        )
        .await;
    free.expect(201);
    let paid = product(&app, org, "Paid", 1500, json!({}), &[]).await;
    let c = app
        .post_json(
            "/v1/checkouts/custom/",
            Some(&app.token),
            &json!({"product_id": id(&free.body)}),
        )
        .await;
    c.expect(201);
    let secret = c.body["client_secret"].as_str().unwrap();
    app.post_json(
        &format!("/v1/checkouts/custom/client/{secret}/confirm"),
        None,
        &json!({"customer_email": "free@plans.example"}),
    )
    .await
    .expect(200);
    let s = subscription_of_checkout(&app, &id(&c.body)).await;
    for behavior in ["prorate", "invoice"] {
        let r = app
            .patch_json(
                &format!("/v1/subscriptions/{}", id(&s)),
                Some(&app.token),
                &json!({"product_id": paid, "proration_behavior": behavior}),
            )
            .await;
        r.expect(409);
        assert_eq!(r.body["error"], "PaymentMethodRequired");
    }
    assert_eq!(subscription(&app, &id(&s)).await["amount"], 0);
}

#[actix_web::test]
async fn a_trial_is_not_given_again_after_a_plan_change_unless_the_seller_allows_it() {
    let app = spawn_app_with_clock().await;
    let shop = trial_shop(&app, "again").await;
    let other = product(&app, shop.org, "Other", 2000, json!({}), &[]).await;
    let (c, r) = checkout(
        &app,
        &shop.product,
        "ada@again.example",
        "tok_visa",
        json!({}),
    )
    .await;
    r.expect(200);
    let s = subscription_of_checkout(&app, &id(&c)).await;
    app.patch_json(
        &format!("/v1/subscriptions/{}", id(&s)),
        Some(&app.token),
        &json!({"product_id": other}),
    )
    .await
    .expect(200);
    // Moved to another plan, the buyer still had the trial of this one.
    let (_, r) = checkout(
        &app,
        &shop.product,
        "ada@again.example",
        "tok_visa",
        json!({}),
    )
    .await;
    r.expect(403);
    assert_eq!(r.body["error"], "TrialAlreadyRedeemed");
    // The seller may allow a trial per checkout (Polar's `prevent_trial_abuse: false`).
    let settings = json!({"subscription_settings": {"allow_multiple_subscriptions": true,
        "allow_customer_updates": true, "proration_behavior": "prorate",
        "benefit_revocation_grace_period": 0, "prevent_trial_abuse": false}});
    let r = app
        .patch_json(
            &format!("/v1/organizations/{}", shop.org),
            Some(&app.token),
            &settings,
        )
        .await;
    r.expect(200);
    assert_eq!(
        r.body["subscription_settings"]["prevent_trial_abuse"],
        false
    );
    let (c, r) = checkout(
        &app,
        &shop.product,
        "ada@again.example",
        "tok_visa",
        json!({}),
    )
    .await;
    r.expect(200);
    assert_eq!(
        subscription_of_checkout(&app, &id(&c)).await["status"],
        "trialing"
    );
}
