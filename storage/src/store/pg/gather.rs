//! The gatherer of [`PgEngine::count_validation`] (issue 33): counted validations that
//! arrive together go to the database together.
//!
//! Each counted validation must be durable before its answer, and on PostgreSQL a commit's
//! cost is mostly its WAL flush. So the calls are queued, and one task turns what is
//! queued into statements of up to [`BATCH`] keys each, at most [`IN_FLIGHT`] at a time:
//! one multi-row `UPDATE` over `unnest` arrays, one commit, one flush for all of them.
//! Every row keeps the single statement's rules: it counts only if its record is still at
//! the revision given and its usage stays within the limit, re-checked on the newest row
//! version when it waited for another writer's lock (READ COMMITTED), so the limit is
//! exact across any number of nodes and statements.
//!
//! A key is in at most one statement at a time (a second call for it waits for the next
//! one): one `UPDATE` applies only one of two joined entries of a row, and two statements
//! of one node never wait for each other's rows. Each statement first locks its rows in
//! key order (`SELECT … ORDER BY k FOR UPDATE`), so statements of several nodes that share
//! rows wait for each other in one order and never deadlock (a deadlock costs the
//! database's `deadlock_timeout`, 1 s, before it aborts one). Should the database abort
//! one anyway, nothing of it applied and it runs again.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::tally::classify_miss;
use super::write::{retry_delay, COMMIT_ATTEMPTS};
use super::{sql_error, PgEngine};
use crate::record::Tally;
use crate::store::tally::Counted;
use crate::StorageError;

/// Keys per statement.
const BATCH: usize = 512;
/// Statements at once, per node.
const IN_FLIGHT: usize = 4;

/// A tally row's usage and limit.
type Row = (i64, Option<i64>);

pub(super) struct Request {
    /// The record's key (collection and id).
    key: Vec<u8>,
    rev: u64,
    n: i64,
    at_us: i64,
    collection: &'static str,
    reply: oneshot::Sender<Result<Counted, StorageError>>,
}

/// The queue into the gatherer's task (started on first use, again if its runtime ended).
#[derive(Default)]
pub(super) struct Gatherer {
    queue: std::sync::Mutex<Option<mpsc::UnboundedSender<Request>>>,
}

impl PgEngine {
    /// Counts one validation (see [`crate::Store::count_validation`]) through the gatherer.
    pub(crate) async fn gather(
        self: &Arc<Self>,
        collection: &'static str,
        key: Vec<u8>,
        rev: u64,
        n: i64,
        at_us: i64,
    ) -> Result<Counted, StorageError> {
        let (reply, answer) = oneshot::channel();
        let request = Request {
            key,
            rev,
            n,
            at_us,
            collection,
            reply,
        };
        {
            let mut queue = self
                .gatherer
                .queue
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let unsent = match queue.as_ref() {
                Some(tx) => tx
                    .send(request)
                    .err()
                    .map(|mpsc::error::SendError(back)| back),
                None => Some(request),
            };
            if let Some(request) = unsent {
                let (tx, rx) = mpsc::unbounded_channel();
                tokio::spawn(run(Arc::downgrade(self), rx));
                tx.send(request).map_err(|_| gone())?;
                *queue = Some(tx);
            }
        }
        answer.await.map_err(|_| gone())?
    }
}

fn gone() -> StorageError {
    StorageError::Unavailable("the validation counter stopped".into())
}

