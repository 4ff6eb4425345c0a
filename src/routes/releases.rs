//! `/v1/releases/` (Tollgate's extension): a product's releases, drafted, published
//! (files signed), yanked; and the organization's update-signing public keys
//! (`crate::app::releases`). Scopes and tenancy as products.

use actix_web::{web, HttpResponse};

use crate::api::releases::{ReleaseCreate, ReleaseRead, ReleaseUpdate, UpdateSigningKeyRead};
use crate::api::{Created, ListResource};
use crate::app::listing::render;
use crate::app::releases::{self, ReleaseFilter};
use crate::domain::ids::{OrganizationId, ReleaseId};
use crate::domain::release::Channel;
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{ProductsRead, ProductsWrite};
use crate::extract::{path_id, Auth, ListParams, QueryParams, RawQuery, ValidJson};
use crate::state::AppState;

const CHANNELS: &[(&str, Channel)] = &[
    ("stable", Channel::Stable),
    ("beta", Channel::Beta),
    ("alpha", Channel::Alpha),
];

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/releases/", { get => list, post => create });
    crate::resource!(cfg, "/v1/releases/signing-key", { get => signing_key });
    crate::resource!(cfg, "/v1/releases/{id}", { get => get, patch => update, delete => delete });
    crate::resource!(cfg, "/v1/releases/{id}/publish", { post => publish });
    crate::resource!(cfg, "/v1/releases/{id}/yank", { post => yank });
}

pub(crate) async fn list(
    auth: Auth<ProductsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<ReleaseRead>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = ReleaseFilter {
        organization_id: q.ids("organization_id"),
        product_id: q.ids("product_id"),
        channel: q.enums("channel", CHANNELS),
    };
    q.finish()?;
    let (items, total) = releases::list(&state, auth.subject(), &filter, params).await?;
    Ok(web::Json(render(&items, total, params, |r| {
        ReleaseRead::from(r)
    })))
}

pub(crate) async fn create(
    auth: Auth<ProductsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<ReleaseCreate>,
) -> ApiResult<Created<ReleaseRead>> {
    let release = releases::create(&state, auth.subject(), body.into_inner().into()).await?;
    Ok(Created(release))
}

pub(crate) async fn get(
    auth: Auth<ProductsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<ReleaseRead>> {
    let id: ReleaseId = path_id("id", &id)?;
    let r = releases::get(&state, auth.subject(), id).await?;
    Ok(web::Json((&r).into()))
}

pub(crate) async fn update(
    auth: Auth<ProductsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<ReleaseUpdate>,
) -> ApiResult<web::Json<ReleaseRead>> {
    let id: ReleaseId = path_id("id", &id)?;
    let r = releases::update(&state, auth.subject(), id, body.into_inner().into()).await?;
    Ok(web::Json((&r).into()))
}

pub(crate) async fn delete(
    auth: Auth<ProductsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: ReleaseId = path_id("id", &id)?;
    releases::delete(&state, auth.subject(), id).await?;
    Ok(HttpResponse::NoContent().finish())
}

pub(crate) async fn publish(
    auth: Auth<ProductsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<ReleaseRead>> {
    let id: ReleaseId = path_id("id", &id)?;
    let r = releases::publish(&state, auth.subject(), id).await?;
    Ok(web::Json((&r).into()))
}

pub(crate) async fn yank(
    auth: Auth<ProductsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<ReleaseRead>> {
    let id: ReleaseId = path_id("id", &id)?;
    let r = releases::yank(&state, auth.subject(), id).await?;
    Ok(web::Json((&r).into()))
}

pub(crate) async fn signing_key(
    auth: Auth<ProductsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<UpdateSigningKeyRead>> {
    let mut q = QueryParams::parse(&query.0);
    let org: Option<OrganizationId> = q.required_id("organization_id");
    q.finish()?;
    let org = org.ok_or_else(ApiError::not_found)?;
    Ok(web::Json(
        releases::signing_key(&state, auth.subject(), org).await?,
    ))
}
