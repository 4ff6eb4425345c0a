//! `/v1/products/`: create with every price shape, validation, list filters, sorting and
//! pagination, update (prices, archiving), benefits, tenancy and scopes (reference 5, 7, 8;
//! clients.md 4).

use std::collections::BTreeSet;

use chrono::Utc;
use serde_json::{json, Value};
use tollgate::app::catalog::products::product_for_price;
use tollgate::auth::Scope;
use tollgate::domain::benefit::Benefit;
use tollgate::domain::custom_field::{
    CustomField, CustomFieldProperties, FormProperties, SelectOption,
};
use tollgate::domain::ids::{CustomFieldId, OrganizationId, PriceId};
use tollgate::domain::metadata::Metadata;
use tollgate_storage::{Batch, Expect};

use crate::helpers::{assert_utc_timestamp, spawn_app, Reply, TestApp};

const PRODUCTS: &str = "/v1/products/";
const UNKNOWN_ID: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";

fn product_path(id: &str) -> String {
    format!("{PRODUCTS}{id}")
}

fn benefits_path(id: &str) -> String {
    format!("{PRODUCTS}{id}/benefits")
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

const PRODUCT_KEYS: &[&str] = &[
    "created_at",
    "modified_at",
    "id",
    "name",
    "description",
    "is_recurring",
    "is_archived",
    "organization_id",
    "metadata",
    "prices",
    "benefits",
    "medias",
    "attached_custom_fields",
    // Polar's 2026 keys.
    "recurring_interval",
    "recurring_interval_count",
    "trial_interval",
    "trial_interval_count",
    "meter_interval",
    "meter_interval_count",
    "visibility",
    "is_deletable",
];

const PRICE_BASE: &[&str] = &[
    "created_at",
    "modified_at",
    "id",
    "amount_type",
    "is_archived",
    "product_id",
    "type",
    "source",
    "tax_behavior",
];

fn price_keys(extra: &[&str]) -> BTreeSet<String> {
    let mut s = set(PRICE_BASE);
    s.extend(extra.iter().map(|e| e.to_string()));
    s
}

fn monthly(amount: i64) -> Value {
    json!({"type": "recurring", "amount_type": "fixed", "price_amount": amount, "price_currency": "usd", "recurring_interval": "month"})
}

fn yearly(amount: i64) -> Value {
    json!({"type": "recurring", "amount_type": "fixed", "price_amount": amount, "recurring_interval": "year"})
}

fn one_time(amount: i64) -> Value {
    json!({"type": "one_time", "amount_type": "fixed", "price_amount": amount})
}

/// The bootstrap admin's organization.
async fn admin_org(app: &TestApp, slug: &str) -> String {
    app.created_org_as(&app.token, "Seller", slug).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn create(app: &TestApp, token: &str, body: &Value) -> Reply {
    app.post_json(PRODUCTS, Some(token), body).await
}

/// Creates a product as the admin, failing unless 201.
async fn created(app: &TestApp, org: &str, name: &str, prices: Value) -> Value {
    let r = create(
        app,
        &app.token,
        &json!({"name": name, "organization_id": org, "prices": prices}),
    )
    .await;
    r.expect(201);
    r.body
}

async fn list(app: &TestApp, token: &str, query: &str) -> Reply {
    app.get(&format!("{PRODUCTS}?{query}"), Some(token)).await
}

fn names(r: &Reply) -> Vec<String> {
    r.items()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect()
}

async fn create_benefit(app: &TestApp, org: &str, description: &str) -> String {
    let r = app
        .post_json(
            "/v1/benefits/",
            Some(&app.token),
            &json!({"type": "custom", "description": description, "organization_id": org, "properties": {"note": null}}),
        )
        .await;
    r.expect(201);
    r.id()
}

/// Rewrites a stored benefit (there is no API to make one non-selectable).
async fn edit_benefit(app: &TestApp, id: &str, f: impl FnOnce(&mut Benefit)) {
    let key = uuid::Uuid::parse_str(id).unwrap().as_bytes().to_vec();
    let stored = app.state.store.get::<Benefit>(&key).await.unwrap().unwrap();
    let mut b = stored.value;
    f(&mut b);
    let mut batch = Batch::new();
    batch.put(&b, Expect::Rev(stored.rev)).unwrap();
    app.state.store.commit_durable(&batch).await.unwrap();
}

/// A custom field written straight to the store.
async fn stored_custom_field(app: &TestApp, org: &str, slug: &str) -> CustomField {
    let field = CustomField {
        id: CustomFieldId::new(),
        organization_id: OrganizationId(uuid::Uuid::parse_str(org).unwrap()),
        created_at: Utc::now(),
        modified_at: None,
        slug: slug.into(),
        name: "Favourite colour".into(),
        metadata: Metadata::default(),
        properties: CustomFieldProperties::Select {
            form: FormProperties {
                form_label: Some("Colour".into()),
                ..FormProperties::default()
            },
            options: vec![SelectOption {
                value: "red".into(),
                label: "Red".into(),
            }],
        },
        deleted_at: None,
    };
    let mut batch = Batch::new();
    batch.put(&field, Expect::Absent).unwrap();
    app.state.store.commit_durable(&batch).await.unwrap();
    field
}

#[track_caller]
fn assert_invalid(r: &Reply, loc: Value, kind: &str, msg: &str) -> Value {
    let item = r.expect_invalid_at(loc);
    assert_eq!(item["type"], kind, "{item}");
    assert!(
        item["msg"].as_str().unwrap().contains(msg),
        "expected {msg:?} in {item}"
    );
    item
}

#[track_caller]
fn assert_common_price(price: &Value, product: &Value) {
    assert_eq!(price["product_id"], product["id"]);
    assert_eq!(price["is_archived"], false);
    assert!(price["id"].is_string());
    assert_utc_timestamp(&price["created_at"]);
    assert!(price["modified_at"].is_null());
}

// ---------------------------------------------------------------------------------------
// Create and render
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn creates_a_recurring_product_with_monthly_and_yearly_prices() {
    let app = spawn_app().await;
    let org = admin_org(&app, "acme").await;
    let r = create(
        &app,
        &app.token,
        &json!({
            "name": "Pro plan",
            "description": "Everything",
            "organization_id": org,
            "metadata": {"tier": "pro", "seats": 5, "beta": true},
            "prices": [monthly(1000), yearly(10000)],
        }),
    )
    .await;
    r.expect(201);
    let p = &r.body;
    assert_eq!(keys(p), set(PRODUCT_KEYS));
    assert_eq!(p["name"], "Pro plan");
    assert_eq!(p["description"], "Everything");
    assert_eq!(p["is_recurring"], true);
    assert_eq!(p["is_archived"], false);
    assert_eq!(p["organization_id"], org.as_str());
    assert_eq!(
        p["metadata"],
        json!({"tier": "pro", "seats": 5, "beta": true})
    );
    assert_eq!(p["benefits"], json!([]));
    assert_eq!(p["medias"], json!([]));
    assert_eq!(p["attached_custom_fields"], json!([]));
    assert_utc_timestamp(&p["created_at"]);
    assert!(p["modified_at"].is_null());

    let prices = p["prices"].as_array().unwrap();
    assert_eq!(prices.len(), 2);
    let fixed_recurring = price_keys(&["recurring_interval", "price_currency", "price_amount"]);
    for (price, (interval, amount)) in prices.iter().zip([("month", 1000), ("year", 10000)]) {
        assert_eq!(keys(price), fixed_recurring, "{price}");
        assert_common_price(price, p);
        assert_eq!(price["type"], "recurring");
        assert_eq!(price["amount_type"], "fixed");
        assert_eq!(price["recurring_interval"], interval);
        assert_eq!(price["price_currency"], "usd");
        assert_eq!(price["price_amount"], amount);
    }

    // GET renders the same product.
    let g = app.get(&product_path(&r.id()), Some(&app.token)).await;
    g.expect(200);
    assert_eq!(g.body, r.body);
}

#[actix_web::test]
async fn renders_every_price_shape_exactly() {
    let app = spawn_app().await;
    let org = admin_org(&app, "shapes").await;

    let free_recurring = created(
        &app,
        &org,
        "Free tier",
        json!([{"type": "recurring", "amount_type": "free", "recurring_interval": "month"}]),
    )
    .await;
    assert_eq!(free_recurring["is_recurring"], true);
    let price = &free_recurring["prices"][0];
    assert_eq!(keys(price), price_keys(&["recurring_interval"]), "{price}");
    assert_common_price(price, &free_recurring);
    assert_eq!(
        (
            &price["type"],
            &price["amount_type"],
            &price["recurring_interval"]
        ),
        (&json!("recurring"), &json!("free"), &json!("month"))
    );

    let fixed = created(&app, &org, "Ebook", json!([one_time(2500)])).await;
    assert_eq!(fixed["is_recurring"], false);
    let price = &fixed["prices"][0];
    assert_eq!(
        keys(price),
        price_keys(&["price_currency", "price_amount"]),
        "{price}"
    );
    assert_common_price(price, &fixed);
    assert_eq!(price["type"], "one_time");
    assert_eq!(price["amount_type"], "fixed");
    assert_eq!(price["price_currency"], "usd");
    assert_eq!(price["price_amount"], 2500);

    let custom = created(
        &app,
        &org,
        "Tip jar",
        json!([{"type": "one_time", "amount_type": "custom", "minimum_amount": 100, "maximum_amount": 50000, "preset_amount": 500, "price_currency": "usd"}]),
    )
    .await;
    let price = &custom["prices"][0];
    assert_eq!(
        keys(price),
        price_keys(&[
            "price_currency",
            "minimum_amount",
            "maximum_amount",
            "preset_amount"
        ]),
        "{price}"
    );
    assert_common_price(price, &custom);
    assert_eq!(price["amount_type"], "custom");
    assert_eq!(price["type"], "one_time");
    assert_eq!(price["minimum_amount"], 100);
    assert_eq!(price["maximum_amount"], 50000);
    assert_eq!(price["preset_amount"], 500);

    // Unset bounds are null, not missing; the minimum is Stripe's (today's SDKs need one).
    let open = created(
        &app,
        &org,
        "Open tip jar",
        json!([{"type": "one_time", "amount_type": "custom"}]),
    )
    .await;
    let price = &open["prices"][0];
    assert_eq!(price["minimum_amount"], 50);
    assert_eq!(price["maximum_amount"], Value::Null);
    assert_eq!(price["preset_amount"], Value::Null);
    assert_eq!(price["price_currency"], "usd");

    let free = created(
        &app,
        &org,
        "Freebie",
        json!([{"type": "one_time", "amount_type": "free"}]),
    )
    .await;
    let price = &free["prices"][0];
    assert_eq!(keys(price), price_keys(&[]), "{price}");
    assert_common_price(price, &free);
    assert_eq!(
        (&price["type"], &price["amount_type"]),
        (&json!("one_time"), &json!("free"))
    );
    assert_eq!(free["description"], Value::Null);
    assert_eq!(free["metadata"], json!({}));
}

#[actix_web::test]
async fn every_price_resolves_to_its_product() {
    let app = spawn_app().await;
    let org = admin_org(&app, "lookup").await;
    let p = created(&app, &org, "Plan", json!([monthly(1000)])).await;
    let price_id = p["prices"][0]["id"].as_str().unwrap().to_string();
    let pid = PriceId(uuid::Uuid::parse_str(&price_id).unwrap());
    let found = product_for_price(&app.state, pid).await.unwrap().unwrap();
    assert_eq!(found.value.id.to_string(), p["id"].as_str().unwrap());

    // Still resolves once archived by an update.
    app.patch_json(
        &product_path(p["id"].as_str().unwrap()),
        Some(&app.token),
        &json!({"prices": [monthly(2000)]}),
    )
    .await
    .expect(200);
    let found = product_for_price(&app.state, pid).await.unwrap().unwrap();
    assert!(found.value.price(pid).unwrap().is_archived);
    assert!(product_for_price(&app.state, PriceId::new())
        .await
        .unwrap()
        .is_none());
}

// ---------------------------------------------------------------------------------------
// Create validation
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn create_validation_errors_name_their_location() {
    let app = spawn_app().await;
    let org = admin_org(&app, "valid").await;
    let post = |body: Value| {
        let app = &app;
        async move { create(app, &app.token, &body).await }
    };
    let base = |prices: Value| json!({"name": "Product", "organization_id": org, "prices": prices});

    let r = post(json!({"name": "ab", "organization_id": org, "prices": [monthly(1000)]})).await;
    assert_invalid(
        &r,
        json!(["body", "name"]),
        "string_too_short",
        "String should have at least 3 characters",
    );

    let r = post(base(json!([monthly(1000), monthly(2000)]))).await;
    assert_invalid(
        &r,
        json!(["body", "prices"]),
        "value_error",
        "Only one price per interval is allowed.",
    );

    // Each currency's bounds (Polar's `minimum_price` / `maximum_price`, the bound written
    // in the currency).
    let r = post(base(json!([monthly(49)]))).await;
    let item = assert_invalid(
        &r,
        json!(["body", "prices", 0, "price_amount"]),
        "minimum_price",
        "Amount must be at least $0.50",
    );
    assert_eq!(item["input"], 49);
    let r = post(base(json!([one_time(100_000_000)]))).await;
    assert_invalid(
        &r,
        json!(["body", "prices", 0, "price_amount"]),
        "maximum_price",
        "Amount must be at most $999,999.99",
    );
    let r = post(base(
        json!([{"type": "one_time", "amount_type": "custom", "minimum_amount": 10}]),
    ))
    .await;
    assert_invalid(
        &r,
        json!(["body", "prices", 0, "minimum_amount"]),
        "minimum_price",
        "Amount must be at least $0.50",
    );
    let yen = |amount: i64| json!({"type": "one_time", "amount_type": "fixed", "price_amount": amount, "price_currency": "jpy"});
    let r = post(base(json!([one_time(1000), yen(79)]))).await;
    assert_invalid(
        &r,
        json!(["body", "prices", 1, "price_amount"]),
        "minimum_price",
        "Amount must be at least ¥80",
    );
    let r = post(base(
        json!([{"type": "one_time", "amount_type": "fixed", "price_amount": -1}]),
    ))
    .await;
    assert_invalid(
        &r,
        json!(["body", "prices", 0, "price_amount"]),
        "greater_than_equal",
        "Input should be greater than or equal to 0",
    );

    // Any of Polar's presentment currencies, lowercase; anything else is an enum error.
    for bad in ["xau", "EUR", "euro"] {
        let r = post(base(
            json!([{"type": "one_time", "amount_type": "fixed", "price_amount": 1000, "price_currency": bad}]),
        ))
        .await;
        let item = assert_invalid(
            &r,
            json!(["body", "prices", 0, "price_currency"]),
            "enum",
            "Input should be 'aed', 'all', ",
        );
        assert_eq!(item["input"], bad);
    }

    let r = post(base(
        json!([{"type": "recurring", "amount_type": "custom", "recurring_interval": "month"}]),
    ))
    .await;
    assert_invalid(
        &r,
        json!(["body", "prices", 0, "amount_type"]),
        "literal_error",
        "Input should be 'fixed', 'free' or 'seat_based'",
    );

    let r = post(base(json!([one_time(1000), one_time(2000)]))).await;
    assert_invalid(
        &r,
        json!(["body", "prices"]),
        "too_long",
        "List should have at most 1 item after validation, not 2",
    );
    let r = post(base(json!([monthly(1000), one_time(2000)]))).await;
    assert_invalid(&r, json!(["body", "prices"]), "value_error", "mixed");
    let r = post(base(
        json!([monthly(1000), yearly(2000), {"type": "recurring", "amount_type": "fixed", "price_amount": 1000, "recurring_interval": "month"}]),
    ))
    .await;
    assert_invalid(&r, json!(["body", "prices"]), "too_long", "at most 2 items");
    let r = post(base(
        json!([{"type": "recurring", "amount_type": "free", "recurring_interval": "month"}, yearly(1000)]),
    ))
    .await;
    assert_invalid(&r, json!(["body", "prices"]), "too_long", "at most 1 item");
    let r = post(base(json!([]))).await;
    assert_invalid(
        &r,
        json!(["body", "prices"]),
        "too_short",
        "at least 1 item",
    );
    let r = post(base(json!([{"type": "one_time", "price_amount": 1000}]))).await;
    assert_invalid(
        &r,
        json!(["body", "prices", 0, "amount_type"]),
        "missing",
        "Field required",
    );
    let r = post(base(
        json!([{"type": "recurring", "amount_type": "fixed", "price_amount": 1000, "recurring_interval": "fortnight"}]),
    ))
    .await;
    assert_invalid(
        &r,
        json!(["body", "prices", 0, "recurring_interval"]),
        "enum",
        "Input should be 'day', 'week', 'month' or 'year'",
    );

    let long_key = "k".repeat(41);
    let r = post(json!({"name": "Product", "organization_id": org, "prices": [monthly(1000)], "metadata": {long_key.clone(): "v"}})).await;
    assert_invalid(
        &r,
        json!(["body", "metadata", long_key, "[key]"]),
        "string_too_long",
        "at most 40 characters",
    );

    let r = post(json!({"name": "Product", "organization_id": org, "prices": [monthly(1000)], "medias": [UNKNOWN_ID]})).await;
    let item = assert_invalid(
        &r,
        json!(["body", "medias", 0]),
        "value_error",
        "File does not exist or is not yet uploaded.",
    );
    assert_eq!(item["input"], UNKNOWN_ID);

    let r = post(json!({"name": "Product", "organization_id": org, "prices": [monthly(1000)], "attached_custom_fields": [{"custom_field_id": UNKNOWN_ID, "required": true}]})).await;
    assert_invalid(
        &r,
        json!(["body", "attached_custom_fields", 0]),
        "value_error",
        "Custom field does not exist.",
    );

    // Several problems are reported together.
    let r = post(json!({"name": "x", "organization_id": org, "prices": [monthly(1)]})).await;
    assert_eq!(r.expect_validation().len(), 2, "{}", r.body);

    // Nothing was created.
    assert_eq!(list(&app, &app.token, "").await.total_count(), 0);
}

#[actix_web::test]
async fn create_resolves_the_organization() {
    let app = spawn_app().await;
    let org = admin_org(&app, "mine").await;
    let r = create(
        &app,
        &app.token,
        &json!({"name": "Product", "prices": [monthly(1000)]}),
    )
    .await;
    let item = assert_invalid(
        &r,
        json!(["body", "organization_id"]),
        "missing",
        "organization_id is required.",
    );
    assert_eq!(item["input"], Value::Null);

    // A user who is not a member of the organization.
    let (_, stranger) = app
        .new_user_with_scopes("stranger@example.com", &[Scope::ProductsWrite])
        .await;
    let r = create(
        &app,
        &stranger,
        &json!({"name": "Product", "organization_id": org, "prices": [monthly(1000)]}),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "organization_id"]),
        "value_error",
        "Organization not found.",
    );
    let r = create(
        &app,
        &app.token,
        &json!({"name": "Product", "organization_id": UNKNOWN_ID, "prices": [monthly(1000)]}),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "organization_id"]),
        "value_error",
        "Organization not found.",
    );
}

