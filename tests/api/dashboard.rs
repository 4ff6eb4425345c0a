//! The seller's dashboard over HTTP: a browser that keeps cookies and never follows
//! redirects signs in, creates its organization and catalog through the dashboard's own
//! forms, buyers purchase through the checkout link (`/buy/{product_id}`) and the test
//! payment processor, and every page and form is checked for what it shows, what it
//! refuses (422 with the API's errors, 403 without the CSRF token, 404 for another
//! organization's records) and what it changes.

use std::time::Duration;

use serde_json::{json, Value};
use tollgate::config::{Limit, Settings};
use tollgate::domain::product::{PriceKind, RecurringInterval, SeatTier, SeatTierType, SeatTiers};
use tollgate::web::dashboard::ROUTES;

use crate::checkouts::{buyer, confirm, Api};
use crate::helpers::{spawn_app, spawn_app_with, TestApp};
use crate::oauth::{signed_in, user_with_password, Browser, Page, PASSWORD};

const ADA: &str = "ada@example.com";
const GRACE: &str = "grace@example.com";
/// A CSRF token of the right length that is not the browser's.
const FORGED: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const UNKNOWN: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";
const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";
const ACTIVATE: &str = "/v1/customer-portal/license-keys/activate";

// ---------------------------------------------------------------------------------------
// Reading pages

/// The few entities askama writes, back to text.
pub(crate) fn unescape(s: &str) -> String {
    s.replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&#60;", "<")
        .replace("&#62;", ">")
        .replace("&#38;", "&")
}

/// The text of the element with `id`, up to its first child element.
#[track_caller]
pub(crate) fn text_of(page: &Page, id: &str) -> String {
    let needle = format!("id=\"{id}\"");
    let at = page
        .body
        .find(&needle)
        .unwrap_or_else(|| panic!("no element #{id} in\n{}", main_of(page)));
    let rest = &page.body[at..];
    let start = rest.find('>').expect("a closed start tag") + 1;
    let end = rest[start..].find('<').expect("an element's end");
    unescape(rest[start..start + end].trim())
}

/// The lines of the error list a form shows (`<div class="error" role="alert">`).
fn errors(page: &Page) -> Vec<String> {
    let Some(at) = page.body.find(r#"<div class="error" role="alert"><ul>"#) else {
        return Vec::new();
    };
    let list = &page.body[at..];
    let list = &list[..list.find("</ul>").unwrap_or(list.len())];
    list.split("<li>")
        .skip(1)
        .map(|li| unescape(li.split("</li>").next().unwrap_or("")))
        .collect()
}

/// The text of a `<textarea name=…>`.
#[track_caller]
fn textarea(page: &Page, name: &str) -> String {
    let needle = format!("name=\"{name}\"");
    let at = page
        .body
        .find(&needle)
        .unwrap_or_else(|| panic!("no textarea {name} in\n{}", main_of(page)));
    let rest = &page.body[at..];
    let start = rest.find('>').unwrap() + 1;
    let end = rest.find("</textarea>").unwrap();
    unescape(&rest[start..end])
}

/// Whether the checkbox with `id` is ticked.
#[track_caller]
fn checked(page: &Page, id: &str) -> bool {
    let needle = format!("id=\"{id}\"");
    let at = page
        .body
        .find(&needle)
        .unwrap_or_else(|| panic!("no checkbox #{id} in\n{}", main_of(page)));
    let tag = &page.body[at..];
    tag[..tag.find('>').unwrap()].contains(" checked")
}

