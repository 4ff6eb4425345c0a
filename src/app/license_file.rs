//! Offline license files (issue 32, part 3): a signed, time-limited certificate of a key
//! that an app verifies with its organization's public key alone, in Keygen's documented
//! format so Keygen's verifiers accept it:
//!
//! ```text
//! -----BEGIN LICENSE FILE-----
//! base64 of {"enc": …, "sig": …, "alg": …}, in lines of 60
//! -----END LICENSE FILE-----
//! ```
//!
//! * `alg` `base64+ed25519`: `enc` is the base64 of the data JSON;
//! * `alg` `aes-256-gcm+ed25519`: `enc` is `b64(ciphertext).b64(iv).b64(tag)`, AES-256-GCM
//!   under SHA-256 of the license key, a 12-byte IV, no associated data;
//! * `sig`: base64 of the ed25519 signature of `"license/" + enc`.
//!
//! The data is Keygen's `{"data", "included", "meta"}`: a `licenses` resource (its `key`,
//! `expiry`, `status`, `uses`, `maxMachines`, `maxUses`, `metadata`), the activation as a
//! `machines` resource, and `meta.issued` / `meta.expiry` / `meta.ttl` (Keygen's
//! verifiers refuse a file past `meta.expiry`); `meta.license_key` is the key as Polar's
//! validation shows it. A file is only made for a key that validates (the same checks and
//! error codes); its expiry never passes the key's.

use aes_gcm::aead::{Aead, KeyInit};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use tollgate_actors::license_key::ValidateKey;

use crate::api::license_signing::{LicenseFile, LicenseFileRequest};
use crate::domain::ids::{ActivationId, OrganizationId};
use crate::error::ApiError;
use crate::state::AppState;

/// Keygen's bounds and default for a file's life, in seconds.
pub const MIN_TTL: i64 = 3_600;
pub const MAX_TTL: i64 = 31_556_952;
pub const DEFAULT_TTL: i64 = 2_629_746;

pub const SIGNED: &str = "base64+ed25519";
pub const ENCRYPTED: &str = "aes-256-gcm+ed25519";

fn check_ttl(ttl: Option<i64>) -> Result<i64, ApiError> {
    let ttl = ttl.unwrap_or(DEFAULT_TTL);
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

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The license file of the key `request` names, if it validates now.
pub async fn license_file(
    state: &AppState,
    request: LicenseFileRequest,
) -> Result<LicenseFile, ApiError> {
    let ttl = check_ttl(request.ttl)?;
    let org = OrganizationId(request.organization_id);
    let license_key = request.key.clone();
    let validated = crate::app::license_keys::validate(
        state,
        ValidateKey {
            key: request.key,
            organization_id: org,
            activation_id: request.activation_id.map(ActivationId),
            benefit_id: None,
            customer_id: None,
            increment_usage: None,
            conditions: request.conditions,
        },
    )
    .await?;
    let signer = crate::app::license_signing::signer(state, org).await?;
    // Whole milliseconds, as the file states them (a verifier compares with those).
    let issued = DateTime::from_timestamp_millis(state.now().timestamp_millis())
        .unwrap_or_else(|| state.now());
    let mut expiry = issued + chrono::Duration::seconds(ttl);
    if let Some(key_expiry) = validated.expires_at.filter(|e| *e < expiry) {
        expiry = key_expiry;
    }
    let ttl = (expiry - issued).num_seconds();
    let polar = serde_json::to_value(&validated).unwrap_or(Value::Null);
    let mut included = Vec::new();
    if let Some(a) = &validated.activation {
        included.push(json!({
            "id": a.id,
            "type": "machines",
            "attributes": {
                "fingerprint": a.id,
                "name": a.label,
                "metadata": a.meta,
                "created": stamp(a.created_at),
                "updated": stamp(a.modified_at.unwrap_or(a.created_at)),
            },
            "relationships": {"license": {"data": {"type": "licenses", "id": validated.id}}},
        }));
    }
    let data = json!({
        "data": {
            "id": validated.id,
            "type": "licenses",
            "attributes": {
                "name": null,
                "key": license_key,
                "expiry": validated.expires_at.map(stamp),
                "status": "ACTIVE",
                "uses": validated.usage,
                "maxMachines": validated.limit_activations,
                "maxUses": validated.limit_usage,
                "metadata": {},
                "created": stamp(validated.created_at),
                "updated": stamp(validated.modified_at.unwrap_or(validated.created_at)),
            },
            "relationships": {
                "owner": {"data": {"type": "customers", "id": validated.customer_id}},
                "product": {"data": {"type": "benefits", "id": validated.benefit_id}},
                "machines": {
                    "data": validated.activation.as_ref().map(|a| vec![json!({"type": "machines", "id": a.id})]).unwrap_or_default(),
                },
            },
        },
        "included": included,
        "meta": {
            "issued": stamp(issued),
            "expiry": stamp(expiry),
            "ttl": ttl,
            "organization_id": org.0,
            "kid": signer.kid,
            "license_key": polar,
        },
    });
    let plain = serde_json::to_vec(&data).map_err(|e| ApiError::Internal(e.to_string()))?;
    let (enc, alg) = if request.encrypt {
        (encrypt(&license_key, &plain)?, ENCRYPTED)
    } else {
        (STANDARD.encode(&plain), SIGNED)
    };
    let sig = STANDARD.encode(signer.sign(format!("license/{enc}").as_bytes()));
    let doc = serde_json::to_vec(&json!({"enc": enc, "sig": sig, "alg": alg}))
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(LicenseFile {
        certificate: envelope(&STANDARD.encode(doc)),
        algorithm: alg,
        kid: signer.kid.clone(),
        issued_at: issued,
        expires_at: expiry,
        ttl,
    })
}

/// AES-256-GCM under SHA-256 of the license key: `b64(ciphertext).b64(iv).b64(tag)`.
fn encrypt(license_key: &str, plain: &[u8]) -> Result<String, ApiError> {
    let key = Sha256::digest(license_key.as_bytes());
    let cipher =
        aes_gcm::Aes256Gcm::new_from_slice(&key).map_err(|e| ApiError::Internal(e.to_string()))?;
    let mut iv = [0u8; 12];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut iv);
    let sealed = cipher
        .encrypt(aes_gcm::Nonce::from_slice(&iv), plain)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    // The 16-byte tag is appended to the ciphertext.
    let (ciphertext, tag) = sealed.split_at(sealed.len().saturating_sub(16));
    Ok(format!(
        "{}.{}.{}",
        STANDARD.encode(ciphertext),
        STANDARD.encode(iv),
        STANDARD.encode(tag)
    ))
}

