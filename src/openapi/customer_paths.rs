//! The operations of the customer area beyond the plain CRUD of `super::paths`: customers
//! by external ID, customer state, customer sessions and benefit grants (kept apart so that
//! no file grows past the size `scripts/check-layers.py` allows).
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::customer::{CustomerUpdate, CustomerView};
use crate::api::ListResource;
use crate::error::ErrorBody as Error;

/// Get a customer by external ID.
#[utoipa::path(get, path = "/v1/customers/external/{external_id}", tag = "customers",
    params(("external_id" = String, Path, description = "The customer external ID.")),
    security(("bearer" = ["customers:read"])),
    responses((status = 200, body = CustomerView),
        (status = 409, description = "Several customers of the caller's organizations have this external ID", body = Error)))]
fn customers_get_external() {}

/// Update a customer by external ID (its `external_id` cannot be changed here).
#[utoipa::path(patch, path = "/v1/customers/external/{external_id}", tag = "customers",
    params(("external_id" = String, Path, description = "The customer external ID.")),
    request_body = CustomerUpdate,
    security(("bearer" = ["customers:write"])),
    responses((status = 200, body = CustomerView),
        (status = 409, description = "Several customers of the caller's organizations have this external ID, or a conflicting write won", body = Error)))]
fn customers_update_external() {}

/// Delete a customer by external ID (soft; the external ID is freed).
#[utoipa::path(delete, path = "/v1/customers/external/{external_id}", tag = "customers",
    params(("external_id" = String, Path, description = "The customer external ID.")),
    security(("bearer" = ["customers:write"])),
    responses((status = 204, description = "Deleted"),
        (status = 409, description = "Several customers of the caller's organizations have this external ID, or a conflicting write won", body = Error)))]
fn customers_delete_external() {}

/// Get a customer's state: the customer, its active subscriptions (`active` or
/// `trialing`), the benefits it holds now and its meters (none in Tollgate).
#[utoipa::path(get, path = "/v1/customers/{id}/state", tag = "customers",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["customers:read"])),
    responses((status = 200, body = crate::api::customer_state::CustomerStateView)))]
fn customers_state() {}

/// Get a customer's state by external ID.
#[utoipa::path(get, path = "/v1/customers/external/{external_id}/state", tag = "customers",
    params(("external_id" = String, Path, description = "The customer external ID.")),
    security(("bearer" = ["customers:read"])),
    responses((status = 200, body = crate::api::customer_state::CustomerStateView),
        (status = 409, description = "Several customers of the caller's organizations have this external ID", body = Error)))]
fn customers_state_external() {}

// ---------------------------------------------------------------------------------------
// Customer sessions
// ---------------------------------------------------------------------------------------

/// Create a customer session: a `polar_cst_…` token, valid one hour, for the
/// customer-portal endpoints of the customer named by `customer_id` or
/// `external_customer_id` (an unknown one is a 422 at that field).
#[utoipa::path(post, path = "/v1/customer-sessions/", tag = "customer-sessions",
    request_body = crate::api::customer_session::CustomerSessionCreate,
    security(("bearer" = ["customer_sessions:write"])),
    responses((status = 201, body = crate::api::customer_session::CustomerSessionView)))]
fn customer_sessions_create() {}

// ---------------------------------------------------------------------------------------
// Benefit grants
// ---------------------------------------------------------------------------------------

/// List the benefits granted to customers, across the organizations the caller reaches.
#[utoipa::path(get, path = "/v1/benefit-grants/", tag = "benefit-grants",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("customer_id" = Option<Vec<Uuid>>, Query),
        ("external_customer_id" = Option<Vec<String>>, Query),
        ("is_granted" = Option<bool>, Query, description = "`true`: granted ones; `false`: revoked ones."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `granted_at`, `revoked_at`, `-` prefix for descending."),
    ),
    security(("bearer" = ["benefits:read"])),
    responses((status = 200, body = ListResource<crate::api::benefit_grant::BenefitGrantRead>)))]
fn benefit_grants_list() {}

/// List the grants of a benefit, newest first.
#[utoipa::path(get, path = "/v1/benefits/{id}/grants", tag = "benefits",
    params(
        ("id" = Uuid, Path),
        ("is_granted" = Option<bool>, Query, description = "`true`: granted ones; `false`: revoked ones."),
        ("customer_id" = Option<Vec<Uuid>>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["benefits:read"])),
    responses((status = 200, body = ListResource<crate::api::benefit_grant::BenefitGrantRead>)))]
fn benefits_grants() {}
