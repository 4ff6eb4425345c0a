//! Whether the database can be reached for writes (issue 53): the engine's own view,
//! from the connections it opens, for `/readyz`, `/metrics` and the callers that may
//! answer without the database meanwhile.
//!
//! The database is **down** from the first connection attempt that fails (the pool's or
//! the listener's: refused, timed out, or only a read-only server answering a URL with
//! `target_session_attrs=read-write`) until one succeeds. An error on a connection that
//! was open (a backend terminated, a primary killed) says nothing by itself: the next
//! attempt decides. While it is down, every caller that needs a pooled connection is
//! answered `Unavailable` at once instead of each waiting for its own attempt, and one
//! task tries a connection every [`PROBE_EVERY`]; the first that succeeds ends the outage.
//! One line is logged when an outage starts and one when it ends, whatever the traffic.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_postgres::NoTls;

use super::describe;

/// How often a connection is tried while the database is down.
pub(crate) const PROBE_EVERY: Duration = Duration::from_millis(500);

/// What the engine knows of the database's reachability (see the module's documentation).
pub(crate) struct Reach {
    base: Instant,
    /// When the outage began, in ns since `base`, plus one; 0 while reachable.
    down_since: AtomicU64,
    /// The last failed attempt's error.
    reason: Mutex<String>,
    /// Whether the probe task runs.
    probing: AtomicBool,
    /// Outages so far.
    outages: AtomicU64,
}

/// The database's reachability, as the engine last saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseState {
    /// The last connection attempt succeeded.
    Reachable,
    /// Connection attempts fail: since how long, and the last attempt's error.
    Unreachable { down_for: Duration, reason: String },
}

impl Reach {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            base: Instant::now(),
            down_since: AtomicU64::new(0),
            reason: Mutex::new(String::new()),
            probing: AtomicBool::new(false),
            outages: AtomicU64::new(0),
        })
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
    }

    pub(crate) fn state(&self) -> DatabaseState {
        let since = self.down_since.load(Ordering::Acquire);
        if since == 0 {
            return DatabaseState::Reachable;
        }
        DatabaseState::Unreachable {
            down_for: Duration::from_nanos(self.now_ns().saturating_sub(since - 1)),
            reason: self
                .reason
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }

    /// How many outages began since the engine started.
    pub(crate) fn outages(&self) -> u64 {
        self.outages.load(Ordering::Relaxed)
    }

    /// `Some(error)` to answer a caller with while the database is down.
    pub(crate) fn refusal(&self) -> Option<String> {
        match self.state() {
            DatabaseState::Reachable => None,
            DatabaseState::Unreachable { down_for, reason } => Some(format!(
                "the database is unreachable (for {} s; a connection is tried every {} ms): {reason}",
                down_for.as_secs(),
                PROBE_EVERY.as_millis()
            )),
        }
    }

    /// A connection attempt failed with `reason`: the outage begins (or goes on), and the
    /// probe runs until an attempt succeeds.
    pub(crate) fn failed(self: &Arc<Self>, reason: &str, config: &tokio_postgres::Config) {
        *self.reason.lock().unwrap_or_else(|e| e.into_inner()) = reason.to_string();
        if self
            .down_since
            .compare_exchange(0, self.now_ns() + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.outages.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                %reason,
                "the database is unreachable; what needs it answers 503 until a connection succeeds"
            );
        }
        if self.probing.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.probing.store(false, Ordering::Release);
            return;
        };
        let reach = self.clone();
        let config = config.clone();
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(PROBE_EVERY).await;
                if Arc::strong_count(&reach) == 1 {
                    // The engine is gone.
                    reach.probing.store(false, Ordering::Release);
                    return;
                }
                match try_connect(&config).await {
                    Ok(()) => {
                        reach.succeeded();
                        reach.probing.store(false, Ordering::Release);
                        // An attempt failed between the success and the flag: its caller
                        // saw `probing` set and left the outage to this task.
                        if reach.down_since.load(Ordering::Acquire) == 0
                            || reach.probing.swap(true, Ordering::AcqRel)
                        {
                            return;
                        }
                    }
                    Err(why) => {
                        *reach.reason.lock().unwrap_or_else(|e| e.into_inner()) = why;
                    }
                }
            }
        });
    }

    /// A connection attempt succeeded: the outage, if any, is over.
    pub(crate) fn succeeded(&self) {
        let since = self.down_since.swap(0, Ordering::AcqRel);
        if since != 0 {
            let down_for = Duration::from_nanos(self.now_ns().saturating_sub(since - 1));
            tracing::info!(
                down_ms = u64::try_from(down_for.as_millis()).unwrap_or(u64::MAX),
                "the database is reachable again"
            );
        }
    }
}

/// One connection attempt with the engine's settings (hosts, `target_session_attrs`,
/// timeouts), closed at once.
async fn try_connect(config: &tokio_postgres::Config) -> Result<(), String> {
    let (client, connection) = config.connect(NoTls).await.map_err(|e| describe(&e))?;
    let task = tokio::spawn(connection);
    let checked = tokio::time::timeout(Duration::from_secs(10), client.simple_query("SELECT 1"))
        .await
        .map_err(|_| "a probe took over 10 s".to_string())
        .and_then(|r| r.map(|_| ()).map_err(|e| describe(&e)));
    drop(client);
    let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
    checked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_outage_starts_with_a_failed_attempt_and_ends_with_a_good_one() {
        let reach = Reach::new();
        assert_eq!(reach.state(), DatabaseState::Reachable);
        assert_eq!(reach.refusal(), None);
        // Nothing listens on port 1: the probe keeps failing.
        let config: tokio_postgres::Config = "postgres://u@127.0.0.1:1/db?connect_timeout=1"
            .parse()
            .expect("a valid URL");
        reach.failed("connection refused", &config);
        reach.failed("connection refused again", &config);
        assert_eq!(reach.outages(), 1, "one outage, however many failures");
        match reach.state() {
            DatabaseState::Unreachable { reason, .. } => {
                assert_eq!(reason, "connection refused again")
            }
            other => panic!("expected unreachable, got {other:?}"),
        }
        let refusal = reach.refusal().expect("refused while down");
        assert!(refusal.contains("unreachable"), "{refusal}");
        reach.succeeded();
        assert_eq!(reach.state(), DatabaseState::Reachable);
        assert_eq!(reach.refusal(), None);
        reach.failed("refused", &config);
        assert_eq!(reach.outages(), 2);
    }
}
