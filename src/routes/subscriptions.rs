//! `/v1/subscriptions/`: list, get and update (cancel at the period end, uncancel, revoke)
//! subscriptions (Polar's `subscription/endpoints.py` and `service.py`; get and update as
//! Polar added them in January 2025). The changes and the renewal sweep are
//! `crate::app::subscription`.

use actix_web::web;
use tollgate_actors::subscription::SubscriptionSort;

use crate::api::subscription::{
    SubscriptionChangePreviewInput, SubscriptionCreate, SubscriptionUpdate, SubscriptionView,
};
use crate::api::{ListResource, Pagination};
use crate::app::plan_change::{self, SubscriptionChargePreview};
use crate::app::seller_subscriptions;
use crate::app::subscription::{self, SubscriptionFilter, Toggler};
use crate::app::views::subscription_view;
use crate::domain::ids::SubscriptionId;
use crate::error::ApiResult;
use crate::extract::auth::{SubscriptionsRead, SubscriptionsWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, SortField, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/subscriptions/", { get => list, post => create });
    crate::resource!(cfg, "/v1/subscriptions/{id}", { get => get, patch => update, delete => revoke });
    crate::resource!(cfg, "/v1/subscriptions/{id}/change-preview", { post => change_preview });
}

impl SortField for SubscriptionSort {
    const FIELDS: &'static [(&'static str, SubscriptionSort)] = SubscriptionSort::ALL;
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

pub(crate) async fn list(
    auth: Auth<SubscriptionsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<SubscriptionView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = SubscriptionFilter {
        organization_id: q.ids("organization_id"),
        product_id: q.ids("product_id"),
        customer_id: q.ids("customer_id"),
        discount_id: q.ids("discount_id"),
        active: q.bool("active"),
        sorting: Sorting::<SubscriptionSort>::from_query(
            &mut q,
            (SubscriptionSort::StartedAt, true),
        ),
    };
    q.finish()?;
    let (items, total) = subscription::list(&state, auth.subject(), &filter, params).await?;
    let items = crate::app::views::subscription_views(&state, &items).await?;
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(crate) async fn get(
    auth: Auth<SubscriptionsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<SubscriptionView>> {
    let id: SubscriptionId = path_id("id", &id)?;
    let s = subscription::get(&state, auth.subject(), id).await?;
    Ok(web::Json(subscription_view(&state, &s).await?))
}

// ---------------------------------------------------------------------------------------
// Update
// ---------------------------------------------------------------------------------------

pub(crate) async fn update(
    auth: Auth<SubscriptionsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<SubscriptionUpdate>,
) -> ApiResult<web::Json<SubscriptionView>> {
    let id: SubscriptionId = path_id("id", &id)?;
    let command = body.into_inner().into_command()?;
    let updated =
        subscription::change(&state, auth.subject(), id, command, Toggler::Seller).await?;
    Ok(web::Json(subscription_view(&state, &updated).await?))
}

/// Starts a free subscription for an existing customer (Polar's `POST /v1/subscriptions/`):
/// 201, no order, no e-mail.
pub(crate) async fn create(
    auth: Auth<SubscriptionsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<SubscriptionCreate>,
) -> ApiResult<actix_web::HttpResponse> {
    let command = body.into_inner().into_command()?;
    let created = seller_subscriptions::create(&state, auth.subject(), command).await?;
    Ok(actix_web::HttpResponse::Created().json(subscription_view(&state, &created).await?))
}

/// Ends a subscription now and revokes its license keys (Polar's `DELETE
/// /v1/subscriptions/{id}`): 200 with the subscription.
pub(crate) async fn revoke(
    auth: Auth<SubscriptionsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<SubscriptionView>> {
    let id: SubscriptionId = path_id("id", &id)?;
    let ended = subscription::revoke(&state, auth.subject(), id).await?;
    Ok(web::Json(subscription_view(&state, &ended).await?))
}

/// What a plan change would cost now (Polar's private `change-preview`); nothing is
/// written.
pub(crate) async fn change_preview(
    auth: Auth<SubscriptionsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<SubscriptionChangePreviewInput>,
) -> ApiResult<web::Json<SubscriptionChargePreview>> {
    let id: SubscriptionId = path_id("id", &id)?;
    let req = body.into_inner().into_command()?;
    Ok(web::Json(
        plan_change::preview(&state, auth.subject(), id, &req).await?,
    ))
}

// ---------------------------------------------------------------------------------------
// The sweep: renewals, ends and revocations
// ---------------------------------------------------------------------------------------
