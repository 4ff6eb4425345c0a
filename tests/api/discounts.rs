//! `/v1/discounts/`: create every shape, validation, code uniqueness, product restriction,
//! update rules, soft delete, list filters, sorting and pagination, scopes and tenancy
//! (reference 5, 7, 8; clients.md 4 and 9).

use std::collections::BTreeSet;

use chrono::{Duration, Utc};
use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate::domain::discount::{discount_by_code, Discount};
use tollgate::domain::ids::{DiscountId, OrganizationId};
use tollgate_storage::{Batch, Expect};

use crate::helpers::{assert_utc_timestamp, spawn_app, Reply, TestApp};

const DISCOUNTS: &str = "/v1/discounts/";
const UNKNOWN_ID: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";

fn path(id: &str) -> String {
    format!("{DISCOUNTS}{id}")
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

const BASE_KEYS: &[&str] = &[
    "id",
    "created_at",
    "modified_at",
    "metadata",
    "name",
    "type",
    "duration",
    "code",
    "starts_at",
    "ends_at",
    "max_redemptions",
    "max_redemptions_per_customer",
    "redemptions_count",
    "organization_id",
    "products",
];

fn discount_keys(extra: &[&str]) -> BTreeSet<String> {
    let mut s = set(BASE_KEYS);
    s.extend(extra.iter().map(|e| e.to_string()));
    s
}

/// An organization of the bootstrap admin.
async fn admin_org(app: &TestApp, slug: &str) -> String {
    app.created_org_as(&app.token, "Seller", slug).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn fixed(org: &str, name: &str, amount: i64) -> Value {
    json!({"type": "fixed", "duration": "once", "amount": amount, "currency": "usd", "name": name, "organization_id": org})
}

fn percentage(org: &str, name: &str, basis_points: i64) -> Value {
    json!({"type": "percentage", "duration": "forever", "basis_points": basis_points, "name": name, "organization_id": org})
}

fn with(mut body: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

async fn create(app: &TestApp, token: &str, body: &Value) -> Reply {
    app.post_json(DISCOUNTS, Some(token), body).await
}

/// Creates a discount as the admin, failing unless 201.
async fn created(app: &TestApp, body: Value) -> Value {
    let r = create(app, &app.token, &body).await;
    r.expect(201);
    r.body
}

async fn delete(app: &TestApp, token: Option<&str>, id: &str) -> Reply {
    app.send(app.request(Method::DELETE, &path(id), token))
        .await
}

async fn list(app: &TestApp, token: &str, query: &str) -> Reply {
    app.get(&format!("{DISCOUNTS}?{query}"), Some(token)).await
}

fn names(r: &Reply) -> Vec<String> {
    r.items()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_string())
        .collect()
}

async fn create_product(app: &TestApp, org: &str, name: &str) -> String {
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": name, "organization_id": org, "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 1000}]}),
        )
        .await;
    r.expect(201);
    r.id()
}

/// Rewrites a stored discount (redemptions only change through checkouts).
async fn edit_discount(app: &TestApp, id: &str, f: impl FnOnce(&mut Discount)) {
    let key = uuid::Uuid::parse_str(id).unwrap().as_bytes().to_vec();
    let stored = app
        .state
        .store
        .get::<Discount>(&key)
        .await
        .unwrap()
        .unwrap();
    let mut d = stored.value;
    f(&mut d);
    let mut batch = Batch::new();
    batch.put(&d, Expect::Rev(stored.rev)).unwrap();
    app.state.store.commit_durable(&batch).await.unwrap();
}

#[track_caller]
fn assert_invalid(r: &Reply, loc: Value, kind: &str, msg: &str) -> Value {
    let item = r.expect_invalid_at(loc);
    assert_eq!(item["type"], kind, "{item}");
    assert_eq!(item["msg"], msg, "{item}");
    item
}

// ---------------------------------------------------------------------------------------
// Create and render
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn creates_a_fixed_once_discount_with_the_full_shape() {
    let app = spawn_app().await;
    let org = admin_org(&app, "seller").await;
    let starts = Utc::now() - Duration::days(1);
    let ends = Utc::now() + Duration::days(30);
    let body = with(
        fixed(&org, "Launch", 500),
        json!({
            "code": "LAUNCH24",
            "starts_at": starts.to_rfc3339(),
            "ends_at": ends.to_rfc3339(),
            "max_redemptions": 100,
            "metadata": {"campaign": "spring", "wave": 2, "vip": true},
        }),
    );
    let r = create(&app, &app.token, &body).await;
    r.expect(201);
    let d = &r.body;
    assert_eq!(keys(d), discount_keys(&["amount", "currency", "amounts"]));
    assert_eq!(d["type"], "fixed");
    assert_eq!(d["duration"], "once");
    assert_eq!(d["amount"], 500);
    assert_eq!(d["currency"], "usd");
    assert_eq!(d["name"], "Launch");
    assert_eq!(d["code"], "LAUNCH24");
    assert_eq!(d["max_redemptions"], 100);
    assert_eq!(d["redemptions_count"], 0);
    assert_eq!(d["organization_id"], org.as_str());
    assert_eq!(d["products"], json!([]));
    assert_eq!(
        d["metadata"],
        json!({"campaign": "spring", "wave": 2, "vip": true})
    );
    assert_utc_timestamp(&d["created_at"]);
    assert_utc_timestamp(&d["starts_at"]);
    assert_utc_timestamp(&d["ends_at"]);
    assert!(d["modified_at"].is_null());
    let parsed = chrono::DateTime::parse_from_rfc3339(d["ends_at"].as_str().unwrap()).unwrap();
    assert_eq!(parsed.timestamp(), ends.timestamp());

    let g = app.get(&path(&r.id()), Some(&app.token)).await;
    g.expect(200);
    assert_eq!(g.body, r.body);
}

