//! Checkout sessions in Polar's shapes: the create, update, public update and confirm
//! bodies, and the three renderings (`Checkout` for tokens, `CheckoutPublic` for the client
//! secret, `CheckoutPublicConfirmed` for confirm) with their `CheckoutStatus`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::custom_field::AttachedCustomFieldView;
use super::custom_field_data::{custom_field_data_json, CustomFieldDataMap};
use super::customer::AddressView;
use super::discount::CheckoutDiscount;
use super::metadata::{metadata_map, MetadataMap};
use super::organization::OrganizationView;
use super::product::{CheckoutProduct, ProductPrice};
use super::Maybe;
use crate::api::free_form::CustomFieldValue;
use tollgate_actors::checkout::{self as domain, Checkout};

#[path = "checkout_changes.rs"]
pub mod changes;
#[path = "checkout_create.rs"]
pub mod create;

/// The currency of checkouts whose price has none (free prices): Tollgate sells in US
/// dollars only.
pub const DEFAULT_CURRENCY: &str = crate::domain::currency::Currency::DEFAULT.code();

/// Creates a checkout for products the buyer may choose between (`products`, Polar's
/// `CheckoutProductsCreate`: the first one's first price is selected), for a product's
/// first price (`product_id`) or for a price (`product_price_id`).
#[derive(Debug, Deserialize, ToSchema)]
pub struct CheckoutCreate {
    // Checked by the handler, for Polar's error ("Input should be 'stripe'").
    #[schema(value_type = Option<PaymentProcessor>, nullable = false)]
    pub payment_processor: Option<String>,
    /// Unique, of one organization, each with a price; the first is selected.
    #[serde(default)]
    #[schema(nullable = false)]
    pub products: Option<Vec<Uuid>>,
    #[schema(nullable = false)]
    pub product_price_id: Option<Uuid>,
    #[schema(nullable = false)]
    pub product_id: Option<Uuid>,
    pub amount: Option<i64>,
    pub discount_id: Option<Uuid>,
    #[schema(nullable = false)]
    pub allow_discount_codes: Option<bool>,
    pub customer_id: Option<Uuid>,
    pub customer_name: Option<String>,
    pub customer_email: Option<String>,
    pub customer_ip_address: Option<String>,
    // Parsed with [`super::customer::parse_address`].
    #[schema(value_type = Option<crate::api::free_form::AddressInput>)]
    pub customer_billing_address: Option<Value>,
    pub customer_tax_id: Option<String>,
    // Parsed with [`super::metadata::parse_metadata`].
    #[serde(default)]
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub customer_metadata: Option<Value>,
    // Parsed with [`super::metadata::parse_metadata`].
    #[serde(default)]
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: Option<Value>,
    // Checked against the product's fields with
    // [`super::custom_field_data::validate_custom_field_data`].
    #[serde(default)]
    #[schema(value_type = std::collections::HashMap<String, crate::api::free_form::CustomFieldInput>)]
    pub custom_field_data: Option<Value>,
    pub subscription_id: Option<Uuid>,
    pub success_url: Option<String>,
    pub embed_origin: Option<String>,
    /// Tollgate extension: between 1 minute and 24 hours from now.
    #[schema(nullable = false)]
    pub expires_at: Option<DateTime<Utc>>,
    /// Ask for a full billing address, not only the country (default `false`; a billing
    /// address given with its lines turns it on, as Polar does).
    #[schema(nullable = false)]
    pub require_billing_address: Option<bool>,
    /// Default `true`. Tollgate's products have no trials, so it changes nothing.
    #[schema(nullable = false)]
    pub allow_trial: Option<bool>,
    /// The buyer's id in the seller's system (Polar also reads `customer_external_id`).
    #[serde(alias = "customer_external_id")]
    pub external_customer_id: Option<String>,
    /// Where the page's back link leads.
    pub return_url: Option<String>,
    /// The buyer's language: any valid BCP 47 tag (kept normalized, `de-at` → `de-AT`).
    /// The pages and e-mails speak it when Tollgate has it; else (or when `null`) the
    /// browser's language, then the organization's default, then English.
    pub locale: Option<String>,
    /// The checkout's currency (Polar's `PresentmentCurrency`, lowercase): the product must
    /// sell in it. Without it: the currency of the country of `customer_ip_address` (with a
    /// GeoIP database configured), else the organization's default.
    pub currency: Option<String>,
    /// Not supported: `false` only.
    #[schema(nullable = false)]
    pub is_business_customer: Option<bool>,
    /// Not supported (business purchases).
    pub customer_billing_name: Option<String>,
    /// Not supported: ad-hoc prices by product id.
    #[schema(value_type = Option<std::collections::HashMap<String, Vec<crate::api::product::ProductPriceCreate>>>)]
    pub prices: Option<Value>,
    /// Not supported (seat-based prices).
    pub seats: Option<i64>,
    pub min_seats: Option<i64>,
    pub max_seats: Option<i64>,
    /// Not supported (unit-based prices).
    pub units: Option<i64>,
    pub min_units: Option<i64>,
    pub max_units: Option<i64>,
    /// Not supported (trials).
    #[schema(value_type = Option<TrialInterval>)]
    pub trial_interval: Option<String>,
    pub trial_interval_count: Option<i64>,
}

