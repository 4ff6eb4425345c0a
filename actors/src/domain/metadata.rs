//! User metadata: at most 50 pairs, keys of 1–40 characters, values a string of 1–500
//! characters, an integer or a boolean. Stored as a tagged enum (bincode cannot store
//! `serde_json::Value`); rendered as a plain JSON object.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MetaValue {
    Str(String),
    Int(i64),
    Bool(bool),
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata(pub BTreeMap<String, MetaValue>);

pub const MAX_PAIRS: usize = 50;
pub const MAX_KEY_CHARS: usize = 40;
pub const MAX_VALUE_CHARS: usize = 500;

impl Metadata {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn to_json(&self) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        MetaValue::Str(s) => Value::from(s.as_str()),
                        MetaValue::Int(i) => Value::from(*i),
                        MetaValue::Bool(b) => Value::from(*b),
                    };
                    (k.clone(), v)
                })
                .collect::<Map<_, _>>(),
        )
    }

    /// `other`'s keys win (Polar merges checkout customer metadata into the customer's so).
    pub fn merge(&mut self, other: &Metadata) {
        for (k, v) in &other.0 {
            self.0.insert(k.clone(), v.clone());
        }
    }
}

/// One rule a metadata object broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataIssue {
    NotAnObject,
    TooManyPairs(usize),
    KeyTooShort(String),
    KeyTooLong(String),
    ValueTooShort(String),
    ValueTooLong(String),
    BadValueType(String),
}

/// Parses and checks a metadata object, reporting every broken rule.
pub fn parse(value: &Value) -> Result<Metadata, Vec<MetadataIssue>> {
    let Value::Object(map) = value else {
        return Err(vec![MetadataIssue::NotAnObject]);
    };
    let mut issues = Vec::new();
    if map.len() > MAX_PAIRS {
        issues.push(MetadataIssue::TooManyPairs(map.len()));
    }
    let mut out = BTreeMap::new();
    for (k, v) in map {
        let chars = k.chars().count();
        if chars == 0 {
            issues.push(MetadataIssue::KeyTooShort(k.clone()));
        } else if chars > MAX_KEY_CHARS {
            issues.push(MetadataIssue::KeyTooLong(k.clone()));
        }
        let parsed = match v {
            Value::String(s) => {
                let n = s.chars().count();
                if n == 0 {
                    issues.push(MetadataIssue::ValueTooShort(k.clone()));
                } else if n > MAX_VALUE_CHARS {
                    issues.push(MetadataIssue::ValueTooLong(k.clone()));
                }
                Some(MetaValue::Str(s.clone()))
            }
            Value::Bool(b) => Some(MetaValue::Bool(*b)),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Some(MetaValue::Int(i)),
                None => {
                    issues.push(MetadataIssue::BadValueType(k.clone()));
                    None
                }
            },
            _ => {
                issues.push(MetadataIssue::BadValueType(k.clone()));
                None
            }
        };
        if let Some(p) = parsed {
            out.insert(k.clone(), p);
        }
    }
    if issues.is_empty() {
        Ok(Metadata(out))
    } else {
        Err(issues)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_strings_ints_and_bools() {
        let m = parse(&json!({"a": "x", "b": 3, "c": true})).unwrap();
        assert_eq!(m.to_json(), json!({"a": "x", "b": 3, "c": true}));
    }

    #[test]
    fn key_length_limits() {
        let k40 = "k".repeat(40);
        let k41 = "k".repeat(41);
        assert!(parse(&json!({ k40: "v" })).is_ok());
        assert_eq!(
            parse(&json!({ k41.clone(): "v" })),
            Err(vec![MetadataIssue::KeyTooLong(k41)])
        );
        assert_eq!(
            parse(&json!({"": "v"})),
            Err(vec![MetadataIssue::KeyTooShort(String::new())])
        );
    }

    #[test]
    fn pair_limit() {
        let fifty: Map<String, Value> = (0..50).map(|i| (format!("k{i}"), json!(i))).collect();
        assert!(parse(&Value::Object(fifty.clone())).is_ok());
        let mut fifty_one = fifty;
        fifty_one.insert("x".into(), json!(1));
        assert_eq!(
            parse(&Value::Object(fifty_one)),
            Err(vec![MetadataIssue::TooManyPairs(51)])
        );
    }

    #[test]
    fn value_rules() {
        assert!(parse(&json!({"a": ""})).is_err());
        assert!(parse(&json!({"a": "x".repeat(501)})).is_err());
        assert!(parse(&json!({"a": "x".repeat(500)})).is_ok());
        assert!(parse(&json!({"a": 1.5})).is_err());
        assert!(parse(&json!({"a": null})).is_err());
        assert!(parse(&json!({"a": {"b": 1}})).is_err());
        assert!(parse(&json!([1])).is_err());
    }

    #[test]
    fn merge_prefers_the_newer_keys() {
        let mut a = parse(&json!({"key": "old", "keep": 1})).unwrap();
        a.merge(&parse(&json!({"key": "updated", "key2": "value2"})).unwrap());
        assert_eq!(
            a.to_json(),
            json!({"key": "updated", "keep": 1, "key2": "value2"})
        );
    }
}
