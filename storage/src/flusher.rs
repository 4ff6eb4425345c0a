//! Group-commit durability, and what happens when the disk refuses a write.
//!
//! sled's `insert` is only in memory until its log is flushed: an acknowledged write that
//! was not flushed is lost on `kill -9`. Every writer therefore waits, before it replies,
//! for a flush that *began after its write*. One dedicated OS thread does all flushing,
//! back to back while anyone waits, with no fixed interval, so one flush serves every write
//! that was waiting when it started (group commit). Under load it may hold a flush briefly
//! (at most [`GATHER_WINDOW`]) until as many writers wait as the last flush served; a lone
//! writer is flushed at once. `sled::Db::flush_async` is never used:
//! in sled 0.34.7 it deadlocks under concurrent callers.
//!
//! **Failures.** A flush that fails (disk full, read-only file system, I/O error) puts the
//! store in the *failed* state for good: every waiter gets the error, every later commit
//! and every wait for a write that is not durable fails at once with
//! [`StorageError::Unavailable`], and [`crate::Store::health`] reports it (`/readyz` turns
//! 503). It is sticky because neither step can be retried safely: sled 0.34 keeps the
//! first write error as a "global error" that only reopening the database clears (every
//! later flush returns it, even once space is back: `store_tests` shows it), and after a
//! failed `fdatasync` the kernel may have dropped the dirty pages, so a later successful
//! one proves nothing. What was acknowledged before is on disk and stays there.
//! The watchdog thread then probes, with a growing pause (100 ms up to 5 s), whether the
//! data directory accepts writes again; once it does, the health turns to
//! [`StoreHealth::NeedsRestart`]: the process should exit so that a supervisor restarts it
//! and sled reopens (and recovers) its log. `tollgate serve` does that, with exit code 75.
//!
//! **Deadlines.** No wait on the flusher is unbounded: a watchdog thread fails every
//! waiter (future or callback) still waiting after the flush deadline with
//! [`StorageError::Unavailable`], even if a flush hangs in the kernel. The flusher thread
//! never dies: a panic in a pass is caught, reported, counted as a failure and the loop
//! goes on.

use std::fs::File;
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::sync::oneshot;

use crate::StorageError;

/// How long a write or a read barrier may wait for its flush before it fails.
pub const DEFAULT_FLUSH_DEADLINE: Duration = Duration::from_secs(10);

/// Size of the file written to learn whether the data directory accepts writes again.
const PROBE_BYTES: usize = 1 << 20;
const PROBE_FILE: &str = ".tollgate-write-probe";
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// How far a flush goes before writes are acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DurabilityMode {
    /// sled's flush: the data is handed to the OS and survives a killed process.
    #[default]
    Process,
    /// sled's flush followed by `fdatasync` of its log: survives a power cut.
    Power,
}

/// Whether the store can acknowledge writes (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreHealth {
    /// Flushes succeed.
    Healthy,
    /// A flush failed: no write is acknowledged any more; the cause may still be there.
    Failed { error: String },
    /// A flush failed and the data directory accepts writes again, but the engine cannot
    /// recover in this process: restart it (nothing acknowledged is lost).
    NeedsRestart { error: String },
}

impl StoreHealth {
    pub fn is_healthy(&self) -> bool {
        matches!(self, StoreHealth::Healthy)
    }
}

const HEALTHY: u8 = 0;
const FAILED: u8 = 1;
const NEEDS_RESTART: u8 = 2;

/// Who to tell when a flush covers a write: a future's channel, or a callback run on the
/// flusher thread (so an answer can go straight to whoever waits for it).
pub(crate) enum Notify {
    Channel(oneshot::Sender<Result<(), StorageError>>),
    Call(Box<dyn FnOnce(Result<(), StorageError>) + Send>),
}

impl Notify {
    fn send(self, result: Result<(), StorageError>) {
        match self {
            Notify::Channel(tx) => {
                let _ = tx.send(result);
            }
            Notify::Call(f) => {
                // A callback that panics must not take the flusher (or the watchdog) down.
                if catch_unwind(AssertUnwindSafe(move || f(result))).is_err() {
                    tracing::error!("a durability callback panicked");
                }
            }
        }
    }
}

