//! Checkout sessions' endpoints: the organizer ones (token) in `organizer`, the client ones
//! (the client secret is the only credential; any `Authorization` header is ignored) in
//! `client`. The purchase itself (confirm, charge, settle) is `crate::app::checkout`.
//!
//! Each route has two spellings served by the same handler in every API version: Polar's
//! current `/v1/checkouts/…` (what today's SDKs call: the collection with its trailing
//! slash, the others without) and the seed-era `/v1/checkouts/custom/…`.

mod client;
pub(crate) mod organizer;

use actix_web::web;

/// The two prefixes the routes are served under.
const PREFIXES: [&str; 2] = ["/v1/checkouts/custom/", "/v1/checkouts/"];

pub fn configure(cfg: &mut web::ServiceConfig) {
    for prefix in PREFIXES {
        crate::resource!(cfg, prefix, { get => organizer::list, post => organizer::create });
        crate::resource!(cfg, format!("{prefix}client/{{client_secret}}"), {
            get => client::client_get,
            patch => client::client_update,
        });
        crate::resource!(cfg, format!("{prefix}client/{{client_secret}}/confirm"), {
            post => client::client_confirm,
        });
        crate::resource!(cfg, format!("{prefix}{{id}}"), { get => organizer::get, patch => organizer::update });
    }
}
