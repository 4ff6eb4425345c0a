//! The clock that domain code receives `now` from. Nothing in the domain reads the system
//! time itself; tests use [`ManualClock`] to move time deterministically.

use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The clock shared by the registry, the entities and the sweepers.
pub type SharedClock = Arc<dyn Clock>;

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl SystemClock {
    pub fn shared() -> SharedClock {
        Arc::new(SystemClock)
    }
}

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to. For tests.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Mutex::new(start),
        }
    }

    /// A manual clock behind a [`SharedClock`], plus the handle to move it.
    pub fn shared(start: DateTime<Utc>) -> (Arc<ManualClock>, SharedClock) {
        let clock = Arc::new(Self::new(start));
        (clock.clone(), clock)
    }

    pub fn set(&self, now: DateTime<Utc>) {
        *self.lock() = now;
    }

    /// Moves the clock forward (or backward, for a negative duration).
    pub fn advance(&self, by: chrono::Duration) {
        let mut now = self.lock();
        *now += by;
    }

    fn lock(&self) -> MutexGuard<'_, DateTime<Utc>> {
        // The guarded value is a plain timestamp: a panic elsewhere cannot leave it torn.
        self.now.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.lock()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let start = Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
        let (handle, clock) = ManualClock::shared(start);
        assert_eq!(clock.now(), start);
        handle.advance(chrono::Duration::seconds(90));
        assert_eq!(clock.now(), start + chrono::Duration::seconds(90));
        handle.set(start);
        assert_eq!(clock.now(), start);
    }

    #[test]
    fn system_clock_is_close_to_now() {
        let before = Utc::now();
        let now = SystemClock.now();
        assert!(now >= before);
    }
}
