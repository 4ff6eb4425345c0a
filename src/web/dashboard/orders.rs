//! Who bought what: orders, and subscriptions (cancel at the period end, resume, revoke).

use std::collections::HashMap;

use actix_web::{web, HttpRequest, ResponseError};
use askama::Template;

use super::products::org_products;
use super::{
    fmt, form_problem, of_org, posted, see_other, Dash, Fail, Layout, ListQuery, PageResult, Pager,
};
use crate::api::invoice_form::BillingForm;
use crate::app::catalog::products::product_for;
use crate::app::invoices;
use crate::app::orders::{self, order_for, OrderFilter};
use crate::app::subscription::{self, SubscriptionFilter};
use crate::app::tax_id_checks;
use crate::domain::customer::{Customer, TaxIdFormat};
use crate::domain::ids::RefundId;
use crate::domain::ids::{CustomerId, OrderId, ProductId, SubscriptionId};
use crate::domain::mail::MailMessage;
use crate::domain::order::{InvoiceState, Order, OrderSort};
use crate::domain::product::{PriceKind, Product};
use crate::domain::refund::Refund;
use crate::domain::tax_breakdown::{TaxIdStatus, TaxabilityReason};
use crate::egress::tax_ids::TaxIdRegister;
use crate::extract::{path_id, Sorting};
use crate::state::AppState;
use crate::web::dashboard::forms::{self, RefundForm, SubscriptionActionForm};
use tollgate_actors::domain::money::Money;
use tollgate_actors::subscription::{Subscription, SubscriptionSort};

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
fn offered<'a>(q: &ListQuery, offered: &'a [(&'a str, &'a str)]) -> &'a str {
    offered
        .iter()
        .find(|(s, _)| *s == q.sorting)
        .map_or(offered[0].0, |(s, _)| s)
}

/// `?product_id=` / `?customer_id=` as ids (anything else filters to nothing we have).
fn ids<T: std::str::FromStr>(v: &str) -> Result<Vec<T>, Fail> {
    match v.trim() {
        "" => Ok(Vec::new()),
        v => Ok(vec![v
            .parse::<T>()
            .map_err(|_| Fail::Api(crate::error::ApiError::not_found()))?]),
    }
}

#[derive(Template)]
#[template(path = "dashboard/orders.html")]
struct OrdersPage {
    layout: Layout,
    q: ListQuery,
    orders: Vec<Order>,
    products: Vec<Product>,
    pager: Pager,
}

impl OrdersPage {
    fn sorts(&self) -> &'static [(&'static str, &'static str)] {
        ORDER_SORTS
    }
}

pub async fn orders(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "orders", "Orders").await?;
    let q = ListQuery::of(&req);
    let filter = OrderFilter {
        organization_id: vec![layout.org],
        product_id: ids::<ProductId>(&q.product_id)?,
        customer_id: ids::<CustomerId>(&q.customer_id)?,
        query: q.search(),
        sorting: Sorting::<OrderSort>::named(offered(&q, ORDER_SORTS))
            .unwrap_or_else(|| Sorting::by(OrderSort::CreatedAt, true)),
        ..OrderFilter::default()
    };
    let params = q.params();
    let (orders, total) = orders::list(&state, dash.subject(), &filter, params)
        .await
        .map_err(crate::error::ApiError::from)?;
    let pager = Pager::new(total, params, &layout.at("/orders"), &req);
    let products = org_products(&dash, &layout, false).await?;
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

