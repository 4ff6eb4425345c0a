//! A fixed discount's `amounts` (`{currency: amount}`, Polar's 2026 input and output) and
//! its deprecated single `amount` and `currency`.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{json, Value};

use crate::domain::currency::Currency;
use crate::error::{AppError, FieldError, Given};
use crate::loc;
use crate::validate::Validator;

/// Polar's bound on each amount of a fixed discount (`le=999999999999`).
pub const AMOUNT_MAX: i64 = 999_999_999_999;

/// Polar's model-level refusals of a fixed discount's amounts (at `["body"]`).
pub const BOTH_AMOUNTS: &str = "Value error, Cannot specify both `amount` and `amounts`.";
pub const NO_AMOUNT: &str = "Value error, Must specify either `amount` or `amounts`.";

/// `amounts` as sent: each currency key with its value, in the order sent (the first key
/// is the one a discount falls back on to show `amount` and `currency`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AmountsInput(pub Vec<(String, Value)>);

impl<'de> Deserialize<'de> for AmountsInput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = AmountsInput;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of amounts by currency")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AmountsInput, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    out.push((k, v));
                }
                Ok(AmountsInput(out))
            }
        }
        deserializer.deserialize_map(Ordered)
    }
}

impl AmountsInput {
    /// Amounts given as codes and integers (a form's rows), in that order.
    pub fn of(rows: &[(String, i64)]) -> Self {
        AmountsInput(
            rows.iter()
                .map(|(c, a)| (c.clone(), Value::from(*a)))
                .collect(),
        )
    }

    /// The amounts, each checked (a presentment currency key, an integer 0–999 999 999 999),
    /// at least one; else their 422s in `v`. A repeated key counts once, its last value (as
    /// a JSON object reads).
    pub fn parse(&self, v: &mut Validator) -> Option<Vec<(Currency, i64)>> {
        if self.0.is_empty() {
            v.push(
                FieldError::new(
                    "too_short",
                    loc!["body", "amounts"],
                    "Dictionary should have at least 1 item after validation, not 0",
                    json!({}),
                )
                .with_ctx(json!({"field_type": "Dictionary", "min_length": 1, "actual_length": 0})),
            );
            return None;
        }
        let mut out: Vec<(Currency, i64)> = Vec::with_capacity(self.0.len());
        let mut ok = true;
        for (key, value) in &self.0 {
            let currency = match Currency::parse(key) {
                Ok(c) => Some(c),
                Err(_) => {
                    v.push(crate::api::price::currency_mismatch(
                        loc!["body", "amounts", key.as_str(), "[key]"],
                        key,
                    ));
                    None
                }
            };
            let amount = amount_value(v, loc!["body", "amounts", key.as_str()], value);
            match (currency, amount) {
                (Some(c), Some(a)) => match out.iter_mut().find(|(seen, _)| *seen == c) {
                    Some(slot) => slot.1 = a,
                    None => out.push((c, a)),
                },
                _ => ok = false,
            }
        }
        ok.then_some(out)
    }
}

/// An amount of a fixed discount: an integer 0–999 999 999 999, else its 422 in `v`.
fn amount_value(v: &mut Validator, loc: Vec<Value>, value: &Value) -> Option<i64> {
    let Some(n) = value.as_i64() else {
        let (kind, msg) = match value {
            Value::String(_) => (
                "int_parsing",
                "Input should be a valid integer, unable to parse string as an integer",
            ),
            Value::Number(_) => (
                "int_from_float",
                "Input should be a valid integer, got a number with a fractional part",
            ),
            _ => ("int_type", "Input should be a valid integer"),
        };
        v.push(FieldError::new(kind, loc, msg, value.clone()));
        return None;
    };
    v.int_range(loc, n, Some(0), Some(AMOUNT_MAX)).then_some(n)
}

/// The deprecated `amount`, checked as each of `amounts` is (0–999 999 999 999).
pub fn check_amount(v: &mut Validator, amount: i64) -> bool {
    v.int_range(loc!["body", "amount"], amount, Some(0), Some(AMOUNT_MAX))
}

/// A model-level refusal (no field): the adapter that has the body quotes it.
pub fn model_error(msg: &str) -> AppError {
    AppError::invalid(Vec::new(), msg, Given::none())
}

/// What a fixed discount outputs: `amount` and `currency` in `default` if it has an amount
/// in it, else in its first currency (Polar's rule), and every amount.
pub fn fixed_output(
    amounts: &[(Currency, i64)],
    default: Option<Currency>,
) -> (i64, String, BTreeMap<String, i64>) {
    let shown = default
        .and_then(|d| amounts.iter().find(|(c, _)| *c == d))
        .or(amounts.first());
    let (currency, amount) = shown.copied().unwrap_or((Currency::DEFAULT, 0));
    (
        amount,
        currency.to_string(),
        amounts.iter().map(|(c, a)| (c.to_string(), *a)).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read from text, as a request's body is (a `json!` value has its keys sorted).
    fn read(v: Value) -> AmountsInput {
        serde_json::from_str(&v.to_string()).unwrap()
    }

    #[test]
    fn amounts_keep_their_order_and_read_each_value() {
        let mut v = Validator::new();
        let got: AmountsInput =
            serde_json::from_str(r#"{"usd": 1000, "eur": 900, "jpy": 1500}"#).unwrap();
        let got = got.parse(&mut v);
        assert_eq!(
            got,
            Some(vec![
                (Currency::USD, 1000),
                (Currency::EUR, 900),
                (Currency::JPY, 1500)
            ])
        );
        assert!(v.finish().is_ok());
    }

    #[test]
    fn amounts_refuse_unknown_keys_bad_values_and_nothing() {
        let mut v = Validator::new();
        let got = read(json!({"xau": 5, "eur": -1, "usd": 1_000_000_000_000_i64, "jpy": "a"}))
            .parse(&mut v);
        assert_eq!(got, None);
        let text = match v.finish() {
            Err(crate::error::ApiError::Validation(errors)) => {
                serde_json::to_value(errors).unwrap().to_string()
            }
            other => panic!("{other:?}"),
        };
        for needle in [
            "\"enum\"",
            "[key]",
            "greater_than_equal",
            "less_than_equal",
            "int_parsing",
        ] {
            assert!(text.contains(needle), "{needle} in {text}");
        }
        let mut v = Validator::new();
        assert_eq!(read(json!({})).parse(&mut v), None);
        assert!(v.finish().is_err());
    }

    #[test]
    fn output_shows_the_default_currency_else_the_first() {
        let amounts = [(Currency::USD, 1000), (Currency::EUR, 900)];
        let (a, c, all) = fixed_output(&amounts, Some(Currency::EUR));
        assert_eq!((a, c.as_str()), (900, "eur"));
        assert_eq!(all.len(), 2);
        let (a, c, _) = fixed_output(&amounts, Some(Currency::JPY));
        assert_eq!((a, c.as_str()), (1000, "usd"));
        let (a, c, _) = fixed_output(&amounts, None);
        assert_eq!((a, c.as_str()), (1000, "usd"));
    }
}
