//! Tallies on PostgreSQL: the counters of a [`Record::TALLIED`] record (usage, validations,
//! the latest validation) in a row of their own, `{schema}.tallies (k, usage, limit_usage,
//! validations, last_at)`, keyed by the record's key as in `records`.
//!
//! Design (issue 33):
//! - The row is the counters' truth on this engine; the payload's counters are read only
//!   when the row is created (the record's first put, or its first later put for a record
//!   written before its type kept tallies). The usage limit stays the payload's
//!   truth and every put mirrors it into the row, in the put's transaction
//!   ([`TallyPlan`]); a put never writes the counters, whose copy in a payload may be stale.
//!   A delete removes the row.
//! - Reads merge the row into the record (`LEFT JOIN`, [`Record::set_tally`]); without a
//!   row the payload's counters stand. The record's revision does not move with its
//!   counters, so counting never conflicts with the record's writers.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

use super::{sql_error, PgEngine};
use crate::codec;
use crate::record::{Record, Stored, Tally};
use crate::store::batch::TallyPlan;
use crate::StorageError;

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
                     validations = EXCLUDED.validations, last_at = EXCLUDED.last_at"
                } else {
                    "limit_usage = EXCLUDED.limit_usage"
                };
                tx.execute(
                    &format!(
                        "INSERT INTO {s}.tallies (k, usage, limit_usage, validations, last_at)
                         VALUES ($1, $2, $3, $4, $5)
                         ON CONFLICT (k) DO UPDATE SET {on_conflict}"
                    ),
                    &[
                        &key,
                        &tally.usage,
                        limit,
                        &tally.validations,
                        &tally.last_at_us,
                    ],
                )
                .await
                .map_err(sql_error)?;
            }
            TallyPlan::SetUsage(usage) => {
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
            usage: r.get(0),
            validations: r.get(1),
            last_at_us: r.get(2),
        }))
    }
}

/// A record read with [`PgEngine::record_source`]'s columns from column `at` on: the
/// payload, with the tally row's counters merged in when it has one.
pub(super) fn stored_from<R: Record>(row: &Row, at: usize) -> Result<Stored<R>, StorageError> {
    let mut stored: Stored<R> = codec::open_stored(row.get::<_, &[u8]>(at))?;
    if R::TALLIED {
        if let Some(usage) = row.get::<_, Option<i64>>(at + 1) {
            stored.value.set_tally(&Tally {
                usage,
                validations: row.get::<_, Option<i64>>(at + 2).unwrap_or(0),
                last_at_us: row.get(at + 3),
            });
        }
    }
    Ok(stored)
}
