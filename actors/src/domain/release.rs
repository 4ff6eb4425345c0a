//! Releases of a product and the update feeds' rules (Tollgate's extension, after Keygen's
//! releases): a version on a channel with files per platform, published once its
//! signatures are computed, visible to a license key by the key's channel, expiry and
//! entitlements; and each organization's update-signing key.
//!
//! Channels are cumulative (Keygen's): the beta feed shows stable and beta releases, the
//! alpha feed all three. A key with an expiry sees only the releases published (or
//! backdated) at or before it, even after it expired (Keygen's `RESTRICT_ACCESS`): a
//! perpetual license with a year of updates is a key expiring a year after the purchase.
//! A release that names entitlements (feature-flag benefits) is visible only to keys whose
//! purchase grants all of them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::ids::{BenefitId, FileId, OrganizationId, ProductId, ReleaseId};

/// A release channel, from the most to the least stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Channel {
    Stable,
    Beta,
    Alpha,
}

impl Channel {
    pub const ALL: [Channel; 3] = [Channel::Stable, Channel::Beta, Channel::Alpha];

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Stable => "stable",
            Channel::Beta => "beta",
            Channel::Alpha => "alpha",
        }
    }

    /// A channel by its name (`stable`, `beta`, `alpha`).
    pub fn parse(s: &str) -> Option<Channel> {
        Channel::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// A channel as a feed URL names it: also `latest`, electron-updater's name of the
    /// stable channel.
    pub fn parse_feed(s: &str) -> Option<Channel> {
        if s == "latest" {
            return Some(Channel::Stable);
        }
        Channel::parse(s)
    }

    /// Whether a release on `self` shows in the feed of `feed` (cumulative channels).
    pub fn shows_in(self, feed: Channel) -> bool {
        self <= feed
    }
}

/// Where a release is in its life: only published releases are in feeds; a yanked one
/// is withdrawn (its links stop) but stays listed for the seller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReleaseStatus {
    Draft,
    Published,
    Yanked,
}

impl ReleaseStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ReleaseStatus::Draft => "draft",
            ReleaseStatus::Published => "published",
            ReleaseStatus::Yanked => "yanked",
        }
    }
}

/// The platforms an artifact may be for: `{os}-{arch}`, Tauri's names.
pub const PLATFORMS: &[&str] = &[
    "linux-x86_64",
    "linux-aarch64",
    "linux-armv7",
    "linux-i686",
    "darwin-x86_64",
    "darwin-aarch64",
    "darwin-universal",
    "windows-x86_64",
    "windows-aarch64",
    "windows-i686",
];

/// The operating system of a platform name (`linux`, `darwin`, `windows`).
pub fn os_of(platform: &str) -> &str {
    platform.split('-').next().unwrap_or(platform)
}

/// The kind of installer or archive an artifact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Bundle {
    AppImage,
    Deb,
    Rpm,
    Nsis,
    Msi,
    AppTarGz,
    Zip,
    Dmg,
}

impl Bundle {
    pub const ALL: [Bundle; 8] = [
        Bundle::AppImage,
        Bundle::Deb,
        Bundle::Rpm,
        Bundle::Nsis,
        Bundle::Msi,
        Bundle::AppTarGz,
        Bundle::Zip,
        Bundle::Dmg,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Bundle::AppImage => "appimage",
            Bundle::Deb => "deb",
            Bundle::Rpm => "rpm",
            Bundle::Nsis => "nsis",
            Bundle::Msi => "msi",
            Bundle::AppTarGz => "app_tar_gz",
            Bundle::Zip => "zip",
            Bundle::Dmg => "dmg",
        }
    }

    pub fn parse(s: &str) -> Option<Bundle> {
        Bundle::ALL.into_iter().find(|b| b.as_str() == s)
    }

    /// Whether an artifact of this kind can be for operating system `os`.
    pub fn fits(self, os: &str) -> bool {
        match self {
            Bundle::AppImage | Bundle::Deb | Bundle::Rpm => os == "linux",
            Bundle::Nsis | Bundle::Msi => os == "windows",
            Bundle::AppTarGz | Bundle::Dmg => os == "darwin",
            Bundle::Zip => true,
        }
    }
}

/// The signatures of an artifact's bytes, computed once when its release is published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactSignatures {
    /// minisign's signature file text (prehashed `ED` form, trusted comment
    /// `timestamp:<t>\tfile:<name>\tversion:<v>`): Tauri's `signature` is its base64.
    pub minisign: String,
    /// A plain ed25519 signature (64 bytes) over the bytes: Sparkle's `edSignature`.
    pub ed25519: Vec<u8>,
}

