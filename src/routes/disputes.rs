//! `/v1/disputes/`: the chargebacks Stripe reported, and conceding one (`accept`), through
//! `crate::app::disputes`.

use actix_web::web;

use crate::api::dispute::DisputeView;
use crate::api::{ListResource, Pagination};
use crate::app::disputes::{self, dispute_for, DisputeFilter, DisputeSort};
use crate::domain::customer::Customer;
use crate::domain::dispute::{Dispute, DisputeStatus};
use crate::domain::ids::DisputeId;
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{DisputesRead, DisputesWrite};
use crate::extract::{path_id, Auth, ListParams, QueryParams, RawQuery, Sorting};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/disputes/", { get => list });
    crate::resource!(cfg, "/v1/disputes/{id}", { get => get });
    crate::resource!(cfg, "/v1/disputes/{id}/accept", { post => accept });
}

async fn view(state: &AppState, d: &Dispute) -> ApiResult<DisputeView> {
    let customer = state
        .store
        .get::<Customer>(&d.customer_id.key())
        .await?
        .ok_or_else(|| ApiError::internal("a dispute's customer is gone"))?
        .value;
    Ok(DisputeView::new(d, &customer, state.now()))
}

const STATUSES: &[(&str, DisputeStatus)] = DisputeStatus::ALL;

pub(crate) async fn list(
    auth: Auth<DisputesRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<DisputeView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = DisputeFilter {
        organization_id: q.ids("organization_id"),
        order_id: q.ids("order_id"),
        status: q.enums("status", STATUSES),
        sorting: Sorting::<DisputeSort>::from_query(&mut q, (DisputeSort::CreatedAt, true)),
    };
    q.finish()?;
    let (items, total) = disputes::list(&state, auth.subject(), &filter, params).await?;
    let mut views = Vec::with_capacity(items.len());
    for d in &items {
        views.push(view(&state, d).await?);
    }
    Ok(web::Json(ListResource {
        items: views,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(crate) async fn get(
    auth: Auth<DisputesRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<DisputeView>> {
    let id: DisputeId = path_id("id", &id)?;
    let d = dispute_for(&state, auth.subject(), id).await?;
    Ok(web::Json(view(&state, &d).await?))
}

/// `POST /v1/disputes/{id}/accept` (no body): concedes the dispute; 200 with it, lost.
pub(crate) async fn accept(
    auth: Auth<DisputesWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<DisputeView>> {
    let id: DisputeId = path_id("id", &id)?;
    let d = disputes::accept(&state, auth.subject(), id).await?;
    Ok(web::Json(view(&state, &d).await?))
}