struct Waiter {
    seq: u64,
    deadline: Instant,
    notify: Notify,
}

/// The waiters, and whether the flusher sleeps waiting for one (only then does a new
/// waiter need to wake it: a wake-up is a system call), or gathers them until there are
/// `gather` (see [`GATHER_WINDOW`]).
struct Queue {
    waiters: Vec<Waiter>,
    sleeping: bool,
    /// While the flusher gathers: the count of waiters at which it flushes at once.
    gather: usize,
}

/// How long the flusher may hold a flush to let it serve more writes (group commit under
/// load). A flush costs far more than the write it makes durable (sled hands the log
/// buffer to its IO thread pool, whose idle threads all wake up for each one), so, when
/// the last flush served several writers and followed the one before closely, the next
/// one waits until as many writers wait again, or at most this long. A lone writer, or
/// the first write after a quiet moment, is flushed at once.
const GATHER_WINDOW: Duration = Duration::from_micros(400);

pub(crate) struct Flusher {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

struct Shared {
    /// Sequence number of the last committed write.
    committed: AtomicU64,
    /// Every write with a sequence number up to this one is durable.
    durable: AtomicU64,
    queue: Mutex<Queue>,
    wake: Condvar,
    closing: AtomicBool,
    flushes: AtomicU64,
    /// Waiters the flushes served (writes made durable, counted by who waited for them).
    flushed_waiters: AtomicU64,
    /// Time spent in flushes, in nanoseconds.
    flush_nanos: AtomicU64,
    /// Flushes per batch-size and duration bucket (see [`crate::FlushStats`]).
    size_buckets: [AtomicU64; 10],
    duration_buckets: [AtomicU64; 10],
    deadline: Duration,
    health: AtomicU8,
    /// The first failure, for [`StoreHealth`] and error messages.
    failure: Mutex<Option<String>>,
    /// The watchdog's sleep, cut short on shutdown.
    watchdog: (Mutex<()>, Condvar),
    #[cfg(test)]
    test: TestHooks,
}

#[cfg(test)]
#[derive(Default)]
pub(crate) struct TestHooks {
    /// While set, the flusher does not flush (a flush that hangs).
    pub(crate) stall: AtomicBool,
    /// The next flush fails with this error.
    pub(crate) fail_next: Mutex<Option<String>>,
    /// The next flush pass panics.
    pub(crate) panic_next: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    fn health(&self) -> StoreHealth {
        let error = || lock(&self.failure).clone().unwrap_or_default();
        match self.health.load(Ordering::SeqCst) {
            HEALTHY => StoreHealth::Healthy,
            NEEDS_RESTART => StoreHealth::NeedsRestart { error: error() },
            _ => StoreHealth::Failed { error: error() },
        }
    }

    fn unavailable(&self) -> StorageError {
        let cause = lock(&self.failure).clone().unwrap_or_default();
        StorageError::Unavailable(format!("an earlier flush failed ({cause})"))
    }

    /// Enters the failed state (once: the first cause is kept) and reports it.
    fn fail(&self, cause: &str) {
        {
            let mut failure = lock(&self.failure);
            if failure.is_none() {
                *failure = Some(cause.to_string());
            }
        }
        if self
            .health
            .compare_exchange(HEALTHY, FAILED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            tracing::error!(
                error = cause,
                "store flush failed: no write is acknowledged any more; requests answer 503 \
                 until the process restarts (it exits by itself once the disk accepts writes)"
            );
        }
    }
}

impl Flusher {
    pub(crate) fn start(
        db: sled::Db,
        mode: DurabilityMode,
        dir: Option<PathBuf>,
        deadline: Duration,
    ) -> Result<Self, StorageError> {
        let shared = Arc::new(Shared {
            committed: AtomicU64::new(0),
            durable: AtomicU64::new(0),
            queue: Mutex::new(Queue {
                waiters: Vec::new(),
                sleeping: false,
                gather: 0,
            }),
            wake: Condvar::new(),
            closing: AtomicBool::new(false),
            flushes: AtomicU64::new(0),
            flushed_waiters: AtomicU64::new(0),
            flush_nanos: AtomicU64::new(0),
            size_buckets: Default::default(),
            duration_buckets: Default::default(),
            deadline,
            health: AtomicU8::new(HEALTHY),
            failure: Mutex::new(None),
            watchdog: (Mutex::new(()), Condvar::new()),
            #[cfg(test)]
            test: TestHooks::default(),
        });
        let log = match (mode, &dir) {
            (DurabilityMode::Power, Some(dir)) => {
                Some(File::open(dir.join("db")).map_err(|e| {
                    StorageError::Io(format!("cannot open the log for fdatasync: {e}"))
                })?)
            }
            _ => None,
        };
        let thread_shared = shared.clone();
        let flusher = std::thread::Builder::new()
            .name("tollgate-flusher".into())
            .spawn(move || run(thread_shared, db, log))
            .map_err(|e| StorageError::Io(format!("cannot start the flusher thread: {e}")))?;
        let watchdog_shared = shared.clone();
        let watchdog_dir = dir.clone();
        let watchdog = std::thread::Builder::new()
            .name("tollgate-flush-watchdog".into())
            .spawn(move || watchdog(watchdog_shared, watchdog_dir))
            .map_err(|e| StorageError::Io(format!("cannot start the flush watchdog: {e}")))?;
        Ok(Self {
            shared,
            threads: Mutex::new(vec![flusher, watchdog]),
        })
    }

