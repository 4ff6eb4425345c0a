//! The subscription aggregate's state. (Transitions: see `subscription::model` functions.)

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::custom_field::CustomFieldData;
use crate::domain::ids::{
    CheckoutId, CustomerId, DiscountId, LicenseKeyId, OrganizationId, PriceId, ProductId,
    SubscriptionId,
};
use crate::domain::metadata::Metadata;
use crate::domain::product::RecurringInterval;

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
    /// Renewal orders written so far (their ids derive from the subscription id and this).
    pub cycles: u32,
    /// The payment method renewals are charged with (the checkout's confirmation token).
    pub payment_token: Option<String>,
    /// Sort keys of the `customer`, `product` and `discount` orderings.
    pub customer_email: String,
    pub product_name: String,
    pub discount_name: Option<String>,
}
