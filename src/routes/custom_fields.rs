//! `/v1/custom-fields/`: list, create, get, update and delete the questions a checkout
//! asks the buyer (`crate::app::catalog::custom_fields`).

use actix_web::{web, HttpResponse};
use serde_json::Value;

use crate::api::custom_field::CustomFieldView;
use crate::api::custom_field::{custom_field_change, new_custom_field};
use crate::api::{Created, ListResource};
use crate::app::catalog::custom_fields::{self, CustomFieldFilter};
use crate::app::listing::render;
use crate::domain::custom_field::{CustomFieldSort, CustomFieldType};
use crate::domain::ids::CustomFieldId;
use crate::error::ApiResult;
use crate::extract::auth::{CustomFieldsRead, CustomFieldsWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, SortField, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/custom-fields/", { get => list, post => create });
    crate::resource!(cfg, "/v1/custom-fields/{id}", { get => get, patch => update, delete => delete });
}

impl SortField for CustomFieldSort {
    const FIELDS: &'static [(&'static str, CustomFieldSort)] = &[
        ("created_at", CustomFieldSort::CreatedAt),
        ("slug", CustomFieldSort::Slug),
        ("name", CustomFieldSort::Name),
        ("type", CustomFieldSort::Type),
    ];
}

pub(crate) async fn list(
    auth: Auth<CustomFieldsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<CustomFieldView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let sorting = Sorting::<CustomFieldSort>::from_query(&mut q, (CustomFieldSort::Slug, false));
    let filter = CustomFieldFilter {
        organization_id: q.ids("organization_id"),
        query: q.string("query"),
        types: q.enums("type", CustomFieldType::ALL),
        sorting,
    };
    q.finish()?;
    let (items, total) = custom_fields::list(&state, auth.subject(), &filter, params).await?;
    Ok(web::Json(render(&items, total, params, |cf| {
        CustomFieldView::from(cf)
    })))
}

pub(crate) async fn create(
    auth: Auth<CustomFieldsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<Value>,
) -> ApiResult<Created<CustomFieldView>> {
    let new = new_custom_field(&body.into_inner())?;
    let cf = custom_fields::create(&state, auth.subject(), new).await?;
    Ok(Created(CustomFieldView::from(&cf)))
}

pub(crate) async fn get(
    auth: Auth<CustomFieldsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CustomFieldView>> {
    let id: CustomFieldId = path_id("id", &id)?;
    let cf = custom_fields::get(&state, auth.subject(), id).await?;
    Ok(web::Json(CustomFieldView::from(&cf)))
}

pub(crate) async fn update(
    auth: Auth<CustomFieldsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<Value>,
) -> ApiResult<web::Json<CustomFieldView>> {
    let id: CustomFieldId = path_id("id", &id)?;
    let change = custom_field_change(&body.into_inner())?;
    let cf = custom_fields::update(&state, auth.subject(), id, change).await?;
    Ok(web::Json(CustomFieldView::from(&cf)))
}

pub(crate) async fn delete(
    auth: Auth<CustomFieldsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: CustomFieldId = path_id("id", &id)?;
    custom_fields::delete(&state, auth.subject(), id).await?;
    Ok(HttpResponse::NoContent().finish())
}
