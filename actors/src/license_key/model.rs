//! The license key aggregate's state.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::ids::{
    ActivationId, BenefitId, CustomerId, LicenseKeyId, OrderId, OrganizationId, SubscriptionId,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyStatus {
    Granted,
    Revoked,
    Disabled,
}

impl KeyStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyStatus::Granted => "granted",
            KeyStatus::Revoked => "revoked",
            KeyStatus::Disabled => "disabled",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LicenseKey {
    pub id: LicenseKeyId,
    pub organization_id: OrganizationId,
    pub customer_id: CustomerId,
    pub benefit_id: BenefitId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// The secret value: `PREFIX-UUID` in upper case, or the bare upper-case UUID.
    pub key: String,
    pub status: KeyStatus,
    pub limit_activations: Option<i64>,
    pub usage: i64,
    pub limit_usage: Option<i64>,
    pub validations: i64,
    pub last_validated_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
    /// Every activation, deactivated ones included (they keep `deleted_at`).
    pub activations: Vec<Activation>,
    /// What granted it: a subscription (revoked when it ends) or a one-time order.
    pub subscription_id: Option<SubscriptionId>,
    pub order_id: Option<OrderId>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Activation {
    pub id: ActivationId,
    pub label: String,
    /// Arbitrary JSON objects, stored as JSON text (bincode cannot store JSON values).
    pub meta: String,
    pub conditions: String,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub deleted_at: Option<DateTime<Utc>>,
}

impl LicenseKey {
    /// `****-` and the last six characters of the key.
    pub fn display_key(&self) -> String {
        let tail: String = {
            let chars: Vec<char> = self.key.chars().collect();
            chars[chars.len().saturating_sub(6)..].iter().collect()
        };
        format!("****-{tail}")
    }
}

/// A new key's value: an upper-case UUID4, after `PREFIX-` when the benefit has a prefix
/// (trimmed and upper-cased, Polar's rule: only a null prefix skips the dash).
pub fn generate_key(prefix: Option<&str>) -> String {
    let uuid = uuid::Uuid::new_v4().hyphenated().to_string().to_uppercase();
    match prefix {
        Some(p) => format!("{}-{uuid}", p.trim().to_uppercase()),
        None => uuid,
    }
}
