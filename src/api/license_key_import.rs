//! `POST /v1/license-keys/import`: the keys a seller brings from another provider, with
//! their customers, limits, usage and activations (Tollgate's; Polar has no import).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use super::Maybe;

/// The most keys one import takes.
pub const MAX_IMPORTED_KEYS: usize = 1000;
/// The longest key value accepted.
pub const MAX_KEY_CHARS: usize = 255;

/// Keys of one license-key benefit, each with its holder. Idempotent per key value: a key
/// imported before is left as it is (`created: false`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LicenseKeyImport {
    pub organization_id: Uuid,
    /// The license-key benefit the keys belong to (its limits are the defaults).
    pub benefit_id: Uuid,
    /// 1 to 1,000 keys.
    pub keys: Vec<ImportedKey>,
}

/// One key as the other provider issued it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportedKey {
    /// The value the buyer holds, kept exactly (1 to 255 characters, no spaces or control
    /// characters); unique in the organization.
    pub key: String,
    /// The holder: an existing customer of the organization, or, instead, an e-mail
    /// address (the customer with it, created if there is none).
    #[serde(default)]
    pub customer_id: Option<Uuid>,
    #[serde(default)]
    pub customer_email: Option<String>,
    /// The name of a customer the import creates.
    #[serde(default)]
    pub customer_name: Option<String>,
    /// `granted` (default), `disabled` or `revoked`.
    #[serde(default)]
    pub status: Option<String>,
    /// When it stops validating; left out or `null`: never.
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
    /// 1 to 50; left out: the benefit's; `null`: none.
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub limit_activations: Maybe<i64>,
    /// At least 1; left out: the benefit's; `null`: none.
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub limit_usage: Maybe<i64>,
    /// Usage so far (default 0).
    #[serde(default)]
    pub usage: Option<i64>,
    /// Validations so far (default 0).
    #[serde(default)]
    pub validations: Option<i64>,
    /// Its live activations (no more than its activation limit).
    #[serde(default)]
    pub activations: Vec<ImportedActivation>,
}

/// An activation the other provider recorded.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportedActivation {
    pub label: String,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub meta: Option<Map<String, Value>>,
    /// What a validation of this activation must send (`conditions`).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub conditions: Option<Map<String, Value>>,
    /// When it was made (default: the import).
    #[serde(default)]
    pub created_at: Option<DateTime<Utc>>,
}

/// What an import did.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LicenseKeyImportResult {
    /// Keys written by this import.
    pub created: u64,
    /// Keys imported before, left as they are.
    pub unchanged: u64,
    /// Customers the import created (by e-mail address).
    pub customers_created: u64,
    /// One item per key, in the request's order.
    pub items: Vec<ImportedKeyResult>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ImportedKeyResult {
    /// The key's id (derived from the organization and the value: the same at every
    /// import).
    pub id: Uuid,
    pub display_key: String,
    pub customer_id: Uuid,
    /// Written by this import (false: imported before).
    pub created: bool,
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    let result = LicenseKeyImportResult {
        created: 1,
        unchanged: 1,
        customers_created: 1,
        items: vec![
            ImportedKeyResult {
                id: Uuid::from_u128(1),
                display_key: "****-1234".into(),
                customer_id: Uuid::from_u128(2),
                created: true,
            },
            ImportedKeyResult {
                id: Uuid::from_u128(3),
                display_key: "****-5678".into(),
                customer_id: Uuid::from_u128(2),
                created: false,
            },
        ],
    };
    vec![(
        "LicenseKeyImportResult",
        serde_json::to_value(result).unwrap_or_default(),
    )]
}

/// `POST /v1/license-keys/generate`: `count` keys of a license-key benefit, made without
/// an order, each claimable by one customer.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LicenseKeyGenerate {
    pub organization_id: Uuid,
    pub benefit_id: Uuid,
    /// 1 to 1,000.
    pub count: i64,
}

/// The keys generated: hand out `key`; a customer claims it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GeneratedKeys {
    pub items: Vec<GeneratedKey>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GeneratedKey {
    pub id: Uuid,
    /// The value to hand out (with the benefit's prefix).
    pub key: String,
    pub benefit_id: Uuid,
    pub created_at: DateTime<Utc>,
}

/// `POST /v1/customer-portal/license-keys/claim`: a generated key becomes the signed-in
/// customer's license key.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LicenseKeyClaim {
    pub key: String,
    pub organization_id: Uuid,
}

#[cfg(test)]
pub(crate) fn generate_samples() -> Vec<(&'static str, Value)> {
    let g = GeneratedKeys {
        items: vec![GeneratedKey {
            id: Uuid::from_u128(9),
            key: "GIFT-7E1C0A52-0C4B-4C8E-9D55-0F8A7B6C5D4E".into(),
            benefit_id: Uuid::from_u128(8),
            created_at: chrono::DateTime::<Utc>::UNIX_EPOCH,
        }],
    };
    vec![("GeneratedKeys", serde_json::to_value(g).unwrap_or_default())]
}
