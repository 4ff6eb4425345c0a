//! Prices in Polar's shapes: the price union of a create or update body, parsed with
//! pydantic-style errors ([`parse_price`]) and checked as a set ([`check_price_set`]), and
//! its renderings, the `ProductPrice` union and its recurring half.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::domain::currency::Currency;
use crate::domain::ids::PriceId;
use crate::domain::meter::Meter;
use crate::domain::product::{self as domain, NewPrice, Price, PriceKind, Product};
use crate::error::FieldError;
use crate::validate::Validator;

use super::version::{self, ApiVersion, VersionedFields, Versions};

#[path = "price_tiers.rs"]
mod tiers;
pub use tiers::{PriceTier, PriceTiers};
#[path = "price_metered.rs"]
mod metered;
#[path = "price_tax.rs"]
mod tax;
#[cfg(test)]
pub(crate) use metered::{sample_metered_kind, sample_meters};
pub use metered::{unit_amount_error, ProductPriceMeter, ONE_TIME_METERED};
use tax::tax_behavior;
pub use tax::{TaxBehaviorOptionWire, TAX_BEHAVIOR_EXPECTED};

/// One-value enums: the constant tags (`type`, `amount_type`, …) of the unions' variants.
macro_rules! tag {
    ($name:ident = $value:tt) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
        pub enum $name {
            #[serde(rename = $value)]
            Value,
        }
    };
}
pub(crate) use tag;

tag!(TagRecurring = "recurring");
tag!(TagOneTime = "one_time");
tag!(TagFixed = "fixed");
tag!(TagFree = "free");
tag!(TagCustom = "custom");
tag!(TagSeatBased = "seat_based");
tag!(TagMeteredUnit = "metered_unit");

/// Stripe's bounds, which Polar applies to every amount (in cents).
pub const MINIMUM_PRICE_AMOUNT: i64 = 50;
pub const MAXIMUM_PRICE_AMOUNT: i64 = 99_999_999;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecurringInterval {
    Day,
    Week,
    Month,
    Year,
}

impl From<domain::RecurringInterval> for RecurringInterval {
    fn from(i: domain::RecurringInterval) -> Self {
        match i {
            domain::RecurringInterval::Day => RecurringInterval::Day,
            domain::RecurringInterval::Week => RecurringInterval::Week,
            domain::RecurringInterval::Month => RecurringInterval::Month,
            domain::RecurringInterval::Year => RecurringInterval::Year,
        }
    }
}

/// A new price: `type` (`recurring`, `one_time`) with `amount_type` (`fixed`, `free`,
/// `custom`) and their amounts; `recurring_interval` for recurring prices.
// Read from the raw item by [`parse_price`] (pydantic's errors for the union); this type
// describes what it reads.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ProductPriceCreate {
    #[serde(rename = "type")]
    pub kind: String,
    pub amount_type: String,
    #[schema(nullable = false)]
    pub price_amount: Option<i64>,
    #[schema(nullable = false)]
    pub price_currency: Option<String>,
    #[schema(nullable = false)]
    pub recurring_interval: Option<RecurringInterval>,
    pub minimum_amount: Option<i64>,
    pub maximum_amount: Option<i64>,
    pub preset_amount: Option<i64>,
    /// Whether the amount includes tax: `location` (exclusive for buyers in the US, Canada
    /// and India, inclusive elsewhere), `inclusive` or `exclusive`; `null` or absent: the
    /// organization's `default_tax_behavior`.
    pub tax_behavior: Option<TaxBehaviorOptionWire>,
}

/// One item of `prices` in a create or an update.
#[derive(Debug, Clone, PartialEq)]
pub enum PriceInput {
    /// `ExistingProductPrice`: keep this price (other keys, `tax_behavior` too, are
    /// ignored: it keeps the behaviour it has).
    Existing(PriceId),
    New(NewPrice),
}

fn at(loc: &[Value], key: &str) -> Vec<Value> {
    let mut l = loc.to_vec();
    l.push(Value::from(key));
    l
}

