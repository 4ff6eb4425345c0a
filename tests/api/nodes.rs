//! Two `tollgate` processes on one PostgreSQL database (`storage.backend = "postgres"`,
//! `docs/scale-out.md` 4.5): the database decides, so what either node acknowledges
//! holds on both, with no traffic between the nodes.
//!
//! Each test gets a schema of its own on the test database
//! (`tollgate_storage::testing::fresh_schema`: skipped on a developer machine without one,
//! a failure under `CI=true`), dropped at the end. The nodes are the real binary (`binary::Binary`), each with its own data
//! directory (only the bootstrap token file lives there).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use actix_web::rt::time::sleep;
use futures_util::future::join_all;
use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::bootstrap::TOKEN_FILE;

use crate::binary::Binary;
use crate::helpers::{client, Reply};

const READY_DEADLINE: Duration = Duration::from_secs(30);
/// Every request of these tests, however loaded the machine.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A schema on the test database and the nodes serving it.
pub(crate) struct Cluster {
    root: TempDir,
    url: String,
    schema: String,
    /// Drops the schema when the test ends (`None`: a database the test owns whole).
    _db: Option<tollgate_storage::testing::Dropper>,
    client: reqwest::Client,
    started: u32,
}

impl Cluster {
    /// `None`: no database (skipped).
    pub(crate) fn new(test: &str) -> Option<Cluster> {
        let db = tollgate_storage::testing::fresh_schema(test)?;
        Some(Cluster {
            root: tempfile::tempdir().expect("creating a temporary directory"),
            url: db.url.clone(),
            schema: db.schema.clone(),
            _db: Some(db),
            client: client(),
            started: 0,
        })
    }

    /// Nodes on schema `schema` of the database at `url` (one the test made, e.g. a
    /// [`crate::pgpair::PgPair`]).
    pub(crate) fn on_database(url: String, schema: &str) -> Cluster {
        Cluster {
            root: tempfile::tempdir().expect("creating a temporary directory"),
            url,
            schema: schema.to_string(),
            _db: None,
            client: client(),
            started: 0,
        }
    }

    fn data_dir(&self, node: &str) -> PathBuf {
        self.root.path().join(node)
    }

    /// Starts node `name` (its own data directory, the shared schema) with `extra_env`,
    /// and waits until it is ready.
    pub(crate) async fn start(&mut self, name: &str, extra_env: &[(&str, &str)]) -> Binary {
        self.started += 1;
        let data = self.data_dir(name);
        std::fs::create_dir_all(&data).expect("creating the data directory");
        let mut env: Vec<(&str, &str)> = vec![
            ("TOLLGATE__STORAGE__BACKEND", "postgres"),
            ("TOLLGATE__STORAGE__URL", &self.url),
            ("TOLLGATE__STORAGE__SCHEMA", &self.schema),
            ("TOLLGATE__STORAGE__POOL_SIZE", "8"),
        ];
        env.extend_from_slice(extra_env);
        Binary::start(
            self.root.path(),
            &data,
            &format!("{name}-{}.log", self.started),
            &env,
            READY_DEADLINE,
        )
        .await
    }

    /// The bootstrap admin's token, written by the first node that started.
    pub(crate) fn token(&self, first: &str) -> String {
        std::fs::read_to_string(self.data_dir(first).join(TOKEN_FILE))
            .expect("reading the bootstrap token")
            .trim()
            .to_string()
    }

    pub(crate) async fn send(
        &self,
        node: &Binary,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> reqwest::Result<Reply> {
        let mut req = self
            .client
            .request(method, format!("{}{path}", node.address))
            .timeout(REQUEST_TIMEOUT);
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(body);
        }
        Ok(Reply::read(req.send().await?).await)
    }

    pub(crate) async fn post(
        &self,
        node: &Binary,
        path: &str,
        token: Option<&str>,
        body: &Value,
    ) -> Reply {
        self.send(node, reqwest::Method::POST, path, token, Some(body))
            .await
            .unwrap_or_else(|e| panic!("POST {path}: {e}"))
    }

    pub(crate) async fn get(&self, node: &Binary, path: &str, token: &str) -> Reply {
        self.send(node, reqwest::Method::GET, path, Some(token), None)
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }

