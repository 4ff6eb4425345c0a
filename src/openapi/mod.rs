//! The OpenAPI 3.1 document (`GET /openapi.json`, the default shape, served without a
//! `Polar-Version` header), one per API version (`GET /{version}/openapi.json`,
//! [`document_for`]) and the API reference page rendered from the default (`GET /docs`).
//!
//! Operations are declared in [`paths`]; their schemas are derived from the request and
//! response types in `crate::api`, which utoipa turns into the document. [`finish`] then
//! applies the service-wide rules that would be noise on every operation: the bearer
//! security scheme, the error responses (401/403 where a token is needed, 404 where the
//! path names a resource, 422 everywhere input is read), and "every key is sent" for
//! response schemas.

pub mod checkout_paths;
pub mod customer_paths;
mod docs;
pub mod downloadable_paths;
pub mod export_paths;
pub mod file_paths;
pub mod invoice_paths;
pub mod paths;
pub mod payment_method_paths;
pub mod portal_billing_paths;
pub mod portal_paths;
pub mod recovery_paths;
pub mod release_paths;
pub mod signing_paths;
pub mod token_paths;
pub mod usage_paths;

use std::collections::{BTreeSet, HashSet};
use std::sync::OnceLock;

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use serde_json::{json, Map, Value};
use utoipa::OpenApi;

