//! Issue 51, the catalog side of usage billing (`polar-2026.md` §7.5, brief §1.9): metered
//! prices (`metered_unit`) on products — create, render with their meter, update, the
//! 422s — the `meter_credit` benefit (create, get, list, update, 422s), the references
//! that keep a meter from being archived, a checkout of a metered product asking for a
//! payment method, and polar-sdk 1.0.2 loading both shapes.
//!
//! The tests write their `Meter` records through the store directly (the meters API has
//! its own tests in `meters.rs`), so that each meter's state is exactly what a case needs.

use chrono::Utc;
use serde_json::{json, Value};
use tollgate::domain::ids::{MeterId, OrganizationId};
use tollgate::domain::meter::{Aggregation, Conjunction, Filter, Meter, MeterUnit};
use tollgate_storage::{Batch, Expect};
use uuid::Uuid;

use crate::checkouts::{buyer, client_get, confirm, Api, CHECKOUTS};
use crate::helpers::{spawn_app, TestApp};

const PRODUCTS: &str = "/v1/products/";
const BENEFITS: &str = "/v1/benefits/";

async fn org(app: &TestApp, slug: &str) -> String {
    let r = app.create_org(slug, slug).await;
    r.expect(201);
    r.id()
}

/// A meter of `org`, written through the store (the meters API is not served yet).
async fn meter(app: &TestApp, org: &str, name: &str) -> Meter {
    let m = Meter {
        id: MeterId::new(),
        organization_id: OrganizationId(Uuid::parse_str(org).unwrap()),
        name: name.into(),
        unit: MeterUnit::Scalar,
        custom_label: None,
        custom_multiplier: None,
        filter: Filter {
            conjunction: Conjunction::And,
            clauses: Vec::new(),
        },
        aggregation: Aggregation::Count,
        metadata: Default::default(),
        created_at: Utc::now(),
        modified_at: None,
        archived_at: None,
        aggregating: false,
    };
    save(app, &m, Expect::Absent).await;
    m
}

async fn save(app: &TestApp, m: &Meter, expect: Expect) {
    let mut batch = Batch::new();
    batch.put(m, expect).unwrap();
    app.state.store.commit_durable(&batch).await.unwrap();
}

/// Rewrites a stored meter with `change`.
async fn change_meter(app: &TestApp, m: &Meter, change: impl FnOnce(&mut Meter)) -> Meter {
    let stored = app
        .state
        .store
        .get::<Meter>(&m.id.key())
        .await
        .unwrap()
        .unwrap();
    let mut next = stored.value.clone();
    change(&mut next);
    save(app, &next, Expect::Rev(stored.rev)).await;
    next
}

fn metered(meter: &Meter, unit_amount: Value) -> Value {
    json!({"amount_type": "metered_unit", "meter_id": meter.id.0, "unit_amount": unit_amount,
           "cap_amount": 10000})
}

async fn create_product(
    app: &TestApp,
    org: &str,
    interval: Option<&str>,
    prices: Value,
) -> crate::helpers::Reply {
    let mut body = json!({"name": "API plan", "organization_id": org, "prices": prices});
    if let Some(i) = interval {
        body["recurring_interval"] = json!(i);
    }
    app.post_json(PRODUCTS, Some(&app.token), &body).await
}

