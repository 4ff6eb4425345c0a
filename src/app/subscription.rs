//! Subscriptions as a billing system runs them: the list a seller reads, the changes a
//! seller asks for (cancel at the period end, uncancel, revoke now), and
//! [`sweep_subscriptions`], the job that renews (charging through the payment processor),
//! ends and revokes what is due.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};
use serde::Serialize;
use tollgate_actors::license_key::{GetLicenseKey, KeyChanges, RevokeLicenseKey, UpdateLicenseKey};
use tollgate_actors::subscription::{
    Change, ClearRevocations, GetSubscription, KeysPaidUntil, PaymentOutcome, PlanRenewal, Renew,
    RenewalCharge, RenewalPlan, RenewalTerms, Subscription, SubscriptionError, SubscriptionSort,
    UpdateSubscription, SUBSCRIPTION_DUE, SUBSCRIPTION_OF_CUSTOMER, SUBSCRIPTION_OF_DISCOUNT,
    SUBSCRIPTION_OF_PRODUCT, SUBSCRIPTION_REVOKING,
};
use tollgate_actors::ActorError;
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{Batch, Expect};

use crate::app::access::{can_access, organizations_for_list};
use crate::app::listing::{
    directed, filtered_page, narrowest_filter, nulls_last, sorted_page_of, KeyOrder,
};
use crate::app::paging::{ListParams, Sorting};
use crate::auth::Subject;
use crate::domain::customer::Customer;
use crate::domain::discount::Discount;
use crate::domain::ids::{CustomerId, DiscountId, OrganizationId, ProductId, SubscriptionId};
use crate::domain::product::Product;
pub use crate::domain::subscription_change::{CancelSubscription, SubscriptionChange};
use crate::domain::tax_settings::TaxBehaviorOption;
use crate::error::{AppError, Code, Given};
use crate::field;
use crate::payments::{ChargeOutcome, ChargeRequest, TaxQuote, TaxRequest};
use crate::state::AppState;

/// Which request met a refusal of the subscription's rules: the two answer
/// [`SubscriptionError::AlreadyCanceled`] differently on the wire, and each keeps its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// A cancellation, uncancellation or revocation (`PATCH` without a plan, refunds, the
    /// dashboard): Polar answers a change of a canceled subscription with 403
    /// `NotPermitted` there.
    Cancellation,
    /// A plan change (`PATCH` with a product or price, its preview): Polar's
    /// `AlreadyCanceledSubscription` (403), and a currency mismatch is the body's
    /// `product_id` (422).
    PlanChange,
    /// `DELETE /v1/subscriptions/{id}`: an ended subscription is Polar's 403
    /// `AlreadyCanceledSubscription`.
    Revocation,
}

/// A subscription aggregate's refusal (or failure) as the application's coded error: the
/// one place the subscription actor's errors become codes. `context` picks between the two
/// answers Polar gives to a change of an already canceled subscription (see [`Context`]).
pub fn subscription_refusal(e: ActorError<SubscriptionError>, context: Context) -> AppError {
    match e {
        ActorError::Domain(e @ SubscriptionError::AlreadyCanceled) => match context {
            Context::Cancellation => AppError::not_permitted(e.to_string()),
            Context::PlanChange => AppError::new(Code::AlreadyCanceledSubscription, e.to_string()),
            Context::Revocation => AppError::new(
                Code::AlreadyCanceledSubscription,
                "This subscription is already canceled or will be at the end of the period.",
            ),
        },
        ActorError::Domain(e @ SubscriptionError::CurrencyMismatch)
            if context == Context::PlanChange =>
        {
            AppError::invalid(field!["product_id"], e.to_string(), Given::none())
        }
        ActorError::Domain(e @ (SubscriptionError::NotCanceling | SubscriptionError::Ended)) => {
            AppError::bad_request(e.to_string())
        }
        ActorError::Domain(e) => AppError::internal(e),
        ActorError::NotFound => AppError::not_found(),
        ActorError::AlreadyExists => AppError::conflict("The subscription already exists."),
        ActorError::Unavailable(_) => AppError::unavailable(),
        ActorError::Storage(s) => s.into(),
    }
}

