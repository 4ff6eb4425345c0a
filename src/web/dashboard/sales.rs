//! Who bought what: orders, subscriptions (cancel, resume, revoke), customers, and license
//! keys (find, inspect, change, deactivate an activation).

use actix_web::{web, HttpRequest};
use askama::Template;
use serde_json::{json, Value};

use super::{
    body, choices, form_problem, listing, query, record, see_other, Dash, Fail, Form, Layout,
    PageResult, Pager, Row,
};
use crate::api::license_key::{LicenseKeyDeactivate, LicenseKeyUpdate};
use crate::api::subscription::SubscriptionUpdate;
use crate::auth::{Scope, Subject};
use crate::domain::ids::{CustomerId, OrganizationId};
use crate::extract::auth::{
    AuthMethod, CustomerPortalRead, CustomersRead, LicenseKeysRead, LicenseKeysWrite, OrdersRead,
    Principal, ProductsRead, SubscriptionsRead, SubscriptionsWrite,
};
use crate::extract::{path_id, Auth};
use crate::routes::{customer_portal, customers as customers_api, license_keys as keys_api};
use crate::routes::{orders as orders_api, products as products_api, subscriptions as subs_api};
use crate::state::AppState;

async fn product_choices(dash: &Dash, layout: &Layout) -> Result<Vec<Row>, Fail> {
    let auth = dash.auth::<ProductsRead>()?;
    choices(layout, &[], |qs| products_api::list(auth, dash.data(), qs)).await
}

// ---------------------------------------------------------------------------------------
// Orders
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/orders.html")]
struct OrdersPage {
    layout: Layout,
    q: Form,
    orders: Vec<Row>,
    products: Vec<Row>,
    pager: Pager,
}

/// The sort orders a list page offers: (API `sorting`, label).
const ORDER_SORTS: &[(&str, &str)] = &[
    ("-created_at", "Newest first"),
    ("created_at", "Oldest first"),
    ("-amount", "Largest amount"),
    ("amount", "Smallest amount"),
    ("customer", "Customer"),
    ("product", "Product"),
];

const SUBSCRIPTION_SORTS: &[(&str, &str)] = &[
    ("-started_at", "Newest first"),
    ("started_at", "Oldest first"),
    ("-amount", "Largest amount"),
    ("customer", "Customer"),
    ("status", "Status"),
    ("product", "Product"),
];

/// The page's `sorting` if the page offers it, else the first.
fn sorting<'a>(q: &'a Form, offered: &'a [(&'a str, &'a str)]) -> &'a str {
    let asked = q.get("sorting");
    offered
        .iter()
        .find(|(s, _)| *s == asked)
        .map_or(offered[0].0, |(s, _)| s)
}

pub async fn orders(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "orders", "Orders").await?;
    let q = Form::of_query(req.query_string());
    let auth = dash.auth::<OrdersRead>()?;
    let (orders, pager) = listing(
        &layout,
        &q,
        "/orders",
        &[
            ("product_id", q.get("product_id")),
            ("customer_id", q.get("customer_id")),
            ("sorting", sorting(&q, ORDER_SORTS)),
        ],
        |qs| orders_api::list(auth, dash.data(), qs),
    )
    .await?;
    let products = product_choices(&dash, &layout).await?;
    dash.page(
        200,
        &OrdersPage {
            orders,
            products,
            pager,
            layout,
            q,
        },
    )
}

impl OrdersPage {
    fn sorts(&self) -> &'static [(&'static str, &'static str)] {
        ORDER_SORTS
    }
}

#[derive(Template)]
#[template(path = "dashboard/order.html")]
struct OrderPage {
    layout: Layout,
    order: Row,
}

pub async fn order(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "orders", "Order").await?;
    let auth = dash.auth::<OrdersRead>()?;
    let order = record(
        &layout,
        orders_api::get(auth, dash.data(), web::Path::from(path.1.clone())),
    )
    .await?;
    dash.page(200, &OrderPage { layout, order })
}

// ---------------------------------------------------------------------------------------
// Subscriptions
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/subscriptions.html")]
struct SubscriptionsPage {
    layout: Layout,
    q: Form,
    subscriptions: Vec<Row>,
    products: Vec<Row>,
    pager: Pager,
}

impl SubscriptionsPage {
    fn sorts(&self) -> &'static [(&'static str, &'static str)] {
        SUBSCRIPTION_SORTS
    }
}

pub async fn subscriptions(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "subscriptions", "Subscriptions").await?;
    let q = Form::of_query(req.query_string());
    let active = match q.get("active") {
        "yes" => "true",
        "no" => "false",
        _ => "",
    };
    let auth = dash.auth::<SubscriptionsRead>()?;
    let (subscriptions, pager) = listing(
        &layout,
        &q,
        "/subscriptions",
        &[
            ("product_id", q.get("product_id")),
            ("customer_id", q.get("customer_id")),
            ("active", active),
            ("sorting", sorting(&q, SUBSCRIPTION_SORTS)),
        ],
        |qs| subs_api::list(auth, dash.data(), qs),
    )
    .await?;
    let products = product_choices(&dash, &layout).await?;
    dash.page(
        200,
        &SubscriptionsPage {
            subscriptions,
            products,
            pager,
            layout,
            q,
        },
    )
}

