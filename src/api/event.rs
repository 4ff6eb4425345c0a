//! Events in Polar's shapes (`polar-2026.md` §7.1–7.2): the `EventsIngest` body read from
//! the raw JSON with pydantic's errors, the `Event` views (user and system), and the list's
//! query.
//!
//! An event is one of two shapes, `EventCreateCustomer` (with `customer_id`) and
//! `EventCreateExternalCustomer` (with `external_customer_id`, which wins when both are
//! given). When an event fails, its errors are reported for both shapes, the shape's name
//! in the `loc` after the index (pydantic's union errors):
//! `["body", "events", 0, "EventCreateCustomer", "timestamp"]`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{json, Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use super::customer::CustomerView;
use crate::domain::customer::Customer;
use crate::domain::usage_event::{
    EventCost, EventCustomer, EventLlm, EventMetadata, EventSource, EventValue, NewEvent,
    UsageEvent,
};
use crate::error::{ApiError, FieldError};
use crate::loc;

/// The most events one ingestion takes (Tollgate's limit; Polar has none).
pub const MAX_EVENTS: usize = 1000;

/// `EventsIngestResponse`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventsIngestResponse {
    pub inserted: u64,
    pub duplicates: u64,
}

/// `EventsIngest` (documented shape): `{"events": [EventCreateCustomer |
/// EventCreateExternalCustomer, …]}`.
#[derive(Debug, Clone, ToSchema)]
pub struct EventsIngest {
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<Value>,
}

/// `Event`: a user event, or one of Tollgate's system events (`meter.credited`,
/// `meter.reset`), discriminated by `source`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Event)]
pub struct EventView {
    pub id: Uuid,
    pub timestamp: DateTime<Utc>,
    pub organization_id: Uuid,
    pub customer_id: Option<Uuid>,
    pub customer: Option<CustomerView>,
    pub external_customer_id: Option<String>,
    pub member_id: Option<Uuid>,
    pub external_member_id: Option<String>,
    pub child_count: u64,
    pub parent_id: Option<String>,
    pub label: String,
    pub name: String,
    /// `user` or `system`.
    pub source: String,
    #[schema(value_type = Object)]
    pub metadata: Value,
}

/// The label of an event: a system event's fixed one, else its name.
pub fn label(e: &UsageEvent) -> String {
    match (e.source, e.name.as_str()) {
        (EventSource::System, "meter.credited") => "Meter Credited".into(),
        (EventSource::System, "meter.reset") => "Meter Reset".into(),
        _ => e.name.clone(),
    }
}

/// An event's metadata as JSON.
pub fn metadata_json(m: &EventMetadata) -> Value {
    let mut out: Map<String, Value> = m
        .values
        .iter()
        .map(|(k, v)| {
            let v = match v {
                EventValue::Str(s) => Value::from(s.as_str()),
                EventValue::Int(i) => Value::from(*i),
                EventValue::Float(f) => Value::from(*f),
                EventValue::Bool(b) => Value::from(*b),
            };
            (k.clone(), v)
        })
        .collect();
    if let Some(c) = &m.cost {
        let amount = if c.amount_was_string {
            Value::from(c.amount.as_str())
        } else {
            serde_json::from_str::<Value>(&c.amount)
                .unwrap_or_else(|_| Value::from(c.amount.as_str()))
        };
        out.insert(
            "_cost".into(),
            json!({"amount": amount, "currency": c.currency}),
        );
    }
    if let Some(l) = &m.llm {
        let mut llm = json!({
            "vendor": l.vendor, "model": l.model,
            "input_tokens": l.input_tokens, "output_tokens": l.output_tokens,
            "total_tokens": l.total_tokens,
        });
        if let Some(o) = llm.as_object_mut() {
            if let Some(p) = &l.prompt {
                o.insert("prompt".into(), Value::from(p.as_str()));
            }
            if let Some(r) = &l.response {
                o.insert("response".into(), Value::from(r.as_str()));
            }
            if let Some(c) = l.cached_input_tokens {
                o.insert("cached_input_tokens".into(), Value::from(c));
            }
        }
        out.insert("_llm".into(), llm);
    }
    Value::Object(out)
}

