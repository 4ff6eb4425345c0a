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
pub use super::order_tax::{InvoiceState, OrderTax};
use super::time_key;

/// The currency of orders whose checkout had none (free prices).
pub const DEFAULT_CURRENCY: &str = super::currency::Currency::DEFAULT.code();

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
    /// The processor's payment (a Stripe PaymentIntent), where a refund goes (format
    /// version 2; `None` for orders written before, and free ones).
    pub payment_id: Option<String>,
    /// Refunds asked of the processor and not answered yet (reserved: see
    /// `domain::refund`).
    pub refund_pending_amount: i64,
    pub refund_pending_tax_amount: i64,
    /// The seats bought at a seat-based price (format version 3; `None` for any other
    /// price, and for orders written before).
    pub seats: Option<u32>,
    /// Format version 4: a `pending` renewal (its charge was declined) is charged again
    /// then; `None` for any other order, and once dunning gave up.
    pub next_payment_attempt_at: Option<DateTime<Utc>>,
    /// The last charge the buyer asked for of a `pending` order (what `payment-status`
    /// answers); `None` for orders never retried by the buyer.
    pub last_payment: Option<PaymentAttempt>,
    /// Format version 5: the tax as charged and the buyer's billing identity (orders from
    /// before: no breakdown, tax added on top, the customer's name).
    pub tax: OrderTax,
    /// Format version 5: where the order's invoice stands.
    pub invoice: InvoiceState,
    /// Format version 6: the usage of metered prices billed on it (a renewal bills the
    /// ended period's usage beside the next period's fixed price), included in `amount`
    /// and never discounted; empty on every other order.
    pub usage_lines: Vec<UsageLine>,
}

/// A metered price's usage over a period, billed as a line of an order (Polar's metered
/// line item: `"<meter> — (<units> consumed units) × <unit price>"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageLine {
    pub price_id: PriceId,
    pub label: String,
    /// Before tax, in the currency's minor unit (capped as the price says).
    pub amount: i64,
    /// The usage window it bills.
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

/// Format version 5: version 4 and the tax and the invoice.
#[derive(Deserialize)]
struct OrderV5 {
    v4: OrderV4,
    tax: OrderTax,
    invoice: InvoiceState,
}

impl From<OrderV5> for Order {
    fn from(v5: OrderV5) -> Self {
        Self {
            tax: v5.tax,
            invoice: v5.invoice,
            ..Order::from(v5.v4)
        }
    }
}

/// A charge of a `pending` order the buyer asked for, as the processor last told it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentAttempt {
    /// The processor's payment (a Stripe PaymentIntent); `None` when the processor made
    /// none (a refusal before any charge).
    pub intent_id: Option<String>,
    pub status: PaymentAttemptStatus,
    /// Why it failed, as the buyer is told (`failed` only).
    pub error: Option<String>,
    pub at: DateTime<Utc>,
}

/// Polar's payment-status values of a retried order (`no_payment` is the absence of an
/// attempt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PaymentAttemptStatus {
    /// Waiting for the buyer's action (3-D Secure) or the processor.
    Pending,
    Succeeded,
    Failed,
}

impl PaymentAttemptStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentAttemptStatus::Pending => "pending",
            PaymentAttemptStatus::Succeeded => "succeeded",
            PaymentAttemptStatus::Failed => "failed",
        }
    }
}

/// Format version 4: version 3 and the retries of a `pending` renewal.
#[derive(Deserialize)]
struct OrderV4 {
    v3: OrderV3,
    next_payment_attempt_at: Option<DateTime<Utc>>,
    last_payment: Option<PaymentAttempt>,
}

impl From<OrderV4> for Order {
    fn from(v4: OrderV4) -> Self {
        Self {
            next_payment_attempt_at: v4.next_payment_attempt_at,
            last_payment: v4.last_payment,
            ..Order::from(v4.v3)
        }
    }
}

/// Format version 3: version 2 and the seats (bincode writes a struct as its fields in
/// order: the nested version 2 reads the same bytes).
#[derive(Deserialize)]
struct OrderV3 {
    v2: OrderV2,
    seats: Option<u32>,
}

impl From<OrderV3> for Order {
    fn from(v3: OrderV3) -> Self {
        Self {
            seats: v3.seats,
            ..Order::from(v3.v2)
        }
    }
}

