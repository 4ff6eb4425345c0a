//! Who is calling, and may they call this endpoint (Polar's rules, reference 6.1):
//!
//! 1. `Authorization: Bearer <token>` is resolved to a subject and its scopes
//!    ([`crate::credentials::bearer`]); a bearer token that matches nothing is 401 `invalid_token`.
//!    Without a bearer header, the session cookie of the authorization pages gives a User
//!    with `web_default` ([`crate::credentials::session`]). No credentials: anonymous.
//! 2. Anonymous where not allowed: 401 `Unauthorized` with `WWW-Authenticate`.
//! 3. A subject type the endpoint does not accept: 401 `invalid_token` naming the allowed
//!    subjects.
//! 4. None of the endpoint's scopes: 403 `insufficient_scope`. Any one scope suffices.
//! 5. A `Polar-Organization: <organization id>` header narrows the subject to that
//!    organization ([`crate::app::access::narrow`]): one the caller does not reach is 404,
//!    a malformed id 422 at `["header", "polar-organization"]`.
//!
//! Each endpoint declares its rule as a type: `Auth<OrganizationsRead>`. This module reads
//! the request and maps the outcome to 401/403; which credentials are live is decided in
//! `crate::auth`.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};

use crate::auth::Scope;
use crate::credentials::bearer_token;
use crate::domain::ids::OrganizationId;
use crate::error::{ApiError, BearerError};
use crate::state::AppState;

pub use crate::auth::principal::{AuthMethod, Principal, Subject, SubjectKind};

/// An endpoint's rule: which subjects it accepts and which scopes (any one) it needs.
pub trait Requirement: 'static {
    const SUBJECTS: &'static [SubjectKind];
    const SCOPES: &'static [Scope];
}

