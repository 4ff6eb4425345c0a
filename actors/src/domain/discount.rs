//! Discounts: a fixed amount or a percentage off, for one invoice, every invoice or a number
//! of months, optionally behind a code customers type at checkout, limited in time and in
//! redemptions, and optionally restricted to some products of the organization.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record, StorageError, Store, Stored, UniqueKey};

use super::currency::Currency;
use super::ids::{DiscountId, OrganizationId, ProductId};
use super::metadata::Metadata;
use super::product::Product;
use super::time_key;

#[path = "discount_versions.rs"]
mod versions;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Discount {
    pub id: DiscountId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// Shown to the customer when the discount applies.
    pub name: String,
    /// Typed by customers at checkout; unique per organization, case-insensitively, while
    /// the discount is not deleted.
    pub code: Option<String>,
    pub kind: DiscountKind,
    pub duration: DiscountDuration,
    /// Redeemable from this instant on.
    pub starts_at: Option<DateTime<Utc>>,
    /// Not redeemable after this instant.
    pub ends_at: Option<DateTime<Utc>>,
    pub max_redemptions: Option<i64>,
    pub redemptions_count: i64,
    /// The products it applies to; empty means every product of the organization.
    pub product_ids: Vec<ProductId>,
    pub metadata: Metadata,
    pub deleted_at: Option<DateTime<Utc>>,
    /// A fixed discount's amounts in the currencies besides its kind's (Polar's `amounts`
    /// after its first key), in the order given; empty for a percentage. Format version 2.
    pub other_amounts: Vec<(Currency, i64)>,
}

/// What the discount takes off. Amounts are in the currency's minor unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DiscountKind {
    Fixed {
        amount: i64,
        currency: String,
    },
    /// 1 basis point = 0.01 %; 10 000 is 100 %.
    Percentage {
        basis_points: i64,
    },
}

/// For subscriptions: which invoices the discount applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DiscountDuration {
    Once,
    Forever,
    Repeating { months: i64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscountType {
    Fixed,
    Percentage,
}

impl DiscountType {
    pub const ALL: &'static [(&'static str, DiscountType)] = &[
        ("fixed", DiscountType::Fixed),
        ("percentage", DiscountType::Percentage),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DiscountType::Fixed => "fixed",
            DiscountType::Percentage => "percentage",
        }
    }
}

impl DiscountKind {
    pub fn discount_type(&self) -> DiscountType {
        match self {
            DiscountKind::Fixed { .. } => DiscountType::Fixed,
            DiscountKind::Percentage { .. } => DiscountType::Percentage,
        }
    }
}

impl DiscountDuration {
    pub fn as_str(self) -> &'static str {
        match self {
            DiscountDuration::Once => "once",
            DiscountDuration::Forever => "forever",
            DiscountDuration::Repeating { .. } => "repeating",
        }
    }

    pub fn months(self) -> Option<i64> {
        match self {
            DiscountDuration::Repeating { months } => Some(months),
            _ => None,
        }
    }
}

pub const DISCOUNT_BY_CREATED: &str = "discount_by_created";
pub const DISCOUNT_BY_NAME: &str = "discount_by_name";
pub const DISCOUNT_BY_CODE: &str = "discount_by_code";
pub const DISCOUNT_BY_REDEMPTIONS: &str = "discount_by_redemptions";
pub const DISCOUNT_CODE: &str = "discount_code";

/// Codes are compared case-insensitively.
pub fn normalize_code(code: &str) -> String {
    code.to_lowercase()
}

impl Discount {
    pub fn discount_type(&self) -> DiscountType {
        self.kind.discount_type()
    }

    /// What the discount takes off an amount in `currency`: a percentage in any currency,
    /// a fixed amount only in a currency it has an amount in (Polar's rule: otherwise the
    /// discount does not apply, "Discount does not exist.").
    pub fn kind_in(&self, currency: Currency) -> Option<DiscountKind> {
        match &self.kind {
            DiscountKind::Percentage { .. } => Some(self.kind.clone()),
            DiscountKind::Fixed { .. } => self
                .fixed_amounts()
                .into_iter()
                .find(|(c, _)| *c == currency)
                .map(|(c, amount)| DiscountKind::Fixed {
                    amount,
                    currency: c.into(),
                }),
        }
    }

