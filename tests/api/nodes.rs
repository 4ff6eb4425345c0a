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
struct Cluster {
    root: TempDir,
    url: String,
    schema: String,
    /// Drops the schema when the test ends.
    _db: tollgate_storage::testing::Dropper,
    client: reqwest::Client,
    started: u32,
}

impl Cluster {
    /// `None`: no database (skipped).
    fn new(test: &str) -> Option<Cluster> {
        let db = tollgate_storage::testing::fresh_schema(test)?;
        Some(Cluster {
            root: tempfile::tempdir().expect("creating a temporary directory"),
            url: db.url.clone(),
            schema: db.schema.clone(),
            _db: db,
            client: client(),
            started: 0,
        })
    }

    fn data_dir(&self, node: &str) -> PathBuf {
        self.root.path().join(node)
    }

    /// Starts node `name` (its own data directory, the shared schema) with `extra_env`,
    /// and waits until it is ready.
    async fn start(&mut self, name: &str, extra_env: &[(&str, &str)]) -> Binary {
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
    fn token(&self, first: &str) -> String {
        std::fs::read_to_string(self.data_dir(first).join(TOKEN_FILE))
            .expect("reading the bootstrap token")
            .trim()
            .to_string()
    }

    async fn send(
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

    async fn post(&self, node: &Binary, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.send(node, reqwest::Method::POST, path, token, Some(body))
            .await
            .unwrap_or_else(|e| panic!("POST {path}: {e}"))
    }

    async fn get(&self, node: &Binary, path: &str, token: &str) -> Reply {
        self.send(node, reqwest::Method::GET, path, Some(token), None)
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }

    /// An organization selling one free product whose license-key benefit has
    /// `properties`; returns (organization id, product id, benefit id).
    async fn shop(
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
    async fn buy_key(&self, node: &Binary, token: &str, org: &str, product: &str) -> Value {
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

fn str_of(v: &Value, field: &str) -> String {
    v[field]
        .as_str()
        .unwrap_or_else(|| panic!("no string {field} in {v}"))
        .to_string()
}

fn validate_body(key: &Value, increment: i64) -> Value {
    json!({
        "key": key["key"],
        "organization_id": key["organization_id"],
        "increment_usage": increment,
    })
}

const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";

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
    let r = cluster
        .get(
            node,
            &format!("/v1/license-keys/{}", str_of(key, "id")),
            token,
        )
        .await;
    r.expect(200);
    r.body["usage"].as_i64().expect("usage")
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
