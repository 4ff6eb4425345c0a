//! Signed links to an issued document's PDF (`/v1/invoices/{id}.pdf`), as Polar's
//! presigned invoice URLs: valid [`LINK_TTL`], whoever holds one reads that one document,
//! without a session.

use chrono::Duration;

use crate::auth::signed_link;
pub use crate::auth::signed_link::Checked;
use crate::domain::invoice::InvoiceId;
use crate::state::AppState;

/// How long a link works (Polar's presigned URLs: 600 s).
pub const LINK_TTL: Duration = Duration::seconds(600);

/// What a link signs: the document and the expiry.
fn message(id: InvoiceId, expires: i64) -> String {
    format!("invoice-pdf\0{id}\0{expires}")
}

fn signature(state: &AppState, id: InvoiceId, expires: i64) -> String {
    signed_link::signature(&state.hasher, &message(id, expires))
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
    signed_link::check(
        &state.hasher,
        &message(id, expires),
        expires,
        given,
        state.now(),
    )
}