use crate::api::version::ApiVersion;
use crate::error::ApiError;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Tollgate",
        description = "Checkout sessions, orders, subscriptions, organizations and license keys, \
                       with Polar's /v1 API.",
        license(name = "Apache-2.0"),
    ),
    paths(
        paths::healthz,
        paths::readyz,
        paths::metrics,
        paths::admin_backup,
        paths::openapi_json,
        paths::openapi_json_version,
        paths::docs,
        paths::stripe_webhook,
        paths::organizations_list,
        paths::organizations_create,
        paths::organizations_get,
        paths::organizations_update,
        paths::benefits_list,
        paths::benefits_create,
        paths::benefits_get,
        paths::benefits_update,
        paths::benefits_delete,
        paths::products_list,
        paths::products_create,
        paths::products_get,
        paths::products_update,
        paths::products_update_benefits,
        paths::discounts_list,
        paths::discounts_create,
        paths::discounts_get,
        paths::discounts_update,
        paths::discounts_delete,
        paths::customers_list,
        export_paths::orders_export,
        export_paths::subscriptions_export,
        export_paths::customers_export,
        export_paths::reports_oss,
        export_paths::reports_tax,
        export_paths::license_keys_export,
        paths::customers_create,
        paths::customers_get,
        paths::customers_update,
        paths::customers_delete,
        customer_paths::customers_get_external,
        customer_paths::customers_update_external,
        customer_paths::customers_delete_external,
        customer_paths::customers_state,
        customer_paths::customers_state_external,
        customer_paths::customer_sessions_create,
        customer_paths::benefit_grants_list,
        customer_paths::benefits_grants,
        paths::custom_fields_list,
        paths::custom_fields_create,
        paths::custom_fields_get,
        paths::custom_fields_update,
        paths::custom_fields_delete,
        checkout_paths::checkouts_list,
        checkout_paths::checkouts_create,
        checkout_paths::checkouts_get,
        checkout_paths::checkouts_update,
        checkout_paths::checkouts_client_get,
        checkout_paths::checkouts_client_update,
        checkout_paths::checkouts_client_confirm,
        checkout_paths::checkout_sessions_list,
        checkout_paths::checkout_sessions_create,
        checkout_paths::checkout_sessions_get,
        checkout_paths::checkout_sessions_update,
        checkout_paths::checkout_sessions_client_get,
        checkout_paths::checkout_sessions_client_update,
        checkout_paths::checkout_sessions_client_confirm,
        checkout_paths::checkout_links_list,
        checkout_paths::checkout_links_create,
        checkout_paths::checkout_links_get,
        checkout_paths::checkout_links_update,
        checkout_paths::checkout_links_delete,
        checkout_paths::checkout_links_redirect,
        paths::orders_list,
        paths::orders_get,
        invoice_paths::orders_update,
        invoice_paths::orders_generate_invoice,
        invoice_paths::orders_invoice,
        invoice_paths::refunds_credit_note,
        invoice_paths::invoices_pdf,
        paths::refunds_list,
        paths::refunds_create,
        paths::disputes_list,
        paths::disputes_get,
        paths::disputes_accept,
        paths::subscriptions_list,
        paths::subscriptions_get,
        paths::subscriptions_create,
        paths::subscriptions_revoke,
        paths::subscriptions_update,
        paths::subscriptions_change_preview,
        paths::license_keys_import,
        paths::license_keys_generate,
        portal_paths::portal_license_keys_claim,
        signing_paths::portal_license_keys_jwks,
        signing_paths::portal_license_keys_license_file,
        signing_paths::license_keys_signing_get,
        signing_paths::license_keys_signing_update,
        signing_paths::license_keys_signing_rotate,
        paths::license_keys_list,
        paths::license_keys_list_slash,
        paths::license_keys_get,
        paths::license_keys_update,
        paths::license_keys_get_activation,
        paths::license_keys_rotate,
        paths::license_keys_validate,
        paths::license_keys_activate,
        paths::license_keys_deactivate,
        paths::portal_license_keys_list,
        paths::portal_license_keys_get,
        paths::portal_license_keys_rotate,
        paths::portal_resend,
        paths::portal_validate,
        paths::portal_activate,
        paths::portal_deactivate,
        portal_paths::customer_session_request,
        portal_paths::customer_session_authenticate,
        portal_paths::customer_session_introspect,
        portal_paths::customer_session_user,
        portal_paths::portal_customers_me,
        portal_billing_paths::portal_customers_me_update,
        portal_billing_paths::portal_email_update_request,
        portal_billing_paths::portal_email_update_check,
        portal_billing_paths::portal_email_update_verify,
        payment_method_paths::portal_payment_methods_list,
        payment_method_paths::portal_payment_methods_add,
        payment_method_paths::portal_payment_methods_confirm,
        payment_method_paths::portal_payment_methods_delete,
        portal_paths::portal_orders_list,
        portal_paths::portal_orders_get,
        portal_paths::portal_orders_receipt,
        invoice_paths::portal_orders_update,
        invoice_paths::portal_orders_generate_invoice,
        invoice_paths::portal_orders_invoice,
        invoice_paths::portal_refunds_credit_note,
        recovery_paths::portal_orders_confirm_payment,
        recovery_paths::portal_orders_payment_status,
        portal_paths::portal_subscriptions_list,
        portal_paths::portal_subscriptions_get,
        portal_paths::portal_subscriptions_update,
        portal_paths::portal_subscriptions_cancel,
        portal_billing_paths::portal_subscriptions_change_preview,
        portal_paths::portal_benefit_grants_list,
        portal_paths::portal_benefit_grants_get,
        portal_paths::portal_license_keys_remove_activation,
        paths::users_validate,
        paths::users_activate,
        paths::users_deactivate,
        paths::oauth2_register,
        paths::oauth2_clients_list,
        paths::oauth2_client_get,
        paths::oauth2_client_update,
        paths::oauth2_client_delete,
        paths::oauth2_token,
        paths::oauth2_introspect,
        paths::oauth2_revoke,
        paths::oauth2_userinfo_get,
        paths::oauth2_userinfo_post,
        paths::openid_configuration,
        paths::jwks,
        paths::apple_pay_domain_association,
        paths::pats_list,
        paths::pats_create,
        paths::pats_delete,
        token_paths::organization_access_tokens_list,
        token_paths::organization_access_tokens_create,
        token_paths::organization_access_tokens_update,
        token_paths::organization_access_tokens_delete,
        paths::page_authorize,
        paths::page_consent,
        paths::page_login,
        paths::page_login_post,
        paths::page_signup,
        paths::page_signup_post,
        paths::page_logout,
        paths::page_tokens,
        paths::page_tokens_create,
        paths::page_tokens_revoke,
        paths::page_checkout,
        paths::page_checkout_confirmation,
        paths::page_resend_form,
        paths::page_resend_send,
        paths::page_checkout_script,
        paths::webhooks_endpoints_list,
        paths::webhooks_endpoints_create,
        paths::webhooks_endpoints_get,
        paths::webhooks_endpoints_update,
        paths::webhooks_endpoints_secret,
        paths::webhooks_endpoints_delete,
        paths::webhooks_deliveries_list,
        paths::webhooks_events_redeliver,
        paths::webhooks_events_cursor,
        downloadable_paths::downloadables_list,
        downloadable_paths::downloadables_download,
        file_paths::files_list,
        file_paths::files_create,
        file_paths::files_uploaded,
        file_paths::files_update,
        file_paths::files_delete,
        file_paths::files_put_part,
        file_paths::admin_backup_files,
        file_paths::admin_backup_file,
        release_paths::releases_list,
        release_paths::releases_create,
        release_paths::releases_signing_key,
        release_paths::releases_get,
        release_paths::releases_update,
        release_paths::releases_delete,
        release_paths::releases_publish,
        release_paths::releases_yank,
        release_paths::updates_channel_file,
        release_paths::updates_tauri,
        release_paths::updates_tauri_static,
        release_paths::updates_download,
        usage_paths::events_ingest,
        usage_paths::events_list,
        usage_paths::events_get,
        usage_paths::meters_list,
        usage_paths::meters_create,
        usage_paths::meters_get,
        usage_paths::meters_update,
        usage_paths::meters_quantities,
        usage_paths::customer_meters_list,
        usage_paths::customer_meters_get,
        usage_paths::portal_meters_list,
        usage_paths::portal_meters_get,
    ),
    components(schemas(
        crate::error::ErrorBody,
        crate::error::ValidationErrorBody,
        crate::api::webhook::WebhookEventType,
        crate::api::webhook::BenefitGrantView,
    ))
)]
struct ApiDoc;

