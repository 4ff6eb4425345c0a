//! A consistent copy of the whole store ([`Store::snapshot`]), its stable file format
//! ([`Snapshot::write_to`], [`Snapshot::read_from`]) and [`Store::restore`] into an empty
//! store: what backups and `tollgate` export/import use.

use super::Embedded;
use crate::StorageError;

/// The trees of a store, in the order a [`Snapshot`] holds them.
const TREES: [&str; 6] = ["records", "index", "counters", "uniques", "meta", "feed"];
const SNAPSHOT_MAGIC: &[u8] = b"TOLLGATE-SNAPSHOT-1\n";
const SNAPSHOT_END: &[u8] = b"END\n";

/// A consistent copy of every key of a store (see [`Store::snapshot`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub(super) trees: Vec<(String, Vec<KeyValue>)>,
}

type KeyValue = (Vec<u8>, Vec<u8>);

impl Snapshot {
    /// Number of records (not index entries) it holds.
    pub fn record_count(&self) -> usize {
        self.trees
            .iter()
            .find(|(name, _)| name == "records")
            .map_or(0, |(_, entries)| entries.len())
    }

    /// The stable file format: a magic line, then per tree its name, its entry count and
    /// length-prefixed keys and values (big-endian), then an end marker with the total.
    pub fn write_to(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        w.write_all(SNAPSHOT_MAGIC)?;
        let mut total = 0u64;
        for (name, entries) in &self.trees {
            w.write_all(&(name.len() as u32).to_be_bytes())?;
            w.write_all(name.as_bytes())?;
            w.write_all(&(entries.len() as u64).to_be_bytes())?;
            for (k, v) in entries {
                w.write_all(&(k.len() as u32).to_be_bytes())?;
                w.write_all(k)?;
                w.write_all(&(v.len() as u32).to_be_bytes())?;
                w.write_all(v)?;
            }
            total += entries.len() as u64;
        }
        w.write_all(&u32::MAX.to_be_bytes())?;
        w.write_all(SNAPSHOT_END)?;
        w.write_all(&total.to_be_bytes())?;
        Ok(())
    }

    /// Reads what [`Snapshot::write_to`] wrote; a truncated or foreign file is an error.
    pub fn read_from(r: &mut impl std::io::Read) -> Result<Snapshot, StorageError> {
        fn bad(what: &str) -> StorageError {
            StorageError::Corrupt(format!("not a complete Tollgate snapshot: {what}"))
        }
        fn exact(r: &mut impl std::io::Read, n: usize) -> Result<Vec<u8>, StorageError> {
            let mut buf = vec![0u8; n];
            r.read_exact(&mut buf).map_err(|_| bad("truncated"))?;
            Ok(buf)
        }
        fn u32_of(r: &mut impl std::io::Read) -> Result<u32, StorageError> {
            let b = exact(r, 4)?;
            Ok(u32::from_be_bytes(b.try_into().map_err(|_| bad("length"))?))
        }
        fn u64_of(r: &mut impl std::io::Read) -> Result<u64, StorageError> {
            let b = exact(r, 8)?;
            Ok(u64::from_be_bytes(b.try_into().map_err(|_| bad("count"))?))
        }
        if exact(r, SNAPSHOT_MAGIC.len())? != SNAPSHOT_MAGIC {
            return Err(bad("wrong header"));
        }
        let mut trees = Vec::new();
        let mut total = 0u64;
        loop {
            let len = u32_of(r)?;
            if len == u32::MAX {
                break;
            }
            let name = String::from_utf8(exact(r, len as usize)?).map_err(|_| bad("tree name"))?;
            if !TREES.contains(&name.as_str()) {
                return Err(bad("unknown tree"));
            }
            let count = u64_of(r)?;
            let mut entries = Vec::new();
            for _ in 0..count {
                let klen = u32_of(r)? as usize;
                let k = exact(r, klen)?;
                let vlen = u32_of(r)? as usize;
                let v = exact(r, vlen)?;
                entries.push((k, v));
            }
            total += count;
            trees.push((name, entries));
        }
        if exact(r, SNAPSHOT_END.len())? != SNAPSHOT_END || u64_of(r)? != total {
            return Err(bad("end marker"));
        }
        Ok(Snapshot { trees })
    }
}

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
        self.inner
            .meta
            .insert(super::FEED_BASE, &base.to_be_bytes())?;
        self.inner
            .feed_base
            .store(base, std::sync::atomic::Ordering::Release);
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
            _ => &i.meta,
        }
    }
}
