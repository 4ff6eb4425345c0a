//! Stripe in the checkout's currency (issue 49), against localstripe: a euro and a yen
//! payment reach Stripe in the currency's minor unit as they are (1800 for €18.00, 3000 for
//! ¥3,000: yen has no minor unit and is not scaled), and a yen refund reaches Stripe the
//! same way. What Stripe received is read back from localstripe's PaymentIntents, charges
//! and refunds.

use serde_json::{json, Value};

use crate::checkouts::{by_price, confirm, create_org, created, id_of, product, secret};
use crate::stripe::{intent_of, list, orders_of, paying, spawn_shop, str_of, Shop, CARD_OK};

/// A one-time price in `currency` (the organization's default, dollars, is always there).
fn one_time(currency: &str, amount: i64) -> Value {
    json!({"type": "one_time", "amount_type": "fixed", "price_amount": amount,
           "price_currency": currency})
}

/// The id of `product`'s price in `currency`.
fn price_in(product: &Value, currency: &str) -> String {
    product["prices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["price_currency"] == currency)
        .map(id_of)
        .unwrap_or_else(|| panic!("no {currency} price in {product}"))
}

/// Buys `price` with a fresh approved card: the checkout and its confirmed state.
async fn buy(shop: &Shop, price: &str, email: &str) -> (Value, Value) {
    let pm = shop.ls.card(CARD_OK).await;
    let c = created(shop.api(), &by_price(price)).await;
    let r = confirm(shop.api(), &secret(&c), &paying(email, &pm)).await;
    r.expect(200);
    assert_eq!(r.body["status"], "confirmed", "{}", r.body);
    (c, r.body)
}

/// The charges Stripe made for `intent`.
async fn charges_of(shop: &Shop, intent: &str) -> Vec<Value> {
    list(
        &shop
            .ls
            .get(&format!("/v1/charges?payment_intent={intent}&limit=100"))
            .await,
    )
}

#[actix_web::test]
async fn euro_and_yen_payments_reach_stripe_in_minor_units_and_a_yen_refund_too() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let org = create_org(api, "stripe-currencies").await;
    let ebook = product(
        api,
        &org,
        "Ebook",
        json!([
            one_time("usd", 2000),
            one_time("eur", 1800),
            one_time("jpy", 3000)
        ]),
    )
    .await;

    let mut paid = Vec::new();
    for (currency, amount, email) in [
        ("eur", 1800, "ada@eur.example"),
        ("jpy", 3000, "ada@jpy.example"),
    ] {
        let (c, confirmed) = buy(&shop, &price_in(&ebook, currency), email).await;
        assert_eq!(c["currency"], currency, "{c}");
        assert_eq!(c["total_amount"], amount, "{c}");
        let intent = intent_of(&confirmed);
        let pi = shop.ls.intent(&intent).await;
        assert_eq!(pi["status"], "succeeded", "{pi}");
        assert_eq!(pi["currency"], currency, "{pi}");
        assert_eq!(pi["amount"], amount, "{pi}");
        let charges = charges_of(&shop, &intent).await;
        assert_eq!(charges.len(), 1, "{charges:?}");
        assert_eq!(charges[0]["amount"], amount);
        assert_eq!(charges[0]["currency"], currency);
        let orders = shop.orders(&org).await;
        let order = orders_of(&orders, &id_of(&c));
        assert_eq!(order.len(), 1, "{orders:?}");
        assert_eq!(order[0]["currency"], currency);
        assert_eq!(order[0]["total_amount"], amount);
        paid.push((str_of(order[0], "id").to_string(), intent));
    }

    // A partial yen refund, then the rest: Stripe refunds 1000 and 2000 yen, unscaled.
    let (oid, yen_intent) = paid.pop().expect("the yen order");
    let refund = |amount: i64| {
        let body = json!({"order_id": oid, "reason": "customer_request", "amount": amount});
        let app = &shop.app;
        async move { app.post_json("/v1/refunds/", Some(&app.token), &body).await }
    };
    for amount in [1000, 2000] {
        if amount == 2000 {
            // More than is left (¥2,000): refused on `amount`, Stripe is not asked.
            refund(2001)
                .await
                .expect_invalid_at(json!(["body", "amount"]));
        }
        let r = refund(amount).await;
        r.expect(200);
        assert_eq!(r.body["status"], "succeeded", "{}", r.body);
        assert_eq!(r.body["currency"], "jpy");
        assert_eq!(r.body["amount"], amount);
    }
    let at_stripe = list(
        &shop
            .ls
            .get(&format!(
                "/v1/refunds?payment_intent={yen_intent}&limit=100"
            ))
            .await,
    );
    let mut amounts: Vec<i64> = at_stripe
        .iter()
        .map(|r| r["amount"].as_i64().unwrap())
        .collect();
    amounts.sort_unstable();
    assert_eq!(amounts, [1000, 2000], "{at_stripe:?}");
    for r in &at_stripe {
        assert_eq!(r["currency"], "jpy", "{r}");
    }
    let o = api.read(&format!("/v1/orders/{oid}")).await;
    o.expect(200);
    assert_eq!(o.body["status"], "refunded");
    assert_eq!(o.body["refunded_amount"], 3000);
}
