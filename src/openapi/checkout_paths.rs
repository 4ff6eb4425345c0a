//! The operations of the checkout sessions (`/v1/checkouts/…` and the seed-era
//! `/v1/checkouts/custom/…`) and of the checkout links (`/v1/checkout-links/…`), as
//! [`super::paths`] declares the others.
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::checkout::{
    CheckoutConfirm, CheckoutCreate, CheckoutPublic, CheckoutPublicConfirmed, CheckoutUpdate,
    CheckoutUpdatePublic, CheckoutView,
};
use crate::api::checkout_link::{CheckoutLinkCreate, CheckoutLinkUpdate, CheckoutLinkView};
use crate::api::ListResource;
use crate::error::ErrorBody as Error;

// ---------------------------------------------------------------------------------------
// Checkouts
// ---------------------------------------------------------------------------------------

/// List checkout sessions.
#[utoipa::path(get, path = "/v1/checkouts/custom/", tag = "checkouts",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("product_id" = Option<Vec<Uuid>>, Query),
        ("customer_id" = Option<Vec<Uuid>>, Query),
        ("external_customer_id" = Option<Vec<String>>, Query),
        ("status" = Option<Vec<crate::api::checkout::CheckoutStatus>>, Query),
        ("query" = Option<String>, Query, description = "Part of the customer's e-mail address."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `expires_at`, `-` prefix for descending."),
    ),
    security(("bearer" = ["checkouts:read"])),
    responses((status = 200, body = ListResource<CheckoutView>)))]
fn checkouts_list() {}

/// Create a checkout session.
#[utoipa::path(post, path = "/v1/checkouts/custom/", tag = "checkouts",
    request_body = CheckoutCreate,
    security(("bearer" = ["checkouts:write"])),
    responses((status = 201, body = CheckoutView), (status = 502, description = "TaxCalculationFailed: the organization's tax provider (Stripe Tax) did not answer; nothing was charged", body = Error)))]
fn checkouts_create() {}

/// Get a checkout session.
#[utoipa::path(get, path = "/v1/checkouts/custom/{id}", tag = "checkouts",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["checkouts:read"])),
    responses((status = 200, body = CheckoutView)))]
fn checkouts_get() {}

/// Update an open checkout session.
#[utoipa::path(patch, path = "/v1/checkouts/custom/{id}", tag = "checkouts",
    params(("id" = Uuid, Path)),
    request_body = CheckoutUpdate,
    security(("bearer" = ["checkouts:write"])),
    responses((status = 200, body = CheckoutView), (status = 403, body = Error), (status = 502, description = "TaxCalculationFailed: the organization's tax provider (Stripe Tax) did not answer; nothing was charged", body = Error)))]
fn checkouts_update() {}

/// Get a checkout session by its client secret (no authentication).
#[utoipa::path(get, path = "/v1/checkouts/custom/client/{client_secret}", tag = "checkouts",
    params(("client_secret" = String, Path)),
    responses((status = 200, body = CheckoutPublic), (status = 404, body = Error)))]
fn checkouts_client_get() {}

/// Update a checkout session by its client secret (no authentication).
#[utoipa::path(patch, path = "/v1/checkouts/custom/client/{client_secret}", tag = "checkouts",
    params(("client_secret" = String, Path)),
    request_body = CheckoutUpdatePublic,
    responses((status = 200, body = CheckoutPublic), (status = 403, body = Error), (status = 404, body = Error), (status = 502, description = "TaxCalculationFailed: the organization's tax provider (Stripe Tax) did not answer; nothing was charged", body = Error)))]
fn checkouts_client_update() {}

/// Confirm a checkout session and pay (no authentication).
#[utoipa::path(post, path = "/v1/checkouts/custom/client/{client_secret}/confirm", tag = "checkouts",
    params(("client_secret" = String, Path)),
    request_body = CheckoutConfirm,
    responses((status = 200, body = CheckoutPublicConfirmed), (status = 400, body = Error), (status = 403, body = Error), (status = 404, body = Error), (status = 502, description = "TaxCalculationFailed: the organization's tax provider (Stripe Tax) did not answer; nothing was charged", body = Error)))]
fn checkouts_client_confirm() {}

/// List checkout sessions (Polar's current spelling of `/v1/checkouts/custom/`).
#[utoipa::path(get, path = "/v1/checkouts/", tag = "checkouts",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("product_id" = Option<Vec<Uuid>>, Query),
        ("customer_id" = Option<Vec<Uuid>>, Query),
        ("external_customer_id" = Option<Vec<String>>, Query),
        ("status" = Option<Vec<crate::api::checkout::CheckoutStatus>>, Query),
        ("query" = Option<String>, Query, description = "Part of the customer's e-mail address."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `expires_at`, `-` prefix for descending."),
    ),
    security(("bearer" = ["checkouts:read"])),
    responses((status = 200, body = ListResource<CheckoutView>)))]
fn checkout_sessions_list() {}

/// Create a checkout session: for a list of products (`products`, the first selected), a
/// product (`product_id`, its first price) or a price (`product_price_id`).
#[utoipa::path(post, path = "/v1/checkouts/", tag = "checkouts",
    request_body = CheckoutCreate,
    security(("bearer" = ["checkouts:write"])),
    responses((status = 201, body = CheckoutView), (status = 502, description = "TaxCalculationFailed: the organization's tax provider (Stripe Tax) did not answer; nothing was charged", body = Error)))]
fn checkout_sessions_create() {}

