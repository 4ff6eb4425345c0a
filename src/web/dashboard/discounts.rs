//! Discounts: the list, a new one, and editing one.

use actix_web::{web, HttpRequest};
use askama::Template;

use super::products::org_products;
use super::{
    fmt, form_problem, of_org, posted, see_other, Dash, Fail, Layout, ListQuery, PageResult, Pager,
};
use crate::app::catalog::discounts::{self, DiscountFilter, DiscountSort};
use crate::domain::discount::Discount;
use crate::domain::ids::DiscountId;
use crate::domain::product::Product;
use crate::extract::{path_id, Sorting};
use crate::state::AppState;
use crate::web::dashboard::forms::{self, DiscountForm};

#[derive(Template)]
#[template(path = "dashboard/discounts.html")]
struct DiscountsPage {
    layout: Layout,
    discounts: Vec<Discount>,
    pager: Pager,
    q: ListQuery,
}

pub async fn discounts(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "discounts", "Discounts").await?;
    let q = ListQuery::of(&req);
    let filter = DiscountFilter {
        organization_id: vec![layout.org],
        query: q.search(),
        sorting: Sorting::by(DiscountSort::CreatedAt, true),
    };
    let params = q.params();
    let (discounts, total) = discounts::list(&state, dash.subject(), &filter, params).await?;
    let pager = Pager::new(total, params, &layout.at("/discounts"), &req);
    dash.page(
        200,
        &DiscountsPage {
            discounts,
            pager,
            layout,
            q,
        },
    )
}

#[derive(Template)]
#[template(path = "dashboard/discount.html")]
struct DiscountPage {
    layout: Layout,
    /// The discount edited; `None`: a new one.
    discount: Option<Discount>,
    products: Vec<Product>,
    form: DiscountForm,
    errors: Vec<String>,
    saved: bool,
}

pub async fn discount_new(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "discounts", "New discount").await?;
    let products = org_products(&dash, &layout, true).await?;
    // A fixed discount's first amount is offered in the organization's default currency.
    let default = crate::app::catalog::organizations::default_currency(&state, layout.org).await?;
    let form = DiscountForm {
        amount_currency: vec![default.code().to_string()],
        ..DiscountForm::default()
    };
    dash.page(
        200,
        &DiscountPage {
            layout,
            discount: None,
            products,
            form,
            errors: Vec::new(),
            saved: false,
        },
    )
}

pub async fn discount_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: DiscountForm = posted(&bytes)?;
    let layout = dash.layout(&path, "discounts", "New discount").await?;
    match forms::create_discount(&state, dash.subject(), layout.org, &form).await {
        Ok(d) => Ok(see_other(
            &layout.at(&format!("/discounts/{}?saved=1", d.id)),
        )),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let products = org_products(&dash, &layout, true).await?;
            dash.page(
                status,
                &DiscountPage {
                    layout,
                    discount: None,
                    products,
                    form,
                    errors,
                    saved: false,
                },
            )
        }
    }
}

/// A discount of the page's organization (else 404).
async fn discount_of(dash: &Dash, layout: &Layout, id: &str) -> Result<Discount, Fail> {
    let id: DiscountId = path_id("id", id)?;
    let discount = discounts::get(&dash.state, dash.subject(), id).await?;
    of_org(layout, discount.organization_id, discount)
}

pub async fn discount(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "discounts", "Discount").await?;
    let d = discount_of(&dash, &layout, &path.1).await?;
    let products = org_products(&dash, &layout, true).await?;
    let saved = ListQuery::of(&req).saved();
    dash.page(
        200,
        &DiscountPage {
            form: DiscountForm::of(&d),
            discount: Some(d),
            layout,
            products,
            errors: Vec::new(),
            saved,
        },
    )
}

pub async fn discount_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let posted_form: DiscountForm = posted(&bytes)?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "discounts", "Discount").await?;
    let d = discount_of(&dash, &layout, &id).await?;
    // The amount and the duration of a discount are fixed once created; the form shows
    // them without fields, from the discount.
    let stored = DiscountForm::of(&d);
    let form = DiscountForm {
        kind: stored.kind,
        percent: stored.percent,
        amount: stored.amount,
        duration: stored.duration,
        duration_in_months: stored.duration_in_months,
        ..posted_form
    };
    match forms::update_discount(&state, dash.subject(), d.id, &form).await {
        Ok(_) => Ok(see_other(&layout.at(&format!("/discounts/{id}?saved=1")))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let products = org_products(&dash, &layout, true).await?;
            dash.page(
                status,
                &DiscountPage {
                    layout,
                    discount: Some(d),
                    products,
                    form,
                    errors,
                    saved: false,
                },
            )
        }
    }
}
