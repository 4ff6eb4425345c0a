//! What a product's benefits grant, for a purchase, a renewal, a plan change and a claim:
//! pure rules over the benefit, the facts of the occasion and the time. They answer what to
//! grant ([`KeyGrant`]: a license key's limits and how long it validates, or a key's new
//! term on a renewal); the caller composes its own write from that (the key's id, its
//! value, what it belongs to: [`crate::license_key::LicenseKey::from_grant`]).
//!
//! The rules:
//! - a one-time purchase's or a claim's key validates for the benefit's own expiry
//!   ([`key_expiry`]), forever without one;
//! - a subscription's key follows the subscription: it validates for the period paid
//!   (`paid_until`) plus the benefit's grace ([`grace_end`]), whatever the benefit's own
//!   expiry; with a trial, the period paid for (for free) is the trial;
//! - a renewal moves `paid_until` to the new period's end, and the expiry with it;
//! - a plan change grants the keys of the new product's benefits no kept key covers, paid
//!   until the new period's end when the change resets the cycle, else the current one's.

use chrono::{DateTime, Duration, Months, Utc};

use super::benefit::DEFAULT_GRACE_DAYS;
use super::benefit::{Benefit, BenefitProperties, KeyQuantity, LicenseKeyProperties, Timeframe};
use super::ids::BenefitId;
use super::product::RecurringInterval;

/// A license key a benefit grants: its limits and how long it validates.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyGrant {
    pub benefit_id: BenefitId,
    /// The prefix of a value drawn for it (`generate_key`).
    pub prefix: Option<String>,
    pub limit_activations: Option<i64>,
    /// Whether the key's activation at the limit may replace one (`activations.allow_replacement`).
    pub allow_replacement: bool,
    pub limit_usage: Option<i64>,
    pub granted_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    /// For a subscription's key: the end of the period paid for.
    pub paid_until: Option<DateTime<Utc>>,
}

/// How long a subscription's key validates: the period paid and that plus the grace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyTerm {
    pub paid_until: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// When a key granted at `now` expires: `ttl` calendar years, months or days later.
pub fn key_expiry(now: DateTime<Utc>, ttl: i64, timeframe: Timeframe) -> Option<DateTime<Utc>> {
    let n = u32::try_from(ttl).ok()?;
    match timeframe {
        Timeframe::Day => now.checked_add_signed(Duration::days(ttl)),
        Timeframe::Month => now.checked_add_months(Months::new(n)),
        Timeframe::Year => now.checked_add_months(Months::new(n.checked_mul(12)?)),
    }
}

/// When a subscription's key stops validating if its period `paid_until` is not renewed:
/// `grace_days` later.
pub fn grace_end(paid_until: DateTime<Utc>, grace_days: u32) -> DateTime<Utc> {
    paid_until
        .checked_add_signed(Duration::days(i64::from(grace_days)))
        .unwrap_or(paid_until)
}

/// The license-key properties of a benefit, if it grants keys.
fn key_properties(benefit: &Benefit) -> Option<&LicenseKeyProperties> {
    match &benefit.properties {
        BenefitProperties::LicenseKeys(p) => Some(p),
        _ => None,
    }
}

/// The key benefit `benefit_id` (`props`) grants at `at`: for a subscription paid until
/// `paid_until` (its term), else for the benefit's own expiry.
pub fn key_grant(
    benefit_id: BenefitId,
    props: &LicenseKeyProperties,
    at: DateTime<Utc>,
    paid_until: Option<DateTime<Utc>>,
) -> KeyGrant {
    KeyGrant {
        benefit_id,
        prefix: props.prefix.clone(),
        limit_activations: props.activations.map(|a| a.limit),
        allow_replacement: props.activations.is_some_and(|a| a.allow_replacement),
        limit_usage: props.limit_usage,
        granted_at: at,
        expires_at: match paid_until {
            Some(paid) => Some(grace_end(paid, props.grace_days)),
            None => props
                .expires
                .and_then(|e| key_expiry(at, e.ttl, e.timeframe)),
        },
        paid_until,
    }
}

