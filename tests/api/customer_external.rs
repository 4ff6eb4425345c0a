//! Customers' `external_id` (the seller's own id for them): set on create and once on
//! update, never changed, unique per organization among live customers, freed by a
//! delete; `GET|PATCH|DELETE /v1/customers/external/{external_id}`; the list's `email`
//! and `query` filters; the app-layer attach a purchase calls (Polar's
//! `customer/service.py`).

use reqwest::Method;
use serde_json::{json, Value};
use tollgate::app::catalog::customers::{attach_external_id, ExternalIdOutcome};
use tollgate::auth::Scope;
use tollgate::domain::customer::Customer;
use tollgate::domain::ids::CustomerId;

use crate::helpers::{spawn_app, Reply, TestApp};

const CUSTOMERS: &str = "/v1/customers/";

fn external(id: &str) -> String {
    format!("/v1/customers/external/{id}")
}

async fn org_of(app: &TestApp, token: &str, slug: &str) -> String {
    app.created_org_as(token, slug, slug).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn create(app: &TestApp, token: &str, body: Value) -> Reply {
    app.post_json(CUSTOMERS, Some(token), &body).await
}

async fn created(app: &TestApp, body: Value) -> Value {
    let r = create(app, &app.token, body).await;
    r.expect(201);
    r.body
}

async fn delete(app: &TestApp, token: Option<&str>, path: &str) -> Reply {
    app.send(app.request(Method::DELETE, path, token)).await
}

#[track_caller]
fn assert_invalid(r: &Reply, loc: Value, msg: &str) {
    let item = r.expect_invalid_at(loc);
    assert_eq!(item["type"], "value_error", "{item}");
    assert_eq!(item["msg"], msg, "{item}");
}

fn customer_id(v: &Value) -> CustomerId {
    CustomerId(uuid::Uuid::parse_str(v["id"].as_str().unwrap()).unwrap())
}

#[actix_web::test]
async fn external_ids_are_set_on_create_and_unique_in_the_organization() {
    let app = spawn_app().await;
    let org = org_of(&app, &app.token, "ext-shop").await;
    let c = created(
        &app,
        json!({"email": "ada@example.com", "external_id": "usr_1", "organization_id": org}),
    )
    .await;
    assert_eq!(c["external_id"], "usr_1");
    assert_eq!(c["type"], "individual");

    let g = app.get(&external("usr_1"), Some(&app.token)).await;
    g.expect(200);
    assert_eq!(g.body, c);

    // A second customer with it: Polar's 422 at `external_id`.
    let r = create(
        &app,
        &app.token,
        json!({"email": "bob@example.com", "external_id": "usr_1", "organization_id": org}),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "external_id"]),
        "A customer with this external ID already exists.",
    );
    assert_eq!(r.expect_validation().len(), 1);
    // Both the address and the id taken: both errors at once, as Polar lists them.
    let r = create(
        &app,
        &app.token,
        json!({"email": "ADA@example.com", "external_id": "usr_1", "organization_id": org}),
    )
    .await;
    let locs: Vec<Value> = r
        .expect_validation()
        .iter()
        .map(|e| e["loc"].clone())
        .collect();
    assert_eq!(
        locs,
        vec![json!(["body", "email"]), json!(["body", "external_id"])]
    );

    // External ids compare exactly; a blank one is none.
    let other = created(
        &app,
        json!({"email": "cy@example.com", "external_id": "USR_1", "organization_id": org}),
    )
    .await;
    assert_eq!(other["external_id"], "USR_1");
    let blank = created(
        &app,
        json!({"email": "dee@example.com", "external_id": "", "organization_id": org}),
    )
    .await;
    assert!(blank["external_id"].is_null());

    // Unique per organization only.
    let org2 = org_of(&app, &app.token, "ext-shop-2").await;
    let twin = created(
        &app,
        json!({"email": "ada@example.com", "external_id": "usr_1", "organization_id": org2}),
    )
    .await;
    assert_eq!(twin["external_id"], "usr_1");

    // Tollgate has no team customers: a clear 422 rather than a silent individual.
    let r = create(
        &app,
        &app.token,
        json!({"email": "team@example.com", "type": "team", "organization_id": org}),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "type"]),
        "Team customers are not supported.",
    );
    let r = create(
        &app,
        &app.token,
        json!({"email": "ext@example.com", "external_id": 7, "organization_id": org}),
    )
    .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "external_id"]))["type"],
        "string_type"
    );
}

