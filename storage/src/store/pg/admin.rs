//! Whole-schema work on PostgreSQL: importing a snapshot of the embedded store, the job
//! locks that keep background sweeps to one node, verifying and rebuilding a record type's
//! derived keys, and whether the schema holds anything.

use std::collections::BTreeMap;

use tokio_postgres::NoTls;

use super::{describe, lock_key, prefix_end, sql_error, PgEngine};
use crate::record::Record;
use crate::store::indexes::{compare, expected_keys, IndexReport};
use crate::store::layout::decode_counter;
use crate::store::snapshot::Snapshot;
use crate::store::tally::decode_entry;
use crate::StorageError;

impl PgEngine {
    /// Loads a snapshot of the embedded store (`Store::snapshot`) into this schema, which
    /// must hold no record yet, in one transaction: every record with its revision, and
    /// every index entry, counter, unique key, meta value and feed entry as it is (feed
    /// numbers kept; new ones continue after them), every tallies entry at its
    /// record's revision as that record's tally row, and the usage store's trees as its
    /// tables (`usage::import`). Returns the number of records.
    pub async fn import(&self, snapshot: &Snapshot) -> Result<usize, StorageError> {
        let s = &self.schema;
        let mut conn = self.conn().await?;
        let tx = self.unlimited(&mut conn).await?;
        let occupied: bool = tx
            .query_one(&format!("SELECT EXISTS (SELECT 1 FROM {s}.records)"), &[])
            .await
            .map_err(sql_error)?
            .get(0);
        if occupied {
            return Err(StorageError::Conflict {
                collection: "records",
                expected: "an empty schema".into(),
                found: None,
            });
        }
        const CHUNK: usize = 1000;
        for (tree, entries) in &snapshot.trees {
            for chunk in entries.chunks(CHUNK) {
                let keys: Vec<&[u8]> = chunk.iter().map(|(k, _)| k.as_slice()).collect();
                let values: Vec<&[u8]> = chunk.iter().map(|(_, v)| v.as_slice()).collect();
                // The trees of bytes to bytes: (table, value column).
                let bytes_table = match tree.as_str() {
                    "records" => Some(("records", "v")),
                    "meta" => Some(("meta", "v")),
                    "index" => Some(("idx", "id")),
                    "uniques" => Some(("uniques", "id")),
                    "usage_events" => Some(("usage_events", "v")),
                    "usage_meta" => Some(("usage_meta", "v")),
                    _ => None,
                };
                if let Some((table, column)) = bytes_table {
                    tx.execute(
                        &format!(
                            "INSERT INTO {s}.{table} (k, {column}) SELECT * FROM unnest($1::bytea[], $2::bytea[])"
                        ),
                        &[&keys, &values],
                    )
                    .await
                    .map_err(sql_error)?;
                    continue;
                }
                match tree.as_str() {
                    "counters" => {
                        let counts = values
                            .iter()
                            .map(|v| counter_value(decode_counter(v)?))
                            .collect::<Result<Vec<i64>, StorageError>>()?;
                        tx.execute(
                            &format!(
                                "INSERT INTO {s}.counters (k, n) SELECT * FROM unnest($1::bytea[], $2::int8[])"
                            ),
                            &[&keys, &counts],
                        )
                        .await
                        .map_err(sql_error)?;
                    }
                    "feed" => {
                        let seqs = keys
                            .iter()
                            .map(|k| {
                                let arr: [u8; 8] = (*k).try_into().map_err(|_| {
                                    StorageError::Corrupt("feed key is not 8 bytes".into())
                                })?;
                                i64::try_from(u64::from_be_bytes(arr)).map_err(|_| {
                                    StorageError::Corrupt("feed number too large".into())
                                })
                            })
                            .collect::<Result<Vec<i64>, StorageError>>()?;
                        tx.execute(
                            &format!(
                                "INSERT INTO {s}.feed (seq, v) SELECT * FROM unnest($1::int8[], $2::bytea[])"
                            ),
                            &[&seqs, &values],
                        )
                        .await
                        .map_err(sql_error)?;
                    }
                    "tallies" => {
                        let mut revs = Vec::with_capacity(chunk.len());
                        let mut usage = Vec::with_capacity(chunk.len());
                        let mut limits = Vec::with_capacity(chunk.len());
                        let mut validations = Vec::with_capacity(chunk.len());
                        let mut last_at = Vec::with_capacity(chunk.len());
                        for v in &values {
                            let entry = decode_entry(v)?;
                            revs.push(entry.rev.to_be_bytes().to_vec());
                            usage.push(entry.tally.bounded);
                            limits.push(entry.limit);
                            validations.push(entry.tally.hits);
                            last_at.push(entry.tally.last_hit_us);
                        }
                        // `records` came first (`TREES`). Only an entry at its record's
                        // revision holds the counters; a stale one (its record rewritten
                        // since, with the counters in the payload) makes no row, and
                        // `ensure_tallies` gives that record one from its payload.
                        tx.execute(
                            &format!(
                                "INSERT INTO {s}.tallies (k, usage, limit_usage, validations, last_at, rev)
                                 SELECT d.k, d.usage, d.limit_usage, d.validations, d.last_at, d.rev
                                 FROM unnest($1::bytea[], $2::int8[], $3::int8[], $4::int8[], $5::int8[],
                                             $6::bytea[])
                                      AS d(k, usage, limit_usage, validations, last_at, rev)
                                 JOIN {s}.records r ON r.k = d.k
                                 WHERE substring(r.v from 1 for 8) = d.rev"
                            ),
                            &[&keys, &usage, &limits, &validations, &last_at, &revs],
                        )
                        .await
                        .map_err(sql_error)?;
                    }
                    usage if usage.starts_with("usage_") => {
                        super::usage::import(&tx, s, usage, chunk).await?;
                    }
                    other => {
                        return Err(StorageError::Corrupt(format!(
                            "snapshot tree {other} is unknown to this engine"
                        )))
                    }
                }
            }
        }
        // New feed entries are numbered after the copied ones.
        tx.execute(
            &format!(
                "SELECT setval(pg_get_serial_sequence('{s}.feed', 'seq'),
                               GREATEST((SELECT COALESCE(max(seq), 0) FROM {s}.feed), 1),
                               (SELECT max(seq) IS NOT NULL FROM {s}.feed))"
            ),
            &[],
        )
        .await
        .map_err(sql_error)?;
        tx.commit().await.map_err(sql_error)?;
        conn.release();
        Ok(snapshot.record_count())
    }

    /// Takes the database-wide lock `name` (of this schema) if no other node holds it:
    /// what keeps background sweeps from running on several nodes at once. Held until the
    /// [`JobLock`] is dropped, or its node dies (the lock is its connection's: PostgreSQL
    /// frees it when the connection ends). `None`: another node holds it. Correctness never
    /// depends on it (every sweep is safe to run twice); it only saves double work.
    ///
    /// The lock lives on a connection of its own, outside the pool: it takes none of the
    /// pool's connections for as long as it is held, and a call dropped half way closes that
    /// connection (and with it any lock it got) rather than leaving it to a borrower.
    pub async fn try_lock(&self, name: &str) -> Result<Option<JobLock>, StorageError> {
        if let Some(why) = self.reach.refusal() {
            return Err(StorageError::Unavailable(why));
        }
        let (client, connection) = match self.config.connect(NoTls).await {
            Ok(connected) => connected,
            Err(e) => {
                let why = describe(&e);
                self.reach.failed(&why, &self.config);
                return Err(StorageError::Unavailable(why));
            }
        };
        let lock = JobLock {
            client,
            connection: tokio::spawn(async move {
                let _ = connection.await;
            }),
        };
        let key = lock_key(&self.schema, name);
        let got: bool = lock
            .client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
            .await
            .map_err(sql_error)?
            .get(0);
        Ok(got.then_some(lock))
    }

    /// The stored keys of one table under the given names (`name 0 …`), with the value
    /// of its column `value`.
    async fn keys_under<T>(
        &self,
        table: &str,
        value: &str,
        names: &[&str],
    ) -> Result<BTreeMap<Vec<u8>, T>, StorageError>
    where
        T: for<'a> tokio_postgres::types::FromSql<'a>,
    {
        let mut conn = self.conn().await?;
        let tx = self.unlimited(&mut conn).await?;
        let mut out = BTreeMap::new();
        for name in names {
            let (lo, hi) = name_range(name);
            let rows = tx
                .query(
                    &format!(
                        "SELECT k, {value} FROM {}.{table} WHERE k >= $1 AND k < $2",
                        self.schema
                    ),
                    &[&lo, &hi],
                )
                .await
                .map_err(sql_error)?;
            for r in rows {
                out.insert(r.get(0), r.get(1));
            }
        }
        tx.commit().await.map_err(sql_error)?;
        conn.release();
        Ok(out)
    }

    /// Compares the stored index entries, counters and unique keys of `R` with the ones its
    /// records derive, as `Store::verify_indexes` does.
    pub async fn verify_indexes<R: Record>(&self) -> Result<IndexReport, StorageError> {
        let records = self.scan::<R>().await?;
        let expected = expected_keys(records.into_iter().map(|s| Ok(s.value)))?;
        let actual_index = self.keys_under("idx", "id", R::INDEXES).await?;
        let actual_uniques = self.keys_under("uniques", "id", R::UNIQUES).await?;
        let actual_counters: BTreeMap<Vec<u8>, u64> = self
            .keys_under::<i64>("counters", "n", R::INDEXES)
            .await?
            .into_iter()
            .map(|(k, n)| (k, u64::try_from(n).unwrap_or(0)))
            .collect();
        Ok(compare(
            &expected,
            &actual_index,
            &actual_uniques,
            &actual_counters,
        ))
    }

    /// Drops and rewrites every index entry, counter and unique key of `R` from its
    /// records, in one transaction, as `Store::rebuild_indexes` does. Other nodes' writes
    /// wait for it (the records table is locked in share mode before it is read), so no
    /// entry they commit meanwhile is dropped; a writer that waits longer than its
    /// `lock_timeout` (10 s) is answered 503. An offline repair: run it with the nodes
    /// stopped, or expect that.
    pub async fn rebuild_indexes<R: Record>(&self) -> Result<(), StorageError> {
        let s = &self.schema;
        let mut conn = self.conn().await?;
        let tx = self.unlimited(&mut conn).await?;
        tx.batch_execute(&format!("LOCK TABLE {s}.records IN SHARE MODE"))
            .await
            .map_err(sql_error)?;
        let records = self.scan_on::<R, _>(&tx).await?;
        let (index, counters, uniques) = expected_keys(records.into_iter().map(|r| Ok(r.value)))?;
        for (table, names) in [
            ("idx", R::INDEXES),
            ("counters", R::INDEXES),
            ("uniques", R::UNIQUES),
        ] {
            for name in names {
                let (lo, hi) = name_range(name);
                tx.execute(
                    &format!("DELETE FROM {s}.{table} WHERE k >= $1 AND k < $2"),
                    &[&lo, &hi],
                )
                .await
                .map_err(sql_error)?;
            }
        }
        for (table, rows) in [("idx", &index), ("uniques", &uniques)] {
            let keys: Vec<&[u8]> = rows.keys().map(Vec::as_slice).collect();
            let ids: Vec<&[u8]> = rows.values().map(Vec::as_slice).collect();
            tx.execute(
                &format!("INSERT INTO {s}.{table} (k, id) SELECT * FROM unnest($1::bytea[], $2::bytea[])"),
                &[&keys, &ids],
            )
            .await
            .map_err(sql_error)?;
        }
        let keys: Vec<&[u8]> = counters.keys().map(Vec::as_slice).collect();
        let counts = counters
            .values()
            .map(|n| counter_value(*n))
            .collect::<Result<Vec<i64>, StorageError>>()?;
        tx.execute(
            &format!(
                "INSERT INTO {s}.counters (k, n) SELECT * FROM unnest($1::bytea[], $2::int8[])"
            ),
            &[&keys, &counts],
        )
        .await
        .map_err(sql_error)?;
        tx.commit().await.map_err(sql_error)?;
        conn.release();
        Ok(())
    }

    /// Whether no table of the schema holds anything.
    pub(crate) async fn is_empty(&self) -> Result<bool, StorageError> {
        let s = &self.schema;
        let row = self
            .client()
            .await?
            .query_one(
                &format!(
                    "SELECT NOT EXISTS (SELECT 1 FROM {s}.records) AND NOT EXISTS (SELECT 1 FROM {s}.meta)
                     AND NOT EXISTS (SELECT 1 FROM {s}.uniques) AND NOT EXISTS (SELECT 1 FROM {s}.idx)
                     AND NOT EXISTS (SELECT 1 FROM {s}.usage_events)
                     AND NOT EXISTS (SELECT 1 FROM {s}.usage_windows)"
                ),
                &[],
            )
            .await
            .map_err(sql_error)?;
        Ok(row.get(0))
    }
}

