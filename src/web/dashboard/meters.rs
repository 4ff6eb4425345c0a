//! Meters (usage billing, issue 51): the list with this month's totals, a new meter, a
//! meter's page (its quantities over a range as an SVG bar chart, optionally for one
//! customer), editing it, and archiving or unarchiving it.
//!
//! Every page calls the meters' use cases (`crate::app::usage`) as the signed-in user:
//! tenancy, the frozen filter and aggregation of an aggregating meter, and the refusal to
//! archive a meter a price or benefit uses are theirs, shown next to the form.

use actix_web::{web, HttpRequest};
use askama::Template;
use chrono::{DateTime, Datelike, Duration, TimeZone, Timelike, Utc};
use serde::Deserialize;

use super::chart::{bars, Series};
use super::meters_form::{
    aggregation_words, filter_words, flat, quantity, MeterForm, Row, FUNCS, OPERATORS,
};
use super::{
    choices, fmt, form_refusal, of_org, posted, see_other, Dash, Fail, Layout, ListQuery,
    PageResult,
};
use crate::app::catalog::customers::{self, CustomerFilter, CustomerSort};
use crate::app::usage::{meters, quantities};
use crate::domain::customer::Customer;
use crate::domain::ids::{CustomerId, MeterId};
use crate::domain::meter::{Interval, Meter, MeterChange, MeterSort, QuantitiesQuery};
use crate::extract::{path_id, Sorting};
use crate::state::AppState;

/// A meter and what the list shows of it.
pub struct MeterLine {
    pub meter: Meter,
    pub filter: String,
    pub aggregation: String,
    /// The total of this calendar month (UTC).
    pub month_total: String,
}

#[derive(Template)]
#[template(path = "dashboard/meters.html")]
struct MetersPage {
    layout: Layout,
    q: ListQuery,
    lines: Vec<MeterLine>,
}

/// The first instant of `now`'s month (UTC).
fn month_start(now: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(now.year(), now.month(), 1, 0, 0, 0)
        .single()
        .unwrap_or(now)
}

/// The quantities of a meter over `[start, end]` by `interval` (UTC), for one customer or
/// all.
async fn series_of(
    dash: &Dash,
    meter: MeterId,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    interval: Interval,
    customer: Option<CustomerId>,
) -> Result<quantities::Quantities, Fail> {
    let q = QuantitiesQuery {
        start,
        end,
        interval,
        timezone: "UTC".into(),
        customer_ids: customer.map(|c| c.uuid()).into_iter().collect(),
        external_customer_ids: Vec::new(),
        customer_aggregation_function: None,
        metadata: Vec::new(),
    };
    Ok(quantities::quantities(&dash.state, dash.subject(), meter, &q).await?)
}

pub async fn meters_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "meters", "Meters").await?;
    let q = ListQuery::of(&req);
    let filter = meters::MeterFilter {
        organization_id: vec![layout.org],
        query: q.search(),
        is_archived: match q.archived.as_str() {
            "true" => Some(true),
            "all" => None,
            _ => Some(false),
        },
        metadata: Vec::new(),
        sorting: Sorting::by(MeterSort::Name, false),
    };
    let (found, _) = meters::list(&state, dash.subject(), &filter, choices()).await?;
    let now = state.now();
    let mut lines = Vec::with_capacity(found.len());
    for meter in found {
        let month = series_of(
            &dash,
            meter.id,
            month_start(now),
            now,
            Interval::Month,
            None,
        )
        .await?
        .total;
        lines.push(MeterLine {
            filter: filter_words(&meter.filter),
            aggregation: aggregation_words(&meter.aggregation),
            month_total: quantity(month),
            meter,
        });
    }
    dash.page(200, &MetersPage { layout, q, lines })
}

// ---------------------------------------------------------------------------------------
// The form: new and edit
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/meter_form.html")]
struct MeterFormPage {
    layout: Layout,
    /// The meter edited; `None`: a new one.
    meter: Option<Meter>,
    /// Whether filter and aggregation can be edited (a new meter, or one that counted no
    /// event yet and whose filter has no nested group).
    definition: bool,
    form: MeterForm,
    rows: Vec<Row>,
    operators: &'static [(&'static str, &'static str)],
    funcs: &'static [(&'static str, &'static str)],
    errors: Vec<String>,
    saved: bool,
}

impl MeterFormPage {
    fn new(layout: Layout, meter: Option<Meter>, form: MeterForm, errors: Vec<String>) -> Self {
        let definition = meter
            .as_ref()
            .is_none_or(|m| !m.aggregating && flat(&m.filter));
        MeterFormPage {
            layout,
            definition,
            rows: form.rows(),
            meter,
            form,
            operators: OPERATORS,
            funcs: FUNCS,
            errors,
            saved: false,
        }
    }

