//! The license key actor through the registry: concurrent increments on one key, durable
//! counters, activation limits under concurrency, revocation.

use std::time::Duration;

use chrono::Utc;
use futures_util::future::join_all;
use tollgate_storage::{Batch, Expect, Store};

use super::*;
use crate::clock::SystemClock;
use crate::domain::ids::{ActivationId, BenefitId, CustomerId, LicenseKeyId, OrganizationId};
use crate::license_key::{generate_key, live_activations, JsonObject, KeyDirectory, KeyStatus};
use crate::registry::{Registry, RegistryConfig};
use crate::testkit::ready;

fn registry() -> (Registry<LicenseKeyEntity>, Store) {
    registry_batching(None)
}

/// A registry whose keys write their validation counters back every `interval`
/// (`None`: strict, every validation written before its reply).
fn registry_batching(interval: Option<Duration>) -> (Registry<LicenseKeyEntity>, Store) {
    let store = Store::temporary().unwrap();
    let config = RegistryConfig {
        arbiters: 2,
        mailbox_capacity: 1024,
        send_timeout: Duration::from_secs(10),
        idle_timeout: None,
        write_back: interval,
        check_freshness: false,
    };
    let registry = Registry::start(store.clone(), SystemClock::shared(), config).unwrap();
    (registry, store)
}

/// A key written straight to the store, as checkout completion does.
fn stored_key(
    store: &Store,
    limit_usage: Option<i64>,
    limit_activations: Option<i64>,
) -> LicenseKey {
    let key = new_key(limit_usage, limit_activations);
    let mut batch = Batch::new();
    batch.put(&key, Expect::Absent).unwrap();
    ready(store.commit(&batch)).unwrap();
    key
}

/// A granted key of a new organization, customer and benefit.
pub(crate) fn new_key(limit_usage: Option<i64>, limit_activations: Option<i64>) -> LicenseKey {
    LicenseKey {
        id: LicenseKeyId::new(),
        organization_id: OrganizationId::new(),
        customer_id: CustomerId::new(),
        benefit_id: BenefitId::new(),
        created_at: Utc::now(),
        modified_at: None,
        key: generate_key(Some("test")),
        status: KeyStatus::Granted,
        limit_activations,
        usage: 0,
        limit_usage,
        validations: 0,
        last_validated_at: None,
        expires_at: None,
        activations: Vec::new(),
        subscription_id: None,
        order_id: None,
        paid_until: None,
        allow_replacement: false,
        replacements: Vec::new(),
    }
}

fn validate(k: &LicenseKey, increment_usage: Option<i64>) -> ValidateLicenseKey {
    ValidateLicenseKey(ValidateKey {
        organization_id: k.organization_id,
        key: k.key.clone(),
        activation_id: None,
        benefit_id: None,
        customer_id: None,
        increment_usage,
        conditions: JsonObject::new(),
    })
}

fn in_store(store: &Store, id: LicenseKeyId) -> LicenseKey {
    ready(store.get::<LicenseKey>(&id.key()))
        .unwrap()
        .unwrap()
        .value
}

#[actix::test]
async fn fifty_concurrent_increments_against_ten_let_exactly_ten_through() {
    let (registry, store) = registry();
    let k = stored_key(&store, Some(10), None);
    let replies = join_all((0..50).map(|_| registry.call(k.id, validate(&k, Some(1))))).await;
    let ok = replies.iter().filter(|r| r.is_ok()).count();
    let refused = replies
        .iter()
        .filter(|r| {
            matches!(
                r,
                Err(ActorError::Domain(LicenseKeyError::InsufficientUsage {
                    remaining: 0
                }))
            )
        })
        .count();
    assert_eq!((ok, refused), (10, 40));
    let mut usages: Vec<i64> = replies
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|v| v.key.usage))
        .collect();
    usages.sort_unstable();
    assert_eq!(usages, (1..=10).collect::<Vec<_>>());
    let stored = in_store(&store, k.id);
    assert_eq!((stored.usage, stored.validations), (10, 10));
}

