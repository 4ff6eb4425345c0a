//! Plan changes: a subscription moved to another product (or price) mid-period, with
//! proration. Pure rules, time passed in; the charge of an `invoice` change is made by the
//! application layer between planning and applying, as a renewal's is.
//!
//! **Proration.** Each side of a change is one line in integer cents:
//! - the *credit* for the unused part of the current period at the old amount:
//!   `prorate(old, remaining, period)`;
//! - the *debit* for the same remaining part at the new amount: `prorate(new, remaining,
//!   period)`; when the interval (or its count) changes, the cycle restarts at the change
//!   and the debit is the new amount for a whole new period.
//!
//! `remaining` and `period` are whole seconds (`period_end − at`, `period_end −
//! period_start`), and `prorate(a, r, p)` is `a × r / p` rounded to the nearest cent,
//! halves to even (Polar's `round(Decimal)`), computed exactly in 128-bit integers. The
//! net (debit − credit) is what the change costs: with `invoice` a positive net is
//! charged now (an order, `subscription_update`), with `prorate` it is added to the next
//! renewal; a negative net (a downgrade) is always a credit on the next renewals
//! ([`Subscription::proration_balance`]), never lost: a renewal takes it off its charge up
//! to its own amount and carries the rest. While trialing nothing is prorated (nothing
//! was paid): the product changes and the trial goes on.

use chrono::{DateTime, Utc};

use super::model::{union, Subscription, SubscriptionError, SubscriptionStatus};
use crate::domain::ids::{LicenseKeyId, OrderId, PriceId, ProductId, SubscriptionId};
use crate::domain::order::{BillingReason, Order, OrderStatus, DEFAULT_CURRENCY};
use crate::domain::product::{Price, RecurringInterval};
use crate::ids::derived_uuid;
use crate::tax::TaxQuote;

/// Polar's `SubscriptionProrationBehavior` (the public ones Tollgate applies): `invoice`
/// charges the difference now, `prorate` adds it to the next renewal. The organization's
/// `subscription_settings.proration_behavior` is the default.
pub use crate::domain::organization::ProrationBehavior;

/// What the subscription changes to, as the catalog says now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanTarget {
    pub product_id: ProductId,
    pub product_name: String,
    /// The recurring price the subscription moves to.
    pub price_id: PriceId,
    pub interval: RecurringInterval,
    pub interval_count: u32,
    /// Per period, after the subscription's discount if it still applies; `None` free.
    pub amount: Option<i64>,
    pub currency: Option<String>,
    /// The subscription's discount applies to the new amount (else it is dropped).
    pub keeps_discount: bool,
    /// The seats paid for at a seat-based price (`amount` is what they cost); `None` for
    /// any other price.
    pub seats: Option<u32>,
}

impl PlanTarget {
    /// The target for `price` of product `product_id`, at `amount` per period.
    pub fn new(
        product_id: ProductId,
        product_name: &str,
        price: &Price,
        interval_count: u32,
        amount: Option<i64>,
        keeps_discount: bool,
    ) -> Option<PlanTarget> {
        Some(PlanTarget {
            product_id,
            product_name: product_name.to_string(),
            price_id: price.id,
            interval: price.kind.interval()?,
            interval_count: interval_count.max(1),
            amount,
            currency: price.kind.currency().map(str::to_string),
            keeps_discount,
            seats: None,
        })
    }

    /// The same target for `seats` seats (of a seat-based price; `amount` their cost).
    pub fn with_seats(mut self, seats: Option<u32>) -> PlanTarget {
        self.seats = seats;
        self
    }
}

/// A plan change as decided at `at`: what it credits, debits, charges now and carries to
/// the next renewal. Applying it checks that the subscription still decides the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanChange {
    pub at: DateTime<Utc>,
    pub behavior: ProrationBehavior,
    pub target: PlanTarget,
    /// The change's number (`plan_changes` + 1): its order and charge derive from it.
    pub number: u32,
    /// The period the prorations cover (the current one, or the new one on a reset).
    pub period_start: DateTime<Utc>,
    pub period_end: DateTime<Utc>,
    /// The unused part of the current period at the old amount (≥ 0).
    pub credit: i64,
    /// The rest of the period (or a whole new one) at the new amount (≥ 0).
    pub debit: i64,
    /// The interval changes: the cycle restarts at `at`.
    pub resets_cycle: bool,
    /// Charged now (before tax): the positive net of an `invoice` change (or of a reset).
    pub due_now: i64,
    /// Added to `proration_balance` (negative: a credit).
    pub carried: i64,
    /// The subscription is trialing: nothing is prorated.
    pub trialing: bool,
}

