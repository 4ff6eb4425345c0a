//! Webhooks: the endpoints a seller registers, the events queued for each endpoint, and
//! the log of every delivery attempt. Plain records; the delivery engine in the server
//! crate moves events through their states.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

use super::ids::{
    LicenseKeyId, OrganizationId, WebhookDeliveryId, WebhookEndpointId, WebhookEventId,
};
use super::time_key;

/// Tenant: an organization; sorted by creation time.
pub const WEBHOOK_ENDPOINT_BY_CREATED: &str = "webhook_endpoint_by_created";
/// Tenant: none; sorted by creation time. Every endpoint (the workers started at boot).
pub const WEBHOOK_ENDPOINT_ALL: &str = "webhook_endpoint_all";
/// Tenant: an endpoint; sorted by the event's feed position. Holds the events still to
/// deliver (pending or waiting for a retry): what the endpoint's worker walks.
pub const WEBHOOK_EVENT_PENDING: &str = "webhook_event_pending";
/// Tenant: none; sorted by creation time. What the retention purge walks.
pub const WEBHOOK_EVENT_BY_CREATED: &str = "webhook_event_by_created";
/// Tenant: an organization; sorted by creation time.
pub const WEBHOOK_DELIVERY_BY_ORG: &str = "webhook_delivery_by_org";
/// Tenant: an endpoint; sorted by creation time.
pub const WEBHOOK_DELIVERY_BY_ENDPOINT: &str = "webhook_delivery_by_endpoint";
/// Tenant: an event; sorted by creation time (the attempts of one event, purged with it).
pub const WEBHOOK_DELIVERY_BY_EVENT: &str = "webhook_delivery_by_event";

/// How a payload is shaped for its receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WebhookFormat {
    Raw,
    Discord,
    Slack,
}

/// A URL a seller's organization receives events at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookEndpoint {
    pub id: WebhookEndpointId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub url: String,
    pub name: Option<String>,
    pub format: WebhookFormat,
    /// The signing secret; its UTF-8 bytes are the HMAC key (Polar's encoding).
    pub secret: String,
    /// The subscribed event types.
    pub events: Vec<String>,
    pub enabled: bool,
    /// Failed attempts in a row, across events; reset by any success.
    pub consecutive_failures: u32,
    /// When the current run of failures began.
    pub failing_since: Option<DateTime<Utc>>,
    /// Why the service disabled it (`None` when the seller did, or it is enabled).
    pub disabled_reason: Option<String>,
    /// The API version the seller chose for its payloads (`YYYY-MM`; from format version
    /// 2, `None` before).
    pub api_version: Option<String>,
}

/// An endpoint as format version 1 stored it: without `api_version`.
#[derive(Serialize, Deserialize)]
struct WebhookEndpointV1 {
    id: WebhookEndpointId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    url: String,
    name: Option<String>,
    format: WebhookFormat,
    secret: String,
    events: Vec<String>,
    enabled: bool,
    consecutive_failures: u32,
    failing_since: Option<DateTime<Utc>>,
    disabled_reason: Option<String>,
}

impl WebhookEndpoint {
    pub fn subscribes_to(&self, event_type: &str) -> bool {
        self.events.iter().any(|e| e == event_type)
    }
}

impl Record for WebhookEndpoint {
    const COLLECTION: &'static str = "webhook_endpoint";
    const VERSION: u16 = 2;

    fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
        match version {
            1 => {
                let v1: WebhookEndpointV1 =
                    tollgate_storage::codec::decode(Self::COLLECTION, 1, payload)?;
                Ok(WebhookEndpoint {
                    id: v1.id,
                    organization_id: v1.organization_id,
                    created_at: v1.created_at,
                    modified_at: v1.modified_at,
                    url: v1.url,
                    name: v1.name,
                    format: v1.format,
                    secret: v1.secret,
                    events: v1.events,
                    enabled: v1.enabled,
                    consecutive_failures: v1.consecutive_failures,
                    failing_since: v1.failing_since,
                    disabled_reason: v1.disabled_reason,
                    api_version: None,
                })
            }
            2 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    const INDEXES: &'static [&'static str] = &[WEBHOOK_ENDPOINT_BY_CREATED, WEBHOOK_ENDPOINT_ALL];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![
            IndexEntry::new(
                WEBHOOK_ENDPOINT_BY_CREATED,
                self.organization_id.key(),
                time_key(self.created_at),
            ),
            IndexEntry::new(WEBHOOK_ENDPOINT_ALL, Vec::new(), time_key(self.created_at)),
        ]
    }
}