#[actix_web::test]
async fn an_external_id_is_set_once_and_never_changed() {
    let app = spawn_app().await;
    let org = org_of(&app, &app.token, "once").await;
    let c = created(
        &app,
        json!({"email": "ada@example.com", "organization_id": org}),
    )
    .await;
    let path = format!("{CUSTOMERS}{}", c["id"].as_str().unwrap());
    created(
        &app,
        json!({"email": "bob@example.com", "external_id": "taken", "organization_id": org}),
    )
    .await;

    // Null on a customer without one changes nothing; one held by another is refused.
    let r = app
        .patch_json(&path, Some(&app.token), &json!({"external_id": null}))
        .await;
    r.expect(200);
    assert!(r.body["external_id"].is_null());
    let r = app
        .patch_json(&path, Some(&app.token), &json!({"external_id": "taken"}))
        .await;
    assert_invalid(
        &r,
        json!(["body", "external_id"]),
        "A customer with this external ID already exists.",
    );

    // Set once.
    let r = app
        .patch_json(&path, Some(&app.token), &json!({"external_id": "usr_9"}))
        .await;
    r.expect(200);
    assert_eq!(r.body["external_id"], "usr_9");
    // The same value again is no change; another one, or clearing it, is refused.
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"external_id": "usr_9", "name": "Ada"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["name"], "Ada");
    for attempt in [json!("usr_10"), Value::Null] {
        let r = app
            .patch_json(&path, Some(&app.token), &json!({"external_id": attempt}))
            .await;
        assert_invalid(
            &r,
            json!(["body", "external_id"]),
            "Customer external ID cannot be updated.",
        );
    }
    let g = app.get(&external("usr_9"), Some(&app.token)).await;
    g.expect(200);
    assert_eq!(g.body["id"], c["id"]);
    assert_eq!(g.body["name"], "Ada");
}

#[actix_web::test]
async fn by_external_id_one_gets_updates_and_deletes_a_customer() {
    let app = spawn_app().await;
    let org = org_of(&app, &app.token, "by-ext").await;
    let c = created(
        &app,
        json!({"email": "ada@example.com", "external_id": "u/1 é", "organization_id": org}),
    )
    .await;
    // The SDKs percent-encode the path parameter.
    let path = external("u%2F1%20%C3%A9");
    let g = app.get(&path, Some(&app.token)).await;
    g.expect(200);
    assert_eq!(g.body["id"], c["id"]);

    // The body's own `external_id` is not read here (Polar's `CustomerUpdateExternalID`).
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"name": "Ada L.", "external_id": "other"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["name"], "Ada L.");
    assert_eq!(r.body["external_id"], "u/1 é");
    let r = app
        .patch_json(&path, Some(&app.token), &json!({"email": "nope"}))
        .await;
    r.expect_invalid_at(json!(["body", "email"]));

    // Unknown ids are 404; `/external/state` is the customer whose id is `state`.
    for p in [external("nobody"), external("state")] {
        let r = app.get(&p, Some(&app.token)).await;
        assert_eq!(r.expect_error(404), "ResourceNotFound", "{p}");
        let r = app
            .patch_json(&p, Some(&app.token), &json!({"name": "x"}))
            .await;
        assert_eq!(r.expect_error(404), "ResourceNotFound");
        let r = delete(&app, Some(&app.token), &p).await;
        assert_eq!(r.expect_error(404), "ResourceNotFound");
    }

    // Delete frees the id: it is not found any more, and a new customer may take it. The
    // deleted customer keeps showing it (as Polar's `saved_external_id` does).
    delete(&app, Some(&app.token), &path).await.expect(204);
    let r = app.get(&path, Some(&app.token)).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app
        .get(
            &format!("{CUSTOMERS}{}", c["id"].as_str().unwrap()),
            Some(&app.token),
        )
        .await;
    r.expect(404);
    let key = customer_id(&c).key();
    let stored = app
        .state
        .store
        .get::<Customer>(&key)
        .await
        .unwrap()
        .unwrap();
    assert!(stored.value.deleted_at.is_some());
    assert_eq!(stored.value.external_id.as_deref(), Some("u/1 é"));
    let again = created(
        &app,
        json!({"email": "ada2@example.com", "external_id": "u/1 é", "organization_id": org}),
    )
    .await;
    let g = app.get(&path, Some(&app.token)).await;
    assert_eq!(g.body["id"], again["id"]);
}

#[actix_web::test]
async fn external_ids_answer_within_the_callers_organizations_only() {
    let app = spawn_app().await;
    let org = org_of(&app, &app.token, "mine").await;
    created(
        &app,
        json!({"email": "vip@example.com", "external_id": "vip", "organization_id": org}),
    )
    .await;

    let (user, rival) = app
        .new_user_with_scopes(
            "rival@example.com",
            &[Scope::CustomersWrite, Scope::OrganizationsWrite],
        )
        .await;
    let path = external("vip");
    for r in [
        app.get(&path, Some(&rival)).await,
        app.patch_json(&path, Some(&rival), &json!({"name": "Hijacked"}))
            .await,
        delete(&app, Some(&rival), &path).await,
    ] {
        assert_eq!(r.expect_error(404), "ResourceNotFound", "{}", r.body);
    }
    // Its own customer with the same external id is its own.
    let theirs = org_of(&app, &rival, "theirs").await;
    let twin = create(
        &app,
        &rival,
        json!({"email": "vip@example.com", "external_id": "vip", "organization_id": theirs}),
    )
    .await;
    twin.expect(201);
    let g = app.get(&path, Some(&rival)).await;
    assert_eq!(g.body["id"], twin.body["id"]);
    assert_eq!(g.body["organization_id"], theirs.as_str());

    // A user in two organizations holding the id in both: Polar's 409.
    let second = org_of(&app, &app.token, "mine-too").await;
    created(
        &app,
        json!({"email": "vip@example.com", "external_id": "vip", "organization_id": second}),
    )
    .await;
    let r = app.get(&path, Some(&app.token)).await;
    assert_eq!(r.expect_error(409), "AmbiguousExternalCustomerID");
    let r = delete(&app, Some(&app.token), &path).await;
    assert_eq!(r.expect_error(409), "AmbiguousExternalCustomerID");

    // Credentials and scopes as on `/v1/customers/{id}`.
    for r in [
        app.get(&path, None).await,
        app.patch_json(&path, None, &json!({"name": "x"})).await,
        delete(&app, None, &path).await,
    ] {
        assert_eq!(r.expect_error(401), "Unauthorized");
    }
    let reader = app.issue_token(user, &[Scope::CustomersRead]).await;
    app.get(&path, Some(&reader)).await.expect(200);
    let r = app
        .patch_json(&path, Some(&reader), &json!({"name": "x"}))
        .await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    let r = delete(&app, Some(&reader), &path).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    let none = app.issue_token(user, &[Scope::DiscountsRead]).await;
    let r = app.get(&path, Some(&none)).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
}

