//! Orders in Polar's `Order` shape (with the `OrderStatus` and `BillingReason` enums):
//! every key present, nullable ones as `null`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::customer::{AddressView, CustomerUser, CustomerView};
use super::discount::DiscountBase;
use super::metadata::{metadata_map, MetadataMap};
use super::product::{ProductBase, ProductPrice};
use super::subscription::{custom_field_data_map, CustomFieldDataMap, OrderSubscription};
use crate::api::free_form::CustomFieldValue;
use crate::domain::customer::Customer;
use crate::domain::discount::Discount;
use crate::domain::order::{self as domain, InvoiceState, Order};
use crate::domain::product::{Price, Product};
use tollgate_actors::subscription::Subscription;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrderStatus {
    Paid,
    Refunded,
    PartiallyRefunded,
    /// A renewal whose charge was declined: due, retried (`next_payment_attempt_at`).
    Pending,
}

impl From<domain::OrderStatus> for OrderStatus {
    fn from(s: domain::OrderStatus) -> Self {
        match s {
            domain::OrderStatus::Paid => OrderStatus::Paid,
            domain::OrderStatus::Refunded => OrderStatus::Refunded,
            domain::OrderStatus::PartiallyRefunded => OrderStatus::PartiallyRefunded,
            domain::OrderStatus::Pending => OrderStatus::Pending,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BillingReason {
    Purchase,
    SubscriptionCreate,
    SubscriptionCycle,
    SubscriptionUpdate,
}

impl From<domain::BillingReason> for BillingReason {
    fn from(r: domain::BillingReason) -> Self {
        match r {
            domain::BillingReason::Purchase => BillingReason::Purchase,
            domain::BillingReason::SubscriptionCreate => BillingReason::SubscriptionCreate,
            domain::BillingReason::SubscriptionCycle => BillingReason::SubscriptionCycle,
            domain::BillingReason::SubscriptionUpdate => BillingReason::SubscriptionUpdate,
        }
    }
}

/// The records an order refers to, as its rendering embeds them.
pub struct OrderRefs<'a> {
    /// The meters of the product's metered prices.
    pub meters: &'a [crate::domain::meter::Meter],
    pub customer: &'a Customer,
    pub product: &'a Product,
    pub price: &'a Price,
    pub discount: Option<&'a Discount>,
    pub subscription: Option<&'a Subscription>,
}

// The `Order` schema: `customer` (`OrderCustomer`), the deprecated `user_id`/`user` built
// from the customer, `product` (`OrderProduct`), `product_price`, `discount`
// (`OrderDiscount`, a `Discount…Base` form) and `subscription` (`OrderSubscription`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Order)]
pub struct OrderView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: MetadataMap,
    #[schema(value_type = std::collections::HashMap<String, CustomFieldValue>)]
    pub custom_field_data: CustomFieldDataMap,
    pub status: OrderStatus,
    pub amount: i64,
    pub tax_amount: i64,
    pub refunded_amount: i64,
    pub refunded_tax_amount: i64,
    pub currency: String,
    pub billing_reason: BillingReason,
    pub billing_address: Option<AddressView>,
    pub customer_id: Uuid,
    pub product_id: Uuid,
    pub product_price_id: Uuid,
    pub discount_id: Option<Uuid>,
    pub subscription_id: Option<Uuid>,
    pub checkout_id: Option<Uuid>,
    /// When a `pending` renewal is charged again; `null` for any other order (and once
    /// dunning gave up).
    pub next_payment_attempt_at: Option<DateTime<Utc>>,
    pub customer: CustomerView,
    /// Deprecated: the customer's id.
    pub user_id: Uuid,
    pub user: CustomerUser,
    pub product: ProductBase,
    pub product_price: ProductPrice,
    pub discount: Option<DiscountBase>,
    pub subscription: Option<OrderSubscription>,
    // Polar's 2026 amounts and fields (today's SDKs require them).
    /// Whether the order was paid: every order but a `pending` renewal.
    pub paid: bool,
    /// Before discount and tax.
    pub subtotal_amount: i64,
    pub discount_amount: i64,
    /// After discount, before tax (`amount`).
    pub net_amount: i64,
    /// `net_amount + tax_amount`.
    pub total_amount: i64,
    /// No customer balance: 0.
    pub applied_balance_amount: i64,
    /// What is left to pay: `total_amount` for a `pending` renewal, else 0.
    pub due_amount: i64,
    pub refundable_amount: i64,
    pub refundable_tax_amount: i64,
    /// The business's billing name, else the customer's name.
    pub billing_name: Option<String>,
    /// The invoice's number once issued; before, a number derived from the order's id.
    pub invoice_number: String,
    pub is_invoice_generated: bool,
    /// The tax per jurisdiction and rate (Tollgate's; empty: none).
    pub tax_breakdown: Vec<crate::api::tax::TaxBreakdownView>,
    /// Whether the price included the tax (Tollgate's).
    pub tax_behavior: &'static str,
    /// The buyer's tax number as the order was paid (Tollgate's).
    pub customer_tax_id: Option<String>,
    pub receipt_number: Option<String>,
    /// The seats bought at a seat-based price; `null` for any other price.
    pub seats: Option<i64>,
    /// Unit-based prices are not sold: `null`.
    pub units: Option<i64>,
    /// Tollgate takes no fee.
    pub platform_fee_amount: i64,
    pub platform_fee_currency: Option<String>,
    /// What was bought: the product's name.
    pub description: String,
    /// The order's one line: the product at its price.
    pub items: Vec<OrderItemSchema>,
}

/// One line of an order.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrderItemSchema {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub label: String,
    /// Before discount and tax.
    pub amount: i64,
    pub tax_amount: i64,
    pub proration: bool,
    pub product_price_id: Option<Uuid>,
    pub start_timestamp: Option<DateTime<Utc>>,
    pub end_timestamp: Option<DateTime<Utc>>,
}

