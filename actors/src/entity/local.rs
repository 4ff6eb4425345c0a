//! The entity shell on the embedded store (sled): group commit. A command is decided on
//! the state in memory and its batch written in place (an in-memory append that the
//! store's flusher makes durable for many writes at once); the new state is swapped in at
//! once, and the reply leaves only after the flush of *that* write, without holding the
//! mailbox meanwhile. A write that loses to another writer reloads and decides again (up
//! to [`MAX_DECIDES`] times). Reads and refusals wait for whatever this entity wrote to be
//! durable, or for a store-wide read barrier right after a load.

use std::future::Future;
use std::sync::atomic::Ordering;

use actix::prelude::*;
use chrono::{DateTime, Utc};
use futures_util::FutureExt;
use tollgate_storage::{Batch, DurableFuture, StorageError};

use super::{CommandReply, Entity, EntityActor, Outcome, ReplyKind, MAX_DECIDES};
use crate::error::{ActorError, Unavailable};

/// A flush the entity's last reply waited for failed: reload the state from the store.
pub(super) struct FlushFailed(pub(super) StorageError);

impl Message for FlushFailed {
    type Result = ();
}

impl<E: Entity> Handler<FlushFailed> for EntityActor<E> {
    type Result = ();

    fn handle(&mut self, msg: FlushFailed, ctx: &mut Context<Self>) {
        self.flush_failed(ctx, &msg.0);
    }
}

impl<E: Entity> EntityActor<E> {
    /// [`EntityActor::execute`] on the embedded store: decide, write in place, reply once
    /// the write is durable.
    pub(super) fn execute_local<R, Er, F>(
        &mut self,
        ctx: &mut Context<Self>,
        mut decide: F,
    ) -> CommandReply<E, R, Er>
    where
        R: 'static,
        Er: 'static,
        F: FnMut(&E::State, DateTime<Utc>) -> Result<Outcome<E::State, R>, ActorError<Er>>
            + 'static,
    {
        self.absorb(ctx);
        for _ in 0..MAX_DECIDES {
            let now = self.now();
            match decide(&self.state, now) {
                Ok(Outcome::Commit {
                    batch,
                    state,
                    reply,
                }) => match self.apply(ctx, &batch, state) {
                    Ok(seq) => return self.on_durable(ctx, seq, reply),
                    Err(StorageError::Conflict { collection, .. }) if E::owns(collection) => {
                        self.shared.stats.redecides.fetch_add(1, Ordering::Relaxed);
                        // Another writer changed the record: decide again on what it wrote.
                        if !self.reload(ctx) {
                            return CommandReply::now(Err(ActorError::Unavailable(
                                Unavailable::Passivated,
                            )));
                        }
                    }
                    Err(e) => return CommandReply::now(Err(ActorError::Storage(e))),
                },
                // An answer that writes nothing (a refusal, a no-op) proves nothing about
                // the state it was decided on: when another writer may exist, decide again
                // if that state is stale.
                Ok(Outcome::Reply(reply)) => {
                    if !self.refresh(ctx) {
                        return self.reply(Ok(reply));
                    }
                }
                Err(e) => {
                    if !self.refresh(ctx) {
                        return self.reply(Err(e));
                    }
                }
            }
        }
        tracing::warn!(entity = E::NAME, id = %self.id,
            "the record kept changing under concurrent writers; refusing the command");
        CommandReply::now(Err(ActorError::Unavailable(Unavailable::Contended)))
    }

    /// [`EntityActor::read`] on the embedded store: answered from memory, once durable.
    pub(super) fn read_local<T, Er, F>(
        &mut self,
        ctx: &mut Context<Self>,
        query: F,
    ) -> CommandReply<E, T, Er>
    where
        T: 'static,
        Er: 'static,
        F: FnOnce(&E::State, DateTime<Utc>) -> Result<T, ActorError<Er>> + 'static,
    {
        self.absorb(ctx);
        self.refresh(ctx);
        let now = self.now();
        let value = query(&self.state, now);
        self.reply(value)
    }