    /// An organization selling one free product whose license-key benefit has
    /// `properties`; returns (organization id, product id, benefit id).
    pub(crate) async fn shop(
        &self,
        node: &Binary,
        token: &str,
        slug: &str,
        properties: Value,
        price: Value,
    ) -> (String, String, String) {
        let org = self
            .post(
                node,
                "/v1/organizations/",
                Some(token),
                &json!({"name": format!("Org {slug}"), "slug": slug}),
            )
            .await;
        org.expect(201);
        let org = id(&org.body);
        let benefit = self
            .post(
                node,
                "/v1/benefits/",
                Some(token),
                &json!({"type": "license_keys", "description": "License", "organization_id": org, "properties": properties}),
            )
            .await;
        benefit.expect(201);
        let benefit = id(&benefit.body);
        let product = self
            .post(
                node,
                "/v1/products/",
                Some(token),
                &json!({"name": "App", "organization_id": org, "prices": [price]}),
            )
            .await;
        product.expect(201);
        let product = id(&product.body);
        self.post(
            node,
            &format!("/v1/products/{product}/benefits"),
            Some(token),
            &json!({"benefits": [benefit]}),
        )
        .await
        .expect(200);
        (org, product, benefit)
    }

    /// A checkout of `product` created on `node`: (id, client secret).
    async fn checkout(&self, node: &Binary, token: &str, product: &str) -> (String, String) {
        let c = self
            .post(
                node,
                "/v1/checkouts/custom/",
                Some(token),
                &json!({"payment_processor": "stripe", "product_id": product}),
            )
            .await;
        c.expect(201);
        (id(&c.body), str_of(&c.body, "client_secret"))
    }

    /// Buys `product` on `node` and returns the license key it granted.
    pub(crate) async fn buy_key(
        &self,
        node: &Binary,
        token: &str,
        org: &str,
        product: &str,
    ) -> Value {
        let (_, secret) = self.checkout(node, token, product).await;
        self.post(
            node,
            &format!("/v1/checkouts/custom/client/{secret}/confirm"),
            None,
            &json!({"customer_name": "Ada", "customer_email": "ada@example.com", "customer_billing_address": {"country": "FR"}}),
        )
        .await
        .expect(200);
        let keys = self
            .get(
                node,
                &format!("/v1/license-keys/?organization_id={org}"),
                token,
            )
            .await;
        keys.expect(200);
        keys.body["items"][0].clone()
    }
}

/// Nodes A and B, the admin token, and a key of `properties` bought through `buy_on` from
/// a free product of a new organization `slug` (set up through A).
struct TwoNodes {
    a: Binary,
    b: Binary,
    token: String,
    key: Value,
}

impl Cluster {
    async fn two_nodes_and_a_key(
        &mut self,
        slug: &str,
        properties: Value,
        buy_on_b: bool,
    ) -> TwoNodes {
        let a = self.start("a", &[]).await;
        let b = self.start("b", &[]).await;
        let token = self.token("a");
        let (org, product, _) = self
            .shop(
                &a,
                &token,
                slug,
                properties,
                json!({"type": "one_time", "amount_type": "free"}),
            )
            .await;
        let buyer = if buy_on_b { &b } else { &a };
        let key = self.buy_key(buyer, &token, &org, &product).await;
        TwoNodes { a, b, token, key }
    }
}

fn id(v: &Value) -> String {
    str_of(v, "id")
}

pub(crate) fn str_of(v: &Value, field: &str) -> String {
    v[field]
        .as_str()
        .unwrap_or_else(|| panic!("no string {field} in {v}"))
        .to_string()
}

pub(crate) fn validate_body(key: &Value, increment: i64) -> Value {
    json!({
        "key": key["key"],
        "organization_id": key["organization_id"],
        "increment_usage": increment,
    })
}

pub(crate) const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";

/// What 1,000 concurrent increments of a key limited to 500 usages got.
#[derive(Debug, Default)]
struct Tally {
    succeeded: usize,
    refused: usize,
    /// Requests with no answer (the node was killed under them).
    lost: usize,
    other: Vec<String>,
}

