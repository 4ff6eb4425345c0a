//! `POST /v1/events/ingest` and the events' reads (`GET /v1/events/`, `/{id}`).
//!
//! Ingestion (Polar's `event/service.py` `ingest`): the organization and the customer ids
//! of every event are checked first (all or nothing: one 422 names every problem); each
//! event then goes to the usage store with its index keys and what it adds to the
//! organization's live meters ([`deltas`]), in one durable call that skips the events
//! already stored. An event given an `external_id` has an id derived from it, so a repeat
//! is a duplicate (counted, not refused), even across nodes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use tollgate_storage::{Agg, Delta, Direction, Guard, Guarded, IngestEvent, StorageError};

use super::eval::{self, Contribution};
use super::keys::{self, IndexOf};
use super::meters;
use crate::app::access::{organization_for_create, organizations_for_list};
use crate::app::paging::ListParams;
use crate::auth::Subject;
use crate::domain::customer::{customer_by_external_id, Customer};
use crate::domain::ids::{CustomerId, EventId, MeterId, OrganizationId};
use crate::domain::meter::Meter;
use crate::domain::usage_event::{EventCustomer, EventFilter, EventSource, NewEvent, UsageEvent};
use crate::error::{AppError, Invalid, Step};
use crate::field;
use crate::state::AppState;
use tollgate_actors::ids::derived_uuid;

/// What an ingestion did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ingested {
    pub inserted: u64,
    pub duplicates: u64,
}

/// The scopes an event counts in besides `*`: its customer's.
pub fn event_scope(event: &UsageEvent) -> Option<String> {
    match (&event.customer_id, &event.external_customer_id) {
        (Some(id), _) => Some(keys::customer_scope(*id)),
        (None, Some(x)) => Some(keys::external_scope(x)),
        (None, None) => None,
    }
}

/// What the event adds to the meters (those that count it) and to the organization's
/// event count, and the meters it counts in.
pub fn deltas(event: &UsageEvent, meters: &[Meter]) -> (Vec<Delta>, Vec<MeterId>) {
    let bucket = keys::bucket_of(event.timestamp);
    let mut out = vec![Delta::Add {
        key: keys::event_count(event.organization_id, bucket),
        agg: Agg::one(1.0),
    }];
    let mut counted = Vec::new();
    for meter in meters {
        if meter_deltas(event, meter, &mut out) {
            counted.push(meter.id);
        }
    }
    (out, counted)
}

/// What the event adds to one meter (its buckets and its customer's window), appended to
/// `out`; whether the meter counts it (a credit of a system event is not a count). Live
/// ingestion and the backfill (`backfill`) add the same.
pub fn meter_deltas(event: &UsageEvent, meter: &Meter, out: &mut Vec<Delta>) -> bool {
    let org = event.organization_id;
    let bucket = keys::bucket_of(event.timestamp);
    let scope = event_scope(event);
    // System events count only through the windows' credits (below), as in Polar.
    let credit = system_credit(event, meter.id);
    if let Some((units, rollover)) = credit {
        if let Some(scope) = &scope {
            out.push(Delta::Window {
                key: keys::window(org, meter.id, scope),
                agg: Agg::EMPTY,
                credit: units,
                rollover_credit: if rollover { units } else { 0 },
                member: None,
            });
        }
        return false;
    }
    let Some(contribution) = eval::meter_contribution(meter, event) else {
        return false;
    };
    let mut scopes = vec![keys::ALL.to_string()];
    scopes.extend(scope.clone());
    let (agg, member) = match &contribution {
        Contribution::Count => (Agg::one(1.0), None),
        Contribution::Value(v) => (Agg::one(*v), None),
        Contribution::Member(m) => (Agg::EMPTY, m.clone()),
    };
    for s in &scopes {
        let key = keys::meter_bucket(org, meter.id, s, bucket);
        match &contribution {
            Contribution::Member(Some(m)) => out.push(Delta::Distinct {
                key,
                member: m.clone(),
            }),
            Contribution::Member(None) => {}
            _ => out.push(Delta::Add { key, agg }),
        }
    }
    if let Some(s) = &scope {
        out.push(Delta::Window {
            key: keys::window(org, meter.id, s),
            agg,
            credit: 0,
            rollover_credit: 0,
            member,
        });
    }
    true
}

