//! The embedded engine's copies: a consistent snapshot of its trees (the usage ones included), restoring one
//! into an empty store, whether it holds anything, and the deliberate damage the tests of
//! `tollgate check` use. The [`Snapshot`] and its file format are engine-neutral
//! (`store::snapshot`).

use super::{Embedded, FEED_BASE};
use crate::store::snapshot::{Snapshot, TREES};
use crate::StorageError;

impl Embedded {
    /// A consistent copy of the whole store: commits wait while it is read (every tree
    /// at one point in time, so records, indexes, counters and unique keys agree).
    /// It holds every committed write, so every acknowledged one. In memory: meant for
    /// stores that fit in RAM.
    pub fn snapshot(&self) -> Result<Snapshot, StorageError> {
        let _exclusive = self.inner.gate.write().unwrap_or_else(|p| p.into_inner());
        let mut trees = Vec::with_capacity(TREES.len());
        for name in TREES {
            let mut entries = Vec::new();
            for item in self.tree(name).iter() {
                let (k, v) = item?;
                entries.push((k.to_vec(), v.to_vec()));
            }
            trees.push((name.to_string(), entries));
        }
        Ok(Snapshot { trees })
    }

    /// Removes the first entry of an index, leaving its record and counter as they are:
    /// deliberate damage, for tests of `tollgate check`. Returns whether one was removed.
    #[doc(hidden)]
    pub fn damage_index_for_tests(&self, index: &str) -> Result<bool, StorageError> {
        let mut prefix = index.as_bytes().to_vec();
        prefix.push(0);
        match self.inner.index.scan_prefix(prefix).next() {
            Some(item) => {
                let (k, _) = item?;
                self.inner.index.remove(k)?;
                self.inner.marks.clear();
                self.inner.db.flush()?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Whether the store holds nothing at all.
    pub fn is_empty(&self) -> bool {
        TREES.iter().all(|name| self.tree(name).is_empty())
    }

    /// Loads a snapshot into an empty store and flushes it. Refuses a store with data.
    pub fn restore(&self, snapshot: &Snapshot) -> Result<(), StorageError> {
        if !self.is_empty() {
            return Err(StorageError::Conflict {
                collection: "store",
                expected: "an empty store".into(),
                found: None,
            });
        }
        let mut next_seq = 0u64;
        for (name, entries) in &snapshot.trees {
            let tree = self.tree(name);
            for (k, v) in entries {
                tree.insert(k.as_slice(), v.as_slice())?;
                if name == "feed" {
                    if let Ok(seq) = <[u8; 8]>::try_from(k.as_slice()) {
                        next_seq = next_seq.max(u64::from_be_bytes(seq).saturating_add(1));
                    }
                }
            }
        }
        // New feed entries are numbered after the copied ones (sled's id generator starts
        // again at 0 in a new store), and so are those of a store restored from this one.
        let base = next_seq.max(
            self.inner
                .feed_base
                .load(std::sync::atomic::Ordering::Acquire),
        );
        self.inner.meta.insert(FEED_BASE, &base.to_be_bytes())?;
        self.inner
            .feed_base
            .store(base, std::sync::atomic::Ordering::Release);
        self.inner.marks.clear();
        self.inner.db.flush()?;
        Ok(())
    }

    fn tree(&self, name: &str) -> &sled::Tree {
        let i = &self.inner;
        match name {
            "records" => &i.records,
            "index" => &i.index,
            "counters" => &i.counters,
            "uniques" => &i.uniques,
            "feed" => &i.feed,
            "tallies" => &i.tallies,
            other => i.usage.tree(other).unwrap_or(&i.meta),
        }
    }
}
