//! The arithmetic of `GET /v1/meters/{id}/quantities` (Polar's `meter/service.py`
//! `get_quantities`, `kit/time_queries.py`), pure: the series points, their buckets in the
//! request's time zone, the range limits, and the fold of 15-minute rows into bucket
//! quantities and the total.
//!
//! * Points are PostgreSQL's `generate_series(start, end, '1 <interval>')` in the zone:
//!   each point adds the interval to the previous one, months and days on the local
//!   calendar, hours as 3,600 seconds; the points are returned as they are (not truncated).
//! * A point's quantity is the aggregate of the events in its bucket, the zone's
//!   `date_trunc(interval, point)` to the next truncation; 0 when empty.
//! * `total`: the sum of the bucket quantities for `count`/`sum`, their max/min (empty
//!   buckets ignored) for `max`/`min`; for `avg` and `unique` it is recomputed from the
//!   rows of the covered buckets (Polar's counts every matching event, unbounded: a
//!   documented difference).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime};
use chrono::{Months, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use tollgate_storage::Agg;

use super::keys::BUCKET_SECS;
pub use crate::domain::meter::{under_limits, Func, Interval};

/// A local time as an instant of the zone: the earlier of two in a fall-back overlap, the
/// first instant after a spring-forward gap.
fn resolve(tz: Tz, local: NaiveDateTime) -> Option<DateTime<Utc>> {
    match tz.from_local_datetime(&local) {
        LocalResult::Single(t) => Some(t.with_timezone(&Utc)),
        LocalResult::Ambiguous(a, b) => Some(a.min(b).with_timezone(&Utc)),
        LocalResult::None => {
            // Gaps last at most a few hours: the first local minute that exists.
            (1..=24 * 4).find_map(|q| {
                match tz.from_local_datetime(&(local + Duration::minutes(15 * q))) {
                    LocalResult::Single(t) => Some(t.with_timezone(&Utc)),
                    LocalResult::Ambiguous(a, _) => Some(a.with_timezone(&Utc)),
                    LocalResult::None => None,
                }
            })
        }
    }
}

/// PostgreSQL's `timestamptz + interval '1 <interval>'` in the zone.
fn step(t: DateTime<Utc>, interval: Interval, tz: Tz) -> Option<DateTime<Utc>> {
    let local = t.with_timezone(&tz).naive_local();
    let next = match interval {
        Interval::Hour => return t.checked_add_signed(Duration::hours(1)),
        Interval::Day => local.checked_add_signed(Duration::days(1))?,
        Interval::Week => local.checked_add_signed(Duration::days(7))?,
        Interval::Month => local.checked_add_months(Months::new(1))?,
        Interval::Year => local.checked_add_months(Months::new(12))?,
    };
    resolve(tz, next)
}

/// PostgreSQL's `date_trunc(interval, t)` in the zone.
pub fn truncate(t: DateTime<Utc>, interval: Interval, tz: Tz) -> Option<DateTime<Utc>> {
    let local = t.with_timezone(&tz);
    if interval == Interval::Hour {
        // The instant itself minus its local minutes and seconds (exact in fall-back hours).
        let into = i64::from(local.minute()) * 60 + i64::from(local.second());
        let base = t.timestamp() - into;
        return Utc.timestamp_opt(base, 0).single();
    }
    let date = local.date_naive();
    let day: NaiveDate = match interval {
        Interval::Day => date,
        Interval::Week => date - Duration::days(i64::from(date.weekday().num_days_from_monday())),
        Interval::Month => date.with_day(1)?,
        Interval::Year => NaiveDate::from_ymd_opt(date.year(), 1, 1)?,
        Interval::Hour => date,
    };
    resolve(tz, day.and_hms_opt(0, 0, 0)?)
}

/// One entry of the series: the point and its bucket's UTC range (epoch seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    pub timestamp: DateTime<Utc>,
    pub from: i64,
    pub to: i64,
}

/// The series of `[start, end]` (both included as PostgreSQL's `generate_series`). The
/// caller has checked [`under_limits`], which bounds the count.
pub fn series(start: DateTime<Utc>, end: DateTime<Utc>, interval: Interval, tz: Tz) -> Vec<Point> {
    let mut out = Vec::new();
    let mut p = start;
    while p <= end && out.len() < 100_000 {
        let Some(from) = truncate(p, interval, tz) else {
            break;
        };
        let Some(to) = step(from, interval, tz) else {
            break;
        };
        out.push(Point {
            timestamp: p,
            from: from.timestamp(),
            to: to.timestamp(),
        });
        match step(p, interval, tz) {
            Some(next) if next > p => p = next,
            _ => break,
        }
    }
    out
}

/// The first 15-minute bucket at or after `secs` (bucket rows cover `[b, b + 15 min)`).
pub fn bucket_ceil(secs: i64) -> i64 {
    secs.div_euclid(BUCKET_SECS) * BUCKET_SECS
        + if secs.rem_euclid(BUCKET_SECS) == 0 {
            0
        } else {
            BUCKET_SECS
        }
}

