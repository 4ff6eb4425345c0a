use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::ids::{BenefitId, CustomFieldId, OrganizationId, PriceId, ProductId};
use super::metadata::Metadata;

/// A product and its prices. Prices live inside their product (they are created, archived
/// and read with it); a unique key maps each price id to its product for lookups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Product {
    pub id: ProductId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub name: String,
    pub description: Option<String>,
    pub is_recurring: bool,
    pub is_archived: bool,
    pub is_tax_applicable: bool,
    pub metadata: Metadata,
    /// Every price ever created, archived ones included, in creation order.
    pub prices: Vec<Price>,
    /// Granted on purchase, in the order set by `POST /v1/products/{id}/benefits`.
    pub benefit_ids: Vec<BenefitId>,
    /// File ids of product media (no upload service yet, so normally empty).
    pub media_ids: Vec<uuid::Uuid>,
    pub attached_custom_fields: Vec<AttachedCustomField>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub id: PriceId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub is_archived: bool,
    pub kind: PriceKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecurringInterval {
    Month,
    Year,
}

impl RecurringInterval {
    pub fn as_str(self) -> &'static str {
        match self {
            RecurringInterval::Month => "month",
            RecurringInterval::Year => "year",
        }
    }
}

/// Amounts are in the currency's minor unit (cents).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PriceKind {
    RecurringFixed {
        interval: RecurringInterval,
        currency: String,
        amount: i64,
    },
    RecurringFree {
        interval: RecurringInterval,
    },
    OneTimeFixed {
        currency: String,
        amount: i64,
    },
    /// "Pay what you want", within optional bounds.
    OneTimeCustom {
        currency: String,
        minimum_amount: Option<i64>,
        maximum_amount: Option<i64>,
        preset_amount: Option<i64>,
    },
    OneTimeFree,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountType {
    Fixed,
    Custom,
    Free,
}

impl AmountType {
    pub fn as_str(self) -> &'static str {
        match self {
            AmountType::Fixed => "fixed",
            AmountType::Custom => "custom",
            AmountType::Free => "free",
        }
    }
}

impl PriceKind {
    pub fn is_recurring(&self) -> bool {
        matches!(self, PriceKind::RecurringFixed { .. } | PriceKind::RecurringFree { .. })
    }

    pub fn amount_type(&self) -> AmountType {
        match self {
            PriceKind::RecurringFixed { .. } | PriceKind::OneTimeFixed { .. } => AmountType::Fixed,
            PriceKind::OneTimeCustom { .. } => AmountType::Custom,
            PriceKind::RecurringFree { .. } | PriceKind::OneTimeFree => AmountType::Free,
        }
    }

    pub fn interval(&self) -> Option<RecurringInterval> {
        match self {
            PriceKind::RecurringFixed { interval, .. } | PriceKind::RecurringFree { interval } => Some(*interval),
            _ => None,
        }
    }

    pub fn currency(&self) -> Option<&str> {
        match self {
            PriceKind::RecurringFixed { currency, .. }
            | PriceKind::OneTimeFixed { currency, .. }
            | PriceKind::OneTimeCustom { currency, .. } => Some(currency),
            _ => None,
        }
    }

    /// The fixed amount, if this price has one.
    pub fn fixed_amount(&self) -> Option<i64> {
        match self {
            PriceKind::RecurringFixed { amount, .. } | PriceKind::OneTimeFixed { amount, .. } => Some(*amount),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachedCustomField {
    pub custom_field_id: CustomFieldId,
    pub required: bool,
    pub order: i64,
}

impl Product {
    pub fn price(&self, id: PriceId) -> Option<&Price> {
        self.prices.iter().find(|p| p.id == id)
    }

    /// The first price that is not archived (what a checkout by product id sells).
    pub fn first_active_price(&self) -> Option<&Price> {
        self.prices.iter().find(|p| !p.is_archived)
    }
}
