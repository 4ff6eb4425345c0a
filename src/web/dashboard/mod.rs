//! The seller's dashboard at `/dashboard`: server-rendered pages (askama, no script, no
//! external asset) behind the browser session of the sign-in pages.
//!
//! One code path with the API: every page calls the same use cases (`crate::app`) with the
//! signed-in user as the subject, so tenancy, rules and errors are the API's; forms are
//! typed (`forms`), turned into the use cases' commands with the API's rules, so a 422 lists
//! the same problems (shown next to the form, with what was typed kept). Templates receive typed
//! records and views: a renamed field is a compile error. A page shows an API error as the
//! API classifies it: a 404 is a 404 page (another organization's data is absent, not
//! forbidden).
//!
//! Forms are CSRF-protected (`crate::web::forms`); a POST without the right token, or from
//! another site, is refused with 403 before anything is read.

mod benefits;
mod chart;
mod custom_fields;
mod customers;
mod discounts;
pub mod files;
pub mod fmt;
pub mod forms;
mod keys;
mod meters;
mod meters_form;
mod orders;
mod overview;
mod products;
mod releases;
mod signing;
mod tax;
mod tax_reports;
mod webhooks;

use std::fmt as stdfmt;

use actix_web::cookie::Cookie;
use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use askama::Template;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::api::Pagination;
use crate::app::catalog::organizations::{self, OrgSort, OrganizationFilter};
use crate::auth::Subject;
use crate::credentials::session;
use crate::domain::ids::{OrganizationId, UserId};
use crate::domain::organization::Organization;
use crate::error::{ApiError, AppError, Code};
use crate::extract::{path_id, ListParams, Sorting};
use crate::state::AppState;
use crate::web::forms::{csrf_ok, csrf_token};

pub use chart::Series;