/// Response schemas with keys that may be left out (unset settings and properties); every
/// other schema reachable from a response has all its keys required.
const OPEN_SCHEMAS: &[&str] = &[
    "OrganizationProfileSettings",
    "OrganizationSubscribePromoteSettings",
    "OrganizationFeatureSettings",
    "CustomFieldProperties",
    "OAuth2Error",
    "UserInfo",
    // A grant's `license_key_id` and `display_key` are left out when it gave no key
    // (@polar-sh/sdk 0.47 reads them as optional strings, never null).
    "BenefitGrantProperties",
    // `code` is only on license-key refusals.
    "Error",
];

/// The document of the default shape, built once.
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| in_version(None))
}

/// Every operation and schema, with every field of every version.
fn all_versions() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_else(|_| json!({}));
        add_dashboard(&mut doc);
        add_portal_pages(&mut doc);
        finish(&mut doc);
        doc
    })
}

/// The dashboard's pages ([`crate::web::dashboard::ROUTES`]): HTML behind the browser session,
/// forms CSRF-checked.
fn add_dashboard(doc: &mut Value) {
    for (method, path, summary) in crate::web::dashboard::ROUTES {
        let parameters: Vec<Value> = path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        let html = |d: &str| json!({"description": d, "content": {"text/html": {"schema": {"type": "string"}}}});
        let mut responses = json!({
            "303": {"description": "Done (to the next page), or to sign in without a session"},
            "404": html("Not found, or not the user's organization"),
        });
        if *method == "get" {
            responses["200"] = html("The page");
        } else {
            responses["403"] = html("CSRF check failed");
            responses["422"] = html("The form again, with each problem");
        }
        if path.starts_with("/buy/") {
            responses["429"] = html("Too many checkout links followed from this address");
        }
        if path.ends_with(".js") {
            responses = json!({"200": {
                "description": "The script",
                "content": {"text/javascript": {"schema": {"type": "string"}}},
            }});
        }
        doc["paths"][*path][*method] = json!({
            "tags": [if path.starts_with("/buy/") { "pages" } else { "dashboard" }],
            "summary": summary,
            "operationId": format!("dashboard_{method}_{}", path.trim_start_matches('/').replace(['/', '{', '}', '-'], "_")),
            "parameters": parameters,
            "responses": responses,
        });
    }
}

