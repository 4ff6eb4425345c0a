//! Reads on PostgreSQL, giving what the embedded engine gives: records, revisions, unique
//! holders, counts, index ranges and keyset chunks, pages merged over tenants, scans, the
//! change feed and meta values. Records of a tallied type come with their tally row's
//! counters merged in (`tally`).

use std::collections::BTreeMap;

use deadpool_postgres::GenericClient;

use super::tally::stored_from;
use super::{prefix_end, sql_error, PgEngine};
use crate::codec;
use crate::record::{Record, Stored, UniqueKey};
use crate::store::feed::{change_from, Change};
use crate::store::layout::{encode_uniques, record_key, tenant_prefix};
use crate::store::reads::{Direction, Page, PageQuery};
use crate::StorageError;

impl PgEngine {
    /// A record and its revision.
    pub async fn get<R: Record>(&self, id: &[u8]) -> Result<Option<Stored<R>>, StorageError> {
        let (columns, source) = self.record_source::<R>();
        let row = self
            .client()
            .await?
            .query_opt(
                &format!("SELECT {columns} FROM {source} WHERE r.k = $1"),
                &[&record_key(R::COLLECTION, id)],
            )
            .await
            .map_err(sql_error)?;
        row.map(|row| stored_from(&row, 0)).transpose()
    }

    /// The stored revision of a record, without decoding it.
    pub async fn revision<R: Record>(&self, id: &[u8]) -> Result<Option<u64>, StorageError> {
        let row = self
            .client()
            .await?
            .query_opt(
                &format!("SELECT v FROM {}.records WHERE k = $1", self.schema),
                &[&record_key(R::COLLECTION, id)],
            )
            .await
            .map_err(sql_error)?;
        match row {
            Some(row) => Ok(Some(codec::open(row.get::<_, &[u8]>(0))?.0)),
            None => Ok(None),
        }
    }

    /// Records of the given ids, in order, skipping ids that no longer exist.
    pub async fn get_many<R: Record>(
        &self,
        ids: &[Vec<u8>],
    ) -> Result<Vec<Stored<R>>, StorageError> {
        let keys: Vec<Vec<u8>> = ids.iter().map(|id| record_key(R::COLLECTION, id)).collect();
        let (columns, source) = self.record_source::<R>();
        let rows = self
            .client()
            .await?
            .query(
                &format!("SELECT r.k, {columns} FROM {source} WHERE r.k = ANY($1)"),
                &[&keys],
            )
            .await
            .map_err(sql_error)?;
        let found: BTreeMap<Vec<u8>, &tokio_postgres::Row> =
            rows.iter().map(|r| (r.get(0), r)).collect();
        let mut out = Vec::with_capacity(keys.len());
        for key in &keys {
            if let Some(row) = found.get(key) {
                out.push(stored_from(row, 1)?);
            }
        }
        Ok(out)
    }

    /// Every record of a type, in primary-key order (recovery, index checks, copies).
    pub async fn scan<R: Record>(&self) -> Result<Vec<Stored<R>>, StorageError> {
        let mut conn = self.conn().await?;
        let records = {
            let tx = self.unlimited(&mut conn).await?;
            let records = self.scan_on::<R, _>(&tx).await?;
            tx.commit().await.map_err(sql_error)?;
            records
        };
        conn.release();
        Ok(records)
    }

