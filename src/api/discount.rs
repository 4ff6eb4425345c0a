//! Discount request bodies and the discount shapes responses embed: the full `Discount`
//! (with `products`), the `…Base` form inside orders and subscriptions, and the checkout
//! summary.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::Maybe;
use crate::domain::discount::{Discount, DiscountDuration, DiscountKind};
use crate::domain::product::Product;
use crate::error::FieldError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiscountTypeInput {
    Fixed,
    Percentage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DurationInput {
    Once,
    Forever,
    Repeating,
}

/// `DiscountCreate`: one of four shapes chosen by `type` and `duration`; the fields of the
/// other shapes are ignored.
#[derive(Debug, Deserialize)]
pub struct DiscountCreate {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: DiscountTypeInput,
    pub duration: DurationInput,
    #[serde(default)]
    pub duration_in_months: Option<i64>,
    #[serde(default)]
    pub amount: Option<i64>,
    #[serde(default)]
    pub currency: Option<String>,
    #[serde(default)]
    pub basis_points: Option<i64>,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub starts_at: Option<Value>,
    #[serde(default)]
    pub ends_at: Option<Value>,
    #[serde(default)]
    pub max_redemptions: Option<i64>,
    #[serde(default)]
    pub products: Option<Vec<uuid::Uuid>>,
    #[serde(default)]
    pub organization_id: Option<uuid::Uuid>,
    #[serde(default)]
    pub metadata: Option<Value>,
}

/// `DiscountUpdate`: every field optional; `null` clears `code`, `starts_at`, `ends_at` and
/// `max_redemptions`, and leaves the other fields as they are.
#[derive(Debug, Default, Deserialize)]
pub struct DiscountUpdate {
    #[serde(default)]
    pub name: Maybe<String>,
    #[serde(default)]
    pub code: Maybe<String>,
    #[serde(default)]
    pub starts_at: Maybe<Value>,
    #[serde(default)]
    pub ends_at: Maybe<Value>,
    #[serde(default)]
    pub max_redemptions: Maybe<i64>,
    #[serde(default)]
    pub duration: Maybe<DurationInput>,
    #[serde(default)]
    pub duration_in_months: Maybe<i64>,
    #[serde(default, rename = "type")]
    pub kind: Maybe<DiscountTypeInput>,
    #[serde(default)]
    pub amount: Maybe<i64>,
    #[serde(default)]
    pub currency: Maybe<String>,
    #[serde(default)]
    pub basis_points: Maybe<i64>,
    #[serde(default)]
    pub products: Maybe<Vec<uuid::Uuid>>,
    #[serde(default)]
    pub metadata: Maybe<Value>,
}

pub const CODE_MIN: usize = 3;
pub const CODE_MAX: usize = 256;

/// Polar's code rule: blank means none; otherwise letters and digits only, 3–256 of them.
pub fn parse_code(loc: Vec<Value>, raw: &str) -> Result<Option<String>, Vec<FieldError>> {
    let code = raw.trim();
    if code.is_empty() {
        return Ok(None);
    }
    if !code.chars().all(char::is_alphanumeric) {
        return Err(vec![FieldError::new(
            "value_error",
            loc,
            "Value error, Code must contain only alphanumeric characters.",
            Value::from(raw),
        )]);
    }
    let n = code.chars().count();
    if !(CODE_MIN..=CODE_MAX).contains(&n) {
        return Err(vec![FieldError::new(
            "value_error",
            loc,
            "Value error, Code must be between 3 and 256 characters long.",
            Value::from(raw),
        )]);
    }
    Ok(Some(code.to_string()))
}

/// A timestamp as pydantic reads one: RFC 3339, a naive date-time (taken as UTC), a date
/// (midnight UTC) or Unix seconds.
pub fn parse_datetime(loc: Vec<Value>, value: &Value) -> Result<DateTime<Utc>, Vec<FieldError>> {
    let (parsed, kind, msg) = match value {
        Value::String(s) => (
            parse_datetime_str(s.trim()),
            "datetime_from_date_parsing",
            "Input should be a valid datetime or date, invalid character in year",
        ),
        Value::Number(n) => (
            n.as_i64().and_then(|secs| Utc.timestamp_opt(secs, 0).single()),
            "datetime_parsing",
            "Input should be a valid datetime, dates after 9999 are not supported as unix timestamps",
        ),
        _ => (None, "datetime_type", "Input should be a valid datetime"),
    };
    parsed.ok_or_else(|| vec![FieldError::new(kind, loc, msg, value.clone())])
}

fn parse_datetime_str(s: &str) -> Option<DateTime<Utc>> {
    let rfc3339 = |s: &str| {
        DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|d| d.with_timezone(&Utc))
    };
    rfc3339(s)
        .or_else(|| rfc3339(&s.replacen(' ', "T", 1)))
        .or_else(|| {
            [
                "%Y-%m-%dT%H:%M:%S%.f",
                "%Y-%m-%d %H:%M:%S%.f",
                "%Y-%m-%dT%H:%M",
            ]
            .iter()
            .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
            .map(|n| Utc.from_utc_datetime(&n))
        })
        .or_else(|| {
            NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|n| Utc.from_utc_datetime(&n))
        })
}

