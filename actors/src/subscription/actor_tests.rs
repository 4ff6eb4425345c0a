//! The subscription actor through the registry, over a temporary store: a renewal is
//! applied once with its order; revoke, then clearing the revocations, empties the outbox.

use std::time::Duration;

use chrono::{TimeZone, Utc};
use tollgate_storage::Store;

use super::*;
use crate::clock::ManualClock;
use crate::domain::custom_field::CustomFieldData;
use crate::domain::ids::{CustomerId, OrganizationId, PriceId, ProductId, SubscriptionId};
use crate::domain::metadata::Metadata;
use crate::domain::product::{Price, PriceKind, RecurringInterval};
use crate::registry::{Registry, RegistryConfig};
use crate::subscription::model::Purchase;
use crate::subscription::SUBSCRIPTION_REVOKING;

fn config() -> RegistryConfig {
    RegistryConfig {
        arbiters: 1,
        mailbox_capacity: 16,
        send_timeout: Duration::from_secs(10),
        idle_timeout: None,
        write_back: None,
        check_freshness: false,
    }
}

async fn stored(store: &Store, start: chrono::DateTime<Utc>) -> Subscription {
    let p = Purchase {
        organization_id: OrganizationId::new(),
        customer_id: CustomerId::new(),
        customer_email: "a@b.co".into(),
        product_id: ProductId::new(),
        product_name: "Pro".into(),
        price: Price {
            id: PriceId::new(),
            created_at: start,
            modified_at: None,
            is_archived: false,
            kind: PriceKind::RecurringFixed {
                interval: RecurringInterval::Month,
                currency: "usd".into(),
                amount: 1500,
            },
        },
        amount: None,
        discount: None,
        checkout_id: None,
        metadata: Metadata::default(),
        custom_field_data: CustomFieldData::default(),
        payment_token: None,
        license_key_ids: vec![LicenseKeyId::new()],
        interval_count: 1,
        trial_end: None,
        seats: None,
    };
    let s = Subscription::new_from_purchase(SubscriptionId::new(), p, start).unwrap();
    let mut batch = Batch::new();
    batch.put(&s, Expect::Absent).unwrap();
    store.commit_durable(&batch).await.unwrap();
    s
}

fn terms() -> RenewalTerms {
    RenewalTerms {
        price_amount: Some(1500),
        discount_duration: None,
        usage: Vec::new(),
    }
}

#[actix::test]
async fn a_renewal_is_applied_once_with_its_order() {
    let start = Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0).unwrap();
    let store = Store::temporary().unwrap();
    let (clock, shared) = ManualClock::shared(start);
    let reg: Registry<SubscriptionEntity> =
        Registry::start(store.clone(), shared, config()).unwrap();
    let s = stored(&store, start).await;

    let plan = reg
        .call(s.id, PlanRenewal { terms: terms() })
        .await
        .unwrap();
    assert_eq!(plan, RenewalPlan::NotDue);

    clock.set(s.current_period_end.unwrap());
    let plan = reg
        .call(s.id, PlanRenewal { terms: terms() })
        .await
        .unwrap();
    let RenewalPlan::Charge(charge) = &plan else {
        panic!("expected a charge: {plan:?}");
    };
    assert_eq!(charge.cycle, 1);
    let outcome = Some(PaymentOutcome::Paid {
        tax: Box::new(no_tax()),
        payment_id: Some("pi_renewal".into()),
    });
    let renew = || Renew {
        terms: terms(),
        expected: plan.clone(),
        outcome: outcome.clone(),
    };
    let first = reg.call(s.id, renew()).await.unwrap();
    assert!(first.applied);
    let order = first.order.unwrap();
    assert!(store.get::<Order>(&order.id.key()).await.unwrap().is_some());
    // A repeated step (a retried sweep) writes nothing.
    let again = reg.call(s.id, renew()).await.unwrap();
    assert!(!again.applied);
    assert_eq!(again.subscription.cycles, 1);
    let stored = store
        .get::<Subscription>(&s.id.key())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.value.cycles, 1);
}

#[actix::test]
async fn revoke_then_clear_empties_the_outbox() {
    let start = Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0).unwrap();
    let store = Store::temporary().unwrap();
    let (_clock, shared) = ManualClock::shared(start);
    let reg: Registry<SubscriptionEntity> =
        Registry::start(store.clone(), shared, config()).unwrap();
    let s = stored(&store, start).await;
    let revoked = reg
        .call(
            s.id,
            UpdateSubscription(Change::Revoke {
                reason: None,
                comment: None,
            }),
        )
        .await
        .unwrap();
    assert_eq!(revoked.pending_revocations, s.license_key_ids);
    let pending = store
        .index_range(SUBSCRIPTION_REVOKING, &[], &[], None)
        .await
        .unwrap();
    assert_eq!(pending, vec![s.id.key()]);
    let again = reg
        .call(
            s.id,
            UpdateSubscription(Change::Revoke {
                reason: None,
                comment: None,
            }),
        )
        .await;
    assert_eq!(
        again.err(),
        Some(ActorError::Domain(SubscriptionError::AlreadyCanceled))
    );
    let cleared = reg
        .call(
            s.id,
            ClearRevocations {
                revoked: s.license_key_ids.clone(),
            },
        )
        .await
        .unwrap();
    assert!(cleared.pending_revocations.is_empty());
    assert!(store
        .index_range(SUBSCRIPTION_REVOKING, &[], &[], None)
        .await
        .unwrap()
        .is_empty());
}

/// A quote of no tax (the default service's answer).
fn no_tax() -> crate::tax::TaxQuote {
    crate::tax::TaxQuote::zero(crate::tax::TaxRequest::new(
        0,
        "usd",
        chrono::NaiveDate::from_ymd_opt(2026, 1, 1).expect("a date"),
    ))
}
