//! Subscriptions as a billing system runs them: changes a seller asks for (cancel at the
//! period end, uncancel, revoke now), and [`sweep_subscriptions`], the job that renews
//! (charging through the payment processor), ends and revokes what is due.

use serde::Serialize;
use serde_json::Value;
use tollgate_actors::license_key::RevokeLicenseKey;
use tollgate_actors::subscription::{
    Change, ClearRevocations, GetSubscription, PaymentOutcome, PlanRenewal, Renew, RenewalCharge,
    RenewalPlan, RenewalTerms, Subscription, SubscriptionError, UpdateSubscription,
    SUBSCRIPTION_DUE, SUBSCRIPTION_REVOKING,
};
use tollgate_actors::ActorError;
use tollgate_storage::keys::KeyBuf;

use crate::api::subscription::SubscriptionUpdate;
use crate::app::access::can_access;
use crate::domain::customer::Customer;
use crate::domain::discount::Discount;
use crate::domain::ids::SubscriptionId;
use crate::domain::product::Product;
use crate::error::{ApiError, FieldError};
use crate::extract::Subject;
use crate::loc;
use crate::payments::{ChargeOutcome, ChargeRequest};
use crate::state::AppState;

/// A subscription aggregate's error as an HTTP error (Polar's statuses and messages).
pub fn subscription_error(e: ActorError<SubscriptionError>) -> ApiError {
    match e {
        ActorError::Domain(e @ SubscriptionError::AlreadyCanceled) => {
            ApiError::NotPermitted(e.to_string())
        }
        ActorError::Domain(e @ (SubscriptionError::NotCanceling | SubscriptionError::Ended)) => {
            ApiError::BadRequest(e.to_string())
        }
        ActorError::Domain(e) => ApiError::internal(e),
        ActorError::NotFound => ApiError::not_found(),
        ActorError::AlreadyExists => ApiError::Conflict("The subscription already exists.".into()),
        ActorError::Unavailable(_) => ApiError::Unavailable,
        ActorError::Storage(s) => s.into(),
    }
}

/// A subscription the subject may see, else 404.
pub async fn subscription_for(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
) -> Result<Subscription, ApiError> {
    match state.store.get::<Subscription>(&id.key()).await? {
        Some(s) if can_access(state, subject, s.value.organization_id).await? => Ok(s.value),
        _ => Err(ApiError::not_found()),
    }
}

/// What one sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    /// Renewals paid (one `subscription_cycle` order each).
    pub renewed: u64,
    /// Renewals declined (the subscription is past due, or canceled after the dunning
    /// period).
    pub declined: u64,
    /// Subscriptions that ended at their period end (`cancel_at_period_end`).
    pub ended: u64,
    /// License keys revoked.
    pub keys_revoked: u64,
    /// Steps that failed and are left for the next sweep.
    pub errors: u64,
}

/// A subscription that is due is renewed at most this many periods in one sweep (a
/// service that was down for long catches up over several sweeps).
const MAX_PERIODS_PER_SWEEP: usize = 12;

/// Renews, ends and revokes whatever is due at `state.now()`:
/// 1. every subscription whose renewal is due (index `SUBSCRIPTION_DUE`, key ≤ now): the
///    actor plans the step; a charge goes through `state.processor` with the plan's
///    idempotency key (`<subscription id>:<cycle>`); the actor then writes the outcome and
///    the renewal order in one batch, only if the plan still holds;
/// 2. every subscription with keys to revoke (`SUBSCRIPTION_REVOKING`): each key is
///    revoked through its actor, then the subscription forgets them.
///
/// Each step is idempotent, so a crash anywhere is recovered by the next sweep: the charge
/// is repeated with the same key (never taken twice), the order id is derived from the
/// subscription and the cycle (never written twice), and revoking a revoked key is a no-op.
pub async fn sweep_subscriptions(state: &AppState) -> Result<SweepReport, ApiError> {
    let mut report = SweepReport::default();
    let now = state.now();
    let upto = KeyBuf::new()
        .i64(now.timestamp_micros().saturating_add(1))
        .into_vec();
    let due = state
        .store
        .index_range(SUBSCRIPTION_DUE, &[], &[], Some(&upto))
        .await?;
    for key in due {
        let Some(id) = SubscriptionId::from_key(&key) else {
            continue;
        };
        if let Err(e) = renew(state, id, &mut report).await {
            tracing::warn!(subscription = %id, error = %e, "renewal left for the next sweep");
            report.errors += 1;
        }
    }
    let revoking = state
        .store
        .index_range(SUBSCRIPTION_REVOKING, &[], &[], None)
        .await?;
    for key in revoking {
        let Some(id) = SubscriptionId::from_key(&key) else {
            continue;
        };
        if let Err(e) = revoke_pending(state, id, &mut report).await {
            tracing::warn!(subscription = %id, error = %e, "revocation left for the next sweep");
            report.errors += 1;
        }
    }
    if report != SweepReport::default() {
        tracing::info!(?report, "subscription sweep");
    }
    Ok(report)
}

