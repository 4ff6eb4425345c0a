//! Disputes (chargebacks): a buyer's bank taking a payment back, as the processor reports
//! it. Recorded on the order it disputes; a dispute the seller loses takes the order's
//! access back (`crate::app::disputes` in the server crate).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::ids::{CustomerId, DisputeId, OrderId, OrganizationId};
use super::time_key;

/// Tenant: an organization; by creation time.
pub const DISPUTE_BY_CREATED: &str = "dispute_by_created";
/// Tenant: an organization; by amount, then creation time.
pub const DISPUTE_BY_AMOUNT: &str = "dispute_by_amount";
/// Unique: the processor's dispute id (`dp_…`).
pub const DISPUTE_PROCESSOR_ID: &str = "dispute_processor_id";

/// Polar's `DisputeStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DisputeStatus {
    Prevented,
    EarlyWarning,
    NeedsResponse,
    UnderReview,
    Lost,
    Won,
}

impl DisputeStatus {
    pub const ALL: &'static [(&'static str, DisputeStatus)] = &[
        ("prevented", DisputeStatus::Prevented),
        ("early_warning", DisputeStatus::EarlyWarning),
        ("needs_response", DisputeStatus::NeedsResponse),
        ("under_review", DisputeStatus::UnderReview),
        ("lost", DisputeStatus::Lost),
        ("won", DisputeStatus::Won),
    ];

    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("under_review", |(n, _)| n)
    }

    pub fn parse(s: &str) -> Option<DisputeStatus> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, s)| *s)
    }

    /// Stripe's dispute status, as Polar maps it (`None`: not one Stripe sends).
    pub fn from_stripe(s: &str) -> Option<DisputeStatus> {
        Some(match s {
            "lost" => DisputeStatus::Lost,
            "won" => DisputeStatus::Won,
            "needs_response" | "warning_needs_response" => DisputeStatus::NeedsResponse,
            "under_review" | "warning_under_review" => DisputeStatus::UnderReview,
            "warning_closed" | "prevented" => DisputeStatus::Prevented,
            _ => return None,
        })
    }

    /// Decided: the money went one way for good.
    pub fn is_resolved(self) -> bool {
        matches!(self, DisputeStatus::Lost | DisputeStatus::Won)
    }

    pub fn is_closed(self) -> bool {
        matches!(
            self,
            DisputeStatus::Lost | DisputeStatus::Won | DisputeStatus::Prevented
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dispute {
    pub id: DisputeId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub status: DisputeStatus,
    /// Before tax.
    pub amount: i64,
    pub tax_amount: i64,
    pub currency: String,
    /// The card network's reason (`fraudulent`, `product_not_received`, …).
    pub reason: Option<String>,
    pub evidence_due_by: Option<DateTime<Utc>>,
    pub order_id: OrderId,
    pub customer_id: CustomerId,
    pub processor_id: String,
    /// When the order's access was taken back (a lost dispute), once.
    pub revoked_at: Option<DateTime<Utc>>,
}

impl Record for Dispute {
    crate::record_v1!(Dispute, "dispute");
    const INDEXES: &'static [&'static str] = &[DISPUTE_BY_CREATED, DISPUTE_BY_AMOUNT];
    const UNIQUES: &'static [&'static str] = &[DISPUTE_PROCESSOR_ID];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        let org = self.organization_id.key();
        let created = time_key(self.created_at);
        let mut by_amount = KeyBuf::new().i64(self.amount).into_vec();
        by_amount.extend_from_slice(&created);
        vec![
            IndexEntry::new(DISPUTE_BY_CREATED, org.clone(), created),
            IndexEntry::new(DISPUTE_BY_AMOUNT, org, by_amount),
        ]
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![processor_key(&self.processor_id)]
    }
}

pub fn processor_key(processor_id: &str) -> UniqueKey {
    UniqueKey::new(DISPUTE_PROCESSOR_ID, Vec::new(), processor_id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stripe_statuses_map_as_polar_maps_them() {
        assert_eq!(
            DisputeStatus::from_stripe("lost"),
            Some(DisputeStatus::Lost)
        );
        assert_eq!(
            DisputeStatus::from_stripe("warning_needs_response"),
            Some(DisputeStatus::NeedsResponse)
        );
        assert_eq!(
            DisputeStatus::from_stripe("warning_closed"),
            Some(DisputeStatus::Prevented)
        );
        assert_eq!(DisputeStatus::from_stripe("charge_refunded"), None);
        for (name, s) in DisputeStatus::ALL {
            assert_eq!(DisputeStatus::parse(name), Some(*s));
            assert_eq!(s.as_str(), *name);
        }
        assert!(DisputeStatus::Lost.is_resolved() && DisputeStatus::Won.is_closed());
        assert!(!DisputeStatus::NeedsResponse.is_closed());
    }
}
