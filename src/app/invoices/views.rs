//! What the pages show of an order's documents: the links to its invoice and its refunds'
//! credit notes when they exist (`None` before), any other failure the page's.

use super::{credit_note_link, invoice_link};
use crate::domain::order::Order;
use crate::domain::refund::Refund;
use crate::error::{AppError, Code};
use crate::state::AppState;

/// `Ok(None)` for a refusal with `code` (the document does not exist yet).
fn unless(code: Code, r: Result<String, AppError>) -> Result<Option<String>, AppError> {
    match r {
        Ok(url) => Ok(Some(url)),
        Err(e) if e.code() == code => Ok(None),
        Err(e) => Err(e),
    }
}

/// A fresh link to the invoice of `order` (reached already), once it is issued.
pub async fn invoice_if_issued(
    state: &AppState,
    order: &Order,
) -> Result<Option<String>, AppError> {
    unless(Code::InvoiceDoesNotExist, invoice_link(state, order).await)
}

/// A fresh link to the credit note of `refund` (reached already), once it is issued.
pub async fn credit_note_if_issued(
    state: &AppState,
    refund: &Refund,
) -> Result<Option<String>, AppError> {
    unless(
        Code::CreditNoteDoesNotExist,
        credit_note_link(state, refund).await,
    )
}

#[cfg(test)]
#[path = "views_tests.rs"]
mod tests;
