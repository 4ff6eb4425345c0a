//! The signed-in customer's billing details and address (Polar's customer portal,
//! reference §6.3): `PATCH /v1/customer-portal/customers/me` (billing name, address, tax
//! id, default card; registered with `customers/me` in `super::account`), and the e-mail
//! change: `POST …/customers/me/email-update/request` (a customer session: a code to the
//! new address, 202 `null`), `GET …/email-update/check?token=` (204, or 401) and `POST
//! …/email-update/verify` (`{token}`: 200 with a new session's token, 401, or 422 when
//! the address is taken). `check` and `verify` need no session (the code proves the
//! inbox, as Polar's token does). The rate limits are the sign-in code's: a request per
//! client and address, a check or verify per client. `crate::app::portal::billing` and
//! `crate::app::portal::email_change` do the work.

use actix_web::{web, HttpRequest, HttpResponse};

use super::Limited;
use crate::api::customer_portal::CustomerPortalCustomer;
use crate::api::portal_update::{
    CustomerEmailUpdateRequest, CustomerEmailUpdateVerifyRequest,
    CustomerEmailUpdateVerifyResponse, CustomerPortalCustomerUpdate,
};
use crate::app::portal::{billing, email_change};
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::CustomerSessionWrite;
use crate::extract::{Auth, QueryParams, RawQuery, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    let base = "/v1/customer-portal/customers/me/email-update";
    crate::resource!(cfg, format!("{base}/request"), { post => request });
    crate::resource!(cfg, format!("{base}/check"), { get => check });
    crate::resource!(cfg, format!("{base}/verify"), { post => verify });
}

/// The billing details (`PATCH /v1/customer-portal/customers/me`): the customer after the
/// change.
pub(super) async fn update_me(
    auth: Auth<CustomerSessionWrite>,
    state: web::Data<AppState>,
    body: ValidJson<CustomerPortalCustomerUpdate>,
) -> ApiResult<web::Json<CustomerPortalCustomer>> {
    let change = body.into_inner().into_command()?;
    let customer = super::signed_in(&state, &auth).await?;
    let updated = billing::update_me(&state, &customer, change).await?;
    Ok(web::Json(CustomerPortalCustomer::from(&updated)))
}

/// 202 `null` (Polar's FastAPI answer of `None`): a code is on its way to the new address.
async fn request(
    auth: Auth<CustomerSessionWrite>,
    state: web::Data<AppState>,
    req: HttpRequest,
    body: ValidJson<CustomerEmailUpdateRequest>,
) -> ApiResult<Limited<HttpResponse>> {
    let email = body.into_inner().into_command()?;
    let customer = super::signed_in(&state, &auth).await?;
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    let report = state
        .limits
        .portal_code(ip, &customer.organization_id.uuid(), &email)?;
    email_change::request(&state, &customer, &email).await?;
    Ok(Limited {
        answer: Ok(HttpResponse::Accepted()
            .content_type("application/json")
            .body("null")),
        report,
    })
}

/// 204 when the code would change the address now, else 401.
async fn check(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: RawQuery,
) -> ApiResult<Limited<HttpResponse>> {
    let mut q = QueryParams::parse(&query.0);
    let token = q.string("token");
    q.finish()?;
    let Some(token) = token else {
        return Err(ApiError::validation(crate::error::FieldError::new(
            "missing",
            crate::loc!["query", "token"],
            "Field required",
            serde_json::Value::Null,
        )));
    };
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    let report = state.limits.portal_sign_in(ip)?;
    let answer = match email_change::check(&state, &token).await {
        Ok(true) => Ok(HttpResponse::NoContent().finish()),
        Ok(false) => Err(ApiError::from(email_change::invalid())),
        Err(e) => Err(e.into()),
    };
    Ok(Limited { answer, report })
}

/// The change made: `{"token": "polar_cst_…"}`, a new session (the others ended).
async fn verify(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: ValidJson<CustomerEmailUpdateVerifyRequest>,
) -> ApiResult<Limited<web::Json<CustomerEmailUpdateVerifyResponse>>> {
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    let report = state.limits.portal_sign_in(ip)?;
    let answer = email_change::verify(&state, &body.into_inner().token, None)
        .await
        .map(|(opened, _)| {
            web::Json(CustomerEmailUpdateVerifyResponse {
                token: opened.token,
            })
        })
        .map_err(ApiError::from);
    Ok(Limited { answer, report })
}
