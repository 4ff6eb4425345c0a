//! License keys and activations in Polar's shapes (`LicenseKeyRead`,
//! `LicenseKeyWithActivations`, `ValidatedLicenseKey`, `GrantedLicenseKey`,
//! `RotatedLicenseKey`, `LicenseKeyActivationBase`, `LicenseKeyActivationRead`,
//! `LicenseKeyActivationCreated`) and the request bodies of the license-key endpoints.
//!
//! Every key rendering carries Polar's `LicenseKeyRead` fields (with `created_at` and
//! `modified_at`, which @polar-sh/sdk 0.47 requires), plus the deprecated `user_id`/`user`
//! of the seed-era clients. Fields that exist from a version on are left out of older ones
//! (`member_id`/`member` from 2026-10; on validate and activate answers `subscription_id`,
//! `subscription`, `order_id`, `order` from 2027-01), and listed in a [`VersionedFields`]
//! impl for the per-version OpenAPI documents.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::de::{Error as _, Unexpected};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use tollgate_actors::error::ActorError;
use tollgate_actors::license_key::{
    decide::stored_object, live_activations, ActivateKey, Activation, ActivationRef, DeactivateKey,
    ErrorKind, JsonObject, KeyChanges, KeyStatus, LicenseKey, LicenseKeyError, Replace,
    ValidateKey,
};
use tollgate_actors::subscription::Subscription;
use utoipa::ToSchema;
use uuid::Uuid;

use super::custom_field_data::{lax_datetime, lax_int, Rejection};
use super::customer::{CustomerUser, CustomerView};
use super::order::OrderStatus;
use super::subscription::SubscriptionStatus;
use super::version::{self, ApiVersion, VersionedFields, Versions};
use super::Maybe;
use crate::domain::customer::Customer;
use crate::domain::ids::{ActivationId, BenefitId, CustomerId, OrganizationId};
use crate::domain::order::Order;
use crate::error::{ApiError, AppError, FieldError, Given, Invalid, Step};
use crate::field;

// ---------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LicenseKeyStatus {
    Granted,
    Revoked,
    Disabled,
}

impl From<KeyStatus> for LicenseKeyStatus {
    fn from(s: KeyStatus) -> Self {
        match s {
            KeyStatus::Granted => LicenseKeyStatus::Granted,
            KeyStatus::Revoked => LicenseKeyStatus::Revoked,
            KeyStatus::Disabled => LicenseKeyStatus::Disabled,
        }
    }
}

