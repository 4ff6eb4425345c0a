//! Tallies on PostgreSQL: the counters of a [`Record::TALLIED`] record ([`Tally`]: bounded,
//! hits, the latest hit) in a row of their own, `{schema}.tallies (k, usage, limit_usage,
//! validations, last_at, rev)`, keyed by the record's key as in `records`. The columns keep
//! the names of their first user (the license key's usage and validations): `usage` is the
//! bounded counter, `limit_usage` its limit, `validations` the hits, `last_at` the latest.
//!
//! Design (issue 33):
//! - The row also keeps a copy of its record's revision (`rev`), set by a trigger on
//!   `records` in every writing statement ([`mirror_trigger`]), so counting compares it on
//!   the row it updates instead of reading the record.
//! - The row is the counters' truth on this engine; the payload's counters are read only
//!   when the row is created (a put of a record that has none, or
//!   [`PgEngine::ensure_tallies`] for records written before: a copy, an older binary). The limit stays the payload's
//!   truth and every put mirrors it into the row, in the put's transaction
//!   ([`TallyPlan`]); a put never writes the counters, whose copy in a payload may be stale.
//!   A delete removes the row.
//! - Reads merge the row into the record (`LEFT JOIN`, [`Record::set_tally`]); without a
//!   row the payload's counters stand. The record's revision does not move with its
//!   counters, so counting never conflicts with the record's writers.
//! - [`PgEngine::gather`] is one conditional `UPDATE` per row, joined on the
//!   record's revision, in the statements of the gatherer (`gather.rs`, the database
//!   function `count_validations`): two nodes cannot both take the last unit under a limit
//!   (the row lock serializes them and the condition is evaluated again on the newer row),
//!   and no retry loop is needed. A miss is classified by the same call, from a snapshot
//!   taken after the update.
//! - [`PgEngine::add_hits`] adds counts of hits decided elsewhere
//!   (in memory) as deltas, through the same function (any revision, nothing bounded):
//!   commutative, so writers on several nodes never conflict; rows are locked in key order
//!   as by every counting statement, and a statement the database aborts anyway runs again.

use std::collections::BTreeMap;

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

use super::gather::{Entry, Outcome};
use super::{prefix_end, sql_error, PgEngine};
use crate::codec;
use crate::record::{Record, Stored, Tally};
use crate::store::batch::TallyPlan;
use crate::store::layout::record_key;
use crate::store::tally::Counted;
use crate::StorageError;

/// Records decoded and rows inserted per statement by [`PgEngine::ensure_tallies`].
const BACKFILL_CHUNK: i64 = 1000;

/// The trigger that keeps each tally row's `rev` equal to its record's revision (the first
/// 8 bytes of `records.v`), created with the tables: every insert or update of a record
/// sets it in the writing statement, a delete clears it, whichever build or path wrote the
/// record (a put, an import, an older binary). So a counting statement compares the row it
/// updates, and locks, with the revision it was given, instead of reading the record once
/// per entry; and when it waited for a writer's lock, PostgreSQL checks the condition again
/// on the row that writer left, revision included. A row whose `rev` is `NULL` (created
/// before this column, not yet backfilled by [`PgEngine::ensure_tallies`]) falls back to
/// reading the record. The column is added to a table made by an older build; the catalog
/// is asked first, since `ALTER TABLE` would lock the table against every node's counting
/// at each start even when there is nothing to add.
pub(super) fn mirror_trigger(s: &str) -> String {
    format!(
        "DO $do$ BEGIN
             IF NOT EXISTS (SELECT 1 FROM pg_attribute
                            WHERE attrelid = '{s}.tallies'::regclass AND attname = 'rev'
                              AND NOT attisdropped) THEN
                 ALTER TABLE {s}.tallies ADD COLUMN rev bytea;
             END IF;
         END $do$;
         CREATE OR REPLACE FUNCTION {s}.mirror_rev() RETURNS trigger LANGUAGE plpgsql AS $fn$
         BEGIN
             IF TG_OP = 'DELETE' THEN
                 UPDATE {s}.tallies SET rev = NULL WHERE k = OLD.k AND rev IS NOT NULL;
             ELSE
                 UPDATE {s}.tallies SET rev = substring(NEW.v from 1 for 8)
                 WHERE k = NEW.k AND rev IS DISTINCT FROM substring(NEW.v from 1 for 8);
             END IF;
             RETURN NULL;
         END
         $fn$;
         DO $do$ BEGIN
             IF NOT EXISTS (SELECT 1 FROM pg_trigger
                            WHERE tgrelid = '{s}.records'::regclass AND tgname = 'mirror_rev') THEN
                 CREATE TRIGGER mirror_rev AFTER INSERT OR UPDATE OR DELETE ON {s}.records
                     FOR EACH ROW EXECUTE FUNCTION {s}.mirror_rev();
             END IF;
         END $do$;"
    )
}

