//! Signing: the organization's keys for signed license-key answers and license files, as a
//! section of the License keys page (where its JWKS is published, each key with its public
//! key in hex and as a JWK, whether every answer is signed), with the forms that sign every
//! answer or only those asked for, and that rotate the key.
//!
//! Everything goes through `crate::app::license_signing`, the use cases of
//! `/v1/license-keys/signing`: the same tenancy (a user reaches the organizations it is a
//! member of; any other is a 404) and the same records. The keys are made on the section's
//! first view, as on the API's first look.

use actix_web::{web, HttpRequest};
use serde::Deserialize;

use super::{posted, see_other, Dash, Fail, Layout, PageResult};
use crate::api::license_signing::{LicenseKeyJwk, LicenseKeySigning};
use crate::app::license_signing;
use crate::state::AppState;

/// The section's record: the organization's signing settings and keys (made on first use).
pub async fn of(dash: &Dash, layout: &Layout) -> Result<LicenseKeySigning, Fail> {
    Ok(
        license_signing::get(&dash.state, dash.subject(), layout.org)
            .await
            .map_err(crate::error::ApiError::from)?,
    )
}

/// A key as the JWK JSON of the organization's JWKS (RFC 8037), on one line. Its members
/// are fixed names and base64url text (the key and its thumbprint), which need no escaping.
pub fn jwk_json(jwk: &LicenseKeyJwk) -> String {
    format!(
        r#"{{"kty":"{}","crv":"{}","x":"{}","kid":"{}","use":"{}","alg":"{}"}}"#,
        jwk.kty, jwk.crv, jwk.x, jwk.kid, jwk.use_, jwk.alg
    )
}

/// Where the section's forms lead back to.
fn back(layout: &Layout) -> String {
    layout.at("/license-keys#signing")
}

/// The every-answer buttons' form.
#[derive(Deserialize)]
struct EveryAnswerForm {
    sign_every_answer: bool,
}

/// Signs every validate, activate and deactivate answer, or only those an app asks for
/// with `Accept-Signature`.
pub async fn every_answer(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let layout = dash.layout(&path, "license-keys", "License keys").await?;
    let form: EveryAnswerForm = posted(&bytes)?;
    license_signing::set_every_answer(&state, dash.subject(), layout.org, form.sign_every_answer)
        .await
        .map_err(crate::error::ApiError::from)?;
    Ok(see_other(&back(&layout)))
}

/// A new key signs from now on; the old ones stay published (what they signed still
/// verifies).
pub async fn rotate(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let layout = dash.layout(&path, "license-keys", "License keys").await?;
    license_signing::rotate(&state, dash.subject(), layout.org)
        .await
        .map_err(crate::error::ApiError::from)?;
    Ok(see_other(&back(&layout)))
}