/// An activation rendering: the fields of `LicenseKeyActivationBase`, then the form's own;
/// `build` fills the common fields from the records. The stored `conditions` are never
/// shown.
macro_rules! activation_schema {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, Serialize, ToSchema)]
        $(#[$doc])*
        pub struct $name {
            pub id: Uuid,
            pub license_key_id: Uuid,
            pub label: String,
            #[schema(value_type = Object)]
            pub meta: JsonObject,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            $($(#[$fdoc])* pub $field: $ty,)*
        }

        impl $name {
            fn build(key: &LicenseKey, a: &Activation, $($field: $ty),*) -> Self {
                Self {
                    id: a.id.0,
                    license_key_id: key.id.0,
                    label: a.label.clone(),
                    meta: stored_object(&a.meta),
                    created_at: a.created_at,
                    modified_at: a.modified_at,
                    $($field,)*
                }
            }
        }
    };
}

activation_schema!(LicenseKeyActivationBase {});
activation_schema!(LicenseKeyActivationRead {
    license_key: LicenseKeyRead
});
activation_schema!(
    /// The answer to an activation: one shape that parses as polar-sdk 1.0's
    /// `LicenseKeyActivationCreated` (its key a `GrantedLicenseKey`) and as @polar-sh/sdk
    /// 0.47's `LicenseKeyActivationRead` (its key a `LicenseKeyRead`, which
    /// `GrantedLicenseKey` contains).
    LicenseKeyActivationCreated {
        license_key: GrantedLicenseKey
    }
);

impl LicenseKeyActivationBase {
    pub fn new(key: &LicenseKey, a: &Activation) -> Self {
        LicenseKeyActivationBase::build(key, a)
    }
}

impl LicenseKeyActivationRead {
    pub fn new(key: &LicenseKey, a: &Activation, customer: &Customer) -> Self {
        LicenseKeyActivationRead::build(key, a, LicenseKeyRead::new(key, customer))
    }
}

impl LicenseKeyActivationCreated {
    /// `purchase`: what granted the key (read only when 2027-01 is served).
    pub fn new(key: &LicenseKey, a: &Activation, customer: &Customer, purchase: Purchase) -> Self {
        let license_key = GrantedLicenseKey::new(key, customer).with_purchase(purchase);
        LicenseKeyActivationCreated::build(key, a, license_key)
    }
}

/// A license-key rendering: the fields of `LicenseKeyRead`, then the form's own; `build`
/// fills the common fields from the key and its customer.
macro_rules! license_key_schema {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, Serialize, ToSchema)]
        $(#[$doc])*
        pub struct $name {
            pub id: Uuid,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            pub organization_id: Uuid,
            /// Deprecated: the customer's id.
            pub user_id: Uuid,
            pub customer_id: Uuid,
            #[schema(value_type = CustomerUser)]
            pub user: Arc<CustomerUser>,
            #[schema(value_type = CustomerView)]
            pub customer: Arc<CustomerView>,
            pub benefit_id: Uuid,
            pub key: String,
            pub display_key: String,
            pub status: LicenseKeyStatus,
            pub limit_activations: Option<i64>,
            pub usage: i64,
            pub limit_usage: Option<i64>,
            pub validations: i64,
            pub last_validated_at: Option<DateTime<Utc>>,
            pub expires_at: Option<DateTime<Utc>>,
            /// From 2026-10: the member of a team customer it belongs to (Tollgate has no
            /// members: always `null`).
            #[serde(skip_serializing_if = "version::before_2026_10")]
            pub member_id: Option<Uuid>,
            #[serde(skip_serializing_if = "version::before_2026_10")]
            pub member: Option<LicenseKeyMember>,
            $($(#[$fdoc])* pub $field: $ty,)*
        }

        impl $name {
            // One argument per field of the form (the validated one has six).
            #[allow(clippy::too_many_arguments)]
            fn build(key: &LicenseKey, customer: &CustomerParts, $($field: $ty),*) -> Self {
                Self {
                    id: key.id.0,
                    created_at: key.created_at,
                    modified_at: key.modified_at,
                    organization_id: key.organization_id.0,
                    // Polar's legacy user id; Tollgate has none, so the customer's.
                    user_id: key.customer_id.0,
                    customer_id: key.customer_id.0,
                    user: customer.user.clone(),
                    customer: customer.view.clone(),
                    benefit_id: key.benefit_id.0,
                    key: key.key.clone(),
                    display_key: key.display_key(),
                    status: key.status.into(),
                    limit_activations: key.limit_activations,
                    usage: key.usage,
                    limit_usage: key.limit_usage,
                    validations: key.validations,
                    last_validated_at: key.last_validated_at,
                    expires_at: key.expires_at,
                    member_id: None,
                    member: None,
                    $($field,)*
                }
            }
        }
    };
}

/// The member a key belongs to (from 2026-10; Tollgate has no team members yet).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LicenseKeyMember {
    pub id: Uuid,
    pub email: String,
    pub external_id: Option<String>,
}

/// The fields every license-key rendering has from 2026-10 on.
const MEMBER_FIELDS: &[(&str, Versions)] = &[
    ("member_id", Versions::since(ApiVersion::V2026_10)),
    ("member", Versions::since(ApiVersion::V2026_10)),
];

impl VersionedFields for LicenseKeyRead {
    const SCHEMA: &'static str = "LicenseKeyRead";
    const FIELDS: &'static [(&'static str, Versions)] = MEMBER_FIELDS;
}

impl VersionedFields for LicenseKeyWithActivations {
    const SCHEMA: &'static str = "LicenseKeyWithActivations";
    const FIELDS: &'static [(&'static str, Versions)] = MEMBER_FIELDS;
}

