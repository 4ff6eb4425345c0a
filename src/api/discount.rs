//! Discount request bodies and the discount shapes responses embed: the full `Discount`
//! union (with `products`), the `DiscountBase` union inside orders and subscriptions, and
//! the `CheckoutDiscount` union of checkouts; each has one variant per `type` and
//! `duration` family.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::metadata::{metadata_map, MetadataMap};
use super::price::{tag, TagFixed};
use super::product::ProductBase;
use super::Maybe;
use crate::domain::currency::Currency;
use crate::domain::discount::{fixed_amounts_of, Discount, DiscountDuration, DiscountKind};
use crate::domain::ids::DiscountId;
use crate::domain::product::Product;
use crate::error::FieldError;
use tollgate_actors::checkout::AppliedDiscount;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = DiscountType)]
pub enum DiscountTypeInput {
    Fixed,
    Percentage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = DiscountDuration)]
pub enum DurationInput {
    Once,
    Forever,
    Repeating,
}

/// Creates a discount: `fixed` takes `amounts` (`{currency: amount}`) or the deprecated
/// `amount` (and `currency`, `usd` by default), `percentage` takes `basis_points`;
/// `repeating` takes `duration_in_months`. The fields of the other shapes are ignored.
#[derive(Debug, Deserialize, ToSchema)]
pub struct DiscountCreate {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: DiscountTypeInput,
    pub duration: DurationInput,
    #[serde(default)]
    #[schema(nullable = false)]
    pub duration_in_months: Option<i64>,
    #[serde(default)]
    #[schema(nullable = false)]
    pub amount: Option<i64>,
    #[serde(default)]
    #[schema(nullable = false)]
    pub currency: Option<String>,
    /// A fixed discount's amount in each currency it applies in (at least one).
    #[serde(default)]
    #[schema(value_type = Option<std::collections::HashMap<String, i64>>, nullable = false)]
    pub amounts: Option<AmountsInput>,
    #[serde(default)]
    #[schema(nullable = false)]
    pub basis_points: Option<i64>,
    #[serde(default)]
    pub code: Option<String>,
    // Parsed with [`parse_datetime`].
    #[serde(default)]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub starts_at: Option<Value>,
    // Parsed with [`parse_datetime`].
    #[serde(default)]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub ends_at: Option<Value>,
    #[serde(default)]
    pub max_redemptions: Option<i64>,
    /// Not supported: `null` only.
    #[serde(default)]
    pub max_redemptions_per_customer: Option<i64>,
    #[serde(default)]
    pub products: Option<Vec<Uuid>>,
    #[serde(default)]
    #[schema(nullable = false)]
    pub organization_id: Option<Uuid>,
    // Parsed with [`super::metadata::parse_metadata`].
    #[serde(default)]
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: Option<Value>,
}

/// `DiscountUpdate`: every field optional; `null` clears `code`, `starts_at`, `ends_at` and
/// `max_redemptions`, and leaves the other fields as they are.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct DiscountUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub name: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub code: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub starts_at: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub ends_at: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub max_redemptions: Maybe<i64>,
    /// Not supported: `null` only.
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub max_redemptions_per_customer: Maybe<i64>,
    #[serde(default)]
    #[schema(value_type = Option<DurationInput>)]
    pub duration: Maybe<DurationInput>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub duration_in_months: Maybe<i64>,
    #[serde(default, rename = "type")]
    #[schema(value_type = Option<DiscountTypeInput>)]
    pub kind: Maybe<DiscountTypeInput>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub amount: Maybe<i64>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub currency: Maybe<String>,
    /// A fixed discount's amounts, all of them (replacing the ones it had).
    #[serde(default)]
    #[schema(value_type = Option<std::collections::HashMap<String, i64>>)]
    pub amounts: Maybe<AmountsInput>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub basis_points: Maybe<i64>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<Uuid>>)]
    pub products: Maybe<Vec<Uuid>>,
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::Metadata>)]
    pub metadata: Maybe<Value>,
}

#[path = "discount_command.rs"]
mod command;
pub use command::{check_dates, quote_body, DATES_OUT_OF_ORDER};

#[path = "discount_amounts.rs"]
mod amounts;
pub use amounts::{fixed_output, AmountsInput, AMOUNT_MAX, BOTH_AMOUNTS, NO_AMOUNT};

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

tag!(TagPercentage = "percentage");
tag!(TagRepeating = "repeating");

/// The `duration` of the `once` and `forever` variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiscountOnceForever {
    Once,
    Forever,
}

