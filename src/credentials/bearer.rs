//! Bearer tokens: reading `Authorization: Bearer …` and resolving a token to the principal
//! it names, with the expiry and revocation rules of each kind.
//!
//! - personal access tokens (`polar_pat_`): a User with the token's scopes, unless the token
//!   expired or was deleted; each use is recorded (`last_used_at`, at most once a minute);
//! - organization access tokens (`polar_oat_`): the Organization with the token's scopes,
//!   unless the token expired or was deleted, or its organization is gone; each use is
//!   recorded (`last_used_at`, at most once a minute, after the request: never waited for);
//! - OAuth2 access tokens (`polar_at_u_` User, `polar_at_o_` Organization): the granted
//!   scopes, unless the token expired, was revoked, or its client was deleted;
//! - customer sessions (`polar_cst_`): the Customer with `customer_portal:write`, until the
//!   session expires or the customer (or its organization) is deleted.
//!
//! Anything else resolves to nothing; what that means (401, or no idempotency) is the
//! caller's business.

use actix_web::http::header;
use actix_web::HttpRequest;
use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Expect, Stored};

use crate::auth::principal::{AuthMethod, Principal, Subject};
use crate::auth::tokens::{
    ACCESS_TOKEN_ORG_PREFIX, ACCESS_TOKEN_USER_PREFIX, CUSTOMER_SESSION_PREFIX,
    ORGANIZATION_ACCESS_TOKEN_PREFIX, PAT_PREFIX,
};
use crate::auth::Scope;
use crate::domain::oauth2::{OAuth2Client, OAuth2Token, OAuthSub};
use crate::domain::organization::Organization;
use crate::domain::organization_access_token::OrganizationAccessToken;
use crate::domain::pat::PersonalAccessToken;
use crate::error::ApiError;
use crate::state::AppState;

/// The token of an `Authorization: Bearer …` header; other schemes count as no credentials.
pub fn bearer_token(req: &HttpRequest) -> Option<String> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    Some(token.trim().to_string())
}

/// Resolves a bearer token to a principal; `None` when it matches no live credential.
pub async fn resolve(state: &AppState, token: &str) -> Result<Option<Principal>, ApiError> {
    if token.starts_with(ACCESS_TOKEN_USER_PREFIX) || token.starts_with(ACCESS_TOKEN_ORG_PREFIX) {
        return Ok(resolve_oauth2(state, token)
            .await?
            .map(|(principal, _)| principal));
    }
    if token.starts_with(PAT_PREFIX) {
        return resolve_pat(state, token).await;
    }
    if token.starts_with(ORGANIZATION_ACCESS_TOKEN_PREFIX) {
        return resolve_organization_token(state, token).await;
    }
    if token.starts_with(CUSTOMER_SESSION_PREFIX) {
        return resolve_customer_session(state, token).await;
    }
    Ok(None)
}

/// A personal access token's user, unless the token expired or was deleted.
async fn resolve_pat(state: &AppState, token: &str) -> Result<Option<Principal>, ApiError> {
    let hash = state.hasher.hash(token);
    let Some(id) = state
        .store
        .lookup_unique(&PersonalAccessToken::token_key(&hash))
        .await?
    else {
        return Ok(None);
    };
    let Some(pat) = state.store.get::<PersonalAccessToken>(&id).await? else {
        return Ok(None);
    };
    let now = state.now();
    if !pat.value.is_usable(now) || !state.hasher.verify(token, &pat.value.token_hash) {
        return Ok(None);
    }
    let principal = Principal {
        subject: Subject::User(pat.value.user_id),
        scopes: pat.value.scopes,
        method: AuthMethod::PersonalAccessToken,
    };
    record_use(state, pat, now).await;
    Ok(Some(principal))
}

/// An organization access token's organization, unless the token expired or was deleted,
/// or the organization was deleted or blocked (Polar's `Organization.can_authenticate`).
async fn resolve_organization_token(
    state: &AppState,
    token: &str,
) -> Result<Option<Principal>, ApiError> {
    let hash = state.hasher.hash(token);
    let Some(id) = state
        .store
        .lookup_unique(&OrganizationAccessToken::token_key(&hash))
        .await?
    else {
        return Ok(None);
    };
    let Some(oat) = state.store.get::<OrganizationAccessToken>(&id).await? else {
        return Ok(None);
    };
    let now = state.now();
    if !oat.value.is_usable(now) || !state.hasher.verify(token, &oat.value.token_hash) {
        return Ok(None);
    }
    let org = oat.value.organization_id;
    if !state
        .store
        .get::<Organization>(&org.key())
        .await?
        .is_some_and(|o| o.value.is_visible())
    {
        return Ok(None);
    }
    let principal = Principal {
        subject: Subject::Organization(org),
        scopes: oat.value.scopes,
        method: AuthMethod::OrganizationAccessToken,
    };
    record_organization_token_use(state, oat, now);
    Ok(Some(principal))
}

