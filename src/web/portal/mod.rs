//! The customer portal's pages at `/portal/{organization_slug}`: a buyer signs in with a
//! code e-mailed to the address it bought with (or lands with the link a seller minted,
//! `POST /v1/customer-sessions/`), then sees its orders (each with a printable receipt),
//! its subscriptions (cancel at the period's end, resume) and its license keys (copy,
//! usage, activations to deactivate, rotate). Server-rendered with the seller's name and
//! avatar (the checkout's look, `checkout_base.html`), phone-ready, one small script
//! (`/portal/assets/portal.js`: the copy and print buttons; every page works without it).
//!
//! - **The session** is a customer session (`crate::app::portal::sign_in`), its
//!   `polar_cst_` token held in an HttpOnly cookie, [`PORTAL_COOKIE`], on `/portal` only,
//!   SameSite=Lax, Secure when the public URL is https, living as long as the session.
//!   A cookie whose session expired or ended, or is of another organization than the
//!   page's, counts as no session: to the sign-in page.
//! - **Every id in a path** goes through `crate::app::portal`, which reaches the signed-in
//!   customer's records only: anything else is a 404 page, and nothing changes.
//! - **Every form** is CSRF-checked first (`crate::web::forms`, the token bound to the
//!   portal's cookie too): a 403 page before anything is read.
//! - **Errors** are pages: 404 for what does not exist or is not the customer's, 429 with
//!   `Retry-After` for the sign-in's rate limits, a form's own problems next to the form.
//!
//! [`ROUTES`] lists the pages (the OpenAPI document can list them from there).

mod account;
mod billing;
mod invoice;
mod keys;
mod payment_methods;
mod plan;
mod receipt;
mod recovery;
mod sign_in;
mod view;

use actix_web::cookie::Cookie;
use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use askama::Template;
use serde::Deserialize;
use std::sync::OnceLock;

use crate::app::portal::sign_in as app_sign_in;
use crate::credentials::session::cookie;
use crate::domain::customer::Customer;
use crate::domain::customer_session::CustomerSession;
use crate::domain::ids::OrganizationId;
use crate::domain::locale::{resolve, Lang};
use crate::domain::organization::Organization;
use crate::error::ApiError;
use crate::i18n::I18n;
use crate::state::AppState;
use crate::web::forms::{csrf_ok, csrf_token};

/// The cookie holding the buyer's `polar_cst_` token.
pub const PORTAL_COOKIE: &str = "tollgate_portal";
/// Where the browser sends it: the portal's pages only.
pub const COOKIE_PATH: &str = "/portal";
/// The pages' one script.
pub const SCRIPT_PATH: &str = "/portal/assets/portal.js";
const SCRIPT: &str = include_str!("../../../templates/portal/portal.js");

