//! Commits on the embedded engine: a batch of one write that changes nothing but its
//! record is one compare-and-swap on it, a batch of one counters write
//! ([`crate::Batch::write_tally`]) one insert in the tallies tree (`tally.rs`); any other
//! batch is one sled transaction over the seven trees, applying each operation's plan
//! (`batch::Plan`) in order. Visible at once, durable after the flush that covers the
//! returned sequence number.

use sled::transaction::{ConflictableTransactionError, TransactionError, TransactionalTree};
use sled::Transactional;

use super::Embedded;
use crate::store::batch::{Batch, Committed, Op};
use crate::store::layout::decode_counter;
use crate::StorageError;

type TxResult<T> = Result<T, ConflictableTransactionError<StorageError>>;

fn abort<T>(e: StorageError) -> TxResult<T> {
    Err(ConflictableTransactionError::Abort(e))
}

struct Tx<'a> {
    records: &'a TransactionalTree,
    index: &'a TransactionalTree,
    counters: &'a TransactionalTree,
    uniques: &'a TransactionalTree,
    meta: &'a TransactionalTree,
    feed: &'a TransactionalTree,
    tallies: &'a TransactionalTree,
    /// Added to sled's id generator: past the entries a restore copied.
    feed_base: u64,
    /// The counted index entries this attempt adds or removes, as (tenant, key): what
    /// the marks of deep pages (`marks`) learn once it commits.
    touched: &'a std::cell::RefCell<Vec<(Vec<u8>, Vec<u8>)>>,
}

/// Applies `op` without a transaction when it touches nothing but its own record (no index
/// entry, unique key or counter changes): one compare-and-swap. `None`: it needs a
/// transaction.
fn apply_alone(records: &sled::Tree, op: &dyn Op) -> Result<Option<u64>, StorageError> {
    let Some(key) = op.swap_key() else {
        return Ok(None);
    };
    let Some(old) = records.get(key)? else {
        return Ok(None);
    };
    let Some((rev, new)) = op.plan_swap(&old)? else {
        return Ok(None);
    };
    match records.compare_and_swap(key, Some(old), Some(new))? {
        Ok(()) => Ok(Some(rev)),
        // Changed under us: let the transaction decide (it reports the conflict).
        Err(_) => Ok(None),
    }
}

/// Applies one operation's plan in a sled transaction: reads its record, plans, writes.
fn apply(tx: &Tx<'_>, op: &dyn Op) -> TxResult<u64> {
    let old = match op.reads() {
        Some(key) => tx.records.get(key)?,
        None => None,
    };
    let plan = match op.plan(old.as_deref()) {
        Ok(p) => p,
        Err(e) => return abort(e),
    };
    if let Some(entry) = &plan.feed {
        // Numbered inside the transaction: a retried transaction draws a new number, so
        // entries of one record are numbered in the order their writes committed.
        let seq = tx.feed.generate_id()?.saturating_add(tx.feed_base);
        tx.feed.insert(&seq.to_be_bytes(), entry.as_slice())?;
    }
    for seq in &plan.consume {
        tx.feed.remove(&seq.to_be_bytes())?;
    }
    if let Some((key, value)) = &plan.meta {
        tx.meta.insert(key.as_slice(), value.as_slice())?;
    }
    match &plan.record {
        Some((key, Some(value))) => {
            tx.records.insert(key.as_slice(), value.as_slice())?;
        }
        Some((key, None)) => {
            tx.records.remove(key.as_slice())?;
        }
        None => {}
    }
    if let Some((key, tally)) = &plan.tally {
        let collection = op.written().map_or("record", |(c, _)| c);
        super::tally::apply_tally(tx.tallies, key, tally, collection)?;
    }
    for (key, counter) in plan.index_remove.iter().chain(&plan.index_add) {
        if let Some(counter) = counter {
            tx.touched.borrow_mut().push((counter.clone(), key.clone()));
        }
    }
    for (key, counter) in &plan.index_remove {
        tx.index.remove(key.as_slice())?;
        if let Some(counter) = counter {
            add_to_counter(tx, counter, -1)?;
        }
    }
    for (key, counter) in &plan.index_add {
        tx.index.insert(key.as_slice(), plan.id.as_slice())?;
        if let Some(counter) = counter {
            add_to_counter(tx, counter, 1)?;
        }
    }
    for key in &plan.unique_remove {
        tx.uniques.remove(key.as_slice())?;
    }
    for (key, constraint) in &plan.unique_add {
        if let Some(holder) = tx.uniques.get(key.as_slice())? {
            if holder.as_ref() != plan.id.as_slice() {
                return abort(StorageError::Unique { constraint });
            }
        }
        tx.uniques.insert(key.as_slice(), plan.id.as_slice())?;
    }
    Ok(plan.rev)
}

