//! Atomic writes: a [`Batch`] of record puts, deletes and meta writes, applied by
//! [`Store::commit`] in one transaction that also moves the records' index entries,
//! counters and unique keys (or, when a write changes none of them, as a single
//! compare-and-swap on its record).
//!
//! Each operation turns the stored value of the record it reads into a [`Plan`]: the
//! record to write or delete, the index entries and unique keys to remove and add, the
//! counters they move, the feed entry. Plans say nothing of sled, so a second engine
//! (`docs/scale-out.md`) applies the same plans in its own transaction.
//!
//! Nothing here knows an engine: the embedded one applies plans in a sled transaction and
//! a lone write as a compare-and-swap ([`Op::plan_swap`]) in `sled/write.rs`, PostgreSQL
//! applies them in its own transaction in `pg/write.rs`.

use std::collections::BTreeSet;

use super::layout::{derived_keys, encode_index_entries, encode_uniques, record_key, EncodedIndex};
use crate::codec;
use crate::record::{Expect, Record, Tally};
use crate::StorageError;

/// The result of a committed batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    /// Sequence number to pass to [`Store::durable`].
    pub seq: u64,
    /// The new revision of each record written, in the order of the batch's operations
    /// (0 for deletes and meta writes).
    pub revs: Vec<u64>,
}

/// The operations of one atomic write. Build it, then [`Store::commit`] it.
#[derive(Default)]
pub struct Batch {
    pub(super) ops: Vec<Box<dyn Op>>,
}

impl Batch {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Number of operations (the position of each write's revision in [`Committed::revs`]).
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Moves every operation of `other` to the end of this batch.
    pub fn append(&mut self, mut other: Batch) -> &mut Self {
        self.ops.append(&mut other.ops);
        self
    }

    /// Writes `record` (creating or replacing it) if its current revision matches `expect`.
    pub fn put<R: Record>(
        &mut self,
        record: &R,
        expect: Expect,
    ) -> Result<&mut Self, StorageError> {
        self.put_op(record, expect, false)
    }

    /// [`Batch::put`] for a write its caller knows changes none of the record's index
    /// entries, unique keys or feed digest (counters): alone in its batch, it is one
    /// compare-and-swap that does not even decode the stored revision. Debug builds check
    /// the promise.
    pub fn put_keeping_keys<R: Record>(
        &mut self,
        record: &R,
        expect: Expect,
    ) -> Result<&mut Self, StorageError> {
        self.put_op(record, expect, true)
    }

    fn put_op<R: Record>(
        &mut self,
        record: &R,
        expect: Expect,
        keeps_keys: bool,
    ) -> Result<&mut Self, StorageError> {
        let id = record.id_key();
        let mut index = record.index_entries();
        index.sort();
        index.dedup();
        let mut uniques = record.unique_keys();
        uniques.sort();
        uniques.dedup();
        let payload = record.encode()?;
        self.ops.push(Box::new(PutOp::<R> {
            key: record_key(R::COLLECTION, &id),
            digest: R::FEED.then(|| record.feed_digest()),
            tally: R::TALLIED.then(|| record.tally()),
            payload,
            index: encode_index_entries(&index, &id)?,
            uniques: encode_uniques(&uniques)?,
            id,
            expect,
            keeps_keys,
            _r: std::marker::PhantomData,
        }));
        Ok(self)
    }

    /// Removes the record with this id (and all its index entries and unique keys).
    pub fn delete<R: Record>(&mut self, id: &[u8], expect: Expect) -> &mut Self {
        self.ops.push(Box::new(DeleteOp::<R> {
            key: record_key(R::COLLECTION, id),
            id: id.to_vec(),
            expect,
            _r: std::marker::PhantomData,
        }));
        self
    }

    /// Sets the bounded counter ([`Tally::bounded`]) of a [`Record::TALLIED`] record to
    /// `value` in its counters' row ([`crate::Store::counters_apart`]): an explicit change
    /// (not an increment), in the batch's transaction. Refused as a conflict when the
    /// record has no counters (it is gone).
    pub fn set_bounded<R: Record>(&mut self, id: &[u8], value: i64) -> &mut Self {
        self.ops.push(Box::new(TallyOp::<R> {
            key: record_key(R::COLLECTION, id),
            id: id.to_vec(),
            bounded: value,
            _r: std::marker::PhantomData,
        }));
        self
    }

    /// Writes the counters of the [`Record::TALLIED`] record `record`, stored at revision
    /// `rev`, as its single writer holds them (the embedded store's actor writing back what
    /// it counted in memory): a few bytes in the counters' row, the record itself untouched
    /// and its revision unchanged (reported as `rev` in [`Committed::revs`]). A conflict
    /// when the record is not at `rev` (changed or gone). On the embedded engine a batch of
    /// this write alone is one insert in the tallies tree, no transaction
    /// (`sled/tally.rs`); on PostgreSQL the row's counters (not its limit) are set.
    pub fn write_tally<R: Record>(&mut self, record: &R, rev: u64) -> &mut Self {
        let id = record.id_key();
        let (tally, limit) = record.tally();
        self.ops.push(Box::new(WriteTallyOp::<R> {
            key: record_key(R::COLLECTION, &id),
            id,
            rev,
            tally,
            limit,
            _r: std::marker::PhantomData,
        }));
        self
    }

    /// Appends a notice to the change feed: something worth telling that changed no
    /// record (a refused activation). `topic` plays the part of a collection name.
    pub fn notice(&mut self, topic: &'static str, id: Vec<u8>, payload: Vec<u8>) -> &mut Self {
        self.ops.push(Box::new(NoticeOp { topic, id, payload }));
        self
    }

    /// Removes the change-feed entries `seqs` (handled by their consumer), in the same
    /// transaction as whatever else the batch writes.
    pub fn consume_changes(&mut self, seqs: &[u64]) -> &mut Self {
        self.ops.push(Box::new(ConsumeOp {
            seqs: seqs.to_vec(),
        }));
        self
    }

    /// A batch of one [`Batch::put_keeping_keys`] conditional on a revision, as (record
    /// key, expected revision, sealed next revision): see `Op::alone`.
    pub(super) fn alone(&self) -> Option<(&[u8], u64, Vec<u8>)> {
        match self.ops.as_slice() {
            [op] => op.alone(),
            _ => None,
        }
    }

    /// The collection of the record the batch's first operation writes.
    pub(super) fn first_collection(&self) -> &'static str {
        self.ops
            .first()
            .and_then(|op| op.written())
            .map_or("record", |(c, _)| c)
    }

