use std::collections::BTreeMap;

use chrono::TimeZone;

use super::*;
use crate::domain::ids::{EventId, OrganizationId};
use crate::domain::usage_event::{EventCost, EventLlm, EventMetadata, EventSource};

fn event(values: &[(&str, EventValue)]) -> UsageEvent {
    UsageEvent {
        id: EventId::new(),
        organization_id: OrganizationId::new(),
        name: "api_call".into(),
        source: EventSource::User,
        timestamp: chrono::Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
        ingested_at: chrono::Utc.timestamp_opt(1_700_000_001, 0).unwrap(),
        customer_id: None,
        external_customer_id: Some("u".into()),
        external_member_id: None,
        external_id: None,
        parent_id: None,
        metadata: EventMetadata {
            values: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
            cost: Some(EventCost {
                amount: "0.25".into(),
                amount_was_string: false,
                currency: "usd".into(),
            }),
            llm: Some(EventLlm {
                vendor: "openai".into(),
                model: "gpt".into(),
                prompt: None,
                response: None,
                input_tokens: 10,
                cached_input_tokens: None,
                output_tokens: 5,
                total_tokens: 15,
            }),
        },
    }
}

fn clause(property: &str, operator: &str, value: ClauseValue) -> Clause {
    Clause {
        property: property.into(),
        operator: Operator::parse(operator).unwrap(),
        value,
    }
}

fn s(v: &str) -> ClauseValue {
    ClauseValue::Str(v.into())
}

#[test]
fn name_source_and_timestamp_need_their_types() {
    let e = event(&[]);
    assert!(clause_matches(&clause("name", "eq", s("api_call")), &e));
    assert!(!clause_matches(
        &clause("name", "eq", ClauseValue::Int(1)),
        &e
    ));
    // Not even `ne`: a non-string value never matches the name.
    assert!(!clause_matches(
        &clause("name", "ne", ClauseValue::Int(1)),
        &e
    ));
    assert!(clause_matches(&clause("source", "eq", s("user")), &e));
    assert!(clause_matches(&clause("name", "like", s("_ca")), &e));
    assert!(clause_matches(&clause("name", "not_like", s("zzz")), &e));
    assert!(clause_matches(
        &clause("timestamp", "gte", ClauseValue::Int(1_700_000_000)),
        &e
    ));
    assert!(!clause_matches(
        &clause("timestamp", "gt", ClauseValue::Int(1_700_000_000)),
        &e
    ));
    assert!(!clause_matches(&clause("timestamp", "gt", s("1")), &e));
}

#[test]
fn missing_properties_fail_every_operator() {
    let e = event(&[]);
    for op in Operator::ALL {
        assert!(
            !clause_matches(&clause("nope", op.as_str(), s("x")), &e),
            "{op:?}"
        );
    }
}

#[test]
fn python_comparisons() {
    let e = event(&[
        ("n", EventValue::Int(1)),
        ("f", EventValue::Float(1.0)),
        ("t", EventValue::Bool(true)),
        ("s", EventValue::Str("abc".into())),
    ]);
    // 1 == 1.0, True == 1.
    assert!(clause_matches(&clause("f", "eq", ClauseValue::Int(1)), &e));
    assert!(clause_matches(&clause("t", "eq", ClauseValue::Int(1)), &e));
    assert!(clause_matches(
        &clause("n", "eq", ClauseValue::Bool(true)),
        &e
    ));
    // A string is never equal to a number, and unordered with it.
    assert!(!clause_matches(&clause("s", "eq", ClauseValue::Int(1)), &e));
    assert!(clause_matches(&clause("s", "ne", ClauseValue::Int(1)), &e));
    assert!(!clause_matches(&clause("s", "gt", ClauseValue::Int(1)), &e));
    assert!(!clause_matches(&clause("n", "lt", s("z")), &e));
    // Strings order by code point.
    assert!(clause_matches(&clause("s", "lt", s("abd")), &e));
    assert!(clause_matches(&clause("s", "gte", s("abc")), &e));
    // `like` compares Python's `str`: True is "True", 1.0 is "1.0".
    assert!(clause_matches(&clause("t", "like", s("Tru")), &e));
    assert!(clause_matches(&clause("f", "like", s("1.0")), &e));
    assert!(clause_matches(
        &clause("n", "like", ClauseValue::Int(1)),
        &e
    ));
    assert!(clause_matches(&clause("s", "like", s("b")), &e));
    assert!(clause_matches(&clause("s", "not_like", s("x")), &e));
    assert!(!clause_matches(&clause("s", "not_like", s("a")), &e));
}