#[actix_web::test]
async fn renders_each_of_the_four_shapes() {
    let app = spawn_app().await;
    let org = admin_org(&app, "shapes").await;

    let d = created(&app, fixed(&org, "Fixed forever", 100)).await;
    assert_eq!(keys(&d), discount_keys(&["amount", "currency", "amounts"]));

    let d = created(
        &app,
        with(
            fixed(&org, "Fixed repeating", 100),
            json!({"duration": "repeating", "duration_in_months": 6, "basis_points": 99}),
        ),
    )
    .await;
    assert_eq!(
        keys(&d),
        discount_keys(&["amount", "currency", "amounts", "duration_in_months"])
    );
    assert_eq!(d["duration"], "repeating");
    assert_eq!(d["duration_in_months"], 6);

    let d = created(&app, percentage(&org, "Pct forever", 2550)).await;
    assert_eq!(keys(&d), discount_keys(&["basis_points"]));
    assert_eq!(d["type"], "percentage");
    assert_eq!(d["duration"], "forever");
    assert_eq!(d["basis_points"], 2550);
    assert!(d["code"].is_null());

    // Fields of the other shapes are ignored.
    let d = created(
        &app,
        with(
            percentage(&org, "Pct repeating", 10_000),
            json!({"duration": "repeating", "duration_in_months": 12, "amount": 5, "currency": "usd"}),
        ),
    )
    .await;
    assert_eq!(
        keys(&d),
        discount_keys(&["basis_points", "duration_in_months"])
    );
    assert_eq!(d["basis_points"], 10_000);

    // `currency` defaults to usd; blank codes mean none.
    let d = created(
        &app,
        json!({"type": "fixed", "duration": "once", "amount": 0, "name": "Free", "code": "  ", "organization_id": org}),
    )
    .await;
    assert_eq!(d["currency"], "usd");
    assert_eq!(d["amount"], 0);
    assert!(d["code"].is_null());
}

