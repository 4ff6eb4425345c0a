//! The operations of releases and update feeds (Tollgate's extension, docs/updates.md).
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::releases::{
    ReleaseCreate, ReleaseRead, ReleaseUpdate, TauriUpdate, UpdateSigningKeyRead,
};
use crate::api::ListResource;
use crate::error::ErrorBody as Error;

/// List a product's releases (Tollgate's), newest first.
#[utoipa::path(get, path = "/v1/releases/", tag = "releases",
    params(
        ("organization_id" = Option<Vec<uuid::Uuid>>, Query),
        ("product_id" = Option<Vec<uuid::Uuid>>, Query),
        ("channel" = Option<Vec<String>>, Query, description = "`stable`, `beta` or `alpha`."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["products:read"])),
    responses((status = 200, body = ListResource<ReleaseRead>)))]
pub(super) fn releases_list() {}

/// Create a draft release of a product: a semantic version unique per product, a
/// channel, notes and one uploaded file per platform and bundle.
#[utoipa::path(post, path = "/v1/releases/", tag = "releases",
    request_body = ReleaseCreate,
    security(("bearer" = ["products:write"])),
    responses((status = 201, body = ReleaseRead)))]
pub(super) fn releases_create() {}

/// The organization's update-signing public keys (made on first use, never rotated):
/// Sparkle's `SUPublicEDKey` and Tauri's `pubkey`.
#[utoipa::path(get, path = "/v1/releases/signing-key", tag = "releases",
    params(("organization_id" = uuid::Uuid, Query)),
    security(("bearer" = ["products:read"])),
    responses((status = 200, body = UpdateSigningKeyRead)))]
pub(super) fn releases_signing_key() {}

/// Get a release.
#[utoipa::path(get, path = "/v1/releases/{id}", tag = "releases",
    params(("id" = uuid::Uuid, Path)),
    security(("bearer" = ["products:read"])),
    responses((status = 200, body = ReleaseRead)))]
pub(super) fn releases_get() {}

/// Change a release; its files only while it is a draft (403 after).
#[utoipa::path(patch, path = "/v1/releases/{id}", tag = "releases",
    params(("id" = uuid::Uuid, Path)),
    request_body = ReleaseUpdate,
    security(("bearer" = ["products:write"])),
    responses((status = 200, body = ReleaseRead),
        (status = 403, description = "Files of a release no longer a draft", body = Error)))]
pub(super) fn releases_update() {}

/// Delete a draft release (403 for a published or yanked one: yank it).
#[utoipa::path(delete, path = "/v1/releases/{id}", tag = "releases",
    params(("id" = uuid::Uuid, Path)),
    security(("bearer" = ["products:write"])),
    responses((status = 204, description = "Deleted"),
        (status = 403, description = "Not a draft", body = Error)))]
pub(super) fn releases_delete() {}

/// Publish a draft: every file must be uploaded; each is signed once (minisign for Tauri,
/// ed25519 for Sparkle) with the organization's update-signing key. A published release
/// answers unchanged; a yanked one is 403.
#[utoipa::path(post, path = "/v1/releases/{id}/publish", tag = "releases",
    params(("id" = uuid::Uuid, Path)),
    security(("bearer" = ["products:write"])),
    responses((status = 200, body = ReleaseRead),
        (status = 403, description = "Yanked", body = Error)))]
pub(super) fn releases_publish() {}

/// Yank a published release: it leaves every feed and its links stop.
#[utoipa::path(post, path = "/v1/releases/{id}/yank", tag = "releases",
    params(("id" = uuid::Uuid, Path)),
    security(("bearer" = ["products:write"])),
    responses((status = 200, body = ReleaseRead),
        (status = 403, description = "A draft (delete it)", body = Error)))]
pub(super) fn releases_yank() {}

