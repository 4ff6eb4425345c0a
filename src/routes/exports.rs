//! CSV exports: `GET /v1/orders/export`, `/v1/subscriptions/export` and
//! `/v1/customers/export` as Polar has them (its headers, its column names, amounts as
//! Python renders `cents / 100`, dates in ISO 8601 in the `timezone` asked for), and
//! Tollgate's own `GET /v1/license-keys/export`. The dashboard's download links answer the
//! same CSV through [`orders_csv`] and its siblings, with the seller's session.
//!
//! The body is streamed: the use case (`crate::app::exports`) hands rows a page at a time
//! and each page is written and sent before the next is read. Cells are quoted by the `csv`
//! crate (RFC 4180); a text cell that a spreadsheet would run as a formula (it starts with
//! `=`, `+`, `-`, `@`, a tab or a carriage return) is sent with a leading `'`.

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use futures_util::future::LocalBoxFuture;
use serde_json::Value;

use crate::app::exports::{
    self, CustomerExport, CustomerRow, LicenseKeyExport, LicenseKeyExportFilter, LicenseKeyRow,
    OrderExport, OrderExportFilter, OrderRow, SubscriptionExport, SubscriptionExportFilter,
    SubscriptionRow,
};
use crate::auth::Subject;
use crate::domain::ids::OrganizationId;
use crate::error::{ApiError, AppError, FieldError};
use crate::extract::auth::{CustomersRead, LicenseKeysRead, OrdersRead, SubscriptionsRead};
use crate::extract::{Auth, QueryParams, RawQuery};
use crate::state::AppState;

/// Before each resource's `/{id}` route, which would take `export` for an id.
pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/orders/export", { get => orders });
    crate::resource!(cfg, "/v1/subscriptions/export", { get => subscriptions });
    crate::resource!(cfg, "/v1/customers/export", { get => customers });
    crate::resource!(cfg, "/v1/license-keys/export", { get => license_keys });
}

// -------------------------------------------------------------------------- columns

/// Polar's `OrderExportColumn`: (query name, header).
pub const ORDER_COLUMNS: &[(&str, &str)] = &[
    ("email", "Email"),
    ("created_at", "Created At"),
    ("product", "Product"),
    ("net_amount", "Net Amount"),
    ("currency", "Currency"),
    ("status", "Status"),
    ("invoice_number", "Invoice number"),
    ("customer_name", "Customer Name"),
    ("billing_name", "Billing Name"),
    ("billing_country", "Billing Country"),
    ("subtotal_amount", "Subtotal"),
    ("discount_amount", "Discount"),
    ("tax_amount", "Tax"),
    ("total_amount", "Total"),
    ("refunded_amount", "Refunded Amount"),
    ("billing_reason", "Billing Reason"),
];
const ORDER_DEFAULT: usize = 7;

/// Polar's `SubscriptionExportColumn`: (query name, header).
pub const SUBSCRIPTION_COLUMNS: &[(&str, &str)] = &[
    ("email", "Email"),
    ("started_at", "Started At"),
    ("product", "Product"),
    ("amount", "Amount"),
    ("currency", "Currency"),
    ("status", "Status"),
    ("recurring_interval", "Billing Interval"),
    ("customer_name", "Customer Name"),
    ("billing_name", "Billing Name"),
    ("billing_country", "Billing Country"),
    ("net_amount", "Net Amount"),
    ("discount", "Discount"),
    ("seats", "Seats"),
    ("current_period_start", "Current Period Start"),
    ("current_period_end", "Current Period End"),
    ("cancel_at_period_end", "Cancels At Period End"),
    ("canceled_at", "Canceled At"),
    ("ends_at", "Ends At"),
    ("ended_at", "Ended At"),
    ("cancellation_reason", "Cancellation Reason"),
    ("trial_start", "Trial Start"),
    ("trial_end", "Trial End"),
];
const SUBSCRIPTION_DEFAULT: usize = 7;

