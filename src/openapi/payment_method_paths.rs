//! The customer portal's saved payment methods (Polar's `customers/me/payment-methods`):
//! a customer session token only; another customer's method is 404.
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::payment_method::{
    CustomerPaymentMethod, CustomerPaymentMethodConfirm, CustomerPaymentMethodCreate,
    CustomerPaymentMethodCreateResponse,
};
use crate::api::ListResource;
use crate::error::ErrorBody as Error;

/// The customer's saved payment methods, newest first; the card each live subscription
/// is billed with is among them.
#[utoipa::path(get, path = "/v1/customer-portal/customers/me/payment-methods", tag = "customer-portal",
    params(("page" = Option<u32>, Query), ("limit" = Option<u32>, Query)),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = ListResource<CustomerPaymentMethod>)))]
fn portal_payment_methods_list() {}

/// Save a payment method for later charges without charging it (a SetupIntent), and make
/// it the default if asked; `requires_action` when the buyer must authenticate it first.
#[utoipa::path(post, path = "/v1/customer-portal/customers/me/payment-methods", tag = "customer-portal",
    request_body = CustomerPaymentMethodCreate,
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 201, body = CustomerPaymentMethodCreateResponse),
        (status = 400, description = "PaymentMethodSetupFailed: the processor declined the card", body = Error),
))]
fn portal_payment_methods_add() {}

/// Finish a setup that needed the buyer (3-D Secure): only one this customer started.
#[utoipa::path(post, path = "/v1/customer-portal/customers/me/payment-methods/confirm", tag = "customer-portal",
    request_body = CustomerPaymentMethodConfirm,
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 201, body = CustomerPaymentMethodCreateResponse),
        (status = 400, description = "PaymentMethodSetupFailed: the processor declined the card", body = Error),
        (status = 403, description = "CustomerNotReady: the processor does not know the customer yet", body = Error),
))]
fn portal_payment_methods_confirm() {}

/// Remove one of the customer's saved payment methods; never the one a live paid
/// subscription is billed with.
#[utoipa::path(delete, path = "/v1/customer-portal/customers/me/payment-methods/{id}", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 204, description = "Removed"),
        (status = 400, description = "PaymentMethodInUseByActiveSubscription: a subscription is billed with it", body = Error),
        (status = 404, description = "Not the customer's payment method", body = Error),
))]
fn portal_payment_methods_delete() {}
