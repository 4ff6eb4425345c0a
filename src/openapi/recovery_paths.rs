//! "Pay now" in the customer portal (Polar's `orders/{id}/confirm-payment` and
//! `payment-status`): a customer session token only; another customer's order is 404.
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::recovery::{
    CustomerOrderConfirmPayment, CustomerOrderConfirmPaymentResponse, CustomerOrderPaymentStatus,
};
use crate::error::ErrorBody as Error;

/// Pay a past-due subscription's pending renewal order now, with a saved payment method
/// or a new one; 200 in every payment outcome (`failed` with the decline's message).
#[utoipa::path(post, path = "/v1/customer-portal/orders/{id}/confirm-payment", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    request_body = CustomerOrderConfirmPayment,
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 200, body = CustomerOrderConfirmPaymentResponse),
        (status = 404, description = "Not the customer's order", body = Error),
        (status = 409, description = "PaymentAlreadyInProgress: a charge of it is under way", body = Error),
        // Either shape: a refusal's `Error` (`OrderNotEligibleForRetry`,
        // `PaymentRetryValidationError`) or an `HTTPValidationError` of a body that does not read.
        (status = 422, description = "OrderNotEligibleForRetry or PaymentRetryValidationError (`Error`), or a body that does not read (`HTTPValidationError`)"),
        (status = 429, description = "ManualRetryLimitExceeded: five attempts already", body = Error),
))]
fn portal_orders_confirm_payment() {}

/// The last payment of one of the customer's orders: `pending`, `succeeded`, `failed` or
/// `no_payment`.
#[utoipa::path(get, path = "/v1/customer-portal/orders/{id}/payment-status", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:read"])),
    responses(
        (status = 200, body = CustomerOrderPaymentStatus),
        (status = 404, description = "Not the customer's order", body = Error),
))]
fn portal_orders_payment_status() {}
