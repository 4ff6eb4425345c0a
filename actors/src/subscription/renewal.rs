//! Renewal billing of a subscription: its types and rules, time passed in.
//!
//! Its billing periods (counted from the start so that month ends do not drift), when the
//! next renewal or end is due, what a renewal charges (and whether the discount still
//! applies to that period), the dunning schedule of a declined renewal, and the order a
//! paid renewal writes. The subscription's other commands (purchase, cancel, uncancel,
//! revoke) are decided in [`super::decide`].

use chrono::{DateTime, Duration, Months, Utc};

use crate::domain::customer::Address;
use crate::domain::discount::DiscountDuration;
use crate::domain::ids::{CustomerId, OrderId, SubscriptionId};
use crate::domain::order::{BillingReason, Order, OrderStatus, UsageLine, DEFAULT_CURRENCY};
use crate::domain::product::RecurringInterval;
use crate::ids::derived_uuid;
use crate::tax::TaxQuote;

use super::model::{union, Subscription, SubscriptionError, SubscriptionStatus};

/// A past-due renewal is charged again this long after its last attempt.
pub const RENEWAL_RETRY_DELAY: Duration = Duration::days(3);
/// A renewal still declined this long after the period end cancels the subscription
/// (four attempts with the default retry delay, as Stripe's default retry schedule).
pub const DUNNING_PERIOD: Duration = Duration::days(9);

/// What a renewal needs from the catalog, read when it is planned: prices never change
/// their amount (a new price replaces them), and a discount's duration cannot change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenewalTerms {
    /// The price's amount per period before any discount; `None` for a free price.
    pub price_amount: Option<i64>,
    /// The duration of the subscription's discount; `None` if it has none or the record
    /// is gone (the current amount is then kept).
    pub discount_duration: Option<DiscountDuration>,
    /// The usage of the ending period, one line per metered price of the subscription,
    /// as the application measured it (its usage window closed once per period, so that
    /// every retry of the charge bills the same); billed in arrears beside the next
    /// period's fixed price, never discounted.
    pub usage: Vec<UsageLine>,
}

/// The next renewal step of a subscription at a given time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenewalPlan {
    NotDue,
    /// A paid trial ends soon: the buyer is reminded of the first charge (once per trial
    /// end; nothing is charged).
    RemindTrial {
        trial_end: DateTime<Utc>,
    },
    /// `cancel_at_period_end` and the period is over: the subscription ends, no charge
    /// (its last period used nothing billable; otherwise the plan is its final charge,
    /// see [`Subscription::final_charge`]).
    End,
    Charge(RenewalCharge),
}

/// The charge of the period `cycle`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenewalCharge {
    /// The period this charge pays for (`cycles + 1`).
    pub cycle: u32,
    /// Before tax; 0 for a free subscription (nothing to charge, an order of 0 is still
    /// written, as Stripe's zero invoices make Polar do). Includes the prorations carried
    /// from plan changes (`balance_applied`).
    pub amount: i64,
    /// The part of `amount` that is the subscription's `proration_balance` (negative: a
    /// credit taken off; never more than the period's own amount).
    pub balance_applied: i64,
    pub currency: String,
    /// The subscription's discount applies to this period.
    pub discounted: bool,
    /// The ended period's usage, included in `amount` (see [`RenewalTerms::usage`]).
    pub usage: Vec<UsageLine>,
    /// `<subscription id>:<cycle>` for the first attempt, with `:<last attempt time>`
    /// (`last_attempt_at`) appended for retries: a retried charge of the same attempt can never be taken twice.
    pub idempotency_key: String,
    pub payment_token: Option<String>,
    pub customer_id: CustomerId,
    pub customer_email: String,
}

/// How the charge of a renewal ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentOutcome {
    Paid {
        /// The tax quoted for the charge, before it was made (its request carries the
        /// billing address the order records).
        tax: Box<TaxQuote>,
        /// The processor's payment (where a refund of the renewal goes).
        payment_id: Option<String>,
    },
    Declined,
}

