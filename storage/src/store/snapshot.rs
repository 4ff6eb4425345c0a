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

    /// Its trees and entries as a [`SnapshotReader`] gives them (copied).
    pub(crate) fn items(&self) -> impl Iterator<Item = Result<SnapshotItem, StorageError>> + '_ {
        self.trees.iter().flat_map(|(name, entries)| {
            let tree = match TREES.iter().find(|t| **t == name.as_str()) {
                Some(t) => Ok(SnapshotItem::Tree(t)),
                None => Err(bad("unknown tree")),
            };
            std::iter::once(tree).chain(
                entries
                    .iter()
                    .map(|(k, v)| Ok(SnapshotItem::Entry(k.clone(), v.clone()))),
            )
        })
    }

    /// The stable file format: a magic line, then per tree its name, its entry count and
    /// length-prefixed keys and values (big-endian), then an end marker with the total.
    pub fn write_to(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        w.write_all(SNAPSHOT_MAGIC)?;
        let mut total = 0u64;
        for (name, entries) in &self.trees {
            write_tree_head(w, name, entries.len() as u64)?;
            for (k, v) in entries {
                write_entry(w, k, v)?;
            }
            total += entries.len() as u64;
        }
        write_end(w, total)
    }

    /// Reads what [`Snapshot::write_to`] wrote; a truncated or foreign file is an error.
    /// Holds the whole store in memory: [`SnapshotReader`] reads it entry by entry.
    pub fn read_from(r: &mut impl std::io::Read) -> Result<Snapshot, StorageError> {
        let mut trees: Vec<(String, Vec<KeyValue>)> = Vec::new();
        for item in SnapshotReader::new(r)? {
            match item? {
                SnapshotItem::Tree(name) => trees.push((name.to_string(), Vec::new())),
                SnapshotItem::Entry(k, v) => match trees.last_mut() {
                    Some((_, entries)) => entries.push((k, v)),
                    None => return Err(bad("an entry before its tree")),
                },
            }
        }
        Ok(Snapshot { trees })
    }
}

fn bad(what: &str) -> StorageError {
    StorageError::Corrupt(format!("not a complete Tollgate snapshot: {what}"))
}

fn write_tree_head(w: &mut impl std::io::Write, name: &str, count: u64) -> std::io::Result<()> {
    w.write_all(&(name.len() as u32).to_be_bytes())?;
    w.write_all(name.as_bytes())?;
    w.write_all(&count.to_be_bytes())
}

fn write_entry(w: &mut impl std::io::Write, k: &[u8], v: &[u8]) -> std::io::Result<()> {
    w.write_all(&(k.len() as u32).to_be_bytes())?;
    w.write_all(k)?;
    w.write_all(&(v.len() as u32).to_be_bytes())?;
    w.write_all(v)
}

fn write_end(w: &mut impl std::io::Write, total: u64) -> std::io::Result<()> {
    w.write_all(&u32::MAX.to_be_bytes())?;
    w.write_all(SNAPSHOT_END)?;
    w.write_all(&total.to_be_bytes())?;
    w.flush()
}

/// Writes the snapshot format tree by tree, straight from the trees (nothing held in
/// memory): each tree's count is written once its entries are, over a placeholder.
pub(crate) struct SnapshotWriter<W: std::io::Write + std::io::Seek> {
    w: W,
    total: u64,
}

impl<W: std::io::Write + std::io::Seek> SnapshotWriter<W> {
    pub(crate) fn new(mut w: W) -> Result<Self, StorageError> {
        w.write_all(SNAPSHOT_MAGIC).map_err(io)?;
        Ok(SnapshotWriter { w, total: 0 })
    }

    /// Writes one tree; answers its entry count.
    pub(crate) fn tree<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &mut self,
        name: &str,
        entries: impl Iterator<Item = Result<(K, V), StorageError>>,
    ) -> Result<u64, StorageError> {
        use std::io::SeekFrom;
        write_tree_head(&mut self.w, name, 0).map_err(io)?;
        let count_at = self.w.stream_position().map_err(io)? - 8;
        let mut count = 0u64;
        for entry in entries {
            let (k, v) = entry?;
            write_entry(&mut self.w, k.as_ref(), v.as_ref()).map_err(io)?;
            count += 1;
        }
        let end = self.w.stream_position().map_err(io)?;
        self.w.seek(SeekFrom::Start(count_at)).map_err(io)?;
        self.w.write_all(&count.to_be_bytes()).map_err(io)?;
        self.w.seek(SeekFrom::Start(end)).map_err(io)?;
        self.total += count;
        Ok(count)
    }

    /// Writes the end marker and flushes; answers the writer.
    pub(crate) fn finish(mut self) -> Result<W, StorageError> {
        write_end(&mut self.w, self.total).map_err(io)?;
        Ok(self.w)
    }
}

fn io(e: std::io::Error) -> StorageError {
    StorageError::Io(format!("writing the snapshot: {e}"))
}

/// One item of a snapshot read entry by entry: a tree begins, or one of its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotItem {
    Tree(&'static str),
    Entry(Vec<u8>, Vec<u8>),
}

/// Reads a snapshot file item by item, holding one entry at a time; the end marker is
/// checked after the last entry (a truncated or foreign file is an error, as an item).
pub struct SnapshotReader<R: std::io::Read> {
    r: R,
    /// Entries left in the current tree.
    left: u64,
    total: u64,
    done: bool,
}

impl<R: std::io::Read> SnapshotReader<R> {
    /// Checks the header.
    pub fn new(mut r: R) -> Result<Self, StorageError> {
        if exact(&mut r, SNAPSHOT_MAGIC.len())? != SNAPSHOT_MAGIC {
            return Err(bad("wrong header"));
        }
        Ok(SnapshotReader {
            r,
            left: 0,
            total: 0,
            done: false,
        })
    }

    fn item(&mut self) -> Result<Option<SnapshotItem>, StorageError> {
        let r = &mut self.r;
        if self.left > 0 {
            self.left -= 1;
            let klen = u32_of(r)? as usize;
            let k = exact(r, klen)?;
            let vlen = u32_of(r)? as usize;
            let v = exact(r, vlen)?;
            return Ok(Some(SnapshotItem::Entry(k, v)));
        }
        let len = u32_of(r)?;
        if len == u32::MAX {
            if exact(r, SNAPSHOT_END.len())? != SNAPSHOT_END || u64_of(r)? != self.total {
                return Err(bad("end marker"));
            }
            return Ok(None);
        }
        let name = String::from_utf8(exact(r, len as usize)?).map_err(|_| bad("tree name"))?;
        let Some(name) = TREES.iter().find(|t| **t == name) else {
            return Err(bad("unknown tree"));
        };
        self.left = u64_of(r)?;
        self.total += self.left;
        Ok(Some(SnapshotItem::Tree(name)))
    }
}

impl<R: std::io::Read> Iterator for SnapshotReader<R> {
    type Item = Result<SnapshotItem, StorageError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.item();
        if !matches!(item, Ok(Some(_))) {
            self.done = true;
        }
        item.transpose()
    }
}

fn exact(r: &mut impl std::io::Read, n: usize) -> Result<Vec<u8>, StorageError> {
    use std::io::Read as _;
    // Grown as it is read: a damaged length cannot ask for gigabytes at once.
    let mut buf = Vec::with_capacity(n.min(1 << 20));
    let read = std::io::Read::take(r, n as u64)
        .read_to_end(&mut buf)
        .map_err(|_| bad("truncated"))?;
    if read != n {
        return Err(bad("truncated"));
    }
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
