//! Unit tests of the license key's rules (`decide.rs`): Polar's validation checks in
//! Polar's order, conditions compared as Python does, usage limits, activation and
//! deactivation, updates, revocation and rotation.

use chrono::{Duration, TimeZone};
use serde_json::json;

use super::*;
use crate::domain::ids::{BenefitId, CustomerId, LicenseKeyId};
use crate::license_key::{generate_key, ErrorKind};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 1, 1, 12, 0, 0).unwrap()
}

fn key() -> LicenseKey {
    LicenseKey {
        id: LicenseKeyId::new(),
        organization_id: OrganizationId::new(),
        customer_id: CustomerId::new(),
        benefit_id: BenefitId::new(),
        created_at: t0(),
        modified_at: None,
        key: "TESTING-3F2504E0-4F89-41D3-9A0C-0305E82C3301".into(),
        status: KeyStatus::Granted,
        limit_activations: None,
        usage: 0,
        limit_usage: None,
        validations: 0,
        last_validated_at: None,
        expires_at: None,
        activations: Vec::new(),
        subscription_id: None,
        order_id: None,
        paid_until: None,
        allow_replacement: false,
        replacements: Vec::new(),
    }
}

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn validate_cmd(k: &LicenseKey) -> ValidateKey {
    ValidateKey {
        organization_id: k.organization_id,
        key: k.key.clone(),
        activation_id: None,
        benefit_id: None,
        customer_id: None,
        increment_usage: None,
        conditions: JsonObject::new(),
    }
}

fn activate_cmd(k: &LicenseKey) -> ActivateKey {
    ActivateKey {
        organization_id: k.organization_id,
        key: k.key.clone(),
        label: "laptop".into(),
        conditions: JsonObject::new(),
        meta: JsonObject::new(),
        replace: None,
    }
}

fn with_activation(k: &LicenseKey, conditions: Value) -> (LicenseKey, Activation) {
    let mut k = k.clone();
    k.limit_activations = Some(3);
    let cmd = ActivateKey {
        conditions: obj(conditions),
        ..activate_cmd(&k)
    };
    activate(&k, &cmd, ActivationId::new(), t0()).unwrap()
}

fn err(r: Result<Validated, LicenseKeyError>) -> LicenseKeyError {
    r.expect_err("expected a refusal")
}

// ---- validate: each rule, its message and its status class ----

#[test]
fn a_plain_validation_counts_and_stamps() {
    let k = key();
    let v = validate(&k, &validate_cmd(&k), t0()).unwrap();
    assert_eq!(v.key.validations, 1);
    assert_eq!(v.key.last_validated_at, Some(t0()));
    assert_eq!(v.key.usage, 0);
    assert_eq!(v.activation, None);
    // Nothing else moves.
    assert_eq!(v.key.modified_at, None);
    assert_eq!(
        LicenseKey {
            validations: 0,
            last_validated_at: None,
            ..v.key.clone()
        },
        k
    );
    let again = validate(&v.key, &validate_cmd(&k), t0() + Duration::seconds(1)).unwrap();
    assert_eq!(again.key.validations, 2);
}

#[test]
fn another_organization_or_key_is_not_found() {
    let k = key();
    let mut cmd = validate_cmd(&k);
    cmd.organization_id = OrganizationId::new();
    let e = err(validate(&k, &cmd, t0()));
    assert_eq!(e, LicenseKeyError::WrongKey);
    assert_eq!(e.message(), "Not found");
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let mut cmd = validate_cmd(&k);
    cmd.key = k.key.to_lowercase();
    assert_eq!(err(validate(&k, &cmd, t0())), LicenseKeyError::WrongKey);
}

#[test]
fn revoked_and_disabled_keys_are_no_longer_active() {
    for status in [KeyStatus::Revoked, KeyStatus::Disabled] {
        let k = LicenseKey { status, ..key() };
        let e = err(validate(&k, &validate_cmd(&k), t0()));
        assert_eq!(e, LicenseKeyError::NotActive { status });
        assert_eq!(e.message(), "License key is no longer active.");
        let code = match status {
            KeyStatus::Disabled => "disabled",
            _ => "revoked",
        };
        assert_eq!(e.code(), code);
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }
}

