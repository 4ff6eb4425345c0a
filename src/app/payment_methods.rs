//! A customer's saved payment methods, for the customer portal (Polar's
//! `customers/me/payment-methods`): list, add (the processor saves the card without
//! charging it: a SetupIntent), confirm a setup that needed the buyer (3-D Secure), make
//! one the customer's default, remove one.
//!
//! The methods a customer's paid subscriptions are billed with become records the first time
//! the list is read (`materialize`): buyers who subscribed before saved methods existed
//! see the card they pay with, no migration needed. The default method bills every live
//! subscription of the customer; a method removed hands its subscriptions to the default
//! (or the newest other) one, and is refused only when a live paid subscription would be
//! left with nothing to charge.

use tollgate_actors::subscription::{SetPaymentMethod, Subscription};
use tollgate_actors::ActorError;
use tollgate_storage::{Batch, Expect, Record, StorageError};

use crate::app::listing::page_of;
use crate::app::paging::ListParams;
use crate::app::subscription::{subscription_refusal, Context};
use crate::domain::customer::Customer;
use crate::domain::ids::PaymentMethodId;
use crate::domain::payment_method::{
    AddPaymentMethod, ConfirmPaymentMethod, PaymentMethod, SetupAnswer, PAYMENT_METHOD_OF_CUSTOMER,
};
use crate::domain::portal_link::PaymentSetup;
use crate::error::{AppError, Code};
use crate::field;
use crate::payments::{ChargeOutcome, ChargeRequest, ProcessorClient};
use crate::state::AppState;

/// What a declined setup says when the processor gives no reason.
const SETUP_FAILED: &str = "The payment method could not be set up.";
/// Polar's refusal of a removal that would leave a subscription nothing to charge.
pub const IN_USE: &str = "This payment method is still needed to bill a subscription. Add \
                          another one or cancel the subscription first.";
/// Polar's refusal of a setup the customer did not start (at `setup_intent_id`).
pub const INVALID_SETUP: &str = "Invalid setup_intent_id.";

/// Whether a subscription still bills: started and not ended.
fn is_live(s: &Subscription) -> bool {
    s.started_at.is_some() && s.ended_at.is_none()
}

/// Whether a live subscription charges money, so that it needs a card.
fn is_live_paid(s: &Subscription) -> bool {
    is_live(s) && s.amount.unwrap_or(0) > 0
}

/// One page of the customer's saved methods, newest first, and their total; the methods
/// its live subscriptions are billed with are saved first (see the module's doc).
pub async fn list(
    state: &AppState,
    customer: &Customer,
    params: ListParams,
) -> Result<(Vec<PaymentMethod>, u64), AppError> {
    materialize(state, customer).await?;
    page_of::<PaymentMethod>(
        state,
        PAYMENT_METHOD_OF_CUSTOMER,
        &[customer.id.key()],
        true,
        params,
        None,
    )
    .await
}

/// Saves, once, the method each live paid subscription of the customer is billed with (a
/// free one charges nothing: its card, once removed, stays removed).
async fn materialize(state: &AppState, customer: &Customer) -> Result<(), AppError> {
    let subscriptions = crate::app::benefit_grants::subscriptions_of(state, customer).await?;
    for s in subscriptions.iter().filter(|s| is_live_paid(s)) {
        let Some(token) = s.payment_token.as_deref().filter(|t| !t.is_empty()) else {
            continue;
        };
        let id = PaymentMethod::id_for(customer.id, token);
        if state.store.get::<PaymentMethod>(&id.key()).await?.is_some() {
            continue;
        }
        let details = match state.processor.describe_method(token).await {
            Ok(d) => d,
            Err(e) => {
                // The list still answers; the method shows once the processor does.
                tracing::warn!(subscription = %s.id, error = %e, "payment method not described");
                continue;
            }
        };
        let method = PaymentMethod::new(
            customer.organization_id,
            customer.id,
            token.to_string(),
            details,
            s.started_at.unwrap_or(s.created_at),
        );
        put_new(state, &method).await?;
    }
    Ok(())
}

