//! "Pay now" (Polar's customer-portal `orders/{id}/confirm-payment` and
//! `payment-status`): the buyer pays a past-due subscription's `pending` renewal order at
//! once, with a saved card or a new one.
//!
//! The subscription's actor serializes the charge with the sweep's retries
//! (`BeginRecovery` takes a payment lock and answers the charge with an idempotency key of
//! the cycle, the buyer's attempt and the card; `SettleRecovery` applies the outcome). A
//! paid charge makes the renewal order `paid` and the subscription `active`; the license
//! keys are told of the paid period before the answer goes (no `grace_until` left), the
//! card that paid bills the next renewals, and the feed sends `order.paid`,
//! `subscription.active` and the receipt. A decline is an answer (`failed` with the
//! processor's message), not an error, as Polar's.
//!
//! A charge that waits for the buyer (3-D Secure) is settled later, by whichever comes
//! first: the page polling `payment-status` (which asks the processor about the payment)
//! or the processor's webhook ([`settled_by_processor`]).

use tollgate_actors::subscription::{
    renewal_order_id, BeginRecovery, GetSubscription, KeysPaidUntil, RecoveryOutcome, RenewalTerms,
    SetPaymentMethod, SettleRecovery, Subscription, SubscriptionError,
};
use tollgate_actors::ActorError;

use crate::app::subscription::{follow_keys, price_option, renewal_terms, tax_quote, SweepReport};
use crate::domain::customer::Customer;
use crate::domain::ids::{OrderId, SubscriptionId};
use crate::domain::order::{Order, OrderStatus, PaymentAttempt, PaymentAttemptStatus};
use crate::domain::payment_method::PaymentMethod;
use crate::error::{AppError, Code};
use crate::payments::events::PaymentUpdate;
use crate::payments::{ChargeOutcome, ChargeRequest, ProcessorClient, RefundRequest, TaxQuote};
use crate::state::AppState;

pub use tollgate_actors::subscription::{Confirmation, ConfirmationStatus, PayWith, PaymentStatus};

/// What a decline says when the processor gives no reason.
pub const DECLINED: &str = "Your card was declined.";

/// One of the customer's orders, else 404 (another customer's is not there).
async fn own_order(state: &AppState, customer: &Customer, id: OrderId) -> Result<Order, AppError> {
    state
        .store
        .get::<Order>(&id.key())
        .await?
        .map(|o| o.value)
        .filter(|o| o.customer_id == customer.id)
        .ok_or_else(AppError::not_found)
}

fn not_eligible(id: OrderId) -> AppError {
    AppError::new(
        Code::OrderNotEligibleForRetry,
        format!("Order {id} is not eligible for payment retry."),
    )
}

/// The subscription's refusals of the buyer's charge, as Polar answers them.
fn recovery_refusal(order: OrderId, e: ActorError<SubscriptionError>) -> AppError {
    match e {
        ActorError::Domain(SubscriptionError::NotPastDue) => not_eligible(order),
        ActorError::Domain(SubscriptionError::PaymentInProgress) => AppError::new(
            Code::PaymentAlreadyInProgress,
            "Payment already in progress.",
        ),
        ActorError::Domain(SubscriptionError::TooManyAttempts) => AppError::new(
            Code::ManualRetryLimitExceeded,
            "Maximum number of manual retry attempts exceeded.",
        ),
        other => crate::app::subscription::subscription_refusal(
            other,
            crate::app::subscription::Context::Cancellation,
        ),
    }
}

/// The subscription a `pending` renewal order in dunning belongs to, as it is now, if the
/// order is the one of the renewal due now (not an older one).
async fn dunning_subscription(
    state: &AppState,
    order: &Order,
) -> Result<Option<Subscription>, AppError> {
    let Some(id) = order.subscription_id else {
        return Ok(None);
    };
    if order.status != OrderStatus::Pending || order.next_payment_attempt_at.is_none() {
        return Ok(None);
    }
    let current = state
        .subscriptions
        .call(id, GetSubscription)
        .await
        .map_err(|e| recovery_refusal(order.id, e))?;
    Ok(
        (renewal_order_id(current.id, current.cycles.saturating_add(1)) == order.id)
            .then_some(current),
    )
}