/// A file of a release, for one platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseArtifact {
    pub platform: String,
    pub bundle: Bundle,
    pub file_id: FileId,
    /// The file's name, size and SHA-512 when the release was published (the feeds show
    /// these; empty before).
    pub name: String,
    pub size: u64,
    pub sha512: Vec<u8>,
    pub signatures: Option<ArtifactSignatures>,
}

/// A release of a product.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Release {
    pub id: ReleaseId,
    pub organization_id: OrganizationId,
    pub product_id: ProductId,
    /// A semantic version (semver 2.0.0 syntax), unique per product.
    pub version: String,
    pub channel: Channel,
    pub notes: Option<String>,
    pub status: ReleaseStatus,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub published_at: Option<DateTime<Utc>>,
    pub yanked_at: Option<DateTime<Utc>>,
    /// Counted as published at this time for keys' expiry (Keygen's `backdated_to`): lets
    /// a seller ship a fix to keys that expired after it.
    pub backdated_to: Option<DateTime<Utc>>,
    /// Feature-flag benefits a key's purchase must grant, all of them, to see it.
    pub required_benefits: Vec<BenefitId>,
    /// Sparkle's `minimumSystemVersion` and electron-updater's `minimumSystemVersion`.
    pub minimum_system_version: Option<String>,
    /// Sparkle's `sparkle:version` (CFBundleVersion); the version when absent.
    pub build: Option<String>,
    pub artifacts: Vec<ReleaseArtifact>,
}

/// What a license key may read of a product's feed: its expiry and the feature-flag
/// benefits its purchase grants now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyAccess {
    pub expires_at: Option<DateTime<Utc>>,
    pub entitlements: Vec<BenefitId>,
}

/// Releases of a product, by creation time.
pub const RELEASE_OF_PRODUCT: &str = "release_of_product";
/// Releases of an organization, by creation time.
pub const RELEASE_OF_ORG: &str = "release_of_org";
/// `(product, version)`: one release per version.
pub const RELEASE_VERSION: &str = "release_version";

/// The version as a release stores it (the canonical form of a semantic version), or why
/// it is not one.
pub fn parse_version(s: &str) -> Result<semver::Version, String> {
    semver::Version::parse(s.trim()).map_err(|e| format!("Not a semantic version: {e}."))
}

impl Release {
    /// The semantic version (0.0.0 for a stored version that no longer parses, which
    /// creation prevents).
    pub fn semver(&self) -> semver::Version {
        parse_version(&self.version).unwrap_or(semver::Version::new(0, 0, 0))
    }

    /// Sparkle's build number: `build`, else the version.
    pub fn build_number(&self) -> &str {
        self.build.as_deref().unwrap_or(&self.version)
    }

    /// When the release counts as published for a key's expiry: the earlier of its
    /// publication and its backdating.
    pub fn effective_date(&self) -> Option<DateTime<Utc>> {
        match (self.published_at, self.backdated_to) {
            (Some(p), Some(b)) => Some(p.min(b)),
            (p, b) => p.or(b),
        }
    }

    /// Whether a key with `access` sees this release in the feed of channel `feed`:
    /// published, on that channel or a more stable one, published (or backdated) no later
    /// than the key's expiry, and every required entitlement granted.
    pub fn visible_to(&self, feed: Channel, access: &KeyAccess) -> bool {
        if self.status != ReleaseStatus::Published || !self.channel.shows_in(feed) {
            return false;
        }
        if let Some(expiry) = access.expires_at {
            match self.effective_date() {
                Some(at) if at <= expiry => {}
                _ => return false,
            }
        }
        self.required_benefits
            .iter()
            .all(|b| access.entitlements.contains(b))
    }

    /// The artifact named `name`.
    pub fn artifact(&self, name: &str) -> Option<&ReleaseArtifact> {
        self.artifacts.iter().find(|a| a.name == name)
    }

    pub fn created_key(&self) -> Vec<u8> {
        KeyBuf::new()
            .i64(self.created_at.timestamp_micros())
            .str(&self.id.to_string())
            .into_vec()
    }

    pub fn version_key(product: ProductId, version: &str) -> UniqueKey {
        UniqueKey::new(RELEASE_VERSION, product.key(), version.as_bytes().to_vec())
    }
}

/// The releases of `releases` that a key with `access` sees on channel `feed` and that
/// `usable` accepts, newest version first.
pub fn visible_newest_first<'a>(
    releases: &'a [Release],
    feed: Channel,
    access: &KeyAccess,
    usable: impl Fn(&Release) -> bool,
) -> Vec<&'a Release> {
    let mut shown: Vec<(semver::Version, &Release)> = releases
        .iter()
        .filter(|r| r.visible_to(feed, access) && usable(r))
        .map(|r| (r.semver(), r))
        .collect();
    shown.sort_by(|a, b| b.0.cmp(&a.0));
    shown.into_iter().map(|(_, r)| r).collect()
}