/// The 2026 fields of the organizer's update (Polar's `CheckoutUpdate`) beside the seed's,
/// as [`CheckoutChanges`] carries them.
#[derive(Debug, Default, Clone)]
pub struct CheckoutTermsUpdate {
    pub require_billing_address: Maybe<bool>,
    pub return_url: Maybe<String>,
    pub currency: Maybe<String>,
    pub trial_interval: Maybe<String>,
    pub trial_interval_count: Maybe<i64>,
}

/// The 2026 fields every update and confirm body takes (Polar's `CheckoutUpdateBase` and
/// `CheckoutUpdatePublic`), as [`CheckoutChanges`] carries them; what Tollgate does not
/// sell is refused when set.
#[derive(Debug, Default, Clone)]
pub struct CheckoutBuyerUpdate {
    pub is_business_customer: Maybe<bool>,
    pub customer_billing_name: Maybe<String>,
    pub seats: Maybe<i64>,
    pub units: Maybe<i64>,
    pub locale: Maybe<String>,
    pub payment_method_type: Maybe<String>,
    pub allow_trial: Maybe<bool>,
}

/// Updates an open checkout by id (organizer side). A key left out is unchanged.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CheckoutUpdate {
    #[serde(default)]
    #[schema(value_type = Option<std::collections::HashMap<String, crate::api::free_form::CustomFieldInput>>)]
    pub custom_field_data: Maybe<Value>,
    /// Another product of the checkout's list (its first price, or `product_price_id`).
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    pub product_id: Maybe<Uuid>,
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    pub product_price_id: Maybe<Uuid>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub amount: Maybe<i64>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_name: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_email: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::AddressInput>)]
    pub customer_billing_address: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_tax_id: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::Metadata>)]
    pub metadata: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    pub discount_id: Maybe<Uuid>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub allow_discount_codes: Maybe<bool>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_ip_address: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::Metadata>)]
    pub customer_metadata: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub success_url: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub embed_origin: Maybe<String>,
    /// Ask for a full billing address, not only the country.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub require_billing_address: Maybe<bool>,
    /// Tollgate's products have no trials, so it changes nothing.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub allow_trial: Maybe<bool>,
    /// Where the page's back link leads.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub return_url: Maybe<String>,
    /// Another currency the product sells in (its prices in that currency).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub currency: Maybe<String>,
    /// Not supported (trials).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub trial_interval: Maybe<String>,
    /// Not supported (trials).
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub trial_interval_count: Maybe<i64>,
    /// Not supported: `false` or `null` only.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub is_business_customer: Maybe<bool>,
    /// Not supported (business purchases).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_billing_name: Maybe<String>,
    /// Not supported (seat-based prices).
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub seats: Maybe<i64>,
    /// Not supported (unit-based prices).
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub units: Maybe<i64>,
    /// The buyer's language: any valid BCP 47 tag (see `CheckoutCreate.locale`).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub locale: Maybe<String>,
}

