//! The seller's dashboard at `/dashboard`: server-rendered pages (askama, no script, no
//! external asset) behind the browser session of the sign-in pages.
//!
//! One code path with the API: every page calls the `/v1` handlers themselves
//! ([`Dash::auth`] applies the endpoint's own rule to the session's principal, forms become
//! the endpoint's JSON body and go through the same deserialization, [`ValidJson::from_value`]),
//! so validation, errors and tenancy are the API's. A page shows an API error as the API
//! classifies it: a 422 redisplays the form with each problem, a 404 is a 404 page (another
//! organization's data is absent, not forbidden).
//!
//! Forms are CSRF-protected by the double-submit cookie of the sign-in pages
//! (`crate::oauth2::forms`); a POST without the matching token is refused with 403 before
//! anything is read.

mod catalog;
mod chart;
mod overview;
mod sales;

use std::fmt;

use actix_web::cookie::Cookie;
use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use askama::Template;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tollgate_actors::domain::money::Money;

use crate::api::ListResource;
use crate::auth::{Scope, Subject};
use crate::credentials::session;
use crate::domain::ids::UserId;
use crate::error::{ApiError, BearerError};
use crate::extract::auth::{AuthMethod, OrganizationsRead, Principal, Requirement};
use crate::extract::{Auth, RawQuery, ValidJson};
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
    ("get", "/dashboard/{org}/orders", "Orders (filters, sorting, pages)."),
    ("get", "/dashboard/{org}/orders/{id}", "An order."),
    ("get", "/dashboard/{org}/subscriptions", "Subscriptions (filters, sorting, pages)."),
    ("get", "/dashboard/{org}/subscriptions/{id}", "A subscription."),
    ("post", "/dashboard/{org}/subscriptions/{id}", "Cancel at period end, resume, or revoke a subscription."),
    ("get", "/dashboard/{org}/customers", "Customers, searched by e-mail or name."),
    ("get", "/dashboard/{org}/customers/{id}", "A customer: orders, subscriptions, license keys."),
    ("get", "/dashboard/{org}/license-keys", "License keys, found by key or by customer."),
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
    ("get", "/buy/{product_id}", "Checkout link: creates a checkout for the product (optionally `?price_id=`) and redirects to its hosted page. Public, limited per client address."),
];

pub fn configure(cfg: &mut web::ServiceConfig) {
    use crate::resource;
    resource!(cfg, "/dashboard", { get => overview::home });
    resource!(cfg, "/dashboard/organizations/new", { get => overview::org_new, post => overview::org_create });
    resource!(cfg, "/dashboard/{org}", { get => overview::overview });
    resource!(cfg, "/dashboard/{org}/settings", { get => overview::settings, post => overview::settings_save });
    resource!(cfg, "/dashboard/{org}/products", { get => catalog::products });
    resource!(cfg, "/dashboard/{org}/products/new", { get => catalog::product_new, post => catalog::product_create });
    resource!(cfg, "/dashboard/{org}/products/{id}", { get => catalog::product, post => catalog::product_save });
    resource!(cfg, "/dashboard/{org}/products/{id}/benefits", { post => catalog::product_benefits });
    resource!(cfg, "/dashboard/{org}/benefits", { get => catalog::benefits, post => catalog::benefit_create });
    resource!(cfg, "/dashboard/{org}/benefits/{id}", { get => catalog::benefit, post => catalog::benefit_save });
    resource!(cfg, "/dashboard/{org}/orders", { get => sales::orders });
    resource!(cfg, "/dashboard/{org}/orders/{id}", { get => sales::order });
    resource!(cfg, "/dashboard/{org}/subscriptions", { get => sales::subscriptions });
    resource!(cfg, "/dashboard/{org}/subscriptions/{id}", { get => sales::subscription, post => sales::subscription_action });
    resource!(cfg, "/dashboard/{org}/customers", { get => sales::customers });
    resource!(cfg, "/dashboard/{org}/customers/{id}", { get => sales::customer });
    resource!(cfg, "/dashboard/{org}/license-keys", { get => sales::license_keys });
    resource!(cfg, "/dashboard/{org}/license-keys/{id}", { get => sales::license_key, post => sales::license_key_save });
    resource!(cfg, "/dashboard/{org}/license-keys/{id}/activations/{activation_id}/deactivate", { post => sales::deactivate });
    resource!(cfg, "/dashboard/{org}/discounts", { get => catalog::discounts });
    resource!(cfg, "/dashboard/{org}/discounts/new", { get => catalog::discount_new, post => catalog::discount_create });
    resource!(cfg, "/dashboard/{org}/discounts/{id}", { get => catalog::discount, post => catalog::discount_save });
    resource!(cfg, "/dashboard/{org}/custom-fields", { get => catalog::custom_fields });
    resource!(cfg, "/dashboard/{org}/custom-fields/new", { get => catalog::field_new, post => catalog::field_create });
    resource!(cfg, "/dashboard/{org}/custom-fields/{id}", { get => catalog::field, post => catalog::field_save });
    resource!(cfg, "/buy/{product_id}", { get => catalog::buy });
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
        match &e {
            ApiError::Validation(errors)
                if !errors.is_empty()
                    && errors
                        .iter()
                        .all(|f| f.loc.first().and_then(Value::as_str) == Some("path")) =>
            {
                Fail::Api(ApiError::not_found())
            }
            _ => Fail::Api(e),
        }
    }
}

