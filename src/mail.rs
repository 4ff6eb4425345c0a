//! The e-mail sender: sends what the outbox holds as it comes due.
//!
//! Messages are decided in the webhook fan-out (`crate::webhooks::dispatch`, from the
//! change feed, through `crate::app::mail`) or on request, and stored before anyone is
//! told. On the node that leads the webhooks, `email.workers` workers take the pending
//! messages whose time has come, oldest first, and one more worker takes the sign-in codes
//! (their own index, [`MAIL_PENDING_CODES`], so a code never waits behind notices). A
//! worker claims a message in this process before it reads it (two workers never send one
//! message at once), hands it to the transport (`crate::egress::mail`, whose SMTP
//! conversation is bounded as a whole) and records the attempt on the message in one
//! durable write. A crash between the two sends that message again after the restart,
//! with the same `Message-ID`; nothing acknowledged is ever lost, and a message is never
//! decided twice.
//!
//! A message whose building or sending panics is recorded as failed for good (the panic is
//! caught around that one message); a worker that dies anyway is restarted by its
//! supervisor. Each worker beats at every turn of its loop: one that has not come back for
//! `email.stuck_after_secs` makes `/readyz` answer 503 (`crate::egress::mail::SenderHealth`).
//!
//! Before a message leaves, what it tells is checked once more: a cancellation notice of a
//! cancellation undone (or told again by a newer notice) is withdrawn, and a receipt to an
//! address that had `rate_limits.receipts_per_address` already waits its turn.
//!
//! A message's attachments are references ([`Attachment`]): at each attempt the sender
//! reads what they name and renders it (an invoice's or a credit note's PDF, from its
//! immutable record: the same bytes every time), then hands the files to the transport. A
//! message is never sent without a file it names: a document that cannot be read (not
//! there) or rendered (the renderer fails or panics) counts as a failed attempt for now,
//! like a server that does not answer: it is tried again after the retry policy's delay,
//! and fails for good after `email.max_attempts`, each attempt logged and recorded on the
//! message with what went wrong. (A receipt that says "Invoice ACME-0001, attached" and
//! arrives without it would be worse than one that arrives later; a renderer fixed by an
//! upgrade within the retries still sends it.)

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::web;
use futures_util::FutureExt;
use tollgate_storage::{Batch, Direction, Expect, StorageError, Stored};

use crate::app::mail::{canceled_notice_id, notice_bucket};
use crate::domain::invoice::Invoice;
use crate::domain::mail::{
    Attachment, Delivery, MailKind, MailMessage, MAIL_PENDING, MAIL_PENDING_CODES,
};
use crate::egress::mail::{File, Mailer};
use crate::state::AppState;
use tollgate_actors::subscription::Subscription;

/// Pending ids a worker looks through for one that is due and not claimed.
const SCAN: usize = 96;
/// How long a worker sleeps when nothing is due and nobody wakes it.
const IDLE: Duration = Duration::from_secs(1);

/// Which pending messages a worker takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Queue {
    /// Every pending message, oldest due first.
    All,
    /// Sign-in codes only.
    Codes,
}

/// The messages being sent in this process, by id (only the leading node sends).
#[derive(Default)]
struct Claims(Mutex<HashSet<Vec<u8>>>);

/// A claimed message; released when dropped (also when its worker unwinds).
struct Claim {
    claims: Arc<Claims>,
    id: Vec<u8>,
}

impl Claims {
    fn set(&self) -> std::sync::MutexGuard<'_, HashSet<Vec<u8>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn claim(self: &Arc<Self>, id: &[u8]) -> Option<Claim> {
        self.set().insert(id.to_vec()).then(|| Claim {
            claims: self.clone(),
            id: id.to_vec(),
        })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.claims.set().remove(&self.id);
    }
}