#[test]
fn expiry_is_inclusive_of_the_instant() {
    let k = LicenseKey {
        expires_at: Some(t0()),
        ..key()
    };
    assert!(validate(&k, &validate_cmd(&k), t0() - Duration::microseconds(1)).is_ok());
    let e = err(validate(&k, &validate_cmd(&k), t0()));
    assert_eq!(e, LicenseKeyError::Expired);
    assert_eq!(e.message(), "License key has expired.");
    assert_eq!(e.kind(), ErrorKind::NotFound);
}

#[test]
fn status_is_checked_before_expiry() {
    let k = LicenseKey {
        status: KeyStatus::Revoked,
        expires_at: Some(t0() - Duration::days(1)),
        ..key()
    };
    assert_eq!(
        err(validate(&k, &validate_cmd(&k), t0())),
        LicenseKeyError::NotActive {
            status: KeyStatus::Revoked
        }
    );
}

#[test]
fn an_unknown_or_deactivated_activation_is_not_found() {
    let (k, a) = with_activation(&key(), json!({}));
    let mut cmd = validate_cmd(&k);
    cmd.activation_id = Some(ActivationId::new());
    let e = err(validate(&k, &cmd, t0()));
    assert_eq!(e, LicenseKeyError::ActivationNotFound);
    assert_eq!(e.message(), "Not found");
    assert_eq!(e.kind(), ErrorKind::NotFound);

    cmd.activation_id = Some(a.id);
    let v = validate(&k, &cmd, t0()).unwrap();
    assert_eq!(v.activation.as_ref().map(|x| x.id), Some(a.id));

    let gone = deactivate(
        &k,
        &DeactivateKey {
            organization_id: k.organization_id,
            key: k.key.clone(),
            activation_id: a.id.into(),
        },
        t0(),
    )
    .unwrap();
    assert_eq!(
        err(validate(&gone, &cmd, t0())),
        LicenseKeyError::ActivationNotFound
    );
}

#[test]
fn expiry_is_checked_before_the_activation() {
    let (mut k, _) = with_activation(&key(), json!({}));
    k.expires_at = Some(t0());
    let mut cmd = validate_cmd(&k);
    cmd.activation_id = Some(ActivationId::new());
    assert_eq!(err(validate(&k, &cmd, t0())), LicenseKeyError::Expired);
}

#[test]
fn stored_conditions_must_match_exactly() {
    let (k, a) = with_activation(&key(), json!({"ip": "10.0.0.1", "fingerprint": "abc"}));
    let mut cmd = validate_cmd(&k);
    cmd.activation_id = Some(a.id);
    // No conditions sent.
    let e = err(validate(&k, &cmd, t0()));
    assert_eq!(e, LicenseKeyError::ConditionsMismatch);
    assert_eq!(
        e.message(),
        "License key does not match required conditions"
    );
    assert_eq!(e.kind(), ErrorKind::NotFound);
    // A subset, a superset, another value: all refused.
    for sent in [
        json!({"ip": "10.0.0.1"}),
        json!({"ip": "10.0.0.1", "fingerprint": "abc", "extra": 1}),
        json!({"ip": "10.0.0.2", "fingerprint": "abc"}),
    ] {
        cmd.conditions = obj(sent);
        assert_eq!(
            err(validate(&k, &cmd, t0())),
            LicenseKeyError::ConditionsMismatch
        );
    }
    // The same object, in any key order.
    cmd.conditions = obj(json!({"fingerprint": "abc", "ip": "10.0.0.1"}));
    assert!(validate(&k, &cmd, t0()).is_ok());
}

#[test]
fn empty_stored_conditions_accept_anything() {
    let (k, a) = with_activation(&key(), json!({}));
    let mut cmd = validate_cmd(&k);
    cmd.activation_id = Some(a.id);
    cmd.conditions = obj(json!({"anything": [1, 2]}));
    assert!(validate(&k, &cmd, t0()).is_ok());
}

