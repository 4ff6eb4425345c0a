//! Trials and plan changes against localstripe (issue 31): what `subscription_plans.rs`
//! checks with the test processor, here with Stripe's objects. A trial saves the card with a
//! SetupIntent and charges nothing; its end charges the saved method once, off-session; a
//! card that can be saved but not charged leaves the subscription past due, its key in its
//! grace, revoked when dunning ends; an upgrade charges the previewed amount once.
//!
//! The shop runs on a manual clock. localstripe signs its webhooks with the real time, so
//! every event it has sent is handled before the clock moves (later ones look stale to a
//! clock days ahead and are refused; the sweep learns every charge's outcome from Stripe's
//! answer, not from them).

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};
use tollgate::app::subscription::sweep_subscriptions;
use tollgate_actors::subscription::DUNNING_PERIOD;

use crate::checkouts::{
    attach_benefits, client_get, confirm, create_org, created, id_of, license_benefit, secret,
};
use crate::helpers::Reply;
use crate::stripe::{intent_of, list, paying, spawn_shop, str_of, Shop, CARD_DECLINED, CARD_OK};

/// The keys' grace after a paid period (`grace_days` of the benefit).
const GRACE_DAYS: i64 = 3;

fn time(v: &Value) -> DateTime<Utc> {
    v.as_str()
        .unwrap_or_else(|| panic!("not a time: {v}"))
        .parse()
        .unwrap_or_else(|e| panic!("not a time: {v}: {e}"))
}

/// A monthly product of `org` (Polar's 2026 shape) with `extra` fields and `benefits`.
async fn plan(
    shop: &Shop,
    org: &str,
    name: &str,
    amount: i64,
    extra: Value,
    benefits: &[&str],
) -> String {
    let mut body = json!({"name": name, "organization_id": org, "recurring_interval": "month",
        "prices": [{"amount_type": "fixed", "price_amount": amount, "price_currency": "usd"}]});
    for (k, v) in extra.as_object().expect("an object") {
        body[k] = v.clone();
    }
    let product = id_of(&shop.api().posted("/v1/products/", &body, 201).await);
    attach_benefits(shop.api(), &product, benefits).await;
    product
}

/// A license-key benefit of `org` whose keys follow the subscription with a 3-day grace.
async fn key_benefit(shop: &Shop, org: &str, prefix: &str) -> String {
    license_benefit(
        shop.api(),
        org,
        json!({"prefix": prefix, "grace_days": GRACE_DAYS}),
    )
    .await
}

/// A checkout of `product` confirmed by `email` paying with the card `pm`: the checkout as
/// created, and the confirm's reply.
async fn subscribe(shop: &Shop, product: &str, email: &str, pm: &str) -> (Value, Reply) {
    let c = created(
        shop.api(),
        &json!({"payment_processor": "stripe", "product_id": product}),
    )
    .await;
    let r = confirm(shop.api(), &secret(&c), &paying(email, pm)).await;
    (c, r)
}

/// The only subscription of `org`.
async fn only_subscription(shop: &Shop, org: &str) -> Value {
    let r = shop
        .api()
        .read(&format!(
            "/v1/subscriptions/?organization_id={org}&limit=100"
        ))
        .await;
    r.expect(200);
    let items = r.items();
    assert_eq!(items.len(), 1, "{}", r.body);
    items[0].clone()
}

async fn subscription(shop: &Shop, id: &str) -> Value {
    let r = shop.api().read(&format!("/v1/subscriptions/{id}")).await;
    r.expect(200);
    r.body
}

async fn validate(shop: &Shop, key: &Value, org: &str) -> Reply {
    shop.app
        .post_json(
            "/v1/customer-portal/license-keys/validate",
            None,
            &json!({"key": key["key"], "organization_id": org}),
        )
        .await
}

/// Waits (bounded) until every event localstripe has sent so far has been handled.
async fn events_handled(shop: &Shop) {
    for event in list(&shop.ls.get("/v1/events?limit=100").await) {
        shop.wait_handled(str_of(&event, "id")).await;
    }
}

async fn sweep(shop: &Shop) {
    sweep_subscriptions(&shop.app.state)
        .await
        .expect("sweeping subscriptions");
}

/// A trial of 14 days (10.00 a month after it) with a key benefit, and a checkout of it
/// confirmed with a new card `number`: the organization, the checkout, the confirm's
/// reply, the card.
async fn trial_checkout(shop: &Shop, slug: &str, number: &str) -> (String, Value, Reply, String) {
    let org = create_org(shop.api(), slug).await;
    let benefit = key_benefit(shop, &org, "TRIAL").await;
    let product = plan(
        shop,
        &org,
        "Pro",
        1000,
        json!({"trial_interval": "day", "trial_interval_count": 14}),
        &[&benefit],
    )
    .await;
    let pm = shop.ls.card(number).await;
    let (c, r) = subscribe(shop, &product, "ada@example.com", &pm).await;
    (org, c, r, pm)
}