/// Every portal route: method, path and what it does.
pub const ROUTES: &[(&str, &str, &str)] = &[
    ("get", "/portal/assets/portal.js", "The portal pages' script (copy and print buttons)."),
    ("get", "/portal/assets/payments.js", "The \"Pay now\" script: Stripe.js authenticates a payment (3-D Secure), then the page checks how it ended."),
    ("get", "/portal/{slug}", "Sign-in: the e-mail form; signed in, to the overview. With `customer_session_token` (a seller's `customer_portal_url`): opens that session and redirects to the overview, or says the link expired (401)."),
    ("get", "/portal/{slug}/code", "To the sign-in page."),
    ("post", "/portal/{slug}/code", "E-mail a sign-in code to the address if it bought from the seller; the same answer either way: the code form (429 past the rate limits)."),
    ("get", "/portal/{slug}/session", "To the sign-in page."),
    ("post", "/portal/{slug}/session", "Sign in with the e-mailed code: the session cookie and to the overview; a wrong, expired or used code shows the code form again (401)."),
    ("post", "/portal/{slug}/sign-out", "Sign out: the session ends, its cookie goes."),
    ("get", "/portal/{slug}/overview", "The buyer's orders, subscriptions and license keys, the seller's support address, \"send me my keys again\"."),
    ("get", "/portal/{slug}/orders/{id}", "An order: product, amounts, tax, refunds, status, the link to its printable receipt, its invoice (download, or the \"Request invoice\" form with the billing details)."),
    ("post", "/portal/{slug}/orders/{id}/invoice", "Request the order's invoice: the billing details posted (`billing_name`, `line1`, `line2`, `postal_code`, `city`, `state`, `country`) are saved on the order, then the invoice is issued; to the order page, or the page with the refusal (409 not paid or issued, 422 details)."),
    ("get", "/portal/{slug}/subscriptions/{id}", "A subscription: status, price, next charge; cancel at the period's end or resume."),
    ("post", "/portal/{slug}/subscriptions/{id}", "Cancel the subscription at the period's end (with a reason and a comment), or resume it."),
    ("post", "/portal/{slug}/subscriptions/{id}/pay", "Pay a past-due subscription's renewal now (`action=pay`, a saved card's `method_id` or, test processor only, a `token`), or ask how a payment the buyer authenticated ended (`action=check`)."),
    ("get", "/portal/{slug}/license-keys/{id}", "A license key: the key (copy), status, usage, validations, expiry, activations."),
    ("post", "/portal/{slug}/license-keys/{id}/rotate", "Give the key a new value; the old one stops working at once."),
    ("post", "/portal/{slug}/license-keys/{id}/activations/{activation_id}/deactivate", "Deactivate one activation of the key, freeing its slot (when the seller lets customers)."),
    ("post", "/portal/{slug}/license-keys/{id}/activations/{activation_id}/move", "Move to a new device: free one activation of a key at its limit, counted as a replacement (when the seller allows replacement); the application activates on the new device when it next starts."),
    ("get", "/portal/{slug}/payment-methods", "The buyer's saved cards (the default marked; the card each subscription is billed with among them): make one the default (it bills the live subscriptions), remove one (its subscriptions move to the default or newest other card; not the last card of a live paid subscription); with the test processor, add one by its token."),
    ("post", "/portal/{slug}/payment-methods", "Add a card (`action=add`, `token`: the test processor's token or the payment method Stripe.js made of the card Element; `set_default`), confirm one the bank asked the buyer to authenticate (`action=confirm`, `setup_intent_id`), make one the default (`action=default`, `method_id`) or remove one (`action=remove`, `method_id`)."),
    ("get", "/portal/{slug}/recover/{token}", "The link of a \"payment failed\" e-mail: once, until access stops, it signs the buyer in and goes to the subscription; used, expired or another organization's: 401 with the sign-in form."),
    ("get", "/portal/{slug}/subscriptions/{id}/plan", "Change a subscription's plan (when the seller lets buyers): the seller's other recurring products, each with what the change charges now and at the renewal, a button each; 404 when the seller does not let buyers."),
    ("post", "/portal/{slug}/subscriptions/{id}/plan", "Move the subscription to another product (`product_id`): to the plan page; 403 when the seller does not let buyers, the refusal on the page (402, 422) otherwise."),
    ("get", "/portal/{slug}/account", "The buyer's billing details (name, address, tax id) and e-mail address, each with its form."),
    ("post", "/portal/{slug}/account", "Save the billing details (`action=details`), send a code to a new e-mail address (`action=email`, `email`) or confirm it with the code (`action=code`, `code`: a new session, the others end)."),
    ("get", "/portal/receipts/{order_id}", "An order's printable receipt, through a signed link that expires (`expires`, `signature`); no session needed."),
];

pub fn configure(cfg: &mut web::ServiceConfig) {
    use crate::resource;
    resource!(cfg, SCRIPT_PATH, { get => script });
    resource!(cfg, account::PAY_SCRIPT_PATH, { get => account::pay_script });
    resource!(cfg, "/portal/{slug}", { get => sign_in::page });
    resource!(cfg, "/portal/{slug}/code", { get => sign_in::to_sign_in, post => sign_in::code });
    resource!(cfg, "/portal/{slug}/session", { get => sign_in::to_sign_in, post => sign_in::session });
    resource!(cfg, "/portal/{slug}/sign-out", { post => sign_in::sign_out });
    resource!(cfg, "/portal/{slug}/overview", { get => account::overview });
    resource!(cfg, "/portal/{slug}/orders/{id}", { get => account::order });
    resource!(cfg, "/portal/{slug}/orders/{id}/invoice", { post => invoice::request });
    resource!(cfg, "/portal/{slug}/subscriptions/{id}", { get => account::subscription, post => account::subscription_change });
    resource!(cfg, "/portal/{slug}/subscriptions/{id}/pay", { post => account::pay });
    resource!(cfg, "/portal/{slug}/license-keys/{id}", { get => keys::key });
    resource!(cfg, "/portal/{slug}/license-keys/{id}/rotate", { post => keys::rotate });
    resource!(cfg, "/portal/{slug}/license-keys/{id}/activations/{activation_id}/deactivate", { post => keys::deactivate });
    resource!(cfg, "/portal/{slug}/license-keys/{id}/activations/{activation_id}/move", { post => keys::move_activation });
    resource!(cfg, "/portal/{slug}/payment-methods", { get => payment_methods::page, post => payment_methods::change });
    resource!(cfg, "/portal/{slug}/recover/{token}", { get => recovery::recover });
    resource!(cfg, "/portal/{slug}/subscriptions/{id}/plan", { get => plan::page, post => plan::change });
    resource!(cfg, "/portal/{slug}/account", { get => billing::page, post => billing::change });
    // Last: an organization whose slug is `receipts` keeps its own pages above.
    resource!(cfg, "/portal/receipts/{order_id}", { get => receipt::receipt });
}

