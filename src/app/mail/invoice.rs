//! The documents told by e-mail (issue 48).
//!
//! An organization that invoices on payment (`TaxSettings::invoices_on_payment`) has an
//! invoice issued for each paid order within about a second (the issuer writes the
//! `Invoice` and the order's `Issued` state in one batch). Its buyers' receipts wait for
//! it: the receipt of a paid order (a purchase, a subscription's first payment, a renewal)
//! is decided when the order's invoice is created (its feed entry, with no `before`), not
//! when the order is paid, and carries the invoice's number and its PDF. It keeps the id
//! of the receipt it replaces (derived from the order), so a receipt already told (by an
//! older build, or before the organization turned invoicing on) is never told twice. Every
//! other organization's receipts go when the order is paid, as before; an invoice asked for
//! later (`on_request`) is not mailed (the dashboard's "send the receipt again" sends the
//! receipt with it). The seller's copy of an order goes when it is paid, either way.
//!
//! A credit note, when it is issued, is mailed to the buyer with the amounts it gives
//! back and the note attached, whichever the timing; the refund's own message stays as it
//! is.

use askama::Template;
use tollgate_actors::ids::derived_uuid;

use super::render::{Brand, Rendered};
use super::{brand, message, order_messages, receipt_with, recipient};
use crate::domain::invoice::{Invoice, InvoiceKind};
use crate::domain::mail::{Attachment, MailKind, MailMessage};
use crate::domain::order::Order;
use crate::error::AppError;
use crate::state::AppState;
use tollgate_actors::tax::TaxBehavior;

/// An order written: when it has just been paid (created paid, or a pending order paid
/// since `before`), the seller's copy and, unless its organization invoices on payment
/// (the receipt then waits for the invoice), the buyer's receipt.
pub async fn order_paid_messages(
    state: &AppState,
    before: Option<&Order>,
    order: &Order,
) -> Result<Vec<MailMessage>, AppError> {
    if !order.status.was_paid() || before.is_some_and(|b| b.status.was_paid()) {
        return Ok(Vec::new());
    }
    let (_, org) = brand(state, order.organization_id).await?;
    order_messages(state, order, !org.tax.invoices_on_payment()).await
}

/// A document issued: an order's invoice is the receipt with it attached (organizations
/// that invoice on payment only); a credit note is its own message.
pub async fn invoice_messages(
    state: &AppState,
    invoice: &Invoice,
) -> Result<Vec<MailMessage>, AppError> {
    let Some(order) = state
        .store
        .get::<Order>(&invoice.order_id.key())
        .await?
        .map(|o| o.value)
        .filter(|o| o.organization_id == invoice.organization_id && o.status.was_paid())
    else {
        return Ok(Vec::new());
    };
    let (customer, to) = recipient(state, order.customer_id, &order.customer_email).await?;
    match &invoice.kind {
        InvoiceKind::Invoice => {
            let (_, org) = brand(state, invoice.organization_id).await?;
            if !org.tax.invoices_on_payment() {
                return Ok(Vec::new());
            }
            let m = receipt_with(state, &order, &to, customer.as_ref(), Some(invoice)).await?;
            Ok(vec![m])
        }
        InvoiceKind::CreditNote { invoice_number, .. } => Ok(vec![
            credit_note(state, invoice, invoice_number, &order, &to).await?,
        ]),
    }
}

/// The message of a credit note, to `to`.
async fn credit_note(
    state: &AppState,
    note: &Invoice,
    invoice_number: &str,
    order: &Order,
    to: &str,
) -> Result<MailMessage, AppError> {
    let (brand, _) = brand(state, note.organization_id).await?;
    let (_, org) = super::brand(state, note.organization_id).await?;
    let i18n = super::lang_of(state, order.checkout_id, &org).await;
    let rendered = CreditNoteMail::of(i18n, brand.clone(), note, invoice_number, order).render()?;
    let mut m = message(
        derived_uuid(note.id.0, "mail:credit_note"),
        &brand,
        MailKind::CreditNote,
        to,
        rendered,
        state.now(),
    );
    m.organization_id = note.organization_id;
    m.order_id = Some(order.id);
    m.subscription_id = order.subscription_id;
    m.customer_id = Some(order.customer_id);
    m.attachments = vec![Attachment::Invoice(note.id)];
    Ok(m)
}