impl EventView {
    pub fn new(e: &UsageEvent, customer: Option<&Customer>) -> Self {
        EventView {
            id: e.id.uuid(),
            timestamp: e.timestamp,
            organization_id: e.organization_id.uuid(),
            customer_id: e.customer_id.map(|c| c.uuid()),
            customer: customer.map(CustomerView::from),
            external_customer_id: e.external_customer_id.clone(),
            member_id: None,
            external_member_id: e.external_member_id.clone(),
            child_count: 0,
            parent_id: e.parent_id.clone(),
            label: label(e),
            name: e.name.clone(),
            source: e.source.as_str().to_string(),
            metadata: metadata_json(&e.metadata),
        }
    }
}

/// One problem of an event, its `loc` after the event (and after the shape's name).
struct Problem {
    kind: &'static str,
    at: Vec<Value>,
    msg: String,
    input: Value,
    ctx: Option<Value>,
}

impl Problem {
    fn new(kind: &'static str, at: Vec<Value>, msg: impl Into<String>, input: Value) -> Self {
        Problem {
            kind,
            at,
            msg: msg.into(),
            input,
            ctx: None,
        }
    }

    fn ctx(mut self, ctx: Value) -> Self {
        self.ctx = Some(ctx);
        self
    }

    fn at(&self, base: &[Value]) -> FieldError {
        let mut loc = base.to_vec();
        loc.extend(self.at.iter().cloned());
        let e = FieldError::new(self.kind, loc, self.msg.clone(), self.input.clone());
        match &self.ctx {
            Some(c) => e.with_ctx(c.clone()),
            None => e,
        }
    }
}

fn missing(field: &str) -> Problem {
    Problem::new("missing", loc![field], "Field required", Value::Null)
}

fn has_nul(s: &str) -> bool {
    s.contains('\0')
}

fn nul(at: Vec<Value>, s: &str) -> Problem {
    Problem::new(
        "value_error",
        at,
        "Value error, NUL characters are not allowed.",
        Value::from(s),
    )
}

fn opt_string(map: &Map<String, Value>, key: &str, p: &mut Vec<Problem>) -> Option<String> {
    match map.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if has_nul(s) => {
            p.push(nul(loc![key], s));
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            p.push(Problem::new(
                "string_type",
                loc![key],
                "Input should be a valid string",
                other.clone(),
            ));
            None
        }
    }
}

fn opt_uuid(map: &Map<String, Value>, key: &str, p: &mut Vec<Problem>) -> Option<Uuid> {
    match map.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match s.parse::<Uuid>() {
            Ok(u) => Some(u),
            Err(e) => {
                p.push(Problem::new(
                    "uuid_parsing",
                    loc![key],
                    format!("Input should be a valid UUID, {e}"),
                    Value::from(s.as_str()),
                ));
                None
            }
        },
        Some(other) => {
            p.push(Problem::new(
                "uuid_type",
                loc![key],
                "UUID input should be a string, bytes or UUID object",
                other.clone(),
            ));
            None
        }
    }
}

