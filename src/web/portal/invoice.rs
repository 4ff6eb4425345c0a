//! The order page's "Request invoice" form (`POST /portal/{slug}/orders/{id}/invoice`): the
//! buyer's billing details for the invoice (saved on the order by the rules of Polar's
//! `PATCH /v1/customer-portal/orders/{id}`), then the invoice asked for
//! (`POST …/orders/{id}/invoice`). Both through `crate::app::invoices`; a refusal (422
//! details, 409 issued or not paid) shows on the page at its status.

use actix_web::{web, HttpRequest, ResponseError};

use super::account::{order_page, path_id};
use super::{see_other, PageResult, Signed};
use crate::api::invoice_form::BillingForm;
use crate::app::{invoices, portal};
use crate::domain::customer::Customer;
use crate::domain::ids::OrderId;
use crate::domain::order::{InvoiceState, Order};
use crate::error::ApiError;
use crate::state::AppState;

/// The invoice part of an order's page.
#[derive(Debug, Clone, Default)]
pub struct InvoiceSection {
    /// The form shows: the order is paid and its invoice is neither issued nor due.
    pub requestable: bool,
    /// Asked for, not issued yet (the issuer numbers it within a second).
    pub due: bool,
    pub billing: BillingForm,
    /// The order has a country (a state): it cannot change (Polar's rule), shown read-only.
    pub country_set: bool,
    pub state_set: bool,
    pub errors: Vec<String>,
    pub notice: Option<String>,
}

impl InvoiceSection {
    /// The section of `order` of `customer`; `posted` is the form as sent (else the order's
    /// details fill it: its billing name and address, else the customer's).
    pub fn of(order: &Order, customer: &Customer, posted: Option<BillingForm>) -> InvoiceSection {
        let address = order.billing_address.as_ref();
        let billing = posted.unwrap_or_else(|| prefilled(order, customer));
        InvoiceSection {
            requestable: order.status.was_paid() && order.invoice == InvoiceState::None,
            due: order.invoice == InvoiceState::Due,
            billing,
            country_set: address.is_some(),
            state_set: address.is_some_and(|a| a.state.is_some()),
            errors: Vec::new(),
            notice: None,
        }
    }
}

/// The form as `order`'s details fill it: its billing name and address, else its
/// customer's.
fn prefilled(order: &Order, customer: &Customer) -> BillingForm {
    BillingForm::of(
        invoices::billing_name(order, Some(customer)).as_deref(),
        order
            .billing_address
            .as_ref()
            .or(customer.billing_address.as_ref()),
    )
}

/// Saves the form's details on `order` unless they are its own, then asks for its invoice.
async fn request_with(
    state: &AppState,
    order: Order,
    form: BillingForm,
    customer: &Customer,
) -> Result<(), ApiError> {
    let order = if form == prefilled(&order, customer)
        || matches!(order.invoice, InvoiceState::Issued { .. })
    {
        order
    } else {
        invoices::update_billing(state, order.id, form.into_command()?).await?
    };
    invoices::request_invoice(state, &order).await?;
    Ok(())
}

/// `POST /portal/{slug}/orders/{id}/invoice`: to the order (`?done=invoice`), or the page
/// again with the refusal.
pub async fn request(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> PageResult {
    let (slug, id) = path.into_inner();
    let s = Signed::posted(&state, &req, &slug, &body).await?;
    let r: PageResult = async {
        let id: OrderId = path_id(&id)?;
        let order = portal::order(&state, &s.customer, id).await?;
        let form: BillingForm = serde_html_form::from_bytes(&body).unwrap_or_default();
        match request_with(&state, order, form.clone(), &s.customer).await {
            Ok(()) => Ok(see_other(
                &s.portal
                    .seller
                    .at(&format!("/orders/{id}?done=invoice#invoice")),
                Vec::new(),
            )),
            Err(e) => {
                let status = e.status_code().as_u16();
                if !matches!(status, 400 | 403 | 409 | 422) {
                    return Err(e.into());
                }
                // The order as it is now (a refusal may follow a saved change).
                let order = portal::order(&state, &s.customer, id).await?;
                let mut page = order_page(&state, &s, &order, Some(form)).await?;
                page.invoice.errors = e.messages();
                s.portal.page(status, &page, Vec::new())
            }
        }
    }
    .await;
    s.portal.branded(r)
}
