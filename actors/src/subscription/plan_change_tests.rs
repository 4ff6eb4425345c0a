//! Unit and property tests of plan changes (`plan_change.rs`), renewal dates over every
//! interval and count, and trials (`renewal.rs`): the proration rounding against an
//! independent computation, the ledger that neither loses nor creates a cent over
//! thousands of random changes and renewals, and the calendar rules.

use super::*;
use crate::domain::custom_field::CustomFieldData;
use crate::domain::ids::{CheckoutId, CustomerId, OrganizationId};
use crate::domain::metadata::Metadata;
use crate::domain::product::PriceKind;
use crate::subscription::{
    trial_reminder_lead, PaymentOutcome, Purchase, RenewalPlan, RenewalTerms,
};
use chrono::{Datelike, Duration, TimeZone};

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
        self.next() % n.max(1)
    }
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2028, 1, 31, 9, 30, 0).unwrap()
}

fn price(interval: RecurringInterval, amount: Option<i64>, currency: &str) -> Price {
    Price {
        id: PriceId::new(),
        created_at: t0(),
        modified_at: None,
        is_archived: false,
        kind: match amount {
            Some(amount) => PriceKind::RecurringFixed {
                interval,
                currency: currency.into(),
                amount,
            },
            None => PriceKind::RecurringFree { interval },
        },
    }
}

fn purchase(price: Price, count: u32, trial_end: Option<DateTime<Utc>>) -> Purchase {
    Purchase {
        organization_id: OrganizationId::new(),
        customer_id: CustomerId::new(),
        customer_email: "jane@example.com".into(),
        product_id: ProductId::new(),
        product_name: "Basic".into(),
        price,
        amount: None,
        discount: None,
        checkout_id: Some(CheckoutId::new()),
        metadata: Metadata::default(),
        custom_field_data: CustomFieldData::default(),
        payment_token: Some("tok_visa".into()),
        license_key_ids: vec![LicenseKeyId::new()],
        interval_count: count,
        trial_end,
        seats: None,
    }
}

fn subscription(interval: RecurringInterval, count: u32, amount: i64) -> Subscription {
    let p = purchase(price(interval, Some(amount), "usd"), count, None);
    Subscription::new_from_purchase(SubscriptionId::new(), p, t0()).unwrap()
}

fn target(s: &Subscription, amount: i64) -> PlanTarget {
    let p = price(s.recurring_interval, Some(amount), "usd");
    PlanTarget::new(
        ProductId::new(),
        "Pro",
        &p,
        s.recurring_interval_count,
        Some(amount),
        false,
    )
    .unwrap()
}

fn paid() -> Option<PaymentOutcome> {
    Some(PaymentOutcome::Paid {
        tax: Box::new(no_tax()),
        payment_id: None,
    })
}

fn no_terms() -> RenewalTerms {
    RenewalTerms::default()
}

/// An independent rounding of `a × r / p` to the nearest integer, halves to even: the
/// nearest integer by half-up on doubled values, then an exact half moved to the even
/// neighbour.
fn reference_prorate(a: i64, r: i64, p: i64) -> i64 {
    let (a, r, p) = (a as i128, r as i128, p as i128);
    let twice = 2 * a * r; // 2 × exact value × p
    let half_up = (twice + p).div_euclid(2 * p);
    // Exactly halfway iff a × r ≡ p / 2 (mod p), i.e. 2ar ≡ p (mod 2p).
    let exact_half = twice.rem_euclid(2 * p) == p;
    let v = if exact_half && half_up % 2 != 0 {
        half_up - 1
    } else {
        half_up
    };
    v as i64
}

