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
//!
//! Engines: `sled/usage.rs` (seven trees, one writer at a time gathers the queued calls
//! into one transaction, then the group-commit flush) and `pg/usage.rs` (seven tables; a
//! task gathers a node's calls into transactions of up to [`GATHER_CAP`] events, and
//! nodes never count an event twice nor deadlock: see there). The stored layout, shared
//! by both and by snapshots, is below. Members of closed windows stay stored (nothing
//! reads them; a later sweep may purge the windows older than a row's current one).
//! Counts saturate on the embedded store and fail the transaction on PostgreSQL past
//! `i64::MAX`; a NaN in a value merges as each engine's min/max treat it (keep values
//! finite).

use super::{Direction, Engine, Store};
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

/// The generation an ingestion's deltas were computed for (see [`Store::ingest_guarded`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    /// The generation's key in the usage meta entries.
    pub key: Vec<u8>,
    /// The generation the caller read (0: never bumped).
    pub generation: u64,
}

/// What [`Store::ingest_guarded`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guarded {
    /// The guard held: whether each event was inserted, as [`Store::ingest`] answers.
    Inserted(Vec<bool>),
    /// The generation had moved on (to this one): nothing was written.
    Stale(u64),
}

/// Meta entries: keys and their bytes.
pub type MetaEntries = Vec<(Vec<u8>, Vec<u8>)>;

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

// ---- Stored layout, shared by the engines and by snapshots ------------------------------
//
// Both engines store the same keys; a snapshot (`store::snapshot`) holds the embedded
// engine's trees, which PostgreSQL's import decodes:
//
// * `usage_events`: event key → its value;
// * `usage_index`: index key → nothing;
// * `usage_aggs`: aggregate key → [`encode_agg`] (32 bytes);
// * `usage_members`: [`member_key`] (the aggregate key escaped, then the member) → nothing;
// * `usage_windows`: window key → [`encode_window_row`];
// * `usage_window_members`: [`window_member_key`] (the window key escaped, the window's
//   number big-endian, then the member) → nothing;
// * `usage_meta`: a key of the application's → its bytes (generations, [`encode_generation`],
//   and whatever [`Store::usage_cas`] writes, e.g. a meter's backfill progress).
//
// The escape ([`escape_key`]) keeps the byte order of the keys and makes them self-delimiting:
// the members of the aggregate rows in `[start, end)` are exactly the entries in
// `[escape(start), escape(end))`, in the order of their aggregate key, then of the member,
// whatever the lengths of the keys.

/// Bytes of an encoded [`Agg`]: `n`, then the bits of `sum`, `min`, `max`, big-endian.
pub(crate) const AGG_LEN: usize = 32;

/// An [`Agg`] as stored (infinities kept).
pub(crate) fn encode_agg(agg: &Agg) -> [u8; AGG_LEN] {
    let mut out = [0u8; AGG_LEN];
    out[..8].copy_from_slice(&agg.n.to_be_bytes());
    out[8..16].copy_from_slice(&agg.sum.to_bits().to_be_bytes());
    out[16..24].copy_from_slice(&agg.min.to_bits().to_be_bytes());
    out[24..].copy_from_slice(&agg.max.to_bits().to_be_bytes());
    out
}

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt(format!("usage store: {what}"))
}

fn word(bytes: &[u8], at: usize) -> Result<[u8; 8], StorageError> {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| corrupt("truncated value"))
}

/// Reads what [`encode_agg`] wrote.
pub(crate) fn decode_agg(bytes: &[u8]) -> Result<Agg, StorageError> {
    if bytes.len() != AGG_LEN {
        return Err(corrupt("an aggregate is not 32 bytes"));
    }
    Ok(Agg {
        n: i64::from_be_bytes(word(bytes, 0)?),
        sum: f64::from_bits(u64::from_be_bytes(word(bytes, 8)?)),
        min: f64::from_bits(u64::from_be_bytes(word(bytes, 16)?)),
        max: f64::from_bits(u64::from_be_bytes(word(bytes, 24)?)),
    })
}

/// A window's stored row: its current state and its last close (the token and the state
/// that close answered), which makes closes idempotent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WindowRow {
    pub(crate) state: WindowState,
    pub(crate) last_close: Option<(Vec<u8>, WindowState)>,
}

