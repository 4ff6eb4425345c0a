//! Request logging and the error-shape guarantee.

use std::time::Instant;

use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, StatusCode};
use actix_web::{Error, ResponseError};

use crate::error::ApiError;

/// One log line per request: method, route template (never the raw path, which may hold a
/// client secret), status and latency. Then, any error response that is not JSON (actix's
/// own 404/405/400 pages) is replaced by the documented JSON error.
pub async fn log_and_shape_errors(
    req: ServiceRequest,
    next: actix_web::middleware::Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody, BoxBody>>, Error> {
    let started = Instant::now();
    let method = req.method().clone();
    let route = req
        .match_pattern()
        .unwrap_or_else(|| "<unmatched>".to_string());
    let res = next.call(req).await?;
    let status = res.status();
    tracing::info!(
        method = %method,
        route = %route,
        status = status.as_u16(),
        latency_ms = started.elapsed().as_secs_f64() * 1000.0,
        "request"
    );
    let is_json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json") || ct.starts_with("text/html"));
    if (status.is_client_error() || status.is_server_error()) && !is_json {
        let replacement = match status {
            StatusCode::NOT_FOUND => ApiError::not_found(),
            StatusCode::METHOD_NOT_ALLOWED => ApiError::MethodNotAllowed,
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge { limit: 0 },
            StatusCode::UNAUTHORIZED => ApiError::Unauthorized,
            s if s.is_server_error() => ApiError::Internal(format!("non-JSON {s} response")),
            s => ApiError::BadRequest(s.canonical_reason().unwrap_or("Bad request").to_string()),
        };
        let (req, _) = res.into_parts();
        let response = replacement.error_response();
        return Ok(ServiceResponse::new(req, response).map_into_right_body());
    }
    Ok(res.map_into_left_body())
}
