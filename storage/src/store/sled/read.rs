//! Reads on the embedded engine: records by id or by type, unique-key lookups, per-tenant
//! counts, index ranges, and index reads merged over several tenants ([`SledIndexIter`],
//! pages), whose cost grows with the page, never with the size of the store.

use super::{marks, Embedded};
use crate::codec;
use crate::record::{Record, Stored, UniqueKey};
use crate::store::layout::{decode_counter, encode_uniques, record_key, tenant_prefix};
use crate::store::reads::{Direction, Page, PageQuery};
use crate::StorageError;

impl Embedded {
    /// A record and its revision, its counters merged in (a tallied type's).
    pub fn get<R: Record>(&self, id: &[u8]) -> Result<Option<Stored<R>>, StorageError> {
        let key = record_key(R::COLLECTION, id);
        match self.inner.records.get(&key)? {
            Some(bytes) => {
                let mut stored = crate::codec::open_stored(&bytes)?;
                self.merge_tally(&key, &mut stored)?;
                Ok(Some(stored))
            }
            None => Ok(None),
        }
    }

    /// The stored revision of a record, without decoding it (`None`: no such record).
    pub fn revision<R: Record>(&self, id: &[u8]) -> Result<Option<u64>, StorageError> {
        match self.inner.records.get(record_key(R::COLLECTION, id))? {
            Some(bytes) => Ok(Some(codec::open(&bytes)?.0)),
            None => Ok(None),
        }
    }

