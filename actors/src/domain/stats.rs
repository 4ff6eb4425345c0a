//! Day counters of an organization, for the dashboard's charts: kept as things happen, so a
//! chart reads one record per day instead of scanning orders or keys.
//!
//! Each type has one writer: [`SalesDay`] and [`SalesTotals`] the change-feed projector
//! (in the transaction that consumes the feed entries it counted, so each change is
//! counted once, across crashes too), [`ValidationDay`] the validation counter flusher.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::Record;

use super::ids::OrganizationId;

/// A UTC calendar day as days since 1970-01-01.
pub fn day_number(t: DateTime<Utc>) -> i64 {
    t.timestamp().div_euclid(86_400)
}

/// The date of a day number.
pub fn day_date(day: i64) -> NaiveDate {
    DateTime::<Utc>::from_timestamp(day.saturating_mul(86_400), 0)
        .unwrap_or_default()
        .date_naive()
}

fn day_key(org: OrganizationId, day: i64) -> Vec<u8> {
    let mut k = org.key();
    k.extend_from_slice(&KeyBuf::new().i64(day).into_vec());
    k
}

/// Orders, revenue and subscription starts and ends of one organization on one day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SalesDay {
    pub organization_id: OrganizationId,
    pub day: i64,
    pub orders: u64,
    /// Order amounts by currency (cents).
    pub revenue: BTreeMap<String, i64>,
    pub subscriptions_started: u64,
    pub subscriptions_ended: u64,
}

impl SalesDay {
    pub fn key(org: OrganizationId, day: i64) -> Vec<u8> {
        day_key(org, day)
    }

    pub fn empty(org: OrganizationId, day: i64) -> Self {
        SalesDay {
            organization_id: org,
            day,
            orders: 0,
            revenue: BTreeMap::new(),
            subscriptions_started: 0,
            subscriptions_ended: 0,
        }
    }
}

impl Record for SalesDay {
    crate::record_v1!(SalesDay, "stats_sales_day");

    fn id_key(&self) -> Vec<u8> {
        day_key(self.organization_id, self.day)
    }
}

/// Running totals of one organization: the subscriptions active now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SalesTotals {
    pub organization_id: OrganizationId,
    pub active_subscriptions: i64,
}

impl Record for SalesTotals {
    crate::record_v1!(SalesTotals, "stats_sales_totals");

    fn id_key(&self) -> Vec<u8> {
        self.organization_id.key()
    }
}

/// License-key validations of one organization on one day: answered valid, and refused
/// (the key exists but is expired, disabled, revoked, over its usage limit or the
/// activation does not match).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationDay {
    pub organization_id: OrganizationId,
    pub day: i64,
    pub succeeded: u64,
    pub refused: u64,
}

impl ValidationDay {
    pub fn key(org: OrganizationId, day: i64) -> Vec<u8> {
        day_key(org, day)
    }

    pub fn empty(org: OrganizationId, day: i64) -> Self {
        ValidationDay {
            organization_id: org,
            day,
            succeeded: 0,
            refused: 0,
        }
    }
}

impl Record for ValidationDay {
    crate::record_v1!(ValidationDay, "stats_validation_day");

    fn id_key(&self) -> Vec<u8> {
        day_key(self.organization_id, self.day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{hex, uuid};

    #[test]
    fn round_trip_and_golden_bytes() {
        let org = OrganizationId(uuid(1));
        let mut sales = SalesDay::empty(org, 20_417);
        sales.orders = 3;
        sales.revenue.insert("usd".into(), 7_500);
        sales.revenue.insert("eur".into(), -100);
        sales.subscriptions_started = 2;
        sales.subscriptions_ended = 1;
        let totals = SalesTotals {
            organization_id: org,
            active_subscriptions: -1,
        };
        let validations = ValidationDay {
            organization_id: org,
            day: -1,
            succeeded: 70_000,
            refused: 5,
        };
        let (a, b, c) = (
            sales.encode().unwrap_or_default(),
            totals.encode().unwrap_or_default(),
            validations.encode().unwrap_or_default(),
        );
        assert_eq!(SalesDay::decode(1, &a).ok(), Some(sales));
        assert_eq!(SalesTotals::decode(1, &b).ok(), Some(totals));
        assert_eq!(ValidationDay::decode(1, &c).ok(), Some(validations));
        assert_eq!(
            (
                SalesDay::COLLECTION,
                SalesTotals::COLLECTION,
                ValidationDay::COLLECTION
            ),
            (
                "stats_sales_day",
                "stats_sales_totals",
                "stats_validation_day"
            )
        );
        assert_eq!(
            [hex(&a), hex(&b), hex(&c)],
            [GOLDEN_SALES, GOLDEN_TOTALS, GOLDEN_VALIDATIONS],
            "stats formats v1 changed"
        );
    }

    const GOLDEN_SALES: &str =
        "1000000000000000000000000000000001fb829f030203657572c703757364fb983a0201";
    const GOLDEN_TOTALS: &str = "100000000000000000000000000000000101";
    const GOLDEN_VALIDATIONS: &str = "100000000000000000000000000000000101fc7011010005";

    #[test]
    fn day_numbers_are_utc_days_and_keys_sort_by_day() {
        let t = DateTime::parse_from_rfc3339("2026-11-25T23:59:59Z")
            .unwrap()
            .with_timezone(&Utc);
        let d = day_number(t);
        assert_eq!(day_number(t + chrono::Duration::seconds(1)), d + 1);
        assert_eq!(day_date(d).to_string(), "2026-11-25");
        assert_eq!(day_number(DateTime::<Utc>::UNIX_EPOCH), 0);
        assert_eq!(
            day_number(DateTime::<Utc>::UNIX_EPOCH - chrono::Duration::seconds(1)),
            -1
        );
        let org = OrganizationId::new();
        assert!(SalesDay::key(org, -1) < SalesDay::key(org, 0));
        assert!(SalesDay::key(org, d) < SalesDay::key(org, d + 1));
    }
}