    /// A fixed discount's amount in each of its currencies (Polar's `amounts`), its kind's
    /// first; empty for a percentage. A kind's currency that does not read (none is stored
    /// so) is left out.
    pub fn fixed_amounts(&self) -> Vec<(Currency, i64)> {
        fixed_amounts_of(&self.kind, &self.other_amounts)
    }

    /// Makes it a fixed discount of these amounts (the first is its kind's; repeated
    /// currencies count once, the first wins). Nothing changes when `amounts` is empty.
    pub fn set_fixed_amounts(&mut self, amounts: &[(Currency, i64)]) {
        if let Some((kind, others)) = split_amounts(amounts) {
            self.kind = kind;
            self.other_amounts = others;
        }
    }

    pub fn is_deleted(&self) -> bool {
        self.deleted_at.is_some()
    }

    /// Whether a checkout may apply it at `now`: within its dates and below its redemption
    /// limit (Polar's `is_redeemable_discount`; both bounds inclusive).
    pub fn is_redeemable(&self, now: DateTime<Utc>) -> bool {
        if self.is_deleted() {
            return false;
        }
        if self.starts_at.is_some_and(|s| s > now) {
            return false;
        }
        if self.ends_at.is_some_and(|e| e < now) {
            return false;
        }
        match self.max_redemptions {
            Some(max) => self.redemptions_count < max,
            None => true,
        }
    }

    /// Whether it may be applied to this product (no restriction means every product).
    pub fn applies_to(&self, product_id: ProductId) -> bool {
        self.product_ids.is_empty() || self.product_ids.contains(&product_id)
    }

    /// How much it takes off `amount`: a fixed discount never more than the amount; a
    /// percentage rounded half up.
    pub fn discount_amount(&self, amount: i64) -> i64 {
        amount_off(&self.kind, amount)
    }
}

/// The amounts of a fixed `kind` and its `others` (see [`Discount::fixed_amounts`]).
pub fn fixed_amounts_of(kind: &DiscountKind, others: &[(Currency, i64)]) -> Vec<(Currency, i64)> {
    match kind {
        DiscountKind::Percentage { .. } => Vec::new(),
        DiscountKind::Fixed { amount, currency } => {
            let mut out: Vec<(Currency, i64)> = Vec::with_capacity(1 + others.len());
            if let Some(c) = Currency::from_code(currency) {
                out.push((c, *amount));
            }
            for (c, a) in others {
                if !out.iter().any(|(seen, _)| seen == c) {
                    out.push((*c, *a));
                }
            }
            out
        }
    }
}

/// A fixed kind of the first amount and the others (repeated currencies once, the first
/// wins); `None` when there is no amount.
pub fn split_amounts(amounts: &[(Currency, i64)]) -> Option<(DiscountKind, Vec<(Currency, i64)>)> {
    let ((first, amount), rest) = amounts.split_first()?;
    let mut others: Vec<(Currency, i64)> = Vec::with_capacity(rest.len());
    for (c, a) in rest {
        if c != first && !others.iter().any(|(seen, _)| seen == c) {
            others.push((*c, *a));
        }
    }
    Some((
        DiscountKind::Fixed {
            amount: *amount,
            currency: (*first).into(),
        },
        others,
    ))
}

/// What a discount of this kind takes off `amount`: a fixed discount never more than the
/// amount; a percentage rounded half up, in integer arithmetic.
pub fn amount_off(kind: &DiscountKind, amount: i64) -> i64 {
    match kind {
        DiscountKind::Fixed { amount: off, .. } => (*off).min(amount),
        DiscountKind::Percentage { basis_points } => {
            let product = i128::from(amount) * i128::from(*basis_points);
            let whole = product.div_euclid(10_000);
            let rest = product.rem_euclid(10_000);
            let rounded = if rest * 2 >= 10_000 { whole + 1 } else { whole };
            i64::try_from(rounded).unwrap_or(i64::MAX)
        }
    }
}

