//! License keys and activations in Polar's shapes (`LicenseKeyRead`,
//! `LicenseKeyWithActivations`, `ValidatedLicenseKey`, `LicenseKeyActivationBase`,
//! `LicenseKeyActivationRead`) and the request bodies of the license-key endpoints.

use chrono::{DateTime, Utc};
use serde::de::{Error as _, Unexpected};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};
use tollgate_actors::error::ActorError;
use tollgate_actors::license_key::{
    decide::stored_object, ActivateKey, Activation, DeactivateKey, ErrorKind, JsonObject,
    KeyChanges, KeyStatus, LicenseKey, LicenseKeyError, ValidateKey,
};

use super::custom_field_data::{lax_datetime, lax_int};
use super::customer::customer_json;
use super::Maybe;
use crate::domain::customer::Customer;
use crate::domain::ids::{ActivationId, BenefitId, CustomerId, OrganizationId};
use crate::error::{ApiError, FieldError};

// ---------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------

/// `LicenseKeyActivationBase`. The stored `conditions` are never shown.
#[derive(Debug, Clone, Serialize)]
pub struct ActivationView {
    pub id: ActivationId,
    pub license_key_id: uuid::Uuid,
    pub label: String,
    pub meta: JsonObject,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
}

impl ActivationView {
    pub fn new(key: &LicenseKey, a: &Activation) -> Self {
        ActivationView {
            id: a.id,
            license_key_id: key.id.0,
            label: a.label.clone(),
            meta: stored_object(&a.meta),
            created_at: a.created_at,
            modified_at: a.modified_at,
        }
    }
}

/// `LicenseKeyRead`, plus `activations` (`LicenseKeyWithActivations`) or `activation`
/// (`ValidatedLicenseKey`) when set.
#[derive(Debug, Clone, Serialize)]
pub struct LicenseKeyView {
    pub id: uuid::Uuid,
    pub organization_id: uuid::Uuid,
    /// Deprecated in Polar: the customer's legacy user id; Tollgate has none, so the
    /// customer id (Polar's fallback).
    pub user_id: uuid::Uuid,
    pub customer_id: uuid::Uuid,
    pub user: Value,
    pub customer: Value,
    pub benefit_id: uuid::Uuid,
    pub key: String,
    pub display_key: String,
    pub status: &'static str,
    pub limit_activations: Option<i64>,
    pub usage: i64,
    pub limit_usage: Option<i64>,
    pub validations: i64,
    pub last_validated_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activations: Option<Vec<ActivationView>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activation: Option<Option<ActivationView>>,
}

impl LicenseKeyView {
    /// `LicenseKeyRead`.
    pub fn read(key: &LicenseKey, customer: &Customer) -> Self {
        let customer_value = customer_json(customer);
        LicenseKeyView {
            id: key.id.0,
            organization_id: key.organization_id.0,
            user_id: key.customer_id.0,
            customer_id: key.customer_id.0,
            user: user_json(customer, &customer_value),
            customer: customer_value,
            benefit_id: key.benefit_id.0,
            key: key.key.clone(),
            display_key: key.display_key(),
            status: key.status.as_str(),
            limit_activations: key.limit_activations,
            usage: key.usage,
            limit_usage: key.limit_usage,
            validations: key.validations,
            last_validated_at: key.last_validated_at,
            expires_at: key.expires_at,
            activations: None,
            activation: None,
        }
    }

    /// `LicenseKeyWithActivations`: `activations` are the live ones, unless `hide` (the
    /// customer portal without `enable_customer_admin`), then `[]`.
    pub fn with_activations(key: &LicenseKey, customer: &Customer, hide: bool) -> Self {
        let activations = if hide {
            Vec::new()
        } else {
            tollgate_actors::license_key::live_activations(key)
                .map(|a| ActivationView::new(key, a))
                .collect()
        };
        LicenseKeyView {
            activations: Some(activations),
            ..Self::read(key, customer)
        }
    }

