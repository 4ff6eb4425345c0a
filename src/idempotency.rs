//! `Idempotency-Key` on every POST of the API, with Stripe's semantics, and bounded.
//!
//! A POST under `/v1/` that carries `Idempotency-Key` (1 to 255 visible ASCII characters)
//! is run at most once per key and caller within `idempotency.ttl_hours`:
//!
//! - the first request runs; its answer (status, content type, `Location`, body) is stored
//!   durably, under the key *and the caller*, with a fingerprint of the request (method,
//!   path, query, content type, body). Only an answer that could have changed something is
//!   stored: a route that exists, answering 2xx or 409 (a conflict with what is there). A
//!   refusal (401, 403, 404, 422, 429...) or a 5xx is not: nothing happened, so a retry with
//!   the same key runs again, and nobody can fill the disk with answers to nothing;
//! - the same key with the same request answers the stored response again, with
//!   `Idempotency-Replayed: true`, without doing the work;
//! - the same key with another request answers 422 (`loc` `["header", "idempotency-key"]`,
//!   type `idempotency_key_reused`): a key names one operation;
//! - a duplicate arriving while the first is still running waits for it (up to
//!   [`WAIT_FOR_FIRST`]) and then answers its stored response, or 409
//!   `ResourceAlreadyExists` when the first did not finish in time or stored nothing;
//! - the endpoints that issue a secret (personal access tokens, OAuth client registration,
//!   the token endpoint) refuse the header with 422 (`idempotency_key_not_allowed`): a
//!   replayed code exchange would hand out its tokens twice.
//!
//! **Sealed answers.** A stored answer's body can hold a secret (an organization access
//! token, a customer session's token, the portal's `authenticate` token). It is never
//! written in plain text: it is sealed with AES-256-GCM under a key derived from the
//! server secret, the caller and the `Idempotency-Key` itself, which is stored nowhere
//! (the record's id is a hash of it). Only a request that presents the key can open it;
//! the store, its log and backups hold ciphertext only. A replay answers the very same
//! body (with the token), as Polar's clients expect of a retry.
//!
//! **Body size.** The body is read up to the route's own limit: `server.body_limit_bytes`,
//! or `server.import_body_limit_bytes` on a bulk route (`crate::resource::is_bulk`).
//!
//! **Bounds.** Every POST with a key counts against the caller's
//! `rate_limits.idempotency_keys_per_caller`, and a caller keeps at most
//! `idempotency.max_keys_per_caller` stored answers (a new key beyond it is 429 before
//! anything runs). A POST to a path that is no route passes through untouched.
//!
//! The caller is the subject of the bearer token (user, organization or customer) or of
//! the session cookie; a request without credentials is its client address (an IPv6
//! client by its /64): its answers are replayed to that address only (a portal sign-in's
//! token is never answered to another client), and are bounded there. An unknown token is not scoped: the
//! request runs and is refused by its handler. Records are purged by a sweep every
//! `retention.interval_secs` once expired.

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
use tollgate_storage::{Batch, Expect, IndexEntry, Record, StorageError};

use crate::auth::Subject;
use crate::credentials::{bearer_token, resolve};
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
/// Stored answers per caller (its counter is what [`IdempotencySettings::max_keys_per_caller`]
/// bounds).
///
/// [`IdempotencySettings::max_keys_per_caller`]: crate::config::IdempotencySettings
const BY_CALLER: &str = "idempotency_by_caller";

/// The endpoints that answer with a secret: the header is refused there.
const SECRET_ISSUERS: &[&str] = &[
    "/v1/personal_access_tokens/",
    "/v1/oauth2/register",
    "/v1/oauth2/token",
];

/// A stored answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdempotentResponse {
    /// SHA-256 of the caller's scope and the key.
    pub id: Vec<u8>,
    /// Whom the answer counts against: the caller's scope, or its address when anonymous.
    pub caller: Vec<u8>,
    /// SHA-256 of the request it answers.
    pub fingerprint: Vec<u8>,
    pub status: u16,
    pub content_type: Option<String>,
    pub location: Option<String>,
    /// The body, sealed (see the module's documentation) when `nonce` is not empty; an
    /// older record's body is plain.
    pub body: Vec<u8>,
    /// The AES-GCM nonce of the sealed body.
    pub nonce: Vec<u8>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// Version 2, before bodies were sealed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct IdempotentResponseV2 {
    id: Vec<u8>,
    caller: Vec<u8>,
    fingerprint: Vec<u8>,
    status: u16,
    content_type: Option<String>,
    location: Option<String>,
    body: Vec<u8>,
    created_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
}

