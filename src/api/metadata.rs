//! Metadata: the JSON object responses carry, and the parsing of request bodies with
//! pydantic's error shapes.

use serde_json::{json, Map, Value};

use crate::domain::metadata::{
    self, Metadata, MetadataIssue, MAX_KEY_CHARS, MAX_PAIRS, MAX_VALUE_CHARS,
};
use crate::error::FieldError;

/// A `metadata` field of a response: a free-form JSON object (string, integer and boolean
/// values), described in the document as `crate::api::free_form::Metadata`.
pub type MetadataMap = Map<String, Value>;

/// The JSON object of stored metadata.
pub fn metadata_map(m: &Metadata) -> MetadataMap {
    match m.to_json() {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// `metadata` of a body: absent (or, with `null_is_absent`, null) is `None`; its errors go
/// to `v`.
pub fn body_metadata(
    v: &mut crate::validate::Validator,
    sent: &super::Maybe<Value>,
    null_is_absent: bool,
) -> Option<Metadata> {
    use super::Maybe;
    let null = Value::Null;
    let raw = match sent {
        Maybe::Absent => None,
        Maybe::Null if null_is_absent => None,
        Maybe::Null => Some(&null),
        Maybe::Value(m) => Some(m),
    };
    match parse_metadata("metadata", raw?) {
        Ok(m) => Some(m),
        Err(errors) => {
            for e in errors {
                v.push(e);
            }
            None
        }
    }
}

/// Parses `value` (the field `field` of the body) into metadata, or the 422 items.
pub fn parse_metadata(field: &str, value: &Value) -> Result<Metadata, Vec<FieldError>> {
    metadata::parse(value).map_err(|issues| {
        issues
            .into_iter()
            .map(|issue| {
                let base = |rest: Vec<Value>| {
                    let mut loc = crate::loc!["body", field];
                    loc.extend(rest);
                    loc
                };
                match issue {
                    MetadataIssue::NotAnObject => FieldError::new(
                        "dict_type",
                        base(vec![]),
                        "Input should be a valid dictionary",
                        value.clone(),
                    ),
                    MetadataIssue::TooManyPairs(n) => FieldError::new(
                        "too_long",
                        base(vec![]),
                        format!("Dictionary should have at most {MAX_PAIRS} items after validation, not {n}"),
                        value.clone(),
                    )
                    .with_ctx(json!({"field_type": "Dictionary", "max_length": MAX_PAIRS, "actual_length": n})),
                    MetadataIssue::KeyTooShort(k) => FieldError::new(
                        "string_too_short",
                        base(vec![Value::from(k.as_str()), Value::from("[key]")]),
                        "String should have at least 1 character",
                        Value::from(k),
                    )
                    .with_ctx(json!({"min_length": 1})),
                    MetadataIssue::KeyTooLong(k) => FieldError::new(
                        "string_too_long",
                        base(vec![Value::from(k.as_str()), Value::from("[key]")]),
                        format!("String should have at most {MAX_KEY_CHARS} characters"),
                        Value::from(k),
                    )
                    .with_ctx(json!({"max_length": MAX_KEY_CHARS})),
                    MetadataIssue::ValueTooShort(k) => FieldError::new(
                        "string_too_short",
                        base(vec![Value::from(k.as_str()), Value::from("str")]),
                        "String should have at least 1 character",
                        value.get(&k).cloned().unwrap_or(Value::Null),
                    )
                    .with_ctx(json!({"min_length": 1})),
                    MetadataIssue::ValueTooLong(k) => FieldError::new(
                        "string_too_long",
                        base(vec![Value::from(k.as_str()), Value::from("str")]),
                        format!("String should have at most {MAX_VALUE_CHARS} characters"),
                        value.get(&k).cloned().unwrap_or(Value::Null),
                    )
                    .with_ctx(json!({"max_length": MAX_VALUE_CHARS})),
                    MetadataIssue::BadValueType(k) => FieldError::new(
                        "string_type",
                        base(vec![Value::from(k.as_str())]),
                        "Input should be a valid string, integer or boolean",
                        value.get(&k).cloned().unwrap_or(Value::Null),
                    ),
                }
            })
            .collect()
    })
}
