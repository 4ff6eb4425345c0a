//! Validation without the mailbox, in batched mode.
//!
//! A plain validation (no `increment_usage`) changes nothing but two statistics. In batched
//! mode (`RegistryConfig::write_back`) each live key actor publishes its state here, and the
//! HTTP worker answers such a validation itself: it runs the same `decide::validate` over
//! the published key and adds one to the key's counter, with no hop to the actor's thread.
//! The actor absorbs the counters into its state when it writes them back (at most one
//! interval later, woken by the first validation after each write), before every command
//! (so a durable write carries them), on reads through it, and when it passivates.
//!
//! Safety: the published key is exactly the actor's state; a reader uses it only once the
//! write that produced it is durable (otherwise it goes through the actor, which waits), and
//! only while the actor is live: passivation closes the entry under its write lock before
//! the final write-back, so no count recorded here can miss it.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use actix::Recipient;
use chrono::{DateTime, Utc};
use dashmap::DashMap;
use tollgate_storage::Store;

use super::decide;
use super::model::{Activation, LicenseKey, LicenseKeyError, ValidateKey};
use crate::domain::ids::LicenseKeyId;
use crate::entity::AbsorbSoon;

/// A validation answered here: the shared key, with the counts this answer shows.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveValidated {
    /// The key as published (its own `validations` and `last_validated_at` are older:
    /// show the two fields below instead).
    pub key: Arc<LicenseKey>,
    pub validations: i64,
    pub last_validated_at: DateTime<Utc>,
    pub activation: Option<Activation>,
}

/// The published keys of one registry (its `Entity::Extension`).
#[derive(Default)]
pub struct LiveKeys {
    keys: DashMap<LicenseKeyId, Arc<LiveKey>>,
}

struct LiveKey {
    published: RwLock<Published>,
    /// Validations answered here since the actor last absorbed them.
    validations: AtomicI64,
    /// The latest of their times, in microseconds since the epoch (`i64::MIN`: none).
    last_validated: AtomicI64,
}

struct Published {
    key: Arc<LicenseKey>,
    /// The store's sequence number after which `key` is durable.
    durable_after: u64,
    wake: Recipient<AbsorbSoon>,
    /// `false` once the actor passivated: readers go through the mailbox.
    open: bool,
}

impl LiveKeys {
    /// Whether no key is published (no live actor in batched mode).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub(crate) fn publish(
        &self,
        id: LicenseKeyId,
        key: Arc<LicenseKey>,
        durable_after: u64,
        wake: &Recipient<AbsorbSoon>,
    ) {
        let published = Published {
            key,
            durable_after,
            wake: wake.clone(),
            open: true,
        };
        let live = match self.keys.get(&id) {
            Some(live) => live.clone(),
            None => {
                let live = Arc::new(LiveKey {
                    published: RwLock::new(published),
                    validations: AtomicI64::new(0),
                    last_validated: AtomicI64::new(i64::MIN),
                });
                self.keys.entry(id).or_insert(live);
                return;
            }
        };
        let mut p = live.published.write().unwrap_or_else(|e| e.into_inner());
        *p = published;
    }

    /// Moves the counts recorded here into `key` (and republishes it, so readers never see a
    /// count go backwards). Returns whether there were any.
    pub(crate) fn absorb(&self, id: LicenseKeyId, key: &mut Arc<LicenseKey>) -> bool {
        let Some(live) = self.keys.get(&id).map(|l| l.clone()) else {
            return false;
        };
        let mut p = live.published.write().unwrap_or_else(|e| e.into_inner());
        Self::take(&live, &mut p, key)
    }

    /// Under the entry's write lock: moves its counts into `key`.
    fn take(live: &LiveKey, p: &mut Published, key: &mut Arc<LicenseKey>) -> bool {
        let n = live.validations.swap(0, Ordering::SeqCst);
        let last = live.last_validated.swap(i64::MIN, Ordering::SeqCst);
        if n == 0 {
            return false;
        }
        // The state is shared with its publication: this copies it once, then shares the
        // new one again.
        let k = Arc::make_mut(key);
        k.validations = k.validations.saturating_add(n);
        if let Some(at) = DateTime::<Utc>::from_timestamp_micros(last) {
            if k.last_validated_at.is_none_or(|t| t < at) {
                k.last_validated_at = Some(at);
            }
        }
        p.key = key.clone();
        true
    }

    /// The actor passivates: close the entry and take its counts into `key`, under one
    /// write lock (a reader that counted did so before; one after sees it closed and goes
    /// through the mailbox). Returns whether there were counts.
    pub(crate) fn retire(&self, id: LicenseKeyId, key: &mut Arc<LicenseKey>) -> bool {
        let Some((_, live)) = self.keys.remove(&id) else {
            return false;
        };
        let mut p = live.published.write().unwrap_or_else(|e| e.into_inner());
        p.open = false;
        Self::take(&live, &mut p, key)
    }

    /// Answers a plain validation of a live, durable key without its actor; `None` when it
    /// must go through the actor (an increment, a key not live here, a state not yet
    /// durable).
    pub fn validate(
        &self,
        store: &Store,
        id: LicenseKeyId,
        cmd: &ValidateKey,
        now: DateTime<Utc>,
    ) -> Option<Result<LiveValidated, LicenseKeyError>> {
        if cmd.increment_usage.is_some_and(|n| n != 0) {
            return None;
        }
        let live = self.keys.get(&id)?.clone();
        let p = live.published.read().ok()?;
        if !p.open || !store.is_durable(p.durable_after) {
            return None;
        }
        Some(decide::check_validation(&p.key, cmd, now).map(|checked| {
            let activation = checked.activation.cloned();
            let before = live.validations.fetch_add(1, Ordering::SeqCst);
            live.last_validated
                .fetch_max(now.timestamp_micros(), Ordering::SeqCst);
            if before == 0 {
                // The first count since the last absorb: have it written within the interval.
                p.wake.do_send(AbsorbSoon);
            }
            LiveValidated {
                key: p.key.clone(),
                validations: p.key.validations.saturating_add(before + 1),
                last_validated_at: now,
                activation,
            }
        }))
    }
}