/// Polar's fixed customer columns (its export takes no `columns`).
pub const CUSTOMER_HEADERS: &[&str] = &[
    "ID",
    "External ID",
    "Created At",
    "Email",
    "Name",
    "Tax ID",
    "Billing Address Line 1",
    "Billing Address Line 2",
    "Billing Address City",
    "Billing Address State",
    "Billing Address Zip",
    "Billing Address Country",
    "Metadata",
];

/// Tollgate's license-key columns: (query name, header). Never the key itself.
pub const LICENSE_KEY_COLUMNS: &[(&str, &str)] = &[
    ("id", "ID"),
    ("display_key", "Key"),
    ("email", "Email"),
    ("benefit", "Benefit"),
    ("status", "Status"),
    ("usage", "Usage"),
    ("limit_usage", "Usage Limit"),
    ("validations", "Validations"),
    ("limit_activations", "Activation Limit"),
    ("activations", "Activations"),
    ("expires_at", "Expires At"),
    ("created_at", "Created At"),
    ("last_validated_at", "Last Validated At"),
];
const LICENSE_KEY_DEFAULT: usize = 13;

/// Polar's `OrderStatus`, `SubscriptionStatus` and `LicenseKeyStatus` names (those
/// Tollgate never gives a record match nothing).
const ORDER_STATUSES: &[&str] = &[
    "draft",
    "pending",
    "paid",
    "refunded",
    "partially_refunded",
    "void",
];
const SUBSCRIPTION_STATUSES: &[&str] = &[
    "incomplete",
    "incomplete_expired",
    "trialing",
    "active",
    "past_due",
    "canceled",
    "unpaid",
    "paused",
];
const KEY_STATUSES: &[&str] = &["granted", "revoked", "disabled"];

// ------------------------------------------------------------------------ parsing

/// `columns` (repeatable, in order): their indexes into `all`, the first `default` when
/// none is given.
fn columns(q: &mut QueryParams, all: &[(&str, &str)], default: usize) -> Vec<usize> {
    let table: Vec<(&str, usize)> = all.iter().enumerate().map(|(i, (n, _))| (*n, i)).collect();
    let chosen = q.enums("columns", &table);
    if chosen.is_empty() {
        (0..default).collect()
    } else {
        chosen
    }
}

