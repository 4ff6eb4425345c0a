//! Two `tollgate` nodes on a PostgreSQL primary with a synchronous standby
//! (`pgpair::PgPair`, issue 53): the database fails over, or cuts connections, under the
//! nodes' feet, and what either node acknowledged holds.
//!
//! The nodes (the real binary, `binary::Binary`) reach the database through the pair's
//! multi-host URL, `target_session_attrs=read-write`, each with an `application_name` of its
//! own (`node-a`, `node-b`). Every answer of a run is kept with the instant its request was
//! sent, and checked: 200/201, a refusal by rule (a usage limit, a revoked key), or 503
//! with `Retry-After`; anything else, a transport error included, fails the test with the
//! answers and the logs.
//!
//! - `failover`: purchases and usage increments on both nodes, `kill -9` of the primary's
//!   postmaster, `pg_ctl promote` of the standby; every acknowledged purchase is there
//!   once, the usage of the key is exact (up to increments left in doubt by a 503) and
//!   within its limit, and both nodes write again.
//! - `listeners_cut`, `node_cut`: a key revoked through node B while validations run on
//!   both nodes and the listeners' connections (or all of node A's connections) are cut:
//!   no validation sent after the revoke's answer succeeds, and the nodes recover.
//!
//! Skipped (a failure under `CI`) without the PostgreSQL 15 binaries.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::rt::task::spawn_blocking;
use actix_web::rt::time::sleep;
use futures_util::future::join_all;
use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::bootstrap::TOKEN_FILE;

use crate::binary::{server_pid, Binary};
use crate::helpers::{client, Reply};
use crate::pgpair::PgPair;

/// A node's start on the pair (the schema's creation by the first included).
const READY_DEADLINE: Duration = Duration::from_secs(60);
/// Every request, however loaded the machine: a node waits at most 10 s for a
/// connection before it answers 503.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Until both nodes serve writes after a failover or a cut: generous, the machine is
/// slow and shared (the times measured are printed).
const RECOVERY_DEADLINE: Duration = Duration::from_secs(60);
/// Until a condition of the load (enough acknowledged before the kill, the limit reached
/// after it) holds.
const LOAD_DEADLINE: Duration = Duration::from_secs(120);
const SCHEMA: &str = "tollgate";
const METRICS_TOKEN: &str = "failover-metrics-token-0123456789abcdef";
const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";
/// How long a lane waits after a 503 before its next request (a client honouring the
/// answer, without waiting the whole `Retry-After`).
const BACK_OFF: Duration = Duration::from_millis(100);

// ------------------------------------------------------------------------ the nodes

/// A pair and the nodes started on it.
struct Nodes {
    pair: Arc<PgPair>,
    root: TempDir,
    client: reqwest::Client,
    started: u32,
}

/// A started node: its name (`a`, `b`) and its process.
struct Node {
    name: &'static str,
    bin: Binary,
}

impl Nodes {
    /// `None`: no PostgreSQL 15 binaries (skipped).
    fn new(test: &str) -> Option<Nodes> {
        let pair = PgPair::start(test, false)?;
        Some(Nodes {
            pair: Arc::new(pair),
            root: tempfile::tempdir().expect("creating a temporary directory"),
            client: client(),
            started: 0,
        })
    }

    fn data_dir(&self, name: &str) -> std::path::PathBuf {
        self.root.path().join(name)
    }

    /// Starts node `name` on the pair (`application_name = node-<name>`), with its metrics
    /// open to [`METRICS_TOKEN`] and sweeps every second (a checkout left confirmed by a
    /// failed confirm is completed within seconds), and waits until it is ready.
    async fn start(&mut self, name: &'static str) -> Node {
        self.started += 1;
        let data = self.data_dir(name);
        std::fs::create_dir_all(&data).expect("creating the data directory");
        let url = self.pair.url(&format!("node-{name}"));
        let env: Vec<(&str, &str)> = vec![
            ("TOLLGATE__STORAGE__BACKEND", "postgres"),
            ("TOLLGATE__STORAGE__URL", &url),
            ("TOLLGATE__STORAGE__SCHEMA", SCHEMA),
            ("TOLLGATE__STORAGE__POOL_SIZE", "8"),
            ("TOLLGATE__METRICS__TOKEN", METRICS_TOKEN),
            ("TOLLGATE__JOBS__SWEEP_INTERVAL_SECS", "1"),
            ("TOLLGATE__JOBS__CONFIRMED_GRACE_SECS", "1"),
        ];
        let bin = Binary::start(
            self.root.path(),
            &data,
            &format!("{name}-{}.log", self.started),
            &env,
            READY_DEADLINE,
        )
        .await;
        Node { name, bin }
    }

