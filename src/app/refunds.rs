//! Refunds: give money back on an order through the processor that took it, and take
//! access back when asked.
//!
//! A refund is reserved on its order first, in one write with the pending refund (the
//! order's compare-and-swap serializes concurrent refunds: they can never add up to more
//! than was paid); then the processor is asked, with the refund's id as its idempotency
//! key; its answer settles both records in one write. A processor that cannot be reached
//! leaves the refund pending: the sweep asks again ([`settle_pending`]) with the same key,
//! so nothing is refunded twice and nothing reserved is forgotten. A refund that succeeds
//! with `revoke_benefits` revokes the order's license keys through their actors, so the
//! next validation refuses them, in either durability mode.

use tollgate_storage::{Batch, Direction, Expect, StorageError};

use crate::app::access::organizations_for_list;
use crate::app::listing::sorted_page_of;
use crate::app::orders::order_for;
use crate::app::paging::Sorting;
use crate::app::paging::{ListParams, SortField};
use crate::auth::Subject;
use crate::domain::ids::{CustomerId, OrderId, OrganizationId, RefundId, SubscriptionId};
use crate::domain::order::Order;
use crate::domain::refund::{
    EndSubscription, Refund, RefundError, RefundRequest, RefundStatus, REFUND_BY_AMOUNT,
    REFUND_BY_CREATED, REFUND_PENDING,
};
use crate::error::{AppError, Code};
use crate::payments::events::{RefundState, RefundUpdate};
use crate::payments::{self, RefundOutcome};
use crate::state::AppState;
use tollgate_actors::checkout::Checkout;
use tollgate_actors::license_key::{LicenseKey, RevokeLicenseKey, LICENSE_KEY_BY_CUSTOMER};

/// `GET /v1/refunds/` sort keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundSort {
    CreatedAt,
    Amount,
}

impl RefundSort {
    pub const ALL: &'static [(&'static str, RefundSort)] = &[
        ("created_at", RefundSort::CreatedAt),
        ("amount", RefundSort::Amount),
    ];

    pub fn index(self) -> &'static str {
        match self {
            RefundSort::CreatedAt => REFUND_BY_CREATED,
            RefundSort::Amount => REFUND_BY_AMOUNT,
        }
    }
}

impl SortField for RefundSort {
    const FIELDS: &'static [(&'static str, RefundSort)] = RefundSort::ALL;
}

/// `GET /v1/refunds/` filters.
#[derive(Debug, Clone)]
pub struct RefundFilter {
    pub id: Vec<RefundId>,
    pub organization_id: Vec<OrganizationId>,
    pub order_id: Vec<OrderId>,
    pub subscription_id: Vec<SubscriptionId>,
    pub customer_id: Vec<CustomerId>,
    /// The customers with these external ids (in the listed organizations).
    pub external_customer_id: Vec<String>,
    pub succeeded: Option<bool>,
    pub sorting: Sorting<RefundSort>,
}

/// The refunds the subject may see, filtered, one page; and how many there are.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &RefundFilter,
    params: ListParams,
) -> Result<(Vec<Refund>, u64), AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let mut external: Vec<CustomerId> = Vec::new();
    for org in &orgs {
        for id in &filter.external_customer_id {
            if let Some(c) =
                crate::domain::customer::customer_by_external_id(&state.store, *org, id).await?
            {
                external.push(c.value.id);
            }
        }
    }
    let by_external = !filter.external_customer_id.is_empty();
    if by_external && external.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let keep = |r: &Refund| {
        orgs.contains(&r.organization_id)
            && (!by_external || external.contains(&r.customer_id))
            && (filter.id.is_empty() || filter.id.contains(&r.id))
            && (filter.order_id.is_empty() || filter.order_id.contains(&r.order_id))
            && (filter.customer_id.is_empty() || filter.customer_id.contains(&r.customer_id))
            && (filter.subscription_id.is_empty()
                || r.subscription_id
                    .is_some_and(|s| filter.subscription_id.contains(&s)))
            && filter
                .succeeded
                .is_none_or(|s| s == (r.status == RefundStatus::Succeeded))
    };
    let (field, descending) = filter.sorting.primary();
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    sorted_page_of::<Refund>(
        state,
        field.index(),
        &tenants,
        descending,
        params,
        Some(&keep),
        None,
    )
    .await
}

