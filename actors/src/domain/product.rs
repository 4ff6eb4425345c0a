use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record, StorageError, Store, Stored, UniqueKey};

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
    // Format version 2.
    /// Its prices recur every this many intervals (Polar's `recurring_interval_count`,
    /// 1–[`MAX_INTERVAL_COUNT`]); 1 for a one-time product.
    pub recurring_interval_count: u32,
    /// The free trial a subscription to it starts with (recurring products only).
    pub trial: Option<Trial>,
}

/// The most intervals one period spans (Polar's `le=999`).
pub const MAX_INTERVAL_COUNT: u32 = 999;
/// The longest trial, in trial intervals (Polar's `le=1000`).
pub const MAX_TRIAL_COUNT: u32 = 1000;

/// A free trial: `count` times `interval` (Polar's `trial_interval` and
/// `trial_interval_count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trial {
    pub interval: RecurringInterval,
    pub count: u32,
}

impl Trial {
    /// When a trial started at `start` ends, on the same calendar rules as billing
    /// periods (a month from Jan 31 is Feb 28 or 29).
    pub fn end(self, start: DateTime<Utc>) -> DateTime<Utc> {
        self.interval.add(start, self.count)
    }
}

/// A product as format version 1 stored it: every interval single, no trial.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct ProductV1 {
    id: ProductId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    name: String,
    description: Option<String>,
    is_recurring: bool,
    is_archived: bool,
    is_tax_applicable: bool,
    metadata: Metadata,
    prices: Vec<Price>,
    benefit_ids: Vec<BenefitId>,
    media_ids: Vec<uuid::Uuid>,
    attached_custom_fields: Vec<AttachedCustomField>,
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
        }
    }
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
    // Appended (bincode stores the variant's index): older records stay readable.
    Day,
    Week,
}

impl RecurringInterval {
    pub const ALL: [RecurringInterval; 4] = [
        RecurringInterval::Day,
        RecurringInterval::Week,
        RecurringInterval::Month,
        RecurringInterval::Year,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RecurringInterval::Day => "day",
            RecurringInterval::Week => "week",
            RecurringInterval::Month => "month",
            RecurringInterval::Year => "year",
        }
    }

    pub fn parse(s: &str) -> Option<RecurringInterval> {
        Self::ALL.into_iter().find(|i| i.as_str() == s)
    }

    /// `start` + `n` of this interval, in UTC on calendar rules: days and weeks are 24 h
    /// and 7 × 24 h; months and years keep the day of the month, clamped to the month's
    /// last day (Jan 31 + 1 month = Feb 28, or 29 in a leap year; Feb 29 + 1 year =
    /// Feb 28). Counting every period from one anchor (anchor + n intervals, never the
    /// previous end + 1) keeps month ends from drifting: Jan 31, Feb 28, Mar 31, Apr 30.
    /// Saturates at the latest representable time.
    pub fn add(self, start: DateTime<Utc>, n: u32) -> DateTime<Utc> {
        let out = match self {
            RecurringInterval::Day => start.checked_add_signed(chrono::Duration::days(n.into())),
            RecurringInterval::Week => start.checked_add_signed(chrono::Duration::weeks(n.into())),
            RecurringInterval::Month => start.checked_add_months(chrono::Months::new(n)),
            RecurringInterval::Year => {
                start.checked_add_months(chrono::Months::new(n.saturating_mul(12)))
            }
        };
        out.unwrap_or(DateTime::<Utc>::MAX_UTC)
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
        matches!(
            self,
            PriceKind::RecurringFixed { .. } | PriceKind::RecurringFree { .. }
        )
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
            PriceKind::RecurringFixed { interval, .. } | PriceKind::RecurringFree { interval } => {
                Some(*interval)
            }
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
            PriceKind::RecurringFixed { amount, .. } | PriceKind::OneTimeFixed { amount, .. } => {
                Some(*amount)
            }
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
    /// The interval the product recurs at (Polar's product-level `recurring_interval`):
    /// that of its prices on sale when they all recur at one; `None` for a one-time product
    /// and for one sold both monthly and yearly (Polar's legacy prices).
    pub fn recurring_interval(&self) -> Option<RecurringInterval> {
        let mut intervals = self.active_prices().map(|p| p.kind.interval());
        let first = intervals.next()??;
        intervals.all(|i| i == Some(first)).then_some(first)
    }

    pub fn price(&self, id: PriceId) -> Option<&Price> {
        self.prices.iter().find(|p| p.id == id)
    }

    /// The first price that is not archived (what a checkout by product id sells).
    pub fn first_active_price(&self) -> Option<&Price> {
        self.prices.iter().find(|p| !p.is_archived)
    }
}

