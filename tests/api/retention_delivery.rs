//! Issue 52's check: trimming never removes what is not yet delivered. A webhook endpoint
//! that is down and a mail server that refuses (nothing listens on its port) while sales
//! happen; the history is made older than the retention period; the real binary's own
//! retention job runs (`retention.interval_secs = 1`) and removes what was delivered, and
//! only that; the server is killed (`kill -9`) and started again ([`restart`]); the
//! endpoint and the mail server come back: every event and every mail arrives, once.
//!
//! The binary has no manual clock, so "past the retention period" is made the other way
//! round: with the server stopped, the test moves the history's `created_at` 100 days back
//! (the retention compares it with the clock, nothing else), through the store's own
//! write path, so that indexes follow.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use actix_web::rt::time::sleep;
use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::app::event_log::LoggedEvent;
use tollgate::domain::mail::{MailMessage, MailState};
use tollgate_actors::domain::webhook::{WebhookEvent, WebhookEventState, WebhookPayload};
use tollgate_storage::{Batch, Expect, Record, Store, StoreConfig};

use crate::binary::Binary;
use crate::checkouts::{id_of, seed, Api};
use crate::helpers::client;
use crate::mail::{buy, free_port, SmtpServer, FROM};
use crate::webhooks::{assert_verified, Receiver};

const READY_DEADLINE: Duration = Duration::from_secs(30);
/// How long the test waits for the retention job, the deliveries and the mails.
const DEADLINE: Duration = Duration::from_secs(120);
const SALES: usize = 5;
/// The events both endpoints take: every one a sale makes, and more.
const EVENTS: &[&str] = &[
    "checkout.created",
    "checkout.updated",
    "order.created",
    "order.paid",
    "order.updated",
    "customer.created",
    "customer.updated",
    "customer.state_changed",
    "benefit_grant.created",
    "license_key.created",
];
const SECRET: &str = "retention_delivery_secret_of_more_than_32_chars";

/// A data directory, the servers' logs beside it, and the environment every run gets.
struct Harness {
    root: TempDir,
    runs: u32,
    env: Vec<(&'static str, String)>,
}

impl Harness {
    fn new(smtp_port: u16) -> Harness {
        let root = tempfile::tempdir().expect("creating a temporary directory");
        std::fs::create_dir_all(root.path().join("data")).expect("creating the data directory");
        let env = vec![
            ("TOLLGATE__WEBHOOKS__ALLOW_PRIVATE_TARGETS", "true".into()),
            // Retried every half second for minutes: the endpoint's events stay pending
            // for the whole test (a failed event would be settled, and trimmed).
            (
                "TOLLGATE__WEBHOOKS__RETRY_DELAYS_SECS",
                format!("[{}]", vec!["0.5"; 600].join(", ")),
            ),
            ("TOLLGATE__EMAIL__TRANSPORT", "smtp".into()),
            (
                "TOLLGATE__EMAIL__SMTP_URL",
                format!("smtp://127.0.0.1:{smtp_port}"),
            ),
            ("TOLLGATE__EMAIL__FROM", FROM.into()),
            ("TOLLGATE__EMAIL__RETRY_BASE_MS", "100".into()),
            ("TOLLGATE__EMAIL__MAX_ATTEMPTS", "1000".into()),
            ("TOLLGATE__RETENTION__INTERVAL_SECS", "1".into()),
        ];
        Harness { root, runs: 0, env }
    }

    fn data_dir(&self) -> PathBuf {
        self.root.path().join("data")
    }

    async fn start(&mut self) -> Binary {
        self.runs += 1;
        let env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Binary::start(
            self.root.path(),
            &self.data_dir(),
            &format!("server-{}.log", self.runs),
            &env,
            READY_DEADLINE,
        )
        .await
    }

