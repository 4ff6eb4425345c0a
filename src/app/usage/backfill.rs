//! Every meter counts every event of its organization exactly once, whenever it was
//! created (Polar computes meters from the events: a meter added today shows last
//! month's usage), on one node or several sharing PostgreSQL.
//!
//! **The meter generation.** Each organization has a generation (a number in the usage
//! store's meta entries, [`keys::generation`]) bumped by every meter write. Ingestion
//! computes an event's deltas for the meters live at the generation its meter list was
//! read at ([`meters::refresh`]: the generation first, then the meters), indexes the event
//! by that generation ([`keys::by_generation`]) and passes the generation to the store,
//! which checks it in the ingest's transaction (`Store::ingest_guarded`): if it moved on,
//! nothing is written and ingestion reads its meters again. On PostgreSQL the ingest
//! holds the generation's advisory lock shared to its commit and a bump takes it
//! exclusive, so no ingest computed for an older generation commits after a bump.
//!
//! **A meter's state** ([`MeterState`], meta entry [`keys::meter_state`]): *pending*
//! (written before the meter record: no node counts it live), then *live from `l`*: it
//! counts live the events ingested at generations after `l`, and the backfill counts
//! those ingested at `l` and before. [`activate`] makes it live: a bump (generation `l`),
//! the state written live from `l`, a second bump. An ingest at generation `l` or before
//! never counts the meter live (it read the meter pending, or live from `l` ≥ its
//! generation); one after `l` read it live (it read its meters after the second bump, so
//! after the state). So the events of generations ≤ `l` are a fixed set once the second
//! bump committed (no ingest of theirs commits any more), and the backfill counts exactly
//! those, the others were counted live.
//!
//! **The backfill** ([`start`], a background job; one node at a time on PostgreSQL by its
//! job lock, and exactly once whatever runs it): it reads the meter's events of
//! generations ≤ `l` in the order of the generation index, a batch at a time, and in one
//! store transaction (`Store::usage_cas`) applies their deltas and advances the state's
//! cursor, provided the state is still the one the batch was computed from. A crash or a
//! `kill -9` between batches resumes at the cursor; two runners never both apply a batch.
//! An old event counts in its customer's current window (as a late event does at a
//! renewal). When the range is done the state says so, and nothing reads it any more.
//!
//! Meters stored before the states existed have none: they count every event live, as
//! before. Events stored by a build before the generation index have no entry in it: a
//! meter created later does not count them (usage billing had not shipped then).
//! A new filter or aggregation (allowed while the meter counted nothing) makes the meter
//! pending again and its backfill start over.

use std::time::Duration;

use actix_web::web;
use tollgate_storage::{Direction, StorageError};

use super::ingest::meter_deltas;
use super::keys;
use super::meters;
use crate::domain::ids::{MeterId, OrganizationId};
use crate::domain::meter::Meter;
use crate::domain::usage_event::UsageEvent;
use crate::error::AppError;
use crate::state::AppState;

/// A meter's state, in the usage store's meta entries (see the module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeterState {
    /// `None`: pending (counted by nobody yet); else the generation it went live at.
    pub live_from: Option<u64>,
    /// The last key of the generation index the backfill counted (empty: none yet).
    pub cursor: Vec<u8>,
    /// Whether the backfill counted every event of generations ≤ `live_from`.
    pub done: bool,
}

const STATE_VERSION: u8 = 1;

impl MeterState {
    /// Pending.
    pub const PENDING: MeterState = MeterState {
        live_from: None,
        cursor: Vec::new(),
        done: false,
    };

    /// Whether the meter counts live the events ingested at `generation`.
    pub fn counts_at(&self, generation: u64) -> bool {
        self.live_from.is_some_and(|l| l < generation)
    }

    /// As stored: a version byte, a presence byte and the generation (big-endian), the
    /// done byte, then the cursor.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(11 + self.cursor.len());
        out.push(STATE_VERSION);
        out.push(u8::from(self.live_from.is_some()));
        out.extend_from_slice(&self.live_from.unwrap_or(0).to_be_bytes());
        out.push(u8::from(self.done));
        out.extend_from_slice(&self.cursor);
        out
    }

    /// Reads what [`MeterState::encode`] wrote.
    pub fn decode(b: &[u8]) -> Result<MeterState, StorageError> {
        let bad = || StorageError::Corrupt("usage store: a meter state is not as written".into());
        if b.first() != Some(&STATE_VERSION) || b.len() < 11 {
            return Err(bad());
        }
        let from = u64::from_be_bytes(b[2..10].try_into().map_err(|_| bad())?);
        let live_from = match b[1] {
            0 => None,
            1 => Some(from),
            _ => return Err(bad()),
        };
        let done = match b[10] {
            0 => false,
            1 => true,
            _ => return Err(bad()),
        };
        Ok(MeterState {
            live_from,
            cursor: b[11..].to_vec(),
            done,
        })
    }
}

