//! The customer portal's license-key endpoints (reference 3.5).
//!
//! * `POST /v1/customer-portal/license-keys/validate`, `/activate`, `/deactivate` (also under
//!   Polar's deprecated `/v1/users/license-keys/`): no authentication at all; an
//!   `Authorization` header is not even read. This is the hot path: `(organization_id, key)`
//!   → id from the in-memory [`KeyDirectory`] (the store's unique index on a miss), then the
//!   key's actor, which applies the rules and replies once its write is durable.
//! * `GET /v1/customer-portal/license-keys/` and `/{id}`: a customer (session token) sees
//!   its own keys. Tollgate does not link users to customers, so a user sees none.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;

use actix::prelude::*;
use actix_web::body::BoxBody;
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, Responder, ResponseError};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use tollgate_actors::license_key::live::LiveValidated;
use tollgate_actors::license_key::{
    ActivateLicenseKey, Activation, DeactivateLicenseKey, KeyDirectory, KeyReply, LicenseKey,
    LicenseKeyEntity, LicenseKeyError, ValidateKey, ValidateLicenseKey, LICENSE_KEY_BY_CUSTOMER,
};
use tollgate_actors::{ActorError, EntityActor};

use crate::api::license_key::{
    key_error, LicenseKeyActivate, LicenseKeyActivationRead, LicenseKeyDeactivate, LicenseKeyRead,
    LicenseKeyValidate, LicenseKeyWithActivations, ValidatedLicenseKey,
};
use crate::api::{ListResource, Pagination, PresizedJson};

/// Bytes reserved for a validation's answer (~1.1 KiB with a customer and an address).
const VALIDATED_CAP: usize = 2048;
use crate::app::listing::page_of;
use crate::app::views::{key_customer, license_keys_page};
use crate::domain::benefit::{Benefit, BenefitProperties};
use crate::domain::ids::{BenefitId, CustomerId, LicenseKeyId, OrganizationId};
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::auth::CustomerPortalRead;
use crate::extract::json::parse_body;
use crate::extract::{path_id, Auth, ListParams, QueryParams, Subject};
use crate::routes::license_keys::durable_answer;
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    for prefix in ["/v1/customer-portal/license-keys", "/v1/users/license-keys"] {
        crate::resource!(cfg, format!("{prefix}/validate"), { post => validate });
        crate::resource!(cfg, format!("{prefix}/activate"), { post => activate });
        crate::resource!(cfg, format!("{prefix}/deactivate"), { post => deactivate });
    }
    crate::resource!(cfg, "/v1/customer-portal/license-keys/", { get => list });
    crate::resource!(cfg, "/v1/customer-portal/license-keys/{id}", { get => get });
}

/// A JSON body on the hot path: deserialized straight from the bytes. Only a body that
/// this fails on goes through the shared parser (`ValidJson`'s), which gives the exact 422;
/// so the errors are the same and a valid body skips the intermediate `serde_json::Value`.
struct HotJson<T>(T);

impl<T: DeserializeOwned + 'static> FromRequest for HotJson<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let limit = req
            .app_data::<web::Data<AppState>>()
            .map(|s| s.settings.server.body_limit_bytes)
            .unwrap_or(64 * 1024);
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|s| s.to_ascii_lowercase());
        let declared_len = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        let mut payload = payload.take();
        Box::pin(async move {
            if declared_len.is_some_and(|n| n > limit) {
                return Err(ApiError::PayloadTooLarge { limit });
            }
            let mut body = web::BytesMut::new();
            while let Some(chunk) = payload.next().await {
                let chunk = chunk.map_err(|e| {
                    ApiError::BadRequest(format!("Could not read the request body: {e}"))
                })?;
                if body.len() + chunk.len() > limit {
                    return Err(ApiError::PayloadTooLarge { limit });
                }
                body.extend_from_slice(&chunk);
            }
            let plain_json = content_type
                .as_deref()
                .is_none_or(|ct| ct.split(';').next().map(str::trim) == Some("application/json"));
            // An object (serde would also read a struct from an array, which the API refuses).
            let object = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
            if plain_json && object {
                if let Ok(value) = serde_json::from_slice::<T>(&body) {
                    return Ok(HotJson(value));
                }
            }
            parse_body::<T>(content_type.as_deref(), &body).map(|v| HotJson(v.value))
        })
    }
}

