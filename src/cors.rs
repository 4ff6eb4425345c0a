//! Cross-origin requests (CORS) from browser apps, with two policies:
//!
//! - the public endpoints a browser app calls directly (license-key validate, activate and
//!   deactivate; the OAuth token, introspection, revocation and userinfo endpoints;
//!   `/.well-known/*`) allow any origin: `Access-Control-Allow-Origin: *`, no credentials;
//! - every other route allows only the origins listed in `cors.allowed_origins` (none by
//!   default), echoed back with `Vary: Origin`, no credentials either (the API takes bearer
//!   tokens; the session-cookie API stays same-origin, see the CSRF rules).
//!
//! A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from an
//! allowed origin answers 204 with the allowed methods and headers; from any other origin
//! it goes on to the routes (405 or 404 in the JSON shape) and carries no CORS header.
//!
//! Hand-written rather than `actix-cors`: that crate applies one policy per `wrap` (the
//! routes are registered in one flat list, so the two policies would need a path test in
//! its origin callback anyway) and answers preflights 200, where 204 is wanted.

use std::collections::HashSet;

use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{Error, HttpResponse};

/// Methods a preflight allows.
pub const ALLOWED_METHODS: &str = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
/// Request headers a preflight allows.
pub const ALLOWED_HEADERS: &str =
    "Authorization, Content-Type, Idempotency-Key, Polar-Version, Polar-Organization, \
     Accept-Signature";
/// Response headers a script may read.
pub const EXPOSED_HEADERS: &str = "Retry-After, RateLimit, RateLimit-Policy, WWW-Authenticate, \
                                   Location, Idempotency-Replayed, Polar-Version, \
                                   Content-Digest, Signature-Input, Signature";
/// Seconds a browser may cache a preflight's answer.
pub const MAX_AGE_SECS: &str = "600";

/// Paths any origin may call.
pub fn is_public(path: &str) -> bool {
    let path = path.strip_suffix('/').unwrap_or(path);
    path.starts_with("/.well-known/")
        || matches!(
            path,
            "/v1/customer-portal/license-keys/validate"
                | "/v1/customer-portal/license-keys/activate"
                | "/v1/customer-portal/license-keys/deactivate"
                | "/v1/customer-portal/license-keys/jwks"
                | "/v1/customer-portal/license-keys/license-file"
                | "/v1/oauth2/token"
                | "/v1/oauth2/introspect"
                | "/v1/oauth2/revoke"
                | "/v1/oauth2/userinfo"
        )
}

/// The configured policy: which origins the non-public routes allow.
#[derive(Debug, Clone, Default)]
pub struct CorsPolicy {
    origins: HashSet<String>,
}

/// What a request's origin is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Allowed {
    /// Any origin (`*`).
    Any,
    /// This origin, echoed.
    Origin(HeaderValue),
}

impl CorsPolicy {
    pub fn new(origins: &[String]) -> Self {
        Self {
            origins: origins
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
                .filter(|o| !o.is_empty())
                .collect(),
        }
    }

    fn allowed(&self, path: &str, origin: &HeaderValue) -> Option<Allowed> {
        if is_public(path) {
            return Some(Allowed::Any);
        }
        let text = origin.to_str().ok()?.to_ascii_lowercase();
        self.origins
            .contains(&text)
            .then(|| Allowed::Origin(origin.clone()))
    }
}

fn set_allow_origin(headers: &mut HeaderMap, allowed: &Allowed) {
    match allowed {
        Allowed::Any => {
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            );
        }
        Allowed::Origin(origin) => {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
            headers.append(header::VARY, HeaderValue::from_static("Origin"));
        }
    }
}

/// The middleware (wrapped outermost in `startup`, so error responses get the headers too).
pub async fn cors(
    req: ServiceRequest,
    next: actix_web::middleware::Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody, BoxBody>>, Error> {
    let policy = req.app_data::<actix_web::web::Data<CorsPolicy>>().cloned();
    let origin = req.headers().get(header::ORIGIN).cloned();
    let (Some(policy), Some(origin)) = (policy, origin) else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    let allowed = policy.allowed(req.path(), &origin);
    let preflight = req.method() == Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    match allowed {
        Some(allowed) if preflight => {
            let mut res = HttpResponse::new(StatusCode::NO_CONTENT);
            let headers = res.headers_mut();
            set_allow_origin(headers, &allowed);
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static(ALLOWED_METHODS),
            );
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static(ALLOWED_HEADERS),
            );
            headers.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static(MAX_AGE_SECS),
            );
            let (req, _) = req.into_parts();
            Ok(ServiceResponse::new(req, res).map_into_right_body())
        }
        Some(allowed) => {
            let mut res = next.call(req).await?;
            let headers = res.headers_mut();
            set_allow_origin(headers, &allowed);
            headers.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static(EXPOSED_HEADERS),
            );
            Ok(res.map_into_left_body())
        }
        None => {
            let mut res = next.call(req).await?;
            // A configured-only route's answer depends on the origin: caches must know.
            res.headers_mut()
                .append(header::VARY, HeaderValue::from_static("Origin"));
            Ok(res.map_into_left_body())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_paths() {
        for p in [
            "/.well-known/jwks.json",
            "/.well-known/openid-configuration",
            "/v1/customer-portal/license-keys/validate",
            "/v1/customer-portal/license-keys/activate/",
            "/v1/customer-portal/license-keys/deactivate",
            "/v1/oauth2/token",
            "/v1/oauth2/introspect",
            "/v1/oauth2/revoke",
            "/v1/oauth2/userinfo",
        ] {
            assert!(is_public(p), "{p}");
        }
        for p in [
            "/v1/organizations/",
            "/v1/customer-portal/license-keys/",
            "/v1/oauth2/register",
            "/v1/oauth2/",
            "/v1/license-keys",
            "/.well-known",
            "/oauth2/authorize",
        ] {
            assert!(!is_public(p), "{p}");
        }
    }

    #[test]
    fn configured_origins_match_exactly() {
        let policy = CorsPolicy::new(&["https://App.example.com/".to_string(), " ".into()]);
        let origin = HeaderValue::from_static("https://app.example.com");
        assert_eq!(
            policy.allowed("/v1/products/", &origin),
            Some(Allowed::Origin(origin.clone()))
        );
        for other in [
            "https://app.example.com.evil.io",
            "http://app.example.com",
            "null",
        ] {
            let other = HeaderValue::from_static(other);
            assert_eq!(policy.allowed("/v1/products/", &other), None);
            assert_eq!(
                policy.allowed("/v1/oauth2/token", &other),
                Some(Allowed::Any)
            );
        }
        assert_eq!(CorsPolicy::new(&[]).allowed("/v1/products/", &origin), None);
    }
}
