//! The entity shell on a store other nodes write too (PostgreSQL; `design/scale-out.md`
//! 4.3). A commit there is a network round trip and its durability point, so:
//!
//! * **One write in flight per entity, commands coalesced behind it.** Commands and queries
//!   queue while a write is in flight; when it returns, everything queued is decided in
//!   order, each on top of the state the previous one produced, and written together in
//!   *one* transaction. Consecutive counter-only writes of the aggregate (validations:
//!   `Batch::put_keeping_keys`) collapse into one write of the last state. A hot key is
//!   then bounded by CPU and the batch size, not by one commit's latency.
//! * **The database decides.** Every write is conditional on the revision the group was
//!   decided on. If another node got there first the commit conflicts, nothing of the group
//!   has been answered yet, and the whole group is decided again on the reloaded snapshot
//!   (up to [`MAX_DECIDES`] times, then `Contended`).
//! * **Answers that write nothing prove nothing**: a group without writes (reads,
//!   refusals, no-ops) first compares its revision with the stored one (one round trip for
//!   the whole group) and is decided again on the stored snapshot if it was stale.
//! * Replies leave only once the group's write committed, which on PostgreSQL is durable.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use actix::prelude::*;
use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Committed, StorageError};

use super::{CommandReply, Entity, EntityActor, Outcome, ReplyKind, MAX_DECIDES};
use crate::error::{ActorError, Unavailable};

/// Most commands decided into one write.
const MAX_GROUP: usize = 256;

/// The entity's queue of commands for a remote store.
pub(crate) struct Pipeline<E: Entity> {
    /// A write (or a freshness check) is in flight.
    busy: bool,
    queue: VecDeque<Box<dyn Pending<E>>>,
}

impl<E: Entity> Default for Pipeline<E> {
    fn default() -> Self {
        Pipeline {
            busy: false,
            queue: VecDeque::new(),
        }
    }
}

/// Why a queued command got no answer of its own.
#[derive(Clone)]
pub(crate) enum Failure {
    Storage(StorageError),
    Unavailable(Unavailable),
}

impl Failure {
    fn into_error<Er>(self) -> ActorError<Er> {
        match self {
            Failure::Storage(e) => ActorError::Storage(e),
            Failure::Unavailable(u) => ActorError::Unavailable(u),
        }
    }
}

/// A command or query waiting in the pipeline, its reply type erased.
pub(crate) trait Pending<E: Entity> {
    /// Decides on `state` (the stored one, or what the commands before it in the group
    /// made of it): the write and the state after it, or `None` for an answer that writes
    /// nothing (kept until the group is through).
    fn decide(&mut self, state: &E::State, now: DateTime<Utc>) -> Option<(Batch, E::State)>;

    /// Answers: with what was decided (a query evaluates itself on `state`, the state once
    /// the group is through), or with the group's failure.
    fn finish(self: Box<Self>, outcome: Result<&E::State, Failure>, now: DateTime<Utc>);
}

/// A command of [`EntityActor::execute`].
pub(crate) struct Command<F, R, Er> {
    pub(crate) decide: F,
    pub(crate) held: Option<Result<R, ActorError<Er>>>,
    pub(crate) tx: tokio::sync::oneshot::Sender<Result<R, ActorError<Er>>>,
}

impl<E, F, R, Er> Pending<E> for Command<F, R, Er>
where
    E: Entity,
    F: FnMut(&E::State, DateTime<Utc>) -> Result<Outcome<E::State, R>, ActorError<Er>>,
{
    fn decide(&mut self, state: &E::State, now: DateTime<Utc>) -> Option<(Batch, E::State)> {
        match (self.decide)(state, now) {
            Ok(Outcome::Commit {
                batch,
                state,
                reply,
            }) => {
                self.held = Some(Ok(reply));
                Some((batch, state))
            }
            Ok(Outcome::Reply(reply)) => {
                self.held = Some(Ok(reply));
                None
            }
            Err(e) => {
                self.held = Some(Err(e));
                None
            }
        }
    }

    fn finish(self: Box<Self>, outcome: Result<&E::State, Failure>, _now: DateTime<Utc>) {
        let answer = match outcome {
            Ok(_) => self
                .held
                .unwrap_or(Err(ActorError::Unavailable(Unavailable::Contended))),
            Err(failure) => Err(failure.into_error()),
        };
        let _ = self.tx.send(answer);
    }
}

