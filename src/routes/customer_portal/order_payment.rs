//! "Pay now" (Polar's customer portal, reference §6.2): `POST
//! /v1/customer-portal/orders/{id}/confirm-payment` (200 in every payment outcome) and
//! `GET …/orders/{id}/payment-status`. A customer session only (a seller's token is 401,
//! a session limited to one purchase 403); another customer's order is 404.
//! `crate::app::recovery` does the work.

use actix_web::web;

use crate::api::recovery::{
    CustomerOrderConfirmPayment, CustomerOrderConfirmPaymentResponse, CustomerOrderPaymentStatus,
};
use crate::app::recovery;
use crate::domain::ids::OrderId;
use crate::error::ApiResult;
use crate::extract::auth::{CustomerSessionRead, CustomerSessionWrite};
use crate::extract::{path_id, Auth, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    let base = "/v1/customer-portal/orders/{id}";
    crate::resource!(cfg, format!("{base}/confirm-payment"), { post => confirm_payment });
    crate::resource!(cfg, format!("{base}/payment-status"), { get => payment_status });
}

async fn confirm_payment(
    auth: Auth<CustomerSessionWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<CustomerOrderConfirmPayment>,
) -> ApiResult<web::Json<CustomerOrderConfirmPaymentResponse>> {
    let id: OrderId = path_id("id", &id)?;
    let with = body.into_inner().into_command()?;
    let customer = super::signed_in(&state, &auth).await?;
    let answer = recovery::pay_now(&state, &customer, id, with).await?;
    Ok(web::Json(CustomerOrderConfirmPaymentResponse::from(
        &answer,
    )))
}

async fn payment_status(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CustomerOrderPaymentStatus>> {
    let id: OrderId = path_id("id", &id)?;
    let customer = super::signed_in(&state, &auth).await?;
    let status = recovery::payment_status(&state, &customer, id).await?;
    Ok(web::Json(CustomerOrderPaymentStatus::from(&status)))
}
