//! The usage store on PostgreSQL (`store::usage`): six tables, written by gathered
//! transactions that several nodes may run at once.
//!
//! Tables (keys as the embedded engine's, compared bytewise):
//! `usage_events (k, v)`, `usage_index (k)`, `usage_aggs (k, n, total, lo, hi)` (float8
//! keeps ±∞), `usage_members (k, m)` (an aggregate row's key and a member: they sort with
//! their aggregate key), `usage_windows (k, win, n, total, lo, hi, distinct_n, credited,
//! rollover, created_us, modified_us, close_token, closed)` (`closed`: the state the last
//! close answered, `usage::encode_state`) and `usage_window_members (k, win, m)`.
//!
//! **Gathering.** Calls of one node queue; one task forms transactions of up to
//! [`GATHER_CAP`] events, at most [`IN_FLIGHT`] at a time. A close is a transaction of its
//! own.
//!
//! **Exactly once across nodes.** An ingest transaction (READ COMMITTED) first inserts
//! its events, `ON CONFLICT (k) DO NOTHING RETURNING k`: an event another transaction
//! inserted and has not committed makes it wait, then skip the event if that one
//! committed (or insert it if it rolled back). Only the events it inserted bring their
//! deltas, pre-aggregated per row here (an upsert touches a row once per statement), then
//! written by one statement per table, in this order: index keys, members (`DO NOTHING
//! RETURNING`: only a new member counts), aggregates (upsert), windows (upsert, which
//! locks each row and returns its current window), window members, window distinct counts.
//! Every statement takes its rows in key order (`ORDER BY`), so transactions of several
//! nodes lock rows in one global order (table, then key) and never deadlock; a close
//! locks one window row. Should the database abort a transaction anyway (deadlock,
//! serialization) or the connection fail, the whole transaction runs again, decided anew:
//! its keys are the events' own, and what committed before is skipped. (A connection lost
//! after the commit reached the database reports those events as duplicates the second
//! time: they are stored once either way.)

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Weak};

use deadpool_postgres::GenericClient;
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::error::SqlState;

use super::write::{retry_delay, COMMIT_ATTEMPTS};
use super::{sql_error, PgEngine};
use crate::store::reads::Direction;
use crate::store::usage::{
    decode_agg, decode_generation, decode_state, decode_window_row, encode_state, unescape_key,
    Agg, Answer, Delta, Guard, IngestEvent, WindowState, Work, GATHER_CAP,
};
use crate::StorageError;

/// Transactions at once, per node.
const IN_FLIGHT: usize = 4;

/// The usage tables, for `create_tables`.
pub(super) fn tables(s: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {s}.usage_events (k bytea PRIMARY KEY, v bytea NOT NULL);
         CREATE TABLE IF NOT EXISTS {s}.usage_index (k bytea PRIMARY KEY);
         CREATE TABLE IF NOT EXISTS {s}.usage_aggs (k bytea PRIMARY KEY, n int8 NOT NULL,
             total float8 NOT NULL, lo float8 NOT NULL, hi float8 NOT NULL);
         CREATE TABLE IF NOT EXISTS {s}.usage_members (k bytea, m bytea, PRIMARY KEY (k, m));
         CREATE TABLE IF NOT EXISTS {s}.usage_windows (k bytea PRIMARY KEY, win int8 NOT NULL,
             n int8 NOT NULL, total float8 NOT NULL, lo float8 NOT NULL, hi float8 NOT NULL,
             distinct_n int8 NOT NULL, credited int8 NOT NULL, rollover int8 NOT NULL,
             created_us int8 NOT NULL, modified_us int8 NOT NULL, close_token bytea,
             closed bytea);
         CREATE TABLE IF NOT EXISTS {s}.usage_window_members (k bytea, win int8, m bytea,
             PRIMARY KEY (k, win, m));
         CREATE TABLE IF NOT EXISTS {s}.usage_meta (k bytea PRIMARY KEY, v bytea NOT NULL);"
    )
}

type Job = (Work, oneshot::Sender<Result<Answer, StorageError>>);

