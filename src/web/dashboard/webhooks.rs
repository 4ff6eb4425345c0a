//! Webhooks: an organization's endpoints (the list, a new one with its signing secret shown
//! once, editing, enabling and disabling, rotating its secret (the new one shown once),
//! deleting after a confirmation) and each endpoint's
//! delivery log: every attempt with its answer, grouped by event, newest first, with a
//! button that sends an event again.
//!
//! Everything goes through `crate::app::webhook_endpoints`, the use cases of `/v1/webhooks/`:
//! the URL rules, the tenancy and every 422's message are the API's. The form is typed: the
//! format and the event types read straight into the API's enums.

use actix_web::{web, HttpRequest};
use askama::Template;
use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{
    fmt, form_refusal, of_org, posted, see_other, Dash, Fail, Layout, ListQuery, PageResult, Pager,
};
use crate::api::webhook::{
    event_names, WebhookDeliveryView, WebhookEventType, WebhookEventView, WebhookFormat,
};
use crate::app::webhook_endpoints::{self as endpoints, event_for};
use crate::domain::ids::{OrganizationId, WebhookEndpointId, WebhookEventId};
use crate::domain::webhook::{
    NewWebhookEndpoint, WebhookEndpoint, WebhookEndpointChange, WebhookFormat as StoredFormat,
};
use crate::error::ApiError;
use crate::extract::path_id;
use crate::state::AppState;
use crate::web::dashboard::forms::ticked;

/// The formats a form offers: (value, label).
const FORMATS: &[(WebhookFormat, &str, &str)] = &[
    (WebhookFormat::Raw, "raw", "Raw (the event as JSON, signed)"),
    (WebhookFormat::Discord, "discord", "Discord"),
    (WebhookFormat::Slack, "slack", "Slack"),
];

/// A format as the pages name it.
fn format_name(f: &StoredFormat) -> &'static str {
    match f {
        StoredFormat::Raw => "raw",
        StoredFormat::Discord => "discord",
        StoredFormat::Slack => "slack",
    }
}

/// What a page says after a change it redirected from (`?done=`).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Done {
    done: String,
}

impl Done {
    fn of(req: &HttpRequest) -> Option<&'static str> {
        let done: Done = serde_html_form::from_str(req.query_string()).unwrap_or_default();
        match done.done.as_str() {
            "saved" => Some("Saved."),
            "enabled" => Some("Enabled: events are sent to this endpoint again."),
            "disabled" => Some("Disabled: new events are recorded for this endpoint, not sent."),
            "redelivered" => Some("The event will be sent again; its attempt appears below."),
            "deleted" => Some("The endpoint was deleted."),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------
// The form
// ---------------------------------------------------------------------------------------

/// An endpoint as its form shows and posts it.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct EndpointForm {
    pub url: String,
    pub name: String,
    pub format: WebhookFormat,
    /// The ticked event types (`events`, once per box).
    pub events: Vec<WebhookEventType>,
    /// The checkbox: ticked (`on`) or absent.
    pub enabled: Option<String>,
}

impl Default for EndpointForm {
    /// A posted form's missing fields: an unticked box is absent.
    fn default() -> Self {
        EndpointForm {
            url: String::new(),
            name: String::new(),
            format: WebhookFormat::Raw,
            events: Vec::new(),
            enabled: None,
        }
    }
}

impl EndpointForm {
    /// The form of a new endpoint: enabled.
    fn blank() -> Self {
        EndpointForm {
            enabled: Some("on".into()),
            ..EndpointForm::default()
        }
    }

    fn of(e: &WebhookEndpoint) -> Self {
        EndpointForm {
            url: e.url.clone(),
            name: e.name.clone().unwrap_or_default(),
            format: e.format.into(),
            events: e
                .events
                .iter()
                .filter_map(|t| WebhookEventType::parse(t))
                .collect(),
            enabled: e.enabled.then(|| "on".into()),
        }
    }

    pub fn is_enabled(&self) -> bool {
        ticked(&self.enabled)
    }

    pub fn has_event(&self, e: &WebhookEventType) -> bool {
        self.events.contains(e)
    }

    pub fn has_format(&self, f: &WebhookFormat) -> bool {
        self.format == *f
    }

