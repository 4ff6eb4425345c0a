//! The first order of a settled checkout ([`Order::from_checkout`]).
//!
//! It lives with the checkout rather than in `domain::order`, so that the domain's records
//! do not depend on the aggregates built on them.

use chrono::{DateTime, Utc};

use super::model::Checkout;
use crate::domain::customer::Customer;
use crate::domain::ids::{OrderId, SubscriptionId};
use crate::domain::order::{BillingReason, Order, OrderStatus, DEFAULT_CURRENCY};

impl Order {
    /// The first order of a settled checkout: `purchase`, or `subscription_create` for a
    /// recurring price (with the subscription it created). Its amount is the checkout's
    /// net (after discount, before tax: for an inclusive price, the subtotal less its
    /// tax), and it keeps the tax as charged and the buyer's billing identity.
    pub fn from_checkout(
        id: OrderId,
        checkout: &Checkout,
        customer: &Customer,
        product_name: &str,
        subscription_id: Option<SubscriptionId>,
        now: DateTime<Utc>,
    ) -> Order {
        let recurring = checkout.price.kind.is_recurring();
        // A trial's first order is free (Polar's trial order): the first charge is the
        // renewal at the trial's end.
        let trial = recurring && checkout.trial_end.is_some();
        Order {
            id,
            organization_id: checkout.organization_id,
            created_at: now,
            modified_at: None,
            status: OrderStatus::Paid,
            amount: if trial {
                0
            } else {
                checkout.net_amount().unwrap_or(0)
            },
            tax_amount: if trial {
                0
            } else {
                checkout.tax_amount.unwrap_or(0)
            },
            refunded_amount: 0,
            refunded_tax_amount: 0,
            currency: checkout
                .currency
                .clone()
                .unwrap_or_else(|| DEFAULT_CURRENCY.into()),
            billing_reason: if recurring {
                BillingReason::SubscriptionCreate
            } else {
                BillingReason::Purchase
            },
            // The address the buyer gave; the customer's stored one only for a customer the
            // seller named (anyone may type an address that names someone else's record).
            billing_address: checkout.customer_billing_address.clone().or_else(|| {
                checkout
                    .customer_id_before_confirm
                    .and_then(|_| customer.billing_address.clone())
            }),
            customer_id: customer.id,
            product_id: checkout.product_id,
            product_price_id: checkout.price.id,
            recurring,
            discount_id: checkout.discount.as_ref().map(|d| d.id),
            subscription_id: subscription_id.filter(|_| recurring),
            checkout_id: Some(checkout.id),
            metadata: checkout.metadata.clone(),
            custom_field_data: checkout.custom_field_data.clone(),
            customer_email: customer.email.clone(),
            product_name: product_name.to_string(),
            discount_name: checkout.discount.as_ref().map(|d| d.name.clone()),
            // A trial's intent saved the card, it took no payment (nothing to refund).
            payment_id: checkout
                .payment_processor_metadata
                .get("intent_id")
                .filter(|i| !i.is_empty() && !trial)
                .cloned(),
            refund_pending_amount: 0,
            refund_pending_tax_amount: 0,
            seats: checkout
                .seats
                .filter(|_| checkout.price.kind.seat_tiers().is_some()),
            next_payment_attempt_at: None,
            last_payment: None,
            tax: if trial {
                crate::domain::order::OrderTax::default()
            } else {
                crate::domain::order::OrderTax {
                    behavior: checkout.tax_behavior.unwrap_or_default(),
                    breakdown: checkout.tax_breakdown.clone(),
                    billing_name: checkout
                        .customer_billing_name
                        .clone()
                        .filter(|_| checkout.is_business_customer),
                    is_business: checkout.is_business_customer,
                    tax_id: checkout.customer_tax_id.clone(),
                    tax_id_status: checkout.tax_id_status,
                    provider_ref: checkout.tax_provider_ref.clone(),
                }
            },
            invoice: crate::domain::order::InvoiceState::None,
            usage_lines: Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "order_tests.rs"]
mod tests;