/// What a trial's checkout leaves in Stripe: no PaymentIntent, one succeeded SetupIntent
/// for the buyer's customer, off-session, cards only, with the card attached to the
/// customer. Returns the Stripe customer.
async fn assert_card_saved_without_a_charge(
    shop: &Shop,
    checkout: &Value,
    reply: &Reply,
    pm: &str,
) -> String {
    reply.expect(200);
    let seti = intent_of(&reply.body);
    assert!(seti.starts_with("seti_"), "{}", reply.body);
    assert_eq!(
        reply.body["payment_processor_metadata"]["intent_status"], "succeeded",
        "{}",
        reply.body
    );
    assert_eq!(
        client_get(shop.api(), &secret(checkout)).await.body["status"],
        "succeeded"
    );
    let intents = shop.ls.intents().await;
    assert!(intents.is_empty(), "charged during the trial: {intents:?}");
    let si = shop.ls.get(&format!("/v1/setup_intents/{seti}")).await;
    assert_eq!(si["status"], "succeeded", "{si}");
    assert_eq!(si["usage"], "off_session", "{si}");
    assert_eq!(si["payment_method"], pm, "{si}");
    // Stripe's automatic payment methods (the Payment Element's), coming back to the page.
    assert_eq!(si["automatic_payment_methods"]["enabled"], true, "{si}");
    assert_eq!(
        si["automatic_payment_methods"]["allow_redirects"], "always",
        "{si}"
    );
    assert_eq!(si["metadata"]["checkout_id"], id_of(checkout).as_str());
    let cus = str_of(&si, "customer").to_string();
    assert!(cus.starts_with("cus_"), "{si}");
    let method = shop.ls.get(&format!("/v1/payment_methods/{pm}")).await;
    assert_eq!(
        method["customer"],
        cus.as_str(),
        "saved for the customer: {method}"
    );
    cus
}

#[actix_web::test]
async fn a_14_day_trial_saves_the_card_without_a_charge_then_charges_it_once_at_its_end() {
    let shop = spawn_shop(true).await;
    let clock = shop.clock.clone().expect("a manual clock");
    let (org, c, r, pm) = trial_checkout(&shop, "stripe-trial", CARD_OK).await;
    assert_eq!(c["is_payment_required"], false, "{c}");
    assert_eq!(c["total_amount"], 1000);
    let trial_end = time(&c["trial_end"]);
    let cus = assert_card_saved_without_a_charge(&shop, &c, &r, &pm).await;

    let s = only_subscription(&shop, &org).await;
    let sub = str_of(&s, "id").to_string();
    assert_eq!(s["status"], "trialing", "{s}");
    assert_eq!(time(&s["trial_end"]), trial_end);
    assert_eq!(time(&s["current_period_end"]), trial_end);
    let orders = shop.orders(&org).await;
    assert_eq!(orders.len(), 1, "{orders:?}");
    assert_eq!(orders[0]["billing_reason"], "subscription_create");
    assert_eq!(orders[0]["total_amount"], 0, "the trial is free");
    let key = shop.license_keys(&org).await.remove(0);
    validate(&shop, &key, &org).await.expect(200);
    events_handled(&shop).await;

    // The sweep before the trial's end charges nothing.
    clock.set(trial_end - Duration::days(3));
    sweep(&shop).await;
    assert!(shop.ls.intents().await.is_empty());
    assert_eq!(subscription(&shop, &sub).await["status"], "trialing");

    // At its end: one charge of the full amount, the saved card off-session.
    clock.set(trial_end + Duration::minutes(1));
    sweep(&shop).await;
    let intents = shop.ls.intents().await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    let pi = &intents[0];
    assert_eq!(pi["status"], "succeeded", "{pi}");
    assert_eq!(pi["amount"], 1000);
    assert_eq!(pi["currency"], "usd");
    assert_eq!(pi["off_session"], true, "{pi}");
    assert_eq!(pi["setup_future_usage"], Value::Null, "{pi}");
    assert_eq!(pi["payment_method"], pm.as_str());
    assert_eq!(pi["customer"], cus.as_str());
    assert_eq!(pi["metadata"]["subscription_id"], sub.as_str());

    let s = subscription(&shop, &sub).await;
    assert_eq!(s["status"], "active", "{s}");
    assert_eq!(time(&s["current_period_start"]), trial_end);
    let period_end = time(&s["current_period_end"]);
    assert!(period_end > trial_end + Duration::days(27), "{s}");
    let orders = shop.orders(&org).await;
    assert_eq!(orders.len(), 2, "{orders:?}");
    let cycle = &orders[1];
    assert_eq!(cycle["billing_reason"], "subscription_cycle", "{orders:?}");
    assert_eq!(cycle["subtotal_amount"], 1000);
    assert_eq!(cycle["subscription_id"], sub.as_str());
    // The key now lasts the paid period plus its grace.
    let key = shop.license_keys(&org).await.remove(0);
    assert_eq!(
        time(&key["expires_at"]),
        period_end + Duration::days(GRACE_DAYS)
    );
    validate(&shop, &key, &org).await.expect(200);

    // The same sweep again charges nothing more.
    sweep(&shop).await;
    assert_eq!(shop.ls.intents().await.len(), 1);
    assert_eq!(shop.orders(&org).await.len(), 2);
}