    fn create(&self, org: OrganizationId) -> NewWebhookEndpoint {
        NewWebhookEndpoint {
            url: self.url.trim().to_string(),
            name: Some(self.name.trim().to_string()).filter(|n| !n.is_empty()),
            secret: None,
            format: self.format.into(),
            events: event_names(&self.events),
            organization_id: Some(org),
            api_version: None,
        }
    }

    fn update(&self) -> WebhookEndpointChange {
        WebhookEndpointChange {
            url: Some(self.url.trim().to_string()),
            name: Some(Some(self.name.trim().to_string())),
            format: Some(self.format.into()),
            events: Some(event_names(&self.events)),
            enabled: Some(self.is_enabled()),
            ..WebhookEndpointChange::default()
        }
    }
}

/// The enable/disable buttons' form.
#[derive(Deserialize)]
struct EnabledForm {
    enabled: bool,
}

// ---------------------------------------------------------------------------------------
// The list
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/webhooks.html")]
struct EndpointsPage {
    layout: Layout,
    endpoints: Vec<WebhookEndpoint>,
    pager: Pager,
    notice: Option<&'static str>,
}

impl EndpointsPage {
    fn format_of(&self, f: &StoredFormat) -> &'static str {
        format_name(f)
    }
}

pub async fn webhooks(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "webhooks", "Webhooks").await?;
    let params = ListQuery::of(&req).params();
    let (endpoints, total) = endpoints::list(&state, dash.subject(), &[layout.org], params).await?;
    let pager = Pager::new(total, params, &layout.at("/webhooks"), &req);
    dash.page(
        200,
        &EndpointsPage {
            endpoints,
            pager,
            notice: Done::of(&req),
            layout,
        },
    )
}

// ---------------------------------------------------------------------------------------
// A new endpoint
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/webhook_new.html")]
struct NewPage {
    layout: Layout,
    form: EndpointForm,
    errors: Vec<String>,
}

impl NewPage {
    fn formats(&self) -> &'static [(WebhookFormat, &'static str, &'static str)] {
        FORMATS
    }

    fn event_types(&self) -> &'static [WebhookEventType] {
        WebhookEventType::ALL
    }
}

/// The page right after creating: the signing secret, this once.
#[derive(Template)]
#[template(path = "dashboard/webhook_created.html")]
struct CreatedPage {
    layout: Layout,
    endpoint: WebhookEndpoint,
    /// The page after a rotation rather than a creation.
    rotated: bool,
}

pub async fn webhook_new(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash
        .layout(&path, "webhooks", "New webhook endpoint")
        .await?;
    dash.page(
        200,
        &NewPage {
            layout,
            form: EndpointForm::blank(),
            errors: Vec::new(),
        },
    )
}

/// Creates the endpoint and shows its secret once (201, not a redirect: the secret is never
/// put in a URL, and the endpoint's own page never shows it).
pub async fn webhook_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: EndpointForm = posted(&bytes)?;
    let layout = dash
        .layout(&path, "webhooks", "New webhook endpoint")
        .await?;
    let created = async {
        let endpoint = endpoints::create(&state, dash.subject(), form.create(layout.org)).await?;
        if form.is_enabled() {
            return Ok(endpoint);
        }
        // The API creates endpoints enabled; an unticked box pauses it at once.
        let paused = WebhookEndpointChange {
            enabled: Some(false),
            ..WebhookEndpointChange::default()
        };
        endpoints::update(&state, dash.subject(), endpoint.id, paused).await
    }
    .await;
    match created {
        Ok(endpoint) => {
            let layout = Layout {
                title: "Webhook endpoint created".into(),
                ..layout
            };
            dash.page(
                201,
                &CreatedPage {
                    layout,
                    endpoint,
                    rotated: false,
                },
            )
        }
        Err(e) => {
            let (status, errors) = form_refusal(e)?;
            dash.page(
                status,
                &NewPage {
                    layout,
                    form,
                    errors,
                },
            )
        }
    }
}

// ---------------------------------------------------------------------------------------
// One endpoint: its form and its delivery log
// ---------------------------------------------------------------------------------------

/// An event of the log, with its attempts on this page (newest first).
pub struct EventAttempts {
    pub event: WebhookEventView,
    pub attempts: Vec<WebhookDeliveryView>,
}