/// Every dashboard route: method, path and what it does (the OpenAPI document lists them
/// from here, and a test holds it equal to what is registered).
pub const ROUTES: &[(&str, &str, &str)] = &[
    ("get", "/dashboard", "The dashboard: to the first organization, or to create one; without a session, to sign in."),
    ("get", "/dashboard/organizations/new", "Form: create an organization."),
    ("post", "/dashboard/organizations/new", "Create an organization."),
    ("get", "/dashboard/{org}", "Overview: revenue, orders, active subscriptions and license validations per day (SVG charts)."),
    ("get", "/dashboard/{org}/settings", "Form: the organization's settings."),
    ("post", "/dashboard/{org}/settings", "Save the organization's settings."),
    ("get", "/dashboard/{org}/tax", "Form: the organization's tax settings (country, tax number, registrations, provider, price behaviour, invoices)."),
    ("post", "/dashboard/{org}/tax", "Save the organization's tax settings."),
    ("get", "/dashboard/{org}/tax/reports", "Tax reports of a quarter: the EU One-Stop-Shop return and every tax line, with their CSV files."),
    ("get", "/dashboard/{org}/tax/reports/oss.csv", "The EU One-Stop-Shop return of a quarter as CSV (`year`, `quarter`)."),
    ("get", "/dashboard/{org}/tax/reports/tax.csv", "Every tax line of a period as CSV (`start`, `end`: dates)."),
    ("get", "/dashboard/{org}/products", "Products (archived filter, pages)."),
    ("get", "/dashboard/{org}/products/new", "Form: create a product with its prices."),
    ("post", "/dashboard/{org}/products/new", "Create a product."),
    ("get", "/dashboard/{org}/products/{id}", "A product: edit, prices, benefits, checkout link."),
    ("post", "/dashboard/{org}/products/{id}", "Save a product (name, description, prices, archived)."),
    ("post", "/dashboard/{org}/products/{id}/benefits", "Set the benefits a product grants."),
    ("get", "/dashboard/{org}/benefits", "Benefits, and the form to create a license-key benefit."),
    ("post", "/dashboard/{org}/benefits", "Create a license-key benefit."),
    ("get", "/dashboard/{org}/benefits/{id}", "Form: edit a benefit."),
    ("post", "/dashboard/{org}/benefits/{id}", "Save a benefit (a license-key benefit's prefix, expiry and limits)."),
    ("get", "/dashboard/{org}/files", "Files: the organization's downloadable files (version, size, downloads), uploaded in the browser through `/v1/files`."),
    ("post", "/dashboard/{org}/files/{id}", "Rename a file (name, version)."),
    ("post", "/dashboard/{org}/files/{id}/delete", "Delete a file."),
    ("get", "/dashboard/assets/files.js", "The Files page's upload script (the API's multipart upload, `Blob.slice`)."),
    ("get", "/dashboard/{org}/orders", "Orders (filters, sorting, pages)."),
    ("get", "/dashboard/{org}/orders/{id}", "An order, with the e-mails sent about it and each delivery attempt."),
    ("post", "/dashboard/{org}/orders/{id}/receipt", "Send the order's receipt to the customer again."),
    ("post", "/dashboard/{org}/orders/{id}/refunds", "Refund the order, in full or in part, revoking its benefits or not."),
    ("post", "/dashboard/{org}/orders/{id}/invoice", "Generate the order's invoice (a paid order with billing details)."),
    ("post", "/dashboard/{org}/orders/{id}/billing", "Change the order's billing details, until its invoice is issued."),
    ("get", "/dashboard/{org}/subscriptions", "Subscriptions (filters, sorting, pages)."),
    ("get", "/dashboard/{org}/subscriptions/{id}", "A subscription."),
    ("post", "/dashboard/{org}/subscriptions/{id}", "Cancel at period end, resume, or revoke a subscription."),
    ("get", "/dashboard/{org}/customers", "Customers, searched by e-mail or name."),
    ("get", "/dashboard/{org}/customers/{id}", "A customer: orders, subscriptions, license keys, the customer-portal address."),
    ("post", "/dashboard/{org}/customers/{id}/portal-link", "Open a customer-portal sign-in link for the customer (valid an hour, shown once)."),
    ("get", "/dashboard/{org}/meters", "Meters (usage billing): name, aggregation, filter in words, archived or not, this month's total."),
    ("get", "/dashboard/{org}/meters/new", "Form: create a meter (filter clauses, aggregation, unit)."),
    ("post", "/dashboard/{org}/meters/new", "Create a meter."),
    ("get", "/dashboard/{org}/meters/{id}", "A meter: its quantities over a range as an SVG bar chart and their total, for every customer or one (`range`, `customer_id`)."),
    ("get", "/dashboard/{org}/meters/{id}/edit", "Form: edit a meter (filter and aggregation read-only once it aggregates)."),
    ("post", "/dashboard/{org}/meters/{id}/edit", "Save a meter, or add or remove a filter clause row."),
    ("post", "/dashboard/{org}/meters/{id}/archive", "Archive or unarchive a meter (refused while a price or benefit uses it)."),
    ("get", "/dashboard/{org}/license-keys", "License keys, found by key or by customer; the signing keys of answers and license files (JWKS URL, each public key), made on first view."),
    ("post", "/dashboard/{org}/license-keys/signing", "Sign every license-key answer, or only those an app asks for with Accept-Signature."),
    ("post", "/dashboard/{org}/license-keys/signing/rotate", "Rotate the signing key: a new key signs from now on; the old public keys stay published."),
    ("get", "/dashboard/{org}/license-keys/{id}", "A license key: status, usage, activations, validations."),
    ("post", "/dashboard/{org}/license-keys/{id}", "Change a key's status, expiry, usage or limits."),
    ("post", "/dashboard/{org}/license-keys/{id}/activations/{activation_id}/deactivate", "Deactivate one activation of a key."),
    ("get", "/dashboard/{org}/discounts", "Discounts."),
    ("get", "/dashboard/{org}/discounts/new", "Form: create a discount."),
    ("post", "/dashboard/{org}/discounts/new", "Create a discount."),
    ("get", "/dashboard/{org}/discounts/{id}", "Form: edit a discount."),
    ("post", "/dashboard/{org}/discounts/{id}", "Save a discount."),
    ("get", "/dashboard/{org}/custom-fields", "Custom fields."),
    ("get", "/dashboard/{org}/custom-fields/new", "Form: create a custom field."),
    ("post", "/dashboard/{org}/custom-fields/new", "Create a custom field."),
    ("get", "/dashboard/{org}/custom-fields/{id}", "Form: edit a custom field."),
    ("post", "/dashboard/{org}/custom-fields/{id}", "Save a custom field."),
    ("get", "/dashboard/{org}/releases", "Releases of the organization's products, a form for a new draft (product, version, channel, notes, a file per platform), and the update-signing public keys."),
    ("post", "/dashboard/{org}/releases", "Create a draft release."),
    ("post", "/dashboard/{org}/releases/{id}/publish", "Publish a draft release: every file signed."),
    ("post", "/dashboard/{org}/releases/{id}/yank", "Yank a published release: out of every update feed."),
    ("get", "/dashboard/{org}/webhooks", "Webhook endpoints."),
    ("get", "/dashboard/{org}/webhooks/new", "Form: create a webhook endpoint."),
    ("post", "/dashboard/{org}/webhooks/new", "Create a webhook endpoint; the page shows its signing secret, this once."),
    ("get", "/dashboard/{org}/webhooks/{id}", "A webhook endpoint: edit, enable or disable, its deliveries with their attempts and answers."),
    ("post", "/dashboard/{org}/webhooks/{id}", "Save a webhook endpoint (URL, name, format, events, enabled)."),
    ("post", "/dashboard/{org}/webhooks/{id}/enabled", "Enable or disable a webhook endpoint."),
    ("post", "/dashboard/{org}/webhooks/{id}/secret", "Rotate a webhook endpoint's signing secret; the page shows the new one, this once."),
    ("get", "/dashboard/{org}/webhooks/{id}/delete", "Form: confirm deleting a webhook endpoint."),
    ("post", "/dashboard/{org}/webhooks/{id}/delete", "Delete a webhook endpoint."),
    ("post", "/dashboard/{org}/webhooks/{id}/events/{event_id}/redeliver", "Send an event to its endpoint again."),
    ("get", "/buy/{product_id}", "Checkout link: creates a checkout for the product (optionally `?price_id=`) and redirects to its hosted page. Public, limited per client address."),
];

