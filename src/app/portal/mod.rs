//! The customer portal's use cases: what a buyer signed in with a customer session reads
//! and does, for the JSON API (`/v1/customer-portal/*`) and the pages (`/portal/{slug}`)
//! alike. Every function takes the signed-in customer and reaches only what is its own:
//! anything else (another customer's, another organization's) is 404, and nothing
//! changes. The lists are the seller's lists narrowed to the customer, so they sort and
//! page the same way.
//!
//! - [`sign_in`]: codes by e-mail, sessions;
//! - [`receipt`]: signed links to an order's printable receipt;
//! - [`purchase`]: what a session limited to one checkout's purchase reaches;
//! - [`plan`]: plan changes by the buyer, and their previews;
//! - [`billing`]: the buyer's billing details;
//! - [`email_change`]: the buyer's new e-mail address, confirmed by a code sent to it.

pub mod billing;
pub mod email_change;
pub mod plan;
pub mod purchase;
pub mod receipt;
pub mod recovery_link;
pub mod sign_in;

use std::collections::HashMap;

use crate::api::customer_portal::{CustomerBenefitGrant, CustomerOrder};
use crate::api::license_key::{LicenseKeyWithActivations, RotatedLicenseKey};
use crate::api::product::{CustomerProduct, ProductPriceRecurring};
use crate::api::subscription::CustomerSubscription;
use crate::app::benefit_grants::{self, GrantFilter};
use crate::app::orders::{self, OrderFilter};
use crate::app::paging::ListParams;
use crate::app::subscription::{
    self as subscriptions, CancelSubscription, SubscriptionChange, SubscriptionFilter,
};
use crate::app::views::{order_view, product_benefits};
use crate::auth::Subject;
use crate::domain::benefit::Benefit;
use crate::domain::benefit_grant::BenefitGrant;
use crate::domain::customer::Customer;
use crate::domain::ids::{ActivationId, LicenseKeyId, OrderId, ProductId, SubscriptionId};
use crate::domain::order::Order;
use crate::domain::organization::Organization;
use crate::domain::product::Product;
use crate::error::{AppError, Code};
use crate::state::AppState;
use tollgate_actors::license_key::LicenseKey;
use tollgate_actors::subscription::Subscription;

/// The seller's view of the customer's organization: what the portal's lists go through,
/// narrowed to the customer by their filters.
fn seller(customer: &Customer) -> Subject {
    Subject::Organization(customer.organization_id)
}

/// The customer's organization.
pub async fn organization(state: &AppState, customer: &Customer) -> Result<Organization, AppError> {
    state
        .store
        .get::<Organization>(&customer.organization_id.key())
        .await?
        .map(|o| o.value)
        .ok_or_else(AppError::not_found)
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
) -> Result<(Vec<Order>, u64), AppError> {
    filter.organization_id = vec![customer.organization_id];
    filter.customer_id = vec![customer.id];
    filter.external_customer_id = Vec::new();
    orders::list(state, seller(customer), &filter, params).await
}

/// One of the customer's orders, else 404.
pub async fn order(state: &AppState, customer: &Customer, id: OrderId) -> Result<Order, AppError> {
    state.store.read_barrier().await?;
    match state.store.get::<Order>(&id.key()).await? {
        Some(o) if o.value.customer_id == customer.id => Ok(o.value),
        _ => Err(AppError::not_found()),
    }
}

/// A product as the customer sees it, with its benefits and organization.
async fn customer_product(
    state: &AppState,
    id: ProductId,
    organization: &Organization,
) -> Result<(Product, CustomerProduct), AppError> {
    let product = state
        .store
        .get::<Product>(&id.key())
        .await?
        .ok_or_else(|| AppError::internal(format!("product {id} is missing")))?
        .value;
    let benefits = product_benefits(state, &product).await?;
    let meters = crate::app::views::product_meters(state, &product).await?;
    let view = CustomerProduct::new(&product, &benefits, organization, &meters);
    Ok((product, view))
}

