//! Polar's `metered_unit` price (`polar-2026.md` §7.5): read from a price body
//! ([`parse_metered`]: `meter_id`, `unit_amount` as a JSON number or string, `cap_amount`)
//! and its output's meter (`ProductPriceMeter`). Whether the meter exists in the
//! organization is the use case's check (it needs the store).

use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use super::{at, currency, missing, Cadence};
use crate::domain::ids::MeterId;
use crate::domain::meter::Meter;
use crate::domain::product::{
    self as domain, PriceKind, UnitAmount, UnitAmountProblem, UNIT_AMOUNT_DECIMALS,
    UNIT_AMOUNT_DIGITS, UNIT_AMOUNT_WHOLE_DIGITS,
};
use crate::domain::tax_settings::TaxBehaviorOption;
use crate::error::FieldError;
use crate::validate::Validator;

/// The 422 message of a metered price on a one-time product (Polar's service).
pub const ONE_TIME_METERED: &str = "Metered pricing is not supported on one-time products.";

/// The meter of a metered price (Polar's `ProductPriceMeter`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProductPriceMeter {
    pub id: Uuid,
    pub name: String,
    /// `scalar`, `token` or `custom`.
    #[schema(value_type = String)]
    pub unit: &'static str,
    pub custom_label: Option<String>,
    pub custom_multiplier: Option<i32>,
}

impl ProductPriceMeter {
    /// The meter `id` among `meters`. Meters are never deleted, so a caller that loaded
    /// the product's meters finds it; a missing one (a broken store) renders its id with
    /// an empty name rather than failing the whole rendering.
    pub fn of(id: MeterId, meters: &[Meter]) -> Self {
        match meters.iter().find(|m| m.id == id) {
            Some(m) => ProductPriceMeter {
                id: m.id.0,
                name: m.name.clone(),
                unit: m.unit.as_str(),
                custom_label: m.custom_label.clone(),
                custom_multiplier: m.custom_multiplier,
            },
            None => {
                tracing::warn!(meter = %id.0, "a metered price's meter is missing");
                ProductPriceMeter {
                    id: id.0,
                    name: String::new(),
                    unit: crate::domain::meter::MeterUnit::Scalar.as_str(),
                    custom_label: None,
                    custom_multiplier: None,
                }
            }
        }
    }
}

/// `unit_amount`: pydantic's `Decimal(gt=0, max_digits=17, decimal_places=12)` in lax JSON
/// mode (a number, or a string of one).
fn unit_amount(v: &mut Validator, raw: &Value, loc: &[Value]) -> Option<UnitAmount> {
    let loc = at(loc, "unit_amount");
    let value = match raw.get("unit_amount") {
        None => {
            v.push(missing(loc, raw));
            return None;
        }
        Some(value) => value,
    };
    let text = match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => {
            v.push(FieldError::new(
                "decimal_type",
                loc,
                "Decimal input should be an integer, float, string or Decimal object",
                other.clone(),
            ));
            return None;
        }
    };
    match UnitAmount::parse(&text) {
        Ok(a) => Some(a),
        Err(problem) => {
            v.push(unit_amount_error(loc, problem, value));
            None
        }
    }
}

/// pydantic's error of a `unit_amount` that breaks a constraint.
pub fn unit_amount_error(loc: Vec<Value>, problem: UnitAmountProblem, input: &Value) -> FieldError {
    let input = input.clone();
    match problem {
        UnitAmountProblem::Parsing => FieldError::new(
            "decimal_parsing",
            loc,
            "Input should be a valid decimal",
            input,
        ),
        UnitAmountProblem::MaxDigits => FieldError::new(
            "decimal_max_digits",
            loc,
            format!("Decimal input should have no more than {UNIT_AMOUNT_DIGITS} digits in total"),
            input,
        )
        .with_ctx(json!({"max_digits": UNIT_AMOUNT_DIGITS})),
        UnitAmountProblem::MaxPlaces => FieldError::new(
            "decimal_max_places",
            loc,
            format!("Decimal input should have no more than {UNIT_AMOUNT_DECIMALS} decimal places"),
            input,
        )
        .with_ctx(json!({"decimal_places": UNIT_AMOUNT_DECIMALS})),
        UnitAmountProblem::WholeDigits => FieldError::new(
            "decimal_whole_digits",
            loc,
            format!(
                "Decimal input should have no more than {UNIT_AMOUNT_WHOLE_DIGITS} digits \
                 before the decimal point"
            ),
            input,
        )
        .with_ctx(json!({"whole_digits": UNIT_AMOUNT_WHOLE_DIGITS})),
        UnitAmountProblem::NotPositive => {
            FieldError::new("greater_than", loc, "Input should be greater than 0", input)
                .with_ctx(json!({"gt": 0}))
        }
    }
}

