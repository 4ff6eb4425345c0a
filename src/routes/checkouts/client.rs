//! The client endpoints, `/v1/checkouts/custom/client/{client_secret}`: read, update and
//! confirm a checkout with its client secret as the only credential.

use actix_web::web;
use tollgate_actors::checkout::{CheckoutStatus, UpdateCheckout};

use crate::api::checkout::{
    CheckoutConfirm, CheckoutPublic, CheckoutPublicConfirmed, CheckoutUpdatePublic,
};
use crate::error::ApiResult;
use crate::extract::ValidJson;
use crate::state::AppState;

use super::completion::{confirm, settle};
use super::fields::resolve_changes;
use super::{
    checkout_by_secret, checkout_error, not_open, render_confirmed, render_public, with_id,
};

// ---------------------------------------------------------------------------------------
// Client endpoints: the client secret is the only credential.

pub(super) async fn client_get(
    state: web::Data<AppState>,
    secret: web::Path<String>,
) -> ApiResult<web::Json<CheckoutPublic>> {
    let checkout = checkout_by_secret(&state, &secret).await?;
    let status = checkout.effective_status(state.now());
    Ok(web::Json(render_public(&state, &checkout, status).await?))
}

pub(super) async fn client_update(
    state: web::Data<AppState>,
    secret: web::Path<String>,
    body: ValidJson<CheckoutUpdatePublic>,
) -> ApiResult<web::Json<CheckoutPublic>> {
    let checkout = checkout_by_secret(&state, &secret).await?;
    let status = checkout.effective_status(state.now());
    if status != CheckoutStatus::Open {
        return Err(not_open(&checkout, status));
    }
    let changes = resolve_changes(&state, &checkout, body.into_inner().into(), true).await?;
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
    Ok(web::Json(render_public(&state, &updated, status).await?))
}

pub(super) async fn client_confirm(
    state: web::Data<AppState>,
    secret: web::Path<String>,
    body: ValidJson<CheckoutConfirm>,
) -> ApiResult<web::Json<CheckoutPublicConfirmed>> {
    let checkout = checkout_by_secret(&state, &secret).await?;
    let status = checkout.effective_status(state.now());
    if status != CheckoutStatus::Open {
        return Err(not_open(&checkout, status));
    }
    let (input, token) = body.into_inner().split();
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
    Ok(web::Json(
        render_confirmed(&state, &settled, session_token).await?,
    ))
}

/// Set (to anything) to abort the process right after a confirm is durable, before its
/// payment is settled. Crash tests use it; nothing else should.
pub const FAULT_AFTER_CONFIRM: &str = "TOLLGATE_FAULT_AFTER_CONFIRM";
