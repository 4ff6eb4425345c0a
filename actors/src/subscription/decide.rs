//! The subscription's rules as pure functions: no actor, no storage, no clock. Each takes
//! the subscription as it is, the command and `now`, and returns the subscription as it
//! must become, or why not: a purchase, cancel at the period end, uncancel, revoke, and
//! the bookkeeping of the key revocations. The renewal's rules are in `renewal.rs`.

use chrono::{DateTime, Utc};

use super::model::{union, Change, Purchase, Subscription, SubscriptionError, SubscriptionStatus};
use crate::domain::discount::amount_off;
use crate::domain::ids::{LicenseKeyId, SubscriptionId};
use crate::domain::product::PriceKind;

impl Subscription {
    /// A subscription paid at checkout: `active` from `now`, its first period `now` + one
    /// period (`interval_count` intervals), its amount the price's (or the chosen) amount
    /// less the discount. With a trial (`trial_end` after `now`) it is `trialing` instead:
    /// its first period is the trial, free, and the periods it pays for are counted from
    /// the trial's end.
    pub fn new_from_purchase(
        id: SubscriptionId,
        p: Purchase,
        now: DateTime<Utc>,
    ) -> Result<Subscription, SubscriptionError> {
        let interval = p
            .price
            .kind
            .interval()
            .ok_or(SubscriptionError::NotRecurring(p.price.id))?;
        let (base, currency) = match &p.price.kind {
            PriceKind::RecurringFixed {
                amount, currency, ..
            } => (Some(p.amount.unwrap_or(*amount)), Some(currency.clone())),
            // What the seats bought cost, each period.
            PriceKind::RecurringSeatBased { currency, .. } => (p.amount, Some(currency.clone())),
            _ => (None, None),
        };
        // Discounts only apply to fixed prices.
        let discount = p.discount.filter(|_| base.is_some());
        let amount = base.map(|a| a - discount.as_ref().map_or(0, |d| amount_off(&d.kind, a)));
        let count = p.interval_count.max(1);
        let trial_end = p.trial_end.filter(|end| *end > now);
        let (status, period_end, anchor_cycle) = match trial_end {
            Some(end) => (SubscriptionStatus::Trialing, end, 1),
            None => (SubscriptionStatus::Active, interval.add(now, count), 0),
        };
        Ok(Subscription {
            id,
            organization_id: p.organization_id,
            created_at: now,
            modified_at: None,
            amount,
            currency,
            recurring_interval: interval,
            status,
            current_period_start: now,
            current_period_end: Some(period_end),
            cancel_at_period_end: false,
            canceled_at: None,
            started_at: Some(now),
            ends_at: None,
            ended_at: None,
            customer_id: p.customer_id,
            product_id: p.product_id,
            price_id: p.price.id,
            discount_id: discount.as_ref().map(|d| d.id),
            checkout_id: p.checkout_id,
            metadata: p.metadata,
            custom_field_data: p.custom_field_data,
            customer_cancellation_reason: None,
            customer_cancellation_comment: None,
            license_key_ids: p.license_key_ids,
            pending_revocations: Vec::new(),
            cycles: 0,
            payment_token: p.payment_token,
            customer_email: p.customer_email,
            product_name: p.product_name,
            discount_name: discount.map(|d| d.name),
            recurring_interval_count: count,
            trial_start: trial_end.map(|_| now),
            trial_end,
            anchor_at: trial_end.unwrap_or(now),
            anchor_cycle,
            proration_balance: 0,
            plan_changes: 0,
            trial_reminded_for: None,
            seats: p.seats.filter(|_| p.price.kind.seat_tiers().is_some()),
            past_due_at: None,
            last_attempt_at: None,
            next_payment_attempt_at: None,
            buyer_attempts: 0,
            payment_lock_until: None,
            recovery_intent: None,
        })
    }

    /// Polar's `can_cancel`: active and not ended; for a cancel at the period end, also
    /// not already set to cancel.
    fn can_cancel(&self, immediately: bool) -> bool {
        if !self.status.is_active() || self.ended_at.is_some() {
            return false;
        }
        immediately || !(self.cancel_at_period_end || self.ends_at.is_some())
    }

    /// Applies a `PATCH` change.
    pub fn change(&self, change: Change, now: DateTime<Utc>) -> Result<Self, SubscriptionError> {
        match change {
            Change::CancelAtPeriodEnd { reason, comment } => {
                self.cancel_at_period_end(reason, comment, now)
            }
            Change::Uncancel => self.uncancel(now),
            Change::Revoke { reason, comment } => self.revoke(reason, comment, now),
        }
    }

    /// Sets the subscription to end at the period end (Stripe keeps it active until then).
    pub fn cancel_at_period_end(
        &self,
        reason: Option<String>,
        comment: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Self, SubscriptionError> {
        if !self.can_cancel(false) {
            return Err(SubscriptionError::AlreadyCanceled);
        }
        let mut next = self.clone();
        next.cancel_at_period_end = true;
        next.canceled_at = Some(now);
        next.ends_at = self.current_period_end;
        next.modified_at = Some(now);
        next.set_reason(reason, comment);
        Ok(next)
    }

    /// Undoes [`Self::cancel_at_period_end`] before the period ends.
    pub fn uncancel(&self, now: DateTime<Utc>) -> Result<Self, SubscriptionError> {
        if self.ended_at.is_some() {
            return Err(SubscriptionError::Ended);
        }
        if !(self.status.is_active() && self.cancel_at_period_end) {
            return Err(SubscriptionError::NotCanceling);
        }
        let mut next = self.clone();
        next.cancel_at_period_end = false;
        next.canceled_at = None;
        next.ends_at = None;
        next.customer_cancellation_reason = None;
        next.customer_cancellation_comment = None;
        next.modified_at = Some(now);
        Ok(next)
    }

    /// Ends the subscription now and queues the revocation of its keys.
    pub fn revoke(
        &self,
        reason: Option<String>,
        comment: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Self, SubscriptionError> {
        if !self.can_cancel(true) {
            return Err(SubscriptionError::AlreadyCanceled);
        }
        let mut next = self.clone();
        next.status = SubscriptionStatus::Canceled;
        next.canceled_at = Some(now);
        next.ends_at = Some(now);
        next.ended_at = Some(now);
        next.modified_at = Some(now);
        next.set_reason(reason, comment);
        union(&mut next.pending_revocations, &self.license_key_ids);
        Ok(next)
    }

    /// Polar keeps a reason or comment already given when a new request names none.
    fn set_reason(&mut self, reason: Option<String>, comment: Option<String>) {
        if reason.is_some() {
            self.customer_cancellation_reason = reason;
        }
        if comment.is_some() {
            self.customer_cancellation_comment = comment;
        }
    }

    /// Removes the keys whose revocation is done from the outbox; `None` if none of them
    /// was pending (nothing to write).
    pub fn clear_revocations(&self, done: &[LicenseKeyId], now: DateTime<Utc>) -> Option<Self> {
        if !self.pending_revocations.iter().any(|k| done.contains(k)) {
            return None;
        }
        let mut next = self.clone();
        next.pending_revocations.retain(|k| !done.contains(k));
        next.modified_at = Some(now);
        Some(next)
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
