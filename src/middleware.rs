//! Request logging and the error-shape guarantee.

use std::time::Instant;

use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, StatusCode};
use actix_web::{Error, HttpMessage, ResponseError};

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
    let state = req
        .app_data::<actix_web::web::Data<crate::state::AppState>>()
        .cloned();
    let body_limit = state
        .as_ref()
        .map(|s| s.settings.server.body_limit_bytes)
        .unwrap_or(0);
    let res = next.call(req).await?;
    let status = res.status();
    if let Some(state) = &state {
        state
            .metrics
            .request(method.as_str(), &route, status.as_u16(), started.elapsed());
    }
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
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge { limit: body_limit },
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

/// Concurrent connections per client address (`server.max_connections_per_ip`).
///
/// `HttpServer::on_connect` runs as a connection is accepted, before anything is read: it
/// counts the connection under its peer address and leaves a [`ConnectionSlot`] in the
/// connection's data, which gives the count back when the connection ends. A connection
/// over the cap is marked; its first request is answered at once with 429 (JSON, with
/// `Retry-After`) and the connection is closed, so the excess never reaches a handler.
/// (actix cannot refuse a connection from `on_connect`; one that never sends a request is
/// closed by the head deadline, `server.request_head_timeout_ms`.)
#[derive(Debug)]
pub struct ConnectionCounter {
    max: usize,
    open: std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>,
}

/// Held in a connection's data for as long as it is open.
#[derive(Debug)]
pub struct ConnectionSlot {
    counter: std::sync::Arc<ConnectionCounter>,
    ip: std::net::IpAddr,
    /// The connection is over the cap of its address.
    pub over_cap: bool,
}

impl ConnectionCounter {
    /// `max = 0` means no cap.
    pub fn new(max: usize) -> std::sync::Arc<Self> {
        std::sync::Arc::new(Self {
            max,
            open: std::sync::Mutex::new(std::collections::HashMap::new()),
        })
    }

    /// Counts a new connection from `ip`.
    pub fn open(self: &std::sync::Arc<Self>, ip: std::net::IpAddr) -> ConnectionSlot {
        let count = match self.open.lock() {
            Ok(mut open) => {
                let n = open.entry(ip).or_insert(0);
                *n += 1;
                *n
            }
            Err(_) => 0,
        };
        ConnectionSlot {
            counter: self.clone(),
            ip,
            over_cap: self.max > 0 && count > self.max,
        }
    }

    /// Connections open from `ip` now.
    pub fn count(&self, ip: std::net::IpAddr) -> usize {
        self.open
            .lock()
            .map(|open| open.get(&ip).copied().unwrap_or(0))
            .unwrap_or(0)
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        if let Ok(mut open) = self.counter.open.lock() {
            if let Some(n) = open.get_mut(&self.ip) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    open.remove(&self.ip);
                }
            }
        }
    }
}

/// Set on a request whose body did not arrive within `server.body_timeout_secs`.
#[derive(Debug, Clone, Default)]
struct BodyDeadline(std::rc::Rc<std::cell::Cell<bool>>);

/// A request body stream that fails once its deadline has passed.
struct DeadlineStream {
    inner: actix_web::dev::Payload,
    sleep: std::pin::Pin<Box<actix_web::rt::time::Sleep>>,
    expired: BodyDeadline,
}

impl futures_util::Stream for DeadlineStream {
    type Item = Result<actix_web::web::Bytes, actix_web::error::PayloadError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        if let Poll::Ready(item) = std::pin::Pin::new(&mut self.inner).poll_next(cx) {
            return Poll::Ready(item);
        }
        if self.expired.0.get() {
            return Poll::Ready(None);
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            self.expired.0.set(true);
            return Poll::Ready(Some(Err(actix_web::error::PayloadError::Io(
                std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the request body did not arrive in time",
                ),
            ))));
        }
        Poll::Pending
    }
}

use std::future::Future as _;

/// The JSON 408 of a body that came too slowly; the connection is closed after it.
fn request_timeout(secs: u64) -> actix_web::HttpResponse {
    let mut res = actix_web::HttpResponse::build(StatusCode::REQUEST_TIMEOUT);
    res.force_close();
    res.json(crate::error::ErrorBody::new(
        "RequestTimeout",
        format!("The request body did not arrive within {secs} seconds."),
    ))
}