#[test]
fn proration_rounds_half_to_even_as_an_independent_computation_does() {
    assert_eq!(prorate(1000, 1, 2), 500);
    assert_eq!(prorate(1, 1, 2), 0); // 0.5 → 0
    assert_eq!(prorate(3, 1, 2), 2); // 1.5 → 2
    assert_eq!(prorate(5, 1, 2), 2); // 2.5 → 2
    assert_eq!(prorate(1000, 1, 3), 333);
    assert_eq!(prorate(2000, 1, 3), 667);
    assert_eq!(prorate(1000, 0, 30), 0);
    assert_eq!(prorate(1000, 30, 30), 1000);
    assert_eq!(
        prorate(1000, 40, 30),
        1000,
        "remaining is clamped to the period"
    );
    assert_eq!(prorate(1000, 5, 0), 0);
    let mut rng = Rng(31);
    for _ in 0..20_000 {
        let a = rng.below(10_000_000) as i64;
        let p = 1 + rng.below(400 * 86_400) as i64;
        let r = rng.below(p as u64 + 1) as i64;
        let got = prorate(a, r, p);
        assert_eq!(got, reference_prorate(a, r, p), "{a} × {r} / {p}");
        let exact = a as f64 * r as f64 / p as f64;
        assert!((got as f64 - exact).abs() <= 0.5 + 1e-6, "{a} × {r} / {p}");
    }
    // Exact halves, both parities.
    for q in 0..50i64 {
        let a = 2 * q + 1; // a / 2 = q + 0.5
        let expected = if q % 2 == 0 { q } else { q + 1 };
        assert_eq!(prorate(a, 1, 2), expected);
    }
}

#[test]
fn an_upgrade_mid_period_charges_the_difference_for_the_rest_of_it() {
    let s = subscription(RecurringInterval::Month, 1, 1000);
    let end = s.current_period_end.unwrap();
    let period = (end - s.current_period_start).num_seconds();
    let at = s.current_period_start + Duration::days(10);
    let remaining = (end - at).num_seconds();
    let t = target(&s, 3000);
    let c = s
        .plan_change(&t, ProrationBehavior::Invoice, at)
        .unwrap()
        .unwrap();
    assert_eq!(c.credit, prorate(1000, remaining, period));
    assert_eq!(c.debit, prorate(3000, remaining, period));
    assert_eq!(c.due_now, c.debit - c.credit);
    assert!(c.due_now > 0);
    assert_eq!(c.carried, 0);
    assert!(!c.resets_cycle);
    assert_eq!(c.number, 1);
    let keys = [LicenseKeyId::new()];
    let dropped = s.license_key_ids.clone();
    let next = s
        .apply_plan_change(&c, &keys, &dropped, at)
        .unwrap()
        .unwrap();
    assert_eq!(next.product_id, t.product_id);
    assert_eq!(next.price_id, t.price_id);
    assert_eq!(next.amount, Some(3000));
    assert_eq!(next.product_name, "Pro");
    assert_eq!(next.current_period_end, s.current_period_end);
    assert_eq!(next.plan_changes, 1);
    assert_eq!(next.proration_balance, 0);
    assert_eq!(next.license_key_ids, keys.to_vec());
    assert_eq!(next.pending_revocations, dropped);
    // Applied once: the same change again no longer matches.
    assert_eq!(next.apply_plan_change(&c, &keys, &[], at).unwrap(), None);
}

#[test]
fn with_prorate_the_difference_goes_on_the_next_renewal() {
    let s = subscription(RecurringInterval::Month, 1, 1000);
    let at = s.current_period_start + Duration::days(14);
    let c = s
        .plan_change(&target(&s, 2500), ProrationBehavior::Prorate, at)
        .unwrap()
        .unwrap();
    assert_eq!(c.due_now, 0);
    assert_eq!(c.carried, c.net());
    let next = s.apply_plan_change(&c, &[], &[], at).unwrap().unwrap();
    assert_eq!(next.proration_balance, c.net());
    let renewal_at = next.current_period_end.unwrap();
    let RenewalPlan::Charge(charge) = next.plan_renewal(renewal_at, &no_terms()) else {
        panic!("a renewal is due");
    };
    assert_eq!(charge.amount, 2500 + c.net());
    assert_eq!(charge.balance_applied, c.net());
    let renewed = next.renew(renewal_at, &no_terms(), paid()).unwrap();
    assert_eq!(renewed.subscription.proration_balance, 0);
    assert_eq!(renewed.order.unwrap().amount, 2500 + c.net());
}