pub const PRODUCT_BY_CREATED: &str = "product_by_created";
pub const PRODUCT_BY_NAME: &str = "product_by_name";
pub const PRODUCT_BY_PRICE_TYPE: &str = "product_by_price_type";
pub const PRODUCT_BY_PRICE_AMOUNT_TYPE: &str = "product_by_price_amount_type";
pub const PRODUCT_BY_PRICE_AMOUNT: &str = "product_by_price_amount";
/// Tenant: a benefit id; sorted by creation time. Serves the `benefit_id` list filter.
pub const PRODUCT_BY_BENEFIT: &str = "product_by_benefit";
/// Tenant: empty; value: a price id (any price, archived ones too). Resolves a price to
/// its product.
pub const PRICE_ID: &str = "price_id";

/// Names longer than this sort by their first characters only (ties break on creation).
const NAME_SORT_CHARS: usize = 200;

/// Polar's `ProductSortProperty`. The price criteria look at the product's oldest
/// non-archived price; a product without one sorts last ascending, first descending
/// (PostgreSQL's NULL order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProductSort {
    CreatedAt,
    Name,
    PriceType,
    PriceAmountType,
    PriceAmount,
}

impl ProductSort {
    pub const ALL: &'static [(&'static str, ProductSort)] = &[
        ("created_at", ProductSort::CreatedAt),
        ("name", ProductSort::Name),
        ("price_type", ProductSort::PriceType),
        ("price_amount_type", ProductSort::PriceAmountType),
        ("price_amount", ProductSort::PriceAmount),
    ];

    /// The per-organization index that serves this order.
    pub fn index(self) -> &'static str {
        match self {
            ProductSort::CreatedAt => PRODUCT_BY_CREATED,
            ProductSort::Name => PRODUCT_BY_NAME,
            ProductSort::PriceType => PRODUCT_BY_PRICE_TYPE,
            ProductSort::PriceAmountType => PRODUCT_BY_PRICE_AMOUNT_TYPE,
            ProductSort::PriceAmount => PRODUCT_BY_PRICE_AMOUNT,
        }
    }
}

impl PriceKind {
    /// Polar's `price_type` sort value: one-time before recurring.
    pub fn type_rank(&self) -> i64 {
        if self.is_recurring() {
            2
        } else {
            1
        }
    }

    /// Polar's `price_amount_type` sort value: free, custom, fixed.
    pub fn amount_type_rank(&self) -> i64 {
        match self.amount_type() {
            AmountType::Free => 1,
            AmountType::Custom => 2,
            AmountType::Fixed => 3,
        }
    }

    /// Polar's `price_amount` sort value: free is -2, custom its minimum (or -1), fixed
    /// its amount.
    pub fn amount_rank(&self) -> i64 {
        match self {
            PriceKind::RecurringFree { .. } | PriceKind::OneTimeFree => -2,
            PriceKind::OneTimeCustom { minimum_amount, .. } => minimum_amount.unwrap_or(-1),
            PriceKind::RecurringFixed { amount, .. } | PriceKind::OneTimeFixed { amount, .. } => {
                *amount
            }
        }
    }
}

impl Product {
    /// The prices on sale, in creation order (what the Product schema lists).
    pub fn active_prices(&self) -> impl Iterator<Item = &Price> {
        self.prices.iter().filter(|p| !p.is_archived)
    }

    /// A non-archived price of this product.
    pub fn active_price(&self, id: PriceId) -> Option<&Price> {
        self.active_prices().find(|p| p.id == id)
    }

