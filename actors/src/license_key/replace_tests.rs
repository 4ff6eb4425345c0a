//! Unit tests of activation replacement (`decide.rs`: `activate` with `replace`,
//! `free_for_move`): which activation is freed, when replacement applies, and the per-key
//! limit (beside `decide_tests.rs`, which is near the file-size limit).

use chrono::{Duration, TimeZone};

use super::*;
use crate::domain::ids::{BenefitId, CustomerId, LicenseKeyId};
use crate::license_key::{ErrorKind, ERROR_CODES};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap()
}

fn at(m: i64) -> DateTime<Utc> {
    t0() + Duration::minutes(m)
}

/// A granted key with `limit` activations whose benefit allows replacement.
fn key(limit: i64) -> LicenseKey {
    LicenseKey {
        id: LicenseKeyId::new(),
        organization_id: OrganizationId::new(),
        customer_id: CustomerId::new(),
        benefit_id: BenefitId::new(),
        created_at: t0(),
        modified_at: None,
        key: "TESTING-3F2504E0-4F89-41D3-9A0C-0305E82C3301".into(),
        status: KeyStatus::Granted,
        limit_activations: Some(limit),
        usage: 0,
        limit_usage: None,
        validations: 0,
        last_validated_at: None,
        expires_at: None,
        activations: Vec::new(),
        subscription_id: None,
        order_id: None,
        paid_until: None,
        allow_replacement: true,
        replacements: Vec::new(),
    }
}

fn cmd(k: &LicenseKey, label: &str, replace: Option<Replace>) -> ActivateKey {
    ActivateKey {
        organization_id: k.organization_id,
        key: k.key.clone(),
        label: label.into(),
        conditions: JsonObject::new(),
        meta: JsonObject::new(),
        replace,
    }
}

/// `k` with activations labelled `labels`, made one minute apart from minute 0.
fn with(mut k: LicenseKey, labels: &[&str]) -> (LicenseKey, Vec<ActivationId>) {
    let mut ids = Vec::new();
    for (m, label) in labels.iter().enumerate() {
        let (next, a) = activate(&k, &cmd(&k, label, None), ActivationId::new(), at(m as i64))
            .expect("a free slot");
        k = next;
        ids.push(a.id);
    }
    (k, ids)
}

fn live(k: &LicenseKey) -> Vec<ActivationId> {
    live_activations(k).map(|a| a.id).collect()
}

fn deleted_at(k: &LicenseKey, id: ActivationId) -> Option<DateTime<Utc>> {
    k.activations.iter().find(|a| a.id == id)?.deleted_at
}

#[test]
fn at_the_limit_oldest_frees_the_first_created_and_takes_its_slot() {
    let (k, ids) = with(key(3), &["a", "b", "c"]);
    let new = ActivationId::new();
    let (next, a) = activate(&k, &cmd(&k, "d", Some(Replace::Oldest)), new, at(10)).unwrap();
    assert_eq!(a.id, new);
    assert_eq!(a.label, "d");
    assert_eq!(live(&next), vec![ids[1], ids[2], new]);
    assert_eq!(deleted_at(&next, ids[0]), Some(at(10)));
    assert_eq!(next.replacements, vec![at(10)]);
    // And again: the next oldest.
    let (again, b) = activate(
        &next,
        &cmd(&next, "e", Some(Replace::Oldest)),
        ActivationId::new(),
        at(11),
    )
    .unwrap();
    assert_eq!(live(&again), vec![ids[2], new, b.id]);
    assert_eq!(again.replacements, vec![at(10), at(11)]);
}

#[test]
fn oldest_is_by_creation_time_not_by_position() {
    let mut k = key(2);
    // Stored out of creation order (an import keeps the other provider's dates).
    for (label, m) in [("late", 5), ("early", 1)] {
        k.activations.push(Activation {
            id: ActivationId::new(),
            label: label.into(),
            meta: "{}".into(),
            conditions: "{}".into(),
            created_at: at(m),
            modified_at: None,
            deleted_at: None,
        });
    }
    let early = k.activations[1].id;
    assert_eq!(to_replace(&k, &Replace::Oldest), Ok(early));
}