/// Where an event stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WebhookEventState {
    /// To deliver at `next_attempt_at` (or as soon as the events of the same resource
    /// before it are done).
    Pending,
    /// A receiver answered 2xx.
    Succeeded,
    /// Every attempt failed.
    Failed,
    /// The endpoint was disabled when the event happened: recorded, not sent.
    Skipped,
}

/// One event for one endpoint. Its id is the `webhook-id` of every attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookEvent {
    pub id: WebhookEventId,
    pub organization_id: OrganizationId,
    pub endpoint_id: WebhookEndpointId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub event_type: String,
    /// The resource the event is about (`collection:id`): events of one resource reach an
    /// endpoint in the order they happened.
    pub resource: String,
    /// Position of the change in the store's feed: the order of events.
    pub seq: u64,
    /// The body sent, byte for byte on every attempt. When [`WebhookEvent::payload_apart`],
    /// it is never stored here (empty as read; whatever it holds in memory is not
    /// written): it is the [`WebhookPayload`] of [`WebhookEvent::payload_key`], loaded
    /// where it is needed.
    pub payload: String,
    pub state: WebhookEventState,
    pub attempts: u32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_http_code: Option<u16>,
    /// The payload was purged: the event can no longer be redelivered.
    pub archived: bool,
    /// Version 2: the payload is its own record ([`WebhookPayload`]), written once with
    /// the event: an attempt rewrites the event's few hundred bytes, not its payload.
    pub payload_apart: bool,
    /// Version 3: `Some` when the payload record is shared by the events of one change
    /// whose bodies are the same byte for byte (endpoints of one organization with the
    /// same format and API version): the id of the one it is stored under (this event's
    /// own for the first of them). `None`: the payload is this event's alone.
    pub payload_id: Option<WebhookEventId>,
}

impl WebhookEvent {
    pub fn is_pending(&self) -> bool {
        self.state == WebhookEventState::Pending
    }

    /// The id of the [`WebhookPayload`] holding this event's payload (when it is apart).
    pub fn payload_key(&self) -> WebhookEventId {
        self.payload_id.unwrap_or(self.id)
    }

    /// The record holding the payload of an event whose payload is apart and its own
    /// (not shared with other events).
    pub fn payload_record(&self) -> Option<WebhookPayload> {
        (self.payload_apart && self.payload_id.is_none()).then(|| WebhookPayload {
            id: self.id,
            payload: self.payload.clone(),
            shared_with: Vec::new(),
        })
    }
}

/// The payload records of the events one change renders for several endpoints: one
/// record per distinct body, shared by every event with that body (two endpoints of the
/// same format and version get the same bytes; a shop's payloads are most of its
/// webhook history). Sets each event's [`WebhookEvent::payload_id`] and returns the
/// records to write with them. Events whose payload is not apart are left alone.
pub fn share_payloads(events: &mut [WebhookEvent]) -> Vec<WebhookPayload> {
    let mut records: Vec<WebhookPayload> = Vec::new();
    let mut first_of: Vec<usize> = Vec::new();
    for i in 0..events.len() {
        if !events[i].payload_apart {
            continue;
        }
        let same = records.iter().position(|r| r.payload == events[i].payload);
        match same {
            Some(r) => {
                let owner = records[r].id;
                records[r].shared_with.push(events[i].id);
                events[i].payload_id = Some(owner);
                events[first_of[r]].payload_id = Some(owner);
            }
            None => {
                events[i].payload_id = None;
                first_of.push(i);
                records.push(WebhookPayload {
                    id: events[i].id,
                    payload: events[i].payload.clone(),
                    shared_with: Vec::new(),
                });
            }
        }
    }
    records
}

