//! Unit tests of the subscription's rules (`decide.rs`) and of its renewals
//! (`renewal.rs`): purchase, renewal and dunning, discounts over periods, cancel, uncancel
//! and revoke.

use super::*;
use crate::checkout::AppliedDiscount;
use crate::domain::custom_field::CustomFieldData;
use crate::domain::discount::{DiscountDuration, DiscountKind};
use crate::domain::ids::{CheckoutId, CustomerId, DiscountId, OrganizationId, PriceId, ProductId};
use crate::domain::metadata::Metadata;
use crate::domain::order::{BillingReason, DEFAULT_CURRENCY};
use crate::domain::product::{Price, RecurringInterval};
use crate::subscription::{
    renewal_order_id, PaymentOutcome, RenewalCharge, RenewalPlan, RenewalTerms, DUNNING_PERIOD,
    RENEWAL_RETRY_DELAY,
};
use chrono::{Duration, TimeZone};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 1, 31, 12, 0, 0).unwrap()
}

fn monthly_price(amount: i64) -> Price {
    Price {
        id: PriceId::new(),
        created_at: t0(),
        modified_at: None,
        is_archived: false,
        kind: PriceKind::RecurringFixed {
            interval: RecurringInterval::Month,
            currency: "usd".into(),
            amount,
        },
    }
}

fn purchase(price: Price) -> Purchase {
    Purchase {
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
        payment_token: Some("tok_visa".into()),
        license_key_ids: vec![LicenseKeyId::new(), LicenseKeyId::new()],
        interval_count: 1,
        trial_end: None,
        seats: None,
    }
}

fn discount(kind: DiscountKind, duration: DiscountDuration) -> AppliedDiscount {
    AppliedDiscount {
        id: DiscountId::new(),
        name: "Launch".into(),
        code: None,
        kind,
        duration,
    }
}

fn active(amount: i64) -> Subscription {
    Subscription::new_from_purchase(SubscriptionId::new(), purchase(monthly_price(amount)), t0())
        .unwrap()
}

fn terms(price_amount: i64, duration: Option<DiscountDuration>) -> RenewalTerms {
    RenewalTerms {
        price_amount: Some(price_amount),
        discount_duration: duration,
        usage: Vec::new(),
    }
}

fn paid() -> Option<PaymentOutcome> {
    Some(PaymentOutcome::Paid {
        tax: Box::new(no_tax()),
        payment_id: Some("pi_renewal".into()),
    })
}

/// The end of the current period plus a minute.
fn after_period(s: &Subscription) -> DateTime<Utc> {
    s.current_period_end.unwrap() + Duration::minutes(1)
}

fn charge(plan: RenewalPlan) -> RenewalCharge {
    match plan {
        RenewalPlan::Charge(c) => c,
        other => panic!("expected a charge, got {other:?}"),
    }
}

#[test]
fn a_purchase_starts_active_for_one_calendar_period() {
    let s = active(1500);
    assert_eq!(s.status, SubscriptionStatus::Active);
    assert_eq!(s.started_at, Some(t0()));
    assert_eq!(s.current_period_start, t0());
    // Jan 31 + 1 month is the last day of February.
    assert_eq!(
        s.current_period_end,
        Some(Utc.with_ymd_and_hms(2025, 2, 28, 12, 0, 0).unwrap())
    );
    assert_eq!((s.amount, s.currency.as_deref()), (Some(1500), Some("usd")));
    assert_eq!(s.cycles, 0);
    assert_eq!(s.due_at(), s.current_period_end);

    let mut yearly = monthly_price(12000);
    yearly.kind = PriceKind::RecurringFixed {
        interval: RecurringInterval::Year,
        currency: "usd".into(),
        amount: 12000,
    };
    let y = Subscription::new_from_purchase(SubscriptionId::new(), purchase(yearly), t0()).unwrap();
    assert_eq!(
        y.current_period_end,
        Some(Utc.with_ymd_and_hms(2026, 1, 31, 12, 0, 0).unwrap())
    );
}

