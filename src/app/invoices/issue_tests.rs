use chrono::Duration;
use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::testing::{app, paid_order, seller};
use crate::domain::invoice::InvoiceKind;
use crate::domain::refund::RefundReason;
use crate::domain::tax_settings::{InvoiceTiming, TaxProvider};

async fn invoicing_on_payment(state: &AppState, org: OrganizationId) {
    state
        .store
        .update::<Organization, ()>(&org.key(), async |o: &Organization| {
            let mut o = o.clone();
            o.tax.country = Some("DE".into());
            o.tax.provider = TaxProvider::Builtin;
            o.tax.invoice_timing = InvoiceTiming::OnPayment;
            o.tax.invoice_prefix = Some("ACME".into());
            Ok(Some(o))
        })
        .await
        .expect("organization updated");
}

async fn order(state: &AppState, id: OrderId) -> Order {
    state
        .store
        .get::<Order>(&id.key())
        .await
        .expect("read")
        .expect("the order")
        .value
}

/// Passes until nothing is due (bounded).
async fn drain(state: &AppState) {
    for _ in 0..50 {
        if state
            .store
            .scan::<DocumentDue>()
            .await
            .expect("read")
            .is_empty()
        {
            return;
        }
        let _ = pass(state).await;
    }
    panic!("documents still due after 50 passes");
}

fn issued_number(o: &Order) -> Option<(String, u64)> {
    match &o.invoice {
        InvoiceState::Issued { number, seq } => Some((number.clone(), *seq)),
        _ => None,
    }
}

async fn refund(state: &AppState, o: &Order, amount: i64, tax: i64) -> Refund {
    let r = Refund {
        id: crate::domain::ids::RefundId::new(),
        organization_id: o.organization_id,
        created_at: state.now(),
        modified_at: None,
        status: RefundStatus::Succeeded,
        reason: RefundReason::CustomerRequest,
        amount,
        tax_amount: tax,
        currency: o.currency.clone(),
        order_id: o.id,
        subscription_id: None,
        customer_id: o.customer_id,
        revoke_benefits: false,
        comment: None,
        metadata: Default::default(),
        processor_id: None,
        failure: None,
    };
    let mut batch = Batch::new();
    batch.put(&r, Expect::Absent).expect("refund");
    state.store.commit_durable(&batch).await.expect("stored");
    r
}

#[actix_web::test]
async fn asked_invoices_are_numbered_in_the_order_they_were_asked() {
    let app = app().await;
    let (org, _) = seller(&app).await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let o = paid_order(&app, org, 1000 + n, 0, &format!("pi_{n}")).await;
        request(&app, &o).await.expect("asked");
        app.clock.advance(Duration::seconds(1));
        ids.push(o.id);
    }
    drain(&app).await;
    let prefix = {
        let o = app
            .store
            .get::<Organization>(&org.key())
            .await
            .unwrap()
            .unwrap()
            .value;
        o.slug.to_ascii_uppercase()
    };
    for (n, id) in ids.iter().enumerate() {
        let o = order(&app, *id).await;
        let seq = n as u64 + 1;
        assert_eq!(issued_number(&o), Some((format!("{prefix}-{seq:04}"), seq)));
        let invoice = app
            .store
            .get::<Invoice>(&Invoice::id_for_order(*id).key())
            .await
            .unwrap()
            .expect("the invoice")
            .value;
        assert_eq!((invoice.seq, invoice.net), (seq, 1000 + n as i64));
    }
    let sequence = app
        .store
        .get::<DocumentSequence>(&DocumentSequence::id_for(org, DocumentKind::Invoice).key())
        .await
        .unwrap()
        .expect("the sequence")
        .value;
    assert_eq!(sequence.last, 3);
    // Asking again changes nothing.
    let first = order(&app, ids[0]).await;
    request(&app, &first).await.expect("asked again");
    drain(&app).await;
    assert_eq!(
        issued_number(&order(&app, ids[0]).await).map(|n| n.1),
        Some(1)
    );
}

#[actix_web::test]
async fn issuers_racing_draw_every_number_once() {
    let app = app().await;
    let (org, _) = seller(&app).await;
    let mut ids = Vec::new();
    for n in 0..24 {
        let o = paid_order(&app, org, 500, 0, &format!("pi_{n}")).await;
        request(&app, &o).await.expect("asked");
        ids.push(o.id);
    }
    // Three passes at once (and the server's own issuer): every batch but one per round
    // loses on the sequence's revision and writes nothing.
    for _ in 0..30 {
        if app.store.scan::<DocumentDue>().await.unwrap().is_empty() {
            break;
        }
        let _ = futures_util::future::join3(pass(&app), pass(&app), pass(&app)).await;
    }
    let mut seqs = Vec::new();
    for id in &ids {
        seqs.push(issued_number(&order(&app, *id).await).expect("issued").1);
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=24).collect::<Vec<u64>>());
}

#[actix_web::test]
async fn refunds_get_credit_notes_in_their_own_sequence() {
    let app = app().await;
    let (org, _) = seller(&app).await;
    invoicing_on_payment(&app, org).await;
    let o = paid_order(&app, org, 1000, 0, "pi_1").await;
    // Refunded before its invoice: the credit note is due with the invoice.
    let early = refund(&app, &o, 200, 0).await;
    request(&app, &o).await.expect("asked");
    drain(&app).await;
    assert_eq!(
        issued_number(&order(&app, o.id).await),
        Some(("ACME-0001".into(), 1))
    );
    let note = |id| {
        let store = app.store.clone();
        async move {
            store
                .get::<Invoice>(&Invoice::id_for_refund(id).key())
                .await
                .unwrap()
                .map(|i| i.value)
        }
    };
    let first = note(early.id)
        .await
        .expect("the early refund's credit note");
    assert_eq!(first.number, "ACME-CN-0001");
    assert_eq!(
        first.kind,
        InvoiceKind::CreditNote {
            refund_id: early.id,
            invoice_number: "ACME-0001".into()
        }
    );
    assert_eq!(first.total, -200);
    // Refunded after: the fan-out queues it.
    let late = refund(&app, &o, 300, 0).await;
    for _ in 0..100 {
        if note(late.id).await.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let second = note(late.id).await.expect("the later refund's credit note");
    assert_eq!(
        (second.number.as_str(), second.total),
        ("ACME-CN-0002", -300)
    );
}

#[actix_web::test]
async fn an_organization_invoicing_on_payment_invoices_each_paid_order() {
    let app = app().await;
    let (org, _) = seller(&app).await;
    let (other, _) = seller(&app).await;
    invoicing_on_payment(&app, org).await;
    let invoiced = paid_order(&app, org, 1000, 0, "pi_1").await;
    let not = paid_order(&app, other, 1000, 0, "pi_2").await;
    for _ in 0..100 {
        if issued_number(&order(&app, invoiced.id).await).is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        issued_number(&order(&app, invoiced.id).await),
        Some(("ACME-0001".into(), 1))
    );
    drain(&app).await;
    assert_eq!(order(&app, not.id).await.invoice, InvoiceState::None);
    // A refund of an order without an invoice queues nothing.
    refund(&app, &not, 100, 0).await;
    for _ in 0..100 {
        crate::webhooks::dispatch::pass(&app)
            .await
            .expect("fan-out");
        if app.store.pending_changes().await.unwrap() == 0 {
            break;
        }
    }
    assert!(app.store.scan::<DocumentDue>().await.unwrap().is_empty());
}