pub fn configure(cfg: &mut web::ServiceConfig) {
    use crate::resource;
    resource!(cfg, "/dashboard", { get => overview::home });
    resource!(cfg, "/dashboard/organizations/new", { get => overview::org_new, post => overview::org_create });
    resource!(cfg, "/dashboard/{org}", { get => overview::overview });
    resource!(cfg, "/dashboard/{org}/settings", { get => overview::settings, post => overview::settings_save });
    resource!(cfg, "/dashboard/{org}/tax", { get => tax::tax, post => tax::tax_save });
    resource!(cfg, "/dashboard/{org}/tax/reports", { get => tax_reports::reports });
    resource!(cfg, "/dashboard/{org}/tax/reports/oss.csv", { get => tax_reports::oss_csv });
    resource!(cfg, "/dashboard/{org}/tax/reports/tax.csv", { get => tax_reports::tax_csv });
    resource!(cfg, "/dashboard/{org}/products", { get => products::products });
    resource!(cfg, "/dashboard/{org}/products/new", { get => products::product_new, post => products::product_create });
    resource!(cfg, "/dashboard/{org}/products/{id}", { get => products::product, post => products::product_save });
    resource!(cfg, "/dashboard/{org}/products/{id}/benefits", { post => products::product_benefits });
    resource!(cfg, "/dashboard/{org}/benefits", { get => benefits::benefits, post => benefits::benefit_create });
    resource!(cfg, "/dashboard/{org}/benefits/{id}", { get => benefits::benefit, post => benefits::benefit_save });
    resource!(cfg, "/dashboard/assets/files.js", { get => files::script });
    resource!(cfg, "/dashboard/{org}/files", { get => files::files_page });
    resource!(cfg, "/dashboard/{org}/files/{id}", { post => files::file_save });
    resource!(cfg, "/dashboard/{org}/files/{id}/delete", { post => files::file_delete });
    resource!(cfg, "/dashboard/{org}/orders", { get => orders::orders });
    resource!(cfg, "/dashboard/{org}/orders/{id}", { get => orders::order });
    resource!(cfg, "/dashboard/{org}/orders/{id}/receipt", { post => orders::send_receipt });
    resource!(cfg, "/dashboard/{org}/orders/{id}/refunds", { post => orders::refund });
    resource!(cfg, "/dashboard/{org}/orders/{id}/invoice", { post => orders::generate_invoice });
    resource!(cfg, "/dashboard/{org}/orders/{id}/billing", { post => orders::update_billing });
    resource!(cfg, "/dashboard/{org}/subscriptions", { get => orders::subscriptions });
    resource!(cfg, "/dashboard/{org}/subscriptions/{id}", { get => orders::subscription, post => orders::subscription_action });
    resource!(cfg, "/dashboard/{org}/customers", { get => customers::customers });
    resource!(cfg, "/dashboard/{org}/customers/{id}", { get => customers::customer });
    resource!(cfg, "/dashboard/{org}/customers/{id}/portal-link", { post => customers::portal_link });
    resource!(cfg, "/dashboard/{org}/meters", { get => meters::meters_page });
    resource!(cfg, "/dashboard/{org}/meters/new", { get => meters::meter_new, post => meters::meter_create });
    resource!(cfg, "/dashboard/{org}/meters/{id}", { get => meters::meter });
    resource!(cfg, "/dashboard/{org}/meters/{id}/edit", { get => meters::meter_edit, post => meters::meter_save });
    resource!(cfg, "/dashboard/{org}/meters/{id}/archive", { post => meters::meter_archive });
    resource!(cfg, "/dashboard/{org}/license-keys", { get => keys::license_keys });
    // Before `{id}`, which would take `signing` for a key's id.
    resource!(cfg, "/dashboard/{org}/license-keys/signing", { post => signing::every_answer });
    resource!(cfg, "/dashboard/{org}/license-keys/signing/rotate", { post => signing::rotate });
    resource!(cfg, "/dashboard/{org}/license-keys/{id}", { get => keys::license_key, post => keys::license_key_save });
    resource!(cfg, "/dashboard/{org}/license-keys/{id}/activations/{activation_id}/deactivate", { post => keys::deactivate });
    resource!(cfg, "/dashboard/{org}/discounts", { get => discounts::discounts });
    resource!(cfg, "/dashboard/{org}/discounts/new", { get => discounts::discount_new, post => discounts::discount_create });
    resource!(cfg, "/dashboard/{org}/discounts/{id}", { get => discounts::discount, post => discounts::discount_save });
    resource!(cfg, "/dashboard/{org}/custom-fields", { get => custom_fields::custom_fields });
    resource!(cfg, "/dashboard/{org}/custom-fields/new", { get => custom_fields::field_new, post => custom_fields::field_create });
    resource!(cfg, "/dashboard/{org}/custom-fields/{id}", { get => custom_fields::field, post => custom_fields::field_save });
    resource!(cfg, "/dashboard/{org}/releases", { get => releases::releases_page, post => releases::release_create });
    resource!(cfg, "/dashboard/{org}/releases/{id}/publish", { post => releases::release_publish });
    resource!(cfg, "/dashboard/{org}/releases/{id}/yank", { post => releases::release_yank });
    resource!(cfg, "/dashboard/{org}/webhooks", { get => webhooks::webhooks });
    resource!(cfg, "/dashboard/{org}/webhooks/new", { get => webhooks::webhook_new, post => webhooks::webhook_create });
    resource!(cfg, "/dashboard/{org}/webhooks/{id}", { get => webhooks::webhook, post => webhooks::webhook_save });
    resource!(cfg, "/dashboard/{org}/webhooks/{id}/enabled", { post => webhooks::webhook_enabled });
    resource!(cfg, "/dashboard/{org}/webhooks/{id}/secret", { post => webhooks::webhook_rotate_secret });
    resource!(cfg, "/dashboard/{org}/webhooks/{id}/delete", { get => webhooks::webhook_delete_confirm, post => webhooks::webhook_delete });
    resource!(cfg, "/dashboard/{org}/webhooks/{id}/events/{event_id}/redeliver", { post => webhooks::redeliver });
    resource!(cfg, "/buy/{product_id}", { get => products::buy });
}

