//! The retention purge: every `retention.interval_secs`, records of short-lived kinds that
//! have been of no use for `retention.grace_hours` (see
//! `tollgate_actors::domain::retention::Expiring`) are deleted, with their index entries
//! and unique keys, in batches that each wait for durability. A record changed meanwhile
//! (its revision moved on) is left for the next purge. Expired `Idempotency-Key` answers
//! go in the same pass.

use chrono::Duration;
use serde::Serialize;
use tollgate_actors::domain::customer_session::{CustomerSession, CustomerSessionCode};
use tollgate_actors::domain::oauth2::{
    AuthorizationCode, BrowserSession, OAuth2Token, SpentAuthorizationCode,
};
use tollgate_actors::domain::organization_access_token::OrganizationAccessToken;
use tollgate_actors::domain::pat::PersonalAccessToken;
use tollgate_actors::domain::retention::{purgeable, Expiring};
use tollgate_storage::{Batch, Expect, StorageError};

use crate::error::ApiError;
use crate::state::AppState;

/// Deletes per batch: bounded so that one purge never holds the store for long.
const BATCH: usize = 256;

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
    })
}

async fn purge_kind<R: Expiring>(state: &AppState, grace: Duration) -> Result<u64, StorageError> {
    let now = state.now();
    let mut doomed = Vec::new();
    for stored in state.store.scan::<R>().await? {
        if purgeable(stored.value.dead_since(), now, grace) {
            doomed.push((stored.value.id_key(), stored.rev));
        }
    }
    let mut purged = 0;
    for chunk in doomed.chunks(BATCH) {
        let mut batch = Batch::new();
        for (id, rev) in chunk {
            batch.delete::<R>(id, Expect::Rev(*rev));
        }
        match state.store.commit_durable(&batch).await {
            Ok(_) => purged += chunk.len() as u64,
            // One record changed since the scan: retry this chunk one by one.
            Err(StorageError::Conflict { .. }) => {
                for (id, rev) in chunk {
                    let mut one = Batch::new();
                    one.delete::<R>(id, Expect::Rev(*rev));
                    match state.store.commit_durable(&one).await {
                        Ok(_) => purged += 1,
                        Err(StorageError::Conflict { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(purged)
}
