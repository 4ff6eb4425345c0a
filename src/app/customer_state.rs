//! A customer's state (Polar's `customer_service.get_state`): the customer, its active
//! subscriptions and the benefits it holds now; Tollgate has no meters.

use crate::api::benefit_grant::CustomerStateBenefitGrant;
use crate::api::customer_state::CustomerStateView;
use crate::app::benefit_grants::{granted_to, parts, subscriptions_of};
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
    let subscriptions = subscriptions_of(state, customer).await?;
    let grants = granted_to(state, customer).await?;
    let (_, benefits) = parts(state, &grants).await?;
    let granted = grants
        .iter()
        .filter_map(|g| {
            benefits
                .get(&g.benefit_id)
                .and_then(|b| CustomerStateBenefitGrant::new(g, b))
        })
        .collect();
    Ok(CustomerStateView::new(customer, &subscriptions, granted))
}