fn quoted_or(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

fn literal_error(loc: Vec<Value>, expected: &[&str], input: &Value) -> FieldError {
    let expected = quoted_or(expected);
    FieldError::new(
        "literal_error",
        loc,
        format!("Input should be {expected}"),
        input.clone(),
    )
    .with_ctx(json!({ "expected": expected }))
}

fn missing(loc: Vec<Value>, parent: &Value) -> FieldError {
    FieldError::new("missing", loc, "Field required", parent.clone())
}

/// A required or optional amount of a price in `currency` (with whether it is checked
/// against the currency's bounds), with pydantic's lax JSON rules: an integer ≥ 0, then
/// Polar's per-currency minimum and maximum (`minimum_price`, `maximum_price`). `None`:
/// refused (in `v`), or the currency itself was; `Some(None)`: optional and not given.
fn amount(
    v: &mut Validator,
    obj: &Value,
    loc: &[Value],
    key: &str,
    required: bool,
    currency: Option<(Currency, bool)>,
) -> Option<Option<i64>> {
    if !required && obj.get(key).is_none_or(Value::is_null) {
        return Some(None);
    }
    let n = integer_in(v, obj, loc, key, required, (0, i64::MAX));
    let (currency, checked) = currency?;
    let n = n?;
    if checked {
        if let Some(e) = amount_bounds_error(at(loc, key), currency, n) {
            v.push(e);
            return None;
        }
    }
    Some(Some(n))
}

/// A required or optional integer within `(min, max)`, with pydantic's lax JSON rules
/// (integral floats and numeric strings are accepted).
fn integer_in(
    v: &mut Validator,
    obj: &Value,
    loc: &[Value],
    key: &str,
    required: bool,
    (min, max): (i64, i64),
) -> Option<i64> {
    let loc = at(loc, key);
    let value = match obj.get(key) {
        None => {
            if required {
                v.push(missing(loc, obj));
            }
            return None;
        }
        Some(Value::Null) if !required => return None,
        Some(value) => value,
    };
    let parsed = match value {
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Ok(i),
            // Beyond i64: certainly above the maximum.
            (None, _) if n.is_u64() => Ok(i64::MAX),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
            (None, Some(_)) => Err(FieldError::new(
                "int_from_float",
                loc.clone(),
                "Input should be a valid integer, got a number with a fractional part",
                value.clone(),
            )),
            _ => Err(FieldError::new(
                "int_type",
                loc.clone(),
                "Input should be a valid integer",
                value.clone(),
            )),
        },
        Value::String(s) => s.trim().parse::<i64>().map_err(|_| {
            FieldError::new(
                "int_parsing",
                loc.clone(),
                "Input should be a valid integer, unable to parse string as an integer",
                value.clone(),
            )
        }),
        _ => Err(FieldError::new(
            "int_type",
            loc.clone(),
            "Input should be a valid integer",
            value.clone(),
        )),
    };
    match parsed {
        Ok(i) => v.int_range(loc, i, Some(min), Some(max)).then_some(i),
        Err(e) => {
            v.push(e);
            None
        }
    }
}

#[path = "price_checks.rs"]
mod checks;
pub use checks::{
    amount_bounds_error, check_new_prices, check_price_set, currency_mismatch, price_set_error,
};

/// `price_currency`: defaults to [`Currency::DEFAULT`]; one of Polar's presentment
/// currencies.
fn currency(v: &mut Validator, obj: &Value, loc: &[Value]) -> Option<Currency> {
    let loc = at(loc, "price_currency");
    match obj.get("price_currency") {
        None => Some(Currency::DEFAULT),
        Some(Value::String(s)) => match Currency::parse(s) {
            Ok(c) => Some(c),
            Err(_) => {
                v.push(currency_mismatch(loc, s));
                None
            }
        },
        Some(value) => {
            v.push(FieldError::new(
                "string_type",
                loc,
                "Input should be a valid string",
                value.clone(),
            ));
            None
        }
    }
}

fn interval(v: &mut Validator, obj: &Value, loc: &[Value]) -> Option<domain::RecurringInterval> {
    let loc = at(loc, "recurring_interval");
    match obj.get("recurring_interval") {
        None => {
            v.push(missing(loc, obj));
            None
        }
        Some(value) => match value.as_str().and_then(domain::RecurringInterval::parse) {
            Some(i) => Some(i),
            None => {
                v.push(
                    FieldError::new(
                        "enum",
                        loc,
                        "Input should be 'day', 'week', 'month' or 'year'",
                        value.clone(),
                    )
                    .with_ctx(json!({"expected": "'day', 'week', 'month' or 'year'"})),
                );
                None
            }
        },
    }
}

