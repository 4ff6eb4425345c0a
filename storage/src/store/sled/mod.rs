//! The embedded engine: sled's trees in the data directory, one node, nothing to install.
//! Its commit is visible at once and durable after the group-commit flush that covers it
//! ([`crate::flusher`]); reads are synchronous, done inside the first poll of
//! [`crate::Store`]'s futures.
//!
//! One job per file: this one opens the store (its trees, the feed's numbering base, the
//! flusher); `write` commits batches (a lone compare-and-swap, or the operations' plans in
//! one sled transaction), `read` answers reads (records, unique keys, counts, index pages
//! merged over tenants), `feed` reads the change feed, `indexes` verifies and rebuilds the
//! derived keys, `snapshot` copies the whole store and restores a copy, `tally` keeps the
//! counters of tallied records apart from them (the `tallies` tree), `usage` keeps usage
//! events, their aggregates and windows (seven `usage_*` trees, one writer at a time).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::flusher::{DurabilityMode, Flusher, DEFAULT_FLUSH_DEADLINE};
use crate::store::StoreConfig;
use crate::StorageError;

mod compact;
#[cfg(test)]
#[path = "compact_tests.rs"]
mod compact_tests;
mod feed;
mod indexes;
mod marks;
mod read;
mod snapshot;
mod stats;
mod tally;
#[cfg(test)]
#[path = "tally_tests.rs"]
mod tally_tests;
mod usage;
#[cfg(test)]
#[path = "usage_tests.rs"]
mod usage_tests;
mod write;

pub use compact::CompactReport;
pub(crate) use read::SledIndexIter;

/// How long [`crate::Store::open`] waits for the data directory's lock before it gives up.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

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
    /// The change feed: `seq (u64 BE) -> Change`, see [`crate::Store::changes`].
    feed: sled::Tree,
    /// The counters of tallied records, under their records' keys (`tally`).
    tallies: sled::Tree,
    /// The usage store's trees and its writer's queue (`usage`).
    usage: usage::Usage,
    flusher: Flusher,
    /// Commits share it; [`crate::Store::snapshot`] takes it alone, for a consistent copy.
    gate: std::sync::RwLock<()>,
    /// What new feed numbers start from (sled's id generator is added to it): past the
    /// highest entry a restore copied, kept in `meta` under [`FEED_BASE`].
    feed_base: std::sync::atomic::AtomicU64,
    /// Where deep pages of one-tenant indexes start (`marks`).
    marks: marks::Marks,
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
        let tallies = db.open_tree("tallies")?;
        let usage = usage::Usage::open(&db)?;
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
                tallies,
                usage,
                flusher,
                gate: std::sync::RwLock::new(()),
                feed_base: std::sync::atomic::AtomicU64::new(feed_base),
                marks: marks::Marks::default(),
            }),
        })
    }

    /// Opens (or creates) the store in `config.data_dir` (see [`crate::Store::open`]).
    pub(super) fn open(config: &StoreConfig) -> Result<Self, StorageError> {
        std::fs::create_dir_all(&config.data_dir).map_err(|e| {
            StorageError::Io(format!("cannot create {}: {e}", config.data_dir.display()))
        })?;
        compact::recover(&config.data_dir)?;
        // A store keeps the compression it was created with (sled refuses another):
        // `tollgate compact` rewrites it with the configured one.
        let compression = match compact::persisted(&config.data_dir) {
            Some((existing, _)) => {
                if existing != config.compression {
                    tracing::warn!(
                        data_dir = %config.data_dir.display(),
                        existing,
                        configured = config.compression,
                        "the store keeps the compression it was created with; \
                         `tollgate compact` (the service stopped) rewrites it as configured"
                    );
                }
                existing
            }
            None => config.compression,
        };
        let sled_config = Self::sled_config(config, &config.data_dir, compression);
        // sled's background threads can hold the directory's file lock for a moment after
        // a store of this process was dropped: wait for them a little, so that reopening
        // in place works, and only then say the directory is someone else's.
        let give_up = std::time::Instant::now() + LOCK_WAIT;
        let db = loop {
            match sled_config.open() {
                // sled reports the lock as `ErrorKind::Other` with this text.
                Err(sled::Error::Io(e)) if e.to_string().contains("could not acquire lock") => {
                    if std::time::Instant::now() >= give_up {
                        return Err(StorageError::Io(format!(
                            "{} is in use by another process (is another Tollgate running \
                             on this data directory?): {e}",
                            config.data_dir.display()
                        )));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => break other?,
            }
        };
        Self::from_db(
            db,
            config.durability,
            Some(config.data_dir.clone()),
            config.flush_deadline,
        )
    }

    /// sled's settings for a store in `path` (docs/operating.md, "The embedded store's
    /// settings"): the page cache, and zstd compression at the configured level. The
    /// segment size stays sled's (512 KiB: sled calls other sizes testing-only); sled
    /// 0.34 ignores its `mode`, so none is set.
    fn sled_config(config: &StoreConfig, path: &Path, compression: bool) -> sled::Config {
        sled::Config::new()
            .path(path)
            .cache_capacity(config.cache_capacity_mb.saturating_mul(1024 * 1024))
            .use_compression(compression)
            .compression_factor(config.compression_level.clamp(1, 22))
    }

    /// A store in a temporary directory, removed when it is dropped (see
    /// [`crate::Store::temporary`]).
    pub(super) fn temporary() -> Result<Self, StorageError> {
        let db = sled::Config::new().temporary(true).open()?;
        Self::from_db(db, DurabilityMode::Process, None, DEFAULT_FLUSH_DEADLINE)
    }

    /// Whether a store exists in this directory.
    pub(super) fn exists(path: &Path) -> bool {
        path.join("db").exists()
    }

    /// The group-commit flusher: what durability waits, health and statistics ask.
    pub(super) fn flusher(&self) -> &Flusher {
        &self.inner.flusher
    }

    /// Flushes everything now and waits for it.
    pub(super) fn flush(&self) -> Result<(), StorageError> {
        self.inner.db.flush()?;
        Ok(())
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
        self.inner.marks.clear();
    }

    pub(crate) fn inner_insert_index(&self, key: Vec<u8>) {
        self.inner.index.insert(key, &[0u8; 8]).unwrap();
        self.inner.marks.clear();
    }

    /// The tallies entry under a record key, decoded.
    pub(crate) fn inner_tally(&self, key: &[u8]) -> Option<crate::store::tally::Entry> {
        self.inner
            .tallies
            .get(key)
            .unwrap()
            .map(|v| crate::store::tally::decode_entry(&v).unwrap())
    }

    pub(crate) fn inner_remove_record(&self, key: &[u8]) {
        self.inner.records.remove(key).unwrap();
    }

    pub(crate) fn inner_set_counter(&self, key: Vec<u8>, value: u64) {
        self.inner
            .counters
            .insert(key, &value.to_be_bytes())
            .unwrap();
    }
}