    /// The unique key that maps a price id to its product.
    pub fn price_key(id: PriceId) -> UniqueKey {
        UniqueKey::new(PRICE_ID, Vec::new(), id.key())
    }

    /// The sort key of this product in the index of `field`: the criterion, then the
    /// creation time (the store appends the id, so equal keys still sort stably).
    pub fn sort_key(&self, field: ProductSort) -> Vec<u8> {
        let created = self.created_at.timestamp_micros();
        let price = self.first_active_price().map(|p| &p.kind);
        let key = match field {
            ProductSort::CreatedAt => KeyBuf::new(),
            ProductSort::Name => {
                let name: String = self
                    .name
                    .to_lowercase()
                    .chars()
                    .take(NAME_SORT_CHARS)
                    .collect();
                KeyBuf::new().str(&name)
            }
            ProductSort::PriceType => KeyBuf::new().opt_i64(price.map(PriceKind::type_rank)),
            ProductSort::PriceAmountType => {
                KeyBuf::new().opt_i64(price.map(PriceKind::amount_type_rank))
            }
            ProductSort::PriceAmount => KeyBuf::new().opt_i64(price.map(PriceKind::amount_rank)),
        };
        key.i64(created).into_vec()
    }
}

impl Record for Product {
    const COLLECTION: &'static str = "product";
    const VERSION: u16 = 2;

    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        match version {
            1 => tollgate_storage::codec::decode::<ProductV1>(Self::COLLECTION, 1, payload)
                .map(Into::into),
            2 => tollgate_storage::codec::decode(Self::COLLECTION, 2, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    /// Its changes are webhook events.
    const FEED: bool = true;
    const INDEXES: &'static [&'static str] = &[
        PRODUCT_BY_CREATED,
        PRODUCT_BY_NAME,
        PRODUCT_BY_PRICE_TYPE,
        PRODUCT_BY_PRICE_AMOUNT_TYPE,
        PRODUCT_BY_PRICE_AMOUNT,
        PRODUCT_BY_BENEFIT,
    ];
    const UNIQUES: &'static [&'static str] = &[PRICE_ID];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    /// One entry per sort order in the organization's tenant, and one per granted benefit.
    fn index_entries(&self) -> Vec<IndexEntry> {
        let org = self.organization_id.key();
        let mut entries: Vec<IndexEntry> = ProductSort::ALL
            .iter()
            .map(|(_, field)| IndexEntry::new(field.index(), org.clone(), self.sort_key(*field)))
            .collect();
        let created = self.sort_key(ProductSort::CreatedAt);
        for benefit in &self.benefit_ids {
            entries.push(IndexEntry::new(
                PRODUCT_BY_BENEFIT,
                benefit.key(),
                created.clone(),
            ));
        }
        entries
    }

    /// Every price ever created, so that a price id always resolves to its product.
    fn unique_keys(&self) -> Vec<UniqueKey> {
        self.prices
            .iter()
            .map(|p| Product::price_key(p.id))
            .collect()
    }
}

/// The product that owns a price (archived prices included), if any.
pub async fn product_for_price(
    store: &Store,
    id: PriceId,
) -> Result<Option<Stored<Product>>, StorageError> {
    match store.lookup_unique(&Product::price_key(id)).await? {
        Some(product_id) => store.get::<Product>(&product_id).await,
        None => Ok(None),
    }
}

/// A product to create (`POST /v1/products/`), its fields and its price set checked by
/// the adapter that read it; its media and custom fields are checked against the store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewProduct {
    /// `None`: the organization of the subject's token.
    pub organization_id: Option<uuid::Uuid>,
    pub name: String,
    /// `None` when not given or empty.
    pub description: Option<String>,
    /// A valid price set, in the order given.
    pub prices: Vec<PriceKind>,
    pub metadata: Metadata,
    /// The length of a recurring product's period, in intervals (1 for one-time).
    pub recurring_interval_count: u32,
    /// A recurring product's trial.
    pub trial: Option<Trial>,
    /// File ids of product media (there is no file service: each is refused).
    pub medias: Vec<uuid::Uuid>,
    /// The custom fields to attach, in the order given.
    pub attached_custom_fields: Vec<AttachField>,
}

