//! The customer portal's license-key endpoints (reference 3.5).
//!
//! * `POST /v1/customer-portal/license-keys/validate`, `/activate`, `/deactivate` (also under
//!   Polar's deprecated `/v1/users/license-keys/`): no authentication at all; an
//!   `Authorization` header is not even read. This is the hot path: a body parsed straight
//!   from its bytes (`crate::extract::json::HotJson`), the rate limits, then `crate::app::license_keys`.
//! * `GET /v1/customer-portal/license-keys/` and `/{id}`: a customer (session token) sees
//!   its own keys, and `POST …/{id}/rotate` gives one a new value. Tollgate does not link
//!   users to customers, so a user sees none. `DELETE …/{id}/activations/{activation_id}`
//!   frees an activation slot of the customer's own key (Tollgate's: Polar's customers
//!   deactivate with the key in hand).
//! * the sign-in by code and the session (`session`), and the customer's own records
//!   (`account`), its billing details and address (`billing`), its saved payment methods
//!   (`payment_methods`).

mod account;
mod billing;
mod invoices;
mod order_payment;
mod payment_methods;
mod session;

use actix_web::body::BoxBody;
use actix_web::{web, HttpRequest, HttpResponse, Responder, ResponseError};
use tollgate_actors::license_key::LicenseKey;

use crate::api::license_key::{
    LicenseKeyActivate, LicenseKeyActivationCreated, LicenseKeyDeactivate, LicenseKeyRead,
    LicenseKeyResend, LicenseKeyResendAccepted, LicenseKeyValidate, LicenseKeyWithActivations,
    RotatedLicenseKey, ValidatedLicenseKey,
};
use crate::api::{ListResource, Pagination, PresizedJson};

use crate::app::license_keys::{self, durable_answer};
use crate::app::license_signing;
use crate::app::portal::purchase::{beyond_purchase, PurchaseScope};
use crate::domain::ids::{BenefitId, LicenseKeyId, OrganizationId};
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{CustomerPortalRead, CustomerPortalWrite};
use crate::extract::json::HotJson;
use crate::extract::{path_id, Auth, ListParams, QueryParams, Subject, ValidJson};
use crate::signature::{self, MaybeSigned};
use crate::state::AppState;

/// Bytes reserved for a validation's answer (~1.1 KiB with a customer and an address).
pub(crate) const VALIDATED_CAP: usize = 2048;

/// The hot path and the portal's license keys: registered first of all routes.
pub fn configure(cfg: &mut web::ServiceConfig) {
    for prefix in ["/v1/customer-portal/license-keys", "/v1/users/license-keys"] {
        crate::resource!(cfg, format!("{prefix}/validate"), { post => validate });
        crate::resource!(cfg, format!("{prefix}/activate"), { post => activate });
        crate::resource!(cfg, format!("{prefix}/deactivate"), { post => deactivate });
    }
    crate::resource!(cfg, "/v1/customer-portal/license-keys/resend", { post => resend });
    // After the hot path, before `{id}` (whose resource would answer it with a 405).
    crate::resource!(cfg, "/v1/customer-portal/license-keys/claim", { post => claim });
    super::license_signing::configure_portal(cfg);
    crate::resource!(cfg, "/v1/customer-portal/license-keys/", { get => list });
    crate::resource!(cfg, "/v1/customer-portal/license-keys/{id}", { get => get });
    crate::resource!(cfg, "/v1/customer-portal/license-keys/{id}/rotate", { post => rotate });
    crate::resource!(cfg, "/v1/customer-portal/license-keys/{id}/activations/{activation_id}",
        { delete => remove_activation });
}

/// The portal's sign-in and the customer's own records: registered after the hot path
/// and the seller's routes (each route tried before a match costs a regex test).
pub fn configure_account(cfg: &mut web::ServiceConfig) {
    session::configure(cfg);
    account::configure(cfg);
    billing::configure(cfg);
    payment_methods::configure(cfg);
    order_payment::configure(cfg);
    invoices::configure(cfg);
}

/// `POST /v1/customer-portal/license-keys/claim`: a generated key becomes the signed-in
/// customer's license key.
async fn claim(
    auth: Auth<CustomerPortalWrite>,
    state: web::Data<AppState>,
    body: crate::extract::ValidJson<crate::api::license_key_import::LicenseKeyClaim>,
) -> ApiResult<web::Json<crate::api::license_key::LicenseKeyRead>> {
    let customer = signed_in(&state, &auth).await?;
    Ok(web::Json(
        crate::app::claimable_keys::claim(&state, &customer, body.into_inner().into()).await?,
    ))
}