#[derive(Template)]
#[template(path = "dashboard/order.html")]
struct OrderPage {
    layout: Layout,
    order: Order,
    customer: Customer,
    /// The price paid (`None` if its product is gone).
    price: Option<PriceKind>,
    /// The e-mails about this order, newest first, with their attempts.
    messages: Vec<MailMessage>,
    /// Whether the receipt was just queued again.
    resent: bool,
    /// The order's refunds, newest first.
    refunds: Vec<Refund>,
    /// The refund form as posted (its problems in `errors`).
    refund_form: RefundForm,
    errors: Vec<String>,
    /// The invoice's number once issued, with a fresh signed link to its PDF.
    invoice: Option<(String, String)>,
    /// The credit notes of the refunds that have one: a fresh signed link each.
    credit_notes: HashMap<RefundId, String>,
    /// The billing-details form as shown (the order's, or as posted).
    billing: BillingForm,
    /// The refusal of the invoice's section ("Generate invoice", the billing details).
    invoice_errors: Vec<String>,
    /// The buyer's tax number and how far its register confirmed it.
    tax_number: Option<TaxNumber>,
}

/// A business buyer's tax number as the order page shows it.
struct TaxNumber {
    number: String,
    /// "unverified, will be re-checked", "confirmed by VIES", …
    status: String,
    /// The register says the number is not registered, and the sale was reverse-charged:
    /// the page flags it.
    flagged: bool,
}

impl TaxNumber {
    fn of(state: &AppState, order: &Order) -> Option<TaxNumber> {
        let id = order.tax.tax_id.as_ref()?;
        // A confirmation comes from the number's register: HMRC's for GB, VIES's for the EU.
        let by = match state.tax_ids.register_for(id) {
            Some(TaxIdRegister::Hmrc) => "HMRC",
            Some(TaxIdRegister::Vies) => "VIES",
            None if id.format == TaxIdFormat::GbVat => "HMRC",
            None => "VIES",
        };
        let reverse_charged = order
            .tax
            .breakdown
            .iter()
            .any(|b| b.reason == TaxabilityReason::ReverseCharge);
        let rechecked = tax_id_checks::to_recheck(&*state.tax_ids, order)
            && !tax_id_checks::too_old(order, state.now());
        let (status, flagged) = match order.tax.tax_id_status.unwrap_or_default() {
            TaxIdStatus::Valid => (format!("confirmed by {by}"), false),
            TaxIdStatus::Invalid if reverse_charged => ("not registered".to_string(), true),
            TaxIdStatus::Invalid => ("not registered: taxed as a consumer".to_string(), false),
            TaxIdStatus::Unverified if rechecked => {
                ("unverified, will be re-checked".to_string(), false)
            }
            TaxIdStatus::Unverified => ("unverified".to_string(), false),
        };
        Some(TaxNumber {
            number: id.value.clone(),
            status,
            flagged,
        })
    }
}

impl OrderPage {
    fn issued(&self) -> bool {
        matches!(self.order.invoice, InvoiceState::Issued { .. })
    }

    fn invoice_due(&self) -> bool {
        self.order.invoice == InvoiceState::Due
    }

    fn credit_note(&self, refund: &Refund) -> Option<&str> {
        self.credit_notes.get(&refund.id).map(String::as_str)
    }

    /// The country of the order's billing address (read-only once set: Polar's rule).
    fn country_set(&self) -> bool {
        self.order.billing_address.is_some()
    }

    /// The state of the order's billing address, when it has one (it cannot change).
    fn state_set(&self) -> bool {
        self.order
            .billing_address
            .as_ref()
            .is_some_and(|a| a.state.is_some())
    }

    /// What is left to refund, tax included, as a number input shows it.
    fn refundable(&self) -> String {
        Money::new(self.order.refundable_amount(), &self.order.currency).major()
    }

    fn reasons(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("customer_request", "The customer asked"),
            ("duplicate", "Duplicate purchase"),
            ("fraudulent", "Fraudulent"),
            ("service_disruption", "Service disruption"),
            ("satisfaction_guarantee", "Satisfaction guarantee"),
            ("other", "Other"),
        ]
    }

    fn revoke_ticked(&self) -> bool {
        self.refund_form.revoke_benefits.is_some()
    }
}

pub async fn order(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "orders", "Order").await?;
    let order = order_of(&dash, &layout, &path.1).await?;
    let resent = req.query_string().contains("resent=1");
    order_page(&dash, layout, order, resent, Sections::default()).await
}