fn refusal(e: ActorError<SubscriptionError>) -> AppError {
    subscription_refusal(e, Context::Cancellation)
}

/// A license key's actor failing where a subscription's step only reads or follows keys
/// (its refusals are not the caller's to see).
pub(crate) fn key_failure<E: std::fmt::Display>(e: ActorError<E>) -> AppError {
    match e {
        ActorError::NotFound => AppError::not_found(),
        ActorError::Unavailable(_) => AppError::unavailable(),
        ActorError::Storage(s) => s.into(),
        other => AppError::internal(other),
    }
}

/// A subscription the subject may see, else 404.
pub async fn subscription_for(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
) -> Result<Subscription, AppError> {
    match state.store.get::<Subscription>(&id.key()).await? {
        Some(s) if can_access(state, subject, s.value.organization_id).await? => Ok(s.value),
        _ => Err(AppError::not_found()),
    }
}

/// Subscription `id` as the subject may see it (every write so far read), else 404.
pub async fn get(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
) -> Result<Subscription, AppError> {
    state.store.read_barrier().await?;
    subscription_for(state, subject, id).await
}

/// Which subscriptions a list shows (started ones only), and in what order.
#[derive(Debug, Clone)]
pub struct SubscriptionFilter {
    /// Of these organizations (all the subject reaches when empty).
    pub organization_id: Vec<OrganizationId>,
    pub product_id: Vec<ProductId>,
    pub customer_id: Vec<CustomerId>,
    pub discount_id: Vec<DiscountId>,
    /// `true`: trialing or active; `false`: past due, canceled or unpaid.
    pub active: Option<bool>,
    pub sorting: Sorting<SubscriptionSort>,
}

impl Default for SubscriptionFilter {
    fn default() -> Self {
        Self {
            organization_id: Vec::new(),
            product_id: Vec::new(),
            customer_id: Vec::new(),
            discount_id: Vec::new(),
            active: None,
            sorting: Sorting::by(SubscriptionSort::StartedAt, true),
        }
    }
}

/// One criterion of the subscription list, as its indexes order it: Polar's status rank,
/// names and e-mail addresses case-folded, the monthly amount with no amount last both
/// ways, no period end or no discount last ascending.
fn compare(
    field: SubscriptionSort,
    descending: bool,
    a: &Subscription,
    b: &Subscription,
) -> Ordering {
    let folded = |name: &Option<String>| name.as_ref().map(|n| n.to_lowercase());
    let micros = |t: Option<DateTime<Utc>>| t.map(|t| t.timestamp_micros());
    let ordering = match field {
        SubscriptionSort::Customer => a
            .customer_email
            .to_lowercase()
            .cmp(&b.customer_email.to_lowercase()),
        SubscriptionSort::Status => a.status_rank().cmp(&b.status_rank()),
        SubscriptionSort::StartedAt => micros(a.started_at).cmp(&micros(b.started_at)),
        SubscriptionSort::CurrentPeriodEnd => {
            nulls_last(micros(a.current_period_end), micros(b.current_period_end))
        }
        SubscriptionSort::Amount if descending => {
            return nulls_last(
                a.monthly_amount().map(std::cmp::Reverse),
                b.monthly_amount().map(std::cmp::Reverse),
            )
        }
        SubscriptionSort::Amount => nulls_last(a.monthly_amount(), b.monthly_amount()),
        SubscriptionSort::Product => a
            .product_name
            .to_lowercase()
            .cmp(&b.product_name.to_lowercase()),
        SubscriptionSort::Discount => {
            nulls_last(folded(&a.discount_name), folded(&b.discount_name))
        }
    };
    directed(ordering, descending)
}

