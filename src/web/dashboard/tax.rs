//! The organization's tax settings (`/dashboard/{org}/tax`): where the seller is
//! established, its tax number, the registrations it holds abroad, who computes the tax,
//! whether prices include it, and how invoices are numbered and issued.
//!
//! The form is read by the API's own rules (`crate::api::organization_tax::TaxForm`) and
//! saved through the use case of `PATCH /v1/organizations/{id}`, so it accepts and refuses
//! what the API does, with the same messages, each shown next to its field.

use actix_web::{web, HttpRequest};
use askama::Template;

use super::{form_problem, posted, see_other, Dash, Layout, ListQuery, PageResult};
use crate::api::organization_tax::{form_problems, TaxForm};
use crate::app::catalog::organizations;
use crate::app::invoices::pdf::country_name;
use crate::domain::customer::COUNTRIES;
use crate::domain::organization::Organization;
use crate::domain::tax_settings::{InvoiceTiming, TaxBehaviorOption, TaxProvider};
use crate::error::ApiError;
use crate::state::AppState;

/// The registrations the form offers a box for: (wire name, what it is).
const REGISTRATIONS: &[(&str, &str)] = &[
    ("eu_oss", "EU One-Stop-Shop (seller established in the EU)"),
    (
        "non_eu_oss",
        "EU non-Union One-Stop-Shop (seller established outside the EU)",
    ),
    ("gb", "UK VAT"),
    ("no", "Norway VOEC"),
    ("ch", "Swiss VAT"),
    ("au", "Australian GST (simplified)"),
    ("ca", "Canadian GST/HST (simplified)"),
];

/// The providers: (wire name, label, what it does).
const PROVIDERS: &[(TaxProvider, &str, &str)] = &[
    (TaxProvider::None, "None", "No tax is computed or charged."),
    (
        TaxProvider::Builtin,
        "Built-in",
        "Tollgate's own rules and dated rate table.",
    ),
    (
        TaxProvider::Stripe,
        "Stripe Tax",
        "Stripe's Tax Calculations API (US sales tax too).",
    ),
];

/// The price behaviours: (option, label).
const BEHAVIORS: &[(TaxBehaviorOption, &str)] = &[
    (
        TaxBehaviorOption::Location,
        "By the buyer's country: added in the US, Canada and India, included elsewhere",
    ),
    (TaxBehaviorOption::Inclusive, "Prices include tax"),
    (TaxBehaviorOption::Exclusive, "Tax is added to prices"),
];

const TIMINGS: &[(InvoiceTiming, &str)] = &[
    (InvoiceTiming::OnPayment, "On payment (every paid order)"),
    (
        InvoiceTiming::OnRequest,
        "On request (you or the buyer ask)",
    ),
];

#[derive(Template)]
#[template(path = "dashboard/tax.html")]
struct TaxPage {
    layout: Layout,
    form: TaxForm,
    /// The invoices' prefix when the field is blank.
    default_prefix: String,
    /// (code, name) of every country, by name.
    countries: Vec<(&'static str, &'static str)>,
    /// (form field, message) of each problem.
    problems: Vec<(String, String)>,
    /// Every problem, as the other pages list them.
    errors: Vec<String>,
    saved: bool,
}

impl TaxPage {
    fn new(layout: Layout, org: &Organization, form: TaxForm) -> TaxPage {
        let mut countries: Vec<(&'static str, &'static str)> = COUNTRIES
            .iter()
            .map(|c| (*c, country_name(c).unwrap_or(c)))
            .collect();
        countries.sort_by_key(|(_, name)| *name);
        TaxPage {
            layout,
            form,
            default_prefix: org.slug.to_ascii_uppercase(),
            countries,
            problems: Vec::new(),
            errors: Vec::new(),
            saved: false,
        }
    }

    /// The messages about `field`, joined (`""` when none).
    fn error(&self, field: &str) -> String {
        self.problems
            .iter()
            .filter(|(f, _)| f == field)
            .map(|(_, m)| m.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn has_error(&self, field: &str) -> bool {
        self.problems.iter().any(|(f, _)| f == field)
    }

    fn registrations(&self) -> &'static [(&'static str, &'static str)] {
        REGISTRATIONS
    }

    fn registered(&self, name: &str) -> bool {
        self.form.registrations.iter().any(|r| r == name)
    }

    /// The registrations held without a box here (US states, set through the API): kept.
    fn other_registrations(&self) -> Vec<&str> {
        self.form
            .registrations
            .iter()
            .map(String::as_str)
            .filter(|r| !REGISTRATIONS.iter().any(|(n, _)| n == r))
            .collect()
    }

    fn providers(&self) -> Vec<(&'static str, &'static str, &'static str)> {
        PROVIDERS
            .iter()
            .map(|(p, label, help)| (p.as_str(), *label, *help))
            .collect()
    }

    fn behaviors(&self) -> Vec<(&'static str, &'static str)> {
        BEHAVIORS.iter().map(|(b, l)| (b.as_str(), *l)).collect()
    }

    fn timings(&self) -> Vec<(&'static str, &'static str)> {
        TIMINGS.iter().map(|(t, l)| (t.as_str(), *l)).collect()
    }
}

pub async fn tax(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let (layout, org) = dash.org_layout(&path, "tax", "Tax").await?;
    let mut page = TaxPage::new(layout, &org, TaxForm::of(&org));
    page.saved = ListQuery::of(&req).saved();
    dash.page(200, &page)
}

pub async fn tax_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: TaxForm = posted(&bytes)?;
    let (layout, org) = dash.org_layout(&path, "tax", "Tax").await?;
    match save(&state, &dash, &org, &form).await {
        Ok(_) => Ok(see_other(&layout.at("/tax?saved=1"))),
        Err(e) => {
            let e = e.uncoded();
            let problems = match &e {
                ApiError::Validation(fields) => form_problems(fields),
                _ => Vec::new(),
            };
            let (status, errors) = form_problem(e)?;
            let mut page = TaxPage::new(layout, &org, form);
            page.problems = problems;
            page.errors = errors;
            dash.page(status, &page)
        }
    }
}

/// Saves the form through the organization update of the API.
async fn save(
    state: &AppState,
    dash: &Dash,
    org: &Organization,
    form: &TaxForm,
) -> Result<Organization, ApiError> {
    let change = form.update().into_command(org)?;
    Ok(organizations::update(state, dash.subject(), org.id, change).await?)
}