/// `meter_id`: a UUID (version 4, pydantic's `UUID4`).
fn meter_id(v: &mut Validator, raw: &Value, loc: &[Value]) -> Option<MeterId> {
    let loc = at(loc, "meter_id");
    match raw.get("meter_id") {
        None => {
            v.push(missing(loc, raw));
            None
        }
        Some(value @ Value::String(s)) => match Uuid::parse_str(s) {
            Ok(id) if id.get_version_num() == 4 => Some(MeterId(id)),
            Ok(_) => {
                v.push(
                    FieldError::new(
                        "uuid_version",
                        loc,
                        "UUID version 4 expected",
                        value.clone(),
                    )
                    .with_ctx(json!({"expected_version": 4})),
                );
                None
            }
            Err(e) => {
                v.push(FieldError::new(
                    "uuid_parsing",
                    loc,
                    format!("Input should be a valid UUID, {e}"),
                    value.clone(),
                ));
                None
            }
        },
        Some(value) => {
            v.push(FieldError::new(
                "uuid_type",
                loc,
                "UUID input should be a string, bytes or UUID object",
                value.clone(),
            ));
            None
        }
    }
}

/// A `metered_unit` item of `prices` at `loc`. Its fields first (pydantic's schema), then,
/// only when they are valid, Polar's service rule: the product must recur (`cadence`, or
/// a legacy item's own `type` and `recurring_interval`), else [`ONE_TIME_METERED`] at
/// the item.
pub(super) fn parse_metered(
    v: &mut Validator,
    loc: &[Value],
    raw: &Value,
    cadence: Option<Cadence>,
    tax_behavior: Option<Option<TaxBehaviorOption>>,
) -> Option<domain::NewPrice> {
    let before = v.has_errors();
    let currency = currency(v, raw, loc);
    let meter = meter_id(v, raw, loc);
    let unit_amount = unit_amount(v, raw, loc);
    let cap_amount = super::integer_in(v, raw, loc, "cap_amount", false, (0, i64::from(i32::MAX)));
    let (currency, meter_id, unit_amount, tax_behavior) =
        (currency?, meter?, unit_amount?, tax_behavior?);
    if v.has_errors() && !before {
        return None;
    }
    let one_time = raw.get("type").and_then(Value::as_str) == Some("one_time");
    let interval = if one_time {
        None
    } else {
        match (raw.get("recurring_interval"), cadence) {
            (Some(_), _) => Some(super::interval(v, raw, loc)?),
            (None, Some(Cadence::Every(i))) => Some(i),
            (None, Some(Cadence::OneTime)) => None,
            (None, None) => {
                v.push(missing(at(loc, "recurring_interval"), raw));
                return None;
            }
        }
    };
    let Some(interval) = interval else {
        v.push(FieldError::new(
            "value_error",
            loc.to_vec(),
            ONE_TIME_METERED,
            raw.clone(),
        ));
        return None;
    };
    Some(domain::NewPrice::new(
        PriceKind::RecurringMeteredUnit {
            interval,
            currency: currency.to_string(),
            meter_id,
            unit_amount,
            cap_amount,
        },
        currency,
        tax_behavior,
    ))
}

/// The meter of the sample metered price ([`sample_metered_kind`]).
#[cfg(test)]
pub(crate) fn sample_meters() -> Vec<Meter> {
    use crate::domain::ids::OrganizationId;
    use crate::domain::meter::{Aggregation, Conjunction, Filter, MeterUnit};
    use chrono::TimeZone;
    let now = chrono::Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    vec![Meter {
        id: MeterId(Uuid::from_u128(0x4e7e_0000_0000_4000_8000_0000_0000_0001)),
        organization_id: OrganizationId(Uuid::from_u128(0x0a)),
        name: "API calls".into(),
        unit: MeterUnit::Scalar,
        custom_label: None,
        custom_multiplier: None,
        filter: Filter {
            conjunction: Conjunction::And,
            clauses: Vec::new(),
        },
        aggregation: Aggregation::Count,
        metadata: Default::default(),
        created_at: now,
        modified_at: None,
        archived_at: None,
        aggregating: false,
    }]
}

/// A metered price of half a cent a call, capped at $100, on [`sample_meters`]'s meter.
#[cfg(test)]
pub(crate) fn sample_metered_kind() -> PriceKind {
    PriceKind::RecurringMeteredUnit {
        interval: domain::RecurringInterval::Month,
        currency: crate::domain::currency::Currency::DEFAULT.into(),
        meter_id: sample_meters()[0].id,
        unit_amount: UnitAmount::from_pico_cents(500_000_000_000)
            .unwrap_or_else(|| unreachable!("half a cent is a unit amount")),
        cap_amount: Some(10_000),
    }
}

#[cfg(test)]
#[path = "price_metered_tests.rs"]
mod tests;
