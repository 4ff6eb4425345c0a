//! The way in (`/dashboard`), organizations (create, settings, switch) and the overview
//! with its charts.

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::chart::{bars, Series};
use super::{fmt, form_problem, posted, see_other, Dash, Layout, ListQuery, PageResult};
use crate::domain::currency::Currency;
use crate::domain::ids::OrganizationId;
use crate::domain::organization::Organization;
use crate::domain::stats::{day_date, day_number};
use crate::extract::path_id;
use crate::state::AppState;
use crate::web::dashboard::forms::{self, ticked, OrganizationForm, SettingsForm};
use tollgate_actors::domain::money::Money;

/// `GET /dashboard`: the first organization's overview, or the form to create one.
pub async fn home(state: web::Data<AppState>, req: HttpRequest) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    // The organization switcher: `?org=` (an id, so the redirect stays in the dashboard).
    let q = ListQuery::of(&req);
    if !q.org.trim().is_empty() {
        let id: OrganizationId = path_id("org", q.org.trim())?;
        return Ok(see_other(&format!("/dashboard/{id}")));
    }
    let orgs = dash.organizations().await?;
    Ok(match orgs.first() {
        Some(org) => see_other(&format!("/dashboard/{}", org.id)),
        None => see_other("/dashboard/organizations/new"),
    })
}

#[derive(Template)]
#[template(path = "dashboard/org_new.html")]
struct OrgNewPage {
    layout: Layout,
    form: OrganizationForm,
    errors: Vec<String>,
}

pub async fn org_new(state: web::Data<AppState>, req: HttpRequest) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.bare_layout("new-org", "New organization").await?;
    dash.page(
        200,
        &OrgNewPage {
            layout,
            form: OrganizationForm::default(),
            errors: Vec::new(),
        },
    )
}

pub async fn org_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: OrganizationForm = posted(&bytes)?;
    match forms::create_organization(&state, dash.subject(), &form).await {
        Ok(org) => Ok(see_other(&format!("/dashboard/{}", org.id))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let layout = dash.bare_layout("new-org", "New organization").await?;
            dash.page(
                status,
                &OrgNewPage {
                    layout,
                    form,
                    errors,
                },
            )
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/settings.html")]
struct SettingsPage {
    layout: Layout,
    org: Organization,
    form: SettingsForm,
    errors: Vec<String>,
    saved: bool,
}

impl SettingsPage {
    fn multiple(&self) -> bool {
        ticked(&self.form.allow_multiple_subscriptions)
    }

    fn customer_updates(&self) -> bool {
        ticked(&self.form.allow_customer_updates)
    }

    fn new_order_emails(&self) -> bool {
        ticked(&self.form.new_order_emails)
    }

    fn revoke_on_full_refund(&self) -> bool {
        ticked(&self.form.revoke_on_full_refund)
    }

    fn portal(&self, which: &str) -> bool {
        ticked(match which {
            "usage_show" => &self.form.portal_usage_show,
            "update_seats" => &self.form.portal_update_seats,
            _ => &self.form.portal_update_plan,
        })
    }
}

pub async fn settings(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let (layout, org) = dash.org_layout(&path, "settings", "Settings").await?;
    dash.page(
        200,
        &SettingsPage {
            layout,
            form: SettingsForm::of(&org),
            org,
            errors: Vec::new(),
            saved: ListQuery::of(&req).saved(),
        },
    )
}

pub async fn settings_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: SettingsForm = posted(&bytes)?;
    let (layout, org) = dash.org_layout(&path, "settings", "Settings").await?;
    match forms::update_settings(&state, dash.subject(), &org, &form).await {
        Ok(_) => Ok(see_other(&layout.at("/settings?saved=1"))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            dash.page(
                status,
                &SettingsPage {
                    layout,
                    org,
                    form,
                    errors,
                    saved: false,
                },
            )
        }
    }
}

// ---------------------------------------------------------------------------------------
// Overview and charts
// ---------------------------------------------------------------------------------------

/// The ranges a seller can pick (days, ending today).
const RANGES: &[i64] = &[7, 30, 90, 365];
/// The longest range of days a chart shows.
const MAX_DAYS: i64 = 366;
/// How far back a range may start (the active-subscription total is counted back from
/// today, one record per day).
const MAX_BACK_DAYS: i64 = 3 * 366;

/// The overview's query: a preset range (`days`) or dates.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct OverviewQuery {
    days: String,
    from: String,
    to: String,
}

