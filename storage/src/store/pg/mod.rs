//! The PostgreSQL engine (`docs/scale-out.md`): the store's layout in six tables of one
//! schema, so several Tollgate nodes share one database, plus a seventh of its own
//! (`tallies`: counters kept apart from their records, see `tally`).
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
//!
//! One job per file: this one connects (the pool and its session limits, the schema and
//! its tables, the guarded connection [`Conn`], error mapping, key-range helpers);
//! `write` commits batches (their plans in one transaction, the retry loop, records held
//! locked), `read` answers reads, `admin` does whole-schema work (snapshot import, job
//! locks, index verification and rebuild), `tally` keeps counters apart from their
//! records, `usage` is the usage store (seven `usage_*` tables, gathered transactions);
//! `tests` and `tally_tests` run the engine on a real database.

use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use tokio_postgres::error::SqlState;
use tokio_postgres::NoTls;

use crate::StorageError;

mod admin;
mod gather;
mod listen;
mod reach;
mod read;
mod stats;
mod tally;
mod usage;
mod write;

pub use admin::JobLock;
pub use listen::FAULT_LISTENER_DELAY;
pub use reach::DatabaseState;
pub(crate) use write::Held;

/// A pool of connections to one schema of a PostgreSQL database.
pub struct PgEngine {
    pool: Pool,
    /// What the pool connects with: job locks open their own connections with it.
    config: tokio_postgres::Config,
    schema: String,
    /// How long a commit that notified a change waits before it returns, in µs (the
    /// listener's trust window, see `listen`; 0 until [`PgEngine::listen`]).
    notify_wait_us: std::sync::atomic::AtomicU64,
    /// Counted hits on their way to the database together (`gather`).
    gatherer: gather::Gatherer,
    /// Usage calls on their way to the database together (`usage`).
    usage: usage::UsageQueue,
    /// Whether the database can be reached (`reach`).
    reach: std::sync::Arc<reach::Reach>,
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

/// How long one attempt to reach one host may take unless the URL says
/// (`connect_timeout`): short enough that a URL naming several hosts tries the next within
/// [`POOL_WAIT`] when the first has vanished without refusing.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

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
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    config
        .keepalives(true)
        .keepalives_idle(std::time::Duration::from_secs(30))
        .keepalives_interval(std::time::Duration::from_secs(10))
        .keepalives_retries(3);
    Ok(config)
}

/// Whether `e` is a failed attempt to open a connection (rather than a busy pool).
fn failed_to_connect(e: &PoolError) -> bool {
    matches!(
        e,
        PoolError::Backend(_) | PoolError::Timeout(deadpool_postgres::TimeoutType::Create)
    )
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
        None => match std::error::Error::source(e) {
            // "error connecting to server" says little without its cause.
            Some(cause) => format!("{e}: {cause}"),
            None => e.to_string(),
        },
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
            notify_wait_us: std::sync::atomic::AtomicU64::new(0),
            gatherer: gather::Gatherer::default(),
            usage: usage::UsageQueue::default(),
            reach: reach::Reach::new(),
        };
        engine.create_tables().await?;
        Ok(engine)
    }

    /// A pooled connection for reads: dropped mid-query, its answer is discarded when it
    /// comes and the next borrower's statements run after it (bounded by the session's
    /// statement timeout). Writes and transactions take a [`Conn`].
    /// While the database is down (`reach`) the caller is answered `Unavailable` at once.
    async fn client(&self) -> Result<deadpool_postgres::Object, StorageError> {
        if let Some(why) = self.reach.refusal() {
            return Err(StorageError::Unavailable(why));
        }
        match self.pool.get().await {
            Ok(client) => Ok(client),
            Err(e) => {
                if failed_to_connect(&e) {
                    let why = match &e {
                        PoolError::Backend(b) => describe(b),
                        other => other.to_string(),
                    };
                    self.reach.failed(&why, &self.config);
                }
                Err(pool_error(e))
            }
        }
    }

    /// Whether the database can be reached, as this engine last saw it.
    pub fn database_state(&self) -> DatabaseState {
        self.reach.state()
    }

    /// How many times the database became unreachable since the engine started.
    pub fn outages(&self) -> u64 {
        self.reach.outages()
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
                 CREATE TABLE IF NOT EXISTS {s}.tallies (k bytea PRIMARY KEY, usage bigint NOT NULL,
                     limit_usage bigint, validations bigint NOT NULL, last_at bigint);
                 {usage}
                 {mirror}
                 {count}
                 COMMIT;",
                usage = usage::tables(s),
                mirror = tally::mirror_trigger(s),
                count = gather::count_function(s),
            ))
            .await
            .map_err(|e| StorageError::Io(describe(&e)))
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
mod tally_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
#[path = "usage_tests.rs"]
mod usage_tests;
