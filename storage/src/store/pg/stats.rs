//! PostgreSQL's size report (see [`crate::Store::storage_stats`]): each table of the
//! schema by heap, index and TOAST bytes (`pg_relation_size`, `pg_indexes_size`, the
//! TOAST relation's `pg_total_relation_size`), and the rows of the keyed tables by
//! collection or index name (the key's text before its first 0 byte).

use crate::store::stats::{GroupStats, StorageStats, TableSize};
use crate::StorageError;

use super::{sql_error, PgEngine};

/// The tables whose keys start with a name, and their value column.
const KEYED: &[(&str, &str)] = &[
    ("records", "v"),
    ("idx", "id"),
    ("uniques", "id"),
    ("counters", "n"),
];

impl PgEngine {
    pub(crate) async fn storage_stats(&self) -> Result<StorageStats, StorageError> {
        let mut conn = self.conn().await?;
        let tx = self.unlimited(&mut conn).await?;
        let rows = tx
            .query(
                "SELECT c.relname::text, GREATEST(c.reltuples, 0)::bigint,
                        pg_relation_size(c.oid), pg_indexes_size(c.oid),
                        COALESCE(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0),
                        pg_total_relation_size(c.oid)
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
                 ORDER BY pg_total_relation_size(c.oid) DESC, c.relname",
                &[&self.schema],
            )
            .await
            .map_err(sql_error)?;
        let size = |v: i64| u64::try_from(v).unwrap_or(0);
        let tables: Vec<TableSize> = rows
            .iter()
            .map(|r| TableSize {
                table: r.get(0),
                rows: size(r.get(1)),
                heap_bytes: size(r.get(2)),
                index_bytes: size(r.get(3)),
                toast_bytes: size(r.get(4)),
                total_bytes: size(r.get(5)),
            })
            .collect();
        let mut areas = Vec::new();
        for (table, value) in KEYED {
            let value_len = if *value == "n" {
                "8".to_string()
            } else {
                format!("octet_length({value})")
            };
            // The name: the key's bytes before its first 0 byte (`-` when it has none).
            let rows = tx
                .query(
                    &format!(
                        "SELECT CASE WHEN position('\\x00'::bytea IN k) > 1
                                     THEN encode(substring(k FROM 1 FOR position('\\x00'::bytea IN k) - 1), 'escape')
                                     ELSE '-' END AS name,
                                count(*)::bigint, COALESCE(sum(octet_length(k)), 0)::bigint,
                                COALESCE(sum({value_len}), 0)::bigint
                         FROM {}.{table} GROUP BY 1
                         ORDER BY 3 + 4 DESC, 1",
                        self.schema
                    ),
                    &[],
                )
                .await
                .map_err(sql_error)?;
            let mut groups: Vec<GroupStats> = rows
                .iter()
                .map(|r| GroupStats {
                    name: r.get(0),
                    keys: size(r.get(1)),
                    key_bytes: size(r.get(2)),
                    value_bytes: size(r.get(3)),
                })
                .collect();
            groups.sort_by(|a, b| {
                (b.key_bytes + b.value_bytes)
                    .cmp(&(a.key_bytes + a.value_bytes))
                    .then_with(|| a.name.cmp(&b.name))
            });
            if !groups.is_empty() {
                areas.push(crate::store::stats::AreaStats {
                    area: (*table).to_string(),
                    groups,
                });
            }
        }
        tx.commit().await.map_err(sql_error)?;
        Ok(StorageStats {
            engine: "postgres",
            on_disk: tables.iter().map(|t| t.total_bytes).sum(),
            areas,
            tables,
        })
    }
}