#[test]
fn conditions_are_not_checked_without_an_activation_id() {
    let (k, _) = with_activation(&key(), json!({"ip": "10.0.0.1"}));
    let cmd = validate_cmd(&k);
    assert!(validate(&k, &cmd, t0()).is_ok());
}

#[test]
fn conditions_compare_like_python() {
    let eq = |a: Value, b: Value| py_object_eq(&obj(a), &obj(b));
    assert!(eq(json!({"n": 1}), json!({"n": 1.0})));
    assert!(eq(json!({"n": true}), json!({"n": 1})));
    assert!(eq(json!({"n": false}), json!({"n": 0.0})));
    assert!(eq(
        json!({"a": [1, {"b": null}]}),
        json!({"a": [1.0, {"b": null}]})
    ));
    assert!(!eq(json!({"n": 1}), json!({"n": "1"})));
    assert!(!eq(json!({"n": 1.5}), json!({"n": 1})));
    assert!(!eq(json!({"n": null}), json!({"n": 0})));
    assert!(!eq(json!({"a": [1, 2]}), json!({"a": [2, 1]})));
    assert!(eq(
        json!({"big": 18446744073709551615u64}),
        json!({"big": 18446744073709551615u64})
    ));
}

#[test]
fn conditions_are_checked_before_the_benefit() {
    let (k, a) = with_activation(&key(), json!({"ip": "x"}));
    let mut cmd = validate_cmd(&k);
    cmd.activation_id = Some(a.id);
    cmd.benefit_id = Some(BenefitId::new());
    assert_eq!(
        err(validate(&k, &cmd, t0())),
        LicenseKeyError::ConditionsMismatch
    );
}

#[test]
fn another_benefit_is_refused() {
    let k = key();
    let mut cmd = validate_cmd(&k);
    cmd.benefit_id = Some(BenefitId::new());
    let e = err(validate(&k, &cmd, t0()));
    assert_eq!(e, LicenseKeyError::BenefitMismatch);
    assert_eq!(e.message(), "License key does not match given benefit.");
    assert_eq!(e.kind(), ErrorKind::NotFound);
    cmd.benefit_id = Some(k.benefit_id);
    assert!(validate(&k, &cmd, t0()).is_ok());
}

#[test]
fn another_customer_is_refused_after_the_benefit() {
    let k = key();
    let mut cmd = validate_cmd(&k);
    cmd.customer_id = Some(CustomerId::new());
    let e = err(validate(&k, &cmd, t0()));
    assert_eq!(e, LicenseKeyError::CustomerMismatch);
    assert_eq!(e.message(), "License key does not match given user.");
    assert_eq!(e.kind(), ErrorKind::NotFound);
    cmd.benefit_id = Some(BenefitId::new());
    assert_eq!(
        err(validate(&k, &cmd, t0())),
        LicenseKeyError::BenefitMismatch
    );
    let mut cmd = validate_cmd(&k);
    cmd.customer_id = Some(k.customer_id);
    assert!(validate(&k, &cmd, t0()).is_ok());
}

#[test]
fn usage_limit_is_polars_sequence() {
    // 9.4: limit 10; +1 → 1; +8 → 9; +2 → 400 "only has 1 more usages."
    let k = LicenseKey {
        limit_usage: Some(10),
        ..key()
    };
    let mut cmd = validate_cmd(&k);
    cmd.increment_usage = Some(1);
    let k = validate(&k, &cmd, t0()).unwrap().key;
    assert_eq!(k.usage, 1);
    cmd.increment_usage = Some(8);
    let k = validate(&k, &cmd, t0()).unwrap().key;
    assert_eq!(k.usage, 9);
    cmd.increment_usage = Some(2);
    let e = err(validate(&k, &cmd, t0()));
    assert_eq!(e, LicenseKeyError::InsufficientUsage { remaining: 1 });
    assert_eq!(e.message(), "License key only has 1 more usages.");
    assert_eq!(e.kind(), ErrorKind::BadRequest);
    // A refusal counts nothing.
    assert_eq!(k.validations, 2);
    cmd.increment_usage = Some(1);
    let k = validate(&k, &cmd, t0()).unwrap().key;
    assert_eq!(k.usage, 10);
    let e = err(validate(&k, &cmd, t0()));
    assert_eq!(e.message(), "License key only has 0 more usages.");
}

