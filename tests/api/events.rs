//! `/v1/events/`: ingestion (duplicates, all-or-nothing 422s with Polar's locs), the list's
//! filters and the event's shape, scopes and tenancy (`polar-2026.md` §7.1–7.2).

use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::helpers::{Reply, TestApp};

pub const INGEST: &str = "/v1/events/ingest";
pub const EVENTS: &str = "/v1/events/";

/// Every usage scope, and those to create customers and sessions.
pub const USAGE_SCOPES: &[Scope] = &[
    Scope::OrganizationsWrite,
    Scope::EventsRead,
    Scope::EventsWrite,
    Scope::MetersRead,
    Scope::MetersWrite,
    Scope::CustomerMetersRead,
    Scope::CustomersWrite,
    Scope::CustomerSessionsWrite,
    Scope::OrganizationAccessTokensWrite,
];

/// A user with the usage scopes and an organization of their own: `(token, org id)`.
pub async fn seller(app: &TestApp, email: &str, slug: &str) -> (String, String) {
    let (_, token) = app.new_user_with_scopes(email, USAGE_SCOPES).await;
    let org = app.created_org_as(&token, "Usage Org", slug).await;
    (token, org["id"].as_str().unwrap().to_string())
}

/// A customer of `org` with this external id; its id.
pub async fn customer(
    app: &TestApp,
    token: &str,
    org: &str,
    email: &str,
    external: &str,
) -> String {
    let r = app
        .post_json(
            "/v1/customers/",
            Some(token),
            &json!({"email": email, "organization_id": org, "external_id": external, "name": email}),
        )
        .await;
    r.expect(201);
    r.id()
}

/// Ingests `events` (the organization set on each); the reply.
pub async fn ingest(app: &TestApp, token: &str, org: &str, events: Vec<Value>) -> Reply {
    let events: Vec<Value> = events
        .into_iter()
        .map(|mut e| {
            e["organization_id"] = json!(org);
            e
        })
        .collect();
    app.post_json(INGEST, Some(token), &json!({ "events": events }))
        .await
}

/// Ingests and expects `(inserted, duplicates)`.
pub async fn ingested(
    app: &TestApp,
    token: &str,
    org: &str,
    events: Vec<Value>,
    expect: (u64, u64),
) {
    let r = ingest(app, token, org, events).await;
    r.expect(200);
    assert_eq!(
        r.body,
        json!({"inserted": expect.0, "duplicates": expect.1}),
        "{}",
        r.body
    );
}

