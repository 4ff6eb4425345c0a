//! An ingested event as stored (`/v1/events`, Polar's `Event`, `polar-2026.md` §7.1–7.2).
//!
//! Events do not go through the record path: they are written by the usage store's
//! `ingest` (exactly once, with their index keys and the aggregate deltas), keyed by the
//! application (`crate::app::usage::keys` of the service). This file holds the value and
//! its versioned bytes.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::StorageError;

use super::ids::{CustomerId, EventId, OrganizationId};

/// Who wrote the event: the merchant's ingestion (`user`) or Tollgate itself (`system`:
/// `meter.credited`, `meter.reset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventSource {
    User,
    System,
}

impl EventSource {
    pub const ALL: [EventSource; 2] = [EventSource::System, EventSource::User];

    pub fn as_str(self) -> &'static str {
        match self {
            EventSource::User => "user",
            EventSource::System => "system",
        }
    }

    pub fn parse(s: &str) -> Option<EventSource> {
        EventSource::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// One metadata value of an event: a string (1–500 characters), an integer, a float or
/// a boolean (Polar's `MetadataValue`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum EventValue {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

/// The reserved `_cost` of an event: an amount (a decimal, kept as written) and its
/// currency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventCost {
    /// The decimal as given, normalized (no exponent).
    pub amount: String,
    /// Whether it was given as a JSON string (it is echoed the same way).
    pub amount_was_string: bool,
    pub currency: String,
}

/// The reserved `_llm` of an event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventLlm {
    pub vendor: String,
    pub model: String,
    pub prompt: Option<String>,
    pub response: Option<String>,
    pub input_tokens: i64,
    pub cached_input_tokens: Option<i64>,
    pub output_tokens: i64,
    pub total_tokens: i64,
}

/// An event's metadata: plain values by key, and the two structured keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EventMetadata {
    pub values: BTreeMap<String, EventValue>,
    pub cost: Option<EventCost>,
    pub llm: Option<EventLlm>,
}

/// An ingested event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageEvent {
    /// Derived from the organization and `external_id` when one was given (so that a
    /// repeated external id is the same key), random otherwise.
    pub id: EventId,
    pub organization_id: OrganizationId,
    pub name: String,
    pub source: EventSource,
    /// When it happened (given, or the ingestion time), UTC.
    pub timestamp: DateTime<Utc>,
    /// When Tollgate received it.
    pub ingested_at: DateTime<Utc>,
    pub customer_id: Option<CustomerId>,
    pub external_customer_id: Option<String>,
    pub external_member_id: Option<String>,
    pub external_id: Option<String>,
    /// As given (a Polar event id or an external id); not resolved.
    pub parent_id: Option<String>,
    pub metadata: EventMetadata,
}

impl UsageEvent {
    /// The format version of [`UsageEvent::encode`]'s bytes.
    pub const VERSION: u16 = 1;
    pub const COLLECTION: &'static str = "usage_event";

    /// The stored bytes: the version (2 bytes, big-endian), then the codec's.
    pub fn encode(&self) -> Result<Vec<u8>, StorageError> {
        let mut out = Self::VERSION.to_be_bytes().to_vec();
        out.extend(tollgate_storage::codec::encode(self)?);
        Ok(out)
    }

    /// Reads bytes written by [`UsageEvent::encode`].
    pub fn decode(bytes: &[u8]) -> Result<UsageEvent, StorageError> {
        let (Some(&a), Some(&b)) = (bytes.first(), bytes.get(1)) else {
            return Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                0,
            ));
        };
        match u16::from_be_bytes([a, b]) {
            1 => tollgate_storage::codec::decode(Self::COLLECTION, 1, &bytes[2..]),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }
}

/// Whose event it is, as given: a customer id or the merchant's external customer id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventCustomer {
    Id(uuid::Uuid),
    External(String),
}

/// An event of `POST /v1/events/ingest`, its shape checked; what needs the store (the
/// organization, the customer) is checked by the service.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub name: String,
    /// Given (UTC, in the past), or `None` for the ingestion time.
    pub timestamp: Option<DateTime<Utc>>,
    pub organization_id: Option<uuid::Uuid>,
    pub external_id: Option<String>,
    pub parent_id: Option<String>,
    pub metadata: EventMetadata,
    pub customer: EventCustomer,
    /// Given as `member_id` (Tollgate has no members: refused by the service).
    pub member_id: Option<uuid::Uuid>,
    pub external_member_id: Option<String>,
}

/// The filters of `GET /v1/events/`, parsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventFilter {
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
    pub organization_ids: Vec<uuid::Uuid>,
    pub customer_ids: Vec<uuid::Uuid>,
    pub external_customer_ids: Vec<String>,
    pub meter_id: Option<uuid::Uuid>,
    pub names: Vec<String>,
    pub sources: Vec<EventSource>,
    pub query: Option<String>,
    pub parent_id: Option<String>,
    pub metadata: Vec<(String, String)>,
    pub filter: Option<super::meter::Filter>,
    /// `sorting=timestamp` (ascending) rather than the default `-timestamp`.
    pub ascending: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{at, hex, uuid};

    fn full_event() -> UsageEvent {
        UsageEvent {
            id: EventId(uuid(1)),
            organization_id: OrganizationId(uuid(2)),
            name: "api_call".into(),
            source: EventSource::User,
            timestamp: at(60),
            ingested_at: at(61),
            customer_id: Some(CustomerId(uuid(3))),
            external_customer_id: Some("usr_1".into()),
            external_member_id: Some("m".into()),
            external_id: Some("e1".into()),
            parent_id: Some("p".into()),
            metadata: EventMetadata {
                values: BTreeMap::from([
                    ("b".to_string(), EventValue::Bool(true)),
                    ("f".to_string(), EventValue::Float(0.5)),
                    ("i".to_string(), EventValue::Int(-2)),
                    ("s".to_string(), EventValue::Str("x".into())),
                ]),
                cost: Some(EventCost {
                    amount: "0.01".into(),
                    amount_was_string: true,
                    currency: "usd".into(),
                }),
                llm: Some(EventLlm {
                    vendor: "v".into(),
                    model: "m".into(),
                    prompt: Some("p".into()),
                    response: None,
                    input_tokens: 1,
                    cached_input_tokens: Some(0),
                    output_tokens: 2,
                    total_tokens: 3,
                }),
            },
        }
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let event = full_event();
        let bytes = event.encode().unwrap_or_default();
        assert_eq!(UsageEvent::decode(&bytes).ok(), Some(event));
        assert_eq!(
            hex(&bytes),
            GOLDEN_V1,
            "usage event format v1 changed: add a version"
        );
        assert!(UsageEvent::decode(&[0, 2, 0]).is_err());
        assert!(UsageEvent::decode(&[]).is_err());
    }

    const GOLDEN_V1: &str = concat!(
        "00011000000000000000000000000000000001100000000000000000000000000000000208617069",
        "5f63616c6c0014313937302d30312d30315430303a30313a30305a14313937302d30312d30315430",
        "303a30313a30315a01100000000000000000000000000000000301057573725f3101016d01026531",
        "0101700401620301016602000000000000e03f0169010301730001780104302e3031010375736401",
        "0176016d010170000201000406",
    );
}
