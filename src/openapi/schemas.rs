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

tag!(TagRecurring = "recurring");
tag!(TagOneTime = "one_time");
tag!(TagFixed = "fixed");
tag!(TagFree = "free");
tag!(TagCustom = "custom");
tag!(TagPercentage = "percentage");
tag!(TagRepeating = "repeating");
tag!(TagAds = "ads");
tag!(TagLicenseKeys = "license_keys");
tag!(TagText = "text");
tag!(TagNumber = "number");
tag!(TagDate = "date");
tag!(TagCheckbox = "checkbox");
tag!(TagSelect = "select");
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
    ListResourceOrganization => Organization,
    ListResourceBenefit => Benefit,
    ListResourceProduct => Product,
    ListResourceDiscount => Discount,
    ListResourceCustomer => Customer,
    ListResourceCustomField => CustomField,
    ListResourceCheckout => Checkout,
    ListResourceOrder => Order,
    ListResourceSubscription => Subscription,
    ListResourceLicenseKeyRead => LicenseKeyRead,
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
// Organizations
// ---------------------------------------------------------------------------------------

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProrationBehavior {
    Invoice,
    Prorate,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub struct OrganizationSubscriptionSettings {
    pub allow_multiple_subscriptions: bool,
    pub allow_customer_updates: bool,
    pub proration_behavior: ProrationBehavior,
}

/// The public profile; only the keys that were set are sent.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct OrganizationProfileSettings {
    #[schema(required = false)]
    pub enabled: Option<bool>,
    #[schema(required = false)]
    pub description: Option<String>,
    #[schema(required = false)]
    pub featured_projects: Option<Vec<Uuid>>,
    #[schema(required = false)]
    pub featured_organizations: Option<Vec<Uuid>>,
    #[schema(required = false)]
    pub links: Option<Vec<String>>,
    #[schema(required = false)]
    pub subscribe: Option<OrganizationSubscribePromoteSettings>,
    #[schema(required = false)]
    pub accent_color: Option<String>,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub struct OrganizationSubscribePromoteSettings {
    #[schema(required = false)]
    pub promote: Option<bool>,
    #[schema(required = false)]
    pub show_count: Option<bool>,
    #[schema(required = false)]
    pub count_free: Option<bool>,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub struct OrganizationFeatureSettings {
    #[schema(required = false)]
    pub issue_funding_enabled: Option<bool>,
}

#[derive(Serialize, ToSchema)]
pub struct Organization {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub name: String,
    pub slug: String,
    pub avatar_url: Option<String>,
    pub bio: Option<String>,
    pub company: Option<String>,
    pub blog: Option<String>,
    pub location: Option<String>,
    pub email: Option<String>,
    pub twitter_username: Option<String>,
    pub pledge_minimum_amount: i64,
    pub pledge_badge_show_amount: bool,
    pub default_upfront_split_to_contributors: Option<i64>,
    pub profile_settings: Option<OrganizationProfileSettings>,
    pub feature_settings: Option<OrganizationFeatureSettings>,
    pub subscription_settings: OrganizationSubscriptionSettings,
}

#[derive(Deserialize, ToSchema)]
pub struct OrganizationCreate {
    /// At least 3 characters.
    pub name: String,
    /// Lower-case letters, digits and dashes; at least 3 characters; not a reserved word.
    pub slug: String,
    #[schema(nullable = false)]
    pub avatar_url: Option<String>,
    #[schema(nullable = false)]
    pub feature_settings: Option<OrganizationFeatureSettings>,
    #[schema(nullable = false)]
    pub subscription_settings: Option<OrganizationSubscriptionSettings>,
}

#[derive(Deserialize, ToSchema)]
pub struct OrganizationUpdate {
    pub name: Option<String>,
    pub avatar_url: Option<String>,
    pub default_upfront_split_to_contributors: Option<i64>,
    pub pledge_badge_show_amount: Option<bool>,
    pub billing_email: Option<String>,
    pub default_badge_custom_content: Option<String>,
    pub pledge_minimum_amount: Option<i64>,
    pub total_monthly_spending_limit: Option<i64>,
    pub per_user_monthly_spending_limit: Option<i64>,
    pub profile_settings: Option<OrganizationProfileSettings>,
    pub feature_settings: Option<OrganizationFeatureSettings>,
    pub subscription_settings: Option<OrganizationSubscriptionSettings>,
}

// ---------------------------------------------------------------------------------------
// Benefits
// ---------------------------------------------------------------------------------------

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BenefitType {
    Custom,
    Ads,
    Discord,
    GithubRepository,
    Downloadables,
    LicenseKeys,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Timeframe {
    Year,
    Month,
    Day,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub struct BenefitLicenseKeyExpirationProperties {
    pub ttl: i64,
    pub timeframe: Timeframe,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub struct BenefitLicenseKeyActivationProperties {
    pub limit: i64,
    pub enable_customer_admin: bool,
}

#[derive(Serialize, ToSchema)]
pub struct BenefitLicenseKeysProperties {
    pub prefix: Option<String>,
    pub expires: Option<BenefitLicenseKeyExpirationProperties>,
    pub activations: Option<BenefitLicenseKeyActivationProperties>,
    pub limit_usage: Option<i64>,
}

#[derive(Serialize, ToSchema)]
pub struct BenefitCustomProperties {
    pub note: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct BenefitAdsProperties {
    pub image_height: i64,
    pub image_width: i64,
}

/// A benefit granting license keys.
#[derive(Serialize, ToSchema)]
pub struct BenefitLicenseKeys {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[serde(rename = "type")]
    pub kind: TagLicenseKeys,
    pub description: String,
    pub selectable: bool,
    pub deletable: bool,
    pub organization_id: Uuid,
    pub properties: BenefitLicenseKeysProperties,
}

/// A custom benefit: a note shown to the buyer.
#[derive(Serialize, ToSchema)]
pub struct BenefitCustom {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[serde(rename = "type")]
    pub kind: TagCustom,
    pub description: String,
    pub selectable: bool,
    pub deletable: bool,
    pub organization_id: Uuid,
    pub properties: BenefitCustomProperties,
    /// Deprecated; always false.
    pub is_tax_applicable: bool,
}

/// An ads benefit.
#[derive(Serialize, ToSchema)]
pub struct BenefitAds {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[serde(rename = "type")]
    pub kind: TagAds,
    pub description: String,
    pub selectable: bool,
    pub deletable: bool,
    pub organization_id: Uuid,
    pub properties: BenefitAdsProperties,
}

/// A benefit, its variant named by `type`.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum Benefit {
    LicenseKeys(BenefitLicenseKeys),
    Custom(BenefitCustom),
    Ads(BenefitAds),
}

/// The fields every benefit has (inside checkouts).
#[derive(Serialize, ToSchema)]
pub struct BenefitBase {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[serde(rename = "type")]
    pub kind: BenefitType,
    pub description: String,
    pub selectable: bool,
    pub deletable: bool,
    pub organization_id: Uuid,
}

#[derive(Deserialize, ToSchema)]
pub struct BenefitLicenseKeysCreateProperties {
    #[schema(nullable = false)]
    pub prefix: Option<String>,
    #[schema(nullable = false)]
    pub expires: Option<BenefitLicenseKeyExpirationProperties>,
    #[schema(nullable = false)]
    pub activations: Option<BenefitLicenseKeyActivationProperties>,
    #[schema(nullable = false)]
    pub limit_usage: Option<i64>,
}

#[derive(Deserialize, ToSchema)]
pub struct BenefitCustomCreateProperties {
    #[schema(nullable = false)]
    pub note: Option<String>,
}

/// Creates a benefit; `type` picks the properties.
#[derive(Deserialize, ToSchema)]
pub struct BenefitCreate {
    #[serde(rename = "type")]
    pub kind: BenefitType,
    /// 3 to 42 characters.
    pub description: String,
    #[schema(nullable = false)]
    pub organization_id: Option<Uuid>,
    #[schema(value_type = Object)]
    pub properties: serde_json::Value,
}

#[derive(Deserialize, ToSchema)]
pub struct BenefitUpdate {
    #[serde(rename = "type")]
    pub kind: BenefitType,
    pub description: Option<String>,
    #[schema(value_type = Object)]
    pub properties: Option<serde_json::Value>,
}

// ---------------------------------------------------------------------------------------
// Prices and products
// ---------------------------------------------------------------------------------------

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecurringInterval {
    Month,
    Year,
}

#[derive(Serialize, ToSchema)]
pub struct ProductPriceRecurringFixed {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub amount_type: TagFixed,
    #[serde(rename = "type")]
    pub kind: TagRecurring,
    pub is_archived: bool,
    pub product_id: Uuid,
    pub price_currency: String,
    pub price_amount: i64,
    pub recurring_interval: RecurringInterval,
}

#[derive(Serialize, ToSchema)]
pub struct ProductPriceRecurringFree {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub amount_type: TagFree,
    #[serde(rename = "type")]
    pub kind: TagRecurring,
    pub is_archived: bool,
    pub product_id: Uuid,
    pub recurring_interval: RecurringInterval,
}

#[derive(Serialize, ToSchema)]
pub struct ProductPriceOneTimeFixed {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub amount_type: TagFixed,
    #[serde(rename = "type")]
    pub kind: TagOneTime,
    pub is_archived: bool,
    pub product_id: Uuid,
    pub price_currency: String,
    pub price_amount: i64,
}

#[derive(Serialize, ToSchema)]
pub struct ProductPriceOneTimeFree {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub amount_type: TagFree,
    #[serde(rename = "type")]
    pub kind: TagOneTime,
    pub is_archived: bool,
    pub product_id: Uuid,
}

/// Pay what you want, between the bounds.
#[derive(Serialize, ToSchema)]
pub struct ProductPriceOneTimeCustom {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub amount_type: TagCustom,
    #[serde(rename = "type")]
    pub kind: TagOneTime,
    pub is_archived: bool,
    pub product_id: Uuid,
    pub price_currency: String,
    pub minimum_amount: Option<i64>,
    pub maximum_amount: Option<i64>,
    pub preset_amount: Option<i64>,
}

/// A price, its variant named by `type` and `amount_type`.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum ProductPrice {
    RecurringFixed(ProductPriceRecurringFixed),
    RecurringFree(ProductPriceRecurringFree),
    OneTimeFixed(ProductPriceOneTimeFixed),
    OneTimeFree(ProductPriceOneTimeFree),
    OneTimeCustom(ProductPriceOneTimeCustom),
}

/// A recurring price (of a subscription).
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum ProductPriceRecurring {
    Fixed(ProductPriceRecurringFixed),
    Free(ProductPriceRecurringFree),
}

/// Product medias (always empty: Tollgate stores no files).
#[derive(Serialize, ToSchema)]
pub struct ProductMediaFileRead {
    pub id: Uuid,
    pub organization_id: Uuid,
    pub name: String,
    pub path: String,
    pub mime_type: String,
    pub size: i64,
    pub created_at: DateTime<Utc>,
    pub public_url: String,
}

#[derive(Serialize, ToSchema)]
pub struct Product {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub name: String,
    pub description: Option<String>,
    pub is_recurring: bool,
    pub is_archived: bool,
    pub organization_id: Uuid,
    pub metadata: Metadata,
    pub prices: Vec<ProductPrice>,
    pub benefits: Vec<Benefit>,
    pub medias: Vec<ProductMediaFileRead>,
    pub attached_custom_fields: Vec<AttachedCustomField>,
}

/// A product without prices, benefits or medias (in orders and discounts).
#[derive(Serialize, ToSchema)]
pub struct ProductBase {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub name: String,
    pub description: Option<String>,
    pub is_recurring: bool,
    pub is_archived: bool,
    pub organization_id: Uuid,
}

/// The product inside a checkout.
#[derive(Serialize, ToSchema)]
pub struct CheckoutProduct {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub name: String,
    pub description: Option<String>,
    pub is_recurring: bool,
    pub is_archived: bool,
    pub organization_id: Uuid,
    pub prices: Vec<ProductPrice>,
    pub benefits: Vec<BenefitBase>,
    pub medias: Vec<ProductMediaFileRead>,
}

/// A new price: `type` (`recurring`, `one_time`) with `amount_type` (`fixed`, `free`,
/// `custom`) and their amounts; `recurring_interval` for recurring prices.
#[derive(Deserialize, ToSchema)]
pub struct ProductPriceCreate {
    #[serde(rename = "type")]
    pub kind: String,
    pub amount_type: String,
    #[schema(nullable = false)]
    pub price_amount: Option<i64>,
    #[schema(nullable = false)]
    pub price_currency: Option<String>,
    #[schema(nullable = false)]
    pub recurring_interval: Option<RecurringInterval>,
    pub minimum_amount: Option<i64>,
    pub maximum_amount: Option<i64>,
    pub preset_amount: Option<i64>,
}

#[derive(Deserialize, ToSchema)]
pub struct AttachedCustomFieldCreate {
    pub custom_field_id: Uuid,
    pub required: bool,
}

#[derive(Deserialize, ToSchema)]
pub struct ProductCreate {
    pub name: String,
    pub description: Option<String>,
    pub prices: Vec<ProductPriceCreate>,
    #[schema(nullable = false)]
    pub medias: Option<Vec<Uuid>>,
    #[schema(nullable = false)]
    pub attached_custom_fields: Option<Vec<AttachedCustomFieldCreate>>,
    #[schema(nullable = false)]
    pub metadata: Option<Metadata>,
    #[schema(nullable = false)]
    pub organization_id: Option<Uuid>,
}

/// An existing price to keep, by id.
#[derive(Deserialize, ToSchema)]
pub struct ExistingProductPrice {
    pub id: Uuid,
}

#[derive(Deserialize, ToSchema)]
pub struct ProductUpdate {
    pub name: Option<String>,
    pub description: Option<String>,
    pub is_archived: Option<bool>,
    #[schema(value_type = Option<Vec<Object>>)]
    pub prices: Option<Vec<serde_json::Value>>,
    pub medias: Option<Vec<Uuid>>,
    pub attached_custom_fields: Option<Vec<AttachedCustomFieldCreate>>,
    pub metadata: Option<Metadata>,
}

#[derive(Deserialize, ToSchema)]
pub struct ProductBenefitsUpdate {
    pub benefits: Vec<Uuid>,
}

// ---------------------------------------------------------------------------------------
// Custom fields
// ---------------------------------------------------------------------------------------

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CustomFieldType {
    Text,
    Number,
    Date,
    Checkbox,
    Select,
}

#[derive(Serialize, ToSchema)]
pub struct CustomFieldSelectOption {
    pub value: String,
    pub label: String,
}

/// The properties of a field; which keys appear depends on `type`, unset ones are left
/// out.
#[derive(Serialize, ToSchema)]
pub struct CustomFieldProperties {
    #[schema(required = false)]
    pub form_label: Option<String>,
    #[schema(required = false)]
    pub form_help_text: Option<String>,
    #[schema(required = false)]
    pub form_placeholder: Option<String>,
    #[schema(required = false)]
    pub textarea: Option<bool>,
    #[schema(required = false)]
    pub min_length: Option<i64>,
    #[schema(required = false)]
    pub max_length: Option<i64>,
    #[schema(required = false)]
    pub ge: Option<i64>,
    #[schema(required = false)]
    pub le: Option<i64>,
    #[schema(required = false)]
    pub options: Option<Vec<CustomFieldSelectOption>>,
}

#[derive(Serialize, ToSchema)]
pub struct CustomField {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub metadata: Metadata,
    #[serde(rename = "type")]
    pub kind: CustomFieldType,
    pub slug: String,
    pub name: String,
    pub organization_id: Uuid,
    pub properties: CustomFieldProperties,
}

#[derive(Serialize, ToSchema)]
pub struct AttachedCustomField {
    pub custom_field_id: Uuid,
    pub custom_field: CustomField,
    pub order: i64,
    pub required: bool,
}

#[derive(Deserialize, ToSchema)]
pub struct CustomFieldCreate {
    #[serde(rename = "type")]
    pub kind: CustomFieldType,
    pub slug: String,
    pub name: String,
    #[schema(value_type = Object)]
    pub properties: serde_json::Value,
    #[schema(nullable = false)]
    pub metadata: Option<Metadata>,
    #[schema(nullable = false)]
    pub organization_id: Option<Uuid>,
}

#[derive(Deserialize, ToSchema)]
pub struct CustomFieldUpdate {
    #[serde(rename = "type")]
    pub kind: CustomFieldType,
    pub slug: Option<String>,
    pub name: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub properties: Option<serde_json::Value>,
    pub metadata: Option<Metadata>,
}

// ---------------------------------------------------------------------------------------
// Discounts
// ---------------------------------------------------------------------------------------

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiscountOnceForever {
    Once,
    Forever,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiscountDuration {
    Once,
    Forever,
    Repeating,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiscountType {
    Fixed,
    Percentage,
}

/// The fields of every discount form (`Discount…Base`).
macro_rules! discount_schema {
    ($(#[$doc:meta])* $name:ident { $($field:ident : $ty:ty),* $(,)? } $(+ $extra:ident : $xty:ty)*) => {
        $(#[$doc])*
        #[derive(Serialize, ToSchema)]
        pub struct $name {
            pub id: Uuid,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            pub metadata: Metadata,
            pub name: String,
            pub code: Option<String>,
            pub starts_at: Option<DateTime<Utc>>,
            pub ends_at: Option<DateTime<Utc>>,
            pub max_redemptions: Option<i64>,
            pub redemptions_count: i64,
            pub organization_id: Uuid,
            $(pub $field: $ty,)*
            $(pub $extra: $xty,)*
        }
    };
}

discount_schema!(DiscountFixedOnceForeverDurationBase {
    r#type: TagFixed,
    duration: DiscountOnceForever,
    amount: i64,
    currency: String
});
discount_schema!(DiscountFixedRepeatingDurationBase {
    r#type: TagFixed,
    duration: TagRepeating,
    duration_in_months: i64,
    amount: i64,
    currency: String
});
discount_schema!(DiscountPercentageOnceForeverDurationBase {
    r#type: TagPercentage,
    duration: DiscountOnceForever,
    basis_points: i64
});
discount_schema!(DiscountPercentageRepeatingDurationBase {
    r#type: TagPercentage,
    duration: TagRepeating,
    duration_in_months: i64,
    basis_points: i64
});
discount_schema!(DiscountFixedOnceForeverDuration { r#type: TagFixed, duration: DiscountOnceForever, amount: i64, currency: String } + products: Vec<ProductBase>);
discount_schema!(DiscountFixedRepeatingDuration { r#type: TagFixed, duration: TagRepeating, duration_in_months: i64, amount: i64, currency: String } + products: Vec<ProductBase>);
discount_schema!(DiscountPercentageOnceForeverDuration { r#type: TagPercentage, duration: DiscountOnceForever, basis_points: i64 } + products: Vec<ProductBase>);
discount_schema!(DiscountPercentageRepeatingDuration { r#type: TagPercentage, duration: TagRepeating, duration_in_months: i64, basis_points: i64 } + products: Vec<ProductBase>);

/// A discount, its variant named by `type` and `duration`.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum Discount {
    FixedOnceForever(DiscountFixedOnceForeverDuration),
    FixedRepeating(DiscountFixedRepeatingDuration),
    PercentageOnceForever(DiscountPercentageOnceForeverDuration),
    PercentageRepeating(DiscountPercentageRepeatingDuration),
}

/// A discount without its products (in orders and subscriptions).
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum DiscountBase {
    FixedOnceForever(DiscountFixedOnceForeverDurationBase),
    FixedRepeating(DiscountFixedRepeatingDurationBase),
    PercentageOnceForever(DiscountPercentageOnceForeverDurationBase),
    PercentageRepeating(DiscountPercentageRepeatingDurationBase),
}

/// The discount applied to a checkout.
#[derive(Serialize, ToSchema)]
pub struct CheckoutDiscount {
    pub id: Uuid,
    pub name: String,
    pub code: Option<String>,
    #[serde(rename = "type")]
    pub kind: DiscountType,
    pub duration: DiscountDuration,
    #[schema(required = false)]
    pub amount: Option<i64>,
    #[schema(required = false)]
    pub currency: Option<String>,
    #[schema(required = false)]
    pub basis_points: Option<i64>,
    #[schema(required = false)]
    pub duration_in_months: Option<i64>,
}

/// Creates a discount: `fixed` takes `amount` (and `currency`), `percentage` takes
/// `basis_points`; `repeating` takes `duration_in_months`.
#[derive(Deserialize, ToSchema)]
pub struct DiscountCreate {
    #[serde(rename = "type")]
    pub kind: DiscountType,
    pub duration: DiscountDuration,
    #[schema(nullable = false)]
    pub duration_in_months: Option<i64>,
    #[schema(nullable = false)]
    pub amount: Option<i64>,
    #[schema(nullable = false)]
    pub currency: Option<String>,
    #[schema(nullable = false)]
    pub basis_points: Option<i64>,
    pub name: String,
    pub code: Option<String>,
    pub starts_at: Option<DateTime<Utc>>,
    pub ends_at: Option<DateTime<Utc>>,
    pub max_redemptions: Option<i64>,
    pub products: Option<Vec<Uuid>>,
    #[schema(nullable = false)]
    pub metadata: Option<Metadata>,
    #[schema(nullable = false)]
    pub organization_id: Option<Uuid>,
}

#[derive(Deserialize, ToSchema)]
pub struct DiscountUpdate {
    pub name: Option<String>,
    pub code: Option<String>,
    pub starts_at: Option<DateTime<Utc>>,
    pub ends_at: Option<DateTime<Utc>>,
    pub max_redemptions: Option<i64>,
    pub duration: Option<DiscountDuration>,
    pub duration_in_months: Option<i64>,
    #[serde(rename = "type")]
    pub kind: Option<DiscountType>,
    pub amount: Option<i64>,
    pub currency: Option<String>,
    pub basis_points: Option<i64>,
    pub products: Option<Vec<Uuid>>,
    pub metadata: Option<Metadata>,
}

// ---------------------------------------------------------------------------------------
// Customers
// ---------------------------------------------------------------------------------------

/// A tax id and its format, e.g. `["FR61954506077", "eu_vat"]`.
#[derive(Serialize, ToSchema)]
pub struct TaxId(pub String, pub String);

#[derive(Serialize, ToSchema)]
pub struct Customer {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub metadata: Metadata,
    pub email: String,
    pub email_verified: bool,
    pub name: Option<String>,
    pub billing_address: Option<Address>,
    pub tax_id: Option<Vec<String>>,
    pub organization_id: Uuid,
    pub avatar_url: String,
}

/// The deprecated `user` of orders, subscriptions and license keys (from the customer).
#[derive(Serialize, ToSchema)]
pub struct CustomerUser {
    pub id: Uuid,
    pub email: String,
    pub public_name: String,
    pub avatar_url: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct CustomerCreate {
    pub email: String,
    pub name: Option<String>,
    pub billing_address: Option<AddressInput>,
    pub tax_id: Option<String>,
    #[schema(nullable = false)]
    pub metadata: Option<Metadata>,
    #[schema(nullable = false)]
    pub organization_id: Option<Uuid>,
}

#[derive(Deserialize, ToSchema)]
pub struct CustomerUpdate {
    pub email: Option<String>,
    pub name: Option<String>,
    pub billing_address: Option<AddressInput>,
    pub tax_id: Option<String>,
    pub metadata: Option<Metadata>,
}

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

// ---------------------------------------------------------------------------------------
// Orders and subscriptions
// ---------------------------------------------------------------------------------------

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BillingReason {
    Purchase,
    SubscriptionCreate,
    SubscriptionCycle,
    SubscriptionUpdate,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubscriptionStatus {
    Incomplete,
    IncompleteExpired,
    Trialing,
    Active,
    PastDue,
    Canceled,
    Unpaid,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CustomerCancellationReason {
    CustomerService,
    LowQuality,
    MissingFeatures,
    SwitchedService,
    TooComplex,
    TooExpensive,
    Unused,
    Other,
}

/// The fields of every subscription form.
macro_rules! subscription_schema {
    ($(#[$doc:meta])* $name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Serialize, ToSchema)]
        pub struct $name {
            pub id: Uuid,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            pub amount: Option<i64>,
            pub currency: Option<String>,
            pub recurring_interval: RecurringInterval,
            pub status: SubscriptionStatus,
            pub current_period_start: DateTime<Utc>,
            pub current_period_end: Option<DateTime<Utc>>,
            pub cancel_at_period_end: bool,
            pub canceled_at: Option<DateTime<Utc>>,
            pub started_at: Option<DateTime<Utc>>,
            pub ends_at: Option<DateTime<Utc>>,
            pub ended_at: Option<DateTime<Utc>>,
            pub customer_id: Uuid,
            pub product_id: Uuid,
            pub price_id: Uuid,
            pub discount_id: Option<Uuid>,
            pub checkout_id: Option<Uuid>,
            pub customer_cancellation_reason: Option<CustomerCancellationReason>,
            pub customer_cancellation_comment: Option<String>,
            pub metadata: Metadata,
            /// Deprecated: the customer's id.
            pub user_id: Uuid,
            $(pub $field: $ty,)*
        }
    };
}

subscription_schema!(
    /// A subscription without its related objects (inside orders).
    OrderSubscription {}
);

subscription_schema!(
    Subscription {
        custom_field_data: HashMap<String, CustomFieldValue>,
        customer: Customer,
        user: CustomerUser,
        product: Product,
        price: ProductPriceRecurring,
        discount: Option<DiscountBase>,
    }
);

#[derive(Serialize, ToSchema)]
pub struct Order {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub metadata: Metadata,
    pub custom_field_data: HashMap<String, CustomFieldValue>,
    pub status: String,
    pub amount: i64,
    pub tax_amount: i64,
    pub refunded_amount: i64,
    pub refunded_tax_amount: i64,
    pub currency: String,
    pub billing_reason: BillingReason,
    pub billing_address: Option<Address>,
    pub customer_id: Uuid,
    pub product_id: Uuid,
    pub product_price_id: Uuid,
    pub discount_id: Option<Uuid>,
    pub subscription_id: Option<Uuid>,
    pub checkout_id: Option<Uuid>,
    pub customer: Customer,
    /// Deprecated: the customer's id.
    pub user_id: Uuid,
    pub user: CustomerUser,
    pub product: ProductBase,
    pub product_price: ProductPrice,
    pub discount: Option<DiscountBase>,
    pub subscription: Option<OrderSubscription>,
}

/// Cancels at the end of the period (`cancel_at_period_end`) or revokes at once
/// (`revoke: true`), with the customer's reason.
#[derive(Deserialize, ToSchema)]
pub struct SubscriptionUpdate {
    pub product_price_id: Option<Uuid>,
    pub cancel_at_period_end: Option<bool>,
    pub revoke: Option<bool>,
    pub customer_cancellation_reason: Option<CustomerCancellationReason>,
    pub customer_cancellation_comment: Option<String>,
}

// ---------------------------------------------------------------------------------------
// License keys
// ---------------------------------------------------------------------------------------

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LicenseKeyStatus {
    Granted,
    Revoked,
    Disabled,
}

#[derive(Serialize, ToSchema)]
pub struct LicenseKeyActivationBase {
    pub id: Uuid,
    pub license_key_id: Uuid,
    pub label: String,
    #[schema(value_type = Object)]
    pub meta: serde_json::Value,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
}

/// The fields of every license-key form.
macro_rules! license_key_schema {
    ($(#[$doc:meta])* $name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Serialize, ToSchema)]
        pub struct $name {
            pub id: Uuid,
            pub organization_id: Uuid,
            /// Deprecated: the customer's id.
            pub user_id: Uuid,
            pub customer_id: Uuid,
            pub user: CustomerUser,
            pub customer: Customer,
            pub benefit_id: Uuid,
            pub key: String,
            pub display_key: String,
            pub status: LicenseKeyStatus,
            pub limit_activations: Option<i64>,
            pub usage: i64,
            pub limit_usage: Option<i64>,
            pub validations: i64,
            pub last_validated_at: Option<DateTime<Utc>>,
            pub expires_at: Option<DateTime<Utc>>,
            $(pub $field: $ty,)*
        }
    };
}

license_key_schema!(LicenseKeyRead {});
license_key_schema!(LicenseKeyWithActivations {
    activations: Vec<LicenseKeyActivationBase>
});
license_key_schema!(
    /// The validated key, with the activation that was checked (if any).
    ValidatedLicenseKey {
        activation: Option<LicenseKeyActivationBase>
    }
);

#[derive(Serialize, ToSchema)]
pub struct LicenseKeyActivationRead {
    pub id: Uuid,
    pub license_key_id: Uuid,
    pub label: String,
    #[schema(value_type = Object)]
    pub meta: serde_json::Value,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub license_key: LicenseKeyRead,
}

/// Changes a key; an explicit null clears a limit or the expiry.
#[derive(Deserialize, ToSchema)]
pub struct LicenseKeyUpdate {
    #[schema(nullable = false)]
    pub status: Option<LicenseKeyStatus>,
    #[schema(nullable = false)]
    pub usage: Option<i64>,
    pub limit_activations: Option<i64>,
    pub limit_usage: Option<i64>,
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Deserialize, ToSchema)]
pub struct LicenseKeyValidate {
    pub key: String,
    pub organization_id: Uuid,
    pub activation_id: Option<Uuid>,
    pub benefit_id: Option<Uuid>,
    pub customer_id: Option<Uuid>,
    /// Added to the key's usage; never negative (Tollgate refuses what Polar accepts).
    #[schema(minimum = 0)]
    pub increment_usage: Option<i64>,
    /// Must equal the conditions the activation was made with.
    #[schema(value_type = Option<Object>)]
    pub conditions: Option<serde_json::Value>,
}

#[derive(Deserialize, ToSchema)]
pub struct LicenseKeyActivate {
    pub key: String,
    pub organization_id: Uuid,
    pub label: String,
    #[schema(value_type = Option<Object>)]
    pub conditions: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub meta: Option<serde_json::Value>,
}

#[derive(Deserialize, ToSchema)]
pub struct LicenseKeyDeactivate {
    pub key: String,
    pub organization_id: Uuid,
    pub activation_id: Uuid,
}

// ---------------------------------------------------------------------------------------
// Health
// ---------------------------------------------------------------------------------------

#[derive(Serialize, ToSchema)]
pub struct Health {
    pub status: String,
}

// ---------------------------------------------------------------------------------------
// OAuth 2.0 / OpenID Connect and personal access tokens
// ---------------------------------------------------------------------------------------

/// An RFC 6749 error of the OAuth endpoints.
#[derive(Serialize, ToSchema)]
pub struct OAuth2Error {
    /// E.g. `invalid_grant`, `invalid_client`, `invalid_request`, `unsupported_grant_type`.
    pub error: String,
    #[schema(required = false)]
    pub error_description: Option<String>,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenEndpointAuthMethod {
    ClientSecretBasic,
    ClientSecretPost,
    None,
}

/// RFC 7591 client metadata.
#[derive(Deserialize, ToSchema)]
pub struct OAuth2ClientConfiguration {
    /// https, or http on localhost and loopback addresses.
    pub redirect_uris: Vec<String>,
    pub client_name: String,
    #[schema(nullable = false)]
    pub token_endpoint_auth_method: Option<TokenEndpointAuthMethod>,
    #[schema(nullable = false)]
    pub grant_types: Option<Vec<String>>,
    #[schema(nullable = false)]
    pub response_types: Option<Vec<String>>,
    /// Space-separated scopes the client may ask for.
    #[schema(nullable = false)]
    pub scope: Option<String>,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub policy_uri: Option<String>,
    /// On update: must be the client's id.
    #[schema(nullable = false)]
    pub client_id: Option<String>,
}

/// RFC 7592 client update: `client_id` names the client; every other field left out keeps
/// its stored value (Polar merges). An empty link clears it.
#[derive(Deserialize, ToSchema)]
pub struct OAuth2ClientConfigurationUpdate {
    /// Must be the client's id.
    pub client_id: String,
    #[schema(nullable = false)]
    pub redirect_uris: Option<Vec<String>>,
    #[schema(nullable = false)]
    pub client_name: Option<String>,
    #[schema(nullable = false)]
    pub token_endpoint_auth_method: Option<TokenEndpointAuthMethod>,
    #[schema(nullable = false)]
    pub grant_types: Option<Vec<String>>,
    #[schema(nullable = false)]
    pub response_types: Option<Vec<String>>,
    /// Space-separated scopes the client may ask for.
    #[schema(nullable = false)]
    pub scope: Option<String>,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub policy_uri: Option<String>,
}

/// A registered client. `client_secret` is only shown when the client is created; reads
/// send an empty string.
#[derive(Serialize, ToSchema)]
pub struct OAuth2Client {
    pub client_id: String,
    pub client_secret: String,
    pub client_id_issued_at: i64,
    pub client_secret_expires_at: i64,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub token_endpoint_auth_method: TokenEndpointAuthMethod,
    pub grant_types: Vec<String>,
    pub response_types: Vec<String>,
    pub scope: String,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub policy_uri: Option<String>,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
}

/// A newly registered client, with its registration access token (RFC 7592).
#[derive(Serialize, ToSchema)]
pub struct OAuth2ClientCreated {
    pub client_id: String,
    pub client_secret: String,
    pub client_id_issued_at: i64,
    pub client_secret_expires_at: i64,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub token_endpoint_auth_method: TokenEndpointAuthMethod,
    pub grant_types: Vec<String>,
    pub response_types: Vec<String>,
    pub scope: String,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub policy_uri: Option<String>,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub registration_access_token: String,
    pub registration_client_uri: String,
}

list_resource! {
    ListResourceOAuth2Client => OAuth2Client,
    ListResourcePersonalAccessToken => PersonalAccessToken,
}

/// A token request: `authorization_code` (with `code`, `redirect_uri` and, when a
/// challenge was sent, `code_verifier`) or `refresh_token` (with `refresh_token`, and
/// optionally a narrower `scope`). Clients authenticate with these fields or HTTP Basic.
#[derive(Deserialize, ToSchema)]
pub struct TokenRequest {
    pub grant_type: String,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub scope: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: String,
    pub expires_in: i64,
    pub refresh_token: Option<String>,
    pub scope: String,
    pub id_token: String,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenTypeHint {
    AccessToken,
    RefreshToken,
}

/// Introspection or revocation of a token by the client it was issued to.
#[derive(Deserialize, ToSchema)]
pub struct TokenIntrospectionRequest {
    pub token: String,
    pub token_type_hint: Option<TokenTypeHint>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubType {
    User,
    Organization,
}

/// RFC 7662; an inactive token has `active: false` and empty values in the other fields.
#[derive(Serialize, ToSchema)]
pub struct IntrospectTokenResponse {
    pub active: bool,
    pub client_id: String,
    pub token_type: TokenTypeHint,
    pub scope: String,
    pub sub_type: SubType,
    pub sub: String,
    pub aud: String,
    pub iss: String,
    pub exp: i64,
    pub iat: i64,
}

/// Always `{}`.
#[derive(Serialize, ToSchema)]
pub struct RevokeTokenResponse {}

/// The claims the token's scopes allow: `email` for users, the organization's `name`.
#[derive(Serialize, ToSchema)]
pub struct UserInfo {
    pub sub: String,
    #[schema(required = false)]
    pub name: Option<String>,
    #[schema(required = false)]
    pub email: Option<String>,
    #[schema(required = false)]
    pub email_verified: Option<bool>,
}

/// OpenID Provider metadata.
#[derive(Serialize, ToSchema)]
pub struct OpenIdConfiguration {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub jwks_uri: String,
    pub userinfo_endpoint: String,
    pub registration_endpoint: String,
    pub revocation_endpoint: String,
    pub introspection_endpoint: String,
    pub scopes_supported: Vec<String>,
    pub response_types_supported: Vec<String>,
    pub grant_types_supported: Vec<String>,
    pub token_endpoint_auth_methods_supported: Vec<String>,
    pub subject_types_supported: Vec<String>,
    pub id_token_signing_alg_values_supported: Vec<String>,
    pub code_challenge_methods_supported: Vec<String>,
}

/// An RSA public key of the id_token signatures.
#[derive(Serialize, ToSchema)]
pub struct Jwk {
    pub kty: String,
    #[serde(rename = "use")]
    pub usage: String,
    pub alg: String,
    pub kid: String,
    pub n: String,
    pub e: String,
}

#[derive(Serialize, ToSchema)]
pub struct JwkSet {
    pub keys: Vec<Jwk>,
}

#[derive(Serialize, ToSchema)]
pub struct PersonalAccessToken {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub scopes: Vec<String>,
    pub expires_at: Option<DateTime<Utc>>,
    pub comment: String,
    pub last_used_at: Option<DateTime<Utc>>,
}

#[derive(Deserialize, ToSchema)]
pub struct PersonalAccessTokenCreate {
    pub comment: String,
    pub scopes: Vec<String>,
    /// Lifetime in seconds, 1 to 315360000 (ten years); none for a token that does not
    /// expire.
    #[schema(minimum = 1, maximum = 315360000)]
    pub expires_in: Option<i64>,
}

/// The new token, shown once.
#[derive(Serialize, ToSchema)]
pub struct PersonalAccessTokenCreateResponse {
    pub personal_access_token: PersonalAccessToken,
    pub token: String,
}
