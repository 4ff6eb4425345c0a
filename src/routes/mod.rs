//! One module per resource. Handlers authenticate, parse, call the store or an actor, and
//! render; they hold no business rules beyond access checks.

pub mod benefits;
pub mod checkouts;
pub mod custom_fields;
pub mod customer_portal;
pub mod customers;
pub mod discounts;
pub mod health;
pub mod license_keys;
pub mod metrics;
pub mod orders;
pub mod organizations;
pub mod products;
pub mod stripe_webhook;
pub mod subscriptions;
pub mod webhooks;

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use actix_web::web;

/// Registers a resource with its routes, and records each `(METHOD, path)` so a test can
/// hold the registered routes and the OpenAPI document equal:
/// `resource!(cfg, "/v1/orders/{id}", { get => get, patch => update })`.
#[macro_export]
macro_rules! resource {
    ($cfg:expr, $path:expr, { $($method:ident => $handler:expr),+ $(,)? }) => {{
        let path: String = ($path).to_string();
        let mut resource = actix_web::web::resource(path.as_str());
        $(
            $crate::routes::record(stringify!($method), &path);
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

/// Every `(METHOD, path)` registered so far in this process.
pub fn registered() -> BTreeSet<(String, String)> {
    REGISTERED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    // The license-key hot path first: actix tries routes in registration order, and every
    // dynamic route before a match costs a regex test.
    customer_portal::configure(cfg);
    health::configure(cfg);
    metrics::configure(cfg);
    organizations::configure(cfg);
    benefits::configure(cfg);
    products::configure(cfg);
    discounts::configure(cfg);
    customers::configure(cfg);
    custom_fields::configure(cfg);
    checkouts::configure(cfg);
    orders::configure(cfg);
    subscriptions::configure(cfg);
    license_keys::configure(cfg);
    stripe_webhook::configure(cfg);
    webhooks::configure(cfg);
    crate::oauth2::configure(cfg);
    crate::web::configure(cfg);
    crate::openapi::configure(cfg);
    crate::admin::configure(cfg);
}