fn saved(page: &Page) -> bool {
    page.body
        .contains(r#"<p class="notice" role="status">Saved.</p>"#)
}

/// The record ids a page links to under `/dashboard/{org}/{section}/`, in order, once each.
fn linked_ids(page: &Page, org: &str, section: &str) -> Vec<String> {
    let needle = format!("href=\"/dashboard/{org}/{section}/");
    let mut ids: Vec<String> = Vec::new();
    for part in page.body.split(&needle).skip(1) {
        let id: String = part
            .chars()
            .take_while(|c| c.is_ascii_hexdigit() || *c == '-')
            .collect();
        if id.len() == 36 && !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// The `href` of the pager's `rel="next"` link.
fn next_link(page: &Page) -> Option<String> {
    let at = page.body.find(r#"rel="next""#)?;
    let before = &page.body[..at];
    let start = before.rfind("href=\"")? + "href=\"".len();
    let end = before[start..].find('"')?;
    Some(unescape(&before[start..start + end]))
}

/// The `data-value`s of the bars of `series` in the chart section `section`, summed.
fn bar_total(page: &Page, section: &str, series: &str) -> f64 {
    let at = page
        .body
        .find(&format!("<section id=\"{section}\">"))
        .unwrap_or_else(|| panic!("no chart {section}"));
    let chart = &page.body[at..];
    let chart = &chart[..chart.find("</section>").unwrap()];
    let needle = format!("data-series=\"{series}\" data-value=\"");
    chart
        .split(&needle)
        .skip(1)
        .map(|v| v[..v.find('"').unwrap()].parse::<f64>().unwrap())
        .sum()
}

/// The part of a page worth printing when an assertion fails: its `<main>`.
pub(crate) fn main_of(page: &Page) -> &str {
    let body = page.body.as_str();
    let start = body.find("<main>").unwrap_or(0);
    let end = body
        .find("</main>")
        .map_or(body.len(), |e| e + "</main>".len());
    body.get(start..end.max(start)).unwrap_or(body)
}

#[track_caller]
pub(crate) fn assert_status(page: &Page, status: u16) {
    assert_eq!(
        page.status.as_u16(),
        status,
        "location {:?}, page:\n{}",
        page.location,
        main_of(page)
    );
}

/// A 303's target.
#[track_caller]
pub(crate) fn redirected(page: &Page) -> String {
    assert_status(page, 303);
    assert!(!page.location.is_empty(), "303 without a Location");
    page.location.clone()
}

/// A dashboard page: 200, HTML, not cached.
#[track_caller]
fn assert_html(page: &Page) {
    assert_status(page, 200);
    assert!(
        page.content_type.starts_with("text/html"),
        "{}",
        page.content_type
    );
    let cache = page
        .headers
        .get("cache-control")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert_eq!(cache, "no-store");
}

/// A 422 form page whose error list has a line about `field` (as the dashboard names it:
/// `prices › 0 › price amount`).
#[track_caller]
pub(crate) fn assert_invalid(page: &Page, field: &str) {
    assert_status(page, 422);
    assert!(page.content_type.starts_with("text/html"));
    let errs = errors(page);
    assert!(
        errs.iter().any(|e| e.starts_with(&format!("{field}: "))),
        "no error about {field:?} in {errs:?}"
    );
}

/// A 404 page (HTML, not a redirect).
#[track_caller]
pub(crate) fn assert_not_found(page: &Page) {
    assert_status(page, 404);
    assert!(page.location.is_empty());
    assert!(
        page.content_type.starts_with("text/html"),
        "{}",
        page.content_type
    );
}

// ---------------------------------------------------------------------------------------
// Driving the browser

/// The CSRF token of the browser's forms (bound to its nonce cookie and its session), as
/// any page with a form carries it.
async fn csrf_of(b: &mut Browser) -> String {
    assert!(
        b.cookie_header().contains("tollgate_csrf="),
        "a tollgate_csrf cookie"
    );
    b.get("/oauth2/login").await.csrf()
}

/// Posts a form with the browser's CSRF token.
pub(crate) async fn form_post(b: &mut Browser, path: &str, fields: &[(&str, &str)]) -> Page {
    let csrf = csrf_of(b).await;
    let mut form = vec![("csrf_token", csrf.as_str())];
    form.extend_from_slice(fields);
    b.post(path, &form).await
}

/// Posts a form with a forged token, then with none: both refused with 403 before anything
/// is read.
pub(crate) async fn assert_csrf_refused(b: &mut Browser, path: &str, fields: &[(&str, &str)]) {
    let mut forged = vec![("csrf_token", FORGED)];
    forged.extend_from_slice(fields);
    for form in [forged.as_slice(), fields] {
        let page = b.post(path, form).await;
        assert_status(&page, 403);
        assert!(page.location.is_empty());
        assert!(page.content_type.starts_with("text/html"));
        assert!(page.body.contains("CSRF"), "{}", main_of(&page));
    }
}

/// GETs `path` until the element `id` reads `want` (the overview's counters are projected
/// in the background): at most 50 tries 100 ms apart. Returns the last page.
async fn poll_text(b: &mut Browser, path: &str, id: &str, want: &str) -> Page {
    let mut page = b.get(path).await;
    for _ in 0..50 {
        assert_html(&page);
        if text_of(&page, id) == want {
            return page;
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
        page = b.get(path).await;
    }
    panic!(
        "#{id} of {path} still reads {:?}, not {want:?}",
        text_of(&page, id)
    );
}

/// A browser signed in as `email` with one organization `org_name`, created through the
/// dashboard's form: (browser, organization id).
pub(crate) async fn seller(app: &TestApp, email: &str, org_name: &str) -> (Browser, String) {
    let mut b = signed_in(app, email).await;
    let org = new_org(&mut b, org_name).await;
    (b, org)
}

async fn new_org(b: &mut Browser, name: &str) -> String {
    let page = form_post(b, "/dashboard/organizations/new", &[("name", name)]).await;
    let to = redirected(&page);
    to.strip_prefix("/dashboard/")
        .unwrap_or_else(|| panic!("created organization at {to}"))
        .to_string()
}

/// The id at the end of `location`, after `prefix` (a query dropped).
#[track_caller]
fn id_after(location: &str, prefix: &str) -> String {
    let rest = location
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("{location} is not under {prefix}"));
    rest.split('?').next().unwrap().to_string()
}

/// A fixed-price product through the form (`billing`: `one_time`, `month`, `year`);
/// returns its id.
async fn new_product(
    b: &mut Browser,
    org: &str,
    name: &str,
    billing: &str,
    amount: &str,
) -> String {
    let page = form_post(
        b,
        &format!("/dashboard/{org}/products/new"),
        &[
            ("name", name),
            ("billing", billing),
            ("amount_type", "fixed"),
            ("amount", amount),
        ],
    )
    .await;
    id_after(&redirected(&page), &format!("/dashboard/{org}/products/"))
}

/// The id of the benefit described `description`, as the product page's checkboxes give it.
#[track_caller]
fn benefit_id(product_page: &Page, description: &str) -> String {
    product_page
        .body
        .split(r#"<input type="checkbox" id="benefit-"#)
        .skip(1)
        .find(|part| part.contains(&format!(">{description} <span")))
        .map(|part| part[..36].to_string())
        .unwrap_or_else(|| panic!("no benefit {description:?} in\n{}", main_of(product_page)))
}

/// A license-key benefit through the benefits form; returns its id (read from `product`'s
/// page).
async fn new_key_benefit(
    b: &mut Browser,
    org: &str,
    product: &str,
    description: &str,
    fields: &[(&str, &str)],
) -> String {
    let mut form = vec![("description", description)];
    form.extend_from_slice(fields);
    let page = form_post(b, &format!("/dashboard/{org}/benefits"), &form).await;
    assert_eq!(redirected(&page), format!("/dashboard/{org}/benefits"));
    let page = b.get(&format!("/dashboard/{org}/products/{product}")).await;
    assert_html(&page);
    benefit_id(&page, description)
}

/// Sets the benefits of a product through its benefits form.
async fn attach(b: &mut Browser, org: &str, product: &str, benefits: &[&str]) {
    let form: Vec<(&str, &str)> = benefits.iter().map(|id| ("benefit", *id)).collect();
    let page = form_post(
        b,
        &format!("/dashboard/{org}/products/{product}/benefits"),
        &form,
    )
    .await;
    assert_eq!(
        redirected(&page),
        format!("/dashboard/{org}/products/{product}?saved=1")
    );
}

/// What most tests sell, set up through the dashboard's forms.
struct Shop {
    org: String,
    /// `ALPHA` keys, three activations.
    benefit: String,
    /// "Field Guide": one-time $25, grants a key.
    ebook: String,
    /// "Pro Plan": $15 a month, grants a key.
    plan: String,
}

const SHOP: &str = "Alpha Tools";
const EBOOK: &str = "Field Guide";
const PLAN: &str = "Pro Plan";

async fn shop(b: &mut Browser, org: &str) -> Shop {
    let ebook = new_product(b, org, EBOOK, "one_time", "25").await;
    let plan = new_product(b, org, PLAN, "month", "15").await;
    let benefit = new_key_benefit(
        b,
        org,
        &ebook,
        "Alpha license",
        &[
            ("prefix", "ALPHA"),
            ("activations", "3"),
            ("enable_customer_admin", "on"),
        ],
    )
    .await;
    attach(b, org, &ebook, &[&benefit]).await;
    attach(b, org, &plan, &[&benefit]).await;
    Shop {
        org: org.to_string(),
        benefit,
        ebook,
        plan,
    }
}

/// The client secret of the checkout a checkout link redirected to.
#[track_caller]
fn checkout_secret(page: &Page) -> String {
    let to = redirected(page);
    let (_, secret) = to
        .split_once("/checkout/")
        .unwrap_or_else(|| panic!("checkout link redirected to {to}"));
    assert!(!secret.is_empty() && !secret.contains('/'), "{to}");
    secret.to_string()
}

/// Buys through a checkout link (`/buy/…`, no session) and pays with the test card.
async fn buy(app: &TestApp, link: &str, email: &str) -> Value {
    let page = Browser::new(app).get(link).await;
    let secret = checkout_secret(&page);
    let r = confirm(Api::of(app), &secret, &buyer(email)).await;
    r.expect(200);
    r.body
}

/// A shop with sales: Ada bought the ebook (an order, a key), Grace subscribed to the plan;
/// a discount and a custom field exist.
struct Sold {
    shop: Shop,
    order: String,
    subscription: String,
    /// Ada.
    customer: String,
    /// Ada's key.
    key: String,
    discount: String,
    field: String,
}

async fn sold(app: &TestApp, b: &mut Browser, org: &str) -> Sold {
    let shop = shop(b, org).await;
    buy(app, &format!("/buy/{}", shop.ebook), ADA).await;
    buy(app, &format!("/buy/{}", shop.plan), GRACE).await;
    let page = b
        .get(&format!(
            "/dashboard/{org}/orders?product_id={}",
            shop.ebook
        ))
        .await;
    assert_html(&page);
    let order = linked_ids(&page, org, "orders").remove(0);
    // The receipt's e-mail is decided and settled in the background (the tests' transport
    // is `none`): wait for it, so that pages read twice read the same.
    poll_text(
        b,
        &format!("/dashboard/{org}/orders/{order}"),
        "mail-state-1",
        "skipped",
    )
    .await;
    let page = b.get(&format!("/dashboard/{org}/subscriptions")).await;
    let subscription = linked_ids(&page, org, "subscriptions").remove(0);
    let page = b
        .get(&format!("/dashboard/{org}/customers?query={ADA}"))
        .await;
    let customers = linked_ids(&page, org, "customers");
    assert_eq!(customers.len(), 1, "{}", main_of(&page));
    let customer = customers[0].clone();
    let page = b
        .get(&format!("/dashboard/{org}/customers/{customer}"))
        .await;
    assert_html(&page);
    let key = linked_ids(&page, org, "license-keys").remove(0);
    let page = form_post(
        b,
        &format!("/dashboard/{org}/discounts/new"),
        &[
            ("name", "Spring"),
            ("code", "SPRING"),
            ("type", "percentage"),
            ("percent", "10"),
            ("duration", "once"),
        ],
    )
    .await;
    let discount = id_after(&redirected(&page), &format!("/dashboard/{org}/discounts/"));
    let page = form_post(
        b,
        &format!("/dashboard/{org}/custom-fields/new"),
        &[
            ("type", "text"),
            ("name", "Shoe Size"),
            ("slug", "shoe-size"),
        ],
    )
    .await;
    let field = id_after(
        &redirected(&page),
        &format!("/dashboard/{org}/custom-fields/"),
    );
    // The overview's counters have caught up with both sales.
    let overview = format!("/dashboard/{org}");
    poll_text(b, &overview, "orders-total", "2").await;
    poll_text(b, &overview, "active-now", "1").await;
    Sold {
        shop,
        order,
        subscription,
        customer,
        key,
        discount,
        field,
    }
}

/// A page: (its route as `ROUTES` names it, a path to it, what it must show).
type PageCase = (&'static str, String, Vec<String>);
/// A form: (its route, a path to it, the fields posted).
type FormCase = (&'static str, String, Vec<(&'static str, String)>);

/// Every GET page of an organization with records (route, path, what it must show).
fn pages_of(s: &Sold) -> Vec<PageCase> {
    let org = &s.shop.org;
    let at = |rest: &str| format!("/dashboard/{org}{rest}");
    vec![
        (
            "/dashboard/organizations/new",
            "/dashboard/organizations/new".into(),
            vec!["Create an organization".into()],
        ),
        (
            "/dashboard/{org}",
            at(""),
            vec![
                format!("<h1>{SHOP}</h1>"),
                r#"id="revenue-total""#.into(),
                r#"<section id="chart-validations">"#.into(),
            ],
        ),
        (
            "/dashboard/{org}/settings",
            at("/settings"),
            vec![format!("Settings of {SHOP}"), "alpha-tools".into()],
        ),
        (
            "/dashboard/{org}/tax",
            at("/tax"),
            vec![format!("Tax of {SHOP}")],
        ),
        (
            "/dashboard/{org}/tax/reports",
            at("/tax/reports"),
            vec![
                format!("Tax reports of {SHOP}"),
                "EU One-Stop-Shop return".into(),
            ],
        ),
        (
            "/dashboard/{org}/products",
            at("/products"),
            vec![EBOOK.into(), PLAN.into(), "$15.00 / month".into()],
        ),
        (
            "/dashboard/{org}/products/new",
            at("/products/new"),
            vec!["<h1>New product</h1>".into()],
        ),
        (
            "/dashboard/{org}/products/{id}",
            at(&format!("/products/{}", s.shop.ebook)),
            vec![
                format!("<h1>{EBOOK}</h1>"),
                format!("/buy/{}\">", s.shop.ebook),
                "$25.00".into(),
                "Alpha license".into(),
            ],
        ),
        (
            "/dashboard/{org}/benefits",
            at("/benefits"),
            vec!["Alpha license".into(), "prefix ALPHA".into()],
        ),
        (
            "/dashboard/{org}/benefits/{id}",
            at(&format!("/benefits/{}", s.shop.benefit)),
            vec![
                "<h1>Benefit Alpha license</h1>".into(),
                r#"name="prefix" value="ALPHA""#.into(),
                r#"name="activations" value="3""#.into(),
            ],
        ),
        (
            "/dashboard/{org}/orders",
            at("/orders"),
            vec![ADA.into(), GRACE.into(), EBOOK.into(), "$25.00".into()],
        ),
        (
            "/dashboard/{org}/orders/{id}",
            at(&format!("/orders/{}", s.order)),
            vec!["<h1>Order $25.00</h1>".into(), ADA.into(), EBOOK.into()],
        ),
        (
            "/dashboard/{org}/subscriptions",
            at("/subscriptions"),
            vec![GRACE.into(), PLAN.into(), "$15.00 / month".into()],
        ),
        (
            "/dashboard/{org}/subscriptions/{id}",
            at(&format!("/subscriptions/{}", s.subscription)),
            vec![
                format!("Subscription to {PLAN}"),
                GRACE.into(),
                ">active<".into(),
            ],
        ),
        (
            "/dashboard/{org}/customers",
            at("/customers"),
            vec![ADA.into(), GRACE.into()],
        ),
        (
            "/dashboard/{org}/customers/{id}",
            at(&format!("/customers/{}", s.customer)),
            vec![format!("<h1>{ADA}</h1>"), EBOOK.into(), s.key.clone()],
        ),
        (
            "/dashboard/{org}/license-keys",
            at("/license-keys"),
            vec![ADA.into(), GRACE.into(), s.key.clone()],
        ),
        (
            "/dashboard/{org}/license-keys/{id}",
            at(&format!("/license-keys/{}", s.key)),
            vec![
                r#"id="key-status">granted<"#.into(),
                ADA.into(),
                "No activations.".into(),
            ],
        ),
        (
            "/dashboard/{org}/discounts",
            at("/discounts"),
            vec!["Spring".into(), "SPRING".into(), "1000 bp".into()],
        ),
        (
            "/dashboard/{org}/discounts/new",
            at("/discounts/new"),
            vec!["<h1>New discount</h1>".into(), EBOOK.into()],
        ),
        (
            "/dashboard/{org}/discounts/{id}",
            at(&format!("/discounts/{}", s.discount)),
            vec!["<h1>Discount Spring</h1>".into(), "10% off".into()],
        ),
        (
            "/dashboard/{org}/custom-fields",
            at("/custom-fields"),
            vec!["Shoe Size".into(), "<code>shoe-size</code>".into()],
        ),
        (
            "/dashboard/{org}/custom-fields/new",
            at("/custom-fields/new"),
            vec!["<h1>New custom field</h1>".into()],
        ),
        (
            "/dashboard/{org}/custom-fields/{id}",
            at(&format!("/custom-fields/{}", s.field)),
            vec!["<h1>Custom field Shoe Size</h1>".into()],
        ),
    ]
}

/// Every form of an organization with records, with a valid-looking body (route, path,
/// fields).
fn forms_of(s: &Sold) -> Vec<FormCase> {
    let org = &s.shop.org;
    let at = |rest: &str| format!("/dashboard/{org}{rest}");
    let name = |n: &str| vec![("name", n.to_string())];
    vec![
        (
            "/dashboard/{org}/settings",
            at("/settings"),
            name("Taken Over"),
        ),
        (
            "/dashboard/{org}/tax",
            at("/tax"),
            vec![("country", "DE".into())],
        ),
        (
            "/dashboard/{org}/products/new",
            at("/products/new"),
            vec![("name", "Intruder".into()), ("amount", "1".into())],
        ),
        (
            "/dashboard/{org}/products/{id}",
            at(&format!("/products/{}", s.shop.ebook)),
            name("Taken Over"),
        ),
        (
            "/dashboard/{org}/products/{id}/benefits",
            at(&format!("/products/{}/benefits", s.shop.ebook)),
            Vec::new(),
        ),
        (
            "/dashboard/{org}/benefits",
            at("/benefits"),
            vec![("description", "Intruder".into())],
        ),
        (
            "/dashboard/{org}/benefits/{id}",
            at(&format!("/benefits/{}", s.shop.benefit)),
            vec![("description", "Taken Over".into())],
        ),
        (
            "/dashboard/{org}/orders/{id}/receipt",
            at(&format!("/orders/{}/receipt", s.order)),
            Vec::new(),
        ),
        (
            "/dashboard/{org}/customers/{id}/portal-link",
            at(&format!("/customers/{}/portal-link", s.customer)),
            Vec::new(),
        ),
        (
            "/dashboard/{org}/orders/{id}/refunds",
            at(&format!("/orders/{}/refunds", s.order)),
            vec![("amount", "1".into()), ("reason", "other".into())],
        ),
        (
            "/dashboard/{org}/orders/{id}/invoice",
            at(&format!("/orders/{}/invoice", s.order)),
            Vec::new(),
        ),
        (
            "/dashboard/{org}/orders/{id}/billing",
            at(&format!("/orders/{}/billing", s.order)),
            vec![("billing_name", "Taken Over".into())],
        ),
        (
            "/dashboard/{org}/subscriptions/{id}",
            at(&format!("/subscriptions/{}", s.subscription)),
            vec![("action", "revoke".into())],
        ),
        (
            "/dashboard/{org}/license-keys/{id}",
            at(&format!("/license-keys/{}", s.key)),
            vec![("quick", "1".into()), ("status", "revoked".into())],
        ),
        (
            "/dashboard/{org}/license-keys/signing",
            at("/license-keys/signing"),
            vec![("sign_every_answer", "true".into())],
        ),
        (
            "/dashboard/{org}/license-keys/signing/rotate",
            at("/license-keys/signing/rotate"),
            Vec::new(),
        ),
        (
            "/dashboard/{org}/license-keys/{id}/activations/{activation_id}/deactivate",
            at(&format!(
                "/license-keys/{}/activations/{UNKNOWN}/deactivate",
                s.key
            )),
            Vec::new(),
        ),
        (
            "/dashboard/{org}/discounts/new",
            at("/discounts/new"),
            vec![("name", "Intruder".into()), ("percent", "50".into())],
        ),
        (
            "/dashboard/{org}/discounts/{id}",
            at(&format!("/discounts/{}", s.discount)),
            name("Taken Over"),
        ),
        (
            "/dashboard/{org}/custom-fields/new",
            at("/custom-fields/new"),
            vec![
                ("type", "text".into()),
                ("name", "Intruder".into()),
                ("slug", "intruder".into()),
            ],
        ),
        (
            "/dashboard/{org}/custom-fields/{id}",
            at(&format!("/custom-fields/{}", s.field)),
            name("Taken Over"),
        ),
    ]
}

/// `pages`/`forms` cover every route of `ROUTES` with `method` under an organization.
fn assert_covers(method: &str, covered: &[&str]) {
    for (m, route, _) in ROUTES {
        if *m == method && route.starts_with("/dashboard/") && !covered.contains(route) {
            if *route == "/dashboard/organizations/new" && method == "post" {
                continue;
            }
            // The Webhooks section: `dashboard_webhooks.rs` covers its routes the same way.
            if route.starts_with("/dashboard/{org}/webhooks") {
                continue;
            }
            // The Meters section: `dashboard_meters.rs` covers its routes the same way.
            if route.starts_with("/dashboard/{org}/meters") {
                continue;
            }
            // The Releases section: `browser_releases.rs` covers its routes the same way.
            if route.starts_with("/dashboard/{org}/releases") {
                continue;
            }
            // The Files section: `downloadables.rs` covers its routes the same way.
            if route.starts_with("/dashboard/{org}/files")
                || route.starts_with("/dashboard/assets/")
            {
                continue;
            }
            // The tax reports' CSV files (not pages): `dashboard_tax.rs` reads them.
            if route.ends_with(".csv") {
                continue;
            }
            panic!("{method} {route} is not exercised by this test");
        }
    }
}

/// A record's pages, read once more to check nothing changed.
/// (The overview by its counters: its charts' day labels move at midnight.)
async fn snapshot(b: &mut Browser, s: &Sold) -> Vec<String> {
    let mut bodies = Vec::new();
    for (route, path, _) in pages_of(s) {
        let page = b.get(&path).await;
        assert_html(&page);
        if route == "/dashboard/{org}" {
            for id in [
                "revenue-total",
                "orders-total",
                "active-now",
                "validations-total",
                "refused-total",
            ] {
                bodies.push(format!("{id}: {}", text_of(&page, id)));
            }
        } else {
            bodies.push(page.body);
        }
    }
    bodies
}

// ---------------------------------------------------------------------------------------
// Signing in, landing, switching organizations

#[actix_web::test]
async fn the_dashboard_sends_to_sign_in_then_to_a_new_or_the_first_organization() {
    let app = spawn_app().await;
    let mut b = Browser::new(&app);

    // Without a session: to sign in, coming back to the page asked for.
    let page = b.get("/dashboard").await;
    assert_eq!(redirected(&page), "/oauth2/login?next=%2Fdashboard");
    let page = b
        .get(&format!("/dashboard/{UNKNOWN}/orders?sorting=amount"))
        .await;
    assert_eq!(
        redirected(&page),
        format!("/oauth2/login?next=%2Fdashboard%2F{UNKNOWN}%2Forders%3Fsorting%3Damount")
    );
    let page = b.get("/dashboard/organizations/new").await;
    assert_eq!(
        redirected(&page),
        "/oauth2/login?next=%2Fdashboard%2Forganizations%2Fnew"
    );

    // The sign-in page keeps `next`, and signing in lands on it.
    user_with_password(&app, "lands@example.com").await;
    let page = b.get("/oauth2/login?next=%2Fdashboard").await;
    assert_html(&page);
    assert_eq!(page.input("next").as_deref(), Some("/dashboard"));
    let csrf = page.csrf();
    let page = b
        .post(
            "/oauth2/login",
            &[
                ("csrf_token", csrf.as_str()),
                ("email", "lands@example.com"),
                ("password", PASSWORD),
                ("next", "/dashboard"),
            ],
        )
        .await;
    assert_eq!(redirected(&page), "/dashboard");

    // No organization yet: to the form that creates one.
    let page = b.get("/dashboard").await;
    assert_eq!(redirected(&page), "/dashboard/organizations/new");
    let page = b.get("/dashboard/organizations/new").await;
    assert_html(&page);
    assert!(page.body.contains("<h1>Create an organization</h1>"));
    assert!(page.body.contains("lands@example.com"), "the user is shown");
    assert!(
        !page.body.contains("id=\"org-switch\""),
        "no organization to switch to"
    );
    assert_eq!(page.csrf(), csrf_of(&mut b).await);

    // With organizations: to the first one created; `?org=` switches.
    let first = new_org(&mut b, "First Light").await;
    let page = b.get("/dashboard").await;
    assert_eq!(redirected(&page), format!("/dashboard/{first}"));
    let second = new_org(&mut b, "Second Wind").await;
    assert_ne!(first, second);
    let page = b.get("/dashboard").await;
    assert_eq!(redirected(&page), format!("/dashboard/{first}"));
    let page = b.get(&format!("/dashboard?org={second}")).await;
    assert_eq!(redirected(&page), format!("/dashboard/{second}"));
    let page = b.get(&format!("/dashboard/{second}")).await;
    assert_html(&page);
    assert!(page.body.contains("<h1>Second Wind</h1>"));
    assert!(page
        .body
        .contains(&format!(r#"<option value="{first}">First Light</option>"#)));
    assert!(page.body.contains(&format!(
        r#"<option value="{second}" selected>Second Wind</option>"#
    )));
    assert!(page.body.contains(r#"aria-current="page">Overview</a>"#));

    // The switcher only takes an id: anything else is refused, not followed.
    let page = b.get("/dashboard?org=https%3A%2F%2Fevil.example").await;
    assert!(page.location.is_empty(), "redirected to {}", page.location);
    assert!(
        matches!(page.status.as_u16(), 404 | 422),
        "{}: {}",
        page.status,
        main_of(&page)
    );
    // An id of an organization the user is not in: the switch redirects, the page is 404.
    let page = b.get(&format!("/dashboard?org={UNKNOWN}")).await;
    assert_eq!(redirected(&page), format!("/dashboard/{UNKNOWN}"));
    assert_not_found(&b.get(&format!("/dashboard/{UNKNOWN}")).await);
}

// ---------------------------------------------------------------------------------------
// Every page, and who may see it

#[actix_web::test]
async fn every_page_renders_for_a_member() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "pages@example.com", SHOP).await;
    let s = sold(&app, &mut b, &org).await;
    let pages = pages_of(&s);
    let routes: Vec<&str> = pages.iter().map(|(r, _, _)| *r).collect();
    assert_covers("get", &routes);
    for (route, path, shows) in &pages {
        let page = b.get(path).await;
        assert_html(&page);
        for want in shows {
            assert!(
                page.body.contains(want.as_str()),
                "{route} ({path}) does not show {want:?}:\n{}",
                main_of(&page)
            );
        }
        assert!(page.body.contains("pages@example.com"), "{route}: the user");
        assert!(page.body.contains(r#"action="/oauth2/logout""#), "{route}");
    }

    // The overview's range: 7 days is 7 bars a chart, anything unknown is 30.
    for (days, bars) in [("7", 7), ("90", 90), ("365", 365), ("12", 30), ("x", 30)] {
        let page = b.get(&format!("/dashboard/{org}?days={days}")).await;
        assert_html(&page);
        let at = page.body.find(r#"<section id="chart-orders">"#).unwrap();
        let chart = &page.body[at..];
        let chart = &chart[..chart.find("</section>").unwrap()];
        assert_eq!(chart.matches("<g><title>").count(), bars, "days={days}");
        for id in [
            "chart-revenue",
            "chart-orders",
            "chart-subscriptions",
            "chart-validations",
        ] {
            assert!(page.body.contains(&format!(r#"<section id="{id}">"#)));
        }
    }

    // A range of dates: one bar a day, the dates kept in the form; a range that cannot be
    // shown is said so (422) and the last 30 days are shown instead.
    let today = chrono::Utc::now().date_naive();
    let from = (today - chrono::Duration::days(9)).to_string();
    let page = b
        .get(&format!("/dashboard/{org}?from={from}&to={today}"))
        .await;
    assert_html(&page);
    let at = page.body.find(r#"<section id="chart-orders">"#).unwrap();
    let chart = &page.body[at..];
    let chart = &chart[..chart.find("</section>").unwrap()];
    assert_eq!(chart.matches("<g><title>").count(), 10);
    assert_eq!(page.input("from").as_deref(), Some(from.as_str()));
    for (query, why) in [
        (
            format!("from={today}&to={from}"),
            "The range must start before it ends.",
        ),
        (
            "from=someday".to_string(),
            "from: enter a date as YYYY-MM-DD",
        ),
        (
            format!("to={}", today + chrono::Duration::days(1)),
            "The range must end by today.",
        ),
    ] {
        let page = b.get(&format!("/dashboard/{org}?{query}")).await;
        assert_status(&page, 422);
        assert!(page.body.contains(why), "{query}: {}", main_of(&page));
        let at = page.body.find(r#"<section id="chart-orders">"#).unwrap();
        let chart = &page.body[at..];
        let chart = &chart[..chart.find("</section>").unwrap()];
        assert_eq!(chart.matches("<g><title>").count(), 30, "{query}");
    }

    // A record id that is not one: the API's 422 or 404, as a page.
    let page = b.get(&format!("/dashboard/{org}/products/not-an-id")).await;
    assert!(page.status == 404 || page.status == 422, "{}", page.status);
    assert_not_found(&b.get(&format!("/dashboard/{org}/orders/{UNKNOWN}")).await);
    assert_not_found(
        &b.get(&format!("/dashboard/{org}/license-keys/{UNKNOWN}"))
            .await,
    );
}

/// A second seller reaches none of the first one's pages or forms, and their own pages
/// show nothing of the first one's.
#[actix_web::test]
async fn another_sellers_organization_is_not_found() {
    let app = spawn_app().await;
    let (mut a, org_a) = seller(&app, "first@example.com", SHOP).await;
    let s = sold(&app, &mut a, &org_a).await;
    let before = snapshot(&mut a, &s).await;

    let (mut b, org_b) = seller(&app, "second@example.com", "Beta Goods").await;
    for (route, path, _) in pages_of(&s) {
        if route == "/dashboard/organizations/new" {
            continue;
        }
        let page = b.get(&path).await;
        assert_not_found(&page);
        assert!(
            !page.body.contains(EBOOK) && !page.body.contains(ADA),
            "{route}"
        );
    }
    let forms = forms_of(&s);
    let routes: Vec<&str> = forms.iter().map(|(r, _, _)| *r).collect();
    assert_covers("post", &routes);
    for (route, path, fields) in &forms {
        let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let page = form_post(&mut b, path, &fields).await;
        assert_status(&page, 404);
        assert!(page.location.is_empty(), "{route}");
    }
    // A's records under B's own organization are not found either.
    for (section, id) in [
        ("products", &s.shop.ebook),
        ("orders", &s.order),
        ("subscriptions", &s.subscription),
        ("customers", &s.customer),
        ("license-keys", &s.key),
        ("discounts", &s.discount),
        ("custom-fields", &s.field),
    ] {
        assert_not_found(&b.get(&format!("/dashboard/{org_b}/{section}/{id}")).await);
    }

    // B's own pages: nothing of A's catalog, customers or organization.
    shop(&mut b, &org_b).await;
    let mut own = vec![
        format!("/dashboard/{org_b}"),
        "/dashboard/organizations/new".into(),
    ];
    for section in [
        "settings",
        "products",
        "benefits",
        "orders",
        "subscriptions",
        "customers",
        "license-keys",
        "discounts",
        "custom-fields",
        "products/new",
        "discounts/new",
    ] {
        own.push(format!("/dashboard/{org_b}/{section}"));
    }
    for path in own {
        let page = b.get(&path).await;
        assert_html(&page);
        for secret in [
            ADA,
            GRACE,
            SHOP,
            org_a.as_str(),
            s.shop.ebook.as_str(),
            "Spring",
            "Shoe Size",
        ] {
            assert!(!page.body.contains(secret), "{path} shows {secret:?}");
        }
    }
    // Searching B's customers and keys for A's customer finds nothing (the query is echoed).
    let page = b
        .get(&format!("/dashboard/{org_b}/customers?query={ADA}"))
        .await;
    assert!(linked_ids(&page, &org_b, "customers").is_empty());
    assert!(page.body.contains("No customers found."));
    let page = b
        .get(&format!("/dashboard/{org_b}/license-keys?query={ADA}"))
        .await;
    assert!(linked_ids(&page, &org_b, "customers").is_empty());
    assert!(page.body.contains("No key or customer matches."));
    // A's key, searched under B: no redirect to it, nothing found.
    let page = a
        .get(&format!("/dashboard/{org_a}/license-keys/{}", s.key))
        .await;
    let key = text_of(&page, "key-value");
    let page = b
        .get(&format!("/dashboard/{org_b}/license-keys?query={key}"))
        .await;
    assert_html(&page);
    assert!(page.body.contains("No key or customer matches."));

    // Nothing of A's changed.
    assert_eq!(snapshot(&mut a, &s).await, before);
}

/// An order's page lists the e-mails about it with their attempts, and sends the receipt
/// again.
#[actix_web::test]
async fn an_order_shows_its_emails_and_sends_the_receipt_again() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "mails@example.com", SHOP).await;
    let s = sold(&app, &mut b, &org).await;
    let path = format!("/dashboard/{org}/orders/{}", s.order);
    let page = b.get(&path).await;
    assert_html(&page);
    let emails = main_of(&page);
    assert!(emails.contains("id=\"messages\""), "{emails}");
    assert!(emails.contains(ADA), "{emails}");
    assert!(emails.contains("Your receipt from"), "{emails}");
    assert!(emails.contains("not sent: email.transport is"), "{emails}");
    assert_eq!(text_of(&page, "mail-state-1"), "skipped");
    assert!(
        !emails.contains("id=\"mail-state-2\""),
        "one message: {emails}"
    );

    assert_csrf_refused(&mut b, &format!("{path}/receipt"), &[]).await;
    let page = form_post(&mut b, &format!("{path}/receipt"), &[]).await;
    assert_eq!(redirected(&page), format!("{path}?resent=1"));
    let page = poll_text(
        &mut b,
        &format!("{path}?resent=1"),
        "mail-state-1",
        "skipped",
    )
    .await;
    assert!(
        main_of(&page).contains("is on its way to"),
        "{}",
        main_of(&page)
    );
    assert_eq!(text_of(&page, "mail-state-2"), "skipped");
}

/// An order is refunded from its page: a problem is shown on the page, a partial refund
/// is listed, and the rest with its benefits revoked leaves nothing to refund.
#[actix_web::test]
async fn an_order_is_refunded_from_its_page() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "refunds@example.com", SHOP).await;
    let s = sold(&app, &mut b, &org).await;
    let path = format!("/dashboard/{org}/orders/{}", s.order);
    let page = b.get(&path).await;
    assert_html(&page);
    assert!(
        main_of(&page).contains("id=\"refund-form\""),
        "{}",
        main_of(&page)
    );
    assert_csrf_refused(&mut b, &format!("{path}/refunds"), &[("amount", "1")]).await;

    let page = form_post(
        &mut b,
        &format!("{path}/refunds"),
        &[("amount", "30"), ("reason", "customer_request")],
    )
    .await;
    assert_status(&page, 422);
    assert!(
        errors(&page)
            .iter()
            .any(|e| e.contains("exceeds refundable amount")),
        "{:?}",
        errors(&page)
    );
    let page = form_post(
        &mut b,
        &format!("{path}/refunds"),
        &[("amount", "ten"), ("reason", "customer_request")],
    )
    .await;
    assert_status(&page, 422);

    let page = form_post(
        &mut b,
        &format!("{path}/refunds"),
        &[
            ("amount", "10"),
            ("reason", "customer_request"),
            ("comment", "asked"),
        ],
    )
    .await;
    assert_eq!(redirected(&page), format!("{path}#refunds"));
    let page = b.get(&path).await;
    assert_eq!(text_of(&page, "refund-status-1"), "succeeded");
    assert!(
        main_of(&page).contains("partially_refunded"),
        "{}",
        main_of(&page)
    );

    let page = form_post(
        &mut b,
        &format!("{path}/refunds"),
        &[
            ("amount", "15"),
            ("reason", "other"),
            ("revoke_benefits", "on"),
        ],
    )
    .await;
    redirected(&page);
    let page = b.get(&path).await;
    assert!(
        main_of(&page).contains("id=\"refunded-in-full\""),
        "{}",
        main_of(&page)
    );
    assert!(!main_of(&page).contains("id=\"refund-form\""));
    let key = b
        .get(&format!("/dashboard/{org}/license-keys/{}", s.key))
        .await;
    assert!(main_of(&key).contains("revoked"), "{}", main_of(&key));
}

/// A member of two organizations reaches each one's records under its own pages only.
#[actix_web::test]
async fn a_record_is_not_found_under_another_organization_of_the_same_member() {
    let app = spawn_app().await;
    let (mut b, org_a) = seller(&app, "both@example.com", SHOP).await;
    let s = sold(&app, &mut b, &org_a).await;
    let org_b = new_org(&mut b, "Beta Goods").await;
    let before = snapshot(&mut b, &s).await;
    for (section, id) in [
        ("products", &s.shop.ebook),
        ("orders", &s.order),
        ("subscriptions", &s.subscription),
        ("customers", &s.customer),
        ("license-keys", &s.key),
        ("discounts", &s.discount),
        ("custom-fields", &s.field),
    ] {
        let page = b.get(&format!("/dashboard/{org_b}/{section}/{id}")).await;
        assert_not_found(&page);
        // And under A, the same record is there.
        assert_html(&b.get(&format!("/dashboard/{org_a}/{section}/{id}")).await);
    }
    // Forms on A's records under B's pages: 404, nothing changed.
    for (route, path, fields) in forms_of(&s) {
        if !route.contains("{id}") {
            continue;
        }
        let path = path.replace(&org_a, &org_b);
        let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let page = form_post(&mut b, &path, &fields).await;
        assert_status(&page, 404);
    }
    // B's lists do not list A's records.
    for section in [
        "products",
        "orders",
        "subscriptions",
        "customers",
        "license-keys",
        "discounts",
        "custom-fields",
    ] {
        let page = b.get(&format!("/dashboard/{org_b}/{section}")).await;
        assert_html(&page);
        assert!(
            linked_ids(&page, &org_b, section).is_empty(),
            "{section}: {}",
            main_of(&page)
        );
    }
    assert_eq!(snapshot(&mut b, &s).await, before);
}

// ---------------------------------------------------------------------------------------
// Forms: organizations and settings

#[actix_web::test]
async fn the_organization_form_creates_validates_and_checks_csrf() {
    let app = spawn_app().await;
    let mut b = signed_in(&app, "orgs@example.com").await;
    let path = "/dashboard/organizations/new";

    // Invalid: the API's errors, by field, and the values typed kept.
    let page = form_post(&mut b, path, &[("name", "ab"), ("slug", "Bad Slug")]).await;
    assert_invalid(&page, "name");
    assert_invalid(&page, "slug");
    assert_eq!(page.input("name").as_deref(), Some("ab"));
    assert_eq!(page.input("slug").as_deref(), Some("Bad Slug"));
    assert_eq!(
        redirected(&b.get("/dashboard").await),
        path,
        "nothing created"
    );

    // CSRF: refused, nothing created.
    assert_csrf_refused(&mut b, path, &[("name", "Forged Org")]).await;
    assert_eq!(
        redirected(&b.get("/dashboard").await),
        path,
        "nothing created"
    );

    // Created, its slug from its name.
    let page = form_post(&mut b, path, &[("name", "Gamma Works"), ("slug", "")]).await;
    let org = id_after(&redirected(&page), "/dashboard/");
    let page = b.get(&format!("/dashboard/{org}")).await;
    assert_html(&page);
    assert!(page.body.contains("<h1>Gamma Works</h1>"));
    let page = b.get(&format!("/dashboard/{org}/settings")).await;
    assert!(
        page.body.contains("<code>gamma-works</code>"),
        "{}",
        main_of(&page)
    );

    // A slug already taken: the conflict shown on the form.
    let page = form_post(
        &mut b,
        path,
        &[("name", "Gamma Again"), ("slug", "gamma-works")],
    )
    .await;
    assert_invalid(&page, "slug");
    assert!(
        errors(&page).contains(&"slug: An organization with this slug already exists.".to_string())
    );
    assert_eq!(page.input("name").as_deref(), Some("Gamma Again"));

    // The switcher lists exactly the one organization.
    let page = b.get(&format!("/dashboard/{org}")).await;
    assert_eq!(
        page.body.matches("<option value=").count() - 4,
        1,
        "4 range options"
    );
    assert!(!page.body.contains("Forged Org") && !page.body.contains("Gamma Again"));
}

#[actix_web::test]
async fn the_settings_form_saves_validates_and_checks_csrf() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "settings@example.com", SHOP).await;
    let path = format!("/dashboard/{org}/settings");

    let page = b.get(&path).await;
    assert_html(&page);
    assert_eq!(page.input("name").as_deref(), Some(SHOP));
    assert!(!saved(&page));

    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", "Alpha Renamed"),
            ("avatar_url", "https://alpha.example/logo.png"),
            ("company", "Alpha Inc"),
            ("location", "Paris"),
            ("blog", "alpha.example"),
            ("bio", "We sell tools."),
            ("allow_multiple_subscriptions", "on"),
            ("email", "sales@alpha.example"),
            ("new_order_emails", "on"),
            ("revoke_on_full_refund", "on"),
        ],
    )
    .await;
    assert_eq!(redirected(&page), format!("{path}?saved=1"));
    let page = b.get(&format!("{path}?saved=1")).await;
    assert_html(&page);
    assert!(saved(&page));
    assert_eq!(page.input("name").as_deref(), Some("Alpha Renamed"));
    assert_eq!(
        page.input("avatar_url").as_deref(),
        Some("https://alpha.example/logo.png")
    );
    assert_eq!(page.input("company").as_deref(), Some("Alpha Inc"));
    assert_eq!(page.input("location").as_deref(), Some("Paris"));
    assert_eq!(page.input("blog").as_deref(), Some("alpha.example"));
    assert_eq!(textarea(&page, "bio"), "We sell tools.");
    assert!(checked(&page, "allow_multiple_subscriptions"));
    assert!(!checked(&page, "allow_customer_updates"));
    assert_eq!(page.input("email").as_deref(), Some("sales@alpha.example"));
    assert!(checked(&page, "new_order_emails"));
    assert!(page.body.contains("Settings of Alpha Renamed"));
    // The same through the API's organization, read from the store.
    let stored = app
        .state
        .store
        .get::<tollgate::domain::organization::Organization>(
            &org.parse::<tollgate::domain::ids::OrganizationId>()
                .unwrap()
                .key(),
        )
        .await
        .unwrap()
        .unwrap()
        .value;
    assert_eq!(stored.name, "Alpha Renamed");
    assert_eq!(stored.company.as_deref(), Some("Alpha Inc"));
    assert_eq!(stored.email.as_deref(), Some("sales@alpha.example"));
    assert!(stored.notification_settings.new_order);
    assert!(stored.refund_settings.revoke_benefits_on_full_refund);

    // Unticking a box and clearing a field.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", "Alpha Renamed"),
            ("company", ""),
            ("location", "Paris"),
        ],
    )
    .await;
    redirected(&page);
    let page = b.get(&path).await;
    assert!(!checked(&page, "allow_multiple_subscriptions"));
    assert!(!checked(&page, "new_order_emails"));
    assert!(!checked(&page, "revoke_on_full_refund"));
    assert_eq!(page.input("email").as_deref(), Some(""));
    assert_eq!(page.input("company").as_deref(), Some(""));
    assert!(!saved(&page));

    // Invalid: both problems, the values typed kept.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", "ab"),
            ("avatar_url", "ftp://alpha.example/logo"),
            ("company", "Typed Inc"),
        ],
    )
    .await;
    assert_invalid(&page, "name");
    assert_invalid(&page, "avatar url");
    assert_eq!(page.input("name").as_deref(), Some("ab"));
    assert_eq!(
        page.input("avatar_url").as_deref(),
        Some("ftp://alpha.example/logo")
    );
    assert_eq!(page.input("company").as_deref(), Some("Typed Inc"));
    let page = b.get(&path).await;
    assert_eq!(
        page.input("name").as_deref(),
        Some("Alpha Renamed"),
        "unchanged"
    );

    // CSRF.
    assert_csrf_refused(&mut b, &path, &[("name", "Forged Name")]).await;
    let page = b.get(&path).await;
    assert_eq!(
        page.input("name").as_deref(),
        Some("Alpha Renamed"),
        "unchanged"
    );
}

// ---------------------------------------------------------------------------------------
// Forms: products and benefits

#[actix_web::test]
async fn the_product_forms_create_edit_replace_prices_and_archive() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "products@example.com", SHOP).await;
    let new = format!("/dashboard/{org}/products/new");

    // Created, with each kind of price.
    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", EBOOK),
            ("description", "Every trail, mapped."),
            ("billing", "one_time"),
            ("amount_type", "fixed"),
            ("amount", "25"),
        ],
    )
    .await;
    let ebook = id_after(&redirected(&page), &format!("/dashboard/{org}/products/"));
    let path = format!("/dashboard/{org}/products/{ebook}");
    let page = b.get(&path).await;
    assert_html(&page);
    assert!(page.body.contains(&format!("<h1>{EBOOK}</h1>")));
    assert_eq!(textarea(&page, "description"), "Every trail, mapped.");
    assert!(page.body.contains("<li>$25.00 <span"), "{}", main_of(&page));
    assert_eq!(
        page.input("name").as_deref(),
        Some(EBOOK),
        "the edit form is filled"
    );

    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", "Both Plans"),
            ("billing", "month_year"),
            ("amount_type", "fixed"),
            ("amount", "15"),
            ("yearly_amount", "150.50"),
        ],
    )
    .await;
    let both = id_after(&redirected(&page), &format!("/dashboard/{org}/products/"));
    let page = b.get(&format!("/dashboard/{org}/products/{both}")).await;
    assert!(page.body.contains("$15.00 / month") && page.body.contains("$150.50 / year"));

    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", "Tip Jar"),
            ("billing", "one_time"),
            ("amount_type", "custom"),
            ("minimum_amount", "5"),
            ("preset_amount", "7.5"),
        ],
    )
    .await;
    let tip = id_after(&redirected(&page), &format!("/dashboard/{org}/products/"));
    let page = b.get(&format!("/dashboard/{org}/products/{tip}")).await;
    assert!(
        page.body.contains("Pay what you want (min $5.00)"),
        "{}",
        main_of(&page)
    );

    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", "Community"),
            ("billing", "one_time"),
            ("amount_type", "free"),
        ],
    )
    .await;
    let free = id_after(&redirected(&page), &format!("/dashboard/{org}/products/"));
    let page = b.get(&format!("/dashboard/{org}/products/{free}")).await;
    assert!(page.body.contains("<li>Free <span"), "{}", main_of(&page));

    // Invalid: the API's errors, the form as typed.
    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", ""),
            ("description", "Kept text"),
            ("billing", "year"),
            ("amount_type", "fixed"),
            ("amount", "abc"),
        ],
    )
    .await;
    // An amount that does not read as dollars is named by its label, with the API's other
    // problems (the empty name) in the same answer.
    assert_invalid(&page, "Price");
    let problems = errors(&page);
    assert!(
        problems.contains(&"Price: Enter an amount like 19 or 19.99".to_string())
            && problems.iter().any(|e| e.starts_with("name: ")),
        "{problems:?}"
    );
    assert_eq!(page.input("amount").as_deref(), Some("abc"));
    assert_eq!(page.input("name").as_deref(), Some(""));
    assert_eq!(textarea(&page, "description"), "Kept text");
    assert!(page.body.contains(r#"<option value="year" selected>"#));
    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", ""),
            ("billing", "one_time"),
            ("amount_type", "custom"),
            ("minimum_amount", "9"),
            ("maximum_amount", "3"),
            ("preset_amount", "1.999"),
        ],
    )
    .await;
    assert_invalid(&page, "Suggested");
    assert_eq!(page.input("preset_amount").as_deref(), Some("1.999"));
    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", ""),
            ("billing", "month"),
            ("amount_type", "fixed"),
            ("amount", "12"),
        ],
    )
    .await;
    assert_invalid(&page, "name");
    assert_eq!(page.input("amount").as_deref(), Some("12"));
    assert!(page.body.contains(r#"<option value="month" selected>"#));
    let page = b
        .get(&format!("/dashboard/{org}/products?archived=all"))
        .await;
    assert!(
        page.body.contains("Page 1 of 1 · 4 in all"),
        "{}",
        main_of(&page)
    );

    // Edited: name and description; the prices stay.
    let page = form_post(
        &mut b,
        &path,
        &[("name", "Field Guide 2"), ("description", "Second edition")],
    )
    .await;
    assert_eq!(redirected(&page), format!("{path}?saved=1"));
    let page = b.get(&format!("{path}?saved=1")).await;
    assert!(saved(&page));
    assert!(page.body.contains("<h1>Field Guide 2</h1>"));
    assert_eq!(textarea(&page, "description"), "Second edition");
    assert!(page.body.contains("<li>$25.00 <span"));

    // Prices replaced: the old one no longer on sale.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", "Field Guide 2"),
            ("replace_prices", "on"),
            ("billing", "one_time"),
            ("amount_type", "fixed"),
            ("amount", "30"),
        ],
    )
    .await;
    redirected(&page);
    let page = b.get(&path).await;
    assert!(page.body.contains("<li>$30.00 <span"), "{}", main_of(&page));
    assert!(!page.body.contains("$25.00"), "{}", main_of(&page));
    assert_eq!(
        page.body.matches("?price_id=").count(),
        2,
        "one price link (href and text)"
    );

    // Invalid edits: 422, the form as typed, nothing changed.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", ""),
            ("description", "Not saved"),
            ("replace_prices", "on"),
            ("billing", "one_time"),
            ("amount_type", "fixed"),
            ("amount", "1.234"),
        ],
    )
    .await;
    assert_invalid(&page, "Price");
    assert_eq!(page.input("amount").as_deref(), Some("1.234"));
    assert_eq!(page.input("name").as_deref(), Some(""));
    assert_eq!(textarea(&page, "description"), "Not saved");
    assert!(checked(&page, "replace_prices"));
    assert!(
        page.body.contains("<h1>Field Guide 2</h1>"),
        "the product as saved"
    );
    let page = form_post(
        &mut b,
        &path,
        &[("name", "ab"), ("description", "Not saved")],
    )
    .await;
    assert_invalid(&page, "name");
    assert_eq!(page.input("name").as_deref(), Some("ab"));
    // A set of prices the API refuses (two free recurring prices).
    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", "Field Guide 2"),
            ("replace_prices", "on"),
            ("billing", "month_year"),
            ("amount_type", "free"),
        ],
    )
    .await;
    assert_invalid(&page, "prices");
    assert!(page
        .body
        .contains(r#"<option value="month_year" selected>"#));
    assert!(page.body.contains(r#"<option value="free" selected>"#));
    let page = b.get(&path).await;
    assert!(page.body.contains("<h1>Field Guide 2</h1>"));
    assert!(page.body.contains("<li>$30.00 <span"));

    // CSRF: refused, nothing changed.
    assert_csrf_refused(&mut b, &path, &[("name", "Forged"), ("is_archived", "on")]).await;
    assert_csrf_refused(&mut b, &new, &[("name", "Forged"), ("amount", "1")]).await;
    let page = b.get(&path).await;
    assert!(page.body.contains("<h1>Field Guide 2</h1>"));
    assert!(!page.body.contains("archived</span>"));
    let page = b
        .get(&format!("/dashboard/{org}/products?archived=all"))
        .await;
    assert!(!page.body.contains("Forged"));

    // Archived: marked, off the default list, off sale.
    let page = form_post(
        &mut b,
        &path,
        &[("name", "Field Guide 2"), ("is_archived", "on")],
    )
    .await;
    redirected(&page);
    let page = b.get(&path).await;
    assert!(page
        .body
        .contains(r#"<span class="badge">archived</span></h1>"#));
    assert!(checked(&page, "is_archived"));
    assert_not_found(&Browser::new(&app).get(&format!("/buy/{ebook}")).await);
    // And back on sale.
    let page = form_post(&mut b, &path, &[("name", "Field Guide 2")]).await;
    redirected(&page);
    let page = b.get(&path).await;
    assert!(!page.body.contains(r#"<span class="badge">archived</span>"#));
    checkout_secret(&Browser::new(&app).get(&format!("/buy/{ebook}")).await);
}

/// The first price of product `id` as stored (the seller's products are not the admin's to
/// read over the API).
async fn stored_price(app: &TestApp, id: &str) -> PriceKind {
    let id = tollgate::domain::ids::ProductId(id.parse().unwrap());
    let p = app
        .state
        .store
        .get::<tollgate::domain::product::Product>(&id.key())
        .await
        .unwrap()
        .expect("the product");
    p.value.prices[0].kind.clone()
}

#[actix_web::test]
async fn the_product_form_sells_seats_in_tiers_with_the_apis_rules() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "seats@example.com", SHOP).await;
    let new = format!("/dashboard/{org}/products/new");
    let seat_form = |name: &'static str, billing: &'static str, tiers: &'static str| {
        vec![
            ("name", name),
            ("billing", billing),
            ("amount_type", "seat_based"),
            ("seat_tiers", tiers),
        ]
    };

    // Monthly, volume pricing, the last tier open-ended ("5+"; spaces and a blank line
    // are fine).
    let page = form_post(
        &mut b,
        &new,
        &seat_form("Team", "month", "1 - 4  10.00\r\n\r\n5+ 8"),
    )
    .await;
    let team = id_after(&redirected(&page), &format!("/dashboard/{org}/products/"));
    let page = b.get(&format!("/dashboard/{org}/products/{team}")).await;
    assert_html(&page);
    assert!(
        page.body
            .contains("<li>$10.00 per seat (1-4), $8.00 per seat (5+) / month <span"),
        "{}",
        main_of(&page)
    );
    let price = stored_price(&app, &team).await;
    assert_eq!(
        price,
        PriceKind::RecurringSeatBased {
            interval: RecurringInterval::Month,
            currency: "usd".into(),
            seat_tiers: SeatTiers::new(
                SeatTierType::Volume,
                vec![
                    SeatTier {
                        min_seats: 1,
                        max_seats: Some(4),
                        price_per_seat: 1000
                    },
                    SeatTier {
                        min_seats: 5,
                        max_seats: None,
                        price_per_seat: 800
                    },
                ],
            )
            .unwrap(),
        }
    );
    // Its checkout link sells seats at the first tier's rate.
    let page = Browser::new(&app).get(&format!("/buy/{team}")).await;
    let secret = checkout_secret(&page);
    let page = Browser::new(&app).get(&format!("/checkout/{secret}")).await;
    assert!(
        page.body.contains("id=\"price\">$10.00 per seat/month</p>"),
        "{}",
        page.body
    );

    // One-time, graduated, bounded.
    let mut form = seat_form("Seats once", "one_time", "11-20 4.50\n1-10 5");
    form.push(("seat_tier_type", "graduated"));
    let page = form_post(&mut b, &new, &form).await;
    let once = id_after(&redirected(&page), &format!("/dashboard/{org}/products/"));
    let PriceKind::OneTimeSeatBased { seat_tiers, .. } = stored_price(&app, &once).await else {
        panic!("not a one-time seat-based price");
    };
    assert_eq!(seat_tiers.tier_type, SeatTierType::Graduated);
    assert_eq!(seat_tiers.maximum_seats(), Some(20));
    assert_eq!(seat_tiers.tiers()[0].price_per_seat, 500);
    assert_eq!(seat_tiers.tiers()[1].price_per_seat, 450);

    // Refused with the API's messages (its reading of `seat_tiers`), the form as typed.
    let gap = "1-4 10\n6+ 8";
    let page = form_post(&mut b, &new, &seat_form("Gap", "month", gap)).await;
    assert_invalid(&page, "prices › 0 › seat tiers › tiers");
    assert!(
        errors(&page)
            .iter()
            .any(|e| e
                .contains("Gap or overlap between tiers: tier ending at 4 and tier starting at 6")),
        "{:?}",
        errors(&page)
    );
    assert_eq!(textarea(&page, "seat_tiers"), gap);
    assert!(page
        .body
        .contains(r#"<option value="seat_based" selected>"#));
    assert!(page.body.contains(r#"<option value="month" selected>"#));
    for (tiers, field, message) in [
        (
            "1+ 10\n5-9 8",
            "prices › 0 › seat tiers › tiers",
            "Only the last tier can have unlimited max_seats (None)",
        ),
        (
            "0-4 10",
            "prices › 0 › seat tiers › tiers › 0 › min seats",
            "greater than or equal to 1",
        ),
        (
            "1-4 1000000",
            "prices › 0 › seat tiers › tiers › 0 › price per seat",
            "less than or equal to",
        ),
        (
            "1-2000000 1",
            "prices › 0 › seat tiers › tiers › 0 › max seats",
            "less than or equal to 1000000",
        ),
        ("1-4 -1", "Seat tiers", "Enter an amount like 19 or 19.99"),
        ("", "prices › 0 › seat tiers › tiers", "at least 1 item"),
        (
            "one to four 10",
            "Seat tiers",
            "Line 1: the seats are not whole numbers",
        ),
        ("1-4", "Seat tiers", "Line 1: no price"),
        ("1-4 ten", "Seat tiers", "Enter an amount like 19 or 19.99"),
    ] {
        let page = form_post(&mut b, &new, &seat_form("Bad", "one_time", tiers)).await;
        assert_invalid(&page, field);
        assert!(
            errors(&page)
                .iter()
                .any(|e| e.starts_with(field) && e.contains(message)),
            "{tiers:?}: {:?}",
            errors(&page)
        );
    }
    let mut form = seat_form("Both", "month_year", "1+ 10");
    form.push(("yearly_amount", "100"));
    let page = form_post(&mut b, &new, &form).await;
    assert_invalid(&page, "prices › 1 › amount type");
    // An invalid tier type is the API's enum error.
    let mut form = seat_form("Kind", "one_time", "1+ 10");
    form.push(("seat_tier_type", "stepped"));
    let page = form_post(&mut b, &new, &form).await;
    assert_invalid(&page, "prices › 0 › seat tiers › seat tier type");

    // None of the refused forms made a product.
    let page = b
        .get(&format!("/dashboard/{org}/products?archived=all"))
        .await;
    assert!(
        page.body.contains("Page 1 of 1 · 2 in all"),
        "{}",
        main_of(&page)
    );
}

#[actix_web::test]
async fn a_benefit_is_edited_validated_and_csrf_checked() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "benefit-edit@example.com", SHOP).await;
    let shop = shop(&mut b, &org).await;
    let path = format!("/dashboard/{org}/benefits/{}", shop.benefit);
    let page = b.get(&path).await;
    assert_html(&page);
    assert_eq!(page.input("prefix").as_deref(), Some("ALPHA"));
    assert!(checked(&page, "enable_customer_admin"));

    // Saved: new prefix, an expiry, no activation limit, a usage limit.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("description", "Alpha license v2"),
            ("prefix", "ALPHA2"),
            ("ttl", "1"),
            ("timeframe", "year"),
            ("activations", ""),
            ("limit_usage", "500"),
        ],
    )
    .await;
    assert_eq!(redirected(&page), format!("{path}?saved=1"));
    let page = b.get(&format!("{path}?saved=1")).await;
    assert!(saved(&page));
    assert_eq!(page.input("prefix").as_deref(), Some("ALPHA2"));
    assert_eq!(page.input("ttl").as_deref(), Some("1"));
    assert_eq!(page.input("activations").as_deref(), Some(""));
    assert_eq!(page.input("limit_usage").as_deref(), Some("500"));
    assert!(page.body.contains(r#"<option value="year" selected>"#));
    // The API reads the same benefit.
    let api = app
        .state
        .store
        .get::<tollgate::domain::benefit::Benefit>(
            &shop
                .benefit
                .parse::<tollgate::domain::ids::BenefitId>()
                .unwrap()
                .key(),
        )
        .await;
    let stored = api.unwrap().unwrap().value;
    assert_eq!(stored.description, "Alpha license v2");

    // Invalid: named, the form as typed, nothing saved.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("description", "Alpha license v3"),
            ("activations", "-1"),
            ("timeframe", "year"),
        ],
    )
    .await;
    assert_invalid(&page, "properties › activations › limit");
    assert_eq!(
        page.input("description").as_deref(),
        Some("Alpha license v3")
    );
    let page = form_post(&mut b, &path, &[("description", "")]).await;
    assert_invalid(&page, "description");

    // CSRF: refused, nothing changed.
    assert_csrf_refused(&mut b, &path, &[("description", "Forged")]).await;
    let page = b.get(&path).await;
    assert_eq!(
        page.input("description").as_deref(),
        Some("Alpha license v2")
    );

    // Another seller: 404 on the page and the form.
    let (mut other, other_org) = seller(&app, "benefit-other@example.com", "Other Shop").await;
    assert_not_found(&other.get(&path).await);
    assert_not_found(
        &other
            .get(&format!("/dashboard/{other_org}/benefits/{}", shop.benefit))
            .await,
    );
    let page = form_post(
        &mut other,
        &format!("/dashboard/{other_org}/benefits/{}", shop.benefit),
        &[("description", "Taken Over")],
    )
    .await;
    assert_not_found(&page);
}

#[actix_web::test]
async fn the_benefit_forms_create_and_attach_license_key_benefits() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "benefits@example.com", SHOP).await;
    let product = new_product(&mut b, &org, EBOOK, "one_time", "25").await;
    let path = format!("/dashboard/{org}/benefits");

    let page = b.get(&path).await;
    assert_html(&page);
    assert!(page.body.contains("No benefits yet."));
    let page = b.get(&format!("/dashboard/{org}/products/{product}")).await;
    assert!(page.body.contains("No benefits yet: <a"));

    // Every property.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("description", "Pro license"),
            ("prefix", "PRO"),
            ("ttl", "2"),
            ("timeframe", "month"),
            ("activations", "3"),
            ("enable_customer_admin", "on"),
            ("limit_usage", "100"),
        ],
    )
    .await;
    assert_eq!(redirected(&page), path);
    // None.
    let page = form_post(
        &mut b,
        &path,
        &[("description", "Plain keys"), ("timeframe", "year")],
    )
    .await;
    assert_eq!(redirected(&page), path);
    let page = b.get(&path).await;
    assert!(
        page.body
            .contains("prefix PRO\n· expires after 2 month(s)\n· activations ≤ 3\n· usage ≤ 100"),
        "{}",
        main_of(&page)
    );
    assert!(page
        .body
        .contains("prefix none\n· expires never\n· activations unlimited\n· usage unlimited"));

    // Invalid: the API's errors, the form as typed.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("description", "Broken"),
            ("ttl", "soon"),
            ("timeframe", "day"),
            ("activations", "-1"),
            ("prefix", "BRK"),
        ],
    )
    .await;
    // (A value of the wrong type inside the tagged benefit body: the API's error does
    // not say which field.)
    assert_status(&page, 422);
    assert!(!errors(&page).is_empty());
    assert_eq!(page.input("ttl").as_deref(), Some("soon"));
    assert_eq!(page.input("prefix").as_deref(), Some("BRK"));
    assert_eq!(page.input("description").as_deref(), Some("Broken"));
    assert!(page.body.contains(r#"<option value="day" selected>"#));
    assert!(page.body.contains("Pro license"), "the list is still shown");
    let page = form_post(
        &mut b,
        &path,
        &[
            ("description", "Broken"),
            ("ttl", "1"),
            ("timeframe", "year"),
            ("activations", "-1"),
        ],
    )
    .await;
    assert_invalid(&page, "properties › activations › limit");
    assert_eq!(page.input("activations").as_deref(), Some("-1"));
    let page = form_post(&mut b, &path, &[("description", "")]).await;
    assert_invalid(&page, "description");

    // CSRF.
    assert_csrf_refused(&mut b, &path, &[("description", "Forged benefit")]).await;
    let page = b.get(&path).await;
    assert!(!page.body.contains("Broken") && !page.body.contains("Forged benefit"));

    // Attached to the product, then detached.
    let product_path = format!("/dashboard/{org}/products/{product}");
    let page = b.get(&product_path).await;
    let pro = benefit_id(&page, "Pro license");
    let plain = benefit_id(&page, "Plain keys");
    assert!(!checked(&page, &format!("benefit-{pro}")));
    attach(&mut b, &org, &product, &[&pro, &plain]).await;
    let page = b.get(&format!("{product_path}?saved=1")).await;
    assert!(saved(&page));
    assert!(checked(&page, &format!("benefit-{pro}")));
    assert!(checked(&page, &format!("benefit-{plain}")));
    let page = b.get(&format!("/dashboard/{org}/products")).await;
    assert!(
        page.body.contains("<td>2</td>"),
        "two benefits listed: {}",
        main_of(&page)
    );

    let benefits = format!("{product_path}/benefits");
    let page = form_post(&mut b, &benefits, &[("benefit", "not-a-benefit")]).await;
    assert_invalid(&page, "benefits › 0");
    assert!(page.body.contains(&format!("<h1>{EBOOK}</h1>")));
    assert_csrf_refused(&mut b, &benefits, &[]).await;
    let page = b.get(&product_path).await;
    assert!(checked(&page, &format!("benefit-{pro}")), "unchanged");

    attach(&mut b, &org, &product, &[&plain]).await;
    let page = b.get(&product_path).await;
    assert!(!checked(&page, &format!("benefit-{pro}")));
    assert!(checked(&page, &format!("benefit-{plain}")));

    // A purchase grants the attached benefit's key.
    let product2 = new_product(&mut b, &org, "Keyed", "one_time", "5").await;
    attach(&mut b, &org, &product2, &[&pro]).await;
    buy(&app, &format!("/buy/{product2}"), ADA).await;
    let page = b.get(&format!("/dashboard/{org}/license-keys")).await;
    let keys = linked_ids(&page, &org, "license-keys");
    assert_eq!(keys.len(), 1, "{}", main_of(&page));
    let page = b
        .get(&format!("/dashboard/{org}/license-keys/{}", keys[0]))
        .await;
    assert!(
        text_of(&page, "key-value").starts_with("PRO"),
        "{}",
        main_of(&page)
    );
    assert!(page.body.contains(&format!("<code>{pro}</code>")));
}

// ---------------------------------------------------------------------------------------
// Forms: subscriptions and license keys

#[actix_web::test]
async fn the_subscription_actions_cancel_resume_and_revoke() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "subs@example.com", SHOP).await;
    let s = shop(&mut b, &org).await;
    buy(&app, &format!("/buy/{}", s.plan), GRACE).await;
    let page = b.get(&format!("/dashboard/{org}/subscriptions")).await;
    let sub = linked_ids(&page, &org, "subscriptions").remove(0);
    let path = format!("/dashboard/{org}/subscriptions/{sub}");

    let page = b.get(&path).await;
    assert_html(&page);
    assert!(page
        .body
        .contains(r#"<span class="badge active">active</span>"#));
    assert!(page.body.contains("$15.00 / month"));
    assert!(page.body.contains(r#"value="cancel""#));
    assert!(!page.body.contains("cancels at the end of the period"));

    let page = form_post(&mut b, &path, &[("action", "cancel")]).await;
    assert_eq!(redirected(&page), path);
    let page = b.get(&path).await;
    assert!(
        page.body.contains("cancels at the end of the period"),
        "{}",
        main_of(&page)
    );
    assert!(page.body.contains(r#"value="resume""#));
    assert!(page
        .body
        .contains(r#"<span class="badge active">active</span>"#));
    let page = b.get(&format!("/dashboard/{org}/subscriptions")).await;
    assert!(
        page.body.contains("<span class=\"muted\">ends "),
        "{}",
        main_of(&page)
    );

    let page = form_post(&mut b, &path, &[("action", "resume")]).await;
    assert_eq!(redirected(&page), path);
    let page = b.get(&path).await;
    assert!(!page.body.contains("cancels at the end of the period"));
    assert!(page.body.contains(r#"value="cancel""#));

    // An unknown action: the API's 422 on the page.
    let page = form_post(&mut b, &path, &[("action", "pause")]).await;
    assert_invalid(&page, "cancel at period end");
    assert!(page.body.contains(&format!("Subscription to {PLAN}")));

    // CSRF.
    assert_csrf_refused(&mut b, &path, &[("action", "revoke")]).await;
    let page = b.get(&path).await;
    assert!(page
        .body
        .contains(r#"<span class="badge active">active</span>"#));

    let page = form_post(&mut b, &path, &[("action", "revoke")]).await;
    assert_eq!(redirected(&page), path);
    let page = b.get(&path).await;
    assert!(
        !page.body.contains(r#"<span class="badge active">"#),
        "{}",
        main_of(&page)
    );
    assert!(page.body.contains("<dt>Ended</dt>"), "{}", main_of(&page));
    assert!(
        !page.body.contains(r#"value="revoke""#),
        "no action on an ended subscription"
    );
}

/// The key Ada's purchase of the ebook granted: (its id, the key).
async fn adas_key(app: &TestApp, b: &mut Browser, s: &Shop) -> (String, String) {
    buy(app, &format!("/buy/{}", s.ebook), ADA).await;
    let org = &s.org;
    let page = b.get(&format!("/dashboard/{org}/license-keys")).await;
    let id = linked_ids(&page, org, "license-keys").remove(0);
    let page = b.get(&format!("/dashboard/{org}/license-keys/{id}")).await;
    assert_html(&page);
    (id, text_of(&page, "key-value"))
}

#[actix_web::test]
async fn the_license_key_forms_change_status_expiry_and_limits() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "keys@example.com", SHOP).await;
    let s = shop(&mut b, &org).await;
    let (id, key) = adas_key(&app, &mut b, &s).await;
    assert!(key.starts_with("ALPHA"), "{key}");
    let path = format!("/dashboard/{org}/license-keys/{id}");
    let page = b.get(&path).await;
    assert_eq!(text_of(&page, "key-status"), "granted");
    assert!(page.body.contains(&format!("<code>{}</code>", s.benefit)));
    assert!(page.body.contains(ADA));

    // Quick actions: disable, grant again.
    let page = form_post(&mut b, &path, &[("quick", "1"), ("status", "disabled")]).await;
    assert_eq!(redirected(&page), format!("{path}?saved=1"));
    let page = b.get(&format!("{path}?saved=1")).await;
    assert!(saved(&page));
    assert_eq!(text_of(&page, "key-status"), "disabled");
    assert!(page.body.contains("Grant again"));
    let page = form_post(&mut b, &path, &[("quick", "1"), ("status", "granted")]).await;
    redirected(&page);
    assert_eq!(text_of(&b.get(&path).await, "key-status"), "granted");
    let page = form_post(&mut b, &path, &[("quick", "1"), ("status", "lost")]).await;
    assert_invalid(&page, "status");

    // The whole form.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("status", "granted"),
            ("expires_at", "2031-01-31"),
            ("usage", "2"),
            ("limit_usage", "10"),
            ("limit_activations", "5"),
        ],
    )
    .await;
    assert_eq!(redirected(&page), format!("{path}?saved=1"));
    let page = b.get(&path).await;
    assert!(page.body.contains("<dd>2 of 10</dd>"), "{}", main_of(&page));
    assert!(page.body.contains("<dd>2031-01-31 23:59 UTC</dd>"));
    assert_eq!(page.input("expires_at").as_deref(), Some("2031-01-31"));
    assert_eq!(page.input("limit_activations").as_deref(), Some("5"));
    assert_eq!(page.input("usage").as_deref(), Some("2"));
    // Cleared limits and expiry.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("status", "granted"),
            ("expires_at", ""),
            ("usage", "2"),
            ("limit_usage", ""),
        ],
    )
    .await;
    redirected(&page);
    let page = b.get(&path).await;
    assert!(
        page.body.contains("<dt>Expires</dt><dd>never</dd>"),
        "{}",
        main_of(&page)
    );
    assert!(page.body.contains("<dd>2</dd>"));

    // Invalid: an expiry that is not a date; the typed values kept, nothing changed.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("status", "revoked"),
            ("expires_at", "31/01/2031"),
            ("usage", "3"),
            ("limit_usage", "9"),
        ],
    )
    .await;
    assert_invalid(&page, "expires at");
    assert_eq!(page.input("expires_at").as_deref(), Some("31/01/2031"));
    assert_eq!(page.input("limit_usage").as_deref(), Some("9"));
    assert!(page.body.contains(r#"<option value="revoked" selected>"#));
    let page = form_post(&mut b, &path, &[("status", "granted"), ("usage", "many")]).await;
    assert_invalid(&page, "usage");
    let page = b.get(&path).await;
    assert_eq!(text_of(&page, "key-status"), "granted");
    assert!(page.body.contains("<dt>Expires</dt><dd>never</dd>"));

    // CSRF.
    assert_csrf_refused(&mut b, &path, &[("quick", "1"), ("status", "revoked")]).await;
    assert_csrf_refused(
        &mut b,
        &path,
        &[("status", "granted"), ("expires_at", "2020-01-01")],
    )
    .await;
    let page = b.get(&path).await;
    assert_eq!(text_of(&page, "key-status"), "granted");
    assert!(page.body.contains("<dt>Expires</dt><dd>never</dd>"));

    // Revoked: the key no longer validates.
    let page = form_post(&mut b, &path, &[("quick", "1"), ("status", "revoked")]).await;
    redirected(&page);
    assert_eq!(text_of(&b.get(&path).await, "key-status"), "revoked");
    let r = app
        .post_json(VALIDATE, None, &json!({"key": key, "organization_id": org}))
        .await;
    assert!(r.status.is_client_error(), "{}: {}", r.status, r.body);
}

#[actix_web::test]
async fn an_activation_is_deactivated_from_the_key_page() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "activations@example.com", SHOP).await;
    let s = shop(&mut b, &org).await;
    let (id, key) = adas_key(&app, &mut b, &s).await;
    let path = format!("/dashboard/{org}/license-keys/{id}");
    let mut activations = Vec::new();
    for label in ["laptop-1", "desktop-2"] {
        let r = app
            .post_json(
                ACTIVATE,
                None,
                &json!({"key": key, "organization_id": org, "label": label}),
            )
            .await;
        r.expect(200);
        activations.push(r.id());
    }
    let page = b.get(&path).await;
    assert!(page.body.contains("<td>laptop-1</td>") && page.body.contains("<td>desktop-2</td>"));
    let deactivate = |a: &str| format!("{path}/activations/{a}/deactivate");
    assert!(page.body.contains(&deactivate(&activations[0])));

    // CSRF.
    assert_csrf_refused(&mut b, &deactivate(&activations[0]), &[]).await;
    assert!(b.get(&path).await.body.contains("<td>laptop-1</td>"));

    // Not an activation id: 422 on the key's page; an unknown one: 404.
    let page = form_post(&mut b, &deactivate("not-an-id"), &[]).await;
    assert_invalid(&page, "activation id");
    assert!(page.body.contains(&key));
    let page = form_post(&mut b, &deactivate(UNKNOWN), &[]).await;
    assert_not_found(&page);

    let page = form_post(&mut b, &deactivate(&activations[0]), &[]).await;
    assert_eq!(redirected(&page), path);
    let page = b.get(&path).await;
    assert!(!page.body.contains("<td>laptop-1</td>"));
    assert!(page.body.contains("<td>desktop-2</td>"));
    let page = form_post(&mut b, &deactivate(&activations[1]), &[]).await;
    assert_eq!(redirected(&page), path);
    let page = b.get(&path).await;
    assert!(page.body.contains("No activations."));
    // The key holder sees the same: validating with the old activation fails.
    let r = app
        .post_json(
            VALIDATE,
            None,
            &json!({"key": key, "organization_id": org, "activation_id": activations[0]}),
        )
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
}

// ---------------------------------------------------------------------------------------
// Forms: discounts and custom fields

#[actix_web::test]
async fn the_discount_forms_create_edit_and_validate() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "discounts@example.com", SHOP).await;
    let ebook = new_product(&mut b, &org, EBOOK, "one_time", "25").await;
    let plan = new_product(&mut b, &org, PLAN, "month", "15").await;
    let new = format!("/dashboard/{org}/discounts/new");

    let page = b.get(&new).await;
    assert_html(&page);
    assert!(page.body.contains(&format!(r#"id="product-{ebook}""#)));
    assert!(page
        .body
        .contains(r#"<option value="percentage" selected>"#));

    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", "Spring"),
            ("code", "SPRING"),
            ("type", "percentage"),
            ("percent", "12.5"),
            ("duration", "once"),
            ("max_redemptions", "5"),
            ("product", &ebook),
        ],
    )
    .await;
    let spring = id_after(&redirected(&page), &format!("/dashboard/{org}/discounts/"));
    let path = format!("/dashboard/{org}/discounts/{spring}");
    let page = b.get(&format!("{path}?saved=1")).await;
    assert_html(&page);
    assert!(saved(&page));
    assert!(page.body.contains("<h1>Discount Spring</h1>"));
    assert!(page.body.contains("12.5% off"), "{}", main_of(&page));
    assert_eq!(page.input("code").as_deref(), Some("SPRING"));
    assert_eq!(page.input("max_redemptions").as_deref(), Some("5"));
    assert!(checked(&page, &format!("product-{ebook}")));
    assert!(!checked(&page, &format!("product-{plan}")));

    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", "Loyal"),
            ("type", "fixed"),
            ("amount", "5"),
            ("duration", "repeating"),
            ("duration_in_months", "3"),
        ],
    )
    .await;
    let loyal = id_after(&redirected(&page), &format!("/dashboard/{org}/discounts/"));
    let page = b.get(&format!("/dashboard/{org}/discounts/{loyal}")).await;
    assert!(page.body.contains("$5.00 off"), "{}", main_of(&page));
    assert!(page.body.contains("<p>repeating, 3 months</p>"));
    let page = b.get(&format!("/dashboard/{org}/discounts")).await;
    assert!(page.body.contains("1250 bp") && page.body.contains("$5.00"));
    assert!(page.body.contains("repeating (3 months)"));
    assert!(
        page.body.contains("0 / 5"),
        "redemptions of Spring: {}",
        main_of(&page)
    );

    // Invalid: the API's errors, the form as typed.
    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", "Broken"),
            ("code", "BRK"),
            ("type", "percentage"),
            ("percent", "abc"),
            ("duration", "forever"),
            ("product", &plan),
        ],
    )
    .await;
    assert_invalid(&page, "Percent off");
    assert_eq!(page.input("percent").as_deref(), Some("abc"));
    assert_eq!(page.input("name").as_deref(), Some("Broken"));
    assert!(page.body.contains(r#"<option value="forever" selected>"#));
    assert!(checked(&page, &format!("product-{plan}")));
    // A percentage the API refuses (over 100%), named by the API's field.
    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", "Too Much"),
            ("type", "percentage"),
            ("percent", "150"),
            ("duration", "once"),
        ],
    )
    .await;
    assert_invalid(&page, "basis points");
    assert_eq!(page.input("percent").as_deref(), Some("150"));
    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", "Months"),
            ("type", "fixed"),
            ("amount", "1"),
            ("duration", "repeating"),
            ("duration_in_months", "x"),
        ],
    )
    .await;
    assert_invalid(&page, "duration in months");

    // Edited.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", "Spring Sale"),
            ("code", "SPRING2"),
            ("max_redemptions", "7"),
            ("starts_at", "2030-03-01"),
            ("ends_at", "2030-04-01"),
            ("product", &ebook),
            ("product", &plan),
        ],
    )
    .await;
    assert_eq!(redirected(&page), format!("{path}?saved=1"));
    let page = b.get(&path).await;
    assert!(page.body.contains("<h1>Discount Spring Sale</h1>"));
    assert_eq!(page.input("code").as_deref(), Some("SPRING2"));
    assert_eq!(page.input("max_redemptions").as_deref(), Some("7"));
    assert_eq!(page.input("starts_at").as_deref(), Some("2030-03-01"));
    assert_eq!(page.input("ends_at").as_deref(), Some("2030-04-01"));
    assert!(checked(&page, &format!("product-{plan}")));
    assert!(page.body.contains("12.5% off"), "the amount stays");

    // Invalid edit: 422, typed values kept, nothing changed.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", "Not Saved"),
            ("code", "SPRING2"),
            ("max_redemptions", "many"),
        ],
    )
    .await;
    assert_invalid(&page, "max redemptions");
    assert_eq!(page.input("max_redemptions").as_deref(), Some("many"));
    assert_eq!(page.input("name").as_deref(), Some("Not Saved"));
    assert!(page.body.contains("<h1>Discount Spring Sale</h1>"));
    let page = b.get(&path).await;
    assert_eq!(page.input("name").as_deref(), Some("Spring Sale"));

    // CSRF.
    assert_csrf_refused(&mut b, &path, &[("name", "Forged")]).await;
    assert_csrf_refused(&mut b, &new, &[("name", "Forged"), ("percent", "90")]).await;
    let page = b.get(&format!("/dashboard/{org}/discounts")).await;
    assert!(!page.body.contains("Forged") && !page.body.contains("Broken"));
    assert!(page.body.contains("Spring Sale"));
    assert!(page.body.contains("2 in all"));
}