/// The gatherer's task: forms statements from the queue while fewer than [`IN_FLIGHT`]
/// run, never two with one key. Ends when the engine is gone and nothing is left.
async fn run(engine: std::sync::Weak<PgEngine>, mut rx: mpsc::UnboundedReceiver<Request>) {
    let mut waiting: VecDeque<Request> = VecDeque::new();
    let mut in_flight: HashSet<Vec<u8>> = HashSet::new();
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<Vec<Vec<u8>>>();
    let mut running = 0usize;
    let mut open = true;
    loop {
        while running < IN_FLIGHT {
            let mut batch: Vec<Request> = Vec::new();
            // Plain validations (n = 0) of a key at the same revision as one in the batch
            // ride on its row: (its index, the request).
            let mut riders: Vec<(usize, Request)> = Vec::new();
            let mut keys: HashMap<Vec<u8>, usize> = HashMap::new();
            let mut later = VecDeque::new();
            let mut take = |r: Request, later: &mut VecDeque<Request>| {
                if in_flight.contains(&r.key) {
                    later.push_back(r);
                    return;
                }
                match keys.get(&r.key) {
                    Some(&i) if r.n == 0 && batch[i].n == 0 && batch[i].rev == r.rev => {
                        riders.push((i, r));
                    }
                    Some(_) => later.push_back(r),
                    None if batch.len() < BATCH => {
                        keys.insert(r.key.clone(), batch.len());
                        batch.push(r);
                    }
                    None => later.push_back(r),
                }
            };
            while let Some(r) = waiting.pop_front() {
                take(r, &mut later);
            }
            while open {
                match rx.try_recv() {
                    Ok(r) => take(r, &mut later),
                    Err(mpsc::error::TryRecvError::Empty) => break,
                    Err(mpsc::error::TryRecvError::Disconnected) => open = false,
                }
            }
            waiting = later;
            if batch.is_empty() {
                break;
            }
            let Some(engine) = engine.upgrade() else {
                let riders = riders.into_iter().map(|(_, r)| r);
                for r in batch.into_iter().chain(riders).chain(waiting.drain(..)) {
                    let _ = r.reply.send(Err(gone()));
                }
                return;
            };
            in_flight.extend(keys.keys().cloned());
            running += 1;
            let done = done_tx.clone();
            tokio::spawn(async move {
                let keys: Vec<Vec<u8>> = batch.iter().map(|r| r.key.clone()).collect();
                engine.count_batch(batch, riders).await;
                let _ = done.send(keys);
            });
        }
        if !open && running == 0 && waiting.is_empty() {
            return;
        }
        tokio::select! {
            r = rx.recv(), if open => match r {
                Some(r) => waiting.push_back(r),
                None => open = false,
            },
            Some(keys) = done_rx.recv() => {
                for k in keys {
                    in_flight.remove(&k);
                }
                running -= 1;
            }
        }
    }
}

impl PgEngine {
    /// Runs one statement for `batch` (distinct keys, with the plain validations riding on
    /// their rows) and answers each request.
    async fn count_batch(&self, batch: Vec<Request>, riders: Vec<(usize, Request)>) {
        let mut counts = vec![1i64; batch.len()];
        let mut lasts: Vec<i64> = batch.iter().map(|r| r.at_us).collect();
        for (i, r) in &riders {
            counts[*i] += 1;
            lasts[*i] = lasts[*i].max(r.at_us);
        }
        let mut attempt = 1;
        let outcome = loop {
            match self.count_rows(&batch, &counts, &lasts).await {
                Err(StorageError::Unavailable(why)) if attempt < COMMIT_ATTEMPTS => {
                    tracing::debug!(attempt, %why, "counting statement aborted; retrying");
                    tokio::time::sleep(retry_delay(attempt)).await;
                    attempt += 1;
                }
                other => break other,
            }
        };
        match outcome {
            Ok(counted) => {
                for (i, r) in riders {
                    let answer = counted.get(&batch[i].key).copied();
                    let _ = r.reply.send(Ok(answer.unwrap_or(Counted::Stale)));
                }
                for r in batch {
                    let answer = counted.get(&r.key).copied();
                    let _ = r.reply.send(Ok(answer.unwrap_or(Counted::Stale)));
                }
            }
            Err(e) => {
                for r in batch.into_iter().chain(riders.into_iter().map(|(_, r)| r)) {
                    let _ = r.reply.send(Err(e.clone()));
                }
            }
        }
    }

