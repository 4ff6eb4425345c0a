//! JSON bodies with FastAPI-shaped 422 errors: the body must be JSON (a missing
//! `Content-Type` is read as JSON, as FastAPI does; another type is a 422), within the size
//! limit, and must deserialize into the request type; each failure names its `loc`.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::error::{ApiError, FieldError};
use crate::state::AppState;

/// A JSON body deserialized into `T`; `.raw` keeps the parsed document for validators that
/// need to echo an `input`.
#[derive(Debug)]
pub struct ValidJson<T> {
    pub value: T,
    pub raw: Value,
}

impl<T> ValidJson<T> {
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for ValidJson<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let limit = req
            .app_data::<web::Data<AppState>>()
            .map(|s| s.settings.server.body_limit_bytes)
            .unwrap_or(64 * 1024);
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|s| s.to_ascii_lowercase());
        let declared_len = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        let mut payload = payload.take();
        Box::pin(async move {
            if declared_len.is_some_and(|n| n > limit) {
                return Err(ApiError::PayloadTooLarge { limit });
            }
            let mut body = web::BytesMut::new();
            while let Some(chunk) = payload.next().await {
                let chunk = chunk.map_err(|e| {
                    ApiError::BadRequest(format!("Could not read the request body: {e}"))
                })?;
                if body.len() + chunk.len() > limit {
                    return Err(ApiError::PayloadTooLarge { limit });
                }
                body.extend_from_slice(&chunk);
            }
            parse_body(content_type.as_deref(), &body)
        })
    }
}

fn is_json(content_type: Option<&str>) -> bool {
    match content_type {
        None => true,
        Some(ct) => {
            let essence = ct.split(';').next().unwrap_or("").trim();
            essence == "application/json"
                || (essence.starts_with("application/") && essence.ends_with("+json"))
        }
    }
}

/// Parses a request body into `T` with FastAPI-shaped errors.
pub fn parse_body<T: DeserializeOwned>(
    content_type: Option<&str>,
    body: &[u8],
) -> Result<ValidJson<T>, ApiError> {
    if body.is_empty() {
        return Err(ApiError::validation(FieldError::new(
            "missing",
            crate::loc!["body"],
            "Field required",
            Value::Null,
        )));
    }
    if !is_json(content_type) {
        return Err(ApiError::validation(FieldError::new(
            "model_attributes_type",
            crate::loc!["body"],
            "Input should be a valid dictionary or object to extract fields from",
            Value::String(String::from_utf8_lossy(body).chars().take(200).collect()),
        )));
    }
    let raw: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::validation(
            FieldError::new(
                "json_invalid",
                crate::loc!["body", e.column()],
                "JSON decode error",
                json!({}),
            )
            .with_ctx(json!({"error": e.to_string()})),
        )
    })?;
    if !raw.is_object() {
        return Err(ApiError::validation(FieldError::new(
            "model_attributes_type",
            crate::loc!["body"],
            "Input should be a valid dictionary or object to extract fields from",
            raw,
        )));
    }
    let value = serde_path_to_error::deserialize::<_, T>(raw.clone())
        .map_err(|e| ApiError::validation(serde_error_to_field(&raw, e)))?;
    Ok(ValidJson { value, raw })
}

/// Turns a serde error at a path into one pydantic-style error item.
fn serde_error_to_field(
    raw: &Value,
    e: serde_path_to_error::Error<serde_json::Error>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Body {
        name: String,
        count: Option<i64>,
        nested: Option<Nested>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Nested {
        flag: bool,
        id: Option<uuid::Uuid>,
    }

    fn err(ct: Option<&str>, body: &str) -> FieldError {
        match parse_body::<Body>(ct, body.as_bytes()) {
            Err(ApiError::Validation(mut items)) => items.remove(0),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn accepts_json_and_ignores_unknown_fields() {
        let ok = parse_body::<Body>(
            Some("application/json; charset=utf-8"),
            br#"{"name":"x","extra":1}"#,
        )
        .unwrap();
        assert_eq!(ok.value.name, "x");
        assert!(parse_body::<Body>(None, br#"{"name":"x"}"#).is_ok());
    }

    #[test]
    fn malformed_json() {
        let e = err(Some("application/json"), "{\"name\": ");
        assert_eq!(e.kind, "json_invalid");
        assert_eq!(e.loc[0], "body");
    }

    #[test]
    fn wrong_content_type() {
        let e = err(Some("text/plain"), "name=x");
        assert_eq!(e.kind, "model_attributes_type");
        assert_eq!(e.loc, crate::loc!["body"]);
    }

    #[test]
    fn empty_body_and_non_object() {
        assert_eq!(err(None, "").kind, "missing");
        assert_eq!(err(None, "[1]").kind, "model_attributes_type");
    }

    #[test]
    fn missing_field_names_it() {
        let e = err(None, "{}");
        assert_eq!(e.kind, "missing");
        assert_eq!(e.loc, crate::loc!["body", "name"]);
        assert_eq!(e.msg, "Field required");
    }

    #[test]
    fn wrong_types_name_the_path() {
        let e = err(None, r#"{"name": 5}"#);
        assert_eq!(
            (e.kind.as_str(), e.loc.clone()),
            ("string_type", crate::loc!["body", "name"])
        );
        assert_eq!(e.input, json!(5));
        let e = err(None, r#"{"name": "x", "count": "many"}"#);
        assert_eq!(
            (e.kind.as_str(), e.loc.clone()),
            ("int_type", crate::loc!["body", "count"])
        );
        let e = err(None, r#"{"name": "x", "nested": {"flag": "yes"}}"#);
        assert_eq!(
            (e.kind.as_str(), e.loc.clone()),
            ("bool_type", crate::loc!["body", "nested", "flag"])
        );
        let e = err(
            None,
            r#"{"name": "x", "nested": {"flag": true, "id": "nope"}}"#,
        );
        assert_eq!(
            (e.kind.as_str(), e.loc.clone()),
            ("uuid_parsing", crate::loc!["body", "nested", "id"])
        );
    }
}
