//! Field checks that collect every failure into one 422, with pydantic's types and messages.

use serde_json::{json, Value};

use crate::error::{ApiError, FieldError};

pub mod embed_hosts;
mod input;

pub use input::{deserialize_all_errors, input};

#[derive(Default)]
pub struct Validator {
    errors: Vec<FieldError>,
}

impl Validator {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, e: FieldError) {
        self.errors.push(e);
    }

    /// A value Polar accepts for a feature Tollgate does not have (seats, meters, another
    /// currency…): a 422 that names the field and says so, never a silent ignore.
    pub fn unsupported(&mut self, loc: Vec<Value>, input: Value, what: &str) {
        self.push(FieldError::new(
            "value_error",
            loc,
            format!("Value error, {what} is not supported by Tollgate."),
            input,
        ));
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    pub fn min_chars(&mut self, loc: Vec<Value>, value: &str, min: usize) -> bool {
        if value.chars().count() < min {
            let unit = if min == 1 { "character" } else { "characters" };
            self.push(
                FieldError::new(
                    "string_too_short",
                    loc,
                    format!("String should have at least {min} {unit}"),
                    Value::from(value),
                )
                .with_ctx(json!({"min_length": min})),
            );
            return false;
        }
        true
    }

    pub fn max_chars(&mut self, loc: Vec<Value>, value: &str, max: usize) -> bool {
        if value.chars().count() > max {
            let unit = if max == 1 { "character" } else { "characters" };
            self.push(
                FieldError::new(
                    "string_too_long",
                    loc,
                    format!("String should have at most {max} {unit}"),
                    Value::from(value),
                )
                .with_ctx(json!({"max_length": max})),
            );
            return false;
        }
        true
    }

    pub fn int_range(
        &mut self,
        loc: Vec<Value>,
        value: i64,
        min: Option<i64>,
        max: Option<i64>,
    ) -> bool {
        if let Some(min) = min {
            if value < min {
                self.push(
                    FieldError::new(
                        "greater_than_equal",
                        loc,
                        format!("Input should be greater than or equal to {min}"),
                        Value::from(value),
                    )
                    .with_ctx(json!({"ge": min})),
                );
                return false;
            }
        }
        if let Some(max) = max {
            if value > max {
                self.push(
                    FieldError::new(
                        "less_than_equal",
                        loc,
                        format!("Input should be less than or equal to {max}"),
                        Value::from(value),
                    )
                    .with_ctx(json!({"le": max})),
                );
                return false;
            }
        }
        true
    }

    /// An absolute http(s) URL with a host.
    pub fn http_url(&mut self, loc: Vec<Value>, value: &str) -> bool {
        let rest = value
            .strip_prefix("https://")
            .or_else(|| value.strip_prefix("http://"));
        let ok = match rest {
            Some(rest) => {
                let host = rest.split(['/', '?', '#']).next().unwrap_or("");
                !host.is_empty()
                    && !host.contains(char::is_whitespace)
                    && !value.contains(char::is_whitespace)
            }
            None => false,
        };
        if !ok {
            let (kind, msg) = if value.contains("://") {
                ("url_scheme", "URL scheme should be 'http' or 'https'")
            } else {
                (
                    "url_parsing",
                    "Input should be a valid URL, relative URL without a base",
                )
            };
            self.push(FieldError::new(kind, loc, msg, Value::from(value)));
        }
        ok
    }

    /// A name that reaches a message header (an organization's, a product's, a customer's):
    /// no control characters (CR and LF would end the header) and no Unicode line or
    /// paragraph separators.
    pub fn header_safe(&mut self, loc: Vec<Value>, value: &str) -> bool {
        if is_header_safe(value) {
            return true;
        }
        self.push(
            FieldError::new(
                "string_pattern_mismatch",
                loc,
                format!("String should match pattern '{HEADER_SAFE_PATTERN}'"),
                Value::from(value),
            )
            .with_ctx(json!({"pattern": HEADER_SAFE_PATTERN})),
        );
        false
    }

    pub fn email(&mut self, loc: Vec<Value>, value: &str) -> bool {
        if is_email(value) {
            return true;
        }
        self.push(FieldError::new(
            "value_error",
            loc,
            "value is not a valid email address: The email address is not valid.",
            Value::from(value),
        ));
        false
    }

    pub fn finish(self) -> Result<(), ApiError> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::Validation(self.errors))
        }
    }
}

/// The pattern [`Validator::header_safe`] names in its error: no control character, no line
/// or paragraph separator.
pub const HEADER_SAFE_PATTERN: &str = r"^[^\p{Cc}\u2028\u2029]*$";

/// Whether `value` can go into a header as it is: no control characters (`\r`, `\n`, tab,
/// NUL, DEL, C1) and no U+2028 / U+2029.
pub fn is_header_safe(value: &str) -> bool {
    !value
        .chars()
        .any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}')
}

/// A pragmatic address check: one `@`, a non-empty local part, a dotted domain, no spaces.
pub fn is_email(value: &str) -> bool {
    let Some((local, domain)) = value.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && local.len() <= 64
        && !local.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains("..")
        && value.len() <= 254
        && !value.chars().any(|c| c.is_whitespace() || c.is_control())
        && domain
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_safe_names() {
        for ok in ["Shop", "Café Ünïcode ✓", "A - B (c)", ""] {
            assert!(is_header_safe(ok), "{ok:?}");
        }
        for bad in [
            "Shop\nX",
            "Shop\r\nBcc: x@y.z",
            "a\tb",
            "a\0",
            "a\u{7f}",
            "a\u{85}",
            "a\u{2028}",
        ] {
            assert!(!is_header_safe(bad), "{bad:?}");
        }
        let mut v = Validator::new();
        assert!(!v.header_safe(crate::loc!["body", "name"], "Shop\nX"));
        let Err(ApiError::Validation(errors)) = v.finish() else {
            panic!("a validation error");
        };
        assert_eq!(errors[0].kind, "string_pattern_mismatch");
    }

    #[test]
    fn emails() {
        for ok in ["a@b.co", "first.last+tag@example.org", "x@sub.domain.io"] {
            assert!(is_email(ok), "{ok}");
        }
        for bad in [
            "", "a", "a@b", "@b.co", "a@.co", "a@b.co.", "a b@c.de", "a@b..co", "a@b_c.de",
        ] {
            assert!(!is_email(bad), "{bad}");
        }
    }

    #[test]
    fn collects_all_errors() {
        let mut v = Validator::new();
        v.min_chars(crate::loc!["body", "name"], "ab", 3);
        v.http_url(crate::loc!["body", "avatar_url"], "ftp://x");
        v.int_range(crate::loc!["body", "n"], 101, Some(0), Some(100));
        match v.finish() {
            Err(ApiError::Validation(items)) => {
                let kinds: Vec<&str> = items.iter().map(|i| i.kind.as_str()).collect();
                assert_eq!(
                    kinds,
                    vec!["string_too_short", "url_scheme", "less_than_equal"]
                );
                assert_eq!(items[0].msg, "String should have at least 3 characters");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn urls() {
        let mut v = Validator::new();
        assert!(v.http_url(vec![], "https://example.com/a.png"));
        assert!(v.http_url(vec![], "http://localhost:8000"));
        assert!(!v.http_url(vec![], "example.com"));
        assert!(!v.http_url(vec![], "https://"));
    }
}
