//! Unit tests of the buyer's recovery of a declined renewal (`recovery.rs`) and of the
//! pending renewal order a decline writes.

use super::*;
use crate::domain::custom_field::CustomFieldData;
use crate::domain::ids::{
    CheckoutId, CustomerId, LicenseKeyId, OrganizationId, PriceId, ProductId, SubscriptionId,
};
use crate::domain::metadata::Metadata;
use crate::domain::order::OrderStatus;
use crate::domain::product::{Price, PriceKind, RecurringInterval};
use crate::subscription::{
    renewal_order_id, PaymentOutcome, Purchase, RenewalPlan, DUNNING_PERIOD, RENEWAL_RETRY_DELAY,
};
use chrono::TimeZone;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 1, 31, 12, 0, 0).unwrap()
}

fn terms() -> RenewalTerms {
    RenewalTerms {
        price_amount: Some(1500),
        discount_duration: None,
        usage: Vec::new(),
    }
}

fn no_tax() -> TaxQuote {
    TaxQuote::zero(crate::tax::TaxRequest::new(
        0,
        "usd",
        chrono::NaiveDate::from_ymd_opt(2026, 1, 1).expect("a date"),
    ))
}

fn active() -> Subscription {
    let price = Price {
        id: PriceId::new(),
        created_at: t0(),
        modified_at: None,
        is_archived: false,
        kind: PriceKind::RecurringFixed {
            interval: RecurringInterval::Month,
            currency: "usd".into(),
            amount: 1500,
        },
    };
    let p = Purchase {
        organization_id: OrganizationId::new(),
        customer_id: CustomerId::new(),
        customer_email: "jane@example.com".into(),
        product_id: ProductId::new(),
        product_name: "Pro".into(),
        price,
        amount: None,
        discount: None,
        checkout_id: Some(CheckoutId::new()),
        metadata: Metadata::default(),
        custom_field_data: CustomFieldData::default(),
        payment_token: Some("tok_chargeDeclined".into()),
        license_key_ids: vec![LicenseKeyId::new()],
        interval_count: 1,
        trial_end: None,
        seats: None,
    };
    Subscription::new_from_purchase(SubscriptionId::new(), p, t0()).unwrap()
}

/// The period end, and the subscription after its renewal was declined then.
fn past_due() -> (DateTime<Utc>, Subscription) {
    let s = active();
    let end = s.current_period_end.unwrap();
    let r = s
        .renew(end, &terms(), Some(PaymentOutcome::Declined))
        .unwrap();
    (end, r.subscription)
}

#[test]
fn a_declined_renewal_writes_its_order_pending_then_a_paid_retry_pays_it() {
    let s = active();
    let end = s.current_period_end.unwrap();
    let r = s
        .renew(end, &terms(), Some(PaymentOutcome::Declined))
        .unwrap();
    let order = r.order.expect("the pending renewal order");
    assert_eq!(order.id, renewal_order_id(s.id, 1));
    assert_eq!(order.status, OrderStatus::Pending);
    assert_eq!(order.amount, 1500);
    assert_eq!(order.created_at, end);
    assert_eq!(
        order.next_payment_attempt_at,
        Some(end + RENEWAL_RETRY_DELAY)
    );
    assert_eq!(order.payment_id, None);
    let past_due = r.subscription;

    // Declined again: the same order, its next attempt moved.
    let later = end + RENEWAL_RETRY_DELAY;
    let again = past_due
        .renew(later, &terms(), Some(PaymentOutcome::Declined))
        .unwrap();
    let o2 = again.order.expect("the order again");
    assert_eq!((o2.id, o2.created_at), (order.id, end));
    assert_eq!(o2.modified_at, Some(later));
    assert_eq!(
        o2.next_payment_attempt_at,
        Some(later + RENEWAL_RETRY_DELAY)
    );

    // The sweep's retry pays it: the same order, paid, created when it was first due.
    let paid = again
        .subscription
        .renew(
            later + RENEWAL_RETRY_DELAY,
            &terms(),
            Some(PaymentOutcome::Paid {
                tax: Box::new(no_tax()),
                payment_id: Some("pi_1".into()),
            }),
        )
        .unwrap();
    let o3 = paid.order.expect("the paid order");
    assert_eq!((o3.id, o3.status), (order.id, OrderStatus::Paid));
    assert_eq!(o3.created_at, end);
    assert_eq!(o3.next_payment_attempt_at, None);
    assert_eq!(o3.payment_id.as_deref(), Some("pi_1"));

    // Given up: the order stays pending, with no next attempt.
    let mut last = past_due.clone();
    last.next_payment_attempt_at = Some(end + DUNNING_PERIOD);
    let gone = last
        .renew(
            end + DUNNING_PERIOD,
            &terms(),
            Some(PaymentOutcome::Declined),
        )
        .unwrap();
    let o4 = gone.order.expect("the order, given up");
    assert_eq!(o4.status, OrderStatus::Pending);
    assert_eq!(o4.next_payment_attempt_at, None);
}

