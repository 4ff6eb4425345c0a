//! Plan changes by the buyer (Polar's portal `PATCH /v1/customer-portal/subscriptions/{id}`
//! with `{product_id}`, and its private `change-preview`): one of the customer's
//! subscriptions moves to another public, non-archived, recurring product of its
//! organization, when the organization lets buyers do so
//! (`customer_portal_settings.subscription.update_plan`; else 403
//! `UpdateSubscriptionPlanNotAllowed`). The change itself is the seller's
//! ([`crate::app::plan_change`]): the same rules, the same 422s at `body.product_id`, the
//! organization's proration behaviour always (a buyer does not choose it).
//!
//! Another customer's subscription is a 404 before anything else is read, and nothing
//! changes.

use tollgate_actors::subscription::Subscription;

use super::{seller, subscription};
use crate::app::catalog::products::{self, ProductFilter};
use crate::app::paging::ListParams;
use crate::app::plan_change::{self, PlanRequest, SubscriptionChargePreview};
use crate::domain::customer::Customer;
use crate::domain::ids::{ProductId, SubscriptionId};
use crate::domain::organization::Organization;
use crate::domain::product::Product;
use crate::error::{AppError, Code};
use crate::state::AppState;

/// Polar's 403 when the organization does not let buyers change plans.
pub fn not_allowed() -> AppError {
    AppError::new(
        Code::UpdateSubscriptionPlanNotAllowed,
        "Updating subscription plan is not allowed.",
    )
}

/// Whether the organization lets its buyers change their plan.
pub fn allowed(organization: &Organization) -> bool {
    organization.customer_portal_settings.update_plan
}

/// The customer's subscription `id` (404 otherwise) and its organization, when the
/// organization lets buyers change plans (403 otherwise).
async fn gate(
    state: &AppState,
    customer: &Customer,
    id: SubscriptionId,
) -> Result<(Subscription, Organization), AppError> {
    let current = subscription(state, customer, id).await?;
    let organization = super::organization(state, customer).await?;
    if !allowed(&organization) {
        return Err(not_allowed());
    }
    Ok((current, organization))
}

/// The request the seller's plan change runs: the product only, the organization's
/// proration behaviour.
fn request(product_id: ProductId) -> PlanRequest {
    PlanRequest {
        product_id: Some(product_id),
        price_id: None,
        behavior: None,
    }
}

/// What moving subscription `id` to `product_id` would cost now (nothing is written).
pub async fn preview(
    state: &AppState,
    customer: &Customer,
    id: SubscriptionId,
    product_id: ProductId,
) -> Result<SubscriptionChargePreview, AppError> {
    gate(state, customer, id).await?;
    plan_change::preview(state, seller(customer), id, &request(product_id)).await
}

/// Moves subscription `id` to `product_id`, as the seller's plan change does: an
/// `invoice` organization charges the difference now (402 `PaymentFailed` when
/// declined: nothing changes), a `prorate` one carries it to the next renewal. The
/// subscription after the change (as it was when the product is its own already).
pub async fn change_plan(
    state: &AppState,
    customer: &Customer,
    id: SubscriptionId,
    product_id: ProductId,
) -> Result<Subscription, AppError> {
    gate(state, customer, id).await?;
    plan_change::change_plan(state, seller(customer), id, &request(product_id)).await
}

/// A product the subscription could move to, with what moving costs now and at renewal.
#[derive(Debug, Clone)]
pub struct PlanOption {
    pub product: Product,
    pub preview: SubscriptionChargePreview,
}

/// The products subscription `id` may move to (its organization's other recurring
/// products that are not archived, newest first), each with its preview; a product the
/// subscription cannot move to (another currency, seats) is left out. 403 when the
/// organization does not let buyers change plans.
pub async fn options(
    state: &AppState,
    customer: &Customer,
    id: SubscriptionId,
) -> Result<(Subscription, Vec<PlanOption>), AppError> {
    let (current, _) = gate(state, customer, id).await?;
    let filter = ProductFilter {
        organization_id: vec![customer.organization_id],
        is_archived: Some(false),
        is_recurring: Some(true),
        ..ProductFilter::default()
    };
    let all = ListParams {
        page: 1,
        limit: 100,
    };
    let (candidates, _) = products::list(state, seller(customer), &filter, all).await?;
    let mut out = Vec::new();
    for product in candidates
        .into_iter()
        .filter(|p| p.id != current.product_id)
    {
        match plan_change::preview(state, seller(customer), id, &request(product.id)).await {
            Ok(preview) => out.push(PlanOption { product, preview }),
            // A product this subscription cannot move to: not offered.
            Err(e) if e.code() == Code::Invalid => {}
            Err(e) => return Err(e),
        }
    }
    Ok((current, out))
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