/// What is left to refund of `paid` (nothing of an order not paid).
fn refundable(o: &Order, paid: i64, refunded: i64) -> i64 {
    if o.status.was_paid() {
        (paid - refunded).max(0)
    } else {
        0
    }
}

/// The order's amount before its discount.
fn subtotal(o: &Order, price: &Price) -> i64 {
    o.subtotal_with(price)
}

impl OrderView {
    pub fn new(o: &Order, refs: &OrderRefs<'_>) -> Self {
        OrderView {
            id: o.id.0,
            created_at: o.created_at,
            modified_at: o.modified_at,
            metadata: metadata_map(&o.metadata),
            custom_field_data: custom_field_data_map(&o.custom_field_data),
            status: o.status.into(),
            amount: o.amount,
            tax_amount: o.tax_amount,
            refunded_amount: o.refunded_amount,
            refunded_tax_amount: o.refunded_tax_amount,
            currency: o.currency.clone(),
            billing_reason: o.billing_reason.into(),
            billing_address: o.billing_address.as_ref().map(AddressView::from),
            customer_id: o.customer_id.0,
            product_id: o.product_id.0,
            product_price_id: o.product_price_id.0,
            discount_id: o.discount_id.map(|d| d.0),
            subscription_id: o.subscription_id.map(|s| s.0),
            checkout_id: o.checkout_id.map(|c| c.0),
            next_payment_attempt_at: o.next_payment_attempt_at,
            customer: CustomerView::from(refs.customer),
            // Polar's legacy user id; Tollgate has none, so the customer's.
            user_id: refs.customer.id.0,
            user: CustomerUser::from(refs.customer),
            product: ProductBase::from(refs.product),
            product_price: ProductPrice::new(refs.product, refs.price, refs.meters),
            discount: refs.discount.map(DiscountBase::from),
            subscription: refs.subscription.map(OrderSubscription::from),
            paid: o.status.was_paid(),
            subtotal_amount: subtotal(o, refs.price),
            discount_amount: subtotal(o, refs.price) - o.amount,
            net_amount: o.amount,
            total_amount: o.amount + o.tax_amount,
            applied_balance_amount: 0,
            due_amount: if o.status.was_paid() {
                0
            } else {
                o.amount + o.tax_amount
            },
            refundable_amount: refundable(o, o.amount, o.refunded_amount),
            refundable_tax_amount: refundable(o, o.tax_amount, o.refunded_tax_amount),
            billing_name: o
                .tax
                .billing_name
                .clone()
                .or_else(|| refs.customer.name.clone()),
            invoice_number: invoice_number(o),
            is_invoice_generated: matches!(o.invoice, InvoiceState::Issued { .. }),
            tax_breakdown: crate::api::tax::breakdown_view(&o.tax.breakdown),
            tax_behavior: o.tax.behavior.as_str(),
            customer_tax_id: o.tax.tax_id.as_ref().map(|t| t.value.clone()),
            receipt_number: None,
            seats: o.seats.map(i64::from),
            units: None,
            platform_fee_amount: 0,
            platform_fee_currency: None,
            description: o.product_name.clone(),
            items: items(o, subtotal(o, refs.price)),
        }
    }
}

