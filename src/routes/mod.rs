//! One module per resource. Handlers authenticate, parse, call the store or an actor, and
//! render; they hold no business rules beyond access checks.

pub mod access;
pub mod benefits;
pub mod checkouts;
pub mod custom_fields;
pub mod customer_portal;
pub mod customers;
pub mod discounts;
pub mod health;
pub mod license_keys;
pub mod listing;
pub mod orders;
pub mod organizations;
pub mod products;
pub mod subscriptions;

use actix_web::web;

pub fn configure(cfg: &mut web::ServiceConfig) {
    health::configure(cfg);
    organizations::configure(cfg);
    benefits::configure(cfg);
    products::configure(cfg);
    discounts::configure(cfg);
    customers::configure(cfg);
    custom_fields::configure(cfg);
    checkouts::configure(cfg);
    orders::configure(cfg);
    subscriptions::configure(cfg);
    license_keys::configure(cfg);
    customer_portal::configure(cfg);
    crate::oauth2::configure(cfg);
}
