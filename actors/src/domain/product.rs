use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record, StorageError, Store, Stored, UniqueKey};

use super::currency::Currency;
use super::ids::{BenefitId, CustomFieldId, MeterId, OrganizationId, PriceId, ProductId};
use super::metadata::Metadata;
use super::tax_settings::TaxBehaviorOption;

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
    // Format version 4.
    /// The prices that chose their own tax behaviour (Polar's price `tax_behavior`), at most
    /// one entry per price; a price without one follows the organization's
    /// `default_tax_behavior`. Kept beside the prices rather than in [`Price`] so that
    /// `Price`'s layout, which checkouts embed, does not change.
    pub price_tax_behavior: Vec<(PriceId, TaxBehaviorOption)>,
    // Format version 5.
    /// The currency of each free price (a free [`PriceKind`] names none), at most one
    /// entry per price; a free price without one (stored before version 5) is in
    /// [`Currency::DEFAULT`]. Kept beside the prices for the reason `price_tax_behavior` is.
    pub free_price_currency: Vec<(PriceId, Currency)>,
}

#[path = "product_metered.rs"]
mod metered;
#[path = "product_versions.rs"]
mod versions;
pub use metered::{
    UnitAmount, UnitAmountProblem, UNIT_AMOUNT_DECIMALS, UNIT_AMOUNT_DIGITS,
    UNIT_AMOUNT_WHOLE_DIGITS,
};
use versions::{ProductV1, ProductV3, ProductV4};

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
    // Format version 3 (appended: bincode stores the variant's index, so version-2
    // records read as before).
    /// Polar's `seat_based` price of a recurring product: the buyer picks a seat count.
    RecurringSeatBased {
        interval: RecurringInterval,
        currency: String,
        seat_tiers: SeatTiers,
    },
    /// Polar's `seat_based` price of a one-time product.
    OneTimeSeatBased {
        currency: String,
        seat_tiers: SeatTiers,
    },
    // Format version 6 (appended, as above).
    /// Polar's `metered_unit` price (recurring products only): nothing up front, the
    /// period's usage of the meter billed at its end, `unit_amount` cents per unit, at
    /// most `cap_amount` cents. `interval` is its product's.
    RecurringMeteredUnit {
        interval: RecurringInterval,
        currency: String,
        meter_id: MeterId,
        unit_amount: UnitAmount,
        cap_amount: Option<i64>,
    },
}

/// How a seat-based price's tiers apply (Polar's `SeatTierType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SeatTierType {
    /// Every seat at the rate of the tier the seat count falls in.
    Volume,
    /// Each tier's seats at that tier's rate.
    Graduated,
}

impl SeatTierType {
    pub fn as_str(self) -> &'static str {
        match self {
            SeatTierType::Volume => "volume",
            SeatTierType::Graduated => "graduated",
        }
    }

    pub fn parse(s: &str) -> Option<SeatTierType> {
        [SeatTierType::Volume, SeatTierType::Graduated]
            .into_iter()
            .find(|t| t.as_str() == s)
    }
}

/// One tier: seat counts `min_seats..=max_seats` (no end: `None`) at `price_per_seat`
/// (minor units, 0 for a free tier).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatTier {
    pub min_seats: u32,
    pub max_seats: Option<u32>,
    pub price_per_seat: i64,
}

/// The tiers of a seat-based price, sorted by `min_seats`, contiguous, only the last one
/// open-ended (built by [`SeatTiers::new`]). The seat counts on sale run from the first
/// tier's `min_seats` to the last one's `max_seats`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatTiers {
    pub tier_type: SeatTierType,
    tiers: Vec<SeatTier>,
}

/// Why tiers can't be a seat-based price's (Polar's messages, `ProductPriceSeatTiers`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeatTiersProblem {
    /// No tier.
    Empty,
    /// A tier before the last has no `max_seats`.
    UnlimitedBeforeLast,
    /// Tier `i` (sorted) does not start right after the previous one ends.
    GapOrOverlap { ending_at: u32, starting_at: u32 },
    /// A tier ends before it starts (Tollgate's rule: no seat count would be in it).
    EndsBeforeStart { min_seats: u32, max_seats: u32 },
}

impl SeatTiersProblem {
    /// The message of the 422 (pydantic's `Value error, …`).
    pub fn message(&self) -> String {
        match self {
            SeatTiersProblem::Empty => "At least one tier is required".into(),
            SeatTiersProblem::UnlimitedBeforeLast => {
                "Only the last tier can have unlimited max_seats (None)".into()
            }
            SeatTiersProblem::GapOrOverlap {
                ending_at,
                starting_at,
            } => format!(
                "Gap or overlap between tiers: tier ending at {ending_at} and tier starting at {starting_at}"
            ),
            SeatTiersProblem::EndsBeforeStart {
                min_seats,
                max_seats,
            } => format!("A tier's max_seats ({max_seats}) is below its min_seats ({min_seats})"),
        }
    }
}

