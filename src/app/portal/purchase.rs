//! What a limited customer session reaches: the purchase of the checkout whose confirm
//! minted it ([`crate::domain::customer_session::SessionPurchase`]). A buyer who typed an
//! address that named an existing customer proves nothing by it, so the session the
//! confirm answers reads that checkout's order, subscription, keys and grants, and nothing
//! else of the customer's; the buyer signs in with a mailed code for the rest.

use tollgate_actors::ids::derived_uuid;
use tollgate_actors::license_key::LicenseKey;

use crate::domain::benefit_grant::BenefitGrant;
use crate::domain::customer::Customer;
use crate::domain::ids::{CheckoutId, CustomerId, OrderId, SubscriptionId};
use crate::domain::order::Order;
use crate::error::AppError;

/// The records a checkout's purchase made (their ids derive from the checkout's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurchaseScope {
    pub checkout_id: CheckoutId,
    pub order_id: OrderId,
    pub subscription_id: SubscriptionId,
}

impl PurchaseScope {
    pub fn of(checkout_id: CheckoutId) -> PurchaseScope {
        PurchaseScope {
            checkout_id,
            order_id: order_of_checkout(checkout_id),
            subscription_id: subscription_of_checkout(checkout_id),
        }
    }

    /// The checkout's order, or one of its subscription's.
    pub fn has_order(&self, o: &Order) -> bool {
        o.id == self.order_id || o.subscription_id == Some(self.subscription_id)
    }

    pub fn has_subscription(&self, id: SubscriptionId) -> bool {
        id == self.subscription_id
    }

    /// A key the purchase granted (by its order, or by its subscription).
    pub fn has_key(&self, k: &LicenseKey) -> bool {
        k.order_id == Some(self.order_id) || k.subscription_id == Some(self.subscription_id)
    }

    pub fn has_grant(&self, g: &BenefitGrant) -> bool {
        g.source.order_id() == Some(self.order_id)
            || g.source.subscription_id() == Some(self.subscription_id)
    }
}

/// The customer as a limited session shows it: the address the buyer typed and the
/// record's id, none of what the customer's owner told the shop (name, billing address,
/// tax id) or the seller keeps about them (metadata, external id).
pub fn shown_customer(c: &Customer) -> Customer {
    Customer {
        name: None,
        billing_address: None,
        tax_id: None,
        metadata: Default::default(),
        external_id: None,
        billing_name: None,
        default_payment_method_id: None,
        ..c.clone()
    }
}

/// The order a checkout's purchase creates.
pub fn order_of_checkout(id: CheckoutId) -> OrderId {
    OrderId(derived_uuid(id.0, "order"))
}

/// The customer a checkout's confirm creates for the address `email` (normalized): derived,
/// so that a later attempt of the same checkout (after a declined card) knows the customer
/// as its own.
pub fn customer_of_checkout(id: CheckoutId, email: &str) -> CustomerId {
    CustomerId(derived_uuid(id.0, &format!("customer:{email}")))
}

/// The subscription a checkout's purchase of a recurring price creates.
pub fn subscription_of_checkout(id: CheckoutId) -> SubscriptionId {
    SubscriptionId(derived_uuid(id.0, "subscription"))
}

/// Polar's 403 for what a limited session may not do.
pub fn beyond_purchase() -> AppError {
    AppError::not_permitted(
        "This session was opened by a checkout and reaches only that purchase. \
         Sign in to the customer portal with the code sent to your e-mail address \
         for the rest.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_reaches_its_own_checkouts_records_only() {
        let mine = PurchaseScope::of(CheckoutId::new());
        let other = PurchaseScope::of(CheckoutId::new());
        assert_eq!(mine, PurchaseScope::of(mine.checkout_id));
        assert_ne!(mine.order_id, other.order_id);
        assert!(mine.has_subscription(mine.subscription_id));
        assert!(!mine.has_subscription(other.subscription_id));
        assert_ne!(mine.order_id.0, mine.subscription_id.0);
    }
}