    fn filter_words(&self) -> String {
        self.meter
            .as_ref()
            .map(|m| filter_words(&m.filter))
            .unwrap_or_default()
    }

    fn aggregation_words(&self) -> String {
        self.meter
            .as_ref()
            .map(|m| aggregation_words(&m.aggregation))
            .unwrap_or_default()
    }
}

pub async fn meter_new(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "meters", "New meter").await?;
    dash.page(
        200,
        &MeterFormPage::new(layout, None, MeterForm::blank(), Vec::new()),
    )
}

pub async fn meter_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: MeterForm = posted(&bytes)?;
    let layout = dash.layout(&path, "meters", "New meter").await?;
    if form.edits_rows() {
        return dash.page(200, &MeterFormPage::new(layout, None, form, Vec::new()));
    }
    let new = match form.new_meter(layout.org.uuid()) {
        Ok(new) => new,
        Err(errors) => return dash.page(422, &MeterFormPage::new(layout, None, form, errors)),
    };
    match meters::create(&state, dash.subject(), new).await {
        Ok(m) => Ok(see_other(&layout.at(&format!("/meters/{}?saved=1", m.id)))),
        Err(e) => {
            let (status, errors) = form_refusal(e)?;
            dash.page(status, &MeterFormPage::new(layout, None, form, errors))
        }
    }
}

/// A meter of the page's organization (else 404).
async fn meter_of(dash: &Dash, layout: &Layout, id: &str) -> Result<Meter, Fail> {
    let id: MeterId = path_id("id", id)?;
    let meter = meters::get(&dash.state, dash.subject(), id).await?;
    of_org(layout, meter.organization_id, meter)
}

pub async fn meter_edit(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "meters", "Edit meter").await?;
    let meter = meter_of(&dash, &layout, &path.1).await?;
    let form = MeterForm::of(&meter);
    let mut page = MeterFormPage::new(layout, Some(meter), form, Vec::new());
    page.saved = ListQuery::of(&req).saved();
    dash.page(200, &page)
}

pub async fn meter_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: MeterForm = posted(&bytes)?;
    let layout = dash.layout(&path.0, "meters", "Edit meter").await?;
    let meter = meter_of(&dash, &layout, &path.1).await?;
    let page = MeterFormPage::new(layout, Some(meter.clone()), form.clone(), Vec::new());
    if form.edits_rows() {
        return dash.page(200, &page);
    }
    let change = match form.change(page.definition) {
        Ok(c) => c,
        Err(errors) => return dash.page(422, &MeterFormPage { errors, ..page }),
    };
    match meters::update(&state, dash.subject(), meter.id, change).await {
        Ok(m) => Ok(see_other(
            &page.layout.at(&format!("/meters/{}/edit?saved=1", m.id)),
        )),
        Err(e) => {
            let (status, errors) = form_refusal(e)?;
            dash.page(status, &MeterFormPage { errors, ..page })
        }
    }
}

// ---------------------------------------------------------------------------------------
// A meter's page: its chart
// ---------------------------------------------------------------------------------------

/// The ranges a meter's chart offers: (key, label, interval).
const RANGES: &[(&str, &str, Interval)] = &[
    ("24h", "Last 24 hours, by hour", Interval::Hour),
    ("7d", "Last 7 days, by hour", Interval::Hour),
    ("30d", "Last 30 days, by day", Interval::Day),
    ("12m", "Last 12 months, by month", Interval::Month),
];

/// The query of a meter's page.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MeterQuery {
    range: String,
    customer_id: String,
    saved: String,
}

/// The first point of a range ending at `now`, its interval and its points' labels.
fn range_start(key: &str, now: DateTime<Utc>) -> (DateTime<Utc>, Interval) {
    let hour = now
        .with_minute(0)
        .and_then(|t| t.with_second(0))
        .and_then(|t| t.with_nanosecond(0))
        .unwrap_or(now);
    let day = Utc
        .with_ymd_and_hms(now.year(), now.month(), now.day(), 0, 0, 0)
        .single()
        .unwrap_or(hour);
    match key {
        "24h" => (hour - Duration::hours(23), Interval::Hour),
        "7d" => (hour - Duration::hours(7 * 24 - 1), Interval::Hour),
        "12m" => {
            let first = month_start(now);
            let back = first
                .checked_sub_months(chrono::Months::new(11))
                .unwrap_or(first);
            (back, Interval::Month)
        }
        _ => (day - Duration::days(29), Interval::Day),
    }
}

fn label(t: &DateTime<Utc>, interval: Interval) -> String {
    match interval {
        Interval::Hour => t.format("%m-%d %H:00").to_string(),
        Interval::Month | Interval::Year => t.format("%Y-%m").to_string(),
        _ => t.format("%m-%d").to_string(),
    }
}

