//! `/v1/meters/`: create, read, list, update, freeze and archive, and the quantities over
//! hours, days and months, in a time zone, per customer and per aggregation
//! (`polar-2026.md` §7.3).

use serde_json::{json, Value};

use crate::events::{customer, ingested, org_token, seller};
use crate::helpers::{Reply, TestApp};

const METERS: &str = "/v1/meters/";

async fn create(app: &TestApp, token: &str, body: Value) -> Reply {
    app.post_json(METERS, Some(token), &body).await
}

/// Creates a meter of `org` counting the events named `name` with `aggregation`; its id.
async fn meter(app: &TestApp, token: &str, org: &str, name: &str, aggregation: Value) -> String {
    let r = create(
        app,
        token,
        json!({
            "name": format!("Meter {name} {}", aggregation["func"].as_str().unwrap_or("")),
            "organization_id": org,
            "filter": {"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": name}]},
            "aggregation": aggregation,
        }),
    )
    .await;
    r.expect(201);
    r.id()
}

async fn quantities(app: &TestApp, token: &str, id: &str, query: &str) -> Reply {
    app.get(&format!("{METERS}{id}/quantities?{query}"), Some(token))
        .await
}

fn values(r: &Reply) -> Vec<f64> {
    r.body["quantities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["quantity"].as_f64().unwrap())
        .collect()
}

#[actix_web::test]
async fn meters_crud_freeze_and_archive() {
    let app = crate::helpers::spawn_app().await;
    let (token, org) = seller(&app, "m1@example.com", "m-one").await;
    let r = create(
        &app,
        &token,
        json!({
            "name": "API calls",
            "organization_id": org,
            "filter": {"conjunction": "and", "clauses": [
                {"property": "name", "operator": "eq", "value": "api_call"},
                {"conjunction": "or", "clauses": [{"property": "metadata.endpoint", "operator": "like", "value": "/v1/"}]}
            ]},
            "aggregation": {"func": "sum", "property": "metadata.tokens"},
            "metadata": {"team": "core"},
        }),
    )
    .await;
    r.expect(201);
    let id = r.id();
    assert_eq!(r.body["unit"], "scalar");
    assert_eq!(
        r.body["filter"]["clauses"][1]["clauses"][0]["property"],
        "endpoint"
    );
    assert_eq!(
        r.body["aggregation"],
        json!({"func": "sum", "property": "tokens"})
    );
    assert_eq!(r.body["archived_at"], Value::Null);
    assert_eq!(r.body["custom_label"], Value::Null);
    assert_eq!(r.body["metadata"], json!({"team": "core"}));
    let got = app.get(&format!("{METERS}{id}"), Some(&token)).await;
    got.expect(200);
    assert_eq!(got.body, r.body);

    // 422s of the body.
    let r = create(
        &app,
        &token,
        json!({"name": "ab", "organization_id": org, "unit": "custom",
        "filter": {"conjunction": "and", "clauses": []}, "aggregation": {"func": "median"}}),
    )
    .await;
    r.expect_invalid_at(json!(["body", "name"]));
    r.expect_invalid_at(json!(["body", "aggregation"]));
    let r = create(
        &app,
        &token,
        json!({"name": "abc", "organization_id": org,
        "filter": {"conjunction": "and", "clauses": []}, "aggregation": {"func": "sum"}}),
    )
    .await;
    r.expect_invalid_at(json!(["body", "aggregation", "sum", "property"]));

    // List: query, sorting, archived.
    let second = meter(&app, &token, &org, "login", json!({"func": "count"})).await;
    let r = app
        .get(&format!("{METERS}?sorting=-name"), Some(&token))
        .await;
    r.expect(200);
    assert_eq!(r.total_count(), 2);
    assert_eq!(r.items()[0]["id"], json!(second));
    let r = app.get(&format!("{METERS}?query=api"), Some(&token)).await;
    assert_eq!(r.total_count(), 1);
    let r = app
        .get(&format!("{METERS}?metadata%5Bteam%5D=core"), Some(&token))
        .await;
    assert_eq!(r.total_count(), 1);

    // Not aggregating yet: the filter may change.
    let r = app
        .patch_json(&format!("{METERS}{second}"), Some(&token), &json!({"name": "Logins",
            "filter": {"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": "login"}]}}))
        .await;
    r.expect(200);
    assert_eq!(r.body["name"], "Logins");
    assert!(r.body["modified_at"].is_string());
    // Once it counted an event, filter and aggregation are frozen.
    ingested(
        &app,
        &token,
        &org,
        vec![json!({"name": "login", "external_customer_id": "u"})],
        (1, 0),
    )
    .await;
    let r = app
        .patch_json(
            &format!("{METERS}{second}"),
            Some(&token),
            &json!({"aggregation": {"func": "count"}}),
        )
        .await;
    let e = r.expect_invalid_at(json!(["body", "aggregation"]));
    assert_eq!(e["type"], "forbidden");
    assert_eq!(
        e["msg"],
        "This field can't be updated because the meter is already aggregating events."
    );
    // Archive: hidden from `is_archived=false`, counts no new event; unarchive.
    let r = app
        .patch_json(
            &format!("{METERS}{second}"),
            Some(&token),
            &json!({"is_archived": true}),
        )
        .await;
    r.expect(200);
    assert!(r.body["archived_at"].is_string());
    let r = app
        .get(&format!("{METERS}?is_archived=false"), Some(&token))
        .await;
    assert_eq!(r.total_count(), 1);
    ingested(
        &app,
        &token,
        &org,
        vec![json!({"name": "login", "external_customer_id": "u"})],
        (1, 0),
    )
    .await;
    let q = quantities(
        &app,
        &token,
        &second,
        "start_timestamp=2026-01-01T00:00:00Z&end_timestamp=2026-12-31T00:00:00Z&interval=year",
    )
    .await;
    q.expect(200);
    assert_eq!(q.body["total"], 1.0);
    let r = app
        .patch_json(
            &format!("{METERS}{second}"),
            Some(&token),
            &json!({"is_archived": false}),
        )
        .await;
    assert_eq!(r.body["archived_at"], Value::Null);

    // Tenancy and scopes.
    let (other, other_org) = seller(&app, "m2@example.com", "m-two").await;
    app.get(&format!("{METERS}{id}"), Some(&other))
        .await
        .expect_error(404);
    assert_eq!(app.get(METERS, Some(&other)).await.total_count(), 0);
    let reader = org_token(&app, &other, &other_org, &["meters:read"]).await;
    create(&app, &reader, json!({"name": "abc"}))
        .await
        .expect_error(403);
    app.get(&format!("{METERS}{id}/quantities?start_timestamp=2025-01-01T00:00:00Z&end_timestamp=2025-01-02T00:00:00Z&interval=day"), Some(&reader))
        .await
        .expect_error(404);
}

