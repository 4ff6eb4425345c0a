//! `/v1/organizations/`: list, create, get and update organizations
//! (`crate::app::catalog::organizations`).

use actix_web::web;

use crate::api::organization::{OrganizationCreate, OrganizationUpdate, OrganizationView};
use crate::api::{Created, ListResource, Pagination};
use crate::app::access::organization_for;
use crate::app::catalog::organizations::{self, OrgSort, OrganizationFilter};
use crate::domain::ids::OrganizationId;
use crate::error::ApiResult;
use crate::extract::auth::{OrganizationsCreate, OrganizationsRead, OrganizationsWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/organizations/", { get => list, post => create });
    crate::resource!(cfg, "/v1/organizations/{id}", { get => get, patch => update });
}

pub(crate) async fn list(
    auth: Auth<OrganizationsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<OrganizationView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = OrganizationFilter {
        slug: q.string("slug"),
        sorting: Sorting::<OrgSort>::from_query(&mut q, (OrgSort::CreatedAt, false)),
    };
    q.finish()?;
    let (orgs, total) = organizations::list(&state, auth.subject(), &filter, params).await?;
    Ok(web::Json(ListResource {
        items: orgs.iter().map(OrganizationView::from).collect(),
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(crate) async fn create(
    auth: Auth<OrganizationsCreate>,
    state: web::Data<AppState>,
    body: ValidJson<OrganizationCreate>,
) -> ApiResult<Created<OrganizationView>> {
    let org =
        organizations::create(&state, auth.subject(), body.into_inner().into_command()?).await?;
    Ok(Created(OrganizationView::from(&org)))
}

pub(crate) async fn get(
    auth: Auth<OrganizationsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<OrganizationView>> {
    let id: OrganizationId = path_id("id", &id)?;
    let org = organizations::get(&state, auth.subject(), id).await?;
    Ok(web::Json(OrganizationView::from(&org)))
}

pub(crate) async fn update(
    auth: Auth<OrganizationsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<OrganizationUpdate>,
) -> ApiResult<web::Json<OrganizationView>> {
    let id: OrganizationId = path_id("id", &id)?;
    // An organization the subject does not reach is 404 whatever the body says.
    let current = organization_for(&state, auth.subject(), id).await?;
    let change = body.into_inner().into_command(&current.value)?;
    let org = organizations::update(&state, auth.subject(), id, change).await?;
    Ok(web::Json(OrganizationView::from(&org)))
}
