//! The event cursor's log (`GET /v1/webhooks/events`, behaviour.md, decisions of
//! 2026-11-28) and what the fan-out (`crate::webhooks::dispatch`) keeps beside the
//! deliveries: the event log the cursor reads
//! (`GET /v1/webhooks/events`), numbered per organization in the order the fan-out
//! consumed the changes (commit order), and the last customer state each customer was
//! told, so that `customer.state_changed` goes out only when the state changed.
//!
//! All three are written in the fan-out's own transaction, with the consumption of the
//! feed entries they come from: a crash replays the entries and writes them again, never
//! twice (a log entry's key is its organization and number, put `Expect::Absent`; the
//! heads are compare-and-swapped).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{Batch, Direction, Expect, IndexEntry, Record, StorageError};

use crate::app::access::organizations_for_list;
use crate::auth::Subject;
use crate::domain::ids::{CustomerId, OrganizationId, WebhookEventId};
use crate::domain::time_key;
use crate::domain::webhook::WebhookEvent;
use crate::error::AppError;
use crate::state::AppState;

/// Log entries of one organization by number.
pub const EVENT_LOG_BY_ORG: &str = "event_log_by_org";
/// Every log entry by the time it was logged (retention).
pub const EVENT_LOG_BY_CREATED: &str = "event_log_by_created";

/// One event as the cursor answers it: the same `type`, `timestamp` and `data` as the
/// webhook body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedEvent {
    pub organization_id: OrganizationId,
    /// 1, 2, 3, … within the organization, without gaps, in commit order.
    pub seq: u64,
    pub event_type: String,
    pub timestamp: DateTime<Utc>,
    /// The `data` of the body, as JSON text; empty while [`LoggedEvent::data_in`] says
    /// where it is (read [`LoggedEvent::data_text`] after [`resolve`]).
    pub data: String,
    pub created_at: DateTime<Utc>,
    /// Version 2: where the `data` is when it is not copied here: in the payload of one
    /// endpoint's event (`raw` format), written in the same transaction. Kept nothing
    /// twice: the payloads are most of the history's bytes. The endpoint event outlives
    /// the entry: both are created at once and the retention purges the log first with
    /// the same cutoff (`crate::webhooks::purge`), and a pending event is never purged.
    pub data_in: Option<DataRef>,
}

/// Where a logged event's `data` is: bytes `offset..offset + len` of an endpoint event's
/// payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataRef {
    pub event_id: WebhookEventId,
    pub offset: u32,
    pub len: u32,
}

impl DataRef {
    /// Where `data` is in `payload` (its `"data":` member, as the `raw` format writes it),
    /// if it is there byte for byte.
    pub fn find(event_id: WebhookEventId, payload: &str, data: &str) -> Option<DataRef> {
        let member = format!("\"data\":{data}");
        let at = payload.find(&member)? + "\"data\":".len();
        let r = DataRef {
            event_id,
            offset: u32::try_from(at).ok()?,
            len: u32::try_from(data.len()).ok()?,
        };
        (r.slice(payload) == Some(data)).then_some(r)
    }

    /// The data within the payload.
    pub fn slice(self, payload: &str) -> Option<&str> {
        let from = self.offset as usize;
        payload.get(from..from.checked_add(self.len as usize)?)
    }
}

impl LoggedEvent {
    pub fn key_of(organization_id: OrganizationId, seq: u64) -> Vec<u8> {
        KeyBuf::new()
            .fixed(&organization_id.key())
            .u64(seq)
            .into_vec()
    }

    /// The sort key of number `seq` in [`EVENT_LOG_BY_ORG`].
    pub fn sort_of(seq: u64) -> Vec<u8> {
        KeyBuf::new().u64(seq).into_vec()
    }
}

/// Format version 1: the data always inline.
#[derive(Deserialize)]
struct LoggedEventV1 {
    organization_id: OrganizationId,
    seq: u64,
    event_type: String,
    timestamp: DateTime<Utc>,
    data: String,
    created_at: DateTime<Utc>,
}

impl From<LoggedEventV1> for LoggedEvent {
    fn from(v1: LoggedEventV1) -> Self {
        LoggedEvent {
            organization_id: v1.organization_id,
            seq: v1.seq,
            event_type: v1.event_type,
            timestamp: v1.timestamp,
            data: v1.data,
            created_at: v1.created_at,
            data_in: None,
        }
    }
}

impl Record for LoggedEvent {
    const COLLECTION: &'static str = "event_log";
    /// 2: the data may be in an endpoint event's payload (`data_in`).
    const VERSION: u16 = 2;

    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        match version {
            1 => {
                Ok(
                    tollgate_storage::codec::decode::<LoggedEventV1>(Self::COLLECTION, 1, payload)?
                        .into(),
                )
            }
            2 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    const INDEXES: &'static [&'static str] = &[EVENT_LOG_BY_ORG, EVENT_LOG_BY_CREATED];

    fn id_key(&self) -> Vec<u8> {
        Self::key_of(self.organization_id, self.seq)
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![
            IndexEntry::new(
                EVENT_LOG_BY_ORG,
                self.organization_id.key(),
                Self::sort_of(self.seq),
            ),
            IndexEntry::new(
                EVENT_LOG_BY_CREATED,
                Vec::new(),
                KeyBuf::new()
                    .fixed(&time_key(self.created_at))
                    .fixed(&self.id_key())
                    .into_vec(),
            ),
        ]
    }
}

/// The last number given to an event of an organization (numbers are never reused, even
/// once the retention removed every entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventLogHead {
    pub organization_id: OrganizationId,
    pub last: u64,
}

