//! The operations of usage billing (`polar-2026.md` §7.1–7.4): events, meters, their
//! quantities and the customer meters (merchant and portal).
#![allow(dead_code)] // Documentation stubs: described, never called.

use crate::api::customer_meter::{CustomerMeterView, PortalCustomerMeterView};
use crate::api::event::{EventView, EventsIngest, EventsIngestResponse};
use crate::api::meter::{MeterCreate, MeterQuantities, MeterUpdate, MeterView};
use crate::api::ListResource;

/// Ingest events: all or nothing (one 422 names every problem of every event), at most
/// 1,000 per request. An event given an `external_id` that the organization already has is
/// counted in `duplicates`, not inserted again. Answers once the events are durable.
#[utoipa::path(post, path = "/v1/events/ingest", tag = "events",
    request_body = EventsIngest,
    security(("bearer" = ["events:write"])),
    responses((status = 200, body = EventsIngestResponse)))]
pub(super) fn events_ingest() {}

/// List events, newest first (`sorting=timestamp`: oldest first); `total_count` is exact.
/// `cursor_pagination=true` answers `{"items", "pagination": {"has_next_page"}}`.
#[utoipa::path(get, path = "/v1/events/", tag = "events",
    params(
        ("filter" = Option<String>, Query, description = "A meter filter, as JSON."),
        ("start_timestamp" = Option<String>, Query), ("end_timestamp" = Option<String>, Query),
        ("organization_id" = Option<Vec<uuid::Uuid>>, Query),
        ("customer_id" = Option<Vec<uuid::Uuid>>, Query),
        ("external_customer_id" = Option<Vec<String>>, Query),
        ("meter_id" = Option<uuid::Uuid>, Query),
        ("name" = Option<Vec<String>>, Query),
        ("source" = Option<Vec<String>>, Query, description = "`system` or `user`."),
        ("query" = Option<String>, Query, description = "With `organization_id`, 3 characters at least."),
        ("parent_id" = Option<String>, Query),
        ("depth" = Option<i64>, Query),
        ("sorting" = Option<Vec<String>>, Query),
        ("cursor_pagination" = Option<bool>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["events:read"])),
    responses((status = 200, body = ListResource<EventView>)))]
pub(super) fn events_list() {}

/// Get an event (the ingestions so far included).
#[utoipa::path(get, path = "/v1/events/{id}", tag = "events",
    params(("id" = uuid::Uuid, Path)),
    security(("bearer" = ["events:read"])),
    responses((status = 200, body = EventView)))]
pub(super) fn events_get() {}

/// List meters.
#[utoipa::path(get, path = "/v1/meters/", tag = "meters",
    params(
        ("organization_id" = Option<Vec<uuid::Uuid>>, Query),
        ("query" = Option<String>, Query, description = "Part of the name."),
        ("is_archived" = Option<bool>, Query),
        ("sorting" = Option<Vec<String>>, Query, description = "`created_at`, `name`, `-` for descending."),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["meters:read"])),
    responses((status = 200, body = ListResource<MeterView>)))]
pub(super) fn meters_list() {}

/// Create a meter.
#[utoipa::path(post, path = "/v1/meters/", tag = "meters",
    request_body = MeterCreate,
    security(("bearer" = ["meters:write"])),
    responses((status = 201, body = MeterView)))]
pub(super) fn meters_create() {}

/// Get a meter.
#[utoipa::path(get, path = "/v1/meters/{id}", tag = "meters",
    params(("id" = uuid::Uuid, Path)),
    security(("bearer" = ["meters:read"])),
    responses((status = 200, body = MeterView)))]
pub(super) fn meters_get() {}

/// Update a meter; `is_archived` archives or unarchives it. Its filter and aggregation are
/// frozen once it counted an event.
#[utoipa::path(patch, path = "/v1/meters/{id}", tag = "meters",
    params(("id" = uuid::Uuid, Path)),
    request_body = MeterUpdate,
    security(("bearer" = ["meters:write"])),
    responses((status = 200, body = MeterView)))]
pub(super) fn meters_update() {}

/// A meter's quantities over a range, one entry per interval point, in a time zone.
#[utoipa::path(get, path = "/v1/meters/{id}/quantities", tag = "meters",
    params(
        ("id" = uuid::Uuid, Path),
        ("start_timestamp" = String, Query, description = "Aware, not before 2023-01-01."),
        ("end_timestamp" = String, Query),
        ("interval" = String, Query, description = "`year`, `month`, `week`, `day` or `hour`."),
        ("timezone" = Option<String>, Query, description = "IANA name; `UTC` by default."),
        ("customer_id" = Option<Vec<uuid::Uuid>>, Query),
        ("external_customer_id" = Option<Vec<String>>, Query),
        ("customer_aggregation_function" = Option<String>, Query),
    ),
    security(("bearer" = ["meters:read"])),
    responses((status = 200, body = MeterQuantities)))]
pub(super) fn meters_quantities() {}

/// List customer meters (archived meters only when named by `meter_id`).
#[utoipa::path(get, path = "/v1/customer-meters/", tag = "customer-meters",
    params(
        ("organization_id" = Option<Vec<uuid::Uuid>>, Query),
        ("customer_id" = Option<Vec<uuid::Uuid>>, Query),
        ("external_customer_id" = Option<Vec<String>>, Query),
        ("meter_id" = Option<Vec<uuid::Uuid>>, Query),
        ("sorting" = Option<Vec<String>>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["customer_meters:read"])),
    responses((status = 200, body = ListResource<CustomerMeterView>)))]
pub(super) fn customer_meters_list() {}

/// Get a customer meter.
#[utoipa::path(get, path = "/v1/customer-meters/{id}", tag = "customer-meters",
    params(("id" = uuid::Uuid, Path)),
    security(("bearer" = ["customer_meters:read"])),
    responses((status = 200, body = CustomerMeterView)))]
pub(super) fn customer_meters_get() {}

/// The session customer's meters.
#[utoipa::path(get, path = "/v1/customer-portal/meters/", tag = "customer-portal",
    params(
        ("meter_id" = Option<Vec<uuid::Uuid>>, Query),
        ("query" = Option<String>, Query, description = "Part of the meter's name."),
        ("sorting" = Option<Vec<String>>, Query),
        ("page" = Option<u32>, Query), ("limit" = Option<u32>, Query),
    ),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = ListResource<PortalCustomerMeterView>)))]
pub(super) fn portal_meters_list() {}

/// One of the session customer's meters.
#[utoipa::path(get, path = "/v1/customer-portal/meters/{id}", tag = "customer-portal",
    params(("id" = uuid::Uuid, Path)),
    security(("bearer" = ["customer_portal:read"])),
    responses((status = 200, body = PortalCustomerMeterView)))]
pub(super) fn portal_meters_get() {}
