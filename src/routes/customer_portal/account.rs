//! The signed-in customer's own records under `/v1/customer-portal/`: the customer
//! (`customers/me`, its billing details changed in `super::billing`), its orders (and
//! their receipts), subscriptions (cancel, uncancel, change the plan, preview a change)
//! and benefit grants. A customer session only; another customer's ids are 404. A session
//! limited to one checkout's purchase (`crate::app::portal::purchase`) reads that
//! purchase's order, subscription and grants, is 404 for the rest, and 403 for
//! `customers/me` and every change.
//! `crate::app::portal` does the work.

use actix_web::web;
use tollgate_actors::subscription::SubscriptionSort;

use crate::api::customer_portal::{
    CustomerBenefitGrant, CustomerOrder, CustomerOrderReceipt, CustomerPortalCustomer,
    CustomerSubscription,
};
use crate::api::portal_update::{
    CustomerSubscriptionChangePreview, CustomerSubscriptionUpdate, PortalSubscriptionUpdate,
};
use crate::api::{ListResource, Pagination};
use crate::app::orders::{OrderFilter, PRICE_TYPES};
use crate::app::plan_change::SubscriptionChargePreview;
use crate::app::portal::purchase::PurchaseScope;
use crate::app::portal::{self, CancelChange, PortalGrantFilter, PortalGrantSort};
use crate::app::subscription::SubscriptionFilter;
use crate::domain::ids::{OrderId, SubscriptionId};
use crate::domain::order::OrderSort;
use crate::error::ApiResult;
use crate::extract::auth::{CustomerSessionRead, CustomerSessionWrite};
use crate::extract::{path_id, Auth, ListParams, QueryParams, RawQuery, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    let base = "/v1/customer-portal";
    crate::resource!(cfg, format!("{base}/customers/me"),
        { get => me, patch => super::billing::update_me });
    crate::resource!(cfg, format!("{base}/orders/"), { get => orders });
    crate::resource!(cfg, format!("{base}/orders/{{id}}"), { get => order, patch => super::invoices::update_order });
    crate::resource!(cfg, format!("{base}/orders/{{id}}/receipt"), { get => receipt });
    crate::resource!(cfg, format!("{base}/subscriptions/"), { get => subscriptions });
    crate::resource!(cfg, format!("{base}/subscriptions/{{id}}"),
        { get => subscription, patch => update_subscription, delete => cancel_subscription });
    crate::resource!(cfg, format!("{base}/subscriptions/{{id}}/change-preview"),
        { post => change_preview });
    crate::resource!(cfg, format!("{base}/benefit-grants/"), { get => grants });
    crate::resource!(cfg, format!("{base}/benefit-grants/{{id}}"), { get => grant });
}

async fn me(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
) -> ApiResult<web::Json<CustomerPortalCustomer>> {
    let customer = super::signed_in(&state, &auth).await?;
    Ok(web::Json(CustomerPortalCustomer::from(&customer)))
}

// ---------------------------------------------------------------------------------------
// Orders

async fn orders(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<CustomerOrder>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = OrderFilter {
        product_id: q.ids("product_id"),
        product_price_type: q.enums("product_billing_type", PRICE_TYPES),
        sorting: Sorting::<OrderSort>::from_query(&mut q, (OrderSort::CreatedAt, true)),
        ..OrderFilter::default()
    };
    // Polar's other filters, accepted: `subscription_id` and `query`.
    let subscriptions: Vec<SubscriptionId> = q.ids("subscription_id");
    let _ = q.string("query");
    q.finish()?;
    let (customer, scope) = super::reader(&state, &auth).await?;
    let mut filter = filter;
    if let Some(scope) = scope {
        filter.checkout_id = vec![scope.checkout_id];
    }
    let organization = portal::organization(&state, &customer).await?;
    let (items, total) = portal::orders(&state, &customer, filter, params).await?;
    let mut views = Vec::with_capacity(items.len());
    for o in items.iter().filter(|o| {
        subscriptions.is_empty()
            || o.subscription_id
                .is_some_and(|s| subscriptions.contains(&s))
    }) {
        views.push(shown_order(
            portal::order_view_of(&state, o, &organization).await?,
            scope,
        ));
    }
    Ok(web::Json(ListResource {
        items: views,
        pagination: Pagination::new(total, params.limit),
    }))
}

