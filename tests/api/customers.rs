//! `/v1/customers/`: create and render, address and tax-id validation, e-mail uniqueness,
//! update rules, soft delete, list filters, sorting and pagination, scopes and tenancy
//! (reference 1.2, 5, 7, 8; clients.md 4).

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tollgate::auth::Scope;
use tollgate::domain::customer::{customer_by_email, Customer};
use tollgate::domain::ids::{CustomerId, OrganizationId};
use tollgate_storage::{Batch, Expect};

use crate::helpers::{assert_utc_timestamp, spawn_app, Reply, TestApp};

const CUSTOMERS: &str = "/v1/customers/";
const UNKNOWN_ID: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";

const CUSTOMER_KEYS: &[&str] = &[
    "id",
    "created_at",
    "modified_at",
    "metadata",
    "external_id",
    "email",
    "email_verified",
    "type",
    "name",
    "billing_name",
    "billing_address",
    "tax_id",
    "organization_id",
    "deleted_at",
    "first_user_event_at",
    "avatar_url",
];

fn path(id: &str) -> String {
    format!("{CUSTOMERS}{id}")
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

async fn admin_org(app: &TestApp, slug: &str) -> String {
    app.created_org_as(&app.token, "Seller", slug).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn create(app: &TestApp, token: &str, body: &Value) -> Reply {
    app.post_json(CUSTOMERS, Some(token), body).await
}

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
    app.get(&format!("{CUSTOMERS}?{query}"), Some(token)).await
}

fn emails(r: &Reply) -> Vec<String> {
    r.items()
        .iter()
        .map(|c| c["email"].as_str().unwrap().to_string())
        .collect()
}

fn gravatar(email: &str) -> String {
    let hash = Sha256::digest(email.to_lowercase().as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("https://www.gravatar.com/avatar/{hex}?d=blank")
}

async fn edit_customer(app: &TestApp, id: &str, f: impl FnOnce(&mut Customer)) {
    let key = uuid::Uuid::parse_str(id).unwrap().as_bytes().to_vec();
    let stored = app
        .state
        .store
        .get::<Customer>(&key)
        .await
        .unwrap()
        .unwrap();
    let mut c = stored.value;
    f(&mut c);
    let mut batch = Batch::new();
    batch.put(&c, Expect::Rev(stored.rev)).unwrap();
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
async fn creates_a_customer_with_the_full_shape() {
    let app = spawn_app().await;
    let org = admin_org(&app, "shop").await;
    let r = create(
        &app,
        &app.token,
        &json!({"email": "Jane.Doe@Example.COM", "organization_id": org}),
    )
    .await;
    r.expect(201);
    let c = &r.body;
    assert_eq!(keys(c), set(CUSTOMER_KEYS));
    assert_eq!(c["email"], "Jane.Doe@example.com");
    assert_eq!(c["email_verified"], false);
    assert!(c["name"].is_null());
    assert!(c["billing_address"].is_null());
    assert!(c["tax_id"].is_null());
    assert_eq!(c["metadata"], json!({}));
    assert_eq!(c["organization_id"], org.as_str());
    assert_eq!(c["avatar_url"], gravatar("jane.doe@example.com"));
    assert_utc_timestamp(&c["created_at"]);
    assert!(c["modified_at"].is_null());
    // The keys today's SDKs require (polar-sdk 1.0's `CustomerIndividual`, @polar-sh/sdk
    // 0.47's `Customer`).
    assert_eq!(c["type"], "individual");
    assert!(c["external_id"].is_null());
    assert!(c["billing_name"].is_null());
    assert!(c["deleted_at"].is_null());
    assert!(c["first_user_event_at"].is_null());

    let g = app.get(&path(&r.id()), Some(&app.token)).await;
    g.expect(200);
    assert_eq!(g.body, r.body);

    // Everything at once: name, address, a French VAT number (Polar's example) and metadata.
    let c = created(
        &app,
        json!({
            "email": "buyer@example.fr",
            "name": "Buyer SAS",
            "billing_address": {"line1": "1 rue de Rivoli", "line2": "  ", "postal_code": "75001", "city": "Paris", "country": "FR"},
            "tax_id": "FR61954506077",
            "metadata": {"crm": "x1", "tier": 2},
            "organization_id": org,
        }),
    )
    .await;
    assert_eq!(c["name"], "Buyer SAS");
    assert_eq!(
        c["billing_name"], "Buyer SAS",
        "the name, as Polar falls back to it"
    );
    assert_eq!(
        c["billing_address"],
        json!({"line1": "1 rue de Rivoli", "line2": null, "postal_code": "75001", "city": "Paris", "state": null, "country": "FR"})
    );
    assert_eq!(c["tax_id"], json!(["FR61954506077", "eu_vat"]));
    assert_eq!(c["metadata"], json!({"crm": "x1", "tier": 2}));

    // Polar's stored pair form is accepted too, and revalidated.
    let c = created(
        &app,
        json!({"email": "pair@example.fr", "billing_address": {"country": "FR"}, "tax_id": ["FR 61 954 506 077", "eu_vat"], "organization_id": org}),
    )
    .await;
    assert_eq!(c["tax_id"], json!(["FR61954506077", "eu_vat"]));

    // US and CA states are written as subdivisions.
    let c = created(
        &app,
        json!({"email": "qc@example.ca", "billing_address": {"country": "CA", "state": "QC"}, "organization_id": org}),
    )
    .await;
    assert_eq!(c["billing_address"]["state"], "CA-QC");
    let c = created(
        &app,
        json!({"email": "ny@example.com", "billing_address": {"country": "us", "state": "US-NY"}, "tax_id": "12-3456789", "organization_id": org}),
    )
    .await;
    assert_eq!(c["billing_address"]["state"], "US-NY");
    assert_eq!(c["billing_address"]["country"], "US");
    assert_eq!(c["tax_id"], json!(["123456789", "us_ein"]));
}

// ---------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn create_validation_errors_name_their_location() {
    let app = spawn_app().await;
    let org = admin_org(&app, "strict").await;
    let t = &app.token;
    let body = |extra: Value| {
        let mut b = json!({"email": "a@example.com", "organization_id": org});
        for (k, v) in extra.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    };

    let r = create(&app, t, &json!({"organization_id": org})).await;
    assert_invalid(&r, json!(["body", "email"]), "missing", "Field required");
    for bad in ["not-an-email", "a@b", "two words@example.com"] {
        let r = create(&app, t, &body(json!({"email": bad}))).await;
        assert_eq!(
            r.expect_invalid_at(json!(["body", "email"]))["type"],
            "value_error"
        );
    }

    let r = create(
        &app,
        t,
        &body(json!({"billing_address": {"city": "Paris"}})),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "billing_address", "country"]),
        "missing",
        "Field required",
    );
    let r = create(
        &app,
        t,
        &body(json!({"billing_address": {"country": "XX"}})),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "billing_address", "country"]),
        "country_alpha2",
        "Invalid country alpha2 code",
    );
    let r = create(
        &app,
        t,
        &body(json!({"billing_address": {"country": "FR", "city": 5}})),
    )
    .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "billing_address", "city"]))["type"],
        "string_type"
    );
    let r = create(&app, t, &body(json!({"billing_address": "FR"}))).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "billing_address"]))["type"],
        "model_type"
    );
    let r = create(
        &app,
        t,
        &body(json!({"billing_address": {"country": "US", "state": "ZZ"}})),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "billing_address"]),
        "value_error",
        "Value error, Invalid US state",
    );
    let r = create(
        &app,
        t,
        &body(json!({"billing_address": {"country": "CA", "state": "CA-NY"}})),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "billing_address"]),
        "value_error",
        "Value error, Invalid CA subdivision",
    );

    // Tax ids: a country is needed, and the number must fit it (reference 1.2 step 6).
    let r = create(&app, t, &body(json!({"tax_id": "FR61954506077"}))).await;
    let item = assert_invalid(
        &r,
        json!(["body", "billing_address"]),
        "missing",
        "Country is required to validate tax ID.",
    );
    assert!(item["input"].is_null());
    let r = create(
        &app,
        t,
        &body(json!({"tax_id": "123", "billing_address": {"country": "FR"}})),
    )
    .await;
    let item = assert_invalid(
        &r,
        json!(["body", "tax_id"]),
        "value_error",
        "Invalid tax ID.",
    );
    assert_eq!(item["input"], "123");
    let r = create(
        &app,
        t,
        &body(json!({"tax_id": "FR61954506077", "billing_address": {"country": "US"}})),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "tax_id"]),
        "value_error",
        "Invalid tax ID.",
    );
    let r = create(&app, t, &body(json!({"tax_id": ["x", "xx_nope"]}))).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "tax_id", 1]))["type"],
        "enum"
    );
    let r = create(&app, t, &body(json!({"tax_id": 42}))).await;
    r.expect_invalid_at(json!(["body", "tax_id"]));
    // A blank tax id means none.
    let c = created(&app, body(json!({"tax_id": "  "}))).await;
    assert!(c["tax_id"].is_null());

    let r = create(
        &app,
        t,
        &body(json!({"email": "m@example.com", "metadata": {"": 1}})),
    )
    .await;
    assert_eq!(r.expect_validation()[0]["type"], "string_too_short");

    // Organization resolution.
    let r = create(&app, t, &json!({"email": "x@example.com"})).await;
    assert_invalid(
        &r,
        json!(["body", "organization_id"]),
        "missing",
        "organization_id is required.",
    );
    let r = create(
        &app,
        t,
        &json!({"email": "x@example.com", "organization_id": UNKNOWN_ID}),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "organization_id"]),
        "value_error",
        "Organization not found.",
    );

    // Only the blank-tax-id customer was created.
    assert_eq!(list(&app, t, "").await.total_count(), 1);
}

