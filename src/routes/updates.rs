//! The update feeds (Tollgate's extension, `crate::app::releases::feed`), read with a
//! license key in `Authorization: Bearer <key>` or `License <key>` (or `?key=` for
//! updaters that cannot send headers):
//!
//! * `GET /v1/updates/{product_id}/{channel}/{file}.yml`: electron-updater's generic
//!   provider (`latest.yml`, `latest-mac.yml`, `latest-linux.yml`, `beta-linux-arm64.yml`…);
//! * `GET /v1/updates/{product_id}/{channel}/appcast.xml`: Sparkle's appcast;
//! * `GET /v1/updates/{product_id}/{channel}/tauri/{target}/{arch}/{current_version}`:
//!   Tauri's dynamic endpoint (204 when there is nothing newer);
//! * `GET /v1/updates/{product_id}/{channel}/tauri/latest.json`: Tauri's static JSON
//!   (`platforms` keyed `{os}-{arch}` and `{os}-{arch}-{bundle}`; 204 when empty);
//! * `GET /v1/updates/download/{release_id}/{name}`: a file, by the signed link a feed
//!   gave (or with the key).
//!
//! A customer portal session (`Authorization: Bearer polar_cst_…`, `customer_portal:read`)
//! reads them too, through the license keys of the product its customer holds
//! (`crate::app::releases::feed::Credential::Customer`); an expired or ended session is 401.
//!
//! Every answer is `Cache-Control: private, no-store`: a feed is per key.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};

use crate::app::releases::feed::{self, Credential, DownloadAuth, Holder};
use crate::auth::tokens::CUSTOMER_SESSION_PREFIX;
use crate::domain::ids::{CheckoutId, CustomerId, LicenseKeyId, ProductId, ReleaseId};
use crate::domain::release::Channel;
use crate::error::{ApiError, ApiResult, BearerError, FieldError};
use crate::extract::auth::{authorize, CustomerSessionRead, Subject};
use crate::extract::path_id;
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    // Before the feeds' `{product_id}/{channel}/{file}`, which would take `download`.
    crate::resource!(cfg, "/v1/updates/download/{release_id}/{name}", { get => download });
    crate::resource!(cfg, "/v1/updates/{product_id}/{channel}/tauri/latest.json", { get => tauri_static });
    crate::resource!(cfg, "/v1/updates/{product_id}/{channel}/tauri/{target}/{arch}/{current_version}", { get => tauri });
    crate::resource!(cfg, "/v1/updates/{product_id}/{channel}/{file}", { get => channel_file });
}

/// The query's value of `name` (the last one).
fn query_value(req: &HttpRequest, name: &str) -> Option<String> {
    form_urlencoded::parse(req.query_string().as_bytes())
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .last()
}

/// The license key the updater sent: `Authorization: Bearer <key>` or `License <key>`,
/// else `?key=`.
fn license_key(req: &HttpRequest) -> Option<String> {
    let from_header = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, key) = v.trim().split_once(' ')?;
            let known =
                scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("license");
            known.then(|| key.trim().to_string())
        });
    from_header.or_else(|| query_value(req, "key"))
}

/// The request's credential: a customer portal session in `Authorization: Bearer
/// polar_cst_…` (resolved here: 401 when it matches no live session, the portal's scope
/// required), else the license key ([`license_key`]).
async fn credential(req: &HttpRequest, state: &AppState) -> Result<Credential, ApiError> {
    let session =
        crate::credentials::bearer_token(req).filter(|t| t.starts_with(CUSTOMER_SESSION_PREFIX));
    let Some(token) = session else {
        return Ok(Credential::Key(license_key(req)));
    };
    let principal = crate::credentials::resolve(state, &token)
        .await?
        .ok_or(ApiError::Bearer(BearerError::InvalidToken))?;
    state.limits.api_token(&token)?;
    authorize::<CustomerSessionRead>(&principal)?;
    match principal.subject {
        Subject::Customer(customer) => Ok(Credential::Customer(customer, None)),
        Subject::Purchase(customer, checkout) => Ok(Credential::Customer(customer, Some(checkout))),
        _ => Err(ApiError::Bearer(BearerError::InvalidToken)),
    }
}

fn path_error(name: &str, msg: &str, given: &str) -> ApiError {
    ApiError::validation(FieldError::new(
        "value_error",
        vec!["path".into(), name.into()],
        msg,
        given.into(),
    ))
}

