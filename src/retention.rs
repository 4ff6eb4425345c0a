//! The retention purge: every `retention.interval_secs`, records of short-lived kinds that
//! have been of no use for `retention.grace_hours` (see
//! `tollgate_actors::domain::retention::Expiring`) are deleted, with their index entries
//! and unique keys, in batches that each wait for durability. A record changed meanwhile
//! (its revision moved on) is left for the next purge. Expired `Idempotency-Key` answers
//! go in the same pass.
//!
//! The customer portal's records (`tollgate_actors::domain::portal_link`) go too: a
//! recovery link once it would have expired, used or not (a used one is kept until then,
//! so a replayed fan-out cannot write it again alive), plus the grace period; an e-mail
//! change once its code expired; a card setup the buyer never confirmed
//! [`PAYMENT_SETUP_TTL`] after it began, plus the grace period.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use tollgate_actors::domain::customer_session::{CustomerSession, CustomerSessionCode};
use tollgate_actors::domain::oauth2::{
    AuthorizationCode, BrowserSession, OAuth2Token, SpentAuthorizationCode,
};
use tollgate_actors::domain::organization_access_token::OrganizationAccessToken;
use tollgate_actors::domain::pat::PersonalAccessToken;
use tollgate_actors::domain::portal_link::{EmailChange, PaymentSetup, RecoveryLink};
use tollgate_actors::domain::retention::{purgeable, Expiring};
use tollgate_storage::{Batch, Expect, Record, StorageError};

use crate::error::ApiError;
use crate::state::AppState;

/// Deletes per batch: bounded so that one purge never holds the store for long.
const BATCH: usize = 256;

/// How long a card setup waits for the buyer's confirmation (3-D Secure is a matter of
/// minutes; the processor's setup is abandoned long before).
pub const PAYMENT_SETUP_TTL: Duration = Duration::days(1);

/// How many records of each kind one purge removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PurgeReport {
    pub authorization_codes: u64,
    /// Exchanged codes kept to recognise a replay.
    pub spent_authorization_codes: u64,
    pub browser_sessions: u64,
    pub customer_sessions: u64,
    /// Expired or worn-out portal sign-in codes.
    pub customer_session_codes: u64,
    pub oauth2_tokens: u64,
    pub personal_access_tokens: u64,
    pub organization_access_tokens: u64,
    /// Stored answers of expired `Idempotency-Key`s.
    pub idempotency_keys: u64,
    /// Links of "payment failed" e-mails, used or not, past their expiry.
    pub recovery_links: u64,
    /// Card setups never confirmed.
    pub payment_setups: u64,
    /// E-mail changes whose code expired.
    pub email_changes: u64,
}

impl PurgeReport {
    pub fn total(&self) -> u64 {
        self.authorization_codes
            + self.spent_authorization_codes
            + self.browser_sessions
            + self.customer_sessions
            + self.customer_session_codes
            + self.oauth2_tokens
            + self.personal_access_tokens
            + self.organization_access_tokens
            + self.idempotency_keys
            + self.recovery_links
            + self.payment_setups
            + self.email_changes
    }
}

/// Runs one purge at `state.now()`.
pub async fn purge(state: &AppState) -> Result<PurgeReport, ApiError> {
    let hours = i64::try_from(state.settings.retention.grace_hours).unwrap_or(i64::MAX);
    let grace = Duration::try_hours(hours).unwrap_or(Duration::MAX);
    Ok(PurgeReport {
        // An unexchanged code is of no use once expired: no grace.
        authorization_codes: purge_kind::<AuthorizationCode>(state, Duration::zero()).await?,
        spent_authorization_codes: purge_kind::<SpentAuthorizationCode>(state, grace).await?,
        browser_sessions: purge_kind::<BrowserSession>(state, grace).await?,
        customer_sessions: purge_kind::<CustomerSession>(state, grace).await?,
        // Like authorization codes: of no use once dead.
        customer_session_codes: purge_kind::<CustomerSessionCode>(state, Duration::zero()).await?,
        oauth2_tokens: purge_kind::<OAuth2Token>(state, grace).await?,
        personal_access_tokens: purge_kind::<PersonalAccessToken>(state, grace).await?,
        organization_access_tokens: purge_kind::<OrganizationAccessToken>(state, grace).await?,
        idempotency_keys: crate::idempotency::purge_expired(state).await? as u64,
        recovery_links: purge_by::<RecoveryLink>(state, grace, |l| Some(l.expires_at)).await?,
        payment_setups: purge_by::<PaymentSetup>(state, grace, |s| {
            Some(s.created_at + PAYMENT_SETUP_TTL)
        })
        .await?,
        // Like a sign-in code: of no use once expired (a used one is deleted at once).
        email_changes: purge_by::<EmailChange>(state, Duration::zero(), |c| Some(c.expires_at))
            .await?,
    })
}

