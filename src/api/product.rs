//! Products and prices in Polar's shapes: the create/update bodies, the price union parsed
//! with pydantic-style errors, and the three product renderings (full `Product`,
//! `CheckoutProduct`, `OrderProduct`) plus the `ProductPrice*` union.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::api::benefit::BenefitView;
use crate::api::custom_field::attached_custom_field_json;
use crate::domain::benefit::Benefit;
use crate::domain::custom_field::CustomField;
use crate::domain::ids::{PriceId, ProductId};
use crate::domain::product::{Price, PriceKind, Product, RecurringInterval};
use crate::error::FieldError;
use crate::validate::Validator;

pub const NAME_MIN_CHARS: usize = 3;
/// Stripe's bounds, which Polar applies to every amount (in cents).
pub const MINIMUM_PRICE_AMOUNT: i64 = 50;
pub const MAXIMUM_PRICE_AMOUNT: i64 = 99_999_999;
pub const CURRENCY: &str = "usd";

/// `ProductRecurringCreate` / `ProductOneTimeCreate`: which one is decided by the prices.
#[derive(Debug, Deserialize)]
pub struct ProductCreate {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Parsed item by item with [`parse_price`], for precise error locations.
    pub prices: Vec<Value>,
    #[serde(default)]
    pub medias: Option<Vec<uuid::Uuid>>,
    #[serde(default)]
    pub attached_custom_fields: Option<Vec<AttachedCustomFieldCreate>>,
    #[serde(default)]
    pub organization_id: Option<uuid::Uuid>,
}

#[derive(Debug, Deserialize)]
pub struct AttachedCustomFieldCreate {
    pub custom_field_id: uuid::Uuid,
    pub required: bool,
}

/// `ProductUpdate`: every field optional; `null` leaves a field as it is.
#[derive(Debug, Deserialize)]
pub struct ProductUpdate {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub is_archived: Option<bool>,
    /// Each item is an existing price (`{"id": …}`) or a new price.
    #[serde(default)]
    pub prices: Option<Vec<Value>>,
    #[serde(default)]
    pub medias: Option<Vec<uuid::Uuid>>,
    #[serde(default)]
    pub attached_custom_fields: Option<Vec<AttachedCustomFieldCreate>>,
}

/// `ProductBenefitsUpdate`.
#[derive(Debug, Deserialize)]
pub struct ProductBenefitsUpdate {
    pub benefits: Vec<uuid::Uuid>,
}

/// One item of `prices` in a create or an update.
#[derive(Debug, Clone, PartialEq)]
pub enum PriceInput {
    /// `ExistingProductPrice`: keep this price (other keys are ignored).
    Existing(PriceId),
    New(PriceKind),
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

/// A required or optional integer, with pydantic's lax JSON rules (integral floats and
/// numeric strings are accepted).
fn integer(
    v: &mut Validator,
    obj: &Value,
    loc: &[Value],
    key: &str,
    required: bool,
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
        Ok(i) => v
            .int_range(
                loc,
                i,
                Some(MINIMUM_PRICE_AMOUNT),
                Some(MAXIMUM_PRICE_AMOUNT),
            )
            .then_some(i),
        Err(e) => {
            v.push(e);
            None
        }
    }
}