impl From<tollgate_storage::StorageError> for Fail {
    fn from(e: tollgate_storage::StorageError) -> Self {
        Fail::Api(e.into())
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
                    messages: describe(e),
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

/// What an API error says, one line per problem (a 422 names each field).
pub fn describe(e: &ApiError) -> Vec<String> {
    match e {
        ApiError::Validation(errors) => errors
            .iter()
            .map(|f| {
                let path: Vec<String> = f
                    .loc
                    .iter()
                    .skip(1)
                    .map(|l| match l {
                        Value::String(s) => s.replace('_', " "),
                        other => other.to_string(),
                    })
                    .collect();
                if path.is_empty() {
                    f.msg.clone()
                } else {
                    format!("{}: {}", path.join(" › "), f.msg)
                }
            })
            .collect(),
        ApiError::NotPermitted(m)
        | ApiError::NotFound(m)
        | ApiError::Conflict(m)
        | ApiError::BadRequest(m)
        | ApiError::PaymentError(m) => vec![m.clone()],
        ApiError::Bearer(BearerError::InsufficientScope { .. }) => {
            vec!["Your session may not do this.".into()]
        }
        ApiError::Unavailable | ApiError::StorageUnavailable(_) => {
            vec!["The service is busy; try again in a moment.".into()]
        }
        ApiError::RateLimited(_) | ApiError::TooManyRequests { .. } => {
            vec!["Too many requests; wait a little and try again.".into()]
        }
        other => vec![other
            .status_code()
            .canonical_reason()
            .unwrap_or("Error")
            .to_string()],
    }
}

/// The problems a form shows next to itself (status and lines), or the failure when the
/// error is not about the form's input.
pub fn form_problem(e: ApiError) -> Result<(u16, Vec<String>), Fail> {
    match &e {
        ApiError::Validation(_)
        | ApiError::Conflict(_)
        | ApiError::NotPermitted(_)
        | ApiError::BadRequest(_)
        | ApiError::PaymentError(_) => Ok((e.status_code().as_u16(), describe(&e))),
        _ => Err(Fail::Api(e)),
    }
}

pub fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location.to_string()))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

// ---------------------------------------------------------------------------------------
// The signed-in seller, and calls to the API on their behalf
// ---------------------------------------------------------------------------------------

