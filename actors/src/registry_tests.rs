//! Tests of the registry and the entity shell, with the counter of `testkit`.
//! No timing assertions: eviction is forced with `Passivate`; the only deliberate delays
//! are the slow handler of the timeout test and the idle timer of the idle test.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{join, join_all};
use tokio::sync::oneshot;
use tollgate_storage::{Expect, Store};

use crate::clock::SystemClock;
use crate::error::{ActorError, Unavailable};
use crate::registry::{Registry, RegistryConfig};
use crate::testkit::*;

fn config() -> RegistryConfig {
    RegistryConfig {
        arbiters: 2,
        mailbox_capacity: 128,
        send_timeout: Duration::from_secs(10),
        idle_timeout: None,
        write_back: None,
        check_freshness: false,
    }
}

fn registry_with(config: RegistryConfig) -> (Registry<Counter>, Store) {
    let store = Store::temporary().unwrap();
    let registry = Registry::start(store.clone(), SystemClock::shared(), config).unwrap();
    (registry, store)
}

fn registry() -> (Registry<Counter>, Store) {
    registry_with(config())
}

/// A counter stored directly (not through the registry), so the first send must load it.
async fn stored_counter(store: &Store, limit: u64) -> CounterId {
    let id = CounterId::new();
    let record = CounterRecord {
        id,
        value: 0,
        limit,
    };
    put_counter(store, &record, Expect::Absent).await;
    id
}

/// Waits (bounded) for a condition that an arbiter thread makes true asynchronously.
async fn eventually(mut condition: impl FnMut() -> bool) {
    for _ in 0..1000 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition not reached within 10 s");
}

#[actix::test]
async fn same_id_finds_the_same_actor() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 100).await;

    assert_eq!(registry.call(id, Increment).await, Ok(1));
    let first = registry.lookup(id).unwrap();
    assert_eq!(registry.call(id, Increment).await, Ok(2));
    let second = registry.lookup(id).unwrap();

    assert_eq!(first.incarnation, second.incarnation);
    assert_eq!(first.addr, second.addr);
    let stats = registry.stats();
    assert_eq!((stats.spawned_total, stats.live), (1, 1));
}

#[actix::test]
async fn concurrent_first_requests_spawn_one_actor_and_apply_each_once() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 1_000).await;

    let replies = join_all((0..50).map(|_| registry.call(id, Increment))).await;

    let mut values: Vec<u64> = replies.into_iter().map(Result::unwrap).collect();
    values.sort_unstable();
    assert_eq!(values, (1..=50).collect::<Vec<_>>());
    assert_eq!(registry.stats().spawned_total, 1);
    assert_eq!(stored(&store, id).await.unwrap().0.value, 50);
}

#[actix::test]
async fn every_acknowledged_increment_is_persisted() {
    let (registry, store) = registry();
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(stored_counter(&store, 1_000).await);
    }
    let flushes_before = store.flush_count();

    let sends = ids.iter().flat_map(|&id| {
        let registry = registry.clone();
        let store = store.clone();
        (0..10).map(move |_| {
            let registry = registry.clone();
            let store = store.clone();
            async move {
                let value = registry.call(id, Increment).await.unwrap();
                // Acknowledged => already in the store (and flushed: the reply waited for it).
                let persisted = stored(&store, id).await.unwrap().0.value;
                assert!(persisted >= value, "acked {value}, stored {persisted}");
            }
        })
    });
    join_all(sends).await;

    for &id in &ids {
        assert_eq!(stored(&store, id).await.unwrap().0.value, 10);
    }
    assert!(store.flush_count() > flushes_before);
}

#[actix::test]
async fn concurrent_increments_never_exceed_the_limit() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 10).await;

    let replies = join_all((0..40).map(|_| registry.call(id, Increment))).await;

    let accepted = replies.iter().filter(|r| r.is_ok()).count();
    let rejected = replies
        .iter()
        .filter(|r| matches!(r, Err(ActorError::Domain(CounterError::LimitReached))))
        .count();
    assert_eq!((accepted, rejected), (10, 30));
    assert_eq!(stored(&store, id).await.unwrap().0.value, 10);
}