/// An aware timestamp, in the past of `now`.
fn timestamp(v: &Value, now: DateTime<Utc>, p: &mut Vec<Problem>) -> Option<DateTime<Utc>> {
    let raw = match v {
        Value::Null => return None,
        Value::String(s) => s.clone(),
        other => {
            p.push(Problem::new(
                "datetime_type",
                loc!["timestamp"],
                "Input should be a valid datetime",
                other.clone(),
            ));
            return None;
        }
    };
    let t = match DateTime::parse_from_rfc3339(raw.trim()) {
        Ok(t) => t.with_timezone(&Utc),
        Err(_) => {
            let naive = chrono::NaiveDateTime::parse_from_str(raw.trim(), "%Y-%m-%dT%H:%M:%S%.f")
                .is_ok()
                || chrono::NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d").is_ok();
            p.push(if naive {
                Problem::new(
                    "timezone_aware",
                    loc!["timestamp"],
                    "Input should have timezone info",
                    Value::from(raw.as_str()),
                )
            } else {
                Problem::new(
                    "datetime_from_date_parsing",
                    loc!["timestamp"],
                    "Input should be a valid datetime or date, invalid character in year",
                    Value::from(raw.as_str()),
                )
                .ctx(json!({"error": "invalid character in year"}))
            });
            return None;
        }
    };
    if t > now {
        p.push(
            Problem::new(
                "value_error",
                loc!["timestamp"],
                "Value error, Timestamp must be in the past.",
                Value::from(raw.as_str()),
            )
            .ctx(json!({"error": {}})),
        );
        return None;
    }
    Some(t)
}