#[test]
fn usage_over_the_limit_reports_a_negative_remainder() {
    // An organizer may set usage above the limit (PATCH has no check).
    let k = LicenseKey {
        limit_usage: Some(5),
        usage: 7,
        ..key()
    };
    let mut cmd = validate_cmd(&k);
    cmd.increment_usage = Some(1);
    assert_eq!(
        err(validate(&k, &cmd, t0())).message(),
        "License key only has -2 more usages."
    );
    // Plain validations still pass.
    cmd.increment_usage = None;
    assert!(validate(&k, &cmd, t0()).is_ok());
}

#[test]
fn zero_or_missing_increment_does_not_touch_usage() {
    let k = LicenseKey {
        limit_usage: Some(1),
        usage: 1,
        ..key()
    };
    let mut cmd = validate_cmd(&k);
    for inc in [None, Some(0)] {
        cmd.increment_usage = inc;
        let v = validate(&k, &cmd, t0()).unwrap();
        assert_eq!(v.key.usage, 1);
        assert_eq!(v.key.validations, 1);
    }
}

#[test]
fn usage_grows_without_a_limit_and_negative_increments_give_back() {
    let k = key();
    let mut cmd = validate_cmd(&k);
    cmd.increment_usage = Some(1_000_000);
    let k = validate(&k, &cmd, t0()).unwrap().key;
    assert_eq!(k.usage, 1_000_000);
    let limited = LicenseKey {
        limit_usage: Some(3),
        usage: 3,
        ..key()
    };
    let mut cmd = validate_cmd(&limited);
    cmd.increment_usage = Some(-2);
    let back = validate(&limited, &cmd, t0()).unwrap().key;
    assert_eq!(back.usage, 1);
}

#[test]
fn usage_out_of_range_is_a_bad_request() {
    let k = LicenseKey {
        usage: i64::MAX,
        ..key()
    };
    let mut cmd = validate_cmd(&k);
    cmd.increment_usage = Some(1);
    let e = err(validate(&k, &cmd, t0()));
    assert_eq!(e, LicenseKeyError::UsageOutOfRange);
    assert_eq!(e.kind(), ErrorKind::BadRequest);
    let k = LicenseKey {
        usage: i64::MIN,
        ..key()
    };
    let mut cmd = validate_cmd(&k);
    cmd.increment_usage = Some(-1);
    assert_eq!(
        err(validate(&k, &cmd, t0())),
        LicenseKeyError::UsageOutOfRange
    );
    // Extreme limits do not overflow the remainder.
    let k = LicenseKey {
        usage: i64::MIN,
        limit_usage: Some(i64::MAX),
        ..key()
    };
    let mut cmd = validate_cmd(&k);
    cmd.increment_usage = Some(i64::MAX);
    assert_eq!(validate(&k, &cmd, t0()).unwrap().key.usage, -1);
}

#[test]
fn customer_is_checked_before_usage() {
    let k = LicenseKey {
        limit_usage: Some(1),
        usage: 1,
        ..key()
    };
    let mut cmd = validate_cmd(&k);
    cmd.increment_usage = Some(1);
    cmd.customer_id = Some(CustomerId::new());
    assert_eq!(
        err(validate(&k, &cmd, t0())),
        LicenseKeyError::CustomerMismatch
    );
}

// ---- activate ----

#[test]
fn a_key_without_an_activation_limit_cannot_be_activated() {
    for limit in [None, Some(0)] {
        let k = LicenseKey {
            limit_activations: limit,
            ..key()
        };
        let e = activate(&k, &activate_cmd(&k), ActivationId::new(), t0()).unwrap_err();
        assert_eq!(e, LicenseKeyError::ActivationNotRequired);
        assert_eq!(e.message(), "License key does not require activation");
        assert_eq!(e.kind(), ErrorKind::NotPermitted);
    }
}