/// A query of [`EntityActor::read`]: evaluated on the state once the group is through.
pub(crate) struct Query<F, T, Er> {
    pub(crate) query: Option<F>,
    pub(crate) tx: tokio::sync::oneshot::Sender<Result<T, ActorError<Er>>>,
}

impl<E, F, T, Er> Pending<E> for Query<F, T, Er>
where
    E: Entity,
    F: FnOnce(&E::State, DateTime<Utc>) -> Result<T, ActorError<Er>>,
{
    fn decide(&mut self, _state: &E::State, _now: DateTime<Utc>) -> Option<(Batch, E::State)> {
        None
    }

    fn finish(mut self: Box<Self>, outcome: Result<&E::State, Failure>, now: DateTime<Utc>) {
        let answer = match (outcome, self.query.take()) {
            (Ok(state), Some(query)) => query(state, now),
            (Ok(_), None) => Err(ActorError::Unavailable(Unavailable::Contended)),
            (Err(failure), _) => Err(failure.into_error()),
        };
        let _ = self.tx.send(answer);
    }
}

/// What the round trip of a group found.
enum Step<S> {
    /// The group's write committed.
    Committed(Committed),
    /// The group wrote nothing and its state is the stored one.
    Fresh,
    /// Another writer changed the record: its snapshot now (`None`: gone).
    Stale(Result<Option<S>, StorageError>),
    Failed(StorageError),
}

