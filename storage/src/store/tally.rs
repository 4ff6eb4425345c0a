//! Tallies: the named counters of a [`Record::TALLIED`] record ([`Tally`]: a bounded
//! counter, a count of hits, the latest hit) kept apart from its payload, where the engine
//! can move them without rewriting the record (issues 33 and 45).
//!
//! Design: every engine keeps them apart ([`Store::counters_apart`]): PostgreSQL in tally
//! rows (`pg/tally.rs`), the embedded engine in a tree of its own (`sled/tally.rs`), keyed
//! like the record; reads merge them back ([`Record::set_tally`]). What differs is who
//! writes. On PostgreSQL several nodes count hits on one record ([`Store::is_shared`]):
//! the row is created with the record's first put and deleted with it, in the same
//! transaction, a later put never writes the counters (the payload's may be stale), and
//! counting is commutative. On the embedded store the record has one writer (its actor),
//! which holds the counters in memory: its puts carry them in the payload, as before, and
//! [`crate::Batch::write_tally`] writes them back alone, [`TALLY_ENTRY_LEN`] bytes
//! ([`encode_entry`]) with no transaction, instead of the whole record. The entry names
//! the record's revision it was counted on, and is read only while the record is at that
//! revision: a put (which moves the revision) leaves it stale without touching it. Batches
//! carry the tally side of their writes themselves (`batch::TallyPlan`,
//! [`crate::Batch::set_bounded`]).

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

/// Bytes of one entry of the embedded engine's tallies tree (and of a snapshot's): a
/// version byte, the revision of the record the counters were counted on, then big-endian
/// `bounded`, `hits`, the latest hit and the limit, each of the last two behind a presence
/// byte.
pub(super) const TALLY_ENTRY_LEN: usize = 1 + 8 + 8 + 8 + 9 + 9;
const TALLY_ENTRY_VERSION: u8 = 2;

/// An entry of the embedded engine's tallies tree, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The record's revision the counters belong to: an entry whose record is at another
    /// revision (rewritten since, or deleted and created anew) is stale and ignored.
    pub(crate) rev: u64,
    pub(crate) tally: Tally,
    pub(crate) limit: Option<i64>,
}

/// A tally entry as the embedded engine stores it (see [`TALLY_ENTRY_LEN`]).
pub(super) fn encode_entry(rev: u64, tally: &Tally, limit: Option<i64>) -> Vec<u8> {
    let mut v = Vec::with_capacity(TALLY_ENTRY_LEN);
    v.push(TALLY_ENTRY_VERSION);
    v.extend_from_slice(&rev.to_be_bytes());
    v.extend_from_slice(&tally.bounded.to_be_bytes());
    v.extend_from_slice(&tally.hits.to_be_bytes());
    for opt in [tally.last_hit_us, limit] {
        v.push(u8::from(opt.is_some()));
        v.extend_from_slice(&opt.unwrap_or(0).to_be_bytes());
    }
    v
}

/// Reads what [`encode_entry`] wrote.
pub(crate) fn decode_entry(bytes: &[u8]) -> Result<Entry, StorageError> {
    let bad = || StorageError::Corrupt("a tally entry is not as this build writes it".into());
    if bytes.len() != TALLY_ENTRY_LEN || bytes.first() != Some(&TALLY_ENTRY_VERSION) {
        return Err(bad());
    }
    let int = |at: usize| -> Result<i64, StorageError> {
        let arr: [u8; 8] = bytes
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(bad)?;
        Ok(i64::from_be_bytes(arr))
    };
    let opt = |at: usize| -> Result<Option<i64>, StorageError> {
        match bytes.get(at) {
            Some(0) => Ok(None),
            Some(1) => int(at + 1).map(Some),
            _ => Err(bad()),
        }
    };
    Ok(Entry {
        rev: int(1)?.cast_unsigned(),
        tally: Tally {
            bounded: int(9)?,
            hits: int(17)?,
            last_hit_us: opt(25)?,
        },
        limit: opt(34)?,
    })
}

impl Store {
    /// Whether the counters of [`Record::TALLIED`] records are kept apart from their
    /// payloads: [`Store::count_hit`] and [`Store::add_hits`] move them and reads merge
    /// them in. `true` on every engine now (PostgreSQL: tally rows; embedded: a tree of
    /// its own, entries at the record's revision). Who may write them is
    /// [`Store::is_shared`]'s question: several nodes on PostgreSQL (puts never write
    /// counters there), one writer per record on the embedded store (its puts carry them).
    pub fn counters_apart(&self) -> bool {
        match &self.engine {
            Engine::Embedded(_) | Engine::Postgres(_) => true,
        }
    }

    /// Counts one hit on record `id` of `R`, decided on its revision `rev`: adds
    /// `add_bounded` to its bounded counter unless that passes its limit (an `add_bounded`
    /// of 0 never does), adds one to its hits and moves its latest hit to `at_us` if that
    /// is later. One statement, which cannot lose an increment to another node nor pass
    /// the limit, durable when it returns (on the embedded store: one compare-and-swap on
    /// the record's entry, durable after the group-commit flush that covers it). A miss
    /// counts nothing ([`Counted`]).
    pub async fn count_hit<R: Record>(
        &self,
        id: &[u8],
        rev: u64,
        add_bounded: i64,
        at_us: i64,
    ) -> Result<Counted, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => {
                let (counted, seq) = e.count_hit::<R>(id, rev, add_bounded, at_us)?;
                if let Some(seq) = seq {
                    e.flusher().wait(seq).await?;
                }
                Ok(counted)
            }
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
    /// record that has a tally row. On the embedded store: one compare-and-swap per record
    /// (each record's all or nothing; a record that is gone counts nothing), one commit,
    /// durable when it returns.
    pub async fn add_hits<R: Record>(
        &self,
        counts: &[(Vec<u8>, i64, i64)],
    ) -> Result<Vec<(Vec<u8>, Tally)>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => {
                let (tallies, seq) = e.add_hits::<R>(counts)?;
                e.flusher().wait(seq).await?;
                Ok(tallies)
            }
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
    /// embedded store (a record without an entry at its revision reads its payload's
    /// counters, which are then the truth; the first counter write makes the entry) or for
    /// a type that is not [`Record::TALLIED`].
    pub async fn ensure_tallies<R: Record>(&self) -> Result<u64, StorageError> {
        match &self.engine {
            Engine::Embedded(_) => Ok(0),
            Engine::Postgres(pg) => Box::pin(pg.ensure_tallies::<R>()).await,
        }
    }
}