/// The order's lines: the product at its price, then each metered price's usage (a
/// renewal's, with the window it bills); the tax is spread over them in proportion. An
/// order of usage alone (the last period's of a subscription that ended, or a free plan's
/// renewal) has no product line at 0, as Polar's has only its metered lines.
fn items(o: &Order, subtotal: i64) -> Vec<OrderItemSchema> {
    let taxes = o.spread_over_lines(o.tax_amount);
    let tax_of = |i: usize| taxes.get(i).copied().unwrap_or(0);
    let fixed = subtotal.saturating_sub(o.usage_amount());
    let mut items = vec![OrderItemSchema {
        id: Uuid::new_v5(&o.id.0, b"item"),
        created_at: o.created_at,
        modified_at: o.modified_at,
        label: o.product_name.clone(),
        amount: fixed,
        tax_amount: tax_of(0),
        proration: false,
        product_price_id: Some(o.product_price_id.0),
        start_timestamp: None,
        end_timestamp: None,
    }];
    for (i, line) in o.usage_lines.iter().enumerate() {
        items.push(OrderItemSchema {
            id: Uuid::new_v5(&o.id.0, format!("usage:{i}").as_bytes()),
            created_at: o.created_at,
            modified_at: o.modified_at,
            label: line.label.clone(),
            amount: line.amount,
            tax_amount: tax_of(i + 1),
            proration: false,
            product_price_id: Some(line.price_id.0),
            start_timestamp: Some(line.start),
            end_timestamp: Some(line.end),
        });
    }
    if fixed == 0 && tax_of(0) == 0 && items.len() > 1 {
        items.remove(0);
    }
    items
}

/// The issued invoice's number; before one is issued, `TG-` and the order id's first twelve
/// hex digits, upper case: stable and unique enough to quote to a buyer.
fn invoice_number(o: &Order) -> String {
    if let InvoiceState::Issued { number, .. } = &o.invoice {
        return number.clone();
    }
    let hex = o.id.0.simple().to_string().to_ascii_uppercase();
    format!("TG-{}", &hex[..12])
}

