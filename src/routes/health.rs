use actix_web::http::header;
use actix_web::{web, HttpResponse};
use tollgate_storage::StoreHealth;

use crate::api::health::{not_ready, Health};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/healthz", { get => healthz });
    crate::resource!(cfg, "/readyz", { get => readyz });
}

/// The process is up and serving HTTP.
async fn healthz() -> web::Json<Health> {
    web::Json(Health::ok())
}

/// The store is open, start-up recovery has finished and the store acknowledges writes
/// (a failed flush, e.g. on a full disk, makes this 503 until the process restarts).
async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    if !state.is_ready() {
        return HttpResponse::ServiceUnavailable()
            .insert_header((header::RETRY_AFTER, "1"))
            .json(not_ready("Starting up"));
    }
    match state.store.health() {
        StoreHealth::Healthy => HttpResponse::Ok().json(Health::ready()),
        StoreHealth::Failed { .. } => HttpResponse::ServiceUnavailable()
            .insert_header((header::RETRY_AFTER, "5"))
            .json(not_ready(
                "Storage failure (e.g. a full disk): writes are refused; the service \
                 restarts once the disk accepts writes again",
            )),
        StoreHealth::NeedsRestart { .. } => HttpResponse::ServiceUnavailable()
            .insert_header((header::RETRY_AFTER, "5"))
            .json(not_ready("Storage failure: the service is restarting")),
    }
}
