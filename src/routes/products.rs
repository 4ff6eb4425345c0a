//! `/v1/products/`: list, create, get, update and the benefits a product grants
//! (`crate::app::catalog::products`).

use actix_web::web;

use crate::api::product::{ProductBenefitsUpdate, ProductCreate, ProductUpdate, ProductView};
use crate::api::{Created, ListResource, Pagination};
use crate::app::catalog::products::{self, ProductFilter};
use crate::app::views::product_view;
use crate::domain::ids::ProductId;
use crate::domain::product::ProductSort;
use crate::error::ApiResult;
use crate::extract::auth::{ProductsRead, ProductsWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, SortField, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/products/", { get => list, post => create });
    crate::resource!(cfg, "/v1/products/{id}", { get => get, patch => update });
    crate::resource!(cfg, "/v1/products/{id}/benefits", { post => update_benefits });
}

impl SortField for ProductSort {
    const FIELDS: &'static [(&'static str, ProductSort)] = ProductSort::ALL;
}

pub(crate) async fn list(
    auth: Auth<ProductsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<ProductView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = ProductFilter {
        organization_id: q.ids("organization_id"),
        query: q.string("query"),
        is_archived: q.bool("is_archived"),
        is_recurring: q.bool("is_recurring"),
        benefit_id: q.ids("benefit_id"),
        sorting: Sorting::<ProductSort>::from_query(&mut q, (ProductSort::CreatedAt, true)),
    };
    q.finish()?;
    let (items, total) = products::list(&state, auth.subject(), &filter, params).await?;
    let items =
        futures_util::future::try_join_all(items.iter().map(|p| product_view(&state, p))).await?;
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(crate) async fn create(
    auth: Auth<ProductsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<ProductCreate>,
) -> ApiResult<Created<ProductView>> {
    let raw = body.raw.clone();
    let new = body.into_inner().into_command(&raw)?;
    let product = products::create(&state, auth.subject(), new).await?;
    Ok(Created(product_view(&state, &product).await?))
}

pub(crate) async fn get(
    auth: Auth<ProductsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<ProductView>> {
    let id: ProductId = path_id("id", &id)?;
    let product = products::get(&state, auth.subject(), id).await?;
    Ok(web::Json(product_view(&state, &product).await?))
}

pub(crate) async fn update(
    auth: Auth<ProductsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<ProductUpdate>,
) -> ApiResult<web::Json<ProductView>> {
    let id: ProductId = path_id("id", &id)?;
    // Not found is told after the body's errors, as for every other body.
    let current = products::product_for(&state, auth.subject(), id).await;
    let change = body
        .value
        .into_command(&body.raw, current.as_ref().ok().map(|p| &p.value))?;
    current?;
    let product = products::update(&state, auth.subject(), id, change).await?;
    Ok(web::Json(product_view(&state, &product).await?))
}

/// `POST /v1/products/{id}/benefits`: replaces the set of benefits, in the order given.
pub(crate) async fn update_benefits(
    auth: Auth<ProductsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<ProductBenefitsUpdate>,
) -> ApiResult<web::Json<ProductView>> {
    let id: ProductId = path_id("id", &id)?;
    let requested = body.into_inner().benefit_ids();
    let product = products::update_benefits(&state, auth.subject(), id, requested).await?;
    Ok(web::Json(product_view(&state, &product).await?))
}
