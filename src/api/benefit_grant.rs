//! Benefit grants in Polar's shapes: the `BenefitGrant` of `GET /v1/benefit-grants/` and
//! `GET /v1/benefits/{id}/grants`, and the `CustomerStateBenefitGrant` of a customer's
//! state. Tollgate derives grants from purchases (`crate::domain::benefit_grant`).

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::benefit::{BenefitType, BenefitView};
use super::customer::CustomerView;
use super::metadata::MetadataMap;
use super::webhook::BenefitGrantProperties;
use crate::domain::benefit::Benefit;
use crate::domain::benefit_grant::BenefitGrant;
use crate::domain::customer::Customer;
use crate::domain::ids::FileId;

/// What a grant gave: for a license-key benefit, the key (`license_key_id`,
/// `display_key`); a downloadables grant's `files` come apart (`with_files`, derived by
/// `crate::app::benefit_grants::granted_files`). Keys without a value are left out, not
/// null: @polar-sh/sdk 0.47 reads them as optional strings.
pub(crate) fn properties(g: &BenefitGrant) -> BenefitGrantProperties {
    BenefitGrantProperties {
        license_key_id: g.license_key.as_ref().map(|k| k.id.uuid()),
        display_key: g.license_key.as_ref().map(|k| k.display_key.clone()),
        files: None,
    }
}

/// A benefit granted to a customer (Polar's `BenefitGrant`): by an order (`order_id`) or a
/// subscription (`subscription_id`); `is_granted` until revoked (a subscription's end).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = BenefitGrant)]
pub struct BenefitGrantRead {
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub id: Uuid,
    pub granted_at: Option<DateTime<Utc>>,
    pub is_granted: bool,
    pub revoked_at: Option<DateTime<Utc>>,
    pub is_revoked: bool,
    pub subscription_id: Option<Uuid>,
    pub order_id: Option<Uuid>,
    pub customer_id: Uuid,
    pub benefit_id: Uuid,
    pub customer: CustomerView,
    pub benefit: BenefitView,
    pub properties: BenefitGrantProperties,
}

impl BenefitGrantRead {
    pub fn new(g: &BenefitGrant, customer: &Customer, benefit: &Benefit) -> Self {
        BenefitGrantRead {
            created_at: g.created_at,
            modified_at: g.modified_at,
            id: g.id,
            granted_at: g.granted_at,
            is_granted: g.is_granted(),
            revoked_at: g.revoked_at,
            is_revoked: g.is_revoked(),
            subscription_id: g.source.subscription_id().map(|s| s.uuid()),
            order_id: g.source.order_id().map(|o| o.uuid()),
            customer_id: g.customer_id.uuid(),
            benefit_id: g.benefit_id.uuid(),
            customer: CustomerView::from(customer),
            benefit: BenefitView::from(benefit),
            properties: properties(g),
        }
    }

    /// With the files a downloadables grant gives now (`properties.files`).
    pub fn with_files(mut self, files: Option<&[FileId]>) -> Self {
        self.properties = self.properties.with_files(files);
        self
    }
}

/// A benefit the customer holds now (Polar's `CustomerStateBenefitGrant`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerStateBenefitGrant {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub granted_at: DateTime<Utc>,
    pub benefit_id: Uuid,
    pub benefit_type: BenefitType,
    /// The benefit's metadata.
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub benefit_metadata: MetadataMap,
    pub properties: BenefitGrantProperties,
}

impl CustomerStateBenefitGrant {
    /// `None` for a grant that is not granted (a state lists granted ones only).
    pub fn new(g: &BenefitGrant, benefit: &Benefit) -> Option<Self> {
        Some(CustomerStateBenefitGrant {
            id: g.id,
            created_at: g.created_at,
            modified_at: g.modified_at,
            granted_at: g.granted_at?,
            benefit_id: g.benefit_id.uuid(),
            benefit_type: benefit.kind().into(),
            benefit_metadata: crate::api::metadata::metadata_map(&benefit.metadata),
            properties: properties(g),
        })
    }

    /// With the files a downloadables grant gives now (`properties.files`).
    pub fn with_files(mut self, files: Option<&[FileId]>) -> Self {
        self.properties = self.properties.with_files(files);
        self
    }
}