impl SeatTiers {
    /// The tiers, sorted by `min_seats` (Polar sorts them rather than refusing an order),
    /// if they form one range without gaps or overlaps with only the last one open-ended.
    pub fn new(
        tier_type: SeatTierType,
        mut tiers: Vec<SeatTier>,
    ) -> Result<SeatTiers, SeatTiersProblem> {
        if tiers.is_empty() {
            return Err(SeatTiersProblem::Empty);
        }
        tiers.sort_by_key(|t| t.min_seats);
        for t in &tiers {
            if let Some(max) = t.max_seats.filter(|m| *m < t.min_seats) {
                return Err(SeatTiersProblem::EndsBeforeStart {
                    min_seats: t.min_seats,
                    max_seats: max,
                });
            }
        }
        for pair in tiers.windows(2) {
            let Some(end) = pair[0].max_seats else {
                return Err(SeatTiersProblem::UnlimitedBeforeLast);
            };
            if end.checked_add(1) != Some(pair[1].min_seats) {
                return Err(SeatTiersProblem::GapOrOverlap {
                    ending_at: end,
                    starting_at: pair[1].min_seats,
                });
            }
        }
        Ok(SeatTiers { tier_type, tiers })
    }

    pub fn tiers(&self) -> &[SeatTier] {
        &self.tiers
    }

    /// The fewest seats one can buy: the first tier's `min_seats`.
    pub fn minimum_seats(&self) -> u32 {
        self.tiers.first().map_or(1, |t| t.min_seats)
    }

    /// The most seats one can buy: the last tier's `max_seats` (`None`: no limit).
    pub fn maximum_seats(&self) -> Option<u32> {
        self.tiers.last().and_then(|t| t.max_seats)
    }

    /// Whether `seats` can be bought.
    pub fn allows(&self, seats: u32) -> bool {
        seats >= self.minimum_seats() && self.maximum_seats().is_none_or(|m| seats <= m)
    }

    /// The tier `seats` falls in.
    pub fn tier_for(&self, seats: u32) -> Option<&SeatTier> {
        self.tiers
            .iter()
            .find(|t| seats >= t.min_seats && t.max_seats.is_none_or(|m| seats <= m))
    }