    /// The bootstrap admin's token, written by the first node that started.
    fn token(&self, first: &str) -> String {
        std::fs::read_to_string(self.data_dir(first).join(TOKEN_FILE))
            .expect("reading the bootstrap token")
            .trim()
            .to_string()
    }

    /// One request, its answer kept as an [`Answer`] (with the body, for the caller).
    async fn call(
        &self,
        node: &Node,
        kind: Kind,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> (Answer, Value) {
        let mut req = self
            .client
            .request(method, format!("{}{path}", node.bin.address))
            .timeout(REQUEST_TIMEOUT);
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(body);
        }
        let sent = Instant::now();
        match req.send().await {
            Ok(resp) => {
                let r = Reply::read(resp).await;
                let answer = Answer {
                    node: node.name,
                    kind,
                    sent,
                    answered: Instant::now(),
                    status: Some(r.status.as_u16()),
                    retry_after: r.headers.contains_key(reqwest::header::RETRY_AFTER),
                    detail: r.body["detail"].to_string(),
                };
                (answer, r.body)
            }
            Err(e) => {
                let answer = Answer {
                    node: node.name,
                    kind,
                    sent,
                    answered: Instant::now(),
                    status: None,
                    retry_after: false,
                    detail: e.to_string(),
                };
                (answer, Value::Null)
            }
        }
    }

    /// A request of the set-up or the checks: `status` expected, the body returned.
    async fn must(
        &self,
        node: &Node,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
        status: u16,
    ) -> Value {
        let (answer, body) = self
            .call(node, Kind::Setup, method.clone(), path, token, body)
            .await;
        assert_eq!(
            answer.status,
            Some(status),
            "{method} {path} on node {}: {answer:?} {body}",
            node.name
        );
        body
    }

    async fn get(&self, node: &Node, path: &str, token: &str) -> Value {
        self.must(node, reqwest::Method::GET, path, Some(token), None, 200)
            .await
    }

    /// An organization selling one free product whose license-key benefit has
    /// `properties`: (organization id, product id).
    async fn shop(
        &self,
        node: &Node,
        token: &str,
        slug: &str,
        properties: Value,
    ) -> (String, String) {
        let post = reqwest::Method::POST;
        let org = self
            .must(
                node,
                post.clone(),
                "/v1/organizations/",
                Some(token),
                Some(&json!({"name": format!("Org {slug}"), "slug": slug})),
                201,
            )
            .await;
        let org = str_of(&org, "id");
        let benefit = self
            .must(
                node,
                post.clone(),
                "/v1/benefits/",
                Some(token),
                Some(&json!({"type": "license_keys", "description": "License", "organization_id": org, "properties": properties})),
                201,
            )
            .await;
        let product = self
            .must(
                node,
                post.clone(),
                "/v1/products/",
                Some(token),
                Some(&json!({"name": "App", "organization_id": org, "prices": [{"type": "one_time", "amount_type": "free"}]})),
                201,
            )
            .await;
        let product = str_of(&product, "id");
        self.must(
            node,
            post,
            &format!("/v1/products/{product}/benefits"),
            Some(token),
            Some(&json!({"benefits": [str_of(&benefit, "id")]})),
            200,
        )
        .await;
        (org, product)
    }

    /// A validation of `body` on `node`, kept as a `kind` answer, with its body.
    async fn validate(&self, node: &Node, kind: Kind, body: &Value) -> (Answer, Value) {
        self.call(
            node,
            kind,
            reqwest::Method::POST,
            VALIDATE,
            None,
            Some(body),
        )
        .await
    }

    /// `POST /v1/checkouts/custom/` of `product` on `node`: the answer and its body.
    async fn create_checkout(&self, node: &Node, token: &str, product: &str) -> (Answer, Value) {
        self.call(
            node,
            Kind::Checkout,
            reqwest::Method::POST,
            "/v1/checkouts/custom/",
            Some(token),
            Some(&json!({"payment_processor": "stripe", "product_id": product})),
        )
        .await
    }

    /// A purchase of `product` on `node` by `email` (a customer of its own): the checkout,
    /// then its confirmation. Returns the answers and the checkout's id (`None`: not
    /// created).
    async fn purchase(
        &self,
        node: &Node,
        token: &str,
        product: &str,
        email: &str,
    ) -> (Vec<Answer>, Option<String>, bool) {
        let (created, checkout) = self.create_checkout(node, token, product).await;
        if created.status != Some(201) {
            return (vec![created], None, false);
        }
        let (id, secret) = (str_of(&checkout, "id"), str_of(&checkout, "client_secret"));
        let (confirmed, _) = self
            .call(
                node,
                Kind::Confirm,
                reqwest::Method::POST,
                &format!("/v1/checkouts/custom/client/{secret}/confirm"),
                None,
                Some(&json!({"customer_name": "Ada", "customer_email": email, "customer_billing_address": {"country": "FR"}})),
            )
            .await;
        let acknowledged = confirmed.status == Some(200);
        (vec![created, confirmed], Some(id), acknowledged)
    }

