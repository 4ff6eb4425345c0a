//! Meters (`/v1/meters`, Polar's `meter/service.py`): create, read, list, update and
//! archive; and the organization's live meters as ingestion matches them.
//!
//! * Filter and aggregation are frozen once the meter has counted an event (`aggregating`,
//!   set by ingestion): a body carrying either is then a 422 `forbidden`.
//! * No delete: `is_archived: true` archives (refused while prices or benefits use the
//!   meter), `false` unarchives. Archived meters count no new event.
//! * Ingestion reads an organization's live meters from a cache in this node: local meter
//!   writes drop the organization's entry, and an entry lives at most [`CACHE_TTL`], so a
//!   meter written on another node (PostgreSQL) counts events at most that late.

use std::cmp::Ordering;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use tollgate_storage::{Batch, Expect, Stored};

use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::{compare_times, directed, select_page};
use crate::app::paging::{ListParams, Sorting};
use crate::auth::Subject;
use crate::domain::ids::{MeterId, OrganizationId};
use crate::domain::meter::{Meter, MeterChange, MeterSort, MeterUnit, NewMeter, METER_OF_ORG};
use crate::error::{AppError, Invalid};
use crate::field;
use crate::state::AppState;

/// How long a node trusts its cached list of an organization's meters.
pub const CACHE_TTL: Duration = Duration::from_secs(1);

static LIVE: LazyLock<DashMap<OrganizationId, (Instant, Arc<Vec<Meter>>)>> =
    LazyLock::new(DashMap::new);

fn forget(org: OrganizationId) {
    LIVE.remove(&org);
}

/// Every meter of the organization, oldest first (archived ones included).
pub async fn all_meters(state: &AppState, org: OrganizationId) -> Result<Vec<Meter>, AppError> {
    let tenants = [org.key()];
    let mut ids =
        state
            .store
            .index_iter(METER_OF_ORG, &tenants, tollgate_storage::Direction::Asc)?;
    let mut keys = Vec::new();
    while let Some(id) = ids.next().await {
        keys.push(id?);
    }
    Ok(state
        .store
        .get_many::<Meter>(&keys)
        .await?
        .into_iter()
        .map(|s| s.value)
        .collect())
}

/// The organization's meters that count new events (not archived), from the cache.
pub async fn live_meters(
    state: &AppState,
    org: OrganizationId,
) -> Result<Arc<Vec<Meter>>, AppError> {
    if let Some(entry) = LIVE.get(&org) {
        if entry.0.elapsed() < CACHE_TTL {
            return Ok(entry.1.clone());
        }
    }
    let read_at = Instant::now();
    let live: Arc<Vec<Meter>> = Arc::new(
        all_meters(state, org)
            .await?
            .into_iter()
            .filter(|m| !m.is_archived())
            .collect(),
    );
    LIVE.insert(org, (read_at, live.clone()));
    Ok(live)
}

/// Marks the meters as aggregating (they counted an event): their filter and aggregation
/// are frozen from now on.
pub async fn mark_aggregating(state: &AppState, ids: &[MeterId]) -> Result<(), AppError> {
    for id in ids {
        let updated = state
            .store
            .update::<Meter, AppError>(&id.key(), async |current| {
                if current.aggregating {
                    return Ok(None);
                }
                let mut m = current.clone();
                m.aggregating = true;
                Ok(Some(m))
            })
            .await?;
        if let Some(m) = updated {
            forget(m.organization_id);
        }
    }
    Ok(())
}

/// A meter the subject may see, else 404.
pub async fn meter_for(
    state: &AppState,
    subject: Subject,
    id: MeterId,
) -> Result<Stored<Meter>, AppError> {
    match state.store.get::<Meter>(&id.key()).await? {
        Some(m) if can_access(state, subject, m.value.organization_id).await? => Ok(m),
        _ => Err(AppError::not_found()),
    }
}

/// A meter of this organization, if any.
pub async fn meter_in_organization(
    state: &AppState,
    org: OrganizationId,
    id: MeterId,
) -> Result<Option<Meter>, AppError> {
    Ok(state
        .store
        .get::<Meter>(&id.key())
        .await?
        .map(|s| s.value)
        .filter(|m| m.organization_id == org))
}

/// `GET /v1/meters/{id}` (the writes so far included).
pub async fn get(state: &AppState, subject: Subject, id: MeterId) -> Result<Meter, AppError> {
    state.store.read_barrier().await?;
    Ok(meter_for(state, subject, id).await?.value)
}

/// What `GET /v1/meters/` shows.
#[derive(Debug, Clone)]
pub struct MeterFilter {
    pub organization_id: Vec<OrganizationId>,
    /// Case-insensitive "contains" on the name.
    pub query: Option<String>,
    pub is_archived: Option<bool>,
    /// `metadata[key]=value` pairs: every key must hold one of its values.
    pub metadata: Vec<(String, String)>,
    pub sorting: Sorting<MeterSort>,
}

fn compare(field: MeterSort, descending: bool, a: &Meter, b: &Meter) -> Ordering {
    let o = match field {
        MeterSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
        MeterSort::Name => a.name.cmp(&b.name),
    };
    directed(o, descending)
}

