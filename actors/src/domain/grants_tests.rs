//! Unit tests of what benefits grant (`grants.rs`).

use super::*;
use crate::domain::benefit::{KeyActivations, KeyExpiry, KeyQuantity, Visibility};
use crate::domain::ids::OrganizationId;
use crate::domain::metadata::Metadata;

fn at(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(secs, 0).unwrap_or_default()
}

fn now() -> DateTime<Utc> {
    // 2027-01-15T08:00:00Z
    at(1_800_000_000)
}

fn benefit(properties: BenefitProperties) -> Benefit {
    Benefit {
        id: BenefitId::new(),
        organization_id: OrganizationId::new(),
        created_at: now(),
        modified_at: None,
        description: "Keys".into(),
        selectable: true,
        deletable: true,
        properties,
        deleted_at: None,
        metadata: Metadata::default(),
        visibility: Visibility::Public,
    }
}

fn keys(expires: Option<KeyExpiry>, grace_days: u32) -> Benefit {
    benefit(BenefitProperties::LicenseKeys(LicenseKeyProperties {
        prefix: Some("TG".into()),
        expires,
        activations: Some(KeyActivations {
            limit: 3,
            enable_customer_admin: true,
            allow_replacement: false,
        }),
        limit_usage: Some(10),
        allow_customer_rotation: true,
        grace_days,
        quantity: KeyQuantity::OneKey,
    }))
}

fn a_year() -> Option<KeyExpiry> {
    Some(KeyExpiry {
        ttl: 1,
        timeframe: Timeframe::Year,
    })
}

#[test]
fn key_expiry_counts_calendar_days_months_and_years() {
    assert_eq!(
        key_expiry(now(), 10, Timeframe::Day),
        Some(now() + Duration::days(10))
    );
    assert_eq!(
        key_expiry(at(1_798_761_600), 1, Timeframe::Month), // 2027-01-01
        Some(at(1_801_440_000))                             // 2027-02-01
    );
    assert_eq!(
        key_expiry(now(), 2, Timeframe::Year),
        now().checked_add_months(Months::new(24))
    );
    assert_eq!(key_expiry(now(), -1, Timeframe::Month), None);
}

#[test]
fn grace_end_adds_the_grace_days() {
    assert_eq!(grace_end(now(), 3), now() + Duration::days(3));
    assert_eq!(grace_end(now(), 0), now());
}

#[test]
fn a_one_time_purchase_grants_a_key_per_key_benefit_for_its_own_expiry() {
    let key = keys(a_year(), 5);
    let forever = keys(None, 5);
    let other = benefit(BenefitProperties::Custom { note: None });
    let grants = purchase(&[key.clone(), other, forever.clone()], now(), None);
    assert_eq!(
        grants,
        vec![
            KeyGrant {
                benefit_id: key.id,
                prefix: Some("TG".into()),
                limit_activations: Some(3),
                allow_replacement: false,
                limit_usage: Some(10),
                granted_at: now(),
                expires_at: key_expiry(now(), 1, Timeframe::Year),
                paid_until: None,
            },
            KeyGrant {
                benefit_id: forever.id,
                expires_at: None,
                ..grants[0].clone()
            },
        ]
    );
}

#[test]
fn a_subscriptions_key_follows_the_period_paid_plus_the_grace_not_the_benefits_expiry() {
    let key = keys(a_year(), 5);
    let paid = first_period_end(RecurringInterval::Month, 1, None, now());
    assert_eq!(paid, now().checked_add_months(Months::new(1)).unwrap());
    let grants = purchase(std::slice::from_ref(&key), now(), Some(paid));
    assert_eq!(grants[0].paid_until, Some(paid));
    assert_eq!(grants[0].expires_at, Some(paid + Duration::days(5)));
}

#[test]
fn with_a_trial_the_first_period_is_the_trial() {
    let trial_end = now() + Duration::days(14);
    assert_eq!(
        first_period_end(RecurringInterval::Year, 1, Some(trial_end), now()),
        trial_end
    );
    // A trial already over counts for nothing.
    assert_eq!(
        first_period_end(RecurringInterval::Day, 2, Some(now()), now()),
        now() + Duration::days(2)
    );
}