impl PgEngine {
    /// The columns and the source of a read of `R`'s records, aliased `r`: the payload
    /// first, then, for a tallied type, the tally row's counters (NULL without a row).
    pub(super) fn record_source<R: Record>(&self) -> (&'static str, String) {
        let s = &self.schema;
        if R::TALLIED {
            (
                "r.v, t.usage, t.validations, t.last_at",
                format!("{s}.records r LEFT JOIN {s}.tallies t ON t.k = r.k"),
            )
        } else {
            ("r.v", format!("{s}.records r"))
        }
    }

    /// Applies the tally part of a plan (`key`: the record's) in the transaction `tx`.
    pub(super) async fn apply_tally<C: GenericClient + Sync>(
        &self,
        tx: &C,
        key: &[u8],
        plan: &TallyPlan,
        collection: &'static str,
    ) -> Result<(), StorageError> {
        let s = &self.schema;
        match plan {
            TallyPlan::Put {
                create,
                tally,
                limit,
            } => {
                let on_conflict = if *create {
                    "usage = EXCLUDED.usage, limit_usage = EXCLUDED.limit_usage,
                     validations = EXCLUDED.validations, last_at = EXCLUDED.last_at,
                     rev = EXCLUDED.rev"
                } else {
                    "limit_usage = EXCLUDED.limit_usage, rev = EXCLUDED.rev"
                };
                // The revision as the record stands in this transaction (see
                // `mirror_trigger`, which sets it again on the record's next write).
                tx.execute(
                    &format!(
                        "INSERT INTO {s}.tallies (k, usage, limit_usage, validations, last_at, rev)
                         VALUES ($1, $2, $3, $4, $5,
                                 (SELECT substring(r.v from 1 for 8) FROM {s}.records r
                                  WHERE r.k = $1))
                         ON CONFLICT (k) DO UPDATE SET {on_conflict}"
                    ),
                    &[&key, &tally.bounded, limit, &tally.hits, &tally.last_hit_us],
                )
                .await
                .map_err(sql_error)?;
            }
            TallyPlan::SetBounded(usage, _) => {
                let set = tx
                    .execute(
                        &format!("UPDATE {s}.tallies SET usage = $2 WHERE k = $1"),
                        &[&key, usage],
                    )
                    .await
                    .map_err(sql_error)?;
                if set != 1 {
                    return Err(StorageError::Conflict {
                        collection,
                        expected: "a tally".into(),
                        found: None,
                    });
                }
            }
            TallyPlan::Set { tally, .. } => {
                let set = tx
                    .execute(
                        &format!(
                            "UPDATE {s}.tallies SET usage = $2, validations = $3, last_at = $4
                             WHERE k = $1"
                        ),
                        &[&key, &tally.bounded, &tally.hits, &tally.last_hit_us],
                    )
                    .await
                    .map_err(sql_error)?;
                if set != 1 {
                    return Err(StorageError::Conflict {
                        collection,
                        expected: "a tally".into(),
                        found: None,
                    });
                }
            }
            TallyPlan::Delete => {
                tx.execute(&format!("DELETE FROM {s}.tallies WHERE k = $1"), &[&key])
                    .await
                    .map_err(sql_error)?;
            }
        }
        Ok(())
    }

