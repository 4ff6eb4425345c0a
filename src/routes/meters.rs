//! `/v1/meters/`: list, create, get, update (archive) and the quantities
//! (`crate::app::usage::meters`, `crate::app::usage::quantities`).

use actix_web::web;
use serde_json::Value;

use crate::api::meter::{
    metadata_pairs, meter_change, new_meter, quantities_query, MeterQuantities, MeterQuantity,
    MeterView, QuantitiesParams,
};
use crate::api::{Created, ListResource};
use crate::app::listing::render;
use crate::app::usage::meters::{self, MeterFilter};
use crate::app::usage::quantities;
use crate::domain::ids::MeterId;
use crate::domain::meter::MeterSort;
use crate::error::ApiResult;
use crate::extract::auth::{MetersRead, MetersWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, SortField, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/meters/", { get => list, post => create });
    crate::resource!(cfg, "/v1/meters/{id}/quantities", { get => get_quantities });
    crate::resource!(cfg, "/v1/meters/{id}", { get => get, patch => update });
}

impl SortField for MeterSort {
    const FIELDS: &'static [(&'static str, MeterSort)] = &[
        ("created_at", MeterSort::CreatedAt),
        ("name", MeterSort::Name),
    ];
}

pub(crate) async fn list(
    auth: Auth<MetersRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<MeterView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let sorting = Sorting::<MeterSort>::from_query(&mut q, (MeterSort::CreatedAt, false));
    let filter = MeterFilter {
        organization_id: q.ids("organization_id"),
        query: q.string("query"),
        is_archived: q.bool("is_archived"),
        metadata: metadata_pairs(&query.0),
        sorting,
    };
    q.finish()?;
    let (items, total) = meters::list(&state, auth.subject(), &filter, params).await?;
    Ok(web::Json(render(&items, total, params, |m| {
        MeterView::from(m)
    })))
}

pub(crate) async fn create(
    auth: Auth<MetersWrite>,
    state: web::Data<AppState>,
    body: ValidJson<Value>,
) -> ApiResult<Created<MeterView>> {
    let new = new_meter(&body.into_inner())?;
    let m = meters::create(&state, auth.subject(), new).await?;
    Ok(Created(MeterView::from(&m)))
}

pub(crate) async fn get(
    auth: Auth<MetersRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<MeterView>> {
    let id: MeterId = path_id("id", &id)?;
    let m = meters::get(&state, auth.subject(), id).await?;
    Ok(web::Json(MeterView::from(&m)))
}

pub(crate) async fn update(
    auth: Auth<MetersWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<Value>,
) -> ApiResult<web::Json<MeterView>> {
    let id: MeterId = path_id("id", &id)?;
    let change = meter_change(&body.into_inner())?;
    let m = meters::update(&state, auth.subject(), id, change).await?;
    Ok(web::Json(MeterView::from(&m)))
}

pub(crate) async fn get_quantities(
    auth: Auth<MetersRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    query: RawQuery,
) -> ApiResult<web::Json<MeterQuantities>> {
    let id: MeterId = path_id("id", &id)?;
    // An unknown meter is a 404 before the query's checks, as in Polar.
    meters::get(&state, auth.subject(), id).await?;
    let mut q = QueryParams::parse(&query.0);
    let params = QuantitiesParams {
        start_timestamp: q.string("start_timestamp"),
        end_timestamp: q.string("end_timestamp"),
        interval: q.string("interval"),
        timezone: q.string("timezone"),
        customer_ids: q.ids("customer_id"),
        external_customer_ids: q.strings("external_customer_id"),
        customer_aggregation_function: q.string("customer_aggregation_function"),
        metadata: metadata_pairs(&query.0),
    };
    q.finish()?;
    let query = quantities_query(params)?;
    let r = quantities::quantities(&state, auth.subject(), id, &query).await?;
    Ok(web::Json(MeterQuantities {
        quantities: r
            .quantities
            .into_iter()
            .map(|(timestamp, quantity)| MeterQuantity {
                timestamp,
                quantity,
            })
            .collect(),
        total: r.total,
    }))
}