/// The customer portal's pages ([`crate::web::portal::ROUTES`]): HTML behind the portal's
/// session cookie (without one, 303 to sign in), forms CSRF-checked, errors as pages.
fn add_portal_pages(doc: &mut Value) {
    for (method, path, summary) in crate::web::portal::ROUTES {
        let parameters: Vec<Value> = path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        let html = |d: &str| json!({"description": d, "content": {"text/html": {"schema": {"type": "string"}}}});
        let mut responses = json!({
            "404": html("Not found, not the signed-in customer's, or an expired receipt link"),
            "503": html("Overloaded or starting up; retry"),
        });
        if path.ends_with(".js") {
            responses = json!({"200": {
                "description": "The script",
                "content": {"text/javascript": {"schema": {"type": "string"}}},
            }});
        } else if *method == "get" {
            responses["200"] = html("The page");
            responses["303"] =
                json!({"description": "To the overview, or to sign in without a session"});
            if *path == "/portal/{slug}" {
                responses["401"] = html("The seller's portal link has expired");
            }
            if path.ends_with("/recover/{token}") {
                responses["401"] =
                    html("The e-mail's link has expired or was already used: the sign-in form");
            }
        } else {
            responses["200"] = html("The form again, with its answer or its problems");
            responses["303"] =
                json!({"description": "Done (to the next page), or to sign in without a session"});
            responses["400"] = html("The change can't be made");
            responses["401"] = html("A wrong, expired or used sign-in code");
            responses["403"] = html("CSRF check failed, or the seller does not allow this");
            responses["409"] = html("A conflicting change won; retry");
            responses["410"] = html("The subscription has ended");
            responses["422"] = html("The form again, with each problem");
            responses["429"] = html("Too many codes or sign-in attempts; retry later");
            if path.ends_with("/pay") {
                responses["202"] =
                    html("The payment waits for the buyer's bank: the page checks again");
            }
        }
        doc["paths"][*path][*method] = json!({
            "tags": ["portal"],
            "summary": summary,
            "operationId": format!("portal_{method}_{}", path.trim_start_matches('/').replace(['/', '{', '}', '-', '.'], "_")),
            "parameters": parameters,
            "responses": responses,
        });
    }
}

fn error_response(description: &str, schema: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}
    })
}

