//! How the store lays its data out as keys and values: record keys
//! (`collection 0 id`), index entries (`index 0 len-prefixed tenant | sort | id`) and
//! the per-tenant counters of counted indexes (big-endian u64), and unique keys (`name 0 len-prefixed
//! tenant | value`).

use crate::keys::push_len_prefixed;
use crate::record::{IndexEntry, Record, UniqueKey};
use crate::StorageError;

/// An index entry's key and the key of its (index, tenant) counter (`None`: an
/// uncounted entry, [`IndexEntry::uncounted`]).
pub(super) struct EncodedIndex {
    pub(super) key: Vec<u8>,
    pub(super) counter: Option<Vec<u8>>,
}

pub(super) fn decode_counter(bytes: &[u8]) -> Result<u64, StorageError> {
    let arr: [u8; 8] = bytes
        .try_into()
        .map_err(|_| StorageError::Corrupt("counter is not 8 bytes".into()))?;
    Ok(u64::from_be_bytes(arr))
}

pub(super) fn record_key(collection: &str, id: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(collection.len() + 1 + id.len());
    k.extend_from_slice(collection.as_bytes());
    k.push(0);
    k.extend_from_slice(id);
    k
}

pub(super) fn tenant_prefix(name: &str, tenant: &[u8]) -> Result<Vec<u8>, StorageError> {
    let mut k = Vec::with_capacity(name.len() + 2 + tenant.len());
    k.extend_from_slice(name.as_bytes());
    k.push(0);
    push_len_prefixed(&mut k, tenant)?;
    Ok(k)
}

pub(super) fn encode_index_entries(
    entries: &[IndexEntry],
    id: &[u8],
) -> Result<Vec<EncodedIndex>, StorageError> {
    entries
        .iter()
        .map(|e| {
            let prefix = tenant_prefix(e.index, &e.tenant)?;
            let mut key = prefix.clone();
            key.extend_from_slice(&e.sort);
            key.extend_from_slice(id);
            Ok(EncodedIndex {
                key,
                counter: e.counted.then_some(prefix),
            })
        })
        .collect()
}

pub(super) fn encode_uniques(keys: &[UniqueKey]) -> Result<Vec<Vec<u8>>, StorageError> {
    keys.iter()
        .map(|u| {
            let mut k = tenant_prefix(u.name, &u.tenant)?;
            k.extend_from_slice(&u.value);
            Ok(k)
        })
        .collect()
}

pub(super) fn derived_keys<R: Record>(
    record: &R,
    id: &[u8],
) -> Result<(Vec<EncodedIndex>, Vec<Vec<u8>>), StorageError> {
    let mut index = record.index_entries();
    index.sort();
    index.dedup();
    let mut uniques = record.unique_keys();
    uniques.sort();
    uniques.dedup();
    Ok((encode_index_entries(&index, id)?, encode_uniques(&uniques)?))
}
