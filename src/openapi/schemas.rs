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
pub use crate::api::product::{
    CheckoutProduct, ProductBase, ProductPrice, ProductPriceRecurring, ProductView as Product,
    RecurringInterval,
};

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