    /// Every item of a paginated list (`path` has its query, without `page`/`limit`).
    async fn all(&self, node: &Node, token: &str, path: &str) -> Vec<Value> {
        let mut items = Vec::new();
        for page in 1.. {
            let body = self
                .get(node, &format!("{path}&limit=100&page={page}"), token)
                .await;
            items.extend(body["items"].as_array().expect("items").iter().cloned());
            let max_page = body["pagination"]["max_page"].as_u64().expect("max_page");
            if page >= max_page {
                break;
            }
        }
        items
    }

    /// `value` of the metric line that starts with `series` on `node` (0 when absent).
    async fn metric(&self, node: &Node, series: &str) -> f64 {
        let body = self.get(node, "/metrics", METRICS_TOKEN).await;
        let Value::String(text) = &body else {
            panic!("metrics are not text: {body}")
        };
        text.lines()
            .find(|l| l.starts_with(series))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    }

    /// Both nodes' and both servers' logs (their last lines), for a failure message.
    fn logs(&self, nodes: &[&Node]) -> String {
        let mut text = String::new();
        for node in nodes {
            text.push_str(&format!(
                "--- node {}\n{}\n",
                node.name,
                tail(&node.bin.log_text(), 150)
            ));
        }
        text.push_str(&tail(&self.pair.log_text(), 150));
        text
    }
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
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

// ------------------------------------------------------------------------ the answers

/// What a request was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Set-up and checks (not part of a run's answers).
    Setup,
    /// `POST /v1/checkouts/custom/`.
    Checkout,
    /// A checkout's confirmation (the purchase).
    Confirm,
    /// A validation with `increment_usage: 1` of a key with a usage limit.
    Increment,
    /// A validation of a key that may have been revoked.
    Validate,
    /// The revoke (`PATCH` of the key's status).
    Revoke,
}

/// One answer of a run.
#[derive(Debug)]
struct Answer {
    node: &'static str,
    kind: Kind,
    sent: Instant,
    /// When its answer (or its failure) came.
    answered: Instant,
    /// `None`: no answer (a transport error or the client's timeout).
    status: Option<u16>,
    retry_after: bool,
    /// The error's `detail`, or the transport error.
    detail: String,
}

impl Answer {
    /// 200/201, a refusal by rule (a usage limit reached, a revoked key), or 503 with
    /// `Retry-After`.
    fn by_rule(&self) -> bool {
        match (self.kind, self.status) {
            (_, Some(200 | 201)) => true,
            (_, Some(503)) => self.retry_after,
            // "License key only has 0 more usages."
            (Kind::Increment, Some(400)) => self.detail.contains("more usages"),
            (Kind::Validate, Some(404)) => true,
            _ => false,
        }
    }

    fn ok(&self) -> bool {
        matches!(self.status, Some(200 | 201))
    }
}

/// Asserts that every answer of a run was by rule, printing the wrong ones (at most 20)
/// and the logs otherwise.
fn assert_by_rule(nodes: &Nodes, all: &[&Node], answers: &[Answer], started: Instant) {
    let wrong: Vec<String> = answers
        .iter()
        .filter(|a| !a.by_rule())
        .map(|a| format!("{:?} at +{:?}", a, a.sent.duration_since(started)))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} answers out of {} were neither 200/201, a refusal by rule nor 503 with \
         Retry-After:\n{}\n{}",
        wrong.len(),
        answers.len(),
        wrong[..wrong.len().min(20)].join("\n"),
        nodes.logs(all)
    );
}