#[test]
fn activation_stores_label_meta_and_conditions() {
    let k = LicenseKey {
        limit_activations: Some(1),
        ..key()
    };
    let cmd = ActivateKey {
        label: "office".into(),
        conditions: obj(json!({"ip": "1.2.3.4"})),
        meta: obj(json!({"os": "linux", "n": 2})),
        ..activate_cmd(&k)
    };
    let id = ActivationId::new();
    let (next, a) = activate(&k, &cmd, id, t0()).unwrap();
    assert_eq!(a.id, id);
    assert_eq!(a.label, "office");
    assert_eq!(stored_object(&a.meta), obj(json!({"os": "linux", "n": 2})));
    assert_eq!(stored_object(&a.conditions), obj(json!({"ip": "1.2.3.4"})));
    assert_eq!(a.created_at, t0());
    assert_eq!(next.activations, vec![a]);
    // Counters and status untouched.
    assert_eq!(next.validations, 0);
    assert_eq!(next.usage, 0);
}

#[test]
fn the_activation_limit_counts_live_activations_only() {
    let k = LicenseKey {
        limit_activations: Some(1),
        ..key()
    };
    let (k1, a) = activate(&k, &activate_cmd(&k), ActivationId::new(), t0()).unwrap();
    let e = activate(&k1, &activate_cmd(&k1), ActivationId::new(), t0()).unwrap_err();
    assert_eq!(e, LicenseKeyError::ActivationLimitReached);
    assert_eq!(e.message(), "License key activation limit already reached");
    assert_eq!(e.kind(), ErrorKind::NotPermitted);
    let k2 = deactivate(
        &k1,
        &DeactivateKey {
            organization_id: k1.organization_id,
            key: k1.key.clone(),
            activation_id: a.id.into(),
        },
        t0(),
    )
    .unwrap();
    assert_eq!(live_activations(&k2).count(), 0);
    let (k3, _) = activate(&k2, &activate_cmd(&k2), ActivationId::new(), t0()).unwrap();
    assert_eq!(live_activations(&k3).count(), 1);
}

#[test]
fn activation_needs_a_granted_key_that_has_not_expired() {
    for status in [KeyStatus::Revoked, KeyStatus::Disabled] {
        let k = LicenseKey {
            limit_activations: Some(2),
            status,
            ..key()
        };
        let e = activate(&k, &activate_cmd(&k), ActivationId::new(), t0()).unwrap_err();
        assert_eq!(e, LicenseKeyError::ActivationOfInactiveKey { status });
        assert_eq!(e.kind(), ErrorKind::NotPermitted);
        assert_eq!(
            e.message(),
            "License key is no longer active. This license key can not be activated."
        );
    }
    // Status first, then expiry (inclusive of the instant), then the limit.
    let expired = LicenseKey {
        limit_activations: None,
        expires_at: Some(t0()),
        ..key()
    };
    let e = activate(&expired, &activate_cmd(&expired), ActivationId::new(), t0()).unwrap_err();
    assert_eq!(
        (e.kind(), e.message().as_str()),
        (ErrorKind::NotPermitted, "License key has expired.")
    );
    let revoked_and_expired = LicenseKey {
        status: KeyStatus::Revoked,
        ..expired.clone()
    };
    assert_eq!(
        activate(
            &revoked_and_expired,
            &activate_cmd(&revoked_and_expired),
            ActivationId::new(),
            t0()
        )
        .unwrap_err(),
        LicenseKeyError::ActivationOfInactiveKey {
            status: KeyStatus::Revoked
        }
    );
    let later = LicenseKey {
        limit_activations: Some(1),
        expires_at: Some(t0() + Duration::seconds(1)),
        ..key()
    };
    assert!(activate(&later, &activate_cmd(&later), ActivationId::new(), t0()).is_ok());
}

#[test]
fn activation_of_another_key_is_not_found() {
    let k = LicenseKey {
        limit_activations: Some(2),
        ..key()
    };
    let mut cmd = activate_cmd(&k);
    cmd.organization_id = OrganizationId::new();
    assert_eq!(
        activate(&k, &cmd, ActivationId::new(), t0()).unwrap_err(),
        LicenseKeyError::WrongKey
    );
}

// ---- deactivate ----

