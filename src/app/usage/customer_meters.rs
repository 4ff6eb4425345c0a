//! Customer meters (`/v1/customer-meters/`, the portal's `/v1/customer-portal/meters/`,
//! `CustomerState.active_meters`): what a customer consumed of a meter in its current
//! window, and its credits.
//!
//! A customer meter is read from the windows of the customer's scopes (`c:<id>` and
//! `x:<external id>`, merged): the window accumulates the customer's matching events as
//! they are ingested, and the credits of `meter.credited` events, until a renewal closes
//! it. A (customer, meter) pair has a customer meter once a window exists for one of its
//! scopes. Its id is derived from the customer and the meter.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};
use tollgate_storage::{Agg, WindowState};

use super::keys;
use super::meters::all_meters;
use crate::app::access::organizations_for_list;
use crate::app::listing::{compare_times, directed, select_page};
use crate::app::paging::{ListParams, Sorting};
use crate::auth::Subject;
use crate::domain::customer::{customers_by_external_ids, Customer};
use crate::domain::ids::{CustomerId, MeterId, OrganizationId};
use crate::domain::meter::{Func, Meter};
use crate::error::AppError;
use crate::state::AppState;
use tollgate_actors::ids::derived_uuid;

/// One customer's meter.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomerMeter {
    pub id: uuid::Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub customer: Customer,
    pub meter: Meter,
    pub consumed_units: f64,
    pub credited_units: i64,
    pub balance: f64,
}

/// The sort keys of the customer meter lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CustomerMeterSort {
    CreatedAt,
    ModifiedAt,
    CustomerId,
    CustomerName,
    MeterId,
    MeterName,
    ConsumedUnits,
    CreditedUnits,
    Balance,
}

/// The id of a customer's meter.
pub fn customer_meter_id(customer: CustomerId, meter: MeterId) -> uuid::Uuid {
    derived_uuid(customer.uuid(), &format!("customer_meter:{}", meter.uuid()))
}

/// What the meter's aggregation makes of a window.
pub fn consumed(meter: &Meter, w: &WindowState) -> f64 {
    let a = &w.consumed;
    match Func::of(&meter.aggregation) {
        Func::Unique => w.distinct as f64,
        _ if a.n <= 0 => 0.0,
        Func::Count => a.n as f64,
        Func::Sum => a.sum,
        Func::Max => a.max,
        Func::Min => a.min,
        Func::Avg => a.sum / a.n as f64,
    }
}

fn at_us(us: i64) -> DateTime<Utc> {
    Utc.timestamp_micros(us).single().unwrap_or_default()
}

/// A customer's windows of one meter (one per scope) as one: consumed merged, counts and
/// credits added, created at the first, modified at the last.
pub fn merge_windows(windows: &[WindowState]) -> WindowState {
    let mut merged = WindowState {
        window: 0,
        consumed: Agg::EMPTY,
        distinct: 0,
        credited: 0,
        rollover_credited: 0,
        created_us: i64::MAX,
        modified_us: i64::MIN,
    };
    for w in windows {
        merged.consumed.merge(&w.consumed);
        merged.distinct = merged.distinct.saturating_add(w.distinct);
        merged.credited = merged.credited.saturating_add(w.credited);
        merged.rollover_credited = merged.rollover_credited.saturating_add(w.rollover_credited);
        merged.created_us = merged.created_us.min(w.created_us);
        merged.modified_us = merged.modified_us.max(w.modified_us);
    }
    merged
}

/// The customer meter of merged windows.
fn build(customer: &Customer, meter: &Meter, windows: &[WindowState]) -> CustomerMeter {
    let merged = merge_windows(windows);
    let consumed_units = consumed(meter, &merged);
    let credited_units = merged.credited.max(0);
    let created_at = if windows.is_empty() {
        customer.created_at.max(meter.created_at)
    } else {
        at_us(merged.created_us)
    };
    let modified_at = (!windows.is_empty() && merged.modified_us > merged.created_us)
        .then(|| at_us(merged.modified_us));
    CustomerMeter {
        id: customer_meter_id(customer.id, meter.id),
        created_at,
        modified_at,
        customer: customer.clone(),
        meter: meter.clone(),
        consumed_units,
        credited_units,
        balance: credited_units as f64 - consumed_units,
    }
}

/// The scopes of a customer.
pub fn scopes_of(c: &Customer) -> Vec<String> {
    let mut s = vec![keys::customer_scope(c.id)];
    if let Some(x) = &c.external_id {
        s.push(keys::external_scope(x));
    }
    s
}