impl<E: Entity> EntityActor<E> {
    /// Queues a command or query for the pipeline and replies when it is answered.
    pub(super) fn enqueue<T, Er>(
        &mut self,
        ctx: &mut Context<Self>,
        pending: Box<dyn Pending<E>>,
        rx: tokio::sync::oneshot::Receiver<Result<T, ActorError<Er>>>,
    ) -> CommandReply<E, T, Er>
    where
        T: 'static,
        Er: 'static,
    {
        self.remote.queue.push_back(pending);
        self.pump(ctx);
        CommandReply {
            inner: ReplyKind::Actor(ActorResponse::r#async(rx.into_actor(self).map(
                |answer, _, _| {
                    answer.unwrap_or(Err(ActorError::Unavailable(Unavailable::Passivated)))
                },
            ))),
        }
    }

    /// Starts the next group if nothing is in flight.
    fn pump(&mut self, ctx: &mut Context<Self>) {
        if self.remote.busy || self.remote.queue.is_empty() {
            return;
        }
        if self.passivated {
            self.abandon_queue();
            return;
        }
        let take = self.remote.queue.len().min(MAX_GROUP);
        let group: Vec<_> = self.remote.queue.drain(..take).collect();
        self.run_group(ctx, group, 1);
    }

    /// Answers every queued command `Passivated` (the entity leaves memory).
    pub(super) fn abandon_queue(&mut self) {
        let now = self.now();
        for pending in self.remote.queue.drain(..) {
            pending.finish(Err(Failure::Unavailable(Unavailable::Passivated)), now);
        }
    }

    /// Decides `group` on the current state and sends its write (or its freshness check).
    fn run_group(
        &mut self,
        ctx: &mut Context<Self>,
        mut group: Vec<Box<dyn Pending<E>>>,
        attempt: usize,
    ) {
        self.remote.busy = true;
        let now = self.now();
        let mut next: Option<E::State> = None;
        let mut parts: Vec<Batch> = Vec::new();
        let mut decided = 0;
        for pending in group.iter_mut() {
            let current = next.as_ref().unwrap_or(&self.state);
            decided += 1;
            if let Some((batch, mut state)) = pending.decide(current, now) {
                // The revisions this write will produce, so that the next command writes
                // on top of it; if they cannot be known, the group ends here.
                let predicted = batch.predicted_revs();
                if let Some(revs) = &predicted {
                    E::on_commit(
                        &mut state,
                        &Committed {
                            seq: 0,
                            revs: revs.clone(),
                        },
                    );
                }
                parts.push(batch);
                next = Some(state);
                if predicted.is_none() {
                    break;
                }
            }
        }
        // Commands after an unpredictable write wait for the next group, in order.
        for pending in group.drain(decided..).rev() {
            self.remote.queue.push_front(pending);
        }
        let single_write = parts.len() == 1;
        let write = Batch::coalesce(parts);
        let collapsed = write.as_ref().is_some_and(|b| b.len() == 1);
        let held = E::revision(&self.state);
        let store = self.shared.store.clone();
        let id = self.id;
        let round_trip = async move {
            match write {
                Some(batch) => match store.commit(&batch).await {
                    Ok(committed) => Step::Committed(committed),
                    Err(StorageError::Conflict { collection, .. }) if E::owns(collection) => {
                        Step::Stale(E::load(&store, id).await)
                    }
                    Err(e) => Step::Failed(e),
                },
                None => match E::stored_revision(&store, id).await {
                    Ok(stored) if stored == held => Step::Fresh,
                    Ok(_) => Step::Stale(E::load(&store, id).await),
                    Err(e) => Step::Failed(e),
                },
            }
        };
        ctx.spawn(round_trip.into_actor(self).map(move |step, act, ctx| {
            // Revisions to take from the commit: one write's, or a collapsed one's.
            let exact = single_write || collapsed;
            act.group_done(ctx, group, next, step, attempt, exact)
        }));
    }

    fn group_done(
        &mut self,
        ctx: &mut Context<Self>,
        group: Vec<Box<dyn Pending<E>>>,
        next: Option<E::State>,
        step: Step<E::State>,
        attempt: usize,
        from_commit: bool,
    ) {
        let now = self.now();
        let finish_all = |group: Vec<Box<dyn Pending<E>>>, outcome: Result<&E::State, Failure>| {
            for pending in group {
                pending.finish(outcome.clone(), now);
            }
        };
        match step {
            Step::Committed(committed) => {
                if let Some(mut state) = next {
                    // One command's write (or a collapsed one) gives its revisions;
                    // several appended writes were predicted exactly.
                    if from_commit {
                        E::on_commit(&mut state, &committed);
                    }
                    self.state = state;
                }
                self.last_seq = Some(committed.seq);
                self.publish(ctx, committed.seq);
                finish_all(group, Ok(&self.state));
            }
            Step::Fresh => finish_all(group, Ok(&self.state)),
            Step::Stale(loaded) => {
                let counter = if next.is_some() {
                    &self.shared.stats.redecides
                } else {
                    &self.shared.stats.refreshes
                };
                counter.fetch_add(1, Ordering::Relaxed);
                match loaded {
                    Ok(Some(state)) if attempt < MAX_DECIDES => {
                        self.state = state;
                        self.last_seq = Some(0);
                        self.load_epoch += 1;
                        self.run_group(ctx, group, attempt + 1);
                        return;
                    }
                    Ok(Some(state)) => {
                        self.state = state;
                        tracing::warn!(entity = E::NAME, id = %self.id,
                            "the record kept changing under concurrent writers; refusing the commands");
                        finish_all(group, Err(Failure::Unavailable(Unavailable::Contended)));
                    }
                    Ok(None) => {
                        tracing::warn!(entity = E::NAME, id = %self.id, "snapshot vanished; passivating");
                        finish_all(group, Err(Failure::Unavailable(Unavailable::Passivated)));
                        self.passivate(ctx);
                    }
                    Err(e) => {
                        tracing::error!(entity = E::NAME, id = %self.id, error = %e,
                            "cannot reload snapshot; passivating");
                        finish_all(group, Err(Failure::Storage(e)));
                        self.passivate(ctx);
                    }
                }
            }
            Step::Failed(e) => {
                tracing::warn!(entity = E::NAME, id = %self.id, error = %e, "write failed");
                finish_all(group, Err(Failure::Storage(e)));
            }
        }
        self.remote.busy = false;
        self.pump(ctx);
    }
}
