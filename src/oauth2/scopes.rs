//! Scope strings of OAuth requests and client registrations.

use crate::auth::{Scope, ScopeSet};

/// Every scope a client may be registered for or request (`scopes_supported`): those a
/// token may hold but `organization_access_tokens:*`, as Polar's `SCOPES_SUPPORTED`.
pub fn supported() -> ScopeSet {
    ScopeSet::all_grantable()
        .iter()
        .filter(|s| !s.manages_organization_tokens())
        .collect()
}

/// A space-separated request scope: every name must be supported. Returns the refused names.
pub fn parse_requested(s: &str) -> Result<ScopeSet, Vec<String>> {
    let set = ScopeSet::parse_space_separated(s)?;
    let supported = supported();
    let reserved: Vec<String> = set
        .iter()
        .filter(|s| !supported.contains(*s))
        .map(|s| s.as_str().to_string())
        .collect();
    if reserved.is_empty() {
        Ok(set)
    } else {
        Err(reserved)
    }
}

/// A registration's `scope`: as [`parse_requested`]. (The SDK's default names, the usage
/// scopes `events:*` and `meters:*` included, are all served now.)
pub fn parse_registered(s: &str) -> Result<ScopeSet, Vec<String>> {
    parse_requested(s)
}

/// A human description of a scope for the consent page.
pub fn describe(s: Scope) -> &'static str {
    match s {
        Scope::Openid => "Know who you are",
        Scope::Profile => "Read your profile",
        Scope::Email => "Read your e-mail address",
        Scope::UserRead => "Read your user account",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_scopes_must_be_known_and_not_reserved() {
        let s = parse_requested("openid email").unwrap();
        assert!(s.contains(Scope::Openid) && s.contains(Scope::Email));
        assert_eq!(parse_requested("openid nope").unwrap_err(), vec!["nope"]);
        assert_eq!(
            parse_requested("openid web_default").unwrap_err(),
            vec!["web_default"]
        );
        assert_eq!(parse_requested("").unwrap(), ScopeSet::empty());
        assert_eq!(
            parse_requested("openid organization_access_tokens:write").unwrap_err(),
            vec!["organization_access_tokens:write"]
        );
        assert!(!supported().contains(Scope::OrganizationAccessTokensRead));
    }

    #[test]
    fn registration_keeps_the_usage_scopes() {
        let s = parse_registered("openid events:read meters:write customer_meters:read").unwrap();
        assert_eq!(
            s.to_space_separated(),
            "openid events:read meters:write customer_meters:read"
        );
        // Refunds are served: their scopes are kept.
        let s = parse_registered("openid refunds:write").unwrap();
        assert!(s.contains(Scope::RefundsWrite));
        assert!(parse_registered("openid admin").is_err());
        assert!(parse_registered("openid bogus:read").is_err());
    }
}
