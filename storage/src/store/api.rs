//! The store's public API over its two engines. Each method dispatches on the engine: the
//! embedded arm runs synchronously inside the future's first poll, the PostgreSQL arm
//! awaits the database. The PostgreSQL futures are boxed: a client's query futures are
//! large, and every future that awaits a store call (every handler's) would otherwise
//! carry their size on the embedded path too.

use std::path::Path;
use std::sync::Arc;

use super::pg::PgEngine;
use super::reads::{Direction, Page, PageQuery};
use super::{Backend, StoreConfig};
use super::{Batch, Change, Committed, Common, Embedded, Engine, IndexReport, Snapshot, Store};
use crate::flusher::{DurableFuture, StoreHealth};
use crate::record::{Record, Stored, UniqueKey};
use crate::StorageError;

/// How long a consumer of the change feed on PostgreSQL sleeps before looking again when
/// no commit of its own process woke it (another node's commits do not).
const REMOTE_FEED_POLL: std::time::Duration = std::time::Duration::from_millis(500);

impl Store {
    /// Opens (or creates) the embedded store in `config.data_dir`. For a configuration
    /// that may name PostgreSQL, use [`Store::connect`].
    pub fn open(config: &StoreConfig) -> Result<Self, StorageError> {
        Ok(Self::with(Engine::Embedded(Embedded::open(config)?)))
    }

    /// Opens the store `config.backend` names: the embedded one, or a PostgreSQL schema
    /// (created with its tables if missing).
    pub async fn connect(config: &StoreConfig) -> Result<Self, StorageError> {
        match &config.backend {
            Backend::Embedded => Self::open(config),
            Backend::Postgres {
                url,
                schema,
                pool_size,
            } => Self::postgres(url.expose(), schema, *pool_size).await,
        }
    }

    /// A store over one schema of a PostgreSQL database.
    pub async fn postgres(url: &str, schema: &str, pool_size: usize) -> Result<Self, StorageError> {
        let engine = PgEngine::connect(url, schema, pool_size).await?;
        Ok(Self::with(Engine::Postgres(Arc::new(engine))))
    }

    /// An embedded store in a temporary directory that is removed when the store is dropped.
    pub fn temporary() -> Result<Self, StorageError> {
        Ok(Self::with(Engine::Embedded(Embedded::temporary()?)))
    }

    fn with(engine: Engine) -> Self {
        Store {
            engine,
            common: Common::new(),
        }
    }

    /// Whether other processes (other Tollgate nodes) write this store too. When they do,
    /// what this process holds in memory may be stale: a write is conditional and decided
    /// again on conflict, and a cached answer is checked or expires. When they do not, this
    /// process sees every write, and commits are synchronous ([`Store::commit_in_place`]).
    pub fn is_shared(&self) -> bool {
        match &self.engine {
            Engine::Embedded(_) => false,
            Engine::Postgres(_) => true,
        }
    }