/// The e-mails of the organization's customers matching `q`, and their total.
async fn listed(app: &TestApp, org: &str, q: String) -> (Vec<String>, u64) {
    let r = app
        .get(
            &format!("{CUSTOMERS}?organization_id={org}&{q}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    let emails = r
        .items()
        .iter()
        .map(|c| c["email"].as_str().unwrap().to_string())
        .collect();
    (emails, r.total_count())
}

#[actix_web::test]
async fn the_list_filters_by_exact_email_and_by_query() {
    let app = spawn_app().await;
    let org = org_of(&app, &app.token, "lists").await;
    for (email, name, ext) in [
        ("Ada@example.com", "Ada", Some("crm-100")),
        ("bob@example.com", "Bob", Some("crm-200")),
        ("ada.b@example.com", "Ada B", None),
    ] {
        created(
            &app,
            json!({"email": email, "name": name, "external_id": ext, "organization_id": org}),
        )
        .await;
    }
    let list = |q: &str| listed(&app, &org, q.to_string());
    // `email` is exact and case-insensitive (it used to be ignored).
    assert_eq!(
        list("email=ada%40example.com").await,
        (vec!["Ada@example.com".to_string()], 1)
    );
    assert_eq!(list("email=ada%40example").await, (vec![], 0));
    // `query`: e-mail or name contains it, or the external id starts with it.
    assert_eq!(
        list("query=CRM-2").await,
        (vec!["bob@example.com".to_string()], 1)
    );
    assert_eq!(list("query=100").await.1, 0, "a prefix, not a substring");
    assert_eq!(list("query=ada&sorting=email").await.1, 2);
    assert_eq!(
        list("query=ada&email=ada.b%40example.com").await,
        (vec!["ada.b@example.com".to_string()], 1)
    );
    // Another organization's customer with the address is not listed.
    let (_, rival) = app
        .new_user_with_scopes(
            "rival@example.com",
            &[Scope::CustomersWrite, Scope::OrganizationsWrite],
        )
        .await;
    let theirs = org_of(&app, &rival, "rivals").await;
    create(
        &app,
        &rival,
        json!({"email": "ada@example.com", "organization_id": theirs}),
    )
    .await
    .expect(201);
    let r = app
        .get(
            &format!("{CUSTOMERS}?email=ada%40example.com"),
            Some(&app.token),
        )
        .await;
    assert_eq!(r.total_count(), 1);
    assert_eq!(r.items()[0]["organization_id"], org.as_str());
}

#[actix_web::test]
async fn a_purchase_attaches_an_external_id_under_polars_rules() {
    let app = spawn_app().await;
    let org = org_of(&app, &app.token, "attach").await;
    let plain = created(
        &app,
        json!({"email": "ada@example.com", "organization_id": org}),
    )
    .await;
    let holder = created(
        &app,
        json!({"email": "bob@example.com", "external_id": "held", "organization_id": org}),
    )
    .await;
    let state = &app.state;
    let id = customer_id(&plain);

    assert_eq!(
        attach_external_id(state, id, "held").await.unwrap(),
        ExternalIdOutcome::HeldByAnother(customer_id(&holder))
    );
    assert_eq!(
        attach_external_id(state, id, "new").await.unwrap(),
        ExternalIdOutcome::Attached
    );
    assert_eq!(
        attach_external_id(state, id, "new").await.unwrap(),
        ExternalIdOutcome::Unchanged
    );
    assert_eq!(
        attach_external_id(state, id, "other").await.unwrap(),
        ExternalIdOutcome::KeptOwn("new".into())
    );
    let g = app.get(&external("new"), Some(&app.token)).await;
    assert_eq!(g.body["id"], plain["id"]);
    assert!(!g.body["modified_at"].is_null());

    let unknown = CustomerId::new();
    assert!(attach_external_id(state, unknown, "x").await.is_err());
}
