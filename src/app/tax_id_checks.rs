//! The re-check of business tax numbers left unverified: a number whose register (VIES,
//! HMRC) gave no answer within `tax.lookup_timeout_ms` at checkout is sold on its format
//! (reverse-charged) and recorded `Unverified` on the order; here it is asked again until
//! the register answers.
//!
//! [`queue`] runs in the fan-out for every change-feed entry, in the write that consumes
//! it: an order that becomes paid with a tax number `Unverified` queues a [`TaxIdCheck`]
//! when a register is configured for that number (a number without one is checked for its
//! format only, by design: there is nothing to ask). The pass ([`start`], one node: job
//! lock `tax_id_checks`) asks the register for each due entry; an answer (`Valid`,
//! `Invalid`) is written on the order's `tax.tax_id_status` (on the revision read) in the
//! write that deletes the entry; no answer backs off (a minute, doubling, at most six
//! hours). An order older than [`MAX_AGE_DAYS`] days is not asked any more: its entry is
//! dropped with a warning naming it. The amounts never change: the sale stands as charged.

use std::future::Future;
use std::time::Duration;

use actix_web::web;
use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Change, Expect, StorageError, Stored};

use crate::domain::customer::TaxId;
use crate::domain::order::Order;
use crate::domain::tax_breakdown::TaxIdStatus;
use crate::domain::tax_id_check::TaxIdCheck;
use crate::egress::tax_ids::{TaxIdChecker, TaxIdRegister};
use crate::state::AppState;

/// Orders older than this many days are not re-checked.
pub const MAX_AGE_DAYS: i64 = 30;

/// How long the pass sleeps with nothing due (a queued entry wakes it at once).
const IDLE: Duration = Duration::from_secs(60);
/// How long it waits after the store failed it.
const AFTER_STORE_ERROR: Duration = Duration::from_secs(5);
/// Writes of one answer tried before the entry is left for the next pass (another writer
/// changed the order each time).
const WRITE_ATTEMPTS: usize = 5;

/// The registers as the pass asks them: the state's [`TaxIdChecker`], or a test's fake.
pub trait Registers {
    /// The register configured for `id`, if any.
    fn register_for(&self, id: &TaxId) -> Option<TaxIdRegister>;
    /// The register's answer for `id` (given by a buyer in `country`): `Unverified` when
    /// it gave none.
    fn ask<'a>(&'a self, id: &'a TaxId, country: &'a str)
        -> impl Future<Output = TaxIdStatus> + 'a;
}

impl Registers for TaxIdChecker {
    fn register_for(&self, id: &TaxId) -> Option<TaxIdRegister> {
        TaxIdChecker::register_for(self, id)
    }

    // A missing answer is never cached by the checker, so this asks the register again.
    fn ask<'a>(
        &'a self,
        id: &'a TaxId,
        country: &'a str,
    ) -> impl Future<Output = TaxIdStatus> + 'a {
        self.check(id, country)
    }
}

/// The re-check `change` calls for, queued in `batch` (the fan-out's write that consumes
/// the change); whether the pass should be woken.
pub async fn queue(
    state: &AppState,
    change: &Change,
    batch: &mut Batch,
) -> Result<bool, StorageError> {
    queue_with(&*state.tax_ids, change, batch)
}

/// [`queue`] with these registers.
pub fn queue_with(
    registers: &impl Registers,
    change: &Change,
    batch: &mut Batch,
) -> Result<bool, StorageError> {
    if !change.is::<Order>() {
        return Ok(false);
    }
    let (before, Some(order)) = (change.before::<Order>()?, change.after::<Order>()?) else {
        return Ok(false);
    };
    let newly_paid =
        order.status.was_paid() && !before.as_ref().is_some_and(|b| b.status.was_paid());
    if !newly_paid || !to_recheck(registers, &order) {
        return Ok(false);
    }
    let check = TaxIdCheck::new(order.organization_id, order.id, order.created_at);
    // `Any`: the same entry queued twice (a replayed change) is the same entry.
    batch.put(&check, Expect::Any)?;
    Ok(true)
}

/// Whether `order`'s tax number is unverified and has a register to ask.
pub fn to_recheck(registers: &impl Registers, order: &Order) -> bool {
    order.tax.tax_id_status == Some(TaxIdStatus::Unverified)
        && order
            .tax
            .tax_id
            .as_ref()
            .is_some_and(|id| registers.register_for(id).is_some())
}

/// Whether `order` is too old to be asked about again at `now`.
pub fn too_old(order: &Order, now: DateTime<Utc>) -> bool {
    now - order.created_at > chrono::Duration::days(MAX_AGE_DAYS)
}

