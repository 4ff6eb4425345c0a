//! The buyer's recovery of a declined renewal (Polar's `confirm-payment`, "pay now"):
//! rules only, time passed in.
//!
//! A past-due subscription's renewal can be charged at the buyer's request, at most
//! [`MAX_BUYER_ATTEMPTS`] times while it is past due. [`Subscription::begin_recovery`]
//! takes a payment lock for [`PAYMENT_LOCK`] (the sweep does not charge meanwhile, and a
//! second request is told a payment is under way) and says what to charge, with an
//! idempotency key made of the cycle, the buyer's attempt number and the card: the same
//! request repeated after a crash is the same charge, never a second one.
//! [`Subscription::settle_recovery`] applies its outcome: paid, the period is paid as a
//! renewal paid by the sweep would be; declined, the attempt counts and the lock goes;
//! waiting for the buyer (3-D Secure), the processor's payment is remembered and the lock
//! kept.

use chrono::{DateTime, Duration, Utc};

use super::model::{Subscription, SubscriptionError, SubscriptionStatus};
use super::renewal::{Renewal, RenewalCharge, RenewalTerms};
use crate::tax::TaxQuote;

/// How many charges the buyer may ask for while the subscription is past due (Polar's
/// `CUSTOMER_RETRY_MAX_ATTEMPTS`).
pub const MAX_BUYER_ATTEMPTS: u8 = 5;
/// How long a charge under way holds the subscription's payment.
pub const PAYMENT_LOCK: Duration = Duration::minutes(15);

// The buyer's command and the answers of "pay now" (Polar's customer-portal
// `confirm-payment` and `payment-status`), shared by the application and the wire.

/// What the buyer pays with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PayWith {
    /// One of the customer's saved methods (`payment_method_id`).
    Saved(crate::domain::ids::PaymentMethodId),
    /// A new payment (`confirmation_token_id`): saved for the next renewals once it pays.
    New(String),
}

/// How the buyer's charge went (Polar's `CustomerOrderConfirmPaymentResponse`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    pub status: ConfirmationStatus,
    /// The processor's secret for the page's next action (`requires_action` only).
    pub client_secret: Option<String>,
    /// Why it failed (`failed` only).
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmationStatus {
    Succeeded,
    RequiresAction,
    Failed,
}

/// The last payment of an order (Polar's `CustomerOrderPaymentStatus`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentStatus {
    /// `pending`, `succeeded`, `failed` or `no_payment`.
    pub status: &'static str,
    pub error: Option<String>,
}

/// How the buyer's charge of the past-due renewal ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RecoveryOutcome {
    Paid {
        /// The tax quoted for the charge (its request carries the billing address).
        tax: Box<TaxQuote>,
        /// The processor's payment.
        payment_id: Option<String>,
    },
    Declined,
    /// Waiting for the buyer's action (3-D Secure) on the processor's payment.
    Pending {
        intent_id: String,
    },
}

/// A short tag of a payment method's reference (the key names the card without
/// carrying it).
fn method_tag(method: &str) -> String {
    let id = crate::ids::derived_uuid(uuid::Uuid::nil(), &format!("pay-method:{method}"));
    id.simple().to_string().chars().take(12).collect()
}

impl Subscription {
    /// Whether a charge of the renewal is under way at `now`.
    pub fn payment_locked(&self, now: DateTime<Utc>) -> bool {
        self.payment_lock_until.is_some_and(|until| until > now)
    }

    /// Starts the buyer's charge of the past-due renewal with `method` (the processor's
    /// reference of the card): the subscription with the payment lock taken, and the
    /// charge to make. Refused when the subscription is not past due (or ended), a
    /// charge is under way, or the buyer used up their attempts.
    pub fn begin_recovery(
        &self,
        now: DateTime<Utc>,
        terms: &RenewalTerms,
        method: &str,
    ) -> Result<(Subscription, RenewalCharge), SubscriptionError> {
        if self.status != SubscriptionStatus::PastDue || self.ended_at.is_some() {
            return Err(SubscriptionError::NotPastDue);
        }
        if self.payment_locked(now) {
            return Err(SubscriptionError::PaymentInProgress);
        }
        if self.buyer_attempts >= MAX_BUYER_ATTEMPTS {
            return Err(SubscriptionError::TooManyAttempts);
        }
        let mut charge = self.renewal_charge(terms);
        charge.idempotency_key = format!(
            "{}:{}:pay:{}:{}",
            self.id,
            charge.cycle,
            self.buyer_attempts,
            method_tag(method)
        );
        charge.payment_token = Some(method.to_string());
        let mut next = self.clone();
        next.payment_lock_until = Some(now + PAYMENT_LOCK);
        next.recovery_intent = None;
        Ok((next, charge))
    }

    /// Applies the outcome of the buyer's charge of period `cycle`; `None` when there is
    /// nothing to apply (the period was paid or the subscription ended meanwhile).
    /// Paid: the period is paid (the renewal order `paid`, the subscription `active`, its
    /// recovery forgotten); declined: one more attempt counted, the lock released;
    /// pending: the processor's payment kept, the lock kept.
    pub fn settle_recovery(
        &self,
        now: DateTime<Utc>,
        terms: &RenewalTerms,
        cycle: u32,
        outcome: RecoveryOutcome,
    ) -> Option<Renewal> {
        if self.status != SubscriptionStatus::PastDue
            || self.ended_at.is_some()
            || self.cycles.saturating_add(1) != cycle
        {
            return None;
        }
        let mut next = self.clone();
        match outcome {
            RecoveryOutcome::Paid { tax, payment_id } => {
                let charge = self.renewal_charge(terms);
                return Some(self.apply_paid(&charge, *tax, payment_id, terms, now));
            }
            RecoveryOutcome::Declined => {
                next.buyer_attempts = self.buyer_attempts.saturating_add(1);
                next.payment_lock_until = None;
                next.recovery_intent = None;
            }
            RecoveryOutcome::Pending { intent_id } => {
                next.recovery_intent = Some(intent_id);
            }
        }
        Some(Renewal {
            subscription: next,
            order: None,
        })
    }
}

#[cfg(test)]
#[path = "recovery_tests.rs"]
mod tests;