#[cfg(test)]
pub(crate) fn sample_grants() -> (Customer, Benefit, Vec<BenefitGrant>) {
    use chrono::TimeZone;

    use crate::domain::benefit::{BenefitProperties, LicenseKeyProperties};
    use crate::domain::benefit_grant::{GrantSource, GrantedKey};
    use crate::domain::ids::{
        BenefitId, CustomerId, LicenseKeyId, OrderId, OrganizationId, SubscriptionId,
    };

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let org = OrganizationId(Uuid::from_u128(0x0a));
    let customer = Customer::new(
        CustomerId(Uuid::from_u128(0xc0)),
        org,
        "jane@example.com".into(),
        now,
    );
    let benefit = Benefit {
        id: BenefitId(Uuid::from_u128(0xbe)),
        organization_id: org,
        created_at: now,
        modified_at: None,
        description: "License".into(),
        selectable: true,
        deletable: true,
        properties: BenefitProperties::LicenseKeys(LicenseKeyProperties::default()),
        deleted_at: None,
        metadata: crate::domain::metadata::Metadata::default(),
        visibility: Default::default(),
    };
    let mut granted = BenefitGrant::new(
        org,
        customer.id,
        benefit.id,
        GrantSource::Order(OrderId(Uuid::from_u128(0x0d))),
        now,
        None,
    );
    granted.license_key = Some(GrantedKey {
        id: LicenseKeyId(Uuid::from_u128(0x1c)),
        display_key: "****-ABCDEF".into(),
    });
    let revoked = BenefitGrant::new(
        org,
        customer.id,
        benefit.id,
        GrantSource::Subscription(SubscriptionId(Uuid::from_u128(0x5b))),
        now,
        Some(now),
    );
    (customer, benefit, vec![granted, revoked])
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    let (customer, benefit, grants) = sample_grants();
    let mut out = Vec::new();
    for g in &grants {
        out.push((
            "BenefitGrant",
            serde_json::to_value(BenefitGrantRead::new(g, &customer, &benefit)).unwrap_or_default(),
        ));
        if let Some(s) = CustomerStateBenefitGrant::new(g, &benefit) {
            out.push((
                "CustomerStateBenefitGrant",
                serde_json::to_value(s).unwrap_or_default(),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn license_key_properties_name_the_key_or_nothing() {
        let samples = samples();
        let granted = &samples[0].1;
        assert_eq!(granted["is_granted"], true);
        assert_eq!(granted["order_id"], Uuid::from_u128(0x0d).to_string());
        assert_eq!(granted["subscription_id"], serde_json::Value::Null);
        assert_eq!(
            granted["properties"],
            json!({"license_key_id": Uuid::from_u128(0x1c).to_string(), "display_key": "****-ABCDEF"})
        );
        let state = &samples[1].1;
        assert_eq!(state["benefit_type"], "license_keys");
        assert_eq!(state["benefit_metadata"], json!({}));
        let revoked = &samples[2].1;
        assert_eq!(revoked["is_revoked"], true);
        assert_eq!(revoked["granted_at"], serde_json::Value::Null);
        // 0.47 reads these as optional strings: absent, never null.
        assert_eq!(revoked["properties"], json!({}));
        assert_eq!(samples.len(), 3, "a revoked grant is not in a state");
    }

    #[test]
    fn downloadables_properties_name_the_files_or_nothing() {
        use crate::domain::ids::FileId;
        let (customer, benefit, grants) = sample_grants();
        let files = [FileId(Uuid::from_u128(0xf1)), FileId(Uuid::from_u128(0xf2))];
        let mut g = grants[0].clone();
        g.license_key = None;
        let read = serde_json::to_value(
            BenefitGrantRead::new(&g, &customer, &benefit).with_files(Some(&files)),
        )
        .unwrap();
        let ids = json!([
            Uuid::from_u128(0xf1).to_string(),
            Uuid::from_u128(0xf2).to_string()
        ]);
        assert_eq!(read["properties"], json!({ "files": ids }));
        let state = CustomerStateBenefitGrant::new(&g, &benefit)
            .unwrap()
            .with_files(Some(&[]));
        assert_eq!(
            serde_json::to_value(state).unwrap()["properties"],
            json!({"files": []})
        );
        let none =
            serde_json::to_value(BenefitGrantRead::new(&g, &customer, &benefit).with_files(None))
                .unwrap();
        assert_eq!(none["properties"], json!({}));
    }
}
