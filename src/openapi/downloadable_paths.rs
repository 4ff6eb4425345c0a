//! The operations of the customer portal's downloadables (Polar's
//! `customer_portal/endpoints/downloadables.py`).
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::customer_portal_downloadables::DownloadableRead;
use crate::api::ListResource;
use crate::error::ErrorBody as Error;

/// List the files the customer's benefits give now, newest grant first, each with a signed
/// download link valid `files.download_link_ttl_secs`. A refund that revokes the benefits,
/// a subscription that ended or a deleted benefit or file take them away at once.
#[utoipa::path(get, path = "/v1/customer-portal/downloadables/", tag = "customer-portal",
    params(
        ("benefit_id" = Option<uuid::Uuid>, Query, description = "Only this benefit's files."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = ListResource<DownloadableRead>)))]
pub(super) fn downloadables_list() {}

/// Download a file through the link of a listed downloadable: no credential but the link.
/// The grant is checked again now; every download is counted. Rate-limited per client
/// address and per customer (`files.download_limit_per_address`,
/// `files.download_limit_per_customer` within `files.download_limit_window_secs`).
#[utoipa::path(get, path = "/v1/customer-portal/downloadables/{token}", tag = "customer-portal",
    params(("token" = String, Path)),
    responses(
        (status = 200, description = "The file's bytes (local storage)", content_type = "application/octet-stream"),
        (status = 302, description = "To the object store's presigned URL", headers(("Location" = String))),
        (status = 400, description = "Not a download link", body = Error),
        (status = 404, description = "Forged link, or no longer granted", body = Error),
        (status = 410, description = "Expired link", body = Error),
        (status = 429, description = "Too many downloads", body = Error)))]
pub(super) fn downloadables_download() {}
