//! Products with their prices and benefits, and the checkout link (`/buy/{product_id}`).

use actix_web::{web, HttpRequest};
use askama::Template;

use super::{
    choices, fmt, form_problem, of_org, posted, see_other, Dash, Fail, Layout, ListQuery,
    PageResult, Pager,
};
use crate::app::catalog::benefits::{self, BenefitFilter};
use crate::app::catalog::products::{self, product_for, ProductFilter};
use crate::app::usage::meters::{self, MeterFilter};
use crate::domain::benefit::Benefit;
use crate::domain::ids::{BenefitId, PriceId, ProductId};
use crate::domain::meter::{Meter, MeterSort};
use crate::domain::product::{Product, ProductSort};
use crate::error::ApiError;
use crate::extract::{path_id, Sorting};
use crate::state::AppState;
use crate::web::dashboard::forms::{self, ProductBenefitsForm, ProductForm};

#[derive(Template)]
#[template(path = "dashboard/products.html")]
struct ProductsPage {
    layout: Layout,
    q: ListQuery,
    products: Vec<Product>,
    pager: Pager,
}

pub async fn products(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "products", "Products").await?;
    let q = ListQuery::of(&req);
    let filter = ProductFilter {
        organization_id: vec![layout.org],
        query: q.search(),
        is_archived: match q.archived.as_str() {
            "all" => None,
            "yes" => Some(true),
            _ => Some(false),
        },
        sorting: Sorting::by(ProductSort::CreatedAt, true),
        ..ProductFilter::default()
    };
    let params = q.params();
    let (products, total) = products::list(&state, dash.subject(), &filter, params).await?;
    let pager = Pager::new(total, params, &layout.at("/products"), &req);
    dash.page(
        200,
        &ProductsPage {
            products,
            pager,
            layout,
            q,
        },
    )
}

#[derive(Template)]
#[template(path = "dashboard/product_new.html")]
struct ProductNewPage {
    layout: Layout,
    form: ProductForm,
    errors: Vec<String>,
    /// The organization's live meters (a metered price's choices).
    meters: Vec<Meter>,
}

/// The organization's live meters (a metered price's choices), by name.
async fn org_meters(dash: &Dash, layout: &Layout) -> Result<Vec<Meter>, Fail> {
    let filter = MeterFilter {
        organization_id: vec![layout.org],
        query: None,
        is_archived: Some(false),
        metadata: Vec::new(),
        sorting: Sorting::by(MeterSort::Name, false),
    };
    Ok(
        meters::list(&dash.state, dash.subject(), &filter, choices())
            .await?
            .0,
    )
}

pub async fn product_new(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "products", "New product").await?;
    let meters = org_meters(&dash, &layout).await?;
    dash.page(
        200,
        &ProductNewPage {
            layout,
            form: ProductForm::default(),
            errors: Vec::new(),
            meters,
        },
    )
}