#[actix_web::test]
async fn ingest_counts_duplicates_and_reads_back() {
    let app = crate::helpers::spawn_app().await;
    let (token, org) = seller(&app, "ev1@example.com", "ev-one").await;
    let jane = customer(&app, &token, &org, "jane@example.com", "usr_1337").await;
    ingested(
        &app,
        &token,
        &org,
        vec![
            json!({"name": "api_call", "external_customer_id": "usr_1337", "external_id": "evt_1",
                   "timestamp": "2025-08-01T11:59:00Z", "metadata": {"endpoint": "/v1/search", "tokens": 512}}),
            // Repeated in the same request: a duplicate.
            json!({"name": "api_call", "external_customer_id": "usr_1337", "external_id": "evt_1",
                   "timestamp": "2025-08-01T11:59:00Z"}),
            json!({"name": "api_call", "customer_id": jane, "timestamp": "2025-08-01T12:00:00Z",
                   "metadata": {"endpoint": "/v1/embed", "_cost": {"amount": "0.25", "currency": "usd"}}}),
            json!({"name": "login", "external_customer_id": "usr_other", "timestamp": "2025-08-01T12:01:00Z"}),
        ],
        (3, 1),
    )
    .await;
    // Sent again: a duplicate, even alone.
    ingested(
        &app,
        &token,
        &org,
        vec![
            json!({"name": "api_call", "external_customer_id": "usr_1337", "external_id": "evt_1"}),
        ],
        (0, 1),
    )
    .await;
    ingested(&app, &token, &org, vec![], (0, 0)).await;

    // Newest first, total exact, read at once.
    let r = app.get(EVENTS, Some(&token)).await;
    r.expect(200);
    assert_eq!(r.total_count(), 3);
    let items = r.items();
    let names: Vec<&str> = items.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["login", "api_call", "api_call"]);
    let first = &items[2];
    assert_eq!(first["source"], "user");
    assert_eq!(first["label"], "api_call");
    assert_eq!(first["timestamp"], "2025-08-01T11:59:00Z");
    // Ingested by external id: `customer_id` stays null, `customer` is resolved.
    assert_eq!(first["customer_id"], Value::Null);
    assert_eq!(first["external_customer_id"], "usr_1337");
    assert_eq!(first["customer"]["id"], json!(jane));
    assert_eq!(
        first["metadata"],
        json!({"endpoint": "/v1/search", "tokens": 512})
    );
    assert_eq!(first["child_count"], 0);
    assert_eq!(items[1]["customer_id"], json!(jane));
    assert_eq!(
        items[1]["metadata"]["_cost"],
        json!({"amount": "0.25", "currency": "usd"})
    );
    assert_eq!(items[0]["customer"], Value::Null);
    let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
    for k in [
        "id",
        "timestamp",
        "organization_id",
        "customer_id",
        "customer",
        "external_customer_id",
        "member_id",
        "external_member_id",
        "child_count",
        "parent_id",
        "label",
        "name",
        "source",
        "metadata",
    ] {
        assert!(keys.iter().any(|x| *x == k), "{k}");
    }

    // One event by id.
    let id = first["id"].as_str().unwrap();
    let r = app.get(&format!("{EVENTS}{id}"), Some(&token)).await;
    r.expect(200);
    assert_eq!(r.body["name"], "api_call");
    let r = app
        .get(
            &format!("{EVENTS}5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e"),
            Some(&token),
        )
        .await;
    r.expect_error(404);

    // Filters: a customer's id finds its external-id events too, and the other way round.
    for q in [
        format!("customer_id={jane}"),
        "external_customer_id=usr_1337".to_string(),
    ] {
        let r = app.get(&format!("{EVENTS}?{q}"), Some(&token)).await;
        r.expect(200);
        assert_eq!(r.total_count(), 2, "{q}");
    }
    let count = |q: &str| {
        let q = q.to_string();
        let app = &app;
        let token = &token;
        async move {
            let r = app.get(&format!("{EVENTS}?{q}"), Some(token)).await;
            r.expect(200);
            r.total_count()
        }
    };
    assert_eq!(count("name=login").await, 1);
    assert_eq!(count("name=login&name=api_call").await, 3);
    assert_eq!(count("source=system").await, 0);
    assert_eq!(count("source=user").await, 3);
    assert_eq!(count("metadata%5Bendpoint%5D=%2Fv1%2Fembed").await, 1);
    assert_eq!(count("start_timestamp=2025-08-01T12:00:00Z").await, 2);
    assert_eq!(count("end_timestamp=2025-08-01T11:59:30Z").await, 1);
    let filter = json!({"conjunction": "and", "clauses": [{"property": "tokens", "operator": "gt", "value": 100}]});
    let enc: String = url::form_urlencoded::byte_serialize(filter.to_string().as_bytes()).collect();
    assert_eq!(count(&format!("filter={enc}")).await, 1);
    assert_eq!(count(&format!("organization_id={org}&query=logi")).await, 1);

    // Oldest first, pages, cursor pagination.
    let r = app
        .get(
            &format!("{EVENTS}?sorting=timestamp&limit=2&page=2"),
            Some(&token),
        )
        .await;
    r.expect(200);
    assert_eq!(r.items().len(), 1);
    assert_eq!(r.items()[0]["name"], "login");
    assert_eq!(r.max_page(), 2);

    // The list's 422s.
    let r = app.get(&format!("{EVENTS}?query=abc"), Some(&token)).await;
    let e = r.expect_invalid_at(json!(["query", "query"]));
    assert_eq!(
        e["msg"],
        "Query is only supported when organization_id is provided."
    );
    let r = app
        .get(
            &format!("{EVENTS}?organization_id={org}&query=ab"),
            Some(&token),
        )
        .await;
    assert_eq!(
        r.expect_invalid_at(json!(["query", "query"]))["type"],
        "query"
    );
    let r = app
        .get(&format!("{EVENTS}?filter=%7Bnope"), Some(&token))
        .await;
    r.expect_invalid_at(json!(["query", "filter"]));
}