    /// The tally row of record `key`, if it has one.
    pub(super) async fn read_tally<C: GenericClient + Sync>(
        &self,
        client: &C,
        key: &[u8],
    ) -> Result<Option<Tally>, StorageError> {
        let row = client
            .query_opt(
                &format!(
                    "SELECT usage, validations, last_at FROM {}.tallies WHERE k = $1",
                    self.schema
                ),
                &[&key],
            )
            .await
            .map_err(sql_error)?;
        Ok(row.map(|r| Tally {
            bounded: r.get(0),
            hits: r.get(1),
            last_hit_us: r.get(2),
        }))
    }

    /// Adds `n` hits at `at_us` (the latest) to each record `id` of `R` of
    /// `counts`, in one statement, all or nothing: `hits + n`, the latest
    /// hit the later of the stored one and `at_us`. Commutative, so writers on
    /// several nodes never conflict over it; a statement the database aborts is run
    /// again. Returns each updated record's counters after it; a record without a tally
    /// row (gone) is left out. Callers send at most a few thousand ids per call.
    pub async fn add_hits<R: Record>(
        &self,
        counts: &[(Vec<u8>, i64, i64)],
    ) -> Result<Vec<(Vec<u8>, Tally)>, StorageError> {
        // One entry per row: an UPDATE joined to two entries of one row applies only one.
        let mut merged: BTreeMap<Vec<u8>, (i64, i64)> = BTreeMap::new();
        for (id, n, at) in counts {
            let e = merged
                .entry(record_key(R::COLLECTION, id))
                .or_insert((0, i64::MIN));
            e.0 = e.0.saturating_add(*n);
            e.1 = e.1.max(*at);
        }
        if merged.is_empty() {
            return Ok(Vec::new());
        }
        // In key order (the map's), like every counting statement: no deadlock.
        let entries: Vec<Entry> = merged
            .iter()
            .map(|(k, &(n, at))| Entry {
                key: k,
                rev: None,
                n: 0,
                at_us: at,
                count: n,
            })
            .collect();
        let rows = self.call_count(&entries).await?;
        let prefix = record_key(R::COLLECTION, &[]).len();
        Ok(rows
            .into_iter()
            .filter_map(|row| match row.outcome {
                Outcome::Counted(tally) => {
                    Some((row.key.get(prefix..).unwrap_or_default().to_vec(), tally))
                }
                Outcome::Missed { .. } => None,
            })
            .collect())
    }

    /// Gives every record of `R` without a tally row one, from its payload's counters
    /// (records copied in, or written by a build that kept no tallies); returns how many
    /// it created. Idempotent and safe beside running nodes: a row created meanwhile is
    /// kept. Nothing to do for a type that is not [`Record::TALLIED`].
    pub async fn ensure_tallies<R: Record>(&self) -> Result<u64, StorageError> {
        if !R::TALLIED {
            return Ok(0);
        }
        let s = &self.schema;
        let prefix = record_key(R::COLLECTION, &[]);
        let end = prefix_end(&prefix);
        let missing = |from: &str| {
            format!(
                "SELECT r.k, r.v FROM {s}.records r
                 WHERE r.k {from} $1 AND r.k < $2
                   AND NOT EXISTS (SELECT 1 FROM {s}.tallies t WHERE t.k = r.k)
                 ORDER BY r.k LIMIT {BACKFILL_CHUNK}"
            )
        };
        let client = self.client().await?;
        let mut created = 0;
        let mut after: Option<Vec<u8>> = None;
        loop {
            let rows = match &after {
                None => client.query(&missing(">="), &[&prefix, &end]).await,
                Some(last) => client.query(&missing(">"), &[last, &end]).await,
            }
            .map_err(sql_error)?;
            let Some(last) = rows.last() else {
                break;
            };
            after = Some(last.get(0));
            let mut keys = Vec::with_capacity(rows.len());
            let (mut usage, mut limits, mut validations, mut last_at) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for row in &rows {
                let stored: Stored<R> = codec::open_stored(row.get::<_, &[u8]>(1))?;
                let (tally, limit) = stored.value.tally();
                keys.push(row.get::<_, Vec<u8>>(0));
                usage.push(tally.bounded);
                limits.push(limit);
                validations.push(tally.hits);
                last_at.push(tally.last_hit_us);
            }
            // The revision from the record as it is when the row goes in (a record
            // rewritten since it was read here sets it again through `mirror_trigger`).
            created += client
                .execute(
                    &format!(
                        "INSERT INTO {s}.tallies (k, usage, limit_usage, validations, last_at, rev)
                         SELECT d.*, (SELECT substring(r.v from 1 for 8) FROM {s}.records r
                                      WHERE r.k = d.k)
                         FROM unnest($1::bytea[], $2::int8[], $3::int8[], $4::int8[], $5::int8[])
                              AS d(k, usage, limit_usage, validations, last_at)
                         ON CONFLICT (k) DO NOTHING"
                    ),
                    &[&keys, &usage, &limits, &validations, &last_at],
                )
                .await
                .map_err(sql_error)?;
            if (rows.len() as i64) < BACKFILL_CHUNK {
                break;
            }
        }
        self.backfill_revs(&prefix, &end).await?;
        Ok(created)
    }

