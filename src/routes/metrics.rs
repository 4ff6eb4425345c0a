//! `GET /metrics`: the Prometheus exposition of `crate::metrics`, behind `[metrics] token`.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use prometheus::{Encoder, TextEncoder};

use crate::error::ApiError;
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/metrics", { get => scrape });
}

/// `GET /metrics`: 404 unless `[metrics] token` is set; then 401 without that bearer token.
pub async fn scrape(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let metrics = &state.metrics;
    let token = state.settings.metrics.token.trim().as_bytes();
    if token.is_empty() {
        return Err(ApiError::not_found());
    }
    // The scheme is case-insensitive (RFC 6750 and RFC 9110 11.1), as on the API.
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim().as_bytes())
        .unwrap_or_default();
    if !constant_time_eq(given, token) {
        return Err(ApiError::Unauthorized);
    }
    metrics.sample(
        [
            ("checkout", state.checkouts.stats()),
            ("subscription", state.subscriptions.stats()),
            ("license_key", state.license_keys.stats()),
        ],
        state.store.flush_stats(),
    );
    let mail = state.mailer.health.report();
    metrics.sample_mail(mail.workers, mail.stuck, mail.restarts, mail.panics);
    if let Some(shared) = &state.shared_keys {
        metrics.sample_shared(shared);
    }
    if let Some(db) = state.database_readiness() {
        metrics.sample_database(&db, state.store.database_outages());
    }
    let body = metrics
        .render()
        .map_err(|e| ApiError::Internal(format!("cannot encode the metrics: {e}")))?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, TextEncoder::new().format_type()))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(body))
}

/// Compares without stopping at the first difference (the token is a secret).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_comparison_needs_every_byte() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"secret"));
    }
}