/// The days a chart covers, as day numbers `(from, to)`: `from`/`to` dates
/// (`YYYY-MM-DD`, either may be left out: `to` is then today and `from` 29 days before
/// `to`) or one of [`RANGES`] ending today (`days`, default 30). A range must run forward,
/// end by today, span at most [`MAX_DAYS`] and start at most [`MAX_BACK_DAYS`] ago.
fn chart_range(q: &OverviewQuery, today: i64) -> Result<(i64, i64), String> {
    let date = |name: &str, value: &str| -> Result<Option<i64>, String> {
        match Some(value.trim()).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(d) => chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
                .map(|d| Some(day_number(d.and_time(chrono::NaiveTime::MIN).and_utc())))
                .map_err(|_| format!("{name}: enter a date as YYYY-MM-DD")),
        }
    };
    let (from, to) = (date("from", &q.from)?, date("to", &q.to)?);
    if from.is_none() && to.is_none() {
        let days = Some(q.days.trim())
            .and_then(|d| d.parse::<i64>().ok())
            .filter(|d| RANGES.contains(d))
            .unwrap_or(30);
        return Ok((today - days + 1, today));
    }
    let to = to.unwrap_or(today);
    let from = from.unwrap_or(to - 29);
    if from > to {
        return Err("The range must start before it ends.".into());
    }
    if to > today {
        return Err("The range must end by today.".into());
    }
    if to - from + 1 > MAX_DAYS {
        return Err(format!("A range spans at most {MAX_DAYS} days."));
    }
    if today - from > MAX_BACK_DAYS {
        return Err(format!("A range starts at most {MAX_BACK_DAYS} days ago."));
    }
    Ok((from, to))
}

#[derive(Template)]
#[template(path = "dashboard/overview.html")]
struct OverviewPage {
    layout: Layout,
    days: i64,
    ranges: &'static [i64],
    /// The range shown, for the date inputs.
    from_date: String,
    to_date: String,
    /// Why the range asked for was not shown (the default one is).
    range_error: Option<String>,
    revenue_total: String,
    orders_total: u64,
    active_now: i64,
    validations_total: u64,
    refused_total: u64,
    revenue_chart: String,
    orders_chart: String,
    subscriptions_chart: String,
    validations_chart: String,
}

