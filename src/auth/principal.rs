//! Who a request's credentials name: the subject, its scopes, and how it authenticated.
//! [`crate::credentials::bearer`] and [`crate::credentials::session`] produce them; the extractors in
//! `crate::extract::auth` check them against an endpoint's rule.

use super::ScopeSet;
use crate::domain::ids::{CheckoutId, CustomerId, OrganizationId, UserId};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    Anonymous,
    User(UserId),
    /// A user whose request names one of its organizations (the `Polar-Organization`
    /// header): it reaches that organization's data only.
    UserIn(UserId, OrganizationId),
    /// An organization access token, or an OAuth2 token of an organization.
    Organization(OrganizationId),
    /// A buyer holding a customer session token (`polar_cst_`).
    Customer(CustomerId),
    /// A buyer holding the session a checkout's confirm answered for an address that named
    /// a customer the checkout neither created nor was given by the seller: it reads that
    /// checkout's purchase (its order, subscription, keys and grants) and nothing else of
    /// the customer's, and changes nothing.
    Purchase(CustomerId, CheckoutId),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectKind {
    Anonymous,
    User,
    Organization,
    Customer,
}

impl SubjectKind {
    /// The name Polar's errors give the subject type.
    pub fn as_str(self) -> &'static str {
        match self {
            SubjectKind::Anonymous => "anonymous",
            SubjectKind::User => "user",
            SubjectKind::Organization => "organization",
            SubjectKind::Customer => "customer",
        }
    }
}

impl Subject {
    pub fn kind(&self) -> SubjectKind {
        match self {
            Subject::Anonymous => SubjectKind::Anonymous,
            Subject::User(_) | Subject::UserIn(..) => SubjectKind::User,
            Subject::Organization(_) => SubjectKind::Organization,
            Subject::Customer(_) | Subject::Purchase(..) => SubjectKind::Customer,
        }
    }

    /// The user behind a user subject, whether its request names an organization or not.
    pub fn user(&self) -> Option<UserId> {
        match self {
            Subject::User(user) | Subject::UserIn(user, _) => Some(*user),
            _ => None,
        }
    }
}

/// How the caller authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    None,
    PersonalAccessToken,
    /// An organization access token (`polar_oat_…`).
    OrganizationAccessToken,
    CustomerSession,
    /// An OAuth2 access token (`polar_at_u_…`, `polar_at_o_…`).
    OAuth2,
    /// The session cookie of the authorization pages.
    WebSession,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Principal {
    pub subject: Subject,
    pub scopes: ScopeSet,
    pub method: AuthMethod,
}

impl Principal {
    pub fn anonymous() -> Self {
        Self {
            subject: Subject::Anonymous,
            scopes: ScopeSet::empty(),
            method: AuthMethod::None,
        }
    }
}