#[actix_web::test]
async fn the_custom_field_forms_create_edit_and_validate() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "fields@example.com", SHOP).await;
    let new = format!("/dashboard/{org}/custom-fields/new");

    let page = form_post(
        &mut b,
        &new,
        &[
            ("type", "text"),
            ("name", "Company"),
            ("slug", "company"),
            ("form_label", "Your company"),
            ("min_length", "2"),
            ("max_length", "50"),
        ],
    )
    .await;
    let company = id_after(
        &redirected(&page),
        &format!("/dashboard/{org}/custom-fields/"),
    );
    let path = format!("/dashboard/{org}/custom-fields/{company}");
    let page = b.get(&format!("{path}?saved=1")).await;
    assert_html(&page);
    assert!(saved(&page));
    assert!(page.body.contains("<h1>Custom field Company</h1>"));
    assert_eq!(page.input("form_label").as_deref(), Some("Your company"));
    assert_eq!(page.input("min_length").as_deref(), Some("2"));
    assert_eq!(page.input("max_length").as_deref(), Some("50"));
    assert!(page
        .body
        .contains(r#"id="type" type="text" value="text" disabled"#));

    let page = form_post(
        &mut b,
        &new,
        &[
            ("type", "select"),
            ("name", "Size"),
            ("slug", "size"),
            ("options", "s: Small\r\nm: Medium\r\n\r\nl"),
        ],
    )
    .await;
    let size = id_after(
        &redirected(&page),
        &format!("/dashboard/{org}/custom-fields/"),
    );
    let page = b
        .get(&format!("/dashboard/{org}/custom-fields/{size}"))
        .await;
    assert_eq!(textarea(&page, "options"), "s: Small\nm: Medium\nl: l");
    let page = b.get(&format!("/dashboard/{org}/custom-fields")).await;
    assert!(
        page.body.contains("<code>size</code></td><td>select</td>"),
        "{}",
        main_of(&page)
    );

    // Invalid: errors by field, typed values kept.
    let page = form_post(
        &mut b,
        &new,
        &[
            ("type", "number"),
            ("name", "Seats"),
            ("slug", "Bad Slug!"),
            ("ge", "one"),
        ],
    )
    .await;
    assert_invalid(&page, "number › slug");
    assert_invalid(&page, "number › properties › ge");
    assert_eq!(page.input("slug").as_deref(), Some("Bad Slug!"));
    assert_eq!(page.input("ge").as_deref(), Some("one"));
    assert!(page.body.contains(r#"<option value="number" selected>"#));
    // A slug already used.
    let page = form_post(
        &mut b,
        &new,
        &[("type", "text"), ("name", "Other"), ("slug", "company")],
    )
    .await;
    assert!(page.status == 409 || page.status == 422, "{}", page.status);
    assert!(!errors(&page).is_empty());

    // Edited; its type stays whatever is posted.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("type", "number"),
            ("name", "Company name"),
            ("slug", "company"),
            ("form_label", "Company"),
            ("max_length", "80"),
            ("textarea", "on"),
        ],
    )
    .await;
    assert_eq!(redirected(&page), format!("{path}?saved=1"));
    let page = b.get(&path).await;
    assert!(page.body.contains("<h1>Custom field Company name</h1>"));
    assert_eq!(page.input("max_length").as_deref(), Some("80"));
    assert!(checked(&page, "textarea"));
    assert!(
        page.body.contains(r#"value="text" disabled"#),
        "still a text field"
    );

    // Invalid edit.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", "Not Saved"),
            ("slug", "company"),
            ("min_length", "abc"),
        ],
    )
    .await;
    assert_invalid(&page, "text › properties › min length");
    assert_eq!(page.input("min_length").as_deref(), Some("abc"));
    assert_eq!(page.input("name").as_deref(), Some("Not Saved"));
    let page = b.get(&path).await;
    assert!(page.body.contains("<h1>Custom field Company name</h1>"));

    // CSRF.
    assert_csrf_refused(&mut b, &path, &[("name", "Forged"), ("slug", "company")]).await;
    assert_csrf_refused(
        &mut b,
        &new,
        &[("type", "text"), ("name", "Forged"), ("slug", "forged")],
    )
    .await;
    let page = b.get(&format!("/dashboard/{org}/custom-fields")).await;
    assert!(!page.body.contains("Forged"));
    assert!(page.body.contains("2 in all"));
}