#[test]
fn a_purchase_takes_the_discount_and_refuses_one_time_prices() {
    let mut p = purchase(monthly_price(1000));
    p.discount = Some(discount(
        DiscountKind::Percentage { basis_points: 2500 },
        DiscountDuration::Forever,
    ));
    let s = Subscription::new_from_purchase(SubscriptionId::new(), p.clone(), t0()).unwrap();
    assert_eq!(s.amount, Some(750));
    assert_eq!(s.discount_name.as_deref(), Some("Launch"));
    assert!(s.discount_id.is_some());

    let free = Price {
        kind: PriceKind::RecurringFree {
            interval: RecurringInterval::Month,
        },
        ..monthly_price(0)
    };
    let mut f = p.clone();
    f.price = free;
    let s = Subscription::new_from_purchase(SubscriptionId::new(), f, t0()).unwrap();
    assert_eq!((s.amount, s.currency.clone()), (None, None));
    assert_eq!(s.discount_id, None, "discounts only apply to fixed prices");

    let mut one_time = p;
    one_time.price.kind = PriceKind::OneTimeFixed {
        currency: "usd".into(),
        amount: 100,
    };
    let id = one_time.price.id;
    assert_eq!(
        Subscription::new_from_purchase(SubscriptionId::new(), one_time, t0()),
        Err(SubscriptionError::NotRecurring(id))
    );
}

#[test]
fn nothing_is_due_before_the_period_end() {
    let s = active(1500);
    let before = s.current_period_end.unwrap() - Duration::seconds(1);
    assert_eq!(
        s.plan_renewal(before, &terms(1500, None)),
        RenewalPlan::NotDue
    );
    assert_eq!(
        s.renew(before, &terms(1500, None), paid()).err(),
        Some(SubscriptionError::StaleRenewal)
    );
}

#[test]
fn a_paid_renewal_moves_to_the_next_period_and_writes_the_order() {
    let s = active(1500);
    let now = after_period(&s);
    let c = charge(s.plan_renewal(now, &terms(1500, None)));
    assert_eq!(c.cycle, 1);
    assert_eq!(c.amount, 1500);
    assert_eq!(c.idempotency_key, format!("{}:1", s.id));
    assert_eq!(c.payment_token.as_deref(), Some("tok_visa"));

    let r = s
        .renew(
            now,
            &terms(1500, None),
            Some(PaymentOutcome::Paid {
                // A quote of 20 % on the renewal's 1500: the order carries its tax.
                tax: Box::new(crate::tax::TaxQuote {
                    tax_amount: 300,
                    ..no_tax()
                }),
                payment_id: Some("pi_renewal".into()),
            }),
        )
        .unwrap();
    let next = &r.subscription;
    assert_eq!(next.cycles, 1);
    assert_eq!(next.status, SubscriptionStatus::Active);
    assert_eq!(next.current_period_start, s.current_period_end.unwrap());
    // Counted from the anchor: Jan 31 → Feb 28 → Mar 31.
    assert_eq!(
        next.current_period_end,
        Some(Utc.with_ymd_and_hms(2025, 3, 31, 12, 0, 0).unwrap())
    );
    let order = r.order.unwrap();
    assert_eq!(order.id, renewal_order_id(s.id, 1));
    assert_eq!(order.billing_reason, BillingReason::SubscriptionCycle);
    assert_eq!((order.amount, order.tax_amount), (1500, 300));
    assert_eq!(order.subscription_id, Some(s.id));
    assert!(order.recurring);
    assert_eq!(order.checkout_id, None);

    // The same step cannot be applied twice.
    assert_eq!(
        next.renew(now, &terms(1500, None), paid()).err(),
        Some(SubscriptionError::StaleRenewal)
    );
    let c2 = charge(next.plan_renewal(after_period(next), &terms(1500, None)));
    assert_eq!(c2.cycle, 2);
    assert_ne!(renewal_order_id(s.id, 2), order.id);
}

