//! Black-box tests of the HTTP API: a real `Application` on a free port, driven by reqwest.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod backup;
mod benefits;
mod binary;
mod browser;
mod catalog_setup;
mod checkout_crash;
mod checkout_pages;
mod checkouts;
mod clients;
mod crash;
mod custom_fields;
mod customer_portal_keys;
mod customers;
mod discounts;
mod disk_full;
mod errors;
mod health;
mod helpers;
mod http_hardening;
mod idempotency;
mod license_keys;
mod oauth;
mod oidc_e2e;
mod openapi;
mod orders;
mod organizations;
mod products;
mod rate_limits;
mod retention;
mod schema;
mod schemathesis;
mod sorting;
mod stripe;
mod subscriptions;
mod tools;
