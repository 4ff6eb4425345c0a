//! Customers: searched by e-mail or name, and one customer's orders, subscriptions and
//! license keys, its customer-portal address, and a sign-in link to the portal that
//! the seller can send it (a customer session, valid an hour, shown once); and its usage:
//! each customer meter (consumed, credited, balance) and its last events.

use actix_web::{web, HttpRequest};
use askama::Template;

use super::meters_form;
use super::{choices, fmt, of_org, Dash, Layout, ListQuery, PageResult, Pager};
use crate::app::catalog::customers::{self, customer_for, CustomerFilter, CustomerSort};
use crate::app::license_keys::customer_key_records;
use crate::app::orders::{self, OrderFilter};
use crate::app::subscription::{self, SubscriptionFilter};
use crate::app::usage::customer_meters::{self, CustomerMeter};
use crate::app::usage::ingest;
use crate::domain::customer::Customer;
use crate::domain::ids::CustomerId;
use crate::domain::order::Order;
use crate::domain::usage_event::{EventFilter, UsageEvent};
use crate::extract::{path_id, Sorting};
use crate::state::AppState;
use tollgate_actors::license_key::LicenseKey;
use tollgate_actors::subscription::Subscription;

#[derive(Template)]
#[template(path = "dashboard/customers.html")]
struct CustomersPage {
    layout: Layout,
    q: ListQuery,
    customers: Vec<Customer>,
    pager: Pager,
}

pub async fn customers(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "customers", "Customers").await?;
    let q = ListQuery::of(&req);
    let filter = CustomerFilter {
        organization_id: vec![layout.org],
        query: q.search(),
        sorting: Sorting::by(CustomerSort::CreatedAt, true),
        ..CustomerFilter::default()
    };
    let params = q.params();
    let (customers, total) = customers::list(&state, dash.subject(), &filter, params).await?;
    let pager = Pager::new(total, params, &layout.at("/customers"), &req);
    dash.page(
        200,
        &CustomersPage {
            customers,
            pager,
            layout,
            q,
        },
    )
}

#[derive(Template)]
#[template(path = "dashboard/customer.html")]
struct CustomerPage {
    layout: Layout,
    customer: Customer,
    orders: Vec<Order>,
    subscriptions: Vec<Subscription>,
    keys: Vec<LicenseKey>,
    /// Where the customer signs in to the portal with a code by e-mail.
    portal: String,
    /// A sign-in link just opened for the customer (shown once), and until when.
    portal_link: Option<(String, String)>,
    /// Its customer meters (live meters).
    meters: Vec<CustomerMeter>,
    /// Its last events, newest first.
    events: Vec<UsageEvent>,
}

/// How many of a customer's events its page shows.
const RECENT_EVENTS: u64 = 20;

pub async fn customer(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    customer_page(&dash, &path.0, &path.1, None).await
}

/// Opens a customer session for the customer (`POST /v1/customer-sessions/`) and shows its
/// portal link on the customer's page, once.
pub async fn portal_link(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let layout = dash.layout(&path.0, "customers", "Customer").await?;
    let id: CustomerId = path_id("id", &path.1)?;
    let customer = customer_for(&state, dash.subject(), id).await?.value;
    of_org(&layout, customer.organization_id, ())?;
    let input = crate::domain::customer_session::NewCustomerSession {
        customer: crate::domain::customer_session::SessionCustomer::Id(id),
        return_url: None,
    };
    let session = crate::app::customer_sessions::create(&state, dash.subject(), input)
        .await
        .map_err(crate::error::ApiError::from)?;
    let until = fmt::date(&session.expires_at);
    customer_page(
        &dash,
        &path.0,
        &path.1,
        Some((session.customer_portal_url, until)),
    )
    .await
}

async fn customer_page(
    dash: &Dash,
    org: &str,
    id: &str,
    portal_link: Option<(String, String)>,
) -> PageResult {
    let state = &dash.state;
    let layout = dash.layout(org, "customers", "Customer").await?;
    let id: CustomerId = path_id("id", id)?;
    let customer = customers::get(state, dash.subject(), id).await?;
    let customer = of_org(&layout, customer.organization_id, customer)?;
    let (orders, _) = orders::list(
        state,
        dash.subject(),
        &OrderFilter {
            organization_id: vec![layout.org],
            customer_id: vec![id],
            ..OrderFilter::default()
        },
        choices(),
    )
    .await
    .map_err(crate::error::ApiError::from)?;
    let (subscriptions, _) = subscription::list(
        state,
        dash.subject(),
        &SubscriptionFilter {
            organization_id: vec![layout.org],
            customer_id: vec![id],
            ..SubscriptionFilter::default()
        },
        choices(),
    )
    .await
    .map_err(crate::error::ApiError::from)?;
    let (keys, _) = customer_key_records(state, id, &[layout.org], None, None, choices())
        .await
        .map_err(crate::error::ApiError::from)?;
    let slug = crate::app::portal::organization(state, &customer)
        .await
        .map_err(crate::error::ApiError::from)?
        .slug;
    let portal = crate::app::portal::sign_in::sign_in_url(state, &slug);
    let meters = customer_meters::for_customer(state, &customer, false)
        .await
        .map_err(crate::error::ApiError::from)?;
    let (events, _) = ingest::list(
        state,
        dash.subject(),
        &EventFilter {
            organization_ids: vec![layout.org.uuid()],
            customer_ids: vec![id.uuid()],
            ..EventFilter::default()
        },
        crate::app::paging::ListParams {
            page: 1,
            limit: RECENT_EVENTS,
        },
    )
    .await
    .map_err(crate::error::ApiError::from)?;
    dash.page(
        200,
        &CustomerPage {
            layout: Layout {
                title: customer.email.clone(),
                ..layout
            },
            customer,
            orders,
            subscriptions,
            keys,
            portal,
            portal_link,
            meters,
            events,
        },
    )
}
