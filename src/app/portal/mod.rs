//! The customer portal's use cases: what a buyer signed in with a customer session reads
//! and does, for the JSON API (`/v1/customer-portal/*`) and the pages (`/portal/{slug}`)
//! alike. Every function takes the signed-in customer and reaches only what is its own:
//! anything else (another customer's, another organization's) is 404, and nothing
//! changes. The lists are the seller's lists narrowed to the customer, so they sort and
//! page the same way.
//!
//! - [`sign_in`]: codes by e-mail, sessions;
//! - [`receipt`]: signed links to an order's printable receipt.

pub mod receipt;
pub mod sign_in;

use std::collections::HashMap;

use crate::api::customer_portal::{CustomerBenefitGrant, CustomerOrder};
use crate::api::license_key::{LicenseKeyDeactivate, LicenseKeyWithActivations, RotatedLicenseKey};
use crate::api::product::{CustomerProduct, ProductPriceRecurring};
use crate::api::subscription::{CustomerSubscription, SubscriptionUpdate};
use crate::app::benefit_grants::{self, GrantFilter};
use crate::app::orders::{self, OrderFilter};
use crate::app::paging::ListParams;
use crate::app::subscription::{self as subscriptions, SubscriptionFilter};
use crate::app::views::{order_view, product_benefits};
use crate::auth::Subject;
use crate::domain::benefit::Benefit;
use crate::domain::benefit_grant::BenefitGrant;
use crate::domain::customer::Customer;
use crate::domain::ids::{ActivationId, LicenseKeyId, OrderId, ProductId, SubscriptionId};
use crate::domain::order::Order;
use crate::domain::organization::Organization;
use crate::domain::product::Product;
use crate::error::ApiError;
use crate::state::AppState;
use tollgate_actors::license_key::LicenseKey;
use tollgate_actors::subscription::Subscription;

/// The seller's view of the customer's organization: what the portal's lists go through,
/// narrowed to the customer by their filters.
fn seller(customer: &Customer) -> Subject {
    Subject::Organization(customer.organization_id)
}

/// The customer's organization.
pub async fn organization(state: &AppState, customer: &Customer) -> Result<Organization, ApiError> {
    state
        .store
        .get::<Organization>(&customer.organization_id.key())
        .await?
        .map(|o| o.value)
        .ok_or_else(ApiError::not_found)
}

// ---------------------------------------------------------------------------------------
// Orders

/// One page of the customer's orders (`filter`'s customer and organization are the
/// customer's, whatever was asked), and their total.
pub async fn orders(
    state: &AppState,
    customer: &Customer,
    mut filter: OrderFilter,
    params: ListParams,
) -> Result<(Vec<Order>, u64), ApiError> {
    filter.organization_id = vec![customer.organization_id];
    filter.customer_id = vec![customer.id];
    filter.external_customer_id = Vec::new();
    orders::list(state, seller(customer), &filter, params).await
}

/// One of the customer's orders, else 404.
pub async fn order(state: &AppState, customer: &Customer, id: OrderId) -> Result<Order, ApiError> {
    state.store.read_barrier().await?;
    match state.store.get::<Order>(&id.key()).await? {
        Some(o) if o.value.customer_id == customer.id => Ok(o.value),
        _ => Err(ApiError::not_found()),
    }
}

/// A product as the customer sees it, with its benefits and organization.
async fn customer_product(
    state: &AppState,
    id: ProductId,
    organization: &Organization,
) -> Result<(Product, CustomerProduct), ApiError> {
    let product = state
        .store
        .get::<Product>(&id.key())
        .await?
        .ok_or_else(|| ApiError::internal(format!("product {id} is missing")))?
        .value;
    let benefits = product_benefits(state, &product).await?;
    let view = CustomerProduct::new(&product, &benefits, organization);
    Ok((product, view))
}

/// The `CustomerOrder` rendering of an order.
pub async fn order_view_of(
    state: &AppState,
    order: &Order,
    organization: &Organization,
) -> Result<CustomerOrder, ApiError> {
    let seller_view = order_view(state, order).await?;
    let (_, product) = customer_product(state, order.product_id, organization).await?;
    Ok(CustomerOrder::new(seller_view, product))
}

// ---------------------------------------------------------------------------------------
// Subscriptions