/// The signed-in user of a dashboard request.
pub struct Dash {
    pub state: web::Data<AppState>,
    principal: Principal,
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
            principal: Principal {
                subject: Subject::User(user),
                scopes: [Scope::WebDefault].into_iter().collect(),
                method: AuthMethod::WebSession,
            },
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
        form: &Form,
    ) -> Result<Dash, Fail> {
        if !csrf_ok(state, req, form.opt("csrf_token")) {
            return Err(Fail::Api(crate::web::error_page(
                403,
                "Request refused",
                "CSRF check failed; reload the page and try again.",
            )));
        }
        Dash::of(state, req).await
    }

    /// The API endpoint's rule `R`, applied to this user's session.
    pub fn auth<R: Requirement>(&self) -> Result<Auth<R>, ApiError> {
        Auth::on_behalf(self.principal)
    }

    pub fn data(&self) -> web::Data<AppState> {
        self.state.clone()
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
    /// them (else the API's 404).
    pub async fn layout(
        &self,
        org: &str,
        active: &'static str,
        title: impl Into<String>,
    ) -> Result<Layout, Fail> {
        Ok(self.org_layout(org, active, title).await?.0)
    }

    /// [`Self::layout`], and the organization as the API renders it (for the pages that
    /// show it: one read, not two).
    pub async fn org_layout(
        &self,
        org: &str,
        active: &'static str,
        title: impl Into<String>,
    ) -> Result<(Layout, Row), Fail> {
        let current = crate::routes::organizations::get(
            self.auth::<OrganizationsRead>()?,
            self.data(),
            web::Path::from(org.to_string()),
        )
        .await?
        .into_inner();
        let mut layout = self.bare_layout(active, title).await?;
        layout.org_id = current.id.to_string();
        layout.org_name = current.name.clone();
        layout.org_slug = current.slug.clone();
        Ok((layout, Row::of(&current)))
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
            org_id: String::new(),
            org_name: String::new(),
            org_slug: String::new(),
            orgs: orgs
                .items
                .iter()
                .map(|o| (o.id.to_string(), o.name.clone()))
                .collect(),
            active,
            path: self.path.clone(),
        })
    }

    /// The user's organizations (the API's list: the first hundred, by creation).
    pub async fn organizations(
        &self,
    ) -> Result<ListResource<crate::api::organization::OrganizationView>, Fail> {
        Ok(crate::routes::organizations::list(
            self.auth::<OrganizationsRead>()?,
            self.data(),
            RawQuery("limit=100&sorting=created_at".into()),
        )
        .await?
        .into_inner())
    }
}

/// The frame every dashboard page shares.
pub struct Layout {
    pub title: String,
    pub csrf: String,
    pub user_email: String,
    pub org_id: String,
    pub org_name: String,
    pub org_slug: String,
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
    ("orders", "Orders", "/orders"),
    ("subscriptions", "Subscriptions", "/subscriptions"),
    ("customers", "Customers", "/customers"),
    ("license-keys", "License keys", "/license-keys"),
    ("discounts", "Discounts", "/discounts"),
    ("custom-fields", "Custom fields", "/custom-fields"),
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

/// A JSON body built from a form, read by the API's deserialization (same 422s).
pub fn body<T: DeserializeOwned>(raw: Value) -> Result<ValidJson<T>, ApiError> {
    ValidJson::from_value(raw)
}

// ---------------------------------------------------------------------------------------
// Forms
// ---------------------------------------------------------------------------------------

/// A posted `application/x-www-form-urlencoded` form (repeated names kept in order).
#[derive(Debug, Default, Clone)]
pub struct Form {
    pairs: Vec<(String, String)>,
}

impl Form {
    pub fn parse(bytes: &[u8]) -> Self {
        Form {
            pairs: form_urlencoded::parse(bytes).into_owned().collect(),
        }
    }

    pub fn of_query(query: &str) -> Self {
        Self::parse(query.as_bytes())
    }

    /// A field's value as posted ("" when absent): what a form shows again.
    pub fn get(&self, name: &str) -> &str {
        self.pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    }

    /// A field's trimmed value, `None` when absent or blank.
    pub fn opt(&self, name: &str) -> Option<&str> {
        Some(self.get(name).trim()).filter(|v| !v.is_empty())
    }

    /// Every value of a repeated field.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Whether a checkbox was ticked.
    pub fn checked(&self, name: &str) -> bool {
        self.pairs.iter().any(|(k, v)| k == name && v != "false")
    }

    /// Whether `value` is among the values of `name` (a ticked box of a list).
    pub fn has(&self, name: &str, value: &str) -> bool {
        self.pairs.iter().any(|(k, v)| k == name && v == value)
    }

    /// A text field for the API: its trimmed value, or null when blank.
    pub fn text(&self, name: &str) -> Value {
        self.opt(name).map_or(Value::Null, Value::from)
    }

    /// An integer field for the API: the number, null when blank, else the text as typed
    /// (the API's validation names the field and says what it wants).
    pub fn int(&self, name: &str) -> Value {
        match self.opt(name) {
            None => Value::Null,
            Some(v) => v
                .parse::<i64>()
                .map_or_else(|_| Value::from(v), Value::from),
        }
    }

    /// An amount in major units ("12", "12.5", "12.50") as cents for the API; null when
    /// blank; anything else goes as typed for the API to refuse.
    pub fn cents(&self, name: &str) -> Value {
        match self.opt(name) {
            None => Value::Null,
            Some(v) => parse_cents(v).map_or_else(|| Value::from(v), Value::from),
        }
    }