impl Record for Release {
    crate::record_v1!(Release, "release");
    const INDEXES: &'static [&'static str] = &[RELEASE_OF_PRODUCT, RELEASE_OF_ORG];
    const UNIQUES: &'static [&'static str] = &[RELEASE_VERSION];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![
            IndexEntry::new(
                RELEASE_OF_PRODUCT,
                self.product_id.key(),
                self.created_key(),
            ),
            IndexEntry::new(
                RELEASE_OF_ORG,
                self.organization_id.key(),
                self.created_key(),
            ),
        ]
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![Release::version_key(self.product_id, &self.version)]
    }
}

/// An organization's ed25519 key for its releases' signatures (Sparkle's `SUPublicEDKey`,
/// Tauri's minisign `pubkey`). Separate from the license-signing keys and never rotated:
/// applications embed its public half for good.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateSigningKey {
    pub organization_id: OrganizationId,
    /// The ed25519 private key (RFC 8032 seed, 32 bytes).
    pub seed: Vec<u8>,
    /// The ed25519 public key (32 bytes).
    pub public: Vec<u8>,
    /// minisign's key number (8 random bytes), in every signature it makes.
    pub keynum: [u8; 8],
    pub created_at: DateTime<Utc>,
}

impl Record for UpdateSigningKey {
    crate::record_v1!(UpdateSigningKey, "update_signing_key");

    fn id_key(&self) -> Vec<u8> {
        self.organization_id.key()
    }
}

/// A file of a release as a seller asks for it (the use case checks the platform, the
/// bundle and the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewArtifact {
    pub platform: String,
    pub bundle: String,
    pub file_id: FileId,
}

/// The command that drafts a release (`POST /v1/releases/`): what the seller sent, typed;
/// the use case checks it against the product, its files and benefits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRelease {
    pub product_id: ProductId,
    pub version: String,
    pub channel: Option<String>,
    pub notes: Option<String>,
    pub backdated_to: Option<DateTime<Utc>>,
    pub required_benefits: Vec<BenefitId>,
    pub minimum_system_version: Option<String>,
    pub build: Option<String>,
    pub artifacts: Vec<NewArtifact>,
}

