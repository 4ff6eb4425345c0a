//! The CSV exports (`crate::routes::exports`): Polar's order, subscription and customer
//! exports, and Tollgate's own license-key export. Each answers `text/csv`, streamed.
#![allow(dead_code)] // Documentation stubs: described, never called.

/// Export orders as a CSV file (newest first). Amounts are `cents / 100`, dates ISO 8601 in
/// `timezone`; a text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is
/// sent with a leading `'` (no spreadsheet runs it as a formula).
#[utoipa::path(get, path = "/v1/orders/export", tag = "orders",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query, description = "Filter by organization ID."),
        ("product_id" = Option<Vec<Uuid>>, Query, description = "Filter by product ID."),
        ("status" = Option<Vec<String>>, Query, description = "Filter by order status: `draft`, `pending`, `paid`, `refunded`, `partially_refunded`, `void`."),
        ("created_after" = Option<String>, Query, description = "Only orders created after this date-time; must include a UTC offset."),
        ("created_before" = Option<String>, Query, description = "Only orders created before this date-time; must include a UTC offset."),
        ("timezone" = Option<String>, Query, description = "IANA time zone the dates are rendered in (default `UTC`)."),
        ("columns" = Option<Vec<String>>, Query, description = "Columns, in order: `email`, `created_at`, `product`, `net_amount`, `currency`, `status`, `invoice_number` (the default), `customer_name`, `billing_name`, `billing_country`, `subtotal_amount`, `discount_amount`, `tax_amount`, `total_amount`, `refunded_amount`, `billing_reason`."),
    ),
    security(("bearer" = ["orders:read"])),
    responses((status = 200, description = "The orders", content_type = "text/csv", body = String)))]
fn orders_export() {}

/// Export subscriptions as a CSV file (the latest started first), as the order export.
#[utoipa::path(get, path = "/v1/subscriptions/export", tag = "subscriptions",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query, description = "Filter by organization ID."),
        ("product_id" = Option<Vec<Uuid>>, Query, description = "Filter by product ID."),
        ("status" = Option<Vec<String>>, Query, description = "Filter by subscription status."),
        ("cancel_at_period_end" = Option<bool>, Query, description = "Filter by subscriptions set to cancel at period end."),
        ("started_after" = Option<String>, Query, description = "Only subscriptions started after this date-time; must include a UTC offset."),
        ("started_before" = Option<String>, Query, description = "Only subscriptions started before this date-time; must include a UTC offset."),
        ("timezone" = Option<String>, Query, description = "IANA time zone the dates are rendered in (default `UTC`)."),
        ("columns" = Option<Vec<String>>, Query, description = "Columns, in order: `email`, `started_at`, `product`, `amount`, `currency`, `status`, `recurring_interval` (the default), `customer_name`, `billing_name`, `billing_country`, `net_amount`, `discount`, `seats`, `current_period_start`, `current_period_end`, `cancel_at_period_end`, `canceled_at`, `ends_at`, `ended_at`, `cancellation_reason`, `trial_start`, `trial_end`."),
    ),
    security(("bearer" = ["subscriptions:read", "subscriptions:write"])),
    responses((status = 200, description = "The subscriptions", content_type = "text/csv", body = String)))]
fn subscriptions_export() {}

/// Export customers as a CSV file (newest first; Polar's fixed columns: ID, External ID,
/// Created At, Email, Name, Tax ID, the billing address's parts, Metadata as JSON).
#[utoipa::path(get, path = "/v1/customers/export", tag = "customers",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query, description = "Filter by organization ID."),
        ("timezone" = Option<String>, Query, description = "Tollgate's addition: IANA time zone of Created At (default `UTC`)."),
    ),
    security(("bearer" = ["customers:read", "customers:write"])),
    responses((status = 200, description = "The customers", content_type = "text/csv", body = String)))]
fn customers_export() {}

/// Export license keys as a CSV file (newest first). Tollgate's own: Polar has no such
/// export. The key itself is never in it, only its masked form (`****-` and its last six
/// characters).
#[utoipa::path(get, path = "/v1/license-keys/export", tag = "license-keys",
    params(
        ("organization_id" = Option<Vec<Uuid>>, Query, description = "Filter by organization ID."),
        ("benefit_id" = Option<Vec<Uuid>>, Query, description = "Filter by benefit ID."),
        ("status" = Option<Vec<String>>, Query, description = "Filter by status: `granted`, `revoked`, `disabled`."),
        ("timezone" = Option<String>, Query, description = "IANA time zone the dates are rendered in (default `UTC`)."),
        ("columns" = Option<Vec<String>>, Query, description = "Columns, in order (all by default): `id`, `display_key`, `email`, `benefit`, `status`, `usage`, `limit_usage`, `validations`, `limit_activations`, `activations`, `expires_at`, `created_at`, `last_validated_at`."),
    ),
    security(("bearer" = ["license_keys:read", "license_keys:write"])),
    responses((status = 200, description = "The license keys", content_type = "text/csv", body = String)))]
fn license_keys_export() {}

/// The EU One-Stop-Shop return of a quarter as CSV (`country,rate,taxable_amount,tax_amount,
/// currency`): one row per member state, rate and currency of the sales under the EU
/// schemes, refunds netted in the quarter they were made; the rate as a percentage, amounts
/// in the currency's major unit, not converted.
#[utoipa::path(get, path = "/v1/reports/oss", tag = "orders",
    params(
        ("organization_id" = Uuid, Query),
        ("year" = i32, Query, description = "2000 to 2200."),
        ("quarter" = u32, Query, description = "1 to 4."),
    ),
    security(("bearer" = ["orders:read"])),
    responses(
        (status = 200, description = "The return", content_type = "text/csv", body = String),
        (status = 404, description = "Not an organization the token reaches", body = crate::error::ErrorBody),
        (status = 422, description = "A missing or out-of-range parameter", body = crate::error::ValidationErrorBody),
))]
fn reports_oss() {}

/// Every tax line of a period as CSV (the same columns as the OSS return): each country,
/// rate and currency, whatever the scheme (domestic sales, reverse-charged ones at rate 0,
/// other countries' registrations), refunds netted.
#[utoipa::path(get, path = "/v1/reports/tax", tag = "orders",
    params(
        ("organization_id" = Uuid, Query),
        ("start" = String, Query, description = "The first day (`2026-01-01`) or instant (with a UTC offset), included."),
        ("end" = String, Query, description = "The day or instant the period ends, excluded."),
    ),
    security(("bearer" = ["orders:read"])),
    responses(
        (status = 200, description = "The summary", content_type = "text/csv", body = String),
        (status = 404, description = "Not an organization the token reaches", body = crate::error::ErrorBody),
        (status = 422, description = "A missing parameter, or an end not after the start", body = crate::error::ValidationErrorBody),
))]
fn reports_tax() {}
