use chrono::TimeZone;
use tollgate_actors::tax::Regime;

use super::*;
use crate::domain::customer::TaxId;
use crate::domain::ids::{CustomerId, OrderId, OrganizationId, PriceId, ProductId, RefundId};
use crate::domain::invoice::REVERSE_CHARGE_EU;
use crate::domain::order::{BillingReason, InvoiceState, OrderStatus, OrderTax};
use crate::domain::product::PriceKind;
use crate::domain::refund::{RefundReason, RefundStatus};
use crate::domain::tax_breakdown::{TaxBreakdown, TaxabilityReason};
use crate::domain::tax_settings::{TaxProvider, TaxSettings};

fn at(d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, d, 9, 0, 0).unwrap()
}

fn fr(line1: &str) -> Address {
    Address {
        line1: Some(line1.into()),
        line2: None,
        postal_code: Some("75001".into()),
        city: Some("Paris".into()),
        state: None,
        country: "FR".into(),
    }
}

fn org() -> Organization {
    let mut o = Organization::new(OrganizationId::new(), "Acme".into(), "acme".into(), at(1));
    o.tax = TaxSettings {
        country: Some("DE".into()),
        provider: TaxProvider::Builtin,
        legal_name: Some("Acme GmbH".into()),
        ..TaxSettings::none()
    };
    o
}

fn line(reason: TaxabilityReason, taxable: i64, amount: i64) -> TaxBreakdown {
    TaxBreakdown {
        country: "FR".into(),
        subdivision: None,
        name: "VAT".into(),
        rate_ppm: if amount == 0 { 0 } else { 200_000 },
        taxable_amount: taxable,
        amount,
        reason,
        regime: Regime::EuOss,
    }
}

fn order(amount: i64, tax: i64, behavior: TaxBehavior) -> Order {
    Order {
        id: OrderId::new(),
        organization_id: OrganizationId::new(),
        created_at: at(2),
        modified_at: None,
        status: OrderStatus::Paid,
        amount,
        tax_amount: tax,
        refunded_amount: 0,
        refunded_tax_amount: 0,
        currency: "usd".into(),
        billing_reason: BillingReason::Purchase,
        billing_address: Some(fr("1 rue de Rivoli")),
        customer_id: CustomerId::new(),
        product_id: ProductId::new(),
        product_price_id: PriceId::new(),
        recurring: false,
        discount_id: None,
        subscription_id: None,
        checkout_id: None,
        metadata: Default::default(),
        custom_field_data: Default::default(),
        customer_email: "jo@example.com".into(),
        product_name: "Pro".into(),
        discount_name: None,
        payment_id: None,
        refund_pending_amount: 0,
        refund_pending_tax_amount: 0,
        seats: None,
        next_payment_attempt_at: None,
        last_payment: None,
        tax: OrderTax {
            behavior,
            breakdown: vec![line(TaxabilityReason::StandardRated, amount, tax)],
            ..OrderTax::default()
        },
        invoice: InvoiceState::None,
        usage_lines: Vec::new(),
    }
}

fn price(amount: i64) -> Price {
    Price {
        id: PriceId::new(),
        created_at: at(1),
        modified_at: None,
        is_archived: false,
        kind: PriceKind::OneTimeFixed {
            amount,
            currency: "usd".into(),
        },
    }
}

#[test]
fn an_invoice_prints_the_order_as_sold() {
    let org = org();
    let o = order(1000, 200, TaxBehavior::Exclusive);
    let i = invoice(
        &org,
        &o,
        None,
        None,
        None,
        number(&org, DocumentKind::Invoice, 7),
        7,
        at(3),
    );
    assert_eq!(i.id, Invoice::id_for_order(o.id));
    assert_eq!((i.number.as_str(), i.seq), ("ACME-0007", 7));
    assert_eq!((i.issued_at, i.supplied_at), (at(3), at(2)));
    assert_eq!(i.seller.legal_name, "Acme GmbH");
    assert_eq!(i.seller.address.country, "DE");
    // No billing name, no customer: the e-mail address is who is billed.
    assert_eq!(i.buyer.name, "jo@example.com");
    assert_eq!(i.buyer.address, o.billing_address);
    assert_eq!(
        (i.subtotal, i.discount, i.net, i.tax(), i.total),
        (1000, 0, 1000, 200, 1200)
    );
    assert_eq!(i.lines.len(), 1);
    assert_eq!(
        (
            i.lines[0].quantity,
            i.lines[0].unit_amount,
            i.lines[0].tax_amount
        ),
        (1, 1000, 200)
    );
    assert!(i.mentions.is_empty());
}

