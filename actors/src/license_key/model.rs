//! The license key's state machine, as types: its states ([`LicenseKey`], its
//! [`KeyStatus`] and [`Activation`]s), the commands it takes ([`ValidateKey`],
//! [`ActivateKey`], [`DeactivateKey`], [`KeyChanges`]), what a validation gives
//! ([`Validated`]), and why it refuses them ([`LicenseKeyError`]). How a command is
//! decided is in `decide.rs`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::domain::ids::{
    ActivationId, BenefitId, CustomerId, LicenseKeyId, OrderId, OrganizationId, SubscriptionId,
};

/// A JSON object (`conditions`, `meta`).
pub type JsonObject = Map<String, Value>;

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
    /// For a key granted by a subscription: the end of the period the subscription has
    /// paid for. `expires_at` is that plus the benefit's grace: validations in between are
    /// in the grace period ([`LicenseKey::grace_until`]). From format version 2.
    pub paid_until: Option<DateTime<Utc>>,
    /// Whether `activate` at the limit may free a live activation (`replace`): the
    /// benefit's `activations.allow_replacement` when the key was granted, carried as the
    /// limit is. From format version 3 (false before).
    pub allow_replacement: bool,
    /// When this key's recent replacements happened (those of the last
    /// [`REPLACEMENT_WINDOW_HOURS`], oldest first): the per-key limit
    /// [`REPLACEMENTS_PER_WINDOW`] is counted here, in the record, so it holds whichever node
    /// applies the command. From format version 3.
    pub replacements: Vec<DateTime<Utc>>,
}

/// How many activations one key may free by replacement within
/// [`REPLACEMENT_WINDOW_HOURS`]: enough for a buyer who moves to a new machine now and
/// then, too few for a key shared among many machines that take turns.
pub const REPLACEMENTS_PER_WINDOW: usize = 5;
/// The window of [`REPLACEMENTS_PER_WINDOW`], in hours.
pub const REPLACEMENT_WINDOW_HOURS: i64 = 24;

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

/// Why a command was refused. The HTTP layer maps [`LicenseKeyError::kind`] to a status and
/// uses [`LicenseKeyError::message`] as the `detail`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LicenseKeyError {
    /// The key is not this `(organization_id, key)`: a stale lookup, answered as not found.
    #[error("Not found")]
    WrongKey,
    /// The key is revoked or disabled (`status`, which the error's `code` tells).
    #[error("License key is no longer active.")]
    NotActive { status: KeyStatus },
    #[error("License key has expired.")]
    Expired,
    /// The activation is unknown, of another key, or deactivated.
    #[error("Not found")]
    ActivationNotFound,
    #[error("License key does not match required conditions")]
    ConditionsMismatch,
    #[error("License key does not match given benefit.")]
    BenefitMismatch,
    #[error("License key does not match given user.")]
    CustomerMismatch,
    #[error("License key only has {remaining} more usages.")]
    InsufficientUsage { remaining: i128 },
    /// `usage` would leave the 64-bit range (Polar's 32-bit column fails with a 500 there).
    #[error("License key usage is out of range.")]
    UsageOutOfRange,
    #[error("License key does not require activation")]
    ActivationNotRequired,
    /// An activation of a key that is not granted (Polar refuses it, so that an activation
    /// always answers a granted key, as the 1.0 clients' `GrantedLicenseKey` requires).
    #[error("License key is no longer active. This license key can not be activated.")]
    ActivationOfInactiveKey { status: KeyStatus },
    #[error("License key has expired.")]
    ActivationOfExpiredKey,
    #[error("License key activation limit already reached")]
    ActivationLimitReached,
    /// A replacement over [`REPLACEMENTS_PER_WINDOW`]: the HTTP layer answers 429 with
    /// `Retry-After: retry_after_secs`.
    #[error(
        "Too many activations were replaced on this license key; retry in {retry_after_secs} s."
    )]
    ReplacementRateLimited { retry_after_secs: u64 },
    /// A rotation of a key that is neither granted nor disabled (Polar's
    /// `RotateNotPermitted`).
    #[error(
        "License key cannot be rotated in its current status. Current status: {}. Allowed statuses: disabled, granted.",
        .status.as_str()
    )]
    RotateNotPermitted { status: KeyStatus },
}

/// The class of a refusal, which decides its HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// 404 `ResourceNotFound`
    NotFound,
    /// 403 `NotPermitted`
    NotPermitted,
    /// 400 `BadRequest`
    BadRequest,
    /// 400 `RotateNotPermitted`
    RotateNotPermitted,
    /// 429 `TooManyRequests`
    TooManyRequests,
}