// ---------------------------------------------------------------------------------------
// Failures: an HTML page with the API's status
// ---------------------------------------------------------------------------------------

/// Why a page could not be shown: an API error (its status, as an HTML page), or no
/// session (to sign in, then back).
#[derive(Debug)]
pub enum Fail {
    Api(ApiError),
    SignIn(String),
}

impl From<ApiError> for Fail {
    /// A malformed id in a page's path is a page that does not exist: 404, not the API's
    /// 422 about the path.
    fn from(e: ApiError) -> Self {
        if e.is_about_the_path() {
            Fail::Api(ApiError::not_found())
        } else {
            Fail::Api(e)
        }
    }
}

impl From<crate::error::AppError> for Fail {
    fn from(e: crate::error::AppError) -> Self {
        ApiError::from(e).into()
    }
}

impl From<tollgate_storage::StorageError> for Fail {
    fn from(e: tollgate_storage::StorageError) -> Self {
        Fail::Api(e.into())
    }
}

impl stdfmt::Display for Fail {
    fn fmt(&self, f: &mut stdfmt::Formatter<'_>) -> stdfmt::Result {
        match self {
            Fail::Api(e) => write!(f, "{e}"),
            Fail::SignIn(_) => write!(f, "sign-in required"),
        }
    }
}

