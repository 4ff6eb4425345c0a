//! Issue 48, item 7: Stripe Tax as the organization's tax provider, end to end against
//! localstripe (extended with Stripe's Tax Calculations and Transactions endpoints, and a
//! billing postal code `00000` that makes a calculation fail as when Stripe is down).
//!
//! An Irish seller with `provider: "stripe"` and exclusive prices sells one price of 1200:
//! (a) a German consumer's checkout is quoted by a calculation (19 %: 228 added), the
//! payment charges 1428, and the order keeps the tax and the calculation; the recorder then
//! records a transaction at Stripe with the order id as its reference and the
//! calculation's amounts; (b) a refund of half the order is reversed there with the refund
//! id as its reference, and a refund of the whole order reverses it whole; (c) when the
//! calculation fails, updating and confirming the checkout answer 502
//! `TaxCalculationFailed` and no PaymentIntent is created, and an address Stripe cannot
//! place is Polar's 422 at `customer_billing_address` on confirm; (d) on a
//! server whose payments do not go through Stripe, an organization with the stripe provider
//! cannot be quoted: its checkouts cannot be created (503), until it computes its own tax.

use std::time::{Duration, Instant};

use actix_web::rt::time::sleep;
use serde_json::{json, Value};
use tollgate::domain::order::Order;
use tollgate::domain::tax_transaction::TaxTransaction;
use tollgate::payments::stripe_tax::StripeTax;

use crate::checkouts::{
    by_price, client_path, confirm, create_org, created, id_of, product, secret, store_values, Api,
};
use crate::helpers::spawn_app;
use crate::stripe::{intent_of, paying, spawn_shop, str_of, Shop, CARD_OK};

/// How long the recorder may take to record at localstripe (it is woken by the fan-out).
const RECORD_DEADLINE: Duration = Duration::from_secs(20);

