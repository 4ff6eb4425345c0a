//! The signed-in buyer's overview, orders and subscriptions (cancel at the period's end,
//! resume; a past-due one is paid now with a saved card, `crate::app::recovery`). Every id
//! goes through `crate::app::portal`: another customer's is a 404 page.

use std::collections::HashMap;

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::view::{self, KeyRow, OrderRow, Status, SubscriptionRow};
use super::{not_found, see_other, Fail, Frame, PageResult, Seller, Signed};
use crate::api::invoice_form::BillingForm;
use crate::api::subscription::CustomerCancellationReason;
use crate::app::orders::OrderFilter;
use crate::app::paging::ListParams;
use crate::app::portal::{self, CancelChange};
use crate::app::subscription::SubscriptionFilter;
use crate::domain::benefit::Benefit;
use crate::domain::ids::{BenefitId, OrderId, SubscriptionId};
use crate::domain::order::Order;
use crate::i18n::I18n;
use crate::state::AppState;

/// Records a page lists (a buyer holds few).
const LISTED: ListParams = ListParams {
    page: 1,
    limit: 100,
};

/// A path id, else 404.
pub fn path_id<T: std::str::FromStr>(s: &str) -> Result<T, Fail> {
    s.trim().parse::<T>().map_err(|_| Fail::from(not_found()))
}

// ---------------------------------------------------------------------------------------
// Overview

#[derive(Template)]
#[template(path = "portal/overview.html")]
struct OverviewPage {
    seller: Seller,
    frame: Frame,
    name: String,
    orders: Vec<OrderRow>,
    subscriptions: Vec<SubscriptionRow>,
    keys: Vec<KeyRow>,
    /// The feature flags the buyer holds (public ones: the portal's benefit grants).
    features: Vec<String>,
    /// The files the buyer's downloadables benefits give now, with fresh links.
    downloads: Vec<view::DownloadRow>,
}

/// The names of benefits, read once each (`fallback` for one that is gone).
pub async fn benefit_names(
    state: &AppState,
    ids: impl Iterator<Item = BenefitId>,
    fallback: &str,
) -> Result<HashMap<BenefitId, String>, Fail> {
    let mut names = HashMap::new();
    for id in ids {
        if names.contains_key(&id) {
            continue;
        }
        let name = state
            .store
            .get::<Benefit>(&id.key())
            .await?
            .map(|b| b.value.description)
            .unwrap_or_else(|| fallback.to_string());
        names.insert(id, name);
    }
    Ok(names)
}

/// `GET /portal/{slug}/overview`.
pub async fn overview(
    state: web::Data<AppState>,
    req: HttpRequest,
    slug: web::Path<String>,
) -> PageResult {
    let s = Signed::of(&state, &req, &slug).await?;
    let r: PageResult = async {
        let c = &s.customer;
        let (orders, _) = portal::orders(&state, c, OrderFilter::default(), LISTED).await?;
        let (subs, _) =
            portal::subscriptions(&state, c, SubscriptionFilter::default(), LISTED).await?;
        let (keys, _) = crate::app::license_keys::customer_key_records(
            &state,
            c.id,
            &[c.organization_id],
            None,
            None,
            LISTED,
        )
        .await
        .map_err(crate::error::ApiError::from)?;
        let names = benefit_names(
            &state,
            keys.iter().map(|k| k.benefit_id),
            &s.portal.seller.i18n.t("portal-license-key"),
        )
        .await?;
        let flags = portal::PortalGrantFilter {
            types: vec![crate::domain::benefit::BenefitType::FeatureFlag],
            ..portal::PortalGrantFilter::default()
        };
        let (grants, _) = portal::grants(&state, c, &flags, &[], LISTED)
            .await
            .map_err(crate::error::ApiError::from)?;
        let mut features: Vec<String> =
            benefit_names(&state, grants.iter().map(|g| g.benefit_id), "")
                .await?
                .into_values()
                .filter(|n| !n.is_empty())
                .collect();
        features.sort();
        let downloads = crate::app::downloadables::of_customer(&state, c, None, None)
            .await?
            .iter()
            .map(|d| view::DownloadRow {
                id: d.id.to_string(),
                name: d.file.name.clone(),
                version: d.file.version.clone().unwrap_or_default(),
                size: crate::api::files::size_readable(d.file.size),
                url: crate::app::downloadables::link(&state, d).0,
            })
            .collect();
        let now = state.now();
        let i18n = &s.portal.seller.i18n;
        let page = OverviewPage {
            seller: s.seller(),
            frame: s.frame(),
            name: c.name.clone().unwrap_or_default(),
            orders: orders.iter().map(|o| OrderRow::new(i18n, o)).collect(),
            subscriptions: subs.iter().map(|x| SubscriptionRow::new(i18n, x)).collect(),
            keys: keys
                .iter()
                .map(|k| KeyRow {
                    id: k.id.to_string(),
                    benefit: names.get(&k.benefit_id).cloned().unwrap_or_default(),
                    display: k.display_key(),
                    status: view::key_status(i18n, k, now),
                })
                .collect(),
            features,
            downloads,
        };
        s.portal.page(200, &page, Vec::new())
    }
    .await;
    s.portal.branded(r)
}

