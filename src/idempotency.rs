//! `Idempotency-Key` on every POST of the API, with Stripe's semantics.
//!
//! A POST under `/v1/` that carries `Idempotency-Key` (1 to 255 visible ASCII characters)
//! is run at most once per key and caller within `idempotency.ttl_hours`:
//!
//! - the first request runs; its answer (status, content type, `Location`, body) is stored
//!   durably, under the key *and the caller*, with a fingerprint of the request (method,
//!   path, query, content type, body). Stored: 2xx and the 4xx that are the outcome of the
//!   input (not 401, 408, 409 or 429, which a retry may change); never a 5xx;
//! - the same key with the same request answers the stored response again, with
//!   `Idempotency-Replayed: true`, without doing the work;
//! - the same key with another request answers 422 (`loc` `["header", "idempotency-key"]`,
//!   type `idempotency_key_reused`): a key names one operation;
//! - a duplicate arriving while the first is still running waits for it (up to
//!   [`WAIT_FOR_FIRST`]) and then answers its stored response, or 409
//!   `ResourceAlreadyExists` when the first did not finish in time or stored nothing.
//!
//! The caller is the subject of the bearer token (user, organization or customer) or of
//! the session cookie; requests without credentials share the anonymous scope (the
//! fingerprint still holds their path and body, so a replay answers only the very same
//! request). An unknown token is not scoped: the request runs and is refused by its
//! handler. Records are purged by a sweep every `retention.interval_secs` once expired.

use std::sync::Arc;
use std::time::Duration;

use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{web, Error, HttpMessage, HttpResponse, ResponseError};
use chrono::{DateTime, Utc};
use dashmap::DashMap;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tollgate_storage::{Batch, Expect, IndexEntry, Record};

use crate::auth::{bearer_token, resolve, Subject};
use crate::error::{ApiError, FieldError};
use crate::state::AppState;

/// The request header.
pub const HEADER: &str = "idempotency-key";
/// The response header of a replayed answer.
pub const REPLAYED: &str = "idempotency-replayed";
/// How long a duplicate waits for the first request with its key.
pub const WAIT_FOR_FIRST: Duration = Duration::from_secs(10);
/// Longest key accepted.
pub const MAX_KEY_LEN: usize = 255;

const BY_EXPIRY: &str = "idempotency_by_expiry";

/// A stored answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdempotentResponse {
    /// SHA-256 of the caller's scope and the key.
    pub id: Vec<u8>,
    /// SHA-256 of the request it answers.
    pub fingerprint: Vec<u8>,
    pub status: u16,
    pub content_type: Option<String>,
    pub location: Option<String>,
    pub body: Vec<u8>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl Record for IdempotentResponse {
    tollgate_actors::record_v1!(IdempotentResponse, "idempotency");
    const INDEXES: &'static [&'static str] = &[BY_EXPIRY];

    fn id_key(&self) -> Vec<u8> {
        self.id.clone()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            BY_EXPIRY,
            Vec::new(),
            tollgate_actors::domain::time_key(self.expires_at),
        )]
    }
}

/// Keys being worked on in this process: a duplicate waits until the sender is dropped.
#[derive(Debug, Default)]
pub struct InFlight {
    keys: DashMap<Vec<u8>, tokio::sync::watch::Receiver<()>>,
}

/// Removes its key from [`InFlight`] when the first request ends (even if dropped).
struct Claim {
    inflight: Arc<InFlight>,
    id: Vec<u8>,
    _done: tokio::sync::watch::Sender<()>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.inflight.keys.remove(&self.id);
    }
}

impl InFlight {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Claims `id`, or returns a receiver that closes when its holder is done.
    fn claim(self: &Arc<Self>, id: &[u8]) -> Result<Claim, tokio::sync::watch::Receiver<()>> {
        match self.keys.entry(id.to_vec()) {
            dashmap::mapref::entry::Entry::Occupied(o) => Err(o.get().clone()),
            dashmap::mapref::entry::Entry::Vacant(v) => {
                let (tx, rx) = tokio::sync::watch::channel(());
                v.insert(rx);
                Ok(Claim {
                    inflight: self.clone(),
                    id: id.to_vec(),
                    _done: tx,
                })
            }
        }
    }
}

fn key_error(msg: &str, kind: &str, input: &str) -> ApiError {
    ApiError::validation(FieldError::new(
        kind,
        crate::loc!["header", HEADER],
        msg,
        serde_json::Value::from(input.chars().take(300).collect::<String>()),
    ))
}

