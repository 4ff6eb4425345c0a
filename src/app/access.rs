//! Tenancy: which organizations a subject can reach. A user reaches the organizations it is a
//! member of (only the one its request names with `Polar-Organization`, see [`narrow`]); an
//! organization token reaches its own organization only. Anything else reads as "not
//! found", so ids do not leak.

use tollgate_storage::{Direction, PageQuery, Stored};

use crate::auth::Subject;
use crate::domain::customer::Customer;
use crate::domain::ids::{OrganizationId, UserId};
use crate::domain::membership::{Membership, MEMBER_ORGS_BY_CREATED};
use crate::domain::organization::Organization;
use crate::error::{AppError, Code, Invalid};
use crate::state::AppState;

pub async fn is_member(
    state: &AppState,
    user: UserId,
    org: OrganizationId,
) -> Result<bool, AppError> {
    Ok(state
        .store
        .get::<Membership>(&Membership::key(user, org))
        .await?
        .is_some())
}

/// The organization if the subject may see it, else 404.
pub async fn organization_for(
    state: &AppState,
    subject: Subject,
    id: OrganizationId,
) -> Result<Stored<Organization>, AppError> {
    let allowed = match subject {
        Subject::User(user) => is_member(state, user, id).await?,
        Subject::UserIn(_, own) | Subject::Organization(own) => own == id,
        Subject::Anonymous | Subject::Customer(_) | Subject::Purchase(..) => false,
    };
    if !allowed {
        return Err(AppError::not_found());
    }
    match state.store.get::<Organization>(&id.key()).await? {
        Some(org) if org.value.is_visible() => Ok(org),
        _ => Err(AppError::not_found()),
    }
}

/// Every organization a user belongs to (users belong to few organizations).
pub async fn user_organizations(
    state: &AppState,
    user: UserId,
) -> Result<Vec<OrganizationId>, AppError> {
    let tenants = [user.key()];
    let page = state
        .store
        .page(&PageQuery {
            index: MEMBER_ORGS_BY_CREATED,
            tenants: &tenants,
            direction: Direction::Asc,
            offset: 0,
            limit: u64::MAX,
        })
        .await?;
    Ok(page
        .ids
        .iter()
        .filter_map(|k| k.get(16..32).and_then(OrganizationId::from_key))
        .collect())
}

/// The organization a created record belongs to (Polar's rule, reference 5): user tokens
/// must name one they are a member of; organization tokens must not name any. A request
/// that names an organization (`Polar-Organization`) creates in it unless the body names
/// it too (any other is "not found").
pub async fn organization_for_create(
    state: &AppState,
    subject: Subject,
    requested: Option<uuid::Uuid>,
) -> Result<OrganizationId, AppError> {
    let not_found = |id: uuid::Uuid| {
        AppError::invalid(
            crate::field!["organization_id"],
            "Organization not found.",
            id,
        )
    };
    match (subject, requested) {
        (Subject::Organization(own), None) => Ok(own),
        (Subject::Organization(_), Some(id)) => Err(Invalid::new(
            crate::field!["organization_id"],
            "Setting organization_id is disallowed when using an organization token.",
            id,
        )
        .kind("organization_token")
        .into()),
        (Subject::UserIn(_, own), None) => Ok(own),
        (Subject::UserIn(_, own), Some(id)) if own.0 == id => Ok(own),
        (Subject::UserIn(..), Some(id)) => Err(not_found(id)),
        (Subject::User(_), None) => Err(Invalid::new(
            crate::field!["organization_id"],
            "organization_id is required.",
            crate::error::Given::none(),
        )
        .kind("missing")
        .into()),
        (Subject::User(user), Some(id)) => {
            let org = OrganizationId(id);
            let visible = is_member(state, user, org).await?
                && state
                    .store
                    .get::<Organization>(&org.key())
                    .await?
                    .is_some_and(|o| o.value.is_visible());
            if visible {
                Ok(org)
            } else {
                Err(not_found(id))
            }
        }
        (Subject::Anonymous | Subject::Customer(_) | Subject::Purchase(..), _) => {
            Err(AppError::new(Code::Unauthorized, "Unauthorized"))
        }
    }
}

/// The organizations a list covers: those the subject reaches, narrowed to the requested
/// ones when an `organization_id` filter is given.
pub async fn organizations_for_list(
    state: &AppState,
    subject: Subject,
    requested: &[OrganizationId],
) -> Result<Vec<OrganizationId>, AppError> {
    let reachable = match subject {
        Subject::User(user) => user_organizations(state, user).await?,
        Subject::UserIn(_, own) | Subject::Organization(own) => vec![own],
        Subject::Anonymous | Subject::Customer(_) | Subject::Purchase(..) => Vec::new(),
    };
    Ok(if requested.is_empty() {
        reachable
    } else {
        reachable
            .into_iter()
            .filter(|o| requested.contains(o))
            .collect()
    })
}

/// Whether the subject reaches records of this organization.
pub async fn can_access(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
) -> Result<bool, AppError> {
    Ok(match subject {
        Subject::User(user) => is_member(state, user, org).await?,
        Subject::UserIn(_, own) | Subject::Organization(own) => own == org,
        Subject::Anonymous | Subject::Customer(_) | Subject::Purchase(..) => false,
    })
}

/// The subject of a request that names one organization (the `Polar-Organization` header):
/// it then reaches that organization's data only. A user must be a member of it (and it
/// must exist), an organization token must be its own, a customer must be one of its
/// customers; anything else is 404, as for an organization id in a path. No credentials
/// name no organization: the anonymous subject is left as it is.
pub async fn narrow(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
) -> Result<Subject, AppError> {
    let reached = match subject {
        Subject::Anonymous => return Ok(subject),
        Subject::User(user) => {
            organization_for(state, subject, org).await?;
            return Ok(Subject::UserIn(user, org));
        }
        Subject::UserIn(_, own) | Subject::Organization(own) => own == org,
        Subject::Customer(customer) | Subject::Purchase(customer, _) => state
            .store
            .get::<Customer>(&customer.key())
            .await?
            .is_some_and(|c| c.value.organization_id == org),
    };
    if reached {
        Ok(subject)
    } else {
        Err(AppError::not_found())
    }
}

/// Signs up `user` (a new account, its password hashed already): `true` if it was
/// stored, `false` if its address has an account already (then nothing is written, but
/// the answer waits as long as a durable write would, so that sign-up does not tell who
/// has an account).
pub async fn sign_up(state: &AppState, user: &crate::domain::user::User) -> Result<bool, AppError> {
    use crate::auth::service::{create_user, UserError};
    match create_user(&state.store, user).await {
        Ok(()) => Ok(true),
        Err(UserError::EmailTaken) => {
            // What a successful write waits for: a flush of the store's log.
            state.store.read_barrier().await?;
            Ok(false)
        }
        Err(UserError::Storage(e)) => Err(e.into()),
    }
}

#[cfg(test)]
#[path = "access_tests.rs"]
mod tests;
