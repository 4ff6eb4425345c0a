//! PKCE (RFC 7636), `S256` only: `plain` is refused (behaviour.md).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};

/// `[A-Za-z0-9-._~]{43,128}`: the shape of both verifiers and S256 challenges.
pub fn is_valid_value(s: &str) -> bool {
    (43..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// `base64url(sha256(verifier))`, unpadded.
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether `verifier` matches the stored S256 `challenge` (compared in constant time).
pub fn verify_s256(verifier: &str, challenge: &str) -> bool {
    let computed = s256(verifier);
    let (a, b) = (computed.as_bytes(), challenge.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Why an authorization request's PKCE parameters are refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChallengeError {
    Missing,
    Invalid,
    UnsupportedMethod,
}

impl ChallengeError {
    pub fn description(&self) -> &'static str {
        match self {
            ChallengeError::Missing => "Missing \"code_challenge\"",
            ChallengeError::Invalid => "Invalid \"code_challenge\"",
            ChallengeError::UnsupportedMethod => "Unsupported \"code_challenge_method\"",
        }
    }
}

/// Checks an authorization request's challenge: required for public clients, `S256` only
/// (a challenge without a method means `plain`, which is refused).
pub fn check_challenge(
    challenge: Option<&str>,
    method: Option<&str>,
    public_client: bool,
) -> Result<Option<String>, ChallengeError> {
    match (challenge, method) {
        (None, Some(_)) => Err(ChallengeError::Missing),
        (None, None) if public_client => Err(ChallengeError::Missing),
        (None, None) => Ok(None),
        (Some(_), None | Some("plain")) => Err(ChallengeError::UnsupportedMethod),
        (Some(_), Some(m)) if m != "S256" => Err(ChallengeError::UnsupportedMethod),
        (Some(c), Some(_)) if !is_valid_value(c) => Err(ChallengeError::Invalid),
        (Some(c), Some(_)) => Ok(Some(c.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_vector() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            s256(verifier),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert!(verify_s256(
            verifier,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        assert!(!verify_s256(
            verifier,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"
        ));
        assert!(!verify_s256(verifier, "short"));
    }

    #[test]
    fn value_shape() {
        assert!(is_valid_value(&"A".repeat(43)));
        assert!(is_valid_value(&"a-._~".repeat(20)));
        assert!(!is_valid_value(&"A".repeat(42)));
        assert!(!is_valid_value(&"A".repeat(129)));
        assert!(!is_valid_value(&format!("{}+", "A".repeat(43))));
    }

    #[test]
    fn challenges_s256_only_and_required_for_public_clients() {
        let c = s256(&"A".repeat(43));
        assert_eq!(
            check_challenge(Some(&c), Some("S256"), true),
            Ok(Some(c.clone()))
        );
        assert_eq!(
            check_challenge(Some(&c), Some("plain"), false),
            Err(ChallengeError::UnsupportedMethod)
        );
        assert_eq!(
            check_challenge(Some(&c), None, false),
            Err(ChallengeError::UnsupportedMethod)
        );
        assert_eq!(
            check_challenge(None, None, true),
            Err(ChallengeError::Missing)
        );
        assert_eq!(check_challenge(None, None, false), Ok(None));
        assert_eq!(
            check_challenge(Some("short"), Some("S256"), false),
            Err(ChallengeError::Invalid)
        );
    }
}