/// Orders of the sample products' prices: a one-time purchase with a billing address and a
/// discount, and the first order of each sample subscription.
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use chrono::TimeZone;

    use crate::domain::custom_field::{CustomFieldData, FieldValue};
    use crate::domain::customer::Address;
    use crate::domain::ids::{CheckoutId, OrderId};
    use crate::domain::metadata::{MetaValue, Metadata};

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let customer = super::subscription::sample_customer();
    let products = super::product::sample_products();
    let discounts = super::discount::sample_discounts();
    let subscriptions = super::subscription::sample_subscriptions();
    let order = |n: u128, product: &Product, price: &Price| Order {
        id: OrderId(Uuid::from_u128(0x0d00 + n)),
        organization_id: customer.organization_id,
        created_at: now,
        modified_at: None,
        status: domain::OrderStatus::Paid,
        amount: price.kind.fixed_amount().unwrap_or(0),
        tax_amount: 0,
        refunded_amount: 0,
        refunded_tax_amount: 0,
        currency: "usd".into(),
        billing_reason: domain::BillingReason::Purchase,
        billing_address: None,
        customer_id: customer.id,
        product_id: product.id,
        product_price_id: price.id,
        recurring: price.kind.is_recurring(),
        discount_id: None,
        subscription_id: None,
        checkout_id: Some(CheckoutId(Uuid::from_u128(0xc400 + n))),
        metadata: Metadata::default(),
        custom_field_data: CustomFieldData::default(),
        customer_email: customer.email.clone(),
        product_name: product.name.clone(),
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
    };
    let mut records: Vec<(Order, Option<&Subscription>)> = Vec::new();
    let mut refunded = false;
    for (n, p) in products.iter().enumerate() {
        let Some(price) = p.prices.first() else {
            continue;
        };
        let mut o = order(n as u128, p, price);
        match subscriptions.iter().find(|s| s.product_id == p.id) {
            Some(s) => {
                o.billing_reason = domain::BillingReason::SubscriptionCreate;
                o.subscription_id = Some(s.id);
                o.discount_id = s.discount_id;
                // A line of metered usage, so that the samples show one (a renewal's).
                o.usage_lines.push(domain::UsageLine {
                    price_id: price.id,
                    label: "API calls — (1,250 consumed units) × $0.005".into(),
                    amount: 625,
                    start: now - chrono::Duration::days(30),
                    end: now,
                });
                o.amount = o.amount.saturating_add(625);
                records.push((o, Some(s)));
            }
            None if !p.is_recurring && !refunded => {
                refunded = true;
                o.status = domain::OrderStatus::PartiallyRefunded;
                o.amount = 2000;
                o.tax_amount = 400;
                o.refunded_amount = 500;
                o.refunded_tax_amount = 100;
                o.modified_at = Some(now);
                o.billing_address =
                    Address::new(Some("1 rue de la Paix"), None, None, None, None, "FR").ok();
                o.discount_id = discounts.get(2).map(|d| d.id);
                o.metadata = Metadata(
                    [("source".to_string(), MetaValue::Str("ads".into()))]
                        .into_iter()
                        .collect(),
                );
                o.custom_field_data = CustomFieldData(
                    [("terms".to_string(), FieldValue::Bool(true))]
                        .into_iter()
                        .collect(),
                );
                records.push((o, None));
            }
            None => records.push((o, None)),
        }
    }
    let mut out = Vec::new();
    for (o, subscription) in &records {
        let Some(product) = products.iter().find(|p| p.id == o.product_id) else {
            continue;
        };
        let Some(price) = product.price(o.product_price_id) else {
            continue;
        };
        let refs = OrderRefs {
            meters: &super::price::sample_meters(),
            customer: &customer,
            product,
            price,
            discount: discounts.iter().find(|d| Some(d.id) == o.discount_id),
            subscription: *subscription,
        };
        out.push((
            "Order",
            serde_json::to_value(OrderView::new(o, &refs)).unwrap_or_default(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use serde_json::{json, Value};
    use std::collections::BTreeSet;

    #[test]
    fn orders_have_every_key_of_the_sdk_model() {
        let samples = samples();
        // One more for the product with a metered price (`sample_products`' last).
        assert_eq!(samples.len(), 6);
        for (name, v) in &samples {
            assert_eq!(*name, "Order");
            let keys: BTreeSet<&str> = v
                .as_object()
                .map(|m| m.keys().map(String::as_str).collect())
                .unwrap_or_default();
            // The seed's 26 keys and Polar's 2026 ones (with `seats`), and Tollgate's three
            // of tax (`tax_breakdown`, `tax_behavior`, `customer_tax_id`).
            assert_eq!(keys.len(), 49, "{keys:?}");
            for k in ["tax_breakdown", "tax_behavior", "customer_tax_id"] {
                assert!(keys.contains(k), "{k}");
            }
            let amount = v["amount"].as_i64().unwrap();
            assert_eq!(v["net_amount"], amount);
            assert_eq!(
                v["subtotal_amount"].as_i64().unwrap() - v["discount_amount"].as_i64().unwrap(),
                amount
            );
            assert_eq!(
                v["total_amount"].as_i64().unwrap(),
                amount + v["tax_amount"].as_i64().unwrap()
            );
            let lines: i64 = v["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["amount"].as_i64().unwrap())
                .sum();
            assert_eq!(lines, v["subtotal_amount"].as_i64().unwrap());
            let taxes: i64 = v["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["tax_amount"].as_i64().unwrap())
                .sum();
            assert_eq!(taxes, v["tax_amount"].as_i64().unwrap());
            assert_eq!(v["paid"], true);
            assert_eq!(v["user_id"], v["customer_id"]);
            assert_eq!(v["user"]["id"], v["customer"]["id"]);
            assert_eq!(v["product"]["id"], v["product_id"]);
            assert_eq!(v["product_price"]["id"], v["product_price_id"]);
        }
        let refunded = samples
            .iter()
            .map(|(_, v)| v)
            .find(|v| v["status"] == "partially_refunded")
            .cloned()
            .unwrap_or_default();
        assert_eq!(refunded["billing_reason"], "purchase");
        assert_eq!(refunded["billing_address"]["country"], "FR");
        assert_eq!(refunded["discount"]["duration"], "forever");
        assert_eq!(refunded["subscription"], Value::Null);
        assert_eq!(refunded["custom_field_data"], json!({"terms": true}));
        let renewal = samples
            .iter()
            .map(|(_, v)| v)
            .find(|v| v["subscription"].is_object())
            .cloned()
            .unwrap_or_default();
        assert_eq!(renewal["billing_reason"], "subscription_create");
        assert_eq!(renewal["subscription"]["id"], renewal["subscription_id"]);
        assert_eq!(renewal["subscription"]["status"], "active");
        assert_eq!(renewal["billing_address"], Value::Null);
        // Its usage line: the metered price's, with the window it bills.
        let usage = &renewal["items"][1];
        assert_eq!(usage["amount"], 625);
        assert!(usage["label"].as_str().unwrap().starts_with("API calls — "));
        assert!(usage["start_timestamp"].is_string() && usage["end_timestamp"].is_string());
        assert_eq!(renewal["items"][0]["start_timestamp"], Value::Null);
    }

    /// A declined renewal's order: `pending`, not paid, all of it due, nothing to refund,
    /// with its next attempt; once paid, nothing due.
    #[test]
    fn a_pending_renewal_is_due_and_not_refundable() {
        let customer = super::super::subscription::sample_customer();
        let products = super::super::product::sample_products();
        let subscriptions = super::super::subscription::sample_subscriptions();
        let sub = subscriptions.first().expect("a sample subscription");
        let product = products
            .iter()
            .find(|p| p.id == sub.product_id)
            .expect("its product");
        let price = product.prices.first().expect("a price");
        let next = Utc.with_ymd_and_hms(2026, 3, 4, 12, 0, 0).unwrap();
        let mut o = sub.renewal_order(
            &tollgate_actors::subscription::RenewalCharge {
                cycle: 1,
                amount: 1500,
                balance_applied: 0,
                currency: "usd".into(),
                discounted: false,
                usage: Vec::new(),
                idempotency_key: "k".into(),
                payment_token: None,
                customer_id: customer.id,
                customer_email: customer.email.clone(),
            },
            300,
            None,
            next,
        );
        o.status = domain::OrderStatus::Pending;
        o.next_payment_attempt_at = Some(next);
        let refs = OrderRefs {
            meters: &[],
            customer: &customer,
            product,
            price,
            discount: None,
            subscription: Some(sub),
        };
        let v = serde_json::to_value(OrderView::new(&o, &refs)).unwrap_or_default();
        assert_eq!(v["status"], "pending");
        assert_eq!(v["paid"], false);
        assert_eq!(v["due_amount"], 1800);
        assert_eq!(v["refundable_amount"], 0);
        assert_eq!(v["refundable_tax_amount"], 0);
        assert_eq!(v["next_payment_attempt_at"], json!(next));
        o.status = domain::OrderStatus::Paid;
        o.next_payment_attempt_at = None;
        let v = serde_json::to_value(OrderView::new(&o, &refs)).unwrap_or_default();
        assert_eq!(
            (v["paid"].clone(), v["due_amount"].clone()),
            (json!(true), json!(0))
        );
        assert_eq!(v["refundable_amount"], 1500);
        assert_eq!(v["next_payment_attempt_at"], Value::Null);
    }

    #[test]
    fn statuses_and_reasons_are_the_domains_names() {
        use domain::{BillingReason as R, OrderStatus as S};
        for s in [S::Paid, S::Refunded, S::PartiallyRefunded, S::Pending] {
            assert_eq!(
                serde_json::to_value(OrderStatus::from(s)).unwrap(),
                json!(s.as_str())
            );
        }
        for r in [
            R::Purchase,
            R::SubscriptionCreate,
            R::SubscriptionCycle,
            R::SubscriptionUpdate,
        ] {
            assert_eq!(
                serde_json::to_value(BillingReason::from(r)).unwrap(),
                json!(r.as_str())
            );
        }
    }
}