/// The `CustomerOrder` rendering of an order.
pub async fn order_view_of(
    state: &AppState,
    order: &Order,
    organization: &Organization,
) -> Result<CustomerOrder, AppError> {
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
) -> Result<(Vec<Subscription>, u64), AppError> {
    filter.organization_id = vec![customer.organization_id];
    filter.customer_id = vec![customer.id];
    subscriptions::list(state, seller(customer), &filter, params).await
}

/// One of the customer's subscriptions, else 404.
pub async fn subscription(
    state: &AppState,
    customer: &Customer,
    id: SubscriptionId,
) -> Result<Subscription, AppError> {
    state.store.read_barrier().await?;
    match state.store.get::<Subscription>(&id.key()).await? {
        Some(s) if s.value.customer_id == customer.id && s.value.started_at.is_some() => {
            Ok(s.value)
        }
        _ => Err(AppError::not_found()),
    }
}

/// The `CustomerSubscription` rendering of a subscription.
pub async fn subscription_view_of(
    state: &AppState,
    s: &Subscription,
    organization: &Organization,
) -> Result<CustomerSubscription, AppError> {
    let (product, view) = customer_product(state, s.product_id, organization).await?;
    let meters = crate::app::views::product_meters(state, &product).await?;
    let price = product
        .price(s.price_id)
        .and_then(|p| ProductPriceRecurring::new(&product, p, &meters))
        .ok_or_else(|| {
            AppError::internal(format!(
                "subscription {}: price {} missing",
                s.id, s.price_id
            ))
        })?;
    // Its prices and running usage (`Subscription.meters`, the portal's form).
    let usage = match state.store.get::<Customer>(&s.customer_id.key()).await? {
        Some(c) => {
            crate::app::usage_billing::running_usage(state, s, &c.value, &product, &meters).await?
        }
        None => Vec::new(),
    };
    let prices = crate::app::views::subscription_prices(s, &product, price.clone(), &meters);
    Ok(CustomerSubscription::new(s, view, price).with_usage(prices, &usage))
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
) -> Result<Subscription, AppError> {
    let current = subscription(state, customer, id).await?;
    let Some(cancel) = change.cancel_at_period_end else {
        return Ok(current);
    };
    if cancel {
        if current.cancel_at_period_end || current.ended_at.is_some() || current.ends_at.is_some() {
            return Err(already_canceled());
        }
    } else if current.ended_at.is_some() {
        return Err(AppError::new(Code::ResourceUnavailable, "Unavailable"));
    }
    let command = if cancel {
        SubscriptionChange::Cancel(CancelSubscription {
            at_period_end: true,
            reason: change.reason.map(|r| r.as_str().to_string()),
            comment: change.comment.filter(|c| !c.trim().is_empty()),
        })
    } else {
        SubscriptionChange::Uncancel
    };
    // The buyer's answer to a subscription canceled meanwhile is Polar's portal one.
    match subscriptions::change(
        state,
        seller(customer),
        id,
        command,
        subscriptions::Toggler::Buyer,
    )
    .await
    {
        Err(e) if e.code() == Code::NotPermitted => Err(already_canceled()),
        other => other,
    }
}

fn already_canceled() -> AppError {
    AppError::new(
        Code::AlreadyCanceledSubscription,
        "This subscription is already canceled or will be at the end of the period.",
    )
}

// ---------------------------------------------------------------------------------------
// License keys

/// One of the customer's keys, as stored, else 404.
pub async fn key(
    state: &AppState,
    customer: &Customer,
    id: LicenseKeyId,
) -> Result<LicenseKey, AppError> {
    state.store.read_barrier().await?;
    match state.store.get::<LicenseKey>(&id.key()).await? {
        Some(k) if k.value.customer_id == customer.id => {
            // The actor's copy: with the validation counters it has answered so far.
            crate::app::license_keys::live_key(state, id)
                .await
                .or(Ok(k.value))
        }
        _ => Err(AppError::not_found()),
    }
}

