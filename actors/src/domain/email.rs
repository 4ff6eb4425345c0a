//! E-mail addresses as identities: the one normalisation every comparison uses (user and
//! customer uniqueness and lookup, sign-in and sign-up limits), so two spellings of one
//! address can never be one account to one part of Tollgate and two to another.
//!
//! Surrounding whitespace is dropped and the whole address is lower-cased with Unicode's
//! rules (not ASCII's): `\u{212A}ate@example.com` (KELVIN SIGN) and `KATE@example.com` are
//! both `kate@example.com`. The address as typed is kept for display.

/// The form of `email` that identifies it.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unicode_and_ascii_variants_of_one_address_are_one() {
        for variant in [
            "kate@example.com",
            "KATE@EXAMPLE.COM",
            " Kate@Example.com ",
            "\u{212A}ate@example.com",
            "\u{212A}ATE@EXAMPLE.COM",
        ] {
            assert_eq!(normalize_email(variant), "kate@example.com", "{variant:?}");
        }
        assert_ne!(normalize_email("kåte@example.com"), "kate@example.com");
        // Idempotent.
        let once = normalize_email("\u{212A}ate@EXAMPLE.com");
        assert_eq!(normalize_email(&once), once);
    }
}
