//! Links whose URL is the credential (an invoice PDF, a file part upload): the server's
//! keyed hash over what the link grants and its expiry, in the link's query.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::{DateTime, Utc};

use super::tokens::TokenHasher;

/// What a signed link is, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    Good,
    /// Signed, but past its expiry.
    Expired,
    /// Not signed by this server for what it names and its expiry.
    Forged,
}

/// The signature of `message` (which names what the link grants and its expiry).
pub fn signature(hasher: &TokenHasher, message: &str) -> String {
    URL_SAFE_NO_PAD.encode(hasher.hash(message))
}

/// Whether `given` signs `message`, and whether a link expiring at `expires` (Unix
/// seconds) still works at `now`.
pub fn check(
    hasher: &TokenHasher,
    message: &str,
    expires: i64,
    given: &str,
    now: DateTime<Utc>,
) -> Checked {
    // The keyed hash compares in constant time.
    let signed = URL_SAFE_NO_PAD
        .decode(given)
        .is_ok_and(|mac| hasher.verify(message, &mac));
    if !signed {
        return Checked::Forged;
    }
    match DateTime::<Utc>::from_timestamp(expires, 0) {
        Some(at) if at > now => Checked::Good,
        _ => Checked::Expired,
    }
}
