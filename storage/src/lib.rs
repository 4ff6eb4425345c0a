//! `tollgate-storage`: the embedded store behind Tollgate's own API.
//!
//! Everything the service persists goes through this crate: typed records in a versioned
//! envelope ([`Record`], [`codec`]), secondary indexes with per-tenant counters and unique
//! constraints written in the *same* transaction as the record ([`Batch`]), paginated range
//! reads over those indexes ([`PageQuery`]), and group-commit durability
//! ([`Store::durable`]). sled is an implementation detail: no sled type appears in this API,
//! so another transactional key-value engine can replace it.

pub mod codec;
mod error;
mod flusher;
pub mod keys;
mod record;
mod store;

pub use error::StorageError;
pub use flusher::{DurabilityMode, DurableFuture, StoreHealth, DEFAULT_FLUSH_DEADLINE};
pub use record::{Expect, IndexEntry, Record, Stored, UniqueKey};
pub use store::{
    Batch, Change, Committed, Direction, IndexIter, IndexReport, Page, PageQuery, Snapshot, Store,
    StoreConfig,
};

#[cfg(test)]
mod store_tests;

/// What the group-commit flusher did since the store opened ([`Store::flush_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FlushStats {
    /// Flushes run.
    pub flushes: u64,
    /// Waits for durability they answered (writes per flush = this / `flushes`).
    pub waiters_served: u64,
    /// Seconds spent flushing.
    pub flush_seconds: f64,
}
