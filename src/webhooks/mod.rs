//! Webhooks: telling a seller's backend what happened, signed, in order, never lost.
//!
//! * [`events`]: which events a change of the store stands for, rendered as the API
//!   renders the resource.
//! * [`dispatch`]: the fan-out. It reads the store's change feed (the outbox, written in
//!   the same transaction as each change), turns each entry into one event per subscribed
//!   endpoint, and removes the entry in the transaction that records those events.
//! * [`customer_events`]: customers, checkouts' expiry, discounts, `customer.state_changed`.
//! * [`log`]: every event kept per organization, numbered in commit order, for the
//!   cursor (`crate::app::event_log`, `GET /v1/webhooks/events?after=`): a backend that
//!   was down catches up, once.
//! * [`delivery`]: one worker per endpoint sends its events, signed with Standard
//!   Webhooks headers, retries with backoff and jitter, and logs every attempt.
//! * what a URL may point at, and the HTTP clients: `crate::egress`.

pub mod customer_events;
pub mod delivery;
pub mod dispatch;
pub mod events;
pub mod log;

use std::collections::{HashMap, HashSet};

use tollgate_storage::{Batch, Direction, Expect, StorageError};

use crate::domain::ids::{WebhookEndpointId, WebhookEventId};
use crate::domain::webhook::{
    WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookPayload, WEBHOOK_DELIVERY_BY_EVENT,
    WEBHOOK_EVENT_BY_CREATED,
};
use crate::state::AppState;

/// Events judged per durable batch of the purge (each with its few deliveries): bounded,
/// so that one batch never holds the store for long; the purge goes on batch after batch
/// until nothing due is left.
pub const PURGE_BATCH: usize = 200;

/// Deletes the cursor's log entries older than `webhooks.retention_days`, then the settled
/// events as old, with their delivery log; returns how many (endpoint) events went. All that
/// is due goes, in batches of [`PURGE_BATCH`] with other tasks served between them: the
/// purge keeps up with any inflow. Pending events stay until they settle (an endpoint
/// that is down gets every event once it is back), unless their endpoint is gone.
pub async fn purge(state: &AppState) -> Result<usize, StorageError> {
    let days = i64::try_from(state.settings.webhooks.retention_days).unwrap_or(i64::MAX);
    let cutoff = state.now() - chrono::Duration::days(days.min(100_000));
    // The cursor's log keeps as long, and goes first: an entry may hold its data in the
    // payload of an endpoint event created with it (`LoggedEvent::data_in`), never later
    // than it, so with the same cutoff the entry always goes before its event. A log
    // purge that fails stops here, events untouched.
    crate::app::event_log::purge(state, cutoff).await?;
    let mut purged = 0;
    // Whether each endpoint met still exists (a pending event of a deleted one goes).
    let mut endpoints: HashMap<WebhookEndpointId, bool> = HashMap::new();
    // One walk from the oldest: what is skipped (pending) is not read twice in a run.
    let mut oldest =
        state
            .store
            .index_iter(WEBHOOK_EVENT_BY_CREATED, &[Vec::new()], Direction::Asc)?;
    let mut done = false;
    while !done {
        let mut batch = Batch::new();
        let mut events = 0;
        // The events this batch deletes, and the shared payloads they read.
        let mut gone: HashSet<WebhookEventId> = HashSet::new();
        let mut shared_payloads: Vec<WebhookEventId> = Vec::new();
        while events < PURGE_BATCH {
            let Some(id) = oldest.next().await else {
                done = true;
                break;
            };
            let id = id?;
            let Some(event) = state.store.get::<WebhookEvent>(&id).await? else {
                continue;
            };
            if event.value.created_at >= cutoff {
                done = true;
                break;
            }
            if event.value.is_pending() {
                let endpoint = event.value.endpoint_id;
                let exists = match endpoints.get(&endpoint) {
                    Some(exists) => *exists,
                    None => {
                        let exists = state
                            .store
                            .revision::<WebhookEndpoint>(&endpoint.key())
                            .await?
                            .is_some();
                        endpoints.insert(endpoint, exists);
                        exists
                    }
                };
                if exists {
                    continue;
                }
            }
            let tenants = [event.value.id.key()];
            let mut deliveries =
                state
                    .store
                    .index_iter(WEBHOOK_DELIVERY_BY_EVENT, &tenants, Direction::Asc)?;
            while let Some(delivery) = deliveries.next().await {
                batch.delete::<WebhookDelivery>(&delivery?, Expect::Any);
            }
            if event.value.payload_apart {
                match event.value.payload_id {
                    None => {
                        batch.delete::<WebhookPayload>(&id, Expect::Any);
                    }
                    Some(shared) => shared_payloads.push(shared),
                }
            }
            gone.insert(event.value.id);
            batch.delete::<WebhookEvent>(&id, Expect::Rev(event.rev));
            events += 1;
        }
        for payload in unread_payloads(state, shared_payloads, &gone).await? {
            batch.delete::<WebhookPayload>(&payload.key(), Expect::Any);
        }
        if batch.is_empty() {
            continue;
        }
        match state.store.commit_durable(&batch).await {
            Ok(_) => purged += events,
            // An event settled or was redelivered meanwhile: the next run judges it again.
            Err(StorageError::Conflict { .. }) => {}
            Err(e) => return Err(e),
        }
        tokio::task::yield_now().await;
    }
    Ok(purged)
}

/// Of the shared payloads `ids`, those no event reads once the events `gone` are: each
/// goes with the last of its readers (an endpoint that is down keeps its pending event,
/// and so the payload, however old the others are). Readers are never added to a payload
/// after it is written, so a reader absent now stays absent.
async fn unread_payloads(
    state: &AppState,
    mut ids: Vec<WebhookEventId>,
    gone: &HashSet<WebhookEventId>,
) -> Result<Vec<WebhookEventId>, StorageError> {
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<Vec<u8>> = ids.iter().map(|id| id.key()).collect();
    let payloads = state.store.get_many::<WebhookPayload>(&keys).await?;
    let mut others: Vec<Vec<u8>> = payloads
        .iter()
        .flat_map(|p| p.value.readers())
        .filter(|reader| !gone.contains(reader))
        .map(|reader| reader.key())
        .collect();
    others.sort();
    others.dedup();
    let still_read: HashSet<WebhookEventId> = if others.is_empty() {
        HashSet::new()
    } else {
        state
            .store
            .get_many::<WebhookEvent>(&others)
            .await?
            .into_iter()
            .map(|e| e.value.id)
            .collect()
    };
    Ok(payloads
        .into_iter()
        .filter(|p| !p.value.readers().any(|r| still_read.contains(&r)))
        .map(|p| p.value.id)
        .collect())
}
