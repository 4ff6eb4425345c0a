use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

use super::ids::{BenefitId, FileId, MeterId, OrganizationId};
use super::metadata::Metadata;

/// Something a product grants its buyers. Only the kinds that need no outside service can
/// be created here: custom notes, ads, license keys, feature flags and downloadables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Benefit {
    pub id: BenefitId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub description: String,
    pub selectable: bool,
    pub deletable: bool,
    pub properties: BenefitProperties,
    pub deleted_at: Option<DateTime<Utc>>,
    /// The seller's key-value pairs (from format version 2).
    pub metadata: Metadata,
    /// Who sees it in the customer portal (from format version 5; `Public` before).
    pub visibility: Visibility,
}

/// Polar's `BenefitVisibility`. Only a `feature_flag` benefit may be set to another than
/// `public` (`visibility_configurable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Visibility {
    Draft,
    Private,
    #[default]
    Public,
}

impl Visibility {
    pub const ALL: &'static [(&'static str, Visibility)] = &[
        ("draft", Visibility::Draft),
        ("private", Visibility::Private),
        ("public", Visibility::Public),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Draft => "draft",
            Visibility::Private => "private",
            Visibility::Public => "public",
        }
    }

    pub fn parse(s: &str) -> Option<Visibility> {
        Visibility::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, v)| *v)
    }
}

/// A benefit as format version 1 stored it: without metadata.
#[derive(Serialize, Deserialize)]
struct BenefitV1 {
    id: BenefitId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    description: String,
    selectable: bool,
    deletable: bool,
    properties: PropertiesV2,
    deleted_at: Option<DateTime<Utc>>,
}

/// A benefit as format version 2 stored it: license-key properties without
/// `allow_customer_rotation`.
#[derive(Serialize, Deserialize)]
struct BenefitV2 {
    id: BenefitId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    description: String,
    selectable: bool,
    deletable: bool,
    properties: PropertiesV2,
    deleted_at: Option<DateTime<Utc>>,
    metadata: Metadata,
}

/// A benefit as format version 3 stored it: license-key properties without `grace_days`.
#[derive(Serialize, Deserialize)]
struct BenefitV3 {
    id: BenefitId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    description: String,
    selectable: bool,
    deletable: bool,
    properties: PropertiesV3,
    deleted_at: Option<DateTime<Utc>>,
    metadata: Metadata,
}

/// [`BenefitProperties`] in format version 3.
#[derive(Serialize, Deserialize)]
enum PropertiesV3 {
    Custom { note: Option<String> },
    Ads { image_height: i64, image_width: i64 },
    LicenseKeys(LicenseKeyPropertiesV3),
}

#[derive(Serialize, Deserialize)]
struct LicenseKeyPropertiesV3 {
    prefix: Option<String>,
    expires: Option<KeyExpiry>,
    activations: Option<KeyActivationsV4>,
    limit_usage: Option<i64>,
    allow_customer_rotation: bool,
}

/// Benefits stored before `grace_days` get the default grace.
impl From<PropertiesV3> for BenefitProperties {
    fn from(p: PropertiesV3) -> Self {
        match p {
            PropertiesV3::Custom { note } => BenefitProperties::Custom { note },
            PropertiesV3::Ads {
                image_height,
                image_width,
            } => BenefitProperties::Ads {
                image_height,
                image_width,
            },
            PropertiesV3::LicenseKeys(k) => BenefitProperties::LicenseKeys(LicenseKeyProperties {
                prefix: k.prefix,
                expires: k.expires,
                activations: k.activations.map(KeyActivations::from),
                limit_usage: k.limit_usage,
                allow_customer_rotation: k.allow_customer_rotation,
                grace_days: DEFAULT_GRACE_DAYS,
                quantity: KeyQuantity::default(),
            }),
        }
    }
}

/// A benefit as format version 4 stored it: no visibility, no `feature_flag`, activations
/// without `allow_replacement`, license keys without a quantity rule.
#[derive(Serialize, Deserialize)]
struct BenefitV4 {
    id: BenefitId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    description: String,
    selectable: bool,
    deletable: bool,
    properties: PropertiesV4,
    deleted_at: Option<DateTime<Utc>>,
    metadata: Metadata,
}

/// [`BenefitProperties`] in format version 4.
#[derive(Serialize, Deserialize)]
enum PropertiesV4 {
    Custom { note: Option<String> },
    Ads { image_height: i64, image_width: i64 },
    LicenseKeys(LicenseKeyPropertiesV4),
}