/// The credit a `meter.credited` system event gives `meter`: `(units, rollover)`.
fn system_credit(event: &UsageEvent, meter: MeterId) -> Option<(i64, bool)> {
    use crate::domain::usage_event::EventValue;
    if event.source != EventSource::System || event.name != "meter.credited" {
        return None;
    }
    let v = &event.metadata.values;
    let for_meter =
        matches!(v.get("meter_id"), Some(EventValue::Str(s)) if *s == meter.uuid().to_string());
    if !for_meter {
        return None;
    }
    let units = match v.get("units") {
        Some(EventValue::Int(u)) => *u,
        _ => 0,
    };
    let rollover = matches!(v.get("rollover"), Some(EventValue::Bool(true)));
    Some((units, rollover))
}

/// The store's form of an event: its key, bytes, index keys and deltas, for the meters
/// live at `generation` (the event is indexed by it: `backfill`).
pub fn ingest_event(
    event: &UsageEvent,
    meters: &[Meter],
    generation: u64,
) -> Result<(IngestEvent, Vec<MeterId>), AppError> {
    let org = event.organization_id;
    let mut index = vec![
        keys::by_time(org, event.timestamp, event.id),
        keys::by_name(org, &event.name, event.timestamp, event.id),
        keys::by_generation(org, generation, event.id),
    ];
    if let Some(scope) = event_scope(event) {
        index.push(keys::by_scope(org, &scope, event.timestamp, event.id));
    }
    let (deltas, counted) = deltas(event, meters);
    Ok((
        IngestEvent {
            key: keys::event(org, event.id),
            value: event.encode()?,
            index,
            deltas,
        },
        counted,
    ))
}

fn at_event(i: usize, mut e: AppError) -> AppError {
    if let AppError::Invalid(items) = &mut e {
        for item in items.iter_mut() {
            let mut path = vec![Step::Field("events".into()), Step::Index(i)];
            path.append(&mut item.path);
            item.path = path;
        }
    }
    e
}

/// Times an ingestion reads its meters again after the store found their generation
/// moved on (each time a meter was written meanwhile) before it gives up.
const STALE_ATTEMPTS: usize = 16;

/// Writes events (user or system) to the store, with their deltas for the organization's
/// live meters; marks the meters that counted their first event. One store call per
/// organization, guarded by the generation its meters were read at: if a meter was
/// written since (on any node), the call wrote nothing, and runs again with the meters
/// read anew.
pub async fn store_events(state: &AppState, events: Vec<UsageEvent>) -> Result<Ingested, AppError> {
    let sent = events.len() as u64;
    let mut per_org: BTreeMap<OrganizationId, Vec<&UsageEvent>> = BTreeMap::new();
    for e in &events {
        per_org.entry(e.organization_id).or_default().push(e);
    }
    let mut inserted = 0u64;
    for (org, events) in per_org {
        let mut attempt = 0;
        let (flags, counted, meters) = loop {
            let (generation, meters) = if attempt == 0 {
                meters::live_meters(state, org).await?
            } else {
                meters::refresh(state, org).await?
            };
            let mut batch = Vec::with_capacity(events.len());
            let mut counted: Vec<Vec<MeterId>> = Vec::with_capacity(events.len());
            for e in &events {
                let (ie, c) = ingest_event(e, &meters, generation)?;
                batch.push(ie);
                counted.push(c);
            }
            let guard = Guard {
                key: keys::generation(org),
                generation,
            };
            let now_us = state.now().timestamp_micros();
            match state.store.ingest_guarded(batch, now_us, guard).await? {
                Guarded::Inserted(flags) => break (flags, counted, meters),
                Guarded::Stale(_) if attempt + 1 < STALE_ATTEMPTS => attempt += 1,
                Guarded::Stale(_) => {
                    return Err(StorageError::Unavailable(
                        "the organization's meters kept changing during the ingestion".into(),
                    )
                    .into())
                }
            }
        };
        let mut first: BTreeSet<MeterId> = BTreeSet::new();
        for (flag, c) in flags.iter().zip(&counted) {
            if *flag {
                inserted += 1;
                first.extend(c.iter().copied());
            }
        }
        let fresh: Vec<MeterId> = meters
            .iter()
            .filter(|m| !m.aggregating && first.contains(&m.id))
            .map(|m| m.id)
            .collect();
        meters::mark_aggregating(state, &fresh).await?;
    }
    Ok(Ingested {
        inserted,
        duplicates: sent - inserted,
    })
}