// ---------------------------------------------------------------------------------------
// Lists

#[actix_web::test]
async fn the_product_list_filters_archived_products() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "archive@example.com", SHOP).await;
    let kept = new_product(&mut b, &org, "Kept Product", "one_time", "5").await;
    let gone = new_product(&mut b, &org, "Gone Product", "one_time", "5").await;
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/products/{gone}"),
        &[("name", "Gone Product"), ("is_archived", "on")],
    )
    .await;
    redirected(&page);
    let list = |q: &str| format!("/dashboard/{org}/products{q}");
    for (q, want) in [
        ("", vec![kept.clone()]),
        ("?archived=", vec![kept.clone()]),
        ("?archived=yes", vec![gone.clone()]),
        ("?archived=all", vec![gone.clone(), kept.clone()]),
    ] {
        let page = b.get(&list(q)).await;
        assert_html(&page);
        let mut ids = linked_ids(&page, &org, "products");
        ids.retain(|id| id != "new");
        assert_eq!(ids, want, "{q}");
    }
    let page = b.get(&list("?archived=yes")).await;
    assert!(page
        .body
        .contains(r#"<option value="yes" selected>Archived</option>"#));
    assert!(page
        .body
        .contains(r#"Gone Product</a> <span class="badge">archived</span>"#));
    let page = b.get(&list("?archived=all&query=Kept")).await;
    assert_eq!(linked_ids(&page, &org, "products"), vec![kept]);
}

#[actix_web::test]
async fn the_order_list_filters_by_product_and_sorts() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "orders@example.com", SHOP).await;
    let cheap = new_product(&mut b, &org, "Cheap Thing", "one_time", "10").await;
    let dear = new_product(&mut b, &org, "Dear Thing", "one_time", "40").await;
    buy(&app, &format!("/buy/{cheap}"), ADA).await;
    buy(&app, &format!("/buy/{dear}"), GRACE).await;
    buy(&app, &format!("/buy/{cheap}"), GRACE).await;
    let list = |q: &str| format!("/dashboard/{org}/orders{q}");

    let page = b.get(&list("")).await;
    assert_html(&page);
    let all = linked_ids(&page, &org, "orders");
    assert_eq!(all.len(), 3);
    assert!(page.body.contains("3 in all"));

    let page = b.get(&list(&format!("?product_id={cheap}"))).await;
    assert_eq!(linked_ids(&page, &org, "orders").len(), 2);
    assert!(!page.body.contains("$40.00"), "{}", main_of(&page));
    assert!(page.body.contains(&format!(
        r#"<option value="{cheap}" selected>Cheap Thing</option>"#
    )));
    let page = b.get(&list(&format!("?product_id={dear}"))).await;
    let dear_orders = linked_ids(&page, &org, "orders");
    assert_eq!(dear_orders.len(), 1);
    assert!(page.body.contains(GRACE) && !page.body.contains(ADA));

    // Sorted by amount either way; the dear order first or last.
    let page = b.get(&list("?sorting=-amount")).await;
    let ids = linked_ids(&page, &org, "orders");
    assert_eq!(ids[0], dear_orders[0]);
    assert!(page.body.contains(r#"<option value="-amount" selected>"#));
    let page = b.get(&list("?sorting=amount")).await;
    let ids = linked_ids(&page, &org, "orders");
    assert_eq!(ids[2], dear_orders[0]);
    let first = page.body.find("$10.00").unwrap();
    assert!(page.body.find("$40.00").unwrap() > first);
    // Newest and oldest first are each other's reverse.
    let newest = linked_ids(&b.get(&list("?sorting=-created_at")).await, &org, "orders");
    let mut oldest = linked_ids(&b.get(&list("?sorting=created_at")).await, &org, "orders");
    oldest.reverse();
    assert_eq!(newest, oldest);
    // An order not offered: the default (newest first), not an error.
    let page = b.get(&list("?sorting=-secret")).await;
    assert_html(&page);
    assert_eq!(linked_ids(&page, &org, "orders"), newest);

    // By customer, as the subscription page links it.
    let page = b
        .get(&format!("/dashboard/{org}/customers?query={ADA}"))
        .await;
    let ada = linked_ids(&page, &org, "customers").remove(0);
    let page = b.get(&list(&format!("?customer_id={ada}"))).await;
    assert_eq!(linked_ids(&page, &org, "orders").len(), 1);
    assert!(page
        .body
        .contains(&format!(r#"name="customer_id" value="{ada}""#)));
}

#[actix_web::test]
async fn the_subscription_list_filters_active_ones() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "active@example.com", SHOP).await;
    let s = shop(&mut b, &org).await;
    buy(&app, &format!("/buy/{}", s.plan), ADA).await;
    buy(&app, &format!("/buy/{}", s.plan), GRACE).await;
    let list = |q: &str| format!("/dashboard/{org}/subscriptions{q}");
    let page = b.get(&list("")).await;
    assert_eq!(linked_ids(&page, &org, "subscriptions").len(), 2);
    // Revoke Grace's.
    let page = b.get(&list("?sorting=customer")).await;
    let ids = linked_ids(&page, &org, "subscriptions");
    let first_email = page.body.find(ADA).unwrap();
    assert!(
        page.body.find(GRACE).unwrap() > first_email,
        "sorted by customer"
    );
    let grace = ids[1].clone();
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/subscriptions/{grace}"),
        &[("action", "revoke")],
    )
    .await;
    redirected(&page);

    let page = b.get(&list("?active=yes")).await;
    assert_eq!(
        linked_ids(&page, &org, "subscriptions"),
        vec![ids[0].clone()]
    );
    assert!(page.body.contains(ADA) && !page.body.contains(GRACE));
    assert!(page
        .body
        .contains(r#"<option value="yes" selected>Active</option>"#));
    let page = b.get(&list("?active=no")).await;
    assert_eq!(linked_ids(&page, &org, "subscriptions"), vec![grace]);
    assert!(page.body.contains(GRACE) && !page.body.contains(ADA));
    let page = b.get(&list("?active=")).await;
    assert_eq!(linked_ids(&page, &org, "subscriptions").len(), 2);
    let page = b.get(&list(&format!("?product_id={}", s.ebook))).await;
    assert!(linked_ids(&page, &org, "subscriptions").is_empty());
    assert!(page.body.contains("No subscriptions."));
}

#[actix_web::test]
async fn lists_page_through_next_links() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "pager@example.com", SHOP).await;
    let mut made = Vec::new();
    for i in 0..21 {
        let name = format!("Field {i:02}");
        let slug = format!("field-{i:02}");
        let page = form_post(
            &mut b,
            &format!("/dashboard/{org}/custom-fields/new"),
            &[("type", "checkbox"), ("name", &name), ("slug", &slug)],
        )
        .await;
        made.push(id_after(
            &redirected(&page),
            &format!("/dashboard/{org}/custom-fields/"),
        ));
    }
    let page = b.get(&format!("/dashboard/{org}/custom-fields")).await;
    assert_html(&page);
    assert!(
        page.body.contains("Page 1 of 2 · 21 in all"),
        "{}",
        main_of(&page)
    );
    assert!(!page.body.contains(r#"rel="prev""#));
    let mut seen = linked_ids(&page, &org, "custom-fields");
    assert_eq!(seen.len(), 20);
    let next = next_link(&page).expect("a next link");
    assert_eq!(next, format!("/dashboard/{org}/custom-fields?page=2"));
    let page = b.get(&next).await;
    assert_html(&page);
    assert!(page.body.contains("Page 2 of 2 · 21 in all"));
    assert!(next_link(&page).is_none());
    assert!(page.body.contains(r#"rel="prev""#));
    let rest = linked_ids(&page, &org, "custom-fields");
    assert_eq!(rest.len(), 1);
    seen.extend(rest);
    seen.sort();
    made.sort();
    assert_eq!(seen, made, "every field once over the two pages");

    // The query is kept in the links.
    let page = b
        .get(&format!("/dashboard/{org}/custom-fields?query=Field"))
        .await;
    let next = next_link(&page).expect("a next link");
    assert!(
        next.contains("query=Field") && next.contains("page=2"),
        "{next}"
    );
    let page = b.get(&next).await;
    assert_eq!(linked_ids(&page, &org, "custom-fields").len(), 1);
    let page = b
        .get(&format!("/dashboard/{org}/custom-fields?query=Field+07"))
        .await;
    assert_eq!(linked_ids(&page, &org, "custom-fields").len(), 1);
    assert!(next_link(&page).is_none());
}

#[actix_web::test]
async fn customers_and_license_keys_are_found_by_email_and_by_key() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "search@example.com", SHOP).await;
    let s = shop(&mut b, &org).await;
    buy(&app, &format!("/buy/{}", s.ebook), ADA).await;
    buy(&app, &format!("/buy/{}", s.ebook), GRACE).await;

    let customers = |q: &str| format!("/dashboard/{org}/customers?query={q}");
    let page = b.get(&customers("grace")).await;
    assert_html(&page);
    let found = linked_ids(&page, &org, "customers");
    assert_eq!(found.len(), 1);
    assert!(page.body.contains(GRACE) && !page.body.contains(ADA));
    assert_eq!(page.input("query").as_deref(), Some("grace"));
    let grace = found[0].clone();
    let page = b.get(&customers(ADA)).await;
    assert!(page.body.contains(ADA) && !page.body.contains(GRACE));
    let page = b.get(&customers("nobody%40example.com")).await;
    assert!(page.body.contains("No customers found."));
    let page = b.get(&format!("/dashboard/{org}/customers")).await;
    assert_eq!(linked_ids(&page, &org, "customers").len(), 2);

    // A whole key: straight to it.
    let page = b.get(&format!("/dashboard/{org}/customers/{grace}")).await;
    let key_id = linked_ids(&page, &org, "license-keys").remove(0);
    let key = text_of(
        &b.get(&format!("/dashboard/{org}/license-keys/{key_id}"))
            .await,
        "key-value",
    );
    let keys = |q: &str| format!("/dashboard/{org}/license-keys?query={q}");
    let page = b.get(&keys(&key)).await;
    assert_eq!(
        redirected(&page),
        format!("/dashboard/{org}/license-keys/{key_id}")
    );
    // A customer's e-mail: the customer, and their keys (issue 52).
    let page = b.get(&keys("grace%40example.com")).await;
    assert_html(&page);
    assert!(page.body.contains("Customers matching “grace@example.com”"));
    assert_eq!(linked_ids(&page, &org, "customers"), vec![grace.clone()]);
    assert_eq!(
        linked_ids(&page, &org, "license-keys"),
        vec![key_id.clone()]
    );
    assert!(!page.body.contains(ADA));
    // The start of a key, or its tail as the dashboard shows it, finds it (issue 52).
    for fragment in [
        &key[..key.len() - 2],
        &format!("****-{}", &key[key.len() - 6..]),
    ] {
        let page = b.get(&keys(&fragment.replace('*', "%2A"))).await;
        assert_html(&page);
        assert_eq!(
            linked_ids(&page, &org, "license-keys"),
            vec![key_id.clone()]
        );
        assert!(page.body.contains("No customer matches."));
    }
    // Too short a fragment is no key, nor a customer.
    let page = b.get(&keys("zq9")).await;
    assert_html(&page);
    assert!(page.body.contains("No key or customer matches."));
    // Without a query: every key.
    let page = b.get(&format!("/dashboard/{org}/license-keys")).await;
    assert_eq!(linked_ids(&page, &org, "license-keys").len(), 2);
    assert!(page.body.contains(ADA) && page.body.contains(GRACE));
}

// ---------------------------------------------------------------------------------------
// Checkout links

#[actix_web::test]
async fn checkout_links_open_a_checkout_for_a_product_on_sale() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "links@example.com", SHOP).await;
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/products/new"),
        &[
            ("name", "Both Plans"),
            ("billing", "month_year"),
            ("amount", "15"),
            ("yearly_amount", "150"),
        ],
    )
    .await;
    let product = id_after(&redirected(&page), &format!("/dashboard/{org}/products/"));
    let page = b.get(&format!("/dashboard/{org}/products/{product}")).await;
    let prices: Vec<String> = page
        .body
        .split("?price_id=")
        .skip(1)
        .map(|p| p[..36].to_string())
        .collect();
    // Each price's link is written twice (href and text).
    assert_eq!(prices.len(), 4, "{}", main_of(&page));
    let (monthly, yearly) = (prices[0].clone(), prices[2].clone());
    assert_ne!(monthly, yearly);
    let api = Api::of(&app);

    // The product's first price; then the price asked for.
    let mut anon = Browser::new(&app);
    let secret = checkout_secret(&anon.get(&format!("/buy/{product}")).await);
    assert!(anon.cookie_header().is_empty(), "no session, no cookie");
    let c = api
        .get(&format!("/v1/checkouts/custom/client/{secret}"), None)
        .await;
    c.expect(200);
    assert_eq!(c.body["product_id"], product.as_str());
    assert_eq!(c.body["product_price_id"], monthly.as_str());
    assert_eq!(c.body["amount"], 1500);
    let secret2 = checkout_secret(&anon.get(&format!("/buy/{product}?price_id={yearly}")).await);
    assert_ne!(secret, secret2, "a new checkout each time");
    let c = api
        .get(&format!("/v1/checkouts/custom/client/{secret2}"), None)
        .await;
    assert_eq!(c.body["product_price_id"], yearly.as_str());
    assert_eq!(c.body["amount"], 15000);
    // The hosted page it leads to.
    let page = anon.get(&format!("/checkout/{secret2}")).await;
    assert_status(&page, 200);
    assert!(page.body.contains("Both Plans"));

    // Not a product on sale: 404 pages.
    let other = new_product(&mut b, &org, "Other", "one_time", "3").await;
    let other_page = b.get(&format!("/dashboard/{org}/products/{other}")).await;
    let other_price = other_page.body.split("?price_id=").nth(1).unwrap()[..36].to_string();
    // A price of another product on sale, through this product's link: the link names
    // its product, so 404.
    assert_not_found(
        &anon
            .get(&format!("/buy/{product}?price_id={other_price}"))
            .await,
    );
    for link in [
        format!("/buy/{UNKNOWN}"),
        "/buy/not-a-product".to_string(),
        format!("/buy/{product}?price_id=not-a-price"),
        format!("/buy/{product}?price_id={UNKNOWN}"),
    ] {
        let page = anon.get(&link).await;
        assert!(
            page.status == 404 || page.status == 422,
            "{link}: {} {}",
            page.status,
            main_of(&page)
        );
        assert!(page.location.is_empty(), "{link} redirected");
        assert!(page.content_type.starts_with("text/html"), "{link}");
    }
    let page = anon.get(&format!("/buy/{UNKNOWN}")).await;
    assert!(page
        .body
        .contains("This checkout link does not lead to a product on sale."));
    // A price of an archived product, or of another organization's product, through this
    // product's link: 404 as well.
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/products/{other}"),
        &[("name", "Other"), ("is_archived", "on")],
    )
    .await;
    redirected(&page);
    assert_not_found(
        &anon
            .get(&format!("/buy/{product}?price_id={other_price}"))
            .await,
    );
    let (mut c, org_c) = seller(&app, "elsewhere@example.com", "Elsewhere").await;
    let foreign = new_product(&mut c, &org_c, "Foreign", "one_time", "7").await;
    let page = c
        .get(&format!("/dashboard/{org_c}/products/{foreign}"))
        .await;
    let foreign_price = page.body.split("?price_id=").nth(1).unwrap()[..36].to_string();
    let page = anon
        .get(&format!("/buy/{product}?price_id={foreign_price}"))
        .await;
    assert_not_found(&page);
    assert!(!page.body.contains("Foreign"));
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/products/{product}"),
        &[("name", "Both Plans"), ("is_archived", "on")],
    )
    .await;
    redirected(&page);
    assert_not_found(&anon.get(&format!("/buy/{product}")).await);
    assert_not_found(
        &anon
            .get(&format!("/buy/{product}?price_id={monthly}"))
            .await,
    );
}

