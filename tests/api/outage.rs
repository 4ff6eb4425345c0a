//! The database gone with no standby promoted (issue 53, item 2): a node answers plain
//! validations of the keys it holds from memory within `storage.outage_window_secs` and
//! counts them in `/metrics`; increments, activations, keys it does not hold and writes
//! answer 503 with `Retry-After`; `/readyz` names the database's state (`database_read_only`,
//! then `database_down` past the window); the outage is logged without a flood; and once
//! the primary is back the validations counted meanwhile are written, once.
//!
//! The database is a [`PgPair`] the test owns (the primary is stopped and started again;
//! its synchronous standby stays a standby, so the nodes' read-write URL finds no server
//! meanwhile). The nodes are the real binary ([`Cluster::on_database`]).

use std::time::{Duration, Instant};

use actix_web::rt::time::sleep;
use serde_json::{json, Value};

use crate::binary::Binary;
use crate::nodes::{
    key_count, metric, until_answered_from_memory, validate_body, Cluster, METRICS_TOKEN, VALIDATE,
};
use crate::pgpair::PgPair;

/// The nodes' outage window: long enough for the checks made inside it on a slow machine,
/// short enough to wait out.
const WINDOW_SECS: u64 = 15;
/// Validations of the held key answered during the outage.
const DURING: i64 = 20;
/// Until `/readyz` or a count says what the test waits for.
const DEADLINE: Duration = Duration::from_secs(40);
const OUTAGE_PATH: &str = "tollgate_license_validation_paths_total{path=\"outage\"}";

/// `/readyz` of `node`: status, body, whether `Retry-After` came with it.
async fn readyz(cluster: &Cluster, node: &Binary) -> (u16, Value, bool) {
    let r = cluster
        .send(node, reqwest::Method::GET, "/readyz", None, None)
        .await
        .expect("GET /readyz");
    let retry_after = r.headers.contains_key(reqwest::header::RETRY_AFTER);
    (r.status.as_u16(), r.body, retry_after)
}

/// Polls `/readyz` of `node` until `want(status, body)`; returns the body.
async fn until_readyz(
    cluster: &Cluster,
    node: &Binary,
    what: &str,
    want: impl Fn(u16, &Value) -> bool,
) -> Value {
    let started = Instant::now();
    loop {
        let (status, body, _) = readyz(cluster, node).await;
        if want(status, &body) {
            return body;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "/readyz never said {what} within {DEADLINE:?}; last {status} {body}\nlog:\n{}",
            node.log_text()
        );
        sleep(Duration::from_millis(100)).await;
    }
}

/// The key's `validations` as `node` shows them (the store's, plus what `node` has not
/// written yet).
async fn validations(cluster: &Cluster, node: &Binary, token: &str, key: &Value) -> i64 {
    key_count(cluster, node, token, key, "validations").await
}

/// Polls until both nodes show `want` validations of `key` (B has validated none: what it
/// shows is the store's); fails if either shows more.
async fn until_written(
    cluster: &Cluster,
    nodes: [&Binary; 2],
    token: &str,
    key: &Value,
    want: i64,
) {
    let started = Instant::now();
    loop {
        let seen = [
            validations(cluster, nodes[0], token, key).await,
            validations(cluster, nodes[1], token, key).await,
        ];
        assert!(
            seen.iter().all(|&n| n <= want),
            "counted more than answered: {seen:?} > {want}"
        );
        if seen == [want, want] {
            return;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "the validations were never written: {seen:?} of {want}\nlog:\n{}",
            nodes[0].log_text()
        );
        sleep(Duration::from_millis(200)).await;
    }
}

