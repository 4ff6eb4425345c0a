use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

use super::custom_field::CustomFieldData;
use super::customer::Address;
use super::ids::{
    CheckoutId, CustomerId, DiscountId, OrderId, OrganizationId, PriceId, ProductId, SubscriptionId,
};
use super::metadata::Metadata;
use super::time_key;

/// A paid purchase: the first payment of a checkout, or a subscription renewal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    pub id: OrderId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub status: OrderStatus,
    /// After discount, before tax, in the currency's minor unit.
    pub amount: i64,
    pub tax_amount: i64,
    pub refunded_amount: i64,
    pub refunded_tax_amount: i64,
    pub currency: String,
    pub billing_reason: BillingReason,
    pub billing_address: Option<Address>,
    pub customer_id: CustomerId,
    pub product_id: ProductId,
    pub product_price_id: PriceId,
    /// The price was recurring (the `product_price_type` filter).
    pub recurring: bool,
    pub discount_id: Option<DiscountId>,
    pub subscription_id: Option<SubscriptionId>,
    pub checkout_id: Option<CheckoutId>,
    pub metadata: Metadata,
    pub custom_field_data: CustomFieldData,
    /// Sort keys of the `customer`, `product` and `discount` orderings, as they were when
    /// the order was written.
    pub customer_email: String,
    pub product_name: String,
    pub discount_name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OrderStatus {
    Paid,
    Refunded,
    PartiallyRefunded,
}

impl OrderStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Paid => "paid",
            OrderStatus::Refunded => "refunded",
            OrderStatus::PartiallyRefunded => "partially_refunded",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BillingReason {
    Purchase,
    SubscriptionCreate,
    SubscriptionCycle,
    SubscriptionUpdate,
}

impl BillingReason {
    pub fn as_str(self) -> &'static str {
        match self {
            BillingReason::Purchase => "purchase",
            BillingReason::SubscriptionCreate => "subscription_create",
            BillingReason::SubscriptionCycle => "subscription_cycle",
            BillingReason::SubscriptionUpdate => "subscription_update",
        }
    }
}

/// Sort orders of `GET /v1/orders/`, each an index per organization.
pub const ORDER_BY_CREATED: &str = "order_by_created";
pub const ORDER_BY_AMOUNT: &str = "order_by_amount";
pub const ORDER_BY_CUSTOMER: &str = "order_by_customer";
pub const ORDER_BY_PRODUCT: &str = "order_by_product";
pub const ORDER_BY_DISCOUNT: &str = "order_by_discount";
pub const ORDER_BY_SUBSCRIPTION: &str = "order_by_subscription";
/// Orders of one customer, product or discount, by creation time (the common filters).
pub const ORDER_OF_CUSTOMER: &str = "order_of_customer";
pub const ORDER_OF_PRODUCT: &str = "order_of_product";
pub const ORDER_OF_DISCOUNT: &str = "order_of_discount";

impl Order {
    fn created(&self) -> KeyBuf {
        KeyBuf::new().i64(self.created_at.timestamp_micros())
    }
}

impl Record for Order {
    crate::record_v1!(Order, "order");
    const INDEXES: &'static [&'static str] = &[
        ORDER_BY_CREATED,
        ORDER_BY_AMOUNT,
        ORDER_BY_CUSTOMER,
        ORDER_BY_PRODUCT,
        ORDER_BY_DISCOUNT,
        ORDER_BY_SUBSCRIPTION,
        ORDER_OF_CUSTOMER,
        ORDER_OF_PRODUCT,
        ORDER_OF_DISCOUNT,
    ];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    /// Ties in every ordering break on creation time, then id.
    fn index_entries(&self) -> Vec<IndexEntry> {
        let org = self.organization_id.key();
        let created = self.created().into_vec();
        let then = |k: KeyBuf| {
            let mut v = k.into_vec();
            v.extend_from_slice(&created);
            v
        };
        let mut entries = vec![
            IndexEntry::new(ORDER_BY_CREATED, org.clone(), time_key(self.created_at)),
            IndexEntry::new(
                ORDER_BY_AMOUNT,
                org.clone(),
                then(KeyBuf::new().i64(self.amount)),
            ),
            IndexEntry::new(
                ORDER_BY_CUSTOMER,
                org.clone(),
                then(KeyBuf::new().str(&self.customer_email.to_lowercase())),
            ),
            IndexEntry::new(
                ORDER_BY_PRODUCT,
                org.clone(),
                then(KeyBuf::new().str(&self.product_name.to_lowercase())),
            ),
            IndexEntry::new(
                ORDER_BY_DISCOUNT,
                org.clone(),
                then(match &self.discount_name {
                    Some(n) => KeyBuf::new().u8(0).str(&n.to_lowercase()),
                    None => KeyBuf::new().u8(1),
                }),
            ),
            IndexEntry::new(
                ORDER_BY_SUBSCRIPTION,
                org,
                then(match &self.subscription_id {
                    Some(s) => KeyBuf::new().u8(0).fixed(&s.key()),
                    None => KeyBuf::new().u8(1),
                }),
            ),
            IndexEntry::new(ORDER_OF_CUSTOMER, self.customer_id.key(), created.clone()),
            IndexEntry::new(ORDER_OF_PRODUCT, self.product_id.key(), created.clone()),
        ];
        if let Some(d) = self.discount_id {
            entries.push(IndexEntry::new(ORDER_OF_DISCOUNT, d.key(), created));
        }
        entries
    }
}
