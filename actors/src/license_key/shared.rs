//! Validation on a shared store (PostgreSQL, several nodes), without the key's actor.
//!
//! There the key's counters live in a tally row of their own (`Record::TALLIED`), so a
//! validation never rewrites the key:
//!
//! * the node keeps each key it validates in memory ([`SharedKeys`]), as read from the
//!   store with its revision, and drops it when its listener hears that another write
//!   changed it (`tollgate_storage::ChangeListener`);
//! * a **plain validation in batched mode** decides on that copy and only counts, in
//!   memory; a node-wide flusher adds every key's count to its row as one additive delta
//!   per interval ([`SharedKeys::flush`]), so nodes never conflict over counters. The copy
//!   is used only while the listener is provably caught up (the store's trust window);
//!   otherwise the validation first compares the stored revision (one read);
//! * an **increment, or any validation in strict mode**, is one conditional statement
//!   ([`Store::count_hit`]): it counts only if the key is still at the revision the
//!   decision was made on and the usage stays within the limit, durable before the reply.
//!
//! * **through an outage** (no connection to the database can be made: the store says it
//!   is unreachable, not merely that one connection broke; `outage_window` > 0), a
//!   plain validation in batched mode that cannot check the stored revision is answered
//!   from a copy the listener last proved current at most `outage_window` ago (the copy was
//!   confirmed in the epoch of the listener's last ping heard back, and no change of the
//!   key was heard since), counted in memory as usual and written by the first flush after
//!   the database is back. Strict mode, increments and every write still need the
//!   database.
//!
//! Why a revoke is seen at once, on every node: the revoking node answers only a trust
//! window after its commit; a node answers from its copy only if its listener heard a ping
//! sent less than a window ago, which PostgreSQL delivers after every change committed
//! before it; a copy read before the change was heard is not trusted (its stamp, below).
//! Everything else checks the store. `docs/several-nodes.md` says it in full.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use dashmap::DashMap;
use tollgate_storage::{ChangeListener, Counted, Record, StorageError, Store, Tally};

use super::decide;
use super::model::{Activation, LicenseKey, LicenseKeyError, ValidateKey};
use crate::domain::ids::LicenseKeyId;
use crate::error::ActorError;

/// A validation answered here, with the counters it shows.
#[derive(Debug, Clone)]
pub struct SharedValidated {
    pub key: Arc<LicenseKey>,
    pub activation: Option<Activation>,
    pub validations: i64,
    pub last_validated_at: DateTime<Utc>,
    pub usage: i64,
}

/// How validations were answered, for the metrics.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PathCounts {
    /// From the node's copy, trusted through the listener.
    pub memory: u64,
    /// From the node's copy after comparing the stored revision, or a fresh read.
    pub checked: u64,
    /// Through the conditional statement (increments, strict mode).
    pub counted: u64,
    /// From the node's copy while the database could not be reached (the outage window).
    pub outage: u64,
}

/// A key as this node last read it.
struct Cached {
    key: Arc<LicenseKey>,
    rev: u64,
    /// `(epoch << 40) | seq` of the listener when the read that confirmed `rev` began
    /// (see [`SharedKeys::trusted`]); only ever moves forward.
    stamp: AtomicU64,
    /// The stored counters as last seen (a read, a flush, a counted validation).
    validations: AtomicI64,
    usage: AtomicI64,
    /// Seconds since the set's start, of the last validation (idle entries are dropped).
    used: AtomicU64,
}

const SEQ_BITS: u32 = 40;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

fn stamp_of(epoch: u64, seq: u64) -> u64 {
    (epoch << SEQ_BITS) | (seq & SEQ_MASK)
}

/// Validations counted here and not yet added to the store.
struct Pending {
    n: AtomicI64,
    /// The latest of their times, in µs since the epoch (`i64::MIN`: none).
    last: AtomicI64,
    /// Taken by a flush that has not finished yet (still shown in answers).
    flushing: AtomicI64,
}