    /// What `seats` seats cost (Polar's `calculate_amount`): volume, the rate of the tier
    /// the count falls in times the count; graduated, each tier's seats at its own rate.
    /// `None` for a count outside the tiers (or an amount beyond `i64`).
    pub fn amount(&self, seats: u32) -> Option<i64> {
        if !self.allows(seats) {
            return None;
        }
        match self.tier_type {
            SeatTierType::Volume => self
                .tier_for(seats)?
                .price_per_seat
                .checked_mul(i64::from(seats)),
            SeatTierType::Graduated => {
                // The first tier bills from the first seat, as Polar's does.
                let mut total: i64 = 0;
                for (i, t) in self.tiers.iter().enumerate() {
                    if seats < t.min_seats {
                        break;
                    }
                    let bottom = if i == 0 { 1 } else { t.min_seats };
                    let top = t.max_seats.map_or(seats, |m| m.min(seats));
                    let n = i64::from(top - bottom + 1);
                    total = total.checked_add(t.price_per_seat.checked_mul(n)?)?;
                }
                Some(total)
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountType {
    Fixed,
    Custom,
    Free,
    SeatBased,
    MeteredUnit,
}

impl AmountType {
    pub fn as_str(self) -> &'static str {
        match self {
            AmountType::Fixed => "fixed",
            AmountType::Custom => "custom",
            AmountType::Free => "free",
            AmountType::SeatBased => "seat_based",
            AmountType::MeteredUnit => "metered_unit",
        }
    }
}

impl PriceKind {
    pub fn is_recurring(&self) -> bool {
        matches!(
            self,
            PriceKind::RecurringFixed { .. }
                | PriceKind::RecurringFree { .. }
                | PriceKind::RecurringSeatBased { .. }
                | PriceKind::RecurringMeteredUnit { .. }
        )
    }

    /// Whether this is a metered price (billed at the end of each period for the usage
    /// of its meter; nothing up front).
    pub fn is_metered(&self) -> bool {
        matches!(self, PriceKind::RecurringMeteredUnit { .. })
    }

    /// The meter of a metered price.
    pub fn meter_id(&self) -> Option<MeterId> {
        match self {
            PriceKind::RecurringMeteredUnit { meter_id, .. } => Some(*meter_id),
            _ => None,
        }
    }

    /// The tiers of a seat-based price.
    pub fn seat_tiers(&self) -> Option<&SeatTiers> {
        match self {
            PriceKind::RecurringSeatBased { seat_tiers, .. }
            | PriceKind::OneTimeSeatBased { seat_tiers, .. } => Some(seat_tiers),
            _ => None,
        }
    }

    pub fn amount_type(&self) -> AmountType {
        match self {
            PriceKind::RecurringFixed { .. } | PriceKind::OneTimeFixed { .. } => AmountType::Fixed,
            PriceKind::OneTimeCustom { .. } => AmountType::Custom,
            PriceKind::RecurringFree { .. } | PriceKind::OneTimeFree => AmountType::Free,
            PriceKind::RecurringSeatBased { .. } | PriceKind::OneTimeSeatBased { .. } => {
                AmountType::SeatBased
            }
            PriceKind::RecurringMeteredUnit { .. } => AmountType::MeteredUnit,
        }
    }

    pub fn interval(&self) -> Option<RecurringInterval> {
        match self {
            PriceKind::RecurringFixed { interval, .. }
            | PriceKind::RecurringFree { interval }
            | PriceKind::RecurringSeatBased { interval, .. }
            | PriceKind::RecurringMeteredUnit { interval, .. } => Some(*interval),
            _ => None,
        }
    }

    pub fn currency(&self) -> Option<&str> {
        match self {
            PriceKind::RecurringFixed { currency, .. }
            | PriceKind::OneTimeFixed { currency, .. }
            | PriceKind::OneTimeCustom { currency, .. }
            | PriceKind::RecurringSeatBased { currency, .. }
            | PriceKind::OneTimeSeatBased { currency, .. }
            | PriceKind::RecurringMeteredUnit { currency, .. } => Some(currency),
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

    /// The tax behaviour price `id` chose (`None`: the organization's default).
    pub fn price_tax_behavior(&self, id: PriceId) -> Option<TaxBehaviorOption> {
        self.price_tax_behavior
            .iter()
            .find(|(p, _)| *p == id)
            .map(|(_, b)| *b)
    }

    /// Adds a price made of `new` at `now`, with its tax behaviour if it chose one.
    pub fn add_price(&mut self, new: NewPrice, now: DateTime<Utc>) -> PriceId {
        let id = PriceId::new();
        if new.kind.currency().is_none() {
            self.free_price_currency.push((id, new.currency));
        }
        self.prices.push(Price {
            id,
            created_at: now,
            modified_at: None,
            is_archived: false,
            kind: new.kind,
        });
        if let Some(b) = new.tax_behavior {
            self.price_tax_behavior.push((id, b));
        }
        id
    }

    /// The first price that is not archived (what a checkout by product id sells): see
    /// [`preferred_price`].
    pub fn first_active_price(&self) -> Option<&Price> {
        preferred_price(self.active_prices())
    }

    /// The metered prices on sale.
    pub fn active_metered_prices(&self) -> impl Iterator<Item = &Price> {
        self.active_prices().filter(|p| p.kind.is_metered())
    }

    /// Whether the product has a metered price on sale (a checkout of it saves a payment
    /// method for the usage billed at renewal, even at an amount of 0).
    pub fn has_metered_prices(&self) -> bool {
        self.active_metered_prices().next().is_some()
    }

    /// The currency price `p` (one of this product's) is in: its own, or for a free price
    /// the one it was created in.
    pub fn currency_of(&self, p: &Price) -> Currency {
        p.kind
            .currency()
            .and_then(Currency::from_code)
            .or_else(|| {
                self.free_price_currency
                    .iter()
                    .find(|(id, _)| *id == p.id)
                    .map(|(_, c)| *c)
            })
            .unwrap_or(Currency::DEFAULT)
    }

    /// The currencies the product is on sale in, in the order their first prices were
    /// created (Polar's price sets).
    pub fn currencies(&self) -> Vec<Currency> {
        let mut out: Vec<Currency> = Vec::new();
        for p in self.active_prices() {
            let c = self.currency_of(p);
            if !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    /// Whether the product has prices on sale in `currency`.
    pub fn sells_in(&self, currency: Currency) -> bool {
        self.active_prices()
            .any(|p| self.currency_of(p) == currency)
    }

    /// The prices on sale in `currency`, in creation order (Polar's price set of that
    /// currency).
    pub fn active_prices_in(&self, currency: Currency) -> impl Iterator<Item = &Price> {
        self.active_prices()
            .filter(move |p| self.currency_of(p) == currency)
    }

    /// The first price on sale in `currency` (what a checkout by product id sells in it):
    /// see [`preferred_price`].
    pub fn first_active_price_in(&self, currency: Currency) -> Option<&Price> {
        preferred_price(self.active_prices_in(currency))
    }

    /// The first of `preferred` the product sells in (Polar's `PriceSet.from_prices`).
    pub fn pick_currency(&self, preferred: &[Currency]) -> Option<Currency> {
        preferred.iter().copied().find(|c| self.sells_in(*c))
    }
}

/// The price a checkout of a product sells among `prices` (in creation order): the first
/// one that costs something up front; else, beside a free price, the first metered one
/// (nothing is due now, but the buyer's payment method is saved for the usage billed at
/// the end of each period: Polar's free price is not "free" when metered prices go with
/// it); else the first.
fn preferred_price<'a>(prices: impl Iterator<Item = &'a Price>) -> Option<&'a Price> {
    let prices: Vec<&Price> = prices.collect();
    let paid = |p: &&&Price| !p.kind.is_metered() && p.kind.amount_type() != AmountType::Free;
    prices
        .iter()
        .find(paid)
        .or_else(|| prices.iter().find(|p| p.kind.is_metered()))
        .or_else(|| prices.first())
        .copied()
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

    /// Polar's `price_amount_type` sort value: free, custom, fixed, seat-based, metered.
    pub fn amount_type_rank(&self) -> i64 {
        match self.amount_type() {
            AmountType::Free => 1,
            AmountType::Custom => 2,
            AmountType::Fixed => 3,
            AmountType::SeatBased => 4,
            AmountType::MeteredUnit => 5,
        }
    }

    /// Polar's `price_amount` sort value: free is -2, custom its minimum (or -1), fixed
    /// its amount, seat-based what its fewest seats cost, metered 0 (nothing up front).
    pub fn amount_rank(&self) -> i64 {
        match self {
            PriceKind::RecurringSeatBased { seat_tiers, .. }
            | PriceKind::OneTimeSeatBased { seat_tiers, .. } => {
                seat_tiers.amount(seat_tiers.minimum_seats()).unwrap_or(-1)
            }
            PriceKind::RecurringFree { .. } | PriceKind::OneTimeFree => -2,
            PriceKind::OneTimeCustom { minimum_amount, .. } => minimum_amount.unwrap_or(-1),
            PriceKind::RecurringFixed { amount, .. } | PriceKind::OneTimeFixed { amount, .. } => {
                *amount
            }
            PriceKind::RecurringMeteredUnit { .. } => 0,
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
    /// Version 3 may hold seat-based prices (variants appended to [`PriceKind`]); its
    /// layout is version 2's. Version 4 appends `price_tax_behavior` (versions 2 and 3 read
    /// through [`ProductV3`], without any); version 5 `free_price_currency`; version 6 may
    /// hold metered prices (a variant appended to [`PriceKind`]) in version 5's layout.
    const VERSION: u16 = 6;

    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        match version {
            1 => tollgate_storage::codec::decode::<ProductV1>(Self::COLLECTION, 1, payload)
                .map(Into::into),
            2 | 3 => {
                tollgate_storage::codec::decode::<ProductV3>(Self::COLLECTION, version, payload)
                    .map(Into::into)
            }
            4 => tollgate_storage::codec::decode::<ProductV4>(Self::COLLECTION, 4, payload)
                .map(Into::into),
            5 | 6 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
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
    pub prices: Vec<NewPrice>,
    /// The `prices` list as sent, quoted by the refusals that need the organization.
    pub prices_sent: AsSent,
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
    /// Keep this price of the product (and the tax behaviour it chose).
    Keep(PriceId),
    /// Add a price.
    Add(NewPrice),
}

/// A price to add: its kind, its currency and the tax behaviour it chose (Polar's price
/// `tax_behavior`; `None`: the organization's default).
#[derive(Debug, Clone, PartialEq)]
pub struct NewPrice {
    pub kind: PriceKind,
    /// The price's currency: that of `kind`, or for a free price the one it is sold in.
    pub currency: Currency,
    pub tax_behavior: Option<TaxBehaviorOption>,
}

impl NewPrice {
    /// A price of `kind` in `currency` (used only when `kind` names none: a free price).
    pub fn new(
        kind: PriceKind,
        currency: Currency,
        tax_behavior: Option<TaxBehaviorOption>,
    ) -> Self {
        let currency = kind
            .currency()
            .and_then(Currency::from_code)
            .unwrap_or(currency);
        NewPrice {
            kind,
            currency,
            tax_behavior,
        }
    }
}

impl From<PriceKind> for NewPrice {
    /// A price that follows the organization's default behaviour (a free one in
    /// [`Currency::DEFAULT`]).
    fn from(kind: PriceKind) -> Self {
        NewPrice::new(kind, Currency::DEFAULT, None)
    }
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

#[path = "product_price_sets.rs"]
mod price_sets;
pub use price_sets::{price_set_problem, price_sets_problem, PriceSetProblem};

#[cfg(test)]
#[path = "product_tests.rs"]
mod tests;