    #[cfg(test)]
    pub(crate) fn test_hooks(&self) -> &TestHooks {
        &self.shared.test
    }

    pub(crate) fn health(&self) -> StoreHealth {
        self.shared.health()
    }

    /// `Err` when the store accepts no more writes (see the module docs).
    pub(crate) fn check_writable(&self) -> Result<(), StorageError> {
        if self.shared.health.load(Ordering::SeqCst) != HEALTHY {
            return Err(self.shared.unavailable());
        }
        if self.shared.closing.load(Ordering::SeqCst) {
            return Err(StorageError::Closed);
        }
        Ok(())
    }

    /// The engine refused a write (an I/O error outside a flush): enter the failed state,
    /// as a failed flush does, and let the flusher fail the waiters and start probing.
    pub(crate) fn fail(&self, cause: &str) {
        self.shared.fail(cause);
        let _queue = lock(&self.shared.queue);
        self.shared.wake.notify_all();
    }

    /// Records that a write completed and returns its sequence number.
    pub(crate) fn committed(&self) -> u64 {
        self.shared.committed.fetch_add(1, Ordering::SeqCst) + 1
    }

    pub(crate) fn last_committed(&self) -> u64 {
        self.shared.committed.load(Ordering::SeqCst)
    }

    pub(crate) fn is_durable(&self, seq: u64) -> bool {
        self.shared.durable.load(Ordering::SeqCst) >= seq
    }

    pub(crate) fn stats(&self) -> crate::FlushStats {
        crate::FlushStats {
            flushes: self.shared.flushes.load(Ordering::Relaxed),
            waiters_served: self.shared.flushed_waiters.load(Ordering::Relaxed),
            flush_seconds: self.shared.flush_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            sizes: self
                .shared
                .size_buckets
                .each_ref()
                .map(|b| b.load(Ordering::Relaxed)),
            durations: self
                .shared
                .duration_buckets
                .each_ref()
                .map(|b| b.load(Ordering::Relaxed)),
        }
    }

    /// The error of a wait that cannot succeed now, if any.
    fn refuse(&self, seq: u64) -> Option<Result<(), StorageError>> {
        if self.shared.durable.load(Ordering::SeqCst) >= seq {
            Some(Ok(()))
        } else if self.shared.health.load(Ordering::SeqCst) != HEALTHY {
            Some(Err(self.shared.unavailable()))
        } else if self.shared.closing.load(Ordering::SeqCst) {
            Some(Err(StorageError::Closed))
        } else {
            None
        }
    }

    /// Resolves once every write up to `seq` is durable, or fails (flush error, deadline).
    pub(crate) fn wait(&self, seq: u64) -> DurableFuture {
        match self.refuse(seq) {
            Some(Ok(())) => DurableFuture::Wait(None),
            Some(Err(e)) => DurableFuture::Ready(Some(Err(e))),
            None => {
                let (tx, rx) = oneshot::channel();
                self.enqueue(seq, Notify::Channel(tx));
                DurableFuture::Wait(Some(rx))
            }
        }
    }

