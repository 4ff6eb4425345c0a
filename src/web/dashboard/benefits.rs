//! Benefits: the list, a new license-key benefit, and editing one.

use actix_web::{web, HttpRequest};
use askama::Template;

use super::products::org_benefits;
use super::{
    fmt, form_problem, of_org, posted, see_other, Dash, Fail, Layout, ListQuery, PageResult,
};
use crate::app::catalog::benefits;
use crate::domain::benefit::{Benefit, BenefitProperties};
use crate::domain::ids::BenefitId;
use crate::extract::path_id;
use crate::state::AppState;
use crate::web::dashboard::files::{file_choices, FileChoice};
use crate::web::dashboard::forms::{self, BenefitForm};

#[derive(Template)]
#[template(path = "dashboard/benefits.html")]
struct BenefitsPage {
    layout: Layout,
    benefits: Vec<Benefit>,
    form: BenefitForm,
    errors: Vec<String>,
    /// The files a new downloadables benefit may attach.
    file_choices: Vec<FileChoice>,
}

pub async fn benefits(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "benefits", "Benefits").await?;
    let benefits = org_benefits(&dash, &layout).await?;
    let file_choices = file_choices(&dash, &layout, &[]).await?;
    dash.page(
        200,
        &BenefitsPage {
            layout,
            benefits,
            form: BenefitForm::blank(),
            errors: Vec::new(),
            file_choices,
        },
    )
}

pub async fn benefit_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: BenefitForm = posted(&bytes)?;
    let layout = dash.layout(&path, "benefits", "Benefits").await?;
    match forms::create_license_key_benefit(&state, dash.subject(), layout.org, &form).await {
        Ok(_) => Ok(see_other(&layout.at("/benefits"))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let benefits = org_benefits(&dash, &layout).await?;
            let file_choices = file_choices(&dash, &layout, &form.files).await?;
            dash.page(
                status,
                &BenefitsPage {
                    layout,
                    benefits,
                    form,
                    errors,
                    file_choices,
                },
            )
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/benefit.html")]
struct BenefitPage {
    layout: Layout,
    benefit: Benefit,
    form: BenefitForm,
    errors: Vec<String>,
    saved: bool,
    /// The files a downloadables benefit may attach, its own first.
    file_choices: Vec<FileChoice>,
}

impl BenefitPage {
    fn is_license_keys(&self) -> bool {
        matches!(self.benefit.properties, BenefitProperties::LicenseKeys(_))
    }
}

/// A benefit of the page's organization (else 404).
async fn benefit_of(dash: &Dash, layout: &Layout, id: &str) -> Result<Benefit, Fail> {
    let id: BenefitId = path_id("id", id)?;
    let benefit = benefits::get(&dash.state, dash.subject(), id).await?;
    of_org(layout, benefit.organization_id, benefit)
}

pub async fn benefit(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "benefits", "Benefit").await?;
    let benefit = benefit_of(&dash, &layout, &path.1).await?;
    let saved = ListQuery::of(&req).saved();
    let form = BenefitForm::of(&benefit);
    let file_choices = file_choices(&dash, &layout, &form.files).await?;
    dash.page(
        200,
        &BenefitPage {
            form,
            benefit,
            layout,
            errors: Vec::new(),
            saved,
            file_choices,
        },
    )
}

pub async fn benefit_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: BenefitForm = posted(&bytes)?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "benefits", "Benefit").await?;
    let benefit = benefit_of(&dash, &layout, &id).await?;
    match forms::update_benefit(&state, dash.subject(), &benefit, &form).await {
        Ok(_) => Ok(see_other(&layout.at(&format!("/benefits/{id}?saved=1")))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let file_choices = file_choices(&dash, &layout, &form.files).await?;
            dash.page(
                status,
                &BenefitPage {
                    layout,
                    benefit,
                    form,
                    errors,
                    saved: false,
                    file_choices,
                },
            )
        }
    }
}