/// Sends `total` validations with `increment_usage = 1`, half to each node, `concurrency`
/// at a time per node.
async fn increments(
    cluster: &Cluster,
    nodes: &[&Binary],
    key: &Value,
    total: usize,
    concurrency: usize,
) -> Tally {
    let body = validate_body(key, 1);
    let per_node = total / nodes.len();
    let mut tally = Tally::default();
    let lanes = nodes.iter().map(|node| {
        let body = body.clone();
        async move {
            let mut replies = Vec::with_capacity(per_node);
            for chunk in (0..per_node).collect::<Vec<_>>().chunks(concurrency) {
                let sent = chunk.iter().map(|_| {
                    cluster.send(node, reqwest::Method::POST, VALIDATE, None, Some(&body))
                });
                replies.extend(join_all(sent).await);
            }
            replies
        }
    });
    for reply in join_all(lanes).await.into_iter().flatten() {
        match reply {
            Ok(r) if r.status.as_u16() == 200 => tally.succeeded += 1,
            // "License key only has 0 more usages."
            Ok(r) if r.status.as_u16() == 400 => tally.refused += 1,
            Ok(r) => tally.other.push(format!("{} {}", r.status, r.body)),
            Err(_) => tally.lost += 1,
        }
    }
    tally
}

/// The key's `usage` as `node` reads it.
async fn usage(cluster: &Cluster, node: &Binary, token: &str, key: &Value) -> i64 {
    key_count(cluster, node, token, key, "usage").await
}

/// A counter of the key (`usage`, `validations`) as `node` shows it.
pub(crate) async fn key_count(
    cluster: &Cluster,
    node: &Binary,
    token: &str,
    key: &Value,
    field: &str,
) -> i64 {
    let r = cluster
        .get(
            node,
            &format!("/v1/license-keys/{}", str_of(key, "id")),
            token,
        )
        .await;
    r.expect(200);
    r.body[field]
        .as_i64()
        .unwrap_or_else(|| panic!("no {field} in {}", r.body))
}

#[actix_web::test]
async fn a_limit_of_500_holds_over_1000_increments_split_over_two_nodes() {
    let Some(mut cluster) = Cluster::new("limit_two_nodes") else {
        return;
    };
    let TwoNodes { a, b, token, key } = cluster
        .two_nodes_and_a_key("limit", json!({"limit_usage": 500}), true)
        .await;
    assert_eq!(key["limit_usage"], 500, "{key}");

    let tally = increments(&cluster, &[&a, &b], &key, 1000, 32).await;
    assert!(
        tally.other.is_empty(),
        "unexpected answers: {:?}",
        tally.other
    );
    assert_eq!(tally.lost, 0, "{tally:?}");
    assert_eq!((tally.succeeded, tally.refused), (500, 500), "{tally:?}");
    assert_eq!(usage(&cluster, &a, &token, &key).await, 500);
    assert_eq!(usage(&cluster, &b, &token, &key).await, 500);
    // The refusals say why.
    let r = cluster
        .post(&b, VALIDATE, None, &validate_body(&key, 1))
        .await;
    r.expect_error(400);
    assert_eq!(r.body["detail"], "License key only has 0 more usages.");
}

#[actix_web::test]
async fn no_acknowledged_increment_is_lost_when_a_node_is_killed_mid_run() {
    let Some(mut cluster) = Cluster::new("kill_mid_run") else {
        return;
    };
    let TwoNodes { a, b, token, key } = cluster
        .two_nodes_and_a_key("killed", json!({"limit_usage": 100000}), true)
        .await;

    // Both nodes take increments; node A is killed (SIGKILL) while they are in flight.
    let started = Instant::now();
    let both = [&a, &b];
    let load = increments(&cluster, &both, &key, 6000, 16);
    let killer = async {
        sleep(Duration::from_millis(200)).await;
        a.kill_9_now();
    };
    let (tally, ()) = futures_util::future::join(load, killer).await;
    assert!(
        tally.other.is_empty(),
        "unexpected answers: {:?}; node B's log:\n{}",
        tally.other,
        b.log_text()
    );
    assert_eq!(tally.refused, 0, "{tally:?}");
    assert!(
        tally.lost > 0,
        "the kill hit nothing in flight ({tally:?}, {:?}); the test proves nothing",
        started.elapsed()
    );
    // Every acknowledged increment is counted; those in flight at the kill may or may not be.
    let stored = usage(&cluster, &b, &token, &key).await;
    let acked = tally.succeeded as i64;
    assert!(
        stored >= acked && stored <= acked + tally.lost as i64,
        "usage {stored}, acknowledged {acked}, unanswered {}",
        tally.lost
    );
    // A restarted node A reads the same.
    drop(a);
    let a = cluster.start("a", &[]).await;
    assert_eq!(usage(&cluster, &a, &token, &key).await, stored);
}

