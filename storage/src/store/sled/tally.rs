//! Counters kept apart on the embedded engine (`store::tally`): the `tallies` tree, at most
//! one entry per [`Record::TALLIED`] record under the record's key: its counters, its
//! limit, and the revision of the record they were counted on (`tally::encode_entry`).
//!
//! A counter write touches this tree alone, with no sled transaction: a lone
//! [`crate::Batch::write_tally`] is one insert ([`Embedded::write_tally_alone`]),
//! [`Embedded::count_hit`] and [`Embedded::add_hits`] one compare-and-swap per record. Each
//! checks the record's revision before and after it writes, and is numbered like a commit
//! (durable after the group-commit flush that covers it). The record's own writes do not
//! touch the entry on their fast path (a compare-and-swap on the record): the payload they
//! write carries the counters (the record's single writer, its actor, holds them), its
//! revision moves, and the entry, now at an older revision, is stale: reads merge an entry
//! only when its revision is the record's ([`Embedded::merge_tally`]), and the next
//! counter write replaces it. A batch's transaction removes the entry of a record it
//! creates, puts or deletes (`apply_tally`), so no entry outlives its record's deletion and
//! a record created anew (revision 1 again) never meets an older entry.

use std::collections::BTreeMap;

use sled::transaction::{ConflictableTransactionError, TransactionalTree};

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

/// Record keys of entries without a valid record (none, or at an older revision than the
/// entry's).
type Strays = Vec<Vec<u8>>;

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