/// Starts the workers and their supervisors. Call once.
pub fn start(state: web::Data<AppState>) {
    let health = &state.mailer.health;
    health.start();
    let workers = health.workers();
    let claims = Arc::new(Claims::default());
    for i in 0..workers {
        let queue = if i + 1 == workers {
            Queue::Codes
        } else {
            Queue::All
        };
        let state = state.clone();
        let claims = claims.clone();
        actix_web::rt::spawn(async move {
            loop {
                let run = actix_web::rt::spawn(worker(state.clone(), claims.clone(), i, queue));
                let why = match run.await {
                    Ok(()) => "it returned".to_string(),
                    Err(e) if e.is_panic() => "it panicked".to_string(),
                    Err(e) => e.to_string(),
                };
                state.mailer.health.restarted();
                tracing::error!(
                    worker = i,
                    "e-mail sender worker stopped ({why}); restarting it"
                );
                tokio::time::sleep(IDLE).await;
            }
        });
    }
}

async fn worker(state: web::Data<AppState>, claims: Arc<Claims>, i: usize, queue: Queue) {
    let mut signal = state.mailer.wake_signal();
    loop {
        state.mailer.health.beat(i);
        // One node sends, the one that fans the feed out.
        if !state.jobs.lead(&state.store, "webhooks").await {
            tokio::time::sleep(IDLE).await;
            continue;
        }
        signal.borrow_and_update();
        match next(&state, &claims, queue).await {
            Ok(Some((claim, stored))) => {
                if let Err(e) = deliver(&state, stored).await {
                    tracing::warn!(error = %e, "e-mail sender failed; retrying");
                    tokio::time::sleep(IDLE).await;
                }
                drop(claim);
            }
            Ok(None) => Mailer::woken(&mut signal, IDLE).await,
            Err(e) => {
                tracing::warn!(error = %e, "e-mail sender failed; retrying");
                tokio::time::sleep(IDLE).await;
            }
        }
    }
}

/// The oldest message of `queue` that is due and that no other worker holds, claimed.
async fn next(
    state: &AppState,
    claims: &Arc<Claims>,
    queue: Queue,
) -> Result<Option<(Claim, Stored<MailMessage>)>, StorageError> {
    let index = match queue {
        Queue::All => MAIL_PENDING,
        Queue::Codes => MAIL_PENDING_CODES,
    };
    let ids: Vec<Vec<u8>> = state
        .store
        .index_iter(index, &[Vec::new()], Direction::Asc)?
        .take(SCAN)
        .await?;
    let now = state.now();
    for id in ids {
        // Claimed before it is read: what is read after the claim is what the last holder
        // wrote.
        let Some(claim) = claims.claim(&id) else {
            continue;
        };
        let Some(stored) = state.store.get::<MailMessage>(&id).await? else {
            continue;
        };
        if !stored.value.is_pending() {
            continue;
        }
        if stored.value.next_attempt_at.is_some_and(|at| at > now) {
            // The index is in time order: nothing later is due either.
            break;
        }
        return Ok(Some((claim, stored)));
    }
    Ok(None)
}

/// Sends the messages due now, one after another, in this task (at most `SCAN`); returns
/// how many were attempted. For tests and tools: the workers do this in the background.
pub async fn pass(state: &AppState) -> Result<usize, StorageError> {
    let claims = Arc::new(Claims::default());
    let mut attempted = 0;
    while attempted < SCAN {
        let Some((claim, stored)) = next(state, &claims, Queue::All).await? else {
            break;
        };
        deliver(state, stored).await?;
        drop(claim);
        attempted += 1;
    }
    Ok(attempted)
}

/// Why a message does not leave now.
enum Hold {
    /// Never: what it told was undone.
    Withdraw(String),
    /// Later: its recipient had their share of receipts.
    Defer(chrono::DateTime<chrono::Utc>),
}