/// The fields of validate and activate answers (`ValidatedLicenseKey`,
/// `GrantedLicenseKey`): the member's from 2026-10, what granted the key from 2027-01.
const MEMBER_AND_PURCHASE_FIELDS: &[(&str, Versions)] = &[
    ("member_id", Versions::since(ApiVersion::V2026_10)),
    ("member", Versions::since(ApiVersion::V2026_10)),
    ("subscription_id", Versions::since(ApiVersion::V2027_01)),
    ("subscription", Versions::since(ApiVersion::V2027_01)),
    ("order_id", Versions::since(ApiVersion::V2027_01)),
    ("order", Versions::since(ApiVersion::V2027_01)),
];

impl VersionedFields for ValidatedLicenseKey {
    const SCHEMA: &'static str = "ValidatedLicenseKey";
    const FIELDS: &'static [(&'static str, Versions)] = MEMBER_AND_PURCHASE_FIELDS;
}

impl VersionedFields for GrantedLicenseKey {
    const SCHEMA: &'static str = "GrantedLicenseKey";
    const FIELDS: &'static [(&'static str, Versions)] = MEMBER_AND_PURCHASE_FIELDS;
}

impl VersionedFields for RotatedLicenseKey {
    const SCHEMA: &'static str = "RotatedLicenseKey";
    const FIELDS: &'static [(&'static str, Versions)] = MEMBER_FIELDS;
}

license_key_schema!(LicenseKeyRead {});
license_key_schema!(
    /// A key with its new value (`POST …/{id}/rotate`): granted or disabled, as only those
    /// rotate.
    RotatedLicenseKey {}
);
license_key_schema!(LicenseKeyWithActivations {
    activations: Vec<LicenseKeyActivationBase>
});
license_key_schema!(
    /// The validated key, with the activation that was checked (if any).
    ValidatedLicenseKey {
        activation: Option<LicenseKeyActivationBase>,
        /// Tollgate's: the key's subscription has not paid for the current period (a
        /// renewal is being retried) and the key validates in its grace period until
        /// then; `null` otherwise. The SDKs ignore it.
        grace_until: Option<DateTime<Utc>>,
        /// From 2027-01: the subscription that granted the key, if one did.
        #[serde(skip_serializing_if = "version::before_2027_01")]
        subscription_id: Option<Uuid>,
        #[serde(skip_serializing_if = "version::before_2027_01")]
        subscription: Option<LicenseKeySubscription>,
        /// From 2027-01: the one-time order that granted the key, if one did.
        #[serde(skip_serializing_if = "version::before_2027_01")]
        order_id: Option<Uuid>,
        #[serde(skip_serializing_if = "version::before_2027_01")]
        order: Option<LicenseKeyOrder>,
        /// Tollgate's: the feature flags the key's customer holds from the key's order or
        /// subscription, now (additive; the SDKs ignore it).
        #[schema(value_type = Vec<Entitlement>)]
        entitlements: Arc<Vec<Entitlement>>,
    }
);
license_key_schema!(
    /// The key an activation was made on (always granted: only a granted key activates).
    GrantedLicenseKey {
        /// From 2027-01: the subscription that granted the key, if one did.
        #[serde(skip_serializing_if = "version::before_2027_01")]
        subscription_id: Option<Uuid>,
        #[serde(skip_serializing_if = "version::before_2027_01")]
        subscription: Option<LicenseKeySubscription>,
        /// From 2027-01: the one-time order that granted the key, if one did.
        #[serde(skip_serializing_if = "version::before_2027_01")]
        order_id: Option<Uuid>,
        #[serde(skip_serializing_if = "version::before_2027_01")]
        order: Option<LicenseKeyOrder>,
        /// Tollgate's: the feature flags the key's customer holds from the key's order or
        /// subscription, now (additive; the SDKs ignore it).
        #[schema(value_type = Vec<Entitlement>)]
        entitlements: Arc<Vec<Entitlement>>,
    }
);

/// Tollgate's entitlement: a `feature_flag` benefit a key's purchase grants, with what it
/// unlocks (its metadata).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Entitlement {
    pub benefit_id: Uuid,
    pub description: String,
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: crate::api::metadata::MetadataMap,
    /// The benefit's creation, for the license file's Keygen `entitlements` resource.
    #[serde(skip)]
    pub created_at: DateTime<Utc>,
    /// The benefit's last change (its creation when none), likewise.
    #[serde(skip)]
    pub updated_at: DateTime<Utc>,
}

