//! Who is calling, and may they call this endpoint (Polar's rules, reference 6.1):
//!
//! 1. `Authorization: Bearer <token>` is resolved to a subject and its scopes; a bearer
//!    token that matches nothing is 401 `invalid_token`. No credentials: anonymous.
//! 2. Anonymous where not allowed: 401 `Unauthorized` with `WWW-Authenticate`.
//! 3. A subject type the endpoint does not accept: 401 `invalid_token` naming the allowed
//!    subjects.
//! 4. None of the endpoint's scopes: 403 `insufficient_scope`. Any one scope suffices.
//!
//! Each endpoint declares its rule as a type: `Auth<OrganizationsRead>`.
//!
//! Bearer tokens: personal access tokens (`polar_pat_`, User), OAuth2 access tokens
//! (`polar_at_u_` User, `polar_at_o_` Organization, with the granted scopes; expired or
//! revoked ones are refused) and customer sessions. Without a bearer header, the session
//! cookie of the authorization pages gives a User with `web_default` (Polar's web session);
//! such calls are CSRF-checked ([`same_origin_json`]).

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};

use crate::auth::tokens::{CUSTOMER_SESSION_PREFIX, PAT_PREFIX};
use crate::auth::{Scope, ScopeSet};
use crate::domain::customer_session::CustomerSession;
use crate::domain::ids::{CustomerId, OrganizationId, UserId};
use crate::domain::oauth2::{OAuth2Token, OAuthSub};
use crate::domain::pat::PersonalAccessToken;
use crate::error::{ApiError, BearerError};
use crate::oauth2::{ACCESS_TOKEN_ORG_PREFIX, ACCESS_TOKEN_USER_PREFIX};
use crate::state::AppState;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    Anonymous,
    User(UserId),
    Organization(OrganizationId),
    /// A buyer holding a customer session token (`polar_cst_`).
    Customer(CustomerId),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectKind {
    Anonymous,
    User,
    Organization,
    Customer,
}

impl SubjectKind {
    fn as_str(self) -> &'static str {
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
            Subject::User(_) => SubjectKind::User,
            Subject::Organization(_) => SubjectKind::Organization,
            Subject::Customer(_) => SubjectKind::Customer,
        }
    }
}

/// How the caller authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    None,
    PersonalAccessToken,
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
requirement!(CustomFieldsRead: [User, Organization] => [WebDefault, CustomFieldsRead, CustomFieldsWrite]);
requirement!(CustomFieldsWrite: [User, Organization] => [WebDefault, CustomFieldsWrite]);
requirement!(
    /// The organizer checkout endpoints do not accept web sessions (Polar).
    CheckoutsRead: [User, Organization] => [CheckoutsRead, CheckoutsWrite]
);
requirement!(CheckoutsWrite: [User, Organization] => [CheckoutsWrite]);
requirement!(OrdersRead: [User, Organization] => [WebDefault, OrdersRead]);
requirement!(SubscriptionsRead: [User, Organization] => [WebDefault, SubscriptionsRead, SubscriptionsWrite]);
requirement!(SubscriptionsWrite: [User, Organization] => [WebDefault, SubscriptionsWrite]);
requirement!(LicenseKeysRead: [User, Organization] => [WebDefault, LicenseKeysRead, LicenseKeysWrite]);
requirement!(LicenseKeysWrite: [User, Organization] => [WebDefault, LicenseKeysWrite]);
requirement!(CustomerPortalRead: [User, Customer] => [WebDefault, CustomerPortalRead, CustomerPortalWrite]);
requirement!(CustomerPortalWrite: [User, Customer] => [WebDefault, CustomerPortalWrite]);
requirement!(
    /// Managing OAuth2 clients and personal access tokens: a user's browser session only
    /// (`web_default`, which no token carries: PATs and OAuth2 tokens get 403).
    UserAccount: [User] => [WebDefault]
);
requirement!(
    /// Creating an organization: users only.
    OrganizationsCreate: [User] => [WebDefault, OrganizationsWrite]
);

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

impl<R: Requirement> FromRequest for Auth<R> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned();
        let token = bearer_token(req);
        let req = req.clone();
        Box::pin(async move {
            let state = state.ok_or_else(|| ApiError::internal("application state missing"))?;
            let principal = match token {
                None => match crate::oauth2::session::current(&state, &req)? {
                    Some(session) => {
                        same_origin_json(&state, &req)?;
                        Principal {
                            subject: Subject::User(session.value.user_id),
                            scopes: [Scope::WebDefault].into_iter().collect(),
                            method: AuthMethod::WebSession,
                        }
                    }
                    None => Principal::anonymous(),
                },
                Some(token) => {
                    let principal = resolve(&state, &token)?
                        .ok_or(ApiError::Bearer(BearerError::InvalidToken))?;
                    // Per token, once it is known to be one (a made-up token costs a lookup
                    // and gets a 401, and never takes a bucket).
                    state.limits.api_token(&token)?;
                    principal
                }
            };
            authorize::<R>(&principal)?;
            Ok(Auth {
                principal,
                _rule: PhantomData,
            })
        })
    }
}

