//! Issue 48, invoices over HTTP: a German seller (DE136695976, EU One-Stop-Shop) that
//! invoices on payment gets `ACME-0001`, `ACME-0002`… for its paid orders within a second
//! (`is_invoice_generated`, `invoice_number`), the link answers the PDF (its text read back
//! with `pdftotext`: numbers, both parties and tax numbers, the reverse-charge mention),
//! billing details are frozen once issued (409), a refund gets a credit note
//! (`ACME-CN-0001`, naming the invoice). A seller invoicing on request: 404
//! `InvoiceDoesNotExist` until asked, Polar's billing-details rules (422 on a country
//! change), 202 `null`, then the link (`MissingInvoiceBillingDetails` is the use case's
//! test: a checkout always leaves a country and a name). The portal's
//! routes as the buyer; the denials (another organization, a read-only token for PATCH,
//! another customer, a forged link).

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::checkouts::{create_org, id_of, product, Api};
use crate::helpers::{client, spawn_app, Reply, TestApp};
use crate::tax_checkout::{bought, consumer, french_business, quoted, FR_BUSINESS, SELLER_TAX};
use tollgate::auth::Scope;

/// An organization selling one price of 1200 (USD) as the German seller, with `timing`;
/// returns (organization, price).
async fn shop(api: Api<'_>, slug: &str, timing: &str) -> (String, String) {
    let org = create_org(api, slug).await;
    let r = api
        .patch(
            &format!("/v1/organizations/{org}"),
            Some(api.token),
            &json!({"tax": {"country": "DE", "tax_id": SELLER_TAX,
                            "registrations": ["eu_oss"], "invoice_timing": timing,
                            "invoice_prefix": "ACME", "legal_name": "Acme Software GmbH",
                            "address": {"line1": "Friedrichstraße 12", "postal_code": "10117",
                                        "city": "Berlin", "country": "DE"}},
                    "default_tax_behavior": "location"}),
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
    (org, id_of(&p["prices"][0]))
}

/// The order `id` once its invoice is issued (bounded wait: the issuer runs within a
/// second of the payment).
async fn invoiced(app: &TestApp, token: &str, id: &str) -> Value {
    for _ in 0..100 {
        let r = app.get(&format!("/v1/orders/{id}"), Some(token)).await;
        r.expect(200);
        if r.body["is_invoice_generated"] == true {
            return r.body;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("order {id} was not invoiced");
}

/// The answer of `path` once it is not a 404 (bounded wait).
async fn once_there(app: &TestApp, path: &str, token: &str) -> Reply {
    for _ in 0..100 {
        let r = app.get(path, Some(token)).await;
        if r.status != 404 {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{path} stayed 404");
}

/// The PDF behind a link: its bytes, after checking the headers.
async fn pdf(url: &str, file: &str) -> Vec<u8> {
    let resp = client().get(url).send().await.expect("the link answers");
    assert_eq!(resp.status(), 200, "{url}");
    let h = resp.headers();
    assert_eq!(h["content-type"], "application/pdf");
    assert_eq!(
        h["content-disposition"].to_str().unwrap(),
        format!("attachment; filename=\"{file}\"")
    );
    assert_eq!(h["cache-control"], "private, no-store");
    let bytes = resp.bytes().await.expect("the PDF").to_vec();
    assert!(bytes.starts_with(b"%PDF-"), "not a PDF");
    bytes
}

/// The PDF's text (`pdftotext -layout`); `None` where poppler is missing outside CI.
fn text(bytes: &[u8]) -> Option<String> {
    use std::io::Write;
    let child = Command::new("pdftotext")
        .args(["-layout", "-", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("pdftotext not available ({e}): the PDF's text is not checked");
            return None;
        }
        Err(e) => panic!("pdftotext is needed under CI: {e}"),
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(bytes)
        .expect("the PDF written");
    let out = child.wait_with_output().expect("pdftotext ran");
    assert!(out.status.success(), "pdftotext failed");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Leaves the PDF and its first page as a PNG (`pdftoppm`, when there) under
/// `<CARGO_TARGET_TMPDIR>/tax-screenshots/` to be looked at.
fn keep(bytes: &[u8], name: &str) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("tax-screenshots");
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let pdf = dir.join(format!("{name}.pdf"));
    if std::fs::write(&pdf, bytes).is_ok() {
        let _ = Command::new("pdftoppm")
            .args(["-png", "-r", "80", "-f", "1", "-l", "1", "-singlefile"])
            .arg(&pdf)
            .arg(dir.join(name))
            .status();
    }
}

#[track_caller]
fn contains_all(text: &str, wanted: &[&str]) {
    for w in wanted {
        assert!(text.contains(w), "{w:?} missing from:\n{text}");
    }
}

#[actix_web::test]
async fn paid_orders_are_invoiced_in_sequence_and_refunds_credited() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let (_, price) = shop(api, "invoicing", "on_payment").await;

    // A French business: reverse charge, its name and number on the invoice.
    let (c, _) = quoted(api, &price, &french_business()).await;
    let o = bought(api, &c, &french_business(), "compta@acme.fr").await;
    let o = invoiced(&app, &app.token, &id_of(&o)).await;
    assert_eq!(o["invoice_number"], "ACME-0001", "{o}");
    let r = app
        .get(
            &format!("/v1/orders/{}/invoice", id_of(&o)),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    let url = r.body["url"].as_str().unwrap().to_string();
    assert!(
        url.contains("/v1/invoices/") && url.contains(".pdf?expires="),
        "{url}"
    );
    let bytes = pdf(&url, "Invoice-ACME-0001.pdf").await;
    keep(&bytes, "invoice-reverse-charge");
    if let Some(t) = text(&bytes) {
        contains_all(
            &t,
            &[
                "Invoice",
                "ACME-0001",
                "Acme Software GmbH",
                "Friedrichstraße 12",
                SELLER_TAX,
                "Acme SAS",
                "1 rue de Rivoli",
                FR_BUSINESS,
                "Reverse charge",
                "$12.00",
            ],
        );
    }
    // Issued: the billing details are frozen; asking again changes nothing.
    let r = app
        .patch_json(
            &format!("/v1/orders/{}", id_of(&o)),
            Some(&app.token),
            &json!({"billing_name": "Other SAS"}),
        )
        .await;
    assert_eq!(r.expect_error(409), "InvoiceAlreadyIssued");
    let r = app
        .post_json(
            &format!("/v1/orders/{}/invoice", id_of(&o)),
            Some(&app.token),
            &json!({}),
        )
        .await;
    r.expect(202);
    assert_eq!(r.body, Value::Null);

    // A German consumer: the next number, VAT inside the price.
    let (c, _) = quoted(api, &price, &consumer("DE")).await;
    let german = bought(api, &c, &consumer("DE"), "hans@example.de").await;
    let german = invoiced(&app, &app.token, &id_of(&german)).await;
    assert_eq!(german["invoice_number"], "ACME-0002", "{german}");

    // A refund of half of it: a credit note in its own sequence, naming the invoice.
    let r = app
        .post_json(
            "/v1/refunds/",
            Some(&app.token),
            &json!({"order_id": id_of(&german), "reason": "customer_request", "amount": 504}),
        )
        .await;
    r.expect(200);
    let refund = id_of(&r.body);
    let r = once_there(
        &app,
        &format!("/v1/refunds/{refund}/credit-note"),
        &app.token,
    )
    .await;
    r.expect(200);
    let bytes = pdf(
        r.body["url"].as_str().unwrap(),
        "CreditNote-ACME-CN-0001.pdf",
    )
    .await;
    keep(&bytes, "credit-note");
    if let Some(t) = text(&bytes) {
        contains_all(
            &t,
            &[
                "Credit note",
                "ACME-CN-0001",
                "Credit note for invoice ACME-0002",
                "-$6.00",
            ],
        );
    }
    // A refund of an order without an invoice has no credit note.
    let (plain_org, plain_price) = {
        let org = create_org(api, "not-invoicing").await;
        let p = product(
            api,
            &org,
            "Lifetime",
            json!([{"amount_type": "fixed", "price_amount": 900, "price_currency": "usd"}]),
        )
        .await;
        (org, id_of(&p["prices"][0]))
    };
    let _ = plain_org;
    let (c, _) = quoted(api, &plain_price, &consumer("US")).await;
    let plain = bought(api, &c, &consumer("US"), "joe@example.com").await;
    let r = app
        .post_json(
            "/v1/refunds/",
            Some(&app.token),
            &json!({"order_id": id_of(&plain), "reason": "customer_request", "amount": 900}),
        )
        .await;
    r.expect(200);
    let r = app
        .get(
            &format!("/v1/refunds/{}/credit-note", id_of(&r.body)),
            Some(&app.token),
        )
        .await;
    assert_eq!(r.expect_error(404), "CreditNoteDoesNotExist");
    let r = app
        .get(
            &format!("/v1/orders/{}/invoice", id_of(&plain)),
            Some(&app.token),
        )
        .await;
    assert_eq!(r.expect_error(404), "InvoiceDoesNotExist");

    // A forged link.
    let forged = format!("{}x", url);
    let resp = client().get(&forged).send().await.unwrap();
    assert_eq!(resp.status(), 403);
}

#[actix_web::test]
async fn invoices_on_request_follow_polars_rules_and_its_denials() {
    let app = spawn_app().await;
    let (user, writer) = app
        .new_user_with_scopes("seller@example.de", Scope::ALL)
        .await;
    let api = Api {
        base: &app.address,
        client: &app.client,
        token: &writer,
    };
    let (_, price) = shop(api, "on-request", "on_request").await;
    let (c, _) = quoted(api, &price, &consumer("FR")).await;
    let o = bought(api, &c, &consumer("FR"), "marie@example.fr").await;
    let id = id_of(&o);
    let path = format!("/v1/orders/{id}");
    assert_eq!(o["is_invoice_generated"], false, "{o}");

    // Not asked for: none.
    let r = app.get(&format!("{path}/invoice"), Some(&writer)).await;
    assert_eq!(r.expect_error(404), "InvoiceDoesNotExist");
    assert_eq!(
        r.body["detail"],
        format!("No invoice exists for order {id}.")
    );
    // The country given at the checkout cannot change.
    let r = app
        .patch_json(
            &path,
            Some(&writer),
            &json!({"billing_address": {"country": "DE"}}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "billing_address", "country"]));
    // Stranger and read-only tokens.
    let (_, stranger) = app
        .new_user_with_scopes("stranger@example.com", Scope::ALL)
        .await;
    let r = app
        .patch_json(&path, Some(&stranger), &json!({"billing_name": "X"}))
        .await;
    r.expect(404);
    let r = app.get(&format!("{path}/invoice"), Some(&stranger)).await;
    r.expect(404);
    let r = app
        .post_json(&format!("{path}/invoice"), Some(&stranger), &json!({}))
        .await;
    r.expect(404);
    let reader = app.issue_token(user, &[Scope::OrdersRead]).await;
    let r = app
        .patch_json(&path, Some(&reader), &json!({"billing_name": "X"}))
        .await;
    r.expect(403);

    // The billing details, then the invoice.
    let r = app
        .patch_json(
            &path,
            Some(&writer),
            &json!({"billing_name": "Marie Curie",
                    "billing_address": {"country": "FR", "line1": "5 rue Cuvier",
                                        "city": "Paris", "postal_code": "75005"}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["billing_name"], "Marie Curie", "{}", r.body);
    assert_eq!(
        r.body["billing_address"]["line1"], "5 rue Cuvier",
        "{}",
        r.body
    );
    let r = app
        .post_json(&format!("{path}/invoice"), Some(&reader), &json!({}))
        .await;
    r.expect(202);
    assert_eq!(r.body, Value::Null);
    let o = invoiced(&app, &writer, &id).await;
    assert_eq!(o["invoice_number"], "ACME-0001", "{o}");
    let r = app.get(&format!("{path}/invoice"), Some(&reader)).await;
    r.expect(200);
    let bytes = pdf(r.body["url"].as_str().unwrap(), "Invoice-ACME-0001.pdf").await;
    if let Some(t) = text(&bytes) {
        contains_all(&t, &["ACME-0001", "Marie Curie", "5 rue Cuvier", "VAT"]);
    }
    let r = app
        .patch_json(&path, Some(&writer), &json!({"billing_name": "Other"}))
        .await;
    assert_eq!(r.expect_error(409), "InvoiceAlreadyIssued");

    // The portal, as the buyer: the same invoice; another customer: 404.
    let session = |customer: String| {
        let app = &app;
        let writer = &writer;
        async move {
            let r = app
                .post_json(
                    "/v1/customer-sessions/",
                    Some(writer),
                    &json!({"customer_id": customer}),
                )
                .await;
            r.expect(201);
            r.body["token"].as_str().unwrap().to_string()
        }
    };
    let buyer = session(o["customer_id"].as_str().unwrap().to_string()).await;
    let portal = format!("/v1/customer-portal/orders/{id}/invoice");
    let r = app.get(&portal, Some(&buyer)).await;
    r.expect(200);
    pdf(r.body["url"].as_str().unwrap(), "Invoice-ACME-0001.pdf").await;
    let r = app
        .patch_json(
            &format!("/v1/customer-portal/orders/{id}"),
            Some(&buyer),
            &json!({"billing_name": "Other"}),
        )
        .await;
    assert_eq!(r.expect_error(409), "InvoiceAlreadyIssued");

    let (c, _) = quoted(api, &price, &consumer("DE")).await;
    let other = bought(api, &c, &consumer("DE"), "hans@example.de").await;
    let other_buyer = session(other["customer_id"].as_str().unwrap().to_string()).await;
    app.get(&portal, Some(&other_buyer)).await.expect(404);
    app.post_json(&portal, Some(&other_buyer), &json!({}))
        .await
        .expect(404);
    // The other buyer sets its own order's billing details and asks for the invoice.
    let own = format!("/v1/customer-portal/orders/{}", id_of(&other));
    let r = app
        .patch_json(
            &own,
            Some(&other_buyer),
            &json!({"billing_name": "Hans Meier",
                    "billing_address": {"country": "DE", "line1": "Hauptstraße 1",
                                        "city": "München", "postal_code": "80331"}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["billing_name"], "Hans Meier", "{}", r.body);
    let r = app
        .post_json(&format!("{own}/invoice"), Some(&other_buyer), &json!({}))
        .await;
    r.expect(202);
    let r = once_there(&app, &format!("{own}/invoice"), &other_buyer).await;
    r.expect(200);
    let bytes = pdf(r.body["url"].as_str().unwrap(), "Invoice-ACME-0002.pdf").await;
    if let Some(t) = text(&bytes) {
        contains_all(&t, &["ACME-0002", "Hans Meier", "München"]);
    }
}
