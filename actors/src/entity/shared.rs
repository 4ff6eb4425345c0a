//! What a registry and its entities share: the settings ([`RegistryConfig`]), the map of
//! live entities ([`Entry`]), the counters behind `RegistryStats`, and the store and
//! clock ([`Shared`]). Below both the registry and the entity shell, so that neither
//! imports the other for them: an entity reads its settings here and removes its own
//! entry from the map when it passivates; it never calls the registry.

use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use dashmap::DashMap;
use tollgate_storage::Store;

use super::{Entity, EntityActor};
use crate::clock::SharedClock;

/// Settings of one registry (one per aggregate type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryConfig {
    /// Number of arbiters (threads) the entities are spread over; 0 = one per core.
    pub arbiters: usize,
    /// Unhandled messages an entity may have queued before senders get `MailboxFull`.
    pub mailbox_capacity: usize,
    /// Bound on a whole [`crate::Registry::send`], spawn and retry included.
    pub send_timeout: Duration,
    /// An entity with no message for this long passivates; `None`: never.
    pub idle_timeout: Option<Duration>,
    /// How long a deferred change ([`EntityActor::defer`]) may stay in memory before it is
    /// written; `None`: deferred changes are written at once.
    pub write_back: Option<Duration>,
    /// Other writers may change the records (several nodes on one database): before an
    /// answer that writes nothing (a read, a refusal, a no-op), an entity checks that its
    /// revision is the stored one, and reloads (and decides again) if not. Off for a store
    /// this process alone writes, where it could only cost a read.
    pub check_freshness: bool,
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            arbiters: 0,
            mailbox_capacity: 256,
            send_timeout: Duration::from_secs(5),
            idle_timeout: Some(Duration::from_secs(300)),
            write_back: None,
            check_freshness: false,
        }
    }
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) spawned: AtomicU64,
    pub(crate) restarts: AtomicU64,
    pub(crate) passivations: AtomicU64,
    pub(crate) write_backs: AtomicU64,
    pub(crate) running: AtomicUsize,
    pub(crate) sends: AtomicU64,
    pub(crate) send_nanos: AtomicU64,
    pub(crate) unavailable: [AtomicU64; 6],
    pub(crate) redecides: AtomicU64,
    pub(crate) refreshes: AtomicU64,
    pub(crate) group_writes: AtomicU64,
    pub(crate) grouped_commands: AtomicU64,
}

/// A live entity as the map holds it.
pub(crate) struct Entry<E: Entity> {
    pub(crate) addr: Addr<EntityActor<E>>,
    pub(crate) incarnation: u64,
    /// Messages enqueued and not yet taken by the entity (see `mailbox::Slot`).
    pub(crate) queued: Arc<AtomicUsize>,
}

impl<E: Entity> Clone for Entry<E> {
    fn clone(&self) -> Self {
        Self {
            addr: self.addr.clone(),
            incarnation: self.incarnation,
            queued: self.queued.clone(),
        }
    }
}

/// What the registry, the spawners and the entities share. Holds no arbiter, so entities
/// referencing it do not keep the threads alive.
pub(crate) struct Shared<E: Entity> {
    pub(crate) store: Store,
    /// Whether other nodes write the store too: decided once, when the registry starts,
    /// and it picks every entity's mode (local group commit, or the remote pipeline).
    pub(crate) remote: bool,
    pub(crate) clock: SharedClock,
    pub(crate) config: RegistryConfig,
    pub(crate) map: DashMap<E::Id, Entry<E>>,
    pub(crate) stats: Counters,
    /// See [`Entity::Extension`].
    pub(crate) ext: E::Extension,
    /// The registry's spawners number incarnations from it.
    pub(crate) next_incarnation: AtomicU64,
}