macro_rules! requirement {
    ($(#[$doc:meta])* $name:ident: [$($subject:ident),+] => [$($scope:ident),*]) => {
        $(#[$doc])*
        pub struct $name;
        impl Requirement for $name {
            const SUBJECTS: &'static [SubjectKind] = &[$(SubjectKind::$subject),+];
            const SCOPES: &'static [Scope] = &[$(Scope::$scope),*];
        }
    };
}

requirement!(OrganizationsRead: [User, Organization] => [WebDefault, OrganizationsRead, OrganizationsWrite]);
requirement!(OrganizationsWrite: [User, Organization] => [WebDefault, OrganizationsWrite]);
requirement!(BenefitsRead: [User, Organization] => [WebDefault, BenefitsRead, BenefitsWrite]);
requirement!(BenefitsWrite: [User, Organization] => [WebDefault, BenefitsWrite]);
requirement!(ProductsRead: [User, Organization] => [WebDefault, ProductsRead, ProductsWrite]);
requirement!(ProductsWrite: [User, Organization] => [WebDefault, ProductsWrite]);
requirement!(DiscountsRead: [User, Organization] => [WebDefault, DiscountsRead, DiscountsWrite]);
requirement!(DiscountsWrite: [User, Organization] => [WebDefault, DiscountsWrite]);
requirement!(CustomersRead: [User, Organization] => [WebDefault, CustomersRead, CustomersWrite]);
requirement!(CustomersWrite: [User, Organization] => [WebDefault, CustomersWrite]);
requirement!(CustomerSessionsWrite: [User, Organization] => [WebDefault, CustomerSessionsWrite]);
requirement!(CustomFieldsRead: [User, Organization] => [WebDefault, CustomFieldsRead, CustomFieldsWrite]);
requirement!(CustomFieldsWrite: [User, Organization] => [WebDefault, CustomFieldsWrite]);
requirement!(
    /// The organizer checkout endpoints do not accept web sessions (Polar).
    CheckoutsRead: [User, Organization] => [CheckoutsRead, CheckoutsWrite]
);
requirement!(CheckoutsWrite: [User, Organization] => [CheckoutsWrite]);
requirement!(
    /// Checkout links, as Polar's `checkout_link/auth.py` (no web sessions either).
    CheckoutLinksRead: [User, Organization] => [CheckoutLinksRead, CheckoutLinksWrite]
);
requirement!(CheckoutLinksWrite: [User, Organization] => [CheckoutLinksWrite]);
requirement!(OrdersRead: [User, Organization] => [WebDefault, OrdersRead]);
requirement!(OrdersWrite: [User, Organization] => [WebDefault, OrdersWrite]);
requirement!(RefundsRead: [User, Organization] => [WebDefault, RefundsRead, RefundsWrite]);
requirement!(RefundsWrite: [User, Organization] => [WebDefault, RefundsWrite]);
requirement!(DisputesRead: [User, Organization] => [WebDefault, DisputesRead, DisputesWrite]);
requirement!(DisputesWrite: [User, Organization] => [WebDefault, DisputesWrite]);
requirement!(SubscriptionsRead: [User, Organization] => [WebDefault, SubscriptionsRead, SubscriptionsWrite]);
requirement!(SubscriptionsWrite: [User, Organization] => [WebDefault, SubscriptionsWrite]);
requirement!(LicenseKeysRead: [User, Organization] => [WebDefault, LicenseKeysRead, LicenseKeysWrite]);
requirement!(LicenseKeysWrite: [User, Organization] => [WebDefault, LicenseKeysWrite]);
requirement!(WebhooksRead: [User, Organization] => [WebDefault, WebhooksRead, WebhooksWrite]);
requirement!(WebhooksWrite: [User, Organization] => [WebDefault, WebhooksWrite]);
requirement!(EventsRead: [User, Organization] => [WebDefault, EventsRead, EventsWrite]);
requirement!(EventsWrite: [User, Organization] => [WebDefault, EventsWrite]);
requirement!(MetersRead: [User, Organization] => [WebDefault, MetersRead, MetersWrite]);
requirement!(MetersWrite: [User, Organization] => [WebDefault, MetersWrite]);
requirement!(CustomerMetersRead: [User, Organization] => [WebDefault, CustomerMetersRead]);
requirement!(CustomerPortalRead: [User, Customer] => [WebDefault, CustomerPortalRead, CustomerPortalWrite]);
requirement!(CustomerPortalWrite: [User, Customer] => [WebDefault, CustomerPortalWrite]);
requirement!(
    /// The portal's own endpoints (orders, subscriptions, grants, the session): a customer
    /// session only.
    CustomerSessionRead: [Customer] => [CustomerPortalRead, CustomerPortalWrite]
);
requirement!(CustomerSessionWrite: [Customer] => [CustomerPortalWrite]);
requirement!(
    /// Managing OAuth2 clients and personal access tokens: a user's browser session only
    /// (`web_default`, which no token carries: PATs and OAuth2 tokens get 403).
    UserAccount: [User] => [WebDefault]
);
requirement!(
    /// Creating an organization: users only.
    OrganizationsCreate: [User] => [WebDefault, OrganizationsWrite]
);

requirement!(
    /// Organization access tokens: a user's token or browser session. An organization
    /// token never holds these scopes (403); `crate::app::organization_access_tokens`
    /// refuses organization subjects all the same.
    OrganizationAccessTokensRead: [User, Organization] => [WebDefault, OrganizationAccessTokensRead, OrganizationAccessTokensWrite]
);
requirement!(OrganizationAccessTokensWrite: [User, Organization] => [WebDefault, OrganizationAccessTokensWrite]);

/// The header that names the one organization a request acts on (polar-sdk 1.0's
/// `Polar(…, organization_id=…)`, @polar-sh/sdk 1.0's `organizationId`).
pub const ORGANIZATION_HEADER: &str = "polar-organization";

/// The organization the request names, if any (an empty header names none); a value that
/// is not a UUID is a 422, as FastAPI answers for a malformed header parameter.
pub fn named_organization(req: &HttpRequest) -> Result<Option<OrganizationId>, ApiError> {
    let Some(value) = req.headers().get(ORGANIZATION_HEADER) else {
        return Ok(None);
    };
    let raw = String::from_utf8_lossy(value.as_bytes());
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    raw.parse::<uuid::Uuid>()
        .map(|id| Some(OrganizationId(id)))
        .map_err(|e| {
            ApiError::validation(crate::error::FieldError::new(
                "uuid_parsing",
                crate::loc!["header", ORGANIZATION_HEADER],
                format!("Input should be a valid UUID, {e}"),
                serde_json::Value::from(raw.chars().take(100).collect::<String>()),
            ))
        })
}

/// The authenticated caller of an endpoint whose rule is `R`.
#[derive(Debug)]
pub struct Auth<R> {
    pub principal: Principal,
    _rule: PhantomData<R>,
}

impl<R> Auth<R> {
    pub fn subject(&self) -> Subject {
        self.principal.subject
    }
}

impl<R: Requirement> Auth<R> {
    /// The endpoint's rule applied to a principal known in-process (the dashboard calls the
    /// API's handlers for its signed-in user): the same 401/403 as over HTTP.
    pub fn on_behalf(principal: Principal) -> Result<Self, ApiError> {
        authorize::<R>(&principal)?;
        Ok(Auth {
            principal,
            _rule: PhantomData,
        })
    }
}

impl<R: Requirement> FromRequest for Auth<R> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned();
        let token = bearer_token(req);
        let named = named_organization(req);
        let req = req.clone();
        Box::pin(async move {
            let state = state.ok_or_else(|| ApiError::internal("application state missing"))?;
            let principal = match token {
                None => crate::credentials::session::principal(&state, &req)
                    .await?
                    .unwrap_or_else(Principal::anonymous),
                Some(token) => {
                    let principal = crate::credentials::resolve(&state, &token)
                        .await?
                        .ok_or(ApiError::Bearer(BearerError::InvalidToken))?;
                    // Per token, once it is known to be one (a made-up token costs a lookup
                    // and gets a 401, and never takes a bucket).
                    state.limits.api_token(&token)?;
                    principal
                }
            };
            authorize::<R>(&principal)?;
            let mut principal = principal;
            if let Some(org) = named? {
                principal.subject =
                    crate::app::access::narrow(&state, principal.subject, org).await?;
            }
            Ok(Auth {
                principal,
                _rule: PhantomData,
            })
        })
    }
}