/// A custom field a product attaches (its order is its place in the list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttachField {
    pub custom_field_id: CustomFieldId,
    pub required: bool,
}

/// A change of a product (`PATCH /v1/products/{id}`), its fields' shapes checked by the
/// adapter that read it; `None` leaves a field as it is. What needs the stored product
/// (the resulting price set, the period's length, a trial, media and custom fields) is
/// checked by the use case.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProductChange {
    pub name: Option<String>,
    /// `Some`: a new, non-empty description (an empty one leaves it as it is).
    pub description: Option<String>,
    pub is_archived: Option<bool>,
    pub metadata: Option<Metadata>,
    /// The price set: listed prices stay, new ones are added, the rest are archived.
    pub prices: Option<Vec<PriceChange>>,
    /// The `prices` list as sent, quoted by the refusals of the resulting set.
    pub prices_sent: AsSent,
    /// The length of a period, in intervals: it can only be restated, never changed.
    pub recurring_interval_count: Option<u32>,
    /// `Some(None)`: no trial any more.
    pub trial: Option<Option<Trial>>,
    /// File ids of product media (there is no file service: each is refused).
    pub medias: Option<Vec<uuid::Uuid>>,
    /// The custom fields to attach, in the order given.
    pub attached_custom_fields: Option<Vec<AttachField>>,
}

/// One item of the price set of a [`ProductChange`].
#[derive(Debug, Clone, PartialEq)]
pub enum PriceChange {
    /// Keep this price of the product.
    Keep(PriceId),
    /// Add a price.
    Add(PriceKind),
}

/// What a client sent for a field, kept only to be quoted back by a refusal that needs
/// the store to decide (pydantic's `input`); opaque to the rules.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct AsSent(serde_json::Value);

impl AsSent {
    pub fn new(value: serde_json::Value) -> Self {
        AsSent(value)
    }
}

/// Why a set of (non-archived) prices can't be a product's: a product has 1–2 recurring
/// fixed prices with distinct intervals, or exactly one recurring free price, or exactly
/// one one-time price.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceSetProblem {
    /// Fewer than `min` prices.
    TooShort { min: usize },
    /// More than `max` prices.
    TooLong { max: usize },
    /// Recurring and one-time prices mixed.
    Mixed,
    /// Two prices of one interval.
    SameInterval,
}

