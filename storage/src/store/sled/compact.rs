//! Rewriting the embedded store (`tollgate compact`): every tree copied into a fresh sled
//! database beside the old one, with the configured compression, then swapped in. sled
//! appends every change to its log and reclaims a segment only once half of it is dead,
//! so a store that took many updates (counters, the change feed, purges) holds several
//! times its content; a rewrite holds it once. It is also the only way to change an
//! existing store's compression (sled refuses another setting than the one it was
//! created with).
//!
//! The swap is crash-safe: the new database is complete and flushed before anything of
//! the old one moves; a marker file then says which of two phases is under way (moving
//! the old files out, moving the new ones in), and [`recover`] finishes an interrupted
//! swap, or throws away an unfinished copy, before the store is opened again.

use std::path::{Path, PathBuf};

use super::{Embedded, FEED_BASE};
use crate::store::StoreConfig;
use crate::StorageError;

/// Where the new database is written, inside the data directory.
const NEW_DIR: &str = ".compact-new";
/// Where the old database's files go while the new ones move in.
const OLD_DIR: &str = ".compact-old";
/// The swap's phase: "out" (old files moving out) or "in" (new files moving in).
const MARKER: &str = ".compact-swap";
/// Entries copied per batch.
const BATCH: usize = 10_000;

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactReport {
    /// The database's files before (bytes on disk).
    pub before_bytes: u64,
    /// And after.
    pub after_bytes: u64,
    /// Keys copied, over every tree.
    pub entries: u64,
    /// Whether the rewritten store is compressed.
    pub compressed: bool,
}

/// What a sled database in `dir` was created with (its `conf` file): whether it is
/// compressed and its segment size. `None` when there is no database (or no readable
/// `conf`, which sled itself then rewrites from the configuration).
pub(super) fn persisted(dir: &Path) -> Option<(bool, usize)> {
    let bytes = std::fs::read(dir.join("conf")).ok()?;
    // The text, then a CRC32 of it (4 bytes).
    let text = String::from_utf8_lossy(bytes.get(..bytes.len().checked_sub(4)?)?).into_owned();
    let mut compression = None;
    let mut segment = None;
    for line in text.lines() {
        match line.split_once(": ") {
            Some(("use_compression", v)) => compression = v.trim().parse().ok(),
            Some(("segment_size", v)) => segment = v.trim().parse().ok(),
            _ => {}
        }
    }
    Some((compression?, segment?))
}

/// sled's own files in a data directory (the directory also holds mail, files, tokens).
fn is_sled_entry(name: &str) -> bool {
    matches!(name, "conf" | "db" | "blobs") || name.starts_with("snap.")
}

fn io(what: &str, path: &Path, e: std::io::Error) -> StorageError {
    StorageError::Io(format!("{what} {}: {e}", path.display()))
}

fn sync_dir(dir: &Path) -> Result<(), StorageError> {
    std::fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| io("cannot sync", dir, e))
}

fn write_marker(dir: &Path, phase: &str) -> Result<(), StorageError> {
    let tmp = dir.join(format!("{MARKER}.tmp"));
    std::fs::write(&tmp, phase).map_err(|e| io("cannot write", &tmp, e))?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| io("cannot sync", &tmp, e))?;
    std::fs::rename(&tmp, dir.join(MARKER)).map_err(|e| io("cannot rename", &tmp, e))?;
    sync_dir(dir)
}

/// Moves every sled entry of `from` into `to` (both in one file system).
fn move_entries(from: &Path, to: &Path, only_sled: bool) -> Result<(), StorageError> {
    std::fs::create_dir_all(to).map_err(|e| io("cannot create", to, e))?;
    let entries = std::fs::read_dir(from).map_err(|e| io("cannot read", from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io("cannot read", from, e))?;
        let name = entry.file_name();
        let Some(text) = name.to_str() else { continue };
        if only_sled && !is_sled_entry(text) {
            continue;
        }
        let target = to.join(&name);
        std::fs::rename(entry.path(), &target).map_err(|e| io("cannot move", &target, e))?;
    }
    sync_dir(from)?;
    sync_dir(to)
}

fn remove_dir(path: &Path) -> Result<(), StorageError> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("cannot remove", path, e)),
        _ => Ok(()),
    }
}

/// Finishes a swap a crash interrupted, or throws away a copy that was not complete.
/// Runs before the store opens; a no-op when no compaction was under way.
pub(super) fn recover(dir: &Path) -> Result<(), StorageError> {
    let new_dir = dir.join(NEW_DIR);
    let old_dir = dir.join(OLD_DIR);
    match std::fs::read_to_string(dir.join(MARKER)).ok().as_deref() {
        Some("out") => swap_from(dir, &new_dir, &old_dir, true)?,
        Some("in") => swap_from(dir, &new_dir, &old_dir, false)?,
        // No swap began: an unfinished copy, or leftovers of a finished one.
        _ => {
            remove_dir(&new_dir)?;
            remove_dir(&old_dir)?;
            let _ = std::fs::remove_file(dir.join(format!("{MARKER}.tmp")));
        }
    }
    Ok(())
}