/// One page of the started subscriptions `subject` reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &SubscriptionFilter,
    params: ListParams,
) -> Result<(Vec<Subscription>, u64), AppError> {
    let sorting = &filter.sorting;
    let (products, customers, discounts, active) = (
        &filter.product_id,
        &filter.customer_id,
        &filter.discount_id,
        filter.active,
    );
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    // The first criterion is served by an index (equal values follow `started_at`), the
    // others in memory.
    let (field, descending) = sorting.primary();
    let (index, backwards) = field.index(descending);
    let several = sorting.several(compare);
    // `active=true`: trialing or active; `false`: past due, canceled or unpaid.
    let active_ok = |s: &Subscription| match active {
        None => true,
        Some(true) => s.status.is_active(),
        Some(false) => s.status.is_revoked(),
    };
    let keep = |s: &Subscription| {
        s.started_at.is_some()
            && orgs.contains(&s.organization_id)
            && (products.is_empty() || products.contains(&s.product_id))
            && (customers.is_empty() || customers.contains(&s.customer_id))
            && (discounts.is_empty() || s.discount_id.is_some_and(|d| discounts.contains(&d)))
            && active_ok(s)
    };
    let narrowest = narrowest_filter(
        state,
        &[
            (
                SUBSCRIPTION_OF_CUSTOMER,
                customers.iter().map(|c| c.key()).collect(),
            ),
            (
                SUBSCRIPTION_OF_DISCOUNT,
                discounts.iter().map(|d| d.key()).collect(),
            ),
            (
                SUBSCRIPTION_OF_PRODUCT,
                products.iter().map(|p| p.key()).collect(),
            ),
        ],
    )
    .await?;
    let (items, total) = match narrowest {
        Some((filter_index, tenants)) => {
            filtered_page::<Subscription>(
                state,
                filter_index,
                &tenants,
                &keep,
                KeyOrder {
                    key: &|s: &Subscription| s.sort_key(field, descending),
                    backwards,
                    several: several.as_deref(),
                },
                params,
            )
            .await?
        }
        None => {
            let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
            let filter: Option<&dyn Fn(&Subscription) -> bool> = if active.is_some() {
                Some(&active_ok)
            } else {
                None
            };
            sorted_page_of::<Subscription>(
                state,
                index,
                &tenants,
                backwards,
                params,
                filter,
                several.as_deref(),
            )
            .await?
        }
    };
    Ok((items, total))
}

/// What one sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    /// Renewals paid (one `subscription_cycle` order each).
    pub renewed: u64,
    /// Renewals declined (the subscription is past due, or canceled after the dunning
    /// period).
    pub declined: u64,
    /// Subscriptions that ended at their period end (`cancel_at_period_end`).
    pub ended: u64,
    /// License keys revoked.
    pub keys_revoked: u64,
    /// License keys whose paid period (and expiry) moved with a paid renewal.
    pub keys_extended: u64,
    /// Trials whose buyer was reminded of the coming first charge.
    pub trials_reminded: u64,
    /// Steps that failed and are left for the next sweep.
    pub errors: u64,
}

/// A subscription that is due is renewed at most this many periods in one sweep (a
/// service that was down for long catches up over several sweeps).
const MAX_PERIODS_PER_SWEEP: usize = 12;

