//! The operations of `/v1/files` (Polar's `file/endpoints.py`), and the part upload that
//! the local backend's signed URLs point at. Kept apart so that no file grows past the
//! size `scripts/check-layers.py` allows.
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::files::{FileCreate, FilePatch, FileRead, FileUpload, FileUploadCompleted};
use crate::api::ListResource;
use crate::error::ErrorBody as Error;

/// List the uploaded files of the organizations the token reaches, newest first.
#[utoipa::path(get, path = "/v1/files/", tag = "files",
    params(
        ("organization_id" = Option<Vec<uuid::Uuid>>, Query),
        ("ids" = Option<Vec<uuid::Uuid>>, Query, description = "Only these files."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["files:read"])),
    responses((status = 200, body = ListResource<FileRead>)))]
pub(super) fn files_list() {}

/// Create a file and its multipart upload: one signed `PUT` URL per part, valid
/// `files.upload_url_ttl_secs`. Parts cover `[0, size)` contiguously, numbered from 1,
/// each but the last at least 5 MiB, at most 10 000; `size` at most `files.max_file_bytes`
/// and within the organization's `files.max_organization_bytes`.
#[utoipa::path(post, path = "/v1/files/", tag = "files",
    request_body = FileCreate,
    security(("bearer" = ["files:write"])),
    responses((status = 201, body = FileUpload)))]
pub(super) fn files_create() {}

/// Complete the upload: the parts are assembled in order and hashed; `id` and `path` must
/// be the upload's, every part listed with the `ETag` its `PUT` answered. A whole-file
/// SHA-256 declared at creation that the bytes do not match is a 422, and nothing is kept.
#[utoipa::path(post, path = "/v1/files/{id}/uploaded", tag = "files",
    params(("id" = uuid::Uuid, Path)),
    request_body = FileUploadCompleted,
    security(("bearer" = ["files:write"])),
    responses((status = 200, body = FileRead)))]
pub(super) fn files_uploaded() {}

/// Rename a file or set its version (empty strings change nothing).
#[utoipa::path(patch, path = "/v1/files/{id}", tag = "files",
    params(("id" = uuid::Uuid, Path)),
    request_body = FilePatch,
    security(("bearer" = ["files:write"])),
    responses((status = 200, body = FileRead)))]
pub(super) fn files_update() {}

/// Delete a file: its record, its bytes and its share of the organization's quota.
#[utoipa::path(delete, path = "/v1/files/{id}", tag = "files",
    params(("id" = uuid::Uuid, Path)),
    security(("bearer" = ["files:write"])),
    responses((status = 204, description = "Deleted")))]
pub(super) fn files_delete() {}

/// Send one part (the URL of `upload.parts[].url`, with its `headers`): no bearer token,
/// the signed URL is the credential. The body is `chunk_end - chunk_start` bytes; the
/// answer's `ETag` is the part's quoted hex SHA-256, to give back at `/uploaded`.
#[utoipa::path(put, path = "/v1/files/{id}/parts/{number}", tag = "files",
    params(
        ("id" = uuid::Uuid, Path), ("number" = u32, Path),
        ("upload_id" = String, Query), ("expires" = i64, Query), ("signature" = String, Query),
        ("x-amz-checksum-sha256" = Option<String>, Header, description = "Ignored: the checksum declared at creation is checked."),
    ),
    request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    responses(
        (status = 200, description = "Stored; `ETag` header", headers(("ETag" = String))),
        (status = 400, description = "Wrong length or checksum; nothing kept", body = Error),
        (status = 403, description = "Forged or altered URL", body = Error),
        (status = 404, description = "No such file, upload or part", body = Error),
        (status = 410, description = "Expired URL", body = Error)))]
pub(super) fn files_put_part() {}

/// The uploaded files a backup copies (`tollgate backup`): `[{organization_id, id, size,
/// sha256}]` (hex SHA-256); only a personal access token of an admin user.
#[utoipa::path(get, path = "/v1/admin/backup/files", tag = "admin",
    security(("bearer" = [])),
    responses((status = 200, description = "The list of uploaded files", body = Vec<serde_json::Value>)))]
pub(super) fn admin_backup_files() {}

/// The bytes of one uploaded file, streamed, for `tollgate backup`; only a personal access
/// token of an admin user.
#[utoipa::path(get, path = "/v1/admin/backup/files/{id}", tag = "admin",
    params(("id" = uuid::Uuid, Path)),
    security(("bearer" = [])),
    responses((status = 200, description = "The file's bytes", content_type = "application/octet-stream")))]
pub(super) fn admin_backup_file() {}