    /// Calls `f` once every write up to `seq` is durable (or with the error of the flush
    /// that failed, or at the deadline): at once, on this thread, if that is known now;
    /// else on the flusher or watchdog thread. `f` must be quick and must not block.
    pub(crate) fn on_durable(&self, seq: u64, f: Box<dyn FnOnce(Result<(), StorageError>) + Send>) {
        match self.refuse(seq) {
            Some(result) => f(result),
            None => self.enqueue(seq, Notify::Call(f)),
        }
    }

    fn enqueue(&self, seq: u64, notify: Notify) {
        let mut queue = lock(&self.shared.queue);
        queue.waiters.push(Waiter {
            seq,
            deadline: Instant::now() + self.shared.deadline,
            notify,
        });
        if queue.sleeping {
            queue.sleeping = false;
            self.shared.wake.notify_one();
        } else if queue.gather > 0 && queue.waiters.len() >= queue.gather {
            queue.gather = 0;
            self.shared.wake.notify_one();
        }
    }

    /// Stops the threads after a last flush that covers every committed write.
    pub(crate) fn shutdown(&self) {
        self.shared.closing.store(true, Ordering::SeqCst);
        {
            let _queue = lock(&self.shared.queue);
            self.shared.wake.notify_all();
        }
        {
            let _w = lock(&self.shared.watchdog.0);
            self.shared.watchdog.1.notify_all();
        }
        let handles: Vec<_> = lock(&self.threads).drain(..).collect();
        // A failed store's flusher may be stuck in sled's flush for good: give the threads
        // a moment, then leave them, so that stopping never hangs (nothing they hold was
        // acknowledged).
        let failed = self.shared.health.load(Ordering::SeqCst) != HEALTHY;
        let give_up = Instant::now() + Duration::from_secs(2);
        for handle in handles {
            while failed && !handle.is_finished() && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(5));
            }
            if !failed || handle.is_finished() {
                let _ = handle.join();
            }
        }
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Fails waiters whose deadline passed, whatever the flusher is doing; and, once the store
/// has failed, probes (with backoff) whether the data directory accepts writes again. The
/// probing lives here, not in the flusher, because after a failed write sled's own flush
/// may never return: the flusher thread can be stuck for good, this one never is.
fn watchdog(shared: Arc<Shared>, dir: Option<PathBuf>) {
    let tick = (shared.deadline / 4).clamp(Duration::from_millis(10), Duration::from_millis(250));
    let mut backoff = BACKOFF_MIN;
    let mut next_probe = Instant::now();
    while !shared.closing.load(Ordering::SeqCst) {
        {
            let guard = lock(&shared.watchdog.0);
            let _ = shared.watchdog.1.wait_timeout(guard, tick.min(backoff));
        }
        let now = Instant::now();
        if shared.health.load(Ordering::SeqCst) == FAILED && now >= next_probe {
            fail_all(&shared);
            probe_pass(&shared, dir.as_deref());
            next_probe = now + backoff;
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
        let expired: Vec<Waiter> = {
            let mut queue = lock(&shared.queue);
            if queue.waiters.iter().all(|w| w.deadline > now) {
                continue;
            }
            let (expired, pending) = queue.waiters.drain(..).partition(|w| w.deadline <= now);
            queue.waiters = pending;
            expired
        };
        tracing::warn!(
            waiters = expired.len(),
            deadline_ms = shared.deadline.as_millis() as u64,
            "writes waited too long for their flush; failing them"
        );
        for w in expired {
            w.notify.send(Err(StorageError::Unavailable(
                "the flush did not finish in time".into(),
            )));
        }
    }
}

fn run(shared: Arc<Shared>, db: sled::Db, log: Option<File>) {
    let mut backoff = BACKOFF_MIN;
    let mut last = LastFlush::default();
    loop {
        let pass = catch_unwind(AssertUnwindSafe(|| {
            if shared.health.load(Ordering::SeqCst) == HEALTHY {
                flush_pass(&shared, &db, log.as_ref(), &mut last)
            } else {
                // The watchdog probes the disk; this thread only answers waiters.
                fail_all(&shared);
                Pass::Sleep
            }
        }));
        let next = match pass {
            Ok(next) => next,
            Err(_) => {
                shared.fail("the flusher panicked");
                fail_all(&shared);
                Pass::Sleep
            }
        };
        match next {
            Pass::Stop => break,
            Pass::Again => backoff = BACKOFF_MIN,
            Pass::Sleep => {
                if shared.closing.load(Ordering::SeqCst) {
                    fail_all(&shared);
                    break;
                }
                let queue = lock(&shared.queue);
                let _ = shared.wake.wait_timeout(queue, backoff);
                backoff = (backoff * 2).min(BACKOFF_MAX);
            }
        }
    }
}

enum Pass {
    /// Look for waiters again.
    Again,
    /// Failed: pause (with backoff) before the next probe.
    Sleep,
    Stop,
}

/// What the flusher remembers of its previous flush, to decide whether to gather.
#[derive(Default)]
struct LastFlush {
    /// Waiters it served.
    served: usize,
    /// When it finished.
    ended: Option<Instant>,
}

impl LastFlush {
    /// How many waiters the next flush should wait for (at most [`GATHER_WINDOW`]): as many
    /// as the last one served if it ended less than a window ago, else none.
    fn gather_target(&self, now: Instant) -> usize {
        match self.ended {
            Some(ended) if self.served > 1 && now.duration_since(ended) < GATHER_WINDOW => {
                self.served
            }
            _ => 0,
        }
    }
}

fn flush_pass(shared: &Shared, db: &sled::Db, log: Option<&File>, last: &mut LastFlush) -> Pass {
    {
        let mut queue = lock(&shared.queue);
        while queue.waiters.is_empty() && !shared.closing.load(Ordering::SeqCst) {
            queue.sleeping = true;
            queue = shared.wake.wait(queue).unwrap_or_else(|p| p.into_inner());
        }
        queue.sleeping = false;
        let start = Instant::now();
        let target = last.gather_target(start);
        let until = start + GATHER_WINDOW;
        while queue.waiters.len() < target && !shared.closing.load(Ordering::SeqCst) {
            let now = Instant::now();
            if now >= until {
                break;
            }
            queue.gather = target;
            queue = shared
                .wake
                .wait_timeout(queue, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        queue.gather = 0;
    }
    #[cfg(test)]
    {
        while shared.test.stall.load(Ordering::SeqCst) && !shared.closing.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
        }
        if shared.test.panic_next.swap(false, Ordering::SeqCst) {
            #[allow(clippy::panic)]
            {
                panic!("test: the flusher panics");
            }
        }
    }
    // Every write numbered up to `target` finished before this flush starts.
    let target = shared.committed.load(Ordering::SeqCst);
    let began = Instant::now();
    let result = flush(shared, db, log);
    let took = u64::try_from(began.elapsed().as_nanos()).unwrap_or(u64::MAX);
    shared.flush_nanos.fetch_add(took, Ordering::Relaxed);
    shared.flushes.fetch_add(1, Ordering::Relaxed);
    match &result {
        Ok(()) => {
            shared.durable.fetch_max(target, Ordering::SeqCst);
        }
        Err(e) => shared.fail(&e.to_string()),
    }
    let ready: Vec<Waiter> = {
        let mut queue = lock(&shared.queue);
        let (ready, pending) = queue
            .waiters
            .drain(..)
            .partition(|w| w.seq <= target || result.is_err());
        queue.waiters = pending;
        ready
    };
    last.served = ready.len();
    shared
        .flushed_waiters
        .fetch_add(ready.len() as u64, Ordering::Relaxed);
    shared.size_buckets[crate::bucket_of(&crate::FLUSH_SIZE_BOUNDS, ready.len() as f64)]
        .fetch_add(1, Ordering::Relaxed);
    shared.duration_buckets[crate::bucket_of(&crate::FLUSH_SECONDS_BOUNDS, took as f64 / 1e9)]
        .fetch_add(1, Ordering::Relaxed);
    for w in ready {
        w.notify.send(result.clone());
    }
    last.ended = Some(Instant::now());
    if result.is_err() {
        return Pass::Sleep;
    }
    if shared.closing.load(Ordering::SeqCst) && lock(&shared.queue).waiters.is_empty() {
        // A last flush for writes that nobody waited for.
        let _ = flush(shared, db, log);
        return Pass::Stop;
    }
    Pass::Again
}

/// Fails every waiter at once (the store is failed or closing).
fn fail_all(shared: &Shared) {
    let waiters: Vec<Waiter> = lock(&shared.queue).waiters.drain(..).collect();
    for w in waiters {
        let error = if shared.health.load(Ordering::SeqCst) == HEALTHY {
            StorageError::Closed
        } else {
            shared.unavailable()
        };
        w.notify.send(Err(error));
    }
}

/// In the failed state: does the data directory accept writes again? Then the process
/// should restart (see the module docs).
fn probe_pass(shared: &Shared, dir: Option<&Path>) {
    if shared.health.load(Ordering::SeqCst) == NEEDS_RESTART {
        return;
    }
    let writable = match dir {
        Some(dir) => match probe_write(dir) {
            Ok(()) => true,
            Err(e) => {
                tracing::debug!(error = %e, "the data directory still refuses writes");
                false
            }
        },
        // A temporary store has nothing to come back to.
        None => true,
    };
    if writable {
        shared.health.store(NEEDS_RESTART, Ordering::SeqCst);
        tracing::error!(
            "the data directory accepts writes again, but the store cannot recover from its \
             failed flush in this process: restart the service (nothing acknowledged is lost)"
        );
    }
}

fn probe_write(dir: &Path) -> std::io::Result<()> {
    let path = dir.join(PROBE_FILE);
    let result = (|| {
        let mut f = File::create(&path)?;
        f.write_all(&vec![0u8; PROBE_BYTES])?;
        f.sync_all()
    })();
    let _ = std::fs::remove_file(&path);
    result
}

fn flush(shared: &Shared, db: &sled::Db, log: Option<&File>) -> Result<(), StorageError> {
    #[cfg(test)]
    if let Some(e) = lock(&shared.test.fail_next).take() {
        return Err(StorageError::Io(e));
    }
    let _ = shared;
    db.flush()?;
    if let Some(log) = log {
        log.sync_data()
            .map_err(|e| StorageError::Io(format!("fdatasync failed: {e}")))?;
    }
    Ok(())
}

/// Resolves when the writes it waits for are durable (see [`crate::Store::durable`]), or
/// with an error: the flush failed, the store is failed or closing, or the flush deadline
/// passed. It never waits longer than the deadline.
#[must_use = "a write is not durable until this future resolves"]
pub enum DurableFuture {
    Ready(Option<Result<(), StorageError>>),
    Wait(Option<oneshot::Receiver<Result<(), StorageError>>>),
}

impl std::future::Future for DurableFuture {
    type Output = Result<(), StorageError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        use std::task::Poll;
        match self.get_mut() {
            DurableFuture::Ready(r) => Poll::Ready(r.take().unwrap_or(Ok(()))),
            DurableFuture::Wait(None) => Poll::Ready(Ok(())),
            DurableFuture::Wait(Some(rx)) => match std::pin::Pin::new(rx).poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Ok(r)) => Poll::Ready(r),
                // The flusher dropped the sender: it stopped before this write was flushed.
                Poll::Ready(Err(_)) => Poll::Ready(Err(StorageError::Closed)),
            },
        }
    }
}

#[cfg(test)]
mod gather_tests {
    use super::*;

    #[test]
    fn a_lone_writer_or_a_quiet_store_is_flushed_at_once() {
        let now = Instant::now();
        assert_eq!(LastFlush::default().gather_target(now), 0, "first flush");
        let lone = LastFlush {
            served: 1,
            ended: Some(now),
        };
        assert_eq!(
            lone.gather_target(now),
            0,
            "one writer never waits for others"
        );
        let quiet = LastFlush {
            served: 40,
            ended: Some(now),
        };
        let later = now + GATHER_WINDOW + Duration::from_micros(1);
        assert_eq!(
            quiet.gather_target(later),
            0,
            "a quiet moment ends gathering"
        );
    }

    #[test]
    fn under_load_the_next_flush_waits_for_as_many_writers_as_the_last() {
        let now = Instant::now();
        let busy = LastFlush {
            served: 40,
            ended: Some(now),
        };
        assert_eq!(busy.gather_target(now + GATHER_WINDOW / 2), 40);
    }
}