#[test]
fn a_business_is_billed_under_its_name_and_number_with_the_reverse_charge() {
    let org = org();
    let mut o = order(1000, 0, TaxBehavior::Exclusive);
    o.tax.breakdown = vec![line(TaxabilityReason::ReverseCharge, 1000, 0)];
    o.tax.billing_name = Some("Acme SAS".into());
    o.tax.is_business = true;
    o.tax.tax_id = Some(TaxId {
        value: "FR40303265045".into(),
        format: crate::domain::customer::TaxIdFormat::EuVat,
    });
    let customer = Customer {
        name: Some("Jo".into()),
        ..crate::api::subscription::sample_customer()
    };
    let i = invoice(
        &org,
        &o,
        Some(&customer),
        None,
        None,
        "X-0001".into(),
        1,
        at(3),
    );
    assert_eq!(i.buyer.name, "Acme SAS");
    assert_eq!(i.buyer.tax_id.as_deref(), Some("FR40303265045"));
    assert_eq!(i.buyer.email, customer.email);
    assert_eq!(i.mentions, vec![REVERSE_CHARGE_EU.to_string()]);
    assert_eq!(i.total, 1000);
    // Without a billing name, the customer's.
    o.tax.billing_name = None;
    assert_eq!(
        invoice(&org, &o, Some(&customer), None, None, "X".into(), 1, at(3))
            .buyer
            .name,
        "Jo"
    );
}

#[test]
fn a_discount_is_printed_net() {
    let org = org();
    // Exclusive: a price of 1500 less 500.
    let mut o = order(1000, 200, TaxBehavior::Exclusive);
    o.discount_id = Some(crate::domain::ids::DiscountId::new());
    let i = invoice(
        &org,
        &o,
        None,
        Some(&price(1500)),
        None,
        "X".into(),
        1,
        at(3),
    );
    assert_eq!(
        (i.subtotal, i.discount, i.net, i.total),
        (1500, 500, 1000, 1200)
    );
    // Inclusive: 1800 with VAT, less 600, charged 1200 of which 200 VAT: the subtotal is
    // taken back to net in the same proportion (1800 × 1000 / 1200).
    let mut o = order(1000, 200, TaxBehavior::Inclusive);
    o.discount_id = Some(crate::domain::ids::DiscountId::new());
    let i = invoice(
        &org,
        &o,
        None,
        Some(&price(1800)),
        None,
        "X".into(),
        1,
        at(3),
    );
    assert_eq!(
        (i.subtotal, i.discount, i.net, i.total),
        (1500, 500, 1000, 1200)
    );
}

#[test]
fn seats_are_a_quantity_when_they_divide_the_amount() {
    let org = org();
    let mut o = order(3000, 0, TaxBehavior::Exclusive);
    o.seats = Some(3);
    let i = invoice(&org, &o, None, None, None, "X".into(), 1, at(3));
    assert_eq!(
        (
            i.lines[0].quantity,
            i.lines[0].unit_amount,
            i.lines[0].amount
        ),
        (3, 1000, 3000)
    );
    o.amount = 3001;
    let i = invoice(&org, &o, None, None, None, "X".into(), 1, at(3));
    assert_eq!((i.lines[0].quantity, i.lines[0].unit_amount), (1, 3001));
}

#[test]
fn a_credit_note_gives_back_the_refund_in_negative_amounts() {
    let org = org();
    let o = order(1000, 200, TaxBehavior::Exclusive);
    let i = invoice(&org, &o, None, None, None, "ACME-0001".into(), 1, at(3));
    let refund = Refund {
        id: RefundId::new(),
        organization_id: o.organization_id,
        created_at: at(4),
        modified_at: Some(at(5)),
        status: RefundStatus::Succeeded,
        reason: RefundReason::CustomerRequest,
        amount: 500,
        tax_amount: 100,
        currency: "usd".into(),
        order_id: o.id,
        subscription_id: None,
        customer_id: o.customer_id,
        revoke_benefits: false,
        comment: None,
        metadata: Default::default(),
        processor_id: None,
        failure: None,
    };
    let n = credit_note(
        &i,
        &o,
        &refund,
        number(&org, DocumentKind::CreditNote, 1),
        1,
        at(6),
    );
    assert_eq!(n.id, Invoice::id_for_refund(refund.id));
    assert_eq!(n.number, "ACME-CN-0001");
    assert_eq!(
        n.kind,
        InvoiceKind::CreditNote {
            refund_id: refund.id,
            invoice_number: "ACME-0001".into()
        }
    );
    assert_eq!(
        (n.subtotal, n.net, n.tax(), n.total),
        (-500, -500, -100, -600)
    );
    assert_eq!(
        (
            n.tax_breakdown[0].taxable_amount,
            n.tax_breakdown[0].amount,
            n.tax_breakdown[0].rate_ppm
        ),
        (-500, -100, 200_000)
    );
    assert_eq!(
        (n.seller.clone(), n.buyer.clone()),
        (i.seller.clone(), i.buyer.clone())
    );
    assert_eq!((n.issued_at, n.supplied_at), (at(6), i.supplied_at));
}