/// Counts of answers by (node, kind, status), for the report.
fn summary(answers: &[Answer], from: Instant, until: Option<Instant>) -> String {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for a in answers
        .iter()
        .filter(|a| a.sent >= from && until.is_none_or(|u| a.sent < u))
    {
        let status = a.status.map_or("none".to_string(), |s| s.to_string());
        *counts
            .entry(format!("{}/{:?}/{status}", a.node, a.kind))
            .or_default() += 1;
    }
    counts
        .iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Polls `node` with a write (a checkout created) until it answers 201; returns how long
/// that took. Every answer is kept; fails, with the logs, past [`RECOVERY_DEADLINE`].
async fn until_writes(
    nodes: &Nodes,
    node: &Node,
    all: &[&Node],
    token: &str,
    product: &str,
    answers: &RefCell<Vec<Answer>>,
) -> Duration {
    let started = Instant::now();
    loop {
        let (answer, _) = nodes.create_checkout(node, token, product).await;
        let ok = answer.ok();
        answers.borrow_mut().push(answer);
        if ok {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < RECOVERY_DEADLINE,
            "node {} did not write again within {RECOVERY_DEADLINE:?}:\n{}",
            node.name,
            nodes.logs(all)
        );
        sleep(BACK_OFF).await;
    }
}

// ------------------------------------------------------------------------ failover

/// Increments acknowledged before the kill (at least; the increment lanes wait at 50 more
/// until the kill, so that the limit is reached after the failover).
const BEFORE_KILL: usize = 150;
/// The counted key's limit.
const LIMIT: usize = 300;
/// Between the kill and the promotion: the nodes find no primary.
const OUTAGE: Duration = Duration::from_millis(1500);

/// A purchase of the run.
#[derive(Debug)]
struct Purchase {
    checkout: String,
    acknowledged: bool,
}

#[actix_web::test]
async fn failover_under_mixed_load_keeps_every_acknowledged_purchase_and_increment() {
    let Some(mut nodes) = Nodes::new("failover") else {
        return;
    };
    let a = nodes.start("a").await;
    let b = nodes.start("b").await;
    let all = [&a, &b];
    let token = nodes.token("a");
    let (org, product) = nodes
        .shop(&a, &token, "failover", json!({"limit_usage": LIMIT}))
        .await;
    let (_, _, bought) = nodes
        .purchase(&a, &token, &product, "counted@example.com")
        .await;
    assert!(bought, "the counted key's purchase failed");
    let keys = nodes
        .all(
            &a,
            &token,
            &format!("/v1/license-keys/?organization_id={org}"),
        )
        .await;
    let counted = keys[0].clone();
    assert_eq!(counted["limit_usage"], LIMIT, "{counted}");

    let answers: RefCell<Vec<Answer>> = RefCell::new(Vec::new());
    let purchases: RefCell<Vec<Purchase>> = RefCell::new(Vec::new());
    let stop = Cell::new(false);
    let killed = Cell::new(false);
    let incremented = Cell::new(0usize);
    let started = Instant::now();
    let succeeded = |kind: Kind| {
        answers
            .borrow()
            .iter()
            .filter(|x| x.kind == kind && x.ok())
            .count()
    };

    // Two purchase lanes and four increment lanes per node, until told to stop.
    let buyers = (0..4).map(|lane| {
        let node = all[lane % 2];
        let (nodes, token, product) = (&nodes, &token, &product);
        let (answers, purchases, stop) = (&answers, &purchases, &stop);
        async move {
            let mut i = 0;
            while !stop.get() {
                let email = format!("buyer-{lane}-{i}@example.com");
                i += 1;
                let (got, checkout, acknowledged) =
                    nodes.purchase(node, token, product, &email).await;
                let unavailable = got.iter().any(|x| x.status == Some(503));
                answers.borrow_mut().extend(got);
                if let Some(checkout) = checkout {
                    purchases.borrow_mut().push(Purchase {
                        checkout,
                        acknowledged,
                    });
                }
                if unavailable {
                    sleep(BACK_OFF).await;
                }
            }
        }
    });
    let incrementers = (0..8).map(|lane| {
        let node = all[lane % 2];
        let body = validate_body(&counted, 1);
        let (nodes, answers, stop) = (&nodes, &answers, &stop);
        let (killed, incremented) = (&killed, &incremented);
        async move {
            while !stop.get() {
                if !killed.get() && incremented.get() >= BEFORE_KILL + 50 {
                    sleep(Duration::from_millis(10)).await;
                    continue;
                }
                let (answer, _) = nodes.validate(node, Kind::Increment, &body).await;
                let status = answer.status;
                if answer.ok() {
                    incremented.set(incremented.get() + 1);
                }
                answers.borrow_mut().push(answer);
                match status {
                    Some(503) => sleep(BACK_OFF).await,
                    // The limit is reached: no need to spin on it.
                    Some(400) => sleep(Duration::from_millis(20)).await,
                    _ => {}
                }
            }
        }
    });

    let timeline = RefCell::new(Vec::<(&str, Instant)>::new());
    let recovered = RefCell::new(Vec::<(&str, Duration)>::new());
    let controller = async {
        // Enough acknowledged on both kinds before the primary dies.
        let deadline = Instant::now() + LOAD_DEADLINE;
        while succeeded(Kind::Increment) < BEFORE_KILL || succeeded(Kind::Confirm) < 2 {
            assert!(
                Instant::now() < deadline,
                "too little acknowledged before the kill: {}\n{}",
                summary(&answers.borrow(), started, None),
                nodes.logs(&all)
            );
            sleep(Duration::from_millis(20)).await;
        }
        timeline.borrow_mut().push(("killing", Instant::now()));
        nodes.pair.kill_primary();
        killed.set(true);
        timeline.borrow_mut().push(("killed", Instant::now()));
        // Its backends end on their own once they notice; from then on nothing can commit
        // until the promotion.
        nodes.pair.wait_primary_gone();
        timeline.borrow_mut().push(("gone", Instant::now()));
        sleep(OUTAGE).await;
        let pair = nodes.pair.clone();
        timeline.borrow_mut().push(("promoting", Instant::now()));
        spawn_blocking(move || pair.promote())
            .await
            .expect("promoting the standby");
        timeline.borrow_mut().push(("promoted", Instant::now()));
        // Both nodes write again.
        let probes = all.iter().map(|node| {
            let (nodes, token, product, answers) = (&nodes, &token, &product, &answers);
            let recovered = &recovered;
            async move {
                let took = until_writes(nodes, node, &all, token, product, answers).await;
                recovered.borrow_mut().push((node.name, took));
            }
        });
        join_all(probes).await;
        // The run goes on until the limit is reached on both nodes and each acknowledged
        // a purchase after the promotion.
        let promoted = Instant::now();
        let deadline = promoted + LOAD_DEADLINE;
        loop {
            let done = all.iter().all(|node| {
                let answers = answers.borrow();
                let after = |kind: Kind, status: u16| {
                    answers.iter().any(|x| {
                        x.node == node.name
                            && x.kind == kind
                            && x.status == Some(status)
                            && x.sent >= promoted
                    })
                };
                after(Kind::Increment, 400) && after(Kind::Confirm, 200)
            });
            if done {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the run did not reach the limit after the failover: {}\n{}",
                summary(&answers.borrow(), promoted, None),
                nodes.logs(&all)
            );
            sleep(Duration::from_millis(50)).await;
        }
        stop.set(true);
    };
    futures_util::future::join3(join_all(buyers), join_all(incrementers), controller).await;
    let answers = answers.into_inner();
    let purchases = purchases.into_inner();
    let timeline = timeline.into_inner();
    let at = |what: &str| {
        timeline
            .iter()
            .find(|(w, _)| *w == what)
            .map(|(_, t)| *t)
            .expect("a step of the timeline")
    };
    let (killing, killed, gone, promoting, promoted) = (
        at("killing"),
        at("killed"),
        at("gone"),
        at("promoting"),
        at("promoted"),
    );
    let in_flight = answers
        .iter()
        .filter(|x| x.sent < killing && x.answered > killed)
        .map(|x| format!("{}/{:?}/{:?}", x.node, x.kind, x.status))
        .collect::<Vec<_>>();
    eprintln!(
        "failover: sent before the kill ({:?} into the run): {}\n\
         in flight at the kill: {in_flight:?}\n\
         the old primary's processes gone {:?} after the kill\n\
         sent while there was no primary ({:?}): {}\n\
         sent during the promotion ({:?}): {}\n\
         sent after it: {}\n\
         writes again after the promotion: {:?}",
        killing.duration_since(started),
        summary(&answers, started, Some(killing)),
        gone.duration_since(killed),
        promoting.duration_since(killed),
        summary(&answers, killing, Some(promoting)),
        promoted.duration_since(promoting),
        summary(&answers, promoting, Some(promoted)),
        summary(&answers, promoted, None),
        recovered.borrow()
    );
    assert_by_rule(&nodes, &all, &answers, started);
    // Nothing was acknowledged as written while there was no primary at all.
    let phantom: Vec<_> = answers
        .iter()
        .filter(|x| x.ok() && x.sent > gone && x.answered < promoting)
        .collect();
    assert!(
        phantom.is_empty(),
        "acknowledged while no primary existed: {phantom:?}\n{}",
        nodes.logs(&all)
    );

    // Checkouts whose confirmation was not acknowledged may have been confirmed: the sweep
    // completes those (once) or they stay open.
    let deadline = Instant::now() + RECOVERY_DEADLINE;
    for p in purchases.iter().filter(|p| !p.acknowledged) {
        loop {
            let c = nodes
                .get(&a, &format!("/v1/checkouts/custom/{}", p.checkout), &token)
                .await;
            if c["status"] != "confirmed" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "checkout {} left confirmed: {c}\n{}",
                p.checkout,
                nodes.logs(&all)
            );
            sleep(Duration::from_millis(200)).await;
        }
    }

    let acknowledged: Vec<&Purchase> = purchases.iter().filter(|p| p.acknowledged).collect();
    let increments_ok = answers
        .iter()
        .filter(|x| x.kind == Kind::Increment && x.ok())
        .count() as i64;
    // An increment answered 503 whose statement had reached the old primary may have been
    // committed there and streamed to the standby before its connection died: in doubt.
    // One sent once the old primary was gone was not: its node's attempts found no
    // primary (a later one on the promoted standby would have answered 200).
    let in_doubt = answers
        .iter()
        .filter(|x| x.kind == Kind::Increment && x.status == Some(503) && x.sent < gone)
        .count() as i64;
    let mut seen_by: Vec<(HashSet<String>, HashSet<String>, i64)> = Vec::new();
    for node in all {
        let orders = nodes
            .all(node, &token, &format!("/v1/orders/?organization_id={org}"))
            .await;
        let keys = nodes
            .all(
                node,
                &token,
                &format!("/v1/license-keys/?organization_id={org}"),
            )
            .await;
        // No order twice: one per checkout, one per customer (each purchase had its own).
        let mut by_checkout: HashMap<String, usize> = HashMap::new();
        let mut customers: HashSet<String> = HashSet::new();
        for order in &orders {
            *by_checkout.entry(str_of(order, "checkout_id")).or_default() += 1;
            assert!(
                customers.insert(str_of(order, "customer_id")),
                "node {}: two orders for one customer: {order}",
                node.name
            );
        }
        let twice: Vec<_> = by_checkout.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "node {}: orders twice: {twice:?}",
            node.name
        );
        // No key twice: one per customer with an order, and no other.
        let mut key_values: HashSet<String> = HashSet::new();
        let mut key_customers: HashMap<String, usize> = HashMap::new();
        for key in &keys {
            assert!(
                key_values.insert(str_of(key, "key")),
                "node {}: one key value twice: {key}",
                node.name
            );
            *key_customers.entry(str_of(key, "customer_id")).or_default() += 1;
        }
        assert_eq!(
            key_customers.keys().cloned().collect::<HashSet<_>>(),
            customers,
            "node {}: the keys' customers are not the orders' customers",
            node.name
        );
        let doubled: Vec<_> = key_customers.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            doubled.is_empty(),
            "node {}: keys twice: {doubled:?}",
            node.name
        );
        // Every acknowledged purchase is there.
        let missing: Vec<_> = acknowledged
            .iter()
            .filter(|p| !by_checkout.contains_key(&p.checkout))
            .collect();
        assert!(
            missing.is_empty(),
            "node {}: acknowledged purchases without their order: {missing:?}",
            node.name
        );
        // The counted key: every acknowledged increment, and no more than those plus the
        // ones in doubt; never past the limit, which the run reached.
        let usage = nodes
            .get(
                node,
                &format!("/v1/license-keys/{}", str_of(&counted, "id")),
                &token,
            )
            .await["usage"]
            .as_i64()
            .expect("usage");
        assert!(
            usage >= increments_ok && usage <= increments_ok + in_doubt,
            "node {}: usage {usage}, {increments_ok} increments acknowledged, {in_doubt} \
             answered 503 from the old primary",
            node.name
        );
        assert_eq!(
            usage, LIMIT as i64,
            "node {}: the limit was reached",
            node.name
        );
        seen_by.push((by_checkout.into_keys().collect(), key_values, usage));
    }
    assert_eq!(
        seen_by[0], seen_by[1],
        "the nodes see different orders or keys"
    );
    eprintln!(
        "failover: {} purchases acknowledged ({} attempted), {} orders; {increments_ok} \
         increments acknowledged, {in_doubt} answered 503 from the old primary, usage {}",
        acknowledged.len(),
        purchases.len(),
        seen_by[0].0.len(),
        seen_by[0].2
    );
}