/// What version 2 stores of an event: its fields, the payload empty when it is apart.
#[derive(Serialize)]
struct StoredEvent<'a> {
    id: WebhookEventId,
    organization_id: OrganizationId,
    endpoint_id: WebhookEndpointId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    event_type: &'a str,
    resource: &'a str,
    seq: u64,
    payload: &'a str,
    state: WebhookEventState,
    attempts: u32,
    next_attempt_at: Option<DateTime<Utc>>,
    last_http_code: Option<u16>,
    archived: bool,
    payload_apart: bool,
    payload_id: Option<WebhookEventId>,
}

/// Format version 2: without `payload_id` (no payload shared).
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct WebhookEventV2 {
    id: WebhookEventId,
    organization_id: OrganizationId,
    endpoint_id: WebhookEndpointId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    event_type: String,
    resource: String,
    seq: u64,
    payload: String,
    state: WebhookEventState,
    attempts: u32,
    next_attempt_at: Option<DateTime<Utc>>,
    last_http_code: Option<u16>,
    archived: bool,
    payload_apart: bool,
}

impl From<WebhookEventV2> for WebhookEvent {
    fn from(v2: WebhookEventV2) -> Self {
        WebhookEvent {
            id: v2.id,
            organization_id: v2.organization_id,
            endpoint_id: v2.endpoint_id,
            created_at: v2.created_at,
            modified_at: v2.modified_at,
            event_type: v2.event_type,
            resource: v2.resource,
            seq: v2.seq,
            payload: v2.payload,
            state: v2.state,
            attempts: v2.attempts,
            next_attempt_at: v2.next_attempt_at,
            last_http_code: v2.last_http_code,
            archived: v2.archived,
            payload_apart: v2.payload_apart,
            payload_id: None,
        }
    }
}

/// Format version 1: the payload always inline.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct WebhookEventV1 {
    id: WebhookEventId,
    organization_id: OrganizationId,
    endpoint_id: WebhookEndpointId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    event_type: String,
    resource: String,
    seq: u64,
    payload: String,
    state: WebhookEventState,
    attempts: u32,
    next_attempt_at: Option<DateTime<Utc>>,
    last_http_code: Option<u16>,
    archived: bool,
}

impl From<WebhookEventV1> for WebhookEvent {
    fn from(v1: WebhookEventV1) -> Self {
        WebhookEvent {
            id: v1.id,
            organization_id: v1.organization_id,
            endpoint_id: v1.endpoint_id,
            created_at: v1.created_at,
            modified_at: v1.modified_at,
            event_type: v1.event_type,
            resource: v1.resource,
            seq: v1.seq,
            payload: v1.payload,
            state: v1.state,
            attempts: v1.attempts,
            next_attempt_at: v1.next_attempt_at,
            last_http_code: v1.last_http_code,
            archived: v1.archived,
            payload_apart: false,
            payload_id: None,
        }
    }
}

impl Record for WebhookEvent {
    const COLLECTION: &'static str = "webhook_event";
    /// 2: the payload may be apart (`payload_apart`); 3: and shared (`payload_id`).
    const VERSION: u16 = 3;
    const INDEXES: &'static [&'static str] = &[WEBHOOK_EVENT_PENDING, WEBHOOK_EVENT_BY_CREATED];

    fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
        tollgate_storage::codec::encode(&StoredEvent {
            id: self.id,
            organization_id: self.organization_id,
            endpoint_id: self.endpoint_id,
            created_at: self.created_at,
            modified_at: self.modified_at,
            event_type: &self.event_type,
            resource: &self.resource,
            seq: self.seq,
            payload: if self.payload_apart {
                ""
            } else {
                &self.payload
            },
            state: self.state,
            attempts: self.attempts,
            next_attempt_at: self.next_attempt_at,
            last_http_code: self.last_http_code,
            archived: self.archived,
            payload_apart: self.payload_apart,
            payload_id: self.payload_id,
        })
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
        match version {
            1 => tollgate_storage::codec::decode::<WebhookEventV1>(Self::COLLECTION, 1, payload)
                .map(Into::into),
            2 => tollgate_storage::codec::decode::<WebhookEventV2>(Self::COLLECTION, 2, payload)
                .map(Into::into),
            3 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        let mut entries = vec![IndexEntry::new(
            WEBHOOK_EVENT_BY_CREATED,
            Vec::new(),
            time_key(self.created_at),
        )];
        if self.is_pending() {
            entries.push(IndexEntry::new(
                WEBHOOK_EVENT_PENDING,
                self.endpoint_id.key(),
                KeyBuf::new().u64(self.seq).into_vec(),
            ));
        }
        entries
    }
}

