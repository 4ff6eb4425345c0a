//! Every background task of the service, its schedule, and its rule on a shared database,
//! started from one place ([`start`], once the service is ready to serve):
//!
//! | task | schedule | on several nodes |
//! |---|---|---|
//! | checkout expiry, completion of checkouts left confirmed, subscription renewals, ends and key revocations (`sweeps`) | every `jobs.sweep_interval_secs` | one node (job lock `sweeps`) |
//! | retention purge of expired codes, sessions, tokens, idempotency answers, webhook and e-mail history | every `retention.interval_secs` | one node (job lock `retention`) |
//! | purge of idle rate-limit keys | every minute | every node (its own limiters) |
//! | webhook fan-out from the change feed (`webhooks::dispatch`) | as changes are written | one node (job lock `webhooks`) |
//! | webhook delivery, one worker per endpoint (`webhooks::delivery`) | as events are pending | the node holding `webhooks` |
//! | e-mail, decided in the fan-out, sent from the outbox (`mail`) | as messages come due | the node holding `webhooks` |
//! | re-check of tax numbers left unverified (`app::tax_id_checks`) | as orders are paid, then backing off | one node (job lock `tax_id_checks`) |
//! | purge of uploads never finished (`app::files::purge_expired`): parts deleted, quota given back | every `files.purge_interval_secs` | one node (job lock `files`) |
//! | meter backfill: the events before a meter went live counted once (`app::usage::backfill`) | as meters are created, and every second | one node (job lock `meter_backfill`) |
//! | validation day counters written to the store (`stats`) | every second | every node (its own counts, added) |
//!
//! Every task is safe to run twice (conditional writes, derived ids, payment idempotency
//! keys); the job locks only keep nodes from doing the same work twice. The start-up
//! recovery of confirmed checkouts runs before the service reports ready (`startup`).

use actix_web::web;

use crate::state::AppState;

/// Starts every background task.
pub async fn start(state: web::Data<AppState>) -> Result<(), tollgate_storage::StorageError> {
    spawn_sweeps(state.clone());
    spawn_retention(state.clone());
    spawn_file_purge(state.clone());
    spawn_limit_purge(state.clone());
    crate::webhooks::dispatch::start(state.clone());
    crate::mail::start(state.clone());
    crate::app::invoices::start(state.clone());
    crate::app::tax_transactions::start(state.clone());
    crate::app::tax_id_checks::start(state.clone());
    crate::app::usage::backfill::start(state.clone());
    spawn_validation_counts(state.clone());
    crate::webhooks::delivery::start(state).await
}

/// Background sweeps, every `jobs.sweep_interval_secs`: persisting checkout expiry;
/// renewing, ending and dunning subscriptions and revoking the keys of ended ones.
fn spawn_sweeps(state: web::Data<AppState>) {
    let every = std::time::Duration::from_secs(state.settings.jobs.sweep_interval_secs.max(1));
    actix_web::rt::spawn(async move {
        let mut ticker = actix_web::rt::time::interval(every);
        ticker.tick().await;
        loop {
            ticker.tick().await;
            // On a shared database one node sweeps at a time (every sweep is safe twice;
            // this only saves the work).
            if !state.jobs.lead(&state.store, "sweeps").await {
                continue;
            }
            if let Err(e) = crate::app::checkout::sweep_expired(&state).await {
                tracing::warn!(error = %e, "checkout expiry sweep failed");
            }
            match crate::app::checkout::complete_stale_confirmed(&state).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(settled = n, "completed checkouts left confirmed"),
                Err(e) => tracing::warn!(error = %e, "completing confirmed checkouts failed"),
            }
            match crate::app::refunds::settle_pending(&state).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(settled = n, "settled refunds left pending"),
                Err(e) => tracing::warn!(error = %e, "settling pending refunds failed"),
            }
            match crate::app::subscription::sweep_subscriptions(&state).await {
                Ok(report) => tracing::debug!(?report, "subscription sweep"),
                Err(e) => tracing::warn!(error = %e, "subscription sweep failed"),
            }
        }
    });
}