#[test]
fn deactivation_needs_a_live_activation_of_this_key() {
    let (k, a) = with_activation(&key(), json!({}));
    let cmd = DeactivateKey {
        organization_id: k.organization_id,
        key: k.key.clone(),
        activation_id: ActivationId::new().into(),
    };
    let e = deactivate(&k, &cmd, t0()).unwrap_err();
    assert_eq!(e, LicenseKeyError::ActivationNotFound);
    assert_eq!(e.message(), "Not found");
    let cmd = DeactivateKey {
        activation_id: a.id.into(),
        ..cmd
    };
    let later = t0() + Duration::minutes(1);
    let k2 = deactivate(&k, &cmd, later).unwrap();
    assert_eq!(k2.activations[0].deleted_at, Some(later));
    // Twice: the second is not found.
    assert_eq!(
        deactivate(&k2, &cmd, later).unwrap_err(),
        LicenseKeyError::ActivationNotFound
    );
    let wrong = DeactivateKey {
        key: "OTHER".into(),
        ..cmd
    };
    assert_eq!(
        deactivate(&k, &wrong, later).unwrap_err(),
        LicenseKeyError::WrongKey
    );
}

#[test]
fn deactivated_activations_are_pruned_beyond_the_bound() {
    let mut k = LicenseKey {
        limit_activations: Some(1),
        ..key()
    };
    for i in 0..(KEPT_DEACTIVATED as i64 + 5) {
        let now = t0() + Duration::seconds(i);
        let (next, a) = activate(&k, &activate_cmd(&k), ActivationId::new(), now).unwrap();
        k = deactivate(
            &next,
            &DeactivateKey {
                organization_id: k.organization_id,
                key: k.key.clone(),
                activation_id: a.id.into(),
            },
            now,
        )
        .unwrap();
    }
    assert_eq!(k.activations.len(), KEPT_DEACTIVATED);
    // The most recent ones are kept, in order.
    let first_kept = k.activations[0].deleted_at.unwrap();
    assert_eq!(first_kept, t0() + Duration::seconds(5));
    // A live activation is never pruned.
    let (k, live) = activate(&k, &activate_cmd(&k), ActivationId::new(), t0()).unwrap();
    assert!(k.activations.iter().any(|a| a.id == live.id));
}

// ---- update and revoke ----

#[test]
fn update_applies_only_what_was_sent() {
    let k = LicenseKey {
        limit_usage: Some(10),
        limit_activations: Some(2),
        expires_at: Some(t0()),
        ..key()
    };
    let same = update(&k, &KeyChanges::default(), t0());
    assert_eq!(
        LicenseKey {
            modified_at: None,
            ..same
        },
        k
    );
    let changed = update(
        &k,
        &KeyChanges {
            status: Some(KeyStatus::Disabled),
            usage: Some(40),
            limit_activations: Some(None),
            limit_usage: Some(Some(5)),
            expires_at: Some(None),
            paid_until: None,
        },
        t0(),
    );
    assert_eq!(changed.status, KeyStatus::Disabled);
    // Usage may exceed the limit through an update.
    assert_eq!(changed.usage, 40);
    assert_eq!(changed.limit_usage, Some(5));
    assert_eq!(changed.limit_activations, None);
    assert_eq!(changed.expires_at, None);
    assert_eq!(changed.modified_at, Some(t0()));
}

#[test]
fn revoke_is_for_granted_keys_only() {
    let k = key();
    let revoked = revoke(&k, t0()).unwrap();
    assert_eq!(revoked.status, KeyStatus::Revoked);
    assert_eq!(revoked.modified_at, Some(t0()));
    assert_eq!(revoke(&revoked, t0()), None);
    let disabled = LicenseKey {
        status: KeyStatus::Disabled,
        ..key()
    };
    assert_eq!(revoke(&disabled, t0()), None);
}

// ---- rotate ----

