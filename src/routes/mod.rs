//! One module per resource. Handlers authenticate, parse, call the store or an actor, and
//! render; they hold no business rules beyond access checks.

pub mod access;
pub mod benefits;
pub mod health;
pub mod listing;
pub mod organizations;

use actix_web::web;

pub fn configure(cfg: &mut web::ServiceConfig) {
    health::configure(cfg);
    organizations::configure(cfg);
    benefits::configure(cfg);
}
