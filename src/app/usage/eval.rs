//! Whether an event matches a meter, and what it adds: Polar's Python evaluation
//! (`meter/filter.py` `FilterClause.matches`, `meter/aggregation.py` `matches`), the one
//! evaluator Tollgate uses for ingestion, quantities and customer meters alike (Polar's SQL
//! path differs on mixed types; see docs/usage.md).
//!
//! * `name` and `source` match only a string value; `timestamp` only an integer, compared
//!   with the event's epoch seconds.
//! * Any other property is a dotted path into the metadata (`_cost.amount`,
//!   `_llm.input_tokens`); a missing value makes the clause false, for every operator.
//! * Comparisons are Python's: numbers (booleans included: `True == 1`) compare as numbers,
//!   strings as strings, anything else is unequal and unordered (a `TypeError`, false).
//!   `like` is `str(expected) in str(actual)` with Python's `str` (`True`, `1.0`).
//! * An empty clause list matches every event, for both conjunctions.

use std::cmp::Ordering;

use crate::domain::meter::{Aggregation, Clause, ClauseValue, Conjunction, Filter, FilterNode};
use crate::domain::meter::{Meter, Operator};
use crate::domain::usage_event::{EventValue, UsageEvent};

/// A value an event yields for a property, as Python sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Py {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Py {
    fn number(&self) -> Option<f64> {
        match self {
            Py::Int(i) => Some(*i as f64),
            Py::Float(f) => Some(*f),
            Py::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            Py::Str(_) => None,
        }
    }

    /// Python's `str(value)`.
    pub fn python_str(&self) -> String {
        match self {
            Py::Str(s) => s.clone(),
            Py::Int(i) => i.to_string(),
            Py::Float(f) => python_float_repr(*f),
            Py::Bool(true) => "True".into(),
            Py::Bool(false) => "False".into(),
        }
    }

    /// The value an aggregation reads (sum/max/min/avg): numbers only, not booleans.
    pub fn aggregable(&self) -> Option<f64> {
        match self {
            Py::Int(i) => Some(*i as f64),
            Py::Float(f) if f.is_finite() => Some(*f),
            _ => None,
        }
    }

    /// The bytes that identify the value among the distinct values of a `unique` meter
    /// (Polar counts distinct JSON values: `1` and `1.0` are one, `1` and `"1"` two).
    pub fn member(&self) -> Vec<u8> {
        match self {
            Py::Str(s) => [b"s".as_slice(), s.as_bytes()].concat(),
            Py::Bool(b) => vec![b'b', u8::from(*b)],
            Py::Int(i) => [b"n".as_slice(), i.to_string().as_bytes()].concat(),
            Py::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                [b"n".as_slice(), (*f as i64).to_string().as_bytes()].concat()
            }
            Py::Float(f) => [b"n".as_slice(), python_float_repr(*f).as_bytes()].concat(),
        }
    }
}

