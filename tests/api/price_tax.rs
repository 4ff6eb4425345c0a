//! Issue 48 over HTTP: a price chooses its own tax behaviour (Polar's price
//! `tax_behavior`). A German seller (registered for the EU One-Stop-Shop) whose default is
//! `exclusive` sells one-time prices of 1200: an `inclusive` price sold to a German
//! consumer holds its 19 % (1008 + 192), an `exclusive` one adds it (1200 + 228), a
//! `location` price follows the buyer's country (inclusive in Germany, exclusive in the
//! US) and a price without one follows the organization's default. Products and checkouts
//! answer each price's option (`null`: the default); a wrong value is a 422 at the price's
//! key; a price kept by id in an update keeps its option. Only the seller's products:write
//! token changes its products (a stranger: 404, a read-only token: 403).

use serde_json::{json, Value};

use crate::checkouts::{by_price, create_org, created, id_of, product, Api};
use crate::helpers::spawn_app;
use crate::tax_checkout::{bought, consumer, quoted, SELLER_TAX};
use tollgate::auth::Scope;

/// A price of 1200 USD with `tax_behavior` (`Value::Null`: the key is sent as null).
fn priced(tax_behavior: Value) -> Value {
    json!([{"amount_type": "fixed", "price_amount": 1200, "price_currency": "usd",
            "tax_behavior": tax_behavior}])
}

/// The German seller (EU OSS) with `default_tax_behavior` `default`.
async fn seller(api: Api<'_>, slug: &str, default: &str) -> String {
    let org = create_org(api, slug).await;
    let r = api
        .patch(
            &format!("/v1/organizations/{org}"),
            Some(api.token),
            &json!({"tax": {"country": "DE", "tax_id": SELLER_TAX, "registrations": ["eu_oss"]},
                    "default_tax_behavior": default}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["default_tax_behavior"], default, "{}", r.body);
    org
}

/// A product selling one price of `tax_behavior`; (product, price id).
async fn sold_at(api: Api<'_>, org: &str, tax_behavior: Value) -> (Value, String) {
    let p = product(api, org, "Lifetime", priced(tax_behavior.clone())).await;
    assert_eq!(p["prices"][0]["tax_behavior"], tax_behavior, "{p}");
    let price = id_of(&p["prices"][0]);
    (p, price)
}

/// (tax_behavior, net, tax, total) of a checkout or an order.
fn amounts(v: &Value) -> (String, i64, i64, i64) {
    (
        v["tax_behavior"].as_str().unwrap_or("null").to_string(),
        v["net_amount"].as_i64().unwrap_or(-1),
        v["tax_amount"].as_i64().unwrap_or(-1),
        v["total_amount"].as_i64().unwrap_or(-1),
    )
}

fn us_buyer() -> Value {
    json!({"customer_billing_address": {"country": "US", "state": "US-NY", "postal_code": "10001"}})
}

#[actix_web::test]
async fn each_price_is_taxed_as_it_chose_else_as_the_organization() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = seller(api, "price-tax", "exclusive").await;

    // Inclusive: 19 % inside 1200, on the checkout and on the order.
    let (_, inclusive) = sold_at(api, &org, json!("inclusive")).await;
    let (c, q) = quoted(api, &inclusive, &consumer("DE")).await;
    assert_eq!(amounts(&q), ("inclusive".into(), 1008, 192, 1200), "{q}");
    assert_eq!(q["product_price"]["tax_behavior"], "inclusive", "{q}");
    assert_eq!(c["product_price"]["tax_behavior"], "inclusive", "{c}");
    let o = bought(api, &c, &consumer("DE"), "hans@example.de").await;
    assert_eq!(amounts(&o), ("inclusive".into(), 1008, 192, 1200), "{o}");
    assert_eq!(o["product_price"]["tax_behavior"], "inclusive", "{o}");

    // Exclusive: 19 % on top.
    let (_, exclusive) = sold_at(api, &org, json!("exclusive")).await;
    let (c, q) = quoted(api, &exclusive, &consumer("DE")).await;
    assert_eq!(amounts(&q), ("exclusive".into(), 1200, 228, 1428), "{q}");
    let o = bought(api, &c, &consumer("DE"), "greta@example.de").await;
    assert_eq!(amounts(&o), ("exclusive".into(), 1200, 228, 1428), "{o}");

    // Location: inclusive for a German buyer, exclusive for a US one (nothing collected),
    // although the organization's default is exclusive.
    let (_, location) = sold_at(api, &org, json!("location")).await;
    let (_, q) = quoted(api, &location, &consumer("DE")).await;
    assert_eq!(amounts(&q), ("inclusive".into(), 1008, 192, 1200), "{q}");
    let (_, q) = quoted(api, &location, &us_buyer()).await;
    assert_eq!(amounts(&q), ("exclusive".into(), 1200, 0, 1200), "{q}");

    // None chosen (null or absent): the organization's default, exclusive.
    let (_, default) = sold_at(api, &org, Value::Null).await;
    let (_, q) = quoted(api, &default, &consumer("DE")).await;
    assert_eq!(amounts(&q), ("exclusive".into(), 1200, 228, 1428), "{q}");
    assert_eq!(q["product_price"]["tax_behavior"], Value::Null, "{q}");
    let p = product(
        api,
        &org,
        "Absent",
        json!([{"amount_type": "fixed", "price_amount": 1200, "price_currency": "usd"}]),
    )
    .await;
    assert_eq!(p["prices"][0]["tax_behavior"], Value::Null, "{p}");
    let (_, q) = quoted(api, &id_of(&p["prices"][0]), &consumer("DE")).await;
    assert_eq!(amounts(&q), ("exclusive".into(), 1200, 228, 1428), "{q}");

    // The organization's default changes: the inclusive price stays inclusive, the one
    // without a choice follows.
    let r = api
        .patch(
            &format!("/v1/organizations/{org}"),
            Some(api.token),
            &json!({"default_tax_behavior": "inclusive"}),
        )
        .await;
    r.expect(200);
    let (_, q) = quoted(api, &default, &consumer("DE")).await;
    assert_eq!(amounts(&q), ("inclusive".into(), 1008, 192, 1200), "{q}");
    let (_, q) = quoted(api, &exclusive, &consumer("DE")).await;
    assert_eq!(amounts(&q), ("exclusive".into(), 1200, 228, 1428), "{q}");
    let c = created(api, &by_price(&inclusive)).await;
    assert_eq!(c["product_price"]["tax_behavior"], "inclusive", "{c}");
}

