//! The way in (`/dashboard`), organizations (create, settings, switch) and the overview
//! with its charts.

use actix_web::{web, HttpRequest};
use askama::Template;
use serde_json::{json, Value};

use super::chart::{bars, Series};
use super::{body, form_problem, money, see_other, Dash, Fail, Form, Layout, PageResult, Row};
use crate::api::organization::{OrganizationCreate, OrganizationUpdate};
use crate::domain::ids::OrganizationId;
use crate::domain::stats::{day_date, day_number};
use crate::extract::auth::{OrganizationsCreate, OrganizationsWrite};
use crate::extract::path_id;
use crate::routes::organizations;
use crate::state::AppState;

/// `GET /dashboard`: the first organization's overview, or the form to create one.
pub async fn home(state: web::Data<AppState>, req: HttpRequest) -> PageResult {
    let dash = Dash::of(&state, &req)?;
    // The organization switcher: `?org=` (an id, so the redirect stays in the dashboard).
    if let Some(org) = Form::of_query(req.query_string()).opt("org") {
        let id: OrganizationId = path_id("org", org)?;
        return Ok(see_other(&format!("/dashboard/{id}")));
    }
    let orgs = dash.organizations().await?;
    Ok(match orgs.items.first() {
        Some(org) => see_other(&format!("/dashboard/{}", org.id)),
        None => see_other("/dashboard/organizations/new"),
    })
}

#[derive(Template)]
#[template(path = "dashboard/org_new.html")]
struct OrgNewPage {
    layout: Layout,
    form: Form,
    errors: Vec<String>,
}

pub async fn org_new(state: web::Data<AppState>, req: HttpRequest) -> PageResult {
    let dash = Dash::of(&state, &req)?;
    let layout = dash.bare_layout("new-org", "New organization").await?;
    dash.page(
        200,
        &OrgNewPage {
            layout,
            form: Form::default(),
            errors: Vec::new(),
        },
    )
}

/// A slug from a name: lower-case ASCII letters and digits, runs of anything else as `-`.
fn slugify(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

pub async fn org_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    bytes: web::Bytes,
) -> PageResult {
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form)?;
    let slug = form
        .opt("slug")
        .map(str::to_string)
        .unwrap_or_else(|| slugify(form.get("name")));
    let raw = json!({ "name": form.get("name").trim(), "slug": slug });
    let created = async {
        organizations::create(
            dash.auth::<OrganizationsCreate>()?,
            dash.data(),
            body::<OrganizationCreate>(raw)?,
        )
        .await
    }
    .await;
    match created {
        Ok(org) => Ok(see_other(&format!("/dashboard/{}", org.0.id))),
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
    org: Row,
    form: Form,
    errors: Vec<String>,
    saved: bool,
}

fn settings_form(org: &Row) -> Form {
    let mut f = Form::default();
    for k in ["name", "avatar_url", "bio", "company", "blog", "location"] {
        f.set(k, org.s(k));
    }
    for k in ["allow_multiple_subscriptions", "allow_customer_updates"] {
        if org.is(&format!("subscription_settings.{k}")) {
            f.set(k, "on");
        }
    }
    f
}

async fn org_row(dash: &Dash, org: &str) -> Result<Row, Fail> {
    Ok(Row::of(
        &organizations::get(dash.auth()?, dash.data(), web::Path::from(org.to_string()))
            .await?
            .into_inner(),
    ))
}

pub async fn settings(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req)?;
    let layout = dash.layout(&path, "settings", "Settings").await?;
    let org = org_row(&dash, &path).await?;
    let saved = Form::of_query(req.query_string()).checked("saved");
    dash.page(
        200,
        &SettingsPage {
            layout,
            form: settings_form(&org),
            org,
            errors: Vec::new(),
            saved,
        },
    )
}

pub async fn settings_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form)?;
    let layout = dash.layout(&path, "settings", "Settings").await?;
    let org = org_row(&dash, &path).await?;
    let mut raw = json!({
        "name": form.get("name").trim(),
        "avatar_url": form.text("avatar_url"),
        "bio": form.text("bio"),
        "company": form.text("company"),
        "blog": form.text("blog"),
        "location": form.text("location"),
    });
    let mut sub = org.0["subscription_settings"].clone();
    if sub.is_object() {
        sub["allow_multiple_subscriptions"] =
            Value::from(form.checked("allow_multiple_subscriptions"));
        sub["allow_customer_updates"] = Value::from(form.checked("allow_customer_updates"));
        raw["subscription_settings"] = sub;
    }
    let saved = async {
        organizations::update(
            dash.auth::<OrganizationsWrite>()?,
            dash.data(),
            web::Path::from(path.to_string()),
            body::<OrganizationUpdate>(raw)?,
        )
        .await
    }
    .await;
    match saved {
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

#[derive(Template)]
#[template(path = "dashboard/overview.html")]
struct OverviewPage {
    layout: Layout,
    days: i64,
    ranges: &'static [i64],
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
    let dash = Dash::of(&state, &req)?;
    let layout = dash.layout(&path, "overview", "Overview").await?;
    let org: OrganizationId = path_id("org", &path)?;
    let q = Form::of_query(req.query_string());
    let days = q
        .opt("days")
        .and_then(|d| d.parse::<i64>().ok())
        .filter(|d| RANGES.contains(d))
        .unwrap_or(30);
    let today = day_number(state.now());
    let from = today - days + 1;
    let points = crate::stats::days(&state, org, from, today, today)?;
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
    let dollars = |v: f64| money(v.round() as i64, crate::api::price::CURRENCY);
    let revenue_chart = bars(
        "Revenue per day",
        &labels,
        &[Series {
            name: "revenue",
            color: "#2457d6",
            values: points.iter().map(|p| p.revenue as f64).collect(),
        }],
        &dollars,
    );
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
        revenue_total: money(
            points.iter().map(|p| p.revenue).sum(),
            crate::api::price::CURRENCY,
        ),
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
    dash.page(200, &page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_from_names() {
        assert_eq!(slugify("  Acme Tools, Inc. "), "acme-tools-inc");
        assert_eq!(slugify("Élan"), "lan");
        assert_eq!(slugify("!!"), "");
    }
}
