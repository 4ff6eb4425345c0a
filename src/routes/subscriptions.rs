//! `/v1/subscriptions/`: list, get and update (cancel at the period end, uncancel, revoke)
//! subscriptions (Polar's `subscription/endpoints.py` and `service.py`; get and update as
//! Polar added them in January 2025). The changes and the renewal sweep are
//! `crate::app::subscription`.

use std::cmp::Ordering;

use actix_web::web;
use chrono::{DateTime, Utc};
use tollgate_actors::subscription::{
    Subscription, SubscriptionSort, SUBSCRIPTION_OF_CUSTOMER, SUBSCRIPTION_OF_DISCOUNT,
    SUBSCRIPTION_OF_PRODUCT,
};

use crate::api::subscription::{SubscriptionUpdate, SubscriptionView};
use crate::api::{ListResource, Pagination};
use crate::app::access::organizations_for_list;
use crate::app::listing::narrowest_filter;
use crate::app::listing::{directed, filtered_page, nulls_last, sorted_page_of, KeyOrder};
use crate::app::subscription::{self, subscription_for};
use crate::app::views::subscription_view;
use crate::domain::ids::{CustomerId, DiscountId, OrganizationId, ProductId, SubscriptionId};
use crate::error::ApiResult;
use crate::extract::auth::{SubscriptionsRead, SubscriptionsWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, SortField, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/subscriptions/", { get => list });
    crate::resource!(cfg, "/v1/subscriptions/{id}", { get => get, patch => update });
}

impl SortField for SubscriptionSort {
    const FIELDS: &'static [(&'static str, SubscriptionSort)] = SubscriptionSort::ALL;
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

/// One criterion of the subscription list, as its indexes order it: Polar's status rank,
/// names and e-mail addresses case-folded, the monthly amount with no amount last both
/// ways, no period end or no discount last ascending.
fn compare(
    field: SubscriptionSort,
    descending: bool,
    a: &Subscription,
    b: &Subscription,
) -> Ordering {
    let folded = |name: &Option<String>| name.as_ref().map(|n| n.to_lowercase());
    let micros = |t: Option<DateTime<Utc>>| t.map(|t| t.timestamp_micros());
    let ordering = match field {
        SubscriptionSort::Customer => a
            .customer_email
            .to_lowercase()
            .cmp(&b.customer_email.to_lowercase()),
        SubscriptionSort::Status => a.status_rank().cmp(&b.status_rank()),
        SubscriptionSort::StartedAt => micros(a.started_at).cmp(&micros(b.started_at)),
        SubscriptionSort::CurrentPeriodEnd => {
            nulls_last(micros(a.current_period_end), micros(b.current_period_end))
        }
        SubscriptionSort::Amount if descending => {
            return nulls_last(
                a.monthly_amount().map(std::cmp::Reverse),
                b.monthly_amount().map(std::cmp::Reverse),
            )
        }
        SubscriptionSort::Amount => nulls_last(a.monthly_amount(), b.monthly_amount()),
        SubscriptionSort::Product => a
            .product_name
            .to_lowercase()
            .cmp(&b.product_name.to_lowercase()),
        SubscriptionSort::Discount => {
            nulls_last(folded(&a.discount_name), folded(&b.discount_name))
        }
    };
    directed(ordering, descending)
}

pub(crate) async fn list(
    auth: Auth<SubscriptionsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<SubscriptionView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    let products: Vec<ProductId> = q.ids("product_id");
    let customers: Vec<CustomerId> = q.ids("customer_id");
    let discounts: Vec<DiscountId> = q.ids("discount_id");
    let active = q.bool("active");
    let sorting =
        Sorting::<SubscriptionSort>::from_query(&mut q, (SubscriptionSort::StartedAt, true));
    q.finish()?;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(&state, auth.subject(), &orgs).await?;
    // The first criterion is served by an index (equal values follow `started_at`), the
    // others in memory.
    let (field, descending) = sorting.primary();
    let (index, backwards) = field.index(descending);
    let several = sorting.several(compare);
    // `active=true`: trialing or active; `false`: past due, canceled or unpaid.
    let active_ok = |s: &Subscription| match active {
        None => true,
        Some(true) => s.status.is_active(),
        Some(false) => s.status.is_revoked(),
    };
    let keep = |s: &Subscription| {
        s.started_at.is_some()
            && orgs.contains(&s.organization_id)
            && (products.is_empty() || products.contains(&s.product_id))
            && (customers.is_empty() || customers.contains(&s.customer_id))
            && (discounts.is_empty() || s.discount_id.is_some_and(|d| discounts.contains(&d)))
            && active_ok(s)
    };
    let filter = narrowest_filter(
        &state,
        &[
            (
                SUBSCRIPTION_OF_CUSTOMER,
                customers.iter().map(|c| c.key()).collect(),
            ),
            (
                SUBSCRIPTION_OF_DISCOUNT,
                discounts.iter().map(|d| d.key()).collect(),
            ),
            (
                SUBSCRIPTION_OF_PRODUCT,
                products.iter().map(|p| p.key()).collect(),
            ),
        ],
    )
    .await?;
    let (items, total) = match filter {
        Some((filter_index, tenants)) => {
            filtered_page::<Subscription>(
                &state,
                filter_index,
                &tenants,
                &keep,
                KeyOrder {
                    key: &|s: &Subscription| s.sort_key(field, descending),
                    backwards,
                    several: several.as_deref(),
                },
                params,
            )
            .await?
        }
        None => {
            let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
            let filter: Option<&dyn Fn(&Subscription) -> bool> = if active.is_some() {
                Some(&active_ok)
            } else {
                None
            };
            sorted_page_of::<Subscription>(
                &state,
                index,
                &tenants,
                backwards,
                params,
                filter,
                several.as_deref(),
            )
            .await?
        }
    };
    let items =
        futures_util::future::try_join_all(items.iter().map(|s| subscription_view(&state, s)))
            .await?;
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(crate) async fn get(
    auth: Auth<SubscriptionsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<SubscriptionView>> {
    let id: SubscriptionId = path_id("id", &id)?;
    state.store.read_barrier().await?;
    let s = subscription_for(&state, auth.subject(), id).await?;
    Ok(web::Json(subscription_view(&state, &s).await?))
}

// ---------------------------------------------------------------------------------------
// Update
// ---------------------------------------------------------------------------------------

pub(crate) async fn update(
    auth: Auth<SubscriptionsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<SubscriptionUpdate>,
) -> ApiResult<web::Json<SubscriptionView>> {
    let id: SubscriptionId = path_id("id", &id)?;
    let updated = subscription::update(&state, auth.subject(), id, body.into_inner()).await?;
    Ok(web::Json(subscription_view(&state, &updated).await?))
}

// ---------------------------------------------------------------------------------------
// The sweep: renewals, ends and revocations
// ---------------------------------------------------------------------------------------