/// Python's `repr(float)`: the shortest round-trip digits, positional for exponents in
/// [-4, 16), scientific (`1e+16`, `1e-05`) otherwise.
pub fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `-1.2345e-5`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp >= 0 {
            let int_len = exp + 1;
            if n <= int_len {
                format!("{digits}{}.0", "0".repeat((int_len - n) as usize))
            } else {
                let (a, b) = digits.split_at(int_len as usize);
                format!("{a}.{b}")
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        };
        format!("{sign}{body}")
    } else {
        let (first, rest) = digits.split_at(1);
        let mant = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

fn value_of(v: &EventValue) -> Py {
    match v {
        EventValue::Str(s) => Py::Str(s.clone()),
        EventValue::Int(i) => Py::Int(*i),
        EventValue::Float(f) => Py::Float(*f),
        EventValue::Bool(b) => Py::Bool(*b),
    }
}

/// The metadata value at a dotted path (`a` or `_cost.amount`), if any.
pub fn metadata_value(event: &UsageEvent, path: &str) -> Option<Py> {
    let path = path.strip_prefix("metadata.").unwrap_or(path);
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let m = &event.metadata;
    match (head, rest) {
        ("_cost", Some(field)) => {
            let cost = m.cost.as_ref()?;
            match field {
                "amount" => cost.amount.parse::<f64>().ok().map(|f| {
                    if f.fract() == 0.0 && !cost.amount.contains('.') && f.abs() < 9.0e15 {
                        Py::Int(f as i64)
                    } else {
                        Py::Float(f)
                    }
                }),
                "currency" => Some(Py::Str(cost.currency.clone())),
                _ => None,
            }
        }
        ("_llm", Some(field)) => {
            let llm = m.llm.as_ref()?;
            match field {
                "vendor" => Some(Py::Str(llm.vendor.clone())),
                "model" => Some(Py::Str(llm.model.clone())),
                "prompt" => llm.prompt.clone().map(Py::Str),
                "response" => llm.response.clone().map(Py::Str),
                "input_tokens" => Some(Py::Int(llm.input_tokens)),
                "cached_input_tokens" => llm.cached_input_tokens.map(Py::Int),
                "output_tokens" => Some(Py::Int(llm.output_tokens)),
                "total_tokens" => Some(Py::Int(llm.total_tokens)),
                _ => None,
            }
        }
        (key, None) => m.values.get(key).map(value_of),
        // A plain value has no fields.
        (_, Some(_)) => None,
    }
}

fn expected(v: &ClauseValue) -> Py {
    match v {
        ClauseValue::Str(s) => Py::Str(s.clone()),
        ClauseValue::Int(i) => Py::Int(i64::from(*i)),
        ClauseValue::Bool(b) => Py::Bool(*b),
    }
}

/// Python's `actual <op> expected`, a `TypeError` being false.
fn compare(actual: &Py, op: Operator, expected: &Py) -> bool {
    if let Operator::Like | Operator::NotLike = op {
        let found = actual.python_str().contains(&expected.python_str());
        return (op == Operator::Like) == found;
    }
    let ordering: Option<Ordering> = match (actual, expected) {
        (Py::Str(a), Py::Str(b)) => Some(a.as_str().cmp(b.as_str())),
        (Py::Str(_), _) | (_, Py::Str(_)) => None,
        (a, b) => match (a, b) {
            // Exact for integers (no rounding through f64).
            (Py::Int(x), Py::Int(y)) => Some(x.cmp(y)),
            _ => a
                .number()
                .zip(b.number())
                .and_then(|(x, y)| x.partial_cmp(&y)),
        },
    };
    match op {
        Operator::Eq => ordering == Some(Ordering::Equal),
        // `!=` never raises: mixed types are unequal.
        Operator::Ne => ordering != Some(Ordering::Equal),
        Operator::Gt => ordering == Some(Ordering::Greater),
        Operator::Gte => matches!(ordering, Some(Ordering::Greater | Ordering::Equal)),
        Operator::Lt => ordering == Some(Ordering::Less),
        Operator::Lte => matches!(ordering, Some(Ordering::Less | Ordering::Equal)),
        Operator::Like | Operator::NotLike => false,
    }
}

/// Whether one clause holds for the event.
pub fn clause_matches(clause: &Clause, event: &UsageEvent) -> bool {
    let expected = expected(&clause.value);
    let actual = match clause.property.as_str() {
        "name" | "source" => {
            if !matches!(expected, Py::Str(_)) {
                return false;
            }
            Py::Str(if clause.property == "name" {
                event.name.clone()
            } else {
                event.source.as_str().to_string()
            })
        }
        "timestamp" => {
            if !matches!(expected, Py::Int(_)) {
                return false;
            }
            Py::Int(event.timestamp.timestamp())
        }
        path => match metadata_value(event, path) {
            Some(v) => v,
            None => return false,
        },
    };
    compare(&actual, clause.operator, &expected)
}

/// Whether the filter holds for the event (an empty filter holds for every event).
pub fn filter_matches(filter: &Filter, event: &UsageEvent) -> bool {
    if filter.clauses.is_empty() {
        return true;
    }
    let one = |node: &FilterNode| match node {
        FilterNode::Clause(c) => clause_matches(c, event),
        FilterNode::Filter(f) => filter_matches(f, event),
    };
    match filter.conjunction {
        Conjunction::And => filter.clauses.iter().all(one),
        Conjunction::Or => filter.clauses.iter().any(one),
    }
}

/// What an event gives a meter's aggregation: for `sum/max/min/avg`, its number; for
/// `unique`, the member (none when the property is missing); for `count`, nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Contribution {
    Count,
    Value(f64),
    Member(Option<Vec<u8>>),
}

/// The property's value for an aggregation (the event's own fields included).
fn property_value(event: &UsageEvent, property: &str) -> Option<Py> {
    match property {
        "name" => Some(Py::Str(event.name.clone())),
        "source" => Some(Py::Str(event.source.as_str().into())),
        "timestamp" => Some(Py::Int(event.timestamp.timestamp())),
        path => metadata_value(event, path),
    }
}

/// The aggregation gate (`aggregation.matches`) and what the event contributes, or `None`
/// when the meter does not count it: `sum/max/min/avg` need a number (not a boolean).
pub fn contribution(aggregation: &Aggregation, event: &UsageEvent) -> Option<Contribution> {
    match aggregation {
        Aggregation::Count => Some(Contribution::Count),
        Aggregation::Unique(p) => Some(Contribution::Member(
            property_value(event, p).map(|v| v.member()),
        )),
        Aggregation::Sum(p) | Aggregation::Max(p) | Aggregation::Min(p) | Aggregation::Avg(p) => {
            property_value(event, p)
                .and_then(|v| v.aggregable())
                .map(Contribution::Value)
        }
    }
}

/// What the event gives the meter, if the meter counts it (filter, then aggregation gate).
pub fn meter_contribution(meter: &Meter, event: &UsageEvent) -> Option<Contribution> {
    if filter_matches(&meter.filter, event) {
        contribution(&meter.aggregation, event)
    } else {
        None
    }
}

#[cfg(test)]
#[path = "eval_tests.rs"]
mod tests;
