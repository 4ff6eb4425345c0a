//! Tests of the key directory (`directory.rs`) over a temporary store: filled from the
//! store, no negative caching, a misleading entry forgotten.

use chrono::Utc;
use tollgate_storage::{Batch, Expect};

use super::*;
use crate::domain::ids::{BenefitId, CustomerId};
use crate::license_key::KeyStatus;

async fn stored_key(store: &Store, org: OrganizationId, value: &str) -> LicenseKeyId {
    let key = LicenseKey {
        id: LicenseKeyId::new(),
        organization_id: org,
        customer_id: CustomerId::new(),
        benefit_id: BenefitId::new(),
        created_at: Utc::now(),
        modified_at: None,
        key: value.into(),
        status: KeyStatus::Granted,
        limit_activations: None,
        usage: 0,
        limit_usage: None,
        validations: 0,
        last_validated_at: None,
        expires_at: None,
        activations: Vec::new(),
        subscription_id: None,
        order_id: None,
        paid_until: None,
        allow_replacement: false,
        replacements: Vec::new(),
    };
    let mut batch = Batch::new();
    batch.put(&key, Expect::Absent).unwrap();
    store.commit(&batch).await.unwrap();
    key.id
}

#[actix_web::test]
async fn resolves_from_the_store_then_from_memory() {
    let store = Store::temporary().unwrap();
    let dir = KeyDirectory::new();
    let org = OrganizationId::new();
    let id = stored_key(&store, org, "KEY-1").await;
    assert_eq!(dir.cached(org, "KEY-1"), None);
    assert_eq!(dir.resolve(&store, org, "KEY-1").await.unwrap(), Some(id));
    assert_eq!(dir.cached(org, "KEY-1"), Some(id));
    assert_eq!(dir.len(), 1);
    // Same key text in another organization: another entry, not found.
    assert_eq!(
        dir.resolve(&store, OrganizationId::new(), "KEY-1")
            .await
            .unwrap(),
        None
    );
}

#[actix_web::test]
async fn a_miss_is_not_remembered() {
    let store = Store::temporary().unwrap();
    let dir = KeyDirectory::new();
    let org = OrganizationId::new();
    assert_eq!(dir.resolve(&store, org, "LATER").await.unwrap(), None);
    assert!(dir.is_empty());
    let id = stored_key(&store, org, "LATER").await;
    assert_eq!(dir.resolve(&store, org, "LATER").await.unwrap(), Some(id));
}

#[actix_web::test]
async fn forget_drops_a_misleading_entry() {
    let store = Store::temporary().unwrap();
    let dir = KeyDirectory::new();
    let org = OrganizationId::new();
    let real = stored_key(&store, org, "REAL").await;
    dir.remember(org, "REAL", LicenseKeyId::new());
    dir.forget(org, "REAL");
    assert_eq!(dir.cached(org, "REAL"), None);
    assert_eq!(dir.lookup(&store, org, "REAL").await.unwrap(), Some(real));
}
