//! Refunds: money given back on an order, through the processor that took it.
//!
//! A refund is reserved on its order before the processor is asked (the order's
//! `refund_pending_amount`), so two refunds of one order at once can never give back more
//! than was paid; the processor's answer then settles it: succeeded (the order's refunded
//! amounts grow, its status follows), or failed (the reservation is released). The rules
//! are pure and live here ([`refund_tax`], [`Order::reserve_refund`],
//! [`Order::settle_refund`]); the application layer moves records through them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::ids::{CustomerId, OrderId, OrganizationId, RefundId, SubscriptionId};
use super::metadata::Metadata;
use super::order::{Order, OrderStatus};
use super::time_key;

/// Tenant: an organization; by creation time.
pub const REFUND_BY_CREATED: &str = "refund_by_created";
/// Tenant: an organization; by amount, then creation time.
pub const REFUND_BY_AMOUNT: &str = "refund_by_amount";
/// Tenant: an order; its refunds by creation time.
pub const REFUND_OF_ORDER: &str = "refund_of_order";
/// No tenant: refunds still waiting for the processor, by creation time.
pub const REFUND_PENDING: &str = "refund_pending";
/// Unique: the processor's id of the refund (`re_…`), so a refund Stripe reports is
/// recorded once whoever started it.
pub const REFUND_PROCESSOR_ID: &str = "refund_processor_id";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RefundStatus {
    Pending,
    Succeeded,
    Failed,
    Canceled,
}

impl RefundStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RefundStatus::Pending => "pending",
            RefundStatus::Succeeded => "succeeded",
            RefundStatus::Failed => "failed",
            RefundStatus::Canceled => "canceled",
        }
    }
}

/// Polar's `RefundReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RefundReason {
    Duplicate,
    Fraudulent,
    CustomerRequest,
    ServiceDisruption,
    SatisfactionGuarantee,
    DisputePrevention,
    Other,
}

impl RefundReason {
    pub const ALL: &'static [(&'static str, RefundReason)] = &[
        ("duplicate", RefundReason::Duplicate),
        ("fraudulent", RefundReason::Fraudulent),
        ("customer_request", RefundReason::CustomerRequest),
        ("service_disruption", RefundReason::ServiceDisruption),
        (
            "satisfaction_guarantee",
            RefundReason::SatisfactionGuarantee,
        ),
        ("dispute_prevention", RefundReason::DisputePrevention),
        ("other", RefundReason::Other),
    ];

    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, r)| *r == self)
            .map_or("other", |(s, _)| s)
    }

    pub fn parse(s: &str) -> Option<RefundReason> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, r)| *r)
    }
}

/// A refund to make of an order (the command `POST /v1/refunds/` is parsed into).
#[derive(Debug, Clone, PartialEq)]
pub struct RefundRequest {
    pub order_id: OrderId,
    /// Never `DisputePrevention` (a refund Tollgate makes is never one).
    pub reason: RefundReason,
    /// Before tax, in the order's currency's minor unit; at least 1.
    pub amount: i64,
    /// The seller's own note, never shown (blank is none).
    pub comment: Option<String>,
    /// Revoke the benefits the order granted (a one-time purchase's only).
    pub revoke_benefits: bool,
    pub metadata: Metadata,
    /// For a subscription's order: also end the subscription.
    pub end_subscription: Option<EndSubscription>,
}

/// How a refund ends the subscription of its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndSubscription {
    /// Canceled: its keys work until the period ends.
    AtPeriodEnd,
    /// Revoked now, with its keys.
    Now,
}

impl EndSubscription {
    pub const ALL: &'static [(&'static str, EndSubscription)] = &[
        ("at_period_end", EndSubscription::AtPeriodEnd),
        ("now", EndSubscription::Now),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EndSubscription::AtPeriodEnd => "at_period_end",
            EndSubscription::Now => "now",
        }
    }
}

