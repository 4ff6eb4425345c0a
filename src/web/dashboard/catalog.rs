//! What a seller sells: products with their prices and benefits, license-key benefits,
//! discounts, custom fields, and the checkout link (`/buy/{product_id}`).

use actix_web::{web, HttpRequest};
use askama::Template;
use serde_json::{json, Value};

use super::{
    body, choices, form_problem, listing, record, see_other, Dash, Fail, Form, Layout, PageResult,
    Pager, Row,
};
use crate::api::benefit::{BenefitCreate, BenefitUpdate};
use crate::api::discount::{DiscountCreate, DiscountUpdate};
use crate::api::product::{ProductBenefitsUpdate, ProductCreate, ProductUpdate};
use crate::auth::Subject;
use crate::domain::ids::ProductId;
use crate::extract::auth::{
    BenefitsRead, BenefitsWrite, CustomFieldsRead, CustomFieldsWrite, DiscountsRead,
    DiscountsWrite, ProductsRead, ProductsWrite,
};
use crate::extract::path_id;
use crate::routes::{
    benefits as benefits_api, custom_fields, discounts as discounts_api, products as products_api,
};
use crate::state::AppState;

// ---------------------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/products.html")]
struct ProductsPage {
    layout: Layout,
    q: Form,
    products: Vec<Row>,
    pager: Pager,
}

pub async fn products(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "products", "Products").await?;
    let auth = dash.auth::<ProductsRead>()?;
    let q = Form::of_query(req.query_string());
    let archived = match q.get("archived") {
        "all" => "",
        "yes" => "true",
        _ => "false",
    };
    let (products, pager) = listing(
        &layout,
        &q,
        "/products",
        &[
            ("is_archived", archived),
            ("query", q.get("query").trim()),
            ("sorting", "-created_at"),
        ],
        |qs| products_api::list(auth, dash.data(), qs),
    )
    .await?;
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

/// The amount fields of the price form, with their labels.
const PRICE_AMOUNTS: &[(&str, &str)] = &[
    ("amount", "Price"),
    ("yearly_amount", "Yearly price"),
    ("minimum_amount", "Minimum"),
    ("maximum_amount", "Maximum"),
    ("preset_amount", "Suggested"),
];

/// The `prices` of a product form: billing (`one_time`, `month`, `year` or `month_year`),
/// amount type (`fixed`, `custom`, `free`) and the amounts, in major units.
fn prices_of(form: &Form) -> Value {
    let amount_type = form.opt("amount_type").unwrap_or("fixed");
    let price = |kind: &str, interval: Option<&str>, amount_field: &str| {
        let mut p = json!({ "type": kind, "amount_type": amount_type });
        if let Some(i) = interval {
            p["recurring_interval"] = Value::from(i);
        }
        match amount_type {
            "fixed" => {
                p["price_amount"] = form.cents(amount_field);
                p["price_currency"] = Value::from(crate::api::price::CURRENCY);
            }
            "custom" => {
                p["price_currency"] = Value::from(crate::api::price::CURRENCY);
                for f in ["minimum_amount", "maximum_amount", "preset_amount"] {
                    let v = form.cents(f);
                    if !v.is_null() {
                        p[f] = v;
                    }
                }
            }
            _ => {}
        }
        p
    };
    match form.opt("billing").unwrap_or("one_time") {
        "month" => json!([price("recurring", Some("month"), "amount")]),
        "year" => json!([price("recurring", Some("year"), "amount")]),
        "month_year" => json!([
            price("recurring", Some("month"), "amount"),
            price("recurring", Some("year"), "yearly_amount"),
        ]),
        other => json!([price(other, None, "amount")]),
    }
}

#[derive(Template)]
#[template(path = "dashboard/product_new.html")]
struct ProductNewPage {
    layout: Layout,
    form: Form,
    errors: Vec<String>,
}

pub async fn product_new(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "products", "New product").await?;
    let mut form = Form::default();
    form.set("billing", "one_time");
    form.set("amount_type", "fixed");
    dash.page(
        200,
        &ProductNewPage {
            layout,
            form,
            errors: Vec::new(),
        },
    )
}

