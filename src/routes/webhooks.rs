//! `/v1/webhooks/`: a seller's endpoints, the delivery log, and redelivery (Polar's
//! `webhook/endpoints.py`). Delivery itself is in `crate::webhooks`.

use actix_web::{web, HttpRequest, HttpResponse};
use rand::distributions::Alphanumeric;
use rand::Rng;
use serde_json::Value;
use tollgate_storage::{Batch, Expect, StorageError, Stored};

use crate::api::webhook::{
    WebhookDeliveryView, WebhookEndpointCreate, WebhookEndpointUpdate, WebhookEndpointView,
    WebhookEventType,
};
use crate::api::{Created, ListResource, Maybe};
use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::page_of;
use crate::domain::ids::{OrganizationId, WebhookEndpointId, WebhookEventId};
use crate::domain::webhook::{
    WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookEventState,
    WEBHOOK_DELIVERY_BY_ENDPOINT, WEBHOOK_DELIVERY_BY_ORG, WEBHOOK_ENDPOINT_BY_CREATED,
};
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{WebhooksRead, WebhooksWrite};
use crate::extract::{path_id, Auth, ListParams, QueryParams, Subject, ValidJson};
use crate::loc;
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/webhooks/endpoints", { get => list_endpoints, post => create_endpoint });
    crate::resource!(cfg, "/v1/webhooks/endpoints/{id}", {
        get => get_endpoint, patch => update_endpoint, delete => delete_endpoint
    });
    crate::resource!(cfg, "/v1/webhooks/deliveries", { get => list_deliveries });
    crate::resource!(cfg, "/v1/webhooks/events/{id}/redeliver", { post => redeliver });
}

/// Polar's secrets: `polar_whs_` and 43 random characters.
fn generate_secret() -> String {
    let tail: String = rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(43)
        .map(char::from)
        .collect();
    format!("polar_whs_{tail}")
}

fn check_url(state: &AppState, url: &str) -> Result<String, ApiError> {
    state
        .webhooks
        .policy
        .check(url)
        .map(|u| u.to_string())
        .map_err(|why| ApiError::invalid(loc!["body", "url"], why, Value::from(url)))
}

fn check_secret(secret: &str) -> Result<(), ApiError> {
    if secret.chars().count() < 32 {
        return Err(ApiError::invalid(
            loc!["body", "secret"],
            "String should have at least 32 characters",
            Value::from(secret),
        ));
    }
    Ok(())
}

fn check_name(name: &str) -> Result<(), ApiError> {
    if name.chars().count() > 100 {
        return Err(ApiError::invalid(
            loc!["body", "name"],
            "String should have at most 100 characters",
            Value::from(name),
        ));
    }
    Ok(())
}

fn event_names(events: &[WebhookEventType]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(events.len());
    for e in events {
        if !out.iter().any(|n| n == e.as_str()) {
            out.push(e.as_str().to_string());
        }
    }
    out
}

/// An endpoint the subject may see, else 404.
async fn endpoint_for(
    state: &AppState,
    subject: Subject,
    id: WebhookEndpointId,
) -> Result<Stored<WebhookEndpoint>, ApiError> {
    match state.store.get::<WebhookEndpoint>(&id.key()).await? {
        Some(e) if can_access(state, subject, e.value.organization_id).await? => Ok(e),
        _ => Err(ApiError::not_found()),
    }
}