/// How a price without `type` recurs (Polar's 2026 bodies, where the product carries
/// `recurring_interval` and its prices have no `type`): as its product does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cadence {
    OneTime,
    Every(domain::RecurringInterval),
}

/// The price kinds of Polar that Tollgate does not sell (yet).
const UNSUPPORTED_AMOUNT_TYPES: &[(&str, &str)] = &[
    ("unit_based", "Unit-based pricing"),
    ("metered_tiers", "Usage-based (metered) pricing"),
];

/// Parses one item of `prices` at `loc` (`["body", "prices", i]`). Errors go to `v`.
/// With `allow_existing`, an object with an `id` is an existing price to keep. A price
/// without `type` takes `cadence` (its product's); without a cadence, `type` is required.
pub fn parse_price(
    v: &mut Validator,
    loc: &[Value],
    raw: &Value,
    allow_existing: bool,
    cadence: Option<Cadence>,
) -> Option<PriceInput> {
    if !raw.is_object() {
        v.push(FieldError::new(
            "model_type",
            loc.to_vec(),
            "Input should be a valid dictionary or object",
            raw.clone(),
        ));
        return None;
    }
    if allow_existing {
        if let Some(id) = raw.get("id") {
            return match id.as_str().map(uuid::Uuid::parse_str) {
                Some(Ok(id)) => Some(PriceInput::Existing(PriceId(id))),
                Some(Err(e)) => {
                    v.push(FieldError::new(
                        "uuid_parsing",
                        at(loc, "id"),
                        format!("Input should be a valid UUID, {e}"),
                        id.clone(),
                    ));
                    None
                }
                None => {
                    v.push(FieldError::new(
                        "string_type",
                        at(loc, "id"),
                        "Input should be a valid string",
                        id.clone(),
                    ));
                    None
                }
            };
        }
    }
    if let Some((_, what)) = raw
        .get("amount_type")
        .and_then(Value::as_str)
        .and_then(|a| UNSUPPORTED_AMOUNT_TYPES.iter().find(|(t, _)| *t == a))
    {
        v.unsupported(at(loc, "amount_type"), raw["amount_type"].clone(), what);
        return None;
    }
    let tax_behavior = tax_behavior(v, raw, loc);
    if raw.get("amount_type").and_then(Value::as_str) == Some("metered_unit") {
        return metered::parse_metered(v, loc, raw, cadence, tax_behavior).map(PriceInput::New);
    }
    let recurring = match (raw.get("type"), cadence) {
        (None, Some(c)) => Some(c != Cadence::OneTime),
        (None, None) => {
            v.push(missing(at(loc, "type"), raw));
            None
        }
        (Some(t), _) => match t {
            Value::String(t) if t == "recurring" => Some(true),
            Value::String(t) if t == "one_time" => Some(false),
            t => {
                v.push(literal_error(
                    at(loc, "type"),
                    &["recurring", "one_time"],
                    t,
                ));
                None
            }
        },
    };
    // A 2026 price recurs as its product; a legacy one names its own interval.
    let interval = |v: &mut Validator| match (raw.get("type"), cadence) {
        (None, Some(Cadence::Every(i))) if raw.get("recurring_interval").is_none() => Some(i),
        _ => interval(v, raw, loc),
    };
    let amount_type = match raw.get("amount_type") {
        None => {
            v.push(missing(at(loc, "amount_type"), raw));
            None
        }
        Some(a) => {
            let allowed: &[&str] = if recurring == Some(true) {
                // Recurring prices can't be pay-what-you-want.
                &["fixed", "free", "seat_based"]
            } else {
                &["fixed", "custom", "free", "seat_based"]
            };
            match a.as_str().filter(|s| allowed.contains(s)) {
                Some(s) => Some(s),
                None => {
                    v.push(literal_error(at(loc, "amount_type"), allowed, a));
                    None
                }
            }
        }
    };
    let (recurring, amount_type) = (recurring?, amount_type?);
    // The currency first: the bounds of the amounts are the currency's.
    let currency = currency(v, raw, loc);
    let bounds = currency.map(|c| (c, true));
    let kind = match (recurring, amount_type) {
        (true, "fixed") => {
            let amount = amount(v, raw, loc, "price_amount", true, bounds);
            let interval = interval(v);
            PriceKind::RecurringFixed {
                interval: interval?,
                currency: currency?.to_string(),
                amount: amount??,
            }
        }
        (true, "seat_based") => {
            let seat_tiers = seat_price_tiers(v, raw, loc);
            let interval = interval(v);
            PriceKind::RecurringSeatBased {
                interval: interval?,
                currency: currency?.to_string(),
                seat_tiers: seat_tiers?,
            }
        }
        (false, "seat_based") => {
            let seat_tiers = seat_price_tiers(v, raw, loc);
            PriceKind::OneTimeSeatBased {
                currency: currency?.to_string(),
                seat_tiers: seat_tiers?,
            }
        }
        (true, _) => PriceKind::RecurringFree {
            interval: interval(v)?,
        },
        (false, "fixed") => {
            let amount = amount(v, raw, loc, "price_amount", true, bounds);
            PriceKind::OneTimeFixed {
                currency: currency?.to_string(),
                amount: amount??,
            }
        }
        (false, "custom") => {
            // An invalid bound is reported in `v` (failing the request) and reads as unset.
            let minimum_amount = amount(v, raw, loc, "minimum_amount", false, bounds);
            let maximum_amount = amount(v, raw, loc, "maximum_amount", false, bounds);
            let preset_amount = amount(v, raw, loc, "preset_amount", false, bounds);
            PriceKind::OneTimeCustom {
                currency: currency?.to_string(),
                minimum_amount: minimum_amount.flatten(),
                maximum_amount: maximum_amount.flatten(),
                preset_amount: preset_amount.flatten(),
            }
        }
        (false, _) => PriceKind::OneTimeFree,
    };
    Some(PriceInput::New(NewPrice::new(
        kind,
        currency?,
        tax_behavior?,
    )))
}