pub async fn product_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let layout = dash.layout(&path, "products", "New product").await?;
    let raw = json!({
        "name": form.get("name").trim(),
        "description": form.text("description"),
        "organization_id": layout.org_id,
        "prices": prices_of(&form),
    });
    let created = async {
        products_api::create(
            dash.auth::<ProductsWrite>()?,
            dash.data(),
            body::<ProductCreate>(raw)?,
        )
        .await
    }
    .await
    .map_err(|e| form.explain_amounts(e, PRICE_AMOUNTS));
    match created {
        Ok(p) => Ok(see_other(&layout.at(&format!("/products/{}", p.0.id)))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            dash.page(
                status,
                &ProductNewPage {
                    layout,
                    form,
                    errors,
                },
            )
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/product.html")]
struct ProductPage {
    layout: Layout,
    product: Row,
    benefits: Vec<Row>,
    form: Form,
    errors: Vec<String>,
    link: String,
    saved: bool,
}

impl ProductPage {
    fn attached(&self, benefit_id: &str) -> bool {
        self.product
            .rows("benefits")
            .iter()
            .any(|b| b.s("id") == benefit_id)
    }
}

/// A product of the page's organization (else the API's 404).
async fn product_row(dash: &Dash, layout: &Layout, id: &str) -> Result<Row, Fail> {
    let auth = dash.auth::<ProductsRead>()?;
    record(
        layout,
        products_api::get(auth, dash.data(), web::Path::from(id.to_string())),
    )
    .await
}

async fn org_benefits(dash: &Dash, layout: &Layout) -> Result<Vec<Row>, Fail> {
    let auth = dash.auth::<BenefitsRead>()?;
    choices(layout, &[], |qs| benefits_api::list(auth, dash.data(), qs)).await
}

fn product_form(p: &Row) -> Form {
    let mut f = Form::default();
    f.set("name", p.s("name"));
    f.set("description", p.s("description"));
    if p.is("is_archived") {
        f.set("is_archived", "on");
    }
    f.set("billing", "one_time");
    f.set("amount_type", "fixed");
    f
}

async fn product_page(
    dash: &Dash,
    org: &str,
    id: &str,
    form: Option<Form>,
    errors: Vec<String>,
    saved: bool,
) -> Result<ProductPage, Fail> {
    let layout = dash.layout(org, "products", "Product").await?;
    let product = product_row(dash, &layout, id).await?;
    let benefits = org_benefits(dash, &layout).await?;
    let link = format!("{}/buy/{}", dash.state.public_url, product.s("id"));
    Ok(ProductPage {
        form: form.unwrap_or_else(|| product_form(&product)),
        layout: Layout {
            title: product.s("name"),
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
    let saved = Form::of_query(req.query_string()).checked("saved");
    let page = product_page(&dash, &path.0, &path.1, None, Vec::new(), saved).await?;
    dash.page(200, &page)
}

pub async fn product_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "products", "Product").await?;
    let current = product_row(&dash, &layout, &id).await?;
    let mut raw = json!({
        "name": form.get("name").trim(),
        "description": form.text("description"),
        "is_archived": form.checked("is_archived"),
    });
    if form.checked("replace_prices") {
        raw["prices"] = prices_of(&form);
    }
    let saved = async {
        products_api::update(
            dash.auth::<ProductsWrite>()?,
            dash.data(),
            web::Path::from(current.s("id")),
            body::<ProductUpdate>(raw)?,
        )
        .await
    }
    .await
    .map_err(|e| form.explain_amounts(e, PRICE_AMOUNTS));
    match saved {
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
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "products", "Product").await?;
    let current = product_row(&dash, &layout, &id).await?;
    let raw = json!({ "benefits": form.all("benefit") });
    let saved = async {
        products_api::update_benefits(
            dash.auth::<ProductsWrite>()?,
            dash.data(),
            web::Path::from(current.s("id")),
            body::<ProductBenefitsUpdate>(raw)?,
        )
        .await
    }
    .await;
    match saved {
        Ok(_) => Ok(see_other(&layout.at(&format!("/products/{id}?saved=1")))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let page = product_page(&dash, &org, &id, None, errors, false).await?;
            dash.page(status, &page)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Benefits
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/benefits.html")]
struct BenefitsPage {
    layout: Layout,
    benefits: Vec<Row>,
    form: Form,
    errors: Vec<String>,
}

pub async fn benefits(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "benefits", "Benefits").await?;
    let benefits = org_benefits(&dash, &layout).await?;
    let mut form = Form::default();
    form.set("timeframe", "year");
    dash.page(
        200,
        &BenefitsPage {
            layout,
            benefits,
            form,
            errors: Vec::new(),
        },
    )
}

/// The body of a license-key benefit form (create and update).
fn license_key_benefit(form: &Form) -> Value {
    let expires = match form.opt("ttl") {
        None => Value::Null,
        Some(_) => json!({ "ttl": form.int("ttl"), "timeframe": form.get("timeframe") }),
    };
    let activations = match form.opt("activations") {
        None => Value::Null,
        Some(_) => json!({
            "limit": form.int("activations"),
            "enable_customer_admin": form.checked("enable_customer_admin"),
        }),
    };
    json!({
        "type": "license_keys",
        "description": form.get("description").trim(),
        "properties": {
            "prefix": form.text("prefix"),
            "expires": expires,
            "activations": activations,
            "limit_usage": form.int("limit_usage"),
        },
    })
}

/// The form of a benefit as stored.
fn benefit_form(b: &Row) -> Form {
    let mut f = Form::default();
    f.set("description", b.s("description"));
    f.set("prefix", b.s("properties.prefix"));
    f.set("limit_usage", b.s("properties.limit_usage"));
    f.set("ttl", b.s("properties.expires.ttl"));
    f.set(
        "timeframe",
        b.opt_s("properties.expires.timeframe")
            .unwrap_or_else(|| "year".into()),
    );
    f.set("activations", b.s("properties.activations.limit"));
    if b.is("properties.activations.enable_customer_admin") {
        f.set("enable_customer_admin", "on");
    }
    f
}

#[derive(Template)]
#[template(path = "dashboard/benefit.html")]
struct BenefitPage {
    layout: Layout,
    benefit: Row,
    form: Form,
    errors: Vec<String>,
    saved: bool,
}

async fn benefit_row(dash: &Dash, layout: &Layout, id: &str) -> Result<Row, Fail> {
    let auth = dash.auth::<BenefitsRead>()?;
    record(
        layout,
        benefits_api::get(auth, dash.data(), web::Path::from(id.to_string())),
    )
    .await
}

pub async fn benefit(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "benefits", "Benefit").await?;
    let benefit = benefit_row(&dash, &layout, &path.1).await?;
    let saved = Form::of_query(req.query_string()).checked("saved");
    dash.page(
        200,
        &BenefitPage {
            form: benefit_form(&benefit),
            benefit,
            layout,
            errors: Vec::new(),
            saved,
        },
    )
}

/// Saves a benefit: a license-key benefit's description and properties (keys already
/// granted keep theirs, as with the API); another type's description.
pub async fn benefit_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "benefits", "Benefit").await?;
    let benefit = benefit_row(&dash, &layout, &id).await?;
    let raw = if benefit.s("type") == "license_keys" {
        license_key_benefit(&form)
    } else {
        json!({ "type": benefit.s("type"), "description": form.get("description").trim() })
    };
    let saved = async {
        benefits_api::update(
            dash.auth::<BenefitsWrite>()?,
            dash.data(),
            web::Path::from(id.clone()),
            body::<BenefitUpdate>(raw)?,
        )
        .await
    }
    .await;
    match saved {
        Ok(_) => Ok(see_other(&layout.at(&format!("/benefits/{id}?saved=1")))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            dash.page(
                status,
                &BenefitPage {
                    layout,
                    benefit,
                    form,
                    errors,
                    saved: false,
                },
            )
        }
    }
}

pub async fn benefit_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let layout = dash.layout(&path, "benefits", "Benefits").await?;
    let mut raw = license_key_benefit(&form);
    raw["organization_id"] = Value::from(layout.org_id.as_str());
    let created = async {
        benefits_api::create(
            dash.auth::<BenefitsWrite>()?,
            dash.data(),
            body::<BenefitCreate>(raw)?,
        )
        .await
    }
    .await;
    match created {
        Ok(_) => Ok(see_other(&layout.at("/benefits"))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let benefits = org_benefits(&dash, &layout).await?;
            dash.page(
                status,
                &BenefitsPage {
                    layout,
                    benefits,
                    form,
                    errors,
                },
            )
        }
    }
}

// ---------------------------------------------------------------------------------------
// Checkout links
// ---------------------------------------------------------------------------------------

/// `GET /buy/{product_id}`: a checkout for the product (its first price, or `price_id`),
/// created by the product's organization through the API's own checkout creation, then
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
        .map_err(|d| crate::error::ApiError::RateLimited(Box::new(d)))?;
    let not_found = || {
        Fail::Api(crate::web::error_page(
            404,
            "Not found",
            "This checkout link does not lead to a product on sale.",
        ))
    };
    let id: ProductId = path_id("product_id", &path).map_err(|_| not_found())?;
    let Some(product) = state
        .store
        .get::<crate::domain::product::Product>(&id.key())
        .await?
    else {
        return Err(not_found());
    };
    let product = product.value;
    if product.is_archived {
        return Err(not_found());
    }
    let q = Form::of_query(req.query_string());
    let mut raw = json!({ "customer_ip_address": ip.to_string() });
    match q.opt("price_id") {
        // A price of this product only: the link names the product.
        Some(price) => {
            let ours = price
                .parse::<crate::domain::ids::PriceId>()
                .is_ok_and(|id| product.prices.iter().any(|p| p.id == id));
            if !ours {
                return Err(not_found());
            }
            raw["product_price_id"] = Value::from(price);
        }
        None => raw["product_id"] = Value::from(product.id.to_string()),
    }
    // The organization itself creates the checkout, as a server of the seller would with
    // an organization token: the same rules and validation as `POST /v1/checkouts/custom/`.
    let created = async {
        let input = body::<crate::api::checkout::CheckoutCreate>(raw)?.into_inner();
        let checkout = crate::app::checkout::create(
            &state,
            Subject::Organization(product.organization_id),
            input,
        )
        .await?;
        crate::app::views::checkout_view(&state, &checkout).await
    }
    .await;
    match created {
        Ok(checkout) => Ok(see_other(&checkout.url)),
        Err(crate::error::ApiError::Validation(_)) => Err(not_found()),
        Err(e) => Err(Fail::Api(e)),
    }
}

