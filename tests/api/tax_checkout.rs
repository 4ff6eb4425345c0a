//! Issue 48 over HTTP: a German seller (DE136695976, registered for the EU One-Stop-Shop)
//! sells a one-time price of 1200; what each buyer's checkout and order answer: a German
//! consumer pays 19 % inside the price, a French consumer 20 %, a French business with a
//! valid number nothing (reverse charge, its billing name and number on the order), a US
//! buyer nothing (exclusive); with `default_tax_behavior: exclusive` the German consumer
//! pays 1200 + 228; an organization without tax settings is unchanged. The refusals of a
//! business confirm (no billing name, a number whose check digits fail), the processor
//! charged exactly `total_amount` (localstripe's PaymentIntent), and a refund of half an
//! inclusive order returns half its tax. Only the seller's token with organizations:write
//! sets the tax (a stranger: 404, a read-only token: 403).

use serde_json::{json, Value};

use crate::checkouts::{
    by_price, client_get, client_path, confirm, create_org, created, get_by_id, id_of, product,
    secret, Api,
};
use crate::helpers::spawn_app;
use crate::stripe::{intent_of, paying, spawn_shop, CARD_OK};
use tollgate::auth::Scope;

pub(crate) const SELLER_TAX: &str = "DE136695976";
pub(crate) const FR_BUSINESS: &str = "FR40303265045";
/// The business's number with its last digit changed: the check digits fail.
const FR_BUSINESS_WRONG: &str = "FR40303265046";