impl From<&crate::domain::benefit::Benefit> for Entitlement {
    fn from(b: &crate::domain::benefit::Benefit) -> Self {
        Entitlement {
            benefit_id: b.id.0,
            description: b.description.clone(),
            metadata: crate::api::metadata::metadata_map(&b.metadata),
            created_at: b.created_at,
            updated_at: b.modified_at.unwrap_or(b.created_at),
        }
    }
}

/// The subscription that granted a key, as 2027-01 answers show it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LicenseKeySubscription {
    pub id: Uuid,
    pub status: SubscriptionStatus,
    pub current_period_start: DateTime<Utc>,
    pub current_period_end: DateTime<Utc>,
    pub cancel_at_period_end: bool,
    pub ends_at: Option<DateTime<Utc>>,
}

impl From<&Subscription> for LicenseKeySubscription {
    fn from(s: &Subscription) -> Self {
        LicenseKeySubscription {
            id: s.id.0,
            status: s.status.into(),
            current_period_start: s.current_period_start,
            // Every period Tollgate starts has an end; Polar's field is never null.
            current_period_end: s.current_period_end.unwrap_or(s.current_period_start),
            cancel_at_period_end: s.cancel_at_period_end,
            ends_at: s.ends_at,
        }
    }
}

/// The one-time order that granted a key, as 2027-01 answers show it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LicenseKeyOrder {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub status: OrderStatus,
    /// Polar's `paid`: paid, refunded or partially refunded (every order Tollgate writes).
    pub paid: bool,
}

impl From<&Order> for LicenseKeyOrder {
    fn from(o: &Order) -> Self {
        LicenseKeyOrder {
            id: o.id.0,
            created_at: o.created_at,
            status: o.status.into(),
            paid: true,
        }
    }
}

/// What granted a key, for the 2027-01 fields of validate and activate answers: read by
/// the use case only when that version is served (`Default`: nothing read).
#[derive(Debug, Clone, Default)]
pub struct Purchase {
    pub subscription: Option<LicenseKeySubscription>,
    pub order: Option<LicenseKeyOrder>,
}

/// A customer as license keys show it (`customer` and the deprecated `user`), rendered
/// once and shared: the validation hot path keeps them in `crate::cache::CustomerCache`.
#[derive(Debug, Clone)]
pub struct CustomerParts {
    pub view: Arc<CustomerView>,
    pub user: Arc<CustomerUser>,
}

impl From<&Customer> for CustomerParts {
    fn from(customer: &Customer) -> Self {
        let view = CustomerView::from(customer);
        let user = user_of(customer, &view);
        CustomerParts {
            view: Arc::new(view),
            user: Arc::new(user),
        }
    }
}

impl LicenseKeyRead {
    pub fn new(key: &LicenseKey, customer: &Customer) -> Self {
        LicenseKeyRead::build(key, &CustomerParts::from(customer))
    }
}

impl RotatedLicenseKey {
    pub fn new(key: &LicenseKey, customer: &Customer) -> Self {
        RotatedLicenseKey::build(key, &CustomerParts::from(customer))
    }
}

impl LicenseKeyWithActivations {
    /// `activations` are the live ones, unless `hide` (the customer portal without
    /// `enable_customer_admin`), then `[]`.
    pub fn new(key: &LicenseKey, customer: &Customer, hide: bool) -> Self {
        let activations = if hide {
            Vec::new()
        } else {
            live_activations(key)
                .map(|a| LicenseKeyActivationBase::new(key, a))
                .collect()
        };
        LicenseKeyWithActivations::build(key, &CustomerParts::from(customer), activations)
    }
}

impl ValidatedLicenseKey {
    pub fn new(
        key: &LicenseKey,
        customer: &CustomerParts,
        activation: Option<&Activation>,
    ) -> Self {
        let activation = activation.map(|a| LicenseKeyActivationBase::new(key, a));
        ValidatedLicenseKey::build(
            key,
            customer,
            activation,
            None,
            key.subscription_id.map(|s| s.0),
            None,
            key.order_id.map(|o| o.0),
            None,
            Arc::default(),
        )
    }

    pub fn with_purchase(mut self, purchase: Purchase) -> Self {
        self.subscription = purchase.subscription;
        self.order = purchase.order;
        self
    }