/// Forgets idle rate-limit keys every minute, so the limiters hold the recent clients only.
fn spawn_limit_purge(state: web::Data<AppState>) {
    actix_web::rt::spawn(async move {
        let mut ticker = actix_web::rt::time::interval(std::time::Duration::from_secs(60));
        ticker.tick().await;
        loop {
            ticker.tick().await;
            state.limits.purge();
        }
    });
}

/// The purge of unfinished uploads, every `files.purge_interval_secs` (the first one a
/// full interval after start-up).
fn spawn_file_purge(state: web::Data<AppState>) {
    let every = std::time::Duration::from_secs(state.settings.files.purge_interval_secs.max(1));
    actix_web::rt::spawn(async move {
        let mut ticker = actix_web::rt::time::interval(every);
        ticker.tick().await;
        loop {
            ticker.tick().await;
            if !state.jobs.lead(&state.store, "files").await {
                continue;
            }
            match crate::app::files::purge_expired(&state).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(uploads = n, "unfinished uploads purged"),
                Err(e) => tracing::warn!(error = %e, "purge of unfinished uploads failed"),
            }
        }
    });
}

/// The retention purge, every `retention.interval_secs` (the first one a full interval
/// after start-up).
fn spawn_retention(state: web::Data<AppState>) {
    let every = std::time::Duration::from_secs(state.settings.retention.interval_secs.max(1));
    actix_web::rt::spawn(async move {
        let mut ticker = actix_web::rt::time::interval(every);
        ticker.tick().await;
        loop {
            ticker.tick().await;
            if !state.jobs.lead(&state.store, "retention").await {
                continue;
            }
            retention_pass(&state).await;
        }
    });
}

/// One retention pass: the short-lived kinds, the webhook history (with the event log),
/// the e-mail history, then the bodies of settled e-mail; each logged, a failure of one
/// not stopping the next. The retention job runs it on the lead node; the big-shop
/// generator once per simulated day.
pub async fn retention_pass(state: &AppState) -> RetentionPass {
    let mut pass = RetentionPass::default();
    match crate::retention::purge(state).await {
        Ok(report) => {
            if report.total() > 0 {
                tracing::info!(?report, "retention purge");
            }
            pass.records += report.total();
        }
        Err(e) => {
            tracing::warn!(error = %e, "retention purge failed");
            pass.failures += 1;
        }
    }
    let steps = [
        (
            "webhook history purged",
            crate::webhooks::purge(state).await,
        ),
        ("e-mail history purged", crate::mail::purge(state).await),
        (
            "bodies of settled e-mail emptied",
            crate::mail::slim(state).await,
        ),
    ];
    for (what, done) in steps {
        match done {
            Ok(0) => {}
            Ok(n) => {
                tracing::info!(records = n, "{what}");
                pass.records += n as u64;
            }
            Err(e) => {
                tracing::warn!(error = %e, "{what}: failed");
                pass.failures += 1;
            }
        }
    }
    pass
}

/// What one [`retention_pass`] did.
#[derive(Debug, Default, Clone, Copy)]
pub struct RetentionPass {
    /// Records purged or slimmed.
    pub records: u64,
    /// Steps that failed (logged; the next pass tries again).
    pub failures: u32,
}

/// Writes the validation day counters every [`crate::stats::VALIDATION_FLUSH`].
fn spawn_validation_counts(state: web::Data<AppState>) {
    actix_web::rt::spawn(async move {
        let mut tick = tokio::time::interval(crate::stats::VALIDATION_FLUSH);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failures = crate::telemetry::Failures::default();
        loop {
            tick.tick().await;
            match state.validation_counts.flush(&state.store).await {
                Ok(_) => {
                    if let Some(n) = failures.succeeded() {
                        tracing::info!(failed = n, "validation day counters written again");
                    }
                }
                Err(e) => {
                    if let Some(n) = failures.failed() {
                        tracing::warn!(error = %e, failed = n, "writing validation day counters failed; retrying");
                    }
                }
            }
        }
    });
}
