use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::ids::{PatId, UserId};
use super::scope::ScopeSet;
use super::time_key;

/// A personal access token. Only the keyed hash of the token is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonalAccessToken {
    pub id: PatId,
    pub user_id: UserId,
    pub token_hash: Vec<u8>,
    pub scopes: ScopeSet,
    pub comment: String,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub deleted_at: Option<DateTime<Utc>>,
}

pub const PAT_TOKEN: &str = "pat_token";
pub const PAT_BY_USER: &str = "pat_by_user";

impl PersonalAccessToken {
    pub fn token_key(hash: &[u8]) -> UniqueKey {
        UniqueKey::new(PAT_TOKEN, Vec::new(), hash.to_vec())
    }

    pub fn is_usable(&self, now: DateTime<Utc>) -> bool {
        self.deleted_at.is_none() && self.expires_at.is_none_or(|e| now < e)
    }
}

impl Record for PersonalAccessToken {
    crate::record_v1!(PersonalAccessToken, "pat");
    const INDEXES: &'static [&'static str] = &[PAT_BY_USER];
    const UNIQUES: &'static [&'static str] = &[PAT_TOKEN];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        if self.deleted_at.is_some() {
            return Vec::new();
        }
        vec![IndexEntry::new(
            PAT_BY_USER,
            self.user_id.key(),
            time_key(self.created_at),
        )]
    }

    /// A deleted token gives up its hash, so it can no longer be looked up.
    fn unique_keys(&self) -> Vec<UniqueKey> {
        if self.deleted_at.is_some() {
            return Vec::new();
        }
        vec![PersonalAccessToken::token_key(&self.token_hash)]
    }
}
