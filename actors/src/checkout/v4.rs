//! The checkout record's format version 4, before sellers bounded a checkout's seats: kept
//! to decode records written by earlier builds. A version-4 checkout has the seats it
//! sells and no bounds of its own (the price's apply).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::model::{AppliedDiscount, Checkout, CheckoutStatus};
use crate::domain::custom_field::CustomFieldData;
use crate::domain::customer::{Address, TaxId};
use crate::domain::ids::{CheckoutId, CustomerId, OrganizationId, ProductId, SubscriptionId};
use crate::domain::metadata::Metadata;
use crate::domain::product::{Price, Trial};

/// Field for field the layout of version 4 (bincode is not self-describing: the order and
/// the types are the format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct CheckoutV4 {
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
}

impl From<CheckoutV4> for Checkout {
    fn from(v4: CheckoutV4) -> Self {
        Checkout {
            id: v4.id,
            organization_id: v4.organization_id,
            created_at: v4.created_at,
            modified_at: v4.modified_at,
            status: v4.status,
            client_secret: v4.client_secret,
            expires_at: v4.expires_at,
            success_url: v4.success_url,
            embed_origin: v4.embed_origin,
            product_id: v4.product_id,
            price: v4.price,
            amount: v4.amount,
            currency: v4.currency,
            tax_amount: v4.tax_amount,
            discount: v4.discount,
            allow_discount_codes: v4.allow_discount_codes,
            customer_id: v4.customer_id,
            customer_name: v4.customer_name,
            customer_email: v4.customer_email,
            customer_ip_address: v4.customer_ip_address,
            customer_billing_address: v4.customer_billing_address,
            customer_tax_id: v4.customer_tax_id,
            customer_metadata: v4.customer_metadata,
            metadata: v4.metadata,
            custom_field_data: v4.custom_field_data,
            payment_processor_metadata: v4.payment_processor_metadata,
            subscription_id: v4.subscription_id,
            confirmation_token: v4.confirmation_token,
            customer_id_before_confirm: v4.customer_id_before_confirm,
            products: v4.products,
            require_billing_address: v4.require_billing_address,
            allow_trial: v4.allow_trial,
            external_customer_id: v4.external_customer_id,
            return_url: v4.return_url,
            payment_method_type: v4.payment_method_type,
            trial: v4.trial,
            product_trial: v4.product_trial,
            trial_end: v4.trial_end,
            seats: v4.seats,
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
