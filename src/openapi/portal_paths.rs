//! The operations of the customer portal beyond its license keys (`super::paths`): the
//! sign-in by e-mailed code and the session it opens, and the signed-in customer's own
//! records (the customer, orders and receipts, subscriptions, benefit grants, a key's
//! activations). Every operation but `request` and `authenticate` takes a customer session
//! token (`polar_cst_…`) only; another customer's ids are 404. Kept apart so that no file
//! grows past the size `scripts/check-layers.py` allows.
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::customer_portal::{
    CustomerBenefitGrant, CustomerCustomerSession, CustomerOrder, CustomerOrderReceipt,
    CustomerPortalCustomer, CustomerSessionCodeAuthenticateRequest,
    CustomerSessionCodeAuthenticateResponse, CustomerSessionCodeRequest, CustomerSubscription,
    CustomerSubscriptionUpdate, PortalAuthenticatedUser,
};
use crate::api::ListResource;
use crate::error::ErrorBody as Error;

// ---------------------------------------------------------------------------------------
// The session
// ---------------------------------------------------------------------------------------

/// Send a sign-in code to an e-mail address (no authentication): a short-lived, single-use
/// code, mailed when the address is a customer of the organization. The answer is the same
/// whether or not it is (nobody learns who bought).
#[utoipa::path(post, path = "/v1/customer-portal/customer-session/request", tag = "customer-portal",
    request_body = CustomerSessionCodeRequest,
    responses(
        (status = 202, description = "Accepted: a code is on its way if the address is a customer's"),
        (status = 429, description = "Too many codes asked from this client, or for this address", body = Error),
))]
fn customer_session_request() {}

/// Exchange a sign-in code for a customer session (no authentication): the token is for
/// `Authorization: Bearer` on the customer-portal endpoints.
#[utoipa::path(post, path = "/v1/customer-portal/customer-session/authenticate", tag = "customer-portal",
    request_body = CustomerSessionCodeAuthenticateRequest,
    responses(
        (status = 200, body = CustomerSessionCodeAuthenticateResponse),
        (status = 401, description = "CustomerSessionCodeInvalidOrExpired: a wrong, used, worn-out or expired code", body = Error),
        (status = 429, description = "Too many sign-in attempts from this client", body = Error),
))]
fn customer_session_authenticate() {}

/// The customer session the token is: when it expires.
#[utoipa::path(get, path = "/v1/customer-portal/customer-session/introspect", tag = "customer-portal",
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = CustomerCustomerSession)))]
fn customer_session_introspect() {}

/// Who the customer session is (always a `customer`: Tollgate has no members).
#[utoipa::path(get, path = "/v1/customer-portal/customer-session/user", tag = "customer-portal",
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = PortalAuthenticatedUser)))]
fn customer_session_user() {}

/// The signed-in customer.
#[utoipa::path(get, path = "/v1/customer-portal/customers/me", tag = "customer-portal",
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = CustomerPortalCustomer)))]
fn portal_customers_me() {}

// ---------------------------------------------------------------------------------------
// Orders
// ---------------------------------------------------------------------------------------

/// The customer's orders, newest first.
#[utoipa::path(get, path = "/v1/customer-portal/orders/", tag = "customer-portal",
    params(
        ("product_id" = Option<Vec<Uuid>>, Query),
        ("product_billing_type" = Option<Vec<String>>, Query, description = "`one_time` or `recurring`."),
        ("subscription_id" = Option<Vec<Uuid>>, Query),
        ("query" = Option<String>, Query, description = "Accepted, not applied."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `amount`, `customer`, `product`, `discount`, `subscription`, `-` prefix for descending."),
    ),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = ListResource<CustomerOrder>)))]
fn portal_orders_list() {}

/// One of the customer's orders.
#[utoipa::path(get, path = "/v1/customer-portal/orders/{id}", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = CustomerOrder)))]
fn portal_orders_get() {}

/// Where the order's receipt is: a signed link to its printable page (amounts, tax,
/// refunds), valid an hour.
#[utoipa::path(get, path = "/v1/customer-portal/orders/{id}/receipt", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = CustomerOrderReceipt)))]
fn portal_orders_receipt() {}

// ---------------------------------------------------------------------------------------
// Subscriptions
// ---------------------------------------------------------------------------------------

/// The customer's subscriptions (started ones), most recently started first.
#[utoipa::path(get, path = "/v1/customer-portal/subscriptions/", tag = "customer-portal",
    params(
        ("product_id" = Option<Vec<Uuid>>, Query),
        ("active" = Option<bool>, Query),
        ("query" = Option<String>, Query, description = "Accepted, not applied."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`customer`, `status`, `started_at`, `current_period_end`, `amount`, `product`, `discount`, `-` prefix for descending."),
    ),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = ListResource<CustomerSubscription>)))]