    pub fn with_entitlements(mut self, entitlements: Arc<Vec<Entitlement>>) -> Self {
        self.entitlements = entitlements;
        self
    }
}

impl GrantedLicenseKey {
    pub fn new(key: &LicenseKey, customer: &Customer) -> Self {
        GrantedLicenseKey::build(
            key,
            &CustomerParts::from(customer),
            key.subscription_id.map(|s| s.0),
            None,
            key.order_id.map(|o| o.0),
            None,
            Arc::default(),
        )
    }

    pub fn with_purchase(mut self, purchase: Purchase) -> Self {
        self.subscription = purchase.subscription;
        self.order = purchase.order;
        self
    }

    pub fn with_entitlements(mut self, entitlements: Arc<Vec<Entitlement>>) -> Self {
        self.entitlements = entitlements;
        self
    }
}

/// `CustomerUser::from(customer)` without computing the avatar a second time (it is the
/// customer's, already in `view`): a SHA-256 saved on every validation. A test keeps the
/// two identical.
fn user_of(customer: &Customer, view: &CustomerView) -> CustomerUser {
    let public_name: String = customer
        .name
        .as_deref()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or(&customer.email)
        .chars()
        .take(1)
        .collect();
    CustomerUser {
        id: customer.id.0,
        email: customer.email.clone(),
        public_name,
        avatar_url: view.avatar_url.clone(),
    }
}

/// A refusal of the license-key actor as the API error it is (statuses live in
/// `crate::error`). Transitional, for the callers outside the license-key use cases:
/// `crate::app::license_keys::key_error` is the mapping to codes.
pub fn key_error(e: ActorError<LicenseKeyError>) -> ApiError {
    match e {
        ActorError::Domain(LicenseKeyError::ReplacementRateLimited { retry_after_secs }) => {
            replacement_denied(retry_after_secs).into()
        }
        ActorError::Domain(e) => match e.kind() {
            ErrorKind::NotFound => ApiError::NotFound(e.message()),
            ErrorKind::NotPermitted => ApiError::NotPermitted(e.message()),
            ErrorKind::BadRequest => ApiError::BadRequest(e.message()),
            ErrorKind::RotateNotPermitted => ApiError::RotateNotPermitted(e.message()),
            ErrorKind::TooManyRequests => ApiError::TooManyRequests {
                retry_after_secs: 1,
            },
        }
        .with_code(e.code()),
        ActorError::NotFound => unknown_key(),
        ActorError::AlreadyExists => ApiError::Conflict("The license key already exists.".into()),
        ActorError::Unavailable(_) => ApiError::Unavailable,
        ActorError::Storage(e) => e.into(),
    }
}

/// A replacement over the key's limit ([`tollgate_actors::license_key::REPLACEMENTS_PER_WINDOW`] in
/// `REPLACEMENT_WINDOW_HOURS`, counted in the key's record so that it holds on every
/// node): a 429 whose `RateLimit-Policy` names the policy `replace`.
pub fn replacement_denied(retry_after_secs: u64) -> crate::limits::Denied {
    let mut report = crate::limits::Report::default();
    let window_secs = u32::try_from(tollgate_actors::license_key::REPLACEMENT_WINDOW_HOURS * 3600)
        .unwrap_or(u32::MAX);
    report.push(crate::limits::PolicyState {
        name: "replace",
        quota: u32::try_from(tollgate_actors::license_key::REPLACEMENTS_PER_WINDOW)
            .unwrap_or(u32::MAX),
        window_secs,
        remaining: 0,
        reset_secs: u32::try_from(retry_after_secs).unwrap_or(window_secs),
    });
    crate::limits::Denied {
        retry_after_secs,
        report,
    }
}

/// No such key (of this organization): Polar's 404, with the code `not_found`.
pub fn unknown_key() -> ApiError {
    ApiError::not_found().with_code("not_found")
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

/// "Send me my keys again": the buyer's e-mail address and the seller.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LicenseKeyResend {
    /// The address the keys were bought with.
    pub email: String,
    pub organization_id: Uuid,
}

/// The form of the "send me my keys again" page (`POST /license-keys/resend`); fields left
/// out are empty.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(default)]
pub struct LicenseKeyResendForm {
    pub email: String,
    pub organization_id: String,
}

