//! The usage store on the embedded engine (`store::usage`): seven trees (their layout is in
//! `store::usage`) written by one writer at a time.
//!
//! Calls of [`crate::Store::ingest`] and [`crate::Store::close_window`] queue their work;
//! the first caller that finds no writer at work becomes it (on its own thread, inside
//! its future's first poll, with no await in between), and takes the queued work, up to
//! [`GATHER_CAP`] events a turn, into one sled transaction over the seven trees, and
//! answers each call; while calls remain queued it takes more turns, a few, then hands
//! the writing on to a task, until the queue is empty (one writer at a time throughout). The others wait for their answer, then
//! every call waits for the group-commit flush that covers the transaction. Being the only
//! writer, it decides on what the trees hold (read before the transaction, never changed
//! under it) plus what its own turn staged: an event key already stored or staged is a
//! duplicate, aggregates and windows are read once and written once per turn, with every
//! delta of the turn merged in. A close is decided in the same order as the events around
//! it, so each event lands in exactly one window.
//!
//! The window member sets of closed windows stay (a later sweep may purge the entries of
//! windows older than a row's current one: nothing reads them).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Mutex;

use sled::transaction::{ConflictableTransactionError, TransactionError};
use sled::Transactional;
use tokio::sync::oneshot;

use super::Embedded;
use crate::store::reads::Direction;
use crate::store::usage::{
    decode_agg, decode_generation, decode_window_row, encode_agg, encode_generation,
    encode_window_row, escape_key, member_key, unescape_key, window_member_key, Agg, Answer, Delta,
    WindowRow, WindowState, Work, GATHER_CAP,
};
use crate::StorageError;

/// The names of the usage trees, as snapshots name them (`store::snapshot::TREES`).
const USAGE_TREES: [&str; 7] = [
    "usage_events",
    "usage_index",
    "usage_aggs",
    "usage_members",
    "usage_windows",
    "usage_window_members",
    "usage_meta",
];

/// The usage trees and the queue of their writer.
pub(super) struct Usage {
    events: sled::Tree,
    index: sled::Tree,
    aggs: sled::Tree,
    members: sled::Tree,
    windows: sled::Tree,
    window_members: sled::Tree,
    meta: sled::Tree,
    queue: Mutex<Queue>,
    /// Turns written so far (each one transaction).
    turns: std::sync::atomic::AtomicU64,
}

type Reply = oneshot::Sender<Result<(Answer, u64), StorageError>>;

#[derive(Default)]
struct Queue {
    jobs: VecDeque<(Work, Reply)>,
    /// Whether a writer is at work (it takes what is queued).
    busy: bool,
}

/// Resets the queue if its writer panics: the calls it took and those queued are
/// answered with an error (their senders dropped), and the next call writes.
struct LeadGuard<'a>(&'a Mutex<Queue>);

impl Drop for LeadGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
            q.jobs.clear();
            q.busy = false;
        }
    }
}

