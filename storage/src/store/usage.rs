//! Usage events and their aggregates (issue 51, `polar-2026.md` §7): a path of its own,
//! beside records and batches, because ingestion is a burst of small writes that must be
//! exactly once and keep aggregates current without a per-organization hot row.
//!
//! The store knows bytes only; the application decides the keys (an organization's
//! events, their index keys, the aggregate rows of its meters' buckets, its customers'
//! meter windows) and what an event adds to each ([`Delta`]).
//!
//! * [`Store::ingest`]: events whose key is already stored (or repeated earlier in the
//!   call) are skipped; the deltas of the inserted ones are applied in the same
//!   transaction, so an aggregate never counts an event twice, even when two nodes
//!   receive it at once. It returns once durable.
//! * Aggregate rows ([`Agg`]) merge additively (`n`, `sum`) and by extremes (`min`, `max`).
//! * A customer meter's window ([`WindowState`]) accumulates until [`Store::close_window`]
//!   closes it and starts the next, atomically with respect to ingestion: every event
//!   lands in exactly one window.

use super::{Direction, Store};
use crate::StorageError;

/// An aggregate: how many values, their sum, least and greatest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agg {
    pub n: i64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
}

impl Agg {
    /// Nothing aggregated: `min` is +∞ and `max` −∞, so that merging takes the other.
    pub const EMPTY: Agg = Agg {
        n: 0,
        sum: 0.0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
    };

    /// One value.
    pub fn one(value: f64) -> Agg {
        Agg {
            n: 1,
            sum: value,
            min: value,
            max: value,
        }
    }

    /// Adds `other` in.
    pub fn merge(&mut self, other: &Agg) {
        self.n = self.n.saturating_add(other.n);
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

/// What an inserted event adds.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// Merge `agg` into the aggregate row `key` (created on first use).
    Add { key: Vec<u8>, agg: Agg },
    /// Record `member` in the set of the aggregate row `key`; if it was not there yet, add
    /// one to the row's `n` (a count of distinct values; `sum`, `min`, `max` untouched).
    Distinct { key: Vec<u8>, member: Vec<u8> },
    /// Into the current window of the customer-meter window `key` (created at window 0 on
    /// first use): merge `agg` into its consumed aggregate, add `credit` to its credited
    /// units and `rollover_credit` to its rolled-over credited units, and, given a
    /// `member`, record it in the window's set and add one to `distinct` if it was new.
    Window {
        key: Vec<u8>,
        agg: Agg,
        credit: i64,
        rollover_credit: i64,
        member: Option<Vec<u8>>,
    },
}

/// One event for [`Store::ingest`].
#[derive(Debug, Clone, PartialEq)]
pub struct IngestEvent {
    /// Its key: an event whose key is stored already is a duplicate.
    pub key: Vec<u8>,
    /// Its encoded record.
    pub value: Vec<u8>,
    /// Keys of the usage index written with it (value-less, for range reads), e.g. the
    /// organization's events by time.
    pub index: Vec<Vec<u8>>,
    /// Applied only if the event was inserted.
    pub deltas: Vec<Delta>,
}

/// A customer-meter window as stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowState {
    /// Its number: 0 for the first, one more at each close.
    pub window: u64,
    /// What was consumed in it.
    pub consumed: Agg,
    /// Distinct members recorded in it.
    pub distinct: i64,
    /// Credited units added in it (all credits, rolled over ones included).
    pub credited: i64,
    /// The part of `credited` that came from credits added as rolled over.
    pub rollover_credited: i64,
    /// When the row was created and last changed, in µs since the epoch (the callers'
    /// `now_us`).
    pub created_us: i64,
    pub modified_us: i64,
}

impl Store {
    /// Inserts the events whose key is not stored yet (the first of keys repeated in the
    /// call) with their index keys, and applies the deltas of those inserted, in one
    /// transaction; answers, in order, whether each was inserted. Returns once durable.
    /// Concurrent calls of one node are gathered into one transaction. `now_us` (µs since
    /// the epoch, the caller's clock) stamps the windows it creates or changes.
    pub async fn ingest(
        &self,
        events: Vec<IngestEvent>,
        now_us: i64,
    ) -> Result<Vec<bool>, StorageError> {
        let _ = (events, now_us);
        unimplemented!("usage store")
    }

    /// An event's stored value.
    pub async fn usage_event(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        let _ = key;
        unimplemented!("usage store")
    }

    /// The stored values of `keys`, in order (`None` where absent).
    pub async fn usage_events(
        &self,
        keys: &[Vec<u8>],
    ) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        let _ = keys;
        unimplemented!("usage store")
    }

    /// Usage index keys in `[start, end)`, in `direction`, at most `limit`.
    pub async fn usage_index(
        &self,
        start: &[u8],
        end: &[u8],
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        let _ = (start, end, direction, limit);
        unimplemented!("usage store")
    }

    /// The aggregate rows whose keys are in `[start, end)`, in key order.
    pub async fn aggregates(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<(Vec<u8>, Agg)>, StorageError> {
        let _ = (start, end);
        unimplemented!("usage store")
    }

    /// The members recorded by [`Delta::Distinct`] for the aggregate rows whose keys are
    /// in `[start, end)`: each as the row's key followed by the member, in that order.
    pub async fn members(&self, start: &[u8], end: &[u8]) -> Result<Vec<Vec<u8>>, StorageError> {
        let _ = (start, end);
        unimplemented!("usage store")
    }

    /// The windows whose keys are in `[start, end)`, in key order (their current state).
    pub async fn windows(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<(Vec<u8>, WindowState)>, StorageError> {
        let _ = (start, end);
        unimplemented!("usage store")
    }

    /// Closes the current window of `key` and starts the next (consumed, distinct and
    /// credits back to zero), atomically with respect to [`Store::ingest`]; answers the
    /// closed window's final state. Idempotent per `token`: a close with the token of the
    /// window's last close answers that close's state again and closes nothing. A window
    /// never written is closed as an empty window 0. Durable when it returns; `now_us`
    /// stamps the new window.
    pub async fn close_window(
        &self,
        key: &[u8],
        token: &[u8],
        now_us: i64,
    ) -> Result<WindowState, StorageError> {
        let _ = (key, token, now_us);
        unimplemented!("usage store")
    }
}