/// splitmix64, for deterministic random increments.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[actix::test]
async fn concurrent_random_increments_never_pass_the_limit() {
    let (registry, store) = registry();
    for seed in 0..20u64 {
        let mut rng = seed;
        let limit = 1 + (next(&mut rng) % 30) as i64;
        let k = stored_key(&store, Some(limit), None);
        let increments: Vec<i64> = (0..40).map(|_| 1 + (next(&mut rng) % 5) as i64).collect();
        let replies = join_all(
            increments
                .iter()
                .map(|&inc| registry.call(k.id, validate(&k, Some(inc)))),
        )
        .await;
        let mut accepted = 0;
        for (inc, r) in increments.iter().zip(&replies) {
            match r {
                Ok(v) => {
                    accepted += inc;
                    assert!(v.key.usage <= limit, "seed {seed}");
                }
                Err(ActorError::Domain(LicenseKeyError::InsufficientUsage { remaining })) => {
                    assert!(i128::from(*inc) > *remaining, "seed {seed}");
                }
                Err(e) => panic!("seed {seed}: {e:?}"),
            }
        }
        let stored = in_store(&store, k.id);
        assert_eq!(stored.usage, accepted, "seed {seed}");
        assert!(stored.usage <= limit, "seed {seed}");
    }
}

#[actix::test]
async fn every_answered_validation_is_in_the_store() {
    let (registry, store) = registry();
    let k = stored_key(&store, None, None);
    let sends = (0..30).map(|_| {
        let registry = registry.clone();
        let store = store.clone();
        let msg = validate(&k, Some(2));
        async move {
            let v = registry.call(k.id, msg).await.unwrap();
            let stored = in_store(&store, k.id);
            assert!(stored.validations >= v.key.validations);
        }
    });
    join_all(sends).await;
    let stored = in_store(&store, k.id);
    assert_eq!((stored.validations, stored.usage), (30, 60));
    assert!(stored.last_validated_at.is_some());
}

#[actix::test]
async fn concurrent_activations_respect_the_limit() {
    let (registry, store) = registry();
    let k = stored_key(&store, None, Some(3));
    let replies = join_all((0..20).map(|i| {
        registry.call(
            k.id,
            ActivateLicenseKey(ActivateKey {
                organization_id: k.organization_id,
                key: k.key.clone(),
                label: format!("machine {i}"),
                conditions: JsonObject::new(),
                meta: JsonObject::new(),
                replace: None,
            }),
        )
    }))
    .await;
    let ok: Vec<ActivationId> = replies
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|(_, a)| a.id))
        .collect();
    assert_eq!(ok.len(), 3);
    assert!(replies.iter().all(|r| r.is_ok()
        || matches!(
            r,
            Err(ActorError::Domain(LicenseKeyError::ActivationLimitReached))
        )));
    let stored = in_store(&store, k.id);
    assert_eq!(live_activations(&stored).count(), 3);

    registry
        .call(
            k.id,
            DeactivateLicenseKey(DeactivateKey {
                organization_id: k.organization_id,
                key: k.key.clone(),
                activation_id: ok[0].into(),
            }),
        )
        .await
        .unwrap();
    assert_eq!(live_activations(&in_store(&store, k.id)).count(), 2);
}

#[actix::test]
async fn a_stale_lookup_is_refused_as_wrong_key() {
    let (registry, store) = registry();
    let k = stored_key(&store, None, None);
    let other = stored_key(&store, None, None);
    let r = registry.call(other.id, validate(&k, None)).await;
    assert_eq!(
        r.unwrap_err(),
        ActorError::Domain(LicenseKeyError::WrongKey)
    );
    assert_eq!(in_store(&store, other.id).validations, 0);
    let missing = registry.call(LicenseKeyId::new(), validate(&k, None)).await;
    assert_eq!(missing.unwrap_err(), ActorError::NotFound);
}

#[actix::test]
async fn revoke_sets_revoked_once_and_validation_then_fails() {
    let (registry, store) = registry();
    let k = stored_key(&store, None, None);
    registry.call(k.id, validate(&k, None)).await.unwrap();
    let revoked = registry.call(k.id, RevokeLicenseKey).await.unwrap();
    assert_eq!(revoked.status, KeyStatus::Revoked);
    let again = registry.call(k.id, RevokeLicenseKey).await.unwrap();
    assert_eq!(again, revoked);
    assert_eq!(in_store(&store, k.id).status, KeyStatus::Revoked);
    let r = registry.call(k.id, validate(&k, None)).await;
    assert_eq!(
        r.unwrap_err(),
        ActorError::Domain(LicenseKeyError::NotActive {
            status: KeyStatus::Revoked
        })
    );
}

#[actix::test]
async fn update_goes_through_the_actor_and_survives_passivation() {
    let (registry, store) = registry();
    let k = stored_key(&store, Some(5), None);
    let updated = registry
        .call(
            k.id,
            UpdateLicenseKey(KeyChanges {
                usage: Some(4),
                limit_usage: Some(Some(10)),
                ..KeyChanges::default()
            }),
        )
        .await
        .unwrap();
    assert_eq!((updated.usage, updated.limit_usage), (4, Some(10)));
    registry.passivate(k.id).await.unwrap();
    let read = registry.call(k.id, GetLicenseKey).await.unwrap();
    assert_eq!(read, updated);
    assert_eq!(in_store(&store, k.id), updated);
}

