//! The change feed: an ordered log, written in the same transaction as the records it
//! describes, of every creation, change and deletion of the record types that opt in
//! ([`crate::Record::FEED`]), plus notices that change no record ([`super::Batch::notice`]).
//!
//! It is the outbox of transactional messaging: a consumer (the webhook dispatcher) reads
//! the entries in order, does its work and removes them with
//! [`super::Batch::consume_changes`] in the transaction that records its own results, so
//! an acknowledged write always yields its entry, even across `kill -9`, and a failed one
//! yields none.
//!
//! Here: its entries, as both engines store them ([`Change`]); each engine reads its own
//! feed (`sled/feed.rs`, `pg/read.rs`).

use serde::{Deserialize, Serialize};

use crate::record::Record;
use crate::{codec, StorageError};

#[derive(Serialize, Deserialize)]
struct Entry {
    collection: String,
    id: Vec<u8>,
    before: Option<Vec<u8>>,
    after: Option<Vec<u8>>,
}

pub(super) fn encode_entry(
    collection: &str,
    id: &[u8],
    before: Option<&[u8]>,
    after: Option<&[u8]>,
) -> Result<Vec<u8>, StorageError> {
    codec::encode(&Entry {
        collection: collection.to_string(),
        id: id.to_vec(),
        before: before.map(<[u8]>::to_vec),
        after: after.map(<[u8]>::to_vec),
    })
}

/// One entry of the change feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Position in the feed: entries of one record are numbered in commit order.
    pub seq: u64,
    /// The record's collection, or a notice's topic.
    pub collection: String,
    /// The record's id key (a notice's own id).
    pub id: Vec<u8>,
    before: Option<Vec<u8>>,
    after: Option<Vec<u8>>,
}

/// The entry numbered `seq`, from its stored bytes (any engine).
pub(super) fn change_from(seq: u64, bytes: &[u8]) -> Result<Change, StorageError> {
    let e: Entry = codec::decode("feed", 1, bytes)?;
    Ok(Change {
        seq,
        collection: e.collection,
        id: e.id,
        before: e.before,
        after: e.after,
    })
}

impl Change {
    /// Whether this entry is about records of type `R`.
    pub fn is<R: Record>(&self) -> bool {
        self.collection == R::COLLECTION
    }

    /// The record before the write (`None`: it was created).
    pub fn before<R: Record>(&self) -> Result<Option<R>, StorageError> {
        self.before.as_deref().map(Self::open::<R>).transpose()
    }

    /// The record after the write (`None`: it was deleted).
    pub fn after<R: Record>(&self) -> Result<Option<R>, StorageError> {
        self.after.as_deref().map(Self::open::<R>).transpose()
    }

    /// A notice's payload.
    pub fn notice(&self) -> Option<&[u8]> {
        match (&self.before, &self.after) {
            (None, Some(p)) => Some(p),
            _ => None,
        }
    }

    fn open<R: Record>(sealed: &[u8]) -> Result<R, StorageError> {
        let (_, version, payload) = codec::open(sealed)?;
        R::decode(version, payload)
    }
}