/// `POST /v1/events/ingest`: checks every event (all or nothing), then stores them.
pub async fn ingest(
    state: &AppState,
    subject: Subject,
    events: Vec<NewEvent>,
) -> Result<Ingested, AppError> {
    let now = state.now();
    let mut problems: Vec<Invalid> = Vec::new();
    let mut checked = Vec::with_capacity(events.len());
    let mut org_cache: HashMap<Option<uuid::Uuid>, Result<OrganizationId, Vec<Invalid>>> =
        HashMap::new();
    for (i, new) in events.into_iter().enumerate() {
        let org = match org_cache.get(&new.organization_id) {
            Some(r) => r.clone(),
            None => {
                let r = match organization_for_create(state, subject, new.organization_id).await {
                    Ok(o) => Ok(o),
                    Err(AppError::Invalid(items)) => Err(items),
                    Err(e) => return Err(e),
                };
                org_cache.insert(new.organization_id, r.clone());
                r
            }
        };
        let mut mine = Vec::new();
        let org = match org {
            Ok(o) => Some(o),
            Err(items) => {
                mine.extend(items);
                None
            }
        };
        let mut customer_id = None;
        let mut external_customer_id = None;
        match &new.customer {
            EventCustomer::Id(id) => {
                let found = match org {
                    Some(org) => state
                        .store
                        .get::<Customer>(&CustomerId(*id).key())
                        .await?
                        .is_some_and(|c| c.value.organization_id == org && !c.value.is_deleted()),
                    None => false,
                };
                if found {
                    customer_id = Some(CustomerId(*id));
                } else if org.is_some() {
                    mine.push(
                        Invalid::new(field!["customer_id"], "Customer not found.", *id)
                            .kind("customer_id"),
                    );
                }
            }
            EventCustomer::External(x) => external_customer_id = Some(x.clone()),
        }
        if let Some(member) = new.member_id {
            mine.push(
                Invalid::new(field!["member_id"], "Member not found.", member).kind("member_id"),
            );
        }
        if !mine.is_empty() {
            if let AppError::Invalid(items) = at_event(i, AppError::Invalid(mine)) {
                problems.extend(items);
            }
            continue;
        }
        let Some(org) = org else { continue };
        let id = match &new.external_id {
            Some(x) => EventId(derived_uuid(org.uuid(), &format!("event:{x}"))),
            None => EventId::new(),
        };
        checked.push(UsageEvent {
            id,
            organization_id: org,
            name: new.name,
            source: EventSource::User,
            timestamp: new.timestamp.unwrap_or(now),
            ingested_at: now,
            customer_id,
            external_customer_id,
            external_member_id: new.external_member_id,
            external_id: new.external_id,
            parent_id: new.parent_id,
            metadata: new.metadata,
        });
    }
    if !problems.is_empty() {
        return Err(AppError::Invalid(problems));
    }
    if checked.is_empty() {
        return Ok(Ingested {
            inserted: 0,
            duplicates: 0,
        });
    }
    store_events(state, checked).await
}

/// An event of an organization, if stored.
pub async fn event_in(
    state: &AppState,
    org: OrganizationId,
    id: EventId,
) -> Result<Option<UsageEvent>, AppError> {
    match state.store.usage_event(&keys::event(org, id)).await? {
        Some(bytes) => Ok(Some(UsageEvent::decode(&bytes)?)),
        None => Ok(None),
    }
}

