//! Unit tests of the license-key wire shapes (`license_key.rs`): each form's keys, the
//! update body's rules, the validate body's leniency.

use super::*;
use crate::api::version::ApiVersion;
use serde_json::json;
use std::collections::BTreeSet;

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

const READ_KEYS: [&str; 18] = [
    "id",
    "created_at",
    "modified_at",
    "organization_id",
    "user_id",
    "customer_id",
    "user",
    "customer",
    "benefit_id",
    "key",
    "display_key",
    "status",
    "limit_activations",
    "usage",
    "limit_usage",
    "validations",
    "last_validated_at",
    "expires_at",
];

const ACTIVATION_KEYS: [&str; 6] = [
    "id",
    "license_key_id",
    "label",
    "meta",
    "created_at",
    "modified_at",
];

#[test]
fn every_form_has_exactly_its_keys() {
    let samples = samples();
    let with = |extra: &[&'static str], base: &[&'static str]| -> BTreeSet<&'static str> {
        base.iter().chain(extra).copied().collect()
    };
    let mut names = BTreeSet::new();
    for (name, v) in &samples {
        let expected = match *name {
            "LicenseKeyRead" | "RotatedLicenseKey" => with(&[], &READ_KEYS),
            // Tollgate's entitlements (issue 46), on the validate and activate answers.
            "GrantedLicenseKey" => with(&["entitlements"], &READ_KEYS),
            "LicenseKeyWithActivations" => with(&["activations"], &READ_KEYS),
            "ValidatedLicenseKey" => {
                with(&["activation", "grace_until", "entitlements"], &READ_KEYS)
            }
            "LicenseKeyActivationBase" => with(&[], &ACTIVATION_KEYS),
            "LicenseKeyActivationRead" | "LicenseKeyActivationCreated" => {
                with(&["license_key"], &ACTIVATION_KEYS)
            }
            "LicenseKeyResendAccepted" => with(&["detail"], &[]),
            other => panic!("{other}"),
        };
        assert_eq!(keys(v), expected, "{name}");
        names.insert(*name);
    }
    assert_eq!(names.len(), 9);
    let granted = &samples[0].1;
    assert_eq!(granted["status"], "granted");
    assert_eq!(granted["display_key"], "****-00ABCD");
    assert_eq!(granted["user_id"], granted["customer_id"]);
    assert_eq!(
        granted["user"]["avatar_url"],
        granted["customer"]["avatar_url"]
    );
    // Live activations only; hidden ones are `[]`.
    assert_eq!(
        samples[1].1["activations"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(samples[2].1["activations"], json!([]));
    assert_eq!(samples[3].1["activation"], Value::Null);
    assert_eq!(
        samples[4].1["activation"]["meta"],
        json!({"host": "a", "cores": 8})
    );
    let read = samples
        .iter()
        .find(|(n, _)| *n == "LicenseKeyActivationRead")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    assert_eq!(read["license_key"]["id"], read["license_key_id"]);
    assert!(read.get("conditions").is_none());
    let revoked = samples.iter().rev().find(|(n, _)| *n == "LicenseKeyRead");
    assert_eq!(
        revoked.map(|(_, v)| v["status"].clone()),
        Some(json!("revoked"))
    );
}

fn changes(body: Value) -> Result<KeyChanges, Vec<FieldError>> {
    let update: LicenseKeyUpdate = serde_json::from_value(body).unwrap();
    update.into_changes().map_err(|e| match e {
        ApiError::Validation(items) => items,
        other => panic!("{other:?}"),
    })
}

#[test]
fn the_user_summary_is_customer_users() {
    let org = OrganizationId::new();
    let mut c = Customer::new(
        CustomerId::new(),
        org,
        "Jane@Example.com".into(),
        Utc::now(),
    );
    for name in [None, Some("  "), Some("Émile")] {
        c.name = name.map(String::from);
        let view = CustomerView::from(&c);
        assert_eq!(
            serde_json::to_value(user_of(&c, &view)).unwrap(),
            serde_json::to_value(CustomerUser::from(&c)).unwrap()
        );
    }
}

#[test]
fn only_sent_fields_change_and_null_clears() {
    assert_eq!(changes(json!({})).unwrap(), KeyChanges::default());
    let c = changes(json!({
        "status": "disabled", "usage": 4, "limit_activations": null,
        "limit_usage": "10", "expires_at": "2030-01-02T03:04:05Z"
    }))
    .unwrap();
    assert_eq!(c.status, Some(KeyStatus::Disabled));
    assert_eq!(c.usage, Some(4));
    assert_eq!(c.limit_activations, Some(None));
    assert_eq!(c.limit_usage, Some(Some(10)));
    assert_eq!(
        c.expires_at.flatten().map(|t| t.to_rfc3339()),
        Some("2030-01-02T03:04:05+00:00".to_string())
    );
    assert_eq!(
        changes(json!({"expires_at": null})).unwrap().expires_at,
        Some(None)
    );
}

#[test]
fn ranges_and_types_are_pydantics() {
    let errs = changes(json!({
        "status": "paused", "usage": null, "limit_activations": 51,
        "limit_usage": 0, "expires_at": "soon"
    }))
    .unwrap_err();
    let kinds: Vec<(&str, Value)> = errs
        .iter()
        .map(|e| (e.kind.as_str(), e.loc[1].clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("enum", json!("status")),
            ("int_type", json!("usage")),
            ("less_than_equal", json!("limit_activations")),
            ("greater_than", json!("limit_usage")),
            ("datetime_from_date_parsing", json!("expires_at")),
        ]
    );
    let errs = changes(json!({"limit_activations": 0})).unwrap_err();
    assert_eq!(errs[0].msg, "Input should be greater than 0");
    assert!(changes(json!({"limit_activations": 50})).is_ok());
    assert!(changes(json!({"status": null})).is_err());
}

#[test]
fn validate_body_is_lax_about_integers_and_strict_about_ids() {
    let v: LicenseKeyValidate = serde_json::from_value(json!({
        "key": "K", "organization_id": uuid::Uuid::new_v4(), "increment_usage": "3",
        "label": "ignored"
    }))
    .unwrap();
    assert_eq!(v.increment_usage, Some(3));
    assert!(v.conditions.is_empty());
    let bad = serde_json::from_value::<LicenseKeyValidate>(json!({
        "key": "K", "organization_id": uuid::Uuid::new_v4(), "increment_usage": 1.5
    }));
    assert!(bad.is_err());
}

/// The versioned fields of each form: none in the default shape and 2026-04, the member's
/// from 2026-10, and on validate and activate answers what granted the key from 2027-01.
#[actix_web::test]
async fn each_version_renders_its_fields() {
    use crate::api::version::serve;

    let versioned = [
        "member_id",
        "member",
        "subscription_id",
        "subscription",
        "order_id",
        "order",
    ];
    let shown = |v: &Value| -> Vec<&'static str> {
        versioned
            .iter()
            .copied()
            .filter(|k| v.get(*k).is_some())
            .collect()
    };
    for (version, read, granted) in [
        (None, 0, 0),
        (Some(ApiVersion::V2026_04), 0, 0),
        (Some(ApiVersion::V2026_10), 2, 2),
        (Some(ApiVersion::V2027_01), 2, 6),
    ] {
        let samples = serve(version, async { samples() }).await;
        for (name, v) in &samples {
            let expected = match *name {
                "LicenseKeyRead" | "RotatedLicenseKey" | "LicenseKeyWithActivations" => read,
                "ValidatedLicenseKey" | "GrantedLicenseKey" => granted,
                "LicenseKeyActivationRead" => {
                    assert_eq!(shown(&v["license_key"]).len(), read, "{version:?} {name}");
                    0
                }
                "LicenseKeyActivationCreated" => {
                    assert_eq!(
                        shown(&v["license_key"]).len(),
                        granted,
                        "{version:?} {name}"
                    );
                    0
                }
                _ => 0,
            };
            assert_eq!(shown(v).len(), expected, "{version:?} {name}: {v}");
        }
    }
    // What 2027-01 shows of a subscription and of an order.
    let samples = serve(Some(ApiVersion::V2027_01), async { samples() }).await;
    let validated: Vec<&Value> = samples
        .iter()
        .filter(|(n, _)| *n == "ValidatedLicenseKey")
        .map(|(_, v)| v)
        .collect();
    let by_subscription = validated
        .iter()
        .find(|v| !v["subscription"].is_null())
        .expect("a key granted by a subscription");
    assert_eq!(
        by_subscription["subscription"]["id"],
        by_subscription["subscription_id"]
    );
    assert_eq!(
        keys(&by_subscription["subscription"]),
        BTreeSet::from([
            "id",
            "status",
            "current_period_start",
            "current_period_end",
            "cancel_at_period_end",
            "ends_at"
        ])
    );
    assert!(by_subscription["order"].is_null() && by_subscription["order_id"].is_null());
    let by_order = validated
        .iter()
        .find(|v| !v["order"].is_null())
        .expect("a key granted by an order");
    assert_eq!(by_order["order"]["id"], by_order["order_id"]);
    assert_eq!(
        by_order["order"],
        json!({"id": by_order["order_id"], "created_at": by_order["created_at"],
               "status": "refunded", "paid": true})
    );
    // A key granted without anything read: the ids, and null objects.
    let plain = validated
        .iter()
        .find(|v| v["subscription"].is_null() && v["order"].is_null())
        .expect("a plain key");
    assert!(plain["subscription_id"].is_null() && plain["order_id"].is_null());
}

