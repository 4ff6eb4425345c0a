//! The subscription aggregate's pure state machine: no actor, no storage, no clock. Time
//! and the catalog terms a renewal needs come in as arguments.
//!
//! Statuses (Polar's, mirrored from Stripe): a purchase starts `active` with `started_at`
//! set. At `current_period_end` the subscription renews: the next period is charged and,
//! once paid, becomes the current one (`cycles` + 1). A declined renewal makes it
//! `past_due`; it is retried every [`RENEWAL_RETRY_DELAY`] and, when still declined
//! [`DUNNING_PERIOD`] after the period end, `canceled`. `cancel_at_period_end` (set and
//! unset while active) ends it at the period end instead of renewing; `revoke` ends it at
//! once. Whenever it ends, the license keys it granted move to `pending_revocations`, an
//! outbox the sweep empties through the license keys' actors.

use chrono::{DateTime, Duration, Months, Utc};
use serde::{Deserialize, Serialize};

use crate::checkout::{AppliedDiscount, Checkout};
use crate::domain::custom_field::CustomFieldData;
use crate::domain::customer::Address;
use crate::domain::discount::{amount_off, DiscountDuration};
use crate::domain::ids::{
    CheckoutId, CustomerId, DiscountId, LicenseKeyId, OrderId, OrganizationId, PriceId, ProductId,
    SubscriptionId,
};
use crate::domain::metadata::Metadata;
use crate::domain::order::{BillingReason, Order, OrderStatus, DEFAULT_CURRENCY};
use crate::domain::product::{Price, PriceKind, RecurringInterval};
use crate::ids::derived_uuid;

/// A past-due renewal is charged again this long after its last attempt.
pub const RENEWAL_RETRY_DELAY: Duration = Duration::days(3);
/// A renewal still declined this long after the period end cancels the subscription
/// (four attempts with the default retry delay, as Stripe's default retry schedule).
pub const DUNNING_PERIOD: Duration = Duration::days(9);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SubscriptionStatus {
    Incomplete,
    IncompleteExpired,
    Trialing,
    Active,
    PastDue,
    Canceled,
    Unpaid,
}

