//! The license key actor and validations (`shared.rs`) over PostgreSQL
//! (`docs/scale-out.md` 4.3): registries and key sets on one database stand for nodes. The database and a schema per test come from
//! `tollgate_storage::testing` (skipped on a developer machine without one, a failure under
//! `CI=true`).

use std::time::Duration;

use futures_util::future::join_all;
use tollgate_storage::{Batch, Expect, Store};

use super::*;
use crate::clock::SystemClock;
use crate::domain::ids::LicenseKeyId;
use crate::error::Unavailable;
use crate::license_key::{JsonObject, KeyStatus};
use crate::registry::{Registry, RegistryConfig};

/// A schema on the test database (dropped when the test ends) and its stores.
pub(crate) struct Schema(tollgate_storage::testing::Dropper);

impl Schema {
    pub(crate) fn new(test: &str) -> Option<Schema> {
        tollgate_storage::testing::fresh_schema(test).map(Schema)
    }

    /// A store over the schema: one "node".
    pub(crate) async fn node(&self) -> Store {
        Store::postgres(&self.0.url, &self.0.schema, 8)
            .await
            .expect("reaching the test database")
    }
}

/// A registry as a node on a shared database runs it: freshness checks on.
fn registry(store: &Store) -> Registry<LicenseKeyEntity> {
    registry_with_capacity(store, 4096)
}

fn registry_with_capacity(store: &Store, mailbox_capacity: usize) -> Registry<LicenseKeyEntity> {
    let config = RegistryConfig {
        arbiters: 2,
        mailbox_capacity,
        send_timeout: Duration::from_secs(30),
        idle_timeout: None,
        write_back: None,
        check_freshness: true,
    };
    Registry::start(store.clone(), SystemClock::shared(), config).unwrap()
}

async fn stored_key(store: &Store, limit_usage: Option<i64>) -> LicenseKey {
    stored_key_with(store, limit_usage, None).await
}

async fn stored_key_with(
    store: &Store,
    limit_usage: Option<i64>,
    limit_activations: Option<i64>,
) -> LicenseKey {
    let key = super::tests::new_key(limit_usage, limit_activations);
    let mut batch = Batch::new();
    batch.put(&key, Expect::Absent).unwrap();
    store.commit(&batch).await.unwrap();
    key
}

fn increment(k: &LicenseKey, n: i64) -> ValidateKey {
    ValidateKey {
        organization_id: k.organization_id,
        key: k.key.clone(),
        activation_id: None,
        benefit_id: None,
        customer_id: None,
        increment_usage: Some(n),
        conditions: JsonObject::new(),
    }
}

/// A node's validations (batched mode, no listener: every plain one checks the revision).
fn shared(store: &Store) -> std::sync::Arc<crate::license_key::shared::SharedKeys> {
    crate::license_key::shared::SharedKeys::new(store.clone(), None, false, 60, Duration::ZERO)
}

fn activate(k: &LicenseKey, label: &str) -> ActivateLicenseKey {
    ActivateLicenseKey(crate::license_key::ActivateKey {
        organization_id: k.organization_id,
        key: k.key.clone(),
        label: label.into(),
        conditions: JsonObject::new(),
        meta: JsonObject::new(),
        replace: None,
    })
}

async fn in_store(store: &Store, id: LicenseKeyId) -> LicenseKey {
    store
        .get::<LicenseKey>(&id.key())
        .await
        .unwrap()
        .unwrap()
        .value
}

#[actix::test]
async fn concurrent_increments_on_one_key_hold_the_limit_and_never_rewrite_the_key() {
    let Some(schema) = Schema::new("coalesced") else {
        return;
    };
    let store = schema.node().await;
    let keys = shared(&store);
    let k = stored_key(&store, Some(150)).await;
    let now = chrono::Utc::now();
    let cmd = increment(&k, 1);
    let replies = join_all((0..200).map(|_| keys.validate(k.id, &cmd, now))).await;
    let ok = replies.iter().filter(|r| r.is_ok()).count();
    let refused = replies
        .iter()
        .filter(|r| {
            matches!(
                r,
                Err(ActorError::Domain(
                    LicenseKeyError::InsufficientUsage { .. }
                ))
            )
        })
        .count();
    assert_eq!((ok, refused), (150, 50), "{replies:?}");
    let mut usages: Vec<i64> = replies
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|v| v.usage)
        .collect();
    usages.sort_unstable();
    assert_eq!(
        usages,
        (1..=150).collect::<Vec<_>>(),
        "each answer its own usage"
    );
    let stored = in_store(&store, k.id).await;
    assert_eq!((stored.usage, stored.validations), (150, 150));
    // The counters live in their tally row: the key itself was never rewritten.
    let rev = store.revision::<LicenseKey>(&k.id.key()).await.unwrap();
    assert_eq!(rev, Some(1));
    assert_eq!(keys.paths().counted, 150);
}

