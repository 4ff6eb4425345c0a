//! `/v1/discounts/`: list, create, get, update and (soft) delete discounts
//! (`crate::app::catalog::discounts`).

use actix_web::{web, HttpResponse};

use crate::api::discount::{quote_body, DiscountCreate, DiscountUpdate, DiscountView};
use crate::api::{Created, ListResource, Pagination};
use crate::app::catalog::discounts::{self, DiscountFilter, DiscountSort};
use crate::app::views::discount_view;
use crate::domain::ids::DiscountId;
use crate::error::ApiResult;
use crate::extract::auth::{DiscountsRead, DiscountsWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/discounts/", { get => list, post => create });
    crate::resource!(cfg, "/v1/discounts/{id}", { get => get, patch => update, delete => delete });
}

pub(crate) async fn list(
    auth: Auth<DiscountsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<DiscountView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = DiscountFilter {
        organization_id: q.ids("organization_id"),
        query: q.string("query"),
        sorting: Sorting::<DiscountSort>::from_query(&mut q, (DiscountSort::CreatedAt, true)),
    };
    q.finish()?;
    let (items, total) = discounts::list(&state, auth.subject(), &filter, params).await?;
    let items =
        futures_util::future::try_join_all(items.iter().map(|d| discount_view(&state, d))).await?;
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(crate) async fn create(
    auth: Auth<DiscountsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<DiscountCreate>,
) -> ApiResult<Created<DiscountView>> {
    let raw = body.raw.clone();
    let new = body.into_inner().into_command(Some(&raw))?;
    let discount = discounts::create(&state, auth.subject(), new).await?;
    Ok(Created(discount_view(&state, &discount).await?))
}

pub(crate) async fn get(
    auth: Auth<DiscountsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<DiscountView>> {
    let id: DiscountId = path_id("id", &id)?;
    let discount = discounts::get(&state, auth.subject(), id).await?;
    Ok(web::Json(discount_view(&state, &discount).await?))
}

pub(crate) async fn update(
    auth: Auth<DiscountsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<DiscountUpdate>,
) -> ApiResult<web::Json<DiscountView>> {
    let id: DiscountId = path_id("id", &id)?;
    let raw = body.raw.clone();
    let change = body.into_inner().into_command(Some(&raw))?;
    let discount = discounts::update(&state, auth.subject(), id, change)
        .await
        .map_err(|e| quote_body(e, &raw))?;
    Ok(web::Json(discount_view(&state, &discount).await?))
}

pub(crate) async fn delete(
    auth: Auth<DiscountsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: DiscountId = path_id("id", &id)?;
    discounts::delete(&state, auth.subject(), id).await?;
    Ok(HttpResponse::NoContent().finish())
}
