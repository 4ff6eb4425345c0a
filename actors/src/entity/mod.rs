//! The generic entity shell: one actor per aggregate instance, holding its state in memory.
//!
//! An aggregate plugs in with an [`Entity`] impl (how to load and insert its snapshot) and
//! one `Handler` per message on [`EntityActor<ItsEntity>`]. A handler stays a few lines: it
//! calls the aggregate's pure `decide` through [`EntityActor::execute`] or answers a query
//! through [`EntityActor::read`]; the shell does the rest:
//!
//! * **Durable replies without holding the mailbox** (`docs/ARCHITECTURE.md`, "Durability"): `execute` commits
//!   the batch synchronously (an in-memory append), swaps in the new state, and returns an
//!   [`ActorResponse`] future that awaits the group-commit flush of *that* write before it
//!   replies. The entity handles its next message meanwhile. A failed commit leaves the state
//!   as it was and replies with the error. A failed flush fails the reply and reloads the
//!   state from the store.
//! * **The store decides** (`docs/scale-out.md` 4.3): a commit that loses its conditional write
//!   to another writer (another node) reloads the stored snapshot and decides the command
//!   again on it, before any reply leaves, up to [`MAX_DECIDES`] times (then 503
//!   `Contended`): a stale cache costs a retry, never a wrong answer.
//! * **Reads never reveal what a crash could undo**: `read` (and a domain rejection, which
//!   also reveals state) replies once everything this entity has written is durable. That is
//!   usually already true, and then the reply is immediate. Right after a load, the entity
//!   does not know which sequence number covers its snapshot, so its first read waits for a
//!   store-wide read barrier.
//! * **Passivation**: after `idle_timeout` without messages, or on
//!   [`Passivate`], the entity sets `passivated`, cancels its timers and removes its own
//!   registry entry if the incarnation still matches. It never calls `ctx.stop()`: the
//!   Supervisor would restart it while any `Addr` is alive, and two live actors for one id
//!   could then both write. Messages that still reach a passivated entity are bounced,
//!   unhandled, to the registry, which spawns a fresh incarnation and retries once. The old
//!   actor stops by itself when its last `Addr` is dropped and its pending replies are sent.
//! * **Supervision**: entities run under `actix::Supervisor`; if one stops itself while
//!   addressed, [`Supervised::restarting`] reloads the last persisted snapshot, so no
//!   half-applied in-memory change survives. A panic kills the actor for good (actix does not
//!   restart on panic); the registry notices the closed mailbox and respawns from storage.
//!
//! # Files
//!
//! This file holds the [`Entity`] contract, the actor and its lifecycle (load, reload,
//! passivation, supervision, mail delivery), and dispatches every command and query to the
//! entity's mode, which the store picks once per registry:
//!
//! * `local.rs`: the embedded store's group commit (decide, write in place, reply after the
//!   flush);
//! * `remote.rs`: a store other nodes write too (PostgreSQL): one write in flight per
//!   entity, the commands queued behind it decided and written together;
//! * `write_back.rs`: deferred writes (batched validation counters) and the state published
//!   for readers outside the mailbox;
//! * `shared.rs`: what the registry and its entities share (settings, the map of live
//!   entities, counters), so that neither imports the other.

use std::fmt;
use std::future::Future;
use std::hash::Hash;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::dev::MessageResponse;
use actix::prelude::*;
use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Committed, Holding, StorageError, Store};

use crate::error::ActorError;
use crate::mailbox::Mail;
use local::{in_place, FlushFailed};
use shared::Shared;

mod local;
mod remote;
pub(crate) mod shared;
mod write_back;

pub use write_back::AbsorbSoon;

/// How many times [`EntityActor::execute`] decides a command (the first time, then after
/// each conflict with another writer) before it answers
/// [`Unavailable::Contended`](crate::error::Unavailable::Contended).
pub const MAX_DECIDES: usize = 3;