/// The caller's scope, or `None` when the credentials are unknown (no idempotency then).
async fn scope(state: &AppState, req: &ServiceRequest) -> Result<Option<Vec<u8>>, ApiError> {
    let subject = match bearer_token(req.request()) {
        Some(token) => match resolve(state, &token).await? {
            Some(p) => p.subject,
            None => return Ok(None),
        },
        None => match crate::auth::session::current(state, req.request()).await? {
            Some(session) => Subject::User(session.value.user_id),
            None => Subject::Anonymous,
        },
    };
    Ok(Some(match subject {
        Subject::Anonymous => b"a".to_vec(),
        Subject::User(id) => [b"u".as_slice(), &id.key()].concat(),
        Subject::Organization(id) => [b"o".as_slice(), &id.key()].concat(),
        Subject::Customer(id) => [b"c".as_slice(), &id.key()].concat(),
    }))
}

fn hash(parts: &[&[u8]]) -> Vec<u8> {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    h.finalize().to_vec()
}

/// Whether an answer with this status is kept for replays.
pub fn is_stored(status: StatusCode) -> bool {
    status.is_success()
        || (status.is_client_error() && !matches!(status.as_u16(), 401 | 408 | 409 | 429))
}

fn replay(stored: &IdempotentResponse) -> HttpResponse {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
    let mut res = HttpResponse::build(status);
    res.insert_header((REPLAYED, "true"));
    if let Some(ct) = stored
        .content_type
        .as_deref()
        .and_then(|c| HeaderValue::from_str(c).ok())
    {
        res.insert_header((header::CONTENT_TYPE, ct));
    }
    if let Some(loc) = stored
        .location
        .as_deref()
        .and_then(|c| HeaderValue::from_str(c).ok())
    {
        res.insert_header((header::LOCATION, loc));
    }
    res.body(stored.body.clone())
}

async fn live(state: &AppState, id: &[u8]) -> Result<Option<IdempotentResponse>, ApiError> {
    Ok(state
        .store
        .get::<IdempotentResponse>(id)
        .await?
        .map(|s| s.value)
        .filter(|r| r.expires_at > state.now()))
}

/// The answer to a request whose key is already stored: the same request is replayed,
/// another is 422.
fn answer_stored(stored: &IdempotentResponse, fingerprint: &[u8], key: &str) -> HttpResponse {
    if stored.fingerprint != fingerprint {
        return key_error(
            "This Idempotency-Key was already used with a different request (method, path or \
             body); use a new key for a new request.",
            "idempotency_key_reused",
            key,
        )
        .error_response();
    }
    replay(stored)
}

