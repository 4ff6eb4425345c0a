//! The commands of the product bodies: `POST /v1/products/` as a [`NewProduct`] and
//! `PATCH /v1/products/{id}` as a [`ProductChange`], with their
//! 422s (locations, messages and order as Polar's), and the readers of the fields a
//! product body shares with an update (recurrence, trial, prices).

use serde_json::Value;

use super::{ProductCadenceInput, ProductCreate, ProductUpdate, NAME_MIN_CHARS};
use crate::api::metadata::body_metadata;
use crate::api::price::{check_new_prices, parse_price, Cadence, PriceInput};
use crate::api::Maybe;
use crate::domain::ids::CustomFieldId;
use crate::domain::product::{
    AsSent, AttachField, NewPrice, NewProduct, PriceChange, Product, ProductChange,
    RecurringInterval, Trial, MAX_INTERVAL_COUNT, MAX_TRIAL_COUNT,
};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;

/// What a body's Polar 2026 recurrence fields say: the cadence (`recurring_interval`), its
/// count, and the trial. Each is `None` when the body names none; for the trial,
/// `Some(None)` is an explicit `null` (no trial).
#[derive(Debug, Default)]
pub struct BodyCadence {
    pub cadence: Option<Cadence>,
    pub count: Option<u32>,
    pub trial: Option<Option<Trial>>,
}

/// An interval name (`day`, `week`, `month`, `year`) at `field`, else a 422 in `v`.
fn interval_field(v: &mut Validator, field: &str, value: &Value) -> Option<RecurringInterval> {
    if let Some(i) = value.as_str().and_then(RecurringInterval::parse) {
        return Some(i);
    }
    v.push(
        FieldError::new(
            "enum",
            loc!["body", field],
            "Input should be 'day', 'week', 'month' or 'year'",
            value.clone(),
        )
        .with_ctx(serde_json::json!({"expected": "'day', 'week', 'month' or 'year'"})),
    );
    None
}

/// A whole number in `1..=max` at `field`, else a 422 in `v`.
fn count_field(v: &mut Validator, field: &str, value: &Value, max: u32) -> Option<u32> {
    let Some(n) = value.as_i64() else {
        v.push(FieldError::new(
            "int_type",
            loc!["body", field],
            "Input should be a valid integer",
            value.clone(),
        ));
        return None;
    };
    if !v.int_range(loc!["body", field], n, Some(1), Some(i64::from(max))) {
        return None;
    }
    u32::try_from(n).ok()
}

/// Parses the recurrence fields of a body; the values Tollgate cannot sell (draft or
/// private products) and broken ones are 422s in `v`.
pub fn body_cadence(v: &mut Validator, c: &ProductCadenceInput) -> BodyCadence {
    let mut out = BodyCadence::default();
    if let Some(value) = &c.recurring_interval {
        out.cadence = interval_field(v, "recurring_interval", value).map(Cadence::Every);
    }
    if let Some(count) = c.recurring_interval_count.as_ref().filter(|n| !n.is_null()) {
        out.count = count_field(v, "recurring_interval_count", count, MAX_INTERVAL_COUNT);
    }
    let given = |x: &Maybe<Value>| !matches!(x, Maybe::Absent);
    let set = |x: &Maybe<Value>| matches!(x, Maybe::Value(x) if !x.is_null());
    match (set(&c.trial_interval), set(&c.trial_interval_count)) {
        (true, true) => {
            let interval = c
                .trial_interval
                .as_value()
                .and_then(|x| interval_field(v, "trial_interval", x));
            let count = c
                .trial_interval_count
                .as_value()
                .and_then(|x| count_field(v, "trial_interval_count", x, MAX_TRIAL_COUNT));
            if let (Some(interval), Some(count)) = (interval, count) {
                out.trial = Some(Some(Trial { interval, count }));
            }
        }
        (false, false) if given(&c.trial_interval) || given(&c.trial_interval_count) => {
            out.trial = Some(None);
        }
        (false, false) => {}
        (interval, _) => {
            let missing = if interval {
                "trial_interval_count"
            } else {
                "trial_interval"
            };
            v.push(FieldError::new(
                "missing",
                loc!["body", missing],
                "Both trial_interval and trial_interval_count must be set together.",
                Value::Null,
            ));
        }
    }
    if let Some(value) = c.visibility.as_ref().filter(|x| !x.is_null()) {
        match value.as_str() {
            Some("public") => {}
            Some("draft" | "private") => v.unsupported(
                loc!["body", "visibility"],
                value.clone(),
                "A draft or private product",
            ),
            _ => v.push(
                FieldError::new(
                    "enum",
                    loc!["body", "visibility"],
                    "Input should be 'draft', 'private' or 'public'",
                    value.clone(),
                )
                .with_ctx(serde_json::json!({"expected": "'draft', 'private' or 'public'"})),
            ),
        }
    }
    out
}

/// A trial on a product that does not recur: Polar's 422 on both trial fields.
pub fn refuse_one_time_trial(v: &mut Validator, c: &ProductCadenceInput) {
    for (field, value) in [
        ("trial_interval", &c.trial_interval),
        ("trial_interval_count", &c.trial_interval_count),
    ] {
        v.push(FieldError::new(
            "value_error",
            loc!["body", field],
            "Trial configuration is only supported on recurring products.",
            value.as_value().cloned().unwrap_or(Value::Null),
        ));
    }
}