    /// The revisions [`Store::commit`] will report for this batch if it succeeds; `None`
    /// when one depends on what is stored (an unconditional put).
    ///
    /// [`Store::commit`]: crate::Store::commit
    pub fn predicted_revs(&self) -> Option<Vec<u64>> {
        self.ops.iter().map(|op| op.predicted_rev()).collect()
    }

    /// One batch doing what `parts` do in order, all or nothing (`None`: nothing to do).
    /// When every part is one [`Batch::put_keeping_keys`] of the same record (statistics
    /// of one aggregate, each on top of the one before), only the last is written, under
    /// the first one's condition: one write instead of many, with the same outcome.
    pub fn coalesce(mut parts: Vec<Batch>) -> Option<Batch> {
        let mut first: Option<(Vec<u8>, Expect)> = None;
        let mut collapsible = parts.len() > 1;
        for part in parts.iter_mut() {
            let [op] = part.ops.as_mut_slice() else {
                collapsible = false;
                break;
            };
            let Some((key, expect)) = op.counter_put() else {
                collapsible = false;
                break;
            };
            match &first {
                None => first = Some((key.to_vec(), *expect)),
                Some((k, _)) if k.as_slice() == key => {}
                Some(_) => {
                    collapsible = false;
                    break;
                }
            }
        }
        if collapsible {
            let mut last = parts.pop()?;
            if let (Some((_, expect)), Some(op)) = (first, last.ops.first_mut()) {
                if let Some((_, e)) = op.counter_put() {
                    *e = expect;
                }
            }
            return Some(last);
        }
        let mut all = Batch::new();
        for part in parts {
            all.append(part);
        }
        (!all.is_empty()).then_some(all)
    }

    /// The records the batch writes or deletes: (collection, id).
    pub(super) fn written(&self) -> impl Iterator<Item = (&'static str, &[u8])> {
        self.ops.iter().filter_map(|op| op.written())
    }

    /// Whether committing this batch may add entries to the change feed.
    pub(super) fn feeds(&self) -> bool {
        self.ops.iter().any(|op| op.feeds())
    }