#[actix::test]
async fn unknown_id_is_not_found_and_create_makes_it() {
    let (registry, store) = registry();
    let id = CounterId::new();

    assert_eq!(registry.call(id, Get).await, Err(ActorError::NotFound));
    assert_eq!(registry.stats().spawned_total, 0);
    assert_eq!(registry.live_count(), 0);

    registry.create(id, CounterState::new(id, 5)).await.unwrap();
    let (record, rev) = stored(&store, id).await.unwrap();
    assert_eq!((record.value, record.limit, rev), (0, 5, 1));
    assert!(registry.is_live(id));
    assert_eq!(registry.call(id, Increment).await, Ok(1));
    let state = registry.call(id, Get).await.unwrap();
    assert_eq!(state.rev, 2);

    // Twice: while live, and (from the store) after passivation.
    let again = registry.create(id, CounterState::new(id, 5)).await;
    assert_eq!(again, Err(ActorError::AlreadyExists));
    assert!(registry.passivate(id).await.unwrap());
    let again = registry.create(id, CounterState::new(id, 5)).await;
    assert_eq!(again, Err(ActorError::AlreadyExists));
    assert_eq!(stored(&store, id).await.unwrap().0.value, 1);
}

#[actix::test]
async fn passivated_entity_respawns_with_identical_state() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 100).await;
    for _ in 0..3 {
        registry.call(id, Increment).await.unwrap();
    }
    let before = registry.call(id, Get).await.unwrap();
    let old = registry.lookup(id).unwrap();

    assert!(registry.passivate(id).await.unwrap());
    assert_eq!(registry.live_count(), 0);
    assert!(!registry.passivate(id).await.unwrap());
    assert_eq!(registry.stats().passivations_total, 1);

    let after = registry.call(id, Get).await.unwrap();
    assert_eq!(after, before);
    assert_eq!(
        (after.record.clone(), after.rev),
        stored(&store, id).await.unwrap()
    );
    let new = registry.lookup(id).unwrap();
    assert_ne!(new.incarnation, old.incarnation);
    assert_eq!(registry.stats().spawned_total, 2);
    assert_eq!(registry.live_count(), 1);
}

#[actix::test]
async fn passivated_actor_stops_once_unreferenced() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 100).await;
    registry.call(id, Increment).await.unwrap();
    assert_eq!(registry.stats().running, 1);

    assert!(registry.passivate(id).await.unwrap());

    // Its timer is cancelled and no Addr is left: actix stops it (no leak).
    eventually(|| registry.stats().running == 0).await;
    assert_eq!(registry.stats().restarts_total, 0);
}

#[actix::test]
async fn message_to_a_passivated_actor_is_retried_transparently() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 100).await;
    assert_eq!(registry.call(id, Increment).await, Ok(1));
    let stale = registry.lookup(id).unwrap();
    assert!(registry.passivate(id).await.unwrap());
    // A caller that read the map just before the entity passivated still holds its entry.
    registry.insert_stale_entry(id, stale.clone());

    assert_eq!(registry.call(id, Increment).await, Ok(2));

    let fresh = registry.lookup(id).unwrap();
    assert_ne!(fresh.incarnation, stale.incarnation);
    assert_eq!(registry.stats().spawned_total, 2);
    assert_eq!(stored(&store, id).await.unwrap().0.value, 2);
}

#[actix::test]
async fn dead_actor_is_replaced_from_storage() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 100).await;
    assert_eq!(registry.call(id, Increment).await, Ok(1));
    let dead = registry.lookup(id).unwrap();

    // The panicking handler took the message: its outcome is unknown, so no retry.
    assert_eq!(
        registry.send(id, Panic).await,
        Err(ActorError::Unavailable(Unavailable::ReplyLost))
    );
    // The next message finds a closed mailbox (or is bounced from it) and is retried on a
    // fresh incarnation loaded from storage.
    assert_eq!(registry.call(id, Increment).await, Ok(2));
    assert_ne!(registry.lookup(id).unwrap().incarnation, dead.incarnation);
    assert_eq!(registry.stats().spawned_total, 2);
    assert_eq!(stored(&store, id).await.unwrap().0.value, 2);
}