impl Usage {
    pub(super) fn open(db: &sled::Db) -> Result<Self, StorageError> {
        let [events, index, aggs, members, windows, window_members, meta] =
            USAGE_TREES.map(|name| db.open_tree(name));
        Ok(Usage {
            events: events?,
            index: index?,
            aggs: aggs?,
            members: members?,
            windows: windows?,
            window_members: window_members?,
            meta: meta?,
            queue: Mutex::new(Queue::default()),
            turns: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// The tree a snapshot names `name`.
    pub(super) fn tree(&self, name: &str) -> Option<&sled::Tree> {
        Some(match name {
            "usage_events" => &self.events,
            "usage_index" => &self.index,
            "usage_aggs" => &self.aggs,
            "usage_members" => &self.members,
            "usage_windows" => &self.windows,
            "usage_window_members" => &self.window_members,
            "usage_meta" => &self.meta,
            _ => return None,
        })
    }
}

/// What one turn of the writer changes, over what the trees hold.
#[derive(Default)]
struct Staged {
    events: BTreeMap<Vec<u8>, Vec<u8>>,
    index: BTreeSet<Vec<u8>>,
    aggs: BTreeMap<Vec<u8>, Agg>,
    members: BTreeSet<Vec<u8>>,
    /// Rows read this turn, and whether they changed.
    windows: BTreeMap<Vec<u8>, (WindowRow, bool)>,
    window_members: BTreeSet<Vec<u8>>,
    /// Meta entries written this turn.
    meta: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl Staged {
    fn is_empty(&self) -> bool {
        self.events.is_empty()
            && self.meta.is_empty()
            && self.aggs.is_empty()
            && self.windows.values().all(|(_, dirty)| !dirty)
    }

    /// The meta entry `key` as this turn sees it.
    fn meta(&self, u: &Usage, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        if let Some(v) = self.meta.get(key) {
            return Ok(Some(v.clone()));
        }
        Ok(u.meta.get(key)?.map(|v| v.to_vec()))
    }

    fn agg_mut(&mut self, u: &Usage, key: &[u8]) -> Result<&mut Agg, StorageError> {
        if !self.aggs.contains_key(key) {
            let agg = match u.aggs.get(key)? {
                Some(v) => decode_agg(&v)?,
                None => Agg::EMPTY,
            };
            self.aggs.insert(key.to_vec(), agg);
        }
        Ok(self.aggs.entry(key.to_vec()).or_insert(Agg::EMPTY))
    }

    /// The window row `key` as this turn sees it; `None`: never written.
    fn window(
        &mut self,
        u: &Usage,
        key: &[u8],
    ) -> Result<Option<&mut (WindowRow, bool)>, StorageError> {
        if !self.windows.contains_key(key) {
            match u.windows.get(key)? {
                Some(v) => {
                    self.windows
                        .insert(key.to_vec(), (decode_window_row(&v)?, false));
                }
                None => return Ok(None),
            }
        }
        Ok(self.windows.get_mut(key))
    }

    /// Whether `key` is a member stored or staged (in `tree`/`staged`); stages it if not.
    fn add_member(
        tree: &sled::Tree,
        staged: &mut BTreeSet<Vec<u8>>,
        key: Vec<u8>,
    ) -> Result<bool, StorageError> {
        if staged.contains(&key) || tree.contains_key(&key)? {
            return Ok(false);
        }
        staged.insert(key);
        Ok(true)
    }

    fn apply(&mut self, u: &Usage, delta: &Delta, now_us: i64) -> Result<(), StorageError> {
        match delta {
            Delta::Add { key, agg } => self.agg_mut(u, key)?.merge(agg),
            Delta::Distinct { key, member } => {
                if Self::add_member(&u.members, &mut self.members, member_key(key, member))? {
                    let agg = self.agg_mut(u, key)?;
                    agg.n = agg.n.saturating_add(1);
                }
            }
            Delta::Window {
                key,
                agg,
                credit,
                rollover_credit,
                member,
            } => {
                if self.window(u, key)?.is_none() {
                    let row = WindowRow {
                        state: WindowState::empty(0, now_us),
                        last_close: None,
                    };
                    self.windows.insert(key.clone(), (row, true));
                }
                let (row, dirty) = self
                    .windows
                    .get_mut(key)
                    .ok_or_else(|| StorageError::Io("usage store: window vanished".into()))?;
                *dirty = true;
                let s = &mut row.state;
                s.consumed.merge(agg);
                s.credited = s.credited.saturating_add(*credit);
                s.rollover_credited = s.rollover_credited.saturating_add(*rollover_credit);
                s.modified_us = now_us;
                if let Some(member) = member {
                    let mk = window_member_key(key, s.window, member);
                    if Self::add_member(&u.window_members, &mut self.window_members, mk)? {
                        s.distinct = s.distinct.saturating_add(1);
                    }
                }
            }
        }
        Ok(())
    }

    fn close(
        &mut self,
        u: &Usage,
        key: &[u8],
        token: &[u8],
        now_us: i64,
    ) -> Result<WindowState, StorageError> {
        let closed = match self.window(u, key)? {
            Some((row, _)) => {
                if let Some((last, closed)) = &row.last_close {
                    if last.as_slice() == token {
                        return Ok(*closed);
                    }
                }
                row.state
            }
            None => WindowState::empty(0, now_us),
        };
        let row = WindowRow {
            state: WindowState::empty(closed.window.saturating_add(1), now_us),
            last_close: Some((token.to_vec(), closed)),
        };
        self.windows.insert(key.to_vec(), (row, true));
        Ok(closed)
    }
}

/// Turns a writer takes before it hands the writing on (see [`Embedded::usage_write`]):
/// a task switch between turns costs throughput, a long run costs the latency of the
/// call that became the writer.
const TURNS_IN_PLACE: usize = 8;

type TxResult<T> = Result<T, ConflictableTransactionError<StorageError>>;

impl Embedded {
    /// Queues `work` for the usage writer (becoming it if none is at work) and answers
    /// with its result and the sequence number to wait for before it is durable.
    pub(crate) async fn usage_submit(&self, work: Work) -> Result<(Answer, u64), StorageError> {
        let (tx, rx) = oneshot::channel();
        let queue = &self.inner.usage.queue;
        let lead = {
            let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
            q.jobs.push_back((work, tx));
            !std::mem::replace(&mut q.busy, true)
        };
        if lead {
            self.usage_write();
        }
        rx.await
            .map_err(|_| StorageError::Io("usage store: the writer failed".into()))?
    }

    /// The writer: takes turns while calls are queued, up to [`TURNS_IN_PLACE`], then
    /// hands the writing on to a task of its own (so that the caller that became the
    /// writer is not kept writing for others under a steady load; outside a runtime it
    /// goes on itself).
    fn usage_write(&self) {
        let queue = &self.inner.usage.queue;
        let _guard = LeadGuard(queue);
        let mut turns_here = 0;
        loop {
            turns_here += 1;
            let mut turn = Vec::new();
            {
                let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
                let mut weight = 0;
                while let Some((work, _)) = q.jobs.front() {
                    let w = work.weight();
                    if !turn.is_empty() && weight + w > GATHER_CAP {
                        break;
                    }
                    weight += w;
                    if let Some(job) = q.jobs.pop_front() {
                        turn.push(job);
                    }
                }
                if turn.is_empty() {
                    q.busy = false;
                    return;
                }
            }
            let (works, replies): (Vec<Work>, Vec<Reply>) = turn.into_iter().unzip();
            self.inner
                .usage
                .turns
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            match self.usage_turn(&works) {
                Ok((answers, seq)) => {
                    for (answer, reply) in answers.into_iter().zip(replies) {
                        let _ = reply.send(Ok((answer, seq)));
                    }
                }
                Err(e) => {
                    for reply in replies {
                        let _ = reply.send(Err(e.clone()));
                    }
                }
            }
            let more = {
                let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
                q.busy = !q.jobs.is_empty();
                q.busy
            };
            if !more {
                return;
            }
            if turns_here < TURNS_IN_PLACE {
                continue;
            }
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let writer = self.clone();
                runtime.spawn(async move { writer.usage_write() });
                return;
            }
        }
    }

    /// One turn: decides every work in order, writes what changed in one transaction.
    fn usage_turn(&self, works: &[Work]) -> Result<(Vec<Answer>, u64), StorageError> {
        let i = &self.inner;
        i.flusher.check_writable()?;
        let _shared = i.gate.read().unwrap_or_else(|p| p.into_inner());
        let u = &i.usage;
        let mut st = Staged::default();
        let mut answers = Vec::with_capacity(works.len());
        for work in works {
            answers.push(match work {
                Work::Ingest {
                    guard: Some(guard), ..
                } if decode_generation(st.meta(u, &guard.key)?.as_deref())? != guard.generation => {
                    Answer::Stale(decode_generation(st.meta(u, &guard.key)?.as_deref())?)
                }
                Work::Ingest { events, now_us, .. } => {
                    let mut inserted = Vec::with_capacity(events.len());
                    for ev in events {
                        let new =
                            !st.events.contains_key(&ev.key) && !u.events.contains_key(&ev.key)?;
                        if new {
                            st.events.insert(ev.key.clone(), ev.value.clone());
                            st.index.extend(ev.index.iter().cloned());
                            for delta in &ev.deltas {
                                st.apply(u, delta, *now_us)?;
                            }
                        }
                        inserted.push(new);
                    }
                    Answer::Ingest(inserted)
                }
                Work::Close { key, token, now_us } => {
                    Answer::Close(st.close(u, key, token, *now_us)?)
                }
                Work::Bump { key, puts } => {
                    let next = decode_generation(st.meta(u, key)?.as_deref())?.saturating_add(1);
                    st.meta.insert(key.clone(), encode_generation(next));
                    st.meta.extend(puts.iter().cloned());
                    Answer::Bumped(next)
                }
                Work::Cas {
                    key,
                    expected,
                    new,
                    deltas,
                    now_us,
                } => {
                    let holds = st.meta(u, key)? == *expected;
                    if holds {
                        st.meta.insert(key.clone(), new.clone());
                        for delta in deltas {
                            st.apply(u, delta, *now_us)?;
                        }
                    }
                    Answer::Cas(holds)
                }
            });
        }
        if st.is_empty() {
            return Ok((answers, i.flusher.last_committed()));
        }
        self.usage_commit(&st).inspect_err(|e| {
            if let StorageError::Io(cause) = e {
                i.flusher.fail(cause);
            }
        })?;
        Ok((answers, i.flusher.committed()))
    }

    fn usage_commit(&self, st: &Staged) -> Result<(), StorageError> {
        let u = &self.inner.usage;
        let trees = (
            &u.events,
            &u.index,
            &u.aggs,
            &u.members,
            &u.windows,
            &u.window_members,
            &u.meta,
        );
        let result = trees.transaction(|(events, index, aggs, members, windows, wm, meta)| {
            for (k, v) in &st.events {
                events.insert(k.as_slice(), v.as_slice())?;
            }
            for k in &st.index {
                index.insert(k.as_slice(), &[] as &[u8])?;
            }
            for (k, agg) in &st.aggs {
                aggs.insert(k.as_slice(), &encode_agg(agg)[..])?;
            }
            for k in &st.members {
                members.insert(k.as_slice(), &[] as &[u8])?;
            }
            for (k, (row, dirty)) in &st.windows {
                if *dirty {
                    windows.insert(k.as_slice(), encode_window_row(row))?;
                }
            }
            for k in &st.window_members {
                wm.insert(k.as_slice(), &[] as &[u8])?;
            }
            for (k, v) in &st.meta {
                meta.insert(k.as_slice(), v.as_slice())?;
            }
            TxResult::Ok(())
        });
        match result {
            Ok(()) => Ok(()),
            Err(TransactionError::Abort(e)) => Err(e),
            Err(TransactionError::Storage(e)) => Err(e.into()),
        }
    }

    /// The writer's turns so far, and the calls queued now (for tests).
    #[cfg(test)]
    pub(crate) fn usage_queue(&self) -> (u64, usize, bool) {
        let u = &self.inner.usage;
        let q = u.queue.lock().unwrap_or_else(|p| p.into_inner());
        (
            u.turns.load(std::sync::atomic::Ordering::Relaxed),
            q.jobs.len(),
            q.busy,
        )
    }

    /// Holds the gate every commit shares, as a snapshot does (for tests).
    #[cfg(test)]
    pub(crate) fn hold_gate(&self) -> std::sync::RwLockWriteGuard<'_, ()> {
        self.inner.gate.write().unwrap_or_else(|p| p.into_inner())
    }

    /// See [`crate::Store::usage_events`].
    pub(crate) fn usage_events(
        &self,
        keys: &[Vec<u8>],
    ) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        keys.iter()
            .map(|k| Ok(self.inner.usage.events.get(k)?.map(|v| v.to_vec())))
            .collect()
    }

    /// See [`crate::Store::usage_meta`].
    pub(crate) fn usage_meta(
        &self,
        keys: &[Vec<u8>],
    ) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        keys.iter()
            .map(|k| Ok(self.inner.usage.meta.get(k)?.map(|v| v.to_vec())))
            .collect()
    }