/// How many times a write of several records is tried when a concurrent writer changed one
/// of them; after that, the caller is answered a conflict (retry the request).
pub(crate) const WRITE_ATTEMPTS: usize = 8;

/// The tries of one multi-record write, at most [`WRITE_ATTEMPTS`].
pub(crate) struct Attempts(usize);

impl Attempts {
    pub(crate) fn new() -> Self {
        Attempts(0)
    }

    /// Counts one more try: a coded conflict once [`WRITE_ATTEMPTS`] were made.
    pub(crate) fn next(&mut self) -> Result<(), AppError> {
        if self.0 >= WRITE_ATTEMPTS {
            return Err(AppError::conflict(
                "The records changed concurrently too many times; retry the request.",
            ));
        }
        self.0 += 1;
        Ok(())
    }
}

/// `POST /v1/refunds/`: reserves the refund on its order, asks the processor, and answers
/// the refund as it then stands.
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: RefundRequest,
) -> Result<Refund, AppError> {
    let order_id = input.order_id;
    // Polar: an order the caller cannot see is a field error, not a 404.
    let order = order_for(state, subject, order_id)
        .await
        .map_err(|e| match e.code() {
            Code::NotFound => AppError::invalid(
                crate::field!["order_id"],
                "Order not found",
                order_id.uuid(),
            ),
            _ => e,
        })?;
    if let (Some(end), None) = (input.end_subscription, order.subscription_id) {
        return Err(AppError::invalid(
            crate::field!["end_subscription"],
            "This order is not a subscription's.",
            end.as_str(),
        ));
    }
    if input.revoke_benefits && order.subscription_id.is_some() {
        return Err(AppError::new(
            Code::RevokeSubscriptionBenefitsProhibited,
            "Subscription benefits can only be revoked upon cancellation",
        ));
    }
    let reason = input.reason;
    let metadata = input.metadata;
    let comment = input.comment;
    let now = state.now();
    let id = RefundId::new();
    // The seller's setting: a full refund of a one-time purchase takes its access back.
    let revoke_on_full = order.subscription_id.is_none()
        && state
            .store
            .get::<crate::domain::organization::Organization>(&order.organization_id.key())
            .await?
            .is_some_and(|o| o.value.refund_settings.revoke_benefits_on_full_refund);
    // Reserve: the order's compare-and-swap serializes refunds of one order.
    let mut attempts = Attempts::new();
    loop {
        attempts.next()?;
        let stored = state
            .store
            .get::<Order>(&order.id.key())
            .await?
            .ok_or_else(AppError::not_found)?;
        let mut o = stored.value;
        let tax = o
            .reserve_refund(input.amount)
            .map_err(|e| refund_error(e, input.amount))?;
        let full = o.refunded_amount == 0 && o.refundable_amount() == 0;
        let refund = Refund {
            id,
            organization_id: o.organization_id,
            created_at: now,
            modified_at: None,
            status: RefundStatus::Pending,
            reason,
            amount: input.amount,
            tax_amount: tax,
            currency: o.currency.clone(),
            order_id: o.id,
            subscription_id: o.subscription_id,
            customer_id: o.customer_id,
            revoke_benefits: input.revoke_benefits || (revoke_on_full && full),
            comment: comment.clone(),
            metadata: metadata.clone(),
            processor_id: None,
            failure: None,
        };
        let mut batch = Batch::new();
        batch.put(&o, Expect::Rev(stored.rev))?;
        batch.put(&refund, Expect::Absent)?;
        match state.store.commit_durable(&batch).await {
            Ok(_) => break,
            Err(StorageError::Conflict { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    let refund = settle(state, id).await?;
    if let (Some(end), Some(sub)) = (input.end_subscription, order.subscription_id) {
        if refund.status != RefundStatus::Failed {
            end_subscription(state, subject, sub, end).await?;
        }
    }
    Ok(refund)
}

/// Ends the subscription of a refunded order: revoked now, or canceled at its period end.
async fn end_subscription(
    state: &AppState,
    subject: Subject,
    sub: SubscriptionId,
    end: EndSubscription,
) -> Result<(), AppError> {
    let command = match end {
        EndSubscription::Now => crate::app::subscription::CancelSubscription::now(),
        EndSubscription::AtPeriodEnd => {
            crate::app::subscription::CancelSubscription::at_period_end()
        }
    };
    match crate::app::subscription::cancel(state, subject, sub, command).await {
        // Already canceled or ended: nothing more to end.
        Ok(_) => Ok(()),
        Err(e) if matches!(e.code(), Code::NotPermitted | Code::BadRequest) => Ok(()),
        Err(e) => Err(e),
    }
}

fn refund_error(e: RefundError, amount: i64) -> AppError {
    match e {
        RefundError::RefundedAlready(_) => AppError::new(Code::RefundedAlready, e.to_string()),
        RefundError::TooHigh { .. } | RefundError::NothingPaid => {
            AppError::invalid(crate::field!["amount"], e.to_string(), amount)
        }
    }
}

/// The processor's payment of an order: recorded on it, or (orders written before it
/// was) the intent of its checkout.
async fn payment_of(state: &AppState, order: &Order) -> Result<Option<String>, AppError> {
    if order.payment_id.is_some() {
        return Ok(order.payment_id.clone());
    }
    let Some(checkout) = order.checkout_id else {
        return Ok(None);
    };
    Ok(state
        .store
        .get::<Checkout>(&checkout.key())
        .await?
        .and_then(|c| c.value.payment_processor_metadata.get("intent_id").cloned())
        .filter(|i| !i.is_empty()))
}

/// Asks the processor about a pending refund and records the answer. A refund no longer
/// pending is answered as it is; an unreachable processor is a 503 and leaves it pending.
pub async fn settle(state: &AppState, id: RefundId) -> Result<Refund, AppError> {
    let refund = state
        .store
        .get::<Refund>(&id.key())
        .await?
        .ok_or_else(AppError::not_found)?
        .value;
    if refund.status != RefundStatus::Pending {
        return Ok(refund);
    }
    let order = state
        .store
        .get::<Order>(&refund.order_id.key())
        .await?
        .ok_or_else(|| AppError::internal("a refund's order is gone"))?
        .value;
    let request = payments::RefundRequest {
        payment_id: payment_of(state, &order).await?,
        amount: refund.total(),
        currency: refund.currency.clone(),
        idempotency_key: format!("refund:{}", refund.id),
        reason: payments::RefundRequest::reason_for(refund.reason),
        metadata: vec![
            ("refund_id".into(), refund.id.to_string()),
            ("order_id".into(), refund.order_id.to_string()),
        ],
    };
    let outcome = match state.processor.refund(request).await {
        Ok(outcome) => outcome,
        Err(e) => {
            tracing::warn!(refund = %refund.id, error = %e, "payment processor unavailable; the refund stays pending");
            return Err(AppError::unavailable());
        }
    };
    let settled = match outcome {
        RefundOutcome::Succeeded { processor_id } => {
            finish(state, refund.id, true, Some(processor_id), None).await?
        }
        RefundOutcome::Pending { processor_id } => {
            record_processor_id(state, refund.id, processor_id).await?
        }
        RefundOutcome::Failed {
            processor_id,
            message,
        } => {
            let failed =
                finish(state, refund.id, false, processor_id, Some(message.clone())).await?;
            if failed.status == RefundStatus::Failed {
                return Err(AppError::new(
                    Code::PaymentError,
                    format!("The refund failed: {message}"),
                ));
            }
            failed
        }
    };
    Ok(settled)
}

async fn record_processor_id(
    state: &AppState,
    id: RefundId,
    processor_id: String,
) -> Result<Refund, AppError> {
    let updated = state
        .store
        .update::<Refund, AppError>(&id.key(), async |current| {
            if current.processor_id.is_some() {
                return Ok(None);
            }
            let mut r = current.clone();
            r.processor_id = Some(processor_id.clone());
            Ok(Some(r))
        })
        .await?;
    updated.ok_or_else(AppError::not_found)
}

/// Settles a pending refund: succeeded or failed, with its order, in one write; then
/// revokes the order's keys when the refund asked for it.
pub async fn finish(
    state: &AppState,
    id: RefundId,
    succeeded: bool,
    processor_id: Option<String>,
    failure: Option<String>,
) -> Result<Refund, AppError> {
    let now = state.now();
    let mut attempts = Attempts::new();
    let settled = loop {
        attempts.next()?;
        let stored = state
            .store
            .get::<Refund>(&id.key())
            .await?
            .ok_or_else(AppError::not_found)?;
        let mut refund = stored.value;
        if refund.status != RefundStatus::Pending {
            return Ok(refund);
        }
        let order = state
            .store
            .get::<Order>(&refund.order_id.key())
            .await?
            .ok_or_else(|| AppError::internal("a refund's order is gone"))?;
        let mut o = order.value;
        o.settle_refund(refund.amount, refund.tax_amount, succeeded);
        if succeeded {
            o.modified_at = Some(now);
        }
        refund.status = if succeeded {
            RefundStatus::Succeeded
        } else {
            RefundStatus::Failed
        };
        refund.modified_at = Some(now);
        refund.processor_id = processor_id.clone().or(refund.processor_id);
        refund.failure = failure.clone();
        let mut batch = Batch::new();
        batch.put(&o, Expect::Rev(order.rev))?;
        batch.put(&refund, Expect::Rev(stored.rev))?;
        match state.store.commit_durable(&batch).await {
            Ok(_) => break refund,
            Err(StorageError::Conflict { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    };
    if succeeded && settled.revoke_benefits {
        revoke_order_keys(state, settled.order_id, settled.customer_id).await?;
    }
    Ok(settled)
}

/// Revokes every license key an order granted, through the keys' actors.
pub(crate) async fn revoke_order_keys(
    state: &AppState,
    order: OrderId,
    customer: CustomerId,
) -> Result<(), AppError> {
    let tenants = [customer.key()];
    let ids: Vec<Vec<u8>> = state
        .store
        .index_iter(LICENSE_KEY_BY_CUSTOMER, &tenants, Direction::Asc)?
        .take(10_000)
        .await?;
    for id in ids {
        let Some(key) = state.store.get::<LicenseKey>(&id).await? else {
            continue;
        };
        if key.value.order_id != Some(order) {
            continue;
        }
        match state
            .license_keys
            .call(key.value.id, RevokeLicenseKey)
            .await
        {
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(key = %key.value.id, error = %e, "cannot revoke a refunded order's key")
            }
        }
    }
    Ok(())
}

/// Asks the processor again about every refund left pending (an outage, a crash between
/// the reservation and the answer, a refund the processor is still working on).
pub async fn settle_pending(state: &AppState) -> Result<usize, AppError> {
    let ids: Vec<Vec<u8>> = state
        .store
        .index_iter(REFUND_PENDING, &[Vec::new()], Direction::Asc)?
        .take(500)
        .await?;
    let mut settled = 0;
    for key in ids {
        let Some(r) = state.store.get::<Refund>(&key).await? else {
            continue;
        };
        match settle(state, r.value.id).await {
            Ok(r) if r.status != RefundStatus::Pending => settled += 1,
            Ok(_) => {}
            Err(e) => {
                tracing::debug!(refund = %r.value.id, error = %e, "pending refund not settled yet")
            }
        }
    }
    Ok(settled)
}

/// A refund as the processor reports it (a refund's own event, or each refund of a
/// refunded charge): one Tollgate started is settled; one made at the processor (its
/// dashboard) is recorded once, on the order its payment paid, without revoking anything.
/// Unknown payments are ignored.
pub async fn from_processor(state: &AppState, refund: &RefundUpdate) -> Result<(), AppError> {
    use crate::domain::refund::{processor_key, split_total};
    let pid = refund.processor_id.as_str();
    let settled = match refund.status {
        RefundState::Succeeded => Some(true),
        RefundState::Failed => Some(false),
        RefundState::Pending => None,
    };
    // Ours: named in its metadata.
    if let Some(ours) = refund.refund_id {
        if state.store.get::<Refund>(&ours.key()).await?.is_some() {
            if let Some(succeeded) = settled {
                finish(state, ours, succeeded, Some(pid.to_string()), None).await?;
            }
            return Ok(());
        }
    }
    // Known already (reported before).
    if state
        .store
        .lookup_unique(&processor_key(pid))
        .await?
        .is_some()
    {
        return Ok(());
    }
    if settled != Some(true) {
        return Ok(());
    }
    let Some(payment) = refund.payment_id.as_deref() else {
        return Ok(());
    };
    let Some(order) = crate::app::orders::order_of_payment(state, payment).await? else {
        tracing::warn!(
            refund = pid,
            payment,
            "a refund of a payment no order knows; ignored"
        );
        return Ok(());
    };
    let total = refund.amount;
    if total <= 0 {
        return Ok(());
    }
    let now = state.now();
    let mut attempts = Attempts::new();
    loop {
        attempts.next()?;
        let Some(stored) = state.store.get::<Order>(&order.id.key()).await? else {
            return Ok(());
        };
        let mut o = stored.value;
        let (amount, tax) = split_total(&o, total);
        if amount + tax <= 0 {
            return Ok(());
        }
        o.record_refund(amount, tax);
        o.modified_at = Some(now);
        let r = Refund {
            id: RefundId::new(),
            organization_id: o.organization_id,
            created_at: now,
            modified_at: None,
            status: RefundStatus::Succeeded,
            reason: refund.reason,
            amount,
            tax_amount: tax,
            currency: o.currency.clone(),
            order_id: o.id,
            subscription_id: o.subscription_id,
            customer_id: o.customer_id,
            revoke_benefits: false,
            comment: None,
            metadata: Default::default(),
            processor_id: Some(pid.to_string()),
            failure: None,
        };
        let mut batch = Batch::new();
        batch.put(&o, Expect::Rev(stored.rev))?;
        batch.put(&r, Expect::Absent)?;
        match state.store.commit_durable(&batch).await {
            Ok(_) => return Ok(()),
            // Another delivery recorded it meanwhile (the unique processor id: `Unique`
            // when both read the same order, `Conflict` when it moved the order first), or
            // the order changed: look again.
            Err(StorageError::Conflict { .. } | StorageError::Unique { .. }) => {
                if state
                    .store
                    .lookup_unique(&processor_key(pid))
                    .await?
                    .is_some()
                {
                    return Ok(());
                }
                continue;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The refunds of an order, newest first.
pub async fn refunds_of_order(state: &AppState, order: OrderId) -> Result<Vec<Refund>, AppError> {
    use crate::domain::refund::REFUND_OF_ORDER;
    let ids: Vec<Vec<u8>> = state
        .store
        .index_iter(REFUND_OF_ORDER, &[order.key()], Direction::Desc)?
        .take(100)
        .await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(r) = state.store.get::<Refund>(&id).await? {
            out.push(r.value);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "refunds_tests.rs"]
mod tests;