/// The process's key directory.
///
/// One per process rather than one per `AppState`, because `AppState` is built elsewhere
/// and the route modules cannot add to it. That is safe even with several applications in
/// one process (the tests): an entry is only a hint that the key's actor verifies (see
/// `KeyDirectory`), and organization ids are random, so stores never share entries.
pub fn directory() -> &'static KeyDirectory {
    static DIRECTORY: OnceLock<KeyDirectory> = OnceLock::new();
    DIRECTORY.get_or_init(KeyDirectory::new)
}

/// Sends a command to the actor of the key `(organization_id, key)`. A key this
/// organization does not have is "Not found". A directory entry that led to another key
/// (see `KeyDirectory`) is dropped, and the store's answer is tried once.
async fn call_by_key<M, T>(
    state: &AppState,
    organization_id: OrganizationId,
    key: &str,
    make: impl Fn() -> M,
) -> Result<T, ApiError>
where
    M: Message<Result = KeyReply<T>> + Send + 'static,
    T: Send + 'static,
    EntityActor<LicenseKeyEntity>: Handler<M>,
{
    let Some(id) = directory()
        .resolve(&state.store, organization_id, key)
        .await?
    else {
        return Err(ApiError::not_found());
    };
    call_resolved(state, organization_id, key, id, make).await
}

/// [`call_by_key`] once the directory resolved the key to `id`.
async fn call_resolved<M, T>(
    state: &AppState,
    organization_id: OrganizationId,
    key: &str,
    id: LicenseKeyId,
    make: impl Fn() -> M,
) -> Result<T, ApiError>
where
    M: Message<Result = KeyReply<T>> + Send + 'static,
    T: Send + 'static,
    EntityActor<LicenseKeyEntity>: Handler<M>,
{
    let dir = directory();
    match state.license_keys.call(id, make()).await {
        Err(ActorError::Domain(LicenseKeyError::WrongKey) | ActorError::NotFound) => {
            dir.forget(organization_id, key);
            match dir.lookup(&state.store, organization_id, key).await? {
                Some(fresh) if fresh != id => state
                    .license_keys
                    .call(fresh, make())
                    .await
                    .map_err(key_error),
                _ => Err(ApiError::not_found()),
            }
        }
        other => {
            if let Err(ActorError::Domain(
                LicenseKeyError::ActivationLimitReached | LicenseKeyError::InsufficientUsage { .. },
            )) = &other
            {
                crate::webhooks::limit_reached(state, id).await;
            }
            other.map_err(key_error)
        }
    }
}

/// The rate limits of the public key endpoints: per client address and per key (hashed,
/// within its organization). Cheap: two sharded-map updates, no allocation.
fn limit(
    state: &AppState,
    req: &HttpRequest,
    organization_id: &impl std::hash::Hash,
    key: &str,
) -> Result<crate::ratelimit::Report, ApiError> {
    let ip = crate::client_ip::client_ip(state, req);
    Ok(state.limits.license_key(ip, organization_id, key)?)
}

/// An answer, success or error, with the `RateLimit` fields of the policies that applied.
struct Limited<R> {
    answer: ApiResult<R>,
    report: crate::ratelimit::Report,
}

impl<R: Responder> Responder for Limited<R> {
    type Body = BoxBody;

    fn respond_to(self, req: &HttpRequest) -> HttpResponse<BoxBody> {
        use actix_web::ResponseError;
        let mut res = match self.answer {
            Ok(answer) => answer.respond_to(req).map_into_boxed_body(),
            Err(e) => e.error_response(),
        };
        crate::error::add_rate_limit_headers(&mut res, &self.report);
        res
    }
}

async fn validate(
    state: web::Data<AppState>,
    req: HttpRequest,
    HotJson(body): HotJson<LicenseKeyValidate>,
) -> ApiResult<Limited<PresizedJson<ValidatedLicenseKey, VALIDATED_CAP>>> {
    let report = limit(&state, &req, &body.organization_id, &body.key).inspect_err(|e| {
        state
            .metrics
            .validation(ResponseError::status_code(e).as_u16())
    })?;
    let answer = validate_inner(&state, body).await;
    state.metrics.validation(match &answer {
        Ok(_) => 200,
        Err(e) => ResponseError::status_code(e).as_u16(),
    });
    Ok(Limited { answer, report })
}

