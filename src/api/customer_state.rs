//! A customer's state (Polar's `CustomerState`, `GET /v1/customers/{id}/state`): the
//! customer, its active subscriptions, the benefits it holds and its meters.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::benefit_grant::CustomerStateBenefitGrant;
use super::customer::CustomerView;
use super::metadata::{metadata_map, MetadataMap};
use super::price::RecurringInterval;
use super::subscription::{custom_field_data_map, CustomFieldDataMap, SubscriptionMeter};
use crate::domain::customer::Customer;
use crate::domain::order::DEFAULT_CURRENCY;
use tollgate_actors::subscription::{Subscription, SubscriptionStatus};

/// The status of an active subscription: Polar's `active` or `trialing`.
///
/// polar-sdk 1.0.2 types this field as `"granted" | "disabled"` (a bug of its generator,
/// in all three API versions), so it cannot read a state with an active subscription;
/// Tollgate sends Polar's real values, which @polar-sh/sdk 0.47 expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActiveSubscriptionStatus {
    Active,
    Trialing,
}

/// An active subscription of the customer (Polar's `CustomerStateSubscription`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerStateSubscription {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[schema(value_type = std::collections::HashMap<String, crate::api::free_form::CustomFieldValue>)]
    pub custom_field_data: CustomFieldDataMap,
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: MetadataMap,
    pub status: ActiveSubscriptionStatus,
    /// Per period, after any discount, before tax (0 for a free price).
    pub amount: i64,
    pub currency: String,
    pub recurring_interval: RecurringInterval,
    pub current_period_start: DateTime<Utc>,
    pub current_period_end: DateTime<Utc>,
    /// The free trial the subscription started with (`null`: none).
    pub trial_start: Option<DateTime<Utc>>,
    pub trial_end: Option<DateTime<Utc>>,
    pub cancel_at_period_end: bool,
    pub canceled_at: Option<DateTime<Utc>>,
    pub started_at: Option<DateTime<Utc>>,
    pub ends_at: Option<DateTime<Utc>>,
    pub product_id: Uuid,
    pub discount_id: Option<Uuid>,
    /// Deprecated: the subscription's price.
    pub price_id: Uuid,
    /// The seats paid for at a seat-based price; null for any other price.
    pub seats: Option<i64>,
    /// Unit-based prices only: Tollgate has none, so null.
    pub units: Option<i64>,
    /// The running usage of each metered price of the subscription.
    pub meters: Vec<CustomerStateSubscriptionMeter>,
}

/// A meter of an active subscription (Polar's `CustomerStateSubscriptionMeter`): the
/// subscription's [`SubscriptionMeter`] without the meter.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerStateSubscriptionMeter {
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub id: Uuid,
    pub consumed_units: f64,
    pub credited_units: i64,
    pub amount: i64,
    pub meter_id: Uuid,
}

impl From<&SubscriptionMeter> for CustomerStateSubscriptionMeter {
    fn from(m: &SubscriptionMeter) -> Self {
        CustomerStateSubscriptionMeter {
            created_at: m.created_at,
            modified_at: m.modified_at,
            id: m.id,
            consumed_units: m.consumed_units,
            credited_units: m.credited_units,
            amount: m.amount,
            meter_id: m.meter_id,
        }
    }
}

impl CustomerStateSubscription {
    /// `None` for a subscription that is not active (`active` or `trialing`).
    pub fn new(s: &Subscription) -> Option<Self> {
        let status = match s.status {
            SubscriptionStatus::Active => ActiveSubscriptionStatus::Active,
            SubscriptionStatus::Trialing => ActiveSubscriptionStatus::Trialing,
            _ => return None,
        };
        Some(CustomerStateSubscription {
            id: s.id.uuid(),
            created_at: s.created_at,
            modified_at: s.modified_at,
            custom_field_data: custom_field_data_map(&s.custom_field_data),
            metadata: metadata_map(&s.metadata),
            status,
            amount: s.amount.unwrap_or(0),
            currency: s
                .currency
                .clone()
                .unwrap_or_else(|| DEFAULT_CURRENCY.to_string()),
            recurring_interval: s.recurring_interval.into(),
            current_period_start: s.current_period_start,
            // An active subscription always has its period's end; the start stands in
            // for a record that would not.
            current_period_end: s.current_period_end.unwrap_or(s.current_period_start),
            trial_start: s.trial_start,
            trial_end: s.trial_end,
            cancel_at_period_end: s.cancel_at_period_end,
            canceled_at: s.canceled_at,
            started_at: s.started_at,
            ends_at: s.ends_at,
            product_id: s.product_id.uuid(),
            discount_id: s.discount_id.map(|d| d.uuid()),
            price_id: s.price_id.uuid(),
            seats: s.seats.map(i64::from),
            units: None,
            meters: Vec::new(),
        })
    }
}