#[actix_web::test]
async fn ingest_validation_is_all_or_nothing() {
    let app = crate::helpers::spawn_app().await;
    let (token, org) = seller(&app, "ev2@example.com", "ev-two").await;
    let r = ingest(
        &app,
        &token,
        &org,
        vec![
            json!({"name": "ok", "external_customer_id": "u"}),
            json!({"name": "bad", "customer_id": "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e"}),
            json!({"name": "m", "customer_id": "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e", "member_id": "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4f"}),
        ],
    )
    .await;
    let e = r.expect_invalid_at(json!(["body", "events", 1, "customer_id"]));
    assert_eq!(e["type"], "customer_id");
    assert_eq!(e["msg"], "Customer not found.");
    let e = r.expect_invalid_at(json!(["body", "events", 2, "member_id"]));
    assert_eq!(e["msg"], "Member not found.");
    // Nothing was inserted.
    let r = app.get(EVENTS, Some(&token)).await;
    assert_eq!(r.total_count(), 0);

    // Shape errors: tagged with both union members.
    let r = ingest(
        &app,
        &token,
        &org,
        vec![
            json!({"name": "x", "external_customer_id": "u", "timestamp": "2999-01-01T00:00:00Z"}),
            json!({"name": "y"}),
        ],
    )
    .await;
    let e = r.expect_invalid_at(json!([
        "body",
        "events",
        0,
        "EventCreateExternalCustomer",
        "timestamp"
    ]));
    assert_eq!(e["msg"], "Value error, Timestamp must be in the past.");
    r.expect_invalid_at(json!([
        "body",
        "events",
        1,
        "EventCreateCustomer",
        "customer_id"
    ]));
    r.expect_invalid_at(json!([
        "body",
        "events",
        1,
        "EventCreateExternalCustomer",
        "external_customer_id"
    ]));

    // A user token must name its organization.
    let r = app
        .post_json(
            INGEST,
            Some(&token),
            &json!({"events": [{"name": "x", "external_customer_id": "u"}]}),
        )
        .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "events", 0, "organization_id"]))["type"],
        "missing"
    );
    // An organization token must not.
    let oat = org_token(&app, &token, &org, &["events:write", "events:read"]).await;
    let r = ingest(
        &app,
        &oat,
        &org,
        vec![json!({"name": "x", "external_customer_id": "u"})],
    )
    .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "events", 0, "organization_id"]))["type"],
        "organization_token"
    );
    let r = app
        .post_json(
            INGEST,
            Some(&oat),
            &json!({"events": [{"name": "x", "external_customer_id": "u"}]}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["inserted"], 1);
    // Too many events.
    let many: Vec<Value> = (0..1001)
        .map(|_| json!({"name": "x", "external_customer_id": "u"}))
        .collect();
    let r = app
        .post_json(INGEST, Some(&oat), &json!({"events": many}))
        .await;
    r.expect_invalid_at(json!(["body", "events"]));
}

/// An organization access token of `org` with these scopes.
pub async fn org_token(app: &TestApp, token: &str, org: &str, scopes: &[&str]) -> String {
    let r = app
        .post_json(
            "/v1/organization-access-tokens/",
            Some(token),
            &json!({"organization_id": org, "comment": "Backend", "scopes": scopes}),
        )
        .await;
    r.expect(201);
    r.body["token"].as_str().unwrap().to_string()
}

#[actix_web::test]
async fn scopes_and_tenancy() {
    let app = crate::helpers::spawn_app().await;
    let (token, org) = seller(&app, "ev3@example.com", "ev-three").await;
    let (other, other_org) = seller(&app, "ev4@example.com", "ev-four").await;
    ingested(
        &app,
        &token,
        &org,
        vec![json!({"name": "a", "external_customer_id": "u"})],
        (1, 0),
    )
    .await;
    let id = app.get(EVENTS, Some(&token)).await.items()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Another organization sees nothing of it.
    let r = app.get(EVENTS, Some(&other)).await;
    assert_eq!(r.total_count(), 0);
    app.get(&format!("{EVENTS}{id}"), Some(&other))
        .await
        .expect_error(404);
    let r = ingest(
        &app,
        &other,
        &org,
        vec![json!({"name": "a", "external_customer_id": "u"})],
    )
    .await;
    r.expect_invalid_at(json!(["body", "events", 0, "organization_id"]));
    // Read-only and unrelated tokens.
    let reader = org_token(&app, &other, &other_org, &["events:read"]).await;
    let r = app
        .post_json(INGEST, Some(&reader), &json!({"events": []}))
        .await;
    r.expect_error(403);
    let unrelated = org_token(&app, &other, &other_org, &["customers:write"]).await;
    app.get(EVENTS, Some(&unrelated)).await.expect_error(403);
    app.get(EVENTS, None).await.expect_error(401);
}
