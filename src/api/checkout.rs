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

/// Creates a checkout for a price (`product_price_id`) or for a product's first price
/// (`product_id`).
#[derive(Debug, Deserialize, ToSchema)]
pub struct CheckoutCreate {
    // Checked by the handler, for Polar's error ("Input should be 'stripe'").
    #[schema(value_type = Option<PaymentProcessor>, nullable = false)]
    pub payment_processor: Option<String>,
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
}

/// Updates an open checkout by id (organizer side). A key left out is unchanged.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CheckoutUpdate {
    #[serde(default)]
    #[schema(value_type = Option<std::collections::HashMap<String, crate::api::free_form::CustomFieldInput>>)]
    pub custom_field_data: Maybe<Value>,
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
}

/// Updates an open checkout by its client secret (buyer side). A key left out is
/// unchanged.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CheckoutUpdatePublic {
    #[serde(default)]
    #[schema(value_type = Option<std::collections::HashMap<String, crate::api::free_form::CustomFieldInput>>)]
    pub custom_field_data: Maybe<Value>,
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
}

/// Confirms a checkout: the public update fields plus the payment's confirmation token.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CheckoutConfirm {
    #[serde(default)]
    #[schema(value_type = Option<std::collections::HashMap<String, crate::api::free_form::CustomFieldInput>>)]
    pub custom_field_data: Maybe<Value>,
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
}

/// The fields of the three update bodies in one place, as the routes resolve them against
/// the checkout (`app::checkout::fields::resolve_changes`); each body leaves the fields
/// it does not accept absent.
#[derive(Debug, Clone, Default)]
pub struct CheckoutChanges {
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
}

impl From<CheckoutUpdate> for CheckoutChanges {
    fn from(u: CheckoutUpdate) -> Self {
        CheckoutChanges {
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
        }
    }
}

