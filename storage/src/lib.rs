//! `tollgate-storage`: the embedded store behind Tollgate's own API.
//!
//! Everything the service persists goes through this crate: typed records in a versioned
//! envelope ([`Record`], [`codec`]), secondary indexes with per-tenant counters and unique
//! constraints written in the *same* transaction as the record ([`Batch`]), paginated range
//! reads over those indexes ([`PageQuery`]), and group-commit durability
//! ([`Store::durable`]), over two engines: sled (embedded, one node) and PostgreSQL (several
//! nodes). Callers ask capabilities (`Store::is_shared`), never which engine it is.

pub mod codec;
mod error;
mod flusher;
pub mod keys;
mod record;
mod store;
mod update;
mod url;

pub use error::StorageError;
pub use flusher::{DurabilityMode, DurableFuture, StoreHealth, DEFAULT_FLUSH_DEADLINE};
pub use record::{Expect, IndexEntry, Record, Stored, Tally, UniqueKey};
pub use store::pg::{DatabaseState, FAULT_LISTENER_DELAY};
pub use store::{
    bytes_under, Agg, Backend, Batch, Change, ChangeListener, Committed, CompactReport, Counted,
    Delta, Direction, Guard, Guarded, Holding, IndexIter, IndexReport, IngestEvent, JobLock, Page,
    PageQuery, Snapshot, SnapshotItem, SnapshotReader, Store, StoreConfig, WindowState,
};
pub use store::{AreaStats, GroupStats, StorageStats, TableSize};
pub use update::{UpdateError, UPDATE_ATTEMPTS};
pub use url::DatabaseUrl;

#[cfg(test)]
mod store_tests;
#[doc(hidden)]
pub mod testing;

/// Upper bounds of the flush batch-size buckets ([`FlushStats::sizes`]): writes answered
/// by one flush.
pub const FLUSH_SIZE_BOUNDS: [f64; 9] = [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];
/// Upper bounds of the flush duration buckets ([`FlushStats::durations`]), in seconds.
pub const FLUSH_SECONDS_BOUNDS: [f64; 9] = [
    0.000_25, 0.000_5, 0.001, 0.002, 0.005, 0.01, 0.025, 0.1, 1.0,
];

/// What the group-commit flusher did since the store opened ([`Store::flush_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FlushStats {
    /// Flushes run.
    pub flushes: u64,
    /// Waits for durability they answered (writes per flush = this / `flushes`).
    pub waiters_served: u64,
    /// Seconds spent flushing.
    pub flush_seconds: f64,
    /// Flushes by writes answered: `sizes[i]` counts those of at most
    /// `FLUSH_SIZE_BOUNDS[i]` (and more than the bound before); the last, more than all.
    pub sizes: [u64; 10],
    /// Flushes by duration, bucketed by [`FLUSH_SECONDS_BOUNDS`] the same way.
    pub durations: [u64; 10],
}

/// The bucket of `value` among ascending `bounds` (`bounds.len()`: above them all).
pub fn bucket_of(bounds: &[f64], value: f64) -> usize {
    bounds
        .iter()
        .position(|b| value <= *b)
        .unwrap_or(bounds.len())
}
