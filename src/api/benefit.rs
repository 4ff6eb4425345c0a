use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::domain::benefit::{
    Benefit, BenefitProperties, KeyActivations, KeyExpiry, LicenseKeyProperties, Timeframe,
};

/// `BenefitCreate` / `BenefitUpdate`, tagged by `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BenefitCreate {
    Custom(Create<CustomProps>),
    Ads(Create<AdsProps>),
    LicenseKeys(Create<LicenseKeysProps>),
}

#[derive(Debug, Deserialize)]
pub struct Create<P> {
    pub description: String,
    pub organization_id: Option<uuid::Uuid>,
    pub properties: P,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BenefitUpdate {
    Custom(Update<CustomProps>),
    Ads(Update<AdsProps>),
    LicenseKeys(Update<LicenseKeysProps>),
}

#[derive(Debug, Deserialize)]
pub struct Update<P> {
    pub description: Option<String>,
    pub properties: Option<P>,
}

#[derive(Debug, Deserialize)]
pub struct CustomProps {
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct AdsProps {
    #[serde(default = "default_ad_size")]
    pub image_height: i64,
    #[serde(default = "default_ad_size")]
    pub image_width: i64,
}

fn default_ad_size() -> i64 {
    400
}

#[derive(Debug, Deserialize)]
pub struct LicenseKeysProps {
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default)]
    pub expires: Option<ExpiresInput>,
    #[serde(default)]
    pub activations: Option<ActivationsInput>,
    #[serde(default)]
    pub limit_usage: Option<i64>,
}

#[derive(Debug, Deserialize)]
pub struct ExpiresInput {
    pub ttl: i64,
    pub timeframe: Timeframe,
}

#[derive(Debug, Deserialize)]
pub struct ActivationsInput {
    pub limit: i64,
    pub enable_customer_admin: bool,
}

impl From<CustomProps> for BenefitProperties {
    fn from(p: CustomProps) -> Self {
        BenefitProperties::Custom { note: p.note }
    }
}

impl From<AdsProps> for BenefitProperties {
    fn from(p: AdsProps) -> Self {
        BenefitProperties::Ads {
            image_height: p.image_height,
            image_width: p.image_width,
        }
    }
}

impl From<LicenseKeysProps> for BenefitProperties {
    fn from(p: LicenseKeysProps) -> Self {
        BenefitProperties::LicenseKeys(LicenseKeyProperties {
            prefix: p.prefix,
            expires: p.expires.map(|e| KeyExpiry {
                ttl: e.ttl,
                timeframe: e.timeframe,
            }),
            activations: p.activations.map(|a| KeyActivations {
                limit: a.limit,
                enable_customer_admin: a.enable_customer_admin,
            }),
            limit_usage: p.limit_usage,
        })
    }
}

/// The Benefit schema (one of its variants, chosen by `type`).
#[derive(Debug, Serialize)]
pub struct BenefitView {
    pub id: uuid::Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub description: String,
    pub selectable: bool,
    pub deletable: bool,
    pub organization_id: uuid::Uuid,
    pub properties: Value,
    /// Deprecated in Polar, still part of `BenefitCustom`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_tax_applicable: Option<bool>,
}

pub fn properties_json(p: &BenefitProperties) -> Value {
    match p {
        BenefitProperties::Custom { note } => json!({ "note": note }),
        BenefitProperties::Ads {
            image_height,
            image_width,
        } => json!({"image_height": image_height, "image_width": image_width}),
        BenefitProperties::LicenseKeys(k) => json!({
            "prefix": k.prefix,
            "expires": k.expires.map(|e| json!({"ttl": e.ttl, "timeframe": e.timeframe})),
            "activations": k.activations.map(|a| json!({"limit": a.limit, "enable_customer_admin": a.enable_customer_admin})),
            "limit_usage": k.limit_usage,
        }),
    }
}

impl From<&Benefit> for BenefitView {
    fn from(b: &Benefit) -> Self {
        BenefitView {
            id: b.id.0,
            created_at: b.created_at,
            modified_at: b.modified_at,
            kind: b.kind().as_str(),
            description: b.description.clone(),
            selectable: b.selectable,
            deletable: b.deletable,
            organization_id: b.organization_id.0,
            properties: properties_json(&b.properties),
            is_tax_applicable: matches!(b.properties, BenefitProperties::Custom { .. })
                .then_some(false),
        }
    }
}