#[actix_web::test]
async fn metered_prices_are_created_rendered_with_their_meter_and_updated() {
    let app = spawn_app().await;
    let org = org(&app, "metered-create").await;
    let calls = meter(&app, &org, "API calls").await;
    let tokens = meter(&app, &org, "Tokens").await;
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([{"amount_type": "fixed", "price_amount": 1000}, metered(&calls, json!("0.5"))]),
    )
    .await;
    r.expect(201);
    let product = r.body.clone();
    assert_eq!(product["is_recurring"], true);
    assert_eq!(product["recurring_interval"], "month");
    let prices = product["prices"].as_array().unwrap();
    assert_eq!(prices.len(), 2);
    let p = &prices[1];
    for key in [
        "id",
        "created_at",
        "modified_at",
        "source",
        "amount_type",
        "price_currency",
        "tax_behavior",
        "is_archived",
        "product_id",
        "cap_amount",
        "meter_id",
        "meter",
        "unit_amount",
    ] {
        assert!(p.get(key).is_some(), "{key} missing: {p}");
    }
    assert_eq!(p["amount_type"], "metered_unit");
    assert_eq!(p["unit_amount"], "0.5", "a JSON string");
    assert_eq!(p["cap_amount"], 10000);
    assert_eq!(p["price_currency"], "usd");
    assert_eq!(p["meter_id"], calls.id.0.to_string());
    assert_eq!(
        p["meter"],
        json!({"id": calls.id.0, "name": "API calls", "unit": "scalar",
               "custom_label": null, "custom_multiplier": null})
    );
    let id = product["id"].as_str().unwrap().to_string();
    let path = format!("{PRODUCTS}{id}");

    // A number is read as its decimal; the meter is looked up at each rendering.
    change_meter(&app, &calls, |m| m.name = "Requests".into()).await;
    let got = app.get(&path, Some(&app.token)).await;
    got.expect(200);
    assert_eq!(got.body["prices"][1]["meter"]["name"], "Requests");

    let fixed = prices[0]["id"].clone();
    let kept = prices[1]["id"].clone();
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"prices": [{"id": fixed}, {"id": kept},
                               metered(&tokens, json!(0.000002))]}),
        )
        .await;
    r.expect(200);
    let prices = r.body["prices"].as_array().unwrap().clone();
    assert_eq!(prices.len(), 3);
    assert_eq!(prices[2]["unit_amount"], "0.000002");
    assert_eq!(prices[2]["meter"]["name"], "Tokens");
    // Dropping the metered prices archives them; the product keeps its fixed price.
    let r = app
        .patch_json(&path, Some(&app.token), &json!({"prices": [{"id": fixed}]}))
        .await;
    r.expect(200);
    assert_eq!(r.body["prices"].as_array().unwrap().len(), 1);

    // A product of metered prices only (Polar's usage-only products) and the list.
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([metered(&tokens, json!("12"))]),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["prices"][0]["unit_amount"], "12");
    let list = app
        .get(
            &format!("{PRODUCTS}?organization_id={org}"),
            Some(&app.token),
        )
        .await;
    list.expect(200);
    assert_eq!(list.total_count(), 2);
}

#[actix_web::test]
async fn metered_prices_are_refused_with_polars_422s() {
    let app = spawn_app().await;
    let org = org(&app, "metered-refusals").await;
    let other = org_other(&app).await;
    let calls = meter(&app, &org, "API calls").await;
    let foreign = meter(&app, &other, "Elsewhere").await;
    let archived = meter(&app, &org, "Old").await;
    change_meter(&app, &archived, |m| m.archived_at = Some(Utc::now())).await;
    let fixed = json!({"amount_type": "fixed", "price_amount": 1000});

    // One-time product.
    let r = create_product(
        &app,
        &org,
        None,
        json!([
        {"amount_type": "fixed", "price_amount": 1000}, metered(&calls, json!("1"))]),
    )
    .await;
    let item = r.expect_invalid_at(json!(["body", "prices", 1]));
    assert_eq!(
        item["msg"],
        "Metered pricing is not supported on one-time products."
    );
    assert_eq!(item["type"], "value_error");

    // Unknown, another organization's, archived meter.
    for m in [
        json!(Uuid::new_v4()),
        json!(foreign.id.0),
        json!(archived.id.0),
    ] {
        let mut price = metered(&calls, json!("1"));
        price["meter_id"] = m.clone();
        let r = create_product(&app, &org, Some("month"), json!([fixed, price])).await;
        let item = r.expect_invalid_at(json!(["body", "prices", 1, "meter_id"]));
        assert_eq!(item["msg"], "Meter does not exist.", "{m}");
    }
    // The same meter twice in one currency.
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([
            fixed,
            metered(&calls, json!("1")),
            metered(&calls, json!("2"))
        ]),
    )
    .await;
    let item = r.expect_invalid_at(json!(["body", "prices", 2, "meter_id"]));
    assert_eq!(item["msg"], "Meter is already used for another price.");
    // Field rules: the amount.
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([fixed, metered(&calls, json!("0"))]),
    )
    .await;
    let item = r.expect_invalid_at(json!(["body", "prices", 1, "unit_amount"]));
    assert_eq!(item["type"], "greater_than");
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([fixed, metered(&calls, json!("0.0000000000001"))]),
    )
    .await;
    let item = r.expect_invalid_at(json!(["body", "prices", 1, "unit_amount"]));
    assert_eq!(item["type"], "decimal_max_places");
    // Two prices billed up front beside a metered one.
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([
        fixed, {"amount_type": "fixed", "price_amount": 2000}, metered(&calls, json!("1"))]),
    )
    .await;
    r.expect_invalid_at(json!(["body", "prices"]));
    // `metered_tiers` stays refused.
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([fixed,
        {"amount_type": "metered_tiers", "meter_id": calls.id.0}]),
    )
    .await;
    r.expect_invalid_at(json!(["body", "prices", 1, "amount_type"]));
    // An update keeping a metered price and adding another on its meter.
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([fixed, metered(&calls, json!("1"))]),
    )
    .await;
    r.expect(201);
    let path = format!("{PRODUCTS}{}", r.id());
    let kept = r.body["prices"][1]["id"].clone();
    let first = r.body["prices"][0]["id"].clone();
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"prices": [{"id": first}, {"id": kept}, metered(&calls, json!("3"))]}),
        )
        .await;
    let item = r.expect_invalid_at(json!(["body", "prices", 2, "meter_id"]));
    assert_eq!(item["msg"], "Meter is already used for another price.");
}