/// The rules, called with a typed input as the dashboard builds one (no JSON); a lax
/// integer sent as a string is read, then its rule quotes the number read.
#[test]
fn typed_changes_break_the_same_rules() {
    let input = LicenseKeyChangeInput {
        status: Maybe::Value("paused".into()),
        usage: Maybe::Value(3),
        limit_activations: Maybe::Value(51),
        limit_usage: Maybe::Null,
        expires_at: Maybe::Absent,
    };
    let Err(ApiError::Validation(errs)) = input.into_changes() else {
        panic!("should fail");
    };
    let got: Vec<(&str, Value, Value)> = errs
        .iter()
        .map(|e| (e.kind.as_str(), e.loc[1].clone(), e.input.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("enum", json!("status"), json!("paused")),
            ("less_than_equal", json!("limit_activations"), json!(51)),
        ]
    );
    let ok = LicenseKeyChangeInput {
        status: Maybe::Value("disabled".into()),
        limit_usage: Maybe::Null,
        ..LicenseKeyChangeInput::default()
    };
    let c = ok.into_changes().unwrap();
    assert_eq!(c.status, Some(KeyStatus::Disabled));
    assert_eq!(c.limit_usage, Some(None));
    assert_eq!(c.usage, None);
    let errs = changes(json!({"limit_usage": "0", "status": 5})).unwrap_err();
    assert_eq!(errs[0].input, json!(5));
    assert_eq!(errs[1].input, json!(0));
}
