//! Subscriptions in Polar's shapes: the `Subscription` schema (lists, get, update), the
//! `OrderSubscription` base form embedded in orders, and the `PATCH` body.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::api::customer::{customer_json, customer_user_json};
use crate::api::discount::discount_base_json;
use crate::domain::customer::Customer;
use crate::domain::discount::Discount;
use tollgate_actors::subscription::Subscription;

/// `OrderSubscription` (Polar's `SubscriptionBase` + `metadata` + `user_id`): every key
/// present, nullable ones as `null`.
pub fn subscription_base_json(s: &Subscription) -> Value {
    Value::Object(base(s))
}

fn base(s: &Subscription) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("created_at".into(), json!(s.created_at));
    m.insert("modified_at".into(), json!(s.modified_at));
    m.insert("id".into(), json!(s.id));
    m.insert("amount".into(), json!(s.amount));
    m.insert("currency".into(), json!(s.currency));
    m.insert(
        "recurring_interval".into(),
        json!(s.recurring_interval.as_str()),
    );
    m.insert("status".into(), json!(s.status.as_str()));
    m.insert("current_period_start".into(), json!(s.current_period_start));
    m.insert("current_period_end".into(), json!(s.current_period_end));
    m.insert("cancel_at_period_end".into(), json!(s.cancel_at_period_end));
    m.insert("canceled_at".into(), json!(s.canceled_at));
    m.insert("started_at".into(), json!(s.started_at));
    m.insert("ends_at".into(), json!(s.ends_at));
    m.insert("ended_at".into(), json!(s.ended_at));
    m.insert("customer_id".into(), json!(s.customer_id));
    m.insert("product_id".into(), json!(s.product_id));
    m.insert("price_id".into(), json!(s.price_id));
    m.insert("discount_id".into(), json!(s.discount_id));
    m.insert("checkout_id".into(), json!(s.checkout_id));
    m.insert(
        "customer_cancellation_reason".into(),
        json!(s.customer_cancellation_reason),
    );
    m.insert(
        "customer_cancellation_comment".into(),
        json!(s.customer_cancellation_comment),
    );
    m.insert("metadata".into(), s.metadata.to_json());
    // Deprecated alias of the customer (Polar's legacy user id, here the customer's).
    m.insert("user_id".into(), json!(s.customer_id));
    m
}

/// The full `Subscription` schema. `product` is the full `Product` rendering and `price`
/// the `ProductPriceRecurring` one (both need the store, so the caller renders them).
pub fn subscription_json(
    s: &Subscription,
    customer: &Customer,
    product: Value,
    price: Value,
    discount: Option<&Discount>,
) -> Value {
    let mut m = base(s);
    m.insert(
        "custom_field_data".into(),
        crate::api::custom_field_data::custom_field_data_json(&s.custom_field_data),
    );
    m.insert("customer".into(), customer_json(customer));
    m.insert("user".into(), customer_user_json(customer));
    m.insert("product".into(), product);
    m.insert("price".into(), price);
    m.insert(
        "discount".into(),
        discount.map_or(Value::Null, discount_base_json),
    );
    Value::Object(m)
}

/// Polar's `CustomerCancellationReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CancellationReason {
    CustomerService,
    LowQuality,
    MissingFeatures,
    SwitchedService,
    TooComplex,
    TooExpensive,
    Unused,
    Other,
}

impl CancellationReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CancellationReason::CustomerService => "customer_service",
            CancellationReason::LowQuality => "low_quality",
            CancellationReason::MissingFeatures => "missing_features",
            CancellationReason::SwitchedService => "switched_service",
            CancellationReason::TooComplex => "too_complex",
            CancellationReason::TooExpensive => "too_expensive",
            CancellationReason::Unused => "unused",
            CancellationReason::Other => "other",
        }
    }
}

/// `PATCH /v1/subscriptions/{id}` (Polar's `SubscriptionCancel`): `cancel_at_period_end`
/// true or false, or `revoke: true`; unknown fields are ignored.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SubscriptionUpdate {
    #[serde(default)]
    pub cancel_at_period_end: Option<bool>,
    /// `Literal[True] | None`: `false` is refused by the handler.
    #[serde(default)]
    pub revoke: Option<bool>,
    #[serde(default)]
    pub customer_cancellation_reason: Option<CancellationReason>,
    #[serde(default)]
    pub customer_cancellation_comment: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::custom_field::CustomFieldData;
    use crate::domain::ids::{CustomerId, OrganizationId, PriceId, ProductId, SubscriptionId};
    use crate::domain::metadata::Metadata;
    use crate::domain::product::{Price, PriceKind, RecurringInterval};
    use chrono::{TimeZone, Utc};
    use std::collections::BTreeSet;
    use tollgate_actors::subscription::Purchase;

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    #[test]
    fn the_renderings_have_every_key_of_the_sdk_models() {
        let now = Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
        let customer = Customer::new(
            CustomerId::new(),
            OrganizationId::new(),
            "a@b.co".into(),
            now,
        );
        let p = Purchase {
            organization_id: customer.organization_id,
            customer_id: customer.id,
            customer_email: customer.email.clone(),
            product_id: ProductId::new(),
            product_name: "Pro".into(),
            price: Price {
                id: PriceId::new(),
                created_at: now,
                modified_at: None,
                is_archived: false,
                kind: PriceKind::RecurringFixed {
                    interval: RecurringInterval::Month,
                    currency: "usd".into(),
                    amount: 900,
                },
            },
            amount: None,
            discount: None,
            checkout_id: None,
            metadata: Metadata::default(),
            custom_field_data: CustomFieldData::default(),
            payment_token: None,
            license_key_ids: Vec::new(),
        };
        let s = Subscription::new_from_purchase(SubscriptionId::new(), p, now).unwrap();
        let base = subscription_base_json(&s);
        let expected_base: BTreeSet<String> = [
            "created_at",
            "modified_at",
            "id",
            "amount",
            "currency",
            "recurring_interval",
            "status",
            "current_period_start",
            "current_period_end",
            "cancel_at_period_end",
            "canceled_at",
            "started_at",
            "ends_at",
            "ended_at",
            "customer_id",
            "product_id",
            "price_id",
            "discount_id",
            "checkout_id",
            "customer_cancellation_reason",
            "customer_cancellation_comment",
            "metadata",
            "user_id",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        assert_eq!(keys(&base), expected_base);
        assert_eq!(base["status"], "active");
        assert_eq!(base["user_id"], json!(customer.id));

        let full = subscription_json(&s, &customer, json!({}), json!({}), None);
        let mut expected = expected_base;
        for k in [
            "custom_field_data",
            "customer",
            "user",
            "product",
            "price",
            "discount",
        ] {
            expected.insert(k.into());
        }
        assert_eq!(keys(&full), expected);
        assert_eq!(full["discount"], Value::Null);
        assert_eq!(full["user"]["id"], json!(customer.id));
    }
}