    /// The engine's name, for logs and metrics: `embedded` or `postgres`.
    pub fn engine_name(&self) -> &'static str {
        match &self.engine {
            Engine::Embedded(_) => "embedded",
            Engine::Postgres(_) => "postgres",
        }
    }

    // ---- Writes -------------------------------------------------------------------

    /// Applies every operation of `batch` atomically, or none of them.
    ///
    /// Embedded: visible to readers at once but not yet durable: await
    /// [`Store::durable`] with the returned sequence number before acknowledging it. A
    /// batch of one write that changes no index entry, unique key or counter (the hot
    /// path) is a single compare-and-swap on its record. Once a flush has failed the store
    /// acknowledges nothing more: every commit fails at once with
    /// [`StorageError::Unavailable`] (see [`Store::health`]).
    ///
    /// PostgreSQL: one transaction, durable when it returns (sequence number 0).
    pub async fn commit(&self, batch: &Batch) -> Result<Committed, StorageError> {
        let committed = match &self.engine {
            Engine::Embedded(e) => e.commit(batch)?,
            Engine::Postgres(pg) => Committed {
                seq: 0,
                revs: Box::pin(pg.commit(batch)).await?,
            },
        };
        self.committed(batch);
        Ok(committed)
    }

    /// The embedded engine's synchronous commit (see [`Store::commit`]); `None` on an
    /// engine whose commit must be awaited. The entity actors' fast path: the state is
    /// swapped and the reply queued without leaving the message handler.
    pub fn commit_in_place(&self, batch: &Batch) -> Option<Result<Committed, StorageError>> {
        match &self.engine {
            Engine::Embedded(e) => Some(e.commit(batch).inspect(|_| self.committed(batch))),
            Engine::Postgres(_) => None,
        }
    }

    /// After a commit of this process: wake the feed's consumer, tell the watchers.
    fn committed(&self, batch: &Batch) {
        if batch.feeds() {
            self.common.feed_signal.notify_one();
        }
        self.notify_watchers(batch);
    }

    /// Commits `batch` and waits until it is durable.
    pub async fn commit_durable(&self, batch: &Batch) -> Result<Committed, StorageError> {
        let committed = self.commit(batch).await?;
        self.durable(committed.seq).await?;
        Ok(committed)
    }

    /// Opens a transaction holding the record `id` of `R` locked, and reads it: until the
    /// [`Holding`] commits or is released, no other writer (no other node) changes it, so
    /// what is decided on it cannot conflict. `None` on the embedded store, whose single
    /// writer per aggregate needs no lock.
    pub async fn hold<R: Record>(
        &self,
        id: &[u8],
    ) -> Result<Option<(Option<Stored<R>>, Holding)>, StorageError> {
        match &self.engine {
            Engine::Embedded(_) => Ok(None),
            Engine::Postgres(pg) => {
                let key = super::layout::record_key(R::COLLECTION, id);
                let (value, tally, held) = Box::pin(pg.hold(&key, R::TALLIED)).await?;
                let stored = match value {
                    Some(bytes) => {
                        let mut stored: Stored<R> = crate::codec::open_stored(&bytes)?;
                        if let Some(tally) = tally {
                            stored.value.set_tally(&tally);
                        }
                        Some(stored)
                    }
                    None => None,
                };
                Ok(Some((
                    stored,
                    Holding {
                        store: self.clone(),
                        held,
                    },
                )))
            }
        }
    }

    /// Calls `f` with the id of every record of `collection` a commit *of this process*
    /// writes or deletes, right after the commit (on the committing thread; `f` must be
    /// quick and must not write). For caches of records: invalidate in `f`. On PostgreSQL
    /// other nodes' commits are not seen: such a cache must also expire.
    pub fn watch(&self, collection: &'static str, f: impl Fn(&[u8]) + Send + Sync + 'static) {
        let mut w = self
            .common
            .watchers
            .write()
            .unwrap_or_else(|p| p.into_inner());
        w.push((collection, Box::new(f)));
        self.common
            .watching
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn notify_watchers(&self, batch: &Batch) {
        if !self
            .common
            .watching
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let watchers = self
            .common
            .watchers
            .read()
            .unwrap_or_else(|p| p.into_inner());
        for (collection, id) in batch.written() {
            for (watched, f) in watchers.iter() {
                if *watched == collection {
                    f(id);
                }
            }
        }
    }

    // ---- Durability -----------------------------------------------------------------

    /// Resolves once every write up to sequence number `seq` is durable. Writes that were
    /// committed concurrently share one flush. At once on PostgreSQL.
    pub fn durable(&self, seq: u64) -> DurableFuture {
        match &self.engine {
            Engine::Embedded(e) => e.flusher().wait(seq),
            Engine::Postgres(_) => DurableFuture::Ready(Some(Ok(()))),
        }
    }

    /// Calls `f` once every write up to `seq` is durable, with the error of the flush if it
    /// failed: at once if they already are, else on the flusher thread right after the
    /// flush, so an answer can be sent without another thread hop. `f` must not block.
    pub fn on_durable(&self, seq: u64, f: impl FnOnce(Result<(), StorageError>) + Send + 'static) {
        match &self.engine {
            Engine::Embedded(e) => e.flusher().on_durable(seq, Box::new(f)),
            Engine::Postgres(_) => f(Ok(())),
        }
    }

    /// Resolves once every write committed so far is durable. A reader awaits this before
    /// answering, so that no client is told about a write a crash could still undo. At
    /// once on PostgreSQL (a read there sees committed, durable rows only).
    pub fn read_barrier(&self) -> DurableFuture {
        self.durable(self.last_committed())
    }

    /// The sequence number of the last write committed so far (0 on PostgreSQL).
    pub fn last_committed(&self) -> u64 {
        match &self.engine {
            Engine::Embedded(e) => e.flusher().last_committed(),
            Engine::Postgres(_) => 0,
        }
    }

    /// Whether every write up to `seq` is durable now (no waiting).
    pub fn is_durable(&self, seq: u64) -> bool {
        match &self.engine {
            Engine::Embedded(e) => e.flusher().is_durable(seq),
            Engine::Postgres(_) => true,
        }
    }

    /// Whether the store acknowledges writes; after a failed flush the embedded store never
    /// does again in this process (see [`StoreHealth`]). PostgreSQL reports each failed
    /// write to its caller instead.
    pub fn health(&self) -> StoreHealth {
        match &self.engine {
            Engine::Embedded(e) => e.flusher().health(),
            Engine::Postgres(_) => StoreHealth::Healthy,
        }
    }

    /// Whether the database can be reached for writes (PostgreSQL: see
    /// `pg/reach.rs`); `None` on the embedded store, which has no database to lose.
    pub fn database(&self) -> Option<crate::DatabaseState> {
        match &self.engine {
            Engine::Embedded(_) => None,
            Engine::Postgres(pg) => Some(pg.database_state()),
        }
    }

    /// How many times the database became unreachable since the store opened (0 on the
    /// embedded store).
    pub fn database_outages(&self) -> u64 {
        match &self.engine {
            Engine::Embedded(_) => 0,
            Engine::Postgres(pg) => pg.outages(),
        }
    }

    /// How many flushes the flusher has run (for benchmarks and tests of group commit).
    pub fn flush_count(&self) -> u64 {
        self.flush_stats().flushes
    }

    /// Totals of the group-commit flusher since the store opened (for metrics; zero on
    /// PostgreSQL, which flushes its own WAL).
    pub fn flush_stats(&self) -> crate::FlushStats {
        match &self.engine {
            Engine::Embedded(e) => e.flusher().stats(),
            Engine::Postgres(_) => crate::FlushStats::default(),
        }
    }

    /// Flushes everything now and waits for it (used on shutdown).
    pub fn flush_blocking(&self) -> Result<(), StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.flush(),
            Engine::Postgres(_) => Ok(()),
        }
    }

    /// Rewrites the embedded store in `config.data_dir` (the service stopped) so that it
    /// holds its content once, with `config.compression`; crash-safe. PostgreSQL is
    /// refused: `VACUUM FULL` is its rewrite (docs/operating.md).
    pub fn compact(config: &StoreConfig) -> Result<crate::CompactReport, StorageError> {
        match config.backend {
            crate::Backend::Embedded => Embedded::compact(config),
            crate::Backend::Postgres { .. } => Err(StorageError::Io(
                "compact rewrites the embedded store; PostgreSQL reclaims space with \
                 VACUUM (automatic) and VACUUM FULL"
                    .into(),
            )),
        }
    }

    /// Whether an embedded store exists in this directory.
    pub fn exists(path: &Path) -> bool {
        Embedded::exists(path)
    }

    // ---- Reads ----------------------------------------------------------------------

    /// A record and its revision.
    pub async fn get<R: Record>(&self, id: &[u8]) -> Result<Option<Stored<R>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.get(id),
            Engine::Postgres(pg) => Box::pin(pg.get(id)).await,
        }
    }

    /// The stored revision of a record, without decoding it (`None`: no such record).
    pub async fn revision<R: Record>(&self, id: &[u8]) -> Result<Option<u64>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.revision::<R>(id),
            Engine::Postgres(pg) => Box::pin(pg.revision::<R>(id)).await,
        }
    }

    /// Records of the given ids, in order, skipping ids that no longer exist.
    pub async fn get_many<R: Record>(
        &self,
        ids: &[Vec<u8>],
    ) -> Result<Vec<Stored<R>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.get_many(ids),
            Engine::Postgres(pg) => Box::pin(pg.get_many(ids)).await,
        }
    }

    /// Every record of a type, in primary-key order. For recovery, sweeps and index
    /// rebuilds.
    pub async fn scan<R: Record>(&self) -> Result<Vec<Stored<R>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.scan().collect(),
            Engine::Postgres(pg) => Box::pin(pg.scan()).await,
        }
    }

    /// Up to `limit` records of a type whose id sorts after `after` (from the first without
    /// one), in primary-key order: a walk over a whole type in bounded chunks (the
    /// retention purge), never holding more than one chunk.
    pub async fn scan_chunk<R: Record>(
        &self,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Stored<R>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.scan_after(after).take(limit).collect(),
            Engine::Postgres(pg) => Box::pin(pg.scan_chunk(after, limit)).await,
        }
    }

    /// The id of the record holding a unique key, if any.
    pub async fn lookup_unique(&self, key: &UniqueKey) -> Result<Option<Vec<u8>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.lookup_unique(key),
            Engine::Postgres(pg) => Box::pin(pg.lookup_unique(key)).await,
        }
    }

    /// The ids of the records holding each unique key (`None` where no record does), in
    /// the keys' order: one read for all of them.
    pub async fn lookup_unique_many(
        &self,
        keys: &[UniqueKey],
    ) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.lookup_unique_many(keys),
            Engine::Postgres(pg) => Box::pin(pg.lookup_unique_many(keys)).await,
        }
    }

    /// Number of entries of an index for one tenant, from its counter (no scan).
    pub async fn count(&self, index: &'static str, tenant: &[u8]) -> Result<u64, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.count(index, tenant),
            Engine::Postgres(pg) => Box::pin(pg.count(index, tenant)).await,
        }
    }

    /// One page of an index, merged over the given tenants in sort order. Its cost grows
    /// with `offset + limit` and the number of tenants, never with the size of the store.
    pub async fn page(&self, q: &PageQuery<'_>) -> Result<Page, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.page(q),
            Engine::Postgres(pg) => Box::pin(pg.page(q)).await,
        }
    }

    /// Record ids of an index in sort order, merged over the given tenants; lazy (read in
    /// chunks), so a caller that filters can stop as soon as it has what it needs.
    pub fn index_iter(
        &self,
        index: &'static str,
        tenants: &[Vec<u8>],
        direction: Direction,
    ) -> Result<IndexIter, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => Ok(IndexIter(Cursor::Embedded(
                e.index_iter(index, tenants, direction)?,
            ))),
            Engine::Postgres(pg) => {
                let mut heads = Vec::with_capacity(tenants.len());
                for tenant in tenants {
                    let prefix = super::layout::tenant_prefix(index, tenant)?;
                    heads.push(RemoteHead {
                        prefix,
                        buffered: std::collections::VecDeque::new(),
                        last: None,
                        done: false,
                    });
                }
                Ok(IndexIter(Cursor::Postgres {
                    pg: pg.clone(),
                    heads,
                    direction,
                }))
            }
        }
    }

    /// Ids in one tenant of an index whose sort key lies in `[from, to)`, ascending.
    pub async fn index_range(
        &self,
        index: &'static str,
        tenant: &[u8],
        from: &[u8],
        to: Option<&[u8]>,
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.index_range(index, tenant, from, to),
            Engine::Postgres(pg) => Box::pin(pg.index_range(index, tenant, from, to)).await,
        }
    }

    pub async fn get_meta(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.get_meta(key),
            Engine::Postgres(pg) => Box::pin(pg.get_meta(key)).await,
        }
    }

    // ---- The change feed ------------------------------------------------------------

    /// Up to `limit` entries of the change feed with a sequence number above `after`
    /// (from the start with `None`), in order. An entry read here may not be durable yet:
    /// await [`Store::read_barrier`] before acting on it. On PostgreSQL numbers are drawn
    /// before commit, so a consumer reads from the start (`None`) after consuming.
    pub async fn changes(
        &self,
        after: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Change>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.changes(after, limit),
            Engine::Postgres(pg) => Box::pin(pg.changes(after, limit)).await,
        }
    }

    /// Number of entries waiting in the change feed.
    pub async fn pending_changes(&self) -> Result<usize, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => Ok(e.feed_len()),
            Engine::Postgres(pg) => Box::pin(pg.feed_len()).await,
        }
    }

    /// Resolves when a commit has written to the change feed since the last call returned
    /// (at once if one has): the consumer's wake-up. On PostgreSQL also after a short
    /// while, since other nodes' commits wake nobody here.
    pub async fn changes_written(&self) {
        match &self.engine {
            Engine::Embedded(_) => self.common.feed_signal.notified().await,
            Engine::Postgres(_) => {
                let _ = tokio::time::timeout(REMOTE_FEED_POLL, self.common.feed_signal.notified())
                    .await;
            }
        }
    }

    // ---- Checks, copies, locks --------------------------------------------------------

    /// Compares the stored index entries, counters and unique keys of `R` with the ones
    /// its records derive.
    pub async fn verify_indexes<R: Record>(&self) -> Result<IndexReport, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.verify_indexes::<R>(),
            Engine::Postgres(pg) => Box::pin(pg.verify_indexes::<R>()).await,
        }
    }

    /// Rewrites the index entries, counters and unique keys of `R` from its records.
    pub async fn rebuild_indexes<R: Record>(&self) -> Result<(), StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.rebuild_indexes::<R>(),
            Engine::Postgres(pg) => Box::pin(pg.rebuild_indexes::<R>()).await,
        }
    }

    /// A consistent copy of the whole embedded store (commits wait while it is read).
    /// PostgreSQL has its own tools for that (`pg_dump`).
    pub fn snapshot(&self) -> Result<Snapshot, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.snapshot(),
            Engine::Postgres(_) => Err(StorageError::Io(
                "snapshots are for the embedded store; back up PostgreSQL with pg_dump".into(),
            )),
        }
    }

    /// The snapshot of [`Store::snapshot`], written to `w` (a file) as it is read, so
    /// that a store larger than memory can be copied: commits wait until it is written.
    /// Answers `w` and the records written. The embedded store only.
    pub fn snapshot_to<W: std::io::Write + std::io::Seek>(
        &self,
        w: W,
    ) -> Result<(W, u64), StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.snapshot_to(w),
            Engine::Postgres(_) => Err(StorageError::Io(
                "snapshots are for the embedded store; back up PostgreSQL with pg_dump".into(),
            )),
        }
    }

    /// Loads a snapshot file read entry by entry into an empty store; answers the records
    /// loaded. The embedded store holds one entry in memory at a time;
    /// PostgreSQL reads the whole snapshot first and takes it in one transaction. Refuses
    /// a store with data.
    pub async fn restore_from_reader(&self, r: impl std::io::Read) -> Result<u64, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.restore_items(crate::SnapshotReader::new(r)?),
            Engine::Postgres(pg) => {
                let snapshot = Snapshot::read_from(&mut { r })?;
                Box::pin(pg.import(&snapshot)).await?;
                Ok(snapshot.record_count() as u64)
            }
        }
    }

    /// Loads a snapshot into an empty store: the embedded one is flushed after; PostgreSQL
    /// takes it in one transaction. Refuses a store with data.
    pub async fn restore(&self, snapshot: &Snapshot) -> Result<(), StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.restore(snapshot),
            Engine::Postgres(pg) => Box::pin(pg.import(snapshot)).await.map(drop),
        }
    }

    /// Whether the store holds nothing at all.
    pub async fn is_empty(&self) -> Result<bool, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => Ok(e.is_empty()),
            Engine::Postgres(pg) => Box::pin(pg.is_empty()).await,
        }
    }

    /// Removes the first entry of an index of the embedded store, leaving its record and
    /// counter as they are: deliberate damage, for tests of `tollgate check`.
    #[doc(hidden)]
    pub fn damage_index_for_tests(&self, index: &str) -> Result<bool, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.damage_index_for_tests(index),
            Engine::Postgres(_) => Ok(false),
        }
    }

    /// Takes the store-wide lock `name` if no other node holds it: what keeps background
    /// sweeps from running on several nodes at once. `None`: another node holds it. The
    /// embedded store has one node, so it is always granted. On PostgreSQL it is a session
    /// advisory lock, freed when the [`JobLock`] is dropped or its node dies. Correctness
    /// never depends on it (every sweep is safe to run twice); it saves double work.
    pub async fn try_lock(&self, name: &str) -> Result<Option<JobLock>, StorageError> {
        match &self.engine {
            Engine::Embedded(_) => Ok(Some(JobLock { _held: None })),
            Engine::Postgres(pg) => {
                Ok(pg.try_lock(name).await?.map(|l| JobLock { _held: Some(l) }))
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn embedded(&self) -> &Embedded {
        match &self.engine {
            Engine::Embedded(e) => e,
            Engine::Postgres(_) => panic!("this test needs the embedded engine"),
        }
    }
}

/// A record held locked by [`Store::hold`]: commit a batch in its transaction, or release
/// it. Dropped, its transaction is rolled back.
pub struct Holding {
    store: Store,
    held: super::pg::Held,
}

impl Holding {
    /// Applies `batch` in the holding transaction and commits it (durable when it returns).
    pub async fn commit(self, batch: &Batch) -> Result<Committed, StorageError> {
        let Engine::Postgres(pg) = &self.store.engine else {
            return Err(StorageError::Closed);
        };
        let revs = pg.commit_held(self.held, batch).await?;
        self.store.committed(batch);
        Ok(Committed { seq: 0, revs })
    }

    /// Ends the transaction without writing.
    pub async fn release(self) {
        if let Engine::Postgres(pg) = &self.store.engine {
            pg.release(self.held).await;
        }
    }
}

/// A lock taken with [`Store::try_lock`], held until dropped.
pub struct JobLock {
    _held: Option<super::pg::JobLock>,
}

impl JobLock {
    /// Whether the lock was lost with its database connection (never on the embedded
    /// store): the holder must stop relying on it and ask again.
    pub fn is_lost(&self) -> bool {
        self._held.as_ref().is_some_and(super::pg::JobLock::is_lost)
    }
}

/// Ids of index entries in sort order over several tenants (see [`Store::index_iter`]).
/// Read with `while let Some(id) = iter.next().await`.
pub struct IndexIter(Cursor);

enum Cursor {
    Embedded(super::sled::SledIndexIter),
    Postgres {
        pg: Arc<PgEngine>,
        heads: Vec<RemoteHead>,
        direction: Direction,
    },
}

struct RemoteHead {
    prefix: Vec<u8>,
    /// (full key, id) read and not yet returned.
    buffered: std::collections::VecDeque<(Vec<u8>, Vec<u8>)>,
    /// The last full key read: the next chunk starts after it.
    last: Option<Vec<u8>>,
    done: bool,
}

/// Entries read per tenant and round trip.
const CHUNK: i64 = 256;

impl IndexIter {
    /// The next id, `None` at the end.
    #[allow(clippy::should_implement_trait)]
    pub async fn next(&mut self) -> Option<Result<Vec<u8>, StorageError>> {
        match &mut self.0 {
            Cursor::Embedded(iter) => iter.next(),
            Cursor::Postgres {
                pg,
                heads,
                direction,
            } => {
                for head in heads.iter_mut() {
                    if head.buffered.is_empty() && !head.done {
                        match pg
                            .index_chunk(&head.prefix, head.last.as_deref(), *direction, CHUNK)
                            .await
                        {
                            Ok(rows) => {
                                head.done = (rows.len() as i64) < CHUNK;
                                head.last = rows.last().map(|(k, _)| k.clone());
                                head.buffered.extend(rows);
                            }
                            Err(e) => return Some(Err(e)),
                        }
                    }
                }
                let mut best: Option<(usize, &[u8])> = None;
                for (n, head) in heads.iter().enumerate() {
                    let Some((key, _)) = head.buffered.front() else {
                        continue;
                    };
                    let suffix = key.get(head.prefix.len()..).unwrap_or_default();
                    let better = match best {
                        None => true,
                        Some((_, b)) => match direction {
                            Direction::Asc => suffix < b,
                            Direction::Desc => suffix > b,
                        },
                    };
                    if better {
                        best = Some((n, suffix));
                    }
                }
                let n = best?.0;
                heads[n].buffered.pop_front().map(|(_, id)| Ok(id))
            }
        }
    }

    /// Up to `n` of the remaining ids.
    pub async fn take(mut self, n: usize) -> Result<Vec<Vec<u8>>, StorageError> {
        let mut out = Vec::new();
        while out.len() < n {
            match self.next().await {
                Some(id) => out.push(id?),
                None => break,
            }
        }
        Ok(out)
    }

    /// Every remaining id.
    pub async fn collect(mut self) -> Result<Vec<Vec<u8>>, StorageError> {
        let mut out = Vec::new();
        while let Some(id) = self.next().await {
            out.push(id?);
        }
        Ok(out)
    }
}
