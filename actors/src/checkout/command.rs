//! The commands the checkout use cases take: create a checkout ([`CreateCheckout`], for a
//! [`CheckoutTarget`]) and change an open one ([`ChangeCheckout`]), parsed from request
//! bodies by the adapters (every check that needs no store done there); what they name
//! (products, prices, discounts, customers, the product's custom fields) is checked by the
//! use case.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::Changes;
use crate::domain::currency::Currency;
use crate::domain::customer::Address;
use crate::domain::ids::{CustomerId, DiscountId, PriceId, ProductId, SubscriptionId};
use crate::domain::metadata::Metadata;
use crate::domain::product::Trial;

/// What a checkout is created for.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckoutTarget {
    /// Products the buyer may choose between (at least one, unique): the first one is
    /// selected, at its first active price.
    Products(Vec<ProductId>),
    /// A price (of its product).
    Price(PriceId),
    /// A product, at its first active price.
    Product(ProductId),
}

/// Create a checkout: the fields of a create body, parsed; what they name (products,
/// price, discount, customer, the product's custom fields) is checked by the use case.
#[derive(Debug, Clone)]
pub struct CreateCheckout {
    pub target: CheckoutTarget,
    pub amount: Option<i64>,
    /// The seats to buy at a seat-based price (`None`: its fewest).
    pub seats: Option<u32>,
    /// The seller's bounds on the seats, narrowing the price's own (a seat-based price
    /// only).
    pub min_seats: Option<u32>,
    pub max_seats: Option<u32>,
    pub discount_id: Option<DiscountId>,
    pub allow_discount_codes: bool,
    /// A customer of the organization, whose details fill the ones left empty.
    pub customer_id: Option<CustomerId>,
    pub customer_name: Option<String>,
    pub customer_email: Option<String>,
    pub customer_ip_address: Option<String>,
    pub customer_billing_address: Option<Address>,
    /// Checked against the billing address as an update would.
    pub customer_tax_id: Option<String>,
    /// Buying as a business (Polar's `is_business_customer`), and its billing name.
    pub is_business_customer: bool,
    pub customer_billing_name: Option<String>,
    pub customer_metadata: Metadata,
    pub metadata: Metadata,
    pub custom_field_data: CustomFieldInput,
    /// A subscription to upgrade (not supported: refused as unknown).
    pub subscription_id: Option<SubscriptionId>,
    pub success_url: Option<String>,
    pub embed_origin: Option<String>,
    /// The checkout's own expiry (the configured time to live when `None`).
    pub expires_at: Option<DateTime<Utc>>,
    pub require_billing_address: bool,
    pub allow_trial: bool,
    pub external_customer_id: Option<String>,
    pub return_url: Option<String>,
    /// The checkout's own trial.
    pub trial: Option<Trial>,
    /// The currency the seller asks for (Polar's `currency`): else the buyer's country's,
    /// else the organization's default, the first the product sells in.
    pub currency: Option<Currency>,
    /// Polar's `locale`: a BCP 47 tag, normalized ([`crate::domain::locale::normalize_tag`]).
    pub locale: Option<String>,
}

/// Change an open checkout: the fields of an update or confirm body, parsed. `None` leaves
/// a field unchanged, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct ChangeCheckout {
    /// Another product of the checkout's list.
    pub product_id: Option<ProductId>,
    /// A price of the (new or current) product, or of another product of the list.
    pub price_id: Option<PriceId>,
    /// The organizer's discount: applied or removed.
    pub discount_id: Option<Option<DiscountId>>,
    /// The buyer's discount code: applied or removed (when the checkout allows codes).
    pub discount_code: Option<Option<String>>,
    /// Custom field data to check against the product's fields (an empty object is none).
    pub custom_field_data: Option<CustomFieldInput>,
    /// Another currency (the organizer's `currency`): the product's prices in it.
    pub currency: Option<Currency>,
    /// Every other change, checked.
    pub changes: Changes,
}

/// A command's custom field data as given (a JSON object by field slug, as sent), checked
/// against the fields attached to its product once they are known.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomFieldInput(Value);

impl CustomFieldInput {
    pub fn new(data: Value) -> Self {
        CustomFieldInput(data)
    }

    /// None given: an empty object.
    pub fn empty() -> Self {
        CustomFieldInput(Value::Object(Default::default()))
    }

    /// The data as sent, for the checks against the product's fields.
    pub fn as_sent(&self) -> &Value {
        &self.0
    }
}
