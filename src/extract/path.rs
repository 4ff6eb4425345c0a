use std::str::FromStr;

use serde_json::Value;

use crate::error::{ApiError, FieldError};

/// Parses a UUID path parameter; a malformed one is a 422 at `["path", name]`, as FastAPI
/// answers.
pub fn path_id<T: FromStr<Err = uuid::Error>>(name: &str, raw: &str) -> Result<T, ApiError> {
    T::from_str(raw).map_err(|e| {
        ApiError::validation(FieldError::new(
            "uuid_parsing",
            crate::loc!["path", name],
            format!("Input should be a valid UUID, {e}"),
            Value::String(raw.to_string()),
        ))
    })
}
