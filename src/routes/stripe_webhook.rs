//! `POST /v1/integrations/stripe/webhook`: Stripe's events about the payments Tollgate
//! started. The signature is verified before anything is read; the body is then read as
//! the typed event it carries (`crate::payments::stripe::parse_event`), which
//! `crate::app::checkout::payment_event` dispatches (at most once in effect per event id).

use actix_web::{web, HttpRequest, HttpResponse};

use crate::config::ProcessorKind;
use crate::error::{ApiError, ApiResult};
use crate::payments::stripe::{parse_event, verify_signature};
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
    let event = parse_event(&body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let duplicate = !crate::app::checkout::payment_event(&state, &event).await?;
    Ok(HttpResponse::Ok().json(Received {
        received: true,
        duplicate,
    }))
}

/// The acknowledgement Stripe receives: whether this event id was already handled.
#[derive(serde::Serialize)]
struct Received {
    received: bool,
    duplicate: bool,
}
