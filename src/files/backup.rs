//! The local backend's part of `tollgate backup`, `restore` and `check`: copying objects
//! with their SHA-256 verified, and comparing the objects on disk with the records.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::domain::file::{hex, FileState, StoredFile};

/// One uploaded file as a backup lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ManifestEntry {
    pub organization_id: String,
    pub id: String,
    pub size: u64,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
}

impl ManifestEntry {
    /// The entry of an uploaded file (None while pending).
    pub fn of(f: &StoredFile) -> Option<ManifestEntry> {
        match &f.state {
            FileState::Uploaded { sha256, .. } => Some(ManifestEntry {
                organization_id: f.organization_id.to_string(),
                id: f.id.to_string(),
                size: f.size,
                sha256: hex(sha256),
            }),
            FileState::Pending { .. } => None,
        }
    }

    /// `<org>/<id>` under a files directory.
    pub fn relative(&self) -> std::path::PathBuf {
        Path::new(&self.organization_id).join(&self.id)
    }
}

/// Copies `from` into `to` (written to a `.partial` file, fsynced, renamed, owner-only),
/// checking its size and SHA-256 against `entry`; a mismatch leaves nothing at `to`.
pub fn copy_verified(mut from: impl Read, to: &Path, entry: &ManifestEntry) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = to
        .parent()
        .ok_or_else(|| io::Error::other("no parent directory"))?;
    fs::create_dir_all(dir)?;
    let partial = to.with_extension("partial");
    let _ = fs::remove_file(&partial);
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&partial)?;
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1024 * 1024];
    let mut len = 0u64;
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        out.write_all(&buf[..n])?;
        len += n as u64;
    }
    out.sync_all()?;
    drop(out);
    if len != entry.size || hex(&sha.finalize()) != entry.sha256 {
        let _ = fs::remove_file(&partial);
        return Err(io::Error::other(format!(
            "file {}: the copied bytes are not the recorded ones ({len} bytes read, {} expected)",
            entry.id, entry.size
        )));
    }
    fs::rename(&partial, to)?;
    fs::File::open(dir)?.sync_all()
}

/// What `tollgate check` found in `<data_dir>/files`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesReport {
    /// Uploaded files whose object is missing or not of the recorded size.
    pub missing: Vec<String>,
    /// Objects no uploaded file names, and parts of no pending upload.
    pub orphans: Vec<String>,
    pub checked: usize,
}

impl FilesReport {
    pub fn is_clean(&self) -> bool {
        self.missing.is_empty() && self.orphans.is_empty()
    }
}

/// Compares the objects and parts under `root` (`<data_dir>/files`) with `files`.
pub fn check(root: &Path, files: &[StoredFile]) -> io::Result<FilesReport> {
    let mut report = FilesReport::default();
    let mut known = HashSet::new();
    let mut pending = HashSet::new();
    for f in files {
        match &f.state {
            FileState::Uploaded { .. } => {
                let rel = Path::new(&f.organization_id.to_string()).join(f.id.to_string());
                let path = root.join("objects").join(&rel);
                let size = fs::metadata(&path).map(|m| m.len()).ok();
                if size != Some(f.size) {
                    report.missing.push(format!(
                        "{} ({}; {} bytes recorded, {})",
                        f.id,
                        rel.display(),
                        f.size,
                        size.map_or("absent".to_string(), |s| format!("{s} on disk"))
                    ));
                }
                known.insert(rel);
                report.checked += 1;
            }
            FileState::Pending { .. } => {
                pending.insert(f.id.to_string());
            }
        }
    }
    if let Ok(orgs) = fs::read_dir(root.join("objects")) {
        for org in orgs {
            let org = org?;
            for obj in fs::read_dir(org.path())? {
                let obj = obj?;
                let rel = Path::new(&org.file_name()).join(obj.file_name());
                if !known.contains(&rel) {
                    report.orphans.push(format!("objects/{}", rel.display()));
                }
            }
        }
    }
    if let Ok(uploads) = fs::read_dir(root.join("uploads")) {
        for u in uploads {
            let u = u?;
            let name = u.file_name().to_string_lossy().into_owned();
            if !pending.contains(&name) {
                report.orphans.push(format!("uploads/{name}"));
            }
        }
    }
    Ok(report)
}