fn add_to_counter(tx: &Tx<'_>, key: &[u8], delta: i64) -> TxResult<()> {
    let current = match tx.counters.get(key)? {
        Some(v) => match decode_counter(&v) {
            Ok(c) => c,
            Err(e) => return abort(e),
        },
        None => 0,
    };
    let next = current.saturating_add_signed(delta);
    if next == 0 {
        tx.counters.remove(key)?;
    } else {
        tx.counters.insert(key, &next.to_be_bytes())?;
    }
    Ok(())
}

impl Embedded {
    /// See [`crate::Store::commit`]: sled's synchronous commit, visible at once, durable after
    /// the flush that covers its sequence number.
    pub(crate) fn commit(&self, batch: &Batch) -> Result<Committed, StorageError> {
        let i = &self.inner;
        i.flusher.check_writable()?;
        let _shared = i.gate.read().unwrap_or_else(|p| p.into_inner());
        self.commit_inner(batch).inspect_err(|e| {
            if let StorageError::Io(cause) = e {
                i.flusher.fail(cause);
            }
        })
    }

    fn commit_inner(&self, batch: &Batch) -> Result<Committed, StorageError> {
        let i = &self.inner;
        if let [op] = batch.ops.as_slice() {
            // A single writer's counters: one insert in the tallies tree, no transaction.
            if let Some((collection, key, rev, entry)) = op.tally_alone() {
                self.write_tally_alone(collection, key, rev, &entry)?;
                return Ok(Committed {
                    seq: i.flusher.committed(),
                    revs: vec![rev],
                });
            }
            if let Some(rev) = apply_alone(&i.records, op.as_ref())? {
                return Ok(Committed {
                    seq: i.flusher.committed(),
                    revs: vec![rev],
                });
            }
        }
        let trees = (
            &i.records,
            &i.index,
            &i.counters,
            &i.uniques,
            &i.meta,
            &i.feed,
            &i.tallies,
        );
        let feed_base = i.feed_base.load(std::sync::atomic::Ordering::Acquire);
        // Collected whether or not marks exist now: a walk may begin before this commits.
        let touched = std::cell::RefCell::new(Vec::new());
        let result =
            trees.transaction(|(records, index, counters, uniques, meta, feed, tallies)| {
                // A retried attempt plans again: only the last one's keys count.
                touched.borrow_mut().clear();
                let tx = Tx {
                    records,
                    index,
                    counters,
                    uniques,
                    meta,
                    feed,
                    tallies,
                    feed_base,
                    touched: &touched,
                };
                batch
                    .ops
                    .iter()
                    .map(|op| apply(&tx, op.as_ref()))
                    .collect::<TxResult<Vec<u64>>>()
            });
        if result.is_ok() {
            let touched = touched.into_inner();
            i.marks
                .touched(touched.iter().map(|(t, k)| (t.as_slice(), k.as_slice())));
        }
        match result {
            Ok(revs) => Ok(Committed {
                seq: i.flusher.committed(),
                revs,
            }),
            Err(TransactionError::Abort(e)) => Err(e),
            Err(TransactionError::Storage(e)) => Err(e.into()),
        }
    }
}