/// Applies the service-wide rules (see the module documentation).
fn finish(doc: &mut Value) {
    doc["info"]["version"] = json!(env!("CARGO_PKG_VERSION"));
    doc["components"]["securitySchemes"] = json!({
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal access token (`polar_pat_…`), an organization access \
                            token (`polar_oat_…`), an OAuth 2.0 access token \
                            (`polar_at_u_…`, `polar_at_o_…`) or, on the customer portal, a \
                            customer session token (`polar_cst_…`)."
        },
        "session": {
            "type": "apiKey",
            "in": "cookie",
            "name": "tollgate_session",
            "description": "The browser session of the sign-in pages. Calls other than GET, HEAD \
                            and OPTIONS made with it need `Content-Type: application/json` and, \
                            when sent, the service's own `Origin` and `Sec-Fetch-Site: \
                            same-origin` (else 403 `NotPermitted`)."
        }
    });

    let mut response_roots: Vec<String> = Vec::new();
    if let Some(paths) = doc["paths"].as_object_mut() {
        for (path, item) in paths.iter_mut() {
            let Some(item) = item.as_object_mut() else {
                continue;
            };
            for (method, op) in item.iter_mut() {
                let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
                    continue;
                };
                for r in responses.values() {
                    collect_refs(r, &mut response_roots);
                }
                let secured = op.get("security").is_some();
                let has_body = op.get("requestBody").is_some();
                if path.starts_with("/v1/") && method == "post" {
                    add_idempotency_key(op);
                }
                let narrowed = secured && names_organization(path);
                if narrowed {
                    add_organization_header(op);
                }
                let responses = match op.get_mut("responses").and_then(Value::as_object_mut) {
                    Some(r) => r,
                    None => continue,
                };
                let mut add = |code: &str, description: &str, schema: &str| {
                    responses
                        .entry(code.to_string())
                        .or_insert_with(|| error_response(description, schema));
                };
                if path.starts_with("/v1/") {
                    if secured {
                        add("401", "Missing or invalid token", "Error");
                        add("403", "The token lacks the scope", "Error");
                    }
                    if path.contains('{') {
                        add("404", "Not found", "Error");
                    }
                    if narrowed {
                        add(
                            "404",
                            "The organization named by `Polar-Organization` is not one the \
                             caller reaches",
                            "Error",
                        );
                    }
                    add("422", "Invalid input", "HTTPValidationError");
                    add("429", "Too many requests for one resource; retry", "Error");
                    add("503", "Overloaded or starting up; retry", "Error");
                    if has_body {
                        add("413", "The body is larger than the limit", "Error");
                        add(
                            "408",
                            "The body did not arrive within server.body_timeout_secs; the \
                             connection is closed",
                            "Error",
                        );
                    }
                    if method != "get" {
                        add("409", "A conflicting write won; retry", "Error");
                    }
                }
            }
        }
    }

    // Every schema reachable from a response sends all its keys.
    let mut reachable: HashSet<String> = HashSet::new();
    let schemas = doc["components"]["schemas"].clone();
    let mut stack = response_roots;
    while let Some(name) = stack.pop() {
        if !reachable.insert(name.clone()) {
            continue;
        }
        let mut refs = Vec::new();
        collect_refs(&schemas[&name], &mut refs);
        stack.extend(refs);
    }
    if let Some(all) = doc["components"]["schemas"].as_object_mut() {
        for name in reachable {
            if OPEN_SCHEMAS.contains(&name.as_str()) {
                continue;
            }
            if let Some(schema) = all.get_mut(&name) {
                require_all(schema);
            }
        }
    }
}

/// The `Idempotency-Key` header of every POST of the API (see `crate::idempotency`).
fn add_idempotency_key(op: &mut Value) {
    let Some(op) = op.as_object_mut() else {
        return;
    };
    let params = op.entry("parameters").or_insert_with(|| json!([]));
    if let Some(list) = params.as_array_mut() {
        list.push(json!({
            "name": "Idempotency-Key",
            "in": "header",
            "required": false,
            "description": "Makes a retry safe: the same key with the same request within \
                            `idempotency.ttl_hours` answers the stored response (with \
                            `Idempotency-Replayed: true`) without doing the work again; the \
                            same key with another request is 422; a duplicate sent while the \
                            first runs waits for it, or gets 409. Keys are per caller.",
            "schema": {"type": "string", "minLength": 1, "maxLength": 255,
                       "pattern": "^[\\x20-\\x7E]+$"}
        }));
    }
}

/// Whether the operations of `path` read the `Polar-Organization` header: every operation
/// of the API that takes a token, but the OAuth 2.0 ones (their own credentials).
fn names_organization(path: &str) -> bool {
    path.starts_with("/v1/") && !path.starts_with("/v1/oauth2/")
}