/// The body of endpoint events whose payload is apart: stored under the id of the first
/// of them, written once with them, never rewritten, deleted when the last of them goes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookPayload {
    pub id: WebhookEventId,
    pub payload: String,
    /// Version 2: the other events that read it (same change, same body, other
    /// endpoints); empty when only the event `id` does.
    pub shared_with: Vec<WebhookEventId>,
}

impl WebhookPayload {
    /// Every event that reads it.
    pub fn readers(&self) -> impl Iterator<Item = WebhookEventId> + '_ {
        std::iter::once(self.id).chain(self.shared_with.iter().copied())
    }
}

/// Format version 1: one event's own.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct WebhookPayloadV1 {
    id: WebhookEventId,
    payload: String,
}

impl Record for WebhookPayload {
    const COLLECTION: &'static str = "webhook_payload";
    /// 2: it may be shared (`shared_with`).
    const VERSION: u16 = 2;

    fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
        match version {
            1 => {
                let v1: WebhookPayloadV1 =
                    tollgate_storage::codec::decode(Self::COLLECTION, 1, payload)?;
                Ok(WebhookPayload {
                    id: v1.id,
                    payload: v1.payload,
                    shared_with: Vec::new(),
                })
            }
            2 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }
}

/// One attempt to deliver an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookDelivery {
    pub id: WebhookDeliveryId,
    pub organization_id: OrganizationId,
    pub endpoint_id: WebhookEndpointId,
    pub event_id: WebhookEventId,
    pub created_at: DateTime<Utc>,
    pub succeeded: bool,
    /// `None`: no HTTP answer (refused, timed out, blocked address).
    pub http_code: Option<u16>,
    /// The start of the response body, or what went wrong.
    pub response: Option<String>,
    pub duration_ms: u64,
}

impl Record for WebhookDelivery {
    crate::record_v1!(WebhookDelivery, "webhook_delivery");
    const INDEXES: &'static [&'static str] = &[
        WEBHOOK_DELIVERY_BY_ORG,
        WEBHOOK_DELIVERY_BY_ENDPOINT,
        WEBHOOK_DELIVERY_BY_EVENT,
    ];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        let at = time_key(self.created_at);
        vec![
            IndexEntry::new(
                WEBHOOK_DELIVERY_BY_ORG,
                self.organization_id.key(),
                at.clone(),
            ),
            IndexEntry::new(
                WEBHOOK_DELIVERY_BY_ENDPOINT,
                self.endpoint_id.key(),
                at.clone(),
            ),
            IndexEntry::new(WEBHOOK_DELIVERY_BY_EVENT, self.event_id.key(), at),
        ]
    }
}

/// The topic of the notice a refused activation or usage increment writes.
pub const LIMIT_REACHED: &str = "license_key.limit_reached";

/// The notice's payload.
#[derive(Debug, Serialize, Deserialize)]
pub struct LimitReached {
    pub license_key_id: LicenseKeyId,
}

