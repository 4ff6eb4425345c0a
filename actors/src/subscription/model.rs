//! The subscription's state machine, as types: its states ([`Subscription`] and its
//! [`SubscriptionStatus`]), the commands it takes ([`Purchase`], [`Change`]), and why it
//! refuses them ([`SubscriptionError`]). How a command is decided is in `decide.rs`; the
//! renewal's own types and rules in `renewal.rs`.
//!
//! Statuses (Polar's, mirrored from Stripe): a purchase starts `active` with `started_at`
//! set. At `current_period_end` the subscription renews: the next period is charged and,
//! once paid, becomes the current one (`cycles` + 1). A declined renewal makes it
//! `past_due`; it is retried every [`RENEWAL_RETRY_DELAY`] and, when still declined
//! [`DUNNING_PERIOD`] after the period end, `canceled`. `cancel_at_period_end` (set and
//! unset while active) ends it at the period end instead of renewing; `revoke` ends it at
//! once. Whenever it ends, the license keys it granted move to `pending_revocations`, an
//! outbox the sweep empties through the license keys' actors.
//!
//! [`RENEWAL_RETRY_DELAY`]: super::RENEWAL_RETRY_DELAY
//! [`DUNNING_PERIOD`]: super::DUNNING_PERIOD

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::checkout::{AppliedDiscount, Checkout};
use crate::domain::custom_field::CustomFieldData;
use crate::domain::ids::{
    CheckoutId, CustomerId, DiscountId, LicenseKeyId, OrganizationId, PriceId, ProductId,
    SubscriptionId,
};
use crate::domain::metadata::Metadata;
use crate::domain::product::{Price, RecurringInterval};

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
    // Format version 2 (`v1.rs` decodes version 1).
    /// Each period spans this many `recurring_interval`s (1–999).
    pub recurring_interval_count: u32,
    /// The free trial the subscription started with, if any: period 0 runs from
    /// `trial_start` to `trial_end` and costs nothing.
    pub trial_start: Option<DateTime<Utc>>,
    pub trial_end: Option<DateTime<Utc>>,
    /// Where the billing periods are counted from: period `anchor_cycle + n` starts at
    /// `anchor_at` + n × `recurring_interval_count` intervals. The start of a purchase,
    /// the trial's end after a trial, the change's time after a plan change that resets
    /// the cycle (a new interval).
    pub anchor_at: DateTime<Utc>,
    pub anchor_cycle: u32,
    /// Prorations not billed yet, in cents: added to the next renewal's charge (a credit,
    /// negative, is taken off it; what one charge cannot absorb carries on to the next).
    pub proration_balance: i64,
    /// Plan changes applied so far; the order a change bills derives its id from it.
    pub plan_changes: u32,
    /// The trial end a reminder of the first charge went out for (one per trial end).
    pub trial_reminded_for: Option<DateTime<Utc>>,
    // Format version 3 (`v2.rs` decodes version 2).
    /// The seats paid for at a seat-based price (`None` for any other price).
    pub seats: Option<u32>,
    // Format version 4 (`v3.rs` decodes version 3): the recovery of a declined renewal.
    /// When the subscription last went `past_due` (Polar's `past_due_at`); `None` while
    /// it is not past due.
    pub past_due_at: Option<DateTime<Utc>>,
    /// The last declined charge of the renewal due (the sweep's or the buyer's): retry
    /// charges are keyed with it, so a retry of the same attempt is never taken twice.
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// When the sweep charges the declined renewal again; `None` unless past due (and once
    /// dunning gave up).
    pub next_payment_attempt_at: Option<DateTime<Utc>>,
    /// Charges of the due renewal the buyer asked for ("pay now") since it went past due.
    pub buyer_attempts: u8,
    /// A charge of the due renewal is under way until then: no other charge of it starts
    /// (the sweep waits, the buyer is told a payment is in progress).
    pub payment_lock_until: Option<DateTime<Utc>>,
    /// The processor's payment of the buyer's charge still waiting for an action (3-D
    /// Secure), settled when it reports.
    pub recovery_intent: Option<String>,
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
    /// A plan change to a price in another currency (Polar: 422 on `product_id`).
    #[error("This product doesn't have a price for the subscription currency.")]
    CurrencyMismatch,
    /// A renewal that needs a charge was applied without the charge's outcome.
    #[error("the renewal needs a payment outcome")]
    MissingOutcome,
    /// The buyer asked to pay a renewal of a subscription that is not past due (Polar:
    /// 422 `OrderNotEligibleForRetry`).
    #[error("the subscription is not past due")]
    NotPastDue,
    /// A charge of the past-due renewal is under way (Polar: 409
    /// `PaymentAlreadyInProgress`).
    #[error("Payment already in progress.")]
    PaymentInProgress,
    /// The buyer used up their attempts at the past-due renewal (Polar: 429
    /// `ManualRetryLimitExceeded`).
    #[error("Maximum number of manual retry attempts exceeded.")]
    TooManyAttempts,
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
    /// Each period spans this many intervals (the product's `recurring_interval_count`).
    pub interval_count: u32,
    /// The end of the free trial the subscription starts with (`None`: no trial, the
    /// first period is paid at checkout).
    pub trial_end: Option<DateTime<Utc>>,
    /// The seats bought at a seat-based price (`amount` is what they cost); `None` for
    /// any other price.
    pub seats: Option<u32>,
}

impl Purchase {
    /// The purchase a settled checkout made. `payment_token` is the confirmation token the
    /// checkout was charged with (a succeeded checkout no longer holds it).
    // One argument per fact the checkout does not hold itself.
    #[allow(clippy::too_many_arguments)]
    pub fn from_checkout(
        checkout: &Checkout,
        customer_id: CustomerId,
        customer_email: &str,
        product_name: &str,
        payment_token: Option<String>,
        license_key_ids: Vec<LicenseKeyId>,
        interval_count: u32,
        trial_end: Option<DateTime<Utc>>,
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
            interval_count,
            trial_end,
            seats: checkout
                .seats
                .filter(|_| checkout.price.kind.seat_tiers().is_some()),
        }
    }
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

/// Adds the keys not yet in `into`, keeping their order: how keys join the
/// `pending_revocations` outbox.
pub(super) fn union(into: &mut Vec<LicenseKeyId>, keys: &[LicenseKeyId]) {
    for k in keys {
        if !into.contains(k) {
            into.push(*k);
        }
    }
}
