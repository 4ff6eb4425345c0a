//! Custom fields: the list, a new one, and editing one.

use actix_web::{web, HttpRequest};
use askama::Template;

use super::{
    form_problem, of_org, posted, see_other, Dash, Fail, Layout, ListQuery, PageResult, Pager,
};
use crate::app::catalog::custom_fields::{self, CustomFieldFilter};
use crate::domain::custom_field::CustomField;
use crate::domain::ids::CustomFieldId;
use crate::extract::path_id;
use crate::state::AppState;
use crate::web::dashboard::forms::{self, CustomFieldForm};

#[derive(Template)]
#[template(path = "dashboard/custom_fields.html")]
struct FieldsPage {
    layout: Layout,
    fields: Vec<CustomField>,
    pager: Pager,
    q: ListQuery,
}

pub async fn custom_fields(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "custom-fields", "Custom fields").await?;
    let q = ListQuery::of(&req);
    let filter = CustomFieldFilter {
        organization_id: vec![layout.org],
        query: q.search(),
        ..CustomFieldFilter::default()
    };
    let params = q.params();
    let (fields, total) = custom_fields::list(&state, dash.subject(), &filter, params).await?;
    let pager = Pager::new(total, params, &layout.at("/custom-fields"), &req);
    dash.page(
        200,
        &FieldsPage {
            fields,
            pager,
            layout,
            q,
        },
    )
}

#[derive(Template)]
#[template(path = "dashboard/custom_field.html")]
struct FieldPage {
    layout: Layout,
    field: Option<CustomField>,
    form: CustomFieldForm,
    errors: Vec<String>,
    saved: bool,
}

pub async fn field_new(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash
        .layout(&path, "custom-fields", "New custom field")
        .await?;
    dash.page(
        200,
        &FieldPage {
            layout,
            field: None,
            form: CustomFieldForm::default(),
            errors: Vec::new(),
            saved: false,
        },
    )
}

pub async fn field_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: CustomFieldForm = posted(&bytes)?;
    let layout = dash
        .layout(&path, "custom-fields", "New custom field")
        .await?;
    match forms::create_custom_field(&state, dash.subject(), layout.org, &form).await {
        Ok(f) => Ok(see_other(
            &layout.at(&format!("/custom-fields/{}?saved=1", f.id)),
        )),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            dash.page(
                status,
                &FieldPage {
                    layout,
                    field: None,
                    form,
                    errors,
                    saved: false,
                },
            )
        }
    }
}

/// A custom field of the page's organization (else 404).
async fn field_of(dash: &Dash, layout: &Layout, id: &str) -> Result<CustomField, Fail> {
    let id: CustomFieldId = path_id("id", id)?;
    let field = custom_fields::get(&dash.state, dash.subject(), id).await?;
    of_org(layout, field.organization_id, field)
}

pub async fn field(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash
        .layout(&path.0, "custom-fields", "Custom field")
        .await?;
    let f = field_of(&dash, &layout, &path.1).await?;
    let saved = ListQuery::of(&req).saved();
    dash.page(
        200,
        &FieldPage {
            form: CustomFieldForm::of(&f),
            field: Some(f),
            layout,
            errors: Vec::new(),
            saved,
        },
    )
}

pub async fn field_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let posted_form: CustomFieldForm = posted(&bytes)?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "custom-fields", "Custom field").await?;
    let f = field_of(&dash, &layout, &id).await?;
    // A field's type does not change.
    let form = CustomFieldForm {
        kind: f.kind().as_str().into(),
        ..posted_form
    };
    match forms::update_custom_field(&state, dash.subject(), &f, &form).await {
        Ok(_) => Ok(see_other(
            &layout.at(&format!("/custom-fields/{id}?saved=1")),
        )),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            dash.page(
                status,
                &FieldPage {
                    layout,
                    field: Some(f),
                    form,
                    errors,
                    saved: false,
                },
            )
        }
    }
}
