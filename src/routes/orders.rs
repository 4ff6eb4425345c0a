//! `/v1/orders/`: list and get orders (`crate::app::orders`).

use actix_web::web;

use crate::api::order::OrderView;
use crate::api::{ListResource, Pagination};
use crate::app::orders::{self, order_for, OrderFilter, PRICE_TYPES};
use crate::app::views::order_view;
use crate::domain::ids::OrderId;
use crate::domain::order::OrderSort;
use crate::error::ApiResult;
use crate::extract::auth::OrdersRead;
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, SortField, Sorting};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/orders/", { get => list });
    crate::resource!(cfg, "/v1/orders/{id}", { get => get, patch => super::invoices::update_order });
}

impl SortField for OrderSort {
    const FIELDS: &'static [(&'static str, OrderSort)] = OrderSort::ALL;
}

pub(crate) async fn list(
    auth: Auth<OrdersRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<OrderView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = OrderFilter {
        organization_id: q.ids("organization_id"),
        product_id: q.ids("product_id"),
        product_price_type: q.enums("product_price_type", PRICE_TYPES),
        discount_id: q.ids("discount_id"),
        customer_id: q.ids("customer_id"),
        external_customer_id: q.strings("external_customer_id"),
        checkout_id: q.ids("checkout_id"),
        // Tollgate's extension: a customer's e-mail, name or external id, or an order id.
        query: q.string("query"),
        sorting: Sorting::<OrderSort>::from_query(&mut q, (OrderSort::CreatedAt, true)),
    };
    q.finish()?;
    let (items, total) = orders::list(&state, auth.subject(), &filter, params).await?;
    let items =
        futures_util::future::try_join_all(items.iter().map(|o| order_view(&state, o))).await?;
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(crate) async fn get(
    auth: Auth<OrdersRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<OrderView>> {
    let id: OrderId = path_id("id", &id)?;
    let order = order_for(&state, auth.subject(), id).await?;
    Ok(web::Json(order_view(&state, &order).await?))
}