impl SubscriptionStatus {
    pub const ALL: &'static [SubscriptionStatus] = &[
        SubscriptionStatus::Incomplete,
        SubscriptionStatus::IncompleteExpired,
        SubscriptionStatus::Trialing,
        SubscriptionStatus::Active,
        SubscriptionStatus::PastDue,
        SubscriptionStatus::Canceled,
        SubscriptionStatus::Unpaid,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SubscriptionStatus::Incomplete => "incomplete",
            SubscriptionStatus::IncompleteExpired => "incomplete_expired",
            SubscriptionStatus::Trialing => "trialing",
            SubscriptionStatus::Active => "active",
            SubscriptionStatus::PastDue => "past_due",
            SubscriptionStatus::Canceled => "canceled",
            SubscriptionStatus::Unpaid => "unpaid",
        }
    }

    /// Polar's "active" group: benefits are granted.
    pub fn is_active(self) -> bool {
        matches!(
            self,
            SubscriptionStatus::Trialing | SubscriptionStatus::Active
        )
    }

    /// Polar's "revoked" group (the `active=false` list filter).
    pub fn is_revoked(self) -> bool {
        matches!(
            self,
            SubscriptionStatus::PastDue | SubscriptionStatus::Canceled | SubscriptionStatus::Unpaid
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subscription {
    pub id: SubscriptionId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// Per period, after any discount, before tax; `None` for a free price.
    pub amount: Option<i64>,
    pub currency: Option<String>,
    pub recurring_interval: RecurringInterval,
    pub status: SubscriptionStatus,
    pub current_period_start: DateTime<Utc>,
    pub current_period_end: Option<DateTime<Utc>>,
    pub cancel_at_period_end: bool,
    pub canceled_at: Option<DateTime<Utc>>,
    pub started_at: Option<DateTime<Utc>>,
    pub ends_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
    pub customer_id: CustomerId,
    pub product_id: ProductId,
    pub price_id: PriceId,
    pub discount_id: Option<DiscountId>,
    pub checkout_id: Option<CheckoutId>,
    pub metadata: Metadata,
    pub custom_field_data: CustomFieldData,
    pub customer_cancellation_reason: Option<String>,
    pub customer_cancellation_comment: Option<String>,
    /// The license keys this subscription granted (revoked when it ends).
    pub license_key_ids: Vec<LicenseKeyId>,
    /// Keys still to revoke after the subscription ended (an outbox: the revocation goes
    /// through each key's actor, and survives a crash in between).
    pub pending_revocations: Vec<LicenseKeyId>,
    /// Index of the current period: 0 for the one paid at checkout, + 1 per paid renewal.
    /// Renewal orders derive their ids from the subscription id and this.
    pub cycles: u32,
    /// The payment method renewals are charged with (the checkout's confirmation token).
    pub payment_token: Option<String>,
    /// Sort keys of the `customer`, `product` and `discount` orderings.
    pub customer_email: String,
    pub product_name: String,
    pub discount_name: Option<String>,
}

/// Why a subscription refused a command. The messages are Polar's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubscriptionError {
    /// Cancel or revoke of a subscription that is not active, already ended, or (cancel
    /// only) already set to cancel. Polar: 403 `AlreadyCanceledSubscription`.
    #[error("This subscription is already canceled or will be at the end of the period.")]
    AlreadyCanceled,
    /// Uncancel of a subscription that is not active and set to cancel. Polar: 400.
    #[error("Bad request")]
    NotCanceling,
    /// Uncancel of a subscription that has ended. Polar: 410 `ResourceUnavailable`.
    #[error("Unavailable")]
    Ended,
    /// A subscription was asked for a price that is not recurring.
    #[error("the price {0} is not recurring")]
    NotRecurring(PriceId),
    /// A renewal step that no longer matches the subscription (already applied, or
    /// planned against an older state): nothing to do.
    #[error("the renewal was already applied or is not due")]
    StaleRenewal,
    /// A renewal that needs a charge was applied without the charge's outcome.
    #[error("the renewal needs a payment outcome")]
    MissingOutcome,
}

/// Everything a purchase tells a new subscription (the checkout engineer's entry point;
/// [`Purchase::from_checkout`] fills it from a settled checkout).
#[derive(Debug, Clone, PartialEq)]
pub struct Purchase {
    pub organization_id: OrganizationId,
    pub customer_id: CustomerId,
    pub customer_email: String,
    pub product_id: ProductId,
    pub product_name: String,
    /// The recurring price sold.
    pub price: Price,
    /// Per period before the discount (the checkout's `amount`); `None` takes the price's.
    pub amount: Option<i64>,
    pub discount: Option<AppliedDiscount>,
    pub checkout_id: Option<CheckoutId>,
    pub metadata: Metadata,
    pub custom_field_data: CustomFieldData,
    /// Renewals are charged with it.
    pub payment_token: Option<String>,
    /// The keys granted with the purchase, revoked when the subscription ends.
    pub license_key_ids: Vec<LicenseKeyId>,
}

impl Purchase {
    /// The purchase a settled checkout made. `payment_token` is the confirmation token the
    /// checkout was charged with (a succeeded checkout no longer holds it).
    pub fn from_checkout(
        checkout: &Checkout,
        customer_id: CustomerId,
        customer_email: &str,
        product_name: &str,
        payment_token: Option<String>,
        license_key_ids: Vec<LicenseKeyId>,
    ) -> Purchase {
        Purchase {
            organization_id: checkout.organization_id,
            customer_id,
            customer_email: customer_email.to_string(),
            product_id: checkout.product_id,
            product_name: product_name.to_string(),
            price: checkout.price.clone(),
            amount: checkout.amount,
            discount: checkout.discount.clone(),
            checkout_id: Some(checkout.id),
            metadata: checkout.metadata.clone(),
            custom_field_data: checkout.custom_field_data.clone(),
            payment_token,
            license_key_ids,
        }
    }
}

/// What a renewal needs from the catalog, read when it is planned: prices never change
/// their amount (a new price replaces them), and a discount's duration cannot change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenewalTerms {
    /// The price's amount per period before any discount; `None` for a free price.
    pub price_amount: Option<i64>,
    /// The duration of the subscription's discount; `None` if it has none or the record
    /// is gone (the current amount is then kept).
    pub discount_duration: Option<DiscountDuration>,
}

/// The next renewal step of a subscription at a given time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenewalPlan {
    NotDue,
    /// `cancel_at_period_end` and the period is over: the subscription ends, no charge.
    End,
    Charge(RenewalCharge),
}

/// The charge of the period `cycle`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenewalCharge {
    /// The period this charge pays for (`cycles + 1`).
    pub cycle: u32,
    /// Before tax; 0 for a free subscription (nothing to charge, an order of 0 is still
    /// written, as Stripe's zero invoices make Polar do).
    pub amount: i64,
    pub currency: String,
    /// The subscription's discount applies to this period.
    pub discounted: bool,
    /// `<subscription id>:<cycle>` for the first attempt, with `:<last attempt time>`
    /// appended for retries: a retried charge of the same attempt can never be taken twice.
    pub idempotency_key: String,
    pub payment_token: Option<String>,
    pub customer_id: CustomerId,
    pub customer_email: String,
}

/// How the charge of a renewal ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentOutcome {
    Paid {
        tax_amount: i64,
        billing_address: Option<Address>,
    },
    Declined,
}