// ------------------------------------------------------------------------ cuts and revokes

const FROM_MEMORY: &str = "tollgate_license_validation_paths_total{path=\"memory\"}";

/// Validates `key` on `node` until one answer came from the node's copy (its listener is
/// connected and caught up), within [`RECOVERY_DEADLINE`].
async fn until_answered_from_memory(nodes: &Nodes, node: &Node, all: &[&Node], key: &Value) {
    let before = nodes.metric(node, FROM_MEMORY).await;
    let deadline = Instant::now() + RECOVERY_DEADLINE;
    loop {
        let (answer, body) = nodes
            .validate(node, Kind::Setup, &validate_body(key, 0))
            .await;
        if answer.ok() && nodes.metric(node, FROM_MEMORY).await > before {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "node {}: no validation answered from memory ({answer:?} {body}):\n{}",
            node.name,
            nodes.logs(all)
        );
        sleep(Duration::from_millis(50)).await;
    }
}

/// What is cut while a key is revoked.
#[derive(Clone, Copy, Debug)]
enum Cut {
    /// Both nodes' listening connections (`application_name` starting with
    /// `tollgate-listen`).
    Listeners,
    /// Every connection of node A: its pool's and its job locks' (`node-a`), and its
    /// listener's (found by the node's sockets: the listener names itself).
    NodeA,
}

