//! Invoices and credit notes (issue 48): the documents an order and its refunds are billed
//! with. The records are `crate::domain::invoice` (an immutable snapshot of everything
//! printed, numbered from a gapless sequence by `issue`); `document` builds them from the
//! order, `pdf` renders one as a PDF, on demand and the same bytes every time, `link`
//! signs the links to it.
//!
//! The use cases here answer Polar's order routes: the order's billing details
//! ([`update_billing`], until the invoice is issued), asking for the invoice
//! ([`request_invoice`]: due now, issued within a second), the link to it
//! ([`invoice_link`]) and to a refund's credit note ([`credit_note_link`]), and the PDF
//! behind a link ([`pdf`]).

pub mod document;
pub mod issue;
pub mod link;
pub mod pdf;
pub mod views;

pub use issue::{queue, start};

pub use crate::api::invoice::BillingUpdate;
use crate::domain::customer::Customer;
use crate::domain::ids::{OrderId, RefundId};
use crate::domain::invoice::{Invoice, InvoiceId};
use crate::domain::order::{InvoiceState, Order};
use crate::domain::refund::Refund;
use crate::error::{AppError, Code};
use crate::state::AppState;
use tollgate_storage::UpdateError;

/// The name an order is billed to: the one it was sold under, else its customer's.
pub fn billing_name(order: &Order, customer: Option<&Customer>) -> Option<String> {
    order
        .tax
        .billing_name
        .clone()
        .or_else(|| customer.and_then(|c| c.name.clone()))
        .filter(|n| !n.trim().is_empty())
}

fn already_issued(order: OrderId) -> AppError {
    AppError::new(
        Code::InvoiceAlreadyIssued,
        format!(
            "The invoice of order {order} is issued; its billing details can no longer \
             change. Refund the order (a credit note is issued) to correct it."
        ),
    )
}

/// Changes the billing details of `order` (found and reached already): refused once its
/// invoice is issued, and a country or state set before cannot change (Polar's rules).
/// Answers the order as stored after the change.
pub async fn update_billing(
    state: &AppState,
    order: OrderId,
    change: BillingUpdate,
) -> Result<Order, AppError> {
    let now = state.now();
    let updated = state
        .store
        .update::<Order, AppError>(&order.key(), async |o: &Order| {
            decide_billing(o, &change, now)
        })
        .await
        .map_err(|e| match e {
            UpdateError::Rejected(e) => e,
            UpdateError::Storage(e) => e.into(),
        })?;
    updated.ok_or_else(AppError::not_found)
}

