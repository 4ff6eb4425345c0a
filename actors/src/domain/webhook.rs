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
    /// The body sent, byte for byte on every attempt.
    pub payload: String,
    pub state: WebhookEventState,
    pub attempts: u32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_http_code: Option<u16>,
    /// The payload was purged: the event can no longer be redelivered.
    pub archived: bool,
}

impl WebhookEvent {
    pub fn is_pending(&self) -> bool {
        self.state == WebhookEventState::Pending
    }
}

impl Record for WebhookEvent {
    crate::record_v1!(WebhookEvent, "webhook_event");
    const INDEXES: &'static [&'static str] = &[WEBHOOK_EVENT_PENDING, WEBHOOK_EVENT_BY_CREATED];

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
}