/// Renews, ends and revokes whatever is due at `state.now()`:
/// 1. every subscription whose renewal is due (index `SUBSCRIPTION_DUE`, key ≤ now): the
///    actor plans the step; a charge goes through `state.processor` with the plan's
///    idempotency key (`<subscription id>:<cycle>`); the actor then writes the outcome and
///    the renewal order in one batch, only if the plan still holds;
/// 2. every subscription with keys to revoke (`SUBSCRIPTION_REVOKING`): each key is
///    revoked through its actor, then the subscription forgets them.
///
/// Each step is idempotent, so a crash anywhere is recovered by the next sweep: the charge
/// is repeated with the same key (never taken twice), the order id is derived from the
/// subscription and the cycle (never written twice), and revoking a revoked key is a no-op.
pub async fn sweep_subscriptions(state: &AppState) -> Result<SweepReport, AppError> {
    let mut report = SweepReport::default();
    let now = state.now();
    let upto = KeyBuf::new()
        .i64(now.timestamp_micros().saturating_add(1))
        .into_vec();
    let due = state
        .store
        .index_range(SUBSCRIPTION_DUE, &[], &[], Some(&upto))
        .await?;
    for key in due {
        let Some(id) = SubscriptionId::from_key(&key) else {
            continue;
        };
        if let Err(e) = renew(state, id, &mut report).await {
            tracing::warn!(subscription = %id, error = %e, "renewal left for the next sweep");
            report.errors += 1;
        }
    }
    // Keys of paid periods the renewals above (or a crash before) left to tell.
    for paid in state.store.scan::<KeysPaidUntil>().await? {
        let id = paid.value.subscription_id;
        if let Err(e) = follow_keys(state, paid, &mut report).await {
            tracing::warn!(subscription = %id, error = %e, "key expiry left for the next sweep");
            report.errors += 1;
        }
    }
    let revoking = state
        .store
        .index_range(SUBSCRIPTION_REVOKING, &[], &[], None)
        .await?;
    for key in revoking {
        let Some(id) = SubscriptionId::from_key(&key) else {
            continue;
        };
        if let Err(e) = revoke_pending(state, id, &mut report).await {
            tracing::warn!(subscription = %id, error = %e, "revocation left for the next sweep");
            report.errors += 1;
        }
    }
    if report != SweepReport::default() {
        tracing::info!(?report, "subscription sweep");
    }
    Ok(report)
}

/// The catalog terms of a subscription's renewal: its price's amount and its discount's
/// duration, as stored now.
pub(crate) async fn renewal_terms(
    state: &AppState,
    s: &Subscription,
) -> Result<RenewalTerms, AppError> {
    let price_amount = state
        .store
        .get::<Product>(&s.product_id.key())
        .await?
        .and_then(|p| {
            p.value
                .price(s.price_id)
                .and_then(|p| p.kind.fixed_amount())
        });
    let discount_duration = match s.discount_id {
        Some(id) => state
            .store
            .get::<Discount>(&id.key())
            .await?
            .map(|d| d.value.duration),
        None => None,
    };
    Ok(RenewalTerms {
        price_amount,
        discount_duration,
        usage: Vec::new(),
    })
}

async fn renew(
    state: &AppState,
    id: SubscriptionId,
    report: &mut SweepReport,
) -> Result<(), AppError> {
    for _ in 0..MAX_PERIODS_PER_SWEEP {
        let current = state
            .subscriptions
            .call(id, GetSubscription)
            .await
            .map_err(refusal)?;
        let mut terms = renewal_terms(state, &current).await?;
        let mut plan = state
            .subscriptions
            .call(
                id,
                PlanRenewal {
                    terms: terms.clone(),
                },
            )
            .await
            .map_err(refusal)?;
        let usage = match &plan {
            // A charge is due: the ending period's usage closes and is billed with it.
            RenewalPlan::Charge(charge) => {
                crate::app::usage_billing::usage_lines(state, &current, charge.cycle).await?
            }
            // The subscription ends: its last period's usage closes, and is billed by a
            // final charge of its own unless it comes to 0.
            RenewalPlan::End => {
                crate::app::usage_billing::final_usage_lines(state, &current).await?
            }
            _ => Vec::new(),
        };
        if !usage.is_empty() {
            terms.usage = usage;
            plan = state
                .subscriptions
                .call(
                    id,
                    PlanRenewal {
                        terms: terms.clone(),
                    },
                )
                .await
                .map_err(refusal)?;
        }
        let outcome = match &plan {
            RenewalPlan::NotDue => return Ok(()),
            RenewalPlan::End | RenewalPlan::RemindTrial { .. } => None,
            RenewalPlan::Charge(charge) => Some(charge_renewal(state, &current, charge).await?),
        };
        let declined = outcome == Some(PaymentOutcome::Declined);
        let ending = current.ends_at_period_end();
        let renewed = state
            .subscriptions
            .call(
                id,
                Renew {
                    terms,
                    expected: plan.clone(),
                    outcome,
                },
            )
            .await
            .map_err(refusal)?;
        if !renewed.applied {
            return Ok(());
        }
        match plan {
            RenewalPlan::End => {
                report.ended += 1;
                return Ok(());
            }
            // The final charge of the last period's usage ended it.
            RenewalPlan::Charge(_) if ending => {
                report.ended += 1;
                if declined {
                    report.declined += 1;
                }
                return Ok(());
            }
            // The mail follows from the change feed; the trial's end is next.
            RenewalPlan::RemindTrial { .. } => report.trials_reminded += 1,
            _ if declined => {
                report.declined += 1;
                return Ok(());
            }
            _ => report.renewed += 1,
        }
    }
    Ok(())
}