fn portal_subscriptions_list() {}

/// One of the customer's subscriptions.
#[utoipa::path(get, path = "/v1/customer-portal/subscriptions/{id}", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = CustomerSubscription)))]
fn portal_subscriptions_get() {}

/// One of Polar's update shapes, picked by its keys (mixing two is a 422): move to another
/// product (`product_id`, when the organization lets buyers change plans; the seller's
/// rules and the organization's proration behaviour); cancel at the end of the period
/// (`cancel_at_period_end: true`, with an optional reason and comment) or take the
/// cancellation back (`false`); `pending_update: null` (there is never one). Without any
/// key nothing changes.
#[utoipa::path(patch, path = "/v1/customer-portal/subscriptions/{id}", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    request_body = CustomerSubscriptionUpdate,
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 200, body = CustomerSubscription),
        (status = 400, description = "The subscription can't make this change", body = Error),
        (status = 402, description = "PaymentFailed: the charge of a plan change was declined", body = Error),
        (status = 403, description = "AlreadyCanceledSubscription: it is canceled, or will be at the end of the period; UpdateSubscriptionPlanNotAllowed: the organization does not let buyers change plans; or the token lacks the scope", body = Error),
        (status = 410, description = "ResourceUnavailable: the subscription has ended", body = Error),
))]
fn portal_subscriptions_update() {}

/// Cancel one of the customer's subscriptions at the end of its period.
#[utoipa::path(delete, path = "/v1/customer-portal/subscriptions/{id}", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 200, body = CustomerSubscription),
        (status = 400, description = "The subscription can't make this change", body = Error),
        (status = 403, description = "AlreadyCanceledSubscription: it is canceled, or will be at the end of the period; or the token lacks the scope", body = Error),
        (status = 410, description = "ResourceUnavailable: the subscription has ended", body = Error),
))]
fn portal_subscriptions_cancel() {}

// ---------------------------------------------------------------------------------------
// Benefit grants and activations
// ---------------------------------------------------------------------------------------

/// The benefits granted to the customer (granted ones only), most recently granted first.
#[utoipa::path(get, path = "/v1/customer-portal/benefit-grants/", tag = "customer-portal",
    params(
        ("benefit_id" = Option<Vec<Uuid>>, Query),
        ("type" = Option<Vec<String>>, Query, description = "The benefit types (`license_keys`, `custom`, …)."),
        ("checkout_id" = Option<Vec<Uuid>>, Query, description = "Accepted, not applied."),
        ("order_id" = Option<Vec<Uuid>>, Query),
        ("subscription_id" = Option<Vec<Uuid>>, Query),
        ("member_id" = Option<Vec<Uuid>>, Query, description = "Accepted, not applied."),
        ("query" = Option<String>, Query, description = "Accepted, not applied."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`granted_at`, `type`, `organization`, `product_benefit`, `-` prefix for descending; default `product_benefit`, `-granted_at`."),
    ),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = ListResource<CustomerBenefitGrant>)))]
fn portal_benefit_grants_list() {}

/// One of the customer's benefit grants.
#[utoipa::path(get, path = "/v1/customer-portal/benefit-grants/{id}", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = CustomerBenefitGrant)))]
fn portal_benefit_grants_get() {}

/// Remove an activation of one of the customer's license keys, freeing its slot (for a
/// customer who no longer has the key at hand); `license_key.deactivated` follows.
#[utoipa::path(delete, path = "/v1/customer-portal/license-keys/{id}/activations/{activation_id}", tag = "customer-portal",
    params(("id" = Uuid, Path), ("activation_id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 204, description = "Deactivated"),
        (status = 403, description = "The seller does not let customers manage this key's activations (NotPermitted), or the token lacks the scope", body = Error),
        (status = 404, description = "Not the customer's key, or no such live activation", body = Error),
))]
fn portal_license_keys_remove_activation() {}

/// Claim a key the seller generated (a giveaway): it becomes the signed-in customer's
/// license key; the same customer claiming again gets the same key.
#[utoipa::path(post, path = "/v1/customer-portal/license-keys/claim", tag = "customer-portal",
    request_body = crate::api::license_key_import::LicenseKeyClaim,
    security(("bearer" = ["customer_portal:write"])),
    responses((status = 200, body = crate::api::license_key::LicenseKeyRead), (status = 404, body = Error), (status = 409, description = "Claimed by another customer (`LicenseKeyAlreadyClaimed`, code `already_claimed`)", body = Error)))]
pub(super) fn portal_license_keys_claim() {}