/// What is wrong with a price set, if anything (see [`PriceSetProblem`]).
pub fn price_set_problem(kinds: &[&PriceKind]) -> Option<PriceSetProblem> {
    if kinds.is_empty() {
        return Some(PriceSetProblem::TooShort { min: 1 });
    }
    let recurring = kinds.iter().filter(|k| k.is_recurring()).count();
    if recurring != 0 && recurring != kinds.len() {
        return Some(PriceSetProblem::Mixed);
    }
    let free = kinds
        .iter()
        .any(|k| matches!(k, PriceKind::RecurringFree { .. }));
    if recurring == 0 || free {
        return (kinds.len() > 1).then_some(PriceSetProblem::TooLong { max: 1 });
    }
    if kinds.len() > 2 {
        return Some(PriceSetProblem::TooLong { max: 2 });
    }
    let mut intervals: Vec<RecurringInterval> = kinds.iter().filter_map(|k| k.interval()).collect();
    intervals.sort_by_key(|i| i.as_str());
    intervals.dedup();
    (intervals.len() != kinds.len()).then_some(PriceSetProblem::SameInterval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn price(kind: PriceKind, archived: bool) -> Price {
        Price {
            id: PriceId::new(),
            created_at: Utc
                .timestamp_opt(1_700_000_000, 0)
                .single()
                .unwrap_or_default(),
            modified_at: None,
            is_archived: archived,
            kind,
        }
    }

    fn product(name: &str, secs: i64, prices: Vec<Price>) -> Product {
        Product {
            id: ProductId::new(),
            organization_id: OrganizationId::new(),
            created_at: Utc.timestamp_opt(secs, 0).single().unwrap_or_default(),
            modified_at: None,
            name: name.into(),
            description: None,
            is_recurring: false,
            is_archived: false,
            is_tax_applicable: true,
            metadata: Metadata::default(),
            prices,
            benefit_ids: Vec::new(),
            media_ids: Vec::new(),
            attached_custom_fields: Vec::new(),
            recurring_interval_count: 1,
            trial: None,
        }
    }

    fn fixed(amount: i64) -> PriceKind {
        PriceKind::OneTimeFixed {
            currency: "usd".into(),
            amount,
        }
    }

    fn order(products: &[Product], field: ProductSort) -> Vec<String> {
        let mut keyed: Vec<(Vec<u8>, String)> = products
            .iter()
            .map(|p| (p.sort_key(field), p.name.clone()))
            .collect();
        keyed.sort();
        keyed.into_iter().map(|(_, n)| n).collect()
    }

    #[test]
    fn price_amount_uses_the_first_active_price_and_puts_none_last() {
        let products = vec![
            product("big", 1, vec![price(fixed(9000), false)]),
            product(
                "archived-first",
                2,
                vec![price(fixed(1), true), price(fixed(5000), false)],
            ),
            product("free", 3, vec![price(PriceKind::OneTimeFree, false)]),
            product(
                "custom",
                4,
                vec![price(
                    PriceKind::OneTimeCustom {
                        currency: "usd".into(),
                        minimum_amount: None,
                        maximum_amount: None,
                        preset_amount: None,
                    },
                    false,
                )],
            ),
            product("none", 5, vec![price(fixed(10), true)]),
        ];
        assert_eq!(
            order(&products, ProductSort::PriceAmount),
            vec!["free", "custom", "archived-first", "big", "none"]
        );
        assert_eq!(
            order(&products, ProductSort::PriceAmountType),
            vec!["free", "custom", "big", "archived-first", "none"]
        );
    }

    #[test]
    fn names_sort_case_insensitively_then_by_creation() {
        let products = [
            product("beta", 1, vec![]),
            product("Alpha", 3, vec![]),
            product("alpha", 2, vec![]),
        ];
        let mut keyed: Vec<(Vec<u8>, i64)> = products
            .iter()
            .map(|p| (p.sort_key(ProductSort::Name), p.created_at.timestamp()))
            .collect();
        keyed.sort();
        let got: Vec<i64> = keyed.into_iter().map(|(_, t)| t).collect();
        assert_eq!(got, vec![2, 3, 1]);
    }

    /// A product written by a build of format version 1 reads with single intervals and no
    /// trial; version 2 keeps both.
    #[test]
    fn version_1_products_decode_with_single_intervals_and_no_trial() {
        let mut p = product("x", 1, vec![price(fixed(100), false)]);
        let v1 = ProductV1 {
            id: p.id,
            organization_id: p.organization_id,
            created_at: p.created_at,
            modified_at: p.modified_at,
            name: p.name.clone(),
            description: p.description.clone(),
            is_recurring: p.is_recurring,
            is_archived: p.is_archived,
            is_tax_applicable: p.is_tax_applicable,
            metadata: p.metadata.clone(),
            prices: p.prices.clone(),
            benefit_ids: p.benefit_ids.clone(),
            media_ids: p.media_ids.clone(),
            attached_custom_fields: p.attached_custom_fields.clone(),
        };
        let bytes = tollgate_storage::codec::encode(&v1).unwrap_or_default();
        assert_eq!(Product::decode(1, &bytes).ok(), Some(p.clone()));
        assert!(Product::decode(2, &bytes).is_err());
        p.recurring_interval_count = 3;
        p.trial = Some(Trial {
            interval: RecurringInterval::Week,
            count: 2,
        });
        let bytes = p.encode().unwrap_or_default();
        assert_eq!(Product::decode(2, &bytes).ok(), Some(p));
        assert!(Product::decode(3, &bytes).is_err());
    }

    #[test]
    fn every_price_claims_a_unique_key() {
        let p = product(
            "x",
            1,
            vec![price(fixed(100), true), price(fixed(200), false)],
        );
        let keys = p.unique_keys();
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[0], Product::price_key(p.prices[0].id));
    }
}