/// Writes a method unless it is there already (a concurrent save of the same one).
async fn put_new(state: &AppState, method: &PaymentMethod) -> Result<(), AppError> {
    let mut batch = Batch::new();
    batch.put(method, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) | Err(StorageError::Conflict { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Saves a new method: the processor sets it up for later charges without charging it.
/// 400 `PaymentMethodSetupFailed` when the processor declines it; `RequiresAction` when
/// the buyer must confirm it first (then [`confirm`]).
pub async fn add(
    state: &AppState,
    customer: &Customer,
    command: AddPaymentMethod,
) -> Result<SetupAnswer, AppError> {
    let request = ChargeRequest {
        idempotency_key: format!("pm-add:{}:{}", customer.id, command.token),
        amount: 0,
        currency: crate::domain::currency::Currency::DEFAULT.into(),
        confirmation_token: Some(command.token.clone()),
        setup_future_usage: true,
        off_session: false,
        customer_id: customer.id,
        customer_email: customer.email.clone(),
        customer_name: customer.name.clone(),
        metadata: vec![("tollgate_customer_id".into(), customer.id.to_string())],
    };
    let outcome = state.processor.setup(request).await.map_err(|e| {
        tracing::warn!(customer = %customer.id, error = %e, "payment method setup failed");
        AppError::unavailable()
    })?;
    match outcome {
        ChargeOutcome::Succeeded { payment_method, .. } => {
            let processor_ref = payment_method.unwrap_or(command.token);
            let method = save(state, customer, &processor_ref).await?;
            if command.set_default {
                set_default(state, customer, method.id).await?;
            }
            Ok(SetupAnswer::Saved(method))
        }
        ChargeOutcome::Pending {
            intent_id,
            client_secret,
            ..
        } => {
            let setup = PaymentSetup {
                setup_intent_id: intent_id,
                organization_id: customer.organization_id,
                customer_id: customer.id,
                set_default: command.set_default,
                created_at: state.now(),
            };
            let mut batch = Batch::new();
            batch.put(&setup, Expect::Any)?;
            state.store.commit_durable(&batch).await?;
            Ok(SetupAnswer::RequiresAction {
                client_secret: client_secret.unwrap_or_default(),
            })
        }
        ChargeOutcome::Declined { message } => Err(setup_failed(message)),
    }
}

fn setup_failed(message: Option<String>) -> AppError {
    AppError::new(
        Code::PaymentMethodSetupFailed,
        message.unwrap_or_else(|| SETUP_FAILED.into()),
    )
}

/// Finishes a setup [`add`] left to the buyer: only one this customer started (else 422
/// at `setup_intent_id`); 403 `CustomerNotReady` for a customer the processor does not
/// know yet.
pub async fn confirm(
    state: &AppState,
    customer: &Customer,
    command: ConfirmPaymentMethod,
) -> Result<SetupAnswer, AppError> {
    if let ProcessorClient::Stripe { .. } = state.processor.client() {
        let meta = crate::payments::stripe::customer_meta_key(customer.id);
        if state.store.get_meta(&meta).await?.is_none() {
            return Err(AppError::new(
                Code::CustomerNotReady,
                "Customer is not ready for this operation.",
            ));
        }
    }
    let invalid = || {
        AppError::invalid(
            field!["setup_intent_id"],
            INVALID_SETUP,
            command.setup_intent_id.clone(),
        )
    };
    let setup = state
        .store
        .get::<PaymentSetup>(&PaymentSetup::key_of(&command.setup_intent_id))
        .await?
        .filter(|s| s.value.customer_id == customer.id)
        .ok_or_else(invalid)?;
    let outcome = state
        .processor
        .intent(&command.setup_intent_id)
        .await
        .map_err(|e| {
            tracing::warn!(customer = %customer.id, error = %e, "setup intent not read");
            AppError::unavailable()
        })?;
    match outcome {
        ChargeOutcome::Succeeded {
            payment_method: Some(processor_ref),
            ..
        } => {
            let method = save(state, customer, &processor_ref).await?;
            if command.set_default {
                set_default(state, customer, method.id).await?;
            }
            let mut batch = Batch::new();
            batch.delete::<PaymentSetup>(&setup.value.id_key(), Expect::Rev(setup.rev));
            if let Err(e) = state.store.commit_durable(&batch).await {
                // The setup is spent either way: a second confirm saves the same record.
                tracing::info!(error = %e, "payment setup kept");
            }
            Ok(SetupAnswer::Saved(method))
        }
        ChargeOutcome::Succeeded {
            payment_method: None,
            ..
        } => Err(setup_failed(None)),
        ChargeOutcome::Pending { client_secret, .. } => Ok(SetupAnswer::RequiresAction {
            client_secret: client_secret.unwrap_or_default(),
        }),
        ChargeOutcome::Declined { message } => Err(setup_failed(message)),
    }
}

/// The record of a method the processor saved for the customer (described by it), written
/// once: saving it again answers the record as it is.
async fn save(
    state: &AppState,
    customer: &Customer,
    processor_ref: &str,
) -> Result<PaymentMethod, AppError> {
    let id = PaymentMethod::id_for(customer.id, processor_ref);
    if let Some(existing) = state.store.get::<PaymentMethod>(&id.key()).await? {
        return Ok(existing.value);
    }
    let details = state
        .processor
        .describe_method(processor_ref)
        .await
        .map_err(|e| {
            tracing::warn!(customer = %customer.id, error = %e, "payment method not described");
            AppError::unavailable()
        })?;
    let method = PaymentMethod::new(
        customer.organization_id,
        customer.id,
        processor_ref.to_string(),
        details,
        state.now(),
    );
    put_new(state, &method).await?;
    Ok(state
        .store
        .get::<PaymentMethod>(&id.key())
        .await?
        .map_or(method, |m| m.value))
}

/// The record of a method a charge saved for the customer (a new card the buyer paid a
/// renewal with), written once.
pub(crate) async fn record_new(
    state: &AppState,
    customer: &Customer,
    processor_ref: &str,
) -> Result<PaymentMethod, AppError> {
    save(state, customer, processor_ref).await
}

/// Makes `id` (one of the customer's methods) its default if it has none; the
/// subscriptions keep their cards.
pub(crate) async fn default_if_none(
    state: &AppState,
    customer: &Customer,
    id: PaymentMethodId,
) -> Result<(), AppError> {
    let now = state.now();
    state
        .store
        .update::<Customer, AppError>(&customer.id.key(), async |c: &Customer| {
            if c.default_payment_method_id.is_some() {
                return Ok(None);
            }
            Ok(Some(Customer {
                default_payment_method_id: Some(id),
                modified_at: Some(now),
                ..c.clone()
            }))
        })
        .await?;
    Ok(())
}

/// One of the customer's methods, else 404.
async fn own(
    state: &AppState,
    customer: &Customer,
    id: PaymentMethodId,
) -> Result<tollgate_storage::Stored<PaymentMethod>, AppError> {
    state
        .store
        .get::<PaymentMethod>(&id.key())
        .await?
        .filter(|m| m.value.customer_id == customer.id)
        .ok_or_else(AppError::not_found)
}

/// Makes one of the customer's methods its default (404 for anyone else's): the customer's
/// live subscriptions are billed with it from their next charge on (the retry schedule of
/// a past-due one is not moved). The customer after the change.
pub async fn set_default(
    state: &AppState,
    customer: &Customer,
    id: PaymentMethodId,
) -> Result<Customer, AppError> {
    let method = own(state, customer, id).await?.value;
    // The cards the subscriptions are billed with now stay listed once they move.
    materialize(state, customer).await?;
    let now = state.now();
    let changed = state
        .store
        .update::<Customer, AppError>(&customer.id.key(), async |c: &Customer| {
            if c.default_payment_method_id == Some(id) {
                return Ok(None);
            }
            Ok(Some(Customer {
                default_payment_method_id: Some(id),
                modified_at: Some(now),
                ..c.clone()
            }))
        })
        .await?
        .ok_or_else(AppError::not_found)?;
    let subscriptions = crate::app::benefit_grants::subscriptions_of(state, customer).await?;
    let live = subscriptions.iter().filter(|s| is_live(s));
    bill_with(state, live, &method.processor_ref).await?;
    Ok(changed)
}

/// Bills each of `subscriptions` with `processor_ref` from its next charge on (through
/// its actor; one that ended meanwhile is left).
async fn bill_with<'a>(
    state: &AppState,
    subscriptions: impl Iterator<Item = &'a Subscription>,
    processor_ref: &str,
) -> Result<(), AppError> {
    for s in subscriptions {
        if s.payment_token.as_deref() == Some(processor_ref) {
            continue;
        }
        match state
            .subscriptions
            .call(s.id, SetPaymentMethod(processor_ref.to_string()))
            .await
        {
            Ok(_) | Err(ActorError::NotFound) => {}
            Err(e) => return Err(subscription_refusal(e, Context::Cancellation)),
        }
    }
    Ok(())
}

/// Removes one of the customer's methods (404 for anyone else's). The live subscriptions
/// billed with it move to the customer's default method, or else its newest other one;
/// 400 `PaymentMethodInUseByActiveSubscription` when a live paid one would be left with
/// nothing to charge. The processor forgets the method (best effort: a method it no
/// longer holds is forgotten already); a default removed leaves the method the
/// subscriptions moved to (or the newest other) the default, if any.
pub async fn remove(
    state: &AppState,
    customer: &Customer,
    id: PaymentMethodId,
) -> Result<(), AppError> {
    let method = own(state, customer, id).await?;
    let processor_ref = method.value.processor_ref.clone();
    // The cards the subscriptions are billed with are candidates to take over.
    materialize(state, customer).await?;
    let current = state
        .store
        .get::<Customer>(&customer.id.key())
        .await?
        .ok_or_else(AppError::not_found)?
        .value;
    let replacement = replacement(state, &current, id).await?;
    let subscriptions = crate::app::benefit_grants::subscriptions_of(state, customer).await?;
    let billed: Vec<&Subscription> = subscriptions
        .iter()
        .filter(|s| is_live(s) && s.payment_token.as_deref() == Some(processor_ref.as_str()))
        .collect();
    match &replacement {
        Some(other) => bill_with(state, billed.into_iter(), &other.processor_ref).await?,
        None if billed.iter().any(|s| is_live_paid(s)) => {
            return Err(AppError::new(
                Code::PaymentMethodInUseByActiveSubscription,
                IN_USE,
            ));
        }
        None => {}
    }
    if let Err(e) = state.processor.detach_method(&processor_ref).await {
        tracing::warn!(method = %id, error = %e, "payment method not detached");
    }
    let next_default = replacement.map(|m| m.id);
    let now = state.now();
    for _ in 0..tollgate_storage::UPDATE_ATTEMPTS {
        let Some(stored) = state.store.get::<PaymentMethod>(&id.key()).await? else {
            return Ok(());
        };
        let mut batch = Batch::new();
        batch.delete::<PaymentMethod>(&id.key(), Expect::Rev(stored.rev));
        let current = state
            .store
            .get::<Customer>(&customer.id.key())
            .await?
            .ok_or_else(AppError::not_found)?;
        if current.value.default_payment_method_id == Some(id) {
            let changed = Customer {
                default_payment_method_id: next_default,
                modified_at: Some(now),
                ..current.value.clone()
            };
            batch.put(&changed, Expect::Rev(current.rev))?;
        }
        match state.store.commit_durable(&batch).await {
            Ok(_) => return Ok(()),
            // Another writer won: decide again on the records as they are now.
            Err(StorageError::Conflict { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(AppError::conflict("The customer changed meanwhile; retry."))
}

/// The method that takes over from `removed`: the customer's default if it is another
/// one, else its newest other method; `None` when it has no other.
async fn replacement(
    state: &AppState,
    customer: &Customer,
    removed: PaymentMethodId,
) -> Result<Option<PaymentMethod>, AppError> {
    if let Some(default) = customer.default_payment_method_id.filter(|d| *d != removed) {
        if let Some(m) = state.store.get::<PaymentMethod>(&default.key()).await? {
            return Ok(Some(m.value));
        }
    }
    let newest = page_of::<PaymentMethod>(
        state,
        PAYMENT_METHOD_OF_CUSTOMER,
        &[customer.id.key()],
        true,
        ListParams { page: 1, limit: 2 },
        None,
    )
    .await?
    .0;
    Ok(newest.into_iter().find(|m| m.id != removed))
}

#[cfg(test)]
#[path = "payment_methods_tests.rs"]
mod tests;