/// Runs the pass until the process ends. Call once. A server without a register has
/// nothing to ask again (and queues nothing).
pub fn start(state: web::Data<AppState>) {
    if !state.tax_ids.has_registers() {
        return;
    }
    actix_web::rt::spawn(async move {
        loop {
            // On a shared database one node asks (the other's questions would be the same;
            // this only saves them).
            if !state.jobs.lead(&state.store, "tax_id_checks").await {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            let wait = match pass(&state, &*state.tax_ids).await {
                Ok(next) => next.map_or(IDLE, |d| d.min(IDLE)),
                Err(e) => {
                    tracing::warn!(error = %e, "tax number re-check failed; retrying");
                    AFTER_STORE_ERROR
                }
            };
            let _ = tokio::time::timeout(wait, state.tax_id_checks.notified()).await;
        }
    });
}

/// Asks again for every entry that is due, oldest first; answers how long until the next
/// entry waiting after no answer is due.
pub async fn pass(
    state: &AppState,
    registers: &impl Registers,
) -> Result<Option<Duration>, StorageError> {
    let mut checks = state.store.scan::<TaxIdCheck>().await?;
    checks.sort_by_key(|c| c.value.created_at);
    let mut next: Option<DateTime<Utc>> = None;
    for check in checks {
        if !check.value.is_due(state.now()) {
            next = super::earliest(next, check.value.next_attempt_at);
            continue;
        }
        if let Some(at) = recheck(state, registers, check).await? {
            next = super::earliest(next, Some(at));
        }
    }
    Ok(next.map(|at| (at - state.now()).to_std().unwrap_or(Duration::ZERO)))
}

/// Asks the register about one entry's order and settles or reschedules the entry;
/// answers when it is to be asked again (no answer).
async fn recheck(
    state: &AppState,
    registers: &impl Registers,
    check: Stored<TaxIdCheck>,
) -> Result<Option<DateTime<Utc>>, StorageError> {
    let order_id = check.value.order_id;
    let Some(order) = state.store.get::<Order>(&order_id.key()).await? else {
        return settle(state, &check, None).await;
    };
    let id = match &order.value.tax.tax_id {
        Some(id) if to_recheck(registers, &order.value) => id.clone(),
        // Decided meanwhile, or no register for it any more (the configuration changed).
        _ => return settle(state, &check, None).await,
    };
    if too_old(&order.value, state.now()) {
        tracing::warn!(
            order = %order_id,
            attempts = check.value.attempts,
            "tax number left unverified: the order is older than {MAX_AGE_DAYS} days, not asked again"
        );
        return settle(state, &check, None).await;
    }
    let country = order
        .value
        .billing_address
        .as_ref()
        .map(|a| a.country.clone())
        .or_else(|| id.value.get(..2).map(str::to_string))
        .unwrap_or_default();
    let status = registers.ask(&id, &country).await;
    if status == TaxIdStatus::Unverified {
        let mut later = check.value.clone();
        later.no_answer(state.now(), "the register gave no answer".into());
        tracing::info!(order = %order_id, attempts = later.attempts, next = ?later.next_attempt_at, "tax number still unverified; asked again later");
        let at = later.next_attempt_at;
        let mut batch = Batch::new();
        batch.put(&later, Expect::Rev(check.rev))?;
        return match state.store.commit(&batch).await {
            // Queued again meanwhile (a replayed change): the next pass sees it.
            Ok(_) | Err(StorageError::Conflict { .. }) => Ok(at),
            Err(e) => Err(e),
        };
    }
    tracing::info!(order = %order_id, status = status.as_str(), "tax number re-checked");
    settle(state, &check, Some(status)).await
}

/// Deletes the entry, writing `status` on its order's tax number in the same write (on the
/// revision read; another writer in between makes it read again and retry).
async fn settle(
    state: &AppState,
    check: &Stored<TaxIdCheck>,
    status: Option<TaxIdStatus>,
) -> Result<Option<DateTime<Utc>>, StorageError> {
    let key = check.value.id.key();
    let mut entry_rev = check.rev;
    for _ in 0..WRITE_ATTEMPTS {
        let mut batch = Batch::new();
        if let Some(status) = status {
            let order = state
                .store
                .get::<Order>(&check.value.order_id.key())
                .await?;
            if let Some(order) = order.filter(|o| {
                o.value.organization_id == check.value.organization_id
                    && o.value.tax.tax_id.is_some()
                    && o.value.tax.tax_id_status == Some(TaxIdStatus::Unverified)
            }) {
                let mut updated = order.value;
                updated.tax.tax_id_status = Some(status);
                updated.modified_at = Some(state.now());
                batch.put(&updated, Expect::Rev(order.rev))?;
            }
        }
        batch.delete::<TaxIdCheck>(&key, Expect::Rev(entry_rev));
        match state.store.commit_durable(&batch).await {
            Ok(_) => return Ok(None),
            Err(StorageError::Conflict { .. }) => {
                // The order changed, or the entry was queued again: read both again.
                match state.store.get::<TaxIdCheck>(&key).await? {
                    Some(again) => entry_rev = again.rev,
                    None => return Ok(None),
                }
            }
            Err(e) => return Err(e),
        }
    }
    tracing::warn!(order = %check.value.order_id, "tax number answer not written: the order kept changing; asked again");
    Ok(Some(state.now()))
}

#[cfg(test)]
#[path = "tax_id_checks_tests.rs"]
mod tests;
