//! The benefit record's formats: every old version decodes, the current one round-trips.

use super::*;
use crate::golden::{at, metadata, uuid};

fn v1() -> BenefitV1 {
    BenefitV1 {
        id: BenefitId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        created_at: at(1_700_000_000),
        modified_at: Some(at(1_700_000_100)),
        description: "Pro key".into(),
        selectable: true,
        deletable: true,
        properties: PropertiesV2::Custom {
            note: Some("hi".into()),
        },
        deleted_at: None,
    }
}

#[test]
fn a_version_2_license_key_benefit_lets_customers_rotate() {
    let v2 = BenefitV2 {
        id: BenefitId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        created_at: at(1_700_000_000),
        modified_at: None,
        description: "Keys".into(),
        selectable: true,
        deletable: true,
        properties: PropertiesV2::LicenseKeys(LicenseKeyPropertiesV2 {
            prefix: Some("TG".into()),
            expires: None,
            activations: Some(KeyActivationsV4 {
                limit: 3,
                enable_customer_admin: true,
            }),
            limit_usage: Some(10),
        }),
        deleted_at: None,
        metadata: metadata(),
    };
    let b = Benefit::decode(2, &tollgate_storage::codec::encode(&v2).unwrap()).unwrap();
    assert_eq!(
        b.properties,
        BenefitProperties::LicenseKeys(LicenseKeyProperties {
            prefix: Some("TG".into()),
            expires: None,
            activations: Some(KeyActivations {
                limit: 3,
                enable_customer_admin: true,
                allow_replacement: false,
            }),
            limit_usage: Some(10),
            allow_customer_rotation: true,
            grace_days: DEFAULT_GRACE_DAYS,
            quantity: KeyQuantity::OneKey,
        })
    );
    assert_eq!(b.metadata, metadata());
    // Turned off, with its own grace, it stays so in the current version.
    let off = Benefit {
        properties: BenefitProperties::LicenseKeys(LicenseKeyProperties {
            allow_customer_rotation: false,
            grace_days: 7,
            ..LicenseKeyProperties::default()
        }),
        ..b
    };
    assert_eq!(
        Benefit::decode(Benefit::VERSION, &off.encode().unwrap()).unwrap(),
        off
    );
}

#[test]
fn a_version_3_license_key_benefit_gets_the_default_grace() {
    let v3 = BenefitV3 {
        id: BenefitId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        created_at: at(1_700_000_000),
        modified_at: None,
        description: "Keys".into(),
        selectable: true,
        deletable: true,
        properties: PropertiesV3::LicenseKeys(LicenseKeyPropertiesV3 {
            prefix: None,
            expires: None,
            activations: None,
            limit_usage: None,
            allow_customer_rotation: false,
        }),
        deleted_at: None,
        metadata: metadata(),
    };
    let b = Benefit::decode(3, &tollgate_storage::codec::encode(&v3).unwrap()).unwrap();
    assert_eq!(
        b.properties,
        BenefitProperties::LicenseKeys(LicenseKeyProperties {
            allow_customer_rotation: false,
            grace_days: DEFAULT_GRACE_DAYS,
            ..LicenseKeyProperties::default()
        })
    );
}

#[test]
fn a_version_1_benefit_reads_with_empty_metadata() {
    let payload = tollgate_storage::codec::encode(&v1()).unwrap();
    let b = Benefit::decode(1, &payload).unwrap();
    assert_eq!(b.description, "Pro key");
    assert_eq!(b.modified_at, Some(at(1_700_000_100)));
    assert_eq!(b.metadata, Metadata::default());
}

#[test]
fn version_2_keeps_metadata() {
    let old = Benefit::decode(1, &tollgate_storage::codec::encode(&v1()).unwrap()).unwrap();
    let b = Benefit {
        metadata: metadata(),
        ..old
    };
    let back = Benefit::decode(Benefit::VERSION, &b.encode().unwrap()).unwrap();
    assert_eq!(back, b);
    assert!(Benefit::decode(8, &b.encode().unwrap()).is_err());
}

