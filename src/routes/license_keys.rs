//! The organizer's license-key endpoints (`/v1/license-keys`, reference 3.4): list, get,
//! update and get an activation. Reads come from the store (behind the read barrier, so they
//! never show a write a crash could undo); the update goes through the key's actor, which
//! owns the key's counters.
//!
//! Deviation (behaviour.md): a key of an organization the caller cannot reach is 404, not
//! Polar's 401, so that ids do not reveal whether a key exists.

use actix_web::web;
use tollgate_actors::license_key::{
    live_activations, GetLicenseKey, LicenseKey, UpdateLicenseKey, LICENSE_KEY_BY_BENEFIT,
    LICENSE_KEY_BY_CREATED,
};

use crate::api::license_key::{
    key_error, LicenseKeyActivationRead, LicenseKeyRead, LicenseKeyUpdate,
    LicenseKeyWithActivations,
};
use crate::api::ListResource;
use crate::app::access::{can_access, organizations_for_list};
use crate::app::listing::page_of;
use crate::app::views::{key_customer, license_keys_page};
use crate::domain::benefit::Benefit;
use crate::domain::ids::{ActivationId, BenefitId, LicenseKeyId, OrganizationId};
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{LicenseKeysRead, LicenseKeysWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, Subject, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/license-keys", { get => list });
    crate::resource!(cfg, "/v1/license-keys/{id}", { get => get, patch => update });
    crate::resource!(cfg, "/v1/license-keys/{id}/activations/{activation_id}", {
        get => get_activation,
    });
}

/// Answers a read once everything it read is durable. The barrier is taken *after* the
/// reads, so it covers every write they could have seen; one taken before them would not
/// cover a write committed in between.
pub async fn durable_answer<T>(state: &AppState, answer: ApiResult<T>) -> ApiResult<T> {
    state.store.read_barrier().await?;
    answer
}

/// A stored key the subject may see, else 404 (also for another organization's key).
async fn key_for(
    state: &AppState,
    subject: Subject,
    id: LicenseKeyId,
) -> Result<LicenseKey, ApiError> {
    match state.store.get::<LicenseKey>(&id.key()).await? {
        Some(k) if can_access(state, subject, k.value.organization_id).await? => Ok(k.value),
        _ => Err(ApiError::not_found()),
    }
}

/// The key as its actor holds it: with the validation counters it has answered so far,
/// which batched mode (`license_keys.stats_flush_ms`) writes to the store only later.
pub async fn live_key(state: &AppState, id: LicenseKeyId) -> Result<LicenseKey, ApiError> {
    state
        .license_keys
        .call(id, GetLicenseKey)
        .await
        .map_err(key_error)
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
    let page = list_page(&state, auth.subject(), &orgs, &benefits, params).await;
    durable_answer(&state, page).await
}

async fn list_page(
    state: &AppState,
    subject: Subject,
    orgs: &[OrganizationId],
    benefits: &[BenefitId],
    params: ListParams,
) -> ApiResult<web::Json<ListResource<LicenseKeyRead>>> {
    let orgs = organizations_for_list(state, subject, orgs).await?;
    // Both lists are index range reads in `created_at` order: by organization, or by the
    // benefits (of reachable organizations) asked for.
    let (index, tenants): (&'static str, Vec<Vec<u8>>) = if benefits.is_empty() {
        (
            LICENSE_KEY_BY_CREATED,
            orgs.iter().map(|o| o.key()).collect(),
        )
    } else {
        let mut tenants = Vec::new();
        for b in benefits {
            let reachable = state
                .store
                .get::<Benefit>(&b.key())
                .await?
                .is_some_and(|benefit| orgs.contains(&benefit.value.organization_id));
            if reachable && !tenants.contains(&b.key()) {
                tenants.push(b.key());
            }
        }
        (LICENSE_KEY_BY_BENEFIT, tenants)
    };
    let (items, total) = page_of::<LicenseKey>(state, index, &tenants, false, params, None).await?;
    Ok(web::Json(
        license_keys_page(state, &items, total, params).await?,
    ))
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
        .map(|customer| web::Json(LicenseKeyWithActivations::new(&key, &customer, false)));
    durable_answer(&state, answer).await
}

pub(crate) async fn update(
    auth: Auth<LicenseKeysWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<LicenseKeyUpdate>,
) -> ApiResult<web::Json<LicenseKeyRead>> {
    let id: LicenseKeyId = path_id("id", &id)?;
    let changes = body.into_inner().into_changes()?;
    key_for(&state, auth.subject(), id).await?;
    let key = state
        .license_keys
        .call(id, UpdateLicenseKey(changes))
        .await
        .map_err(key_error)?;
    let customer = key_customer(&state, &key).await?;
    Ok(web::Json(LicenseKeyRead::new(&key, &customer)))
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
        Ok(web::Json(LicenseKeyActivationRead::new(
            &key, activation, &customer,
        )))
    }
    .await;
    durable_answer(&state, answer).await
}
