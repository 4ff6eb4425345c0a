//! Meters (`/v1/meters`, Polar's `meter/service.py`): create, read, list, update and
//! archive; and the organization's live meters as ingestion matches them.
//!
//! * Filter and aggregation are frozen once the meter has counted an event (`aggregating`,
//!   set by ingestion): a body carrying either is then a 422 `forbidden`.
//! * No delete: `is_archived: true` archives (refused while prices or benefits use the
//!   meter), `false` unarchives. Archived meters count no new event.
//! * Ingestion reads an organization's live meters from this node's [`MeterCache`] (in
//!   the application's state), each entry with the organization's meter generation it was
//!   read at; the store checks that generation in the ingest's transaction, so an entry
//!   made stale by any node's meter write is detected and read again, never trusted
//!   (`backfill` has the whole design). A meter counts an event live only from the
//!   generation after it went live; the backfill counts the events before.

use std::cmp::Ordering;
use std::sync::Arc;

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

use super::backfill::{self, MeterState};
use super::keys;

pub use crate::state::{LiveMeters, MeterCache};

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

/// The organization's meters that count new events, and the generation they are for,
/// from the cache (see [`refresh`]; the store tells when the generation moved on).
pub async fn live_meters(state: &AppState, org: OrganizationId) -> Result<LiveMeters, AppError> {
    if let Some(entry) = state.meters.entries.get(&org) {
        return Ok(entry.clone());
    }
    refresh(state, org).await
}

/// Reads the organization's live meters again: the generation first, then the meters
/// and their states, so that the list holds every meter live at that generation (a meter
/// goes live in a bump: `backfill::activate`). A meter counts new events when it is not
/// archived and its state says so at the generation ([`MeterState::counts_at`]).
pub async fn refresh(state: &AppState, org: OrganizationId) -> Result<LiveMeters, AppError> {
    let generation = state.store.generation(&keys::generation(org)).await?;
    let meters: Vec<Meter> = all_meters(state, org)
        .await?
        .into_iter()
        .filter(|m| !m.is_archived())
        .collect();
    let state_keys: Vec<Vec<u8>> = meters
        .iter()
        .map(|m| keys::meter_state(org, m.id))
        .collect();
    let states = state.store.usage_meta(&state_keys).await?;
    let mut live = Vec::with_capacity(meters.len());
    for (meter, bytes) in meters.into_iter().zip(states) {
        let counts = match bytes {
            // A meter older than the meter states: it has counted every event live.
            None => true,
            Some(b) => MeterState::decode(&b)?.counts_at(generation),
        };
        if counts {
            live.push(meter);
        }
    }
    let entry: LiveMeters = (generation, Arc::new(live));
    state.meters.entries.insert(org, entry.clone());
    Ok(entry)
}

/// Marks the meters as aggregating (they counted an event): their filter and aggregation
/// are frozen from now on. Bumps the organization's generation, so that every node reads
/// its meters again rather than marking them again.
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
            backfill::bump(state, m.organization_id, Vec::new()).await?;
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
    // Pending before the meter exists: no node counts it live until it goes live in a
    // bump, and the backfill counts the events before (a crash in between leaves it
    // pending: the backfill job makes it live).
    backfill::set_pending(state, &meter).await?;
    let mut batch = Batch::new();
    batch.put(&meter, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    backfill::activate(state, &meter).await?;
    state.meters.backfill.notify_one();
    Ok(meter)
}

/// Why the meter cannot be archived: the active products' metered prices and the
/// `meter_credit` benefits that use it ("Cannot archive meter that is still attached to
/// active products" / "… still referenced by active benefits").
pub async fn archive_refusal(
    state: &AppState,
    meter: &Meter,
) -> Result<Option<&'static str>, AppError> {
    crate::app::catalog::meter_references::meter_references(state, meter).await
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
    // A new filter or aggregation (the meter counted nothing yet): it counts anew, from
    // pending, every event again (the backfill starts over).
    let recount = change.filter.is_some() || change.aggregation.is_some();
    let before = match recount {
        true => Some(backfill::reset_pending(state, &current).await?),
        false => None,
    };
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
        .await;
    if let (Err(_), Some(before)) = (&updated, before) {
        // Refused (it began aggregating meanwhile): its counting goes on as it was.
        backfill::restore(state, &current, before).await?;
    }
    let updated = updated?.ok_or_else(AppError::not_found)?;
    if recount {
        backfill::activate(state, &updated).await?;
        state.meters.backfill.notify_one();
    } else {
        // Every node reads the organization's meters again (archived, unarchived, …).
        backfill::bump(state, updated.organization_id, Vec::new()).await?;
    }
    Ok(updated)
}
