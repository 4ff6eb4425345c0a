//! Disputes as the processor reports them (`DisputeChanged` events): recorded once per processor dispute on the order its payment paid, updated
//! as it moves, and when the seller loses it, the order's license keys are revoked (once).
//! A resolved dispute (lost or won) keeps its outcome: events arriving late or out of
//! order ([`next_status`]) never reopen it.
//!
//! The seller may concede one that needs a response ([`accept`], Polar's
//! `POST /v1/disputes/{id}/accept`): the processor closes it, which settles it as lost, and
//! that outcome goes through the same path as the processor's own events.

use tollgate_storage::{Batch, Expect, StorageError};

use crate::app::access::organizations_for_list;
use crate::app::listing::sorted_page_of;
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::app::refunds::Attempts;
use crate::auth::Subject;
use crate::domain::dispute::{
    processor_key, Dispute, DisputeStatus, DISPUTE_BY_AMOUNT, DISPUTE_BY_CREATED,
};
use crate::domain::ids::{DisputeId, OrderId, OrganizationId};
use crate::domain::refund::split_total;
use crate::error::{AppError, Code};
use crate::payments::events::DisputeUpdate;
use crate::payments::DisputeCloseOutcome;
use crate::state::AppState;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisputeSort {
    CreatedAt,
    Amount,
}

impl SortField for DisputeSort {
    const FIELDS: &'static [(&'static str, DisputeSort)] = &[
        ("created_at", DisputeSort::CreatedAt),
        ("amount", DisputeSort::Amount),
    ];
}

#[derive(Debug, Clone)]
pub struct DisputeFilter {
    pub organization_id: Vec<OrganizationId>,
    pub order_id: Vec<OrderId>,
    pub status: Vec<DisputeStatus>,
    pub sorting: Sorting<DisputeSort>,
}

pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &DisputeFilter,
    params: ListParams,
) -> Result<(Vec<Dispute>, u64), AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let keep = |d: &Dispute| {
        orgs.contains(&d.organization_id)
            && (filter.order_id.is_empty() || filter.order_id.contains(&d.order_id))
            && (filter.status.is_empty() || filter.status.contains(&d.status))
    };
    let (field, descending) = filter.sorting.primary();
    let index = match field {
        DisputeSort::CreatedAt => DISPUTE_BY_CREATED,
        DisputeSort::Amount => DISPUTE_BY_AMOUNT,
    };
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    sorted_page_of::<Dispute>(
        state,
        index,
        &tenants,
        descending,
        params,
        Some(&keep),
        None,
    )
    .await
}

/// A dispute the subject may see, else 404.
pub async fn dispute_for(
    state: &AppState,
    subject: Subject,
    id: DisputeId,
) -> Result<Dispute, AppError> {
    state.store.read_barrier().await?;
    match state.store.get::<Dispute>(&id.key()).await? {
        Some(d)
            if crate::app::access::can_access(state, subject, d.value.organization_id).await? =>
        {
            Ok(d.value)
        }
        _ => Err(AppError::not_found()),
    }
}

/// Concedes a dispute that needs a response (Polar's `accept`): the processor closes it,
/// and what it answers (lost, at Stripe) is recorded as its events are, so a lost dispute
/// takes the order's keys back here too. Any other status, or a processor that refuses to
/// close it, is `DisputeNotOpenError` (409). Answers the dispute as it is then.
pub async fn accept(
    state: &AppState,
    subject: Subject,
    id: DisputeId,
) -> Result<Dispute, AppError> {
    let d = dispute_for(state, subject, id).await?;
    let not_open = |why: String| AppError::new(Code::DisputeNotOpenError, why);
    if d.status != DisputeStatus::NeedsResponse {
        return Err(not_open(format!(
            "Dispute {} is not awaiting a response.",
            d.id
        )));
    }
    let update = match state.processor.close_dispute(&d.processor_id).await {
        Ok(DisputeCloseOutcome::Closed(update)) => update,
        Ok(DisputeCloseOutcome::Refused { message }) => {
            return Err(not_open(format!(
                "Dispute {} is not awaiting a response: the processor refused to close it ({message}).",
                d.id
            )));
        }
        Err(e) => {
            tracing::warn!(dispute = %d.id, error = %e, "closing a dispute at the processor failed");
            return Err(AppError::unavailable());
        }
    };
    from_processor(state, &update).await?;
    dispute_for(state, subject, id).await
}

