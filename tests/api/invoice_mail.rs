//! The invoice attached to the receipt (issue 48), end to end: the real server, the test
//! SMTP server of `tests/api/mail.rs` (aiosmtpd; the raw `.eml` kept), an organization
//! that invoices on payment, a purchase with the test processor. The receipt that arrives
//! is `multipart/mixed`: the text and HTML parts name the invoice, and the attached PDF,
//! taken out of the `.eml` with Python's `email` package (as a mail client reads it), reads
//! back with `pdftotext` with the invoice's number and the order's total.
//!
//! The first test writes the invoice as the issuer does (the `Invoice` record and the
//! order's `Issued` state in one batch), so that the mail's side is checked on its own;
//! the second lets the server's issuer do it.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use actix_web::rt::time::sleep;
use serde_json::{json, Value};
use tollgate::domain::ids::OrderId;
use tollgate::domain::invoice::Invoice;
use tollgate::domain::mail::{Attachment, MailState};
use tollgate::domain::order::{InvoiceState, Order};

use crate::checkouts::{id_of, seed, Api, Catalog};
use crate::helpers::{spawn_app_with, TestApp};
use crate::mail::{buy, header, mail_settings, to, SmtpServer};
use crate::tools;

/// The attachments of a raw message, as Python's `email` package reads them: one JSON
/// line per attachment with its content type, file name and bytes (base64).
const ATTACHMENTS: &str = r#"
import base64, email, email.policy, json, sys
msg = email.message_from_bytes(sys.stdin.buffer.read(), policy=email.policy.default)
for part in msg.iter_attachments():
    print(json.dumps({
        "content_type": part.get_content_type(),
        "filename": part.get_filename(),
        "data": base64.b64encode(part.get_payload(decode=True)).decode(),
    }))
"#;

fn attachments_of(eml: &[u8]) -> Vec<Value> {
    let python = tools::python_venv("tests/clients/mail/requirements.txt");
    let mut child = Command::new(python)
        .args(["-c", ATTACHMENTS])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting Python");
    child
        .stdin
        .take()
        .expect("its stdin")
        .write_all(eml)
        .expect("writing the message");
    let out = child.wait_with_output().expect("Python's answer");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("an attachment's JSON"))
        .collect()
}

