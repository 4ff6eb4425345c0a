use chrono::TimeZone;
use serde_json::json;

use super::*;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 8, 1, 12, 0, 0).unwrap()
}

fn errors(body: Value) -> Vec<FieldError> {
    match new_events(&body, now()) {
        Err(ApiError::Validation(e)) => e,
        other => panic!("422 expected, got {other:?}"),
    }
}

#[test]
fn reads_both_shapes_and_structured_metadata() {
    let body = json!({"events": [
        {"name": "api_call", "external_customer_id": "usr_1", "external_id": "e1",
         "timestamp": "2026-08-01T11:59:00Z",
         "metadata": {"endpoint": "/v1/search", "tokens": 512, "ratio": 0.5, "ok": true,
                      "_cost": {"amount": "0.01", "currency": "usd"},
                      "_llm": {"vendor": "openai", "model": "gpt", "input_tokens": 1, "output_tokens": 2, "total_tokens": 3}}},
        {"name": "api_call", "customer_id": "992fae2a-2a17-4b7a-8d9e-e287cf90131b"},
        // Both keys: the external shape wins.
        {"name": "x", "customer_id": "992fae2a-2a17-4b7a-8d9e-e287cf90131b", "external_customer_id": "u"}
    ]});
    let events = new_events(&body, now()).unwrap();
    assert_eq!(events.len(), 3);
    assert_eq!(events[0].customer, EventCustomer::External("usr_1".into()));
    assert_eq!(events[0].metadata.values["tokens"], EventValue::Int(512));
    assert_eq!(events[0].metadata.values["ratio"], EventValue::Float(0.5));
    assert_eq!(events[0].metadata.cost.as_ref().unwrap().amount, "0.01");
    assert_eq!(events[0].metadata.llm.as_ref().unwrap().total_tokens, 3);
    assert!(matches!(events[1].customer, EventCustomer::Id(_)));
    assert_eq!(events[1].timestamp, None);
    assert_eq!(events[2].customer, EventCustomer::External("u".into()));
    let json = metadata_json(&events[0].metadata);
    assert_eq!(json["_cost"], json!({"amount": "0.01", "currency": "usd"}));
    assert_eq!(json["tokens"], 512);
}

#[test]
fn neither_customer_key_is_two_missing_errors_tagged_by_shape() {
    let e = errors(json!({"events": [{"name": "a"}]}));
    let locs: Vec<Value> = e.iter().map(|x| json!(x.loc)).collect();
    assert_eq!(
        locs,
        vec![
            json!(["body", "events", 0, "EventCreateCustomer", "customer_id"]),
            json!([
                "body",
                "events",
                0,
                "EventCreateExternalCustomer",
                "external_customer_id"
            ])
        ]
    );
    assert!(e.iter().all(|x| x.kind == "missing"));
}

#[test]
fn future_and_naive_timestamps_and_bad_metadata() {
    let e = errors(json!({"events": [
        {"name": "a", "external_customer_id": "u", "timestamp": "2026-08-01T12:00:01Z"},
        {"name": "a", "external_customer_id": "u", "timestamp": "2026-08-01T10:00:00"},
        {"name": "a", "external_customer_id": "u", "metadata": {"k": "", "n": {"x": 1}, "_cost": {"amount": "1", "currency": "eur"}}}
    ]}));
    let future: Vec<&FieldError> = e.iter().filter(|x| x.loc[2] == 0).collect();
    // The customer shape misses its key and has the timestamp; the external one has it.
    assert_eq!(future.len(), 3);
    assert_eq!(future[0].msg, "Value error, Timestamp must be in the past.");
    assert_eq!(
        future[0].loc,
        loc!["body", "events", 0, "EventCreateCustomer", "timestamp"]
    );
    assert_eq!(
        future[2].loc,
        loc![
            "body",
            "events",
            0,
            "EventCreateExternalCustomer",
            "timestamp"
        ]
    );
    assert!(e
        .iter()
        .any(|x| x.loc[2] == 1 && x.kind == "timezone_aware"));
    let kinds: Vec<&str> = e
        .iter()
        .filter(|x| x.loc[2] == 2 && x.loc[3] == "EventCreateExternalCustomer")
        .map(|x| x.kind.as_str())
        .collect();
    assert_eq!(
        kinds,
        vec!["string_pattern_mismatch", "string_too_short", "string_type"]
    );
}

#[test]
fn names_nul_and_batch_limit() {
    let e = errors(json!({"events": [{"name": "a\u{0}b", "external_customer_id": "u"}]}));
    assert!(e.iter().any(|x| x.msg.contains("NUL")));
    let e = errors(json!({"events": [{"name": "x".repeat(129), "external_customer_id": "u"}]}));
    assert_eq!(e[0].kind, "string_too_long");
    let many: Vec<Value> = (0..=MAX_EVENTS)
        .map(|_| json!({"name": "a", "external_customer_id": "u"}))
        .collect();
    let e = errors(json!({"events": many}));
    assert_eq!(e[0].loc, loc!["body", "events"]);
    assert!(new_events(&json!({"events": []}), now())
        .unwrap()
        .is_empty());
}