/// What the runtime needs to know about an aggregate.
///
/// Implement it on a marker type (`pub enum CheckoutEntity {}`) or on the aggregate's state
/// itself.
pub trait Entity: Sized + 'static {
    /// The aggregate's typed id (see [`crate::typed_id!`]).
    type Id: Copy + Eq + Hash + fmt::Display + fmt::Debug + Send + Sync + Unpin + 'static;
    /// The in-memory state: the decoded snapshot, plus whatever the shell needs to write
    /// the next one (typically its stored revision, for `Expect::Rev`).
    type State: Send + Unpin + 'static;
    /// For logs.
    const NAME: &'static str;
    /// The store collection of the aggregate's own record: a conflict there means another
    /// writer changed the aggregate (decide again on its snapshot); a conflict on another
    /// record of the batch goes back to the caller, whose inputs were stale. `None`: every
    /// conflict is the aggregate's.
    const COLLECTION: Option<&'static str> = None;

    /// Whether a write conflict on `collection` is one on the aggregate's own record.
    fn owns(collection: &str) -> bool {
        Self::COLLECTION.is_none_or(|own| own == collection)
    }
    /// Shared by every entity of one registry and by its callers
    /// ([`crate::Registry::extension`]): what an entity publishes for readers that do not
    /// go through its mailbox. `()` for most aggregates.
    type Extension: Default + Send + Sync + 'static;

    /// Reads the snapshot of `id`; `None` if there is none. A plain store read: ready at
    /// once on the embedded store (the spawner and the shell use it in place), one round
    /// trip on PostgreSQL.
    fn load(
        store: &Store,
        id: Self::Id,
    ) -> impl Future<Output = Result<Option<Self::State>, StorageError>> + Send;

    /// The stored revision `state` was read at or written as, for the freshness checks of
    /// [`crate::RegistryConfig::check_freshness`]; `None` (the default): not checked.
    fn revision(state: &Self::State) -> Option<u64> {
        let _ = state;
        None
    }

    /// The revision of `id` in the store now (`None`: no snapshot, or not checked).
    fn stored_revision(
        store: &Store,
        id: Self::Id,
    ) -> impl Future<Output = Result<Option<u64>, StorageError>> + Send {
        let _ = (store, id);
        std::future::ready(Ok(None))
    }

    /// The snapshot of `id`, read in a transaction that holds it locked until the returned
    /// [`Holding`] commits or is released ([`Store::hold`]); `None`: the store needs no
    /// such lock (the embedded one), or this entity does not take one (the shell then
    /// decides optimistically and retries on a conflict).
    fn hold(
        store: &Store,
        id: Self::Id,
    ) -> impl Future<Output = Result<Option<Held<Self::State>>, StorageError>> + Send {
        let _ = (store, id);
        std::future::ready(Ok(None))
    }

    /// Writes a brand-new snapshot into `batch`, with `Expect::Absent` (the create path of
    /// [`crate::Registry::create`]).
    fn insert(state: &Self::State, batch: &mut Batch) -> Result<(), StorageError>;

    /// Called on the new state once its batch is committed, before it is swapped in: the
    /// place to record the revisions the write produced (`committed.revs`).
    fn on_commit(state: &mut Self::State, committed: &Committed) {
        let _ = (state, committed);
    }

    /// The entity's state is now `state`, durable once the store's sequence number
    /// `durable_after` is (readers outside the mailbox must not act on it before). `wake`
    /// asks the entity to absorb what such readers recorded ([`Entity::absorb`]) and to
    /// write it back within its interval.
    fn publish(
        ext: &Self::Extension,
        id: Self::Id,
        state: &Self::State,
        durable_after: u64,
        wake: &Recipient<AbsorbSoon>,
    ) {
        let _ = (ext, id, state, durable_after, wake);
    }

    /// Moves into `state` what readers outside the mailbox recorded (counters); returns
    /// whether `state` changed, i.e. now holds changes to write back.
    fn absorb(ext: &Self::Extension, id: Self::Id, state: &mut Self::State) -> bool {
        let _ = (ext, id, state);
        false
    }

    /// The entity leaves memory: from now on readers go through the mailbox (which spawns
    /// a new incarnation). Like [`Entity::absorb`], moves what they recorded into `state`
    /// (atomically with closing) and returns whether `state` changed.
    fn retire(ext: &Self::Extension, id: Self::Id, state: &mut Self::State) -> bool {
        let _ = (ext, id, state);
        false
    }

    /// Writes the state held in memory over the stored snapshot: the deferred write of
    /// [`EntityActor::defer`]. Entities that never defer keep the default, which writes
    /// nothing.
    fn write_back(state: &Self::State, batch: &mut Batch) -> Result<(), StorageError> {
        let _ = (state, batch);
        Ok(())
    }
}

/// A snapshot read under a lock, and the lock ([`Entity::hold`]); `None`: no snapshot.
pub type Held<S> = (Option<S>, Holding);

/// What a command handler decided.
pub enum Outcome<S, R> {
    /// Nothing to write; reply with this (after the read barrier).
    Reply(R),
    /// Commit `batch`, then hold `state` and reply with `reply` once the batch is durable.
    Commit { batch: Batch, state: S, reply: R },
}