async fn purge_kind<R: Expiring>(state: &AppState, grace: Duration) -> Result<u64, StorageError> {
    purge_by::<R>(state, grace, R::dead_since).await
}

/// Deletes the records of a kind dead (`dead_since`) for `grace` by now: a walk over the
/// kind in chunks of [`BATCH`] records (never the whole collection in memory), each
/// chunk's dead ones deleted in one durable batch, other tasks served between chunks.
async fn purge_by<R: Record>(
    state: &AppState,
    grace: Duration,
    dead_since: impl Fn(&R) -> Option<DateTime<Utc>>,
) -> Result<u64, StorageError> {
    let now = state.now();
    let mut purged = 0;
    let mut after: Option<Vec<u8>> = None;
    loop {
        let chunk = state.store.scan_chunk::<R>(after.as_deref(), BATCH).await?;
        let Some(last) = chunk.last() else {
            break;
        };
        after = Some(last.value.id_key());
        let doomed: Vec<(Vec<u8>, u64)> = chunk
            .iter()
            .filter(|stored| purgeable(dead_since(&stored.value), now, grace))
            .map(|stored| (stored.value.id_key(), stored.rev))
            .collect();
        purged += delete_all::<R>(state, &doomed).await?;
        if chunk.len() < BATCH {
            break;
        }
        tokio::task::yield_now().await;
    }
    Ok(purged)
}