#[actix_web::test]
async fn a_key_cached_on_one_node_and_revoked_through_the_other_is_refused_at_once() {
    let Some(mut cluster) = Cluster::new("stale_cache") else {
        return;
    };
    let TwoNodes { a, b, token, key } = cluster
        .two_nodes_and_a_key("cached", json!({}), false)
        .await;
    // Node A holds the key's actor (and its caches) after these.
    for increment in [0, 1, 0] {
        cluster
            .post(&a, VALIDATE, None, &validate_body(&key, increment))
            .await
            .expect(200);
    }
    let revoked = cluster
        .send(
            &b,
            reqwest::Method::PATCH,
            &format!("/v1/license-keys/{}", str_of(&key, "id")),
            Some(&token),
            Some(&json!({"status": "revoked"})),
        )
        .await
        .unwrap();
    revoked.expect(200);
    // Refused on A at once: a plain validation and an increment alike.
    for increment in [0, 1] {
        let r = cluster
            .post(&a, VALIDATE, None, &validate_body(&key, increment))
            .await;
        r.expect_error(404);
    }
    let seen = cluster
        .get(
            &a,
            &format!("/v1/license-keys/{}", str_of(&key, "id")),
            &token,
        )
        .await;
    seen.expect(200);
    assert_eq!(seen.body["status"], "revoked", "{}", seen.body);
    assert_eq!(seen.body["usage"], 1, "{}", seen.body);
}

#[actix_web::test]
async fn two_nodes_racing_for_one_slug_create_one_organization() {
    let Some(mut cluster) = Cluster::new("racing_slugs") else {
        return;
    };
    let a = cluster.start("a", &[]).await;
    let b = cluster.start("b", &[]).await;
    let token = cluster.token("a");
    for round in 0..25 {
        let slug = format!("race-{round}");
        let body = json!({"name": "Race", "slug": slug});
        let both = join_all([&a, &b].into_iter().flat_map(|node| {
            let body = body.clone();
            let token = token.clone();
            let cluster = &cluster;
            (0..2).map(move |_| {
                let body = body.clone();
                let token = token.clone();
                async move {
                    cluster
                        .post(node, "/v1/organizations/", Some(&token), &body)
                        .await
                }
            })
        }))
        .await;
        let statuses: Vec<u16> = both.iter().map(|r| r.status.as_u16()).collect();
        assert_eq!(
            statuses.iter().filter(|s| **s == 201).count(),
            1,
            "round {round}: {statuses:?}"
        );
        for r in both.iter().filter(|r| r.status.as_u16() != 201) {
            // The losers are told the slug is taken.
            r.expect_error(422);
        }
        // Both nodes list exactly one organization with that slug.
        for node in [&a, &b] {
            let r = cluster
                .get(node, &format!("/v1/organizations/?slug={slug}"), &token)
                .await;
            r.expect(200);
            assert_eq!(
                r.body["items"].as_array().map(Vec::len),
                Some(1),
                "{}",
                r.body
            );
        }
    }
}