/// A customer with its active subscriptions, the benefits it holds now and its meters
/// (Polar's `CustomerState`, `CustomerStateIndividual`): the customer's keys, then the
/// three lists.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = CustomerState)]
pub struct CustomerStateView {
    #[serde(flatten)]
    pub customer: CustomerView,
    /// Subscriptions `active` or `trialing`.
    pub active_subscriptions: Vec<CustomerStateSubscription>,
    /// Benefits granted and not revoked.
    pub granted_benefits: Vec<CustomerStateBenefitGrant>,
    /// The customer's meters (those of live meters with a window), oldest first.
    pub active_meters: Vec<CustomerStateMeter>,
}

/// A meter of the customer in its state (Polar's `CustomerStateMeter`): what it consumed
/// in its current window, its credits (an integer) and the balance.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerStateMeter {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub meter_id: Uuid,
    pub consumed_units: f64,
    pub credited_units: i64,
    pub balance: f64,
}

impl CustomerStateView {
    pub fn new(
        customer: &Customer,
        subscriptions: &[Subscription],
        granted_benefits: Vec<CustomerStateBenefitGrant>,
    ) -> Self {
        CustomerStateView {
            customer: CustomerView::from(customer),
            active_subscriptions: subscriptions
                .iter()
                .filter_map(CustomerStateSubscription::new)
                .collect(),
            granted_benefits,
            active_meters: Vec::new(),
        }
    }

    /// The state with the customer's meters.
    pub fn with_meters(mut self, meters: Vec<CustomerStateMeter>) -> Self {
        self.active_meters = meters;
        self
    }

    /// The state with the running usage of each active subscription (by subscription
    /// id; a subscription left out keeps `[]`).
    pub fn with_subscription_meters(
        mut self,
        mut meters: std::collections::HashMap<Uuid, Vec<SubscriptionMeter>>,
    ) -> Self {
        for s in &mut self.active_subscriptions {
            if let Some(m) = meters.remove(&s.id) {
                s.meters = m.iter().map(CustomerStateSubscriptionMeter::from).collect();
            }
        }
        self
    }
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use crate::api::benefit_grant::sample_grants;

    let (customer, benefit, grants) = sample_grants();
    let granted: Vec<CustomerStateBenefitGrant> = grants
        .iter()
        .filter_map(|g| CustomerStateBenefitGrant::new(g, &benefit))
        .collect();
    let Some(mut active) = crate::api::subscription::sample_subscriptions()
        .into_iter()
        .next()
    else {
        return Vec::new();
    };
    active.status = SubscriptionStatus::Active;
    let mut trialing = active.clone();
    trialing.status = SubscriptionStatus::Trialing;
    trialing.currency = None;
    trialing.amount = None;
    // A seat-based subscription shows its seats.
    trialing.seats = Some(3);
    let mut canceled = active.clone();
    canceled.status = SubscriptionStatus::Canceled;
    let usage = std::collections::HashMap::from([(
        active.id.uuid(),
        crate::api::subscription::sample_subscription_meters(&active),
    )]);
    let state = CustomerStateView::new(&customer, &[active, trialing, canceled], granted)
        .with_subscription_meters(usage);
    // No subscription, one meter.
    let empty =
        CustomerStateView::new(&customer, &[], Vec::new()).with_meters(vec![CustomerStateMeter {
            id: Uuid::from_u128(0xce),
            created_at: customer.created_at,
            modified_at: None,
            meter_id: Uuid::from_u128(0xe1),
            consumed_units: 25.0,
            credited_units: 100,
            balance: 75.0,
        }]);
    vec![
        (
            "CustomerState",
            serde_json::to_value(state).unwrap_or_default(),
        ),
        (
            "CustomerState",
            serde_json::to_value(empty).unwrap_or_default(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_state_is_the_customer_and_its_active_things() {
        let samples = samples();
        let state = &samples[0].1;
        assert_eq!(state["type"], "individual");
        assert!(state["email"].is_string() && state["avatar_url"].is_string());
        let subs = state["active_subscriptions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let statuses: Vec<&str> = subs.iter().filter_map(|s| s["status"].as_str()).collect();
        assert_eq!(
            statuses,
            ["active", "trialing"],
            "canceled ones are left out"
        );
        assert_eq!(subs[1]["amount"], 0);
        assert_eq!(subs[1]["currency"], "usd");
        // The running usage of the active one's metered price, without its meter.
        assert_eq!(
            subs[0]["meters"],
            json!([{
                "created_at": subs[0]["created_at"],
                "modified_at": subs[0]["created_at"],
                "id": Uuid::from_u128(0x5e7e),
                "consumed_units": 1250.0,
                "credited_units": 100,
                "amount": 575,
                "meter_id": crate::api::price::sample_meters()[0].id.uuid(),
            }])
        );
        assert_eq!(subs[1]["meters"], json!([]));
        assert_eq!(subs[0]["seats"], serde_json::Value::Null);
        assert_eq!(subs[1]["seats"], 3);
        assert_eq!(state["granted_benefits"].as_array().map(Vec::len), Some(1));
        assert_eq!(state["active_meters"], json!([]));
        assert_eq!(samples[1].1["active_subscriptions"], json!([]));
    }
}
