//! `GET /v1/meters/{id}/quantities`: the meter's series, folded from its 15-minute rows
//! (`super::series` holds the arithmetic).
//!
//! * Without a customer filter the rows of scope `*` are read; with one, the rows of the
//!   named customers' scopes (`c:` and `x:`, merged per customer).
//! * With `customer_aggregation_function`, every scope's rows of the range are read and
//!   grouped by customer (an `x:` scope joins the customer holding that external id).
//! * A `metadata[...]` filter cannot be served by the rows: the matching events are then
//!   read and folded (bounded by the range).

use std::collections::{BTreeMap, HashMap};

use chrono_tz::Tz;
use tollgate_storage::Agg;

use super::eval::{self, Contribution};
use super::ingest::{customer_scopes, event_scope};
use super::keys::{self, IndexOf};
use super::meters::meter_for;
use super::series::{self, bucket_ceil, Rows};
use crate::auth::Subject;
use crate::domain::customer::customer_by_external_id;
use crate::domain::ids::MeterId;
use crate::domain::meter::{Func, QuantitiesQuery};
use crate::domain::usage_event::UsageEvent;
use crate::error::AppError;
use crate::state::AppState;

pub use super::series::Quantities;

/// The meter's quantities over the query's series.
pub async fn quantities(
    state: &AppState,
    subject: Subject,
    id: MeterId,
    q: &QuantitiesQuery,
) -> Result<Quantities, AppError> {
    state.store.read_barrier().await?;
    let meter = meter_for(state, subject, id).await?.value;
    let org = meter.organization_id;
    let tz: Tz = q.timezone.parse().unwrap_or(Tz::UTC);
    let points = series::series(q.start, q.end, q.interval, tz);
    let func = Func::of(&meter.aggregation);
    let (Some(from), Some(to)) = (
        points.iter().map(|p| bucket_ceil(p.from)).min(),
        points.iter().map(|p| bucket_ceil(p.to)).max(),
    ) else {
        return Ok(Quantities {
            quantities: Vec::new(),
            total: 0.0,
        });
    };
    let by_customer = !q.customer_ids.is_empty() || !q.external_customer_ids.is_empty();
    let wanted_scopes: Option<Vec<String>> = if by_customer {
        Some(
            customer_scopes(state, org, &q.customer_ids, &q.external_customer_ids)
                .await?
                .into_iter()
                .collect(),
        )
    } else {
        None
    };
    let mut rows = Rows::default();
    // Customers as groups: a scope's group is its customer's (merged `c:`/`x:`).
    let mut groups: HashMap<String, usize> = HashMap::new();
    let mut group_of = async |scope: &str| -> Result<usize, AppError> {
        if let Some(g) = groups.get(scope) {
            return Ok(*g);
        }
        let name = match scope.strip_prefix("x:") {
            Some(x) => match customer_by_external_id(&state.store, org, x).await? {
                Some(c) => keys::customer_scope(c.value.id),
                None => scope.to_string(),
            },
            None => scope.to_string(),
        };
        let next = groups.len();
        let g = *groups.entry(name).or_insert(next);
        groups.insert(scope.to_string(), g);
        Ok(g)
    };

    if !q.metadata.is_empty() {
        // Read the events of the range and fold them as the rows would.
        let scopes: Vec<IndexOf> = match &wanted_scopes {
            Some(s) => s.iter().cloned().map(IndexOf::Scope).collect(),
            None => vec![IndexOf::Time],
        };
        let mut seen = std::collections::BTreeSet::new();
        for index in scopes {
            let (start, end) = index.range(org, Some(from * 1_000_000), Some(to * 1_000_000));
            let found = state
                .store
                .usage_index(&start, &end, tollgate_storage::Direction::Asc, usize::MAX)
                .await?;
            let keys: Vec<Vec<u8>> = found
                .iter()
                .filter_map(|k| IndexOf::event_id(k))
                .filter(|id| seen.insert(*id))
                .map(|id| keys::event(org, id))
                .collect();
            for bytes in state.store.usage_events(&keys).await?.into_iter().flatten() {
                let e = UsageEvent::decode(&bytes)?;
                if !metadata_ok(&e, &q.metadata) {
                    continue;
                }
                let Some(c) = eval::meter_contribution(&meter, &e) else {
                    continue;
                };
                let group = match (q.customer_aggregation_function, event_scope(&e)) {
                    (Some(_), Some(s)) => group_of(&s).await?,
                    _ => 0,
                };
                let bucket = keys::bucket_of(e.timestamp);
                match c {
                    Contribution::Count => rows.add(bucket, group, &Agg::one(1.0)),
                    Contribution::Value(v) => rows.add(bucket, group, &Agg::one(v)),
                    Contribution::Member(Some(m)) => rows.add_member(bucket, group, m),
                    Contribution::Member(None) => {}
                }
            }
        }
    } else {
        // The rows of the scopes read: `*`, the customers', or all of them per customer.
        let read_all = q.customer_aggregation_function.is_some();
        let scopes: Vec<String> = match (&wanted_scopes, read_all) {
            (Some(s), _) => s.clone(),
            (None, false) => vec![keys::ALL.to_string()],
            (None, true) => Vec::new(),
        };
        let mut ranges: Vec<(Vec<u8>, Vec<u8>)> = scopes
            .iter()
            .map(|s| keys::meter_buckets(org, meter.id, s, from, to))
            .collect();
        if scopes.is_empty() {
            ranges.push(keys::meter_rows(org, meter.id));
        }
        for (start, end) in ranges {
            if func == Func::Unique {
                for k in state.store.members(&start, &end).await? {
                    let Some((scope, bucket, member)) = keys::parse_member(&k) else {
                        continue;
                    };
                    if scope == keys::ALL && read_all || bucket < from || bucket >= to {
                        continue;
                    }
                    let g = if read_all { group_of(&scope).await? } else { 0 };
                    rows.add_member(bucket, g, member.to_vec());
                }
            } else {
                for (k, agg) in state.store.aggregates(&start, &end).await? {
                    let Some((scope, bucket)) = keys::parse_meter_bucket(&k) else {
                        continue;
                    };
                    if scope == keys::ALL && read_all || bucket < from || bucket >= to {
                        continue;
                    }
                    let g = if read_all { group_of(&scope).await? } else { 0 };
                    rows.add(bucket, g, &agg);
                }
            }
        }
    }
    Ok(series::fold(
        &points,
        &rows,
        func,
        q.customer_aggregation_function,
    ))
}

fn metadata_ok(e: &UsageEvent, wanted: &[(String, String)]) -> bool {
    let mut grouped: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (k, v) in wanted {
        grouped.entry(k.as_str()).or_default().push(v.as_str());
    }
    grouped.into_iter().all(|(k, vs)| {
        let have = eval::metadata_value(e, k).map(|v| match v {
            eval::Py::Bool(b) => b.to_string(),
            other => other.python_str(),
        });
        vs.iter().any(|v| have.as_deref() == Some(*v))
    })
}