/// Whether `metadata` holds, for every key of the filter, one of the values given for it.
pub fn metadata_matches(
    metadata: &crate::domain::metadata::Metadata,
    wanted: &[(String, String)],
) -> bool {
    use crate::domain::metadata::MetaValue;
    let mut keys: Vec<&String> = wanted.iter().map(|(k, _)| k).collect();
    keys.dedup();
    keys.into_iter().all(|k| {
        let have = metadata.0.get(k).map(|v| match v {
            MetaValue::Str(s) => s.clone(),
            MetaValue::Int(i) => i.to_string(),
            MetaValue::Bool(b) => b.to_string(),
        });
        wanted
            .iter()
            .filter(|(wk, _)| wk == k)
            .any(|(_, wv)| have.as_deref() == Some(wv.as_str()))
    })
}

/// One page of the meters the subject reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &MeterFilter,
    params: ListParams,
) -> Result<(Vec<Meter>, u64), AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let query = filter.query.as_ref().map(|q| q.to_lowercase());
    let mut all = Vec::new();
    for org in orgs {
        all.extend(all_meters(state, org).await?.into_iter().filter(|m| {
            query
                .as_ref()
                .is_none_or(|q| m.name.to_lowercase().contains(q.as_str()))
                && filter.is_archived.is_none_or(|a| a == m.is_archived())
                && metadata_matches(&m.metadata, &filter.metadata)
        }));
    }
    let sorting = &filter.sorting;
    let by = |a: &Meter, b: &Meter| {
        sorting
            .compare(a, b, compare)
            .then_with(|| a.id.uuid().cmp(&b.id.uuid()))
    };
    select_page(all.into_iter().map(Ok), &by, params)
}

fn check_unit(unit: MeterUnit, custom_label: &Option<String>, path: &str) -> Result<(), AppError> {
    match (unit, custom_label) {
        (MeterUnit::Custom, None) => Err(AppError::invalid(
            field![path],
            "Value error, custom_label is required when unit is 'custom'.",
            crate::error::Given::none(),
        )),
        (MeterUnit::Scalar | MeterUnit::Token, Some(_)) => Err(AppError::invalid(
            field![path],
            "Value error, custom_label and custom_multiplier are only allowed when unit is 'custom'.",
            crate::error::Given::none(),
        )),
        _ => Ok(()),
    }
}

/// `POST /v1/meters/`.
pub async fn create(state: &AppState, subject: Subject, new: NewMeter) -> Result<Meter, AppError> {
    check_unit(new.unit, &new.custom_label, "unit")?;
    let organization_id = organization_for_create(state, subject, new.organization_id).await?;
    let meter = Meter {
        id: MeterId::new(),
        organization_id,
        name: new.name,
        unit: new.unit,
        custom_label: new.custom_label,
        custom_multiplier: new.custom_multiplier,
        filter: new.filter,
        aggregation: new.aggregation,
        metadata: new.metadata,
        created_at: state.now(),
        modified_at: None,
        archived_at: None,
        aggregating: false,
    };
    let mut batch = Batch::new();
    batch.put(&meter, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    forget(organization_id);
    Ok(meter)
}

/// Why the meter cannot be archived: the active products' metered prices and the
/// `meter_credit` benefits that use it. The lead wires helper `prices`' check here.
pub async fn archive_refusal(
    _state: &AppState,
    _meter: &Meter,
) -> Result<Option<&'static str>, AppError> {
    // "Cannot archive meter that is still attached to active products" /
    // "Cannot archive meter that is still referenced by active benefits".
    Ok(None)
}

/// `PATCH /v1/meters/{id}`.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: MeterId,
    change: MeterChange,
) -> Result<Meter, AppError> {
    let current = meter_for(state, subject, id).await?.value;
    let frozen = |field: &'static str| {
        Invalid::new(
            field![field],
            "This field can't be updated because the meter is already aggregating events.",
            crate::error::Given::none(),
        )
        .kind("forbidden")
    };
    if current.aggregating {
        let mut problems = Vec::new();
        if change.filter.is_some() {
            problems.push(frozen("filter"));
        }
        if change.aggregation.is_some() {
            problems.push(frozen("aggregation"));
        }
        if !problems.is_empty() {
            return Err(AppError::Invalid(problems));
        }
    }
    if change.is_archived == Some(true) && !current.is_archived() {
        if let Some(why) = archive_refusal(state, &current).await? {
            return Err(AppError::invalid(field!["is_archived"], why, true));
        }
    }
    let now = state.now();
    let updated = state
        .store
        .update::<Meter, AppError>(&id.key(), async |current| {
            let mut m = current.clone();
            if m.aggregating && (change.filter.is_some() || change.aggregation.is_some()) {
                return Err(AppError::Invalid(vec![frozen("filter")]));
            }
            if let Some(name) = &change.name {
                m.name = name.clone();
            }
            if let Some(unit) = change.unit {
                m.unit = unit;
            }
            if let Some(label) = &change.custom_label {
                m.custom_label = label.clone();
            }
            if let Some(mult) = change.custom_multiplier {
                m.custom_multiplier = mult;
            }
            if change.unit.is_some() || change.custom_label.is_some() {
                check_unit(m.unit, &m.custom_label, "unit")?;
            }
            if let Some(f) = &change.filter {
                m.filter = f.clone();
            }
            if let Some(a) = &change.aggregation {
                m.aggregation = a.clone();
            }
            if let Some(md) = &change.metadata {
                m.metadata = md.clone();
            }
            match change.is_archived {
                Some(true) if m.archived_at.is_none() => m.archived_at = Some(now),
                Some(false) => m.archived_at = None,
                _ => {}
            }
            m.modified_at = Some(now);
            Ok(Some(m))
        })
        .await?;
    forget(current.organization_id);
    updated.ok_or_else(AppError::not_found)
}
