//! `GET /v1/benefit-grants/` and `GET /v1/benefits/{id}/grants`: the benefits granted to
//! customers (`crate::app::benefit_grants`, derived from purchases). The second is
//! registered by `crate::routes::benefits`, next to the benefit it belongs to.

use actix_web::web;

use crate::api::benefit_grant::BenefitGrantRead;
use crate::api::{ListResource, Pagination};
use crate::app::benefit_grants::{self, GrantFilter, GrantSort};
use crate::domain::benefit_grant::BenefitGrant;
use crate::domain::ids::BenefitId;
use crate::error::ApiResult;
use crate::extract::auth::BenefitsRead;
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, Sorting};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/benefit-grants/", { get => list });
}

/// Every value of a repeatable text parameter (`external_customer_id=a&external_customer_id=b`).
fn texts(query: &str, key: &str) -> Vec<String> {
    form_urlencoded::parse(query.as_bytes())
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
        .collect()
}

async fn render(
    state: &AppState,
    items: &[BenefitGrant],
    total: u64,
    params: ListParams,
) -> ApiResult<web::Json<ListResource<BenefitGrantRead>>> {
    let (customers, benefits) = benefit_grants::parts(state, items).await?;
    let files = benefit_grants::files_of_grants(state, items, &benefits).await?;
    let items = items
        .iter()
        .filter_map(|g| {
            let customer = customers.get(&g.customer_id)?;
            let benefit = benefits.get(&g.benefit_id)?;
            Some(
                BenefitGrantRead::new(g, customer, benefit)
                    .with_files(files.get(&g.id).map(Vec::as_slice)),
            )
        })
        .collect();
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(crate) async fn list(
    auth: Auth<BenefitsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<BenefitGrantRead>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = GrantFilter {
        organization_id: q.ids("organization_id"),
        customer_id: q.ids("customer_id"),
        external_customer_id: texts(&query.0, "external_customer_id"),
        is_granted: q.bool("is_granted"),
        benefit_id: None,
        sorting: Sorting::<GrantSort>::from_query(&mut q, (GrantSort::CreatedAt, true)),
    };
    q.finish()?;
    let (items, total) = benefit_grants::list(&state, auth.subject(), &filter, params).await?;
    render(&state, &items, total, params).await
}

/// `GET /v1/benefits/{id}/grants`: the grants of a benefit the caller sees (else 404),
/// newest first.
pub(crate) async fn of_benefit(
    auth: Auth<BenefitsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<BenefitGrantRead>>> {
    let id: BenefitId = path_id("id", &id)?;
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = GrantFilter {
        customer_id: q.ids("customer_id"),
        is_granted: q.bool("is_granted"),
        benefit_id: Some(id),
        ..GrantFilter::default()
    };
    q.finish()?;
    let (items, total) =
        benefit_grants::of_benefit(&state, auth.subject(), id, filter, params).await?;
    render(&state, &items, total, params).await
}