    /// Opens the store of a stopped server (dropped before the next start).
    fn open_store(&self) -> Store {
        Store::open(&StoreConfig::new(self.data_dir())).expect("opening the store")
    }
}

/// Kills the server (`kill -9`) and starts it again over the same data directory: the one
/// place where the test restarts it.
async fn restart(h: &mut Harness, mut server: Binary) -> Binary {
    server.kill_9();
    drop(server);
    // The store is rewritten in between (`tollgate compact`): trimmed and compacted, what
    // is pending must still go out.
    let (root, data) = (h.root.path().to_path_buf(), h.data_dir());
    let out =
        actix_web::rt::task::spawn_blocking(move || crate::backup::cli(&root, &data, &["compact"]))
            .await
            .expect("the compact task");
    assert!(out.status.success(), "{}", crate::backup::text(&out));
    h.start().await
}

/// Moves every record of a kind back in time (`at` changes its `created_at`), through the
/// store's write path; returns the ids of the records moved.
async fn age<R: Record + Clone>(store: &Store, at: impl Fn(&mut R)) -> BTreeSet<Vec<u8>> {
    let all = store.scan::<R>().await.expect("scanning");
    let mut batch = Batch::new();
    for stored in &all {
        let mut r = stored.value.clone();
        at(&mut r);
        batch.put(&r, Expect::Rev(stored.rev)).expect("encoding");
    }
    store.commit_durable(&batch).await.expect("ageing");
    all.iter().map(|s| s.value.id_key()).collect()
}

/// Waits (bounded) until the server's log holds `line`.
async fn logged(server: &Binary, line: &str) {
    let started = Instant::now();
    while !server.log_text().contains(line) {
        assert!(
            started.elapsed() < DEADLINE,
            "no \"{line}\" in the log:\n{}",
            server.log_text()
        );
        sleep(Duration::from_millis(100)).await;
    }
}

/// The events received, by type and resource: what a consumer acts on.
fn bodies(got: &[Value]) -> BTreeMap<String, Vec<String>> {
    let mut by_id: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for v in got {
        by_id
            .entry(v["id"].as_str().unwrap_or_default().to_string())
            .or_default()
            .push(format!("{} {}", v["type"], v["body"]["data"]));
    }
    by_id
}

#[actix_web::test]
async fn nothing_undelivered_is_trimmed_across_retention_and_a_kill_9() {
    let smtp_port = free_port();
    let mut h = Harness::new(smtp_port);
    let server = h.start().await;
    let token = crate::helpers::bootstrap_token(&h.data_dir());
    let http = client();
    // An endpoint that answers, and one that is down (nothing listens on its port).
    let up = Receiver::start(SECRET, 0);
    let closed = free_port();
    let (down_endpoint, buyers) = {
        let api = Api {
            base: &server.address,
            client: &http,
            token: &token,
        };
        let cat = seed(api, "keep-undelivered").await;
        for url in [up.url(), format!("http://localhost:{closed}/hooks")] {
            api.posted(
                "/v1/webhooks/endpoints",
                &json!({"url": url, "format": "raw", "events": EVENTS, "organization_id": cat.org, "secret": SECRET}),
                201,
            )
            .await;
        }
        let endpoints = api
            .read(&format!(
                "/v1/webhooks/endpoints?organization_id={}",
                cat.org
            ))
            .await;
        endpoints.expect(200);
        let down = endpoints.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["url"].as_str().unwrap().contains(&closed.to_string()))
            .map(id_of)
            .expect("the endpoint that is down");
        let mut buyers = BTreeSet::new();
        for i in 0..SALES {
            let email = format!("buyer{i}@example.com");
            buy(api, &cat.ebook_price, &email, None).await;
            buyers.insert(email);
        }
        (down, buyers)
    };
    // Every sale's order.created reached the endpoint that answers: the fan-out ran.
    up.wait_for("every order.created", |got| {
        got.iter().filter(|v| v["type"] == "order.created").count() >= SALES
    })
    .await;
    let mut server = server;
    server.kill_9();
    drop(server);