#[derive(Serialize, Deserialize)]
struct LicenseKeyPropertiesV4 {
    prefix: Option<String>,
    expires: Option<KeyExpiry>,
    activations: Option<KeyActivationsV4>,
    limit_usage: Option<i64>,
    allow_customer_rotation: bool,
    grace_days: u32,
}

/// [`KeyActivations`] before format version 5: no replacement.
#[derive(Serialize, Deserialize)]
struct KeyActivationsV4 {
    limit: i64,
    enable_customer_admin: bool,
}

impl From<KeyActivationsV4> for KeyActivations {
    fn from(a: KeyActivationsV4) -> Self {
        KeyActivations {
            limit: a.limit,
            enable_customer_admin: a.enable_customer_admin,
            allow_replacement: false,
        }
    }
}

impl From<PropertiesV4> for BenefitProperties {
    fn from(p: PropertiesV4) -> Self {
        match p {
            PropertiesV4::Custom { note } => BenefitProperties::Custom { note },
            PropertiesV4::Ads {
                image_height,
                image_width,
            } => BenefitProperties::Ads {
                image_height,
                image_width,
            },
            PropertiesV4::LicenseKeys(k) => BenefitProperties::LicenseKeys(LicenseKeyProperties {
                prefix: k.prefix,
                expires: k.expires,
                activations: k.activations.map(KeyActivations::from),
                limit_usage: k.limit_usage,
                allow_customer_rotation: k.allow_customer_rotation,
                grace_days: k.grace_days,
                quantity: KeyQuantity::default(),
            }),
        }
    }
}

/// [`BenefitProperties`] before format version 3.
#[derive(Serialize, Deserialize)]
enum PropertiesV2 {
    Custom { note: Option<String> },
    Ads { image_height: i64, image_width: i64 },
    LicenseKeys(LicenseKeyPropertiesV2),
}

#[derive(Serialize, Deserialize)]
struct LicenseKeyPropertiesV2 {
    prefix: Option<String>,
    expires: Option<KeyExpiry>,
    activations: Option<KeyActivationsV4>,
    limit_usage: Option<i64>,
}

/// Keys of benefits stored before the setting existed could always be rotated by their
/// customers: they still can.
impl From<PropertiesV2> for BenefitProperties {
    fn from(p: PropertiesV2) -> Self {
        match p {
            PropertiesV2::Custom { note } => BenefitProperties::Custom { note },
            PropertiesV2::Ads {
                image_height,
                image_width,
            } => BenefitProperties::Ads {
                image_height,
                image_width,
            },
            PropertiesV2::LicenseKeys(k) => BenefitProperties::LicenseKeys(LicenseKeyProperties {
                prefix: k.prefix,
                expires: k.expires,
                activations: k.activations.map(KeyActivations::from),
                limit_usage: k.limit_usage,
                allow_customer_rotation: true,
                grace_days: DEFAULT_GRACE_DAYS,
                quantity: KeyQuantity::default(),
            }),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum BenefitProperties {
    Custom {
        note: Option<String>,
    },
    Ads {
        image_height: i64,
        image_width: i64,
    },
    LicenseKeys(LicenseKeyProperties),
    /// Polar's `feature_flag` (from format version 5): no properties; what it unlocks is
    /// the benefit's metadata.
    FeatureFlag,
    /// Polar's `downloadables` (from format version 6): files the buyers may download.
    Downloadables(DownloadablesProperties),
    /// Polar's `meter_credit` (from format version 7, appended: earlier records read as
    /// before): units of a meter credited to the customer at each grant and renewal.
    MeterCredit(MeterCreditProperties),
}

/// What a `meter_credit` benefit credits: `units` (1 to `i32::MAX`, Polar's `Int32 > 0`)
/// of meter `meter_id` per purchase or period; with `rollover`, the units left at the end
/// of a period carry over to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeterCreditProperties {
    pub meter_id: MeterId,
    pub units: u32,
    pub rollover: bool,
}

/// The most units a `meter_credit` benefit credits (Polar's `Int32`).
pub const MAX_METER_CREDIT_UNITS: u32 = i32::MAX as u32;

/// The files of a `downloadables` benefit, in the seller's order, and when each archived
/// one was archived. Polar's wire form of `archived` is `{file id: bool}`; keeping the time
/// lets the grants stay derived: a grant made before a file was archived keeps it (Polar
/// keeps the rows it granted), a later one does not get it (Polar grants active files only).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DownloadablesProperties {
    pub files: Vec<FileId>,
    pub archived: Vec<(FileId, DateTime<Utc>)>,
}

impl DownloadablesProperties {
    /// When `file` was archived, if it is.
    pub fn archived_at(&self, file: FileId) -> Option<DateTime<Utc>> {
        self.archived
            .iter()
            .find(|(f, _)| *f == file)
            .map(|(_, at)| *at)
    }