/// Refunds the order from its page: back to it when done, or the page again with the
/// API's problems (422, 403 refunded already, 400 …).
pub async fn refund(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: RefundForm = posted(&bytes)?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "orders", "Order").await?;
    let order = order_of(&dash, &layout, &id).await?;
    match forms::refund_order(&state, dash.subject(), &order, &form).await {
        Ok(_) => Ok(see_other(&layout.at(&format!("/orders/{id}#refunds")))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let sections = Sections {
                refund_form: form,
                errors,
                ..Sections::default()
            };
            let page = order_page(&dash, layout, order, false, sections).await?;
            Ok(with_status(page, status))
        }
    }
}

/// "Generate invoice": the invoice is asked for (issued within a second), back to the
/// order; the page again with the refusal (409 not paid, 422 billing details missing).
pub async fn generate_invoice(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "orders", "Order").await?;
    let order = order_of(&dash, &layout, &id).await?;
    match invoices::request_invoice(&state, &order).await {
        Ok(()) => Ok(see_other(&layout.at(&format!("/orders/{id}#invoice")))),
        Err(e) => invoice_refused(&dash, layout, order, None, e).await,
    }
}

/// The billing-details form: saved through the API's rules, back to the order; the page
/// again with the refusal (422 invalid, 409 once the invoice is issued).
pub async fn update_billing(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: BillingForm = posted(&bytes)?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "orders", "Order").await?;
    let order = order_of(&dash, &layout, &id).await?;
    let saved = match form.clone().into_command() {
        Ok(change) => invoices::update_billing(&state, order.id, change)
            .await
            .map_err(crate::error::ApiError::from),
        Err(e) => Err(e),
    };
    match saved {
        Ok(_) => Ok(see_other(&layout.at(&format!("/orders/{id}#invoice")))),
        Err(e) => invoice_refused(&dash, layout, order, Some(form), e).await,
    }
}

/// The order's page with a refusal of its invoice section, at the refusal's status; any
/// other failure is the page's.
async fn invoice_refused(
    dash: &Dash,
    layout: Layout,
    order: Order,
    billing: Option<BillingForm>,
    e: impl Into<crate::error::ApiError>,
) -> PageResult {
    let e: crate::error::ApiError = e.into();
    let status = e.status_code().as_u16();
    if !matches!(status, 400 | 403 | 409 | 422) {
        return Err(Fail::Api(e));
    }
    let sections = Sections {
        billing,
        invoice_errors: e.messages(),
        ..Sections::default()
    };
    let page = order_page(dash, layout, order, false, sections).await?;
    Ok(with_status(page, status))
}

/// What a posted form leaves on the order's page.
#[derive(Default)]
struct Sections {
    refund_form: RefundForm,
    errors: Vec<String>,
    /// The billing form as posted (`None`: the order's).
    billing: Option<BillingForm>,
    invoice_errors: Vec<String>,
}

fn with_status(mut page: actix_web::HttpResponse, status: u16) -> actix_web::HttpResponse {
    if let Ok(s) = actix_web::http::StatusCode::from_u16(status) {
        *page.status_mut() = s;
    }
    page
}

/// An order of the page's organization (else 404).
async fn order_of(dash: &Dash, layout: &Layout, id: &str) -> Result<Order, Fail> {
    let id: OrderId = path_id("id", id)?;
    let order = order_for(&dash.state, dash.subject(), id)
        .await
        .map_err(crate::error::ApiError::from)?;
    of_org(layout, order.organization_id, order)
}

/// "Send the receipt again": a new message with the receipt as the order stands now.
pub async fn send_receipt(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "orders", "Order").await?;
    let order = order_of(&dash, &layout, &id).await?;
    crate::app::mail::send_receipt_again(&state, &order).await?;
    Ok(see_other(&layout.at(&format!("/orders/{id}?resent=1"))))
}