/// electron-updater's channel file (`latest.yml`, `latest-mac.yml`, `latest-linux.yml`,
/// `latest-linux-arm64.yml`, `beta-linux.yml`…) or Sparkle's `appcast.xml`, for a license
/// key (`Authorization: Bearer <key>` or `License <key>`, or `?key=`) or a customer portal
/// session (`Authorization: Bearer polar_cst_…`: through the keys of the product its
/// customer holds). Not a validation: nothing is counted.
#[utoipa::path(get, path = "/v1/updates/{product_id}/{channel}/{file}", tag = "updates",
    params(("product_id" = uuid::Uuid, Path), ("channel" = String, Path, description = "`stable` (or `latest`), `beta` or `alpha`"),
        ("file" = String, Path), ("key" = Option<String>, Query, description = "The license key, for updaters that cannot send headers.")),
    responses(
        (status = 200, description = "The feed (YAML or RSS)", content_type = "text/yaml"),
        (status = 401, description = "No or unknown license key, or an expired session", body = Error),
        (status = 403, description = "Revoked or disabled key", body = Error),
        (status = 404, description = "Nothing for this key and platform, a key of another product, or a session whose customer holds no key of the product", body = Error)))]
pub(super) fn updates_channel_file() {}

/// Tauri's dynamic update endpoint: 200 with the newest release the key (or the portal
/// session's customer) may have for `{target}-{arch}` when newer than `current_version`,
/// else 204.
#[utoipa::path(get, path = "/v1/updates/{product_id}/{channel}/tauri/{target}/{arch}/{current_version}", tag = "updates",
    params(("product_id" = uuid::Uuid, Path), ("channel" = String, Path), ("target" = String, Path),
        ("arch" = String, Path), ("current_version" = String, Path), ("key" = Option<String>, Query)),
    responses(
        (status = 200, body = TauriUpdate),
        (status = 204, description = "Nothing newer"),
        (status = 401, description = "No or unknown license key, or an expired session", body = Error),
        (status = 404, description = "A key of another product, or a session whose customer holds no key of the product", body = Error)))]
pub(super) fn updates_tauri() {}

/// Tauri's static `latest.json`: the newest release the key (or the portal session's
/// customer) may have with a file Tauri installs, `platforms` keyed `{os}-{arch}` (the
/// preferred bundle) and `{os}-{arch}-{bundle}`; 204 when there is none.
#[utoipa::path(get, path = "/v1/updates/{product_id}/{channel}/tauri/latest.json", tag = "updates",
    params(("product_id" = uuid::Uuid, Path), ("channel" = String, Path), ("key" = Option<String>, Query)),
    responses(
        (status = 200, description = "`{version, notes, pub_date, platforms: {<key>: {url, signature}}}`", content_type = "application/json"),
        (status = 204, description = "No release with a Tauri file"),
        (status = 401, description = "No or unknown license key, or an expired session", body = Error),
        (status = 404, description = "A key of another product, or a session whose customer holds no key of the product", body = Error)))]
pub(super) fn updates_tauri_static() {}

/// A release's file by the signed link of a feed (`key_id`, or `customer_id` and
/// `checkout_id` for a portal session's, `expires`, `signature`) or with the license key
/// or a portal session; the key (the customer's keys) and the release are checked again. `302` to the object
/// store, or the bytes.
#[utoipa::path(get, path = "/v1/updates/download/{release_id}/{name}", tag = "updates",
    params(("release_id" = uuid::Uuid, Path), ("name" = String, Path),
        ("key_id" = Option<uuid::Uuid>, Query), ("expires" = Option<i64>, Query), ("signature" = Option<String>, Query),
        ("customer_id" = Option<uuid::Uuid>, Query), ("checkout_id" = Option<uuid::Uuid>, Query),
        ("key" = Option<String>, Query)),
    responses(
        (status = 200, description = "The file's bytes", content_type = "application/octet-stream"),
        (status = 302, description = "To the object store's presigned URL"),
        (status = 403, description = "Forged link, or revoked key", body = Error),
        (status = 404, description = "No longer allowed, or no such file", body = Error),
        (status = 410, description = "Expired link", body = Error)))]
pub(super) fn updates_download() {}