#[actix_web::test]
async fn checkout_links_are_limited_per_address() {
    let dir = tempfile::tempdir().expect("a data directory");
    let mut settings = Settings::for_tests(dir.path());
    settings.rate_limits.checkout_links_per_ip = Limit::new(2, 3600);
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let (mut b, org) = seller(&app, "limits@example.com", SHOP).await;
    let product = new_product(&mut b, &org, EBOOK, "one_time", "25").await;
    let mut anon = Browser::new(&app);
    checkout_secret(&anon.get(&format!("/buy/{product}")).await);
    // A link to nothing counts too (each creates or tries to create a checkout).
    assert_not_found(&anon.get(&format!("/buy/{UNKNOWN}")).await);
    for link in [format!("/buy/{product}"), format!("/buy/{UNKNOWN}")] {
        let page = anon.get(&link).await;
        assert_status(&page, 429);
        assert!(page.location.is_empty());
        assert!(
            page.content_type.starts_with("text/html"),
            "{}",
            page.content_type
        );
        assert!(
            page.body.contains("Too many requests"),
            "{}",
            main_of(&page)
        );
        let retry = page
            .headers
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        assert!(
            retry.is_some_and(|s| s >= 1),
            "Retry-After: {:?}",
            page.headers
        );
    }
    // The dashboard itself is not limited by it.
    assert_html(&b.get(&format!("/dashboard/{org}/products/{product}")).await);
}

