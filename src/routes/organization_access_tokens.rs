//! `/v1/organization-access-tokens/`: the `polar_oat_…` tokens of a user's organizations
//! (Polar's `organization_access_token/endpoints.py`: list, create, update, delete; there
//! is no read of one token) through `crate::app::organization_access_tokens`.

use actix_web::{web, HttpRequest, HttpResponse};

use crate::api::organization_access_token::{
    OrganizationAccessTokenCreate, OrganizationAccessTokenCreateResponse,
    OrganizationAccessTokenUpdate, OrganizationAccessTokenView,
};
use crate::api::{Created, ListResource, Pagination};
use crate::app::organization_access_tokens::{self as tokens, Manager, TokenFilter, TokenSort};
use crate::domain::organization_access_token::OrganizationAccessTokenId;
use crate::error::ApiResult;
use crate::extract::auth::{OrganizationAccessTokensRead, OrganizationAccessTokensWrite};
use crate::extract::{path_id, Auth, ListParams, QueryParams, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/organization-access-tokens/", { get => list, post => create });
    crate::resource!(cfg, "/v1/organization-access-tokens/{id}", {
        patch => update, delete => delete
    });
}

async fn list(
    auth: Auth<OrganizationAccessTokensRead>,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<web::Json<ListResource<OrganizationAccessTokenView>>> {
    let manager = Manager::of(&auth.principal)?;
    let mut q = QueryParams::parse(req.query_string());
    let params = ListParams::from_query(&mut q);
    let filter = TokenFilter {
        organization_id: q.ids("organization_id"),
        sorting: Sorting::<TokenSort>::from_query(&mut q, (TokenSort::CreatedAt, false)),
    };
    q.finish()?;
    let (items, total) = tokens::list(&state, manager, &filter, params).await?;
    Ok(web::Json(ListResource {
        items: items
            .iter()
            .map(OrganizationAccessTokenView::from)
            .collect(),
        pagination: Pagination::new(total, params.limit),
    }))
}

async fn create(
    auth: Auth<OrganizationAccessTokensWrite>,
    state: web::Data<AppState>,
    body: ValidJson<OrganizationAccessTokenCreate>,
) -> ApiResult<Created<OrganizationAccessTokenCreateResponse>> {
    let manager = Manager::of(&auth.principal)?;
    let command = body.into_inner().into_command(manager.scopes)?;
    let (oat, token) = tokens::create(&state, manager, command).await?;
    Ok(Created(OrganizationAccessTokenCreateResponse::new(
        &oat, token,
    )))
}

async fn update(
    auth: Auth<OrganizationAccessTokensWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<OrganizationAccessTokenUpdate>,
) -> ApiResult<web::Json<OrganizationAccessTokenView>> {
    let manager = Manager::of(&auth.principal)?;
    let id: OrganizationAccessTokenId = path_id("id", &id)?;
    let change = body.into_inner().into_command(manager.scopes)?;
    let oat = tokens::update(&state, manager, id, change).await?;
    Ok(web::Json(OrganizationAccessTokenView::from(&oat)))
}

async fn delete(
    auth: Auth<OrganizationAccessTokensWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let manager = Manager::of(&auth.principal)?;
    let id: OrganizationAccessTokenId = path_id("id", &id)?;
    tokens::delete(&state, manager, id).await?;
    Ok(HttpResponse::NoContent().finish())
}