#[actix_web::test]
async fn products_answer_and_keep_each_prices_tax_behaviour() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = seller(api, "price-tax-products", "location").await;

    // Wrong values and types: Polar's enum error at the price's key; nothing is created.
    for bad in [
        json!("gross"),
        json!("INCLUSIVE"),
        json!(19),
        json!(["inclusive"]),
    ] {
        let r = api
            .post(
                "/v1/products/",
                Some(api.token),
                &json!({"name": "Nope", "organization_id": org, "prices": priced(bad.clone())}),
            )
            .await;
        let item = r.expect_invalid_at(json!(["body", "prices", 0, "tax_behavior"]));
        assert_eq!(item["type"], "enum", "{}", r.body);
        assert_eq!(
            item["msg"], "Input should be 'location', 'inclusive' or 'exclusive'",
            "{}",
            r.body
        );
        assert_eq!(item["input"], bad, "{}", r.body);
    }
    let list = api
        .read(&format!("/v1/products/?organization_id={org}"))
        .await;
    list.expect(200);
    assert_eq!(list.items().len(), 0, "{}", list.body);

    // The answer, a read and the list echo the option.
    let (p, first) = sold_at(api, &org, json!("inclusive")).await;
    let id = id_of(&p);
    let path = format!("/v1/products/{id}");
    let r = api.read(&path).await;
    r.expect(200);
    assert_eq!(
        r.body["prices"][0]["tax_behavior"], "inclusive",
        "{}",
        r.body
    );
    let list = api
        .read(&format!("/v1/products/?organization_id={org}"))
        .await;
    assert_eq!(list.items()[0]["prices"][0]["tax_behavior"], "inclusive");

    // Kept by id (whatever else the item says): the same price, the same option.
    let r = api
        .patch(
            &path,
            Some(api.token),
            &json!({"prices": [{"id": first, "tax_behavior": "exclusive"}]}),
        )
        .await;
    r.expect(200);
    assert_eq!(id_of(&r.body["prices"][0]), first, "{}", r.body);
    assert_eq!(
        r.body["prices"][0]["tax_behavior"], "inclusive",
        "{}",
        r.body
    );

    // A new price in an update: its own option, checked as on create.
    let r = api
        .patch(
            &path,
            Some(api.token),
            &json!({"prices": priced(json!("net"))}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "prices", 0, "tax_behavior"]));
    let r = api
        .patch(
            &path,
            Some(api.token),
            &json!({"prices": priced(json!("exclusive"))}),
        )
        .await;
    r.expect(200);
    assert_eq!(
        r.body["prices"].as_array().map(Vec::len),
        Some(1),
        "{}",
        r.body
    );
    let second = id_of(&r.body["prices"][0]);
    assert_ne!(second, first);
    assert_eq!(
        r.body["prices"][0]["tax_behavior"], "exclusive",
        "{}",
        r.body
    );
    let r = api
        .patch(
            &path,
            Some(api.token),
            &json!({"prices": priced(Value::Null)}),
        )
        .await;
    r.expect(200);
    assert_eq!(
        r.body["prices"][0]["tax_behavior"],
        Value::Null,
        "{}",
        r.body
    );

    // Only the seller's products:write token changes its prices (the body names the
    // price's type: nothing tells a stranger the product's cadence).
    let change = json!({"prices": [{"type": "one_time", "amount_type": "fixed",
        "price_amount": 1200, "price_currency": "usd", "tax_behavior": "inclusive"}]});
    let (_, stranger) = app
        .new_user_with_scopes("stranger@example.com", &[Scope::ProductsWrite])
        .await;
    let r = api.patch(&path, Some(&stranger), &change).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound", "{}", r.body);
    let (_, reader) = app
        .new_user_with_scopes("reader@example.com", &[Scope::ProductsRead])
        .await;
    let r = api.patch(&path, Some(&reader), &change).await;
    r.expect(403);
    let r = api.read(&path).await;
    assert_eq!(
        r.body["prices"][0]["tax_behavior"],
        Value::Null,
        "{}",
        r.body
    );
}

