//! `/v1/customers/`: list, create, get, update and (soft) delete customers, by id or by
//! the seller's external id (`crate::app::catalog::customers`).

use actix_web::{web, HttpResponse};

use crate::api::customer::{CustomerCreate, CustomerUpdate, CustomerView};
use crate::api::customer_state::CustomerStateView;
use crate::api::{Created, ListResource, Pagination};
use crate::app::catalog::customers::{self, CustomerFilter, CustomerSort};
use crate::app::customer_state;
use crate::domain::ids::CustomerId;
use crate::error::ApiResult;
use crate::extract::auth::{CustomersRead, CustomersWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/customers/", { get => list, post => create });
    crate::resource!(cfg, "/v1/customers/{id}", { get => get, patch => update, delete => delete });
    // Before `/v1/customers/{id}/…`, as Polar declares them: `/external/state` is the
    // customer whose external id is `state`.
    crate::resource!(cfg, "/v1/customers/external/{external_id}", {
        get => get_external, patch => update_external, delete => delete_external
    });
    crate::resource!(cfg, "/v1/customers/external/{external_id}/state", { get => state_external });
    crate::resource!(cfg, "/v1/customers/{id}/state", { get => state_of });
}

pub(crate) async fn list(
    auth: Auth<CustomersRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<CustomerView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = CustomerFilter {
        organization_id: q.ids("organization_id"),
        query: q.string("query"),
        email: q.string("email"),
        sorting: Sorting::<CustomerSort>::from_query(&mut q, (CustomerSort::CreatedAt, true)),
    };
    q.finish()?;
    let (items, total) = customers::list(&state, auth.subject(), &filter, params).await?;
    Ok(web::Json(ListResource {
        items: items.iter().map(CustomerView::from).collect(),
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(crate) async fn create(
    auth: Auth<CustomersWrite>,
    state: web::Data<AppState>,
    body: ValidJson<CustomerCreate>,
) -> ApiResult<Created<CustomerView>> {
    let customer =
        customers::create(&state, auth.subject(), body.into_inner().into_command()?).await?;
    Ok(Created(CustomerView::from(&customer)))
}

pub(crate) async fn get(
    auth: Auth<CustomersRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CustomerView>> {
    let id: CustomerId = path_id("id", &id)?;
    let customer = customers::get(&state, auth.subject(), id).await?;
    Ok(web::Json(CustomerView::from(&customer)))
}

pub(crate) async fn update(
    auth: Auth<CustomersWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<CustomerUpdate>,
) -> ApiResult<web::Json<CustomerView>> {
    let id: CustomerId = path_id("id", &id)?;
    let change = body.into_inner().into_command()?;
    let customer = customers::update(&state, auth.subject(), id, change).await?;
    Ok(web::Json(CustomerView::from(&customer)))
}

pub(crate) async fn delete(
    auth: Auth<CustomersWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: CustomerId = path_id("id", &id)?;
    customers::delete(&state, auth.subject(), id).await?;
    Ok(HttpResponse::NoContent().finish())
}

pub(crate) async fn get_external(
    auth: Auth<CustomersRead>,
    state: web::Data<AppState>,
    external_id: web::Path<String>,
) -> ApiResult<web::Json<CustomerView>> {
    let customer = customers::get_external(&state, auth.subject(), &external_id).await?;
    Ok(web::Json(CustomerView::from(&customer)))
}

pub(crate) async fn update_external(
    auth: Auth<CustomersWrite>,
    state: web::Data<AppState>,
    external_id: web::Path<String>,
    body: ValidJson<CustomerUpdate>,
) -> ApiResult<web::Json<CustomerView>> {
    // The body's own `external_id` is not a change here (Polar's `CustomerUpdateExternalID`
    // has none).
    let mut body = body.into_inner();
    body.external_id = crate::api::Maybe::Absent;
    let change = body.into_command()?;
    let customer = customers::update_external(&state, auth.subject(), &external_id, change).await?;
    Ok(web::Json(CustomerView::from(&customer)))
}

pub(crate) async fn delete_external(
    auth: Auth<CustomersWrite>,
    state: web::Data<AppState>,
    external_id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    customers::delete_external(&state, auth.subject(), &external_id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `GET /v1/customers/{id}/state`: the customer, its active subscriptions and the
/// benefits it holds.
pub(crate) async fn state_of(
    auth: Auth<CustomersRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CustomerStateView>> {
    let id: CustomerId = path_id("id", &id)?;
    let customer = customers::get(&state, auth.subject(), id).await?;
    Ok(web::Json(
        customer_state::state_of(&state, &customer).await?,
    ))
}

/// `GET /v1/customers/external/{external_id}/state`.
pub(crate) async fn state_external(
    auth: Auth<CustomersRead>,
    state: web::Data<AppState>,
    external_id: web::Path<String>,
) -> ApiResult<web::Json<CustomerStateView>> {
    let customer = customers::get_external(&state, auth.subject(), &external_id).await?;
    Ok(web::Json(
        customer_state::state_of(&state, &customer).await?,
    ))
}