    /// Writes a small system value (a generated secret, a bootstrap marker).
    pub fn put_meta(&mut self, key: &str, value: Vec<u8>) -> &mut Self {
        self.ops.push(Box::new(MetaOp {
            key: key.as_bytes().to_vec(),
            value,
        }));
        self
    }
}

/// What one operation writes, given the stored value of the record it reads (if any):
/// engine-neutral, so every engine applies the same plan. Index entries come with the
/// key of their (index, tenant) counter; unique keys claimed come with the constraint's
/// name (for the error) and are refused if another record holds them.
#[derive(Default)]
pub(super) struct Plan {
    /// The operation's reply in [`Committed::revs`].
    pub(super) rev: u64,
    /// `(record key, new sealed value)`; `None` value: delete.
    pub(super) record: Option<(Vec<u8>, Option<Vec<u8>>)>,
    /// The id the index entries and unique keys point to.
    pub(super) id: Vec<u8>,
    /// `(entry key, counter key)`; no counter key: an uncounted entry.
    pub(super) index_remove: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    pub(super) index_add: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    pub(super) unique_remove: Vec<Vec<u8>>,
    pub(super) unique_add: Vec<(Vec<u8>, &'static str)>,
    /// A change-feed entry (the engine numbers it): an encoded `feed::Entry`.
    pub(super) feed: Option<Vec<u8>>,
    /// Change-feed entries consumed.
    pub(super) consume: Vec<u64>,
    /// `(key, value)` of a meta write.
    pub(super) meta: Option<(Vec<u8>, Vec<u8>)>,
    /// `(record key, change)` of the record's counters' row (a tally row on PostgreSQL,
    /// an entry of the tallies tree on the embedded engine).
    pub(super) tally: Option<(Vec<u8>, TallyPlan)>,
}

/// What a write does to its record's tally row (see [`Record::TALLIED`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TallyPlan {
    /// A put. On PostgreSQL a new record (`create`) gets its row from the payload's
    /// counters, replacing any row left over; so does a record without a row yet (written
    /// before its type kept tallies); a later put writes only the payload's limit: there
    /// several nodes count, the counters of a payload may be stale, the row's are the
    /// truth. On the embedded engine a record has one writer, which holds the counters in
    /// memory and puts them in the payload: the put removes the entry (in a transaction;
    /// on the compare-and-swap path the record's new revision makes it stale).
    Put {
        create: bool,
        tally: Tally,
        limit: Option<i64>,
    },
    /// [`Batch::set_bounded`], and the record as the batch's transaction reads it (its
    /// revision, its payload's counters and limit; `None`: gone), which the embedded
    /// engine counts from when it has no entry at that revision.
    SetBounded(i64, Option<(u64, Tally, Option<i64>)>),
    /// [`Batch::write_tally`]: the counters at the record's revision `rev` (PostgreSQL
    /// sets the counters of the row, which must exist; the embedded engine writes the
    /// entry, limit included).
    Set {
        rev: u64,
        tally: Tally,
        limit: Option<i64>,
    },
    /// A delete: the row goes with its record.
    Delete,
}

pub(super) trait Op: Send + Sync {
    /// The key of the record this operation reads before it writes, if any.
    fn reads(&self) -> Option<&[u8]> {
        None
    }

    /// What the operation writes, given the stored value of [`Op::reads`].
    fn plan(&self, old: Option<&[u8]>) -> Result<Plan, StorageError>;

    /// The key of the record this operation may write without a transaction, as one
    /// compare-and-swap (see [`Op::plan_swap`]); `None`: it always needs a transaction.
    fn swap_key(&self) -> Option<&[u8]> {
        None
    }

    /// Given the stored value of [`Op::swap_key`]: the new revision and sealed value when
    /// the write touches nothing but its own record (no index entry, unique key or counter
    /// changes, no feed entry), so an engine can write it as one compare-and-swap; `None`:
    /// it needs a transaction. Checks the operation's condition first.
    fn plan_swap(&self, _old: &[u8]) -> Result<Option<(u64, Vec<u8>)>, StorageError> {
        Ok(None)
    }

    /// Whether the operation may write to the change feed.
    fn feeds(&self) -> bool {
        false
    }

    /// The record this operation writes or deletes: (collection, id).
    fn written(&self) -> Option<(&'static str, &[u8])> {
        None
    }

    /// The revision the operation will report if it succeeds (`None`: it depends on what
    /// is stored, an unconditional put).
    fn predicted_rev(&self) -> Option<u64> {
        Some(0)
    }

