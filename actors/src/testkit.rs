//! A tiny aggregate for the runtime's tests: a counter with a limit, stored as a `Record`.
//! It shows the whole plug-in surface: an `Entity` impl and thin handlers built on
//! `execute`/`read`. The last messages are test probes (crash, panic, slow, hold).

use std::time::Duration;

use actix::prelude::*;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use tollgate_storage::{codec, Batch, Committed, Expect, Record, StorageError, Store};

use crate::entity::{CommandReply, Entity, EntityActor, Outcome};
use crate::error::ActorError;

crate::typed_id!(pub CounterId);

/// The stored snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterRecord {
    pub id: CounterId,
    pub value: u64,
    pub limit: u64,
}

impl Record for CounterRecord {
    const COLLECTION: &'static str = "test_counter";
    const VERSION: u16 = 1;

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        match version {
            1 => codec::decode(Self::COLLECTION, version, payload),
            v => Err(codec::unknown_version(Self::COLLECTION, v)),
        }
    }
}

/// The in-memory state: the snapshot and its stored revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterState {
    pub record: CounterRecord,
    pub rev: u64,
}

impl CounterState {
    pub fn new(id: CounterId, limit: u64) -> Self {
        Self {
            record: CounterRecord {
                id,
                value: 0,
                limit,
            },
            rev: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CounterError {
    #[error("limit reached")]
    LimitReached,
}

pub enum Counter {}

impl Entity for Counter {
    type Id = CounterId;
    type State = CounterState;
    const NAME: &'static str = "counter";
    type Extension = ();

    async fn load(store: &Store, id: CounterId) -> Result<Option<CounterState>, StorageError> {
        Ok(store
            .get::<CounterRecord>(&id.key())
            .await?
            .map(|stored| CounterState {
                record: stored.value,
                rev: stored.rev,
            }))
    }

    fn insert(state: &CounterState, batch: &mut Batch) -> Result<(), StorageError> {
        batch.put(&state.record, Expect::Absent)?;
        Ok(())
    }

    fn revision(state: &CounterState) -> Option<u64> {
        Some(state.rev)
    }

    async fn stored_revision(store: &Store, id: CounterId) -> Result<Option<u64>, StorageError> {
        store.revision::<CounterRecord>(&id.key()).await
    }

    fn on_commit(state: &mut CounterState, committed: &Committed) {
        if let Some(rev) = committed.revs.first() {
            state.rev = *rev;
        }
    }
}

/// The pure rule, as a real aggregate's `decide.rs` would have it.
fn increment(record: &CounterRecord) -> Result<CounterRecord, CounterError> {
    if record.value >= record.limit {
        return Err(CounterError::LimitReached);
    }
    Ok(CounterRecord {
        value: record.value + 1,
        ..record.clone()
    })
}

/// Adds one, up to the limit; replies the new value once it is durable.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<u64, ActorError<CounterError>>")]
pub struct Increment;

impl Handler<Increment> for EntityActor<Counter> {
    type Result = CommandReply<Counter, u64, CounterError>;

    fn handle(&mut self, _: Increment, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, |s, _now| {
            let next = increment(&s.record).map_err(ActorError::Domain)?;
            let mut batch = Batch::new();
            batch.put(&next, Expect::Rev(s.rev))?;
            let value = next.value;
            let state = CounterState {
                record: next,
                rev: s.rev,
            };
            Ok(Outcome::commit(batch, state, value))
        })
    }
}

/// Probe: an increment whose record another writer (another node) changes, by +10, while
/// the first `races` decisions are made: each of those conditional writes loses.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<u64, ActorError<CounterError>>")]
pub struct IncrementAgainstRacer {
    pub races: usize,
}

impl Handler<IncrementAgainstRacer> for EntityActor<Counter> {
    type Result = CommandReply<Counter, u64, CounterError>;

    fn handle(&mut self, msg: IncrementAgainstRacer, ctx: &mut Context<Self>) -> Self::Result {
        let store = self.store().clone();
        let mut raced = 0;
        self.execute(ctx, move |s, _now| {
            if raced < msg.races {
                raced += 1;
                let mut theirs = s.record.clone();
                theirs.value += 10;
                let mut batch = Batch::new();
                batch.put(&theirs, Expect::Any)?;
                ready(store.commit(&batch))?;
            }
            let next = increment(&s.record).map_err(ActorError::Domain)?;
            let mut batch = Batch::new();
            batch.put(&next, Expect::Rev(s.rev))?;
            let value = next.value;
            let state = CounterState {
                record: next,
                rev: s.rev,
            };
            Ok(Outcome::commit(batch, state, value))
        })
    }
}

/// The whole in-memory state.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<CounterState, ActorError<CounterError>>")]
pub struct Get;

impl Handler<Get> for EntityActor<Counter> {
    type Result = CommandReply<Counter, CounterState, CounterError>;

    fn handle(&mut self, _: Get, ctx: &mut Context<Self>) -> Self::Result {
        self.read(ctx, |s, _now| Ok(s.clone()))
    }
}

/// Probe: corrupts the in-memory value without persisting it, then stops the actor while
/// the registry still holds its address (so the supervisor restarts it).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Crash {
    pub set_value_to: u64,
}

impl Handler<Crash> for EntityActor<Counter> {
    type Result = ();

    fn handle(&mut self, msg: Crash, ctx: &mut Context<Self>) {
        self.state_mut().record.value = msg.set_value_to;
        ctx.stop();
    }
}

/// Probe: panics in the handler (actix does not restart a panicked actor).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Panic;

impl Handler<Panic> for EntityActor<Counter> {
    type Result = ();

    fn handle(&mut self, _: Panic, _ctx: &mut Context<Self>) {
        panic!("probe panic");
    }
}

/// Probe: replies after the given delay, without blocking the thread or the mailbox.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Slow(pub Duration);

impl Handler<Slow> for EntityActor<Counter> {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, Slow(delay): Slow, _ctx: &mut Context<Self>) -> Self::Result {
        Box::pin(tokio::time::sleep(delay))
    }
}

/// Probe: holds the mailbox (not the thread) until `release` fires; `entered` fires when
/// the handler starts.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Hold {
    pub entered: oneshot::Sender<()>,
    pub release: oneshot::Receiver<()>,
}

impl Handler<Hold> for EntityActor<Counter> {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, msg: Hold, _ctx: &mut Context<Self>) -> Self::Result {
        let _ = msg.entered.send(());
        AtomicResponse::new(Box::pin(msg.release.into_actor(self).map(|_, _, _| ())))
    }
}

/// Writes a counter straight into the store (as another writer would) and waits until it
/// is durable.
pub async fn put_counter(store: &Store, record: &CounterRecord, expect: Expect) -> u64 {
    let mut batch = Batch::new();
    batch.put(record, expect).unwrap();
    store.commit_durable(&batch).await.unwrap().revs[0]
}

/// The stored counter.
pub async fn stored(store: &Store, id: CounterId) -> Option<(CounterRecord, u64)> {
    store
        .get::<CounterRecord>(&id.key())
        .await
        .unwrap()
        .map(|s| (s.value, s.rev))
}

/// The output of a store future on the embedded store, which answers at its first poll
/// (tests run there).
pub fn ready<T>(f: impl std::future::Future<Output = T>) -> T {
    use futures_util::FutureExt;
    f.now_or_never()
        .expect("the embedded store answers at the first poll")
}
