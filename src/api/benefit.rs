//! Benefits in Polar's shapes: the `Benefit` union (one variant per `type`), the
//! `BenefitBase` summary checkouts embed, and the `BenefitCreate` / `BenefitUpdate` bodies
//! (tagged by `type`), whose properties are the same objects the views send.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::benefit_downloadables::BenefitDownloadablesProperties;
use super::benefit_meter_credit::{check_units, BenefitMeterCreditProperties};
use super::metadata::{body_metadata, metadata_map, MetadataMap};
use super::price::{tag, TagCustom};
use super::Maybe;
use crate::domain::benefit::{
    self as domain, Benefit, BenefitChange, BenefitProperties, KeyActivations, KeyExpiry,
    LicenseKeyProperties, NewBenefit, Visibility,
};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;

tag!(TagAds = "ads");
tag!(TagDownloadables = "downloadables");
tag!(TagFeatureFlag = "feature_flag");
tag!(TagLicenseKeys = "license_keys");
tag!(TagMeterCredit = "meter_credit");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BenefitType {
    Custom,
    Ads,
    Discord,
    GithubRepository,
    Downloadables,
    LicenseKeys,
    FeatureFlag,
    MeterCredit,
}

impl From<domain::BenefitType> for BenefitType {
    fn from(t: domain::BenefitType) -> Self {
        match t {
            domain::BenefitType::Custom => BenefitType::Custom,
            domain::BenefitType::Ads => BenefitType::Ads,
            domain::BenefitType::Discord => BenefitType::Discord,
            domain::BenefitType::GithubRepository => BenefitType::GithubRepository,
            domain::BenefitType::Downloadables => BenefitType::Downloadables,
            domain::BenefitType::LicenseKeys => BenefitType::LicenseKeys,
            domain::BenefitType::FeatureFlag => BenefitType::FeatureFlag,
            domain::BenefitType::MeterCredit => BenefitType::MeterCredit,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Timeframe {
    Year,
    Month,
    Day,
}

impl From<domain::Timeframe> for Timeframe {
    fn from(t: domain::Timeframe) -> Self {
        match t {
            domain::Timeframe::Year => Timeframe::Year,
            domain::Timeframe::Month => Timeframe::Month,
            domain::Timeframe::Day => Timeframe::Day,
        }
    }
}

impl From<Timeframe> for domain::Timeframe {
    fn from(t: Timeframe) -> Self {
        match t {
            Timeframe::Year => domain::Timeframe::Year,
            Timeframe::Month => domain::Timeframe::Month,
            Timeframe::Day => domain::Timeframe::Day,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BenefitLicenseKeyExpirationProperties {
    pub ttl: i64,
    pub timeframe: Timeframe,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BenefitLicenseKeyActivationProperties {
    pub limit: i64,
    pub enable_customer_admin: bool,
    /// Tollgate's: whether `activate` at the limit may free a live activation named by its
    /// `replace` (false unless set).
    #[serde(default)]
    pub allow_replacement: bool,
}

/// Tollgate's: what a purchase of several units (a seat-based price) grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LicenseKeyQuantity {
    /// One key whose activation limit is multiplied by the units.
    OneKey,
    /// One key per unit, each with the limit.
    KeyPerUnit,
}

impl From<domain::KeyQuantity> for LicenseKeyQuantity {
    fn from(q: domain::KeyQuantity) -> Self {
        match q {
            domain::KeyQuantity::OneKey => LicenseKeyQuantity::OneKey,
            domain::KeyQuantity::KeyPerUnit => LicenseKeyQuantity::KeyPerUnit,
        }
    }
}

impl From<LicenseKeyQuantity> for domain::KeyQuantity {
    fn from(q: LicenseKeyQuantity) -> Self {
        match q {
            LicenseKeyQuantity::OneKey => domain::KeyQuantity::OneKey,
            LicenseKeyQuantity::KeyPerUnit => domain::KeyQuantity::KeyPerUnit,
        }
    }
}

/// The properties of a license-key benefit; in a body, every key is optional.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BenefitLicenseKeysProperties {
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default)]
    pub expires: Option<BenefitLicenseKeyExpirationProperties>,
    #[serde(default)]
    pub activations: Option<BenefitLicenseKeyActivationProperties>,
    #[serde(default)]
    pub limit_usage: Option<i64>,
    /// Tollgate's: whether customers may rotate their keys in the customer portal (true
    /// unless set to false; an update without it keeps the benefit's setting).
    #[serde(default)]
    pub allow_customer_rotation: Option<bool>,
    /// Tollgate's: for a key granted by a subscription, the days past the paid period it
    /// keeps validating while a renewal is retried (0 to 30; 3 unless set; an update
    /// without it keeps the benefit's setting).
    #[serde(default)]
    pub grace_days: Option<i64>,
    /// Tollgate's: `one_key` (the default) or `key_per_unit`; an update without it keeps
    /// the benefit's setting.
    #[serde(default)]
    pub quantity: Option<LicenseKeyQuantity>,
}

impl From<&LicenseKeyProperties> for BenefitLicenseKeysProperties {
    fn from(k: &LicenseKeyProperties) -> Self {
        Self {
            prefix: k.prefix.clone(),
            expires: k.expires.map(|e| BenefitLicenseKeyExpirationProperties {
                ttl: e.ttl,
                timeframe: e.timeframe.into(),
            }),
            activations: k
                .activations
                .map(|a| BenefitLicenseKeyActivationProperties {
                    limit: a.limit,
                    enable_customer_admin: a.enable_customer_admin,
                    allow_replacement: a.allow_replacement,
                }),
            limit_usage: k.limit_usage,
            allow_customer_rotation: Some(k.allow_customer_rotation),
            grace_days: Some(i64::from(k.grace_days)),
            quantity: Some(k.quantity.into()),
        }
    }
}

impl From<BenefitLicenseKeysProperties> for BenefitProperties {
    fn from(p: BenefitLicenseKeysProperties) -> Self {
        BenefitProperties::LicenseKeys(LicenseKeyProperties {
            prefix: p.prefix,
            expires: p.expires.map(|e| KeyExpiry {
                ttl: e.ttl,
                timeframe: e.timeframe.into(),
            }),
            activations: p.activations.map(|a| KeyActivations {
                limit: a.limit,
                enable_customer_admin: a.enable_customer_admin,
                allow_replacement: a.allow_replacement,
            }),
            limit_usage: p.limit_usage,
            allow_customer_rotation: p.allow_customer_rotation.unwrap_or(true),
            // Out of range is refused by the use case (`grace_days_given`) before it is
            // stored; clamped here so the conversion never fails.
            grace_days: p.grace_days.map_or(domain::DEFAULT_GRACE_DAYS, |d| {
                u32::try_from(d.clamp(0, i64::from(domain::MAX_GRACE_DAYS))).unwrap_or(0)
            }),
            quantity: p.quantity.map(Into::into).unwrap_or_default(),
        })
    }
}

/// The properties of a custom benefit: a note shown to the buyer.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BenefitCustomProperties {
    #[serde(default)]
    pub note: Option<String>,
}

impl From<BenefitCustomProperties> for BenefitProperties {
    fn from(p: BenefitCustomProperties) -> Self {
        BenefitProperties::Custom { note: p.note }
    }
}

/// The properties of an ads benefit; in a body, a size left out is 400.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BenefitAdsProperties {
    #[serde(default = "default_ad_size")]
    pub image_height: i64,
    #[serde(default = "default_ad_size")]
    pub image_width: i64,
}

fn default_ad_size() -> i64 {
    400
}

impl From<BenefitAdsProperties> for BenefitProperties {
    fn from(p: BenefitAdsProperties) -> Self {
        BenefitProperties::Ads {
            image_height: p.image_height,
            image_width: p.image_width,
        }
    }
}

/// One variant of the `Benefit` union: the fields every benefit has, its `type` tag, its
/// properties and the variant's own fields; `build` fills the common fields from the record.
macro_rules! benefit_variant {
    ($(#[$doc:meta])* $name:ident, $tag:ty, $props:ty $(, $(#[$xdoc:meta])* $extra:ident : $xty:ty)*) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Serialize, ToSchema)]
        pub struct $name {
            pub id: Uuid,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            #[serde(rename = "type")]
            pub kind: $tag,
            pub description: String,
            pub selectable: bool,
            pub deletable: bool,
            pub organization_id: Uuid,
            pub properties: $props,
            pub is_deleted: bool,
            #[schema(value_type = crate::api::free_form::Metadata)]
            pub metadata: MetadataMap,
            /// `draft`, `private` or `public`: only a feature flag may be other than public.
            pub visibility: &'static str,
            /// Whether `visibility` may be set: for feature flags only.
            pub visibility_configurable: bool,
            $($(#[$xdoc])* pub $extra: $xty,)*
        }

        impl $name {
            fn build(b: &Benefit, kind: $tag, properties: $props $(, $extra: $xty)*) -> Self {
                Self {
                    id: b.id.0,
                    created_at: b.created_at,
                    modified_at: b.modified_at,
                    kind,
                    description: b.description.clone(),
                    selectable: b.selectable,
                    deletable: b.deletable,
                    organization_id: b.organization_id.0,
                    properties,
                    is_deleted: b.deleted_at.is_some(),
                    metadata: metadata_map(&b.metadata),
                    visibility: b.visibility.as_str(),
                    visibility_configurable: b.kind() == domain::BenefitType::FeatureFlag,
                    $($extra,)*
                }
            }
        }
    };
}

benefit_variant!(
    /// A benefit granting license keys.
    BenefitLicenseKeys,
    TagLicenseKeys,
    BenefitLicenseKeysProperties
);
benefit_variant!(
    /// A custom benefit: a note shown to the buyer.
    BenefitCustom,
    TagCustom,
    BenefitCustomProperties,
    /// Deprecated; always false.
    is_tax_applicable: bool
);
benefit_variant!(
    /// An ads benefit.
    BenefitAds,
    TagAds,
    BenefitAdsProperties
);
benefit_variant!(
    /// A feature flag: what it unlocks is its metadata.
    BenefitFeatureFlag,
    TagFeatureFlag,
    BenefitFeatureFlagProperties
);

benefit_variant!(
    /// A benefit granting downloads of files.
    BenefitDownloadables,
    TagDownloadables,
    BenefitDownloadablesProperties
);

benefit_variant!(
    /// A benefit crediting units of a meter at each grant and renewal (Polar's
    /// `BenefitMeterCredit`).
    BenefitMeterCredit,
    TagMeterCredit,
    BenefitMeterCreditProperties
);

/// The properties of a feature flag: none (`{}`), as Polar's.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct BenefitFeatureFlagProperties {}

/// The `Benefit` schema: a benefit, its variant named by `type`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
#[schema(as = Benefit)]
pub enum BenefitView {
    LicenseKeys(BenefitLicenseKeys),
    Custom(BenefitCustom),
    Ads(BenefitAds),
    FeatureFlag(BenefitFeatureFlag),
    Downloadables(BenefitDownloadables),
    MeterCredit(BenefitMeterCredit),
}

impl From<&Benefit> for BenefitView {
    fn from(b: &Benefit) -> Self {
        match &b.properties {
            BenefitProperties::LicenseKeys(k) => BenefitView::LicenseKeys(
                BenefitLicenseKeys::build(b, TagLicenseKeys::Value, k.into()),
            ),
            BenefitProperties::Custom { note } => BenefitView::Custom(BenefitCustom::build(
                b,
                TagCustom::Value,
                BenefitCustomProperties { note: note.clone() },
                false,
            )),
            BenefitProperties::Ads {
                image_height,
                image_width,
            } => BenefitView::Ads(BenefitAds::build(
                b,
                TagAds::Value,
                BenefitAdsProperties {
                    image_height: *image_height,
                    image_width: *image_width,
                },
            )),
            BenefitProperties::FeatureFlag => BenefitView::FeatureFlag(BenefitFeatureFlag::build(
                b,
                TagFeatureFlag::Value,
                BenefitFeatureFlagProperties {},
            )),
            BenefitProperties::Downloadables(d) => BenefitView::Downloadables(
                BenefitDownloadables::build(b, TagDownloadables::Value, d.into()),
            ),
            BenefitProperties::MeterCredit(m) => BenefitView::MeterCredit(
                BenefitMeterCredit::build(b, TagMeterCredit::Value, m.into()),
            ),
        }
    }
}

/// The fields every benefit has (the benefits of a checkout's product).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BenefitBase {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[serde(rename = "type")]
    pub kind: BenefitType,
    pub description: String,
    pub selectable: bool,
    pub deletable: bool,
    pub organization_id: Uuid,
    pub is_deleted: bool,
}

impl From<&Benefit> for BenefitBase {
    fn from(b: &Benefit) -> Self {
        Self {
            id: b.id.0,
            created_at: b.created_at,
            modified_at: b.modified_at,
            kind: b.kind().into(),
            description: b.description.clone(),
            selectable: b.selectable,
            deletable: b.deletable,
            organization_id: b.organization_id.0,
            is_deleted: b.deleted_at.is_some(),
        }
    }
}

/// The create and update bodies of one benefit type.
macro_rules! benefit_bodies {
    ($create:ident, $update:ident, $props:ty, $what:literal) => {
        #[doc = concat!("Creates ", $what, ".")]
        #[derive(Debug, Deserialize, ToSchema)]
        pub struct $create {
            /// 3 to 42 characters.
            pub description: String,
            #[schema(nullable = false)]
            pub organization_id: Option<Uuid>,
            pub properties: $props,
            // Parsed with [`super::metadata::parse_metadata`].
            #[serde(default)]
            #[schema(value_type = crate::api::free_form::Metadata)]
            pub metadata: Maybe<Value>,
            /// Only `public` (Tollgate's benefit types are not configurable).
            #[serde(default)]
            pub visibility: Option<String>,
        }

        #[doc = concat!("Updates ", $what, "; a field left out is unchanged.")]
        #[derive(Debug, Deserialize, ToSchema)]
        pub struct $update {
            #[schema(nullable = false)]
            pub description: Option<String>,
            #[schema(nullable = false)]
            pub properties: Option<$props>,
            // Parsed with [`super::metadata::parse_metadata`].
            #[serde(default)]
            #[schema(value_type = crate::api::free_form::Metadata)]
            pub metadata: Maybe<Value>,
            /// Only `public`.
            #[serde(default)]
            pub visibility: Option<String>,
        }
    };
}

benefit_bodies!(
    BenefitCustomCreate,
    BenefitCustomUpdate,
    BenefitCustomProperties,
    "a custom benefit"
);
benefit_bodies!(
    BenefitAdsCreate,
    BenefitAdsUpdate,
    BenefitAdsProperties,
    "an ads benefit"
);
benefit_bodies!(
    BenefitLicenseKeysCreate,
    BenefitLicenseKeysUpdate,
    BenefitLicenseKeysProperties,
    "a license-key benefit"
);

benefit_bodies!(
    BenefitFeatureFlagCreate,
    BenefitFeatureFlagUpdate,
    BenefitFeatureFlagProperties,
    "a feature flag (`visibility`: `draft`, `private` or `public`)"
);

benefit_bodies!(
    BenefitDownloadablesCreate,
    BenefitDownloadablesUpdate,
    BenefitDownloadablesProperties,
    "a downloadables benefit (files of the organization, uploaded, `downloadable`)"
);

benefit_bodies!(
    BenefitMeterCreditCreate,
    BenefitMeterCreditUpdate,
    BenefitMeterCreditProperties,
    "a meter credit benefit (`meter_id`: a meter of the organization)"
);

impl From<BenefitMeterCreditProperties> for BenefitProperties {
    fn from(p: BenefitMeterCreditProperties) -> Self {
        BenefitProperties::MeterCredit(p.into())
    }
}

impl From<BenefitDownloadablesProperties> for BenefitProperties {
    fn from(p: BenefitDownloadablesProperties) -> Self {
        BenefitProperties::Downloadables(p.into())
    }
}

/// Creates a benefit; `type` picks the properties.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BenefitCreate {
    Custom(BenefitCustomCreate),
    Ads(BenefitAdsCreate),
    LicenseKeys(BenefitLicenseKeysCreate),
    FeatureFlag(BenefitFeatureFlagCreate),
    Downloadables(BenefitDownloadablesCreate),
    MeterCredit(BenefitMeterCreditCreate),
}

/// Updates a benefit; `type` must be the benefit's.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BenefitUpdate {
    Custom(BenefitCustomUpdate),
    Ads(BenefitAdsUpdate),
    LicenseKeys(BenefitLicenseKeysUpdate),
    FeatureFlag(BenefitFeatureFlagUpdate),
    Downloadables(BenefitDownloadablesUpdate),
    MeterCredit(BenefitMeterCreditUpdate),
}

impl From<BenefitFeatureFlagProperties> for BenefitProperties {
    fn from(_: BenefitFeatureFlagProperties) -> Self {
        BenefitProperties::FeatureFlag
    }
}

/// A body's free-form `metadata` (parsed with [`super::metadata::parse_metadata`]).
pub type MetadataBody = Value;

/// The dashboard's metadata text (one `key=value` a line; integers and `true`/`false` are
/// typed, the rest strings) as a body's `metadata`, whose checks then apply; `Err`: the
/// first line without `=`.
pub fn metadata_from_lines(text: &str) -> Result<Maybe<MetadataBody>, String> {
    let mut map = serde_json::Map::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (k, v) = line.split_once('=').ok_or_else(|| line.to_string())?;
        let v = v.trim();
        let value = if let Ok(n) = v.parse::<i64>() {
            Value::from(n)
        } else if let Ok(b) = v.parse::<bool>() {
            Value::from(b)
        } else {
            Value::from(v)
        };
        map.insert(k.trim().to_string(), value);
    }
    Ok(Maybe::Value(Value::Object(map)))
}