/// The state after a renewal step, and the order it wrote (paid renewals only).
#[derive(Debug, Clone, PartialEq)]
pub struct Renewal {
    pub subscription: Subscription,
    pub order: Option<Order>,
}

/// `start + n` intervals, counted from `start` so that month ends do not drift
/// (Jan 31 → Feb 28 → Mar 31): [`RecurringInterval::add`].
pub fn add_intervals(start: DateTime<Utc>, interval: RecurringInterval, n: u32) -> DateTime<Utc> {
    interval.add(start, n)
}

/// How long before a trial's end its reminder goes out: 3 days for a trial of 3 days or
/// more, 1 day for a shorter one of at least a day, none below (Polar's rule).
pub fn trial_reminder_lead(trial: Duration) -> Option<Duration> {
    if trial >= Duration::days(3) {
        Some(Duration::days(3))
    } else if trial >= Duration::days(1) {
        Some(Duration::days(1))
    } else {
        None
    }
}

/// The id of the renewal order of period `cycle`: derived, so a retried renewal write can
/// never create a second order.
pub fn renewal_order_id(subscription: SubscriptionId, cycle: u32) -> OrderId {
    OrderId(derived_uuid(subscription.0, &format!("renewal:{cycle}")))
}

impl Subscription {
    /// The start of billing period `cycle` (the one `cycles` reaches once it is paid),
    /// counted from the anchor: `anchor_at` + (`cycle` − `anchor_cycle`) periods.
    pub fn period_start(&self, cycle: u32) -> DateTime<Utc> {
        let periods = cycle.saturating_sub(self.anchor_cycle);
        self.recurring_interval.add(
            self.anchor_at,
            periods.saturating_mul(self.recurring_interval_count.max(1)),
        )
    }

    /// Where a discount's duration is counted from: the first period paid for (after the
    /// trial, if any).
    fn first_paid_start(&self) -> DateTime<Utc> {
        self.trial_end
            .or(self.started_at)
            .unwrap_or(self.current_period_start)
    }

    /// When the reminder of a trial's first charge is due, if one still is: a trialing
    /// subscription that will be charged (not free, not set to cancel) and was not
    /// reminded for this trial end.
    pub fn trial_reminder_at(&self) -> Option<DateTime<Utc>> {
        let (start, end) = (self.trial_start?, self.trial_end?);
        if self.status != SubscriptionStatus::Trialing
            || self.cancel_at_period_end
            || self.amount.unwrap_or(0) <= 0
            || self.trial_reminded_for == Some(end)
        {
            return None;
        }
        trial_reminder_lead(end - start).map(|lead| end - lead)
    }

    /// When the renewal (or the end) is due: the period end while active, the next retry
    /// while past due; `None` once ended or not started.
    pub fn due_at(&self) -> Option<DateTime<Utc>> {
        if self.ended_at.is_some() || self.started_at.is_none() {
            return None;
        }
        match self.status {
            SubscriptionStatus::Trialing => {
                match (self.trial_reminder_at(), self.current_period_end) {
                    (Some(remind), Some(end)) => Some(remind.min(end)),
                    (remind, end) => end.or(remind),
                }
            }
            SubscriptionStatus::Active => self.current_period_end,
            SubscriptionStatus::PastDue => self.next_payment_attempt_at,
            _ => None,
        }
    }

    /// When a renewal declined at `now` is charged again: [`RENEWAL_RETRY_DELAY`] later,
    /// never before the period end.
    pub fn next_retry_after(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        let retry = now + RENEWAL_RETRY_DELAY;
        self.current_period_end.map_or(retry, |end| retry.max(end))
    }

    /// The order of a renewal `charge` paid at `now` with the `tax` quoted for it. It keeps
    /// the net: for an inclusive price, the amount less the tax in it (when the quote was
    /// made for the amount charged).
    fn paid_renewal_order(
        &self,
        charge: &RenewalCharge,
        tax: &TaxQuote,
        payment_id: Option<String>,
        now: DateTime<Utc>,
    ) -> Order {
        let mut order = self.renewal_order(
            charge,
            tax.tax_amount,
            tax.request.buyer.address.clone(),
            now,
        );
        if tax.request.amount == charge.amount {
            order.amount = tax.net_amount();
        }
        order.tax = tax.order_tax(None);
        order.payment_id = payment_id;
        order
    }