impl<S, R> Outcome<S, R> {
    pub fn reply(reply: R) -> Self {
        Outcome::Reply(reply)
    }

    pub fn commit(batch: Batch, state: S, reply: R) -> Self {
        Outcome::Commit {
            batch,
            state,
            reply,
        }
    }
}

/// The response type of an entity handler: immediate when it can be, a future otherwise.
pub type Reply<E, T> = ActorResponse<EntityActor<E>, T>;
/// The response type of a command or query handler built with the helpers below: an
/// actor response, or an answer that the flusher thread sends to the caller itself once
/// the write it depends on is durable (one thread hop fewer than waking the actor first).
pub struct CommandReply<E: Entity, T, Er> {
    inner: ReplyKind<E, T, Er>,
}

enum ReplyKind<E: Entity, T, Er> {
    Actor(Reply<E, Result<T, ActorError<Er>>>),
    OnDurable {
        seq: u64,
        value: Result<T, ActorError<Er>>,
        store: Store,
        entity: Addr<EntityActor<E>>,
    },
}

impl<E: Entity, T, Er> CommandReply<E, T, Er> {
    fn actor(r: Reply<E, Result<T, ActorError<Er>>>) -> Self {
        CommandReply {
            inner: ReplyKind::Actor(r),
        }
    }

    /// An immediate reply.
    pub fn now(value: Result<T, ActorError<Er>>) -> Self {
        Self::actor(ActorResponse::reply(value))
    }
}

impl<E, M, T, Er> MessageResponse<EntityActor<E>, M> for CommandReply<E, T, Er>
where
    E: Entity,
    M: Message<Result = Result<T, ActorError<Er>>>,
    T: Send + 'static,
    Er: Send + 'static,
{
    fn handle(
        self,
        ctx: &mut Context<EntityActor<E>>,
        tx: Option<actix::dev::OneshotSender<M::Result>>,
    ) {
        match self.inner {
            ReplyKind::Actor(r) => <Reply<E, Result<T, ActorError<Er>>> as MessageResponse<
                EntityActor<E>,
                M,
            >>::handle(r, ctx, tx),
            ReplyKind::OnDurable {
                seq,
                value,
                store,
                entity,
            } => store.on_durable(seq, move |flushed| {
                let answer = match flushed {
                    Ok(()) => value,
                    Err(e) => {
                        entity.do_send(FlushFailed(e.clone()));
                        Err(ActorError::Storage(e))
                    }
                };
                if let Some(tx) = tx {
                    let _ = tx.send(answer);
                }
            }),
        }
    }
}

/// Passivates the entity now (tests, shutdown, admin). Replies `false` if it already was.
#[derive(Debug, Clone, Copy)]
pub struct Passivate;

impl Message for Passivate {
    type Result = bool;
}

/// Re-reads the entity's snapshot from the store (after a write that bypassed the actor).
/// Replies `false` if the entity is passivated or the reload failed (it then passivates).
#[derive(Debug, Clone, Copy)]
pub struct Reload;

impl Message for Reload {
    type Result = bool;
}

/// The actor of one aggregate instance. See the module docs.
pub struct EntityActor<E: Entity> {
    id: E::Id,
    state: E::State,
    incarnation: u64,
    shared: Arc<Shared<E>>,
    /// Sequence number of this entity's last write; `None` right after a load, when the
    /// snapshot's own number is unknown and the next read waits for a store-wide barrier.
    last_seq: Option<u64>,
    /// Bumped by every load, so a read barrier started before a reload cannot vouch for
    /// the reloaded snapshot.
    load_epoch: u64,
    passivated: bool,
    last_activity: Instant,
    idle_timer: Option<SpawnHandle>,
    /// The state holds changes not written yet (see [`EntityActor::defer`]).
    dirty: bool,
    write_back_timer: Option<SpawnHandle>,
    /// The sequence number the published state is durable after.
    published_after: u64,
    /// Commands waiting for, or decided in, the write in flight (remote stores only).
    remote: remote::Pipeline<E>,
    _entity: PhantomData<fn() -> E>,
}

