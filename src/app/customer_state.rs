//! A customer's state (Polar's `customer_service.get_state`): the customer, its active
//! subscriptions, the benefits it holds now and its meters (`crate::app::usage`).

use crate::api::benefit_grant::CustomerStateBenefitGrant;
use crate::api::customer_state::{CustomerStateMeter, CustomerStateView};
use crate::app::benefit_grants::{files_of_grants, granted_to, parts, subscriptions_of};
use crate::domain::customer::Customer;
use crate::error::AppError;
use crate::state::AppState;

/// The state of a customer the caller already reaches (`customer_for`,
/// `customer_for_external`).
pub async fn state_of(
    state: &AppState,
    customer: &Customer,
) -> Result<CustomerStateView, AppError> {
    state.store.read_barrier().await?;
    state_as_stored(state, customer).await
}

/// The state as the store holds it now, without waiting for the writes so far to be
/// durable: for the webhook fan-out, which acts on durable changes only and renders the
/// state right after them (`customer.state_changed`).
pub async fn state_as_stored(
    state: &AppState,
    customer: &Customer,
) -> Result<CustomerStateView, AppError> {
    let subscriptions = subscriptions_of(state, customer).await?;
    let grants = granted_to(state, customer).await?;
    let (_, benefits) = parts(state, &grants).await?;
    let files = files_of_grants(state, &grants, &benefits).await?;
    let granted = grants
        .iter()
        .filter_map(|g| {
            let b = benefits.get(&g.benefit_id)?;
            Some(
                CustomerStateBenefitGrant::new(g, b)?
                    .with_files(files.get(&g.id).map(Vec::as_slice)),
            )
        })
        .collect();
    let mut meters =
        crate::app::usage::customer_meters::for_customer(state, customer, false).await?;
    meters.sort_by_key(|m| (m.created_at, m.id));
    let active_meters = meters
        .iter()
        .map(|m| CustomerStateMeter {
            id: m.id,
            created_at: m.created_at,
            modified_at: m.modified_at,
            meter_id: m.meter.id.uuid(),
            consumed_units: m.consumed_units,
            credited_units: m.credited_units,
            balance: m.balance,
        })
        .collect();
    // The running usage of the active subscriptions (those the state lists).
    let active: Vec<&tollgate_actors::subscription::Subscription> = subscriptions
        .iter()
        .filter(|s| s.status.is_active())
        .collect();
    let usage = crate::app::usage_billing::running_usage_of(state, customer, &active).await?;
    Ok(CustomerStateView::new(customer, &subscriptions, granted)
        .with_meters(active_meters)
        .with_subscription_meters(usage))
}