#[actix_web::test]
async fn a_declined_first_charge_after_a_trial_is_past_due_and_the_key_lives_out_its_grace() {
    let shop = spawn_shop(true).await;
    let clock = shop.clock.clone().expect("a manual clock");
    // localstripe's 4000000000000341: attached (the setup succeeds), every charge declined.
    let (org, c, r, pm) = trial_checkout(&shop, "stripe-trial-declined", CARD_DECLINED).await;
    let trial_end = time(&c["trial_end"]);
    let cus = assert_card_saved_without_a_charge(&shop, &c, &r, &pm).await;
    let s = only_subscription(&shop, &org).await;
    let sub = str_of(&s, "id").to_string();
    assert_eq!(s["status"], "trialing", "{s}");
    events_handled(&shop).await;

    clock.set(trial_end + Duration::minutes(1));
    sweep(&shop).await;
    let intents = shop.ls.intents().await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    let pi = &intents[0];
    assert_eq!(pi["status"], "requires_payment_method", "{pi}");
    assert_eq!(pi["last_payment_error"]["code"], "card_declined", "{pi}");
    assert_eq!(pi["off_session"], true, "{pi}");
    assert_eq!(pi["amount"], 1000);
    assert_eq!(pi["payment_method"], pm.as_str());
    assert_eq!(pi["customer"], cus.as_str());
    assert_eq!(subscription(&shop, &sub).await["status"], "past_due");
    let orders = shop.orders(&org).await;
    // The trial's free order, and the renewal's order pending (nothing was paid).
    assert_eq!(orders.len(), 2, "{orders:?}");
    let free = orders
        .iter()
        .find(|o| o["status"] == "paid")
        .expect("the free order");
    assert_eq!(free["total_amount"], 0);
    assert!(orders
        .iter()
        .any(|o| o["status"] == "pending" && o["paid"] == false));

    // Inside the grace the key still validates and says until when.
    let key = shop.license_keys(&org).await.remove(0);
    let v = validate(&shop, &key, &org).await;
    v.expect(200);
    assert_eq!(
        time(&v.body["grace_until"]),
        trial_end + Duration::days(GRACE_DAYS)
    );

    // Past the grace it no longer validates; when dunning gives up, the subscription ends
    // and the key is revoked. Every retry was declined: nothing was ever paid.
    clock.set(trial_end + Duration::days(GRACE_DAYS) + Duration::minutes(1));
    sweep(&shop).await;
    validate(&shop, &key, &org).await.expect(404);
    clock.set(trial_end + DUNNING_PERIOD + Duration::minutes(1));
    for _ in 0..4 {
        sweep(&shop).await;
    }
    assert_eq!(subscription(&shop, &sub).await["status"], "canceled");
    let key = shop.license_keys(&org).await.remove(0);
    assert_eq!(key["status"], "revoked", "{key}");
    let intents = shop.ls.intents().await;
    assert!(
        intents
            .iter()
            .all(|i| i["status"] != "succeeded" && i["off_session"] == true),
        "{intents:?}"
    );
    // Still the free order and the renewal's, pending: nothing was paid.
    let orders = shop.orders(&org).await;
    assert_eq!(orders.len(), 2, "{orders:?}");
    assert!(orders
        .iter()
        .all(|o| o["status"] == "pending" || (o["status"] == "paid" && o["total_amount"] == 0)));
}