#[test]
fn a_subscription_ending_at_its_period_end_bills_its_last_usage_alone() {
    use crate::domain::ids::PriceId;
    use crate::domain::order::UsageLine;
    let mut s = active(1500);
    s.discount_id = Some(DiscountId::new());
    s.cancel_at_period_end = true;
    s.proration_balance = 300;
    let now = after_period(&s);
    let line = |amount: i64| UsageLine {
        price_id: PriceId::new(),
        label: "API calls".into(),
        amount,
        start: s.current_period_start,
        end: s.current_period_end.unwrap(),
    };
    let zero = RenewalTerms {
        usage: vec![line(0)],
        ..terms(1500, Some(DiscountDuration::Forever))
    };
    // Nothing billable: it just ends.
    assert_eq!(s.plan_renewal(now, &zero), RenewalPlan::End);
    let usage = RenewalTerms {
        usage: vec![line(625)],
        ..terms(1500, Some(DiscountDuration::Forever))
    };
    let c = charge(s.plan_renewal(now, &usage));
    // The usage only: no fixed price, no proration, never discounted.
    assert_eq!((c.amount, c.balance_applied, c.discounted), (625, 0, false));
    assert_eq!(c.cycle, s.cycles + 1);
    for outcome in [paid(), Some(PaymentOutcome::Declined)] {
        let declined = outcome == Some(PaymentOutcome::Declined);
        let r = s.renew(now, &usage, outcome).unwrap();
        assert_eq!(r.subscription.status, SubscriptionStatus::Canceled);
        assert_eq!(r.subscription.ended_at, s.current_period_end);
        assert_eq!(r.subscription.cycles, s.cycles);
        assert_eq!(r.subscription.due_at(), None);
        let order = r.order.unwrap();
        assert_eq!(order.id, renewal_order_id(s.id, s.cycles + 1));
        assert_eq!((order.amount, order.usage_amount()), (625, 625));
        assert_eq!(order.discount_id, None);
        let status = if declined {
            crate::domain::order::OrderStatus::Pending
        } else {
            crate::domain::order::OrderStatus::Paid
        };
        assert_eq!(order.status, status);
        assert_eq!(order.next_payment_attempt_at, None);
    }
}

#[test]
fn a_renewal_bills_the_ended_periods_usage_beside_the_next_fixed_price_undiscounted() {
    use crate::domain::ids::PriceId;
    use crate::domain::order::UsageLine;
    let mut s = active(1500);
    s.discount_id = Some(DiscountId::new());
    s.amount = Some(1200);
    let now = after_period(&s);
    let line = |amount: i64| UsageLine {
        price_id: PriceId::new(),
        label: "API calls — (1,250 consumed units) × $0.005".into(),
        amount,
        start: s.current_period_start,
        end: s.current_period_end.unwrap(),
    };
    let usage = vec![line(625), line(10_000)];
    let terms = RenewalTerms {
        usage: usage.clone(),
        ..terms(1500, Some(DiscountDuration::Forever))
    };
    let c = charge(s.plan_renewal(now, &terms));
    // The discounted fixed price (1200) and both lines, at full price.
    assert_eq!(c.amount, 1200 + 625 + 10_000);
    assert_eq!(c.usage, usage);
    let r = s.renew(now, &terms, paid()).unwrap();
    let order = r.order.unwrap();
    assert_eq!(order.amount, 11_825);
    assert_eq!(order.usage_lines, usage);
    assert_eq!(order.usage_amount(), 10_625);
    // The fixed line and the usage lines share the order's tax in proportion.
    assert_eq!(order.spread_over_lines(1000), vec![101, 53, 846]);
    // The subscription's own amount stays the fixed price's.
    assert_eq!(r.subscription.amount, Some(1200));
}

#[test]
fn a_renewal_without_an_outcome_is_refused() {
    let s = active(1500);
    assert_eq!(
        s.renew(after_period(&s), &terms(1500, None), None).err(),
        Some(SubscriptionError::MissingOutcome)
    );
}

