//! Browser sessions of the authorization pages, and CSRF protection of their forms.
//!
//! The session cookie holds a random token whose keyed hash finds the session record; it is
//! HttpOnly, SameSite=Lax, and Secure when the pages are served over https. Every form also
//! carries a CSRF token that must equal the value of a separate HttpOnly cookie (a
//! double-submit cookie, which works before sign-in too); cross-site pages can neither read
//! that cookie nor set it.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::HttpRequest;
use chrono::{DateTime, Duration, Utc};
use tollgate_storage::{Batch, Expect, Stored};

use crate::domain::ids::{BrowserSessionId, UserId};
use crate::domain::oauth2::BrowserSession;
use crate::error::ApiError;
use crate::state::AppState;

pub const SESSION_COOKIE: &str = "tollgate_session";
pub const CSRF_COOKIE: &str = "tollgate_csrf";
const SESSION_PREFIX: &str = "tollgate_s_";

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

fn cookie(
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

/// The signed-in user of this browser, if any.
pub fn current(
    state: &AppState,
    req: &HttpRequest,
) -> Result<Option<Stored<BrowserSession>>, ApiError> {
    let Some(c) = req.cookie(SESSION_COOKIE) else {
        return Ok(None);
    };
    let token = c.value();
    if !token.starts_with(SESSION_PREFIX) {
        return Ok(None);
    }
    let hash = state.hasher.hash(token);
    let Some(id) = state
        .store
        .lookup_unique(&BrowserSession::token_key(&hash))?
    else {
        return Ok(None);
    };
    let Some(session) = state.store.get::<BrowserSession>(&id)? else {
        return Ok(None);
    };
    if state.now() >= session.value.expires_at
        || !state.hasher.verify(token, &session.value.token_hash)
    {
        return Ok(None);
    }
    Ok(Some(session))
}

/// Starts a session for `user` (after a password check) and returns its cookie.
pub async fn start(
    state: &AppState,
    user: UserId,
    now: DateTime<Utc>,
) -> Result<Cookie<'static>, ApiError> {
    let token = crate::auth::tokens::generate(SESSION_PREFIX, 32);
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
    if let Some(s) = current(state, req)? {
        let mut batch = Batch::new();
        batch.delete::<BrowserSession>(&s.value.id.key(), Expect::Any);
        state.store.commit_durable(&batch).await?;
    }
    let mut c = cookie(state, SESSION_COOKIE, String::new(), None);
    c.make_removal();
    Ok(c)
}

/// The CSRF token of this browser, and the cookie to set when it had none.
pub fn csrf_token(state: &AppState, req: &HttpRequest) -> (String, Option<Cookie<'static>>) {
    match req.cookie(CSRF_COOKIE) {
        Some(c) if c.value().len() >= 32 => (c.value().to_string(), None),
        _ => {
            let token = crate::auth::tokens::generate("", 32);
            (token.clone(), Some(cookie(state, CSRF_COOKIE, token, None)))
        }
    }
}

/// Whether a posted form's `csrf_token` matches the browser's CSRF cookie.
pub fn csrf_ok(req: &HttpRequest, posted: Option<&str>) -> bool {
    match (req.cookie(CSRF_COOKIE), posted) {
        (Some(c), Some(p)) if c.value().len() >= 32 => {
            let (a, b) = (c.value().as_bytes(), p.as_bytes());
            a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
        }
        _ => false,
    }
}

/// Where a sign-in may return to by default.
const DEFAULT_NEXT: &str = "/settings/tokens";

/// A path of these pages to return to after signing in; anything else becomes the settings
/// page. Only paths under `/oauth2/` and `/settings/` are accepted, and none with a control
/// character, whitespace or a backslash: browsers drop tabs and newlines from a URL and read
/// `\` as `/`, so `/\t/evil.com` or `/\\evil.com` would leave the site.
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n)
            if (n.starts_with("/oauth2/") || n.starts_with("/settings/"))
                && !n
                    .chars()
                    .any(|c| c.is_control() || c.is_whitespace() || c == '\\') =>
        {
            n.to_string()
        }
        _ => DEFAULT_NEXT.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_must_be_a_local_path() {
        assert_eq!(
            safe_next(Some("/oauth2/authorize?x=1")),
            "/oauth2/authorize?x=1"
        );
        assert_eq!(safe_next(Some("//evil.com/")), "/settings/tokens");
        assert_eq!(safe_next(Some("https://evil.com/")), "/settings/tokens");
        assert_eq!(safe_next(Some("/\\evil.com")), "/settings/tokens");
        assert_eq!(safe_next(None), "/settings/tokens");
    }

    #[test]
    fn next_refuses_every_way_out_of_the_site() {
        for bad in [
            "",
            "/",
            "//evil.com",
            "///evil.com",
            "/\\evil.com",
            "\\\\evil.com",
            "/\t/evil.com",
            "/\n/evil.com",
            "/\r/evil.com",
            " /oauth2/authorize",
            "/oauth2/authorize x",
            "/oauth2/\\/evil.com",
            "/oauth2/\u{0}",
            "/\u{a0}/evil.com",
            "https://evil.com",
            "http:/evil.com",
            "javascript:alert(1)",
            "evil.com",
            "/evil",
            "/oauth2",
        ] {
            assert_eq!(safe_next(Some(bad)), "/settings/tokens", "{bad:?}");
        }
        // `/%09/evil.com` arrives decoded.
        let decoded: String = form_urlencoded::parse(b"next=/%09/evil.com")
            .map(|(_, v)| v.into_owned())
            .collect();
        assert_eq!(decoded, "/\t/evil.com");
        assert_eq!(safe_next(Some(&decoded)), "/settings/tokens");
        for good in [
            "/oauth2/authorize?response_type=code&client_id=polar_ci_x",
            "/settings/tokens",
        ] {
            assert_eq!(safe_next(Some(good)), good);
        }
    }

    #[test]
    fn csrf_requires_matching_cookie_and_field() {
        let token = "a".repeat(43);
        let req = actix_web::test::TestRequest::default()
            .cookie(Cookie::new(CSRF_COOKIE, token.clone()))
            .to_http_request();
        assert!(csrf_ok(&req, Some(&token)));
        assert!(!csrf_ok(&req, Some(&"b".repeat(43))));
        assert!(!csrf_ok(&req, None));
        let bare = actix_web::test::TestRequest::default().to_http_request();
        assert!(!csrf_ok(&bare, Some(&token)));
    }
}