#[test]
fn a_label_frees_the_most_recent_live_activation_with_exactly_that_label() {
    let (k, ids) = with(key(3), &["laptop", "desk", "laptop"]);
    let (next, a) = activate(
        &k,
        &cmd(&k, "new laptop", Some(Replace::Label("laptop".into()))),
        ActivationId::new(),
        at(10),
    )
    .unwrap();
    assert_eq!(live(&next), vec![ids[0], ids[1], a.id]);
    // No live activation with that label (case and spaces count): 404 activation_not_found,
    // and nothing changes.
    for label in ["Laptop", "desk ", "phone"] {
        let e = activate(
            &next,
            &cmd(&next, "x", Some(Replace::Label(label.into()))),
            ActivationId::new(),
            at(11),
        )
        .unwrap_err();
        assert_eq!(e, LicenseKeyError::ActivationNotFound);
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert_eq!(e.code(), "activation_not_found");
    }
    // A deactivated one is not a candidate: the remaining live "laptop" is.
    let (again, _) = activate(
        &next,
        &cmd(&next, "y", Some(Replace::Label("laptop".into()))),
        ActivationId::new(),
        at(12),
    )
    .unwrap();
    assert_eq!(deleted_at(&again, ids[2]), Some(at(10)));
    assert_eq!(deleted_at(&again, ids[0]), Some(at(12)));
    assert_eq!(live(&again).len(), 3);
}

#[test]
fn below_the_limit_replace_is_ignored() {
    let (k, ids) = with(key(3), &["a", "b"]);
    for replace in [
        Replace::Oldest,
        Replace::Label("a".into()),
        Replace::Label("zzz".into()),
    ] {
        let (next, a) = activate(
            &k,
            &cmd(&k, "c", Some(replace)),
            ActivationId::new(),
            at(10),
        )
        .unwrap();
        assert_eq!(live(&next), vec![ids[0], ids[1], a.id]);
        assert!(next.replacements.is_empty());
    }
}

#[test]
fn at_the_limit_without_replace_or_without_the_benefits_leave_it_is_the_usual_403() {
    let (k, _) = with(key(2), &["a", "b"]);
    let e = activate(&k, &cmd(&k, "c", None), ActivationId::new(), at(10)).unwrap_err();
    assert_eq!(e, LicenseKeyError::ActivationLimitReached);
    let no = LicenseKey {
        allow_replacement: false,
        ..k.clone()
    };
    for replace in [
        Replace::Oldest,
        Replace::Label("a".into()),
        Replace::Label("zzz".into()),
    ] {
        let e = activate(
            &no,
            &cmd(&no, "c", Some(replace)),
            ActivationId::new(),
            at(10),
        )
        .unwrap_err();
        assert_eq!(e, LicenseKeyError::ActivationLimitReached);
        assert_eq!(e.kind(), ErrorKind::NotPermitted);
        assert_eq!(e.code(), "activation_limit_reached");
    }
}

#[test]
fn the_keys_state_is_checked_before_replacement() {
    let (k, _) = with(key(1), &["a"]);
    let revoked = LicenseKey {
        status: KeyStatus::Revoked,
        ..k.clone()
    };
    let expired = LicenseKey {
        expires_at: Some(at(5)),
        ..k.clone()
    };
    let wrong = cmd(
        &LicenseKey {
            key: "OTHER".into(),
            ..k.clone()
        },
        "b",
        Some(Replace::Oldest),
    );
    assert_eq!(
        activate(
            &revoked,
            &cmd(&k, "b", Some(Replace::Oldest)),
            ActivationId::new(),
            at(10)
        ),
        Err(LicenseKeyError::ActivationOfInactiveKey {
            status: KeyStatus::Revoked
        })
    );
    assert_eq!(
        activate(
            &expired,
            &cmd(&k, "b", Some(Replace::Oldest)),
            ActivationId::new(),
            at(10)
        ),
        Err(LicenseKeyError::ActivationOfExpiredKey)
    );
    assert_eq!(
        activate(&k, &wrong, ActivationId::new(), at(10)),
        Err(LicenseKeyError::WrongKey)
    );
}