#[actix::test]
async fn supervisor_restart_reloads_the_persisted_snapshot() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 100).await;
    for _ in 0..3 {
        registry.call(id, Increment).await.unwrap();
    }
    let incarnation = registry.lookup(id).unwrap().incarnation;

    // Corrupts the in-memory value without persisting it, then stops while addressed.
    registry
        .send(id, Crash { set_value_to: 999 })
        .await
        .unwrap();

    let state = registry.call(id, Get).await.unwrap();
    assert_eq!(state.record.value, 3);
    assert_eq!(
        (state.record.clone(), state.rev),
        stored(&store, id).await.unwrap()
    );
    let stats = registry.stats();
    assert_eq!((stats.restarts_total, stats.spawned_total), (1, 1));
    assert_eq!(registry.lookup(id).unwrap().incarnation, incarnation);
    // Still fully working after the restart.
    assert_eq!(registry.call(id, Increment).await, Ok(4));
}

#[actix::test]
async fn send_timeout_is_unavailable() {
    let (registry, store) = registry_with(RegistryConfig {
        send_timeout: Duration::from_millis(200),
        ..config()
    });
    let id = stored_counter(&store, 100).await;

    let slow = registry.send(id, Slow(Duration::from_secs(30))).await;
    assert_eq!(slow, Err(ActorError::Unavailable(Unavailable::Timeout)));

    // The slow reply holds neither the thread nor the mailbox.
    assert_eq!(registry.call(id, Increment).await, Ok(1));
    let stats = registry.stats();
    assert_eq!(stats.sends_total, 2);
    assert!(stats.send_seconds_total >= 0.2, "{stats:?}");
    assert!(
        stats.unavailable_total.contains(&("timeout", 1)),
        "{stats:?}"
    );
    assert!(
        stats.unavailable_total.contains(&("mailbox_full", 0)),
        "{stats:?}"
    );
}

#[actix::test]
async fn full_mailbox_is_unavailable() {
    let capacity = 4;
    let (registry, store) = registry_with(RegistryConfig {
        mailbox_capacity: capacity,
        ..config()
    });
    let id = stored_counter(&store, 100).await;

    let (entered_tx, entered_rx) = oneshot::channel();
    let (release_tx, release_rx) = oneshot::channel();
    let held = actix::spawn({
        let registry = registry.clone();
        let hold = Hold {
            entered: entered_tx,
            release: release_rx,
        };
        async move { registry.send(id, hold).await }
    });
    entered_rx.await.unwrap();

    // Every send is enqueued (or refused) on its first poll, before the release below.
    let sends = join_all((0..=capacity).map(|_| registry.call(id, Increment)));
    let (replies, ()) = join(sends, async move {
        let _ = release_tx.send(());
    })
    .await;

    let full = replies
        .iter()
        .filter(|r| **r == Err(ActorError::Unavailable(Unavailable::MailboxFull)))
        .count();
    assert_eq!(full, 1);
    assert_eq!(replies.iter().filter(|r| r.is_ok()).count(), capacity);
    held.await.unwrap().unwrap();
    assert_eq!(stored(&store, id).await.unwrap().0.value, capacity as u64);
    let stats = registry.stats();
    assert!(
        stats.unavailable_total.contains(&("mailbox_full", 1)),
        "{stats:?}"
    );
    assert_eq!(stats.sends_total, capacity as u64 + 2);
}

#[actix::test]
async fn idle_entity_passivates_itself() {
    let (registry, store) = registry_with(RegistryConfig {
        idle_timeout: Some(Duration::from_millis(50)),
        ..config()
    });
    let id = stored_counter(&store, 100).await;
    assert_eq!(registry.call(id, Increment).await, Ok(1));

    eventually(|| registry.live_count() == 0).await;
    eventually(|| registry.stats().running == 0).await;

    assert_eq!(registry.call(id, Increment).await, Ok(2));
    assert_eq!(registry.stats().spawned_total, 2);
}

