//! What one node knows of the changes other nodes make to the records it caches
//! ([`ChangeListener`], from [`crate::Store::listen`]): the changes heard, in commit
//! order, and whether everything committed up to a trust window ago has been heard. Engine
//! neutral: an engine with other writers drives it (PostgreSQL's `LISTEN`, `pg/listen.rs`,
//! which says how the window is kept); the embedded engine has none and gives no listener.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

type Subscriber = Arc<dyn Fn(&str, &[u8], u64) + Send + Sync>;

/// What one node's listener knows (see the module's documentation).
pub struct ChangeListener {
    pub(crate) window: Duration,
    base: Instant,
    /// Even: listening; odd: not (connecting, or down).
    epoch: AtomicU64,
    /// When the last ping heard back was sent, in nanoseconds since `base` (plus one: 0 is
    /// "none in this epoch").
    pub(crate) caught_up: AtomicU64,
    /// Changes handled so far (the sequence number a subscriber is given).
    seq: AtomicU64,
    reconnects: AtomicU64,
    /// `(epoch, caught_up)` as they were when the connection was last lost (caught up or
    /// not): what [`ChangeListener::last_caught_up`] answers while it is down.
    lost: std::sync::Mutex<(u64, u64)>,
    subscribers: RwLock<Vec<Subscriber>>,
}

impl ChangeListener {
    pub(crate) fn new(window: Duration) -> Self {
        Self {
            window,
            base: Instant::now(),
            epoch: AtomicU64::new(1),
            caught_up: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            reconnects: AtomicU64::new(0),
            lost: std::sync::Mutex::new((1, 0)),
            subscribers: RwLock::new(Vec::new()),
        }
    }

    /// The trust window (`storage.notify_window_ms`).
    pub fn window(&self) -> Duration {
        self.window
    }

    /// The connection's epoch: even while listening, odd while not.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// How many changes were handled so far: a cache notes it *before* it reads the store,
    /// and trusts what it read only if no change of that record was handled after.
    pub fn seq(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// Whether the listener is connected and listening.
    pub fn connected(&self) -> bool {
        self.epoch().is_multiple_of(2)
    }

    /// How many times the listening connection was lost.
    pub fn reconnects(&self) -> u64 {
        self.reconnects.load(Ordering::Relaxed)
    }

    /// `Some(epoch)` while everything committed up to `window` ago has been handled: the
    /// connection listens and its last ping came back having been sent at most `window`
    /// ago. `None`: a cache must check the store.
    pub fn trusted_epoch(&self) -> Option<u64> {
        let caught_up = self.caught_up.load(Ordering::Acquire);
        let epoch = self.epoch.load(Ordering::Acquire);
        if caught_up == 0 || !epoch.is_multiple_of(2) {
            return None;
        }
        let now = self.now_ns();
        let age = now.saturating_sub(caught_up - 1);
        (age <= self.window.as_nanos() as u64).then_some(epoch)
    }

    /// The last moment up to which everything committed is known to have been heard, as
    /// `(epoch, age)`: the last ping heard back (in `epoch`) was sent `age` ago. Unlike
    /// [`ChangeListener::trusted_epoch`] it survives the connection's loss, for the
    /// callers that may answer from memory through an outage for a bounded time (what they
    /// read in `epoch` was current `age` ago). `None`: no ping was ever heard back.
    pub fn last_caught_up(&self) -> Option<(u64, Duration)> {
        let epoch = self.epoch.load(Ordering::Acquire);
        let caught_up = self.caught_up.load(Ordering::Acquire);
        let (epoch, caught_up) = if caught_up != 0 && epoch == self.epoch.load(Ordering::Acquire) {
            (epoch, caught_up)
        } else {
            *self.lost.lock().unwrap_or_else(|e| e.into_inner())
        };
        (caught_up != 0).then(|| {
            (
                epoch,
                Duration::from_nanos(self.now_ns().saturating_sub(caught_up - 1)),
            )
        })
    }

    /// Calls `f(collection, id, seq)` for every change heard, in commit order, before the
    /// listener handles anything after it.
    pub fn subscribe(&self, f: impl Fn(&str, &[u8], u64) + Send + Sync + 'static) {
        self.subscribers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::new(f));
    }

    pub(crate) fn now_ns(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
    }

    pub(crate) fn changed(&self, collection: &str, id: &[u8]) {
        let seq = self.seq.fetch_add(1, Ordering::AcqRel) + 1;
        let subscribers = self
            .subscribers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for f in &subscribers {
            f(collection, id, seq);
        }
    }

    pub(crate) fn set_connected(&self, connected: bool) {
        let epoch = self.epoch.load(Ordering::Acquire);
        if epoch.is_multiple_of(2) != connected {
            if !connected {
                let caught_up = self.caught_up.load(Ordering::Acquire);
                let mut lost = self.lost.lock().unwrap_or_else(|e| e.into_inner());
                // A connection lost before it caught up keeps the earlier epoch's moment.
                if caught_up != 0 {
                    *lost = (epoch, caught_up);
                }
                drop(lost);
                self.caught_up.store(0, Ordering::Release);
                self.reconnects.fetch_add(1, Ordering::Relaxed);
            }
            self.epoch.store(epoch + 1, Ordering::Release);
        }
    }
}