/// Pays a past-due subscription's `pending` renewal order now (see the module's doc):
/// 404 for an order that is not the customer's; 422 `OrderNotEligibleForRetry` for one
/// that is not the pending renewal in dunning (or, with Stripe, a customer Stripe does not
/// know); 422 `PaymentRetryValidationError` for a saved method that is not the customer's;
/// 409 while a charge is under way; 429 after the buyer's attempts are used up.
pub async fn pay_now(
    state: &AppState,
    customer: &Customer,
    order_id: OrderId,
    with: PayWith,
) -> Result<Confirmation, AppError> {
    let order = own_order(state, customer, order_id).await?;
    let Some(current) = dunning_subscription(state, &order).await? else {
        return Err(not_eligible(order.id));
    };
    // Stripe charges a customer it knows (Polar: "the customer has a Stripe customer").
    if let ProcessorClient::Stripe { .. } = state.processor.client() {
        let meta = crate::payments::stripe::customer_meta_key(customer.id);
        if state.store.get_meta(&meta).await?.is_none() {
            return Err(not_eligible(order.id));
        }
    }
    let method = match &with {
        PayWith::Saved(id) => state
            .store
            .get::<PaymentMethod>(&id.key())
            .await?
            .filter(|m| m.value.customer_id == customer.id)
            .map(|m| m.value.processor_ref)
            .ok_or_else(|| {
                AppError::new(
                    Code::PaymentRetryValidationError,
                    "Payment method does not belong to customer",
                )
            })?,
        PayWith::New(token) => token.clone(),
    };
    let subscription_id = current.id;
    let mut terms = renewal_terms(state, &current).await?;
    // The usage the declined charge billed (its windows were closed then: the same lines).
    terms.usage =
        crate::app::usage_billing::usage_lines(state, &current, current.cycles.saturating_add(1))
            .await?;
    // The tax is asked for before the lock is taken: a tax service that does not answer
    // leaves nothing held.
    let due = current.renewal_charge(&terms);
    let option = price_option(state, &current).await?;
    let mut tax = tax_quote(state, customer.id, option, due.amount, &due.currency).await?;
    let charge = state
        .subscriptions
        .call(
            subscription_id,
            BeginRecovery {
                terms: terms.clone(),
                method: method.clone(),
            },
        )
        .await
        .map_err(|e| recovery_refusal(order.id, e))?;
    if charge.amount != due.amount || charge.currency != due.currency {
        tax = tax_quote(state, customer.id, option, charge.amount, &charge.currency).await?;
    }
    let total = charge.amount.saturating_add(tax.added_tax());
    let request = ChargeRequest {
        idempotency_key: charge.idempotency_key.clone(),
        amount: total,
        currency: charge.currency.clone(),
        confirmation_token: Some(method),
        setup_future_usage: matches!(with, PayWith::New(_)),
        // The buyer is there: an authentication can be asked of them.
        off_session: false,
        customer_id: customer.id,
        customer_email: customer.email.clone(),
        customer_name: customer.name.clone(),
        metadata: vec![
            ("subscription_id".into(), subscription_id.to_string()),
            ("order_id".into(), order.id.to_string()),
            ("idempotency_key".into(), charge.idempotency_key.clone()),
        ],
    };
    let outcome = state.processor.charge(request).await.map_err(|e| {
        // The lock runs out on its own; the same request is then the same charge.
        tracing::warn!(order = %order.id, error = %e, "pay now: processor unavailable");
        AppError::unavailable()
    })?;
    let settled = Settlement {
        customer,
        order: order.id,
        subscription: subscription_id,
        terms,
        cycle: charge.cycle,
        tax,
        total,
    };
    settled.apply(state, outcome).await
}

/// A charge of a past-due renewal whose outcome is known.
struct Settlement<'a> {
    customer: &'a Customer,
    order: OrderId,
    subscription: SubscriptionId,
    terms: RenewalTerms,
    cycle: u32,
    tax: TaxQuote,
    /// What was charged, tax included (given back if it came too late).
    total: i64,
}