/// A lock taken with [`PgEngine::try_lock`]. Dropping it closes its connection, which is
/// what frees the lock (a connection returned to the pool would keep it).
pub struct JobLock {
    client: tokio_postgres::Client,
    /// The task driving the connection: aborted on drop, which closes it at once.
    connection: tokio::task::JoinHandle<()>,
}

impl JobLock {
    /// Whether the lock's connection is gone (the database restarted, the network dropped
    /// it, TCP keepalives gave up on it): the database has freed the lock, and another node
    /// may hold it now.
    pub fn is_lost(&self) -> bool {
        self.client.is_closed() || self.connection.is_finished()
    }
}

impl Drop for JobLock {
    fn drop(&mut self) {
        self.connection.abort();
    }
}

/// The keys of one index or unique constraint `name`: from `name 0` up to (excluded) the
/// first key after them.
fn name_range(name: &str) -> (Vec<u8>, Vec<u8>) {
    let mut prefix = name.as_bytes().to_vec();
    prefix.push(0);
    let end = prefix_end(&prefix);
    (prefix, end)
}

/// A stored counter as PostgreSQL's `bigint`.
fn counter_value(n: u64) -> Result<i64, StorageError> {
    i64::try_from(n).map_err(|_| StorageError::Corrupt("counter too large".into()))
}
