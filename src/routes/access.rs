//! Tenancy: which organizations a subject can reach. A user reaches the organizations it is a
//! member of; an organization token reaches its own organization only. Anything else reads
//! as "not found", so ids do not leak.

use tollgate_storage::{Direction, PageQuery, Stored};

use crate::domain::ids::{OrganizationId, UserId};
use crate::domain::membership::{Membership, MEMBER_ORGS_BY_CREATED};
use crate::domain::organization::Organization;
use crate::error::ApiError;
use crate::extract::Subject;
use crate::state::AppState;

pub fn is_member(state: &AppState, user: UserId, org: OrganizationId) -> Result<bool, ApiError> {
    Ok(state
        .store
        .get::<Membership>(&Membership::key(user, org))?
        .is_some())
}

/// The organization if the subject may see it, else 404.
pub fn organization_for(
    state: &AppState,
    subject: Subject,
    id: OrganizationId,
) -> Result<Stored<Organization>, ApiError> {
    let allowed = match subject {
        Subject::User(user) => is_member(state, user, id)?,
        Subject::Organization(own) => own == id,
        Subject::Anonymous => false,
    };
    if !allowed {
        return Err(ApiError::not_found());
    }
    match state.store.get::<Organization>(&id.key())? {
        Some(org) if org.value.is_visible() => Ok(org),
        _ => Err(ApiError::not_found()),
    }
}

/// Every organization a user belongs to (users belong to few organizations).
pub fn user_organizations(state: &AppState, user: UserId) -> Result<Vec<OrganizationId>, ApiError> {
    let tenants = [user.key()];
    let page = state.store.page(&PageQuery {
        index: MEMBER_ORGS_BY_CREATED,
        tenants: &tenants,
        direction: Direction::Asc,
        offset: 0,
        limit: u64::MAX,
    })?;
    Ok(page
        .ids
        .iter()
        .filter_map(|k| k.get(16..32).and_then(OrganizationId::from_key))
        .collect())
}