/// The tax quote of `amount` of `currency` charged to `customer` (by their billing
/// address) at a price of tax behaviour `price_option` (`None`: the organization's
/// default; see [`price_option`]), asked of the tax service before the charge (an amount
/// of 0 is quoted zero without asking). A service that does not answer leaves the step for
/// later.
pub(crate) async fn tax_quote(
    state: &AppState,
    customer: CustomerId,
    price_option: Option<TaxBehaviorOption>,
    amount: i64,
    currency: &str,
) -> Result<TaxQuote, AppError> {
    let Some(c) = state.store.get::<Customer>(&customer.key()).await? else {
        return Ok(TaxQuote::zero(TaxRequest::new(
            amount,
            currency,
            chrono::Utc::now().date_naive(),
        )));
    };
    let c = c.value;
    let mut request = TaxRequest::new(amount, currency, chrono::Utc::now().date_naive());
    // The customer as they are now (the portal edits their billing details): a customer
    // with a tax number buys as a business, as their checkout did.
    request.buyer = tollgate_actors::tax::Buyer {
        address: c.billing_address.clone(),
        is_business: c.tax_id.is_some(),
        tax_id: c
            .tax_id
            .clone()
            .map(|t| (t, tollgate_actors::tax::TaxIdStatus::Unverified)),
    };
    crate::app::tax::quote(state, c.organization_id, price_option, request).await
}

/// The tax behaviour subscription `s`'s current price chose (`None`: the organization's
/// default), what its renewals are quoted at.
pub(crate) async fn price_option(
    state: &AppState,
    s: &Subscription,
) -> Result<Option<TaxBehaviorOption>, AppError> {
    crate::app::catalog::products::price_tax_behavior(state, s.product_id, s.price_id).await
}

/// Charges a renewal (amount plus tax) through the processor. A processor that does not
/// answer is an error: the renewal stays due and is charged again with the same key.
async fn charge_renewal(
    state: &AppState,
    current: &Subscription,
    charge: &RenewalCharge,
) -> Result<PaymentOutcome, AppError> {
    let id = current.id;
    let option = price_option(state, current).await?;
    let tax = tax_quote(
        state,
        charge.customer_id,
        option,
        charge.amount,
        &charge.currency,
    )
    .await?;
    let total = charge.amount.saturating_add(tax.added_tax());
    if total <= 0 {
        return Ok(PaymentOutcome::Paid {
            tax: Box::new(tax),
            payment_id: None,
        });
    }
    let request = ChargeRequest {
        idempotency_key: charge.idempotency_key.clone(),
        amount: total,
        currency: charge.currency.clone(),
        confirmation_token: charge.payment_token.clone(),
        setup_future_usage: true,
        // The buyer is not there: the saved payment method is charged off-session.
        off_session: true,
        customer_id: charge.customer_id,
        customer_email: charge.customer_email.clone(),
        customer_name: None,
        metadata: vec![
            ("subscription_id".into(), id.to_string()),
            ("idempotency_key".into(), charge.idempotency_key.clone()),
        ],
    };
    match state.processor.charge(request).await {
        Ok(ChargeOutcome::Succeeded { intent_id, .. }) => Ok(PaymentOutcome::Paid {
            tax: Box::new(tax),
            payment_id: Some(intent_id).filter(|i| !i.is_empty()),
        }),
        // An off-session charge that needs the buyer (authentication) did not pay: the
        // subscription goes past due and is retried like a decline.
        Ok(ChargeOutcome::Declined { .. } | ChargeOutcome::Pending { .. }) => {
            Ok(PaymentOutcome::Declined)
        }
        Err(e) => Err(AppError::internal(e)),
    }
}