/// The catalog terms of a subscription's renewal: its price's amount and its discount's
/// duration, as stored now.
async fn renewal_terms(state: &AppState, s: &Subscription) -> Result<RenewalTerms, ApiError> {
    let price_amount = state
        .store
        .get::<Product>(&s.product_id.key())
        .await?
        .and_then(|p| {
            p.value
                .price(s.price_id)
                .and_then(|p| p.kind.fixed_amount())
        });
    let discount_duration = match s.discount_id {
        Some(id) => state
            .store
            .get::<Discount>(&id.key())
            .await?
            .map(|d| d.value.duration),
        None => None,
    };
    Ok(RenewalTerms {
        price_amount,
        discount_duration,
    })
}

async fn renew(
    state: &AppState,
    id: SubscriptionId,
    report: &mut SweepReport,
) -> Result<(), ApiError> {
    for _ in 0..MAX_PERIODS_PER_SWEEP {
        let current = state
            .subscriptions
            .call(id, GetSubscription)
            .await
            .map_err(subscription_error)?;
        let terms = renewal_terms(state, &current).await?;
        let plan = state
            .subscriptions
            .call(id, PlanRenewal { terms })
            .await
            .map_err(subscription_error)?;
        let outcome = match &plan {
            RenewalPlan::NotDue => return Ok(()),
            RenewalPlan::End => None,
            RenewalPlan::Charge(charge) => Some(charge_renewal(state, id, charge).await?),
        };
        let declined = outcome == Some(PaymentOutcome::Declined);
        let renewed = state
            .subscriptions
            .call(
                id,
                Renew {
                    terms,
                    expected: plan.clone(),
                    outcome,
                },
            )
            .await
            .map_err(subscription_error)?;
        if !renewed.applied {
            return Ok(());
        }
        match plan {
            RenewalPlan::End => {
                report.ended += 1;
                return Ok(());
            }
            _ if declined => {
                report.declined += 1;
                return Ok(());
            }
            _ => report.renewed += 1,
        }
    }
    Ok(())
}

/// Charges a renewal (amount plus tax) through the processor. A processor that does not
/// answer is an error: the renewal stays due and is charged again with the same key.
async fn charge_renewal(
    state: &AppState,
    id: SubscriptionId,
    charge: &RenewalCharge,
) -> Result<PaymentOutcome, ApiError> {
    let billing_address = state
        .store
        .get::<Customer>(&charge.customer_id.key())
        .await?
        .and_then(|c| c.value.billing_address);
    let tax_amount = if charge.amount > 0 {
        state.tax.tax(
            charge.amount,
            &charge.currency,
            billing_address.as_ref().map(|a| a.country.as_str()),
        )
    } else {
        0
    };
    let total = charge.amount.saturating_add(tax_amount);
    if total <= 0 {
        return Ok(PaymentOutcome::Paid {
            tax_amount,
            billing_address,
        });
    }
    let request = ChargeRequest {
        idempotency_key: charge.idempotency_key.clone(),
        amount: total,
        currency: charge.currency.clone(),
        confirmation_token: charge.payment_token.clone(),
        setup_future_usage: true,
        // The buyer is not there: the saved payment method is charged off-session.
        off_session: true,
        customer_id: charge.customer_id,
        customer_email: charge.customer_email.clone(),
        customer_name: None,
        metadata: vec![
            ("subscription_id".into(), id.to_string()),
            ("idempotency_key".into(), charge.idempotency_key.clone()),
        ],
    };
    match state.processor.charge(request).await {
        Ok(ChargeOutcome::Succeeded { .. }) => Ok(PaymentOutcome::Paid {
            tax_amount,
            billing_address,
        }),
        // An off-session charge that needs the buyer (authentication) did not pay: the
        // subscription goes past due and is retried like a decline.
        Ok(ChargeOutcome::Declined { .. } | ChargeOutcome::Pending { .. }) => {
            Ok(PaymentOutcome::Declined)
        }
        Err(e) => Err(ApiError::internal(e)),
    }
}