/// A benefit's metadata as the dashboard's text shows it (see [`metadata_from_lines`]).
pub fn metadata_lines(m: &crate::domain::metadata::Metadata) -> String {
    metadata_map(m)
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

// ---------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------

/// A description's bounds, in characters.
pub const DESCRIPTION_MIN: usize = 3;
pub const DESCRIPTION_MAX: usize = 42;

/// `properties.grace_days`, when given: 0 to `MAX_GRACE_DAYS`.
fn check_grace_days(v: &mut Validator, given: Option<i64>) {
    if let Some(d) = given {
        v.int_range(
            loc!["body", "properties", "grace_days"],
            d,
            Some(0),
            Some(i64::from(domain::MAX_GRACE_DAYS)),
        );
    }
}

/// The bounds of license-key properties: a positive expiry, 1 to 50 activations, a positive
/// usage limit.
fn check_properties(v: &mut Validator, p: &BenefitProperties) {
    if let BenefitProperties::Downloadables(d) = p {
        super::benefit_downloadables::check(v, d);
    }
    if let BenefitProperties::LicenseKeys(k) = p {
        if let Some(e) = &k.expires {
            if e.ttl <= 0 {
                v.push(greater_than_zero(
                    loc!["body", "properties", "expires", "ttl"],
                    e.ttl,
                ));
            }
        }
        if let Some(a) = &k.activations {
            if a.limit <= 0 {
                v.push(greater_than_zero(
                    loc!["body", "properties", "activations", "limit"],
                    a.limit,
                ));
            } else {
                v.int_range(
                    loc!["body", "properties", "activations", "limit"],
                    a.limit,
                    None,
                    Some(50),
                );
            }
        }
        if let Some(n) = k.limit_usage {
            if n <= 0 {
                v.push(greater_than_zero(
                    loc!["body", "properties", "limit_usage"],
                    n,
                ));
            }
        }
    }
}

fn greater_than_zero(loc: Vec<Value>, input: i64) -> FieldError {
    FieldError::new(
        "greater_than",
        loc,
        "Input should be greater than 0",
        Value::from(input),
    )
    .with_ctx(serde_json::json!({"gt": 0}))
}

/// A feature flag's visibility may be `draft`, `private` or `public` (Polar's
/// `BenefitVisibility`); the other types' only `public`.
fn check_visibility(
    v: &mut Validator,
    kind: domain::BenefitType,
    visibility: Option<&str>,
) -> Option<Visibility> {
    if kind == domain::BenefitType::FeatureFlag {
        let given = visibility?;
        let parsed = Visibility::parse(given);
        if parsed.is_none() {
            v.push(
                FieldError::new(
                    "enum",
                    loc!["body", "visibility"],
                    "Input should be 'draft', 'private' or 'public'",
                    given.into(),
                )
                .with_ctx(serde_json::json!({"expected": "'draft', 'private' or 'public'"})),
            );
        }
        return parsed;
    }
    if let Some(other) = visibility.filter(|x| *x != "public") {
        v.push(FieldError::new(
            "value_error",
            loc!["body", "visibility"],
            "Visibility is not configurable for this benefit type and must be public.",
            other.into(),
        ));
    }
    None
}

impl BenefitCreate {
    /// The command this body asks for, or its 422 (visibility, metadata, description,
    /// properties, grace days, in that order).
    pub fn into_command(self) -> Result<NewBenefit, ApiError> {
        let grace_given = match &self {
            BenefitCreate::LicenseKeys(c) => c.properties.grace_days,
            _ => None,
        };
        let units_given = match &self {
            BenefitCreate::MeterCredit(c) => Some(c.properties.units),
            _ => None,
        };
        let (description, organization_id, properties, metadata, visibility): (
            _,
            _,
            BenefitProperties,
            _,
            _,
        ) = match self {
            BenefitCreate::Custom(c) => (
                c.description,
                c.organization_id,
                c.properties.into(),
                c.metadata,
                c.visibility,
            ),
            BenefitCreate::Ads(c) => (
                c.description,
                c.organization_id,
                c.properties.into(),
                c.metadata,
                c.visibility,
            ),
            BenefitCreate::LicenseKeys(c) => (
                c.description,
                c.organization_id,
                c.properties.into(),
                c.metadata,
                c.visibility,
            ),
            BenefitCreate::FeatureFlag(c) => (
                c.description,
                c.organization_id,
                c.properties.into(),
                c.metadata,
                c.visibility,
            ),
            BenefitCreate::Downloadables(c) => (
                c.description,
                c.organization_id,
                c.properties.into(),
                c.metadata,
                c.visibility,
            ),
            BenefitCreate::MeterCredit(c) => (
                c.description,
                c.organization_id,
                c.properties.into(),
                c.metadata,
                c.visibility,
            ),
        };
        let mut v = Validator::new();
        let kind = properties.kind();
        let visibility = check_visibility(&mut v, kind, visibility.as_deref());
        let metadata = body_metadata(&mut v, &metadata, false).unwrap_or_default();
        if v.min_chars(loc!["body", "description"], &description, DESCRIPTION_MIN) {
            v.max_chars(loc!["body", "description"], &description, DESCRIPTION_MAX);
        }
        check_properties(&mut v, &properties);
        check_grace_days(&mut v, grace_given);
        if let Some(units) = units_given {
            check_units(&mut v, units);
        }
        v.finish()?;
        Ok(NewBenefit {
            organization_id,
            description,
            properties,
            metadata,
            visibility: visibility.unwrap_or_default(),
        })
    }
}

impl BenefitUpdate {
    /// The benefit type the body names (`type`).
    pub fn kind(&self) -> domain::BenefitType {
        match self {
            BenefitUpdate::Custom(_) => domain::BenefitType::Custom,
            BenefitUpdate::Ads(_) => domain::BenefitType::Ads,
            BenefitUpdate::LicenseKeys(_) => domain::BenefitType::LicenseKeys,
            BenefitUpdate::FeatureFlag(_) => domain::BenefitType::FeatureFlag,
            BenefitUpdate::Downloadables(_) => domain::BenefitType::Downloadables,
            BenefitUpdate::MeterCredit(_) => domain::BenefitType::MeterCredit,
        }
    }

    /// The command this body asks for, or its 422 (description, properties, grace days,
    /// visibility, metadata, in that order).
    pub fn into_command(self) -> Result<BenefitChange, ApiError> {
        let kind = self.kind();
        let mut rotation_given = false;
        let mut grace_given = None;
        let mut quantity_given = false;
        let units_given = match &self {
            BenefitUpdate::MeterCredit(u) => u.properties.as_ref().map(|p| p.units),
            _ => None,
        };
        let (description, properties, metadata, visibility): (_, Option<BenefitProperties>, _, _) =
            match self {
                BenefitUpdate::Custom(u) => (
                    u.description,
                    u.properties.map(Into::into),
                    u.metadata,
                    u.visibility,
                ),
                BenefitUpdate::Ads(u) => (
                    u.description,
                    u.properties.map(Into::into),
                    u.metadata,
                    u.visibility,
                ),
                BenefitUpdate::LicenseKeys(u) => {
                    rotation_given = u
                        .properties
                        .as_ref()
                        .is_some_and(|p| p.allow_customer_rotation.is_some());
                    grace_given = u.properties.as_ref().and_then(|p| p.grace_days);
                    quantity_given = u.properties.as_ref().is_some_and(|p| p.quantity.is_some());
                    (
                        u.description,
                        u.properties.map(Into::into),
                        u.metadata,
                        u.visibility,
                    )
                }
                BenefitUpdate::FeatureFlag(u) => (
                    u.description,
                    u.properties.map(Into::into),
                    u.metadata,
                    u.visibility,
                ),
                BenefitUpdate::Downloadables(u) => (
                    u.description,
                    u.properties.map(Into::into),
                    u.metadata,
                    u.visibility,
                ),
                BenefitUpdate::MeterCredit(u) => (
                    u.description,
                    u.properties.map(Into::into),
                    u.metadata,
                    u.visibility,
                ),
            };
        let mut v = Validator::new();
        if let Some(d) = &description {
            if v.min_chars(loc!["body", "description"], d, DESCRIPTION_MIN) {
                v.max_chars(loc!["body", "description"], d, DESCRIPTION_MAX);
            }
        }
        if let Some(p) = &properties {
            check_properties(&mut v, p);
            check_grace_days(&mut v, grace_given);
            if let Some(units) = units_given {
                check_units(&mut v, units);
            }
        }
        let visibility = check_visibility(&mut v, kind, visibility.as_deref());
        let metadata = body_metadata(&mut v, &metadata, true);
        v.finish()?;
        Ok(BenefitChange {
            kind,
            description,
            properties,
            rotation_given,
            grace_given: grace_given.is_some(),
            quantity_given,
            metadata,
            visibility,
        })
    }
}

#[cfg(test)]
#[path = "benefit_samples.rs"]
mod samples;
#[cfg(test)]
pub(crate) use samples::{sample_benefits, samples};