#[test]
fn a_renewal_moves_the_term_with_the_benefits_grace_or_the_default() {
    let until = now() + Duration::days(30);
    let key = keys(None, 7);
    assert_eq!(
        renewal(Some(&key), until),
        KeyTerm {
            paid_until: until,
            expires_at: until + Duration::days(7)
        }
    );
    let gone = renewal(None, until);
    assert_eq!(
        gone.expires_at,
        until + Duration::days(i64::from(DEFAULT_GRACE_DAYS))
    );
    let custom = benefit(BenefitProperties::Custom { note: None });
    assert_eq!(renewal(Some(&custom), until), gone);
}

#[test]
fn a_plan_change_grants_the_keys_no_kept_key_covers() {
    let kept = keys(None, 2);
    let new = keys(a_year(), 4);
    let end = now() + Duration::days(20);
    let grants = plan_change(&[kept.clone(), new.clone()], &[kept.id], now(), end);
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].benefit_id, new.id);
    assert_eq!(grants[0].paid_until, Some(end));
    assert_eq!(grants[0].expires_at, Some(end + Duration::days(4)));
    assert_eq!(grants[0].granted_at, now());

    let current = now() + Duration::days(5);
    assert_eq!(plan_change_paid_until(true, end, Some(current)), end);
    assert_eq!(plan_change_paid_until(false, end, Some(current)), current);
    assert_eq!(plan_change_paid_until(false, end, None), end);
}

#[test]
fn a_claim_grants_the_key_for_the_benefits_own_expiry() {
    let b = keys(a_year(), 9);
    let BenefitProperties::LicenseKeys(props) = &b.properties else {
        unreachable!()
    };
    let g = claim(b.id, props, now());
    assert_eq!(g.paid_until, None);
    assert_eq!(g.expires_at, key_expiry(now(), 1, Timeframe::Year));
    assert_eq!(g.limit_activations, Some(3));
}

#[test]
fn a_grant_carries_the_benefits_allow_replacement() {
    let mut b = keys(None, 5);
    if let BenefitProperties::LicenseKeys(p) = &mut b.properties {
        if let Some(a) = p.activations.as_mut() {
            a.allow_replacement = true;
        }
    }
    assert!(purchase(std::slice::from_ref(&b), now(), None)[0].allow_replacement);
    assert!(!purchase(&[keys(None, 5)], now(), None)[0].allow_replacement);
    // No activation limit: nothing to replace.
    if let BenefitProperties::LicenseKeys(p) = &mut b.properties {
        p.activations = None;
    }
    assert!(!purchase(&[b], now(), None)[0].allow_replacement);
}

fn with_quantity(mut b: Benefit, quantity: KeyQuantity) -> Benefit {
    if let BenefitProperties::LicenseKeys(p) = &mut b.properties {
        p.quantity = quantity;
    }
    b
}

#[test]
fn a_purchase_of_seats_grants_one_key_with_the_limit_times_n_or_n_keys() {
    let one = with_quantity(keys(None, 7), KeyQuantity::OneKey);
    let per = with_quantity(keys(None, 7), KeyQuantity::KeyPerUnit);
    let custom = benefit(BenefitProperties::Custom { note: None });
    let benefits = [one.clone(), custom, per.clone()];
    let got = purchase_of(&benefits, now(), None, 3);
    assert_eq!(got.len(), 4);
    assert_eq!(got[0].benefit_id, one.id);
    assert_eq!(got[0].limit_activations, Some(9));
    assert_eq!(got[0].limit_usage, Some(10));
    for g in &got[1..] {
        assert_eq!(g.benefit_id, per.id);
        assert_eq!(g.limit_activations, Some(3));
    }
    // One seat (or none given) grants what a purchase always did, under either rule.
    for units in [0, 1] {
        assert_eq!(
            purchase_of(&benefits, now(), None, units),
            purchase(&benefits, now(), None)
        );
    }
    let single = purchase(&benefits, now(), None);
    assert_eq!(single.len(), 2);
    assert!(single.iter().all(|g| g.limit_activations == Some(3)));
}

#[test]
fn a_key_without_an_activation_limit_stays_unlimited_for_any_seat_count() {
    let mut b = with_quantity(keys(None, 7), KeyQuantity::OneKey);
    if let BenefitProperties::LicenseKeys(p) = &mut b.properties {
        p.activations = None;
    }
    let got = purchase_of(&[b], now(), Some(now()), 5);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].limit_activations, None);
    assert_eq!(got[0].paid_until, Some(now()));
}
