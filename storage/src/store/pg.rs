//! The PostgreSQL engine (`design/scale-out.md`): the store's layout in six tables of one
//! schema, so several Tollgate nodes share one database.
//!
//! The tables hold exactly the keys and values the embedded engine holds in its trees
//! (`records`, `idx`, `counters`, `uniques`, `meta`, `feed`); PostgreSQL compares `bytea`
//! bytewise, as sled does, so index ranges and pages come out in the same order on both.
//! A batch is one transaction that applies the engine-neutral plans of its operations
//! (`batch::Plan`) in order: each operation first locks the record it reads
//! (`SELECT … FOR UPDATE`), so writers of one record serialize and the revision check of
//! its plan is exact; a record created concurrently is a conflict (its primary key), a
//! unique key held by another record is `StorageError::Unique`, counters are atomic
//! upserts. READ COMMITTED suffices: every read that decides is a locked row. A commit is
//! durable when it returns (the database's own WAL flush).
//!
//! Reads give what the embedded engine gives: records, revisions, unique holders, counts,
//! index ranges, pages merged over tenants (one query: each tenant's entries ordered by
//! what follows its prefix), scans, the change feed, and index verification over the same
//! derived keys (`indexes::expected_keys`).
//!
//! [`crate::Store`] holds it as its second engine (`storage.backend = "postgres"`).

use deadpool_postgres::GenericClient;
use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use tokio_postgres::error::SqlState;
use tokio_postgres::NoTls;

use std::collections::BTreeMap;

use super::batch::{Batch, Plan};
use super::feed::{change_from, Change};
use super::indexes::{compare, expected_keys, IndexReport};
use super::layout::{encode_uniques, record_key, tenant_prefix};
use super::reads::{Direction, Page, PageQuery};
use super::snapshot::Snapshot;
use crate::codec;
use crate::record::{Record, Stored, UniqueKey};
use crate::StorageError;

/// How many times a transaction the database aborted (deadlock, serialization failure) is
/// run before the error is returned.
pub const COMMIT_ATTEMPTS: usize = 8;

/// A random delay before attempt `attempt + 1`: up to 5 ms, doubling per attempt (at most
/// 320 ms), so transactions that aborted each other do not meet again.
fn retry_delay(attempt: usize) -> std::time::Duration {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(attempt);
    let ceiling_us = 5_000u64 << attempt.min(6);
    std::time::Duration::from_micros(h.finish() % ceiling_us)
}

/// A pool of connections to one schema of a PostgreSQL database.
pub struct PgEngine {
    pool: Pool,
    /// What the pool connects with: job locks open their own connections with it.
    config: tokio_postgres::Config,
    schema: String,
}

/// How long a caller waits for a pooled connection (all busy) or a new one before the
/// store answers `Unavailable`, rather than waiting for ever.
const POOL_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Limits every session sets, so that no statement, lock wait or forgotten transaction can
/// hold an entity (and the callers queued behind it) for good: a statement runs at most
/// 30 s, a lock is waited for at most 10 s, a transaction idle for a minute is ended by the
/// database; the server probes an idle connection as the client does, so a node cut off by
/// the network loses its job locks within about a minute on both sides. `options` in
/// `storage.url` come after these, so they can override them.
const SESSION_LIMITS: &str = "-c statement_timeout=30000 -c lock_timeout=10000 \
                              -c idle_in_transaction_session_timeout=60000 \
                              -c tcp_keepalives_idle=30 -c tcp_keepalives_interval=10 \
                              -c tcp_keepalives_count=3";

/// The connection settings of `url`, with [`SESSION_LIMITS`], a connect timeout unless
/// the URL sets one, and TCP keepalives that notice a dead peer within about a minute.
fn session_config(url: &str) -> Result<tokio_postgres::Config, StorageError> {
    let mut config: tokio_postgres::Config = url.parse().map_err(io)?;
    let options = match config.get_options() {
        Some(theirs) => format!("{SESSION_LIMITS} {theirs}"),
        None => SESSION_LIMITS.to_string(),
    };
    config.options(&options);
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    config
        .keepalives(true)
        .keepalives_idle(std::time::Duration::from_secs(30))
        .keepalives_interval(std::time::Duration::from_secs(10))
        .keepalives_retries(3);
    Ok(config)
}

