//! The commands of the discount bodies: `POST /v1/discounts/` as a [`NewDiscount`], `PATCH
//! /v1/discounts/{id}` as a [`DiscountChange`], with their 422s (locations, messages and
//! order as Polar's). What needs the store (a code already held, a product of another
//! organization, the dates a change leaves) is the use case's.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::amounts::{check_amount, model_error};
use super::DurationInput;
use super::{parse_code, parse_datetime, DiscountCreate, DiscountTypeInput, DiscountUpdate};
use super::{BOTH_AMOUNTS, NO_AMOUNT};
use crate::api::metadata::parse_metadata;
use crate::api::Maybe;
use crate::domain::currency::Currency;
use crate::domain::discount::{
    split_amounts, DiscountChange, DiscountDuration, DiscountKind, DiscountType, DurationType,
    NewDiscount,
};
use crate::domain::ids::ProductId;
use crate::error::{ApiError, AppError, FieldError, Given};
use crate::loc;
use crate::validate::Validator;

fn ge(v: &mut Validator, field: &str, value: i64, min: i64) -> bool {
    v.int_range(loc!["body", field], value, Some(min), None)
}

/// Polar's `duration_in_months`: 1–999.
fn months(v: &mut Validator, value: i64) -> bool {
    v.int_range(
        loc!["body", "duration_in_months"],
        value,
        Some(1),
        Some(999),
    )
}

fn missing(field: &str) -> FieldError {
    FieldError::new(
        "missing",
        loc!["body", field],
        "Field required",
        Value::Null,
    )
}

/// A currency prices and discounts are sold in, else the 422 in `v`.
fn currency(v: &mut Validator, code: &str) -> Option<Currency> {
    match Currency::parse(code) {
        Ok(c) => Some(c),
        Err(_) => {
            v.push(crate::api::price::currency_mismatch(
                loc!["body", "currency"],
                code,
            ));
            None
        }
    }
}

fn datetime_field(v: &mut Validator, field: &str, value: Option<&Value>) -> Option<DateTime<Utc>> {
    match value {
        None | Some(Value::Null) => None,
        Some(value) => match parse_datetime(loc!["body", field], value) {
            Ok(t) => Some(t),
            Err(errors) => {
                errors.into_iter().for_each(|e| v.push(e));
                None
            }
        },
    }
}

/// The message of the rule on a discount's dates (a model-level rule: at `["body"]`).
pub const DATES_OUT_OF_ORDER: &str = "Value error, starts_at must be before ends_at";

/// The rule on a discount's dates: `starts_at` before `ends_at` when both are set. A
/// model-level rule (no field), quoting nothing: an adapter that has the body quotes it
/// ([`quote_body`]).
pub fn check_dates(
    starts_at: Option<DateTime<Utc>>,
    ends_at: Option<DateTime<Utc>>,
) -> Result<(), AppError> {
    match (starts_at, ends_at) {
        (Some(s), Some(e)) if s >= e => Err(AppError::invalid(
            Vec::new(),
            DATES_OUT_OF_ORDER,
            Given::none(),
        )),
        _ => Ok(()),
    }
}

/// A refusal whose model-level errors (no field: the dates rule) quote the whole body, as
/// pydantic does; the use case, which never sees the body, leaves their input empty.
pub fn quote_body(e: AppError, body: &Value) -> AppError {
    match e {
        AppError::Invalid(mut fields) => {
            for f in fields.iter_mut().filter(|f| f.path.is_empty()) {
                f.input = Given::of(body);
            }
            AppError::Invalid(fields)
        }
        other => other,
    }
}

fn products(ids: &[uuid::Uuid]) -> Vec<ProductId> {
    ids.iter().copied().map(ProductId).collect()
}