/// Updates an open checkout by its client secret (buyer side). A key left out is
/// unchanged.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CheckoutUpdatePublic {
    #[serde(default)]
    #[schema(value_type = Option<std::collections::HashMap<String, crate::api::free_form::CustomFieldInput>>)]
    pub custom_field_data: Maybe<Value>,
    /// Another product of the checkout's list (its first price, or `product_price_id`).
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    pub product_id: Maybe<Uuid>,
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    pub product_price_id: Maybe<Uuid>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub amount: Maybe<i64>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_name: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_email: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::AddressInput>)]
    pub customer_billing_address: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_tax_id: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub discount_code: Maybe<String>,
    /// Not supported: `false` or `null` only.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub is_business_customer: Maybe<bool>,
    /// Not supported (business purchases).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_billing_name: Maybe<String>,
    /// Not supported (seat-based prices).
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub seats: Maybe<i64>,
    /// Not supported (unit-based prices).
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub units: Maybe<i64>,
    /// The buyer's language: any valid BCP 47 tag (see `CheckoutCreate.locale`).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub locale: Maybe<String>,
    /// `card`, the only method Tollgate's processors take.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub payment_method_type: Maybe<String>,
    /// `false` (or `null`) only, to turn a trial off.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub allow_trial: Maybe<bool>,
}

/// Confirms a checkout: the public update fields plus the payment's confirmation token.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CheckoutConfirm {
    #[serde(default)]
    #[schema(value_type = Option<std::collections::HashMap<String, crate::api::free_form::CustomFieldInput>>)]
    pub custom_field_data: Maybe<Value>,
    /// Another product of the checkout's list (its first price, or `product_price_id`).
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    pub product_id: Maybe<Uuid>,
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    pub product_price_id: Maybe<Uuid>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub amount: Maybe<i64>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_name: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_email: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::AddressInput>)]
    pub customer_billing_address: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_tax_id: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub discount_code: Maybe<String>,
    /// The payment method, confirmed by the payment processor's client.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub confirmation_token_id: Maybe<String>,
    /// Not supported: `false` or `null` only.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub is_business_customer: Maybe<bool>,
    /// Not supported (business purchases).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub customer_billing_name: Maybe<String>,
    /// Not supported (seat-based prices).
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub seats: Maybe<i64>,
    /// Not supported (unit-based prices).
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub units: Maybe<i64>,
    /// The buyer's language: any valid BCP 47 tag (see `CheckoutCreate.locale`).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub locale: Maybe<String>,
    /// `card`, the only method Tollgate's processors take.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub payment_method_type: Maybe<String>,
    /// `false` (or `null`) only, to turn a trial off.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub allow_trial: Maybe<bool>,
}

/// The fields of the three update bodies in one place, as the routes resolve them against
/// the checkout (`app::checkout::fields::resolve_changes`); each body leaves the fields
/// it does not accept absent.
#[derive(Debug, Clone, Default)]
pub struct CheckoutChanges {
    pub product_id: Maybe<Uuid>,
    pub product_price_id: Maybe<Uuid>,
    pub amount: Maybe<i64>,
    pub customer_name: Maybe<String>,
    pub customer_email: Maybe<String>,
    pub customer_billing_address: Maybe<Value>,
    pub customer_tax_id: Maybe<String>,
    pub custom_field_data: Maybe<Value>,
    // Organizer side only.
    pub metadata: Maybe<Value>,
    pub discount_id: Maybe<Uuid>,
    pub allow_discount_codes: Maybe<bool>,
    pub customer_ip_address: Maybe<String>,
    pub customer_metadata: Maybe<Value>,
    pub success_url: Maybe<String>,
    pub embed_origin: Maybe<String>,
    // Client side only.
    pub discount_code: Maybe<String>,
    // Polar's 2026 fields.
    pub terms: CheckoutTermsUpdate,
    pub buyer: CheckoutBuyerUpdate,
}