/// The `Polar-Organization` header (see `crate::extract::auth::named_organization`).
fn add_organization_header(op: &mut Value) {
    let Some(op) = op.as_object_mut() else {
        return;
    };
    let params = op.entry("parameters").or_insert_with(|| json!([]));
    if let Some(list) = params.as_array_mut() {
        list.push(json!({
            "name": "Polar-Organization",
            "in": "header",
            "required": false,
            "description": "Acts on this organization only: lists show its records only, \
                            creates default to it, another organization's records are not \
                            found. A user must be a member of it, an organization token must \
                            be its own (else 404).",
            "schema": {"type": "string", "format": "uuid"}
        }));
    }
}

/// The schema names `value` refers to (`#/components/schemas/<name>`).
fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                if let Some(name) = r.strip_prefix("#/components/schemas/") {
                    out.push(name.to_string());
                }
            }
            for v in map.values() {
                collect_refs(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// Marks every property of an object schema (and of its inline `allOf` parts) required.
fn require_all(schema: &mut Value) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let keys: BTreeSet<String> = props.keys().cloned().collect();
        let required: Vec<Value> = keys.into_iter().map(Value::String).collect();
        if let Some(obj) = schema.as_object_mut() {
            obj.insert("required".into(), Value::Array(required));
        }
    }
    if let Some(parts) = schema.get_mut("allOf").and_then(Value::as_array_mut) {
        parts.iter_mut().for_each(require_all);
    }
    // A generic `ListResource<T>` inlines `T` as the schema of `items`: its keys are sent too.
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for items in props.values_mut().filter_map(|p| p.get_mut("items")) {
            if items.get("properties").is_some() {
                require_all(items);
            }
        }
    }
}

/// The document of one API version (`None`: the default shape, [`document`]), built once:
/// the default's, without the fields the version does not serve
/// (`crate::api::versioned_schemas`), titled with the version.
pub fn document_for(version: Option<ApiVersion>) -> &'static Value {
    static DOCS: [OnceLock<Value>; ApiVersion::ALL.len()] =
        [const { OnceLock::new() }; ApiVersion::ALL.len()];
    let Some(version) = version else {
        return document();
    };
    let slot = ApiVersion::ALL
        .iter()
        .position(|v| *v == version)
        .unwrap_or_default();
    DOCS[slot].get_or_init(|| in_version(Some(version)))
}

/// The whole document without what `version` does not serve.
fn in_version(version: Option<ApiVersion>) -> Value {
    let mut doc = all_versions().clone();
    if let Some(version) = version {
        doc["info"]["version"] = json!(version.as_str());
    }
    let schemas = &mut doc["components"]["schemas"];
    for (name, fields) in crate::api::versioned_schemas() {
        let gone: Vec<&str> = fields
            .iter()
            .filter(|(_, versions)| !versions.includes(version))
            .map(|(field, _)| *field)
            .collect();
        // The schema, and its copy utoipa inlines as the items of its list.
        let list = format!("ListResource_{name}");
        remove_fields(&mut schemas[name], &gone);
        remove_fields(
            &mut schemas[list.as_str()]["properties"]["items"]["items"],
            &gone,
        );
    }
    doc
}

fn remove_fields(schema: &mut Value, fields: &[&str]) {
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.retain(|k, _| !fields.contains(&k.as_str()));
    }
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|r| !r.as_str().is_some_and(|r| fields.contains(&r)));
    }
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/openapi.json", { get => openapi_json });
    crate::resource!(cfg, "/{version}/openapi.json", { get => openapi_json_version });
    crate::resource!(cfg, "/docs", { get => docs_page });
}

async fn openapi_json() -> HttpResponse {
    static BODY: OnceLock<String> = OnceLock::new();
    let body = BODY.get_or_init(|| document().to_string());
    HttpResponse::Ok()
        .content_type("application/json")
        .body(body.as_str())
}