/// The answer to a resend request, the same whether or not the address has keys.
#[derive(Debug, Serialize, ToSchema)]
pub struct LicenseKeyResendAccepted {
    pub detail: &'static str,
}

impl LicenseKeyResendAccepted {
    pub const DETAIL: &'static str =
        "If this address has license keys from this organization, they are on their way.";
}

// Polar's `LicenseKeyValidate`. Unknown fields (e.g. `label`) are ignored, as in Polar.
#[derive(Debug, Deserialize, ToSchema)]
pub struct LicenseKeyValidate {
    pub key: String,
    pub organization_id: Uuid,
    #[serde(default)]
    pub activation_id: Option<Uuid>,
    #[serde(default)]
    pub benefit_id: Option<Uuid>,
    #[serde(default)]
    pub customer_id: Option<Uuid>,
    /// Added to the key's usage; never negative (Tollgate refuses what Polar accepts).
    #[serde(default, deserialize_with = "lax_opt_int")]
    #[schema(minimum = 0)]
    pub increment_usage: Option<i64>,
    /// Must equal the conditions the activation was made with.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub conditions: JsonObject,
}

impl LicenseKeyValidate {
    /// The command, or a 422 for a negative `increment_usage`: usage only grows, so a key
    /// holder cannot reset it and pass `limit_usage` (Polar accepts one; Tollgate refuses it,
    /// see `docs/differences.md`).
    pub fn into_command(self) -> Result<ValidateKey, ApiError> {
        if let Some(n) = self.increment_usage.filter(|n| *n < 0) {
            return Err(ApiError::Validation(vec![FieldError::new(
                "greater_than_equal",
                vec!["body".into(), "increment_usage".into()],
                "Input should be greater than or equal to 0",
                n.into(),
            )]));
        }
        Ok(ValidateKey {
            organization_id: OrganizationId(self.organization_id),
            key: self.key,
            activation_id: self.activation_id.map(ActivationId),
            benefit_id: self.benefit_id.map(BenefitId),
            customer_id: self.customer_id.map(CustomerId),
            increment_usage: self.increment_usage,
            conditions: self.conditions,
        })
    }
}

// Polar's `LicenseKeyActivate`, with Tollgate's `replace`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct LicenseKeyActivate {
    pub key: String,
    pub organization_id: Uuid,
    pub label: String,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub conditions: JsonObject,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub meta: JsonObject,
    /// Tollgate's: when the key is at its activation limit and its benefit allows
    /// replacement (`activations.allow_replacement`), the live activation to free for this
    /// one: `"oldest"` (the first created) or `{"label": "…"}` (the most recent with exactly
    /// that label). Ignored below the limit. At most 5 replacements per key in 24 hours.
    #[serde(default)]
    #[schema(value_type = Option<Value>, example = json!("oldest"))]
    pub replace: Option<Value>,
}

impl LicenseKeyActivate {
    /// The command, or a 422 naming `replace` when it is neither `"oldest"` nor an object
    /// with exactly a string `label` (`null` is no replacement).
    pub fn into_command(self) -> Result<ActivateKey, ApiError> {
        let replace = match self.replace {
            None | Some(Value::Null) => None,
            Some(v) => Some(replace_of(v)?),
        };
        Ok(ActivateKey {
            organization_id: OrganizationId(self.organization_id),
            key: self.key,
            label: self.label,
            conditions: self.conditions,
            meta: self.meta,
            replace,
        })
    }
}

/// `"oldest"` or `{"label": "<string>"}`.
fn replace_of(v: Value) -> Result<Replace, ApiError> {
    match &v {
        Value::String(s) if s == "oldest" => return Ok(Replace::Oldest),
        Value::Object(m) if m.len() == 1 => {
            if let Some(Value::String(label)) = m.get("label") {
                return Ok(Replace::Label(label.clone()));
            }
        }
        _ => {}
    }
    Err(ApiError::validation(FieldError::new(
        "replace_type",
        crate::loc!["body", "replace"],
        "Input should be 'oldest' or an object with a string 'label'",
        v,
    )))
}