impl From<CheckoutUpdate> for CheckoutChanges {
    fn from(u: CheckoutUpdate) -> Self {
        CheckoutChanges {
            product_id: u.product_id,
            product_price_id: u.product_price_id,
            amount: u.amount,
            customer_name: u.customer_name,
            customer_email: u.customer_email,
            customer_billing_address: u.customer_billing_address,
            customer_tax_id: u.customer_tax_id,
            custom_field_data: u.custom_field_data,
            metadata: u.metadata,
            discount_id: u.discount_id,
            allow_discount_codes: u.allow_discount_codes,
            customer_ip_address: u.customer_ip_address,
            customer_metadata: u.customer_metadata,
            success_url: u.success_url,
            embed_origin: u.embed_origin,
            discount_code: Maybe::Absent,
            terms: CheckoutTermsUpdate {
                require_billing_address: u.require_billing_address,
                return_url: u.return_url,
                currency: u.currency,
                trial_interval: u.trial_interval,
                trial_interval_count: u.trial_interval_count,
            },
            buyer: CheckoutBuyerUpdate {
                is_business_customer: u.is_business_customer,
                customer_billing_name: u.customer_billing_name,
                seats: u.seats,
                units: u.units,
                locale: u.locale,
                payment_method_type: Maybe::Absent,
                allow_trial: u.allow_trial,
            },
        }
    }
}

impl From<CheckoutUpdatePublic> for CheckoutChanges {
    fn from(u: CheckoutUpdatePublic) -> Self {
        CheckoutChanges {
            product_id: u.product_id,
            product_price_id: u.product_price_id,
            amount: u.amount,
            customer_name: u.customer_name,
            customer_email: u.customer_email,
            customer_billing_address: u.customer_billing_address,
            customer_tax_id: u.customer_tax_id,
            custom_field_data: u.custom_field_data,
            discount_code: u.discount_code,
            buyer: CheckoutBuyerUpdate {
                is_business_customer: u.is_business_customer,
                customer_billing_name: u.customer_billing_name,
                seats: u.seats,
                units: u.units,
                locale: u.locale,
                payment_method_type: u.payment_method_type,
                allow_trial: u.allow_trial,
            },
            ..CheckoutChanges::default()
        }
    }
}

impl CheckoutConfirm {
    /// The update part of the body, and the confirmation token when one is given.
    pub fn split(self) -> (CheckoutChanges, Option<String>) {
        let token = match self.confirmation_token_id {
            Maybe::Value(t) => Some(t),
            Maybe::Null | Maybe::Absent => None,
        };
        let changes = CheckoutUpdatePublic {
            custom_field_data: self.custom_field_data,
            product_id: self.product_id,
            product_price_id: self.product_price_id,
            amount: self.amount,
            customer_name: self.customer_name,
            customer_email: self.customer_email,
            customer_billing_address: self.customer_billing_address,
            customer_tax_id: self.customer_tax_id,
            discount_code: self.discount_code,
            is_business_customer: self.is_business_customer,
            customer_billing_name: self.customer_billing_name,
            seats: self.seats,
            units: self.units,
            locale: self.locale,
            payment_method_type: self.payment_method_type,
            allow_trial: self.allow_trial,
        };
        (changes.into(), token)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckoutStatus {
    Open,
    Expired,
    Confirmed,
    Succeeded,
    Failed,
}

impl From<domain::CheckoutStatus> for CheckoutStatus {
    fn from(s: domain::CheckoutStatus) -> Self {
        use domain::CheckoutStatus as S;
        match s {
            S::Open => CheckoutStatus::Open,
            S::Expired => CheckoutStatus::Expired,
            S::Confirmed => CheckoutStatus::Confirmed,
            S::Succeeded => CheckoutStatus::Succeeded,
            S::Failed => CheckoutStatus::Failed,
        }
    }
}

/// The status of a checkout the confirm answer shows: always `confirmed` (Polar's clients
/// expect it; a later read shows how the payment went).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckoutStatusConfirmed {
    Confirmed,
}

/// The payment processor of a checkout: always Stripe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PaymentProcessor {
    Stripe,
}

/// How a checkout's tax relates to its amounts: inside the price or added to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaxBehavior {
    Inclusive,
    Exclusive,
}

/// The unit of a trial period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrialInterval {
    Day,
    Week,
    Month,
    Year,
}

impl From<crate::domain::product::RecurringInterval> for TrialInterval {
    fn from(i: crate::domain::product::RecurringInterval) -> Self {
        use crate::domain::product::RecurringInterval as I;
        match i {
            I::Day => TrialInterval::Day,
            I::Week => TrialInterval::Week,
            I::Month => TrialInterval::Month,
            I::Year => TrialInterval::Year,
        }
    }
}

