//! Issue 51, exactly once across nodes: the same 10,000 events (each with an external
//! id) sent twice at once, all of them to node A and all of them to node B, both
//! `tollgate` processes on one PostgreSQL schema: each event is counted once in every
//! meter, in the customers' meters and in the events list, as either node reads them.

use futures_util::future::join_all;
use serde_json::{json, Value};

use crate::nodes::Cluster;

const EVENTS: usize = 10_000;
const BATCH: usize = 100;
const CUSTOMERS: usize = 10;

/// Event `i`: customer `usr_{i % CUSTOMERS}`, `tokens` = `i % 7`.
fn event(org: &str, i: usize) -> Value {
    json!({"name": "api_call", "organization_id": org, "external_id": format!("evt-{i}"),
           "external_customer_id": format!("usr_{}", i % CUSTOMERS),
           "timestamp": "2026-11-01T12:00:00Z", "metadata": {"tokens": i % 7}})
}

#[actix_web::test]
async fn the_same_events_sent_to_two_nodes_at_once_count_once() {
    let Some(mut cluster) = Cluster::new("usage_exactly_once") else {
        return;
    };
    let a = cluster.start("a", &[]).await;
    let b = cluster.start("b", &[]).await;
    let token = cluster.token("a");
    let org = cluster
        .post(
            &a,
            "/v1/organizations/",
            Some(&token),
            &json!({"name": "Usage", "slug": "usage-nodes"}),
        )
        .await;
    org.expect(201);
    let org = org.body["id"].as_str().unwrap().to_string();
    let mut meters = Vec::new();
    for (name, aggregation) in [
        ("Calls", json!({"func": "count"})),
        ("Tokens", json!({"func": "sum", "property": "tokens"})),
    ] {
        let m = cluster
            .post(
                &a,
                "/v1/meters/",
                Some(&token),
                &json!({"name": name, "organization_id": org, "aggregation": aggregation,
                        "filter": {"conjunction": "and", "clauses": [
                            {"property": "name", "operator": "eq", "value": "api_call"}]}}),
            )
            .await;
        m.expect(201);
        meters.push(m.body["id"].as_str().unwrap().to_string());
    }
    // No wait: node B reads the meters at its first ingest (and would again at once if
    // they changed: its cache is checked against the generation, not trusted).

    let batches: Vec<Value> = (0..EVENTS)
        .collect::<Vec<_>>()
        .chunks(BATCH)
        .map(|c| json!({"events": c.iter().map(|i| event(&org, *i)).collect::<Vec<_>>()}))
        .collect();
    // Every batch to both nodes at once, eight batches per node in flight.
    let answers = join_all([&a, &b].into_iter().map(|node| {
        let (cluster, token, batches) = (&cluster, &token, &batches);
        async move {
            let mut sums = (0i64, 0i64);
            for group in batches.chunks(8) {
                let replies = join_all(
                    group
                        .iter()
                        .map(|body| cluster.post(node, "/v1/events/ingest", Some(token), body)),
                )
                .await;
                for r in replies {
                    r.expect(200);
                    sums.0 += r.body["inserted"].as_i64().unwrap();
                    sums.1 += r.body["duplicates"].as_i64().unwrap();
                }
            }
            sums
        }
    }))
    .await;
    let inserted: i64 = answers.iter().map(|s| s.0).sum();
    let duplicates: i64 = answers.iter().map(|s| s.1).sum();
    assert_eq!(
        (inserted, duplicates),
        (EVENTS as i64, EVENTS as i64),
        "{answers:?}"
    );

    let tokens: i64 = (0..EVENTS).map(|i| (i % 7) as i64).sum();
    for node in [&a, &b] {
        let total = |meter: &str| {
            let path = format!(
                "/v1/meters/{meter}/quantities?start_timestamp=2026-11-01T00:00:00Z\
                 &end_timestamp=2026-11-02T00:00:00Z&interval=day"
            );
            let (cluster, token) = (&cluster, &token);
            async move {
                let r = cluster.get(node, &path, token).await;
                r.expect(200);
                r.body["total"].as_f64().unwrap()
            }
        };
        assert_eq!(total(&meters[0]).await, EVENTS as f64);
        assert_eq!(total(&meters[1]).await, tokens as f64);
        let listed = cluster
            .get(
                node,
                &format!("/v1/events/?organization_id={org}&limit=1"),
                &token,
            )
            .await;
        listed.expect(200);
        assert_eq!(listed.body["pagination"]["total_count"], EVENTS);
        // Each customer's meter: its tenth of the calls.
        let r = cluster
            .get(
                node,
                &format!(
                    "/v1/meters/{}/quantities?start_timestamp=2026-11-01T00:00:00Z\
                          &end_timestamp=2026-11-02T00:00:00Z&interval=day\
                          &external_customer_id=usr_3",
                    meters[0]
                ),
                &token,
            )
            .await;
        r.expect(200);
        assert_eq!(r.body["total"].as_f64(), Some((EVENTS / CUSTOMERS) as f64));
    }
}