/// Whether `m` should still go, and now.
async fn hold(state: &AppState, m: &MailMessage) -> Result<Option<Hold>, StorageError> {
    if m.kind == MailKind::SubscriptionCanceled {
        if let Some(id) = m.subscription_id {
            if let Some(s) = state.store.get::<Subscription>(&id.key()).await? {
                let s = s.value;
                if !s.cancel_at_period_end && s.ends_at.is_none() {
                    return Ok(Some(Hold::Withdraw(
                        "not sent: the cancellation was undone before the notice left".into(),
                    )));
                }
                // A cancellation of a later window has its own notice.
                let window =
                    i64::try_from(state.settings.email.notice_window_secs).unwrap_or(i64::MAX);
                if window > 0 {
                    let first = notice_bucket(m.created_at, window) + 1;
                    let last = notice_bucket(state.now(), window).min(first + 1_000);
                    for bucket in first..=last {
                        let newer = canceled_notice_id(id, bucket);
                        if state
                            .store
                            .get::<MailMessage>(&newer.key())
                            .await?
                            .is_some()
                        {
                            return Ok(Some(Hold::Withdraw(
                                "not sent: a newer cancellation's notice tells it".into(),
                            )));
                        }
                    }
                }
            }
        }
    }
    if m.kind.is_receipt() && state.mailer.sends() {
        if let Err(wait) = state.limits.receipt_to(&m.to) {
            let wait = chrono::Duration::from_std(wait)
                .unwrap_or(chrono::Duration::hours(1))
                .max(chrono::Duration::seconds(1));
            return Ok(Some(Hold::Defer(state.now() + wait)));
        }
    }
    Ok(None)
}

/// One attempt at `stored`, recorded on it.
async fn deliver(state: &AppState, stored: Stored<MailMessage>) -> Result<(), StorageError> {
    let mut m = stored.value;
    let delivery = match hold(state, &m).await? {
        Some(Hold::Defer(until)) => {
            tracing::info!(to = %m.to, kind = m.kind.as_str(), until = %until,
                "e-mail waits: its recipient had their share of receipts");
            m.next_attempt_at = Some(until);
            m.modified_at = Some(state.now());
            let mut batch = Batch::new();
            batch.put(&m, Expect::Rev(stored.rev))?;
            state.store.commit_durable(&batch).await?;
            return Ok(());
        }
        Some(Hold::Withdraw(why)) => Delivery::Withdrawn(why),
        None if !state.mailer.sends() => Delivery::Skipped,
        None => match files_of(state, &m).await? {
            Err(why) => {
                tracing::warn!(to = %m.to, kind = m.kind.as_str(), error = %why,
                    "an e-mail's attachment cannot be made; the attempt counts as failed");
                Delivery::Transient(why)
            }
            Ok(files) => send(state, &m, &files).await,
        },
    };
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
    Ok(())
}