#[test]
fn rotation_replaces_the_value_and_keeps_everything_else() {
    let (mut k, a) = with_activation(
        &LicenseKey {
            limit_activations: Some(3),
            ..key()
        },
        json!({"major": 2}),
    );
    k.usage = 4;
    k.limit_usage = Some(10);
    k.validations = 7;
    k.last_validated_at = Some(t0());
    k.expires_at = Some(t0() + Duration::days(30));
    let later = t0() + Duration::hours(1);
    for status in [KeyStatus::Granted, KeyStatus::Disabled] {
        let k = LicenseKey {
            status,
            ..k.clone()
        };
        let new_value = "TESTING-00000000-0000-4000-8000-000000000001".to_string();
        let rotated = rotate(&k, new_value.clone(), later).unwrap();
        assert_eq!(rotated.previous, k.key);
        assert_eq!(rotated.key.key, new_value);
        assert_eq!(rotated.key.modified_at, Some(later));
        // Everything but the value (and the modification time) is kept.
        let expected = LicenseKey {
            key: new_value,
            modified_at: Some(later),
            ..k.clone()
        };
        assert_eq!(rotated.key, expected);
        assert_eq!(live_activations(&rotated.key).next(), Some(&a));
        // The old value names this key no more; the new one does.
        let old = validate_cmd(&k);
        assert_eq!(
            check_validation(&rotated.key, &old, t0()).unwrap_err(),
            LicenseKeyError::WrongKey
        );
        if status == KeyStatus::Granted {
            assert!(validate(&rotated.key, &validate_cmd(&rotated.key), t0()).is_ok());
        }
    }
}

#[test]
fn only_granted_or_disabled_keys_rotate() {
    let revoked = LicenseKey {
        status: KeyStatus::Revoked,
        ..key()
    };
    let e = rotate(&revoked, "NEW".into(), t0()).unwrap_err();
    assert_eq!(
        e,
        LicenseKeyError::RotateNotPermitted {
            status: KeyStatus::Revoked
        }
    );
    assert_eq!(e.kind(), ErrorKind::RotateNotPermitted);
    assert_eq!(
        e.message(),
        "License key cannot be rotated in its current status. Current status: revoked. \
         Allowed statuses: disabled, granted."
    );
}

#[test]
fn rotated_values_follow_the_benefit_prefix() {
    let prefixed = generate_key(Some(" tg "));
    assert!(prefixed.starts_with("TG-"), "{prefixed}");
    assert_eq!(prefixed.len(), 3 + 36);
    let bare = generate_key(None);
    assert_eq!(bare.len(), 36);
    assert_eq!(bare, bare.to_uppercase());
    assert_ne!(generate_key(None), bare);
}

// ---- property: usage never exceeds the limit, whatever the interleaving ----

/// splitmix64: a tiny deterministic generator, so every failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

#[test]
fn usage_never_exceeds_the_limit_under_any_interleaving() {
    for seed in 0..500u64 {
        let mut rng = Rng(seed);
        let limit = rng.range(1, 40);
        let start = rng.range(0, limit);
        let mut k = LicenseKey {
            limit_usage: Some(limit),
            usage: start,
            ..key()
        };
        // Several clients, each with its own queue of requests; the actor takes them one
        // at a time in an arbitrary interleaving.
        let clients = rng.range(1, 8) as usize;
        let mut queues: Vec<Vec<i64>> = (0..clients)
            .map(|_| {
                (0..rng.range(0, 12))
                    .map(|_| match rng.below(10) {
                        0 => 0,
                        1 => -rng.range(1, 5),
                        2 => rng.range(limit, limit * 3),
                        _ => rng.range(1, 4),
                    })
                    .collect()
            })
            .collect();
        let mut accepted = 0i64;
        let mut validations = 0i64;
        loop {
            let pending: Vec<usize> = (0..clients).filter(|&c| !queues[c].is_empty()).collect();
            if pending.is_empty() {
                break;
            }
            let c = pending[rng.below(pending.len() as u64) as usize];
            let inc = queues[c].remove(0);
            let mut cmd = validate_cmd(&k);
            cmd.increment_usage = Some(inc);
            let before = k.usage;
            match validate(&k, &cmd, t0()) {
                Ok(v) => {
                    assert!(
                        inc <= limit - before,
                        "seed {seed}: +{inc} accepted with {before}/{limit}"
                    );
                    accepted += inc;
                    validations += 1;
                    k = v.key;
                }
                Err(LicenseKeyError::InsufficientUsage { remaining }) => {
                    assert!(inc > 0, "seed {seed}: {inc} refused");
                    assert_eq!(remaining, i128::from(limit - before), "seed {seed}");
                    assert!(i128::from(inc) > remaining, "seed {seed}");
                }
                Err(e) => panic!("seed {seed}: unexpected {e:?}"),
            }
            assert!(
                k.usage <= limit,
                "seed {seed}: usage {} over limit {limit}",
                k.usage
            );
        }
        assert_eq!(k.usage, start + accepted, "seed {seed}");
        assert_eq!(k.validations, validations, "seed {seed}");
    }
}

