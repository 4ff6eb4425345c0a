//! The customer portal's invoices (Polar's): `PATCH /v1/customer-portal/orders/{id}` (the
//! order's billing details, until its invoice is issued; registered with `GET` in
//! `super::account`), `POST …/orders/{id}/invoice` (202 `null`), `GET
//! …/orders/{id}/invoice` (`CustomerOrderInvoice`: `{"url"}`) and `GET
//! /v1/customer-portal/refunds/{id}/credit-note`. A customer session; one limited to a
//! purchase reads that purchase's invoice and changes nothing (403); another customer's
//! order or refund is 404. `crate::app::invoices` does the work.

use actix_web::{web, HttpResponse};

use crate::api::customer_portal::CustomerOrder;
use crate::api::invoice::{OrderInvoice, OrderUpdate, RefundCreditNote};
use crate::app::{invoices, portal};
use crate::domain::ids::{OrderId, RefundId};
use crate::error::ApiResult;
use crate::extract::auth::{CustomerSessionRead, CustomerSessionWrite};
use crate::extract::{path_id, Auth, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    let base = "/v1/customer-portal";
    crate::resource!(cfg, format!("{base}/orders/{{id}}/invoice"), { get => invoice, post => generate });
    crate::resource!(cfg, format!("{base}/refunds/{{id}}/credit-note"), { get => credit_note });
}

pub(super) async fn update_order(
    auth: Auth<CustomerSessionWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<OrderUpdate>,
) -> ApiResult<web::Json<CustomerOrder>> {
    let id: OrderId = path_id("id", &id)?;
    let change = body.into_inner().into_command()?;
    let customer = super::signed_in(&state, &auth).await?;
    let order = portal::order(&state, &customer, id).await?;
    let order = invoices::update_billing(&state, order.id, change).await?;
    let organization = portal::organization(&state, &customer).await?;
    Ok(web::Json(
        portal::order_view_of(&state, &order, &organization).await?,
    ))
}

async fn generate(
    auth: Auth<CustomerSessionWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: OrderId = path_id("id", &id)?;
    let customer = super::signed_in(&state, &auth).await?;
    let order = portal::order(&state, &customer, id).await?;
    invoices::request_invoice(&state, &order).await?;
    Ok(crate::routes::invoices::accepted_null())
}

async fn invoice(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<OrderInvoice>> {
    let id: OrderId = path_id("id", &id)?;
    let (customer, scope) = super::reader(&state, &auth).await?;
    let order = super::account::purchase_order(&state, &customer, scope, id).await?;
    let url = invoices::invoice_link(&state, &order).await?;
    Ok(web::Json(OrderInvoice { url }))
}

async fn credit_note(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<RefundCreditNote>> {
    let id: RefundId = path_id("id", &id)?;
    let (customer, scope) = super::reader(&state, &auth).await?;
    let refund = invoices::customer_refund(&state, &customer, id).await?;
    // A session limited to a purchase reaches that purchase's refunds only.
    super::account::purchase_order(&state, &customer, scope, refund.order_id).await?;
    let url = invoices::credit_note_link(&state, &refund).await?;
    Ok(web::Json(RefundCreditNote { url }))
}
