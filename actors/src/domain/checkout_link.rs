//! Checkout links (Polar's `CheckoutLink`): a shareable URL that opens a fresh checkout
//! session of the link's products each time it is followed. Listed per organization
//! (newest last, Polar's default) and per product; found by its client secret
//! (`polar_cl_…`, unique) when followed.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::ids::{DiscountId, OrganizationId, PriceId, ProductId};
use super::metadata::Metadata;
use super::product::Trial;
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
    // Format version 2.
    /// The trial each checkout of the link gives, instead of its product's.
    pub trial: Option<Trial>,
    // Format version 3.
    /// The seats each checkout of the link starts with (seat-based products only).
    pub seats: Option<u32>,
}

/// What a new link offers, as its creator named it: products (at least one, unique), one
/// product, or the product of a price.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkOffer {
    Products(Vec<ProductId>),
    Product(ProductId),
    Price(PriceId),
}

/// A link to create (`POST /v1/checkout-links/`), its fields' shapes checked by the adapter
/// that read it; its products and discount are checked against the store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCheckoutLink {
    pub offer: LinkOffer,
    /// `None` when not given or blank.
    pub label: Option<String>,
    pub allow_discount_codes: bool,
    pub require_billing_address: bool,
    pub discount_id: Option<DiscountId>,
    /// An http(s) URL.
    pub success_url: Option<String>,
    /// An http(s) URL.
    pub return_url: Option<String>,
    pub metadata: Metadata,
    pub trial: Option<Trial>,
    /// The seats each checkout starts with (every product seat-based; checked against
    /// the store).
    pub seats: Option<u32>,
}

/// A change of a link (`PATCH /v1/checkout-links/{id}`), its fields' shapes checked by the
/// adapter that read it; `None` leaves a field as it is, `Some(None)` clears it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckoutLinkChange {
    /// At least one, unique; checked against the store (one organization, the link's).
    pub products: Option<Vec<ProductId>>,
    /// `Some(None)`: no label (also when blank).
    pub label: Option<Option<String>>,
    pub allow_discount_codes: Option<bool>,
    pub require_billing_address: Option<bool>,
    pub discount_id: Option<Option<DiscountId>>,
    pub success_url: Option<Option<String>>,
    pub return_url: Option<Option<String>>,
    pub metadata: Option<Metadata>,
    /// `Some(None)`: the link's own trial is dropped.
    pub trial: Option<Option<Trial>>,
    /// `Some(None)`: no seats preset.
    pub seats: Option<Option<u32>>,
}

/// A link as format version 2 stored it: without seats.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct CheckoutLinkV2 {
    id: CheckoutLinkId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    client_secret: String,
    label: Option<String>,
    products: Vec<ProductId>,
    allow_discount_codes: bool,
    require_billing_address: bool,
    discount_id: Option<DiscountId>,
    success_url: Option<String>,
    return_url: Option<String>,
    metadata: Metadata,
    trial: Option<Trial>,
}

impl From<CheckoutLinkV2> for CheckoutLink {
    fn from(v: CheckoutLinkV2) -> Self {
        CheckoutLink {
            id: v.id,
            organization_id: v.organization_id,
            created_at: v.created_at,
            modified_at: v.modified_at,
            client_secret: v.client_secret,
            label: v.label,
            products: v.products,
            allow_discount_codes: v.allow_discount_codes,
            require_billing_address: v.require_billing_address,
            discount_id: v.discount_id,
            success_url: v.success_url,
            return_url: v.return_url,
            metadata: v.metadata,
            trial: v.trial,
            seats: None,
        }
    }
}

/// A link as format version 1 stored it: without a trial.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct CheckoutLinkV1 {
    id: CheckoutLinkId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    client_secret: String,
    label: Option<String>,
    products: Vec<ProductId>,
    allow_discount_codes: bool,
    require_billing_address: bool,
    discount_id: Option<DiscountId>,
    success_url: Option<String>,
    return_url: Option<String>,
    metadata: Metadata,
}