/// The middleware (wrapped around the routes in `startup`).
pub async fn idempotency(
    mut req: ServiceRequest,
    next: actix_web::middleware::Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody, BoxBody>>, Error> {
    let key = req.headers().get(HEADER).cloned();
    let (Some(key), true) = (
        key,
        req.method() == Method::POST && req.path().starts_with("/v1/"),
    ) else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    let (Some(state), Some(inflight)) = (
        req.app_data::<web::Data<AppState>>().cloned(),
        req.app_data::<web::Data<Arc<InFlight>>>().cloned(),
    ) else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    let early = |req: ServiceRequest, res: HttpResponse| {
        let (req, _) = req.into_parts();
        Ok(ServiceResponse::new(req, res).map_into_right_body())
    };
    let key = match key.to_str() {
        Ok(k) if !k.is_empty() && k.len() <= MAX_KEY_LEN => k.to_string(),
        Ok(k) => {
            let e = key_error(
                "Idempotency-Key must have 1 to 255 characters.",
                "string_too_long",
                k,
            );
            return early(req, e.error_response());
        }
        Err(_) => {
            let e = key_error(
                "Idempotency-Key must be visible ASCII characters.",
                "string_type",
                "",
            );
            return early(req, e.error_response());
        }
    };
    let scope = match scope(&state, &req).await {
        Ok(Some(scope)) => scope,
        Ok(None) => return Ok(next.call(req).await?.map_into_left_body()),
        Err(e) => return early(req, e.error_response()),
    };
    let id = hash(&[b"idempotency", &scope, key.as_bytes()]);

    // The whole body, for the fingerprint (the handler gets it back unchanged).
    let limit = state.settings.server.body_limit_bytes;
    let mut payload = req.take_payload();
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        match chunk {
            Ok(chunk) if body.len() + chunk.len() <= limit => body.extend_from_slice(&chunk),
            Ok(_) => return early(req, ApiError::PayloadTooLarge { limit }.error_response()),
            Err(e) => {
                let e = ApiError::BadRequest(format!("Could not read the request body: {e}"));
                return early(req, e.error_response());
            }
        }
    }
    let body = body.freeze();
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let fingerprint = hash(&[
        req.method().as_str().as_bytes(),
        req.path().as_bytes(),
        req.query_string().as_bytes(),
        content_type.as_bytes(),
        &body,
    ]);

    // A stored answer, or the first request still running: wait for it.
    let claim = loop {
        match live(&state, &id).await {
            Ok(Some(stored)) => return early(req, answer_stored(&stored, &fingerprint, &key)),
            Ok(None) => {}
            Err(e) => return early(req, e.error_response()),
        }
        match inflight.claim(&id) {
            Ok(claim) => break claim,
            Err(mut first) => {
                let finished = actix_web::rt::time::timeout(WAIT_FOR_FIRST, first.changed()).await;
                let stored = match live(&state, &id).await {
                    Ok(stored) => stored,
                    Err(e) => return early(req, e.error_response()),
                };
                match (finished, stored) {
                    (_, Some(stored)) => {
                        return early(req, answer_stored(&stored, &fingerprint, &key))
                    }
                    // The first ended without storing an answer (a 5xx, 409, 429, ...):
                    // this one may run.
                    (Ok(_), None) => continue,
                    (Err(_), None) => {
                        let e = ApiError::Conflict(
                            "A request with this Idempotency-Key is still being processed; \
                             retry later."
                                .into(),
                        );
                        return early(req, e.error_response());
                    }
                }
            }
        }
    };

    req.set_payload(actix_web::dev::Payload::from(body));
    let res = next.call(req).await?;
    let status = res.status();
    if !is_stored(status) {
        drop(claim);
        return Ok(res.map_into_left_body());
    }
    let (http_req, res) = res.into_parts();
    let (head, body) = res.into_parts();
    let bytes = match actix_web::body::to_bytes(body).await {
        Ok(b) => b,
        Err(_) => {
            drop(claim);
            let e = ApiError::internal("reading the response to store it");
            return Ok(ServiceResponse::new(http_req, e.error_response()).map_into_right_body());
        }
    };
    let now = state.now();
    let ttl =
        chrono::Duration::hours(i64::try_from(state.settings.idempotency.ttl_hours).unwrap_or(24));
    let record = IdempotentResponse {
        id: id.clone(),
        fingerprint,
        status: status.as_u16(),
        content_type: head
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        location: head
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        body: bytes.to_vec(),
        created_at: now,
        expires_at: now + ttl,
    };
    let mut batch = Batch::new();
    let stored = match batch.put(&record, Expect::Any) {
        Ok(_) => state.store.commit_durable(&batch).await.map(|_| ()),
        Err(e) => Err(e),
    };
    if let Err(e) = stored {
        // The work is done and answered; only a retry's replay is lost.
        tracing::warn!(error = %e, "storing an idempotent response failed");
    }
    drop(claim);
    let res = head.set_body(BoxBody::new(bytes));
    Ok(ServiceResponse::new(http_req, res).map_into_right_body())
}

/// Deletes the stored answers that have expired; returns how many.
/// Deletes the stored answers whose keys have expired (run by the retention purge).
pub async fn purge_expired(state: &AppState) -> Result<usize, ApiError> {
    let now = tollgate_actors::domain::time_key(state.now());
    let ids = state
        .store
        .index_range(BY_EXPIRY, &[], &[], Some(&now))
        .await?;
    let mut purged = 0;
    for chunk in ids.chunks(500) {
        let mut batch = Batch::new();
        for id in chunk {
            batch.delete::<IdempotentResponse>(id, Expect::Any);
        }
        state.store.commit_durable(&batch).await?;
        purged += chunk.len();
    }
    Ok(purged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_statuses() {
        for s in [200, 201, 204, 400, 403, 404, 413, 422] {
            assert!(is_stored(StatusCode::from_u16(s).unwrap()), "{s}");
        }
        for s in [401, 408, 409, 429, 500, 503] {
            assert!(!is_stored(StatusCode::from_u16(s).unwrap()), "{s}");
        }
    }

    #[test]
    fn a_second_claim_waits_for_the_first() {
        let inflight = InFlight::new();
        let first = inflight.claim(b"k").ok().unwrap();
        let mut waiting = inflight.claim(b"k").err().unwrap();
        assert!(inflight.claim(b"other").is_ok());
        drop(first);
        // The holder is gone: the waiter is woken (changed() fails as the sender closed).
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        assert!(rt.block_on(waiting.changed()).is_err());
        assert!(inflight.claim(b"k").is_ok());
    }

    #[test]
    fn fingerprints_separate_their_parts() {
        assert_ne!(hash(&[b"ab", b"c"]), hash(&[b"a", b"bc"]));
        assert_eq!(hash(&[b"a", b"b"]), hash(&[b"a", b"b"]));
    }
}
