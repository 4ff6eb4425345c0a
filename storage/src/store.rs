//! The store: its configuration ([`StoreConfig`], [`Backend`]), the [`Store`] handle and
//! the engine it holds. The store names capabilities; each engine is an adapter behind it.
//!
//! Submodules, one job each:
//! - `api`: the store's public methods, each dispatching on the engine (opening, commits,
//!   durability, reads, the change feed, checks, copies, locks);
//! - the engine-neutral parts both engines share: `batch` (atomic writes: a [`Batch`] of
//!   operations, each turned into a plan of the record, index entries, counters, unique
//!   keys and feed entry to write), `reads` (the page types of index reads), `feed` (the
//!   change feed's entries), `indexes` (the derived keys records must have, and the report
//!   comparing them with the stored ones), `snapshot` (a copy of the whole store and its
//!   stable file format), `tally` (named counters kept apart from their records, on
//!   every engine), `listener` (what a node has heard of other nodes' changes,
//!   [`ChangeListener`]; PostgreSQL drives it) and `layout` (how records, index entries, counters and unique keys
//!   are laid out as keys and values);
//! - the adapters, one folder each: `sled` (the embedded engine: sled's trees and the
//!   group-commit flusher, in `sled/{write,read,feed,indexes,snapshot,tally}.rs`) and `pg`
//!   (PostgreSQL, several nodes on one database, in `pg/{write,read,admin}.rs`).

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;

use crate::flusher::{DurabilityMode, DEFAULT_FLUSH_DEADLINE};

mod api;
mod batch;
mod feed;
mod indexes;
mod layout;
mod listener;
pub(crate) mod pg;
mod reads;
mod sled;
mod snapshot;
pub(crate) mod stats;
mod tally;
#[cfg(test)]
mod tally_fixture;
mod usage;

use self::sled::Embedded;

pub use self::sled::CompactReport;
pub use api::{Holding, IndexIter, JobLock};
pub use batch::{Batch, Committed};
pub use feed::Change;
pub use indexes::IndexReport;
pub use listener::ChangeListener;
pub use reads::{Direction, Page, PageQuery};
pub use snapshot::{Snapshot, SnapshotItem, SnapshotReader};
pub use stats::{bytes_under, AreaStats, GroupStats, StorageStats, TableSize};
pub use tally::Counted;
pub use usage::{Agg, Delta, Guard, Guarded, IngestEvent, WindowState};

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
    /// Whether a new embedded store compresses what it writes (zstd). An existing store
    /// keeps the setting it was created with until `tollgate compact` rewrites it.
    #[serde(default = "default_compression")]
    pub compression: bool,
    /// zstd's level for a compressed embedded store (1 fastest … 22 smallest).
    #[serde(default = "default_compression_level")]
    pub compression_level: i32,
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
        /// `postgres://user:password@host:port/database` (printed without the password).
        url: crate::DatabaseUrl,
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

fn default_compression() -> bool {
    true
}

fn default_compression_level() -> i32 {
    3
}

impl StoreConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            durability: DurabilityMode::Process,
            cache_capacity_mb: default_cache_mb(),
            compression: default_compression(),
            compression_level: default_compression_level(),
            flush_deadline: DEFAULT_FLUSH_DEADLINE,
            backend: Backend::Embedded,
        }
    }
}

/// A callback of [`Store::watch`].
type Watcher = Box<dyn Fn(&[u8]) + Send + Sync>;

/// The handle to the store. Cheap to clone; every clone shares one engine.
///
/// Two engines behind one API (`docs/scale-out.md` 4.2): the embedded one (sled, one
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
