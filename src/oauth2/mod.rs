//! The OAuth 2.0 / OpenID Connect authorization server (reference 6.5, 6.6; behaviour.md
//! "Authentication"): client registration, the token, introspection, revocation and
//! userinfo endpoints, discovery and the JWKS, and the personal-access-token API. This is
//! the protocol only: its browser pages (sign-in, consent, the token settings page) are in
//! `crate::web::account`, and which tokens and sessions are live, and whom they name, is
//! decided in `crate::auth`.

pub mod clients;
pub mod endpoints;
pub mod id_token;
pub mod pats;
pub mod pkce;
pub mod redirect;
pub mod scopes;

use std::collections::HashMap;

use actix_web::web;

/// Reads an `application/x-www-form-urlencoded` body (or query string). A name sent twice
/// keeps its first value; [`duplicated`] tells whether one was.
pub fn parse_form(bytes: &[u8]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for (k, v) in form_urlencoded::parse(bytes) {
        out.entry(k.into_owned()).or_insert_with(|| v.into_owned());
    }
    out
}

/// A non-empty form value.
pub fn field<'a>(form: &'a HashMap<String, String>, name: &str) -> Option<&'a str> {
    form.get(name).map(String::as_str).filter(|v| !v.is_empty())
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    endpoints::configure(cfg);
    clients::configure(cfg);
    pats::configure(cfg);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_keep_the_first_value_and_decode() {
        let f = parse_form(b"a=1&b=x+y%21&a=2&c=");
        assert_eq!(f["a"], "1");
        assert_eq!(f["b"], "x y!");
        assert_eq!(field(&f, "c"), None);
        assert_eq!(field(&f, "b"), Some("x y!"));
    }
}