fn statuses(q: &mut QueryParams, all: &[&'static str]) -> Vec<String> {
    let table: Vec<(&str, &str)> = all.iter().map(|s| (*s, *s)).collect();
    q.enums("status", &table)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// `timezone`: an IANA name, `UTC` when absent.
fn timezone(q: &mut QueryParams) -> Tz {
    let Some(raw) = q.string("timezone") else {
        return Tz::UTC;
    };
    match raw.parse::<Tz>() {
        Ok(tz) => tz,
        Err(_) => {
            q.push_error(FieldError::new(
                "zoneinfo_key",
                crate::loc!["query", "timezone"],
                "Input is not a valid IANA time zone name",
                Value::String(raw),
            ));
            Tz::UTC
        }
    }
}

/// A date-time bound with its UTC offset (Polar refuses one without).
fn bound(q: &mut QueryParams, key: &str) -> Option<DateTime<Utc>> {
    let raw = q.string(key)?;
    match DateTime::parse_from_rfc3339(raw.trim()) {
        Ok(at) => Some(at.with_timezone(&Utc)),
        Err(_) => {
            let naive = chrono::NaiveDateTime::parse_from_str(raw.trim(), "%Y-%m-%dT%H:%M:%S%.f")
                .or_else(|_| {
                    chrono::NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d")
                        .map(|d| d.and_hms_opt(0, 0, 0).unwrap_or_default())
                });
            let (kind, msg) = if naive.is_ok() {
                ("timezone_aware", "Input should have timezone info")
            } else {
                (
                    "datetime_from_date_parsing",
                    "Input should be a valid datetime with a UTC offset",
                )
            };
            q.push_error(FieldError::new(
                kind,
                crate::loc!["query", key],
                msg,
                Value::String(raw),
            ));
            None
        }
    }
}

// ------------------------------------------------------------------------ rendering

/// A text cell as sent: with a leading `'` when a spreadsheet would read it as a formula.
pub fn text(value: &str) -> String {
    match value.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{value}"),
        _ => value.to_string(),
    }
}

fn opt_text(value: Option<&str>) -> String {
    value.map(text).unwrap_or_default()
}

/// `cents / 100` as Python writes the float: `19.99`, `10.0`, `0.05`.
pub fn amount(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    let (whole, frac) = (abs / 100, abs % 100);
    if frac % 10 == 0 {
        format!("{sign}{whole}.{}", frac / 10)
    } else {
        format!("{sign}{whole}.{frac:02}")
    }
}

/// A date-time in `tz` as Python's `isoformat()`: microseconds only when there are some.
pub fn date(at: DateTime<Utc>, tz: Tz) -> String {
    let local = at.with_timezone(&tz);
    if at.timestamp_subsec_micros() == 0 {
        local.format("%Y-%m-%dT%H:%M:%S%:z").to_string()
    } else {
        local.format("%Y-%m-%dT%H:%M:%S%.6f%:z").to_string()
    }
}

fn opt_date(at: Option<DateTime<Utc>>, tz: Tz) -> String {
    at.map(|a| date(a, tz)).unwrap_or_default()
}

fn opt_int(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn order_cell(row: &OrderRow, column: usize, tz: Tz) -> String {
    match ORDER_COLUMNS[column].0 {
        "email" => text(&row.email),
        "created_at" => date(row.created_at, tz),
        "product" => text(&row.product),
        "net_amount" => amount(row.net_amount),
        "currency" => text(&row.currency),
        "status" => row.status.to_string(),
        "invoice_number" => text(&row.invoice_number),
        "customer_name" => opt_text(row.customer_name.as_deref()),
        "billing_name" => opt_text(row.billing_name.as_deref()),
        "billing_country" => opt_text(row.billing_country.as_deref()),
        "subtotal_amount" => amount(row.subtotal_amount),
        "discount_amount" => amount(row.discount_amount),
        "tax_amount" => amount(row.tax_amount),
        "total_amount" => amount(row.total_amount),
        "refunded_amount" => amount(row.refunded_amount),
        _ => row.billing_reason.to_string(),
    }
}

fn subscription_cell(row: &SubscriptionRow, column: usize, tz: Tz) -> String {
    match SUBSCRIPTION_COLUMNS[column].0 {
        "email" => text(&row.email),
        "started_at" => opt_date(row.started_at, tz),
        "product" => text(&row.product),
        "amount" | "net_amount" => amount(row.amount),
        "currency" => text(&row.currency),
        "status" => row.status.to_string(),
        // Polar's `_interval`: `month`, or `3 months`.
        "recurring_interval" => match row.recurring_interval_count {
            1 => row.recurring_interval.to_string(),
            n => format!("{n} {}s", row.recurring_interval),
        },
        "customer_name" => opt_text(row.customer_name.as_deref()),
        "billing_name" => opt_text(row.billing_name.as_deref()),
        "billing_country" => opt_text(row.billing_country.as_deref()),
        "discount" => opt_text(row.discount.as_deref()),
        // Empty unless the subscription is seat-based.
        "seats" => row.seats.map(|n| n.to_string()).unwrap_or_default(),
        "current_period_start" => date(row.current_period_start, tz),
        "current_period_end" => opt_date(row.current_period_end, tz),
        "cancel_at_period_end" => row.cancel_at_period_end.to_string(),
        "canceled_at" => opt_date(row.canceled_at, tz),
        "ends_at" => opt_date(row.ends_at, tz),
        "ended_at" => opt_date(row.ended_at, tz),
        "cancellation_reason" => opt_text(row.cancellation_reason.as_deref()),
        "trial_start" => opt_date(row.trial_start, tz),
        _ => opt_date(row.trial_end, tz),
    }
}

fn customer_cells(row: &CustomerRow, tz: Tz) -> Vec<String> {
    let address = row.billing_address.as_ref();
    let part =
        |f: fn(&crate::domain::customer::Address) -> Option<&str>| opt_text(address.and_then(f));
    vec![
        row.id.0.to_string(),
        opt_text(row.external_id.as_deref()),
        date(row.created_at, tz),
        text(&row.email),
        opt_text(row.name.as_deref()),
        opt_text(row.tax_id.as_deref()),
        part(|a| a.line1.as_deref()),
        part(|a| a.line2.as_deref()),
        part(|a| a.city.as_deref()),
        part(|a| a.state.as_deref()),
        part(|a| a.postal_code.as_deref()),
        part(|a| Some(a.country.as_str())),
        if row.metadata.is_empty() {
            String::new()
        } else {
            let map = crate::api::metadata::metadata_map(&row.metadata);
            text(&serde_json::to_string(&map).unwrap_or_default())
        },
    ]
}

fn license_key_cell(row: &LicenseKeyRow, column: usize, tz: Tz) -> String {
    match LICENSE_KEY_COLUMNS[column].0 {
        "id" => row.id.0.to_string(),
        "display_key" => row.display_key.clone(),
        "email" => text(&row.email),
        "benefit" => text(&row.benefit),
        "status" => row.status.to_string(),
        "usage" => row.usage.to_string(),
        "limit_usage" => opt_int(row.limit_usage),
        "validations" => row.validations.to_string(),
        "limit_activations" => opt_int(row.limit_activations),
        "activations" => row.activations.to_string(),
        "expires_at" => opt_date(row.expires_at, tz),
        "created_at" => date(row.created_at, tz),
        _ => opt_date(row.last_validated_at, tz),
    }
}

// ------------------------------------------------------------------------ streaming

/// One CSV record (CRLF-terminated, quoted where needed).
fn record(cells: &[String]) -> Result<Vec<u8>, std::io::Error> {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new());
    writer.write_record(cells)?;
    writer
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// An export read a page at a time by the use case.
trait Pages: 'static {
    type Row: 'static;
    fn next_page<'a>(
        &'a mut self,
        state: &'a AppState,
    ) -> LocalBoxFuture<'a, Result<Option<Vec<Self::Row>>, AppError>>;
}

