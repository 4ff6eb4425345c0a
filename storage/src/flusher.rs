//! Group-commit durability.
//!
//! sled's `insert` is only in memory until its log is flushed: an acknowledged write that
//! was not flushed is lost on `kill -9`. Every writer therefore waits, before it replies,
//! for a flush that *began after its write*. One dedicated OS thread does all flushing,
//! back to back while anyone waits and never on a timer, so one flush serves every write
//! that was waiting when it started (group commit). `sled::Db::flush_async` is never used:
//! in sled 0.34.7 it deadlocks under concurrent callers.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use serde::Deserialize;
use tokio::sync::oneshot;

use crate::StorageError;

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
            Notify::Call(f) => f(result),
        }
    }
}

type Waiter = (u64, Notify);

/// The waiters, and whether the flusher sleeps waiting for one (only then does a new
/// waiter need to wake it: a wake-up is a system call).
struct Queue {
    waiters: Vec<Waiter>,
    sleeping: bool,
}

pub(crate) struct Flusher {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
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
}

fn lock(m: &Mutex<Queue>) -> MutexGuard<'_, Queue> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Flusher {
    pub(crate) fn start(
        db: sled::Db,
        mode: DurabilityMode,
        dir: Option<PathBuf>,
    ) -> Result<Self, StorageError> {
        let shared = Arc::new(Shared {
            committed: AtomicU64::new(0),
            durable: AtomicU64::new(0),
            queue: Mutex::new(Queue {
                waiters: Vec::new(),
                sleeping: false,
            }),
            wake: Condvar::new(),
            closing: AtomicBool::new(false),
            flushes: AtomicU64::new(0),
        });
        let log = match (mode, dir) {
            (DurabilityMode::Power, Some(dir)) => {
                Some(File::open(dir.join("db")).map_err(|e| {
                    StorageError::Io(format!("cannot open the log for fdatasync: {e}"))
                })?)
            }
            _ => None,
        };
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("tollgate-flusher".into())
            .spawn(move || run(thread_shared, db, log))
            .map_err(|e| StorageError::Io(format!("cannot start the flusher thread: {e}")))?;
        Ok(Self {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Records that a write completed and returns its sequence number.
    pub(crate) fn committed(&self) -> u64 {
        self.shared.committed.fetch_add(1, Ordering::SeqCst) + 1
    }

    pub(crate) fn last_committed(&self) -> u64 {
        self.shared.committed.load(Ordering::SeqCst)
    }

    pub(crate) fn flush_count(&self) -> u64 {
        self.shared.flushes.load(Ordering::Relaxed)
    }

    /// Resolves once every write up to `seq` is durable.
    pub(crate) fn wait(&self, seq: u64) -> DurableFuture {
        let rx = if self.shared.durable.load(Ordering::SeqCst) >= seq {
            None
        } else if self.shared.closing.load(Ordering::SeqCst) {
            return DurableFuture::Ready(Some(Err(StorageError::Closed)));
        } else {
            let (tx, rx) = oneshot::channel();
            self.enqueue(seq, Notify::Channel(tx));
            Some(rx)
        };
        DurableFuture::Wait(rx)
    }

    /// Calls `f` once every write up to `seq` is durable (or with the error of the flush
    /// that failed): at once, on this thread, if they already are; else on the flusher
    /// thread, right after the flush. `f` must be quick and must not block.
    pub(crate) fn on_durable(&self, seq: u64, f: Box<dyn FnOnce(Result<(), StorageError>) + Send>) {
        if self.shared.durable.load(Ordering::SeqCst) >= seq {
            f(Ok(()))
        } else if self.shared.closing.load(Ordering::SeqCst) {
            f(Err(StorageError::Closed))
        } else {
            self.enqueue(seq, Notify::Call(f));
        }
    }

    fn enqueue(&self, seq: u64, notify: Notify) {
        let mut queue = lock(&self.shared.queue);
        queue.waiters.push((seq, notify));
        if queue.sleeping {
            queue.sleeping = false;
            self.shared.wake.notify_one();
        }
    }

    /// Stops the thread after a last flush that covers every committed write.
    pub(crate) fn shutdown(&self) {
        self.shared.closing.store(true, Ordering::SeqCst);
        {
            let _queue = lock(&self.shared.queue);
            self.shared.wake.notify_all();
        }
        let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn run(shared: Arc<Shared>, db: sled::Db, log: Option<File>) {
    loop {
        {
            let mut queue = lock(&shared.queue);
            while queue.waiters.is_empty() && !shared.closing.load(Ordering::SeqCst) {
                queue.sleeping = true;
                queue = shared.wake.wait(queue).unwrap_or_else(|p| p.into_inner());
            }
            queue.sleeping = false;
        }
        // Every write numbered up to `target` finished before this flush starts.
        let target = shared.committed.load(Ordering::SeqCst);
        let result = flush(&db, log.as_ref());
        shared.flushes.fetch_add(1, Ordering::Relaxed);
        if result.is_ok() {
            shared.durable.fetch_max(target, Ordering::SeqCst);
        } else {
            tracing::error!(error = ?result, "store flush failed");
        }
        let ready: Vec<Waiter> = {
            let mut queue = lock(&shared.queue);
            let (ready, pending) = queue.waiters.drain(..).partition(|(seq, _)| *seq <= target);
            queue.waiters = pending;
            ready
        };
        for (_, notify) in ready {
            notify.send(result.clone());
        }
        if shared.closing.load(Ordering::SeqCst) && lock(&shared.queue).waiters.is_empty() {
            // A last flush for writes that nobody waited for.
            let _ = flush(&db, log.as_ref());
            break;
        }
    }
}

fn flush(db: &sled::Db, log: Option<&File>) -> Result<(), StorageError> {
    db.flush()?;
    if let Some(log) = log {
        log.sync_data()
            .map_err(|e| StorageError::Io(format!("fdatasync failed: {e}")))?;
    }
    Ok(())
}

/// Resolves when the writes it waits for are durable (see [`crate::Store::durable`]).
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
