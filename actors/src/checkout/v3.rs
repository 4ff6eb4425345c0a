//! The checkout record's format version 3, before checkouts sold seats: kept to decode
//! records written by earlier builds. A version-3 checkout has no seats (none of its
//! prices could be seat-based).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::model::{AppliedDiscount, Checkout, CheckoutStatus};
use crate::domain::custom_field::CustomFieldData;
use crate::domain::customer::{Address, TaxId};
use crate::domain::ids::{CheckoutId, CustomerId, OrganizationId, ProductId, SubscriptionId};
use crate::domain::metadata::Metadata;
use crate::domain::product::{Price, Trial};

/// Field for field the layout of version 3 (bincode is not self-describing: the order and
/// the types are the format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct CheckoutV3 {
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
}

impl From<CheckoutV3> for Checkout {
    fn from(v3: CheckoutV3) -> Self {
        Checkout {
            id: v3.id,
            organization_id: v3.organization_id,
            created_at: v3.created_at,
            modified_at: v3.modified_at,
            status: v3.status,
            client_secret: v3.client_secret,
            expires_at: v3.expires_at,
            success_url: v3.success_url,
            embed_origin: v3.embed_origin,
            product_id: v3.product_id,
            price: v3.price,
            amount: v3.amount,
            currency: v3.currency,
            tax_amount: v3.tax_amount,
            discount: v3.discount,
            allow_discount_codes: v3.allow_discount_codes,
            customer_id: v3.customer_id,
            customer_name: v3.customer_name,
            customer_email: v3.customer_email,
            customer_ip_address: v3.customer_ip_address,
            customer_billing_address: v3.customer_billing_address,
            customer_tax_id: v3.customer_tax_id,
            customer_metadata: v3.customer_metadata,
            metadata: v3.metadata,
            custom_field_data: v3.custom_field_data,
            payment_processor_metadata: v3.payment_processor_metadata,
            subscription_id: v3.subscription_id,
            confirmation_token: v3.confirmation_token,
            customer_id_before_confirm: v3.customer_id_before_confirm,
            products: v3.products,
            require_billing_address: v3.require_billing_address,
            allow_trial: v3.allow_trial,
            external_customer_id: v3.external_customer_id,
            return_url: v3.return_url,
            payment_method_type: v3.payment_method_type,
            trial: v3.trial,
            product_trial: v3.product_trial,
            trial_end: v3.trial_end,
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