/// Version 1, before answers counted against their caller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct IdempotentResponseV1 {
    id: Vec<u8>,
    fingerprint: Vec<u8>,
    status: u16,
    content_type: Option<String>,
    location: Option<String>,
    body: Vec<u8>,
    created_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
}

const COLLECTION: &str = "idempotency";

impl Record for IdempotentResponse {
    const COLLECTION: &'static str = COLLECTION;
    const VERSION: u16 = 3;
    const INDEXES: &'static [&'static str] = &[BY_EXPIRY, BY_CALLER];

    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        match version {
            1 => {
                let v1: IdempotentResponseV1 =
                    tollgate_storage::codec::decode(COLLECTION, version, payload)?;
                Ok(IdempotentResponse {
                    id: v1.id,
                    caller: Vec::new(),
                    fingerprint: v1.fingerprint,
                    status: v1.status,
                    content_type: v1.content_type,
                    location: v1.location,
                    body: v1.body,
                    nonce: Vec::new(),
                    created_at: v1.created_at,
                    expires_at: v1.expires_at,
                })
            }
            2 => {
                let v2: IdempotentResponseV2 =
                    tollgate_storage::codec::decode(COLLECTION, version, payload)?;
                Ok(IdempotentResponse {
                    id: v2.id,
                    caller: v2.caller,
                    fingerprint: v2.fingerprint,
                    status: v2.status,
                    content_type: v2.content_type,
                    location: v2.location,
                    body: v2.body,
                    nonce: Vec::new(),
                    created_at: v2.created_at,
                    expires_at: v2.expires_at,
                })
            }
            3 => tollgate_storage::codec::decode(COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(COLLECTION, v)),
        }
    }

    fn id_key(&self) -> Vec<u8> {
        self.id.clone()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![
            IndexEntry::new(
                BY_EXPIRY,
                Vec::new(),
                tollgate_actors::domain::time_key(self.expires_at),
            ),
            IndexEntry::new(
                BY_CALLER,
                self.caller.clone(),
                tollgate_actors::domain::time_key(self.expires_at),
            ),
        ]
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
/// The anonymous scope is `a`.
async fn scope(state: &AppState, req: &ServiceRequest) -> Result<Option<Vec<u8>>, ApiError> {
    let subject = match bearer_token(req.request()) {
        Some(token) => match resolve(state, &token).await? {
            Some(p) => p.subject,
            None => return Ok(None),
        },
        None => match crate::credentials::session::current(state, req.request()).await? {
            Some(session) => Subject::User(session.value.user_id),
            None => Subject::Anonymous,
        },
    };
    let mut scope = match subject {
        Subject::Anonymous => b"a".to_vec(),
        Subject::User(id) | Subject::UserIn(id, _) => [b"u".as_slice(), &id.key()].concat(),
        Subject::Organization(id) => [b"o".as_slice(), &id.key()].concat(),
        Subject::Customer(id) => [b"c".as_slice(), &id.key()].concat(),
        Subject::Purchase(id, checkout) => [b"p".as_slice(), &id.key(), &checkout.key()].concat(),
    };
    // A request naming an organization acts on that one only: its answers are its own.
    if let Some(org) = req.headers().get(crate::extract::auth::ORGANIZATION_HEADER) {
        scope.extend_from_slice(b"/");
        scope.extend_from_slice(org.as_bytes().trim_ascii());
    }
    Ok(Some(scope))
}

fn hash(parts: &[&[u8]]) -> Vec<u8> {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    h.finalize().to_vec()
}

/// The key an answer of `caller` to `key` is sealed under: derived from the server secret,
/// the caller and the `Idempotency-Key`, which is never stored.
fn seal_key(state: &AppState, caller: &[u8], key: &str) -> [u8; 32] {
    state
        .hasher
        .derive(&[b"idempotency-answer", caller, key.as_bytes()])
}

/// `body` sealed with AES-256-GCM under `key`, bound to the record's id: (nonce, sealed).
fn seal(key: &[u8; 32], id: &[u8], body: &[u8]) -> Result<(Vec<u8>, Vec<u8>), ApiError> {
    use aes_gcm::aead::{Aead, KeyInit, Payload};
    use rand::RngCore;
    let cipher = aes_gcm::Aes256Gcm::new_from_slice(key)
        .map_err(|e| ApiError::internal(format!("idempotency seal: {e}")))?;
    let mut nonce = [0u8; 12];
    rand::rngs::OsRng.fill_bytes(&mut nonce);
    let sealed = cipher
        .encrypt(
            aes_gcm::Nonce::from_slice(&nonce),
            Payload { msg: body, aad: id },
        )
        .map_err(|_| ApiError::internal("idempotency seal"))?;
    Ok((nonce.to_vec(), sealed))
}

/// The plain body of a stored answer; `None` when it does not open under `key` (never for
/// the request that presents the same key and caller).
fn open_body(key: &[u8; 32], stored: &IdempotentResponse) -> Option<Vec<u8>> {
    use aes_gcm::aead::{Aead, KeyInit, Payload};
    if stored.nonce.is_empty() {
        return Some(stored.body.clone());
    }
    if stored.nonce.len() != 12 {
        return None;
    }
    let cipher = aes_gcm::Aes256Gcm::new_from_slice(key).ok()?;
    cipher
        .decrypt(
            aes_gcm::Nonce::from_slice(&stored.nonce),
            Payload {
                msg: &stored.body,
                aad: &stored.id,
            },
        )
        .ok()
}

/// Whether an answer with this status is kept for replays: a success, or a conflict with
/// what is there; never a refusal that changed nothing, never a 5xx.
pub fn is_stored(status: StatusCode) -> bool {
    status.is_success() || status == StatusCode::CONFLICT
}

/// Whom a scope's stored answers count against: the scope itself, or for the anonymous
/// scope the client address (an IPv6 client by its /64).
fn caller_of(scope: &[u8], ip: std::net::IpAddr) -> Vec<u8> {
    if scope != b"a" {
        return scope.to_vec();
    }
    match ip {
        std::net::IpAddr::V4(v4) => [b"ip4".as_slice(), &v4.octets()].concat(),
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => [b"ip4".as_slice(), &v4.octets()].concat(),
            None => [b"ip6".as_slice(), &v6.octets()[..8]].concat(),
        },
    }
}