#[test]
fn a_downgrade_credits_the_next_renewals_and_no_credit_is_lost() {
    let s = subscription(RecurringInterval::Month, 1, 10_000);
    let at = s.current_period_start + Duration::hours(1);
    // Invoice or not, a downgrade is a credit.
    let c = s
        .plan_change(&target(&s, 100), ProrationBehavior::Invoice, at)
        .unwrap()
        .unwrap();
    assert!(c.net() < -9000);
    assert_eq!((c.due_now, c.carried), (0, c.net()));
    let mut cur = s.apply_plan_change(&c, &[], &[], at).unwrap().unwrap();
    // 100 a month against a credit of ~9,800: the renewals are free until it is used up,
    // then the remainder is charged.
    let mut charged = Vec::new();
    for _ in 0..100 {
        let due = cur.current_period_end.unwrap();
        let r = cur.renew(due, &no_terms(), paid()).unwrap();
        charged.push(r.order.unwrap().amount);
        cur = r.subscription;
        if cur.proration_balance == 0 {
            break;
        }
    }
    assert!(charged.iter().all(|a| *a >= 0));
    let total: i64 = charged.iter().sum();
    assert_eq!(total, 100 * charged.len() as i64 + c.net());
    assert_eq!(cur.proration_balance, 0);
}

#[test]
fn a_new_interval_restarts_the_cycle_and_bills_a_whole_period_now() {
    let s = subscription(RecurringInterval::Month, 1, 1000);
    let at = s.current_period_start + Duration::days(10);
    let yearly = price(RecurringInterval::Year, Some(10_000), "usd");
    let t = PlanTarget::new(ProductId::new(), "Yearly", &yearly, 1, Some(10_000), false).unwrap();
    // Even with `prorate`, a new cycle is paid in advance.
    let c = s
        .plan_change(&t, ProrationBehavior::Prorate, at)
        .unwrap()
        .unwrap();
    assert!(c.resets_cycle);
    assert_eq!(c.debit, 10_000);
    assert_eq!(c.due_now, 10_000 - c.credit);
    let next = s.apply_plan_change(&c, &[], &[], at).unwrap().unwrap();
    assert_eq!(next.current_period_start, at);
    assert_eq!(
        next.current_period_end,
        Some(RecurringInterval::Year.add(at, 1))
    );
    assert_eq!(next.recurring_interval, RecurringInterval::Year);
    // The next renewal is a year after the change, and the one after two.
    let r = next
        .renew(next.current_period_end.unwrap(), &no_terms(), paid())
        .unwrap();
    assert_eq!(
        r.subscription.current_period_end,
        Some(RecurringInterval::Year.add(at, 2))
    );
    assert_eq!(r.order.unwrap().amount, 10_000);
}

#[test]
fn refusals_and_no_ops() {
    let s = subscription(RecurringInterval::Month, 1, 1000);
    let at = s.current_period_start + Duration::days(1);
    // The same plan: nothing to change.
    let same = PlanTarget {
        product_id: s.product_id,
        product_name: s.product_name.clone(),
        price_id: s.price_id,
        interval: s.recurring_interval,
        interval_count: 1,
        amount: s.amount,
        currency: s.currency.clone(),
        keeps_discount: true,
        seats: None,
    };
    assert_eq!(
        s.plan_change(&same, ProrationBehavior::Invoice, at),
        Ok(None)
    );
    let eur = price(RecurringInterval::Month, Some(900), "eur");
    let t = PlanTarget::new(ProductId::new(), "Euro", &eur, 1, Some(900), false).unwrap();
    assert_eq!(
        s.plan_change(&t, ProrationBehavior::Invoice, at),
        Err(SubscriptionError::CurrencyMismatch)
    );
    let canceling = s.cancel_at_period_end(None, None, at).unwrap();
    assert_eq!(
        canceling.plan_change(&target(&s, 2000), ProrationBehavior::Invoice, at),
        Err(SubscriptionError::AlreadyCanceled)
    );
    let revoked = s.revoke(None, None, at).unwrap();
    assert_eq!(
        revoked.plan_change(&target(&s, 2000), ProrationBehavior::Invoice, at),
        Err(SubscriptionError::AlreadyCanceled)
    );
    // A change decided before another change is stale.
    let c1 = s
        .plan_change(&target(&s, 2000), ProrationBehavior::Invoice, at)
        .unwrap()
        .unwrap();
    let c2 = s
        .plan_change(&target(&s, 3000), ProrationBehavior::Invoice, at)
        .unwrap()
        .unwrap();
    let after1 = s.apply_plan_change(&c1, &[], &[], at).unwrap().unwrap();
    assert_eq!(after1.apply_plan_change(&c2, &[], &[], at).unwrap(), None);
}

