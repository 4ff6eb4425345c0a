//! The 2027-01 shape of a seat-based price. polar-sdk 1.0.2's `v2027_01` models replace
//! `seat_tiers` (`{seat_tier_type, tiers: [{min_seats, max_seats, price_per_seat}],
//! minimum_seats, maximum_seats}`) with `tiers: {type, tiers: [{bound, unit_amount}]}` and
//! the price's own `minimum_units` (input and output) and `maximum_units` (output);
//! @polar-sh/sdk 1.0.1's 2027-01 types, generated earlier, still have only `seat_tiers`.
//! So 2027-01 answers carry both (each client ignores the fields it does not know), and a
//! 2027-01 body may send either (`docs/differences.md`).
//!
//! A tier covers the seat counts up to and including its `bound` (`null`: no limit, the
//! last tier only); the first starts at `minimum_units` (1 when unset), each next one right
//! after the previous bound. Both shapes read into, and render, the same
//! [`domain::SeatTiers`]. Polar takes fractional rates (`unit_amount` a decimal string);
//! Tollgate charges whole cents, so a fractional rate is a 422 (`docs/differences.md`).

use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::{at, missing, object, MAXIMUM_PRICE_AMOUNT, MAXIMUM_SEATS};
use crate::domain::product as domain;
use crate::error::FieldError;
use crate::validate::Validator;

/// One tier of the 2027-01 shape (polar-sdk's `Tier`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PriceTier {
    /// The tier's last seat count (inclusive); `null`: no limit (the last tier only).
    pub bound: Option<u32>,
    /// The price of a seat in this tier, in cents, as a decimal string (Tollgate's are
    /// whole cents).
    pub unit_amount: String,
}

/// The tiers of the 2027-01 shape (polar-sdk's `Tiers`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PriceTiers {
    /// `volume`: every seat at the rate of the tier the count falls in; `graduated`: each
    /// tier's seats at its own rate.
    #[serde(rename = "type")]
    #[schema(value_type = String)]
    pub kind: &'static str,
    pub tiers: Vec<PriceTier>,
}

impl From<&domain::SeatTiers> for PriceTiers {
    fn from(t: &domain::SeatTiers) -> Self {
        PriceTiers {
            kind: t.tier_type.as_str(),
            tiers: t
                .tiers()
                .iter()
                .map(|tier| PriceTier {
                    bound: tier.max_seats,
                    unit_amount: tier.price_per_seat.to_string(),
                })
                .collect(),
        }
    }
}

/// `tiers` and `minimum_units` of a seat-based price in the 2027-01 shape (`loc` is the
/// price's location), with pydantic-style errors.
pub(super) fn seat_tiers_2027(
    v: &mut Validator,
    raw: &Value,
    loc: &[Value],
) -> Option<domain::SeatTiers> {
    let minimum = minimum_units(v, raw, loc);
    let tiers = tier_list(v, raw, loc);
    let (minimum, (tier_type, bounds, tiers_loc, input)) = (minimum?, tiers?);
    let problem = |message: String| {
        FieldError::new(
            "value_error",
            tiers_loc.clone(),
            format!("Value error, {message}"),
            input.clone(),
        )
    };
    let last = bounds.len() - 1;
    let mut tiers = Vec::with_capacity(bounds.len());
    let mut start = minimum;
    for (i, (bound, unit_amount)) in bounds.into_iter().enumerate() {
        match bound {
            None if i < last => {
                v.push(problem(
                    "Only the last tier can be unbounded (bound null)".into(),
                ));
                return None;
            }
            Some(b) if b < start && i == 0 => {
                v.push(problem(format!(
                    "The first tier's bound ({b}) is below minimum_units ({minimum})"
                )));
                return None;
            }
            Some(b) if b < start => {
                v.push(problem(format!(
                    "Tier bounds must increase: tier {i} ends at {b}, not after {}",
                    start - 1
                )));
                return None;
            }
            _ => {}
        }
        tiers.push(domain::SeatTier {
            min_seats: start,
            max_seats: bound,
            price_per_seat: unit_amount,
        });
        start = bound.map_or(start, |b| b.saturating_add(1));
    }
    match domain::SeatTiers::new(tier_type, tiers) {
        Ok(t) => Some(t),
        Err(p) => {
            v.push(problem(p.message()));
            None
        }
    }
}

/// `minimum_units`: a seat count (`ge=1`), 1 when absent or null.
fn minimum_units(v: &mut Validator, raw: &Value, loc: &[Value]) -> Option<u32> {
    let given = raw.get("minimum_units").is_some_and(|m| !m.is_null());
    let n = super::integer_in(v, raw, loc, "minimum_units", false, (1, MAXIMUM_SEATS));
    match n {
        Some(n) => u32::try_from(n).ok(),
        None if given => None,
        None => Some(1),
    }
}