pub async fn overview(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "overview", "Overview").await?;
    let org = layout.org;
    let q: OverviewQuery = serde_html_form::from_str(req.query_string()).unwrap_or_default();
    let today = day_number(state.now());
    let (range, range_error) = match chart_range(&q, today) {
        Ok(range) => (range, None),
        Err(why) => ((today - 29, today), Some(why)),
    };
    let (from, to) = range;
    let days = to - from + 1;
    let points =
        crate::stats::days(&state.store, &state.validation_counts, org, from, to, today).await?;
    let labels: Vec<String> = points
        .iter()
        .map(|p| day_date(p.day).format("%b %d").to_string())
        .collect();
    // Whole counts print without decimals; an axis half-way mark may need one (0.5, 2.5).
    let count = |v: f64| {
        if v.fract().abs() < 1e-9 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    };
    // Each currency sold in the range: its own total and chart (amounts of two
    // currencies never add up), the default currency first.
    let mut currencies: Vec<Currency> = points
        .iter()
        .flat_map(|p| p.revenue.keys().copied())
        .collect();
    let default = crate::app::catalog::organizations::default_currency(&state, org).await?;
    currencies.sort_by_key(|c| (*c != default, *c));
    currencies.dedup();
    if currencies.is_empty() {
        currencies.push(default);
    }
    let revenue_in = |p: &crate::stats::DayPoint, c: Currency| p.revenue.get(&c).copied();
    let revenue_chart: String = currencies
        .iter()
        .map(|&c| {
            let title = match currencies.len() {
                1 => "Revenue per day".to_string(),
                _ => format!("Revenue per day ({})", c.code().to_ascii_uppercase()),
            };
            bars(
                &title,
                &labels,
                &[Series {
                    name: "revenue",
                    color: "#2457d6",
                    values: points
                        .iter()
                        .map(|p| revenue_in(p, c).unwrap_or(0) as f64)
                        .collect(),
                }],
                &|v: f64| money(v.round() as i64, c),
            )
        })
        .collect();
    let revenue_total = currencies
        .iter()
        .map(|&c| {
            let total = points.iter().filter_map(|p| revenue_in(p, c)).sum();
            money(total, c)
        })
        .collect::<Vec<_>>()
        .join(" · ");
    let orders_chart = bars(
        "Orders per day",
        &labels,
        &[Series {
            name: "orders",
            color: "#7048e8",
            values: points.iter().map(|p| p.orders as f64).collect(),
        }],
        &count,
    );
    let subscriptions_chart = bars(
        "Active subscriptions",
        &labels,
        &[Series {
            name: "active",
            color: "#1098ad",
            values: points
                .iter()
                .map(|p| p.active_subscriptions as f64)
                .collect(),
        }],
        &count,
    );
    let validations_chart = bars(
        "License validations per day",
        &labels,
        &[
            Series {
                name: "succeeded",
                color: "#2f9e44",
                values: points
                    .iter()
                    .map(|p| p.validations_succeeded as f64)
                    .collect(),
            },
            Series {
                name: "refused",
                color: "#d6336c",
                values: points
                    .iter()
                    .map(|p| p.validations_refused as f64)
                    .collect(),
            },
        ],
        &count,
    );
    let page = OverviewPage {
        days,
        ranges: RANGES,
        from_date: day_date(from).to_string(),
        to_date: day_date(to).to_string(),
        range_error: range_error.clone(),
        revenue_total,
        orders_total: points.iter().map(|p| p.orders).sum(),
        active_now: points.last().map_or(0, |p| p.active_subscriptions),
        validations_total: points.iter().map(|p| p.validations_succeeded).sum(),
        refused_total: points.iter().map(|p| p.validations_refused).sum(),
        revenue_chart,
        orders_chart,
        subscriptions_chart,
        validations_chart,
        layout,
    };
    dash.page(if range_error.is_some() { 422 } else { 200 }, &page)
}

/// An amount in a currency, as every page reads it.
fn money(amount: i64, currency: Currency) -> String {
    Money::new(amount, currency.code()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_ranges_are_presets_or_bounded_dates() {
        let today = day_number(
            chrono::DateTime::parse_from_rfc3339("2026-11-25T12:00:00Z")
                .unwrap()
                .with_timezone(&chrono::Utc),
        );
        let range = |q: &str| chart_range(&serde_html_form::from_str(q).unwrap(), today);
        assert_eq!(range(""), Ok((today - 29, today)));
        assert_eq!(range("days=7"), Ok((today - 6, today)));
        assert_eq!(
            range("days=8"),
            Ok((today - 29, today)),
            "not a preset: the default"
        );
        assert_eq!(
            range("from=2026-11-01&to=2026-11-10"),
            Ok((today - 24, today - 15))
        );
        assert_eq!(range("from=2026-11-20"), Ok((today - 5, today)));
        assert_eq!(range("to=2026-11-10"), Ok((today - 44, today - 15)));
        assert_eq!(range("from=2026-11-25&to=2026-11-25"), Ok((today, today)));
        assert!(range("from=2026-11-10&to=2026-11-01").is_err());
        assert!(
            range("to=2026-11-26").is_err(),
            "the future has no data yet"
        );
        assert!(
            range("from=2025-01-01&to=2026-11-25").is_err(),
            "over 366 days"
        );
        assert!(
            range("from=2021-01-01&to=2021-01-02").is_err(),
            "too far back"
        );
        assert_eq!(
            range("from=2026-13-01"),
            Err("from: enter a date as YYYY-MM-DD".into())
        );
    }
}