// ---------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn create_validation_errors_name_their_location() {
    let app = spawn_app().await;
    let org = admin_org(&app, "strict").await;
    let t = &app.token;

    let r = create(&app, t, &fixed(&org, "", 100)).await;
    assert_invalid(
        &r,
        json!(["body", "name"]),
        "string_too_short",
        "String should have at least 1 character",
    );

    let mut body = fixed(&org, "No amount", 100);
    body.as_object_mut().unwrap().remove("amount");
    let r = create(&app, t, &body).await;
    assert_invalid(
        &r,
        json!(["body"]),
        "value_error",
        "Value error, Must specify either `amount` or `amounts`.",
    );

    let r = create(&app, t, &fixed(&org, "Negative", -1)).await;
    assert_invalid(
        &r,
        json!(["body", "amount"]),
        "greater_than_equal",
        "Input should be greater than or equal to 0",
    );

    // Any presentment currency (Polar 2026); an unknown code is not one of them.
    let r = create(
        &app,
        t,
        &with(fixed(&org, "Euro", 100), json!({"currency": "eur"})),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["amounts"], json!({"eur": 100}));
    let r = create(
        &app,
        t,
        &with(fixed(&org, "Gold", 100), json!({"currency": "xau"})),
    )
    .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "currency"]))["type"],
        "enum"
    );

    for bp in [0, 10_001] {
        let r = create(&app, t, &percentage(&org, "Pct", bp)).await;
        let item = r.expect_invalid_at(json!(["body", "basis_points"]));
        assert!(
            item["type"] == "greater_than_equal" || item["type"] == "less_than_equal",
            "{item}"
        );
    }
    let mut body = percentage(&org, "Pct", 1);
    body.as_object_mut().unwrap().remove("basis_points");
    let r = create(&app, t, &body).await;
    assert_invalid(
        &r,
        json!(["body", "basis_points"]),
        "missing",
        "Field required",
    );

    let r = create(
        &app,
        t,
        &with(fixed(&org, "Repeat", 100), json!({"duration": "repeating"})),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "duration_in_months"]),
        "missing",
        "Field required",
    );
    let r = create(
        &app,
        t,
        &with(
            fixed(&org, "Repeat", 100),
            json!({"duration": "repeating", "duration_in_months": 0}),
        ),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "duration_in_months"]),
        "greater_than_equal",
        "Input should be greater than or equal to 1",
    );

    let r = create(
        &app,
        t,
        &with(fixed(&org, "Code", 100), json!({"code": "ab"})),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "code"]),
        "value_error",
        "Value error, Code must be between 3 and 256 characters long.",
    );
    let r = create(
        &app,
        t,
        &with(fixed(&org, "Code", 100), json!({"code": "SUMMER-24"})),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "code"]),
        "value_error",
        "Value error, Code must contain only alphanumeric characters.",
    );
    let r = create(
        &app,
        t,
        &with(fixed(&org, "Code", 100), json!({"code": "a".repeat(257)})),
    )
    .await;
    r.expect_invalid_at(json!(["body", "code"]));

    let r = create(
        &app,
        t,
        &with(fixed(&org, "Limit", 100), json!({"max_redemptions": 0})),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "max_redemptions"]),
        "greater_than_equal",
        "Input should be greater than or equal to 1",
    );

    let now = Utc::now();
    for (starts, ends) in [(now, now), (now + Duration::days(1), now)] {
        let r = create(
            &app,
            t,
            &with(
                fixed(&org, "Dates", 100),
                json!({"starts_at": starts.to_rfc3339(), "ends_at": ends.to_rfc3339()}),
            ),
        )
        .await;
        assert_invalid(
            &r,
            json!(["body"]),
            "value_error",
            "Value error, starts_at must be before ends_at",
        );
    }
    let r = create(
        &app,
        t,
        &with(
            fixed(&org, "Dates", 100),
            json!({"starts_at": "not a date"}),
        ),
    )
    .await;
    r.expect_invalid_at(json!(["body", "starts_at"]));

    let r = create(
        &app,
        t,
        &with(fixed(&org, "Type", 100), json!({"type": "bogus"})),
    )
    .await;
    assert_eq!(r.expect_invalid_at(json!(["body", "type"]))["type"], "enum");
    let r = create(
        &app,
        t,
        &with(fixed(&org, "Duration", 100), json!({"duration": "weekly"})),
    )
    .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "duration"]))["type"],
        "enum"
    );

    let r = create(
        &app,
        t,
        &with(
            fixed(&org, "Meta", 100),
            json!({"metadata": {"k".repeat(41): "v"}}),
        ),
    )
    .await;
    assert_eq!(r.expect_validation()[0]["type"], "string_too_long");

    // Several field errors come back together.
    let r = create(
        &app,
        t,
        &with(
            fixed(&org, "", -5),
            json!({"code": "x", "max_redemptions": 0}),
        ),
    )
    .await;
    assert_eq!(r.expect_validation().len(), 4, "{}", r.body);

    // Nothing else was created than the discount in euros.
    assert_eq!(list(&app, t, "").await.total_count(), 1);
}

#[actix_web::test]
async fn create_resolves_the_organization() {
    let app = spawn_app().await;
    let org = admin_org(&app, "mine").await;
    let mut body = fixed(&org, "No org", 100);
    body.as_object_mut().unwrap().remove("organization_id");
    let r = create(&app, &app.token, &body).await;
    assert_invalid(
        &r,
        json!(["body", "organization_id"]),
        "missing",
        "organization_id is required.",
    );

    let r = create(&app, &app.token, &fixed(UNKNOWN_ID, "Unknown org", 100)).await;
    assert_invalid(
        &r,
        json!(["body", "organization_id"]),
        "value_error",
        "Organization not found.",
    );

    // A user who is not a member of the organization cannot create there.
    let (_, token) = app
        .new_user_with_scopes("outsider@example.com", &[Scope::DiscountsWrite])
        .await;
    let r = create(&app, &token, &fixed(&org, "Intruder", 100)).await;
    assert_invalid(
        &r,
        json!(["body", "organization_id"]),
        "value_error",
        "Organization not found.",
    );
}

