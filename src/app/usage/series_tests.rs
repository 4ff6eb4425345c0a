use chrono::{Offset, TimeZone, Utc};

use super::*;

fn utc(y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, min, 0).unwrap()
}

fn tz(name: &str) -> Tz {
    name.parse().unwrap()
}

/// Every offset of every zone since 2023 is a multiple of 15 minutes: 15-minute UTC rows
/// compose exactly into any zone's buckets (sampled every 6 hours to 2040).
#[test]
fn every_zone_offset_since_2023_is_a_quarter_hour() {
    let start = utc(2023, 1, 1, 0, 0).timestamp();
    let end = utc(2040, 1, 1, 0, 0).timestamp();
    for zone in chrono_tz::TZ_VARIANTS {
        let mut t = start;
        while t < end {
            let at = Utc.timestamp_opt(t, 0).unwrap();
            let offset = at.with_timezone(&zone).offset().fix().local_minus_utc();
            assert_eq!(offset % 900, 0, "{zone} at {at}");
            t += 6 * 3600;
        }
    }
}

#[test]
fn day_points_are_not_truncated_but_their_buckets_are() {
    let points = series(
        utc(2026, 8, 1, 12, 0),
        utc(2026, 8, 3, 12, 0),
        Interval::Day,
        Tz::UTC,
    );
    assert_eq!(points.len(), 3);
    assert_eq!(points[0].timestamp, utc(2026, 8, 1, 12, 0));
    assert_eq!(points[0].from, utc(2026, 8, 1, 0, 0).timestamp());
    assert_eq!(points[0].to, utc(2026, 8, 2, 0, 0).timestamp());
    assert_eq!(points[2].timestamp, utc(2026, 8, 3, 12, 0));
}

#[test]
fn days_in_a_half_hour_zone() {
    // Asia/Kolkata is +05:30: its day starts at 18:30 UTC the day before.
    let points = series(
        utc(2026, 8, 1, 0, 0),
        utc(2026, 8, 2, 0, 0),
        Interval::Day,
        tz("Asia/Kolkata"),
    );
    assert_eq!(points.len(), 2);
    assert_eq!(points[0].from, utc(2026, 7, 31, 18, 30).timestamp());
    assert_eq!(points[0].to, utc(2026, 8, 1, 18, 30).timestamp());
    // Hours of Kathmandu (+05:45) are quarter past in UTC.
    let hours = series(
        utc(2026, 8, 1, 0, 0),
        utc(2026, 8, 1, 2, 0),
        Interval::Hour,
        tz("Asia/Kathmandu"),
    );
    assert_eq!(hours.len(), 3);
    assert_eq!(hours[0].from, utc(2026, 7, 31, 23, 15).timestamp());
    assert_eq!(hours[0].to, utc(2026, 8, 1, 0, 15).timestamp());
}

#[test]
fn dst_days_are_23_and_25_hours() {
    let paris = tz("Europe/Paris");
    // 2026-03-29: clocks go from 02:00 to 03:00 (a 23-hour day).
    let start = paris
        .with_ymd_and_hms(2026, 3, 29, 0, 0, 0)
        .unwrap()
        .with_timezone(&Utc);
    let points = series(start, start + Duration::hours(30), Interval::Day, paris);
    assert_eq!(points.len(), 2);
    assert_eq!(points[0].to - points[0].from, 23 * 3600);
    // Each point is local midnight (PostgreSQL adds a day on the local calendar).
    assert_eq!(points[1].timestamp.with_timezone(&paris).hour(), 0);
    // 2026-10-25: 03:00 back to 02:00 (a 25-hour day).
    let start = paris
        .with_ymd_and_hms(2026, 10, 25, 0, 0, 0)
        .unwrap()
        .with_timezone(&Utc);
    let points = series(start, start, Interval::Day, paris);
    assert_eq!(points[0].to - points[0].from, 25 * 3600);
    // Hours across the fall-back: five distinct UTC hours, each its own bucket.
    let hours = series(start, start + Duration::hours(4), Interval::Hour, paris);
    assert_eq!(hours.len(), 5);
    for h in &hours {
        assert_eq!(h.to - h.from, 3600);
    }
    // Lord Howe shifts by 30 minutes.
    let lh = tz("Australia/Lord_Howe");
    let start = lh
        .with_ymd_and_hms(2026, 4, 5, 0, 0, 0)
        .unwrap()
        .with_timezone(&Utc);
    let points = series(start, start, Interval::Day, lh);
    assert_eq!(points[0].to - points[0].from, 24 * 3600 + 1800);
}

#[test]
fn weeks_months_and_years() {
    // 2026-08-05 is a Wednesday: its week starts Monday 08-03.
    let w = series(
        utc(2026, 8, 5, 10, 0),
        utc(2026, 8, 5, 10, 0),
        Interval::Week,
        Tz::UTC,
    );
    assert_eq!(w[0].from, utc(2026, 8, 3, 0, 0).timestamp());
    assert_eq!(w[0].to, utc(2026, 8, 10, 0, 0).timestamp());
    // Months step on the calendar, from the previous point (Jan 31 → Feb 28 → Mar 28).
    let m = series(
        utc(2026, 1, 31, 0, 0),
        utc(2026, 4, 30, 0, 0),
        Interval::Month,
        Tz::UTC,
    );
    let stamps: Vec<_> = m.iter().map(|p| p.timestamp).collect();
    assert_eq!(
        stamps,
        vec![
            utc(2026, 1, 31, 0, 0),
            utc(2026, 2, 28, 0, 0),
            utc(2026, 3, 28, 0, 0),
            utc(2026, 4, 28, 0, 0)
        ]
    );
    assert_eq!(m[1].from, utc(2026, 2, 1, 0, 0).timestamp());
    assert_eq!(m[1].to, utc(2026, 3, 1, 0, 0).timestamp());
    let y = series(
        utc(2025, 6, 1, 0, 0),
        utc(2026, 6, 1, 0, 0),
        Interval::Year,
        tz("America/New_York"),
    );
    assert_eq!(y.len(), 2);
    assert_eq!(y[1].from, utc(2026, 1, 1, 5, 0).timestamp());
}

