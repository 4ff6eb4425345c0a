//! The dashboard's Tax page (`/dashboard/{org}/tax`) over HTTP, as a browser that keeps
//! cookies and never follows redirects: the form shows the organization's tax settings,
//! saves them through the API's organization update (read back with
//! `GET /v1/organizations/{id}`), shows the API's refusals next to their fields and saves
//! nothing then; another seller gets the dashboard's 404, a form without the CSRF token a
//! 403, and neither changes anything.

use serde_json::Value;
use tollgate::auth::Scope;

use crate::dashboard::{assert_status, form_post, main_of, seller, text_of, unescape};
use crate::helpers::{spawn_app, TestApp};
use crate::oauth::{user_with_password, Browser, Page};

const SELLER: &str = "tax-seller@example.com";
/// A CSRF token of the right length that is not the browser's.
const FORGED: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const VAT_FR: &str = "FR40303265045";

/// A seller signed in, its organization made through the dashboard, and a token of the
/// seller to read it through the API: (browser, organization id, token).
async fn tax_seller(app: &TestApp, email: &str, name: &str) -> (Browser, String, String) {
    let user = user_with_password(app, email).await;
    let token = app.issue_token(user, Scope::ALL).await;
    let (b, org) = seller(app, email, name).await;
    (b, org, token)
}

