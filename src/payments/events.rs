//! The processor's events after the fact, in Tollgate's words: what `stripe.rs` reads out
//! of a verified Stripe webhook ([`super::stripe::parse_event`]), and what the application's
//! router (`crate::app::checkout::payment_event`) dispatches. No processor vocabulary (event
//! type strings, field names, reason strings) reaches past this module's producers.

use chrono::{DateTime, Utc};

use crate::domain::dispute::DisputeStatus;
use crate::domain::ids::{CheckoutId, OrderId, RefundId};
use crate::domain::refund::RefundReason;

use super::ChargeOutcome;

/// One event of the processor: its id (an event is handled at most once in effect) and
/// what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessorEvent {
    pub id: String,
    pub kind: EventKind,
}

/// What a processor event says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// A payment (or a saved card, for a trial) went through.
    PaymentSucceeded(PaymentUpdate),
    /// A payment was accepted and settles later (a debit): it is `processing`.
    PaymentProcessing(PaymentUpdate),
    /// A payment (or a card setup) failed or was canceled.
    PaymentFailed(PaymentUpdate),
    /// Refunds as the processor reports them: one for a refund's own event, each refund
    /// of a charge for a charge's.
    RefundUpdated(Vec<RefundUpdate>),
    /// A dispute was opened, moved or closed.
    DisputeChanged(DisputeUpdate),
    /// Nothing Tollgate acts on (acknowledged and ignored).
    Ignored,
}

/// A payment's state, as an event reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentUpdate {
    /// The processor's payment (Stripe's intent id).
    pub payment_id: String,
    /// The checkout the payment was started for (renewals have none).
    pub checkout_id: Option<CheckoutId>,
    /// The past-due renewal order a buyer's "pay now" charge pays (its metadata's
    /// `order_id`); the sweep's own charges name none.
    pub order_id: Option<OrderId>,
    /// What the payment's state means for the checkout it pays.
    pub outcome: ChargeOutcome,
}

/// Where a refund stands at the processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundState {
    Pending,
    Succeeded,
    /// Failed or canceled.
    Failed,
}

/// A refund as the processor reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundUpdate {
    /// The processor's refund.
    pub processor_id: String,
    /// Ours, when Tollgate started it.
    pub refund_id: Option<RefundId>,
    /// The processor's payment it gives money back on.
    pub payment_id: Option<String>,
    /// Tax included, in the currency's minor unit.
    pub amount: i64,
    pub currency: String,
    pub status: RefundState,
    pub reason: RefundReason,
}

/// A dispute (chargeback) as the processor reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisputeUpdate {
    /// The processor's dispute.
    pub processor_id: String,
    /// The processor's payment disputed.
    pub payment_id: Option<String>,
    pub status: DisputeStatus,
    /// Tax included, in the currency's minor unit.
    pub amount: i64,
    pub currency: String,
    /// The processor's reason, recorded as is.
    pub reason: Option<String>,
    /// Until when the seller may answer with evidence.
    pub evidence_due_by: Option<DateTime<Utc>>,
}