/// The local ports of `pid`'s TCP connections to `server_port` on loopback (its sockets'
/// inodes found in `/proc/<pid>/net/tcp`).
fn client_ports(pid: u32, server_port: u16) -> Vec<u16> {
    let inodes: HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("reading the node's descriptors")
        .filter_map(|e| {
            let link = std::fs::read_link(e.ok()?.path()).ok()?;
            let link = link.to_str()?;
            Some(
                link.strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .to_string(),
            )
        })
        .collect();
    let port_of = |address: &str| {
        address
            .rsplit(':')
            .next()
            .and_then(|p| u16::from_str_radix(p, 16).ok())
    };
    std::fs::read_to_string(format!("/proc/{pid}/net/tcp"))
        .expect("reading the node's TCP table")
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, remote, inode) = (fields.get(1)?, fields.get(2)?, fields.get(9)?);
            (port_of(remote)? == server_port && inodes.contains(*inode))
                .then(|| port_of(local))
                .flatten()
        })
        .collect()
}

/// Three rounds, a fresh key each: validations of the key on both nodes (sixteen lanes,
/// eight per node, a quarter of them increments), `cut` and a revoke of the key through
/// node B (the cut before the revoke is sent, 30 ms after, 80 ms after: the revoke answers
/// a trust window, 100 ms, after its commit), the lanes going on for a second after the
/// revoke's answer. No validation sent after that answer succeeds, on either node; the
/// nodes validate another key and write again afterwards.
async fn no_stale_answer_after_a_revoke_while(test: &str, cut: Cut) {
    let Some(mut nodes) = Nodes::new(test) else {
        return;
    };
    let a = nodes.start("a").await;
    let b = nodes.start("b").await;
    let all = [&a, &b];
    let token = nodes.token("a");
    let (org, product) = nodes
        .shop(&a, &token, &test.replace('_', "-"), json!({}))
        .await;
    for i in 0..4 {
        let (_, _, bought) = nodes
            .purchase(&a, &token, &product, &format!("buyer-{i}@example.com"))
            .await;
        assert!(bought, "a purchase of the set-up failed");
    }
    let keys = nodes
        .all(
            &a,
            &token,
            &format!("/v1/license-keys/?organization_id={org}"),
        )
        .await;
    let (spare, keys) = keys.split_last().expect("four keys");
    let a_pid = server_pid(&nodes.data_dir("a"));

    for (round, key) in keys.iter().enumerate() {
        for node in all {
            until_answered_from_memory(&nodes, node, &all, key).await;
        }
        let answers: RefCell<Vec<Answer>> = RefCell::new(Vec::new());
        let stop = Cell::new(false);
        let started = Instant::now();
        let lanes = (0..16).map(|lane| {
            let node = all[lane % 2];
            let (nodes, answers, stop) = (&nodes, &answers, &stop);
            async move {
                let mut i = 0;
                while !stop.get() {
                    let body = validate_body(key, i64::from(i % 4 == 3));
                    i += 1;
                    let (answer, _) = nodes.validate(node, Kind::Validate, &body).await;
                    let unavailable = answer.status == Some(503);
                    answers.borrow_mut().push(answer);
                    if unavailable {
                        sleep(BACK_OFF).await;
                    }
                }
            }
        });
        let answered: Cell<Option<Instant>> = Cell::new(None);
        let cut_names: RefCell<Vec<String>> = RefCell::new(Vec::new());
        let cut_done = Cell::new(false);
        let revoker = async {
            sleep(Duration::from_millis(500)).await;
            let pair = nodes.pair.clone();
            let cutting = async {
                let delay = [0, 30, 80][round % 3];
                if delay > 0 {
                    sleep(Duration::from_millis(delay)).await;
                }
                let names = spawn_blocking(move || {
                    let condition = match cut {
                        Cut::Listeners => "starts_with(application_name, 'tollgate-listen')".into(),
                        Cut::NodeA => {
                            let ports = client_ports(a_pid, pair.primary_port());
                            let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
                            format!(
                                "application_name = 'node-a' OR client_port IN ({})",
                                if ports.is_empty() {
                                    "0".into()
                                } else {
                                    ports.join(",")
                                }
                            )
                        }
                    };
                    pair.terminate_where(&condition)
                })
                .await
                .expect("cutting connections");
                *cut_names.borrow_mut() = names;
                cut_done.set(true);
            };
            let revoking = async {
                if round % 3 == 0 {
                    // Cut first: the revoke is sent once the connections are gone.
                    while !cut_done.get() {
                        sleep(Duration::from_millis(5)).await;
                    }
                }
                let (answer, body) = nodes
                    .call(
                        &b,
                        Kind::Revoke,
                        reqwest::Method::PATCH,
                        &format!("/v1/license-keys/{}", str_of(key, "id")),
                        Some(&token),
                        Some(&json!({"status": "revoked"})),
                    )
                    .await;
                answered.set(Some(Instant::now()));
                assert_eq!(
                    answer.status,
                    Some(200),
                    "round {round}: the revoke through B: {answer:?} {body}\n{}",
                    nodes.logs(&all)
                );
                answers.borrow_mut().push(answer);
            };
            futures_util::future::join(cutting, revoking).await;
            sleep(Duration::from_millis(1000)).await;
            stop.set(true);
        };
        futures_util::future::join(join_all(lanes), revoker).await;
        let answers = answers.into_inner();
        let answered = answered.get().expect("the revoke was answered");
        let cut_names = cut_names.into_inner();
        eprintln!(
            "{test} round {round}: cut {cut_names:?}; before the revoke's answer: {}; after: {}",
            summary(&answers, started, Some(answered)),
            summary(&answers, answered, None)
        );
        assert_by_rule(&nodes, &all, &answers, started);
        let listeners = cut_names
            .iter()
            .filter(|n| n.starts_with("tollgate-listen"))
            .count();
        match cut {
            Cut::Listeners => assert_eq!(listeners, 2, "round {round}: {cut_names:?}"),
            Cut::NodeA => {
                assert_eq!(listeners, 1, "round {round}: A's listener: {cut_names:?}");
                assert!(
                    cut_names.iter().any(|n| n == "node-a"),
                    "round {round}: none of A's pool: {cut_names:?}"
                );
                assert!(
                    !cut_names.iter().any(|n| n == "node-b"),
                    "round {round}: B's connections cut: {cut_names:?}"
                );
            }
        }
        let validations = |x: &&Answer| x.kind == Kind::Validate;
        let before = answers
            .iter()
            .filter(validations)
            .filter(|x| x.sent < answered && x.ok())
            .count();
        assert!(
            before > 0,
            "round {round}: nothing validated before the revoke"
        );
        let after: Vec<&Answer> = answers
            .iter()
            .filter(validations)
            .filter(|x| x.sent > answered)
            .collect();
        assert!(
            after.len() > 10,
            "round {round}: too few validations after the revoke ({})",
            after.len()
        );
        let stale: Vec<_> = after.iter().filter(|x| x.ok()).collect();
        assert!(
            stale.is_empty(),
            "round {round}: validations sent after the revoke's answer succeeded: {:?}\n{}",
            &stale[..stale.len().min(10)],
            nodes.logs(&all)
        );
        for node in all {
            let seen = nodes
                .get(
                    node,
                    &format!("/v1/license-keys/{}", str_of(key, "id")),
                    &token,
                )
                .await;
            assert_eq!(seen["status"], "revoked", "node {}: {seen}", node.name);
        }
        // Both nodes serve again: a write, and another key validated (from memory once
        // their listeners are back).
        let recovered = RefCell::new(Vec::new());
        for node in all {
            let took = until_writes(&nodes, node, &all, &token, &product, &recovered).await;
            eprintln!(
                "{test} round {round}: node {} writes again after {took:?}",
                node.name
            );
            until_answered_from_memory(&nodes, node, &all, spare).await;
        }
        assert_by_rule(&nodes, &all, &recovered.into_inner(), started);
    }
    // The listeners came back after each cut.
    for node in all {
        let reconnects = nodes
            .metric(node, "tollgate_store_listener_reconnects_total")
            .await;
        let expected = match (cut, node.name) {
            (Cut::NodeA, "b") => 0.0,
            _ => keys.len() as f64,
        };
        assert!(
            reconnects >= expected,
            "node {}: {reconnects} listener reconnects",
            node.name
        );
    }
}

#[actix_web::test]
async fn listeners_cut_while_a_key_is_revoked_give_no_stale_answer() {
    no_stale_answer_after_a_revoke_while("listeners_cut", Cut::Listeners).await;
}

#[actix_web::test]
async fn node_cut_from_the_database_while_the_other_revokes_gives_no_stale_answer() {
    no_stale_answer_after_a_revoke_while("node_cut", Cut::NodeA).await;
}