#[test]
fn a_version_4_benefit_is_public_and_replaces_nothing() {
    let v4 = BenefitV4 {
        id: BenefitId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        created_at: at(1_700_000_000),
        modified_at: None,
        description: "Keys".into(),
        selectable: true,
        deletable: true,
        properties: PropertiesV4::LicenseKeys(LicenseKeyPropertiesV4 {
            prefix: None,
            expires: None,
            activations: Some(KeyActivationsV4 {
                limit: 2,
                enable_customer_admin: false,
            }),
            limit_usage: None,
            allow_customer_rotation: true,
            grace_days: 9,
        }),
        deleted_at: None,
        metadata: metadata(),
    };
    let b = Benefit::decode(4, &tollgate_storage::codec::encode(&v4).unwrap()).unwrap();
    assert_eq!(b.visibility, Visibility::Public);
    assert_eq!(
        b.properties,
        BenefitProperties::LicenseKeys(LicenseKeyProperties {
            activations: Some(KeyActivations {
                limit: 2,
                enable_customer_admin: false,
                allow_replacement: false,
            }),
            grace_days: 9,
            ..LicenseKeyProperties::default()
        })
    );
}

#[test]
fn version_5_keeps_feature_flags_visibility_replacement_and_quantity() {
    let flag = Benefit {
        id: BenefitId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        created_at: at(1_700_000_000),
        modified_at: None,
        description: "Beta".into(),
        selectable: true,
        deletable: true,
        properties: BenefitProperties::FeatureFlag,
        deleted_at: None,
        metadata: metadata(),
        visibility: Visibility::Private,
    };
    assert_eq!(
        Benefit::decode(Benefit::VERSION, &flag.encode().unwrap()).unwrap(),
        flag
    );
    assert_eq!(flag.kind(), BenefitType::FeatureFlag);
    assert_eq!(flag.kind().as_str(), "feature_flag");
    let keys = Benefit {
        properties: BenefitProperties::LicenseKeys(LicenseKeyProperties {
            activations: Some(KeyActivations {
                limit: 3,
                enable_customer_admin: true,
                allow_replacement: true,
            }),
            quantity: KeyQuantity::KeyPerUnit,
            ..LicenseKeyProperties::default()
        }),
        visibility: Visibility::Public,
        ..flag
    };
    assert_eq!(
        Benefit::decode(Benefit::VERSION, &keys.encode().unwrap()).unwrap(),
        keys
    );
}

#[test]
fn a_version_5_benefit_reads_unchanged() {
    let v5 = BenefitV5 {
        id: BenefitId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        created_at: at(1_700_000_000),
        modified_at: None,
        description: "Beta".into(),
        selectable: true,
        deletable: false,
        properties: PropertiesV5::FeatureFlag,
        deleted_at: Some(at(1_700_000_500)),
        metadata: metadata(),
        visibility: Visibility::Draft,
    };
    let b = Benefit::decode(5, &tollgate_storage::codec::encode(&v5).unwrap()).unwrap();
    assert_eq!(b.properties, BenefitProperties::FeatureFlag);
    assert_eq!(b.visibility, Visibility::Draft);
    assert_eq!(b.deleted_at, Some(at(1_700_000_500)));
    assert!(!b.deletable);
    let keys = BenefitV5 {
        properties: PropertiesV5::LicenseKeys(LicenseKeyProperties {
            grace_days: 5,
            quantity: KeyQuantity::KeyPerUnit,
            ..LicenseKeyProperties::default()
        }),
        ..v5
    };
    let b = Benefit::decode(5, &tollgate_storage::codec::encode(&keys).unwrap()).unwrap();
    assert_eq!(
        b.properties,
        BenefitProperties::LicenseKeys(LicenseKeyProperties {
            grace_days: 5,
            quantity: KeyQuantity::KeyPerUnit,
            ..LicenseKeyProperties::default()
        })
    );
}

