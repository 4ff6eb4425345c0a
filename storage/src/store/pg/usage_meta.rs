//! The usage store's meta entries on PostgreSQL (`store::usage`, table `usage_meta`): a
//! generation's bump, a compare-and-swap with its deltas, and their reads. The guarded
//! ingest's side (the generation's lock shared) is in `usage.rs`.

use std::collections::BTreeMap;

use super::{sql_error, tx_error, Deltas, PgEngine};
use crate::store::usage::{decode_generation, encode_generation, Delta};
use crate::StorageError;

/// The advisory lock of a generation's key (FNV-1a of its bytes): two keys that share
/// one only wait for each other more than they need to.
pub(super) fn lock_id(key: &[u8]) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(h.to_ne_bytes())
}

impl PgEngine {
    /// One attempt of a bump (see [`crate::Store::bump_generation`]): the generation's
    /// lock taken exclusive (the guarded ingests of this generation in flight finish
    /// first; those after wait and read the new one), its row and the entries written.
    pub(super) async fn bump_once(
        &self,
        key: &[u8],
        puts: &[(Vec<u8>, Vec<u8>)],
    ) -> Result<u64, StorageError> {
        let s = &self.schema;
        let mut conn = self.conn().await?;
        let tx = conn.get_mut()?.transaction().await.map_err(tx_error)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&lock_id(key)])
            .await
            .map_err(tx_error)?;
        let row = tx
            .query_opt(
                &format!("SELECT v FROM {s}.usage_meta WHERE k = $1 FOR UPDATE"),
                &[&key],
            )
            .await
            .map_err(tx_error)?;
        let was = decode_generation(row.as_ref().map(|r| r.get::<_, &[u8]>(0)))?;
        let next = was.saturating_add(1);
        let mut entries: BTreeMap<&[u8], &[u8]> = puts
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_slice()))
            .collect();
        let encoded = encode_generation(next);
        entries.insert(key, &encoded);
        let (ks, vs): (Vec<&[u8]>, Vec<&[u8]>) = entries.into_iter().unzip();
        tx.execute(
            &format!(
                "INSERT INTO {s}.usage_meta (k, v)
                 SELECT k, v FROM unnest($1::bytea[], $2::bytea[]) AS d(k, v) ORDER BY k
                 ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"
            ),
            &[&ks, &vs],
        )
        .await
        .map_err(tx_error)?;
        tx.commit().await.map_err(tx_error)?;
        conn.release();
        Ok(next)
    }

    /// One attempt of a compare-and-swap (see [`crate::Store::usage_cas`]): the entry
    /// written only where it holds what was expected (an insert waits for a concurrent
    /// one, an update re-reads the row a concurrent one committed), then the deltas.
    pub(super) async fn cas_once(
        &self,
        key: &[u8],
        expected: Option<&[u8]>,
        new: &[u8],
        deltas: &[Delta],
        now_us: i64,
    ) -> Result<bool, StorageError> {
        let s = &self.schema;
        let mut conn = self.conn().await?;
        let tx = conn.get_mut()?.transaction().await.map_err(tx_error)?;
        let wrote = match expected {
            None => tx
                .query_opt(
                    &format!(
                        "INSERT INTO {s}.usage_meta (k, v) VALUES ($1, $2)
                         ON CONFLICT (k) DO NOTHING RETURNING k"
                    ),
                    &[&key, &new],
                )
                .await
                .map_err(tx_error)?,
            Some(old) => tx
                .query_opt(
                    &format!(
                        "UPDATE {s}.usage_meta SET v = $3 WHERE k = $1 AND v = $2 RETURNING k"
                    ),
                    &[&key, &old, &new],
                )
                .await
                .map_err(tx_error)?,
        }
        .is_some();
        if !wrote {
            return Ok(false);
        }
        let mut d = Deltas::default();
        d.add_deltas(deltas, now_us);
        self.apply_deltas(&tx, d).await?;
        tx.commit().await.map_err(tx_error)?;
        conn.release();
        Ok(true)
    }

    /// See [`crate::Store::usage_meta`].
    pub(crate) async fn usage_meta(
        &self,
        keys: &[Vec<u8>],
    ) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        self.values_at("usage_meta", "v", keys).await
    }

    /// See [`crate::Store::usage_meta_range`].
    pub(crate) async fn usage_meta_range(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Result<crate::store::usage::MetaEntries, StorageError> {
        if start >= end {
            return Ok(Vec::new());
        }
        let rows = self
            .client()
            .await?
            .query(
                &format!(
                    "SELECT k, v FROM {}.usage_meta WHERE k >= $1 AND k < $2 ORDER BY k",
                    self.schema
                ),
                &[&start, &end],
            )
            .await
            .map_err(sql_error)?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }
}