/// Slow and greedy clients: a connection over `server.max_connections_per_ip` gets 429 and
/// is closed; a body not read in full within `server.body_timeout_secs` of the request
/// head gets a JSON 408 and the connection is closed (the handler reading it sees an
/// error and stops).
pub async fn guard_connections(
    mut req: ServiceRequest,
    next: actix_web::middleware::Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody, BoxBody>>, Error> {
    if req
        .conn_data::<ConnectionSlot>()
        .is_some_and(|s| s.over_cap)
    {
        let mut response = ApiError::TooManyRequests {
            retry_after_secs: 1,
        }
        .error_response();
        response
            .head_mut()
            .set_connection_type(actix_web::http::ConnectionType::Close);
        let (req, _) = req.into_parts();
        return Ok(ServiceResponse::new(req, response).map_into_right_body());
    }
    let body_timeout = req
        .app_data::<actix_web::web::Data<crate::state::AppState>>()
        .map(|s| s.settings.server.body_timeout_secs)
        .unwrap_or(0);
    let expired = BodyDeadline::default();
    if body_timeout > 0 {
        let inner = req.take_payload();
        let stream = DeadlineStream {
            inner,
            sleep: Box::pin(actix_web::rt::time::sleep(std::time::Duration::from_secs(
                body_timeout,
            ))),
            expired: expired.clone(),
        };
        req.set_payload(actix_web::dev::Payload::Stream {
            payload: Box::pin(stream),
        });
    }
    let res = next.call(req).await?;
    if expired.0.get() {
        tracing::info!(
            timeout_secs = body_timeout,
            "request body too slow; closing the connection"
        );
        let (req, _) = res.into_parts();
        return Ok(ServiceResponse::new(req, request_timeout(body_timeout)).map_into_right_body());
    }
    Ok(res.map_into_left_body())
}

/// API versions (`crate::api::version`): the `Polar-Version` header selects the version a
/// request is served in, on every path; an answer says which (`2026-04` when the request
/// named none). A value that is not a supported version is 404 `{"detail": "Not Found"}`
/// without the header, as Polar answers, before anything else runs.
pub async fn api_version(
    req: ServiceRequest,
    next: actix_web::middleware::Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody, BoxBody>>, Error> {
    use crate::api::version::{self, ApiVersion};
    let asked = match req.headers().get(version::HEADER) {
        // Empty is no header, as in Polar.
        None => None,
        Some(value) if value.is_empty() => None,
        Some(value) => match value.to_str().ok().and_then(ApiVersion::parse) {
            Some(v) => Some(v),
            None => {
                let response = actix_web::HttpResponse::NotFound()
                    .json(serde_json::json!({"detail": "Not Found"}));
                return Ok(req.into_response(response).map_into_right_body());
            }
        },
    };
    let mut res = version::serve(asked, next.call(req)).await?;
    res.headers_mut().insert(
        header::HeaderName::from_static("polar-version"),
        header::HeaderValue::from_static(asked.unwrap_or(version::DEFAULT).as_str()),
    );
    Ok(res.map_into_left_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_counted_per_address_and_given_back() {
        let counter = ConnectionCounter::new(2);
        let a: std::net::IpAddr = [10, 0, 0, 1].into();
        let b: std::net::IpAddr = [10, 0, 0, 2].into();
        let first = counter.open(a);
        let second = counter.open(a);
        let third = counter.open(a);
        assert!(!first.over_cap && !second.over_cap && third.over_cap);
        assert!(!counter.open(b).over_cap);
        assert_eq!(counter.count(a), 3);
        drop(third);
        drop(first);
        assert_eq!(counter.count(a), 1);
        assert!(!counter.open(a).over_cap);
        assert_eq!(counter.count(b), 0);
        let unlimited = ConnectionCounter::new(0);
        let slots: Vec<_> = (0..10).map(|_| unlimited.open(a)).collect();
        assert!(slots.iter().all(|s| !s.over_cap));
    }
}
