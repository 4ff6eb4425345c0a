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
//! `machines` resource, each feature flag the key's purchase grants as an `entitlements`
//! resource (its `code` the benefit's id, its `metadata` what it unlocks), and `meta.issued` / `meta.expiry` / `meta.ttl` (Keygen's
//! verifiers refuse a file past `meta.expiry`); `meta.license_key` is the key as Polar's
//! validation shows it. A file is only made for a key that validates (the same checks and
//! error codes); its expiry never passes the key's.

use aes_gcm::aead::{Aead, KeyInit};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Serialize, Serializer};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use tollgate_actors::license_key::{JsonObject, ValidateKey};

use crate::api::license_key::ValidatedLicenseKey;
use crate::api::license_signing::LicenseFile;
use crate::domain::ids::{ActivationId, OrganizationId};
use crate::error::AppError;
use crate::state::AppState;

pub const SIGNED: &str = "base64+ed25519";
pub const ENCRYPTED: &str = "aes-256-gcm+ed25519";

/// Make the license file of key `key` of organization `organization_id` (for its
/// activation `activation_id`, whose `conditions` must match).
#[derive(Debug, Clone, PartialEq)]
pub struct MakeLicenseFile {
    pub key: String,
    pub organization_id: OrganizationId,
    pub activation_id: Option<ActivationId>,
    pub conditions: JsonObject,
    /// Seconds, an hour to a year (the adapter checked Keygen's bounds); never beyond the
    /// key's expiry.
    pub ttl: i64,
    /// `aes-256-gcm+ed25519` rather than `base64+ed25519`.
    pub encrypt: bool,
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

// Keygen's document. serde_json writes a `json!` object's keys in sorted order (no
// `preserve_order`), and the files made before these types did so: the fields are
// declared in that order, so the bytes signed stay the same.

/// `{"data", "included", "meta"}`.
#[derive(Serialize)]
struct Document<'a> {
    data: LicenseResource<'a>,
    included: Vec<Included<'a>>,
    meta: DocumentMeta<'a>,
}

/// A resource of `included`: the activation, then the entitlements.
#[derive(Serialize)]
#[serde(untagged)]
enum Included<'a> {
    Machine(MachineResource<'a>),
    Entitlement(EntitlementResource<'a>),
}

/// A resource identifier (`{"id", "type"}`).
#[derive(Serialize)]
struct Ref {
    id: Uuid,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// `{"data": …}` of a relationship.
#[derive(Serialize)]
struct Related<T> {
    data: T,
}

#[derive(Serialize)]
struct LicenseResource<'a> {
    attributes: LicenseAttributes<'a>,
    id: Uuid,
    relationships: LicenseRelationships,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LicenseAttributes<'a> {
    created: String,
    expiry: Option<String>,
    key: &'a str,
    max_machines: Option<i64>,
    max_uses: Option<i64>,
    metadata: Empty,
    name: Option<String>,
    status: &'static str,
    updated: String,
    uses: i64,
}

/// `{}`.
#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
struct LicenseRelationships {
    /// Left out when there are none, as files made before entitlements were.
    #[serde(skip_serializing_if = "Related::is_empty")]
    entitlements: Related<Vec<Ref>>,
    machines: Related<Vec<Ref>>,
    owner: Related<Ref>,
    product: Related<Ref>,
}

#[derive(Serialize)]
struct MachineResource<'a> {
    attributes: MachineAttributes<'a>,
    id: Uuid,
    relationships: MachineRelationships,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct MachineAttributes<'a> {
    created: String,
    fingerprint: Uuid,
    metadata: &'a JsonObject,
    name: &'a str,
    updated: String,
}

#[derive(Serialize)]
struct MachineRelationships {
    license: Related<Ref>,
}

impl Related<Vec<Ref>> {
    fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// A Keygen `entitlements` resource: a feature flag the key's purchase grants (Keygen's
/// `code` is the benefit's id; `metadata` is what it unlocks).
#[derive(Serialize)]
struct EntitlementResource<'a> {
    attributes: EntitlementAttributes<'a>,
    id: Uuid,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct EntitlementAttributes<'a> {
    code: String,
    created: String,
    #[serde(serialize_with = "sorted")]
    metadata: &'a crate::api::metadata::MetadataMap,
    name: &'a str,
    updated: String,
}