/// Whether the key's benefit lets its customer see and remove its activations (Polar's
/// `activations.enable_customer_admin`).
pub async fn customer_admin(state: &AppState, key: &LicenseKey) -> Result<bool, AppError> {
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
) -> Result<LicenseKeyWithActivations, AppError> {
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
) -> Result<(), AppError> {
    let k = key(state, customer, id).await?;
    if !k.activations.iter().any(|a| a.id == activation) {
        return Err(AppError::not_found());
    }
    if !customer_admin(state, &k).await? {
        return Err(AppError::not_permitted(
            "The seller does not let customers manage this key's activations.",
        ));
    }
    crate::app::license_keys::deactivate(
        state,
        tollgate_actors::license_key::DeactivateKey {
            key: k.key,
            organization_id: k.organization_id,
            activation_id: activation.into(),
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
) -> Result<RotatedLicenseKey, AppError> {
    crate::app::license_keys::customer_rotate(state, customer.id, id).await
}

// ---------------------------------------------------------------------------------------
// Benefit grants

/// How the portal orders grants (Polar's `CustomerBenefitGrantSortProperty`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortalGrantSort {
    GrantedAt,
    /// The benefit's type.
    Type,
    /// The organization's name: one organization per customer, so every grant ties.
    Organization,
    /// The benefit's position among its product's benefits.
    ProductBenefit,
}

impl PortalGrantSort {
    /// Polar's default: `product_benefit,-granted_at`.
    pub const DEFAULT: &'static [(PortalGrantSort, bool)] = &[
        (PortalGrantSort::ProductBenefit, false),
        (PortalGrantSort::GrantedAt, true),
    ];
}

/// Which of the customer's grants a list shows (Polar's portal filters).
#[derive(Debug, Clone, Default)]
pub struct PortalGrantFilter {
    pub benefit_id: Option<crate::domain::ids::BenefitId>,
    pub types: Vec<crate::domain::benefit::BenefitType>,
    pub order_id: Vec<OrderId>,
    pub subscription_id: Vec<SubscriptionId>,
    /// Only this purchase's grants (a limited session).
    pub purchase: Option<purchase::PurchaseScope>,
}

/// One page of the customer's granted (not revoked) grants that `wanted` keeps, in
/// `sorting`'s order (then by id), and their total. A customer holds few grants: they are
/// read whole and sorted here.
pub async fn grants(
    state: &AppState,
    customer: &Customer,
    wanted: &PortalGrantFilter,
    sorting: &[(PortalGrantSort, bool)],
    params: ListParams,
) -> Result<(Vec<BenefitGrant>, u64), AppError> {
    let filter = GrantFilter {
        organization_id: vec![customer.organization_id],
        customer_id: vec![customer.id],
        benefit_id: wanted.benefit_id,
        is_granted: Some(true),
        ..GrantFilter::default()
    };
    let all_params = ListParams {
        page: 1,
        limit: 10_000,
    };
    let (mut all, _) = benefit_grants::list(state, seller(customer), &filter, all_params).await?;
    all.retain(|g| {
        (wanted.order_id.is_empty()
            || g.source
                .order_id()
                .is_some_and(|o| wanted.order_id.contains(&o)))
            && (wanted.subscription_id.is_empty()
                || g.source
                    .subscription_id()
                    .is_some_and(|s| wanted.subscription_id.contains(&s)))
            && wanted.purchase.is_none_or(|p| p.has_grant(g))
    });
    // What the criteria compare, read once per benefit and product.
    let mut kinds: HashMap<crate::domain::ids::BenefitId, u8> = HashMap::new();
    let mut hidden: std::collections::HashSet<crate::domain::ids::BenefitId> = Default::default();
    let mut positions: HashMap<uuid::Uuid, usize> = HashMap::new();
    let mut products: HashMap<ProductId, Option<Product>> = HashMap::new();
    for g in &all {
        if let std::collections::hash_map::Entry::Vacant(e) = kinds.entry(g.benefit_id) {
            let benefit = state.store.get::<Benefit>(&g.benefit_id.key()).await?;
            if benefit.as_ref().is_some_and(|b| !visible(&b.value)) {
                hidden.insert(g.benefit_id);
            }
            e.insert(benefit.map_or(u8::MAX, |b| b.value.kind().code()));
        }
        let product = grant_product(state, g).await?;
        let position = match product {
            Some(id) => {
                if let std::collections::hash_map::Entry::Vacant(e) = products.entry(id) {
                    e.insert(
                        state
                            .store
                            .get::<Product>(&id.key())
                            .await?
                            .map(|p| p.value),
                    );
                }
                products
                    .get(&id)
                    .and_then(|p| p.as_ref())
                    .and_then(|p| p.benefit_ids.iter().position(|b| *b == g.benefit_id))
                    .unwrap_or(usize::MAX)
            }
            None => usize::MAX,
        };
        positions.insert(g.id, position);
    }
    all.retain(|g| !hidden.contains(&g.benefit_id));
    if !wanted.types.is_empty() {
        all.retain(|g| {
            kinds
                .get(&g.benefit_id)
                .is_some_and(|k| wanted.types.iter().any(|t| t.code() == *k))
        });
    }
    let total = all.len() as u64;
    let criteria = if sorting.is_empty() {
        PortalGrantSort::DEFAULT
    } else {
        sorting
    };
    all.sort_by(|a, b| {
        let mut ordering = std::cmp::Ordering::Equal;
        for (field, descending) in criteria {
            let o = match field {
                PortalGrantSort::GrantedAt => a.granted_at.cmp(&b.granted_at),
                PortalGrantSort::Type => kinds.get(&a.benefit_id).cmp(&kinds.get(&b.benefit_id)),
                PortalGrantSort::Organization => std::cmp::Ordering::Equal,
                PortalGrantSort::ProductBenefit => positions.get(&a.id).cmp(&positions.get(&b.id)),
            };
            ordering = ordering.then(if *descending { o.reverse() } else { o });
        }
        ordering.then_with(|| a.id.cmp(&b.id))
    });
    let page = all
        .into_iter()
        .skip(usize::try_from(params.offset()).unwrap_or(usize::MAX))
        .take(usize::try_from(params.limit).unwrap_or(usize::MAX))
        .collect();
    Ok((page, total))
}