/// The validated key, serialized straight from its typed view (no intermediate JSON tree).
async fn validate_inner(
    state: &AppState,
    body: LicenseKeyValidate,
) -> ApiResult<PresizedJson<ValidatedLicenseKey, VALIDATED_CAP>> {
    // Usage only grows: a negative increment would let a key holder reset it and pass
    // `limit_usage` (Polar accepts one; Tollgate refuses it, see the README).
    if let Some(n) = body.increment_usage.filter(|n| *n < 0) {
        return Err(ApiError::Validation(vec![FieldError::new(
            "greater_than_equal",
            vec!["body".into(), "increment_usage".into()],
            "Input should be greater than or equal to 0",
            n.into(),
        )]));
    }
    let cmd = body.into_command();
    let Some(id) = directory()
        .resolve(&state.store, cmd.organization_id, &cmd.key)
        .await?
    else {
        return Err(ApiError::not_found());
    };
    let answer = async {
        if let Some(live) = fast_validate(state, id, &cmd)? {
            let counts = (live.validations, live.last_validated_at);
            return validated_answer(state, &live.key, live.activation.as_ref(), Some(counts))
                .await;
        }
        let validated = call_resolved(state, cmd.organization_id, &cmd.key, id, || {
            ValidateLicenseKey(cmd.clone())
        })
        .await?;
        validated_answer(state, &validated.key, validated.activation.as_ref(), None).await
    }
    .await;
    // The day counters of the dashboard: an existing key's answer, valid or refused (a
    // service that could not answer, 503 or 500, counts neither way).
    match &answer {
        Err(ApiError::Unavailable | ApiError::StorageUnavailable(_) | ApiError::Internal(_)) => {}
        _ => state
            .validation_counts
            .record(cmd.organization_id, state.now(), answer.is_ok()),
    }
    answer
}

/// A plain validation of a key whose actor is live, answered on this thread (batched mode,
/// see `tollgate_actors::license_key::live`); `None`: go through the actor.
fn fast_validate(
    state: &AppState,
    id: LicenseKeyId,
    cmd: &ValidateKey,
) -> Result<Option<LiveValidated>, ApiError> {
    // Another writer may have changed the key: only its actor, which checks, answers.
    if state.license_keys.config().check_freshness {
        return Ok(None);
    }
    match state
        .license_keys
        .extension()
        .validate(&state.store, id, cmd, state.now())
    {
        Some(Ok(validated)) => Ok(Some(validated)),
        // A stale directory entry: the actor path refreshes it.
        Some(Err(LicenseKeyError::WrongKey)) | None => Ok(None),
        Some(Err(e)) => Err(key_error(ActorError::Domain(e))),
    }
}

/// The answer to a validation; `counts`: the validation counts the fast path gives, which
/// its shared key does not hold yet.
async fn validated_answer(
    state: &AppState,
    key: &LicenseKey,
    activation: Option<&Activation>,
    counts: Option<(i64, chrono::DateTime<chrono::Utc>)>,
) -> ApiResult<PresizedJson<ValidatedLicenseKey, VALIDATED_CAP>> {
    let customer = state
        .customers
        .get(key.customer_id, || key_customer(state, key))
        .await?;
    let mut answer = ValidatedLicenseKey::new(key, &customer, activation);
    if let Some((validations, at)) = counts {
        answer.validations = validations;
        answer.last_validated_at = Some(at);
    }
    Ok(PresizedJson(answer))
}

async fn activate(
    state: web::Data<AppState>,
    req: HttpRequest,
    HotJson(body): HotJson<LicenseKeyActivate>,
) -> ApiResult<Limited<web::Json<LicenseKeyActivationRead>>> {
    let report = limit(&state, &req, &body.organization_id, &body.key)?;
    Ok(Limited {
        answer: activate_inner(state, body).await,
        report,
    })
}

