//! Checking and repairing the derived keys of a record type: [`Store::verify_indexes`]
//! compares the stored index entries, counters and unique keys with the ones the records
//! derive, and [`Store::rebuild_indexes`] rewrites them (`tollgate check`).
//!
//! Here: what both engines share, the keys records derive and their comparison with the
//! stored ones ([`IndexReport`]); each engine reads and rewrites its own (`sled/indexes.rs`,
//! `pg/admin.rs`).

use std::collections::BTreeMap;

use super::layout::derived_keys;
use crate::record::Record;
use crate::StorageError;

/// What [`Store::verify_indexes`] found: entries that should exist and do not, and entries
/// that exist and should not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexReport {
    pub missing: Vec<Vec<u8>>,
    pub extra: Vec<Vec<u8>>,
    pub wrong_counters: Vec<Vec<u8>>,
}

impl IndexReport {
    pub fn is_clean(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty() && self.wrong_counters.is_empty()
    }
}

/// The index entries (key → id), counters of the counted ones (key → count) and unique keys (key → id) that
/// records derive: what the stored ones must be.
pub(super) type ExpectedKeys = (
    BTreeMap<Vec<u8>, Vec<u8>>,
    BTreeMap<Vec<u8>, u64>,
    BTreeMap<Vec<u8>, Vec<u8>>,
);

/// The derived keys of `records` (any engine's scan of one type).
pub(super) fn expected_keys<R: Record>(
    records: impl IntoIterator<Item = Result<R, StorageError>>,
) -> Result<ExpectedKeys, StorageError> {
    let mut index = BTreeMap::new();
    let mut counters = BTreeMap::new();
    let mut uniques = BTreeMap::new();
    for record in records {
        let record = record?;
        let id = record.id_key();
        let (i, u) = derived_keys(&record, &id)?;
        for e in i {
            if let Some(counter) = e.counter {
                *counters.entry(counter).or_insert(0) += 1;
            }
            index.insert(e.key, id.clone());
        }
        for k in u {
            uniques.insert(k, id.clone());
        }
    }
    Ok((index, counters, uniques))
}

/// What differs between the derived keys and the stored ones (any engine's).
pub(super) fn compare(
    expected: &ExpectedKeys,
    actual_index: &BTreeMap<Vec<u8>, Vec<u8>>,
    actual_uniques: &BTreeMap<Vec<u8>, Vec<u8>>,
    actual_counters: &BTreeMap<Vec<u8>, u64>,
) -> IndexReport {
    let (expected_index, expected_counters, expected_uniques) = expected;
    let mut report = IndexReport::default();
    report.missing.extend(
        expected_index
            .keys()
            .filter(|k| !actual_index.contains_key(*k))
            .cloned(),
    );
    report.missing.extend(
        expected_uniques
            .keys()
            .filter(|k| !actual_uniques.contains_key(*k))
            .cloned(),
    );
    report.extra.extend(
        actual_index
            .keys()
            .filter(|k| !expected_index.contains_key(*k))
            .cloned(),
    );
    report.extra.extend(
        actual_uniques
            .keys()
            .filter(|k| !expected_uniques.contains_key(*k))
            .cloned(),
    );
    for (k, n) in actual_counters {
        if expected_counters.get(k).copied().unwrap_or(0) != *n {
            report.wrong_counters.push(k.clone());
        }
    }
    for k in expected_counters.keys() {
        if !actual_counters.contains_key(k) {
            report.wrong_counters.push(k.clone());
        }
    }
    report
}