/// `price_currency`: defaults to `usd`, the only currency accepted.
fn currency(v: &mut Validator, obj: &Value, loc: &[Value]) -> Option<String> {
    let loc = at(loc, "price_currency");
    match obj.get("price_currency") {
        None => Some(CURRENCY.to_string()),
        Some(Value::String(s)) if s == CURRENCY => Some(s.clone()),
        Some(value @ Value::String(_)) => {
            v.push(
                FieldError::new(
                    "string_pattern_mismatch",
                    loc,
                    format!("String should match pattern '{CURRENCY}'"),
                    value.clone(),
                )
                .with_ctx(json!({ "pattern": CURRENCY })),
            );
            None
        }
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

fn interval(v: &mut Validator, obj: &Value, loc: &[Value]) -> Option<RecurringInterval> {
    let loc = at(loc, "recurring_interval");
    match obj.get("recurring_interval") {
        None => {
            v.push(missing(loc, obj));
            None
        }
        Some(Value::String(s)) if s == "month" => Some(RecurringInterval::Month),
        Some(Value::String(s)) if s == "year" => Some(RecurringInterval::Year),
        Some(value) => {
            v.push(
                FieldError::new(
                    "enum",
                    loc,
                    "Input should be 'month' or 'year'",
                    value.clone(),
                )
                .with_ctx(json!({"expected": "'month' or 'year'"})),
            );
            None
        }
    }
}

/// Parses one item of `prices` at `loc` (`["body", "prices", i]`). Errors go to `v`.
/// With `allow_existing`, an object with an `id` is an existing price to keep.
pub fn parse_price(
    v: &mut Validator,
    loc: &[Value],
    raw: &Value,
    allow_existing: bool,
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
    let recurring = match raw.get("type") {
        None => {
            v.push(missing(at(loc, "type"), raw));
            None
        }
        Some(Value::String(t)) if t == "recurring" => Some(true),
        Some(Value::String(t)) if t == "one_time" => Some(false),
        Some(t) => {
            v.push(literal_error(
                at(loc, "type"),
                &["recurring", "one_time"],
                t,
            ));
            None
        }
    };
    let amount_type = match raw.get("amount_type") {
        None => {
            v.push(missing(at(loc, "amount_type"), raw));
            None
        }
        Some(a) => {
            let allowed: &[&str] = if recurring == Some(true) {
                // Recurring prices can't be pay-what-you-want.
                &["fixed", "free"]
            } else {
                &["fixed", "custom", "free"]
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
    let kind = match (recurring, amount_type) {
        (true, "fixed") => {
            let amount = integer(v, raw, loc, "price_amount", true);
            let currency = currency(v, raw, loc);
            let interval = interval(v, raw, loc);
            PriceKind::RecurringFixed {
                interval: interval?,
                currency: currency?,
                amount: amount?,
            }
        }
        (true, _) => PriceKind::RecurringFree {
            interval: interval(v, raw, loc)?,
        },
        (false, "fixed") => {
            let amount = integer(v, raw, loc, "price_amount", true);
            let currency = currency(v, raw, loc);
            PriceKind::OneTimeFixed {
                currency: currency?,
                amount: amount?,
            }
        }
        (false, "custom") => {
            // An invalid bound is reported in `v` (failing the request) and reads as unset.
            let currency = currency(v, raw, loc);
            let minimum_amount = integer(v, raw, loc, "minimum_amount", false);
            let maximum_amount = integer(v, raw, loc, "maximum_amount", false);
            let preset_amount = integer(v, raw, loc, "preset_amount", false);
            PriceKind::OneTimeCustom {
                currency: currency?,
                minimum_amount,
                maximum_amount,
                preset_amount,
            }
        }
        (false, _) => PriceKind::OneTimeFree,
    };
    Some(PriceInput::New(kind))
}

/// The rules on a product's set of (non-archived) prices: 1–2 recurring fixed prices
/// with distinct intervals, or exactly one recurring free price, or exactly one one-time
/// price. `input` is the `prices` list as sent, echoed in the errors.
pub fn check_price_set(v: &mut Validator, kinds: &[&PriceKind], input: &Value) {
    let loc = crate::loc!["body", "prices"];
    let too_short = |min: usize| {
        FieldError::new(
            "too_short",
            loc.clone(),
            format!(
                "List should have at least {min} item after validation, not {}",
                kinds.len()
            ),
            input.clone(),
        )
        .with_ctx(json!({"field_type": "List", "min_length": min, "actual_length": kinds.len()}))
    };
    let too_long = |max: usize| {
        let unit = if max == 1 { "item" } else { "items" };
        FieldError::new(
            "too_long",
            loc.clone(),
            format!(
                "List should have at most {max} {unit} after validation, not {}",
                kinds.len()
            ),
            input.clone(),
        )
        .with_ctx(json!({"field_type": "List", "max_length": max, "actual_length": kinds.len()}))
    };
    if kinds.is_empty() {
        v.push(too_short(1));
        return;
    }
    let recurring = kinds.iter().filter(|k| k.is_recurring()).count();
    if recurring != 0 && recurring != kinds.len() {
        v.push(FieldError::new(
            "value_error",
            loc,
            "Value error, Recurring and one-time prices can't be mixed.",
            input.clone(),
        ));
        return;
    }
    if recurring == 0 {
        if kinds.len() > 1 {
            v.push(too_long(1));
        }
        return;
    }
    let free = kinds
        .iter()
        .any(|k| matches!(k, PriceKind::RecurringFree { .. }));
    if free {
        if kinds.len() > 1 {
            v.push(too_long(1));
        }
        return;
    }
    if kinds.len() > 2 {
        v.push(too_long(2));
        return;
    }
    let mut intervals: Vec<RecurringInterval> = kinds.iter().filter_map(|k| k.interval()).collect();
    intervals.sort_by_key(|i| i.as_str());
    intervals.dedup();
    if intervals.len() != kinds.len() {
        v.push(FieldError::new(
            "value_error",
            loc,
            "Value error, Only one price per interval is allowed.",
            input.clone(),
        ));
    }
}

/// One price as Polar's `ProductPrice` union (`ProductPrice{Recurring,OneTime}{Fixed,Free,Custom}`).
pub fn price_json(product_id: ProductId, p: &Price) -> Value {
    let mut m = Map::new();
    m.insert("created_at".into(), json!(p.created_at));
    m.insert("modified_at".into(), json!(p.modified_at));
    m.insert("id".into(), json!(p.id));
    m.insert("amount_type".into(), json!(p.kind.amount_type().as_str()));
    m.insert("is_archived".into(), json!(p.is_archived));
    m.insert("product_id".into(), json!(product_id));
    let kind = if p.kind.is_recurring() {
        "recurring"
    } else {
        "one_time"
    };
    m.insert("type".into(), json!(kind));
    if let Some(interval) = p.kind.interval() {
        m.insert("recurring_interval".into(), json!(interval.as_str()));
    }
    match &p.kind {
        PriceKind::RecurringFixed {
            currency, amount, ..
        }
        | PriceKind::OneTimeFixed { currency, amount } => {
            m.insert("price_currency".into(), json!(currency));
            m.insert("price_amount".into(), json!(amount));
        }
        PriceKind::OneTimeCustom {
            currency,
            minimum_amount,
            maximum_amount,
            preset_amount,
        } => {
            m.insert("price_currency".into(), json!(currency));
            m.insert("minimum_amount".into(), json!(minimum_amount));
            m.insert("maximum_amount".into(), json!(maximum_amount));
            m.insert("preset_amount".into(), json!(preset_amount));
        }
        PriceKind::RecurringFree { .. } | PriceKind::OneTimeFree => {}
    }
    Value::Object(m)
}

/// `ProductBase` fields, shared by every rendering.
fn product_base(p: &Product) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("created_at".into(), json!(p.created_at));
    m.insert("modified_at".into(), json!(p.modified_at));
    m.insert("id".into(), json!(p.id));
    m.insert("name".into(), json!(p.name));
    m.insert("description".into(), json!(p.description));
    m.insert("is_recurring".into(), json!(p.is_recurring));
    m.insert("is_archived".into(), json!(p.is_archived));
    m.insert("organization_id".into(), json!(p.organization_id));
    m
}

fn prices_json(p: &Product) -> Value {
    Value::Array(
        p.active_prices()
            .map(|price| price_json(p.id, price))
            .collect(),
    )
}

/// The product's benefits in its order, skipping deleted and unknown ones.
fn ordered_benefits<'a>(p: &Product, benefits: &'a [Benefit]) -> Vec<&'a Benefit> {
    p.benefit_ids
        .iter()
        .filter_map(|id| benefits.iter().find(|b| b.id == *id))
        .filter(|b| b.deleted_at.is_none())
        .collect()
}

/// `OrderProduct` (and `DiscountProduct`): the product without prices, benefits or medias.
pub fn order_product_json(p: &Product) -> Value {
    Value::Object(product_base(p))
}

/// `CheckoutProduct`: prices, benefits as `BenefitBase`, medias; no metadata.
/// `benefits` holds (at least) the product's benefit records, in any order.
pub fn checkout_product_json(p: &Product, benefits: &[Benefit]) -> Value {
    let mut m = product_base(p);
    m.insert("prices".into(), prices_json(p));
    let benefits: Vec<Value> = ordered_benefits(p, benefits)
        .into_iter()
        .map(|b| {
            json!({
                "created_at": b.created_at,
                "modified_at": b.modified_at,
                "id": b.id,
                "type": b.kind().as_str(),
                "description": b.description,
                "selectable": b.selectable,
                "deletable": b.deletable,
                "organization_id": b.organization_id,
            })
        })
        .collect();
    m.insert("benefits".into(), Value::Array(benefits));
    m.insert("medias".into(), json!([]));
    Value::Object(m)
}

/// The full `Product` schema. `benefits` and `custom_fields` hold (at least) the records
/// the product refers to, in any order; deleted ones are left out.
pub fn product_json(p: &Product, benefits: &[Benefit], custom_fields: &[CustomField]) -> Value {
    let mut m = product_base(p);
    m.insert("metadata".into(), p.metadata.to_json());
    m.insert("prices".into(), prices_json(p));
    let benefits: Vec<BenefitView> = ordered_benefits(p, benefits)
        .into_iter()
        .map(BenefitView::from)
        .collect();
    m.insert("benefits".into(), json!(benefits));
    m.insert("medias".into(), json!([]));
    m.insert(
        "attached_custom_fields".into(),
        attached_custom_fields_json(p, custom_fields),
    );
    Value::Object(m)
}

/// `[AttachedCustomField]`: `{custom_field_id, custom_field, order, required}` in order.
pub fn attached_custom_fields_json(p: &Product, custom_fields: &[CustomField]) -> Value {
    let mut attached: Vec<_> = p.attached_custom_fields.iter().collect();
    attached.sort_by_key(|a| a.order);
    Value::Array(
        attached
            .into_iter()
            .filter_map(|a| {
                let field = custom_fields
                    .iter()
                    .find(|f| f.id == a.custom_field_id && f.deleted_at.is_none())?;
                Some(attached_custom_field_json(field, a.order, a.required))
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiError;

    fn parse(raw: Value, existing: bool) -> Result<Option<PriceInput>, Vec<FieldError>> {
        let mut v = Validator::new();
        let loc = crate::loc!["body", "prices", 0];
        let out = parse_price(&mut v, &loc, &raw, existing);
        match v.finish() {
            Ok(()) => Ok(out),
            Err(ApiError::Validation(items)) => Err(items),
            Err(e) => panic!("{e:?}"),
        }
    }

    #[test]
    fn parses_every_price_shape() {
        assert_eq!(
            parse(json!({"type": "recurring", "amount_type": "fixed", "price_amount": 1000, "recurring_interval": "month"}), false).unwrap(),
            Some(PriceInput::New(PriceKind::RecurringFixed { interval: RecurringInterval::Month, currency: "usd".into(), amount: 1000 }))
        );
        assert_eq!(
            parse(
                json!({"type": "one_time", "amount_type": "custom", "minimum_amount": 100}),
                false
            )
            .unwrap(),
            Some(PriceInput::New(PriceKind::OneTimeCustom {
                currency: "usd".into(),
                minimum_amount: Some(100),
                maximum_amount: None,
                preset_amount: None
            }))
        );
        assert_eq!(
            parse(json!({"type": "one_time", "amount_type": "free"}), false).unwrap(),
            Some(PriceInput::New(PriceKind::OneTimeFree))
        );
        let id = uuid::Uuid::new_v4();
        assert_eq!(
            parse(json!({"id": id.to_string(), "type": "one_time"}), true).unwrap(),
            Some(PriceInput::Existing(PriceId(id)))
        );
    }

    #[test]
    fn reports_each_bad_field() {
        let e = parse(json!({"type": "recurring", "amount_type": "custom"}), false).unwrap_err();
        assert_eq!(e[0].kind, "literal_error");
        assert_eq!(e[0].loc, crate::loc!["body", "prices", 0, "amount_type"]);
        let e = parse(json!({"type": "one_time", "amount_type": "fixed", "price_amount": 49, "price_currency": "eur"}), false).unwrap_err();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].kind, "greater_than_equal");
        assert_eq!(e[1].kind, "string_pattern_mismatch");
        let e = parse(json!({"type": "one_time"}), false).unwrap_err();
        assert_eq!(e[0].kind, "missing");
        assert_eq!(e[0].loc, crate::loc!["body", "prices", 0, "amount_type"]);
    }

    #[test]
    fn price_sets() {
        let month = PriceKind::RecurringFixed {
            interval: RecurringInterval::Month,
            currency: "usd".into(),
            amount: 100,
        };
        let year = PriceKind::RecurringFixed {
            interval: RecurringInterval::Year,
            currency: "usd".into(),
            amount: 1000,
        };
        let check = |kinds: &[&PriceKind]| {
            let mut v = Validator::new();
            check_price_set(&mut v, kinds, &Value::Null);
            v.finish().err()
        };
        assert!(check(&[&month, &year]).is_none());
        assert!(check(&[&month, &month]).is_some());
        assert!(check(&[&month, &year, &month]).is_some());
        assert!(check(&[&PriceKind::OneTimeFree]).is_none());
        assert!(check(&[&PriceKind::OneTimeFree, &PriceKind::OneTimeFree]).is_some());
        assert!(check(&[&month, &PriceKind::OneTimeFree]).is_some());
        assert!(check(&[
            &month,
            &PriceKind::RecurringFree {
                interval: RecurringInterval::Year
            }
        ])
        .is_some());
        assert!(check(&[]).is_some());
    }
}
