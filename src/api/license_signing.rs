//! An organization's signing keys for license-key answers and license files (Tollgate's;
//! Polar signs nothing): the public JWKS, and the seller's view and settings.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// An ed25519 public key as a JWK (RFC 8037).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LicenseKeyJwk {
    /// `OKP`.
    pub kty: &'static str,
    /// `Ed25519`.
    pub crv: &'static str,
    /// The public key, base64url without padding.
    pub x: String,
    /// The key's id: its RFC 7638 thumbprint, the `keyid` of signatures it makes.
    pub kid: String,
    /// `sig`.
    #[serde(rename = "use")]
    pub use_: &'static str,
    /// `EdDSA`.
    pub alg: &'static str,
}

impl LicenseKeyJwk {
    pub fn new(kid: &str, public: &[u8]) -> Self {
        use base64::Engine;
        Self {
            kty: "OKP",
            crv: "Ed25519",
            x: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(public),
            kid: kid.to_owned(),
            use_: "sig",
            alg: "EdDSA",
        }
    }
}

/// `GET /v1/customer-portal/license-keys/jwks`: the organization's public keys, the one
/// that signs now first, then the retired ones (answers and files they signed still
/// verify).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LicenseKeyJwks {
    pub keys: Vec<LicenseKeyJwk>,
}

/// One of the organization's key pairs, as its seller sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LicenseKeySigningKey {
    pub kid: String,
    pub created_at: DateTime<Utc>,
    /// When a newer key replaced it (`null`: it signs).
    pub retired_at: Option<DateTime<Utc>>,
    /// The public key in hex: the "verify key" Keygen's license-file verifiers take.
    pub public_key_hex: String,
    pub jwk: LicenseKeyJwk,
}

/// `GET /v1/license-keys/signing`: how the organization signs answers, and its keys.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LicenseKeySigning {
    pub organization_id: Uuid,
    /// Every validate, activate and deactivate answer is signed, asked for or not.
    pub sign_every_answer: bool,
    /// Where apps fetch the public keys.
    pub jwks_url: String,
    /// The signing key first, then the retired ones.
    pub keys: Vec<LicenseKeySigningKey>,
}

/// `PATCH /v1/license-keys/signing`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LicenseKeySigningUpdate {
    pub organization_id: Uuid,
    pub sign_every_answer: bool,
}

/// `POST /v1/license-keys/signing/rotate`: a new key signs from now on; the old ones stay
/// published.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LicenseKeySigningRotate {
    pub organization_id: Uuid,
}

/// The documented renderings (`/openapi.json` checks).
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    let jwk = LicenseKeyJwk::new("kid-1", &[7; 32]);
    let signing = LicenseKeySigning {
        organization_id: Uuid::from_u128(1),
        sign_every_answer: false,
        jwks_url: "https://tollgate.example/v1/customer-portal/license-keys/jwks?organization_id=00000000-0000-0000-0000-000000000001".into(),
        keys: vec![LicenseKeySigningKey {
            kid: "kid-1".into(),
            created_at: DateTime::<Utc>::UNIX_EPOCH,
            retired_at: None,
            public_key_hex: "07".repeat(32),
            jwk: jwk.clone(),
        }],
    };
    vec![
        (
            "LicenseKeyJwks",
            serde_json::to_value(LicenseKeyJwks { keys: vec![jwk] }).unwrap_or_default(),
        ),
        (
            "LicenseKeySigning",
            serde_json::to_value(signing).unwrap_or_default(),
        ),
        (
            "LicenseFile",
            serde_json::to_value(LicenseFile {
                certificate: "-----BEGIN LICENSE FILE-----\neyJ9\n-----END LICENSE FILE-----\n"
                    .into(),
                algorithm: "base64+ed25519",
                kid: "kid-1".into(),
                issued_at: DateTime::<Utc>::UNIX_EPOCH,
                expires_at: DateTime::<Utc>::UNIX_EPOCH,
                ttl: 3600,
            })
            .unwrap_or_default(),
        ),
    ]
}

/// `POST /v1/customer-portal/license-keys/license-file`: an offline certificate of a key,
/// for anyone who holds the key (no authentication).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LicenseFileRequest {
    pub key: String,
    pub organization_id: Uuid,
    /// The activation (device) the file is for: it must be one of the key's.
    #[serde(default)]
    pub activation_id: Option<Uuid>,
    /// Must equal the activation's conditions, as for a validation.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub conditions: serde_json::Map<String, serde_json::Value>,
    /// Seconds the file is valid: 3,600 (an hour) to 31,556,952 (a year); 2,629,746 (a
    /// month) when left out. Never beyond the key's own expiry.
    #[serde(default)]
    pub ttl: Option<i64>,
    /// Encrypt the file's content with a key derived from the license key
    /// (`aes-256-gcm+ed25519`); otherwise only signed (`base64+ed25519`).
    #[serde(default)]
    pub encrypt: bool,
}

/// Keygen's bounds and default for a license file's life, in seconds.
pub const MIN_TTL: i64 = 3_600;
pub const MAX_TTL: i64 = 31_556_952;
pub const DEFAULT_TTL: i64 = 2_629_746;

impl LicenseFileRequest {
    /// The file's life in seconds: `ttl`, or a month when left out; a 422 outside Keygen's
    /// bounds (an hour to a year).
    pub fn checked_ttl(&self) -> Result<i64, crate::error::ApiError> {
        let ttl = self.ttl.unwrap_or(DEFAULT_TTL);
        let mut v = crate::validate::Validator::new();
        v.int_range(
            crate::loc!["body", "ttl"],
            ttl,
            Some(MIN_TTL),
            Some(MAX_TTL),
        );
        v.finish()?;
        Ok(ttl)
    }
}

/// A signed license file in Keygen's format.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LicenseFile {
    /// `-----BEGIN LICENSE FILE-----`, base64 of `{"enc", "sig", "alg"}` in lines of 60,
    /// `-----END LICENSE FILE-----`.
    pub certificate: String,
    /// `base64+ed25519` or `aes-256-gcm+ed25519`.
    pub algorithm: &'static str,
    /// The signing key (`kid` in the organization's JWKS).
    pub kid: String,
    pub issued_at: DateTime<Utc>,
    /// After this, verifiers refuse the file.
    pub expires_at: DateTime<Utc>,
    pub ttl: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(ttl: Option<i64>) -> LicenseFileRequest {
        LicenseFileRequest {
            key: "ACME-1".into(),
            organization_id: Uuid::nil(),
            activation_id: None,
            conditions: Default::default(),
            ttl,
            encrypt: false,
        }
    }

    #[test]
    fn ttl_bounds() {
        assert_eq!(request(None).checked_ttl().ok(), Some(DEFAULT_TTL));
        assert_eq!(request(Some(MIN_TTL)).checked_ttl().ok(), Some(MIN_TTL));
        assert_eq!(request(Some(MAX_TTL)).checked_ttl().ok(), Some(MAX_TTL));
        assert!(request(Some(MIN_TTL - 1)).checked_ttl().is_err());
        assert!(request(Some(MAX_TTL + 1)).checked_ttl().is_err());
    }
}