    /// Polar's `get_active_file_ids`: the files, in order, without the archived ones.
    pub fn active_files(&self) -> Vec<FileId> {
        self.files
            .iter()
            .copied()
            .filter(|f| self.archived_at(*f).is_none())
            .collect()
    }

    /// The files a grant made at `granted_at` holds: every file not archived by then.
    pub fn files_for(&self, granted_at: DateTime<Utc>) -> Vec<FileId> {
        self.files
            .iter()
            .copied()
            .filter(|f| self.archived_at(*f).is_none_or(|at| at > granted_at))
            .collect()
    }

    /// The properties a body asks for (`files`, and `archived` as `{id: bool}`), where
    /// `previous` are the benefit's current ones (`None` at creation): a file archived
    /// before keeps its time, a newly archived one is archived `now`. Only files of the
    /// benefit may be archived; other ids of `archived` are dropped.
    pub fn from_wire(
        files: Vec<FileId>,
        archived: &[(FileId, bool)],
        previous: Option<&DownloadablesProperties>,
        now: DateTime<Utc>,
    ) -> DownloadablesProperties {
        let mut kept = Vec::new();
        for f in &files {
            let wanted = archived
                .iter()
                .rev()
                .find(|(id, _)| id == f)
                .map(|(_, a)| *a);
            if wanted == Some(true) && !kept.iter().any(|(k, _)| k == f) {
                let at = previous.and_then(|p| p.archived_at(*f)).unwrap_or(now);
                kept.push((*f, at));
            }
        }
        DownloadablesProperties {
            files,
            archived: kept,
        }
    }
}

/// [`BenefitProperties`] in format version 5: before downloadables.
#[derive(Serialize, Deserialize)]
enum PropertiesV5 {
    Custom { note: Option<String> },
    Ads { image_height: i64, image_width: i64 },
    LicenseKeys(LicenseKeyProperties),
    FeatureFlag,
}

impl From<PropertiesV5> for BenefitProperties {
    fn from(p: PropertiesV5) -> Self {
        match p {
            PropertiesV5::Custom { note } => BenefitProperties::Custom { note },
            PropertiesV5::Ads {
                image_height,
                image_width,
            } => BenefitProperties::Ads {
                image_height,
                image_width,
            },
            PropertiesV5::LicenseKeys(k) => BenefitProperties::LicenseKeys(k),
            PropertiesV5::FeatureFlag => BenefitProperties::FeatureFlag,
        }
    }
}

/// A benefit as format version 5 stored it: no downloadables.
#[derive(Serialize, Deserialize)]
struct BenefitV5 {
    id: BenefitId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    description: String,
    selectable: bool,
    deletable: bool,
    properties: PropertiesV5,
    deleted_at: Option<DateTime<Utc>>,
    metadata: Metadata,
    visibility: Visibility,
}

/// The stored code of each type ([`BenefitType::code`]) is its position here: append only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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

impl BenefitType {
    /// Polar's declaration order, which its lists sort by.
    pub const ALL: &'static [(&'static str, BenefitType)] = &[
        ("custom", BenefitType::Custom),
        ("ads", BenefitType::Ads),
        ("discord", BenefitType::Discord),
        ("github_repository", BenefitType::GithubRepository),
        ("downloadables", BenefitType::Downloadables),
        ("license_keys", BenefitType::LicenseKeys),
        ("feature_flag", BenefitType::FeatureFlag),
        ("meter_credit", BenefitType::MeterCredit),
    ];

    pub fn as_str(self) -> &'static str {
        BenefitType::ALL
            .iter()
            .find(|(_, t)| *t == self)
            .map(|(n, _)| *n)
            .unwrap_or("custom")
    }

    pub fn code(self) -> u8 {
        self as u8
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LicenseKeyProperties {
    pub prefix: Option<String>,
    pub expires: Option<KeyExpiry>,
    pub activations: Option<KeyActivations>,
    pub limit_usage: Option<i64>,
    /// Whether the customer may give a key a new value in the customer portal (from
    /// format version 3; true unless the seller turns it off, as Polar always allows).
    pub allow_customer_rotation: bool,
    /// For a key granted by a subscription: how many days past the paid period it keeps
    /// validating while a renewal is retried (from format version 4;
    /// [`DEFAULT_GRACE_DAYS`] unless set).
    pub grace_days: u32,
    /// What a purchase of several units grants (from format version 5).
    pub quantity: KeyQuantity,
}

/// What a purchase of N units (a seat-based price) grants: one key with N times the
/// activation limit, or N keys each with the limit. A purchase of one unit grants one key
/// either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum KeyQuantity {
    #[default]
    OneKey,
    KeyPerUnit,
}

