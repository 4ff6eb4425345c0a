//! `/v1/customer-portal/customer-session/*`: a buyer signs in by e-mailed code
//! (`request`, `authenticate`, no authentication, rate-limited), and reads the session it
//! holds (`introspect`, `user`). `crate::app::portal::sign_in` does the work.

use actix_web::{web, HttpRequest, HttpResponse};

use super::Limited;
use crate::api::customer_portal::{
    CustomerCustomerSession, CustomerSessionCodeAuthenticateRequest,
    CustomerSessionCodeAuthenticateResponse, CustomerSessionCodeRequest, PortalAuthenticatedUser,
};
use crate::app::portal::sign_in;
use crate::domain::ids::OrganizationId;
use crate::error::{ApiError, ApiResult, BearerError};
use crate::extract::auth::CustomerSessionRead;
use crate::extract::{Auth, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    let base = "/v1/customer-portal/customer-session";
    crate::resource!(cfg, format!("{base}/request"), { post => request });
    crate::resource!(cfg, format!("{base}/authenticate"), { post => authenticate });
    crate::resource!(cfg, format!("{base}/introspect"), { get => introspect });
    crate::resource!(cfg, format!("{base}/user"), { get => user });
}

/// 202 with no body whether or not the address is a customer (nobody learns who bought).
async fn request(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: ValidJson<CustomerSessionCodeRequest>,
) -> ApiResult<Limited<HttpResponse>> {
    let body = body.into_inner();
    let email = body.email.trim();
    let mut v = crate::validate::Validator::new();
    v.email(crate::loc!["body", "email"], email);
    v.finish()?;
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    let report = state.limits.portal_code(ip, &body.organization_id, email)?;
    sign_in::request_code(&state, OrganizationId(body.organization_id), email, ip).await?;
    Ok(Limited {
        answer: Ok(HttpResponse::Accepted().finish()),
        report,
    })
}

/// The session a code opens: `{"token": "polar_cst_…"}`; 401
/// `CustomerSessionCodeInvalidOrExpired` otherwise.
async fn authenticate(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: ValidJson<CustomerSessionCodeAuthenticateRequest>,
) -> ApiResult<Limited<web::Json<CustomerSessionCodeAuthenticateResponse>>> {
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    let report = state.limits.portal_sign_in(ip)?;
    let answer = sign_in::authenticate(&state, &body.into_inner().code, None)
        .await
        .map(|opened| {
            web::Json(CustomerSessionCodeAuthenticateResponse {
                token: opened.token,
            })
        })
        .map_err(ApiError::from);
    Ok(Limited { answer, report })
}

/// The session the bearer token is: when it expires.
async fn introspect(
    _auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<web::Json<CustomerCustomerSession>> {
    let token = crate::credentials::bearer_token(&req).unwrap_or_default();
    let (session, _) = sign_in::session_of(&state, &token)
        .await?
        .ok_or(ApiError::Bearer(BearerError::InvalidToken))?;
    Ok(web::Json(CustomerCustomerSession {
        expires_at: session.expires_at,
        return_url: None,
    }))
}

/// Who the session is.
async fn user(
    auth: Auth<CustomerSessionRead>,
    state: web::Data<AppState>,
) -> ApiResult<web::Json<PortalAuthenticatedUser>> {
    let customer = super::signed_in(&state, &auth).await?;
    Ok(web::Json(PortalAuthenticatedUser::from(&customer)))
}
