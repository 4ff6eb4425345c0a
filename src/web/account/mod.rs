//! The browser pages at `{auth_url}/oauth2/…`: sign in, sign up, sign out, and the
//! authorization request with its consent page and organization picker.
//!
//! Errors that cannot be trusted to a redirect (unknown client, unregistered redirect URI)
//! are shown as a page; every other error of an authorization request is a redirect to the
//! client with `error`, `error_description` and `state` (RFC 6749 4.1.2.1).

pub mod tokens;

use std::collections::HashMap;

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use chrono::Duration;
use tollgate_storage::{Batch, Expect, Stored};

use crate::app::access::{is_member, user_organizations};
use crate::auth::password;
use crate::auth::service::new_user;
use crate::auth::tokens::AUTHORIZATION_CODE_PREFIX;
use crate::auth::ScopeSet;
use crate::credentials::bearer::find_client;
use crate::credentials::session;
use crate::domain::ids::OrganizationId;
use crate::domain::oauth2::{
    AuthorizationCode, BrowserSession, OAuth2Client, OAuth2Grant, OAuthSub, OAUTH2_CODE_BY_GRANT,
};
use crate::domain::organization::Organization;
use crate::domain::user::User;
use crate::error::ApiError;
use crate::oauth2::{field, parse_form, pkce, scopes};
use crate::state::AppState;
use crate::web::forms::{csrf_ok, csrf_token, safe_next};
use crate::web::{error_page, html, render, see_other};

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/oauth2/authorize", { get => authorize, post => consent });
    crate::resource!(cfg, "/oauth2/login", { get => login_page, post => login });
    crate::resource!(cfg, "/oauth2/signup", { get => signup_page, post => signup });
    crate::resource!(cfg, "/oauth2/logout", { post => logout });
    tokens::configure(cfg);
}

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage<'a> {
    csrf: &'a str,
    notice: Option<&'a str>,
    next: &'a str,
    next_encoded: String,
    email: &'a str,
    error: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "signup.html")]
struct SignupPage<'a> {
    csrf: &'a str,
    next: &'a str,
    next_encoded: String,
    email: &'a str,
    error: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "consent.html")]