// ---------------------------------------------------------------------------------------
// Codes
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn codes_are_unique_per_organization_case_insensitively() {
    let app = spawn_app().await;
    let org = admin_org(&app, "codes").await;
    let other = admin_org(&app, "codes-two").await;
    let first = created(
        &app,
        with(fixed(&org, "First", 100), json!({"code": "Summer24"})),
    )
    .await;

    for code in ["Summer24", "SUMMER24", "summer24"] {
        let r = create(
            &app,
            &app.token,
            &with(fixed(&org, "Again", 100), json!({"code": code})),
        )
        .await;
        let item = assert_invalid(
            &r,
            json!(["body", "code"]),
            "value_error",
            "Discount with this code already exists.",
        );
        assert_eq!(item["input"], code);
    }
    // Another organization may use the same code.
    created(
        &app,
        with(fixed(&other, "Elsewhere", 100), json!({"code": "SUMMER24"})),
    )
    .await;

    // The lookup other modules use is case-insensitive and per organization.
    let org_id = OrganizationId(uuid::Uuid::parse_str(&org).unwrap());
    let found = discount_by_code(&app.state.store, org_id, "sUmMeR24")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.value.id.to_string(), first["id"].as_str().unwrap());
    assert!(discount_by_code(&app.state.store, org_id, "WINTER")
        .await
        .unwrap()
        .is_none());

    // Updating another discount to a taken code fails; keeping one's own code (in another
    // case) is fine.
    let second = created(
        &app,
        with(fixed(&org, "Second", 100), json!({"code": "Autumn"})),
    )
    .await;
    let second_id = second["id"].as_str().unwrap();
    let r = app
        .patch_json(
            &path(second_id),
            Some(&app.token),
            &json!({"code": "summer24"}),
        )
        .await;
    assert_invalid(
        &r,
        json!(["body", "code"]),
        "value_error",
        "Discount with this code already exists.",
    );
    let r = app
        .patch_json(
            &path(second_id),
            Some(&app.token),
            &json!({"code": "AUTUMN"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["code"], "AUTUMN");

    // A deleted discount frees its code.
    delete(&app, Some(&app.token), first["id"].as_str().unwrap())
        .await
        .expect(204);
    assert!(discount_by_code(&app.state.store, org_id, "summer24")
        .await
        .unwrap()
        .is_none());
    created(
        &app,
        with(fixed(&org, "Reborn", 100), json!({"code": "summer24"})),
    )
    .await;
}

// ---------------------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn restricts_to_products_of_the_organization() {
    let app = spawn_app().await;
    let org = admin_org(&app, "catalog").await;
    let other = admin_org(&app, "catalog-two").await;
    let a = create_product(&app, &org, "Alpha").await;
    let b = create_product(&app, &org, "Beta").await;
    let foreign = create_product(&app, &other, "Foreign").await;

    let d = created(
        &app,
        with(
            fixed(&org, "Restricted", 100),
            json!({"products": [a, b, a]}),
        ),
    )
    .await;
    let products = d["products"].as_array().unwrap();
    assert_eq!(products.len(), 2);
    assert_eq!(
        keys(&products[0]),
        set(&[
            "created_at",
            "modified_at",
            "id",
            "name",
            "description",
            "is_recurring",
            "is_archived",
            "organization_id",
            "metadata",
            "recurring_interval",
            "recurring_interval_count",
            "trial_interval",
            "trial_interval_count",
            "meter_interval",
            "meter_interval_count",
            "visibility",
        ])
    );
    assert_eq!(products[0]["id"], a.as_str());
    assert_eq!(products[0]["name"], "Alpha");
    assert_eq!(products[0]["is_recurring"], false);
    assert_eq!(products[0]["is_archived"], false);
    assert_eq!(products[0]["organization_id"], org.as_str());
    assert_eq!(products[1]["id"], b.as_str());

    let r = create(
        &app,
        &app.token,
        &with(
            fixed(&org, "Foreign", 100),
            json!({"products": [a, foreign]}),
        ),
    )
    .await;
    let item = assert_invalid(
        &r,
        json!(["body", "products", 1]),
        "value_error",
        "Product not found.",
    );
    assert_eq!(item["input"], foreign.as_str());
    let r = create(
        &app,
        &app.token,
        &with(
            fixed(&org, "Unknown", 100),
            json!({"products": [UNKNOWN_ID]}),
        ),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "products", 0]),
        "value_error",
        "Product not found.",
    );
    let r = create(
        &app,
        &app.token,
        &with(fixed(&org, "Bad id", 100), json!({"products": ["nope"]})),
    )
    .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "products", 0]))["type"],
        "uuid_parsing"
    );

    // Update replaces the set; an empty list lifts the restriction; null keeps it.
    let id = d["id"].as_str().unwrap();
    let r = app
        .patch_json(&path(id), Some(&app.token), &json!({"products": [b]}))
        .await;
    r.expect(200);
    assert_eq!(r.body["products"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["products"][0]["id"], b.as_str());
    let r = app
        .patch_json(&path(id), Some(&app.token), &json!({"products": null}))
        .await;
    r.expect(200);
    assert_eq!(r.body["products"].as_array().unwrap().len(), 1);
    let r = app
        .patch_json(&path(id), Some(&app.token), &json!({"products": [foreign]}))
        .await;
    r.expect_invalid_at(json!(["body", "products", 0]));
    let r = app
        .patch_json(&path(id), Some(&app.token), &json!({"products": []}))
        .await;
    r.expect(200);
    assert_eq!(r.body["products"], json!([]));

    // The list renders the products too.
    let d2 = created(
        &app,
        with(fixed(&org, "Listed", 100), json!({"products": [a]})),
    )
    .await;
    let r = list(&app, &app.token, &format!("organization_id={org}")).await;
    let listed = r.items().into_iter().find(|x| x["id"] == d2["id"]).unwrap();
    assert_eq!(listed["products"][0]["id"], a.as_str());
}

