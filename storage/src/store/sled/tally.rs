//! Counters kept apart on the embedded engine (`store::tally`): the `tallies` tree, one
//! entry per [`Record::TALLIED`] record under the record's key (its counters and limit,
//! `tally::encode_entry`). Batches write it in their sled transaction (`apply_tally`);
//! reads merge it into the records they decode ([`Embedded::merge_tally`]);
//! [`Embedded::count_hit`] and [`Embedded::add_hits`] move it in transactions of their
//! own over `records` and `tallies`, numbered like commits so that their callers wait for
//! the flush that covers them; [`Embedded::ensure_tallies`] gives records written by a
//! build that kept counters in payloads their entries; `check` compares entries and
//! records ([`Embedded::verify_tallies`]).

use std::collections::BTreeMap;

use sled::transaction::{ConflictableTransactionError, TransactionError, TransactionalTree};
use sled::Transactional;

use super::Embedded;
use crate::codec;
use crate::record::{Record, Stored, Tally};
use crate::store::batch::TallyPlan;
use crate::store::layout::record_key;
use crate::store::tally::{decode_entry, encode_entry, Counted};
use crate::StorageError;

type TxResult<T> = Result<T, ConflictableTransactionError<StorageError>>;

/// Records' counters after [`Embedded::add_hits`]: `(id, counters)`.
type Counts = Vec<(Vec<u8>, Tally)>;

/// Record keys: (of records without an entry, of entries without a record).
type Strays = (Vec<Vec<u8>>, Vec<Vec<u8>>);

fn abort<T>(e: StorageError) -> TxResult<T> {
    Err(ConflictableTransactionError::Abort(e))
}

fn no_tally(collection: &'static str) -> StorageError {
    StorageError::Conflict {
        collection,
        expected: "a tally".into(),
        found: None,
    }
}

/// Applies the tally part of a plan (`key`: the record's) in the batch's transaction. A
/// put writes the payload's counters and limit (the record's single writer holds the
/// counters: see `TallyPlan::Put`).
pub(super) fn apply_tally(
    tallies: &TransactionalTree,
    key: &[u8],
    plan: &TallyPlan,
    collection: &'static str,
) -> TxResult<()> {
    match plan {
        TallyPlan::Put { tally, limit, .. } => {
            tallies.insert(key, encode_entry(tally, *limit))?;
        }
        TallyPlan::SetBounded(_) | TallyPlan::Set(_) => {
            let Some(old) = tallies.get(key)? else {
                return abort(no_tally(collection));
            };
            let (mut tally, limit) = match decode_entry(&old) {
                Ok(t) => t,
                Err(e) => return abort(e),
            };
            match plan {
                TallyPlan::SetBounded(bounded) => tally.bounded = *bounded,
                TallyPlan::Set(next) => tally = *next,
                _ => {}
            }
            tallies.insert(key, encode_entry(&tally, limit))?;
        }
        TallyPlan::Delete => {
            tallies.remove(key)?;
        }
    }
    Ok(())
}

/// Counts one hit on `tally` (limit `limit`) as [`crate::Store::count_hit`] says: `None`
/// when it counts nothing, with why.
fn count_one(
    tally: &mut Tally,
    limit: Option<i64>,
    add_bounded: i64,
    at_us: i64,
) -> Option<Counted> {
    let next = i128::from(tally.bounded) + i128::from(add_bounded);
    if let Some(limit) = limit {
        if add_bounded != 0 && next > i128::from(limit) {
            return Some(Counted::Limit {
                bounded: tally.bounded,
                limit,
            });
        }
    }
    let Ok(next) = i64::try_from(next) else {
        return Some(Counted::OutOfRange);
    };
    tally.bounded = next;
    tally.hits = tally.hits.saturating_add(1);
    tally.last_hit_us = Some(tally.last_hit_us.map_or(at_us, |l| l.max(at_us)));
    None
}

impl Embedded {
    /// Replaces the counters of `stored` (record key `key`) with its tallies entry, if it
    /// has one (without, the payload's stand).
    pub(super) fn merge_tally<R: Record>(
        &self,
        key: &[u8],
        stored: &mut Stored<R>,
    ) -> Result<(), StorageError> {
        if R::TALLIED {
            if let Some(entry) = self.inner.tallies.get(key)? {
                stored.value.set_tally(&decode_entry(&entry)?.0);
            }
        }
        Ok(())
    }

    /// Runs `f` over `records` and `tallies` in one sled transaction, as a commit: refused
    /// once the store is failed, numbered when `f` says it wrote (the sequence number to
    /// wait for before acknowledging it).
    fn tally_transaction<T>(
        &self,
        f: impl Fn(&TransactionalTree, &TransactionalTree) -> TxResult<(T, bool)>,
    ) -> Result<(T, Option<u64>), StorageError> {
        let i = &self.inner;
        i.flusher.check_writable()?;
        let _shared = i.gate.read().unwrap_or_else(|p| p.into_inner());
        let result = (&i.records, &i.tallies).transaction(|(records, tallies)| f(records, tallies));
        match result {
            Ok((value, wrote)) => Ok((value, wrote.then(|| i.flusher.committed()))),
            Err(TransactionError::Abort(e)) => Err(e),
            Err(TransactionError::Storage(e)) => {
                let e = StorageError::from(e);
                if let StorageError::Io(cause) = &e {
                    i.flusher.fail(cause);
                }
                Err(e)
            }
        }
    }