fn pool_error(e: PoolError) -> StorageError {
    match e {
        PoolError::Timeout(_) => StorageError::Unavailable(format!(
            "no PostgreSQL connection within {} s: {e}",
            POOL_WAIT.as_secs()
        )),
        PoolError::Backend(e) => StorageError::Unavailable(describe(&e)),
        other => StorageError::Io(other.to_string()),
    }
}

/// A pooled connection that goes back to the pool only when its holder says the exchange
/// ended cleanly ([`Conn::release`]). Dropped otherwise (its future was dropped mid-query,
/// or a transaction failed) the connection is closed, and whatever it may still be running
/// is cancelled: no open transaction, row lock, session lock or running statement is ever
/// handed to the next borrower.
pub(crate) struct Conn {
    client: Option<deadpool_postgres::Object>,
}

impl Conn {
    fn get(&self) -> Result<&deadpool_postgres::Object, StorageError> {
        self.client.as_ref().ok_or_else(released)
    }

    fn get_mut(&mut self) -> Result<&mut deadpool_postgres::Object, StorageError> {
        self.client.as_mut().ok_or_else(released)
    }

    /// Back to the pool.
    fn release(mut self) {
        self.client = None;
    }
}

/// Never seen: a [`Conn`] is consumed by its release.
fn released() -> StorageError {
    StorageError::Io("the connection was released".into())
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let cancel = client.cancel_token();
            drop(deadpool_postgres::Object::take(client));
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = cancel.cancel_query(NoTls).await;
                });
            }
        }
    }
}

fn io(e: impl std::fmt::Display) -> StorageError {
    StorageError::Io(e.to_string())
}

/// What the database said (its SQLSTATE and message), or the client's error.
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

fn sql_error(e: tokio_postgres::Error) -> StorageError {
    match e.code() {
        // The database refused rather than failed: retrying the whole write may succeed.
        Some(c)
            if *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED =>
        {
            StorageError::Unavailable(describe(&e))
        }
        _ => StorageError::Io(describe(&e)),
    }
}