/// Resident memory of this process in KiB (Linux).
fn rss_kib() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

/// What a loaded key costs in memory, without the HTTP server or the store's cache in the
/// way: 100,000 directory entries, then 100,000 live key actors, then the same after idle
/// eviction. Prints bytes per key; run alone, in release:
/// `cargo test --release -p tollgate-actors memory_per_key -- --ignored --nocapture`
#[actix::test]
#[ignore = "a measurement, not a check; run alone"]
async fn memory_per_key() {
    const N: usize = 100_000;
    let (registry, store) = registry();
    let keys: Vec<LicenseKey> = (0..N).map(|_| stored_key(&store, None, None)).collect();
    let per_key = |from: i64, to: i64| (to - from) * 1024 / N as i64;

    let dir = KeyDirectory::new();
    let before = rss_kib();
    for k in &keys {
        dir.remember(k.organization_id, &k.key, k.id);
    }
    let with_directory = rss_kib();
    println!("directory: {} B/key", per_key(before, with_directory));

    for chunk in keys.chunks(1000) {
        join_all(chunk.iter().map(|k| registry.call(k.id, GetLicenseKey))).await;
    }
    let live = rss_kib();
    assert_eq!(registry.stats().live, N);
    println!("live actors: {} B/key", per_key(with_directory, live));

    for chunk in keys.chunks(1000) {
        join_all(chunk.iter().map(|k| registry.passivate(k.id))).await;
    }
    for _ in 0..500 {
        if registry.stats().running == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let evicted = rss_kib();
    println!(
        "after eviction: {} B/key above the directory ({} actors still running; freed memory \
         stays with the allocator for reuse)",
        per_key(with_directory, evicted),
        registry.stats().running
    );
}

/// The change feed (the webhooks' outbox) records what a seller is told about, and the
/// validation hot path writes nothing to it: counters stay a compare-and-swap.
#[actix::test]
async fn validations_leave_the_change_feed_alone_and_activations_are_recorded_in_it() {
    let (registry, store) = registry();
    let k = stored_key(&store, Some(100), Some(2));
    let created = ready(store.changes(None, 10)).unwrap();
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].before::<LicenseKey>().unwrap(), None);

    let validations = join_all((0..20).map(|_| registry.call(k.id, validate(&k, Some(1))))).await;
    assert!(validations.iter().all(|r| r.is_ok()));
    assert_eq!(in_store(&store, k.id).usage, 20);
    assert_eq!(
        ready(store.changes(None, 10)).unwrap(),
        created,
        "validations fed nothing"
    );

    let (_, activation) = registry
        .call(
            k.id,
            ActivateLicenseKey(ActivateKey {
                organization_id: k.organization_id,
                key: k.key.clone(),
                label: "laptop".into(),
                conditions: JsonObject::new(),
                meta: JsonObject::new(),
                replace: None,
            }),
        )
        .await
        .unwrap();
    let changes = ready(store.changes(Some(created[0].seq), 10)).unwrap();
    assert_eq!(changes.len(), 1);
    let before = changes[0].before::<LicenseKey>().unwrap().unwrap();
    let after = changes[0].after::<LicenseKey>().unwrap().unwrap();
    assert!(before.activations.is_empty());
    assert_eq!(after.activations.len(), 1);
    assert_eq!(after.activations[0].id, activation.id);
    // The entry carries the whole record, counters included, as of that write.
    assert_eq!(after.usage, 20);
}

#[actix::test]
async fn strict_mode_writes_every_validation_before_its_reply() {
    let (registry, store) = registry_batching(None);
    let k = stored_key(&store, None, None);
    for n in 1..=5 {
        let v = registry.call(k.id, validate(&k, None)).await.unwrap();
        assert_eq!(v.key.validations, n);
        assert_eq!(in_store(&store, k.id).validations, n);
    }
    assert_eq!(registry.stats().write_backs_total, 0);
}

