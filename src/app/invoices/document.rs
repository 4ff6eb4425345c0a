//! What an invoice and a credit note print, built from the records they bill: pure, so the
//! issuer's batch and the tests build the same document from the same records.
//!
//! Amounts are printed net of tax, as the order keeps them: an order's `amount` is the net
//! whatever the price's behaviour, so the lines, the subtotal and the discount are net
//! amounts too (for a price that included the tax, the price and its discount are taken
//! back to net in proportion to the tax charged).

use chrono::{DateTime, Utc};
use tollgate_actors::domain::tax_breakdown::refund_share;
use tollgate_actors::tax::rates::EU_MEMBER_STATES;

use crate::domain::customer::{Address, Customer};
use crate::domain::invoice::{
    mentions_for, BillTo, DocumentKind, Invoice, InvoiceKind, InvoiceLine, Seller,
};
use crate::domain::order::{BillingReason, Order};
use crate::domain::organization::Organization;
use crate::domain::product::{Price, Product};
use crate::domain::refund::Refund;
use crate::domain::tax_settings::TaxBehavior;

/// The number `seq` of `kind` of `org`: `ACME-0001`, `ACME-CN-0001`.
pub fn number(org: &Organization, kind: DocumentKind, seq: u64) -> String {
    Invoice::number_for(&org.tax.prefix_for(&org.slug), kind, seq)
}

/// The seller as `org` prints itself: its legal name (else its name), its address (else
/// its country alone) and its tax number.
pub fn seller(org: &Organization) -> Seller {
    Seller {
        legal_name: org
            .tax
            .legal_name
            .clone()
            .unwrap_or_else(|| org.name.clone()),
        address: org.tax.address.clone().unwrap_or_else(|| Address {
            line1: None,
            line2: None,
            postal_code: None,
            city: None,
            state: None,
            country: org.tax.country.clone().unwrap_or_default(),
        }),
        tax_id: org.tax.tax_id.as_ref().map(|t| t.value.clone()),
    }
}

/// The buyer of `order`: the billing name it was sold under (else the customer's name, else
/// the e-mail address), its billing address and tax number.
pub fn bill_to(order: &Order, customer: Option<&Customer>) -> BillTo {
    let email = customer
        .map(|c| c.email.clone())
        .unwrap_or_else(|| order.customer_email.clone());
    BillTo {
        name: order
            .tax
            .billing_name
            .clone()
            .or_else(|| customer.and_then(|c| c.name.clone()))
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| email.clone()),
        address: order.billing_address.clone(),
        tax_id: order.tax.tax_id.as_ref().map(|t| t.value.clone()),
        email,
    }
}

/// The net subtotal of `order` before its discount (`price`: the order's, if it is still
/// known).
fn net_subtotal(order: &Order, price: Option<&Price>) -> i64 {
    let Some(price) = price else {
        return order.amount;
    };
    let subtotal = order.subtotal_with(price);
    let gross = order.amount.saturating_add(order.tax_amount);
    if order.tax.behavior == TaxBehavior::Inclusive
        && order.discount_id.is_some()
        && order.tax_amount > 0
        && gross > 0
    {
        // The price included the tax: net it in the proportion the sale was netted.
        let net = (i128::from(subtotal) * i128::from(order.amount) + i128::from(gross) / 2)
            / i128::from(gross);
        return i64::try_from(net).unwrap_or(order.amount).max(order.amount);
    }
    subtotal
}

/// The period a subscription's order bills, as its line prints it: from the order (a
/// subscription's first order is written when its period starts, a renewal's when its
/// period ends and the next begins) to one cycle of its price later (`product`'s interval
/// count of the price's interval). `None` for a purchase, a plan change's proration (it
/// bills the rest of a period, its own line says so), a trial's free first order, and an
/// order whose price is gone or not recurring.
pub fn period(order: &Order, product: Option<&Product>) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    order.subscription_id?;
    let product = product?;
    let interval = product.price(order.product_price_id)?.kind.interval()?;
    let start = order.created_at;
    match order.billing_reason {
        BillingReason::SubscriptionCreate if product.trial.is_some() && order.amount == 0 => None,
        BillingReason::SubscriptionCreate | BillingReason::SubscriptionCycle => Some((
            start,
            interval.add(start, product.recurring_interval_count.max(1)),
        )),
        BillingReason::Purchase | BillingReason::SubscriptionUpdate => None,
    }
}