impl Discount {
    /// Counts one more redemption (a confirmed checkout that applied it).
    pub fn record_redemption(&mut self) {
        self.redemptions_count = self.redemptions_count.saturating_add(1);
    }

    pub fn code_key(org: OrganizationId, code: &str) -> UniqueKey {
        UniqueKey::new(DISCOUNT_CODE, org.key(), normalize_code(code))
    }

    fn created_sort(&self) -> KeyBuf {
        KeyBuf::new().i64(self.created_at.timestamp_micros())
    }
}

impl Record for Discount {
    const COLLECTION: &'static str = "discount";
    /// Version 2 appends `other_amounts` (version 1 reads with none: one amount).
    const VERSION: u16 = 2;

    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        match version {
            1 => tollgate_storage::codec::decode::<versions::DiscountV1>(
                Self::COLLECTION,
                1,
                payload,
            )
            .map(Into::into),
            2 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    /// Its changes are webhook events (`discount.*`).
    const FEED: bool = true;
    const INDEXES: &'static [&'static str] = &[
        DISCOUNT_BY_CREATED,
        DISCOUNT_BY_NAME,
        DISCOUNT_BY_CODE,
        DISCOUNT_BY_REDEMPTIONS,
    ];
    const UNIQUES: &'static [&'static str] = &[DISCOUNT_CODE];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    /// One index per sortable field, each split by organization; ties sort by creation time
    /// (then id). Deleted discounts leave every list.
    fn index_entries(&self) -> Vec<IndexEntry> {
        if self.is_deleted() {
            return Vec::new();
        }
        let tenant = self.organization_id.key();
        let code = match &self.code {
            // Polar (PostgreSQL) sorts nulls last in ascending order.
            Some(c) => KeyBuf::new().u8(0).str(&normalize_code(c)),
            None => KeyBuf::new().u8(1),
        };
        vec![
            IndexEntry::new(
                DISCOUNT_BY_CREATED,
                tenant.clone(),
                time_key(self.created_at),
            ),
            IndexEntry::new(
                DISCOUNT_BY_NAME,
                tenant.clone(),
                KeyBuf::new()
                    .str(&self.name.to_lowercase())
                    .fixed(self.created_sort().as_slice())
                    .into_vec(),
            ),
            IndexEntry::new(
                DISCOUNT_BY_CODE,
                tenant.clone(),
                code.fixed(self.created_sort().as_slice()).into_vec(),
            ),
            IndexEntry::new(
                DISCOUNT_BY_REDEMPTIONS,
                tenant,
                KeyBuf::new()
                    .i64(self.redemptions_count)
                    .fixed(self.created_sort().as_slice())
                    .into_vec(),
            ),
        ]
    }

    /// A redemption (its counter) is no change of the discount: Polar counts redemptions
    /// apart and tells nothing.
    fn feed_digest(&self) -> Option<Vec<u8>> {
        let mut watched = self.clone();
        watched.redemptions_count = 0;
        tollgate_storage::codec::encode(&watched).ok()
    }

    /// A deleted discount frees its code, as Polar's code lookup ignores deleted ones.
    fn unique_keys(&self) -> Vec<UniqueKey> {
        match (&self.code, self.is_deleted()) {
            (Some(code), false) => vec![Discount::code_key(self.organization_id, code)],
            _ => Vec::new(),
        }
    }
}

/// A discount that is not deleted, by id.
pub async fn discount_by_id(
    store: &Store,
    id: DiscountId,
) -> Result<Option<Stored<Discount>>, StorageError> {
    Ok(store
        .get::<Discount>(&id.key())
        .await?
        .filter(|d| !d.value.is_deleted()))
}

/// The organization's discount with this code (case-insensitive), if any and not deleted.
/// Whether it is redeemable or applies to a product is for the caller to check.
pub async fn discount_by_code(
    store: &Store,
    org: OrganizationId,
    code: &str,
) -> Result<Option<Stored<Discount>>, StorageError> {
    let Some(id) = store.lookup_unique(&Discount::code_key(org, code)).await? else {
        return Ok(None);
    };
    let Some(id) = DiscountId::from_key(&id) else {
        return Ok(None);
    };
    Ok(discount_by_id(store, id)
        .await?
        .filter(|d| d.value.organization_id == org))
}

