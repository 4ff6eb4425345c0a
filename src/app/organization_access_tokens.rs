//! Organization access tokens (Polar's `organization_access_token/service.py`): a member of
//! an organization creates a `polar_oat_…` token that acts as that organization, with scopes
//! within the member's own, lists, changes and deletes them. The token is shown once and
//! kept only as a keyed hash; `crate::credentials::bearer` resolves it.
//!
//! Who may: a user (a personal access token or the browser session) holding
//! `organization_access_tokens:read|write`, for the organizations it is a member of (any
//! other token reads as not found). Polar takes a fresh browser session only; Tollgate
//! takes a user's token too, so that scripts and the 0.47 SDK can manage them. An
//! organization subject never manages tokens (403).

use std::cmp::Ordering;

use tollgate_storage::{Batch, Expect, Stored};

use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::{compare_times, directed, nulls_last, sorted_page_of};
use crate::app::paging::{Compare, ListParams, SortField, Sorting};
use crate::auth::tokens::{generate, ORGANIZATION_ACCESS_TOKEN_PREFIX};
use crate::auth::{Principal, Scope, ScopeSet, Subject};
use crate::domain::ids::{OrganizationId, UserId};
use crate::domain::organization_access_token::{
    NewOrganizationAccessToken, OrganizationAccessToken, OrganizationAccessTokenChange,
    OrganizationAccessTokenId, OAT_BY_ORG,
};
use crate::error::AppError;
use crate::field;
use crate::state::AppState;

/// Who manages tokens: the user behind the request (narrowed or not to one organization),
/// and the scopes it may hand out (a browser session's `web_default` stands for every
/// scope a token may hold).
#[derive(Debug, Clone, Copy)]
pub struct Manager {
    pub subject: Subject,
    pub user: UserId,
    pub scopes: ScopeSet,
}