/// Applies an endpoint's rule to a principal.
pub fn authorize<R: Requirement>(p: &Principal) -> Result<(), ApiError> {
    let kind = p.subject.kind();
    if kind == SubjectKind::Anonymous && !R::SUBJECTS.contains(&SubjectKind::Anonymous) {
        return Err(ApiError::Unauthorized);
    }
    if !R::SUBJECTS.contains(&kind) {
        let allowed: Vec<&str> = R::SUBJECTS.iter().map(|s| s.as_str()).collect();
        return Err(ApiError::Bearer(BearerError::InvalidSubject {
            allowed: allowed.join(" "),
        }));
    }
    if kind != SubjectKind::Anonymous && !R::SCOPES.is_empty() && !p.scopes.contains_any(R::SCOPES)
    {
        let required: Vec<&str> = R::SCOPES.iter().map(|s| s.as_str()).collect();
        return Err(ApiError::Bearer(BearerError::InsufficientScope {
            required: required.join(" "),
        }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{OrganizationId, UserId};

    fn principal(subject: Subject, scopes: &[Scope]) -> Principal {
        Principal {
            subject,
            scopes: scopes.iter().copied().collect(),
            method: AuthMethod::PersonalAccessToken,
        }
    }

    #[test]
    fn anonymous_is_unauthorized() {
        assert!(matches!(
            authorize::<OrganizationsRead>(&Principal::anonymous()),
            Err(ApiError::Unauthorized)
        ));
    }

    #[test]
    fn wrong_subject_is_invalid_token() {
        let org = principal(
            Subject::Organization(OrganizationId::new()),
            &[Scope::OrganizationsWrite],
        );
        match authorize::<OrganizationsCreate>(&org) {
            Err(ApiError::Bearer(BearerError::InvalidSubject { allowed })) => {
                assert_eq!(allowed, "user")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn any_one_scope_suffices_and_none_is_forbidden() {
        let user = UserId::new();
        assert!(authorize::<OrganizationsRead>(&principal(
            Subject::User(user),
            &[Scope::OrganizationsWrite]
        ))
        .is_ok());
        assert!(authorize::<OrganizationsRead>(&principal(
            Subject::User(user),
            &[Scope::OrganizationsRead]
        ))
        .is_ok());
        match authorize::<OrganizationsWrite>(&principal(
            Subject::User(user),
            &[Scope::OrganizationsRead],
        )) {
            Err(ApiError::Bearer(BearerError::InsufficientScope { required })) => {
                assert_eq!(required, "web_default organizations:write")
            }
            other => panic!("{other:?}"),
        }
    }
}
