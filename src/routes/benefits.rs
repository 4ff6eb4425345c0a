//! `/v1/benefits/`: list, create, get, update and delete benefits
//! (`crate::app::catalog::benefits`).

use actix_web::{web, HttpResponse};

use crate::api::benefit::{BenefitCreate, BenefitUpdate, BenefitView};
use crate::api::{Created, ListResource};
use crate::app::catalog::benefits::{self, BenefitFilter};
use crate::app::listing::render;
use crate::domain::benefit::BenefitType;
use crate::domain::ids::BenefitId;
use crate::error::ApiResult;
use crate::extract::auth::{BenefitsRead, BenefitsWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/benefits/", { get => list, post => create });
    crate::resource!(cfg, "/v1/benefits/{id}", { get => get, patch => update, delete => delete });
    crate::resource!(cfg, "/v1/benefits/{id}/grants", { get => super::benefit_grants::of_benefit });
}

pub(crate) async fn list(
    auth: Auth<BenefitsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<BenefitView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = BenefitFilter {
        organization_id: q.ids("organization_id"),
        types: q.enums("type", BenefitType::ALL),
    };
    q.finish()?;
    let (items, total) = benefits::list(&state, auth.subject(), &filter, params).await?;
    Ok(web::Json(render(&items, total, params, |b| {
        BenefitView::from(b)
    })))
}

pub(crate) async fn create(
    auth: Auth<BenefitsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<BenefitCreate>,
) -> ApiResult<Created<BenefitView>> {
    let new = body.into_inner().into_command()?;
    let benefit = benefits::create(&state, auth.subject(), new).await?;
    Ok(Created(BenefitView::from(&benefit)))
}

pub(crate) async fn get(
    auth: Auth<BenefitsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<BenefitView>> {
    let id: BenefitId = path_id("id", &id)?;
    let benefit = benefits::get(&state, auth.subject(), id).await?;
    Ok(web::Json(BenefitView::from(&benefit)))
}

pub(crate) async fn update(
    auth: Auth<BenefitsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<BenefitUpdate>,
) -> ApiResult<web::Json<BenefitView>> {
    let id: BenefitId = path_id("id", &id)?;
    let body = body.into_inner();
    // Not found and another type are told before the body's errors.
    benefits::changeable(&state, auth.subject(), id, body.kind()).await?;
    let change = body.into_command()?;
    let benefit = benefits::update(&state, auth.subject(), id, change).await?;
    Ok(web::Json(BenefitView::from(&benefit)))
}

pub(crate) async fn delete(
    auth: Auth<BenefitsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: BenefitId = path_id("id", &id)?;
    benefits::delete(&state, auth.subject(), id).await?;
    Ok(HttpResponse::NoContent().finish())
}