/// The customer meters of one customer, for the given meters (those with a window).
pub async fn of_customer(
    state: &AppState,
    customer: &Customer,
    meters: &[Meter],
) -> Result<Vec<CustomerMeter>, AppError> {
    let mut out = Vec::new();
    for meter in meters {
        let mut windows = Vec::new();
        for scope in scopes_of(customer) {
            let (start, end) = keys::window_range(customer.organization_id, meter.id, &scope);
            windows.extend(
                state
                    .store
                    .windows(&start, &end)
                    .await?
                    .into_iter()
                    .map(|(_, w)| w),
            );
        }
        if !windows.is_empty() {
            out.push(build(customer, meter, &windows));
        }
    }
    Ok(out)
}

/// Every customer meter of an organization: from its windows, grouped by customer. The
/// scopes' customers are read in two batched reads (external ids, then ids), whatever the
/// number of customers.
async fn of_organization(
    state: &AppState,
    org: OrganizationId,
    meters: &BTreeMap<MeterId, Meter>,
) -> Result<Vec<CustomerMeter>, AppError> {
    let (start, end) = keys::windows_of(org);
    let windows: Vec<(MeterId, String, WindowState)> = state
        .store
        .windows(&start, &end)
        .await?
        .into_iter()
        .filter_map(|(k, w)| {
            let (meter, scope) = keys::parse_window(&k)?;
            meters.contains_key(&meter).then_some((meter, scope, w))
        })
        .collect();
    let customers = scope_customers(state, org, windows.iter().map(|(_, s, _)| s.as_str())).await?;
    let mut grouped: BTreeMap<(CustomerId, MeterId), (&Customer, Vec<WindowState>)> =
        BTreeMap::new();
    for (meter, scope, w) in windows {
        let Some(customer) = customers.get(&scope) else {
            continue;
        };
        grouped
            .entry((customer.id, meter))
            .or_insert_with(|| (customer, Vec::new()))
            .1
            .push(w);
    }
    Ok(grouped
        .into_iter()
        .filter_map(|((_, m), (c, ws))| meters.get(&m).map(|meter| build(c, meter, &ws)))
        .collect())
}

/// The organization's live (not deleted) customers of these window scopes (`c:<id>`,
/// `x:<external id>`), by scope; scopes of no such customer are left out.
async fn scope_customers(
    state: &AppState,
    org: OrganizationId,
    scopes: impl Iterator<Item = &str>,
) -> Result<BTreeMap<String, Customer>, AppError> {
    let mut external: Vec<&str> = Vec::new();
    let mut ids: Vec<Vec<u8>> = Vec::new();
    for scope in scopes {
        if let Some(x) = scope.strip_prefix("x:") {
            external.push(x);
        } else if let Some(id) = scope
            .strip_prefix("c:")
            .and_then(|u| u.parse::<uuid::Uuid>().ok())
        {
            ids.push(CustomerId(id).key().to_vec());
        }
    }
    external.sort_unstable();
    external.dedup();
    ids.sort_unstable();
    ids.dedup();
    let mut out = BTreeMap::new();
    for (x, c) in customers_by_external_ids(&state.store, org, &external).await? {
        out.insert(keys::external_scope(&x), c.value);
    }
    for c in state.store.get_many::<Customer>(&ids).await? {
        if c.value.organization_id == org {
            out.insert(keys::customer_scope(c.value.id), c.value);
        }
    }
    out.retain(|_, c| !c.is_deleted());
    Ok(out)
}

fn compare(f: CustomerMeterSort, desc: bool, a: &CustomerMeter, b: &CustomerMeter) -> Ordering {
    let float = |x: f64, y: f64| x.partial_cmp(&y).unwrap_or(Ordering::Equal);
    let o = match f {
        CustomerMeterSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
        CustomerMeterSort::ModifiedAt => {
            crate::app::listing::nulls_last(a.modified_at, b.modified_at)
        }
        CustomerMeterSort::CustomerId => a.customer.id.uuid().cmp(&b.customer.id.uuid()),
        CustomerMeterSort::CustomerName => a.customer.name.cmp(&b.customer.name),
        CustomerMeterSort::MeterId => a.meter.id.uuid().cmp(&b.meter.id.uuid()),
        CustomerMeterSort::MeterName => a.meter.name.cmp(&b.meter.name),
        CustomerMeterSort::ConsumedUnits => float(a.consumed_units, b.consumed_units),
        CustomerMeterSort::CreditedUnits => a.credited_units.cmp(&b.credited_units),
        CustomerMeterSort::Balance => float(a.balance, b.balance),
    };
    directed(o, desc)
}