#[actix_web::test]
async fn quantities_by_interval_zone_customer_and_aggregation() {
    let app = crate::helpers::spawn_app().await;
    let (token, org) = seller(&app, "m3@example.com", "m-three").await;
    let jane = customer(&app, &token, &org, "jane@example.com", "usr_jane").await;
    let mut ids = Vec::new();
    for aggregation in [
        json!({"func": "count"}),
        json!({"func": "sum", "property": "tokens"}),
        json!({"func": "max", "property": "tokens"}),
        json!({"func": "min", "property": "tokens"}),
        json!({"func": "avg", "property": "tokens"}),
        json!({"func": "unique", "property": "model"}),
    ] {
        ids.push(meter(&app, &token, &org, "call", aggregation).await);
    }
    let [count, sum, max, min, avg, unique]: [_; 6] = ids.try_into().unwrap();
    let call = |ts: &str, tokens: i64, model: &str, who: Value| {
        let mut e = json!({"name": "call", "timestamp": ts, "metadata": {"tokens": tokens, "model": model}});
        for (k, v) in who.as_object().unwrap() {
            e[k] = v.clone();
        }
        e
    };
    ingested(
        &app,
        &token,
        &org,
        vec![
            // Aug 1 (UTC): jane by id, then by external id; then bob.
            call("2025-08-01T10:05:00Z", 10, "a", json!({"customer_id": jane})),
            call("2025-08-01T10:50:00Z", 30, "b", json!({"external_customer_id": "usr_jane"})),
            call("2025-08-01T22:30:00Z", 5, "a", json!({"external_customer_id": "bob"})),
            // Aug 3.
            call("2025-08-03T00:10:00Z", 100, "c", json!({"external_customer_id": "bob"})),
            // Not counted: another name.
            json!({"name": "other", "external_customer_id": "bob", "timestamp": "2025-08-01T10:00:00Z", "metadata": {"tokens": 1000}}),
        ],
        (5, 0),
    )
    .await;
    let days =
        "start_timestamp=2025-08-01T12:00:00Z&end_timestamp=2025-08-03T12:00:00Z&interval=day";
    let r = quantities(&app, &token, &count, days).await;
    r.expect(200);
    assert_eq!(values(&r), vec![3.0, 0.0, 1.0]);
    assert_eq!(r.body["total"], 4.0);
    // The points are the series' (not truncated).
    assert_eq!(r.body["quantities"][0]["timestamp"], "2025-08-01T12:00:00Z");
    let r = quantities(&app, &token, &sum, days).await;
    assert_eq!(values(&r), vec![45.0, 0.0, 100.0]);
    assert_eq!(r.body["total"], 145.0);
    let r = quantities(&app, &token, &max, days).await;
    assert_eq!(values(&r), vec![30.0, 0.0, 100.0]);
    assert_eq!(r.body["total"], 100.0);
    let r = quantities(&app, &token, &min, days).await;
    assert_eq!(r.body["total"], 5.0);
    let r = quantities(&app, &token, &avg, days).await;
    assert_eq!(values(&r), vec![15.0, 0.0, 100.0]);
    assert_eq!(r.body["total"], 145.0 / 4.0);
    let r = quantities(&app, &token, &unique, days).await;
    assert_eq!(values(&r), vec![2.0, 0.0, 1.0]);
    assert_eq!(r.body["total"], 3.0);

    // Hours; in Kolkata (+05:30) the 22:30 UTC event is on Aug 2.
    let r = quantities(
        &app,
        &token,
        &count,
        "start_timestamp=2025-08-01T10:00:00Z&end_timestamp=2025-08-01T12:00:00Z&interval=hour",
    )
    .await;
    assert_eq!(values(&r), vec![2.0, 0.0, 0.0]);
    let r = quantities(&app, &token, &count, "start_timestamp=2025-08-01T00:00:00Z&end_timestamp=2025-08-03T00:00:00Z&interval=day&timezone=Asia/Kolkata").await;
    assert_eq!(values(&r), vec![2.0, 1.0, 1.0]);
    let r = quantities(
        &app,
        &token,
        &count,
        "start_timestamp=2025-07-15T00:00:00Z&end_timestamp=2025-08-15T00:00:00Z&interval=month",
    )
    .await;
    assert_eq!(values(&r), vec![0.0, 4.0]);

    // A customer's events, by id or external id (merged).
    for q in [
        format!("customer_id={jane}"),
        "external_customer_id=usr_jane".to_string(),
    ] {
        let r = quantities(&app, &token, &sum, &format!("{days}&{q}")).await;
        assert_eq!(r.body["total"], 40.0, "{q}");
    }
    let r = quantities(
        &app,
        &token,
        &sum,
        &format!("{days}&external_customer_id=bob"),
    )
    .await;
    assert_eq!(values(&r), vec![5.0, 0.0, 100.0]);
    // Per customer, then across customers: jane 40 and bob 5 on Aug 1.
    let r = quantities(
        &app,
        &token,
        &sum,
        &format!("{days}&customer_aggregation_function=max"),
    )
    .await;
    assert_eq!(values(&r), vec![40.0, 0.0, 100.0]);
    let r = quantities(
        &app,
        &token,
        &sum,
        &format!("{days}&customer_aggregation_function=count"),
    )
    .await;
    assert_eq!(values(&r), vec![2.0, 0.0, 1.0]);
    let r = quantities(&app, &token, &sum, &format!("{days}&metadata%5Bmodel%5D=a")).await;
    assert_eq!(r.body["total"], 15.0);

    // 422s: range too long, before 2023, naive time, bad zone; 404 first.
    let r = quantities(
        &app,
        &token,
        &count,
        "start_timestamp=2025-08-01T00:00:00Z&end_timestamp=2025-08-10T00:00:00Z&interval=hour",
    )
    .await;
    let e = r.expect_invalid_at(json!(["query"]));
    assert_eq!(e["msg"], "The interval is too small for the given date range. Use a larger interval or reduce the date range.");
    let r = quantities(
        &app,
        &token,
        &count,
        "start_timestamp=2022-08-01T00:00:00Z&end_timestamp=2022-08-02T00:00:00Z&interval=day",
    )
    .await;
    r.expect_invalid_at(json!(["query", "start_timestamp"]));
    let r = quantities(&app, &token, &count, "start_timestamp=2025-08-01T00:00:00&end_timestamp=2025-08-02T00:00:00Z&interval=day&timezone=Mars/Olympus").await;
    r.expect_invalid_at(json!(["query", "start_timestamp"]));
    r.expect_invalid_at(json!(["query", "timezone"]));
    let r = quantities(
        &app,
        &token,
        "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e",
        "interval=nope",
    )
    .await;
    r.expect_error(404);
}
