//! The decisions of the documents' e-mails, run on the records a feed entry carries: an
//! order paid, an invoice or a credit note created.

use super::*;
use crate::app::mail::attachment_name;
use crate::app::testing;
use crate::domain::customer::{Address, Customer};
use crate::domain::ids::{CustomerId, OrganizationId, PriceId, ProductId, RefundId};
use crate::domain::invoice::{BillTo, InvoiceLine, Seller};
use crate::domain::mail::MailMessage;
use crate::domain::order::{BillingReason, OrderStatus};
use crate::domain::organization::Organization;
use crate::domain::product::{Price, PriceKind, Product};
use crate::domain::tax_breakdown::{TaxBreakdown, TaxabilityReason};
use crate::domain::tax_settings::{InvoiceTiming, TaxProvider, TaxSettings};
use tollgate_actors::tax::Regime;
use tollgate_storage::{Batch, Expect, Record};

async fn put<R: Record>(state: &AppState, r: &R) {
    let mut batch = Batch::new();
    batch.put(r, Expect::Any).expect("a record");
    state.store.commit_durable(&batch).await.expect("stored");
}

/// A German seller's invoice (`kind` Invoice) or credit note of `order`: €20.00 + VAT 19%.
pub(crate) fn document(order: &Order, kind: InvoiceKind, number: &str) -> Invoice {
    let sign = if matches!(kind, InvoiceKind::Invoice) {
        1
    } else {
        -1
    };
    let id = match &kind {
        InvoiceKind::Invoice => Invoice::id_for_order(order.id),
        InvoiceKind::CreditNote { refund_id, .. } => Invoice::id_for_refund(*refund_id),
    };
    let address = Address {
        line1: Some("Unter den Linden 1".into()),
        line2: None,
        postal_code: Some("10117".into()),
        city: Some("Berlin".into()),
        state: None,
        country: "DE".into(),
    };
    Invoice {
        id,
        organization_id: order.organization_id,
        order_id: order.id,
        kind,
        number: number.into(),
        seq: 1,
        issued_at: order.created_at,
        supplied_at: order.created_at,
        seller: Seller {
            legal_name: "Acme Tools GmbH".into(),
            address: address.clone(),
            tax_id: Some("DE136695976".into()),
        },
        buyer: BillTo {
            name: "Ada Lovelace".into(),
            address: Some(address),
            tax_id: None,
            email: order.customer_email.clone(),
        },
        lines: vec![InvoiceLine {
            description: order.product_name.clone(),
            quantity: 1,
            unit_amount: sign * 2000,
            amount: sign * 2000,
            tax_amount: sign * 380,
            period: None,
        }],
        subtotal: sign * 2000,
        discount: 0,
        net: sign * 2000,
        tax_breakdown: vec![TaxBreakdown {
            country: "DE".into(),
            subdivision: None,
            name: "VAT".into(),
            rate_ppm: 190_000,
            taxable_amount: sign * 2000,
            amount: sign * 380,
            reason: TaxabilityReason::StandardRated,
            regime: Regime::Domestic,
        }],
        total: sign * 2380,
        currency: "eur".into(),
        behavior: tollgate_actors::tax::TaxBehavior::Exclusive,
        mentions: Vec::new(),
    }
}

struct Shop {
    org: OrganizationId,
    ada: Customer,
    order: Order,
}

/// An organization (invoicing on payment or not; asking for copies of orders) with Ada's
/// paid order of Pro (€20.00 + €3.80 VAT).
async fn shop(state: &AppState, invoicing: bool) -> Shop {
    let (org, _) = testing::seller(state).await;
    let mut o = state
        .store
        .get::<Organization>(&org.key())
        .await
        .expect("read")
        .expect("the organization")
        .value;
    o.email = Some("shop@example.com".into());
    o.notification_settings.new_order = true;
    if invoicing {
        o.tax = TaxSettings {
            country: Some("DE".into()),
            provider: TaxProvider::Builtin,
            invoice_timing: InvoiceTiming::OnPayment,
            ..TaxSettings::none()
        };
    }
    put(state, &o).await;
    let ada = Customer::new(
        CustomerId::new(),
        org,
        "ada@example.com".into(),
        state.now(),
    );
    put(state, &ada).await;
    let now = state.now();
    let product = Product {
        id: ProductId::new(),
        organization_id: org,
        created_at: now,
        modified_at: None,
        name: "Pro".into(),
        description: None,
        is_recurring: false,
        is_archived: false,
        is_tax_applicable: true,
        metadata: Default::default(),
        prices: vec![Price {
            id: PriceId::new(),
            created_at: now,
            modified_at: None,
            is_archived: false,
            kind: PriceKind::OneTimeFixed {
                currency: "eur".into(),
                amount: 2000,
            },
        }],
        benefit_ids: Vec::new(),
        media_ids: Vec::new(),
        attached_custom_fields: Vec::new(),
        recurring_interval_count: 1,
        trial: None,
        price_tax_behavior: Vec::new(),
        free_price_currency: Vec::new(),
    };
    put(state, &product).await;
    let mut order = testing::paid_order(state, org, 2000, 380, "pi_invoice_mail").await;
    order.customer_id = ada.id;
    order.customer_email = ada.email.clone();
    order.product_id = product.id;
    order.product_price_id = product.prices[0].id;
    order.currency = "eur".into();
    put(state, &order).await;
    Shop { org, ada, order }
}

