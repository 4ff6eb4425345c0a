//! Keys generated in advance for a license-key benefit, without an order (giveaways,
//! bundles): each is a value the seller hands out, which becomes a license key of the
//! customer who claims it (`POST /v1/customer-portal/license-keys/claim`). Until claimed it
//! is no license key: it validates nowhere. Claimed once; the same customer claiming again
//! gets the same key.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::ids::{BenefitId, CustomerId, LicenseKeyId, OrganizationId};
use super::time_key;
use crate::ids::derived_uuid;

crate::typed_id!(pub ClaimableKeyId);

/// Tenant: the organization; the value. Finds a claimable key by the value handed out.
pub const CLAIMABLE_KEY_VALUE: &str = "claimable_key_value";
/// Tenant: the benefit; by creation time.
pub const CLAIMABLE_KEY_BY_BENEFIT: &str = "claimable_key_by_benefit";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimableKey {
    pub id: ClaimableKeyId,
    pub organization_id: OrganizationId,
    pub benefit_id: BenefitId,
    /// The value handed out, which the claimed license key keeps.
    pub key: String,
    pub created_at: DateTime<Utc>,
    /// Set once claimed.
    pub claimed_at: Option<DateTime<Utc>>,
    pub claimed_by: Option<CustomerId>,
}

impl ClaimableKey {
    pub fn value_key(org: OrganizationId, key: &str) -> UniqueKey {
        UniqueKey::new(CLAIMABLE_KEY_VALUE, org.key(), key.as_bytes().to_vec())
    }

    /// The license key a claim makes: its id derives from this one's (never two).
    pub fn license_key_id(&self) -> LicenseKeyId {
        LicenseKeyId(derived_uuid(self.id.0, "claimed"))
    }
}

impl Record for ClaimableKey {
    crate::record_v1!(ClaimableKey, "claimable_key");
    const INDEXES: &'static [&'static str] = &[CLAIMABLE_KEY_BY_BENEFIT];
    const UNIQUES: &'static [&'static str] = &[CLAIMABLE_KEY_VALUE];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            CLAIMABLE_KEY_BY_BENEFIT,
            self.benefit_id.key(),
            time_key(self.created_at),
        )]
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![ClaimableKey::value_key(self.organization_id, &self.key)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{at, hex, uuid};

    #[test]
    fn round_trip_golden_bytes_and_a_derived_license_key_id() {
        let k = ClaimableKey {
            id: ClaimableKeyId(uuid(1)),
            organization_id: OrganizationId(uuid(2)),
            benefit_id: BenefitId(uuid(3)),
            key: "GIFT-1".into(),
            created_at: at(0),
            claimed_at: Some(at(60)),
            claimed_by: Some(CustomerId(uuid(4))),
        };
        let bytes = k.encode().unwrap_or_default();
        assert_eq!(ClaimableKey::decode(1, &bytes).ok(), Some(k.clone()));
        assert_eq!(hex(&bytes), GOLDEN_V1, "claimable key format v1 changed");
        assert_eq!(k.license_key_id(), k.license_key_id());
        assert_ne!(k.license_key_id().0, k.id.0);
        assert_eq!(
            k.unique_keys(),
            vec![ClaimableKey::value_key(k.organization_id, "GIFT-1")]
        );
    }

    const GOLDEN_V1: &str = "\
        10000000000000000000000000000000011000000000000000000000000000000002100000000000000000\
        000000000000000306474946542d3114313937302d30312d30315430303a30303a30305a0114313937302d\
        30312d30315430303a30313a30305a011000000000000000000000000000000004";
}