async fn list_endpoints(
    auth: Auth<WebhooksRead>,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<web::Json<ListResource<WebhookEndpointView>>> {
    let mut q = QueryParams::parse(req.query_string());
    let params = ListParams::from_query(&mut q);
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    q.finish()?;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(&state, auth.subject(), &orgs).await?;
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    let (items, total) = page_of::<WebhookEndpoint>(
        &state,
        WEBHOOK_ENDPOINT_BY_CREATED,
        &tenants,
        true,
        params,
        None,
    )
    .await?;
    Ok(web::Json(crate::app::listing::render(
        &items,
        total,
        params,
        |e| WebhookEndpointView::from(e),
    )))
}

async fn create_endpoint(
    auth: Auth<WebhooksWrite>,
    state: web::Data<AppState>,
    body: ValidJson<WebhookEndpointCreate>,
) -> ApiResult<Created<WebhookEndpointView>> {
    let WebhookEndpointCreate {
        url,
        name,
        secret,
        format,
        events,
        organization_id,
    } = body.into_inner();
    let url = check_url(&state, &url)?;
    if let Some(secret) = &secret {
        check_secret(secret)?;
    }
    if let Some(name) = &name {
        check_name(name)?;
    }
    let organization_id = organization_for_create(&state, auth.subject(), organization_id).await?;
    let endpoint = WebhookEndpoint {
        id: WebhookEndpointId::new(),
        organization_id,
        created_at: state.now(),
        modified_at: None,
        url,
        name: name.filter(|n| !n.trim().is_empty()),
        format: format.into(),
        secret: secret.unwrap_or_else(generate_secret),
        events: event_names(&events),
        enabled: true,
        consecutive_failures: 0,
        failing_since: None,
        disabled_reason: None,
    };
    let mut batch = Batch::new();
    batch.put(&endpoint, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    state.webhooks.wake(endpoint.id);
    Ok(Created(WebhookEndpointView::from(&endpoint)))
}

async fn get_endpoint(
    auth: Auth<WebhooksRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<WebhookEndpointView>> {
    let id: WebhookEndpointId = path_id("id", &id)?;
    state.store.read_barrier().await?;
    let e = endpoint_for(&state, auth.subject(), id).await?;
    Ok(web::Json(WebhookEndpointView::from(&e.value)))
}

async fn update_endpoint(
    auth: Auth<WebhooksWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<WebhookEndpointUpdate>,
) -> ApiResult<web::Json<WebhookEndpointView>> {
    let id: WebhookEndpointId = path_id("id", &id)?;
    let update = body.into_inner();
    let url = match &update.url {
        Maybe::Value(url) => Some(check_url(&state, url)?),
        Maybe::Null => {
            return Err(ApiError::invalid(
                loc!["body", "url"],
                "Input should be a valid URL",
                Value::Null,
            ))
        }
        Maybe::Absent => None,
    };
    if let Maybe::Value(secret) = &update.secret {
        check_secret(secret)?;
    }
    if let Maybe::Value(name) = &update.name {
        check_name(name)?;
    }
    for _ in 0..5 {
        let current = endpoint_for(&state, auth.subject(), id).await?;
        let mut e = current.value.clone();
        if let Some(url) = &url {
            e.url = url.clone();
        }
        if let Some(name) = update.name.clone().into_update() {
            e.name = name.filter(|n| !n.trim().is_empty());
        }
        if let Maybe::Value(secret) = &update.secret {
            e.secret = secret.clone();
        }
        if let Maybe::Value(format) = update.format {
            e.format = format.into();
        }
        if let Maybe::Value(events) = &update.events {
            e.events = event_names(events);
        }
        if let Maybe::Value(enabled) = update.enabled {
            if enabled && !e.enabled {
                // Re-enabled by the seller: a fresh start.
                e.consecutive_failures = 0;
                e.failing_since = None;
            }
            e.enabled = enabled;
            e.disabled_reason = None;
        }
        e.modified_at = Some(state.now());
        let mut batch = Batch::new();
        batch.put(&e, Expect::Rev(current.rev))?;
        match state.store.commit_durable(&batch).await {
            Ok(_) => {
                state.webhooks.wake(e.id);
                return Ok(web::Json(WebhookEndpointView::from(&e)));
            }
            Err(StorageError::Conflict { .. }) => continue,
            Err(err) => return Err(err.into()),
        }
    }
    Err(ApiError::Conflict(
        "The webhook endpoint is being modified concurrently; retry.".into(),
    ))
}

async fn delete_endpoint(
    auth: Auth<WebhooksWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: WebhookEndpointId = path_id("id", &id)?;
    let current = endpoint_for(&state, auth.subject(), id).await?;
    let mut batch = Batch::new();
    batch.delete::<WebhookEndpoint>(&id.key(), Expect::Rev(current.rev));
    state.store.commit_durable(&batch).await?;
    // Its worker sees it gone and stops; its pending events are never sent.
    state.webhooks.wake(id);
    Ok(HttpResponse::NoContent().finish())
}

async fn list_deliveries(
    auth: Auth<WebhooksRead>,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<web::Json<ListResource<WebhookDeliveryView>>> {
    let mut q = QueryParams::parse(req.query_string());
    let params = ListParams::from_query(&mut q);
    let endpoints: Vec<WebhookEndpointId> = q.ids("endpoint_id");
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    q.finish()?;
    state.store.read_barrier().await?;
    let (index, tenants): (&'static str, Vec<Vec<u8>>) = if endpoints.is_empty() {
        let orgs = organizations_for_list(&state, auth.subject(), &orgs).await?;
        (
            WEBHOOK_DELIVERY_BY_ORG,
            orgs.iter().map(|o| o.key()).collect(),
        )
    } else {
        let mut tenants = Vec::new();
        for id in endpoints {
            // An endpoint the caller cannot see filters to nothing, like an unknown id.
            if let Ok(e) = endpoint_for(&state, auth.subject(), id).await {
                if orgs.is_empty() || orgs.contains(&e.value.organization_id) {
                    tenants.push(id.key());
                }
            }
        }
        (WEBHOOK_DELIVERY_BY_ENDPOINT, tenants)
    };
    let (items, total) =
        page_of::<WebhookDelivery>(&state, index, &tenants, true, params, None).await?;
    let mut views = Vec::with_capacity(items.len());
    for d in &items {
        let Some(event) = state.store.get::<WebhookEvent>(&d.event_id.key()).await? else {
            continue;
        };
        if let Some(view) = WebhookDeliveryView::new(d, &event.value) {
            views.push(view);
        }
    }
    Ok(web::Json(ListResource {
        items: views,
        pagination: crate::api::Pagination::new(total, params.limit),
    }))
}

async fn redeliver(
    auth: Auth<WebhooksWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: WebhookEventId = path_id("id", &id)?;
    for _ in 0..5 {
        let Some(current) = state.store.get::<WebhookEvent>(&id.key()).await? else {
            return Err(ApiError::not_found());
        };
        if !can_access(&state, auth.subject(), current.value.organization_id).await? {
            return Err(ApiError::not_found());
        }
        if current.value.archived {
            return Err(ApiError::Conflict(
                "This event is archived: its payload is gone and it can't be redelivered.".into(),
            ));
        }
        if state
            .store
            .get::<WebhookEndpoint>(&current.value.endpoint_id.key())
            .await?
            .is_none()
        {
            return Err(ApiError::not_found());
        }
        let mut e = current.value.clone();
        e.state = WebhookEventState::Pending;
        e.next_attempt_at = None;
        e.modified_at = Some(state.now());
        let mut batch = Batch::new();
        batch.put(&e, Expect::Rev(current.rev))?;
        match state.store.commit_durable(&batch).await {
            Ok(_) => {
                state.webhooks.wake(e.endpoint_id);
                return Ok(HttpResponse::Accepted()
                    .content_type("application/json")
                    .body("null"));
            }
            Err(StorageError::Conflict { .. }) => continue,
            Err(err) => return Err(err.into()),
        }
    }
    Err(ApiError::Conflict(
        "The event is being delivered right now; retry.".into(),
    ))
}