/// Every refusal's `code` is in the published table, and every code in the table is some
/// refusal's.
#[test]
fn every_refusal_has_a_code_of_the_table() {
    use crate::license_key::ERROR_CODES;
    let all = [
        LicenseKeyError::WrongKey,
        LicenseKeyError::NotActive {
            status: KeyStatus::Revoked,
        },
        LicenseKeyError::NotActive {
            status: KeyStatus::Disabled,
        },
        LicenseKeyError::Expired,
        LicenseKeyError::ActivationNotFound,
        LicenseKeyError::ConditionsMismatch,
        LicenseKeyError::BenefitMismatch,
        LicenseKeyError::CustomerMismatch,
        LicenseKeyError::InsufficientUsage { remaining: 0 },
        LicenseKeyError::UsageOutOfRange,
        LicenseKeyError::ActivationNotRequired,
        LicenseKeyError::ActivationOfInactiveKey {
            status: KeyStatus::Disabled,
        },
        LicenseKeyError::ActivationOfExpiredKey,
        LicenseKeyError::ActivationLimitReached,
        LicenseKeyError::RotateNotPermitted {
            status: KeyStatus::Revoked,
        },
    ];
    let codes: Vec<&str> = all.iter().map(LicenseKeyError::code).collect();
    for c in &codes {
        assert!(ERROR_CODES.contains(c), "{c}");
    }
    for c in ERROR_CODES {
        assert!(codes.contains(c), "{c} is never given");
    }
}

/// Deactivation by label frees the most recent live activation with the label; deactivated
/// ones and other labels are not candidates.
#[test]
fn deactivation_by_label_frees_the_most_recent_live_one() {
    let mut k = key();
    k.limit_activations = Some(5);
    let at = |m: i64| t0() + Duration::minutes(m);
    let mut ids = Vec::new();
    for (label, m) in [("laptop", 0), ("laptop", 1), ("desktop", 2), ("laptop", 3)] {
        let cmd = ActivateKey {
            label: label.into(),
            ..activate_cmd(&k)
        };
        let (next, a) = activate(&k, &cmd, ActivationId::new(), at(m)).unwrap();
        k = next;
        ids.push(a.id);
    }
    let by_label = |k: &LicenseKey, label: &str, m: i64| {
        deactivate(
            k,
            &DeactivateKey {
                organization_id: k.organization_id,
                key: k.key.clone(),
                activation_id: ActivationRef::Label(label.into()),
            },
            at(m),
        )
    };
    let live = |k: &LicenseKey| -> Vec<ActivationId> {
        k.activations
            .iter()
            .filter(|a| a.deleted_at.is_none())
            .map(|a| a.id)
            .collect()
    };
    let k = by_label(&k, "laptop", 10).unwrap();
    assert_eq!(live(&k), vec![ids[0], ids[1], ids[2]]);
    let k = by_label(&k, "laptop", 11).unwrap();
    assert_eq!(live(&k), vec![ids[0], ids[2]]);
    let k = by_label(&k, "laptop", 12).unwrap();
    assert_eq!(live(&k), vec![ids[2]]);
    assert_eq!(
        by_label(&k, "laptop", 13).unwrap_err(),
        LicenseKeyError::ActivationNotFound
    );
    assert_eq!(
        by_label(&k, "phone", 13).unwrap_err().code(),
        "activation_not_found"
    );
}