#[test]
fn a_declined_renewal_is_past_due_then_retried_then_canceled() {
    let s = active(1500);
    let end = s.current_period_end.unwrap();
    let t = terms(1500, None);
    let r = s.renew(end, &t, Some(PaymentOutcome::Declined)).unwrap();
    // The renewal's order is written pending (see `recovery_tests.rs`).
    assert_eq!(r.order.as_ref().map(|o| o.status.as_str()), Some("pending"));
    let past_due = r.subscription;
    assert_eq!(past_due.status, SubscriptionStatus::PastDue);
    assert_eq!(past_due.cycles, 0, "the period does not move until paid");
    assert_eq!(past_due.current_period_end, Some(end));
    assert!(past_due.pending_revocations.is_empty());
    assert_eq!(past_due.due_at(), Some(end + RENEWAL_RETRY_DELAY));
    assert_eq!(past_due.past_due_at, Some(end));
    assert_eq!(past_due.last_attempt_at, Some(end));
    assert_eq!(
        past_due.next_payment_attempt_at,
        Some(end + RENEWAL_RETRY_DELAY)
    );
    assert_eq!(
        past_due.plan_renewal(end + Duration::days(1), &t),
        RenewalPlan::NotDue
    );
    let retry = charge(past_due.plan_renewal(end + RENEWAL_RETRY_DELAY, &t));
    assert_eq!(retry.cycle, 1);
    assert_eq!(
        retry.idempotency_key,
        format!("{}:1:{}", s.id, end.timestamp_micros())
    );

    // Declined again: the retry moves on, `past_due_at` stays when it first went past due.
    let again = past_due
        .renew(
            end + RENEWAL_RETRY_DELAY,
            &t,
            Some(PaymentOutcome::Declined),
        )
        .unwrap()
        .subscription;
    assert_eq!(again.past_due_at, Some(end));
    assert_eq!(again.last_attempt_at, Some(end + RENEWAL_RETRY_DELAY));
    assert_eq!(again.due_at(), Some(end + RENEWAL_RETRY_DELAY * 2));

    // Changing the subscription meanwhile (here its cancel flag's time) does not move the
    // retry nor its key.
    let mut touched = past_due.clone();
    touched.modified_at = Some(end + Duration::days(1));
    assert_eq!(touched.due_at(), past_due.due_at());
    assert_eq!(
        charge(touched.plan_renewal(end + RENEWAL_RETRY_DELAY, &t)).idempotency_key,
        retry.idempotency_key
    );

    // A retry that succeeds makes it active again, with the period it paid.
    let ok = past_due
        .renew(end + RENEWAL_RETRY_DELAY, &t, paid())
        .unwrap();
    assert_eq!(ok.subscription.status, SubscriptionStatus::Active);
    assert_eq!(ok.subscription.cycles, 1);
    assert_eq!(ok.subscription.current_period_start, end);
    assert!(ok.order.is_some());
    assert_eq!(
        (
            ok.subscription.past_due_at,
            ok.subscription.last_attempt_at,
            ok.subscription.next_payment_attempt_at
        ),
        (None, None, None),
        "a paid renewal ends the recovery"
    );

    // Still declined after the dunning period: canceled, keys to revoke.
    let late = end + DUNNING_PERIOD;
    let mut still = past_due.clone();
    still.next_payment_attempt_at = Some(late);
    let gone = still
        .renew(late, &t, Some(PaymentOutcome::Declined))
        .unwrap()
        .subscription;
    assert_eq!(gone.status, SubscriptionStatus::Canceled);
    assert_eq!(gone.ended_at, Some(late));
    assert_eq!(gone.pending_revocations, s.license_key_ids);
    assert_eq!(gone.due_at(), None);
    assert_eq!(gone.next_payment_attempt_at, None);
}

#[test]
fn cancel_at_period_end_ends_at_the_period_end_without_a_charge() {
    let s = active(1500);
    let now = t0() + Duration::days(3);
    let c = s
        .cancel_at_period_end(Some("too_expensive".into()), None, now)
        .unwrap();
    assert!(c.cancel_at_period_end);
    assert_eq!(c.status, SubscriptionStatus::Active);
    assert_eq!(c.canceled_at, Some(now));
    assert_eq!(c.ends_at, s.current_period_end);
    assert_eq!(
        c.customer_cancellation_reason.as_deref(),
        Some("too_expensive")
    );

    let end = c.current_period_end.unwrap();
    assert_eq!(c.plan_renewal(end, &terms(1500, None)), RenewalPlan::End);
    let r = c.renew(end, &terms(1500, None), None).unwrap();
    assert!(r.order.is_none());
    let ended = r.subscription;
    assert_eq!(ended.status, SubscriptionStatus::Canceled);
    assert_eq!(ended.ended_at, Some(end));
    assert_eq!(ended.ends_at, Some(end));
    assert_eq!(ended.canceled_at, Some(now));
    assert_eq!(ended.pending_revocations, s.license_key_ids);
    assert_eq!(ended.due_at(), None);
    assert_eq!(
        ended.plan_renewal(end + Duration::days(40), &terms(1500, None)),
        RenewalPlan::NotDue
    );
}