#[actix_web::test]
async fn emails_are_unique_per_organization_case_insensitively() {
    let app = spawn_app().await;
    let org = admin_org(&app, "unique").await;
    let other = admin_org(&app, "unique-two").await;
    let first = created(
        &app,
        json!({"email": "Jane@Example.com", "organization_id": org}),
    )
    .await;

    for email in ["Jane@Example.com", "jane@example.com", "JANE@EXAMPLE.COM"] {
        let r = create(
            &app,
            &app.token,
            &json!({"email": email, "organization_id": org}),
        )
        .await;
        assert_invalid(
            &r,
            json!(["body", "email"]),
            "value_error",
            "A customer with this email address already exists.",
        );
    }
    created(
        &app,
        json!({"email": "jane@example.com", "organization_id": other}),
    )
    .await;

    // The lookup checkouts use is case-insensitive and per organization.
    let org_id = OrganizationId(uuid::Uuid::parse_str(&org).unwrap());
    let found = customer_by_email(&app.state.store, org_id, "JANE@example.COM")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.value.id.to_string(), first["id"].as_str().unwrap());
    assert!(
        customer_by_email(&app.state.store, org_id, "john@example.com")
            .await
            .unwrap()
            .is_none()
    );

    // Updating to another customer's address fails; to one's own in another case works.
    let second = created(
        &app,
        json!({"email": "john@example.com", "organization_id": org}),
    )
    .await;
    let second_id = second["id"].as_str().unwrap();
    let r = app
        .patch_json(
            &path(second_id),
            Some(&app.token),
            &json!({"email": "JANE@example.com"}),
        )
        .await;
    assert_invalid(
        &r,
        json!(["body", "email"]),
        "value_error",
        "A customer with this email address already exists.",
    );
    edit_customer(&app, second_id, |c| c.email_verified = true).await;
    let r = app
        .patch_json(
            &path(second_id),
            Some(&app.token),
            &json!({"email": "John@example.com"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["email"], "John@example.com");
    assert_eq!(r.body["email_verified"], true);
    // A really new address resets the verification.
    let r = app
        .patch_json(
            &path(second_id),
            Some(&app.token),
            &json!({"email": "johnny@example.com"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["email_verified"], false);
    assert_eq!(r.body["avatar_url"], gravatar("johnny@example.com"));
    // The old address is free again.
    created(
        &app,
        json!({"email": "john@example.com", "organization_id": org}),
    )
    .await;

    // A deleted customer frees its address.
    delete(&app, Some(&app.token), first["id"].as_str().unwrap())
        .await
        .expect(204);
    assert!(
        customer_by_email(&app.state.store, org_id, "jane@example.com")
            .await
            .unwrap()
            .is_none()
    );
    let again = created(
        &app,
        json!({"email": "jane@example.com", "organization_id": org}),
    )
    .await;
    assert_ne!(again["id"], first["id"]);
}

// ---------------------------------------------------------------------------------------
// Update and delete
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn update_revalidates_the_tax_id_against_the_country() {
    let app = spawn_app().await;
    let org = admin_org(&app, "taxes").await;
    let c = created(
        &app,
        json!({"email": "vat@example.fr", "name": "Vat", "billing_address": {"country": "FR"}, "tax_id": "FR61954506077", "organization_id": org}),
    )
    .await;
    let id = c["id"].as_str().unwrap();
    let t = Some(app.token.as_str());

    // Another EU country still accepts an EU VAT number.
    let r = app
        .patch_json(
            &path(id),
            t,
            &json!({"billing_address": {"country": "DE", "city": "Berlin"}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["billing_address"]["country"], "DE");
    assert_eq!(r.body["tax_id"], json!(["FR61954506077", "eu_vat"]));

    // Moving to a country where it is invalid is refused, and nothing changes.
    let r = app
        .patch_json(&path(id), t, &json!({"billing_address": {"country": "US"}}))
        .await;
    let item = assert_invalid(
        &r,
        json!(["body", "tax_id"]),
        "value_error",
        "Invalid tax ID.",
    );
    assert_eq!(item["input"], "FR61954506077");
    let r = app
        .patch_json(&path(id), t, &json!({"billing_address": null}))
        .await;
    assert_invalid(
        &r,
        json!(["body", "billing_address"]),
        "missing",
        "Country is required to validate tax ID.",
    );
    let g = app.get(&path(id), t).await;
    assert_eq!(g.body["billing_address"]["country"], "DE");

    // A new tax id is checked against the new or the stored country.
    let r = app
        .patch_json(&path(id), t, &json!({"tax_id": "123"}))
        .await;
    assert_invalid(
        &r,
        json!(["body", "tax_id"]),
        "value_error",
        "Invalid tax ID.",
    );
    let r = app
        .patch_json(
            &path(id),
            t,
            &json!({"tax_id": "GB980780684", "billing_address": {"country": "GB"}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["tax_id"], json!(["980780684", "gb_vat"]));

    // Country and tax id change together; null clears the tax id, then the address.
    let r = app
        .patch_json(
            &path(id),
            t,
            &json!({"tax_id": "DE136695976", "billing_address": {"country": "DE"}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["tax_id"], json!(["DE136695976", "eu_vat"]));
    let r = app.patch_json(&path(id), t, &json!({"tax_id": null})).await;
    r.expect(200);
    assert!(r.body["tax_id"].is_null());
    let r = app
        .patch_json(
            &path(id),
            t,
            &json!({"billing_address": null, "name": null}),
        )
        .await;
    r.expect(200);
    assert!(r.body["billing_address"].is_null());
    assert!(r.body["name"].is_null());
    let r = app
        .patch_json(&path(id), t, &json!({"tax_id": "DE136695976"}))
        .await;
    assert_invalid(
        &r,
        json!(["body", "billing_address"]),
        "missing",
        "Country is required to validate tax ID.",
    );
}

#[actix_web::test]
async fn update_changes_fields_and_keeps_the_rest() {
    let app = spawn_app().await;
    let org = admin_org(&app, "edits").await;
    let c = created(
        &app,
        json!({"email": "edit@example.com", "name": "Old", "metadata": {"a": "b"}, "organization_id": org}),
    )
    .await;
    let id = c["id"].as_str().unwrap();
    let t = Some(app.token.as_str());

    let r = app
        .patch_json(
            &path(id),
            t,
            &json!({"name": "New", "metadata": {"c": true}}),
        )
        .await;
    r.expect(200);
    assert_eq!(keys(&r.body), set(CUSTOMER_KEYS));
    assert_eq!(r.body["name"], "New");
    assert_eq!(r.body["email"], "edit@example.com");
    assert_eq!(r.body["metadata"], json!({"c": true}));
    assert_eq!(r.body["created_at"], c["created_at"]);
    assert_utc_timestamp(&r.body["modified_at"]);

    // `email: null` and `metadata: null` leave them; an empty body changes nothing.
    let r = app
        .patch_json(&path(id), t, &json!({"email": null, "metadata": null}))
        .await;
    r.expect(200);
    assert_eq!(r.body["email"], "edit@example.com");
    assert_eq!(r.body["metadata"], json!({"c": true}));
    app.patch_json(&path(id), t, &json!({})).await.expect(200);

    for (body, loc) in [
        (json!({"email": "bad"}), json!(["body", "email"])),
        (
            json!({"billing_address": {"country": "ZZ"}}),
            json!(["body", "billing_address", "country"]),
        ),
        (
            json!({"metadata": {"k": 1.5}}),
            json!(["body", "metadata", "k"]),
        ),
    ] {
        let r = app.patch_json(&path(id), t, &body).await;
        r.expect_invalid_at(loc);
    }
    let g = app.get(&path(id), t).await;
    assert_eq!(g.body["name"], "New");

    let r = app.patch_json(&path(UNKNOWN_ID), t, &json!({})).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app.get(&path("nope"), t).await;
    assert_eq!(
        r.expect_invalid_at(json!(["path", "id"]))["type"],
        "uuid_parsing"
    );
}

#[actix_web::test]
async fn delete_is_soft_and_hides_the_customer() {
    let app = spawn_app().await;
    let org = admin_org(&app, "gone").await;
    let c = created(
        &app,
        json!({"email": "gone@example.com", "organization_id": org}),
    )
    .await;
    let keep = created(
        &app,
        json!({"email": "kept@example.com", "organization_id": org}),
    )
    .await;
    let id = c["id"].as_str().unwrap();

    delete(&app, Some(&app.token), id).await.expect(204);
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

    let stored = app
        .state
        .store
        .get::<Customer>(&CustomerId(uuid::Uuid::parse_str(id).unwrap()).key())
        .await
        .unwrap()
        .unwrap();
    assert!(stored.value.deleted_at.is_some());
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
    created(
        &app,
        json!({"email": "carol@example.com", "name": "Zoe", "organization_id": org}),
    )
    .await;
    created(
        &app,
        json!({"email": "alice@example.com", "organization_id": org}),
    )
    .await;
    created(
        &app,
        json!({"email": "Bob@example.org", "name": "bob builder", "organization_id": org}),
    )
    .await;
    created(
        &app,
        json!({"email": "dave@example.com", "name": "Alice Smith", "organization_id": other}),
    )
    .await;

    let r = list(&app, t, "").await;
    r.expect(200);
    assert_eq!(
        emails(&r),
        vec![
            "dave@example.com",
            "Bob@example.org",
            "alice@example.com",
            "carol@example.com"
        ]
    );
    assert_eq!(r.total_count(), 4);

    let q = format!("organization_id={org}");
    let r = list(&app, t, &q).await;
    assert_eq!(r.total_count(), 3);
    let r = list(&app, t, &format!("{q}&sorting=created_at")).await;
    assert_eq!(
        emails(&r),
        vec!["carol@example.com", "alice@example.com", "Bob@example.org"]
    );
    let r = list(&app, t, &format!("{q}&sorting=email")).await;
    assert_eq!(
        emails(&r),
        vec!["alice@example.com", "Bob@example.org", "carol@example.com"]
    );
    let r = list(&app, t, &format!("{q}&sorting=-email")).await;
    assert_eq!(
        emails(&r),
        vec!["carol@example.com", "Bob@example.org", "alice@example.com"]
    );
    // Names ascending, nulls last.
    let r = list(&app, t, &format!("{q}&sorting=name")).await;
    assert_eq!(
        emails(&r),
        vec!["Bob@example.org", "carol@example.com", "alice@example.com"]
    );

    // `query` matches the e-mail address or the name, case-insensitively.
    let r = list(&app, t, "query=ALICE").await;
    assert_eq!(emails(&r), vec!["dave@example.com", "alice@example.com"]);
    let r = list(&app, t, &format!("{q}&query=alice")).await;
    assert_eq!(emails(&r), vec!["alice@example.com"]);
    let r = list(&app, t, "query=example.org").await;
    assert_eq!(emails(&r), vec!["Bob@example.org"]);
    let r = list(&app, t, "query=BUILDER").await;
    assert_eq!(r.total_count(), 1);

    let r = list(&app, t, "limit=3&sorting=email").await;
    assert_eq!(r.max_page(), 2);
    assert_eq!(r.items().len(), 3);
    let r = list(&app, t, "limit=3&page=2&sorting=email").await;
    assert_eq!(emails(&r), vec!["dave@example.com"]);
    let r = list(&app, t, "limit=2&page=2&query=example.com").await;
    assert_eq!(emails(&r), vec!["carol@example.com"]);
    assert_eq!(r.total_count(), 3);

    let r = list(&app, t, "sorting=-bogus").await;
    assert_eq!(
        r.expect_invalid_at(json!(["query", "sorting", 0]))["type"],
        "enum"
    );
    let r = list(&app, t, "limit=0").await;
    r.expect_invalid_at(json!(["query", "limit"]));
}

// ---------------------------------------------------------------------------------------
// Authentication, scopes and tenancy
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn requires_a_token_with_customers_scopes() {
    let app = spawn_app().await;
    let org = admin_org(&app, "scoped").await;
    let c = created(
        &app,
        json!({"email": "guarded@example.com", "organization_id": org}),
    )
    .await;
    let id = c["id"].as_str().unwrap();
    let body = json!({"email": "new@example.com", "organization_id": org});

    for r in [
        app.get(CUSTOMERS, None).await,
        app.get(&path(id), None).await,
        app.post_json(CUSTOMERS, None, &body).await,
        app.patch_json(&path(id), None, &json!({"name": "x"})).await,
        delete(&app, None, id).await,
    ] {
        assert_eq!(r.expect_error(401), "Unauthorized", "{}", r.body);
        assert!(r.www_authenticate().contains("Bearer realm=\"polar\""));
    }

    let (user, token) = app
        .new_user_with_scopes("noscope@example.com", &[Scope::DiscountsWrite])
        .await;
    let r = app.get(CUSTOMERS, Some(&token)).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    assert!(r
        .www_authenticate()
        .contains("scope=\"web_default customers:read customers:write\""));
    for r in [
        app.get(&path(id), Some(&token)).await,
        app.post_json(CUSTOMERS, Some(&token), &body).await,
        app.patch_json(&path(id), Some(&token), &json!({"name": "x"}))
            .await,
        delete(&app, Some(&token), id).await,
    ] {
        assert_eq!(r.expect_error(403), "insufficient_scope", "{}", r.body);
    }

    let reader = app.issue_token(user, &[Scope::CustomersRead]).await;
    list(&app, &reader, "").await.expect(200);
    let r = app.post_json(CUSTOMERS, Some(&reader), &body).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    assert!(r
        .www_authenticate()
        .contains("scope=\"web_default customers:write\""));

    let g = app.get(&path(id), Some(&app.token)).await;
    g.expect(200);
    assert!(g.body["name"].is_null());
    assert_eq!(list(&app, &app.token, "").await.total_count(), 1);
}

#[actix_web::test]
async fn another_organizations_customers_are_not_found() {
    let app = spawn_app().await;
    let org = admin_org(&app, "owner").await;
    let c = created(
        &app,
        json!({"email": "vip@example.com", "organization_id": org}),
    )
    .await;
    let id = c["id"].as_str().unwrap();

    let (_, token) = app
        .new_user_with_scopes(
            "rival@example.com",
            &[Scope::CustomersWrite, Scope::OrganizationsWrite],
        )
        .await;
    let rival = app.created_org_as(&token, "Rival", "rival").await;
    let rival = rival["id"].as_str().unwrap().to_string();
    // The same address is free in another organization.
    let mine = create(
        &app,
        &token,
        &json!({"email": "vip@example.com", "organization_id": rival}),
    )
    .await;
    mine.expect(201);
    // Creating in the owner's organization is refused.
    let r = create(
        &app,
        &token,
        &json!({"email": "spy@example.com", "organization_id": org}),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "organization_id"]),
        "value_error",
        "Organization not found.",
    );

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
    assert_eq!(r.total_count(), 1);
    assert_eq!(r.items()[0]["organization_id"], rival.as_str());
    let r = list(&app, &token, &format!("organization_id={org}")).await;
    assert_eq!(r.total_count(), 0);

    let g = app.get(&path(id), Some(&app.token)).await;
    g.expect(200);
    assert!(g.body["name"].is_null());
    let r = app.get(&path(&mine.id()), Some(&app.token)).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
}

// ---------------------------------------------------------------------------------------
// Concurrency and indexes
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn concurrent_creates_with_one_email_let_exactly_one_through() {
    let app = spawn_app().await;
    let org = admin_org(&app, "racers").await;
    let bodies: Vec<Value> = (0..8)
        .map(|i| {
            let email = if i % 2 == 0 {
                "race@example.com"
            } else {
                "RACE@example.com"
            };
            json!({"email": email, "organization_id": org})
        })
        .collect();
    let replies =
        futures_util::future::join_all(bodies.iter().map(|b| create(&app, &app.token, b))).await;
    let created = replies.iter().filter(|r| r.status.as_u16() == 201).count();
    assert_eq!(created, 1, "{replies:?}");
    for r in replies.iter().filter(|r| r.status.as_u16() != 201) {
        assert_invalid(
            r,
            json!(["body", "email"]),
            "value_error",
            "A customer with this email address already exists.",
        );
    }
    assert_eq!(list(&app, &app.token, "").await.total_count(), 1);
}

#[actix_web::test]
async fn indexes_stay_consistent_through_updates_and_deletes() {
    let app = spawn_app().await;
    let org = admin_org(&app, "indexed").await;
    let a = created(
        &app,
        json!({"email": "a@example.com", "organization_id": org}),
    )
    .await;
    let b = created(
        &app,
        json!({"email": "b@example.com", "name": "B", "organization_id": org}),
    )
    .await;
    let a_id = a["id"].as_str().unwrap();
    app.patch_json(
        &path(a_id),
        Some(&app.token),
        &json!({"email": "z@example.com", "name": "Zed"}),
    )
    .await
    .expect(200);
    delete(&app, Some(&app.token), b["id"].as_str().unwrap())
        .await
        .expect(204);
    let report = app.state.store.verify_indexes::<Customer>().await.unwrap();
    assert!(report.is_clean(), "{report:?}");
    let r = list(&app, &app.token, "sorting=email").await;
    assert_eq!(emails(&r), vec!["z@example.com"]);
    created(
        &app,
        json!({"email": "A@example.com", "organization_id": org}),
    )
    .await;
    let r = create(
        &app,
        &app.token,
        &json!({"email": "Z@EXAMPLE.com", "organization_id": org}),
    )
    .await;
    r.expect_invalid_at(json!(["body", "email"]));
}
