//! The issuer: numbers and writes the documents that are due.
//!
//! A document is due when a [`DocumentDue`] entry says so: the fan-out writes one, in the
//! write that consumes the feed entry, for each order of an organization that invoices on
//! payment when it is paid, and for each succeeded refund of an invoiced order
//! ([`queue`]); `POST …/invoice` writes one for an order whose invoice is asked for.
//!
//! **Gapless.** Numbers are drawn only here. One pass takes an organization's due entries
//! (oldest first, at most [`PER_BATCH`]) and writes, in **one** durable batch, the
//! sequences' new last numbers (on the revision read: `Expect::Rev`), every document with
//! its number (absent before), each invoiced order marked `Issued` (on the revision read)
//! and the due entries removed. A number therefore exists exactly when its document does:
//! a crash before the commit leaves neither and the next pass draws the same numbers
//! again; after it, both. Another writer in between (an order refunded meanwhile, another
//! node's issuer on a shared database) makes the commit fail as a conflict and write
//! nothing; the pass reads again and retries, so a failed batch never skips a number. The
//! unique keys (one number per organization, one invoice per order, one credit note per
//! refund) are the second guard. Normally one node issues (the lead lock `invoices`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use actix_web::web;
use tollgate_storage::{Batch, Change, Expect, StorageError, Stored};

use super::document;
use crate::domain::customer::Customer;
use crate::domain::ids::{OrderId, OrganizationId};
use crate::domain::invoice::{DocumentDue, DocumentKind, DocumentSequence, DueDocument, Invoice};
use crate::domain::order::{InvoiceState, Order};
use crate::domain::organization::Organization;
use crate::domain::product::Product;
use crate::domain::refund::{Refund, RefundStatus};
use crate::error::AppError;
use crate::state::AppState;

/// Documents of one organization issued per batch.
pub const PER_BATCH: usize = 64;

/// The documents `change` makes due, queued in `batch` (the fan-out's write that consumes
/// the change); whether the issuer should be woken.
pub async fn queue(
    state: &AppState,
    change: &Change,
    batch: &mut Batch,
) -> Result<bool, StorageError> {
    if change.is::<Order>() {
        let (before, Some(order)) = (change.before::<Order>()?, change.after::<Order>()?) else {
            return Ok(false);
        };
        let newly_paid =
            order.status.was_paid() && !before.as_ref().is_some_and(|b| b.status.was_paid());
        if !newly_paid || order.invoice != InvoiceState::None {
            return Ok(false);
        }
        let Some(org) = state
            .store
            .get::<Organization>(&order.organization_id.key())
            .await?
        else {
            return Ok(false);
        };
        if !org.value.tax.invoices_on_payment() {
            return Ok(false);
        }
        let due = DocumentDue::new(
            order.organization_id,
            DueDocument::Invoice { order_id: order.id },
            order.created_at,
        );
        batch.put(&due, Expect::Any)?;
        return Ok(true);
    }
    if change.is::<Refund>() {
        let (before, Some(refund)) = (change.before::<Refund>()?, change.after::<Refund>()?) else {
            return Ok(false);
        };
        let newly_succeeded = refund.status == RefundStatus::Succeeded
            && !before
                .as_ref()
                .is_some_and(|b| b.status == RefundStatus::Succeeded);
        if !newly_succeeded {
            return Ok(false);
        }
        // An order not invoiced yet gets its refunds' credit notes when it is.
        let invoiced = state
            .store
            .get::<Order>(&refund.order_id.key())
            .await?
            .is_some_and(|o| matches!(o.value.invoice, InvoiceState::Issued { .. }));
        if !invoiced {
            return Ok(false);
        }
        batch.put(&credit_note_due(&refund), Expect::Any)?;
        return Ok(true);
    }
    Ok(false)
}

fn credit_note_due(refund: &Refund) -> DocumentDue {
    DocumentDue::new(
        refund.organization_id,
        DueDocument::CreditNote {
            refund_id: refund.id,
            order_id: refund.order_id,
        },
        refund.modified_at.unwrap_or(refund.created_at),
    )
}

