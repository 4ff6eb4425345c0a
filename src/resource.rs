//! The route table's mechanics: [`resource!`](crate::resource) registers a resource with its
//! routes and records each `(METHOD, path)`, so a test holds the registered routes and the
//! OpenAPI document equal. A leaf: the modules with routes use it; the table itself
//! (which module mounts what, in which order) is `crate::startup`.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

/// Registers a resource with its routes, and records each `(METHOD, path)` so a test can
/// hold the registered routes and the OpenAPI document equal:
/// `resource!(cfg, "/v1/orders/{id}", { get => get, patch => update })`.
#[macro_export]
macro_rules! resource {
    ($cfg:expr, $path:expr, { $($method:ident => $handler:expr),+ $(,)? }) => {{
        let path: String = ($path).to_string();
        let mut resource = actix_web::web::resource(path.as_str());
        $(
            $crate::resource::record(stringify!($method), &path);
            resource = resource.route(actix_web::web::$method().to($handler));
        )+
        $cfg.service(resource);
    }};
}

static REGISTERED: Mutex<BTreeSet<(String, String)>> = Mutex::new(BTreeSet::new());

/// Notes a registered route (every worker registers the same ones; the set keeps one).
pub fn record(method: &str, path: &str) {
    REGISTERED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert((method.to_uppercase(), path.to_string()));
}

static BULK: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Notes a route that takes bulk bodies (`server.import_body_limit_bytes`), for what reads
/// bodies before its handler (the `Idempotency-Key` middleware).
pub fn record_bulk(path: &str) {
    BULK.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(path.to_string());
}

/// Whether the route `pattern` takes bulk bodies.
pub fn is_bulk(pattern: &str) -> bool {
    BULK.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .contains(pattern)
}

/// Every `(METHOD, path)` registered so far in this process.
pub fn registered() -> BTreeSet<(String, String)> {
    REGISTERED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}
