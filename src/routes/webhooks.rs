//! `/v1/webhooks/`: a seller's endpoints, the delivery log, and redelivery (Polar's
//! `webhook/endpoints.py`), through `crate::app::webhook_endpoints`. Delivery itself is in
//! `crate::webhooks`.

use actix_web::{web, HttpRequest, HttpResponse};

use crate::api::webhook::{
    WebhookCursorEvent, WebhookCursorPage, WebhookDeliveryView, WebhookEndpointCreate,
    WebhookEndpointUpdate, WebhookEndpointView,
};
use crate::api::{Created, ListResource, Pagination};
use crate::app::listing::render;
use crate::app::webhook_endpoints as endpoints;
use crate::domain::ids::{OrganizationId, WebhookEndpointId, WebhookEventId};
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::auth::{WebhooksRead, WebhooksWrite};
use crate::extract::{path_id, Auth, ListParams, QueryParams, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/webhooks/endpoints", { get => list_endpoints, post => create_endpoint });
    crate::resource!(cfg, "/v1/webhooks/endpoints/{id}", {
        get => get_endpoint, patch => update_endpoint, delete => delete_endpoint
    });
    crate::resource!(cfg, "/v1/webhooks/endpoints/{id}/secret", { patch => rotate_secret });
    crate::resource!(cfg, "/v1/webhooks/deliveries", { get => list_deliveries });
    crate::resource!(cfg, "/v1/webhooks/events", { get => cursor });
    crate::resource!(cfg, "/v1/webhooks/events/{id}/redeliver", { post => redeliver });
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
    let (items, total) = endpoints::list(&state, auth.subject(), &orgs, params).await?;
    Ok(web::Json(render(&items, total, params, |e| {
        WebhookEndpointView::from(e)
    })))
}

async fn create_endpoint(
    auth: Auth<WebhooksWrite>,
    state: web::Data<AppState>,
    body: ValidJson<WebhookEndpointCreate>,
) -> ApiResult<Created<WebhookEndpointView>> {
    let endpoint =
        endpoints::create(&state, auth.subject(), body.into_inner().into_command()).await?;
    Ok(Created(WebhookEndpointView::from(&endpoint)))
}

async fn get_endpoint(
    auth: Auth<WebhooksRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<WebhookEndpointView>> {
    let id: WebhookEndpointId = path_id("id", &id)?;
    let e = endpoints::get(&state, auth.subject(), id).await?;
    Ok(web::Json(WebhookEndpointView::from(&e)))
}

async fn update_endpoint(
    auth: Auth<WebhooksWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<WebhookEndpointUpdate>,
) -> ApiResult<web::Json<WebhookEndpointView>> {
    let id: WebhookEndpointId = path_id("id", &id)?;
    let e = endpoints::update(
        &state,
        auth.subject(),
        id,
        body.into_inner().into_command()?,
    )
    .await?;
    Ok(web::Json(WebhookEndpointView::from(&e)))
}

/// `PATCH /v1/webhooks/endpoints/{id}/secret`: a new generated secret, no body (Polar's
/// `reset_webhook_endpoint_secret`; a body, if any, is ignored as Polar's is).
async fn rotate_secret(
    auth: Auth<WebhooksWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<WebhookEndpointView>> {
    let id: WebhookEndpointId = path_id("id", &id)?;
    let e = endpoints::rotate_secret(&state, auth.subject(), id).await?;
    Ok(web::Json(WebhookEndpointView::from(&e)))
}

async fn delete_endpoint(
    auth: Auth<WebhooksWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: WebhookEndpointId = path_id("id", &id)?;
    endpoints::delete(&state, auth.subject(), id).await?;
    Ok(HttpResponse::NoContent().finish())
}

async fn list_deliveries(
    auth: Auth<WebhooksRead>,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<web::Json<ListResource<WebhookDeliveryView>>> {
    let mut q = QueryParams::parse(req.query_string());
    let params = ListParams::from_query(&mut q);
    let ids: Vec<WebhookEndpointId> = q.ids("endpoint_id");
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    q.finish()?;
    let (items, total) = endpoints::deliveries(&state, auth.subject(), &ids, &orgs, params).await?;
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

async fn redeliver(
    auth: Auth<WebhooksWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: WebhookEventId = path_id("id", &id)?;
    endpoints::redeliver(&state, auth.subject(), id).await?;
    Ok(HttpResponse::Accepted()
        .content_type("application/json")
        .body("null"))
}

/// Most events one page of the cursor holds (and the default).
const CURSOR_LIMIT: i64 = 1000;
const CURSOR_DEFAULT: i64 = 100;

/// `GET /v1/webhooks/events?organization_id=&after=&limit=`: the event cursor.
async fn cursor(
    auth: Auth<WebhooksRead>,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<web::Json<WebhookCursorPage>> {
    let mut q = QueryParams::parse(req.query_string());
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    if orgs.len() > 1 {
        q.push_error(FieldError::new(
            "value_error",
            crate::loc!["query", "organization_id"],
            "Value error, name one organization: event numbers are per organization",
            serde_json::Value::from(orgs.iter().map(|o| o.to_string()).collect::<Vec<_>>()),
        ));
    }
    let after = match q.int("after") {
        Some(a) if a < 0 => {
            q.push_error(
                FieldError::new(
                    "greater_than_equal",
                    crate::loc!["query", "after"],
                    "Input should be greater than or equal to 0",
                    serde_json::Value::String(a.to_string()),
                )
                .with_ctx(serde_json::json!({"ge": 0})),
            );
            None
        }
        a => a.map(|a| a as u64),
    };
    let limit = match q.int("limit") {
        Some(l) if !(1..=CURSOR_LIMIT).contains(&l) => {
            let (kind, msg, ctx) = if l < 1 {
                (
                    "greater_than_equal",
                    "Input should be greater than or equal to 1".to_string(),
                    serde_json::json!({"ge": 1}),
                )
            } else {
                (
                    "less_than_equal",
                    format!("Input should be less than or equal to {CURSOR_LIMIT}"),
                    serde_json::json!({"le": CURSOR_LIMIT}),
                )
            };
            q.push_error(
                FieldError::new(
                    kind,
                    crate::loc!["query", "limit"],
                    msg,
                    serde_json::Value::String(l.to_string()),
                )
                .with_ctx(ctx),
            );
            CURSOR_DEFAULT
        }
        l => l.unwrap_or(CURSOR_DEFAULT),
    };
    q.finish()?;
    let page = crate::app::event_log::page(
        &state,
        auth.subject(),
        orgs.first().copied(),
        after,
        limit as u64,
    )
    .await?
    .ok_or_else(|| {
        ApiError::Validation(vec![FieldError::new(
            "missing",
            crate::loc!["query", "organization_id"],
            "Field required: the token reaches several organizations",
            serde_json::Value::Null,
        )])
    })?;
    Ok(web::Json(WebhookCursorPage {
        items: page
            .items
            .iter()
            .map(|e| WebhookCursorEvent::new(e.seq, &e.event_type, e.timestamp, &e.data))
            .collect(),
        next: page.next,
    }))
}
