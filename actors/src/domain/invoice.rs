//! Invoices and credit notes: the documents an order and its refunds are billed with.
//!
//! An [`Invoice`] is an immutable snapshot of everything its PDF prints (the seller and the
//! buyer as they were, the lines, the tax per rate, the mentions): written once when its
//! number is drawn, never changed after, so the same document renders the same bytes for
//! as long as it is kept. A credit note is the same record with the kind
//! [`InvoiceKind::CreditNote`], numbered in a sequence of its own and naming the invoice it
//! corrects.
//!
//! Numbers are gapless per organization and kind: a [`DocumentSequence`] holds the last
//! number drawn, and the issuer writes it in the same batch as the documents that use its
//! numbers (so a number exists exactly when its document does). The unique keys are the
//! second guard: one number per organization, one invoice per order, one credit note per
//! refund.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::customer::Address;
use super::ids::{OrderId, OrganizationId, RefundId};
use super::tax_breakdown::{TaxBreakdown, TaxabilityReason};
use super::tax_settings::TaxBehavior;
use super::time_key;
use crate::ids::derived_uuid;

crate::typed_id!(
    /// An invoice or a credit note (derived from its order or refund: never two).
    pub InvoiceId
);
crate::typed_id!(
    /// The number sequence of one organization and kind of document (derived from both).
    pub DocumentSequenceId
);

/// Tenant: an organization; its invoices and credit notes by date of issue.
pub const INVOICE_BY_ISSUED: &str = "invoice_by_issued";
/// Unique, tenant: an organization; the document's number (`ACME-0001`, `ACME-CN-0001`).
pub const INVOICE_NUMBER: &str = "invoice_number";
/// Unique: the order an invoice bills (credit notes do not hold it).
pub const INVOICE_OF_ORDER: &str = "invoice_of_order";
/// Unique: the refund a credit note corrects.
pub const CREDIT_NOTE_OF_REFUND: &str = "credit_note_of_refund";

/// The mention an EU reverse-charged invoice carries (the buyer's country is a member
/// state).
pub const REVERSE_CHARGE_EU: &str = "Reverse charge: VAT to be accounted for by the recipient \
     (Article 196, Council Directive 2006/112/EC)";
/// The mention a UK reverse-charged invoice carries.
pub const REVERSE_CHARGE_GB: &str = "Reverse charge: customer to account for VAT to HMRC";

/// Which sequence a document's number is drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DocumentKind {
    Invoice,
    CreditNote,
}

impl DocumentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentKind::Invoice => "invoice",
            DocumentKind::CreditNote => "credit_note",
        }
    }
}

/// What a document is: an order's invoice, or a refund's credit note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum InvoiceKind {
    Invoice,
    CreditNote {
        refund_id: RefundId,
        /// The number of the invoice it corrects, as printed on it.
        invoice_number: String,
    },
}

impl InvoiceKind {
    pub fn document_kind(&self) -> DocumentKind {
        match self {
            InvoiceKind::Invoice => DocumentKind::Invoice,
            InvoiceKind::CreditNote { .. } => DocumentKind::CreditNote,
        }
    }
}

/// The seller as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seller {
    pub legal_name: String,
    pub address: Address,
    /// Its VAT (or GST, …) number.
    pub tax_id: Option<String>,
}

/// The buyer as printed ("Bill to").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BillTo {
    pub name: String,
    pub address: Option<Address>,
    pub tax_id: Option<String>,
    pub email: String,
}

/// One line of the items table. Amounts are in the currency's minor unit; a credit note's
/// are negative.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvoiceLine {
    pub description: String,
    pub quantity: u32,
    pub unit_amount: i64,
    /// `quantity × unit_amount`, before discount and tax.
    pub amount: i64,
    pub tax_amount: i64,
    /// The period a recurring line bills (start, end).
    pub period: Option<(DateTime<Utc>, DateTime<Utc>)>,
}

