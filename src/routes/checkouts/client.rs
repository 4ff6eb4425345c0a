//! The client endpoints, `/v1/checkouts/custom/client/{client_secret}`: read, update and
//! confirm a checkout with its client secret as the only credential.

use actix_web::web;

use crate::api::checkout::{
    CheckoutConfirm, CheckoutPublic, CheckoutPublicConfirmed, CheckoutUpdatePublic,
};
use crate::app::checkout::{checkout_by_secret, confirm_as_buyer, update_as_buyer};
use crate::app::views::{checkout_confirmed_view, checkout_public_view};
use crate::error::ApiResult;
use crate::extract::ValidJson;
use crate::state::AppState;

pub(super) async fn client_get(
    state: web::Data<AppState>,
    secret: web::Path<String>,
) -> ApiResult<web::Json<CheckoutPublic>> {
    let checkout = checkout_by_secret(&state, &secret).await?;
    let status = checkout.effective_status(state.now());
    Ok(web::Json(
        checkout_public_view(&state, &checkout, status).await?,
    ))
}

pub(super) async fn client_update(
    state: web::Data<AppState>,
    secret: web::Path<String>,
    body: ValidJson<CheckoutUpdatePublic>,
) -> ApiResult<web::Json<CheckoutPublic>> {
    let updated = update_as_buyer(&state, &secret, body.into_inner().into_command()?).await?;
    let status = updated.effective_status(state.now());
    Ok(web::Json(
        checkout_public_view(&state, &updated, status).await?,
    ))
}

pub(super) async fn client_confirm(
    state: web::Data<AppState>,
    secret: web::Path<String>,
    body: ValidJson<CheckoutConfirm>,
) -> ApiResult<web::Json<CheckoutPublicConfirmed>> {
    let (input, token) = body.into_inner().split();
    let input = input.into_command(true)?;
    let (settled, session_token) = confirm_as_buyer(&state, &secret, input, token).await?;
    // The confirm response shows the checkout as confirmed (Polar's clients expect that),
    // with the processor's intent: a page runs its next action (3-D Secure) from
    // `payment_processor_metadata`. A later read shows it succeeded.
    Ok(web::Json(
        checkout_confirmed_view(&state, &settled, session_token).await?,
    ))
}