/// The products a discount is restricted to, in the order they were given (products that
/// no longer exist are skipped).
pub async fn discount_products(
    store: &Store,
    discount: &Discount,
) -> Result<Vec<Product>, StorageError> {
    if discount.product_ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<Vec<u8>> = discount.product_ids.iter().map(|p| p.key()).collect();
    Ok(store
        .get_many::<Product>(&ids)
        .await?
        .into_iter()
        .map(|s| s.value)
        .collect())
}

/// How long a discount lasts, without the months of a repeating one (what a change may
/// name, and must keep).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationType {
    Once,
    Forever,
    Repeating,
}

impl DurationType {
    pub fn as_str(self) -> &'static str {
        match self {
            DurationType::Once => "once",
            DurationType::Forever => "forever",
            DurationType::Repeating => "repeating",
        }
    }
}

impl DiscountDuration {
    pub fn duration_type(self) -> DurationType {
        match self {
            DiscountDuration::Once => DurationType::Once,
            DiscountDuration::Forever => DurationType::Forever,
            DiscountDuration::Repeating { .. } => DurationType::Repeating,
        }
    }
}

/// A discount to create (`POST /v1/discounts/`), its fields checked by the adapter that
/// read it; its code must still be free and its products of its organization.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDiscount {
    /// `None`: the organization of the subject's token.
    pub organization_id: Option<uuid::Uuid>,
    pub name: String,
    /// Normalized by the adapter ([`normalize_code`] is how codes compare).
    pub code: Option<String>,
    /// A fixed discount's first amount (see [`split_amounts`]).
    pub kind: DiscountKind,
    /// A fixed discount's amounts in its other currencies.
    pub other_amounts: Vec<(Currency, i64)>,
    pub duration: DiscountDuration,
    pub starts_at: Option<DateTime<Utc>>,
    pub ends_at: Option<DateTime<Utc>>,
    pub max_redemptions: Option<i64>,
    /// The products it is restricted to, as given (repeats count once).
    pub products: Vec<ProductId>,
    pub metadata: Metadata,
}

