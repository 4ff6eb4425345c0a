//! Tallies: the named counters of a [`Record::TALLIED`] record ([`Tally`]: a bounded
//! counter, a count of hits, the latest hit) kept apart from its payload, where the engine
//! can move them without conflicting with the record's writers (issue 33).
//!
//! Design: only PostgreSQL keeps them ([`Store::keeps_tallies`]; `pg/tally.rs` says how).
//! There several nodes count hits on one record, and counters inside the payload would
//! make every hit a conflicting rewrite of the whole record. The embedded engine has
//! one writer per record and keeps the counters in the payload, as before: its callers keep
//! their own path, so the calls here refuse ([`StorageError::Io`]) or do nothing on it.
//! Batches carry the tally side of their writes themselves (`batch::TallyPlan`,
//! [`crate::Batch::set_bounded`]), and reads merge the counters back.

use super::listener::ChangeListener;
use super::{Engine, Store};
use crate::record::{Record, Tally};
use crate::StorageError;

/// The outcome of [`Store::count_hit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// Counted: the record's counters after it.
    Done(Tally),
    /// `bounded + add_bounded` would pass `limit`: nothing counted. `bounded` as the
    /// statement saw it (when another writer moved it during the statement: the least
    /// value that refuses).
    Limit { bounded: i64, limit: i64 },
    /// `bounded + add_bounded` is outside the 64-bit range: nothing counted.
    OutOfRange,
    /// The record is not at the revision given (changed or gone), or has no tally row:
    /// nothing counted. Read it again and decide anew.
    Stale,
}

fn not_kept() -> StorageError {
    StorageError::Io("this store keeps counters in their records, not in tallies".into())
}

impl Store {
    /// Whether the counters of [`Record::TALLIED`] records are kept apart from their
    /// payloads (PostgreSQL): then [`Store::count_hit`] and
    /// [`Store::add_hits`] move them, puts never write them, and reads merge
    /// them in. `false` on the embedded store, whose records carry their counters.
    pub fn keeps_tallies(&self) -> bool {
        match &self.engine {
            Engine::Embedded(_) => false,
            Engine::Postgres(_) => true,
        }
    }

    /// Counts one hit on record `id` of `R`, decided on its revision `rev`: adds
    /// `add_bounded` to its bounded counter unless that passes its limit (an `add_bounded`
    /// of 0 never does), adds one to its hits and moves its latest hit to `at_us` if that
    /// is later. One statement, which cannot lose an increment to another node nor pass
    /// the limit, durable when it returns. A miss counts nothing ([`Counted`]). Only where
    /// [`Store::keeps_tallies`]; refused elsewhere.
    pub async fn count_hit<R: Record>(
        &self,
        id: &[u8],
        rev: u64,
        add_bounded: i64,
        at_us: i64,
    ) -> Result<Counted, StorageError> {
        match &self.engine {
            Engine::Embedded(_) => Err(not_kept()),
            Engine::Postgres(pg) => {
                let key = super::layout::record_key(R::COLLECTION, id);
                Box::pin(pg.gather(R::COLLECTION, key, rev, add_bounded, at_us)).await
            }
        }
    }

    /// Adds hits counted elsewhere (in memory) as deltas, `(id, n, at_us)`: `hits + n` and
    /// the latest hit the later of the stored one and `at_us`, for every record of
    /// `counts` in one statement, all or nothing (keep `counts` to a few thousand). Writers
    /// on several nodes never conflict over it. Returns the counters after it of each
    /// record that has a tally row. Only where [`Store::keeps_tallies`]; refused elsewhere.
    pub async fn add_hits<R: Record>(
        &self,
        counts: &[(Vec<u8>, i64, i64)],
    ) -> Result<Vec<(Vec<u8>, Tally)>, StorageError> {
        match &self.engine {
            Engine::Embedded(_) => Err(not_kept()),
            Engine::Postgres(pg) => Box::pin(pg.add_hits::<R>(counts)).await,
        }
    }

    /// Starts listening for changes other nodes make to records kept in tallies, with
    /// trust window `window` (`pg/listen.rs`): from now on a write that changes such a
    /// record also waits `window` after its commit. `None` on the embedded store, which has
    /// no other writer.
    pub fn listen(&self, window: std::time::Duration) -> Option<std::sync::Arc<ChangeListener>> {
        match &self.engine {
            Engine::Embedded(_) => None,
            Engine::Postgres(pg) => Some(pg.listen(window)),
        }
    }

    /// Gives every record of `R` that has no tally row one, from its payload (records
    /// copied in, or written before `R` was tallied); returns how many. Idempotent, safe
    /// while other nodes run: every node may call it at start. Nothing to do on the
    /// embedded store or for a type that is not [`Record::TALLIED`].
    pub async fn ensure_tallies<R: Record>(&self) -> Result<u64, StorageError> {
        match &self.engine {
            Engine::Embedded(_) => Ok(0),
            Engine::Postgres(pg) => Box::pin(pg.ensure_tallies::<R>()).await,
        }
    }
}