impl EventAttempts {
    /// Where the event stands, as a word (also its badge's class).
    pub fn status(&self) -> &'static str {
        let e = &self.event;
        match e.succeeded {
            _ if e.skipped => "skipped",
            Some(true) => "delivered",
            Some(false) => "failing",
            None => "pending",
        }
    }

    /// The status badge's class (the layout's colours).
    pub fn badge(&self) -> &'static str {
        match self.status() {
            "delivered" => "active",
            "failing" => "revoked",
            "skipped" => "disabled",
            _ => "",
        }
    }
}

/// A page of attempts (newest first) grouped by event, events in the order of their newest
/// attempt.
fn by_event(items: Vec<WebhookDeliveryView>) -> Vec<EventAttempts> {
    let mut out: Vec<EventAttempts> = Vec::new();
    for d in items {
        match out.iter_mut().find(|g| g.event.id == d.webhook_event.id) {
            Some(g) => g.attempts.push(d),
            None => out.push(EventAttempts {
                event: d.webhook_event.clone(),
                attempts: vec![d],
            }),
        }
    }
    out
}

#[derive(Template)]
#[template(path = "dashboard/webhook.html")]
struct EndpointPage {
    layout: Layout,
    endpoint: WebhookEndpoint,
    form: EndpointForm,
    errors: Vec<String>,
    notice: Option<&'static str>,
    events: Vec<EventAttempts>,
    pager: Pager,
}

impl EndpointPage {
    fn formats(&self) -> &'static [(WebhookFormat, &'static str, &'static str)] {
        FORMATS
    }

    fn event_types(&self) -> &'static [WebhookEventType] {
        WebhookEventType::ALL
    }

    /// Where the endpoint's forms post.
    fn action(&self) -> String {
        self.layout.at(&format!("/webhooks/{}", self.endpoint.id))
    }

    fn format_of(&self, f: &StoredFormat) -> &'static str {
        format_name(f)
    }

    /// An attempt's time, to the second ("2026-11-25 06:22:07 UTC").
    fn at(&self, t: &DateTime<Utc>) -> String {
        t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
    }
}

/// An endpoint of the page's organization (else 404).
async fn endpoint_of(dash: &Dash, layout: &Layout, id: &str) -> Result<WebhookEndpoint, Fail> {
    let id: WebhookEndpointId = path_id("id", id)?;
    let endpoint = endpoints::get(&dash.state, dash.subject(), id).await?;
    of_org(layout, endpoint.organization_id, endpoint)
}

/// What an endpoint's page shows besides its form.
struct Shown {
    form: EndpointForm,
    errors: Vec<String>,
    notice: Option<&'static str>,
}

/// The endpoint's page with `status`: its form and the page of its delivery log the query
/// asks for.
async fn endpoint_page(
    dash: &Dash,
    req: &HttpRequest,
    layout: Layout,
    endpoint: WebhookEndpoint,
    status: u16,
    shown: Shown,
) -> PageResult {
    let params = ListQuery::of(req).params();
    let (attempts, total) = endpoints::deliveries(
        &dash.state,
        dash.subject(),
        &[endpoint.id],
        &[layout.org],
        params,
    )
    .await?;
    let base = layout.at(&format!("/webhooks/{}", endpoint.id));
    let pager = Pager::new(total, params, &base, req);
    dash.page(
        status,
        &EndpointPage {
            layout,
            endpoint,
            form: shown.form,
            errors: shown.errors,
            notice: shown.notice,
            events: by_event(attempts),
            pager,
        },
    )
}

pub async fn webhook(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "webhooks", "Webhook endpoint").await?;
    let endpoint = endpoint_of(&dash, &layout, &path.1).await?;
    let shown = Shown {
        form: EndpointForm::of(&endpoint),
        errors: Vec::new(),
        notice: Done::of(&req),
    };
    endpoint_page(&dash, &req, layout, endpoint, 200, shown).await
}

