//! The JSON API, one module per resource. Handlers extract and authorize, call
//! `crate::app`, and wrap its typed views; they hold no workflow and no business rule.

pub mod apple_pay;
pub mod benefit_grants;
pub mod benefits;
pub mod checkout_links;
pub mod checkouts;
pub mod custom_fields;
pub mod customer_meters;
pub mod customer_portal;
pub mod customer_sessions;
pub mod customers;
pub mod discounts;
pub mod disputes;
pub mod downloadables;
pub mod events;
pub mod exports;
pub mod files;
pub mod health;
pub mod invoices;
pub mod license_keys;
pub mod license_signing;
pub mod meters;
pub mod metrics;
pub mod orders;
pub mod organization_access_tokens;
pub mod organizations;
pub mod portal_meters;
pub mod products;
pub mod refunds;
pub mod releases;
pub mod reports;
pub mod stripe_webhook;
pub mod subscriptions;
pub mod updates;
pub mod webhooks;

use actix_web::web;

/// The JSON API's resources, the license-key hot path first: actix tries routes in
/// registration order, and every dynamic route before a match costs a regex test.
pub fn configure(cfg: &mut web::ServiceConfig) {
    customer_portal::configure(cfg);
    health::configure(cfg);
    metrics::configure(cfg);
    organizations::configure(cfg);
    benefits::configure(cfg);
    products::configure(cfg);
    discounts::configure(cfg);
    // Before `/v1/{customers,orders,subscriptions,license-keys}/{id}`.
    exports::configure(cfg);
    customers::configure(cfg);
    customer_sessions::configure(cfg);
    benefit_grants::configure(cfg);
    custom_fields::configure(cfg);
    files::configure(cfg);
    releases::configure(cfg);
    updates::configure(cfg);
    downloadables::configure(cfg);
    checkouts::configure(cfg);
    checkout_links::configure(cfg);
    invoices::configure(cfg);
    orders::configure(cfg);
    refunds::configure(cfg);
    reports::configure(cfg);
    disputes::configure(cfg);
    subscriptions::configure(cfg);
    license_keys::configure(cfg);
    stripe_webhook::configure(cfg);
    apple_pay::configure(cfg);
    webhooks::configure(cfg);
    organization_access_tokens::configure(cfg);
    events::configure(cfg);
    meters::configure(cfg);
    customer_meters::configure(cfg);
    portal_meters::configure(cfg);
    customer_portal::configure_account(cfg);
}