/// An organization established in Ireland whose tax Stripe computes, its prices exclusive,
/// selling one price of 1200 (USD). Returns (organization, price).
async fn stripe_taxed(api: Api<'_>, slug: &str) -> (String, String) {
    let org = create_org(api, slug).await;
    let r = api
        .patch(
            &format!("/v1/organizations/{org}"),
            Some(api.token),
            &json!({"tax": {"country": "IE", "provider": "stripe"},
                    "default_tax_behavior": "exclusive"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["tax"]["provider"], "stripe", "{}", r.body);
    let p = product(
        api,
        &org,
        "Lifetime",
        json!([{"amount_type": "fixed", "price_amount": 1200, "price_currency": "usd"}]),
    )
    .await;
    let price = id_of(&p["prices"][0]);
    (org, price)
}

fn german(postal_code: &str) -> Value {
    json!({"customer_billing_address": {"country": "DE", "line1": "Unter den Linden 1",
                                        "city": "Berlin", "postal_code": postal_code}})
}

/// The confirm body of a German buyer paying with `pm`.
fn paying_from(buyer: &Value, email: &str, pm: &str) -> Value {
    let mut body = paying(email, pm);
    body["customer_billing_address"] = buyer["customer_billing_address"].clone();
    body
}

/// The stored order `id`.
async fn stored_order(shop: &Shop, id: &str) -> Order {
    store_values::<Order>(&shop.app.state.store)
        .await
        .into_iter()
        .find(|o| o.id.to_string() == id)
        .unwrap_or_else(|| panic!("order {id} is not stored"))
}

/// Waits (bounded) until `done` holds of the order's recorded transaction.
async fn recorded(
    shop: &Shop,
    order: &Order,
    done: impl Fn(&TaxTransaction) -> bool,
) -> TaxTransaction {
    let started = Instant::now();
    loop {
        let t = shop
            .app
            .state
            .store
            .get::<TaxTransaction>(&TaxTransaction::id_for(order.id).key())
            .await
            .expect("reading the store")
            .map(|t| t.value);
        if let Some(t) = t.filter(|t| done(t)) {
            return t;
        }
        assert!(
            started.elapsed() < RECORD_DEADLINE,
            "the order's tax transaction is not recorded within {RECORD_DEADLINE:?}; localstripe log:\n{}",
            shop.ls.log_text()
        );
        sleep(Duration::from_millis(100)).await;
    }
}

/// (amount, amount_tax) of each line item of a Stripe object.
fn lines(v: &Value) -> Vec<(i64, i64)> {
    v["line_items"]["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no line items in {v}"))
        .iter()
        .map(|l| {
            (
                l["amount"].as_i64().unwrap(),
                l["amount_tax"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[actix_web::test]
async fn a_sale_is_calculated_by_stripe_recorded_after_payment_and_reversed_on_refund() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let (org, price) = stripe_taxed(api, "stripe-tax").await;

    // (a) The German consumer's quote is Stripe's calculation: 19 % added.
    let c = created(api, &by_price(&price)).await;
    let q = api
        .patch(&client_path(&secret(&c)), None, &german("10117"))
        .await;
    q.expect(200);
    let q = q.body;
    assert_eq!(q["tax_behavior"], "exclusive", "{q}");
    assert_eq!(
        (&q["net_amount"], &q["tax_amount"], &q["total_amount"]),
        (&json!(1200), &json!(228), &json!(1428)),
        "{q}"
    );
    let b = &q["tax_breakdown"][0];
    assert_eq!(b["country"], "DE", "{q}");
    assert_eq!(b["rate"].as_f64(), Some(19.0), "{q}");
    assert_eq!(b["taxability_reason"], "standard_rated", "{q}");
    assert_eq!(
        (&b["taxable_amount"], &b["amount"]),
        (&json!(1200), &json!(228))
    );

    // Paid through Stripe: the charge includes the tax.
    let pm = shop.ls.card(CARD_OK).await;
    let r = confirm(
        api,
        &secret(&c),
        &paying_from(&german("10117"), "hans@example.de", &pm),
    )
    .await;
    r.expect(200);
    let pi = shop.ls.intent(&intent_of(&r.body)).await;
    assert_eq!(pi["amount"], 1428, "{pi}");
    let orders = shop.orders(&org).await;
    assert_eq!(orders.len(), 1, "{orders:?}");
    let o = &orders[0];
    assert_eq!(
        (&o["amount"], &o["tax_amount"], &o["total_amount"]),
        (&json!(1200), &json!(228), &json!(1428)),
        "{o}"
    );
    assert_eq!(o["tax_breakdown"][0]["country"], "DE", "{o}");
    assert_eq!(o["tax_breakdown"][0]["rate"].as_f64(), Some(19.0), "{o}");

    // The order keeps the calculation it was charged on, and Stripe holds it.
    let order = stored_order(&shop, str_of(o, "id")).await;
    let calculation = order
        .tax
        .provider_ref
        .clone()
        .expect("the order keeps the calculation");
    assert!(calculation.starts_with("taxcalc_"), "{calculation}");
    let calc = shop
        .ls
        .get(&format!("/v1/tax/calculations/{calculation}"))
        .await;
    assert_eq!(
        (&calc["amount_total"], &calc["tax_amount_exclusive"]),
        (&json!(1428), &json!(228)),
        "{calc}"
    );
    assert_eq!(calc["customer_details"]["address"]["country"], "DE");
    assert_eq!(calc["customer_details"]["address"]["postal_code"], "10117");

    // Recorded after payment: a transaction named after the order, the calculation's
    // amounts.
    let t = recorded(&shop, &order, |t| t.transaction_id.is_some()).await;
    assert_eq!(t.calculation_id, calculation);
    let txn_id = t.transaction_id.clone().expect("recorded");
    let txn = shop.ls.get(&format!("/v1/tax/transactions/{txn_id}")).await;
    assert_eq!(txn["object"], "tax.transaction", "{txn}");
    assert_eq!(txn["type"], "transaction", "{txn}");
    assert_eq!(txn["reference"], order.id.to_string(), "{txn}");
    assert_eq!(lines(&txn), vec![(1200, 228)], "{txn}");

    // Asked again with the order's reference (the idempotency key aside): Stripe refuses a
    // reference used already, which the recorder takes as recorded.
    let stax = StripeTax::new(&shop.app.state.settings.payments).expect("a client");
    let e = stax
        .record(&calculation, &format!("{}-again", order.id))
        .await
        .expect("another reference records");
    assert!(e.starts_with("tax_"), "{e}");
    let reused = shop.ls.get(&format!("/v1/tax/transactions/{e}")).await;
    assert_eq!(reused["type"], "transaction");
    let resp = reqwest::Client::new()
        .post(format!(
            "{}/v1/tax/transactions/create_from_calculation",
            shop.ls.base
        ))
        .bearer_auth(&shop.app.state.settings.payments.stripe_secret_key)
        .form(&[
            ("calculation", calculation.clone()),
            ("reference", order.id.to_string()),
        ])
        .send()
        .await
        .expect("localstripe answers");
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.expect("a JSON error");
    assert_eq!(body["error"]["param"], "reference", "{body}");

    // (b) A refund of half the order: reversed there, named after the refund.
    let refund = shop
        .app
        .post_json(
            "/v1/refunds/",
            Some(&shop.app.token),
            &json!({"order_id": order.id.to_string(), "reason": "customer_request",
                    "amount": 600}),
        )
        .await;
    refund.expect(200);
    assert_eq!(refund.body["status"], "succeeded", "{}", refund.body);
    assert_eq!(refund.body["tax_amount"], 114, "{}", refund.body);
    let refund_id = str_of(&refund.body, "id").to_string();
    let t = recorded(&shop, &order, |t| !t.reversals.is_empty()).await;
    assert_eq!(t.reversals.len(), 1);
    let rev = &t.reversals[0];
    assert_eq!(rev.refund_id.to_string(), refund_id);
    assert_eq!((rev.full, rev.flat_amount), (false, -714));
    let rev_id = rev.transaction_id.clone().expect("reversed");
    let reversal = shop.ls.get(&format!("/v1/tax/transactions/{rev_id}")).await;
    assert_eq!(reversal["type"], "reversal", "{reversal}");
    assert_eq!(reversal["reference"], refund_id.as_str(), "{reversal}");
    assert_eq!(
        reversal["reversal"]["original_transaction"],
        txn_id.as_str(),
        "{reversal}"
    );
    assert_eq!(lines(&reversal), vec![(-600, -114)], "{reversal}");
    // The transaction itself is unchanged.
    let txn = shop.ls.get(&format!("/v1/tax/transactions/{txn_id}")).await;
    assert_eq!(lines(&txn), vec![(1200, 228)], "{txn}");
}

#[actix_web::test]
async fn a_failed_calculation_refuses_the_checkout_before_any_charge() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let (org, price) = stripe_taxed(api, "stripe-tax-down").await;
    let c = created(api, &by_price(&price)).await;
    let intents_before = shop.ls.intents().await.len();

    // (c) Stripe answers 500 for this address: the update is refused, said so.
    let r = api
        .patch(&client_path(&secret(&c)), None, &german("00000"))
        .await;
    r.expect(502);
    assert_eq!(r.body["error"], "TaxCalculationFailed", "{}", r.body);
    assert_eq!(
        r.body["detail"],
        "Tax could not be calculated: the tax provider did not answer. Nothing was charged.",
        "{}",
        r.body
    );
    // Confirming with it: refused the same way, and nothing is charged.
    let pm = shop.ls.card(CARD_OK).await;
    let r = confirm(
        api,
        &secret(&c),
        &paying_from(&german("00000"), "hans@example.de", &pm),
    )
    .await;
    r.expect(502);
    assert_eq!(r.body["error"], "TaxCalculationFailed", "{}", r.body);
    let intents = shop.ls.intents().await;
    assert_eq!(intents.len(), intents_before, "{intents:?}");
    assert!(intents
        .iter()
        .all(|i| i["metadata"]["checkout_id"] != id_of(&c).as_str()));
    assert!(shop.orders(&org).await.is_empty());
    // The checkout is still open: with an address Stripe can tax, it is paid.
    let r = confirm(
        api,
        &secret(&c),
        &paying_from(&german("10117"), "hans@example.de", &pm),
    )
    .await;
    r.expect(200);
    let pi = shop.ls.intent(&intent_of(&r.body)).await;
    assert_eq!(pi["amount"], 1428, "{pi}");
}

/// Stripe cannot place the buyer (400 `customer_tax_location_invalid`, localstripe's postal
/// code `00001`): the checkout being filled in goes on without a quote (Polar swallows it
/// on update; Polar's `tax_amount` is then null, ours 0); confirming it is Polar's 422 at `customer_billing_address` with Stripe's
/// words, and nothing is charged.
#[actix_web::test]
async fn an_address_stripe_cannot_place_is_the_buyers_to_correct() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let (org, price) = stripe_taxed(api, "stripe-tax-unplaceable").await;
    let c = created(api, &by_price(&price)).await;
    let intents_before = shop.ls.intents().await.len();

    let r = api
        .patch(&client_path(&secret(&c)), None, &german("00001"))
        .await;
    r.expect(200);
    // Not quoted: no tax line until the address is one Stripe can place (Polar answers
    // `tax_amount: null` here; ours is 0 with no breakdown, see docs/tax.md).
    assert_eq!(r.body["tax_amount"], 0, "{}", r.body);
    assert_eq!(r.body["tax_breakdown"], json!([]), "{}", r.body);
    assert_eq!(r.body["customer_billing_address"]["postal_code"], "00001");

    let pm = shop.ls.card(CARD_OK).await;
    let r = confirm(
        api,
        &secret(&c),
        &paying_from(&german("00001"), "hans@example.de", &pm),
    )
    .await;
    r.expect(422);
    let detail = &r.body["detail"][0];
    assert_eq!(
        detail["loc"],
        json!(["body", "customer_billing_address"]),
        "{}",
        r.body
    );
    assert_eq!(
        detail["msg"], "The customer's location could not be determined.",
        "{}",
        r.body
    );
    assert_eq!(shop.ls.intents().await.len(), intents_before);
    assert!(shop.orders(&org).await.is_empty());
}

#[actix_web::test]
async fn without_stripe_an_organization_on_stripe_tax_is_not_quoted() {
    // (d) The test processor: the server has no Stripe Tax.
    let app = spawn_app().await;
    let api = Api::of(&app);
    let (org, price) = stripe_taxed(api, "stripe-tax-absent").await;
    // The quote of a new checkout (nothing to locate yet) already needs the provider.
    let r = api
        .post("/v1/checkouts/custom/", Some(api.token), &by_price(&price))
        .await;
    r.expect(503);
    assert_eq!(r.body["error"], "ServiceUnavailable", "{}", r.body);
    let r = api
        .post("/v1/checkouts/", Some(api.token), &by_price(&price))
        .await;
    r.expect(503);
    // An organization that computes its own tax sells on the same server.
    let r = api
        .patch(
            &format!("/v1/organizations/{org}"),
            Some(api.token),
            &json!({"tax": {"provider": "builtin"}}),
        )
        .await;
    r.expect(200);
    let c = created(api, &by_price(&price)).await;
    let mut body = paying("hans@example.de", "tok_visa");
    body["customer_billing_address"] = german("10117")["customer_billing_address"].clone();
    confirm(api, &secret(&c), &body).await.expect(200);
    let r = api
        .read(&format!("/v1/orders/?organization_id={org}&limit=10"))
        .await;
    r.expect(200);
    assert_eq!(r.items().len(), 1, "{}", r.body);
}

#[actix_web::test]
async fn a_refund_of_the_whole_order_reverses_the_whole_transaction() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let (org, price) = stripe_taxed(api, "stripe-tax-full").await;
    let c = created(api, &by_price(&price)).await;
    let pm = shop.ls.card(CARD_OK).await;
    let r = confirm(
        api,
        &secret(&c),
        &paying_from(&german("10117"), "hans@example.de", &pm),
    )
    .await;
    r.expect(200);
    let orders = shop.orders(&org).await;
    let order = stored_order(&shop, str_of(&orders[0], "id")).await;
    let t = recorded(&shop, &order, |t| t.transaction_id.is_some()).await;
    let txn_id = t.transaction_id.clone().expect("recorded");

    let refund = shop
        .app
        .post_json(
            "/v1/refunds/",
            Some(&shop.app.token),
            &json!({"order_id": order.id.to_string(), "reason": "customer_request",
                    "amount": 1200}),
        )
        .await;
    refund.expect(200);
    assert_eq!(refund.body["tax_amount"], 228, "{}", refund.body);
    let t = recorded(&shop, &order, |t| !t.reversals.is_empty()).await;
    let rev = &t.reversals[0];
    assert_eq!((rev.full, rev.flat_amount), (true, 0));
    let rev_id = rev.transaction_id.clone().expect("reversed");
    let reversal = shop.ls.get(&format!("/v1/tax/transactions/{rev_id}")).await;
    assert_eq!(reversal["type"], "reversal", "{reversal}");
    assert_eq!(
        reversal["reference"],
        str_of(&refund.body, "id"),
        "{reversal}"
    );
    assert_eq!(
        reversal["reversal"]["original_transaction"],
        txn_id.as_str(),
        "{reversal}"
    );
    assert_eq!(lines(&reversal), vec![(-1200, -228)], "{reversal}");
}