fn kinds(messages: &[MailMessage]) -> Vec<MailKind> {
    messages.iter().map(|m| m.kind).collect()
}

#[actix_web::test]
async fn an_organization_invoicing_on_payment_sends_the_receipt_with_the_invoice_once() {
    let app = testing::app().await;
    let shop = shop(&app, true).await;
    // The order paid: the seller's copy goes, the receipt waits for the invoice.
    let paid = order_paid_messages(&app, None, &shop.order).await.unwrap();
    assert_eq!(kinds(&paid), vec![MailKind::SellerOrderCopy]);
    assert_eq!(paid[0].to, "shop@example.com");
    // A pending order paid later, the same.
    let pending = Order {
        status: OrderStatus::Pending,
        ..shop.order.clone()
    };
    let later = order_paid_messages(&app, Some(&pending), &shop.order)
        .await
        .unwrap();
    assert_eq!(kinds(&later), vec![MailKind::SellerOrderCopy]);
    // The invoice created: the receipt, with its number and the PDF, under the id the
    // receipt at payment has (a receipt already told is not told again).
    let invoice = document(&shop.order, InvoiceKind::Invoice, "ACME-0001");
    put(&app, &invoice).await;
    let told = invoice_messages(&app, &invoice).await.unwrap();
    assert_eq!(kinds(&told), vec![MailKind::OrderReceipt]);
    let m = &told[0];
    let (customer, to) = recipient(&app, shop.order.customer_id, &shop.order.customer_email)
        .await
        .unwrap();
    let at_payment = receipt_with(&app, &shop.order, &to, customer.as_ref(), None)
        .await
        .unwrap();
    assert_eq!(
        m.id, at_payment.id,
        "the same message as the receipt at payment"
    );
    assert!(at_payment.attachments.is_empty());
    assert_eq!(m.to, shop.ada.email);
    assert_eq!(m.organization_id, shop.org);
    assert_eq!(m.order_id, Some(shop.order.id));
    assert_eq!(m.customer_id, Some(shop.ada.id));
    assert_eq!(m.attachments, vec![Attachment::Invoice(invoice.id)]);
    assert_eq!(m.subject, at_payment.subject);
    for part in [&m.text, &m.html] {
        for needle in [
            "Invoice",
            "ACME-0001",
            "Invoice-ACME-0001.pdf",
            "€23.80",
            "Pro",
        ] {
            assert!(part.contains(needle), "{needle} missing in\n{part}");
        }
    }
    // Everything the receipt at payment says, it says too.
    for line in at_payment.text.lines().filter(|l| !l.trim().is_empty()) {
        assert!(m.text.contains(line), "{line:?} missing in\n{}", m.text);
    }
    // Once stored (the fan-out writes it), the entry replayed decides nothing new: the
    // fan-out keeps only messages not stored.
    put(&app, m).await;
    assert!(app
        .store
        .get::<MailMessage>(&m.id.key())
        .await
        .unwrap()
        .is_some());
    // "Send the receipt again" sends it with the invoice too.
    let again = crate::app::mail::receipt(&app, &shop.order, &to, customer.as_ref())
        .await
        .unwrap();
    assert_eq!(again.attachments, vec![Attachment::Invoice(invoice.id)]);
}

#[actix_web::test]
async fn a_renewal_s_receipt_waits_for_its_invoice_too() {
    let app = testing::app().await;
    let shop = shop(&app, true).await;
    let mut renewal = shop.order.clone();
    renewal.billing_reason = BillingReason::SubscriptionCycle;
    put(&app, &renewal).await;
    let paid = order_paid_messages(&app, None, &renewal).await.unwrap();
    assert!(
        !kinds(&paid).contains(&MailKind::RenewalReceipt),
        "{paid:?}"
    );
    let invoice = document(&renewal, InvoiceKind::Invoice, "ACME-0002");
    put(&app, &invoice).await;
    let told = invoice_messages(&app, &invoice).await.unwrap();
    assert_eq!(kinds(&told), vec![MailKind::RenewalReceipt]);
    assert_eq!(told[0].attachments, vec![Attachment::Invoice(invoice.id)]);
    assert!(
        told[0].text.contains("Invoice ACME-0002"),
        "{}",
        told[0].text
    );
}

