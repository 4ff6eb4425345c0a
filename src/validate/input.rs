//! A JSON body read into a request type, reporting every missing or invalid field at once
//! (pydantic's habit), as it comes over HTTP (`crate::extract::ValidJson`).

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::error::{ApiError, FieldError};

/// `raw` as the request type `T`, or the 422 listing every problem (a body that is not an
/// object is one problem).
pub fn input<T: DeserializeOwned>(raw: &Value) -> Result<T, ApiError> {
    if !raw.is_object() {
        return Err(ApiError::validation(FieldError::new(
            "model_attributes_type",
            crate::loc!["body"],
            "Input should be a valid dictionary or object to extract fields from",
            raw.clone(),
        )));
    }
    deserialize_all_errors::<T>(raw).map_err(ApiError::Validation)
}

/// Most deserialization passes one body may take while collecting its errors.
const MAX_PASSES: usize = 256;

/// Values tried in place of a field that is missing or invalid, so that deserialization can
/// go on past it: one of them satisfies nearly every field type (absent for optional
/// fields, then the usual shapes: null, string, number, boolean, list, object, UUID,
/// timestamp).
fn stand_ins() -> [Option<Value>; 10] {
    [
        None,
        Some(Value::Null),
        Some(Value::from("")),
        Some(Value::from(0)),
        Some(Value::from(false)),
        Some(json!([])),
        Some(json!({})),
        Some(Value::from("00000000-0000-0000-0000-000000000000")),
        Some(Value::from("1970-01-01T00:00:00Z")),
        Some(Value::from(0.5)),
    ]
}

/// Deserializes `raw` into `T`, reporting every missing or invalid field at once, as
/// pydantic does, rather than serde's first error only.
///
/// serde stops at the first error, so the body is repaired and deserialized again: a new
/// error is recorded and the value at its location replaced by the first stand-in (see
/// [`stand_ins`]); when an error comes back at a replaced location, the next stand-in is
/// tried there; an error inside a stand-in (the fields of an object put in place of a
/// missing one) is repaired the same way without being reported. This ends when the body
/// deserializes, when no stand-in is left for a location, or after [`MAX_PASSES`]; the
/// errors recorded until then are reported. The first error is serde's own first error; a
/// valid body costs one pass. It works for every `Deserialize` type, with no list of
/// fields to keep in step.
pub fn deserialize_all_errors<T: DeserializeOwned>(raw: &Value) -> Result<T, Vec<FieldError>> {
    let mut work = raw.clone();
    let mut errors: Vec<FieldError> = Vec::new();
    // Locations replaced so far, with the index of the stand-in in place.
    let mut replaced: Vec<(Vec<Value>, usize)> = Vec::new();
    for _ in 0..MAX_PASSES {
        let e = match serde_path_to_error::deserialize::<_, T>(&work) {
            Ok(value) if errors.is_empty() => return Ok(value),
            Ok(_) => return Err(errors),
            Err(e) => e,
        };
        let error = serde_error_to_field(raw, &e);
        let at = error.loc.clone();
        let start = match replaced.iter().position(|(loc, _)| *loc == at) {
            // The stand-in there did not fit: the next one.
            Some(i) => {
                replaced[i].1 += 1;
                replaced[i].1
            }
            None => {
                // A location inside a stand-in is repaired silently; any other is reported.
                if !replaced.iter().any(|(loc, _)| starts_with(&at, loc)) {
                    errors.push(error);
                }
                replaced.push((at.clone(), 0));
                0
            }
        };
        if at.len() <= 1 {
            return Err(errors);
        }
        let candidates = stand_ins();
        let mut placed = false;
        for (index, stand_in) in candidates.into_iter().enumerate().skip(start) {
            if set_at(&mut work, &at[1..], stand_in) {
                if let Some(entry) = replaced.iter_mut().find(|(loc, _)| *loc == at) {
                    entry.1 = index;
                }
                placed = true;
                break;
            }
        }
        if !placed {
            return Err(errors);
        }
    }
    Err(errors)
}

fn starts_with(loc: &[Value], prefix: &[Value]) -> bool {
    loc.len() >= prefix.len() && loc[..prefix.len()] == *prefix
}

/// Puts `value` at `path` (object keys and array indexes) in `doc`, creating the last
/// object member when missing; `None` removes an object member. False when the path does
/// not lead anywhere (or would remove an array element, which would shift its siblings).
fn set_at(doc: &mut Value, path: &[Value], value: Option<Value>) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return false;
    };
    let mut node = doc;
    for segment in parents {
        let next = match (node, segment) {
            (Value::Object(map), Value::String(key)) => map.get_mut(key),
            (Value::Array(items), Value::Number(n)) => n
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| items.get_mut(i)),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => return false,
        }
    }
    match (node, last, value) {
        (Value::Object(map), Value::String(key), Some(v)) => {
            map.insert(key.clone(), v);
            true
        }
        (Value::Object(map), Value::String(key), None) => {
            map.remove(key);
            true
        }
        (Value::Array(items), Value::Number(n), Some(v)) => {
            match n
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| items.get_mut(i))
            {
                Some(slot) => {
                    *slot = v;
                    true
                }
                None => false,
            }
        }
        _ => false,
    }
}

/// Turns a serde error at a path into one pydantic-style error item.
fn serde_error_to_field(
    raw: &Value,
    e: &serde_path_to_error::Error<serde_json::Error>,
) -> FieldError {
    let mut loc = vec![Value::from("body")];
    let mut pointer = String::new();
    for segment in e.path().iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => {
                loc.push(Value::from(*index));
                pointer.push_str(&format!("/{index}"));
            }
            serde_path_to_error::Segment::Map { key }
            | serde_path_to_error::Segment::Enum { variant: key } => {
                loc.push(Value::from(key.as_str()));
                pointer.push_str(&format!("/{}", key.replace('~', "~0").replace('/', "~1")));
            }
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    let message = e.inner().to_string();
    let message = message
        .split(" at line ")
        .next()
        .unwrap_or(&message)
        .to_string();
    let input = raw.pointer(&pointer).cloned().unwrap_or(Value::Null);
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        loc.push(Value::from(field));
        return FieldError::new("missing", loc, "Field required", input);
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let expected = rest
            .split("expected ")
            .nth(1)
            .unwrap_or("")
            .replace('`', "'");
        return FieldError::new("enum", loc, format!("Input should be {expected}"), input);
    }
    if message.starts_with("invalid type") || message.starts_with("invalid value") {
        let expected = message.rsplit("expected ").next().unwrap_or("");
        let (kind, msg) = if expected.contains("string")
            || expected.contains("UUID") && message.contains("invalid type")
        {
            ("string_type", "Input should be a valid string")
        } else if expected.contains("i64")
            || expected.contains("u64")
            || expected.contains("integer")
            || expected.contains("i32")
            || expected.contains("u32")
        {
            ("int_type", "Input should be a valid integer")
        } else if expected.contains("bool") {
            ("bool_type", "Input should be a valid boolean")
        } else if expected.contains("sequence") {
            ("list_type", "Input should be a valid list")
        } else if expected.contains("map") || expected.contains("struct") {
            ("model_type", "Input should be a valid dictionary or object")
        } else {
            ("value_error", "Input is not valid")
        };
        return FieldError::new(kind, loc, msg, input);
    }
    if message.contains("UUID") || message.contains("uuid") {
        return FieldError::new(
            "uuid_parsing",
            loc,
            format!("Input should be a valid UUID, {message}"),
            input,
        );
    }
    FieldError::new("value_error", loc, message, input)
}
