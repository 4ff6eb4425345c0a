//! `GET /portal/receipts/{order_id}?expires=…&signature=…`: an order's printable receipt
//! through the signed link the order page (and `GET /v1/customer-portal/orders/{id}/receipt`)
//! gives. No session: whoever holds the link reads that one receipt until it expires. A
//! link that is not signed for this order, or has expired, is a 404 page.

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::account::{path_id, Line};
use super::view::{self, Status};
use super::{
    not_found, page_lang, render, respond, script_url, Fail, Failure, Frame, PageResult, Seller,
};
use crate::app::portal::receipt as signed;
use crate::domain::ids::OrderId;
use crate::domain::order::Order;
use crate::domain::organization::Organization;
use crate::state::AppState;

#[derive(Template)]
#[template(path = "portal/receipt.html")]
struct ReceiptPage {
    seller: Seller,
    frame: Frame,
    invoice_number: String,
    date: String,
    status: Status,
    buyer_name: String,
    buyer_email: String,
    /// The billing address, one line each.
    address: Vec<String>,
    lines: Vec<Line>,
    subtotal: String,
    discount: Option<String>,
    net: String,
    tax: String,
    total: String,
    refunded: Option<String>,
    order_id: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Signature {
    expires: String,
    signature: String,
}

/// A link that does not verify: a page in the browser's language (no seller read yet).
fn expired_link(req: &HttpRequest) -> Fail {
    let seller = Seller::anonymous_in(page_lang(req, None));
    Failure::Page {
        status: 404,
        title: seller.i18n.t("portal-receipt-expired-title"),
        message: seller.i18n.t("portal-receipt-expired"),
        seller: Some(seller),
    }
    .into()
}

/// `GET /portal/receipts/{order_id}`.
pub async fn receipt(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
) -> PageResult {
    let q: Signature = serde_html_form::from_str(req.query_string()).unwrap_or_default();
    let id: OrderId = path_id(&id).map_err(|_| expired_link(&req))?;
    let expires: i64 = q.expires.trim().parse().map_err(|_| expired_link(&req))?;
    if !signed::verify(&state, id, expires, &q.signature) {
        return Err(expired_link(&req));
    }
    let order = state
        .store
        .get::<Order>(&id.key())
        .await?
        .map(|o| o.value)
        .ok_or_else(|| Fail::from(not_found()))?;
    let org = state
        .store
        .get::<Organization>(&order.organization_id.key())
        .await?
        .map(|o| o.value)
        .filter(Organization::is_visible)
        .ok_or_else(|| Fail::from(not_found()))?;
    let seller = Seller::of(&org, page_lang(&req, Some(&org.default_locale)));
    let i18n = &seller.i18n;
    let v = crate::app::views::order_view(&state, &order)
        .await
        .map_err(|e| Fail::from(crate::error::ApiError::from(e)).with_seller(&seller))?;
    let cur = v.currency.as_str();
    let refunded = v.refunded_amount + v.refunded_tax_amount;
    let address = v
        .billing_address
        .as_ref()
        .map(|a| {
            let city = [a.postal_code.as_deref(), a.city.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            [
                a.line1.clone(),
                a.line2.clone(),
                Some(city).filter(|c| !c.is_empty()),
                a.state.clone(),
                Some(a.country.clone()),
            ]
            .into_iter()
            .flatten()
            .filter(|l| !l.trim().is_empty())
            .collect()
        })
        .unwrap_or_default();
    let page = ReceiptPage {
        frame: Frame {
            csrf: String::new(),
            email: None,
            script: script_url(),
        },
        invoice_number: v.invoice_number.clone(),
        date: view::date(i18n, &v.created_at),
        status: view::order_status(i18n, order.status),
        buyer_name: v
            .billing_name
            .clone()
            .or_else(|| v.customer.name.clone())
            .unwrap_or_default(),
        buyer_email: v.customer.email.clone(),
        address,
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
        net: view::money(i18n, v.net_amount, cur),
        tax: view::money(i18n, v.tax_amount, cur),
        total: view::money(i18n, v.total_amount, cur),
        refunded: (refunded != 0).then(|| view::money(i18n, refunded, cur)),
        order_id: order.id.to_string(),
        seller,
    };
    // The URL is the secret: no referrer at all (the page has no form).
    Ok(respond(200, render(&page)?, Vec::new(), "no-referrer"))
}
