//! The tax reports (`/dashboard/{org}/tax/reports`): a quarter's EU One-Stop-Shop return
//! and every tax line of the same quarter, as tables, each with its CSV (the same files as
//! `GET /v1/reports/oss` and `/v1/reports/tax`, `crate::app::tax_reports`, with the
//! seller's session).

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use super::{Dash, Layout, PageResult};
use crate::app::tax_reports::{self, quarter_bounds, ReportRow};
use crate::domain::money::Money;
use crate::domain::tax_breakdown::percent;
use crate::error::ApiError;
use crate::extract::QueryParams;
use crate::state::AppState;

/// One row as the table shows it.
struct Row {
    country: String,
    rate: String,
    taxable: String,
    tax: String,
    currency: String,
}

impl From<&ReportRow> for Row {
    fn from(r: &ReportRow) -> Row {
        Row {
            country: r.country.clone(),
            rate: format!("{} %", percent(r.rate_ppm)),
            taxable: Money::new(r.taxable_amount, &r.currency).major(),
            tax: Money::new(r.tax_amount, &r.currency).major(),
            currency: r.currency.clone(),
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/tax_reports.html")]
struct ReportsPage {
    layout: Layout,
    year: i32,
    quarter: u32,
    years: Vec<i32>,
    oss: Vec<Row>,
    all: Vec<Row>,
    oss_csv: String,
    tax_csv: String,
}

/// The quarter the query asks for (`year`, `quarter`), else the current one; a quarter
/// that does not exist is a 422 page.
fn quarter_of(state: &AppState, req: &HttpRequest) -> Result<(i32, u32), ApiError> {
    let mut q = QueryParams::parse(req.query_string());
    let (now_year, now_quarter) = tax_reports::current_quarter(state.now());
    let year = q.int("year").map_or(now_year, |y| y as i32);
    let quarter = q
        .int("quarter")
        .map_or(now_quarter, |n| n.clamp(0, 5) as u32);
    q.finish()?;
    quarter_bounds(year, quarter)?;
    Ok((year, quarter))
}

pub async fn reports(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let (layout, org) = dash.org_layout(&path, "tax", "Tax reports").await?;
    let (year, quarter) = quarter_of(&state, &req)?;
    let (start, end) = quarter_bounds(year, quarter)?;
    let oss = tax_reports::oss(&state, dash.subject(), org.id, year, quarter).await?;
    let all = tax_reports::summary(&state, dash.subject(), org.id, start, end).await?;
    let (now_year, _) = tax_reports::current_quarter(state.now());
    let page = ReportsPage {
        oss_csv: layout.at(&format!(
            "/tax/reports/oss.csv?year={year}&quarter={quarter}"
        )),
        tax_csv: layout.at(&format!(
            "/tax/reports/tax.csv?start={}&end={}",
            start.format("%Y-%m-%d"),
            end.format("%Y-%m-%d")
        )),
        layout,
        year,
        quarter,
        years: (2020..=now_year.max(year)).rev().collect(),
        oss: oss.iter().map(Row::from).collect(),
        all: all.iter().map(Row::from).collect(),
    };
    dash.page(200, &page)
}

fn csv_file(name: String, rows: &[ReportRow]) -> PageResult {
    Ok(HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        ))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .body(tax_reports::csv(rows)?))
}

pub async fn oss_csv(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let (_, org) = dash.org_layout(&path, "tax", "Tax reports").await?;
    let (year, quarter) = quarter_of(&state, &req)?;
    let rows = tax_reports::oss(&state, dash.subject(), org.id, year, quarter).await?;
    csv_file(format!("oss-{year}-Q{quarter}.csv"), &rows)
}

pub async fn tax_csv(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let (_, org) = dash.org_layout(&path, "tax", "Tax reports").await?;
    let mut q = QueryParams::parse(req.query_string());
    let day = |q: &mut QueryParams, key: &str| {
        q.string(key)
            .and_then(|d| chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").ok())
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc())
    };
    let (start, end) = (day(&mut q, "start"), day(&mut q, "end"));
    q.finish()?;
    let (Some(start), Some(end)) = (start, end) else {
        return Err(ApiError::BadRequest("start and end: dates such as 2026-01-01".into()).into());
    };
    let rows = tax_reports::summary(&state, dash.subject(), org.id, start, end).await?;
    csv_file(
        format!(
            "tax-{}-{}.csv",
            start.format("%Y-%m-%d"),
            end.format("%Y-%m-%d")
        ),
        &rows,
    )
}
