//! Creating users and personal access tokens (bootstrap, tests, and later the settings page).

use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Expect, StorageError, Store};

use super::tokens::{generate, PAT_PREFIX};
use super::{ScopeSet, TokenHasher};
use crate::domain::ids::{PatId, UserId};
use crate::domain::pat::PersonalAccessToken;
use crate::domain::user::User;

#[derive(Debug, thiserror::Error)]
pub enum UserError {
    #[error("a user with this email address already exists")]
    EmailTaken,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

pub fn new_user(
    email: &str,
    password_hash: Option<String>,
    is_admin: bool,
    now: DateTime<Utc>,
) -> User {
    User {
        id: UserId::new(),
        email: email.to_string(),
        email_verified: false,
        password_hash,
        is_admin,
        created_at: now,
        modified_at: None,
    }
}

/// Stores a new user; the e-mail address must be free (case-insensitively).
pub async fn create_user(store: &Store, user: &User) -> Result<(), UserError> {
    let mut batch = Batch::new();
    batch.put(user, Expect::Absent)?;
    match store.commit_durable(&batch).await {
        Ok(_) => Ok(()),
        Err(StorageError::Unique { .. }) => Err(UserError::EmailTaken),
        Err(e) => Err(e.into()),
    }
}

/// A new token and its record; only the record (with the token's hash) is to be stored.
pub fn new_pat(
    hasher: &TokenHasher,
    user: UserId,
    scopes: ScopeSet,
    comment: &str,
    expires_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> (PersonalAccessToken, String) {
    let token = generate(PAT_PREFIX, 32);
    let pat = PersonalAccessToken {
        id: PatId::new(),
        user_id: user,
        token_hash: hasher.hash(&token).to_vec(),
        scopes,
        comment: comment.to_string(),
        expires_at,
        last_used_at: None,
        created_at: now,
        modified_at: None,
        deleted_at: None,
    };
    (pat, token)
}

/// Creates and stores a personal access token; returns the token (shown once).
pub async fn issue_pat(
    store: &Store,
    hasher: &TokenHasher,
    user: UserId,
    scopes: ScopeSet,
    comment: &str,
    expires_at: Option<DateTime<Utc>>,
) -> Result<(PersonalAccessToken, String), StorageError> {
    let (pat, token) = new_pat(hasher, user, scopes, comment, expires_at, Utc::now());
    let mut batch = Batch::new();
    batch.put(&pat, Expect::Absent)?;
    store.commit_durable(&batch).await?;
    Ok((pat, token))
}