fn channel_of(raw: &str) -> Result<Channel, ApiError> {
    Channel::parse_feed(raw).ok_or_else(|| {
        path_error(
            "channel",
            "Input should be 'stable' (or 'latest'), 'beta' or 'alpha'",
            raw,
        )
    })
}

fn private(mut resp: actix_web::HttpResponseBuilder) -> actix_web::HttpResponseBuilder {
    resp.insert_header((header::CACHE_CONTROL, "private, no-store"));
    resp
}

/// `{file}.yml` (electron-updater) or `appcast.xml` (Sparkle).
pub(crate) async fn channel_file(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
) -> ApiResult<HttpResponse> {
    let (product, channel, file) = path.into_inner();
    let product: ProductId = path_id("product_id", &product)?;
    let channel = channel_of(&channel)?;
    let credential = credential(&req, &state).await?;
    if file == "appcast.xml" {
        let reader = feed::reader(&state, product, &credential).await?;
        let xml = feed::sparkle(&state, &reader, channel).await?;
        return Ok(private(HttpResponse::Ok())
            .content_type("application/rss+xml; charset=utf-8")
            .body(xml));
    }
    let Some((channel, platforms, bundles)) = feed::electron_file(channel, &file) else {
        return Err(ApiError::not_found());
    };
    let reader = feed::reader(&state, product, &credential).await?;
    let yaml = feed::electron(&state, &reader, channel, platforms, bundles).await?;
    Ok(private(HttpResponse::Ok())
        .content_type("text/yaml; charset=utf-8")
        .body(yaml))
}

/// Tauri's dynamic endpoint: 200 with the update, or 204.
pub(crate) async fn tauri(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<(String, String, String, String, String)>,
) -> ApiResult<HttpResponse> {
    let (product, channel, target, arch, current) = path.into_inner();
    let product: ProductId = path_id("product_id", &product)?;
    let channel = channel_of(&channel)?;
    let current = semver::Version::parse(current.trim_start_matches('v'))
        .map_err(|_| path_error("current_version", "Not a semantic version.", &current))?;
    let platform = format!("{target}-{arch}");
    let credential = credential(&req, &state).await?;
    let reader = feed::reader(&state, product, &credential).await?;
    match feed::tauri(&state, &reader, channel, &platform, &current).await? {
        Some(update) => Ok(private(HttpResponse::Ok()).json(update)),
        None => Ok(private(HttpResponse::NoContent()).finish()),
    }
}

/// Tauri's static `latest.json`: 200 with the newest release's files per platform, or 204.
pub(crate) async fn tauri_static(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (product, channel) = path.into_inner();
    let product: ProductId = path_id("product_id", &product)?;
    let channel = channel_of(&channel)?;
    let credential = credential(&req, &state).await?;
    let reader = feed::reader(&state, product, &credential).await?;
    match feed::tauri_static(&state, &reader, channel).await? {
        Some(latest) => Ok(private(HttpResponse::Ok()).json(latest)),
        None => Ok(private(HttpResponse::NoContent()).finish()),
    }
}

/// A file of a release: by a feed's signed link (`key_id` or `customer_id` and
/// `checkout_id`, `expires`, `signature`), or with the license key or a portal session.
pub(crate) async fn download(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (release, name) = path.into_inner();
    let release: ReleaseId = path_id("release_id", &release)?;
    let auth = match query_value(&req, "signature") {
        Some(signature) => {
            let holder = match query_value(&req, "customer_id") {
                Some(customer) => {
                    let customer: CustomerId = path_id("customer_id", &customer)?;
                    let checkout = match query_value(&req, "checkout_id") {
                        Some(c) => Some(path_id::<CheckoutId>("checkout_id", &c)?),
                        None => None,
                    };
                    Holder::Customer(customer, checkout)
                }
                None => {
                    let key_id = query_value(&req, "key_id").unwrap_or_default();
                    Holder::Key(path_id::<LicenseKeyId>("key_id", &key_id)?)
                }
            };
            let raw = query_value(&req, "expires").unwrap_or_default();
            let expires = raw.parse::<i64>().map_err(|_| {
                ApiError::validation(FieldError::new(
                    "int_parsing",
                    vec!["query".into(), "expires".into()],
                    "Input should be a valid integer",
                    raw.clone().into(),
                ))
            })?;
            DownloadAuth::Signed {
                holder,
                expires,
                signature,
            }
        }
        None => DownloadAuth::Direct(credential(&req, &state).await?),
    };
    let (delivery, file) = feed::download(&state, release, &name, auth).await?;
    Ok(crate::routes::files::download_response(delivery, &file))
}
