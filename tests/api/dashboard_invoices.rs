//! Issue 48, invoices on the seller's order page (`/dashboard/{org}/orders/{id}`), as a
//! browser that keeps cookies and never follows redirects. A German seller invoicing on
//! request sells to a French consumer: the page offers "Generate invoice" and the
//! billing-details form (the country read-only), saves the details through the API's rules
//! (read back with `GET /v1/orders/{id}`), shows the 422 of a country change next to the
//! section; the button issues the invoice, the page then shows its number and a link to
//! the PDF and no form, and a change is refused with 409. A refund gets a "Credit note"
//! link. The buyer's portal order page links the invoice once issued. Another seller gets 404 for the page and both forms, a form without the CSRF
//! token 403, and neither changes anything.

use std::time::Duration;

use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate::domain::ids::OrderId;
use tollgate::domain::order::{InvoiceState, Order};

use crate::checkouts::{id_of, product, Api};
use crate::dashboard::{
    assert_csrf_refused, assert_not_found, assert_status, form_post, main_of, redirected, seller,
    text_of,
};
use crate::helpers::{client, spawn_app, TestApp};
use crate::oauth::{user_with_password, Browser, Page};
use crate::portal_pages::signed_in as portal_signed_in;
use crate::tax_checkout::{bought, consumer, quoted, SELLER_TAX};

const SELLER: &str = "invoicing-seller@example.de";
const BUYER: &str = "marie@example.fr";

/// A seller signed in with its organization made through the dashboard, set up as the
/// German seller invoicing on request and selling one price of 1200 (USD), and a French
/// consumer's paid order: (browser, organization, token of the seller, order id).
pub(crate) async fn sold(app: &TestApp) -> (Browser, String, String, String) {
    let user = user_with_password(app, SELLER).await;
    let token = app.issue_token(user, Scope::ALL).await;
    let (b, org) = seller(app, SELLER, "Invoicing Shop").await;
    let api = Api {
        base: &app.address,
        client: &app.client,
        token: &token,
    };
    let r = api
        .patch(
            &format!("/v1/organizations/{org}"),
            Some(&token),
            &json!({"tax": {"country": "DE", "tax_id": SELLER_TAX,
                            "registrations": ["eu_oss"], "invoice_timing": "on_request",
                            "invoice_prefix": "DASH", "legal_name": "Dash Software GmbH",
                            "address": {"line1": "Friedrichstraße 12", "postal_code": "10117",
                                        "city": "Berlin", "country": "DE"}},
                    "default_tax_behavior": "location"}),
        )
        .await;
    r.expect(200);
    let r = api
        .patch(
            &format!("/v1/organizations/{org}"),
            Some(&token),
            &json!({"email": "support@invoicing.test"}),
        )
        .await;
    r.expect(200);
    let p = product(
        api,
        &org,
        "Lifetime",
        json!([{"amount_type": "fixed", "price_amount": 1200, "price_currency": "usd"}]),
    )
    .await;
    let price = id_of(&p["prices"][0]);
    let (c, _) = quoted(api, &price, &consumer("FR")).await;
    let o = bought(api, &c, &consumer("FR"), BUYER).await;
    (b, org, token, id_of(&o))
}

pub(crate) async fn api_order(app: &TestApp, token: &str, id: &str) -> Value {
    let r = app.get(&format!("/v1/orders/{id}"), Some(token)).await;
    r.expect(200);
    r.body
}

/// Whether the input `id` is read-only.
#[track_caller]
pub(crate) fn readonly(page: &Page, id: &str) -> bool {
    let at = page
        .body
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no input #{id} in\n{}", main_of(page)));
    let tag = &page.body[at..];
    tag[..tag.find('>').unwrap()].contains(" readonly")
}

/// The value of the input `id`.
#[track_caller]
pub(crate) fn value_of(page: &Page, id: &str) -> String {
    let at = page
        .body
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no input #{id} in\n{}", main_of(page)));
    let tag = &page.body[at..];
    let tag = &tag[..tag.find('>').unwrap()];
    let v = &tag[tag.find("value=\"").expect("a value") + 7..];
    crate::dashboard::unescape(&v[..v.find('"').unwrap()])
}

