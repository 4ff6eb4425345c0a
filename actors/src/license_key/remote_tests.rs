//! The license key actor over PostgreSQL (`design/scale-out.md` 4.3): registries on one
//! database stand for nodes. The database is `TOLLGATE_TEST_DATABASE_URL` or the `PG*`
//! variables `pg_virtualenv` sets; without one a test says "skipped" on a developer
//! machine and fails under `CI=true`. Each test works in a schema of its own.

use std::time::Duration;

use chrono::Utc;
use futures_util::future::join_all;
use tollgate_storage::{Batch, Expect, Store};

use super::*;
use crate::clock::SystemClock;
use crate::domain::ids::{BenefitId, CustomerId};
use crate::registry::{Registry, RegistryConfig};

fn database_url() -> Option<String> {
    if let Ok(url) = std::env::var("TOLLGATE_TEST_DATABASE_URL") {
        return Some(url);
    }
    let Ok(host) = std::env::var("PGHOST") else {
        assert!(
            std::env::var("CI").is_err(),
            "CI=true but no database: set TOLLGATE_TEST_DATABASE_URL or run under pg_virtualenv"
        );
        return None;
    };
    let var = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    let password = std::env::var("PGPASSWORD").ok();
    Some(format!(
        "postgres://{}{}@{}:{}/{}",
        var("PGUSER", "postgres"),
        password.map(|p| format!(":{p}")).unwrap_or_default(),
        host,
        var("PGPORT", "5432"),
        var("PGDATABASE", "postgres"),
    ))
}

/// A schema on the test database, dropped when the test ends.
struct Schema {
    url: String,
    name: String,
}

impl Schema {
    fn new(test: &str) -> Option<Schema> {
        let Some(url) = database_url() else {
            eprintln!("skipped: {test} needs PostgreSQL (TOLLGATE_TEST_DATABASE_URL or PGHOST)");
            return None;
        };
        let name = format!("a_{}_{}", test, uuid::Uuid::new_v4().simple())
            .chars()
            .take(60)
            .collect();
        Some(Schema { url, name })
    }

    /// A store over the schema: one "node".
    async fn node(&self) -> Store {
        Store::postgres(&self.url, &self.name, 8)
            .await
            .expect("reaching the test database")
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let (url, name) = (self.url.clone(), self.name.clone());
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                if let Ok((client, conn)) =
                    tokio_postgres::connect(&url, tokio_postgres::NoTls).await
                {
                    tokio::spawn(conn);
                    let _ = client
                        .batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
                        .await;
                }
            });
        })
        .join();
    }
}

/// A registry as a node on a shared database runs it: freshness checks on.
fn registry(store: &Store) -> Registry<LicenseKeyEntity> {
    let config = RegistryConfig {
        arbiters: 2,
        mailbox_capacity: 4096,
        send_timeout: Duration::from_secs(30),
        idle_timeout: None,
        write_back: None,
        check_freshness: true,
    };
    Registry::start(store.clone(), SystemClock::shared(), config).unwrap()
}

async fn stored_key(store: &Store, limit_usage: Option<i64>) -> LicenseKey {
    let key = LicenseKey {
        id: LicenseKeyId::new(),
        organization_id: OrganizationId::new(),
        customer_id: CustomerId::new(),
        benefit_id: BenefitId::new(),
        created_at: Utc::now(),
        modified_at: None,
        key: generate_key(Some("pg")),
        status: KeyStatus::Granted,
        limit_activations: None,
        usage: 0,
        limit_usage,
        validations: 0,
        last_validated_at: None,
        expires_at: None,
        activations: Vec::new(),
        subscription_id: None,
        order_id: None,
    };
    let mut batch = Batch::new();
    batch.put(&key, Expect::Absent).unwrap();
    store.commit(&batch).await.unwrap();
    key
}

fn increment(k: &LicenseKey, n: i64) -> ValidateLicenseKey {
    ValidateLicenseKey(ValidateKey {
        organization_id: k.organization_id,
        key: k.key.clone(),
        activation_id: None,
        benefit_id: None,
        customer_id: None,
        increment_usage: Some(n),
        conditions: JsonObject::new(),
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
async fn concurrent_increments_on_one_key_are_coalesced_and_the_limit_holds() {
    let Some(schema) = Schema::new("coalesced") else {
        return;
    };
    let store = schema.node().await;
    let registry = registry(&store);
    let k = stored_key(&store, Some(150)).await;
    let replies = join_all((0..200).map(|_| registry.call(k.id, increment(&k, 1)))).await;
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
    let stored = in_store(&store, k.id).await;
    assert_eq!((stored.usage, stored.validations), (150, 150));
    // Fewer transactions than commands: those that queued behind a write went together.
    let stats = registry.stats();
    assert_eq!(stats.grouped_commands_total, 200, "{stats:?}");
    assert!(stats.group_writes_total < 200, "no coalescing: {stats:?}");
    // Each write is one revision: the stored revision counts the writes.
    let rev = store.revision::<LicenseKey>(&k.id.key()).await.unwrap();
    assert_eq!(rev, Some(1 + stats.group_writes_total), "{stats:?}");
}

#[actix::test]
async fn two_nodes_on_one_key_never_pass_the_limit() {
    let Some(schema) = Schema::new("two_registries") else {
        return;
    };
    let (a, b) = (schema.node().await, schema.node().await);
    let (ra, rb) = (registry(&a), registry(&b));
    let k = stored_key(&a, Some(120)).await;
    let on_a = join_all((0..100).map(|_| ra.call(k.id, increment(&k, 1))));
    let on_b = join_all((0..100).map(|_| rb.call(k.id, increment(&k, 1))));
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
    // Each node saw the other's writes (read under the lock), and its replies agree.
    let last_a = on_a
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|v| v.key.usage)
        .max();
    let last_b = on_b
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|v| v.key.usage)
        .max();
    assert_eq!(last_a.max(last_b), Some(120));
}

#[actix::test]
async fn a_key_revoked_by_another_node_is_refused_and_read_as_revoked() {
    let Some(schema) = Schema::new("revoked_elsewhere") else {
        return;
    };
    let (a, b) = (schema.node().await, schema.node().await);
    let (ra, rb) = (registry(&a), registry(&b));
    let k = stored_key(&a, None).await;
    // Node A holds the key in memory.
    ra.call(k.id, increment(&k, 1)).await.unwrap();
    rb.call(k.id, RevokeLicenseKey).await.unwrap();
    // A's next command reads the stored key under its lock: refused.
    let r = ra.call(k.id, increment(&k, 1)).await;
    assert!(
        matches!(r, Err(ActorError::Domain(LicenseKeyError::NotActive))),
        "{r:?}"
    );
    // A's read checks the stored revision first and reloads.
    let seen = ra.call(k.id, GetLicenseKey).await.unwrap();
    assert_eq!(seen.status, KeyStatus::Revoked);
    assert_eq!(seen.usage, 1);
    assert!(ra.stats().refreshes_total >= 1, "{:?}", ra.stats());
}
