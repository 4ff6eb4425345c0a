//! Validations on PostgreSQL through [`SharedKeys`]: counting in memory and flushing as
//! deltas, strict counting, and copies trusted through the listener only while it is
//! caught up. The database comes from `tollgate_storage::testing` (skipped on a developer
//! machine without one, a failure under `CI=true`).

use std::time::Duration;

use tollgate_storage::{Batch, Expect, Store};

use super::*;
use crate::clock::SystemClock;
use crate::license_key::LicenseKeyEntity;
use crate::license_key::{JsonObject, KeyStatus, RevokeLicenseKey};
use crate::registry::{Registry, RegistryConfig};

/// A schema on the test database and its stores (shared with `remote_tests`).
use crate::license_key::actor::remote_tests::Schema;

async fn stored_key(store: &Store) -> LicenseKey {
    let key = crate::license_key::actor::tests::new_key(None, None);
    let mut batch = Batch::new();
    batch.put(&key, Expect::Absent).unwrap();
    store.commit(&batch).await.unwrap();
    key
}

fn plain(k: &LicenseKey) -> ValidateKey {
    ValidateKey {
        organization_id: k.organization_id,
        key: k.key.clone(),
        activation_id: None,
        benefit_id: None,
        customer_id: None,
        increment_usage: None,
        conditions: JsonObject::new(),
    }
}

async fn stored(store: &Store, k: &LicenseKey) -> LicenseKey {
    store
        .get::<LicenseKey>(&k.id.key())
        .await
        .unwrap()
        .unwrap()
        .value
}

#[test]
fn stamps_order_by_epoch_then_sequence() {
    assert!(stamp_of(2, 5) > stamp_of(2, 4));
    assert!(stamp_of(4, 0) > stamp_of(2, SEQ_MASK));
    assert_eq!(stamp_of(6, 7) >> SEQ_BITS, 6);
    assert_eq!(stamp_of(6, 7) & SEQ_MASK, 7);
}

#[actix::test]
async fn plain_validations_count_in_memory_and_a_flush_adds_them_as_one_delta() {
    let Some(schema) = Schema::new("shared_flush") else {
        return;
    };
    let store = schema.node().await;
    let keys = SharedKeys::new(store.clone(), None, false, 60, Duration::ZERO);
    let k = stored_key(&store).await;
    let now = chrono::Utc::now();
    for i in 1..=10 {
        let v = keys.validate(k.id, &plain(&k), now).await.unwrap();
        assert_eq!(v.validations, i, "each answer counts itself");
    }
    assert_eq!(
        stored(&store, &k).await.validations,
        0,
        "nothing written yet"
    );
    assert_eq!(keys.pending_of(k.id), 10);
    assert_eq!(keys.flush().await.unwrap(), 10);
    let after = stored(&store, &k).await;
    assert_eq!(after.validations, 10);
    assert_eq!(
        after.last_validated_at.map(|t| t.timestamp_micros()),
        Some(now.timestamp_micros())
    );
    assert_eq!(keys.pending_of(k.id), 0);
    assert_eq!(keys.flush().await.unwrap(), 0, "nothing twice");
    let v = keys.validate(k.id, &plain(&k), now).await.unwrap();
    assert_eq!(v.validations, 11);
    // No listener: every plain validation compared the stored revision.
    assert_eq!(keys.paths().memory, 0);
    assert_eq!(keys.paths().checked, 11);
    assert_eq!(
        store.revision::<LicenseKey>(&k.id.key()).await.unwrap(),
        Some(1),
        "the key itself is never rewritten"
    );
}

#[actix::test]
async fn two_nodes_flush_into_one_row_without_conflict() {
    let Some(schema) = Schema::new("shared_two_flush") else {
        return;
    };
    let (a, b) = (schema.node().await, schema.node().await);
    let (ka, kb) = (
        SharedKeys::new(a.clone(), None, false, 60, Duration::ZERO),
        SharedKeys::new(b.clone(), None, false, 60, Duration::ZERO),
    );
    let k = stored_key(&a).await;
    let now = chrono::Utc::now();
    for _ in 0..30 {
        ka.validate(k.id, &plain(&k), now).await.unwrap();
        kb.validate(k.id, &plain(&k), now).await.unwrap();
    }
    let (fa, fb) = futures_util::future::join(ka.flush(), kb.flush()).await;
    assert_eq!((fa.unwrap(), fb.unwrap()), (30, 30));
    assert_eq!(stored(&b, &k).await.validations, 60);
}

#[actix::test]
async fn strict_mode_counts_every_validation_before_it_answers() {
    let Some(schema) = Schema::new("shared_strict") else {
        return;
    };
    let store = schema.node().await;
    let keys = SharedKeys::new(store.clone(), None, true, 60, Duration::ZERO);
    let k = stored_key(&store).await;
    let now = chrono::Utc::now();
    for i in 1..=5 {
        let v = keys.validate(k.id, &plain(&k), now).await.unwrap();
        assert_eq!(v.validations, i);
        assert_eq!(stored(&store, &k).await.validations, i);
    }
    assert_eq!(keys.paths().counted, 5);
    assert_eq!(keys.flush().await.unwrap(), 0);
}

/// Validates until an answer comes from memory (the listener caught up), at most 5 s.
async fn until_from_memory(keys: &SharedKeys, k: &LicenseKey) {
    let before = keys.paths().memory;
    for _ in 0..500 {
        keys.validate(k.id, &plain(k), chrono::Utc::now())
            .await
            .unwrap();
        if keys.paths().memory > before {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never answered from memory: {:?}", keys.paths());
}

#[actix::test]
async fn a_copy_trusted_through_the_listener_is_dropped_when_another_node_revokes_the_key() {
    let Some(schema) = Schema::new("shared_listen") else {
        return;
    };
    let (a, b) = (schema.node().await, schema.node().await);
    let window = Duration::from_millis(100);
    let wa = a.listen(window).expect("postgres listens");
    let _wb = b.listen(window).expect("postgres listens");
    let ka = SharedKeys::new(a.clone(), Some(wa.clone()), false, 60, Duration::ZERO);
    let rb: Registry<LicenseKeyEntity> = Registry::start(
        b.clone(),
        SystemClock::shared(),
        RegistryConfig {
            check_freshness: true,
            ..RegistryConfig::default()
        },
    )
    .unwrap();
    for round in 0..3 {
        let k = stored_key(&a).await;
        until_from_memory(&ka, &k).await;
        assert_eq!(ka.listening(), Some(true));
        let revoked = rb.call(k.id, RevokeLicenseKey).await.unwrap();
        assert_eq!(revoked.status, KeyStatus::Revoked);
        // Answered a window after its commit: A has heard it, or no longer trusts its copy.
        let r = ka.validate(k.id, &plain(&k), chrono::Utc::now()).await;
        assert!(
            matches!(
                r,
                Err(ActorError::Domain(LicenseKeyError::NotActive { .. }))
            ),
            "round {round}: {r:?}"
        );
    }
    assert!(wa.seq() >= 3, "the revokes were heard");
}
