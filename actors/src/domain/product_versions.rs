//! The layouts earlier format versions stored a [`Product`] in, and how each reads today.

use chrono::{DateTime, Utc};
use serde::Deserialize;
#[cfg(test)]
use serde::Serialize;

use super::{AttachedCustomField, Metadata, Price, Product, TaxBehaviorOption, Trial};
use crate::domain::ids::{BenefitId, OrganizationId, PriceId, ProductId};

/// A product as format version 1 stored it: every interval single, no trial.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
pub(super) struct ProductV1 {
    pub(super) id: ProductId,
    pub(super) organization_id: OrganizationId,
    pub(super) created_at: DateTime<Utc>,
    pub(super) modified_at: Option<DateTime<Utc>>,
    pub(super) name: String,
    pub(super) description: Option<String>,
    pub(super) is_recurring: bool,
    pub(super) is_archived: bool,
    pub(super) is_tax_applicable: bool,
    pub(super) metadata: Metadata,
    pub(super) prices: Vec<Price>,
    pub(super) benefit_ids: Vec<BenefitId>,
    pub(super) media_ids: Vec<uuid::Uuid>,
    pub(super) attached_custom_fields: Vec<AttachedCustomField>,
}

impl From<ProductV1> for Product {
    fn from(v1: ProductV1) -> Self {
        Product {
            id: v1.id,
            organization_id: v1.organization_id,
            created_at: v1.created_at,
            modified_at: v1.modified_at,
            name: v1.name,
            description: v1.description,
            is_recurring: v1.is_recurring,
            is_archived: v1.is_archived,
            is_tax_applicable: v1.is_tax_applicable,
            metadata: v1.metadata,
            prices: v1.prices,
            benefit_ids: v1.benefit_ids,
            media_ids: v1.media_ids,
            attached_custom_fields: v1.attached_custom_fields,
            recurring_interval_count: 1,
            trial: None,
            price_tax_behavior: Vec::new(),
            free_price_currency: Vec::new(),
        }
    }
}

/// A product as format versions 2 and 3 stored it: no price chose its tax behaviour.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
pub(super) struct ProductV3 {
    pub(super) id: ProductId,
    pub(super) organization_id: OrganizationId,
    pub(super) created_at: DateTime<Utc>,
    pub(super) modified_at: Option<DateTime<Utc>>,
    pub(super) name: String,
    pub(super) description: Option<String>,
    pub(super) is_recurring: bool,
    pub(super) is_archived: bool,
    pub(super) is_tax_applicable: bool,
    pub(super) metadata: Metadata,
    pub(super) prices: Vec<Price>,
    pub(super) benefit_ids: Vec<BenefitId>,
    pub(super) media_ids: Vec<uuid::Uuid>,
    pub(super) attached_custom_fields: Vec<AttachedCustomField>,
    pub(super) recurring_interval_count: u32,
    pub(super) trial: Option<Trial>,
}

impl From<ProductV3> for Product {
    fn from(v3: ProductV3) -> Self {
        Product {
            id: v3.id,
            organization_id: v3.organization_id,
            created_at: v3.created_at,
            modified_at: v3.modified_at,
            name: v3.name,
            description: v3.description,
            is_recurring: v3.is_recurring,
            is_archived: v3.is_archived,
            is_tax_applicable: v3.is_tax_applicable,
            metadata: v3.metadata,
            prices: v3.prices,
            benefit_ids: v3.benefit_ids,
            media_ids: v3.media_ids,
            attached_custom_fields: v3.attached_custom_fields,
            recurring_interval_count: v3.recurring_interval_count,
            trial: v3.trial,
            price_tax_behavior: Vec::new(),
            free_price_currency: Vec::new(),
        }
    }
}

/// A product as format version 4 stored it: every free price in US dollars.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
pub(super) struct ProductV4 {
    pub(super) id: ProductId,
    pub(super) organization_id: OrganizationId,
    pub(super) created_at: DateTime<Utc>,
    pub(super) modified_at: Option<DateTime<Utc>>,
    pub(super) name: String,
    pub(super) description: Option<String>,
    pub(super) is_recurring: bool,
    pub(super) is_archived: bool,
    pub(super) is_tax_applicable: bool,
    pub(super) metadata: Metadata,
    pub(super) prices: Vec<Price>,
    pub(super) benefit_ids: Vec<BenefitId>,
    pub(super) media_ids: Vec<uuid::Uuid>,
    pub(super) attached_custom_fields: Vec<AttachedCustomField>,
    pub(super) recurring_interval_count: u32,
    pub(super) trial: Option<Trial>,
    pub(super) price_tax_behavior: Vec<(PriceId, TaxBehaviorOption)>,
}

impl From<ProductV4> for Product {
    fn from(v4: ProductV4) -> Self {
        Product {
            id: v4.id,
            organization_id: v4.organization_id,
            created_at: v4.created_at,
            modified_at: v4.modified_at,
            name: v4.name,
            description: v4.description,
            is_recurring: v4.is_recurring,
            is_archived: v4.is_archived,
            is_tax_applicable: v4.is_tax_applicable,
            metadata: v4.metadata,
            prices: v4.prices,
            benefit_ids: v4.benefit_ids,
            media_ids: v4.media_ids,
            attached_custom_fields: v4.attached_custom_fields,
            recurring_interval_count: v4.recurring_interval_count,
            trial: v4.trial,
            price_tax_behavior: v4.price_tax_behavior,
            free_price_currency: Vec::new(),
        }
    }
}
