//! Benefit grants, as Tollgate derives them: a purchase (a one-time order, or a
//! subscription) grants its customer each benefit of the product bought, and a
//! license-key benefit's grant is the key that purchase created. Nothing is stored for a
//! grant: the order, the subscription and the license keys are the source of truth, and
//! the `benefit_grant.*` webhooks and the grant lists derive the same grants from them
//! (same ids, same times).

use chrono::{DateTime, Utc};

use super::ids::{BenefitId, CustomerId, LicenseKeyId, OrderId, OrganizationId, SubscriptionId};
use crate::ids::derived_uuid;

/// What granted a benefit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantSource {
    /// A one-time purchase (an order without a subscription).
    Order(OrderId),
    /// A subscription, for as long as it has not ended.
    Subscription(SubscriptionId),
}

impl GrantSource {
    fn parent(self) -> uuid::Uuid {
        match self {
            GrantSource::Order(id) => id.uuid(),
            GrantSource::Subscription(id) => id.uuid(),
        }
    }

    pub fn order_id(self) -> Option<OrderId> {
        match self {
            GrantSource::Order(id) => Some(id),
            GrantSource::Subscription(_) => None,
        }
    }

    pub fn subscription_id(self) -> Option<SubscriptionId> {
        match self {
            GrantSource::Subscription(id) => Some(id),
            GrantSource::Order(_) => None,
        }
    }
}

/// The key a license-key grant gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantedKey {
    pub id: LicenseKeyId,
    pub display_key: String,
}

/// One benefit granted to one customer by one purchase.
#[derive(Debug, Clone, PartialEq)]
pub struct BenefitGrant {
    /// Stable for the (purchase, benefit) pair: [`grant_id`].
    pub id: uuid::Uuid,
    pub organization_id: OrganizationId,
    pub customer_id: CustomerId,
    pub benefit_id: BenefitId,
    pub source: GrantSource,
    /// When the purchase was made.
    pub created_at: DateTime<Utc>,
    /// When the grant last changed (its revocation), if ever.
    pub modified_at: Option<DateTime<Utc>>,
    /// Set while granted (Polar clears it on revocation).
    pub granted_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub license_key: Option<GrantedKey>,
}

/// The id of the grant of `benefit` by the purchase whose id is `parent` (an order's or a
/// subscription's): the one the `benefit_grant.*` webhooks carry too.
pub fn grant_id(parent: uuid::Uuid, benefit: BenefitId) -> uuid::Uuid {
    derived_uuid(parent, &format!("benefit_grant:{benefit}"))
}

impl BenefitGrant {
    /// The grant of `benefit` by `source`, made at `created_at`, revoked at `revoked_at`
    /// (a subscription's end) if ever.
    pub fn new(
        organization_id: OrganizationId,
        customer_id: CustomerId,
        benefit_id: BenefitId,
        source: GrantSource,
        created_at: DateTime<Utc>,
        revoked_at: Option<DateTime<Utc>>,
    ) -> BenefitGrant {
        BenefitGrant {
            id: grant_id(source.parent(), benefit_id),
            organization_id,
            customer_id,
            benefit_id,
            source,
            created_at,
            modified_at: revoked_at,
            granted_at: revoked_at.is_none().then_some(created_at),
            revoked_at,
            license_key: None,
        }
    }

    pub fn is_granted(&self) -> bool {
        self.granted_at.is_some()
    }

    pub fn is_revoked(&self) -> bool {
        self.revoked_at.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(secs, 0).single().unwrap_or_default()
    }

    #[test]
    fn a_grant_is_granted_until_revoked() {
        let (org, customer, benefit) = (OrganizationId::new(), CustomerId::new(), BenefitId::new());
        let order = OrderId::new();
        let g = BenefitGrant::new(
            org,
            customer,
            benefit,
            GrantSource::Order(order),
            at(10),
            None,
        );
        assert!(g.is_granted() && !g.is_revoked());
        assert_eq!((g.granted_at, g.modified_at), (Some(at(10)), None));
        assert_eq!(g.source.order_id(), Some(order));
        assert_eq!(g.source.subscription_id(), None);

        let sub = SubscriptionId::new();
        let g = BenefitGrant::new(
            org,
            customer,
            benefit,
            GrantSource::Subscription(sub),
            at(10),
            Some(at(99)),
        );
        assert!(!g.is_granted() && g.is_revoked());
        assert_eq!(g.granted_at, None, "Polar clears granted_at on revocation");
        assert_eq!((g.revoked_at, g.modified_at), (Some(at(99)), Some(at(99))));
        assert_eq!(g.source.subscription_id(), Some(sub));
    }

    #[test]
    fn ids_are_stable_per_purchase_and_benefit() {
        let (order, benefit) = (OrderId::new(), BenefitId::new());
        let a = grant_id(order.uuid(), benefit);
        assert_eq!(a, grant_id(order.uuid(), benefit));
        assert_ne!(a, grant_id(order.uuid(), BenefitId::new()));
        assert_ne!(a, grant_id(OrderId::new().uuid(), benefit));
        // The formula the webhooks have always used.
        assert_eq!(
            a,
            derived_uuid(order.uuid(), &format!("benefit_grant:{benefit}"))
        );
    }
}
