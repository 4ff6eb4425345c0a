//! Delivery: one worker per endpoint sends that endpoint's events.
//!
//! **Order.** A worker walks its endpoint's pending events in feed order and only ever
//! sends the *first* pending event of each resource: the next `subscription.updated` of a
//! subscription waits until the one before it was delivered or gave up, while events of
//! other resources go ahead (up to [`PARALLEL`] at once). So one failing event holds back
//! only the later events of its own resource, never unrelated ones, and one slow or dead
//! endpoint never delays another endpoint: each has its own worker and every attempt
//! ends within `webhooks.timeout_secs`.
//!
//! **Signature** (Standard Webhooks): `webhook-id` (the event's id, the same on every
//! attempt), `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`
//! = `v1,` + base64 of HMAC-SHA256 over `id.timestamp.body`, keyed with the UTF-8 bytes
//! of the endpoint's secret (Polar's encoding: its SDKs verify so, and a Standard Webhooks
//! library given `base64(secret)`); for a `whsec_<base64>` secret (what Tollgate
//! generates) a second `v1,` signature follows, keyed with the decoded part (the Standard
//! Webhooks convention: a library given the secret as it is verifies it).
//!
//! **Retries.** A non-2xx answer, a timeout or a refused connection is retried after each
//! delay of `webhooks.retry_delays_secs` (±20% jitter), then the event is marked failed.
//! An endpoint whose attempts failed `disable_after_failures` times in a row over at
//! least `disable_after_hours` is disabled; the seller re-enables it. Redirects are not
//! followed and at most [`RESPONSE_CAP`] bytes of an answer are read.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::web;
use base64::Engine;
use chrono::{DateTime, Utc};
use futures_util::future::join_all;
use hmac::{Hmac, Mac};
use rand::Rng;
use sha2::Sha256;
use tokio::sync::Notify;
use tollgate_storage::{Batch, Direction, Expect, StorageError, Stored, UpdateError};

use crate::domain::ids::{WebhookDeliveryId, WebhookEndpointId};
use crate::domain::webhook::{
    WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookEventState, WEBHOOK_ENDPOINT_ALL,
    WEBHOOK_EVENT_PENDING,
};
use crate::egress::target::literal_ip;
use crate::egress::Hub;
use crate::state::AppState;

/// Events of different resources one endpoint's worker sends at once.
pub const PARALLEL: usize = 8;
/// Bytes of a receiver's answer read (and kept in the delivery log, up to 2 KiB).
pub const RESPONSE_CAP: usize = 2048;
/// Pending events a worker looks at per pass, at most: it stops as soon as it has
/// [`PARALLEL`] to send, so a long queue behind one failing resource costs one scan per
/// retry, and never hides the events of other resources.
const WINDOW: usize = 100_000;

/// Starts the worker supervisor and wakes every endpoint, so events a previous run left
/// pending go out. Call once, on the system arbiter.
pub async fn start(state: web::Data<AppState>) -> Result<(), StorageError> {
    let Some(mut rx) = state.webhooks.take_wake_receiver() else {
        return Ok(());
    };
    let supervisor_state = state.clone();
    actix_web::rt::spawn(async move {
        let state = supervisor_state;
        let mut workers: HashMap<WebhookEndpointId, (Arc<Notify>, Arc<AtomicBool>)> =
            HashMap::new();
        while let Some(id) = rx.recv().await {
            let alive = workers
                .get(&id)
                .is_some_and(|(_, a)| a.load(Ordering::SeqCst));
            if !alive {
                let notify = Arc::new(Notify::new());
                let flag = Arc::new(AtomicBool::new(true));
                workers.insert(id, (notify.clone(), flag.clone()));
                actix_web::rt::spawn(worker(state.clone(), id, notify, flag));
            }
            if let Some((notify, _)) = workers.get(&id) {
                notify.notify_one();
            }
        }
    });
    wake_all(&state).await
}

/// Wakes (starting if need be) the worker of every endpoint: at start-up, and when this
/// node takes over delivery from another (whose pending retries it then sends).
pub async fn wake_all(state: &AppState) -> Result<(), StorageError> {
    let mut ids = state
        .store
        .index_iter(WEBHOOK_ENDPOINT_ALL, &[Vec::new()], Direction::Asc)?;
    while let Some(id) = ids.next().await {
        if let Some(e) = state.store.get::<WebhookEndpoint>(&id?).await? {
            state.webhooks.wake(e.value.id);
        }
    }
    Ok(())
}

