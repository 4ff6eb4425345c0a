//! Password hashing with argon2id (the argon2 crate's defaults: m=19 MiB, t=2, p=1).
//! Hashing is CPU-heavy: call these from a blocking thread (`web::block`).

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

pub fn hash(password: &str) -> Result<String, String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

pub fn verify(password: &str, stored: &str) -> bool {
    match PasswordHash::new(stored) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// Verifies `password` against `stored`, or, when there is no stored hash (unknown
/// account, or one without a password), against a fixed hash that never matches, so that
/// the answer takes as long either way and does not reveal which accounts exist.
pub fn verify_or_burn(password: &str, stored: Option<&str>) -> bool {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    match stored {
        Some(hash) => verify(password, hash),
        None => {
            let dummy =
                DUMMY.get_or_init(|| hash("no account has this password").unwrap_or_default());
            let _ = verify(password, dummy);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_and_verify() {
        let h = hash("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify("correct horse", &h));
        assert!(!verify("wrong", &h));
        assert!(!verify("correct horse", "not a hash"));
    }

    #[test]
    fn no_stored_hash_never_verifies() {
        assert!(!verify_or_burn("no account has this password", None));
        assert!(!verify_or_burn("", None));
        let h = hash("pw").unwrap();
        assert!(verify_or_burn("pw", Some(&h)));
        assert!(!verify_or_burn("px", Some(&h)));
    }
}
