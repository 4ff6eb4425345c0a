//! The operations of organization access tokens (`/v1/organization-access-tokens/`), kept
//! apart from `super::paths` so that no file grows past the size
//! `scripts/check-layers.py` allows.
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::organization_access_token::{
    OrganizationAccessTokenCreate, OrganizationAccessTokenCreateResponse,
    OrganizationAccessTokenUpdate, OrganizationAccessTokenView,
};
use crate::api::ListResource;

/// List the organization access tokens of the organizations the caller is a member of
/// (deleted ones are not listed; expired ones are).
#[utoipa::path(get, path = "/v1/organization-access-tokens/", tag = "organization-access-tokens",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at` (the default), `comment`, `last_used_at`, `organization_id`; `-` prefix for descending."),
    ),
    security(("bearer" = ["organization_access_tokens:read"]), ("session" = [])),
    responses((status = 200, body = ListResource<OrganizationAccessTokenView>)))]
fn organization_access_tokens_list() {}

/// Create an organization access token (`polar_oat_…`, shown once in `token`): it acts as
/// the organization, with the scopes given (within the caller's own; never
/// `organization_access_tokens:*`). A user's token or browser session only.
#[utoipa::path(post, path = "/v1/organization-access-tokens/", tag = "organization-access-tokens",
    request_body = OrganizationAccessTokenCreate,
    security(("bearer" = ["organization_access_tokens:write"]), ("session" = [])),
    responses((status = 201, body = OrganizationAccessTokenCreateResponse)))]
fn organization_access_tokens_create() {}

/// Change an organization access token's comment or scopes.
#[utoipa::path(patch, path = "/v1/organization-access-tokens/{id}", tag = "organization-access-tokens",
    params(("id" = Uuid, Path)),
    request_body = OrganizationAccessTokenUpdate,
    security(("bearer" = ["organization_access_tokens:write"]), ("session" = [])),
    responses((status = 200, body = OrganizationAccessTokenView)))]
fn organization_access_tokens_update() {}

/// Delete an organization access token: it is refused (401) from then on.
#[utoipa::path(delete, path = "/v1/organization-access-tokens/{id}", tag = "organization-access-tokens",
    params(("id" = Uuid, Path)),
    security(("bearer" = ["organization_access_tokens:write"]), ("session" = [])),
    responses((status = 204, description = "Deleted")))]
fn organization_access_tokens_delete() {}