/// Events a backfill transaction counts at most.
pub const BATCH: usize = 500;

/// Bumps the organization's generation, writing the meta entries `puts` with it; every
/// node reads the organization's meters again before its next ingest.
pub async fn bump(
    state: &AppState,
    org: OrganizationId,
    puts: Vec<(Vec<u8>, Vec<u8>)>,
) -> Result<u64, AppError> {
    let g = state
        .store
        .bump_generation(&keys::generation(org), puts)
        .await?;
    state.meters.forget(org);
    Ok(g)
}

/// A new meter's state, pending, before its record is written.
pub async fn set_pending(state: &AppState, meter: &Meter) -> Result<(), AppError> {
    let key = keys::meter_state(meter.organization_id, meter.id);
    let now = state.now().timestamp_micros();
    state
        .store
        .usage_cas(&key, None, MeterState::PENDING.encode(), Vec::new(), now)
        .await?;
    Ok(())
}

/// A meter pending again (its filter or aggregation changes), in a bump: every ingest
/// after it reads it pending. Answers the state it had, for [`restore`].
pub async fn reset_pending(state: &AppState, meter: &Meter) -> Result<Option<Vec<u8>>, AppError> {
    let key = keys::meter_state(meter.organization_id, meter.id);
    let before = state
        .store
        .usage_meta(std::slice::from_ref(&key))
        .await?
        .pop()
        .flatten();
    bump(
        state,
        meter.organization_id,
        vec![(key, MeterState::PENDING.encode())],
    )
    .await?;
    Ok(before)
}

/// Puts back the state [`reset_pending`] answered (the change it was for failed).
pub async fn restore(
    state: &AppState,
    meter: &Meter,
    before: Option<Vec<u8>>,
) -> Result<(), AppError> {
    let key = keys::meter_state(meter.organization_id, meter.id);
    let puts = before.map(|b| vec![(key, b)]).unwrap_or_default();
    bump(state, meter.organization_id, puts).await?;
    Ok(())
}

async fn read_state(state: &AppState, key: &[u8]) -> Result<Option<MeterState>, AppError> {
    match state
        .store
        .usage_meta(&[key.to_vec()])
        .await?
        .pop()
        .flatten()
    {
        Some(b) => Ok(Some(MeterState::decode(&b)?)),
        None => Ok(None),
    }
}

/// Makes a pending meter live (see the module): a bump to `l`, the state live from `l`,
/// a bump past it. Safe to run again or on several nodes at once (the state's
/// compare-and-swap takes one `l`); for a live meter, only makes sure the generation is
/// past its `l`. Answers the meter's state.
pub async fn activate(state: &AppState, meter: &Meter) -> Result<Option<MeterState>, AppError> {
    let org = meter.organization_id;
    let key = keys::meter_state(org, meter.id);
    let mut current = read_state(state, &key).await?;
    if let Some(pending) = current.as_ref().filter(|s| s.live_from.is_none()) {
        let l = bump(state, org, Vec::new()).await?;
        let live = MeterState {
            live_from: Some(l),
            cursor: Vec::new(),
            done: false,
        };
        let now = state.now().timestamp_micros();
        state
            .store
            .usage_cas(
                &key,
                Some(&pending.encode()),
                live.encode(),
                Vec::new(),
                now,
            )
            .await?;
        current = read_state(state, &key).await?;
    }
    if let Some(l) = current.as_ref().and_then(|s| s.live_from) {
        if state.store.generation(&keys::generation(org)).await? <= l {
            bump(state, org, Vec::new()).await?;
        }
    }
    Ok(current)
}

/// Marks the meter aggregating as the backfill counts its first event, provided its
/// filter and aggregation are still those the deltas were computed with (once it
/// aggregates they are frozen). `false`: they changed, the batch must not be applied.
async fn aggregating_as(state: &AppState, meter: &Meter) -> Result<bool, AppError> {
    let mut same = true;
    let updated = state
        .store
        .update::<Meter, AppError>(&meter.id.key(), async |current| {
            same = current.filter == meter.filter && current.aggregation == meter.aggregation;
            if !same || current.aggregating {
                return Ok(None);
            }
            let mut m = current.clone();
            m.aggregating = true;
            Ok(Some(m))
        })
        .await?;
    if updated.is_some() {
        bump(state, meter.organization_id, Vec::new()).await?;
    }
    Ok(same)
}

