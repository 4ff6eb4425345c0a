//! `/v1/orders/`: list and get orders (Polar's `order/endpoints.py` and `service.py`).
//! Orders are written by checkout completion and subscription renewals, never here.
//!
//! Also [`narrowest_filter`], the choice of the filter index to gather a page from, shared
//! with the subscription list.

use std::cmp::Ordering;

use actix_web::web;

use crate::api::order::OrderView;
use crate::api::{ListResource, Pagination};
use crate::app::access::{can_access, organizations_for_list};
use crate::app::listing::{
    compare_times, directed, filtered_page, nulls_last, sorted_page_of, KeyOrder,
};
use crate::app::views::order_view;
use crate::domain::ids::{CustomerId, DiscountId, OrderId, OrganizationId, ProductId};
use crate::domain::order::{
    Order, OrderSort, ORDER_OF_CUSTOMER, ORDER_OF_DISCOUNT, ORDER_OF_PRODUCT,
};
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::OrdersRead;
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, SortField, Sorting, Subject};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/orders/", { get => list });
    crate::resource!(cfg, "/v1/orders/{id}", { get => get });
}

impl SortField for OrderSort {
    const FIELDS: &'static [(&'static str, OrderSort)] = OrderSort::ALL;
}

/// Polar's `ProductPriceType`, the `product_price_type` filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PriceType {
    OneTime,
    Recurring,
}

const PRICE_TYPES: &[(&str, PriceType)] = &[
    ("one_time", PriceType::OneTime),
    ("recurring", PriceType::Recurring),
];

/// A filter served by an index: the index and the filter's values as its tenants.
pub type IndexFilter = (&'static str, Vec<Vec<u8>>);

/// Of several filters served by an index each, the one with the fewest entries (read
/// from the per-tenant counters, no scan); `None` if no filter is given.
pub async fn narrowest_filter(
    state: &AppState,
    filters: &[IndexFilter],
) -> Result<Option<IndexFilter>, ApiError> {
    let mut best: Option<(u64, &'static str, Vec<Vec<u8>>)> = None;
    for (index, tenants) in filters {
        if tenants.is_empty() {
            continue;
        }
        let mut count = 0u64;
        for t in tenants {
            count = count.saturating_add(state.store.count(index, t).await?);
        }
        if best.as_ref().is_none_or(|(c, _, _)| count < *c) {
            best = Some((count, index, tenants.clone()));
        }
    }
    Ok(best.map(|(_, index, tenants)| (index, tenants)))
}

/// One criterion of the order list, as its index orders it (e-mail addresses and names
/// case-folded; no discount, or no subscription, last ascending).
fn compare(field: OrderSort, descending: bool, a: &Order, b: &Order) -> Ordering {
    let folded = |name: &Option<String>| name.as_ref().map(|n| n.to_lowercase());
    let ordering = match field {
        OrderSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
        OrderSort::Amount => a.amount.cmp(&b.amount),
        OrderSort::Customer => a
            .customer_email
            .to_lowercase()
            .cmp(&b.customer_email.to_lowercase()),
        OrderSort::Product => a
            .product_name
            .to_lowercase()
            .cmp(&b.product_name.to_lowercase()),
        OrderSort::Discount => nulls_last(folded(&a.discount_name), folded(&b.discount_name)),
        OrderSort::Subscription => nulls_last(a.subscription_id, b.subscription_id),
    };
    directed(ordering, descending)
}

pub(crate) async fn list(
    auth: Auth<OrdersRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<OrderView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    let products: Vec<ProductId> = q.ids("product_id");
    let price_types = q.enums("product_price_type", PRICE_TYPES);
    let discounts: Vec<DiscountId> = q.ids("discount_id");
    let customers: Vec<CustomerId> = q.ids("customer_id");
    let sorting = Sorting::<OrderSort>::from_query(&mut q, (OrderSort::CreatedAt, true));
    q.finish()?;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(&state, auth.subject(), &orgs).await?;
    // The first criterion is served by an index (equal values follow creation order), the
    // others in memory.
    let (field, descending) = sorting.primary();
    let several = sorting.several(compare);
    let price_type_ok = |o: &Order| {
        price_types.is_empty()
            || price_types.contains(&if o.recurring {
                PriceType::Recurring
            } else {
                PriceType::OneTime
            })
    };
    let keep = |o: &Order| {
        orgs.contains(&o.organization_id)
            && (products.is_empty() || products.contains(&o.product_id))
            && (customers.is_empty() || customers.contains(&o.customer_id))
            && (discounts.is_empty() || o.discount_id.is_some_and(|d| discounts.contains(&d)))
            && price_type_ok(o)
    };
    let filter = narrowest_filter(
        &state,
        &[
            (
                ORDER_OF_CUSTOMER,
                customers.iter().map(|c| c.key()).collect(),
            ),
            (
                ORDER_OF_DISCOUNT,
                discounts.iter().map(|d| d.key()).collect(),
            ),
            (ORDER_OF_PRODUCT, products.iter().map(|p| p.key()).collect()),
        ],
    )
    .await?;
    let (items, total) = match filter {
        Some((index, tenants)) => {
            filtered_page::<Order>(
                &state,
                index,
                &tenants,
                &keep,
                KeyOrder {
                    key: &|o: &Order| o.sort_key(field),
                    backwards: descending,
                    several: several.as_deref(),
                },
                params,
            )
            .await?
        }
        None => {
            let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
            let filter: Option<&dyn Fn(&Order) -> bool> = if price_types.is_empty() {
                None
            } else {
                Some(&price_type_ok)
            };
            sorted_page_of::<Order>(
                &state,
                field.index(),
                &tenants,
                descending,
                params,
                filter,
                several.as_deref(),
            )
            .await?
        }
    };
    let items =
        futures_util::future::try_join_all(items.iter().map(|o| order_view(&state, o))).await?;
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

/// An order the subject may see, else 404.
pub async fn order_for(state: &AppState, subject: Subject, id: OrderId) -> Result<Order, ApiError> {
    match state.store.get::<Order>(&id.key()).await? {
        Some(o) if can_access(state, subject, o.value.organization_id).await? => Ok(o.value),
        _ => Err(ApiError::not_found()),
    }
}

pub(crate) async fn get(
    auth: Auth<OrdersRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<OrderView>> {
    let id: OrderId = path_id("id", &id)?;
    state.store.read_barrier().await?;
    let order = order_for(&state, auth.subject(), id).await?;
    Ok(web::Json(order_view(&state, &order).await?))
}