    /// See [`crate::Store::usage_meta_range`].
    pub(crate) fn usage_meta_range(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<crate::store::usage::MetaEntries, StorageError> {
        if start >= end {
            return Ok(Vec::new());
        }
        self.inner
            .usage
            .meta
            .range(start..end)
            .map(|kv| {
                let (k, v) = kv?;
                Ok((k.to_vec(), v.to_vec()))
            })
            .collect()
    }

    /// See [`crate::Store::usage_index`].
    pub(crate) fn usage_index(
        &self,
        start: &[u8],
        end: &[u8],
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        if start >= end || limit == 0 {
            return Ok(Vec::new());
        }
        let range = self.inner.usage.index.range(start..end);
        let keys: Box<dyn Iterator<Item = sled::Result<(sled::IVec, sled::IVec)>>> = match direction
        {
            Direction::Asc => Box::new(range),
            Direction::Desc => Box::new(range.rev()),
        };
        keys.take(limit).map(|kv| Ok(kv?.0.to_vec())).collect()
    }

    /// See [`crate::Store::aggregates`].
    pub(crate) fn aggregates(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<(Vec<u8>, Agg)>, StorageError> {
        if start >= end {
            return Ok(Vec::new());
        }
        self.inner
            .usage
            .aggs
            .range(start..end)
            .map(|kv| {
                let (k, v) = kv?;
                Ok((k.to_vec(), decode_agg(&v)?))
            })
            .collect()
    }

    /// See [`crate::Store::members`]: the entries between the escaped bounds.
    pub(crate) fn members(&self, start: &[u8], end: &[u8]) -> Result<Vec<Vec<u8>>, StorageError> {
        if start >= end {
            return Ok(Vec::new());
        }
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        escape_key(&mut lo, start);
        escape_key(&mut hi, end);
        self.inner
            .usage
            .members
            .range(lo..hi)
            .map(|kv| {
                let (k, _) = kv?;
                let (mut agg_key, member) = unescape_key(&k)?;
                agg_key.extend_from_slice(member);
                Ok(agg_key)
            })
            .collect()
    }

    /// See [`crate::Store::windows`].
    pub(crate) fn windows(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<(Vec<u8>, WindowState)>, StorageError> {
        if start >= end {
            return Ok(Vec::new());
        }
        self.inner
            .usage
            .windows
            .range(start..end)
            .map(|kv| {
                let (k, v) = kv?;
                Ok((k.to_vec(), decode_window_row(&v)?.state))
            })
            .collect()
    }
}
