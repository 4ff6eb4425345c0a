//! The gatherer of [`PgEngine::gather`] (issue 33): counted hits that
//! arrive together go to the database together.
//!
//! Each counted hit must be durable before its answer, and on PostgreSQL a commit's
//! cost is mostly fixed (the round trip, the statement, the commit and its WAL flush). So
//! the calls are queued, and one task turns what is queued into statements of up to
//! [`BATCH`] keys each, at most [`IN_FLIGHT`] at a time: one call of the database function
//! [`count_function`] (a single multi-row `UPDATE` over `unnest` arrays), one commit, one
//! flush for all of them. Every row keeps the single statement's rules: it counts only if
//! its record is still at the revision given and its bounded counter stays within the limit,
//! re-checked on the newest row version when it waited for another writer's lock (READ
//! COMMITTED), so the limit is exact across any number of nodes and statements.
//!
//! A key is in at most one statement at a time (a second call for it waits for the next
//! one): one `UPDATE` applies only one of two joined entries of a row, and two statements
//! of one node never wait for each other's rows. Each statement takes its entries in key
//! order and the function locks rows in that order, so statements of several nodes that
//! share rows wait for each other in one order and never deadlock (a deadlock costs the
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
/// A tally row's bounded counter (column `usage`) and limit.
type Row = (i64, Option<i64>);

/// One entry of a [`count_function`] call.
pub(super) struct Entry<'a> {
    /// The record's key (collection and id).
    pub key: &'a [u8],
    /// The revision the record must be at (`None`: any).
    pub rev: Option<u64>,
    /// Added to the bounded counter (only within the limit and the range of `bigint`).
    pub n: i64,
    /// The latest hit's time, in µs since the epoch.
    pub at_us: i64,
    /// Added to the hits (column `validations`).
    pub count: i64,
}

/// What [`count_function`] did with one entry.
pub(super) struct CountRow {
    pub key: Vec<u8>,
    pub outcome: Outcome,
}

pub(super) enum Outcome {
    /// Counted: the row after it.
    Counted(Tally),
    /// Not counted: the row as it is now (`None`: no row), and whether the record is at
    /// the revision given.
    Missed { row: Option<Row>, fresh: bool },
}

