//! Signed links to an issued document's PDF (`/v1/invoices/{id}.pdf`), as Polar's
//! presigned invoice URLs: valid [`LINK_TTL`], whoever holds one reads that one document,
//! without a session.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::{DateTime, Duration, Utc};

use crate::domain::invoice::InvoiceId;
use crate::state::AppState;

/// How long a link works (Polar's presigned URLs: 600 s).
pub const LINK_TTL: Duration = Duration::seconds(600);

/// What a link is, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    Good,
    /// Signed, but past its expiry.
    Expired,
    /// Not signed by this server for this document and expiry.
    Forged,
}

/// What a link signs: the document and the expiry.
fn message(id: InvoiceId, expires: i64) -> String {
    format!("invoice-pdf\0{id}\0{expires}")
}

fn signature(state: &AppState, id: InvoiceId, expires: i64) -> String {
    URL_SAFE_NO_PAD.encode(state.hasher.hash(&message(id, expires)))
}

/// The link to document `id`, valid [`LINK_TTL`] from now.
pub fn link(state: &AppState, id: InvoiceId) -> String {
    let expires = (state.now() + LINK_TTL).timestamp();
    format!(
        "{}/v1/invoices/{id}.pdf?expires={expires}&signature={}",
        state.public_url.trim_end_matches('/'),
        signature(state, id, expires)
    )
}

/// Whether `given` signs document `id`'s link expiring at `expires`, and whether it still
/// works.
pub fn check(state: &AppState, id: InvoiceId, expires: i64, given: &str) -> Checked {
    // The server's keyed hash checks it in constant time.
    let signed = URL_SAFE_NO_PAD
        .decode(given)
        .is_ok_and(|mac| state.hasher.verify(&message(id, expires), &mac));
    if !signed {
        return Checked::Forged;
    }
    match DateTime::<Utc>::from_timestamp(expires, 0) {
        Some(at) if at > state.now() => Checked::Good,
        _ => Checked::Expired,
    }
}
