//! The checkout record's format version 1, before checkouts had a list of products and the
//! 2026 fields: kept to decode records written by earlier builds. A version-1 checkout
//! becomes a checkout of its one product, with Polar's default terms
//! ([`super::CheckoutTerms::for_product`]).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::model::{AppliedDiscount, Checkout, CheckoutStatus, CheckoutTerms};
use crate::domain::custom_field::CustomFieldData;
use crate::domain::customer::{Address, TaxId};
use crate::domain::ids::{CheckoutId, CustomerId, OrganizationId, ProductId, SubscriptionId};
use crate::domain::metadata::Metadata;
use crate::domain::product::Price;

/// Field for field the layout of version 1 (bincode is not self-describing: the order and
/// the types are the format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct CheckoutV1 {
    pub id: CheckoutId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub status: CheckoutStatus,
    pub client_secret: String,
    pub expires_at: DateTime<Utc>,
    pub success_url: Option<String>,
    pub embed_origin: Option<String>,
    pub product_id: ProductId,
    pub price: Price,
    pub amount: Option<i64>,
    pub currency: Option<String>,
    pub tax_amount: Option<i64>,
    pub discount: Option<AppliedDiscount>,
    pub allow_discount_codes: bool,
    pub customer_id: Option<CustomerId>,
    pub customer_name: Option<String>,
    pub customer_email: Option<String>,
    pub customer_ip_address: Option<String>,
    pub customer_billing_address: Option<Address>,
    pub customer_tax_id: Option<TaxId>,
    pub customer_metadata: Metadata,
    pub metadata: Metadata,
    pub custom_field_data: CustomFieldData,
    pub payment_processor_metadata: BTreeMap<String, String>,
    pub subscription_id: Option<SubscriptionId>,
    pub confirmation_token: Option<String>,
    pub customer_id_before_confirm: Option<CustomerId>,
}

impl From<CheckoutV1> for Checkout {
    fn from(v1: CheckoutV1) -> Checkout {
        let terms = CheckoutTerms::for_product(v1.product_id);
        Checkout {
            id: v1.id,
            organization_id: v1.organization_id,
            created_at: v1.created_at,
            modified_at: v1.modified_at,
            status: v1.status,
            client_secret: v1.client_secret,
            expires_at: v1.expires_at,
            success_url: v1.success_url,
            embed_origin: v1.embed_origin,
            product_id: v1.product_id,
            price: v1.price,
            amount: v1.amount,
            currency: v1.currency,
            tax_amount: v1.tax_amount,
            discount: v1.discount,
            allow_discount_codes: v1.allow_discount_codes,
            customer_id: v1.customer_id,
            customer_name: v1.customer_name,
            customer_email: v1.customer_email,
            customer_ip_address: v1.customer_ip_address,
            customer_billing_address: v1.customer_billing_address,
            customer_tax_id: v1.customer_tax_id,
            customer_metadata: v1.customer_metadata,
            metadata: v1.metadata,
            custom_field_data: v1.custom_field_data,
            payment_processor_metadata: v1.payment_processor_metadata,
            subscription_id: v1.subscription_id,
            confirmation_token: v1.confirmation_token,
            customer_id_before_confirm: v1.customer_id_before_confirm,
            products: terms.products,
            require_billing_address: terms.require_billing_address,
            allow_trial: terms.allow_trial,
            external_customer_id: terms.external_customer_id,
            return_url: terms.return_url,
            payment_method_type: None,
            trial: None,
            product_trial: None,
            trial_end: None,
            seats: None,
            min_seats: None,
            max_seats: None,
            is_business_customer: false,
            customer_billing_name: None,
            tax_behavior: None,
            tax_breakdown: Vec::new(),
            tax_id_status: None,
            tax_provider_ref: None,
            locale: None,
        }
    }
}
