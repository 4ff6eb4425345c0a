//! A customer's saved payment methods, for the customer portal (Polar's
//! `customers/me/payment-methods`): list, add (the processor saves the card without
//! charging it: a SetupIntent), confirm a setup that needed the buyer (3-D Secure), make
//! one the customer's default, remove one.
//!
//! The methods a customer's paid subscriptions are billed with become records the first time
//! the list is read (`materialize`): buyers who subscribed before saved methods existed
//! see the card they pay with, no migration needed. A method a live paid subscription is
//! billed with is never removed: the subscription would have nothing left to charge.

use tollgate_actors::subscription::Subscription;
use tollgate_storage::{Batch, Expect, Record, StorageError};

use crate::app::listing::page_of;
use crate::app::paging::ListParams;
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

/// Makes one of the customer's methods its default (404 for anyone else's). The customer
/// after the change.
pub async fn set_default(
    state: &AppState,
    customer: &Customer,
    id: PaymentMethodId,
) -> Result<Customer, AppError> {
    own(state, customer, id).await?;
    let now = state.now();
    state
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
        .ok_or_else(AppError::not_found)
}

/// Removes one of the customer's methods (404 for anyone else's): 400
/// `PaymentMethodInUseByActiveSubscription` while a live paid subscription is billed with
/// it. The processor forgets it (best effort: a method it no longer holds is forgotten
/// already); a default removed leaves the newest other method the default, if any.
pub async fn remove(
    state: &AppState,
    customer: &Customer,
    id: PaymentMethodId,
) -> Result<(), AppError> {
    let method = own(state, customer, id).await?;
    let subscriptions = crate::app::benefit_grants::subscriptions_of(state, customer).await?;
    let billed = subscriptions.iter().any(|s| {
        is_live_paid(s) && s.payment_token.as_deref() == Some(method.value.processor_ref.as_str())
    });
    if billed {
        return Err(AppError::new(
            Code::PaymentMethodInUseByActiveSubscription,
            IN_USE,
        ));
    }
    if let Err(e) = state
        .processor
        .detach_method(&method.value.processor_ref)
        .await
    {
        tracing::warn!(method = %id, error = %e, "payment method not detached");
    }
    let others = page_of::<PaymentMethod>(
        state,
        PAYMENT_METHOD_OF_CUSTOMER,
        &[customer.id.key()],
        true,
        ListParams { page: 1, limit: 2 },
        None,
    )
    .await?
    .0;
    let next_default = others.iter().map(|m| m.id).find(|m| *m != id);
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

#[cfg(test)]
#[path = "payment_methods_tests.rs"]
mod tests;
