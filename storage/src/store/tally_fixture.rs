//! The record both engines' tally tests count (`sled/tally_tests.rs`, `pg/tally_tests.rs`):
//! a key whose counters are tallied, as a license key's are, and the helpers that write and
//! read it through the [`Store`] API.

use serde::{Deserialize, Serialize};

use crate::{codec, Batch, Expect, Record, StorageError, Store, Tally};

/// A record whose counters are tallied, as a license key's are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Key {
    pub id: u64,
    pub note: String,
    pub limit: Option<i64>,
    pub usage: i64,
    pub validations: i64,
    pub last_at: Option<i64>,
}

impl Record for Key {
    const COLLECTION: &'static str = "tkey";
    const VERSION: u16 = 1;
    const TALLIED: bool = true;

    fn id_key(&self) -> Vec<u8> {
        self.id.to_be_bytes().to_vec()
    }
    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        codec::encode(self)
    }
    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        codec::decode(Self::COLLECTION, version, payload)
    }
    fn tally(&self) -> (Tally, Option<i64>) {
        (
            Tally {
                bounded: self.usage,
                hits: self.validations,
                last_hit_us: self.last_at,
            },
            self.limit,
        )
    }
    fn set_tally(&mut self, t: &Tally) {
        self.usage = t.bounded;
        self.validations = t.hits;
        self.last_at = t.last_hit_us;
    }
}

/// A new key `id` with no counts.
pub(crate) fn key(id: u64, limit: Option<i64>) -> Key {
    Key {
        id,
        note: "new".into(),
        limit,
        usage: 0,
        validations: 0,
        last_at: None,
    }
}

/// The id key of key `n`.
pub(crate) fn id(n: u64) -> Vec<u8> {
    n.to_be_bytes().to_vec()
}

/// Puts `k` alone; its new revision.
pub(crate) async fn put(store: &Store, k: &Key, expect: Expect) -> u64 {
    let mut b = Batch::new();
    b.put(k, expect).unwrap();
    store.commit(&b).await.unwrap().revs[0]
}

/// Key `n` as read, with its revision.
pub(crate) async fn get(store: &Store, n: u64) -> (u64, Key) {
    let s = store.get::<Key>(&id(n)).await.unwrap().unwrap();
    (s.rev, s.value)
}
