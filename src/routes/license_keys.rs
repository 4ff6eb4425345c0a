//! The organizer's license-key endpoints (`/v1/license-keys`, reference 3.4): list, get,
//! update and get an activation; and validate, activate and deactivate with a token
//! (`license_keys:write`), the customer portal's commands for a key of an organization the
//! token reaches. Reads come from the store (behind the read barrier, so they never show a
//! write a crash could undo); every change goes through the key's actor, which owns the
//! key's counters.
//!
//! Deviation (behaviour.md): a key of an organization the caller cannot reach is 404, not
//! Polar's 401, so that ids do not reveal whether a key exists.

use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use tollgate_actors::license_key::{live_activations, KeyStatus};

use crate::api::license_key::{
    LicenseKeyActivate, LicenseKeyActivationCreated, LicenseKeyActivationRead,
    LicenseKeyDeactivate, LicenseKeyRead, LicenseKeyUpdate, LicenseKeyValidate,
    LicenseKeyWithActivations, RotatedLicenseKey, ValidatedLicenseKey,
};
use crate::api::license_key_import::{LicenseKeyImport, LicenseKeyImportResult};
use crate::api::{ListResource, PresizedJson};
use crate::app::license_keys::{self, durable_answer, key_for, live_key};
use crate::app::license_signing;
use crate::app::views::key_customer;
use crate::domain::ids::{ActivationId, BenefitId, LicenseKeyId, OrganizationId};
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{LicenseKeysRead, LicenseKeysWrite};
use crate::extract::json::HotJson;
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, ValidJson};
use crate::signature::{self, MaybeSigned};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    // Before `/{id}`, whose resource would answer these POSTs with a 405.
    crate::resource!(cfg, "/v1/license-keys/validate", { post => validate });
    crate::resource!(cfg, "/v1/license-keys/activate", { post => activate });
    crate::resource!(cfg, "/v1/license-keys/deactivate", { post => deactivate });
    crate::resource!(cfg, "/v1/license-keys/generate", { post => generate });
    super::license_signing::configure(cfg);
    // Bulk bodies (up to 1,000 keys): `server.import_body_limit_bytes`.
    crate::resource::record("post", IMPORT);
    crate::resource::record_bulk(IMPORT);
    cfg.service(
        web::resource(IMPORT)
            .app_data(crate::extract::json::BulkBody)
            .route(web::post().to(import)),
    );
    // Both spellings, answered directly: the seed-era clients call the first, today's
    // (polar-sdk 1.0, @polar-sh/sdk 0.47 and 1.0) the second and follow no redirect.
    crate::resource!(cfg, "/v1/license-keys", { get => list });
    crate::resource!(cfg, "/v1/license-keys/", { get => list });
    crate::resource!(cfg, "/v1/license-keys/{id}", { get => get, patch => update });
    crate::resource!(cfg, "/v1/license-keys/{id}/rotate", { post => rotate });
    crate::resource!(cfg, "/v1/license-keys/{id}/activations/{activation_id}", {
        get => get_activation,
    });
}

/// The `status` filter's values (repeatable: any of them).
const STATUSES: &[(&str, KeyStatus)] = &[
    ("granted", KeyStatus::Granted),
    ("revoked", KeyStatus::Revoked),
    ("disabled", KeyStatus::Disabled),
];

pub(crate) async fn list(
    auth: Auth<LicenseKeysRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<LicenseKeyRead>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    let benefits: Vec<BenefitId> = q.ids("benefit_id");
    let statuses: Vec<KeyStatus> = q.enums("status", STATUSES);
    // Tollgate's extension: a key fragment, a customer's e-mail, name, external id or id.
    let query = q.string("query");
    q.finish()?;
    let filter = license_keys::KeyFilter {
        orgs: &orgs,
        benefits: &benefits,
        statuses: &statuses,
        query: query.as_deref(),
    };
    let page = license_keys::list(&state, auth.subject(), &filter, params).await;
    Ok(web::Json(durable_answer(&state, page).await?))
}