#[actix_web::test]
async fn a_purchase_left_confirmed_by_a_dying_node_is_completed_once_by_the_other() {
    let Some(mut cluster) = Cluster::new("dying_confirm") else {
        return;
    };
    // Node A dies at the fault point: the confirm is written (customer, redemption,
    // session), nothing charged or bought yet.
    let fast_sweeps = [
        ("TOLLGATE__JOBS__SWEEP_INTERVAL_SECS", "1"),
        ("TOLLGATE__JOBS__CONFIRMED_GRACE_SECS", "1"),
    ];
    let setup = cluster.start("a", &[]).await;
    let token = cluster.token("a");
    let (org, product, benefit) = cluster
        .shop(
            &setup,
            &token,
            "dying",
            json!({"prefix": "one"}),
            json!({"type": "recurring", "recurring_interval": "month", "amount_type": "fixed", "price_amount": 1500, "price_currency": "usd"}),
        )
        .await;
    let (checkout, secret) = cluster.checkout(&setup, &token, &product).await;
    drop(setup);
    let mut env = vec![(tollgate::app::checkout::FAULT_AFTER_CONFIRM, "1")];
    env.extend_from_slice(&fast_sweeps);
    let dying = cluster.start("a", &env).await;
    let confirm = cluster
        .send(
            &dying,
            reqwest::Method::POST,
            &format!("/v1/checkouts/custom/client/{secret}/confirm"),
            None,
            Some(&json!({"customer_name": "Ada", "customer_email": "ada@example.com", "customer_billing_address": {"country": "FR"}, "confirmation_token_id": "tok_visa"})),
        )
        .await;
    assert!(confirm.is_err(), "node A answered the confirm: {confirm:?}");
    drop(dying);

    // Node B completes it: charge (the same idempotency key) and one write of the purchase.
    let b = cluster.start("b", &fast_sweeps).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let done = loop {
        let c = cluster
            .get(&b, &format!("/v1/checkouts/custom/{checkout}"), &token)
            .await;
        c.expect(200);
        if c.body["status"] == "succeeded" {
            break c.body;
        }
        assert!(
            Instant::now() < deadline,
            "the checkout was never completed: {}",
            c.body
        );
        sleep(Duration::from_millis(200)).await;
    };
    // A restarted node A (its start-up recovery settles confirmed checkouts too) changes
    // nothing more.
    let a = cluster.start("a", &fast_sweeps).await;
    sleep(Duration::from_secs(3)).await;
    for node in [&a, &b] {
        let orders = cluster
            .get(node, &format!("/v1/orders/?organization_id={org}"), &token)
            .await;
        orders.expect(200);
        assert_eq!(
            orders.body["pagination"]["total_count"], 1,
            "{}",
            orders.body
        );
        let order = &orders.body["items"][0];
        assert_eq!(order["checkout_id"], checkout.as_str(), "{order}");
        let subs = cluster
            .get(
                node,
                &format!("/v1/subscriptions/?organization_id={org}"),
                &token,
            )
            .await;
        subs.expect(200);
        assert_eq!(subs.body["pagination"]["total_count"], 1, "{}", subs.body);
        let keys = cluster
            .get(
                node,
                &format!("/v1/license-keys/?organization_id={org}&benefit_id={benefit}"),
                &token,
            )
            .await;
        keys.expect(200);
        assert_eq!(keys.body["pagination"]["total_count"], 1, "{}", keys.body);
        let c = cluster
            .get(node, &format!("/v1/checkouts/custom/{checkout}"), &token)
            .await;
        assert_eq!(c.body["status"], "succeeded");
        // One charge: the intent recorded is the one the checkout's idempotency key names.
        assert_eq!(
            c.body["payment_processor_metadata"], done["payment_processor_metadata"],
            "{}",
            c.body
        );
    }
}

#[actix_web::test]
async fn nodes_starting_together_share_one_token_secret_and_one_admin() {
    let Some(cluster) = Cluster::new("start_together") else {
        return;
    };
    let env = |name: &str| -> Vec<(String, String)> {
        let _ = name;
        vec![
            ("TOLLGATE__STORAGE__BACKEND".into(), "postgres".into()),
            ("TOLLGATE__STORAGE__URL".into(), cluster.url.clone()),
            ("TOLLGATE__STORAGE__SCHEMA".into(), cluster.schema.clone()),
        ]
    };
    let mut nodes = Vec::new();
    for name in ["a", "b", "c"] {
        let data = cluster.data_dir(name);
        std::fs::create_dir_all(&data).unwrap();
        let vars = env(name);
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        nodes.push((
            name,
            Binary::spawn(cluster.root.path(), &data, &format!("{name}.log"), &vars),
        ));
    }
    for (_, node) in nodes.iter_mut() {
        node.wait_ready(READY_DEADLINE).await;
    }
    let written: Vec<&str> = nodes
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| cluster.data_dir(name).join(TOKEN_FILE).exists())
        .collect();
    assert_eq!(written.len(), 1, "bootstrap tokens written by {written:?}");
    // The one admin token works on every node: one secret hashes tokens everywhere.
    let token = cluster.token(written[0]);
    for (name, node) in &nodes {
        let r = cluster.get(node, "/v1/organizations/", &token).await;
        assert_eq!(r.status.as_u16(), 200, "node {name}: {}", r.body);
    }
}

// ---------------------------------------------------------------------------------------
// The hot path over two nodes (issue 33): counters in tally rows, copies trusted through
// the change listener, revokes seen at once.
// ---------------------------------------------------------------------------------------

/// A metrics token (`/metrics` needs one of at least 32 characters).
pub(crate) const METRICS_TOKEN: &str = "nodes-metrics-token-0123456789abcdef";