/// A change of a discount (`PATCH /v1/discounts/{id}`): what is `None` stays; for the
/// nullable fields, `Some(None)` clears. Its type and duration may be named but not changed;
/// its amounts and months not once it was redeemed. `amounts` (every amount) and the
/// deprecated `amount`/`currency` (one amount: the adapter refuses both at once).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiscountChange {
    pub name: Option<String>,
    pub code: Option<Option<String>>,
    pub starts_at: Option<Option<DateTime<Utc>>>,
    pub ends_at: Option<Option<DateTime<Utc>>>,
    pub max_redemptions: Option<Option<i64>>,
    pub metadata: Option<Metadata>,
    pub duration: Option<DurationType>,
    pub duration_in_months: Option<i64>,
    pub kind: Option<DiscountType>,
    pub amounts: Option<Vec<(Currency, i64)>>,
    pub amount: Option<i64>,
    pub currency: Option<Currency>,
    pub basis_points: Option<i64>,
    pub products: Option<Vec<ProductId>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone};

    fn at(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(secs, 0).single().unwrap_or_default()
    }

    fn discount(kind: DiscountKind) -> Discount {
        Discount {
            id: DiscountId(uuid::Uuid::from_u128(1)),
            organization_id: OrganizationId(uuid::Uuid::from_u128(2)),
            created_at: at(0),
            modified_at: None,
            name: "Launch".into(),
            code: Some("LAUNCH".into()),
            kind,
            duration: DiscountDuration::Once,
            starts_at: None,
            ends_at: None,
            max_redemptions: None,
            redemptions_count: 0,
            product_ids: Vec::new(),
            metadata: Metadata::default(),
            deleted_at: None,
            other_amounts: Vec::new(),
        }
    }

    fn fixed(amount: i64) -> Discount {
        discount(DiscountKind::Fixed {
            amount,
            currency: "usd".into(),
        })
    }

    fn percent(basis_points: i64) -> Discount {
        discount(DiscountKind::Percentage { basis_points })
    }

    #[test]
    fn fixed_amount_never_exceeds_the_amount() {
        assert_eq!(fixed(500).discount_amount(2000), 500);
        assert_eq!(fixed(500).discount_amount(300), 300);
        assert_eq!(fixed(0).discount_amount(300), 0);
        assert_eq!(fixed(500).discount_amount(0), 0);
    }

    #[test]
    fn percentage_rounds_half_up() {
        assert_eq!(percent(2500).discount_amount(1000), 250);
        assert_eq!(percent(10_000).discount_amount(1999), 1999);
        // 1 % of 150 = 1.5 → 2; of 149 = 1.49 → 1; of 250 = 2.5 → 3.
        assert_eq!(percent(100).discount_amount(150), 2);
        assert_eq!(percent(100).discount_amount(149), 1);
        assert_eq!(percent(100).discount_amount(250), 3);
        // 33.33 % of 1000 = 333.3 → 333; 12.34 % of 4321 = 533.2114 → 533.
        assert_eq!(percent(3333).discount_amount(1000), 333);
        assert_eq!(percent(1234).discount_amount(4321), 533);
        assert_eq!(percent(1).discount_amount(0), 0);
        assert_eq!(percent(10_000).discount_amount(i64::MAX), i64::MAX);
    }

    #[test]
    fn redeemable_between_its_dates() {
        let now = at(1_000_000);
        let mut d = fixed(100);
        assert!(d.is_redeemable(now));
        d.starts_at = Some(now + Duration::seconds(1));
        assert!(!d.is_redeemable(now));
        d.starts_at = Some(now);
        assert!(d.is_redeemable(now));
        d.ends_at = Some(now - Duration::seconds(1));
        assert!(!d.is_redeemable(now));
        d.ends_at = Some(now);
        assert!(d.is_redeemable(now));
    }

    #[test]
    fn redeemable_below_its_redemption_limit() {
        let now = at(0);
        let mut d = percent(1000);
        d.max_redemptions = Some(2);
        assert!(d.is_redeemable(now));
        d.record_redemption();
        assert!(d.is_redeemable(now));
        d.record_redemption();
        assert_eq!(d.redemptions_count, 2);
        assert!(!d.is_redeemable(now));
        d.max_redemptions = None;
        assert!(d.is_redeemable(now));
        d.deleted_at = Some(now);
        assert!(!d.is_redeemable(now));
    }

    #[test]
    fn applies_to_its_products_only() {
        let a = ProductId(uuid::Uuid::from_u128(10));
        let b = ProductId(uuid::Uuid::from_u128(11));
        let mut d = fixed(100);
        assert!(d.applies_to(a) && d.applies_to(b));
        d.product_ids = vec![a];
        assert!(d.applies_to(a));
        assert!(!d.applies_to(b));
    }

    #[test]
    fn code_is_unique_case_insensitively_until_deleted() {
        let mut d = fixed(100);
        assert_eq!(
            d.unique_keys(),
            vec![Discount::code_key(d.organization_id, "launch")]
        );
        assert_eq!(
            Discount::code_key(d.organization_id, "LaUnCh"),
            Discount::code_key(d.organization_id, "launch")
        );
        d.deleted_at = Some(at(5));
        assert!(d.unique_keys().is_empty());
        assert!(d.index_entries().is_empty());
        d.deleted_at = None;
        d.code = None;
        assert!(d.unique_keys().is_empty());
        assert_eq!(d.index_entries().len(), 4);
    }

    fn v1_of(d: &Discount) -> versions::DiscountV1 {
        versions::DiscountV1 {
            id: d.id,
            organization_id: d.organization_id,
            created_at: d.created_at,
            modified_at: d.modified_at,
            name: d.name.clone(),
            code: d.code.clone(),
            kind: d.kind.clone(),
            duration: d.duration,
            starts_at: d.starts_at,
            ends_at: d.ends_at,
            max_redemptions: d.max_redemptions,
            redemptions_count: d.redemptions_count,
            product_ids: d.product_ids.clone(),
            metadata: d.metadata.clone(),
            deleted_at: d.deleted_at,
        }
    }

    fn usd_eur_jpy() -> Discount {
        let mut d = fixed(1);
        d.set_fixed_amounts(&[
            (Currency::USD, 1000),
            (Currency::EUR, 900),
            (Currency::JPY, 1500),
        ]);
        d
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let mut d = percent(2550);
        d.duration = DiscountDuration::Repeating { months: 3 };
        d.max_redemptions = Some(7);
        d.product_ids = vec![ProductId(uuid::Uuid::from_u128(3))];
        let v1 = tollgate_storage::codec::encode(&v1_of(&d)).unwrap_or_default();
        let hex: String = v1.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, GOLDEN_V1, "discount format v1 changed");
        let bytes = d.encode().unwrap_or_default();
        assert_eq!(Discount::decode(2, &bytes).ok(), Some(d.clone()));
        let f = usd_eur_jpy();
        let fb = f.encode().unwrap_or_default();
        assert_eq!(Discount::decode(Discount::VERSION, &fb).ok(), Some(f));
        assert!(Discount::decode(3, &fb).is_err());
    }

    /// A version-1 discount (one amount) reads with that amount only.
    #[test]
    fn version_1_discounts_decode_with_their_one_amount() {
        let f = fixed(500);
        let bytes = tollgate_storage::codec::encode(&v1_of(&f)).unwrap_or_default();
        let read = Discount::decode(1, &bytes).ok();
        assert_eq!(read, Some(f.clone()));
        let read = read.unwrap_or(f);
        assert_eq!(read.fixed_amounts(), vec![(Currency::USD, 500)]);
        assert!(read.kind_in(Currency::EUR).is_none());
        let p = percent(100);
        let bytes = tollgate_storage::codec::encode(&v1_of(&p)).unwrap_or_default();
        assert_eq!(Discount::decode(1, &bytes).ok(), Some(p));
    }

    #[test]
    fn fixed_applies_in_each_of_its_currencies_only() {
        let d = usd_eur_jpy();
        assert_eq!(
            d.fixed_amounts(),
            vec![
                (Currency::USD, 1000),
                (Currency::EUR, 900),
                (Currency::JPY, 1500)
            ]
        );
        let in_eur = d.kind_in(Currency::EUR);
        assert_eq!(
            in_eur,
            Some(DiscountKind::Fixed {
                amount: 900,
                currency: "eur".into()
            })
        );
        assert_eq!(in_eur.map(|k| amount_off(&k, 500)), Some(500));
        assert_eq!(
            d.kind_in(Currency::JPY).map(|k| amount_off(&k, 3000)),
            Some(1500)
        );
        let gbp = Currency::from_code("gbp").unwrap();
        assert!(d.kind_in(gbp).is_none());
        let p = percent(1000);
        assert_eq!(p.kind_in(gbp), Some(p.kind.clone()));
        assert!(p.fixed_amounts().is_empty());
    }

    #[test]
    fn setting_amounts_keeps_the_first_of_each_currency() {
        let mut d = fixed(100);
        d.set_fixed_amounts(&[(Currency::EUR, 5), (Currency::USD, 6), (Currency::EUR, 7)]);
        assert_eq!(
            d.kind,
            DiscountKind::Fixed {
                amount: 5,
                currency: "eur".into()
            }
        );
        assert_eq!(d.other_amounts, vec![(Currency::USD, 6)]);
        d.set_fixed_amounts(&[]);
        assert_eq!(
            d.fixed_amounts(),
            vec![(Currency::EUR, 5), (Currency::USD, 6)]
        );
        d.set_fixed_amounts(&[(Currency::JPY, 300)]);
        assert_eq!(d.fixed_amounts(), vec![(Currency::JPY, 300)]);
    }

    const GOLDEN_V1: &str = "1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30315430303a30303a30305a00064c61756e636801064c41554e434801fbec1302060000010e000110000000000000000000000000000000030000";
}