/// The swap, from its first phase (`out`: the old files move out) or its second (the new
/// ones move in). Each phase can be repeated after a crash: phase one moves whatever sled
/// entries are still in `dir` (all old ones, as nothing new has moved yet); phase two
/// moves whatever is still in `new_dir`.
fn swap_from(dir: &Path, new_dir: &Path, old_dir: &Path, out: bool) -> Result<(), StorageError> {
    if out {
        move_entries(dir, old_dir, true)?;
        write_marker(dir, "in")?;
    }
    move_entries(new_dir, dir, false)?;
    std::fs::remove_file(dir.join(MARKER))
        .map_err(|e| io("cannot remove", &dir.join(MARKER), e))?;
    sync_dir(dir)?;
    remove_dir(old_dir)?;
    remove_dir(new_dir)
}

/// The bytes of sled's files in `dir` (the log, its blobs, snapshots).
fn sled_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|it| {
            it.flatten()
                .filter(|e| e.file_name().to_str().is_some_and(is_sled_entry))
                .map(|e| crate::store::stats::bytes_under(&e.path()))
                .sum()
        })
        .unwrap_or(0)
}

impl Embedded {
    /// Rewrites the store in `config.data_dir` (the service stopped) with
    /// `config.compression`: see the module's text.
    pub(crate) fn compact(config: &StoreConfig) -> Result<CompactReport, StorageError> {
        let dir = &config.data_dir;
        if !Self::exists(dir) {
            return Err(StorageError::Io(format!(
                "no store in {} to compact",
                dir.display()
            )));
        }
        recover(dir)?;
        let before_bytes = sled_bytes(dir);
        let new_dir: PathBuf = dir.join(NEW_DIR);
        let entries = {
            let old = Self::open(config)?;
            let new = Self::sled_config(config, &new_dir, config.compression).open()?;
            let entries = old.copy_into(&new)?;
            new.flush()?;
            entries
            // Both closed here: sled releases its files (and the old one its lock).
        };
        // The copy is complete and flushed: from here on, a crash finishes the swap.
        write_marker(dir, "out")?;
        swap_from(dir, &new_dir, &dir.join(OLD_DIR), true)?;
        Ok(CompactReport {
            before_bytes,
            after_bytes: sled_bytes(dir),
            entries,
            compressed: config.compression,
        })
    }

    /// Copies every tree into `new`, in batches, and numbers `new`'s change feed after
    /// every number this store ever gave (sled's id generator starts again at 0).
    fn copy_into(&self, new: &sled::Db) -> Result<u64, StorageError> {
        // Commits wait while the copy runs (the service is stopped; this is for safety).
        let _exclusive = self.inner.gate.write().unwrap_or_else(|p| p.into_inner());
        let db = &self.inner.db;
        let mut entries = 0u64;
        for name in db.tree_names() {
            let from = db.open_tree(&name)?;
            let to = new.open_tree(&name)?;
            let mut batch = sled::Batch::default();
            let mut in_batch = 0usize;
            for item in from.iter() {
                let (k, v) = item?;
                batch.insert(k, v);
                in_batch += 1;
                if in_batch == BATCH {
                    to.apply_batch(std::mem::take(&mut batch))?;
                    entries += in_batch as u64;
                    in_batch = 0;
                }
            }
            to.apply_batch(batch)?;
            entries += in_batch as u64;
            if from.len() != to.len() {
                return Err(StorageError::Corrupt(format!(
                    "compaction copied {} of {} entries of tree {}",
                    to.len(),
                    from.len(),
                    String::from_utf8_lossy(&name)
                )));
            }
        }
        let base = self
            .inner
            .feed_base
            .load(std::sync::atomic::Ordering::Acquire)
            .saturating_add(db.generate_id()?)
            .saturating_add(1);
        new.open_tree("meta")?
            .insert(FEED_BASE, &base.to_be_bytes())?;
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persisted_reads_sled_s_conf_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(persisted(dir.path()), None);
        let db = sled::Config::new().path(dir.path()).open().unwrap();
        drop(db);
        assert_eq!(persisted(dir.path()), Some((false, 512 * 1024)));
    }

    #[test]
    fn sled_entries_are_told_from_the_rest_of_the_data_directory() {
        for name in ["conf", "db", "blobs", "snap.0000000000001234"] {
            assert!(is_sled_entry(name), "{name}");
        }
        for name in ["mail", "files", "bootstrap-token", NEW_DIR, OLD_DIR, MARKER] {
            assert!(!is_sled_entry(name), "{name}");
        }
    }
}