    /// With [`crate::RegistryConfig::check_freshness`]: reloads the stored snapshot if
    /// another writer changed it since this entity read or wrote it; returns whether it
    /// did. A failed check answers from the state held (and is logged): a read then shows
    /// what this node last knew, and every write is still conditional on the revision.
    pub fn refresh(&mut self, ctx: &mut Context<Self>) -> bool {
        // On a remote store the command pipeline checks (see `remote`).
        if !self.shared.config.check_freshness || self.shared.remote {
            return false;
        }
        let Some(held) = E::revision(&self.state) else {
            return false;
        };
        match in_place(E::stored_revision(&self.shared.store, self.id)) {
            Ok(Some(stored)) if stored == held => false,
            Ok(_) => {
                self.shared.stats.refreshes.fetch_add(1, Ordering::Relaxed);
                self.reload(ctx)
            }
            Err(e) => {
                tracing::warn!(entity = E::NAME, id = %self.id, error = %e,
                    "cannot check the stored revision; answering from memory");
                false
            }
        }
    }

    /// Commits `batch` and, once it is in, holds `state`; returns the write's sequence
    /// number. On an error nothing changes.
    fn apply(
        &mut self,
        ctx: &mut Context<Self>,
        batch: &Batch,
        mut state: E::State,
    ) -> Result<u64, StorageError> {
        let committed = match self.shared.store.commit_in_place(batch) {
            Some(result) => result?,
            None => return Err(not_in_place()),
        };
        E::on_commit(&mut state, &committed);
        self.state = state;
        self.last_seq = Some(committed.seq);
        // The snapshot just written carries every deferred change too.
        self.clean(ctx);
        self.publish(ctx, committed.seq);
        Ok(committed.seq)
    }

    /// `reply`, once the write numbered `seq` is durable.
    fn on_durable<R, Er>(
        &self,
        ctx: &mut Context<Self>,
        seq: u64,
        reply: R,
    ) -> CommandReply<E, R, Er>
    where
        R: 'static,
        Er: 'static,
    {
        CommandReply {
            inner: ReplyKind::OnDurable {
                seq,
                value: Ok(reply),
                store: self.shared.store.clone(),
                entity: ctx.address(),
            },
        }
    }

    /// Replies with `value` once every write this entity's state reflects is durable:
    /// immediately if it already is.
    pub fn reply<T, Er>(&mut self, value: Result<T, ActorError<Er>>) -> CommandReply<E, T, Er>
    where
        T: 'static,
        Er: 'static,
    {
        let (mut barrier, epoch): (DurableFuture, Option<u64>) = match self.last_seq {
            Some(seq) => (self.shared.store.durable(seq), None),
            None => (self.shared.store.read_barrier(), Some(self.load_epoch)),
        };
        match (&mut barrier).now_or_never() {
            Some(Ok(())) => {
                self.barrier_passed(epoch);
                CommandReply::now(value)
            }
            Some(Err(e)) => CommandReply::now(Err(ActorError::Storage(e))),
            None => CommandReply::actor(ActorResponse::r#async(barrier.into_actor(self).map(
                move |res, act, ctx| match res {
                    Ok(()) => {
                        act.barrier_passed(epoch);
                        value
                    }
                    Err(e) => {
                        act.flush_failed(ctx, &e);
                        Err(ActorError::Storage(e))
                    }
                },
            ))),
        }
    }

    /// A read barrier started at load `epoch` resolved: the loaded snapshot is durable.
    fn barrier_passed(&mut self, epoch: Option<u64>) {
        if let Some(epoch) = epoch {
            if self.load_epoch == epoch && self.last_seq.is_none() {
                self.last_seq = Some(0);
            }
        }
    }

    fn flush_failed(&mut self, ctx: &mut Context<Self>, e: &StorageError) {
        tracing::error!(entity = E::NAME, id = %self.id, error = %e, "flush failed; reloading");
        self.reload(ctx);
    }
}

/// The output of a store future the embedded engine answers at its first poll.
pub(super) fn in_place<T>(
    f: impl Future<Output = Result<T, StorageError>>,
) -> Result<T, StorageError> {
    f.now_or_never().unwrap_or_else(|| Err(not_in_place()))
}

pub(super) fn not_in_place() -> StorageError {
    StorageError::Unavailable("a remote store's answer was awaited in place".into())
}
