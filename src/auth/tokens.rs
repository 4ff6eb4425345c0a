//! Random tokens in Polar's formats, and their keyed hashes.
//!
//! Tokens are a prefix plus 32 random bytes in unpadded base64url (43 characters), so
//! secret scanners recognise them. Only HMAC-SHA256 hashes keyed with the server secret are
//! stored; lookups go through the hash, and comparisons of hashes are constant-time.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

pub const PAT_PREFIX: &str = "polar_pat_";
pub const ORGANIZATION_ACCESS_TOKEN_PREFIX: &str = "polar_oat_";
pub const CUSTOMER_SESSION_PREFIX: &str = "polar_cst_";
pub const CHECKOUT_SECRET_PREFIX: &str = "polar_c_";
/// The session cookie of the authorization pages.
pub const BROWSER_SESSION_PREFIX: &str = "tollgate_s_";

// OAuth 2.0: the client's credentials, authorization codes, and the access and refresh
// tokens of a user (`_u_`) or an organization (`_o_`).
pub const CLIENT_ID_PREFIX: &str = "polar_ci_";
pub const CLIENT_SECRET_PREFIX: &str = "polar_cs_";
pub const REGISTRATION_TOKEN_PREFIX: &str = "polar_crt_";
pub const AUTHORIZATION_CODE_PREFIX: &str = "polar_ac_";
pub const ACCESS_TOKEN_USER_PREFIX: &str = "polar_at_u_";
pub const ACCESS_TOKEN_ORG_PREFIX: &str = "polar_at_o_";
pub const REFRESH_TOKEN_USER_PREFIX: &str = "polar_rt_u_";
pub const REFRESH_TOKEN_ORG_PREFIX: &str = "polar_rt_o_";

/// `prefix` followed by `bytes` random bytes in unpadded base64url.
pub fn generate(prefix: &str, bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(&buf))
}

/// Hashes tokens with the server secret.
#[derive(Clone)]
pub struct TokenHasher {
    key: Vec<u8>,
}

impl std::fmt::Debug for TokenHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenHasher(..)")
    }
}

impl TokenHasher {
    pub fn new(key: &[u8]) -> Self {
        Self { key: key.to_vec() }
    }

    pub fn hash(&self, token: &str) -> [u8; 32] {
        // HMAC accepts keys of any length, so this cannot fail.
        let mut mac = match Hmac::<Sha256>::new_from_slice(&self.key) {
            Ok(m) => m,
            Err(_) => return [0; 32],
        };
        mac.update(token.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// A 32-byte key derived from the server secret and `parts` (each length-prefixed, so
    /// no two lists of parts derive the same key): for data sealed at rest.
    pub fn derive(&self, parts: &[&[u8]]) -> [u8; 32] {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.key) else {
            return [0; 32];
        };
        mac.update(b"tollgate-derive\0");
        for p in parts {
            mac.update(&(p.len() as u64).to_be_bytes());
            mac.update(p);
        }
        mac.finalize().into_bytes().into()
    }

    /// Constant-time check of a token against a stored hash.
    pub fn verify(&self, token: &str, stored: &[u8]) -> bool {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.key) else {
            return false;
        };
        mac.update(token.as_bytes());
        mac.verify_slice(stored).is_ok()
    }
}

/// A fresh 32-byte server secret.
pub fn generate_secret() -> Vec<u8> {
    let mut buf = vec![0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_the_prefix_and_43_characters() {
        let t = generate(PAT_PREFIX, 32);
        assert!(t.starts_with("polar_pat_"));
        let rest = &t[PAT_PREFIX.len()..];
        assert_eq!(rest.len(), 43);
        assert!(rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_ne!(generate(PAT_PREFIX, 32), t);
    }

    #[test]
    fn hashes_depend_on_the_key_and_verify() {
        let a = TokenHasher::new(b"key-a");
        let b = TokenHasher::new(b"key-b");
        assert_eq!(a.hash("t"), a.hash("t"));
        assert_ne!(a.hash("t"), b.hash("t"));
        assert_ne!(a.hash("t"), a.hash("u"));
        assert!(a.verify("t", &a.hash("t")));
        assert!(!a.verify("t", &b.hash("t")));
        assert!(!a.verify("t", &[0u8; 31]));
    }

    #[test]
    fn derived_keys_depend_on_the_secret_and_separate_their_parts() {
        let a = TokenHasher::new(b"key-a");
        assert_eq!(a.derive(&[b"x", b"y"]), a.derive(&[b"x", b"y"]));
        assert_ne!(a.derive(&[b"xy", b""]), a.derive(&[b"x", b"y"]));
        assert_ne!(
            a.derive(&[b"x"]),
            TokenHasher::new(b"key-b").derive(&[b"x"])
        );
        assert_ne!(a.derive(&[b"t"]), a.hash("t"));
    }
}