#[test]
fn cancel_is_refused_twice_and_when_not_active() {
    let s = active(1500);
    let c = s.cancel_at_period_end(None, None, t0()).unwrap();
    assert_eq!(
        c.cancel_at_period_end(None, None, t0()),
        Err(SubscriptionError::AlreadyCanceled)
    );
    let mut past_due = s.clone();
    past_due.status = SubscriptionStatus::PastDue;
    assert_eq!(
        past_due.cancel_at_period_end(None, None, t0()),
        Err(SubscriptionError::AlreadyCanceled)
    );
    let revoked = s.revoke(None, None, t0()).unwrap();
    assert_eq!(
        revoked.cancel_at_period_end(None, None, t0()),
        Err(SubscriptionError::AlreadyCanceled)
    );
}

#[test]
fn uncancel_clears_the_cancellation_and_is_refused_otherwise() {
    let s = active(1500);
    let c = s
        .cancel_at_period_end(Some("unused".into()), Some("meh".into()), t0())
        .unwrap();
    let u = c.uncancel(t0() + Duration::days(1)).unwrap();
    assert!(!u.cancel_at_period_end);
    assert_eq!((u.canceled_at, u.ends_at), (None, None));
    assert_eq!(u.customer_cancellation_reason, None);
    assert_eq!(u.customer_cancellation_comment, None);
    assert_eq!(u.due_at(), s.current_period_end);

    assert_eq!(s.uncancel(t0()), Err(SubscriptionError::NotCanceling));
    let revoked = c.revoke(None, None, t0()).unwrap();
    assert_eq!(revoked.uncancel(t0()), Err(SubscriptionError::Ended));
}

#[test]
fn revoke_ends_now_and_queues_the_keys() {
    let s = active(1500);
    let now = t0() + Duration::days(10);
    let r = s.revoke(None, Some("bye".into()), now).unwrap();
    assert_eq!(r.status, SubscriptionStatus::Canceled);
    assert_eq!(
        (r.canceled_at, r.ended_at, r.ends_at),
        (Some(now), Some(now), Some(now))
    );
    assert_eq!(r.pending_revocations, s.license_key_ids);
    assert_eq!(r.customer_cancellation_comment.as_deref(), Some("bye"));
    assert_eq!(r.due_at(), None);
    // A subscription set to cancel can still be revoked at once; an ended one cannot.
    let c = s.cancel_at_period_end(None, None, t0()).unwrap();
    assert!(c.revoke(None, None, now).is_ok());
    assert_eq!(
        r.revoke(None, None, now),
        Err(SubscriptionError::AlreadyCanceled)
    );
    let mut past_due = s;
    past_due.status = SubscriptionStatus::PastDue;
    assert_eq!(
        past_due.revoke(None, None, now),
        Err(SubscriptionError::AlreadyCanceled)
    );
}

#[test]
fn clear_revocations_removes_only_the_done_keys() {
    let s = active(1500);
    let r = s.revoke(None, None, t0()).unwrap();
    let first = r.pending_revocations[0];
    let left = r.clear_revocations(&[first], t0()).unwrap();
    assert_eq!(left.pending_revocations, vec![r.pending_revocations[1]]);
    assert_eq!(left.clear_revocations(&[first], t0()), None);
    let none = left
        .clear_revocations(&left.pending_revocations.clone(), t0())
        .unwrap();
    assert!(none.pending_revocations.is_empty());
}

#[test]
fn a_once_discount_applies_to_the_first_period_only() {
    let mut p = purchase(monthly_price(1000));
    p.discount = Some(discount(
        DiscountKind::Fixed {
            amount: 300,
            currency: "usd".into(),
        },
        DiscountDuration::Once,
    ));
    let s = Subscription::new_from_purchase(SubscriptionId::new(), p, t0()).unwrap();
    assert_eq!(s.amount, Some(700));
    let t = terms(1000, Some(DiscountDuration::Once));
    let now = after_period(&s);
    let c = charge(s.plan_renewal(now, &t));
    assert_eq!((c.amount, c.discounted), (1000, false));
    let r = s.renew(now, &t, paid()).unwrap();
    assert_eq!(r.subscription.amount, Some(1000));
    assert_eq!(r.subscription.discount_id, None);
    assert_eq!(r.subscription.discount_name, None);
    let order = r.order.unwrap();
    assert_eq!((order.amount, order.discount_id), (1000, None));
}