/// Format version 2: before the seats.
#[derive(Deserialize)]
struct OrderV2 {
    pub id: OrderId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub status: OrderStatus,
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
    pub recurring: bool,
    pub discount_id: Option<DiscountId>,
    pub subscription_id: Option<SubscriptionId>,
    pub checkout_id: Option<CheckoutId>,
    pub metadata: Metadata,
    pub custom_field_data: CustomFieldData,
    pub customer_email: String,
    pub product_name: String,
    pub discount_name: Option<String>,
    pub payment_id: Option<String>,
    pub refund_pending_amount: i64,
    pub refund_pending_tax_amount: i64,
}

/// Format version 1: before the payment and the refunds under way.
#[derive(Deserialize)]
struct OrderV1 {
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
    /// A renewal whose charge was declined: due, not paid (format version 4; appended, so
    /// the earlier statuses keep their bytes).
    Pending,
}

impl OrderStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Paid => "paid",
            OrderStatus::Refunded => "refunded",
            OrderStatus::PartiallyRefunded => "partially_refunded",
            OrderStatus::Pending => "pending",
        }
    }

    /// Whether the order was paid (refunded since or not): what revenue counts and what
    /// can be refunded or disputed.
    pub fn was_paid(self) -> bool {
        !matches!(self, OrderStatus::Pending)
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
/// Tenant: the processor's payment id (`pi_…`); the order it paid (a refund made at the
/// processor finds its order here).
pub const ORDER_BY_PAYMENT: &str = "order_by_payment";

/// Polar's `OrderSortProperty`; each is an index per organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderSort {
    CreatedAt,
    Amount,
    /// By customer e-mail address.
    Customer,
    /// By product name.
    Product,
    /// By discount name; orders without a discount sort last ascending.
    Discount,
    /// By subscription id; one-time orders sort last ascending.
    Subscription,
}

impl OrderSort {
    pub const ALL: &'static [(&'static str, OrderSort)] = &[
        ("created_at", OrderSort::CreatedAt),
        ("amount", OrderSort::Amount),
        ("customer", OrderSort::Customer),
        ("product", OrderSort::Product),
        ("discount", OrderSort::Discount),
        ("subscription", OrderSort::Subscription),
    ];

    pub fn index(self) -> &'static str {
        match self {
            OrderSort::CreatedAt => ORDER_BY_CREATED,
            OrderSort::Amount => ORDER_BY_AMOUNT,
            OrderSort::Customer => ORDER_BY_CUSTOMER,
            OrderSort::Product => ORDER_BY_PRODUCT,
            OrderSort::Discount => ORDER_BY_DISCOUNT,
            OrderSort::Subscription => ORDER_BY_SUBSCRIPTION,
        }
    }
}

impl Order {
    /// The order's amount before its discount: a discount applies to fixed prices only,
    /// whose amount is the price's (`price` is the order's).
    pub fn subtotal_with(&self, price: &crate::domain::product::Price) -> i64 {
        use crate::domain::product::PriceKind;
        let usage = self.usage_amount();
        let fixed = self.amount.saturating_sub(usage);
        let before = match (&self.discount_id, &price.kind) {
            (Some(_), PriceKind::OneTimeFixed { amount, .. })
            | (Some(_), PriceKind::RecurringFixed { amount, .. }) => *amount,
            _ => fixed,
        };
        before.max(fixed).saturating_add(usage)
    }

    /// What its usage lines bill together.
    pub fn usage_amount(&self) -> i64 {
        self.usage_lines
            .iter()
            .fold(0i64, |acc, l| acc.saturating_add(l.amount))
    }

    /// `total` spread over the order's lines (the fixed price's first, then each usage
    /// line) in proportion to what each bills, in whole minor units that add up to
    /// `total` (largest remainders first): the lines of its subtotal, or of its tax.
    pub fn spread_over_lines(&self, total: i64) -> Vec<i64> {
        let usage: Vec<i64> = self.usage_lines.iter().map(|l| l.amount.max(0)).collect();
        let fixed = self.amount.saturating_sub(self.usage_amount()).max(0);
        let weights: Vec<i64> = std::iter::once(fixed).chain(usage).collect();
        spread(total, &weights)
    }