#[actix::test]
async fn activations_queued_behind_a_busy_key_are_coalesced_and_none_refused_is_applied() {
    let Some(schema) = Schema::new("coalesced_activations") else {
        return;
    };
    let store = schema.node().await;
    let registry = registry(&store);
    let k = stored_key_with(&store, None, Some(150)).await;
    let replies =
        join_all((0..200).map(|i| registry.call(k.id, activate(&k, &format!("d{i}"))))).await;
    let ok = replies.iter().filter(|r| r.is_ok()).count();
    let refused = replies
        .iter()
        .filter(|r| {
            matches!(
                r,
                Err(ActorError::Domain(LicenseKeyError::ActivationLimitReached))
            )
        })
        .count();
    assert_eq!((ok, refused), (150, 50), "{replies:?}");
    let stored = in_store(&store, k.id).await;
    assert_eq!(stored.activations.len(), 150);
    // Fewer transactions than commands: those that queued behind a write went together.
    let stats = registry.stats();
    assert_eq!(stats.grouped_commands_total, 200, "{stats:?}");
    assert!(stats.group_writes_total < 150, "no coalescing: {stats:?}");
    // A group is one transaction, whatever the number of its commands.
    let rev = store.revision::<LicenseKey>(&k.id.key()).await.unwrap();
    assert!(rev.is_some_and(|r| r > 1 && r <= 151), "{rev:?} {stats:?}");
}

#[actix::test]
async fn two_nodes_on_one_key_never_pass_the_limit() {
    let Some(schema) = Schema::new("two_registries") else {
        return;
    };
    let (a, b) = (schema.node().await, schema.node().await);
    let (ka, kb) = (shared(&a), shared(&b));
    let k = stored_key(&a, Some(120)).await;
    let now = chrono::Utc::now();
    let cmd = increment(&k, 1);
    let on_a = join_all((0..100).map(|_| ka.validate(k.id, &cmd, now)));
    let on_b = join_all((0..100).map(|_| kb.validate(k.id, &cmd, now)));
    let (on_a, on_b) = futures_util::future::join(on_a, on_b).await;
    let ok = on_a.iter().chain(&on_b).filter(|r| r.is_ok()).count();
    let other: Vec<_> = on_a
        .iter()
        .chain(&on_b)
        .filter(|r| {
            !matches!(
                r,
                Ok(_)
                    | Err(ActorError::Domain(
                        LicenseKeyError::InsufficientUsage { .. }
                    ))
            )
        })
        .collect();
    assert!(other.is_empty(), "{other:?}");
    assert_eq!(ok, 120);
    assert_eq!(in_store(&b, k.id).await.usage, 120);
    // Every answer shows the usage its own increment left, across both nodes.
    let last = on_a
        .iter()
        .chain(&on_b)
        .filter_map(|r| r.as_ref().ok())
        .map(|v| v.usage)
        .max();
    assert_eq!(last, Some(120));
}