/// Thousands of random plan changes and renewals: every cent a change nets is either
/// charged at once or carried to a renewal, and the renewals charge exactly their amounts
/// plus what was carried (never below zero): nothing lost, nothing created.
#[test]
fn the_ledger_balances_over_thousands_of_random_changes() {
    let mut rng = Rng(2026);
    for round in 0..200 {
        let amount = 100 + rng.below(50_000) as i64;
        let mut s = subscription(RecurringInterval::Month, 1, amount);
        let (mut charged_now, mut renewal_charges, mut base_amounts, mut nets) =
            (0i64, 0i64, 0i64, 0i64);
        for _ in 0..25 {
            let start = s.current_period_start;
            let end = s.current_period_end.unwrap();
            let span = (end - start).num_seconds();
            if rng.below(3) == 0 {
                // Renew.
                let base = s.amount.unwrap_or(0);
                let r = s.renew(end, &no_terms(), paid()).unwrap();
                let order = r.order.unwrap();
                assert!(order.amount >= 0, "round {round}");
                renewal_charges += order.amount;
                base_amounts += base;
                s = r.subscription;
                continue;
            }
            let at = start + Duration::seconds(rng.below(span as u64) as i64);
            let new_amount = rng.below(60_000) as i64;
            let behavior = if rng.below(2) == 0 {
                ProrationBehavior::Invoice
            } else {
                ProrationBehavior::Prorate
            };
            let Some(c) = s
                .plan_change(&target(&s, new_amount), behavior, at)
                .unwrap()
            else {
                continue;
            };
            assert!(c.credit >= 0 && c.debit >= 0 && c.due_now >= 0);
            assert!(
                c.credit <= s.amount.unwrap_or(0),
                "never more than was paid"
            );
            assert_eq!(c.due_now + c.carried, c.net());
            charged_now += c.due_now;
            nets += c.net();
            s = s.apply_plan_change(&c, &[], &[], at).unwrap().unwrap();
        }
        // What was charged plus what is still owed (a credit: negative) is exactly what the
        // periods cost plus what the changes netted.
        assert_eq!(
            charged_now + renewal_charges + s.proration_balance,
            base_amounts + nets,
            "round {round}"
        );
    }
}

#[test]
fn a_change_and_its_reverse_at_the_same_time_cancel_out() {
    let mut rng = Rng(7);
    for _ in 0..2000 {
        let a = 1 + rng.below(100_000) as i64;
        let b = 1 + rng.below(100_000) as i64;
        let s = subscription(RecurringInterval::Month, 1, a);
        let span = (s.current_period_end.unwrap() - s.current_period_start).num_seconds();
        let at = s.current_period_start + Duration::seconds(rng.below(span as u64) as i64);
        let up = s
            .plan_change(&target(&s, b), ProrationBehavior::Prorate, at)
            .unwrap();
        let Some(up) = up else { continue };
        let mid = s.apply_plan_change(&up, &[], &[], at).unwrap().unwrap();
        let back = mid
            .plan_change(&target(&mid, a), ProrationBehavior::Prorate, at)
            .unwrap()
            .unwrap();
        assert_eq!(up.net() + back.net(), 0, "{a} → {b} → {a}");
    }
}

#[test]
fn while_trialing_a_change_prorates_nothing_and_the_trial_goes_on() {
    let trial_end = t0() + Duration::days(14);
    let p = purchase(
        price(RecurringInterval::Month, Some(1000), "usd"),
        1,
        Some(trial_end),
    );
    let s = Subscription::new_from_purchase(SubscriptionId::new(), p, t0()).unwrap();
    let at = t0() + Duration::days(3);
    let c = s
        .plan_change(&target(&s, 5000), ProrationBehavior::Invoice, at)
        .unwrap()
        .unwrap();
    assert!(c.trialing);
    assert_eq!((c.credit, c.debit, c.due_now, c.carried), (0, 0, 0, 0));
    let next = s.apply_plan_change(&c, &[], &[], at).unwrap().unwrap();
    assert_eq!(next.status, SubscriptionStatus::Trialing);
    assert_eq!(next.current_period_end, Some(trial_end));
    let RenewalPlan::Charge(charge) = next.plan_renewal(trial_end, &no_terms()) else {
        panic!("the first charge is due at the trial's end");
    };
    assert_eq!(charge.amount, 5000);
}

// ---------------------------------------------------------------------------------------
// Calendar rules
// ---------------------------------------------------------------------------------------

