//! The schemas of the OpenAPI document: one Rust type per Polar model the service sends or
//! accepts. The views in `crate::api` build their JSON by hand (key order and Polar's
//! quirks), so these types describe that JSON; the integration tests validate every
//! response they receive against them (`tests/api/helpers.rs`), which keeps the two in step.
//!
//! Conventions: an `Option` is a key that is always sent, `null` when unset (the document
//! marks every response property required, see `super::finish`); request bodies use
//! `#[serde(default)]`-style optional keys instead.
#![allow(dead_code)] // Documentation types: they are described, never built.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// One-value enums: the constant `type` and `amount_type` tags of the unions.
macro_rules! tag {
    ($name:ident = $value:tt) => {
        #[derive(Serialize, Deserialize, ToSchema)]
        pub enum $name {
            #[serde(rename = $value)]
            Value,
        }
    };
}

tag!(TagStripe = "stripe");
tag!(TagConfirmed = "confirmed");

// ---------------------------------------------------------------------------------------
// Shared
// ---------------------------------------------------------------------------------------

/// A metadata value: string, integer or boolean.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum MetadataValue {
    String(String),
    Integer(i64),
    Boolean(bool),
}

/// Up to 50 keys of at most 40 characters; string values of at most 500 characters.
pub type Metadata = HashMap<String, MetadataValue>;

/// A custom-field value as sent: string (text, select, date-time), integer or boolean.
/// Fields left empty are not sent.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum CustomFieldValue {
    String(String),
    Integer(i64),
    Boolean(bool),
}

/// A custom-field value in a request; null leaves an optional field empty.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
pub enum CustomFieldInput {
    String(String),
    Integer(i64),
    Boolean(bool),
    Null,
}

/// `{items, pagination}`: the body of every list response, one schema per item type.
macro_rules! list_resource {
    ($($name:ident => $item:ty),+ $(,)?) => {$(
        #[derive(Serialize, ToSchema)]
        pub struct $name {
            pub items: Vec<$item>,
            pub pagination: Pagination,
        }
    )+};
}

list_resource! {
    ListResourceCheckout => Checkout,
}

#[derive(Serialize, ToSchema)]
pub struct Pagination {
    pub total_count: u64,
    pub max_page: u64,
}

/// A postal address; every line is sent, null when unset.
#[derive(Serialize, ToSchema)]
pub struct Address {
    pub line1: Option<String>,
    pub line2: Option<String>,
    pub postal_code: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub country: String,
}

/// A postal address in a request; only `country` is required.
#[derive(Deserialize, ToSchema)]
pub struct AddressInput {
    #[schema(nullable = false)]
    pub line1: Option<String>,
    #[schema(nullable = false)]
    pub line2: Option<String>,
    #[schema(nullable = false)]
    pub postal_code: Option<String>,
    #[schema(nullable = false)]
    pub city: Option<String>,
    #[schema(nullable = false)]
    pub state: Option<String>,
    pub country: String,
}

// ---------------------------------------------------------------------------------------
// Catalog models: organizations, benefits, prices and products, custom fields, discounts and
// customers are typed in `crate::api` (issue 13); the sections below refer to them here by
// their schema names.
// ---------------------------------------------------------------------------------------

#[allow(unused_imports)]
pub use crate::api::custom_field::AttachedCustomFieldView as AttachedCustomField;
#[allow(unused_imports)]
pub use crate::api::customer::{CustomerUser, CustomerView as Customer};
#[allow(unused_imports)]
pub use crate::api::discount::{CheckoutDiscount, DiscountBase};
#[allow(unused_imports)]
pub use crate::api::organization::OrganizationView as Organization;
#[allow(unused_imports)]
pub use crate::api::price::{ProductPrice, ProductPriceRecurring, RecurringInterval};
#[allow(unused_imports)]
pub use crate::api::product::{CheckoutProduct, ProductBase, ProductView as Product};

// ---------------------------------------------------------------------------------------
// Checkouts
// ---------------------------------------------------------------------------------------

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckoutStatus {
    Open,
    Expired,
    Confirmed,
    Succeeded,
    Failed,
}

