//! The checkout record's format version 2, before checkouts had trials: kept to decode
//! records written by earlier builds. A version-2 checkout has no trial of its own, and
//! its product's trial is looked up again when it is next updated (none until then).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::model::{AppliedDiscount, Checkout, CheckoutStatus};
use crate::domain::custom_field::CustomFieldData;
use crate::domain::customer::{Address, TaxId};
use crate::domain::ids::{CheckoutId, CustomerId, OrganizationId, ProductId, SubscriptionId};
use crate::domain::metadata::Metadata;
use crate::domain::product::Price;

/// Field for field the layout of version 2 (bincode is not self-describing: the order and
/// the types are the format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct CheckoutV2 {
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
}

impl From<CheckoutV2> for Checkout {
    fn from(v2: CheckoutV2) -> Self {
        Checkout {
            id: v2.id,
            organization_id: v2.organization_id,
            created_at: v2.created_at,
            modified_at: v2.modified_at,
            status: v2.status,
            client_secret: v2.client_secret,
            expires_at: v2.expires_at,
            success_url: v2.success_url,
            embed_origin: v2.embed_origin,
            product_id: v2.product_id,
            price: v2.price,
            amount: v2.amount,
            currency: v2.currency,
            tax_amount: v2.tax_amount,
            discount: v2.discount,
            allow_discount_codes: v2.allow_discount_codes,
            customer_id: v2.customer_id,
            customer_name: v2.customer_name,
            customer_email: v2.customer_email,
            customer_ip_address: v2.customer_ip_address,
            customer_billing_address: v2.customer_billing_address,
            customer_tax_id: v2.customer_tax_id,
            customer_metadata: v2.customer_metadata,
            metadata: v2.metadata,
            custom_field_data: v2.custom_field_data,
            payment_processor_metadata: v2.payment_processor_metadata,
            subscription_id: v2.subscription_id,
            confirmation_token: v2.confirmation_token,
            customer_id_before_confirm: v2.customer_id_before_confirm,
            products: v2.products,
            require_billing_address: v2.require_billing_address,
            allow_trial: v2.allow_trial,
            external_customer_id: v2.external_customer_id,
            return_url: v2.return_url,
            payment_method_type: v2.payment_method_type,
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