/// An invoice or a credit note, as issued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invoice {
    pub id: InvoiceId,
    pub organization_id: OrganizationId,
    pub order_id: OrderId,
    pub kind: InvoiceKind,
    /// As printed: `ACME-0001`, `ACME-CN-0001`.
    pub number: String,
    /// The number in its sequence (1, 2, …).
    pub seq: u64,
    /// The date of issue.
    pub issued_at: DateTime<Utc>,
    /// The date of supply: the order's.
    pub supplied_at: DateTime<Utc>,
    pub seller: Seller,
    pub buyer: BillTo,
    pub lines: Vec<InvoiceLine>,
    /// The sum of the lines' amounts.
    pub subtotal: i64,
    /// The discount taken off the subtotal (0 or more; a credit note's 0 or less).
    pub discount: i64,
    /// "Total excluding tax": subtotal less discount (less the tax inside an inclusive
    /// price).
    pub net: i64,
    pub tax_breakdown: Vec<TaxBreakdown>,
    /// Net plus tax.
    pub total: i64,
    /// ISO 4217, lower case as the orders carry it.
    pub currency: String,
    pub behavior: TaxBehavior,
    /// Printed under the totals: the reverse-charge mention, …
    pub mentions: Vec<String>,
}

impl Invoice {
    /// The invoice of an order: one, whoever issues it.
    pub fn id_for_order(order: OrderId) -> InvoiceId {
        InvoiceId(derived_uuid(order.0, "invoice"))
    }

    /// The credit note of a refund: one, whoever issues it.
    pub fn id_for_refund(refund: RefundId) -> InvoiceId {
        InvoiceId(derived_uuid(refund.0, "credit_note"))
    }

    /// The number printed for `seq` in a kind's sequence: `ACME-0001` / `ACME-CN-0001`, four
    /// digits at least, more when needed (`ACME-12345`).
    pub fn number_for(prefix: &str, kind: DocumentKind, seq: u64) -> String {
        match kind {
            DocumentKind::Invoice => format!("{prefix}-{seq:04}"),
            DocumentKind::CreditNote => format!("{prefix}-CN-{seq:04}"),
        }
    }

    /// The sum of the breakdown's tax.
    pub fn tax(&self) -> i64 {
        self.tax_breakdown.iter().map(|b| b.amount).sum()
    }

    /// The PDF's file name: `Invoice-ACME-0001.pdf`, `CreditNote-ACME-CN-0001.pdf`.
    pub fn file_name(&self) -> String {
        match self.kind {
            InvoiceKind::Invoice => format!("Invoice-{}.pdf", self.number),
            InvoiceKind::CreditNote { .. } => format!("CreditNote-{}.pdf", self.number),
        }
    }

    pub fn is_credit_note(&self) -> bool {
        matches!(self.kind, InvoiceKind::CreditNote { .. })
    }

    pub fn number_key(organization: OrganizationId, number: &str) -> UniqueKey {
        UniqueKey::new(
            INVOICE_NUMBER,
            organization.key(),
            number.as_bytes().to_vec(),
        )
    }

    pub fn order_key(order: OrderId) -> UniqueKey {
        UniqueKey::new(INVOICE_OF_ORDER, Vec::new(), order.key())
    }

    pub fn refund_key(refund: RefundId) -> UniqueKey {
        UniqueKey::new(CREDIT_NOTE_OF_REFUND, Vec::new(), refund.key())
    }
}

/// The mention a reverse-charged breakdown line requires on the document, by the buyer's
/// country (the line's, upper case): an EU member state's (`eu_member` says which
/// countries are: `crate::tax::rates::EU_MEMBER_STATES`, which the domain does not
/// import) or the United Kingdom's; `None` for any other line.
pub fn reverse_charge_mention(
    line: &TaxBreakdown,
    eu_member: impl Fn(&str) -> bool,
) -> Option<&'static str> {
    if line.reason != TaxabilityReason::ReverseCharge {
        return None;
    }
    let country = line.country.to_ascii_uppercase();
    if country == "GB" {
        Some(REVERSE_CHARGE_GB)
    } else if eu_member(&country) {
        Some(REVERSE_CHARGE_EU)
    } else {
        None
    }
}

/// The mentions a breakdown requires, each once, in the breakdown's order.
pub fn mentions_for(breakdown: &[TaxBreakdown], eu_member: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in breakdown
        .iter()
        .filter_map(|line| reverse_charge_mention(line, &eu_member))
    {
        if !out.iter().any(|o| o == m) {
            out.push(m.to_string());
        }
    }
    out
}