#[test]
fn the_buyer_pays_a_past_due_renewal_once_with_a_stable_key() {
    let (end, s) = past_due();
    let now = end + Duration::hours(2);
    let (locked, charge) = s.begin_recovery(now, &terms(), "tok_visa").unwrap();
    assert_eq!(charge.cycle, 1);
    assert_eq!(charge.amount, 1500);
    assert_eq!(charge.payment_token.as_deref(), Some("tok_visa"));
    assert!(charge
        .idempotency_key
        .starts_with(&format!("{}:1:pay:0:", s.id)));
    assert_eq!(locked.payment_lock_until, Some(now + PAYMENT_LOCK));
    // The same request after a crash (the lock not written) is the same charge; another
    // card is another charge.
    let (_, same) = s.begin_recovery(now, &terms(), "tok_visa").unwrap();
    assert_eq!(same.idempotency_key, charge.idempotency_key);
    let (_, other) = s.begin_recovery(now, &terms(), "tok_mastercard").unwrap();
    assert_ne!(other.idempotency_key, charge.idempotency_key);

    // While locked: a second request is refused, the sweep does not charge.
    assert_eq!(
        locked.begin_recovery(now, &terms(), "tok_visa").err(),
        Some(SubscriptionError::PaymentInProgress)
    );
    let mut retry_now = locked.clone();
    retry_now.next_payment_attempt_at = Some(now);
    let inside = now + Duration::minutes(1);
    assert_eq!(
        retry_now.plan_renewal(inside, &terms()),
        RenewalPlan::NotDue
    );
    // Once the lock ran out, the sweep's retry is due again.
    assert!(matches!(
        retry_now.plan_renewal(now + PAYMENT_LOCK, &terms()),
        RenewalPlan::Charge(_)
    ));

    // Paid: active, the period paid, the recovery forgotten, the renewal order paid.
    let r = locked
        .settle_recovery(
            now,
            &terms(),
            charge.cycle,
            RecoveryOutcome::Paid {
                tax: Box::new(no_tax()),
                payment_id: Some("pi_pay".into()),
            },
        )
        .expect("applied");
    let next = r.subscription;
    assert_eq!(next.status, SubscriptionStatus::Active);
    assert_eq!(next.cycles, 1);
    assert_eq!(next.current_period_start, end);
    assert_eq!(
        (
            next.past_due_at,
            next.payment_lock_until,
            next.buyer_attempts
        ),
        (None, None, 0)
    );
    let order = r.order.expect("the paid order");
    assert_eq!(order.id, renewal_order_id(s.id, 1));
    assert_eq!(order.status, OrderStatus::Paid);
    assert_eq!(order.payment_id.as_deref(), Some("pi_pay"));
    // Applied once: settling the same charge again changes nothing.
    assert!(next
        .settle_recovery(now, &terms(), charge.cycle, RecoveryOutcome::Declined)
        .is_none());
    // And an active subscription is not past due.
    assert_eq!(
        next.begin_recovery(now, &terms(), "tok_visa").err(),
        Some(SubscriptionError::NotPastDue)
    );
}

#[test]
fn declined_charges_count_and_the_sixth_is_refused() {
    let (end, mut s) = past_due();
    let mut keys = Vec::new();
    for n in 0..MAX_BUYER_ATTEMPTS {
        let now = end + Duration::minutes(i64::from(n));
        let (locked, charge) = s.begin_recovery(now, &terms(), "tok_visa").unwrap();
        keys.push(charge.idempotency_key.clone());
        s = locked
            .settle_recovery(now, &terms(), charge.cycle, RecoveryOutcome::Declined)
            .expect("applied")
            .subscription;
        assert_eq!(s.buyer_attempts, n + 1);
        assert_eq!(s.payment_lock_until, None);
        assert_eq!(s.status, SubscriptionStatus::PastDue);
    }
    keys.sort();
    keys.dedup();
    assert_eq!(
        keys.len(),
        usize::from(MAX_BUYER_ATTEMPTS),
        "one key per attempt"
    );
    assert_eq!(
        s.begin_recovery(end + Duration::hours(1), &terms(), "tok_visa")
            .err(),
        Some(SubscriptionError::TooManyAttempts)
    );
}

#[test]
fn a_charge_waiting_for_the_buyer_keeps_the_lock_and_its_payment() {
    let (end, s) = past_due();
    let now = end + Duration::hours(1);
    let (locked, charge) = s.begin_recovery(now, &terms(), "pm_3ds").unwrap();
    let waiting = locked
        .settle_recovery(
            now,
            &terms(),
            charge.cycle,
            RecoveryOutcome::Pending {
                intent_id: "pi_3ds".into(),
            },
        )
        .expect("applied")
        .subscription;
    assert_eq!(waiting.recovery_intent.as_deref(), Some("pi_3ds"));
    assert!(waiting.payment_locked(now + Duration::minutes(1)));
    // The lock expires: a new request may start.
    let after = now + PAYMENT_LOCK + Duration::seconds(1);
    assert!(!waiting.payment_locked(after));
    assert!(waiting.begin_recovery(after, &terms(), "pm_3ds").is_ok());
}

#[test]
fn a_stale_settlement_or_an_ended_subscription_is_not_applied() {
    let (end, s) = past_due();
    let now = end + Duration::hours(1);
    let (locked, charge) = s.begin_recovery(now, &terms(), "tok_visa").unwrap();
    // Another cycle than the one due.
    assert!(locked
        .settle_recovery(now, &terms(), charge.cycle + 1, RecoveryOutcome::Declined)
        .is_none());
    // Ended meanwhile (dunning gave up).
    let mut revoked = locked.clone();
    revoked.status = SubscriptionStatus::Canceled;
    revoked.ended_at = Some(now);
    assert!(revoked
        .settle_recovery(now, &terms(), charge.cycle, RecoveryOutcome::Declined)
        .is_none());
    assert_eq!(
        revoked.begin_recovery(now, &terms(), "tok_visa").err(),
        Some(SubscriptionError::NotPastDue)
    );
}