/// One line of amounts: a label and its value.
pub struct Amount {
    pub label: String,
    pub value: String,
}

/// A credit note as the buyer reads it: what it corrects, what it gives back (as positive
/// amounts: the document's are negative), and the attached file.
pub struct CreditNoteMail {
    /// The language it is written in.
    pub i18n: crate::i18n::I18n,
    pub brand: Brand,
    pub number: String,
    pub invoice_number: String,
    pub product_name: String,
    /// The date of issue (`November 26, 2026`).
    pub date: String,
    /// The document's lines: description and amount given back, before tax.
    pub lines: Vec<Amount>,
    /// Net, the tax per rate, and the total given back (the last one).
    pub totals: Vec<Amount>,
    /// What the document prints under its totals (the reverse-charge mention, …).
    pub mentions: Vec<String>,
    pub file: String,
    pub order_ref: String,
}

impl CreditNoteMail {
    pub fn of(
        i18n: crate::i18n::I18n,
        brand: Brand,
        note: &Invoice,
        invoice_number: &str,
        order: &Order,
    ) -> Self {
        let m = |amount: i64| i18n.money(amount.abs(), &note.currency);
        let mut totals = vec![Amount {
            label: i18n.t("refunded-excluding-tax"),
            value: m(note.net),
        }];
        for b in &note.tax_breakdown {
            let label =
                tollgate_actors::tax::label(std::slice::from_ref(b), TaxBehavior::Exclusive)
                    .unwrap_or_else(|| b.name.clone());
            totals.push(Amount {
                label,
                value: m(b.amount),
            });
        }
        totals.push(Amount {
            label: i18n.t("total-refunded"),
            value: m(note.total),
        });
        Self {
            i18n,
            brand,
            number: note.number.clone(),
            invoice_number: invoice_number.to_string(),
            product_name: order.product_name.clone(),
            date: i18n.date(note.issued_at.date_naive()),
            lines: note
                .lines
                .iter()
                .map(|l| Amount {
                    label: if l.quantity > 1 {
                        format!("{} × {}", l.quantity, l.description)
                    } else {
                        l.description.clone()
                    },
                    value: m(l.amount),
                })
                .collect(),
            totals,
            mentions: note.mentions.clone(),
            file: super::attachment_name(note),
            order_ref: order.id.to_string(),
        }
    }

    pub fn subject(&self) -> String {
        self.i18n.t2(
            "credit-note-subject",
            "number",
            &self.number,
            "invoice",
            &self.invoice_number,
        )
    }

    /// What the note does: its number, the invoice it corrects, the amount given back.
    pub fn text(&self) -> String {
        self.i18n.ta(
            "credit-note-text",
            &[
                ("number", &self.number),
                ("invoice", &self.invoice_number),
                ("product", &self.product_name),
                ("date", &self.date),
                ("amount", &self.total()),
            ],
        )
    }

    /// What the total given back reads (the last of the totals).
    pub fn total(&self) -> String {
        self.totals
            .last()
            .map(|t| t.value.clone())
            .unwrap_or_default()
    }

    pub fn render(&self) -> Result<Rendered, AppError> {
        let err = |e: askama::Error| AppError::internal(format!("rendering an e-mail: {e}"));
        Ok(Rendered {
            subject: self.subject(),
            text: CreditNoteText { c: self }.render().map_err(err)?,
            html: CreditNoteHtml { c: self }.render().map_err(err)?,
        })
    }
}

#[derive(Template)]
#[template(path = "mail/credit_note.txt")]
struct CreditNoteText<'a> {
    c: &'a CreditNoteMail,
}

#[derive(Template)]
#[template(path = "mail/credit_note.html")]
struct CreditNoteHtml<'a> {
    c: &'a CreditNoteMail,
}

#[cfg(test)]
#[path = "invoice_tests.rs"]
pub(crate) mod tests;