    /// Gives every tally row of the key range `[prefix, end)` whose `rev` is `NULL` (rows
    /// created before the column) its record's revision, [`BACKFILL_CHUNK`] rows per
    /// statement in key order. Safe beside running nodes: a row a writer set meanwhile is
    /// left as it is (the condition is checked again on the row it waited for).
    async fn backfill_revs(&self, prefix: &[u8], end: &[u8]) -> Result<(), StorageError> {
        let s = &self.schema;
        let client = self.client().await?;
        let statement = format!(
            "WITH c AS (SELECT t.k FROM {s}.tallies t
                        WHERE t.k > $1 AND t.k < $2 AND t.rev IS NULL
                        ORDER BY t.k LIMIT {BACKFILL_CHUNK}),
                  u AS (UPDATE {s}.tallies t SET rev = substring(r.v from 1 for 8)
                        FROM c JOIN {s}.records r ON r.k = c.k
                        WHERE t.k = c.k AND t.rev IS NULL)
             SELECT (SELECT k FROM c ORDER BY k DESC LIMIT 1), (SELECT count(*) FROM c)"
        );
        let mut after = prefix.to_vec();
        // Strictly after `after`: the prefix itself is no record's key.
        loop {
            let row = client
                .query_one(&statement, &[&after, &end])
                .await
                .map_err(sql_error)?;
            let (Some(last), n) = (row.get::<_, Option<Vec<u8>>>(0), row.get::<_, i64>(1)) else {
                return Ok(());
            };
            if n < BACKFILL_CHUNK {
                return Ok(());
            }
            after = last;
        }
    }
}

/// A record read with [`PgEngine::record_source`]'s columns from column `at` on: the
/// payload, with the tally row's counters merged in when it has one.
pub(super) fn stored_from<R: Record>(row: &Row, at: usize) -> Result<Stored<R>, StorageError> {
    let mut stored: Stored<R> = codec::open_stored(row.get::<_, &[u8]>(at))?;
    if R::TALLIED {
        if let Some(usage) = row.get::<_, Option<i64>>(at + 1) {
            stored.value.set_tally(&Tally {
                bounded: usage,
                hits: row.get::<_, Option<i64>>(at + 2).unwrap_or(0),
                last_hit_us: row.get(at + 3),
            });
        }
    }
    Ok(stored)
}

/// Why [`PgEngine::gather`] counted nothing, from its snapshot of the tally row
/// (`seen`: bounded counter and limit; `None`: the record is not at the revision, is gone, or has no
/// row). The row may have moved on between the snapshot and the conditional update (another
/// node counted meanwhile): a limit miss the snapshot does not explain reports the least
/// value that explains it.
pub(super) fn classify_miss(seen: Option<(i64, Option<i64>)>, n: i64) -> Counted {
    let Some((usage, limit)) = seen else {
        return Counted::Stale;
    };
    let next = i128::from(usage) + i128::from(n);
    match limit {
        Some(limit) if n != 0 && next > i128::from(limit) => Counted::Limit {
            bounded: usage,
            limit,
        },
        _ if i64::try_from(next).is_err() => Counted::OutOfRange,
        Some(limit) if n != 0 => Counted::Limit {
            bounded: usage.max(limit.saturating_sub(n).saturating_add(1)),
            limit,
        },
        _ => Counted::Stale,
    }
}