#[actix::test]
async fn a_key_revoked_by_another_node_is_refused_and_read_as_revoked() {
    let Some(schema) = Schema::new("revoked_elsewhere") else {
        return;
    };
    let (a, b) = (schema.node().await, schema.node().await);
    let (ra, rb) = (registry(&a), registry(&b));
    let ka = shared(&a);
    let k = stored_key(&a, None).await;
    let now = chrono::Utc::now();
    // Node A holds the key in memory.
    ka.validate(k.id, &increment(&k, 1), now).await.unwrap();
    rb.call(k.id, RevokeLicenseKey).await.unwrap();
    // A's next increment is decided on A's stale copy; its statement finds another
    // revision and counts nothing; decided again on the stored key: refused.
    let r = ka.validate(k.id, &increment(&k, 1), now).await;
    assert!(
        matches!(
            r,
            Err(ActorError::Domain(LicenseKeyError::NotActive { .. }))
        ),
        "{r:?}"
    );
    let mut plain = increment(&k, 0);
    plain.increment_usage = None;
    let r = ka.validate(k.id, &plain, now).await;
    assert!(
        matches!(
            r,
            Err(ActorError::Domain(LicenseKeyError::NotActive { .. }))
        ),
        "{r:?}"
    );
    let seen = ra.call(k.id, GetLicenseKey).await.unwrap();
    assert_eq!(seen.status, KeyStatus::Revoked);
    assert_eq!(seen.usage, 1);
    // A read after another node's write checks the stored revision first and reloads.
    let k2 = stored_key(&a, None).await;
    ra.call(k2.id, GetLicenseKey).await.unwrap();
    rb.call(k2.id, RevokeLicenseKey).await.unwrap();
    let seen = ra.call(k2.id, GetLicenseKey).await.unwrap();
    assert_eq!(seen.status, KeyStatus::Revoked);
    assert_eq!(ra.stats().refreshes_total, 1, "{:?}", ra.stats());
}

#[actix::test]
async fn commands_queued_behind_a_slow_database_are_bounded_and_none_refused_is_applied() {
    let Some(schema) = Schema::new("bounded_queue") else {
        return;
    };
    let store = schema.node().await;
    let registry = registry_with_capacity(&store, 8);
    let k = stored_key_with(&store, None, Some(1_000)).await;
    // Far more at once than the entity may hold: the excess is refused at once (the
    // mailbox, then the queue behind the write in flight), never applied later.
    let replies =
        join_all((0..400).map(|i| registry.call(k.id, activate(&k, &format!("d{i}"))))).await;
    let ok = replies.iter().filter(|r| r.is_ok()).count();
    let full = replies
        .iter()
        .filter(|r| matches!(r, Err(ActorError::Unavailable(Unavailable::MailboxFull))))
        .count();
    assert_eq!(ok + full, 400, "{replies:?}");
    assert!(full > 0, "400 commands fit in 8 places");
    // Give anything wrongly left in flight the time to land, then count.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stored = in_store(&store, k.id).await;
    assert_eq!(
        stored.activations.len(),
        ok,
        "exactly the acknowledged activations"
    );
}

#[actix::test]
async fn a_key_rotated_on_one_node_is_refused_by_its_old_value_on_another() {
    let Some(schema) = Schema::new("rotated_elsewhere") else {
        return;
    };
    let (a, b) = (schema.node().await, schema.node().await);
    let (ra, rb) = (registry(&a), registry(&b));
    let k = stored_key(&a, None).await;
    // Node B holds the key in memory, and its directory the old value.
    let dir_b = crate::license_key::KeyDirectory::new();
    assert_eq!(
        dir_b.resolve(&b, k.organization_id, &k.key).await.unwrap(),
        Some(k.id)
    );
    let kb = shared(&b);
    let now = chrono::Utc::now();
    kb.validate(k.id, &increment(&k, 1), now).await.unwrap();
    let rotated = ra
        .call(
            k.id,
            RotateLicenseKey(crate::license_key::RotateKey {
                prefix: Some("test".into()),
            }),
        )
        .await
        .unwrap();
    // B's copy is stale: its actor checks the stored revision, reloads, and refuses the old
    // value; the unique index (one transaction with the record) knows only the new one.
    let _ = rb;
    assert_eq!(
        kb.validate(k.id, &increment(&k, 1), now).await.unwrap_err(),
        ActorError::Domain(LicenseKeyError::WrongKey)
    );
    assert_eq!(
        dir_b.lookup(&b, k.organization_id, &k.key).await.unwrap(),
        None
    );
    assert_eq!(
        dir_b
            .lookup(&b, k.organization_id, &rotated.key.key)
            .await
            .unwrap(),
        Some(k.id)
    );
    let v = kb
        .validate(k.id, &increment(&rotated.key, 1), now)
        .await
        .unwrap();
    assert_eq!(v.usage, 2);
}
