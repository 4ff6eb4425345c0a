//! Freshness across nodes (issue 33): every write of a record whose counters are kept in
//! tallies (`Record::TALLIED`) sends `pg_notify(channel, "{collection} {id}")`
//! in its own transaction, and each node runs one listener ([`PgEngine::listen`]) that
//! hears them and tells its caches ([`ChangeListener::subscribe`]).
//!
//! A cache may answer from memory only while the listener is provably caught up: it sends
//! itself a ping through the same channel every `window / 5` and notes when the ping it
//! hears back was *sent* ([`ChangeListener::trusted_epoch`]: the connection is up and the last ping
//! heard was sent at most `window` ago). PostgreSQL queues notifications in commit order
//! and delivers them to a listener in that order, so every change committed before that
//! ping was sent has been handled before the ping was. A writer waits `window` after a
//! notifying commit before it answers ([`PgEngine::commit`]): a read on any node that
//! starts after the answer and trusts its listener therefore trusts it only once that
//! listener has handled the change.
//!
//! The connection's epoch ([`ChangeListener::epoch`]) is even while it listens and odd while it is
//! down; it moves on every reconnect. What a cache learned in an older epoch (possibly
//! before changes it never heard of) is not trusted; the cache reads the store instead.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_postgres::{AsyncMessage, NoTls};

use super::reach::Reach;
use super::{describe, PgEngine};
use crate::store::listener::ChangeListener;

/// Fault injection for tests: with this variable set to a number of milliseconds, the
/// listener handles every message (changes and pings alike) that long after it arrived, as
/// a slow or loaded node would. Never set in production.
pub const FAULT_LISTENER_DELAY: &str = "TOLLGATE_FAULT_LISTENER_DELAY_MS";

/// The channel of `schema`'s changes.
pub(super) fn channel(schema: &str) -> String {
    format!("tg_{:016x}", super::lock_key(schema, "changes"))
}