/// `value` of the metric line that starts with `series` on `node` (0 when absent).
pub(crate) async fn metric(cluster: &Cluster, node: &Binary, series: &str) -> f64 {
    let r = cluster
        .send(
            node,
            reqwest::Method::GET,
            "/metrics",
            Some(METRICS_TOKEN),
            None,
        )
        .await
        .expect("GET /metrics");
    r.expect(200);
    let Value::String(text) = &r.body else {
        panic!("metrics are not JSON: {}", r.body)
    };
    text.lines()
        .find(|l| l.starts_with(series))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

const FROM_MEMORY: &str = "tollgate_license_validation_paths_total{path=\"memory\"}";

/// Validates `key` on `node` until one answer came from the node's copy (its listener is
/// caught up), at most 10 s.
pub(crate) async fn until_answered_from_memory(cluster: &Cluster, node: &Binary, key: &Value) {
    let before = metric(cluster, node, FROM_MEMORY).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        cluster
            .post(node, VALIDATE, None, &validate_body(key, 0))
            .await
            .expect(200);
        if metric(cluster, node, FROM_MEMORY).await > before {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no validation was answered from memory; log:\n{}",
            node.log_text()
        );
        sleep(Duration::from_millis(50)).await;
    }
}

impl Cluster {
    /// Buys `n` keys of `product` on `node`; returns them (newest last).
    async fn buy_keys(
        &self,
        node: &Binary,
        token: &str,
        org: &str,
        product: &str,
        n: usize,
    ) -> Vec<Value> {
        for _ in 0..n {
            let (_, secret) = self.checkout(node, token, product).await;
            self.post(
                node,
                &format!("/v1/checkouts/custom/client/{secret}/confirm"),
                None,
                &json!({"customer_name": "Ada", "customer_email": "ada@example.com", "customer_billing_address": {"country": "FR"}}),
            )
            .await
            .expect(200);
        }
        let keys = self
            .get(
                node,
                &format!("/v1/license-keys/?organization_id={org}&limit=100"),
                token,
            )
            .await;
        keys.expect(200);
        keys.body["items"].as_array().expect("items").clone()
    }

    async fn patch_key(&self, node: &Binary, token: &str, key: &Value, body: Value) -> Reply {
        self.send(
            node,
            reqwest::Method::PATCH,
            &format!("/v1/license-keys/{}", str_of(key, "id")),
            Some(token),
            Some(&body),
        )
        .await
        .expect("PATCH the key")
    }
}

#[actix_web::test]
async fn a_key_revoked_while_both_nodes_validate_it_is_refused_by_every_validation_started_after_the_answer(
) {
    let Some(mut cluster) = Cluster::new("revoke_under_load") else {
        return;
    };
    // Both listeners hear every change (and ping) 300 ms late, as a loaded node might,
    // within a 1 s window: the nodes keep answering from memory, and only the revoking
    // node's wait of a window before it answers keeps the other from answering from a copy
    // it has not heard was revoked yet (without that wait this test fails).
    let env = [
        ("TOLLGATE__METRICS__TOKEN", METRICS_TOKEN),
        ("TOLLGATE__STORAGE__NOTIFY_WINDOW_MS", "1000"),
        (tollgate_storage::FAULT_LISTENER_DELAY, "300"),
    ];
    let a = cluster.start("a", &env).await;
    let b = cluster.start("b", &env).await;
    let token = cluster.token("a");
    let (org, product, _) = cluster
        .shop(
            &a,
            &token,
            "underload",
            json!({}),
            json!({"type": "one_time", "amount_type": "free"}),
        )
        .await;
    let keys = cluster.buy_keys(&a, &token, &org, &product, 3).await;
    for (round, key) in keys.iter().enumerate() {
        until_answered_from_memory(&cluster, &a, key).await;
        until_answered_from_memory(&cluster, &b, key).await;
        let stop = std::sync::atomic::AtomicBool::new(false);
        let answered: std::sync::Mutex<Option<Instant>> = std::sync::Mutex::new(None);
        // 64 lanes, 32 per node, each validating until told to stop; each reply is kept with the instant its request was sent.
        let lanes = (0..64).map(|lane| {
            let node = if lane % 2 == 0 { &a } else { &b };
            let (cluster, stop) = (&cluster, &stop);
            async move {
                let mut seen = Vec::new();
                let mut i = 0usize;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    // Increments on B only: one that meets the revoked key reads it
                    // anew, so on A only the listener (and B's wait) can tell.
                    let increment = lane % 2 == 1 && i % 4 == 3;
                    let body = validate_body(key, i64::from(increment));
                    i += 1;
                    let sent = Instant::now();
                    let r = cluster
                        .send(node, reqwest::Method::POST, VALIDATE, None, Some(&body))
                        .await
                        .expect("validate");
                    seen.push((sent, r.status.as_u16(), node.address.clone()));
                }
                seen
            }
        });
        let revoker = async {
            sleep(Duration::from_millis(1000)).await;
            let r = cluster
                .patch_key(&b, &token, key, json!({"status": "revoked"}))
                .await;
            *answered.lock().unwrap() = Some(Instant::now());
            r.expect(200);
            sleep(Duration::from_millis(1000)).await;
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        };
        let (replies, ()) = futures_util::future::join(join_all(lanes), revoker).await;
        let answered = answered.lock().unwrap().expect("the revoke was answered");
        let replies: Vec<_> = replies.into_iter().flatten().collect();
        let before = replies
            .iter()
            .filter(|(sent, status, _)| *sent < answered && *status == 200)
            .count();
        assert!(
            before > 0,
            "round {round}: nothing validated before the revoke"
        );
        let after: Vec<_> = replies
            .iter()
            .filter(|(sent, _, _)| *sent > answered)
            .collect();
        assert!(
            after.len() > 10,
            "round {round}: too few validations after the revoke ({})",
            after.len()
        );
        let wrong: Vec<_> = after
            .iter()
            .filter(|(_, status, _)| *status != 404)
            .collect();
        assert!(
            wrong.is_empty(),
            "round {round}: validations started after the revoke's answer were not refused: {:?}",
            &wrong[..wrong.len().min(10)]
        );
        for node in [&a, &b] {
            let seen = cluster
                .get(
                    node,
                    &format!("/v1/license-keys/{}", str_of(key, "id")),
                    &token,
                )
                .await;
            seen.expect(200);
            assert_eq!(seen.body["status"], "revoked", "{}", seen.body);
        }
    }
    // The run went through the nodes' copies, not only through the store.
    assert!(metric(&cluster, &a, FROM_MEMORY).await > 100.0);
    assert!(metric(&cluster, &b, FROM_MEMORY).await > 100.0);
}

