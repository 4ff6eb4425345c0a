//! The browser session of the authorization pages (Polar's web session): its cookie, the
//! user it names, and the rule for API calls it authenticates.
//!
//! The session cookie holds a random token whose keyed hash finds the session record; it is
//! HttpOnly, SameSite=Lax, and Secure when the pages are served over https. A session is a
//! User with `web_default` until it expires or the user signs out. API calls that use it are
//! CSRF-checked ([`same_origin_json`]).

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::header;
use actix_web::HttpRequest;
use chrono::{DateTime, Duration, Utc};
use tollgate_storage::{Batch, Expect, Stored};

use crate::auth::principal::{AuthMethod, Principal, Subject};
use crate::auth::tokens::{generate, BROWSER_SESSION_PREFIX};
use crate::auth::Scope;
use crate::domain::ids::{BrowserSessionId, UserId};
use crate::domain::oauth2::BrowserSession;
use crate::error::ApiError;
use crate::state::AppState;

pub const SESSION_COOKIE: &str = "tollgate_session";

fn secure(state: &AppState) -> bool {
    auth_url(state).starts_with("https://")
}

/// Base URL of the browser pages.
pub fn auth_url(state: &AppState) -> String {
    let configured = state.settings.auth.auth_url.trim_end_matches('/');
    if configured.is_empty() {
        state.public_url.clone()
    } else {
        configured.to_string()
    }
}

/// A cookie of the pages: HttpOnly, SameSite=Lax, on `/`, Secure over https; a session
/// cookie (no max age) unless `max_age` is given.
pub fn cookie(
    state: &AppState,
    name: &'static str,
    value: String,
    max_age: Option<Duration>,
) -> Cookie<'static> {
    let mut c = Cookie::build(name, value)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(secure(state))
        .finish();
    if let Some(age) =
        max_age.and_then(|a| actix_web::cookie::time::Duration::try_from(a.to_std().ok()?).ok())
    {
        c.set_max_age(age);
    }
    c
}

/// The signed-in user's session in this browser, if any (unexpired).
pub async fn current(
    state: &AppState,
    req: &HttpRequest,
) -> Result<Option<Stored<BrowserSession>>, ApiError> {
    let Some(c) = req.cookie(SESSION_COOKIE) else {
        return Ok(None);
    };
    let token = c.value();
    if !token.starts_with(BROWSER_SESSION_PREFIX) {
        return Ok(None);
    }
    let hash = state.hasher.hash(token);
    let Some(id) = state
        .store
        .lookup_unique(&BrowserSession::token_key(&hash))
        .await?
    else {
        return Ok(None);
    };
    let Some(session) = state.store.get::<BrowserSession>(&id).await? else {
        return Ok(None);
    };
    if state.now() >= session.value.expires_at
        || !state.hasher.verify(token, &session.value.token_hash)
    {
        return Ok(None);
    }
    Ok(Some(session))
}

/// The principal of an API call without a bearer token: the session's user with
/// `web_default`, once the call passed [`same_origin_json`]; `None` without a session.
pub async fn principal(state: &AppState, req: &HttpRequest) -> Result<Option<Principal>, ApiError> {
    let Some(session) = current(state, req).await? else {
        return Ok(None);
    };
    same_origin_json(state, req)?;
    Ok(Some(Principal {
        subject: Subject::User(session.value.user_id),
        scopes: [Scope::WebDefault].into_iter().collect(),
        method: AuthMethod::WebSession,
    }))
}

/// Starts a session for `user` (after a password check) and returns its cookie.
pub async fn start(
    state: &AppState,
    user: UserId,
    now: DateTime<Utc>,
) -> Result<Cookie<'static>, ApiError> {
    let token = generate(BROWSER_SESSION_PREFIX, 32);
    let ttl = Duration::seconds(state.settings.oauth2.session_ttl_secs as i64);
    let session = BrowserSession {
        id: BrowserSessionId::new(),
        token_hash: state.hasher.hash(&token).to_vec(),
        user_id: user,
        auth_time: now,
        expires_at: now + ttl,
    };
    let mut batch = Batch::new();
    batch.put(&session, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok(cookie(state, SESSION_COOKIE, token, Some(ttl)))
}

/// Ends the session of this browser; returns the cookie that clears it.
pub async fn end(state: &AppState, req: &HttpRequest) -> Result<Cookie<'static>, ApiError> {
    if let Some(s) = current(state, req).await? {
        let mut batch = Batch::new();
        batch.delete::<BrowserSession>(&s.value.id.key(), Expect::Any);
        state.store.commit_durable(&batch).await?;
    }
    let mut c = cookie(state, SESSION_COOKIE, String::new(), None);
    c.make_removal();
    Ok(c)
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
        let own = [state.public_url.clone(), auth_url(state)];
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