/// One node's keys on a shared store (see the module's documentation).
pub struct SharedKeys {
    store: Store,
    watch: Option<Arc<ChangeListener>>,
    /// Strict mode (`stats_flush_ms = 0`): every validation is counted durably.
    strict: bool,
    /// How long after the listener last caught up its copies may answer while the store
    /// cannot be reached (`storage.outage_window_secs`; zero: never).
    outage_window: std::time::Duration,
    idle_secs: u64,
    started: Instant,
    keys: DashMap<LicenseKeyId, Arc<Cached>>,
    /// The listener's sequence number of the last change heard, per key.
    notified: Arc<DashMap<LicenseKeyId, u64>>,
    pending: DashMap<LicenseKeyId, Pending>,
    /// `(when, seq)` samples, to forget old notices.
    seen: std::sync::Mutex<std::collections::VecDeque<(Instant, u64)>>,
    memory: AtomicU64,
    checked: AtomicU64,
    counted: AtomicU64,
    outage: AtomicU64,
}

/// How long a change heard is remembered: longer than any read can take (statement
/// timeout plus the pool's wait), so a read begun before it cannot be trusted after.
const NOTICE_KEPT: std::time::Duration = std::time::Duration::from_secs(120);

/// Attempts of a counted validation whose key changed under it before it answers 503.
const ATTEMPTS: usize = 4;

impl SharedKeys {
    /// The node's set over `store`; `watch`: its listener (`None`: every validation
    /// checks the stored revision); `outage_window`: how long copies may answer through an
    /// outage (see the module's documentation).
    pub fn new(
        store: Store,
        watch: Option<Arc<ChangeListener>>,
        strict: bool,
        idle_secs: u64,
        outage_window: std::time::Duration,
    ) -> Arc<Self> {
        let keys = Arc::new(Self {
            store,
            watch,
            strict,
            outage_window,
            idle_secs: idle_secs.max(1),
            started: Instant::now(),
            keys: DashMap::new(),
            notified: Arc::new(DashMap::new()),
            pending: DashMap::new(),
            seen: Default::default(),
            memory: AtomicU64::new(0),
            checked: AtomicU64::new(0),
            counted: AtomicU64::new(0),
            outage: AtomicU64::new(0),
        });
        if let Some(watch) = &keys.watch {
            let weak = Arc::downgrade(&keys);
            watch.subscribe(move |collection, id, seq| {
                if collection != <LicenseKey as Record>::COLLECTION {
                    return;
                }
                let (Some(keys), Ok(id)) = (weak.upgrade(), uuid::Uuid::from_slice(id)) else {
                    return;
                };
                keys.heard(LicenseKeyId(id), seq);
            });
        }
        keys
    }

    /// Whether validations count durably one by one (strict mode).
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// How validations were answered so far.
    pub fn paths(&self) -> PathCounts {
        PathCounts {
            memory: self.memory.load(Ordering::Relaxed),
            checked: self.checked.load(Ordering::Relaxed),
            counted: self.counted.load(Ordering::Relaxed),
            outage: self.outage.load(Ordering::Relaxed),
        }
    }

    /// How long copies may answer through an outage (`storage.outage_window_secs`).
    pub fn outage_window(&self) -> std::time::Duration {
        self.outage_window
    }

    /// While the store cannot be reached: how much longer copies may answer (`None`: not
    /// at all, no copy was ever proved current or the window is off).
    pub fn outage_left(&self) -> Option<std::time::Duration> {
        if self.outage_window.is_zero() || self.strict {
            return None;
        }
        let (_, age) = self.watch.as_ref()?.last_caught_up()?;
        self.outage_window.checked_sub(age).filter(|d| !d.is_zero())
    }

    /// Whether the listener is connected (`None`: there is none).
    pub fn listening(&self) -> Option<bool> {
        self.watch.as_ref().map(|w| w.connected())
    }

    /// How many times the listener lost its connection.
    pub fn listener_reconnects(&self) -> u64 {
        self.watch.as_ref().map_or(0, |w| w.reconnects())
    }

    /// Another write changed key `id` (heard as change `seq`).
    fn heard(&self, id: LicenseKeyId, seq: u64) {
        self.notified.insert(id, seq);
        self.keys.remove(&id);
    }

    /// The listener's `(epoch, seq)` now, before a read; an odd epoch (never trusted)
    /// without a listener.
    fn stamp_now(&self) -> u64 {
        match &self.watch {
            Some(w) => stamp_of(w.epoch(), w.seq()),
            None => stamp_of(1, 0),
        }
    }

