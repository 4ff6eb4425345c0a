//! The processor's word after the fact: the router of the typed events
//! ([`crate::payments::events`]) that the webhook endpoint (`crate::routes::stripe_webhook`)
//! verified and read. An event is handled at most once in effect: its id is recorded
//! durably once handled, and handling is itself idempotent, so a crash in between only
//! repeats a no-op.
//!
//! - a payment that succeeded completes the confirmed checkout it names through the same
//!   exactly-once path as confirm (a webhook racing the synchronous reply creates nothing
//!   twice);
//! - a payment that failed or was canceled reopens the checkout, but only if it still waits
//!   on that very payment (a late failure of an earlier attempt never touches a newer one);
//!   one that failed after it was `processing` (a debit) fails the checkout instead (the
//!   buyer has left; nothing was granted, a purchase completes only once paid). A trial's
//!   checkout saves the card instead of paying: the same holds for it;
//! - a payment reported `processing` is recorded on the checkout it waits on (it stays
//!   `confirmed`);
//! - a buyer's "pay now" charge of a past-due renewal (metadata `order_id`, no checkout)
//!   that waited for the buyer (3-D Secure) is settled by `crate::app::recovery`;
//! - refunds are settled or recorded (`crate::app::refunds::from_processor`), disputes
//!   recorded and followed (`crate::app::disputes::from_processor`).
//!
//! Every other event is acknowledged and ignored.

use tollgate_actors::checkout::{Checkout, CheckoutStatus, GetCheckout};
use tollgate_storage::Batch;

use crate::domain::ids::CheckoutId;
use crate::error::{AppError, Code};
use crate::payments::events::{EventKind, PaymentUpdate, ProcessorEvent};
use crate::payments::stripe::event_meta_key;
use crate::payments::ChargeOutcome;
use crate::state::AppState;

/// Handles a verified event once: `false` if its id was handled before (nothing is done).
pub async fn payment_event(state: &AppState, event: &ProcessorEvent) -> Result<bool, AppError> {
    let marker = event_meta_key(&event.id);
    if state.store.get_meta(&marker).await?.is_some() {
        return Ok(false);
    }
    handle(state, &event.kind).await?;
    let mut batch = Batch::new();
    batch.put_meta(&marker, state.now().to_rfc3339().into_bytes());
    state.store.commit_durable(&batch).await?;
    Ok(true)
}

/// Acts on one event. An error makes the processor deliver it again later.
async fn handle(state: &AppState, event: &EventKind) -> Result<(), AppError> {
    match event {
        EventKind::RefundUpdated(refunds) => {
            for refund in refunds {
                crate::app::refunds::from_processor(state, refund).await?;
            }
            Ok(())
        }
        EventKind::DisputeChanged(dispute) => {
            crate::app::disputes::from_processor(state, dispute).await
        }
        EventKind::PaymentSucceeded(payment) | EventKind::PaymentProcessing(payment) => {
            payment_settled(state, payment, false).await
        }
        EventKind::PaymentFailed(payment) => payment_settled(state, payment, true).await,
        EventKind::Ignored => Ok(()),
    }
}

/// A checkout's payment (or card setup) as the processor reports it; `failed`: the event
/// says it failed or was canceled.
async fn payment_settled(
    state: &AppState,
    payment: &PaymentUpdate,
    failed: bool,
) -> Result<(), AppError> {
    // The sweep's renewal charges are answered synchronously; checkouts and the buyer's
    // recovery charges wait on webhooks.
    let Some(id) = payment.checkout_id else {
        if let Some(order) = payment.order_id {
            return crate::app::recovery::settled_by_processor(state, order, payment).await;
        }
        return Ok(());
    };
    let Some(checkout) = current(state, id).await? else {
        tracing::warn!(checkout = %id, intent = %payment.payment_id, "webhook for an unknown checkout");
        return Ok(());
    };
    if checkout.status != CheckoutStatus::Confirmed {
        return Ok(());
    }
    let outcome = payment.outcome.clone();
    let waits_on_this = checkout.pending_intent() == Some(payment.payment_id.as_str());
    let applies = match &outcome {
        // Money was taken for this checkout: complete it, whether or not the synchronous
        // reply has recorded the payment yet.
        ChargeOutcome::Succeeded { .. } => true,
        ChargeOutcome::Declined { .. } => failed && waits_on_this,
        // Under way (a debit accepted for settlement): recorded, so that a later failure
        // fails the checkout instead of reopening it (`completion::after_decline`).
        ChargeOutcome::Pending { .. } => waits_on_this,
    };
    if !applies {
        return Ok(());
    }
    match super::apply_outcome(state, &checkout, outcome).await {
        Ok(_) => Ok(()),
        Err(e) if e.code() == Code::PaymentError => Ok(()),
        Err(e) => Err(e),
    }
}

async fn current(state: &AppState, id: CheckoutId) -> Result<Option<Checkout>, AppError> {
    if state.store.get::<Checkout>(&id.key()).await?.is_none() {
        return Ok(None);
    }
    state
        .checkouts
        .call(id, GetCheckout)
        .await
        .map(Some)
        .map_err(|e| match e {
            tollgate_actors::ActorError::Unavailable(_) => AppError::unavailable(),
            tollgate_actors::ActorError::Storage(s) => s.into(),
            _ => AppError::internal("could not read a checkout"),
        })
}