    /// Records of the given ids, in order, skipping ids that no longer exist.
    pub fn get_many<R: Record>(&self, ids: &[Vec<u8>]) -> Result<Vec<Stored<R>>, StorageError> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(r) = self.get::<R>(id)? {
                out.push(r);
            }
        }
        Ok(out)
    }

    /// Every record of a type, in primary-key order. For recovery and index rebuilds.
    pub fn scan<R: Record>(&self) -> impl Iterator<Item = Result<Stored<R>, StorageError>> + '_ {
        self.inner
            .records
            .scan_prefix(record_key(R::COLLECTION, &[]))
            .map(|item| {
                let (key, bytes) = item?;
                let mut stored = crate::codec::open_stored(&bytes)?;
                self.merge_tally(&key, &mut stored)?;
                Ok(stored)
            })
    }

    /// The records of a type whose id sorts after `after` (all without one), in
    /// primary-key order, lazily.
    pub fn scan_after<R: Record>(
        &self,
        after: Option<&[u8]>,
    ) -> impl Iterator<Item = Result<Stored<R>, StorageError>> + '_ {
        let prefix = record_key(R::COLLECTION, &[]);
        let start = match after {
            Some(id) => {
                let mut k = record_key(R::COLLECTION, id);
                // The smallest key after the id's own.
                k.push(0);
                k
            }
            None => prefix.clone(),
        };
        self.inner
            .records
            .range(start..)
            .take_while(move |item| match item {
                Ok((key, _)) => key.starts_with(&prefix),
                Err(_) => true,
            })
            .map(|item| {
                let (key, bytes) = item?;
                let mut stored = crate::codec::open_stored(&bytes)?;
                self.merge_tally(&key, &mut stored)?;
                Ok(stored)
            })
    }

    /// The id of the record holding a unique key, if any.
    pub fn lookup_unique(&self, key: &UniqueKey) -> Result<Option<Vec<u8>>, StorageError> {
        let k = encode_uniques(std::slice::from_ref(key))?;
        match k.first() {
            Some(k) => Ok(self.inner.uniques.get(k)?.map(|v| v.to_vec())),
            None => Ok(None),
        }
    }

    /// The ids holding each unique key, in the keys' order.
    pub fn lookup_unique_many(
        &self,
        keys: &[UniqueKey],
    ) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        encode_uniques(keys)?
            .iter()
            .map(|k| Ok(self.inner.uniques.get(k)?.map(|v| v.to_vec())))
            .collect()
    }

    /// Number of entries of an index for one tenant, from its counter (no scan).
    pub fn count(&self, index: &'static str, tenant: &[u8]) -> Result<u64, StorageError> {
        match self.inner.counters.get(tenant_prefix(index, tenant)?)? {
            Some(v) => decode_counter(&v),
            None => Ok(0),
        }
    }

    /// One page of an index, merged over the given tenants in sort order. Its cost grows with
    /// `offset + limit` and the number of tenants, never with the size of the store.
    pub fn page(&self, q: &PageQuery<'_>) -> Result<Page, StorageError> {
        let mut total = 0u64;
        for tenant in q.tenants {
            total += self.count(q.index, tenant)?;
        }
        let reversed = q.from_nearer_end(total);
        // Deep from both ends: from the closest mark (`marks`), not entry by entry.
        if reversed.as_ref().map_or(q.offset, |r| r.offset) >= marks::STRIDE {
            if let [tenant] = q.tenants {
                return Ok(Page {
                    ids: self.page_from_mark(q, tenant, total)?,
                    total,
                });
            }
        }
        if let Some(reversed) = reversed {
            let mut page = self.page_of(&reversed)?;
            page.reverse();
            return Ok(Page { ids: page, total });
        }
        Ok(Page {
            ids: self.page_of(q)?,
            total,
        })
    }

    /// A page of one tenant, walked from the closest mark before its first entry in
    /// ascending order (the marks met past the known ones are noted on the way).
    fn page_from_mark(
        &self,
        q: &PageQuery<'_>,
        tenant: &[u8],
        total: u64,
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        let (first, count) = q.ascending_span(total);
        let prefix = tenant_prefix(q.index, tenant)?;
        let walk = self.inner.marks.walk(&prefix, first);
        let (mut position, entries) = match &walk.from {
            Some((position, key)) => (*position, self.inner.index.range(key.clone()..)),
            None => (0, self.inner.index.range(prefix.clone()..)),
        };
        let mut next_mark = (walk.known as u64).saturating_mul(marks::STRIDE);
        let mut found = Vec::new();
        let mut ids = Vec::new();
        for entry in entries {
            if ids.len() as u64 >= count {
                break;
            }
            let (k, id) = entry?;
            if !k.starts_with(&prefix) {
                break;
            }
            if position == next_mark {
                found.push(k.to_vec());
                next_mark = next_mark.saturating_add(marks::STRIDE);
            }
            if position >= first {
                ids.push(id.to_vec());
            }
            position += 1;
        }
        walk.finish(found);
        if q.direction == Direction::Desc {
            ids.reverse();
        }
        Ok(ids)
    }

    /// The ids of a page, read from the index's start in `q`'s direction.
    fn page_of(&self, q: &PageQuery<'_>) -> Result<Vec<Vec<u8>>, StorageError> {
        let mut ids = Vec::new();
        let wanted = q.offset.saturating_add(q.limit);
        for (n, id) in self
            .index_iter(q.index, q.tenants, q.direction)?
            .enumerate()
        {
            let n = n as u64;
            if n >= wanted {
                break;
            }
            let id = id?;
            if n >= q.offset {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// Record ids of an index in sort order, merged over the given tenants; lazy, so a caller
    /// that filters can stop as soon as it has what it needs.
    pub fn index_iter(
        &self,
        index: &'static str,
        tenants: &[Vec<u8>],
        direction: Direction,
    ) -> Result<SledIndexIter, StorageError> {
        let mut heads = Vec::with_capacity(tenants.len());
        for tenant in tenants {
            let prefix = tenant_prefix(index, tenant)?;
            let plen = prefix.len();
            let iter = self.inner.index.scan_prefix(prefix.clone());
            let iter: Box<dyn Iterator<Item = sled::Result<(sled::IVec, sled::IVec)>> + Send> =
                match direction {
                    Direction::Asc => Box::new(iter),
                    Direction::Desc => Box::new(iter.rev()),
                };
            heads.push(Head {
                plen,
                iter,
                peeked: None,
                descending: direction == Direction::Desc,
                prefix,
                tree: self.inner.index.clone(),
                last: None,
                fallback: None,
            });
        }
        Ok(SledIndexIter { heads, direction })
    }

    /// Ids in one tenant of an index whose sort key lies in `[from, to)`, ascending.
    pub fn index_range(
        &self,
        index: &'static str,
        tenant: &[u8],
        from: &[u8],
        to: Option<&[u8]>,
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        let prefix = tenant_prefix(index, tenant)?;
        let mut start = prefix.clone();
        start.extend_from_slice(from);
        let mut out = Vec::new();
        for item in self.inner.index.range(start..) {
            let (k, v) = item?;
            let Some(suffix) = k.strip_prefix(prefix.as_slice()) else {
                break;
            };
            if let Some(to) = to {
                if suffix >= to {
                    break;
                }
            }
            out.push(v.to_vec());
        }
        Ok(out)
    }

    pub fn get_meta(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.inner.meta.get(key.as_bytes())?.map(|v| v.to_vec()))
    }
}

struct Head {
    plen: usize,
    iter: Box<dyn Iterator<Item = sled::Result<(sled::IVec, sled::IVec)>> + Send>,
    /// The next (sort suffix, id) of this tenant, already read.
    peeked: Option<(Vec<u8>, Vec<u8>)>,
    descending: bool,
    /// The tenant's key prefix.
    prefix: Vec<u8>,
    tree: sled::Tree,
    /// The full key of the last entry read: where a fallback read starts.
    last: Option<Vec<u8>>,
    /// The rest of a descending read, read forwards (see [`Head::next_entry`]).
    fallback: Option<std::vec::IntoIter<(sled::IVec, sled::IVec)>>,
}

impl Head {
    fn fill(&mut self) -> Result<(), StorageError> {
        if self.peeked.is_none() {
            if let Some((k, v)) = self.next_entry()? {
                let suffix = k.get(self.plen..).unwrap_or_default().to_vec();
                self.last = Some(k.to_vec());
                self.peeked = Some((suffix, v.to_vec()));
            }
        }
        Ok(())
    }

    /// The tenant's next entry. sled 0.34's reverse iteration can loop and then panic
    /// ("fucked up tree traversal next_back") when a tree node starts right above keys
    /// ending in a long run of `0xFF` bytes (its predecessor search pads four): the sort
    /// keys of small negative numbers, or of descending ones. Should it give up, the rest of
    /// the tenant's range is read forwards and handed out backwards: the same entries, at a
    /// cost growing with what is left of the tenant rather than with the page.
    fn next_entry(&mut self) -> Result<Option<(sled::IVec, sled::IVec)>, StorageError> {
        if let Some(rest) = &mut self.fallback {
            return Ok(rest.next());
        }
        if !self.descending {
            return Ok(self.iter.next().transpose()?);
        }
        let iter = &mut self.iter;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| iter.next())) {
            Ok(item) => Ok(item.transpose()?),
            Err(_) => {
                tracing::warn!("sled's reverse iteration gave up; reading the rest forwards");
                // Below the last entry handed out (or the whole prefix), within the prefix.
                let lo = self.prefix.as_slice();
                let mut rest: Vec<(sled::IVec, sled::IVec)> = match &self.last {
                    Some(last) => self
                        .tree
                        .range(lo..last.as_slice())
                        .collect::<sled::Result<_>>()?,
                    None => self.tree.scan_prefix(lo).collect::<sled::Result<_>>()?,
                };
                rest.reverse();
                let mut rest = rest.into_iter();
                let next = rest.next();
                self.fallback = Some(rest);
                Ok(next)
            }
        }
    }
}

/// Ids of index entries in sort order over several tenants (see `Store::index_iter`), on the embedded engine.
pub(crate) struct SledIndexIter {
    heads: Vec<Head>,
    direction: Direction,
}

impl Iterator for SledIndexIter {
    type Item = Result<Vec<u8>, StorageError>;

    fn next(&mut self) -> Option<Self::Item> {
        for head in self.heads.iter_mut() {
            if let Err(e) = head.fill() {
                return Some(Err(e));
            }
        }
        let mut best: Option<(usize, &[u8])> = None;
        for (n, head) in self.heads.iter().enumerate() {
            let Some((suffix, _)) = &head.peeked else {
                continue;
            };
            let better = match best {
                None => true,
                Some((_, b)) => match self.direction {
                    Direction::Asc => suffix.as_slice() < b,
                    Direction::Desc => suffix.as_slice() > b,
                },
            };
            if better {
                best = Some((n, suffix.as_slice()));
            }
        }
        let best = best.map(|(n, _)| n);
        let head = self.heads.get_mut(best?)?;
        head.peeked.take().map(|(_, id)| Ok(id))
    }
}