/// One refund of an order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refund {
    pub id: RefundId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub status: RefundStatus,
    pub reason: RefundReason,
    /// Before tax, in the order's currency's minor unit.
    pub amount: i64,
    pub tax_amount: i64,
    pub currency: String,
    pub order_id: OrderId,
    pub subscription_id: Option<SubscriptionId>,
    pub customer_id: CustomerId,
    pub revoke_benefits: bool,
    /// The seller's note; never shown to the buyer or in the API's answers (as Polar).
    pub comment: Option<String>,
    pub metadata: Metadata,
    /// The processor's refund (`re_…`), once it has one.
    pub processor_id: Option<String>,
    /// Why the processor refused it.
    pub failure: Option<String>,
}

impl Refund {
    pub fn total(&self) -> i64 {
        self.amount.saturating_add(self.tax_amount)
    }
}

impl Record for Refund {
    crate::record_v1!(Refund, "refund");
    /// Its changes are webhook events (`refund.created`, `refund.updated`) and e-mail.
    const FEED: bool = true;
    const INDEXES: &'static [&'static str] = &[
        REFUND_BY_CREATED,
        REFUND_BY_AMOUNT,
        REFUND_OF_ORDER,
        REFUND_PENDING,
    ];
    const UNIQUES: &'static [&'static str] = &[REFUND_PROCESSOR_ID];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        let org = self.organization_id.key();
        let created = time_key(self.created_at);
        let mut by_amount = KeyBuf::new().i64(self.amount).into_vec();
        by_amount.extend_from_slice(&created);
        let mut entries = vec![
            IndexEntry::new(REFUND_BY_CREATED, org.clone(), created.clone()),
            IndexEntry::new(REFUND_BY_AMOUNT, org, by_amount),
            IndexEntry::new(REFUND_OF_ORDER, self.order_id.key(), created.clone()),
        ];
        if self.status == RefundStatus::Pending {
            entries.push(IndexEntry::new(REFUND_PENDING, Vec::new(), created));
        }
        entries
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        self.processor_id.iter().map(|p| processor_key(p)).collect()
    }
}

/// The unique key of a processor's refund id.
pub fn processor_key(processor_id: &str) -> UniqueKey {
    UniqueKey::new(REFUND_PROCESSOR_ID, Vec::new(), processor_id.to_string())
}

/// Why a refund cannot be taken from an order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefundError {
    /// The order is refunded in full already (Polar: 403 `RefundedAlready`).
    #[error("Order is already fully refunded: {0}")]
    RefundedAlready(OrderId),
    /// More than is left to refund (Polar: 422 at `amount`).
    #[error("Refund amount exceeds refundable amount")]
    TooHigh { refundable: i64 },
    /// Nothing was paid (a free order, or a `pending` one).
    #[error("Nothing was paid for this order: there is nothing to refund.")]
    NothingPaid,
}

/// The tax refunded with `amount` (before tax) of `order`: all the tax still refundable
/// when `amount` is all that is left, else the order's tax rate of it (rounded half to
/// even, as Polar), never more than the tax still refundable.
pub fn refund_tax(order: &Order, amount: i64) -> i64 {
    let refundable = order.refundable_amount();
    let tax_left = order.refundable_tax_amount();
    if amount >= refundable {
        return tax_left;
    }
    if order.tax_amount == 0 || order.amount == 0 {
        return 0;
    }
    let exact = (amount as i128) * (order.tax_amount as i128);
    let den = order.amount as i128;
    let (q, r) = (exact / den, exact % den);
    let rounded = match (2 * r).cmp(&den) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q % 2),
    };
    i64::try_from(rounded).unwrap_or(i64::MAX).min(tax_left)
}