/// Keygen's armour: lines of 60, one newline after the footer.
fn envelope(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + body.len() / 60 + 64);
    out.push_str("-----BEGIN LICENSE FILE-----\n");
    for line in body.as_bytes().chunks(60) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str("-----END LICENSE FILE-----\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_wraps_at_sixty_and_ends_with_one_newline() {
        let body = "a".repeat(130);
        let text = envelope(&body);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "-----BEGIN LICENSE FILE-----");
        assert_eq!(lines[1].len(), 60);
        assert_eq!(lines[2].len(), 60);
        assert_eq!(lines[3].len(), 10);
        assert_eq!(lines[4], "-----END LICENSE FILE-----");
        assert!(text.ends_with("-----\n") && !text.ends_with("\n\n"));
    }

    #[test]
    fn encryption_opens_with_the_sha256_of_the_license_key() {
        let enc = encrypt("TG-KEY", b"{\"a\":1}").expect("encrypted");
        let parts: Vec<Vec<u8>> = enc
            .split('.')
            .map(|p| STANDARD.decode(p).expect("base64"))
            .collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[1].len(), 12);
        assert_eq!(parts[2].len(), 16);
        let key = Sha256::digest(b"TG-KEY");
        let cipher = aes_gcm::Aes256Gcm::new_from_slice(&key).expect("a key");
        let mut sealed = parts[0].clone();
        sealed.extend_from_slice(&parts[2]);
        let plain = cipher
            .decrypt(aes_gcm::Nonce::from_slice(&parts[1]), sealed.as_slice())
            .expect("opens");
        assert_eq!(plain, b"{\"a\":1}");
        let wrong =
            aes_gcm::Aes256Gcm::new_from_slice(&Sha256::digest(b"TG-OTHER")).expect("a key");
        let mut sealed = parts[0].clone();
        sealed.extend_from_slice(&parts[2]);
        assert!(wrong
            .decrypt(aes_gcm::Nonce::from_slice(&parts[1]), sealed.as_slice())
            .is_err());
    }

    #[test]
    fn ttl_bounds() {
        assert_eq!(check_ttl(None).ok(), Some(DEFAULT_TTL));
        assert_eq!(check_ttl(Some(MIN_TTL)).ok(), Some(MIN_TTL));
        assert_eq!(check_ttl(Some(MAX_TTL)).ok(), Some(MAX_TTL));
        assert!(check_ttl(Some(MIN_TTL - 1)).is_err());
        assert!(check_ttl(Some(MAX_TTL + 1)).is_err());
    }
}