/// Applies the tally part of a plan (`key`: the record's) in a batch's transaction. A put
/// or a delete removes the entry (the payload written carries the counters, or the record
/// is gone); a set writes one at the record's revision as the transaction sees it.
pub(super) fn apply_tally(
    tallies: &TransactionalTree,
    key: &[u8],
    plan: &TallyPlan,
    collection: &'static str,
) -> TxResult<()> {
    match plan {
        TallyPlan::Put { .. } | TallyPlan::Delete => {
            tallies.remove(key)?;
        }
        TallyPlan::SetBounded(bounded, base) => {
            // `base`: the record as this transaction sees it (after the batch's earlier
            // writes): its revision, the payload's counters and limit.
            let Some((rev, payload, limit)) = base else {
                return abort(no_tally(collection));
            };
            let mut tally = match tallies.get(key)? {
                Some(old) => match decode_entry(&old) {
                    Ok(e) if e.rev == *rev => e.tally,
                    Ok(_) => *payload,
                    Err(e) => return abort(e),
                },
                None => *payload,
            };
            tally.bounded = *bounded;
            tallies.insert(key, encode_entry(*rev, &tally, *limit))?;
        }
        TallyPlan::Set { rev, tally, limit } => {
            tallies.insert(key, encode_entry(*rev, tally, *limit))?;
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

/// What one compare-and-swap on an entry decided.
enum Step<T> {
    /// Nothing to write: the answer.
    Done(T),
    /// Write this entry (replacing what was read), then answer this.
    Write(Vec<u8>, T),
}

impl Embedded {
    /// Replaces the counters of `stored` (record key `key`) with its tallies entry when the
    /// entry is at the record's revision (otherwise the payload's stand).
    pub(super) fn merge_tally<R: Record>(
        &self,
        key: &[u8],
        stored: &mut Stored<R>,
    ) -> Result<(), StorageError> {
        if R::TALLIED {
            if let Some(entry) = self.inner.tallies.get(key)? {
                let entry = decode_entry(&entry)?;
                if entry.rev == stored.rev {
                    stored.value.set_tally(&entry.tally);
                }
            }
        }
        Ok(())
    }

    /// The hot path of [`crate::Batch::write_tally`] (a batch of that write alone): checks
    /// that the record is at `rev`, inserts the entry, and checks that the record did not
    /// change meanwhile: no transaction, the records tree only read. A conflict when the
    /// record is not at `rev` (before, or after: then the entry written is stale, or
    /// removed if the record was created anew). Called inside a commit (gate held).
    pub(super) fn write_tally_alone(
        &self,
        collection: &'static str,
        key: &[u8],
        rev: u64,
        entry: &[u8],
    ) -> Result<(), StorageError> {
        let i = &self.inner;
        let conflict = |found: Option<u64>| StorageError::Conflict {
            collection,
            expected: format!("revision {rev}"),
            found,
        };
        let Some(before) = i.records.get(key)? else {
            return Err(conflict(None));
        };
        let found = codec::open(&before)?.0;
        if found != rev {
            return Err(conflict(Some(found)));
        }
        i.tallies.insert(key, entry)?;
        let after = i.records.get(key)?;
        if after.as_ref() == Some(&before) {
            return Ok(());
        }
        // Changed under us. An entry at another revision is ignored by reads; but a record
        // deleted and created anew may be at `rev` again: take ours back.
        let _ = i
            .tallies
            .compare_and_swap(key, Some(entry), None as Option<&[u8]>)?;
        let found = after.map(|a| codec::open(&a).map(|o| o.0)).transpose()?;
        Err(conflict(found))
    }

    /// Runs `decide` on the record `key` of `R` at `rev` (its payload's counters and limit,
    /// or its valid entry's) and writes what it says with one compare-and-swap on the
    /// entry, retried when the entry changed meanwhile; `stale` when the record is not at
    /// `rev`, before or after. The boolean: whether it wrote.
    fn swap_entry<R: Record, T>(
        &self,
        key: &[u8],
        rev: u64,
        stale: T,
        decide: impl Fn(Tally, Option<i64>) -> Step<T>,
    ) -> Result<(T, bool), StorageError> {
        let i = &self.inner;
        loop {
            let Some(bytes) = i.records.get(key)? else {
                return Ok((stale, false));
            };
            let stored: Stored<R> = codec::open_stored(&bytes)?;
            if stored.rev != rev {
                return Ok((stale, false));
            }
            let (payload, limit) = stored.value.tally();
            let old = i.tallies.get(key)?;
            let tally = match &old {
                Some(e) => {
                    let e = decode_entry(e)?;
                    if e.rev == rev {
                        e.tally
                    } else {
                        payload
                    }
                }
                None => payload,
            };
            let (entry, answer) = match decide(tally, limit) {
                Step::Done(answer) => return Ok((answer, false)),
                Step::Write(entry, answer) => (entry, answer),
            };
            if i.tallies
                .compare_and_swap(key, old, Some(entry.as_slice()))?
                .is_err()
            {
                continue;
            }
            if i.records.get(key)?.as_ref() != Some(&bytes) {
                let _ = i
                    .tallies
                    .compare_and_swap(key, Some(entry), None as Option<&[u8]>)?;
                return Ok((stale, false));
            }
            return Ok((answer, true));
        }
    }

    /// Runs a counter write as a commit: refused once the store is failed, beside other
    /// commits (not during a snapshot), numbered when it wrote (the sequence number to
    /// wait for before acknowledging it).
    fn counter_write<T>(
        &self,
        f: impl FnOnce() -> Result<(T, bool), StorageError>,
    ) -> Result<(T, Option<u64>), StorageError> {
        let i = &self.inner;
        i.flusher.check_writable()?;
        let _shared = i.gate.read().unwrap_or_else(|p| p.into_inner());
        match f() {
            Ok((value, wrote)) => Ok((value, wrote.then(|| i.flusher.committed()))),
            Err(e) => {
                if let StorageError::Io(cause) = &e {
                    i.flusher.fail(cause);
                }
                Err(e)
            }
        }
    }

    /// See [`crate::Store::count_hit`]: one compare-and-swap on the entry; the sequence
    /// number to wait for when it counted.
    pub(crate) fn count_hit<R: Record>(
        &self,
        id: &[u8],
        rev: u64,
        add_bounded: i64,
        at_us: i64,
    ) -> Result<(Counted, Option<u64>), StorageError> {
        let key = record_key(R::COLLECTION, id);
        self.counter_write(|| {
            self.swap_entry::<R, _>(
                &key,
                rev,
                Counted::Stale,
                |mut tally, limit| match count_one(&mut tally, limit, add_bounded, at_us) {
                    Some(miss) => Step::Done(miss),
                    None => Step::Write(encode_entry(rev, &tally, limit), Counted::Done(tally)),
                },
            )
        })
    }

    /// See [`crate::Store::add_hits`]: one compare-and-swap per record (each record's
    /// deltas all or nothing; a record that is gone counts nothing); the sequence number to
    /// wait for.
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
        let (out, seq) = self.counter_write(|| {
            let mut out = Vec::with_capacity(merged.len());
            let mut wrote = false;
            for (id, &(n, at)) in &merged {
                let key = record_key(R::COLLECTION, id);
                // Any revision: deltas are counted on whatever the record is now.
                let (counted, w) = loop {
                    let Some(bytes) = self.inner.records.get(&key)? else {
                        break (None, false);
                    };
                    let rev = codec::open(&bytes)?.0;
                    let (tally, w) = self.swap_entry::<R, _>(&key, rev, None, |mut t, limit| {
                        t.hits = t.hits.saturating_add(n);
                        t.last_hit_us = Some(t.last_hit_us.map_or(at, |l| l.max(at)));
                        Step::Write(encode_entry(rev, &t, limit), Some(t))
                    })?;
                    if tally.is_some() {
                        break (tally, w);
                    }
                };
                wrote |= w;
                if let Some(t) = counted {
                    out.push((id.to_vec(), t));
                }
            }
            Ok((out, wrote))
        })?;
        Ok((
            out,
            seq.unwrap_or_else(|| self.inner.flusher.last_committed()),
        ))
    }

    /// The tallies check of `tollgate check`: keys of entries of `R`'s collection without a
    /// record, at a later revision than their record's, or of a type that is not tallied.
    /// (An entry at an earlier revision is the normal leftover of a record rewritten on its
    /// fast path: ignored, and replaced by the next counter write.)
    pub(super) fn verify_tallies<R: Record>(&self) -> Result<Strays, StorageError> {
        let prefix = record_key(R::COLLECTION, &[]);
        let mut extra = Vec::new();
        for item in self.inner.tallies.scan_prefix(&prefix) {
            let (key, entry) = item?;
            let record_rev = match self.inner.records.get(&key)? {
                Some(bytes) => Some(codec::open(&bytes)?.0),
                None => None,
            };
            let valid = R::TALLIED
                && record_rev.is_some_and(|r| decode_entry(&entry).is_ok_and(|e| e.rev <= r));
            if !valid {
                extra.push(key.to_vec());
            }
        }
        Ok(extra)
    }

    /// Repairs what [`Embedded::verify_tallies`] finds: those entries are removed (the
    /// records' payloads stand).
    pub(super) fn rebuild_tallies<R: Record>(&self) -> Result<(), StorageError> {
        let extra = self.verify_tallies::<R>()?;
        let _shared = self.inner.gate.read().unwrap_or_else(|p| p.into_inner());
        for key in extra {
            self.inner.tallies.remove(key)?;
        }
        Ok(())
    }
}