async fn openapi_json_version(version: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let version = ApiVersion::parse(&version).ok_or_else(ApiError::not_found)?;
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .json(document_for(Some(version))))
}

async fn docs_page() -> HttpResponse {
    static BODY: OnceLock<String> = OnceLock::new();
    let body = BODY.get_or_init(|| docs::render(document()));
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "public, max-age=300"))
        .body(body.as_str())
}

/// The operations of the document as `(METHOD, path)` pairs.
pub fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    if let Some(paths) = doc["paths"].as_object() {
        for (path, item) in paths {
            if let Some(item) = item.as_object() {
                for method in item.keys() {
                    out.insert((method.to_uppercase(), path.clone()));
                }
            }
        }
    }
    out
}

/// Keeps `Map` in the public surface small: the docs renderer reads schemas through this.
fn schema_map(doc: &Value) -> Option<&Map<String, Value>> {
    doc["components"]["schemas"].as_object()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_openapi_3_1_with_every_operation_documented() {
        let doc = document();
        assert_eq!(doc["openapi"], "3.1.0");
        let ops = operations(doc);
        assert!(ops.contains(&("POST".into(), "/v1/checkouts/custom/".into())));
        assert!(ops.contains(&("GET".into(), "/v1/license-keys".into())));
        // Every /v1 operation has a 422; secured ones 401 and 403; `{id}` ones 404.
        for (method, path) in &ops {
            let op = &doc["paths"][path][method.to_lowercase()];
            if path.starts_with("/v1/") {
                assert!(op["responses"]["422"].is_object(), "{method} {path}");
                if path.contains('{') {
                    assert!(op["responses"]["404"].is_object(), "{method} {path}");
                }
                if op.get("security").is_some() {
                    assert!(op["responses"]["401"].is_object(), "{method} {path}");
                }
            }
        }
    }

    #[test]
    fn response_schemas_require_every_key_but_request_schemas_do_not() {
        let schemas = &document()["components"]["schemas"];
        let required = |name: &str| -> Vec<String> {
            schemas[name]["required"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        // Nullable keys of a response are still required keys.
        assert!(required("Organization").contains(&"modified_at".to_string()));
        assert!(required("LicenseKeyRead").contains(&"expires_at".to_string()));
        // A request's optional key stays optional.
        assert!(!required("OrganizationCreate").contains(&"avatar_url".to_string()));
        assert!(required("OrganizationCreate").contains(&"slug".to_string()));
        // Open schemas keep their optional keys.
        assert!(required("OrganizationProfileSettings").is_empty());
    }

    #[test]
    fn every_reference_resolves() {
        let doc = document();
        let mut refs = Vec::new();
        collect_refs(doc, &mut refs);
        assert!(!refs.is_empty());
        for name in refs {
            assert!(
                doc["components"]["schemas"][&name].is_object(),
                "dangling reference to {name}"
            );
        }
    }

    /// Every response type the service sends, one instance each (built by each module's
    /// `samples()` from domain records), validates against the schema the document gives
    /// its name; and every schema that is the body of a response has at least one sample,
    /// so a type that is sent but not described (or described but no longer built) fails.
    fn all_samples() -> Vec<(&'static str, Value)> {
        [
            crate::error::samples(),
            crate::api::organization::samples(),
            crate::api::refund::samples(),
            crate::api::dispute::samples(),
            crate::api::benefit::samples(),
            crate::api::product::samples(),
            crate::api::custom_field::samples(),
            crate::api::discount::samples(),
            crate::api::customer::samples(),
            crate::api::customer_state::samples(),
            crate::api::customer_session::samples(),
            crate::api::customer_portal::samples(),
            crate::api::portal_update::samples(),
            crate::api::payment_method::samples(),
            crate::api::recovery::samples(),
            crate::api::benefit_grant::samples(),
            crate::api::order::samples(),
            crate::api::invoice::samples(),
            crate::api::subscription::samples(),
            crate::app::plan_change::samples(),
            crate::api::license_key_import::samples(),
            crate::api::license_key_import::generate_samples(),
            crate::api::license_signing::samples(),
            crate::api::license_key::samples(),
            crate::api::oauth2::samples(),
            crate::api::health::samples(),
            crate::api::checkout::samples(),
            crate::api::checkout_link::samples(),
            crate::api::webhook::samples(),
            crate::api::organization_access_token::samples(),
            crate::api::files::samples(),
            crate::api::releases::samples(),
            crate::api::customer_portal_downloadables::samples(),
            crate::api::event::samples(),
            crate::api::meter::samples(),
            crate::api::customer_meter::samples(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// In each version (and the default shape), the samples serialized in that version
    /// match its document: every key the schema names is sent, and every key sent is named.
    #[actix_web::test]
    async fn each_version_serves_the_fields_its_document_declares() {
        let mut versions = vec![None];
        versions.extend(ApiVersion::ALL.map(Some));
        for version in versions {
            let doc = document_for(version);
            let samples = crate::api::version::serve(version, async { all_samples() }).await;
            let mut failures = Vec::new();
            for (name, value) in &samples {
                let schema = &doc["components"]["schemas"][*name];
                let (Some(props), Some(sent)) =
                    (schema["properties"].as_object(), value.as_object())
                else {
                    continue;
                };
                // Left out of the document on purpose (see `crate::error::ErrorBody`).
                let undocumented = |k: &str| *name == "Error" && k == "error_description";
                for key in sent
                    .keys()
                    .filter(|k| !props.contains_key(*k) && !undocumented(k))
                {
                    failures.push(format!("{name}.{key}"));
                }
            }
            assert!(
                failures.is_empty(),
                "{version:?}: sent but not in the document: {failures:?}"
            );
            check_samples(doc, &samples);
        }
        let new = document_for(Some(ApiVersion::V2026_10));
        assert_eq!(new["info"]["version"], "2026-10");
        assert!(new["components"]["schemas"]["LicenseKeyRead"]["properties"]["member"].is_object());
        assert!(
            document()["components"]["schemas"]["LicenseKeyRead"]["properties"]["member"].is_null()
        );
    }

    #[test]
    fn one_instance_of_every_response_type_matches_the_document() {
        check_samples(document(), &all_samples());
    }

    fn check_samples(doc: &Value, samples: &[(&'static str, Value)]) {
        let mut failures = Vec::new();
        let mut covered: HashSet<String> = HashSet::new();
        for (name, value) in samples {
            assert!(
                doc["components"]["schemas"][*name].is_object(),
                "a sample names {name}, which the document does not describe"
            );
            covered.insert((*name).to_string());
            let root = json!({
                "$ref": format!("#/components/schemas/{name}"),
                "components": doc["components"],
            });
            let validator = match jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .build(&root)
            {
                Ok(v) => v,
                Err(e) => panic!("the schema of {name} does not compile: {e}"),
            };
            for e in validator.iter_errors(value).take(3) {
                failures.push(format!("{name}: {e} at {}\n  {value}", e.instance_path()));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));

        // Each schema that is the body of some response: a list's (`ListResource_*`) is
        // covered by its item, whose schema utoipa inlines.
        let mut roots = Vec::new();
        if let Some(paths) = doc["paths"].as_object() {
            for item in paths.values() {
                for op in item.as_object().into_iter().flat_map(|o| o.values()) {
                    collect_refs(&op["responses"], &mut roots);
                }
            }
        }
        let missing: BTreeSet<&String> = roots
            .iter()
            .filter(|name| !name.starts_with("ListResource_") && !covered.contains(*name))
            .collect();
        assert!(
            missing.is_empty(),
            "response types without a sample: {missing:?}"
        );
    }
}