fn ymd(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 9, 30, 0).unwrap()
}

/// The period starts of a subscription renewed `n` times.
fn renewals(mut s: Subscription, n: usize) -> Vec<DateTime<Utc>> {
    let mut out = vec![s.current_period_start];
    for _ in 0..n {
        let end = s.current_period_end.unwrap();
        s = s.renew(end, &no_terms(), paid()).unwrap().subscription;
        out.push(s.current_period_start);
    }
    out
}

fn started(interval: RecurringInterval, count: u32, at: DateTime<Utc>) -> Subscription {
    let p = purchase(price(interval, Some(500), "usd"), count, None);
    Subscription::new_from_purchase(SubscriptionId::new(), p, at).unwrap()
}

#[test]
fn monthly_from_jan_31_renews_on_the_last_day_of_short_months() {
    let s = started(RecurringInterval::Month, 1, ymd(2028, 1, 31));
    assert_eq!(
        renewals(s, 4),
        vec![
            ymd(2028, 1, 31),
            ymd(2028, 2, 29), // leap year
            ymd(2028, 3, 31),
            ymd(2028, 4, 30),
            ymd(2028, 5, 31),
        ]
    );
    let s = started(RecurringInterval::Month, 1, ymd(2027, 1, 31));
    assert_eq!(renewals(s, 2)[1], ymd(2027, 2, 28));
}

#[test]
fn yearly_from_feb_29_renews_on_feb_28_then_feb_29_in_leap_years() {
    let s = started(RecurringInterval::Year, 1, ymd(2028, 2, 29));
    assert_eq!(
        renewals(s, 4),
        vec![
            ymd(2028, 2, 29),
            ymd(2029, 2, 28),
            ymd(2030, 2, 28),
            ymd(2031, 2, 28),
            ymd(2032, 2, 29),
        ]
    );
}

#[test]
fn days_and_weeks_are_fixed_lengths_and_counts_multiply() {
    let s = started(RecurringInterval::Day, 1, ymd(2028, 2, 28));
    assert_eq!(
        renewals(s, 2),
        vec![ymd(2028, 2, 28), ymd(2028, 2, 29), ymd(2028, 3, 1)]
    );
    let s = started(RecurringInterval::Week, 2, ymd(2028, 12, 25));
    assert_eq!(
        renewals(s, 2),
        vec![ymd(2028, 12, 25), ymd(2029, 1, 8), ymd(2029, 1, 22)]
    );
    let s = started(RecurringInterval::Month, 3, ymd(2028, 11, 30));
    assert_eq!(
        renewals(s, 3),
        vec![
            ymd(2028, 11, 30),
            ymd(2029, 2, 28),
            ymd(2029, 5, 30),
            ymd(2029, 8, 30)
        ]
    );
}

/// For every interval, random counts and starts: each period starts exactly `k × count`
/// intervals after the first (no drift), periods only move forwards, and a monthly or
/// yearly period starts on the start's day, or the month's last day if it is shorter.
#[test]
fn renewal_dates_for_every_interval_and_count_follow_the_calendar() {
    let mut rng = Rng(99);
    for _ in 0..400 {
        let interval = RecurringInterval::ALL[rng.below(4) as usize];
        let count = 1 + rng.below(if interval == RecurringInterval::Year {
            3
        } else {
            40
        }) as u32;
        let start = Utc
            .timestamp_opt(1_700_000_000 + rng.below(400_000_000) as i64, 0)
            .unwrap();
        let dates = renewals(started(interval, count, start), 13);
        for (k, d) in dates.iter().enumerate() {
            assert_eq!(*d, interval.add(start, count * k as u32));
            if k > 0 {
                assert!(*d > dates[k - 1]);
            }
            assert_eq!(d.time(), start.time());
            if matches!(interval, RecurringInterval::Month | RecurringInterval::Year) {
                let last = last_day_of_month(d.year(), d.month());
                assert_eq!(
                    d.day(),
                    start.day().min(last),
                    "{start} + {k} × {count} {interval:?}"
                );
            }
        }
    }
}

fn last_day_of_month(y: i32, m: u32) -> u32 {
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    (Utc.with_ymd_and_hms(ny, nm, 1, 0, 0, 0).unwrap() - Duration::days(1)).day()
}

// ---------------------------------------------------------------------------------------
// Trials
// ---------------------------------------------------------------------------------------