/// Whether the customer portal shows the grants of `benefit`: a public one only (Polar's
/// `Benefit.visibility == public`; a draft or private feature flag is not shown).
fn visible(benefit: &Benefit) -> bool {
    benefit.visibility == crate::domain::benefit::Visibility::Public
}

/// The product a grant came from: its order's, or its subscription's.
async fn grant_product(state: &AppState, g: &BenefitGrant) -> Result<Option<ProductId>, AppError> {
    if let Some(order) = g.source.order_id() {
        return Ok(state
            .store
            .get::<Order>(&order.key())
            .await?
            .map(|o| o.value.product_id));
    }
    if let Some(s) = g.source.subscription_id() {
        return Ok(state
            .store
            .get::<Subscription>(&s.key())
            .await?
            .map(|s| s.value.product_id));
    }
    Ok(None)
}

/// The `CustomerBenefitGrant` renderings of grants of the customer.
pub async fn grant_views(
    state: &AppState,
    customer: &Customer,
    grants: &[BenefitGrant],
) -> Result<Vec<CustomerBenefitGrant>, AppError> {
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
            let files = crate::app::benefit_grants::granted_files(state, g, b).await?;
            out.push(
                CustomerBenefitGrant::new(g, customer, b, &organization)
                    .with_files(files.as_deref()),
            );
        }
    }
    Ok(out)
}

/// One of the customer's grants (granted or not), else 404.
pub async fn grant(
    state: &AppState,
    customer: &Customer,
    id: uuid::Uuid,
) -> Result<BenefitGrant, AppError> {
    let filter = GrantFilter {
        organization_id: vec![customer.organization_id],
        customer_id: vec![customer.id],
        ..GrantFilter::default()
    };
    let params = ListParams {
        page: 1,
        limit: 10_000,
    };
    let (all, _) = benefit_grants::list(state, seller(customer), &filter, params).await?;
    let found = all
        .into_iter()
        .find(|g| g.id == id)
        .ok_or_else(AppError::not_found)?;
    match state.store.get::<Benefit>(&found.benefit_id.key()).await? {
        Some(b) if !visible(&b.value) => Err(AppError::not_found()),
        _ => Ok(found),
    }
}