    /// `ValidatedLicenseKey`.
    pub fn validated(
        key: &LicenseKey,
        customer: &Customer,
        activation: Option<&Activation>,
    ) -> Self {
        LicenseKeyView {
            activation: Some(activation.map(|a| ActivationView::new(key, a))),
            ..Self::read(key, customer)
        }
    }
}

/// `LicenseKeyUser`: `customer_user_json` without computing the avatar a second time (it
/// is the customer's, already rendered). A test keeps the two identical.
fn user_json(customer: &Customer, rendered: &Value) -> Value {
    let public_name: String = customer
        .name
        .as_deref()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or(&customer.email)
        .chars()
        .take(1)
        .collect();
    json!({
        "id": customer.id.0,
        "email": customer.email,
        "public_name": public_name,
        "avatar_url": rendered["avatar_url"],
    })
}

/// `LicenseKeyActivationRead`.
#[derive(Debug, Clone, Serialize)]
pub struct ActivationReadView {
    #[serde(flatten)]
    pub activation: ActivationView,
    pub license_key: LicenseKeyView,
}

impl ActivationReadView {
    pub fn new(key: &LicenseKey, activation: &Activation, customer: &Customer) -> Self {
        ActivationReadView {
            activation: ActivationView::new(key, activation),
            license_key: LicenseKeyView::read(key, customer),
        }
    }
}

/// A refusal of the license-key actor as the API error it is (statuses live in
/// `crate::error`).
pub fn key_error(e: ActorError<LicenseKeyError>) -> ApiError {
    match e {
        ActorError::Domain(e) => match e.kind() {
            ErrorKind::NotFound => ApiError::NotFound(e.message()),
            ErrorKind::NotPermitted => ApiError::NotPermitted(e.message()),
            ErrorKind::BadRequest => ApiError::BadRequest(e.message()),
        },
        ActorError::NotFound => ApiError::not_found(),
        ActorError::AlreadyExists => ApiError::Conflict("The license key already exists.".into()),
        ActorError::Unavailable(_) => ApiError::Unavailable,
        ActorError::Storage(e) => e.into(),
    }
}

// ---------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------

/// pydantic's lax `int | None` for a serde field (`5`, `5.0`, `"5"`).
fn lax_opt_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(v) => lax_int(&v)
            .map(Some)
            .map_err(|_| D::Error::invalid_type(Unexpected::Other("value"), &"i64")),
    }
}

/// `LicenseKeyValidate`. Unknown fields (e.g. `label`) are ignored, as in Polar.
#[derive(Debug, Deserialize)]
pub struct LicenseKeyValidate {
    pub key: String,
    pub organization_id: uuid::Uuid,
    #[serde(default)]
    pub activation_id: Option<uuid::Uuid>,
    #[serde(default)]
    pub benefit_id: Option<uuid::Uuid>,
    #[serde(default)]
    pub customer_id: Option<uuid::Uuid>,
    #[serde(default, deserialize_with = "lax_opt_int")]
    pub increment_usage: Option<i64>,
    #[serde(default)]
    pub conditions: JsonObject,
}

impl LicenseKeyValidate {
    pub fn into_command(self) -> ValidateKey {
        ValidateKey {
            organization_id: OrganizationId(self.organization_id),
            key: self.key,
            activation_id: self.activation_id.map(ActivationId),
            benefit_id: self.benefit_id.map(BenefitId),
            customer_id: self.customer_id.map(CustomerId),
            increment_usage: self.increment_usage,
            conditions: self.conditions,
        }
    }
}

/// `LicenseKeyActivate`.
#[derive(Debug, Deserialize)]
pub struct LicenseKeyActivate {
    pub key: String,
    pub organization_id: uuid::Uuid,
    pub label: String,
    #[serde(default)]
    pub conditions: JsonObject,
    #[serde(default)]
    pub meta: JsonObject,
}

impl LicenseKeyActivate {
    pub fn into_command(self) -> ActivateKey {
        ActivateKey {
            organization_id: OrganizationId(self.organization_id),
            key: self.key,
            label: self.label,
            conditions: self.conditions,
            meta: self.meta,
        }
    }
}

