//! When a record of a short-lived kind stops being of any use, so that the retention purge
//! (`src/retention.rs`) can remove it, with its index entries and unique keys, once
//! `retention.grace_hours` have passed since.

use chrono::{DateTime, Utc};
use tollgate_storage::Record;

use super::customer_session::{CustomerSession, CustomerSessionCode};
use super::oauth2::{AuthorizationCode, BrowserSession, OAuth2Token, SpentAuthorizationCode};
use super::organization_access_token::OrganizationAccessToken;
use super::pat::PersonalAccessToken;

/// A record that is useless from some moment on.
pub trait Expiring: Record + Clone {
    /// Since when the record is of no use; `None` while it may still be used.
    fn dead_since(&self) -> Option<DateTime<Utc>>;
}

/// Codes are removed when exchanged; an unused one is dead once it expires (and is purged
/// without the grace period: nothing can use it).
impl Expiring for AuthorizationCode {
    fn dead_since(&self) -> Option<DateTime<Utc>> {
        Some(self.expires_at)
    }
}

/// A spent code is of use until the code would have expired (a replay then still revokes
/// its tokens); the grace period keeps recognising replays a while longer.
impl Expiring for SpentAuthorizationCode {
    fn dead_since(&self) -> Option<DateTime<Utc>> {
        Some(self.expires_at)
    }
}

impl Expiring for BrowserSession {
    fn dead_since(&self) -> Option<DateTime<Utc>> {
        Some(self.expires_at)
    }
}

/// A sign-in code is dead once it expires or wore out (a used one is deleted at once).
impl Expiring for CustomerSessionCode {
    fn dead_since(&self) -> Option<DateTime<Utc>> {
        Some(if self.failures >= Self::MAX_FAILURES {
            self.created_at
        } else {
            self.expires_at
        })
    }
}

impl Expiring for CustomerSession {
    fn dead_since(&self) -> Option<DateTime<Utc>> {
        Some(self.expires_at)
    }
}

/// A deleted token at once; an expired one once it expires; one without expiry never.
impl Expiring for PersonalAccessToken {
    fn dead_since(&self) -> Option<DateTime<Utc>> {
        match (self.deleted_at, self.expires_at) {
            (Some(deleted), Some(expires)) => Some(deleted.min(expires)),
            (deleted, expires) => deleted.or(expires),
        }
    }
}

/// As a personal access token: a deleted token at once, an expired one once it expires.
impl Expiring for OrganizationAccessToken {
    fn dead_since(&self) -> Option<DateTime<Utc>> {
        match (self.deleted_at, self.expires_at) {
            (Some(deleted), Some(expires)) => Some(deleted.min(expires)),
            (deleted, expires) => deleted.or(expires),
        }
    }
}

/// A row dies with its revocation. A rotated row still holds a usable access token until
/// it expires (its refresh token was exchanged); a row without a refresh token dies when
/// its access token expires; a live refresh token does not expire, so neither does its
/// row. Revoked and rotated rows keep their hashes during the grace period, so that a
/// replayed refresh token is still recognised (and revokes its family) meanwhile.
impl Expiring for OAuth2Token {
    fn dead_since(&self) -> Option<DateTime<Utc>> {
        let revoked = match (self.access_revoked_at, self.refresh_revoked_at) {
            (Some(a), Some(r)) => Some(a.min(r)),
            (a, r) => a.or(r),
        };
        if revoked.is_some() {
            return revoked;
        }
        match (self.rotated_at, &self.refresh_token_hash) {
            (Some(rotated), _) => Some(rotated.max(self.expires_at)),
            (None, None) => Some(self.expires_at),
            (None, Some(_)) => None,
        }
    }
}

/// Whether a record dead since `dead_since` may be purged at `now` after `grace`.
pub fn purgeable(
    dead_since: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    grace: chrono::Duration,
) -> bool {
    dead_since.is_some_and(|t| t.checked_add_signed(grace).is_some_and(|end| end <= now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{OAuth2TokenId, PatId, TokenFamilyId, UserId};
    use crate::domain::oauth2::OAuthSub;
    use crate::domain::scope::ScopeSet;
    use chrono::{Duration, TimeZone};

    fn t(h: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).unwrap() + Duration::hours(h)
    }

    fn token() -> OAuth2Token {
        let user = UserId::new();
        OAuth2Token {
            id: OAuth2TokenId::new(),
            family: TokenFamilyId::new(),
            client_id: "c".into(),
            sub: OAuthSub::User(user),
            user_id: user,
            scopes: ScopeSet::empty(),
            access_token_hash: vec![1],
            refresh_token_hash: Some(vec![2]),
            issued_at: t(0),
            expires_at: t(1),
            auth_time: t(0),
            access_revoked_at: None,
            refresh_revoked_at: None,
            rotated_at: None,
        }
    }

    #[test]
    fn oauth_tokens_die_with_revocation_rotation_or_expiry_without_refresh() {
        let live = token();
        assert_eq!(
            live.dead_since(),
            None,
            "a live refresh token keeps its row"
        );
        let mut revoked = live.clone();
        revoked.refresh_revoked_at = Some(t(3));
        revoked.access_revoked_at = Some(t(2));
        assert_eq!(revoked.dead_since(), Some(t(2)));
        let mut rotated = live.clone();
        rotated.rotated_at = Some(t(0));
        assert_eq!(
            rotated.dead_since(),
            Some(t(1)),
            "usable until the access expires"
        );
        let mut access_only = live;
        access_only.refresh_token_hash = None;
        assert_eq!(access_only.dead_since(), Some(t(1)));
    }

    #[test]
    fn pats_die_when_deleted_or_expired() {
        let mut pat = PersonalAccessToken {
            id: PatId::new(),
            user_id: UserId::new(),
            token_hash: vec![1],
            scopes: ScopeSet::empty(),
            comment: String::new(),
            expires_at: None,
            last_used_at: None,
            created_at: t(0),
            modified_at: None,
            deleted_at: None,
        };
        assert_eq!(pat.dead_since(), None);
        pat.expires_at = Some(t(10));
        assert_eq!(pat.dead_since(), Some(t(10)));
        pat.deleted_at = Some(t(2));
        assert_eq!(pat.dead_since(), Some(t(2)));
    }

    #[test]
    fn organization_tokens_die_when_deleted_or_expired() {
        use crate::domain::ids::OrganizationId;
        use crate::domain::organization_access_token::OrganizationAccessTokenId;
        let mut oat = OrganizationAccessToken {
            id: OrganizationAccessTokenId::new(),
            organization_id: OrganizationId::new(),
            token_hash: vec![1],
            scopes: ScopeSet::empty(),
            comment: String::new(),
            expires_at: None,
            last_used_at: None,
            created_at: t(0),
            modified_at: None,
            deleted_at: None,
        };
        assert_eq!(oat.dead_since(), None);
        oat.expires_at = Some(t(10));
        assert_eq!(oat.dead_since(), Some(t(10)));
        oat.deleted_at = Some(t(2));
        assert_eq!(oat.dead_since(), Some(t(2)));
    }

    #[test]
    fn only_records_dead_for_the_whole_grace_period_are_purgeable() {
        let grace = Duration::hours(24);
        assert!(!purgeable(None, t(100), grace));
        assert!(!purgeable(Some(t(0)), t(23), grace));
        assert!(purgeable(Some(t(0)), t(24), grace));
        assert!(!purgeable(Some(t(0)), t(-5), grace));
    }
}