    // The history, 100 days old; a message sent long ago beside the pending ones. (The
    // fan-out may not be over: what it writes later is new, and pending, and must come
    // too.)
    let (aged_pending, aged_log) = {
        let store = h.open_store();
        let back = chrono::Duration::days(100);
        age::<WebhookEvent>(&store, |e| e.created_at -= back).await;
        age::<MailMessage>(&store, |m| m.created_at -= back).await;
        let aged_log = age::<LoggedEvent>(&store, |l| l.created_at -= back).await;
        assert!(!aged_log.is_empty());
        let events: Vec<WebhookEvent> = crate::checkouts::store_values(&store).await;
        let aged_pending: BTreeSet<String> = events
            .iter()
            .filter(|e| e.endpoint_id.to_string() == down_endpoint)
            .inspect(|e| assert_eq!(e.state, WebhookEventState::Pending))
            .map(|e| e.id.to_string())
            .collect();
        assert!(
            aged_pending.len() >= SALES,
            "the endpoint that is down has its events"
        );
        let mails: Vec<MailMessage> = crate::checkouts::store_values(&store).await;
        assert!(!mails.is_empty());
        assert!(mails.iter().all(MailMessage::is_pending), "none sent");
        let mut sent = mails[0].clone();
        sent.id = tollgate::domain::ids::MailMessageId(uuid::Uuid::new_v4());
        sent.state = MailState::Sent;
        sent.next_attempt_at = None;
        let mut batch = Batch::new();
        batch.put(&sent, Expect::Absent).unwrap();
        store.commit_durable(&batch).await.unwrap();
        (aged_pending, aged_log)
    };

    // The retention job of the next run removes what was delivered, and only that.
    let mut server = h.start().await;
    logged(&server, "webhook history purged").await;
    logged(&server, "e-mail history purged").await;
    server.kill_9();
    drop(server);
    {
        // Checked between two runs: the store is the test's for a moment.
        let store = h.open_store();
        let events: Vec<WebhookEvent> = crate::checkouts::store_values(&store).await;
        let kept: BTreeSet<String> = events
            .iter()
            .filter(|e| e.endpoint_id.to_string() == down_endpoint)
            .inspect(|e| assert_eq!(e.state, WebhookEventState::Pending))
            .map(|e| e.id.to_string())
            .collect();
        assert!(
            kept.is_superset(&aged_pending),
            "a pending event was trimmed"
        );
        // Both endpoints take the same bytes: one payload record per event, shared. The
        // delivered events went, their payloads stay for the pending readers; none stays
        // that no event reads.
        let payloads: Vec<WebhookPayload> = crate::checkouts::store_values(&store).await;
        let readers: BTreeSet<String> = events.iter().map(|e| e.id.to_string()).collect();
        for p in &payloads {
            assert!(
                p.readers().any(|r| readers.contains(&r.to_string())),
                "a payload no event reads was kept"
            );
        }
        for e in events
            .iter()
            .filter(|e| aged_pending.contains(&e.id.to_string()))
        {
            let p = payloads
                .iter()
                .find(|p| p.id == e.payload_key())
                .expect("a pending event's payload");
            assert!(
                e.payload_id.is_some() && !p.shared_with.is_empty(),
                "shared with the endpoint that answered"
            );
        }
        let mails: Vec<MailMessage> = crate::checkouts::store_values(&store).await;
        assert!(
            mails.iter().all(MailMessage::is_pending),
            "the sent one went"
        );
        assert!(
            !mails.is_empty() && mails.len() <= SALES,
            "the pending ones stay"
        );
        for key in &aged_log {
            assert!(
                store.get::<LoggedEvent>(key).await.unwrap().is_none(),
                "the cursor's log is as old: trimmed"
            );
        }
    }
    let server = h.start().await;
    let server = restart(&mut h, server).await;

    // Both come back: the mail server on its port, the endpoint at a new address.
    let smtp = SmtpServer::start(smtp_port, 0);
    let back = Receiver::start(SECRET, 0);
    let r = http
        .patch(format!(
            "{}/v1/webhooks/endpoints/{down_endpoint}",
            server.address
        ))
        .bearer_auth(&token)
        .json(&json!({"url": back.url()}))
        .send()
        .await
        .expect("moving the endpoint");
    assert_eq!(r.status(), 200);