/// `LicenseKeyDeactivate`.
#[derive(Debug, Deserialize)]
pub struct LicenseKeyDeactivate {
    pub key: String,
    pub organization_id: uuid::Uuid,
    pub activation_id: uuid::Uuid,
}

impl LicenseKeyDeactivate {
    pub fn into_command(self) -> DeactivateKey {
        DeactivateKey {
            organization_id: OrganizationId(self.organization_id),
            key: self.key,
            activation_id: ActivationId(self.activation_id),
        }
    }
}

/// `LicenseKeyUpdate`: every field optional; only the fields sent are applied, and an
/// explicit `null` clears `limit_activations`, `limit_usage` and `expires_at`.
#[derive(Debug, Default, Deserialize)]
pub struct LicenseKeyUpdate {
    #[serde(default)]
    pub status: Maybe<Value>,
    #[serde(default)]
    pub usage: Maybe<Value>,
    #[serde(default)]
    pub limit_activations: Maybe<Value>,
    #[serde(default)]
    pub limit_usage: Maybe<Value>,
    #[serde(default)]
    pub expires_at: Maybe<Value>,
}

const STATUSES: &[(&str, KeyStatus)] = &[
    ("granted", KeyStatus::Granted),
    ("revoked", KeyStatus::Revoked),
    ("disabled", KeyStatus::Disabled),
];

fn body_loc(field: &str) -> Vec<Value> {
    crate::loc!["body", field]
}

fn int_field(field: &str, v: &Value, errors: &mut Vec<FieldError>) -> Option<i64> {
    match lax_int(v) {
        Ok(n) => Some(n),
        Err((kind, msg)) => {
            errors.push(FieldError::new(kind, body_loc(field), msg, v.clone()));
            None
        }
    }
}

fn greater_than_zero(field: &str, n: i64, errors: &mut Vec<FieldError>) -> bool {
    if n > 0 {
        return true;
    }
    errors.push(
        FieldError::new(
            "greater_than",
            body_loc(field),
            "Input should be greater than 0",
            Value::from(n),
        )
        .with_ctx(json!({"gt": 0})),
    );
    false
}