impl From<CheckoutLinkV1> for CheckoutLink {
    fn from(v: CheckoutLinkV1) -> Self {
        CheckoutLink {
            id: v.id,
            organization_id: v.organization_id,
            created_at: v.created_at,
            modified_at: v.modified_at,
            client_secret: v.client_secret,
            label: v.label,
            products: v.products,
            allow_discount_codes: v.allow_discount_codes,
            require_billing_address: v.require_billing_address,
            discount_id: v.discount_id,
            success_url: v.success_url,
            return_url: v.return_url,
            metadata: v.metadata,
            trial: None,
            seats: None,
        }
    }
}

impl CheckoutLink {
    pub fn secret_key(secret: &str) -> UniqueKey {
        UniqueKey::new(CHECKOUT_LINK_SECRET, Vec::new(), secret.as_bytes().to_vec())
    }
}

impl Record for CheckoutLink {
    const COLLECTION: &'static str = "checkout_link";
    /// 2: the link's trial (version 1 decodes without one); 3: its seats (version 2
    /// decodes without).
    const VERSION: u16 = 3;

    fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
        match version {
            1 => tollgate_storage::codec::decode::<CheckoutLinkV1>(Self::COLLECTION, 1, payload)
                .map(CheckoutLink::from),
            2 => tollgate_storage::codec::decode::<CheckoutLinkV2>(Self::COLLECTION, 2, payload)
                .map(CheckoutLink::from),
            3 => tollgate_storage::codec::decode(Self::COLLECTION, 3, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

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
            trial: Some(Trial {
                interval: crate::domain::product::RecurringInterval::Week,
                count: 2,
            }),
            seats: Some(4),
        }
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let link = full_link();
        assert_eq!(
            (CheckoutLink::COLLECTION, CheckoutLink::VERSION),
            ("checkout_link", 3)
        );
        let bytes = link.encode().unwrap_or_default();
        assert_eq!(CheckoutLink::decode(3, &bytes).ok(), Some(link));
        // Version 3 appends the seats (`Some(4)`: 01 04).
        assert_eq!(
            hex(&bytes),
            format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}0104"),
            "checkout link format v3 changed"
        );
    }

    /// A link written by a build of format version 2 reads without seats.
    #[test]
    fn version_2_links_decode_without_seats() {
        let v2 = (0..GOLDEN_V1.len() + GOLDEN_V2_TAIL.len())
            .step_by(2)
            .filter_map(|i| {
                format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}")
                    .get(i..i + 2)
                    .map(str::to_string)
            })
            .filter_map(|b| u8::from_str_radix(&b, 16).ok())
            .collect::<Vec<u8>>();
        let expected = CheckoutLink {
            seats: None,
            ..full_link()
        };
        assert_eq!(CheckoutLink::decode(2, &v2).ok(), Some(expected.clone()));
        assert!(CheckoutLink::decode(3, &v2).is_err());
        let again = expected.encode().unwrap_or_default();
        assert_eq!(hex(&again), format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}00"));
    }

    /// A link written by a build of format version 1 reads without a trial.
    #[test]
    fn version_1_links_decode_without_a_trial() {
        let link = full_link();
        let v1 = CheckoutLinkV1 {
            id: link.id,
            organization_id: link.organization_id,
            created_at: link.created_at,
            modified_at: link.modified_at,
            client_secret: link.client_secret.clone(),
            label: link.label.clone(),
            products: link.products.clone(),
            allow_discount_codes: link.allow_discount_codes,
            require_billing_address: link.require_billing_address,
            discount_id: link.discount_id,
            success_url: link.success_url.clone(),
            return_url: link.return_url.clone(),
            metadata: link.metadata.clone(),
        };
        let bytes = tollgate_storage::codec::encode(&v1).unwrap_or_default();
        assert_eq!(hex(&bytes), GOLDEN_V1);
        let expected = CheckoutLink {
            trial: None,
            seats: None,
            ..link
        };
        assert_eq!(CheckoutLink::decode(1, &bytes).ok(), Some(expected));
        assert!(CheckoutLink::decode(2, &bytes).is_err());
    }

    /// Format version 2 appends the trial to version 1's layout.
    const GOLDEN_V2_TAIL: &str = "010302";

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