/// `DiscountProduct` (Polar's `ProductBase`).
pub fn discount_product_json(p: &Product) -> Value {
    json!({
        "id": p.id.0,
        "created_at": p.created_at,
        "modified_at": p.modified_at,
        "name": p.name,
        "description": p.description,
        "is_recurring": p.is_recurring,
        "is_archived": p.is_archived,
        "organization_id": p.organization_id.0,
    })
}

/// The type- and duration-dependent fields: `amount` + `currency` or `basis_points`, and
/// `duration_in_months` for repeating discounts.
fn variant_fields(out: &mut Map<String, Value>, d: &Discount) {
    kind_fields(out, &d.kind, d.duration);
}

/// The fields that depend on a discount's type and duration: `type`, `duration`, then
/// `amount`+`currency` or `basis_points`, then `duration_in_months` when repeating.
pub fn kind_fields(out: &mut Map<String, Value>, kind: &DiscountKind, duration: DiscountDuration) {
    out.insert("type".into(), Value::from(kind.discount_type().as_str()));
    out.insert("duration".into(), Value::from(duration.as_str()));
    match kind {
        DiscountKind::Fixed { amount, currency } => {
            out.insert("amount".into(), Value::from(*amount));
            out.insert("currency".into(), Value::from(currency.as_str()));
        }
        DiscountKind::Percentage { basis_points } => {
            out.insert("basis_points".into(), Value::from(*basis_points));
        }
    }
    if let Some(months) = duration.months() {
        out.insert("duration_in_months".into(), Value::from(months));
    }
}

/// The `Discount…Base` shapes (orders and subscriptions embed these): every field but
/// `products`.
pub fn discount_base_json(d: &Discount) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), json!(d.id.0));
    out.insert("created_at".into(), json!(d.created_at));
    out.insert("modified_at".into(), json!(d.modified_at));
    out.insert("metadata".into(), d.metadata.to_json());
    out.insert("name".into(), Value::from(d.name.as_str()));
    out.insert("code".into(), json!(d.code));
    out.insert("starts_at".into(), json!(d.starts_at));
    out.insert("ends_at".into(), json!(d.ends_at));
    out.insert("max_redemptions".into(), json!(d.max_redemptions));
    out.insert("redemptions_count".into(), Value::from(d.redemptions_count));
    out.insert("organization_id".into(), json!(d.organization_id.0));
    variant_fields(&mut out, d);
    Value::Object(out)
}

/// The full `Discount` schema: the base form plus the `products` it is restricted to.
pub fn discount_json(d: &Discount, products: &[Product]) -> Value {
    let mut out = discount_base_json(d);
    if let Value::Object(map) = &mut out {
        map.insert(
            "products".into(),
            Value::Array(products.iter().map(discount_product_json).collect()),
        );
    }
    out
}