impl LicenseKeyUpdate {
    /// The changes, or every field error at once (pydantic's rules).
    pub fn into_changes(self) -> Result<KeyChanges, ApiError> {
        let mut errors = Vec::new();
        let mut changes = KeyChanges::default();
        match self.status {
            Maybe::Absent => {}
            // Polar's schema lets `null` through and its database then refuses it (a 500):
            // here it is a validation error like any other value outside the enum.
            Maybe::Null | Maybe::Value(_) => {
                let raw = match &self.status {
                    Maybe::Value(v) => v.clone(),
                    _ => Value::Null,
                };
                match STATUSES
                    .iter()
                    .find(|(name, _)| raw.as_str() == Some(*name))
                {
                    Some((_, status)) => changes.status = Some(*status),
                    None => errors.push(
                        FieldError::new(
                            "enum",
                            body_loc("status"),
                            "Input should be 'granted', 'revoked' or 'disabled'",
                            raw,
                        )
                        .with_ctx(json!({"expected": "'granted', 'revoked' or 'disabled'"})),
                    ),
                }
            }
        }
        match &self.usage {
            Maybe::Absent => {}
            Maybe::Null => errors.push(FieldError::new(
                "int_type",
                body_loc("usage"),
                "Input should be a valid integer",
                Value::Null,
            )),
            Maybe::Value(v) => changes.usage = int_field("usage", v, &mut errors),
        }
        match &self.limit_activations {
            Maybe::Absent => {}
            Maybe::Null => changes.limit_activations = Some(None),
            Maybe::Value(v) => {
                if let Some(n) = int_field("limit_activations", v, &mut errors) {
                    if greater_than_zero("limit_activations", n, &mut errors) {
                        if n > 50 {
                            errors.push(
                                FieldError::new(
                                    "less_than_equal",
                                    body_loc("limit_activations"),
                                    "Input should be less than or equal to 50",
                                    Value::from(n),
                                )
                                .with_ctx(json!({"le": 50})),
                            );
                        } else {
                            changes.limit_activations = Some(Some(n));
                        }
                    }
                }
            }
        }
        match &self.limit_usage {
            Maybe::Absent => {}
            Maybe::Null => changes.limit_usage = Some(None),
            Maybe::Value(v) => {
                if let Some(n) = int_field("limit_usage", v, &mut errors) {
                    if greater_than_zero("limit_usage", n, &mut errors) {
                        changes.limit_usage = Some(Some(n));
                    }
                }
            }
        }
        match &self.expires_at {
            Maybe::Absent => {}
            Maybe::Null => changes.expires_at = Some(None),
            Maybe::Value(v) => match lax_datetime(v) {
                Ok(at) => changes.expires_at = Some(Some(at)),
                Err((kind, msg)) => errors.push(FieldError::new(
                    kind,
                    body_loc("expires_at"),
                    msg,
                    v.clone(),
                )),
            },
        }
        if errors.is_empty() {
            Ok(changes)
        } else {
            Err(ApiError::Validation(errors))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::customer::customer_user_json;

    fn changes(body: Value) -> Result<KeyChanges, Vec<FieldError>> {
        let update: LicenseKeyUpdate = serde_json::from_value(body).unwrap();
        update.into_changes().map_err(|e| match e {
            ApiError::Validation(items) => items,
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn the_user_summary_is_customer_user_json() {
        let org = OrganizationId::new();
        let mut c = Customer::new(
            CustomerId::new(),
            org,
            "Jane@Example.com".into(),
            Utc::now(),
        );
        for name in [None, Some("  "), Some("Émile")] {
            c.name = name.map(String::from);
            assert_eq!(user_json(&c, &customer_json(&c)), customer_user_json(&c));
        }
    }

    #[test]
    fn only_sent_fields_change_and_null_clears() {
        assert_eq!(changes(json!({})).unwrap(), KeyChanges::default());
        let c = changes(json!({
            "status": "disabled", "usage": 4, "limit_activations": null,
            "limit_usage": "10", "expires_at": "2030-01-02T03:04:05Z"
        }))
        .unwrap();
        assert_eq!(c.status, Some(KeyStatus::Disabled));
        assert_eq!(c.usage, Some(4));
        assert_eq!(c.limit_activations, Some(None));
        assert_eq!(c.limit_usage, Some(Some(10)));
        assert_eq!(
            c.expires_at.flatten().map(|t| t.to_rfc3339()),
            Some("2030-01-02T03:04:05+00:00".to_string())
        );
        assert_eq!(
            changes(json!({"expires_at": null})).unwrap().expires_at,
            Some(None)
        );
    }

    #[test]
    fn ranges_and_types_are_pydantics() {
        let errs = changes(json!({
            "status": "paused", "usage": null, "limit_activations": 51,
            "limit_usage": 0, "expires_at": "soon"
        }))
        .unwrap_err();
        let kinds: Vec<(&str, Value)> = errs
            .iter()
            .map(|e| (e.kind.as_str(), e.loc[1].clone()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("enum", json!("status")),
                ("int_type", json!("usage")),
                ("less_than_equal", json!("limit_activations")),
                ("greater_than", json!("limit_usage")),
                ("datetime_from_date_parsing", json!("expires_at")),
            ]
        );
        let errs = changes(json!({"limit_activations": 0})).unwrap_err();
        assert_eq!(errs[0].msg, "Input should be greater than 0");
        assert!(changes(json!({"limit_activations": 50})).is_ok());
        assert!(changes(json!({"status": null})).is_err());
    }

    #[test]
    fn validate_body_is_lax_about_integers_and_strict_about_ids() {
        let v: LicenseKeyValidate = serde_json::from_value(json!({
            "key": "K", "organization_id": uuid::Uuid::new_v4(), "increment_usage": "3",
            "label": "ignored"
        }))
        .unwrap();
        assert_eq!(v.increment_usage, Some(3));
        assert!(v.conditions.is_empty());
        let bad = serde_json::from_value::<LicenseKeyValidate>(json!({
            "key": "K", "organization_id": uuid::Uuid::new_v4(), "increment_usage": 1.5
        }));
        assert!(bad.is_err());
    }
}