/// The queue into the usage task (started on first use, again if its runtime ended).
#[derive(Default)]
pub(super) struct UsageQueue {
    queue: std::sync::Mutex<Option<mpsc::UnboundedSender<Job>>>,
    /// Transactions run again after an abort or a lost connection (a figure for tests
    /// and logs: across nodes it should stay 0, the global lock order sees to it).
    retries: std::sync::atomic::AtomicU64,
    /// Transactions that committed.
    committed: std::sync::atomic::AtomicU64,
    /// Tests: the next ingest transaction fails after inserting its events, as a lost
    /// connection would, and is dropped uncommitted.
    #[cfg(test)]
    pub(super) fail_next: std::sync::atomic::AtomicBool,
}

fn gone() -> StorageError {
    StorageError::Unavailable("the usage writer stopped".into())
}

/// Errors worth running the whole transaction again for: the database aborted it, or the
/// connection failed.
fn tx_error(e: tokio_postgres::Error) -> StorageError {
    let lost = e.is_closed()
        || e.code().is_some_and(|c| {
            c.code().starts_with("08")
                || *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
        });
    if lost {
        StorageError::Unavailable(super::describe(&e))
    } else {
        sql_error(e)
    }
}

/// The task: turns the queue into transactions, at most [`IN_FLIGHT`] at once.
async fn run(engine: Weak<PgEngine>, mut rx: mpsc::UnboundedReceiver<Job>) {
    let mut waiting: VecDeque<Job> = VecDeque::new();
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<()>();
    let mut running = 0usize;
    let mut open = true;
    loop {
        while open {
            match rx.try_recv() {
                Ok(job) => waiting.push_back(job),
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => open = false,
            }
        }
        while running < IN_FLIGHT && !waiting.is_empty() {
            let Some(engine) = engine.upgrade() else {
                for (_, reply) in waiting.drain(..) {
                    let _ = reply.send(Err(gone()));
                }
                return;
            };
            let mut turn = Vec::new();
            if let Some((Work::Close { .. } | Work::Bump { .. } | Work::Cas { .. }, _)) =
                waiting.front()
            {
                turn.extend(waiting.pop_front());
            } else {
                // Ingests up to the cap (the other works stay queued in their place).
                let mut weight = 0;
                let mut rest = VecDeque::with_capacity(waiting.len());
                for job in waiting.drain(..) {
                    let w = job.0.weight();
                    let fits = matches!(job.0, Work::Ingest { .. })
                        && (turn.is_empty() || weight + w <= GATHER_CAP);
                    if fits {
                        weight += w;
                        turn.push(job);
                    } else {
                        rest.push_back(job);
                    }
                }
                waiting = rest;
            }
            running += 1;
            let done = done_tx.clone();
            tokio::spawn(async move {
                engine.usage_turn(turn).await;
                let _ = done.send(());
            });
        }
        if !open && running == 0 && waiting.is_empty() {
            return;
        }
        tokio::select! {
            job = rx.recv(), if open => match job {
                Some(job) => waiting.push_back(job),
                None => open = false,
            },
            Some(()) = done_rx.recv() => running -= 1,
        }
    }
}

/// One window's deltas in a transaction.
struct WindowDelta<'a> {
    agg: Agg,
    credit: i64,
    rollover: i64,
    created_us: i64,
    modified_us: i64,
    members: BTreeSet<&'a [u8]>,
}

/// Everything the inserted events of a transaction add, per row.
#[derive(Default)]
struct Deltas<'a> {
    index: BTreeSet<&'a [u8]>,
    aggs: BTreeMap<Vec<u8>, Agg>,
    members: BTreeSet<(&'a [u8], &'a [u8])>,
    windows: BTreeMap<&'a [u8], WindowDelta<'a>>,
}

impl<'a> Deltas<'a> {
    fn add(&mut self, event: &'a IngestEvent, now_us: i64) {
        self.index.extend(event.index.iter().map(Vec::as_slice));
        self.add_deltas(&event.deltas, now_us);
    }

    fn add_deltas(&mut self, deltas: &'a [Delta], now_us: i64) {
        for delta in deltas {
            match delta {
                Delta::Add { key, agg } => self
                    .aggs
                    .entry(key.clone())
                    .or_insert(Agg::EMPTY)
                    .merge(agg),
                Delta::Distinct { key, member } => {
                    self.members.insert((key, member));
                }
                Delta::Window {
                    key,
                    agg,
                    credit,
                    rollover_credit,
                    member,
                } => {
                    let w = self.windows.entry(key).or_insert_with(|| WindowDelta {
                        agg: Agg::EMPTY,
                        credit: 0,
                        rollover: 0,
                        created_us: now_us,
                        modified_us: now_us,
                        members: BTreeSet::new(),
                    });
                    w.agg.merge(agg);
                    w.credit = w.credit.saturating_add(*credit);
                    w.rollover = w.rollover.saturating_add(*rollover_credit);
                    w.modified_us = now_us;
                    w.members.extend(member.as_deref());
                }
            }
        }
    }
}

