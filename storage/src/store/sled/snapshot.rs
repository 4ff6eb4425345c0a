//! The embedded engine's copies: a consistent snapshot of its trees (the usage ones included), restoring one
//! into an empty store, whether it holds anything, and the deliberate damage the tests of
//! `tollgate check` use. The [`Snapshot`] and its file format are engine-neutral
//! (`store::snapshot`).

use super::{Embedded, FEED_BASE};
use crate::store::snapshot::{Snapshot, SnapshotItem, SnapshotWriter, TREES};
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

    /// The same copy as [`Embedded::snapshot`], written to `w` as it is read (the
    /// snapshot file format; nothing held in memory): commits wait until it is written.
    /// Answers the records it holds.
    pub fn snapshot_to<W: std::io::Write + std::io::Seek>(
        &self,
        w: W,
    ) -> Result<(W, u64), StorageError> {
        let _exclusive = self.inner.gate.write().unwrap_or_else(|p| p.into_inner());
        let mut writer = SnapshotWriter::new(w)?;
        let mut records = 0;
        for name in TREES {
            let count = writer.tree(
                name,
                self.tree(name)
                    .iter()
                    .map(|item| item.map_err(StorageError::from)),
            )?;
            if name == "records" {
                records = count;
            }
        }
        Ok((writer.finish()?, records))
    }

    /// Loads a snapshot read item by item ([`crate::SnapshotReader`]) into an empty store
    /// and flushes it; answers the records loaded. Refuses a store with data.
    pub fn restore_items(
        &self,
        items: impl Iterator<Item = Result<SnapshotItem, StorageError>>,
    ) -> Result<u64, StorageError> {
        if !self.is_empty() {
            return Err(StorageError::Conflict {
                collection: "store",
                expected: "an empty store".into(),
                found: None,
            });
        }
        let mut next_seq = 0u64;
        let mut records = 0u64;
        let mut tree: Option<(&str, &sled::Tree)> = None;
        for item in items {
            match item? {
                SnapshotItem::Tree(name) => tree = Some((name, self.tree(name))),
                SnapshotItem::Entry(k, v) => {
                    let Some((name, t)) = tree else {
                        return Err(StorageError::Corrupt(
                            "not a complete Tollgate snapshot: an entry before its tree".into(),
                        ));
                    };
                    if name == "feed" {
                        if let Ok(seq) = <[u8; 8]>::try_from(k.as_slice()) {
                            next_seq = next_seq.max(u64::from_be_bytes(seq).saturating_add(1));
                        }
                    }
                    if name == "records" {
                        records += 1;
                    }
                    // One insert per entry: sled batches of 10,000 made a restored file 56%
                    // larger and the restore 13% slower (20,000 sales, release).
                    t.insert(k, v)?;
                }
            }
        }
        self.finish_restore(next_seq)?;
        Ok(records)
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
        self.restore_items(snapshot.items()).map(drop)
    }

    /// After a restore: new feed entries are numbered after the copied ones (sled's id
    /// generator starts again at 0 in a new store), and so are those of a store restored
    /// from this one; no mark of a page stands; everything flushed.
    fn finish_restore(&self, next_seq: u64) -> Result<(), StorageError> {
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