/// Counts a live meter's events of generations ≤ its `l` not counted yet, a batch per
/// transaction, until done or its state changes under it. Answers the events counted.
pub async fn backfill_meter(state: &AppState, meter: &Meter) -> Result<u64, AppError> {
    let org = meter.organization_id;
    let key = keys::meter_state(org, meter.id);
    let mut counted_events = 0u64;
    loop {
        let Some(current) = activate(state, meter).await? else {
            return Ok(counted_events);
        };
        // The meter as it is now (after the state: a new filter resets the state first,
        // so a batch computed with an older filter fails its compare-and-swap).
        let Some(meter) = meter_of(state, org, meter.id).await? else {
            return Ok(counted_events);
        };
        let meter = &meter;
        let Some(l) = current.live_from else {
            return Ok(counted_events);
        };
        if current.done {
            return Ok(counted_events);
        }
        let (mut start, end) = keys::generations_below(org, l.saturating_add(1));
        if !current.cursor.is_empty() {
            start = current.cursor.clone();
            start.push(0);
        }
        let index = state
            .store
            .usage_index(&start, &end, Direction::Asc, BATCH)
            .await?;
        let mut next = current.clone();
        let mut deltas = Vec::new();
        let mut counts = false;
        if let Some(last) = index.last() {
            next.cursor = last.clone();
            let event_keys: Vec<Vec<u8>> = index
                .iter()
                .filter_map(|k| keys::IndexOf::event_id(k).map(|id| keys::event(org, id)))
                .collect();
            for bytes in state
                .store
                .usage_events(&event_keys)
                .await?
                .into_iter()
                .flatten()
            {
                let event = UsageEvent::decode(&bytes)?;
                counts |= meter_deltas(&event, meter, &mut deltas);
            }
        } else {
            next.done = true;
        }
        if counts && !meter.aggregating && !aggregating_as(state, meter).await? {
            return Ok(counted_events);
        }
        let now = state.now().timestamp_micros();
        let wrote = state
            .store
            .usage_cas(&key, Some(&current.encode()), next.encode(), deltas, now)
            .await?;
        if !wrote {
            // Another runner advanced it, or the meter was reset: read it again.
            continue;
        }
        counted_events += index.len() as u64;
        if next.done {
            return Ok(counted_events);
        }
    }
}

/// One pass of the job: every meter whose state is not done, made live and backfilled.
/// Answers the events counted.
pub async fn run_pass(state: &AppState) -> Result<u64, AppError> {
    let (start, end) = keys::meter_states();
    let mut total = 0;
    for (key, bytes) in state.store.usage_meta_range(&start, &end).await? {
        if MeterState::decode(&bytes)?.done {
            continue;
        }
        let Some((org, id)) = keys::parse_meter_state(&key) else {
            continue;
        };
        let Some(meter) = meter_of(state, org, id).await? else {
            // Pending, its record never written (a create that failed): nothing to count.
            continue;
        };
        total += backfill_meter(state, &meter).await?;
    }
    Ok(total)
}

async fn meter_of(
    state: &AppState,
    org: OrganizationId,
    id: MeterId,
) -> Result<Option<Meter>, AppError> {
    meters::meter_in_organization(state, org, id).await
}

/// How often the job looks for meters to count besides being woken (a meter created on
/// another node, a pass cut short by an error or a restart).
const EVERY: Duration = Duration::from_secs(1);

/// Starts the backfill job: a pass when a meter is created or changes filter on this
/// node, and every [`EVERY`]; on a shared database one node at a time (job lock
/// `meter_backfill`; the passes are exactly once anyway).
pub fn start(state: web::Data<AppState>) {
    actix_web::rt::spawn(async move {
        loop {
            let _ = tokio::time::timeout(EVERY, state.meters.backfill.notified()).await;
            if !state.jobs.lead(&state.store, "meter_backfill").await {
                continue;
            }
            match run_pass(&state).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(events = n, "meters counted their earlier events"),
                Err(e) => tracing::warn!(error = %e, "meter backfill failed"),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_read_back_and_count_after_their_generation() {
        let states = [
            MeterState::PENDING,
            MeterState {
                live_from: Some(7),
                cursor: vec![b'G', 0, 1, 2],
                done: false,
            },
            MeterState {
                live_from: Some(u64::MAX),
                cursor: Vec::new(),
                done: true,
            },
        ];
        for s in &states {
            assert_eq!(&MeterState::decode(&s.encode()).unwrap(), s);
        }
        assert!(!MeterState::PENDING.counts_at(u64::MAX));
        assert!(!states[1].counts_at(7));
        assert!(states[1].counts_at(8));
        assert!(MeterState::decode(&[2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(MeterState::decode(&[1, 0]).is_err());
    }
}