async fn org_other(app: &TestApp) -> String {
    org(app, "metered-other").await
}

#[actix_web::test]
async fn a_meter_credit_benefit_is_created_read_listed_and_updated() {
    let app = spawn_app().await;
    let org = org(&app, "meter-credit").await;
    let calls = meter(&app, &org, "API calls").await;
    let other = meter(&app, &org_other(&app).await, "Elsewhere").await;
    let body = json!({"type": "meter_credit", "description": "100 API calls / month",
        "organization_id": org,
        "properties": {"meter_id": calls.id.0, "units": 100, "rollover": false}});
    let r = app.post_json(BENEFITS, Some(&app.token), &body).await;
    r.expect(201);
    let b = r.body.clone();
    assert_eq!(b["type"], "meter_credit");
    assert_eq!(
        b["properties"],
        json!({"units": 100, "rollover": false, "meter_id": calls.id.0})
    );
    for key in [
        "id",
        "created_at",
        "modified_at",
        "description",
        "selectable",
        "deletable",
        "is_deleted",
        "organization_id",
        "metadata",
        "visibility",
        "visibility_configurable",
    ] {
        assert!(b.get(key).is_some(), "{key} missing: {b}");
    }
    let path = format!("{BENEFITS}{}", r.id());
    let got = app.get(&path, Some(&app.token)).await;
    got.expect(200);
    assert_eq!(got.body["properties"]["units"], 100);
    let list = app
        .get(
            &format!("{BENEFITS}?organization_id={org}&type=meter_credit"),
            Some(&app.token),
        )
        .await;
    list.expect(200);
    assert_eq!(list.total_count(), 1);
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"type": "meter_credit",
            "properties": {"meter_id": calls.id.0, "units": 250, "rollover": true}}),
        )
        .await;
    r.expect(200);
    assert_eq!(
        r.body["properties"],
        json!({"units": 250, "rollover": true, "meter_id": calls.id.0})
    );

    // Unknown meter, another organization's, zero units.
    for m in [json!(Uuid::new_v4()), json!(other.id.0)] {
        let mut bad = body.clone();
        bad["properties"]["meter_id"] = m;
        let r = app.post_json(BENEFITS, Some(&app.token), &bad).await;
        let item = r.expect_invalid_at(json!(["body", "properties", "meter_id"]));
        assert_eq!(item["msg"], "This meter does not exist.");
    }
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"type": "meter_credit",
            "properties": {"meter_id": Uuid::new_v4(), "units": 1, "rollover": true}}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "properties", "meter_id"]));
    let mut bad = body.clone();
    bad["properties"]["units"] = json!(0);
    let r = app.post_json(BENEFITS, Some(&app.token), &bad).await;
    let item = r.expect_invalid_at(json!(["body", "properties", "units"]));
    assert_eq!(item["type"], "greater_than");
}

#[actix_web::test]
async fn a_meter_in_use_can_not_be_archived() {
    use tollgate::app::catalog::meter_references::meter_references;
    let app = spawn_app().await;
    let org = org(&app, "meter-refs").await;
    let calls = meter(&app, &org, "API calls").await;
    assert_eq!(meter_references(&app.state, &calls).await.unwrap(), None);
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([metered(&calls, json!("1"))]),
    )
    .await;
    r.expect(201);
    let product = format!("{PRODUCTS}{}", r.id());
    assert_eq!(
        meter_references(&app.state, &calls).await.unwrap(),
        Some("Cannot archive meter that is still attached to active products")
    );
    // An archived product no longer holds it; a meter credit does.
    app.patch_json(&product, Some(&app.token), &json!({"is_archived": true}))
        .await
        .expect(200);
    assert_eq!(meter_references(&app.state, &calls).await.unwrap(), None);
    let r = app
        .post_json(
            BENEFITS,
            Some(&app.token),
            &json!({"type": "meter_credit",
            "description": "Credits", "organization_id": org,
            "properties": {"meter_id": calls.id.0, "units": 5, "rollover": false}}),
        )
        .await;
    r.expect(201);
    assert_eq!(
        meter_references(&app.state, &calls).await.unwrap(),
        Some("Cannot archive meter that is still referenced by active benefits")
    );
    app.request(
        reqwest::Method::DELETE,
        &format!("{BENEFITS}{}", r.id()),
        Some(&app.token),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(meter_references(&app.state, &calls).await.unwrap(), None);
}