#[actix_web::test]
async fn attaches_custom_fields_of_the_organization_in_order() {
    let app = spawn_app().await;
    let org = admin_org(&app, "fields").await;
    let other_org = admin_org(&app, "other-fields").await;
    let a = stored_custom_field(&app, &org, "colour").await;
    let b = stored_custom_field(&app, &org, "size").await;
    let foreign = stored_custom_field(&app, &other_org, "colour").await;

    let r = create(
        &app,
        &app.token,
        &json!({"name": "Shirt", "organization_id": org, "prices": [one_time(2000)],
        "attached_custom_fields": [
            {"custom_field_id": b.id.to_string(), "required": true},
            {"custom_field_id": a.id.to_string(), "required": false},
        ]}),
    )
    .await;
    r.expect(201);
    let attached = r.body["attached_custom_fields"].as_array().unwrap().clone();
    assert_eq!(attached.len(), 2);
    assert_eq!(
        keys(&attached[0]),
        set(&["custom_field_id", "custom_field", "order", "required"])
    );
    assert_eq!(attached[0]["custom_field_id"], b.id.to_string());
    assert_eq!(attached[0]["order"], 0);
    assert_eq!(attached[0]["required"], true);
    assert_eq!(attached[1]["custom_field_id"], a.id.to_string());
    assert_eq!(attached[1]["order"], 1);
    assert_eq!(attached[1]["required"], false);
    let field = &attached[0]["custom_field"];
    assert_eq!(field["id"], b.id.to_string());
    assert_eq!(field["type"], "select");
    assert_eq!(field["slug"], "size");
    assert_eq!(field["organization_id"], org.as_str());
    assert_eq!(field["properties"]["options"][0]["value"], "red");

    // Another organization's field does not exist for this product.
    let r = create(
        &app,
        &app.token,
        &json!({"name": "Shirt", "organization_id": org, "prices": [one_time(2000)],
        "attached_custom_fields": [
            {"custom_field_id": a.id.to_string(), "required": false},
            {"custom_field_id": foreign.id.to_string(), "required": false},
        ]}),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "attached_custom_fields", 1]),
        "value_error",
        "Custom field does not exist.",
    );

    // Update replaces the list.
    let product = created(&app, &org, "Hat", json!([one_time(1000)])).await;
    let r = app
        .patch_json(
            &product_path(product["id"].as_str().unwrap()),
            Some(&app.token),
            &json!({"attached_custom_fields": [{"custom_field_id": a.id.to_string(), "required": true}]}),
        )
        .await;
    r.expect(200);
    assert_eq!(
        r.body["attached_custom_fields"].as_array().unwrap().len(),
        1
    );
    assert_eq!(
        r.body["attached_custom_fields"][0]["custom_field"]["slug"],
        "colour"
    );
}