#[derive(Template)]
#[template(path = "dashboard/meter.html")]
struct MeterPage {
    layout: Layout,
    meter: Meter,
    filter: String,
    aggregation: String,
    ranges: Vec<(&'static str, &'static str)>,
    range: &'static str,
    range_label: &'static str,
    customers: Vec<Customer>,
    /// The customer the chart is for, if one.
    customer: Option<Customer>,
    chart: String,
    /// (label, quantity) of each point.
    points: Vec<(String, String)>,
    total: String,
    empty: bool,
    errors: Vec<String>,
    saved: bool,
}

pub async fn meter(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "meters", "Meter").await?;
    let meter = meter_of(&dash, &layout, &path.1).await?;
    let q: MeterQuery = serde_html_form::from_str(req.query_string()).unwrap_or_default();
    meter_page(&dash, layout, meter, &q, Vec::new(), 200).await
}

async fn meter_page(
    dash: &Dash,
    layout: Layout,
    meter: Meter,
    q: &MeterQuery,
    errors: Vec<String>,
    status: u16,
) -> PageResult {
    let state = &dash.state;
    let &(range, range_label, _) = RANGES.iter().find(|r| r.0 == q.range).unwrap_or(&RANGES[2]);
    // A customer of this organization, else 404 (like any record of another one).
    let customer = match q.customer_id.trim() {
        "" => None,
        raw => {
            let id: CustomerId = path_id("customer_id", raw)?;
            let c = customers::get(state, dash.subject(), id).await?;
            Some(of_org(&layout, c.organization_id, c)?)
        }
    };
    let now = state.now();
    let (start, interval) = range_start(range, now);
    let found = series_of(
        dash,
        meter.id,
        start,
        now,
        interval,
        customer.as_ref().map(|c| c.id),
    )
    .await?;
    let labels: Vec<String> = found
        .quantities
        .iter()
        .map(|(t, _)| label(t, interval))
        .collect();
    let values: Vec<f64> = found.quantities.iter().map(|(_, v)| *v).collect();
    let empty = values.iter().all(|v| *v == 0.0);
    let title = match &customer {
        Some(c) => format!(
            "{} of {}, {}",
            meter.name,
            c.email,
            range_label.to_lowercase()
        ),
        None => format!("{}, {}", meter.name, range_label.to_lowercase()),
    };
    let chart = bars(
        &title,
        &labels,
        &[Series {
            name: "quantity",
            color: "#2457d6",
            values: values.clone(),
        }],
        &|v| quantity(v),
    );
    let points = labels
        .into_iter()
        .zip(values.iter().map(|v| quantity(*v)))
        .collect();
    let (customers, _) = customers::list(
        state,
        dash.subject(),
        &CustomerFilter {
            organization_id: vec![layout.org],
            sorting: Sorting::by(CustomerSort::CreatedAt, true),
            ..CustomerFilter::default()
        },
        choices(),
    )
    .await?;
    dash.page(
        status,
        &MeterPage {
            layout: Layout {
                title: meter.name.clone(),
                ..layout
            },
            filter: filter_words(&meter.filter),
            aggregation: aggregation_words(&meter.aggregation),
            meter,
            ranges: RANGES.iter().map(|r| (r.0, r.1)).collect(),
            range,
            range_label,
            customers,
            customer,
            chart,
            points,
            total: quantity(found.total),
            empty,
            errors,
            saved: !q.saved.is_empty(),
        },
    )
}

/// The archive form: `archived` is `true` or `false`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ArchiveForm {
    archived: String,
}

pub async fn meter_archive(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: ArchiveForm = posted(&bytes)?;
    let layout = dash.layout(&path.0, "meters", "Meter").await?;
    let meter = meter_of(&dash, &layout, &path.1).await?;
    let change = MeterChange {
        is_archived: Some(form.archived == "true"),
        ..MeterChange::default()
    };
    match meters::update(&state, dash.subject(), meter.id, change).await {
        Ok(m) => Ok(see_other(&layout.at(&format!("/meters/{}?saved=1", m.id)))),
        Err(e) => {
            let (status, errors) = form_refusal(e)?;
            meter_page(&dash, layout, meter, &MeterQuery::default(), errors, status).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_have_their_number_of_points() {
        use crate::app::usage::series::series;
        let now = Utc.with_ymd_and_hms(2026, 3, 15, 10, 20, 0).unwrap();
        for (key, n) in [("24h", 24), ("7d", 168), ("30d", 30), ("12m", 12)] {
            let (start, interval) = range_start(key, now);
            assert!(crate::domain::meter::under_limits(
                start.fixed_offset(),
                now.fixed_offset(),
                interval
            ));
            assert_eq!(
                series(start, now, interval, chrono_tz::Tz::UTC).len(),
                n,
                "{key}"
            );
        }
        assert_eq!(label(&now, Interval::Hour), "03-15 10:00");
        assert_eq!(label(&now, Interval::Month), "2026-03");
    }
}
