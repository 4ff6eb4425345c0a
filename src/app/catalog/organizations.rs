//! Organizations: a user creates one (and becomes its member), lists the ones it belongs to
//! (an organization token: only its own), and changes their profile and settings.

use tollgate_storage::{Batch, Expect, StorageError};

use crate::app::access::organization_for;
use crate::app::listing::{compare_times, directed, sorted_page_of};
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::auth::Subject;
use crate::domain::currency::Currency;
use crate::domain::ids::OrganizationId;
use crate::domain::membership::{Membership, MEMBER_ORGS_BY_CREATED, MEMBER_ORGS_BY_SLUG};
use crate::domain::organization::{
    spending_limits_error, FeatureSettings, NewOrganization, Organization, OrganizationChange,
};
use crate::error::{AppError, Code};
use crate::field;
use crate::state::AppState;

use super::found;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OrgSort {
    CreatedAt,
    /// Polar's `name` sorts by slug.
    Name,
}

impl SortField for OrgSort {
    const FIELDS: &'static [(&'static str, OrgSort)] =
        &[("created_at", OrgSort::CreatedAt), ("name", OrgSort::Name)];

    /// Slugs are unique.
    fn is_unique(self) -> bool {
        self == OrgSort::Name
    }
}

/// Which organizations a list shows: the one with this slug, or all the subject reaches,
/// in this order.
#[derive(Debug, Clone)]
pub struct OrganizationFilter {
    pub slug: Option<String>,
    pub sorting: Sorting<OrgSort>,
}

impl Default for OrganizationFilter {
    fn default() -> Self {
        Self {
            slug: None,
            sorting: Sorting::by(OrgSort::CreatedAt, false),
        }
    }
}

/// One page of the organizations `subject` reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &OrganizationFilter,
    params: ListParams,
) -> Result<(Vec<Organization>, u64), AppError> {
    let sorting = &filter.sorting;
    state.store.read_barrier().await?;

    let (orgs, total) = match (subject, filter.slug.clone()) {
        // A slug names at most one organization: look it up, then check access.
        (subject, Some(slug)) => {
            let found = match state
                .store
                .lookup_unique(&Organization::slug_key(&slug))
                .await?
                .and_then(|id| OrganizationId::from_key(&id))
            {
                Some(id) => organization_for(state, subject, id).await.ok(),
                None => None,
            };
            let all: Vec<Organization> = found.into_iter().map(|s| s.value).collect();
            let total = all.len() as u64;
            (
                all.into_iter().skip(params.offset() as usize).collect(),
                total,
            )
        }
        (Subject::Organization(own) | Subject::UserIn(_, own), None) => {
            let all: Vec<Organization> = organization_for(state, subject, own)
                .await
                .into_iter()
                .map(|s| s.value)
                .collect();
            let total = all.len() as u64;
            (
                all.into_iter().skip(params.offset() as usize).collect(),
                total,
            )
        }
        (Subject::User(user), None) => {
            // The user's memberships carry the organizations' sort fields: the first
            // criterion is served by an index (equal values follow the id), the others in
            // memory.
            let (field, desc) = sorting.primary();
            let index = match field {
                OrgSort::CreatedAt => MEMBER_ORGS_BY_CREATED,
                OrgSort::Name => MEMBER_ORGS_BY_SLUG,
            };
            let several = sorting.several(|field, desc, a: &Membership, b: &Membership| {
                let ordering = match field {
                    OrgSort::CreatedAt => {
                        compare_times(&a.organization_created_at, &b.organization_created_at)
                    }
                    OrgSort::Name => a.organization_slug.cmp(&b.organization_slug),
                };
                directed(ordering, desc)
            });
            let (memberships, total) = sorted_page_of::<Membership>(
                state,
                index,
                &[user.key()],
                desc,
                params,
                None,
                several.as_deref(),
            )
            .await?;
            let ids: Vec<Vec<u8>> = memberships
                .iter()
                .map(|m| m.organization_id.key())
                .collect();
            let orgs: Vec<Organization> = state
                .store
                .get_many::<Organization>(&ids)
                .await?
                .into_iter()
                .map(|s| s.value)
                .collect();
            (orgs, total)
        }
        (Subject::Anonymous | Subject::Customer(_) | Subject::Purchase(..), None) => {
            return Err(unauthorized())
        }
    };
    Ok((
        orgs.into_iter().take(params.limit as usize).collect(),
        total,
    ))
}