/// One attempt to hand `m` and its files to the transport; a panic while building or
/// sending it fails it for good.
async fn send(state: &AppState, m: &MailMessage, files: &[File]) -> Delivery {
    match AssertUnwindSafe(state.mailer.send(m, files))
        .catch_unwind()
        .await
    {
        Ok(delivery) => delivery,
        Err(panic) => {
            state.mailer.health.panicked();
            let what = panic_text(panic.as_ref());
            tracing::error!(to = %m.to, kind = m.kind.as_str(), panic = %what,
                "building or sending an e-mail panicked; it is given up");
            Delivery::Permanent(format!(
                "cannot build or send the message (it panicked: {what})"
            ))
        }
    }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// The files `m` names, rendered for this attempt: `Err` (why) when one cannot be made now
/// (its document is not there, or does not render); a storage error as such.
async fn files_of(
    state: &AppState,
    m: &MailMessage,
) -> Result<Result<Vec<File>, String>, StorageError> {
    let mut files = Vec::with_capacity(m.attachments.len());
    for a in &m.attachments {
        match *a {
            Attachment::Invoice(id) => {
                let Some(invoice) = state.store.get::<Invoice>(&id.key()).await? else {
                    return Ok(Err(format!(
                        "not sent: its attachment, the document {id}, does not exist"
                    )));
                };
                let invoice = invoice.value;
                let name = crate::app::mail::attachment_name(&invoice);
                // The PDF is laid out and compressed off the async workers.
                let rendered = tokio::task::spawn_blocking(move || {
                    std::panic::catch_unwind(AssertUnwindSafe(|| {
                        crate::app::invoices::pdf::render(&invoice)
                    }))
                })
                .await;
                let bytes = match rendered {
                    Ok(Ok(Ok(bytes))) => bytes,
                    Ok(Ok(Err(e))) => {
                        return Ok(Err(format!("not sent: {name} does not render: {e}")))
                    }
                    Ok(Err(panic)) => {
                        return Ok(Err(format!(
                            "not sent: rendering {name} panicked: {}",
                            panic_text(panic.as_ref())
                        )))
                    }
                    Err(e) => return Ok(Err(format!("not sent: rendering {name} failed: {e}"))),
                };
                files.push(File {
                    name,
                    content_type: "application/pdf".into(),
                    bytes,
                });
            }
        }
    }
    Ok(Ok(files))
}

/// Messages judged per durable batch of the purge.
pub const PURGE_BATCH: usize = 200;

/// Deletes messages settled (sent, failed or skipped) more than `webhooks.retention_days`
/// ago, as the webhook history is kept; returns how many went. All that is due goes, in
/// batches of [`PURGE_BATCH`] with other tasks served between them, in one walk from the
/// oldest. Pending ones stay: a mail server that refuses gets every message once back.
pub async fn purge(state: &AppState) -> Result<usize, StorageError> {
    use crate::domain::mail::MAIL_BY_CREATED;
    let days = i64::try_from(state.settings.webhooks.retention_days).unwrap_or(i64::MAX);
    let cutoff = state.now() - chrono::Duration::days(days.min(100_000));
    let mut oldest = state
        .store
        .index_iter(MAIL_BY_CREATED, &[Vec::new()], Direction::Asc)?;
    let mut purged = 0;
    let mut done = false;
    while !done {
        let mut batch = Batch::new();
        let mut ids = Vec::new();
        while batch.len() < PURGE_BATCH {
            let Some(id) = oldest.next().await else {
                done = true;
                break;
            };
            let id = id?;
            let Some(m) = state.store.get::<MailMessage>(&id).await? else {
                continue;
            };
            if m.value.created_at >= cutoff {
                done = true;
                break;
            }
            if m.value.is_pending() {
                continue;
            }
            batch.delete::<MailMessage>(&id, Expect::Rev(m.rev));
            ids.push(m.value.id);
        }
        if batch.is_empty() {
            continue;
        }
        match state.store.commit_durable(&batch).await {
            Ok(_) => {
                purged += batch.len();
                // The file transport's copies go with the messages.
                for id in ids {
                    if let Err(e) = state.mailer.forget(id).await {
                        tracing::warn!(error = %e, message = %id, "removing a purged message's file failed");
                    }
                }
            }
            // A message changed meanwhile: the next run judges it again.
            Err(StorageError::Conflict { .. }) => {}
            Err(e) => return Err(e),
        }
        tokio::task::yield_now().await;
    }
    Ok(purged)
}

/// Empties the rendered text and HTML of messages settled more than
/// `retention.grace_hours` ago (the bodies are most of a message's bytes, and nothing
/// reads a settled message's body; the dashboard shows its recipient, kind, subject and
/// state, which stay); returns how many. Oldest first, in batches of [`PURGE_BATCH`],
/// through the index of the settled messages that still hold a body: a run reads only
/// what it empties. Pending messages keep theirs.
pub async fn slim(state: &AppState) -> Result<usize, StorageError> {
    use crate::domain::mail::MAIL_BODY_KEPT;
    let hours = i64::try_from(state.settings.retention.grace_hours).unwrap_or(i64::MAX);
    let cutoff = state.now() - chrono::Duration::try_hours(hours).unwrap_or(chrono::Duration::MAX);
    let mut slimmed = 0;
    loop {
        // What was emptied left the index: each round reads from the (new) oldest.
        let ids = state
            .store
            .index_iter(MAIL_BODY_KEPT, &[Vec::new()], Direction::Asc)?
            .take(PURGE_BATCH)
            .await?;
        let read = ids.len();
        let mut batch = Batch::new();
        for stored in state.store.get_many::<MailMessage>(&ids).await? {
            let mut m = stored.value;
            if m.modified_at.unwrap_or(m.created_at) >= cutoff {
                break;
            }
            m.drop_body();
            batch.put(&m, Expect::Rev(stored.rev))?;
        }
        let due = batch.len();
        if due > 0 {
            match state.store.commit_durable(&batch).await {
                Ok(_) => slimmed += due,
                // A message changed meanwhile: the next run judges it again.
                Err(StorageError::Conflict { .. }) => return Ok(slimmed),
                Err(e) => return Err(e),
            }
        }
        if due < read || read < PURGE_BATCH {
            return Ok(slimmed);
        }
        tokio::task::yield_now().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing;
    use crate::domain::ids::MailMessageId;
    use crate::domain::invoice::{InvoiceId, InvoiceKind};
    use crate::domain::mail::MailState;

    fn message(attachments: Vec<Attachment>) -> MailMessage {
        MailMessage {
            id: MailMessageId::new(),
            organization_id: crate::domain::ids::OrganizationId::new(),
            created_at: chrono::Utc::now(),
            modified_at: None,
            kind: MailKind::OrderReceipt,
            to: "ada@example.com".into(),
            reply_to: None,
            from_name: "Acme".into(),
            subject: "Your receipt".into(),
            text: "Thanks".into(),
            html: "<p>Thanks</p>".into(),
            order_id: None,
            subscription_id: None,
            customer_id: None,
            state: MailState::Pending,
            attempts: Vec::new(),
            next_attempt_at: None,
            attachments,
        }
    }

    #[actix_web::test]
    async fn documents_are_rendered_when_sent_and_a_missing_one_is_not_sent_now() {
        let app = testing::app().await;
        let (org, _) = testing::seller(&app).await;
        let order = testing::paid_order(&app, org, 2000, 380, "pi_mail_files").await;
        let invoice = crate::app::mail::test_document(&order, InvoiceKind::Invoice, "ACME-0001");
        let note = crate::app::mail::test_document(
            &order,
            InvoiceKind::CreditNote {
                refund_id: crate::domain::ids::RefundId::new(),
                invoice_number: "ACME-0001".into(),
            },
            "ACME-CN-0001",
        );
        let m = message(vec![
            Attachment::Invoice(invoice.id),
            Attachment::Invoice(note.id),
        ]);
        // Not there (yet): the attempt fails for now, naming the document.
        let why = files_of(&app, &m).await.unwrap().expect_err("not there");
        assert!(why.contains(&invoice.id.to_string()), "{why}");
        let mut batch = Batch::new();
        batch.put(&invoice, Expect::Absent).unwrap();
        batch.put(&note, Expect::Absent).unwrap();
        app.store.commit_durable(&batch).await.unwrap();
        // There: each rendered from its record, under its name, the same bytes as the
        // document's own rendering.
        let files = files_of(&app, &m).await.unwrap().expect("rendered");
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["Invoice-ACME-0001.pdf", "CreditNote-ACME-CN-0001.pdf"]
        );
        assert!(files.iter().all(|f| f.content_type == "application/pdf"));
        assert_eq!(
            files[0].bytes,
            crate::app::invoices::pdf::render(&invoice).unwrap()
        );
        assert_eq!(
            files[1].bytes,
            crate::app::invoices::pdf::render(&note).unwrap()
        );
        assert!(files[0].bytes.starts_with(b"%PDF"));
        // No attachment: no file, nothing read.
        assert!(files_of(&app, &message(Vec::new()))
            .await
            .unwrap()
            .unwrap()
            .is_empty());
        let stranger = message(vec![Attachment::Invoice(InvoiceId::new())]);
        assert!(files_of(&app, &stranger).await.unwrap().is_err());
    }

    #[actix_web::test]
    async fn every_settled_message_due_goes_in_one_run_and_pending_ones_stay() {
        let app = testing::app().await;
        let old = app.now() - chrono::Duration::days(400);
        let total = PURGE_BATCH * 2 + 30;
        let mut pending = Vec::new();
        let mut batch = Batch::new();
        for n in 0..total {
            let mut m = message(Vec::new());
            m.created_at = old + chrono::Duration::seconds(n as i64);
            if n % 9 == 0 {
                pending.push(m.id);
            } else {
                m.state = MailState::Sent;
            }
            batch.put(&m, Expect::Absent).unwrap();
        }
        // A settled one within the retention period stays too.
        let mut recent = message(Vec::new());
        recent.state = MailState::Sent;
        recent.created_at = app.now();
        batch.put(&recent, Expect::Absent).unwrap();
        app.store.commit_durable(&batch).await.unwrap();

        assert_eq!(purge(&app).await.unwrap(), total - pending.len());
        let left = app.store.scan::<MailMessage>().await.unwrap();
        let mut left: Vec<_> = left.into_iter().map(|m| m.value.id).collect();
        left.sort();
        let mut kept = pending.clone();
        kept.push(recent.id);
        kept.sort();
        assert_eq!(left, kept);
        assert_eq!(purge(&app).await.unwrap(), 0);
    }

    #[actix_web::test]
    async fn settled_messages_lose_their_bodies_after_the_grace_period_and_pending_ones_keep_them()
    {
        let app = testing::app().await;
        let grace =
            chrono::Duration::hours(i64::try_from(app.settings.retention.grace_hours).unwrap());
        let long_ago = app.now() - grace - chrono::Duration::minutes(1);
        let total = PURGE_BATCH + 20;
        let mut batch = Batch::new();
        let mut settled_long_ago = Vec::new();
        let mut kept = Vec::new();
        for n in 0..total {
            let mut m = message(Vec::new());
            m.created_at = long_ago - chrono::Duration::seconds(n as i64);
            match n % 4 {
                // Pending: keeps its body whatever its age.
                0 => kept.push(m.id),
                // Settled just now: keeps it a while.
                1 => {
                    m.state = MailState::Sent;
                    m.modified_at = Some(app.now());
                    kept.push(m.id);
                }
                _ => {
                    m.state = if n % 4 == 2 {
                        MailState::Sent
                    } else {
                        MailState::Failed
                    };
                    m.modified_at = Some(m.created_at);
                    settled_long_ago.push(m.id);
                }
            }
            batch.put(&m, Expect::Absent).unwrap();
        }
        app.store.commit_durable(&batch).await.unwrap();

        assert_eq!(slim(&app).await.unwrap(), settled_long_ago.len());
        for id in &settled_long_ago {
            let m = app
                .store
                .get::<MailMessage>(&id.key())
                .await
                .unwrap()
                .unwrap();
            assert!(!m.value.has_body());
            assert_eq!(
                m.value.subject, "Your receipt",
                "what the dashboard shows stays"
            );
            assert_eq!(m.value.to, "ada@example.com");
        }
        for id in &kept {
            let m = app
                .store
                .get::<MailMessage>(&id.key())
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                (m.value.text.as_str(), m.value.html.as_str()),
                ("Thanks", "<p>Thanks</p>")
            );
        }
        assert_eq!(slim(&app).await.unwrap(), 0);
    }
}
