//! The subscription actor's messages and their handlers: thin, over the rules of
//! `decide.rs` and `renewal.rs`.
//!
//! Renewal is driven from outside (the payment processor lives in the HTTP crate) in
//! steps that each survive a crash: [`PlanRenewal`] says what is due at the actor's `now`;
//! the caller charges with the plan's idempotency key; [`Renew`] applies the outcome only
//! if the plan still matches, writing the subscription and the renewal order (derived id:
//! written `pending` by a decline, then over it `paid`) in one batch. The buyer's own
//! charge of a past-due renewal is [`BeginRecovery`] (the payment lock, the charge to
//! make) then [`SettleRecovery`] (its outcome). Keys to revoke wait in
//! `pending_revocations` until the caller has revoked them and sends [`ClearRevocations`].

use actix::prelude::*;
use tollgate_storage::{Batch, Expect, Stored};

use super::follow::KeysPaidUntil;
use super::model::{Change, Subscription, SubscriptionError};
use super::plan_change::{ChangeCharge, PlanChange};
use super::recovery::RecoveryOutcome;
use super::renewal::{PaymentOutcome, Renewal, RenewalCharge, RenewalPlan, RenewalTerms};
use super::SubscriptionEntity;
use crate::domain::ids::LicenseKeyId;
use crate::domain::order::{BillingReason, Order, OrderStatus};
use crate::entity::{CommandReply, EntityActor, Outcome};
use crate::error::ActorError;
use crate::license_key::LicenseKey;

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

/// Applies a plan change decided earlier (and charged, when `charge` is given) if the
/// subscription still decides the same; writes in one batch the subscription, the
/// change's order and the new product's keys (`new_keys`, derived ids, `Expect::Absent`).
/// `applied` is false when nothing was written.
#[derive(Message)]
#[rtype(result = "Result<Renewed, ActorError<SubscriptionError>>")]
pub struct ChangePlan {
    pub change: PlanChange,
    pub charge: Option<ChangeCharge>,
    pub new_keys: Vec<LicenseKey>,
    pub dropped_keys: Vec<LicenseKeyId>,
}

/// Starts the buyer's charge of the past-due renewal with `method` (the processor's
/// reference of the card): takes the payment lock and answers the charge to make.
#[derive(Message)]
#[rtype(result = "Result<RenewalCharge, ActorError<SubscriptionError>>")]
pub struct BeginRecovery {
    pub terms: RenewalTerms,
    pub method: String,
}

/// Applies the outcome of the buyer's charge of period `cycle`; a paid one writes the
/// subscription, the renewal order `paid` and the keys' paid period in one batch.
/// `applied` is false when nothing was written (paid or ended meanwhile).
#[derive(Message)]
#[rtype(result = "Result<Renewed, ActorError<SubscriptionError>>")]
pub struct SettleRecovery {
    pub terms: RenewalTerms,
    pub cycle: u32,
    pub outcome: RecoveryOutcome,
}

/// Bills the subscription's next charges with `0` (the processor's reference of a saved
/// method); the retry schedule is not touched. Nothing is written when it already does.
#[derive(Message)]
#[rtype(result = "SubscriptionReply")]
pub struct SetPaymentMethod(pub String);

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
        // A renewal's order (derived id) is written `pending` by a decline, then again by
        // each retry, and `paid` over it; any other order is new.
        let expect = if order.billing_reason == BillingReason::SubscriptionCycle {
            Expect::Any
        } else {
            Expect::Absent
        };
        batch.put(order, expect)?;
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
            let planned =
                s.value
                    .renew_as_planned(now, &msg.terms, &msg.expected, msg.outcome.clone());
            let Some(renewal) = planned.map_err(domain)? else {
                return Ok(Outcome::reply(Renewed {
                    subscription: s.value.clone(),
                    order: None,
                    applied: false,
                }));
            };
            let reply = Renewed {
                subscription: renewal.subscription.clone(),
                order: renewal.order.clone(),
                applied: true,
            };
            let (batch, state) = commit_renewal(s, renewal, now)?;
            Ok(Outcome::commit(batch, state, reply))
        })
    }
}