#[actix_web::test]
async fn a_checkout_of_a_metered_product_asks_for_a_payment_method() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = org(&app, "metered-checkout").await;
    let calls = meter(&app, &org, "API calls").await;
    // Fixed + metered: the fixed price is sold, the metered one adds nothing up front.
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([metered(&calls, json!("0.5")), {"amount_type": "fixed", "price_amount": 1000}]),
    )
    .await;
    r.expect(201);
    let fixed_id = r.body["prices"][1]["id"].clone();
    let c = app
        .post_json(CHECKOUTS, Some(&app.token), &json!({"products": [r.id()]}))
        .await;
    c.expect(201);
    assert_eq!(c.body["product_price_id"], fixed_id);
    assert_eq!(c.body["amount"], 1000);
    assert_eq!(c.body["total_amount"], 1000);
    assert_eq!(c.body["is_payment_form_required"], true);
    assert_eq!(c.body["product"]["prices"][0]["meter"]["name"], "API calls");
    // The hosted page lists the metered price.
    let secret = c.body["client_secret"].as_str().unwrap().to_string();
    let page = app
        .client
        .get(app.url(&format!("/checkout/{secret}")))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("$0.005 per unit · API calls"), "{page}");
    // Drawn at a phone's and a desktop's width, to be looked at.
    crate::tools::render_page("metered-prices", "checkout-metered", &page);

    // Metered only: nothing to pay now, but the card is saved for the usage.
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([metered(&calls, json!("0.5"))]),
    )
    .await;
    r.expect(201);
    let c = app
        .post_json(CHECKOUTS, Some(&app.token), &json!({"products": [r.id()]}))
        .await;
    c.expect(201);
    assert_eq!(c.body["amount"], 0);
    assert_eq!(c.body["is_free_product_price"], false);
    assert_eq!(c.body["is_payment_required"], false);
    assert_eq!(c.body["is_payment_setup_required"], true);
    assert_eq!(c.body["is_payment_form_required"], true);
    let secret = c.body["client_secret"].as_str().unwrap().to_string();
    let mut without = buyer("ada@example.com");
    without
        .as_object_mut()
        .unwrap()
        .remove("confirmation_token_id");
    let r = confirm(api, &secret, &without).await;
    let item = r.expect_invalid_at(json!(["body", "confirmation_token_id"]));
    assert_eq!(item["msg"], "Confirmation token is required.");
    let r = confirm(api, &secret, &buyer("ada@example.com")).await;
    r.expect(200);
    let got = client_get(api, &secret).await;
    got.expect(200);

    // Free + metered: the metered price is sold, so the card is asked for too.
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([{"amount_type": "free"}, metered(&calls, json!("1"))]),
    )
    .await;
    r.expect(201);
    let metered_id = r.body["prices"][1]["id"].clone();
    let c = app
        .post_json(CHECKOUTS, Some(&app.token), &json!({"products": [r.id()]}))
        .await;
    c.expect(201);
    assert_eq!(c.body["product_price_id"], metered_id);
    assert_eq!(c.body["is_free_product_price"], false);
    assert_eq!(c.body["is_payment_setup_required"], true);
    let secret = c.body["client_secret"].as_str().unwrap().to_string();
    let r = confirm(api, &secret, &without).await;
    r.expect_invalid_at(json!(["body", "confirmation_token_id"]));

    // A fixed price discounted to 0 beside a metered one: nothing to pay now, but the
    // usage is charged off-session later, so the card is asked for and saved.
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([{"amount_type": "fixed", "price_amount": 1000}, metered(&calls, json!("1"))]),
    )
    .await;
    r.expect(201);
    let product = r.id();
    let d = app
        .post_json(
            "/v1/discounts/",
            Some(&app.token),
            &json!({"type": "percentage", "basis_points": 10000, "duration": "forever",
                    "name": "On the house", "organization_id": org}),
        )
        .await;
    d.expect(201);
    let c = app
        .post_json(
            CHECKOUTS,
            Some(&app.token),
            &json!({"products": [product], "discount_id": d.body["id"]}),
        )
        .await;
    c.expect(201);
    assert_eq!(c.body["amount"], 1000);
    assert_eq!(c.body["total_amount"], 0);
    assert_eq!(c.body["is_payment_required"], false);
    assert_eq!(c.body["is_payment_setup_required"], true);
    assert_eq!(c.body["is_payment_form_required"], true);
    let secret = c.body["client_secret"].as_str().unwrap().to_string();
    let r = confirm(api, &secret, &without).await;
    let item = r.expect_invalid_at(json!(["body", "confirmation_token_id"]));
    assert_eq!(item["msg"], "Confirmation token is required.");
    let r = confirm(api, &secret, &buyer("grace@example.com")).await;
    r.expect(200);
    let got = client_get(api, &secret).await;
    got.expect(200);
    assert_eq!(got.body["status"], "succeeded", "{}", got.body);
    // The subscription keeps the saved card for the usage.
    let subs = app
        .get(
            &format!("/v1/subscriptions/?product_id={product}"),
            Some(&app.token),
        )
        .await;
    subs.expect(200);
    assert_eq!(subs.body["items"].as_array().unwrap().len(), 1);
    let id = uuid::Uuid::parse_str(subs.body["items"][0]["id"].as_str().unwrap()).unwrap();
    let s = app
        .state
        .store
        .get::<tollgate_actors::subscription::Subscription>(
            &tollgate::domain::ids::SubscriptionId(id).key(),
        )
        .await
        .unwrap()
        .unwrap()
        .value;
    assert!(s.payment_token.is_some(), "{s:?}");
}