#[derive(Template)]
#[template(path = "dashboard/subscription.html")]
struct SubscriptionPage {
    layout: Layout,
    sub: Row,
    errors: Vec<String>,
}

async fn subscription_row(dash: &Dash, layout: &Layout, id: &str) -> Result<Row, Fail> {
    let auth = dash.auth::<SubscriptionsRead>()?;
    record(
        layout,
        subs_api::get(auth, dash.data(), web::Path::from(id.to_string())),
    )
    .await
}

pub async fn subscription(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash
        .layout(&path.0, "subscriptions", "Subscription")
        .await?;
    let sub = subscription_row(&dash, &layout, &path.1).await?;
    dash.page(
        200,
        &SubscriptionPage {
            layout,
            sub,
            errors: Vec::new(),
        },
    )
}

/// `action`: `cancel` (at the period's end), `resume` (undo that) or `revoke` (now).
pub async fn subscription_action(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "subscriptions", "Subscription").await?;
    let sub = subscription_row(&dash, &layout, &id).await?;
    let raw = match form.get("action") {
        "cancel" => json!({ "cancel_at_period_end": true }),
        "resume" => json!({ "cancel_at_period_end": false }),
        "revoke" => json!({ "revoke": true }),
        other => json!({ "cancel_at_period_end": other }),
    };
    let done = async {
        subs_api::update(
            dash.auth::<SubscriptionsWrite>()?,
            dash.data(),
            web::Path::from(sub.s("id")),
            body::<SubscriptionUpdate>(raw)?,
        )
        .await
    }
    .await;
    match done {
        Ok(_) => Ok(see_other(&layout.at(&format!("/subscriptions/{id}")))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            dash.page(
                status,
                &SubscriptionPage {
                    layout,
                    sub,
                    errors,
                },
            )
        }
    }
}

// ---------------------------------------------------------------------------------------
// Customers
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/customers.html")]
struct CustomersPage {
    layout: Layout,
    q: Form,
    customers: Vec<Row>,
    pager: Pager,
}

pub async fn customers(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "customers", "Customers").await?;
    let q = Form::of_query(req.query_string());
    let auth = dash.auth::<CustomersRead>()?;
    let (customers, pager) = listing(
        &layout,
        &q,
        "/customers",
        &[("query", q.get("query").trim()), ("sorting", "-created_at")],
        |qs| customers_api::list(auth, dash.data(), qs),
    )
    .await?;
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
    customer: Row,
    orders: Vec<Row>,
    subscriptions: Vec<Row>,
    keys: Vec<Row>,
}

/// The license keys of a customer of the page's organization, through the customer
/// portal's list as that customer sees it (the same index and rendering).
async fn customer_keys(
    state: &web::Data<AppState>,
    customer: &Row,
    layout: &Layout,
) -> Result<Vec<Row>, Fail> {
    let id: CustomerId = path_id("id", &customer.s("id"))?;
    let principal = Principal {
        subject: Subject::Customer(id),
        scopes: [Scope::CustomerPortalRead].into_iter().collect(),
        method: AuthMethod::None,
    };
    let list = customer_portal::list(
        Auth::<CustomerPortalRead>::on_behalf(principal)?,
        state.clone(),
        query(&[("organization_id", &layout.org_id), ("limit", "100")]),
    )
    .await?
    .into_inner();
    Ok(Row::many(&list.items))
}

pub async fn customer(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "customers", "Customer").await?;
    let auth = dash.auth::<CustomersRead>()?;
    let customer = record(
        &layout,
        customers_api::get(auth, dash.data(), web::Path::from(path.1.clone())),
    )
    .await?;
    let id = customer.s("id");
    let orders = orders_api::list(
        dash.auth::<OrdersRead>()?,
        dash.data(),
        query(&[
            ("organization_id", &layout.org_id),
            ("customer_id", &id),
            ("limit", "100"),
        ]),
    )
    .await?
    .into_inner();
    let subscriptions = subs_api::list(
        dash.auth::<SubscriptionsRead>()?,
        dash.data(),
        query(&[
            ("organization_id", &layout.org_id),
            ("customer_id", &id),
            ("limit", "100"),
        ]),
    )
    .await?
    .into_inner();
    let keys = customer_keys(&state, &customer, &layout).await?;
    dash.page(
        200,
        &CustomerPage {
            layout: Layout {
                title: customer.s("email"),
                ..layout
            },
            customer,
            orders: Row::many(&orders.items),
            subscriptions: Row::many(&subscriptions.items),
            keys,
        },
    )
}

// ---------------------------------------------------------------------------------------
// License keys
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/license_keys.html")]
struct KeysPage {
    layout: Layout,
    q: Form,
    keys: Vec<Row>,
    customers: Vec<Row>,
    searched: bool,
    pager: Pager,
}