    /// Whether `c` may answer without the store: the listener is caught up (within the
    /// window) in the epoch `c` was confirmed in, and has heard no change of the key since.
    fn trusted(&self, id: LicenseKeyId, c: &Cached) -> bool {
        let Some(epoch) = self.watch.as_ref().and_then(|w| w.trusted_epoch()) else {
            return false;
        };
        let stamp = c.stamp.load(Ordering::Acquire);
        stamp >> SEQ_BITS == epoch
            && self
                .notified
                .get(&id)
                .is_none_or(|heard| stamp & SEQ_MASK >= *heard)
    }

    /// Whether `c` may answer while the store cannot be reached: it was confirmed in the
    /// epoch of the listener's last ping heard back, that ping was sent at most the outage
    /// window ago, and no change of the key was heard since `c` was read.
    fn trusted_through_outage(&self, id: LicenseKeyId, c: &Cached) -> bool {
        if self.outage_window.is_zero() || self.strict {
            return false;
        }
        let Some((epoch, age)) = self.watch.as_ref().and_then(|w| w.last_caught_up()) else {
            return false;
        };
        let stamp = c.stamp.load(Ordering::Acquire);
        age <= self.outage_window
            && stamp >> SEQ_BITS == epoch
            && self
                .notified
                .get(&id)
                .is_none_or(|heard| stamp & SEQ_MASK >= *heard)
    }

    /// Whether `e` came of the database being unreachable: a connection could not be made
    /// (not a connection that broke, e.g. a backend terminated, which the next attempt
    /// replaces: that caller is answered 503 and its retry reads the store).
    fn unreachable(&self, e: &StorageError) -> bool {
        matches!(
            e,
            StorageError::Unavailable(_) | StorageError::Io(_) | StorageError::Closed
        ) && matches!(
            self.store.database(),
            Some(tollgate_storage::DatabaseState::Unreachable { .. })
        )
    }