// ---------------------------------------------------------------------------------------
// An order

/// A line of an order or a receipt: what, and how much.
pub struct Line {
    pub label: String,
    pub amount: String,
}

#[derive(Template)]
#[template(path = "portal/order.html")]
pub(super) struct OrderPage {
    seller: Seller,
    frame: Frame,
    id: String,
    product: String,
    date: String,
    invoice_number: String,
    status: Status,
    lines: Vec<Line>,
    subtotal: String,
    discount: Option<String>,
    tax: String,
    total: String,
    refunded: Option<String>,
    subscription_id: Option<String>,
    receipt_url: String,
    /// A fresh signed link to the invoice's PDF, once it is issued.
    invoice_url: Option<String>,
    /// The "Request invoice" form (a paid order whose invoice is not issued yet).
    pub(super) invoice: super::invoice::InvoiceSection,
}

/// The receipt link of an order as a path of this site (the page may be reached at
/// another host than the configured public URL).
fn receipt_path(state: &AppState, order: OrderId) -> String {
    site_path(portal::receipt::link(state, order))
}

/// A link of this server as a path of this site.
fn site_path(link: String) -> String {
    match url::Url::parse(&link) {
        Ok(u) => match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_string(),
        },
        Err(_) => link,
    }
}

/// `GET /portal/{slug}/orders/{id}` (`?done=invoice` after an invoice was requested).
pub async fn order(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let (slug, id) = path.into_inner();
    let s = Signed::of(&state, &req, &slug).await?;
    let r: PageResult = async {
        let id: OrderId = path_id(&id)?;
        let order = portal::order(&state, &s.customer, id).await?;
        let q: Done = serde_html_form::from_str(req.query_string()).unwrap_or_default();
        let mut page = order_page(&state, &s, &order, None).await?;
        if q.done == "invoice" {
            page.invoice.notice = Some(s.portal.seller.i18n.t("portal-invoice-requested"));
        }
        s.portal.page(200, &page, Vec::new())
    }
    .await;
    s.portal.branded(r)
}

/// The page of `order` (the buyer's, found already); `billing` is the invoice form as
/// posted (else as the order's details fill it).
pub(super) async fn order_page(
    state: &AppState,
    s: &Signed,
    order: &Order,
    billing: Option<BillingForm>,
) -> Result<OrderPage, Fail> {
    let v = portal::order_view_of(state, order, &s.portal.org).await?;
    let cur = v.currency.as_str();
    let refunded = v.refunded_amount + v.refunded_tax_amount;
    let i18n = &s.portal.seller.i18n;
    Ok(OrderPage {
        seller: s.seller(),
        frame: s.frame(),
        id: order.id.to_string(),
        product: v.product.name.clone(),
        date: view::date(i18n, &v.created_at),
        invoice_number: v.invoice_number.clone(),
        status: view::order_status(i18n, order.status),
        lines: v
            .items
            .iter()
            .map(|i| Line {
                label: i.label.clone(),
                amount: view::money(i18n, i.amount, cur),
            })
            .collect(),
        subtotal: view::money(i18n, v.subtotal_amount, cur),
        discount: (v.discount_amount != 0).then(|| view::money(i18n, -v.discount_amount, cur)),
        tax: view::money(i18n, v.tax_amount, cur),
        total: view::money(i18n, v.total_amount, cur),
        refunded: (refunded != 0).then(|| view::money(i18n, refunded, cur)),
        subscription_id: order.subscription_id.map(|i| i.to_string()),
        receipt_url: receipt_path(state, order.id),
        invoice_url: crate::app::invoices::views::invoice_if_issued(state, order)
            .await?
            .map(site_path),
        invoice: super::invoice::InvoiceSection::of(order, &s.customer, billing),
    })
}

