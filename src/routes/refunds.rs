//! `/v1/refunds/`: refund an order (`crate::app::refunds`) and list refunds.

use actix_web::web;

use crate::api::refund::{RefundCreate, RefundView};
use crate::api::{Created, ListResource, Pagination};
use crate::app::refunds::{self, RefundFilter, RefundSort};
use crate::error::ApiResult;
use crate::extract::auth::{RefundsRead, RefundsWrite};
use crate::extract::{Auth, ListParams, QueryParams, RawQuery, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/refunds/", { get => list, post => create });
}

pub(crate) async fn list(
    auth: Auth<RefundsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<RefundView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = RefundFilter {
        id: q.ids("id"),
        organization_id: q.ids("organization_id"),
        order_id: q.ids("order_id"),
        subscription_id: q.ids("subscription_id"),
        customer_id: q.ids("customer_id"),
        external_customer_id: q.strings("external_customer_id"),
        succeeded: q.bool("succeeded"),
        sorting: Sorting::<RefundSort>::from_query(&mut q, (RefundSort::CreatedAt, true)),
    };
    q.finish()?;
    let (items, total) = refunds::list(&state, auth.subject(), &filter, params).await?;
    Ok(web::Json(ListResource {
        items: items.iter().map(RefundView::from).collect(),
        pagination: Pagination::new(total, params.limit),
    }))
}

/// 201 in every named API version (Polar since 2026-02); 200 without one, as the
/// unversioned clients of Polar's seed era read it (polar-sdk 0.13.5 parses only a 200).
pub(crate) async fn create(
    auth: Auth<RefundsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<RefundCreate>,
) -> ApiResult<actix_web::Either<Created<RefundView>, web::Json<RefundView>>> {
    let command = body.into_inner().into_command()?;
    let refund = refunds::create(&state, auth.subject(), command).await?;
    let view = RefundView::from(&refund);
    Ok(if crate::api::version::active().is_some() {
        actix_web::Either::Left(Created(view))
    } else {
        actix_web::Either::Right(web::Json(view))
    })
}