impl WindowState {
    /// Window `window`, nothing in it yet, stamped `now_us`.
    pub(crate) fn empty(window: u64, now_us: i64) -> WindowState {
        WindowState {
            window,
            consumed: Agg::EMPTY,
            distinct: 0,
            credited: 0,
            rollover_credited: 0,
            created_us: now_us,
            modified_us: now_us,
        }
    }
}

const WINDOW_ROW_VERSION: u8 = 1;
/// Bytes of an encoded [`WindowState`].
const WINDOW_STATE_LEN: usize = 8 + AGG_LEN + 5 * 8;

pub(crate) fn encode_state(out: &mut Vec<u8>, s: &WindowState) {
    out.extend_from_slice(&s.window.to_be_bytes());
    out.extend_from_slice(&encode_agg(&s.consumed));
    for v in [
        s.distinct,
        s.credited,
        s.rollover_credited,
        s.created_us,
        s.modified_us,
    ] {
        out.extend_from_slice(&v.to_be_bytes());
    }
}

pub(crate) fn decode_state(b: &[u8]) -> Result<WindowState, StorageError> {
    if b.len() != WINDOW_STATE_LEN {
        return Err(corrupt("a window state has the wrong length"));
    }
    let int = |at: usize| word(b, at).map(i64::from_be_bytes);
    Ok(WindowState {
        window: u64::from_be_bytes(word(b, 0)?),
        consumed: decode_agg(&b[8..8 + AGG_LEN])?,
        distinct: int(40)?,
        credited: int(48)?,
        rollover_credited: int(56)?,
        created_us: int(64)?,
        modified_us: int(72)?,
    })
}

/// A [`WindowRow`] as stored: a version byte, the state, then a presence byte and, after
/// a close, the token's length (u32 big-endian), the token and the closed state.
pub(crate) fn encode_window_row(row: &WindowRow) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + 2 * WINDOW_STATE_LEN + 4 + 32);
    out.push(WINDOW_ROW_VERSION);
    encode_state(&mut out, &row.state);
    match &row.last_close {
        None => out.push(0),
        Some((token, closed)) => {
            out.push(1);
            out.extend_from_slice(&u32::try_from(token.len()).unwrap_or(u32::MAX).to_be_bytes());
            out.extend_from_slice(token);
            encode_state(&mut out, closed);
        }
    }
    out
}

/// Reads what [`encode_window_row`] wrote.
pub(crate) fn decode_window_row(b: &[u8]) -> Result<WindowRow, StorageError> {
    if b.first() != Some(&WINDOW_ROW_VERSION) {
        return Err(corrupt("a window row is not as this build writes it"));
    }
    let state_end = 1 + WINDOW_STATE_LEN;
    let state = decode_state(
        b.get(1..state_end)
            .ok_or_else(|| corrupt("truncated window"))?,
    )?;
    let last_close = match b.get(state_end) {
        Some(0) if b.len() == state_end + 1 => None,
        Some(1) => {
            let len_at = state_end + 1;
            let len: [u8; 4] = b
                .get(len_at..len_at + 4)
                .and_then(|l| l.try_into().ok())
                .ok_or_else(|| corrupt("truncated window"))?;
            let token_at = len_at + 4;
            let closed_at = token_at + u32::from_be_bytes(len) as usize;
            let token = b
                .get(token_at..closed_at)
                .ok_or_else(|| corrupt("truncated window"))?;
            let closed = decode_state(b.get(closed_at..).unwrap_or_default())?;
            Some((token.to_vec(), closed))
        }
        _ => return Err(corrupt("a window row has the wrong length")),
    };
    Ok(WindowRow { state, last_close })
}

/// Appends `key` escaped: every 0x00 byte as 0x00 0xFF, then 0x00 0x01. The escaped keys
/// sort as the keys do, and none is a prefix of another.
pub(crate) fn escape_key(out: &mut Vec<u8>, key: &[u8]) {
    for &b in key {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 1]);
}

/// Splits what [`escape_key`] wrote off the front of `bytes`: the key and the rest.
pub(crate) fn unescape_key(bytes: &[u8]) -> Result<(Vec<u8>, &[u8]), StorageError> {
    let mut key = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b != 0 {
            key.push(b);
            i += 1;
            continue;
        }
        match bytes.get(i + 1) {
            Some(0xFF) => {
                key.push(0);
                i += 2;
            }
            Some(1) => return Ok((key, &bytes[i + 2..])),
            _ => break,
        }
    }
    Err(corrupt("an escaped key has no end"))
}