/// Deletes records at the revisions read, in one durable batch; a record changed since
/// (its revision moved on) stays, for the next purge to judge. Returns how many went.
pub(crate) async fn delete_all<R: Record>(
    state: &AppState,
    doomed: &[(Vec<u8>, u64)],
) -> Result<u64, StorageError> {
    if doomed.is_empty() {
        return Ok(0);
    }
    let mut batch = Batch::new();
    for (id, rev) in doomed {
        batch.delete::<R>(id, Expect::Rev(*rev));
    }
    match state.store.commit_durable(&batch).await {
        Ok(_) => Ok(doomed.len() as u64),
        // One record changed since it was read: this chunk one by one.
        Err(StorageError::Conflict { .. }) => {
            let mut purged = 0;
            for (id, rev) in doomed {
                let mut one = Batch::new();
                one.delete::<R>(id, Expect::Rev(*rev));
                match state.store.commit_durable(&one).await {
                    Ok(_) => purged += 1,
                    Err(StorageError::Conflict { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(purged)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing;
    use crate::domain::ids::{CustomerId, OrganizationId, SubscriptionId};

    async fn put<R: Record>(state: &AppState, r: &R) {
        let mut batch = Batch::new();
        batch.put(r, Expect::Absent).unwrap();
        state.store.commit_durable(&batch).await.unwrap();
    }

    async fn exists<R: Record>(state: &AppState, r: &R) -> bool {
        state.store.get::<R>(&r.id_key()).await.unwrap().is_some()
    }

    #[actix_web::test]
    async fn dead_portal_links_setups_and_email_changes_go_and_live_ones_stay() {
        let app = testing::app().await;
        let now = app.now();
        let grace = Duration::hours(i64::try_from(app.settings.retention.grace_hours).unwrap());
        let (org, customer, sub) = (
            OrganizationId::new(),
            CustomerId::new(),
            SubscriptionId::new(),
        );
        let link = |n: u8, expires_at, used_at| RecoveryLink {
            token_hash: vec![n; 32],
            organization_id: org,
            customer_id: customer,
            subscription_id: sub,
            created_at: now - Duration::days(10),
            expires_at,
            used_at,
        };
        let long_expired = link(1, now - grace - Duration::minutes(1), None);
        let used_and_expired = link(
            2,
            now - grace - Duration::minutes(1),
            Some(now - Duration::days(9)),
        );
        // Used, but it would still work: kept, so that no replay writes it again alive.
        let used_live = link(3, now + Duration::days(1), Some(now - Duration::days(1)));
        let live = link(4, now + Duration::days(1), None);
        // Expired within the grace period: kept a while.
        let just_expired = link(5, now - Duration::minutes(1), None);
        let setup = |id: &str, created_at| PaymentSetup {
            setup_intent_id: id.into(),
            organization_id: org,
            customer_id: customer,
            set_default: false,
            created_at,
        };
        let abandoned = setup(
            "seti_old",
            now - PAYMENT_SETUP_TTL - grace - Duration::minutes(1),
        );
        let waiting = setup("seti_new", now - Duration::minutes(5));
        let change =
            |n: u8, at| EmailChange::open(vec![n; 32], org, customer, "new@example.com".into(), at);
        let expired_change = change(1, now - EmailChange::TTL - Duration::minutes(1));
        let live_change = change(2, now - Duration::minutes(1));
        for l in [
            &long_expired,
            &used_and_expired,
            &used_live,
            &live,
            &just_expired,
        ] {
            put(&app, l).await;
        }
        put(&app, &abandoned).await;
        put(&app, &waiting).await;
        put(&app, &expired_change).await;
        put(&app, &live_change).await;

        let report = purge(&app).await.unwrap();
        assert_eq!(
            (
                report.recovery_links,
                report.payment_setups,
                report.email_changes
            ),
            (2, 1, 1)
        );
        assert!(!exists(&app, &long_expired).await);
        assert!(!exists(&app, &used_and_expired).await);
        for l in [&used_live, &live, &just_expired] {
            assert!(exists(&app, l).await, "{l:?}");
        }
        assert!(!exists(&app, &abandoned).await);
        assert!(exists(&app, &waiting).await);
        assert!(!exists(&app, &expired_change).await);
        assert!(exists(&app, &live_change).await);
        // Nothing left to purge.
        assert_eq!(purge(&app).await.unwrap().total(), 0);
    }

    #[actix_web::test]
    async fn a_kind_larger_than_a_batch_is_walked_whole_in_one_run() {
        let app = testing::app().await;
        let now = app.now();
        let (org, customer, sub) = (
            OrganizationId::new(),
            CustomerId::new(),
            SubscriptionId::new(),
        );
        // Dead and live links interleaved over several chunks of the walk.
        let total = BATCH * 2 + 37;
        let mut live = Vec::new();
        let mut batch = Batch::new();
        for n in 0..total {
            let mut token_hash = vec![0u8; 32];
            token_hash[..8].copy_from_slice(&(n as u64).to_be_bytes());
            let alive = n % 7 == 0;
            let link = RecoveryLink {
                token_hash,
                organization_id: org,
                customer_id: customer,
                subscription_id: sub,
                created_at: now - Duration::days(30),
                expires_at: if alive {
                    now + Duration::days(1)
                } else {
                    now - Duration::days(20)
                },
                used_at: None,
            };
            batch.put(&link, Expect::Absent).unwrap();
            if alive {
                live.push(link);
            }
        }
        app.store.commit_durable(&batch).await.unwrap();
        let report = purge(&app).await.unwrap();
        assert_eq!(report.recovery_links, (total - live.len()) as u64);
        let left = app.store.scan::<RecoveryLink>().await.unwrap();
        assert_eq!(left.len(), live.len());
        for l in &live {
            assert!(exists(&app, l).await);
        }
        assert_eq!(purge(&app).await.unwrap().recovery_links, 0);
    }
}