// ---------------------------------------------------------------------------------------
// A subscription

#[derive(Template)]
#[template(path = "portal/subscription.html")]
struct SubscriptionPage {
    seller: Seller,
    frame: Frame,
    id: String,
    product: String,
    price: String,
    /// The product's metered prices ("$0.005 per unit · API calls").
    metered: Vec<String>,
    status: Status,
    next: String,
    started: String,
    period: String,
    can_cancel: bool,
    can_resume: bool,
    reasons: Vec<(&'static str, String)>,
    /// What was typed, kept when the form fails.
    reason: String,
    comment: String,
    error: Option<String>,
    notice: Option<String>,
    /// A past-due subscription's renewal to pay now.
    due: Option<Due>,
    pay_script: &'static str,
}

/// What a past-due subscription's page says of the declined renewal, and its "Pay now"
/// form.
struct Due {
    failed_on: String,
    access_until: String,
    /// Tax included.
    amount: String,
    /// The buyer's saved cards, one checked (the default, else the newest).
    cards: Vec<DueCard>,
    /// A field for a test token (the test processor's; Stripe's cards are added on the
    /// payment methods page).
    can_add: bool,
    /// Stripe.js and the payment it asks the buyer to authenticate (3-D Secure).
    stripe: Option<DueStripe>,
    /// A payment waits for the buyer or their bank: the page checks how it ended.
    checking: bool,
}

struct DueCard {
    id: String,
    label: String,
    checked: bool,
}

struct DueStripe {
    publishable_key: String,
    js_url: String,
    /// Set when the last charge asks the buyer to authenticate it.
    client_secret: Option<String>,
}

/// Polar's cancellation reasons, in words.
fn reason_label(i18n: &I18n, r: CustomerCancellationReason) -> String {
    i18n.t(match r {
        CustomerCancellationReason::CustomerService => "portal-reason-customer-service",
        CustomerCancellationReason::LowQuality => "portal-reason-low-quality",
        CustomerCancellationReason::MissingFeatures => "portal-reason-missing-features",
        CustomerCancellationReason::SwitchedService => "portal-reason-switched-service",
        CustomerCancellationReason::TooComplex => "portal-reason-too-complex",
        CustomerCancellationReason::TooExpensive => "portal-reason-too-expensive",
        CustomerCancellationReason::Unused => "portal-reason-unused",
        CustomerCancellationReason::Other => "portal-reason-other",
    })
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Done {
    done: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PayForm {
    action: String,
    method_id: String,
    token: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SubscriptionForm {
    action: String,
    reason: String,
    comment: String,
}

async fn subscription_page(
    state: &AppState,
    s: &Signed,
    id: SubscriptionId,
) -> Result<SubscriptionPage, Fail> {
    let sub = portal::subscription(state, &s.customer, id).await?;
    let active = sub.ended_at.is_none() && sub.status.is_active();
    let i18n = &s.portal.seller.i18n;
    let period = match (&sub.current_period_end, sub.ended_at) {
        (Some(end), None) => format!(
            "{} – {}",
            view::date(i18n, &sub.current_period_start),
            view::date(i18n, end)
        ),
        _ => String::new(),
    };
    Ok(SubscriptionPage {
        seller: s.seller(),
        frame: s.frame(),
        id: sub.id.to_string(),
        product: sub.product_name.clone(),
        price: view::subscription_price(i18n, &sub),
        metered: metered_prices(state, i18n, &sub).await?,
        status: view::subscription_status(i18n, &sub),
        next: view::subscription_next(i18n, &sub),
        started: sub
            .started_at
            .as_ref()
            .map(|t| view::date(i18n, t))
            .unwrap_or_default(),
        period,
        can_cancel: active && !view::canceling(&sub),
        can_resume: sub.ended_at.is_none() && view::canceling(&sub),
        reasons: CustomerCancellationReason::ALL
            .iter()
            .map(|r| (r.as_str(), reason_label(i18n, *r)))
            .collect(),
        reason: String::new(),
        comment: String::new(),
        error: None,
        notice: None,
        due: due(state, s, &sub).await?,
        pay_script: PAY_SCRIPT_PATH,
    })
}

/// The metered prices of a subscription's product in its currency, as the page lists them.
async fn metered_prices(
    state: &AppState,
    i18n: &I18n,
    sub: &tollgate_actors::subscription::Subscription,
) -> Result<Vec<String>, Fail> {
    let Some(product) = state
        .store
        .get::<crate::domain::product::Product>(&sub.product_id.key())
        .await
        .map_err(crate::error::AppError::from)?
    else {
        return Ok(Vec::new());
    };
    let meters = crate::app::views::product_meters(state, &product.value).await?;
    let currency = sub
        .currency
        .clone()
        .unwrap_or_else(|| crate::domain::currency::Currency::DEFAULT.to_string());
    Ok(crate::web::checkout::labels::metered_labels(
        i18n,
        &product.value,
        &currency,
        &meters,
    ))
}

/// The "Pay now" box of a past-due subscription whose renewal order is pending.
async fn due(
    state: &AppState,
    s: &Signed,
    sub: &tollgate_actors::subscription::Subscription,
) -> Result<Option<Due>, Fail> {
    use tollgate_actors::subscription::{renewal_order_id, SubscriptionStatus, DUNNING_PERIOD};
    if sub.status != SubscriptionStatus::PastDue || sub.ended_at.is_some() {
        return Ok(None);
    }
    let order_id = renewal_order_id(sub.id, sub.cycles.saturating_add(1));
    let Some(order) = state
        .store
        .get::<crate::domain::order::Order>(&order_id.key())
        .await?
        .map(|o| o.value)
        .filter(|o| o.status == crate::domain::order::OrderStatus::Pending)
    else {
        return Ok(None);
    };
    let failed_on = sub.past_due_at.unwrap_or(order.created_at);
    // Access stops when the keys' grace ends, or (no keys) when dunning gives up.
    let dunning_end = sub.current_period_end.map(|end| end + DUNNING_PERIOD);
    let mut keys_until = None;
    for key in &sub.license_key_ids {
        let expires = state
            .store
            .get::<tollgate_actors::license_key::LicenseKey>(&key.key())
            .await?
            .and_then(|k| k.value.expires_at);
        keys_until = keys_until.max(expires);
    }
    let access_until = match (keys_until, dunning_end) {
        (Some(keys), Some(end)) => keys.min(end),
        (Some(until), None) | (None, Some(until)) => until,
        (None, None) => failed_on,
    };
    let (methods, _) = crate::app::payment_methods::list(state, &s.customer, LISTED).await?;
    let default = s
        .customer
        .default_payment_method_id
        .filter(|d| methods.iter().any(|m| m.id == *d))
        .or(methods.first().map(|m| m.id));
    let (can_add, stripe) = match state.processor.client() {
        crate::payments::ProcessorClient::Test => (true, None),
        crate::payments::ProcessorClient::Stripe {
            publishable_key,
            js_url,
            ..
        } => (
            false,
            Some(DueStripe {
                publishable_key,
                js_url,
                client_secret: None,
            }),
        ),
    };
    let i18n = &s.portal.seller.i18n;
    Ok(Some(Due {
        failed_on: view::date(i18n, &failed_on),
        access_until: view::date(i18n, &access_until),
        amount: view::money(i18n, order.amount + order.tax_amount, &order.currency),
        cards: methods
            .iter()
            .map(|m| {
                let row = super::payment_methods::MethodRow::new(i18n, m, default);
                DueCard {
                    id: row.id,
                    label: row.label,
                    checked: row.is_default,
                }
            })
            .collect(),
        can_add,
        stripe,
        checking: false,
    }))
}

/// A subscription page answered with the Stripe sources its "Pay now" box needs (Stripe.js,
/// its frames and calls), or the portal's own policy.
fn with_sources(
    state: &AppState,
    page: &SubscriptionPage,
    response: actix_web::HttpResponse,
) -> actix_web::HttpResponse {
    if page.due.as_ref().is_some_and(|d| d.stripe.is_some()) {
        super::with_stripe_sources(state, response)
    } else {
        response
    }
}

/// `GET /portal/{slug}/subscriptions/{id}`.
pub async fn subscription(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let (slug, id) = path.into_inner();
    let s = Signed::of(&state, &req, &slug).await?;
    let r: PageResult = async {
        let id: SubscriptionId = path_id(&id)?;
        let mut page = subscription_page(&state, &s, id).await?;
        let q: Done = serde_html_form::from_str(req.query_string()).unwrap_or_default();
        let i18n = &s.portal.seller.i18n;
        page.notice = match q.done.as_str() {
            "canceled" => Some(i18n.t("portal-subscription-canceled")),
            "resumed" => Some(i18n.t("portal-subscription-resumed")),
            "paid" => Some(i18n.t("portal-payment-received")),
            _ => None,
        };
        let response = s.portal.page(200, &page, Vec::new())?;
        Ok(with_sources(&state, &page, response))
    }
    .await;
    s.portal.branded(r)
}

/// Comments longer than this are cut (Polar keeps free text short too).
const COMMENT_MAX: usize = 2000;

/// `POST /portal/{slug}/subscriptions/{id}`: `action=cancel` (with `reason`, `comment`)
/// or `action=resume`.
pub async fn subscription_change(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> PageResult {
    let (slug, id) = path.into_inner();
    let s = Signed::posted(&state, &req, &slug, &body).await?;
    let r: PageResult = async {
        let id: SubscriptionId = path_id(&id)?;
        let f: SubscriptionForm = serde_html_form::from_bytes(&body).unwrap_or_default();
        let comment: String = f.comment.trim().chars().take(COMMENT_MAX).collect();
        let reason = match f.reason.trim() {
            "" => Ok(None),
            r => CustomerCancellationReason::parse(r).map(Some).ok_or(()),
        };
        let (change, done) = match (f.action.as_str(), reason) {
            ("cancel", Ok(reason)) => (
                CancelChange {
                    cancel_at_period_end: Some(true),
                    reason,
                    comment: Some(comment.clone()),
                },
                "canceled",
            ),
            ("resume", _) => (
                CancelChange {
                    cancel_at_period_end: Some(false),
                    ..CancelChange::default()
                },
                "resumed",
            ),
            (action, reason) => {
                let mut page = subscription_page(&state, &s, id).await?;
                page.error = Some(if action == "cancel" && reason.is_err() {
                    s.portal.seller.i18n.t("portal-choose-reason")
                } else {
                    s.portal.seller.i18n.t("portal-choose-cancel-or-resume")
                });
                page.comment = comment;
                return s.portal.page(422, &page, Vec::new());
            }
        };
        match portal::update_subscription(&state, &s.customer, id, change).await {
            Ok(_) => Ok(see_other(
                &s.portal
                    .seller
                    .at(&format!("/subscriptions/{id}?done={done}")),
                Vec::new(),
            )),
            Err(e) => match e.code().status() {
                status @ (400 | 403 | 409 | 410 | 422) => {
                    let mut page = subscription_page(&state, &s, id).await?;
                    page.error = Some(e.messages().join(" "));
                    page.reason = f.reason.trim().to_string();
                    page.comment = comment;
                    s.portal.page(status, &page, Vec::new())
                }
                _ => Err(e.into()),
            },
        }
    }
    .await;
    s.portal.branded(r)
}

/// `POST /portal/{slug}/subscriptions/{id}/pay`: pay a past-due subscription's renewal now
/// (`action=pay`) with a saved card (`method_id`) or, with the test processor, a new one
/// (`token`); `action=check` asks how a payment the buyer authenticated (3-D Secure, after
/// Stripe.js's `confirmCardPayment`) ended. Paid: to the page, active again; declined or
/// refused: the page with the reason; waiting for the buyer: the page runs the
/// authentication, then checks.
pub async fn pay(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> PageResult {
    use crate::app::recovery::{self, ConfirmationStatus, PayWith};
    let (slug, id) = path.into_inner();
    let s = Signed::posted(&state, &req, &slug, &body).await?;
    let r: PageResult = async {
        let id: SubscriptionId = path_id(&id)?;
        let sub = portal::subscription(&state, &s.customer, id).await?;
        let order =
            tollgate_actors::subscription::renewal_order_id(sub.id, sub.cycles.saturating_add(1));
        let f: PayForm = serde_html_form::from_bytes(&body).unwrap_or_default();
        let paid = || -> PageResult {
            Ok(see_other(
                &s.portal
                    .seller
                    .at(&format!("/subscriptions/{id}?done=paid")),
                Vec::new(),
            ))
        };
        let again = async |status: u16,
                           error: Option<String>,
                           notice: Option<String>,
                           secret: Option<String>|
               -> PageResult {
            let mut page = subscription_page(&state, &s, id).await?;
            page.error = error;
            if let Some(d) = page.due.as_mut() {
                d.checking = notice.is_some();
                if let Some(stripe) = d.stripe.as_mut() {
                    stripe.client_secret = secret;
                }
            }
            page.notice = notice;
            let response = s.portal.page(status, &page, Vec::new())?;
            Ok(with_sources(&state, &page, response))
        };
        if f.action == "check" {
            let status = recovery::payment_status(&state, &s.customer, order).await?;
            return match status.status {
                "succeeded" => paid(),
                "pending" => {
                    again(
                        202,
                        None,
                        Some(s.portal.seller.i18n.t("portal-bank-confirming")),
                        None,
                    )
                    .await
                }
                _ => {
                    again(
                        400,
                        Some(
                            status
                                .error
                                .unwrap_or_else(|| s.portal.seller.i18n.t("portal-card-declined")),
                        ),
                        None,
                        None,
                    )
                    .await
                }
            };
        }
        let with = match (f.method_id.trim(), f.token.trim()) {
            ("", "") => None,
            ("", token) => Some(PayWith::New(token.to_string())),
            (method, _) => method
                .parse::<crate::domain::ids::PaymentMethodId>()
                .ok()
                .map(PayWith::Saved),
        };
        let Some(with) = with.filter(|_| f.action == "pay") else {
            return again(
                422,
                Some(s.portal.seller.i18n.t("portal-choose-card")),
                None,
                None,
            )
            .await;
        };
        match recovery::pay_now(&state, &s.customer, order, with).await {
            Ok(c) => match c.status {
                ConfirmationStatus::Succeeded => paid(),
                ConfirmationStatus::RequiresAction => {
                    again(
                        202,
                        None,
                        Some(s.portal.seller.i18n.t("portal-bank-asks-confirm")),
                        c.client_secret,
                    )
                    .await
                }
                ConfirmationStatus::Failed => {
                    again(
                        400,
                        Some(
                            c.error
                                .unwrap_or_else(|| s.portal.seller.i18n.t("portal-card-declined")),
                        ),
                        None,
                        None,
                    )
                    .await
                }
            },
            Err(e) => match e.code().status() {
                status @ (400 | 403 | 409 | 422 | 429) => {
                    again(status, Some(e.messages().join(" ")), None, None).await
                }
                _ => Err(e.into()),
            },
        }
    }
    .await;
    s.portal.branded(r)
}

/// The "Pay now" script (Stripe.js's authentication of a payment, then the check).
pub const PAY_SCRIPT_PATH: &str = "/portal/assets/payments.js";
const PAY_SCRIPT: &str = include_str!("../../../templates/portal/payment_methods.js");

/// `GET /portal/assets/payments.js`.
pub async fn pay_script() -> actix_web::HttpResponse {
    actix_web::HttpResponse::Ok()
        .insert_header((actix_web::http::header::CACHE_CONTROL, "no-cache"))
        .insert_header((actix_web::http::header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .content_type("text/javascript; charset=utf-8")
        .body(PAY_SCRIPT)
}