/// CSRF protection of API calls authenticated by the session cookie (which the browser
/// sends by itself): a call that may change something (any method but GET, HEAD and
/// OPTIONS) must declare `Content-Type: application/json`, which a cross-site form cannot
/// send and a cross-site script cannot send without a CORS preflight; a missing type is
/// refused. An `Origin` header, when present, must be this service's (its API or its
/// pages), and `Sec-Fetch-Site`, when present, `same-origin`. Otherwise 403 `NotPermitted`.
/// Bearer-token calls are not affected: no browser attaches a token by itself.
pub fn same_origin_json(state: &AppState, req: &HttpRequest) -> Result<(), ApiError> {
    use actix_web::http::Method;
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    let refuse = |why: &str| Err(ApiError::NotPermitted(why.to_string()));
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
    if content_type.as_deref() != Some("application/json") {
        return refuse(
            "A request authenticated by the session cookie must send Content-Type: application/json.",
        );
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let own = [
            state.public_url.clone(),
            crate::oauth2::session::auth_url(state),
        ];
        let same = origin.to_str().ok().is_some_and(|o| {
            let o = o.trim().trim_end_matches('/');
            own.iter()
                .any(|u| origin_of(u).is_some_and(|mine| mine == o))
        });
        if !same {
            return refuse("Cross-origin requests may not use the session cookie.");
        }
    }
    if let Some(site) = req.headers().get("sec-fetch-site") {
        if site.as_bytes() != b"same-origin" {
            return refuse("Cross-origin requests may not use the session cookie.");
        }
    }
    Ok(())
}

/// The origin (`scheme://host[:port]`) of a URL, as an `Origin` header names it.
fn origin_of(url: &str) -> Option<String> {
    let origin = url::Url::parse(url).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// The token of an `Authorization: Bearer …` header; other schemes count as no credentials.
pub fn bearer_token(req: &HttpRequest) -> Option<String> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    Some(token.trim().to_string())
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

/// Resolves a bearer token to a principal; `None` when it matches no live credential.
pub fn resolve(state: &AppState, token: &str) -> Result<Option<Principal>, ApiError> {
    if token.starts_with(ACCESS_TOKEN_USER_PREFIX) || token.starts_with(ACCESS_TOKEN_ORG_PREFIX) {
        return Ok(resolve_oauth2(state, token)?.map(|(principal, _)| principal));
    }
    if token.starts_with(PAT_PREFIX) {
        let hash = state.hasher.hash(token);
        let Some(id) = state
            .store
            .lookup_unique(&PersonalAccessToken::token_key(&hash))?
        else {
            return Ok(None);
        };
        let Some(pat) = state.store.get::<PersonalAccessToken>(&id)? else {
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
        record_use(state, pat, now);
        return Ok(Some(principal));
    }
    if token.starts_with(CUSTOMER_SESSION_PREFIX) {
        let hash = state.hasher.hash(token);
        let Some(id) = state
            .store
            .lookup_unique(&CustomerSession::token_key(&hash))?
        else {
            return Ok(None);
        };
        let Some(session) = state.store.get::<CustomerSession>(&id)? else {
            return Ok(None);
        };
        if state.now() >= session.value.expires_at
            || !state.hasher.verify(token, &session.value.token_hash)
        {
            return Ok(None);
        }
        return Ok(Some(Principal {
            subject: Subject::Customer(session.value.customer_id),
            scopes: [crate::auth::Scope::CustomerPortalWrite]
                .into_iter()
                .collect(),
            method: AuthMethod::CustomerSession,
        }));
    }
    Ok(None)
}

/// Resolves an OAuth2 access token to its principal and token record; `None` when it is
/// unknown, expired or revoked, or its client was deleted.
pub fn resolve_oauth2(
    state: &AppState,
    token: &str,
) -> Result<Option<(Principal, OAuth2Token)>, ApiError> {
    let hash = state.hasher.hash(token);
    let Some(id) = state.store.lookup_unique(&OAuth2Token::access_key(&hash))? else {
        return Ok(None);
    };
    let Some(row) = state.store.get::<OAuth2Token>(&id)? else {
        return Ok(None);
    };
    let row = row.value;
    if !row.access_usable(state.now()) || !state.hasher.verify(token, &row.access_token_hash) {
        return Ok(None);
    }
    // The tokens of a deleted client die with it.
    if crate::oauth2::endpoints::find_client(state, &row.client_id)?.is_none() {
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

/// Records `last_used_at` at most once a minute per token, without delaying the request.
fn record_use(
    state: &AppState,
    pat: tollgate_storage::Stored<PersonalAccessToken>,
    now: chrono::DateTime<chrono::Utc>,
) {
    let stale = pat
        .value
        .last_used_at
        .is_none_or(|t| now - t > chrono::Duration::seconds(60));
    if !stale {
        return;
    }
    let mut updated = pat.value;
    updated.last_used_at = Some(now);
    let mut batch = tollgate_storage::Batch::new();
    // A concurrent use may have written first; losing that race is harmless.
    if batch
        .put(&updated, tollgate_storage::Expect::Rev(pat.rev))
        .is_ok()
    {
        let _ = state.store.commit(&batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