// ---------------------------------------------------------------------------------------
// Discounts
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/discounts.html")]
struct DiscountsPage {
    layout: Layout,
    discounts: Vec<Row>,
    pager: Pager,
    q: Form,
}

pub async fn discounts(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "discounts", "Discounts").await?;
    let auth = dash.auth::<DiscountsRead>()?;
    let q = Form::of_query(req.query_string());
    let (discounts, pager) = listing(
        &layout,
        &q,
        "/discounts",
        &[("query", q.get("query").trim()), ("sorting", "-created_at")],
        |qs| discounts_api::list(auth, dash.data(), qs),
    )
    .await?;
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
    discount: Option<Row>,
    products: Vec<Row>,
    form: Form,
    errors: Vec<String>,
    saved: bool,
}

/// The products on sale, for a form's choices.
async fn org_products(dash: &Dash, layout: &Layout) -> Result<Vec<Row>, Fail> {
    let auth = dash.auth::<ProductsRead>()?;
    choices(layout, &[("is_archived", "false")], |qs| {
        products_api::list(auth, dash.data(), qs)
    })
    .await
}

fn discount_form(d: &Row) -> Form {
    let mut f = Form::default();
    for k in [
        "name",
        "code",
        "type",
        "duration",
        "duration_in_months",
        "max_redemptions",
        "basis_points",
    ] {
        f.set(k, d.s(k));
    }
    f.set("amount", d.units("amount"));
    f.set("starts_at", d.day("starts_at"));
    f.set("ends_at", d.day("ends_at"));
    if d.is("basis_points") {
        f.set(
            "percent",
            format!(
                "{}",
                d.0["basis_points"].as_i64().unwrap_or(0) as f64 / 100.0
            ),
        );
    }
    for p in d.rows("products") {
        f.pairs.push(("product".into(), p.s("id")));
    }
    f
}