/// The `href` of the link `id` (the attribute of its tag, before or after the id).
#[track_caller]
pub(crate) fn href_of(page: &Page, id: &str) -> String {
    let at = page
        .body
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no link #{id} in\n{}", main_of(page)));
    let start = page.body[..at].rfind('<').expect("a tag");
    let end = at + page.body[at..].find('>').expect("a closed tag");
    let tag = &page.body[start..end];
    let v = &tag[tag.find("href=\"").expect("an href") + 6..];
    crate::dashboard::unescape(&v[..v.find('"').unwrap()])
}

/// The page once the element `id` is on it (bounded: the issuer runs within a second).
pub(crate) async fn once_shown(b: &mut Browser, path: &str, id: &str) -> Page {
    for _ in 0..100 {
        let page = b.get(path).await;
        assert_status(&page, 200);
        if page.body.contains(&format!("id=\"{id}\"")) {
            return page;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("#{id} never shown on {path}");
}

/// The PDF behind a link answers, named `file`.
pub(crate) async fn assert_pdf(url: &str, file: &str) {
    let resp = client().get(url).send().await.expect("the link answers");
    assert_eq!(resp.status(), 200, "{url}");
    assert_eq!(resp.headers()["content-type"], "application/pdf");
    assert_eq!(
        resp.headers()["content-disposition"].to_str().unwrap(),
        format!("attachment; filename=\"{file}\"")
    );
    assert!(resp.bytes().await.unwrap().starts_with(b"%PDF-"));
}

#[actix_web::test]
async fn the_order_page_generates_the_invoice_edits_billing_details_and_links_documents() {
    let app = spawn_app().await;
    let (mut b, org, token, id) = sold(&app).await;
    let path = format!("/dashboard/{org}/orders/{id}");

    // Not issued: the button and the form, the checkout's country read-only.
    let page = b.get(&path).await;
    assert_status(&page, 200);
    let main = main_of(&page);
    assert!(main.contains("id=\"invoice-generate\""), "{main}");
    assert!(main.contains("id=\"billing-form\""), "{main}");
    assert!(!main.contains("id=\"invoice-number\""), "{main}");
    assert_eq!(value_of(&page, "billing-country"), "FR");
    assert!(readonly(&page, "billing-country"));
    assert!(!readonly(&page, "billing-city"));

    // The details saved through the API's rules.
    let details = [
        ("billing_name", "Marie Curie SARL"),
        ("line1", "12 rue des Lilas"),
        ("line2", ""),
        ("postal_code", "69001"),
        ("city", "Lyon"),
        ("state", ""),
        ("country", "FR"),
    ];
    assert_csrf_refused(&mut b, &format!("{path}/billing"), &details).await;
    let page = form_post(&mut b, &format!("{path}/billing"), &details).await;
    assert_eq!(redirected(&page), format!("{path}#invoice"));
    let o = api_order(&app, &token, &id).await;
    assert_eq!(o["billing_name"], "Marie Curie SARL", "{o}");
    assert_eq!(o["billing_address"]["city"], "Lyon", "{o}");
    assert_eq!(o["billing_address"]["line1"], "12 rue des Lilas", "{o}");
    let page = b.get(&path).await;
    assert_eq!(value_of(&page, "billing-name"), "Marie Curie SARL");
    assert_eq!(value_of(&page, "billing-postal-code"), "69001");

    // A country change: the API's 422, shown with the form as posted; nothing saved.
    let mut moved = details.to_vec();
    moved[6] = ("country", "DE");
    moved[4] = ("city", "Berlin");
    let page = form_post(&mut b, &format!("{path}/billing"), &moved).await;
    assert_status(&page, 422);
    assert!(page.body.contains("id=\"invoice-errors\""));
    assert!(
        main_of(&page).contains("Country cannot be changed"),
        "{}",
        main_of(&page)
    );
    assert_eq!(value_of(&page, "billing-city"), "Berlin");
    let o = api_order(&app, &token, &id).await;
    assert_eq!(o["billing_address"]["country"], "FR", "{o}");
    assert_eq!(o["billing_address"]["city"], "Lyon", "{o}");

    // The buyer's portal: no invoice yet.
    let slug = app
        .get(&format!("/v1/organizations/{org}"), Some(&token))
        .await
        .body["slug"]
        .as_str()
        .expect("a slug")
        .to_string();
    let mut buyer = portal_signed_in(&app, &slug, BUYER).await;
    let portal = format!("/portal/{slug}/orders/{id}");
    let page = buyer.get(&portal).await;
    assert_status(&page, 200);
    assert!(page.body.contains("id=\"receipt-link\""), "{}", page.body);
    assert!(!page.body.contains("id=\"invoice-link\""), "{}", page.body);

    // "Generate invoice": issued within a second, then its number and the PDF's link.
    assert_csrf_refused(&mut b, &format!("{path}/invoice"), &[]).await;
    let page = form_post(&mut b, &format!("{path}/invoice"), &[]).await;
    assert_eq!(redirected(&page), format!("{path}#invoice"));
    let page = once_shown(&mut b, &path, "invoice-number").await;
    assert_eq!(text_of(&page, "invoice-number"), "DASH-0001");
    assert_eq!(text_of(&page, "invoice-download"), "Download invoice");
    let url = href_of(&page, "invoice-download");
    assert!(
        url.contains("/v1/invoices/") && url.contains("signature="),
        "{url}"
    );
    assert_pdf(&url, "Invoice-DASH-0001.pdf").await;
    let main = main_of(&page);
    assert!(!main.contains("id=\"invoice-generate\""), "{main}");
    assert!(!main.contains("id=\"billing-form\""), "{main}");
    let o = api_order(&app, &token, &id).await;
    assert_eq!(o["invoice_number"], "DASH-0001", "{o}");

    // The buyer's order page links it too (a path of the site, signed, fresh).
    let page = buyer.get(&portal).await;
    assert_status(&page, 200);
    assert_eq!(text_of(&page, "invoice-link"), "Download invoice");
    let link = href_of(&page, "invoice-link");
    assert!(
        link.starts_with("/v1/invoices/") && link.contains("signature="),
        "{link}"
    );
    assert_pdf(&format!("{}{link}", app.address), "Invoice-DASH-0001.pdf").await;

    // Issued: the details are frozen (409, shown on the page).
    let page = form_post(&mut b, &format!("{path}/billing"), &details).await;
    assert_status(&page, 409);
    assert!(
        main_of(&page).contains("can no longer change"),
        "{}",
        main_of(&page)
    );
    // Asking again changes nothing.
    let page = form_post(&mut b, &format!("{path}/invoice"), &[]).await;
    assert_eq!(redirected(&page), format!("{path}#invoice"));

    // A refund of the invoiced order: its credit note linked from the refunds' list.
    let page = b.get(&path).await;
    assert!(!page.body.contains("id=\"credit-note-1\""));
    let r = app
        .post_json(
            "/v1/refunds/",
            Some(&token),
            &json!({"order_id": id, "reason": "customer_request", "amount": 500}),
        )
        .await;
    r.expect(200);
    let page = once_shown(&mut b, &path, "credit-note-1").await;
    assert_eq!(text_of(&page, "credit-note-1"), "Credit note");
    assert_pdf(
        &href_of(&page, "credit-note-1"),
        "CreditNote-DASH-CN-0001.pdf",
    )
    .await;
}

#[actix_web::test]
async fn another_seller_gets_404_for_the_page_and_its_invoice_forms() {
    let app = spawn_app().await;
    let (_, org, token, id) = sold(&app).await;
    let (mut other, other_org) = seller(&app, "other-seller@example.com", "Other Shop").await;
    let path = format!("/dashboard/{org}/orders/{id}");

    assert_not_found(&other.get(&path).await);
    let page = form_post(&mut other, &format!("{path}/invoice"), &[]).await;
    assert_status(&page, 404);
    let page = form_post(
        &mut other,
        &format!("{path}/billing"),
        &[("billing_name", "Taken Over"), ("country", "FR")],
    )
    .await;
    assert_status(&page, 404);
    // Nor under its own organization.
    let own = format!("/dashboard/{other_org}/orders/{id}");
    assert_not_found(&other.get(&own).await);
    let page = form_post(&mut other, &format!("{own}/invoice"), &[]).await;
    assert_status(&page, 404);

    // Nothing changed: no invoice asked for (none due), the name as the checkout left it.
    let stored = app
        .state
        .store
        .get::<Order>(&id.parse::<OrderId>().unwrap().key())
        .await
        .unwrap()
        .expect("the order");
    assert_eq!(stored.value.invoice, InvoiceState::None);
    let o = api_order(&app, &token, &id).await;
    assert_eq!(o["is_invoice_generated"], false, "{o}");
    assert_ne!(o["billing_name"], "Taken Over", "{o}");
    let r = app
        .get(&format!("/v1/orders/{id}/invoice"), Some(&token))
        .await;
    assert_eq!(r.expect_error(404), "InvoiceDoesNotExist");
}