impl Record for EventLogHead {
    tollgate_actors::record_v1!(EventLogHead, "event_log_head");

    fn id_key(&self) -> Vec<u8> {
        self.organization_id.key()
    }
}

/// The digest of the last `customer.state_changed` data of a customer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomerStateDigest {
    pub customer_id: CustomerId,
    pub digest: Vec<u8>,
}

impl CustomerStateDigest {
    /// The digest of a state as the event renders it (its JSON text).
    pub fn of(data: &str) -> Vec<u8> {
        Sha256::digest(data.as_bytes()).to_vec()
    }
}

impl Record for CustomerStateDigest {
    tollgate_actors::record_v1!(CustomerStateDigest, "customer_state_digest");

    fn id_key(&self) -> Vec<u8> {
        self.customer_id.key()
    }
}

/// A page of the cursor.
#[derive(Debug, Clone, PartialEq)]
pub struct EventPage {
    /// In number order.
    pub items: Vec<LoggedEvent>,
    /// What to pass as `after` next: the last item's number, else the `after` given (0
    /// without one).
    pub next: u64,
}

/// Up to `limit` events of the organization `requested` names (or the only one the
/// subject reaches) numbered above `after` (from the oldest kept without one). An
/// organization the subject does not reach has nothing to show. `None`: the subject
/// reaches several organizations and `requested` names none (the caller must name one).
pub async fn page(
    state: &AppState,
    subject: Subject,
    requested: Option<OrganizationId>,
    after: Option<u64>,
    limit: u64,
) -> Result<Option<EventPage>, AppError> {
    state.store.read_barrier().await?;
    let requested: Vec<OrganizationId> = requested.into_iter().collect();
    let reachable = organizations_for_list(state, subject, &requested).await?;
    let empty = EventPage {
        items: Vec::new(),
        next: after.unwrap_or(0),
    };
    let org = match reachable.as_slice() {
        [] => return Ok(Some(empty)),
        [one] => *one,
        _ => return Ok(None),
    };
    let tenant = org.key();
    let oldest = state
        .store
        .index_iter(
            EVENT_LOG_BY_ORG,
            std::slice::from_ref(&tenant),
            Direction::Asc,
        )?
        .take(1)
        .await?;
    let Some(oldest) = oldest.first() else {
        return Ok(Some(empty));
    };
    let Some(oldest) = state.store.get::<LoggedEvent>(oldest).await? else {
        return Ok(Some(empty));
    };
    // Numbers are dense from the oldest kept on: the page is one range of them.
    let from = after
        .map_or(0, |a| a.saturating_add(1))
        .max(oldest.value.seq);
    let to = from.saturating_add(limit);
    let ids = state
        .store
        .index_range(
            EVENT_LOG_BY_ORG,
            &tenant,
            &LoggedEvent::sort_of(from),
            Some(&LoggedEvent::sort_of(to)),
        )
        .await?;
    let mut items = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(e) = state.store.get::<LoggedEvent>(&id).await? {
            let mut e = e.value;
            resolve(state, &mut e).await?;
            items.push(e);
        }
    }
    items.sort_by_key(|e| e.seq);
    let next = items.last().map_or(empty.next, |e| e.seq);
    Ok(Some(EventPage { items, next }))
}

/// Puts the data of an entry that refers to an endpoint event's payload back in `data`.
/// An event gone (which the retention's order rules out) leaves it empty, logged.
pub async fn resolve(state: &AppState, e: &mut LoggedEvent) -> Result<(), StorageError> {
    let Some(r) = e.data_in else {
        return Ok(());
    };
    let event = match state.store.get::<WebhookEvent>(&r.event_id.key()).await? {
        Some(mut event) => {
            crate::app::webhook_endpoints::load_payload(state, &mut event.value).await?;
            Some(event)
        }
        None => None,
    };
    match event {
        Some(event) => match r.slice(&event.value.payload) {
            Some(data) => {
                e.data = data.to_string();
                e.data_in = None;
            }
            None => tracing::warn!(seq = e.seq, "a logged event's data is not where it says"),
        },
        None => tracing::warn!(seq = e.seq, "a logged event's endpoint event is gone"),
    }
    Ok(())
}

/// Log entries judged per durable batch of the purge.
const PURGE_BATCH: usize = 256;

/// Removes every log entry logged before `cutoff`, oldest first, in batches of
/// [`PURGE_BATCH`] (other tasks served between them, no more than one batch of ids in
/// memory); returns how many went. The heads stay: numbers are never given twice.
pub async fn purge(state: &AppState, cutoff: DateTime<Utc>) -> Result<usize, StorageError> {
    let mut purged = 0;
    loop {
        // What went is out of the index: each round reads from the (new) oldest.
        let ids = state
            .store
            .index_iter(EVENT_LOG_BY_CREATED, &[Vec::new()], Direction::Asc)?
            .take(PURGE_BATCH)
            .await?;
        let read = ids.len();
        let mut batch = Batch::new();
        let mut due = 0;
        for logged in state.store.get_many::<LoggedEvent>(&ids).await? {
            if logged.value.created_at >= cutoff {
                break;
            }
            batch.delete::<LoggedEvent>(&logged.value.id_key(), Expect::Any);
            due += 1;
        }
        if !batch.is_empty() {
            state.store.commit_durable(&batch).await?;
            purged += due;
        }
        if due < read || read < PURGE_BATCH {
            return Ok(purged);
        }
        tokio::task::yield_now().await;
    }
}

#[cfg(test)]
#[path = "event_log_tests.rs"]
mod tests;