/// What a set of rows holds: their merged aggregate and, for `unique` meters, their
/// distinct members.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub agg: Agg,
    pub members: BTreeSet<Vec<u8>>,
}

impl Default for Cell {
    fn default() -> Self {
        Cell {
            agg: Agg::EMPTY,
            members: BTreeSet::new(),
        }
    }
}

impl Cell {
    /// The meter's quantity of these rows; `None` when they hold no event.
    pub fn value(&self, func: Func) -> Option<f64> {
        match func {
            Func::Unique => (!self.members.is_empty()).then(|| self.members.len() as f64),
            _ if self.agg.n <= 0 => None,
            Func::Count => Some(self.agg.n as f64),
            Func::Sum => Some(self.agg.sum),
            Func::Max => Some(self.agg.max),
            Func::Min => Some(self.agg.min),
            Func::Avg => Some(self.agg.sum / self.agg.n as f64),
        }
    }
}

/// The 15-minute rows a quantities request reads: `(group, bucket) → aggregate`, and for
/// `unique` meters `(group, bucket) → members`. A group is a customer (its scopes merged)
/// or, without a per-customer function, the one group of all the rows read.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    pub aggs: BTreeMap<(i64, usize), Agg>,
    pub members: BTreeMap<(i64, usize), BTreeSet<Vec<u8>>>,
}

impl Rows {
    pub fn add(&mut self, bucket: i64, group: usize, agg: &Agg) {
        self.aggs
            .entry((bucket, group))
            .or_insert(Agg::EMPTY)
            .merge(agg);
    }

    pub fn add_member(&mut self, bucket: i64, group: usize, member: Vec<u8>) {
        self.members
            .entry((bucket, group))
            .or_default()
            .insert(member);
    }

    /// The cells of each group in the UTC range `[from, to)`.
    fn cells(&self, from: i64, to: i64) -> BTreeMap<usize, Cell> {
        let mut out: BTreeMap<usize, Cell> = BTreeMap::new();
        for ((_, g), agg) in self.aggs.range((from, 0)..(to, 0)) {
            out.entry(*g).or_default().agg.merge(agg);
        }
        for ((_, g), members) in self.members.range((from, 0)..(to, 0)) {
            out.entry(*g)
                .or_default()
                .members
                .extend(members.iter().cloned());
        }
        out
    }

    /// All the groups' rows in `[from, to)` as one cell.
    fn merged(&self, from: i64, to: i64) -> Cell {
        let mut cell = Cell::default();
        for c in self.cells(from, to).into_values() {
            cell.agg.merge(&c.agg);
            cell.members.extend(c.members);
        }
        cell
    }
}

/// Combines per-customer quantities with `customer_aggregation_function`; `None` when no
/// customer had any.
fn across(values: &[f64], func: Func) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(match func {
        Func::Count => values.len() as f64,
        Func::Sum => values.iter().sum(),
        Func::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Func::Min => values.iter().copied().fold(f64::INFINITY, f64::min),
        Func::Avg => values.iter().sum::<f64>() / values.len() as f64,
        Func::Unique => values
            .iter()
            .map(|v| v.to_bits())
            .collect::<BTreeSet<_>>()
            .len() as f64,
    })
}

/// The answer: each point's quantity and the total.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantities {
    pub quantities: Vec<(DateTime<Utc>, f64)>,
    pub total: f64,
}

/// Folds the rows into the series' quantities and total. `func` is the meter's;
/// `per_customer` the request's `customer_aggregation_function`.
pub fn fold(points: &[Point], rows: &Rows, func: Func, per_customer: Option<Func>) -> Quantities {
    let mut quantities = Vec::with_capacity(points.len());
    let mut non_empty: Vec<f64> = Vec::new();
    for p in points {
        let (from, to) = (bucket_ceil(p.from), bucket_ceil(p.to));
        let value = match per_customer {
            None => rows.merged(from, to).value(func),
            Some(cf) => {
                let per: Vec<f64> = rows
                    .cells(from, to)
                    .values()
                    .filter_map(|c| c.value(func))
                    .collect();
                across(&per, cf)
            }
        };
        if let Some(v) = value {
            non_empty.push(v);
        }
        quantities.push((p.timestamp, value.unwrap_or(0.0)));
    }
    let total = match func {
        // Over the series' entries, as Polar's `sum(quantity)` of the series.
        Func::Count | Func::Sum => quantities.iter().map(|(_, q)| q).sum(),
        Func::Max => non_empty.iter().copied().reduce(f64::max).unwrap_or(0.0),
        Func::Min => non_empty.iter().copied().reduce(f64::min).unwrap_or(0.0),
        Func::Avg | Func::Unique => {
            let from = points.iter().map(|p| bucket_ceil(p.from)).min();
            let to = points.iter().map(|p| bucket_ceil(p.to)).max();
            match from.zip(to) {
                Some((from, to)) => rows.merged(from, to).value(func).unwrap_or(0.0),
                None => 0.0,
            }
        }
    };
    Quantities { quantities, total }
}

#[cfg(test)]
#[path = "series_tests.rs"]
mod tests;