    /// For a [`Batch::write_tally`] of a tallied record: (collection, record key, the
    /// revision it expects, the embedded engine's entry): a write of the tallies tree
    /// alone, with no transaction (`sled/tally.rs`).
    fn tally_alone(&self) -> Option<(&'static str, &[u8], u64, Vec<u8>)> {
        None
    }

    /// For a [`Batch::put_keeping_keys`]: its record key and condition.
    fn counter_put(&mut self) -> Option<(&[u8], &mut Expect)> {
        None
    }

    /// For a [`Batch::put_keeping_keys`] conditional on a revision: (record key, the
    /// revision it expects, the sealed value of the next revision): a write that is one
    /// compare-and-set on the record, whatever the engine.
    fn alone(&self) -> Option<(&[u8], u64, Vec<u8>)> {
        None
    }
}

struct PutOp<R> {
    key: Vec<u8>,
    id: Vec<u8>,
    payload: Vec<u8>,
    /// `Some` when `R` feeds the change feed: the new revision's digest.
    digest: Option<Option<Vec<u8>>>,
    /// `Some` when `R` is [`Record::TALLIED`]: the payload's counters and limit.
    tally: Option<(Tally, Option<i64>)>,
    index: Vec<EncodedIndex>,
    uniques: Vec<Vec<u8>>,
    expect: Expect,
    /// See [`Batch::put_keeping_keys`].
    keeps_keys: bool,
    _r: std::marker::PhantomData<fn() -> R>,
}

impl<R: Record> Op for PutOp<R> {
    fn predicted_rev(&self) -> Option<u64> {
        match self.expect {
            Expect::Any => None,
            Expect::Absent => Some(1),
            Expect::Rev(rev) => Some(rev + 1),
        }
    }

    fn counter_put(&mut self) -> Option<(&[u8], &mut Expect)> {
        self.keeps_keys
            .then_some((self.key.as_slice(), &mut self.expect))
    }

    fn alone(&self) -> Option<(&[u8], u64, Vec<u8>)> {
        // A tallied record's limit is mirrored into its tally row with every put: that is
        // a second statement, so never a lone compare-and-set.
        if self.tally.is_some() {
            return None;
        }
        match (self.keeps_keys, self.expect) {
            (true, Expect::Rev(rev)) => Some((
                self.key.as_slice(),
                rev,
                codec::seal(rev + 1, R::VERSION, &self.payload),
            )),
            _ => None,
        }
    }

    fn feeds(&self) -> bool {
        self.digest.is_some()
    }

    fn written(&self) -> Option<(&'static str, &[u8])> {
        Some((R::COLLECTION, &self.id))
    }

    fn swap_key(&self) -> Option<&[u8]> {
        Some(&self.key)
    }

    fn plan_swap(&self, old: &[u8]) -> Result<Option<(u64, Vec<u8>)>, StorageError> {
        let (rev, version, payload) = codec::open(old)?;
        // The condition first: a record another writer changed may differ in anything
        // (its keys too), and is a conflict whatever the rest says.
        self.expect.check(R::COLLECTION, Some(rev))?;
        if self.keeps_keys {
            debug_assert!(
                R::decode(version, payload)
                    .is_ok_and(|previous| self.same_keys_as(&previous).unwrap_or(false)
                        && !self.changes_digest(&previous, version, payload)),
                "put_keeping_keys changed the derived keys of a {}",
                R::COLLECTION
            );
        } else {
            let previous = R::decode(version, payload)?;
            if !self.same_keys_as(&previous)? {
                return Ok(None);
            }
            if self.changes_digest(&previous, version, payload) {
                // The feed entry must be written with the record: take the transaction.
                return Ok(None);
            }
        }
        Ok(Some((
            rev + 1,
            codec::seal(rev + 1, R::VERSION, &self.payload),
        )))
    }

    fn reads(&self) -> Option<&[u8]> {
        Some(&self.key)
    }