pub async fn webhook_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: EndpointForm = posted(&bytes)?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "webhooks", "Webhook endpoint").await?;
    let endpoint = endpoint_of(&dash, &layout, &id).await?;
    match endpoints::update(&state, dash.subject(), endpoint.id, form.update()).await {
        Ok(_) => Ok(see_other(&layout.at(&format!("/webhooks/{id}?done=saved")))),
        Err(e) => {
            let (status, errors) = form_refusal(e)?;
            let shown = Shown {
                form,
                errors,
                notice: None,
            };
            endpoint_page(&dash, &req, layout, endpoint, status, shown).await
        }
    }
}

/// `enabled`: `true` resumes deliveries (also of an endpoint Tollgate disabled), `false`
/// pauses them.
pub async fn webhook_enabled(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: EnabledForm = posted(&bytes)?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "webhooks", "Webhook endpoint").await?;
    let endpoint = endpoint_of(&dash, &layout, &id).await?;
    let change = WebhookEndpointChange {
        enabled: Some(form.enabled),
        ..WebhookEndpointChange::default()
    };
    match endpoints::update(&state, dash.subject(), endpoint.id, change).await {
        Ok(_) => {
            let done = if form.enabled { "enabled" } else { "disabled" };
            Ok(see_other(
                &layout.at(&format!("/webhooks/{id}?done={done}")),
            ))
        }
        Err(e) => {
            let (status, errors) = form_refusal(e)?;
            let shown = Shown {
                form: EndpointForm::of(&endpoint),
                errors,
                notice: None,
            };
            endpoint_page(&dash, &req, layout, endpoint, status, shown).await
        }
    }
}

/// Sends an event of this endpoint again (the app layer puts it back to pending and wakes
/// the endpoint's worker); an archived event, or one being sent right now, is a 409 shown
/// on the page.
pub async fn redeliver(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let (org, id, event_id) = path.into_inner();
    let layout = dash.layout(&org, "webhooks", "Webhook endpoint").await?;
    let endpoint = endpoint_of(&dash, &layout, &id).await?;
    let event_id: WebhookEventId = path_id("event_id", &event_id)?;
    let event = event_for(&state, dash.subject(), event_id).await?.value;
    // An event of another endpoint (even of the same organization) is not found here.
    of_org(&layout, event.organization_id, ())?;
    if event.endpoint_id != endpoint.id {
        return Err(Fail::Api(ApiError::not_found()));
    }
    match endpoints::redeliver(&state, dash.subject(), event.id).await {
        Ok(()) => Ok(see_other(
            &layout.at(&format!("/webhooks/{id}?done=redelivered")),
        )),
        Err(e) => {
            let (status, errors) = form_refusal(e)?;
            let shown = Shown {
                form: EndpointForm::of(&endpoint),
                errors,
                notice: None,
            };
            endpoint_page(&dash, &req, layout, endpoint, status, shown).await
        }
    }
}

/// Rotates the endpoint's signing secret and shows the new one once (200, not a redirect:
/// the secret is never put in a URL). The old one stops working at once.
pub async fn webhook_rotate_secret(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "webhooks", "Webhook endpoint").await?;
    let endpoint = endpoint_of(&dash, &layout, &id).await?;
    let endpoint = endpoints::rotate_secret(&state, dash.subject(), endpoint.id).await?;
    let layout = Layout {
        title: "Signing secret rotated".into(),
        ..layout
    };
    dash.page(
        200,
        &CreatedPage {
            layout,
            endpoint,
            rotated: true,
        },
    )
}

// ---------------------------------------------------------------------------------------
// Deleting
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/webhook_delete.html")]
struct DeletePage {
    layout: Layout,
    endpoint: WebhookEndpoint,
}

/// Asks before deleting.
pub async fn webhook_delete_confirm(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash
        .layout(&path.0, "webhooks", "Delete webhook endpoint")
        .await?;
    let endpoint = endpoint_of(&dash, &layout, &path.1).await?;
    dash.page(200, &DeletePage { layout, endpoint })
}

/// Deletes the endpoint: its pending events are never sent.
pub async fn webhook_delete(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let (org, id) = path.into_inner();
    let layout = dash
        .layout(&org, "webhooks", "Delete webhook endpoint")
        .await?;
    let endpoint = endpoint_of(&dash, &layout, &id).await?;
    endpoints::delete(&state, dash.subject(), endpoint.id).await?;
    Ok(see_other(&layout.at("/webhooks?done=deleted")))
}