#[actix_web::test]
async fn the_listening_connection_killed_mid_run_gives_no_stale_answer_and_notifications_resume() {
    let Some(mut cluster) = Cluster::new("listener_killed") else {
        return;
    };
    let env = [("TOLLGATE__METRICS__TOKEN", METRICS_TOKEN)];
    let a = cluster.start("a", &env).await;
    let b = cluster.start("b", &env).await;
    let token = cluster.token("a");
    let (org, product, _) = cluster
        .shop(
            &a,
            &token,
            "listener",
            json!({}),
            json!({"type": "one_time", "amount_type": "free"}),
        )
        .await;
    let keys = cluster.buy_keys(&a, &token, &org, &product, 3).await;
    let (k, k2, k3) = (&keys[0], &keys[1], &keys[2]);
    for key in &keys {
        until_answered_from_memory(&cluster, &a, key).await;
    }
    assert_eq!(
        metric(&cluster, &a, "tollgate_store_listener{state=\"connected\"}").await,
        1.0
    );
    // Kill both nodes' listening connections from the database's side.
    let (db, connection) = tokio_postgres::connect(&cluster.url, tokio_postgres::NoTls)
        .await
        .expect("connecting to the test database");
    let conn = actix_web::rt::spawn(connection);
    let killed = db
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            &[&format!("tollgate-listen {}", cluster.schema)],
        )
        .await
        .expect("terminating the listeners");
    assert_eq!(killed.len(), 2, "one listener per node");
    // At once, before any node could reconnect: a revoke through B is refused on A.
    cluster
        .patch_key(&b, &token, k2, json!({"status": "revoked"}))
        .await
        .expect(200);
    for increment in [0, 1] {
        cluster
            .post(&a, VALIDATE, None, &validate_body(k2, increment))
            .await
            .expect_error(404);
    }
    // The listener comes back (and says so).
    let deadline = Instant::now() + Duration::from_secs(15);
    while metric(&cluster, &a, "tollgate_store_listener_reconnects_total").await < 1.0
        || metric(&cluster, &a, "tollgate_store_listener{state=\"connected\"}").await < 1.0
    {
        assert!(
            Instant::now() < deadline,
            "the listener never reconnected:\n{}",
            a.log_text()
        );
        sleep(Duration::from_millis(100)).await;
    }
    // Notifications resume: another revoke is refused at once, and validations of a key
    // nobody changed are answered from memory again.
    until_answered_from_memory(&cluster, &a, k3).await;
    cluster
        .patch_key(&b, &token, k3, json!({"status": "revoked"}))
        .await
        .expect(200);
    cluster
        .post(&a, VALIDATE, None, &validate_body(k3, 0))
        .await
        .expect_error(404);
    until_answered_from_memory(&cluster, &a, k).await;
    conn.abort();
}

