//! The subscription record's format version 1, before intervals had a count, trials, plan
//! changes and their prorations: kept to decode records written by earlier builds. A
//! version-1 subscription recurs every single interval, had no trial, and counts its
//! periods from its start.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::model::{Subscription, SubscriptionStatus};
use crate::domain::custom_field::CustomFieldData;
use crate::domain::ids::{
    CheckoutId, CustomerId, DiscountId, LicenseKeyId, OrganizationId, PriceId, ProductId,
    SubscriptionId,
};
use crate::domain::metadata::Metadata;
use crate::domain::product::RecurringInterval;

/// Field for field the layout of version 1 (bincode is not self-describing: the order and
/// the types are the format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct SubscriptionV1 {
    pub id: SubscriptionId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
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
    pub license_key_ids: Vec<LicenseKeyId>,
    pub pending_revocations: Vec<LicenseKeyId>,
    pub cycles: u32,
    pub payment_token: Option<String>,
    pub customer_email: String,
    pub product_name: String,
    pub discount_name: Option<String>,
}

impl From<SubscriptionV1> for Subscription {
    fn from(v: SubscriptionV1) -> Self {
        Subscription {
            anchor_at: v.started_at.unwrap_or(v.current_period_start),
            id: v.id,
            organization_id: v.organization_id,
            created_at: v.created_at,
            modified_at: v.modified_at,
            amount: v.amount,
            currency: v.currency,
            recurring_interval: v.recurring_interval,
            status: v.status,
            current_period_start: v.current_period_start,
            current_period_end: v.current_period_end,
            cancel_at_period_end: v.cancel_at_period_end,
            canceled_at: v.canceled_at,
            started_at: v.started_at,
            ends_at: v.ends_at,
            ended_at: v.ended_at,
            customer_id: v.customer_id,
            product_id: v.product_id,
            price_id: v.price_id,
            discount_id: v.discount_id,
            checkout_id: v.checkout_id,
            metadata: v.metadata,
            custom_field_data: v.custom_field_data,
            customer_cancellation_reason: v.customer_cancellation_reason,
            customer_cancellation_comment: v.customer_cancellation_comment,
            license_key_ids: v.license_key_ids,
            pending_revocations: v.pending_revocations,
            cycles: v.cycles,
            payment_token: v.payment_token,
            customer_email: v.customer_email,
            product_name: v.product_name,
            discount_name: v.discount_name,
            recurring_interval_count: 1,
            trial_start: None,
            trial_end: None,
            anchor_cycle: 0,
            proration_balance: 0,
            plan_changes: 0,
            trial_reminded_for: None,
            seats: None,
            past_due_at: None,
            last_attempt_at: None,
            next_payment_attempt_at: None,
            buyer_attempts: 0,
            payment_lock_until: None,
            recovery_intent: None,
        }
    }
}