struct ConsentPage {
    csrf: String,
    client_name: String,
    client_uri: Option<String>,
    logo_uri: Option<String>,
    tos_uri: Option<String>,
    policy_uri: Option<String>,
    user_email: String,
    scopes: Vec<(String, &'static str)>,
    hidden: Vec<(String, String)>,
    org_picker: bool,
    /// (id, slug, selected)
    orgs: Vec<(String, String, bool)>,
}

fn encode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The parameters of an authorization request that survive the consent form.
const PARAMS: &[&str] = &[
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "nonce",
    "prompt",
    "sub_type",
    "code_challenge",
    "code_challenge_method",
];

struct Validated {
    client: OAuth2Client,
    redirect_uri: String,
    redirect_uri_sent: bool,
    scopes: ScopeSet,
    state: Option<String>,
    nonce: Option<String>,
    challenge: Option<String>,
    prompt: Option<String>,
    organization: bool,
    sub: Option<String>,
}

/// The redirect back to the client carrying `params` (and `state`).
fn client_redirect(
    redirect_uri: &str,
    state: Option<&str>,
    params: &[(&str, &str)],
) -> HttpResponse {
    let location = match url::Url::parse(redirect_uri) {
        Ok(mut url) => {
            {
                let mut q = url.query_pairs_mut();
                for (k, v) in params {
                    q.append_pair(k, v);
                }
                if let Some(s) = state {
                    q.append_pair("state", s);
                }
            }
            url.to_string()
        }
        Err(_) => redirect_uri.to_string(),
    };
    HttpResponse::Found()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

fn redirect_error(v: &Validated, error: &str, description: &str) -> HttpResponse {
    client_redirect(
        &v.redirect_uri,
        v.state.as_deref(),
        &[("error", error), ("error_description", description)],
    )
}

/// Validates an authorization request. `Err` is the response to give instead.
async fn validate(
    state: &AppState,
    p: &HashMap<String, String>,
) -> Result<Result<Validated, HttpResponse>, ApiError> {
    let Some(client_id) = field(p, "client_id") else {
        return Err(error_page(
            400,
            "Invalid request",
            "invalid_client: missing \"client_id\".",
        ));
    };
    let Some(client) = find_client(state, client_id).await? else {
        return Err(error_page(
            400,
            "Invalid request",
            "invalid_client: unknown client.",
        ));
    };
    let client = client.value;
    let (redirect_uri, redirect_uri_sent) = match field(p, "redirect_uri") {
        Some(uri) if client.redirect_uris.iter().any(|r| r == uri) => (uri.to_string(), true),
        Some(_) => {
            return Err(error_page(
                400,
                "Invalid request",
                "invalid_request: the redirect_uri is not registered for this client.",
            ))
        }
        None => match client.redirect_uris.first() {
            Some(uri) => (uri.clone(), false),
            None => {
                return Err(error_page(
                    400,
                    "Invalid request",
                    "invalid_request: no redirect_uri.",
                ))
            }
        },
    };
    let sub_type = field(p, "sub_type").unwrap_or("user");
    let organization = match sub_type {
        "user" => false,
        "organization" => true,
        _ => {
            return Err(error_page(
                400,
                "Invalid request",
                "invalid_request: Invalid \"sub_type\".",
            ))
        }
    };
    let sub = field(p, "sub").map(str::to_string);
    if sub.is_some() && !organization {
        return Err(error_page(
            400,
            "Invalid request",
            "invalid_request: \"sub\" requires sub_type=organization.",
        ));
    }
    let mut v = Validated {
        client,
        redirect_uri,
        redirect_uri_sent,
        scopes: ScopeSet::empty(),
        state: field(p, "state").map(str::to_string),
        nonce: field(p, "nonce").map(str::to_string),
        challenge: None,
        prompt: field(p, "prompt").map(str::to_string),
        organization,
        sub,
    };
    if field(p, "response_type") != Some("code") {
        return Ok(Err(redirect_error(
            &v,
            "unsupported_response_type",
            "Only response_type=code is supported.",
        )));
    }
    let Some(scope) = field(p, "scope") else {
        return Ok(Err(redirect_error(
            &v,
            "invalid_scope",
            "Missing \"scope\".",
        )));
    };
    match scopes::parse_requested(scope) {
        Ok(s) if s.is_subset_of(v.client.scopes) => v.scopes = s,
        _ => {
            return Ok(Err(redirect_error(
                &v,
                "invalid_scope",
                "The requested scope is invalid, unknown, or not allowed for this client.",
            )))
        }
    }
    if !matches!(
        v.prompt.as_deref(),
        None | Some("none" | "login" | "consent")
    ) {
        return Ok(Err(redirect_error(
            &v,
            "invalid_request",
            "Invalid \"prompt\".",
        )));
    }
    match pkce::check_challenge(
        field(p, "code_challenge"),
        field(p, "code_challenge_method"),
        v.client.is_public(),
    ) {
        Ok(c) => v.challenge = c,
        Err(e) => return Ok(Err(redirect_error(&v, "invalid_request", e.description()))),
    }
    Ok(Ok(v))
}

fn query_map(req: &HttpRequest) -> HashMap<String, String> {
    parse_form(req.query_string().as_bytes())
}

/// The authorize URL for `next`, without `prompt=login` (once signed in, the user is not
/// asked again).
fn authorize_next(p: &HashMap<String, String>) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for name in PARAMS.iter().chain(["sub"].iter()) {
        if let Some(v) = field(p, name) {
            if *name == "prompt" && v == "login" {
                continue;
            }
            s.append_pair(name, v);
        }
    }
    format!("/oauth2/authorize?{}", s.finish())
}

/// Which e-mail + password form to show.
#[derive(Clone, Copy)]
enum CredentialsForm {
    Login,
    Signup,
}

/// The sign-in or sign-up page, with a fresh CSRF token, the `next` page and the problem
/// to show (if any).
#[allow(clippy::too_many_arguments)]
fn credentials_response(
    form: CredentialsForm,
    state: &AppState,
    req: &HttpRequest,
    next: &str,
    email: &str,
    error: Option<&str>,
    notice: Option<&str>,
    status: u16,
) -> Result<HttpResponse, ApiError> {
    let (csrf, cookie) = csrf_token(state, req);
    let next_encoded = encode(next);
    let body = match form {
        CredentialsForm::Login => render(&LoginPage {
            csrf: &csrf,
            notice,
            next,
            next_encoded,
            email,
            error,
        })?,
        CredentialsForm::Signup => render(&SignupPage {
            csrf: &csrf,
            next,
            next_encoded,
            email,
            error,
        })?,
    };
    Ok(html(status, body, cookie.into_iter().collect()))
}

/// A refusal of a sign-in or sign-up (rate limited, or no password-hashing slot free) as
/// the form itself with a message, keeping the status and the `Retry-After` /
/// `RateLimit` headers of the JSON answer; any other error is returned as it is.
fn refusal_page(
    error: ApiError,
    render: impl FnOnce(&str, u16) -> Result<HttpResponse, ApiError>,
) -> Result<HttpResponse, ApiError> {
    let message = match &error {
        ApiError::RateLimited(denied) => format!(
            "Too many attempts. Try again in {} second{}.",
            denied.retry_after_secs,
            if denied.retry_after_secs == 1 {
                ""
            } else {
                "s"
            }
        ),
        ApiError::Unavailable => "The service is busy. Try again in a moment.".to_string(),
        _ => return Err(error),
    };
    let json = actix_web::ResponseError::error_response(&error);
    let mut page = render(&message, json.status().as_u16())?;
    for name in ["retry-after", "ratelimit", "ratelimit-policy"] {
        if let Some(v) = json.headers().get(name) {
            page.headers_mut()
                .insert(header::HeaderName::from_static(name), v.clone());
        }
    }
    Ok(page)
}

fn login_response(
    state: &AppState,
    req: &HttpRequest,
    next: &str,
    email: &str,
    error: Option<&str>,
    status: u16,
) -> Result<HttpResponse, ApiError> {
    credentials_response(
        CredentialsForm::Login,
        state,
        req,
        next,
        email,
        error,
        None,
        status,
    )
}

/// Issues a code for a consented request and redirects to the client with it.
/// Issues an authorization code and redirects to the client with it.
///
/// Codes are throttled per (user, client) (`rate_limits.authorization_codes_per_user`), and
/// at most `oauth2.max_outstanding_codes` unexpired codes of one (user, client) exist at
/// once: the oldest are dropped in the write that stores the new one, together with the
/// expired ones, so a loop over the consent page keeps a bounded number of records.
async fn issue_code(
    state: &AppState,
    v: &Validated,
    sub: OAuthSub,
    session: &BrowserSession,
) -> Result<HttpResponse, ApiError> {
    if let Err(e) = state
        .limits
        .authorization_code(&session.user_id, &v.client.client_id)
    {
        return refusal_page(e.into(), |msg, status| {
            Ok(actix_web::ResponseError::error_response(&error_page(
                status,
                "Too many requests",
                msg,
            )))
        });
    }
    let code = crate::auth::tokens::generate(AUTHORIZATION_CODE_PREFIX, 32);
    let now = state.now();
    let record = AuthorizationCode {
        code_hash: state.hasher.hash(&code).to_vec(),
        client_id: v.client.client_id.clone(),
        redirect_uri: v.redirect_uri.clone(),
        redirect_uri_sent: v.redirect_uri_sent,
        scopes: v.scopes,
        sub,
        user_id: session.user_id,
        nonce: v.nonce.clone(),
        code_challenge: v.challenge.clone(),
        auth_time: session.auth_time,
        created_at: now,
        expires_at: now
            + Duration::seconds(state.settings.oauth2.authorization_code_ttl_secs as i64),
    };
    let tenant = AuthorizationCode::grant_tenant(session.user_id, &v.client.client_id);
    // Every code of this (user, client), soonest expiry first: the expired ones and the
    // oldest beyond the cap go in the same write as the new one.
    let existing = state
        .store
        .index_range(OAUTH2_CODE_BY_GRANT, &tenant, &[], None)
        .await?;
    let live_from = tollgate_actors::domain::time_key(now);
    let live = state
        .store
        .index_range(OAUTH2_CODE_BY_GRANT, &tenant, &live_from, None)
        .await?
        .len();
    let keep = state
        .settings
        .oauth2
        .max_outstanding_codes
        .saturating_sub(1);
    let drop_count = (existing.len() - live) + live.saturating_sub(keep);
    let mut batch = Batch::new();
    for id in existing.iter().take(drop_count) {
        batch.delete::<AuthorizationCode>(id, Expect::Any);
    }
    batch.put(&record, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok(client_redirect(
        &v.redirect_uri,
        v.state.as_deref(),
        &[("code", &code)],
    ))
}

async fn grant_covers(state: &AppState, sub: &OAuthSub, v: &Validated) -> Result<bool, ApiError> {
    Ok(state
        .store
        .get::<OAuth2Grant>(&OAuth2Grant::key(sub, &v.client.client_id))
        .await?
        .is_some_and(|g| v.scopes.is_subset_of(g.value.scopes)))
}

/// The organization a consent names, if the user is a member of it.
async fn member_org(
    state: &AppState,
    session: &BrowserSession,
    sub: Option<&str>,
) -> Result<Option<OrganizationId>, ApiError> {
    let Some(org) = sub.and_then(|s| s.parse::<OrganizationId>().ok()) else {
        return Ok(None);
    };
    let visible = state
        .store
        .get::<Organization>(&org.key())
        .await?
        .is_some_and(|o| o.value.is_visible());
    Ok((visible && is_member(state, session.user_id, org).await?).then_some(org))
}

fn invalid_sub() -> ApiError {
    ApiError::OAuth {
        status: 400,
        error: "invalid_sub",
        description: Some("Choose an organization you are a member of.".into()),
    }
}

async fn authorize(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let p = query_map(&req);
    let v = match validate(&state, &p).await? {
        Ok(v) => v,
        Err(res) => return Ok(res),
    };
    let current = session::current(&state, &req).await?;
    let next = authorize_next(&p);
    let session = match (current, v.prompt.as_deref()) {
        (None, Some("none")) => {
            return Ok(redirect_error(
                &v,
                "login_required",
                "The user is not signed in.",
            ))
        }
        (_, Some("login")) | (None, _) => {
            return login_response(&state, &req, &next, "", None, 200)
        }
        (Some(s), _) => s.value,
    };
    let org = if v.organization {
        match v.sub.as_deref() {
            Some(sub) => Some(
                member_org(&state, &session, Some(sub))
                    .await?
                    .ok_or_else(invalid_sub)?,
            ),
            None => None,
        }
    } else {
        None
    };
    let grant_sub = match (v.organization, org) {
        (false, _) => Some(OAuthSub::User(session.user_id)),
        (true, Some(o)) => Some(OAuthSub::Organization(o)),
        (true, None) => None,
    };
    if let Some(sub) = grant_sub {
        if v.prompt.as_deref() != Some("consent") && grant_covers(&state, &sub, &v).await? {
            return issue_code(&state, &v, sub, &session).await;
        }
    }
    if v.prompt.as_deref() == Some("none") {
        return Ok(redirect_error(
            &v,
            "consent_required",
            "The user has not consented to this request.",
        ));
    }
    consent_page(&state, &req, &p, &v, &session, org).await
}

async fn consent_page(
    state: &AppState,
    req: &HttpRequest,
    p: &HashMap<String, String>,
    v: &Validated,
    session: &BrowserSession,
    chosen: Option<OrganizationId>,
) -> Result<HttpResponse, ApiError> {
    let (csrf, cookie) = csrf_token(state, req);
    let user_email = state
        .store
        .get::<User>(&session.user_id.key())
        .await?
        .map(|u| u.value.email)
        .unwrap_or_default();
    let mut orgs = Vec::new();
    if v.organization {
        for id in user_organizations(state, session.user_id).await? {
            if let Some(o) = state.store.get::<Organization>(&id.key()).await? {
                if o.value.is_visible() {
                    orgs.push((id.to_string(), o.value.slug, chosen == Some(id)));
                }
            }
        }
    }
    let hidden = PARAMS
        .iter()
        .filter_map(|name| field(p, name).map(|v| (name.to_string(), v.to_string())))
        .filter(|(name, value)| !(name == "prompt" && value == "login"))
        .collect();
    let page = ConsentPage {
        csrf,
        client_name: v.client.client_name.clone(),
        client_uri: v.client.client_uri.clone(),
        logo_uri: v.client.logo_uri.clone(),
        tos_uri: v.client.tos_uri.clone(),
        policy_uri: v.client.policy_uri.clone(),
        user_email,
        scopes: v
            .scopes
            .iter()
            .map(|s| (s.as_str().to_string(), scopes::describe(s)))
            .collect(),
        hidden,
        org_picker: v.organization,
        orgs,
    };
    Ok(html(200, render(&page)?, cookie.into_iter().collect()))
}

fn csrf_failure() -> ApiError {
    error_page(403, "Request refused", "The form has expired or did not come from this site (CSRF check failed). Go back, reload the page and try again.")
}

async fn consent(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let form = parse_form(&body);
    if !csrf_ok(&state, &req, field(&form, "csrf_token")) {
        return Err(csrf_failure());
    }
    let Some(session) = session::current(&state, &req).await? else {
        return Err(error_page(
            401,
            "Sign in required",
            "Your session has ended; sign in again.",
        ));
    };
    let session = session.value;
    let v = match validate(&state, &form).await? {
        Ok(v) => v,
        Err(res) => return Ok(res),
    };
    match field(&form, "action") {
        Some("deny") => Ok(redirect_error(
            &v,
            "access_denied",
            "The user denied the request.",
        )),
        Some("allow") => {
            let sub = if v.organization {
                let org = member_org(&state, &session, v.sub.as_deref())
                    .await?
                    .ok_or_else(invalid_sub)?;
                OAuthSub::Organization(org)
            } else {
                OAuthSub::User(session.user_id)
            };
            let now = state.now();
            let key = OAuth2Grant::key(&sub, &v.client.client_id);
            let existing: Option<Stored<OAuth2Grant>> = state.store.get(&key).await?;
            let grant = OAuth2Grant {
                sub,
                client_id: v.client.client_id.clone(),
                scopes: v.scopes,
                created_at: existing.as_ref().map(|g| g.value.created_at).unwrap_or(now),
                modified_at: existing.as_ref().map(|_| now),
            };
            let mut batch = Batch::new();
            batch.put(&grant, Expect::Any)?;
            state.store.commit_durable(&batch).await?;
            issue_code(&state, &v, sub, &session).await
        }
        _ => Err(error_page(400, "Invalid request", "Choose Allow or Deny.")),
    }
}

/// The device cookie (OWASP's "device cookies"): a browser that signed in to an account
/// holds a keyed hash of the account's address, and its sign-ins to that account are not
/// subject to the account-wide ceiling, so a distributed guess at the account never holds
/// back the owner's own browser.
mod device {
    use actix_web::cookie::Cookie;
    use actix_web::HttpRequest;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;

    use crate::credentials::session::cookie as page_cookie;
    use crate::state::AppState;

    pub const COOKIE: &str = "tollgate_device";

    fn input(email: &str) -> String {
        format!(
            "device-cookie:{}",
            tollgate_actors::domain::email::normalize_email(email)
        )
    }

    fn value(state: &AppState, email: &str) -> String {
        URL_SAFE_NO_PAD.encode(state.hasher.hash(&input(email)))
    }

    pub fn is_known(state: &AppState, req: &HttpRequest, email: &str) -> bool {
        req.cookie(COOKIE).is_some_and(|c| {
            URL_SAFE_NO_PAD
                .decode(c.value())
                .is_ok_and(|mac| state.hasher.verify(&input(email), &mac))
        })
    }

    /// Set on every successful sign-in; kept for a year.
    pub fn cookie(state: &AppState, email: &str) -> Cookie<'static> {
        page_cookie(
            state,
            COOKIE,
            value(state, email),
            Some(chrono::Duration::days(365)),
        )
    }
}

/// What the sign-in page says after a sign-up.
const SIGNED_UP: &str = "Your account is ready: sign in with your e-mail address and \
password. If you already had an account with this address, it is unchanged: sign in with \
its password.";

async fn login_page(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q = query_map(&req);
    let next = safe_next(field(&q, "next"));
    // After a sign-up, which answers the same whether the address was free or not.
    let notice = (field(&q, "signed_up") == Some("1")).then_some(SIGNED_UP);
    credentials_response(
        CredentialsForm::Login,
        &state,
        &req,
        &next,
        "",
        None,
        notice,
        200,
    )
}

async fn login(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let form = parse_form(&body);
    if !csrf_ok(&state, &req, field(&form, "csrf_token")) {
        return Err(csrf_failure());
    }
    let next = safe_next(field(&form, "next"));
    let email = field(&form, "email").unwrap_or("").trim().to_string();
    let password = field(&form, "password").unwrap_or("").to_string();
    // Per address, per account from this address with its delay after failures from here,
    // and account-wide unless this browser signed in to the account before; unknown
    // accounts count the same, so a 429 does not tell who has one.
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    let known_device = device::is_known(&state, &req, &email);
    if let Err(e) = state.limits.sign_in(ip, &email, known_device) {
        return refusal_page(e.into(), |msg, status| {
            login_response(&state, &req, &next, &email, Some(msg), status)
        });
    }
    let user = match state.store.lookup_unique(&User::email_key(&email)).await? {
        Some(id) => state.store.get::<User>(&id).await?.map(|u| u.value),
        None => None,
    };
    let stored_hash = user.as_ref().and_then(|u| u.password_hash.clone());
    // Unknown accounts cost an argon2 check too: timing does not reveal who has one.
    let verified = state
        .password_pool
        .run(move || password::verify_or_burn(&password, stored_hash.as_deref()))
        .await;
    let ok = match verified {
        Ok(ok) => ok,
        Err(e) => {
            return refusal_page(e.into(), |msg, status| {
                login_response(&state, &req, &next, &email, Some(msg), status)
            })
        }
    };
    match user {
        Some(u) if ok => {
            state.limits.sign_in_succeeded(ip, &email);
            let cookie = session::start(&state, u.id, state.now()).await?;
            Ok(see_other(
                &next,
                vec![cookie, device::cookie(&state, &email)],
            ))
        }
        _ => {
            state.limits.sign_in_failed(ip, &email);
            login_response(
                &state,
                &req,
                &next,
                &email,
                Some("Invalid e-mail or password."),
                401,
            )
        }
    }
}

fn signup_response(
    state: &AppState,
    req: &HttpRequest,
    next: &str,
    email: &str,
    error: Option<&str>,
    status: u16,
) -> Result<HttpResponse, ApiError> {
    credentials_response(
        CredentialsForm::Signup,
        state,
        req,
        next,
        email,
        error,
        None,
        status,
    )
}

async fn signup_page(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q = query_map(&req);
    let next = safe_next(field(&q, "next"));
    signup_response(&state, &req, &next, "", None, 200)
}

fn plausible_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && email.len() <= 254
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
}

