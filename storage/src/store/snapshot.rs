//! A consistent copy of the whole store ([`Store::snapshot`]), its stable file format
//! ([`Snapshot::write_to`], [`Snapshot::read_from`]) and [`Store::restore`] into an empty
//! store: what backups and `tollgate` export/import use.
//!
//! Here: the copy and its file format, engine-neutral; the embedded engine takes and
//! restores copies (`sled/snapshot.rs`), PostgreSQL imports them (`pg/admin.rs`).

use crate::StorageError;

/// The trees of a store, in the order a [`Snapshot`] holds them. `tallies` (the counters of
/// tallied records, `tally`) comes after `records`, which an import needs first; a
/// snapshot of a build without it reads as one whose records carry their counters (they
/// do: a record without an entry at its revision reads its payload's). The usage store's
/// trees (`store::usage`, their layout there) come last; a snapshot of a build without them
/// reads as one without usage data.
pub(super) const TREES: [&str; 14] = [
    "records",
    "index",
    "counters",
    "uniques",
    "meta",
    "feed",
    "tallies",
    "usage_events",
    "usage_index",
    "usage_aggs",
    "usage_members",
    "usage_windows",
    "usage_window_members",
    "usage_meta",
];
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