impl Settlement<'_> {
    /// Applies `outcome` through the subscription's actor and records it on the order;
    /// a paid one then moves the keys and bills the next renewals with the card that paid.
    async fn apply(
        self,
        state: &AppState,
        outcome: ChargeOutcome,
    ) -> Result<Confirmation, AppError> {
        let now = state.now();
        let (settle, answer, attempt, paid) = match outcome {
            ChargeOutcome::Succeeded {
                intent_id,
                payment_method,
            } => {
                let intent = Some(intent_id).filter(|i| !i.is_empty());
                (
                    RecoveryOutcome::Paid {
                        tax: Box::new(self.tax.clone()),
                        payment_id: intent.clone(),
                    },
                    Confirmation {
                        status: ConfirmationStatus::Succeeded,
                        client_secret: None,
                        error: None,
                    },
                    None,
                    Some((intent, payment_method)),
                )
            }
            ChargeOutcome::Pending {
                intent_id,
                client_secret,
                ..
            } => (
                RecoveryOutcome::Pending {
                    intent_id: intent_id.clone(),
                },
                Confirmation {
                    status: ConfirmationStatus::RequiresAction,
                    client_secret,
                    error: None,
                },
                Some(PaymentAttempt {
                    intent_id: Some(intent_id),
                    status: PaymentAttemptStatus::Pending,
                    error: None,
                    at: now,
                }),
                None,
            ),
            ChargeOutcome::Declined { message } => {
                let error = message.unwrap_or_else(|| DECLINED.into());
                (
                    RecoveryOutcome::Declined,
                    Confirmation {
                        status: ConfirmationStatus::Failed,
                        client_secret: None,
                        error: Some(error.clone()),
                    },
                    Some(PaymentAttempt {
                        intent_id: None,
                        status: PaymentAttemptStatus::Failed,
                        error: Some(error),
                        at: now,
                    }),
                    None,
                )
            }
        };
        let settled = state
            .subscriptions
            .call(
                self.subscription,
                SettleRecovery {
                    terms: self.terms,
                    cycle: self.cycle,
                    outcome: settle,
                },
            )
            .await
            .map_err(|e| recovery_refusal(self.order, e))?;
        if let Some(attempt) = attempt {
            record_attempt(state, self.order, attempt).await?;
        }
        if let Some((intent, card)) = paid {
            if settled.applied {
                after_paid(state, self.customer, self.subscription, card).await;
            } else {
                give_back(
                    state,
                    self.order,
                    self.subscription,
                    intent,
                    self.total,
                    &self.tax,
                )
                .await?;
            }
        }
        Ok(answer)
    }
}

/// What follows a paid recovery, each step logged and left (never failing a paid answer):
/// the keys follow the paid period now (the answer finds them without grace; the sweep
/// would do it otherwise), and the card that paid is saved and bills the next renewals
/// (the customer's default when it has none).
async fn after_paid(
    state: &AppState,
    customer: &Customer,
    subscription: SubscriptionId,
    card: Option<String>,
) {
    match state.store.get::<KeysPaidUntil>(&subscription.key()).await {
        Ok(Some(outbox)) => {
            if let Err(e) = follow_keys(state, outbox, &mut SweepReport::default()).await {
                tracing::warn!(subscription = %subscription, error = %e, "key expiry left for the sweep");
            }
        }
        Ok(None) => {}
        Err(e) => {
            tracing::warn!(subscription = %subscription, error = %e, "key expiry left for the sweep")
        }
    }
    let Some(card) = card.filter(|c| !c.is_empty()) else {
        return;
    };
    if let Err(e) = state
        .subscriptions
        .call(subscription, SetPaymentMethod(card.clone()))
        .await
    {
        tracing::warn!(subscription = %subscription, error = %e, "the paying card not kept");
        return;
    }
    match crate::app::payment_methods::record_new(state, customer, &card).await {
        Ok(method) => {
            if let Err(e) =
                crate::app::payment_methods::default_if_none(state, customer, method.id).await
            {
                tracing::warn!(customer = %customer.id, error = %e, "default payment method not set");
            }
        }
        Err(e) => {
            // The list saves it on its next read (the subscription bills with it).
            tracing::warn!(customer = %customer.id, error = %e, "the paying card not saved");
        }
    }
}

/// Money taken for a renewal that could not be applied (the subscription ended or was paid
/// otherwise meanwhile) is given back, unless it is the very payment the order recorded
/// (the same payment settled twice: by the page and by the webhook).
async fn give_back(
    state: &AppState,
    order: OrderId,
    subscription: SubscriptionId,
    intent: Option<String>,
    total: i64,
    tax: &TaxQuote,
) -> Result<(), AppError> {
    let Some(intent) = intent else {
        return Ok(());
    };
    let recorded = state.store.get::<Order>(&order.key()).await?;
    if recorded
        .as_ref()
        .is_some_and(|o| o.value.payment_id.as_deref() == Some(intent.as_str()))
    {
        return Ok(());
    }
    let refund = RefundRequest {
        idempotency_key: format!("{intent}:refund"),
        payment_id: Some(intent.clone()),
        amount: total,
        currency: tax.request.currency.clone(),
        reason: "duplicate",
        metadata: vec![("subscription_id".into(), subscription.to_string())],
    };
    if let Err(e) = state.processor.refund(refund).await {
        tracing::error!(subscription = %subscription, intent = %intent, error = %e,
            "a recovery charge that did not apply could not be refunded");
    }
    Ok(())
}