fn slug_taken(slug: &str) -> AppError {
    AppError::invalid(
        field!["slug"],
        "An organization with this slug already exists.",
        slug,
    )
}

fn unauthorized() -> AppError {
    AppError::new(Code::Unauthorized, "Unauthorized")
}

/// The organization `id` if the subject may see it (its writes so far read back), else
/// 404.
pub async fn get(
    state: &AppState,
    subject: Subject,
    id: OrganizationId,
) -> Result<Organization, AppError> {
    state.store.read_barrier().await?;
    Ok(organization_for(state, subject, id).await?.value)
}

/// Creates an organization; the user who creates it is its first member. The slug must be
/// free (across all organizations, deleted ones included).
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: NewOrganization,
) -> Result<Organization, AppError> {
    let Some(user) = subject.user() else {
        return Err(unauthorized());
    };
    let slug = input.slug;
    if state
        .store
        .lookup_unique(&Organization::slug_key(&slug))
        .await?
        .is_some()
    {
        return Err(slug_taken(&slug));
    }

    let now = state.now();
    let mut org = Organization::new(OrganizationId::new(), input.name, slug.clone(), now);
    org.avatar_url = input.avatar_url;
    if let Some(enabled) = input.issue_funding_enabled {
        org.feature_settings = FeatureSettings {
            issue_funding_enabled: Some(enabled),
        };
    }
    if let Some(c) = input.default_presentment_currency {
        org.default_presentment_currency = c;
    }
    if let Some((settings, prevent_trial_abuse)) = input.subscription_settings {
        org.subscription_settings = settings;
        org.prevent_trial_abuse = prevent_trial_abuse;
    }
    let membership = Membership {
        user_id: user,
        organization_id: org.id,
        organization_created_at: org.created_at,
        organization_slug: org.slug.clone(),
        created_at: now,
    };
    let mut batch = Batch::new();
    batch.put(&org, Expect::Absent)?;
    batch.put(&membership, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => {}
        // Lost a race for the slug to a concurrent create.
        Err(StorageError::Unique { .. }) => return Err(slug_taken(&slug)),
        Err(e) => return Err(e.into()),
    }
    Ok(org)
}

/// Sets what a refund does beyond the money (the dashboard's setting).
pub async fn set_refund_settings(
    state: &AppState,
    subject: Subject,
    id: OrganizationId,
    settings: crate::domain::organization::RefundSettings,
) -> Result<Organization, AppError> {
    organization_for(state, subject, id).await?;
    let now = state.now();
    let updated = state
        .store
        .update::<Organization, AppError>(&id.key(), async |current| {
            let mut org = current.clone();
            org.refund_settings = settings;
            org.modified_at = Some(now);
            Ok(Some(org))
        })
        .await?;
    found(updated)
}

/// Changes an organization's profile and settings. A per-user spending limit must fit
/// the total limit the organization is left with.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: OrganizationId,
    change: OrganizationChange,
) -> Result<Organization, AppError> {
    let stored = organization_for(state, subject, id).await?;
    if let Some(currency) = change
        .default_presentment_currency
        .filter(|c| *c != stored.value.default_presentment_currency)
    {
        if super::products::any_active_lacking(state, subject, id, currency).await? {
            return Err(AppError::invalid(
                field!["default_presentment_currency"],
                "All active products must have prices in the new currency.",
                currency.code(),
            ));
        }
    }
    let now = state.now();
    let updated = state
        .store
        .update::<Organization, AppError>(&id.key(), async |current| {
            let (total, per_user) = change.spending_limits(current);
            if let (Some(msg), Some(p)) = (spending_limits_error(total, per_user), per_user) {
                return Err(AppError::invalid(
                    field!["per_user_monthly_spending_limit"],
                    msg,
                    p,
                ));
            }
            let mut org = current.clone();
            change.apply(&mut org);
            org.modified_at = Some(now);
            Ok(Some(org))
        })
        .await?;
    found(updated)
}

/// The default presentment currency of organization `id` (US dollars if it is gone):
/// the currency its products must have, and a checkout's when nothing else picks one.
pub async fn default_currency(state: &AppState, id: OrganizationId) -> Result<Currency, AppError> {
    Ok(state
        .store
        .get::<Organization>(&id.key())
        .await?
        .map_or(Currency::DEFAULT, |o| o.value.default_presentment_currency))
}

#[cfg(test)]
#[path = "organizations_tests.rs"]
mod tests;
