//! The processor's word after the fact: Stripe's events about the payments Tollgate
//! started, verified by the webhook endpoint (`crate::routes::stripe_webhook`). An event is
//! handled at most once in effect: its id is recorded durably once handled, and handling is
//! itself idempotent, so a crash in between only repeats a no-op.
//!
//! - `payment_intent.succeeded` completes the confirmed checkout named in the intent's
//!   metadata through the same exactly-once path as confirm (a webhook racing the
//!   synchronous reply creates nothing twice);
//! - `payment_intent.payment_failed` / `payment_intent.canceled` reopen the checkout, but
//!   only if it still waits on that very intent (a late failure of an earlier attempt
//!   never touches a newer one).
//!
//! A trial's checkout saves the card with a SetupIntent: `setup_intent.succeeded`,
//! `setup_intent.setup_failed` and `setup_intent.canceled` do the same for it.
//!
//! Every other event is acknowledged and ignored.

use tollgate_actors::checkout::{Checkout, CheckoutStatus, GetCheckout};
use tollgate_storage::Batch;

use crate::domain::ids::CheckoutId;
use crate::error::ApiError;
use crate::payments::stripe::{event_meta_key, Event, PaymentIntent};
use crate::payments::ChargeOutcome;
use crate::state::AppState;

/// Handles a verified event once: `false` if its id was handled before (nothing is done).
pub async fn payment_event(state: &AppState, event: &Event) -> Result<bool, ApiError> {
    let marker = event_meta_key(&event.id);
    if state.store.get_meta(&marker).await?.is_some() {
        return Ok(false);
    }
    handle(state, event).await?;
    let mut batch = Batch::new();
    batch.put_meta(&marker, state.now().to_rfc3339().into_bytes());
    state.store.commit_durable(&batch).await?;
    Ok(true)
}

/// Acts on one verified event. An error makes Stripe deliver it again later.
async fn handle(state: &AppState, event: &Event) -> Result<(), ApiError> {
    match event.kind.as_str() {
        "refund.created" | "refund.updated" | "refund.failed" => {
            return crate::app::refunds::from_processor(state, &event.data.object).await;
        }
        "charge.dispute.created" | "charge.dispute.updated" | "charge.dispute.closed" => {
            return crate::app::disputes::from_processor(state, &event.data.object).await;
        }
        "charge.refunded" => {
            let payment = event.data.object["payment_intent"].clone();
            let refunds = event.data.object["refunds"]["data"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for mut refund in refunds {
                if refund["payment_intent"].is_null() {
                    refund["payment_intent"] = payment.clone();
                }
                crate::app::refunds::from_processor(state, &refund).await?;
            }
            return Ok(());
        }
        _ => {}
    }
    let failed = match event.kind.as_str() {
        // A trial's checkout saves the card with a SetupIntent (the same fields).
        "payment_intent.succeeded" | "setup_intent.succeeded" => false,
        "payment_intent.payment_failed"
        | "payment_intent.canceled"
        | "setup_intent.setup_failed"
        | "setup_intent.canceled" => true,
        _ => return Ok(()),
    };
    let intent: PaymentIntent = serde_json::from_value(event.data.object.clone())
        .map_err(|e| ApiError::BadRequest(format!("Not a PaymentIntent: {e}.")))?;
    // Renewal charges are answered synchronously; only checkouts wait on webhooks.
    let Some(id) = intent
        .metadata
        .get("checkout_id")
        .and_then(|s| s.parse::<uuid::Uuid>().ok())
        .map(CheckoutId)
    else {
        return Ok(());
    };
    let Some(checkout) = current(state, id).await? else {
        tracing::warn!(checkout = %id, intent = %intent.id, "webhook for an unknown checkout");
        return Ok(());
    };
    if checkout.status != CheckoutStatus::Confirmed {
        return Ok(());
    }
    let outcome = intent.outcome();
    let waits_on_this = checkout.pending_intent() == Some(intent.id.as_str());
    let applies = match &outcome {
        // Money was taken for this checkout: complete it, whether or not the synchronous
        // reply has recorded the intent yet.
        ChargeOutcome::Succeeded { .. } => true,
        ChargeOutcome::Declined { .. } => failed && waits_on_this,
        ChargeOutcome::Pending { .. } => false,
    };
    if !applies {
        return Ok(());
    }
    match super::apply_outcome(state, &checkout, outcome).await {
        Ok(_) | Err(ApiError::PaymentError(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

async fn current(state: &AppState, id: CheckoutId) -> Result<Option<Checkout>, ApiError> {
    if state.store.get::<Checkout>(&id.key()).await?.is_none() {
        return Ok(None);
    }
    state
        .checkouts
        .call(id, GetCheckout)
        .await
        .map(Some)
        .map_err(|e| match e {
            tollgate_actors::ActorError::Unavailable(_) => ApiError::Unavailable,
            tollgate_actors::ActorError::Storage(s) => s.into(),
            _ => ApiError::internal("could not read a checkout"),
        })
}