impl LicenseKeyError {
    pub fn kind(&self) -> ErrorKind {
        use LicenseKeyError::*;
        match self {
            WrongKey
            | NotActive { .. }
            | Expired
            | ActivationNotFound
            | ConditionsMismatch
            | BenefitMismatch
            | CustomerMismatch => ErrorKind::NotFound,
            InsufficientUsage { .. } | UsageOutOfRange => ErrorKind::BadRequest,
            ActivationNotRequired
            | ActivationLimitReached
            | ActivationOfInactiveKey { .. }
            | ActivationOfExpiredKey => ErrorKind::NotPermitted,
            RotateNotPermitted { .. } => ErrorKind::RotateNotPermitted,
            ReplacementRateLimited { .. } => ErrorKind::TooManyRequests,
        }
    }

    /// The `detail` of the error body.
    pub fn message(&self) -> String {
        self.to_string()
    }

    /// The machine-readable `code` of the error body: one of [`ERROR_CODES`], stable
    /// across versions (a program tests it instead of parsing `detail`).
    pub fn code(&self) -> &'static str {
        use LicenseKeyError::*;
        let inactive = |status: &KeyStatus| match status {
            KeyStatus::Disabled => "disabled",
            _ => "revoked",
        };
        match self {
            WrongKey => "not_found",
            NotActive { status } | ActivationOfInactiveKey { status } => inactive(status),
            Expired | ActivationOfExpiredKey => "expired",
            ActivationNotFound => "activation_not_found",
            ConditionsMismatch => "conditions_mismatch",
            BenefitMismatch => "benefit_mismatch",
            CustomerMismatch => "customer_mismatch",
            InsufficientUsage { .. } => "usage_limit_reached",
            UsageOutOfRange => "usage_out_of_range",
            ActivationNotRequired => "activation_not_required",
            ActivationLimitReached => "activation_limit_reached",
            RotateNotPermitted { .. } => "rotation_not_permitted",
            ReplacementRateLimited { .. } => "replacement_rate_limited",
        }
    }
}

/// Every `code` a license-key refusal may carry, in the order validation checks them (the
/// first failing check wins), then those of activation, deactivation and rotation. A
/// replacement over its limit (`replacement_rate_limited`) is answered as every rate limit
/// is (429, without a code), so it is not listed.
pub const ERROR_CODES: &[&str] = &[
    "not_found",
    "revoked",
    "disabled",
    "expired",
    "activation_not_found",
    "conditions_mismatch",
    "benefit_mismatch",
    "customer_mismatch",
    "usage_limit_reached",
    "usage_out_of_range",
    "activation_not_required",
    "activation_limit_reached",
    "rotation_not_permitted",
];

impl LicenseKeyError {
    /// Whether this refusal is about the key itself being unusable (revoked or disabled).
    pub fn is_inactive(&self) -> bool {
        matches!(
            self,
            LicenseKeyError::NotActive { .. } | LicenseKeyError::ActivationOfInactiveKey { .. }
        )
    }
}

/// `POST /validate`.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidateKey {
    pub organization_id: OrganizationId,
    pub key: String,
    pub activation_id: Option<ActivationId>,
    pub benefit_id: Option<BenefitId>,
    pub customer_id: Option<CustomerId>,
    /// No sign check, as in Polar: a negative increment gives usages back.
    pub increment_usage: Option<i64>,
    pub conditions: JsonObject,
}

/// `POST /activate`.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivateKey {
    pub organization_id: OrganizationId,
    pub key: String,
    pub label: String,
    pub conditions: JsonObject,
    pub meta: JsonObject,
    /// Which live activation to free when the key is at its limit and its benefit allows
    /// replacement (`"replace"`, Tollgate's); ignored below the limit.
    pub replace: Option<Replace>,
}

/// The activation an activation at the limit frees (`"replace": "oldest"` or
/// `"replace": {"label": "…"}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replace {
    /// The live activation created first.
    Oldest,
    /// The live activation with exactly this label (the most recent one if several).
    Label(String),
}

/// `POST /deactivate`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeactivateKey {
    pub organization_id: OrganizationId,
    pub key: String,
    pub activation_id: ActivationRef,
}

/// Which activation a deactivation frees: by id (Polar's), or by label (the most recent
/// live activation with that label: a buyer who lost the id gets the slot back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActivationRef {
    Id(ActivationId),
    Label(String),
}

impl From<ActivationId> for ActivationRef {
    fn from(id: ActivationId) -> Self {
        ActivationRef::Id(id)
    }
}