/// The three forms of one variant (type and duration family): the full discount, the
/// `…Base` form without `products`, and the checkout summary. Each `build` takes the
/// variant's own fields after the record's. A fixed discount's `amounts` is Polar's 2026
/// `{currency: amount}` beside `amount` and `currency`.
macro_rules! discount_variant {
    ($full:ident, $base:ident, $checkout:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, Serialize, ToSchema)]
        pub struct $base {
            pub id: Uuid,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            #[schema(value_type = crate::api::free_form::Metadata)]
            pub metadata: MetadataMap,
            pub name: String,
            pub code: Option<String>,
            pub starts_at: Option<DateTime<Utc>>,
            pub ends_at: Option<DateTime<Utc>>,
            pub max_redemptions: Option<i64>,
            /// Polar's per-customer limit: Tollgate has none, `null`.
            pub max_redemptions_per_customer: Option<i64>,
            pub redemptions_count: i64,
            pub organization_id: Uuid,
            $(pub $field: $ty,)*
        }

        #[derive(Debug, Clone, Serialize, ToSchema)]
        pub struct $full {
            pub id: Uuid,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            #[schema(value_type = crate::api::free_form::Metadata)]
            pub metadata: MetadataMap,
            pub name: String,
            pub code: Option<String>,
            pub starts_at: Option<DateTime<Utc>>,
            pub ends_at: Option<DateTime<Utc>>,
            pub max_redemptions: Option<i64>,
            /// Polar's per-customer limit: Tollgate has none, `null`.
            pub max_redemptions_per_customer: Option<i64>,
            pub redemptions_count: i64,
            pub organization_id: Uuid,
            $(pub $field: $ty,)*
            pub products: Vec<ProductBase>,
        }

        #[derive(Debug, Clone, Serialize, ToSchema)]
        pub struct $checkout {
            pub id: Uuid,
            pub name: String,
            pub code: Option<String>,
            $(pub $field: $ty,)*
        }

        impl $base {
            fn build(d: &Discount, $($field: $ty),*) -> Self {
                Self {
                    id: d.id.0,
                    created_at: d.created_at,
                    modified_at: d.modified_at,
                    metadata: metadata_map(&d.metadata),
                    name: d.name.clone(),
                    code: d.code.clone(),
                    starts_at: d.starts_at,
                    ends_at: d.ends_at,
                    max_redemptions: d.max_redemptions,
                    max_redemptions_per_customer: None,
                    redemptions_count: d.redemptions_count,
                    organization_id: d.organization_id.0,
                    $($field,)*
                }
            }
        }

        impl $full {
            // One argument per field of the variant, as the variant lists them.
            #[allow(clippy::too_many_arguments)]
            fn build(d: &Discount, products: Vec<ProductBase>, $($field: $ty),*) -> Self {
                Self {
                    id: d.id.0,
                    created_at: d.created_at,
                    modified_at: d.modified_at,
                    metadata: metadata_map(&d.metadata),
                    name: d.name.clone(),
                    code: d.code.clone(),
                    starts_at: d.starts_at,
                    ends_at: d.ends_at,
                    max_redemptions: d.max_redemptions,
                    max_redemptions_per_customer: None,
                    redemptions_count: d.redemptions_count,
                    organization_id: d.organization_id.0,
                    $($field,)*
                    products,
                }
            }
        }

        impl $checkout {
            fn build(
                (id, name, code): (DiscountId, &str, Option<&str>),
                $($field: $ty),*
            ) -> Self {
                Self {
                    id: id.0,
                    name: name.to_string(),
                    code: code.map(str::to_string),
                    $($field,)*
                }
            }
        }
    };
}

discount_variant!(
    DiscountFixedOnceForeverDuration,
    DiscountFixedOnceForeverDurationBase,
    CheckoutDiscountFixedOnceForeverDuration {
        r#type: TagFixed,
        duration: DiscountOnceForever,
        amount: i64,
        currency: String,
        amounts: std::collections::BTreeMap<String, i64>,
    }
);
discount_variant!(
    DiscountFixedRepeatingDuration,
    DiscountFixedRepeatingDurationBase,
    CheckoutDiscountFixedRepeatingDuration {
        r#type: TagFixed,
        duration: TagRepeating,
        duration_in_months: i64,
        amount: i64,
        currency: String,
        amounts: std::collections::BTreeMap<String, i64>,
    }
);
discount_variant!(
    DiscountPercentageOnceForeverDuration,
    DiscountPercentageOnceForeverDurationBase,
    CheckoutDiscountPercentageOnceForeverDuration {
        r#type: TagPercentage,
        duration: DiscountOnceForever,
        basis_points: i64,
    }
);
discount_variant!(
    DiscountPercentageRepeatingDuration,
    DiscountPercentageRepeatingDurationBase,
    CheckoutDiscountPercentageRepeatingDuration {
        r#type: TagPercentage,
        duration: TagRepeating,
        duration_in_months: i64,
        basis_points: i64,
    }
);

