//! The wire shapes of releases and update feeds (Tollgate's extension, no Polar anchor):
//! `ReleaseCreate`, `ReleaseUpdate`, `ReleaseRead`, the organization's update-signing
//! public keys, and Tauri's dynamic update answer.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::domain::ids::{BenefitId, FileId, ProductId};
use crate::domain::release::{NewArtifact, NewRelease, Release, ReleaseArtifact, ReleaseChange};

/// One file of a release: an uploaded file of the organization for one platform.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ReleaseArtifactCreate {
    /// `linux-x86_64`, `linux-aarch64`, `linux-armv7`, `linux-i686`, `darwin-x86_64`,
    /// `darwin-aarch64`, `darwin-universal`, `windows-x86_64`, `windows-aarch64` or
    /// `windows-i686`.
    pub platform: String,
    /// `appimage`, `deb`, `rpm` (Linux), `nsis`, `msi` (Windows), `app_tar_gz`, `dmg`
    /// (macOS) or `zip` (any).
    pub bundle: String,
    pub file_id: Uuid,
}

/// A new release (a draft): its files are signed when it is published.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ReleaseCreate {
    pub product_id: Uuid,
    /// A semantic version, unique per product.
    pub version: String,
    /// `stable` (default), `beta` or `alpha`.
    #[serde(default)]
    pub channel: Option<String>,
    #[serde(default)]
    pub notes: Option<String>,
    /// Counted as published at this time for keys' expiry.
    #[serde(default)]
    pub backdated_to: Option<DateTime<Utc>>,
    /// Feature-flag benefits a key's purchase must grant, all of them, to see the release.
    #[serde(default)]
    pub required_benefit_ids: Vec<Uuid>,
    #[serde(default)]
    pub minimum_system_version: Option<String>,
    /// Sparkle's `sparkle:version` (CFBundleVersion); the version when absent.
    #[serde(default)]
    pub build: Option<String>,
    #[serde(default)]
    pub artifacts: Vec<ReleaseArtifactCreate>,
}

/// A change of a release: absent fields stay. `artifacts` only while it is a draft.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct ReleaseUpdate {
    #[serde(default)]
    pub channel: Option<String>,
    #[serde(default)]
    pub notes: Option<String>,
    #[serde(default)]
    pub backdated_to: Option<DateTime<Utc>>,
    #[serde(default)]
    pub required_benefit_ids: Option<Vec<Uuid>>,
    #[serde(default)]
    pub minimum_system_version: Option<String>,
    #[serde(default)]
    pub build: Option<String>,
    #[serde(default)]
    pub artifacts: Option<Vec<ReleaseArtifactCreate>>,
}

/// A file of a release as answered; name, size, digest and signatures once published.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReleaseArtifactRead {
    pub platform: String,
    pub bundle: String,
    pub file_id: Uuid,
    pub name: Option<String>,
    pub size: Option<u64>,
    /// Base64 of the file's SHA-512 (electron-updater's `sha512`).
    pub sha512: Option<String>,
    /// Tauri's `signature`: base64 of the minisign signature file.
    pub signature: Option<String>,
    /// Sparkle's `sparkle:edSignature`: base64 of the ed25519 signature of the bytes.
    pub ed_signature: Option<String>,
}

impl From<&ReleaseArtifact> for ReleaseArtifactRead {
    fn from(a: &ReleaseArtifact) -> Self {
        let signed = a.signatures.as_ref();
        ReleaseArtifactRead {
            platform: a.platform.clone(),
            bundle: a.bundle.as_str().into(),
            file_id: a.file_id.0,
            name: signed.map(|_| a.name.clone()),
            size: signed.map(|_| a.size),
            sha512: signed.map(|_| STANDARD.encode(&a.sha512)),
            signature: signed.map(|s| STANDARD.encode(&s.minisign)),
            ed_signature: signed.map(|s| STANDARD.encode(&s.ed25519)),
        }
    }
}

/// A release.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReleaseRead {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub organization_id: Uuid,
    pub product_id: Uuid,
    pub version: String,
    /// `stable`, `beta` or `alpha`.
    pub channel: String,
    pub notes: Option<String>,
    /// `draft`, `published` or `yanked`.
    pub status: String,
    pub published_at: Option<DateTime<Utc>>,
    pub yanked_at: Option<DateTime<Utc>>,
    pub backdated_to: Option<DateTime<Utc>>,
    pub required_benefit_ids: Vec<Uuid>,
    pub minimum_system_version: Option<String>,
    pub build: Option<String>,
    pub artifacts: Vec<ReleaseArtifactRead>,
}

impl From<&Release> for ReleaseRead {
    fn from(r: &Release) -> Self {
        ReleaseRead {
            id: r.id.0,
            created_at: r.created_at,
            modified_at: r.modified_at,
            organization_id: r.organization_id.0,
            product_id: r.product_id.0,
            version: r.version.clone(),
            channel: r.channel.as_str().into(),
            notes: r.notes.clone(),
            status: r.status.as_str().into(),
            published_at: r.published_at,
            yanked_at: r.yanked_at,
            backdated_to: r.backdated_to,
            required_benefit_ids: r.required_benefits.iter().map(|b| b.0).collect(),
            minimum_system_version: r.minimum_system_version.clone(),
            build: r.build.clone(),
            artifacts: r.artifacts.iter().map(ReleaseArtifactRead::from).collect(),
        }
    }
}