    /// The renewal `charge` paid at `now`: the next period, `cycles` + 1, `active`, its
    /// recovery forgotten, and the renewal order `paid` (the order a decline left
    /// `pending` keeps its creation time); the amount loses a discount that no longer
    /// applies.
    pub(super) fn apply_paid(
        &self,
        charge: &RenewalCharge,
        tax: TaxQuote,
        payment_id: Option<String>,
        terms: &RenewalTerms,
        now: DateTime<Utc>,
    ) -> Renewal {
        let mut order = self.paid_renewal_order(charge, &tax, payment_id, now);
        if let Some(since) = self.past_due_at {
            order.created_at = since;
            order.modified_at = Some(now);
        }
        let mut next = self.clone();
        next.modified_at = Some(now);
        next.cycles = charge.cycle;
        next.current_period_start = self.period_start(charge.cycle);
        next.current_period_end = Some(self.period_start(charge.cycle.saturating_add(1)));
        next.status = SubscriptionStatus::Active;
        next.proration_balance = self
            .proration_balance
            .saturating_sub(charge.balance_applied);
        if !charge.discounted && self.discount_id.is_some() {
            next.discount_id = None;
            next.discount_name = None;
            next.amount = terms.price_amount.or(self.amount);
        }
        next.clear_recovery();
        Renewal {
            subscription: next,
            order: Some(order),
        }
    }

    /// Forgets the recovery of a declined renewal (it was paid).
    pub(super) fn clear_recovery(&mut self) {
        self.past_due_at = None;
        self.last_attempt_at = None;
        self.next_payment_attempt_at = None;
        self.buyer_attempts = 0;
        self.payment_lock_until = None;
        self.recovery_intent = None;
    }

    /// Whether the discount still applies to the period starting at `start`.
    fn discount_applies(&self, start: DateTime<Utc>, terms: &RenewalTerms) -> bool {
        if self.discount_id.is_none() {
            return false;
        }
        match terms.discount_duration {
            // The record is gone: keep what the subscription has.
            None | Some(DiscountDuration::Forever) => true,
            Some(DiscountDuration::Once) => start <= self.first_paid_start(),
            Some(DiscountDuration::Repeating { months }) => {
                let months = u32::try_from(months.max(0)).unwrap_or(u32::MAX);
                let until = self
                    .first_paid_start()
                    .checked_add_months(Months::new(months))
                    .unwrap_or(DateTime::<Utc>::MAX_UTC);
                start < until
            }
        }
    }

    /// The next renewal step at `now` (none while the buyer's charge of a past-due renewal
    /// holds the payment lock).
    pub fn plan_renewal(&self, now: DateTime<Utc>, terms: &RenewalTerms) -> RenewalPlan {
        match self.due_at() {
            Some(due) if due <= now => {}
            _ => return RenewalPlan::NotDue,
        }
        if self.payment_locked(now) {
            return RenewalPlan::NotDue;
        }
        if self.ends_at_period_end() {
            // The last period's usage is billed by a final charge of its own (Polar's
            // `subscription_cancel` order, shown as `subscription_cycle`); none when 0.
            let charge = self.final_charge(terms);
            return if charge.amount > 0 {
                RenewalPlan::Charge(charge)
            } else {
                RenewalPlan::End
            };
        }
        if let (Some(trial_end), Some(end)) = (self.trial_end, self.current_period_end) {
            if self.trial_reminder_at().is_some() && now < end {
                return RenewalPlan::RemindTrial { trial_end };
            }
        }
        RenewalPlan::Charge(self.renewal_charge(terms))
    }

    /// Whether the subscription ends at its period end (`cancel_at_period_end`, still
    /// active): its next step ends it, with a final charge of its usage if any.
    pub fn ends_at_period_end(&self) -> bool {
        self.cancel_at_period_end && self.status.is_active()
    }