/// Counts the rows a `RETURNING k` answered, per key.
fn count_keys(rows: &[tokio_postgres::Row]) -> BTreeMap<Vec<u8>, i64> {
    let mut counts = BTreeMap::new();
    for row in rows {
        *counts.entry(row.get::<_, Vec<u8>>(0)).or_insert(0) += 1;
    }
    counts
}

fn window_state(row: &tokio_postgres::Row, at: usize) -> WindowState {
    WindowState {
        window: u64::try_from(row.get::<_, i64>(at)).unwrap_or(0),
        consumed: Agg {
            n: row.get(at + 1),
            sum: row.get(at + 2),
            min: row.get(at + 3),
            max: row.get(at + 4),
        },
        distinct: row.get(at + 5),
        credited: row.get(at + 6),
        rollover_credited: row.get(at + 7),
        created_us: row.get(at + 8),
        modified_us: row.get(at + 9),
    }
}

/// The columns [`window_state`] reads, in its order.
const WINDOW_COLUMNS: &str =
    "win, n, total, lo, hi, distinct_n, credited, rollover, created_us, modified_us";

impl PgEngine {
    /// Queues `work` for the usage task; answers once it committed.
    pub(crate) async fn usage_submit(self: &Arc<Self>, work: Work) -> Result<Answer, StorageError> {
        let (reply, answer) = oneshot::channel();
        {
            let mut queue = self.usage.queue.lock().unwrap_or_else(|e| e.into_inner());
            let unsent = match queue.as_ref() {
                Some(tx) => tx
                    .send((work, reply))
                    .err()
                    .map(|mpsc::error::SendError(j)| j),
                None => Some((work, reply)),
            };
            if let Some(job) = unsent {
                let (tx, rx) = mpsc::unbounded_channel();
                tokio::spawn(run(Arc::downgrade(self), rx));
                tx.send(job).map_err(|_| gone())?;
                *queue = Some(tx);
            }
        }
        answer.await.map_err(|_| gone())?
    }

    /// How many usage transactions of this engine ran again (see [`UsageQueue`]), and
    /// how many committed.
    #[cfg(test)]
    pub(crate) fn usage_counts(&self) -> (u64, u64) {
        let load = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
        (load(&self.usage.retries), load(&self.usage.committed))
    }

    /// Runs one transaction for `turn` (ingests, or one close), again while the database
    /// aborts it, and answers each call from the attempt that committed.
    async fn usage_turn(&self, turn: Vec<Job>) {
        let (works, replies): (Vec<Work>, Vec<_>) = turn.into_iter().unzip();
        let mut attempt = 1;
        let result = loop {
            let outcome = match works.as_slice() {
                [Work::Close { key, token, now_us }] => self
                    .close_once(key, token, *now_us)
                    .await
                    .map(|c| vec![Answer::Close(c)]),
                [Work::Bump { key, puts }] => self
                    .bump_once(key, puts)
                    .await
                    .map(|g| vec![Answer::Bumped(g)]),
                [Work::Cas {
                    key,
                    expected,
                    new,
                    deltas,
                    now_us,
                }] => self
                    .cas_once(key, expected.as_deref(), new, deltas, *now_us)
                    .await
                    .map(|w| vec![Answer::Cas(w)]),
                _ => self.ingest_once(&works).await,
            };
            match outcome {
                Err(StorageError::Unavailable(why)) if attempt < COMMIT_ATTEMPTS => {
                    tracing::warn!(attempt, %why, "usage transaction aborted; running again");
                    self.usage
                        .retries
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tokio::time::sleep(retry_delay(attempt)).await;
                    attempt += 1;
                }
                other => break other,
            }
        };
        match result {
            Ok(answers) => {
                self.usage
                    .committed
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                for (answer, reply) in answers.into_iter().zip(replies) {
                    let _ = reply.send(Ok(answer));
                }
            }
            Err(e) => {
                for reply in replies {
                    let _ = reply.send(Err(e.clone()));
                }
            }
        }
    }