/// The customer a customer session stands for, live (else 401 `invalid_token`).
pub(super) async fn signed_in<R>(
    state: &AppState,
    auth: &Auth<R>,
) -> Result<crate::domain::customer::Customer, ApiError> {
    match auth.subject() {
        Subject::Customer(_) => Ok(reader(state, auth).await?.0),
        Subject::Purchase(..) => Err(beyond_purchase().into()),
        _ => Err(ApiError::Bearer(crate::error::BearerError::InvalidToken)),
    }
}

/// The customer a customer session stands for, and the purchase it is limited to, if it
/// is; `None` for any other subject.
fn portal_subject(
    subject: Subject,
) -> Option<(crate::domain::ids::CustomerId, Option<PurchaseScope>)> {
    match subject {
        Subject::Customer(id) => Some((id, None)),
        Subject::Purchase(id, checkout) => Some((id, Some(PurchaseScope::of(checkout)))),
        _ => None,
    }
}

/// For the portal's reads: the customer a customer session stands for, live, and the
/// purchase the session is limited to, if it is (else 401 `invalid_token`).
pub(super) async fn reader<R>(
    state: &AppState,
    auth: &Auth<R>,
) -> Result<(crate::domain::customer::Customer, Option<PurchaseScope>), ApiError> {
    let (id, scope) = portal_subject(auth.subject())
        .ok_or(ApiError::Bearer(crate::error::BearerError::InvalidToken))?;
    let customer = crate::app::portal::sign_in::customer_of(state, id)
        .await?
        .ok_or(ApiError::Bearer(crate::error::BearerError::InvalidToken))?;
    Ok((customer, scope))
}

/// Frees an activation of one of the customer's keys: 204; 404 for anyone else's key or
/// activation; 403 when the benefit does not let customers manage activations.
async fn remove_activation(
    auth: Auth<crate::extract::auth::CustomerSessionWrite>,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (id, activation) = path.into_inner();
    let id: LicenseKeyId = path_id("id", &id)?;
    let activation: crate::domain::ids::ActivationId = path_id("activation_id", &activation)?;
    let customer = signed_in(&state, &auth).await?;
    crate::app::portal::deactivate(&state, &customer, id, activation).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The rate limits of the public key endpoints: per client address and per key (hashed,
/// within its organization). Cheap: two sharded-map updates, no allocation.
pub(super) fn limit(
    state: &AppState,
    req: &HttpRequest,
    organization_id: &impl std::hash::Hash,
    key: &str,
) -> Result<crate::ratelimit::Report, ApiError> {
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, req);
    Ok(state.limits.license_key(ip, organization_id, key)?)
}

/// An answer, success or error, with the `RateLimit` fields of the policies that applied.
pub(super) struct Limited<R> {
    pub(super) answer: ApiResult<R>,
    pub(super) report: crate::ratelimit::Report,
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
) -> ApiResult<Signed<PresizedJson<ValidatedLicenseKey, VALIDATED_CAP>>> {
    let requested = signature::requested(&req)?;
    let report = limit(&state, &req, &body.organization_id, &body.key).inspect_err(|e| {
        state
            .metrics
            .validation(ResponseError::status_code(e).as_u16())
    })?;
    let signing = license_signing::for_answer(&state, body.organization_id, requested).await?;
    let answer = match body.into_command() {
        Ok(cmd) => license_keys::validate(&state, cmd)
            .await
            .map(PresizedJson)
            .map_err(ApiError::from),
        Err(e) => Err(e),
    };
    state.metrics.validation(match &answer {
        Ok(_) => 200,
        Err(e) => ResponseError::status_code(e).as_u16(),
    });
    Ok(MaybeSigned {
        answer: Limited { answer, report },
        signing,
    })
}

async fn activate(
    state: web::Data<AppState>,
    req: HttpRequest,
    HotJson(body): HotJson<LicenseKeyActivate>,
) -> ApiResult<Signed<web::Json<LicenseKeyActivationCreated>>> {
    let requested = signature::requested(&req)?;
    let report = limit(&state, &req, &body.organization_id, &body.key)?;
    let signing = license_signing::for_answer(&state, body.organization_id, requested).await?;
    Ok(MaybeSigned {
        // 200, not 201, as in Polar.
        answer: Limited {
            answer: match body.into_command() {
                Ok(cmd) => license_keys::activate(&state, cmd)
                    .await
                    .map(web::Json)
                    .map_err(ApiError::from),
                Err(e) => Err(e),
            },
            report,
        },
        signing,
    })
}

async fn deactivate(
    state: web::Data<AppState>,
    req: HttpRequest,
    HotJson(body): HotJson<LicenseKeyDeactivate>,
) -> ApiResult<Signed<HttpResponse>> {
    let requested = signature::requested(&req)?;
    let report = limit(&state, &req, &body.organization_id, &body.key)?;
    let signing = license_signing::for_answer(&state, body.organization_id, requested).await?;
    Ok(MaybeSigned {
        answer: Limited {
            answer: deactivate_by_key(&state, body)
                .await
                .map(|()| HttpResponse::NoContent().finish()),
            report,
        },
        signing,
    })
}

/// A rate-limited answer, signed when asked for or when its organization signs every
/// answer (`crate::signature`).
type Signed<R> = MaybeSigned<Limited<R>>;

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
    let Some((customer, scope)) = portal_subject(auth.subject()) else {
        return Ok(web::Json(ListResource {
            items: Vec::new(),
            pagination: Pagination::new(0, params.limit),
        }));
    };
    let page = license_keys::customer_keys(&state, customer, &orgs, benefit, scope, params).await;
    let mut page = durable_answer(&state, page).await?;
    if scope.is_some() {
        let shown = shown_parts(&state, customer).await?;
        for k in &mut page.items {
            k.customer = shown.view.clone();
            k.user = shown.user.clone();
        }
    }
    Ok(web::Json(page))
}

