//! Deferred writes: changes an entity holds in memory and writes back later, at most one
//! write per `RegistryConfig::write_back` interval however many changes (the license
//! keys' validation counters, in batched mode), and the publication of the entity's state
//! for readers outside the mailbox, whose counts it absorbs before every write. On the
//! embedded store only: a store other nodes write too gets every change before its reply.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use actix::prelude::*;
use tollgate_storage::{Batch, StorageError};

use super::local::not_in_place;
use super::{Entity, EntityActor};

/// Readers outside the mailbox recorded something (see [`Entity::absorb`]): take it in now
/// and write it back within the registry's `write_back` interval.
#[derive(Debug, Clone, Copy)]
pub struct AbsorbSoon;

impl Message for AbsorbSoon {
    type Result = ();
}

impl<E: Entity> Handler<AbsorbSoon> for EntityActor<E> {
    type Result = ();

    fn handle(&mut self, _: AbsorbSoon, ctx: &mut Context<Self>) {
        if self.passivated {
            return;
        }
        // Traffic answered outside the mailbox keeps the entity live: this message comes
        // once per write-back interval while there is any.
        self.last_activity = Instant::now();
        // Not absorbed now (that would take one message per validation): the write-back
        // absorbs, at most one interval later.
        self.arm_write_back(ctx);
    }
}

impl<E: Entity> EntityActor<E> {
    /// Holds `state` in memory without writing it now: a change whose loss a crash may
    /// cause (statistics such as validation counters). It is written back at most
    /// [`crate::RegistryConfig::write_back`] later, with whatever else changed meanwhile
    /// (one write per interval, however many changes), by the next durable command, at
    /// passivation, and when the registry stops gracefully. Without a `write_back`
    /// interval the change is written at once (without waiting for durability).
    pub fn defer(&mut self, ctx: &mut Context<Self>, state: E::State) {
        self.state = state;
        self.publish(ctx, self.published_after);
        self.mark_dirty(ctx);
    }

    /// The state holds changes to write back: within the interval, or now without one.
    fn mark_dirty(&mut self, ctx: &mut Context<Self>) {
        self.dirty = true;
        self.arm_write_back(ctx);
    }

    /// A write-back within the interval (at once without one).
    fn arm_write_back(&mut self, ctx: &mut Context<Self>) {
        match self.write_back_interval() {
            Some(interval) => {
                if self.write_back_timer.is_none() {
                    self.write_back_timer = Some(ctx.run_later(interval, |act, ctx| {
                        act.write_back_timer = None;
                        act.write_back(ctx);
                    }));
                }
            }
            None => {
                self.write_back(ctx);
            }
        }
    }

    /// Whether deferred writes are batched (`write_back` is set).
    pub fn defers_writes(&self) -> bool {
        self.write_back_interval().is_some()
    }

    /// The registry's `write_back` interval, on the embedded store. A store other nodes
    /// write too gets every change written before its reply: a change held in memory here
    /// would be lost to their conditional writes.
    fn write_back_interval(&self) -> Option<Duration> {
        self.shared
            .config
            .write_back
            .filter(|_| !self.shared.remote)
    }

    /// Writes deferred changes now, if there are any. Returns `false` if the write failed
    /// (a conflict reloads the stored snapshot, losing the deferred changes; another
    /// error keeps them for the next attempt).
    pub fn write_back(&mut self, ctx: &mut Context<Self>) -> bool {
        if E::absorb(&self.shared.ext, self.id, &mut self.state) {
            self.dirty = true;
        }
        if !self.dirty {
            return true;
        }
        let mut batch = Batch::new();
        // Only the embedded store defers writes (`defers_writes`).
        let written = E::write_back(&self.state, &mut batch).and_then(|()| {
            self.shared
                .store
                .commit_in_place(&batch)
                .unwrap_or_else(|| Err(not_in_place()))
        });
        match written {
            Ok(committed) => {
                E::on_commit(&mut self.state, &committed);
                self.last_seq = Some(committed.seq);
                self.shared
                    .stats
                    .write_backs
                    .fetch_add(1, Ordering::Relaxed);
                self.clean(ctx);
                true
            }
            Err(StorageError::Conflict { .. }) => {
                tracing::warn!(entity = E::NAME, id = %self.id,
                    "deferred write conflicted; reloading the stored snapshot");
                self.clean(ctx);
                self.reload(ctx);
                false
            }
            Err(e) => {
                tracing::warn!(entity = E::NAME, id = %self.id, error = %e,
                    "deferred write failed; retrying later");
                // Without an interval the next deferred change retries (not a loop here).
                if self.defers_writes() {
                    self.arm_write_back(ctx);
                }
                false
            }
        }
    }

    /// Takes in what readers outside the mailbox recorded.
    pub(super) fn absorb(&mut self, ctx: &mut Context<Self>) {
        if E::absorb(&self.shared.ext, self.id, &mut self.state) {
            self.publish(ctx, self.published_after);
            self.mark_dirty(ctx);
        }
    }

    /// Publishes the current state for readers outside the mailbox: only when deferred
    /// writes are batched (what such readers record is then written back in time).
    pub(super) fn publish(&mut self, ctx: &mut Context<Self>, durable_after: u64) {
        self.published_after = durable_after;
        if self.write_back_interval().is_none() || self.passivated {
            return;
        }
        let wake = ctx.address().recipient::<AbsorbSoon>();
        E::publish(&self.shared.ext, self.id, &self.state, durable_after, &wake);
    }

    pub(super) fn clean(&mut self, ctx: &mut Context<Self>) {
        self.dirty = false;
        if let Some(timer) = self.write_back_timer.take() {
            ctx.cancel_future(timer);
        }
    }
}