impl KeyQuantity {
    pub const ALL: &'static [(&'static str, KeyQuantity)] = &[
        ("one_key", KeyQuantity::OneKey),
        ("key_per_unit", KeyQuantity::KeyPerUnit),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            KeyQuantity::OneKey => "one_key",
            KeyQuantity::KeyPerUnit => "key_per_unit",
        }
    }

    pub fn parse(s: &str) -> Option<KeyQuantity> {
        KeyQuantity::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, v)| *v)
    }
}

/// The grace of a subscription's keys when the seller sets none: a renewal declined on
/// the period's last day is retried after [`crate::subscription::RENEWAL_RETRY_DELAY`]
/// (3 days), and the key keeps working until that retry.
pub const DEFAULT_GRACE_DAYS: u32 = 3;
/// The longest grace a benefit may give (the dunning period is 9 days).
pub const MAX_GRACE_DAYS: u32 = 30;

impl Default for LicenseKeyProperties {
    fn default() -> Self {
        Self {
            prefix: None,
            expires: None,
            activations: None,
            limit_usage: None,
            allow_customer_rotation: true,
            grace_days: DEFAULT_GRACE_DAYS,
            quantity: KeyQuantity::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyExpiry {
    pub ttl: i64,
    pub timeframe: Timeframe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Timeframe {
    Year,
    Month,
    Day,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyActivations {
    pub limit: i64,
    pub enable_customer_admin: bool,
    /// Whether `activate` at the limit may free a live activation named by `replace`
    /// (from format version 5; false before).
    pub allow_replacement: bool,
}

impl BenefitProperties {
    pub fn kind(&self) -> BenefitType {
        match self {
            BenefitProperties::Custom { .. } => BenefitType::Custom,
            BenefitProperties::Ads { .. } => BenefitType::Ads,
            BenefitProperties::LicenseKeys(_) => BenefitType::LicenseKeys,
            BenefitProperties::FeatureFlag => BenefitType::FeatureFlag,
            BenefitProperties::Downloadables(_) => BenefitType::Downloadables,
            BenefitProperties::MeterCredit(_) => BenefitType::MeterCredit,
        }
    }
}

pub const BENEFIT_BY_TYPE: &str = "benefit_by_type";
pub const BENEFIT_OF_TYPE: &str = "benefit_of_type";

impl Benefit {
    pub fn kind(&self) -> BenefitType {
        self.properties.kind()
    }

    fn sort_key(&self) -> Vec<u8> {
        KeyBuf::new()
            .u8(self.kind().code())
            .i64(self.created_at.timestamp_micros())
            .into_vec()
    }

    pub fn type_tenant(org: OrganizationId, kind: BenefitType) -> Vec<u8> {
        let mut t = org.key();
        t.push(kind.code());
        t
    }
}

impl Record for Benefit {
    const COLLECTION: &'static str = "benefit";
    /// Version 7 may hold `meter_credit` properties (a variant appended to
    /// [`BenefitProperties`]) in version 6's layout.
    const VERSION: u16 = 7;

    fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
        match version {
            1 => {
                let v1: BenefitV1 = tollgate_storage::codec::decode(Self::COLLECTION, 1, payload)?;
                Ok(Benefit {
                    id: v1.id,
                    organization_id: v1.organization_id,
                    created_at: v1.created_at,
                    modified_at: v1.modified_at,
                    description: v1.description,
                    selectable: v1.selectable,
                    deletable: v1.deletable,
                    properties: v1.properties.into(),
                    deleted_at: v1.deleted_at,
                    metadata: Metadata::default(),
                    visibility: Visibility::Public,
                })
            }
            2 => {
                let v2: BenefitV2 = tollgate_storage::codec::decode(Self::COLLECTION, 2, payload)?;
                Ok(Benefit {
                    id: v2.id,
                    organization_id: v2.organization_id,
                    created_at: v2.created_at,
                    modified_at: v2.modified_at,
                    description: v2.description,
                    selectable: v2.selectable,
                    deletable: v2.deletable,
                    properties: v2.properties.into(),
                    deleted_at: v2.deleted_at,
                    metadata: v2.metadata,
                    visibility: Visibility::Public,
                })
            }
            3 => {
                let v3: BenefitV3 = tollgate_storage::codec::decode(Self::COLLECTION, 3, payload)?;
                Ok(Benefit {
                    id: v3.id,
                    organization_id: v3.organization_id,
                    created_at: v3.created_at,
                    modified_at: v3.modified_at,
                    description: v3.description,
                    selectable: v3.selectable,
                    deletable: v3.deletable,
                    properties: v3.properties.into(),
                    deleted_at: v3.deleted_at,
                    metadata: v3.metadata,
                    visibility: Visibility::Public,
                })
            }
            4 => {
                let v4: BenefitV4 = tollgate_storage::codec::decode(Self::COLLECTION, 4, payload)?;
                Ok(Benefit {
                    id: v4.id,
                    organization_id: v4.organization_id,
                    created_at: v4.created_at,
                    modified_at: v4.modified_at,
                    description: v4.description,
                    selectable: v4.selectable,
                    deletable: v4.deletable,
                    properties: v4.properties.into(),
                    deleted_at: v4.deleted_at,
                    metadata: v4.metadata,
                    visibility: Visibility::Public,
                })
            }
            5 => {
                let v5: BenefitV5 = tollgate_storage::codec::decode(Self::COLLECTION, 5, payload)?;
                Ok(Benefit {
                    id: v5.id,
                    organization_id: v5.organization_id,
                    created_at: v5.created_at,
                    modified_at: v5.modified_at,
                    description: v5.description,
                    selectable: v5.selectable,
                    deletable: v5.deletable,
                    properties: v5.properties.into(),
                    deleted_at: v5.deleted_at,
                    metadata: v5.metadata,
                    visibility: v5.visibility,
                })
            }
            6 | 7 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    /// Its changes are webhook events.
    const FEED: bool = true;
    const INDEXES: &'static [&'static str] = &[BENEFIT_BY_TYPE, BENEFIT_OF_TYPE];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    /// Deleted benefits leave every list. Both indexes sort by (type, created_at), Polar's
    /// order; the second is split by type for the `type` filter.
    fn index_entries(&self) -> Vec<IndexEntry> {
        if self.deleted_at.is_some() {
            return Vec::new();
        }
        vec![
            IndexEntry::new(BENEFIT_BY_TYPE, self.organization_id.key(), self.sort_key()),
            IndexEntry::new(
                BENEFIT_OF_TYPE,
                Benefit::type_tenant(self.organization_id, self.kind()),
                self.sort_key(),
            ),
        ]
    }
}

/// A benefit to create (`POST /v1/benefits/`), its fields checked by the adapter that
/// read it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewBenefit {
    /// `None`: the organization of the subject's token.
    pub organization_id: Option<uuid::Uuid>,
    pub description: String,
    pub properties: BenefitProperties,
    pub metadata: Metadata,
    /// `Public` unless a feature flag's body names another.
    pub visibility: Visibility,
}

/// A change of a benefit (`PATCH /v1/benefits/{id}`): what is `None` stays. `kind` must be
/// the benefit's.
#[derive(Debug, Clone, PartialEq)]
pub struct BenefitChange {
    pub kind: BenefitType,
    pub description: Option<String>,
    pub properties: Option<BenefitProperties>,
    /// The new license-key properties name whether customers may rotate their keys (else
    /// the benefit's setting stays).
    pub rotation_given: bool,
    /// The new license-key properties name the grace days (else the benefit's stay).
    pub grace_given: bool,
    /// The new license-key properties name the quantity rule (else the benefit's stays).
    pub quantity_given: bool,
    pub metadata: Option<Metadata>,
    /// A feature flag's new visibility (only a feature flag's change names one).
    pub visibility: Option<Visibility>,
}

#[cfg(test)]
#[path = "benefit_tests.rs"]
mod tests;
