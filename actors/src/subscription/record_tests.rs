//! Tests of the subscription's stored record (`mod.rs`): the orderings of the list, the
//! indexes a subscription is in, and its encoding, pinned by golden bytes.

use super::*;
use crate::domain::custom_field::CustomFieldData;
use crate::domain::ids::{CustomerId, OrganizationId, PriceId, ProductId, SubscriptionId};
use crate::domain::metadata::Metadata;
use crate::domain::product::{Price, PriceKind};
use chrono::{Duration, TimeZone, Utc};

fn sub(amount: Option<i64>, interval: RecurringInterval) -> Subscription {
    let t0 = Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
    let kind = match amount {
        Some(amount) => PriceKind::RecurringFixed {
            interval,
            currency: "usd".into(),
            amount,
        },
        None => PriceKind::RecurringFree { interval },
    };
    let p = Purchase {
        organization_id: OrganizationId::new(),
        customer_id: CustomerId::new(),
        customer_email: "a@b.co".into(),
        product_id: ProductId::new(),
        product_name: "P".into(),
        price: Price {
            id: PriceId::new(),
            created_at: t0,
            modified_at: None,
            is_archived: false,
            kind,
        },
        amount: None,
        discount: None,
        checkout_id: None,
        metadata: Metadata::default(),
        custom_field_data: CustomFieldData::default(),
        payment_token: None,
        license_key_ids: Vec::new(),
        interval_count: 1,
        trial_end: None,
        seats: None,
    };
    Subscription::new_from_purchase(SubscriptionId::new(), p, t0).unwrap()
}

fn sorted(subs: &[Subscription], sort: SubscriptionSort, descending: bool) -> Vec<usize> {
    let (_, backwards) = sort.index(descending);
    let mut keyed: Vec<(Vec<u8>, usize)> = subs
        .iter()
        .enumerate()
        .map(|(i, s)| (s.sort_key(sort, descending), i))
        .collect();
    keyed.sort();
    if backwards {
        keyed.reverse();
    }
    keyed.into_iter().map(|(_, i)| i).collect()
}

#[test]
fn amount_sorts_per_month_with_nulls_last_both_ways() {
    let subs = [
        sub(Some(1000), RecurringInterval::Month),
        sub(None, RecurringInterval::Month),
        sub(Some(6000), RecurringInterval::Year), // 500 per month
        sub(Some(2000), RecurringInterval::Month),
    ];
    assert_eq!(sorted(&subs, SubscriptionSort::Amount, false), [2, 0, 3, 1]);
    assert_eq!(sorted(&subs, SubscriptionSort::Amount, true), [3, 0, 2, 1]);
}

#[test]
fn status_sorts_in_polar_order() {
    let active = sub(Some(1), RecurringInterval::Month);
    let mut canceling = active.clone();
    canceling.cancel_at_period_end = true;
    let mut past_due = active.clone();
    past_due.status = SubscriptionStatus::PastDue;
    let mut canceled = active.clone();
    canceled.status = SubscriptionStatus::Canceled;
    let subs = [canceled, past_due, canceling, active];
    assert_eq!(sorted(&subs, SubscriptionSort::Status, false), [3, 2, 1, 0]);
    assert_eq!(sorted(&subs, SubscriptionSort::Status, true), [0, 1, 2, 3]);
}

#[test]
fn only_started_subscriptions_are_listed_and_only_live_ones_are_due() {
    let s = sub(Some(1), RecurringInterval::Month);
    let names: Vec<&str> = s.index_entries().iter().map(|e| e.index).collect();
    assert!(names.contains(&SUBSCRIPTION_BY_STARTED));
    assert!(names.contains(&SUBSCRIPTION_DUE));
    assert!(!names.contains(&SUBSCRIPTION_REVOKING));
    assert!(!names.contains(&SUBSCRIPTION_OF_DISCOUNT));

    let mut incomplete = s.clone();
    incomplete.started_at = None;
    incomplete.status = SubscriptionStatus::Incomplete;
    assert!(incomplete.index_entries().is_empty());

    let mut revoked = s.clone();
    revoked.license_key_ids = vec![crate::domain::ids::LicenseKeyId::new()];
    let revoked = revoked
        .revoke(None, None, s.created_at + Duration::days(1))
        .unwrap();
    let names: Vec<&str> = revoked.index_entries().iter().map(|e| e.index).collect();
    assert!(!names.contains(&SUBSCRIPTION_DUE));
    assert!(names.contains(&SUBSCRIPTION_REVOKING));
    assert!(names.contains(&SUBSCRIPTION_BY_STARTED));
}

