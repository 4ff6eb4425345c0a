//! The store: its configuration, opening it over sled's trees, and durability (waiting for
//! the group-commit flush that covers a write, read barriers, health).
//!
//! The rest of its API lives in the submodules, one responsibility each: `batch` (atomic
//! writes: records, index entries, counters and unique keys in one transaction), `reads`
//! (records, unique-key lookups, counts and paginated index reads), `indexes` (verifying
//! and rebuilding the derived keys), `snapshot` (a consistent copy of the whole store, its
//! file format, restore) and `layout` (how records, index entries, counters and unique keys
//! are laid out as keys and values).

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;

use crate::flusher::{DurabilityMode, Flusher, DEFAULT_FLUSH_DEADLINE};
use crate::StorageError;

mod api;
mod batch;
mod feed;
mod indexes;
mod layout;
pub(crate) mod pg;
mod reads;
mod snapshot;

pub use api::{Holding, IndexIter, JobLock};
pub use batch::{Batch, Committed};
pub use feed::Change;
pub use indexes::IndexReport;
pub use reads::{Direction, Page, PageQuery};
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
    /// Which engine holds the data ([`Store::connect`]); the embedded one by default.
    #[serde(skip)]
    pub backend: Backend,
}

/// The engine a [`StoreConfig`] names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Backend {
    /// sled in `data_dir`: one node, nothing to install.
    #[default]
    Embedded,
    /// One schema of a PostgreSQL database, shared by every node configured alike.
    Postgres {
        /// `postgres://user:password@host:port/database`.
        url: String,
        schema: String,
        pool_size: usize,
    },
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
            backend: Backend::Embedded,
        }
    }
}

/// A callback of [`Store::watch`].
type Watcher = Box<dyn Fn(&[u8]) + Send + Sync>;

/// The handle to the store. Cheap to clone; every clone shares one engine.
///
/// Two engines behind one API (`design/scale-out.md` 4.2): the embedded one (sled, one
/// node, the default) and PostgreSQL (several nodes on one database). Reads and commits
/// are async; on the embedded engine their futures are ready at the first poll (the work
/// is done synchronously inside it), so its path costs what it cost before. The embedded
/// engine's commit is visible at once and durable after a group-commit flush
/// ([`Store::durable`]); PostgreSQL's is durable when it returns, and the durability calls
/// answer at once there.
#[derive(Clone)]
pub struct Store {
    engine: Engine,
    common: Arc<Common>,
}

#[derive(Clone)]
enum Engine {
    Embedded(Embedded),
    Postgres(Arc<pg::PgEngine>),
}

/// What both engines share in this process: commit notifications.
struct Common {
    /// Woken by every commit of this process that wrote to the feed.
    feed_signal: tokio::sync::Notify,
    /// See [`Store::watch`].
    watchers: std::sync::RwLock<Vec<(&'static str, Watcher)>>,
    watching: std::sync::atomic::AtomicBool,
}

impl Common {
    fn new() -> Arc<Self> {
        Arc::new(Common {
            feed_signal: tokio::sync::Notify::new(),
            watchers: std::sync::RwLock::new(Vec::new()),
            watching: std::sync::atomic::AtomicBool::new(false),
        })
    }
}

/// The embedded engine: sled's trees and the group-commit flusher.
#[derive(Clone)]
pub(crate) struct Embedded {
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
    flusher: Flusher,
    /// Commits share it; [`Store::snapshot`] takes it alone, for a consistent copy.
    gate: std::sync::RwLock<()>,
    /// What new feed numbers start from (sled's id generator is added to it): past the
    /// highest entry a restore copied, kept in `meta` under [`FEED_BASE`].
    feed_base: std::sync::atomic::AtomicU64,
}

/// The `meta` key of [`Inner::feed_base`].
const FEED_BASE: &[u8] = b"feed_base";

impl Drop for Inner {
    fn drop(&mut self) {
        self.flusher.shutdown();
    }
}

impl Embedded {
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
        let feed_base = match meta.get(FEED_BASE)? {
            Some(v) => u64::from_be_bytes(
                v.as_ref()
                    .try_into()
                    .map_err(|_| StorageError::Corrupt("feed_base is not 8 bytes".into()))?,
            ),
            None => 0,
        };
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
                flusher,
                gate: std::sync::RwLock::new(()),
                feed_base: std::sync::atomic::AtomicU64::new(feed_base),
            }),
        })
    }
}

#[cfg(test)]
impl Embedded {
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
