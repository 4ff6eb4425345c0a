//! The signed-in customer's saved payment methods (Polar's customer portal, reference
//! §6.1): `GET /v1/customer-portal/customers/me/payment-methods` (newest first, paged),
//! `POST …/payment-methods` (201, saved or `requires_action`), `POST
//! …/payment-methods/confirm` (201 likewise), `DELETE …/payment-methods/{id}` (204).
//! A customer session only (a seller's token is 401, a session limited to one purchase
//! 403); another customer's method is 404. `crate::app::payment_methods` does the work.

use actix_web::{web, HttpResponse};

use crate::api::payment_method::{
    CustomerPaymentMethod, CustomerPaymentMethodConfirm, CustomerPaymentMethodCreate,
    CustomerPaymentMethodCreateResponse,
};
use crate::api::{ListResource, Pagination};
use crate::app::payment_methods;
use crate::domain::ids::PaymentMethodId;
use crate::error::ApiResult;
use crate::extract::auth::{CustomerSessionRead, CustomerSessionWrite};
use crate::extract::{path_id, Auth, ListParams, QueryParams, RawQuery, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    let base = "/v1/customer-portal/customers/me/payment-methods";
    crate::resource!(cfg, base, { get => list, post => add });
    // Before `{id}`, whose resource would answer it with a 405.
    crate::resource!(cfg, format!("{base}/confirm"), { post => confirm });
    crate::resource!(cfg, format!("{base}/{{id}}"), { delete => remove });
}

async fn list(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<CustomerPaymentMethod>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    q.finish()?;
    let customer = super::signed_in(&state, &auth).await?;
    let (items, total) = payment_methods::list(&state, &customer, params).await?;
    Ok(web::Json(ListResource {
        items: items.iter().map(CustomerPaymentMethod::from).collect(),
        pagination: Pagination::new(total, params.limit),
    }))
}

async fn add(
    auth: Auth<CustomerSessionWrite>,
    state: web::Data<AppState>,
    body: ValidJson<CustomerPaymentMethodCreate>,
) -> ApiResult<HttpResponse> {
    let command = body.into_inner().into_command()?;
    let customer = super::signed_in(&state, &auth).await?;
    let answer = payment_methods::add(&state, &customer, command).await?;
    Ok(HttpResponse::Created().json(CustomerPaymentMethodCreateResponse::from(&answer)))
}

async fn confirm(
    auth: Auth<CustomerSessionWrite>,
    state: web::Data<AppState>,
    body: ValidJson<CustomerPaymentMethodConfirm>,
) -> ApiResult<HttpResponse> {
    let command = body.into_inner().into_command()?;
    let customer = super::signed_in(&state, &auth).await?;
    let answer = payment_methods::confirm(&state, &customer, command).await?;
    Ok(HttpResponse::Created().json(CustomerPaymentMethodCreateResponse::from(&answer)))
}

async fn remove(
    auth: Auth<CustomerSessionWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: PaymentMethodId = path_id("id", &id)?;
    let customer = super::signed_in(&state, &auth).await?;
    payment_methods::remove(&state, &customer, id).await?;
    Ok(HttpResponse::NoContent().finish())
}