fn monthly(count: u32, trial: Option<crate::domain::product::Trial>) -> Product {
    let mut p = price(1000);
    p.kind = PriceKind::RecurringFixed {
        interval: crate::domain::product::RecurringInterval::Month,
        currency: "usd".into(),
        amount: 1000,
    };
    Product {
        id: ProductId::new(),
        organization_id: OrganizationId::new(),
        created_at: at(1),
        modified_at: None,
        name: "Pro".into(),
        description: None,
        is_recurring: true,
        is_archived: false,
        is_tax_applicable: true,
        metadata: Default::default(),
        prices: vec![p],
        benefit_ids: Vec::new(),
        media_ids: Vec::new(),
        attached_custom_fields: Vec::new(),
        recurring_interval_count: count,
        trial,
        price_tax_behavior: Vec::new(),
        free_price_currency: Vec::new(),
    }
}

fn subscription_order(product: &Product, reason: BillingReason, amount: i64) -> Order {
    let mut o = order(amount, 0, TaxBehavior::Exclusive);
    o.subscription_id = Some(crate::domain::ids::SubscriptionId::new());
    o.product_id = product.id;
    o.product_price_id = product.prices[0].id;
    o.recurring = true;
    o.billing_reason = reason;
    o
}

#[test]
fn a_subscription_line_prints_the_period_it_bills() {
    let product = monthly(1, None);
    let cycle = subscription_order(&product, BillingReason::SubscriptionCycle, 1000);
    let march_2 = at(2);
    let april_2 = Utc.with_ymd_and_hms(2026, 4, 2, 9, 0, 0).unwrap();
    assert_eq!(period(&cycle, Some(&product)), Some((march_2, april_2)));
    let first = subscription_order(&product, BillingReason::SubscriptionCreate, 1000);
    assert_eq!(period(&first, Some(&product)), Some((march_2, april_2)));
    // Every three months.
    let quarterly = monthly(3, None);
    let o = subscription_order(&quarterly, BillingReason::SubscriptionCycle, 1000);
    let june_2 = Utc.with_ymd_and_hms(2026, 6, 2, 9, 0, 0).unwrap();
    assert_eq!(period(&o, Some(&quarterly)), Some((march_2, june_2)));
    // The invoice's line carries it.
    let i = invoice(
        &org(),
        &cycle,
        None,
        product.price(cycle.product_price_id),
        period(&cycle, Some(&product)),
        "X".into(),
        1,
        at(3),
    );
    assert_eq!(i.lines[0].period, Some((march_2, april_2)));
}

#[test]
fn a_purchase_a_proration_a_free_trial_and_a_lost_price_print_no_period() {
    let product = monthly(1, None);
    let update = subscription_order(&product, BillingReason::SubscriptionUpdate, 300);
    assert_eq!(period(&update, Some(&product)), None);
    let mut purchase = order(1000, 0, TaxBehavior::Exclusive);
    purchase.product_price_id = product.prices[0].id;
    assert_eq!(period(&purchase, Some(&product)), None);
    let trial = crate::domain::product::Trial {
        interval: crate::domain::product::RecurringInterval::Day,
        count: 14,
    };
    let with_trial = monthly(1, Some(trial));
    let free = subscription_order(&with_trial, BillingReason::SubscriptionCreate, 0);
    assert_eq!(period(&free, Some(&with_trial)), None);
    // The trial's renewal bills a period.
    let renewal = subscription_order(&with_trial, BillingReason::SubscriptionCycle, 1000);
    assert!(period(&renewal, Some(&with_trial)).is_some());
    // The product (or its price) is gone.
    assert_eq!(period(&renewal, None), None);
    let mut other = renewal.clone();
    other.product_price_id = PriceId::new();
    assert_eq!(period(&other, Some(&with_trial)), None);
}

#[test]
fn a_renewal_prints_each_metered_usage_as_a_line_of_its_window() {
    use crate::domain::ids::PriceId;
    use crate::domain::order::UsageLine;
    let org = org();
    let mut o = order(1000 + 625, 325, TaxBehavior::Exclusive);
    o.usage_lines.push(UsageLine {
        price_id: PriceId::new(),
        label: "API calls — (1,250 consumed units) × $0.005".into(),
        amount: 625,
        start: at(1),
        end: at(2),
    });
    let i = invoice(
        &org,
        &o,
        None,
        None,
        None,
        number(&org, DocumentKind::Invoice, 8),
        8,
        at(3),
    );
    assert_eq!(i.lines.len(), 2);
    assert_eq!((i.lines[0].amount, i.lines[0].tax_amount), (1000, 200));
    assert_eq!((i.lines[1].amount, i.lines[1].tax_amount), (625, 125));
    assert_eq!(
        i.lines[1].description,
        "API calls — (1,250 consumed units) × $0.005"
    );
    assert_eq!(i.lines[1].period, Some((at(1), at(2))));
    assert_eq!(
        (i.subtotal, i.net, i.tax(), i.total),
        (1625, 1625, 325, 1950)
    );
}
