//! Refunds on the wire: Polar's `RefundCreate` and `Refund`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::metadata::{metadata_map, parse_metadata, MetadataMap};
use crate::domain::ids::OrderId;
use crate::domain::refund::{EndSubscription, Refund, RefundReason, RefundRequest};
use crate::error::{ApiError, FieldError};

/// `POST /v1/refunds/`. `amount` is before tax (the tax refunded with it follows the
/// order's rate); `comment` is the seller's own note, never shown.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RefundCreate {
    pub order_id: Uuid,
    /// `duplicate`, `fraudulent`, `customer_request`, `service_disruption`,
    /// `satisfaction_guarantee` or `other`.
    pub reason: String,
    /// In the order's currency's minor unit, at least 1, at most what is left to refund.
    #[schema(minimum = 1)]
    pub amount: i64,
    #[serde(default)]
    pub comment: Option<String>,
    /// Revoke the benefits the order granted (its license keys stop validating at once).
    #[serde(default)]
    pub revoke_benefits: bool,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
    /// Tollgate's: for a subscription's order, also end the subscription, `at_period_end`
    /// (it is canceled, its keys work until then) or `now` (revoked with its keys).
    #[serde(default)]
    pub end_subscription: Option<String>,
}

impl RefundCreate {
    /// The command, or a 422 listing every field that breaks a rule (in the body's order:
    /// `reason`, `amount`, `metadata`, `end_subscription`).
    pub fn into_command(self) -> Result<RefundRequest, ApiError> {
        let mut errors = Vec::new();
        let reason = match RefundReason::parse(&self.reason) {
            Some(r) if r != RefundReason::DisputePrevention => r,
            _ => {
                errors.push(FieldError::new(
                    "enum",
                    crate::loc!["body", "reason"],
                    "Input should be 'duplicate', 'fraudulent', 'customer_request', 'service_disruption', 'satisfaction_guarantee' or 'other'",
                    Value::from(self.reason.clone()),
                ));
                RefundReason::Other
            }
        };
        if self.amount < 1 {
            errors.push(
                FieldError::new(
                    "greater_than",
                    crate::loc!["body", "amount"],
                    "Input should be greater than 0",
                    Value::from(self.amount),
                )
                .with_ctx(serde_json::json!({"gt": 0})),
            );
        }
        let metadata = match self.metadata.as_ref() {
            Some(m) => parse_metadata("metadata", m).unwrap_or_else(|e| {
                errors.extend(e);
                Default::default()
            }),
            None => Default::default(),
        };
        let end_subscription = match self.end_subscription.as_deref() {
            None => None,
            Some(w) => match EndSubscription::ALL.iter().find(|(n, _)| *n == w) {
                Some((_, e)) => Some(*e),
                None => {
                    errors.push(FieldError::new(
                        "enum",
                        crate::loc!["body", "end_subscription"],
                        "Input should be 'at_period_end' or 'now'",
                        Value::from(w.to_string()),
                    ));
                    None
                }
            },
        };
        if !errors.is_empty() {
            return Err(ApiError::Validation(errors));
        }
        Ok(RefundRequest {
            order_id: OrderId(self.order_id),
            reason,
            amount: self.amount,
            comment: self.comment.filter(|c| !c.trim().is_empty()),
            revoke_benefits: self.revoke_benefits,
            metadata,
            end_subscription,
        })
    }
}

/// Polar's `Refund`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Refund)]
pub struct RefundView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[schema(value_type = Object)]
    pub metadata: MetadataMap,
    /// `pending`, `succeeded`, `failed` or `canceled`.
    pub status: &'static str,
    pub reason: &'static str,
    pub amount: i64,
    pub tax_amount: i64,
    pub currency: String,
    pub organization_id: Uuid,
    pub order_id: Uuid,
    pub subscription_id: Option<Uuid>,
    pub customer_id: Uuid,
    pub revoke_benefits: bool,
    /// Set for refunds that prevented a dispute (Tollgate makes none: always `null`).
    #[schema(value_type = Option<Object>)]
    pub dispute: Option<Value>,
}

impl From<&Refund> for RefundView {
    fn from(r: &Refund) -> Self {
        RefundView {
            id: r.id.uuid(),
            created_at: r.created_at,
            modified_at: r.modified_at,
            metadata: metadata_map(&r.metadata),
            status: r.status.as_str(),
            reason: r.reason.as_str(),
            amount: r.amount,
            tax_amount: r.tax_amount,
            currency: r.currency.clone(),
            organization_id: r.organization_id.uuid(),
            order_id: r.order_id.uuid(),
            subscription_id: r.subscription_id.map(|s| s.uuid()),
            customer_id: r.customer_id.uuid(),
            revoke_benefits: r.revoke_benefits,
            dispute: None,
        }
    }
}

/// One refund of each status, for the OpenAPI document's checks.
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    use crate::domain::ids::{CustomerId, OrderId, OrganizationId, RefundId, SubscriptionId};
    use crate::domain::refund::{RefundReason, RefundStatus};
    let at = DateTime::<Utc>::from_timestamp(1_700_000_000, 0).unwrap_or_default();
    [
        RefundStatus::Pending,
        RefundStatus::Succeeded,
        RefundStatus::Failed,
    ]
    .into_iter()
    .map(|status| {
        let r = Refund {
            id: RefundId::new(),
            organization_id: OrganizationId::new(),
            created_at: at,
            modified_at: (status != RefundStatus::Pending).then_some(at),
            status,
            reason: RefundReason::CustomerRequest,
            amount: 1000,
            tax_amount: 200,
            currency: "usd".into(),
            order_id: OrderId::new(),
            subscription_id: (status == RefundStatus::Failed).then(SubscriptionId::new),
            customer_id: CustomerId::new(),
            revoke_benefits: status == RefundStatus::Succeeded,
            comment: Some("never shown".into()),
            metadata: Default::default(),
            processor_id: Some("re_1".into()),
            failure: None,
        };
        (
            "Refund",
            serde_json::to_value(RefundView::from(&r)).unwrap_or_default(),
        )
    })
    .collect()
}