    /// Up to `limit` records of a type whose id sorts after `after`, in primary-key order.
    pub async fn scan_chunk<R: Record>(
        &self,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Stored<R>>, StorageError> {
        let prefix = record_key(R::COLLECTION, &[]);
        // No record has an empty id: "after the prefix" is from the first.
        let start = record_key(R::COLLECTION, after.unwrap_or_default());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let (columns, source) = self.record_source::<R>();
        let rows = self
            .client()
            .await?
            .query(
                &format!(
                    "SELECT {columns} FROM {source} \
                     WHERE r.k > $1 AND r.k < $2 ORDER BY r.k LIMIT $3"
                ),
                &[&start, &prefix_end(&prefix), &limit],
            )
            .await
            .map_err(sql_error)?;
        rows.iter().map(|row| stored_from(row, 0)).collect()
    }

    pub(super) async fn scan_on<R: Record, C: GenericClient + Sync>(
        &self,
        client: &C,
    ) -> Result<Vec<Stored<R>>, StorageError> {
        let prefix = record_key(R::COLLECTION, &[]);
        let (columns, source) = self.record_source::<R>();
        let rows = client
            .query(
                &format!(
                    "SELECT {columns} FROM {source} WHERE r.k >= $1 AND r.k < $2 ORDER BY r.k"
                ),
                &[&prefix, &prefix_end(&prefix)],
            )
            .await
            .map_err(sql_error)?;
        rows.iter().map(|row| stored_from(row, 0)).collect()
    }

    /// One page of an index merged over the given tenants in sort order, as
    /// `Store::page` gives it: the entries of each tenant ordered by what follows the
    /// tenant's prefix (sort key, then id), in one query.
    pub async fn page(&self, q: &PageQuery<'_>) -> Result<Page, StorageError> {
        let mut total = 0u64;
        for tenant in q.tenants {
            total += self.count(q.index, tenant).await?;
        }
        if q.tenants.is_empty() || q.limit == 0 {
            return Ok(Page {
                ids: Vec::new(),
                total,
            });
        }
        if let Some(reversed) = q.from_nearer_end(total) {
            let mut ids = self.page_of(&reversed).await?;
            ids.reverse();
            return Ok(Page { ids, total });
        }
        Ok(Page {
            ids: self.page_of(q).await?,
            total,
        })
    }

    /// The ids of a page, read from the index's start in `q`'s direction.
    async fn page_of(&self, q: &PageQuery<'_>) -> Result<Vec<Vec<u8>>, StorageError> {
        let order = match q.direction {
            Direction::Asc => "ASC",
            Direction::Desc => "DESC",
        };
        let offset = i64::try_from(q.offset).unwrap_or(i64::MAX);
        let limit = i64::try_from(q.limit).unwrap_or(i64::MAX);
        // No tenant gives more than the page's end: each branch reads that many entries
        // of its tenant along the primary key (one tenant's keys share their prefix, so
        // key order is suffix order), and only those are merged: the cost follows the
        // page, not the size of the index. Equal suffixes keep the tenants' order, as the
        // embedded engine's merge does.
        let reach = offset.saturating_add(limit);
        let mut params: Vec<Vec<u8>> = Vec::new();
        let mut branches = Vec::new();
        for (branch, tenant) in q.tenants.iter().enumerate() {
            let prefix = tenant_prefix(q.index, tenant)?;
            let skip = prefix.len() + 1;
            branches.push(format!(
                "(SELECT id, substring(k from {skip}) AS suffix, {branch} AS branch
                  FROM {}.idx WHERE k >= ${} AND k < ${} ORDER BY k {order} LIMIT {reach})",
                self.schema,
                params.len() + 1,
                params.len() + 2
            ));
            let end = prefix_end(&prefix);
            params.push(prefix);
            params.push(end);
        }
        let sql = format!(
            "SELECT id FROM ({}) AS merged ORDER BY suffix {order}, branch ASC
             OFFSET {offset} LIMIT {limit}",
            branches.join(" UNION ALL ")
        );
        let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
            .iter()
            .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        let rows = self
            .client()
            .await?
            .query(&sql, &refs)
            .await
            .map_err(sql_error)?;
        Ok(rows.into_iter().map(|r| r.get(0)).collect())
    }