/// Records the buyer's last charge of a pending order (what `payment-status` answers).
async fn record_attempt(
    state: &AppState,
    id: OrderId,
    attempt: PaymentAttempt,
) -> Result<(), AppError> {
    state
        .store
        .update::<Order, AppError>(&id.key(), async |o: &Order| {
            if o.status != OrderStatus::Pending || o.last_payment.as_ref() == Some(&attempt) {
                return Ok(None);
            }
            Ok(Some(Order {
                last_payment: Some(attempt.clone()),
                ..o.clone()
            }))
        })
        .await?;
    Ok(())
}

/// Settles a charge left waiting for the buyer (3-D Secure) with what the processor now
/// says of `payment`; `None` when there is nothing to settle (the order is not the pending
/// renewal in dunning, or the payment is not the one the subscription waits on and did
/// not pay). A payment that went through is applied whichever attempt it was: money was
/// taken for the renewal.
async fn settle_waiting(
    state: &AppState,
    customer: &Customer,
    order: &Order,
    payment: &str,
    outcome: ChargeOutcome,
) -> Result<Option<Confirmation>, AppError> {
    let Some(current) = dunning_subscription(state, order).await? else {
        return Ok(None);
    };
    let waits_on_this = current.recovery_intent.as_deref() == Some(payment);
    match &outcome {
        ChargeOutcome::Pending { .. } => return Ok(None),
        ChargeOutcome::Declined { .. } if !waits_on_this => return Ok(None),
        _ => {}
    }
    let terms = renewal_terms(state, &current).await?;
    let charge = current.renewal_charge(&terms);
    let option = price_option(state, &current).await?;
    let tax = tax_quote(state, customer.id, option, charge.amount, &charge.currency).await?;
    let settlement = Settlement {
        customer,
        order: order.id,
        subscription: current.id,
        terms,
        cycle: charge.cycle,
        total: charge.amount.saturating_add(tax.added_tax()),
        tax,
    };
    settlement.apply(state, outcome).await.map(Some)
}

/// The last payment of one of the customer's orders (404 for anyone else's): the buyer's
/// last charge if there was one (one waiting for the buyer is first asked of the processor,
/// and settled if it ended), else the order's own: `succeeded` once paid, `failed` for a
/// declined renewal, `no_payment` for a free order.
pub async fn payment_status(
    state: &AppState,
    customer: &Customer,
    order_id: OrderId,
) -> Result<PaymentStatus, AppError> {
    let mut order = own_order(state, customer, order_id).await?;
    let waiting = order
        .last_payment
        .as_ref()
        .filter(|p| p.status == PaymentAttemptStatus::Pending)
        .and_then(|p| p.intent_id.clone());
    if let (OrderStatus::Pending, Some(intent)) = (order.status, waiting) {
        let outcome = state.processor.intent(&intent).await.map_err(|e| {
            tracing::warn!(order = %order.id, error = %e, "payment status: processor unavailable");
            AppError::unavailable()
        })?;
        if settle_waiting(state, customer, &order, &intent, outcome)
            .await?
            .is_some()
        {
            order = own_order(state, customer, order_id).await?;
        }
    }
    if order.status.was_paid() {
        let status = if order.amount + order.tax_amount > 0 {
            "succeeded"
        } else {
            "no_payment"
        };
        return Ok(PaymentStatus {
            status,
            error: None,
        });
    }
    Ok(match order.last_payment {
        Some(p) => PaymentStatus {
            status: p.status.as_str(),
            error: p.error,
        },
        None => PaymentStatus {
            status: "failed",
            error: Some(DECLINED.into()),
        },
    })
}

/// The processor's word on a "pay now" charge (a payment whose metadata names an order and
/// no checkout): it settles the charge left waiting for the buyer, as `payment-status`
/// would. Anything else (an order that is not a pending renewal in dunning, another
/// payment's failure) is ignored.
pub async fn settled_by_processor(
    state: &AppState,
    order_id: OrderId,
    payment: &PaymentUpdate,
) -> Result<(), AppError> {
    let Some(order) = state.store.get::<Order>(&order_id.key()).await? else {
        tracing::warn!(order = %order_id, intent = %payment.payment_id, "webhook for an unknown order");
        return Ok(());
    };
    let order = order.value;
    if order.status != OrderStatus::Pending {
        return Ok(());
    }
    let Some(customer) = state
        .store
        .get::<Customer>(&order.customer_id.key())
        .await?
    else {
        return Ok(());
    };
    let settled = settle_waiting(
        state,
        &customer.value,
        &order,
        &payment.payment_id,
        payment.outcome.clone(),
    )
    .await;
    match settled {
        Ok(_) => Ok(()),
        // The subscription moved on (paid, ended) or is gone: nothing left to do.
        Err(e) if matches!(e.code(), Code::OrderNotEligibleForRetry | Code::NotFound) => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
#[path = "recovery_tests.rs"]
mod tests;
