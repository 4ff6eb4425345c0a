use chrono::Duration;

use super::*;
use crate::app::testing::{app, paid_order, seller};
use crate::domain::customer::Address;
use crate::domain::order::OrderStatus;

fn address(country: &str, state: Option<&str>) -> Address {
    Address {
        line1: Some("1 Main St".into()),
        line2: None,
        postal_code: Some("10115".into()),
        city: Some("Berlin".into()),
        state: state.map(str::to_string),
        country: country.into(),
    }
}

fn codes(e: &AppError) -> Vec<String> {
    match e {
        AppError::Invalid(items) => items.iter().map(|i| i.msg.clone()).collect(),
        other => vec![other.code().name().to_string()],
    }
}

#[actix_web::test]
async fn billing_details_change_until_the_invoice_is_issued() {
    let app = app().await;
    let (org, _) = seller(&app).await;
    let o = paid_order(&app, org, 1000, 0, "pi_1").await;
    let now = app.now();
    // No address yet: any address; an explicit null clears a name.
    let set = BillingUpdate {
        billing_name: Some(Some("Acme SAS".into())),
        billing_address: Some(Some(address("DE", None))),
    };
    let next = decide_billing(&o, &set, now).unwrap().expect("a change");
    assert_eq!(next.tax.billing_name.as_deref(), Some("Acme SAS"));
    assert_eq!(next.modified_at, Some(now));
    assert_eq!(
        decide_billing(&next, &set, now).unwrap(),
        None,
        "nothing to change"
    );
    let cleared = BillingUpdate {
        billing_name: Some(None),
        ..BillingUpdate::default()
    };
    assert_eq!(
        decide_billing(&next, &cleared, now)
            .unwrap()
            .unwrap()
            .tax
            .billing_name,
        None
    );
    // An address set before keeps its country and state.
    let moved = BillingUpdate {
        billing_address: Some(Some(address("FR", Some("X")))),
        ..BillingUpdate::default()
    };
    let e = decide_billing(&next, &moved, now).unwrap_err();
    assert_eq!(
        codes(&e),
        ["Country cannot be changed", "State cannot be changed"]
    );
    // The same country, another street: fine.
    let street = BillingUpdate {
        billing_address: Some(Some(Address {
            line1: Some("2 Other St".into()),
            ..address("DE", None)
        })),
        ..BillingUpdate::default()
    };
    assert!(decide_billing(&next, &street, now).unwrap().is_some());
    // Issued: refused.
    let mut issued = next.clone();
    issued.invoice = InvoiceState::Issued {
        number: "A-0001".into(),
        seq: 1,
    };
    assert_eq!(
        codes(&decide_billing(&issued, &street, now).unwrap_err()),
        ["InvoiceAlreadyIssued"]
    );

    // Through the store: the order as written.
    let stored = update_billing(&app, o.id, set).await.expect("updated");
    assert_eq!(stored.billing_address, Some(address("DE", None)));
    let e = update_billing(
        &app,
        crate::domain::ids::OrderId::new(),
        BillingUpdate::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
}

#[actix_web::test]
async fn an_invoice_needs_a_paid_order_with_billing_details() {
    let app = app().await;
    let (org, _) = seller(&app).await;
    let o = paid_order(&app, org, 1000, 0, "pi_1").await;
    let mut pending = o.clone();
    pending.status = OrderStatus::Pending;
    let e = request_invoice(&app, &pending).await.unwrap_err();
    assert_eq!(e.code(), Code::OrderNotEligibleForInvoice);
    assert!(
        e.detail().contains("current status: pending"),
        "{}",
        e.detail()
    );
    // Neither a billing name (the customer is not stored: no name) nor an address; then a
    // name alone.
    let e = request_invoice(&app, &o).await.unwrap_err();
    assert_eq!(e.code(), Code::MissingInvoiceBillingDetails);
    let named = update_billing(
        &app,
        o.id,
        BillingUpdate {
            billing_name: Some(Some("Jo Doe".into())),
            ..BillingUpdate::default()
        },
    )
    .await
    .unwrap();
    let e = request_invoice(&app, &named).await.unwrap_err();
    assert_eq!(e.code(), Code::MissingInvoiceBillingDetails);
    let e = invoice_link(&app, &o).await.unwrap_err();
    assert_eq!(e.code(), Code::InvoiceDoesNotExist);
    assert_eq!(e.detail(), format!("No invoice exists for order {}.", o.id));

    let o = update_billing(
        &app,
        o.id,
        BillingUpdate {
            billing_address: Some(Some(address("DE", None))),
            ..BillingUpdate::default()
        },
    )
    .await
    .unwrap();
    request_invoice(&app, &o).await.expect("asked");
    let mut issued = None;
    for _ in 0..100 {
        let current = app
            .store
            .get::<Order>(&o.id.key())
            .await
            .unwrap()
            .unwrap()
            .value;
        if matches!(current.invoice, InvoiceState::Issued { .. }) {
            issued = Some(current);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let issued = issued.expect("issued by the issuer");
    let url = invoice_link(&app, &issued).await.expect("a link");
    assert!(url.contains(&format!(
        "/v1/invoices/{}.pdf?expires=",
        Invoice::id_for_order(o.id)
    )));
}

#[actix_web::test]
async fn links_are_signed_for_one_document_and_expire() {
    let app = app().await;
    let id = InvoiceId::new();
    let url = link::link(&app, id);
    let query = url.split_once('?').unwrap().1;
    let mut expires = 0;
    let mut signature = String::new();
    for pair in query.split('&') {
        match pair.split_once('=').unwrap() {
            ("expires", v) => expires = v.parse().unwrap(),
            ("signature", v) => signature = v.to_string(),
            _ => {}
        }
    }
    assert_eq!(
        link::check(&app, id, expires, &signature),
        link::Checked::Good
    );
    assert_eq!(
        link::check(&app, InvoiceId::new(), expires, &signature),
        link::Checked::Forged
    );
    assert_eq!(
        link::check(&app, id, expires + 1, &signature),
        link::Checked::Forged
    );
    // No such document: 404 behind a good link.
    let e = pdf(&app, id, expires, &signature).await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    let e = pdf(&app, id, expires, "forged").await.unwrap_err();
    assert_eq!(e.code(), Code::NotPermitted);
    app.clock.advance(Duration::seconds(601));
    assert_eq!(
        link::check(&app, id, expires, &signature),
        link::Checked::Expired
    );
    let e = pdf(&app, id, expires, &signature).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceUnavailable);
}