/// The document shows a price's `tax_behavior` with its three values, on the price create
/// body and on every rendered price (nullable there).
#[actix_web::test]
async fn the_document_shows_the_price_tax_behaviour() {
    let app = spawn_app().await;
    let r = app.get("/openapi.json", None).await;
    r.expect(200);
    let schemas = &r.body["components"]["schemas"];
    assert_eq!(
        schemas["TaxBehaviorOption"]["enum"],
        json!(["location", "inclusive", "exclusive"]),
        "{}",
        schemas["TaxBehaviorOption"]
    );
    let reference = json!("#/components/schemas/TaxBehaviorOption");
    for schema in [
        "ProductPriceCreate",
        "ProductPriceOneTimeFixed",
        "ProductPriceOneTimeCustom",
        "ProductPriceOneTimeFree",
        "ProductPriceOneTimeSeatBased",
        "ProductPriceRecurringFixed",
        "ProductPriceRecurringFree",
        "ProductPriceRecurringSeatBased",
    ] {
        let field = &schemas[schema]["properties"]["tax_behavior"];
        let variants = field["oneOf"]
            .as_array()
            .unwrap_or_else(|| panic!("{schema}: {field}"));
        assert!(
            variants.iter().any(|v| v["type"] == "null"),
            "{schema}: {field}"
        );
        assert!(
            variants.iter().any(|v| v["$ref"] == reference),
            "{schema}: {field}"
        );
    }
}

/// The product as stored (the dashboard seller's products are not the admin's to read).
async fn stored(app: &crate::helpers::TestApp, id: &str) -> tollgate::domain::product::Product {
    let id = tollgate::domain::ids::ProductId(id.parse().unwrap());
    app.state
        .store
        .get::<tollgate::domain::product::Product>(&id.key())
        .await
        .unwrap()
        .expect("the product")
        .value
}