/// The API document describes the new shapes.
#[actix_web::test]
async fn the_document_describes_metered_prices_and_meter_credits() {
    let app = spawn_app().await;
    let doc = app.get("/openapi.json", None).await;
    doc.expect(200);
    let schemas = &doc.body["components"]["schemas"];
    for name in [
        "ProductPriceMeteredUnit",
        "ProductPriceMeter",
        "BenefitMeterCredit",
        "BenefitMeterCreditProperties",
        "BenefitMeterCreditCreate",
        "BenefitMeterCreditUpdate",
    ] {
        assert!(schemas.get(name).is_some(), "{name} missing");
    }
    let metered = &schemas["ProductPriceMeteredUnit"]["properties"];
    assert_eq!(metered["unit_amount"]["type"], "string");
}

/// polar-sdk 1.0.2 loads a product with a metered price (`ProductPriceMeteredUnit`, the
/// amount a string) and a `meter_credit` benefit (`BenefitMeterCredit`) into its models.
#[actix_web::test]
async fn polar_sdk_1_0_loads_metered_prices_and_meter_credits() {
    use std::process::Command;
    let python = crate::tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let app = spawn_app().await;
    let org = org(&app, "metered-sdk").await;
    let calls = meter(&app, &org, "API calls").await;
    let r = create_product(
        &app,
        &org,
        Some("month"),
        json!([{"amount_type": "fixed", "price_amount": 1000}, metered(&calls, json!("0.5"))]),
    )
    .await;
    r.expect(201);
    let product = r.id();
    let r = app
        .post_json(
            BENEFITS,
            Some(&app.token),
            &json!({"type": "meter_credit",
            "description": "100 API calls", "organization_id": org,
            "properties": {"meter_id": calls.id.0, "units": 100, "rollover": true}}),
        )
        .await;
    r.expect(201);
    let benefit = r.id();
    for version in ["v2026_04", "v2026_10", "v2027_01"] {
        let mut cmd = Command::new(&python);
        cmd.arg(crate::tools::repo_root().join("tests/clients/python-1.0/metered.py"))
            .env("TOLLGATE_URL", &app.address)
            .env("TOLLGATE_TOKEN", &app.token)
            .env("TOLLGATE_API_VERSION", version)
            .env("PRODUCT_ID", &product)
            .env("BENEFIT_ID", &benefit)
            .env("METER_ID", calls.id.0.to_string())
            .env("PYTHONUNBUFFERED", "1");
        let out = crate::tools::run_async(cmd, std::time::Duration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            crate::tools::tally(&stdout),
            Some((3, 0)),
            "{version}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