    fn now_secs(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// The key's state: `(copy, fresh)`. With `need_fresh`, a copy that is not trusted is
    /// confirmed against the stored revision (or read again); without, any copy will do
    /// (its caller's statement checks the revision itself). `None`: no such key.
    async fn state(
        &self,
        id: LicenseKeyId,
        need_fresh: bool,
    ) -> Result<Option<(Arc<Cached>, bool)>, StorageError> {
        if let Some(c) = self.keys.get(&id).map(|c| c.clone()) {
            c.used.store(self.now_secs(), Ordering::Relaxed);
            if self.trusted(id, &c) {
                return Ok(Some((c, true)));
            }
            if !need_fresh {
                return Ok(Some((c, false)));
            }
            let stamp = self.stamp_now();
            if self.store.revision::<LicenseKey>(&id.key()).await? == Some(c.rev) {
                c.stamp.fetch_max(stamp, Ordering::AcqRel);
                return Ok(Some((c, true)));
            }
        }
        self.load(id).await.map(|c| c.map(|c| (c, true)))
    }

    /// Reads the key (with its counters) and keeps it.
    async fn load(&self, id: LicenseKeyId) -> Result<Option<Arc<Cached>>, StorageError> {
        let stamp = self.stamp_now();
        let Some(stored) = self.store.get::<LicenseKey>(&id.key()).await? else {
            self.keys.remove(&id);
            return Ok(None);
        };
        let c = Arc::new(Cached {
            validations: AtomicI64::new(stored.value.validations),
            usage: AtomicI64::new(stored.value.usage),
            key: Arc::new(stored.value),
            rev: stored.rev,
            stamp: AtomicU64::new(stamp),
            used: AtomicU64::new(self.now_secs()),
        });
        self.keys.insert(id, c.clone());
        Ok(Some(c))
    }

    /// Validates key `id` (see the module's documentation). `NotFound`: no such key.
    pub async fn validate(
        &self,
        id: LicenseKeyId,
        cmd: &ValidateKey,
        now: DateTime<Utc>,
    ) -> Result<SharedValidated, ActorError<LicenseKeyError>> {
        let increment = cmd.increment_usage.filter(|&n| n != 0);
        if increment.is_none() && !self.strict {
            return self.validate_plain(id, cmd, now).await;
        }
        // The usage and its limit are the statement's to check, on the stored row.
        let mut check = cmd.clone();
        check.increment_usage = None;
        let mut need_fresh = false;
        for _ in 0..ATTEMPTS {
            let (c, fresh) = self
                .state(id, need_fresh)
                .await?
                .ok_or(ActorError::NotFound)?;
            let activation = match decide::check_validation(&c.key, &check, now) {
                Ok(checked) => checked.activation.cloned(),
                // Refused on a copy that may be old: decide again on the stored key.
                Err(_) if !fresh => {
                    need_fresh = true;
                    continue;
                }
                Err(e) => return Err(ActorError::Domain(e)),
            };
            let n = increment.unwrap_or(0);
            let at = now.timestamp_micros();
            match self
                .store
                .count_hit::<LicenseKey>(&id.key(), c.rev, n, at)
                .await?
            {
                Counted::Done(tally) => {
                    self.counted.fetch_add(1, Ordering::Relaxed);
                    return Ok(self.answer(id, &c, activation, &tally, now));
                }
                Counted::Limit {
                    bounded: usage,
                    limit,
                } => {
                    return Err(ActorError::Domain(LicenseKeyError::InsufficientUsage {
                        remaining: i128::from(limit) - i128::from(usage),
                    }))
                }
                Counted::OutOfRange => {
                    return Err(ActorError::Domain(LicenseKeyError::UsageOutOfRange))
                }
                // Changed since it was read here: read it again and decide anew.
                Counted::Stale => {
                    self.keys.remove_if(&id, |_, k| Arc::ptr_eq(k, &c));
                    need_fresh = true;
                }
            }
        }
        Err(ActorError::Storage(StorageError::Unavailable(
            "the license key kept changing during its validation".into(),
        )))
    }

    /// A plain validation in batched mode: decided on a fresh copy, counted in memory.
    async fn validate_plain(
        &self,
        id: LicenseKeyId,
        cmd: &ValidateKey,
        now: DateTime<Utc>,
    ) -> Result<SharedValidated, ActorError<LicenseKeyError>> {
        let (c, _) = match self.keys.get(&id).map(|c| c.clone()) {
            Some(c) if self.trusted(id, &c) => {
                c.used.store(self.now_secs(), Ordering::Relaxed);
                self.memory.fetch_add(1, Ordering::Relaxed);
                (c, true)
            }
            _ => match self.state(id, true).await {
                Ok(found) => {
                    self.checked.fetch_add(1, Ordering::Relaxed);
                    found.ok_or(ActorError::NotFound)?
                }
                Err(e) => match self.keys.get(&id).map(|c| c.clone()) {
                    Some(c) if self.unreachable(&e) && self.trusted_through_outage(id, &c) => {
                        c.used.store(self.now_secs(), Ordering::Relaxed);
                        self.outage.fetch_add(1, Ordering::Relaxed);
                        (c, true)
                    }
                    _ => return Err(e.into()),
                },
            },
        };
        let checked = decide::check_validation(&c.key, cmd, now).map_err(ActorError::Domain)?;
        let activation = checked.activation.cloned();
        let at = now.timestamp_micros();
        let shown = {
            let counted = |p: &Pending| {
                p.last.fetch_max(at, Ordering::AcqRel);
                p.n.fetch_add(1, Ordering::AcqRel) + 1 + p.flushing.load(Ordering::Acquire)
            };
            match self.pending.get(&id) {
                Some(p) => counted(&p),
                None => counted(&self.pending.entry(id).or_insert_with(|| Pending {
                    n: AtomicI64::new(0),
                    last: AtomicI64::new(i64::MIN),
                    flushing: AtomicI64::new(0),
                })),
            }
        };
        Ok(SharedValidated {
            validations: c.validations.load(Ordering::Acquire).saturating_add(shown),
            usage: c.usage.load(Ordering::Acquire),
            key: c.key.clone(),
            activation,
            last_validated_at: now,
        })
    }

    fn answer(
        &self,
        id: LicenseKeyId,
        c: &Cached,
        activation: Option<Activation>,
        tally: &Tally,
        now: DateTime<Utc>,
    ) -> SharedValidated {
        c.validations.fetch_max(tally.hits, Ordering::AcqRel);
        c.usage.store(tally.bounded, Ordering::Release);
        SharedValidated {
            validations: tally.hits.saturating_add(self.pending_of(id)),
            usage: tally.bounded,
            key: c.key.clone(),
            activation,
            last_validated_at: tally
                .last_hit_us
                .and_then(DateTime::<Utc>::from_timestamp_micros)
                .unwrap_or(now),
        }
    }

    /// Validations of key `id` counted here and not yet in the store.
    pub fn pending_of(&self, id: LicenseKeyId) -> i64 {
        self.pending.get(&id).map_or(0, |p| {
            p.n.load(Ordering::Acquire) + p.flushing.load(Ordering::Acquire)
        })
    }

    /// The latest validation of key `id` counted here and not yet in the store.
    pub fn pending_last(&self, id: LicenseKeyId) -> Option<DateTime<Utc>> {
        self.pending
            .get(&id)
            .and_then(|p| DateTime::<Utc>::from_timestamp_micros(p.last.load(Ordering::Acquire)))
    }

    /// Adds the validations counted here to the store, as one additive delta per key (in
    /// statements of at most 1,000 keys); returns how many validations were written. On an
    /// error the counts are kept for the next flush.
    pub async fn flush(&self) -> Result<i64, StorageError> {
        let mut taken: Vec<(LicenseKeyId, i64, i64)> = Vec::new();
        for p in self.pending.iter() {
            let n = p.n.swap(0, Ordering::AcqRel);
            if n == 0 {
                continue;
            }
            let last = p.last.swap(i64::MIN, Ordering::AcqRel);
            p.flushing.fetch_add(n, Ordering::AcqRel);
            taken.push((*p.key(), n, last));
        }
        self.pending.retain(|_, p| {
            p.n.load(Ordering::Acquire) != 0 || p.flushing.load(Ordering::Acquire) != 0
        });
        self.forget_old_notices();
        self.drop_idle();
        if taken.is_empty() {
            return Ok(0);
        }
        taken.sort_by_key(|(id, _, _)| id.key());
        let mut written = 0;
        let mut failed = None;
        for chunk in taken.chunks(1_000) {
            let counts: Vec<(Vec<u8>, i64, i64)> = chunk
                .iter()
                .map(|(id, n, last)| (id.key(), *n, *last))
                .collect();
            let result = self.store.add_hits::<LicenseKey>(&counts).await;
            for (id, n, last) in chunk {
                let p = self.pending.entry(*id).or_insert_with(|| Pending {
                    n: AtomicI64::new(0),
                    last: AtomicI64::new(i64::MIN),
                    flushing: AtomicI64::new(0),
                });
                if result.is_err() {
                    // Kept for the next flush (the statement is all or nothing).
                    p.n.fetch_add(*n, Ordering::AcqRel);
                    p.last.fetch_max(*last, Ordering::AcqRel);
                }
                p.flushing.fetch_sub(*n, Ordering::AcqRel);
            }
            match result {
                Ok(after) => {
                    written += chunk.iter().map(|(_, n, _)| n).sum::<i64>();
                    for (k, tally) in after {
                        let Ok(id) = uuid::Uuid::from_slice(&k) else {
                            continue;
                        };
                        if let Some(c) = self.keys.get(&LicenseKeyId(id)) {
                            c.validations.fetch_max(tally.hits, Ordering::AcqRel);
                        }
                    }
                }
                Err(e) => failed = Some(e),
            }
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(written),
        }
    }

    /// Forgets changes heard long ago (no read begun before them is still running), and
    /// with each the copy of its key if that copy was read before it.
    fn forget_old_notices(&self) {
        let Some(watch) = &self.watch else { return };
        let now = Instant::now();
        let threshold = {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            seen.push_back((now, watch.seq()));
            let mut threshold = None;
            while let Some(&(at, seq)) = seen.front() {
                if now.duration_since(at) < NOTICE_KEPT {
                    break;
                }
                threshold = Some(seq);
                seen.pop_front();
            }
            threshold
        };
        let Some(threshold) = threshold else { return };
        self.notified.retain(|id, heard| {
            if *heard > threshold {
                return true;
            }
            let heard = *heard;
            self.keys.remove_if(id, |_, c| {
                c.stamp.load(Ordering::Acquire) & SEQ_MASK < heard
            });
            false
        });
    }

    /// Drops copies of keys not validated for a while (counts pending stay).
    fn drop_idle(&self) {
        let now = self.now_secs();
        self.keys
            .retain(|_, c| now.saturating_sub(c.used.load(Ordering::Relaxed)) < self.idle_secs);
    }

    /// How many keys this node holds a copy of.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether this node holds no copy.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

#[cfg(test)]
#[path = "shared_tests.rs"]
mod tests;