/// A refund of `total` (tax included) made at the processor, split as Polar splits it:
/// all that is left when it is all that is left, else the order's share of tax.
pub fn split_total(order: &Order, total: i64) -> (i64, i64) {
    let (left, tax_left) = (order.refundable_amount(), order.refundable_tax_amount());
    if total >= left + tax_left {
        return (left, tax_left);
    }
    let paid = order.amount + order.tax_amount;
    if order.tax_amount == 0 || paid <= 0 {
        return (total, 0);
    }
    let tax = ((total as i128 * order.tax_amount as i128 + paid as i128 / 2) / paid as i128)
        .clamp(0, tax_left as i128) as i64;
    (total - tax, tax)
}

impl Order {
    /// Before tax, what is left to refund: paid, less refunded, less refunds under way.
    pub fn refundable_amount(&self) -> i64 {
        (self.amount - self.refunded_amount - self.refund_pending_amount).max(0)
    }

    pub fn refundable_tax_amount(&self) -> i64 {
        (self.tax_amount - self.refunded_tax_amount - self.refund_pending_tax_amount).max(0)
    }

    /// Reserves `amount` (before tax) for a refund about to be asked of the processor;
    /// returns the tax refunded with it.
    pub fn reserve_refund(&mut self, amount: i64) -> Result<i64, RefundError> {
        if self.status == OrderStatus::Refunded {
            return Err(RefundError::RefundedAlready(self.id));
        }
        if self.amount + self.tax_amount <= 0 || !self.status.was_paid() {
            return Err(RefundError::NothingPaid);
        }
        let refundable = self.refundable_amount();
        if amount <= 0 || amount > refundable {
            return Err(RefundError::TooHigh { refundable });
        }
        let tax = refund_tax(self, amount);
        self.refund_pending_amount += amount;
        self.refund_pending_tax_amount += tax;
        Ok(tax)
    }

    /// Settles a reserved refund: `succeeded` moves it to the refunded amounts (and the
    /// status follows: `refunded` once everything paid is given back, else
    /// `partially_refunded`); otherwise the reservation is released.
    pub fn settle_refund(&mut self, amount: i64, tax: i64, succeeded: bool) {
        self.refund_pending_amount = (self.refund_pending_amount - amount).max(0);
        self.refund_pending_tax_amount = (self.refund_pending_tax_amount - tax).max(0);
        if succeeded {
            self.record_refund(amount, tax);
        }
    }