/// The most seats a tier bound may name (Tollgate stores seat counts as `u32`).
pub const MAXIMUM_SEATS: i64 = 1_000_000;

/// A JSON object at `loc`, or a `model_type` error.
fn object<'a>(v: &mut Validator, value: &'a Value, loc: Vec<Value>) -> Option<&'a Value> {
    if value.is_object() {
        Some(value)
    } else {
        v.push(FieldError::new(
            "model_type",
            loc,
            "Input should be a valid dictionary or object",
            value.clone(),
        ));
        None
    }
}

/// A seat count of a tier (`ge=1`), `None` when absent or null and not `required`.
fn seat_count(
    v: &mut Validator,
    tier: &Value,
    loc: &[Value],
    key: &str,
    required: bool,
) -> Option<Option<u32>> {
    let before = v.has_errors();
    let n = integer_in(v, tier, loc, key, required, (1, MAXIMUM_SEATS));
    if v.has_errors() && !before {
        return None;
    }
    match n {
        Some(n) => u32::try_from(n).ok().map(Some),
        None if required => None,
        None => Some(None),
    }
}

/// The tiers of a seat-based price: 2027-01's `tiers` and `minimum_units` ([`tiers`]) when
/// that version is served, unless the body has only the 2026 `seat_tiers` (which
/// @polar-sh/sdk 1.0.1 still sends in 2027-01); `seat_tiers` in the earlier versions.
fn seat_price_tiers(v: &mut Validator, raw: &Value, loc: &[Value]) -> Option<domain::SeatTiers> {
    let only_2026 = raw.get("tiers").is_none() && raw.get("seat_tiers").is_some();
    if version::serves_since(ApiVersion::V2027_01) && !only_2026 {
        tiers::seat_tiers_2027(v, raw, loc)
    } else {
        seat_tiers(v, raw, loc)
    }
}