/// An organization selling one price of 1200 (USD); with `tax`, the German seller's
/// settings and `behavior` as its `default_tax_behavior`. Returns (organization, price).
async fn shop(api: Api<'_>, slug: &str, tax: bool, behavior: &str) -> (String, String) {
    let org = create_org(api, slug).await;
    if tax {
        let r = api
            .patch(
                &format!("/v1/organizations/{org}"),
                Some(api.token),
                &json!({"tax": {"country": "DE", "tax_id": SELLER_TAX,
                                "registrations": ["eu_oss"]},
                        "default_tax_behavior": behavior}),
            )
            .await;
        r.expect(200);
        assert_eq!(r.body["tax"]["country"], "DE", "{}", r.body);
        assert_eq!(r.body["tax"]["tax_id"], SELLER_TAX, "{}", r.body);
        assert_eq!(r.body["tax"]["registrations"], json!(["eu_oss"]));
        assert_eq!(r.body["default_tax_behavior"], behavior, "{}", r.body);
    }
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

pub(crate) fn consumer(country: &str) -> Value {
    json!({"customer_billing_address": {"country": country}})
}

pub(crate) fn french_business() -> Value {
    json!({
        "is_business_customer": true,
        "customer_billing_name": "Acme SAS",
        "customer_billing_address": {"country": "FR", "line1": "1 rue de Rivoli",
                                     "city": "Paris", "postal_code": "75001"},
        "customer_tax_id": FR_BUSINESS,
    })
}

/// The confirm body: `buyer`'s details, an e-mail and the test card.
pub(crate) fn confirming(buyer: &Value, email: &str) -> Value {
    let mut body = buyer.clone();
    body["customer_name"] = json!("Ada Lovelace");
    body["customer_email"] = json!(email);
    body["confirmation_token_id"] = json!("tok_visa");
    body
}

/// A checkout of `price` whose buyer gave `buyer`'s details (a client update); returns
/// (the created checkout, the update's answer).
pub(crate) async fn quoted(api: Api<'_>, price: &str, buyer: &Value) -> (Value, Value) {
    let c = created(api, &by_price(price)).await;
    let r = api.patch(&client_path(&secret(&c)), None, buyer).await;
    r.expect(200);
    (c, r.body)
}

/// The amounts of a checkout: (tax_behavior, net, tax, total).
fn amounts(c: &Value) -> (String, i64, i64, i64) {
    (
        c["tax_behavior"].as_str().unwrap_or("null").to_string(),
        c["net_amount"].as_i64().unwrap(),
        c["tax_amount"].as_i64().unwrap_or(-1),
        c["total_amount"].as_i64().unwrap(),
    )
}

#[track_caller]
fn assert_breakdown(v: &Value, country: &str, rate: f64, reason: &str, taxable: i64, tax: i64) {
    let b = v["tax_breakdown"]
        .as_array()
        .unwrap_or_else(|| panic!("no tax_breakdown in {v}"));
    assert_eq!(b.len(), 1, "{v}");
    assert_eq!(b[0]["country"], country, "{v}");
    assert_eq!(b[0]["rate"].as_f64(), Some(rate), "{v}");
    assert_eq!(b[0]["taxability_reason"], reason, "{v}");
    assert_eq!(b[0]["taxable_amount"], taxable, "{v}");
    assert_eq!(b[0]["amount"], tax, "{v}");
}

/// Confirms the checkout with `buyer`'s details and answers its order.
pub(crate) async fn bought(api: Api<'_>, c: &Value, buyer: &Value, email: &str) -> Value {
    let r = confirm(api, &secret(c), &confirming(buyer, email)).await;
    r.expect(200);
    order_of(api, c).await
}

pub(crate) async fn order_of(api: Api<'_>, c: &Value) -> Value {
    let r = api
        .read(&format!("/v1/orders/?checkout_id={}", id_of(c)))
        .await;
    r.expect(200);
    let items = r.items();
    assert_eq!(items.len(), 1, "{}", r.body);
    let r = api.read(&format!("/v1/orders/{}", id_of(&items[0]))).await;
    r.expect(200);
    assert_eq!(r.body["tax_amount"], items[0]["tax_amount"]);
    assert_eq!(r.body["tax_breakdown"], items[0]["tax_breakdown"]);
    r.body
}

/// (amount, net, tax, total, tax_behavior) of an order.
fn order_amounts(o: &Value) -> (i64, i64, i64, i64, String) {
    (
        o["amount"].as_i64().unwrap(),
        o["net_amount"].as_i64().unwrap(),
        o["tax_amount"].as_i64().unwrap(),
        o["total_amount"].as_i64().unwrap(),
        o["tax_behavior"].as_str().unwrap().to_string(),
    )
}

#[actix_web::test]
async fn consumers_pay_their_countrys_vat_inside_the_price() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let (_, price) = shop(api, "tax-location", true, "location").await;

    // (a) A German consumer: 19 % inside 1200.
    let (c, q) = quoted(api, &price, &consumer("DE")).await;
    assert_eq!(amounts(&q), ("inclusive".into(), 1008, 192, 1200), "{q}");
    assert_breakdown(&q, "DE", 19.0, "standard_rated", 1008, 192);
    // The seller's and the buyer's reads agree.
    let g = get_by_id(api, &id_of(&c)).await;
    g.expect(200);
    assert_eq!(amounts(&g.body), amounts(&q), "{}", g.body);
    assert_eq!(g.body["tax_breakdown"], q["tax_breakdown"]);
    let o = bought(api, &c, &consumer("DE"), "hans@example.de").await;
    assert_eq!(
        order_amounts(&o),
        (1008, 1008, 192, 1200, "inclusive".into()),
        "{o}"
    );
    assert_breakdown(&o, "DE", 19.0, "standard_rated", 1008, 192);
    assert_eq!(o["customer_tax_id"], Value::Null, "{o}");
    assert_eq!(o["billing_address"]["country"], "DE", "{o}");

    // A refund of half of it returns half the tax.
    let r = app
        .post_json(
            "/v1/refunds/",
            Some(&app.token),
            &json!({"order_id": id_of(&o), "reason": "customer_request", "amount": 504}),
        )
        .await;
    r.expect(200);
    assert_eq!(
        (&r.body["amount"], &r.body["tax_amount"]),
        (&json!(504), &json!(96))
    );
    let after = api.read(&format!("/v1/orders/{}", id_of(&o))).await;
    after.expect(200);
    assert_eq!(after.body["status"], "partially_refunded", "{}", after.body);
    assert_eq!(after.body["refunded_amount"], 504, "{}", after.body);
    assert_eq!(after.body["refunded_tax_amount"], 96, "{}", after.body);
    assert_eq!(after.body["refundable_amount"], 504, "{}", after.body);
    assert_eq!(after.body["refundable_tax_amount"], 96, "{}", after.body);

    // (b) A French consumer: 20 %.
    let (c, q) = quoted(api, &price, &consumer("FR")).await;
    assert_eq!(amounts(&q), ("inclusive".into(), 1000, 200, 1200), "{q}");
    assert_breakdown(&q, "FR", 20.0, "standard_rated", 1000, 200);
    let o = bought(api, &c, &consumer("FR"), "marie@example.fr").await;
    assert_eq!(
        order_amounts(&o),
        (1000, 1000, 200, 1200, "inclusive".into()),
        "{o}"
    );
    assert_breakdown(&o, "FR", 20.0, "standard_rated", 1000, 200);

    // (d) A US buyer: nothing collected, the price is exclusive.
    let (c, q) = quoted(
        api,
        &price,
        &json!({"customer_billing_address":
        {"country": "US", "state": "US-NY", "postal_code": "10001"}}),
    )
    .await;
    assert_eq!(amounts(&q), ("exclusive".into(), 1200, 0, 1200), "{q}");
    let o = bought(
        api,
        &c,
        &json!({"customer_billing_address":
            {"country": "US", "state": "US-NY", "postal_code": "10001"}}),
        "joe@example.com",
    )
    .await;
    assert_eq!(
        order_amounts(&o),
        (1200, 1200, 0, 1200, "exclusive".into()),
        "{o}"
    );
}

