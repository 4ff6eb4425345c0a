//! Tax transactions at the tax provider (Stripe Tax): a paid order's calculation recorded
//! as a transaction, reversed when the order is refunded.
//!
//! [`queue`] runs in the fan-out for every change-feed entry, in the write that consumes it:
//! an order paid on a Stripe Tax quote (`tax.provider_ref` = `taxcalc_…`) queues a
//! [`TaxAction::Record`]; a refund of such an order that succeeds queues a
//! [`TaxAction::Reverse`] (whole when it gives back the whole order, else its amount and
//! tax). The recorder ([`start`], one node: job lock `tax_transactions`) sends what is due,
//! oldest first, and keeps each answer in the order's [`TaxTransaction`] in the write that
//! deletes the entry; a failure leaves the entry for a later attempt (backing off to an
//! hour, the cause kept on it). The paid path never waits for any of it.
//!
//! The provider's references are the order id and the refund id, and each call's
//! idempotency key derives from its reference, so a call retried after a crash is answered
//! as the first was. A reference Stripe says is used already means the record exists there:
//! it is kept as recorded (Stripe has no lookup by reference to learn its id).

use std::time::Duration;

use actix_web::web;
use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Change, Expect, StorageError, Stored};

use crate::config::ProcessorKind;
use crate::domain::order::Order;
use crate::domain::refund::{Refund, RefundStatus};
use crate::domain::tax_transaction::{TaxAction, TaxRecordDue, TaxReversal, TaxTransaction};
use crate::payments::stripe_tax::{Reversal, StripeTax};
use crate::state::AppState;

/// The prefix of a Stripe Tax calculation's id: only those are recorded.
pub const CALCULATION_PREFIX: &str = "taxcalc_";

/// How long the recorder sleeps with nothing due (a queued record wakes it at once).
const IDLE: Duration = Duration::from_secs(30);
/// How long it waits after the store failed it.
const AFTER_STORE_ERROR: Duration = Duration::from_secs(5);

/// The records at the provider `change` calls for, queued in `batch` (the fan-out's write
/// that consumes the change); whether the recorder should be woken.
pub async fn queue(
    state: &AppState,
    change: &Change,
    batch: &mut Batch,
) -> Result<bool, StorageError> {
    let due = if change.is::<Order>() {
        order_due(state, change.before::<Order>()?, change.after::<Order>()?).await?
    } else if change.is::<Refund>() {
        refund_due(state, change.before::<Refund>()?, change.after::<Refund>()?).await?
    } else {
        None
    };
    let Some(due) = due else {
        return Ok(false);
    };
    // `Any`: the same entry queued twice in one pass (or replayed) is the same entry.
    batch.put(&due, Expect::Any)?;
    Ok(true)
}

/// The calculation of an order paid on a Stripe Tax quote.
fn calculation_of(order: &Order) -> Option<&str> {
    order
        .tax
        .provider_ref
        .as_deref()
        .filter(|r| r.starts_with(CALCULATION_PREFIX))
}

/// An order that becomes paid on a Stripe Tax quote, not recorded yet: its record.
async fn order_due(
    state: &AppState,
    before: Option<Order>,
    after: Option<Order>,
) -> Result<Option<TaxRecordDue>, StorageError> {
    let Some(order) = after else {
        return Ok(None);
    };
    if !order.status.was_paid() || before.is_some_and(|b| b.status.was_paid()) {
        return Ok(None);
    }
    let Some(calculation) = calculation_of(&order) else {
        return Ok(None);
    };
    let recorded = state
        .store
        .get::<TaxTransaction>(&TaxTransaction::id_for(order.id).key())
        .await?
        .is_some();
    if recorded {
        return Ok(None);
    }
    Ok(Some(TaxRecordDue::new(
        order.organization_id,
        order.id,
        TaxAction::Record {
            calculation_id: calculation.to_string(),
        },
        state.now(),
    )))
}