pub(crate) async fn get(
    auth: Auth<LicenseKeysRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<LicenseKeyWithActivations>> {
    let id: LicenseKeyId = path_id("id", &id)?;
    key_for(&state, auth.subject(), id).await?;
    let key = live_key(&state, id).await?;
    let answer = key_customer(&state, &key)
        .await
        .map_err(ApiError::from)
        .map(|customer| LicenseKeyWithActivations::new(&key, &customer, false));
    Ok(web::Json(durable_answer(&state, answer).await?))
}

const IMPORT: &str = "/v1/license-keys/import";

/// `POST /v1/license-keys/generate`: keys made without an order, each claimable once.
pub(crate) async fn generate(
    auth: Auth<LicenseKeysWrite>,
    state: web::Data<AppState>,
    body: ValidJson<crate::api::license_key_import::LicenseKeyGenerate>,
) -> ApiResult<web::Json<crate::api::license_key_import::GeneratedKeys>> {
    Ok(web::Json(
        crate::app::claimable_keys::generate(&state, auth.subject(), body.into_inner().into())
            .await?,
    ))
}

/// `POST /v1/license-keys/import`: keys brought from another provider.
pub(crate) async fn import(
    auth: Auth<LicenseKeysWrite>,
    state: web::Data<AppState>,
    body: ValidJson<LicenseKeyImport>,
) -> ApiResult<web::Json<LicenseKeyImportResult>> {
    Ok(web::Json(
        crate::app::license_key_import::import(
            &state,
            auth.subject(),
            body.into_inner().into_command()?,
        )
        .await?,
    ))
}

pub(crate) async fn update(
    auth: Auth<LicenseKeysWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<LicenseKeyUpdate>,
) -> ApiResult<web::Json<LicenseKeyRead>> {
    let id: LicenseKeyId = path_id("id", &id)?;
    let changes = body.into_inner().into_changes()?;
    let key = license_keys::update(&state, auth.subject(), id, changes).await?;
    Ok(web::Json(key))
}

/// `POST /v1/license-keys/{id}/rotate`: a new value for the key (no body).
pub(crate) async fn rotate(
    auth: Auth<LicenseKeysWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<RotatedLicenseKey>> {
    let id: LicenseKeyId = path_id("id", &id)?;
    Ok(web::Json(
        license_keys::rotate(&state, auth.subject(), id).await?,
    ))
}

pub(crate) async fn get_activation(
    auth: Auth<LicenseKeysRead>,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> ApiResult<web::Json<LicenseKeyActivationRead>> {
    let (id, activation_id) = path.into_inner();
    let id: LicenseKeyId = path_id("id", &id)?;
    let activation_id: ActivationId = path_id("activation_id", &activation_id)?;
    let answer: ApiResult<_> = async {
        let key = key_for(&state, auth.subject(), id).await?;
        let activation = live_activations(&key)
            .find(|a| a.id == activation_id)
            .ok_or_else(ApiError::not_found)?;
        let customer = key_customer(&state, &key).await?;
        Ok(LicenseKeyActivationRead::new(&key, activation, &customer))
    }
    .await;
    Ok(web::Json(durable_answer(&state, answer).await?))
}

/// `POST /v1/license-keys/validate`: the customer portal's validation, with a token;
/// signed as the public one is (`crate::signature`), for an organization the token reaches.
async fn validate(
    auth: Auth<LicenseKeysWrite>,
    state: web::Data<AppState>,
    req: HttpRequest,
    HotJson(body): HotJson<LicenseKeyValidate>,
) -> ApiResult<
    MaybeSigned<
        ApiResult<PresizedJson<ValidatedLicenseKey, { super::customer_portal::VALIDATED_CAP }>>,
    >,
> {
    let requested = signature::requested(&req)?;
    let signing =
        license_signing::for_subject(&state, auth.subject(), body.organization_id, requested)
            .await?;
    let answer = match body.into_command() {
        Ok(cmd) => license_keys::validate_as(&state, auth.subject(), cmd)
            .await
            .map_err(ApiError::from),
        Err(e) => Err(e),
    };
    state.metrics.validation(match &answer {
        Ok(_) => 200,
        Err(e) => ResponseError::status_code(e).as_u16(),
    });
    Ok(MaybeSigned {
        answer: answer.map(PresizedJson),
        signing,
    })
}

/// `POST /v1/license-keys/activate`: 200, as in Polar.
async fn activate(
    auth: Auth<LicenseKeysWrite>,
    state: web::Data<AppState>,
    req: HttpRequest,
    HotJson(body): HotJson<LicenseKeyActivate>,
) -> ApiResult<MaybeSigned<ApiResult<web::Json<LicenseKeyActivationCreated>>>> {
    let requested = signature::requested(&req)?;
    let signing =
        license_signing::for_subject(&state, auth.subject(), body.organization_id, requested)
            .await?;
    let answer = match body.into_command() {
        Ok(cmd) => license_keys::activate_as(&state, auth.subject(), cmd)
            .await
            .map_err(ApiError::from),
        Err(e) => Err(e),
    };
    Ok(MaybeSigned {
        answer: answer.map(web::Json),
        signing,
    })
}

/// `POST /v1/license-keys/deactivate`: 204.
async fn deactivate(
    auth: Auth<LicenseKeysWrite>,
    state: web::Data<AppState>,
    req: HttpRequest,
    HotJson(body): HotJson<LicenseKeyDeactivate>,
) -> ApiResult<MaybeSigned<ApiResult<HttpResponse>>> {
    let requested = signature::requested(&req)?;
    let signing =
        license_signing::for_subject(&state, auth.subject(), body.organization_id, requested)
            .await?;
    let answer: ApiResult<()> = async {
        license_keys::reachable(&state, auth.subject(), OrganizationId(body.organization_id))
            .await?;
        if body.by_label() {
            state
                .limits
                .deactivation_by_label(&body.organization_id, &body.key)?;
        }
        Ok(license_keys::deactivate(&state, body.into_command()?).await?)
    }
    .await;
    Ok(MaybeSigned {
        answer: answer.map(|()| HttpResponse::NoContent().finish()),
        signing,
    })
}