// ---------------------------------------------------------------------------------------
// The overview's counters and charts

#[actix_web::test]
async fn the_overview_counts_orders_revenue_and_subscriptions() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "overview@example.com", SHOP).await;
    let s = shop(&mut b, &org).await;
    let overview = format!("/dashboard/{org}");
    let page = b.get(&overview).await;
    assert_html(&page);
    assert_eq!(text_of(&page, "orders-total"), "0");
    assert_eq!(text_of(&page, "revenue-total"), "$0.00");
    assert_eq!(text_of(&page, "active-now"), "0");
    assert!(!page.body.contains("data-series="), "no bar drawn yet");

    buy(&app, &format!("/buy/{}", s.ebook), ADA).await;
    let page = poll_text(&mut b, &overview, "orders-total", "1").await;
    assert_eq!(text_of(&page, "revenue-total"), "$25.00");
    assert_eq!(bar_total(&page, "chart-orders", "orders"), 1.0);
    assert_eq!(bar_total(&page, "chart-revenue", "revenue"), 2500.0);

    buy(&app, &format!("/buy/{}", s.plan), GRACE).await;
    let page = poll_text(&mut b, &overview, "orders-total", "2").await;
    let page = if text_of(&page, "active-now") == "1" {
        page
    } else {
        poll_text(&mut b, &overview, "active-now", "1").await
    };
    assert_eq!(text_of(&page, "revenue-total"), "$40.00");
    assert_eq!(bar_total(&page, "chart-orders", "orders"), 2.0);
    assert!(bar_total(&page, "chart-subscriptions", "active") >= 1.0);
    // The same over a week.
    let page = b.get(&format!("{overview}?days=7")).await;
    assert_eq!(text_of(&page, "orders-total"), "2");
    assert!(page
        .body
        .contains(r#"<option value="7" selected>Last 7 days</option>"#));

    // Revoking the subscription ends it on the chart.
    let page = b.get(&format!("/dashboard/{org}/subscriptions")).await;
    let sub = linked_ids(&page, &org, "subscriptions").remove(0);
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/subscriptions/{sub}"),
        &[("action", "revoke")],
    )
    .await;
    redirected(&page);
    let page = poll_text(&mut b, &overview, "active-now", "0").await;
    assert_eq!(text_of(&page, "orders-total"), "2", "orders stay counted");
}