/// The database function behind every counting statement, created with the tables:
/// `count_validations(keys, revs, ns, ats, counts)`. One `UPDATE` counts every entry whose
/// record is at the revision given (a `NULL` revision: any) and whose usage stays within
/// the limit and the range of `bigint`: it adds `n` to the usage and `count` to the
/// validations and keeps the latest time. Each row's condition is checked again on the
/// newest row version when the row waited for another writer's lock (READ COMMITTED), so
/// the limit is exact across any number of nodes and statements. The revision is the tally
/// row's own `rev`, which `tally::mirror_trigger` keeps equal to the record's, so the
/// check costs no read of the record and is checked again with the rest (a row without
/// one, not yet backfilled, reads the record). The range is checked in `bigint` (a
/// `numeric` sum per row cost more), the limit, where there is one, in `numeric`. It
/// returns the counted rows first; if any entry did not count, a second statement (a new
/// snapshot) then returns every entry's row as it is now and whether its record is at the
/// revision, so the caller can tell why without another round trip.
///
/// The `UPDATE` runs with a fixed plan: the entries in the order given (key order), each
/// row found through the primary key and locked in that order, so two statements that
/// share rows wait for each other in one order and never deadlock (a deadlock would cost
/// the database's `deadlock_timeout`, 1 s, before it aborts one). The function's settings
/// rule out the other joins and scans, and its plan is made once per session (a plan made
/// for each call's arrays cost more than the work).
pub(super) fn count_function(s: &str) -> String {
    format!(
        "CREATE OR REPLACE FUNCTION {s}.count_validations(
             ks bytea[], revs bytea[], ns int8[], ats int8[], cs int8[])
         RETURNS TABLE (o_k bytea, o_counted bool, o_fresh bool, o_usage int8, o_limit int8,
                        o_validations int8, o_last_at int8)
         LANGUAGE plpgsql
         SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
         SET enable_bitmapscan = off SET enable_material = off
         SET plan_cache_mode = force_generic_plan
         AS $fn$
         DECLARE
             got bigint;
         BEGIN
             RETURN QUERY
             WITH u AS (
                 UPDATE {s}.tallies t
                 SET usage = t.usage + d.n, validations = t.validations + d.c,
                     last_at = GREATEST(t.last_at, d.at)
                 FROM unnest(ks, revs, ns, ats, cs) AS d(k, rev, n, at, c)
                 WHERE t.k = d.k
                   AND (d.rev IS NULL OR t.rev = d.rev
                        OR (t.rev IS NULL AND EXISTS (SELECT 1 FROM {s}.records r
                            WHERE r.k = d.k AND substring(r.v from 1 for 8) = d.rev)))
                   AND (d.n = 0 OR t.limit_usage IS NULL
                        OR t.usage::numeric + d.n <= t.limit_usage)
                   AND CASE WHEN d.n >= 0 THEN t.usage <= 9223372036854775807 - d.n
                            ELSE t.usage >= '-9223372036854775808'::int8 - d.n END
                 RETURNING t.k, t.usage, t.validations, t.last_at)
             SELECT u.k, true, true, u.usage, NULL::int8, u.validations, u.last_at FROM u;
             GET DIAGNOSTICS got = ROW_COUNT;
             IF got < coalesce(array_length(ks, 1), 0) THEN
                 RETURN QUERY
                 SELECT d.k, false,
                        d.rev IS NULL OR EXISTS (SELECT 1 FROM {s}.records r
                            WHERE r.k = d.k AND substring(r.v from 1 for 8) = d.rev),
                        t.usage, t.limit_usage, NULL::int8, NULL::int8
                 FROM unnest(ks, revs) AS d(k, rev)
                 LEFT JOIN {s}.tallies t ON t.k = d.k;
             END IF;
         END
         $fn$;"
    )
}

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
    /// Counts one hit (see [`crate::Store::count_hit`]) through the gatherer.
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
            // Plain hits (n = 0) on a record at the same revision as one in the batch
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
    /// Runs one statement for `batch` (distinct keys, with the plain hits riding on
    /// their rows) and answers each request.
    async fn count_batch(&self, batch: Vec<Request>, riders: Vec<(usize, Request)>) {
        let mut counts = vec![1i64; batch.len()];
        let mut lasts: Vec<i64> = batch.iter().map(|r| r.at_us).collect();
        for (i, r) in &riders {
            counts[*i] += 1;
            lasts[*i] = lasts[*i].max(r.at_us);
        }
        match self.count_rows(&batch, &counts, &lasts).await {
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

    /// The statement: the batch in key order through [`count_function`].
    async fn count_rows(
        &self,
        batch: &[Request],
        counts: &[i64],
        lasts: &[i64],
    ) -> Result<HashMap<Vec<u8>, Counted>, StorageError> {
        let mut order: Vec<usize> = (0..batch.len()).collect();
        order.sort_unstable_by(|&a, &b| batch[a].key.cmp(&batch[b].key));
        let entries: Vec<Entry> = order
            .iter()
            .map(|&i| Entry {
                key: &batch[i].key,
                rev: Some(batch[i].rev),
                n: batch[i].n,
                at_us: lasts[i],
                count: counts[i],
            })
            .collect();
        let rows = self.call_count(&entries).await?;
        let by_key: HashMap<&[u8], &Request> =
            batch.iter().map(|r| (r.key.as_slice(), r)).collect();
        let mut counted = HashMap::with_capacity(rows.len());
        for row in rows {
            let Some(r) = by_key.get(row.key.as_slice()) else {
                continue;
            };
            let answer = match row.outcome {
                Outcome::Counted(tally) => Counted::Done(tally),
                Outcome::Missed { row: seen, fresh } => {
                    if fresh && seen.is_none() {
                        // Every tallied record has its row: one written before its type
                        // kept tallies, not yet backfilled.
                        tracing::warn!(
                            collection = r.collection,
                            "a validation found no tally row for its record: run ensure_tallies"
                        );
                    }
                    // Why not counted, as the row is now: another revision (or no
                    // record), or the limit or range (a changed row that no longer
                    // refuses is read again by the caller, as stale).
                    classify_miss(if fresh { seen } else { None }, r.n)
                }
            };
            counted.insert(row.key, answer);
        }
        Ok(counted)
    }

    /// Runs [`count_function`] over `entries` (in the order given: key order, so that
    /// statements sharing rows lock them in one order) and returns a row per entry. A call
    /// the database aborts (nothing of it applied) runs again, up to [`COMMIT_ATTEMPTS`]
    /// times.
    pub(super) async fn call_count(
        &self,
        entries: &[Entry<'_>],
    ) -> Result<Vec<CountRow>, StorageError> {
        let mut attempt = 1;
        loop {
            match self.call_count_once(entries).await {
                Err(StorageError::Unavailable(why)) if attempt < COMMIT_ATTEMPTS => {
                    tracing::debug!(attempt, %why, "counting statement aborted; running again");
                    tokio::time::sleep(retry_delay(attempt)).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn call_count_once(&self, entries: &[Entry<'_>]) -> Result<Vec<CountRow>, StorageError> {
        let keys: Vec<&[u8]> = entries.iter().map(|e| e.key).collect();
        let revs: Vec<Option<Vec<u8>>> = entries
            .iter()
            .map(|e| e.rev.map(|rev| rev.to_be_bytes().to_vec()))
            .collect();
        let ns: Vec<i64> = entries.iter().map(|e| e.n).collect();
        let ats: Vec<i64> = entries.iter().map(|e| e.at_us).collect();
        let cs: Vec<i64> = entries.iter().map(|e| e.count).collect();
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT o_k, o_counted, o_fresh, o_usage, o_limit, o_validations, o_last_at
                 FROM {s}.count_validations($1::bytea[], $2::bytea[], $3::int8[], $4::int8[],
                                            $5::int8[])",
                s = self.schema
            ))
            .await
            .map_err(sql_error)?;
        let rows = client
            .query(&statement, &[&keys, &revs, &ns, &ats, &cs])
            .await
            .map_err(sql_error)?;
        // The counted rows come first; the second part, if any, lists every entry.
        let mut seen: HashSet<&[u8]> = HashSet::with_capacity(rows.len());
        Ok(rows
            .iter()
            .filter(|row| seen.insert(row.get::<_, &[u8]>(0)))
            .map(|row| {
                let usage: Option<i64> = row.get(3);
                let outcome = if row.get::<_, bool>(1) {
                    Outcome::Counted(Tally {
                        bounded: usage.unwrap_or_default(),
                        hits: row.get::<_, Option<i64>>(5).unwrap_or_default(),
                        last_hit_us: row.get(6),
                    })
                } else {
                    Outcome::Missed {
                        row: usage.map(|u| (u, row.get(4))),
                        fresh: row.get(2),
                    }
                };
                CountRow {
                    key: row.get(0),
                    outcome,
                }
            })
            .collect())
    }
}