#[derive(Serialize)]
struct DocumentMeta<'a> {
    expiry: String,
    issued: String,
    kid: &'a str,
    /// The key as Polar's validation shows it (its keys sorted, as a JSON value's).
    #[serde(serialize_with = "sorted")]
    license_key: &'a ValidatedLicenseKey,
    organization_id: Uuid,
    ttl: i64,
}

/// The envelope signed and armoured: `{"alg", "enc", "sig"}`.
#[derive(Serialize)]
struct Signed<'a> {
    alg: &'static str,
    enc: &'a str,
    sig: &'a str,
}

/// `v` with the keys of every object sorted (as a JSON value writes them).
fn sorted<T: Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(v)
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}

/// The document of `validated` for `license_key`, issued at `issued` until `expiry`.
fn document<'a>(
    validated: &'a ValidatedLicenseKey,
    license_key: &'a str,
    org: OrganizationId,
    kid: &'a str,
    issued: DateTime<Utc>,
    expiry: DateTime<Utc>,
) -> Document<'a> {
    let license = |id| Ref {
        id,
        kind: "licenses",
    };
    let included = validated
        .activation
        .iter()
        .map(|a| MachineResource {
            attributes: MachineAttributes {
                created: stamp(a.created_at),
                fingerprint: a.id,
                metadata: &a.meta,
                name: &a.label,
                updated: stamp(a.modified_at.unwrap_or(a.created_at)),
            },
            id: a.id,
            relationships: MachineRelationships {
                license: Related {
                    data: license(validated.id),
                },
            },
            kind: "machines",
        })
        .map(Included::Machine)
        .chain(validated.entitlements.iter().map(|e| {
            Included::Entitlement(EntitlementResource {
                attributes: EntitlementAttributes {
                    code: e.benefit_id.to_string(),
                    created: stamp(e.created_at),
                    metadata: &e.metadata,
                    name: &e.description,
                    updated: stamp(e.updated_at),
                },
                id: e.benefit_id,
                kind: "entitlements",
            })
        }))
        .collect();
    Document {
        data: LicenseResource {
            attributes: LicenseAttributes {
                created: stamp(validated.created_at),
                expiry: validated.expires_at.map(stamp),
                key: license_key,
                max_machines: validated.limit_activations,
                max_uses: validated.limit_usage,
                metadata: Empty {},
                name: None,
                status: "ACTIVE",
                updated: stamp(validated.modified_at.unwrap_or(validated.created_at)),
                uses: validated.usage,
            },
            id: validated.id,
            relationships: LicenseRelationships {
                entitlements: Related {
                    data: validated
                        .entitlements
                        .iter()
                        .map(|e| Ref {
                            id: e.benefit_id,
                            kind: "entitlements",
                        })
                        .collect(),
                },
                machines: Related {
                    data: validated
                        .activation
                        .iter()
                        .map(|a| Ref {
                            id: a.id,
                            kind: "machines",
                        })
                        .collect(),
                },
                owner: Related {
                    data: Ref {
                        id: validated.customer_id,
                        kind: "customers",
                    },
                },
                product: Related {
                    data: Ref {
                        id: validated.benefit_id,
                        kind: "benefits",
                    },
                },
            },
            kind: "licenses",
        },
        included,
        meta: DocumentMeta {
            expiry: stamp(expiry),
            issued: stamp(issued),
            kid,
            license_key: validated,
            organization_id: org.0,
            ttl: (expiry - issued).num_seconds(),
        },
    }
}