async fn order_page(
    dash: &Dash,
    layout: Layout,
    order: Order,
    resent: bool,
    sections: Sections,
) -> PageResult {
    let state = &dash.state;
    let customer = state
        .store
        .get::<Customer>(&order.customer_id.key())
        .await?
        .map(|c| c.value)
        .ok_or_else(|| {
            Fail::Api(crate::error::ApiError::internal(
                "an order's customer is missing",
            ))
        })?;
    let messages = crate::app::mail::messages_of_order(state, order.id).await?;
    let refunds = crate::app::refunds::refunds_of_order(state, order.id)
        .await
        .map_err(crate::error::ApiError::from)?;
    let price = product_for(state, dash.subject(), order.product_id)
        .await
        .ok()
        .and_then(|p| {
            p.value
                .price(order.product_price_id)
                .map(|p| p.kind.clone())
        });
    let invoice = match &order.invoice {
        InvoiceState::Issued { number, .. } => invoices::views::invoice_if_issued(state, &order)
            .await?
            .map(|url| (number.clone(), url)),
        _ => None,
    };
    let mut credit_notes = HashMap::new();
    for r in &refunds {
        if let Some(url) = invoices::views::credit_note_if_issued(state, r).await? {
            credit_notes.insert(r.id, url);
        }
    }
    let Sections {
        refund_form,
        errors,
        billing,
        invoice_errors,
    } = sections;
    let billing = billing.unwrap_or_else(|| {
        BillingForm::of(
            order.tax.billing_name.as_deref(),
            order.billing_address.as_ref(),
        )
    });
    let tax_number = TaxNumber::of(state, &order);
    dash.page(
        200,
        &OrderPage {
            layout,
            order,
            customer,
            price,
            messages,
            resent,
            refunds,
            refund_form,
            errors,
            invoice,
            credit_notes,
            billing,
            invoice_errors,
            tax_number,
        },
    )
}

#[derive(Template)]
#[template(path = "dashboard/subscriptions.html")]
struct SubscriptionsPage {
    layout: Layout,
    q: ListQuery,
    subscriptions: Vec<Subscription>,
    products: Vec<Product>,
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
    let q = ListQuery::of(&req);
    let filter = SubscriptionFilter {
        organization_id: vec![layout.org],
        product_id: ids::<ProductId>(&q.product_id)?,
        customer_id: ids::<CustomerId>(&q.customer_id)?,
        active: match q.active.as_str() {
            "yes" => Some(true),
            "no" => Some(false),
            _ => None,
        },
        sorting: Sorting::<SubscriptionSort>::named(offered(&q, SUBSCRIPTION_SORTS))
            .unwrap_or_else(|| Sorting::by(SubscriptionSort::StartedAt, true)),
        ..SubscriptionFilter::default()
    };
    let params = q.params();
    let (subscriptions, total) = subscription::list(&state, dash.subject(), &filter, params)
        .await
        .map_err(crate::error::ApiError::from)?;
    let pager = Pager::new(total, params, &layout.at("/subscriptions"), &req);
    let products = org_products(&dash, &layout, false).await?;
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
    sub: Subscription,
    errors: Vec<String>,
}

/// A subscription of the page's organization (else 404).
async fn subscription_of(dash: &Dash, layout: &Layout, id: &str) -> Result<Subscription, Fail> {
    let id: SubscriptionId = path_id("id", id)?;
    let sub = subscription::get(&dash.state, dash.subject(), id)
        .await
        .map_err(crate::error::ApiError::from)?;
    of_org(layout, sub.organization_id, sub)
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
    let sub = subscription_of(&dash, &layout, &path.1).await?;
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
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: SubscriptionActionForm = posted(&bytes)?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "subscriptions", "Subscription").await?;
    let sub = subscription_of(&dash, &layout, &id).await?;
    match forms::subscription_action(&state, dash.subject(), sub.id, &form).await {
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
