//! The client endpoints, `/v1/checkouts/custom/client/{client_secret}`: read, update and
//! confirm a checkout with its client secret as the only credential.

use actix_web::{web, HttpResponse};
use tollgate_actors::checkout::{CheckoutStatus, UpdateCheckout};

use crate::api::checkout::CheckoutChanges;
use crate::api::Maybe;
use crate::error::ApiResult;
use crate::extract::ValidJson;
use crate::state::AppState;

use super::completion::{confirm, settle};
use super::fields::resolve_changes;
use super::{checkout_by_secret, checkout_error, not_open, render_public, with_id};

// ---------------------------------------------------------------------------------------
// Client endpoints: the client secret is the only credential.

pub(super) async fn client_get(
    state: web::Data<AppState>,
    secret: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let checkout = checkout_by_secret(&state, &secret).await?;
    let status = checkout.effective_status(state.now());
    Ok(HttpResponse::Ok().json(render_public(&state, &checkout, status, None)?))
}

pub(super) async fn client_update(
    state: web::Data<AppState>,
    secret: web::Path<String>,
    body: ValidJson<CheckoutChanges>,
) -> ApiResult<HttpResponse> {
    let checkout = checkout_by_secret(&state, &secret).await?;
    let status = checkout.effective_status(state.now());
    if status != CheckoutStatus::Open {
        return Err(not_open(&checkout, status));
    }
    let changes = resolve_changes(&state, &checkout, body.into_inner(), true)?;
    let updated = state
        .checkouts
        .call(
            checkout.id,
            UpdateCheckout {
                changes,
                tax: state.tax.clone(),
            },
        )
        .await
        .map_err(|e| with_id(checkout_error(e), checkout.id))?;
    let status = updated.effective_status(state.now());
    Ok(HttpResponse::Ok().json(render_public(&state, &updated, status, None)?))
}

pub(super) async fn client_confirm(
    state: web::Data<AppState>,
    secret: web::Path<String>,
    body: ValidJson<CheckoutChanges>,
) -> ApiResult<HttpResponse> {
    let checkout = checkout_by_secret(&state, &secret).await?;
    let status = checkout.effective_status(state.now());
    if status != CheckoutStatus::Open {
        return Err(not_open(&checkout, status));
    }
    let mut input = body.into_inner();
    let token = match std::mem::take(&mut input.confirmation_token_id) {
        Maybe::Value(t) => Some(t),
        _ => None,
    };
    let (confirmed, session_token) = confirm(&state, &checkout, input, token).await?;
    if std::env::var_os(FAULT_AFTER_CONFIRM).is_some() {
        // Test-only fault point: die between confirm's two writes (crash tests).
        tracing::warn!("fault point {FAULT_AFTER_CONFIRM} reached: aborting");
        std::process::abort();
    }
    let settled = settle(&state, confirmed.id).await?;
    // The confirm response shows the checkout as confirmed (Polar's clients expect that),
    // with the processor's intent: a page runs its next action (3-D Secure) from
    // `payment_processor_metadata`. A later read shows it succeeded.
    Ok(HttpResponse::Ok().json(render_public(
        &state,
        &settled,
        CheckoutStatus::Confirmed,
        Some(&session_token),
    )?))
}

/// Set (to anything) to abort the process right after a confirm is durable, before its
/// payment is settled. Crash tests use it; nothing else should.
pub const FAULT_AFTER_CONFIRM: &str = "TOLLGATE_FAULT_AFTER_CONFIRM";