#[actix_web::test]
async fn the_overview_counts_validations_and_refusals() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "validations@example.com", SHOP).await;
    let s = shop(&mut b, &org).await;
    let (id, key) = adas_key(&app, &mut b, &s).await;
    let overview = format!("/dashboard/{org}");
    let page = b.get(&overview).await;
    assert_eq!(text_of(&page, "validations-total"), "0");
    assert_eq!(text_of(&page, "refused-total"), "0");

    let body = json!({"key": key, "organization_id": org});
    for _ in 0..2 {
        app.post_json(VALIDATE, None, &body).await.expect(200);
    }
    let page = poll_text(&mut b, &overview, "validations-total", "2").await;
    assert_eq!(text_of(&page, "refused-total"), "0");
    assert_eq!(bar_total(&page, "chart-validations", "succeeded"), 2.0);
    assert_eq!(bar_total(&page, "chart-validations", "refused"), 0.0);
    let page = b.get(&format!("/dashboard/{org}/license-keys/{id}")).await;
    assert!(
        text_of(&page, "key-validations").starts_with('2'),
        "{}",
        main_of(&page)
    );

    // Revoked through the dashboard: the next validation is refused, and counted so.
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/license-keys/{id}"),
        &[("quick", "1"), ("status", "revoked")],
    )
    .await;
    redirected(&page);
    let r = app.post_json(VALIDATE, None, &body).await;
    assert!(r.status.is_client_error(), "{}: {}", r.status, r.body);
    let page = poll_text(&mut b, &overview, "refused-total", "1").await;
    assert_eq!(text_of(&page, "validations-total"), "2");
    assert_eq!(bar_total(&page, "chart-validations", "refused"), 1.0);
    assert_eq!(bar_total(&page, "chart-validations", "succeeded"), 2.0);
    // An unknown key is no key of the organization: not counted.
    let r = app
        .post_json(
            VALIDATE,
            None,
            &json!({"key": "NOPE", "organization_id": org}),
        )
        .await;
    assert_eq!(r.status, 404);
    // (The overview adds the counts not yet written: a count would show at once.)
    let page = poll_text(&mut b, &overview, "refused-total", "1").await;
    assert_eq!(text_of(&page, "validations-total"), "2");
}