/// Writes a renewal step: the subscription, its order, and (a paid period) the outbox that
/// tells the keys, in one batch.
fn commit_renewal(
    s: &Stored<Subscription>,
    renewal: Renewal,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(Batch, Stored<Subscription>), ActorError<SubscriptionError>> {
    let paid = renewal
        .order
        .as_ref()
        .filter(|o| o.status == OrderStatus::Paid)
        .and(renewal.subscription.current_period_end)
        .filter(|_| !renewal.subscription.license_key_ids.is_empty())
        .map(|paid_until| KeysPaidUntil {
            subscription_id: renewal.subscription.id,
            paid_until,
            keys: renewal.subscription.license_key_ids.clone(),
            created_at: now,
        });
    let (mut batch, state) = commit(s, renewal.subscription, renewal.order.as_ref())?;
    // The keys learn of the paid period from this outbox, written with it.
    if let Some(paid) = &paid {
        batch.put(paid, Expect::Any)?;
    }
    Ok((batch, state))
}

impl Handler<BeginRecovery> for EntityActor<SubscriptionEntity> {
    type Result = CommandReply<SubscriptionEntity, RenewalCharge, SubscriptionError>;

    fn handle(&mut self, msg: BeginRecovery, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let (next, charge) = s
                .value
                .begin_recovery(now, &msg.terms, &msg.method)
                .map_err(domain)?;
            let (batch, state) = commit(s, next, None)?;
            Ok(Outcome::commit(batch, state, charge))
        })
    }
}

impl Handler<SettleRecovery> for EntityActor<SubscriptionEntity> {
    type Result = CommandReply<SubscriptionEntity, Renewed, SubscriptionError>;

    fn handle(&mut self, msg: SettleRecovery, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let Some(renewal) =
                s.value
                    .settle_recovery(now, &msg.terms, msg.cycle, msg.outcome.clone())
            else {
                return Ok(Outcome::reply(Renewed {
                    subscription: s.value.clone(),
                    order: None,
                    applied: false,
                }));
            };
            let reply = Renewed {
                subscription: renewal.subscription.clone(),
                order: renewal.order.clone(),
                applied: true,
            };
            let (batch, state) = commit_renewal(s, renewal, now)?;
            Ok(Outcome::commit(batch, state, reply))
        })
    }
}

impl Handler<SetPaymentMethod> for EntityActor<SubscriptionEntity> {
    type Result = CommandReply<SubscriptionEntity, Subscription, SubscriptionError>;

    fn handle(&mut self, msg: SetPaymentMethod, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, _| {
            if s.value.payment_token.as_deref() == Some(msg.0.as_str()) {
                return Ok(Outcome::reply(s.value.clone()));
            }
            let mut next = s.value.clone();
            next.payment_token = Some(msg.0.clone());
            let reply = next.clone();
            let (batch, state) = commit(s, next, None)?;
            Ok(Outcome::commit(batch, state, reply))
        })
    }
}

impl Handler<ChangePlan> for EntityActor<SubscriptionEntity> {
    type Result = CommandReply<SubscriptionEntity, Renewed, SubscriptionError>;

    fn handle(&mut self, msg: ChangePlan, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let new_ids: Vec<LicenseKeyId> = msg.new_keys.iter().map(|k| k.id).collect();
            let applied = s
                .value
                .apply_plan_change(&msg.change, &new_ids, &msg.dropped_keys, now)
                .map_err(domain)?;
            let Some(next) = applied else {
                return Ok(Outcome::reply(Renewed {
                    subscription: s.value.clone(),
                    order: None,
                    applied: false,
                }));
            };
            let order = msg
                .charge
                .as_ref()
                .filter(|_| msg.change.due_now > 0)
                .map(|c| next.change_order(&msg.change, c, now));
            let reply = Renewed {
                subscription: next.clone(),
                order: order.clone(),
                applied: true,
            };
            // A new cycle is paid at once: the keys kept from the old plan follow it, as
            // after a paid renewal (the new ones were granted for it).
            let kept: Vec<LicenseKeyId> = next
                .license_key_ids
                .iter()
                .filter(|k| !new_ids.contains(k))
                .copied()
                .collect();
            let paid = (msg.change.resets_cycle && !kept.is_empty()).then_some(KeysPaidUntil {
                subscription_id: next.id,
                paid_until: msg.change.period_end,
                keys: kept,
                created_at: now,
            });
            let (mut batch, state) = commit(s, next, order.as_ref())?;
            for key in &msg.new_keys {
                batch.put(key, Expect::Absent)?;
            }
            if let Some(paid) = &paid {
                batch.put(paid, Expect::Any)?;
            }
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
#[path = "actor_tests.rs"]
mod tests;