#[test]
fn limits_count_calendar_days_as_given() {
    let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap();
    assert!(under_limits(
        at("2026-08-01T00:00:00Z"),
        at("2026-08-08T23:59:00Z"),
        Interval::Hour
    ));
    assert!(!under_limits(
        at("2026-08-01T00:00:00Z"),
        at("2026-08-09T00:00:00Z"),
        Interval::Hour
    ));
    assert!(!under_limits(
        at("2026-08-02T00:00:00Z"),
        at("2026-08-01T00:00:00Z"),
        Interval::Day
    ));
    assert!(under_limits(
        at("2025-08-01T00:00:00Z"),
        at("2026-08-01T00:00:00Z"),
        Interval::Day
    ));
    // The offsets given count, not UTC: 23:00-05:00 is still the 1st.
    assert!(under_limits(
        at("2026-08-01T23:00:00-05:00"),
        at("2026-08-08T00:00:00Z"),
        Interval::Hour
    ));
}

fn agg(values: &[f64]) -> Agg {
    let mut a = Agg::EMPTY;
    for v in values {
        a.merge(&Agg::one(*v));
    }
    a
}

#[test]
fn folds_each_aggregation() {
    let day = |d: u32| utc(2026, 8, d, 0, 0).timestamp();
    let points = series(
        utc(2026, 8, 1, 0, 0),
        utc(2026, 8, 3, 0, 0),
        Interval::Day,
        Tz::UTC,
    );
    let mut rows = Rows::default();
    // Day 1: two rows (values 1, 5 then 3); day 2 empty; day 3: one row (10).
    rows.add(day(1), 0, &agg(&[1.0, 5.0]));
    rows.add(day(1) + 3600, 0, &agg(&[3.0]));
    rows.add(day(3) + 900, 0, &agg(&[10.0]));
    let q = |f| fold(&points, &rows, f, None);
    let values = |x: &Quantities| x.quantities.iter().map(|(_, v)| *v).collect::<Vec<_>>();
    assert_eq!(values(&q(Func::Count)), vec![3.0, 0.0, 1.0]);
    assert_eq!(q(Func::Count).total, 4.0);
    assert_eq!(values(&q(Func::Sum)), vec![9.0, 0.0, 10.0]);
    assert_eq!(q(Func::Sum).total, 19.0);
    assert_eq!(values(&q(Func::Max)), vec![5.0, 0.0, 10.0]);
    assert_eq!(q(Func::Max).total, 10.0);
    // The empty day is ignored by min's total.
    assert_eq!(q(Func::Min).total, 1.0);
    assert_eq!(values(&q(Func::Avg)), vec![3.0, 0.0, 10.0]);
    // The true average over the range: 19 / 4, not the average of the days.
    assert_eq!(q(Func::Avg).total, 19.0 / 4.0);
    // A row outside the covered days changes nothing.
    let before = q(Func::Avg).total;
    rows.add(day(5), 0, &agg(&[100.0]));
    assert_eq!(fold(&points, &rows, Func::Avg, None).total, before);
}

#[test]
fn unique_counts_distinct_members_per_bucket_and_over_the_range() {
    let day = |d: u32| utc(2026, 8, d, 0, 0).timestamp();
    let points = series(
        utc(2026, 8, 1, 0, 0),
        utc(2026, 8, 2, 0, 0),
        Interval::Day,
        Tz::UTC,
    );
    let mut rows = Rows::default();
    rows.add_member(day(1), 0, b"a".to_vec());
    rows.add_member(day(1) + 900, 0, b"a".to_vec());
    rows.add_member(day(1) + 900, 0, b"b".to_vec());
    rows.add_member(day(2), 0, b"b".to_vec());
    let q = fold(&points, &rows, Func::Unique, None);
    assert_eq!(q.quantities[0].1, 2.0);
    assert_eq!(q.quantities[1].1, 1.0);
    assert_eq!(q.total, 2.0);
}

#[test]
fn per_customer_functions() {
    let day = utc(2026, 8, 1, 0, 0).timestamp();
    let points = series(
        utc(2026, 8, 1, 0, 0),
        utc(2026, 8, 1, 0, 0),
        Interval::Day,
        Tz::UTC,
    );
    let mut rows = Rows::default();
    // Customer 0 summed 4, customer 1 summed 10, customer 2 summed 4.
    rows.add(day, 0, &agg(&[1.0, 3.0]));
    rows.add(day, 1, &agg(&[10.0]));
    rows.add(day + 900, 2, &agg(&[4.0]));
    let q = |cf| fold(&points, &rows, Func::Sum, Some(cf)).quantities[0].1;
    assert_eq!(q(Func::Count), 3.0);
    assert_eq!(q(Func::Sum), 18.0);
    assert_eq!(q(Func::Max), 10.0);
    assert_eq!(q(Func::Min), 4.0);
    assert_eq!(q(Func::Avg), 6.0);
    assert_eq!(q(Func::Unique), 2.0);
}
