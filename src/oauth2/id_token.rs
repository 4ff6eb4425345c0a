//! OpenID Connect id_token claims.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// `at_hash`: base64url of the left half of SHA-256 of the access token (RS256).
pub fn at_hash(access_token: &str) -> String {
    let digest = Sha256::digest(access_token.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..16])
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IdTokenClaims {
    pub iss: String,
    pub sub: String,
    pub aud: String,
    pub iat: i64,
    pub exp: i64,
    pub auth_time: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    pub at_hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email_verified: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

pub struct IdTokenInput<'a> {
    pub issuer: &'a str,
    pub sub: String,
    pub client_id: &'a str,
    pub now: DateTime<Utc>,
    pub ttl_secs: i64,
    pub auth_time: DateTime<Utc>,
    pub nonce: Option<String>,
    pub access_token: &'a str,
    /// Userinfo claims the granted scopes allow.
    pub email: Option<(String, bool)>,
    pub name: Option<String>,
}

pub fn claims(input: IdTokenInput<'_>) -> IdTokenClaims {
    IdTokenClaims {
        iss: input.issuer.to_string(),
        sub: input.sub,
        aud: input.client_id.to_string(),
        iat: input.now.timestamp(),
        exp: input.now.timestamp() + input.ttl_secs,
        auth_time: input.auth_time.timestamp(),
        nonce: input.nonce,
        at_hash: at_hash(input.access_token),
        email_verified: input.email.as_ref().map(|e| e.1),
        email: input.email.map(|e| e.0),
        name: input.name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn at_hash_is_the_left_half_of_sha256() {
        // Independent check: SHA-256("abc") starts ba7816bf8f01cfea414140de5dae2223.
        assert_eq!(
            URL_SAFE_NO_PAD.decode(at_hash("abc")).unwrap(),
            vec![
                0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae,
                0x22, 0x23
            ]
        );
        assert_eq!(at_hash("abc").len(), 22);
    }

    #[test]
    fn claims_follow_the_input() {
        let now = Utc.timestamp_opt(1_000, 0).unwrap();
        let c = claims(IdTokenInput {
            issuer: "https://t.example",
            sub: "u1".into(),
            client_id: "polar_ci_x",
            now,
            ttl_secs: 3600,
            auth_time: Utc.timestamp_opt(900, 0).unwrap(),
            nonce: Some("n-1".into()),
            access_token: "abc",
            email: Some(("a@b.c".into(), false)),
            name: None,
        });
        assert_eq!(c.exp, 4_600);
        assert_eq!(c.auth_time, 900);
        assert_eq!(c.aud, "polar_ci_x");
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["nonce"], "n-1");
        assert_eq!(v["email"], "a@b.c");
        assert_eq!(v["email_verified"], false);
        assert!(v.get("name").is_none());
        assert_eq!(v["at_hash"], at_hash("abc"));
    }
}
