//! Personal access tokens: a signed-in user creates them (their secret shown once, kept
//! only as a keyed hash), lists and revokes them, within a per-user cap. The API
//! (`crate::oauth2::pats`) and the settings page (`crate::web::account::tokens`) both call
//! this.

use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Direction, Expect, PageQuery};

use crate::auth::service::new_pat;
use crate::auth::{Scope, ScopeSet};
use crate::domain::ids::{PatId, UserId};
use crate::domain::pat::{PersonalAccessToken, PAT_BY_USER};
use crate::error::AppError;
use crate::field;
use crate::state::AppState;

/// The scopes named in a request; a reserved or unknown one is an invalid `scopes` item.
pub fn parse_scopes(names: &[String]) -> Result<ScopeSet, AppError> {
    let mut set = ScopeSet::empty();
    for (i, n) in names.iter().enumerate() {
        match Scope::parse(n) {
            Some(s) if !s.is_reserved() => set.insert(s),
            _ => {
                return Err(AppError::invalid(
                    field!["scopes", i],
                    "Input should be a supported scope",
                    n,
                ))
            }
        }
    }
    Ok(set)
}

/// Creates a token for `user` (at most `retention.max_personal_access_tokens_per_user`);
/// returns it with its secret, which is never stored.
pub async fn create(
    state: &AppState,
    user: UserId,
    scopes: ScopeSet,
    comment: &str,
    expires_at: Option<DateTime<Utc>>,
) -> Result<(PersonalAccessToken, String), AppError> {
    let _cap = state.lock_user_caps(user).await;
    let max = state.settings.retention.max_personal_access_tokens_per_user;
    if state.store.count(PAT_BY_USER, &user.key()).await? >= u64::from(max) {
        return Err(AppError::not_permitted(format!(
            "You have reached the limit of {max} personal access tokens; delete one first."
        )));
    }
    let (pat, token) = new_pat(
        &state.hasher,
        user,
        scopes,
        comment,
        expires_at,
        state.now(),
    );
    let mut batch = Batch::new();
    batch.put(&pat, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok((pat, token))
}

/// The longest lifetime a token may be given: ten years (the settings page's 3650 days).
const MAX_EXPIRES_IN_SECS: i64 = 3650 * 24 * 60 * 60;

/// When a token created at `now` with `expires_in` seconds expires: 1 second to ten years,
/// else an invalid `expires_in` (never an overflowing date).
pub fn expiry(now: DateTime<Utc>, expires_in: i64) -> Result<DateTime<Utc>, AppError> {
    let invalid = |msg: &str| AppError::invalid(field!["expires_in"], msg, expires_in);
    if expires_in <= 0 {
        return Err(invalid("Input should be greater than 0"));
    }
    if expires_in > MAX_EXPIRES_IN_SECS {
        return Err(invalid(&format!(
            "Input should be less than or equal to {MAX_EXPIRES_IN_SECS}"
        )));
    }
    chrono::TimeDelta::try_seconds(expires_in)
        .and_then(|d| now.checked_add_signed(d))
        .ok_or_else(|| invalid("Input is out of range"))
}

/// The user's live tokens, newest first.
pub async fn list(state: &AppState, user: UserId) -> Result<Vec<PersonalAccessToken>, AppError> {
    let tenants = [user.key()];
    let page = state
        .store
        .page(&PageQuery {
            index: PAT_BY_USER,
            tenants: &tenants,
            direction: Direction::Desc,
            offset: 0,
            limit: 1000,
        })
        .await?;
    Ok(state
        .store
        .get_many::<PersonalAccessToken>(&page.ids)
        .await?
        .into_iter()
        .map(|p| p.value)
        .filter(|p| p.deleted_at.is_none())
        .collect())
}

/// Revokes one of the user's tokens; `false` when `id` names none of them.
pub async fn revoke(state: &AppState, user: UserId, id: &str) -> Result<bool, AppError> {
    let Ok(id) = id.parse::<PatId>() else {
        return Ok(false);
    };
    let Some(stored) = state.store.get::<PersonalAccessToken>(&id.key()).await? else {
        return Ok(false);
    };
    if stored.value.user_id != user || stored.value.deleted_at.is_some() {
        return Ok(false);
    }
    let mut pat = stored.value;
    pat.deleted_at = Some(state.now());
    let mut batch = Batch::new();
    batch.put(&pat, Expect::Rev(stored.rev))?;
    state.store.commit_durable(&batch).await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[test]
    fn expiry_is_bounded_and_never_overflows() {
        let now = Utc::now();
        assert_eq!(expiry(now, 60).unwrap(), now + Duration::seconds(60));
        assert!(expiry(now, MAX_EXPIRES_IN_SECS).is_ok());
        for bad in [
            0,
            -1,
            MAX_EXPIRES_IN_SECS + 1,
            10_000_000_000_000_000,
            i64::MAX,
            i64::MIN,
        ] {
            match expiry(now, bad) {
                Err(AppError::Invalid(errors)) => assert_eq!(errors.len(), 1),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