    fn plan(&self, old: Option<&[u8]>) -> Result<Plan, StorageError> {
        let (old_rev, old_index, old_uniques) = match old {
            Some(bytes) => {
                let (rev, version, payload) = codec::open(bytes)?;
                let previous = R::decode(version, payload)?;
                let (index, uniques) = derived_keys(&previous, &previous.id_key())?;
                (Some(rev), index, uniques)
            }
            None => (None, Vec::new(), Vec::new()),
        };
        self.expect.check(R::COLLECTION, old_rev)?;
        let rev = old_rev.unwrap_or(0) + 1;
        let sealed = codec::seal(rev, R::VERSION, &self.payload);
        let changed = match old {
            None => self.digest.is_some(),
            Some(bytes) => self.feeds_change(bytes)?,
        };
        let feed = if changed {
            Some(super::feed::encode_entry(
                R::COLLECTION,
                &self.id,
                old,
                Some(sealed.as_slice()),
            )?)
        } else {
            None
        };
        let old_keys: BTreeSet<&[u8]> = old_index.iter().map(|e| e.key.as_slice()).collect();
        let new_keys: BTreeSet<&[u8]> = self.index.iter().map(|e| e.key.as_slice()).collect();
        Ok(Plan {
            rev,
            record: Some((self.key.clone(), Some(sealed))),
            id: self.id.clone(),
            index_remove: old_index
                .iter()
                .filter(|e| !new_keys.contains(e.key.as_slice()))
                .map(|e| (e.key.clone(), e.counter.clone()))
                .collect(),
            index_add: self
                .index
                .iter()
                .filter(|e| !old_keys.contains(e.key.as_slice()))
                .map(|e| (e.key.clone(), e.counter.clone()))
                .collect(),
            unique_remove: old_uniques
                .iter()
                .filter(|u| !self.uniques.contains(u))
                .cloned()
                .collect(),
            unique_add: self
                .uniques
                .iter()
                .filter(|u| !old_uniques.contains(u))
                .map(|u| (u.clone(), unique_name::<R>(u)))
                .collect(),
            feed,
            tally: self.tally.map(|(tally, limit)| {
                (
                    self.key.clone(),
                    TallyPlan::Put {
                        create: old.is_none(),
                        tally,
                        limit,
                    },
                )
            }),
            ..Plan::default()
        })
    }
}

impl<R: Record> PutOp<R> {
    /// Whether replacing the stored record `old` with this write is a change the feed
    /// records (always `false` for a type outside the feed).
    fn feeds_change(&self, old: &[u8]) -> Result<bool, StorageError> {
        if self.digest.is_none() {
            return Ok(false);
        }
        let (_, version, payload) = codec::open(old)?;
        let previous = R::decode(version, payload)?;
        Ok(self.changes_digest(&previous, version, payload))
    }

    /// [`Self::feeds_change`] over the decoded previous revision.
    fn changes_digest(&self, previous: &R, version: u16, payload: &[u8]) -> bool {
        let Some(digest) = &self.digest else {
            return false;
        };
        match (previous.feed_digest(), digest) {
            (Some(a), Some(b)) => a != *b,
            (None, None) => payload != self.payload.as_slice() || version != R::VERSION,
            _ => true,
        }
    }

    /// Whether this write keeps the index entries and unique keys of `previous` as they are.
    fn same_keys_as(&self, previous: &R) -> Result<bool, StorageError> {
        let (index, uniques) = derived_keys(previous, &previous.id_key())?;
        let same_index = index.len() == self.index.len()
            && index.iter().zip(&self.index).all(|(a, b)| a.key == b.key);
        Ok(same_index && uniques == self.uniques)
    }
}

/// The static name of the unique constraint an encoded unique key belongs to.
fn unique_name<R: Record>(encoded: &[u8]) -> &'static str {
    R::UNIQUES
        .iter()
        .find(|n| encoded.starts_with(n.as_bytes()) && encoded.get(n.len()) == Some(&0))
        .copied()
        .unwrap_or("unique")
}

struct DeleteOp<R> {
    key: Vec<u8>,
    id: Vec<u8>,
    expect: Expect,
    _r: std::marker::PhantomData<fn() -> R>,
}

impl<R: Record> Op for DeleteOp<R> {
    fn written(&self) -> Option<(&'static str, &[u8])> {
        Some((R::COLLECTION, &self.id))
    }

    fn reads(&self) -> Option<&[u8]> {
        Some(&self.key)
    }

