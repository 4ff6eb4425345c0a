use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

use super::ids::{OrganizationId, UserId};
use super::time_key;

/// A user's membership of an organization. It carries the organization's immutable sort
/// fields (creation time, slug) so that a user's organizations list straight from an index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Membership {
    pub user_id: UserId,
    pub organization_id: OrganizationId,
    pub organization_created_at: DateTime<Utc>,
    pub organization_slug: String,
    pub created_at: DateTime<Utc>,
}

pub const MEMBER_ORGS_BY_CREATED: &str = "member_orgs_by_created";
pub const MEMBER_ORGS_BY_SLUG: &str = "member_orgs_by_slug";
pub const ORG_MEMBERS: &str = "org_members";

impl Membership {
    pub fn key(user: UserId, org: OrganizationId) -> Vec<u8> {
        let mut k = user.key();
        k.extend_from_slice(&org.key());
        k
    }
}

impl Record for Membership {
    crate::record_v1!(Membership, "membership");
    const INDEXES: &'static [&'static str] =
        &[MEMBER_ORGS_BY_CREATED, MEMBER_ORGS_BY_SLUG, ORG_MEMBERS];

    fn id_key(&self) -> Vec<u8> {
        Membership::key(self.user_id, self.organization_id)
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![
            IndexEntry::new(
                MEMBER_ORGS_BY_CREATED,
                self.user_id.key(),
                time_key(self.organization_created_at),
            ),
            IndexEntry::new(
                MEMBER_ORGS_BY_SLUG,
                self.user_id.key(),
                KeyBuf::new().str(&self.organization_slug).into_vec(),
            ),
            IndexEntry::new(
                ORG_MEMBERS,
                self.organization_id.key(),
                time_key(self.created_at),
            ),
        ]
    }
}