/// Every optional field set, a past-due yearly subscription set to cancel, keys granted
/// and still to revoke, and metadata and custom field data of every value kind.
fn full_subscription() -> Subscription {
    use crate::domain::ids::{CheckoutId, DiscountId, LicenseKeyId};
    use crate::golden::{at, custom_field_data, metadata, uuid};
    Subscription {
        id: SubscriptionId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        created_at: at(0),
        modified_at: Some(at(60)),
        amount: Some(1500),
        currency: Some("usd".into()),
        recurring_interval: RecurringInterval::Year,
        status: SubscriptionStatus::PastDue,
        current_period_start: at(120),
        current_period_end: Some(at(180)),
        cancel_at_period_end: true,
        canceled_at: Some(at(240)),
        started_at: Some(at(300)),
        ends_at: Some(at(360)),
        ended_at: Some(at(420)),
        customer_id: CustomerId(uuid(3)),
        product_id: ProductId(uuid(4)),
        price_id: PriceId(uuid(5)),
        discount_id: Some(DiscountId(uuid(6))),
        checkout_id: Some(CheckoutId(uuid(7))),
        metadata: metadata(),
        custom_field_data: custom_field_data(),
        customer_cancellation_reason: Some("too_expensive".into()),
        customer_cancellation_comment: Some("Later".into()),
        license_key_ids: vec![LicenseKeyId(uuid(8)), LicenseKeyId(uuid(9))],
        pending_revocations: vec![LicenseKeyId(uuid(9))],
        cycles: 3,
        payment_token: Some("tok_visa".into()),
        customer_email: "jane@example.com".into(),
        product_name: "Pro".into(),
        discount_name: Some("Launch".into()),
        recurring_interval_count: 3,
        trial_start: Some(at(480)),
        trial_end: Some(at(540)),
        anchor_at: at(540),
        anchor_cycle: 1,
        proration_balance: -250,
        plan_changes: 2,
        trial_reminded_for: Some(at(540)),
        seats: Some(7),
        past_due_at: Some(at(600)),
        last_attempt_at: Some(at(660)),
        next_payment_attempt_at: Some(at(720)),
        buyer_attempts: 2,
        payment_lock_until: Some(at(780)),
        recovery_intent: Some("pi_3".into()),
    }
}

/// What a record of an earlier version reads as: no recovery recorded (the full
/// subscription has ended, so nothing is derived either).
fn before_v4() -> Subscription {
    Subscription {
        past_due_at: None,
        last_attempt_at: None,
        next_payment_attempt_at: None,
        buyer_attempts: 0,
        payment_lock_until: None,
        recovery_intent: None,
        ..full_subscription()
    }
}

#[test]
fn round_trip_and_golden_bytes() {
    let s = full_subscription();
    assert_eq!(
        (Subscription::COLLECTION, Subscription::VERSION),
        ("subscription", 4)
    );
    let bytes = s.encode().unwrap_or_default();
    assert_eq!(Subscription::decode(4, &bytes).ok(), Some(s));
    // Version 3 appends the seats (`Some(7)`: 01 07) to version 2's layout, version 4
    // the recovery of a declined renewal.
    assert_eq!(
        crate::golden::hex(&bytes),
        format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}0107{GOLDEN_V4_TAIL}"),
        "subscription format v4 changed"
    );
    assert!(Subscription::decode(5, &bytes).is_err());
}

/// A record written by a build of format version 2 reads as a subscription without
/// seats; written again, it is version 4.
#[test]
fn version_2_records_decode_without_seats() {
    let v2 = unhex(&format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}"));
    let expected = Subscription {
        seats: None,
        ..before_v4()
    };
    assert_eq!(Subscription::decode(2, &v2).ok(), Some(expected.clone()));
    assert!(Subscription::decode(3, &v2).is_err());
    let again = expected.encode().unwrap_or_default();
    assert_eq!(
        crate::golden::hex(&again),
        format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}00{NO_RECOVERY}")
    );
    assert_eq!(Subscription::decode(4, &again).ok(), Some(expected));
}

/// A record written by a build of format version 3 reads with its seats and no recovery;
/// written again, it is version 4.
#[test]
fn version_3_records_decode_with_their_seats() {
    let v3 = unhex(&format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}0107"));
    assert_eq!(Subscription::decode(3, &v3).ok(), Some(before_v4()));
    assert!(Subscription::decode(4, &v3).is_err());
    let again = before_v4().encode().unwrap_or_default();
    assert_eq!(
        crate::golden::hex(&again),
        format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}0107{NO_RECOVERY}")
    );
}

