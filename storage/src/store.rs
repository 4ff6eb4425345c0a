//! The store: its configuration, opening it over sled's trees, and durability (waiting for
//! the group-commit flush that covers a write, read barriers, health).
//!
//! The rest of its API lives in the submodules, one responsibility each: `batch` (atomic
//! writes: records, index entries, counters and unique keys in one transaction), `reads`
//! (records, unique-key lookups, counts and paginated index reads), `indexes` (verifying
//! and rebuilding the derived keys), `snapshot` (a consistent copy of the whole store, its
//! file format, restore) and `layout` (how records, index entries, counters and unique keys
//! are laid out as keys and values).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::flusher::{DurabilityMode, DurableFuture, Flusher, StoreHealth, DEFAULT_FLUSH_DEADLINE};
use crate::StorageError;

mod batch;
mod feed;
mod indexes;
mod layout;
#[cfg(feature = "postgres")]
pub(crate) mod pg;
mod reads;
mod snapshot;

pub use batch::{Batch, Committed};
pub use feed::Change;
pub use indexes::IndexReport;
pub use reads::{Direction, IndexIter, Page, PageQuery};
pub use snapshot::Snapshot;

/// Settings for opening a [`Store`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// Directory of the store's files.
    pub data_dir: PathBuf,
    /// What an acknowledged write survives.
    #[serde(default)]
    pub durability: DurabilityMode,
    /// Size of the engine's page cache, in MiB.
    #[serde(default = "default_cache_mb")]
    pub cache_capacity_mb: u64,
    /// How long a write or read barrier may wait for its flush (not a setting: tests
    /// shorten it).
    #[serde(skip, default = "default_flush_deadline")]
    pub flush_deadline: std::time::Duration,
}

fn default_flush_deadline() -> std::time::Duration {
    DEFAULT_FLUSH_DEADLINE
}

fn default_cache_mb() -> u64 {
    128
}

impl StoreConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            durability: DurabilityMode::Process,
            cache_capacity_mb: default_cache_mb(),
            flush_deadline: DEFAULT_FLUSH_DEADLINE,
        }
    }
}

/// A callback of [`Store::watch`].
type Watcher = Box<dyn Fn(&[u8]) + Send + Sync>;

/// The handle to the store. Cheap to clone; every clone shares one engine and one flusher.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    db: sled::Db,
    records: sled::Tree,
    index: sled::Tree,
    counters: sled::Tree,
    uniques: sled::Tree,
    meta: sled::Tree,
    /// The change feed: `seq (u64 BE) -> Change`, see [`Store::changes`].
    feed: sled::Tree,
    /// Woken by every commit that wrote to the feed.
    feed_signal: tokio::sync::Notify,
    /// See [`Store::watch`].
    watchers: std::sync::RwLock<Vec<(&'static str, Watcher)>>,
    watching: std::sync::atomic::AtomicBool,
    flusher: Flusher,
    /// Commits share it; [`Store::snapshot`] takes it alone, for a consistent copy.
    gate: std::sync::RwLock<()>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.flusher.shutdown();
    }
}

impl Store {
    /// Opens (or creates) the store in `config.data_dir`.
    pub fn open(config: &StoreConfig) -> Result<Self, StorageError> {
        std::fs::create_dir_all(&config.data_dir).map_err(|e| {
            StorageError::Io(format!("cannot create {}: {e}", config.data_dir.display()))
        })?;
        let db = sled::Config::new()
            .path(&config.data_dir)
            .cache_capacity(config.cache_capacity_mb.saturating_mul(1024 * 1024))
            .mode(sled::Mode::HighThroughput)
            .open()?;
        Self::from_db(
            db,
            config.durability,
            Some(config.data_dir.clone()),
            config.flush_deadline,
        )
    }

    /// A store in a temporary directory that is removed when the store is dropped.
    pub fn temporary() -> Result<Self, StorageError> {
        let db = sled::Config::new().temporary(true).open()?;
        Self::from_db(db, DurabilityMode::Process, None, DEFAULT_FLUSH_DEADLINE)
    }