impl<E: Entity> EntityActor<E> {
    pub(crate) fn new(
        id: E::Id,
        state: E::State,
        incarnation: u64,
        shared: Arc<Shared<E>>,
        last_seq: Option<u64>,
    ) -> Self {
        shared.stats.running.fetch_add(1, Ordering::Relaxed);
        Self {
            id,
            state,
            incarnation,
            shared,
            last_seq,
            load_epoch: 0,
            passivated: false,
            last_activity: Instant::now(),
            idle_timer: None,
            dirty: false,
            write_back_timer: None,
            published_after: 0,
            remote: remote::Pipeline::default(),
            _entity: PhantomData,
        }
    }

    pub fn id(&self) -> E::Id {
        self.id
    }

    pub fn state(&self) -> &E::State {
        &self.state
    }

    /// Which spawn of this id this actor is (unique per registry).
    pub fn incarnation(&self) -> u64 {
        self.incarnation
    }

    /// The current time from the registry's clock; domain code gets it as an argument.
    pub fn now(&self) -> DateTime<Utc> {
        self.shared.clock.now()
    }

    pub fn store(&self) -> &Store {
        &self.shared.store
    }

    /// Runs a command: `decide` sees the current state and the time and returns an
    /// [`Outcome`] (or an error, replied after the read barrier). A commit is applied as
    /// described in the module docs.
    ///
    /// **The store decides.** Every write of an aggregate is conditional on the revision
    /// its state was read at. If another writer (another node, or a handler writing the
    /// record directly) got there first, the commit fails with a conflict before any reply
    /// has left: the entity reloads the stored snapshot and runs `decide` again on it, up
    /// to [`MAX_DECIDES`] times, then answers
    /// [`Unavailable::Contended`](crate::error::Unavailable::Contended) (a 503). A stale
    /// in-memory state can cost a retry, never a wrong answer.
    pub fn execute<R, Er, F>(
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
        if self.shared.remote {
            return self.execute_remote(ctx, decide);
        }
        self.execute_local(ctx, decide)
    }

    /// Answers a query from the current state (with whatever readers outside the mailbox
    /// recorded), once that state is durable.
    pub fn read<T, Er, F>(&mut self, ctx: &mut Context<Self>, query: F) -> CommandReply<E, T, Er>
    where
        T: 'static,
        Er: 'static,
        F: FnOnce(&E::State, DateTime<Utc>) -> Result<T, ActorError<Er>> + 'static,
    {
        if self.shared.remote {
            return self.read_remote(ctx, query);
        }
        self.read_local(ctx, query)
    }

    /// Replaces the in-memory state with the stored snapshot. If it cannot be read (or no
    /// longer exists), the entity passivates: the next request goes through the spawner,
    /// which loads again and reports the error to its caller.
    pub(crate) fn reload(&mut self, ctx: &mut Context<Self>) -> bool {
        if self.passivated {
            return false;
        }
        if self.shared.remote {
            // A network read: the mailbox waits for it, so no message sees a stale state.
            let store = self.shared.store.clone();
            let id = self.id;
            ctx.wait(
                async move { E::load(&store, id).await }
                    .into_actor(self)
                    .map(|loaded, act, ctx| {
                        act.reloaded(ctx, loaded);
                    }),
            );
            return true;
        }
        let loaded = in_place(E::load(&self.shared.store, self.id));
        self.reloaded(ctx, loaded)
    }

    /// Holds a snapshot just read by a reload (or passivates if there is none).
    fn reloaded(
        &mut self,
        ctx: &mut Context<Self>,
        loaded: Result<Option<E::State>, StorageError>,
    ) -> bool {
        if self.passivated {
            return false;
        }
        match loaded {
            Ok(Some(state)) => {
                self.state = state;
                self.last_seq = None;
                self.load_epoch += 1;
                let after = self.shared.store.last_committed();
                self.publish(ctx, after);
                true
            }
            Ok(None) => {
                tracing::warn!(entity = E::NAME, id = %self.id, "snapshot vanished; passivating");
                self.passivate(ctx);
                false
            }
            Err(e) => {
                tracing::error!(entity = E::NAME, id = %self.id, error = %e,
                    "cannot reload snapshot; passivating");
                self.passivate(ctx);
                false
            }
        }
    }

    /// See the module docs: never `ctx.stop()`.
    pub(crate) fn passivate(&mut self, ctx: &mut Context<Self>) {
        if self.passivated {
            return;
        }
        // Readers outside the mailbox go through it again from now on; what they recorded
        // and every deferred change go to the store before the entry leaves the map, so
        // the next incarnation loads them.
        if E::retire(&self.shared.ext, self.id, &mut self.state) {
            self.dirty = true;
        }
        // Passivated first: nothing below may publish this state again.
        self.passivated = true;
        self.abandon_queue();
        self.write_back(ctx);
        if let Some(timer) = self.idle_timer.take() {
            ctx.cancel_future(timer);
        }
        let incarnation = self.incarnation;
        self.shared
            .map
            .remove_if(&self.id, |_, entry| entry.incarnation == incarnation);
        self.shared
            .stats
            .passivations
            .fetch_add(1, Ordering::Relaxed);
        tracing::debug!(entity = E::NAME, id = %self.id, incarnation, "passivated");
    }