/// A date input as the API's timestamp (midnight UTC), null when blank, else as typed.
fn date_value(form: &Form, name: &str) -> Value {
    match form.opt(name) {
        None => Value::Null,
        Some(d) => match chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d") {
            Ok(date) => Value::from(format!("{date}T00:00:00Z")),
            Err(_) => Value::from(d),
        },
    }
}

/// A percentage ("12.5") as basis points for the API.
fn basis_points(form: &Form) -> Value {
    match form.opt("percent") {
        None => Value::Null,
        Some(p) => match super::parse_cents(p) {
            Some(bp) => Value::from(bp),
            None => Value::from(p),
        },
    }
}

pub async fn discount_new(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "discounts", "New discount").await?;
    let products = org_products(&dash, &layout).await?;
    let mut form = Form::default();
    form.set("type", "percentage");
    form.set("duration", "once");
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
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let layout = dash.layout(&path, "discounts", "New discount").await?;
    let mut raw = json!({
        "name": form.get("name").trim(),
        "type": form.get("type"),
        "duration": form.get("duration"),
        "code": form.text("code"),
        "starts_at": date_value(&form, "starts_at"),
        "ends_at": date_value(&form, "ends_at"),
        "max_redemptions": form.int("max_redemptions"),
        "products": form.all("product"),
        "organization_id": layout.org_id,
    });
    if form.get("duration") == "repeating" {
        raw["duration_in_months"] = form.int("duration_in_months");
    }
    if form.get("type") == "fixed" {
        raw["amount"] = form.cents("amount");
        raw["currency"] = Value::from(crate::api::price::CURRENCY);
    } else {
        raw["basis_points"] = basis_points(&form);
    }
    let created = async {
        discounts_api::create(
            dash.auth::<DiscountsWrite>()?,
            dash.data(),
            body::<DiscountCreate>(raw)?,
        )
        .await
    }
    .await
    .map_err(|e| form.explain_amounts(e, &[("amount", "USD off"), ("percent", "Percent off")]));
    match created {
        Ok(d) => Ok(see_other(
            &layout.at(&format!("/discounts/{}?saved=1", Row::of(&d.0).s("id"))),
        )),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let products = org_products(&dash, &layout).await?;
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

async fn discount_row(dash: &Dash, layout: &Layout, id: &str) -> Result<Row, Fail> {
    let auth = dash.auth::<DiscountsRead>()?;
    record(
        layout,
        discounts_api::get(auth, dash.data(), web::Path::from(id.to_string())),
    )
    .await
}

pub async fn discount(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "discounts", "Discount").await?;
    let d = discount_row(&dash, &layout, &path.1).await?;
    let products = org_products(&dash, &layout).await?;
    let saved = Form::of_query(req.query_string()).checked("saved");
    dash.page(
        200,
        &DiscountPage {
            form: discount_form(&d),
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
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "discounts", "Discount").await?;
    let d = discount_row(&dash, &layout, &id).await?;
    let raw = json!({
        "name": form.get("name").trim(),
        "code": form.text("code"),
        "starts_at": date_value(&form, "starts_at"),
        "ends_at": date_value(&form, "ends_at"),
        "max_redemptions": form.int("max_redemptions"),
        "products": form.all("product"),
    });
    // The amount and the duration of a discount are fixed once created (the API refuses
    // to change the duration); the form shows them without fields.
    let saved = async {
        discounts_api::update(
            dash.auth::<DiscountsWrite>()?,
            dash.data(),
            web::Path::from(id.clone()),
            body::<DiscountUpdate>(raw)?,
        )
        .await
    }
    .await;
    match saved {
        Ok(_) => Ok(see_other(&layout.at(&format!("/discounts/{id}?saved=1")))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            let products = org_products(&dash, &layout).await?;
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

// ---------------------------------------------------------------------------------------
// Custom fields
// ---------------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "dashboard/custom_fields.html")]
struct FieldsPage {
    layout: Layout,
    fields: Vec<Row>,
    pager: Pager,
    q: Form,
}

pub async fn custom_fields(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "custom-fields", "Custom fields").await?;
    let auth = dash.auth::<CustomFieldsRead>()?;
    let q = Form::of_query(req.query_string());
    let (fields, pager) = listing(
        &layout,
        &q,
        "/custom-fields",
        &[("query", q.get("query").trim())],
        |qs| custom_fields::list(auth, dash.data(), qs),
    )
    .await?;
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
    field: Option<Row>,
    form: Form,
    errors: Vec<String>,
    saved: bool,
}

/// The custom field body of a form: type, slug, name and the properties of its type;
/// select options one per line, `value` or `value: label`.
fn field_body(form: &Form, org: Option<&str>) -> Value {
    let kind = form.get("type");
    let mut props = json!({
        "form_label": form.text("form_label"),
        "form_help_text": form.text("form_help_text"),
        "form_placeholder": form.text("form_placeholder"),
    });
    match kind {
        "text" => {
            props["textarea"] = Value::from(form.checked("textarea"));
            props["min_length"] = form.int("min_length");
            props["max_length"] = form.int("max_length");
        }
        "number" => {
            props["ge"] = form.int("ge");
            props["le"] = form.int("le");
        }
        "select" => {
            let options: Vec<Value> = form
                .get("options")
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(|l| match l.split_once(':') {
                    Some((v, label)) => json!({"value": v.trim(), "label": label.trim()}),
                    None => json!({"value": l, "label": l}),
                })
                .collect();
            props["options"] = Value::from(options);
        }
        _ => {}
    }
    if let Some(m) = props.as_object_mut() {
        m.retain(|_, v| !v.is_null());
    }
    let mut raw = json!({
        "type": kind,
        "slug": form.get("slug").trim(),
        "name": form.get("name").trim(),
        "properties": props,
    });
    if let Some(org) = org {
        raw["organization_id"] = Value::from(org);
    }
    raw
}

fn field_form(f: &Row) -> Form {
    let mut form = Form::default();
    for k in ["type", "slug", "name"] {
        form.set(k, f.s(k));
    }
    for k in [
        "form_label",
        "form_help_text",
        "form_placeholder",
        "min_length",
        "max_length",
        "ge",
        "le",
    ] {
        form.set(k, f.s(&format!("properties.{k}")));
    }
    if f.is("properties.textarea") {
        form.set("textarea", "on");
    }
    let options: Vec<String> = f
        .rows("properties.options")
        .iter()
        .map(|o| format!("{}: {}", o.s("value"), o.s("label")))
        .collect();
    form.set("options", options.join("\n"));
    form
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
    let mut form = Form::default();
    form.set("type", "text");
    dash.page(
        200,
        &FieldPage {
            layout,
            field: None,
            form,
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
    let form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let layout = dash
        .layout(&path, "custom-fields", "New custom field")
        .await?;
    let raw = field_body(&form, Some(&layout.org_id));
    let created = async {
        custom_fields::create(
            dash.auth::<CustomFieldsWrite>()?,
            dash.data(),
            body::<Value>(raw)?,
        )
        .await
    }
    .await;
    match created {
        Ok(f) => Ok(see_other(
            &layout.at(&format!("/custom-fields/{}?saved=1", f.0.id)),
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

async fn field_row(dash: &Dash, layout: &Layout, id: &str) -> Result<Row, Fail> {
    let auth = dash.auth::<CustomFieldsRead>()?;
    record(
        layout,
        custom_fields::get(auth, dash.data(), web::Path::from(id.to_string())),
    )
    .await
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
    let f = field_row(&dash, &layout, &path.1).await?;
    let saved = Form::of_query(req.query_string()).checked("saved");
    dash.page(
        200,
        &FieldPage {
            form: field_form(&f),
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
    let mut form = Form::parse(&bytes);
    let dash = Dash::posted(&state, &req, &form).await?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "custom-fields", "Custom field").await?;
    let f = field_row(&dash, &layout, &id).await?;
    // A field's type does not change.
    form.set("type", f.s("type"));
    let raw = field_body(&form, None);
    let saved = async {
        custom_fields::update(
            dash.auth::<CustomFieldsWrite>()?,
            dash.data(),
            web::Path::from(id.clone()),
            body::<Value>(raw)?,
        )
        .await
    }
    .await;
    match saved {
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
