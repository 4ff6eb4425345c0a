//! The organizer endpoints, `/v1/checkouts/custom/` and `/v1/checkouts/custom/{id}`:
//! list, read, create and update checkouts with an access token.

use actix_web::{web, HttpRequest};

use crate::api::checkout::{CheckoutCreate, CheckoutUpdate, CheckoutView};
use crate::api::{Created, ListResource, Pagination};
use crate::app::views::checkout_view;
use crate::domain::ids::CheckoutId;
use crate::error::ApiResult;
use crate::extract::auth::{CheckoutsRead, CheckoutsWrite};
use crate::extract::{path_id, Auth, ListParams, QueryParams, Sorting, ValidJson};
use crate::state::AppState;
use tollgate_actors::checkout::CheckoutStatus;

use crate::app;
use crate::app::checkout::{checkout_for, CheckoutFilter, CheckoutSort};

// ---------------------------------------------------------------------------------------
// Organizer endpoints.

/// The `status` filter's values.
const STATUSES: &[(&str, CheckoutStatus)] = &[
    ("open", CheckoutStatus::Open),
    ("expired", CheckoutStatus::Expired),
    ("confirmed", CheckoutStatus::Confirmed),
    ("succeeded", CheckoutStatus::Succeeded),
    ("failed", CheckoutStatus::Failed),
];

/// Every value of a repeatable string parameter.
fn all_values(query: &str, key: &str) -> Vec<String> {
    form_urlencoded::parse(query.as_bytes())
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
        .collect()
}

pub(super) async fn list(
    auth: Auth<CheckoutsRead>,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<web::Json<ListResource<CheckoutView>>> {
    let mut q = QueryParams::parse(req.query_string());
    let params = ListParams::from_query(&mut q);
    let filter = CheckoutFilter {
        organization_id: q.ids("organization_id"),
        product_id: q.ids("product_id"),
        customer_id: q.ids("customer_id"),
        external_customer_id: all_values(req.query_string(), "external_customer_id"),
        status: q.enums("status", STATUSES),
        query: q.string("query").filter(|s| !s.is_empty()),
        sorting: Sorting::<CheckoutSort>::from_query(&mut q, (CheckoutSort::CreatedAt, true)),
    };
    q.finish()?;
    let (items, total) = app::checkout::list(&state, auth.subject(), &filter, params).await?;
    let items =
        futures_util::future::try_join_all(items.iter().map(|c| checkout_view(&state, c))).await?;
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(super) async fn get(
    auth: Auth<CheckoutsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CheckoutView>> {
    let id: CheckoutId = path_id("id", &id)?;
    let checkout = checkout_for(&state, auth.subject(), id).await?;
    Ok(web::Json(checkout_view(&state, &checkout).await?))
}

pub(crate) async fn create(
    auth: Auth<CheckoutsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<CheckoutCreate>,
) -> ApiResult<Created<CheckoutView>> {
    let command = body.into_inner().into_command(state.now())?;
    let checkout = app::checkout::create(&state, auth.subject(), command).await?;
    Ok(Created(checkout_view(&state, &checkout).await?))
}

pub(super) async fn update(
    auth: Auth<CheckoutsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<CheckoutUpdate>,
) -> ApiResult<web::Json<CheckoutView>> {
    let id: CheckoutId = path_id("id", &id)?;
    let input = body.into_inner().into_command()?;
    let updated = app::checkout::update(&state, auth.subject(), id, input).await?;
    Ok(web::Json(checkout_view(&state, &updated).await?))
}