impl From<CheckoutUpdatePublic> for CheckoutChanges {
    fn from(u: CheckoutUpdatePublic) -> Self {
        CheckoutChanges {
            product_price_id: u.product_price_id,
            amount: u.amount,
            customer_name: u.customer_name,
            customer_email: u.customer_email,
            customer_billing_address: u.customer_billing_address,
            customer_tax_id: u.customer_tax_id,
            custom_field_data: u.custom_field_data,
            discount_code: u.discount_code,
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
            product_price_id: self.product_price_id,
            amount: self.amount,
            customer_name: self.customer_name,
            customer_email: self.customer_email,
            customer_billing_address: self.customer_billing_address,
            customer_tax_id: self.customer_tax_id,
            discount_code: self.discount_code,
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

/// What the renderings need besides the checkout itself, read from the store by the
/// routes: the hosted page's URLs and the product as it is now.
#[derive(Debug, Clone)]
pub struct CheckoutContext {
    pub url: String,
    pub success_url: String,
    pub product: CheckoutProduct,
    pub product_price: ProductPrice,
    pub attached_custom_fields: Vec<AttachedCustomFieldView>,
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
            pub customer_billing_address: Option<AddressView>,
            pub customer_tax_id: Option<String>,
            pub payment_processor_metadata: BTreeMap<String, String>,
            #[schema(value_type = std::collections::HashMap<String, CustomFieldValue>)]
            pub custom_field_data: CustomFieldDataMap,
            pub product: CheckoutProduct,
            pub product_price: ProductPrice,
            pub discount: Option<CheckoutDiscount>,
            pub attached_custom_fields: Vec<AttachedCustomFieldView>,
            $($(#[$fdoc])* pub $field: $ty,)*
        }

        impl $name {
            fn build(c: &Checkout, ctx: CheckoutContext, $($field: $ty),*) -> Self {
                Self {
                    id: c.id.0,
                    created_at: c.created_at,
                    modified_at: c.modified_at,
                    payment_processor: PaymentProcessor::Stripe,
                    client_secret: c.client_secret.clone(),
                    url: ctx.url,
                    expires_at: c.expires_at,
                    success_url: ctx.success_url,
                    embed_origin: c.embed_origin.clone(),
                    amount: c.amount,
                    tax_amount: c.tax_amount,
                    currency: c.currency.clone(),
                    subtotal_amount: c.subtotal_amount(),
                    total_amount: c.total_amount(),
                    product_id: c.product_id.0,
                    product_price_id: c.price.id.0,
                    discount_id: c.discount.as_ref().map(|d| d.id.0),
                    allow_discount_codes: c.allow_discount_codes,
                    is_discount_applicable: c.is_discount_applicable(),
                    is_free_product_price: c.is_free_product_price(),
                    is_payment_required: c.is_payment_required(),
                    is_payment_setup_required: c.is_payment_setup_required(),
                    is_payment_form_required: c.is_payment_form_required(),
                    customer_id: c.customer_id.map(|id| id.0),
                    customer_name: c.customer_name.clone(),
                    customer_email: c.customer_email.clone(),
                    customer_ip_address: c.customer_ip_address.clone(),
                    customer_billing_address: c
                        .customer_billing_address
                        .as_ref()
                        .map(AddressView::from),
                    customer_tax_id: c.customer_tax_id.as_ref().map(|t| t.value.clone()),
                    payment_processor_metadata: c.payment_processor_metadata.clone(),
                    custom_field_data: custom_field_data_json(&c.custom_field_data),
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

/// Checkouts of the sample products: open with no buyer yet (the first price of each
/// product), and for the first product one with a buyer, a discount, custom-field answers
/// and metadata, confirmed and then succeeded.
#[cfg(test)]
pub(crate) fn sample_checkouts() -> Vec<Checkout> {
    use chrono::{Duration, TimeZone};

    use crate::domain::custom_field::{CustomFieldData, FieldValue};
    use crate::domain::customer::Address;
    use crate::domain::ids::{CheckoutId, CustomerId, SubscriptionId};
    use crate::domain::metadata::{MetaValue, Metadata};
    use tollgate_actors::checkout::{AppliedDiscount, Changes, ConfirmContext, NewCheckout};
    use tollgate_actors::tax::NoTax;

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let new = |n: u128, p: &crate::domain::product::Product| {
        let price = p.prices.first().cloned()?;
        Some(NewCheckout {
            id: CheckoutId(Uuid::from_u128(0xc400 + n)),
            organization_id: p.organization_id,
            client_secret: format!("polar_c_sample{n}"),
            expires_at: now + Duration::hours(1),
            product_id: p.id,
            price,
            amount: None,
            discount: None,
            allow_discount_codes: true,
            customer_id: None,
            customer_name: None,
            customer_email: None,
            customer_ip_address: None,
            customer_billing_address: None,
            customer_tax_id: None,
            customer_metadata: Metadata::default(),
            metadata: Metadata::default(),
            custom_field_data: CustomFieldData::default(),
            success_url: None,
            embed_origin: None,
            subscription_id: None,
        })
    };
    let mut out = Vec::new();
    let products = super::product::sample_products();
    for (n, p) in products.iter().enumerate() {
        if let Some(c) = new(n as u128, p).and_then(|c| Checkout::create(c, now, &NoTax).ok()) {
            out.push(c);
        }
    }
    let Some(mut bought) = products.first().and_then(|p| new(0x10, p)) else {
        return out;
    };
    bought.discount = super::discount::sample_discounts()
        .first()
        .map(AppliedDiscount::from);
    bought.customer_name = Some("Jane Doe".into());
    bought.customer_email = Some("jane@example.com".into());
    bought.customer_ip_address = Some("203.0.113.7".into());
    bought.customer_billing_address = Address::new(
        Some("1 rue de la Paix"),
        None,
        Some("75002"),
        Some("Paris"),
        None,
        "FR",
    )
    .ok();
    bought.metadata = Metadata(
        [("campaign".to_string(), MetaValue::Str("spring".into()))]
            .into_iter()
            .collect(),
    );
    bought.customer_metadata = Metadata(
        [("vip".to_string(), MetaValue::Bool(true))]
            .into_iter()
            .collect(),
    );
    bought.custom_field_data = CustomFieldData(
        [
            ("seats".to_string(), FieldValue::Int(3)),
            ("notes".to_string(), FieldValue::Null),
        ]
        .into_iter()
        .collect(),
    );
    bought.success_url = Some("https://example.com/thanks?checkout={CHECKOUT_ID}".into());
    bought.embed_origin = Some("https://example.com".into());
    let confirm = ConfirmContext {
        confirmation_token: Some("ctoken_sample"),
        discount_redeemable: true,
        price_archived: false,
    };
    let Ok(confirmed) = Checkout::create(bought, now, &NoTax)
        .and_then(|c| c.confirm(Changes::default(), confirm, now, &NoTax))
        .map(|c| c.with_customer(CustomerId(Uuid::from_u128(0xc0))))
    else {
        return out;
    };
    let subscription = SubscriptionId(Uuid::from_u128(0x5000));
    if let Ok(succeeded) = confirmed.succeed(Some("pi_sample"), Some(subscription), now) {
        out.push(succeeded);
    }
    out.push(confirmed);
    out
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    use chrono::TimeZone;

    use crate::domain::organization::Organization;

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let products = super::product::sample_products();
    let benefits = super::benefit::sample_benefits();
    let fields = super::custom_field::sample_custom_fields();
    let org = Organization::new(
        crate::domain::ids::OrganizationId(Uuid::from_u128(0x0a)),
        "Acme Inc.".into(),
        "acme".into(),
        now,
    );
    let to_value = |v: Result<Value, serde_json::Error>| v.unwrap_or_default();
    let mut out = Vec::new();
    for c in sample_checkouts() {
        let Some(product) = products.iter().find(|p| p.id == c.product_id) else {
            continue;
        };
        let base = "https://tollgate.example.com";
        let ctx = CheckoutContext {
            url: format!("{base}/checkout/{}", c.client_secret),
            success_url: c
                .success_url(&format!("{base}/checkout/{}/confirmation", c.client_secret)),
            product: CheckoutProduct::new(product, &benefits),
            product_price: ProductPrice::new(product.id, &c.price),
            attached_custom_fields: super::product::attached_custom_fields(product, &fields),
        };
        out.push((
            "Checkout",
            to_value(serde_json::to_value(CheckoutView::new(
                &c,
                c.status,
                ctx.clone(),
            ))),
        ));
        out.push((
            "CheckoutPublic",
            to_value(serde_json::to_value(CheckoutPublic::new(
                &c,
                c.status,
                ctx.clone(),
                OrganizationView::from(&org),
            ))),
        ));
        if c.status == domain::CheckoutStatus::Confirmed {
            out.push((
                "CheckoutPublicConfirmed",
                to_value(serde_json::to_value(CheckoutPublicConfirmed::new(
                    &c,
                    ctx,
                    OrganizationView::from(&org),
                    "polar_cst_sample".into(),
                ))),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    const BASE_KEYS: [&str; 35] = [
        "id",
        "created_at",
        "modified_at",
        "payment_processor",
        "status",
        "client_secret",
        "url",
        "expires_at",
        "success_url",
        "embed_origin",
        "amount",
        "tax_amount",
        "currency",
        "subtotal_amount",
        "total_amount",
        "product_id",
        "product_price_id",
        "discount_id",
        "allow_discount_codes",
        "is_discount_applicable",
        "is_free_product_price",
        "is_payment_required",
        "is_payment_setup_required",
        "is_payment_form_required",
        "customer_id",
        "customer_name",
        "customer_email",
        "customer_ip_address",
        "customer_billing_address",
        "customer_tax_id",
        "payment_processor_metadata",
        "custom_field_data",
        "product",
        "product_price",
        "discount",
    ];

    #[test]
    fn the_renderings_have_every_key_of_the_sdk_models() {
        let base: BTreeSet<String> = BASE_KEYS
            .into_iter()
            .chain(["attached_custom_fields"])
            .map(String::from)
            .collect();
        let with = |extra: &[&str]| -> BTreeSet<String> {
            let mut k = base.clone();
            k.extend(extra.iter().map(|s| s.to_string()));
            k
        };
        let mut seen = BTreeSet::new();
        for (name, v) in samples() {
            let expected = match name {
                "Checkout" => with(&["metadata", "customer_metadata", "subscription_id"]),
                "CheckoutPublic" => with(&["organization"]),
                "CheckoutPublicConfirmed" => with(&["organization", "customer_session_token"]),
                other => panic!("unexpected sample {other}"),
            };
            assert_eq!(keys(&v), expected, "{name}");
            assert_eq!(v["payment_processor"], "stripe");
            seen.insert(name);
        }
        assert_eq!(seen.len(), 3);
    }

    #[test]
    fn a_bought_checkout_renders_its_buyer_discount_and_answers() {
        let samples = samples();
        let succeeded = samples
            .iter()
            .map(|(_, v)| v)
            .find(|v| v["status"] == "succeeded" && v.get("metadata").is_some())
            .cloned()
            .unwrap_or_default();
        assert_eq!(succeeded["customer_billing_address"]["country"], "FR");
        assert_eq!(succeeded["customer_billing_address"]["line2"], Value::Null);
        assert_eq!(succeeded["discount"]["duration"], "once");
        assert_eq!(succeeded["discount_id"], succeeded["discount"]["id"]);
        // The empty optional answer is left out, as in `custom_field_data_json`.
        assert_eq!(succeeded["custom_field_data"], json!({"seats": 3}));
        assert_eq!(succeeded["metadata"], json!({"campaign": "spring"}));
        assert_eq!(succeeded["customer_metadata"], json!({"vip": true}));
        assert_eq!(
            succeeded["payment_processor_metadata"],
            json!({"intent_id": "pi_sample", "intent_status": "succeeded"})
        );
        assert_eq!(succeeded["subscription_id"], json!(Uuid::from_u128(0x5000)));
        assert_eq!(
            succeeded["success_url"],
            format!(
                "https://example.com/thanks?checkout={}",
                Uuid::from_u128(0xc410)
            )
        );
        let confirmed: Vec<&Value> = samples
            .iter()
            .filter(|(n, _)| *n == "CheckoutPublicConfirmed")
            .map(|(_, v)| v)
            .collect();
        assert_eq!(confirmed.len(), 1);
        assert_eq!(confirmed[0]["status"], "confirmed");
        assert_eq!(confirmed[0]["customer_session_token"], "polar_cst_sample");
        assert_eq!(confirmed[0]["organization"]["slug"], "acme");
        let open = samples
            .iter()
            .map(|(_, v)| v)
            .find(|v| v["status"] == "open")
            .cloned()
            .unwrap_or_default();
        assert_eq!(open["customer_billing_address"], Value::Null);
        assert_eq!(open["discount"], Value::Null);
        assert_eq!(open["custom_field_data"], json!({}));
        assert_eq!(
            open["url"],
            format!(
                "https://tollgate.example.com/checkout/{}",
                open["client_secret"].as_str().unwrap_or("")
            )
        );
    }

    #[test]
    fn statuses_are_the_domains_names() {
        use domain::CheckoutStatus as S;
        for s in [S::Open, S::Expired, S::Confirmed, S::Succeeded, S::Failed] {
            assert_eq!(
                serde_json::to_value(CheckoutStatus::from(s)).unwrap(),
                json!(s.as_str())
            );
        }
        assert_eq!(
            serde_json::to_value(CheckoutStatusConfirmed::Confirmed).unwrap(),
            json!("confirmed")
        );
    }

    #[test]
    fn each_body_keeps_only_its_own_fields() {
        let organizer: CheckoutUpdate = serde_json::from_value(json!({
            "metadata": {"a": 1}, "discount_code": "IGNORED", "customer_name": null
        }))
        .unwrap();
        let changes = CheckoutChanges::from(organizer);
        assert!(changes.metadata.as_value().is_some());
        assert!(changes.discount_code.is_absent());
        assert_eq!(changes.customer_name, Maybe::Null);
        let public: CheckoutUpdatePublic = serde_json::from_value(json!({
            "metadata": {"a": 1}, "discount_code": "SPRING"
        }))
        .unwrap();
        let changes = CheckoutChanges::from(public);
        assert!(changes.metadata.is_absent());
        assert_eq!(changes.discount_code, Maybe::Value("SPRING".into()));
        let confirm: CheckoutConfirm = serde_json::from_value(json!({
            "confirmation_token_id": "ctoken", "customer_email": "a@b.co"
        }))
        .unwrap();
        let (changes, token) = confirm.split();
        assert_eq!(token.as_deref(), Some("ctoken"));
        assert_eq!(changes.customer_email, Maybe::Value("a@b.co".into()));
        let (_, token) = CheckoutConfirm::default().split();
        assert_eq!(token, None);
    }
}
