//! The fan-out: from the store's change feed to one event per subscribed endpoint.
//!
//! The feed is written in the same transaction as every change, so nothing that was
//! acknowledged can be missed; each pass waits until the entries it read are durable
//! (a change a crash could undo produces no event), records the events, and removes the
//! entries in that same write. A crash in between replays the entries: the events'
//! ids are derived from (entry, endpoint, position), so the replay writes the same events
//! again instead of new ones.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use actix_web::web;
use tollgate_storage::{Batch, Change, Expect, Record, StorageError};

use super::customer_events::touched_customers;
use super::events::{events_of, is_event_source, Event};
use super::log::Logger;
use crate::api::webhook::WebhookEventType;
use crate::app::event_log::DataRef;
use crate::domain::ids::{CustomerId, OrganizationId, WebhookEventId};
use crate::domain::mail::MailMessage;
use crate::domain::webhook::{
    share_payloads, WebhookEndpoint, WebhookEvent, WebhookEventState, WebhookFormat,
};
use crate::state::AppState;
use tollgate_actors::ids::derived_uuid;

/// Feed entries handled per pass.
const BATCH: usize = 256;

/// Runs the fan-out until the process ends. Call once.
pub fn start(state: web::Data<AppState>) {
    actix_web::rt::spawn(async move {
        let mut leading = true;
        loop {
            // On a shared database one node fans out and delivers (another node's pass
            // would find the entries consumed and fail as a conflict).
            if !state.jobs.lead(&state.store, "webhooks").await {
                leading = false;
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            if !leading {
                // Taken over from a node that stopped: send what it left pending.
                leading = true;
                if let Err(e) = super::delivery::wake_all(&state).await {
                    tracing::warn!(error = %e, "cannot wake the webhook workers");
                }
            }
            match pass(&state).await {
                Ok(0) => {
                    let _ =
                        tokio::time::timeout(Duration::from_secs(5), state.store.changes_written())
                            .await;
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "webhook fan-out failed; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    });
}

/// One pass over the head of the feed; returns how many entries it consumed. Every
/// event is rendered and logged for the cursor (`super::log`); the subscribed endpoints
/// get theirs.
pub async fn pass(state: &AppState) -> Result<usize, StorageError> {
    let changes = state.store.changes(None, BATCH).await?;
    if changes.is_empty() {
        return Ok(0);
    }
    // Only act on what a crash can no longer undo; whether anyone listens decides whether
    // a change is rendered at all.
    let endpoints = crate::app::webhook_endpoints::listening(state).await?;
    let mut batch = Batch::new();
    let mut woken = HashSet::new();
    let mut mail = false;
    let mut invoices = false;
    let mut tax_records = false;
    let mut tax_id_checks = false;
    let mut queued = HashSet::new();
    let mut seqs = Vec::with_capacity(changes.len());
    // The dashboard's day counters, written with the consumption (see `crate::stats`).
    let mut projection = crate::stats::Projection::default();
    let now = state.now();
    let mut logger = Logger::default();
    let states = states_told_after(state, &changes).await;
    for (i, change) in changes.iter().enumerate() {
        seqs.push(change.seq);
        if let Err(e) = projection.add(change, now) {
            tracing::warn!(collection = %change.collection, error = %e, "cannot count a change in the day counters; skipped");
        }
        // The e-mails it stands for, queued in this same write.
        match crate::app::mail::messages_of(state, change).await {
            Ok(messages) => mail |= queue_mail(&mut batch, &mut queued, &messages)?,
            Err(e) => {
                tracing::warn!(collection = %change.collection, error = %e, "cannot render an e-mail; skipped");
            }
        }
        // The documents and the provider's records it calls for, queued in this same
        // write (a crash before it replays the change, which queues them again).
        invoices |= crate::app::invoices::queue(state, change, &mut batch).await?;
        tax_records |= crate::app::tax_transactions::queue(state, change, &mut batch).await?;
        tax_id_checks |= crate::app::tax_id_checks::queue(state, change, &mut batch).await?;
        // The credits of `meter_credit` grants (their own exactly-once writes: a replay of
        // the entry writes nothing twice). A store that cannot take them stops the pass.
        if let Err(e) = crate::app::usage_credits::apply(state, change).await {
            if e.code() == crate::error::Code::StorageUnavailable {
                return Err(StorageError::Unavailable(e.to_string()));
            }
            tracing::warn!(collection = %change.collection, error = %e, "cannot credit a meter_credit grant; skipped");
        }
        if !is_event_source(&change.collection) {
            continue;
        }
        // Every organization's events are kept for the cursor, listened to or not.
        let mut everyone = |_: OrganizationId| true;
        let told = states.get(&i).map_or(&[][..], Vec::as_slice);
        let events = events_of(state, change, told, &mut everyone).await;
        let events = logger.keep(&state.store, events, now).await?;
        for (position, (event, mut logged)) in events.into_iter().enumerate() {
            let mut records = Vec::new();
            for endpoint in endpoints
                .get(&event.organization_id)
                .into_iter()
                .flatten()
                .filter(|e| e.subscribes_to(event.event_type.as_str()))
            {
                records.push(event_for(state, change, position, &event, endpoint));
                if endpoint.enabled {
                    woken.insert(endpoint.id);
                }
            }
            // Endpoints given the same bytes share one payload record.
            for body in share_payloads(&mut records) {
                batch.put(&body, Expect::Any)?;
            }
            for record in &records {
                // The log keeps no second copy of a payload an endpoint event holds.
                if logged.data_in.is_none() {
                    if let Some(r) = DataRef::find(record.id, &record.payload, &logged.data) {
                        logged.data_in = Some(r);
                        logged.data = String::new();
                    }
                }
                batch.put(record, Expect::Any)?;
            }
            batch.put(&logged, Expect::Absent)?;
        }
    }
    logger.finish(&mut batch)?;
    projection.write(&state.store, &mut batch).await?;
    batch.consume_changes(&seqs);
    state.store.commit_durable(&batch).await?;
    for id in woken {
        state.webhooks.wake(id);
    }
    if mail {
        state.mailer.wake();
    }
    if invoices {
        state.invoicer.notify_one();
    }
    if tax_records {
        state.tax_recorder.notify_one();
    }
    if tax_id_checks {
        state.tax_id_checks.notify_one();
    }
    Ok(changes.len())
}

/// For each change of the pass (by position), the customers whose
/// `customer.state_changed` is rendered after it: each customer the pass's changes touch,
/// once, after the last change that touches it. A state reads as it is now, so rendering
/// it after each of a purchase's changes (its checkout, order, subscription, keys and
/// grants) would render the same state several times for the digest to drop.
async fn states_told_after(
    state: &AppState,
    changes: &[Change],
) -> HashMap<usize, Vec<CustomerId>> {
    let mut last: HashMap<CustomerId, usize> = HashMap::new();
    let mut order: Vec<CustomerId> = Vec::new();
    for (i, change) in changes.iter().enumerate() {
        if !is_event_source(&change.collection) {
            continue;
        }
        match touched_customers(state, change).await {
            Ok(ids) => {
                for id in ids {
                    if last.insert(id, i).is_none() {
                        order.push(id);
                    }
                }
            }
            Err(e) => {
                tracing::warn!(collection = %change.collection, error = %e, "cannot tell whose state a change touches; skipped")
            }
        }
    }
    let mut after: HashMap<usize, Vec<CustomerId>> = HashMap::new();
    for id in order {
        if let Some(&i) = last.get(&id) {
            after.entry(i).or_default().push(id);
        }
    }
    after
}

fn event_for(
    state: &AppState,
    change: &Change,
    position: usize,
    event: &Event,
    endpoint: &WebhookEndpoint,
) -> WebhookEvent {
    let now = state.now();
    let id = derived_uuid(
        endpoint.id.uuid(),
        &format!("webhook_event:{}:{position}", change.seq),
    );
    WebhookEvent {
        id: WebhookEventId(id),
        organization_id: endpoint.organization_id,
        endpoint_id: endpoint.id,
        created_at: now,
        modified_at: None,
        event_type: event.event_type.as_str().to_string(),
        resource: event.resource.clone(),
        seq: change
            .seq
            .saturating_mul(256)
            .saturating_add(position as u64),
        payload: format_body(endpoint.format, endpoint.api_version.as_deref(), event),
        state: if endpoint.enabled {
            WebhookEventState::Pending
        } else {
            WebhookEventState::Skipped
        },
        attempts: 0,
        next_attempt_at: None,
        last_http_code: None,
        archived: false,
        payload_apart: true,
        payload_id: None,
    }
}

/// The body in the endpoint's format: the event itself (`raw`) with the endpoint's
/// `api_version` (polar-sdk 1.0's payload classes require it; an endpoint from before
/// versions has the default), or a chat message for a Discord or Slack incoming webhook.
pub fn format_body(format: WebhookFormat, api_version: Option<&str>, event: &Event) -> String {
    match format {
        WebhookFormat::Raw => {
            let mut body = event.body.clone();
            if let Some(fields) = body.as_object_mut() {
                let version = api_version.unwrap_or(crate::api::version::DEFAULT.as_str());
                fields.insert("api_version".into(), version.into());
            }
            body.to_string()
        }
        WebhookFormat::Discord => serde_json::json!({
            "content": summary(event),
            "username": "Tollgate",
        })
        .to_string(),
        WebhookFormat::Slack => serde_json::json!({ "text": summary(event) }).to_string(),
    }
}

/// An amount of `currency` in its major units (`2500` USD → `25.00`, `3000` JPY →
/// `3000`); a code that is not one reads as two-decimal.
fn major_units(amount: i64, currency: &str) -> String {
    crate::domain::currency::Currency::from_code(&currency.to_ascii_lowercase())
        .unwrap_or_default()
        .major(amount)
}

/// One line saying what happened, for chat formats.
fn summary(event: &Event) -> String {
    let data = &event.body["data"];
    let id = data["id"].as_str().unwrap_or_default();
    let detail = match event.event_type {
        WebhookEventType::OrderCreated | WebhookEventType::OrderPaid => format!(
            "{} bought {} ({} {})",
            data["customer"]["email"].as_str().unwrap_or("a customer"),
            data["product"]["name"].as_str().unwrap_or("a product"),
            data["amount"]
                .as_i64()
                .map(|a| major_units(a, data["currency"].as_str().unwrap_or_default()))
                .unwrap_or_default(),
            data["currency"].as_str().unwrap_or_default().to_uppercase(),
        ),
        WebhookEventType::SubscriptionCreated
        | WebhookEventType::SubscriptionActive
        | WebhookEventType::SubscriptionCanceled
        | WebhookEventType::SubscriptionUncanceled
        | WebhookEventType::SubscriptionRevoked
        | WebhookEventType::SubscriptionPastDue
        | WebhookEventType::SubscriptionCycled
        | WebhookEventType::SubscriptionUpdated => format!(
            "{} – {} ({})",
            data["customer"]["email"].as_str().unwrap_or("a customer"),
            data["product"]["name"].as_str().unwrap_or("a product"),
            data["status"].as_str().unwrap_or_default(),
        ),
        _ => id.to_string(),
    };
    format!("Tollgate: {} – {detail}", event.event_type.as_str())
}

/// Puts `messages` in the pass's `batch`, each id once: a notice coalesced with one of an
/// earlier change of this same pass (a subscription canceled, uncanceled and canceled
/// again within one notice window) shares its id, and a second `Expect::Absent` put of
/// one id would abort the whole write, at every pass after it too. Whether any was new.
fn queue_mail(
    batch: &mut Batch,
    queued: &mut HashSet<Vec<u8>>,
    messages: &[MailMessage],
) -> Result<bool, StorageError> {
    let mut any = false;
    for m in messages {
        if queued.insert(m.id_key()) {
            batch.put(m, Expect::Absent)?;
            any = true;
        }
    }
    Ok(any)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::MailMessageId;
    use crate::domain::mail::{MailKind, MailState};

    fn notice(id: MailMessageId) -> MailMessage {
        let now = chrono::Utc::now();
        MailMessage {
            id,
            organization_id: OrganizationId::new(),
            created_at: now,
            modified_at: None,
            kind: MailKind::SubscriptionCanceled,
            to: "ada@example.com".into(),
            reply_to: None,
            from_name: "Acme".into(),
            subject: "Your subscription was canceled".into(),
            text: "Canceled".into(),
            html: "<p>Canceled</p>".into(),
            order_id: None,
            subscription_id: None,
            customer_id: None,
            state: MailState::Pending,
            attempts: Vec::new(),
            next_attempt_at: Some(now),
            attachments: Vec::new(),
        }
    }

    #[actix_web::test]
    async fn a_notice_coalesced_twice_in_one_pass_is_queued_once_and_the_write_commits() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = tollgate_storage::Store::open(&tollgate_storage::StoreConfig::new(
            dir.path().to_path_buf(),
        ))
        .expect("opening a store");
        let id = MailMessageId::new();
        // Canceled, uncanceled, canceled again within one window: two renderings, one id.
        let messages = [notice(id), notice(MailMessageId::new())];
        let again = [notice(id)];
        let mut batch = Batch::new();
        let mut queued = HashSet::new();
        assert!(queue_mail(&mut batch, &mut queued, &messages).unwrap());
        assert!(!queue_mail(&mut batch, &mut queued, &again).unwrap());
        assert_eq!(batch.len(), 2);
        store
            .commit_durable(&batch)
            .await
            .expect("the pass's write commits");
        assert!(store.get::<MailMessage>(&id.key()).await.unwrap().is_some());

        // What the dedup prevents: the same id put twice aborts the whole write.
        let mut twice = Batch::new();
        let other = MailMessageId::new();
        twice.put(&notice(other), Expect::Absent).unwrap();
        twice.put(&notice(other), Expect::Absent).unwrap();
        assert!(store.commit_durable(&twice).await.is_err());
    }

    fn order_event() -> Event {
        Event {
            event_type: WebhookEventType::OrderCreated,
            organization_id: OrganizationId::new(),
            resource: "order:1".into(),
            body: serde_json::json!({
                "type": "order.created",
                "timestamp": "2025-01-02T03:04:05Z",
                "data": {"id": "o1", "amount": 2500, "currency": "usd",
                         "customer": {"email": "ada@example.com"}, "product": {"name": "Ebook"}},
            }),
        }
    }

    #[test]
    fn raw_is_the_event_and_chat_formats_are_one_line_messages() {
        let e = order_event();
        let raw: serde_json::Value =
            serde_json::from_str(&format_body(WebhookFormat::Raw, Some("2026-10"), &e)).unwrap();
        let mut expected = e.body.clone();
        expected["api_version"] = "2026-10".into();
        assert_eq!(raw, expected);
        // An endpoint from before versions: the default one.
        let raw: serde_json::Value =
            serde_json::from_str(&format_body(WebhookFormat::Raw, None, &e)).unwrap();
        assert_eq!(raw["api_version"], "2026-04");
        let discord: serde_json::Value =
            serde_json::from_str(&format_body(WebhookFormat::Discord, None, &e)).unwrap();
        assert_eq!(
            discord["content"],
            "Tollgate: order.created – ada@example.com bought Ebook (25.00 USD)"
        );
        let slack: serde_json::Value =
            serde_json::from_str(&format_body(WebhookFormat::Slack, None, &e)).unwrap();
        assert_eq!(slack["text"], discord["content"]);
    }

    #[test]
    fn chat_amounts_use_the_currencys_minor_unit() {
        let mut e = order_event();
        e.body["data"]["amount"] = 3000.into();
        e.body["data"]["currency"] = "jpy".into();
        let slack: serde_json::Value =
            serde_json::from_str(&format_body(WebhookFormat::Slack, None, &e)).unwrap();
        assert_eq!(
            slack["text"],
            "Tollgate: order.created – ada@example.com bought Ebook (3000 JPY)"
        );
        assert_eq!(major_units(1800, "eur"), "18.00");
        assert_eq!(major_units(-505, "USD"), "-5.05");
        assert_eq!(major_units(7, "??"), "0.07");
    }
}