#[actix_web::test]
async fn a_french_business_with_a_valid_number_is_reverse_charged() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let (_, price) = shop(api, "tax-business", true, "location").await;

    // (c) Reverse charge: no VAT, the whole price.
    let (c, q) = quoted(api, &price, &french_business()).await;
    assert_eq!(q["is_business_customer"], true, "{q}");
    assert_eq!(q["customer_billing_name"], "Acme SAS", "{q}");
    assert_eq!(q["customer_tax_id"], FR_BUSINESS, "{q}");
    assert_eq!(q["tax_amount"], 0, "{q}");
    assert_eq!(q["total_amount"], 1200, "{q}");
    assert_eq!(
        q["tax_breakdown"][0]["taxability_reason"], "reverse_charge",
        "{q}"
    );
    assert_eq!(q["tax_breakdown"][0]["amount"], 0, "{q}");

    // Refusals first (the checkout stays open): a business without a billing name…
    let mut nameless = french_business();
    nameless["customer_billing_name"] = Value::Null;
    let r = confirm(api, &secret(&c), &confirming(&nameless, "compta@acme.fr")).await;
    r.expect_invalid_at(json!(["body", "customer_billing_name"]));
    // … and a number whose check digits fail.
    let mut wrong = french_business();
    wrong["customer_tax_id"] = json!(FR_BUSINESS_WRONG);
    let r = confirm(api, &secret(&c), &confirming(&wrong, "compta@acme.fr")).await;
    let item = r.expect_invalid_at(json!(["body", "customer_tax_id"]));
    assert_eq!(item["msg"], "Invalid tax ID.", "{}", r.body);
    let still = client_get(api, &secret(&c)).await;
    still.expect(200);
    assert_eq!(still.body["status"], "open", "{}", still.body);
    // The same number in a client update is refused the same way.
    let r = api.patch(&client_path(&secret(&c)), None, &wrong).await;
    let item = r.expect_invalid_at(json!(["body", "customer_tax_id"]));
    assert_eq!(item["msg"], "Invalid tax ID.", "{}", r.body);

    let o = bought(api, &c, &french_business(), "compta@acme.fr").await;
    assert_eq!(o["tax_amount"], 0, "{o}");
    assert_eq!(o["total_amount"], 1200, "{o}");
    assert_eq!(o["net_amount"], 1200, "{o}");
    assert_eq!(o["billing_name"], "Acme SAS", "{o}");
    assert_eq!(o["customer_tax_id"], FR_BUSINESS, "{o}");
    assert_eq!(o["billing_address"]["country"], "FR", "{o}");
    assert_eq!(o["billing_address"]["city"], "Paris", "{o}");
    assert_eq!(
        o["tax_breakdown"][0]["taxability_reason"], "reverse_charge",
        "{o}"
    );
    assert_eq!(o["tax_breakdown"][0]["country"], "FR", "{o}");
}

#[actix_web::test]
async fn an_exclusive_seller_adds_the_vat_and_a_seller_without_settings_adds_nothing() {
    let app = spawn_app().await;
    let api = Api::of(&app);

    // (e) Exclusive: 19 % on top of 1200.
    let (_, price) = shop(api, "tax-exclusive", true, "exclusive").await;
    let (c, q) = quoted(api, &price, &consumer("DE")).await;
    assert_eq!(amounts(&q), ("exclusive".into(), 1200, 228, 1428), "{q}");
    assert_breakdown(&q, "DE", 19.0, "standard_rated", 1200, 228);
    let o = bought(api, &c, &consumer("DE"), "hans@example.de").await;
    assert_eq!(
        order_amounts(&o),
        (1200, 1200, 228, 1428, "exclusive".into()),
        "{o}"
    );
    assert_breakdown(&o, "DE", 19.0, "standard_rated", 1200, 228);

    // (f) No tax settings: as before, whoever buys.
    let (none, plain) = shop(api, "tax-none", false, "location").await;
    let org = app
        .get(&format!("/v1/organizations/{none}"), Some(&app.token))
        .await;
    org.expect(200);
    assert_eq!(org.body["tax"]["country"], Value::Null, "{}", org.body);
    for country in ["DE", "FR", "US"] {
        let (c, q) = quoted(api, &plain, &consumer(country)).await;
        assert_eq!(q["tax_amount"], 0, "{q}");
        assert_eq!(q["net_amount"], 1200, "{q}");
        assert_eq!(q["total_amount"], 1200, "{q}");
        assert_eq!(q["tax_breakdown"], json!([]), "{q}");
        assert_eq!(q["tax_behavior"], "exclusive", "{q}");
        let o = bought(
            api,
            &c,
            &consumer(country),
            &format!("{country}@example.com"),
        )
        .await;
        assert_eq!(
            order_amounts(&o),
            (1200, 1200, 0, 1200, "exclusive".into()),
            "{o}"
        );
        assert_eq!(o["tax_breakdown"], json!([]), "{o}");
    }
}