/// `seat_tiers` of a seat-based price (Polar's `ProductPriceSeatTiers`): `seat_tier_type`
/// (`volume`, the default, or `graduated`) and at least one tier `{min_seats, max_seats,
/// price_per_seat}`; the tiers, sorted, must form one range without gaps or overlaps,
/// only the last one open-ended. Other keys (the derived `minimum_seats` and
/// `maximum_seats` of the output) are ignored, as pydantic does.
fn seat_tiers(v: &mut Validator, raw: &Value, loc: &[Value]) -> Option<domain::SeatTiers> {
    let loc = at(loc, "seat_tiers");
    let Some(value) = raw.get("seat_tiers") else {
        v.push(missing(loc, raw));
        return None;
    };
    let obj = object(v, value, loc.clone())?;
    let tier_type = match obj.get("seat_tier_type") {
        None => Some(domain::SeatTierType::Volume),
        Some(t) => match t.as_str().and_then(domain::SeatTierType::parse) {
            Some(t) => Some(t),
            None => {
                v.push(
                    FieldError::new(
                        "enum",
                        at(&loc, "seat_tier_type"),
                        "Input should be 'volume' or 'graduated'",
                        t.clone(),
                    )
                    .with_ctx(json!({"expected": "'volume' or 'graduated'"})),
                );
                None
            }
        },
    };
    let tiers_loc = at(&loc, "tiers");
    let tiers = match obj.get("tiers") {
        None => {
            v.push(missing(tiers_loc.clone(), obj));
            None
        }
        Some(Value::Array(items)) => {
            let mut tiers = Vec::with_capacity(items.len());
            let mut ok = true;
            for (i, item) in items.iter().enumerate() {
                let mut item_loc = tiers_loc.clone();
                item_loc.push(Value::from(i));
                let Some(t) = object(v, item, item_loc.clone()) else {
                    ok = false;
                    continue;
                };
                let min = seat_count(v, t, &item_loc, "min_seats", true);
                let max = seat_count(v, t, &item_loc, "max_seats", false);
                let price = integer_in(
                    v,
                    t,
                    &item_loc,
                    "price_per_seat",
                    true,
                    (0, MAXIMUM_PRICE_AMOUNT),
                );
                match (min, max, price) {
                    (Some(Some(min_seats)), Some(max_seats), Some(price_per_seat)) => {
                        tiers.push(domain::SeatTier {
                            min_seats,
                            max_seats,
                            price_per_seat,
                        })
                    }
                    _ => ok = false,
                }
            }
            if items.is_empty() {
                v.push(
                    FieldError::new(
                        "too_short",
                        tiers_loc.clone(),
                        "List should have at least 1 item after validation, not 0",
                        Value::Array(Vec::new()),
                    )
                    .with_ctx(json!({"field_type": "List", "min_length": 1, "actual_length": 0})),
                );
                ok = false;
            }
            ok.then_some(tiers)
        }
        Some(other) => {
            v.push(FieldError::new(
                "list_type",
                tiers_loc.clone(),
                "Input should be a valid list",
                other.clone(),
            ));
            None
        }
    };
    let (tier_type, tiers) = (tier_type?, tiers?);
    match domain::SeatTiers::new(tier_type, tiers) {
        Ok(t) => Some(t),
        Err(problem) => {
            v.push(FieldError::new(
                "value_error",
                tiers_loc,
                format!("Value error, {}", problem.message()),
                obj.get("tiers").cloned().unwrap_or(Value::Null),
            ));
            None
        }
    }
}

/// A tier as typed elsewhere (the dashboard's form), before the rules of `seat_tiers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeatTierInput {
    pub min_seats: i64,
    pub max_seats: Option<i64>,
    pub price_per_seat: i64,
}

/// `seat_tiers` of a typed `tier_type` and tiers, read with the same rules and messages as
/// a body's (`loc` is the price's location).
pub fn seat_tiers_of(
    v: &mut Validator,
    loc: Vec<Value>,
    tier_type: &str,
    tiers: &[SeatTierInput],
) -> Option<domain::SeatTiers> {
    let tiers: Vec<Value> = tiers
        .iter()
        .map(|t| {
            json!({"min_seats": t.min_seats, "max_seats": t.max_seats,
                   "price_per_seat": t.price_per_seat})
        })
        .collect();
    let raw = json!({"seat_tiers": {"seat_tier_type": tier_type, "tiers": tiers}});
    seat_tiers(v, &raw, &loc)
}

