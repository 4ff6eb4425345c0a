//! The customer portal's plan change and billing details (Polar's portal subscription
//! update with `product_id`, its private `change-preview`, `PATCH customers/me`, and the
//! e-mail change confirmed by a code sent to the new address).
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::customer_portal::CustomerPortalCustomer;
use crate::api::portal_update::{
    CustomerEmailUpdateRequest, CustomerEmailUpdateVerifyRequest,
    CustomerEmailUpdateVerifyResponse, CustomerPortalCustomerUpdate,
    CustomerSubscriptionChangePreview,
};
use crate::app::plan_change::SubscriptionChargePreview;
use crate::error::ErrorBody as Error;

/// What moving one of the customer's subscriptions to another product would charge now
/// and at the next renewal (the organization's proration behaviour); nothing changes.
#[utoipa::path(post, path = "/v1/customer-portal/subscriptions/{id}/change-preview", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    request_body = CustomerSubscriptionChangePreview,
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 200, body = SubscriptionChargePreview),
        (status = 403, description = "UpdateSubscriptionPlanNotAllowed: the organization does not let buyers change plans", body = Error),
        (status = 404, description = "Not the customer's subscription", body = Error),
))]
fn portal_subscriptions_change_preview() {}

/// Change the signed-in customer's billing details: name, address, tax id (checked against
/// the resulting country) and the saved card future charges use first.
#[utoipa::path(patch, path = "/v1/customer-portal/customers/me", tag = "customer-portal",
    request_body = CustomerPortalCustomerUpdate,
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 200, body = CustomerPortalCustomer),
))]
fn portal_customers_me_update() {}

/// Send a code to a new e-mail address; the address changes once the code is typed back
/// (`verify`). The answer is the JSON `null`.
#[utoipa::path(post, path = "/v1/customer-portal/customers/me/email-update/request", tag = "customer-portal",
    request_body = CustomerEmailUpdateRequest,
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 202, description = "The code is on its way to the new address"),
        (status = 429, description = "Too many codes asked from this client, or for this address", body = Error),
))]
fn portal_email_update_request() {}

/// Whether a code would change the address now (no authentication: the code is the proof).
#[utoipa::path(get, path = "/v1/customer-portal/customers/me/email-update/check", tag = "customer-portal",
    params(("token" = String, Query, description = "The code e-mailed to the new address")),
    responses(
        (status = 204, description = "The code is good"),
        (status = 401, description = "InvalidCustomerEmailUpdate: a wrong, used or expired code", body = Error),
        (status = 429, description = "Too many tries from this client", body = Error),
))]
fn portal_email_update_check() {}

/// Change the address with the code (no authentication: the code is the proof): a new
/// customer session; the customer's other sessions end and the old address is told.
#[utoipa::path(post, path = "/v1/customer-portal/customers/me/email-update/verify", tag = "customer-portal",
    request_body = CustomerEmailUpdateVerifyRequest,
    responses(
        (status = 200, body = CustomerEmailUpdateVerifyResponse),
        (status = 401, description = "InvalidCustomerEmailUpdate: a wrong, used or expired code", body = Error),
        (status = 429, description = "Too many tries from this client", body = Error),
))]
fn portal_email_update_verify() {}