    /// One attempt of an ingest transaction over the calls `works` (all ingests).
    async fn ingest_once(&self, works: &[Work]) -> Result<Vec<Answer>, StorageError> {
        let calls: Vec<(&[IngestEvent], i64, Option<&Guard>)> = works
            .iter()
            .filter_map(|w| match w {
                Work::Ingest {
                    events,
                    now_us,
                    guard,
                } => Some((events.as_slice(), *now_us, guard.as_ref())),
                _ => None,
            })
            .collect();
        let mut conn = self.conn().await?;
        let tx = conn.get_mut()?.transaction().await.map_err(tx_error)?;
        let s = &self.schema;
        // The guards: each generation's lock shared (in the order of their numbers, so
        // that transactions never wait on each other's in a cycle), held to the commit, so
        // a bump waits for the ingests that read the generation before it, and they for it.
        let guard_keys: BTreeSet<&[u8]> = calls
            .iter()
            .filter_map(|c| c.2.map(|g| g.key.as_slice()))
            .collect();
        let mut current: HashMap<Vec<u8>, u64> = HashMap::new();
        if !guard_keys.is_empty() {
            let locks: BTreeSet<i64> = guard_keys.iter().map(|k| lock_id(k)).collect();
            let locks: Vec<i64> = locks.into_iter().collect();
            tx.execute(
                "SELECT pg_advisory_xact_lock_shared(l) FROM unnest($1::int8[]) AS d(l) ORDER BY l",
                &[&locks],
            )
            .await
            .map_err(tx_error)?;
            let keys: Vec<&[u8]> = guard_keys.iter().copied().collect();
            let rows = tx
                .query(
                    &format!("SELECT k, v FROM {s}.usage_meta WHERE k = ANY($1::bytea[])"),
                    &[&keys],
                )
                .await
                .map_err(tx_error)?;
            for row in &rows {
                let v: &[u8] = row.get(1);
                current.insert(row.get(0), decode_generation(Some(v))?);
            }
        }
        let stale = |guard: Option<&Guard>| -> Option<u64> {
            let g = guard?;
            let now = current.get(&g.key).copied().unwrap_or(0);
            (now != g.generation).then_some(now)
        };
        // The first of each key in the turn is its candidate: (call, position).
        let mut first: BTreeMap<&[u8], (usize, usize)> = BTreeMap::new();
        for (c, (events, _, guard)) in calls.iter().enumerate() {
            if stale(*guard).is_some() {
                continue;
            }
            for (i, e) in events.iter().enumerate() {
                first.entry(e.key.as_slice()).or_insert((c, i));
            }
        }
        let keys: Vec<&[u8]> = first.keys().copied().collect();
        let values: Vec<&[u8]> = first
            .values()
            .map(|&(c, i)| calls[c].0[i].value.as_slice())
            .collect();
        let rows = tx
            .query(
                &format!(
                    "INSERT INTO {s}.usage_events (k, v)
                     SELECT k, v FROM unnest($1::bytea[], $2::bytea[]) AS d(k, v) ORDER BY k
                     ON CONFLICT (k) DO NOTHING RETURNING k"
                ),
                &[&keys, &values],
            )
            .await
            .map_err(tx_error)?;
        let inserted: HashSet<Vec<u8>> = rows.iter().map(|r| r.get(0)).collect();
        #[cfg(test)]
        if self
            .usage
            .fail_next
            .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            return Err(StorageError::Unavailable("test: connection lost".into()));
        }
        let mut deltas = Deltas::default();
        let mut answers = Vec::with_capacity(calls.len());
        for (c, (events, now_us, guard)) in calls.iter().enumerate() {
            if let Some(now) = stale(*guard) {
                answers.push(Answer::Stale(now));
                continue;
            }
            let mut got = Vec::with_capacity(events.len());
            for (i, e) in events.iter().enumerate() {
                let new = first.get(e.key.as_slice()) == Some(&(c, i)) && inserted.contains(&e.key);
                if new {
                    deltas.add(e, *now_us);
                }
                got.push(new);
            }
            answers.push(Answer::Ingest(got));
        }
        self.apply_deltas(&tx, deltas).await?;
        tx.commit().await.map_err(tx_error)?;
        conn.release();
        Ok(answers)
    }

    /// Writes what the inserted events add, one statement per table, rows in key order.
    async fn apply_deltas<C: GenericClient + Sync>(
        &self,
        tx: &C,
        mut d: Deltas<'_>,
    ) -> Result<(), StorageError> {
        let s = &self.schema;
        if !d.index.is_empty() {
            let keys: Vec<&[u8]> = d.index.iter().copied().collect();
            tx.execute(
                &format!(
                    "INSERT INTO {s}.usage_index (k) SELECT k FROM unnest($1::bytea[]) AS d(k)
                     ORDER BY k ON CONFLICT (k) DO NOTHING"
                ),
                &[&keys],
            )
            .await
            .map_err(tx_error)?;
        }
        if !d.members.is_empty() {
            let (ks, ms): (Vec<&[u8]>, Vec<&[u8]>) = d.members.iter().copied().unzip();
            let rows = tx
                .query(
                    &format!(
                        "INSERT INTO {s}.usage_members (k, m)
                         SELECT k, m FROM unnest($1::bytea[], $2::bytea[]) AS d(k, m)
                         ORDER BY k, m ON CONFLICT (k, m) DO NOTHING RETURNING k"
                    ),
                    &[&ks, &ms],
                )
                .await
                .map_err(tx_error)?;
            for (k, n) in count_keys(&rows) {
                let agg = d.aggs.entry(k).or_insert(Agg::EMPTY);
                agg.n = agg.n.saturating_add(n);
            }
        }
        if !d.aggs.is_empty() {
            let keys: Vec<&[u8]> = d.aggs.keys().map(Vec::as_slice).collect();
            let ns: Vec<i64> = d.aggs.values().map(|a| a.n).collect();
            let sums: Vec<f64> = d.aggs.values().map(|a| a.sum).collect();
            let los: Vec<f64> = d.aggs.values().map(|a| a.min).collect();
            let his: Vec<f64> = d.aggs.values().map(|a| a.max).collect();
            tx.execute(
                &format!(
                    "INSERT INTO {s}.usage_aggs AS a (k, n, total, lo, hi)
                     SELECT * FROM unnest($1::bytea[], $2::int8[], $3::float8[], $4::float8[],
                                          $5::float8[]) AS d(k, n, total, lo, hi)
                     ORDER BY k
                     ON CONFLICT (k) DO UPDATE SET n = a.n + EXCLUDED.n,
                         total = a.total + EXCLUDED.total, lo = LEAST(a.lo, EXCLUDED.lo),
                         hi = GREATEST(a.hi, EXCLUDED.hi)"
                ),
                &[&keys, &ns, &sums, &los, &his],
            )
            .await
            .map_err(tx_error)?;
        }
        if d.windows.is_empty() {
            return Ok(());
        }
        let w = &d.windows;
        let keys: Vec<&[u8]> = w.keys().copied().collect();
        let ns: Vec<i64> = w.values().map(|x| x.agg.n).collect();
        let sums: Vec<f64> = w.values().map(|x| x.agg.sum).collect();
        let los: Vec<f64> = w.values().map(|x| x.agg.min).collect();
        let his: Vec<f64> = w.values().map(|x| x.agg.max).collect();
        let credits: Vec<i64> = w.values().map(|x| x.credit).collect();
        let rollovers: Vec<i64> = w.values().map(|x| x.rollover).collect();
        let created: Vec<i64> = w.values().map(|x| x.created_us).collect();
        let modified: Vec<i64> = w.values().map(|x| x.modified_us).collect();
        // Creates or locks each row (key order) and answers its current window.
        let rows = tx
            .query(
                &format!(
                    "INSERT INTO {s}.usage_windows AS w (k, win, n, total, lo, hi, distinct_n,
                         credited, rollover, created_us, modified_us)
                     SELECT k, 0, n, total, lo, hi, 0, c, r, cr, md
                     FROM unnest($1::bytea[], $2::int8[], $3::float8[], $4::float8[],
                                 $5::float8[], $6::int8[], $7::int8[], $8::int8[], $9::int8[])
                          AS d(k, n, total, lo, hi, c, r, cr, md)
                     ORDER BY k
                     ON CONFLICT (k) DO UPDATE SET n = w.n + EXCLUDED.n,
                         total = w.total + EXCLUDED.total, lo = LEAST(w.lo, EXCLUDED.lo),
                         hi = GREATEST(w.hi, EXCLUDED.hi),
                         credited = w.credited + EXCLUDED.credited,
                         rollover = w.rollover + EXCLUDED.rollover,
                         modified_us = EXCLUDED.modified_us
                     RETURNING k, win"
                ),
                &[
                    &keys, &ns, &sums, &los, &his, &credits, &rollovers, &created, &modified,
                ],
            )
            .await
            .map_err(tx_error)?;
        let current: HashMap<Vec<u8>, i64> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        let (mut mk, mut mw, mut mm) = (Vec::new(), Vec::new(), Vec::new());
        for (key, delta) in w.iter() {
            let Some(&win) = current.get(*key) else {
                return Err(StorageError::Io(
                    "usage store: a window row is missing".into(),
                ));
            };
            for m in &delta.members {
                mk.push(*key);
                mw.push(win);
                mm.push(*m);
            }
        }
        if mk.is_empty() {
            return Ok(());
        }
        let rows = tx
            .query(
                &format!(
                    "INSERT INTO {s}.usage_window_members (k, win, m)
                     SELECT k, win, m FROM unnest($1::bytea[], $2::int8[], $3::bytea[])
                          AS d(k, win, m)
                     ORDER BY k, win, m ON CONFLICT (k, win, m) DO NOTHING RETURNING k"
                ),
                &[&mk, &mw, &mm],
            )
            .await
            .map_err(tx_error)?;
        let counts = count_keys(&rows);
        if counts.is_empty() {
            return Ok(());
        }
        let ks: Vec<&[u8]> = counts.keys().map(Vec::as_slice).collect();
        let cs: Vec<i64> = counts.values().copied().collect();
        tx.execute(
            &format!(
                "UPDATE {s}.usage_windows w SET distinct_n = w.distinct_n + d.c
                 FROM unnest($1::bytea[], $2::int8[]) AS d(k, c) WHERE w.k = d.k"
            ),
            &[&ks, &cs],
        )
        .await
        .map_err(tx_error)?;
        Ok(())
    }

    /// One attempt of a close (see [`crate::Store::close_window`]): the row locked, the
    /// decision, the update, one transaction.
    async fn close_once(
        &self,
        key: &[u8],
        token: &[u8],
        now_us: i64,
    ) -> Result<WindowState, StorageError> {
        let s = &self.schema;
        let mut conn = self.conn().await?;
        let tx = conn.get_mut()?.transaction().await.map_err(tx_error)?;
        tx.execute(
            &format!(
                "INSERT INTO {s}.usage_windows (k, win, n, total, lo, hi, distinct_n, credited,
                     rollover, created_us, modified_us)
                 VALUES ($1, 0, 0, 0, 'Infinity', '-Infinity', 0, 0, 0, $2, $2)
                 ON CONFLICT (k) DO NOTHING"
            ),
            &[&key, &now_us],
        )
        .await
        .map_err(tx_error)?;
        let row = tx
            .query_one(
                &format!(
                    "SELECT {WINDOW_COLUMNS}, close_token, closed FROM {s}.usage_windows
                     WHERE k = $1 FOR UPDATE"
                ),
                &[&key],
            )
            .await
            .map_err(tx_error)?;
        let state = window_state(&row, 0);
        let last: Option<&[u8]> = row.get(10);
        let closed: Option<&[u8]> = row.get(11);
        if let (Some(last), Some(closed)) = (last, closed) {
            if last == token {
                let closed = decode_state(closed)?;
                tx.commit().await.map_err(tx_error)?;
                conn.release();
                return Ok(closed);
            }
        }
        let mut encoded = Vec::new();
        encode_state(&mut encoded, &state);
        let next = i64::try_from(state.window.saturating_add(1)).unwrap_or(i64::MAX);
        tx.execute(
            &format!(
                "UPDATE {s}.usage_windows SET win = $2, n = 0, total = 0, lo = 'Infinity',
                     hi = '-Infinity', distinct_n = 0, credited = 0, rollover = 0,
                     created_us = $3, modified_us = $3, close_token = $4, closed = $5
                 WHERE k = $1"
            ),
            &[&key, &next, &now_us, &token, &encoded],
        )
        .await
        .map_err(tx_error)?;
        tx.commit().await.map_err(tx_error)?;
        conn.release();
        Ok(state)
    }

    /// See [`crate::Store::usage_events`].
    pub(crate) async fn usage_events(
        &self,
        keys: &[Vec<u8>],
    ) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        self.values_at("usage_events", "v", keys).await
    }

    /// See [`crate::Store::usage_index`].
    pub(crate) async fn usage_index(
        &self,
        start: &[u8],
        end: &[u8],
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        if start >= end || limit == 0 {
            return Ok(Vec::new());
        }
        let order = match direction {
            Direction::Asc => "ASC",
            Direction::Desc => "DESC",
        };
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .client()
            .await?
            .query(
                &format!(
                    "SELECT k FROM {}.usage_index WHERE k >= $1 AND k < $2 ORDER BY k {order}
                     LIMIT $3",
                    self.schema
                ),
                &[&start, &end, &limit],
            )
            .await
            .map_err(sql_error)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// See [`crate::Store::aggregates`].
    pub(crate) async fn aggregates(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<(Vec<u8>, Agg)>, StorageError> {
        if start >= end {
            return Ok(Vec::new());
        }
        let rows = self
            .client()
            .await?
            .query(
                &format!(
                    "SELECT k, n, total, lo, hi FROM {}.usage_aggs WHERE k >= $1 AND k < $2
                     ORDER BY k",
                    self.schema
                ),
                &[&start, &end],
            )
            .await
            .map_err(sql_error)?;
        Ok(rows
            .iter()
            .map(|r| {
                let agg = Agg {
                    n: r.get(1),
                    sum: r.get(2),
                    min: r.get(3),
                    max: r.get(4),
                };
                (r.get(0), agg)
            })
            .collect())
    }

    /// See [`crate::Store::members`].
    pub(crate) async fn members(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        if start >= end {
            return Ok(Vec::new());
        }
        let rows = self
            .client()
            .await?
            .query(
                &format!(
                    "SELECT k, m FROM {}.usage_members WHERE k >= $1 AND k < $2 ORDER BY k, m",
                    self.schema
                ),
                &[&start, &end],
            )
            .await
            .map_err(sql_error)?;
        Ok(rows
            .iter()
            .map(|r| {
                let mut k: Vec<u8> = r.get(0);
                k.extend_from_slice(r.get::<_, &[u8]>(1));
                k
            })
            .collect())
    }

    /// See [`crate::Store::windows`].
    pub(crate) async fn windows(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<(Vec<u8>, WindowState)>, StorageError> {
        if start >= end {
            return Ok(Vec::new());
        }
        let rows = self
            .client()
            .await?
            .query(
                &format!(
                    "SELECT {WINDOW_COLUMNS}, k FROM {}.usage_windows WHERE k >= $1 AND k < $2
                     ORDER BY k",
                    self.schema
                ),
                &[&start, &end],
            )
            .await
            .map_err(sql_error)?;
        Ok(rows
            .iter()
            .map(|r| (r.get(10), window_state(r, 0)))
            .collect())
    }
}

/// Imports one chunk of a snapshot's usage tree `tree` (the embedded engine's layout,
/// `store::usage`) into its table, on `tx` (`admin::import`).
pub(super) async fn import<C: GenericClient + Sync>(
    tx: &C,
    s: &str,
    tree: &str,
    chunk: &[(Vec<u8>, Vec<u8>)],
) -> Result<(), StorageError> {
    let keys: Vec<&[u8]> = chunk.iter().map(|(k, _)| k.as_slice()).collect();
    match tree {
        "usage_index" => {
            tx.execute(
                &format!("INSERT INTO {s}.usage_index (k) SELECT * FROM unnest($1::bytea[])"),
                &[&keys],
            )
            .await
            .map_err(sql_error)?;
        }
        "usage_aggs" => {
            let aggs = chunk
                .iter()
                .map(|(_, v)| decode_agg(v))
                .collect::<Result<Vec<Agg>, StorageError>>()?;
            let ns: Vec<i64> = aggs.iter().map(|a| a.n).collect();
            let sums: Vec<f64> = aggs.iter().map(|a| a.sum).collect();
            let los: Vec<f64> = aggs.iter().map(|a| a.min).collect();
            let his: Vec<f64> = aggs.iter().map(|a| a.max).collect();
            tx.execute(
                &format!(
                    "INSERT INTO {s}.usage_aggs (k, n, total, lo, hi)
                     SELECT * FROM unnest($1::bytea[], $2::int8[], $3::float8[], $4::float8[],
                                          $5::float8[])"
                ),
                &[&keys, &ns, &sums, &los, &his],
            )
            .await
            .map_err(sql_error)?;
        }
        "usage_members" => {
            let split = keys
                .iter()
                .map(|k| unescape_key(k).map(|(agg, m)| (agg, m.to_vec())))
                .collect::<Result<Vec<_>, StorageError>>()?;
            let (ks, ms): (Vec<Vec<u8>>, Vec<Vec<u8>>) = split.into_iter().unzip();
            tx.execute(
                &format!(
                    "INSERT INTO {s}.usage_members (k, m)
                     SELECT * FROM unnest($1::bytea[], $2::bytea[])"
                ),
                &[&ks, &ms],
            )
            .await
            .map_err(sql_error)?;
        }
        "usage_window_members" => {
            let (mut ks, mut ws, mut ms) = (Vec::new(), Vec::new(), Vec::new());
            for k in &keys {
                let (key, rest) = unescape_key(k)?;
                let window: [u8; 8] = rest
                    .get(..8)
                    .and_then(|w| w.try_into().ok())
                    .ok_or_else(|| StorageError::Corrupt("usage store: bad member key".into()))?;
                ks.push(key);
                ws.push(i64::from_be_bytes(window));
                ms.push(rest[8..].to_vec());
            }
            tx.execute(
                &format!(
                    "INSERT INTO {s}.usage_window_members (k, win, m)
                     SELECT * FROM unnest($1::bytea[], $2::int8[], $3::bytea[])"
                ),
                &[&ks, &ws, &ms],
            )
            .await
            .map_err(sql_error)?;
        }
        "usage_windows" => {
            let rows = chunk
                .iter()
                .map(|(_, v)| decode_window_row(v))
                .collect::<Result<Vec<_>, StorageError>>()?;
            let col = |f: fn(&WindowState) -> i64| -> Vec<i64> {
                rows.iter().map(|r| f(&r.state)).collect()
            };
            let float = |f: fn(&Agg) -> f64| -> Vec<f64> {
                rows.iter().map(|r| f(&r.state.consumed)).collect()
            };
            let windows = rows
                .iter()
                .map(|r| i64::try_from(r.state.window))
                .collect::<Result<Vec<i64>, _>>()
                .map_err(|_| StorageError::Corrupt("usage store: window number".into()))?;
            let tokens: Vec<Option<&[u8]>> = rows
                .iter()
                .map(|r| r.last_close.as_ref().map(|(t, _)| t.as_slice()))
                .collect();
            let closed: Vec<Option<Vec<u8>>> = rows
                .iter()
                .map(|r| {
                    r.last_close.as_ref().map(|(_, c)| {
                        let mut v = Vec::new();
                        encode_state(&mut v, c);
                        v
                    })
                })
                .collect();
            tx.execute(
                &format!(
                    "INSERT INTO {s}.usage_windows (k, {WINDOW_COLUMNS}, close_token, closed)
                     SELECT * FROM unnest($1::bytea[], $2::int8[], $3::int8[], $4::float8[],
                         $5::float8[], $6::float8[], $7::int8[], $8::int8[], $9::int8[],
                         $10::int8[], $11::int8[], $12::bytea[], $13::bytea[])"
                ),
                &[
                    &keys,
                    &windows,
                    &col(|w| w.consumed.n),
                    &float(|a| a.sum),
                    &float(|a| a.min),
                    &float(|a| a.max),
                    &col(|w| w.distinct),
                    &col(|w| w.credited),
                    &col(|w| w.rollover_credited),
                    &col(|w| w.created_us),
                    &col(|w| w.modified_us),
                    &tokens,
                    &closed,
                ],
            )
            .await
            .map_err(sql_error)?;
        }
        other => {
            return Err(StorageError::Corrupt(format!(
                "snapshot tree {other} is unknown to this engine"
            )))
        }
    }
    Ok(())
}

#[path = "usage_meta.rs"]
mod meta;
use meta::lock_id;
