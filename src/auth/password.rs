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

/// The bounded pool every password hash and check of a request runs on.
pub struct HashPool {
    permits: std::sync::Arc<tokio::sync::Semaphore>,
    waiting: std::sync::atomic::AtomicUsize,
    queue: usize,
    concurrency: usize,
}

/// The pool is full and so is its queue: answer 503 at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many password checks at once")]
pub struct Busy;

impl HashPool {
    /// `concurrency` hashes at once (0: one per core), `queue` more waiting.
    pub fn new(concurrency: usize, queue: usize) -> Self {
        let concurrency = if concurrency == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            concurrency
        };
        Self {
            permits: std::sync::Arc::new(tokio::sync::Semaphore::new(concurrency)),
            waiting: std::sync::atomic::AtomicUsize::new(0),
            queue,
            concurrency,
        }
    }

    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// Runs `work` on a blocking thread once a slot is free; `Err(Busy)` at once when
    /// `queue` others already wait. The slot is held until `work` ends, even if the caller
    /// gives up waiting for it (a closed connection), since its memory is in use until then.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Busy> {
        use std::sync::atomic::Ordering;
        let permit = match self.permits.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                // A place in the queue, if there is one.
                let mut n = self.waiting.load(Ordering::Relaxed);
                loop {
                    if n >= self.queue {
                        return Err(Busy);
                    }
                    match self.waiting.compare_exchange_weak(
                        n,
                        n + 1,
                        Ordering::AcqRel,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => break,
                        Err(actual) => n = actual,
                    }
                }
                let _leave = LeaveQueue(&self.waiting);
                self.permits
                    .clone()
                    .acquire_owned()
                    .await
                    .map_err(|_| Busy)?
            }
        };
        actix_web::rt::task::spawn_blocking(move || {
            let out = work();
            drop(permit);
            out
        })
        .await
        .map_err(|_| Busy)
    }
}

/// Leaves the queue when the wait ends, however it ends.
struct LeaveQueue<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for LeaveQueue<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn the_pool_runs_its_concurrency_queues_its_queue_and_refuses_the_rest() {
        let pool = std::sync::Arc::new(HashPool::new(1, 1));
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let hold = std::sync::Arc::new(std::sync::Mutex::new(hold));
        let h = hold.clone();
        let p = pool.clone();
        // Holds the only slot until released.
        let first = actix_web::rt::spawn(async move {
            p.run(move || {
                let _ = h
                    .lock()
                    .map(|r| r.recv_timeout(std::time::Duration::from_secs(10)));
                1
            })
            .await
        });
        while pool.permits.available_permits() > 0 {
            actix_web::rt::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        let p = pool.clone();
        let queued = actix_web::rt::spawn(async move { p.run(|| 2).await });
        while pool.waiting.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            actix_web::rt::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        assert_eq!(
            pool.run(|| 3).await,
            Err(Busy),
            "queue full: refused at once"
        );
        release.send(()).unwrap();
        assert_eq!(first.await.unwrap(), Ok(1));
        assert_eq!(queued.await.unwrap(), Ok(2));
        assert_eq!(pool.run(|| 4).await, Ok(4), "free again");
        assert_eq!(pool.waiting.load(std::sync::atomic::Ordering::SeqCst), 0);
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