/// A change's payload: `"{collection} {hex id}"`.
pub(super) fn payload(collection: &str, id: &[u8]) -> String {
    let mut s = String::with_capacity(collection.len() + 1 + 2 * id.len());
    s.push_str(collection);
    s.push(' ');
    for b in id {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl PgEngine {
    /// Starts this node's listener with trust window `window` (see the module's
    /// documentation), and from now on waits `window` after each notifying commit. It runs
    /// until the returned [`ChangeListener`] is dropped by everyone else, reconnecting (100 ms to
    /// 2 s apart) whenever its connection is lost.
    pub fn listen(&self, window: Duration) -> Arc<ChangeListener> {
        let watch = Arc::new(ChangeListener::new(window));
        self.notify_wait_us.store(
            u64::try_from(window.as_micros()).unwrap_or(u64::MAX),
            Ordering::Release,
        );
        let config = self.config.clone();
        let channel = channel(&self.schema);
        let name = format!("tollgate-listen {}", self.schema);
        let task = watch.clone();
        let reach = self.reach.clone();
        tokio::spawn(async move {
            let mut backoff = Duration::from_millis(100);
            // Failed attempts in a row: the first is logged, then one in 30 (a minute at
            // the longest backoff), and the return.
            let mut failing: u64 = 0;
            loop {
                if Arc::strong_count(&task) == 1 {
                    return;
                }
                let started = Instant::now();
                match listen_once(&config, &name, &channel, &task, &reach).await {
                    Ok(()) => return,
                    Err((why, listened)) => {
                        task.set_connected(false);
                        if listened {
                            if failing > 0 {
                                tracing::info!(
                                    attempts = failing,
                                    "the store's listener listens again"
                                );
                            }
                            failing = 0;
                        }
                        if failing.is_multiple_of(30) {
                            tracing::warn!(%why, attempts = failing + 1, "the store's listener lost its connection; reconnecting");
                        }
                        failing += 1;
                    }
                }
                if started.elapsed() > Duration::from_secs(10) {
                    backoff = Duration::from_millis(100);
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        });
        watch
    }
}

/// One connection's life: listens, pings, hands changes to the subscribers. `Ok` when the
/// watch is no longer wanted; `Err((why, listened))` when the connection failed, after it
/// listened or not. A failed attempt to connect tells `reach` the database is down, a
/// successful one that it is up.
async fn listen_once(
    config: &tokio_postgres::Config,
    name: &str,
    channel: &str,
    watch: &Arc<ChangeListener>,
    reach: &Arc<Reach>,
) -> Result<(), (String, bool)> {
    let mut named = config.clone();
    named.application_name(name);
    let (client, mut connection) = match named.connect(NoTls).await {
        Ok(connected) => {
            reach.succeeded();
            connected
        }
        Err(e) => {
            let why = describe(&e);
            reach.failed(&why, config);
            return Err((why, false));
        }
    };
    let listened = std::sync::atomic::AtomicBool::new(false);
    let delay = std::env::var(FAULT_LISTENER_DELAY)
        .ok()
        .and_then(|ms| ms.parse::<u64>().ok())
        .map(Duration::from_millis);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<
        Result<(Instant, tokio_postgres::Notification), String>,
    >();
    let pump = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if tx.send(Ok((Instant::now(), n))).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    let _ = tx.send(Err(describe(&e)));
                    return;
                }
                None => {
                    let _ = tx.send(Err("the connection closed".to_string()));
                    return;
                }
            }
        }
    });
    // The fault injection: messages pass through a task that holds each back until it is
    // `delay` old, in order, while this loop goes on pinging on time.
    let (rx, delayer) = match delay {
        None => (rx, None),
        Some(delay) => {
            let (late_tx, late_rx) = tokio::sync::mpsc::unbounded_channel();
            let task = tokio::spawn(async move {
                while let Some(m) = rx.recv().await {
                    if let Ok((arrived, _)) = &m {
                        tokio::time::sleep_until((*arrived + delay).into()).await;
                    }
                    if late_tx.send(m).is_err() {
                        return;
                    }
                }
            });
            (late_rx, Some(task))
        }
    };
    let mut rx = rx;
    let outcome = async {
        client
            .batch_execute(&format!(
                "SET synchronous_commit = off; LISTEN \"{channel}\""
            ))
            .await
            .map_err(|e| describe(&e))?;
        // Listening: everything committed from now on is heard; a read that starts now
        // sees everything committed before.
        watch.set_connected(true);
        listened.store(true, Ordering::Relaxed);
        let node = format!("{:016x}", rand_u64());
        let ping_every = (watch.window / 5).max(Duration::from_millis(1));
        let mut ticker = tokio::time::interval(ping_every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut sent: std::collections::VecDeque<(u64, u64)> = Default::default();
        let mut n: u64 = 0;
        let ping = client
            .prepare("SELECT pg_notify($1, $2)")
            .await
            .map_err(|e| describe(&e))?;
        loop {
            tokio::select! {
                message = rx.recv() => {
                    let message = match message {
                        Some(Ok((_, m))) => m,
                        Some(Err(why)) => return Err(why),
                        None => return Err("the connection closed".to_string()),
                    };
                    let mut parts = message.payload().splitn(3, ' ');
                    match (parts.next(), parts.next(), parts.next()) {
                        (Some("ping"), Some(from), Some(k)) if from == node => {
                            let Ok(k) = k.parse::<u64>() else { continue };
                            while let Some(&(m, at)) = sent.front() {
                                if m > k {
                                    break;
                                }
                                sent.pop_front();
                                if m == k {
                                    watch.caught_up.store(at + 1, Ordering::Release);
                                }
                            }
                        }
                        (Some("ping"), _, _) => {}
                        (Some(collection), Some(id), None) => match parse_hex(id) {
                            Some(id) => watch.changed(collection, &id),
                            None => tracing::warn!(payload = message.payload(), "unreadable change notification"),
                        },
                        _ => tracing::warn!(payload = message.payload(), "unreadable change notification"),
                    }
                }
                _ = ticker.tick() => {
                    if Arc::strong_count(watch) == 1 {
                        return Ok(());
                    }
                    n += 1;
                    // Noted before it is sent: a ping heard back proves every change
                    // committed before this instant was handled.
                    sent.push_back((n, watch.now_ns()));
                    if sent.len() > 1_000 {
                        sent.pop_front();
                    }
                    let payload = format!("ping {node} {n}");
                    match tokio::time::timeout(
                        Duration::from_secs(10),
                        client.execute(&ping, &[&channel, &payload]),
                    )
                    .await
                    {
                        Ok(Ok(_)) => {}
                        Ok(Err(e)) => return Err(describe(&e)),
                        Err(_) => return Err("a ping took over 10 s".to_string()),
                    }
                }
            }
        }
    }
    .await;
    pump.abort();
    if let Some(task) = delayer {
        task.abort();
    }
    outcome.map_err(|why| (why, listened.load(Ordering::Relaxed)))
}