macro_rules! pages {
    ($($export:ty => $row:ty),* $(,)?) => {$(
        impl Pages for $export {
            type Row = $row;
            fn next_page<'a>(
                &'a mut self,
                state: &'a AppState,
            ) -> LocalBoxFuture<'a, Result<Option<Vec<$row>>, AppError>> {
                Box::pin(<$export>::next_page(self, state))
            }
        }
    )*};
}

pages!(
    OrderExport => OrderRow,
    SubscriptionExport => SubscriptionRow,
    CustomerExport => CustomerRow,
    LicenseKeyExport => LicenseKeyRow,
);

/// The headers of the chosen columns of `table`.
fn headers(cols: &[usize], table: &[(&str, &str)]) -> Vec<String> {
    cols.iter().map(|&c| table[c].1.to_string()).collect()
}

/// The CSV response: the header row, then each page of rows as it is read. A failure
/// mid-way ends the body early (the status is already sent): the client sees a truncated
/// transfer, never a partial file presented as whole.
fn csv_response<P: Pages>(
    state: web::Data<AppState>,
    filename: &str,
    header: Vec<String>,
    export: P,
    render: impl Fn(&P::Row) -> Vec<String> + 'static,
) -> Result<HttpResponse, ApiError> {
    let head = record(&header).map_err(|e| ApiError::from(AppError::internal(e.to_string())))?;
    let body = futures_util::stream::unfold(
        (Some(head), Some(export), state, render),
        |(head, export, state, render)| async move {
            if let Some(head) = head {
                return Some((Ok(web::Bytes::from(head)), (None, export, state, render)));
            }
            let mut export = export?;
            // A page the filters emptied sends nothing: the next one is read at once.
            loop {
                match export.next_page(&state).await {
                    Ok(Some(rows)) if rows.is_empty() => continue,
                    Ok(Some(rows)) => {
                        let mut out = Vec::new();
                        for row in &rows {
                            match record(&render(row)) {
                                Ok(bytes) => out.extend(bytes),
                                Err(e) => return Some((Err(e), (None, None, state, render))),
                            }
                        }
                        return Some((
                            Ok(web::Bytes::from(out)),
                            (None, Some(export), state, render),
                        ));
                    }
                    Ok(None) => return None,
                    Err(e) => {
                        tracing::error!(error = %e, "an export stopped mid-way");
                        return Some((
                            Err(std::io::Error::other(e.to_string())),
                            (None, None, state, render),
                        ));
                    }
                }
            }
        },
    );
    Ok(HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename={filename}"),
        ))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .streaming(body))
}