async fn activate_inner(
    state: web::Data<AppState>,
    body: LicenseKeyActivate,
) -> ApiResult<web::Json<LicenseKeyActivationRead>> {
    let cmd = body.into_command();
    let (key, activation) = call_by_key(&state, cmd.organization_id, &cmd.key, || {
        ActivateLicenseKey(cmd.clone())
    })
    .await?;
    let customer = key_customer(&state, &key).await?;
    // 200, not 201, as in Polar.
    Ok(web::Json(LicenseKeyActivationRead::new(
        &key,
        &activation,
        &customer,
    )))
}

async fn deactivate(
    state: web::Data<AppState>,
    req: HttpRequest,
    HotJson(body): HotJson<LicenseKeyDeactivate>,
) -> ApiResult<Limited<HttpResponse>> {
    let report = limit(&state, &req, &body.organization_id, &body.key)?;
    Ok(Limited {
        answer: deactivate_inner(state, body).await,
        report,
    })
}

pub(crate) async fn deactivate_inner(
    state: web::Data<AppState>,
    body: LicenseKeyDeactivate,
) -> ApiResult<HttpResponse> {
    let cmd = body.into_command();
    call_by_key(&state, cmd.organization_id, &cmd.key, || {
        DeactivateLicenseKey(cmd.clone())
    })
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

pub(crate) async fn list(
    auth: Auth<CustomerPortalRead>,
    state: web::Data<AppState>,
    query: crate::extract::RawQuery,
) -> ApiResult<web::Json<ListResource<LicenseKeyRead>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    // Single-valued in Polar: the last one wins.
    let benefit: Option<BenefitId> = q.ids("benefit_id").pop();
    q.finish()?;
    let Subject::Customer(customer) = auth.subject() else {
        return Ok(web::Json(ListResource {
            items: Vec::new(),
            pagination: Pagination::new(0, params.limit),
        }));
    };
    let page = customer_page(&state, customer, &orgs, benefit, params).await;
    durable_answer(&state, page).await
}

/// One page of a customer's keys, in creation order, from the customer's index.
async fn customer_page(
    state: &AppState,
    customer: CustomerId,
    orgs: &[OrganizationId],
    benefit: Option<BenefitId>,
    params: ListParams,
) -> ApiResult<web::Json<ListResource<LicenseKeyRead>>> {
    let tenants = [customer.key()];
    let wanted = |k: &LicenseKey| {
        (orgs.is_empty() || orgs.contains(&k.organization_id))
            && benefit.is_none_or(|b| b == k.benefit_id)
    };
    let filter: Option<&dyn Fn(&LicenseKey) -> bool> = if orgs.is_empty() && benefit.is_none() {
        None
    } else {
        Some(&wanted)
    };
    let (items, total) = page_of::<LicenseKey>(
        state,
        LICENSE_KEY_BY_CUSTOMER,
        &tenants,
        false,
        params,
        filter,
    )
    .await?;
    Ok(web::Json(
        license_keys_page(state, &items, total, params).await?,
    ))
}

async fn get(
    auth: Auth<CustomerPortalRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<LicenseKeyWithActivations>> {
    let id: LicenseKeyId = path_id("id", &id)?;
    let Subject::Customer(customer) = auth.subject() else {
        return Err(ApiError::not_found());
    };
    match state.store.get::<LicenseKey>(&id.key()).await? {
        Some(k) if k.value.customer_id == customer => {}
        _ => return Err(ApiError::not_found()),
    }
    let key = crate::routes::license_keys::live_key(&state, id).await?;
    let answer = customer_key(&state, customer, key).await;
    durable_answer(&state, answer).await
}

/// The customer's key with its activations, if the benefit lets the customer manage
/// them (else `[]`); 404 for a key of anyone else.
async fn customer_key(
    state: &AppState,
    customer: CustomerId,
    key: LicenseKey,
) -> ApiResult<web::Json<LicenseKeyWithActivations>> {
    if key.customer_id != customer {
        return Err(ApiError::not_found());
    }
    let customer_admin = state
        .store
        .get::<Benefit>(&key.benefit_id.key())
        .await?
        .is_some_and(|b| match &b.value.properties {
            BenefitProperties::LicenseKeys(p) => {
                p.activations.is_some_and(|a| a.enable_customer_admin)
            }
            _ => false,
        });
    let owner = key_customer(state, &key).await?;
    Ok(web::Json(LicenseKeyWithActivations::new(
        &key,
        &owner,
        !customer_admin,
    )))
}
