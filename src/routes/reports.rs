//! `/v1/reports/*`: the tax reports as CSV (`crate::app::tax_reports`), with the header
//! `country,rate,taxable_amount,tax_amount,currency`: one row per country, rate and
//! currency, the rate as a percentage (`19`, `25.5`), amounts in the currency's major
//! unit (`1234.56`), refunds netted.
//!
//! * `GET /v1/reports/oss?organization_id=&year=&quarter=`: the EU One-Stop-Shop return;
//! * `GET /v1/reports/tax?organization_id=&start=&end=`: every tax line of the period
//!   (`start` included, `end` excluded; dates `2026-01-01` or date-times with an offset).
//!
//! `orders:read`; another organization's report is 404.

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::Value;

use crate::app::tax_reports::{self, ReportRow};
use crate::domain::ids::OrganizationId;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::auth::OrdersRead;
use crate::extract::{Auth, QueryParams, RawQuery};
use crate::loc;
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/reports/oss", { get => oss });
    crate::resource!(cfg, "/v1/reports/tax", { get => tax });
}

fn answer(name: String, rows: &[ReportRow]) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        ))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .body(tax_reports::csv(rows)?))
}

/// Pydantic's `missing` at `["query", key]`.
fn missing(q: &mut QueryParams, key: &str) {
    q.push_error(FieldError::new(
        "missing",
        loc!["query", key],
        "Field required",
        Value::Null,
    ));
}

/// A whole number in `range`, else a 422 at `["query", key]` (missing: `Field required`).
fn bounded(q: &mut QueryParams, key: &str, range: std::ops::RangeInclusive<i64>) -> Option<i64> {
    match q.int(key) {
        Some(v) if range.contains(&v) => Some(v),
        Some(v) => {
            q.push_error(
                FieldError::new(
                    "less_than_equal",
                    loc!["query", key],
                    format!(
                        "Input should be between {} and {}",
                        range.start(),
                        range.end()
                    ),
                    Value::from(v),
                )
                .with_ctx(serde_json::json!({"ge": range.start(), "le": range.end()})),
            );
            None
        }
        None => {
            if q.string(key).is_none() {
                missing(q, key);
            }
            None
        }
    }
}

async fn oss(
    auth: Auth<OrdersRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<HttpResponse> {
    let mut q = QueryParams::parse(&query.0);
    let org: Option<OrganizationId> = q.required_id("organization_id");
    let year = bounded(&mut q, "year", 2000..=2200);
    let quarter = bounded(&mut q, "quarter", 1..=4);
    q.finish()?;
    let (Some(org), Some(year), Some(quarter)) = (org, year, quarter) else {
        return Err(ApiError::BadRequest(
            "organization_id, year and quarter".into(),
        ));
    };
    let (year, quarter) = (year as i32, quarter as u32);
    let rows = tax_reports::oss(&state, auth.subject(), org, year, quarter).await?;
    answer(format!("oss-{year}-Q{quarter}.csv"), &rows)
}

/// A date (`2026-01-01`: its first instant, UTC) or a date-time with an offset.
fn instant(q: &mut QueryParams, key: &str) -> Option<DateTime<Utc>> {
    let Some(raw) = q.string(key) else {
        missing(q, key);
        return None;
    };
    let raw = raw.trim().to_string();
    if let Ok(d) = NaiveDate::parse_from_str(&raw, "%Y-%m-%d") {
        return d.and_hms_opt(0, 0, 0).map(|t| t.and_utc());
    }
    match DateTime::parse_from_rfc3339(&raw) {
        Ok(at) => Some(at.with_timezone(&Utc)),
        Err(_) => {
            q.push_error(FieldError::new(
                "datetime_from_date_parsing",
                loc!["query", key],
                "Input should be a date (YYYY-MM-DD) or a datetime with a UTC offset",
                Value::String(raw),
            ));
            None
        }
    }
}

async fn tax(
    auth: Auth<OrdersRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<HttpResponse> {
    let mut q = QueryParams::parse(&query.0);
    let org: Option<OrganizationId> = q.required_id("organization_id");
    let start = instant(&mut q, "start");
    let end = instant(&mut q, "end");
    if let (Some(s), Some(e)) = (start, end) {
        if s >= e {
            q.push_error(FieldError::new(
                "value_error",
                loc!["query", "end"],
                "The end must be after the start",
                Value::String(e.to_rfc3339()),
            ));
        }
    }
    q.finish()?;
    let (Some(org), Some(start), Some(end)) = (org, start, end) else {
        return Err(ApiError::BadRequest(
            "organization_id, start and end".into(),
        ));
    };
    let rows = tax_reports::summary(&state, auth.subject(), org, start, end).await?;
    answer(
        format!(
            "tax-{}-{}.csv",
            start.format("%Y-%m-%d"),
            end.format("%Y-%m-%d")
        ),
        &rows,
    )
}