// ---------------------------------------------------------------------------------------
// Listing
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn list_filters_sorts_and_paginates() {
    let app = spawn_app().await;
    let org = admin_org(&app, "list-a").await;
    let org_b = admin_org(&app, "list-b").await;
    let basic = created(&app, &org, "Basic plan", json!([monthly(500)])).await;
    let ebook = created(&app, &org, "ebook", json!([one_time(2500)])).await;
    let pro = created(
        &app,
        &org,
        "Pro Plan",
        json!([monthly(2000), yearly(20000)]),
    )
    .await;
    let free = created(
        &app,
        &org,
        "Community",
        json!([{"type": "one_time", "amount_type": "free"}]),
    )
    .await;
    let elsewhere = created(&app, &org_b, "Other org plan", json!([monthly(900)])).await;
    app.patch_json(
        &product_path(ebook["id"].as_str().unwrap()),
        Some(&app.token),
        &json!({"is_archived": true}),
    )
    .await
    .expect(200);

    // Default: -created_at, across every organization of the user.
    let r = list(&app, &app.token, "").await;
    r.expect(200);
    assert_eq!(
        names(&r),
        vec![
            "Other org plan",
            "Community",
            "Pro Plan",
            "ebook",
            "Basic plan"
        ]
    );
    assert_eq!(r.total_count(), 5);
    assert_eq!(r.max_page(), 1);
    for item in r.items() {
        assert_eq!(keys(&item), set(PRODUCT_KEYS));
    }

    let q = format!("organization_id={org}");
    assert_eq!(list(&app, &app.token, &q).await.total_count(), 4);
    let q = format!("organization_id={org}&organization_id={org_b}");
    assert_eq!(list(&app, &app.token, &q).await.total_count(), 5);
    let q = format!("organization_id={org_b}");
    assert_eq!(
        names(&list(&app, &app.token, &q).await),
        vec!["Other org plan"]
    );
    let _ = elsewhere;

    // Sorting.
    let q = format!("organization_id={org}&sorting=created_at");
    assert_eq!(
        names(&list(&app, &app.token, &q).await),
        vec!["Basic plan", "ebook", "Pro Plan", "Community"]
    );
    let q = format!("organization_id={org}&sorting=name");
    assert_eq!(
        names(&list(&app, &app.token, &q).await),
        vec!["Basic plan", "Community", "ebook", "Pro Plan"]
    );
    let q = format!("organization_id={org}&sorting=-name");
    assert_eq!(
        names(&list(&app, &app.token, &q).await),
        vec!["Pro Plan", "ebook", "Community", "Basic plan"]
    );
    let q = format!("organization_id={org}&sorting=price_amount");
    assert_eq!(
        names(&list(&app, &app.token, &q).await),
        vec!["Community", "Basic plan", "Pro Plan", "ebook"]
    );
    let q = format!("organization_id={org}&sorting=-price_amount");
    assert_eq!(
        names(&list(&app, &app.token, &q).await),
        vec!["ebook", "Pro Plan", "Basic plan", "Community"]
    );
    let q = format!("organization_id={org}&sorting=price_amount_type");
    assert_eq!(
        names(&list(&app, &app.token, &q).await)[0],
        "Community",
        "free sorts first"
    );
    let r = list(&app, &app.token, "sorting=bogus").await;
    assert_invalid(
        &r,
        json!(["query", "sorting", 0]),
        "enum",
        "Input should be",
    );

    // Filters.
    let r = list(&app, &app.token, "is_archived=true").await;
    assert_eq!(names(&r), vec!["ebook"]);
    assert_eq!(r.total_count(), 1);
    let r = list(&app, &app.token, "is_archived=false").await;
    assert_eq!(r.total_count(), 4);
    let q = format!("organization_id={org}&is_recurring=true&sorting=name");
    assert_eq!(
        names(&list(&app, &app.token, &q).await),
        vec!["Basic plan", "Pro Plan"]
    );
    let q = format!("organization_id={org}&is_recurring=false&sorting=name");
    assert_eq!(
        names(&list(&app, &app.token, &q).await),
        vec!["Community", "ebook"]
    );
    let r = list(&app, &app.token, "query=PLAN&sorting=name").await;
    assert_eq!(names(&r), vec!["Basic plan", "Other org plan", "Pro Plan"]);
    assert_eq!(r.total_count(), 3);
    let r = list(&app, &app.token, "query=plan&organization_id=").await;
    r.expect_validation();
    let r = list(&app, &app.token, "is_archived=maybe").await;
    assert_invalid(
        &r,
        json!(["query", "is_archived"]),
        "bool_parsing",
        "boolean",
    );

    // Pagination.
    let q = format!("organization_id={org}&sorting=name&limit=3");
    let r = list(&app, &app.token, &q).await;
    assert_eq!(names(&r), vec!["Basic plan", "Community", "ebook"]);
    assert_eq!((r.total_count(), r.max_page()), (4, 2));
    let q = format!("organization_id={org}&sorting=name&limit=3&page=2");
    assert_eq!(names(&list(&app, &app.token, &q).await), vec!["Pro Plan"]);
    let q = format!("organization_id={org}&sorting=name&limit=3&page=5");
    let r = list(&app, &app.token, &q).await;
    assert!(r.items().is_empty());
    assert_eq!(r.total_count(), 4);
    let r = list(&app, &app.token, "query=plan&sorting=name&limit=2&page=2").await;
    assert_eq!(names(&r), vec!["Pro Plan"]);
    assert_eq!((r.total_count(), r.max_page()), (3, 2));
    list(&app, &app.token, "page=0").await.expect_validation();

    let _ = (basic, pro, free);
}