#[test]
fn version_6_keeps_downloadables_and_when_files_were_archived() {
    let (a, b, c) = (FileId(uuid(10)), FileId(uuid(11)), FileId(uuid(12)));
    let props = DownloadablesProperties {
        files: vec![a, b, c],
        archived: vec![(b, at(1_700_000_200))],
    };
    let benefit = Benefit {
        id: BenefitId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        created_at: at(1_700_000_000),
        modified_at: None,
        description: "Downloads".into(),
        selectable: true,
        deletable: true,
        properties: BenefitProperties::Downloadables(props.clone()),
        deleted_at: None,
        metadata: metadata(),
        visibility: Visibility::Public,
    };
    assert_eq!(
        Benefit::decode(Benefit::VERSION, &benefit.encode().unwrap()).unwrap(),
        benefit
    );
    assert_eq!(benefit.kind(), BenefitType::Downloadables);
    assert_eq!(benefit.kind().as_str(), "downloadables");
    assert_eq!(props.active_files(), vec![a, c]);
    // A grant made before the archive keeps the file; one made at it or after does not.
    assert_eq!(props.files_for(at(1_700_000_100)), vec![a, b, c]);
    assert_eq!(props.files_for(at(1_700_000_200)), vec![a, c]);
    assert_eq!(props.files_for(at(1_700_000_300)), vec![a, c]);
}

#[test]
fn archiving_keeps_the_first_time_and_unarchiving_forgets_it() {
    let (a, b, other) = (FileId(uuid(10)), FileId(uuid(11)), FileId(uuid(13)));
    let first = DownloadablesProperties::from_wire(
        vec![a, b],
        &[(b, true), (other, true), (a, false)],
        None,
        at(100),
    );
    assert_eq!(first.archived, vec![(b, at(100))], "unknown ids dropped");
    // Archived again later: the first time stays; a newly archived one gets now.
    let again = DownloadablesProperties::from_wire(
        vec![a, b],
        &[(b, true), (a, true)],
        Some(&first),
        at(200),
    );
    assert_eq!(again.archived, vec![(a, at(200)), (b, at(100))]);
    // Unarchived: every grant gets it again.
    let back = DownloadablesProperties::from_wire(vec![a, b], &[(b, false)], Some(&again), at(300));
    assert!(back.archived.is_empty());
    assert_eq!(back.files_for(at(0)), vec![a, b]);
}

/// Version 7 appends `meter_credit` properties; the bytes of a meter-credit benefit are
/// fixed (golden), and a version-6 record still reads.
#[test]
fn version_7_keeps_meter_credits_in_golden_bytes() {
    let benefit = Benefit {
        id: BenefitId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        created_at: at(1_700_000_000),
        modified_at: None,
        description: "100 API calls / month".into(),
        selectable: true,
        deletable: true,
        properties: BenefitProperties::MeterCredit(MeterCreditProperties {
            meter_id: crate::domain::ids::MeterId(uuid(3)),
            units: 100,
            rollover: true,
        }),
        deleted_at: None,
        metadata: Metadata::default(),
        visibility: Visibility::Public,
    };
    assert_eq!((Benefit::COLLECTION, Benefit::VERSION), ("benefit", 7));
    let bytes = benefit.encode().unwrap();
    assert_eq!(Benefit::decode(7, &bytes).unwrap(), benefit);
    assert_eq!(benefit.kind().as_str(), "meter_credit");
    // After the description: selectable, deletable, variant 5 with the meter id (16
    // bytes), 100 units and rollover; no deletion, no metadata, public.
    assert_eq!(
        crate::golden::hex(&bytes),
        "1000000000000000000000000000000001100000000000000000000000000000000214323032332d31\
         312d31345432323a31333a32305a0015313030204150492063616c6c73202f206d6f6e746801010510\
         000000000000000000000000000000036401000002",
        "meter credit layout changed"
    );
    // A version-6 record (a custom benefit) reads as before under both versions.
    let custom = Benefit {
        properties: BenefitProperties::Custom { note: None },
        ..benefit
    };
    let bytes = custom.encode().unwrap();
    assert_eq!(Benefit::decode(6, &bytes).unwrap(), custom);
}