/// One variant of the `ProductPrice` union: the fields every price has, its two tags and
/// the variant's own fields; `build` fills the common fields from the record.
macro_rules! price_variant {
    ($(#[$doc:meta])* $name:ident, $amount_type:ident, $kind:ident { $($(#[$fattr:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Serialize, ToSchema)]
        pub struct $name {
            pub id: Uuid,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            pub amount_type: $amount_type,
            #[serde(rename = "type")]
            pub kind: $kind,
            pub is_archived: bool,
            pub product_id: Uuid,
            /// `catalog`: a price of the product's catalogue.
            pub source: &'static str,
            /// The price's own tax behaviour; `null`: the organization's
            /// `default_tax_behavior`.
            pub tax_behavior: Option<TaxBehaviorOptionWire>,
            $($(#[$fattr])* pub $field: $ty,)*
        }

        impl $name {
            // One argument per field of the variant (the seat-based ones have six).
            #[allow(clippy::too_many_arguments)]
            fn build(product: &Product, p: &Price, $($field: $ty),*) -> Self {
                Self {
                    id: p.id.0,
                    created_at: p.created_at,
                    modified_at: p.modified_at,
                    amount_type: $amount_type::Value,
                    kind: $kind::Value,
                    is_archived: p.is_archived,
                    product_id: product.id.0,
                    source: "catalog",
                    tax_behavior: product.price_tax_behavior(p.id).map(Into::into),
                    $($field,)*
                }
            }
        }
    };
}

price_variant!(
    ProductPriceRecurringFixed,
    TagFixed,
    TagRecurring {
        price_currency: String,
        price_amount: i64,
        recurring_interval: RecurringInterval,
    }
);
price_variant!(
    ProductPriceRecurringFree,
    TagFree,
    TagRecurring {
        recurring_interval: RecurringInterval,
    }
);
price_variant!(
    ProductPriceOneTimeFixed,
    TagFixed,
    TagOneTime {
        price_currency: String,
        price_amount: i64,
    }
);
price_variant!(ProductPriceOneTimeFree, TagFree, TagOneTime {});
price_variant!(
    /// Pay what you want, between the bounds.
    ProductPriceOneTimeCustom, TagCustom, TagOneTime {
        price_currency: String,
        // The least a buyer may pay: the set minimum, else Stripe's (50 cents).
        minimum_amount: i64,
        maximum_amount: Option<i64>,
        preset_amount: Option<i64>,
    }
);

/// One tier of a seat-based price (Polar's `ProductPriceSeatTier`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProductPriceSeatTier {
    /// The tier's fewest seats (inclusive).
    pub min_seats: u32,
    /// The tier's most seats (inclusive); `null`: no limit.
    pub max_seats: Option<u32>,
    /// The price of a seat in this tier, in cents.
    pub price_per_seat: i64,
}

/// The tiers of a seat-based price (Polar's `ProductPriceSeatTiersOutput`), with the seat
/// counts on sale derived from them.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProductPriceSeatTiersOutput {
    /// `volume`: every seat at the rate of the tier the count falls in; `graduated`: each
    /// tier's seats at its own rate.
    #[schema(value_type = String)]
    pub seat_tier_type: &'static str,
    pub tiers: Vec<ProductPriceSeatTier>,
    /// The first tier's `min_seats`.
    pub minimum_seats: u32,
    /// The last tier's `max_seats` (`null`: no limit).
    pub maximum_seats: Option<u32>,
}

impl From<&domain::SeatTiers> for ProductPriceSeatTiersOutput {
    fn from(t: &domain::SeatTiers) -> Self {
        ProductPriceSeatTiersOutput {
            seat_tier_type: t.tier_type.as_str(),
            tiers: t
                .tiers()
                .iter()
                .map(|t| ProductPriceSeatTier {
                    min_seats: t.min_seats,
                    max_seats: t.max_seats,
                    price_per_seat: t.price_per_seat,
                })
                .collect(),
            minimum_seats: t.minimum_seats(),
            maximum_seats: t.maximum_seats(),
        }
    }
}

price_variant!(
    /// Seat-based, recurring: the buyer picks a seat count.
    ProductPriceRecurringSeatBased, TagSeatBased, TagRecurring {
        price_currency: String,
        recurring_interval: RecurringInterval,
        /// In every version: polar-sdk 1.0.2's 2027-01 models replaced it with `tiers`,
        /// `minimum_units` and `maximum_units`, @polar-sh/sdk 1.0.1's still require it.
        seat_tiers: ProductPriceSeatTiersOutput,
        /// From 2027-01: the tiers (`seat_tiers` before).
        #[serde(skip_serializing_if = "version::before_2027_01")]
        tiers: PriceTiers,
        /// From 2027-01: the fewest seats on sale.
        #[serde(skip_serializing_if = "version::before_2027_01")]
        minimum_units: Option<u32>,
        /// From 2027-01: the most seats on sale (`null`: no limit).
        #[serde(skip_serializing_if = "version::before_2027_01")]
        maximum_units: Option<u32>,
    }
);
price_variant!(
    /// Seat-based, one-time: the buyer picks a seat count.
    ProductPriceOneTimeSeatBased, TagSeatBased, TagOneTime {
        price_currency: String,
        /// In every version: polar-sdk 1.0.2's 2027-01 models replaced it with `tiers`,
        /// `minimum_units` and `maximum_units`, @polar-sh/sdk 1.0.1's still require it.
        seat_tiers: ProductPriceSeatTiersOutput,
        /// From 2027-01: the tiers (`seat_tiers` before).
        #[serde(skip_serializing_if = "version::before_2027_01")]
        tiers: PriceTiers,
        /// From 2027-01: the fewest seats on sale.
        #[serde(skip_serializing_if = "version::before_2027_01")]
        minimum_units: Option<u32>,
        /// From 2027-01: the most seats on sale (`null`: no limit).
        #[serde(skip_serializing_if = "version::before_2027_01")]
        maximum_units: Option<u32>,
    }
);

/// The fields of a seat-based price that 2027-01 added (`seat_tiers` stays: see the field).
const SEAT_PRICE_FIELDS: &[(&str, Versions)] = &[
    ("tiers", Versions::since(ApiVersion::V2027_01)),
    ("minimum_units", Versions::since(ApiVersion::V2027_01)),
    ("maximum_units", Versions::since(ApiVersion::V2027_01)),
];

impl VersionedFields for ProductPriceRecurringSeatBased {
    const SCHEMA: &'static str = "ProductPriceRecurringSeatBased";
    const FIELDS: &'static [(&'static str, Versions)] = SEAT_PRICE_FIELDS;
}