/// The fields of every checkout form, then the form's own.
macro_rules! checkout_schema {
    ($(#[$doc:meta])* $name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Serialize, ToSchema)]
        pub struct $name {
            pub id: Uuid,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            pub payment_processor: TagStripe,
            pub client_secret: String,
            pub url: String,
            pub expires_at: DateTime<Utc>,
            pub success_url: String,
            pub embed_origin: Option<String>,
            pub amount: Option<i64>,
            pub tax_amount: Option<i64>,
            pub currency: Option<String>,
            pub subtotal_amount: Option<i64>,
            pub total_amount: Option<i64>,
            pub product_id: Uuid,
            pub product_price_id: Uuid,
            pub discount_id: Option<Uuid>,
            pub allow_discount_codes: bool,
            pub is_discount_applicable: bool,
            pub is_free_product_price: bool,
            pub is_payment_required: bool,
            pub is_payment_setup_required: bool,
            pub is_payment_form_required: bool,
            pub customer_id: Option<Uuid>,
            pub customer_name: Option<String>,
            pub customer_email: Option<String>,
            pub customer_ip_address: Option<String>,
            pub customer_billing_address: Option<Address>,
            pub customer_tax_id: Option<String>,
            pub payment_processor_metadata: HashMap<String, String>,
            pub custom_field_data: HashMap<String, CustomFieldValue>,
            pub product: CheckoutProduct,
            pub product_price: ProductPrice,
            pub discount: Option<CheckoutDiscount>,
            pub attached_custom_fields: Vec<AttachedCustomField>,
            $(pub $field: $ty,)*
        }
    };
}

checkout_schema!(
    /// A checkout session as its organization sees it.
    Checkout {
        status: CheckoutStatus,
        metadata: Metadata,
        customer_metadata: Metadata,
        subscription_id: Option<Uuid>,
    }
);

checkout_schema!(
    /// A checkout session as the buyer sees it through the client secret.
    CheckoutPublic {
        status: CheckoutStatus,
        organization: Organization,
    }
);

checkout_schema!(
    /// A confirmed checkout session, with the buyer's customer session token.
    CheckoutPublicConfirmed {
        status: TagConfirmed,
        organization: Organization,
        customer_session_token: String,
    }
);

/// Creates a checkout for a price (`product_price_id`) or for a product's first price
/// (`product_id`).
#[derive(Deserialize, ToSchema)]
pub struct CheckoutCreate {
    #[schema(nullable = false)]
    pub product_price_id: Option<Uuid>,
    #[schema(nullable = false)]
    pub product_id: Option<Uuid>,
    #[schema(nullable = false)]
    pub metadata: Option<Metadata>,
    #[schema(nullable = false)]
    pub custom_field_data: Option<HashMap<String, CustomFieldInput>>,
    pub discount_id: Option<Uuid>,
    #[schema(nullable = false)]
    pub allow_discount_codes: Option<bool>,
    pub amount: Option<i64>,
    pub customer_id: Option<Uuid>,
    pub customer_name: Option<String>,
    pub customer_email: Option<String>,
    pub customer_ip_address: Option<String>,
    pub customer_billing_address: Option<AddressInput>,
    pub customer_tax_id: Option<String>,
    #[schema(nullable = false)]
    pub customer_metadata: Option<Metadata>,
    pub subscription_id: Option<Uuid>,
    pub success_url: Option<String>,
    pub embed_origin: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct CheckoutUpdate {
    pub custom_field_data: Option<HashMap<String, CustomFieldInput>>,
    pub product_price_id: Option<Uuid>,
    pub amount: Option<i64>,
    pub customer_name: Option<String>,
    pub customer_email: Option<String>,
    pub customer_billing_address: Option<AddressInput>,
    pub customer_tax_id: Option<String>,
    pub metadata: Option<Metadata>,
    pub discount_id: Option<Uuid>,
    pub allow_discount_codes: Option<bool>,
    pub customer_ip_address: Option<String>,
    pub customer_metadata: Option<Metadata>,
    pub success_url: Option<String>,
    pub embed_origin: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct CheckoutUpdatePublic {
    pub custom_field_data: Option<HashMap<String, CustomFieldInput>>,
    pub product_price_id: Option<Uuid>,
    pub amount: Option<i64>,
    pub customer_name: Option<String>,
    pub customer_email: Option<String>,
    pub customer_billing_address: Option<AddressInput>,
    pub customer_tax_id: Option<String>,
    pub discount_code: Option<String>,
}

/// Confirms a checkout: the public update fields plus the payment's confirmation token.
#[derive(Deserialize, ToSchema)]
pub struct CheckoutConfirm {
    pub custom_field_data: Option<HashMap<String, CustomFieldInput>>,
    pub product_price_id: Option<Uuid>,
    pub amount: Option<i64>,
    pub customer_name: Option<String>,
    pub customer_email: Option<String>,
    pub customer_billing_address: Option<AddressInput>,
    pub customer_tax_id: Option<String>,
    pub discount_code: Option<String>,
    /// The payment method, confirmed by the payment processor's client.
    pub confirmation_token_id: Option<String>,
}
