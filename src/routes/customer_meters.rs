//! `/v1/customer-meters/`: the customers' meters (`crate::app::usage::customer_meters`).

use actix_web::web;

use crate::api::customer_meter::{CustomerMeterView, Figures};
use crate::api::ListResource;
use crate::app::listing::render;
use crate::app::usage::customer_meters::{
    self, CustomerMeter, CustomerMeterFilter, CustomerMeterSort,
};
use crate::error::ApiResult;
use crate::extract::auth::CustomerMetersRead;
use crate::extract::RawQuery;
use crate::extract::{Auth, ListParams, QueryParams, SortField, Sorting};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/customer-meters/", { get => list });
    crate::resource!(cfg, "/v1/customer-meters/{id}", { get => get });
}

impl SortField for CustomerMeterSort {
    const FIELDS: &'static [(&'static str, CustomerMeterSort)] = &[
        ("created_at", CustomerMeterSort::CreatedAt),
        ("modified_at", CustomerMeterSort::ModifiedAt),
        ("customer_id", CustomerMeterSort::CustomerId),
        ("customer_name", CustomerMeterSort::CustomerName),
        ("meter_id", CustomerMeterSort::MeterId),
        ("meter_name", CustomerMeterSort::MeterName),
        ("consumed_units", CustomerMeterSort::ConsumedUnits),
        ("credited_units", CustomerMeterSort::CreditedUnits),
        ("balance", CustomerMeterSort::Balance),
    ];
}

/// The numbers of a customer meter.
pub fn figures(cm: &CustomerMeter) -> Figures {
    Figures {
        id: cm.id,
        created_at: cm.created_at,
        modified_at: cm.modified_at,
        consumed_units: cm.consumed_units,
        credited_units: cm.credited_units,
        balance: cm.balance,
    }
}

fn view(cm: &CustomerMeter) -> CustomerMeterView {
    CustomerMeterView::new(figures(cm), &cm.customer, &cm.meter)
}

pub(crate) async fn list(
    auth: Auth<CustomerMetersRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<CustomerMeterView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let sorting =
        Sorting::<CustomerMeterSort>::from_query(&mut q, (CustomerMeterSort::ModifiedAt, true));
    let filter = CustomerMeterFilter {
        organization_id: q.ids("organization_id"),
        customer_id: q.ids("customer_id"),
        external_customer_id: q.strings("external_customer_id"),
        meter_id: q.ids("meter_id"),
        sorting,
    };
    q.finish()?;
    let (items, total) = customer_meters::list(&state, auth.subject(), &filter, params).await?;
    Ok(web::Json(render(&items, total, params, view)))
}

pub(crate) async fn get(
    auth: Auth<CustomerMetersRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CustomerMeterView>> {
    let id: uuid::Uuid = crate::extract::path_id("id", &id)?;
    let cm = customer_meters::get(&state, auth.subject(), id).await?;
    Ok(web::Json(view(&cm)))
}
