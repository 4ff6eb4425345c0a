//! `POST /v1/integrations/stripe/webhook`: Stripe's events about the payments Tollgate
//! started. The signature is verified before anything is read; an event is handled at most
//! once in effect (its id is recorded durably once handled, and handling is itself
//! idempotent, so a crash in between only repeats a no-op).
//!
//! - `payment_intent.succeeded` completes the confirmed checkout named in the intent's
//!   metadata through the same exactly-once path as confirm (a webhook racing the
//!   synchronous reply creates nothing twice);
//! - `payment_intent.payment_failed` / `payment_intent.canceled` reopen the checkout, but
//!   only if it still waits on that very intent (a late failure of an earlier attempt
//!   never touches a newer one).
//!
//! Every other event is acknowledged and ignored.

use actix_web::{web, HttpRequest, HttpResponse};
use tollgate_actors::checkout::{Checkout, CheckoutStatus, GetCheckout};
use tollgate_storage::Batch;

use crate::config::ProcessorKind;
use crate::domain::ids::CheckoutId;
use crate::error::{ApiError, ApiResult};
use crate::payments::stripe::{event_meta_key, verify_signature, Event, PaymentIntent};
use crate::payments::ChargeOutcome;
use crate::state::AppState;

pub const WEBHOOK_PATH: &str = "/v1/integrations/stripe/webhook";

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, WEBHOOK_PATH, { post => receive });
}

async fn receive(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let payments = &state.settings.payments;
    if payments.processor != ProcessorKind::Stripe {
        return Err(ApiError::not_found());
    }
    let header = req
        .headers()
        .get("Stripe-Signature")
        .and_then(|v| v.to_str().ok());
    if let Err(e) = verify_signature(header, &body, &payments.stripe_webhook_secret, state.now()) {
        tracing::warn!(error = %e, "refused a Stripe webhook");
        return Err(ApiError::BadRequest(format!(
            "Invalid Stripe signature: {e}."
        )));
    }
    let event: Event = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("Not a Stripe event: {e}.")))?;
    let marker = event_meta_key(&event.id);
    if state.store.get_meta(&marker).await?.is_some() {
        return Ok(HttpResponse::Ok().json(Received {
            received: true,
            duplicate: true,
        }));
    }
    handle(&state, &event).await?;
    let mut batch = Batch::new();
    batch.put_meta(&marker, state.now().to_rfc3339().into_bytes());
    state.store.commit_durable(&batch).await?;
    Ok(HttpResponse::Ok().json(Received {
        received: true,
        duplicate: false,
    }))
}

/// Acts on one verified event. An error makes Stripe deliver it again later.
async fn handle(state: &AppState, event: &Event) -> Result<(), ApiError> {
    let failed = match event.kind.as_str() {
        "payment_intent.succeeded" => false,
        "payment_intent.payment_failed" | "payment_intent.canceled" => true,
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
    match crate::app::checkout::apply_outcome(state, &checkout, outcome).await {
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

/// The acknowledgement Stripe receives: whether this event id was already handled.
#[derive(serde::Serialize)]
struct Received {
    received: bool,
    duplicate: bool,
}
