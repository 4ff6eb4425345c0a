//! Checkout sessions' endpoints: the organizer ones (`/v1/checkouts/custom/`, token) in
//! `organizer`, the client ones (`/v1/checkouts/custom/client/{secret}`, the client secret
//! is the only credential; any `Authorization` header is ignored) in `client`. The purchase
//! itself (confirm, charge, settle) is `crate::app::checkout`.

mod client;
pub(crate) mod organizer;

use actix_web::web;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/checkouts/custom/", { get => organizer::list, post => organizer::create });
    crate::resource!(cfg, "/v1/checkouts/custom/client/{client_secret}", {
        get => client::client_get,
        patch => client::client_update,
    });
    crate::resource!(cfg, "/v1/checkouts/custom/client/{client_secret}/confirm", {
        post => client::client_confirm,
    });
    crate::resource!(cfg, "/v1/checkouts/custom/{id}", { get => organizer::get, patch => organizer::update });
}