impl VersionedFields for ProductPriceOneTimeSeatBased {
    const SCHEMA: &'static str = "ProductPriceOneTimeSeatBased";
    const FIELDS: &'static [(&'static str, Versions)] = SEAT_PRICE_FIELDS;
}

price_variant!(
    /// Metered (Polar's `ProductPriceMeteredUnit`): nothing up front; each period's usage
    /// of the meter is billed at its end, `unit_amount` cents a unit, at most `cap_amount`.
    ProductPriceMeteredUnit, TagMeteredUnit, TagRecurring {
        price_currency: String,
        recurring_interval: RecurringInterval,
        /// The price of a unit in cents, a decimal string (`"0.5"`: half a cent).
        unit_amount: String,
        /// The most a period's usage costs, in cents (`null`: no cap).
        cap_amount: Option<i64>,
        meter_id: Uuid,
        meter: ProductPriceMeter,
    }
);

/// A price, its variant named by `type` and `amount_type`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ProductPrice {
    RecurringFixed(ProductPriceRecurringFixed),
    RecurringFree(ProductPriceRecurringFree),
    OneTimeFixed(ProductPriceOneTimeFixed),
    OneTimeFree(ProductPriceOneTimeFree),
    OneTimeCustom(ProductPriceOneTimeCustom),
    RecurringSeatBased(ProductPriceRecurringSeatBased),
    OneTimeSeatBased(ProductPriceOneTimeSeatBased),
    MeteredUnit(ProductPriceMeteredUnit),
}