/// `GET /v1/events/{id}`: an event of an organization the subject reaches.
pub async fn get(state: &AppState, subject: Subject, id: EventId) -> Result<UsageEvent, AppError> {
    for org in organizations_for_list(state, subject, &[]).await? {
        if let Some(e) = event_in(state, org, id).await? {
            return Ok(e);
        }
    }
    Err(AppError::not_found())
}

/// The customer an event belongs to: by its customer id, else by its external customer
/// id in the organization (Polar's `Event.customer`).
pub async fn event_customer(
    state: &AppState,
    event: &UsageEvent,
) -> Result<Option<Customer>, AppError> {
    if let Some(id) = event.customer_id {
        return Ok(state
            .store
            .get::<Customer>(&id.key())
            .await?
            .map(|s| s.value)
            .filter(|c| c.organization_id == event.organization_id));
    }
    if let Some(x) = &event.external_customer_id {
        return Ok(
            customer_by_external_id(&state.store, event.organization_id, x)
                .await?
                .map(|s| s.value),
        );
    }
    Ok(None)
}

/// The scopes of the customers named by ids or external ids in an organization, each id
/// widened with the customer's other key (Polar's `resolve_customer_identifiers`).
pub async fn customer_scopes(
    state: &AppState,
    org: OrganizationId,
    ids: &[uuid::Uuid],
    external_ids: &[String],
) -> Result<BTreeSet<String>, AppError> {
    let mut scopes = BTreeSet::new();
    for id in ids {
        scopes.insert(keys::customer_scope(CustomerId(*id)));
        if let Some(c) = state.store.get::<Customer>(&CustomerId(*id).key()).await? {
            if c.value.organization_id == org {
                if let Some(x) = &c.value.external_id {
                    scopes.insert(keys::external_scope(x));
                }
            }
        }
    }
    for x in external_ids {
        scopes.insert(keys::external_scope(x));
        if let Some(c) = customer_by_external_id(&state.store, org, x).await? {
            scopes.insert(keys::customer_scope(c.value.id));
        }
    }
    Ok(scopes)
}

/// Whether an event passes the list's in-memory filters.
fn keep(event: &UsageEvent, f: &EventFilter, meter: Option<&Meter>) -> bool {
    if !f.names.is_empty() && !f.names.contains(&event.name) {
        return false;
    }
    if !f.sources.is_empty() && !f.sources.contains(&event.source) {
        return false;
    }
    if let Some(p) = &f.parent_id {
        if event.parent_id.as_deref() != Some(p.as_str()) {
            return false;
        }
    }
    if let Some(q) = &f.query {
        let q = q.to_lowercase();
        if !event.name.to_lowercase().contains(&q) {
            return false;
        }
    }
    if let Some(filter) = &f.filter {
        if !eval::filter_matches(filter, event) {
            return false;
        }
    }
    if let Some(m) = meter {
        if eval::meter_contribution(m, event).is_none() {
            return false;
        }
    }
    metadata_pairs_match(event, &f.metadata)
}

fn metadata_pairs_match(event: &UsageEvent, wanted: &[(String, String)]) -> bool {
    let mut grouped: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (k, v) in wanted {
        grouped.entry(k.as_str()).or_default().push(v.as_str());
    }
    grouped.into_iter().all(|(k, vs)| {
        let have = eval::metadata_value(event, k).map(|v| match v {
            eval::Py::Bool(b) => b.to_string(),
            other => other.python_str(),
        });
        vs.iter().any(|v| have.as_deref() == Some(*v))
    })
}

