//! The `(organization_id, key)` → key id directory: how validation finds a key's actor.
//!
//! In memory, so that a key once seen is found without touching the store:
//!
//! * **Filled lazily** from the store's unique index (`LICENSE_KEY_VALUE`) on a miss, so
//!   keys written straight to the store (checkout completion writes new keys without any
//!   actor) are found on their first validation, with no hook to call.
//! * **No negative caching**: a miss that the store does not know either is not
//!   remembered, so a key created a moment later is found at once. (Unknown keys cost one
//!   index read each, from the store's page cache.)
//! * **Small**: an entry is a keyed 64-bit hash of `(organization_id, key)` and the 16-byte
//!   id, not the key text. The hash is SipHash with a per-process random key, so callers
//!   cannot aim collisions at it. An entry is only a hint: the actor checks that the key it
//!   holds is the one asked for ([`super::LicenseKeyError::WrongKey`]), and the caller then
//!   [`KeyDirectory::forget`]s the entry and asks the store. A collision (≈ n²/2⁶⁵, about
//!   3·10⁻¹⁰ for 100,000 keys) therefore costs a store read, never a wrong answer.
//! * Keys are never deleted and their organization never changes. Their value changes only
//!   by a rotation (`RotateLicenseKey`), whose caller [`KeyDirectory::forget`]s the old
//!   value in its process; an entry another process still holds for it leads to the key's
//!   actor, which refuses the old value as `WrongKey`, so it costs one store read, as a
//!   collision does, never a wrong answer.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

use dashmap::DashMap;
use tollgate_storage::{StorageError, Store};

use super::model::LicenseKey;
use crate::domain::ids::{LicenseKeyId, OrganizationId};

/// The map's own hasher: its keys already are uniformly distributed keyed hashes.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// See the module docs.
pub struct KeyDirectory {
    hasher: RandomState,
    map: DashMap<u64, LicenseKeyId, BuildHasherDefault<Prehashed>>,
}

impl Default for KeyDirectory {
    fn default() -> Self {
        Self::new()
    }
}

impl KeyDirectory {
    pub fn new() -> Self {
        Self {
            hasher: RandomState::new(),
            map: DashMap::default(),
        }
    }

    fn slot(&self, organization_id: OrganizationId, key: &str) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write(&organization_id.as_bytes());
        h.write(key.as_bytes());
        h.finish()
    }

    /// The id remembered for this key, if any (memory only).
    pub fn cached(&self, organization_id: OrganizationId, key: &str) -> Option<LicenseKeyId> {
        self.map
            .get(&self.slot(organization_id, key))
            .map(|id| *id.value())
    }

    /// The id of the key: from memory, else from the store's unique index (and then
    /// remembered). `None` if the store has no such key.
    pub async fn resolve(
        &self,
        store: &Store,
        organization_id: OrganizationId,
        key: &str,
    ) -> Result<Option<LicenseKeyId>, StorageError> {
        if let Some(id) = self.cached(organization_id, key) {
            return Ok(Some(id));
        }
        self.lookup(store, organization_id, key).await
    }

    /// Asks the store (never the memory) and remembers the answer if there is one.
    pub async fn lookup(
        &self,
        store: &Store,
        organization_id: OrganizationId,
        key: &str,
    ) -> Result<Option<LicenseKeyId>, StorageError> {
        let found = store
            .lookup_unique(&LicenseKey::value_key(organization_id, key))
            .await?
            .and_then(|bytes| LicenseKeyId::from_key(&bytes));
        if let Some(id) = found {
            self.remember(organization_id, key, id);
        }
        Ok(found)
    }

    /// Records a known key (e.g. right after writing it; optional, a miss finds it too).
    pub fn remember(&self, organization_id: OrganizationId, key: &str, id: LicenseKeyId) {
        self.map.insert(self.slot(organization_id, key), id);
    }

    /// Drops the entry for this key: it led to another key (see the module docs).
    pub fn forget(&self, organization_id: OrganizationId, key: &str) {
        self.map.remove(&self.slot(organization_id, key));
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
#[path = "directory_tests.rs"]
mod tests;
