//! What the tax provider (Stripe Tax) holds of an order: its calculation recorded as a
//! transaction after payment, and the reversals of its refunds — and the queue of what is
//! still to be recorded there.
//!
//! The fan-out queues a [`TaxRecordDue`] in the write that consumes the change calling for
//! it (an order paid on a `taxcalc_…` quote, a refund of such an order succeeding); the
//! recorder sends it and, in one write, keeps the answer in the order's [`TaxTransaction`]
//! and deletes the due entry. Ids derive from the order or the refund, so a change seen
//! twice queues one entry, and the provider's references (the order id, the refund id)
//! make a retried call the same call.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::Record;

use super::ids::{OrderId, OrganizationId, RefundId};
use crate::ids::derived_uuid;

crate::typed_id!(
    /// An order's transaction at the tax provider (derived from the order: one).
    pub TaxTransactionId
);
crate::typed_id!(
    /// A record waiting to be sent to the tax provider (derived from its order or refund).
    pub TaxRecordDueId
);

/// One reversal of an order's transaction: a refund given back at the provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxReversal {
    pub refund_id: RefundId,
    /// The provider's reversal (`tax_…`); `None` when the provider said the refund's
    /// reference was used already (reversed before) and its id could not be learnt.
    pub transaction_id: Option<String>,
    /// The whole transaction (the refund was the whole order), else `flat_amount`.
    pub full: bool,
    /// What was reversed, tax included, negative (0 when `full`).
    pub flat_amount: i64,
    pub reversed_at: DateTime<Utc>,
}

/// An order's transaction at the tax provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxTransaction {
    pub id: TaxTransactionId,
    pub organization_id: OrganizationId,
    pub order_id: OrderId,
    /// The calculation it was recorded from (`taxcalc_…`).
    pub calculation_id: String,
    /// The provider's transaction (`tax_…`); `None` when the provider said the order's
    /// reference was recorded already and its id could not be learnt (Stripe has no lookup
    /// by reference): its refunds cannot be reversed from here.
    pub transaction_id: Option<String>,
    pub recorded_at: DateTime<Utc>,
    pub reversals: Vec<TaxReversal>,
}

impl TaxTransaction {
    /// The transaction of `order`: one.
    pub fn id_for(order: OrderId) -> TaxTransactionId {
        TaxTransactionId(derived_uuid(order.0, "tax_transaction"))
    }

    /// Whether the refund `refund` was reversed.
    pub fn reversed(&self, refund: RefundId) -> bool {
        self.reversals.iter().any(|r| r.refund_id == refund)
    }
}

impl Record for TaxTransaction {
    crate::record_v1!(TaxTransaction, "tax_transaction");

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }
}

/// What to send to the tax provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaxAction {
    /// Record the paid order's calculation as a transaction (reference: the order id).
    Record { calculation_id: String },
    /// Reverse the order's transaction for a succeeded refund (reference: the refund id):
    /// whole when the refund is the whole order, else by `flat_amount` (negative: the
    /// refund's amount and tax).
    Reverse {
        refund_id: RefundId,
        full: bool,
        flat_amount: i64,
    },
}

/// The recorder's queue: one entry per order to record and per refund to reverse; deleted
/// in the write that keeps the provider's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxRecordDue {
    pub id: TaxRecordDueId,
    pub organization_id: OrganizationId,
    pub order_id: OrderId,
    pub action: TaxAction,
    /// When it was queued: sent in this order (an order's record before its reversals).
    pub created_at: DateTime<Utc>,
    /// Failed sends so far.
    pub attempts: u32,
    /// Not before this (after a failure; `None`: at once).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Why the last send failed.
    pub last_error: Option<String>,
}

impl TaxRecordDue {
    pub fn new(
        organization_id: OrganizationId,
        order_id: OrderId,
        action: TaxAction,
        created_at: DateTime<Utc>,
    ) -> TaxRecordDue {
        TaxRecordDue {
            id: TaxRecordDue::id_for(order_id, &action),
            organization_id,
            order_id,
            action,
            created_at,
            attempts: 0,
            next_attempt_at: None,
            last_error: None,
        }
    }

    /// One entry per order's record and per refund's reversal, however often asked.
    pub fn id_for(order: OrderId, action: &TaxAction) -> TaxRecordDueId {
        TaxRecordDueId(match action {
            TaxAction::Record { .. } => derived_uuid(order.0, "tax_record_due"),
            TaxAction::Reverse { refund_id, .. } => derived_uuid(refund_id.0, "tax_reversal_due"),
        })
    }

    /// Whether it may be sent at `now`.
    pub fn is_due(&self, now: DateTime<Utc>) -> bool {
        self.next_attempt_at.is_none_or(|at| at <= now)
    }

    /// After a failure at `now`: the next attempt waits 2^attempts seconds (capped at an
    /// hour).
    pub fn failed(&mut self, now: DateTime<Utc>, error: String) {
        self.attempts = self.attempts.saturating_add(1);
        let secs = 1_i64 << self.attempts.min(12);
        self.next_attempt_at = Some(now + chrono::Duration::seconds(secs.min(3600)));
        self.last_error = Some(error);
    }
}

impl Record for TaxRecordDue {
    crate::record_v1!(TaxRecordDue, "tax_record_due");

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }
}

#[cfg(test)]
#[path = "tax_transaction_tests.rs"]
mod tests;