#[actix::test]
async fn a_command_that_loses_to_an_outside_write_is_decided_again_on_it() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 100).await;
    assert_eq!(registry.call(id, Increment).await, Ok(1));

    // Another writer (another node) bumps the record behind the actor's back.
    let (mut record, _) = stored(&store, id).await.unwrap();
    record.value = 40;
    put_counter(&store, &record, Expect::Any).await;

    // The conditional write loses; before any reply the entity reloads and decides again
    // on what the other writer wrote: 41, never a stale 2.
    assert_eq!(registry.call(id, Increment).await, Ok(41));
    assert_eq!(stored(&store, id).await.unwrap().0.value, 41);
    assert_eq!(registry.stats().redecides_total, 1);
    assert_eq!(registry.call(id, Increment).await, Ok(42));
    assert_eq!(registry.stats().redecides_total, 1);
}

#[actix::test]
async fn an_outside_write_that_makes_the_command_invalid_gets_a_refusal_and_no_write() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 10).await;
    assert_eq!(registry.call(id, Increment).await, Ok(1));
    // The other node used the rest of the limit.
    let (mut record, _) = stored(&store, id).await.unwrap();
    record.value = 10;
    let rev = put_counter(&store, &record, Expect::Any).await;
    assert_eq!(
        registry.call(id, Increment).await,
        Err(ActorError::Domain(CounterError::LimitReached))
    );
    assert_eq!(stored(&store, id).await.unwrap(), (record, rev));
}

#[actix::test]
async fn racing_writers_cost_retries_then_a_503_never_a_wrong_answer() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 1_000).await;
    assert_eq!(registry.call(id, Increment).await, Ok(1));
    // Two lost races (values 11 and 21 written by the racer): the third decision wins.
    assert_eq!(
        registry.call(id, IncrementAgainstRacer { races: 2 }).await,
        Ok(22)
    );
    assert_eq!(stored(&store, id).await.unwrap().0.value, 22);
    // Losing every race: refused as contended (503), and only the racer's writes stand.
    let lost = registry
        .call(
            id,
            IncrementAgainstRacer {
                races: crate::entity::MAX_DECIDES,
            },
        )
        .await;
    assert_eq!(lost, Err(ActorError::Unavailable(Unavailable::Contended)));
    assert_eq!(stored(&store, id).await.unwrap().0.value, 52);
    assert_eq!(registry.stats().redecides_total, 2 + 3);
    // The entity holds the newest snapshot: the next command is decided on it.
    assert_eq!(registry.call(id, Increment).await, Ok(53));
}

#[actix::test]
async fn reload_picks_up_an_outside_write() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 100).await;
    assert_eq!(registry.call(id, Increment).await, Ok(1));
    let (mut record, _) = stored(&store, id).await.unwrap();
    record.value = 7;
    let rev = put_counter(&store, &record, Expect::Any).await;

    assert!(registry.reload(id).await.unwrap());
    let state = registry.call(id, Get).await.unwrap();
    assert_eq!((state.record.value, state.rev), (7, rev));
    assert!(!registry.reload(CounterId::new()).await.unwrap());
}

#[actix::test]
async fn registry_is_shared_across_clones_and_threads() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 1_000).await;
    let registry = Arc::new(registry);

    // Senders on other arbiters (as HTTP workers would be).
    let mut handles = Vec::new();
    for _ in 0..4 {
        let registry = registry.clone();
        let (tx, rx) = oneshot::channel();
        let arbiter = actix::Arbiter::new();
        arbiter.spawn(async move {
            let mut ok = 0;
            for _ in 0..10 {
                if registry.call(id, Increment).await.is_ok() {
                    ok += 1;
                }
            }
            let _ = tx.send(ok);
        });
        handles.push((arbiter, rx));
    }
    let mut total = 0;
    for (arbiter, rx) in handles {
        total += rx.await.unwrap();
        arbiter.stop();
    }
    assert_eq!(total, 40);
    assert_eq!(stored(&store, id).await.unwrap().0.value, 40);
    assert_eq!(registry.stats().spawned_total, 1);
}

