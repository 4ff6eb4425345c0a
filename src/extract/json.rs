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

impl<T: DeserializeOwned> ValidJson<T> {
    /// A body built in-process (the dashboard's forms), read by the same rules and with the
    /// same errors as one sent over HTTP.
    pub fn from_value(raw: Value) -> Result<Self, ApiError> {
        let value = crate::validate::input::<T>(&raw)?;
        Ok(ValidJson { value, raw })
    }
}

/// A route that takes bulk bodies (its resource's `app_data`): read up to
/// `server.import_body_limit_bytes` instead of `server.body_limit_bytes`.
#[derive(Debug, Clone, Copy)]
pub struct BulkBody;

/// The body of a request, read up to the size limit (`server.body_limit_bytes`, or
/// `server.import_body_limit_bytes` on a [`BulkBody`] route; a declared length over it is
/// refused before anything is read), with its lower-cased content type.
fn read_body(
    req: &HttpRequest,
    payload: &mut Payload,
) -> impl Future<Output = Result<(Option<String>, web::BytesMut), ApiError>> {
    let bulk = req.app_data::<BulkBody>().is_some();
    let limit = req
        .app_data::<web::Data<AppState>>()
        .map(|s| {
            if bulk {
                s.settings.server.import_body_limit_bytes
            } else {
                s.settings.server.body_limit_bytes
            }
        })
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
    async move {
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
        Ok((content_type, body))
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for ValidJson<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = read_body(req, payload);
        Box::pin(async move {
            let (content_type, body) = body.await?;
            parse_body(content_type.as_deref(), &body)
        })
    }
}

/// A JSON body on the hot path (license-key validation): deserialized straight from the
/// bytes. Only a body that this fails on goes through [`parse_body`], which gives the exact
/// 422; so the errors are [`ValidJson`]'s and a valid body skips the intermediate
/// `serde_json::Value`.
pub struct HotJson<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for HotJson<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = read_body(req, payload);
        Box::pin(async move {
            let (content_type, body) = body.await?;
            let plain_json = content_type
                .as_deref()
                .is_none_or(|ct| ct.split(';').next().map(str::trim) == Some("application/json"));
            // An object (serde would also read a struct from an array, which the API refuses).
            let object = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
            if plain_json && object {
                if let Ok(value) = serde_json::from_slice::<T>(&body) {
                    return Ok(HotJson(value));
                }
            }
            parse_body::<T>(content_type.as_deref(), &body).map(|v| HotJson(v.value))
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
    ValidJson::from_value(raw)
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

    fn all(body: &str) -> Vec<(String, Vec<Value>)> {
        match parse_body::<Body>(None, body.as_bytes()) {
            Err(ApiError::Validation(items)) => {
                items.into_iter().map(|i| (i.kind, i.loc)).collect()
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Org {
        name: String,
        slug: String,
        size: Option<u32>,
        owner: Owner,
        tags: Option<Vec<String>>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Owner {
        email: String,
        id: uuid::Uuid,
    }

    fn org_errors(body: &str) -> Vec<(String, Vec<Value>)> {
        match parse_body::<Org>(None, body.as_bytes()) {
            Err(ApiError::Validation(items)) => {
                items.into_iter().map(|i| (i.kind, i.loc)).collect()
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn every_missing_field_is_listed() {
        let got = org_errors("{}");
        assert_eq!(
            got,
            vec![
                ("missing".to_string(), crate::loc!["body", "name"]),
                ("missing".to_string(), crate::loc!["body", "slug"]),
                ("missing".to_string(), crate::loc!["body", "owner"]),
            ]
        );
    }

    #[test]
    fn type_errors_and_missing_fields_together() {
        let got = org_errors(
            r#"{"name": 1, "size": "big", "owner": {"id": "nope"}, "tags": ["a", 2, 3]}"#,
        );
        let locs: Vec<Vec<Value>> = got.iter().map(|(_, l)| l.clone()).collect();
        for expected in [
            crate::loc!["body", "name"],
            crate::loc!["body", "slug"],
            crate::loc!["body", "size"],
            crate::loc!["body", "owner", "id"],
            crate::loc!["body", "owner", "email"],
            crate::loc!["body", "tags", 1],
            crate::loc!["body", "tags", 2],
        ] {
            assert!(locs.contains(&expected), "{expected:?} not in {got:?}");
        }
        assert_eq!(got.len(), 7, "{got:?}");
        let kind = |loc: Vec<Value>| {
            got.iter()
                .find(|(_, l)| *l == loc)
                .map(|(k, _)| k.clone())
                .unwrap_or_default()
        };
        assert_eq!(kind(crate::loc!["body", "name"]), "string_type");
        assert_eq!(kind(crate::loc!["body", "slug"]), "missing");
        assert_eq!(kind(crate::loc!["body", "size"]), "int_type");
        assert_eq!(kind(crate::loc!["body", "owner", "id"]), "uuid_parsing");
        assert_eq!(kind(crate::loc!["body", "tags", 2]), "string_type");
    }

    #[test]
    fn a_wrong_object_is_one_error_not_its_fields() {
        let got = org_errors(r#"{"name": "a", "slug": "b", "owner": 5}"#);
        assert_eq!(
            got,
            vec![("model_type".to_string(), crate::loc!["body", "owner"])]
        );
        assert_eq!(
            all(r#"{"nested": {"flag": "x"}}"#),
            vec![
                (
                    "bool_type".to_string(),
                    crate::loc!["body", "nested", "flag"]
                ),
                ("missing".to_string(), crate::loc!["body", "name"]),
            ]
        );
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