#[actix_web::test]
async fn an_upgrade_mid_period_charges_the_previewed_amount_once_off_session() {
    let shop = spawn_shop(true).await;
    let clock = shop.clock.clone().expect("a manual clock");
    let org = create_org(shop.api(), "stripe-upgrade").await;
    let shared = key_benefit(&shop, &org, "SHARED").await;
    let basic = plan(&shop, &org, "Basic", 1000, json!({}), &[&shared]).await;
    let pro = plan(&shop, &org, "Pro", 3000, json!({}), &[&shared]).await;
    let pm = shop.ls.card(CARD_OK).await;
    let (_, r) = subscribe(&shop, &basic, "ada@example.com", &pm).await;
    r.expect(200);
    let first = shop.ls.intent(&intent_of(&r.body)).await;
    assert_eq!(first["status"], "succeeded", "{first}");
    assert_eq!(first["amount"], 1000);
    let cus = str_of(&first, "customer").to_string();
    let s = only_subscription(&shop, &org).await;
    let sub = str_of(&s, "id").to_string();
    let start = time(&s["current_period_start"]);
    events_handled(&shop).await;

    // Ten days in, the preview says what an immediate upgrade costs.
    clock.set(start + Duration::days(10) + Duration::hours(5));
    let body = json!({"product_id": pro, "proration_behavior": "invoice"});
    let p = shop
        .api()
        .posted(
            &format!("/v1/subscriptions/{sub}/change-preview"),
            &body,
            200,
        )
        .await;
    let due = p["due_amount"].as_i64().unwrap_or_else(|| panic!("{p}"));
    assert!(due > 0 && due < 2000, "{p}");
    assert_eq!(
        due,
        p["proration_amount"].as_i64().unwrap() + p["tax_amount"].as_i64().unwrap()
    );
    assert_eq!(
        shop.ls.intents().await.len(),
        1,
        "a preview charges nothing"
    );

    // The change charges exactly that, once, with the saved card off-session; asked
    // again it changes nothing and charges nothing.
    let path = format!("/v1/subscriptions/{sub}");
    for _ in 0..2 {
        let r = shop.api().patch(&path, Some(shop.api().token), &body).await;
        r.expect(200);
        assert_eq!(r.body["product_id"], pro.as_str());
        assert_eq!(r.body["amount"], 3000);
    }
    let intents = shop.ls.intents().await;
    assert_eq!(intents.len(), 2, "{intents:?}");
    let change = &intents[1];
    assert_ne!(change["id"], first["id"]);
    assert_eq!(change["status"], "succeeded", "{change}");
    assert_eq!(change["amount"], due, "{change}");
    assert_eq!(change["currency"], "usd");
    assert_eq!(change["off_session"], true, "{change}");
    assert_eq!(change["payment_method"], pm.as_str());
    assert_eq!(change["customer"], cus.as_str());
    assert_eq!(change["metadata"]["subscription_id"], sub.as_str());
    assert!(
        str_of(&change["metadata"], "idempotency_key").starts_with(&format!("{sub}:change:")),
        "{change}"
    );
    let orders = shop.orders(&org).await;
    let updates: Vec<&Value> = orders
        .iter()
        .filter(|o| o["billing_reason"] == "subscription_update")
        .collect();
    assert_eq!(updates.len(), 1, "{orders:?}");
    assert_eq!(updates[0]["total_amount"], due);
    assert_eq!(updates[0]["product_id"], pro.as_str());
    assert_eq!(orders.len(), 2, "{orders:?}");
}

/// The Payment Element in setup mode: a trial saves a SEPA Direct Debit method through a
/// ConfirmationToken (the SetupIntent confirmed with it), for the charge at the trial's end.
#[actix_web::test]
async fn a_trial_saves_a_debit_method_from_a_confirmation_token() {
    let shop = spawn_shop(false).await;
    let org = create_org(shop.api(), "stripe-trial-sepa").await;
    let benefit = key_benefit(&shop, &org, "TRIAL").await;
    let product = plan(
        &shop,
        &org,
        "Pro",
        1000,
        json!({"trial_interval": "day", "trial_interval_count": 14}),
        &[&benefit],
    )
    .await;
    let ctoken = crate::stripe_payment_element::sepa_token(&shop).await;
    let (c, r) = subscribe(&shop, &product, "ada@example.com", &ctoken).await;
    r.expect(200);
    let seti = intent_of(&r.body);
    assert!(seti.starts_with("seti_"), "{}", r.body);
    assert_eq!(
        client_get(shop.api(), &secret(&c)).await.body["status"],
        "succeeded"
    );
    let si = shop.ls.get(&format!("/v1/setup_intents/{seti}")).await;
    assert_eq!(si["status"], "succeeded", "{si}");
    assert_eq!(si["automatic_payment_methods"]["enabled"], true, "{si}");
    // The token is used, by this SetupIntent, and its method is saved for the customer.
    let token = shop
        .ls
        .get(&format!("/v1/confirmation_tokens/{ctoken}"))
        .await;
    assert_eq!(token["setup_intent"], seti.as_str(), "{token}");
    let pm = str_of(&si, "payment_method");
    let method = shop.ls.get(&format!("/v1/payment_methods/{pm}")).await;
    assert_eq!(method["type"], "sepa_debit", "{method}");
    assert_eq!(method["customer"], si["customer"], "{method}");
    let s = only_subscription(&shop, &org).await;
    assert_eq!(s["status"], "trialing", "{s}");
    assert!(shop.ls.intents().await.is_empty(), "nothing charged");
}
