//! `/v1/events/`: ingest (`POST /v1/events/ingest`), list and get
//! (`crate::app::usage::ingest`).

use actix_web::web;
use serde_json::Value;

use crate::api::event::{new_events, EventView, EventsIngestResponse};
use crate::api::meter::{metadata_pairs, query_datetime};
use crate::api::{ListResource, Pagination};
use crate::app::usage::ingest;
use crate::domain::ids::EventId;
use crate::domain::meter::Filter;
use crate::domain::usage_event::{EventFilter, EventSource};
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::auth::{EventsRead, EventsWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, ValidJson};
use crate::loc;
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource::record("post", "/v1/events/ingest");
    cfg.service(
        web::resource("/v1/events/ingest")
            // A batch of up to 1,000 events: the bulk body limit
            // (`server.import_body_limit_bytes`).
            .app_data(crate::extract::json::BulkBody)
            .route(web::post().to(ingest_events)),
    );
    crate::resource!(cfg, "/v1/events/", { get => list });
    crate::resource!(cfg, "/v1/events/{id}", { get => get });
}

pub(crate) async fn ingest_events(
    auth: Auth<EventsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<Value>,
) -> ApiResult<web::Json<EventsIngestResponse>> {
    let events = new_events(&body.into_inner(), state.now())?;
    let done = ingest::ingest(&state, auth.subject(), events).await?;
    Ok(web::Json(EventsIngestResponse {
        inserted: done.inserted,
        duplicates: done.duplicates,
    }))
}

async fn view(
    state: &AppState,
    e: &crate::domain::usage_event::UsageEvent,
) -> ApiResult<EventView> {
    let customer = ingest::event_customer(state, e).await?;
    Ok(EventView::new(e, customer.as_ref()))
}

/// The list's query, Polar's names and errors.
fn event_filter(query: &str, q: &mut QueryParams) -> Result<EventFilter, ApiError> {
    let mut errors: Vec<FieldError> = Vec::new();
    let mut f = EventFilter {
        organization_ids: q.ids("organization_id"),
        customer_ids: q.ids("customer_id"),
        external_customer_ids: q.strings("external_customer_id"),
        meter_id: q.ids("meter_id").pop(),
        names: q.strings("name"),
        sources: q.enums(
            "source",
            &[("system", EventSource::System), ("user", EventSource::User)],
        ),
        parent_id: q.string("parent_id"),
        metadata: metadata_pairs(query),
        ..Default::default()
    };
    if let Some(raw) = q.string("start_timestamp") {
        f.start = query_datetime(&raw, "start_timestamp", &mut errors).map(|t| t.to_utc());
    }
    if let Some(raw) = q.string("end_timestamp") {
        f.end = query_datetime(&raw, "end_timestamp", &mut errors).map(|t| t.to_utc());
    }
    if let Some(d) = q.int("depth") {
        if !(0..=5).contains(&d) {
            errors.push(FieldError::new(
                if d < 0 {
                    "greater_than_equal"
                } else {
                    "less_than_equal"
                },
                loc!["query", "depth"],
                if d < 0 {
                    "Input should be greater than or equal to 0"
                } else {
                    "Input should be less than or equal to 5"
                },
                Value::from(d),
            ));
        }
    }
    if let Some(query) = q.string("query") {
        if f.organization_ids.is_empty() {
            errors.push(FieldError::new(
                "value_error",
                loc!["query", "query"],
                "Query is only supported when organization_id is provided.",
                Value::from(query.as_str()),
            ));
        } else if query.chars().count() < 3 {
            errors.push(FieldError::new(
                "query",
                loc!["query", "query"],
                "Query must be at least 3 characters.",
                Value::from(query.as_str()),
            ));
        }
        f.query = Some(query);
    }
    if let Some(raw) = q.string("filter") {
        match serde_json::from_str::<Value>(&raw) {
            Ok(v) => {
                let mut fe = Vec::new();
                let parsed: Option<Filter> =
                    crate::api::meter::parse_filter(&v, loc!["query", "filter"], &mut fe);
                errors.extend(fe);
                f.filter = parsed;
            }
            Err(e) => errors.push(FieldError::new(
                "json_invalid",
                loc!["query", "filter"],
                format!("Invalid JSON: {e}"),
                Value::from(raw.as_str()),
            )),
        }
    }
    match q.strings("sorting").last().map(String::as_str) {
        None | Some("-timestamp") => {}
        Some("timestamp") => f.ascending = true,
        Some(other) => errors.push(FieldError::new(
            "enum",
            loc!["query", "sorting", 0],
            "Input should be 'timestamp' or '-timestamp'",
            Value::from(other),
        )),
    }
    if errors.is_empty() {
        Ok(f)
    } else {
        Err(ApiError::Validation(errors))
    }
}

pub(crate) async fn list(
    auth: Auth<EventsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<actix_web::HttpResponse> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = event_filter(&query.0, &mut q);
    let cursor = q.bool("cursor_pagination").unwrap_or(false);
    // Hidden in Polar; accepted and ignored here.
    let _ = (q.strings("aggregate_fields"), q.string("event_type_id"));
    q.finish()?;
    let filter = filter?;
    let (events, total) = ingest::list(&state, auth.subject(), &filter, params).await?;
    let mut items = Vec::with_capacity(events.len());
    for e in &events {
        items.push(view(&state, e).await?);
    }
    if cursor {
        let has_next = params.offset() + (items.len() as u64) < total;
        return Ok(actix_web::HttpResponse::Ok().json(serde_json::json!({
            "items": items,
            "pagination": {"has_next_page": has_next},
        })));
    }
    Ok(actix_web::HttpResponse::Ok().json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(crate) async fn get(
    auth: Auth<EventsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<EventView>> {
    let id: EventId = path_id("id", &id)?;
    let e = ingest::get(&state, auth.subject(), id).await?;
    Ok(web::Json(view(&state, &e).await?))
}
