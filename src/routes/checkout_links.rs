//! `/v1/checkout-links/`: a seller's checkout links (Polar's `checkout_link/endpoints.py`)
//! through `crate::app::checkout::links`, and the link itself:
//! `GET /v1/checkout-links/{client_secret}/redirect` (no authentication) opens a fresh
//! checkout and sends the buyer to its hosted page (307, as Polar's `RedirectResponse`).
//! Followed from a seller's page by `@polar-sh/checkout` (`?embed=true&embed_origin=…`),
//! the page's origin must be one of the organization's `embed_hosts` (else 403
//! `EmbedHostNotAllowed`); the checkout page then keeps `embed=true` and `theme`.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};

use crate::api::checkout_link::{CheckoutLinkCreate, CheckoutLinkUpdate, CheckoutLinkView};
use crate::api::{Created, ListResource, Pagination};
use crate::app::checkout::links::{
    self, link_view, prefill_from_query, CheckoutLinkFilter, CheckoutLinkSort,
};
use crate::domain::checkout_link::CheckoutLinkId;
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{CheckoutLinksRead, CheckoutLinksWrite};
use crate::extract::{path_id, Auth, ListParams, QueryParams, Sorting, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/checkout-links/", { get => list, post => create });
    crate::resource!(cfg, "/v1/checkout-links/{client_secret}/redirect", { get => redirect });
    crate::resource!(cfg, "/v1/checkout-links/{id}", {
        get => get, patch => update, delete => delete
    });
}

async fn list(
    auth: Auth<CheckoutLinksRead>,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<web::Json<ListResource<CheckoutLinkView>>> {
    let mut q = QueryParams::parse(req.query_string());
    let params = ListParams::from_query(&mut q);
    let filter = CheckoutLinkFilter {
        organization_id: q.ids("organization_id"),
        product_id: q.ids("product_id"),
        sorting: Sorting::<CheckoutLinkSort>::from_query(
            &mut q,
            (CheckoutLinkSort::CreatedAt, false),
        ),
    };
    q.finish()?;
    let (items, total) = links::list(&state, auth.subject(), &filter, params).await?;
    let mut views = Vec::with_capacity(items.len());
    for link in &items {
        views.push(link_view(&state, link).await?);
    }
    Ok(web::Json(ListResource {
        items: views,
        pagination: Pagination::new(total, params.limit),
    }))
}

async fn create(
    auth: Auth<CheckoutLinksWrite>,
    state: web::Data<AppState>,
    body: ValidJson<CheckoutLinkCreate>,
) -> ApiResult<Created<CheckoutLinkView>> {
    let command = body.into_inner().into_command()?;
    let link = links::create(&state, auth.subject(), command).await?;
    Ok(Created(link_view(&state, &link).await?))
}

async fn get(
    auth: Auth<CheckoutLinksRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CheckoutLinkView>> {
    let id: CheckoutLinkId = path_id("id", &id)?;
    let link = links::read_link(&state, auth.subject(), id).await?;
    Ok(web::Json(link_view(&state, &link).await?))
}

async fn update(
    auth: Auth<CheckoutLinksWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<CheckoutLinkUpdate>,
) -> ApiResult<web::Json<CheckoutLinkView>> {
    let id: CheckoutLinkId = path_id("id", &id)?;
    // Not found is told before the body's errors.
    let change = match body.into_inner().into_command() {
        Ok(change) => change,
        Err(e) => {
            links::link_for(&state, auth.subject(), id).await?;
            return Err(e);
        }
    };
    let link = links::update(&state, auth.subject(), id, change).await?;
    Ok(web::Json(link_view(&state, &link).await?))
}

async fn delete(
    auth: Auth<CheckoutLinksWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: CheckoutLinkId = path_id("id", &id)?;
    links::delete(&state, auth.subject(), id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Follows a link: limited per client address like the dashboard's links (`/buy/…`),
/// each opening a checkout.
async fn redirect(
    state: web::Data<AppState>,
    req: HttpRequest,
    secret: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    state
        .limits
        .checkout_link(ip)
        .map_err(|d| ApiError::RateLimited(Box::new(d)))?;
    let prefill = prefill_from_query(req.query_string());
    let checkout = links::follow(&state, &secret, prefill, ip).await?;
    let url = format!(
        "{}/checkout/{}{}",
        state.public_url,
        checkout.client_secret,
        forwarded_query(req.query_string())
    );
    Ok(HttpResponse::TemporaryRedirect()
        .insert_header((header::LOCATION, url))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish())
}

/// What the link's query passes on to the checkout page (Polar's redirect): every
/// parameter but `embed_origin` (kept by the checkout itself) and those the checkout was
/// prefilled with, so `embed=true` and `theme` reach the page; `?…` or nothing.
fn forwarded_query(query: &str) -> String {
    const CONSUMED: &[&str] = &[
        "embed_origin",
        "product_id",
        "amount",
        "customer_email",
        "customer_name",
        "discount_code",
        "locale",
    ];
    let mut out = form_urlencoded::Serializer::new(String::new());
    let mut any = false;
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        if !CONSUMED.contains(&key.as_ref()) {
            out.append_pair(&key, &value);
            any = true;
        }
    }
    if any {
        format!("?{}", out.finish())
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::forwarded_query;

    #[test]
    fn the_checkout_page_keeps_what_the_checkout_did_not_take() {
        assert_eq!(forwarded_query(""), "");
        assert_eq!(
            forwarded_query("embed=true&embed_origin=https%3A%2F%2Fshop.example&theme=dark"),
            "?embed=true&theme=dark"
        );
        assert_eq!(
            forwarded_query("customer_email=a%40b.example&discount_code=X&product_id=1"),
            ""
        );
        assert_eq!(
            forwarded_query("utm_source=news&x=a+b%26c"),
            "?utm_source=news&x=a+b%26c"
        );
    }
}