/// One page of the customer's (started) subscriptions, and their total.
pub async fn subscriptions(
    state: &AppState,
    customer: &Customer,
    mut filter: SubscriptionFilter,
    params: ListParams,
) -> Result<(Vec<Subscription>, u64), ApiError> {
    filter.organization_id = vec![customer.organization_id];
    filter.customer_id = vec![customer.id];
    subscriptions::list(state, seller(customer), &filter, params).await
}

/// One of the customer's subscriptions, else 404.
pub async fn subscription(
    state: &AppState,
    customer: &Customer,
    id: SubscriptionId,
) -> Result<Subscription, ApiError> {
    state.store.read_barrier().await?;
    match state.store.get::<Subscription>(&id.key()).await? {
        Some(s) if s.value.customer_id == customer.id && s.value.started_at.is_some() => {
            Ok(s.value)
        }
        _ => Err(ApiError::not_found()),
    }
}

/// The `CustomerSubscription` rendering of a subscription.
pub async fn subscription_view_of(
    state: &AppState,
    s: &Subscription,
    organization: &Organization,
) -> Result<CustomerSubscription, ApiError> {
    let (product, view) = customer_product(state, s.product_id, organization).await?;
    let price = product
        .price(s.price_id)
        .and_then(|p| ProductPriceRecurring::new(product.id, p))
        .ok_or_else(|| {
            ApiError::internal(format!(
                "subscription {}: price {} missing",
                s.id, s.price_id
            ))
        })?;
    Ok(CustomerSubscription::new(s, view, price))
}

/// What the customer asks of a subscription: cancel it at the period's end, or take the
/// cancellation back.
#[derive(Debug, Clone, Default)]
pub struct CancelChange {
    /// `Some(true)`: cancel at the period's end; `Some(false)`: uncancel; `None`: nothing.
    pub cancel_at_period_end: Option<bool>,
    pub reason: Option<crate::api::subscription::CustomerCancellationReason>,
    pub comment: Option<String>,
}

/// Cancels one of the customer's subscriptions at the period's end, or takes the
/// cancellation back (Polar's `customer_portal` subscription update): 403
/// `AlreadyCanceledSubscription` for one canceled already, 410 for one that ended, 400
/// for an uncancel of one that is not canceling; nothing asked answers it as it is.
/// The change is the subscription actor's, and its webhooks (`subscription.updated`,
/// `subscription.canceled` / `subscription.uncanceled`) and e-mail follow from the feed.
pub async fn update_subscription(
    state: &AppState,
    customer: &Customer,
    id: SubscriptionId,
    change: CancelChange,
) -> Result<Subscription, ApiError> {
    let current = subscription(state, customer, id).await?;
    let Some(cancel) = change.cancel_at_period_end else {
        return Ok(current);
    };
    if cancel {
        if current.cancel_at_period_end || current.ended_at.is_some() || current.ends_at.is_some() {
            return Err(already_canceled());
        }
    } else if current.ended_at.is_some() {
        return Err(ApiError::Named {
            status: 410,
            error: "ResourceUnavailable",
            detail: "Unavailable".into(),
        });
    }
    let input = SubscriptionUpdate {
        cancel_at_period_end: Some(cancel),
        customer_cancellation_reason: if cancel { change.reason } else { None },
        customer_cancellation_comment: if cancel {
            change.comment.filter(|c| !c.trim().is_empty())
        } else {
            None
        },
        ..SubscriptionUpdate::default()
    };
    match subscriptions::update(state, seller(customer), id, input).await {
        Err(ApiError::NotPermitted(_)) => Err(already_canceled()),
        other => other,
    }
}

fn already_canceled() -> ApiError {
    ApiError::Named {
        status: 403,
        error: "AlreadyCanceledSubscription",
        detail: "This subscription is already canceled or will be at the end of the period.".into(),
    }
}

// ---------------------------------------------------------------------------------------
// License keys

/// One of the customer's keys, as stored, else 404.
pub async fn key(
    state: &AppState,
    customer: &Customer,
    id: LicenseKeyId,
) -> Result<LicenseKey, ApiError> {
    state.store.read_barrier().await?;
    match state.store.get::<LicenseKey>(&id.key()).await? {
        Some(k) if k.value.customer_id == customer.id => {
            // The actor's copy: with the validation counters it has answered so far.
            crate::app::license_keys::live_key(state, id)
                .await
                .or(Ok(k.value))
        }
        _ => Err(ApiError::not_found()),
    }
}