async fn get(
    auth: Auth<CustomerPortalRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<LicenseKeyWithActivations>> {
    let id: LicenseKeyId = path_id("id", &id)?;
    let (customer, scope) = portal_subject(auth.subject()).ok_or_else(ApiError::not_found)?;
    match state.store.get::<LicenseKey>(&id.key()).await? {
        Some(k)
            if k.value.customer_id == customer
                && scope.is_none_or(|s: PurchaseScope| s.has_key(&k.value)) => {}
        _ => return Err(ApiError::not_found()),
    }
    let key = license_keys::live_key(&state, id).await?;
    let answer = license_keys::customer_key(&state, customer, key).await;
    let mut answer = durable_answer(&state, answer).await?;
    if scope.is_some() {
        let shown = shown_parts(&state, customer).await?;
        answer.customer = shown.view;
        answer.user = shown.user;
    }
    Ok(web::Json(answer))
}

/// The customer as a limited session's keys show it ([`crate::app::portal::purchase::shown_customer`]).
async fn shown_parts(
    state: &AppState,
    customer: crate::domain::ids::CustomerId,
) -> Result<crate::api::license_key::CustomerParts, ApiError> {
    let c = crate::app::portal::sign_in::customer_of(state, customer)
        .await?
        .ok_or_else(ApiError::not_found)?;
    Ok(crate::api::license_key::CustomerParts::from(
        &crate::app::portal::purchase::shown_customer(&c),
    ))
}

/// `POST /v1/customer-portal/license-keys/{id}/rotate`: one of the customer's own keys gets
/// a new value (no body).
/// "Send me my keys again" (no authentication): 202 whether or not the address has keys
/// (nobody learns who bought what), rate-limited per client and per address.
async fn resend(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: ValidJson<LicenseKeyResend>,
) -> ApiResult<Limited<HttpResponse>> {
    let body = body.into_inner();
    let mut v = crate::validate::Validator::new();
    v.email(crate::loc!["body", "email"], body.email.trim());
    v.finish()?;
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    let report = state
        .limits
        .key_resend(ip, &body.organization_id, &body.email)?;
    crate::app::portal::sign_in::resend_keys(
        &state,
        OrganizationId(body.organization_id),
        body.email.trim(),
    )
    .await?;
    Ok(Limited {
        answer: Ok(HttpResponse::Accepted().json(LicenseKeyResendAccepted {
            detail: LicenseKeyResendAccepted::DETAIL,
        })),
        report,
    })
}

async fn rotate(
    auth: Auth<CustomerPortalWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<RotatedLicenseKey>> {
    let id: LicenseKeyId = path_id("id", &id)?;
    let customer = match auth.subject() {
        Subject::Customer(customer) => customer,
        Subject::Purchase(..) => return Err(beyond_purchase().into()),
        _ => return Err(ApiError::not_found()),
    };
    Ok(web::Json(
        license_keys::customer_rotate(&state, customer, id).await?,
    ))
}

/// A deactivation for anyone who holds the key; one by label is rate-limited per key.
async fn deactivate_by_key(state: &AppState, body: LicenseKeyDeactivate) -> ApiResult<()> {
    if body.by_label() {
        state
            .limits
            .deactivation_by_label(&body.organization_id, &body.key)?;
    }
    Ok(license_keys::deactivate(state, body.into_command()?).await?)
}