/// A live past-due subscription of format version 3 keeps its retry: its last attempt is
/// its `modified_at` (the retry's idempotency key is unchanged), its next attempt 3 days
/// after it (not before the period end), as version 3 computed them.
#[test]
fn a_past_due_version_3_record_keeps_its_retry_and_its_key() {
    use crate::golden::at;
    let live = Subscription {
        ended_at: None,
        ends_at: None,
        cancel_at_period_end: false,
        ..before_v4()
    };
    let hex = crate::golden::hex(&live.encode().unwrap_or_default());
    let v3 = unhex(
        hex.strip_suffix(NO_RECOVERY)
            .expect("a v4 tail of no recovery"),
    );
    let read = Subscription::decode(3, &v3).expect("reading version 3");
    // Last charged at(60): retried 3 days later (the period ended at(180), before that).
    assert_eq!(read.last_attempt_at, Some(at(60)));
    assert_eq!(
        read.next_payment_attempt_at,
        Some(at(60) + super::RENEWAL_RETRY_DELAY)
    );
    assert_eq!(read.past_due_at, Some(at(180)));
    assert_eq!(read.due_at(), Some(at(60) + super::RENEWAL_RETRY_DELAY));
    let now = at(60) + super::RENEWAL_RETRY_DELAY;
    match read.plan_renewal(now, &super::RenewalTerms::default()) {
        super::RenewalPlan::Charge(c) => assert_eq!(
            c.idempotency_key,
            format!("{}:4:{}", read.id, at(60).timestamp_micros())
        ),
        other => panic!("expected a charge, got {other:?}"),
    }
    // An active one derives nothing.
    let active = Subscription {
        status: SubscriptionStatus::Active,
        ..live
    };
    let hex = crate::golden::hex(&active.encode().unwrap_or_default());
    let v3 = unhex(
        hex.strip_suffix(NO_RECOVERY)
            .expect("a v4 tail of no recovery"),
    );
    assert_eq!(Subscription::decode(3, &v3).ok(), Some(active));
}

/// The bytes of a hex string (the golden fixtures).
fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .filter_map(|i| s.get(i..i + 2))
        .filter_map(|b| u8::from_str_radix(b, 16).ok())
        .collect()
}

/// A record written by a build of format version 1 reads as a subscription of single
/// intervals, without a trial, its periods counted from its start; written again, it is
/// version 4.
#[test]
fn version_1_records_decode_with_single_intervals_and_no_trial() {
    use crate::golden::at;
    let decoded = Subscription::decode(1, &unhex(GOLDEN_V1));
    let expected = Subscription {
        recurring_interval_count: 1,
        trial_start: None,
        trial_end: None,
        anchor_at: at(300),
        anchor_cycle: 0,
        proration_balance: 0,
        plan_changes: 0,
        trial_reminded_for: None,
        seats: None,
        ..before_v4()
    };
    assert_eq!(decoded.ok(), Some(expected.clone()));
    let again = expected.encode().unwrap_or_default();
    assert_eq!(Subscription::decode(4, &again).ok(), Some(expected));
    assert!(Subscription::decode(2, &unhex(GOLDEN_V1)).is_err());
    assert!(Subscription::decode(5, &again).is_err());
}

/// Format version 4 appends the recovery: `past_due_at` at(600), `last_attempt_at`
/// at(660), `next_payment_attempt_at` at(720), 2 buyer attempts, the lock until at(780),
/// the intent "pi_3".
const GOLDEN_V4_TAIL: &str = "0114313937302d30312d30315430303a31303a30305a0114313937302d30312d30315430303a31313a30305a0114313937302d30312d30315430303a31323a30305a020114313937302d30312d30315430303a31333a30305a010470695f33";

/// Version 4's tail of a subscription with no recovery: five `None`s and 0 attempts.
const NO_RECOVERY: &str = "000000000000";

/// Format version 2 appends its fields to version 1's layout: these are their bytes.
const GOLDEN_V2_TAIL: &str = "\
    030114313937302d30312d30315430303a30383a30305a0114313937302d30312d30315430303a30393a3030\
    5a14313937302d30312d30315430303a30393a30305a01fbf301020114313937302d30312d30315430303a30\
    393a30305a";

const GOLDEN_V1: &str = "\
    1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30\
    315430303a30303a30305a0114313937302d30312d30315430303a30313a30305a01fbb80b01037573640104\
    14313937302d30312d30315430303a30323a30305a0114313937302d30312d30315430303a30333a30305a01\
    0114313937302d30312d30315430303a30343a30305a0114313937302d30312d30315430303a30353a30305a\
    0114313937302d30312d30315430303a30363a30305a0114313937302d30312d30315430303a30373a30305a\
    1000000000000000000000000000000003100000000000000000000000000000000410000000000000000000\
    0000000000000501100000000000000000000000000000000601100000000000000000000000000000000703\
    04706c616e000370726f057365617473010505747269616c020105056167726565030004626f726e04143230\
    32342d30352d30315430303a30303a30305a05636f756e74020e05656d70747900046e6f746501026869010d\
    746f6f5f657870656e7369766501054c61746572021000000000000000000000000000000008100000000000\
    0000000000000000000009011000000000000000000000000000000009030108746f6b5f76697361106a616e\
    65406578616d706c652e636f6d0350726f01064c61756e6368";