/// A new webhook endpoint, as the seller asks for it (its URL, secret, name and API
/// version are the use case's to check: the URL against the egress policy).
#[derive(Debug, Clone, PartialEq)]
pub struct NewWebhookEndpoint {
    /// The organization named by the request, if any.
    pub organization_id: Option<OrganizationId>,
    pub url: String,
    pub name: Option<String>,
    /// Generated when none is given.
    pub secret: Option<String>,
    pub format: WebhookFormat,
    /// Event type names, each once, in the order given.
    pub events: Vec<String>,
    /// Left out: the version the request was served in.
    pub api_version: Option<String>,
}

/// A change of a webhook endpoint; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WebhookEndpointChange {
    pub url: Option<String>,
    /// `Some(None)` (or a blank name) unsets the name.
    pub name: Option<Option<String>>,
    pub secret: Option<String>,
    pub format: Option<WebhookFormat>,
    /// Event type names, each once.
    pub events: Option<Vec<String>>,
    /// `true` resumes deliveries (with a fresh count of failures), `false` pauses them.
    pub enabled: Option<bool>,
    pub api_version: Option<String>,
}

#[cfg(test)]
mod endpoint_format_tests {
    use super::*;
    use crate::golden::{at, uuid};

    #[test]
    fn a_version_1_endpoint_reads_without_an_api_version() {
        let v1 = WebhookEndpointV1 {
            id: WebhookEndpointId(uuid(1)),
            organization_id: OrganizationId(uuid(2)),
            created_at: at(10),
            modified_at: None,
            url: "https://example.com/hook".into(),
            name: Some("Hook".into()),
            format: WebhookFormat::Raw,
            secret: "polar_whs_abc".into(),
            events: vec!["order.paid".into()],
            enabled: true,
            consecutive_failures: 2,
            failing_since: Some(at(20)),
            disabled_reason: None,
        };
        let e = WebhookEndpoint::decode(1, &tollgate_storage::codec::encode(&v1).unwrap()).unwrap();
        assert_eq!(e.url, "https://example.com/hook");
        assert_eq!(e.consecutive_failures, 2);
        assert_eq!(e.api_version, None);
        let e2 = WebhookEndpoint {
            api_version: Some("2026-10".into()),
            ..e
        };
        let back = WebhookEndpoint::decode(2, &e2.encode().unwrap()).unwrap();
        assert_eq!(back.api_version.as_deref(), Some("2026-10"));
    }

    fn event(payload_apart: bool) -> WebhookEvent {
        WebhookEvent {
            id: WebhookEventId(uuid(3)),
            organization_id: OrganizationId(uuid(2)),
            endpoint_id: WebhookEndpointId(uuid(1)),
            created_at: at(10),
            modified_at: None,
            event_type: "order.paid".into(),
            resource: "order:1".into(),
            seq: 7,
            payload: r#"{"type":"order.paid","data":{}}"#.into(),
            state: WebhookEventState::Pending,
            attempts: 0,
            next_attempt_at: None,
            last_http_code: None,
            archived: false,
            payload_apart,
            payload_id: None,
        }
    }

    #[test]
    fn a_version_1_event_reads_with_its_payload_inline() {
        let e = event(false);
        let v1 = WebhookEventV1 {
            id: e.id,
            organization_id: e.organization_id,
            endpoint_id: e.endpoint_id,
            created_at: e.created_at,
            modified_at: e.modified_at,
            event_type: e.event_type.clone(),
            resource: e.resource.clone(),
            seq: e.seq,
            payload: e.payload.clone(),
            state: e.state,
            attempts: e.attempts,
            next_attempt_at: e.next_attempt_at,
            last_http_code: e.last_http_code,
            archived: e.archived,
        };
        let read = WebhookEvent::decode(1, &tollgate_storage::codec::encode(&v1).unwrap()).unwrap();
        assert_eq!(read, e);
        assert!(read.payload_record().is_none());
        // Written again (an attempt), it keeps its payload inline.
        assert_eq!(
            WebhookEvent::decode(WebhookEvent::VERSION, &read.encode().unwrap()).unwrap(),
            e
        );
    }