    /// An API error about a form with amount fields (`(name, label)`, typed in major
    /// units): each amount that does not read as one (sent as typed, so the API refused it
    /// as "not an integer") is named by its label with what to type instead; the API's
    /// other problems stay as they are.
    pub fn explain_amounts(&self, e: ApiError, fields: &[(&str, &str)]) -> ApiError {
        let ApiError::Validation(mut errors) = e else {
            return e;
        };
        for (name, label) in fields {
            let Some(typed) = self.opt(name).filter(|t| parse_cents(t).is_none()) else {
                continue;
            };
            let before = errors.len();
            errors.retain(|f| f.input.as_str() != Some(typed));
            if errors.len() < before {
                errors.push(crate::error::FieldError::new(
                    "decimal_parsing",
                    crate::loc!["body", *label],
                    "Enter an amount like 19 or 19.99",
                    Value::from(typed),
                ));
            }
        }
        ApiError::Validation(errors)
    }

    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.pairs.retain(|(k, _)| k != name);
        self.pairs.push((name.to_string(), value.into()));
    }
}

/// "12", "12.5" or "12.50" as cents; `None` for anything else (no sign, at most two
/// decimals, no overflow).
pub fn parse_cents(v: &str) -> Option<i64> {
    let (whole, frac) = match v.split_once('.') {
        Some((w, f)) => (w, f),
        None => (v, ""),
    };
    if whole.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > 2
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let frac: i64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<2}").parse().ok()?
    };
    whole.checked_mul(100)?.checked_add(frac)
}

/// Cents as "12.50" (the reverse of [`parse_cents`]).
pub fn major_units(cents: i64) -> String {
    Money::new(cents, crate::api::price::CURRENCY).major()
}

/// An amount with its currency, as every page reads it (`Money`).
pub fn money(cents: i64, currency: &str) -> String {
    Money::new(cents, currency).to_string()
}

// ---------------------------------------------------------------------------------------
// Reading the API's answers in templates
// ---------------------------------------------------------------------------------------

/// An API answer (a typed view serialized as the API sends it), read by path in templates:
/// `{{ order.s("customer.email") }}`.
#[derive(Debug, Clone)]
pub struct Row(pub Value);

impl Row {
    pub fn of<T: serde::Serialize>(view: &T) -> Row {
        Row(serde_json::to_value(view).unwrap_or(Value::Null))
    }

    pub fn many<T: serde::Serialize>(views: &[T]) -> Vec<Row> {
        views.iter().map(Row::of).collect()
    }