/// The organization's `tax` object and `default_tax_behavior`, as the API answers them.
async fn api_tax(app: &TestApp, org: &str, token: &str) -> (Value, String) {
    let r = app
        .get(&format!("/v1/organizations/{org}"), Some(token))
        .await;
    r.expect(200);
    let behavior = r.body["default_tax_behavior"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (r.body["tax"].clone(), behavior)
}

/// Whether the checkbox or radio with `id` is ticked.
#[track_caller]
fn checked(page: &Page, id: &str) -> bool {
    let needle = format!("id=\"{id}\"");
    let at = page
        .body
        .find(&needle)
        .unwrap_or_else(|| panic!("no input #{id} in\n{}", main_of(page)));
    let tag = &page.body[at..];
    tag[..tag.find('>').unwrap()].contains(" checked")
}

/// The values of the selected options of the `<select id=…>`.
#[track_caller]
fn selected(page: &Page, id: &str) -> Vec<String> {
    let at = page
        .body
        .find(&format!("<select id=\"{id}\""))
        .unwrap_or_else(|| panic!("no select #{id} in\n{}", main_of(page)));
    let select = &page.body[at..];
    let select = &select[..select.find("</select>").unwrap()];
    select
        .split("<option value=\"")
        .skip(1)
        .filter(|o| o[..o.find('>').unwrap()].ends_with(" selected"))
        .map(|o| o[..o.find('"').unwrap()].to_string())
        .collect()
}

/// The message shown next to the form's field `field` ("" when none).
fn inline_error(page: &Page, field: &str) -> String {
    if !page.body.contains(&format!("id=\"{field}-error\"")) {
        return String::new();
    }
    text_of(page, &format!("{field}-error"))
}

fn saved(page: &Page) -> bool {
    page.body
        .contains(r#"<p class="notice" role="status">Saved.</p>"#)
}

/// The form of a French seller registered for the OSS and in the UK.
fn french() -> Vec<(&'static str, &'static str)> {
    vec![
        ("country", "FR"),
        ("tax_id", VAT_FR),
        ("legal_name", "Tax Shop SAS"),
        ("address_line1", "1 rue de la Paix"),
        ("address_line2", ""),
        ("address_postal_code", "75002"),
        ("address_city", "Paris"),
        ("address_state", ""),
        ("address_country", "FR"),
        ("registrations", "eu_oss"),
        ("registrations", "gb"),
        ("provider", "builtin"),
        ("default_tax_behavior", "exclusive"),
        ("invoice_prefix", "TAXS"),
        ("invoice_timing", "on_payment"),
    ]
}

/// `fields` with `key`'s values replaced by `value`.
fn with(
    fields: &[(&'static str, &'static str)],
    key: &'static str,
    value: &'static str,
) -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<_> = fields.iter().filter(|(k, _)| *k != key).cloned().collect();
    out.push((key, value));
    out
}

#[actix_web::test]
async fn the_tax_page_shows_saves_and_refuses_as_the_api_does() {
    let app = spawn_app().await;
    let (mut b, org, token) = tax_seller(&app, SELLER, "Tax Shop").await;
    let path = format!("/dashboard/{org}/tax");

    // A new organization: no country (no tax), the built-in provider offered, prices by
    // the buyer's country, and the nav's Tax entry on.
    let page = b.get(&path).await;
    assert_status(&page, 200);
    assert!(page.body.contains("<h1>Tax of Tax Shop</h1>"));
    assert!(
        page.body.contains(&format!(
            r#"<a href="{path}" class="on" aria-current="page">Tax</a>"#
        )),
        "{}",
        page.body
    );
    assert!(selected(&page, "country").is_empty());
    assert!(page
        .body
        .contains(r#"<option value="DE">Germany (DE)</option>"#));
    assert!(checked(&page, "provider-builtin") && !checked(&page, "provider-none"));
    assert_eq!(selected(&page, "default_tax_behavior"), vec!["location"]);
    assert_eq!(selected(&page, "invoice_timing"), vec!["on_request"]);
    for r in ["eu_oss", "non_eu_oss", "gb", "no", "ch", "au", "ca"] {
        assert!(!checked(&page, &format!("reg-{r}")), "{r}");
    }
    assert!(!checked(&page, "eu_micro_threshold"));
    assert!(page
        .body
        .contains("EU One-Stop-Shop (seller established in the EU)"));
    assert!(!saved(&page));
    let (tax, _) = api_tax(&app, &org, &token).await;
    assert_eq!(tax["country"], Value::Null);

    // Saved: back to the page with the notice, the values shown, the API agrees.
    let page = form_post(&mut b, &path, &french()).await;
    assert_status(&page, 303);
    assert_eq!(page.location, format!("{path}?saved=1"));
    let page = b.get(&format!("{path}?saved=1")).await;
    assert_status(&page, 200);
    assert!(saved(&page));
    assert_eq!(selected(&page, "country"), vec!["FR"]);
    assert_eq!(selected(&page, "address_country"), vec!["FR"]);
    assert_eq!(page.input("tax_id").as_deref(), Some(VAT_FR));
    assert_eq!(page.input("legal_name").as_deref(), Some("Tax Shop SAS"));
    assert_eq!(page.input("address_city").as_deref(), Some("Paris"));
    assert_eq!(page.input("invoice_prefix").as_deref(), Some("TAXS"));
    assert!(checked(&page, "reg-eu_oss") && checked(&page, "reg-gb"));
    assert!(!checked(&page, "reg-no") && !checked(&page, "reg-non_eu_oss"));
    assert!(checked(&page, "provider-builtin"));
    assert_eq!(selected(&page, "default_tax_behavior"), vec!["exclusive"]);
    assert_eq!(selected(&page, "invoice_timing"), vec!["on_payment"]);
    let (tax, behavior) = api_tax(&app, &org, &token).await;
    assert_eq!(tax["country"], "FR");
    assert_eq!(tax["tax_id"], VAT_FR);
    assert_eq!(tax["registrations"], serde_json::json!(["eu_oss", "gb"]));
    assert_eq!(tax["provider"], "builtin");
    assert_eq!(tax["eu_micro_threshold"], false);
    assert_eq!(tax["legal_name"], "Tax Shop SAS");
    assert_eq!(tax["address"]["city"], "Paris");
    assert_eq!(tax["address"]["country"], "FR");
    assert_eq!(tax["invoice_prefix"], "TAXS");
    assert_eq!(tax["invoice_timing"], "on_payment");
    assert_eq!(behavior, "exclusive");
    let stored = (tax, behavior);

    // An invalid tax number: the API's message next to the field, what was typed kept,
    // nothing saved.
    let page = form_post(&mut b, &path, &with(&french(), "tax_id", "FR123")).await;
    assert_status(&page, 422);
    assert_eq!(inline_error(&page, "tax_id"), "Invalid tax ID.");
    assert!(page
        .body
        .contains(r#"aria-invalid="true" aria-describedby="tax_id-error""#));
    assert_eq!(page.input("tax_id").as_deref(), Some("FR123"));
    assert_eq!(inline_error(&page, "registrations"), "");
    assert!(!saved(&page));
    assert_eq!(api_tax(&app, &org, &token).await, stored);

    // The EU's One-Stop-Shop for a seller in the United States: refused at the boxes.
    let us = with(&with(&french(), "country", "US"), "tax_id", "");
    let us = with(&us, "registrations", "eu_oss");
    let page = form_post(&mut b, &path, &us).await;
    assert_status(&page, 422);
    assert_eq!(
        unescape(&inline_error(&page, "registrations")),
        "eu_oss is for a seller established in the EU; use non_eu_oss."
    );
    assert_eq!(selected(&page, "country"), vec!["US"]);
    assert!(checked(&page, "reg-eu_oss") && !checked(&page, "reg-gb"));
    assert_eq!(api_tax(&app, &org, &token).await, stored);

    // The micro threshold, ticked: saved; then the country cleared: no tax at all.
    let mut micro = french();
    micro.push(("eu_micro_threshold", "on"));
    assert_status(&form_post(&mut b, &path, &micro).await, 303);
    assert!(checked(&b.get(&path).await, "eu_micro_threshold"));
    assert_eq!(
        api_tax(&app, &org, &token).await.0["eu_micro_threshold"],
        true
    );
    let off = [
        ("country", ""),
        ("tax_id", ""),
        ("provider", "builtin"),
        ("default_tax_behavior", "location"),
    ];
    assert_status(&form_post(&mut b, &path, &off).await, 303);
    let (tax, behavior) = api_tax(&app, &org, &token).await;
    assert_eq!(tax["country"], Value::Null);
    assert_eq!(tax["tax_id"], Value::Null);
    assert_eq!(tax["provider"], "none");
    assert_eq!(tax["registrations"], serde_json::json!([]));
    assert_eq!(tax["eu_micro_threshold"], false);
    assert_eq!(tax["address"], Value::Null);
    assert_eq!(behavior, "location");
}

#[actix_web::test]
async fn another_seller_gets_404_and_a_form_without_csrf_is_refused() {
    let app = spawn_app().await;
    let (mut a, org, token) = tax_seller(&app, SELLER, "Tax Shop").await;
    let path = format!("/dashboard/{org}/tax");
    assert_status(&form_post(&mut a, &path, &french()).await, 303);
    let stored = api_tax(&app, &org, &token).await;
    assert_eq!(stored.0["country"], "FR");

    // Another seller, with an organization of its own: A's page and form are not found.
    let (mut other, other_org, _) = tax_seller(&app, "other@example.com", "Other Shop").await;
    let page = other.get(&path).await;
    assert_status(&page, 404);
    assert!(page.location.is_empty() && page.content_type.starts_with("text/html"));
    assert!(!page.body.contains(VAT_FR) && !page.body.contains("Tax Shop"));
    let page = form_post(&mut other, &path, &[("country", "DE"), ("tax_id", "")]).await;
    assert_status(&page, 404);
    assert_eq!(api_tax(&app, &org, &token).await, stored);
    // Its own page shows nothing of A's.
    let own = other.get(&format!("/dashboard/{other_org}/tax")).await;
    assert_status(&own, 200);
    assert!(!own.body.contains(VAT_FR) && !own.body.contains("TAXS"));

    // Without the CSRF token, or with a forged one: 403 before anything is read.
    let change = [("country", "DE"), ("tax_id", "")];
    for form in [vec![("csrf_token", FORGED)], Vec::new()] {
        let mut form = form;
        form.extend_from_slice(&change);
        let page = a.post(&path, &form).await;
        assert_status(&page, 403);
        assert!(page.body.contains("CSRF"), "{}", main_of(&page));
    }
    assert_eq!(api_tax(&app, &org, &token).await, stored);

    // Without a session: to sign in, back to the page.
    let mut anonymous = Browser::new(&app);
    let page = anonymous.get(&path).await;
    assert_status(&page, 303);
    assert!(
        page.location.starts_with("/oauth2/login?next="),
        "{}",
        page.location
    );
}

/// The page as saved and as refused, rendered by headless Chromium at a phone's and a
/// desktop's width (the page is self-contained: its HTML, saved, renders as served). The
/// PNGs are left under `<CARGO_TARGET_TMPDIR>/dashboard-screenshots/tax-*.png` to be looked at (with
/// the tax reports page and an order page with its invoice block, after a sale).
#[actix_web::test]
async fn the_tax_page_renders_at_phone_and_desktop_widths() {
    let app = spawn_app().await;
    let (mut b, org, token) = tax_seller(&app, SELLER, "Tax Shop").await;
    let path = format!("/dashboard/{org}/tax");
    assert_status(&form_post(&mut b, &path, &french()).await, 303);
    let saved_page = b.get(&format!("{path}?saved=1")).await;
    assert_status(&saved_page, 200);
    let us = with(&with(&french(), "country", "US"), "tax_id", "12");
    let refused = form_post(&mut b, &path, &with(&us, "invoice_prefix", "tax shop")).await;
    assert_status(&refused, 422);
    assert_eq!(inline_error(&refused, "tax_id"), "Invalid tax ID.");
    assert!(!inline_error(&refused, "invoice_prefix").is_empty());

    // A German consumer's purchase, for the reports' tables and the order's invoice block.
    let api = crate::checkouts::Api {
        base: &app.address,
        client: &app.client,
        token: &token,
    };
    let p = crate::checkouts::product(
        api,
        &org,
        "Lifetime",
        serde_json::json!([{"amount_type": "fixed", "price_amount": 1200, "price_currency": "usd"}]),
    )
    .await;
    let price = crate::checkouts::id_of(&p["prices"][0]);
    let buyer = crate::tax_checkout::consumer("DE");
    let (c, _) = crate::tax_checkout::quoted(api, &price, &buyer).await;
    let order = crate::tax_checkout::bought(api, &c, &buyer, "hans@example.de").await;
    let reports = b.get(&format!("{path}/reports")).await;
    assert_status(&reports, 200);
    assert!(
        reports.body.contains("<td>DE</td><td>19 %</td>"),
        "{}",
        main_of(&reports)
    );
    let order_page = b
        .get(&format!(
            "/dashboard/{org}/orders/{}",
            crate::checkouts::id_of(&order)
        ))
        .await;
    assert_status(&order_page, 200);
    assert!(
        order_page.body.contains("Download invoice"),
        "{}",
        main_of(&order_page)
    );

    for (name, page) in [
        ("saved", &saved_page),
        ("refused", &refused),
        ("reports", &reports),
        ("order-invoice", &order_page),
    ] {
        crate::tools::render_page("dashboard-screenshots", &format!("tax-{name}"), &page.body);
    }
}

/// The tax reports page: the quarter's OSS return and every tax line as tables with their
/// CSV files (the API's files, with the session); a sale of the seller shows in both;
/// another seller gets 404, a quarter 5 a 422 page, no session the sign-in.
#[actix_web::test]
async fn the_tax_reports_page_shows_the_quarter_and_its_csv_files() {
    use chrono::Datelike;
    use serde_json::json;

    let app = spawn_app().await;
    let (mut a, org, token) = tax_seller(&app, SELLER, "Tax Shop").await;
    let r = app
        .patch_json(
            &format!("/v1/organizations/{org}"),
            Some(&token),
            &json!({"tax": {"country": "FR", "tax_id": VAT_FR, "registrations": ["eu_oss"]}}),
        )
        .await;
    r.expect(200);
    // One German consumer's purchase of 1200 (19 % inside).
    let api = crate::checkouts::Api {
        base: &app.address,
        client: &app.client,
        token: &token,
    };
    let p = crate::checkouts::product(
        api,
        &org,
        "Lifetime",
        json!([{"amount_type": "fixed", "price_amount": 1200, "price_currency": "usd"}]),
    )
    .await;
    let price = crate::checkouts::id_of(&p["prices"][0]);
    let buyer = crate::tax_checkout::consumer("DE");
    let (c, _) = crate::tax_checkout::quoted(api, &price, &buyer).await;
    crate::tax_checkout::bought(api, &c, &buyer, "hans@example.de").await;

    let now = chrono::Utc::now();
    let (year, quarter) = (now.year(), (now.month() - 1) / 3 + 1);
    let path = format!("/dashboard/{org}/tax/reports");
    let page = a.get(&path).await;
    assert_status(&page, 200);
    let main = main_of(&page);
    assert!(
        main.contains(&format!("EU One-Stop-Shop return, {year} Q{quarter}")),
        "{main}"
    );
    assert!(
        main.contains(
            "<td>DE</td><td>19 %</td><td class=\"num\">10.08</td><td class=\"num\">1.92</td>"
        ),
        "{main}"
    );
    let csv = a
        .get(&format!("{path}/oss.csv?year={year}&quarter={quarter}"))
        .await;
    assert_status(&csv, 200);
    assert!(
        csv.content_type.starts_with("text/csv"),
        "{}",
        csv.content_type
    );
    assert_eq!(
        csv.body,
        "country,rate,taxable_amount,tax_amount,currency\r\nDE,19,10.08,1.92,USD\r\n"
    );
    // The page's own link to the summary answers the same line.
    let start = format!("{year}-{:02}-01", 3 * quarter - 2);
    assert!(
        main.contains(&format!("tax/reports/tax.csv?start={start}")),
        "{main}"
    );
    let page = a.get(&format!("{path}?year={year}&quarter=5")).await;
    assert_status(&page, 422);

    let (mut other, _, _) = tax_seller(&app, "other@example.com", "Other Shop").await;
    assert_status(&other.get(&path).await, 404);
    assert_status(
        &other
            .get(&format!("{path}/oss.csv?year={year}&quarter={quarter}"))
            .await,
        404,
    );
    let mut anonymous = Browser::new(&app);
    assert_status(&anonymous.get(&path).await, 303);
}