/// Builds the variant of `$union` for a discount's kind and duration: `$form::build` gets
/// `$args`, then the variant's own fields; a fixed discount's from `$amounts` (all of them)
/// and `$default` (the organization's currency, which `amount` shows if it can).
macro_rules! by_variant {
    ($kind:expr, $duration:expr, $amounts:expr, $default:expr, $union:ident {
        $fo:ident, $fr:ident, $po:ident, $pr:ident $(,)?
    }, ($($args:expr),*)) => {{
        let once_forever = match $duration {
            DiscountDuration::Once => Ok(DiscountOnceForever::Once),
            DiscountDuration::Forever => Ok(DiscountOnceForever::Forever),
            DiscountDuration::Repeating { months } => Err(months),
        };
        match ($kind, once_forever) {
            (DiscountKind::Fixed { .. }, Ok(duration)) => {
                let (amount, currency, amounts) = fixed_output(&$amounts, $default);
                $union::FixedOnceForever($fo::build(
                    $($args,)*
                    TagFixed::Value,
                    duration,
                    amount,
                    currency,
                    amounts,
                ))
            }
            (DiscountKind::Fixed { .. }, Err(months)) => {
                let (amount, currency, amounts) = fixed_output(&$amounts, $default);
                $union::FixedRepeating($fr::build(
                    $($args,)*
                    TagFixed::Value,
                    TagRepeating::Value,
                    months,
                    amount,
                    currency,
                    amounts,
                ))
            }
            (DiscountKind::Percentage { basis_points }, Ok(duration)) => {
                $union::PercentageOnceForever($po::build(
                    $($args,)*
                    TagPercentage::Value,
                    duration,
                    *basis_points,
                ))
            }
            (DiscountKind::Percentage { basis_points }, Err(months)) => {
                $union::PercentageRepeating($pr::build(
                    $($args,)*
                    TagPercentage::Value,
                    TagRepeating::Value,
                    months,
                    *basis_points,
                ))
            }
        }
    }};
}

/// The `Discount` schema: a discount, its variant named by `type` and `duration`, with the
/// products it is restricted to.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
#[schema(as = Discount)]
pub enum DiscountView {
    FixedOnceForever(DiscountFixedOnceForeverDuration),
    FixedRepeating(DiscountFixedRepeatingDuration),
    PercentageOnceForever(DiscountPercentageOnceForeverDuration),
    PercentageRepeating(DiscountPercentageRepeatingDuration),
}

impl DiscountView {
    /// `products` are the products the discount is restricted to, in order; `default` the
    /// organization's default currency (a fixed discount's `amount` and `currency` are in
    /// it if it has an amount in it, else in its first currency).
    pub fn new(d: &Discount, products: &[Product], default: Option<Currency>) -> Self {
        let products: Vec<ProductBase> = products.iter().map(ProductBase::from).collect();
        by_variant!(
            &d.kind,
            d.duration,
            d.fixed_amounts(),
            default,
            DiscountView {
                DiscountFixedOnceForeverDuration,
                DiscountFixedRepeatingDuration,
                DiscountPercentageOnceForeverDuration,
                DiscountPercentageRepeatingDuration,
            },
            (d, products)
        )
    }
}

/// A discount without its products (in orders and subscriptions).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum DiscountBase {
    FixedOnceForever(DiscountFixedOnceForeverDurationBase),
    FixedRepeating(DiscountFixedRepeatingDurationBase),
    PercentageOnceForever(DiscountPercentageOnceForeverDurationBase),
    PercentageRepeating(DiscountPercentageRepeatingDurationBase),
}

/// Every amount; `amount` and `currency` in its first currency (the organization is not at
/// hand where orders and subscriptions embed it).
impl From<&Discount> for DiscountBase {
    fn from(d: &Discount) -> Self {
        by_variant!(
            &d.kind,
            d.duration,
            d.fixed_amounts(),
            None,
            DiscountBase {
                DiscountFixedOnceForeverDurationBase,
                DiscountFixedRepeatingDurationBase,
                DiscountPercentageOnceForeverDurationBase,
                DiscountPercentageRepeatingDurationBase,
            },
            (d)
        )
    }
}

/// The discount applied to a checkout: id, name, code and the variant's fields.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum CheckoutDiscount {
    FixedOnceForever(CheckoutDiscountFixedOnceForeverDuration),
    FixedRepeating(CheckoutDiscountFixedRepeatingDuration),
    PercentageOnceForever(CheckoutDiscountPercentageOnceForeverDuration),
    PercentageRepeating(CheckoutDiscountPercentageRepeatingDuration),
}

impl CheckoutDiscount {
    /// A fixed `kind` shows its one amount (what the checkout's currency takes off).
    pub fn new(
        id: DiscountId,
        name: &str,
        code: Option<&str>,
        kind: &DiscountKind,
        duration: DiscountDuration,
    ) -> Self {
        by_variant!(
            kind,
            duration,
            fixed_amounts_of(kind, &[]),
            None,
            CheckoutDiscount {
                CheckoutDiscountFixedOnceForeverDuration,
                CheckoutDiscountFixedRepeatingDuration,
                CheckoutDiscountPercentageOnceForeverDuration,
                CheckoutDiscountPercentageRepeatingDuration,
            },
            ((id, name, code))
        )
    }
}

