//! `POST /v1/license-keys/import`: the keys a seller brings from another provider, with
//! their customers, limits, usage and activations (Tollgate's; Polar has no import).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use tollgate_actors::license_key::model::{ActivationToImport, ImportKeys, KeyHolder, KeyToImport};
use tollgate_actors::license_key::KeyStatus;

use super::Maybe;
use crate::domain::ids::{BenefitId, CustomerId, OrganizationId};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;

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

/// Polar's activation limit range.
const MAX_ACTIVATIONS: i64 = 50;

fn key_loc(i: usize, field: &str) -> Vec<Value> {
    loc!["body", "keys", i, field]
}

impl LicenseKeyImport {
    /// The command, or every problem of shape at once, key by key in the request's order
    /// (the checks that need the store are the use case's).
    pub fn into_command(self) -> Result<ImportKeys, ApiError> {
        let mut v = Validator::new();
        if self.keys.is_empty() || self.keys.len() > MAX_IMPORTED_KEYS {
            v.push(FieldError::new(
                if self.keys.is_empty() {
                    "too_short"
                } else {
                    "too_long"
                },
                loc!["body", "keys"],
                "An import takes 1 to 1000 keys.",
                Value::from(self.keys.len()),
            ));
        }
        let mut keys = Vec::with_capacity(self.keys.len());
        let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
        for (i, k) in self.keys.into_iter().enumerate() {
            let again = (!seen.insert(k.key.clone())).then(|| k.key.clone());
            let key = k.check(&mut v, i);
            if let Some(value) = again {
                v.push(FieldError::new(
                    "value_error",
                    key_loc(i, "key"),
                    "This key is already in the request.",
                    Value::from(value),
                ));
            }
            keys.extend(key);
        }
        v.finish()?;
        Ok(ImportKeys {
            organization_id: OrganizationId(self.organization_id),
            benefit_id: BenefitId(self.benefit_id),
            keys,
        })
    }
}

fn limit(m: Maybe<i64>) -> Option<Option<i64>> {
    match m {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(n) => Some(Some(n)),
    }
}

impl ImportedKey {
    /// The checks of one key that need no store (pushed on `v`, which refuses the import if
    /// any failed): the key, or none when its holder or status is missing.
    fn check(self, v: &mut Validator, i: usize) -> Option<KeyToImport> {
        let value = self.key.as_str();
        if value.is_empty()
            || value.chars().count() > MAX_KEY_CHARS
            || value.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            v.push(FieldError::new(
                "value_error",
                key_loc(i, "key"),
                "A key is 1 to 255 characters, without spaces or control characters.",
                Value::from(value),
            ));
        }
        let holder = match (self.customer_id, &self.customer_email) {
            (Some(id), _) => Some(KeyHolder::Customer(CustomerId(id))),
            (None, None) => {
                v.push(FieldError::new(
                    "missing",
                    key_loc(i, "customer_email"),
                    "Either customer_id or customer_email is required.",
                    Value::Null,
                ));
                None
            }
            (None, Some(email)) => {
                v.email(key_loc(i, "customer_email"), email);
                Some(KeyHolder::Email(email.clone()))
            }
        };
        // It may become a customer's name, which reaches message headers.
        if let Some(name) = &self.customer_name {
            v.header_safe(key_loc(i, "customer_name"), name);
        }
        let status = match self.status.as_deref() {
            None | Some("granted") => Some(KeyStatus::Granted),
            Some("disabled") => Some(KeyStatus::Disabled),
            Some("revoked") => Some(KeyStatus::Revoked),
            Some(other) => {
                v.push(
                    FieldError::new(
                        "enum",
                        key_loc(i, "status"),
                        "Input should be 'granted', 'revoked' or 'disabled'",
                        Value::from(other),
                    )
                    .with_ctx(
                        serde_json::json!({"expected": "'granted', 'revoked' or 'disabled'"}),
                    ),
                );
                None
            }
        };
        if let Maybe::Value(n) = self.limit_activations {
            v.int_range(
                key_loc(i, "limit_activations"),
                n,
                Some(1),
                Some(MAX_ACTIVATIONS),
            );
        }
        if let Maybe::Value(n) = self.limit_usage {
            v.int_range(key_loc(i, "limit_usage"), n, Some(1), None);
        }
        for (field, n) in [("usage", self.usage), ("validations", self.validations)] {
            if let Some(n) = n {
                v.int_range(key_loc(i, field), n, Some(0), None);
            }
        }
        for (j, a) in self.activations.iter().enumerate() {
            if a.label.trim().is_empty() {
                v.push(FieldError::new(
                    "string_too_short",
                    loc!["body", "keys", i, "activations", j, "label"],
                    "String should have at least 1 character",
                    Value::from(a.label.as_str()),
                ));
            }
        }
        Some(KeyToImport {
            key: self.key,
            holder: holder?,
            customer_name: self.customer_name,
            status: status?,
            expires_at: self.expires_at,
            limit_activations: limit(self.limit_activations),
            limit_usage: limit(self.limit_usage),
            usage: self.usage.unwrap_or(0),
            validations: self.validations.unwrap_or(0),
            activations: self
                .activations
                .into_iter()
                .map(|a| ActivationToImport {
                    label: a.label,
                    meta: a.meta.unwrap_or_default(),
                    conditions: a.conditions.unwrap_or_default(),
                    created_at: a.created_at,
                })
                .collect(),
        })
    }
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
