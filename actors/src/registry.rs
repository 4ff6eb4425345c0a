//! Find-or-spawn by id, bounded delivery with a timeout, and eviction.
//!
//! * **Fast path**: a `DashMap<Id, Entry { addr, incarnation }>` read on the caller's own
//!   thread (an HTTP worker), no actor hop.
//! * **Slow path**: on a miss, a `GetOrSpawn` message to the *spawner* of the id's shard.
//!   There is one spawner actor per arbiter and an id always maps to the same one
//!   (`hash(id) % N`), so concurrent misses for one id queue on one actor, which checks the
//!   map again before it loads: an id is never spawned twice, while misses for different ids
//!   load in parallel on N threads. The spawner loads the snapshot (missing: `NotFound`,
//!   unless the caller creates it), starts the entity with
//!   `Supervisor::start_in_arbiter` on that shard's arbiter and publishes the entry.
//! * **Delivery** ([`Registry::send`]): the message goes in a [`Mail`] with its own reply
//!   channel, after claiming one of the entity's `mailbox_capacity` slots (full:
//!   `Unavailable::MailboxFull` at once). The whole call, spawn included, is bounded by
//!   `send_timeout` (`Unavailable::Timeout`).
//! * **Retry once**: a message that comes back unhandled (the entity was passivated, or its
//!   mailbox was closed because the actor died) was never applied. The registry evicts the
//!   stale entry (only if the incarnation matches), finds or spawns a fresh incarnation, which
//!   loads from storage, and delivers the message again. A reply that is lost *after* the
//!   entity took the message is not retried: the command may have been applied, so the caller
//!   gets `Unavailable::ReplyLost` (clients retry with an idempotency key).
//!
//! Entities never call the registry and never await other actors; they only
//! remove their own entry when they passivate.

use std::collections::hash_map::RandomState;
use std::convert::Infallible;
use std::hash::BuildHasher;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use actix::dev::SendError;
use actix::prelude::*;
use dashmap::DashMap;
use futures_util::FutureExt;
use tokio::sync::oneshot;
use tollgate_storage::{Batch, StorageError, Store};

use crate::clock::SharedClock;
use crate::entity::shared::{Counters, Entry, Shared};
use crate::entity::{Entity, EntityActor, Passivate, Reload};
use crate::error::{ActorError, Unavailable};
use crate::mailbox::{Mail, Slot};

pub use crate::entity::shared::RegistryConfig;