/// Asks for the invoice of `order` (already checked: paid, with billing details): due now,
/// the issuer woken. Nothing changes for an order invoiced already.
pub async fn request(state: &AppState, order: &Order) -> Result<(), AppError> {
    if matches!(order.invoice, InvoiceState::Issued { .. }) {
        return Ok(());
    }
    let due = DocumentDue::new(
        order.organization_id,
        DueDocument::Invoice { order_id: order.id },
        state.now(),
    );
    let mut batch = Batch::new();
    batch.put(&due, Expect::Any)?;
    state.store.commit_durable(&batch).await?;
    state.invoicer.notify_one();
    Ok(())
}

/// Runs the issuer until the process ends. Call once.
pub fn start(state: web::Data<AppState>) {
    actix_web::rt::spawn(async move {
        loop {
            if !state.jobs.lead(&state.store, "invoices").await {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            match pass(&state).await {
                Ok(0) => {
                    // Woken by the fan-out or a request; every second regardless (another
                    // node's request, a retry).
                    let _ = tokio::time::timeout(Duration::from_secs(1), state.invoicer.notified())
                        .await;
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "invoice issuing failed; retrying");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    });
}

/// One pass: every organization with due documents gets one batch. Answers how many due
/// entries it settled (issued, or found settled already).
pub async fn pass(state: &AppState) -> Result<usize, AppError> {
    let due = state.store.scan::<DocumentDue>().await?;
    if due.is_empty() {
        return Ok(0);
    }
    let mut by_org: BTreeMap<OrganizationId, Vec<DocumentDue>> = BTreeMap::new();
    for d in due {
        by_org
            .entry(d.value.organization_id)
            .or_default()
            .push(d.value);
    }
    let mut settled = 0;
    let mut failure = None;
    for (org, mut items) in by_org {
        items.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.0.cmp(&b.id.0)));
        items.truncate(PER_BATCH);
        match issue(state, org, &items).await {
            Ok(n) => settled += n,
            // One organization's conflict does not hold the others back.
            Err(e) => failure = Some(e),
        }
    }
    match failure {
        Some(e) if settled == 0 => Err(e),
        Some(e) => {
            tracing::warn!(error = %e, "an organization's documents wait for the next pass");
            Ok(settled)
        }
        None => Ok(settled),
    }
}

/// A sequence as read: its last number and the revision to write over (`None`: not
/// written yet).
struct Sequence {
    value: DocumentSequence,
    rev: Option<u64>,
    drawn: bool,
}

impl Sequence {
    async fn read(
        state: &AppState,
        org: OrganizationId,
        kind: DocumentKind,
    ) -> Result<Sequence, StorageError> {
        let id = DocumentSequence::id_for(org, kind);
        Ok(
            match state.store.get::<DocumentSequence>(&id.key()).await? {
                Some(Stored { rev, value }) => Sequence {
                    value,
                    rev: Some(rev),
                    drawn: false,
                },
                None => Sequence {
                    value: DocumentSequence::start(org, kind),
                    rev: None,
                    drawn: false,
                },
            },
        )
    }

    fn draw(&mut self) -> u64 {
        self.value.last += 1;
        self.drawn = true;
        self.value.last
    }

    fn write(&self, batch: &mut Batch) -> Result<(), StorageError> {
        if self.drawn {
            let expect = self.rev.map_or(Expect::Absent, Expect::Rev);
            batch.put(&self.value, expect)?;
        }
        Ok(())
    }
}

/// Issues `items` (due entries of `org`, oldest first) in one batch: invoices first, then
/// credit notes (which may correct an invoice of the same batch). Answers how many entries
/// it settled.
async fn issue(
    state: &AppState,
    org_id: OrganizationId,
    items: &[DocumentDue],
) -> Result<usize, AppError> {
    let mut batch = Batch::new();
    let Some(org) = state.store.get::<Organization>(&org_id.key()).await? else {
        // The organization is gone: nothing can be issued in its name.
        for d in items {
            batch.delete::<DocumentDue>(&d.id.key(), Expect::Any);
        }
        state.store.commit_durable(&batch).await?;
        return Ok(items.len());
    };
    let org = org.value;
    let now = state.now();
    let mut invoices = Sequence::read(state, org_id, DocumentKind::Invoice).await?;
    let mut notes = Sequence::read(state, org_id, DocumentKind::CreditNote).await?;
    let queued: HashSet<_> = items.iter().map(|d| d.id).collect();
    let mut issued: HashMap<OrderId, Invoice> = HashMap::new();
    let mut settled = 0;

    for d in items {
        let DueDocument::Invoice { order_id } = d.document else {
            continue;
        };
        settled += 1;
        batch.delete::<DocumentDue>(&d.id.key(), Expect::Any);
        let Some(stored) = state.store.get::<Order>(&order_id.key()).await? else {
            continue;
        };
        let mut order = stored.value;
        if matches!(order.invoice, InvoiceState::Issued { .. }) || !order.status.was_paid() {
            continue;
        }
        let customer = state
            .store
            .get::<Customer>(&order.customer_id.key())
            .await?
            .map(|c| c.value);
        let product = state
            .store
            .get::<Product>(&order.product_id.key())
            .await?
            .map(|p| p.value);
        let price = product
            .as_ref()
            .and_then(|p| p.price(order.product_price_id));
        let seq = invoices.draw();
        let number = document::number(&org, DocumentKind::Invoice, seq);
        let invoice = document::invoice(
            &org,
            &order,
            customer.as_ref(),
            price,
            document::period(&order, product.as_ref()),
            number.clone(),
            seq,
            now,
        );
        batch.put(&invoice, Expect::Absent)?;
        order.invoice = InvoiceState::Issued { number, seq };
        order.modified_at = Some(now);
        batch.put(&order, Expect::Rev(stored.rev))?;
        // Refunds given before the invoice: their credit notes are due with it.
        for refund in crate::app::refunds::refunds_of_order(state, order_id).await? {
            let due = credit_note_due(&refund);
            if refund.status == RefundStatus::Succeeded && !queued.contains(&due.id) {
                batch.put(&due, Expect::Any)?;
            }
        }
        issued.insert(order_id, invoice);
    }

    for d in items {
        let DueDocument::CreditNote {
            refund_id,
            order_id,
        } = d.document
        else {
            continue;
        };
        let id = Invoice::id_for_refund(refund_id);
        let invoice = match issued.get(&order_id) {
            Some(i) => Some(i.clone()),
            None => state
                .store
                .get::<Invoice>(&Invoice::id_for_order(order_id).key())
                .await?
                .map(|i| i.value),
        };
        let refund = state
            .store
            .get::<Refund>(&refund_id.key())
            .await?
            .map(|r| r.value);
        let order = state
            .store
            .get::<Order>(&order_id.key())
            .await?
            .map(|o| o.value);
        let exists = state.store.get::<Invoice>(&id.key()).await?.is_some();
        settled += 1;
        batch.delete::<DocumentDue>(&d.id.key(), Expect::Any);
        // No invoice yet: issuing it queues this credit note again.
        let (Some(invoice), Some(refund), Some(order), false) = (invoice, refund, order, exists)
        else {
            continue;
        };
        if refund.status != RefundStatus::Succeeded {
            continue;
        }
        let seq = notes.draw();
        let number = document::number(&org, DocumentKind::CreditNote, seq);
        let note = document::credit_note(&invoice, &order, &refund, number, seq, now);
        batch.put(&note, Expect::Absent)?;
    }

    invoices.write(&mut batch)?;
    notes.write(&mut batch)?;
    if !batch.is_empty() {
        state.store.commit_durable(&batch).await?;
    }
    Ok(settled)
}

#[cfg(test)]
#[path = "issue_tests.rs"]
mod tests;