impl From<&AppliedDiscount> for CheckoutDiscount {
    fn from(d: &AppliedDiscount) -> Self {
        CheckoutDiscount::new(d.id, &d.name, d.code.as_deref(), &d.kind, d.duration)
    }
}

impl From<&Discount> for CheckoutDiscount {
    fn from(d: &Discount) -> Self {
        CheckoutDiscount::new(d.id, &d.name, d.code.as_deref(), &d.kind, d.duration)
    }
}

#[cfg(test)]
pub(crate) fn sample_discounts() -> Vec<Discount> {
    use crate::domain::ids::OrganizationId;
    use crate::domain::metadata::{MetaValue, Metadata};

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let discount = |n: u128, kind, duration| Discount {
        id: DiscountId(Uuid::from_u128(0xd100 + n)),
        organization_id: OrganizationId(Uuid::from_u128(0x0a)),
        created_at: now,
        modified_at: Some(now),
        name: format!("Launch {n}"),
        code: n.is_multiple_of(2).then(|| format!("LAUNCH{n}")),
        kind,
        duration,
        starts_at: Some(now),
        ends_at: None,
        max_redemptions: Some(100),
        redemptions_count: 3,
        product_ids: Vec::new(),
        metadata: Metadata(
            [("campaign".to_string(), MetaValue::Str("spring".into()))]
                .into_iter()
                .collect(),
        ),
        deleted_at: None,
        other_amounts: vec![(Currency::EUR, 450)],
    };
    let fixed = || DiscountKind::Fixed {
        amount: 500,
        currency: "usd".into(),
    };
    let percentage = || DiscountKind::Percentage { basis_points: 2500 };
    vec![
        discount(1, fixed(), DiscountDuration::Once),
        discount(2, fixed(), DiscountDuration::Repeating { months: 3 }),
        discount(3, percentage(), DiscountDuration::Forever),
        discount(4, percentage(), DiscountDuration::Repeating { months: 12 }),
    ]
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    let products = super::product::sample_products();
    let mut out = Vec::new();
    for d in sample_discounts() {
        let view = DiscountView::new(&d, &products, None);
        out.push(("Discount", serde_json::to_value(view).unwrap_or_default()));
        out.push((
            "DiscountBase",
            serde_json::to_value(DiscountBase::from(&d)).unwrap_or_default(),
        ));
        out.push((
            "CheckoutDiscount",
            serde_json::to_value(CheckoutDiscount::from(&d)).unwrap_or_default(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::OrganizationId;
    use crate::domain::metadata::Metadata;
    use serde_json::json;
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
            other_amounts: Vec::new(),
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
        "max_redemptions_per_customer",
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
        let value = |v: Result<Value, serde_json::Error>| v.unwrap();
        let mut expected = set(BASE);
        expected.extend(set(&["amount", "currency", "amounts"]));
        assert_eq!(
            keys(&value(serde_json::to_value(DiscountBase::from(
                &fixed_once
            )))),
            expected
        );
        expected.insert("products".into());
        assert_eq!(
            keys(&value(serde_json::to_value(DiscountView::new(
                &fixed_once,
                &[],
                None
            )))),
            expected
        );

        let pct_repeat = discount(
            DiscountKind::Percentage { basis_points: 2500 },
            DiscountDuration::Repeating { months: 3 },
        );
        let mut expected = set(BASE);
        expected.extend(set(&["basis_points", "duration_in_months", "products"]));
        let full = value(serde_json::to_value(DiscountView::new(
            &pct_repeat,
            &[],
            None,
        )));
        assert_eq!(keys(&full), expected);
        assert_eq!(full["duration"], "repeating");
        assert_eq!(full["duration_in_months"], 3);
        assert_eq!(full["type"], "percentage");

        let checkout = |d: &Discount| value(serde_json::to_value(CheckoutDiscount::from(d)));
        assert_eq!(
            keys(&checkout(&pct_repeat)),
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
            keys(&checkout(&fixed_once)),
            set(&["id", "name", "type", "duration", "code", "amount", "currency", "amounts"])
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

    #[test]
    fn samples_cover_every_discount_variant() {
        for schema in ["Discount", "DiscountBase", "CheckoutDiscount"] {
            let variants: BTreeSet<String> = samples()
                .iter()
                .filter(|(name, _)| *name == schema)
                .map(|(_, v)| format!("{}/{}", v["type"], v["duration_in_months"].is_null()))
                .collect();
            assert_eq!(variants.len(), 4, "{schema}");
        }
    }
}
