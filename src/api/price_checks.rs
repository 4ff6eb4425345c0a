//! The rules of prices that need no parsing: the currency, the bounds of an amount in
//! its currency, and a product's set of prices per currency (with their 422s).

use serde_json::{json, Value};

use crate::domain::currency::{Currency, CurrencyError};
use crate::domain::product::{self as domain, NewPrice, PriceKind};
use crate::error::FieldError;
use crate::validate::Validator;

/// The 422 of a currency that is not one of Polar's presentment currencies: pydantic's
/// `enum` error of `PresentmentCurrency` (case matters: `"EUR"` is refused).
pub fn currency_mismatch(loc: Vec<Value>, given: &str) -> FieldError {
    let expected = CurrencyError::expected();
    FieldError::new(
        "enum",
        loc,
        format!("Input should be {expected}"),
        Value::from(given),
    )
    .with_ctx(json!({ "expected": expected }))
}

/// The 422 of a price amount outside `currency`'s bounds (Polar's `minimum_price` and
/// `maximum_price`, the bound written in the currency: "Amount must be at least €0.50").
pub fn amount_bounds_error(loc: Vec<Value>, currency: Currency, amount: i64) -> Option<FieldError> {
    let (min, max) = (currency.minimum_amount(), currency.maximum_amount());
    let code = currency.code();
    if amount < min {
        let bound = crate::domain::money::Money::new(min, code);
        return Some(
            FieldError::new(
                "minimum_price",
                loc,
                format!("Amount must be at least {bound}"),
                Value::from(amount),
            )
            .with_ctx(json!({"min_price": min, "currency": code})),
        );
    }
    if amount > max {
        let bound = crate::domain::money::Money::new(max, code);
        return Some(
            FieldError::new(
                "maximum_price",
                loc,
                format!("Amount must be at most {bound}"),
                Value::from(amount),
            )
            .with_ctx(json!({"max_price": max, "currency": code})),
        );
    }
    None
}

/// The rules on a product's set of (non-archived) prices, per currency: 1–2 recurring
/// fixed prices with distinct intervals, or exactly one recurring free price, or exactly
/// one one-time price; every currency with the same types of prices. `input` is the
/// `prices` list as sent, echoed in the errors.
pub fn check_price_set(v: &mut Validator, prices: &[(Currency, &PriceKind)], input: &Value) {
    if let Some((problem, n)) = domain::price_sets_problem(prices, None) {
        v.push(price_set_error(problem, n, input));
    }
}

/// [`check_price_set`] on prices to create.
pub fn check_new_prices(v: &mut Validator, prices: &[NewPrice], input: &Value) {
    let pairs: Vec<(Currency, &PriceKind)> = prices.iter().map(|p| (p.currency, &p.kind)).collect();
    check_price_set(v, &pairs, input);
}

/// The 422 of a price set's `problem`, `n` the number of prices it counted (pydantic's
/// list errors and Polar's messages, at `["body", "prices"]`).
pub fn price_set_error(problem: domain::PriceSetProblem, n: usize, input: &Value) -> FieldError {
    use domain::PriceSetProblem as P;
    let loc = crate::loc!["body", "prices"];
    match problem {
        P::TooShort { min } => FieldError::new(
            "too_short",
            loc,
            format!("List should have at least {min} item after validation, not {n}"),
            input.clone(),
        )
        .with_ctx(json!({"field_type": "List", "min_length": min, "actual_length": n})),
        P::TooLong { max } => {
            let unit = if max == 1 { "item" } else { "items" };
            FieldError::new(
                "too_long",
                loc,
                format!("List should have at most {max} {unit} after validation, not {n}"),
                input.clone(),
            )
            .with_ctx(json!({"field_type": "List", "max_length": max, "actual_length": n}))
        }
        P::Mixed => FieldError::new(
            "value_error",
            loc,
            "Value error, Recurring and one-time prices can't be mixed.",
            input.clone(),
        ),
        P::SameInterval => FieldError::new(
            "value_error",
            loc,
            "Value error, Only one price per interval is allowed.",
            input.clone(),
        ),
        P::DifferentStructure => FieldError::new(
            "value_error",
            loc,
            "All price currencies must define the same set of price types.",
            input.clone(),
        ),
        P::DefaultCurrencyMissing => FieldError::new(
            "value_error",
            loc,
            "The organization's default presentment currency must be present in the prices.",
            input.clone(),
        ),
    }
}
