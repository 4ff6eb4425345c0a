//! Password hashing with argon2id (the argon2 crate's defaults: m=19 MiB, t=2, p=1).
//! Hashing is CPU- and memory-heavy: requests run it through [`HashPool`], which bounds how
//! many run at once (`auth.password_hash_concurrency`) and how many wait
//! (`auth.password_hash_queue`); the rest are refused at once, so no flood of sign-ins can
//! hold more than `concurrency × 19 MiB` of hashing memory.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

pub fn hash(password: &str) -> Result<String, String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

pub fn verify(password: &str, stored: &str) -> bool {
    match PasswordHash::new(stored) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// Verifies `password` against `stored`, or, when there is no stored hash (unknown
/// account, or one without a password), against a fixed hash that never matches, so that
/// the answer takes as long either way and does not reveal which accounts exist.
pub fn verify_or_burn(password: &str, stored: Option<&str>) -> bool {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    match stored {
        Some(hash) => verify(password, hash),
        None => {
            let dummy =
                DUMMY.get_or_init(|| hash("no account has this password").unwrap_or_default());
            let _ = verify(password, dummy);
            false
        }
    }
}

/// The bounded pool every password hash and check of a request runs on: `concurrency`
/// dedicated threads fed by a channel of `queue` places.
///
/// Dedicated threads rather than a semaphore in front of the shared blocking pool: that
/// pool starts a new thread whenever none is idle at the instant of a hand-over, and each
/// thread's allocator arena keeps its 19 MiB after the hash, so memory still grew with the
/// flood (measured: 689 MiB peak for 34 checks). A fixed set of threads keeps at most
/// `concurrency` arenas.
pub struct HashPool {
    jobs: std::sync::mpsc::SyncSender<Job>,
    concurrency: usize,
}

type Job = Box<dyn FnOnce() + Send>;

/// The pool is full and so is its queue: answer 503 at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many password checks at once")]
pub struct Busy;

impl HashPool {
    /// `concurrency` hashes at once (0: one per core), `queue` more waiting.
    pub fn new(concurrency: usize, queue: usize) -> Self {
        let wanted = if concurrency == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            concurrency
        };
        let (jobs, receiver) = std::sync::mpsc::sync_channel::<Job>(queue);
        let receiver = std::sync::Arc::new(std::sync::Mutex::new(receiver));
        let mut started = 0;
        for i in 0..wanted {
            let receiver = receiver.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("password-hash-{i}"))
                .spawn(move || loop {
                    // The lock is held only while waiting for the next job.
                    let job = match receiver.lock() {
                        Ok(r) => r.recv(),
                        Err(_) => return,
                    };
                    match job {
                        // A panic in a job must not shrink the pool.
                        Ok(job) => {
                            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                        }
                        // The pool was dropped.
                        Err(_) => return,
                    }
                });
            match spawned {
                Ok(_) => started += 1,
                Err(e) => tracing::error!(error = %e, "could not start a password-hashing thread"),
            }
        }
        // With no thread at all every check is refused (503), never left waiting.
        Self {
            jobs,
            concurrency: started,
        }
    }

    /// Threads that hash.
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// Runs `work` on a hashing thread; `Err(Busy)` at once when every thread is busy and
    /// `queue` jobs already wait. A job runs to its end even if the caller stops waiting
    /// (a closed connection): its memory is in use until then, and it still counts.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Busy> {
        if self.concurrency == 0 {
            return Err(Busy);
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = reply.send(work());
        });
        self.jobs.try_send(job).map_err(|_| Busy)?;
        answer.await.map_err(|_| Busy)
    }
}

impl From<Busy> for crate::error::ApiError {
    fn from(_: Busy) -> Self {
        crate::error::ApiError::Unavailable
    }
}

impl From<Busy> for crate::error::AppError {
    fn from(_: Busy) -> Self {
        crate::error::AppError::unavailable()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn the_pool_runs_its_concurrency_queues_its_queue_and_refuses_the_rest() {
        use futures_util::FutureExt;
        use std::sync::mpsc::channel;
        use std::time::Duration;
        let pool = HashPool::new(1, 1);
        assert_eq!(pool.concurrency(), 1);
        let (started_tx, started) = channel::<()>();
        let (release, hold) = channel::<()>();
        // The first job holds the only thread until released.
        let mut first = Box::pin(pool.run(move || {
            let _ = started_tx.send(());
            let _ = hold.recv_timeout(Duration::from_secs(10));
            1
        }));
        assert!((&mut first).now_or_never().is_none());
        while started.try_recv().is_err() {
            actix_web::rt::time::sleep(Duration::from_millis(1)).await;
        }
        // The second waits in the queue; the third finds it full.
        let mut second = Box::pin(pool.run(|| 2));
        assert!((&mut second).now_or_never().is_none());
        assert_eq!(pool.run(|| 3).await, Err(Busy), "refused at once");
        release.send(()).unwrap();
        assert_eq!(first.await, Ok(1));
        assert_eq!(second.await, Ok(2));
        assert_eq!(pool.run(|| 4).await, Ok(4), "free again");
        assert_eq!(
            HashPool::new(0, 0).concurrency(),
            std::thread::available_parallelism().unwrap().get()
        );
    }

    #[test]
    fn hash_and_verify() {
        let h = hash("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify("correct horse", &h));
        assert!(!verify("wrong", &h));
        assert!(!verify("correct horse", "not a hash"));
    }

    #[test]
    fn no_stored_hash_never_verifies() {
        assert!(!verify_or_burn("no account has this password", None));
        assert!(!verify_or_burn("", None));
        let h = hash("pw").unwrap();
        assert!(verify_or_burn("pw", Some(&h)));
        assert!(!verify_or_burn("px", Some(&h)));
    }
}