/// A meter created on node A while node B ingests 10,000 events (after 2,000 before it):
/// each event counted once, by ingestion on B (once B sees the meter's generation) or by
/// the backfill (the events before), as either node reads them.
#[actix_web::test]
async fn a_meter_created_on_one_node_while_another_ingests_counts_each_event_once() {
    let Some(mut cluster) = Cluster::new("usage_backfill") else {
        return;
    };
    let a = cluster.start("a", &[]).await;
    let b = cluster.start("b", &[]).await;
    let token = cluster.token("a");
    let org = cluster
        .post(
            &a,
            "/v1/organizations/",
            Some(&token),
            &json!({"name": "Backfill", "slug": "usage-backfill"}),
        )
        .await;
    org.expect(201);
    let org = org.body["id"].as_str().unwrap().to_string();
    const BEFORE: usize = 2_000;
    let batches: Vec<Value> = (0..BEFORE + EVENTS)
        .collect::<Vec<_>>()
        .chunks(BATCH)
        .map(|c| json!({"events": c.iter().map(|i| event(&org, *i)).collect::<Vec<_>>()}))
        .collect();
    let (early, late) = batches.split_at(BEFORE / BATCH);
    for body in early {
        cluster
            .post(&b, "/v1/events/ingest", Some(&token), body)
            .await
            .expect(200);
    }
    let groups = std::sync::atomic::AtomicUsize::new(0);
    let ingesting = async {
        for group in late.chunks(8) {
            let replies = join_all(
                group
                    .iter()
                    .map(|body| cluster.post(&b, "/v1/events/ingest", Some(&token), body)),
            )
            .await;
            for r in replies {
                r.expect(200);
                assert_eq!(r.body["inserted"], BATCH);
            }
            groups.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    };
    let creating = async {
        // Once B is under way (3 of its 13 groups of requests done).
        while groups.load(std::sync::atomic::Ordering::SeqCst) < 3 {
            actix_web::rt::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let m = cluster
            .post(
                &a,
                "/v1/meters/",
                Some(&token),
                &json!({"name": "Tokens", "organization_id": org,
                        "aggregation": {"func": "sum", "property": "tokens"},
                        "filter": {"conjunction": "and", "clauses": [
                            {"property": "name", "operator": "eq", "value": "api_call"}]}}),
            )
            .await;
        m.expect(201);
        m.body["id"].as_str().unwrap().to_string()
    };
    let ((), meter) = futures_util::join!(ingesting, creating);
    let all = BEFORE + EVENTS;
    let tokens: i64 = (0..all).map(|i| (i % 7) as i64).sum();
    let usr_3: i64 = (0..all)
        .filter(|i| i % CUSTOMERS == 3)
        .map(|i| (i % 7) as i64)
        .sum();
    for node in [&a, &b] {
        let total = |query: &'static str| {
            let path = format!(
                "/v1/meters/{meter}/quantities?start_timestamp=2026-11-01T00:00:00Z\
                 &end_timestamp=2026-11-02T00:00:00Z&interval=day{query}"
            );
            let (cluster, token) = (&cluster, &token);
            async move {
                let r = cluster.get(node, &path, token).await;
                r.expect(200);
                r.body["total"].as_f64().unwrap()
            }
        };
        let waited = tokio::time::timeout(std::time::Duration::from_secs(180), async {
            loop {
                let got = total("").await;
                assert!(got <= tokens as f64, "counted past {tokens}: {got}");
                if got == tokens as f64 {
                    return;
                }
                actix_web::rt::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        })
        .await;
        assert!(waited.is_ok(), "the backfill did not finish");
        assert_eq!(total("&external_customer_id=usr_3").await, usr_3 as f64);
    }
}