    /// The final charge of a subscription that ends at its period end: the usage of the
    /// ending period only (`terms.usage`, never discounted), no fixed price, no
    /// proration; its order is that of period `cycles + 1`, which never starts.
    pub fn final_charge(&self, terms: &RenewalTerms) -> RenewalCharge {
        let cycle = self.cycles.saturating_add(1);
        let usage: i64 = terms
            .usage
            .iter()
            .fold(0i64, |acc, l| acc.saturating_add(l.amount.max(0)));
        RenewalCharge {
            cycle,
            amount: usage,
            balance_applied: 0,
            currency: self
                .currency
                .clone()
                .unwrap_or_else(|| DEFAULT_CURRENCY.into()),
            discounted: false,
            usage: terms.usage.clone(),
            idempotency_key: format!("{}:{cycle}", self.id),
            payment_token: self.payment_token.clone(),
            customer_id: self.customer_id,
            customer_email: self.customer_email.clone(),
        }
    }

    /// The subscription ended at its period end (`now`: when the sweep found it).
    fn ended_at_period_end(&self, now: DateTime<Utc>) -> Subscription {
        let mut next = self.clone();
        let end = self.current_period_end.unwrap_or(now);
        next.status = SubscriptionStatus::Canceled;
        next.ended_at = Some(end);
        next.ends_at = Some(end);
        next.canceled_at = next.canceled_at.or(Some(now));
        next.modified_at = Some(now);
        union(&mut next.pending_revocations, &self.license_key_ids);
        next
    }

    /// The charge of the next period (`cycles + 1`), due or not.
    pub fn renewal_charge(&self, terms: &RenewalTerms) -> RenewalCharge {
        let cycle = self.cycles.saturating_add(1);
        let start = self.period_start(cycle);
        let discounted = self.discount_applies(start, terms);
        let amount = if discounted || self.discount_id.is_none() {
            self.amount
        } else {
            terms.price_amount.or(self.amount)
        };
        let base = amount.unwrap_or(0).max(0);
        // A credit is taken off up to the period's own amount; a debt is added in full.
        let balance_applied = self.proration_balance.max(-base);
        let idempotency_key = match (self.status, self.last_attempt_at) {
            (SubscriptionStatus::PastDue, Some(last)) => {
                format!("{}:{cycle}:{}", self.id, last.timestamp_micros())
            }
            _ => format!("{}:{cycle}", self.id),
        };
        let usage: i64 = terms
            .usage
            .iter()
            .fold(0i64, |acc, l| acc.saturating_add(l.amount.max(0)));
        RenewalCharge {
            cycle,
            amount: base.saturating_add(balance_applied).saturating_add(usage),
            balance_applied,
            currency: self
                .currency
                .clone()
                .unwrap_or_else(|| DEFAULT_CURRENCY.into()),
            discounted,
            usage: terms.usage.clone(),
            idempotency_key,
            payment_token: self.payment_token.clone(),
            customer_id: self.customer_id,
            customer_email: self.customer_email.clone(),
        }
    }