fn checking_freshness() -> (Registry<Counter>, Store) {
    registry_with(RegistryConfig {
        check_freshness: true,
        ..config()
    })
}

#[actix::test]
async fn with_freshness_checks_a_read_shows_what_another_writer_stored() {
    let (registry, store) = checking_freshness();
    let id = stored_counter(&store, 100).await;
    assert_eq!(registry.call(id, Increment).await, Ok(1));
    let (mut record, _) = stored(&store, id).await.unwrap();
    record.value = 7;
    let rev = put_counter(&store, &record, Expect::Any).await;
    let state = registry.call(id, Get).await.unwrap();
    assert_eq!((state.record.value, state.rev), (7, rev));
    assert_eq!(registry.stats().refreshes_total, 1);
    // Current again: no further reload.
    registry.call(id, Get).await.unwrap();
    assert_eq!(registry.stats().refreshes_total, 1);
}

#[actix::test]
async fn with_freshness_checks_a_stale_refusal_is_decided_again() {
    let (registry, store) = checking_freshness();
    let id = stored_counter(&store, 2).await;
    assert_eq!(registry.call(id, Increment).await, Ok(1));
    assert_eq!(registry.call(id, Increment).await, Ok(2));
    // The cached counter is at its limit; another writer lowered it and raised the limit.
    let (mut record, _) = stored(&store, id).await.unwrap();
    record.value = 0;
    record.limit = 5;
    put_counter(&store, &record, Expect::Any).await;
    // The refusal the cache would give is not sent: decided again on the stored record.
    assert_eq!(registry.call(id, Increment).await, Ok(1));
    assert_eq!(stored(&store, id).await.unwrap().0.value, 1);
}

#[actix::test]
async fn without_freshness_checks_a_single_writer_answers_from_memory() {
    let (registry, store) = registry();
    let id = stored_counter(&store, 100).await;
    assert_eq!(registry.call(id, Increment).await, Ok(1));
    let (mut record, _) = stored(&store, id).await.unwrap();
    record.value = 7;
    put_counter(&store, &record, Expect::Any).await;
    // One process writing its own store: the cache is the truth, nothing is re-read.
    assert_eq!(registry.call(id, Get).await.unwrap().record.value, 1);
    assert_eq!(registry.stats().refreshes_total, 0);
}

/// On a shared database a command goes through the entity's pipeline; a supervisor restart
/// while a group is in flight must leave neither the entity wedged nor a caller waiting.
#[actix::test]
async fn a_restart_with_a_write_in_flight_on_a_shared_database_leaves_the_entity_working() {
    let Some(schema) = tollgate_storage::testing::fresh_schema("restart_in_flight") else {
        return;
    };
    let store = Store::postgres(&schema.url, &schema.schema, 8)
        .await
        .expect("reaching the test database");
    let registry = Registry::start(
        store.clone(),
        SystemClock::shared(),
        RegistryConfig {
            check_freshness: true,
            ..config()
        },
    )
    .unwrap();
    let id = stored_counter(&store, 10_000).await;
    for round in 0..5 {
        // Increments in flight and queued when the entity stops and is restarted.
        let increments = join_all((0..20).map(|_| registry.call(id, Increment)));
        let crash = registry.send(
            id,
            Crash {
                set_value_to: 9_999,
            },
        );
        let (replies, crashed) = join(increments, crash).await;
        crashed.unwrap();
        let ok = replies.iter().filter(|r| r.is_ok()).count() as u64;
        let unknown = replies
            .iter()
            .filter(|r| matches!(r, Err(ActorError::Unavailable(Unavailable::ReplyLost))))
            .count() as u64;
        assert_eq!(ok + unknown, 20, "round {round}: {replies:?}");
        // Still answering, from the stored state (not the corrupted one).
        let next = tokio::time::timeout(Duration::from_secs(10), registry.call(id, Increment))
            .await
            .expect("the entity is not wedged")
            .unwrap();
        let (record, _) = stored(&store, id).await.unwrap();
        assert_eq!(record.value, next);
        assert!(next < 9_999, "decided on the stored state: {next}");
    }
}