    /// The statement, then a read that classifies the rows it did not count.
    async fn count_rows(
        &self,
        batch: &[Request],
        counts: &[i64],
        lasts: &[i64],
    ) -> Result<HashMap<Vec<u8>, Counted>, StorageError> {
        let s = &self.schema;
        let keys: Vec<&[u8]> = batch.iter().map(|r| r.key.as_slice()).collect();
        let revs: Vec<Vec<u8>> = batch.iter().map(|r| r.rev.to_be_bytes().to_vec()).collect();
        let ns: Vec<i64> = batch.iter().map(|r| r.n).collect();
        let ats = lasts.to_vec();
        let counts = counts.to_vec();
        let fresh = format!(
            "EXISTS (SELECT 1 FROM {s}.records r
                     WHERE r.k = d.k AND substring(r.v from 1 for 8) = d.rev)"
        );
        let client = self.client().await?;
        let count = client
            .prepare_cached(&format!(
                "WITH locked AS MATERIALIZED (
                     SELECT t.k FROM {s}.tallies t WHERE t.k = ANY($1::bytea[])
                     ORDER BY t.k FOR UPDATE)
                 UPDATE {s}.tallies t
                 SET usage = t.usage + d.n, validations = t.validations + d.c,
                     last_at = GREATEST(t.last_at, d.at)
                 FROM unnest($1::bytea[], $2::bytea[], $3::int8[], $4::int8[], $5::int8[])
                      AS d(k, rev, n, at, c)
                 WHERE t.k = d.k AND t.k IN (SELECT k FROM locked) AND {fresh}
                   AND (d.n = 0 OR t.limit_usage IS NULL
                        OR t.usage::numeric + d.n <= t.limit_usage)
                   AND t.usage::numeric + d.n
                       BETWEEN -9223372036854775808 AND 9223372036854775807
                 RETURNING t.k, t.usage, t.validations, t.last_at"
            ))
            .await
            .map_err(sql_error)?;
        let rows = client
            .query(&count, &[&keys, &revs, &ns, &ats, &counts])
            .await
            .map_err(sql_error)?;
        let mut counted: HashMap<Vec<u8>, Counted> = rows
            .iter()
            .map(|row| {
                (
                    row.get::<_, Vec<u8>>(0),
                    Counted::Done(Tally {
                        usage: row.get(1),
                        validations: row.get(2),
                        last_at_us: row.get(3),
                    }),
                )
            })
            .collect();
        let missed: Vec<&Request> = batch
            .iter()
            .filter(|r| !counted.contains_key(&r.key))
            .collect();
        if missed.is_empty() {
            return Ok(counted);
        }
        // Why not counted, as the rows are now: another revision (or no record), or the
        // limit or range (a changed row that no longer refuses is read again by the
        // caller, as stale).
        let keys: Vec<&[u8]> = missed.iter().map(|r| r.key.as_slice()).collect();
        let revs: Vec<Vec<u8>> = missed
            .iter()
            .map(|r| r.rev.to_be_bytes().to_vec())
            .collect();
        let classify = client
            .prepare_cached(&format!(
                "SELECT d.k, t.usage, t.limit_usage, {fresh}
                 FROM unnest($1::bytea[], $2::bytea[]) AS d(k, rev)
                 LEFT JOIN {s}.tallies t ON t.k = d.k"
            ))
            .await
            .map_err(sql_error)?;
        let rows = client
            .query(&classify, &[&keys, &revs])
            .await
            .map_err(sql_error)?;
        // Per key: (usage and limit, whether the record is at the revision given).
        let mut seen: HashMap<Vec<u8>, (Option<Row>, bool)> = HashMap::new();
        for row in rows {
            let usage: Option<i64> = row.get(1);
            seen.insert(
                row.get(0),
                (usage.map(|u| (u, row.get(2))), row.get::<_, bool>(3)),
            );
        }
        for r in missed {
            let (row, fresh) = seen.remove(&r.key).unwrap_or((None, false));
            if fresh && row.is_none() {
                // Every tallied record has its row: one written before its type kept
                // tallies, not yet backfilled.
                tracing::warn!(
                    collection = r.collection,
                    "a validation found no tally row for its record: run ensure_tallies"
                );
            }
            let row = if fresh { row } else { None };
            counted.insert(r.key.clone(), classify_miss(row, r.n));
        }
        Ok(counted)
    }
}