// ---------------------------------------------------------------------------------------
// Responses

/// Scripts from this service only; forms post to it only.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; \
                   img-src https: data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// A portal page: never cached or framed, no referrer beyond this site (`no-referrer`
/// where the URL itself is a secret: it would also make form posts' `Origin` `null`).
fn respond(
    status: u16,
    body: String,
    cookies: Vec<Cookie<'static>>,
    referrer: &'static str,
) -> HttpResponse {
    let mut res = HttpResponse::build(StatusCode::from_u16(status).unwrap_or(StatusCode::OK));
    res.insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::REFERRER_POLICY, referrer))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CONTENT_SECURITY_POLICY, CSP));
    for c in cookies {
        res.cookie(c);
    }
    res.content_type("text/html; charset=utf-8").body(body)
}

fn render<T: Template>(t: &T) -> Result<String, ApiError> {
    t.render().map_err(ApiError::internal)
}

/// The script's URL, versioned by its content so it can be cached for a year.
fn script_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(SCRIPT.as_bytes());
        let v: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        format!("{SCRIPT_PATH}?v={v}")
    })
}

async fn script() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "public, max-age=31536000, immutable"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .content_type("text/javascript; charset=utf-8")
        .body(SCRIPT)
}

/// A 303 to `location` (after a form, or to sign in).
fn see_other(location: &str, cookies: Vec<Cookie<'static>>) -> HttpResponse {
    crate::web::see_other(location, cookies)
}

/// Adds `Retry-After` and the `RateLimit` fields of a denial to a page.
fn with_retry_after(mut res: HttpResponse, denied: &crate::ratelimit::Denied) -> HttpResponse {
    if let Ok(v) = header::HeaderValue::from_str(&denied.retry_after_secs.to_string()) {
        res.headers_mut().insert(header::RETRY_AFTER, v);
    }
    crate::error::add_rate_limit_headers(&mut res, &denied.report);
    res
}

/// "Try again in N minutes" for a denial.
fn retry_text(i18n: &I18n, denied: &crate::ratelimit::Denied) -> String {
    i18n.t1(
        "portal-too-many-attempts",
        "minutes",
        denied.retry_after_secs.div_ceil(60).max(1),
    )
}

/// The language of a portal page: the browser's `Accept-Language` (most wanted first),
/// else the organization's default language, else English.
pub fn page_lang(req: &HttpRequest, org_default: Option<&str>) -> I18n {
    let accept = req
        .headers()
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok());
    I18n::new(resolve(None, accept, org_default))
}

// ---------------------------------------------------------------------------------------
// The session cookie

/// The cookie holding a session's token until the session expires.
fn session_cookie(
    state: &AppState,
    token: String,
    expires_at: chrono::DateTime<chrono::Utc>,
) -> Cookie<'static> {
    let left = (expires_at - state.now()).max(chrono::Duration::zero());
    let mut c = cookie(state, PORTAL_COOKIE, token, Some(left));
    c.set_path(COOKIE_PATH);
    c.set_secure(state.public_url.starts_with("https://"));
    c
}

/// The same cookie, removed.
fn removed_cookie(state: &AppState) -> Cookie<'static> {
    session_cookie(state, String::new(), state.now())
}

/// The live session this browser's cookie holds, whatever its organization.
async fn cookie_session(
    state: &AppState,
    req: &HttpRequest,
) -> Result<Option<(CustomerSession, Customer)>, ApiError> {
    match req.cookie(PORTAL_COOKIE) {
        Some(c) if !c.value().is_empty() => Ok(app_sign_in::session_of(state, c.value())
            .await?
            .filter(|(s, _)| !s.is_limited())),
        _ => Ok(None),
    }
}