    fn created(&self) -> KeyBuf {
        KeyBuf::new().i64(self.created_at.timestamp_micros())
    }

    /// The sort key of this order in the index of `sort` (ascending; a descending list
    /// reads the index backwards). Ties break on creation time, then id.
    pub fn sort_key(&self, sort: OrderSort) -> Vec<u8> {
        let then = |k: KeyBuf| {
            let mut v = k.into_vec();
            v.extend_from_slice(self.created().as_slice());
            v
        };
        match sort {
            OrderSort::CreatedAt => time_key(self.created_at),
            OrderSort::Amount => then(KeyBuf::new().i64(self.amount)),
            OrderSort::Customer => then(KeyBuf::new().str(&self.customer_email.to_lowercase())),
            OrderSort::Product => then(KeyBuf::new().str(&self.product_name.to_lowercase())),
            OrderSort::Discount => then(match &self.discount_name {
                Some(n) => KeyBuf::new().u8(0).str(&n.to_lowercase()),
                None => KeyBuf::new().u8(1),
            }),
            OrderSort::Subscription => then(match &self.subscription_id {
                Some(s) => KeyBuf::new().u8(0).fixed(&s.key()),
                None => KeyBuf::new().u8(1),
            }),
        }
    }
}

impl From<OrderV1> for Order {
    fn from(v1: OrderV1) -> Self {
        Self {
            id: v1.id,
            organization_id: v1.organization_id,
            created_at: v1.created_at,
            modified_at: v1.modified_at,
            status: v1.status,
            amount: v1.amount,
            tax_amount: v1.tax_amount,
            refunded_amount: v1.refunded_amount,
            refunded_tax_amount: v1.refunded_tax_amount,
            currency: v1.currency,
            billing_reason: v1.billing_reason,
            billing_address: v1.billing_address,
            customer_id: v1.customer_id,
            product_id: v1.product_id,
            product_price_id: v1.product_price_id,
            recurring: v1.recurring,
            discount_id: v1.discount_id,
            subscription_id: v1.subscription_id,
            checkout_id: v1.checkout_id,
            metadata: v1.metadata,
            custom_field_data: v1.custom_field_data,
            customer_email: v1.customer_email,
            product_name: v1.product_name,
            discount_name: v1.discount_name,
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
}

impl From<OrderV2> for Order {
    fn from(v2: OrderV2) -> Self {
        Self {
            id: v2.id,
            organization_id: v2.organization_id,
            created_at: v2.created_at,
            modified_at: v2.modified_at,
            status: v2.status,
            amount: v2.amount,
            tax_amount: v2.tax_amount,
            refunded_amount: v2.refunded_amount,
            refunded_tax_amount: v2.refunded_tax_amount,
            currency: v2.currency,
            billing_reason: v2.billing_reason,
            billing_address: v2.billing_address,
            customer_id: v2.customer_id,
            product_id: v2.product_id,
            product_price_id: v2.product_price_id,
            recurring: v2.recurring,
            discount_id: v2.discount_id,
            subscription_id: v2.subscription_id,
            checkout_id: v2.checkout_id,
            metadata: v2.metadata,
            custom_field_data: v2.custom_field_data,
            customer_email: v2.customer_email,
            product_name: v2.product_name,
            discount_name: v2.discount_name,
            payment_id: v2.payment_id,
            refund_pending_amount: v2.refund_pending_amount,
            refund_pending_tax_amount: v2.refund_pending_tax_amount,
            seats: None,
            next_payment_attempt_at: None,
            last_payment: None,
            tax: crate::domain::order::OrderTax::default(),
            invoice: crate::domain::order::InvoiceState::None,
            usage_lines: Vec::new(),
        }
    }
}

/// `total` in parts proportional to `weights` that add up to it exactly (largest
/// remainders get the leftover units); all to the first part when the weights are zero.
pub fn spread(total: i64, weights: &[i64]) -> Vec<i64> {
    let sum: i128 = weights.iter().map(|w| i128::from((*w).max(0))).sum();
    if weights.is_empty() {
        return Vec::new();
    }
    if sum == 0 {
        let mut parts = vec![0; weights.len()];
        parts[0] = total;
        return parts;
    }
    let total_w = i128::from(total);
    let mut parts: Vec<i64> = Vec::with_capacity(weights.len());
    let mut remainders: Vec<(i128, usize)> = Vec::with_capacity(weights.len());
    for (i, w) in weights.iter().enumerate() {
        let exact = total_w * i128::from((*w).max(0));
        parts.push(i64::try_from(exact.div_euclid(sum)).unwrap_or(0));
        remainders.push((exact.rem_euclid(sum), i));
    }
    let given: i64 = parts.iter().sum();
    let mut left = total.saturating_sub(given);
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in remainders {
        if left <= 0 {
            break;
        }
        parts[i] += 1;
        left -= 1;
    }
    parts
}

impl Record for Order {
    const COLLECTION: &'static str = "order";
    /// 3: the seats of a seat-based purchase; 4: `pending` renewals and their retries; 5:
    /// the tax as charged, the billing identity and the invoice; 6: the usage lines.
    const VERSION: u16 = 6;

    fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
        match version {
            1 => Ok(
                tollgate_storage::codec::decode::<OrderV1>(Self::COLLECTION, 1, payload)?.into(),
            ),
            2 => Ok(
                tollgate_storage::codec::decode::<OrderV2>(Self::COLLECTION, 2, payload)?.into(),
            ),
            3 => Ok(
                tollgate_storage::codec::decode::<OrderV3>(Self::COLLECTION, 3, payload)?.into(),
            ),
            4 => Ok(
                tollgate_storage::codec::decode::<OrderV4>(Self::COLLECTION, 4, payload)?.into(),
            ),
            5 => Ok(
                tollgate_storage::codec::decode::<OrderV5>(Self::COLLECTION, 5, payload)?.into(),
            ),
            6 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    /// Its changes are webhook events.
    const FEED: bool = true;
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
        ORDER_BY_PAYMENT,
    ];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    /// A refund reserved or released is not a change of the order (its webhooks wait for
    /// the refund's outcome).
    fn feed_digest(&self) -> Option<Vec<u8>> {
        let mut watched = self.clone();
        watched.refund_pending_amount = 0;
        watched.refund_pending_tax_amount = 0;
        tollgate_storage::codec::encode(&watched).ok()
    }

    /// Ties in every ordering break on creation time, then id.
    fn index_entries(&self) -> Vec<IndexEntry> {
        let org = self.organization_id.key();
        let created = self.created().into_vec();
        let mut entries: Vec<IndexEntry> = OrderSort::ALL
            .iter()
            .map(|&(_, sort)| IndexEntry::new(sort.index(), org.clone(), self.sort_key(sort)))
            .collect();
        entries.push(IndexEntry::new(
            ORDER_OF_CUSTOMER,
            self.customer_id.key(),
            created.clone(),
        ));
        entries.push(IndexEntry::new(
            ORDER_OF_PRODUCT,
            self.product_id.key(),
            created.clone(),
        ));
        if let Some(d) = self.discount_id {
            entries.push(IndexEntry::new(ORDER_OF_DISCOUNT, d.key(), created.clone()));
        }
        if let Some(p) = &self.payment_id {
            entries.push(IndexEntry::new(
                ORDER_BY_PAYMENT,
                p.as_bytes().to_vec(),
                created,
            ));
        }
        entries
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::checkout::{AppliedDiscount, Checkout, NewCheckout};
    use crate::domain::customer::Customer;
    use crate::domain::product::{Price, PriceKind};
    use chrono::{Duration, TimeZone};

    pub(crate) fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 1, 1, 12, 0, 0).unwrap()
    }

    pub(crate) fn checkout(kind: PriceKind, discount: Option<AppliedDiscount>) -> Checkout {
        let n = NewCheckout {
            id: CheckoutId::new(),
            organization_id: OrganizationId::new(),
            client_secret: "polar_c_x".into(),
            expires_at: t0() + Duration::minutes(30),
            product_id: ProductId::new(),
            price: Price {
                id: PriceId::new(),
                created_at: t0(),
                modified_at: None,
                is_archived: false,
                kind,
            },
            amount: None,
            discount,
            allow_discount_codes: true,
            customer_id: None,
            customer_name: None,
            customer_email: Some("jane@example.com".into()),
            customer_ip_address: None,
            customer_billing_address: None,
            customer_tax_id: None,
            customer_metadata: Metadata::default(),
            metadata: Metadata::default(),
            custom_field_data: CustomFieldData::default(),
            success_url: None,
            embed_origin: None,
            subscription_id: None,
            product_trial: None,
            seats: None,
            is_business_customer: false,
            customer_billing_name: None,
        };
        Checkout::create(n, t0(), None).unwrap()
    }

    pub(crate) fn customer(c: &Checkout) -> Customer {
        let mut customer = Customer::new(
            CustomerId::new(),
            c.organization_id,
            "jane@example.com".into(),
            t0(),
        );
        customer.billing_address = Some(Address {
            country: "FR".into(),
            ..Default::default()
        });
        customer
    }

    #[test]
    fn sort_keys_order_as_polar_does() {
        let c = checkout(
            PriceKind::OneTimeFixed {
                currency: "usd".into(),
                amount: 100,
            },
            None,
        );
        let cu = customer(&c);
        let a = Order::from_checkout(OrderId::new(), &c, &cu, "b", None, t0());
        let mut b = a.clone();
        b.amount = 50;
        b.discount_name = Some("z".into());
        b.product_name = "A".into();
        b.created_at = t0() + Duration::seconds(1);
        assert!(b.sort_key(OrderSort::Amount) < a.sort_key(OrderSort::Amount));
        assert!(b.sort_key(OrderSort::Product) < a.sort_key(OrderSort::Product));
        // No discount sorts after any discount ascending.
        assert!(b.sort_key(OrderSort::Discount) < a.sort_key(OrderSort::Discount));
        assert!(a.sort_key(OrderSort::CreatedAt) < b.sort_key(OrderSort::CreatedAt));
        // Every ordering is an index of the record.
        let names: Vec<&str> = a.index_entries().iter().map(|e| e.index).collect();
        for &(_, sort) in OrderSort::ALL {
            assert!(names.contains(&sort.index()));
        }
    }

    /// Every optional field set, a partial refund of a renewal (the enum variants last in
    /// their lists), and metadata and custom field data of every value kind.
    pub(crate) fn full_order() -> Order {
        use crate::golden::{address, at, custom_field_data, metadata, uuid};
        Order {
            id: OrderId(uuid(1)),
            organization_id: OrganizationId(uuid(2)),
            created_at: at(0),
            modified_at: Some(at(60)),
            status: OrderStatus::PartiallyRefunded,
            amount: 1500,
            tax_amount: 300,
            refunded_amount: 500,
            refunded_tax_amount: 100,
            currency: "usd".into(),
            billing_reason: BillingReason::SubscriptionUpdate,
            billing_address: Some(address()),
            customer_id: CustomerId(uuid(3)),
            product_id: ProductId(uuid(4)),
            product_price_id: PriceId(uuid(5)),
            recurring: true,
            discount_id: Some(DiscountId(uuid(6))),
            subscription_id: Some(SubscriptionId(uuid(7))),
            checkout_id: Some(CheckoutId(uuid(8))),
            metadata: metadata(),
            custom_field_data: custom_field_data(),
            customer_email: "jane@example.com".into(),
            product_name: "Pro".into(),
            discount_name: Some("Launch".into()),
            payment_id: Some("pi_1".into()),
            refund_pending_amount: 0,
            refund_pending_tax_amount: 0,
            seats: Some(5),
            next_payment_attempt_at: Some(at(120)),
            last_payment: Some(PaymentAttempt {
                intent_id: Some("pi_2".into()),
                status: PaymentAttemptStatus::Failed,
                error: Some("declined".into()),
                at: at(180),
            }),
            tax: OrderTax {
                behavior: crate::tax::TaxBehavior::Inclusive,
                breakdown: vec![crate::tax::TaxBreakdown {
                    country: "DE".into(),
                    subdivision: None,
                    name: "VAT".into(),
                    rate_ppm: 190_000,
                    taxable_amount: 1008,
                    amount: 192,
                    reason: crate::tax::TaxabilityReason::StandardRated,
                    regime: crate::tax::Regime::EuOss,
                }],
                billing_name: Some("Müller GmbH".into()),
                is_business: true,
                tax_id: None,
                tax_id_status: Some(crate::tax::TaxIdStatus::Unverified),
                provider_ref: None,
            },
            invoice: InvoiceState::Issued {
                number: "ACME-0001".into(),
                seq: 1,
            },
            usage_lines: vec![UsageLine {
                price_id: PriceId(uuid(9)),
                label: "API calls".into(),
                amount: 625,
                start: at(0),
                end: at(60),
            }],
        }
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let o6 = full_order();
        assert_eq!((Order::COLLECTION, Order::VERSION), ("order", 6));
        let v6 = o6.encode().unwrap_or_default();
        assert_eq!(Order::decode(6, &v6).ok(), Some(o6.clone()));
        // Version 6 is version 5 with the usage lines at the end; a version-5 order reads
        // with none.
        assert_eq!(
            crate::golden::hex(&v6[v6.len() - GOLDEN_V6_TAIL.len() / 2..]),
            GOLDEN_V6_TAIL,
            "order format v6 changed"
        );
        let v5 = v6[..v6.len() - GOLDEN_V6_TAIL.len() / 2].to_vec();
        let o5 = Order {
            usage_lines: Vec::new(),
            ..o6.clone()
        };
        assert_eq!(Order::decode(5, &v5).ok(), Some(o5.clone()));
        // Version 5 is version 4 with the tax and the invoice at the end; a version-4
        // order reads with no breakdown and no invoice.
        let o = Order {
            tax: OrderTax::default(),
            invoice: InvoiceState::None,
            ..o5.clone()
        };
        assert_eq!(
            crate::golden::hex(&v5),
            format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}0105{GOLDEN_V4_TAIL}{GOLDEN_V5_TAIL}"),
            "order format v5 changed"
        );
        let bytes = v5[..v5.len() - GOLDEN_V5_TAIL.len() / 2].to_vec();
        assert_eq!(
            crate::golden::hex(&v5[bytes.len()..]),
            GOLDEN_V5_TAIL,
            "order format v5 changed"
        );
        assert_eq!(Order::decode(4, &bytes).ok(), Some(o.clone()));
        // What an order written before version 4 reads as: no retry.
        let before_v4 = Order {
            next_payment_attempt_at: None,
            last_payment: None,
            tax: crate::domain::order::OrderTax::default(),
            invoice: crate::domain::order::InvoiceState::None,
            ..o.clone()
        };
        // Version 1 (golden bytes): read with no payment, nothing under way, no seats.
        let v1 = decode_hex(GOLDEN_V1);
        let old = Order::decode(1, &v1).expect("reading version 1");
        assert_eq!(
            old,
            Order {
                payment_id: None,
                seats: None,
                ..before_v4.clone()
            }
        );
        // Version 2 (golden bytes): version 1 with the payment and the refunds under way at
        // the end; read without seats.
        let v2 = decode_hex(&format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}"));
        let old = Order::decode(2, &v2).expect("reading version 2");
        assert_eq!(
            old,
            Order {
                seats: None,
                ..before_v4.clone()
            }
        );
        assert!(Order::decode(3, &v2).is_err());
        // Version 3 (golden bytes): version 2 with the seats (`Some(5)`: 01 05).
        let v3 = decode_hex(&format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}0105"));
        assert_eq!(Order::decode(3, &v3).expect("reading version 3"), before_v4);
        assert!(Order::decode(4, &v3).is_err());
        assert!(Order::decode(7, &bytes).is_err());
        // Version 4 is version 3 with the next attempt and the buyer's last charge at the
        // end.
        assert_eq!(
            crate::golden::hex(&bytes),
            format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}0105{GOLDEN_V4_TAIL}")
        );
        // Written again, a version-3 order is version 6 without a retry (two `None`s), tax,
        // invoice or usage line.
        let again = before_v4.encode().unwrap_or_default();
        assert_eq!(
            crate::golden::hex(&again),
            format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}01050000{GOLDEN_V5_EMPTY}00")
        );
    }

    /// A pending order was not paid; every other status was.
    #[test]
    fn only_a_pending_order_was_not_paid() {
        assert!(!OrderStatus::Pending.was_paid());
        assert_eq!(OrderStatus::Pending.as_str(), "pending");
        for s in [
            OrderStatus::Paid,
            OrderStatus::Refunded,
            OrderStatus::PartiallyRefunded,
        ] {
            assert!(s.was_paid(), "{s:?}");
        }
        // Appended: the earlier statuses keep their bytes, pending is the fourth.
        let bytes = tollgate_storage::codec::encode(&OrderStatus::Pending).unwrap_or_default();
        assert_eq!(crate::golden::hex(&bytes), "03");
    }

    /// A one-time seat-based purchase's order carries its seats; a fixed price's none.
    #[test]
    fn an_order_carries_the_seats_of_its_checkout() {
        use crate::domain::product::{SeatTier, SeatTierType, SeatTiers};
        let tiers = SeatTiers::new(
            SeatTierType::Volume,
            vec![SeatTier {
                min_seats: 1,
                max_seats: None,
                price_per_seat: 1000,
            }],
        )
        .expect("tiers");
        let mut c = checkout(
            PriceKind::OneTimeSeatBased {
                currency: "usd".into(),
                seat_tiers: tiers,
            },
            None,
        );
        c.seats = Some(3);
        let cu = customer(&c);
        let o = Order::from_checkout(OrderId::new(), &c, &cu, "Team", None, t0());
        assert_eq!(o.seats, Some(3));
        let fixed = checkout(
            PriceKind::OneTimeFixed {
                currency: "usd".into(),
                amount: 100,
            },
            None,
        );
        let o = Order::from_checkout(OrderId::new(), &fixed, &customer(&fixed), "b", None, t0());
        assert_eq!(o.seats, None);
    }

    fn decode_hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or(0))
            .collect()
    }

    const GOLDEN_V1: &str = "\
        1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30\
        315430303a30303a30305a0114313937302d30312d30315430303a30313a30305a02fbb80bfb5802fbe803c8\
        037573640301010931204d61696e2053740105417074203201074832582031593401084d6f6e747265616c01\
        0543412d51430243411000000000000000000000000000000003100000000000000000000000000000000410\
        0000000000000000000000000000000501011000000000000000000000000000000006011000000000000000\
        0000000000000000070110000000000000000000000000000000080304706c616e000370726f057365617473\
        010505747269616c020105056167726565030004626f726e0414323032342d30352d30315430303a30303a30\
        305a05636f756e74020e05656d70747900046e6f746501026869106a616e65406578616d706c652e636f6d03\
        50726f01064c61756e6368";

    const GOLDEN_V2_TAIL: &str = "010470695f310000";

    /// `Some(at(120))`, then `Some` attempt: `Some("pi_2")`, failed (2), `Some("declined")`,
    /// `at(180)`.
    /// Format version 5's tax (inclusive, one German line of 1.92 on 10.08, a business
    /// with a billing name) and invoice (`ACME-0001`).
    const GOLDEN_V5_TAIL: &str = "00010244450003564154fc30e60200fbe007fb80010001010c4dc3bc6c6c657220476d62480100010000020941434d452d3030303101";
    /// The same of an order without tax or invoice.
    const GOLDEN_V5_EMPTY: &str = "0100000000000000";
    /// Format version 6's usage line: price 9, "API calls", 625, from `at(0)` to `at(60)`.
    const GOLDEN_V6_TAIL: &str = "011000000000000000000000000000000009094150492063616c6c73fbe20414313937302d30312d30315430303a30303a30305a14313937302d30312d30315430303a30313a30305a";
    const GOLDEN_V4_TAIL: &str = "0114313937302d30312d30315430303a30323a30305a01010470695f320201086465636c696e656414313937302d30312d30315430303a30333a30305a";
}

#[cfg(test)]
mod spread_tests {
    use super::spread;

    #[test]
    fn parts_add_up_and_follow_the_weights() {
        assert_eq!(spread(100, &[1, 1, 1]), vec![34, 33, 33]);
        assert_eq!(spread(1000, &[1500, 625]), vec![706, 294]);
        assert_eq!(spread(7, &[0, 0]), vec![7, 0]);
        assert_eq!(spread(0, &[5, 5]), vec![0, 0]);
        assert_eq!(spread(-10, &[1, 1]), vec![-5, -5]);
        assert!(spread(5, &[]).is_empty());
        for total in [0i64, 1, 99, 12_345] {
            let parts = spread(total, &[3, 0, 7, 11]);
            assert_eq!(parts.iter().sum::<i64>(), total);
        }
    }
}