#[test]
fn structured_metadata_paths() {
    let e = event(&[]);
    assert!(clause_matches(
        &clause("_llm.input_tokens", "eq", ClauseValue::Int(10)),
        &e
    ));
    assert!(clause_matches(
        &clause("metadata._llm.vendor", "eq", s("openai")),
        &e
    ));
    assert!(clause_matches(
        &clause("_cost.currency", "eq", s("usd")),
        &e
    ));
    assert_eq!(metadata_value(&e, "_cost.amount"), Some(Py::Float(0.25)));
    assert_eq!(metadata_value(&e, "_llm.prompt"), None);
}

#[test]
fn filters_nest_and_empty_matches_all() {
    let e = event(&[("tier", EventValue::Str("pro".into()))]);
    let empty_and = Filter {
        conjunction: Conjunction::And,
        clauses: vec![],
    };
    let empty_or = Filter {
        conjunction: Conjunction::Or,
        clauses: vec![],
    };
    assert!(filter_matches(&empty_and, &e));
    assert!(filter_matches(&empty_or, &e));
    let f = Filter {
        conjunction: Conjunction::And,
        clauses: vec![
            FilterNode::Clause(clause("name", "eq", s("api_call"))),
            FilterNode::Filter(Filter {
                conjunction: Conjunction::Or,
                clauses: vec![
                    FilterNode::Clause(clause("tier", "eq", s("free"))),
                    FilterNode::Clause(clause("tier", "eq", s("pro"))),
                ],
            }),
        ],
    };
    assert!(filter_matches(&f, &e));
    let other = event(&[("tier", EventValue::Str("team".into()))]);
    assert!(!filter_matches(&f, &other));
}

#[test]
fn aggregation_gate() {
    let e = event(&[
        ("n", EventValue::Int(3)),
        ("b", EventValue::Bool(true)),
        ("s", EventValue::Str("x".into())),
    ]);
    assert_eq!(
        contribution(&Aggregation::Sum("n".into()), &e),
        Some(Contribution::Value(3.0))
    );
    // Booleans and strings are not numbers; a missing property is not counted.
    assert_eq!(contribution(&Aggregation::Sum("b".into()), &e), None);
    assert_eq!(contribution(&Aggregation::Max("s".into()), &e), None);
    assert_eq!(contribution(&Aggregation::Avg("zz".into()), &e), None);
    assert_eq!(
        contribution(&Aggregation::Sum("_llm.total_tokens".into()), &e),
        Some(Contribution::Value(15.0))
    );
    assert_eq!(
        contribution(&Aggregation::Count, &e),
        Some(Contribution::Count)
    );
    assert_eq!(
        contribution(&Aggregation::Unique("zz".into()), &e),
        Some(Contribution::Member(None))
    );
    // 1 and 1.0 are one distinct value, 1 and "1" two.
    assert_eq!(Py::Int(1).member(), Py::Float(1.0).member());
    assert_ne!(Py::Int(1).member(), Py::Str("1".into()).member());
    assert_ne!(Py::Bool(true).member(), Py::Int(1).member());
}

#[test]
fn python_float_reprs() {
    for (f, s) in [
        (1.0, "1.0"),
        (0.5, "0.5"),
        (-2.25, "-2.25"),
        (1e16, "1e+16"),
        (1.5e16, "1.5e+16"),
        (123456789012345.6, "123456789012345.6"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (0.1, "0.1"),
        (100.0, "100.0"),
        (0.0, "0.0"),
    ] {
        assert_eq!(python_float_repr(f), s, "{f}");
    }
}
