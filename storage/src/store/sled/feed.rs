//! The change feed on the embedded engine: its tree, `seq (u64 BE) -> entry`, read in
//! order. Entries are written and numbered by the commit's transaction (`write`).

use super::Embedded;
use crate::store::feed::{change_from, Change};
use crate::StorageError;

impl Embedded {
    /// Up to `limit` entries of the change feed with a sequence number above `after`
    /// (from the start with `None`), in order. An entry read here may not be durable yet:
    /// await [`crate::Store::read_barrier`] before acting on it.
    pub(crate) fn changes(
        &self,
        after: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Change>, StorageError> {
        let start = match after {
            Some(seq) => match seq.checked_add(1) {
                Some(next) => next.to_be_bytes().to_vec(),
                None => return Ok(Vec::new()),
            },
            None => Vec::new(),
        };
        let mut out = Vec::new();
        for item in self.inner.feed.range(start..).take(limit) {
            let (k, v) = item?;
            let seq = u64::from_be_bytes(
                k.as_ref()
                    .try_into()
                    .map_err(|_| StorageError::Corrupt("feed key is not 8 bytes".into()))?,
            );
            out.push(change_from(seq, &v)?);
        }
        Ok(out)
    }

    /// Number of entries waiting in the change feed.
    pub(crate) fn feed_len(&self) -> usize {
        self.inner.feed.len()
    }
}