#[actix_web::test]
async fn other_organizations_keep_the_receipt_at_payment_and_an_invoice_asked_for_is_not_mailed() {
    let app = testing::app().await;
    let shop = shop(&app, false).await;
    let paid = order_paid_messages(&app, None, &shop.order).await.unwrap();
    assert_eq!(
        kinds(&paid),
        vec![MailKind::OrderReceipt, MailKind::SellerOrderCopy]
    );
    assert!(paid[0].attachments.is_empty());
    assert!(!paid[0].text.contains("Invoice"), "{}", paid[0].text);
    // Told once: a later write of the paid order decides nothing.
    let again = order_paid_messages(&app, Some(&shop.order), &shop.order)
        .await
        .unwrap();
    assert!(again.is_empty());
    // An invoice issued on request later is not a second receipt.
    let invoice = document(&shop.order, InvoiceKind::Invoice, "ACME-0001");
    put(&app, &invoice).await;
    assert!(invoice_messages(&app, &invoice).await.unwrap().is_empty());
    // A pending order written is not paid: nothing yet.
    let pending = Order {
        status: OrderStatus::Pending,
        ..shop.order.clone()
    };
    assert!(order_paid_messages(&app, None, &pending)
        .await
        .unwrap()
        .is_empty());
}

#[actix_web::test]
async fn a_credit_note_is_mailed_to_the_buyer_with_what_it_gives_back_and_the_note() {
    let app = testing::app().await;
    // Whatever the timing: an organization that invoices on request mails its notes too.
    for invoicing in [true, false] {
        let shop = shop(&app, invoicing).await;
        let refund = RefundId::new();
        let note = document(
            &shop.order,
            InvoiceKind::CreditNote {
                refund_id: refund,
                invoice_number: "ACME-0001".into(),
            },
            "ACME-CN-0001",
        );
        put(&app, &note).await;
        let told = invoice_messages(&app, &note).await.unwrap();
        assert_eq!(kinds(&told), vec![MailKind::CreditNote]);
        let m = &told[0];
        assert_eq!(m.subject, "Credit note ACME-CN-0001 for invoice ACME-0001");
        assert_eq!(m.to, shop.ada.email);
        assert_eq!(m.organization_id, shop.org);
        assert_eq!(m.order_id, Some(shop.order.id));
        assert_eq!(m.attachments, vec![Attachment::Invoice(note.id)]);
        assert_eq!(m.id.0, derived_uuid(note.id.0, "mail:credit_note"));
        for part in [&m.text, &m.html] {
            for needle in [
                "ACME-CN-0001",
                "ACME-0001",
                "€20.00",
                "VAT 19%",
                "€3.80",
                "Total refunded",
                "€23.80",
                "CreditNote-ACME-CN-0001.pdf",
            ] {
                assert!(part.contains(needle), "{needle} missing in\n{part}");
            }
            assert!(
                !part.contains("-€"),
                "amounts given back read positive: {part}"
            );
        }
    }
}

#[actix_web::test]
async fn a_document_of_another_organization_s_order_or_no_order_tells_nothing() {
    let app = testing::app().await;
    let shop = shop(&app, true).await;
    let (other, _) = testing::seller(&app).await;
    let mut invoice = document(&shop.order, InvoiceKind::Invoice, "X-0001");
    invoice.organization_id = other;
    assert!(invoice_messages(&app, &invoice).await.unwrap().is_empty());
    let mut orphan = document(&shop.order, InvoiceKind::Invoice, "ACME-0001");
    orphan.order_id = crate::domain::ids::OrderId::new();
    assert!(invoice_messages(&app, &orphan).await.unwrap().is_empty());
}

#[test]
fn attachments_are_named_after_the_document() {
    let order_id = crate::domain::ids::OrderId::new();
    let order = Order {
        id: order_id,
        ..sample_order()
    };
    assert_eq!(
        attachment_name(&document(&order, InvoiceKind::Invoice, "ACME-0001")),
        "Invoice-ACME-0001.pdf"
    );
    let note = document(
        &order,
        InvoiceKind::CreditNote {
            refund_id: RefundId::new(),
            invoice_number: "ACME-0001".into(),
        },
        "ACME-CN-0001",
    );
    assert_eq!(attachment_name(&note), "CreditNote-ACME-CN-0001.pdf");
}

/// An order for the pure tests (never stored).
fn sample_order() -> Order {
    let customer = crate::api::subscription::sample_customer();
    let sub = &crate::api::subscription::sample_subscriptions()[0];
    Order {
        id: crate::domain::ids::OrderId::new(),
        organization_id: OrganizationId::new(),
        created_at: chrono::Utc::now(),
        modified_at: None,
        status: OrderStatus::Paid,
        amount: 2000,
        tax_amount: 380,
        refunded_amount: 0,
        refunded_tax_amount: 0,
        currency: "eur".into(),
        billing_reason: BillingReason::Purchase,
        billing_address: None,
        customer_id: customer.id,
        product_id: sub.product_id,
        product_price_id: sub.price_id,
        recurring: false,
        discount_id: None,
        subscription_id: None,
        checkout_id: None,
        metadata: Default::default(),
        custom_field_data: Default::default(),
        customer_email: customer.email,
        product_name: "Pro".into(),
        discount_name: None,
        payment_id: None,
        refund_pending_amount: 0,
        refund_pending_tax_amount: 0,
        seats: None,
        next_payment_attempt_at: None,
        last_payment: None,
        tax: crate::domain::order::OrderTax::default(),
        invoice: crate::domain::order::InvoiceState::None,
        usage_lines: Vec::new(),
    }
}