    fn at(&self, path: &str) -> &Value {
        let mut v = &self.0;
        for part in path.split('.') {
            v = match v {
                Value::Object(m) => m.get(part).unwrap_or(&Value::Null),
                Value::Array(a) => part
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| a.get(i))
                    .unwrap_or(&Value::Null),
                _ => &Value::Null,
            };
        }
        v
    }

    /// A value as text ("" for null).
    pub fn s(&self, path: &str) -> String {
        match self.at(path) {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    /// A value as text, `None` when null or empty.
    pub fn opt_s(&self, path: &str) -> Option<String> {
        Some(self.s(path)).filter(|s| !s.is_empty())
    }

    /// Whether a value is present and not false, 0 or empty.
    pub fn is(&self, path: &str) -> bool {
        match self.at(path) {
            Value::Null | Value::Bool(false) => false,
            Value::String(s) => !s.is_empty(),
            Value::Array(a) => !a.is_empty(),
            Value::Number(n) => n.as_f64() != Some(0.0),
            _ => true,
        }
    }

    /// A timestamp as "2026-11-25 06:22 UTC" ("" when absent).
    pub fn date(&self, path: &str) -> String {
        let s = self.s(path);
        match chrono::DateTime::parse_from_rfc3339(&s) {
            Ok(t) => t
                .with_timezone(&chrono::Utc)
                .format("%Y-%m-%d %H:%M UTC")
                .to_string(),
            Err(_) => s,
        }
    }

    /// A timestamp as the value of a `date` input ("2026-11-25").
    pub fn day(&self, path: &str) -> String {
        self.date(path).get(..10).unwrap_or_default().to_string()
    }

    /// An amount (cents) with the currency at `currency_path`.
    pub fn money(&self, amount_path: &str, currency_path: &str) -> String {
        match self.at(amount_path).as_i64() {
            Some(c) => money(c, &self.s(currency_path)),
            None => String::new(),
        }
    }

    /// An amount (cents) in major units, for an input ("12.50").
    pub fn units(&self, amount_path: &str) -> String {
        self.at(amount_path)
            .as_i64()
            .map(major_units)
            .unwrap_or_default()
    }

    /// The object at `path`.
    pub fn row(&self, path: &str) -> Row {
        Row(self.at(path).clone())
    }

    /// The items of a list.
    pub fn rows(&self, path: &str) -> Vec<Row> {
        match self.at(path) {
            Value::Array(a) => a.iter().cloned().map(Row).collect(),
            _ => Vec::new(),
        }
    }

    /// A price as a seller reads it: "$12.50 / month", "Pay what you want (min $1.00)", "Free".
    pub fn price(&self) -> String {
        let currency = self.s("price_currency");
        let per = match self.s("recurring_interval").as_str() {
            "" => String::new(),
            i => format!(" / {i}"),
        };
        match self.s("amount_type").as_str() {
            "fixed" => format!("{}{per}", self.money("price_amount", "price_currency")),
            "custom" => {
                let min = self.at("minimum_amount").as_i64();
                match min {
                    Some(m) => format!("Pay what you want (min {}){per}", money(m, &currency)),
                    None => format!("Pay what you want{per}"),
                }
            }
            "free" => format!("Free{per}"),
            other => other.to_string(),
        }
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
    /// For a list at `base` whose query is `form` (its `page` replaced).
    pub fn new<T>(list: &ListResource<T>, base: &str, form: &Form) -> Pager {
        let page = form
            .opt("page")
            .and_then(|p| p.parse::<u64>().ok())
            .unwrap_or(1)
            .max(1);
        let link = |p: u64| {
            let mut f = form.clone();
            f.set("page", p.to_string());
            let q: String = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(f.pairs.iter().filter(|(_, v)| !v.is_empty()))
                .finish();
            format!("{base}?{q}")
        };
        let max_page = list.pagination.max_page;
        Pager {
            page,
            max_page,
            total: list.pagination.total_count,
            prev: (page > 1).then(|| link(page - 1)),
            next: (page < max_page).then(|| link(page + 1)),
        }
    }
}

/// One page of an API list for a list page of the current organization: `call` gets the
/// query (the organization, the page's `page`, 20 items a page, and `pairs`); returns the
/// items and the pager of the page at `rest` (under the organization).
pub async fn listing<T, F, Fut>(
    layout: &Layout,
    q: &Form,
    rest: &str,
    pairs: &[(&str, &str)],
    call: F,
) -> Result<(Vec<Row>, Pager), Fail>
where
    T: serde::Serialize,
    F: FnOnce(RawQuery) -> Fut,
    Fut: std::future::Future<Output = Result<web::Json<ListResource<T>>, ApiError>>,
{
    let mut all = vec![
        ("organization_id", layout.org_id.as_str()),
        ("page", q.get("page")),
        ("limit", "20"),
    ];
    all.extend_from_slice(pairs);
    let list = call(query(&all)).await?.into_inner();
    Ok((
        Row::many(&list.items),
        Pager::new(&list, &layout.at(rest), q),
    ))
}

/// The first hundred items of an API list of the current organization (the choices of a
/// form: its products, its benefits).
pub async fn choices<T, F, Fut>(
    layout: &Layout,
    pairs: &[(&str, &str)],
    call: F,
) -> Result<Vec<Row>, Fail>
where
    T: serde::Serialize,
    F: FnOnce(RawQuery) -> Fut,
    Fut: std::future::Future<Output = Result<web::Json<ListResource<T>>, ApiError>>,
{
    let mut all = vec![
        ("organization_id", layout.org_id.as_str()),
        ("limit", "100"),
    ];
    all.extend_from_slice(pairs);
    Ok(Row::many(&call(query(&all)).await?.into_inner().items))
}

/// A record of the current organization, from an API `get` (which applies the API's
/// tenancy); one of another organization of the same member is a 404 here too, so each
/// organization's records are reached under its own pages only. Orders and subscriptions
/// name their organization through their product.
pub async fn record<T, Fut>(layout: &Layout, get: Fut) -> Result<Row, Fail>
where
    T: serde::Serialize,
    Fut: std::future::Future<Output = Result<web::Json<T>, ApiError>>,
{
    let row = Row::of(&get.await?.into_inner());
    let org = match row.s("organization_id") {
        o if o.is_empty() => row.s("product.organization_id"),
        o => o,
    };
    if org == layout.org_id {
        Ok(row)
    } else {
        Err(Fail::Api(ApiError::not_found()))
    }
}

/// A query string for an API list: the pairs with a value.
pub fn query(pairs: &[(&str, &str)]) -> RawQuery {
    RawQuery(
        form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs.iter().filter(|(_, v)| !v.is_empty()))
            .finish(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_parse_as_cents_and_print_back() {
        assert_eq!(parse_cents("12"), Some(1200));
        assert_eq!(parse_cents("12.5"), Some(1250));
        assert_eq!(parse_cents("0.05"), Some(5));
        assert_eq!(parse_cents("12.50"), Some(1250));
        for bad in [
            "",
            ".5",
            "-1",
            "1.234",
            "1e3",
            "12,50",
            " 1",
            "99999999999999999999",
        ] {
            assert_eq!(parse_cents(bad), None, "{bad}");
        }
        assert_eq!(major_units(1250), "12.50");
        assert_eq!(major_units(-5), "-0.05");
        assert_eq!(money(900, "usd"), "$9.00");
        assert_eq!(money(900, "eur"), "€9.00");
        assert_eq!(money(123450, "usd"), "$1,234.50");
    }

    #[test]
    fn forms_keep_repeated_fields_and_typed_values() {
        let f = Form::parse(b"name=+Pro+&n=12&n=13&bad=x1&price=9.99&empty=&box=on");
        assert_eq!(f.get("name"), " Pro ");
        assert_eq!(f.text("name"), Value::from("Pro"));
        assert_eq!(f.all("n"), vec!["12", "13"]);
        assert_eq!(f.int("n"), Value::from(12));
        assert_eq!(f.int("bad"), Value::from("x1"));
        assert_eq!(f.int("empty"), Value::Null);
        assert_eq!(f.cents("price"), Value::from(999));
        assert!(f.checked("box") && !f.checked("nope"));
        assert!(f.has("n", "13") && !f.has("n", "14"));
    }

    #[test]
    fn amounts_that_do_not_read_are_named_by_their_label_with_the_other_problems() {
        let f = Form::parse(b"amount=19.999&yearly_amount=&minimum_amount=abc&maximum_amount=20");
        let field = |loc: Vec<Value>, msg: &str, input: &str| {
            crate::error::FieldError::new("int_parsing", loc, msg, Value::from(input))
        };
        // What the API answers for the body the form made (amounts sent as typed).
        let api = ApiError::Validation(vec![
            field(
                crate::loc!["body", "name"],
                "String should have at least 3 characters",
                "x",
            ),
            field(
                crate::loc!["body", "prices", 0, "price_amount"],
                "Input should be a valid integer",
                "19.999",
            ),
            field(
                crate::loc!["body", "prices", 0, "minimum_amount"],
                "Input should be a valid integer",
                "abc",
            ),
        ]);
        let fields = [
            ("amount", "Price"),
            ("yearly_amount", "Yearly price"),
            ("minimum_amount", "Minimum"),
            ("maximum_amount", "Maximum"),
        ];
        assert_eq!(
            describe(&f.explain_amounts(api, &fields)),
            vec![
                "name: String should have at least 3 characters",
                "Price: Enter an amount like 19 or 19.99",
                "Minimum: Enter an amount like 19 or 19.99"
            ]
        );
        // Other errors pass through.
        assert!(matches!(
            f.explain_amounts(ApiError::Conflict("x".into()), &fields),
            ApiError::Conflict(_)
        ));
    }

    #[test]
    fn rows_read_paths_dates_and_prices() {
        let r = Row(serde_json::json!({
            "a": {"b": [{"c": 1}]},
            "t": "2026-11-25T06:22:47.123Z",
            "amount_type": "fixed", "price_amount": 1250, "price_currency": "usd",
            "recurring_interval": "month"
        }));
        assert_eq!(r.s("a.b.0.c"), "1");
        assert_eq!(r.s("a.x"), "");
        assert_eq!(r.date("t"), "2026-11-25 06:22 UTC");
        assert_eq!(r.day("t"), "2026-11-25");
        assert_eq!(r.price(), "$12.50 / month");
        assert!(r.is("a.b") && !r.is("nope"));
    }
}
