//! Tax reports: the EU One-Stop-Shop quarterly return and a tax summary per country and
//! period, from the orders' tax breakdowns and their refunds'.
//!
//! The source is the sales, not the invoices, so that a seller issuing invoices on request
//! reports every sale: each paid order created in the period adds its breakdown (as
//! charged, at the rate of its day); each succeeded refund created in the period takes
//! its share of its order's breakdown back off (the period a correction is reported in,
//! as the OSS rules want: a refund corrects the return of the quarter it happens in).
//! Rows are per country, rate and currency; amounts stay in the sale's currency (no
//! conversion: the `currency` column says which, and the seller converts at the ECB rate
//! the return asks for).
//!
//! * [`oss`]: the lines under the EU schemes (`eu_oss`, `non_eu_oss`), the tax
//!   collected: no reverse-charged, domestic or other country's lines;
//! * [`summary`]: every line of every scheme and reason (the domestic sales, the
//!   reverse-charged ones at rate 0, the other countries' registrations).

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};

use crate::app::access::can_access;
use crate::auth::Subject;
use crate::domain::ids::OrganizationId;
use crate::domain::money::Money;
use crate::domain::order::{Order, ORDER_BY_CREATED};
use crate::domain::refund::{Refund, RefundStatus, REFUND_BY_CREATED};
use crate::domain::tax_breakdown::{percent, refund_share, Regime, TaxBreakdown, TaxabilityReason};
use crate::domain::time_key;
use crate::error::{AppError, Step};
use crate::state::AppState;

/// One row: a country's rate in one currency, the period's net sales taxed at it and the
/// tax (refunds netted), in the currency's minor unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRow {
    pub country: String,
    pub rate_ppm: u32,
    pub taxable_amount: i64,
    pub tax_amount: i64,
    pub currency: String,
}

/// Which lines a report keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The EU schemes' collected tax.
    Oss,
    /// Everything.
    All,
}

impl Scope {
    fn keeps(self, line: &TaxBreakdown) -> bool {
        match self {
            Scope::All => true,
            Scope::Oss => {
                matches!(line.regime, Regime::EuOss | Regime::NonEuOss)
                    && line.reason == TaxabilityReason::StandardRated
            }
        }
    }
}

/// The first day of `quarter` (1–4) of `year`, and of the next.
pub fn quarter_bounds(year: i32, quarter: u32) -> Result<(DateTime<Utc>, DateTime<Utc>), AppError> {
    if !(1..=4).contains(&quarter) {
        return Err(AppError::invalid(
            vec![Step::from("quarter")],
            "Input should be 1, 2, 3 or 4",
            i64::from(quarter),
        ));
    }
    let start = NaiveDate::from_ymd_opt(year, 3 * quarter - 2, 1);
    let end = if quarter == 4 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(year, 3 * quarter + 1, 1)
    };
    match (start, end) {
        (Some(s), Some(e)) if (2000..=2200).contains(&year) => Ok((midnight(s), midnight(e))),
        _ => Err(AppError::invalid(
            vec![Step::from("year")],
            "Input should be a year between 2000 and 2200",
            i64::from(year),
        )),
    }
}

fn midnight(d: NaiveDate) -> DateTime<Utc> {
    Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default())
}

/// The EU One-Stop-Shop return of `org` for `quarter` of `year`.
pub async fn oss(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    year: i32,
    quarter: u32,
) -> Result<Vec<ReportRow>, AppError> {
    let (start, end) = quarter_bounds(year, quarter)?;
    report(state, subject, org, start, end, Scope::Oss).await
}

/// Every tax line of `org` from `start` (included) to `end` (excluded).
pub async fn summary(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<Vec<ReportRow>, AppError> {
    if start >= end {
        return Err(AppError::invalid(
            vec![Step::from("end")],
            "The end must be after the start",
            end.to_rfc3339(),
        ));
    }
    report(state, subject, org, start, end, Scope::All).await
}

async fn report(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    scope: Scope,
) -> Result<Vec<ReportRow>, AppError> {
    state.store.read_barrier().await?;
    if !can_access(state, subject, org).await? {
        return Err(AppError::not_found());
    }
    let (from, to) = (time_key(start), time_key(end));
    let mut rows = Rows::default();
    let ids = state
        .store
        .index_range(ORDER_BY_CREATED, &org.key(), &from, Some(&to))
        .await?;
    for chunk in ids.chunks(256) {
        for o in state.store.get_many::<Order>(chunk).await? {
            let o = o.value;
            if o.status.was_paid() {
                rows.add(&o.tax.breakdown, &o.currency, 1, scope);
            }
        }
    }
    let ids = state
        .store
        .index_range(REFUND_BY_CREATED, &org.key(), &from, Some(&to))
        .await?;
    for chunk in ids.chunks(256) {
        for r in state.store.get_many::<Refund>(chunk).await? {
            let r = r.value;
            if r.status != RefundStatus::Succeeded {
                continue;
            }
            let Some(order) = state.store.get::<Order>(&r.order_id.key()).await? else {
                continue;
            };
            let share = refund_share(&order.value.tax.breakdown, r.amount, r.tax_amount);
            rows.add(&share, &r.currency, -1, scope);
        }
    }
    Ok(rows.finish())
}

/// Rows being summed, by (country, rate, currency).
#[derive(Default)]
struct Rows(BTreeMap<(String, u32, String), (i64, i64)>);

impl Rows {
    fn add(&mut self, lines: &[TaxBreakdown], currency: &str, sign: i64, scope: Scope) {
        for line in lines.iter().filter(|l| scope.keeps(l)) {
            let key = (
                line.country.to_ascii_uppercase(),
                line.rate_ppm,
                currency.to_ascii_uppercase(),
            );
            let row = self.0.entry(key).or_default();
            row.0 = row
                .0
                .saturating_add(sign.saturating_mul(line.taxable_amount));
            row.1 = row.1.saturating_add(sign.saturating_mul(line.amount));
        }
    }

    fn finish(self) -> Vec<ReportRow> {
        self.0
            .into_iter()
            .map(
                |((country, rate_ppm, currency), (taxable, tax))| ReportRow {
                    country,
                    rate_ppm,
                    taxable_amount: taxable,
                    tax_amount: tax,
                    currency,
                },
            )
            .collect()
    }
}

/// The header of every report.
pub const HEADER: [&str; 5] = [
    "country",
    "rate",
    "taxable_amount",
    "tax_amount",
    "currency",
];

/// The CSV of `rows` under [`HEADER`], CRLF-terminated (RFC 4180): the rate as a
/// percentage (`19`, `25.5`), amounts in the currency's major unit (`1234.56`).
pub fn csv(rows: &[ReportRow]) -> Result<Vec<u8>, AppError> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new());
    w.write_record(HEADER).map_err(AppError::internal)?;
    for r in rows {
        w.write_record([
            r.country.clone(),
            percent(r.rate_ppm),
            Money::new(r.taxable_amount, &r.currency).major(),
            Money::new(r.tax_amount, &r.currency).major(),
            r.currency.clone(),
        ])
        .map_err(AppError::internal)?;
    }
    w.into_inner().map_err(AppError::internal)
}

/// The current quarter at `now`: (year, quarter).
pub fn current_quarter(now: DateTime<Utc>) -> (i32, u32) {
    (now.year(), (now.month() - 1) / 3 + 1)
}

#[cfg(test)]
#[path = "tax_reports_tests.rs"]
mod tests;