/// The public half of an organization's update-signing key, in the forms the updaters
/// take it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UpdateSigningKeyRead {
    pub organization_id: Uuid,
    /// Sparkle's `SUPublicEDKey` (Info.plist): the ed25519 public key in base64.
    pub sparkle_public_ed_key: String,
    /// Tauri's `plugins.updater.pubkey`: base64 of the minisign public key file.
    pub tauri_pubkey: String,
    /// The minisign public key file (`minisign -V -p`).
    pub minisign_public_key: String,
    pub created_at: DateTime<Utc>,
}

/// Tauri's dynamic update answer (tauri-plugin-updater's `RemoteRelease`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TauriUpdate {
    pub version: String,
    pub notes: Option<String>,
    /// RFC 3339.
    pub pub_date: Option<String>,
    /// The signed artifact link.
    pub url: String,
    /// Base64 of the minisign signature file.
    pub signature: String,
}

impl From<ReleaseArtifactCreate> for NewArtifact {
    fn from(a: ReleaseArtifactCreate) -> Self {
        NewArtifact {
            platform: a.platform,
            bundle: a.bundle,
            file_id: FileId(a.file_id),
        }
    }
}

impl From<ReleaseCreate> for NewRelease {
    fn from(b: ReleaseCreate) -> Self {
        NewRelease {
            product_id: ProductId(b.product_id),
            version: b.version,
            channel: b.channel,
            notes: b.notes,
            backdated_to: b.backdated_to,
            required_benefits: b.required_benefit_ids.into_iter().map(BenefitId).collect(),
            minimum_system_version: b.minimum_system_version,
            build: b.build,
            artifacts: b.artifacts.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<ReleaseUpdate> for ReleaseChange {
    fn from(p: ReleaseUpdate) -> Self {
        ReleaseChange {
            channel: p.channel,
            notes: p.notes,
            backdated_to: p.backdated_to,
            required_benefits: p
                .required_benefit_ids
                .map(|ids| ids.into_iter().map(BenefitId).collect()),
            minimum_system_version: p.minimum_system_version,
            build: p.build,
            artifacts: p.artifacts.map(|a| a.into_iter().map(Into::into).collect()),
        }
    }
}

/// One instance of each answer, for the document's tests.
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use crate::domain::ids::{FileId, OrganizationId, ProductId, ReleaseId};
    use crate::domain::release::{ArtifactSignatures, Bundle, Channel, ReleaseStatus};
    let at = DateTime::<Utc>::UNIX_EPOCH;
    let release = Release {
        id: ReleaseId(Uuid::from_u128(1)),
        organization_id: OrganizationId(Uuid::from_u128(2)),
        product_id: ProductId(Uuid::from_u128(3)),
        version: "1.2.0".into(),
        channel: Channel::Beta,
        notes: Some("Fixes".into()),
        status: ReleaseStatus::Published,
        created_at: at,
        modified_at: Some(at),
        published_at: Some(at),
        yanked_at: None,
        backdated_to: None,
        required_benefits: Vec::new(),
        minimum_system_version: None,
        build: None,
        artifacts: vec![ReleaseArtifact {
            platform: "linux-x86_64".into(),
            bundle: Bundle::AppImage,
            file_id: FileId(Uuid::from_u128(4)),
            name: "App-1.2.0.AppImage".into(),
            size: 10,
            sha512: vec![1; 64],
            signatures: Some(ArtifactSignatures {
                minisign: "untrusted comment: x\n".into(),
                ed25519: vec![2; 64],
            }),
        }],
    };
    let key = UpdateSigningKeyRead {
        organization_id: Uuid::from_u128(2),
        sparkle_public_ed_key: STANDARD.encode([7; 32]),
        tauri_pubkey: STANDARD.encode("untrusted comment: minisign public key 0\nRWQ=\n"),
        minisign_public_key: "untrusted comment: minisign public key 0\nRWQ=\n".into(),
        created_at: at,
    };
    let tauri = TauriUpdate {
        version: "1.2.0".into(),
        notes: None,
        pub_date: Some("1970-01-01T00:00:00Z".into()),
        url: "https://tollgate.example/v1/updates/download/1/App.AppImage".into(),
        signature: "dW50cnVzdGVk".into(),
    };
    vec![
        (
            "ReleaseRead",
            serde_json::to_value(ReleaseRead::from(&release)).unwrap_or_default(),
        ),
        (
            "UpdateSigningKeyRead",
            serde_json::to_value(key).unwrap_or_default(),
        ),
        (
            "TauriUpdate",
            serde_json::to_value(tauri).unwrap_or_default(),
        ),
    ]
}
