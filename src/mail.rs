//! The e-mail sender: sends what the outbox holds as it comes due.
//!
//! Messages are decided in the webhook fan-out (`crate::webhooks::dispatch`, from the
//! change feed, through `crate::app::mail`) or on request, and stored before anyone is
//! told. This loop, on the node that leads the webhooks, takes the pending messages whose
//! time has come, oldest first, hands each to the transport (`crate::egress::mail`) and
//! records the attempt on the message in one durable write. A crash between the two sends
//! that message again after the restart, with the same `Message-ID`; nothing acknowledged
//! is ever lost, and a message is never decided twice.

use std::time::Duration;

use actix_web::web;
use tollgate_storage::{Batch, Direction, Expect, StorageError};

use crate::domain::mail::{MailMessage, MAIL_PENDING};
use crate::state::AppState;

/// Messages sent per pass, at most.
const BATCH: usize = 32;
/// How long the sender sleeps when nothing is due and nobody wakes it.
const IDLE: Duration = Duration::from_secs(1);

/// Runs the sender until the process ends. Call once.
pub fn start(state: web::Data<AppState>) {
    actix_web::rt::spawn(async move {
        loop {
            // One node sends, the one that fans the feed out.
            if !state.jobs.lead(&state.store, "webhooks").await {
                tokio::time::sleep(IDLE).await;
                continue;
            }
            match pass(&state).await {
                Ok(n) if n >= BATCH => {}
                Ok(_) => state.mailer.woken(IDLE).await,
                Err(e) => {
                    tracing::warn!(error = %e, "e-mail sender failed; retrying");
                    tokio::time::sleep(IDLE).await;
                }
            }
        }
    });
}

/// Sends the messages due now (at most [`BATCH`]); returns how many were attempted.
pub async fn pass(state: &AppState) -> Result<usize, StorageError> {
    let now = state.now();
    let ids: Vec<Vec<u8>> = state
        .store
        .index_iter(MAIL_PENDING, &[Vec::new()], Direction::Asc)?
        .take(BATCH)
        .await?;
    let mut attempted = 0;
    for id in ids {
        let Some(stored) = state.store.get::<MailMessage>(&id).await? else {
            continue;
        };
        let mut m = stored.value;
        if !m.is_pending() {
            continue;
        }
        if m.next_attempt_at.is_some_and(|at| at > now) {
            // The index is in time order: nothing later is due either.
            break;
        }
        let delivery = state.mailer.send(&m).await;
        let at = state.now();
        m.record_attempt(at, delivery, state.mailer.policy);
        if let Some(last) = m.attempts.last() {
            let state_name = m.state.as_str();
            if last.ok {
                tracing::info!(to = %m.to, kind = m.kind.as_str(), answer = %last.answer, "e-mail {state_name}");
            } else {
                tracing::warn!(to = %m.to, kind = m.kind.as_str(), answer = %last.answer, next = ?m.next_attempt_at, "e-mail not sent ({state_name})");
            }
        }
        let mut batch = Batch::new();
        batch.put(&m, Expect::Rev(stored.rev))?;
        state.store.commit_durable(&batch).await?;
        attempted += 1;
    }
    Ok(attempted)
}

/// Deletes messages settled (sent, failed or skipped) more than `webhooks.retention_days`
/// ago, as the webhook history is kept; returns how many went. Pending ones stay.
pub async fn purge(state: &AppState) -> Result<usize, StorageError> {
    use crate::domain::mail::MAIL_BY_CREATED;
    let days = i64::try_from(state.settings.webhooks.retention_days).unwrap_or(i64::MAX);
    let cutoff = state.now() - chrono::Duration::days(days.min(100_000));
    let ids: Vec<Vec<u8>> = state
        .store
        .index_iter(MAIL_BY_CREATED, &[Vec::new()], Direction::Asc)?
        .take(10_000)
        .await?;
    let mut purged = 0;
    let mut batch = Batch::new();
    for id in ids {
        let Some(m) = state.store.get::<MailMessage>(&id).await? else {
            continue;
        };
        if m.value.created_at >= cutoff {
            break;
        }
        if m.value.is_pending() {
            continue;
        }
        batch.delete::<MailMessage>(&id, Expect::Rev(m.rev));
        purged += 1;
        if batch.len() >= 200 {
            state.store.commit_durable(&batch).await?;
            batch = Batch::new();
        }
    }
    if !batch.is_empty() {
        state.store.commit_durable(&batch).await?;
    }
    Ok(purged)
}