/// Whether the checkout page asks for a line of the billing address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = BillingAddressFieldMode)]
pub enum FieldModeView {
    Required,
    Optional,
    Disabled,
}

impl From<domain::FieldMode> for FieldModeView {
    fn from(m: domain::FieldMode) -> Self {
        match m {
            domain::FieldMode::Required => FieldModeView::Required,
            domain::FieldMode::Optional => FieldModeView::Optional,
            domain::FieldMode::Disabled => FieldModeView::Disabled,
        }
    }
}

/// Which lines of the billing address the checkout page asks for, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = CheckoutBillingAddressFields)]
pub struct BillingAddressFieldsView {
    pub country: FieldModeView,
    pub state: FieldModeView,
    pub city: FieldModeView,
    pub postal_code: FieldModeView,
    pub line1: FieldModeView,
    pub line2: FieldModeView,
}

impl From<domain::BillingAddressFields> for BillingAddressFieldsView {
    fn from(f: domain::BillingAddressFields) -> Self {
        BillingAddressFieldsView {
            country: f.country.into(),
            state: f.state.into(),
            city: f.city.into(),
            postal_code: f.postal_code.into(),
            line1: f.line1.into(),
            line2: f.line2.into(),
        }
    }
}

/// What the renderings need besides the checkout itself, read from the store by the
/// routes: the hosted page's URLs and the products as they are now.
#[derive(Debug, Clone)]
pub struct CheckoutContext {
    pub url: String,
    pub success_url: String,
    /// The selected product.
    pub product: CheckoutProduct,
    pub product_price: ProductPrice,
    /// Every product of the checkout, in its order (the selected one among them).
    pub products: Vec<CheckoutProduct>,
    pub attached_custom_fields: Vec<AttachedCustomFieldView>,
}

impl CheckoutContext {
    /// Each product's prices by product id (Polar's `prices`): those it sells.
    fn prices(&self) -> BTreeMap<Uuid, Vec<ProductPrice>> {
        self.products
            .iter()
            .map(|p| (p.id, p.prices.clone()))
            .collect()
    }
}