fn plain_value(key: &str, v: &Value, p: &mut Vec<Problem>) -> Option<EventValue> {
    let at = |tag: &str| loc!["metadata", key, tag];
    match v {
        Value::String(s) if has_nul(s) => {
            p.push(nul(at("str"), s));
            None
        }
        Value::String(s) if s.is_empty() => {
            p.push(
                Problem::new(
                    "string_too_short",
                    at("str"),
                    "String should have at least 1 character",
                    v.clone(),
                )
                .ctx(json!({"min_length": 1})),
            );
            None
        }
        Value::String(s) if s.chars().count() > 500 => {
            p.push(
                Problem::new(
                    "string_too_long",
                    at("str"),
                    "String should have at most 500 characters",
                    v.clone(),
                )
                .ctx(json!({"max_length": 500})),
            );
            None
        }
        Value::String(s) => Some(EventValue::Str(s.clone())),
        Value::Bool(b) => Some(EventValue::Bool(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Some(EventValue::Int(i)),
            None => n.as_f64().map(EventValue::Float),
        },
        other => {
            p.push(Problem::new(
                "string_type",
                loc!["metadata", key],
                "Input should be a valid string, integer, number or boolean",
                other.clone(),
            ));
            None
        }
    }
}

/// A decimal of at most 17 digits, 12 after the point, as plain text.
fn decimal(v: &Value) -> Option<(String, bool)> {
    let (text, was_string) = match v {
        Value::String(s) => (s.trim().to_string(), true),
        Value::Number(n) => (n.to_string(), false),
        _ => return None,
    };
    let unsigned = text.strip_prefix('-').unwrap_or(&text);
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let ok = !int.is_empty()
        && int.chars().all(|c| c.is_ascii_digit())
        && frac.chars().all(|c| c.is_ascii_digit())
        && frac.len() <= 12
        && int.trim_start_matches('0').len() + frac.len() <= 17;
    ok.then_some((text, was_string))
}

fn cost(v: &Value, p: &mut Vec<Problem>) -> Option<EventCost> {
    let Value::Object(map) = v else {
        p.push(Problem::new(
            "dict_type",
            loc!["metadata", "_cost"],
            "Input should be a valid dictionary",
            v.clone(),
        ));
        return None;
    };
    let amount = match map.get("amount") {
        None => {
            p.push(Problem::new(
                "missing",
                loc!["metadata", "_cost", "amount"],
                "Field required",
                Value::Null,
            ));
            None
        }
        Some(a) => match decimal(a) {
            Some(d) => Some(d),
            None => {
                p.push(Problem::new(
                    "decimal_parsing",
                    loc!["metadata", "_cost", "amount"],
                    "Input should be a valid decimal",
                    a.clone(),
                ));
                None
            }
        },
    };
    let currency = match map.get("currency") {
        None => {
            p.push(Problem::new(
                "missing",
                loc!["metadata", "_cost", "currency"],
                "Field required",
                Value::Null,
            ));
            None
        }
        Some(Value::String(c)) if c == crate::domain::currency::Currency::USD.code() => {
            Some(c.clone())
        }
        Some(other) => {
            p.push(
                Problem::new(
                    "string_pattern_mismatch",
                    loc!["metadata", "_cost", "currency"],
                    format!(
                        "String should match pattern '{}'",
                        crate::domain::currency::Currency::USD.code()
                    ),
                    other.clone(),
                )
                .ctx(json!({"pattern": crate::domain::currency::Currency::USD.code()})),
            );
            None
        }
    };
    let ((amount, amount_was_string), currency) = (amount?, currency?);
    Some(EventCost {
        amount,
        amount_was_string,
        currency,
    })
}

fn llm(v: &Value, p: &mut Vec<Problem>) -> Option<EventLlm> {
    let Value::Object(map) = v else {
        p.push(Problem::new(
            "dict_type",
            loc!["metadata", "_llm"],
            "Input should be a valid dictionary",
            v.clone(),
        ));
        return None;
    };
    let before = p.len();
    let s = |k: &str, required: bool, p: &mut Vec<Problem>| -> Option<String> {
        match map.get(k) {
            None | Some(Value::Null) if required => {
                p.push(Problem::new(
                    "missing",
                    loc!["metadata", "_llm", k],
                    "Field required",
                    Value::Null,
                ));
                None
            }
            None | Some(Value::Null) => None,
            Some(Value::String(x)) => Some(x.clone()),
            Some(other) => {
                p.push(Problem::new(
                    "string_type",
                    loc!["metadata", "_llm", k],
                    "Input should be a valid string",
                    other.clone(),
                ));
                None
            }
        }
    };
    let i = |k: &str, required: bool, p: &mut Vec<Problem>| -> Option<i64> {
        match map.get(k) {
            None | Some(Value::Null) if required => {
                p.push(Problem::new(
                    "missing",
                    loc!["metadata", "_llm", k],
                    "Field required",
                    Value::Null,
                ));
                None
            }
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64(),
            Some(other) => {
                p.push(Problem::new(
                    "int_type",
                    loc!["metadata", "_llm", k],
                    "Input should be a valid integer",
                    other.clone(),
                ));
                None
            }
        }
    };
    let vendor = s("vendor", true, p);
    let model = s("model", true, p);
    let prompt = s("prompt", false, p);
    let response = s("response", false, p);
    let input_tokens = i("input_tokens", true, p);
    let cached_input_tokens = i("cached_input_tokens", false, p);
    let output_tokens = i("output_tokens", true, p);
    let total_tokens = i("total_tokens", true, p);
    if p.len() > before {
        return None;
    }
    Some(EventLlm {
        vendor: vendor?,
        model: model?,
        prompt,
        response,
        input_tokens: input_tokens?,
        cached_input_tokens,
        output_tokens: output_tokens?,
        total_tokens: total_tokens?,
    })
}

fn metadata(v: &Value, p: &mut Vec<Problem>) -> EventMetadata {
    let mut out = EventMetadata::default();
    let Value::Object(map) = v else {
        if !v.is_null() {
            p.push(Problem::new(
                "dict_type",
                loc!["metadata"],
                "Input should be a valid dictionary",
                v.clone(),
            ));
        }
        return out;
    };
    let mut values = BTreeMap::new();
    for (k, v) in map {
        if has_nul(k) {
            p.push(nul(loc!["metadata", k.as_str()], k));
            continue;
        }
        match k.as_str() {
            "_cost" => out.cost = cost(v, p),
            "_llm" => out.llm = llm(v, p),
            _ => {
                if let Some(x) = plain_value(k, v, p) {
                    values.insert(k.clone(), x);
                }
            }
        }
    }
    out.values = values;
    out
}

/// Reads one event of the body; its problems as 422 items (for both shapes).
fn one_event(i: usize, v: &Value, now: DateTime<Utc>) -> Result<NewEvent, Vec<FieldError>> {
    const SHAPES: [&str; 2] = ["EventCreateCustomer", "EventCreateExternalCustomer"];
    let base = |shape: &str| loc!["body", "events", i, shape];
    let Value::Object(map) = v else {
        return Err(SHAPES
            .iter()
            .map(|s| {
                FieldError::new(
                    "model_type",
                    base(s),
                    format!("Input should be a valid dictionary or instance of {s}"),
                    v.clone(),
                )
            })
            .collect());
    };
    let mut shared = Vec::new();
    let name = match map.get("name") {
        None => {
            shared.push(missing("name"));
            None
        }
        Some(Value::String(s)) if has_nul(s) => {
            shared.push(nul(loc!["name"], s));
            None
        }
        Some(Value::String(s)) if s.chars().count() > 128 => {
            shared.push(
                Problem::new(
                    "string_too_long",
                    loc!["name"],
                    "String should have at most 128 characters",
                    Value::from(s.as_str()),
                )
                .ctx(json!({"max_length": 128})),
            );
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            shared.push(Problem::new(
                "string_type",
                loc!["name"],
                "Input should be a valid string",
                other.clone(),
            ));
            None
        }
    };
    let ts = map
        .get("timestamp")
        .and_then(|t| timestamp(t, now, &mut shared));
    let organization_id = opt_uuid(map, "organization_id", &mut shared);
    let external_id = opt_string(map, "external_id", &mut shared);
    let parent_id = opt_string(map, "parent_id", &mut shared);
    let meta = map
        .get("metadata")
        .map(|m| metadata(m, &mut shared))
        .unwrap_or_default();
    // The shape's own fields.
    let mut by_id = Vec::new();
    let customer_id = match map.get("customer_id") {
        None | Some(Value::Null) => {
            by_id.push(missing("customer_id"));
            None
        }
        Some(_) => opt_uuid(map, "customer_id", &mut by_id),
    };
    let member_id = opt_uuid(map, "member_id", &mut by_id);
    let mut by_external = Vec::new();
    let external_customer_id = match map.get("external_customer_id") {
        None | Some(Value::Null) => {
            by_external.push(missing("external_customer_id"));
            None
        }
        Some(_) => opt_string(map, "external_customer_id", &mut by_external),
    };
    let external_member_id = opt_string(map, "external_member_id", &mut by_external);
    let external_ok = by_external.is_empty();
    let id_ok = by_id.is_empty();
    if shared.is_empty() && (external_ok || id_ok) {
        let customer = match (external_customer_id, customer_id) {
            (Some(x), _) if external_ok => EventCustomer::External(x),
            (_, Some(c)) => EventCustomer::Id(c),
            _ => return Err(Vec::new()),
        };
        let external = matches!(customer, EventCustomer::External(_));
        return Ok(NewEvent {
            name: name.unwrap_or_default(),
            timestamp: ts,
            organization_id,
            external_id,
            parent_id,
            metadata: meta,
            customer,
            member_id: if external { None } else { member_id },
            external_member_id: if external { external_member_id } else { None },
        });
    }
    let mut errors = Vec::new();
    for (shape, own) in SHAPES.iter().zip([&by_id, &by_external]) {
        let b = base(shape);
        let mut all: Vec<&Problem> = shared.iter().chain(own.iter()).collect();
        // pydantic reports in the model's field order: the shape's key follows the shared.
        all.sort_by_key(|p| field_rank(&p.at));
        errors.extend(all.into_iter().map(|p| p.at(&b)));
    }
    Err(errors)
}

fn field_rank(at: &[Value]) -> usize {
    const ORDER: [&str; 10] = [
        "timestamp",
        "name",
        "organization_id",
        "external_id",
        "parent_id",
        "metadata",
        "customer_id",
        "member_id",
        "external_customer_id",
        "external_member_id",
    ];
    at.first()
        .and_then(Value::as_str)
        .and_then(|f| ORDER.iter().position(|o| *o == f))
        .unwrap_or(ORDER.len())
}

/// `EventsIngest` → the events, checked against `now` (the service's clock); every
/// problem of every event in one 422.
pub fn new_events(body: &Value, now: DateTime<Utc>) -> Result<Vec<NewEvent>, ApiError> {
    let Value::Object(map) = body else {
        return Err(ApiError::Validation(vec![FieldError::new(
            "model_attributes_type",
            loc!["body"],
            "Input should be a valid dictionary or object to extract fields from",
            body.clone(),
        )]));
    };
    let events = match map.get("events") {
        None => {
            return Err(ApiError::Validation(vec![FieldError::new(
                "missing",
                loc!["body", "events"],
                "Field required",
                Value::Null,
            )]))
        }
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(ApiError::Validation(vec![FieldError::new(
                "list_type",
                loc!["body", "events"],
                "Input should be a valid list",
                other.clone(),
            )]))
        }
    };
    if events.len() > MAX_EVENTS {
        return Err(ApiError::Validation(vec![FieldError::new(
            "too_long",
            loc!["body", "events"],
            format!(
                "List should have at most {MAX_EVENTS} items after validation, not {}",
                events.len()
            ),
            Value::Null,
        )
        .with_ctx(
            json!({"field_type": "List", "max_length": MAX_EVENTS, "actual_length": events.len()}),
        )]));
    }
    let mut out = Vec::with_capacity(events.len());
    let mut errors = Vec::new();
    for (i, e) in events.iter().enumerate() {
        match one_event(i, e, now) {
            Ok(ev) => out.push(ev),
            Err(es) => errors.extend(es),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(ApiError::Validation(errors))
    }
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    use chrono::TimeZone;

    use crate::domain::ids::{CustomerId, EventId, OrganizationId};

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let customer = Customer::new(
        CustomerId(Uuid::from_u128(0xc0)),
        OrganizationId(Uuid::from_u128(0x0a)),
        "jane@example.com".into(),
        now,
    );
    let user = UsageEvent {
        id: EventId(Uuid::from_u128(0xe0)),
        organization_id: OrganizationId(Uuid::from_u128(0x0a)),
        name: "api_call".into(),
        source: EventSource::User,
        timestamp: now,
        ingested_at: now,
        customer_id: Some(customer.id),
        external_customer_id: None,
        external_member_id: None,
        external_id: Some("evt_1".into()),
        parent_id: None,
        metadata: EventMetadata {
            values: BTreeMap::from([("tokens".to_string(), EventValue::Int(512))]),
            cost: None,
            llm: None,
        },
    };
    let credited = UsageEvent {
        id: EventId(Uuid::from_u128(0xe3)),
        name: "meter.credited".into(),
        source: EventSource::System,
        external_id: None,
        metadata: EventMetadata {
            values: BTreeMap::from([
                (
                    "meter_id".to_string(),
                    EventValue::Str(Uuid::from_u128(0xe1).to_string()),
                ),
                ("units".to_string(), EventValue::Int(100)),
                ("rollover".to_string(), EventValue::Bool(false)),
            ]),
            cost: None,
            llm: None,
        },
        ..user.clone()
    };
    vec![
        (
            "Event",
            serde_json::to_value(EventView::new(&user, Some(&customer))).unwrap_or_default(),
        ),
        (
            "Event",
            serde_json::to_value(EventView::new(&credited, None)).unwrap_or_default(),
        ),
        (
            "EventsIngestResponse",
            serde_json::to_value(EventsIngestResponse {
                inserted: 2,
                duplicates: 1,
            })
            .unwrap_or_default(),
        ),
    ]
}

#[cfg(test)]
#[path = "event_tests.rs"]
mod tests;
