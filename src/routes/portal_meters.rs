//! `/v1/customer-portal/meters/`: the session customer's meters
//! (`crate::app::usage::customer_meters`).

use actix_web::web;

use crate::api::customer_meter::PortalCustomerMeterView;
use crate::api::{ListResource, Pagination};
use crate::app::listing::render;
use crate::app::usage::customer_meters::{
    self, CustomerMeter, CustomerMeterSort, PortalMeterFilter,
};
use crate::domain::customer::Customer;
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::CustomerPortalRead;
use crate::extract::RawQuery;
use crate::extract::{Auth, ListParams, QueryParams, Sorting, Subject};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/customer-portal/meters/", { get => list });
    crate::resource!(cfg, "/v1/customer-portal/meters/{id}", { get => get });
}

fn view(cm: &CustomerMeter) -> PortalCustomerMeterView {
    PortalCustomerMeterView::new(super::customer_meters::figures(cm), &cm.customer, &cm.meter)
}

/// The session's customer; `None` for a user (no customer of its own).
async fn session_customer(state: &AppState, subject: Subject) -> ApiResult<Option<Customer>> {
    let id = match subject {
        Subject::Customer(id) => id,
        // A purchase session sees its checkout's purchase only; a user is no customer.
        _ => return Ok(None),
    };
    match crate::app::portal::sign_in::customer_of(state, id).await? {
        Some(c) => Ok(Some(c)),
        None => Err(ApiError::Unauthorized),
    }
}

pub(crate) async fn list(
    auth: Auth<CustomerPortalRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<PortalCustomerMeterView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let sorting =
        Sorting::<CustomerMeterSort>::from_query(&mut q, (CustomerMeterSort::ModifiedAt, true));
    let filter = PortalMeterFilter {
        meter_id: q.ids("meter_id"),
        query: q.string("query"),
        sorting,
    };
    q.finish()?;
    let Some(customer) = session_customer(&state, auth.subject()).await? else {
        return Ok(web::Json(ListResource {
            items: Vec::new(),
            pagination: Pagination::new(0, params.limit),
        }));
    };
    let (items, total) = customer_meters::portal_list(&state, &customer, &filter, params).await?;
    Ok(web::Json(render(&items, total, params, view)))
}

pub(crate) async fn get(
    auth: Auth<CustomerPortalRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<PortalCustomerMeterView>> {
    let id: uuid::Uuid = crate::extract::path_id("id", &id)?;
    let Some(customer) = session_customer(&state, auth.subject()).await? else {
        return Err(ApiError::not_found());
    };
    let cm = customer_meters::portal_get(&state, &customer, id).await?;
    Ok(web::Json(view(&cm)))
}