/// Whether the key's benefit lets its customer see and remove its activations (Polar's
/// `activations.enable_customer_admin`).
pub async fn customer_admin(state: &AppState, key: &LicenseKey) -> Result<bool, ApiError> {
    use crate::domain::benefit::BenefitProperties;
    Ok(state
        .store
        .get::<Benefit>(&key.benefit_id.key())
        .await?
        .is_some_and(|b| match &b.value.properties {
            BenefitProperties::LicenseKeys(p) => {
                p.activations.is_some_and(|a| a.enable_customer_admin)
            }
            _ => false,
        }))
}

/// One of the customer's keys with its activations (when its benefit lets the customer
/// manage them), else 404.
pub async fn key_view(
    state: &AppState,
    customer: &Customer,
    id: LicenseKeyId,
) -> Result<LicenseKeyWithActivations, ApiError> {
    let k = key(state, customer, id).await?;
    crate::app::license_keys::customer_key(state, customer.id, k).await
}

/// Removes an activation of one of the customer's keys, freeing its slot (the public
/// `deactivate`, for a customer who no longer has the key at hand): 404 for another
/// customer's key or activation, 403 when the key's benefit does not let customers manage
/// activations. `license_key.deactivated` follows from the feed.
pub async fn deactivate(
    state: &AppState,
    customer: &Customer,
    id: LicenseKeyId,
    activation: ActivationId,
) -> Result<(), ApiError> {
    let k = key(state, customer, id).await?;
    if !k.activations.iter().any(|a| a.id == activation) {
        return Err(ApiError::not_found());
    }
    if !customer_admin(state, &k).await? {
        return Err(ApiError::NotPermitted(
            "The seller does not let customers manage this key's activations.".into(),
        ));
    }
    crate::app::license_keys::deactivate(
        state,
        LicenseKeyDeactivate {
            key: k.key,
            organization_id: k.organization_id.uuid(),
            activation_id: activation.uuid(),
        },
    )
    .await
}

/// Gives one of the customer's keys a new value; the old one is refused from the answer
/// on (`license_key.updated` follows from the feed).
pub async fn rotate(
    state: &AppState,
    customer: &Customer,
    id: LicenseKeyId,
) -> Result<RotatedLicenseKey, ApiError> {
    crate::app::license_keys::customer_rotate(state, customer.id, id).await
}

// ---------------------------------------------------------------------------------------
// Benefit grants

/// One page of the customer's grants, and their total.
pub async fn grants(
    state: &AppState,
    customer: &Customer,
    mut filter: GrantFilter,
    params: ListParams,
) -> Result<(Vec<BenefitGrant>, u64), ApiError> {
    filter.organization_id = vec![customer.organization_id];
    filter.customer_id = vec![customer.id];
    filter.external_customer_id = Vec::new();
    benefit_grants::list(state, seller(customer), &filter, params).await
}

/// The `CustomerBenefitGrant` renderings of grants of the customer.
pub async fn grant_views(
    state: &AppState,
    customer: &Customer,
    grants: &[BenefitGrant],
) -> Result<Vec<CustomerBenefitGrant>, ApiError> {
    let organization = organization(state, customer).await?;
    let mut benefits: HashMap<_, Benefit> = HashMap::new();
    let mut out = Vec::with_capacity(grants.len());
    for g in grants {
        if let std::collections::hash_map::Entry::Vacant(e) = benefits.entry(g.benefit_id) {
            if let Some(b) = state.store.get::<Benefit>(&g.benefit_id.key()).await? {
                e.insert(b.value);
            }
        }
        if let Some(b) = benefits.get(&g.benefit_id) {
            out.push(CustomerBenefitGrant::new(g, customer, b, &organization));
        }
    }
    Ok(out)
}

/// One of the customer's grants, else 404.
pub async fn grant(
    state: &AppState,
    customer: &Customer,
    id: uuid::Uuid,
) -> Result<BenefitGrant, ApiError> {
    // A customer holds few grants: the one asked for is among them.
    let filter = GrantFilter::default();
    let params = ListParams {
        page: 1,
        limit: 10_000,
    };
    let (all, _) = grants(state, customer, filter, params).await?;
    all.into_iter()
        .find(|g| g.id == id)
        .ok_or_else(ApiError::not_found)
}
