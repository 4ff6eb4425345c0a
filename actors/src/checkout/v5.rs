//! The checkout record's format version 5, before business buyers and tax breakdowns: kept
//! to decode records written by earlier builds. A version-5 checkout is a consumer's, and
//! its `tax_amount` is tax added on top (the only tax it could have).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::model::{AppliedDiscount, Checkout, CheckoutStatus};
use crate::domain::custom_field::CustomFieldData;
use crate::domain::customer::{Address, TaxId};
use crate::domain::ids::{CheckoutId, CustomerId, OrganizationId, ProductId, SubscriptionId};
use crate::domain::metadata::Metadata;
use crate::domain::product::{Price, Trial};

/// Field for field the layout of version 5 (bincode is not self-describing: the order and
/// the types are the format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct CheckoutV5 {
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
    pub products: Vec<ProductId>,
    pub require_billing_address: bool,
    pub allow_trial: bool,
    pub external_customer_id: Option<String>,
    pub return_url: Option<String>,
    pub payment_method_type: Option<String>,
    pub trial: Option<Trial>,
    pub product_trial: Option<Trial>,
    pub trial_end: Option<DateTime<Utc>>,
    pub seats: Option<u32>,
    pub min_seats: Option<u32>,
    pub max_seats: Option<u32>,
}

impl From<CheckoutV5> for Checkout {
    fn from(v5: CheckoutV5) -> Self {
        Checkout {
            id: v5.id,
            organization_id: v5.organization_id,
            created_at: v5.created_at,
            modified_at: v5.modified_at,
            status: v5.status,
            client_secret: v5.client_secret,
            expires_at: v5.expires_at,
            success_url: v5.success_url,
            embed_origin: v5.embed_origin,
            product_id: v5.product_id,
            price: v5.price,
            amount: v5.amount,
            currency: v5.currency,
            tax_amount: v5.tax_amount,
            discount: v5.discount,
            allow_discount_codes: v5.allow_discount_codes,
            customer_id: v5.customer_id,
            customer_name: v5.customer_name,
            customer_email: v5.customer_email,
            customer_ip_address: v5.customer_ip_address,
            customer_billing_address: v5.customer_billing_address,
            customer_tax_id: v5.customer_tax_id,
            customer_metadata: v5.customer_metadata,
            metadata: v5.metadata,
            custom_field_data: v5.custom_field_data,
            payment_processor_metadata: v5.payment_processor_metadata,
            subscription_id: v5.subscription_id,
            confirmation_token: v5.confirmation_token,
            customer_id_before_confirm: v5.customer_id_before_confirm,
            products: v5.products,
            require_billing_address: v5.require_billing_address,
            allow_trial: v5.allow_trial,
            external_customer_id: v5.external_customer_id,
            return_url: v5.return_url,
            payment_method_type: v5.payment_method_type,
            trial: v5.trial,
            product_trial: v5.product_trial,
            trial_end: v5.trial_end,
            seats: v5.seats,
            min_seats: v5.min_seats,
            max_seats: v5.max_seats,
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