impl ResponseError for Fail {
    fn status_code(&self) -> StatusCode {
        match self {
            Fail::Api(e) => e.status_code(),
            Fail::SignIn(_) => StatusCode::SEE_OTHER,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Fail::SignIn(next) => {
                let next: String = form_urlencoded::byte_serialize(next.as_bytes()).collect();
                see_other(&format!("/oauth2/login?next={next}"))
            }
            Fail::Api(e @ ApiError::Page { .. }) => e.error_response(),
            // A server-side failure is logged by the API's own path; the page says little.
            Fail::Api(e) => {
                let status = e.status_code();
                let title = status.canonical_reason().unwrap_or("Error");
                let page = ErrorPage {
                    title,
                    messages: e.messages(),
                };
                let body = page.render().unwrap_or_else(|_| title.to_string());
                let mut res = crate::web::html(status.as_u16(), body, Vec::new());
                if let ApiError::RateLimited(denied) = e {
                    if let Ok(v) =
                        header::HeaderValue::from_str(&denied.retry_after_secs.to_string())
                    {
                        res.headers_mut().insert(header::RETRY_AFTER, v);
                    }
                    crate::error::add_rate_limit_headers(&mut res, &denied.report);
                }
                res
            }
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/error.html")]
struct ErrorPage<'a> {
    title: &'a str,
    messages: Vec<String>,
}

pub type PageResult = Result<HttpResponse, Fail>;

/// The problems a form shows next to itself (status and lines), or the failure when the
/// error is not about the form's input.
pub fn form_problem(e: ApiError) -> Result<(u16, Vec<String>), Fail> {
    let e = e.uncoded();
    match &e {
        ApiError::Validation(_)
        | ApiError::Conflict(_)
        | ApiError::NotPermitted(_)
        | ApiError::BadRequest(_)
        | ApiError::RefundedAlready(_)
        | ApiError::RevokeSubscriptionBenefitsProhibited(_)
        | ApiError::PaymentError(_) => Ok((e.status_code().as_u16(), e.messages())),
        _ => Err(Fail::Api(e)),
    }
}

/// [`form_problem`] of a use case's refusal, decided by its code: invalid fields and the
/// refusals a person can act on are shown with the form; anything else is the page's
/// failure.
pub fn form_refusal(e: AppError) -> Result<(u16, Vec<String>), Fail> {
    match e.code() {
        code @ (Code::Invalid
        | Code::AlreadyExists
        | Code::NotPermitted
        | Code::BadRequest
        | Code::RefundedAlready
        | Code::RevokeSubscriptionBenefitsProhibited
        | Code::PaymentError) => Ok((code.status(), e.messages())),
        _ => Err(Fail::from(e)),
    }
}

pub fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location.to_string()))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

/// A posted form as the typed struct `T` (a field that does not read is a 422 page).
pub fn posted<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Fail> {
    serde_html_form::from_bytes(bytes).map_err(|e| {
        Fail::Api(ApiError::BadRequest(format!(
            "The form could not be read: {e}"
        )))
    })
}

/// A record of a page's organization, else 404: a record of another organization of the
/// same member is reached under its own pages only.
pub fn of_org<T>(layout: &Layout, org: OrganizationId, record: T) -> Result<T, Fail> {
    if org == layout.org {
        Ok(record)
    } else {
        Err(Fail::Api(ApiError::not_found()))
    }
}

// ---------------------------------------------------------------------------------------
// The signed-in seller
// ---------------------------------------------------------------------------------------

/// The CSRF token of a posted form (the form's own fields are read apart).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Csrf {
    csrf_token: String,
}

/// The signed-in user of a dashboard request.
pub struct Dash {
    pub state: web::Data<AppState>,
    pub user: UserId,
    pub csrf: String,
    cookie: Option<Cookie<'static>>,
    path: String,
}