async fn signup(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let form = parse_form(&body);
    if !csrf_ok(&state, &req, field(&form, "csrf_token")) {
        return Err(csrf_failure());
    }
    let next = safe_next(field(&form, "next"));
    let email = field(&form, "email").unwrap_or("").trim().to_string();
    let password = field(&form, "password").unwrap_or("").to_string();
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    if let Err(e) = state.limits.sign_up(ip, &email) {
        return refusal_page(e.into(), |msg, status| {
            signup_response(&state, &req, &next, &email, Some(msg), status)
        });
    }
    if !plausible_email(&email) {
        return signup_response(
            &state,
            &req,
            &next,
            &email,
            Some("Enter a valid e-mail address."),
            422,
        );
    }
    if password.chars().count() < 8 || password.len() > 1024 {
        return signup_response(
            &state,
            &req,
            &next,
            &email,
            Some("The password must have 8 to 1024 characters."),
            422,
        );
    }
    // A taken address answers exactly as a free one (the same redirect, after the same
    // argon2 work and a durable write's wait), so sign-up does not reveal who has an
    // account; the new user is asked to sign in, which the real owner of a taken address
    // does with their own password, their account untouched.
    let hashed = state
        .password_pool
        .run(move || password::hash(&password))
        .await;
    let hash = match hashed {
        Ok(hash) => hash.map_err(ApiError::internal)?,
        Err(e) => {
            return refusal_page(e.into(), |msg, status| {
                signup_response(&state, &req, &next, &email, Some(msg), status)
            })
        }
    };
    let user = new_user(&email, Some(hash), false, state.now());
    if !crate::app::access::sign_up(&state, &user).await? {
        tracing::info!("sign-up with an address that has an account; nothing created");
    }
    Ok(see_other(
        &format!("/oauth2/login?signed_up=1&next={}", encode(&next)),
        Vec::new(),
    ))
}

async fn logout(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let form = parse_form(&body);
    if !csrf_ok(&state, &req, field(&form, "csrf_token")) {
        return Err(csrf_failure());
    }
    let cookie = session::end(&state, &req).await?;
    Ok(see_other("/oauth2/login", vec![cookie]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_checked_loosely() {
        assert!(plausible_email("a@b.co"));
        assert!(!plausible_email("a@b"));
        assert!(!plausible_email("@b.co"));
        assert!(!plausible_email("a b@c.co"));
    }

    #[test]
    fn next_drops_prompt_login() {
        let p = parse_form(b"client_id=c&prompt=login&scope=openid&state=s");
        let next = authorize_next(&p);
        assert!(next.starts_with("/oauth2/authorize?"));
        assert!(next.contains("client_id=c"));
        assert!(!next.contains("prompt"));
    }

    #[test]
    fn pages_escape_and_carry_their_fields() {
        let html = crate::web::ErrorPage {
            title: "<b>",
            message: "x",
        }
        .render()
        .unwrap();
        assert!(
            !html.contains("<b>") && html.contains("&#60;b&#62;"),
            "{html}"
        );
        assert!(html.contains("name=\"viewport\""));
    }
}