/// Parses every item of `prices`; `None` if any is invalid (the errors are in `v`). A
/// price without `type` recurs as `cadence` says.
pub fn parse_prices(
    v: &mut Validator,
    prices: &[Value],
    allow_existing: bool,
    cadence: Option<Cadence>,
) -> Option<Vec<PriceInput>> {
    let mut out = Vec::with_capacity(prices.len());
    let mut ok = true;
    for (i, raw) in prices.iter().enumerate() {
        let loc = loc!["body", "prices", i];
        match parse_price(v, &loc, raw, allow_existing, cadence) {
            Some(p) => out.push(p),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

impl ProductCreate {
    /// The command of this body (`raw`: the body as sent, which the price set's errors
    /// quote), or its 422.
    pub fn into_command(self, raw: &Value) -> Result<NewProduct, ApiError> {
        let input = self;
        let mut v = Validator::new();
        if v.min_chars(loc!["body", "name"], &input.name, NAME_MIN_CHARS) {
            v.header_safe(loc!["body", "name"], &input.name);
        }
        let said = body_cadence(&mut v, &input.cadence);
        let cadence = said.cadence.unwrap_or(Cadence::OneTime);
        let kinds: Option<Vec<NewPrice>> =
            parse_prices(&mut v, &input.prices, false, Some(cadence)).map(|ps| {
                ps.into_iter()
                    .filter_map(|p| match p {
                        PriceInput::New(k) => Some(k),
                        PriceInput::Existing(_) => None,
                    })
                    .collect()
            });
        if let Some(kinds) = &kinds {
            check_new_prices(&mut v, kinds, raw.get("prices").unwrap_or(&Value::Null));
        }
        let metadata = body_metadata(&mut v, &input.metadata, false).unwrap_or_default();
        let recurring = kinds
            .as_ref()
            .is_some_and(|k| !k.is_empty() && k.iter().all(|p| p.kind.is_recurring()));
        let trial = said.trial.flatten();
        if trial.is_some() && kinds.is_some() && !recurring {
            refuse_one_time_trial(&mut v, &input.cadence);
        }
        v.finish()?;
        Ok(NewProduct {
            organization_id: input.organization_id,
            name: input.name,
            description: input.description.filter(|d| !d.is_empty()),
            prices: kinds.unwrap_or_default(),
            prices_sent: AsSent::new(raw.get("prices").cloned().unwrap_or(Value::Null)),
            metadata,
            recurring_interval_count: if recurring {
                said.count.unwrap_or(1)
            } else {
                1
            },
            trial: trial.filter(|_| recurring),
            medias: input.medias.unwrap_or_default(),
            attached_custom_fields: input
                .attached_custom_fields
                .unwrap_or_default()
                .iter()
                .map(|a| AttachField {
                    custom_field_id: CustomFieldId(a.custom_field_id),
                    required: a.required,
                })
                .collect(),
        })
    }
}

impl ProductUpdate {
    /// The command of this body (`raw`: the body as sent, which the price set's errors
    /// quote), or its 422. `current`: the product changed, if the subject may see it: new
    /// prices without `type` recur as the body says, else as the product does now (a
    /// product sold both monthly and yearly has no single cadence: `type` is needed).
    pub fn into_command(
        self,
        raw: &Value,
        current: Option<&Product>,
    ) -> Result<ProductChange, ApiError> {
        let input = self;
        let mut v = Validator::new();
        if let Some(name) = &input.name {
            if v.min_chars(loc!["body", "name"], name, NAME_MIN_CHARS) {
                v.header_safe(loc!["body", "name"], name);
            }
        }
        let body = body_cadence(&mut v, &input.cadence);
        let metadata = body_metadata(&mut v, &input.metadata, true);
        let cadence = body.cadence.or_else(|| match current {
            Some(p) => match p.recurring_interval() {
                Some(i) => Some(Cadence::Every(i)),
                None if !p.is_recurring => Some(Cadence::OneTime),
                None => None,
            },
            None => None,
        });
        let prices = match &input.prices {
            Some(list) => parse_prices(&mut v, list, true, cadence),
            None => None,
        };
        v.finish()?;
        Ok(ProductChange {
            name: input.name,
            description: input.description.filter(|d| !d.is_empty()),
            is_archived: input.is_archived,
            metadata,
            prices: prices.map(|ps| {
                ps.into_iter()
                    .map(|p| match p {
                        PriceInput::Existing(id) => PriceChange::Keep(id),
                        PriceInput::New(price) => PriceChange::Add(price),
                    })
                    .collect()
            }),
            prices_sent: AsSent::new(raw.get("prices").cloned().unwrap_or(Value::Null)),
            recurring_interval_count: body.count,
            trial: body.trial,
            medias: input.medias,
            attached_custom_fields: input.attached_custom_fields.map(|list| {
                list.iter()
                    .map(|a| AttachField {
                        custom_field_id: CustomFieldId(a.custom_field_id),
                        required: a.required,
                    })
                    .collect()
            }),
        })
    }
}