/// The end of the first period a purchase at `at` pays for: the trial's end if it has a
/// trial still to run, else `count` intervals later.
pub fn first_period_end(
    interval: RecurringInterval,
    count: u32,
    trial_end: Option<DateTime<Utc>>,
    at: DateTime<Utc>,
) -> DateTime<Utc> {
    trial_end
        .filter(|end| *end > at)
        .unwrap_or_else(|| interval.add(at, count))
}

/// What a purchase at `at` grants: a key per license-key benefit, paid until `paid_until`
/// when the purchase starts a subscription ([`first_period_end`]), else for the benefit's
/// own expiry.
pub fn purchase(
    benefits: &[Benefit],
    at: DateTime<Utc>,
    paid_until: Option<DateTime<Utc>>,
) -> Vec<KeyGrant> {
    purchase_of(benefits, at, paid_until, 1)
}

/// What a purchase of `units` (the seats of a seat-based price; 0 reads as 1) at `at`
/// grants, per license-key benefit as its quantity rule says: one key with `units` times
/// the activation limit ([`KeyQuantity::OneKey`]; a key without a limit stays without
/// one), or `units` keys each with the limit ([`KeyQuantity::KeyPerUnit`]). One unit
/// grants what [`purchase`] does.
pub fn purchase_of(
    benefits: &[Benefit],
    at: DateTime<Utc>,
    paid_until: Option<DateTime<Utc>>,
    units: u32,
) -> Vec<KeyGrant> {
    let units = units.max(1);
    let mut out = Vec::new();
    for b in benefits {
        let Some(p) = key_properties(b) else { continue };
        let grant = key_grant(b.id, p, at, paid_until);
        match p.quantity {
            KeyQuantity::OneKey => out.push(KeyGrant {
                limit_activations: grant
                    .limit_activations
                    .map(|l| l.saturating_mul(i64::from(units))),
                ..grant
            }),
            KeyQuantity::KeyPerUnit => {
                out.extend(std::iter::repeat_n(grant, units as usize));
            }
        }
    }
    out
}

/// A subscription's key of `benefit` (`None`: gone) once a renewal paid until
/// `paid_until`: the grace is the benefit's, the default one if it no longer grants keys.
pub fn renewal(benefit: Option<&Benefit>, paid_until: DateTime<Utc>) -> KeyTerm {
    let grace = benefit
        .and_then(key_properties)
        .map_or(DEFAULT_GRACE_DAYS, |p| p.grace_days);
    KeyTerm {
        paid_until,
        expires_at: grace_end(paid_until, grace),
    }
}

/// The period a plan change's keys are paid until: the new period's end (`period_end`)
/// when the change resets the cycle, else the current period's (`period_end` if the
/// subscription has none).
pub fn plan_change_paid_until(
    resets_cycle: bool,
    period_end: DateTime<Utc>,
    current_period_end: Option<DateTime<Utc>>,
) -> DateTime<Utc> {
    if resets_cycle {
        period_end
    } else {
        current_period_end.unwrap_or(period_end)
    }
}

/// What a plan change at `at` grants: a key per license-key benefit of the new product
/// (`benefits`) that no kept key covers (`covered`: the benefits of the keys kept), paid
/// until `paid_until` ([`plan_change_paid_until`]).
pub fn plan_change(
    benefits: &[Benefit],
    covered: &[BenefitId],
    at: DateTime<Utc>,
    paid_until: DateTime<Utc>,
) -> Vec<KeyGrant> {
    benefits
        .iter()
        .filter(|b| !covered.contains(&b.id))
        .filter_map(|b| key_properties(b).map(|p| key_grant(b.id, p, at, Some(paid_until))))
        .collect()
}

/// What claiming a generated key of benefit `benefit_id` (`props`) at `at` grants: the key,
/// valid for the benefit's own expiry (nothing pays for it).
pub fn claim(benefit_id: BenefitId, props: &LicenseKeyProperties, at: DateTime<Utc>) -> KeyGrant {
    key_grant(benefit_id, props, at, None)
}

#[cfg(test)]
#[path = "grants_tests.rs"]
mod tests;