#[test]
fn a_forever_discount_is_kept() {
    let mut p = purchase(monthly_price(1000));
    p.discount = Some(discount(
        DiscountKind::Percentage { basis_points: 1000 },
        DiscountDuration::Forever,
    ));
    let mut s = Subscription::new_from_purchase(SubscriptionId::new(), p, t0()).unwrap();
    let t = terms(1000, Some(DiscountDuration::Forever));
    for _ in 0..3 {
        let r = s.renew(after_period(&s), &t, paid()).unwrap();
        let order = r.order.unwrap();
        assert_eq!(order.amount, 900);
        assert_eq!(order.discount_id, s.discount_id);
        assert_eq!(order.discount_name.as_deref(), Some("Launch"));
        s = r.subscription;
    }
    assert_eq!(s.amount, Some(900));
    assert!(s.discount_id.is_some());
}

#[test]
fn a_repeating_discount_lasts_its_months_worth_of_periods() {
    let mut p = purchase(monthly_price(1000));
    p.discount = Some(discount(
        DiscountKind::Fixed {
            amount: 100,
            currency: "usd".into(),
        },
        DiscountDuration::Repeating { months: 3 },
    ));
    let mut s = Subscription::new_from_purchase(SubscriptionId::new(), p.clone(), t0()).unwrap();
    let t = terms(1000, Some(DiscountDuration::Repeating { months: 3 }));
    // Periods 0, 1 and 2 are discounted; period 3 is not.
    let mut amounts = Vec::new();
    for _ in 0..4 {
        let r = s.renew(after_period(&s), &t, paid()).unwrap();
        amounts.push(r.order.unwrap().amount);
        s = r.subscription;
    }
    assert_eq!(amounts, vec![900, 900, 1000, 1000]);
    assert_eq!(s.discount_id, None);

    // Yearly: 13 months cover the first two yearly periods.
    p.price.kind = PriceKind::RecurringFixed {
        interval: RecurringInterval::Year,
        currency: "usd".into(),
        amount: 1000,
    };
    let mut y = Subscription::new_from_purchase(SubscriptionId::new(), p, t0()).unwrap();
    let t = terms(1000, Some(DiscountDuration::Repeating { months: 13 }));
    let mut amounts = Vec::new();
    for _ in 0..2 {
        let r = y.renew(after_period(&y), &t, paid()).unwrap();
        amounts.push(r.order.unwrap().amount);
        y = r.subscription;
    }
    assert_eq!(amounts, vec![900, 1000]);
}

#[test]
fn a_free_subscription_renews_with_a_zero_order() {
    let free = Price {
        kind: PriceKind::RecurringFree {
            interval: RecurringInterval::Month,
        },
        ..monthly_price(0)
    };
    let s = Subscription::new_from_purchase(SubscriptionId::new(), purchase(free), t0()).unwrap();
    let t = RenewalTerms::default();
    let c = charge(s.plan_renewal(after_period(&s), &t));
    assert_eq!((c.amount, c.currency.as_str()), (0, DEFAULT_CURRENCY));
    let r = s.renew(after_period(&s), &t, paid()).unwrap();
    assert_eq!(r.order.unwrap().amount, 0);
    assert_eq!(r.subscription.amount, None);
}

#[test]
fn statuses_group_as_polar_does() {
    let active: Vec<_> = SubscriptionStatus::ALL
        .iter()
        .filter(|s| s.is_active())
        .map(|s| s.as_str())
        .collect();
    let revoked: Vec<_> = SubscriptionStatus::ALL
        .iter()
        .filter(|s| s.is_revoked())
        .map(|s| s.as_str())
        .collect();
    assert_eq!(active, vec!["trialing", "active"]);
    assert_eq!(revoked, vec!["past_due", "canceled", "unpaid"]);
}

/// A quote of no tax (the default service's answer).
fn no_tax() -> crate::tax::TaxQuote {
    crate::tax::TaxQuote::zero(crate::tax::TaxRequest::new(
        0,
        "usd",
        chrono::NaiveDate::from_ymd_opt(2026, 1, 1).expect("a date"),
    ))
}
