//! Tests of the license key's stored record (`mod.rs`): its encoding, pinned by golden
//! bytes.

use super::*;
use crate::domain::ids::{
    ActivationId, BenefitId, CustomerId, OrderId, OrganizationId, SubscriptionId,
};
use crate::golden::{at, hex, uuid};

/// Every optional field set: a disabled key with limits, usage and validations, one
/// activation (deactivated, so every one of its dates is set), and what granted it.
fn full_key() -> LicenseKey {
    LicenseKey {
        id: LicenseKeyId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        customer_id: CustomerId(uuid(3)),
        benefit_id: BenefitId(uuid(4)),
        created_at: at(0),
        modified_at: Some(at(60)),
        key: "TESTING-00000000-0000-4000-8000-000000000001".into(),
        status: KeyStatus::Disabled,
        limit_activations: Some(5),
        usage: 7,
        limit_usage: Some(100),
        validations: 300,
        last_validated_at: Some(at(120)),
        expires_at: Some(at(86_400)),
        activations: vec![Activation {
            id: ActivationId(uuid(5)),
            label: "laptop".into(),
            meta: r#"{"os":"linux"}"#.into(),
            conditions: r#"{"major":1}"#.into(),
            created_at: at(30),
            modified_at: Some(at(40)),
            deleted_at: Some(at(50)),
        }],
        subscription_id: Some(SubscriptionId(uuid(6))),
        order_id: Some(OrderId(uuid(7))),
        paid_until: Some(at(80_000)),
        allow_replacement: true,
        replacements: vec![at(90)],
    }
}

#[test]
fn round_trip_and_golden_bytes() {
    let k = full_key();
    assert_eq!(
        (LicenseKey::COLLECTION, LicenseKey::VERSION),
        ("license_key", 3)
    );
    let bytes = k.encode().unwrap_or_default();
    assert_eq!(LicenseKey::decode(3, &bytes).ok(), Some(k));
    // Version 3 is version 2 (version 1 with `paid_until` at the end) with
    // `allow_replacement` and `replacements` after it.
    assert_eq!(
        hex(&bytes),
        format!("{GOLDEN_V1}{PAID_UNTIL}{REPLACEMENT}"),
        "license key format v3 changed"
    );
}

/// `true`, then `[1970-01-01T00:01:30Z]`.
const REPLACEMENT: &str = "010114313937302d30312d30315430303a30313a33305a";

#[test]
fn a_version_2_key_reads_with_no_replacement() {
    let k = LicenseKey::decode(2, &unhex(&format!("{GOLDEN_V1}{PAID_UNTIL}"))).unwrap();
    assert_eq!(
        k,
        LicenseKey {
            allow_replacement: false,
            replacements: Vec::new(),
            ..full_key()
        }
    );
    // Version 2's bytes are not version 3's, and the other way round.
    assert!(LicenseKey::decode(3, &unhex(&format!("{GOLDEN_V1}{PAID_UNTIL}"))).is_err());
    let v3 = full_key().encode().unwrap_or_default();
    assert!(LicenseKey::decode(2, &v3).is_err());
}

/// `Some(1970-01-01T22:13:20Z)`.
const PAID_UNTIL: &str = "0114313937302d30312d30315432323a31333a32305a";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or_default())
        .collect()
}

#[test]
fn a_version_1_key_reads_without_paid_until() {
    let k = LicenseKey::decode(1, &unhex(GOLDEN_V1)).unwrap();
    assert_eq!(
        k,
        LicenseKey {
            paid_until: None,
            allow_replacement: false,
            replacements: Vec::new(),
            ..full_key()
        }
    );
    assert!(LicenseKey::decode(3, &unhex(GOLDEN_V1)).is_err());
    assert!(LicenseKey::decode(4, &unhex(GOLDEN_V1)).is_err());
}

const GOLDEN_V1: &str = "\
    1000000000000000000000000000000001100000000000000000000000000000000210000000000000000000\
    00000000000003100000000000000000000000000000000414313937302d30312d30315430303a30303a3030\
    5a0114313937302d30312d30315430303a30313a30305a2c54455354494e472d30303030303030302d303030\
    302d343030302d383030302d30303030303030303030303102010a0e01c8fb58020114313937302d30312d30\
    315430303a30323a30305a0114313937302d30312d30325430303a30303a30305a0110000000000000000000\
    00000000000005066c6170746f700e7b226f73223a226c696e7578227d0b7b226d616a6f72223a317d143139\
    37302d30312d30315430303a30303a33305a0114313937302d30312d30315430303a30303a34305a01143139\
    37302d30312d30315430303a30303a35305a0110000000000000000000000000000000060110000000000000\
    00000000000000000007";
