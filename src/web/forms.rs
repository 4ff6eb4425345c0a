//! The forms of the pages (sign-in, sign-up, consent, tokens, dashboard): CSRF protection,
//! and where a sign-in returns to.
//!
//! A posted form must pass two checks ([`csrf_ok`]):
//! - **Same origin**: a `Sec-Fetch-Site` other than `same-origin` (or `none`, a user's own
//!   navigation) is refused, and so is an `Origin` that is not this service's (its public
//!   URL, its pages' URL, or the host the request was sent to); `Origin: null` included.
//! - **A token bound to the session**: the form carries an HMAC, under the server's key, of
//!   a random nonce held in an HttpOnly cookie and of the browser's session cookies (none
//!   before sign-in): the seller's, and on the customer portal's pages the buyer's. A pair an attacker chose (a cookie it planted and a field to match)
//!   is refused, as is a token from another session: only this server can make one.
//!
//! The session cookie itself is `crate::credentials::session`'s.

use actix_web::cookie::Cookie;
use actix_web::http::header;
use actix_web::HttpRequest;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

use crate::credentials::session::{auth_url, cookie, SESSION_COOKIE};
use crate::state::AppState;
use crate::web::portal::PORTAL_COOKIE;

pub const CSRF_COOKIE: &str = "tollgate_csrf";

/// What a form token of this browser's sessions MACs, for the nonce `nonce`: the seller's
/// session cookie and, on the customer portal's pages (its cookie's path), the buyer's.
fn token_input(req: &HttpRequest, nonce: &str) -> String {
    let session = req
        .cookie(SESSION_COOKIE)
        .map(|c| c.value().to_string())
        .unwrap_or_default();
    match req.cookie(PORTAL_COOKIE) {
        // Cookie values hold no NUL: the two shapes cannot meet.
        Some(portal) => format!("csrf\0{nonce}\0{session}\0portal\0{}", portal.value()),
        None => format!("csrf\0{nonce}\0{session}"),
    }
}

/// The token a form of this browser's session carries, for the nonce `nonce`.
fn bound_token(state: &AppState, req: &HttpRequest, nonce: &str) -> String {
    let mac = state.hasher.hash(&token_input(req, nonce));
    URL_SAFE_NO_PAD.encode(mac)
}

/// The CSRF token of this browser's forms, and the nonce cookie to set when it had none.
pub fn csrf_token(state: &AppState, req: &HttpRequest) -> (String, Option<Cookie<'static>>) {
    match req.cookie(CSRF_COOKIE) {
        Some(c) if c.value().len() >= 32 => (bound_token(state, req, c.value()), None),
        _ => {
            let nonce = crate::auth::tokens::generate("", 32);
            let token = bound_token(state, req, &nonce);
            (token, Some(cookie(state, CSRF_COOKIE, nonce, None)))
        }
    }
}

/// Whether a form post comes from this service's own pages: no cross-site
/// `Sec-Fetch-Site`, no foreign `Origin`.
pub fn same_origin_form(state: &AppState, req: &HttpRequest) -> bool {
    if let Some(site) = req.headers().get("sec-fetch-site") {
        if !matches!(site.as_bytes(), b"same-origin" | b"none") {
            return false;
        }
    }
    let Some(origin) = req.headers().get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let origin = origin.trim().trim_end_matches('/');
    let Ok(parsed) = url::Url::parse(origin) else {
        return false;
    };
    let serialized = parsed.origin();
    if !serialized.is_tuple() {
        return false; // `null`
    }
    let serialized = serialized.ascii_serialization();
    let own = [state.public_url.clone(), auth_url(state)];
    if own.iter().any(|u| {
        url::Url::parse(u)
            .ok()
            .is_some_and(|u| u.origin().ascii_serialization() == serialized)
    }) {
        return true;
    }
    // The host the browser sent the request to (it cannot be set by a page's script).
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_ascii_lowercase);
    let authority = match (parsed.host_str(), parsed.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        _ => return false,
    };
    host.is_some_and(|h| h == authority.to_ascii_lowercase())
}

/// Whether a posted form passes both checks: same origin, and its `csrf_token` is the one
/// this server made for the browser's nonce cookie and session.
pub fn csrf_ok(state: &AppState, req: &HttpRequest, posted: Option<&str>) -> bool {
    if !same_origin_form(state, req) {
        return false;
    }
    match (req.cookie(CSRF_COOKIE), posted) {
        (Some(c), Some(p)) if c.value().len() >= 32 => URL_SAFE_NO_PAD
            .decode(p)
            .is_ok_and(|mac| state.hasher.verify(&token_input(req, c.value()), &mac)),
        _ => false,
    }
}

/// Where a sign-in returns to by default: the seller's dashboard.
const DEFAULT_NEXT: &str = "/dashboard";

/// A path of these pages to return to after signing in; anything else becomes the dashboard.
/// Only `/dashboard` and paths under `/dashboard/`, `/oauth2/` and `/settings/` are accepted, and none with a control
/// character, whitespace or a backslash: browsers drop tabs and newlines from a URL and read
/// `\` as `/`, so `/\t/evil.com` or `/\\evil.com` would leave the site.
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n)
            if (n.starts_with("/oauth2/")
                || n.starts_with("/settings/")
                || n == "/dashboard"
                || n.starts_with("/dashboard/")
                || n.starts_with("/dashboard?"))
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
    fn the_token_is_bound_to_the_portal_session_too() {
        use actix_web::cookie::Cookie;
        use actix_web::test::TestRequest;
        let plain = TestRequest::default()
            .cookie(Cookie::new(SESSION_COOKIE, "s"))
            .to_http_request();
        let portal = |value: &str| {
            TestRequest::default()
                .cookie(Cookie::new(SESSION_COOKIE, "s"))
                .cookie(Cookie::new(PORTAL_COOKIE, value.to_string()))
                .to_http_request()
        };
        // Without the portal's cookie, as before (the dashboard's tokens are unchanged).
        assert_eq!(token_input(&plain, "n"), "csrf\0n\0s");
        let a = token_input(&portal("polar_cst_a"), "n");
        let b = token_input(&portal("polar_cst_b"), "n");
        assert_ne!(a, b);
        assert_ne!(a, token_input(&plain, "n"));
    }

    #[test]
    fn next_must_be_a_local_path() {
        assert_eq!(
            safe_next(Some("/oauth2/authorize?x=1")),
            "/oauth2/authorize?x=1"
        );
        assert_eq!(safe_next(Some("//evil.com/")), "/dashboard");
        assert_eq!(safe_next(Some("https://evil.com/")), "/dashboard");
        assert_eq!(safe_next(Some("/\\evil.com")), "/dashboard");
        assert_eq!(safe_next(None), "/dashboard");
        assert_eq!(
            safe_next(Some("/dashboard/x/orders?page=2")),
            "/dashboard/x/orders?page=2"
        );
        assert_eq!(safe_next(Some("/dashboardx")), "/dashboard");
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
            assert_eq!(safe_next(Some(bad)), "/dashboard", "{bad:?}");
        }
        // `/%09/evil.com` arrives decoded.
        let decoded: String = form_urlencoded::parse(b"next=/%09/evil.com")
            .map(|(_, v)| v.into_owned())
            .collect();
        assert_eq!(decoded, "/\t/evil.com");
        assert_eq!(safe_next(Some(&decoded)), "/dashboard");
        for good in [
            "/oauth2/authorize?response_type=code&client_id=polar_ci_x",
            "/settings/tokens",
        ] {
            assert_eq!(safe_next(Some(good)), good);
        }
    }
}