    #[test]
    fn a_payload_apart_is_never_written_with_its_event() {
        let e = event(true);
        let body = e.payload_record().unwrap();
        assert_eq!((body.id, body.payload.as_str()), (e.id, e.payload.as_str()));
        let stored = e.encode().unwrap();
        let read = WebhookEvent::decode(WebhookEvent::VERSION, &stored).unwrap();
        assert_eq!(read.payload, "");
        assert!(read.payload_apart);
        assert_eq!(
            WebhookEvent {
                payload: e.payload.clone(),
                ..read
            },
            e
        );
        assert!(stored.len() + e.payload.len() <= event(false).encode().unwrap().len());
    }

    #[test]
    fn a_version_2_event_reads_as_its_own_payload() {
        let e = event(true);
        let v2 = WebhookEventV2 {
            id: e.id,
            organization_id: e.organization_id,
            endpoint_id: e.endpoint_id,
            created_at: e.created_at,
            modified_at: e.modified_at,
            event_type: e.event_type.clone(),
            resource: e.resource.clone(),
            seq: e.seq,
            payload: String::new(),
            state: e.state,
            attempts: e.attempts,
            next_attempt_at: e.next_attempt_at,
            last_http_code: e.last_http_code,
            archived: e.archived,
            payload_apart: true,
        };
        let read = WebhookEvent::decode(2, &tollgate_storage::codec::encode(&v2).unwrap()).unwrap();
        assert_eq!(read.payload_id, None);
        assert_eq!(read.payload_key(), e.id);
        assert!(read.payload_apart);
    }

    #[test]
    fn a_version_1_payload_reads_as_shared_with_no_one() {
        let v1 = WebhookPayloadV1 {
            id: WebhookEventId(uuid(9)),
            payload: "{}".into(),
        };
        let read =
            WebhookPayload::decode(1, &tollgate_storage::codec::encode(&v1).unwrap()).unwrap();
        assert_eq!(read.readers().collect::<Vec<_>>(), vec![v1.id]);
        assert_eq!(read.payload, "{}");
    }

    #[test]
    fn events_with_the_same_body_share_one_payload_record() {
        let with = |n: u128, body: &str, apart: bool| WebhookEvent {
            id: WebhookEventId(uuid(n)),
            payload: body.into(),
            ..event(apart)
        };
        let mut events = vec![
            with(10, "raw-2026", true),
            with(11, "slack", true),
            with(12, "raw-2026", true),
            with(13, "raw-2025", true),
            with(14, "raw-2026", true),
            with(15, "raw-2026", false),
        ];
        let records = share_payloads(&mut events);
        let ids = |r: &WebhookPayload| r.readers().map(|id| id.0).collect::<Vec<_>>();
        assert_eq!(records.len(), 3);
        assert_eq!(ids(&records[0]), vec![uuid(10), uuid(12), uuid(14)]);
        assert_eq!(records[0].payload, "raw-2026");
        assert_eq!(ids(&records[1]), vec![uuid(11)]);
        assert_eq!(ids(&records[2]), vec![uuid(13)]);
        let keys: Vec<_> = events.iter().map(|e| e.payload_key().0).collect();
        assert_eq!(
            keys,
            vec![uuid(10), uuid(11), uuid(10), uuid(13), uuid(10), uuid(15)]
        );
        // The shared one says so on every reader, its holder included; the others are
        // their own, and the inline one is untouched.
        assert_eq!(events[0].payload_id, Some(WebhookEventId(uuid(10))));
        assert_eq!(events[1].payload_id, None);
        assert_eq!(events[3].payload_id, None);
        assert_eq!(events[5].payload_id, None);
        // A shared payload is never written with the holder as its own.
        assert!(events
            .iter()
            .all(|e| e.payload_record().is_none() || e.payload_id.is_none() && e.payload_apart));
        // Stored and read back, an event keeps where its payload is.
        let back =
            WebhookEvent::decode(WebhookEvent::VERSION, &events[2].encode().unwrap()).unwrap();
        assert_eq!(back.payload_id, Some(WebhookEventId(uuid(10))));
        let p =
            WebhookPayload::decode(WebhookPayload::VERSION, &records[0].encode().unwrap()).unwrap();
        assert_eq!(p, records[0]);
    }
}