/// Tells a subscription's keys the period it paid for: each key's `paid_until` moves to
/// it and its `expires_at` to it plus its benefit's grace, through the key's actor (never
/// backwards: a key already told of a later period is left alone); then the outbox record
/// goes. `license_key.updated` follows from the feed.
pub(crate) async fn follow_keys(
    state: &AppState,
    paid: tollgate_storage::Stored<KeysPaidUntil>,
    report: &mut SweepReport,
) -> Result<(), AppError> {
    let until = paid.value.paid_until;
    for key in &paid.value.keys {
        let current = match state.license_keys.call(*key, GetLicenseKey).await {
            Ok(k) => k,
            Err(ActorError::NotFound) => continue,
            Err(e) => return Err(key_failure(e)),
        };
        // A key revoked meanwhile (by the seller) stays as it is.
        if current.paid_until.is_some_and(|p| p >= until)
            || current.status == tollgate_actors::license_key::KeyStatus::Revoked
        {
            continue;
        }
        let benefit = state
            .store
            .get::<crate::domain::benefit::Benefit>(&current.benefit_id.key())
            .await?;
        let term = crate::domain::grants::renewal(benefit.as_ref().map(|b| &b.value), until);
        let changes = KeyChanges {
            paid_until: Some(Some(term.paid_until)),
            expires_at: Some(Some(term.expires_at)),
            ..KeyChanges::default()
        };
        state
            .license_keys
            .call(*key, UpdateLicenseKey(changes))
            .await
            .map_err(key_failure)?;
        report.keys_extended += 1;
    }
    let mut batch = Batch::new();
    batch.delete::<KeysPaidUntil>(&paid.value.subscription_id.key(), Expect::Rev(paid.rev));
    match state.store.commit_durable(&batch).await {
        // A later paid period rewrote it meanwhile: the next sweep tells that one.
        Ok(_) | Err(tollgate_storage::StorageError::Conflict { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Revokes the keys a subscription still has to revoke, then clears them from it.
/// Returns the subscription as it then is (`None` if there was nothing to clear).
pub(crate) async fn revoke_pending(
    state: &AppState,
    id: SubscriptionId,
    report: &mut SweepReport,
) -> Result<Option<Subscription>, AppError> {
    // Through the actor: it answers once the ended state is durable, so no key is revoked
    // for an end a crash could still undo.
    let s = state
        .subscriptions
        .call(id, GetSubscription)
        .await
        .map_err(refusal)?;
    let mut done = Vec::new();
    for key in &s.pending_revocations {
        match state.license_keys.call(*key, RevokeLicenseKey).await {
            Ok(_) => {
                done.push(*key);
                report.keys_revoked += 1;
            }
            // A key that no longer exists has nothing to revoke.
            Err(ActorError::NotFound) => done.push(*key),
            Err(e) => {
                tracing::warn!(subscription = %id, license_key = %key, error = %e,
                    "license key revocation left for the next sweep");
                report.errors += 1;
            }
        }
    }
    if done.is_empty() {
        return Ok(None);
    }
    let cleared = state
        .subscriptions
        .call(id, ClearRevocations { revoked: done })
        .await
        .map_err(refusal)?;
    Ok(Some(cleared))
}

/// Who cancels or uncancels a subscription: each has its own share of the subscription's
/// toggle limit, so a buyer toggling from the portal never stops the seller's own changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Toggler {
    /// The seller: its API and dashboard.
    Seller,
    /// The buyer, in the customer portal.
    Buyer,
}

/// The seller cancels subscription `id` (at the period end, or revokes it now): what
/// refunds call to end the subscription of a refunded order. A subscription already
/// canceled answers 403 `NotPermitted`, one that ended 400 `BadRequest`.
pub async fn cancel(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
    command: CancelSubscription,
) -> Result<Subscription, AppError> {
    change(
        state,
        subject,
        id,
        SubscriptionChange::Cancel(command),
        Toggler::Seller,
    )
    .await
}

/// The seller undoes the cancellation of subscription `id` at its period end (400
/// `BadRequest` if it is not canceling or has ended).
pub async fn uncancel(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
) -> Result<Subscription, AppError> {
    change(
        state,
        subject,
        id,
        SubscriptionChange::Uncancel,
        Toggler::Seller,
    )
    .await
}

/// Changes subscription `id` as `subject` asks: another product or price (with
/// proration: `crate::app::plan_change`), cancel at the period end, uncancel, or revoke at
/// once (its license keys revoked now; what fails is left for the sweep). A cancellation
/// or uncancellation that changes something counts against `by`'s share of the
/// subscription's toggle limit. Nothing to change answers the subscription as it is.
pub async fn change(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
    command: SubscriptionChange,
    by: Toggler,
) -> Result<Subscription, AppError> {
    change_in(state, subject, id, command, by, Context::Cancellation).await
}

/// Ends subscription `id` now, as the seller (Polar's `DELETE /v1/subscriptions/{id}`):
/// its license keys are revoked, and a subscription that already ended is 403
/// `AlreadyCanceledSubscription`. One set to end at its period's end ends now.
pub async fn revoke(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
) -> Result<Subscription, AppError> {
    let command = SubscriptionChange::Cancel(CancelSubscription::now());
    change_in(
        state,
        subject,
        id,
        command,
        Toggler::Seller,
        Context::Revocation,
    )
    .await
}

async fn change_in(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
    command: SubscriptionChange,
    by: Toggler,
    context: Context,
) -> Result<Subscription, AppError> {
    let change = match command {
        SubscriptionChange::Plan(plan) => {
            return crate::app::plan_change::change_plan(state, subject, id, &plan).await
        }
        SubscriptionChange::Nothing => None,
        SubscriptionChange::Uncancel => Some(Change::Uncancel),
        SubscriptionChange::Cancel(CancelSubscription {
            at_period_end: true,
            reason,
            comment,
        }) => Some(Change::CancelAtPeriodEnd { reason, comment }),
        SubscriptionChange::Cancel(CancelSubscription {
            at_period_end: false,
            reason,
            comment,
        }) => Some(Change::Revoke { reason, comment }),
    };
    state.store.read_barrier().await?;
    let current = subscription_for(state, subject, id).await?;
    let Some(change) = change else {
        return Ok(current);
    };
    // A state toggled over and over mails the buyer each time: a cancellation or an
    // uncancellation that changes something counts against the subscription's limit.
    let toggles = match &change {
        Change::Uncancel => current.cancel_at_period_end,
        Change::CancelAtPeriodEnd { .. } => !current.cancel_at_period_end,
        _ => false,
    };
    if toggles && current.ended_at.is_none() {
        // The refusal carries the policy and when to retry (Retry-After and the
        // rate-limit fields over HTTP).
        state.limits.subscription_cancel(&(id, by))?;
    }
    let mut updated = state
        .subscriptions
        .call(id, UpdateSubscription(change))
        .await
        .map_err(|e| subscription_refusal(e, context))?;
    if !updated.pending_revocations.is_empty() {
        // Revoke the keys now; whatever fails here is retried by the sweep.
        let mut report = SweepReport::default();
        match revoke_pending(state, id, &mut report).await {
            Ok(Some(s)) => updated = s,
            Ok(None) => {}
            Err(e) => tracing::warn!(subscription = %id, error = %e,
                "license keys left for the sweep to revoke"),
        }
    }
    Ok(updated)
}

#[cfg(test)]
#[path = "subscription_tests.rs"]
mod tests;