/// The license file of the key `cmd` names, if it validates now.
pub async fn license_file(state: &AppState, cmd: MakeLicenseFile) -> Result<LicenseFile, AppError> {
    let org = cmd.organization_id;
    let license_key = cmd.key.clone();
    let validated = crate::app::license_keys::validate(
        state,
        ValidateKey {
            key: cmd.key,
            organization_id: org,
            activation_id: cmd.activation_id,
            benefit_id: None,
            customer_id: None,
            increment_usage: None,
            conditions: cmd.conditions,
        },
    )
    .await?;
    let signer = crate::app::license_signing::signer(state, org).await?;
    // Whole milliseconds, as the file states them (a verifier compares with those).
    let issued = DateTime::from_timestamp_millis(state.now().timestamp_millis())
        .unwrap_or_else(|| state.now());
    let mut expiry = issued + chrono::Duration::seconds(cmd.ttl);
    if let Some(key_expiry) = validated.expires_at.filter(|e| *e < expiry) {
        expiry = key_expiry;
    }
    let ttl = (expiry - issued).num_seconds();
    let data = document(&validated, &license_key, org, &signer.kid, issued, expiry);
    let plain = serde_json::to_vec(&data).map_err(AppError::internal)?;
    let (enc, alg) = if cmd.encrypt {
        (encrypt(&license_key, &plain)?, ENCRYPTED)
    } else {
        (STANDARD.encode(&plain), SIGNED)
    };
    let sig = STANDARD.encode(signer.sign(format!("license/{enc}").as_bytes()));
    let doc = serde_json::to_vec(&Signed {
        alg,
        enc: &enc,
        sig: &sig,
    })
    .map_err(AppError::internal)?;
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
fn encrypt(license_key: &str, plain: &[u8]) -> Result<String, AppError> {
    let key = Sha256::digest(license_key.as_bytes());
    let cipher = aes_gcm::Aes256Gcm::new_from_slice(&key).map_err(AppError::internal)?;
    let mut iv = [0u8; 12];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut iv);
    let sealed = cipher
        .encrypt(aes_gcm::Nonce::from_slice(&iv), plain)
        .map_err(AppError::internal)?;
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

    /// The document as `json!` wrote it before it had types (keys sorted).
    fn as_json_wrote_it(
        validated: &ValidatedLicenseKey,
        license_key: &str,
        org: OrganizationId,
        kid: &str,
        issued: DateTime<Utc>,
        expiry: DateTime<Utc>,
    ) -> Vec<u8> {
        use serde_json::json;
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
                "ttl": (expiry - issued).num_seconds(),
                "organization_id": org.0,
                "kid": kid,
                "license_key": serde_json::to_value(validated).unwrap(),
            },
        });
        serde_json::to_vec(&data).unwrap()
    }

    #[test]
    fn the_typed_document_writes_the_bytes_json_wrote() {
        use crate::domain::customer::Customer;
        use crate::domain::ids::{BenefitId, CustomerId, LicenseKeyId};
        use tollgate_actors::license_key::{Activation, KeyStatus, LicenseKey};

        let now = DateTime::from_timestamp_millis(1_790_000_000_123).unwrap();
        let org = OrganizationId::new();
        let customer = Customer::new(CustomerId::new(), org, "a@example.com".into(), now);
        let activation = Activation {
            id: ActivationId::new(),
            label: "laptop".into(),
            meta: r#"{"zeta":1,"alpha":{"y":2,"b":3}}"#.into(),
            conditions: "{}".into(),
            created_at: now,
            modified_at: None,
            deleted_at: None,
        };
        let mut key = LicenseKey {
            id: LicenseKeyId::new(),
            organization_id: org,
            customer_id: customer.id,
            benefit_id: BenefitId::new(),
            created_at: now,
            modified_at: Some(now + chrono::Duration::seconds(5)),
            key: "ACME-1".into(),
            status: KeyStatus::Granted,
            limit_activations: Some(3),
            usage: 2,
            limit_usage: None,
            validations: 4,
            last_validated_at: None,
            expires_at: Some(now + chrono::Duration::days(10)),
            activations: vec![activation.clone()],
            subscription_id: None,
            order_id: None,
            paid_until: None,
            allow_replacement: false,
            replacements: Vec::new(),
        };
        let expiry = now + chrono::Duration::days(2);
        for with_activation in [true, false] {
            let parts = crate::api::license_key::CustomerParts::from(&customer);
            let validated =
                ValidatedLicenseKey::new(&key, &parts, with_activation.then_some(&activation));
            let typed =
                serde_json::to_vec(&document(&validated, "ACME-1", org, "kid-1", now, expiry))
                    .unwrap();
            assert_eq!(
                String::from_utf8(typed).unwrap(),
                String::from_utf8(as_json_wrote_it(
                    &validated, "ACME-1", org, "kid-1", now, expiry
                ))
                .unwrap()
            );
            key.expires_at = None;
        }
        let signed = serde_json::to_vec(&Signed {
            alg: SIGNED,
            enc: "e",
            sig: "s",
        })
        .unwrap();
        assert_eq!(signed, br#"{"alg":"base64+ed25519","enc":"e","sig":"s"}"#);
    }

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
}