#[test]
fn replacements_are_limited_per_key_in_a_sliding_window() {
    let (mut k, _) = with(key(1), &["first"]);
    for n in 0..REPLACEMENTS_PER_WINDOW {
        let (next, _) = activate(
            &k,
            &cmd(&k, &format!("r{n}"), Some(Replace::Oldest)),
            ActivationId::new(),
            at(60 + n as i64),
        )
        .unwrap();
        k = next;
    }
    assert_eq!(live(&k).len(), 1);
    let over = at(60 + REPLACEMENTS_PER_WINDOW as i64);
    let e = activate(
        &k,
        &cmd(&k, "over", Some(Replace::Oldest)),
        ActivationId::new(),
        over,
    )
    .unwrap_err();
    // Free again when the first counted replacement (at minute 60) leaves the window.
    let first_leaves = at(60) + Duration::hours(REPLACEMENT_WINDOW_HOURS);
    assert_eq!(
        e,
        LicenseKeyError::ReplacementRateLimited {
            retry_after_secs: u64::try_from((first_leaves - over).num_seconds()).unwrap()
        }
    );
    assert_eq!(e.kind(), ErrorKind::TooManyRequests);
    // Answered as a rate limit, not with a key refusal's code.
    assert!(!ERROR_CODES.contains(&e.code()));
    // A refused replacement counts nothing and changes nothing.
    let e2 = activate(
        &k,
        &cmd(&k, "over", Some(Replace::Oldest)),
        ActivationId::new(),
        first_leaves - Duration::seconds(1),
    );
    assert_eq!(
        e2,
        Err(LicenseKeyError::ReplacementRateLimited {
            retry_after_secs: 1
        })
    );
    let (after, _) = activate(
        &k,
        &cmd(&k, "later", Some(Replace::Oldest)),
        ActivationId::new(),
        first_leaves,
    )
    .unwrap();
    // The window forgets what left it: the record stays bounded.
    assert_eq!(after.replacements.len(), REPLACEMENTS_PER_WINDOW);
    assert_eq!(after.replacements.last(), Some(&first_leaves));
}

#[test]
fn many_replacements_keep_the_snapshot_bounded() {
    let (mut k, _) = with(key(2), &["a", "b"]);
    for n in 0..40_i64 {
        // One a day: never over the limit.
        let now = t0() + Duration::days(n + 1);
        let (next, _) = activate(
            &k,
            &cmd(&k, "x", Some(Replace::Oldest)),
            ActivationId::new(),
            now,
        )
        .unwrap();
        k = next;
        assert_eq!(live(&k).len(), 2);
    }
    assert!(k.activations.len() <= 2 + KEPT_DEACTIVATED);
    assert!(k.replacements.len() <= REPLACEMENTS_PER_WINDOW);
}

#[test]
fn moving_an_activation_frees_it_and_counts_as_a_replacement() {
    let (k, ids) = with(key(2), &["a", "b"]);
    let next = free_for_move(&k, ids[0], at(10)).unwrap();
    assert_eq!(live(&next), vec![ids[1]]);
    assert_eq!(next.replacements, vec![at(10)]);
    assert_eq!(next.modified_at, Some(at(10)));
    // Not live any more, or never this key's: 404.
    assert_eq!(
        free_for_move(&next, ids[0], at(11)),
        Err(LicenseKeyError::ActivationNotFound)
    );
    assert_eq!(
        free_for_move(&next, ActivationId::new(), at(11)),
        Err(LicenseKeyError::ActivationNotFound)
    );
    // Not allowed by the benefit: the refusal an activation at the limit gets.
    let no = LicenseKey {
        allow_replacement: false,
        ..k.clone()
    };
    assert_eq!(
        free_for_move(&no, ids[0], at(10)),
        Err(LicenseKeyError::ActivationLimitReached)
    );
    let disabled = LicenseKey {
        status: KeyStatus::Disabled,
        ..k.clone()
    };
    assert_eq!(
        free_for_move(&disabled, ids[0], at(10)),
        Err(LicenseKeyError::ActivationOfInactiveKey {
            status: KeyStatus::Disabled
        })
    );
    // Moves share the replacements' limit.
    let mut k = k;
    k.replacements = vec![at(0); REPLACEMENTS_PER_WINDOW];
    assert!(matches!(
        free_for_move(&k, ids[0], at(10)),
        Err(LicenseKeyError::ReplacementRateLimited { .. })
    ));
}
