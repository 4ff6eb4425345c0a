use thiserror::Error;

/// Every failure the storage layer reports. No engine error type escapes this crate.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum StorageError {
    /// The engine failed to read, write or flush.
    #[error("storage I/O error: {0}")]
    Io(String),
    /// A stored value could not be decoded (unknown format version or bad bytes).
    #[error("cannot decode {collection} record (format version {version}): {reason}")]
    Codec {
        collection: &'static str,
        version: u16,
        reason: String,
    },
    /// A conditional write found another revision than the one it expected.
    #[error("conflict on {collection}: expected {expected}, found revision {found:?}")]
    Conflict {
        collection: &'static str,
        expected: String,
        found: Option<u64>,
    },
    /// A unique constraint (e.g. an organization slug) is already taken by another record.
    #[error("unique constraint {constraint} is already taken")]
    Unique { constraint: &'static str },
    /// Stored data does not have the shape this code expects.
    #[error("corrupt data: {0}")]
    Corrupt(String),
    /// The store cannot acknowledge writes now: a flush failed (disk full, read-only, I/O
    /// error) or did not finish before its deadline. Retry later.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The store is shutting down and accepts no more work.
    #[error("the store is closed")]
    Closed,
}

impl From<sled::Error> for StorageError {
    fn from(e: sled::Error) -> Self {
        StorageError::Io(e.to_string())
    }
}
