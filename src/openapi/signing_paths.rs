//! The operations of signed license-key answers and license files (Tollgate's; see
//! `crate::signature`). Kept apart so that no file grows past the size
//! `scripts/check-layers.py` allows.
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::license_signing::{
    LicenseFile, LicenseFileRequest, LicenseKeyJwks, LicenseKeySigning, LicenseKeySigningRotate,
    LicenseKeySigningUpdate,
};
use crate::error::ErrorBody as Error;

/// The organization's public keys for signed answers and license files (RFC 8037 JWKS:
/// `OKP`/`Ed25519`), the signing one first, then the retired ones; no authentication.
/// Keys are made on first use.
#[utoipa::path(get, path = "/v1/customer-portal/license-keys/jwks", tag = "customer-portal",
    params(("organization_id" = uuid::Uuid, Query)),
    responses((status = 200, body = LicenseKeyJwks), (status = 404, description = "No such organization", body = Error)))]
pub(super) fn portal_license_keys_jwks() {}

/// How the organization signs license-key answers, and its key pairs (made on first use).
#[utoipa::path(get, path = "/v1/license-keys/signing", tag = "license-keys",
    params(("organization_id" = uuid::Uuid, Query)),
    security(("bearer" = ["license_keys:read"])),
    responses((status = 200, body = LicenseKeySigning), (status = 404, body = Error)))]
pub(super) fn license_keys_signing_get() {}

/// Sign every validate, activate and deactivate answer, asked for or not (or only those
/// that ask with `Accept-Signature`).
#[utoipa::path(patch, path = "/v1/license-keys/signing", tag = "license-keys",
    request_body = LicenseKeySigningUpdate,
    security(("bearer" = ["license_keys:write"])),
    responses((status = 200, body = LicenseKeySigning), (status = 404, body = Error)))]
pub(super) fn license_keys_signing_update() {}

/// A new key pair signs from now on; the old public keys stay in the JWKS, so answers and
/// license files they signed still verify.
#[utoipa::path(post, path = "/v1/license-keys/signing/rotate", tag = "license-keys",
    request_body = LicenseKeySigningRotate,
    security(("bearer" = ["license_keys:write"])),
    responses((status = 200, body = LicenseKeySigning), (status = 404, body = Error)))]
pub(super) fn license_keys_signing_rotate() {}

/// An offline license file of a key (no authentication): a signed, time-limited
/// certificate in Keygen's format (`-----BEGIN LICENSE FILE-----`, base64 of
/// `{"enc", "sig", "alg"}`), verified with the organization's public key alone (JWKS);
/// optionally encrypted with a key derived from the license key. Only for a key that
/// validates: refusals are the validation's, with their `code`.
#[utoipa::path(post, path = "/v1/customer-portal/license-keys/license-file", tag = "customer-portal",
    request_body = LicenseFileRequest,
    responses((status = 200, body = LicenseFile), (status = 403, body = Error), (status = 404, body = Error), (status = 429, body = Error)))]
pub(super) fn portal_license_keys_license_file() {}