/// The order after `change`, or why not (`None`: nothing changes).
pub fn decide_billing(
    o: &Order,
    change: &BillingUpdate,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Option<Order>, AppError> {
    if matches!(o.invoice, InvoiceState::Issued { .. }) {
        return Err(already_issued(o.id));
    }
    let mut next = o.clone();
    if let Some(name) = &change.billing_name {
        next.tax.billing_name = name.clone();
    }
    if let Some(address) = &change.billing_address {
        if let (Some(before), Some(after)) = (&o.billing_address, address) {
            let mut problems = Vec::new();
            if !before.country.eq_ignore_ascii_case(&after.country) {
                problems.push(crate::error::Invalid::new(
                    crate::field!["billing_address", "country"],
                    "Country cannot be changed",
                    after.country.clone(),
                ));
            }
            if before.state != after.state {
                problems.push(crate::error::Invalid::new(
                    crate::field!["billing_address", "state"],
                    "State cannot be changed",
                    after.state.clone().unwrap_or_default(),
                ));
            }
            if !problems.is_empty() {
                return Err(AppError::Invalid(problems));
            }
        }
        next.billing_address = address.clone();
    }
    if next == *o {
        return Ok(None);
    }
    next.modified_at = Some(now);
    Ok(Some(next))
}

/// Asks for the invoice of `order` (found and reached already): 409 for an order not paid,
/// 422 without a billing name and address, else due (issued within a second; nothing
/// changes for an order invoiced already).
pub async fn request_invoice(state: &AppState, order: &Order) -> Result<(), AppError> {
    if !order.status.was_paid() {
        return Err(AppError::new(
            Code::OrderNotEligibleForInvoice,
            format!(
                "Order {} is not eligible for invoice generation (current status: {}).",
                order.id,
                order.status.as_str()
            ),
        ));
    }
    if matches!(order.invoice, InvoiceState::Issued { .. }) {
        return Ok(());
    }
    let customer = state
        .store
        .get::<Customer>(&order.customer_id.key())
        .await?
        .map(|c| c.value);
    if billing_name(order, customer.as_ref()).is_none() || order.billing_address.is_none() {
        return Err(AppError::new(
            Code::MissingInvoiceBillingDetails,
            "Billing name and address are required to generate an invoice for this order.",
        ));
    }
    issue::request(state, order).await
}

/// The link to the invoice of `order` (found and reached already), or 404
/// `InvoiceDoesNotExist` before it is issued.
pub async fn invoice_link(state: &AppState, order: &Order) -> Result<String, AppError> {
    let id = Invoice::id_for_order(order.id);
    if !matches!(order.invoice, InvoiceState::Issued { .. })
        || state.store.get::<Invoice>(&id.key()).await?.is_none()
    {
        return Err(AppError::new(
            Code::InvoiceDoesNotExist,
            format!("No invoice exists for order {}.", order.id),
        ));
    }
    Ok(link::link(state, id))
}

/// The link to the credit note of `refund` (found and reached already), or 404
/// `CreditNoteDoesNotExist` before it is issued (a refund of an order without an invoice
/// has none).
pub async fn credit_note_link(state: &AppState, refund: &Refund) -> Result<String, AppError> {
    let id = Invoice::id_for_refund(refund.id);
    if state.store.get::<Invoice>(&id.key()).await?.is_none() {
        return Err(credit_note_missing(refund.id));
    }
    Ok(link::link(state, id))
}

/// The refund `id` of an organization `subject` reaches, else 404.
pub async fn refund_for(
    state: &AppState,
    subject: crate::auth::Subject,
    id: RefundId,
) -> Result<Refund, AppError> {
    state.store.read_barrier().await?;
    match state.store.get::<Refund>(&id.key()).await? {
        Some(r)
            if crate::app::access::can_access(state, subject, r.value.organization_id).await? =>
        {
            Ok(r.value)
        }
        _ => Err(AppError::not_found()),
    }
}

/// The refund `id` of one of `customer`'s orders, else 404.
pub async fn customer_refund(
    state: &AppState,
    customer: &Customer,
    id: RefundId,
) -> Result<Refund, AppError> {
    state.store.read_barrier().await?;
    match state.store.get::<Refund>(&id.key()).await? {
        Some(r) if r.value.customer_id == customer.id => Ok(r.value),
        _ => Err(AppError::not_found()),
    }
}

fn credit_note_missing(refund: RefundId) -> AppError {
    AppError::new(
        Code::CreditNoteDoesNotExist,
        format!("No credit note exists for refund {refund}."),
    )
}

/// A document's PDF, as a link gives it: the file name and the bytes. 403 for a link this
/// server did not sign, 410 once it expired, 404 for a document that is gone.
pub async fn pdf(
    state: &AppState,
    id: InvoiceId,
    expires: i64,
    signature: &str,
) -> Result<(String, Vec<u8>), AppError> {
    match link::check(state, id, expires, signature) {
        link::Checked::Good => {}
        link::Checked::Forged => {
            return Err(AppError::not_permitted("This link is not valid."));
        }
        link::Checked::Expired => {
            return Err(AppError::new(
                Code::ResourceUnavailable,
                "This link has expired; ask for a new one.",
            ));
        }
    }
    let invoice = state
        .store
        .get::<Invoice>(&id.key())
        .await?
        .ok_or_else(AppError::not_found)?
        .value;
    let bytes = pdf::render(&invoice).map_err(AppError::internal)?;
    Ok((invoice.file_name(), bytes))
}

#[cfg(test)]
#[path = "invoices_tests.rs"]
mod tests;