fn replay(stored: &IdempotentResponse, body: Vec<u8>) -> HttpResponse {
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
    res.body(body)
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
fn answer_stored(
    stored: &IdempotentResponse,
    fingerprint: &[u8],
    key: &str,
    seal_key: &[u8; 32],
) -> HttpResponse {
    if stored.fingerprint != fingerprint {
        return key_error(
            "This Idempotency-Key was already used with a different request (method, path or \
             body); use a new key for a new request.",
            "idempotency_key_reused",
            key,
        )
        .error_response();
    }
    match open_body(seal_key, stored) {
        Some(body) => replay(stored, body),
        None => {
            tracing::warn!("a stored idempotent answer does not open; answered 409");
            ApiError::Conflict(
                "This Idempotency-Key was already used; its answer cannot be replayed. Use a \
                 new key."
                    .into(),
            )
            .error_response()
        }
    }
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
    match req.match_pattern() {
        // No such route: nothing can happen, so nothing is looked up or kept.
        None => return Ok(next.call(req).await?.map_into_left_body()),
        Some(route) if SECRET_ISSUERS.contains(&route.as_str()) => {
            let e = key_error(
                "Idempotency-Key is not accepted here: this endpoint answers with a secret, \
                 which is never stored for a replay. Send the request without it.",
                "idempotency_key_not_allowed",
                &key,
            );
            return early(req, e.error_response());
        }
        Some(_) => {}
    }
    let scope = match scope(&state, &req).await {
        Ok(Some(scope)) => scope,
        Ok(None) => return Ok(next.call(req).await?.map_into_left_body()),
        Err(e) => return early(req, e.error_response()),
    };
    let caller = caller_of(
        &scope,
        crate::client_ip::client_ip(&state.trusted_proxies, req.request()),
    );
    if let Err(denied) = state.limits.idempotency_key(&caller) {
        return early(req, ApiError::from(denied).error_response());
    }
    // The caller, not the scope: an anonymous answer is its client address's alone.
    let id = hash(&[b"idempotency", &caller, key.as_bytes()]);
    let seal_key = seal_key(&state, &caller, &key);

    // The whole body, for the fingerprint (the handler gets it back unchanged), up to the
    // route's own limit.
    let bulk = req
        .match_pattern()
        .is_some_and(|route| crate::resource::is_bulk(&route));
    let limit = if bulk {
        state.settings.server.import_body_limit_bytes
    } else {
        state.settings.server.body_limit_bytes
    };
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
            Ok(Some(stored)) => {
                return early(req, answer_stored(&stored, &fingerprint, &key, &seal_key))
            }
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
                        return early(req, answer_stored(&stored, &fingerprint, &key, &seal_key))
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

    // A new key: within what this caller may keep?
    let max = state.settings.idempotency.max_keys_per_caller;
    match state.store.count(BY_CALLER, &caller).await {
        Ok(kept) if kept >= max => {
            drop(claim);
            tracing::info!(kept, "caller at idempotency.max_keys_per_caller");
            let e = ApiError::TooManyRequests {
                retry_after_secs: 3600,
            };
            return early(req, e.error_response());
        }
        Ok(_) => {}
        Err(e) => return early(req, ApiError::from(e).error_response()),
    }

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
    let (nonce, sealed) = match seal(&seal_key, &id, &bytes) {
        Ok(sealed) => sealed,
        Err(e) => {
            // Answered, but nothing is stored for a replay.
            drop(claim);
            tracing::warn!(error = %e, "sealing an idempotent response failed");
            let res = head.set_body(BoxBody::new(bytes));
            return Ok(ServiceResponse::new(http_req, res).map_into_right_body());
        }
    };
    let record = IdempotentResponse {
        id: id.clone(),
        caller,
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
        body: sealed,
        nonce,
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
        for s in [200, 201, 202, 204, 409] {
            assert!(is_stored(StatusCode::from_u16(s).unwrap()), "{s}");
        }
        for s in [400, 401, 403, 404, 405, 408, 413, 422, 429, 500, 503] {
            assert!(!is_stored(StatusCode::from_u16(s).unwrap()), "{s}");
        }
    }

    #[test]
    fn anonymous_callers_count_by_address_and_ipv6_by_its_prefix() {
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        assert_eq!(caller_of(b"u123", ip("10.0.0.1")), b"u123".to_vec());
        assert_ne!(
            caller_of(b"a", ip("10.0.0.1")),
            caller_of(b"a", ip("10.0.0.2"))
        );
        assert_eq!(
            caller_of(b"a", ip("2001:db8:1:2::1")),
            caller_of(b"a", ip("2001:db8:1:2:ffff::9"))
        );
        assert_eq!(
            caller_of(b"a", ip("::ffff:10.0.0.1")),
            caller_of(b"a", ip("10.0.0.1"))
        );
    }

    #[test]
    fn a_version_1_record_still_decodes() {
        let v1 = IdempotentResponseV1 {
            id: vec![1; 32],
            fingerprint: vec![2; 32],
            status: 201,
            content_type: Some("application/json".into()),
            location: None,
            body: b"{}".to_vec(),
            created_at: DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
            expires_at: DateTime::from_timestamp(1_700_086_400, 0).unwrap(),
        };
        let bytes = tollgate_storage::codec::encode(&v1).unwrap();
        let r = IdempotentResponse::decode(1, &bytes).unwrap();
        assert_eq!(
            (r.status, r.caller.len(), r.body.as_slice()),
            (201, 0, b"{}".as_slice())
        );
        let again = IdempotentResponse::decode(3, &r.encode().unwrap()).unwrap();
        assert_eq!(again, r);
        // An older record's plain body replays as it is.
        assert_eq!(open_body(&[7; 32], &r).unwrap(), b"{}".to_vec());
    }

    #[test]
    fn a_sealed_body_opens_only_under_its_key_and_id() {
        let key = [7u8; 32];
        let token = b"{\"token\":\"polar_cst_secret\"}";
        let (nonce, sealed) = seal(&key, b"id-1", token).unwrap();
        assert!(!sealed.windows(10).any(|w| w == b"polar_cst_"));
        let mut r = IdempotentResponse {
            id: b"id-1".to_vec(),
            caller: Vec::new(),
            fingerprint: Vec::new(),
            status: 200,
            content_type: None,
            location: None,
            body: sealed,
            nonce,
            created_at: DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
            expires_at: DateTime::from_timestamp(1_700_086_400, 0).unwrap(),
        };
        assert_eq!(open_body(&key, &r).unwrap(), token.to_vec());
        assert!(open_body(&[8; 32], &r).is_none());
        r.id = b"id-2".to_vec();
        assert!(open_body(&key, &r).is_none());
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