/// `?query=`: a whole key goes straight to it; otherwise the customers whose e-mail or
/// name match, with links to their keys. Without a query: every key, newest first.
pub async fn license_keys(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "license-keys", "License keys").await?;
    let q = Form::of_query(req.query_string());
    let mut customers = Vec::new();
    let searched = q.opt("query").is_some();
    if let Some(needle) = q.opt("query") {
        let org: OrganizationId = path_id("org", &layout.org_id)?;
        if let Some(id) = crate::app::license_keys::directory()
            .resolve(&state.store, org, needle)
            .await?
        {
            return Ok(see_other(&layout.at(&format!("/license-keys/{id}"))));
        }
        let found = customers_api::list(
            dash.auth::<CustomersRead>()?,
            dash.data(),
            query(&[
                ("organization_id", &layout.org_id),
                ("query", needle),
                ("limit", "20"),
            ]),
        )
        .await?
        .into_inner();
        customers = Row::many(&found.items);
    }
    let auth = dash.auth::<LicenseKeysRead>()?;
    let (keys, pager) = listing(&layout, &q, "/license-keys", &[], |qs| {
        keys_api::list(auth, dash.data(), qs)
    })
    .await?;
    dash.page(
        200,
        &KeysPage {
            keys: if searched { Vec::new() } else { keys },
            customers,
            searched,
            pager,
            layout,
            q,
        },
    )
}

#[derive(Template)]
#[template(path = "dashboard/license_key.html")]
struct KeyPage {
    layout: Layout,
    key: Row,
    form: Form,
    errors: Vec<String>,
    saved: bool,
}

async fn key_row(dash: &Dash, layout: &Layout, id: &str) -> Result<Row, Fail> {
    let auth = dash.auth::<LicenseKeysRead>()?;
    record(
        layout,
        keys_api::get(auth, dash.data(), web::Path::from(id.to_string())),
    )
    .await
}

fn key_form(k: &Row) -> Form {
    let mut f = Form::default();
    for field in ["status", "usage", "limit_usage", "limit_activations"] {
        f.set(field, k.s(field));
    }
    f.set("expires_at", k.day("expires_at"));
    f
}

pub async fn license_key(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "license-keys", "License key").await?;
    let key = key_row(&dash, &layout, &path.1).await?;
    let saved = Form::of_query(req.query_string()).checked("saved");
    dash.page(
        200,
        &KeyPage {
            form: key_form(&key),
            key,
            layout,
            errors: Vec::new(),
            saved,
        },
    )
}

/// A date input as the end of that day (UTC) for the API, null when blank.
fn expiry_value(form: &Form) -> Value {
    match form.opt("expires_at") {
        None => Value::Null,
        Some(d) => match chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d") {
            Ok(date) => Value::from(format!("{date}T23:59:59Z")),
            Err(_) => Value::from(d),
        },
    }
}

pub async fn license_key_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "license-keys", "License key").await?;
    let key = key_row(&dash, &layout, &id).await?;
    // A quick action (`status` alone: disable, revoke, enable) or the whole form.
    let raw = if form.opt("quick").is_some() {
        json!({ "status": form.get("status") })
    } else {
        let mut raw = json!({
            "status": form.get("status"),
            "usage": form.int("usage"),
            "limit_usage": form.int("limit_usage"),
            "limit_activations": form.int("limit_activations"),
            "expires_at": expiry_value(&form),
        });
        // A blank usage keeps the key's; an expiry left on its day keeps its time.
        if raw["usage"].is_null() {
            raw["usage"] = key.0["usage"].clone();
        }
        if form.get("expires_at") == key.day("expires_at") {
            raw["expires_at"] = key.0["expires_at"].clone();
        }
        raw
    };
    let saved = async {
        keys_api::update(
            dash.auth::<LicenseKeysWrite>()?,
            dash.data(),
            web::Path::from(key.s("id")),
            body::<LicenseKeyUpdate>(raw)?,
        )
        .await
    }
    .await;
    match saved {
        Ok(_) => Ok(see_other(
            &layout.at(&format!("/license-keys/{id}?saved=1")),
        )),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            dash.page(
                status,
                &KeyPage {
                    layout,
                    key,
                    form,
                    errors,
                    saved: false,
                },
            )
        }
    }
}

/// Deactivates one activation of a key of the page's organization, as the key's holder
/// would through `POST /v1/customer-portal/license-keys/deactivate`.
pub async fn deactivate(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let (org, id, activation) = path.into_inner();
    let layout = dash.layout(&org, "license-keys", "License key").await?;
    let key = key_row(&dash, &layout, &id).await?;
    let raw = json!({
        "key": key.s("key"),
        "organization_id": layout.org_id,
        "activation_id": activation,
    });
    let done = async {
        crate::app::license_keys::deactivate(
            &dash.data(),
            body::<LicenseKeyDeactivate>(raw)?.into_inner(),
        )
        .await
    }
    .await;
    match done {
        Ok(_) => Ok(see_other(&layout.at(&format!("/license-keys/{id}")))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            dash.page(
                status,
                &KeyPage {
                    form: key_form(&key),
                    layout,
                    key,
                    errors,
                    saved: false,
                },
            )
        }
    }
}