/// Revokes the keys a subscription still has to revoke, then clears them from it.
/// Returns the subscription as it then is (`None` if there was nothing to clear).
async fn revoke_pending(
    state: &AppState,
    id: SubscriptionId,
    report: &mut SweepReport,
) -> Result<Option<Subscription>, ApiError> {
    // Through the actor: it answers once the ended state is durable, so no key is revoked
    // for an end a crash could still undo.
    let s = state
        .subscriptions
        .call(id, GetSubscription)
        .await
        .map_err(subscription_error)?;
    let mut done = Vec::new();
    for key in &s.pending_revocations {
        match state.license_keys.call(*key, RevokeLicenseKey).await {
            Ok(_) => {
                done.push(*key);
                report.keys_revoked += 1;
            }
            // A key that no longer exists has nothing to revoke.
            Err(ActorError::NotFound) => done.push(*key),
            Err(e) => {
                tracing::warn!(subscription = %id, license_key = %key, error = %e,
                    "license key revocation left for the next sweep");
                report.errors += 1;
            }
        }
    }
    if done.is_empty() {
        return Ok(None);
    }
    let cleared = state
        .subscriptions
        .call(id, ClearRevocations { revoked: done })
        .await
        .map_err(subscription_error)?;
    Ok(Some(cleared))
}

/// Changes subscription `id` as `subject` asks: cancel at the period end, uncancel, or
/// revoke at once (its license keys revoked now; what fails is left for the sweep).
/// Nothing to change answers the subscription as it is (Polar).
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
    input: SubscriptionUpdate,
) -> Result<Subscription, ApiError> {
    // `revoke` is `Literal[True] | None`.
    if input.revoke == Some(false) {
        return Err(ApiError::validation(
            FieldError::new(
                "literal_error",
                loc!["body", "revoke"],
                "Input should be True",
                Value::Bool(false),
            )
            .with_ctx(serde_json::json!({"expected": "True"})),
        ));
    }
    state.store.read_barrier().await?;
    let current = subscription_for(state, subject, id).await?;
    let revoke = input.revoke == Some(true);
    let reason = input
        .customer_cancellation_reason
        .map(|r| r.as_str().to_string());
    let comment = input.customer_cancellation_comment;
    let change = match input.cancel_at_period_end {
        Some(_) if revoke => {
            return Err(ApiError::invalid(
                loc!["body", "revoke"],
                "Use either `revoke` for immediate cancellation and revokation or \
                 `cancel_at_period_end`.",
                Value::Bool(true),
            ))
        }
        Some(false) => Change::Uncancel,
        Some(true) => Change::CancelAtPeriodEnd { reason, comment },
        None if revoke => Change::Revoke { reason, comment },
        None => return Ok(current),
    };
    let mut updated = state
        .subscriptions
        .call(id, UpdateSubscription(change))
        .await
        .map_err(subscription_error)?;
    if !updated.pending_revocations.is_empty() {
        // Revoke the keys now; whatever fails here is retried by the sweep.
        let mut report = SweepReport::default();
        match revoke_pending(state, id, &mut report).await {
            Ok(Some(s)) => updated = s,
            Ok(None) => {}
            Err(e) => tracing::warn!(subscription = %id, error = %e,
                "license keys left for the sweep to revoke"),
        }
    }
    Ok(updated)
}