/// The worker of one endpoint; ends when the endpoint is deleted.
async fn worker(
    state: web::Data<AppState>,
    id: WebhookEndpointId,
    notify: Arc<Notify>,
    alive: Arc<AtomicBool>,
) {
    loop {
        match pass(&state, id).await {
            Ok(Pass::Gone) => break,
            Ok(Pass::Again) => continue,
            Ok(Pass::Wait(wait)) => {
                let _ = tokio::time::timeout(wait, notify.notified()).await;
            }
            Err(e) => {
                tracing::warn!(endpoint = %id, error = %e, "webhook worker pass failed");
                let _ = tokio::time::timeout(Duration::from_secs(1), notify.notified()).await;
            }
        }
    }
    alive.store(false, Ordering::SeqCst);
}

enum Pass {
    /// The endpoint was deleted.
    Gone,
    /// Attempts were made: look again at once.
    Again,
    /// Nothing to send before this long (or a wake-up).
    Wait(Duration),
}

async fn pass(state: &web::Data<AppState>, id: WebhookEndpointId) -> Result<Pass, StorageError> {
    // On a shared database the node that fans events out delivers them (once each).
    if !state.jobs.lead(&state.store, "webhooks").await {
        return Ok(Pass::Wait(Duration::from_secs(1)));
    }
    let Some(endpoint) = state.store.get::<WebhookEndpoint>(&id.key()).await? else {
        return Ok(Pass::Gone);
    };
    let idle = Duration::from_secs(60);
    if !endpoint.value.enabled {
        return Ok(Pass::Wait(idle));
    }
    let now = state.now();
    let mut seen_resources = HashSet::new();
    let mut ready: Vec<Stored<WebhookEvent>> = Vec::new();
    let mut next: Option<DateTime<Utc>> = None;
    let tenants = [id.key()];
    let window = state
        .store
        .index_iter(WEBHOOK_EVENT_PENDING, &tenants, Direction::Asc)?
        .take(WINDOW)
        .await?;
    for event_id in window {
        let Some(event) = state.store.get::<WebhookEvent>(&event_id).await? else {
            continue;
        };
        // Only the first pending event of a resource may go: the rest wait their turn.
        if !seen_resources.insert(event.value.resource.clone()) {
            continue;
        }
        match event.value.next_attempt_at {
            Some(at) if at > now => next = Some(next.map_or(at, |n| n.min(at))),
            _ => {
                ready.push(event);
                if ready.len() == PARALLEL {
                    break;
                }
            }
        }
    }
    if ready.is_empty() {
        let wait = next
            .map(|at| (at - now).to_std().unwrap_or_default())
            .unwrap_or(idle)
            .min(idle);
        return Ok(Pass::Wait(wait));
    }
    crate::app::webhook_endpoints::load_payloads(state, ready.iter_mut().map(|e| &mut e.value))
        .await?;
    let attempts = join_all(ready.iter().map(|e| async {
        if e.value.archived {
            // Its payload is gone (never the case of a pending event but by damage): an
            // attempt that fails without sending, so that the schedule ends it.
            Attempt::not_sent("The event's payload is gone.".into())
        } else {
            send(&state.webhooks, &endpoint.value, &e.value).await
        }
    }))
    .await;
    let successes = attempts.iter().filter(|a| a.succeeded).count() as u32;
    let failures = attempts.len() as u32 - successes;
    record(state, ready.into_iter().zip(attempts), &endpoint.value).await?;
    update_health(state, id, successes, failures).await?;
    Ok(Pass::Again)
}

/// What one attempt gave.
struct Attempt {
    started: DateTime<Utc>,
    succeeded: bool,
    http_code: Option<u16>,
    response: Option<String>,
    duration_ms: u64,
}

impl Attempt {
    fn not_sent(why: String) -> Attempt {
        Attempt {
            started: Utc::now(),
            succeeded: false,
            http_code: None,
            response: Some(why),
            duration_ms: 0,
        }
    }
}

/// The `webhook-signature` of `body`: signed with the secret's UTF-8 bytes as the key
/// (Polar's encoding, what its SDKs verify with), and, for a `whsec_<base64>` secret, also
/// with the base64-decoded part as the key (the Standard Webhooks convention, what a
/// Standard Webhooks library given the secret as it is verifies with). Both go in the
/// header, space-separated, as Standard Webhooks allows: a receiver on either convention
/// finds the signature it computes.
pub fn sign(secret: &str, msg_id: &str, timestamp: i64, body: &str) -> String {
    let legacy = sign_with_key(secret.as_bytes(), msg_id, timestamp, body);
    match standard_key(secret) {
        Some(key) => format!("{legacy} {}", sign_with_key(&key, msg_id, timestamp, body)),
        None => legacy,
    }
}

