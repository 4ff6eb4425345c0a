//! Writes on PostgreSQL: a batch's plans applied in one transaction (run again when the
//! database aborts it), the single conditional UPDATE of a lone counter write, and a record
//! held locked in a transaction ([`PgEngine::hold`]) until its batch commits or it is
//! released.

use deadpool_postgres::GenericClient;
use tokio_postgres::error::SqlState;

use super::{sql_error, Conn, PgEngine};
use crate::record::Tally;
use crate::store::batch::{Batch, Plan, TallyPlan};
use crate::StorageError;

/// How many times a transaction the database aborted (deadlock, serialization failure) is
/// run before the error is returned.
pub const COMMIT_ATTEMPTS: usize = 8;

/// A random delay before attempt `attempt + 1`: up to 5 ms, doubling per attempt (at most
/// 320 ms), so transactions that aborted each other do not meet again.
pub(super) fn retry_delay(attempt: usize) -> std::time::Duration {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(attempt);
    let ceiling_us = 5_000u64 << attempt.min(6);
    std::time::Duration::from_micros(h.finish() % ceiling_us)
}

impl PgEngine {
    /// Applies every operation of `batch` in one transaction, or none of them; returns
    /// each operation's new revision (0 for deletes, notices and meta writes), as
    /// [`crate::Committed::revs`]. Durable when it returns.
    ///
    /// A transaction the database aborts to resolve a deadlock (two batches locking records
    /// in opposite orders) or a serialization failure (the SERIALIZABLE default of
    /// distributed engines) is run again, from its reads, after a random growing delay, up
    /// to [`COMMIT_ATTEMPTS`] times: its plans are decided anew on what it reads then.
    pub async fn commit(&self, batch: &Batch) -> Result<Vec<u64>, StorageError> {
        // The hot path (a hit's counters): one conditional UPDATE, no transaction
        // of its own, one round trip. The stored value begins with its revision.
        if let Some((key, rev, sealed)) = batch.alone() {
            let conn = self.conn().await?;
            let updated = self.swap(conn.get()?, key, rev, &sealed).await?;
            conn.release();
            if updated {
                return Ok(vec![rev + 1]);
            }
            // Changed (or gone) since the writer read it: no other revision is acceptable
            // to this write, so it is a conflict without asking further.
            return Err(StorageError::Conflict {
                collection: batch.first_collection(),
                expected: format!("revision {rev}"),
                found: None,
            });
        }
        let mut attempt = 1;
        loop {
            // No connection within the pool's wait: not an abort, not worth retrying here.
            let conn = self.conn().await?;
            match self.commit_once(conn, batch).await {
                Ok((revs, notified)) => {
                    self.wait_after(notified).await;
                    return Ok(revs);
                }
                // Within a transaction, only a deadlock, a serialization failure or a
                // record created concurrently maps to this.
                Err(StorageError::Unavailable(why)) if attempt < COMMIT_ATTEMPTS => {
                    tracing::debug!(attempt, %why, "transaction aborted by the database; retrying");
                    // Apart by a random, growing delay: run again at once, the same
                    // transactions would meet in the same deadlock.
                    tokio::time::sleep(retry_delay(attempt)).await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// After a commit that notified a change (`listen`): waits out the trust window, so
    /// that every node's listener that still says it is caught up when the answer arrives
    /// has handled the change.
    async fn wait_after(&self, notified: bool) {
        let wait = self
            .notify_wait_us
            .load(std::sync::atomic::Ordering::Acquire);
        if notified && wait > 0 {
            tokio::time::sleep(std::time::Duration::from_micros(wait)).await;
        }
    }

    async fn commit_once(
        &self,
        mut conn: Conn,
        batch: &Batch,
    ) -> Result<(Vec<u64>, bool), StorageError> {
        let outcome = {
            let tx = conn.get_mut()?.transaction().await.map_err(sql_error)?;
            match self.apply_batch(&tx, batch).await {
                Ok(revs) => {
                    tx.commit().await.map_err(sql_error)?;
                    Ok(revs)
                }
                // Refused (a conflict, a taken key, an abort): rolled back, the connection
                // is clean and goes back to the pool. Only a connection whose rollback
                // failed, or whose call was dropped, is closed.
                Err(e) => {
                    tx.rollback().await.map_err(sql_error)?;
                    Err(e)
                }
            }
        };
        conn.release();
        outcome
    }

    /// Applies every operation of `batch` on `tx`, an open transaction: each locks the
    /// record it reads, then writes its plan. Returns the revisions, and whether a change
    /// was notified (see `listen`).
    async fn apply_batch<C: GenericClient + Sync>(
        &self,
        tx: &C,
        batch: &Batch,
    ) -> Result<(Vec<u64>, bool), StorageError> {
        let mut notified = false;
        let mut revs = Vec::with_capacity(batch.ops.len());
        for op in &batch.ops {
            let old = match op.reads() {
                Some(key) => self.read_locking(tx, key).await?,
                None => None,
            };
            let plan = op.plan(old.as_deref())?;
            let collection = op.written().map_or("record", |(c, _)| c);
            self.apply(tx, &plan, old.is_some(), collection).await?;
            notified |= notifies(&plan);
            revs.push(plan.rev);
        }
        Ok((revs, notified))
    }

    /// Opens a transaction that holds the record `key` locked (`SELECT … FOR UPDATE`) and
    /// returns its stored value: nobody else writes it until [`Held::commit`] or the drop
    /// of the [`Held`]. What is decided on that value cannot conflict.
    ///
    /// With `tallied`, also the record's tally row, read after the lock is taken (it is
    /// not locked: counts move it without the record's lock).
    pub(crate) async fn hold(
        &self,
        key: &[u8],
        tallied: bool,
    ) -> Result<(Option<Vec<u8>>, Option<Tally>, Held), StorageError> {
        // Guarded before anything is sent: dropped half way, the transaction and the lock
        // it may already have go with the connection.
        let held = Held {
            conn: Some(self.conn().await?),
            key: key.to_vec(),
        };
        let client = held.client()?;
        // One round trip: the statements are pipelined on the connection.
        let tally = async {
            if tallied {
                self.read_tally(client, key).await
            } else {
                Ok(None)
            }
        };
        let (begun, value, tally) = tokio::join!(
            client.batch_execute("BEGIN"),
            self.read_locking(client, key),
            tally
        );
        begun.map_err(sql_error)?;
        Ok((value?, tally?, held))
    }

    /// Replaces record `key` with `sealed` if its stored revision is `rev` (the stored
    /// value begins with it); returns whether it did.
    async fn swap<C: GenericClient + Sync>(
        &self,
        client: &C,
        key: &[u8],
        rev: u64,
        sealed: &[u8],
    ) -> Result<bool, StorageError> {
        let updated = client
            .execute(
                &format!(
                    "UPDATE {}.records SET v = $3 WHERE k = $1 AND substring(v from 1 for 8) = $2",
                    self.schema
                ),
                &[&key, &rev.to_be_bytes().as_slice(), &sealed],
            )
            .await
            .map_err(sql_error)?;
        Ok(updated == 1)
    }

    /// The stored value of record `key`, which stays locked (`FOR UPDATE`) until the
    /// transaction of `tx` ends.
    async fn read_locking<C: GenericClient + Sync>(
        &self,
        tx: &C,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(tx
            .query_opt(
                &format!(
                    "SELECT v FROM {}.records WHERE k = $1 FOR UPDATE",
                    self.schema
                ),
                &[&key],
            )
            .await
            .map_err(sql_error)?
            .map(|row| row.get(0)))
    }

    /// Applies `batch` in the transaction `held` opened and commits it; returns each
    /// operation's revision. On an error the transaction is rolled back.
    pub(crate) async fn commit_held(
        &self,
        mut held: Held,
        batch: &Batch,
    ) -> Result<Vec<u64>, StorageError> {
        let result = async {
            let client = held.client()?;
            let revs = match batch.alone() {
                // The held record's counters: it is locked at the revision read, so the
                // write needs no second read.
                Some((key, rev, sealed)) if key == held.key.as_slice() => {
                    if !self.swap(client, key, rev, &sealed).await? {
                        return Err(StorageError::Conflict {
                            collection: batch.first_collection(),
                            expected: format!("revision {rev}"),
                            found: None,
                        });
                    }
                    (vec![rev + 1], false)
                }
                _ => self.apply_batch(client, batch).await?,
            };
            client.batch_execute("COMMIT").await.map_err(sql_error)?;
            Ok(revs)
        }
        .await;
        match result {
            Ok((revs, notified)) => {
                held.done();
                self.wait_after(notified).await;
                Ok(revs)
            }
            // Refused or failed: rolled back on the connection if it still answers (then
            // it goes back to the pool), else the connection is closed, which rolls back.
            Err(e) => {
                self.release(held).await;
                Err(e)
            }
        }
    }

    /// Ends the transaction `held` opened without writing.
    pub(crate) async fn release(&self, mut held: Held) {
        if let Ok(client) = held.client() {
            if client.batch_execute("ROLLBACK").await.is_ok() {
                held.done();
            }
        }
    }

    async fn apply<C: GenericClient + Sync>(
        &self,
        tx: &C,
        plan: &Plan,
        existed: bool,
        collection: &'static str,
    ) -> Result<(), StorageError> {
        let s = &self.schema;
        if let Some(entry) = &plan.feed {
            tx.execute(&format!("INSERT INTO {s}.feed (v) VALUES ($1)"), &[entry])
                .await
                .map_err(sql_error)?;
        }
        for seq in &plan.consume {
            let seq = i64::try_from(*seq).unwrap_or(i64::MAX);
            let gone = tx
                .execute(&format!("DELETE FROM {s}.feed WHERE seq = $1"), &[&seq])
                .await
                .map_err(sql_error)?;
            // Consumed by another node's consumer meanwhile: this consumer's whole batch
            // (what it derived from the entry) must not land a second time.
            if gone != 1 {
                return Err(StorageError::Conflict {
                    collection: "feed",
                    expected: format!("entry {seq}"),
                    found: None,
                });
            }
        }
        if let Some((key, value)) = &plan.meta {
            tx.execute(
                &format!(
                    "INSERT INTO {s}.meta (k, v) VALUES ($1, $2)
                     ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"
                ),
                &[key, value],
            )
            .await
            .map_err(sql_error)?;
        }
        match &plan.record {
            Some((key, Some(value))) if existed => {
                tx.execute(
                    &format!("UPDATE {s}.records SET v = $2 WHERE k = $1"),
                    &[key, value],
                )
                .await
                .map_err(sql_error)?;
            }
            Some((key, Some(value))) => {
                // Absent when read (nothing to lock): a concurrent create of the same
                // record got there first. The plan was made on a state that no longer
                // holds, so the transaction runs again from its reads (as after a
                // deadlock): an `Absent` write then conflicts with the revision it finds,
                // an `Any` write replaces it, as on the embedded store.
                tx.execute(
                    &format!("INSERT INTO {s}.records (k, v) VALUES ($1, $2)"),
                    &[key, value],
                )
                .await
                .map_err(|e| {
                    if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                        StorageError::Unavailable(format!(
                            "a {collection} record was created concurrently"
                        ))
                    } else {
                        sql_error(e)
                    }
                })?;
            }
            Some((key, None)) => {
                tx.execute(&format!("DELETE FROM {s}.records WHERE k = $1"), &[key])
                    .await
                    .map_err(sql_error)?;
            }
            None => {}
        }
        if let Some((key, tally)) = &plan.tally {
            self.apply_tally(tx, key, tally, collection).await?;
        }
        if notifies(plan) {
            // Nodes cache these records: tell them, in this transaction (`listen`).
            tx.execute(
                "SELECT pg_notify($1, $2)",
                &[
                    &super::listen::channel(s),
                    &super::listen::payload(collection, &plan.id),
                ],
            )
            .await
            .map_err(sql_error)?;
        }
        // Uncounted entries (search terms, tens per record) go in one statement each way;
        // counted ones move their counter too.
        let uncounted_remove: Vec<&[u8]> = plan
            .index_remove
            .iter()
            .filter(|(_, c)| c.is_none())
            .map(|(k, _)| k.as_slice())
            .collect();
        if !uncounted_remove.is_empty() {
            tx.execute(
                &format!("DELETE FROM {s}.idx WHERE k = ANY($1::bytea[])"),
                &[&uncounted_remove],
            )
            .await
            .map_err(sql_error)?;
        }
        for (key, counter) in &plan.index_remove {
            let Some(counter) = counter else { continue };
            tx.execute(&format!("DELETE FROM {s}.idx WHERE k = $1"), &[key])
                .await
                .map_err(sql_error)?;
            self.add_to_counter(tx, counter, -1).await?;
        }
        let uncounted_add: Vec<&[u8]> = plan
            .index_add
            .iter()
            .filter(|(_, c)| c.is_none())
            .map(|(k, _)| k.as_slice())
            .collect();
        if !uncounted_add.is_empty() {
            tx.execute(
                &format!(
                    "INSERT INTO {s}.idx (k, id) SELECT k, $2 FROM unnest($1::bytea[]) AS k
                     ON CONFLICT (k) DO UPDATE SET id = EXCLUDED.id"
                ),
                &[&uncounted_add, &plan.id],
            )
            .await
            .map_err(sql_error)?;
        }
        for (key, counter) in &plan.index_add {
            let Some(counter) = counter else { continue };
            tx.execute(
                &format!(
                    "INSERT INTO {s}.idx (k, id) VALUES ($1, $2)
                     ON CONFLICT (k) DO UPDATE SET id = EXCLUDED.id"
                ),
                &[key, &plan.id],
            )
            .await
            .map_err(sql_error)?;
            self.add_to_counter(tx, counter, 1).await?;
        }
        for key in &plan.unique_remove {
            tx.execute(&format!("DELETE FROM {s}.uniques WHERE k = $1"), &[key])
                .await
                .map_err(sql_error)?;
        }
        for (key, constraint) in &plan.unique_add {
            // Claimed, or already this record's; held by another record: refused (a
            // concurrent claim waits for the other transaction, then sees its row).
            let held = tx
                .query_opt(
                    &format!(
                        "INSERT INTO {s}.uniques (k, id) VALUES ($1, $2)
                         ON CONFLICT (k) DO UPDATE SET id = EXCLUDED.id
                         WHERE {s}.uniques.id = EXCLUDED.id
                         RETURNING id"
                    ),
                    &[key, &plan.id],
                )
                .await
                .map_err(sql_error)?;
            if held.is_none() {
                return Err(StorageError::Unique { constraint });
            }
        }
        Ok(())
    }

    async fn add_to_counter<C: GenericClient + Sync>(
        &self,
        tx: &C,
        key: &[u8],
        delta: i64,
    ) -> Result<(), StorageError> {
        let s = &self.schema;
        tx.execute(
            &format!(
                "INSERT INTO {s}.counters (k, n) VALUES ($1, $2)
                 ON CONFLICT (k) DO UPDATE SET n = {s}.counters.n + EXCLUDED.n"
            ),
            &[&key, &delta],
        )
        .await
        .map_err(sql_error)?;
        tx.execute(
            &format!("DELETE FROM {s}.counters WHERE k = $1 AND n <= 0"),
            &[&key],
        )
        .await
        .map_err(sql_error)?;
        Ok(())
    }
}

/// A transaction opened by [`PgEngine::hold`], holding one record locked. Dropped without
/// [`PgEngine::commit_held`] or [`PgEngine::release`], its connection is closed rather than
/// returned to the pool: the database then rolls the transaction back.
pub(crate) struct Held {
    conn: Option<Conn>,
    /// The record held.
    key: Vec<u8>,
}

impl Held {
    fn client(&self) -> Result<&deadpool_postgres::Object, StorageError> {
        self.conn
            .as_ref()
            .ok_or_else(|| StorageError::Io("the held transaction is over".into()))?
            .get()
    }

    /// The transaction ended: the connection goes back to the pool.
    fn done(&mut self) {
        if let Some(conn) = self.conn.take() {
            conn.release();
        }
    }
}

/// Whether a plan changes a record other nodes may hold in memory (a tallied record that
/// existed before): then its transaction notifies them (`listen`).
fn notifies(plan: &Plan) -> bool {
    matches!(
        &plan.tally,
        Some((_, tally)) if !matches!(tally, TallyPlan::Put { create: true, .. })
    )
}