    fn plan(&self, old: Option<&[u8]>) -> Result<Plan, StorageError> {
        let Some(bytes) = old else {
            self.expect.check(R::COLLECTION, None)?;
            return Ok(Plan::default());
        };
        let (rev, version, payload) = codec::open(bytes)?;
        self.expect.check(R::COLLECTION, Some(rev))?;
        let previous = R::decode(version, payload)?;
        let id = previous.id_key();
        let (index, uniques) = derived_keys(&previous, &id)?;
        let feed = if R::FEED {
            Some(super::feed::encode_entry(
                R::COLLECTION,
                &id,
                Some(bytes),
                None,
            )?)
        } else {
            None
        };
        Ok(Plan {
            record: Some((self.key.clone(), None)),
            id,
            index_remove: index.into_iter().map(|e| (e.key, e.counter)).collect(),
            unique_remove: uniques,
            feed,
            tally: R::TALLIED.then(|| (self.key.clone(), TallyPlan::Delete)),
            ..Plan::default()
        })
    }
}

struct TallyOp<R> {
    key: Vec<u8>,
    id: Vec<u8>,
    bounded: i64,
    _r: std::marker::PhantomData<fn() -> R>,
}

impl<R: Record> Op for TallyOp<R> {
    /// What a read of the record gives changes: caches of it are told.
    fn written(&self) -> Option<(&'static str, &[u8])> {
        Some((R::COLLECTION, &self.id))
    }

    fn reads(&self) -> Option<&[u8]> {
        Some(&self.key)
    }

    fn plan(&self, old: Option<&[u8]>) -> Result<Plan, StorageError> {
        let base = match old.filter(|_| R::TALLIED) {
            Some(bytes) => {
                let stored = codec::open_stored::<R>(bytes)?;
                let (tally, limit) = stored.value.tally();
                Some((stored.rev, tally, limit))
            }
            None => None,
        };
        Ok(Plan {
            id: self.id.clone(),
            tally: R::TALLIED
                .then(|| (self.key.clone(), TallyPlan::SetBounded(self.bounded, base))),
            ..Plan::default()
        })
    }
}

struct WriteTallyOp<R> {
    key: Vec<u8>,
    id: Vec<u8>,
    rev: u64,
    tally: Tally,
    limit: Option<i64>,
    _r: std::marker::PhantomData<fn() -> R>,
}

impl<R: Record> Op for WriteTallyOp<R> {
    /// What a read of the record gives changes: caches of it are told.
    fn written(&self) -> Option<(&'static str, &[u8])> {
        Some((R::COLLECTION, &self.id))
    }

    fn reads(&self) -> Option<&[u8]> {
        Some(&self.key)
    }

    fn predicted_rev(&self) -> Option<u64> {
        Some(self.rev)
    }

    fn plan(&self, old: Option<&[u8]>) -> Result<Plan, StorageError> {
        let found = old.map(codec::open).transpose()?.map(|(rev, _, _)| rev);
        Expect::Rev(self.rev).check(R::COLLECTION, found)?;
        Ok(Plan {
            rev: self.rev,
            id: self.id.clone(),
            tally: R::TALLIED.then(|| {
                let set = TallyPlan::Set {
                    rev: self.rev,
                    tally: self.tally,
                    limit: self.limit,
                };
                (self.key.clone(), set)
            }),
            ..Plan::default()
        })
    }

    fn tally_alone(&self) -> Option<(&'static str, &[u8], u64, Vec<u8>)> {
        R::TALLIED.then(|| {
            let entry = super::tally::encode_entry(self.rev, &self.tally, self.limit);
            (R::COLLECTION, self.key.as_slice(), self.rev, entry)
        })
    }
}

struct NoticeOp {
    topic: &'static str,
    id: Vec<u8>,
    payload: Vec<u8>,
}

impl Op for NoticeOp {
    fn plan(&self, _: Option<&[u8]>) -> Result<Plan, StorageError> {
        Ok(Plan {
            feed: Some(super::feed::encode_entry(
                self.topic,
                &self.id,
                None,
                Some(&self.payload),
            )?),
            ..Plan::default()
        })
    }

    fn feeds(&self) -> bool {
        true
    }
}

struct ConsumeOp {
    seqs: Vec<u64>,
}

impl Op for ConsumeOp {
    fn plan(&self, _: Option<&[u8]>) -> Result<Plan, StorageError> {
        Ok(Plan {
            consume: self.seqs.clone(),
            ..Plan::default()
        })
    }
}

struct MetaOp {
    key: Vec<u8>,
    value: Vec<u8>,
}

impl Op for MetaOp {
    fn plan(&self, _: Option<&[u8]>) -> Result<Plan, StorageError> {
        Ok(Plan {
            meta: Some((self.key.clone(), self.value.clone())),
            ..Plan::default()
        })
    }
}