#[actix::test]
async fn batched_validations_are_coalesced_into_one_write_per_interval() {
    let (registry, store) = registry_batching(Some(Duration::from_millis(300)));
    let k = stored_key(&store, None, None);
    let rev_before = ready(store.get::<LicenseKey>(&k.id.key()))
        .unwrap()
        .unwrap()
        .rev;
    let replies = join_all((0..40).map(|_| registry.call(k.id, validate(&k, None)))).await;
    let mut seen: Vec<i64> = replies
        .iter()
        .map(|r| r.as_ref().unwrap().key.validations)
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        (1..=40).collect::<Vec<_>>(),
        "each reply counts itself"
    );
    // Answered from memory: nothing written yet, and reads through the actor are live.
    assert_eq!(in_store(&store, k.id).validations, 0);
    let live = registry.call(k.id, GetLicenseKey).await.unwrap();
    assert_eq!(live.validations, 40);
    // One write for the whole interval.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let stored = ready(store.get::<LicenseKey>(&k.id.key()))
        .unwrap()
        .unwrap();
    assert_eq!(stored.value.validations, 40);
    assert!(stored.value.last_validated_at.is_some());
    // Written to the key's counters' row: the key record keeps its revision.
    assert_eq!(stored.rev, rev_before);
    assert_eq!(registry.stats().write_backs_total, 1);
    // A quiet key writes nothing more.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(registry.stats().write_backs_total, 1);
}

/// What the hot path costs the store: 1,000 plain validations in batched mode are answered
/// from memory (no store read or write per validation) and written back as one commit of
/// the key's counters' row; the key record itself is not rewritten (every write of a record
/// moves its revision, and it stays). Before the counters moved apart the same run was one commit too, a rewrite of
/// the whole record (revision + 1).
#[actix::test]
async fn a_thousand_plain_validations_cost_one_counters_write_and_no_record_write() {
    let (registry, store) = registry_batching(Some(Duration::from_millis(300)));
    let k = stored_key(&store, None, None);
    // Load the actor (its one read of the key) before counting.
    registry.call(k.id, GetLicenseKey).await.unwrap();
    let commits_before = store.last_committed();
    for _ in 0..1000 {
        registry.call(k.id, validate(&k, None)).await.unwrap();
    }
    // Answered from memory: not one commit yet.
    assert_eq!(store.last_committed(), commits_before);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        store.last_committed() - commits_before,
        1,
        "store writes per 1,000 validations"
    );
    assert_eq!(registry.stats().write_backs_total, 1);
    let stored = ready(store.get::<LicenseKey>(&k.id.key()))
        .unwrap()
        .unwrap();
    assert_eq!((stored.rev, stored.value.validations), (1, 1000));
}

#[actix::test]
async fn batched_counters_are_written_at_eviction_and_at_a_graceful_stop() {
    let (registry, store) = registry_batching(Some(Duration::from_secs(3600)));
    let a = stored_key(&store, None, None);
    let b = stored_key(&store, None, None);
    for _ in 0..3 {
        registry.call(a.id, validate(&a, None)).await.unwrap();
        registry.call(b.id, validate(&b, None)).await.unwrap();
    }
    assert_eq!(in_store(&store, a.id).validations, 0);
    // Eviction of one key writes its counters before it leaves.
    assert!(registry.passivate(a.id).await.unwrap());
    assert_eq!(in_store(&store, a.id).validations, 3);
    // The next incarnation starts from them.
    let v = registry.call(a.id, validate(&a, None)).await.unwrap();
    assert_eq!(v.key.validations, 4);
    // A graceful stop passivates (and so writes) every live key.
    assert_eq!(registry.passivate_all().await, 2);
    assert_eq!(in_store(&store, a.id).validations, 4);
    assert_eq!(in_store(&store, b.id).validations, 3);
}

#[actix::test]
async fn batched_mode_keeps_usage_increments_and_activations_durable_before_the_reply() {
    let (registry, store) = registry_batching(Some(Duration::from_secs(3600)));
    let k = stored_key(&store, Some(5), Some(1));
    registry.call(k.id, validate(&k, None)).await.unwrap();
    registry.call(k.id, validate(&k, None)).await.unwrap();
    let v = registry.call(k.id, validate(&k, Some(2))).await.unwrap();
    assert_eq!(v.key.usage, 2);
    // The increment is in the store at once, with the counters it carried along.
    let stored = in_store(&store, k.id);
    assert_eq!((stored.usage, stored.validations), (2, 3));
    // Never more usage than the limit, batched or not.
    let over = registry.call(k.id, validate(&k, Some(4))).await;
    assert!(matches!(
        over,
        Err(ActorError::Domain(
            LicenseKeyError::InsufficientUsage { .. }
        ))
    ));
    // A refused validation changes nothing, not even the counters.
    assert_eq!(
        registry
            .call(k.id, GetLicenseKey)
            .await
            .unwrap()
            .validations,
        3
    );
    registry
        .call(
            k.id,
            ActivateLicenseKey(ActivateKey {
                organization_id: k.organization_id,
                key: k.key.clone(),
                label: "desk".into(),
                conditions: JsonObject::new(),
                meta: JsonObject::new(),
                replace: None,
            }),
        )
        .await
        .unwrap();
    assert_eq!(live_activations(&in_store(&store, k.id)).count(), 1);
}

