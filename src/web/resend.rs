//! "Send me my license keys again": a small public page for a buyer who lost the receipt
//! (linked from the confirmation page and from every receipt). The form posts the address
//! here; the answer is the same page whether or not the address holds keys, so it tells
//! nobody who bought what. Rate-limited per client and per address, as
//! `POST /v1/customer-portal/license-keys/resend` is (both call `crate::app::mail`).

use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use crate::api::license_key::LicenseKeyResendForm;
use crate::domain::ids::OrganizationId;
use crate::domain::organization::Organization;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::web::{error_page, html, render};

pub const PATH: &str = "/license-keys/resend";

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, PATH, { get => form, post => send });
}

struct Seller {
    name: String,
    avatar_url: Option<String>,
}

#[derive(Template)]
#[template(path = "resend.html")]
struct ResendPage {
    seller: Seller,
    organization_id: String,
    email: String,
    error: Option<String>,
    sent: bool,
}

#[derive(Deserialize)]
struct Query {
    organization_id: Option<String>,
}

fn not_found() -> ApiError {
    error_page(
        404,
        "Page not found",
        "This link does not lead to a shop. Use the link in your receipt, or on the seller's site.",
    )
}

/// The organization a page is for: a visible one, or a 404 page.
async fn seller(state: &AppState, id: &str) -> ApiResult<(OrganizationId, Seller)> {
    let Ok(uuid) = uuid::Uuid::parse_str(id.trim()) else {
        return Err(not_found());
    };
    let org = state
        .store
        .get::<Organization>(&OrganizationId(uuid).key())
        .await?
        .map(|o| o.value)
        .filter(Organization::is_visible)
        .ok_or_else(not_found)?;
    Ok((
        org.id,
        Seller {
            name: org.name,
            avatar_url: org.avatar_url.filter(|u| u.starts_with("https://")),
        },
    ))
}

async fn form(state: web::Data<AppState>, q: web::Query<Query>) -> ApiResult<HttpResponse> {
    let id = q.organization_id.clone().unwrap_or_default();
    let (org, seller) = seller(&state, &id).await?;
    let page = ResendPage {
        seller,
        organization_id: org.to_string(),
        email: String::new(),
        error: None,
        sent: false,
    };
    Ok(html(200, render(&page)?, Vec::new()))
}

async fn send(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    // Whatever was posted: an unreadable form is a form without an organization (404) or
    // an address (422), never an error of another kind.
    let f: LicenseKeyResendForm = serde_html_form::from_bytes(&body).unwrap_or_default();
    let (org, seller) = seller(&state, &f.organization_id).await?;
    let email = f.email.trim().to_string();
    let mut page = ResendPage {
        seller,
        organization_id: org.to_string(),
        email: email.clone(),
        error: None,
        sent: false,
    };
    let mut v = crate::validate::Validator::new();
    if !v.email(crate::loc!["body", "email"], &email) {
        page.error = Some("Enter the e-mail address you bought with.".into());
        return Ok(html(422, render(&page)?, Vec::new()));
    }
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    if let Err(denied) = state.limits.key_resend(ip, &org.uuid(), &email) {
        page.error = Some(format!(
            "Too many requests: try again in {} minutes.",
            denied.retry_after_secs.div_ceil(60)
        ));
        let mut res = html(429, render(&page)?, Vec::new());
        if let Ok(v) =
            actix_web::http::header::HeaderValue::from_str(&denied.retry_after_secs.to_string())
        {
            res.headers_mut()
                .insert(actix_web::http::header::RETRY_AFTER, v);
        }
        return Ok(res);
    }
    crate::app::portal::sign_in::resend_keys(&state, org, &email).await?;
    page.sent = true;
    Ok(html(200, render(&page)?, Vec::new()))
}