/// A customer session's customer, until the session expires or the customer (or its
/// organization) is deleted.
async fn resolve_customer_session(
    state: &AppState,
    token: &str,
) -> Result<Option<Principal>, ApiError> {
    let session = crate::app::portal::sign_in::session_of(state, token).await?;
    Ok(session.map(|(session, _)| Principal {
        subject: match session.purchase {
            Some(p) if p.limited => Subject::Purchase(session.customer_id, p.checkout_id),
            _ => Subject::Customer(session.customer_id),
        },
        scopes: [Scope::CustomerPortalWrite].into_iter().collect(),
        method: AuthMethod::CustomerSession,
    }))
}

/// Resolves an OAuth2 access token to its principal and token record; `None` when it is
/// unknown, expired or revoked, or its client was deleted.
pub async fn resolve_oauth2(
    state: &AppState,
    token: &str,
) -> Result<Option<(Principal, OAuth2Token)>, ApiError> {
    let hash = state.hasher.hash(token);
    let Some(id) = state
        .store
        .lookup_unique(&OAuth2Token::access_key(&hash))
        .await?
    else {
        return Ok(None);
    };
    let Some(row) = state.store.get::<OAuth2Token>(&id).await? else {
        return Ok(None);
    };
    let row = row.value;
    if !row.access_usable(state.now()) || !state.hasher.verify(token, &row.access_token_hash) {
        return Ok(None);
    }
    // The tokens of a deleted client die with it.
    if find_client(state, &row.client_id).await?.is_none() {
        return Ok(None);
    }
    let subject = match row.sub {
        OAuthSub::User(u) if token.starts_with(ACCESS_TOKEN_USER_PREFIX) => Subject::User(u),
        OAuthSub::Organization(o) if token.starts_with(ACCESS_TOKEN_ORG_PREFIX) => {
            Subject::Organization(o)
        }
        _ => return Ok(None),
    };
    Ok(Some((
        Principal {
            subject,
            scopes: row.scopes,
            method: AuthMethod::OAuth2,
        },
        row,
    )))
}

/// A live (not deleted) OAuth2 client by its public id.
pub async fn find_client(
    state: &AppState,
    client_id: &str,
) -> Result<Option<Stored<OAuth2Client>>, ApiError> {
    let Some(id) = state
        .store
        .lookup_unique(&OAuth2Client::client_id_key(client_id))
        .await?
    else {
        return Ok(None);
    };
    Ok(state
        .store
        .get::<OAuth2Client>(&id)
        .await?
        .filter(|c| c.value.deleted_at.is_none()))
}

/// Records `last_used_at` at most once a minute per token (not waiting for durability).
async fn record_use(state: &AppState, pat: Stored<PersonalAccessToken>, now: DateTime<Utc>) {
    let stale = pat
        .value
        .last_used_at
        .is_none_or(|t| now - t > chrono::Duration::seconds(60));
    if !stale {
        return;
    }
    let mut updated = pat.value;
    updated.last_used_at = Some(now);
    let mut batch = Batch::new();
    // A concurrent use may have written first; losing that race is harmless.
    if batch.put(&updated, Expect::Rev(pat.rev)).is_ok() {
        let _ = state.store.commit(&batch).await;
    }
}

/// Records an organization access token's `last_used_at`, at most once a minute per token,
/// in a task of its own: the request that used the token neither waits for the write nor
/// fails with it (a lost race with another use or a change of the token is harmless).
fn record_organization_token_use(
    state: &AppState,
    oat: Stored<OrganizationAccessToken>,
    now: DateTime<Utc>,
) {
    let stale = oat
        .value
        .last_used_at
        .is_none_or(|t| now - t > chrono::Duration::seconds(60));
    if !stale {
        return;
    }
    let mut updated = oat.value;
    updated.last_used_at = Some(now);
    let mut batch = Batch::new();
    if batch.put(&updated, Expect::Rev(oat.rev)).is_err() {
        return;
    }
    let store = state.store.clone();
    actix_web::rt::spawn(async move {
        let _ = store.commit(&batch).await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bearer_scheme_carries_a_token() {
        let with = |value: &str| {
            actix_web::test::TestRequest::default()
                .insert_header((header::AUTHORIZATION, value))
                .to_http_request()
        };
        assert_eq!(
            bearer_token(&with("Bearer polar_pat_x")).as_deref(),
            Some("polar_pat_x")
        );
        assert_eq!(
            bearer_token(&with("bearer  polar_pat_x ")).as_deref(),
            Some("polar_pat_x")
        );
        assert_eq!(bearer_token(&with("Basic YTpi")), None);
        assert_eq!(bearer_token(&with("Bearer")), None);
        let bare = actix_web::test::TestRequest::default().to_http_request();
        assert_eq!(bearer_token(&bare), None);
    }
}
