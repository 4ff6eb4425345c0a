use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/healthz", { get => healthz });
    crate::resource!(cfg, "/readyz", { get => readyz });
}

/// The process is up and serving HTTP.
async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// The store is open and start-up recovery has finished.
async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    if state.is_ready() {
        HttpResponse::Ok().json(json!({"status": "ready"}))
    } else {
        HttpResponse::ServiceUnavailable()
            .json(json!({"error": "ServiceUnavailable", "detail": "Starting up"}))
    }
}