/// The live session this browser holds for `org`'s portal; `None` for any other.
async fn session_for(
    state: &AppState,
    req: &HttpRequest,
    org: OrganizationId,
) -> Result<Option<(CustomerSession, Customer)>, ApiError> {
    Ok(cookie_session(state, req)
        .await?
        .filter(|(s, c)| s.organization_id == org && c.organization_id == org))
}

// ---------------------------------------------------------------------------------------
// The seller, the page's frame

/// The seller as the pages show it (the header of `checkout_base.html`).
#[derive(Debug, Clone)]
pub struct Seller {
    pub name: String,
    pub avatar_url: Option<String>,
    pub slug: String,
    /// The support address (the organization's e-mail).
    pub email: Option<String>,
    /// The organization's id (the "send me my keys again" link).
    pub id: String,
    /// Buyers may change their plan (`customer_portal_settings.subscription.update_plan`).
    pub plan_changes: bool,
    /// The language the pages speak to this buyer ([`page_lang`]), with its amounts and
    /// dates: `{{ seller.i18n.t("portal-orders") }}`.
    pub i18n: I18n,
}

impl Seller {
    fn of(org: &Organization, i18n: I18n) -> Seller {
        Seller {
            i18n,
            name: org.name.clone(),
            avatar_url: org.avatar_url.clone().filter(|u| u.starts_with("https://")),
            slug: org.slug.clone(),
            email: org.email.clone().filter(|e| !e.trim().is_empty()),
            id: org.id.to_string(),
            plan_changes: org.customer_portal_settings.update_plan,
        }
    }

    /// An error page's header when the page has no seller.
    fn anonymous() -> Seller {
        Seller::anonymous_in(I18n::new(Lang::En))
    }

    /// [`Seller::anonymous`] in a language.
    fn anonymous_in(i18n: I18n) -> Seller {
        Seller {
            i18n,
            name: i18n.t("portal-title"),
            avatar_url: None,
            slug: String::new(),
            email: None,
            id: String::new(),
            plan_changes: false,
        }
    }

    /// "Signed in as <strong id="signed-in-as">…</strong>", as HTML (the address escaped).
    pub fn signed_in_as(&self, email: &str) -> String {
        self.i18n
            .strong("portal-signed-in-as", "email", email)
            .replacen("<strong>", "<strong id=\"signed-in-as\">", 1)
    }

    /// A link under this seller's portal.
    pub fn at(&self, rest: &str) -> String {
        format!("/portal/{}{rest}", self.slug)
    }

    /// The page that mails the buyer's keys again.
    pub fn resend_url(&self) -> String {
        format!("{}?organization_id={}", crate::web::resend::PATH, self.id)
    }
}

/// What every portal page's frame (`portal/base.html`) shows beside the seller.
pub struct Frame {
    pub csrf: String,
    /// The signed-in buyer's address (the bar with sign-out), `None` before sign-in.
    pub email: Option<String>,
    pub script: &'static str,
}

/// A page of one organization's portal: the organization, and this browser's CSRF token.
pub struct Portal {
    pub state: web::Data<AppState>,
    pub org: Organization,
    pub seller: Seller,
    pub csrf: String,
    csrf_cookie: Option<Cookie<'static>>,
}

/// The CSRF token of a posted form (the form's own fields are read apart).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Csrf {
    csrf_token: String,
}

/// A 404 page: what the portal answers for anything that is not there or not the buyer's.
pub fn not_found() -> ApiError {
    ApiError::not_found()
}

impl Portal {
    /// The portal of the organization with this slug: a visible one, else a 404 page.
    pub async fn of(
        state: &web::Data<AppState>,
        req: &HttpRequest,
        slug: &str,
    ) -> Result<Portal, Fail> {
        let slug = slug.trim().to_ascii_lowercase();
        // No such portal: a 404 page in the browser's language, else English.
        let not_found =
            || Fail::from(not_found()).with_seller(&Seller::anonymous_in(page_lang(req, None)));
        let Some(id) = state
            .store
            .lookup_unique(&Organization::slug_key(&slug))
            .await?
        else {
            return Err(not_found());
        };
        let org = state
            .store
            .get::<Organization>(&id)
            .await?
            .map(|o| o.value)
            .filter(Organization::is_visible)
            .ok_or_else(not_found)?;
        let (csrf, csrf_cookie) = csrf_token(state, req);
        Ok(Portal {
            state: state.clone(),
            seller: Seller::of(&org, page_lang(req, Some(&org.default_locale))),
            org,
            csrf,
            csrf_cookie,
        })
    }

