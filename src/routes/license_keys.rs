//! The organizer's license-key endpoints (`/v1/license-keys`, reference 3.4): list, get,
//! update and get an activation. Reads come from the store (behind the read barrier, so they
//! never show a write a crash could undo); the update goes through the key's actor, which
//! owns the key's counters.
//!
//! Deviation (behaviour.md): a key of an organization the caller cannot reach is 404, not
//! Polar's 401, so that ids do not reveal whether a key exists.

use actix_web::web;
use tollgate_actors::license_key::live_activations;

use crate::api::license_key::{
    LicenseKeyActivationRead, LicenseKeyRead, LicenseKeyUpdate, LicenseKeyWithActivations,
};
use crate::api::ListResource;
use crate::app::license_keys::{self, durable_answer, key_for, live_key};
use crate::app::views::key_customer;
use crate::domain::ids::{ActivationId, BenefitId, LicenseKeyId, OrganizationId};
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{LicenseKeysRead, LicenseKeysWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/license-keys", { get => list });
    crate::resource!(cfg, "/v1/license-keys/{id}", { get => get, patch => update });
    crate::resource!(cfg, "/v1/license-keys/{id}/activations/{activation_id}", {
        get => get_activation,
    });
}

pub(crate) async fn list(
    auth: Auth<LicenseKeysRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<LicenseKeyRead>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    let benefits: Vec<BenefitId> = q.ids("benefit_id");
    q.finish()?;
    let page = license_keys::list(&state, auth.subject(), &orgs, &benefits, params).await;
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
        .map(|customer| LicenseKeyWithActivations::new(&key, &customer, false));
    Ok(web::Json(durable_answer(&state, answer).await?))
}

pub(crate) async fn update(
    auth: Auth<LicenseKeysWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<LicenseKeyUpdate>,
) -> ApiResult<web::Json<LicenseKeyRead>> {
    let id: LicenseKeyId = path_id("id", &id)?;
    let key = license_keys::update(&state, auth.subject(), id, body.into_inner()).await?;
    Ok(web::Json(key))
}

pub(crate) async fn get_activation(
    auth: Auth<LicenseKeysRead>,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> ApiResult<web::Json<LicenseKeyActivationRead>> {
    let (id, activation_id) = path.into_inner();
    let id: LicenseKeyId = path_id("id", &id)?;
    let activation_id: ActivationId = path_id("activation_id", &activation_id)?;
    let answer = async {
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
