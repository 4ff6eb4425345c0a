//! The subscription actor's messages: thin handlers over the pure model.
//!
//! Renewal is driven from outside (the payment processor lives in the HTTP crate) in
//! steps that each survive a crash: [`PlanRenewal`] says what is due at the actor's `now`;
//! the caller charges with the plan's idempotency key; [`Renew`] applies the outcome only
//! if the plan still matches, writing the subscription and the renewal order (derived id,
//! `Expect::Absent`) in one batch. Keys to revoke wait in `pending_revocations` until the
//! caller has revoked them and sends [`ClearRevocations`].

use actix::prelude::*;
use tollgate_storage::{Batch, Expect, Stored};

use super::model::{
    Change, PaymentOutcome, RenewalPlan, RenewalTerms, Subscription, SubscriptionError,
};
use super::SubscriptionEntity;
use crate::domain::ids::LicenseKeyId;
use crate::domain::order::Order;
use crate::entity::{CommandReply, EntityActor, Outcome};
use crate::error::ActorError;

pub type SubscriptionReply = Result<Subscription, ActorError<SubscriptionError>>;

fn domain(e: SubscriptionError) -> ActorError<SubscriptionError> {
    ActorError::Domain(e)
}

/// Reads the subscription, once it is durable.
#[derive(Message)]
#[rtype(result = "SubscriptionReply")]
pub struct GetSubscription;

/// `PATCH /v1/subscriptions/{id}`: cancel at the period end, uncancel, or revoke now.
#[derive(Message)]
#[rtype(result = "SubscriptionReply")]
pub struct UpdateSubscription(pub Change);

/// What renewal step is due now, given the catalog terms. Writes nothing.
#[derive(Message)]
#[rtype(result = "Result<RenewalPlan, ActorError<SubscriptionError>>")]
pub struct PlanRenewal {
    pub terms: RenewalTerms,
}

/// Applies the renewal step `expected` with the charge's outcome (`None` when the step
/// is [`RenewalPlan::End`]). If the step due now is no longer `expected` (another sweep
/// applied it, or time moved on), nothing is written and `applied` is false.
#[derive(Message)]
#[rtype(result = "Result<Renewed, ActorError<SubscriptionError>>")]
pub struct Renew {
    pub terms: RenewalTerms,
    pub expected: RenewalPlan,
    pub outcome: Option<PaymentOutcome>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Renewed {
    pub subscription: Subscription,
    pub order: Option<Order>,
    pub applied: bool,
}

/// Removes revoked keys from `pending_revocations`.
#[derive(Message)]
#[rtype(result = "SubscriptionReply")]
pub struct ClearRevocations {
    pub revoked: Vec<LicenseKeyId>,
}

fn commit(
    s: &Stored<Subscription>,
    next: Subscription,
    order: Option<&Order>,
) -> Result<(Batch, Stored<Subscription>), ActorError<SubscriptionError>> {
    let mut batch = Batch::new();
    batch.put(&next, Expect::Rev(s.rev))?;
    if let Some(order) = order {
        batch.put(order, Expect::Absent)?;
    }
    Ok((
        batch,
        Stored {
            rev: s.rev,
            value: next,
        },
    ))
}

impl Handler<GetSubscription> for EntityActor<SubscriptionEntity> {
    type Result = CommandReply<SubscriptionEntity, Subscription, SubscriptionError>;

    fn handle(&mut self, _: GetSubscription, ctx: &mut Context<Self>) -> Self::Result {
        self.read(ctx, |s, _| Ok(s.value.clone()))
    }
}

impl Handler<UpdateSubscription> for EntityActor<SubscriptionEntity> {
    type Result = CommandReply<SubscriptionEntity, Subscription, SubscriptionError>;

    fn handle(&mut self, msg: UpdateSubscription, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let next = s.value.change(msg.0.clone(), now).map_err(domain)?;
            let reply = next.clone();
            let (batch, state) = commit(s, next, None)?;
            Ok(Outcome::commit(batch, state, reply))
        })
    }
}

impl Handler<PlanRenewal> for EntityActor<SubscriptionEntity> {
    type Result = CommandReply<SubscriptionEntity, RenewalPlan, SubscriptionError>;

    fn handle(&mut self, msg: PlanRenewal, ctx: &mut Context<Self>) -> Self::Result {
        self.read(ctx, move |s, now| Ok(s.value.plan_renewal(now, &msg.terms)))
    }
}

impl Handler<Renew> for EntityActor<SubscriptionEntity> {
    type Result = CommandReply<SubscriptionEntity, Renewed, SubscriptionError>;

    fn handle(&mut self, msg: Renew, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let stale = || {
                Ok(Outcome::reply(Renewed {
                    subscription: s.value.clone(),
                    order: None,
                    applied: false,
                }))
            };
            if s.value.plan_renewal(now, &msg.terms) != msg.expected
                || msg.expected == RenewalPlan::NotDue
            {
                return stale();
            }
            let renewal = match s.value.renew(now, &msg.terms, msg.outcome.clone()) {
                Ok(r) => r,
                Err(SubscriptionError::StaleRenewal) => return stale(),
                Err(e) => return Err(domain(e)),
            };
            let reply = Renewed {
                subscription: renewal.subscription.clone(),
                order: renewal.order.clone(),
                applied: true,
            };
            let (batch, state) = commit(s, renewal.subscription, renewal.order.as_ref())?;
            Ok(Outcome::commit(batch, state, reply))
        })
    }
}

impl Handler<ClearRevocations> for EntityActor<SubscriptionEntity> {
    type Result = CommandReply<SubscriptionEntity, Subscription, SubscriptionError>;

    fn handle(&mut self, msg: ClearRevocations, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            match s.value.clear_revocations(&msg.revoked, now) {
                None => Ok(Outcome::reply(s.value.clone())),
                Some(next) => {
                    let reply = next.clone();
                    let (batch, state) = commit(s, next, None)?;
                    Ok(Outcome::commit(batch, state, reply))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
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
            tax_amount: 0,
            billing_address: None,
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
}