/// The `CheckoutDiscount…` shapes: id, name, type, duration, code and the variant fields.
pub fn checkout_discount_json(d: &Discount) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), json!(d.id.0));
    out.insert("name".into(), Value::from(d.name.as_str()));
    out.insert("code".into(), json!(d.code));
    variant_fields(&mut out, d);
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::discount::DiscountDuration;
    use crate::domain::ids::{DiscountId, OrganizationId};
    use crate::domain::metadata::Metadata;
    use std::collections::BTreeSet;

    fn discount(kind: DiscountKind, duration: DiscountDuration) -> Discount {
        Discount {
            id: DiscountId::new(),
            organization_id: OrganizationId::new(),
            created_at: Utc::now(),
            modified_at: None,
            name: "Launch".into(),
            code: None,
            kind,
            duration,
            starts_at: None,
            ends_at: None,
            max_redemptions: None,
            redemptions_count: 0,
            product_ids: Vec::new(),
            metadata: Metadata::default(),
            deleted_at: None,
        }
    }

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    const BASE: &[&str] = &[
        "id",
        "created_at",
        "modified_at",
        "metadata",
        "name",
        "type",
        "duration",
        "code",
        "starts_at",
        "ends_at",
        "max_redemptions",
        "redemptions_count",
        "organization_id",
    ];

    #[test]
    fn shapes_have_exactly_the_schema_keys() {
        let fixed_once = discount(
            DiscountKind::Fixed {
                amount: 100,
                currency: "usd".into(),
            },
            DiscountDuration::Once,
        );
        let mut expected = set(BASE);
        expected.extend(set(&["amount", "currency"]));
        assert_eq!(keys(&discount_base_json(&fixed_once)), expected);
        expected.insert("products".into());
        assert_eq!(keys(&discount_json(&fixed_once, &[])), expected);

        let pct_repeat = discount(
            DiscountKind::Percentage { basis_points: 2500 },
            DiscountDuration::Repeating { months: 3 },
        );
        let mut expected = set(BASE);
        expected.extend(set(&["basis_points", "duration_in_months", "products"]));
        let full = discount_json(&pct_repeat, &[]);
        assert_eq!(keys(&full), expected);
        assert_eq!(full["duration"], "repeating");
        assert_eq!(full["duration_in_months"], 3);
        assert_eq!(full["type"], "percentage");

        assert_eq!(
            keys(&checkout_discount_json(&pct_repeat)),
            set(&[
                "id",
                "name",
                "type",
                "duration",
                "code",
                "basis_points",
                "duration_in_months"
            ])
        );
        assert_eq!(
            keys(&checkout_discount_json(&fixed_once)),
            set(&["id", "name", "type", "duration", "code", "amount", "currency"])
        );
    }

    #[test]
    fn codes() {
        let loc = || crate::loc!["body", "code"];
        assert_eq!(parse_code(loc(), "SUMMER24"), Ok(Some("SUMMER24".into())));
        assert_eq!(parse_code(loc(), "  "), Ok(None));
        assert_eq!(parse_code(loc(), " abc "), Ok(Some("abc".into())));
        assert!(parse_code(loc(), "ab").is_err());
        assert!(parse_code(loc(), "with space").is_err());
        assert!(parse_code(loc(), "dash-ed").is_err());
        assert!(parse_code(loc(), &"a".repeat(257)).is_err());
        assert!(parse_code(loc(), &"a".repeat(256)).is_ok());
    }

    #[test]
    fn datetimes() {
        let loc = || crate::loc!["body", "starts_at"];
        let t = parse_datetime(loc(), &json!("2025-01-02T03:04:05Z"));
        assert_eq!(t.map(|t| t.timestamp()), Ok(1_735_787_045));
        let t = parse_datetime(loc(), &json!("2025-01-02T04:04:05+01:00"));
        assert_eq!(t.map(|t| t.timestamp()), Ok(1_735_787_045));
        let t = parse_datetime(loc(), &json!("2025-01-02T03:04:05"));
        assert_eq!(t.map(|t| t.timestamp()), Ok(1_735_787_045));
        let t = parse_datetime(loc(), &json!("2025-01-02"));
        assert_eq!(t.map(|t| t.timestamp()), Ok(1_735_776_000));
        assert_eq!(
            parse_datetime(loc(), &json!(1_735_787_045)).map(|t| t.timestamp()),
            Ok(1_735_787_045)
        );
        assert!(parse_datetime(loc(), &json!("tomorrow")).is_err());
        assert!(parse_datetime(loc(), &json!(true)).is_err());
    }
}
