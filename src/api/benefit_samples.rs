//! The sample benefits of the API document and the renderings' unit tests.

use chrono::Utc;
use uuid::Uuid;

use super::*;

pub(crate) fn sample_benefits() -> Vec<Benefit> {
    use chrono::TimeZone;

    use crate::domain::ids::{BenefitId, OrganizationId};

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let benefit = |n: u128, description: &str, properties| Benefit {
        id: BenefitId(Uuid::from_u128(0xbe00 + n)),
        organization_id: OrganizationId(Uuid::from_u128(0x0a)),
        created_at: now,
        modified_at: None,
        description: description.into(),
        selectable: true,
        deletable: true,
        properties,
        deleted_at: None,
        metadata: crate::domain::metadata::Metadata::default(),
        visibility: domain::Visibility::Public,
    };
    vec![
        benefit(
            1,
            "License key",
            BenefitProperties::LicenseKeys(LicenseKeyProperties {
                prefix: Some("ACME".into()),
                expires: Some(KeyExpiry {
                    ttl: 1,
                    timeframe: domain::Timeframe::Year,
                }),
                activations: Some(KeyActivations {
                    limit: 3,
                    enable_customer_admin: true,
                    allow_replacement: false,
                }),
                limit_usage: None,
                allow_customer_rotation: true,
                grace_days: domain::DEFAULT_GRACE_DAYS,
                quantity: domain::KeyQuantity::OneKey,
            }),
        ),
        benefit(
            2,
            "Thank-you note",
            BenefitProperties::Custom {
                note: Some("Thanks!".into()),
            },
        ),
        benefit(
            3,
            "Sponsor ads",
            BenefitProperties::Ads {
                image_height: 400,
                image_width: 400,
            },
        ),
        Benefit {
            visibility: domain::Visibility::Private,
            ..benefit(4, "Beta features", BenefitProperties::FeatureFlag)
        },
    ]
}

/// A downloadables benefit (two files, the second archived), for the document's tests.
pub(crate) fn sample_downloadables() -> Benefit {
    let mut b = sample_benefits().remove(0);
    b.id = crate::domain::ids::BenefitId(Uuid::from_u128(0xbe05));
    b.description = "Downloads".into();
    b.properties = BenefitProperties::Downloadables(domain::DownloadablesProperties {
        files: vec![
            crate::domain::ids::FileId(Uuid::from_u128(0xf1)),
            crate::domain::ids::FileId(Uuid::from_u128(0xf2)),
        ],
        archived: vec![(
            crate::domain::ids::FileId(Uuid::from_u128(0xf2)),
            b.created_at,
        )],
    });
    b
}

/// A `meter_credit` benefit: 100 units of the sample meter a period, rolled over.
pub(crate) fn sample_meter_credit() -> Benefit {
    let mut b = sample_benefits().remove(1);
    b.id = crate::domain::ids::BenefitId(Uuid::from_u128(0xbe06));
    b.description = "100 API calls / month".into();
    b.properties = BenefitProperties::MeterCredit(domain::MeterCreditProperties {
        meter_id: crate::api::price::sample_meters()[0].id,
        units: 100,
        rollover: true,
    });
    b
}

pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    let mut out = Vec::new();
    let mut all = sample_benefits();
    all.push(sample_downloadables());
    all.push(sample_meter_credit());
    for b in all {
        out.push((
            "Benefit",
            serde_json::to_value(BenefitView::from(&b)).unwrap_or_default(),
        ));
        out.push((
            "BenefitBase",
            serde_json::to_value(BenefitBase::from(&b)).unwrap_or_default(),
        ));
    }
    out
}

mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn benefit_variants_have_polars_keys() {
        let mut all = sample_benefits();
        all.push(sample_downloadables());
        let views: Vec<serde_json::Value> = all
            .iter()
            .map(|b| serde_json::to_value(BenefitView::from(b)).unwrap())
            .collect();
        assert_eq!(views[0]["type"], "license_keys");
        assert_eq!(
            views[0]["properties"],
            json!({"prefix": "ACME", "expires": {"ttl": 1, "timeframe": "year"},
                   "activations": {"limit": 3, "enable_customer_admin": true,
                                   "allow_replacement": false},
                   "limit_usage": null, "allow_customer_rotation": true, "grace_days": 3,
                   "quantity": "one_key"})
        );
        assert!(views[0].get("is_tax_applicable").is_none());
        assert_eq!(views[1]["type"], "custom");
        assert_eq!(views[1]["properties"], json!({"note": "Thanks!"}));
        assert_eq!(views[1]["is_tax_applicable"], false);
        assert_eq!(views[2]["type"], "ads");
        assert!(views[2].get("is_tax_applicable").is_none());
        assert_eq!(views[2]["modified_at"], serde_json::Value::Null);
        assert_eq!(views[2]["visibility"], "public");
        assert_eq!(views[2]["visibility_configurable"], false);
        assert_eq!(views[3]["type"], "feature_flag");
        assert_eq!(views[3]["properties"], json!({}));
        assert_eq!(views[3]["visibility"], "private");
        assert_eq!(views[3]["visibility_configurable"], true);
        assert_eq!(views[4]["type"], "downloadables");
        assert_eq!(
            views[4]["properties"],
            json!({"archived": {"00000000-0000-0000-0000-0000000000f2": true},
                   "files": ["00000000-0000-0000-0000-0000000000f1",
                             "00000000-0000-0000-0000-0000000000f2"]})
        );
    }

    #[test]
    fn a_meter_credit_renders_and_reads_polars_properties() {
        let b = sample_meter_credit();
        let view = serde_json::to_value(BenefitView::from(&b)).unwrap();
        assert_eq!(view["type"], "meter_credit");
        assert_eq!(
            view["properties"],
            json!({"units": 100, "rollover": true,
                   "meter_id": "4e7e0000-0000-4000-8000-000000000001"})
        );
        assert_eq!(view["visibility_configurable"], false);
        let public: crate::api::benefit_meter_credit::BenefitMeterCreditPublicProperties =
            match &b.properties {
                BenefitProperties::MeterCredit(m) => m.into(),
                _ => unreachable!(),
            };
        assert_eq!(
            serde_json::to_value(public).unwrap(),
            json!({"units": 100, "meter_id": "4e7e0000-0000-4000-8000-000000000001"})
        );
        let body: BenefitCreate = serde_json::from_value(json!({
            "type": "meter_credit", "description": "Credits",
            "properties": {"units": 0, "rollover": false,
                           "meter_id": "4e7e0000-0000-4000-8000-000000000001"}}))
        .unwrap();
        let Err(crate::error::ApiError::Validation(items)) = body.into_command() else {
            panic!("0 units accepted");
        };
        assert_eq!(items[0].kind, "greater_than");
        assert_eq!(items[0].loc, crate::loc!["body", "properties", "units"]);
        let body: BenefitUpdate = serde_json::from_value(json!({
            "type": "meter_credit",
            "properties": {"units": 2_147_483_648_i64, "rollover": true,
                           "meter_id": "4e7e0000-0000-4000-8000-000000000001"}}))
        .unwrap();
        let Err(crate::error::ApiError::Validation(items)) = body.into_command() else {
            panic!("too many units accepted");
        };
        assert_eq!(items[0].kind, "less_than_equal");
        let body: BenefitCreate = serde_json::from_value(json!({
            "type": "meter_credit", "description": "Credits",
            "properties": {"units": 5, "rollover": true,
                           "meter_id": "4e7e0000-0000-4000-8000-000000000001"}}))
        .unwrap();
        let new = body.into_command().unwrap();
        assert_eq!(
            new.properties,
            BenefitProperties::MeterCredit(domain::MeterCreditProperties {
                meter_id: crate::api::price::sample_meters()[0].id,
                units: 5,
                rollover: true,
            })
        );
    }

    #[test]
    fn benefit_bodies_read_every_type() {
        let b: BenefitCreate =
            serde_json::from_value(json!({"type": "ads", "description": "Ads", "properties": {}}))
                .unwrap();
        assert!(matches!(
            b,
            BenefitCreate::Ads(BenefitAdsCreate {
                properties: BenefitAdsProperties {
                    image_height: 400,
                    image_width: 400
                },
                ..
            })
        ));
        let b: BenefitUpdate =
            serde_json::from_value(json!({"type": "license_keys", "properties": {"prefix": "X"}}))
                .unwrap();
        assert!(matches!(b, BenefitUpdate::LicenseKeys(u) if u.description.is_none()));
    }

    #[test]
    fn samples_cover_every_benefit_variant() {
        let types: std::collections::BTreeSet<String> = samples()
            .iter()
            .filter(|(name, _)| *name == "Benefit")
            .filter_map(|(_, v)| v["type"].as_str().map(String::from))
            .collect();
        let expected: std::collections::BTreeSet<String> = [
            "ads",
            "custom",
            "downloadables",
            "feature_flag",
            "license_keys",
            "meter_credit",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        assert_eq!(types, expected);
    }
}
