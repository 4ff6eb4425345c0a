//! Issue 51: a meter counts the events that came before it, exactly once. Events are
//! ingested, then meters created while more events arrive (and earlier ones are sent
//! again): the background backfill counts the earlier ones, ingestion the later ones, and
//! the quantities and the customers' meters hold each event once (`app::usage::backfill`).

use std::time::Duration;

use serde_json::{json, Value};

use crate::events::{customer, ingest, seller};
use crate::helpers::TestApp;

const DAY: &str = "start_timestamp=2026-11-01T00:00:00Z&end_timestamp=2026-11-02T00:00:00Z\
                   &interval=day";

/// Event `i`: a call of `usr_jane` (even) or `usr_bob` (odd) with `tokens` = `i % 5`.
fn call(i: usize) -> Value {
    let who = if i.is_multiple_of(2) {
        "usr_jane"
    } else {
        "usr_bob"
    };
    json!({"name": "call", "external_id": format!("call-{i}"), "external_customer_id": who,
           "timestamp": "2026-11-01T12:00:00Z", "metadata": {"tokens": i % 5}})
}

async fn send(app: &TestApp, token: &str, org: &str, range: std::ops::Range<usize>) -> u64 {
    let r = ingest(app, token, org, range.map(call).collect()).await;
    r.expect(200);
    r.body["inserted"].as_u64().unwrap()
}

async fn meter(app: &TestApp, token: &str, org: &str, name: &str, aggregation: Value) -> String {
    let r = app
        .post_json(
            "/v1/meters/",
            Some(token),
            &json!({"name": name, "organization_id": org, "aggregation": aggregation,
                    "filter": {"conjunction": "and", "clauses": [
                        {"property": "name", "operator": "eq", "value": "call"}]}}),
        )
        .await;
    r.expect(201);
    r.id()
}

async fn total(app: &TestApp, token: &str, meter: &str, query: &str) -> f64 {
    let r = app
        .get(
            &format!("/v1/meters/{meter}/quantities?{DAY}{query}"),
            Some(token),
        )
        .await;
    r.expect(200);
    r.body["total"].as_f64().unwrap()
}

/// Polls until the meter's total is `want` (failing at once if it goes past it).
async fn reaches(app: &TestApp, token: &str, meter: &str, want: f64) {
    let waited = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let got = total(app, token, meter, "").await;
            assert!(got <= want, "counted past {want}: {got}");
            if got == want {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the backfill did not finish");
}

#[actix_web::test]
async fn a_meter_created_after_its_events_counts_them_once() {
    let app = crate::helpers::spawn_app().await;
    let (token, org) = seller(&app, "bf1@example.com", "bf-one").await;
    let jane = customer(&app, &token, &org, "jane@example.com", "usr_jane").await;
    // 1,300 events before any meter (more than one backfill batch).
    assert_eq!(send(&app, &token, &org, 0..1000).await, 1000);
    assert_eq!(send(&app, &token, &org, 1000..1300).await, 300);

    // Meters created while more events arrive and earlier ones are sent again.
    let create = async {
        let calls = meter(&app, &token, &org, "Calls", json!({"func": "count"})).await;
        let tokens = meter(
            &app,
            &token,
            &org,
            "Tokens",
            json!({"func": "sum", "property": "tokens"}),
        )
        .await;
        (calls, tokens)
    };
    let more = async {
        let mut inserted = 0;
        for k in 0..8 {
            inserted += send(&app, &token, &org, 1300 + k * 100..1400 + k * 100).await;
            // Again: duplicates, counted nowhere.
            assert_eq!(send(&app, &token, &org, k * 100..k * 100 + 100).await, 0);
        }
        inserted
    };
    let ((calls, tokens), inserted) = tokio::join!(create, more);
    assert_eq!(inserted, 800);
    const N: usize = 2100;
    reaches(&app, &token, &calls, N as f64).await;
    let sum: usize = (0..N).map(|i| i % 5).sum();
    reaches(&app, &token, &tokens, sum as f64).await;
    let jane_sum: usize = (0..N).step_by(2).map(|i| i % 5).sum();
    assert_eq!(
        total(&app, &token, &tokens, "&external_customer_id=usr_jane").await,
        jane_sum as f64
    );
    // Jane's customer meters: her events, old and new, once each.
    let r = app
        .get(
            &format!("/v1/customer-meters/?customer_id={jane}&sorting=meter_name"),
            Some(&token),
        )
        .await;
    r.expect(200);
    let items = r.items();
    assert_eq!(items.len(), 2, "{}", r.body);
    assert_eq!(items[0]["consumed_units"], json!((N / 2) as f64));
    assert_eq!(items[1]["consumed_units"], json!(jane_sum as f64));
    // The meters now aggregate (their filter is frozen), and count what comes next.
    let m = app.get(&format!("/v1/meters/{calls}"), Some(&token)).await;
    m.expect(200);
    let frozen = app
        .patch_json(
            &format!("/v1/meters/{calls}"),
            Some(&token),
            &json!({"aggregation": {"func": "max", "property": "tokens"}}),
        )
        .await;
    frozen.expect(422);
    assert_eq!(send(&app, &token, &org, N..N + 1).await, 1);
    assert_eq!(total(&app, &token, &calls, "").await, (N + 1) as f64);
}

#[actix_web::test]
async fn a_new_filter_before_the_meter_counted_anything_counts_everything_anew() {
    let app = crate::helpers::spawn_app().await;
    let (token, org) = seller(&app, "bf2@example.com", "bf-two").await;
    assert_eq!(send(&app, &token, &org, 0..600).await, 600);
    // Counting nothing yet (no event is named so).
    let r = app
        .post_json(
            "/v1/meters/",
            Some(&token),
            &json!({"name": "Later", "organization_id": org, "aggregation": {"func": "count"},
                    "filter": {"conjunction": "and", "clauses": [
                        {"property": "name", "operator": "eq", "value": "nothing"}]}}),
        )
        .await;
    r.expect(201);
    let id = r.id();
    let changed = app
        .patch_json(
            &format!("/v1/meters/{id}"),
            Some(&token),
            &json!({"filter": {"conjunction": "and", "clauses": [
                {"property": "name", "operator": "eq", "value": "call"}]}}),
        )
        .await;
    changed.expect(200);
    assert_eq!(send(&app, &token, &org, 600..700).await, 100);
    reaches(&app, &token, &id, 700.0).await;
}