/// `PATCH /v1/license-keys/{id}`: only the fields sent; `Some(None)` clears. The HTTP layer
/// has checked the ranges (`0 < limit_activations <= 50`, `limit_usage > 0`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeyChanges {
    pub status: Option<KeyStatus>,
    pub usage: Option<i64>,
    pub limit_activations: Option<Option<i64>>,
    pub limit_usage: Option<Option<i64>>,
    pub expires_at: Option<Option<DateTime<Utc>>>,
    /// Its subscription paid up to here (with `expires_at`: the paid period plus the
    /// grace); set by the subscription, never by the API.
    pub paid_until: Option<Option<DateTime<Utc>>>,
}

/// `POST /v1/license-keys/import`: keys a seller brings from another provider. The HTTP
/// layer has checked their shape (1 to 1,000 keys, each value well-formed and once in the
/// request, an e-mail address well-formed, the ranges); what needs the store (the benefit,
/// the holders, values already taken) is the use case's.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportKeys {
    pub organization_id: OrganizationId,
    pub benefit_id: BenefitId,
    pub keys: Vec<KeyToImport>,
}

/// One key to import, as the other provider issued it.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyToImport {
    /// The value the buyer holds, kept exactly.
    pub key: String,
    pub holder: KeyHolder,
    /// The name of a customer the import creates.
    pub customer_name: Option<String>,
    pub status: KeyStatus,
    pub expires_at: Option<DateTime<Utc>>,
    /// `None`: the benefit's; `Some(None)`: no limit.
    pub limit_activations: Option<Option<i64>>,
    /// `None`: the benefit's; `Some(None)`: no limit.
    pub limit_usage: Option<Option<i64>>,
    pub usage: i64,
    pub validations: i64,
    pub activations: Vec<ActivationToImport>,
}

/// Who holds an imported key: a customer of the organization, or an e-mail address (its
/// customer, created if there is none).
#[derive(Debug, Clone, PartialEq)]
pub enum KeyHolder {
    Customer(CustomerId),
    Email(String),
}

/// An activation another provider recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivationToImport {
    pub label: String,
    pub meta: JsonObject,
    pub conditions: JsonObject,
    /// When it was made (`None`: at the import).
    pub created_at: Option<DateTime<Utc>>,
}

/// The statuses a key may be rotated in (Polar's `ROTATABLE_STATUSES`).
pub const ROTATABLE: [KeyStatus; 2] = [KeyStatus::Granted, KeyStatus::Disabled];

/// `POST /v1/license-keys/{id}/rotate` (and the customer portal's): a new value for the
/// key. The value is drawn by the actor ([`generate_key`] with the benefit's `prefix`), so
/// the rule that takes it stays pure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotateKey {
    /// The benefit's prefix, as the key was generated with (`None`: a bare UUID).
    pub prefix: Option<String>,
}

/// A rotated key, and the value it had (which validates no more).
#[derive(Debug, Clone, PartialEq)]
pub struct Rotated {
    pub key: LicenseKey,
    pub previous: String,
}

/// A successful validation: the key as it now is, and the activation that was checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated {
    pub key: LicenseKey,
    pub activation: Option<Activation>,
}

impl LicenseKey {
    /// When the grace ends, if `at` is inside it: past the period its subscription paid
    /// for (a renewal is being retried), before the key expires.
    pub fn grace_until(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let paid_until = self.paid_until?;
        let expires_at = self.expires_at?;
        (at >= paid_until && at < expires_at).then_some(expires_at)
    }

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

impl LicenseKey {
    /// The key a benefit grants (`grant`, see [`crate::domain::grants`]), new: `id` and
    /// the secret `key` chosen by the caller, granted to `customer_id` by a subscription
    /// or an order (or neither: a claim).
    pub fn from_grant(
        id: LicenseKeyId,
        organization_id: OrganizationId,
        customer_id: CustomerId,
        grant: &crate::domain::grants::KeyGrant,
        key: String,
        subscription_id: Option<SubscriptionId>,
        order_id: Option<OrderId>,
    ) -> Self {
        LicenseKey {
            id,
            organization_id,
            customer_id,
            benefit_id: grant.benefit_id,
            created_at: grant.granted_at,
            modified_at: None,
            key,
            status: KeyStatus::Granted,
            limit_activations: grant.limit_activations,
            usage: 0,
            limit_usage: grant.limit_usage,
            validations: 0,
            last_validated_at: None,
            expires_at: grant.expires_at,
            activations: Vec::new(),
            subscription_id,
            order_id,
            paid_until: grant.paid_until,
            allow_replacement: grant.allow_replacement,
            replacements: Vec::new(),
        }
    }
}
