//! Crash safety of the real binary: what was acknowledged before `kill -9` is there after a
//! restart over the same data directory, with its indexes and uniqueness intact.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use actix_web::rt::time::sleep;
use futures_util::future::{join, join_all};
use serde_json::json;
use tempfile::TempDir;
use tollgate::bootstrap::TOKEN_FILE;

use crate::binary::Binary;
use crate::helpers::{client, Reply};

const READY_DEADLINE: Duration = Duration::from_secs(20);
const EXIT_DEADLINE: Duration = Duration::from_secs(20);

/// A data directory, the log files beside it, and a client.
struct Harness {
    root: TempDir,
    client: reqwest::Client,
    runs: u32,
}

impl Harness {
    fn new() -> Harness {
        let root = tempfile::tempdir().expect("creating a temporary directory");
        std::fs::create_dir_all(root.path().join("data")).expect("creating the data directory");
        Harness {
            root,
            client: client(),
            runs: 0,
        }
    }

    fn data_dir(&self) -> PathBuf {
        self.root.path().join("data")
    }

    fn token(&self) -> String {
        std::fs::read_to_string(self.data_dir().join(TOKEN_FILE))
            .expect("reading the bootstrap token")
            .trim()
            .to_string()
    }

    /// Everything the servers of this harness logged.
    fn logs(&self) -> String {
        (1..=self.runs)
            .map(|run| {
                std::fs::read_to_string(self.root.path().join(format!("server-{run}.log")))
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Starts the binary over the data directory and waits until `/readyz` is 200.
    async fn start(&mut self) -> Binary {
        self.runs += 1;
        Binary::start(
            self.root.path(),
            &self.data_dir(),
            &format!("server-{}.log", self.runs),
            &[],
            READY_DEADLINE,
        )
        .await
    }

    async fn create(&self, server: &Binary, token: &str, slug: &str) -> reqwest::Result<Reply> {
        let resp = self
            .client
            .post(format!("{}/v1/organizations/", server.address))
            .bearer_auth(token)
            .json(&json!({"name": format!("Org {slug}"), "slug": slug}))
            .send()
            .await?;
        Ok(Reply::read(resp).await)
    }

    async fn get(&self, server: &Binary, token: &str, path: &str) -> Reply {
        let resp = self
            .client
            .get(format!("{}{path}", server.address))
            .bearer_auth(token)
            .send()
            .await
            .expect("sending the request");
        Reply::read(resp).await
    }

    /// Every organization the token's user can list, across all pages: (total, id → slug).
    async fn list_all(&self, server: &Binary, token: &str) -> (u64, HashMap<String, String>) {
        let mut all = HashMap::new();
        let mut total = None;
        for page in 1.. {
            let r = self
                .get(
                    server,
                    token,
                    &format!("/v1/organizations/?limit=100&page={page}"),
                )
                .await;
            r.expect(200);
            let t = r.total_count();
            assert!(
                total.is_none_or(|prev| prev == t),
                "total_count changed between pages"
            );
            total = Some(t);
            let items = r.items();
            if items.is_empty() {
                break;
            }
            for o in items {
                let id = o["id"].as_str().unwrap().to_string();
                let slug = o["slug"].as_str().unwrap().to_string();
                assert!(all.insert(id, slug).is_none(), "listed twice");
            }
        }
        (total.unwrap_or(0), all)
    }
}

#[actix_web::test]
async fn acknowledged_organizations_survive_kill_9() {
    let mut h = Harness::new();
    let mut server = h.start().await;
    let token = h.token();
    let token_file = std::fs::read(h.data_dir().join(TOKEN_FILE)).unwrap();

    // 50 creates, five at a time; every one must be acknowledged.
    let slugs: Vec<String> = (0..50).map(|i| format!("durable-{i:02}")).collect();
    let mut acked: HashMap<String, String> = HashMap::new();
    for chunk in slugs.chunks(5) {
        let replies = join_all(chunk.iter().map(|s| h.create(&server, &token, s))).await;
        for (slug, r) in chunk.iter().zip(replies) {
            let r = r.expect("create request failed");
            r.expect(201);
            assert_eq!(r.body["slug"], slug.as_str());
            acked.insert(r.id(), slug.clone());
        }
    }
    // Kill -9 right after the last acknowledgement.
    server.kill_9();
    assert_eq!(acked.len(), 50);

    let server = h.start().await;
    assert_eq!(
        std::fs::read(h.data_dir().join(TOKEN_FILE)).unwrap(),
        token_file,
        "the bootstrap token file is not rewritten on restart"
    );
    assert_eq!(h.token(), token);

    for (id, slug) in &acked {
        let r = h
            .get(&server, &token, &format!("/v1/organizations/{id}"))
            .await;
        r.expect(200);
        assert_eq!(r.body["slug"], slug.as_str());
    }
    let (total, listed) = h.list_all(&server, &token).await;
    assert_eq!(total, 50, "total_count equals the acknowledged creates");
    assert_eq!(listed, acked);
    for slug in ["durable-00", "durable-49"] {
        let r = h
            .get(&server, &token, &format!("/v1/organizations/?slug={slug}"))
            .await;
        assert_eq!(r.total_count(), 1, "{slug}");
    }

    // Uniqueness still holds, and the store still takes writes.
    let r = h.create(&server, &token, "durable-17").await.unwrap();
    let item = r.expect_invalid_at(json!(["body", "slug"]));
    assert_eq!(
        item["msg"],
        "An organization with this slug already exists."
    );
    let r = h.create(&server, &token, "DURABLE-42").await.unwrap();
    r.expect_invalid_at(json!(["body", "slug"]));
    h.create(&server, &token, "after-restart")
        .await
        .unwrap()
        .expect(201);
    let (total, _) = h.list_all(&server, &token).await;
    assert_eq!(total, 51);

    // The logs of both runs name the token file, never the token.
    let logs = h.logs();
    assert!(!logs.is_empty(), "the server wrote no log");
    assert!(
        !logs.contains(&token),
        "the bootstrap token appears in the log"
    );
    assert!(!logs.contains("polar_pat_"), "a token appears in the log");
}

#[actix_web::test]
async fn a_second_kill_9_right_after_restart_loses_nothing() {
    let mut h = Harness::new();
    let mut server = h.start().await;
    let token = h.token();
    let mut acked = HashMap::new();
    for i in 0..10 {
        let slug = format!("twice-{i}");
        let r = h.create(&server, &token, &slug).await.unwrap();
        r.expect(201);
        acked.insert(r.id(), slug);
    }
    server.kill_9();
    let mut server = h.start().await;
    server.kill_9();
    let server = h.start().await;
    let (total, listed) = h.list_all(&server, &token).await;
    assert_eq!(total, 10);
    assert_eq!(listed, acked);
    assert_eq!(h.token(), token);
}

#[actix_web::test]
async fn kill_9_with_creates_in_flight_loses_no_acknowledged_organization() {
    const WORKERS: usize = 8;
    const KILL_AFTER: usize = 40;
    let mut h = Harness::new();
    let server = RefCell::new(h.start().await);
    let token = h.token();

    let acked: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
    let attempted: RefCell<Vec<String>> = RefCell::new(Vec::new());
    let unexpected: RefCell<Vec<String>> = RefCell::new(Vec::new());
    let killed = Cell::new(false);

    let worker = |w: usize| {
        let (h, server, token) = (&h, &server, &token);
        let (acked, attempted, unexpected, killed) = (&acked, &attempted, &unexpected, &killed);
        async move {
            for i in 0.. {
                if killed.get() {
                    break;
                }
                let slug = format!("inflight-{w}-{i}");
                attempted.borrow_mut().push(slug.clone());
                let address = server.borrow().address.clone();
                let resp = h
                    .client
                    .post(format!("{address}/v1/organizations/"))
                    .bearer_auth(token)
                    .json(&json!({"name": "In flight", "slug": slug}))
                    .send()
                    .await;
                // After the kill, requests fail (or their answers are lost): stop.
                let Ok(resp) = resp else { break };
                let status = resp.status();
                let Ok(text) = resp.text().await else { break };
                if status == 201 {
                    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
                    let id = body["id"].as_str().unwrap().to_string();
                    acked.borrow_mut().insert(id, slug);
                } else if !killed.get() {
                    unexpected
                        .borrow_mut()
                        .push(format!("{slug}: {status} {text}"));
                }
            }
        }
    };
    let killer = async {
        let started = Instant::now();
        while acked.borrow().len() < KILL_AFTER {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "creates too slow"
            );
            sleep(Duration::from_millis(1)).await;
        }
        // Other workers have requests in flight now.
        server.borrow_mut().kill_9();
        killed.set(true);
    };
    join(killer, join_all((0..WORKERS).map(worker))).await;
    assert!(unexpected.borrow().is_empty(), "{:?}", unexpected.borrow());

    let acked = acked.into_inner();
    let attempted = attempted.into_inner();
    assert!(acked.len() >= KILL_AFTER);
    drop(server);
    let server = h.start().await;

    // Every acknowledged organization is there.
    for (id, slug) in &acked {
        let r = h
            .get(&server, &token, &format!("/v1/organizations/{id}"))
            .await;
        r.expect(200);
        assert_eq!(r.body["slug"], slug.as_str());
    }
    let (total, listed) = h.list_all(&server, &token).await;
    assert_eq!(
        total as usize,
        listed.len(),
        "total_count matches the items"
    );
    eprintln!(
        "in-flight kill: {} attempted, {} acknowledged, {} stored",
        attempted.len(),
        acked.len(),
        listed.len()
    );
    assert!(listed.len() >= acked.len());
    assert!(listed.len() <= attempted.len());
    for (id, slug) in &acked {
        assert_eq!(listed.get(id), Some(slug), "acknowledged {slug} is listed");
    }
    // Whatever was persisted without an answer is whole: readable by id, one per slug.
    let listed_slugs: HashSet<&String> = listed.values().collect();
    assert_eq!(listed_slugs.len(), listed.len(), "slugs are unique");
    for id in listed.keys() {
        h.get(&server, &token, &format!("/v1/organizations/{id}"))
            .await
            .expect(200);
    }
    // A slug is taken exactly when its organization exists: persisted ones are refused,
    // lost ones are free again (no slug reservation survives without its organization).
    let any_listed = listed.values().next().unwrap().clone();
    let r = h.create(&server, &token, &any_listed).await.unwrap();
    r.expect_invalid_at(json!(["body", "slug"]));
    let lost: Vec<&String> = attempted
        .iter()
        .filter(|s| !listed_slugs.contains(s))
        .collect();
    for slug in &lost {
        let r = h.create(&server, &token, slug).await.unwrap();
        assert_eq!(
            r.status, 201,
            "{slug} was never stored, so it must be free: {}",
            r.body
        );
    }
    let (total, _) = h.list_all(&server, &token).await;
    assert_eq!(total as usize, listed.len() + lost.len());
}

#[actix_web::test]
async fn sigterm_stops_gracefully_and_keeps_the_data() {
    let mut h = Harness::new();
    let mut server = h.start().await;
    let token = h.token();
    let r = h.create(&server, &token, "graceful-org").await.unwrap();
    r.expect(201);
    let id = r.id();

    server.sigterm();
    let exit = server.wait_exit(EXIT_DEADLINE).await;
    assert!(exit.success(), "exit status after SIGTERM: {exit}");
    drop(server);

    let server = h.start().await;
    let r = h
        .get(&server, &token, &format!("/v1/organizations/{id}"))
        .await;
    r.expect(200);
    assert_eq!(r.body["slug"], "graceful-org");
    assert_eq!(h.token(), token);
}
