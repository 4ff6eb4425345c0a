//! Invoices and credit notes (Polar's invoice routes, `crate::app::invoices`):
//!
//! * `PATCH /v1/orders/{id}` (`orders:write`; registered with `GET` in `super::orders`):
//!   the order's billing details, until its invoice is issued (409
//!   `InvoiceAlreadyIssued` after);
//! * `POST /v1/orders/{id}/invoice` (`orders:read`, as Polar's): 202 `null`, the invoice is
//!   issued within a second; 409 `OrderNotEligibleForInvoice`, 422
//!   `MissingInvoiceBillingDetails`;
//! * `GET /v1/orders/{id}/invoice` (`orders:read`): `{"url"}`, or 404 `InvoiceDoesNotExist`;
//! * `GET /v1/refunds/{id}/credit-note` (`refunds:read`): `{"url"}`, or 404
//!   `CreditNoteDoesNotExist`;
//! * `GET /v1/invoices/{id}.pdf?expires=&signature=`: the PDF behind a link (no session:
//!   the signature is the permission; 403 forged, 410 expired).
//!
//! The customer portal's equivalents are in `super::customer_portal::invoices`.

use actix_web::http::header;
use actix_web::{web, HttpResponse};

use crate::api::invoice::{OrderInvoice, OrderUpdate, RefundCreditNote};
use crate::api::order::OrderView;
use crate::app::invoices;
use crate::app::orders::order_for;
use crate::app::views::order_view;
use crate::domain::ids::{OrderId, RefundId};
use crate::domain::invoice::InvoiceId;
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{OrdersRead, OrdersWrite, RefundsRead};
use crate::extract::{path_id, Auth, QueryParams, RawQuery, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/orders/{id}/invoice", { get => invoice, post => generate });
    crate::resource!(cfg, "/v1/refunds/{id}/credit-note", { get => credit_note });
    crate::resource!(cfg, "/v1/invoices/{file}", { get => pdf });
}

/// 202 with the JSON body `null` (Polar's FastAPI answer of `None`: the SDKs parse it).
pub(crate) fn accepted_null() -> HttpResponse {
    HttpResponse::Accepted()
        .content_type("application/json")
        .body("null")
}

pub(crate) async fn update_order(
    auth: Auth<OrdersWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<OrderUpdate>,
) -> ApiResult<web::Json<OrderView>> {
    let id: OrderId = path_id("id", &id)?;
    let change = body.into_inner().into_command()?;
    let order = order_for(&state, auth.subject(), id).await?;
    let order = invoices::update_billing(&state, order.id, change).await?;
    Ok(web::Json(order_view(&state, &order).await?))
}

async fn generate(
    auth: Auth<OrdersRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: OrderId = path_id("id", &id)?;
    let order = order_for(&state, auth.subject(), id).await?;
    invoices::request_invoice(&state, &order).await?;
    Ok(accepted_null())
}

async fn invoice(
    auth: Auth<OrdersRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<OrderInvoice>> {
    let id: OrderId = path_id("id", &id)?;
    let order = order_for(&state, auth.subject(), id).await?;
    let url = invoices::invoice_link(&state, &order).await?;
    Ok(web::Json(OrderInvoice { url }))
}

async fn credit_note(
    auth: Auth<RefundsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<RefundCreditNote>> {
    let id: RefundId = path_id("id", &id)?;
    let refund = invoices::refund_for(&state, auth.subject(), id).await?;
    let url = invoices::credit_note_link(&state, &refund).await?;
    Ok(web::Json(RefundCreditNote { url }))
}

/// The PDF: `application/pdf`, an attachment named after the document, never cached.
async fn pdf(
    state: web::Data<AppState>,
    file: web::Path<String>,
    query: RawQuery,
) -> ApiResult<HttpResponse> {
    let id = file.strip_suffix(".pdf").ok_or_else(ApiError::not_found)?;
    let id: InvoiceId = path_id("id", id)?;
    let mut q = QueryParams::parse(&query.0);
    let expires = q.int("expires");
    let signature = q.string("signature");
    q.finish()?;
    let (Some(expires), Some(signature)) = (expires, signature) else {
        return Err(ApiError::NotPermitted("This link is not valid.".into()));
    };
    let (name, bytes) = invoices::pdf(&state, id, expires, &signature).await?;
    Ok(HttpResponse::Ok()
        .content_type("application/pdf")
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        ))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .body(bytes))
}