/// Per key: (200 answers, usage granted).
type Counted = std::collections::HashMap<String, (i64, i64)>;

/// `total` validations spread over `keys` and `nodes` (every third one an increment),
/// 16 at a time; adds what was answered to `counted`.
async fn mixed_run(
    cluster: &Cluster,
    nodes: &[&Binary],
    keys: &[Value],
    total: usize,
    counted: &mut Counted,
) {
    let jobs: Vec<(usize, usize, i64)> = (0..total)
        .map(|i| {
            (
                i % nodes.len(),
                (i * 7 + i / 3) % keys.len(),
                i64::from(i % 3 == 0),
            )
        })
        .collect();
    for chunk in jobs.chunks(16) {
        let replies = join_all(chunk.iter().map(|&(n, k, inc)| async move {
            let r = cluster
                .post(nodes[n], VALIDATE, None, &validate_body(&keys[k], inc))
                .await;
            (k, inc, r)
        }))
        .await;
        for (k, inc, r) in replies {
            let entry = counted.entry(str_of(&keys[k], "id")).or_default();
            match r.status.as_u16() {
                200 => {
                    entry.0 += 1;
                    entry.1 += inc;
                }
                400 => {}
                other => panic!("unexpected answer {other}: {}", r.body),
            }
        }
    }
}

async fn assert_counted(
    cluster: &Cluster,
    node: &Binary,
    token: &str,
    keys: &[Value],
    counted: &Counted,
    when: &str,
) {
    for key in keys {
        let id = str_of(key, "id");
        let r = cluster
            .get(node, &format!("/v1/license-keys/{id}"), token)
            .await;
        r.expect(200);
        let (validations, usage) = counted.get(&id).copied().unwrap_or_default();
        assert_eq!(r.body["validations"], validations, "{when}: {}", r.body);
        assert_eq!(r.body["usage"], usage, "{when}: {}", r.body);
    }
}

#[actix_web::test]
async fn validations_equal_successes_after_a_mixed_run_over_two_nodes() {
    let Some(mut cluster) = Cluster::new("mixed_counters") else {
        return;
    };
    let mut a = cluster.start("a", &[]).await;
    let mut b = cluster.start("b", &[]).await;
    let token = cluster.token("a");
    let free = json!({"type": "one_time", "amount_type": "free"});
    let (org, product, _) = cluster
        .shop(&a, &token, "mixed", json!({}), free.clone())
        .await;
    let (org_l, product_l, _) = cluster
        .shop(
            &a,
            &token,
            "mixed-limited",
            json!({"limit_usage": 50}),
            free,
        )
        .await;
    let mut keys = cluster.buy_keys(&a, &token, &org, &product, 5).await;
    keys.extend(cluster.buy_keys(&b, &token, &org_l, &product_l, 5).await);
    assert_eq!(keys.len(), 10);
    let mut counted = Counted::new();
    mixed_run(&cluster, &[&a, &b], &keys, 2000, &mut counted).await;
    // Limited keys were refused past 50.
    assert!(
        counted.values().any(|(_, usage)| *usage == 50),
        "{counted:?}"
    );
    // A graceful stop writes every count.
    a.sigterm();
    b.sigterm();
    assert!(a.wait_exit(Duration::from_secs(30)).await.success());
    assert!(b.wait_exit(Duration::from_secs(30)).await.success());
    drop((a, b));
    let a = cluster.start("a", &[]).await;
    assert_counted(
        &cluster,
        &a,
        &token,
        &keys,
        &counted,
        "after a graceful stop",
    )
    .await;

    // kill -9 loses at most the counts of the last interval (stats_flush_ms = 1000): none
    // once an interval and a half passed without validations.
    let b = cluster.start("b", &[]).await;
    mixed_run(&cluster, &[&a, &b], &keys, 1000, &mut counted).await;
    sleep(Duration::from_millis(1500)).await;
    a.kill_9_now();
    b.kill_9_now();
    drop((a, b));
    let a = cluster.start("a", &[]).await;
    assert_counted(&cluster, &a, &token, &keys, &counted, "after kill -9").await;
}
