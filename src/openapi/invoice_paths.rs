//! Invoices and credit notes (Polar's invoice routes, `crate::routes::invoices` and the
//! portal's `crate::routes::customer_portal::invoices`).
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::customer_portal::CustomerOrder;
use crate::api::invoice::{OrderInvoice, OrderUpdate, RefundCreditNote};
use crate::api::order::OrderView;
use crate::error::ErrorBody as Error;

/// Change an order's billing details (name, address) before its invoice is issued; an
/// explicit `null` clears a field. A country or state set before cannot change.
#[utoipa::path(patch, path = "/v1/orders/{id}", tag = "orders",
    params(("id" = Uuid, Path)),
    request_body = OrderUpdate,
    security(("bearer" = ["orders:write"])),
    responses(
        (status = 200, body = OrderView),
        (status = 404, description = "Not an order the token reaches", body = Error),
        (status = 409, description = "InvoiceAlreadyIssued: the invoice is issued; refund to correct it", body = Error),
        (status = 422, description = "Country or state cannot be changed, or a field that does not read"),
))]
fn orders_update() {}

/// Ask for the order's invoice: 202 with `null`; it is issued within a second (numbered
/// from the organization's gapless sequence). Nothing changes for an invoiced order.
#[utoipa::path(post, path = "/v1/orders/{id}/invoice", tag = "orders",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["orders:read"])),
    responses(
        (status = 202, description = "`null`: the invoice is on its way"),
        (status = 404, description = "Not an order the token reaches", body = Error),
        (status = 409, description = "OrderNotEligibleForInvoice: the order is not paid", body = Error),
        // Either shape: the refusal's `Error` or an `HTTPValidationError` of a header that
        // does not read.
        (status = 422, description = "MissingInvoiceBillingDetails (`Error`): set a billing name and address first; or a header that does not read (`HTTPValidationError`)"),
))]
fn orders_generate_invoice() {}

/// Where the order's invoice is: a signed link to the PDF, valid 600 seconds.
#[utoipa::path(get, path = "/v1/orders/{id}/invoice", tag = "orders",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["orders:read"])),
    responses(
        (status = 200, body = OrderInvoice),
        (status = 404, description = "InvoiceDoesNotExist (not issued yet), or not an order the token reaches", body = Error),
))]
fn orders_invoice() {}

/// Where a refund's credit note is: a signed link to the PDF, valid 600 seconds. A refund
/// of an invoiced order gets one within a second of succeeding.
#[utoipa::path(get, path = "/v1/refunds/{id}/credit-note", tag = "refunds",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["refunds:read"])),
    responses(
        (status = 200, body = RefundCreditNote),
        (status = 404, description = "CreditNoteDoesNotExist (the order has no invoice, or not issued yet), or not a refund the token reaches", body = Error),
))]
fn refunds_credit_note() {}

/// An invoice's or a credit note's PDF, behind a signed link (`url` of the routes above):
/// no session, the signature is the permission.
#[utoipa::path(get, path = "/v1/invoices/{file}", tag = "orders",
    params(
        ("file" = String, Path, description = "`<id>.pdf`"),
        ("expires" = i64, Query), ("signature" = String, Query),
    ),
    responses(
        (status = 200, description = "The PDF (`application/pdf`, an attachment)"),
        (status = 403, description = "A link this server did not sign", body = Error),
        (status = 404, description = "No such document", body = Error),
        (status = 410, description = "ResourceUnavailable: the link expired", body = Error),
))]
fn invoices_pdf() {}

/// Change the billing details of one of the customer's orders before its invoice is issued.
#[utoipa::path(patch, path = "/v1/customer-portal/orders/{id}", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    request_body = OrderUpdate,
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 200, body = CustomerOrder),
        (status = 404, description = "Not the customer's order", body = Error),
        (status = 409, description = "InvoiceAlreadyIssued", body = Error),
        (status = 422, description = "Country or state cannot be changed, or a field that does not read"),
))]
fn portal_orders_update() {}

/// Ask for the invoice of one of the customer's orders: 202 with `null`.
#[utoipa::path(post, path = "/v1/customer-portal/orders/{id}/invoice", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:write"])),
    responses(
        (status = 202, description = "`null`: the invoice is on its way"),
        (status = 404, description = "Not the customer's order", body = Error),
        (status = 409, description = "OrderNotEligibleForInvoice", body = Error),
        (status = 422, description = "MissingInvoiceBillingDetails (`Error`), or a header that does not read (`HTTPValidationError`)"),
))]
fn portal_orders_generate_invoice() {}

/// Where the invoice of one of the customer's orders is (Polar's `CustomerOrderInvoice`).
#[utoipa::path(get, path = "/v1/customer-portal/orders/{id}/invoice", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:read"])),
    responses(
        (status = 200, body = OrderInvoice),
        (status = 404, description = "InvoiceDoesNotExist, or not the customer's order", body = Error),
))]
fn portal_orders_invoice() {}

/// Where the credit note of a refund of one of the customer's orders is.
#[utoipa::path(get, path = "/v1/customer-portal/refunds/{id}/credit-note", tag = "customer-portal",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customer_portal:read"])),
    responses(
        (status = 200, body = RefundCreditNote),
        (status = 404, description = "CreditNoteDoesNotExist, or not the customer's refund", body = Error),
))]
fn portal_refunds_credit_note() {}
