//! The commands a subscription is started and changed by, as the application takes them:
//! the `PATCH` body, the dashboard, the customer portal and refunds all come down to one of
//! these; `NewSubscription` is a seller's free subscription (`POST /v1/subscriptions/`).

use super::ids::{CustomerId, PriceId, ProductId};
use super::metadata::Metadata;
use super::organization::ProrationBehavior;

/// Who a seller's subscription is for: a customer of the product's organization, by its id
/// or by the seller's external id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subscriber {
    Id(CustomerId),
    External(String),
}

/// A free subscription the seller starts for an existing customer, without a checkout.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSubscription {
    pub product_id: ProductId,
    pub customer: Subscriber,
    pub metadata: Metadata,
}

/// A cancellation of a subscription: at the end of its period (it stays active until then,
/// and can be uncancelled), or now (`at_period_end: false`: revoked at once, its license
/// keys revoked too), with the customer's reason if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CancelSubscription {
    pub at_period_end: bool,
    /// Polar's `customer_cancellation_reason` (`too_expensive`, …).
    pub reason: Option<String>,
    pub comment: Option<String>,
}

impl CancelSubscription {
    /// Cancel at the end of the current period.
    pub fn at_period_end() -> Self {
        CancelSubscription {
            at_period_end: true,
            ..Self::default()
        }
    }

    /// Revoke now.
    pub fn now() -> Self {
        CancelSubscription::default()
    }
}

/// What a plan change asks for: a product (Polar 2025-02 on) or a price (the 0.13.5-era
/// `product_price_id`), and how to prorate (the organization's default when `None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanRequest {
    pub product_id: Option<ProductId>,
    pub price_id: Option<PriceId>,
    pub behavior: Option<ProrationBehavior>,
}

impl PlanRequest {
    pub fn is_change(&self) -> bool {
        self.product_id.is_some() || self.price_id.is_some()
    }
}

/// What a seller or a buyer asks of a subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubscriptionChange {
    /// Nothing to change: the subscription is answered as it is (Polar).
    Nothing,
    Cancel(CancelSubscription),
    /// Undo a cancellation at the period end.
    Uncancel,
    /// Another product or price.
    Plan(PlanRequest),
}