/// A checkout rendering: the fields every form shares, then the form's own; `build` fills
/// the shared fields from the record and its context.
macro_rules! checkout_schema {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, Serialize, ToSchema)]
        $(#[$doc])*
        pub struct $name {
            pub id: Uuid,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            pub payment_processor: PaymentProcessor,
            pub client_secret: String,
            pub url: String,
            pub expires_at: DateTime<Utc>,
            pub success_url: String,
            /// Where the page's back link leads.
            pub return_url: Option<String>,
            pub embed_origin: Option<String>,
            /// The buyer's language as set (a normalized BCP 47 tag); `null`: chosen by
            /// the browser, then the organization's default.
            pub locale: Option<String>,
            /// Before discount and tax (0 for a free price).
            pub amount: i64,
            /// The seats bought at a seat-based price, with the fewest and most on sale (the
            /// price's, narrowed by the seller's `min_seats` and `max_seats` of create;
            /// `null` for other prices; `max_seats` also when unlimited). Tollgate
            /// has no unit-based prices: `units` and its bounds are always `null`.
            pub seats: Option<i64>,
            pub min_seats: Option<i64>,
            pub max_seats: Option<i64>,
            pub units: Option<i64>,
            pub min_units: Option<i64>,
            pub max_units: Option<i64>,
            pub discount_amount: i64,
            /// After discount, before tax (for an inclusive price, the subtotal less the
            /// tax in it).
            pub net_amount: i64,
            pub tax_amount: Option<i64>,
            /// Whether the tax is inside the price (`inclusive`) or added to it
            /// (`exclusive`), once computed; `null` before.
            pub tax_behavior: Option<TaxBehavior>,
            /// The tax per jurisdiction and rate (Tollgate's; empty: none).
            pub tax_breakdown: Vec<crate::api::tax::TaxBreakdownView>,
            pub currency: String,
            /// After discount (for an inclusive price, tax included).
            pub subtotal_amount: i64,
            pub total_amount: i64,
            pub allow_trial: Option<bool>,
            pub active_trial_interval: Option<TrialInterval>,
            pub active_trial_interval_count: Option<i64>,
            pub trial_end: Option<DateTime<Utc>>,
            pub organization_id: Uuid,
            pub product_id: Uuid,
            pub product_price_id: Uuid,
            pub discount_id: Option<Uuid>,
            pub allow_discount_codes: bool,
            /// The buyer must give a full billing address, not only the country.
            pub require_billing_address: bool,
            pub is_discount_applicable: bool,
            pub is_free_product_price: bool,
            pub is_payment_required: bool,
            pub is_payment_setup_required: bool,
            pub is_payment_form_required: bool,
            pub customer_id: Option<Uuid>,
            /// Buying as a business: a billing name and a full address are required, and
            /// a valid VAT number of another EU state is reverse-charged.
            pub is_business_customer: bool,
            pub customer_name: Option<String>,
            pub customer_email: Option<String>,
            pub customer_ip_address: Option<String>,
            /// The business's name on the invoice.
            pub customer_billing_name: Option<String>,
            pub customer_billing_address: Option<AddressView>,
            pub customer_tax_id: Option<String>,
            /// What the buyer chose on the page (`card`).
            pub payment_method_type: Option<String>,
            pub payment_processor_metadata: BTreeMap<String, String>,
            pub billing_address_fields: BillingAddressFieldsView,
            #[schema(value_type = std::collections::HashMap<String, CustomFieldValue>)]
            pub custom_field_data: CustomFieldDataMap,
            /// The products the buyer may choose between.
            pub products: Vec<CheckoutProduct>,
            pub product: CheckoutProduct,
            pub product_price: ProductPrice,
            /// Each product's prices, by product id.
            #[schema(value_type = std::collections::HashMap<String, Vec<ProductPrice>>)]
            pub prices: BTreeMap<Uuid, Vec<ProductPrice>>,
            pub discount: Option<CheckoutDiscount>,
            pub attached_custom_fields: Vec<AttachedCustomFieldView>,
            $($(#[$fdoc])* pub $field: $ty,)*
        }

        impl $name {
            // One argument per field of the form, as the form lists them.
            #[allow(clippy::too_many_arguments)]
            fn build(c: &Checkout, ctx: CheckoutContext, $($field: $ty),*) -> Self {
                let prices = ctx.prices();
                Self {
                    id: c.id.0,
                    created_at: c.created_at,
                    modified_at: c.modified_at,
                    payment_processor: PaymentProcessor::Stripe,
                    client_secret: c.client_secret.clone(),
                    url: ctx.url,
                    expires_at: c.expires_at,
                    success_url: ctx.success_url,
                    return_url: c.return_url.clone(),
                    embed_origin: c.embed_origin.clone(),
                    locale: c.locale.clone(),
                    amount: c.amount.unwrap_or(0),
                    seats: c.seats.map(i64::from),
                    min_seats: c.seat_range().map(|(min, _)| i64::from(min)),
                    max_seats: c.seat_range().and_then(|(_, max)| max).map(i64::from),
                    units: None,
                    min_units: None,
                    max_units: None,
                    discount_amount: c.discount_amount(),
                    net_amount: c.net_amount().unwrap_or(0),
                    tax_amount: c.tax_amount,
                    tax_behavior: c.tax_amount.map(|_| match c.tax_behavior {
                        Some(tollgate_actors::tax::TaxBehavior::Inclusive) => {
                            TaxBehavior::Inclusive
                        }
                        _ => TaxBehavior::Exclusive,
                    }),
                    tax_breakdown: crate::api::tax::breakdown_view(&c.tax_breakdown),
                    currency: c.currency.clone().unwrap_or_else(|| DEFAULT_CURRENCY.into()),
                    subtotal_amount: c.subtotal_amount().unwrap_or(0),
                    total_amount: c.total_amount().unwrap_or(0),
                    allow_trial: Some(c.allow_trial),
                    active_trial_interval: c.active_trial().map(|t| t.interval.into()),
                    active_trial_interval_count: c.active_trial().map(|t| i64::from(t.count)),
                    trial_end: c.trial_end,
                    organization_id: c.organization_id.0,
                    product_id: c.product_id.0,
                    product_price_id: c.price.id.0,
                    discount_id: c.discount.as_ref().map(|d| d.id.0),
                    allow_discount_codes: c.allow_discount_codes,
                    require_billing_address: c.require_billing_address,
                    is_discount_applicable: c.is_discount_applicable(),
                    is_free_product_price: c.is_free_product_price(),
                    is_payment_required: c.is_payment_required(),
                    is_payment_setup_required: c.is_payment_setup_required(),
                    is_payment_form_required: c.is_payment_form_required(),
                    customer_id: c.customer_id.map(|id| id.0),
                    is_business_customer: c.is_business_customer,
                    customer_name: c.customer_name.clone(),
                    customer_email: c.customer_email.clone(),
                    customer_ip_address: c.customer_ip_address.clone(),
                    customer_billing_name: c.customer_billing_name.clone(),
                    customer_billing_address: c
                        .customer_billing_address
                        .as_ref()
                        .map(AddressView::from),
                    customer_tax_id: c.customer_tax_id.as_ref().map(|t| t.value.clone()),
                    payment_method_type: c.payment_method_type.clone(),
                    payment_processor_metadata: c.payment_processor_metadata.clone(),
                    billing_address_fields: c.billing_address_fields().into(),
                    custom_field_data: custom_field_data_json(&c.custom_field_data),
                    prices,
                    products: ctx.products,
                    product: ctx.product,
                    product_price: ctx.product_price,
                    discount: c.discount.as_ref().map(CheckoutDiscount::from),
                    attached_custom_fields: ctx.attached_custom_fields,
                    $($field,)*
                }
            }
        }
    };
}

checkout_schema!(
    /// A checkout session as its organization sees it.
    #[schema(as = Checkout)]
    CheckoutView {
        status: CheckoutStatus,
        #[schema(value_type = crate::api::free_form::Metadata)]
        metadata: MetadataMap,
        #[schema(value_type = crate::api::free_form::Metadata)]
        customer_metadata: MetadataMap,
        subscription_id: Option<Uuid>,
        /// The buyer's id in the seller's system, handed to the customer the purchase
        /// creates.
        external_customer_id: Option<String>,
        /// The checkout's own trial period, instead of the product's (`null`: the
        /// product's applies, if it has one).
        trial_interval: Option<TrialInterval>,
        trial_interval_count: Option<i64>,
    }
);

checkout_schema!(
    /// A checkout session as the buyer sees it through the client secret.
    CheckoutPublic {
        status: CheckoutStatus,
        organization: OrganizationView,
    }
);

checkout_schema!(
    /// A confirmed checkout session, with the buyer's customer session token.
    CheckoutPublicConfirmed {
        status: CheckoutStatusConfirmed,
        organization: OrganizationView,
        customer_session_token: String,
    }
);

impl CheckoutView {
    /// `Checkout`: what token holders see; `status` is the checkout's as seen now.
    pub fn new(c: &Checkout, status: domain::CheckoutStatus, ctx: CheckoutContext) -> Self {
        CheckoutView::build(
            c,
            ctx,
            status.into(),
            metadata_map(&c.metadata),
            metadata_map(&c.customer_metadata),
            c.subscription_id.map(|s| s.0),
            c.external_customer_id.clone(),
            c.trial.map(|t| t.interval.into()),
            c.trial.map(|t| i64::from(t.count)),
        )
    }
}

impl CheckoutPublic {
    /// `CheckoutPublic`: what the buyer sees through the client secret; no metadata, plus
    /// the seller organization.
    pub fn new(
        c: &Checkout,
        status: domain::CheckoutStatus,
        ctx: CheckoutContext,
        organization: OrganizationView,
    ) -> Self {
        CheckoutPublic::build(c, ctx, status.into(), organization)
    }
}

impl CheckoutPublicConfirmed {
    /// The confirm answer: the public checkout shown as `confirmed`, with the token of the
    /// customer session confirm opened.
    pub fn new(
        c: &Checkout,
        ctx: CheckoutContext,
        organization: OrganizationView,
        customer_session_token: String,
    ) -> Self {
        CheckoutPublicConfirmed::build(
            c,
            ctx,
            CheckoutStatusConfirmed::Confirmed,
            organization,
            customer_session_token,
        )
    }
}

#[cfg(test)]
#[path = "checkout_tests.rs"]
mod tests;
#[cfg(test)]
pub(crate) use tests::{sample_checkouts, samples};
