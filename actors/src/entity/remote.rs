//! The entity shell on a store other nodes write too (PostgreSQL; `docs/scale-out.md`
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
//!   has been answered yet, and the whole group is decided again, this time on the snapshot
//!   read under a row lock held until its write commits (`Entity::hold`), so it cannot
//!   lose again; entities without a hold retry after a short random delay (up to
//!   `REMOTE_MAX_DECIDES` times, then `Contended`).
//! * **Answers that write nothing prove nothing**: a group without writes (reads,
//!   refusals, no-ops) first compares its revision with the stored one (one round trip for
//!   the whole group) and is decided again on the stored snapshot if it was stale.
//! * Replies leave only once the group's write committed, which on PostgreSQL is durable.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use actix::prelude::*;
use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Committed, StorageError};

use super::{CommandReply, Entity, EntityActor, Held, Outcome, ReplyKind, MAX_DECIDES};
use crate::error::{ActorError, Unavailable};

/// Most commands decided into one write.
const MAX_GROUP: usize = 256;

/// How many times a group is decided before its commands are answered `Contended`. Higher
/// than the embedded store's [`MAX_DECIDES`]: on a shared database two nodes writing one hot
/// record conflict routinely, and each retry waits a random, growing delay first, so that
/// the nodes stop meeting.
const REMOTE_MAX_DECIDES: usize = 4 * MAX_DECIDES;