    /// See [`crate::Store::count_hit`]: one transaction; the sequence number to wait for
    /// when it counted.
    pub(crate) fn count_hit<R: Record>(
        &self,
        id: &[u8],
        rev: u64,
        add_bounded: i64,
        at_us: i64,
    ) -> Result<(Counted, Option<u64>), StorageError> {
        let key = record_key(R::COLLECTION, id);
        self.tally_transaction(|records, tallies| {
            let found = match records.get(&key)? {
                Some(bytes) => match codec::open(&bytes) {
                    Ok((rev, _, _)) => Some(rev),
                    Err(e) => return abort(e),
                },
                None => None,
            };
            let entry = match tallies.get(&key)? {
                Some(entry) if found == Some(rev) => entry,
                _ => return Ok((Counted::Stale, false)),
            };
            let (mut tally, limit) = match decode_entry(&entry) {
                Ok(t) => t,
                Err(e) => return abort(e),
            };
            if let Some(miss) = count_one(&mut tally, limit, add_bounded, at_us) {
                return Ok((miss, false));
            }
            tallies.insert(key.as_slice(), encode_entry(&tally, limit))?;
            Ok((Counted::Done(tally), true))
        })
    }

    /// See [`crate::Store::add_hits`]: one transaction over every entry; the sequence
    /// number to wait for.
    pub(crate) fn add_hits<R: Record>(
        &self,
        counts: &[(Vec<u8>, i64, i64)],
    ) -> Result<(Counts, u64), StorageError> {
        let mut merged: BTreeMap<&[u8], (i64, i64)> = BTreeMap::new();
        for (id, n, at) in counts {
            let e = merged.entry(id.as_slice()).or_insert((0, i64::MIN));
            e.0 = e.0.saturating_add(*n);
            e.1 = e.1.max(*at);
        }
        let (tallies, seq) = self.tally_transaction(|_, tallies| {
            let mut out = Vec::with_capacity(merged.len());
            for (id, &(n, at)) in &merged {
                let key = record_key(R::COLLECTION, id);
                let Some(entry) = tallies.get(&key)? else {
                    continue;
                };
                let (mut tally, limit) = match decode_entry(&entry) {
                    Ok(t) => t,
                    Err(e) => return abort(e),
                };
                tally.hits = tally.hits.saturating_add(n);
                tally.last_hit_us = Some(tally.last_hit_us.map_or(at, |l| l.max(at)));
                tallies.insert(key, encode_entry(&tally, limit))?;
                out.push((id.to_vec(), tally));
            }
            let wrote = !out.is_empty();
            Ok((out, wrote))
        })?;
        Ok((
            tallies,
            seq.unwrap_or_else(|| self.inner.flusher.last_committed()),
        ))
    }

    /// See [`crate::Store::ensure_tallies`]: every record of `R` without an entry gets one
    /// from its payload; flushed before it returns. Idempotent.
    pub(crate) fn ensure_tallies<R: Record>(&self) -> Result<u64, StorageError> {
        if !R::TALLIED {
            return Ok(0);
        }
        // Beside commits, not during a snapshot (which then sees every entry or none).
        let _shared = self.inner.gate.read().unwrap_or_else(|p| p.into_inner());
        let mut created = 0;
        for item in self
            .inner
            .records
            .scan_prefix(record_key(R::COLLECTION, &[]))
        {
            let (key, bytes) = item?;
            if self.inner.tallies.contains_key(&key)? {
                continue;
            }
            let stored: Stored<R> = codec::open_stored(&bytes)?;
            let (tally, limit) = stored.value.tally();
            // Only where there is still none: a writer may have made one meanwhile.
            let made = self.inner.tallies.compare_and_swap(
                &key,
                None as Option<&[u8]>,
                Some(encode_entry(&tally, limit)),
            )?;
            if made.is_ok() {
                created += 1;
            }
        }
        if created > 0 {
            self.inner.db.flush()?;
        }
        Ok(created)
    }

    /// The tallies check of `tollgate check`: keys of records of `R` without an entry
    /// (`missing`), and entries of `R`'s collection without a record (`extra`).
    pub(super) fn verify_tallies<R: Record>(&self) -> Result<Strays, StorageError> {
        let prefix = record_key(R::COLLECTION, &[]);
        let mut missing = Vec::new();
        let mut extra = Vec::new();
        if R::TALLIED {
            for key in self.inner.records.scan_prefix(&prefix).keys() {
                let key = key?;
                if !self.inner.tallies.contains_key(&key)? {
                    missing.push(key.to_vec());
                }
            }
        }
        for key in self.inner.tallies.scan_prefix(&prefix).keys() {
            let key = key?;
            if !R::TALLIED || !self.inner.records.contains_key(&key)? {
                extra.push(key.to_vec());
            }
        }
        Ok((missing, extra))
    }

    /// Repairs what [`Embedded::verify_tallies`] finds: entries made from payloads, and
    /// entries without a record removed.
    pub(super) fn rebuild_tallies<R: Record>(&self) -> Result<(), StorageError> {
        let (_, extra) = self.verify_tallies::<R>()?;
        {
            let _shared = self.inner.gate.read().unwrap_or_else(|p| p.into_inner());
            for key in extra {
                self.inner.tallies.remove(key)?;
            }
        }
        self.ensure_tallies::<R>()?;
        self.inner.db.flush()?;
        Ok(())
    }
}