// Polar's `LicenseKeyDeactivate`, with Tollgate's `label` beside `activation_id`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct LicenseKeyDeactivate {
    pub key: String,
    pub organization_id: Uuid,
    /// The activation to free. Either this or `label`.
    #[serde(default)]
    pub activation_id: Option<Uuid>,
    /// Instead of `activation_id`: frees the most recent live activation with this label
    /// (for a buyer who lost the id). Rate-limited per key
    /// (`rate_limits.deactivations_by_label_per_key`).
    #[serde(default)]
    pub label: Option<String>,
}

impl LicenseKeyDeactivate {
    /// The command, or a 422 naming `activation_id` when neither it nor `label` is given.
    pub fn into_command(self) -> Result<DeactivateKey, ApiError> {
        let activation_id = match (self.activation_id, self.label) {
            (Some(id), _) => ActivationRef::Id(ActivationId(id)),
            (None, Some(label)) => ActivationRef::Label(label),
            (None, None) => {
                return Err(ApiError::validation(FieldError::new(
                    "missing",
                    crate::loc!["body", "activation_id"],
                    "Field required",
                    Value::Null,
                )))
            }
        };
        Ok(DeactivateKey {
            organization_id: OrganizationId(self.organization_id),
            key: self.key,
            activation_id,
        })
    }

    /// Whether the activation is named by its label (a rate-limited form).
    pub fn by_label(&self) -> bool {
        self.activation_id.is_none() && self.label.is_some()
    }
}

/// Changes a key; an explicit null clears a limit or the expiry.
// Every field optional; only the fields sent are applied, and an explicit `null` clears
// `limit_activations`, `limit_usage` and `expires_at`. The values are read into a
// [`LicenseKeyChangeInput`] with pydantic's coercions, whose rules the dashboard shares.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct LicenseKeyUpdate {
    #[serde(default)]
    #[schema(value_type = LicenseKeyStatus)]
    pub status: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = i64)]
    pub usage: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub limit_activations: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub limit_usage: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub expires_at: Maybe<Value>,
}

/// A change of a key as given, typed (what a body reads as, or what a form typed), before
/// the rules of [`LicenseKeyChangeInput::into_changes`]: `Absent` leaves a field as it is,
/// `Null` clears a limit or the expiry (and is refused for the status and the usage).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LicenseKeyChangeInput {
    /// `granted`, `revoked` or `disabled`.
    pub status: Maybe<String>,
    pub usage: Maybe<i64>,
    pub limit_activations: Maybe<i64>,
    pub limit_usage: Maybe<i64>,
    pub expires_at: Maybe<DateTime<Utc>>,
}

const STATUSES: &[(&str, KeyStatus)] = &[
    ("granted", KeyStatus::Granted),
    ("revoked", KeyStatus::Revoked),
    ("disabled", KeyStatus::Disabled),
];

/// The fields of a change, in the order their problems are told.
const CHANGE_ORDER: &[&str] = &[
    "status",
    "usage",
    "limit_activations",
    "limit_usage",
    "expires_at",
];

/// A status that is none of the statuses (`null` included: Polar's schema lets it through
/// and its database then refuses it, a 500; here it is refused like any other value).
fn not_a_status(input: Given) -> Invalid {
    const EXPECTED: &str = "'granted', 'revoked' or 'disabled'";
    Invalid::new(
        field!["status"],
        format!("Input should be {EXPECTED}"),
        input,
    )
    .kind("enum")
    .with_ctx("expected", EXPECTED)
}

/// A limit: greater than 0, and at most `max` if any.
fn limit(wrong: &mut Vec<Invalid>, name: &str, n: i64, max: Option<i64>) -> Option<i64> {
    if n <= 0 {
        let e = Invalid::new(field![name], "Input should be greater than 0", n);
        wrong.push(e.kind("greater_than").with_ctx("gt", 0i64));
        return None;
    }
    match max.filter(|max| n > *max) {
        Some(max) => {
            let msg = format!("Input should be less than or equal to {max}");
            let e = Invalid::new(field![name], msg, n).kind("less_than_equal");
            wrong.push(e.with_ctx("le", max));
            None
        }
        None => Some(n),
    }
}