/// The status of a dispute at `current` after the processor reports `reported`: a resolved
/// dispute (lost or won, `DisputeStatus::is_resolved`) keeps its outcome, since a late or
/// replayed event of an earlier stage (`needs_response` after `lost`) changes nothing; any
/// other takes what is reported (an inquiry closed as `prevented` may still be escalated
/// by the bank).
pub fn next_status(current: DisputeStatus, reported: DisputeStatus) -> DisputeStatus {
    if current.is_resolved() {
        current
    } else {
        reported
    }
}

/// Records what the processor says of a dispute; revokes the order's keys when it is lost.
pub async fn from_processor(state: &AppState, update: &DisputeUpdate) -> Result<(), AppError> {
    let pid = update.processor_id.as_str();
    let status = update.status;
    let now = state.now();
    let evidence_due_by = update.evidence_due_by;
    let mut attempts = Attempts::new();
    let lost = loop {
        attempts.next()?;
        let existing = match state.store.lookup_unique(&processor_key(pid)).await? {
            Some(id) => state.store.get::<Dispute>(&id).await?,
            None => None,
        };
        let (mut d, expect) = match existing {
            Some(stored) => (stored.value, Expect::Rev(stored.rev)),
            None => {
                let Some(payment) = update.payment_id.as_deref() else {
                    return Ok(());
                };
                let Some(o) = crate::app::orders::order_of_payment(state, payment).await? else {
                    tracing::warn!(
                        dispute = pid,
                        payment,
                        "a dispute of a payment no order knows; ignored"
                    );
                    return Ok(());
                };
                let (amount, tax) = split_total(&o, update.amount);
                (
                    Dispute {
                        id: DisputeId::new(),
                        organization_id: o.organization_id,
                        created_at: now,
                        modified_at: None,
                        status,
                        amount,
                        tax_amount: tax,
                        currency: o.currency.clone(),
                        reason: update.reason.clone(),
                        evidence_due_by,
                        order_id: o.id,
                        customer_id: o.customer_id,
                        processor_id: pid.to_string(),
                        revoked_at: None,
                    },
                    Expect::Absent,
                )
            }
        };
        if expect != Expect::Absent {
            // A resolved dispute stays so: a late event changes nothing of it.
            if d.status.is_resolved()
                || (d.status == status && d.evidence_due_by == evidence_due_by)
            {
                break d.status == DisputeStatus::Lost && d.revoked_at.is_none();
            }
            d.status = next_status(d.status, status);
            d.evidence_due_by = evidence_due_by.or(d.evidence_due_by);
            d.modified_at = Some(now);
        }
        let mut batch = Batch::new();
        batch.put(&d, expect)?;
        match state.store.commit_durable(&batch).await {
            Ok(_) => break d.status == DisputeStatus::Lost && d.revoked_at.is_none(),
            // Another delivery wrote it first (a new dispute's processor id is unique): read
            // it again and decide on what it holds.
            Err(StorageError::Conflict { .. } | StorageError::Unique { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    };
    if lost {
        revoke_lost(state, pid).await?;
    }
    Ok(())
}

/// A lost dispute: the order's keys are revoked, and that is recorded on the dispute.
async fn revoke_lost(state: &AppState, pid: &str) -> Result<(), AppError> {
    let Some(id) = state.store.lookup_unique(&processor_key(pid)).await? else {
        return Ok(());
    };
    let Some(stored) = state.store.get::<Dispute>(&id).await? else {
        return Ok(());
    };
    let mut d = stored.value;
    crate::app::refunds::revoke_order_keys(state, d.order_id, d.customer_id).await?;
    d.revoked_at = Some(state.now());
    let mut batch = Batch::new();
    batch.put(&d, Expect::Rev(stored.rev))?;
    match state.store.commit_durable(&batch).await {
        // Revoking is idempotent: a concurrent delivery may have recorded it first.
        Ok(_) | Err(StorageError::Conflict { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resolved_dispute_keeps_its_outcome_and_an_open_one_moves() {
        use DisputeStatus::*;
        for (_, late) in DisputeStatus::ALL {
            assert_eq!(next_status(Lost, *late), Lost, "lost then {late:?}");
            assert_eq!(next_status(Won, *late), Won, "won then {late:?}");
        }
        assert_eq!(next_status(NeedsResponse, UnderReview), UnderReview);
        assert_eq!(next_status(UnderReview, Lost), Lost);
        assert_eq!(next_status(UnderReview, NeedsResponse), NeedsResponse);
        assert_eq!(next_status(Prevented, NeedsResponse), NeedsResponse);
    }
}

#[cfg(test)]
#[path = "disputes_tests.rs"]
mod accept_tests;