fn cmd(k: &LicenseKey, increment_usage: Option<i64>) -> ValidateKey {
    validate(k, increment_usage).0
}

#[actix::test]
async fn batched_plain_validations_are_answered_without_the_mailbox_and_written_back() {
    let (registry, store) = registry_batching(Some(Duration::from_millis(200)));
    let k = stored_key(&store, Some(10), None);
    let live = registry.extension();
    // Nothing published until the key's actor is live.
    assert!(live
        .validate(&store, k.id, &cmd(&k, None), Utc::now())
        .is_none());
    registry.call(k.id, GetLicenseKey).await.unwrap();
    // Published once its state is durable (the read above waited for that).
    for n in 1..=30 {
        let v = live
            .validate(&store, k.id, &cmd(&k, None), Utc::now())
            .expect("answered without the actor")
            .unwrap();
        assert_eq!(v.validations, n, "every answer counts itself");
    }
    // Increments always go through the actor.
    assert!(live
        .validate(&store, k.id, &cmd(&k, Some(1)), Utc::now())
        .is_none());
    // A refusal is answered too, and counts nothing.
    let mut wrong = cmd(&k, None);
    wrong.benefit_id = Some(BenefitId::new());
    assert_eq!(
        live.validate(&store, k.id, &wrong, Utc::now()),
        Some(Err(LicenseKeyError::BenefitMismatch))
    );
    // Reads through the actor see the counts; the store within one interval.
    assert_eq!(
        registry
            .call(k.id, GetLicenseKey)
            .await
            .unwrap()
            .validations,
        30
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(in_store(&store, k.id).validations, 30);
    // A durable command carries later counts along.
    live.validate(&store, k.id, &cmd(&k, None), Utc::now())
        .unwrap()
        .unwrap();
    let v = registry.call(k.id, validate(&k, Some(2))).await.unwrap();
    assert_eq!((v.key.validations, v.key.usage), (32, 2));
    let stored = in_store(&store, k.id);
    assert_eq!((stored.validations, stored.usage), (32, 2));
}

#[actix::test]
async fn counts_taken_without_the_mailbox_are_written_at_passivation() {
    let (registry, store) = registry_batching(Some(Duration::from_secs(3600)));
    let k = stored_key(&store, None, None);
    registry.call(k.id, GetLicenseKey).await.unwrap();
    let live = registry.extension();
    let answered = join_all((0..8).map(|_| {
        let store = store.clone();
        let c = cmd(&k, None);
        async move {
            let mut n = 0;
            for _ in 0..50 {
                if let Some(r) = live.validate(&store, k.id, &c, Utc::now()) {
                    r.unwrap();
                    n += 1;
                }
                tokio::task::yield_now().await;
            }
            n
        }
    }))
    .await;
    let total: i64 = answered.iter().sum();
    assert_eq!(total, 400);
    assert!(registry.passivate(k.id).await.unwrap());
    // Closed: the next validation goes through the mailbox (a new incarnation).
    assert!(live
        .validate(&store, k.id, &cmd(&k, None), Utc::now())
        .is_none());
    assert_eq!(in_store(&store, k.id).validations, 400);
    let v = registry.call(k.id, validate(&k, None)).await.unwrap();
    assert_eq!(v.key.validations, 401);
}

#[actix::test]
async fn strict_mode_publishes_nothing() {
    let (registry, store) = registry_batching(None);
    let k = stored_key(&store, None, None);
    registry.call(k.id, GetLicenseKey).await.unwrap();
    assert!(registry.extension().is_empty());
    assert!(registry
        .extension()
        .validate(&store, k.id, &cmd(&k, None), Utc::now())
        .is_none());
}

#[actix::test]
async fn a_key_validated_only_without_the_mailbox_stays_live() {
    let store = Store::temporary().unwrap();
    let config = RegistryConfig {
        arbiters: 1,
        mailbox_capacity: 64,
        send_timeout: Duration::from_secs(10),
        idle_timeout: Some(Duration::from_millis(800)),
        write_back: Some(Duration::from_millis(50)),
        check_freshness: false,
    };
    let registry: Registry<LicenseKeyEntity> =
        Registry::start(store.clone(), SystemClock::shared(), config).unwrap();
    let k = stored_key(&store, None, None);
    registry.call(k.id, GetLicenseKey).await.unwrap();
    let mut answered = 0;
    for _ in 0..60 {
        if let Some(r) = registry
            .extension()
            .validate(&store, k.id, &cmd(&k, None), Utc::now())
        {
            r.unwrap();
            answered += 1;
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    // 2.4 s of traffic, three idle timeouts: never evicted, every answer from the fast path.
    assert_eq!(answered, 60);
    assert!(registry.is_live(k.id));
    assert_eq!(registry.stats().spawned_total, 1);
    // Once traffic stops, it is evicted, its counts written.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!registry.is_live(k.id));
    assert_eq!(in_store(&store, k.id).validations, 60);
}

/// Another node's write, straight to the store, behind this node's cached actor.
fn write_behind(store: &Store, id: LicenseKeyId, change: impl FnOnce(&mut LicenseKey)) {
    let stored = ready(store.get::<LicenseKey>(&id.key())).unwrap().unwrap();
    let mut key = stored.value;
    change(&mut key);
    let mut batch = Batch::new();
    batch.put(&key, Expect::Rev(stored.rev)).unwrap();
    ready(store.commit(&batch)).unwrap();
}

#[actix::test]
async fn an_increment_after_another_writer_counts_from_what_it_wrote() {
    let (registry, store) = registry();
    let k = stored_key(&store, Some(10), None);
    let first = registry.call(k.id, validate(&k, Some(1))).await.unwrap();
    assert_eq!(first.key.usage, 1);
    // Another node used 7 more.
    write_behind(&store, k.id, |key| key.usage = 8);
    let second = registry.call(k.id, validate(&k, Some(1))).await.unwrap();
    assert_eq!(second.key.usage, 9);
    assert_eq!(in_store(&store, k.id).usage, 9);
    // The limit counts what the other node used: 1 more passes, then none.
    assert!(registry.call(k.id, validate(&k, Some(1))).await.is_ok());
    assert!(matches!(
        registry.call(k.id, validate(&k, Some(1))).await,
        Err(ActorError::Domain(LicenseKeyError::InsufficientUsage {
            remaining: 0
        }))
    ));
    assert_eq!(in_store(&store, k.id).usage, 10);
    assert!(registry.stats().redecides_total >= 1);
}

#[actix::test]
async fn a_key_revoked_by_another_writer_refuses_the_next_increment() {
    let (registry, store) = registry();
    let k = stored_key(&store, None, None);
    registry.call(k.id, validate(&k, Some(1))).await.unwrap();
    write_behind(&store, k.id, |key| key.status = KeyStatus::Revoked);
    assert!(matches!(
        registry.call(k.id, validate(&k, Some(1))).await,
        Err(ActorError::Domain(LicenseKeyError::NotActive { .. }))
    ));
    let stored = in_store(&store, k.id);
    assert_eq!((stored.status, stored.usage), (KeyStatus::Revoked, 1));
}

#[actix::test]
async fn with_freshness_checks_a_key_revoked_elsewhere_is_refused_at_once_even_batched() {
    let store = Store::temporary().unwrap();
    let config = RegistryConfig {
        arbiters: 2,
        mailbox_capacity: 1024,
        send_timeout: Duration::from_secs(10),
        idle_timeout: None,
        write_back: Some(Duration::from_secs(3600)),
        check_freshness: true,
    };
    let registry =
        Registry::<LicenseKeyEntity>::start(store.clone(), SystemClock::shared(), config).unwrap();
    let k = stored_key(&store, None, None);
    // Live and cached on this node; plain validations answered from memory.
    registry.call(k.id, validate(&k, None)).await.unwrap();
    registry.call(k.id, validate(&k, None)).await.unwrap();
    // Another node revokes it.
    write_behind(&store, k.id, |key| key.status = KeyStatus::Revoked);
    assert!(matches!(
        registry.call(k.id, validate(&k, None)).await,
        Err(ActorError::Domain(LicenseKeyError::NotActive { .. }))
    ));
    assert!(matches!(
        registry.call(k.id, GetLicenseKey).await,
        Ok(key) if key.status == KeyStatus::Revoked
    ));
}

/// Rotation against validations in flight, in strict and in batched mode: each validation
/// of the old value is answered as if it came wholly before the rotation (valid, counted)
/// or wholly after it (`WrongKey`); from the rotation's reply on, the old value is refused
/// on every path (the mailbox, the fast path, the store's unique index) and the new one
/// validates, with the counts, limits and activations the key had.
#[actix::test]
async fn rotation_with_concurrent_validations_switches_the_value_at_once() {
    for interval in [None, Some(Duration::from_millis(50))] {
        let (registry, store) = registry_batching(interval);
        let k = stored_key(&store, Some(100), Some(2));
        let mut activate = crate::license_key::ActivateKey {
            organization_id: k.organization_id,
            key: k.key.clone(),
            label: "laptop".into(),
            conditions: JsonObject::new(),
            meta: JsonObject::new(),
            replace: None,
        };
        let (_, activation) = registry
            .call(k.id, ActivateLicenseKey(activate.clone()))
            .await
            .unwrap();
        registry.call(k.id, validate(&k, Some(3))).await.unwrap();
        let live = registry.extension();
        let through_mailbox = join_all((0..40).map(|_| registry.call(k.id, validate(&k, None))));
        // Fast-path answers (batched mode only; `None` in strict mode), interleaved.
        let fast = async {
            let mut answers = Vec::new();
            for _ in 0..40 {
                answers.push(live.validate(&store, k.id, &cmd(&k, None), Utc::now()));
                tokio::task::yield_now().await;
            }
            answers
        };
        let rotate = registry.call(
            k.id,
            RotateLicenseKey(RotateKey {
                prefix: Some("test".into()),
            }),
        );
        let ((mailbox, fast), rotated) =
            futures_util::future::join(futures_util::future::join(through_mailbox, fast), rotate)
                .await;
        let rotated = rotated.unwrap();
        assert_eq!(rotated.previous, k.key);
        assert!(rotated.key.key.starts_with("TEST-"), "{}", rotated.key.key);
        assert_ne!(rotated.key.key, k.key);
        let mut passed = 0i64;
        for r in mailbox {
            match r {
                Ok(_) => passed += 1,
                Err(ActorError::Domain(LicenseKeyError::WrongKey)) => {}
                other => panic!("{interval:?}: {other:?}"),
            }
        }
        for r in fast.into_iter().flatten() {
            match r {
                Ok(_) => passed += 1,
                Err(LicenseKeyError::WrongKey) => {}
                other => panic!("{interval:?}: {other:?}"),
            }
        }
        // From the reply on, the old value is refused on every path.
        assert_eq!(
            registry.call(k.id, validate(&k, None)).await.unwrap_err(),
            ActorError::Domain(LicenseKeyError::WrongKey)
        );
        assert!(matches!(
            live.validate(&store, k.id, &cmd(&k, None), Utc::now()),
            None | Some(Err(LicenseKeyError::WrongKey))
        ));
        activate.key = k.key.clone();
        assert_eq!(
            registry
                .call(k.id, ActivateLicenseKey(activate.clone()))
                .await
                .unwrap_err(),
            ActorError::Domain(LicenseKeyError::WrongKey)
        );
        let dir = KeyDirectory::new();
        assert_eq!(
            dir.lookup(&store, k.organization_id, &k.key).await.unwrap(),
            None
        );
        assert_eq!(
            dir.lookup(&store, k.organization_id, &rotated.key.key)
                .await
                .unwrap(),
            Some(k.id)
        );
        // The new value validates, with everything the key had.
        let v = registry
            .call(k.id, validate(&rotated.key, None))
            .await
            .unwrap();
        assert_eq!(v.key.validations, 1 + passed + 1, "{interval:?}");
        assert_eq!(v.key.usage, 3);
        assert_eq!(v.key.limit_usage, Some(100));
        assert_eq!(v.key.limit_activations, Some(2));
        assert_eq!(
            live_activations(&v.key).map(|a| a.id).collect::<Vec<_>>(),
            vec![activation.id]
        );
        let stored = in_store(&store, k.id);
        assert_eq!(stored.key, rotated.key.key);
        assert_eq!(stored.id, k.id);
    }
}

#[actix::test]
async fn a_revoked_key_does_not_rotate_and_keeps_its_value() {
    let (registry, store) = registry();
    let k = stored_key(&store, None, None);
    registry.call(k.id, RevokeLicenseKey).await.unwrap();
    let r = registry
        .call(k.id, RotateLicenseKey(RotateKey { prefix: None }))
        .await;
    assert_eq!(
        r.unwrap_err(),
        ActorError::Domain(LicenseKeyError::RotateNotPermitted {
            status: KeyStatus::Revoked
        })
    );
    assert_eq!(in_store(&store, k.id).key, k.key);
    let dir = KeyDirectory::new();
    assert_eq!(
        dir.lookup(&store, k.organization_id, &k.key).await.unwrap(),
        Some(k.id)
    );
}

/// 64 concurrent activations with `replace: "oldest"` on a key with 3 activations whose
/// benefit allows replacement: each is one write of the key's actor, so the live
/// activations never pass 3 and each replacement frees exactly one; past the per-key limit
/// the rest are refused as rate-limited, and nothing else fails.
#[actix::test]
async fn concurrent_replacements_free_exactly_one_each_and_stop_at_the_rate_limit() {
    use crate::license_key::{Replace, REPLACEMENTS_PER_WINDOW};
    let (registry, store) = registry();
    let mut k = new_key(None, Some(3));
    k.allow_replacement = true;
    let mut batch = Batch::new();
    batch.put(&k, Expect::Absent).unwrap();
    ready(store.commit(&batch)).unwrap();
    let replies = join_all((0..64).map(|i| {
        registry.call(
            k.id,
            ActivateLicenseKey(ActivateKey {
                organization_id: k.organization_id,
                key: k.key.clone(),
                label: format!("machine {i}"),
                conditions: JsonObject::new(),
                meta: JsonObject::new(),
                replace: Some(Replace::Oldest),
            }),
        )
    }))
    .await;
    let ok: Vec<ActivationId> = replies
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|(_, a)| a.id))
        .collect();
    // Three free slots, then one replacement each up to the limit.
    assert_eq!(ok.len(), 3 + REPLACEMENTS_PER_WINDOW);
    assert!(replies.iter().all(|r| r.is_ok()
        || matches!(
            r,
            Err(ActorError::Domain(
                LicenseKeyError::ReplacementRateLimited { .. }
            ))
        )));
    // Every reply showed at most three live activations.
    for r in replies.iter().flatten() {
        assert!(live_activations(&r.0).count() <= 3);
    }
    let stored = in_store(&store, k.id);
    let live: Vec<ActivationId> = live_activations(&stored).map(|a| a.id).collect();
    assert_eq!(live.len(), 3);
    let freed: Vec<ActivationId> = stored
        .activations
        .iter()
        .filter(|a| a.deleted_at.is_some())
        .map(|a| a.id)
        .collect();
    // Exactly one freed per replacement, each one of the successful activations, none twice.
    assert_eq!(freed.len(), ok.len() - 3);
    assert_eq!(stored.replacements.len(), REPLACEMENTS_PER_WINDOW);
    let mut all: Vec<ActivationId> = live.iter().chain(&freed).copied().collect();
    all.sort_by_key(|id| id.0);
    let mut expected = ok.clone();
    expected.sort_by_key(|id| id.0);
    assert_eq!(all, expected);
    // The oldest went first: the live ones are the last three activated.
    let mut by_creation: Vec<_> = stored.activations.clone();
    by_creation.sort_by_key(|a| a.created_at);
    let newest: Vec<ActivationId> = by_creation.iter().rev().take(3).map(|a| a.id).collect();
    assert!(newest.iter().all(|id| live.contains(id)));
}

/// A key whose benefit does not allow replacement refuses at its limit, `replace` or not.
#[actix::test]
async fn without_the_benefits_leave_replace_is_the_usual_refusal_and_a_move_is_refused() {
    use crate::license_key::{MoveActivation, Replace};
    let (registry, store) = registry();
    let k = stored_key(&store, None, Some(1));
    let activate = |replace| {
        ActivateLicenseKey(ActivateKey {
            organization_id: k.organization_id,
            key: k.key.clone(),
            label: "m".into(),
            conditions: JsonObject::new(),
            meta: JsonObject::new(),
            replace,
        })
    };
    let (_, first) = registry.call(k.id, activate(None)).await.unwrap();
    let e = registry
        .call(k.id, activate(Some(Replace::Oldest)))
        .await
        .unwrap_err();
    assert!(matches!(
        e,
        ActorError::Domain(LicenseKeyError::ActivationLimitReached)
    ));
    let e = registry
        .call(k.id, MoveActivation(first.id))
        .await
        .unwrap_err();
    assert!(matches!(
        e,
        ActorError::Domain(LicenseKeyError::ActivationLimitReached)
    ));
    assert_eq!(
        live_activations(&in_store(&store, k.id))
            .map(|a| a.id)
            .collect::<Vec<_>>(),
        vec![first.id]
    );
}

/// A move frees the activation durably and counts as a replacement.
#[actix::test]
async fn a_move_frees_the_activation_durably() {
    let (registry, store) = registry();
    let mut k = new_key(None, Some(1));
    k.allow_replacement = true;
    let mut batch = Batch::new();
    batch.put(&k, Expect::Absent).unwrap();
    ready(store.commit(&batch)).unwrap();
    let (_, a) = registry
        .call(
            k.id,
            ActivateLicenseKey(ActivateKey {
                organization_id: k.organization_id,
                key: k.key.clone(),
                label: "old".into(),
                conditions: JsonObject::new(),
                meta: JsonObject::new(),
                replace: None,
            }),
        )
        .await
        .unwrap();
    let reply = registry
        .call(k.id, crate::license_key::MoveActivation(a.id))
        .await
        .unwrap();
    let stored = in_store(&store, k.id);
    assert_eq!(reply, stored);
    assert_eq!(live_activations(&stored).count(), 0);
    assert_eq!(stored.replacements.len(), 1);
}