    /// Adds a refund that succeeded (reserved or not: one the processor reports) to the
    /// refunded amounts; a negative amount takes a reversed refund back.
    pub fn record_refund(&mut self, amount: i64, tax: i64) {
        self.refunded_amount = (self.refunded_amount + amount).clamp(0, self.amount.max(0));
        self.refunded_tax_amount =
            (self.refunded_tax_amount + tax).clamp(0, self.tax_amount.max(0));
        self.status = if self.refunded_amount == 0 && self.refunded_tax_amount == 0 {
            OrderStatus::Paid
        } else if self.refunded_amount >= self.amount && self.refunded_tax_amount >= self.tax_amount
        {
            OrderStatus::Refunded
        } else {
            OrderStatus::PartiallyRefunded
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::order::tests::full_order;

    /// $15.00 with $3.00 tax, nothing refunded yet.
    fn order() -> Order {
        let mut o = full_order();
        o.status = OrderStatus::Paid;
        o.refunded_amount = 0;
        o.refunded_tax_amount = 0;
        o
    }

    #[test]
    fn tax_follows_the_orders_rate_and_the_last_refund_takes_what_is_left() {
        let o = order();
        assert_eq!(refund_tax(&o, 500), 100);
        assert_eq!(refund_tax(&o, 1), 0, "0.2 rounds to 0");
        assert_eq!(refund_tax(&o, 1500), 300);
        // Half to even, as Polar's Python rounds.
        let mut odd = order();
        odd.amount = 2;
        odd.tax_amount = 1;
        assert_eq!(refund_tax(&odd, 1), 0, "0.5 rounds to 0 (even)");
        assert_eq!(refund_tax(&odd, 2), 1, "everything left: all the tax");
        let mut half = order();
        half.amount = 4;
        half.tax_amount = 6;
        assert_eq!(refund_tax(&half, 1), 2, "1.5 rounds to 2 (even)");
        let mut untaxed = order();
        untaxed.tax_amount = 0;
        assert_eq!(refund_tax(&untaxed, 700), 0);
    }

    #[test]
    fn reservations_never_give_back_more_than_was_paid() {
        let mut o = order();
        assert_eq!(o.reserve_refund(1000), Ok(200));
        assert_eq!(o.refundable_amount(), 500);
        // A second refund under way at the same time: at most what is left.
        assert_eq!(
            o.reserve_refund(600),
            Err(RefundError::TooHigh { refundable: 500 })
        );
        assert_eq!(o.reserve_refund(500), Ok(100));
        assert_eq!(o.refundable_amount(), 0);
        assert_eq!(o.refundable_tax_amount(), 0);
        assert_eq!(o.status, OrderStatus::Paid, "nothing given back yet");
        // The first fails: its part is refundable again.
        o.settle_refund(1000, 200, false);
        assert_eq!(o.refundable_amount(), 1000);
        // The second succeeds: partly refunded.
        o.settle_refund(500, 100, true);
        assert_eq!(o.status, OrderStatus::PartiallyRefunded);
        assert_eq!((o.refunded_amount, o.refunded_tax_amount), (500, 100));
        // The rest: refunded in full, and then nothing more.
        let tax = o.reserve_refund(1000).unwrap();
        assert_eq!(tax, 200);
        o.settle_refund(1000, tax, true);
        assert_eq!(o.status, OrderStatus::Refunded);
        assert_eq!((o.refunded_amount, o.refunded_tax_amount), (1500, 300));
        assert_eq!(o.reserve_refund(1), Err(RefundError::RefundedAlready(o.id)));
    }

    #[test]
    fn zero_negative_and_free_orders_are_refused() {
        let mut o = order();
        assert_eq!(
            o.reserve_refund(0),
            Err(RefundError::TooHigh { refundable: 1500 })
        );
        let mut free = order();
        free.amount = 0;
        free.tax_amount = 0;
        assert_eq!(free.reserve_refund(1), Err(RefundError::NothingPaid));
        // A pending renewal (its charge declined) was not paid either.
        let mut pending = order();
        pending.status = OrderStatus::Pending;
        assert_eq!(pending.reserve_refund(1), Err(RefundError::NothingPaid));
        assert_eq!(o.refund_pending_amount, 0);
    }

    #[test]
    fn a_reported_refund_and_its_reversal_move_the_status_both_ways() {
        let mut o = order();
        o.record_refund(1500, 300);
        assert_eq!(o.status, OrderStatus::Refunded);
        o.record_refund(-1500, -300);
        assert_eq!(o.status, OrderStatus::Paid);
        o.record_refund(99_999, 99_999);
        assert_eq!((o.refunded_amount, o.refunded_tax_amount), (1500, 300));
    }

    #[test]
    fn a_total_refunded_at_the_processor_splits_into_net_and_tax() {
        let o = order();
        assert_eq!(split_total(&o, 1800), (1500, 300), "everything");
        assert_eq!(
            split_total(&o, 99_999),
            (1500, 300),
            "never more than is left"
        );
        assert_eq!(split_total(&o, 600), (500, 100));
        let mut untaxed = order();
        untaxed.tax_amount = 0;
        assert_eq!(split_total(&untaxed, 700), (700, 0));
    }

    #[test]
    fn reasons_read_as_polar_writes_them() {
        for (name, r) in RefundReason::ALL {
            assert_eq!(RefundReason::parse(name), Some(*r));
            assert_eq!(r.as_str(), *name);
        }
        assert_eq!(RefundReason::parse("chargeback"), None);
    }
}