/// A node's name in its pings: random enough that two listeners of one schema never share
/// it.
fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip() {
        let p = payload("counted", &[0x01, 0xab, 0xff]);
        assert_eq!(p, "counted 01abff");
        assert_eq!(parse_hex("01abff"), Some(vec![0x01, 0xab, 0xff]));
        assert_eq!(parse_hex("0"), None);
        assert_eq!(parse_hex("zz"), None);
    }

    #[test]
    fn a_new_watch_is_not_trusted_and_reconnects_move_the_epoch() {
        let w = ChangeListener::new(Duration::from_millis(100));
        assert_eq!(w.trusted_epoch(), None);
        assert!(!w.connected());
        w.set_connected(true);
        assert!(w.connected());
        assert_eq!(w.trusted_epoch(), None, "no ping heard yet");
        w.caught_up.store(w.now_ns() + 1, Ordering::Release);
        assert_eq!(w.trusted_epoch(), Some(2));
        w.set_connected(false);
        assert_eq!(w.trusted_epoch(), None);
        w.set_connected(true);
        assert_eq!(w.epoch(), 4);
        assert_eq!(
            w.trusted_epoch(),
            None,
            "caught up again only after a new ping"
        );
        w.caught_up.store(1, Ordering::Release);
        std::thread::sleep(Duration::from_millis(120));
        assert_eq!(
            w.trusted_epoch(),
            None,
            "the last ping is older than the window"
        );
    }

    #[test]
    fn the_last_moment_caught_up_outlives_the_connection() {
        let w = ChangeListener::new(Duration::from_millis(100));
        assert_eq!(w.last_caught_up(), None, "never caught up");
        w.set_connected(true);
        w.caught_up.store(w.now_ns() + 1, Ordering::Release);
        let (epoch, age) = w.last_caught_up().expect("caught up");
        assert_eq!(epoch, 2);
        assert!(age < Duration::from_secs(5));
        w.set_connected(false);
        assert_eq!(w.trusted_epoch(), None);
        assert_eq!(
            w.last_caught_up().map(|(e, _)| e),
            Some(2),
            "kept through the loss"
        );
        // A connection that never caught up keeps the earlier moment.
        w.set_connected(true);
        assert_eq!(w.last_caught_up().map(|(e, _)| e), Some(2));
        w.set_connected(false);
        assert_eq!(w.last_caught_up().map(|(e, _)| e), Some(2));
        std::thread::sleep(Duration::from_millis(20));
        let (_, later) = w.last_caught_up().expect("still known");
        assert!(
            later >= Duration::from_millis(20),
            "its age grows: {later:?}"
        );
        // A new connection that caught up replaces it.
        w.set_connected(true);
        w.caught_up.store(w.now_ns() + 1, Ordering::Release);
        assert_eq!(w.last_caught_up().map(|(e, _)| e), Some(6));
    }

    #[test]
    fn subscribers_hear_changes_in_order_with_their_sequence() {
        let w = ChangeListener::new(Duration::from_millis(100));
        let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
        let h = heard.clone();
        w.subscribe(move |c, id, seq| h.lock().unwrap().push((c.to_string(), id.to_vec(), seq)));
        w.changed("counted", &[1]);
        w.changed("counted", &[2]);
        assert_eq!(
            *heard.lock().unwrap(),
            vec![
                ("counted".to_string(), vec![1], 1),
                ("counted".to_string(), vec![2], 2)
            ]
        );
        assert_eq!(w.seq(), 2);
    }
}
