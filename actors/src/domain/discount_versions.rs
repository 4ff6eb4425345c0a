//! The discount formats older than the current one, read into a [`Discount`].

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{Discount, DiscountDuration, DiscountKind};
use crate::domain::ids::{DiscountId, OrganizationId, ProductId};
use crate::domain::metadata::Metadata;

/// A discount as format version 1 stored it: a fixed discount had one amount, its kind's.
#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
pub(super) struct DiscountV1 {
    pub(super) id: DiscountId,
    pub(super) organization_id: OrganizationId,
    pub(super) created_at: DateTime<Utc>,
    pub(super) modified_at: Option<DateTime<Utc>>,
    pub(super) name: String,
    pub(super) code: Option<String>,
    pub(super) kind: DiscountKind,
    pub(super) duration: DiscountDuration,
    pub(super) starts_at: Option<DateTime<Utc>>,
    pub(super) ends_at: Option<DateTime<Utc>>,
    pub(super) max_redemptions: Option<i64>,
    pub(super) redemptions_count: i64,
    pub(super) product_ids: Vec<ProductId>,
    pub(super) metadata: Metadata,
    pub(super) deleted_at: Option<DateTime<Utc>>,
}

impl From<DiscountV1> for Discount {
    fn from(v1: DiscountV1) -> Self {
        Discount {
            id: v1.id,
            organization_id: v1.organization_id,
            created_at: v1.created_at,
            modified_at: v1.modified_at,
            name: v1.name,
            code: v1.code,
            kind: v1.kind,
            duration: v1.duration,
            starts_at: v1.starts_at,
            ends_at: v1.ends_at,
            max_redemptions: v1.max_redemptions,
            redemptions_count: v1.redemptions_count,
            product_ids: v1.product_ids,
            metadata: v1.metadata,
            deleted_at: v1.deleted_at,
            other_amounts: Vec::new(),
        }
    }
}