/// Gauges and counters of one registry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegistryStats {
    /// Entities in the map, i.e. accepting messages.
    pub live: usize,
    /// Entity actors that exist, passivated ones that still finish their replies included.
    pub running: usize,
    pub spawned_total: u64,
    pub restarts_total: u64,
    pub passivations_total: u64,
    /// Deferred changes written (one per entity and interval at most).
    pub write_backs_total: u64,
    /// Messages sent through [`Registry::send`] (and `call`), answered or not.
    pub sends_total: u64,
    /// Their total time, from the send to the reply (mailbox wait, handling and the durable
    /// write the reply waits for), in seconds.
    pub send_seconds_total: f64,
    /// Sends refused as unavailable (503), by reason ([`Unavailable::ALL`] order).
    pub unavailable_total: [(&'static str, u64); 6],
    /// Commands decided again after their conditional write lost to another writer.
    pub redecides_total: u64,
    /// Snapshots reloaded because another writer changed them before an answer that
    /// writes nothing (with `check_freshness`).
    pub refreshes_total: u64,
    /// On a remote store: writes (transactions) the entities' command groups made, and the
    /// commands decided in them (commands per write = the coalescing).
    pub group_writes_total: u64,
    pub grouped_commands_total: u64,
}

struct Inner<E: Entity> {
    shared: Arc<Shared<E>>,
    spawners: Vec<Addr<Spawner<E>>>,
    arbiters: Vec<Arbiter>,
    hasher: RandomState,
}

impl<E: Entity> Drop for Inner<E> {
    fn drop(&mut self) {
        for arbiter in &self.arbiters {
            arbiter.stop();
        }
    }
}

/// The registry of one aggregate type. Cheap to clone; the arbiters stop when the last
/// clone is dropped (or on [`Registry::stop`]).
pub struct Registry<E: Entity> {
    inner: Arc<Inner<E>>,
}

impl<E: Entity> Clone for Registry<E> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

enum Delivery<M: Message> {
    Replied(M::Result),
    /// Came back unhandled: safe to retry.
    Bounced(M),
    Failed(ActorError),
}

impl<E: Entity> Registry<E> {
    /// Starts the arbiters and spawners. Must run inside an actix `System`.
    pub fn start(store: Store, clock: SharedClock, config: RegistryConfig) -> io::Result<Self> {
        if System::try_current().is_none() {
            return Err(io::Error::other(
                "the actor registry must be started inside an actix System",
            ));
        }
        let threads = match config.arbiters {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let config = RegistryConfig {
            arbiters: threads,
            mailbox_capacity: config.mailbox_capacity.max(1),
            ..config
        };
        let shared = Arc::new(Shared {
            remote: store.is_shared(),
            store,
            clock,
            config,
            map: DashMap::new(),
            ext: E::Extension::default(),
            stats: Counters::default(),
            next_incarnation: AtomicU64::new(0),
        });
        let mut arbiters = Vec::with_capacity(threads);
        let mut spawners = Vec::with_capacity(threads);
        for _ in 0..threads {
            let arbiter = Arbiter::try_new()?;
            let handle = arbiter.handle();
            let spawner = Spawner::start_in_arbiter(&handle, {
                let shared = shared.clone();
                let handle = handle.clone();
                move |_| Spawner {
                    shared,
                    arbiter: handle,
                }
            });
            arbiters.push(arbiter);
            spawners.push(spawner);
        }
        tracing::debug!(entity = E::NAME, arbiters = threads, "registry started");
        Ok(Self {
            inner: Arc::new(Inner {
                shared,
                spawners,
                arbiters,
                hasher: RandomState::new(),
            }),
        })
    }

    /// Finds or spawns the entity `id` and sends it `msg`: the runtime layer only. For
    /// messages that reply `Result<T, ActorError<Er>>`, [`Registry::call`] flattens both.
    pub async fn send<M>(&self, id: E::Id, msg: M) -> Result<M::Result, ActorError>
    where
        M: Message + Send + 'static,
        M::Result: Send,
        EntityActor<E>: Handler<M> + Actor<Context = Context<EntityActor<E>>>,
    {
        let shared = self.shared();
        let started = std::time::Instant::now();
        let result =
            match tokio::time::timeout(shared.config.send_timeout, self.send_with_retry(id, msg))
                .await
            {
                Ok(result) => result,
                Err(_elapsed) => Err(ActorError::Unavailable(Unavailable::Timeout)),
            };
        let took = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        shared.stats.sends.fetch_add(1, Ordering::Relaxed);
        shared.stats.send_nanos.fetch_add(took, Ordering::Relaxed);
        if let Err(ActorError::Unavailable(why)) = &result {
            if let Some(n) = shared.stats.unavailable.get(why.index()) {
                n.fetch_add(1, Ordering::Relaxed);
            }
        }
        result
    }

    /// [`Registry::send`] for a command or query that replies `Result<T, ActorError<Er>>`:
    /// one error type for the handler to map.
    pub async fn call<M, T, Er>(&self, id: E::Id, msg: M) -> Result<T, ActorError<Er>>
    where
        M: Message<Result = Result<T, ActorError<Er>>> + Send + 'static,
        T: Send + 'static,
        Er: Send + 'static,
        EntityActor<E>: Handler<M> + Actor<Context = Context<EntityActor<E>>>,
    {
        self.send(id, msg)
            .await
            .map_err(ActorError::<Infallible>::widen)
            .and_then(|reply| reply)
    }

    /// Writes the first snapshot of `id` (`Entity::insert`, which must expect the record to
    /// be absent) and starts its entity. Resolves once the write is durable. Fails with
    /// `AlreadyExists` if the id is live or stored.
    pub async fn create(&self, id: E::Id, state: E::State) -> Result<(), ActorError> {
        let timeout = self.shared().config.send_timeout;
        match tokio::time::timeout(timeout, self.spawn(id, Some(state))).await {
            Ok(result) => result.map(|_| ()),
            Err(_elapsed) => Err(ActorError::Unavailable(Unavailable::Timeout)),
        }
    }

    /// Passivates the live entity `id`, if any. Returns whether one was live.
    pub async fn passivate(&self, id: E::Id) -> Result<bool, ActorError> {
        let Some(entry) = self.lookup(id) else {
            return Ok(false);
        };
        match entry
            .addr
            .send(Passivate)
            .timeout(self.shared().config.send_timeout)
            .await
        {
            Ok(passivated) => Ok(passivated),
            Err(MailboxError::Closed) => {
                self.evict(id, entry.incarnation);
                Ok(true)
            }
            Err(MailboxError::Timeout) => Err(ActorError::Unavailable(Unavailable::Timeout)),
        }
    }

    /// Passivates every live entity, each writing its deferred changes first (a graceful
    /// stop). Returns how many were passivated.
    pub async fn passivate_all(&self) -> usize {
        let ids: Vec<E::Id> = self.shared().map.iter().map(|e| *e.key()).collect();
        let mut n = 0;
        for chunk in ids.chunks(256) {
            let results =
                futures_util::future::join_all(chunk.iter().map(|id| self.passivate(*id))).await;
            n += results.iter().filter(|r| matches!(r, Ok(true))).count();
        }
        n
    }

    /// Makes the live entity `id`, if any, re-read its snapshot (after a write that did not
    /// go through it). Returns whether a live entity reloaded.
    pub async fn reload(&self, id: E::Id) -> Result<bool, ActorError> {
        let Some(entry) = self.lookup(id) else {
            return Ok(false);
        };
        match entry
            .addr
            .send(Reload)
            .timeout(self.shared().config.send_timeout)
            .await
        {
            Ok(reloaded) => Ok(reloaded),
            Err(MailboxError::Closed) => {
                self.evict(id, entry.incarnation);
                Ok(false)
            }
            Err(MailboxError::Timeout) => Err(ActorError::Unavailable(Unavailable::Timeout)),
        }
    }

    /// Number of live (registered) entities: the gauge to export.
    pub fn live_count(&self) -> usize {
        self.shared().map.len()
    }

    pub fn is_live(&self, id: E::Id) -> bool {
        self.shared().map.contains_key(&id)
    }

    pub fn stats(&self) -> RegistryStats {
        let shared = self.shared();
        RegistryStats {
            live: shared.map.len(),
            running: shared.stats.running.load(Ordering::Relaxed),
            spawned_total: shared.stats.spawned.load(Ordering::Relaxed),
            restarts_total: shared.stats.restarts.load(Ordering::Relaxed),
            passivations_total: shared.stats.passivations.load(Ordering::Relaxed),
            write_backs_total: shared.stats.write_backs.load(Ordering::Relaxed),
            redecides_total: shared.stats.redecides.load(Ordering::Relaxed),
            refreshes_total: shared.stats.refreshes.load(Ordering::Relaxed),
            group_writes_total: shared.stats.group_writes.load(Ordering::Relaxed),
            grouped_commands_total: shared.stats.grouped_commands.load(Ordering::Relaxed),
            sends_total: shared.stats.sends.load(Ordering::Relaxed),
            send_seconds_total: shared.stats.send_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            unavailable_total: Unavailable::ALL.map(|why| {
                let n = shared
                    .stats
                    .unavailable
                    .get(why.index())
                    .map_or(0, |n| n.load(Ordering::Relaxed));
                (why.reason(), n)
            }),
        }
    }

    /// What the entities publish for readers outside their mailboxes.
    pub fn extension(&self) -> &E::Extension {
        &self.shared().ext
    }

    /// The store the entities write to.
    pub fn store(&self) -> &Store {
        &self.shared().store
    }

    pub fn config(&self) -> &RegistryConfig {
        &self.shared().config
    }

    /// Stops the arbiters (and with them every entity and spawner) without waiting. Later
    /// sends fail with `Unavailable::Closed`.
    pub fn stop(&self) {
        for arbiter in &self.inner.arbiters {
            arbiter.stop();
        }
    }

    fn shared(&self) -> &Shared<E> {
        &self.inner.shared
    }

    async fn send_with_retry<M>(&self, id: E::Id, msg: M) -> Result<M::Result, ActorError>
    where
        M: Message + Send + 'static,
        M::Result: Send,
        EntityActor<E>: Handler<M> + Actor<Context = Context<EntityActor<E>>>,
    {
        let entry = self.find_or_spawn(id).await?;
        let msg = match self.deliver(id, &entry, msg).await {
            Delivery::Replied(reply) => return Ok(reply),
            Delivery::Failed(e) => return Err(e),
            Delivery::Bounced(msg) => msg,
        };
        tracing::debug!(entity = E::NAME, %id, incarnation = entry.incarnation,
            "message bounced; retrying on a fresh incarnation");
        self.evict(id, entry.incarnation);
        let entry = self.find_or_spawn(id).await?;
        match self.deliver(id, &entry, msg).await {
            Delivery::Replied(reply) => Ok(reply),
            Delivery::Failed(e) => Err(e),
            Delivery::Bounced(_) => {
                self.evict(id, entry.incarnation);
                Err(ActorError::Unavailable(Unavailable::Passivated))
            }
        }
    }

    async fn find_or_spawn(&self, id: E::Id) -> Result<Entry<E>, ActorError> {
        match self.lookup(id) {
            Some(entry) => Ok(entry),
            None => self.spawn(id, None).await,
        }
    }

    /// The slow path: ask the id's spawner.
    async fn spawn(&self, id: E::Id, create: Option<E::State>) -> Result<Entry<E>, ActorError> {
        let shard = self.shard(&id);
        let Some(spawner) = self.inner.spawners.get(shard) else {
            return Err(ActorError::Unavailable(Unavailable::Closed));
        };
        spawner
            .send(GetOrSpawn { id, create })
            .await
            .map_err(|_| ActorError::Unavailable(Unavailable::Closed))?
    }

    async fn deliver<M>(&self, id: E::Id, entry: &Entry<E>, msg: M) -> Delivery<M>
    where
        M: Message + Send + 'static,
        M::Result: Send,
        EntityActor<E>: Handler<M> + Actor<Context = Context<EntityActor<E>>>,
    {
        let capacity = self.shared().config.mailbox_capacity;
        let Some(slot) = Slot::acquire(&entry.queued, capacity) else {
            return Delivery::Failed(ActorError::Unavailable(Unavailable::MailboxFull));
        };
        let (reply_tx, reply_rx) = oneshot::channel();
        let (bounce_tx, mut bounce_rx) = oneshot::channel();
        let mail = Mail::new(msg, reply_tx, bounce_tx, slot);
        // `entry.addr` is this call's own clone, so actix never parks it and `try_send` only
        // fails on a closed mailbox; the capacity is the slot counter above.
        if let Err(err) = entry.addr.try_send::<Mail<M>>(mail) {
            let full = matches!(err, SendError::Full(_));
            return match (full, err.into_inner().into_message()) {
                (false, Some(msg)) => Delivery::Bounced(msg),
                (true, _) => Delivery::Failed(ActorError::Unavailable(Unavailable::MailboxFull)),
                (false, None) => Delivery::Failed(ActorError::Unavailable(Unavailable::Closed)),
            };
        }
        match reply_rx.await {
            Ok(reply) => Delivery::Replied(reply),
            Err(_) => match bounce_rx.try_recv() {
                Ok(msg) => Delivery::Bounced(msg),
                Err(_) => {
                    if !entry.addr.connected() {
                        self.evict(id, entry.incarnation);
                    }
                    Delivery::Failed(ActorError::Unavailable(Unavailable::ReplyLost))
                }
            },
        }
    }

    pub(crate) fn lookup(&self, id: E::Id) -> Option<Entry<E>> {
        self.shared()
            .map
            .get(&id)
            .map(|entry| entry.value().clone())
    }

    /// Removes the entry of `id` if it is still this incarnation.
    fn evict(&self, id: E::Id, incarnation: u64) {
        self.shared()
            .map
            .remove_if(&id, |_, entry| entry.incarnation == incarnation);
    }

    fn shard(&self, id: &E::Id) -> usize {
        let shards = self.inner.spawners.len().max(1);
        // The remainder is below `shards`, a usize.
        (self.inner.hasher.hash_one(id) % shards as u64) as usize
    }

    /// Puts an entry back into the map, as a caller that read it just before the entity
    /// passivated would still hold it.
    #[cfg(test)]
    pub(crate) fn insert_stale_entry(&self, id: E::Id, entry: Entry<E>) {
        self.shared().map.insert(id, entry);
    }
}

/// Starts the entities of one shard; see the module docs.
struct Spawner<E: Entity> {
    shared: Arc<Shared<E>>,
    arbiter: ArbiterHandle,
}

impl<E: Entity> Actor for Spawner<E> {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(1024);
    }
}

struct GetOrSpawn<E: Entity> {
    id: E::Id,
    /// `Some`: create the entity with this first snapshot.
    create: Option<E::State>,
}

impl<E: Entity> Message for GetOrSpawn<E> {
    type Result = Result<Entry<E>, ActorError>;
}

impl<E: Entity> Handler<GetOrSpawn<E>> for Spawner<E> {
    type Result = ActorResponse<Self, Result<Entry<E>, ActorError>>;

    fn handle(&mut self, msg: GetOrSpawn<E>, ctx: &mut Context<Self>) -> Self::Result {
        let GetOrSpawn { id, create } = msg;
        let existing = self.shared.map.get(&id).map(|entry| entry.value().clone());
        if let Some(entry) = existing {
            if entry.addr.connected() {
                return ActorResponse::reply(match create {
                    Some(_) => Err(ActorError::AlreadyExists),
                    None => Ok(entry),
                });
            }
            // The actor died (a panic): replace it.
            let dead = entry.incarnation;
            self.shared.map.remove_if(&id, |_, e| e.incarnation == dead);
        }
        if self.shared.remote {
            return self.remote(ctx, id, create);
        }
        match create {
            None => {
                let loaded = E::load(&self.shared.store, id)
                    .now_or_never()
                    .unwrap_or_else(|| Err(StorageError::Unavailable("load not ready".into())));
                ActorResponse::reply(self.loaded(id, loaded))
            }
            Some(state) => self.create(id, state),
        }
    }
}

impl<E: Entity> Spawner<E> {
    /// Starts the entity of a snapshot just read.
    fn loaded(
        &mut self,
        id: E::Id,
        loaded: Result<Option<E::State>, StorageError>,
    ) -> Result<Entry<E>, ActorError> {
        match loaded {
            Ok(Some(state)) => Ok(self.start(id, state, None)),
            Ok(None) => Err(ActorError::NotFound),
            Err(e) => Err(ActorError::Storage(e)),
        }
    }

    /// Loads or creates on a remote store: the spawner's mailbox waits for the round trip
    /// (`ctx.wait`), so two requests for one id still start one entity.
    fn remote(
        &mut self,
        ctx: &mut Context<Self>,
        id: E::Id,
        create: Option<E::State>,
    ) -> ActorResponse<Self, Result<Entry<E>, ActorError>> {
        let (tx, rx) = oneshot::channel();
        let store = self.shared.store.clone();
        match create {
            None => ctx.wait(
                async move { E::load(&store, id).await }
                    .into_actor(self)
                    .map(move |loaded, act, _| {
                        let _ = tx.send(act.loaded(id, loaded));
                    }),
            ),
            Some(mut state) => {
                let mut batch = Batch::new();
                if let Err(e) = E::insert(&state, &mut batch) {
                    return ActorResponse::reply(Err(e.into()));
                }
                ctx.wait(
                    async move { store.commit(&batch).await }
                        .into_actor(self)
                        .map(move |committed, act, _| {
                            let answer = match committed {
                                Ok(committed) => {
                                    E::on_commit(&mut state, &committed);
                                    Ok(act.start(id, state, Some(committed.seq)))
                                }
                                Err(StorageError::Conflict { .. }) => {
                                    Err(ActorError::AlreadyExists)
                                }
                                Err(e) => Err(e.into()),
                            };
                            let _ = tx.send(answer);
                        }),
                )
            }
        }
        ActorResponse::r#async(rx.into_actor(self).map(|answer, _, _| {
            answer.unwrap_or(Err(ActorError::Unavailable(Unavailable::Closed)))
        }))
    }

    fn create(
        &mut self,
        id: E::Id,
        mut state: E::State,
    ) -> ActorResponse<Self, Result<Entry<E>, ActorError>> {
        let mut batch = Batch::new();
        if let Err(e) = E::insert(&state, &mut batch) {
            return ActorResponse::reply(Err(e.into()));
        }
        let committed = match self.shared.store.commit_in_place(&batch) {
            Some(Ok(committed)) => committed,
            Some(Err(StorageError::Conflict { .. })) => {
                return ActorResponse::reply(Err(ActorError::AlreadyExists))
            }
            Some(Err(e)) => return ActorResponse::reply(Err(e.into())),
            None => return self.create_remote_unreachable(),
        };
        E::on_commit(&mut state, &committed);
        let entry = self.start(id, state, Some(committed.seq));
        let durable = self.shared.store.durable(committed.seq);
        ActorResponse::r#async(
            durable
                .into_actor(self)
                .map(move |res, _, _| res.map(|()| entry).map_err(ActorError::Storage)),
        )
    }

    /// `create` is only reached on the embedded store (remote stores take `remote`).
    fn create_remote_unreachable(&self) -> ActorResponse<Self, Result<Entry<E>, ActorError>> {
        ActorResponse::reply(Err(ActorError::Storage(StorageError::Unavailable(
            "a remote store's commit was awaited in place".into(),
        ))))
    }

    fn start(&mut self, id: E::Id, state: E::State, last_seq: Option<u64>) -> Entry<E> {
        let incarnation = self.shared.next_incarnation.fetch_add(1, Ordering::Relaxed) + 1;
        let shared = self.shared.clone();
        let addr = Supervisor::start_in_arbiter(&self.arbiter, move |_| {
            EntityActor::new(id, state, incarnation, shared, last_seq)
        });
        let entry = Entry {
            addr,
            incarnation,
            queued: Arc::new(AtomicUsize::new(0)),
        };
        self.shared.map.insert(id, entry.clone());
        self.shared.stats.spawned.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(entity = E::NAME, %id, incarnation, "spawned");
        entry
    }
}