    /// [`Portal::of`] for a posted form: its CSRF token must match first (a 403 page).
    pub async fn posted(
        state: &web::Data<AppState>,
        req: &HttpRequest,
        slug: &str,
        body: &[u8],
    ) -> Result<Portal, Fail> {
        let csrf: Csrf = serde_html_form::from_bytes(body).unwrap_or_default();
        let token = Some(csrf.csrf_token.as_str()).filter(|t| !t.is_empty());
        if !csrf_ok(state, req, token) {
            // The organization is not read yet: the browser's language, else English.
            let seller = Seller::anonymous_in(page_lang(req, None));
            return Err(Failure::Page {
                status: 403,
                title: seller.i18n.t("portal-refused-title"),
                message: seller.i18n.t("portal-refused"),
                seller: Some(seller),
            }
            .into());
        }
        Portal::of(state, req, slug).await
    }

    /// The frame of a page, signed in as `email` or not.
    pub fn frame(&self, email: Option<String>) -> Frame {
        Frame {
            csrf: self.csrf.clone(),
            email,
            script: script_url(),
        }
    }

    /// A rendered page with this browser's CSRF cookie when it had none, and `cookies`.
    pub fn page<T: Template>(
        &self,
        status: u16,
        t: &T,
        cookies: Vec<Cookie<'static>>,
    ) -> Result<HttpResponse, Fail> {
        let mut all: Vec<Cookie<'static>> = self.csrf_cookie.clone().into_iter().collect();
        all.extend(cookies);
        Ok(respond(status, render(t)?, all, "same-origin"))
    }

    /// An answer whose failure shows this seller's header.
    pub fn branded(&self, r: Result<HttpResponse, Fail>) -> Result<HttpResponse, Fail> {
        r.map_err(|f| f.with_seller(&self.seller))
    }
}

/// A signed-in buyer on a page of its organization's portal.
pub struct Signed {
    pub portal: Portal,
    pub session: CustomerSession,
    pub customer: Customer,
}

impl Signed {
    /// The buyer this browser's session stands for on `slug`'s portal, else to sign in.
    pub async fn of(
        state: &web::Data<AppState>,
        req: &HttpRequest,
        slug: &str,
    ) -> Result<Signed, Fail> {
        let portal = Portal::of(state, req, slug).await?;
        Signed::with(portal, req).await
    }

    /// [`Signed::of`] for a posted form: the CSRF check first (403).
    pub async fn posted(
        state: &web::Data<AppState>,
        req: &HttpRequest,
        slug: &str,
        body: &[u8],
    ) -> Result<Signed, Fail> {
        let portal = Portal::posted(state, req, slug, body).await?;
        Signed::with(portal, req).await
    }

    async fn with(portal: Portal, req: &HttpRequest) -> Result<Signed, Fail> {
        match session_for(&portal.state, req, portal.org.id).await {
            Ok(Some((session, customer))) => Ok(Signed {
                portal,
                session,
                customer,
            }),
            Ok(None) => Err(Failure::SignIn(portal.seller.at("")).into()),
            Err(e) => Err(Fail::from(e).with_seller(&portal.seller)),
        }
    }

    pub fn frame(&self) -> Frame {
        self.portal.frame(Some(self.customer.email.clone()))
    }

    pub fn seller(&self) -> Seller {
        self.portal.seller.clone()
    }
}

// ---------------------------------------------------------------------------------------
// Failures: pages

/// Why a page could not be shown: an error (a page with its status), or no session (to
/// the sign-in page). Boxed: handlers return it beside a response.
#[derive(Debug)]
pub struct Fail(Box<Failure>);

#[derive(Debug)]
pub enum Failure {
    Api {
        error: ApiError,
        seller: Option<Seller>,
    },
    Page {
        status: u16,
        title: String,
        message: String,
        seller: Option<Seller>,
    },
    /// To this sign-in page.
    SignIn(String),
}

impl From<Failure> for Fail {
    fn from(f: Failure) -> Self {
        Fail(Box::new(f))
    }
}

impl From<crate::error::AppError> for Fail {
    fn from(e: crate::error::AppError) -> Self {
        ApiError::from(e).into()
    }
}

