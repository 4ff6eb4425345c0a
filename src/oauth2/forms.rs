//! The forms of the authorization pages: CSRF protection, and where a sign-in returns to.
//!
//! Every form carries a CSRF token that must equal the value of a separate HttpOnly cookie
//! (a double-submit cookie, which works before sign-in too); cross-site pages can neither
//! read that cookie nor set it. The session cookie itself is `crate::auth::session`'s.

use actix_web::cookie::Cookie;
use actix_web::HttpRequest;

use crate::auth::session::cookie;
use crate::state::AppState;

pub const CSRF_COOKIE: &str = "tollgate_csrf";

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