#[actix_web::test]
async fn with_the_primary_stopped_held_keys_validate_from_memory_and_the_rest_answers_503() {
    let Some(pair) = PgPair::start("outage", false) else {
        return;
    };
    let mut cluster = Cluster::on_database(pair.url("outage"), "tollgate");
    let window = WINDOW_SECS.to_string();
    let env = [
        ("TOLLGATE__METRICS__TOKEN", METRICS_TOKEN),
        ("TOLLGATE__STORAGE__OUTAGE_WINDOW_SECS", window.as_str()),
        ("TOLLGATE__LICENSE_KEYS__STATS_FLUSH_MS", "200"),
    ];
    let a = cluster.start("a", &env).await;
    let b = cluster.start("b", &env).await;
    let token = cluster.token("a");
    let free = json!({"type": "one_time", "amount_type": "free"});
    let properties = json!({"prefix": "OUT", "limit_usage": 100, "limit_activations": 3});
    let (org, product, _) = cluster
        .shop(&a, &token, "outage-held", properties.clone(), free.clone())
        .await;
    let held = cluster.buy_key(&a, &token, &org, &product).await;
    let (org2, product2, _) = cluster
        .shop(&a, &token, "outage-unseen", properties, free)
        .await;
    let unseen = cluster.buy_key(&a, &token, &org2, &product2).await;
    // A holds `held`, proved current through its listener; B never validated it.
    until_answered_from_memory(&cluster, &a, &held).await;
    let shown = validations(&cluster, &a, &token, &held).await;
    until_written(&cluster, [&a, &b], &token, &held, shown).await;
    assert_eq!(
        metric(&cluster, &a, "tollgate_store_database{state=\"writable\"}").await,
        1.0
    );

    pair.stop_primary();
    let stopped = Instant::now();
    let body = until_readyz(&cluster, &a, "database_read_only", |s, b| {
        s == 503 && b["code"] == "database_read_only"
    })
    .await;
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(detail.starts_with("Database unreachable"), "{detail}");
    assert_eq!(body["error"], "ServiceUnavailable");
    assert!(
        readyz(&cluster, &a).await.2,
        "/readyz's 503 carries Retry-After"
    );
    // B's listener was caught up too: read-only as well (though it holds no key).
    until_readyz(&cluster, &b, "database_read_only", |s, b| {
        s == 503 && b["code"] == "database_read_only"
    })
    .await;

    // Inside the window: the held key validates on A, from memory.
    let outage_before = metric(&cluster, &a, OUTAGE_PATH).await;
    for _ in 0..DURING {
        let r = cluster
            .post(&a, VALIDATE, None, &validate_body(&held, 0))
            .await;
        assert_eq!(r.status.as_u16(), 200, "{}\nlog:\n{}", r.body, a.log_text());
        assert_eq!(r.body["status"], "granted");
    }
    assert!(
        stopped.elapsed() < Duration::from_secs(WINDOW_SECS),
        "the checks took longer than the window ({:?}); raise WINDOW_SECS",
        stopped.elapsed()
    );
    let answered = metric(&cluster, &a, OUTAGE_PATH).await - outage_before;
    assert_eq!(
        answered, DURING as f64,
        "/metrics counts the outage answers"
    );
    assert_eq!(
        metric(&cluster, &a, "tollgate_store_database{state=\"read_only\"}").await,
        1.0
    );
    assert!(metric(&cluster, &a, "tollgate_store_database_outages_total").await >= 1.0);
    // An increment, a key A does not hold, the same key on B, an activation and a write:
    // 503 with Retry-After, at once.
    let refused: [(&Binary, &str, Value, Option<&str>); 5] = [
        (&a, VALIDATE, validate_body(&held, 1), None),
        (&a, VALIDATE, validate_body(&unseen, 0), None),
        (&b, VALIDATE, validate_body(&held, 0), None),
        (
            &a,
            "/v1/customer-portal/license-keys/activate",
            json!({"key": held["key"], "organization_id": held["organization_id"], "label": "laptop"}),
            None,
        ),
        (
            &a,
            "/v1/checkouts/custom/",
            json!({"payment_processor": "stripe", "product_id": product}),
            Some(token.as_str()),
        ),
    ];
    for (node, path, body, auth) in &refused {
        let r = cluster.post(node, path, *auth, body).await;
        assert_eq!(r.status.as_u16(), 503, "POST {path}: {}", r.body);
        assert!(
            r.headers.contains_key(reqwest::header::RETRY_AFTER),
            "POST {path}: 503 without Retry-After"
        );
    }

    // Past the window: A answers nothing from memory any more.
    until_readyz(&cluster, &a, "database_down", |s, b| {
        s == 503 && b["code"] == "database_down"
    })
    .await;
    assert!(
        stopped.elapsed() >= Duration::from_secs(WINDOW_SECS - 2),
        "down before the window passed: {:?}",
        stopped.elapsed()
    );
    let r = cluster
        .post(&a, VALIDATE, None, &validate_body(&held, 0))
        .await;
    assert_eq!(r.status.as_u16(), 503, "past the window: {}", r.body);
    assert_eq!(
        metric(&cluster, &a, OUTAGE_PATH).await - outage_before,
        DURING as f64
    );
    assert_eq!(
        metric(&cluster, &a, "tollgate_store_database{state=\"down\"}").await,
        1.0
    );

    // No flood: the outage's warnings on each node stay a handful (one line as it began,
    // one per job and for the listener and the flusher, then one a minute; the 503s one
    // line per 10 s).
    for (name, node) in [("a", &a), ("b", &b)] {
        let log = node.log_text();
        let warnings: Vec<&str> = log.lines().filter(|l| l.contains("WARN")).collect();
        assert!(
            warnings.len() <= 30,
            "node {name}: {} warnings in the outage:\n{}",
            warnings.len(),
            warnings.join("\n")
        );
        assert_eq!(
            log.matches("the database is unreachable;").count(),
            1,
            "node {name}: one line as the outage began\n{log}"
        );
    }

    // The primary back: both nodes ready again, A's count written once.
    pair.start_primary();
    for node in [&a, &b] {
        until_readyz(&cluster, node, "ready", |s, _| s == 200).await;
    }
    let want = shown + DURING;
    until_written(&cluster, [&a, &b], &token, &held, want).await;
    // Later flushes add nothing more.
    sleep(Duration::from_secs(1)).await;
    assert_eq!(validations(&cluster, &b, &token, &held).await, want);
    assert!(a.log_text().contains("the database is reachable again"));
    // Writes work again on both nodes.
    for node in [&a, &b] {
        let r = cluster
            .post(node, VALIDATE, None, &validate_body(&held, 1))
            .await;
        assert_eq!(
            r.status.as_u16(),
            200,
            "an increment after the outage: {}",
            r.body
        );
    }
}