#[actix_web::test]
async fn list_filters_by_benefit() {
    let app = spawn_app().await;
    let org = admin_org(&app, "granting").await;
    let b1 = create_benefit(&app, &org, "Discord role").await;
    let b2 = create_benefit(&app, &org, "Priority support").await;
    let b3 = create_benefit(&app, &org, "Nothing attached").await;
    let a = created(&app, &org, "Alpha", json!([monthly(3000)])).await;
    let b = created(&app, &org, "Bravo", json!([monthly(1000)])).await;
    let _c = created(&app, &org, "Charlie", json!([monthly(2000)])).await;
    for (p, benefits) in [(&a, vec![&b1, &b2]), (&b, vec![&b2])] {
        app.post_json(
            &benefits_path(p["id"].as_str().unwrap()),
            Some(&app.token),
            &json!({ "benefits": benefits }),
        )
        .await
        .expect(200);
    }
    let r = list(&app, &app.token, &format!("benefit_id={b1}")).await;
    assert_eq!(names(&r), vec!["Alpha"]);
    let r = list(&app, &app.token, &format!("benefit_id={b2}")).await;
    assert_eq!(names(&r), vec!["Bravo", "Alpha"]);
    assert_eq!(r.total_count(), 2);
    // Each product once, even when it grants several of the benefits.
    let r = list(
        &app,
        &app.token,
        &format!("benefit_id={b1}&benefit_id={b2}&sorting=price_amount"),
    )
    .await;
    assert_eq!(names(&r), vec!["Bravo", "Alpha"]);
    assert_eq!(r.total_count(), 2);
    let r = list(
        &app,
        &app.token,
        &format!("benefit_id={b1}&benefit_id={b2}&sorting=name&limit=1&page=2"),
    )
    .await;
    assert_eq!(names(&r), vec!["Bravo"]);
    assert_eq!((r.total_count(), r.max_page()), (2, 2));
    let r = list(&app, &app.token, &format!("benefit_id={b2}&query=brav")).await;
    assert_eq!(names(&r), vec!["Bravo"]);
    let r = list(&app, &app.token, &format!("benefit_id={b3}")).await;
    assert_eq!(r.total_count(), 0);
    let r = list(&app, &app.token, "benefit_id=nope").await;
    assert_invalid(&r, json!(["query", "benefit_id"]), "uuid_parsing", "UUID");

    // Replacing the benefits moves the product out of the filter.
    app.post_json(
        &benefits_path(a["id"].as_str().unwrap()),
        Some(&app.token),
        &json!({"benefits": [b2]}),
    )
    .await
    .expect(200);
    let r = list(&app, &app.token, &format!("benefit_id={b1}")).await;
    assert_eq!(r.total_count(), 0);
}

