//! Organization access tokens (Polar's `OrganizationAccessToken`, `polar_oat_…`): a token
//! that acts as one organization, with the scopes a member gave it. Only the keyed hash of
//! the token is stored (unique, so a bearer token is found by it); the token itself is
//! shown once, when it is created. Listed per organization by creation time. A deleted
//! token keeps its record (until the retention purge) but gives up its hash and its index
//! entry: it can no longer be found, used or listed.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::ids::OrganizationId;
use super::scope::ScopeSet;
use super::time_key;

crate::typed_id!(pub OrganizationAccessTokenId);

/// Unique: the keyed hash of the token.
pub const OAT_TOKEN: &str = "oat_token";
/// An organization's live (not deleted) tokens by creation time.
pub const OAT_BY_ORG: &str = "oat_by_org";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrganizationAccessToken {
    pub id: OrganizationAccessTokenId,
    pub organization_id: OrganizationId,
    pub token_hash: Vec<u8>,
    pub scopes: ScopeSet,
    pub comment: String,
    /// `None`: the token does not expire.
    pub expires_at: Option<DateTime<Utc>>,
    /// Recorded at most once a minute, after the request that used it.
    pub last_used_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub deleted_at: Option<DateTime<Utc>>,
}

impl OrganizationAccessToken {
    pub fn token_key(hash: &[u8]) -> UniqueKey {
        UniqueKey::new(OAT_TOKEN, Vec::new(), hash.to_vec())
    }

    /// Neither deleted nor expired at `now`.
    pub fn is_usable(&self, now: DateTime<Utc>) -> bool {
        self.deleted_at.is_none() && self.expires_at.is_none_or(|e| now < e)
    }
}

impl Record for OrganizationAccessToken {
    crate::record_v1!(OrganizationAccessToken, "organization_access_token");
    const INDEXES: &'static [&'static str] = &[OAT_BY_ORG];
    const UNIQUES: &'static [&'static str] = &[OAT_TOKEN];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        if self.deleted_at.is_some() {
            return Vec::new();
        }
        vec![IndexEntry::new(
            OAT_BY_ORG,
            self.organization_id.key(),
            time_key(self.created_at),
        )]
    }

    /// A deleted token gives up its hash, so it can no longer be looked up.
    fn unique_keys(&self) -> Vec<UniqueKey> {
        if self.deleted_at.is_some() {
            return Vec::new();
        }
        vec![OrganizationAccessToken::token_key(&self.token_hash)]
    }
}

/// A new organization access token, as a member asks for it (scopes it may hold and
/// within the member's own; a lifetime from 1 second to ten years).
#[derive(Debug, Clone, PartialEq)]
pub struct NewOrganizationAccessToken {
    /// The organization named by the request, if any.
    pub organization_id: Option<OrganizationId>,
    pub comment: String,
    pub scopes: ScopeSet,
    /// None: the token does not expire.
    pub expires_in: Option<chrono::TimeDelta>,
}

/// A change of a token's comment or scopes; `None` leaves it as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrganizationAccessTokenChange {
    pub comment: Option<String>,
    pub scopes: Option<ScopeSet>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::scope::Scope;
    use crate::golden::{at, hex, uuid};

    fn full_token() -> OrganizationAccessToken {
        OrganizationAccessToken {
            id: OrganizationAccessTokenId(uuid(1)),
            organization_id: OrganizationId(uuid(2)),
            token_hash: vec![0xab; 32],
            scopes: [Scope::ProductsRead, Scope::LicenseKeysWrite]
                .into_iter()
                .collect(),
            comment: "CI".into(),
            expires_at: Some(at(3600)),
            last_used_at: Some(at(120)),
            created_at: at(0),
            modified_at: Some(at(60)),
            deleted_at: None,
        }
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let token = full_token();
        assert_eq!(
            (
                OrganizationAccessToken::COLLECTION,
                OrganizationAccessToken::VERSION
            ),
            ("organization_access_token", 1)
        );
        let bytes = token.encode().unwrap_or_default();
        assert_eq!(OrganizationAccessToken::decode(1, &bytes).ok(), Some(token));
        assert_eq!(
            hex(&bytes),
            GOLDEN_V1,
            "organization access token format v1 changed"
        );
    }

    #[test]
    fn listed_and_found_until_deleted_and_usable_until_expired() {
        let mut token = full_token();
        assert_eq!(token.index_entries().len(), 1);
        assert_eq!(
            token.unique_keys(),
            vec![OrganizationAccessToken::token_key(&[0xab; 32])]
        );
        assert!(token.is_usable(at(3599)));
        assert!(!token.is_usable(at(3600)));
        token.expires_at = None;
        assert!(token.is_usable(at(1_000_000_000)));
        token.deleted_at = Some(at(10));
        assert!(!token.is_usable(at(11)));
        assert!(token.index_entries().is_empty());
        assert!(token.unique_keys().is_empty());
    }

    const GOLDEN_V1: &str = "\
        1000000000000000000000000000000001100000000000000000000000000000000220ababababababab\
        abababababababababababababababababababababababababfd00000100020000000243490114313937\
        302d30312d30315430313a30303a30305a0114313937302d30312d30315430303a30323a30305a143139\
        37302d30312d30315430303a30303a30305a0114313937302d30312d30315430303a30313a30305a00";
}
