//! `GET /.well-known/apple-developer-merchantid-domain-association`: the file Apple Pay
//! reads to check that this domain may show it (Stripe's Payment Element offers Apple Pay
//! only on a registered domain serving it). Its content is the operator's, named by
//! `payments.apple_pay_domain_association` and read at start-up; without it, 404.

use actix_web::{web, HttpResponse};

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

pub const APPLE_PAY_PATH: &str = "/.well-known/apple-developer-merchantid-domain-association";

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, APPLE_PAY_PATH, { get => domain_association });
}

async fn domain_association(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let Some(file) = state.settings.payments.apple_pay_file() else {
        return Err(ApiError::not_found());
    };
    Ok(HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .body(file.to_string()))
}