    let mails = smtp.wait_for(SALES).await;
    let got = back
        .wait_for("every pending event", |got| {
            let ids: BTreeSet<String> = bodies(got).into_keys().collect();
            ids.is_superset(&aged_pending) && bodies(got).len() >= bodies(&up.received()).len()
        })
        .await;
    // Nothing more comes: each once.
    sleep(Duration::from_secs(2)).await;
    let got_now = back.received();
    assert_eq!(got_now.len(), got.len(), "an event came twice");
    assert_verified(&got_now);
    let received = bodies(&got_now);
    assert!(received.values().all(|b| b.len() == 1), "{received:#?}");
    // The same events as the endpoint that answered, by what they say.
    let mut told: Vec<String> = bodies(&up.received())
        .into_values()
        .map(|mut b| b.remove(0))
        .collect();
    let mut heard: Vec<String> = received.into_values().map(|mut b| b.remove(0)).collect();
    told.sort();
    heard.sort();
    assert_eq!(heard, told);
    let mails_now = smtp.messages();
    assert_eq!(mails_now.len(), mails.len(), "a mail came twice");
    let to: BTreeSet<String> = mails_now
        .iter()
        .map(|m| crate::mail::header(m, "To").to_string())
        .collect();
    assert_eq!(mails_now.len(), SALES, "{mails_now:#?}");
    assert!(
        buyers.iter().all(|b| to.iter().any(|t| t.contains(b))),
        "{to:?}"
    );
}

/// The bytes of every record of a kind, as stored (its encoding; keys and index entries
/// aside), and how many there are.
async fn bytes_of<R: Record>(store: &Store) -> (usize, usize) {
    let all = store.scan::<R>().await.expect("scanning");
    let bytes = all
        .iter()
        .map(|s| s.value.encode().expect("encoding").len() + s.value.id_key().len())
        .sum();
    (all.len(), bytes)
}