/// `GET /v1/events/`: one page of the events of the organizations the subject reaches,
/// newest first (or oldest with `sorting=timestamp`), and their exact total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &EventFilter,
    params: ListParams,
) -> Result<(Vec<UsageEvent>, u64), AppError> {
    let requested: Vec<OrganizationId> = filter
        .organization_ids
        .iter()
        .map(|u| OrganizationId(*u))
        .collect();
    let orgs = organizations_for_list(state, subject, &requested).await?;
    let from = filter.start.map(|t| t.timestamp_micros());
    let to = filter.end.map(|t| t.timestamp_micros().saturating_add(1));
    let mut keys_all: Vec<(i64, Vec<u8>, OrganizationId)> = Vec::new();
    for org in orgs {
        // A meter of another organization: none of this one's events.
        if let Some(m) = filter.meter_id {
            if meters::meter_in_organization(state, org, MeterId(m))
                .await?
                .is_none()
            {
                continue;
            }
        }
        let indexes: Vec<IndexOf> =
            if !filter.customer_ids.is_empty() || !filter.external_customer_ids.is_empty() {
                customer_scopes(
                    state,
                    org,
                    &filter.customer_ids,
                    &filter.external_customer_ids,
                )
                .await?
                .into_iter()
                .map(IndexOf::Scope)
                .collect()
            } else if !filter.names.is_empty() {
                filter.names.iter().cloned().map(IndexOf::Name).collect()
            } else {
                vec![IndexOf::Time]
            };
        for index in indexes {
            let (start, end) = index.range(org, from, to);
            for k in state
                .store
                .usage_index(&start, &end, Direction::Asc, usize::MAX)
                .await?
            {
                let ts_at = k.len().saturating_sub(24);
                let ts = k
                    .get(ts_at..ts_at + 8)
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map(|b| (u64::from_be_bytes(b) ^ (1 << 63)) as i64)
                    .unwrap_or(0);
                keys_all.push((ts, k, org));
            }
        }
    }
    // Newest first by default; equal timestamps by id, the same way each time.
    let mut ids: Vec<(i64, EventId, OrganizationId)> = keys_all
        .into_iter()
        .filter_map(|(ts, k, org)| IndexOf::event_id(&k).map(|id| (ts, id, org)))
        .collect();
    ids.sort_by_key(|a| (a.0, a.1.uuid()));
    ids.dedup_by(|a, b| a.1 == b.1 && a.2 == b.2);
    if !filter.ascending {
        ids.reverse();
    }
    let needs_load = !filter.names.is_empty()
        && filter.customer_ids.len() + filter.external_customer_ids.len() > 0
        || !filter.sources.is_empty()
        || filter.parent_id.is_some()
        || filter.query.is_some()
        || filter.filter.is_some()
        || filter.meter_id.is_some()
        || !filter.metadata.is_empty();
    let offset = usize::try_from(params.offset()).unwrap_or(usize::MAX);
    let limit = usize::try_from(params.limit).unwrap_or(usize::MAX);
    if !needs_load {
        let total = ids.len() as u64;
        let page: Vec<Vec<u8>> = ids
            .iter()
            .skip(offset)
            .take(limit)
            .map(|(_, id, org)| keys::event(*org, *id))
            .collect();
        let events = load(state, &page).await?;
        return Ok((events, total));
    }
    let mut meters_by_org: HashMap<OrganizationId, Option<Meter>> = HashMap::new();
    let mut kept = Vec::new();
    let mut total = 0u64;
    for chunk in ids.chunks(256) {
        let keys: Vec<Vec<u8>> = chunk
            .iter()
            .map(|(_, id, org)| keys::event(*org, *id))
            .collect();
        for e in load(state, &keys).await? {
            let meter = match filter.meter_id {
                Some(m) => {
                    if let std::collections::hash_map::Entry::Vacant(slot) =
                        meters_by_org.entry(e.organization_id)
                    {
                        slot.insert(
                            meters::meter_in_organization(state, e.organization_id, MeterId(m))
                                .await?,
                        );
                    }
                    meters_by_org.get(&e.organization_id).cloned().flatten()
                }
                None => None,
            };
            if keep(&e, filter, meter.as_ref()) {
                if (total as usize) >= offset && kept.len() < limit {
                    kept.push(e);
                }
                total += 1;
            }
        }
    }
    Ok((kept, total))
}

async fn load(state: &AppState, keys: &[Vec<u8>]) -> Result<Vec<UsageEvent>, AppError> {
    let mut out = Vec::with_capacity(keys.len());
    for bytes in state.store.usage_events(keys).await?.into_iter().flatten() {
        out.push(UsageEvent::decode(&bytes)?);
    }
    Ok(out)
}
