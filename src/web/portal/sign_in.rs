//! Signing in to the portal: the e-mail form, the code form, the session, signing out,
//! and the landing of a seller's `customer_portal_url`.
//!
//! - `POST /portal/{slug}/code`: the same answer whether or not the address bought from
//!   the seller (the code form, the address kept in a hidden field); 429 with
//!   `Retry-After` past the per-client and per-address limits (the API's own limits).
//! - `POST /portal/{slug}/session`: a code that is wrong, expired, used already, worn out
//!   by wrong tries, or sent to another address or organization shows the code form again
//!   with **401**; a missing address or code is **422**; too many tries from the client
//!   **429**. A good one sets the session cookie and goes (303) to the overview.
//! - `GET /portal/{slug}?customer_session_token=…`: a live session of this organization
//!   sets the cookie and redirects to the overview, so the token leaves the address bar;
//!   any other token shows the sign-in page with **401**.

use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use super::{
    cookie_session, removed_cookie, retry_text, see_other, session_cookie, session_for,
    with_retry_after, Frame, PageResult, Portal, Seller,
};
use crate::app::portal::sign_in::{self as app, Expected};
use crate::state::AppState;

#[derive(Template)]
#[template(path = "portal/sign_in.html")]
struct SignInPage {
    seller: Seller,
    frame: Frame,
    /// `email` (ask for a code) or `code` (type it).
    step: &'static str,
    email: String,
    error: Option<String>,
    notice: Option<String>,
}

impl SignInPage {
    fn new(p: &Portal, step: &'static str, email: &str) -> SignInPage {
        SignInPage {
            seller: p.seller.clone(),
            frame: p.frame(None),
            step,
            email: email.to_string(),
            error: None,
            notice: None,
        }
    }

