//! `custom_field_data` in request bodies: the answers to a product's custom fields, checked
//! the way Polar's generated pydantic model checks them (`custom_field/data.py`).
//!
//! - Keys are field slugs; keys that name no attached field are dropped.
//! - Every attached field gets a key in the result: an optional field left out is `null`
//!   (an optional checkbox `false`), as pydantic's `model_dump` writes the defaults.
//! - A required field must be present; a required checkbox must be `true`.
//! - text: a string within `min_length`/`max_length`; number: an integer within `ge`/`le`;
//!   date: a date or date-time (or a Unix timestamp) whose day lies within the days of the
//!   `ge`/`le` timestamps; checkbox: a boolean; select: one of the option values.
//!
//! Error items carry `loc_prefix + [slug]` and pydantic's `type`/`msg`/`ctx`.
//!
//! The lax scalar coercions (pydantic's "lax mode") are shared with the custom field
//! request parser.

use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, Utc};
use serde_json::{json, Map, Value};

use crate::domain::custom_field::{
    CustomField, CustomFieldData, CustomFieldProperties, FieldValue, SelectOption,
};
use crate::error::{FieldError, Given, Invalid, Step};
use tollgate_actors::checkout::CustomFieldInput;

/// A failed coercion: pydantic's error `type` and `msg`.
pub(crate) type Rejection = (&'static str, String);

fn reject(kind: &'static str, msg: &str) -> Rejection {
    (kind, msg.to_string())
}

/// pydantic's lax `int`: integers, floats without a fractional part, integer strings and
/// booleans.
pub(crate) fn lax_int(v: &Value) -> Result<i64, Rejection> {
    const NOT_INT: &str = "Input should be a valid integer, unable to parse string as an integer";
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(i)
            } else if n.is_u64() {
                Err(reject(
                    "int_parsing_size",
                    "Unable to parse input string as an integer, exceeded maximum size",
                ))
            } else {
                float_to_int(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::String(s) => {
            let t = s.trim();
            if let Ok(i) = t.parse::<i64>() {
                return Ok(i);
            }
            // "3.0" and "3.000" are integers to pydantic.
            if let Some((whole, frac)) = t.split_once('.') {
                if !frac.is_empty() && frac.bytes().all(|b| b == b'0') {
                    if let Ok(i) = whole.parse::<i64>() {
                        return Ok(i);
                    }
                }
            }
            Err(reject("int_parsing", NOT_INT))
        }
        _ => Err(reject("int_type", "Input should be a valid integer")),
    }
}

fn float_to_int(f: f64) -> Result<i64, Rejection> {
    if f.is_finite() && f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 {
        Ok(f as i64)
    } else if f.is_finite() && f.fract() != 0.0 {
        Err(reject(
            "int_from_float",
            "Input should be a valid integer, got a number with a fractional part",
        ))
    } else {
        Err(reject(
            "int_parsing_size",
            "Unable to parse input string as an integer, exceeded maximum size",
        ))
    }
}

/// pydantic's lax `bool`: booleans, 0/1, and the usual words (`"yes"`, `"off"`, …).
pub(crate) fn lax_bool(v: &Value) -> Result<bool, Rejection> {
    const UNREADABLE: &str = "Input should be a valid boolean, unable to interpret input";
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f == 0.0 {
                Ok(false)
            } else if f == 1.0 {
                Ok(true)
            } else {
                Err(reject("bool_parsing", UNREADABLE))
            }
        }
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Ok(false),
            "1" | "on" | "t" | "true" | "y" | "yes" => Ok(true),
            _ => Err(reject("bool_parsing", UNREADABLE)),
        },
        _ => Err(reject("bool_type", "Input should be a valid boolean")),
    }
}

/// pydantic's `str`: strings only (numbers are not turned into strings).
pub(crate) fn strict_str(v: &Value) -> Result<&str, Rejection> {
    v.as_str()
        .ok_or_else(|| reject("string_type", "Input should be a valid string"))
}