/// A refund that succeeds, of an order paid on a Stripe Tax quote (whose record is queued
/// or done), not reversed yet: its reversal.
async fn refund_due(
    state: &AppState,
    before: Option<Refund>,
    after: Option<Refund>,
) -> Result<Option<TaxRecordDue>, StorageError> {
    let Some(refund) = after else {
        return Ok(None);
    };
    if refund.status != RefundStatus::Succeeded
        || before.is_some_and(|b| b.status == RefundStatus::Succeeded)
    {
        return Ok(None);
    }
    let Some(order) = state.store.get::<Order>(&refund.order_id.key()).await? else {
        return Ok(None);
    };
    let order = order.value;
    if !order.status.was_paid() || calculation_of(&order).is_none() {
        return Ok(None);
    }
    let reversed = state
        .store
        .get::<TaxTransaction>(&TaxTransaction::id_for(order.id).key())
        .await?
        .is_some_and(|t| t.value.reversed(refund.id));
    if reversed {
        return Ok(None);
    }
    Ok(Some(TaxRecordDue::new(
        order.organization_id,
        order.id,
        reversal_of(&order, &refund),
        state.now(),
    )))
}

/// How `refund` reverses `order`'s transaction: whole when it gives back the whole order
/// (amount and tax), else by its amount and tax.
pub fn reversal_of(order: &Order, refund: &Refund) -> TaxAction {
    let full = refund.amount == order.amount && refund.tax_amount == order.tax_amount;
    TaxAction::Reverse {
        refund_id: refund.id,
        full,
        flat_amount: if full {
            0
        } else {
            refund.total().saturating_neg()
        },
    }
}

/// Runs the recorder until the process ends. Call once. A server whose payments do not go
/// through Stripe has no Stripe Tax, and nothing to record.
pub fn start(state: web::Data<AppState>) {
    if state.settings.payments.processor != ProcessorKind::Stripe {
        return;
    }
    let stripe = match StripeTax::new(&state.settings.payments) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot build the Stripe Tax client: tax transactions are not recorded");
            return;
        }
    };
    actix_web::rt::spawn(async move {
        loop {
            // On a shared database one node records (the other's sends would be the same
            // calls; this only saves them).
            if !state.jobs.lead(&state.store, "tax_transactions").await {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            let wait = match drain(&state, &stripe).await {
                Ok(next) => next.map_or(IDLE, |d| d.min(IDLE)),
                Err(e) => {
                    tracing::warn!(error = %e, "tax transaction recorder failed; retrying");
                    AFTER_STORE_ERROR
                }
            };
            let _ = tokio::time::timeout(wait, state.tax_recorder.notified()).await;
        }
    });
}

/// Sends every entry that is due, oldest first (an order's record before its reversals);
/// answers how long until the next entry waiting after a failure is due.
pub async fn drain(state: &AppState, stripe: &StripeTax) -> Result<Option<Duration>, StorageError> {
    let mut dues = state.store.scan::<TaxRecordDue>().await?;
    dues.sort_by_key(|d| {
        (
            d.value.created_at,
            matches!(d.value.action, TaxAction::Reverse { .. }),
        )
    });
    let mut next: Option<DateTime<Utc>> = None;
    for due in dues {
        let now = state.now();
        if !due.value.is_due(now) {
            next = super::earliest(next, due.value.next_attempt_at);
            continue;
        }
        let outcome = match &due.value.action {
            TaxAction::Record { calculation_id } => {
                record(state, stripe, &due, calculation_id).await
            }
            TaxAction::Reverse {
                refund_id,
                full,
                flat_amount,
            } => {
                let reversal = if *full {
                    Reversal::Full
                } else {
                    Reversal::Partial {
                        flat_amount: *flat_amount,
                    }
                };
                reverse(state, stripe, &due, *refund_id, reversal).await
            }
        };
        let Err(cause) = outcome? else {
            continue;
        };
        tracing::warn!(order = %due.value.order_id, action = ?due.value.action, error = %cause, "tax transaction not recorded; will retry");
        let mut failed = due.value.clone();
        failed.failed(state.now(), cause);
        next = super::earliest(next, failed.next_attempt_at);
        let mut batch = Batch::new();
        batch.put(&failed, Expect::Rev(due.rev))?;
        state.store.commit(&batch).await?;
    }
    Ok(next.map(|at| (at - state.now()).to_std().unwrap_or(Duration::ZERO)))
}

