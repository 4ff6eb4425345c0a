//! Signed license-key answers and offline license files (Tollgate's; see
//! `crate::signature` and `crate::app::license_signing`):
//!
//! * `GET /v1/customer-portal/license-keys/jwks?organization_id=`: the organization's
//!   public keys (RFC 8037 JWKS), no authentication, any origin;
//! * `POST /v1/customer-portal/license-keys/license-file`: an offline license file of a key
//!   (Keygen's format, `crate::app::license_file`), no authentication, rate-limited as a
//!   validation;
//! * `GET /v1/license-keys/signing?organization_id=` (`license_keys:read`),
//!   `PATCH /v1/license-keys/signing` and `POST /v1/license-keys/signing/rotate`
//!   (`license_keys:write`): the seller's keys and `sign_every_answer`.

use actix_web::{web, HttpRequest, HttpResponse};

use crate::api::license_signing::{
    LicenseFile, LicenseFileRequest, LicenseKeyJwks, LicenseKeySigning, LicenseKeySigningRotate,
    LicenseKeySigningUpdate,
};
use crate::app::license_signing;
use crate::domain::ids::OrganizationId;
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{LicenseKeysRead, LicenseKeysWrite};
use crate::extract::{Auth, QueryParams, RawQuery, ValidJson};
use crate::state::AppState;

/// The public routes: registered by the customer portal before its `{id}` routes.
pub fn configure_portal(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/customer-portal/license-keys/jwks", { get => jwks });
    crate::resource!(cfg, "/v1/customer-portal/license-keys/license-file", { post => license_file });
}

/// The seller's routes: registered before `/v1/license-keys/{id}`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/license-keys/signing", { get => get, patch => update });
    crate::resource!(cfg, "/v1/license-keys/signing/rotate", { post => rotate });
}

fn organization(query: &RawQuery) -> Result<OrganizationId, ApiError> {
    let mut q = QueryParams::parse(&query.0);
    let org = q.required_id("organization_id");
    q.finish()?;
    org.ok_or_else(ApiError::not_found)
}

/// The JWKS; cacheable for a few minutes (a rotation publishes the new key at once, and
/// the old ones stay).
async fn jwks(state: web::Data<AppState>, query: RawQuery) -> ApiResult<HttpResponse> {
    let org = organization(&query)?;
    let keys: LicenseKeyJwks = license_signing::jwks(&state, org).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "public, max-age=300"))
        .json(keys))
}

async fn get(
    auth: Auth<LicenseKeysRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<LicenseKeySigning>> {
    let org = organization(&query)?;
    Ok(web::Json(
        license_signing::get(&state, auth.subject(), org).await?,
    ))
}

async fn update(
    auth: Auth<LicenseKeysWrite>,
    state: web::Data<AppState>,
    body: ValidJson<LicenseKeySigningUpdate>,
) -> ApiResult<web::Json<LicenseKeySigning>> {
    let body = body.into_inner();
    Ok(web::Json(
        license_signing::set_every_answer(
            &state,
            auth.subject(),
            OrganizationId(body.organization_id),
            body.sign_every_answer,
        )
        .await?,
    ))
}

async fn rotate(
    auth: Auth<LicenseKeysWrite>,
    state: web::Data<AppState>,
    body: ValidJson<LicenseKeySigningRotate>,
) -> ApiResult<web::Json<LicenseKeySigning>> {
    let org = OrganizationId(body.into_inner().organization_id);
    Ok(web::Json(
        license_signing::rotate(&state, auth.subject(), org).await?,
    ))
}

/// The license file of a key, for anyone who holds it: refused as its validation would be
/// (same status and `code`); rate-limited per client and per key as validations are.
async fn license_file(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: ValidJson<LicenseFileRequest>,
) -> ApiResult<super::customer_portal::Limited<web::Json<LicenseFile>>> {
    let body = body.into_inner();
    let report = super::customer_portal::limit(&state, &req, &body.organization_id, &body.key)?;
    Ok(super::customer_portal::Limited {
        answer: make_license_file(&state, body).await.map(web::Json),
        report,
    })
}

/// The 422 of a `ttl` out of bounds, else the file.
async fn make_license_file(state: &AppState, body: LicenseFileRequest) -> ApiResult<LicenseFile> {
    let cmd = crate::app::license_file::MakeLicenseFile {
        ttl: body.checked_ttl()?,
        key: body.key,
        organization_id: OrganizationId(body.organization_id),
        activation_id: body.activation_id.map(crate::domain::ids::ActivationId),
        conditions: body.conditions,
        encrypt: body.encrypt,
    };
    Ok(crate::app::license_file::license_file(state, cmd).await?)
}