impl From<ApiError> for Fail {
    fn from(error: ApiError) -> Self {
        Failure::Api {
            error,
            seller: None,
        }
        .into()
    }
}

impl From<tollgate_storage::StorageError> for Fail {
    fn from(e: tollgate_storage::StorageError) -> Self {
        Fail::from(ApiError::from(e))
    }
}

impl Fail {
    /// The failure, shown with `seller`'s header unless it has one.
    pub fn with_seller(mut self, s: &Seller) -> Fail {
        match &mut *self.0 {
            Failure::Api { seller, .. } | Failure::Page { seller, .. } if seller.is_none() => {
                *seller = Some(s.clone());
            }
            _ => {}
        }
        self
    }
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.0 {
            Failure::Api { error, .. } => write!(f, "{error}"),
            Failure::Page { status, title, .. } => write!(f, "{status} {title}"),
            Failure::SignIn(_) => write!(f, "sign-in required"),
        }
    }
}

#[derive(Template)]
#[template(path = "portal/error.html")]
struct ErrorPage<'a> {
    seller: &'a Seller,
    frame: Frame,
    title: &'a str,
    messages: Vec<String>,
}

impl Fail {
    fn status(&self) -> u16 {
        match &*self.0 {
            Failure::Api { error, .. } => {
                if error.is_about_the_path() {
                    404
                } else {
                    error.status_code().as_u16()
                }
            }
            Failure::Page { status, .. } => *status,
            Failure::SignIn(_) => 303,
        }
    }
}

impl ResponseError for Fail {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status();
        let seller = match &*self.0 {
            Failure::Api { seller, .. } | Failure::Page { seller, .. } => seller.clone(),
            Failure::SignIn(_) => None,
        }
        .unwrap_or_else(Seller::anonymous);
        let i18n = seller.i18n;
        let (title, messages) = match &*self.0 {
            Failure::SignIn(to) => return see_other(to, Vec::new()),
            Failure::Api {
                error: e @ ApiError::Page { .. },
                ..
            } => return e.error_response(),
            Failure::Page { title, message, .. } => (title.clone(), vec![message.clone()]),
            Failure::Api { error, .. } => {
                let (title, messages) = match status {
                    404 => (
                        i18n.t("portal-not-found-title"),
                        vec![i18n.t("portal-not-found")],
                    ),
                    500.. => {
                        // What `ApiError` logs when it answers itself.
                        match error {
                            ApiError::Internal(cause) => {
                                tracing::error!(%cause, "internal error")
                            }
                            other => tracing::warn!(error = %other, "portal page failed"),
                        }
                        (i18n.t("portal-failed-title"), vec![i18n.t("portal-failed")])
                    }
                    403 => (i18n.t("portal-refused-title"), error.messages()),
                    429 => (i18n.t("portal-too-many-title"), error.messages()),
                    _ => (i18n.t("portal-error-title"), error.messages()),
                };
                (title, messages)
            }
        };
        let page = ErrorPage {
            seller: &seller,
            frame: Frame {
                csrf: String::new(),
                email: None,
                script: script_url(),
            },
            title: &title,
            messages,
        };
        let body = page.render().unwrap_or_else(|_| title.clone());
        let mut res = respond(status, body, Vec::new(), "same-origin");
        if let Failure::Api {
            error: ApiError::RateLimited(denied),
            ..
        } = &*self.0
        {
            res = with_retry_after(res, denied);
        }
        res
    }
}

pub type PageResult = Result<HttpResponse, Fail>;

/// `response` with a policy that lets Stripe.js, its frames and its calls in, for a page
/// that takes or authenticates a card with Stripe; as it was with any other processor.
pub(super) fn with_stripe_sources(state: &AppState, response: HttpResponse) -> HttpResponse {
    let mut response = response;
    if let crate::payments::ProcessorClient::Stripe { sources, .. } = state.processor.client() {
        let join = |v: &[String]| v.iter().map(|s| format!(" {s}")).collect::<String>();
        let csp = format!(
            "default-src 'none'; script-src 'self'{}; connect-src 'self'{}; frame-src 'self'{}; \
             style-src 'unsafe-inline'; img-src https: data:; base-uri 'none'; \
             form-action 'self'; frame-ancestors 'none'",
            join(&sources.script),
            join(&sources.connect),
            join(&sources.frame),
        );
        if let Ok(v) = header::HeaderValue::from_str(&csp) {
            response
                .headers_mut()
                .insert(header::CONTENT_SECURITY_POLICY, v);
        }
    }
    response
}