impl DiscountCreate {
    /// The command of this body, or its 422. `sent`: the body as sent, which the dates rule
    /// quotes (a caller without one, the dashboard, passes `None`: nothing is quoted).
    pub fn into_command(self, sent: Option<&Value>) -> Result<NewDiscount, ApiError> {
        let input = self;
        let mut v = Validator::new();
        v.min_chars(loc!["body", "name"], &input.name, 1);
        if let Some(n) = input.max_redemptions_per_customer {
            v.unsupported(
                loc!["body", "max_redemptions_per_customer"],
                n.into(),
                "A per-customer redemption limit",
            );
        }
        let body = || sent.unwrap_or(&Value::Null);
        let mut other_amounts = Vec::new();
        let kind = match input.kind {
            DiscountTypeInput::Fixed => {
                // Polar's model rule, told alone: `amounts`, or the deprecated `amount`.
                let amounts = match (input.amount, &input.amounts) {
                    (Some(_), Some(_)) => {
                        return Err(quote_body(model_error(BOTH_AMOUNTS), body()).into())
                    }
                    (None, None) => return Err(quote_body(model_error(NO_AMOUNT), body()).into()),
                    (Some(amount), None) => {
                        let code = input
                            .currency
                            .clone()
                            .unwrap_or_else(|| Currency::DEFAULT.into());
                        let currency = currency(&mut v, &code);
                        check_amount(&mut v, amount);
                        currency.map(|c| vec![(c, amount)])
                    }
                    (None, Some(amounts)) => amounts.parse(&mut v),
                };
                match amounts.as_deref().and_then(split_amounts) {
                    Some((kind, others)) => {
                        other_amounts = others;
                        Some(kind)
                    }
                    None => None,
                }
            }
            DiscountTypeInput::Percentage => match input.basis_points {
                Some(bp) => {
                    v.int_range(loc!["body", "basis_points"], bp, Some(1), Some(10_000));
                    Some(DiscountKind::Percentage { basis_points: bp })
                }
                None => {
                    v.push(missing("basis_points"));
                    None
                }
            },
        };
        let duration = match input.duration {
            DurationInput::Once => Some(DiscountDuration::Once),
            DurationInput::Forever => Some(DiscountDuration::Forever),
            DurationInput::Repeating => match input.duration_in_months {
                Some(n) => {
                    months(&mut v, n);
                    Some(DiscountDuration::Repeating { months: n })
                }
                None => {
                    v.push(missing("duration_in_months"));
                    None
                }
            },
        };
        let code = match input
            .code
            .as_deref()
            .map(|c| parse_code(loc!["body", "code"], c))
        {
            Some(Ok(code)) => code,
            Some(Err(errors)) => {
                errors.into_iter().for_each(|e| v.push(e));
                None
            }
            None => None,
        };
        let starts_at = datetime_field(&mut v, "starts_at", input.starts_at.as_ref());
        let ends_at = datetime_field(&mut v, "ends_at", input.ends_at.as_ref());
        if let Some(max) = input.max_redemptions {
            ge(&mut v, "max_redemptions", max, 1);
        }
        let metadata = match input.metadata.as_ref() {
            Some(m) => match parse_metadata("metadata", m) {
                Ok(m) => m,
                Err(errors) => {
                    errors.into_iter().for_each(|e| v.push(e));
                    Default::default()
                }
            },
            None => Default::default(),
        };
        v.finish()?;
        check_dates(starts_at, ends_at).map_err(|e| ApiError::from(quote_body(e, body())))?;
        let (Some(kind), Some(duration)) = (kind, duration) else {
            return Err(ApiError::internal("discount validated but incomplete"));
        };
        Ok(NewDiscount {
            organization_id: input.organization_id,
            name: input.name,
            code,
            kind,
            other_amounts,
            duration,
            starts_at,
            ends_at,
            max_redemptions: input.max_redemptions,
            products: products(input.products.as_deref().unwrap_or_default()),
            metadata,
        })
    }
}

/// A field of an update: absent is `None`, null `Some(None)`.
fn nullable<T: Clone>(m: &Maybe<T>) -> Option<Option<T>> {
    match m {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(x) => Some(Some(x.clone())),
    }
}

impl DiscountUpdate {
    /// The command of this body, or its 422 (told before the discount is looked up).
    /// `sent`: the body as sent, which a model-level rule quotes.
    pub fn into_command(self, sent: Option<&Value>) -> Result<DiscountChange, ApiError> {
        let input = self;
        if let (Maybe::Value(_), Maybe::Value(_)) = (&input.amount, &input.amounts) {
            let e = quote_body(model_error(BOTH_AMOUNTS), sent.unwrap_or(&Value::Null));
            return Err(e.into());
        }
        let mut v = Validator::new();
        if let Maybe::Value(n) = input.max_redemptions_per_customer {
            v.unsupported(
                loc!["body", "max_redemptions_per_customer"],
                n.into(),
                "A per-customer redemption limit",
            );
        }
        let name = match &input.name {
            Maybe::Value(n) => v.min_chars(loc!["body", "name"], n, 1).then(|| n.clone()),
            _ => None,
        };
        let code = match &input.code {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(c) => match parse_code(loc!["body", "code"], c) {
                Ok(c) => Some(c),
                Err(errors) => {
                    errors.into_iter().for_each(|e| v.push(e));
                    None
                }
            },
        };
        let mut datetime = |field: &str, value: &Maybe<Value>| match value {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(x) => Some(datetime_field(&mut v, field, Some(x))),
        };
        let starts_at = datetime("starts_at", &input.starts_at);
        let ends_at = datetime("ends_at", &input.ends_at);
        let max_redemptions = nullable(&input.max_redemptions);
        if let Some(Some(m)) = max_redemptions {
            ge(&mut v, "max_redemptions", m, 1);
        }
        if let Maybe::Value(m) = input.duration_in_months {
            months(&mut v, m);
        }
        if let Maybe::Value(a) = input.amount {
            check_amount(&mut v, a);
        }
        let amounts = match &input.amounts {
            Maybe::Value(a) => a.parse(&mut v),
            _ => None,
        };
        let currency = match &input.currency {
            Maybe::Value(c) => currency(&mut v, c),
            _ => None,
        };
        if let Maybe::Value(bp) = input.basis_points {
            v.int_range(loc!["body", "basis_points"], bp, Some(1), Some(10_000));
        }
        let metadata = match &input.metadata {
            Maybe::Value(m) => match parse_metadata("metadata", m) {
                Ok(m) => Some(m),
                Err(errors) => {
                    errors.into_iter().for_each(|e| v.push(e));
                    None
                }
            },
            _ => None,
        };
        v.finish()?;
        Ok(DiscountChange {
            name,
            code,
            starts_at,
            ends_at,
            max_redemptions,
            metadata,
            duration: input.duration.as_value().map(|d| match d {
                DurationInput::Once => DurationType::Once,
                DurationInput::Forever => DurationType::Forever,
                DurationInput::Repeating => DurationType::Repeating,
            }),
            duration_in_months: input.duration_in_months.as_value().copied(),
            kind: input.kind.as_value().map(|k| match k {
                DiscountTypeInput::Fixed => DiscountType::Fixed,
                DiscountTypeInput::Percentage => DiscountType::Percentage,
            }),
            amounts,
            amount: input.amount.as_value().copied(),
            currency,
            basis_points: input.basis_points.as_value().copied(),
            products: input.products.as_value().map(|ids| products(ids)),
        })
    }
}