    fn arm_idle_timer(&mut self, ctx: &mut Context<Self>) {
        let Some(idle) = self.shared.config.idle_timeout else {
            return;
        };
        if let Some(timer) = self.idle_timer.take() {
            ctx.cancel_future(timer);
        }
        // Checked a few times per period, so an entity passivates between 1 and 1.25 idle
        // periods after its last message, without re-arming a timer per message.
        let tick = (idle / 4).max(Duration::from_millis(1));
        self.idle_timer = Some(ctx.run_interval(tick, move |act, ctx| {
            if act.last_activity.elapsed() >= idle {
                act.passivate(ctx);
            }
        }));
    }

    #[cfg(test)]
    pub(crate) fn state_mut(&mut self) -> &mut E::State {
        &mut self.state
    }
}

impl<E: Entity> Actor for EntityActor<E> {
    type Context = Context<Self>;

    /// Also runs after every supervisor restart.
    fn started(&mut self, ctx: &mut Self::Context) {
        // Kept for fidelity; the effective bound is the registry's per-entity slot counter
        // (see `mailbox`), since actix applies this capacity per `Addr` clone.
        ctx.set_mailbox_capacity(self.shared.config.mailbox_capacity);
        if !self.passivated {
            self.arm_idle_timer(ctx);
            // Durable once everything committed so far is (the loaded snapshot's own
            // sequence number is unknown).
            let after = self
                .last_seq
                .unwrap_or_else(|| self.shared.store.last_committed());
            self.publish(ctx, after);
        }
    }

    /// Also runs before every supervisor restart, so it must not touch the registry entry.
    /// (An entity stops for good only once no `Addr` is left, i.e. after it left the map.)
    fn stopped(&mut self, _ctx: &mut Self::Context) {
        tracing::debug!(entity = E::NAME, id = %self.id, incarnation = self.incarnation,
            passivated = self.passivated, "stopped");
    }
}

impl<E: Entity> Supervised for EntityActor<E> {
    fn restarting(&mut self, ctx: &mut Self::Context) {
        self.shared.stats.restarts.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(entity = E::NAME, id = %self.id, "restarting from the stored snapshot");
        self.idle_timer = None; // the restart cancelled every context future
        self.restarted();
        self.reload(ctx);
    }
}

impl<E: Entity> Drop for EntityActor<E> {
    fn drop(&mut self) {
        self.shared.stats.running.fetch_sub(1, Ordering::Relaxed);
    }
}

impl<E, M> Handler<Mail<M>> for EntityActor<E>
where
    E: Entity,
    M: Message + Send + 'static,
    M::Result: Send,
    // The `Actor<Context = ..>` bound restates what the impl above says: without it, the
    // `Handler<M>` bound hides that impl and rustc cannot normalize `Self::Context`.
    Self: Handler<M> + Actor<Context = Context<Self>>,
{
    type Result = ();

    fn handle(&mut self, mut mail: Mail<M>, ctx: &mut Context<Self>) {
        mail.release_slot();
        if self.passivated {
            // Dropping the unopened mail bounces the message to the registry, which retries
            // it on a fresh incarnation.
            return;
        }
        let Some((msg, reply)) = mail.open() else {
            return;
        };
        self.last_activity = Instant::now();
        let response = <Self as Handler<M>>::handle(self, msg, ctx);
        MessageResponse::<Self, M>::handle(response, ctx, Some(reply));
    }
}

impl<E: Entity> Handler<Passivate> for EntityActor<E> {
    type Result = bool;

    fn handle(&mut self, _: Passivate, ctx: &mut Context<Self>) -> bool {
        if self.passivated {
            return false;
        }
        self.passivate(ctx);
        true
    }
}

impl<E: Entity> Handler<Reload> for EntityActor<E> {
    type Result = bool;

    /// On a remote store the reload is under way when this answers (the mailbox waits
    /// for it, so the next message sees the reloaded state).
    fn handle(&mut self, _: Reload, ctx: &mut Context<Self>) -> bool {
        self.reload(ctx)
    }
}