impl ProductPrice {
    /// A price of `product` (which gives its id and the price's tax behaviour); `meters`
    /// holds (at least) the meters of its metered prices. In a named API version, a free
    /// price is a fixed price of 0: Polar's 2026 shapes (and today's SDKs) have no free
    /// price.
    pub fn new(product: &Product, p: &Price, meters: &[Meter]) -> Self {
        let versioned = super::version::active().is_some();
        match &p.kind {
            PriceKind::RecurringFree { interval } if versioned => {
                ProductPrice::RecurringFixed(ProductPriceRecurringFixed::build(
                    product,
                    p,
                    product.currency_of(p).to_string(),
                    0,
                    (*interval).into(),
                ))
            }
            PriceKind::OneTimeFree if versioned => ProductPrice::OneTimeFixed(
                ProductPriceOneTimeFixed::build(product, p, product.currency_of(p).to_string(), 0),
            ),
            PriceKind::RecurringFixed {
                interval,
                currency,
                amount,
            } => ProductPrice::RecurringFixed(ProductPriceRecurringFixed::build(
                product,
                p,
                currency.clone(),
                *amount,
                (*interval).into(),
            )),
            PriceKind::RecurringFree { interval } => ProductPrice::RecurringFree(
                ProductPriceRecurringFree::build(product, p, (*interval).into()),
            ),
            PriceKind::OneTimeFixed { currency, amount } => ProductPrice::OneTimeFixed(
                ProductPriceOneTimeFixed::build(product, p, currency.clone(), *amount),
            ),
            PriceKind::OneTimeFree => {
                ProductPrice::OneTimeFree(ProductPriceOneTimeFree::build(product, p))
            }
            PriceKind::OneTimeCustom {
                currency,
                minimum_amount,
                maximum_amount,
                preset_amount,
            } => ProductPrice::OneTimeCustom(ProductPriceOneTimeCustom::build(
                product,
                p,
                currency.clone(),
                minimum_amount.unwrap_or_else(|| {
                    Currency::from_code(currency)
                        .map_or(MINIMUM_PRICE_AMOUNT, Currency::minimum_amount)
                }),
                *maximum_amount,
                *preset_amount,
            )),
            PriceKind::RecurringSeatBased {
                interval,
                currency,
                seat_tiers,
            } => ProductPrice::RecurringSeatBased(ProductPriceRecurringSeatBased::build(
                product,
                p,
                currency.clone(),
                (*interval).into(),
                seat_tiers.into(),
                seat_tiers.into(),
                Some(seat_tiers.minimum_seats()),
                seat_tiers.maximum_seats(),
            )),
            PriceKind::OneTimeSeatBased {
                currency,
                seat_tiers,
            } => ProductPrice::OneTimeSeatBased(ProductPriceOneTimeSeatBased::build(
                product,
                p,
                currency.clone(),
                seat_tiers.into(),
                seat_tiers.into(),
                Some(seat_tiers.minimum_seats()),
                seat_tiers.maximum_seats(),
            )),
            PriceKind::RecurringMeteredUnit {
                interval,
                currency,
                meter_id,
                unit_amount,
                cap_amount,
            } => ProductPrice::MeteredUnit(ProductPriceMeteredUnit::build(
                product,
                p,
                currency.clone(),
                (*interval).into(),
                unit_amount.to_string(),
                *cap_amount,
                meter_id.0,
                ProductPriceMeter::of(*meter_id, meters),
            )),
        }
    }
}

/// A recurring price (of a subscription).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ProductPriceRecurring {
    Fixed(ProductPriceRecurringFixed),
    Free(ProductPriceRecurringFree),
    SeatBased(ProductPriceRecurringSeatBased),
    MeteredUnit(ProductPriceMeteredUnit),
}

impl ProductPriceRecurring {
    /// A price of `product` (`meters` as [`ProductPrice::new`]); `None` for a one-time
    /// price.
    pub fn new(product: &Product, p: &Price, meters: &[Meter]) -> Option<Self> {
        match ProductPrice::new(product, p, meters) {
            ProductPrice::RecurringFixed(fixed) => Some(ProductPriceRecurring::Fixed(fixed)),
            ProductPrice::RecurringFree(free) => Some(ProductPriceRecurring::Free(free)),
            ProductPrice::RecurringSeatBased(seats) => {
                Some(ProductPriceRecurring::SeatBased(seats))
            }
            ProductPrice::MeteredUnit(metered) => Some(ProductPriceRecurring::MeteredUnit(metered)),
            _ => None,
        }
    }
}

#[cfg(test)]
#[path = "price_tests.rs"]
mod tests;