/// The stored key of `member` of the aggregate row `agg_key` (see the layout above).
pub(crate) fn member_key(agg_key: &[u8], member: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(agg_key.len() + member.len() + 4);
    escape_key(&mut out, agg_key);
    out.extend_from_slice(member);
    out
}

/// The stored key of `member` of window `window` of the window row `key`.
pub(crate) fn window_member_key(key: &[u8], window: u64, member: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + member.len() + 12);
    escape_key(&mut out, key);
    out.extend_from_slice(&window.to_be_bytes());
    out.extend_from_slice(member);
    out
}

/// A generation as stored in `usage_meta`: 8 bytes big-endian.
pub(crate) fn encode_generation(generation: u64) -> Vec<u8> {
    generation.to_be_bytes().to_vec()
}

/// Reads what [`encode_generation`] wrote (an absent entry is generation 0).
pub(crate) fn decode_generation(bytes: Option<&[u8]>) -> Result<u64, StorageError> {
    match bytes {
        None => Ok(0),
        Some(b) => b
            .try_into()
            .map(u64::from_be_bytes)
            .map_err(|_| corrupt("a generation is not 8 bytes")),
    }
}

/// What a gathered transaction does for one call: an ingest, a close, a generation's bump
/// or a compare-and-swap of a meta entry.
#[derive(Debug)]
pub(crate) enum Work {
    Ingest {
        events: Vec<IngestEvent>,
        now_us: i64,
        guard: Option<Guard>,
    },
    Close {
        key: Vec<u8>,
        token: Vec<u8>,
        now_us: i64,
    },
    Bump {
        key: Vec<u8>,
        puts: Vec<(Vec<u8>, Vec<u8>)>,
    },
    Cas {
        key: Vec<u8>,
        expected: Option<Vec<u8>>,
        new: Vec<u8>,
        deltas: Vec<Delta>,
        now_us: i64,
    },
}

/// What one call of a gathered transaction answers.
#[derive(Debug)]
pub(crate) enum Answer {
    Ingest(Vec<bool>),
    /// An ingest whose guard failed: the current generation.
    Stale(u64),
    Close(WindowState),
    /// The bumped generation.
    Bumped(u64),
    /// Whether the compare-and-swap wrote.
    Cas(bool),
}

/// Events at most in one gathered transaction (a call larger than it goes alone).
pub(crate) const GATHER_CAP: usize = 5_000;

impl Work {
    /// Its weight against [`GATHER_CAP`].
    pub(crate) fn weight(&self) -> usize {
        match self {
            Work::Ingest { events, .. } => events.len().max(1),
            Work::Cas { deltas, .. } => deltas.len().max(1),
            Work::Close { .. } | Work::Bump { .. } => 1,
        }
    }
}