/// Get a checkout session.
#[utoipa::path(get, path = "/v1/checkouts/{id}", tag = "checkouts",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["checkouts:read"])),
    responses((status = 200, body = CheckoutView)))]
fn checkout_sessions_get() {}

/// Update an open checkout session.
#[utoipa::path(patch, path = "/v1/checkouts/{id}", tag = "checkouts",
    params(("id" = Uuid, Path)),
    request_body = CheckoutUpdate,
    security(("bearer" = ["checkouts:write"])),
    responses((status = 200, body = CheckoutView), (status = 403, body = Error), (status = 502, description = "TaxCalculationFailed: the organization's tax provider (Stripe Tax) did not answer; nothing was charged", body = Error)))]
fn checkout_sessions_update() {}

/// Get a checkout session by its client secret (no authentication).
#[utoipa::path(get, path = "/v1/checkouts/client/{client_secret}", tag = "checkouts",
    params(("client_secret" = String, Path)),
    responses((status = 200, body = CheckoutPublic), (status = 404, body = Error)))]
fn checkout_sessions_client_get() {}

/// Update a checkout session by its client secret (no authentication).
#[utoipa::path(patch, path = "/v1/checkouts/client/{client_secret}", tag = "checkouts",
    params(("client_secret" = String, Path)),
    request_body = CheckoutUpdatePublic,
    responses((status = 200, body = CheckoutPublic), (status = 403, body = Error), (status = 404, body = Error), (status = 502, description = "TaxCalculationFailed: the organization's tax provider (Stripe Tax) did not answer; nothing was charged", body = Error)))]
fn checkout_sessions_client_update() {}

/// Confirm a checkout session and pay (no authentication).
#[utoipa::path(post, path = "/v1/checkouts/client/{client_secret}/confirm", tag = "checkouts",
    params(("client_secret" = String, Path)),
    request_body = CheckoutConfirm,
    responses((status = 200, body = CheckoutPublicConfirmed), (status = 400, body = Error), (status = 403, body = Error), (status = 404, body = Error), (status = 502, description = "TaxCalculationFailed: the organization's tax provider (Stripe Tax) did not answer; nothing was charged", body = Error)))]
fn checkout_sessions_client_confirm() {}

// ---------------------------------------------------------------------------------------
// Checkout links
// ---------------------------------------------------------------------------------------

/// List checkout links (oldest first unless sorted otherwise).
#[utoipa::path(get, path = "/v1/checkout-links/", tag = "checkout-links",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("product_id" = Option<Vec<Uuid>>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `label`, `success_url`, `allow_discount_codes`, `-` prefix for descending."),
    ),
    security(("bearer" = ["checkout_links:read"])),
    responses((status = 200, body = ListResource<CheckoutLinkView>)))]
fn checkout_links_list() {}

/// Create a checkout link for products, a product or the product of a price.
#[utoipa::path(post, path = "/v1/checkout-links/", tag = "checkout-links",
    request_body = CheckoutLinkCreate,
    security(("bearer" = ["checkout_links:write"])),
    responses((status = 201, body = CheckoutLinkView)))]
fn checkout_links_create() {}

/// Get a checkout link.
#[utoipa::path(get, path = "/v1/checkout-links/{id}", tag = "checkout-links",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["checkout_links:read"])),
    responses((status = 200, body = CheckoutLinkView)))]
fn checkout_links_get() {}

/// Update a checkout link.
#[utoipa::path(patch, path = "/v1/checkout-links/{id}", tag = "checkout-links",
    params(("id" = Uuid, Path)),
    request_body = CheckoutLinkUpdate,
    security(("bearer" = ["checkout_links:write"])),
    responses((status = 200, body = CheckoutLinkView)))]
fn checkout_links_update() {}

/// Delete a checkout link (the checkouts it opened stay).
#[utoipa::path(delete, path = "/v1/checkout-links/{id}", tag = "checkout-links",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["checkout_links:write"])),
    responses((status = 204, description = "Deleted")))]
fn checkout_links_delete() {}

/// Follow a checkout link (no authentication): opens a new checkout of its products and
/// redirects to the checkout's page. Query prefill: `product_id` (one of the link's),
/// `customer_email`, `customer_name`, `discount_code`; `reference_id` and `utm_*` go into
/// the checkout's metadata. `embed_origin`: the origin of the page embedding the checkout
/// (`@polar-sh/checkout`), which the organization's `embed_hosts` must list; the other
/// parameters (`embed`, `theme`, …) are passed on to the checkout's page. Limited per
/// client address.
#[utoipa::path(get, path = "/v1/checkout-links/{client_secret}/redirect", tag = "checkout-links",
    params(
        ("client_secret" = String, Path),
        ("product_id" = Option<Uuid>, Query),
        ("customer_email" = Option<String>, Query),
        ("customer_name" = Option<String>, Query),
        ("discount_code" = Option<String>, Query),
        ("reference_id" = Option<String>, Query),
        ("embed_origin" = Option<String>, Query),
    ),
    responses(
        (status = 307, description = "To the new checkout's page",
            headers(("Location" = String, description = "The checkout's page"))),
        (status = 403, description = "`EmbedHostNotAllowed`: the embedding page's origin is \
            not one of the organization's `embed_hosts`", body = Error),
        (status = 429, description = "Too many links followed from this address", body = Error,
            headers(("Retry-After" = String, description = "Seconds to wait"))),
    ))]
fn checkout_links_redirect() {}