/// Records the order's calculation: `Ok(Err(cause))` when the provider did not.
async fn record(
    state: &AppState,
    stripe: &StripeTax,
    due: &Stored<TaxRecordDue>,
    calculation_id: &str,
) -> Result<Result<(), String>, StorageError> {
    let order_id = due.value.order_id;
    let key = TaxTransaction::id_for(order_id).key();
    let mut batch = Batch::new();
    if state.store.get::<TaxTransaction>(&key).await?.is_none() {
        let transaction_id = match stripe.record(calculation_id, &order_id.to_string()).await {
            Ok(id) => Some(id),
            Err(e) if e.is_reference_reused() => {
                tracing::warn!(order = %order_id, error = %e.message, "the order's tax transaction exists at Stripe already; kept as recorded");
                None
            }
            Err(e) => return Ok(Err(e.message)),
        };
        let transaction = TaxTransaction {
            id: TaxTransaction::id_for(order_id),
            organization_id: due.value.organization_id,
            order_id,
            calculation_id: calculation_id.to_string(),
            transaction_id,
            recorded_at: state.now(),
            reversals: Vec::new(),
        };
        batch.put(&transaction, Expect::Absent)?;
    }
    batch.delete::<TaxRecordDue>(&due.value.id.key(), Expect::Rev(due.rev));
    state.store.commit(&batch).await?;
    Ok(Ok(()))
}

/// Reverses the order's transaction for a refund: `Ok(Err(cause))` when it cannot yet (the
/// order's record not sent) or the provider did not.
async fn reverse(
    state: &AppState,
    stripe: &StripeTax,
    due: &Stored<TaxRecordDue>,
    refund_id: crate::domain::ids::RefundId,
    reversal: Reversal,
) -> Result<Result<(), String>, StorageError> {
    let order_id = due.value.order_id;
    let Some(stored) = state
        .store
        .get::<TaxTransaction>(&TaxTransaction::id_for(order_id).key())
        .await?
    else {
        return Ok(Err("the order's transaction is not recorded yet".into()));
    };
    let mut transaction = stored.value;
    let mut batch = Batch::new();
    if !transaction.reversed(refund_id) {
        let Some(original) = transaction.transaction_id.clone() else {
            return Ok(Err(
                "the order's transaction id is not known (Stripe had it recorded already): \
                 reverse it in Stripe's dashboard"
                    .into(),
            ));
        };
        let reversal_id = match stripe
            .reverse(&original, &refund_id.to_string(), reversal)
            .await
        {
            Ok(id) => Some(id),
            Err(e) if e.is_reference_reused() => {
                tracing::warn!(refund = %refund_id, error = %e.message, "the refund's tax reversal exists at Stripe already; kept as reversed");
                None
            }
            Err(e) => return Ok(Err(e.message)),
        };
        let (full, flat_amount) = match reversal {
            Reversal::Full => (true, 0),
            Reversal::Partial { flat_amount } => (false, flat_amount),
        };
        transaction.reversals.push(TaxReversal {
            refund_id,
            transaction_id: reversal_id,
            full,
            flat_amount,
            reversed_at: state.now(),
        });
        batch.put(&transaction, Expect::Rev(stored.rev))?;
    }
    batch.delete::<TaxRecordDue>(&due.value.id.key(), Expect::Rev(due.rev));
    state.store.commit(&batch).await?;
    Ok(Ok(()))
}

#[cfg(test)]
#[path = "tax_transactions_tests.rs"]
mod tests;
