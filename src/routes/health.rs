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
/// (a failed flush, e.g. on a full disk, makes this 503 until the process restarts), on
/// PostgreSQL the database can be reached (503 with the code `database_read_only` or
/// `database_down` while it cannot), and no e-mail sender worker is stuck or dead (503
/// while one is).
async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    if !state.is_ready() {
        return HttpResponse::ServiceUnavailable()
            .insert_header((header::RETRY_AFTER, "1"))
            .json(not_ready("Starting up"));
    }
    if let Some(db) = state.database_readiness() {
        if let Some(body) = db.refusal() {
            return HttpResponse::ServiceUnavailable()
                .insert_header((header::RETRY_AFTER, "1"))
                .json(body);
        }
    }
    let stuck = state.mailer.health.stuck();
    match state.store.health() {
        StoreHealth::Healthy if stuck > 0 => HttpResponse::ServiceUnavailable()
            .insert_header((header::RETRY_AFTER, "5"))
            .json(not_ready(&format!(
                "E-mail sender: {stuck} of {} workers stuck or dead (none came back within \
                 email.stuck_after_secs); no mail leaves this node until they do",
                state.mailer.health.workers()
            ))),
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