/// The dashboard's product form sets its prices' tax behaviour, shows it again on the
/// product's page, and refuses a value that is not one (as the API words it).
#[actix_web::test]
async fn the_product_form_sets_the_prices_tax_behaviour() {
    use crate::dashboard::{assert_invalid, form_post, redirected, seller};
    use tollgate::domain::tax_settings::TaxBehaviorOption;

    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "prices@example.de", "Price Shop").await;
    let new = format!("/dashboard/{org}/products/new");
    let page = b.get(&new).await;
    assert!(
        page.body
            .contains(r#"<option value="" selected>Organization default</option>"#),
        "{}",
        page.body
    );
    let form = |behaviour: &'static str| {
        vec![
            ("name", "Guide"),
            ("billing", "month_year"),
            ("amount_type", "fixed"),
            ("amount", "12"),
            ("yearly_amount", "120"),
            ("tax_behavior", behaviour),
        ]
    };
    let page = form_post(&mut b, &new, &form("inclusive")).await;
    let to = redirected(&page);
    let id = to
        .strip_prefix(&format!("/dashboard/{org}/products/"))
        .and_then(|rest| rest.split('?').next())
        .unwrap_or_else(|| panic!("created at {to}"))
        .to_string();
    let p = stored(&app, &id).await;
    assert_eq!(p.prices.len(), 2);
    for price in &p.prices {
        assert_eq!(
            p.price_tax_behavior(price.id),
            Some(TaxBehaviorOption::Inclusive)
        );
    }
    let page = b.get(&format!("/dashboard/{org}/products/{id}")).await;
    assert!(
        page.body.contains(r#"<option value="inclusive" selected>"#),
        "{}",
        page.body
    );

    // The organization's default: no choice stored.
    let page = form_post(&mut b, &new, &form("")).await;
    let to = redirected(&page);
    let id = to
        .strip_prefix(&format!("/dashboard/{org}/products/"))
        .and_then(|rest| rest.split('?').next())
        .unwrap_or_default()
        .to_string();
    let p = stored(&app, &id).await;
    assert!(
        p.price_tax_behavior.is_empty(),
        "{:?}",
        p.price_tax_behavior
    );

    let page = form_post(&mut b, &new, &form("gross")).await;
    assert_invalid(&page, "prices › 0 › tax behavior");
}

/// A German seller (EU OSS, default `exclusive`) on a manual clock; its organization id.
async fn clocked_seller(app: &crate::subscriptions::ClockApp, slug: &str) -> String {
    let org = app.org(&app.token, slug).await.to_string();
    app.patch_json(
        &format!("/v1/organizations/{org}"),
        Some(&app.token),
        &json!({"tax": {"country": "DE", "tax_id": SELLER_TAX, "registrations": ["eu_oss"]},
                "default_tax_behavior": "exclusive"}),
    )
    .await
    .expect(200);
    org
}

/// A monthly product of `org` at `amount` USD with `tax_behavior`; its id.
async fn monthly_at(
    app: &crate::subscriptions::ClockApp,
    org: &str,
    name: &str,
    amount: i64,
    tax_behavior: &str,
) -> String {
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": name, "organization_id": org, "recurring_interval": "month",
                    "prices": [{"amount_type": "fixed", "price_amount": amount,
                                "price_currency": "usd", "tax_behavior": tax_behavior}]}),
        )
        .await;
    r.expect(201);
    id_of(&r.body)
}