/// A customer's page shows the portal's address and opens a sign-in link for the
/// customer: a customer session of an hour, shown once, that reads the customer's portal.
#[actix_web::test]
async fn a_customers_page_opens_a_portal_link() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "portal-link@example.com", SHOP).await;
    let s = sold(&app, &mut b, &org).await;
    let path = format!("/dashboard/{org}/customers/{}", s.customer);
    let page = b.get(&path).await;
    assert_html(&page);
    let portal = text_of(&page, "portal-url");
    assert!(
        portal.starts_with(&format!("{}/portal/", app.address)),
        "{portal}"
    );
    assert!(!page.body.contains("id=\"portal-link\""));

    let link_path = format!("{path}/portal-link");
    assert_csrf_refused(&mut b, &link_path, &[]).await;
    let page = form_post(&mut b, &link_path, &[]).await;
    assert_html(&page);
    let body = main_of(&page);
    let start = body
        .find(&format!("{portal}?customer_session_token="))
        .unwrap_or_else(|| panic!("{body}"));
    let link = &body[start..];
    let link = &link[..link.find('"').unwrap()];
    let token = link
        .split("customer_session_token=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap();
    assert!(token.starts_with("polar_cst_"), "{token}");
    let r = app
        .get("/v1/customer-portal/customers/me", Some(token))
        .await;
    r.expect(200);
    assert_eq!(r.body["id"], s.customer.as_str());
}

// ---------------------------------------------------------------------------------------
// Several currencies (issue 49)

/// The price id the product page's share section links for the price reading `label`.
#[track_caller]
fn price_link(product_page: &Page, label: &str) -> String {
    let needle = format!("{label}: <a href=\"");
    let at = product_page
        .body
        .find(&needle)
        .unwrap_or_else(|| panic!("no price {label:?} in\n{}", main_of(product_page)));
    let rest = &product_page.body[at + needle.len()..];
    let href = &rest[..rest.find('"').unwrap()];
    let (_, id) = href.split_once("price_id=").unwrap();
    id.to_string()
}

#[actix_web::test]
async fn a_product_sells_in_three_currencies_and_the_overview_keeps_their_revenue_apart() {
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "world@example.com", SHOP).await;
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/products/new"),
        &[
            ("name", EBOOK),
            ("billing", "one_time"),
            ("amount_type", "fixed"),
            ("amount", "25"),
            ("other_prices", "EUR 18.00\nJPY 3000"),
        ],
    )
    .await;
    let product = id_after(&redirected(&page), &format!("/dashboard/{org}/products/"));
    let page = b.get(&format!("/dashboard/{org}/products/{product}")).await;
    assert_html(&page);
    for label in ["$25.00", "€18.00", "¥3,000"] {
        assert!(page.body.contains(label), "{label} in\n{}", main_of(&page));
    }
    crate::tools::render_page("dashboard-screenshots", "currencies-product", &page.body);
    let euro = price_link(&page, "€18.00");
    let list = b.get(&format!("/dashboard/{org}/products")).await;
    assert!(list.body.contains("¥3,000"), "{}", main_of(&list));

    // A line that does not read names its line; nothing is created.
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/products/new"),
        &[
            ("name", "Broken"),
            ("amount", "25"),
            ("other_prices", "EUR 18.00\nXAU 3"),
        ],
    )
    .await;
    assert_status(&page, 422);
    assert!(
        page.body.contains("Line 2: XAU is not a currency"),
        "{}",
        main_of(&page)
    );
    crate::tools::render_page(
        "dashboard-screenshots",
        "currencies-form-refused",
        &page.body,
    );

    // One sale in dollars, one in euros.
    let order = buy(&app, &format!("/buy/{product}"), ADA).await;
    assert_eq!(order["currency"], "usd", "{order}");
    let order = buy(&app, &format!("/buy/{product}?price_id={euro}"), GRACE).await;
    assert_eq!(order["currency"], "eur", "{order}");
    let overview = format!("/dashboard/{org}");
    let page = poll_text(&mut b, &overview, "orders-total", "2").await;
    // Never summed across currencies: one total and one chart each, the default first.
    assert_eq!(text_of(&page, "revenue-total"), "$25.00 · €18.00");
    assert!(
        page.body.contains("Revenue per day (USD)"),
        "{}",
        main_of(&page)
    );
    assert!(
        page.body.contains("Revenue per day (EUR)"),
        "{}",
        main_of(&page)
    );
    crate::tools::render_page("dashboard-screenshots", "currencies-overview", &page.body);
    let orders = b.get(&format!("/dashboard/{org}/orders")).await;
    assert!(orders.body.contains("€18.00"), "{}", main_of(&orders));
    assert!(orders.body.contains("$25.00"), "{}", main_of(&orders));

    // The default currency changes only once every active product has a price in it.
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/settings"),
        &[("name", SHOP), ("default_presentment_currency", "GBP")],
    )
    .await;
    assert_status(&page, 422);
    assert!(
        page.body
            .contains("All active products must have prices in the new currency."),
        "{}",
        main_of(&page)
    );
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/settings"),
        &[("name", SHOP), ("default_presentment_currency", "EUR")],
    )
    .await;
    redirected(&page);
    let page = b.get(&format!("/dashboard/{org}/settings")).await;
    assert!(
        page.body
            .contains(r#"<option value="EUR" selected>EUR</option>"#),
        "{}",
        main_of(&page)
    );
    crate::tools::render_page("dashboard-screenshots", "currencies-settings", &page.body);
    let page = b.get(&overview).await;
    assert_eq!(text_of(&page, "revenue-total"), "€18.00 · $25.00");
    // A new fixed discount's first amount is offered in the new default.
    let page = b.get(&format!("/dashboard/{org}/discounts/new")).await;
    assert_html(&page);
    assert!(
        page.body
            .contains(r#"<option value="eur" selected>EUR</option>"#),
        "{}",
        main_of(&page)
    );
}