/// A random delay before decision `attempt + 1`: up to 1 ms, doubling per attempt (at most
/// 32 ms).
fn retry_delay(attempt: usize) -> std::time::Duration {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(attempt);
    let ceiling_us = 1_000u64 << attempt.min(5);
    std::time::Duration::from_micros(h.finish() % ceiling_us + 1)
}

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

    /// Whether it may write (a command); a query never does.
    fn writes(&self) -> bool;

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

    fn writes(&self) -> bool {
        true
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

    fn writes(&self) -> bool {
        false
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

/// A group decided: the state after its last write, the write, and whether the commit's
/// revisions are the state's (else they were predicted exactly).
struct Decided<S> {
    next: Option<S>,
    write: Option<Batch>,
    exact: bool,
}

/// What the round trip of a group found.
enum Step<S> {
    /// The group's write committed.
    Committed(Committed),
    /// The group wrote nothing and its state is the stored one.
    Fresh,
    /// Another writer changed the record: its snapshot now (`None`: gone).
    Stale(Result<Option<S>, StorageError>),
    /// The database aborted the group's transaction; run it again.
    Aborted(String),
    Failed(StorageError),
}

impl<E: Entity> EntityActor<E> {
    /// [`EntityActor::execute`] on a remote store: the command joins the pipeline.
    pub(super) fn execute_remote<R, Er, F>(
        &mut self,
        ctx: &mut Context<Self>,
        decide: F,
    ) -> CommandReply<E, R, Er>
    where
        R: 'static,
        Er: 'static,
        F: FnMut(&E::State, DateTime<Utc>) -> Result<Outcome<E::State, R>, ActorError<Er>>
            + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let command = Command {
            decide,
            held: None,
            tx,
        };
        self.enqueue(ctx, Box::new(command), rx)
    }

    /// [`EntityActor::read`] on a remote store: the query joins the pipeline.
    pub(super) fn read_remote<T, Er, F>(
        &mut self,
        ctx: &mut Context<Self>,
        query: F,
    ) -> CommandReply<E, T, Er>
    where
        T: 'static,
        Er: 'static,
        F: FnOnce(&E::State, DateTime<Utc>) -> Result<T, ActorError<Er>> + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let query = Query {
            query: Some(query),
            tx,
        };
        self.enqueue(ctx, Box::new(query), rx)
    }

    /// Queues a command or query for the pipeline and replies when it is answered.
    fn enqueue<T, Er>(
        &mut self,
        ctx: &mut Context<Self>,
        pending: Box<dyn Pending<E>>,
        rx: tokio::sync::oneshot::Receiver<Result<T, ActorError<Er>>>,
    ) -> CommandReply<E, T, Er>
    where
        T: 'static,
        Er: 'static,
    {
        // The mailbox slot was given back when this message was handled: the queue is
        // bounded by the same capacity, so that a slow database pushes back on callers
        // (`MailboxFull`) instead of piling up commands they gave up waiting for.
        if self.remote.queue.len() >= self.shared.config.mailbox_capacity {
            pending.finish(
                Err(Failure::Unavailable(Unavailable::MailboxFull)),
                self.now(),
            );
        } else {
            self.remote.queue.push_back(pending);
            self.pump(ctx);
        }
        CommandReply {
            inner: ReplyKind::Actor(ActorResponse::r#async(rx.into_actor(self).map(
                |answer, _, _| {
                    // Dropped unanswered: its group's future went with a restart, perhaps
                    // after its write landed; the outcome is unknown.
                    answer.unwrap_or(Err(ActorError::Unavailable(Unavailable::ReplyLost)))
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

    /// After a supervisor restart, which cancelled every future of the context: a group
    /// in flight went with them, and so did the reply of every queued command (their
    /// callers were told `ReplyLost`). The queued commands are dropped unapplied: applied
    /// after their callers gave up, a retry of theirs would apply them twice.
    pub(super) fn restarted(&mut self) {
        self.remote.busy = false;
        self.remote.queue.clear();
    }

    /// Answers every queued command `Passivated` (the entity leaves memory).
    pub(super) fn abandon_queue(&mut self) {
        let now = self.now();
        for pending in self.remote.queue.drain(..) {
            pending.finish(Err(Failure::Unavailable(Unavailable::Passivated)), now);
        }
    }

    /// Decides `group` on the current state and sends its write (or its freshness check).
    /// Runs `group`. The first time, optimistically: decided on the state in memory, the
    /// write conditional on its revision (one round trip for a validation's counters), or
    /// the revision compared first for a group that writes nothing. After a lost write, on
    /// a store that can hold a record: the snapshot is read in a transaction that holds it
    /// locked, the group decided on that and written in the same transaction, so no other
    /// node's write can slip in between (a record two nodes keep writing costs one lost
    /// write, not a chain of them).
    fn run_group(
        &mut self,
        ctx: &mut Context<Self>,
        group: Vec<Box<dyn Pending<E>>>,
        attempt: usize,
    ) {
        self.remote.busy = true;
        if attempt == 1 || !group.iter().any(|p| p.writes()) {
            return self.run_optimistic(ctx, group, attempt);
        }
        let store = self.shared.store.clone();
        let id = self.id;
        ctx.spawn(
            async move { E::hold(&store, id).await }
                .into_actor(self)
                .map(move |held, act, ctx| act.decide_held(ctx, group, held, attempt)),
        );
    }

    fn decide_held(
        &mut self,
        ctx: &mut Context<Self>,
        mut group: Vec<Box<dyn Pending<E>>>,
        held: Result<Option<Held<E::State>>, StorageError>,
        attempt: usize,
    ) {
        let (fresh, holding) = match held {
            Ok(Some(held)) => held,
            Ok(None) => return self.run_optimistic(ctx, group, attempt),
            Err(e) => {
                let now = self.now();
                for pending in group {
                    pending.finish(Err(Failure::Storage(e.clone())), now);
                }
                return self.idle(ctx);
            }
        };
        let Some(fresh) = fresh else {
            actix::spawn(holding.release());
            tracing::warn!(entity = E::NAME, id = %self.id, "snapshot vanished; passivating");
            let now = self.now();
            for pending in group {
                pending.finish(Err(Failure::Unavailable(Unavailable::Passivated)), now);
            }
            self.passivate(ctx);
            return self.idle(ctx);
        };
        if E::revision(&fresh) != E::revision(&self.state) {
            // Another node wrote it since this one read it.
            self.shared.stats.refreshes.fetch_add(1, Ordering::Relaxed);
        }
        self.state = fresh;
        self.last_seq = Some(0);
        let decided = self.decide_group(&mut group);
        match decided.write {
            None => {
                // Reads and refusals only: decided on the stored state.
                actix::spawn(holding.release());
                let now = self.now();
                for pending in group {
                    pending.finish(Ok(&self.state), now);
                }
                self.idle(ctx);
            }
            Some(batch) => {
                ctx.spawn(
                    async move {
                        match holding.commit(&batch).await {
                            Ok(committed) => Step::Committed(committed),
                            // The database aborted the transaction (a deadlock with another
                            // batch, a serialization failure): nothing was written.
                            Err(StorageError::Unavailable(why)) => Step::Aborted(why),
                            Err(e) => Step::Failed(e),
                        }
                    }
                    .into_actor(self)
                    .map(move |step, act, ctx| {
                        act.group_done(ctx, group, decided.next, step, attempt, decided.exact)
                    }),
                );
            }
        }
    }

    /// Decides `group` in order, each command on the state the one before produced; takes
    /// out (back to the queue) the commands after a write whose revisions cannot be known.
    fn decide_group(&mut self, group: &mut Vec<Box<dyn Pending<E>>>) -> Decided<E::State> {
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
        Decided {
            next,
            write,
            // Revisions to take from the commit: one write's, or a collapsed one's.
            exact: single_write || collapsed,
        }
    }

    /// The optimistic path: see [`Self::run_group`].
    fn run_optimistic(
        &mut self,
        ctx: &mut Context<Self>,
        mut group: Vec<Box<dyn Pending<E>>>,
        attempt: usize,
    ) {
        let decided = self.decide_group(&mut group);
        let held = E::revision(&self.state);
        let store = self.shared.store.clone();
        let id = self.id;
        let write = decided.write;
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
        let (next, exact) = (decided.next, decided.exact);
        ctx.spawn(
            round_trip
                .into_actor(self)
                .map(move |step, act, ctx| act.group_done(ctx, group, next, step, attempt, exact)),
        );
    }

    /// Nothing in flight any more: start the next group, if any.
    fn idle(&mut self, ctx: &mut Context<Self>) {
        self.remote.busy = false;
        self.pump(ctx);
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
                self.shared
                    .stats
                    .group_writes
                    .fetch_add(1, Ordering::Relaxed);
                self.shared
                    .stats
                    .grouped_commands
                    .fetch_add(group.len() as u64, Ordering::Relaxed);
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
                    Ok(Some(state)) if attempt < REMOTE_MAX_DECIDES => {
                        self.state = state;
                        self.last_seq = Some(0);
                        self.load_epoch += 1;
                        if next.is_none() || attempt == 1 {
                            // A stale read or refusal, or a first lost write (the next
                            // attempt holds the record locked): decide again at once.
                            self.run_group(ctx, group, attempt + 1);
                        } else {
                            // A lost write: the other writer is busy with this record.
                            ctx.run_later(retry_delay(attempt), move |act, ctx| {
                                act.run_group(ctx, group, attempt + 1)
                            });
                        }
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
            Step::Aborted(why) if attempt < REMOTE_MAX_DECIDES => {
                tracing::debug!(entity = E::NAME, id = %self.id, %why, "transaction aborted; deciding again");
                self.shared.stats.redecides.fetch_add(1, Ordering::Relaxed);
                ctx.run_later(retry_delay(attempt), move |act, ctx| {
                    act.run_group(ctx, group, attempt + 1)
                });
                return;
            }
            Step::Aborted(why) => {
                tracing::warn!(entity = E::NAME, id = %self.id, %why, "transaction aborted too often");
                finish_all(group, Err(Failure::Storage(StorageError::Unavailable(why))));
            }
            // One command's own writes were refused (a record it read elsewhere changed, a
            // unique key it claims is taken): nothing was written, and the commands grouped
            // with it must not share its answer. The first half runs as a group, the others
            // wait in order; a group that fails again is halved again, so the command at
            // fault ends alone with its own error in a few rounds, and every other command
            // in a group that lands.
            Step::Failed(e @ (StorageError::Conflict { .. } | StorageError::Unique { .. }))
                if group.len() > 1 =>
            {
                tracing::debug!(entity = E::NAME, id = %self.id, error = %e,
                    "a grouped write was refused; running its commands apart");
                let mut first = group;
                let rest = first.split_off(first.len() / 2);
                for pending in rest.into_iter().rev() {
                    self.remote.queue.push_front(pending);
                }
                self.run_group(ctx, first, attempt);
                return;
            }
            // A command's inputs went stale (a record it read elsewhere changed) or its
            // unique key is taken: its caller decides again or refuses; nothing failed.
            Step::Failed(e @ (StorageError::Conflict { .. } | StorageError::Unique { .. })) => {
                tracing::debug!(entity = E::NAME, id = %self.id, error = %e, "write refused");
                finish_all(group, Err(Failure::Storage(e)));
            }
            Step::Failed(e) => {
                tracing::warn!(entity = E::NAME, id = %self.id, error = %e, "write failed");
                finish_all(group, Err(Failure::Storage(e)));
            }
        }
        self.idle(ctx);
    }
}
