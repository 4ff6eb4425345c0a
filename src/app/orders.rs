//! Orders: list and find (Polar's `order/endpoints.py` and `service.py`). Orders are
//! written by checkout completion and subscription renewals, never here.

use std::cmp::Ordering;

use crate::app::access::{can_access, organizations_for_list};
use crate::app::catalog::customers::search as customer_search;
use crate::app::listing::{
    compare_times, directed, filtered_page, narrowest_filter, nulls_last, sorted_page_of, KeyOrder,
};
use crate::app::paging::{ListParams, Sorting};
use crate::auth::Subject;
use crate::domain::customer::customer_by_external_id;
use crate::domain::ids::{CheckoutId, CustomerId, DiscountId, OrderId, OrganizationId, ProductId};
use crate::domain::order::{
    Order, OrderSort, ORDER_BY_PAYMENT, ORDER_OF_CUSTOMER, ORDER_OF_DISCOUNT, ORDER_OF_PRODUCT,
};
use crate::error::AppError;
use crate::state::AppState;

/// Polar's `ProductPriceType`, the `product_price_type` filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceType {
    OneTime,
    Recurring,
}

pub const PRICE_TYPES: &[(&str, PriceType)] = &[
    ("one_time", PriceType::OneTime),
    ("recurring", PriceType::Recurring),
];

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

/// Which orders a list shows, and in what order.
#[derive(Debug, Clone)]
pub struct OrderFilter {
    /// Of these organizations (all the subject reaches when empty).
    pub organization_id: Vec<OrganizationId>,
    pub product_id: Vec<ProductId>,
    pub product_price_type: Vec<PriceType>,
    pub discount_id: Vec<DiscountId>,
    pub customer_id: Vec<CustomerId>,
    /// The customers with these external ids (in the listed organizations).
    pub external_customer_id: Vec<String>,
    pub checkout_id: Vec<CheckoutId>,
    /// Tollgate's extension: the orders of the customers the customer search finds with
    /// this needle (e-mail, name, external id), and the order with this id.
    pub query: Option<String>,
    pub sorting: Sorting<OrderSort>,
}

impl Default for OrderFilter {
    fn default() -> Self {
        Self {
            organization_id: Vec::new(),
            product_id: Vec::new(),
            product_price_type: Vec::new(),
            discount_id: Vec::new(),
            customer_id: Vec::new(),
            external_customer_id: Vec::new(),
            checkout_id: Vec::new(),
            query: None,
            sorting: Sorting::by(OrderSort::CreatedAt, true),
        }
    }
}

/// One page of the orders `subject` reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &OrderFilter,
    params: ListParams,
) -> Result<(Vec<Order>, u64), AppError> {
    let sorting = &filter.sorting;
    let (products, price_types, discounts, customers) = (
        &filter.product_id,
        &filter.product_price_type,
        &filter.discount_id,
        &filter.customer_id,
    );
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    // External ids name customers of the listed organizations; one that names none
    // matches no order.
    let mut external: Vec<CustomerId> = Vec::new();
    for org in &orgs {
        for id in &filter.external_customer_id {
            if let Some(c) = customer_by_external_id(&state.store, *org, id).await? {
                external.push(c.value.id);
            }
        }
    }
    let by_external = !filter.external_customer_id.is_empty();
    if by_external && external.is_empty() {
        return Ok((Vec::new(), 0));
    }
    // The query: the customers it finds (through the search index) and the order it names;
    // it finds nothing else.
    let query = filter
        .query
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty());
    let mut searched: Vec<CustomerId> = Vec::new();
    let mut named: Option<(OrderId, CustomerId)> = None;
    if let Some(query) = query {
        searched = customer_search(state, &orgs, &query.to_lowercase(), false)
            .await?
            .iter()
            .map(|c| c.id)
            .collect();
        if let Ok(id) = query.parse::<OrderId>() {
            if let Some(o) = state.store.get::<Order>(&id.key()).await? {
                named = Some((id, o.value.customer_id));
            }
        }
    }
    let mut query_tenants: Vec<Vec<u8>> = searched.iter().map(|c| c.key()).collect();
    if let Some((_, customer)) = named {
        query_tenants.push(customer.key());
    }
    if query.is_some() && query_tenants.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let query_ok = |o: &Order| {
        query.is_none()
            || searched.contains(&o.customer_id)
            || named.is_some_and(|(id, _)| id == o.id)
    };
    let checkouts = &filter.checkout_id;
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
            && (!by_external || external.contains(&o.customer_id))
            && (checkouts.is_empty() || o.checkout_id.is_some_and(|c| checkouts.contains(&c)))
            && (discounts.is_empty() || o.discount_id.is_some_and(|d| discounts.contains(&d)))
            && price_type_ok(o)
            && query_ok(o)
    };
    let narrowest = narrowest_filter(
        state,
        &[
            (
                ORDER_OF_CUSTOMER,
                customers.iter().map(|c| c.key()).collect(),
            ),
            (
                ORDER_OF_CUSTOMER,
                external.iter().map(|c| c.key()).collect(),
            ),
            (ORDER_OF_CUSTOMER, query_tenants),
            (
                ORDER_OF_DISCOUNT,
                discounts.iter().map(|d| d.key()).collect(),
            ),
            (ORDER_OF_PRODUCT, products.iter().map(|p| p.key()).collect()),
        ],
    )
    .await?;
    let (items, total) = match narrowest {
        Some((index, tenants)) => {
            filtered_page::<Order>(
                state,
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
            let filter: Option<&dyn Fn(&Order) -> bool> =
                if price_types.is_empty() && checkouts.is_empty() {
                    None
                } else {
                    Some(&keep)
                };
            sorted_page_of::<Order>(
                state,
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
    Ok((items, total))
}

/// An order the subject may see, else 404 (once what it read is durable).
pub async fn order_for(state: &AppState, subject: Subject, id: OrderId) -> Result<Order, AppError> {
    state.store.read_barrier().await?;
    match state.store.get::<Order>(&id.key()).await? {
        Some(o) if can_access(state, subject, o.value.organization_id).await? => Ok(o.value),
        _ => Err(AppError::not_found()),
    }
}

/// The order a processor's payment paid, if any order knows it.
pub async fn order_of_payment(state: &AppState, payment: &str) -> Result<Option<Order>, AppError> {
    let ids: Vec<Vec<u8>> = state
        .store
        .index_iter(
            ORDER_BY_PAYMENT,
            &[payment.as_bytes().to_vec()],
            tollgate_storage::Direction::Asc,
        )?
        .take(1)
        .await?;
    let Some(key) = ids.into_iter().next() else {
        return Ok(None);
    };
    Ok(state.store.get::<Order>(&key).await?.map(|o| o.value))
}