impl PlanChange {
    /// Debit − credit.
    pub fn net(&self) -> i64 {
        self.debit - self.credit
    }

    /// The processor's idempotency key of the charge: the same change is never charged
    /// twice.
    pub fn idempotency_key(&self, id: SubscriptionId) -> String {
        format!("{id}:change:{}", self.number)
    }
}

/// The order a plan change bills (`due_now` > 0): derived, never written twice.
pub fn change_order_id(subscription: SubscriptionId, number: u32) -> OrderId {
    OrderId(derived_uuid(subscription.0, &format!("change:{number}")))
}

/// `amount × remaining / period`, rounded to the nearest integer, halves to even; exact
/// (128-bit). `remaining` is clamped to `0..=period`; a period of 0 prorates to 0.
pub fn prorate(amount: i64, remaining: i64, period: i64) -> i64 {
    if period <= 0 {
        return 0;
    }
    let remaining = i128::from(remaining.clamp(0, period));
    let (num, den) = (i128::from(amount) * remaining, i128::from(period));
    let (q, r) = (num.div_euclid(den), num.rem_euclid(den));
    let rounded = match (2 * r).cmp(&den) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
    };
    i64::try_from(rounded).unwrap_or(if amount < 0 { i64::MIN } else { i64::MAX })
}

impl Subscription {
    /// Whether a plan change may apply: a live subscription (trialing, active or past
    /// due) not set to end (Polar's 403 `AlreadyCanceledSubscription` otherwise).
    fn can_change_plan(&self) -> bool {
        self.ended_at.is_none()
            && !self.cancel_at_period_end
            && matches!(
                self.status,
                SubscriptionStatus::Trialing
                    | SubscriptionStatus::Active
                    | SubscriptionStatus::PastDue
            )
    }

    /// Decides the change to `target` at `at` with `behavior`; `Ok(None)` when the target
    /// is what the subscription already has (nothing to change).
    pub fn plan_change(
        &self,
        target: &PlanTarget,
        behavior: ProrationBehavior,
        at: DateTime<Utc>,
    ) -> Result<Option<PlanChange>, SubscriptionError> {
        if !self.can_change_plan() {
            return Err(SubscriptionError::AlreadyCanceled);
        }
        if target.currency.is_some() && self.currency.is_some() && target.currency != self.currency
        {
            return Err(SubscriptionError::CurrencyMismatch);
        }
        let resets_cycle = target.interval != self.recurring_interval
            || target.interval_count != self.recurring_interval_count.max(1);
        if target.price_id == self.price_id
            && target.product_id == self.product_id
            && target.amount == self.amount
            && target.seats == self.seats
            && !resets_cycle
        {
            return Ok(None);
        }
        let trialing = self.status == SubscriptionStatus::Trialing;
        let start = self.current_period_start;
        let end = self.current_period_end.unwrap_or(start).max(start);
        let period = (end - start).num_seconds();
        let remaining = (end - at.clamp(start, end)).num_seconds();
        let old = self.amount.unwrap_or(0).max(0);
        let new = target.amount.unwrap_or(0).max(0);
        let number = self.plan_changes.saturating_add(1);
        let mut change = PlanChange {
            at,
            behavior,
            target: target.clone(),
            number,
            period_start: start,
            period_end: end,
            credit: 0,
            debit: 0,
            resets_cycle: resets_cycle && !trialing,
            due_now: 0,
            carried: 0,
            trialing,
        };
        if trialing {
            return Ok(Some(change));
        }
        change.credit = prorate(old, remaining, period);
        if change.resets_cycle {
            change.period_start = at;
            change.period_end = target.interval.add(at, target.interval_count);
            change.debit = new;
        } else {
            change.debit = prorate(new, remaining, period);
        }
        let net = change.net();
        // A new cycle is billed at once whatever the behavior (Polar): the period it
        // starts is paid in advance, as every period is.
        let now = behavior == ProrationBehavior::Invoice || change.resets_cycle;
        if now && net > 0 {
            change.due_now = net;
        } else {
            change.carried = net;
        }
        Ok(Some(change))
    }