/// The state after a renewal step, and the order it wrote (paid renewals only).
#[derive(Debug, Clone, PartialEq)]
pub struct Renewal {
    pub subscription: Subscription,
    pub order: Option<Order>,
}

/// A field change of `PATCH /v1/subscriptions/{id}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// `cancel_at_period_end: true`.
    CancelAtPeriodEnd {
        reason: Option<String>,
        comment: Option<String>,
    },
    /// `cancel_at_period_end: false`.
    Uncancel,
    /// `revoke: true`: ends now.
    Revoke {
        reason: Option<String>,
        comment: Option<String>,
    },
}

/// `start + n` intervals, counted from `start` so that month ends do not drift
/// (Jan 31 → Feb 28 → Mar 31).
pub fn add_intervals(start: DateTime<Utc>, interval: RecurringInterval, n: u32) -> DateTime<Utc> {
    let months = match interval {
        RecurringInterval::Month => n,
        RecurringInterval::Year => n.saturating_mul(12),
    };
    start
        .checked_add_months(Months::new(months))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// The id of the renewal order of period `cycle`: derived, so a retried renewal write can
/// never create a second order.
pub fn renewal_order_id(subscription: SubscriptionId, cycle: u32) -> OrderId {
    OrderId(derived_uuid(subscription.0, &format!("renewal:{cycle}")))
}

fn union(into: &mut Vec<LicenseKeyId>, keys: &[LicenseKeyId]) {
    for k in keys {
        if !into.contains(k) {
            into.push(*k);
        }
    }
}

impl Subscription {
    /// A subscription paid at checkout: `active` from `now`, its first period `now` + one
    /// interval, its amount the price's (or the chosen) amount less the discount.
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
            _ => (None, None),
        };
        // Discounts only apply to fixed prices.
        let discount = p.discount.filter(|_| base.is_some());
        let amount = base.map(|a| a - discount.as_ref().map_or(0, |d| amount_off(&d.kind, a)));
        Ok(Subscription {
            id,
            organization_id: p.organization_id,
            created_at: now,
            modified_at: None,
            amount,
            currency,
            recurring_interval: interval,
            status: SubscriptionStatus::Active,
            current_period_start: now,
            current_period_end: Some(add_intervals(now, interval, 1)),
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
        })
    }

    /// Where the billing periods are counted from.
    fn anchor(&self) -> DateTime<Utc> {
        self.started_at.unwrap_or(self.current_period_start)
    }

    /// When the renewal (or the end) is due: the period end while active, the next retry
    /// while past due; `None` once ended or not started.
    pub fn due_at(&self) -> Option<DateTime<Utc>> {
        if self.ended_at.is_some() || self.started_at.is_none() {
            return None;
        }
        match self.status {
            SubscriptionStatus::Active | SubscriptionStatus::Trialing => self.current_period_end,
            SubscriptionStatus::PastDue => {
                let last = self.modified_at.unwrap_or(self.current_period_start);
                let retry = last + RENEWAL_RETRY_DELAY;
                Some(self.current_period_end.map_or(retry, |end| retry.max(end)))
            }
            _ => None,
        }
    }

    /// Whether the discount still applies to the period starting at `start`.
    fn discount_applies(&self, start: DateTime<Utc>, terms: &RenewalTerms) -> bool {
        if self.discount_id.is_none() {
            return false;
        }
        match terms.discount_duration {
            // The record is gone: keep what the subscription has.
            None | Some(DiscountDuration::Forever) => true,
            Some(DiscountDuration::Once) => start <= self.anchor(),
            Some(DiscountDuration::Repeating { months }) => {
                let months = u32::try_from(months.max(0)).unwrap_or(u32::MAX);
                let until = self
                    .anchor()
                    .checked_add_months(Months::new(months))
                    .unwrap_or(DateTime::<Utc>::MAX_UTC);
                start < until
            }
        }
    }

    /// The next renewal step at `now`.
    pub fn plan_renewal(&self, now: DateTime<Utc>, terms: &RenewalTerms) -> RenewalPlan {
        match self.due_at() {
            Some(due) if due <= now => {}
            _ => return RenewalPlan::NotDue,
        }
        if self.cancel_at_period_end && self.status.is_active() {
            return RenewalPlan::End;
        }
        let cycle = self.cycles.saturating_add(1);
        let start = add_intervals(self.anchor(), self.recurring_interval, cycle);
        let discounted = self.discount_applies(start, terms);
        let amount = if discounted || self.discount_id.is_none() {
            self.amount
        } else {
            terms.price_amount.or(self.amount)
        };
        let idempotency_key = match (self.status, self.modified_at) {
            (SubscriptionStatus::PastDue, Some(last)) => {
                format!("{}:{cycle}:{}", self.id, last.timestamp_micros())
            }
            _ => format!("{}:{cycle}", self.id),
        };
        RenewalPlan::Charge(RenewalCharge {
            cycle,
            amount: amount.unwrap_or(0).max(0),
            currency: self
                .currency
                .clone()
                .unwrap_or_else(|| DEFAULT_CURRENCY.into()),
            discounted,
            idempotency_key,
            payment_token: self.payment_token.clone(),
            customer_id: self.customer_id,
            customer_email: self.customer_email.clone(),
        })
    }

    /// Applies the renewal step due at `now` with the charge's outcome (ignored when the
    /// subscription ends at the period end):
    /// - `cancel_at_period_end` → `canceled`, ended at the period end, keys to revoke;
    /// - paid → the next period, `cycles` + 1, `active`, and the renewal order; the
    ///   amount loses a discount that no longer applies;
    /// - declined → `past_due` (retried later), or `canceled` with the keys to revoke once
    ///   [`DUNNING_PERIOD`] has passed since the period end.
    pub fn renew(
        &self,
        now: DateTime<Utc>,
        terms: &RenewalTerms,
        outcome: Option<PaymentOutcome>,
    ) -> Result<Renewal, SubscriptionError> {
        let charge = match self.plan_renewal(now, terms) {
            RenewalPlan::NotDue => return Err(SubscriptionError::StaleRenewal),
            RenewalPlan::End => {
                let mut next = self.clone();
                let end = self.current_period_end.unwrap_or(now);
                next.status = SubscriptionStatus::Canceled;
                next.ended_at = Some(end);
                next.ends_at = Some(end);
                next.canceled_at = next.canceled_at.or(Some(now));
                next.modified_at = Some(now);
                union(&mut next.pending_revocations, &self.license_key_ids);
                return Ok(Renewal {
                    subscription: next,
                    order: None,
                });
            }
            RenewalPlan::Charge(charge) => charge,
        };
        let mut next = self.clone();
        next.modified_at = Some(now);
        match outcome.ok_or(SubscriptionError::MissingOutcome)? {
            PaymentOutcome::Paid {
                tax_amount,
                billing_address,
            } => {
                let order = self.renewal_order(&charge, tax_amount, billing_address, now);
                next.cycles = charge.cycle;
                next.current_period_start =
                    add_intervals(self.anchor(), self.recurring_interval, charge.cycle);
                next.current_period_end = Some(add_intervals(
                    self.anchor(),
                    self.recurring_interval,
                    charge.cycle.saturating_add(1),
                ));
                next.status = SubscriptionStatus::Active;
                if !charge.discounted && self.discount_id.is_some() {
                    next.discount_id = None;
                    next.discount_name = None;
                    next.amount = terms.price_amount.or(self.amount);
                }
                Ok(Renewal {
                    subscription: next,
                    order: Some(order),
                })
            }
            PaymentOutcome::Declined => {
                let given_up = self
                    .current_period_end
                    .is_some_and(|end| now >= end + DUNNING_PERIOD);
                if given_up {
                    next.status = SubscriptionStatus::Canceled;
                    next.ended_at = Some(now);
                    next.ends_at = Some(now);
                    next.canceled_at = next.canceled_at.or(Some(now));
                    union(&mut next.pending_revocations, &self.license_key_ids);
                } else {
                    next.status = SubscriptionStatus::PastDue;
                }
                Ok(Renewal {
                    subscription: next,
                    order: None,
                })
            }
        }
    }

    /// The order of a paid renewal, as the subscription was when it was charged.
    pub fn renewal_order(
        &self,
        charge: &RenewalCharge,
        tax_amount: i64,
        billing_address: Option<Address>,
        now: DateTime<Utc>,
    ) -> Order {
        let discount_id = self.discount_id.filter(|_| charge.discounted);
        Order {
            id: renewal_order_id(self.id, charge.cycle),
            organization_id: self.organization_id,
            created_at: now,
            modified_at: None,
            status: OrderStatus::Paid,
            amount: charge.amount,
            tax_amount,
            refunded_amount: 0,
            refunded_tax_amount: 0,
            currency: charge.currency.clone(),
            billing_reason: BillingReason::SubscriptionCycle,
            billing_address,
            customer_id: self.customer_id,
            product_id: self.product_id,
            product_price_id: self.price_id,
            recurring: true,
            discount_id,
            subscription_id: Some(self.id),
            checkout_id: None,
            metadata: self.metadata.clone(),
            custom_field_data: self.custom_field_data.clone(),
            customer_email: self.customer_email.clone(),
            product_name: self.product_name.clone(),
            discount_name: self.discount_name.clone().filter(|_| charge.discounted),
        }
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
mod tests {
    use super::*;
    use crate::domain::discount::DiscountKind;
    use chrono::TimeZone;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 1, 31, 12, 0, 0).unwrap()
    }

    fn monthly_price(amount: i64) -> Price {
        Price {
            id: PriceId::new(),
            created_at: t0(),
            modified_at: None,
            is_archived: false,
            kind: PriceKind::RecurringFixed {
                interval: RecurringInterval::Month,
                currency: "usd".into(),
                amount,
            },
        }
    }

    fn purchase(price: Price) -> Purchase {
        Purchase {
            organization_id: OrganizationId::new(),
            customer_id: CustomerId::new(),
            customer_email: "jane@example.com".into(),
            product_id: ProductId::new(),
            product_name: "Pro".into(),
            price,
            amount: None,
            discount: None,
            checkout_id: Some(CheckoutId::new()),
            metadata: Metadata::default(),
            custom_field_data: CustomFieldData::default(),
            payment_token: Some("tok_visa".into()),
            license_key_ids: vec![LicenseKeyId::new(), LicenseKeyId::new()],
        }
    }

    fn discount(kind: DiscountKind, duration: DiscountDuration) -> AppliedDiscount {
        AppliedDiscount {
            id: DiscountId::new(),
            name: "Launch".into(),
            code: None,
            kind,
            duration,
        }
    }

    fn active(amount: i64) -> Subscription {
        Subscription::new_from_purchase(
            SubscriptionId::new(),
            purchase(monthly_price(amount)),
            t0(),
        )
        .unwrap()
    }

    fn terms(price_amount: i64, duration: Option<DiscountDuration>) -> RenewalTerms {
        RenewalTerms {
            price_amount: Some(price_amount),
            discount_duration: duration,
        }
    }

    fn paid() -> Option<PaymentOutcome> {
        Some(PaymentOutcome::Paid {
            tax_amount: 0,
            billing_address: None,
        })
    }

    /// The end of the current period plus a minute.
    fn after_period(s: &Subscription) -> DateTime<Utc> {
        s.current_period_end.unwrap() + Duration::minutes(1)
    }

    fn charge(plan: RenewalPlan) -> RenewalCharge {
        match plan {
            RenewalPlan::Charge(c) => c,
            other => panic!("expected a charge, got {other:?}"),
        }
    }

    #[test]
    fn a_purchase_starts_active_for_one_calendar_period() {
        let s = active(1500);
        assert_eq!(s.status, SubscriptionStatus::Active);
        assert_eq!(s.started_at, Some(t0()));
        assert_eq!(s.current_period_start, t0());
        // Jan 31 + 1 month is the last day of February.
        assert_eq!(
            s.current_period_end,
            Some(Utc.with_ymd_and_hms(2025, 2, 28, 12, 0, 0).unwrap())
        );
        assert_eq!((s.amount, s.currency.as_deref()), (Some(1500), Some("usd")));
        assert_eq!(s.cycles, 0);
        assert_eq!(s.due_at(), s.current_period_end);

        let mut yearly = monthly_price(12000);
        yearly.kind = PriceKind::RecurringFixed {
            interval: RecurringInterval::Year,
            currency: "usd".into(),
            amount: 12000,
        };
        let y =
            Subscription::new_from_purchase(SubscriptionId::new(), purchase(yearly), t0()).unwrap();
        assert_eq!(
            y.current_period_end,
            Some(Utc.with_ymd_and_hms(2026, 1, 31, 12, 0, 0).unwrap())
        );
    }

    #[test]
    fn a_purchase_takes_the_discount_and_refuses_one_time_prices() {
        let mut p = purchase(monthly_price(1000));
        p.discount = Some(discount(
            DiscountKind::Percentage { basis_points: 2500 },
            DiscountDuration::Forever,
        ));
        let s = Subscription::new_from_purchase(SubscriptionId::new(), p.clone(), t0()).unwrap();
        assert_eq!(s.amount, Some(750));
        assert_eq!(s.discount_name.as_deref(), Some("Launch"));
        assert!(s.discount_id.is_some());

        let free = Price {
            kind: PriceKind::RecurringFree {
                interval: RecurringInterval::Month,
            },
            ..monthly_price(0)
        };
        let mut f = p.clone();
        f.price = free;
        let s = Subscription::new_from_purchase(SubscriptionId::new(), f, t0()).unwrap();
        assert_eq!((s.amount, s.currency.clone()), (None, None));
        assert_eq!(s.discount_id, None, "discounts only apply to fixed prices");

        let mut one_time = p;
        one_time.price.kind = PriceKind::OneTimeFixed {
            currency: "usd".into(),
            amount: 100,
        };
        let id = one_time.price.id;
        assert_eq!(
            Subscription::new_from_purchase(SubscriptionId::new(), one_time, t0()),
            Err(SubscriptionError::NotRecurring(id))
        );
    }

    #[test]
    fn nothing_is_due_before_the_period_end() {
        let s = active(1500);
        let before = s.current_period_end.unwrap() - Duration::seconds(1);
        assert_eq!(
            s.plan_renewal(before, &terms(1500, None)),
            RenewalPlan::NotDue
        );
        assert_eq!(
            s.renew(before, &terms(1500, None), paid()).err(),
            Some(SubscriptionError::StaleRenewal)
        );
    }

    #[test]
    fn a_paid_renewal_moves_to_the_next_period_and_writes_the_order() {
        let s = active(1500);
        let now = after_period(&s);
        let c = charge(s.plan_renewal(now, &terms(1500, None)));
        assert_eq!(c.cycle, 1);
        assert_eq!(c.amount, 1500);
        assert_eq!(c.idempotency_key, format!("{}:1", s.id));
        assert_eq!(c.payment_token.as_deref(), Some("tok_visa"));

        let r = s
            .renew(
                now,
                &terms(1500, None),
                Some(PaymentOutcome::Paid {
                    tax_amount: 300,
                    billing_address: None,
                }),
            )
            .unwrap();
        let next = &r.subscription;
        assert_eq!(next.cycles, 1);
        assert_eq!(next.status, SubscriptionStatus::Active);
        assert_eq!(next.current_period_start, s.current_period_end.unwrap());
        // Counted from the anchor: Jan 31 → Feb 28 → Mar 31.
        assert_eq!(
            next.current_period_end,
            Some(Utc.with_ymd_and_hms(2025, 3, 31, 12, 0, 0).unwrap())
        );
        let order = r.order.unwrap();
        assert_eq!(order.id, renewal_order_id(s.id, 1));
        assert_eq!(order.billing_reason, BillingReason::SubscriptionCycle);
        assert_eq!((order.amount, order.tax_amount), (1500, 300));
        assert_eq!(order.subscription_id, Some(s.id));
        assert!(order.recurring);
        assert_eq!(order.checkout_id, None);

        // The same step cannot be applied twice.
        assert_eq!(
            next.renew(now, &terms(1500, None), paid()).err(),
            Some(SubscriptionError::StaleRenewal)
        );
        let c2 = charge(next.plan_renewal(after_period(next), &terms(1500, None)));
        assert_eq!(c2.cycle, 2);
        assert_ne!(renewal_order_id(s.id, 2), order.id);
    }

    #[test]
    fn a_renewal_without_an_outcome_is_refused() {
        let s = active(1500);
        assert_eq!(
            s.renew(after_period(&s), &terms(1500, None), None).err(),
            Some(SubscriptionError::MissingOutcome)
        );
    }

    #[test]
    fn a_declined_renewal_is_past_due_then_retried_then_canceled() {
        let s = active(1500);
        let end = s.current_period_end.unwrap();
        let t = terms(1500, None);
        let r = s.renew(end, &t, Some(PaymentOutcome::Declined)).unwrap();
        assert!(r.order.is_none());
        let past_due = r.subscription;
        assert_eq!(past_due.status, SubscriptionStatus::PastDue);
        assert_eq!(past_due.cycles, 0, "the period does not move until paid");
        assert_eq!(past_due.current_period_end, Some(end));
        assert!(past_due.pending_revocations.is_empty());
        assert_eq!(past_due.due_at(), Some(end + RENEWAL_RETRY_DELAY));
        assert_eq!(
            past_due.plan_renewal(end + Duration::days(1), &t),
            RenewalPlan::NotDue
        );
        let retry = charge(past_due.plan_renewal(end + RENEWAL_RETRY_DELAY, &t));
        assert_eq!(retry.cycle, 1);
        assert_ne!(retry.idempotency_key, format!("{}:1", s.id));

        // A retry that succeeds makes it active again, with the period it paid.
        let ok = past_due
            .renew(end + RENEWAL_RETRY_DELAY, &t, paid())
            .unwrap();
        assert_eq!(ok.subscription.status, SubscriptionStatus::Active);
        assert_eq!(ok.subscription.cycles, 1);
        assert_eq!(ok.subscription.current_period_start, end);
        assert!(ok.order.is_some());

        // Still declined after the dunning period: canceled, keys to revoke.
        let late = end + DUNNING_PERIOD;
        let mut still = past_due.clone();
        still.modified_at = Some(late - RENEWAL_RETRY_DELAY);
        let gone = still
            .renew(late, &t, Some(PaymentOutcome::Declined))
            .unwrap()
            .subscription;
        assert_eq!(gone.status, SubscriptionStatus::Canceled);
        assert_eq!(gone.ended_at, Some(late));
        assert_eq!(gone.pending_revocations, s.license_key_ids);
        assert_eq!(gone.due_at(), None);
    }

    #[test]
    fn cancel_at_period_end_ends_at_the_period_end_without_a_charge() {
        let s = active(1500);
        let now = t0() + Duration::days(3);
        let c = s
            .cancel_at_period_end(Some("too_expensive".into()), None, now)
            .unwrap();
        assert!(c.cancel_at_period_end);
        assert_eq!(c.status, SubscriptionStatus::Active);
        assert_eq!(c.canceled_at, Some(now));
        assert_eq!(c.ends_at, s.current_period_end);
        assert_eq!(
            c.customer_cancellation_reason.as_deref(),
            Some("too_expensive")
        );

        let end = c.current_period_end.unwrap();
        assert_eq!(c.plan_renewal(end, &terms(1500, None)), RenewalPlan::End);
        let r = c.renew(end, &terms(1500, None), None).unwrap();
        assert!(r.order.is_none());
        let ended = r.subscription;
        assert_eq!(ended.status, SubscriptionStatus::Canceled);
        assert_eq!(ended.ended_at, Some(end));
        assert_eq!(ended.ends_at, Some(end));
        assert_eq!(ended.canceled_at, Some(now));
        assert_eq!(ended.pending_revocations, s.license_key_ids);
        assert_eq!(ended.due_at(), None);
        assert_eq!(
            ended.plan_renewal(end + Duration::days(40), &terms(1500, None)),
            RenewalPlan::NotDue
        );
    }

    #[test]
    fn cancel_is_refused_twice_and_when_not_active() {
        let s = active(1500);
        let c = s.cancel_at_period_end(None, None, t0()).unwrap();
        assert_eq!(
            c.cancel_at_period_end(None, None, t0()),
            Err(SubscriptionError::AlreadyCanceled)
        );
        let mut past_due = s.clone();
        past_due.status = SubscriptionStatus::PastDue;
        assert_eq!(
            past_due.cancel_at_period_end(None, None, t0()),
            Err(SubscriptionError::AlreadyCanceled)
        );
        let revoked = s.revoke(None, None, t0()).unwrap();
        assert_eq!(
            revoked.cancel_at_period_end(None, None, t0()),
            Err(SubscriptionError::AlreadyCanceled)
        );
    }

    #[test]
    fn uncancel_clears_the_cancellation_and_is_refused_otherwise() {
        let s = active(1500);
        let c = s
            .cancel_at_period_end(Some("unused".into()), Some("meh".into()), t0())
            .unwrap();
        let u = c.uncancel(t0() + Duration::days(1)).unwrap();
        assert!(!u.cancel_at_period_end);
        assert_eq!((u.canceled_at, u.ends_at), (None, None));
        assert_eq!(u.customer_cancellation_reason, None);
        assert_eq!(u.customer_cancellation_comment, None);
        assert_eq!(u.due_at(), s.current_period_end);

        assert_eq!(s.uncancel(t0()), Err(SubscriptionError::NotCanceling));
        let revoked = c.revoke(None, None, t0()).unwrap();
        assert_eq!(revoked.uncancel(t0()), Err(SubscriptionError::Ended));
    }

    #[test]
    fn revoke_ends_now_and_queues_the_keys() {
        let s = active(1500);
        let now = t0() + Duration::days(10);
        let r = s.revoke(None, Some("bye".into()), now).unwrap();
        assert_eq!(r.status, SubscriptionStatus::Canceled);
        assert_eq!(
            (r.canceled_at, r.ended_at, r.ends_at),
            (Some(now), Some(now), Some(now))
        );
        assert_eq!(r.pending_revocations, s.license_key_ids);
        assert_eq!(r.customer_cancellation_comment.as_deref(), Some("bye"));
        assert_eq!(r.due_at(), None);
        // A subscription set to cancel can still be revoked at once; an ended one cannot.
        let c = s.cancel_at_period_end(None, None, t0()).unwrap();
        assert!(c.revoke(None, None, now).is_ok());
        assert_eq!(
            r.revoke(None, None, now),
            Err(SubscriptionError::AlreadyCanceled)
        );
        let mut past_due = s;
        past_due.status = SubscriptionStatus::PastDue;
        assert_eq!(
            past_due.revoke(None, None, now),
            Err(SubscriptionError::AlreadyCanceled)
        );
    }

    #[test]
    fn clear_revocations_removes_only_the_done_keys() {
        let s = active(1500);
        let r = s.revoke(None, None, t0()).unwrap();
        let first = r.pending_revocations[0];
        let left = r.clear_revocations(&[first], t0()).unwrap();
        assert_eq!(left.pending_revocations, vec![r.pending_revocations[1]]);
        assert_eq!(left.clear_revocations(&[first], t0()), None);
        let none = left
            .clear_revocations(&left.pending_revocations.clone(), t0())
            .unwrap();
        assert!(none.pending_revocations.is_empty());
    }

    #[test]
    fn a_once_discount_applies_to_the_first_period_only() {
        let mut p = purchase(monthly_price(1000));
        p.discount = Some(discount(
            DiscountKind::Fixed {
                amount: 300,
                currency: "usd".into(),
            },
            DiscountDuration::Once,
        ));
        let s = Subscription::new_from_purchase(SubscriptionId::new(), p, t0()).unwrap();
        assert_eq!(s.amount, Some(700));
        let t = terms(1000, Some(DiscountDuration::Once));
        let now = after_period(&s);
        let c = charge(s.plan_renewal(now, &t));
        assert_eq!((c.amount, c.discounted), (1000, false));
        let r = s.renew(now, &t, paid()).unwrap();
        assert_eq!(r.subscription.amount, Some(1000));
        assert_eq!(r.subscription.discount_id, None);
        assert_eq!(r.subscription.discount_name, None);
        let order = r.order.unwrap();
        assert_eq!((order.amount, order.discount_id), (1000, None));
    }

    #[test]
    fn a_forever_discount_is_kept() {
        let mut p = purchase(monthly_price(1000));
        p.discount = Some(discount(
            DiscountKind::Percentage { basis_points: 1000 },
            DiscountDuration::Forever,
        ));
        let mut s = Subscription::new_from_purchase(SubscriptionId::new(), p, t0()).unwrap();
        let t = terms(1000, Some(DiscountDuration::Forever));
        for _ in 0..3 {
            let r = s.renew(after_period(&s), &t, paid()).unwrap();
            let order = r.order.unwrap();
            assert_eq!(order.amount, 900);
            assert_eq!(order.discount_id, s.discount_id);
            assert_eq!(order.discount_name.as_deref(), Some("Launch"));
            s = r.subscription;
        }
        assert_eq!(s.amount, Some(900));
        assert!(s.discount_id.is_some());
    }

    #[test]
    fn a_repeating_discount_lasts_its_months_worth_of_periods() {
        let mut p = purchase(monthly_price(1000));
        p.discount = Some(discount(
            DiscountKind::Fixed {
                amount: 100,
                currency: "usd".into(),
            },
            DiscountDuration::Repeating { months: 3 },
        ));
        let mut s =
            Subscription::new_from_purchase(SubscriptionId::new(), p.clone(), t0()).unwrap();
        let t = terms(1000, Some(DiscountDuration::Repeating { months: 3 }));
        // Periods 0, 1 and 2 are discounted; period 3 is not.
        let mut amounts = Vec::new();
        for _ in 0..4 {
            let r = s.renew(after_period(&s), &t, paid()).unwrap();
            amounts.push(r.order.unwrap().amount);
            s = r.subscription;
        }
        assert_eq!(amounts, vec![900, 900, 1000, 1000]);
        assert_eq!(s.discount_id, None);

        // Yearly: 13 months cover the first two yearly periods.
        p.price.kind = PriceKind::RecurringFixed {
            interval: RecurringInterval::Year,
            currency: "usd".into(),
            amount: 1000,
        };
        let mut y = Subscription::new_from_purchase(SubscriptionId::new(), p, t0()).unwrap();
        let t = terms(1000, Some(DiscountDuration::Repeating { months: 13 }));
        let mut amounts = Vec::new();
        for _ in 0..2 {
            let r = y.renew(after_period(&y), &t, paid()).unwrap();
            amounts.push(r.order.unwrap().amount);
            y = r.subscription;
        }
        assert_eq!(amounts, vec![900, 1000]);
    }

    #[test]
    fn a_free_subscription_renews_with_a_zero_order() {
        let free = Price {
            kind: PriceKind::RecurringFree {
                interval: RecurringInterval::Month,
            },
            ..monthly_price(0)
        };
        let s =
            Subscription::new_from_purchase(SubscriptionId::new(), purchase(free), t0()).unwrap();
        let t = RenewalTerms::default();
        let c = charge(s.plan_renewal(after_period(&s), &t));
        assert_eq!((c.amount, c.currency.as_str()), (0, DEFAULT_CURRENCY));
        let r = s.renew(after_period(&s), &t, paid()).unwrap();
        assert_eq!(r.order.unwrap().amount, 0);
        assert_eq!(r.subscription.amount, None);
    }

    #[test]
    fn statuses_group_as_polar_does() {
        let active: Vec<_> = SubscriptionStatus::ALL
            .iter()
            .filter(|s| s.is_active())
            .map(|s| s.as_str())
            .collect();
        let revoked: Vec<_> = SubscriptionStatus::ALL
            .iter()
            .filter(|s| s.is_revoked())
            .map(|s| s.as_str())
            .collect();
        assert_eq!(active, vec!["trialing", "active"]);
        assert_eq!(revoked, vec!["past_due", "canceled", "unpaid"]);
    }
}
