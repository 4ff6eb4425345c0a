//! The customer portal's downloads (Polar's `customer_portal.downloadables`):
//!
//! * `GET /v1/customer-portal/downloadables/` (a customer or member portal session,
//!   `customer_portal:read|write`; `benefit_id`, `page`, `limit`): the files the customer's
//!   grants give now, each with a signed link that expires (`files.download_link_ttl_secs`);
//! * `GET /v1/customer-portal/downloadables/{token}` (no authentication: the token is the
//!   credential): malformed 400, forged 404, expired 410, no longer granted 404; rate-limited
//!   per client address and per customer (`[files] download_limit_*`); counted; then the
//!   bytes (302 to the object store, or streamed).
//!
//! `crate::app::downloadables` does the work.

use actix_web::{web, HttpRequest, HttpResponse};

use crate::api::customer_portal_downloadables::DownloadableRead;
use crate::api::{ListResource, Pagination};
use crate::app::downloadables;
use crate::domain::ids::BenefitId;
use crate::error::ApiResult;
use crate::extract::auth::CustomerPortalRead;
use crate::extract::{Auth, ListParams, QueryParams, Subject};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/customer-portal/downloadables/", { get => list });
    crate::resource!(cfg, "/v1/customer-portal/downloadables/{token}", { get => download });
}

pub(crate) async fn list(
    auth: Auth<CustomerPortalRead>,
    state: web::Data<AppState>,
    query: crate::extract::RawQuery,
) -> ApiResult<web::Json<ListResource<DownloadableRead>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    // Single-valued in Polar: the last one wins.
    let benefit: Option<BenefitId> = q.ids("benefit_id").pop();
    q.finish()?;
    let (id, scope) = match auth.subject() {
        Subject::Customer(id) => (id, None),
        Subject::Purchase(id, checkout) => (
            id,
            Some(crate::app::portal::purchase::PurchaseScope::of(checkout)),
        ),
        // A user (a member of the organization) is no customer: nothing to download.
        _ => {
            return Ok(web::Json(ListResource {
                items: Vec::new(),
                pagination: Pagination::new(0, params.limit),
            }))
        }
    };
    let Some(customer) = crate::app::portal::sign_in::customer_of(&state, id).await? else {
        return Err(crate::error::ApiError::Bearer(
            crate::error::BearerError::InvalidToken,
        ));
    };
    let all = downloadables::of_customer(&state, &customer, scope, benefit).await?;
    let (page, total) = downloadables::page(all, params);
    let items = page
        .iter()
        .map(|d| {
            let (url, expires_at) = downloadables::link(&state, d);
            DownloadableRead::new(d.id, d.grant.benefit_id.uuid(), &d.file, url, expires_at)
        })
        .collect();
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(crate) async fn download(
    state: web::Data<AppState>,
    req: HttpRequest,
    token: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let claim = downloadables::check_token(&state, &token)?;
    let d = downloadables::resolve(&state, claim).await?;
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    let report = state.limits.download(ip, &d.grant.customer_id)?;
    downloadables::count(&state, &d).await?;
    let delivery = crate::app::files::delivery(&state, &d.file).await?;
    let mut res = super::files::download_response(delivery, &d.file);
    crate::error::add_rate_limit_headers(&mut res, &report);
    Ok(res)
}