impl Manager {
    /// The caller, if it is a user: an organization token cannot manage tokens (403).
    pub fn of(principal: &Principal) -> Result<Manager, AppError> {
        let Some(user) = principal.subject.user() else {
            return Err(AppError::not_permitted(
                "Organization access tokens are managed by the organization's members, \
                 not by an organization token.",
            ));
        };
        let scopes = if principal.scopes.contains(Scope::WebDefault) {
            ScopeSet::all_grantable()
        } else {
            principal.scopes
        };
        Ok(Manager {
            subject: principal.subject,
            user,
            scopes,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TokenSort {
    CreatedAt,
    Comment,
    LastUsedAt,
    OrganizationId,
}

impl SortField for TokenSort {
    const FIELDS: &'static [(&'static str, TokenSort)] = &[
        ("created_at", TokenSort::CreatedAt),
        ("comment", TokenSort::Comment),
        ("last_used_at", TokenSort::LastUsedAt),
        ("organization_id", TokenSort::OrganizationId),
    ];
}

/// Which tokens a list shows, and in what order (Polar's default: oldest first).
#[derive(Debug, Clone)]
pub struct TokenFilter {
    pub organization_id: Vec<OrganizationId>,
    pub sorting: Sorting<TokenSort>,
}

/// Creates a token (at most `retention.max_organization_access_tokens_per_organization`
/// live ones per organization); returns it with its secret, which is never stored.
pub async fn create(
    state: &AppState,
    manager: Manager,
    input: NewOrganizationAccessToken,
) -> Result<(OrganizationAccessToken, String), AppError> {
    let now = state.now();
    let expires_at = match input.expires_in {
        None => None,
        Some(lifetime) => Some(now.checked_add_signed(lifetime).ok_or_else(|| {
            AppError::invalid(
                field!["expires_in"],
                "Input is out of range",
                lifetime.num_seconds(),
            )
        })?),
    };
    let organization_id =
        organization_for_create(state, manager.subject, input.organization_id.map(|o| o.0)).await?;

    // One member's creations at a time, so that they cannot pass the cap together.
    let _cap = state.lock_user_caps(manager.user).await;
    let max = state
        .settings
        .retention
        .max_organization_access_tokens_per_organization;
    if state
        .store
        .count(OAT_BY_ORG, &organization_id.key())
        .await?
        >= u64::from(max)
    {
        return Err(AppError::not_permitted(format!(
            "The organization has reached the limit of {max} organization access tokens; \
             delete one first."
        )));
    }
    let token = generate(ORGANIZATION_ACCESS_TOKEN_PREFIX, 32);
    let oat = OrganizationAccessToken {
        id: OrganizationAccessTokenId::new(),
        organization_id,
        token_hash: state.hasher.hash(&token).to_vec(),
        scopes: input.scopes,
        comment: input.comment,
        expires_at,
        last_used_at: None,
        created_at: now,
        modified_at: None,
        deleted_at: None,
    };
    let mut batch = Batch::new();
    batch.put(&oat, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok((oat, token))
}

/// A live token of an organization the manager reaches, else 404.
async fn token_for(
    state: &AppState,
    manager: Manager,
    id: OrganizationAccessTokenId,
) -> Result<Stored<OrganizationAccessToken>, AppError> {
    match state
        .store
        .get::<OrganizationAccessToken>(&id.key())
        .await?
    {
        Some(t)
            if t.value.deleted_at.is_none()
                && can_access(state, manager.subject, t.value.organization_id).await? =>
        {
            Ok(t)
        }
        _ => Err(AppError::not_found()),
    }
}

/// Changes a token's comment or scopes (within the manager's own).
pub async fn update(
    state: &AppState,
    manager: Manager,
    id: OrganizationAccessTokenId,
    input: OrganizationAccessTokenChange,
) -> Result<OrganizationAccessToken, AppError> {
    token_for(state, manager, id).await?;
    let now = state.now();
    let updated = state
        .store
        .update::<OrganizationAccessToken, AppError>(&id.key(), async |current| {
            if current.deleted_at.is_some() {
                return Err(AppError::not_found());
            }
            let mut t = current.clone();
            if let Some(comment) = &input.comment {
                t.comment = comment.clone();
            }
            if let Some(scopes) = input.scopes {
                t.scopes = scopes;
            }
            t.modified_at = Some(now);
            Ok(Some(t))
        })
        .await?;
    updated.ok_or_else(AppError::not_found)
}

/// Deletes a token: it stops working at once and is no longer listed.
pub async fn delete(
    state: &AppState,
    manager: Manager,
    id: OrganizationAccessTokenId,
) -> Result<(), AppError> {
    token_for(state, manager, id).await?;
    let now = state.now();
    let deleted = state
        .store
        .update::<OrganizationAccessToken, AppError>(&id.key(), async |current| {
            if current.deleted_at.is_some() {
                return Err(AppError::not_found());
            }
            let mut t = current.clone();
            t.deleted_at = Some(now);
            t.modified_at = Some(now);
            Ok(Some(t))
        })
        .await?;
    deleted.map(|_| ()).ok_or_else(AppError::not_found)
}

/// One page of the live tokens of the organizations the manager reaches (of
/// `filter.organization_id` when given), and their total.
pub async fn list(
    state: &AppState,
    manager: Manager,
    filter: &TokenFilter,
    params: ListParams,
) -> Result<(Vec<OrganizationAccessToken>, u64), AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, manager.subject, &filter.organization_id).await?;
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    let sorting = &filter.sorting;
    let by = |field, desc, a: &OrganizationAccessToken, b: &OrganizationAccessToken| {
        let ordering = match field {
            TokenSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
            TokenSort::Comment => a.comment.cmp(&b.comment),
            TokenSort::LastUsedAt => nulls_last(
                a.last_used_at.map(|t| t.timestamp_micros()),
                b.last_used_at.map(|t| t.timestamp_micros()),
            ),
            TokenSort::OrganizationId => a.organization_id.cmp(&b.organization_id),
        };
        directed(ordering, desc)
    };
    // The index serves the creation order; any other is sorted in memory.
    let (field, desc) = sorting.primary();
    let in_memory = Box::new(
        move |a: &OrganizationAccessToken, b: &OrganizationAccessToken| -> Ordering {
            sorting.compare(a, b, by)
        },
    ) as Box<Compare<'_, OrganizationAccessToken>>;
    let several = sorting
        .several(by)
        .or_else(|| (field != TokenSort::CreatedAt).then_some(in_memory));
    let backwards = field == TokenSort::CreatedAt && desc;
    sorted_page_of::<OrganizationAccessToken>(
        state,
        OAT_BY_ORG,
        &tenants,
        backwards,
        params,
        None,
        several.as_deref(),
    )
    .await
}