/// The invoice of `order`, numbered `number` (the `seq`-th of its organization), issued at
/// `now`; its line bills `period` (see [`period`]).
#[allow(clippy::too_many_arguments)]
pub fn invoice(
    org: &Organization,
    order: &Order,
    customer: Option<&Customer>,
    price: Option<&Price>,
    period: Option<(DateTime<Utc>, DateTime<Utc>)>,
    number: String,
    seq: u64,
    now: DateTime<Utc>,
) -> Invoice {
    let subtotal = net_subtotal(order, price);
    // The fixed price's line, then one per metered price's usage (never discounted); the
    // tax spread over them in proportion.
    let usage = order.usage_amount();
    let fixed = subtotal.saturating_sub(usage);
    let taxes = order.spread_over_lines(order.tax_amount);
    let tax_of = |i: usize| taxes.get(i).copied().unwrap_or(0);
    let (quantity, unit_amount) = match order.seats.filter(|s| *s > 1) {
        Some(seats) if fixed % i64::from(seats) == 0 => (seats, fixed / i64::from(seats)),
        _ => (1, fixed),
    };
    let mut lines = vec![InvoiceLine {
        description: order.product_name.clone(),
        quantity,
        unit_amount,
        amount: fixed,
        tax_amount: tax_of(0),
        period,
    }];
    for (i, line) in order.usage_lines.iter().enumerate() {
        lines.push(InvoiceLine {
            description: line.label.clone(),
            quantity: 1,
            unit_amount: line.amount,
            amount: line.amount,
            tax_amount: tax_of(i + 1),
            period: Some((line.start, line.end)),
        });
    }
    let breakdown = order.tax.breakdown.clone();
    Invoice {
        id: Invoice::id_for_order(order.id),
        organization_id: order.organization_id,
        order_id: order.id,
        kind: InvoiceKind::Invoice,
        number,
        seq,
        issued_at: now,
        supplied_at: order.created_at,
        seller: seller(org),
        buyer: bill_to(order, customer),
        lines,
        subtotal,
        discount: subtotal - order.amount,
        net: order.amount,
        mentions: mentions_for(&breakdown, is_eu),
        tax_breakdown: breakdown,
        total: order.amount.saturating_add(order.tax_amount),
        currency: order.currency.clone(),
        behavior: order.tax.behavior,
    }
}

/// The credit note of `refund`, correcting `invoice` (of the refund's order), numbered
/// `number` (the `seq`-th credit note of its organization), issued at `now`: the refunded
/// net and tax as negative amounts, the tax per rate in the order's proportions.
pub fn credit_note(
    invoice: &Invoice,
    order: &Order,
    refund: &Refund,
    number: String,
    seq: u64,
    now: DateTime<Utc>,
) -> Invoice {
    let breakdown: Vec<_> = refund_share(&order.tax.breakdown, refund.amount, refund.tax_amount)
        .into_iter()
        .map(|mut b| {
            b.taxable_amount = -b.taxable_amount;
            b.amount = -b.amount;
            b
        })
        .collect();
    Invoice {
        id: Invoice::id_for_refund(refund.id),
        organization_id: invoice.organization_id,
        order_id: order.id,
        kind: InvoiceKind::CreditNote {
            refund_id: refund.id,
            invoice_number: invoice.number.clone(),
        },
        number,
        seq,
        issued_at: now,
        supplied_at: invoice.supplied_at,
        seller: invoice.seller.clone(),
        buyer: invoice.buyer.clone(),
        lines: vec![InvoiceLine {
            description: format!("Refund: {}", order.product_name),
            quantity: 1,
            unit_amount: -refund.amount,
            amount: -refund.amount,
            tax_amount: -refund.tax_amount,
            period: None,
        }],
        subtotal: -refund.amount,
        discount: 0,
        net: -refund.amount,
        mentions: mentions_for(&breakdown, is_eu),
        tax_breakdown: breakdown,
        total: -refund.total(),
        currency: refund.currency.clone(),
        behavior: invoice.behavior,
    }
}

fn is_eu(country: &str) -> bool {
    EU_MEMBER_STATES.contains(&country)
}

#[cfg(test)]
#[path = "document_tests.rs"]
mod tests;
