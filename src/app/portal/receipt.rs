//! Signed links to an order's printable receipt (`/portal/receipts/{order_id}`), as
//! Polar's presigned receipt URLs: whoever holds the link reads that one receipt until
//! it expires, without a session (a buyer may forward it to their accountant), and a
//! link is good for its order only.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::{DateTime, Duration, Utc};

use crate::domain::ids::OrderId;
use crate::state::AppState;

/// How long a receipt link works.
pub const LINK_TTL: Duration = Duration::hours(1);

/// The path of the receipt page of an order.
pub fn path(order: OrderId) -> String {
    format!("/portal/receipts/{order}")
}

fn signature(state: &AppState, order: OrderId, expires: i64) -> String {
    URL_SAFE_NO_PAD.encode(state.hasher.hash(&format!("receipt\0{order}\0{expires}")))
}

/// A link to the order's receipt, valid [`LINK_TTL`] from now.
pub fn link(state: &AppState, order: OrderId) -> String {
    let expires = (state.now() + LINK_TTL).timestamp();
    format!(
        "{}{}?expires={expires}&signature={}",
        state.public_url.trim_end_matches('/'),
        path(order),
        signature(state, order, expires)
    )
}

/// Whether `signature` signs the order's link expiring at `expires`, not yet past.
pub fn verify(state: &AppState, order: OrderId, expires: i64, signature_: &str) -> bool {
    let Some(at) = DateTime::<Utc>::from_timestamp(expires, 0) else {
        return false;
    };
    if at <= state.now() {
        return false;
    }
    let want = signature(state, order, expires);
    // Constant time: the signature is a secret until it is checked.
    want.len() == signature_.len()
        && want
            .bytes()
            .zip(signature_.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}