/// The command that changes a release: absent fields stay; `artifacts` only on a draft.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReleaseChange {
    pub channel: Option<String>,
    pub notes: Option<String>,
    pub backdated_to: Option<DateTime<Utc>>,
    pub required_benefits: Option<Vec<BenefitId>>,
    pub minimum_system_version: Option<String>,
    pub build: Option<String>,
    pub artifacts: Option<Vec<NewArtifact>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{at, uuid};

    fn release(version: &str, channel: Channel, published: i64) -> Release {
        Release {
            id: ReleaseId(uuid(published as u128 + 1)),
            organization_id: OrganizationId(uuid(1)),
            product_id: ProductId(uuid(2)),
            version: version.into(),
            channel,
            notes: Some("Fixes".into()),
            status: ReleaseStatus::Published,
            created_at: at(published),
            modified_at: None,
            published_at: Some(at(published)),
            yanked_at: None,
            backdated_to: None,
            required_benefits: Vec::new(),
            minimum_system_version: None,
            build: None,
            artifacts: vec![ReleaseArtifact {
                platform: "linux-x86_64".into(),
                bundle: Bundle::AppImage,
                file_id: FileId(uuid(9)),
                name: format!("App-{version}.AppImage"),
                size: 3,
                sha512: vec![7; 64],
                signatures: Some(ArtifactSignatures {
                    minisign: "untrusted comment: x\n".into(),
                    ed25519: vec![1; 64],
                }),
            }],
        }
    }

    fn versions(rs: &[&Release]) -> Vec<String> {
        rs.iter().map(|r| r.version.clone()).collect()
    }

    #[test]
    fn channels_are_cumulative_and_latest_is_stable() {
        let rs = [
            release("1.0.0", Channel::Stable, 10),
            release("1.1.0-beta.1", Channel::Beta, 20),
            release("1.2.0-alpha.1", Channel::Alpha, 30),
        ];
        let any = KeyAccess::default();
        let all = |c| versions(&visible_newest_first(&rs, c, &any, |_| true));
        assert_eq!(all(Channel::Stable), ["1.0.0"]);
        assert_eq!(all(Channel::Beta), ["1.1.0-beta.1", "1.0.0"]);
        assert_eq!(
            all(Channel::Alpha),
            ["1.2.0-alpha.1", "1.1.0-beta.1", "1.0.0"]
        );
        assert_eq!(Channel::parse_feed("latest"), Some(Channel::Stable));
        assert_eq!(Channel::parse("latest"), None);
        assert_eq!(Channel::parse_feed("nightly"), None);
    }

    #[test]
    fn newest_is_by_semantic_version_not_by_date_nor_text() {
        // 1.10.0 was published before 1.9.0 (a backport): still the newest.
        let rs = [
            release("1.10.0", Channel::Stable, 10),
            release("1.9.0", Channel::Stable, 20),
            release("1.10.0-rc.1", Channel::Stable, 5),
        ];
        let shown = visible_newest_first(&rs, Channel::Stable, &KeyAccess::default(), |_| true);
        assert_eq!(versions(&shown), ["1.10.0", "1.10.0-rc.1", "1.9.0"]);
    }

    #[test]
    fn drafts_and_yanked_releases_are_invisible() {
        let mut draft = release("2.0.0", Channel::Stable, 10);
        draft.status = ReleaseStatus::Draft;
        draft.published_at = None;
        let mut yanked = release("1.5.0", Channel::Stable, 10);
        yanked.status = ReleaseStatus::Yanked;
        let any = KeyAccess::default();
        assert!(!draft.visible_to(Channel::Alpha, &any));
        assert!(!yanked.visible_to(Channel::Alpha, &any));
    }

    #[test]
    fn an_expiring_key_sees_what_was_published_before_its_expiry_even_after_it() {
        let old = release("1.0.0", Channel::Stable, 100);
        let new = release("2.0.0", Channel::Stable, 300);
        let key = KeyAccess {
            expires_at: Some(at(200)),
            entitlements: Vec::new(),
        };
        assert!(old.visible_to(Channel::Stable, &key));
        assert!(!new.visible_to(Channel::Stable, &key));
        // At the expiry exactly: still in.
        let edge = release("1.1.0", Channel::Stable, 200);
        assert!(edge.visible_to(Channel::Stable, &key));
        // A fix backdated before the expiry reaches the key.
        let mut fix = release("2.0.1", Channel::Stable, 400);
        fix.backdated_to = Some(at(150));
        assert!(fix.visible_to(Channel::Stable, &key));
        // A key without expiry sees everything.
        assert!(new.visible_to(Channel::Stable, &KeyAccess::default()));
    }

    #[test]
    fn required_entitlements_must_all_be_granted() {
        let (pro, team) = (BenefitId(uuid(50)), BenefitId(uuid(51)));
        let mut r = release("1.0.0", Channel::Stable, 10);
        r.required_benefits = vec![pro, team];
        let with = |e: Vec<BenefitId>| KeyAccess {
            expires_at: None,
            entitlements: e,
        };
        assert!(!r.visible_to(Channel::Stable, &with(vec![])));
        assert!(!r.visible_to(Channel::Stable, &with(vec![pro])));
        assert!(r.visible_to(Channel::Stable, &with(vec![team, pro])));
    }

    #[test]
    fn versions_parse_as_semver_and_bundles_fit_their_os() {
        assert!(parse_version("1.2.3-beta.1+build.5").is_ok());
        assert!(parse_version("1.2").is_err());
        assert!(parse_version("v1.2.3").is_err());
        assert!(Bundle::Nsis.fits(os_of("windows-x86_64")));
        assert!(!Bundle::Dmg.fits("linux"));
        assert!(Bundle::Zip.fits("darwin"));
        assert_eq!(Bundle::parse("app_tar_gz"), Some(Bundle::AppTarGz));
        assert_eq!(Bundle::parse("exe"), None);
        let r = release("1.0.0", Channel::Stable, 1);
        assert_eq!(r.build_number(), "1.0.0");
    }

    #[test]
    fn records_round_trip_with_their_indexes_and_version_key() {
        let r = release("1.0.0", Channel::Beta, 10);
        let bytes = r.encode().unwrap();
        assert_eq!(Release::decode(1, &bytes).unwrap(), r);
        let names: Vec<&str> = r.index_entries().iter().map(|e| e.index).collect();
        assert_eq!(names, [RELEASE_OF_PRODUCT, RELEASE_OF_ORG]);
        assert_eq!(
            r.unique_keys(),
            vec![Release::version_key(r.product_id, "1.0.0")]
        );
        let k = UpdateSigningKey {
            organization_id: OrganizationId(uuid(1)),
            seed: vec![1; 32],
            public: vec![2; 32],
            keynum: [3; 8],
            created_at: at(0),
        };
        let bytes = k.encode().unwrap();
        assert_eq!(UpdateSigningKey::decode(1, &bytes).unwrap(), k);
    }
}
