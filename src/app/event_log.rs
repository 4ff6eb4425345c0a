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
use crate::domain::ids::{CustomerId, OrganizationId};
use crate::domain::time_key;
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
    /// The `data` of the body, as JSON text.
    pub data: String,
    pub created_at: DateTime<Utc>,
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

impl Record for LoggedEvent {
    tollgate_actors::record_v1!(LoggedEvent, "event_log");
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
            items.push(e.value);
        }
    }
    items.sort_by_key(|e| e.seq);
    let next = items.last().map_or(empty.next, |e| e.seq);
    Ok(Some(EventPage { items, next }))
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