/// pydantic's lax `datetime`: RFC 3339 / ISO 8601 date-times (a missing offset means UTC),
/// plain dates (midnight UTC), and Unix timestamps in seconds (or milliseconds when larger
/// than 2·10¹⁰) as numbers or numeric strings.
pub(crate) fn lax_datetime(v: &Value) -> Result<DateTime<Utc>, Rejection> {
    match v {
        Value::String(s) => parse_datetime_str(s.trim()),
        Value::Number(n) => timestamp(n.as_f64().unwrap_or(f64::NAN)),
        _ => Err(reject("datetime_type", "Input should be a valid datetime")),
    }
}

fn parse_datetime_str(s: &str) -> Result<DateTime<Utc>, Rejection> {
    if let Ok(dt) = DateTime::parse_from_rfc3339(s) {
        return Ok(dt.with_timezone(&Utc));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M%:z",
    ] {
        if let Ok(dt) = DateTime::parse_from_str(s, fmt) {
            return Ok(dt.with_timezone(&Utc));
        }
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(s, fmt) {
            return Ok(dt.and_utc());
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        if s.len() == 10 {
            return Ok(d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
        }
    }
    if let Ok(f) = s.parse::<f64>() {
        return timestamp(f);
    }
    let reason = if s.len() < 10 {
        "input is too short"
    } else {
        "invalid date or time format"
    };
    Err((
        "datetime_from_date_parsing",
        format!("Input should be a valid datetime or date, {reason}"),
    ))
}

fn timestamp(f: f64) -> Result<DateTime<Utc>, Rejection> {
    let secs = if f.abs() > 2e10 { f / 1000.0 } else { f };
    if !secs.is_finite() {
        return Err(reject("datetime_type", "Input should be a valid datetime"));
    }
    let whole = secs.floor();
    let nanos = ((secs - whole) * 1e9).round().clamp(0.0, 999_999_999.0) as u32;
    DateTime::from_timestamp(whole as i64, nanos).ok_or_else(|| {
        reject(
            "datetime_parsing",
            "Input should be a valid datetime, dates after 9999 are not supported as unix timestamps",
        )
    })
}

/// Python's `repr` of a string, which pydantic uses in literal errors.
pub(crate) fn py_repr(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{}\"", s.replace('\\', "\\\\"))
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// "'a'", "'a' or 'b'", "'a', 'b' or 'c'": pydantic's list of expected literals.
pub(crate) fn expected_literals(values: &[String]) -> String {
    match values {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

fn unit(n: i64) -> &'static str {
    if n == 1 {
        "character"
    } else {
        "characters"
    }
}

/// A `custom_field_data` field of a response: a free-form JSON object (string, integer,
/// boolean or date-time values), described in the document as a map of
/// `crate::api::free_form::CustomFieldValue`.
pub type CustomFieldDataMap = Map<String, Value>;

/// `custom_field_data` as response bodies carry it: the stored answers without the `null`s
/// of optional fields left empty. Polar's clients type the values as string, integer,
/// boolean or date-time, never null (`polar-sdk` 0.13.5 and `@polar-sh/sdk` 0.22.2 both
/// reject the whole Checkout, Order or Subscription over one `null`).
pub fn custom_field_data_json(data: &CustomFieldData) -> CustomFieldDataMap {
    data.0
        .iter()
        .filter(|(_, v)| **v != FieldValue::Null)
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect()
}

/// Validates a request's `custom_field_data` against the fields attached to a product
/// (`(field, required)` pairs), returning what is stored or every problem found.
pub fn validate_custom_field_data(
    data: &Value,
    fields: &[(CustomField, bool)],
    loc_prefix: &[&str],
) -> Result<CustomFieldData, Vec<FieldError>> {
    let prefix: Vec<Value> = loc_prefix.iter().map(|p| Value::from(*p)).collect();
    check_data(data, fields, |slug, problem, input| {
        let mut loc = prefix.clone();
        loc.extend(slug.map(Value::from));
        problem.at(loc, input)
    })
}

/// Checks a command's custom field data against the fields attached to its product.
pub trait CheckCustomFields {
    /// What is stored, or every problem found, located at `custom_field_data.<slug>` of
    /// the command.
    fn check(&self, fields: &[(CustomField, bool)]) -> Result<CustomFieldData, Vec<Invalid>>;
}

impl CheckCustomFields for CustomFieldInput {
    fn check(&self, fields: &[(CustomField, bool)]) -> Result<CustomFieldData, Vec<Invalid>> {
        check_data(self.as_sent(), fields, |slug, problem, input| {
            let mut path = crate::field!["custom_field_data"];
            path.extend(slug.map(Step::from));
            problem.invalid(path, input)
        })
    }
}

/// The data checked against the fields, each problem reported through `at` (the field's
/// slug, none for the whole object; the problem; the value given).
fn check_data<E>(
    data: &Value,
    fields: &[(CustomField, bool)],
    at: impl Fn(Option<&str>, Problem, &Value) -> E,
) -> Result<CustomFieldData, Vec<E>> {
    let Value::Object(map) = data else {
        let problem = Problem::from(reject("dict_type", "Input should be a valid dictionary"));
        return Err(vec![at(None, problem, data)]);
    };
    let mut out = CustomFieldData::default();
    let mut errors = Vec::new();
    for (field, required) in fields {
        let slug = Some(field.slug.as_str());
        let checkbox = matches!(field.properties, CustomFieldProperties::Checkbox { .. });
        let value = match map.get(&field.slug) {
            None if *required => {
                let problem = Problem::from(reject("missing", "Field required"));
                errors.push(at(slug, problem, data));
                continue;
            }
            None if checkbox => FieldValue::Bool(false),
            None => FieldValue::Null,
            // An optional field may be null, except a checkbox (a plain `bool` in Polar).
            Some(Value::Null) if !*required && !checkbox => FieldValue::Null,
            Some(input) => match check_value(field, *required, input) {
                Ok(v) => v,
                Err(e) => {
                    errors.push(at(slug, e, input));
                    continue;
                }
            },
        };
        out.0.insert(field.slug.clone(), value);
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// A value's problem, before it knows its `loc` and `input`.
struct Problem {
    kind: &'static str,
    msg: String,
    /// The rule's parameter: its name and value (pydantic's `ctx`, one entry).
    ctx: Option<(&'static str, Value)>,
}

impl Problem {
    fn at(self, loc: Vec<Value>, input: &Value) -> FieldError {
        let e = FieldError::new(self.kind, loc, self.msg, input.clone());
        match self.ctx {
            Some((name, value)) => e.with_ctx(json!({ name: value })),
            None => e,
        }
    }

    /// The problem as an invalid field of a command, at `path`.
    fn invalid(self, path: Vec<Step>, input: &Value) -> Invalid {
        let e = Invalid::new(path, self.msg, Given::of(input)).kind(self.kind);
        match self.ctx {
            Some((name, value)) => e.with_ctx(name, Given::of(&value)),
            None => e,
        }
    }
}

impl From<Rejection> for Problem {
    fn from((kind, msg): Rejection) -> Self {
        Problem {
            kind,
            msg,
            ctx: None,
        }
    }
}

fn too_small(bound: impl std::fmt::Display, ctx: (&'static str, Value)) -> Problem {
    Problem {
        kind: "greater_than_equal",
        msg: format!("Input should be greater than or equal to {bound}"),
        ctx: Some(ctx),
    }
}

fn too_large(bound: impl std::fmt::Display, ctx: (&'static str, Value)) -> Problem {
    Problem {
        kind: "less_than_equal",
        msg: format!("Input should be less than or equal to {bound}"),
        ctx: Some(ctx),
    }
}

/// The day of a timestamp bound, or `None` for an unset (or zero) bound, as Polar's
/// `datetime.fromtimestamp(ge).date() if ge else None`.
fn bound_day(bound: Option<i64>) -> Option<NaiveDate> {
    bound
        .filter(|b| *b != 0)
        .and_then(|b| DateTime::from_timestamp(b, 0))
        .map(|d| d.date_naive())
}

fn check_value(field: &CustomField, required: bool, input: &Value) -> Result<FieldValue, Problem> {
    match &field.properties {
        CustomFieldProperties::Text {
            min_length,
            max_length,
            ..
        } => {
            let s = strict_str(input)?;
            let n = s.chars().count() as i64;
            if let Some(min) = *min_length {
                if n < min {
                    return Err(Problem {
                        kind: "string_too_short",
                        msg: format!("String should have at least {min} {}", unit(min)),
                        ctx: Some(("min_length", json!(min))),
                    });
                }
            }
            if let Some(max) = *max_length {
                if n > max {
                    return Err(Problem {
                        kind: "string_too_long",
                        msg: format!("String should have at most {max} {}", unit(max)),
                        ctx: Some(("max_length", json!(max))),
                    });
                }
            }
            Ok(FieldValue::Str(s.to_string()))
        }
        CustomFieldProperties::Number { ge, le, .. } => {
            let i = lax_int(input)?;
            if let Some(ge) = *ge {
                if i < ge {
                    return Err(too_small(ge, ("ge", json!(ge))));
                }
            }
            if let Some(le) = *le {
                if i > le {
                    return Err(too_large(le, ("le", json!(le))));
                }
            }
            Ok(FieldValue::Int(i))
        }
        CustomFieldProperties::Date { ge, le, .. } => {
            let dt = lax_datetime(input)?;
            let day = dt.date_naive();
            if let Some(min) = bound_day(*ge) {
                if day < min {
                    let shown = min.format("%Y-%m-%d").to_string();
                    return Err(too_small(&shown, ("ge", json!(shown))));
                }
            }
            if let Some(max) = bound_day(*le) {
                if day > max {
                    let shown = max.format("%Y-%m-%d").to_string();
                    return Err(too_large(&shown, ("le", json!(shown))));
                }
            }
            Ok(FieldValue::Date(
                dt.to_rfc3339_opts(SecondsFormat::AutoSi, true),
            ))
        }
        CustomFieldProperties::Checkbox { .. } => {
            if required {
                // `Literal[True]`: only `true` itself.
                match input {
                    Value::Bool(true) => Ok(FieldValue::Bool(true)),
                    _ => Err(Problem {
                        kind: "literal_error",
                        msg: "Input should be True".into(),
                        ctx: Some(("expected", json!("True"))),
                    }),
                }
            } else {
                Ok(FieldValue::Bool(lax_bool(input)?))
            }
        }
        CustomFieldProperties::Select { options, .. } => match input {
            Value::String(s) if options.iter().any(|o| o.value == *s) => {
                Ok(FieldValue::Str(s.clone()))
            }
            _ => {
                let expected = expected_literals(&option_reprs(options));
                Err(Problem {
                    kind: "literal_error",
                    msg: format!("Input should be {expected}"),
                    ctx: Some(("expected", json!(expected))),
                })
            }
        },
    }
}

fn option_reprs(options: &[SelectOption]) -> Vec<String> {
    options.iter().map(|o| py_repr(&o.value)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::custom_field::FormProperties;
    use crate::domain::ids::{CustomFieldId, OrganizationId};
    use crate::domain::metadata::Metadata;

    fn field(slug: &str, properties: CustomFieldProperties) -> CustomField {
        CustomField {
            id: CustomFieldId::new(),
            organization_id: OrganizationId::new(),
            created_at: Utc::now(),
            modified_at: None,
            slug: slug.into(),
            name: slug.into(),
            metadata: Metadata::default(),
            properties,
            deleted_at: None,
        }
    }

    fn text(min: Option<i64>, max: Option<i64>) -> CustomFieldProperties {
        CustomFieldProperties::Text {
            form: FormProperties::default(),
            textarea: None,
            min_length: min,
            max_length: max,
        }
    }

    fn number(ge: Option<i64>, le: Option<i64>) -> CustomFieldProperties {
        CustomFieldProperties::Number {
            form: FormProperties::default(),
            ge,
            le,
        }
    }

    fn date(ge: Option<i64>, le: Option<i64>) -> CustomFieldProperties {
        CustomFieldProperties::Date {
            form: FormProperties::default(),
            ge,
            le,
        }
    }

    fn checkbox() -> CustomFieldProperties {
        CustomFieldProperties::Checkbox {
            form: FormProperties::default(),
        }
    }

    fn select(values: &[&str]) -> CustomFieldProperties {
        CustomFieldProperties::Select {
            form: FormProperties::default(),
            options: values
                .iter()
                .map(|v| SelectOption {
                    value: (*v).into(),
                    label: v.to_uppercase(),
                })
                .collect(),
        }
    }

    const PREFIX: &[&str] = &["body", "custom_field_data"];

    fn run(fields: &[(CustomField, bool)], data: Value) -> Result<Value, Vec<FieldError>> {
        validate_custom_field_data(&data, fields, PREFIX).map(|d| d.to_json())
    }

    fn one_error(fields: &[(CustomField, bool)], data: Value) -> FieldError {
        let mut errors = run(fields, data).expect_err("should fail");
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors.remove(0)
    }

    /// Polar's own fixture (`tests/custom_field/test_data.py`): text1 required, number1
    /// (ge 0) and select1 (a/b) optional.
    fn polar_fixture() -> Vec<(CustomField, bool)> {
        vec![
            (field("text1", text(None, None)), true),
            (field("number1", number(Some(0), None)), false),
            (field("select1", select(&["a", "b"])), false),
        ]
    }

    #[test]
    fn polar_invalid_inputs() {
        let f = polar_fixture();
        let e = one_error(&f, json!({"text1": "abc", "number1": "abc"}));
        assert_eq!(e.kind, "int_parsing");
        assert_eq!(e.loc, crate::loc!["body", "custom_field_data", "number1"]);
        assert_eq!(e.input, json!("abc"));
        let e = one_error(&f, json!({"text1": "abc", "number1": -1}));
        assert_eq!(e.kind, "greater_than_equal");
        assert_eq!(e.msg, "Input should be greater than or equal to 0");
        assert_eq!(e.ctx, Some(json!({"ge": 0})));
        let e = one_error(&f, json!({"text1": "abc", "select1": "c"}));
        assert_eq!(e.kind, "literal_error");
        assert_eq!(e.msg, "Input should be 'a' or 'b'");
        assert_eq!(e.ctx, Some(json!({"expected": "'a' or 'b'"})));
        let errors = run(&f, json!({"number1": 123, "select1": "c"})).unwrap_err();
        let kinds: Vec<(&str, Value)> = errors
            .iter()
            .map(|e| (e.kind.as_str(), e.loc[2].clone()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("missing", json!("text1")),
                ("literal_error", json!("select1"))
            ]
        );
        assert_eq!(errors[0].msg, "Field required");
    }

    #[test]
    fn polar_valid_inputs_fill_defaults_and_drop_unknown_keys() {
        let f = polar_fixture();
        assert_eq!(
            run(&f, json!({"text1": "abc"})).unwrap(),
            json!({"text1": "abc", "number1": null, "select1": null})
        );
        assert_eq!(
            run(
                &f,
                json!({"text1": "abc", "number1": 123, "select1": "a", "other": 1})
            )
            .unwrap(),
            json!({"text1": "abc", "number1": 123, "select1": "a"})
        );
        assert_eq!(
            run(
                &f,
                json!({"text1": "abc", "number1": null, "select1": null})
            )
            .unwrap(),
            json!({"text1": "abc", "number1": null, "select1": null})
        );
    }

    #[test]
    fn responses_leave_out_the_empty_optional_answers() {
        let f = polar_fixture();
        let stored = validate_custom_field_data(&json!({"text1": "abc"}), &f, PREFIX).unwrap();
        assert_eq!(stored.get("number1"), Some(&FieldValue::Null));
        assert_eq!(
            Value::Object(custom_field_data_json(&stored)),
            json!({"text1": "abc"})
        );
        let full = validate_custom_field_data(
            &json!({"text1": "abc", "number1": 0, "select1": "a"}),
            &f,
            PREFIX,
        )
        .unwrap();
        assert_eq!(
            Value::Object(custom_field_data_json(&full)),
            json!({"text1": "abc", "number1": 0, "select1": "a"})
        );
    }

    #[test]
    fn no_fields_accepts_anything_and_keeps_nothing() {
        assert_eq!(run(&[], json!({"x": 1})).unwrap(), json!({}));
    }

    #[test]
    fn data_must_be_an_object() {
        let e = one_error(&polar_fixture(), json!([1]));
        assert_eq!(e.kind, "dict_type");
        assert_eq!(e.loc, crate::loc!["body", "custom_field_data"]);
    }

    #[test]
    fn checkbox_rules() {
        let optional = vec![(field("checkbox1", checkbox()), false)];
        assert_eq!(
            run(&optional, json!({})).unwrap(),
            json!({"checkbox1": false})
        );
        assert_eq!(
            run(&optional, json!({"checkbox1": true})).unwrap(),
            json!({"checkbox1": true})
        );
        assert_eq!(
            run(&optional, json!({"checkbox1": false})).unwrap(),
            json!({"checkbox1": false})
        );
        assert_eq!(
            run(&optional, json!({"checkbox1": "yes"})).unwrap(),
            json!({"checkbox1": true})
        );
        assert_eq!(
            one_error(&optional, json!({"checkbox1": null})).kind,
            "bool_type"
        );
        assert_eq!(
            one_error(&optional, json!({"checkbox1": "maybe"})).kind,
            "bool_parsing"
        );

        let required = vec![(field("checkbox1", checkbox()), true)];
        assert_eq!(one_error(&required, json!({})).kind, "missing");
        let e = one_error(&required, json!({"checkbox1": false}));
        assert_eq!(e.kind, "literal_error");
        assert_eq!(e.msg, "Input should be True");
        assert_eq!(
            one_error(&required, json!({"checkbox1": 1})).kind,
            "literal_error"
        );
        assert_eq!(
            run(&required, json!({"checkbox1": true})).unwrap(),
            json!({"checkbox1": true})
        );
    }

    #[test]
    fn text_rules() {
        let f = vec![(field("t", text(Some(2), Some(4))), true)];
        assert_eq!(run(&f, json!({"t": "abc"})).unwrap(), json!({"t": "abc"}));
        assert_eq!(run(&f, json!({"t": "éé"})).unwrap(), json!({"t": "éé"}));
        let e = one_error(&f, json!({"t": "a"}));
        assert_eq!(e.kind, "string_too_short");
        assert_eq!(e.msg, "String should have at least 2 characters");
        assert_eq!(e.ctx, Some(json!({"min_length": 2})));
        let e = one_error(&f, json!({"t": "abcde"}));
        assert_eq!(e.kind, "string_too_long");
        assert_eq!(e.msg, "String should have at most 4 characters");
        let e = one_error(&f, json!({"t": 12}));
        assert_eq!(e.kind, "string_type");
        assert_eq!(e.msg, "Input should be a valid string");
        assert_eq!(one_error(&f, json!({"t": null})).kind, "string_type");
        let one = vec![(field("t", text(Some(1), Some(1))), false)];
        assert_eq!(
            one_error(&one, json!({"t": ""})).msg,
            "String should have at least 1 character"
        );
        assert_eq!(run(&one, json!({"t": null})).unwrap(), json!({"t": null}));
    }

    #[test]
    fn number_rules() {
        let f = vec![(field("n", number(Some(1), Some(10))), true)];
        assert_eq!(run(&f, json!({"n": 5})).unwrap(), json!({"n": 5}));
        assert_eq!(run(&f, json!({"n": "7"})).unwrap(), json!({"n": 7}));
        assert_eq!(run(&f, json!({"n": 3.0})).unwrap(), json!({"n": 3}));
        assert_eq!(run(&f, json!({"n": "4.00"})).unwrap(), json!({"n": 4}));
        let e = one_error(&f, json!({"n": 11}));
        assert_eq!(e.kind, "less_than_equal");
        assert_eq!(e.msg, "Input should be less than or equal to 10");
        assert_eq!(e.ctx, Some(json!({"le": 10})));
        assert_eq!(one_error(&f, json!({"n": 0})).kind, "greater_than_equal");
        let e = one_error(&f, json!({"n": 2.5}));
        assert_eq!(e.kind, "int_from_float");
        assert_eq!(one_error(&f, json!({"n": null})).kind, "int_type");
        assert_eq!(one_error(&f, json!({"n": [1]})).kind, "int_type");
    }

    #[test]
    fn date_rules() {
        // 2024-01-01T00:00:00Z and 2024-12-31T12:00:00Z
        let f = vec![(
            field("d", date(Some(1_704_067_200), Some(1_735_646_400))),
            true,
        )];
        assert_eq!(
            run(&f, json!({"d": "2024-05-01"})).unwrap(),
            json!({"d": "2024-05-01T00:00:00Z"})
        );
        assert_eq!(
            run(&f, json!({"d": "2024-05-01T10:30:00+02:00"})).unwrap(),
            json!({"d": "2024-05-01T08:30:00Z"})
        );
        assert_eq!(
            run(&f, json!({"d": "2024-05-01T10:30:00"})).unwrap(),
            json!({"d": "2024-05-01T10:30:00Z"})
        );
        // The bounds are days: any time on the last day passes.
        assert!(run(&f, json!({"d": "2024-12-31T23:00:00Z"})).is_ok());
        assert!(run(&f, json!({"d": "2024-01-01"})).is_ok());
        assert_eq!(
            run(&f, json!({"d": 1_714_521_600})).unwrap(),
            json!({"d": "2024-05-01T00:00:00Z"})
        );
        let e = one_error(&f, json!({"d": "2023-12-31"}));
        assert_eq!(e.kind, "greater_than_equal");
        assert_eq!(e.msg, "Input should be greater than or equal to 2024-01-01");
        assert_eq!(e.ctx, Some(json!({"ge": "2024-01-01"})));
        let e = one_error(&f, json!({"d": "2025-01-01"}));
        assert_eq!(e.kind, "less_than_equal");
        assert_eq!(e.msg, "Input should be less than or equal to 2024-12-31");
        let e = one_error(&f, json!({"d": "not a date"}));
        assert_eq!(e.kind, "datetime_from_date_parsing");
        assert!(e
            .msg
            .starts_with("Input should be a valid datetime or date"));
        assert_eq!(
            one_error(&f, json!({"d": "2024-13-01"})).kind,
            "datetime_from_date_parsing"
        );
        assert_eq!(one_error(&f, json!({"d": true})).kind, "datetime_type");
        // A zero bound means "no bound", as in Polar.
        let open = vec![(field("d", date(Some(0), None)), false)];
        assert!(run(&open, json!({"d": "1960-01-01"})).is_ok());
        assert_eq!(run(&open, json!({})).unwrap(), json!({"d": null}));
    }

    #[test]
    fn select_rules() {
        let f = vec![(field("s", select(&["a", "b", "it's"])), true)];
        assert_eq!(run(&f, json!({"s": "b"})).unwrap(), json!({"s": "b"}));
        let e = one_error(&f, json!({"s": "A"}));
        assert_eq!(e.msg, "Input should be 'a', 'b' or \"it's\"");
        assert_eq!(one_error(&f, json!({"s": 1})).kind, "literal_error");
        assert_eq!(one_error(&f, json!({"s": null})).kind, "literal_error");
        let single = vec![(field("s", select(&["only"])), false)];
        assert_eq!(
            one_error(&single, json!({"s": "x"})).msg,
            "Input should be 'only'"
        );
        assert_eq!(
            run(&single, json!({"s": null})).unwrap(),
            json!({"s": null})
        );
    }

    #[test]
    fn errors_use_the_given_prefix() {
        let f = vec![(field("n", number(None, None)), true)];
        let errors = validate_custom_field_data(&json!({}), &f, &["body"]).unwrap_err();
        assert_eq!(errors[0].loc, crate::loc!["body", "n"]);
        assert_eq!(errors[0].input, json!({}));
    }

    #[test]
    fn lax_scalars() {
        assert_eq!(lax_int(&json!(true)), Ok(1));
        assert_eq!(lax_int(&json!(" 42 ")), Ok(42));
        assert_eq!(lax_int(&json!(u64::MAX)).unwrap_err().0, "int_parsing_size");
        assert_eq!(lax_bool(&json!(0)), Ok(false));
        assert_eq!(lax_bool(&json!("ON")), Ok(true));
        assert_eq!(lax_bool(&json!(2)).unwrap_err().0, "bool_parsing");
        assert_eq!(lax_bool(&json!([])).unwrap_err().0, "bool_type");
        assert_eq!(strict_str(&json!(1)).unwrap_err().0, "string_type");
        assert_eq!(py_repr("a'b\"c"), "'a\\'b\"c'");
    }
}