    /// Applies `change` (decided earlier, its charge made if `due_now` > 0) if the
    /// subscription still decides the same at its time; `Ok(None)` if it does not (the
    /// subscription changed meanwhile: nothing is written). The new product's keys are
    /// `new_keys`; the keys in `dropped_keys` (of benefits the new product lacks) are
    /// queued for revocation.
    pub fn apply_plan_change(
        &self,
        change: &PlanChange,
        new_keys: &[LicenseKeyId],
        dropped_keys: &[LicenseKeyId],
        now: DateTime<Utc>,
    ) -> Result<Option<Subscription>, SubscriptionError> {
        match self.plan_change(&change.target, change.behavior, change.at)? {
            Some(again) if again == *change => {}
            _ => return Ok(None),
        }
        let t = &change.target;
        let mut next = self.clone();
        next.product_id = t.product_id;
        next.product_name = t.product_name.clone();
        next.price_id = t.price_id;
        next.amount = t.amount;
        next.seats = t.seats;
        next.currency = t.currency.clone().or(next.currency);
        next.recurring_interval = t.interval;
        next.recurring_interval_count = t.interval_count;
        if !t.keeps_discount {
            next.discount_id = None;
            next.discount_name = None;
        }
        if change.resets_cycle {
            // The current period ends at the change; the new one is `cycles` again,
            // counted from the change.
            next.current_period_start = change.period_start;
            next.current_period_end = Some(change.period_end);
            next.anchor_at = change.period_start;
            next.anchor_cycle = self.cycles;
        } else if self.status == SubscriptionStatus::Trialing && t.interval_count >= 1 {
            // The trial goes on; the paid periods after it follow the new interval.
            next.anchor_at = self.trial_end.unwrap_or(self.anchor_at);
        }
        next.proration_balance = self.proration_balance.saturating_add(change.carried);
        next.plan_changes = change.number;
        next.license_key_ids.retain(|k| !dropped_keys.contains(k));
        for k in new_keys {
            if !next.license_key_ids.contains(k) {
                next.license_key_ids.push(*k);
            }
        }
        union(&mut next.pending_revocations, dropped_keys);
        next.modified_at = Some(now);
        Ok(Some(next))
    }
}

/// How the charge of a change's `due_now` went through (written as its order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeCharge {
    /// The tax quoted for `due_now` before it was charged (its request carries the
    /// billing address the order records).
    pub tax: TaxQuote,
    /// The processor's payment (where a refund goes).
    pub payment_id: Option<String>,
}

impl Subscription {
    /// The order of a change that charged `due_now` (Polar's `subscription_update`), for
    /// the subscription as changed (`self`).
    pub fn change_order(
        &self,
        change: &PlanChange,
        charge: &ChangeCharge,
        now: DateTime<Utc>,
    ) -> Order {
        Order {
            id: change_order_id(self.id, change.number),
            organization_id: self.organization_id,
            created_at: now,
            modified_at: None,
            status: OrderStatus::Paid,
            // The net of the amount due (for an inclusive price, less the tax in it), when
            // the quote was made for it.
            amount: if charge.tax.request.amount == change.due_now {
                charge.tax.net_amount()
            } else {
                change.due_now
            },
            tax_amount: charge.tax.tax_amount,
            refunded_amount: 0,
            refunded_tax_amount: 0,
            currency: self
                .currency
                .clone()
                .unwrap_or_else(|| DEFAULT_CURRENCY.into()),
            billing_reason: BillingReason::SubscriptionUpdate,
            billing_address: charge.tax.request.buyer.address.clone(),
            customer_id: self.customer_id,
            product_id: self.product_id,
            product_price_id: self.price_id,
            recurring: true,
            discount_id: self.discount_id,
            subscription_id: Some(self.id),
            checkout_id: None,
            metadata: self.metadata.clone(),
            custom_field_data: self.custom_field_data.clone(),
            customer_email: self.customer_email.clone(),
            product_name: self.product_name.clone(),
            discount_name: self.discount_name.clone(),
            payment_id: charge.payment_id.clone(),
            refund_pending_amount: 0,
            refund_pending_tax_amount: 0,
            seats: self.seats,
            next_payment_attempt_at: None,
            last_payment: None,
            tax: charge.tax.order_tax(None),
            invoice: crate::domain::order::InvoiceState::None,
            usage_lines: Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "plan_change_tests.rs"]
mod tests;