/// What `GET /v1/customer-meters/` shows.
#[derive(Debug, Clone)]
pub struct CustomerMeterFilter {
    pub organization_id: Vec<OrganizationId>,
    pub customer_id: Vec<uuid::Uuid>,
    pub external_customer_id: Vec<String>,
    pub meter_id: Vec<uuid::Uuid>,
    pub sorting: Sorting<CustomerMeterSort>,
}

fn sorted_page(
    all: Vec<CustomerMeter>,
    sorting: &Sorting<CustomerMeterSort>,
    params: ListParams,
) -> Result<(Vec<CustomerMeter>, u64), AppError> {
    let by = |a: &CustomerMeter, b: &CustomerMeter| {
        sorting.compare(a, b, compare).then_with(|| a.id.cmp(&b.id))
    };
    select_page(all.into_iter().map(Ok), &by, params)
}

/// `GET /v1/customer-meters/`: archived meters only when named by `meter_id`.
pub async fn list(
    state: &AppState,
    subject: Subject,
    f: &CustomerMeterFilter,
    params: ListParams,
) -> Result<(Vec<CustomerMeter>, u64), AppError> {
    state.store.read_barrier().await?;
    let mut all = Vec::new();
    for org in organizations_for_list(state, subject, &f.organization_id).await? {
        let meters: BTreeMap<MeterId, Meter> = all_meters(state, org)
            .await?
            .into_iter()
            .filter(|m| {
                if f.meter_id.is_empty() {
                    !m.is_archived()
                } else {
                    f.meter_id.contains(&m.id.uuid())
                }
            })
            .map(|m| (m.id, m))
            .collect();
        all.extend(
            of_organization(state, org, &meters)
                .await?
                .into_iter()
                .filter(|cm| {
                    (f.customer_id.is_empty() || f.customer_id.contains(&cm.customer.id.uuid()))
                        && (f.external_customer_id.is_empty()
                            || cm
                                .customer
                                .external_id
                                .as_ref()
                                .is_some_and(|x| f.external_customer_id.contains(x)))
                }),
        );
    }
    sorted_page(all, &f.sorting, params)
}

/// `GET /v1/customer-meters/{id}`.
pub async fn get(
    state: &AppState,
    subject: Subject,
    id: uuid::Uuid,
) -> Result<CustomerMeter, AppError> {
    state.store.read_barrier().await?;
    for org in organizations_for_list(state, subject, &[]).await? {
        let meters: BTreeMap<MeterId, Meter> = all_meters(state, org)
            .await?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
        if let Some(cm) = of_organization(state, org, &meters)
            .await?
            .into_iter()
            .find(|cm| cm.id == id)
        {
            return Ok(cm);
        }
    }
    Err(AppError::not_found())
}

/// The customer meters of a customer (its portal, its state), archived meters included
/// when `with_archived`.
pub async fn for_customer(
    state: &AppState,
    customer: &Customer,
    with_archived: bool,
) -> Result<Vec<CustomerMeter>, AppError> {
    let meters: Vec<Meter> = all_meters(state, customer.organization_id)
        .await?
        .into_iter()
        .filter(|m| with_archived || !m.is_archived())
        .collect();
    of_customer(state, customer, &meters).await
}

/// What the portal's list shows.
#[derive(Debug, Clone)]
pub struct PortalMeterFilter {
    pub meter_id: Vec<uuid::Uuid>,
    /// Case-insensitive "contains" on the meter's name.
    pub query: Option<String>,
    pub sorting: Sorting<CustomerMeterSort>,
}

/// `GET /v1/customer-portal/meters/`: the session customer's meters.
pub async fn portal_list(
    state: &AppState,
    customer: &Customer,
    f: &PortalMeterFilter,
    params: ListParams,
) -> Result<(Vec<CustomerMeter>, u64), AppError> {
    state.store.read_barrier().await?;
    let q = f.query.as_ref().map(|q| q.to_lowercase());
    let all: Vec<CustomerMeter> = for_customer(state, customer, true)
        .await?
        .into_iter()
        .filter(|cm| {
            (f.meter_id.is_empty() || f.meter_id.contains(&cm.meter.id.uuid()))
                && q.as_ref()
                    .is_none_or(|q| cm.meter.name.to_lowercase().contains(q.as_str()))
        })
        .collect();
    sorted_page(all, &f.sorting, params)
}

/// `GET /v1/customer-portal/meters/{id}`.
pub async fn portal_get(
    state: &AppState,
    customer: &Customer,
    id: uuid::Uuid,
) -> Result<CustomerMeter, AppError> {
    state.store.read_barrier().await?;
    for_customer(state, customer, true)
        .await?
        .into_iter()
        .find(|cm| cm.id == id)
        .ok_or_else(AppError::not_found)
}
