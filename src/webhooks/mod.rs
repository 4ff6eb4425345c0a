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

use tollgate_storage::Batch;

use crate::state::AppState;

/// Deletes settled events older than `webhooks.retention_days`, with their delivery log,
/// and the cursor's log entries as old; returns how many (endpoint) events went. Pending
/// events stay until they settle.
pub async fn purge(state: &AppState) -> Result<usize, tollgate_storage::StorageError> {
    use crate::domain::webhook::{
        WebhookDelivery, WebhookEvent, WEBHOOK_DELIVERY_BY_EVENT, WEBHOOK_EVENT_BY_CREATED,
    };
    use tollgate_storage::{Direction, Expect};

    let days = i64::try_from(state.settings.webhooks.retention_days).unwrap_or(i64::MAX);
    let cutoff = state.now() - chrono::Duration::days(days.min(100_000));
    let mut purged = 0;
    let mut batch = Batch::new();
    let ids: Vec<Vec<u8>> = state
        .store
        .index_iter(WEBHOOK_EVENT_BY_CREATED, &[Vec::new()], Direction::Asc)?
        .take(10_000)
        .await?;
    for id in ids {
        let Some(event) = state.store.get::<WebhookEvent>(&id).await? else {
            continue;
        };
        if event.value.created_at >= cutoff {
            break;
        }
        // Pending events wait to settle, unless their endpoint is gone.
        if event.value.is_pending()
            && state
                .store
                .get::<crate::domain::webhook::WebhookEndpoint>(&event.value.endpoint_id.key())
                .await?
                .is_some()
        {
            continue;
        }
        let tenants = [event.value.id.key()];
        let mut deliveries =
            state
                .store
                .index_iter(WEBHOOK_DELIVERY_BY_EVENT, &tenants, Direction::Asc)?;
        while let Some(delivery) = deliveries.next().await {
            batch.delete::<WebhookDelivery>(&delivery?, Expect::Any);
        }
        batch.delete::<WebhookEvent>(&id, Expect::Rev(event.rev));
        purged += 1;
        if batch.len() >= 200 {
            state.store.commit_durable(&batch).await?;
            batch = Batch::new();
        }
    }
    if !batch.is_empty() {
        state.store.commit_durable(&batch).await?;
    }
    // The cursor's log keeps as long.
    crate::app::event_log::purge(state, cutoff, 10_000).await?;
    Ok(purged)
}