/// Polar's file name: the kind, then each date bound given (in the export's time zone).
fn filename(kind: &str, bounds: [Option<DateTime<Utc>>; 2], tz: Tz) -> String {
    let mut name = format!("tollgate-{kind}");
    for at in bounds.into_iter().flatten() {
        name.push_str(&format!("-{}", at.with_timezone(&tz).format("%Y-%m-%d")));
    }
    name.push_str(".csv");
    name
}

/// The organizations an export covers: the query's `organization_id`, or the dashboard's
/// organization (`only`) whatever the query says.
fn organizations(q: &mut QueryParams, only: Option<OrganizationId>) -> Vec<OrganizationId> {
    let asked = q.ids("organization_id");
    match only {
        Some(org) => vec![org],
        None => asked,
    }
}

// ------------------------------------------------------------------------- exports

/// The orders' CSV for `subject` (`only`: the dashboard's organization).
pub async fn orders_csv(
    state: web::Data<AppState>,
    subject: Subject,
    query: &str,
    only: Option<OrganizationId>,
) -> Result<HttpResponse, ApiError> {
    let mut q = QueryParams::parse(query);
    let filter = OrderExportFilter {
        organization_id: organizations(&mut q, only),
        product_id: q.ids("product_id"),
        status: statuses(&mut q, ORDER_STATUSES),
        created_after: bound(&mut q, "created_after"),
        created_before: bound(&mut q, "created_before"),
    };
    let tz = timezone(&mut q);
    let cols = columns(&mut q, ORDER_COLUMNS, ORDER_DEFAULT);
    q.finish()?;
    let name = filename("orders", [filter.created_after, filter.created_before], tz);
    let export = exports::orders(&state, subject, filter).await?;
    let header = headers(&cols, ORDER_COLUMNS);
    csv_response(state, &name, header, export, move |row| {
        cols.iter().map(|&c| order_cell(row, c, tz)).collect()
    })
}

/// The subscriptions' CSV for `subject` (`only`: the dashboard's organization).
pub async fn subscriptions_csv(
    state: web::Data<AppState>,
    subject: Subject,
    query: &str,
    only: Option<OrganizationId>,
) -> Result<HttpResponse, ApiError> {
    let mut q = QueryParams::parse(query);
    let filter = SubscriptionExportFilter {
        organization_id: organizations(&mut q, only),
        product_id: q.ids("product_id"),
        status: statuses(&mut q, SUBSCRIPTION_STATUSES),
        cancel_at_period_end: q.bool("cancel_at_period_end"),
        started_after: bound(&mut q, "started_after"),
        started_before: bound(&mut q, "started_before"),
    };
    let tz = timezone(&mut q);
    let cols = columns(&mut q, SUBSCRIPTION_COLUMNS, SUBSCRIPTION_DEFAULT);
    q.finish()?;
    let name = filename(
        "subscriptions",
        [filter.started_after, filter.started_before],
        tz,
    );
    let export = exports::subscriptions(&state, subject, filter).await?;
    let header = headers(&cols, SUBSCRIPTION_COLUMNS);
    csv_response(state, &name, header, export, move |row| {
        cols.iter()
            .map(|&c| subscription_cell(row, c, tz))
            .collect()
    })
}