    /// Applies the renewal step due at `now` with the charge's outcome (ignored when the
    /// subscription ends at the period end):
    /// - `cancel_at_period_end` → `canceled`, ended at the period end, keys to revoke;
    /// - paid → the next period, `cycles` + 1, `active`, and the renewal order; the
    ///   amount loses a discount that no longer applies;
    /// - declined → `past_due` (retried later), or `canceled` with the keys to revoke once
    ///   [`DUNNING_PERIOD`] has passed since the period end; the renewal order is written
    ///   `pending` (with the next attempt, none once given up).
    pub fn renew(
        &self,
        now: DateTime<Utc>,
        terms: &RenewalTerms,
        outcome: Option<PaymentOutcome>,
    ) -> Result<Renewal, SubscriptionError> {
        let charge = match self.plan_renewal(now, terms) {
            RenewalPlan::NotDue => return Err(SubscriptionError::StaleRenewal),
            RenewalPlan::RemindTrial { trial_end } => {
                // Bookkeeping the buyer sees only as the mail: `modified_at` stays.
                let mut next = self.clone();
                next.trial_reminded_for = Some(trial_end);
                return Ok(Renewal {
                    subscription: next,
                    order: None,
                });
            }
            RenewalPlan::End => {
                return Ok(Renewal {
                    subscription: self.ended_at_period_end(now),
                    order: None,
                });
            }
            RenewalPlan::Charge(charge) => charge,
        };
        if self.ends_at_period_end() {
            // The final charge: the subscription ends whatever its outcome; its order is
            // paid, or left `pending` (no retry: there is no period left to dun).
            let next = self.ended_at_period_end(now);
            let order = match outcome.ok_or(SubscriptionError::MissingOutcome)? {
                PaymentOutcome::Paid { tax, payment_id } => {
                    self.paid_renewal_order(&charge, &tax, payment_id, now)
                }
                PaymentOutcome::Declined => {
                    let mut order = self.renewal_order(&charge, 0, None, now);
                    order.status = OrderStatus::Pending;
                    order
                }
            };
            return Ok(Renewal {
                subscription: next,
                order: Some(order),
            });
        }
        let mut next = self.clone();
        next.modified_at = Some(now);
        match outcome.ok_or(SubscriptionError::MissingOutcome)? {
            PaymentOutcome::Paid { tax, payment_id } => {
                Ok(self.apply_paid(&charge, *tax, payment_id, terms, now))
            }
            PaymentOutcome::Declined => {
                let given_up = self
                    .current_period_end
                    .is_some_and(|end| now >= end + DUNNING_PERIOD);
                next.last_attempt_at = Some(now);
                if given_up {
                    next.status = SubscriptionStatus::Canceled;
                    next.ended_at = Some(now);
                    next.ends_at = Some(now);
                    next.canceled_at = next.canceled_at.or(Some(now));
                    next.next_payment_attempt_at = None;
                    next.payment_lock_until = None;
                    union(&mut next.pending_revocations, &self.license_key_ids);
                } else {
                    next.status = SubscriptionStatus::PastDue;
                    next.past_due_at = self.past_due_at.or(Some(now));
                    next.next_payment_attempt_at = Some(self.next_retry_after(now));
                }
                // The renewal's order is due, not paid: `pending` (Polar's), retried at the
                // subscription's next attempt; created when it first fell due.
                let mut order = self.renewal_order(&charge, 0, None, now);
                order.status = OrderStatus::Pending;
                order.next_payment_attempt_at = next.next_payment_attempt_at;
                if let Some(since) = self.past_due_at {
                    order.created_at = since;
                    order.modified_at = Some(now);
                }
                Ok(Renewal {
                    subscription: next,
                    order: Some(order),
                })
            }
        }
    }

    /// Applies the renewal step `expected`, planned earlier and charged with `outcome`,
    /// if it is still the step due at `now`; `None` if it is not (another sweep applied
    /// it, or time moved on): nothing is to be written.
    pub fn renew_as_planned(
        &self,
        now: DateTime<Utc>,
        terms: &RenewalTerms,
        expected: &RenewalPlan,
        outcome: Option<PaymentOutcome>,
    ) -> Result<Option<Renewal>, SubscriptionError> {
        if self.plan_renewal(now, terms) != *expected || *expected == RenewalPlan::NotDue {
            return Ok(None);
        }
        match self.renew(now, terms, outcome) {
            Ok(r) => Ok(Some(r)),
            Err(SubscriptionError::StaleRenewal) => Ok(None),
            Err(e) => Err(e),
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
            payment_id: None,
            refund_pending_amount: 0,
            refund_pending_tax_amount: 0,
            seats: self.seats,
            next_payment_attempt_at: None,
            last_payment: None,
            tax: crate::domain::order::OrderTax::default(),
            invoice: crate::domain::order::InvoiceState::None,
            usage_lines: charge.usage.clone(),
        }
    }
}
