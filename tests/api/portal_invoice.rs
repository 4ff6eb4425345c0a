//! Issue 48, the buyer's "Request invoice" form on the portal's order page
//! (`POST /portal/{slug}/orders/{id}/invoice`). A German seller invoicing on request has
//! sold to a French consumer: the page offers the form, filled with the order's details
//! (its country read-only); a form without the CSRF token is 403, a country change is the
//! API's 422 shown next to the form with nothing saved; the details as posted are saved
//! on the order and the invoice is issued, then the page links its PDF and the form is
//! gone. Another buyer of the same seller gets 404 and changes nothing. The pages are drawn
//! by headless Chromium under `<CARGO_TARGET_TMPDIR>/portal-screenshots/invoice-*.png`.

use crate::checkouts::{id_of, product, Api};
use crate::dashboard::{assert_status, main_of};
use crate::dashboard_invoices::{
    api_order, assert_pdf, href_of, once_shown, readonly, sold, value_of,
};
use crate::helpers::spawn_app;
use crate::portal_pages::signed_in;
use crate::tax_checkout::{bought, consumer, quoted};

const BUYER: &str = "marie@example.fr";

#[actix_web::test]
async fn the_buyer_requests_the_invoice_with_billing_details() {
    let app = spawn_app().await;
    let (_, org, token, id) = sold(&app).await;
    let slug = app
        .get(&format!("/v1/organizations/{org}"), Some(&token))
        .await
        .body["slug"]
        .as_str()
        .expect("a slug")
        .to_string();
    let path = format!("/portal/{slug}/orders/{id}");
    let post = format!("{path}/invoice");
    let mut b = signed_in(&app, &slug, BUYER).await;

    // Not issued: the form, with the checkout's country read-only.
    let page = b.get(&path).await;
    assert_status(&page, 200);
    let main = main_of(&page);
    assert!(main.contains("id=\"invoice-form\""), "{main}");
    assert!(!main.contains("id=\"invoice-link\""), "{main}");
    assert_eq!(value_of(&page, "billing-country"), "FR");
    assert!(readonly(&page, "billing-country"));
    assert!(!readonly(&page, "billing-city"));
    let csrf = page.csrf();
    let form_page = page.body.clone();

    let details = |country: &'static str, city: &'static str| {
        vec![
            ("csrf_token", csrf.clone()),
            ("billing_name", "Marie Curie SARL".to_string()),
            ("line1", "12 rue des Lilas".to_string()),
            ("line2", String::new()),
            ("postal_code", "69001".to_string()),
            ("city", city.to_string()),
            ("state", String::new()),
            ("country", country.to_string()),
        ]
    };
    let form = |d: &Vec<(&'static str, String)>| {
        d.iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect::<Vec<(&str, String)>>()
    };

    // Without the CSRF token: 403, nothing saved, nothing issued.
    let mut no_token = form(&details("FR", "Lyon"));
    no_token.remove(0);
    let refs: Vec<(&str, &str)> = no_token.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let page = b.post(&post, &refs).await;
    assert_status(&page, 403);
    let o = api_order(&app, &token, &id).await;
    assert_eq!(o["billing_name"], "Ada Lovelace", "{o}");
    assert_eq!(o["is_invoice_generated"], false, "{o}");

    // A country change: the API's 422 next to the form, as posted; nothing saved.
    let moved = form(&details("DE", "Berlin"));
    let refs: Vec<(&str, &str)> = moved.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let page = b.post(&post, &refs).await;
    assert_status(&page, 422);
    let main = main_of(&page);
    assert!(main.contains("id=\"invoice-errors\""), "{main}");
    assert!(main.contains("Country cannot be changed"), "{main}");
    assert_eq!(value_of(&page, "billing-city"), "Berlin");
    let refused_page = page.body.clone();
    let o = api_order(&app, &token, &id).await;
    assert_eq!(o["billing_address"]["country"], "FR", "{o}");
    assert_ne!(o["billing_address"]["city"], "Berlin", "{o}");
    assert_eq!(o["is_invoice_generated"], false, "{o}");

    // Another buyer of the same seller: 404, nothing changes.
    let api = Api {
        base: &app.address,
        client: &app.client,
        token: &token,
    };
    let p = product(
        api,
        &org,
        "Other",
        serde_json::json!([{"amount_type": "fixed", "price_amount": 500, "price_currency": "usd"}]),
    )
    .await;
    let (c, _) = quoted(api, &id_of(&p["prices"][0]), &consumer("FR")).await;
    bought(api, &c, &consumer("FR"), "paul@example.fr").await;
    let mut other = signed_in(&app, &slug, "paul@example.fr").await;
    let other_csrf = other.get(&format!("/portal/{slug}/overview")).await.csrf();
    let mut theirs = form(&details("FR", "Lyon"));
    theirs[0].1 = other_csrf;
    let refs: Vec<(&str, &str)> = theirs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let page = other.post(&post, &refs).await;
    assert_status(&page, 404);
    let o = api_order(&app, &token, &id).await;
    assert_eq!(o["billing_name"], "Ada Lovelace", "{o}");

    // The details as posted: saved on the order, the invoice issued.
    let good = form(&details("FR", "Lyon"));
    let refs: Vec<(&str, &str)> = good.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let page = b.post(&post, &refs).await;
    assert_status(&page, 303);
    assert_eq!(page.location, format!("{path}?done=invoice#invoice"));
    let page = b.get(&format!("{path}?done=invoice")).await;
    assert_status(&page, 200);
    assert!(main_of(&page).contains("Invoice requested."));
    let o = api_order(&app, &token, &id).await;
    assert_eq!(o["billing_name"], "Marie Curie SARL", "{o}");
    assert_eq!(o["billing_address"]["city"], "Lyon", "{o}");
    assert_eq!(o["billing_address"]["line1"], "12 rue des Lilas", "{o}");
    let page = once_shown(&mut b, &path, "invoice-link").await;
    let issued_page = page.body.clone();
    assert!(!main_of(&page).contains("id=\"invoice-form\""));
    let link = href_of(&page, "invoice-link");
    assert_pdf(&format!("{}{link}", app.address), "Invoice-DASH-0001.pdf").await;
    let o = api_order(&app, &token, &id).await;
    assert_eq!(o["invoice_number"], "DASH-0001", "{o}");
    // Asking again changes nothing (the invoice stands).
    let page = b.post(&post, &refs).await;
    assert_status(&page, 303);
    let o = api_order(&app, &token, &id).await;
    assert_eq!(o["invoice_number"], "DASH-0001", "{o}");

    // Drawn last: the server is not kept waiting.
    for (name, body) in [
        ("invoice-form", &form_page),
        ("invoice-refused", &refused_page),
        ("invoice-issued", &issued_page),
    ] {
        crate::tools::render_page("portal-screenshots", name, body);
    }
}