/// What the history costs per sale, and what the retention makes of it: sales through the
/// API with two alike (`raw`) endpoints, then the mail bodies emptied once past the
/// grace period, then everything settled purged past the retention period. Prints the
/// figures (`TOLLGATE_MEASURE_SALES` sales, 40 without it); fails if a step does not do
/// what it says.
#[actix_web::test]
async fn history_bytes_per_sale_before_and_after_the_retention() {
    use tollgate_actors::checkout::Checkout;
    use tollgate_actors::domain::webhook::WebhookDelivery;
    let sales: usize = std::env::var("TOLLGATE_MEASURE_SALES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40);
    let dir = tempfile::tempdir().expect("creating the data directory");
    let s = crate::webhooks::settings(dir.path());
    let (clock, shared) = tollgate_actors::ManualClock::shared(chrono::Utc::now());
    let app = crate::helpers::spawn_app_with(dir, s, shared).await;
    let api = Api::of(&app);
    let cat = seed(api, "measure").await;
    // A disabled endpoint: its events are recorded (skipped), payload and all, as any
    // endpoint's, without waiting for a receiver.
    // Two alike (same format and version): the same bytes each, one payload record.
    for port in [9, 10] {
        let e = api
            .posted(
                "/v1/webhooks/endpoints",
                &json!({"url": format!("http://localhost:{port}/hooks"), "format": "raw", "events": EVENTS, "organization_id": cat.org, "secret": SECRET}),
                201,
            )
            .await;
        api.patch(
            &format!("/v1/webhooks/endpoints/{}", id_of(&e)),
            Some(&app.token),
            &json!({"enabled": false}),
        )
        .await
        .expect(200);
    }
    for i in 0..sales {
        buy(api, &cat.ebook_price, &format!("m{i}@example.com"), None).await;
    }
    let started = Instant::now();
    while app.state.store.pending_changes().await.expect("the feed") > 0 {
        assert!(started.elapsed() < DEADLINE, "the fan-out did not catch up");
        sleep(Duration::from_millis(50)).await;
    }
    let store = &app.state.store;
    // Every message settled (transport "none": skipped, with its body).
    loop {
        let mail: Vec<MailMessage> = crate::checkouts::store_values(store).await;
        if mail.len() >= sales && !mail.iter().any(MailMessage::is_pending) {
            break;
        }
        assert!(started.elapsed() < DEADLINE, "the mail was not settled");
        sleep(Duration::from_millis(50)).await;
    }
    let report = |label: &str, kind: &str, (n, bytes): (usize, usize)| {
        eprintln!(
            "{label:>22} {kind:>18}: {n:>6} records, {bytes:>9} bytes, {:>7.0} bytes/sale",
            bytes as f64 / sales as f64
        );
    };
    // Every event settled too: skipped, or failed after its few quick retries (an event
    // fanned out before the endpoint's change was seen).
    loop {
        let events: Vec<WebhookEvent> = crate::checkouts::store_values(store).await;
        if !events.iter().any(WebhookEvent::is_pending) {
            break;
        }
        assert!(started.elapsed() < DEADLINE, "the events were not settled");
        sleep(Duration::from_millis(50)).await;
    }
    let log: Vec<LoggedEvent> = crate::checkouts::store_values(store).await;
    let inline: BTreeMap<String, usize> =
        log.iter()
            .filter(|l| l.data_in.is_none())
            .fold(BTreeMap::new(), |mut m, l| {
                *m.entry(l.event_type.clone()).or_insert(0) += 1;
                m
            });
    eprintln!(
        "event log: {} entries, their data inline in {:?}",
        log.len(),
        inline
    );
    let mail_before = bytes_of::<MailMessage>(store).await;
    report(
        "after the sales",
        "checkouts",
        bytes_of::<Checkout>(store).await,
    );
    report(
        "after the sales",
        "webhook events",
        bytes_of::<WebhookEvent>(store).await,
    );
    report(
        "after the sales",
        "webhook payloads",
        bytes_of::<WebhookPayload>(store).await,
    );
    report(
        "after the sales",
        "deliveries",
        bytes_of::<WebhookDelivery>(store).await,
    );
    report(
        "after the sales",
        "event log",
        bytes_of::<LoggedEvent>(store).await,
    );
    report("after the sales", "mail", mail_before);
    // The log holds no second copy of what an endpoint's event holds: only the events of
    // before the endpoint (the catalog's) are inline.
    let (log_bytes, payload_bytes) = (
        bytes_of::<LoggedEvent>(store).await.1,
        bytes_of::<WebhookPayload>(store).await.1,
    );
    assert!(
        log_bytes * 5 < payload_bytes,
        "{log_bytes} vs {payload_bytes}"
    );
    // Each event's payload is apart, once for both endpoints: the event itself
    // (rewritten by each attempt) is a small record.
    let (events, events_bytes) = bytes_of::<WebhookEvent>(store).await;
    assert_eq!(bytes_of::<WebhookPayload>(store).await.0 * 2, events);
    assert!(
        events_bytes * 5 < payload_bytes * 2,
        "{events_bytes} vs {payload_bytes}"
    );
    assert!(!inline.contains_key("order.paid"), "{inline:?}");
    assert!(mail_before.0 >= sales);

    // Past the grace period: the settled messages' bodies go.
    let grace = i64::try_from(app.state.settings.retention.grace_hours).unwrap();
    clock.advance(chrono::Duration::hours(grace + 1));
    assert!(tollgate::mail::slim(&app.state).await.unwrap() >= sales);
    let mail_slim = bytes_of::<MailMessage>(store).await;
    report("bodies emptied", "mail", mail_slim);
    assert_eq!(mail_slim.0, mail_before.0);
    assert!(mail_slim.1 * 2 < mail_before.1, "the bodies are most of it");

    // Past the retention period: everything settled goes, however much there is.
    clock.advance(chrono::Duration::days(91));
    tollgate::webhooks::purge(&app.state).await.unwrap();
    tollgate::mail::purge(&app.state).await.unwrap();
    for (kind, left) in [
        ("webhook events", bytes_of::<WebhookEvent>(store).await),
        ("webhook payloads", bytes_of::<WebhookPayload>(store).await),
        ("deliveries", bytes_of::<WebhookDelivery>(store).await),
        ("event log", bytes_of::<LoggedEvent>(store).await),
        ("mail", bytes_of::<MailMessage>(store).await),
    ] {
        report("past the retention", kind, left);
        assert_eq!(left.0, 0, "{kind} left");
    }
}
