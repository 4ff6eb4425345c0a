use super::*;

#[test]
fn create_reads_polar_example_and_strips_metadata_prefixes() {
    let body = json!({
        "name": "API calls",
        "filter": {"conjunction": "and", "clauses": [
            {"property": "name", "operator": "eq", "value": "api_call"},
            {"conjunction": "or", "clauses": [{"property": "metadata.endpoint", "operator": "like", "value": "/v1/"}]}
        ]},
        "aggregation": {"func": "sum", "property": "metadata.tokens"}
    });
    let m = new_meter(&body).unwrap();
    assert_eq!(m.unit, MeterUnit::Scalar);
    assert_eq!(m.aggregation, Aggregation::Sum("tokens".into()));
    let f = filter_json(&m.filter);
    assert_eq!(f["clauses"][1]["clauses"][0]["property"], "endpoint");
}

#[test]
fn create_reports_every_problem() {
    let body = json!({
        "name": "ab",
        "unit": "custom",
        "filter": {"conjunction": "xor", "clauses": [{"property": "a", "operator": "eq", "value": 1.5}]},
        "aggregation": {"func": "median"}
    });
    let Err(ApiError::Validation(errors)) = new_meter(&body) else {
        panic!("422 expected");
    };
    let kinds: Vec<&str> = errors.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        vec![
            "string_too_short",
            "enum",
            "int_type",
            "union_tag_invalid",
            "value_error"
        ]
    );
    assert_eq!(
        errors[2].loc,
        loc!["body", "filter", "clauses", 0, "value", "int"]
    );
    let Err(ApiError::Validation(errors)) = new_meter(
        &json!({"name": "abc", "filter": {"conjunction": "and", "clauses": []}, "aggregation": {"func": "sum"}}),
    ) else {
        panic!("422 expected");
    };
    assert_eq!(
        errors[0].loc,
        loc!["body", "aggregation", "sum", "property"]
    );
}

#[test]
fn quantities_limits_and_floor() {
    let p = |start: &str, end: &str, interval: &str| QuantitiesParams {
        start_timestamp: Some(start.into()),
        end_timestamp: Some(end.into()),
        interval: Some(interval.into()),
        ..Default::default()
    };
    assert!(quantities_query(p("2026-08-01T00:00:00Z", "2026-08-07T00:00:00Z", "hour")).is_ok());
    let Err(ApiError::Validation(e)) =
        quantities_query(p("2026-08-01T00:00:00Z", "2026-08-09T00:00:00Z", "hour"))
    else {
        panic!("422");
    };
    assert_eq!(e[0].loc, loc!["query"]);
    let Err(ApiError::Validation(e)) =
        quantities_query(p("2022-12-31T00:00:00Z", "2023-01-02T00:00:00Z", "day"))
    else {
        panic!("422");
    };
    assert_eq!(e[0].kind, "greater_than_equal");
    let Err(ApiError::Validation(e)) = quantities_query(p(
        "2026-08-01T00:00:00",
        "2026-08-02T00:00:00Z",
        "fortnight",
    )) else {
        panic!("422");
    };
    assert_eq!(e[0].kind, "timezone_aware");
    assert_eq!(e[1].kind, "enum");
}
