//! Checkout links (Polar's `CheckoutLink`): a shareable URL that opens a fresh checkout
//! session of the link's products each time it is followed. Listed per organization
//! (newest last, Polar's default) and per product; found by its client secret
//! (`polar_cl_…`, unique) when followed.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::ids::{DiscountId, OrganizationId, ProductId};
use super::metadata::Metadata;
use super::time_key;

crate::typed_id!(pub CheckoutLinkId);

/// Links of an organization by creation time.
pub const CHECKOUT_LINK_BY_CREATED: &str = "checkout_link_by_created";
/// Links offering a product, by creation time (one entry per product of the link).
pub const CHECKOUT_LINK_PRODUCT_BY_CREATED: &str = "checkout_link_product_by_created";
pub const CHECKOUT_LINK_SECRET: &str = "checkout_link_secret";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckoutLink {
    pub id: CheckoutLinkId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// `polar_cl_…`: the link's part of its URL, its only credential.
    pub client_secret: String,
    /// A name for the seller only.
    pub label: Option<String>,
    /// The products a checkout of the link offers, the first selected.
    pub products: Vec<ProductId>,
    pub allow_discount_codes: bool,
    pub require_billing_address: bool,
    /// Applied to each checkout while it still applies (ignored otherwise, as Polar does).
    pub discount_id: Option<DiscountId>,
    pub success_url: Option<String>,
    pub return_url: Option<String>,
    /// Copied to each checkout.
    pub metadata: Metadata,
}

impl CheckoutLink {
    pub fn secret_key(secret: &str) -> UniqueKey {
        UniqueKey::new(CHECKOUT_LINK_SECRET, Vec::new(), secret.as_bytes().to_vec())
    }
}

impl Record for CheckoutLink {
    crate::record_v1!(CheckoutLink, "checkout_link");
    const INDEXES: &'static [&'static str] =
        &[CHECKOUT_LINK_BY_CREATED, CHECKOUT_LINK_PRODUCT_BY_CREATED];
    const UNIQUES: &'static [&'static str] = &[CHECKOUT_LINK_SECRET];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        let created = time_key(self.created_at);
        let mut entries = vec![IndexEntry::new(
            CHECKOUT_LINK_BY_CREATED,
            self.organization_id.key(),
            created.clone(),
        )];
        for p in &self.products {
            entries.push(IndexEntry::new(
                CHECKOUT_LINK_PRODUCT_BY_CREATED,
                p.key(),
                created.clone(),
            ));
        }
        entries
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![CheckoutLink::secret_key(&self.client_secret)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{at, hex, metadata, uuid};

    fn full_link() -> CheckoutLink {
        CheckoutLink {
            id: CheckoutLinkId(uuid(1)),
            organization_id: OrganizationId(uuid(2)),
            created_at: at(0),
            modified_at: Some(at(60)),
            client_secret: "polar_cl_secret".into(),
            label: Some("Spring".into()),
            products: vec![ProductId(uuid(3)), ProductId(uuid(4))],
            allow_discount_codes: false,
            require_billing_address: true,
            discount_id: Some(DiscountId(uuid(5))),
            success_url: Some("https://shop.test/thanks".into()),
            return_url: Some("https://shop.test/".into()),
            metadata: metadata(),
        }
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let link = full_link();
        assert_eq!(
            (CheckoutLink::COLLECTION, CheckoutLink::VERSION),
            ("checkout_link", 1)
        );
        let bytes = link.encode().unwrap_or_default();
        assert_eq!(CheckoutLink::decode(1, &bytes).ok(), Some(link));
        assert_eq!(hex(&bytes), GOLDEN_V1, "checkout link format v1 changed");
    }

    #[test]
    fn listed_by_organization_and_by_each_product_found_by_secret() {
        let link = full_link();
        let entries = link.index_entries();
        assert_eq!(entries.len(), 3);
        assert_eq!(
            link.unique_keys(),
            vec![CheckoutLink::secret_key("polar_cl_secret")]
        );
    }

    const GOLDEN_V1: &str = "\
        1000000000000000000000000000000001100000000000000000000000000000000214313937302d3031\
        2d30315430303a30303a30305a0114313937302d30312d30315430303a30313a30305a0f706f6c61725f\
        636c5f7365637265740106537072696e6702100000000000000000000000000000000310000000000000\
        000000000000000000040001011000000000000000000000000000000005011868747470733a2f2f7368\
        6f702e746573742f7468616e6b73011268747470733a2f2f73686f702e746573742f0304706c616e0003\
        70726f057365617473010505747269616c0201";
}