/// A German consumer buys `product`; the confirm's answer and the subscription it made.
async fn subscribed(app: &crate::subscriptions::ClockApp, product: &str) -> (Value, Value) {
    let token = app.token.clone();
    let c = app
        .post_json(
            "/v1/checkouts/",
            Some(&token),
            &json!({"products": [product]}),
        )
        .await;
    c.expect(201);
    let secret = c.body["client_secret"].as_str().unwrap_or_default();
    let r = app
        .post_json(
            &format!("/v1/checkouts/client/{secret}/confirm"),
            None,
            &json!({"customer_name": "Hans", "customer_email": "hans@example.de",
                    "customer_billing_address": {"country": "DE"},
                    "confirmation_token_id": "tok_visa"}),
        )
        .await;
    r.expect(200);
    let checkout = id_of(&c.body);
    for _ in 0..100 {
        let subs = app.get("/v1/subscriptions/?limit=10", Some(&token)).await;
        subs.expect(200);
        if let Some(s) = subs
            .items()
            .into_iter()
            .find(|s| s["checkout_id"] == checkout.as_str())
        {
            return (r.body, s);
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the checkout made no subscription");
}

/// A renewal is taxed at its price's behaviour too: a monthly inclusive price of 1200
/// bought by a German consumer from a seller whose default is exclusive renews at
/// 1008 + 192, not 1200 + 228.
#[actix_web::test]
async fn a_renewal_is_taxed_at_its_prices_behaviour() {
    use crate::subscriptions::spawn_app_with_clock;
    use tollgate::domain::ids::SubscriptionId;
    use tollgate_actors::subscription::renewal_order_id;

    let app = spawn_app_with_clock().await;
    let org = clocked_seller(&app, "price-tax-renewals").await;
    let product = monthly_at(&app, &org, "Monthly", 1200, "inclusive").await;
    let (confirmed, s) = subscribed(&app, &product).await;
    assert_eq!(
        amounts(&confirmed),
        ("inclusive".into(), 1008, 192, 1200),
        "{confirmed}"
    );
    let end = s["current_period_end"].as_str().unwrap_or_default();
    let end = chrono::DateTime::parse_from_rfc3339(end)
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(|e| panic!("period end: {e}"));
    app.clock.set(end + chrono::Duration::hours(1));
    let report = app.sweep().await;
    assert_eq!((report.renewed, report.errors), (1, 0), "{report:?}");
    let sid: SubscriptionId = id_of(&s).parse().unwrap_or_else(|e| panic!("{e:?}"));
    let renewal = app
        .get(
            &format!("/v1/orders/{}", renewal_order_id(sid, 1)),
            Some(&app.token),
        )
        .await;
    renewal.expect(200);
    assert_eq!(renewal.body["billing_reason"], "subscription_cycle");
    assert_eq!(
        amounts(&renewal.body),
        ("inclusive".into(), 1008, 192, 1200),
        "{}",
        renewal.body
    );
}

/// A plan change is taxed at the behaviour of the price it moves to: from an exclusive
/// monthly 1200 to an inclusive monthly 2400, invoiced at once at the start of the period,
/// the 1200 due holds its 19 % (1008 + 192) and nothing is added.
#[actix_web::test]
async fn a_plan_change_is_taxed_at_the_new_prices_behaviour() {
    use crate::subscriptions::spawn_app_with_clock;

    let app = spawn_app_with_clock().await;
    let org = clocked_seller(&app, "price-tax-plans").await;
    let basic = monthly_at(&app, &org, "Basic", 1200, "exclusive").await;
    let pro = monthly_at(&app, &org, "Pro", 2400, "inclusive").await;
    let (confirmed, s) = subscribed(&app, &basic).await;
    assert_eq!(
        amounts(&confirmed),
        ("exclusive".into(), 1200, 228, 1428),
        "{confirmed}"
    );
    let sid = id_of(&s);
    let body = json!({"product_id": pro, "proration_behavior": "invoice"});
    let p = app
        .post_json(
            &format!("/v1/subscriptions/{sid}/change-preview"),
            Some(&app.token),
            &body,
        )
        .await;
    p.expect(200);
    assert_eq!(p.body["proration_amount"], 1200, "{}", p.body);
    // Inside the price: nothing added.
    assert_eq!(p.body["tax_amount"], 0, "{}", p.body);
    assert_eq!(p.body["due_amount"], 1200, "{}", p.body);
    let r = app
        .patch_json(&format!("/v1/subscriptions/{sid}"), Some(&app.token), &body)
        .await;
    r.expect(200);
    let customer = s["customer_id"].as_str().unwrap_or_default();
    let orders = app
        .get(
            &format!("/v1/orders/?customer_id={customer}"),
            Some(&app.token),
        )
        .await;
    orders.expect(200);
    let update = orders
        .items()
        .into_iter()
        .find(|o| o["billing_reason"] == "subscription_update")
        .unwrap_or_else(|| panic!("no plan change order in {}", orders.body));
    assert_eq!(
        amounts(&update),
        ("inclusive".into(), 1008, 192, 1200),
        "{update}"
    );
}
