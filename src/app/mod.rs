//! The application layer: Tollgate's use cases, below the HTTP handlers (`routes`), the
//! pages (`web`), the webhooks and the background jobs, which all call it; above the
//! domain and actors (`tollgate_actors`) and the store (`tollgate_storage`).
//!
//! Each module is one area. Its functions take the handles they need (through
//! [`crate::state::AppState`], which only holds them) and a command (parsed from a request
//! by `src/api/`, or built by a page), and answer typed views or an
//! [`crate::error::AppError`]: a stable code, or the command's fields that break a rule.
//! They speak no HTTP: `crate::error` maps the codes to statuses.
//!
//! - `access`: tenancy, which organizations a subject reaches;
//! - `benefit_grants`: the benefits purchases granted, derived from orders, subscriptions
//!   and license keys;
//! - `catalog`: organizations, products, benefits, discounts, custom fields, customers;
//! - `checkout`: checkout sessions and the purchase (create, change, confirm, charge,
//!   settle, recovery), checkout links, and the processor's typed events
//!   (`payment_events`: the one router of `ProcessorEvent`s);
//! - `claimable_keys`: keys generated without an order, claimed by a customer;
//! - `customer_sessions`: customer-portal sessions a seller opens for a customer;
//! - `customer_state`: a customer with its active subscriptions and granted benefits;
//! - `disputes`: chargebacks as the processor reports them, and what a lost one takes back;
//! - `event_log`: every webhook event of an organization, numbered in commit order, for
//!   the resumable event cursor;
//! - `exports`: the rows of the CSV exports (orders, subscriptions, customers, license
//!   keys), page by page from the indexes;
//! - `license_file`: Keygen-format license files of a key;
//! - `license_key_import`: keys a seller brings from another provider;
//! - `license_keys`: the validation hot path, a customer's keys, the organizer's changes;
//! - `license_signing`: the organizations' keys that sign license-key answers;
//! - `listing`: pages of records from the store's indexes, in memory where no index serves;
//! - `mail`: which e-mails a change of the store stands for, rendered; keys sent again;
//! - `orders`: lists and finds orders (written by purchases and renewals), and the order a
//!   payment paid;
//! - `organization_access_tokens`: the `polar_oat_…` tokens a member gives an organization;
//! - `paging`: list parameters and sort orders;
//! - `payment_methods`: a customer's saved payment methods (the portal's list, add,
//!   confirm, default, remove);
//! - `plan_change`: a subscription moved to another product or price, with proration;
//! - `portal`: the customer portal (sign-in by code, a purchase's limited session, receipts);
//! - `recovery`: "pay now", the buyer's charge of a past-due subscription's renewal;
//! - `releases`: releases of a product (drafts, publish with signatures, yank), the
//!   update-signing key, and the update feeds a license key reads;
//! - `refunds`: money given back through the processor, and access taken back with it;
//! - `seller_subscriptions`: free subscriptions a seller starts without a checkout;
//! - `subscription`: a seller's changes to a subscription (cancel, uncancel, revoke), the
//!   renewal sweep, and its tax quote;
//! - `testing` (tests only): the application's state over a temporary store;
//! - `tokens`: a user's personal access tokens;
//! - `views`: every typed view the API, the webhooks and the pages render;
//! - `webhook_endpoints`: a seller's endpoints, the delivery log, redelivery.
//!
//! Nothing here imports `routes`, `web` or `jobs`.

pub mod access;
pub mod benefit_grants;
pub mod catalog;
pub mod checkout;
pub mod claimable_keys;
pub mod customer_sessions;
pub mod customer_state;
pub mod disputes;
pub mod downloadables;
pub mod event_log;
pub mod exports;
pub mod files;
pub mod invoices;
pub mod license_file;
pub mod license_key_import;
pub mod license_keys;
pub mod license_signing;
pub mod listing;
pub mod mail;
pub mod orders;
pub mod organization_access_tokens;
pub mod paging;
pub mod payment_methods;
pub mod plan_change;
pub mod portal;
pub mod recovery;
pub mod refunds;
pub mod releases;
pub mod seller_subscriptions;
pub mod subscription;
pub mod tax;
pub mod tax_id_checks;
pub mod tax_reports;
pub mod tax_transactions;
#[cfg(test)]
#[path = "testing_tests.rs"]
pub mod testing;
pub mod tokens;
pub mod usage;
pub(crate) mod usage_billing;
pub mod usage_credits;
pub mod views;
pub mod webhook_endpoints;

/// The sooner of two optional times: when a queue's pass is due again (`None`: nothing
/// waits).
pub(crate) fn earliest(
    a: Option<chrono::DateTime<chrono::Utc>>,
    b: Option<chrono::DateTime<chrono::Utc>>,
) -> Option<chrono::DateTime<chrono::Utc>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