/// A schema name: lower-case ASCII letters, digits and `_`, not starting with a digit, at
/// most 63 bytes (it is written into SQL, so nothing else is accepted).
fn valid_schema(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

impl PgEngine {
    /// Connects to `url` (`postgres://user:password@host:port/database`), creates the
    /// schema and its tables if they are missing, and keeps up to `pool_size` connections.
    pub async fn connect(url: &str, schema: &str, pool_size: usize) -> Result<Self, StorageError> {
        if !valid_schema(schema) {
            return Err(StorageError::Corrupt(format!(
                "storage schema {schema:?}: use lower-case letters, digits and _"
            )));
        }
        let config = session_config(url)?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT))
            .create_timeout(Some(POOL_WAIT))
            .recycle_timeout(Some(POOL_WAIT))
            .build()
            .map_err(io)?;
        let engine = PgEngine {
            pool,
            config,
            schema: schema.to_string(),
        };
        engine.create_tables().await?;
        Ok(engine)
    }

    /// A pooled connection for reads: dropped mid-query, its answer is discarded when it
    /// comes and the next borrower's statements run after it (bounded by the session's
    /// statement timeout). Writes and transactions take a [`Conn`].
    async fn client(&self) -> Result<deadpool_postgres::Object, StorageError> {
        self.pool.get().await.map_err(pool_error)
    }

    /// A pooled connection for a write or a transaction (see [`Conn`]).
    async fn conn(&self) -> Result<Conn, StorageError> {
        Ok(Conn {
            client: Some(self.client().await?),
        })
    }

    async fn create_tables(&self) -> Result<(), StorageError> {
        let s = &self.schema;
        let client = self.client().await?;
        // Nodes starting together would race on the catalog (CREATE … IF NOT EXISTS is
        // not atomic): one at a time, under a transaction-scoped advisory lock.
        let creating = lock_key(s, "create tables");
        client
            .batch_execute(&format!(
                "BEGIN;
                 SELECT pg_advisory_xact_lock({creating});
                 CREATE SCHEMA IF NOT EXISTS {s};
                 CREATE TABLE IF NOT EXISTS {s}.records (k bytea PRIMARY KEY, v bytea NOT NULL);
                 CREATE TABLE IF NOT EXISTS {s}.idx (k bytea PRIMARY KEY, id bytea NOT NULL);
                 CREATE TABLE IF NOT EXISTS {s}.counters (k bytea PRIMARY KEY, n bigint NOT NULL);
                 CREATE TABLE IF NOT EXISTS {s}.uniques (k bytea PRIMARY KEY, id bytea NOT NULL);
                 CREATE TABLE IF NOT EXISTS {s}.meta (k bytea PRIMARY KEY, v bytea NOT NULL);
                 CREATE TABLE IF NOT EXISTS {s}.feed (seq bigserial PRIMARY KEY, v bytea NOT NULL);
                 COMMIT;"
            ))
            .await
            .map_err(|e| StorageError::Io(describe(&e)))
    }

    /// Applies every operation of `batch` in one transaction, or none of them; returns
    /// each operation's new revision (0 for deletes, notices and meta writes), as
    /// [`crate::Committed::revs`]. Durable when it returns.
    ///
    /// A transaction the database aborts to resolve a deadlock (two batches locking records
    /// in opposite orders) or a serialization failure (the SERIALIZABLE default of
    /// distributed engines) is run again, from its reads, after a random growing delay, up
    /// to [`COMMIT_ATTEMPTS`] times: its plans are decided anew on what it reads then.
    pub async fn commit(&self, batch: &Batch) -> Result<Vec<u64>, StorageError> {
        // The hot path (a validation's counters): one conditional UPDATE, no transaction
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
                // Within a transaction, only a deadlock, a serialization failure or a
                // record created concurrently maps to this.
                Err(StorageError::Unavailable(why)) if attempt < COMMIT_ATTEMPTS => {
                    tracing::debug!(attempt, %why, "transaction aborted by the database; retrying");
                    // Apart by a random, growing delay: run again at once, the same
                    // transactions would meet in the same deadlock.
                    tokio::time::sleep(retry_delay(attempt)).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn commit_once(&self, mut conn: Conn, batch: &Batch) -> Result<Vec<u64>, StorageError> {
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
    /// record it reads, then writes its plan. Returns the revisions.
    async fn apply_batch<C: GenericClient + Sync>(
        &self,
        tx: &C,
        batch: &Batch,
    ) -> Result<Vec<u64>, StorageError> {
        let mut revs = Vec::with_capacity(batch.ops.len());
        for op in &batch.ops {
            let old = match op.reads() {
                Some(key) => self.read_locking(tx, key).await?,
                None => None,
            };
            let plan = op.plan(old.as_deref())?;
            let collection = op.written().map_or("record", |(c, _)| c);
            self.apply(tx, &plan, old.is_some(), collection).await?;
            revs.push(plan.rev);
        }
        Ok(revs)
    }

    /// Opens a transaction that holds the record `key` locked (`SELECT … FOR UPDATE`) and
    /// returns its stored value: nobody else writes it until [`Held::commit`] or the drop
    /// of the [`Held`]. What is decided on that value cannot conflict.
    pub(crate) async fn hold(&self, key: &[u8]) -> Result<(Option<Vec<u8>>, Held), StorageError> {
        // Guarded before anything is sent: dropped half way, the transaction and the lock
        // it may already have go with the connection.
        let held = Held {
            conn: Some(self.conn().await?),
            key: key.to_vec(),
        };
        let client = held.client()?;
        // One round trip: the two statements are pipelined on the connection.
        let (begun, value) = tokio::join!(
            client.batch_execute("BEGIN"),
            self.read_locking(client, key)
        );
        begun.map_err(sql_error)?;
        Ok((value?, held))
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
                    vec![rev + 1]
                }
                _ => self.apply_batch(client, batch).await?,
            };
            client.batch_execute("COMMIT").await.map_err(sql_error)?;
            Ok(revs)
        }
        .await;
        match result {
            Ok(revs) => {
                held.done();
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
        for (key, counter) in &plan.index_remove {
            tx.execute(&format!("DELETE FROM {s}.idx WHERE k = $1"), &[key])
                .await
                .map_err(sql_error)?;
            self.add_to_counter(tx, counter, -1).await?;
        }
        for (key, counter) in &plan.index_add {
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

    /// Loads a snapshot of the embedded store (`Store::snapshot`) into this schema, which
    /// must hold no record yet, in one transaction: every record with its revision, and
    /// every index entry, counter, unique key, meta value and feed entry as it is (feed
    /// numbers kept; new ones continue after them). Returns the number of records.
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
                            .map(|v| counter_value(super::layout::decode_counter(v)?))
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
        let (client, connection) = self
            .config
            .connect(NoTls)
            .await
            .map_err(|e| StorageError::Unavailable(describe(&e)))?;
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

    /// A record and its revision.
    pub async fn get<R: Record>(&self, id: &[u8]) -> Result<Option<Stored<R>>, StorageError> {
        let row = self
            .client()
            .await?
            .query_opt(
                &format!("SELECT v FROM {}.records WHERE k = $1", self.schema),
                &[&record_key(R::COLLECTION, id)],
            )
            .await
            .map_err(sql_error)?;
        match row {
            Some(row) => {
                let bytes: Vec<u8> = row.get(0);
                Ok(Some(crate::codec::open_stored(&bytes)?))
            }
            None => Ok(None),
        }
    }

    /// The stored revision of a record, without decoding it.
    pub async fn revision<R: Record>(&self, id: &[u8]) -> Result<Option<u64>, StorageError> {
        let row = self
            .client()
            .await?
            .query_opt(
                &format!("SELECT v FROM {}.records WHERE k = $1", self.schema),
                &[&record_key(R::COLLECTION, id)],
            )
            .await
            .map_err(sql_error)?;
        match row {
            Some(row) => Ok(Some(codec::open(row.get::<_, &[u8]>(0))?.0)),
            None => Ok(None),
        }
    }

    /// Records of the given ids, in order, skipping ids that no longer exist.
    pub async fn get_many<R: Record>(
        &self,
        ids: &[Vec<u8>],
    ) -> Result<Vec<Stored<R>>, StorageError> {
        let keys: Vec<Vec<u8>> = ids.iter().map(|id| record_key(R::COLLECTION, id)).collect();
        let rows = self
            .client()
            .await?
            .query(
                &format!("SELECT k, v FROM {}.records WHERE k = ANY($1)", self.schema),
                &[&keys],
            )
            .await
            .map_err(sql_error)?;
        let found: BTreeMap<Vec<u8>, Vec<u8>> =
            rows.into_iter().map(|r| (r.get(0), r.get(1))).collect();
        let mut out = Vec::with_capacity(keys.len());
        for key in &keys {
            if let Some(bytes) = found.get(key) {
                out.push(crate::codec::open_stored(bytes)?);
            }
        }
        Ok(out)
    }

    /// Every record of a type, in primary-key order (recovery, index checks, copies).
    pub async fn scan<R: Record>(&self) -> Result<Vec<Stored<R>>, StorageError> {
        let mut conn = self.conn().await?;
        let records = {
            let tx = self.unlimited(&mut conn).await?;
            let records = self.scan_on::<R, _>(&tx).await?;
            tx.commit().await.map_err(sql_error)?;
            records
        };
        conn.release();
        Ok(records)
    }

    /// A transaction on `conn` without the session's statement and lock time limits
    /// ([`SESSION_LIMITS`]): for whole-collection work (scans, index checks and rebuilds,
    /// copies), which takes as long as the collection is large.
    async fn unlimited<'c>(
        &self,
        conn: &'c mut Conn,
    ) -> Result<deadpool_postgres::Transaction<'c>, StorageError> {
        let tx = conn.get_mut()?.transaction().await.map_err(sql_error)?;
        tx.batch_execute("SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0")
            .await
            .map_err(sql_error)?;
        Ok(tx)
    }

    async fn scan_on<R: Record, C: GenericClient + Sync>(
        &self,
        client: &C,
    ) -> Result<Vec<Stored<R>>, StorageError> {
        let prefix = record_key(R::COLLECTION, &[]);
        let rows = client
            .query(
                &format!(
                    "SELECT v FROM {}.records WHERE k >= $1 AND k < $2 ORDER BY k",
                    self.schema
                ),
                &[&prefix, &prefix_end(&prefix)],
            )
            .await
            .map_err(sql_error)?;
        rows.iter()
            .map(|row| crate::codec::open_stored(row.get::<_, &[u8]>(0)))
            .collect()
    }

    /// One page of an index merged over the given tenants in sort order, as
    /// `Store::page` gives it: the entries of each tenant ordered by what follows the
    /// tenant's prefix (sort key, then id), in one query.
    pub async fn page(&self, q: &PageQuery<'_>) -> Result<Page, StorageError> {
        let mut total = 0u64;
        for tenant in q.tenants {
            total += self.count(q.index, tenant).await?;
        }
        if q.tenants.is_empty() || q.limit == 0 {
            return Ok(Page {
                ids: Vec::new(),
                total,
            });
        }
        let order = match q.direction {
            Direction::Asc => "ASC",
            Direction::Desc => "DESC",
        };
        let offset = i64::try_from(q.offset).unwrap_or(i64::MAX);
        let limit = i64::try_from(q.limit).unwrap_or(i64::MAX);
        // No tenant gives more than the page's end: each branch reads that many entries
        // of its tenant along the primary key (one tenant's keys share their prefix, so
        // key order is suffix order), and only those are merged: the cost follows the
        // page, not the size of the index. Equal suffixes keep the tenants' order, as the
        // embedded engine's merge does.
        let reach = offset.saturating_add(limit);
        let mut params: Vec<Vec<u8>> = Vec::new();
        let mut branches = Vec::new();
        for (branch, tenant) in q.tenants.iter().enumerate() {
            let prefix = tenant_prefix(q.index, tenant)?;
            let skip = prefix.len() + 1;
            branches.push(format!(
                "(SELECT id, substring(k from {skip}) AS suffix, {branch} AS branch
                  FROM {}.idx WHERE k >= ${} AND k < ${} ORDER BY k {order} LIMIT {reach})",
                self.schema,
                params.len() + 1,
                params.len() + 2
            ));
            let end = prefix_end(&prefix);
            params.push(prefix);
            params.push(end);
        }
        let sql = format!(
            "SELECT id FROM ({}) AS merged ORDER BY suffix {order}, branch ASC
             OFFSET {offset} LIMIT {limit}",
            branches.join(" UNION ALL ")
        );
        let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
            .iter()
            .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        let rows = self
            .client()
            .await?
            .query(&sql, &refs)
            .await
            .map_err(sql_error)?;
        Ok(Page {
            ids: rows.into_iter().map(|r| r.get(0)).collect(),
            total,
        })
    }

    /// Up to `limit` entries of the change feed above `after`, in order, as
    /// `Store::changes` gives them.
    pub async fn changes(
        &self,
        after: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Change>, StorageError> {
        // From the start: numbers begin at 0 in a copy of the embedded store.
        let after = after.map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX));
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .client()
            .await?
            .query(
                &format!(
                    "SELECT seq, v FROM {}.feed WHERE seq > $1 ORDER BY seq LIMIT $2",
                    self.schema
                ),
                &[&after, &limit],
            )
            .await
            .map_err(sql_error)?;
        rows.iter()
            .map(|r| {
                let seq = u64::try_from(r.get::<_, i64>(0)).unwrap_or(0);
                change_from(seq, r.get::<_, &[u8]>(1))
            })
            .collect()
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

    /// The id holding a unique key, if any.
    pub async fn lookup_unique(&self, key: &UniqueKey) -> Result<Option<Vec<u8>>, StorageError> {
        let k = encode_uniques(std::slice::from_ref(key))?;
        let Some(k) = k.first() else {
            return Ok(None);
        };
        let row = self
            .client()
            .await?
            .query_opt(
                &format!("SELECT id FROM {}.uniques WHERE k = $1", self.schema),
                &[k],
            )
            .await
            .map_err(sql_error)?;
        Ok(row.map(|r| r.get(0)))
    }

    /// Number of entries of an index for one tenant, from its counter.
    pub async fn count(&self, index: &'static str, tenant: &[u8]) -> Result<u64, StorageError> {
        let row = self
            .client()
            .await?
            .query_opt(
                &format!("SELECT n FROM {}.counters WHERE k = $1", self.schema),
                &[&tenant_prefix(index, tenant)?],
            )
            .await
            .map_err(sql_error)?;
        Ok(row.map_or(0, |r| u64::try_from(r.get::<_, i64>(0)).unwrap_or(0)))
    }

    /// The ids of one tenant's index entries whose sort key is in `from..to` (`to`: `None`,
    /// to the end), in ascending order, as `Store::index_range` gives them.
    pub async fn index_range(
        &self,
        index: &'static str,
        tenant: &[u8],
        from: &[u8],
        to: Option<&[u8]>,
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        let prefix = tenant_prefix(index, tenant)?;
        let mut start = prefix.clone();
        start.extend_from_slice(from);
        let end = match to {
            Some(to) => {
                let mut e = prefix.clone();
                e.extend_from_slice(to);
                e
            }
            None => prefix_end(&prefix),
        };
        let rows = self
            .client()
            .await?
            .query(
                &format!(
                    "SELECT id FROM {}.idx WHERE k >= $1 AND k < $2 ORDER BY k",
                    self.schema
                ),
                &[&start, &end],
            )
            .await
            .map_err(sql_error)?;
        Ok(rows.into_iter().map(|r| r.get(0)).collect())
    }

    /// Up to `limit` index entries under `prefix` after (in `direction`) the full key
    /// `after`: (full key, id) pairs, for [`crate::IndexIter`]'s keyset reads.
    pub(crate) async fn index_chunk(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        direction: Direction,
        limit: i64,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StorageError> {
        // Keyset bounds: ascending, from just after `after`; descending, below it.
        let (lo, lo_op, hi) = match (direction, after) {
            (Direction::Asc, None) => (prefix.to_vec(), ">=", prefix_end(prefix)),
            (Direction::Asc, Some(after)) => (after.to_vec(), ">", prefix_end(prefix)),
            (Direction::Desc, None) => (prefix.to_vec(), ">=", prefix_end(prefix)),
            (Direction::Desc, Some(after)) => (prefix.to_vec(), ">=", after.to_vec()),
        };
        let order = match direction {
            Direction::Asc => "ASC",
            Direction::Desc => "DESC",
        };
        let sql = format!(
            "SELECT k, id FROM {}.idx WHERE k {lo_op} $1 AND k < $2 ORDER BY k {order} LIMIT $3",
            self.schema
        );
        let rows = self
            .client()
            .await?
            .query(&sql, &[&lo, &hi, &limit])
            .await
            .map_err(sql_error)?;
        Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Number of entries in the change feed.
    pub(crate) async fn feed_len(&self) -> Result<usize, StorageError> {
        let row = self
            .client()
            .await?
            .query_one(&format!("SELECT count(*) FROM {}.feed", self.schema), &[])
            .await
            .map_err(sql_error)?;
        Ok(usize::try_from(row.get::<_, i64>(0)).unwrap_or(0))
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
                     AND NOT EXISTS (SELECT 1 FROM {s}.uniques) AND NOT EXISTS (SELECT 1 FROM {s}.idx)"
                ),
                &[],
            )
            .await
            .map_err(sql_error)?;
        Ok(row.get(0))
    }

    /// A meta value.
    pub async fn get_meta(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        let row = self
            .client()
            .await?
            .query_opt(
                &format!("SELECT v FROM {}.meta WHERE k = $1", self.schema),
                &[&key.as_bytes()],
            )
            .await
            .map_err(sql_error)?;
        Ok(row.map(|r| r.get(0)))
    }

    /// The sequence numbers of the change feed's entries, oldest first.
    pub async fn feed_seqs(&self, limit: i64) -> Result<Vec<u64>, StorageError> {
        let rows = self
            .client()
            .await?
            .query(
                &format!("SELECT seq FROM {}.feed ORDER BY seq LIMIT $1", self.schema),
                &[&limit],
            )
            .await
            .map_err(sql_error)?;
        Ok(rows
            .into_iter()
            .map(|r| u64::try_from(r.get::<_, i64>(0)).unwrap_or(0))
            .collect())
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

/// The advisory-lock key of `name` in `schema`: a stable 64-bit hash (FNV-1a), the same on
/// every node and every build.
fn lock_key(schema: &str, name: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in schema.bytes().chain([0]).chain(name.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(h.to_ne_bytes())
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

/// The first key after every key starting with `prefix` (a prefix of `0xFF` bytes only
/// has no such key: then one past the longest key, which is long enough in practice).
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return end;
        }
    }
    vec![0xFF; prefix.len() + 1024]
}

#[cfg(test)]
mod tests;
