//! The buyer's own billing details (Polar's portal `PATCH /v1/customer-portal/customers/me`):
//! the name and address its invoices carry, its tax id, the saved card future charges
//! use first. The rules are the seller's customer update's
//! ([`crate::app::catalog::customers`]): a tax id is checked against the resulting
//! country, and a new address re-checks the tax id held. `customer.updated` follows from
//! the feed.

use crate::api::portal_update::PortalCustomerUpdate;
use crate::app::catalog::customers::tax_id_for;
use crate::domain::customer::Customer;
use crate::domain::ids::PaymentMethodId;
use crate::domain::payment_method::PaymentMethod;
use crate::error::{AppError, Code, Invalid};
use crate::field;
use crate::state::AppState;

/// Polar's 422 for a default payment method that is not the customer's.
fn method_not_found(id: PaymentMethodId) -> AppError {
    Invalid::new(
        field!["default_payment_method_id"],
        "Payment method not found.",
        id.to_string(),
    )
    .kind("invalid")
    .into()
}

/// The customer with the details of `change` (the tax id checked against the resulting
/// country), or the 422 of what breaks a rule. `None` when nothing changes.
fn apply(current: &Customer, change: &PortalCustomerUpdate) -> Result<Option<Customer>, AppError> {
    let mut c = current.clone();
    if let Some(name) = &change.billing_name {
        c.billing_name = Some(name.clone());
    }
    if let Some(address) = &change.billing_address {
        c.billing_address = Some(address.clone());
    }
    match &change.tax_id {
        Some(None) => c.tax_id = None,
        Some(Some(number)) => c.tax_id = Some(tax_id_for(number, c.billing_address.as_ref())?),
        // A new address re-checks the tax id held.
        None if change.billing_address.is_some() => {
            if let Some(held) = &current.tax_id {
                c.tax_id = Some(tax_id_for(&held.value, c.billing_address.as_ref())?);
            }
        }
        None => {}
    }
    Ok((c != *current).then_some(c))
}

/// Changes the signed-in customer's billing details; the customer after the change. A
/// default payment method must be one of the customer's (422 "Payment method not found."
/// otherwise); everything is checked before anything is written.
pub async fn update_me(
    state: &AppState,
    customer: &Customer,
    change: PortalCustomerUpdate,
) -> Result<Customer, AppError> {
    state.store.read_barrier().await?;
    if let Some(id) = change.default_payment_method_id {
        let own = state
            .store
            .get::<PaymentMethod>(&id.key())
            .await?
            .is_some_and(|m| m.value.customer_id == customer.id);
        if !own {
            return Err(method_not_found(id));
        }
    }
    // The details are checked against the customer as it is, then written against the
    // record as it is then (checked again).
    apply(customer, &change)?;
    let now = state.now();
    let mut updated = state
        .store
        .update::<Customer, AppError>(&customer.id.key(), async |current: &Customer| {
            if current.is_deleted() {
                return Err(AppError::not_found());
            }
            Ok(apply(current, &change)?.map(|mut c| {
                c.modified_at = Some(now);
                c
            }))
        })
        .await?
        .ok_or_else(AppError::not_found)?;
    if let Some(id) = change.default_payment_method_id {
        updated = match crate::app::payment_methods::set_default(state, &updated, id).await {
            Ok(c) => c,
            // Removed meanwhile.
            Err(e) if e.code() == Code::NotFound => return Err(method_not_found(id)),
            Err(e) => return Err(e),
        };
    }
    Ok(updated)
}

#[cfg(test)]
#[path = "billing_tests.rs"]
mod tests;