    fn from_db(
        db: sled::Db,
        mode: DurabilityMode,
        dir: Option<PathBuf>,
        deadline: std::time::Duration,
    ) -> Result<Self, StorageError> {
        let records = db.open_tree("records")?;
        let index = db.open_tree("index")?;
        let counters = db.open_tree("counters")?;
        let uniques = db.open_tree("uniques")?;
        let meta = db.open_tree("meta")?;
        let feed = db.open_tree("feed")?;
        let flusher = Flusher::start(db.clone(), mode, dir, deadline)?;
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                records,
                index,
                counters,
                uniques,
                meta,
                feed,
                feed_signal: tokio::sync::Notify::new(),
                watchers: std::sync::RwLock::new(Vec::new()),
                watching: std::sync::atomic::AtomicBool::new(false),
                flusher,
                gate: std::sync::RwLock::new(()),
            }),
        })
    }

    /// Resolves once every write up to sequence number `seq` is durable. Writes that were
    /// committed concurrently share one flush.
    pub fn durable(&self, seq: u64) -> DurableFuture {
        self.inner.flusher.wait(seq)
    }

    /// Calls `f` once every write up to `seq` is durable, with the error of the flush if it
    /// failed: at once if they already are, else on the flusher thread right after the
    /// flush, so an answer can be sent without another thread hop. `f` must not block.
    pub fn on_durable(&self, seq: u64, f: impl FnOnce(Result<(), StorageError>) + Send + 'static) {
        self.inner.flusher.on_durable(seq, Box::new(f))
    }

    /// Resolves once every write committed so far is durable. A reader awaits this before
    /// answering, so that no client is told about a write a crash could still undo.
    pub fn read_barrier(&self) -> DurableFuture {
        self.inner.flusher.wait(self.inner.flusher.last_committed())
    }

    /// The sequence number of the last write committed so far.
    pub fn last_committed(&self) -> u64 {
        self.inner.flusher.last_committed()
    }

    /// Whether every write up to `seq` is durable now (no waiting).
    pub fn is_durable(&self, seq: u64) -> bool {
        self.inner.flusher.is_durable(seq)
    }

    /// Whether the store acknowledges writes; after a failed flush it never does again in
    /// this process (see [`StoreHealth`]).
    pub fn health(&self) -> StoreHealth {
        self.inner.flusher.health()
    }

    /// How many flushes the flusher has run (for benchmarks and tests of group commit).
    pub fn flush_count(&self) -> u64 {
        self.flush_stats().flushes
    }

    /// Totals of the group-commit flusher since the store opened (for metrics).
    pub fn flush_stats(&self) -> crate::FlushStats {
        self.inner.flusher.stats()
    }

    /// Flushes everything now and waits for it (used on shutdown).
    pub fn flush_blocking(&self) -> Result<(), StorageError> {
        self.inner.db.flush()?;
        Ok(())
    }

    /// The directory the store lives in, if it is not temporary.
    pub fn exists(path: &Path) -> bool {
        path.join("db").exists()
    }
}

#[cfg(test)]
impl Store {
    pub(crate) fn test_hooks(&self) -> &crate::flusher::TestHooks {
        self.inner.flusher.test_hooks()
    }

    pub(crate) fn inner_records(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.inner
            .records
            .iter()
            .map(|kv| kv.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
            .collect()
    }

    pub(crate) fn inner_index_keys(&self) -> Vec<Vec<u8>> {
        self.inner
            .index
            .iter()
            .keys()
            .map(|k| k.unwrap().to_vec())
            .collect()
    }

    pub(crate) fn inner_remove_index(&self, key: &[u8]) {
        self.inner.index.remove(key).unwrap();
    }

    pub(crate) fn inner_insert_index(&self, key: Vec<u8>) {
        self.inner.index.insert(key, &[0u8; 8]).unwrap();
    }

    pub(crate) fn inner_set_counter(&self, key: Vec<u8>, value: u64) {
        self.inner
            .counters
            .insert(key, &value.to_be_bytes())
            .unwrap();
    }
}