// ---------------------------------------------------------------------------------------
// Update and delete
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn update_changes_fields_and_keeps_the_rest() {
    let app = spawn_app().await;
    let org = admin_org(&app, "editor").await;
    let d = created(
        &app,
        with(
            fixed(&org, "Old", 100),
            json!({"code": "OLDCODE", "max_redemptions": 5, "metadata": {"a": "b"}}),
        ),
    )
    .await;
    let id = d["id"].as_str().unwrap();
    let ends = Utc::now() + Duration::days(10);

    let r = app
        .patch_json(
            &path(id),
            Some(&app.token),
            &json!({"name": "New", "amount": 250, "ends_at": ends.to_rfc3339(), "metadata": {"c": 1}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["name"], "New");
    assert_eq!(r.body["amount"], 250);
    assert_eq!(r.body["code"], "OLDCODE");
    assert_eq!(r.body["max_redemptions"], 5);
    assert_eq!(r.body["metadata"], json!({"c": 1}));
    assert_utc_timestamp(&r.body["modified_at"]);
    assert_utc_timestamp(&r.body["ends_at"]);
    assert_eq!(r.body["created_at"], d["created_at"]);

    // null clears the nullable fields; `name: null` leaves the name.
    let r = app
        .patch_json(
            &path(id),
            Some(&app.token),
            &json!({"code": null, "max_redemptions": null, "ends_at": null, "name": null}),
        )
        .await;
    r.expect(200);
    assert!(r.body["code"].is_null());
    assert!(r.body["max_redemptions"].is_null());
    assert!(r.body["ends_at"].is_null());
    assert_eq!(r.body["name"], "New");

    // Same type and duration may be repeated; an empty body changes nothing.
    let r = app
        .patch_json(
            &path(id),
            Some(&app.token),
            &json!({"type": "fixed", "duration": "once"}),
        )
        .await;
    r.expect(200);
    let r = app
        .patch_json(&path(id), Some(&app.token), &json!({}))
        .await;
    r.expect(200);
    assert_eq!(r.body["amount"], 250);

    let g = app.get(&path(id), Some(&app.token)).await;
    assert_eq!(g.body["name"], "New");
    assert_eq!(g.body["amount"], 250);
}

#[actix_web::test]
async fn update_validation_and_immutable_fields() {
    let app = spawn_app().await;
    let org = admin_org(&app, "rules").await;
    let d = created(
        &app,
        with(
            percentage(&org, "Pct", 1000),
            json!({"duration": "repeating", "duration_in_months": 3}),
        ),
    )
    .await;
    let id = d["id"].as_str().unwrap();
    let t = Some(app.token.as_str());

    let r = app
        .patch_json(&path(id), t, &json!({"duration": "once"}))
        .await;
    assert_invalid(
        &r,
        json!(["body", "duration"]),
        "value_error",
        "Duration cannot be changed.",
    );
    let r = app
        .patch_json(&path(id), t, &json!({"type": "fixed"}))
        .await;
    assert_invalid(
        &r,
        json!(["body", "type"]),
        "value_error",
        "Type cannot be changed.",
    );
    let r = app.patch_json(&path(id), t, &json!({"name": ""})).await;
    r.expect_invalid_at(json!(["body", "name"]));
    let r = app
        .patch_json(&path(id), t, &json!({"basis_points": 10_001}))
        .await;
    r.expect_invalid_at(json!(["body", "basis_points"]));
    let r = app
        .patch_json(&path(id), t, &json!({"duration_in_months": 0}))
        .await;
    r.expect_invalid_at(json!(["body", "duration_in_months"]));
    let r = app.patch_json(&path(id), t, &json!({"code": "no!"})).await;
    r.expect_invalid_at(json!(["body", "code"]));
    let r = app
        .patch_json(&path(id), t, &json!({"max_redemptions": 0}))
        .await;
    r.expect_invalid_at(json!(["body", "max_redemptions"]));

    // The date rule holds for the resulting dates, not only for those sent together.
    let now = Utc::now();
    app.patch_json(
        &path(id),
        t,
        &json!({"starts_at": (now + Duration::days(5)).to_rfc3339()}),
    )
    .await
    .expect(200);
    let r = app
        .patch_json(&path(id), t, &json!({"ends_at": now.to_rfc3339()}))
        .await;
    assert_invalid(
        &r,
        json!(["body"]),
        "value_error",
        "Value error, starts_at must be before ends_at",
    );

    // Once redeemed, the amount is fixed.
    let r = app
        .patch_json(
            &path(id),
            t,
            &json!({"basis_points": 2000, "duration_in_months": 6}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["basis_points"], 2000);
    assert_eq!(r.body["duration_in_months"], 6);
    edit_discount(&app, id, |d| d.record_redemption()).await;
    let r = app
        .patch_json(&path(id), t, &json!({"basis_points": 3000}))
        .await;
    let item = assert_invalid(
        &r,
        json!(["body", "basis_points"]),
        "value_error",
        "This field cannot be changed because the discount has already been redeemed.",
    );
    assert_eq!(item["input"], 2000);
    // The same value, or other fields, still go through.
    let r = app
        .patch_json(
            &path(id),
            t,
            &json!({"basis_points": 2000, "name": "Renamed"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["redemptions_count"], 1);

    let fixed_d = created(&app, fixed(&org, "Fixed", 100)).await;
    let fid = fixed_d["id"].as_str().unwrap();
    edit_discount(&app, fid, |d| d.record_redemption()).await;
    let r = app.patch_json(&path(fid), t, &json!({"amount": 50})).await;
    assert_invalid(
        &r,
        json!(["body", "amount"]),
        "value_error",
        "This field cannot be changed because the discount has already been redeemed.",
    );
    let r = app
        .patch_json(&path(fid), t, &json!({"currency": "eur"}))
        .await;
    r.expect_invalid_at(json!(["body", "currency"]));

    // Unknown and malformed ids.
    let r = app.patch_json(&path(UNKNOWN_ID), t, &json!({})).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app.patch_json(&path("nope"), t, &json!({})).await;
    assert_eq!(
        r.expect_invalid_at(json!(["path", "id"]))["type"],
        "uuid_parsing"
    );
}

#[actix_web::test]
async fn delete_is_soft_and_hides_the_discount() {
    let app = spawn_app().await;
    let org = admin_org(&app, "deleter").await;
    let d = created(&app, fixed(&org, "Doomed", 100)).await;
    let keep = created(&app, fixed(&org, "Kept", 100)).await;
    let id = d["id"].as_str().unwrap();

    let r = delete(&app, Some(&app.token), id).await;
    r.expect(204);
    assert_eq!(
        app.get(&path(id), Some(&app.token)).await.expect_error(404),
        "ResourceNotFound"
    );
    let r = app
        .patch_json(&path(id), Some(&app.token), &json!({"name": "Back"}))
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    assert_eq!(
        delete(&app, Some(&app.token), id).await.expect_error(404),
        "ResourceNotFound"
    );
    let r = list(&app, &app.token, "").await;
    assert_eq!(r.total_count(), 1);
    assert_eq!(r.items()[0]["id"], keep["id"]);

    // Still stored, marked deleted.
    let stored = app
        .state
        .store
        .get::<Discount>(&DiscountId(uuid::Uuid::parse_str(id).unwrap()).key())
        .await
        .unwrap()
        .unwrap();
    assert!(stored.value.deleted_at.is_some());
    assert!(!stored.value.is_redeemable(Utc::now()));
}

// ---------------------------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn list_filters_sorts_and_paginates() {
    let app = spawn_app().await;
    let org = admin_org(&app, "lister").await;
    let other = admin_org(&app, "lister-two").await;
    let t = &app.token;
    let a = created(
        &app,
        with(fixed(&org, "bravo", 100), json!({"code": "ZED"})),
    )
    .await;
    let b = created(
        &app,
        with(percentage(&org, "Alpha", 100), json!({"code": "alpha1"})),
    )
    .await;
    let c = created(&app, fixed(&org, "charlie", 100)).await;
    created(
        &app,
        with(fixed(&other, "Delta", 100), json!({"code": "ZED"})),
    )
    .await;
    edit_discount(&app, c["id"].as_str().unwrap(), |d| {
        d.record_redemption();
        d.record_redemption();
    })
    .await;
    edit_discount(&app, a["id"].as_str().unwrap(), |d| d.record_redemption()).await;
    let _ = b;

    // Default: newest first, over every organization the caller reaches.
    let r = list(&app, t, "").await;
    r.expect(200);
    assert_eq!(names(&r), vec!["Delta", "charlie", "Alpha", "bravo"]);
    assert_eq!(r.total_count(), 4);
    assert_eq!(r.max_page(), 1);

    let r = list(&app, t, &format!("organization_id={org}")).await;
    assert_eq!(names(&r), vec!["charlie", "Alpha", "bravo"]);
    let r = list(
        &app,
        t,
        &format!("organization_id={org}&organization_id={other}"),
    )
    .await;
    assert_eq!(r.total_count(), 4);

    let q = format!("organization_id={org}");
    let r = list(&app, t, &format!("{q}&sorting=created_at")).await;
    assert_eq!(names(&r), vec!["bravo", "Alpha", "charlie"]);
    let r = list(&app, t, &format!("{q}&sorting=name")).await;
    assert_eq!(names(&r), vec!["Alpha", "bravo", "charlie"]);
    let r = list(&app, t, &format!("{q}&sorting=-name")).await;
    assert_eq!(names(&r), vec!["charlie", "bravo", "Alpha"]);
    // Codes ascending with nulls last; descending with nulls first.
    let r = list(&app, t, &format!("{q}&sorting=code")).await;
    assert_eq!(names(&r), vec!["Alpha", "bravo", "charlie"]);
    let r = list(&app, t, &format!("{q}&sorting=-code")).await;
    assert_eq!(names(&r), vec!["charlie", "bravo", "Alpha"]);
    let r = list(&app, t, &format!("{q}&sorting=-redemptions_count")).await;
    assert_eq!(names(&r), vec!["charlie", "bravo", "Alpha"]);
    let r = list(&app, t, &format!("{q}&sorting=redemptions_count")).await;
    assert_eq!(names(&r), vec!["Alpha", "bravo", "charlie"]);

    // `query` matches the name or the code, case-insensitively.
    let r = list(&app, t, "query=ALPH").await;
    assert_eq!(names(&r), vec!["Alpha"]);
    let r = list(&app, t, "query=zed").await;
    assert_eq!(names(&r), vec!["Delta", "bravo"]);
    assert_eq!(r.total_count(), 2);
    let r = list(&app, t, &format!("{q}&query=zed")).await;
    assert_eq!(names(&r), vec!["bravo"]);
    let r = list(&app, t, "query=nothing").await;
    assert_eq!(r.total_count(), 0);
    assert_eq!(r.max_page(), 0);

    // Pagination.
    let r = list(&app, t, "limit=3&page=1&sorting=name").await;
    assert_eq!(names(&r), vec!["Alpha", "bravo", "charlie"]);
    assert_eq!(r.total_count(), 4);
    assert_eq!(r.max_page(), 2);
    let r = list(&app, t, "limit=3&page=2&sorting=name").await;
    assert_eq!(names(&r), vec!["Delta"]);
    let r = list(&app, t, "limit=3&page=3").await;
    assert!(r.items().is_empty());
    assert_eq!(r.total_count(), 4);
    let r = list(&app, t, "limit=1&page=2&query=zed").await;
    assert_eq!(names(&r), vec!["bravo"]);
    assert_eq!(r.max_page(), 2);

    // Bad parameters.
    let r = list(&app, t, "sorting=amount").await;
    assert_eq!(
        r.expect_invalid_at(json!(["query", "sorting", 0]))["type"],
        "enum"
    );
    let r = list(&app, t, "organization_id=nope").await;
    r.expect_invalid_at(json!(["query", "organization_id"]));
    let r = list(&app, t, "page=0").await;
    r.expect_invalid_at(json!(["query", "page"]));
}

// ---------------------------------------------------------------------------------------
// Authentication, scopes and tenancy
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn requires_a_token_with_discounts_scopes() {
    let app = spawn_app().await;
    let org = admin_org(&app, "scoped").await;
    let d = created(&app, fixed(&org, "Guarded", 100)).await;
    let id = d["id"].as_str().unwrap();
    let body = fixed(&org, "New", 100);

    for r in [
        app.get(DISCOUNTS, None).await,
        app.get(&path(id), None).await,
        app.post_json(DISCOUNTS, None, &body).await,
        app.patch_json(&path(id), None, &json!({"name": "x"})).await,
        delete(&app, None, id).await,
    ] {
        assert_eq!(r.expect_error(401), "Unauthorized", "{}", r.body);
        assert!(r.www_authenticate().contains("Bearer realm=\"polar\""));
    }
    let r = app.get(DISCOUNTS, Some("polar_pat_bogus")).await;
    assert_eq!(r.expect_error(401), "invalid_token");

    let (user, token) = app
        .new_user_with_scopes("noscope@example.com", &[Scope::ProductsWrite])
        .await;
    let r = app.get(DISCOUNTS, Some(&token)).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    assert!(r
        .www_authenticate()
        .contains("scope=\"web_default discounts:read discounts:write\""));
    for r in [
        app.get(&path(id), Some(&token)).await,
        app.post_json(DISCOUNTS, Some(&token), &body).await,
        app.patch_json(&path(id), Some(&token), &json!({"name": "x"}))
            .await,
        delete(&app, Some(&token), id).await,
    ] {
        assert_eq!(r.expect_error(403), "insufficient_scope", "{}", r.body);
    }

    // discounts:read reads but does not write.
    let reader = app.issue_token(user, &[Scope::DiscountsRead]).await;
    list(&app, &reader, "").await.expect(200);
    let r = app.post_json(DISCOUNTS, Some(&reader), &body).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    assert!(r
        .www_authenticate()
        .contains("scope=\"web_default discounts:write\""));
    let r = delete(&app, Some(&reader), id).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");

    // Nothing changed.
    let g = app.get(&path(id), Some(&app.token)).await;
    g.expect(200);
    assert_eq!(g.body["name"], "Guarded");
}

#[actix_web::test]
async fn another_organizations_discounts_are_not_found() {
    let app = spawn_app().await;
    let org = admin_org(&app, "owner").await;
    let d = created(
        &app,
        with(fixed(&org, "Secret", 100), json!({"code": "SECRET"})),
    )
    .await;
    let id = d["id"].as_str().unwrap();

    let (_, token) = app
        .new_user_with_scopes(
            "rival@example.com",
            &[Scope::DiscountsWrite, Scope::OrganizationsWrite],
        )
        .await;
    let rival = app.created_org_as(&token, "Rival", "rival").await;
    let rival = rival["id"].as_str().unwrap().to_string();
    let mine = create(
        &app,
        &token,
        &with(fixed(&rival, "Rival deal", 100), json!({"code": "SECRET"})),
    )
    .await;
    mine.expect(201);

    for r in [
        app.get(&path(id), Some(&token)).await,
        app.patch_json(&path(id), Some(&token), &json!({"name": "Hijacked"}))
            .await,
        delete(&app, Some(&token), id).await,
    ] {
        assert_eq!(r.expect_error(404), "ResourceNotFound", "{}", r.body);
        assert_eq!(r.body["detail"], "Not found");
    }
    let r = list(&app, &token, "").await;
    assert_eq!(names(&r), vec!["Rival deal"]);
    let r = list(&app, &token, &format!("organization_id={org}")).await;
    assert_eq!(r.total_count(), 0);

    let g = app.get(&path(id), Some(&app.token)).await;
    g.expect(200);
    assert_eq!(g.body["name"], "Secret");
    let r = app.get(&path(&mine.id()), Some(&app.token)).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
}

// ---------------------------------------------------------------------------------------
// Concurrency and indexes
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn concurrent_creates_with_one_code_let_exactly_one_through() {
    let app = spawn_app().await;
    let org = admin_org(&app, "racers").await;
    let bodies: Vec<Value> = (0..8)
        .map(|i| {
            let code = if i % 2 == 0 { "RACE2025" } else { "race2025" };
            with(
                fixed(&org, &format!("Racer {i}"), 100),
                json!({"code": code}),
            )
        })
        .collect();
    let replies =
        futures_util::future::join_all(bodies.iter().map(|b| create(&app, &app.token, b))).await;
    let created = replies.iter().filter(|r| r.status.as_u16() == 201).count();
    assert_eq!(created, 1, "{replies:?}");
    for r in replies.iter().filter(|r| r.status.as_u16() != 201) {
        assert_invalid(
            r,
            json!(["body", "code"]),
            "value_error",
            "Discount with this code already exists.",
        );
    }
    assert_eq!(list(&app, &app.token, "").await.total_count(), 1);

    // Concurrent edits of one discount all land.
    let id = replies
        .iter()
        .find(|r| r.status.as_u16() == 201)
        .unwrap()
        .id();
    let target = path(&id);
    let edits = [
        json!({"name": "Renamed"}),
        json!({"amount": 42}),
        json!({"max_redemptions": 9}),
        json!({"metadata": {"k": "v"}}),
    ];
    let replies = futures_util::future::join_all(
        edits
            .iter()
            .map(|b| app.patch_json(&target, Some(&app.token), b)),
    )
    .await;
    for r in &replies {
        r.expect(200);
    }
    let g = app.get(&path(&id), Some(&app.token)).await;
    assert_eq!(g.body["name"], "Renamed");
    assert_eq!(g.body["amount"], 42);
    assert_eq!(g.body["max_redemptions"], 9);
    assert_eq!(g.body["metadata"], json!({"k": "v"}));
}

#[actix_web::test]
async fn indexes_stay_consistent_through_updates_and_deletes() {
    let app = spawn_app().await;
    let org = admin_org(&app, "indexed").await;
    let a = created(&app, with(fixed(&org, "A", 100), json!({"code": "AAA"}))).await;
    let b = created(&app, percentage(&org, "B", 100)).await;
    let a_id = a["id"].as_str().unwrap();
    app.patch_json(
        &path(a_id),
        Some(&app.token),
        &json!({"name": "Z", "code": "BBB"}),
    )
    .await
    .expect(200);
    edit_discount(&app, b["id"].as_str().unwrap(), |d| d.record_redemption()).await;
    delete(&app, Some(&app.token), b["id"].as_str().unwrap())
        .await
        .expect(204);
    let report = app.state.store.verify_indexes::<Discount>().await.unwrap();
    assert!(report.is_clean(), "{report:?}");
    let r = list(&app, &app.token, "sorting=code").await;
    assert_eq!(names(&r), vec!["Z"]);
    // The old code is free, the new one taken.
    created(
        &app,
        with(fixed(&org, "Old code", 100), json!({"code": "aaa"})),
    )
    .await;
    let r = create(
        &app,
        &app.token,
        &with(fixed(&org, "New code", 100), json!({"code": "bbb"})),
    )
    .await;
    r.expect_invalid_at(json!(["body", "code"]));
}