pub async fn product_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: ProductForm = posted(&bytes)?;
    let layout = dash.layout(&path, "products", "New product").await?;
    match forms::create_product(&state, dash.subject(), layout.org, &form).await {
        Ok(p) => Ok(see_other(&layout.at(&format!("/products/{}", p.id)))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let meters = org_meters(&dash, &layout).await?;
            dash.page(
                status,
                &ProductNewPage {
                    layout,
                    form,
                    errors,
                    meters,
                },
            )
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/product.html")]
struct ProductPage {
    layout: Layout,
    product: Product,
    benefits: Vec<Benefit>,
    form: ProductForm,
    errors: Vec<String>,
    link: String,
    saved: bool,
    /// The organization's live meters (a metered price's choices).
    meters: Vec<Meter>,
}

impl ProductPage {
    fn attached(&self, benefit: &BenefitId) -> bool {
        self.product.benefit_ids.contains(benefit)
    }
}

/// A product of the page's organization (else 404).
async fn product_of(dash: &Dash, layout: &Layout, id: &str) -> Result<Product, Fail> {
    let id: ProductId = path_id("id", id)?;
    let product = product_for(&dash.state, dash.subject(), id).await?.value;
    of_org(layout, product.organization_id, product)
}

/// The organization's benefits (a form's choices).
pub(super) async fn org_benefits(dash: &Dash, layout: &Layout) -> Result<Vec<Benefit>, Fail> {
    let filter = BenefitFilter {
        organization_id: vec![layout.org],
        types: Vec::new(),
    };
    Ok(
        benefits::list(&dash.state, dash.subject(), &filter, choices())
            .await?
            .0,
    )
}

/// The organization's products on sale (a form's choices), or all of them.
pub(super) async fn org_products(
    dash: &Dash,
    layout: &Layout,
    on_sale: bool,
) -> Result<Vec<Product>, Fail> {
    let filter = ProductFilter {
        organization_id: vec![layout.org],
        is_archived: on_sale.then_some(false),
        ..ProductFilter::default()
    };
    Ok(
        products::list(&dash.state, dash.subject(), &filter, choices())
            .await?
            .0,
    )
}

async fn product_page(
    dash: &Dash,
    org: &str,
    id: &str,
    form: Option<ProductForm>,
    errors: Vec<String>,
    saved: bool,
) -> Result<ProductPage, Fail> {
    let layout = dash.layout(org, "products", "Product").await?;
    let product = product_of(dash, &layout, id).await?;
    let benefits = org_benefits(dash, &layout).await?;
    let link = format!("{}/buy/{}", dash.state.public_url, product.id);
    let meters = org_meters(dash, &layout).await?;
    Ok(ProductPage {
        meters,
        form: form.unwrap_or_else(|| ProductForm::of(&product)),
        layout: Layout {
            title: product.name.clone(),
            ..layout
        },
        product,
        benefits,
        errors,
        link,
        saved,
    })
}

pub async fn product(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let saved = ListQuery::of(&req).saved();
    let page = product_page(&dash, &path.0, &path.1, None, Vec::new(), saved).await?;
    dash.page(200, &page)
}

pub async fn product_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: ProductForm = posted(&bytes)?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "products", "Product").await?;
    let current = product_of(&dash, &layout, &id).await?;
    match forms::update_product(&state, dash.subject(), current.id, &form).await {
        Ok(_) => Ok(see_other(&layout.at(&format!("/products/{id}?saved=1")))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let page = product_page(&dash, &org, &id, Some(form), errors, false).await?;
            dash.page(status, &page)
        }
    }
}

pub async fn product_benefits(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: ProductBenefitsForm = posted(&bytes)?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "products", "Product").await?;
    let current = product_of(&dash, &layout, &id).await?;
    match forms::set_product_benefits(&state, dash.subject(), current.id, &form).await {
        Ok(_) => Ok(see_other(&layout.at(&format!("/products/{id}?saved=1")))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let page = product_page(&dash, &org, &id, None, errors, false).await?;
            dash.page(status, &page)
        }
    }
}

/// The query of a checkout link.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct LinkQuery {
    price_id: String,
}

/// `GET /buy/{product_id}`: a checkout for the product (its first price, or `price_id`),
/// created by the product's organization (`crate::web::dashboard::forms::checkout_from_link`), then
/// the buyer goes to its hosted page. Archived products and unknown ids are 404.
pub async fn buy(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
    state
        .limits
        .checkout_link(ip)
        .map_err(|d| ApiError::RateLimited(Box::new(d)))?;
    let not_found = || {
        Fail::Api(crate::web::error_page(
            404,
            "Not found",
            "This checkout link does not lead to a product on sale.",
        ))
    };
    let id: ProductId = path_id("product_id", &path).map_err(|_| not_found())?;
    let Some(product) = state.store.get::<Product>(&id.key()).await? else {
        return Err(not_found());
    };
    let q: LinkQuery = serde_html_form::from_str(req.query_string()).unwrap_or_default();
    let price = match q.price_id.trim() {
        "" => None,
        p => Some(p.parse::<PriceId>().map_err(|_| not_found())?),
    };
    match forms::checkout_from_link(&state, &product.value, price, ip).await? {
        Some(checkout) => {
            let view = crate::app::views::checkout_view(&state, &checkout).await?;
            Ok(see_other(&view.url))
        }
        None => Err(not_found()),
    }
}