async fn order(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CustomerOrder>> {
    let id: OrderId = path_id("id", &id)?;
    let (customer, scope) = super::reader(&state, &auth).await?;
    let order = purchase_order(&state, &customer, scope, id).await?;
    let organization = portal::organization(&state, &customer).await?;
    Ok(web::Json(shown_order(
        portal::order_view_of(&state, &order, &organization).await?,
        scope,
    )))
}

/// `{"url": …}`: a signed link to the order's printable receipt, valid an hour.
async fn receipt(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CustomerOrderReceipt>> {
    let id: OrderId = path_id("id", &id)?;
    let (customer, scope) = super::reader(&state, &auth).await?;
    let order = purchase_order(&state, &customer, scope, id).await?;
    Ok(web::Json(CustomerOrderReceipt {
        url: portal::receipt::link(&state, order.id),
    }))
}

/// An order as the session shows it: a limited one does not show the customer's name as
/// the billing name.
fn shown_order(mut view: CustomerOrder, scope: Option<PurchaseScope>) -> CustomerOrder {
    if scope.is_some() {
        view.billing_name = None;
    }
    view
}

/// One of the customer's orders that the session reaches, else 404.
pub(super) async fn purchase_order(
    state: &AppState,
    customer: &crate::domain::customer::Customer,
    scope: Option<PurchaseScope>,
    id: OrderId,
) -> Result<crate::domain::order::Order, crate::error::ApiError> {
    let order = portal::order(state, customer, id).await?;
    if scope.is_some_and(|p| !p.has_order(&order)) {
        return Err(crate::error::ApiError::not_found());
    }
    Ok(order)
}

// ---------------------------------------------------------------------------------------
// Subscriptions

async fn subscriptions(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<CustomerSubscription>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = SubscriptionFilter {
        product_id: q.ids("product_id"),
        active: q.bool("active"),
        sorting: Sorting::<SubscriptionSort>::from_query(
            &mut q,
            (SubscriptionSort::StartedAt, true),
        ),
        ..SubscriptionFilter::default()
    };
    let _ = q.string("query");
    q.finish()?;
    let (customer, scope) = super::reader(&state, &auth).await?;
    let organization = portal::organization(&state, &customer).await?;
    let (items, total) = match scope {
        None => portal::subscriptions(&state, &customer, filter, params).await?,
        // The purchase's own subscription, if it made one.
        Some(scope) => match portal::subscription(&state, &customer, scope.subscription_id).await {
            Ok(s) if params.page == 1 => (vec![s], 1),
            Ok(_) => (Vec::new(), 1),
            Err(_) => (Vec::new(), 0),
        },
    };
    let mut views = Vec::with_capacity(items.len());
    for s in &items {
        views.push(portal::subscription_view_of(&state, s, &organization).await?);
    }
    Ok(web::Json(ListResource {
        items: views,
        pagination: Pagination::new(total, params.limit),
    }))
}

async fn subscription(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CustomerSubscription>> {
    let id: SubscriptionId = path_id("id", &id)?;
    let (customer, scope) = super::reader(&state, &auth).await?;
    if scope.is_some_and(|p| !p.has_subscription(id)) {
        return Err(crate::error::ApiError::not_found());
    }
    let s = portal::subscription(&state, &customer, id).await?;
    let organization = portal::organization(&state, &customer).await?;
    Ok(web::Json(
        portal::subscription_view_of(&state, &s, &organization).await?,
    ))
}

async fn answered(
    state: &AppState,
    customer: &crate::domain::customer::Customer,
    s: &tollgate_actors::subscription::Subscription,
) -> ApiResult<web::Json<CustomerSubscription>> {
    let organization = portal::organization(state, customer).await?;
    Ok(web::Json(
        portal::subscription_view_of(state, s, &organization).await?,
    ))
}

async fn changed(
    state: &AppState,
    customer: &crate::domain::customer::Customer,
    id: SubscriptionId,
    change: CancelChange,
) -> ApiResult<web::Json<CustomerSubscription>> {
    let s = portal::update_subscription(state, customer, id, change).await?;
    answered(state, customer, &s).await
}

/// One of Polar's update shapes: `{product_id}` changes the plan (when the organization
/// lets buyers), `{cancel_at_period_end, …}` cancels at the period's end or uncancels,
/// `{pending_update: null}` drops a scheduled change (there is never one).
async fn update_subscription(
    auth: Auth<CustomerSessionWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<CustomerSubscriptionUpdate>,
) -> ApiResult<web::Json<CustomerSubscription>> {
    let id: SubscriptionId = path_id("id", &id)?;
    let update = body.value.into_command(&body.raw)?;
    let customer = super::signed_in(&state, &auth).await?;
    match update {
        PortalSubscriptionUpdate::Plan(product) => {
            let s = portal::plan::change_plan(&state, &customer, id, product).await?;
            answered(&state, &customer, &s).await
        }
        PortalSubscriptionUpdate::Cancel {
            cancel_at_period_end,
            reason,
            comment,
        } => {
            let change = CancelChange {
                cancel_at_period_end,
                reason,
                comment,
            };
            changed(&state, &customer, id, change).await
        }
        PortalSubscriptionUpdate::DropPendingUpdate => {
            changed(&state, &customer, id, CancelChange::default()).await
        }
    }
}

/// What moving to another product would cost now and at the renewal (Polar's private
/// `change-preview`); nothing is written.
async fn change_preview(
    auth: Auth<CustomerSessionWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<CustomerSubscriptionChangePreview>,
) -> ApiResult<web::Json<SubscriptionChargePreview>> {
    let id: SubscriptionId = path_id("id", &id)?;
    let product = body.value.into_command(&body.raw)?;
    let customer = super::signed_in(&state, &auth).await?;
    Ok(web::Json(
        portal::plan::preview(&state, &customer, id, product).await?,
    ))
}

/// `DELETE`: cancel at the period's end (Polar).
async fn cancel_subscription(
    auth: Auth<CustomerSessionWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CustomerSubscription>> {
    let id: SubscriptionId = path_id("id", &id)?;
    let customer = super::signed_in(&state, &auth).await?;
    let change = CancelChange {
        cancel_at_period_end: Some(true),
        ..CancelChange::default()
    };
    changed(&state, &customer, id, change).await
}

// ---------------------------------------------------------------------------------------
// Benefit grants

/// The customer a grant shows: a limited session's shows none of its details.
fn shown_customer(
    customer: &crate::domain::customer::Customer,
    scope: Option<PurchaseScope>,
) -> crate::domain::customer::Customer {
    match scope {
        Some(_) => portal::purchase::shown_customer(customer),
        None => customer.clone(),
    }
}

async fn grants(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<CustomerBenefitGrant>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let wanted = PortalGrantFilter {
        benefit_id: q.ids("benefit_id").pop(),
        types: q.enums("type", crate::domain::benefit::BenefitType::ALL),
        order_id: q.ids("order_id"),
        subscription_id: q.ids("subscription_id"),
        purchase: None,
    };
    let sorting = q.enums("sorting", GRANT_SORTS);
    // Polar's other filters, accepted: Tollgate has no members, and a checkout's grants
    // are its order's.
    for name in ["checkout_id", "member_id"] {
        let _ = q.strings(name);
    }
    let _ = q.string("query");
    q.finish()?;
    let (customer, scope) = super::reader(&state, &auth).await?;
    let wanted = PortalGrantFilter {
        purchase: scope,
        ..wanted
    };
    let (items, total) = portal::grants(&state, &customer, &wanted, &sorting, params).await?;
    let shown = shown_customer(&customer, scope);
    Ok(web::Json(ListResource {
        items: portal::grant_views(&state, &shown, &items).await?,
        pagination: Pagination::new(total, params.limit),
    }))
}

/// The sorting names (`-` for descending) of the portal's grants.
const GRANT_SORTS: &[(&str, (PortalGrantSort, bool))] = &[
    ("granted_at", (PortalGrantSort::GrantedAt, false)),
    ("-granted_at", (PortalGrantSort::GrantedAt, true)),
    ("type", (PortalGrantSort::Type, false)),
    ("-type", (PortalGrantSort::Type, true)),
    ("organization", (PortalGrantSort::Organization, false)),
    ("-organization", (PortalGrantSort::Organization, true)),
    ("product_benefit", (PortalGrantSort::ProductBenefit, false)),
    ("-product_benefit", (PortalGrantSort::ProductBenefit, true)),
];

async fn grant(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CustomerBenefitGrant>> {
    let id: uuid::Uuid = path_id("id", &id)?;
    let (customer, scope) = super::reader(&state, &auth).await?;
    let g = portal::grant(&state, &customer, id).await?;
    if scope.is_some_and(|p| !p.has_grant(&g)) {
        return Err(crate::error::ApiError::not_found());
    }
    let shown = shown_customer(&customer, scope);
    let mut views = portal::grant_views(&state, &shown, std::slice::from_ref(&g)).await?;
    views
        .pop()
        .map(web::Json)
        .ok_or_else(crate::error::ApiError::not_found)
}