fn unexpected() -> StorageError {
    StorageError::Io("usage store: an answer of the wrong kind".into())
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
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let answer = self
            .usage_work(Work::Ingest {
                events,
                now_us,
                guard: None,
            })
            .await?;
        match answer {
            Answer::Ingest(inserted) => Ok(inserted),
            _ => Err(unexpected()),
        }
    }

    /// [`Store::ingest`] under a generation: in the same transaction, checks that the
    /// generation at `guard.key` is still `guard.generation`; if it moved on, writes
    /// nothing and answers [`Guarded::Stale`] with the current one. A bump
    /// ([`Store::bump_generation`]) and a guarded ingest of the same key are ordered: an
    /// ingest that commits after a bump was computed for the bumped generation (the
    /// application's meters: every event committed after a meter went live counts in it).
    pub async fn ingest_guarded(
        &self,
        events: Vec<IngestEvent>,
        now_us: i64,
        guard: Guard,
    ) -> Result<Guarded, StorageError> {
        if events.is_empty() {
            return Ok(Guarded::Inserted(Vec::new()));
        }
        let work = Work::Ingest {
            events,
            now_us,
            guard: Some(guard),
        };
        match self.usage_work(work).await? {
            Answer::Ingest(inserted) => Ok(Guarded::Inserted(inserted)),
            Answer::Stale(current) => Ok(Guarded::Stale(current)),
            _ => Err(unexpected()),
        }
    }

    /// Adds one to the generation at `key` and writes the meta entries `puts`, in one
    /// transaction ordered with the guarded ingests (see [`Store::ingest_guarded`]);
    /// answers the new generation. Durable when it returns.
    pub async fn bump_generation(
        &self,
        key: &[u8],
        puts: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> Result<u64, StorageError> {
        let work = Work::Bump {
            key: key.to_vec(),
            puts,
        };
        match self.usage_work(work).await? {
            Answer::Bumped(g) => Ok(g),
            _ => Err(unexpected()),
        }
    }

    /// The generation at `key` (0 if never bumped).
    pub async fn generation(&self, key: &[u8]) -> Result<u64, StorageError> {
        let got = self.usage_meta(&[key.to_vec()]).await?.pop().flatten();
        decode_generation(got.as_deref())
    }

    /// The meta entries `keys`, in order (`None` where absent).
    pub async fn usage_meta(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.usage_meta(keys),
            Engine::Postgres(pg) => Box::pin(pg.usage_meta(keys)).await,
        }
    }

    /// The meta entries whose keys are in `[start, end)`, in key order.
    pub async fn usage_meta_range(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<MetaEntries, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.usage_meta_range(start, end),
            Engine::Postgres(pg) => Box::pin(pg.usage_meta_range(start, end)).await,
        }
    }

    /// If the meta entry `key` holds `expected` (`None`: absent), writes `new` there and
    /// applies `deltas` (as an inserted event's), in one transaction; answers whether it
    /// did. Two calls expecting the same value never both write: a job that advances its
    /// progress this way applies each step's deltas once, whoever runs it and however
    /// often it is interrupted. Durable when it returns.
    pub async fn usage_cas(
        &self,
        key: &[u8],
        expected: Option<&[u8]>,
        new: Vec<u8>,
        deltas: Vec<Delta>,
        now_us: i64,
    ) -> Result<bool, StorageError> {
        let work = Work::Cas {
            key: key.to_vec(),
            expected: expected.map(<[u8]>::to_vec),
            new,
            deltas,
            now_us,
        };
        match self.usage_work(work).await? {
            Answer::Cas(wrote) => Ok(wrote),
            _ => Err(unexpected()),
        }
    }

    /// An event's stored value.
    pub async fn usage_event(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.usage_events(&[key.to_vec()]).await?.pop().flatten())
    }

    /// The stored values of `keys`, in order (`None` where absent).
    pub async fn usage_events(
        &self,
        keys: &[Vec<u8>],
    ) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.usage_events(keys),
            Engine::Postgres(pg) => Box::pin(pg.usage_events(keys)).await,
        }
    }

    /// Usage index keys in `[start, end)`, in `direction`, at most `limit`.
    pub async fn usage_index(
        &self,
        start: &[u8],
        end: &[u8],
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.usage_index(start, end, direction, limit),
            Engine::Postgres(pg) => Box::pin(pg.usage_index(start, end, direction, limit)).await,
        }
    }

    /// The aggregate rows whose keys are in `[start, end)`, in key order.
    pub async fn aggregates(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<(Vec<u8>, Agg)>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.aggregates(start, end),
            Engine::Postgres(pg) => Box::pin(pg.aggregates(start, end)).await,
        }
    }

    /// The members recorded by [`Delta::Distinct`] for the aggregate rows whose keys are
    /// in `[start, end)`: each as the row's key followed by the member, in that order
    /// (by aggregate key, then member; exact whatever the keys' lengths).
    pub async fn members(&self, start: &[u8], end: &[u8]) -> Result<Vec<Vec<u8>>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.members(start, end),
            Engine::Postgres(pg) => Box::pin(pg.members(start, end)).await,
        }
    }

    /// The windows whose keys are in `[start, end)`, in key order (their current state).
    pub async fn windows(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<(Vec<u8>, WindowState)>, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.windows(start, end),
            Engine::Postgres(pg) => Box::pin(pg.windows(start, end)).await,
        }
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
        let work = Work::Close {
            key: key.to_vec(),
            token: token.to_vec(),
            now_us,
        };
        match self.usage_work(work).await? {
            Answer::Close(closed) => Ok(closed),
            _ => Err(unexpected()),
        }
    }

    /// Runs `work` in the engine's next gathered transaction; returns once it is durable.
    async fn usage_work(&self, work: Work) -> Result<Answer, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => {
                let (answer, seq) = e.usage_submit(work).await?;
                e.flusher().wait(seq).await?;
                Ok(answer)
            }
            Engine::Postgres(pg) => Box::pin(pg.usage_submit(work)).await,
        }
    }
}

#[cfg(test)]
#[path = "usage_tests.rs"]
pub(crate) mod tests;