/// What `tiers` says, before the rules between tiers: the type, each tier's bound and
/// rate, and the location and input of the list (for those rules' errors).
type TierList = (
    domain::SeatTierType,
    Vec<(Option<u32>, i64)>,
    Vec<Value>,
    Value,
);

fn tier_list(v: &mut Validator, raw: &Value, loc: &[Value]) -> Option<TierList> {
    let loc = at(loc, "tiers");
    let Some(value) = raw.get("tiers") else {
        v.push(missing(loc, raw));
        return None;
    };
    let obj = object(v, value, loc.clone())?;
    let tier_type = match obj.get("type") {
        None => {
            v.push(missing(at(&loc, "type"), obj));
            None
        }
        Some(t) => match t.as_str().and_then(domain::SeatTierType::parse) {
            Some(t) => Some(t),
            None => {
                v.push(
                    FieldError::new(
                        "literal_error",
                        at(&loc, "type"),
                        "Input should be 'volume' or 'graduated'",
                        t.clone(),
                    )
                    .with_ctx(json!({"expected": "'volume' or 'graduated'"})),
                );
                None
            }
        },
    };
    let list_loc = at(&loc, "tiers");
    let items = match obj.get("tiers") {
        None => {
            v.push(missing(list_loc, obj));
            return None;
        }
        Some(Value::Array(items)) => items,
        Some(other) => {
            v.push(FieldError::new(
                "list_type",
                list_loc,
                "Input should be a valid list",
                other.clone(),
            ));
            return None;
        }
    };
    if items.is_empty() {
        v.push(
            FieldError::new(
                "too_short",
                list_loc,
                "List should have at least 1 item after validation, not 0",
                Value::Array(Vec::new()),
            )
            .with_ctx(json!({"field_type": "List", "min_length": 1, "actual_length": 0})),
        );
        return None;
    }
    let mut tiers = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let item_loc = {
            let mut l = list_loc.clone();
            l.push(Value::from(i));
            l
        };
        let Some(t) = object(v, item, item_loc.clone()) else {
            ok = false;
            continue;
        };
        let given = t.get("bound").is_some_and(|b| !b.is_null());
        let bound = super::integer_in(v, t, &item_loc, "bound", false, (1, MAXIMUM_SEATS));
        let bound_ok = !given || bound.is_some();
        let amount = whole_cents(v, t, &item_loc);
        match (bound_ok, amount) {
            (true, Some(amount)) => {
                tiers.push((bound.and_then(|b| u32::try_from(b).ok()), amount));
            }
            _ => ok = false,
        }
    }
    let tier_type = tier_type?;
    ok.then(|| (tier_type, tiers, list_loc, Value::Array(items.clone())))
}

/// A tier's `unit_amount` (pydantic's `Decimal` input: a number or a decimal string), in
/// whole cents within Stripe's bounds: a fractional rate is refused.
fn whole_cents(v: &mut Validator, tier: &Value, loc: &[Value]) -> Option<i64> {
    let loc = at(loc, "unit_amount");
    let Some(value) = tier.get("unit_amount") else {
        v.push(missing(loc, tier));
        return None;
    };
    let fractional = || {
        FieldError::new(
            "value_error",
            loc.clone(),
            "Value error, Tollgate charges whole cents: unit_amount cannot have a fractional part",
            value.clone(),
        )
    };
    let parsed = match value {
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Ok(i),
            (None, _) if n.is_u64() => Ok(i64::MAX),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
            _ => Err(fractional()),
        },
        Value::String(s) => match decimal_cents(s.trim()) {
            Some(Ok(i)) => Ok(i),
            Some(Err(())) => Err(fractional()),
            None => Err(FieldError::new(
                "decimal_parsing",
                loc.clone(),
                "Input should be a valid decimal",
                value.clone(),
            )),
        },
        _ => Err(FieldError::new(
            "decimal_type",
            loc.clone(),
            "Decimal input should be an integer, float, string or Decimal object",
            value.clone(),
        )),
    };
    match parsed {
        Ok(i) => v
            .int_range(loc, i, Some(0), Some(MAXIMUM_PRICE_AMOUNT))
            .then_some(i),
        Err(e) => {
            v.push(e);
            None
        }
    }
}

/// A decimal string's whole value: `None` when it is no decimal, `Some(Err)` when it has a
/// fractional part other than zeros. Too large a value reads as `i64::MAX` (above every
/// bound).
fn decimal_cents(s: &str) -> Option<Result<i64, ()>> {
    let (sign, digits) = match s.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, s.strip_prefix('+').unwrap_or(s)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    if fraction.bytes().any(|b| b != b'0') {
        return Some(Err(()));
    }
    let n = if whole.is_empty() {
        0
    } else {
        whole.parse::<i64>().unwrap_or(i64::MAX)
    };
    Some(Ok(sign * n))
}

#[cfg(test)]
#[path = "price_tiers_tests.rs"]
mod tests;