impl Record for Invoice {
    crate::record_v1!(Invoice, "invoice");
    /// An issued document is told by e-mail (the receipt with the invoice, the credit
    /// note), decided from the feed like every message.
    const FEED: bool = true;
    const INDEXES: &'static [&'static str] = &[INVOICE_BY_ISSUED];
    const UNIQUES: &'static [&'static str] =
        &[INVOICE_NUMBER, INVOICE_OF_ORDER, CREDIT_NOTE_OF_REFUND];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            INVOICE_BY_ISSUED,
            self.organization_id.key(),
            time_key(self.issued_at),
        )]
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        let of = match &self.kind {
            InvoiceKind::Invoice => Invoice::order_key(self.order_id),
            InvoiceKind::CreditNote { refund_id, .. } => Invoice::refund_key(*refund_id),
        };
        vec![Invoice::number_key(self.organization_id, &self.number), of]
    }
}

/// The last number drawn in one organization's sequence of one kind of document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentSequence {
    pub id: DocumentSequenceId,
    pub organization_id: OrganizationId,
    pub kind: DocumentKind,
    /// 0 before the first document.
    pub last: u64,
}

impl DocumentSequence {
    /// The id of the sequence of `kind` of `organization`: there is one.
    pub fn id_for(organization: OrganizationId, kind: DocumentKind) -> DocumentSequenceId {
        let label = match kind {
            DocumentKind::Invoice => "seq:invoice",
            DocumentKind::CreditNote => "seq:credit",
        };
        DocumentSequenceId(derived_uuid(organization.0, label))
    }

    /// A sequence before its first number.
    pub fn start(organization: OrganizationId, kind: DocumentKind) -> DocumentSequence {
        DocumentSequence {
            id: DocumentSequence::id_for(organization, kind),
            organization_id: organization,
            kind,
            last: 0,
        }
    }
}

impl Record for DocumentSequence {
    crate::record_v1!(DocumentSequence, "document_sequence");

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }
}

crate::typed_id!(
    /// A document waiting to be issued (derived from what it bills: one at a time).
    pub DocumentDueId
);

/// What a waiting document bills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DueDocument {
    /// The invoice of a paid order.
    Invoice { order_id: OrderId },
    /// The credit note of a succeeded refund of an invoiced order.
    CreditNote {
        refund_id: RefundId,
        order_id: OrderId,
    },
}

/// The issuer's queue: a document to number and write. Written when a paid order of an
/// organization that invoices on payment is seen, when an invoice is asked for, when a
/// refund of an invoiced order succeeds; deleted in the batch that issues the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentDue {
    pub id: DocumentDueId,
    pub organization_id: OrganizationId,
    pub document: DueDocument,
    /// When it was queued: documents are numbered in this order.
    pub created_at: DateTime<Utc>,
}

impl DocumentDue {
    pub fn new(
        organization_id: OrganizationId,
        document: DueDocument,
        created_at: DateTime<Utc>,
    ) -> DocumentDue {
        DocumentDue {
            id: DocumentDue::id_for(document),
            organization_id,
            document,
            created_at,
        }
    }

    /// One entry per document, however often it is asked for.
    pub fn id_for(document: DueDocument) -> DocumentDueId {
        DocumentDueId(match document {
            DueDocument::Invoice { order_id } => derived_uuid(order_id.0, "invoice_due"),
            DueDocument::CreditNote { refund_id, .. } => {
                derived_uuid(refund_id.0, "credit_note_due")
            }
        })
    }

    /// The document it asks for.
    pub fn invoice_id(&self) -> InvoiceId {
        match self.document {
            DueDocument::Invoice { order_id } => Invoice::id_for_order(order_id),
            DueDocument::CreditNote { refund_id, .. } => Invoice::id_for_refund(refund_id),
        }
    }
}

impl Record for DocumentDue {
    crate::record_v1!(DocumentDue, "document_due");

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }
}

#[cfg(test)]
#[path = "invoice_tests.rs"]
mod tests;