fn trialing(days: i64, amount: Option<i64>) -> Subscription {
    let p = purchase(
        price(RecurringInterval::Month, amount, "usd"),
        1,
        Some(t0() + Duration::days(days)),
    );
    Subscription::new_from_purchase(SubscriptionId::new(), p, t0()).unwrap()
}

#[test]
fn a_trial_is_free_then_charges_once_at_its_end_and_periods_follow_it() {
    let s = trialing(14, Some(1000));
    let trial_end = t0() + Duration::days(14);
    assert_eq!(s.status, SubscriptionStatus::Trialing);
    assert_eq!((s.trial_start, s.trial_end), (Some(t0()), Some(trial_end)));
    assert_eq!(s.current_period_end, Some(trial_end));
    // The reminder is due three days before the first charge, and only once.
    let remind = trial_end - Duration::days(3);
    assert_eq!(s.due_at(), Some(remind));
    assert_eq!(
        s.plan_renewal(remind - Duration::seconds(1), &no_terms()),
        RenewalPlan::NotDue
    );
    let plan = s.plan_renewal(remind, &no_terms());
    assert_eq!(plan, RenewalPlan::RemindTrial { trial_end });
    let reminded = s.renew(remind, &no_terms(), None).unwrap();
    assert!(reminded.order.is_none());
    let s = reminded.subscription;
    assert_eq!(s.modified_at, None, "the reminder is bookkeeping");
    assert_eq!(s.trial_reminded_for, Some(trial_end));
    assert_eq!(s.due_at(), Some(trial_end));
    assert_eq!(s.plan_renewal(remind, &no_terms()), RenewalPlan::NotDue);
    // At the trial's end: one charge of the full amount, then monthly from the end.
    let RenewalPlan::Charge(charge) = s.plan_renewal(trial_end, &no_terms()) else {
        panic!("the first charge is due");
    };
    assert_eq!((charge.cycle, charge.amount), (1, 1000));
    let r = s.renew(trial_end, &no_terms(), paid()).unwrap();
    let order = r.order.unwrap();
    assert_eq!(order.amount, 1000);
    let s = r.subscription;
    assert_eq!(s.status, SubscriptionStatus::Active);
    assert_eq!(s.current_period_start, trial_end);
    assert_eq!(
        s.current_period_end,
        Some(RecurringInterval::Month.add(trial_end, 1))
    );
    assert_eq!(s.trial_end, Some(trial_end), "the trial stays on record");
}

#[test]
fn a_declined_first_charge_after_a_trial_is_past_due() {
    let s = trialing(14, Some(1000));
    let end = s.current_period_end.unwrap();
    let r = s
        .renew(end, &no_terms(), Some(PaymentOutcome::Declined))
        .unwrap();
    assert_eq!(r.subscription.status, SubscriptionStatus::PastDue);
    assert_eq!(
        r.order.as_ref().map(|o| (o.status.as_str(), o.amount)),
        Some(("pending", 1000))
    );
}

#[test]
fn short_free_and_canceling_trials_get_no_reminder() {
    assert_eq!(trial_reminder_lead(Duration::hours(12)), None);
    assert_eq!(
        trial_reminder_lead(Duration::days(2)),
        Some(Duration::days(1))
    );
    assert_eq!(
        trial_reminder_lead(Duration::days(3)),
        Some(Duration::days(3))
    );
    let two_days = trialing(2, Some(1000));
    assert_eq!(two_days.trial_reminder_at(), Some(t0() + Duration::days(1)));
    assert_eq!(trialing(14, None).trial_reminder_at(), None);
    let s = trialing(14, Some(1000));
    let canceling = s.cancel_at_period_end(None, None, t0()).unwrap();
    assert_eq!(canceling.trial_reminder_at(), None);
    // Canceled during the trial: it ends at the trial's end, never charged.
    let end = canceling.current_period_end.unwrap();
    assert_eq!(canceling.plan_renewal(end, &no_terms()), RenewalPlan::End);
}

/// A quote of no tax (the default service's answer).
fn no_tax() -> crate::tax::TaxQuote {
    crate::tax::TaxQuote::zero(crate::tax::TaxRequest::new(
        0,
        "usd",
        chrono::NaiveDate::from_ymd_opt(2026, 1, 1).expect("a date"),
    ))
}