/// The Standard Webhooks key of a `whsec_<base64>` secret, if it is one.
fn standard_key(secret: &str) -> Option<Vec<u8>> {
    let encoded = secret.strip_prefix("whsec_")?;
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .filter(|k| !k.is_empty())
}

fn sign_with_key(key: &[u8], msg_id: &str, timestamp: i64, body: &str) -> String {
    // HMAC accepts keys of any length.
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => return String::new(),
    };
    mac.update(msg_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    let digest = mac.finalize().into_bytes();
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

async fn send(hub: &Hub, endpoint: &WebhookEndpoint, event: &WebhookEvent) -> Attempt {
    let started = Utc::now();
    let clock = Instant::now();
    let failed = |why: String, code: Option<u16>| Attempt {
        started,
        succeeded: false,
        http_code: code,
        response: Some(why),
        duration_ms: clock.elapsed().as_millis() as u64,
    };
    // The URL was checked when saved; check again (the policy may have changed). A literal
    // address is checked here (no resolver sees it), a name by the resolver as it connects,
    // or, through a proxy, here on what it resolves to now.
    let policy = &hub.policy;
    let url = match policy.check(&endpoint.url) {
        Ok(u) => u,
        Err(why) => return failed(why, None),
    };
    let port = url.port_or_known_default().unwrap_or(443);
    if let Some(ip) = literal_ip(&url) {
        if let Err(why) = policy.address_allowed(std::net::SocketAddr::new(ip, port)) {
            return failed(why.into(), None);
        }
    } else if hub.proxied() {
        let host = url.host_str().unwrap_or_default();
        if let Err(why) = policy.precheck_name(host, port).await {
            return failed(why, None);
        }
    }
    let client = match hub.client(port) {
        Ok(c) => c,
        Err(e) => return failed(format!("Could not connect: {}", error_chain(&e)), None),
    };
    let msg_id = event.id.to_string();
    let timestamp = Utc::now().timestamp();
    let signature = sign(&endpoint.secret, &msg_id, timestamp, &event.payload);
    let request = client
        .post(url)
        .header("content-type", "application/json")
        .header("webhook-id", &msg_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(event.payload.clone());
    let mut response = match request.send().await {
        Ok(r) => r,
        Err(e) => {
            let why = if e.is_timeout() {
                "Timed out.".to_string()
            } else {
                format!("Could not connect: {}", error_chain(&e))
            };
            return failed(why, None);
        }
    };
    let status = response.status();
    let mut body = Vec::new();
    while body.len() < RESPONSE_CAP {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    body.truncate(RESPONSE_CAP);
    let text = String::from_utf8_lossy(&body).into_owned();
    Attempt {
        started,
        succeeded: status.is_success(),
        http_code: Some(status.as_u16()),
        response: Some(text),
        duration_ms: clock.elapsed().as_millis() as u64,
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// The delay before retry number `retry` (1-based), with ±20% jitter; `None` when the
/// schedule is exhausted.
pub fn retry_delay(delays: &[f64], retry: u32) -> Option<Duration> {
    let base = *delays.get((retry as usize).checked_sub(1)?)?;
    let jitter = rand::thread_rng().gen_range(0.8..=1.2);
    Some(Duration::from_secs_f64(base * jitter))
}

/// Logs a pass's attempts and moves their events on, in one durable write (one flush for
/// the pass, not one per event). When an event changed meanwhile (redelivered by the
/// seller), each is written on its own instead: that one's attempt is logged and its event
/// left as the seller set it.
async fn record(
    state: &AppState,
    attempts: impl IntoIterator<Item = (Stored<WebhookEvent>, Attempt)>,
    endpoint: &WebhookEndpoint,
) -> Result<(), StorageError> {
    let now = state.now();
    let moved: Vec<(WebhookDelivery, WebhookEvent, u64)> = attempts
        .into_iter()
        .map(|(event, attempt)| {
            let rev = event.rev;
            let (delivery, e) = attempted(state, event.value, endpoint, attempt, now);
            (delivery, e, rev)
        })
        .collect();
    let mut batch = Batch::new();
    for (delivery, e, rev) in &moved {
        batch.put(delivery, Expect::Absent)?;
        batch.put(e, Expect::Rev(*rev))?;
    }
    match state.store.commit_durable(&batch).await {
        Err(StorageError::Conflict { .. }) if moved.len() > 1 => {}
        Err(StorageError::Conflict { .. }) => {
            let mut log = Batch::new();
            log.put(&moved[0].0, Expect::Absent)?;
            return state.store.commit_durable(&log).await.map(|_| ());
        }
        other => return other.map(|_| ()),
    }
    for (delivery, e, rev) in moved {
        let mut one = Batch::new();
        one.put(&delivery, Expect::Absent)?;
        one.put(&e, Expect::Rev(rev))?;
        match state.store.commit_durable(&one).await {
            // Redelivered meanwhile: log the attempt, leave the event as the seller set it.
            Err(StorageError::Conflict { .. }) => {
                let mut log = Batch::new();
                log.put(&delivery, Expect::Absent)?;
                state.store.commit_durable(&log).await?;
            }
            other => {
                other?;
            }
        }
    }
    Ok(())
}

/// The log entry of one attempt, and its event moved on (succeeded, to retry, or failed
/// once the schedule is over).
fn attempted(
    state: &AppState,
    event: WebhookEvent,
    endpoint: &WebhookEndpoint,
    attempt: Attempt,
    now: DateTime<Utc>,
) -> (WebhookDelivery, WebhookEvent) {
    let delivery = WebhookDelivery {
        id: WebhookDeliveryId::new(),
        organization_id: endpoint.organization_id,
        endpoint_id: endpoint.id,
        event_id: event.id,
        created_at: attempt.started,
        succeeded: attempt.succeeded,
        http_code: attempt.http_code,
        response: attempt.response,
        duration_ms: attempt.duration_ms,
    };
    let mut e = event;
    e.attempts += 1;
    e.last_http_code = attempt.http_code;
    e.modified_at = Some(now);
    if attempt.succeeded {
        e.state = WebhookEventState::Succeeded;
        e.next_attempt_at = None;
    } else {
        match retry_delay(&state.settings.webhooks.retry_delays_secs, e.attempts) {
            Some(delay) => {
                e.next_attempt_at =
                    Some(now + chrono::Duration::from_std(delay).unwrap_or_default());
            }
            None => {
                e.state = WebhookEventState::Failed;
                e.next_attempt_at = None;
            }
        }
    }
    (delivery, e)
}

/// Counts a pass's failures against the endpoint, disabling it after a long run of them.
async fn update_health(
    state: &AppState,
    id: WebhookEndpointId,
    successes: u32,
    failures: u32,
) -> Result<(), StorageError> {
    let settings = &state.settings.webhooks;
    let now = state.now();
    let updated = state
        .store
        .update::<WebhookEndpoint, std::convert::Infallible>(&id.key(), async |current| {
            let mut e = current.clone();
            if failures == 0 {
                e.consecutive_failures = 0;
                e.failing_since = None;
            } else {
                if successes > 0 {
                    e.consecutive_failures = 0;
                    e.failing_since = None;
                }
                e.consecutive_failures = e.consecutive_failures.saturating_add(failures);
                let since = *e.failing_since.get_or_insert(now);
                let hours = (now - since).num_milliseconds() as f64 / 3_600_000.0;
                if e.enabled
                    && e.consecutive_failures >= settings.disable_after_failures
                    && hours >= settings.disable_after_hours
                {
                    e.enabled = false;
                    e.disabled_reason = Some(format!(
                        "{} failed attempts in a row since {}",
                        e.consecutive_failures,
                        since.to_rfc3339()
                    ));
                    e.modified_at = Some(now);
                    tracing::warn!(endpoint = %id, failures = e.consecutive_failures, "webhook endpoint disabled");
                }
            }
            Ok((e != *current).then_some(e))
        })
        .await;
    match updated {
        // Still changing under every attempt: the next pass counts again.
        Ok(_) | Err(UpdateError::Storage(StorageError::Conflict { .. })) => Ok(()),
        Err(UpdateError::Storage(e)) => Err(e),
        Err(UpdateError::Rejected(never)) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(succeeded: bool) -> Attempt {
        Attempt {
            started: Utc::now(),
            succeeded,
            http_code: Some(if succeeded { 200 } else { 500 }),
            response: None,
            duration_ms: 3,
        }
    }

    /// A pass's attempts go in one write; when an event changed meanwhile (the seller
    /// redelivered it), that write fails as a whole and each is written on its own: the
    /// changed one keeps the seller's state, its attempt logged all the same, the others
    /// move on.
    #[actix_web::test]
    async fn a_pass_is_recorded_at_once_and_an_event_changed_meanwhile_stays_as_set() {
        use crate::domain::ids::WebhookEventId;
        let app = crate::app::testing::app().await;
        let (org, _) = crate::app::testing::seller(&app).await;
        // Not stored: no worker runs for it, and `record` reads only its ids.
        let endpoint = WebhookEndpoint {
            id: WebhookEndpointId::new(),
            organization_id: org,
            created_at: app.now(),
            modified_at: None,
            url: "https://example.com/hooks".into(),
            name: None,
            format: crate::domain::webhook::WebhookFormat::Raw,
            secret: "x".repeat(32),
            events: vec!["order.paid".into()],
            enabled: true,
            consecutive_failures: 0,
            failing_since: None,
            disabled_reason: None,
            api_version: None,
        };
        let event =
            |n: u128| crate::app::testing::webhook_event(&app, org, endpoint.id, n, "{}".into());
        let mut batch = Batch::new();
        for n in 1..=3 {
            batch.put(&event(n), Expect::Absent).unwrap();
        }
        app.store.commit_durable(&batch).await.unwrap();
        let read = |n: u128| {
            let app = &app;
            async move {
                app.store
                    .get::<WebhookEvent>(&WebhookEventId(uuid::Uuid::from_u128(n)).key())
                    .await
                    .unwrap()
                    .unwrap()
            }
        };
        let seen = [read(1).await, read(2).await, read(3).await];

        // All three in one write.
        record(
            &app,
            seen.iter().cloned().zip([true, false, true].map(attempt)),
            &endpoint,
        )
        .await
        .unwrap();
        assert_eq!(read(1).await.value.state, WebhookEventState::Succeeded);
        let retried = read(2).await.value;
        assert_eq!(
            (retried.state, retried.attempts),
            (WebhookEventState::Pending, 1)
        );
        assert!(retried.next_attempt_at.is_some());
        assert_eq!(read(3).await.value.attempts, 1);

        // Event 3 redelivered by the seller between the read and the record.
        let (two, three) = (read(2).await, read(3).await);
        let mut redelivered = three.value.clone();
        redelivered.state = WebhookEventState::Pending;
        redelivered.modified_at = Some(app.now());
        let mut batch = Batch::new();
        batch.put(&redelivered, Expect::Rev(three.rev)).unwrap();
        app.store.commit_durable(&batch).await.unwrap();
        record(
            &app,
            [(two, attempt(true)), (three, attempt(true))],
            &endpoint,
        )
        .await
        .unwrap();
        assert_eq!(read(2).await.value.state, WebhookEventState::Succeeded);
        let kept = read(3).await.value;
        assert_eq!((kept.state, kept.attempts), (WebhookEventState::Pending, 1));
        let log: Vec<_> = app.store.scan::<WebhookDelivery>().await.unwrap();
        assert_eq!(log.len(), 5, "every attempt logged");
        assert_eq!(
            log.iter().filter(|d| d.value.event_id == kept.id).count(),
            2
        );
    }

    /// The test vector of the Standard Webhooks specification (whose secrets are
    /// base64; Polar's are used as raw UTF-8 bytes, see the module docs).
    #[test]
    fn signature_matches_the_standard_webhooks_test_vector() {
        let key = base64::engine::general_purpose::STANDARD
            .decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
            .unwrap();
        let sig = sign_with_key(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            r#"{"test": 2432232314}"#,
        );
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert_eq!(
            sign("polar_whs_abc", "id", 1, "{}"),
            sign_with_key(b"polar_whs_abc", "id", 1, "{}")
        );
    }

    /// A `whsec_` secret is signed both ways: its UTF-8 bytes (Polar's SDKs), then its
    /// decoded part (the specification's vector: a Standard Webhooks library).
    #[test]
    fn a_whsec_secret_carries_both_signatures() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let (id, ts, body) = (
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            r#"{"test": 2432232314}"#,
        );
        let header = sign(secret, id, ts, body);
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(
            parts,
            [
                sign_with_key(secret.as_bytes(), id, ts, body).as_str(),
                "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
            ]
        );
        // Not base64 after the prefix: the one signature.
        assert!(!sign("whsec_not base64!", id, ts, body).contains(' '));
    }

    #[test]
    fn retry_delays_follow_the_schedule_with_jitter() {
        let delays = [5.0, 300.0];
        assert_eq!(retry_delay(&delays, 0), None);
        for _ in 0..50 {
            let d = retry_delay(&delays, 1).unwrap().as_secs_f64();
            assert!((4.0..=6.0).contains(&d), "{d}");
            let d = retry_delay(&delays, 2).unwrap().as_secs_f64();
            assert!((240.0..=360.0).contains(&d), "{d}");
        }
        assert_eq!(retry_delay(&delays, 3), None);
    }
}