    /// Up to `limit` entries of the change feed above `after`, in order, as
    /// `Store::changes` gives them.
    pub async fn changes(
        &self,
        after: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Change>, StorageError> {
        // From the start: numbers begin at 0 in a copy of the embedded store.
        let after = after.map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX));
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .client()
            .await?
            .query(
                &format!(
                    "SELECT seq, v FROM {}.feed WHERE seq > $1 ORDER BY seq LIMIT $2",
                    self.schema
                ),
                &[&after, &limit],
            )
            .await
            .map_err(sql_error)?;
        rows.iter()
            .map(|r| {
                let seq = u64::try_from(r.get::<_, i64>(0)).unwrap_or(0);
                change_from(seq, r.get::<_, &[u8]>(1))
            })
            .collect()
    }

    /// The id holding a unique key, if any.
    pub async fn lookup_unique(&self, key: &UniqueKey) -> Result<Option<Vec<u8>>, StorageError> {
        let k = encode_uniques(std::slice::from_ref(key))?;
        let Some(k) = k.first() else {
            return Ok(None);
        };
        let row = self
            .client()
            .await?
            .query_opt(
                &format!("SELECT id FROM {}.uniques WHERE k = $1", self.schema),
                &[k],
            )
            .await
            .map_err(sql_error)?;
        Ok(row.map(|r| r.get(0)))
    }

    /// The ids holding each unique key, in the keys' order: one query.
    pub async fn lookup_unique_many(
        &self,
        keys: &[UniqueKey],
    ) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        self.values_at("uniques", "id", &encode_uniques(keys)?)
            .await
    }

    /// The `column` of the rows of `table` (keyed by its `k`) at each key, in the keys'
    /// order (`None` where no row is), in one query.
    pub(crate) async fn values_at(
        &self,
        table: &str,
        column: &str,
        keys: &[Vec<u8>],
    ) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self
            .client()
            .await?
            .query(
                &format!(
                    "SELECT k, {column} FROM {}.{table} WHERE k = ANY($1::bytea[])",
                    self.schema
                ),
                &[&keys],
            )
            .await
            .map_err(sql_error)?;
        let found: BTreeMap<Vec<u8>, Vec<u8>> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        Ok(keys.iter().map(|k| found.get(k).cloned()).collect())
    }

    /// Number of entries of an index for one tenant, from its counter.
    pub async fn count(&self, index: &'static str, tenant: &[u8]) -> Result<u64, StorageError> {
        let row = self
            .client()
            .await?
            .query_opt(
                &format!("SELECT n FROM {}.counters WHERE k = $1", self.schema),
                &[&tenant_prefix(index, tenant)?],
            )
            .await
            .map_err(sql_error)?;
        Ok(row.map_or(0, |r| u64::try_from(r.get::<_, i64>(0)).unwrap_or(0)))
    }

    /// The ids of one tenant's index entries whose sort key is in `from..to` (`to`: `None`,
    /// to the end), in ascending order, as `Store::index_range` gives them.
    pub async fn index_range(
        &self,
        index: &'static str,
        tenant: &[u8],
        from: &[u8],
        to: Option<&[u8]>,
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        let prefix = tenant_prefix(index, tenant)?;
        let mut start = prefix.clone();
        start.extend_from_slice(from);
        let end = match to {
            Some(to) => {
                let mut e = prefix.clone();
                e.extend_from_slice(to);
                e
            }
            None => prefix_end(&prefix),
        };
        let rows = self
            .client()
            .await?
            .query(
                &format!(
                    "SELECT id FROM {}.idx WHERE k >= $1 AND k < $2 ORDER BY k",
                    self.schema
                ),
                &[&start, &end],
            )
            .await
            .map_err(sql_error)?;
        Ok(rows.into_iter().map(|r| r.get(0)).collect())
    }

    /// Up to `limit` index entries under `prefix` after (in `direction`) the full key
    /// `after`: (full key, id) pairs, for [`crate::IndexIter`]'s keyset reads.
    pub(crate) async fn index_chunk(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        direction: Direction,
        limit: i64,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StorageError> {
        // Keyset bounds: ascending, from just after `after`; descending, below it.
        let (lo, lo_op, hi) = match (direction, after) {
            (Direction::Asc, None) => (prefix.to_vec(), ">=", prefix_end(prefix)),
            (Direction::Asc, Some(after)) => (after.to_vec(), ">", prefix_end(prefix)),
            (Direction::Desc, None) => (prefix.to_vec(), ">=", prefix_end(prefix)),
            (Direction::Desc, Some(after)) => (prefix.to_vec(), ">=", after.to_vec()),
        };
        let order = match direction {
            Direction::Asc => "ASC",
            Direction::Desc => "DESC",
        };
        let sql = format!(
            "SELECT k, id FROM {}.idx WHERE k {lo_op} $1 AND k < $2 ORDER BY k {order} LIMIT $3",
            self.schema
        );
        let rows = self
            .client()
            .await?
            .query(&sql, &[&lo, &hi, &limit])
            .await
            .map_err(sql_error)?;
        Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Number of entries in the change feed.
    pub(crate) async fn feed_len(&self) -> Result<usize, StorageError> {
        let row = self
            .client()
            .await?
            .query_one(&format!("SELECT count(*) FROM {}.feed", self.schema), &[])
            .await
            .map_err(sql_error)?;
        Ok(usize::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    /// A meta value.
    pub async fn get_meta(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        let row = self
            .client()
            .await?
            .query_opt(
                &format!("SELECT v FROM {}.meta WHERE k = $1", self.schema),
                &[&key.as_bytes()],
            )
            .await
            .map_err(sql_error)?;
        Ok(row.map(|r| r.get(0)))
    }

    /// The sequence numbers of the change feed's entries, oldest first.
    #[cfg(test)]
    pub async fn feed_seqs(&self, limit: i64) -> Result<Vec<u64>, StorageError> {
        let rows = self
            .client()
            .await?
            .query(
                &format!("SELECT seq FROM {}.feed ORDER BY seq LIMIT $1", self.schema),
                &[&limit],
            )
            .await
            .map_err(sql_error)?;
        Ok(rows
            .into_iter()
            .map(|r| u64::try_from(r.get::<_, i64>(0)).unwrap_or(0))
            .collect())
    }
}