impl LicenseKeyChangeInput {
    /// The changes, or every rule broken at once (a 422 located in the body).
    pub fn into_changes(self) -> Result<KeyChanges, ApiError> {
        self.check()
            .map_err(|wrong| ApiError::from(AppError::Invalid(wrong)))
    }

    fn check(self) -> Result<KeyChanges, Vec<Invalid>> {
        let mut wrong = Vec::new();
        let mut changes = KeyChanges::default();
        match self.status {
            Maybe::Absent => {}
            Maybe::Null => wrong.push(not_a_status(Given::none())),
            Maybe::Value(s) => match STATUSES.iter().find(|(name, _)| *name == s) {
                Some((_, status)) => changes.status = Some(*status),
                None => wrong.push(not_a_status(Given::from(s))),
            },
        }
        match self.usage {
            Maybe::Absent => {}
            Maybe::Null => wrong.push(
                Invalid::new(
                    field!["usage"],
                    "Input should be a valid integer",
                    Given::none(),
                )
                .kind("int_type"),
            ),
            Maybe::Value(n) => changes.usage = Some(n),
        }
        let mut cleared = |name: &str, m: Maybe<i64>, max: Option<i64>| match m {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(n) => limit(&mut wrong, name, n, max).map(Some),
        };
        changes.limit_activations = cleared("limit_activations", self.limit_activations, Some(50));
        changes.limit_usage = cleared("limit_usage", self.limit_usage, None);
        changes.expires_at = self.expires_at.into_update();
        if wrong.is_empty() {
            Ok(changes)
        } else {
            Err(wrong)
        }
    }
}

/// A field sent as JSON, read with pydantic's lax coercion `read`; what does not read is a
/// problem (and the field is left as not given).
fn lax<T>(
    wrong: &mut Vec<Invalid>,
    name: &str,
    m: Maybe<Value>,
    read: fn(&Value) -> Result<T, Rejection>,
) -> Maybe<T> {
    match m {
        Maybe::Absent => Maybe::Absent,
        Maybe::Null => Maybe::Null,
        Maybe::Value(v) => match read(&v) {
            Ok(x) => Maybe::Value(x),
            Err((kind, msg)) => {
                wrong.push(Invalid::new(field![name], msg, Given::of(&v)).kind(kind));
                Maybe::Absent
            }
        },
    }
}

impl LicenseKeyUpdate {
    /// The body as typed input (pydantic's lax integers and date-times), and what did not
    /// read.
    fn read(self) -> (LicenseKeyChangeInput, Vec<Invalid>) {
        let mut wrong = Vec::new();
        let status = match self.status {
            Maybe::Absent => Maybe::Absent,
            Maybe::Null => Maybe::Null,
            Maybe::Value(Value::String(s)) => Maybe::Value(s),
            Maybe::Value(other) => {
                wrong.push(not_a_status(Given::of(&other)));
                Maybe::Absent
            }
        };
        let input = LicenseKeyChangeInput {
            status,
            usage: lax(&mut wrong, "usage", self.usage, lax_int),
            limit_activations: lax(
                &mut wrong,
                "limit_activations",
                self.limit_activations,
                lax_int,
            ),
            limit_usage: lax(&mut wrong, "limit_usage", self.limit_usage, lax_int),
            expires_at: lax(&mut wrong, "expires_at", self.expires_at, lax_datetime),
        };
        (input, wrong)
    }

    /// The changes, or every field error at once (pydantic's rules), in the body's order.
    pub fn into_changes(self) -> Result<KeyChanges, ApiError> {
        let (input, mut wrong) = self.read();
        match input.check() {
            Ok(changes) if wrong.is_empty() => return Ok(changes),
            Ok(_) => {}
            Err(ruled) => wrong.extend(ruled),
        }
        let rank = |e: &Invalid| match e.path.first() {
            Some(Step::Field(f)) => CHANGE_ORDER.iter().position(|n| n == f),
            _ => None,
        };
        wrong.sort_by_key(rank);
        Err(ApiError::from(AppError::Invalid(wrong)))
    }
}

#[cfg(test)]
#[path = "license_key_samples.rs"]
mod samples;
#[cfg(test)]
pub(crate) use samples::samples;

#[cfg(test)]
#[path = "license_key_tests.rs"]
mod tests;