/// The text of a PDF (`pdftotext - -`).
fn pdf_text(pdf: &[u8]) -> String {
    let mut child = Command::new("pdftotext")
        .args(["-layout", "-enc", "UTF-8", "-", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pdftotext (poppler-utils) is installed");
    child
        .stdin
        .take()
        .expect("its stdin")
        .write_all(pdf)
        .expect("writing the PDF");
    let out = child.wait_with_output().expect("pdftotext's answer");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `$30.00` (the only currency sold).
fn dollars(cents: i64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

/// A server mailing through a fresh SMTP server, and an organization that invoices on
/// payment (a German seller registered for the EU OSS) with its catalog.
async fn invoicing_shop(slug: &str) -> (SmtpServer, TestApp, Catalog) {
    let smtp = SmtpServer::start(0, 0);
    let dir = tempfile::tempdir().expect("creating the data directory");
    let settings = mail_settings(dir.path(), &smtp.url());
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let api = Api::of(&app);
    let cat: Catalog = seed(api, slug).await;
    let r = api
        .patch(
            &format!("/v1/organizations/{}", cat.org),
            Some(api.token),
            &json!({"tax": {
                "country": "DE",
                "tax_id": "DE136695976",
                "registrations": ["eu_oss"],
                "invoice_timing": "on_payment", "invoice_prefix": "ACME",
                "legal_name": "Acme Tools GmbH",
                "address": {
                    "line1": "Unter den Linden 1",
                    "postal_code": "10117",
                    "city": "Berlin",
                    "country": "DE",
                },
            }}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["tax"]["invoice_timing"], "on_payment", "{}", r.body);
    (smtp, app, cat)
}

/// The order of a checkout, as the API answers it.
async fn order_of(api: Api<'_>, checkout: &Value) -> Value {
    let r = api
        .read(&format!("/v1/orders/?checkout_id={}", id_of(checkout)))
        .await;
    r.expect(200);
    let items = r.items();
    assert_eq!(items.len(), 1, "{items:?}");
    items[0].clone()
}

/// The one receipt Ada got: multipart/mixed, naming invoice `number` and the total in
/// both parts, with the invoice's PDF attached that reads back with both; and the outbox
/// holding it once, sent, naming the invoice.
async fn assert_receipt_with_invoice(
    smtp: &SmtpServer,
    app: &TestApp,
    order: OrderId,
    number: &str,
    total: &str,
) {
    use base64::Engine;
    let all = smtp.wait_for(1).await;
    let receipts = to(&all, "ada@example.com");
    assert_eq!(receipts.len(), 1, "{all:#?}");
    let m = receipts[0];
    assert_eq!(m["content_type"], "multipart/mixed", "{m:#}");
    let parts: Vec<&str> = m["parts"]
        .as_array()
        .expect("the parts")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for t in [
        "multipart/alternative",
        "text/plain",
        "text/html",
        "application/pdf",
    ] {
        assert!(parts.contains(&t), "{t} missing: {parts:?}");
    }
    assert!(
        header(m, "Subject").starts_with("Your receipt from"),
        "{m:#}"
    );
    for part in ["text", "html"] {
        let body = m[part].as_str().expect("the part");
        assert!(body.contains(&format!("Invoice {number}")), "{body}");
        assert!(body.contains(total), "{total} missing: {body}");
    }

    // The attachment, as a mail client reads it: the invoice's PDF.
    let files = attachments_of(&smtp.eml(m["n"].as_u64().expect("its number")));
    assert_eq!(files.len(), 1, "{files:#?}");
    assert_eq!(files[0]["content_type"], "application/pdf");
    assert_eq!(files[0]["filename"], format!("Invoice-{number}.pdf"));
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(files[0]["data"].as_str().expect("the bytes"))
        .expect("base64");
    assert!(pdf.starts_with(b"%PDF-"));
    let text = pdf_text(&pdf);
    assert!(text.contains(number), "{number} missing:\n{text}");
    assert!(text.contains(total), "{total} missing:\n{text}");
    assert!(text.contains("Acme Tools GmbH"), "{text}");

    // The outbox: one message of the order, sent, naming the invoice.
    let outbox = tollgate::app::mail::messages_of_order(&app.state, order)
        .await
        .expect("reading the outbox");
    assert_eq!(outbox.len(), 1, "{outbox:#?}");
    assert_eq!(outbox[0].state, MailState::Sent);
    assert_eq!(
        outbox[0].attachments,
        vec![Attachment::Invoice(Invoice::id_for_order(order))]
    );
    // Nothing more comes (no second receipt).
    sleep(Duration::from_millis(500)).await;
    assert_eq!(smtp.messages().len(), 1);
}

#[actix_web::test]
async fn a_credit_note_is_mailed_to_the_buyer_with_the_note_attached() {
    use base64::Engine;
    let (smtp, app, cat) = invoicing_shop("invoice-mail-credit").await;
    let api = Api::of(&app);
    let checkout = buy(api, &cat.ebook_price, "ada@example.com", None).await;
    let order = order_of(api, &checkout).await;
    let id = OrderId(uuid::Uuid::parse_str(&id_of(&order)).expect("an order id"));
    smtp.wait_for(1).await;
    let o = app
        .state
        .store
        .get::<Order>(&id.key())
        .await
        .expect("reading the order")
        .expect("the order")
        .value;
    assert_eq!(
        o.invoice,
        InvoiceState::Issued {
            number: "ACME-0001".into(),
            seq: 1
        }
    );
    // A refund of all of it: the issuer writes its credit note, which is mailed.
    let r = app
        .post_json(
            "/v1/refunds/",
            Some(&app.token),
            &serde_json::json!({"order_id": id_of(&order), "reason": "customer_request",
                                "amount": o.amount}),
        )
        .await;
    r.expect(200);
    // The refund's own e-mail goes too, in either order: the credit note is the message
    // with its subject.
    let mut all = smtp.wait_for(2).await;
    let m = loop {
        if let Some(m) = all
            .iter()
            .find(|m| header(m, "Subject").starts_with("Credit note"))
        {
            break m.clone();
        }
        all = smtp.wait_for(all.len() + 1).await;
    };
    let m = &m;
    assert_eq!(header(m, "To"), "ada@example.com");
    assert_eq!(
        header(m, "Subject"),
        "Credit note ACME-CN-0001 for invoice ACME-0001"
    );
    assert_eq!(m["content_type"], "multipart/mixed", "{m:#}");
    let total = dollars(o.amount + o.tax_amount);
    for part in ["text", "html"] {
        let body = m[part].as_str().expect("the part");
        assert!(body.contains("Total refunded"), "{body}");
        assert!(body.contains(&total), "{total} missing: {body}");
    }
    let files = attachments_of(&smtp.eml(m["n"].as_u64().expect("its number")));
    assert_eq!(files.len(), 1, "{files:#?}");
    assert_eq!(files[0]["content_type"], "application/pdf");
    assert_eq!(files[0]["filename"], "CreditNote-ACME-CN-0001.pdf");
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(files[0]["data"].as_str().expect("the bytes"))
        .expect("base64");
    let text = pdf_text(&pdf);
    for needle in ["ACME-CN-0001", "ACME-0001", total.as_str()] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
}

#[actix_web::test]
async fn a_paid_order_s_receipt_arrives_once_with_its_invoice_attached() {
    let (smtp, app, cat) = invoicing_shop("invoice-mail").await;
    let api = Api::of(&app);
    let checkout = buy(api, &cat.ebook_price, "ada@example.com", None).await;
    let all = smtp.wait_for(1).await;
    assert_eq!(to(&all, "ada@example.com").len(), 1, "{all:#?}");
    // The order, issued by the server: its number is the one the mail and the PDF print.
    let order = order_of(api, &checkout).await;
    assert_eq!(order["is_invoice_generated"], true, "{order:#}");
    let number = order["invoice_number"]
        .as_str()
        .expect("an invoice number")
        .to_string();
    let total = dollars(order["total_amount"].as_i64().expect("a total"));
    let id = OrderId(uuid::Uuid::parse_str(&id_of(&order)).expect("an order id"));
    assert_receipt_with_invoice(&smtp, &app, id, &number, &total).await;
}