impl Dash {
    /// The session's user, or [`Fail::SignIn`] back to this page.
    pub async fn of(state: &web::Data<AppState>, req: &HttpRequest) -> Result<Dash, Fail> {
        let path = match req.query_string() {
            "" => req.path().to_string(),
            q => format!("{}?{q}", req.path()),
        };
        let Some(session) = session::current(state, req).await? else {
            return Err(Fail::SignIn(
                if req.method() == actix_web::http::Method::GET {
                    path
                } else {
                    "/dashboard".into()
                },
            ));
        };
        let user = session.value.user_id;
        let (csrf, cookie) = csrf_token(state, req);
        Ok(Dash {
            state: state.clone(),
            user,
            csrf,
            cookie,
            path,
        })
    }

    /// The session's user for a form post: the CSRF token must match first (403).
    pub async fn posted(
        state: &web::Data<AppState>,
        req: &HttpRequest,
        bytes: &[u8],
    ) -> Result<Dash, Fail> {
        let csrf: Csrf = serde_html_form::from_bytes(bytes).unwrap_or_default();
        let token = Some(csrf.csrf_token.as_str()).filter(|t| !t.is_empty());
        if !csrf_ok(state, req, token) {
            return Err(Fail::Api(crate::web::error_page(
                403,
                "Request refused",
                "CSRF check failed; reload the page and try again.",
            )));
        }
        Dash::of(state, req).await
    }

    /// Whom the pages act as: the signed-in user (the API's rules for a user apply: the
    /// organizations it is a member of).
    pub fn subject(&self) -> Subject {
        Subject::User(self.user)
    }

    /// An HTML page (with the CSRF cookie when this browser had none).
    pub fn page<T: Template>(&self, status: u16, t: &T) -> PageResult {
        let body = t.render().map_err(ApiError::internal)?;
        Ok(crate::web::html(
            status,
            body,
            self.cookie.clone().into_iter().collect(),
        ))
    }

    /// The layout of a page of organization `org` (its id as the path gives it): the user's
    /// organizations for the switcher, and the organization itself, which must be one of
    /// them (else 404).
    pub async fn layout(
        &self,
        org: &str,
        active: &'static str,
        title: impl Into<String>,
    ) -> Result<Layout, Fail> {
        Ok(self.org_layout(org, active, title).await?.0)
    }

    /// [`Self::layout`], and the organization itself (for the pages that show it).
    pub async fn org_layout(
        &self,
        org: &str,
        active: &'static str,
        title: impl Into<String>,
    ) -> Result<(Layout, Organization), Fail> {
        let id: OrganizationId = path_id("org", org)?;
        let current = organizations::get(&self.state, self.subject(), id).await?;
        let mut layout = self.bare_layout(active, title).await?;
        layout.org = current.id;
        layout.org_id = current.id.to_string();
        layout.org_name = current.name.clone();
        Ok((layout, current))
    }

    /// The layout of a page outside any organization.
    pub async fn bare_layout(
        &self,
        active: &'static str,
        title: impl Into<String>,
    ) -> Result<Layout, Fail> {
        let orgs = self.organizations().await?;
        let user_email = self
            .state
            .store
            .get::<crate::domain::user::User>(&self.user.key())
            .await?
            .map(|u| u.value.email)
            .unwrap_or_default();
        Ok(Layout {
            title: title.into(),
            csrf: self.csrf.clone(),
            user_email,
            org: OrganizationId(uuid::Uuid::nil()),
            org_id: String::new(),
            org_name: String::new(),
            orgs: orgs
                .iter()
                .map(|o| (o.id.to_string(), o.name.clone()))
                .collect(),
            active,
            path: self.path.clone(),
        })
    }

    /// The user's organizations (the first hundred, by creation).
    pub async fn organizations(&self) -> Result<Vec<Organization>, Fail> {
        let filter = OrganizationFilter {
            slug: None,
            sorting: Sorting::by(OrgSort::CreatedAt, false),
        };
        let params = ListParams {
            page: 1,
            limit: 100,
        };
        Ok(
            organizations::list(&self.state, self.subject(), &filter, params)
                .await?
                .0,
        )
    }
}