// ---------------------------------------------------------------------------------------
// Update
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn update_archives_omitted_prices_and_adds_new_ones() {
    let app = spawn_app().await;
    let org = admin_org(&app, "updates").await;
    let p = created(&app, &org, "Plan", json!([monthly(1000), yearly(10000)])).await;
    let id = p["id"].as_str().unwrap().to_string();
    let month_id = p["prices"][0]["id"].as_str().unwrap().to_string();
    let year_id = p["prices"][1]["id"].as_str().unwrap().to_string();

    // Keep the monthly price (sent with its full schema, as dashboards do), drop the yearly.
    let mut full_month = p["prices"][0].clone();
    full_month["price_amount"] = json!(99999);
    let r = app
        .patch_json(
            &product_path(&id),
            Some(&app.token),
            &json!({"name": "Plan v2", "description": "New", "prices": [full_month, yearly(12000)], "metadata": {"v": 2}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["name"], "Plan v2");
    assert_eq!(r.body["description"], "New");
    assert_eq!(r.body["metadata"], json!({"v": 2}));
    assert_utc_timestamp(&r.body["modified_at"]);
    let prices = r.body["prices"].as_array().unwrap();
    assert_eq!(prices.len(), 2, "{}", r.body);
    assert_eq!(prices[0]["id"], month_id.as_str());
    assert_eq!(
        prices[0]["price_amount"], 1000,
        "existing prices are not changed"
    );
    assert_ne!(prices[1]["id"], year_id.as_str());
    assert_eq!(prices[1]["price_amount"], 12000);
    assert_eq!(prices[1]["recurring_interval"], "year");

    // The archived price still resolves to the product.
    let year = PriceId(uuid::Uuid::parse_str(&year_id).unwrap());
    let stored = product_for_price(&app.state, year).await.unwrap().unwrap();
    assert!(stored.value.price(year).unwrap().is_archived);

    // Adding a second monthly price breaks the one-per-interval rule.
    let r = app
        .patch_json(
            &product_path(&id),
            Some(&app.token),
            &json!({"prices": [{"id": month_id}, monthly(1500)]}),
        )
        .await;
    assert_invalid(
        &r,
        json!(["body", "prices"]),
        "value_error",
        "Only one price per interval is allowed.",
    );
    // An archived or unknown price can't be kept.
    let r = app
        .patch_json(
            &product_path(&id),
            Some(&app.token),
            &json!({"prices": [{"id": year_id}]}),
        )
        .await;
    assert_invalid(
        &r,
        json!(["body", "prices", 0]),
        "value_error",
        "Price does not exist.",
    );
    let r = app
        .patch_json(&product_path(&id), Some(&app.token), &json!({"prices": []}))
        .await;
    assert_invalid(
        &r,
        json!(["body", "prices"]),
        "too_short",
        "At least one price is required.",
    );
    let r = app
        .patch_json(&product_path(&id), Some(&app.token), &json!({"name": "no"}))
        .await;
    assert_invalid(
        &r,
        json!(["body", "name"]),
        "string_too_short",
        "at least 3",
    );
    let r = app
        .patch_json(
            &product_path(&id),
            Some(&app.token),
            &json!({"prices": [{"type": "recurring", "amount_type": "custom", "recurring_interval": "month"}]}),
        )
        .await;
    assert_invalid(
        &r,
        json!(["body", "prices", 0, "amount_type"]),
        "literal_error",
        "'fixed', 'free' or 'seat_based'",
    );
    let r = app
        .patch_json(
            &product_path(&id),
            Some(&app.token),
            &json!({"medias": [UNKNOWN_ID]}),
        )
        .await;
    assert_invalid(
        &r,
        json!(["body", "medias", 0]),
        "value_error",
        "File does not exist",
    );

    // Replacing every price with a single monthly one.
    let r = app
        .patch_json(
            &product_path(&id),
            Some(&app.token),
            &json!({"prices": [monthly(700)]}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["prices"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["prices"][0]["price_amount"], 700);
    assert_eq!(r.body["is_recurring"], true);

    // Archive, then unarchive; null and absent fields change nothing.
    let r = app
        .patch_json(
            &product_path(&id),
            Some(&app.token),
            &json!({"is_archived": true, "name": null, "description": "", "metadata": null}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["is_archived"], true);
    assert_eq!(r.body["name"], "Plan v2");
    assert_eq!(r.body["description"], "New");
    assert_eq!(r.body["metadata"], json!({"v": 2}));
    let g = app.get(&product_path(&id), Some(&app.token)).await;
    assert_eq!(g.body["is_archived"], true);
    let r = app
        .patch_json(
            &product_path(&id),
            Some(&app.token),
            &json!({"is_archived": false}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["is_archived"], false);

    let r = app
        .patch_json(
            &product_path(UNKNOWN_ID),
            Some(&app.token),
            &json!({"name": "Whatever"}),
        )
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app
        .patch_json(&product_path("nope"), Some(&app.token), &json!({}))
        .await;
    assert_invalid(&r, json!(["path", "id"]), "uuid_parsing", "UUID");
}

// ---------------------------------------------------------------------------------------
// Benefits
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn attaching_benefits_replaces_the_set() {
    let app = spawn_app().await;
    let org = admin_org(&app, "perks").await;
    let other = admin_org(&app, "other-perks").await;
    let b1 = create_benefit(&app, &org, "First perk").await;
    let b2 = create_benefit(&app, &org, "Second perk").await;
    let b3 = create_benefit(&app, &org, "Third perk").await;
    let foreign = create_benefit(&app, &other, "Foreign perk").await;
    let p = created(&app, &org, "Plan", json!([monthly(1000)])).await;
    let id = p["id"].as_str().unwrap().to_string();
    let path = benefits_path(&id);

    let r = app
        .post_json(&path, Some(&app.token), &json!({"benefits": [b2, b1]}))
        .await;
    r.expect(200);
    let ids: Vec<&str> = r.body["benefits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![b2.as_str(), b1.as_str()]);
    // The full Benefit schema.
    let benefit = &r.body["benefits"][0];
    assert_eq!(benefit["type"], "custom");
    assert_eq!(benefit["description"], "Second perk");
    assert_eq!(benefit["organization_id"], org.as_str());
    assert!(benefit["properties"].is_object());
    assert_eq!(keys(&r.body), set(PRODUCT_KEYS));

    let r = app
        .post_json(&path, Some(&app.token), &json!({"benefits": [b3]}))
        .await;
    r.expect(200);
    assert_eq!(r.body["benefits"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["benefits"][0]["id"], b3.as_str());
    let g = app.get(&product_path(&id), Some(&app.token)).await;
    assert_eq!(g.body["benefits"], r.body["benefits"]);

    // Unknown, foreign and deleted benefits don't exist for this product.
    for bad in [UNKNOWN_ID, foreign.as_str()] {
        let r = app
            .post_json(&path, Some(&app.token), &json!({"benefits": [b1, bad]}))
            .await;
        let item = assert_invalid(
            &r,
            json!(["body", "benefits", 1]),
            "value_error",
            "Benefit does not exist.",
        );
        assert_eq!(item["input"], bad);
    }
    let r = app
        .post_json(&path, Some(&app.token), &json!({"benefits": ["nope"]}))
        .await;
    r.expect_invalid_at(json!(["body", "benefits", 0]));

    // A benefit that is not selectable can't be added.
    edit_benefit(&app, &b1, |b| b.selectable = false).await;
    let r = app
        .post_json(&path, Some(&app.token), &json!({"benefits": [b3, b1]}))
        .await;
    assert_invalid(
        &r,
        json!(["body", "benefits", 1]),
        "value_error",
        "Benefit is not selectable.",
    );
    // Nothing changed.
    let g = app.get(&product_path(&id), Some(&app.token)).await;
    assert_eq!(g.body["benefits"][0]["id"], b3.as_str());

    // A deleted benefit disappears from the product.
    app.send(app.request(
        reqwest::Method::DELETE,
        &format!("/v1/benefits/{b3}"),
        Some(&app.token),
    ))
    .await
    .expect(204);
    let g = app.get(&product_path(&id), Some(&app.token)).await;
    assert_eq!(g.body["benefits"], json!([]));

    // An empty list removes every benefit.
    let r = app
        .post_json(&path, Some(&app.token), &json!({"benefits": [b2]}))
        .await;
    r.expect(200);
    let r = app
        .post_json(&path, Some(&app.token), &json!({"benefits": []}))
        .await;
    r.expect(200);
    assert_eq!(r.body["benefits"], json!([]));

    let r = app
        .post_json(
            &benefits_path(UNKNOWN_ID),
            Some(&app.token),
            &json!({"benefits": []}),
        )
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
}

// ---------------------------------------------------------------------------------------
// Authentication, scopes and tenancy
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn requires_a_token_with_products_scopes() {
    let app = spawn_app().await;
    let org = admin_org(&app, "scoped").await;
    let p = created(&app, &org, "Plan", json!([monthly(1000)])).await;
    let id = p["id"].as_str().unwrap().to_string();
    let body = json!({"name": "Plan", "organization_id": org, "prices": [monthly(1000)]});

    for r in [
        app.get(PRODUCTS, None).await,
        app.get(&product_path(&id), None).await,
        app.post_json(PRODUCTS, None, &body).await,
        app.patch_json(&product_path(&id), None, &json!({"name": "New"}))
            .await,
        app.post_json(&benefits_path(&id), None, &json!({"benefits": []}))
            .await,
    ] {
        assert_eq!(r.expect_error(401), "Unauthorized", "{}", r.body);
        assert!(r.www_authenticate().contains("Bearer realm=\"polar\""));
    }

    let (user, token) = app
        .new_user_with_scopes("noscope@example.com", &[Scope::BenefitsWrite])
        .await;
    let r = app.get(PRODUCTS, Some(&token)).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    assert!(r
        .www_authenticate()
        .contains("scope=\"web_default products:read products:write\""));
    let r = app.post_json(PRODUCTS, Some(&token), &body).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    assert!(r
        .www_authenticate()
        .contains("scope=\"web_default products:write\""));

    // products:read can read but not write.
    let reader = app.issue_token(user, &[Scope::ProductsRead]).await;
    list(&app, &reader, "").await.expect(200);
    let r = app
        .patch_json(&product_path(&id), Some(&reader), &json!({"name": "New"}))
        .await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
}

#[actix_web::test]
async fn another_organizations_products_are_not_found() {
    let app = spawn_app().await;
    let org = admin_org(&app, "owner").await;
    let p = created(&app, &org, "Secret plan", json!([monthly(1000)])).await;
    let id = p["id"].as_str().unwrap().to_string();

    let (user, token) = app
        .new_user_with_scopes(
            "rival@example.com",
            &[Scope::ProductsWrite, Scope::OrganizationsWrite],
        )
        .await;
    let _ = user;
    let rival_org = app.created_org_as(&token, "Rival", "rival").await;
    let rival_org = rival_org["id"].as_str().unwrap().to_string();
    let mine = created_as(&app, &token, &rival_org, "Rival plan").await;

    for r in [
        app.get(&product_path(&id), Some(&token)).await,
        app.patch_json(
            &product_path(&id),
            Some(&token),
            &json!({"name": "Hijacked"}),
        )
        .await,
        app.post_json(&benefits_path(&id), Some(&token), &json!({"benefits": []}))
            .await,
    ] {
        assert_eq!(r.expect_error(404), "ResourceNotFound", "{}", r.body);
        assert_eq!(r.body["detail"], "Not found");
    }
    let r = list(&app, &token, "").await;
    assert_eq!(names(&r), vec!["Rival plan"]);
    assert_eq!(r.total_count(), 1);
    // Asking for the other organization explicitly yields nothing.
    let r = list(&app, &token, &format!("organization_id={org}")).await;
    assert_eq!(r.total_count(), 0);
    assert!(r.items().is_empty());
    // The owner still sees it unchanged, and not the rival's.
    let g = app.get(&product_path(&id), Some(&app.token)).await;
    g.expect(200);
    assert_eq!(g.body["name"], "Secret plan");
    let r = app.get(&product_path(&mine), Some(&app.token)).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
}

async fn created_as(app: &TestApp, token: &str, org: &str, name: &str) -> String {
    let r = create(
        app,
        token,
        &json!({"name": name, "organization_id": org, "prices": [monthly(1000)]}),
    )
    .await;
    r.expect(201);
    r.id()
}