    fn with_error(mut self, e: impl Into<String>) -> SignInPage {
        self.error = Some(e.into());
        self
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Landing {
    customer_session_token: String,
    email: String,
    signed_out: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct CodeForm {
    email: String,
    code: String,
}

/// `GET /portal/{slug}`.
pub async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    slug: web::Path<String>,
) -> PageResult {
    let p = Portal::of(&state, &req, &slug).await?;
    let r: PageResult = async {
        let q: Landing = serde_html_form::from_str(req.query_string()).unwrap_or_default();
        let overview = p.seller.at("/overview");
        if !q.customer_session_token.is_empty() {
            return match app::session_of(&state, &q.customer_session_token).await? {
                // A session limited to one purchase (a checkout's, for an address it did
                // not prove) never opens the portal's pages.
                Some((s, c))
                    if s.organization_id == p.org.id
                        && c.organization_id == p.org.id
                        && !s.is_limited() =>
                {
                    let c = session_cookie(&state, q.customer_session_token, s.expires_at);
                    Ok(see_other(&overview, vec![c]))
                }
                _ => {
                    let page = SignInPage::new(&p, "email", q.email.trim())
                        .with_error(p.seller.i18n.t("portal-link-expired"));
                    p.page(401, &page, Vec::new())
                }
            };
        }
        if session_for(&state, &req, p.org.id).await?.is_some() {
            return Ok(see_other(&overview, Vec::new()));
        }
        let mut page = SignInPage::new(&p, "email", "");
        if !q.signed_out.is_empty() {
            page.notice = Some(p.seller.i18n.t("portal-signed-out"));
        }
        p.page(200, &page, Vec::new())
    }
    .await;
    p.branded(r)
}

/// `GET` of the forms' targets (a reload, a bookmark): to the sign-in page.
pub async fn to_sign_in(slug: web::Path<String>) -> HttpResponse {
    let slug: String = form_urlencoded::byte_serialize(slug.as_bytes()).collect();
    see_other(&format!("/portal/{slug}"), Vec::new())
}

/// Whether `email` reads as an address (the API's own check).
fn is_email(email: &str) -> bool {
    let mut v = crate::validate::Validator::new();
    v.email(crate::loc!["body", "email"], email)
}

/// `POST /portal/{slug}/code`: mail a code, show the code form.
pub async fn code(
    state: web::Data<AppState>,
    req: HttpRequest,
    slug: web::Path<String>,
    body: web::Bytes,
) -> PageResult {
    let p = Portal::posted(&state, &req, &slug, &body).await?;
    let r: PageResult = async {
        let f: CodeForm = serde_html_form::from_bytes(&body).unwrap_or_default();
        let email = f.email.trim();
        if !is_email(email) {
            let page = SignInPage::new(&p, "email", email)
                .with_error(p.seller.i18n.t("portal-enter-email"));
            return p.page(422, &page, Vec::new());
        }
        let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
        if let Err(denied) = state.limits.portal_code(ip, &p.org.id.uuid(), email) {
            let page =
                SignInPage::new(&p, "email", email).with_error(retry_text(&p.seller.i18n, &denied));
            return Ok(with_retry_after(p.page(429, &page, Vec::new())?, &denied));
        }
        app::request_code(&state, p.org.id, email, ip).await?;
        let mut page = SignInPage::new(&p, "code", email);
        page.notice = Some(p.seller.i18n.ta(
            "portal-code-sent",
            &[
                ("email", &email),
                ("seller", &p.seller.name),
                (
                    "minutes",
                    &crate::domain::customer_session::CustomerSessionCode::TTL.num_minutes(),
                ),
            ],
        ));
        p.page(200, &page, Vec::new())
    }
    .await;
    p.branded(r)
}

/// `POST /portal/{slug}/session`: sign in with the code.
pub async fn session(
    state: web::Data<AppState>,
    req: HttpRequest,
    slug: web::Path<String>,
    body: web::Bytes,
) -> PageResult {
    let p = Portal::posted(&state, &req, &slug, &body).await?;
    let r: PageResult = async {
        let f: CodeForm = serde_html_form::from_bytes(&body).unwrap_or_default();
        let email = f.email.trim();
        if !is_email(email) {
            let page = SignInPage::new(&p, "email", email)
                .with_error(p.seller.i18n.t("portal-enter-email"));
            return p.page(422, &page, Vec::new());
        }
        if f.code.trim().is_empty() {
            let page =
                SignInPage::new(&p, "code", email).with_error(p.seller.i18n.t("portal-enter-code"));
            return p.page(422, &page, Vec::new());
        }
        let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
        if let Err(denied) = state.limits.portal_sign_in(ip) {
            let page =
                SignInPage::new(&p, "code", email).with_error(retry_text(&p.seller.i18n, &denied));
            return Ok(with_retry_after(p.page(429, &page, Vec::new())?, &denied));
        }
        let expected = Expected {
            organization_id: p.org.id,
            email,
            client: ip,
        };
        match app::authenticate(&state, &f.code, Some(expected)).await {
            Ok(opened) => {
                let c = session_cookie(&state, opened.token, opened.session.expires_at);
                Ok(see_other(&p.seller.at("/overview"), vec![c]))
            }
            Err(e) if e.code() == crate::error::Code::CustomerSessionCodeInvalidOrExpired => {
                let page = SignInPage::new(&p, "code", email)
                    .with_error(p.seller.i18n.t("portal-wrong-code"));
                p.page(401, &page, Vec::new())
            }
            Err(e) => Err(e.into()),
        }
    }
    .await;
    p.branded(r)
}

/// `POST /portal/{slug}/sign-out`: the session this browser holds ends, its cookie goes.
pub async fn sign_out(
    state: web::Data<AppState>,
    req: HttpRequest,
    slug: web::Path<String>,
    body: web::Bytes,
) -> PageResult {
    let p = Portal::posted(&state, &req, &slug, &body).await?;
    let r: PageResult = async {
        if let Some((session, _)) = cookie_session(&state, &req).await? {
            app::end_session(&state, &session).await?;
        }
        Ok(see_other(
            &p.seller.at("?signed_out=1"),
            vec![removed_cookie(&state)],
        ))
    }
    .await;
    p.branded(r)
}