/// The frame every dashboard page shares.
pub struct Layout {
    pub title: String,
    pub csrf: String,
    pub user_email: String,
    /// The organization of the page (nil outside any).
    pub org: OrganizationId,
    /// Its id as links carry it ("" outside any organization).
    pub org_id: String,
    pub org_name: String,
    /// (id, name) of the user's organizations.
    pub orgs: Vec<(String, String)>,
    /// The navigation entry of this page.
    pub active: &'static str,
    /// This page's path and query (where a sign-in returns to).
    pub path: String,
}

/// The sections of an organization: (navigation key, label, path under the organization).
const SECTIONS: &[(&str, &str, &str)] = &[
    ("overview", "Overview", ""),
    ("products", "Products", "/products"),
    ("benefits", "Benefits", "/benefits"),
    ("files", "Files", "/files"),
    ("orders", "Orders", "/orders"),
    ("subscriptions", "Subscriptions", "/subscriptions"),
    ("customers", "Customers", "/customers"),
    ("meters", "Meters", "/meters"),
    ("license-keys", "License keys", "/license-keys"),
    ("releases", "Releases", "/releases"),
    ("discounts", "Discounts", "/discounts"),
    ("custom-fields", "Custom fields", "/custom-fields"),
    ("webhooks", "Webhooks", "/webhooks"),
    ("tax", "Tax", "/tax"),
    ("settings", "Settings", "/settings"),
];

impl Layout {
    /// The navigation: (label, link, whether it is this page's section).
    pub fn nav(&self) -> Vec<(&'static str, String, bool)> {
        SECTIONS
            .iter()
            .map(|(key, label, rest)| (*label, self.at(rest), *key == self.active))
            .collect()
    }

    /// A link inside the current organization.
    pub fn at(&self, rest: &str) -> String {
        format!("/dashboard/{}{rest}", self.org_id)
    }
}

// ---------------------------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------------------------

/// Items on a list page.
pub const PAGE_SIZE: u64 = 20;
/// Items a form offers to choose from (products, benefits).
pub const CHOICES: u64 = 100;

/// A list page's query: its filters (each page reads the ones it has), its sort and page.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ListQuery {
    pub page: String,
    pub query: String,
    pub archived: String,
    pub product_id: String,
    pub customer_id: String,
    pub active: String,
    pub sorting: String,
    pub saved: String,
    pub org: String,
}

impl ListQuery {
    pub fn of(req: &HttpRequest) -> ListQuery {
        serde_html_form::from_str(req.query_string()).unwrap_or_default()
    }

    /// The page asked for (1 when absent or not a positive number) with [`PAGE_SIZE`].
    pub fn params(&self) -> ListParams {
        ListParams {
            page: self
                .page
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|p| *p > 0)
                .unwrap_or(1),
            limit: PAGE_SIZE,
        }
    }

    /// The trimmed search, `None` when blank.
    pub fn search(&self) -> Option<String> {
        Some(self.query.trim().to_string()).filter(|q| !q.is_empty())
    }

    /// Whether `?saved=1` (a form saved, then redirected here).
    pub fn saved(&self) -> bool {
        !self.saved.is_empty() && self.saved != "false"
    }
}

/// The first `CHOICES` items of a list.
pub fn choices() -> ListParams {
    ListParams {
        page: 1,
        limit: CHOICES,
    }
}

/// Previous/next links of a list page.
pub struct Pager {
    pub page: u64,
    pub max_page: u64,
    pub total: u64,
    pub prev: Option<String>,
    pub next: Option<String>,
}

impl Pager {
    /// For a list at `base` of `total` items, showing `params`, whose query is `req`'s (its
    /// `page` replaced in the links).
    pub fn new(total: u64, params: ListParams, base: &str, req: &HttpRequest) -> Pager {
        let max_page = Pagination::new(total, params.limit).max_page;
        let pairs: Vec<(String, String)> = form_urlencoded::parse(req.query_string().as_bytes())
            .into_owned()
            .filter(|(k, v)| k != "page" && !v.is_empty())
            .collect();
        let link = |p: u64| {
            let q: String = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(pairs.iter())
                .append_pair("page", &p.to_string())
                .finish();
            format!("{base}?{q}")
        };
        Pager {
            page: params.page,
            max_page,
            total,
            prev: (params.page > 1).then(|| link(params.page - 1)),
            next: (params.page < max_page).then(|| link(params.page + 1)),
        }
    }
}
