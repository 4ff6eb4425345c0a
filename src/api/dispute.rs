//! Disputes on the wire: Polar's `Dispute`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::customer::CustomerView;
use crate::domain::customer::Customer;
use crate::domain::dispute::Dispute;
use tollgate_actors::ids::derived_uuid;

/// Polar's `Dispute`: a chargeback of an order's payment.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Dispute)]
pub struct DisputeView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// `prevented`, `early_warning`, `needs_response`, `under_review`, `lost` or `won`.
    pub status: &'static str,
    /// Lost or won.
    pub resolved: bool,
    /// Lost, won or prevented.
    pub closed: bool,
    pub amount: i64,
    pub tax_amount: i64,
    pub currency: String,
    pub reason: Option<String>,
    pub evidence_due_by: Option<DateTime<Utc>>,
    /// The evidence is due and the dispute still needs a response.
    pub past_due: bool,
    pub order_id: Uuid,
    /// The order's payment (an id of Tollgate's, derived from the order).
    pub payment_id: Uuid,
    pub customer: CustomerView,
    /// Support cases: none in Tollgate.
    #[schema(value_type = Option<String>)]
    pub case_id: Option<Value>,
}

impl DisputeView {
    pub fn new(d: &Dispute, customer: &Customer, now: DateTime<Utc>) -> Self {
        DisputeView {
            id: d.id.uuid(),
            created_at: d.created_at,
            modified_at: d.modified_at,
            status: d.status.as_str(),
            resolved: d.status.is_resolved(),
            closed: d.status.is_closed(),
            amount: d.amount,
            tax_amount: d.tax_amount,
            currency: d.currency.clone(),
            reason: d.reason.clone(),
            evidence_due_by: d.evidence_due_by,
            past_due: !d.status.is_closed() && d.evidence_due_by.is_some_and(|t| t < now),
            order_id: d.order_id.uuid(),
            payment_id: derived_uuid(d.order_id.uuid(), "payment"),
            customer: CustomerView::from(customer),
            case_id: None,
        }
    }
}

/// A dispute under review and a lost one, for the OpenAPI document's checks.
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    use crate::domain::dispute::DisputeStatus;
    use crate::domain::ids::{CustomerId, DisputeId, OrderId, OrganizationId};
    let customer = super::subscription::sample_customer();
    let at = DateTime::<Utc>::from_timestamp(1_700_000_000, 0).unwrap_or_default();
    [DisputeStatus::UnderReview, DisputeStatus::Lost]
        .into_iter()
        .map(|status| {
            let d = Dispute {
                id: DisputeId::new(),
                organization_id: OrganizationId::new(),
                created_at: at,
                modified_at: (status == DisputeStatus::Lost).then_some(at),
                status,
                amount: 2000,
                tax_amount: 0,
                currency: "usd".into(),
                reason: Some("fraudulent".into()),
                evidence_due_by: (status != DisputeStatus::Lost).then_some(at),
                order_id: OrderId::new(),
                customer_id: CustomerId::new(),
                processor_id: "dp_1".into(),
                revoked_at: None,
            };
            (
                "Dispute",
                serde_json::to_value(DisputeView::new(&d, &customer, at)).unwrap_or_default(),
            )
        })
        .collect()
}