/// The customers' CSV for `subject` (`only`: the dashboard's organization). Polar's
/// export takes `organization_id` only; `timezone` is Tollgate's addition (UTC by default,
/// as Polar renders).
pub async fn customers_csv(
    state: web::Data<AppState>,
    subject: Subject,
    query: &str,
    only: Option<OrganizationId>,
) -> Result<HttpResponse, ApiError> {
    let mut q = QueryParams::parse(query);
    let orgs = organizations(&mut q, only);
    let tz = timezone(&mut q);
    q.finish()?;
    let export = exports::customers(&state, subject, orgs).await?;
    let header = CUSTOMER_HEADERS.iter().map(|h| h.to_string()).collect();
    csv_response(
        state,
        "tollgate-customers.csv",
        header,
        export,
        move |row| customer_cells(row, tz),
    )
}

/// The license keys' CSV for `subject` (`only`: the dashboard's organization).
pub async fn license_keys_csv(
    state: web::Data<AppState>,
    subject: Subject,
    query: &str,
    only: Option<OrganizationId>,
) -> Result<HttpResponse, ApiError> {
    let mut q = QueryParams::parse(query);
    let filter = LicenseKeyExportFilter {
        organization_id: organizations(&mut q, only),
        benefit_id: q.ids("benefit_id"),
        status: statuses(&mut q, KEY_STATUSES),
    };
    let tz = timezone(&mut q);
    let cols = columns(&mut q, LICENSE_KEY_COLUMNS, LICENSE_KEY_DEFAULT);
    q.finish()?;
    let export = exports::license_keys(&state, subject, filter).await?;
    let header = headers(&cols, LICENSE_KEY_COLUMNS);
    csv_response(
        state,
        "tollgate-license-keys.csv",
        header,
        export,
        move |row| cols.iter().map(|&c| license_key_cell(row, c, tz)).collect(),
    )
}

pub(crate) async fn orders(
    auth: Auth<OrdersRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> Result<HttpResponse, ApiError> {
    orders_csv(state, auth.subject(), &query.0, None).await
}

pub(crate) async fn subscriptions(
    auth: Auth<SubscriptionsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> Result<HttpResponse, ApiError> {
    subscriptions_csv(state, auth.subject(), &query.0, None).await
}

pub(crate) async fn customers(
    auth: Auth<CustomersRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> Result<HttpResponse, ApiError> {
    customers_csv(state, auth.subject(), &query.0, None).await
}

pub(crate) async fn license_keys(
    auth: Auth<LicenseKeysRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> Result<HttpResponse, ApiError> {
    license_keys_csv(state, auth.subject(), &query.0, None).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_written_as_python_writes_cents_over_100() {
        assert_eq!(amount(1999), "19.99");
        assert_eq!(amount(1000), "10.0");
        assert_eq!(amount(1050), "10.5");
        assert_eq!(amount(5), "0.05");
        assert_eq!(amount(0), "0.0");
        assert_eq!(amount(-250), "-2.5");
    }

    #[test]
    fn a_cell_a_spreadsheet_would_run_gets_a_leading_quote() {
        for evil in ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(text(evil), format!("'{evil}"));
        }
        assert_eq!(text("ada@example.com"), "ada@example.com");
        assert_eq!(text(""), "");
    }

    #[test]
    fn dates_are_isoformat_in_the_time_zone() {
        let at = DateTime::parse_from_rfc3339("2026-07-01T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(date(at, Tz::UTC), "2026-07-01T12:00:00+00:00");
        assert_eq!(
            date(at, chrono_tz::Europe::Paris),
            "2026-07-01T14:00:00+02:00"
        );
        let micro = at + chrono::Duration::microseconds(1500);
        assert_eq!(date(micro, Tz::UTC), "2026-07-01T12:00:00.001500+00:00");
    }

    #[test]
    fn quoting_is_rfc_4180() {
        let line = record(&["a,b".into(), "say \"hi\"".into(), "two\nlines".into()]).unwrap();
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\r\n"
        );
    }
}