/// What the processor charged: the PaymentIntent's amount at localstripe is the checkout's
/// `total_amount`, tax included (inclusive) or added (exclusive).
#[actix_web::test]
async fn the_processor_charges_the_total_with_its_tax() {
    let shop_ = spawn_shop(false).await;
    let api = shop_.api();
    let (_, inclusive) = shop(api, "tax-stripe-in", true, "location").await;
    let (_, exclusive) = shop(api, "tax-stripe-ex", true, "exclusive").await;
    for (price, total, tax) in [(&inclusive, 1200, 192), (&exclusive, 1428, 228)] {
        let (c, q) = quoted(api, price, &consumer("DE")).await;
        assert_eq!(
            (q["total_amount"].as_i64(), q["tax_amount"].as_i64()),
            (Some(total), Some(tax)),
            "{q}"
        );
        let pm = shop_.ls.card(CARD_OK).await;
        let mut body = paying("hans@example.de", &pm);
        body["customer_billing_address"] = json!({"country": "DE"});
        let r = confirm(api, &secret(&c), &body).await;
        r.expect(200);
        let pi = shop_.ls.intent(&intent_of(&r.body)).await;
        assert_eq!(pi["amount"], total, "{pi}");
        assert_eq!(pi["currency"], "usd", "{pi}");
        let o = order_of(api, &c).await;
        assert_eq!(o["total_amount"], total, "{o}");
        assert_eq!(o["tax_amount"], tax, "{o}");
    }
}

/// The tax settings are the seller's own: a stranger's token (organizations:write) cannot
/// turn them on (404), the member's read-only token cannot either (403), and an invalid
/// seller number is a 422; the settings stay as they were.
#[actix_web::test]
async fn only_the_seller_with_write_scope_sets_its_tax() {
    let app = spawn_app().await;
    let (user, writer) = app
        .new_user_with_scopes("seller@example.de", &[Scope::OrganizationsWrite])
        .await;
    let org = app.created_org_as(&writer, "Seller", "tax-seller").await;
    let id = id_of(&org);
    let reader = app.issue_token(user, &[Scope::OrganizationsRead]).await;
    let (_, stranger) = app
        .new_user_with_scopes("stranger@example.com", &[Scope::OrganizationsWrite])
        .await;
    let body = json!({"tax": {"country": "DE", "tax_id": SELLER_TAX,
                              "registrations": ["eu_oss"]},
                      "default_tax_behavior": "exclusive"});

    let r = app.patch_org(&id, &stranger, &body).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound", "{}", r.body);
    let r = app.patch_org(&id, &reader, &body).await;
    r.expect(403);
    assert_eq!(r.body["error"], "insufficient_scope", "{}", r.body);
    let mut wrong = body.clone();
    wrong["tax"]["tax_id"] = json!("DE136695977");
    let r = app.patch_org(&id, &writer, &wrong).await;
    let item = r.expect_invalid_at(json!(["body", "tax", "tax_id"]));
    assert_eq!(item["msg"], "Invalid tax ID.", "{}", r.body);

    let r = app.get_org(&id, &reader).await;
    r.expect(200);
    assert_eq!(r.body["tax"]["country"], Value::Null, "{}", r.body);
    assert_eq!(r.body["tax"]["registrations"], json!([]), "{}", r.body);
    assert_eq!(r.body["default_tax_behavior"], "location", "{}", r.body);

    let r = app.patch_org(&id, &writer, &body).await;
    r.expect(200);
    assert_eq!(r.body["tax"]["tax_id"], SELLER_TAX, "{}", r.body);
    assert_eq!(r.body["default_tax_behavior"], "exclusive", "{}", r.body);
}
