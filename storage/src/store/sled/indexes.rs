//! Checking and repairing a record type's derived keys on the embedded engine: its index,
//! counter and unique-key trees compared with what the records derive
//! (`indexes::expected_keys`), or rewritten from them; and its tallies entries (`tally`):
//! none without its record, none ahead of its record's revision.

use std::collections::BTreeMap;

use super::Embedded;
use crate::record::Record;
use crate::store::indexes::{compare, expected_keys, IndexReport};
use crate::store::layout::decode_counter;
use crate::StorageError;

impl Embedded {
    /// Compares the stored index entries, counters and unique keys of `R` with the ones its
    /// records derive, and its tallies entries with its records.
    pub fn verify_indexes<R: Record>(&self) -> Result<IndexReport, StorageError> {
        let expected = expected_keys(self.scan::<R>().map(|r| r.map(|s| s.value)))?;
        let actual_index = self.keys_under(&self.inner.index, R::INDEXES)?;
        let actual_uniques = self.keys_under(&self.inner.uniques, R::UNIQUES)?;
        let actual_counters = self
            .keys_under(&self.inner.counters, R::INDEXES)?
            .into_iter()
            .map(|(k, v)| Ok((k, decode_counter(&v)?)))
            .collect::<Result<BTreeMap<_, _>, StorageError>>()?;
        let mut report = compare(&expected, &actual_index, &actual_uniques, &actual_counters);
        // An entry without its record (or ahead of it) is extra, named by the record's key.
        report.extra.extend(self.verify_tallies::<R>()?);
        Ok(report)
    }

    /// Drops and rewrites every index entry, counter and unique key of `R` from its records,
    /// and removes the tallies entries without a record (or ahead of it).
    pub fn rebuild_indexes<R: Record>(&self) -> Result<(), StorageError> {
        let (index, counters, uniques) =
            expected_keys(self.scan::<R>().map(|r| r.map(|s| s.value)))?;
        for (tree, names) in [
            (&self.inner.index, R::INDEXES),
            (&self.inner.counters, R::INDEXES),
            (&self.inner.uniques, R::UNIQUES),
        ] {
            for k in self.keys_under(tree, names)?.keys() {
                tree.remove(k)?;
            }
        }
        for (k, v) in index {
            self.inner.index.insert(k, v)?;
        }
        for (k, v) in counters {
            self.inner.counters.insert(k, &v.to_be_bytes())?;
        }
        for (k, v) in uniques {
            self.inner.uniques.insert(k, v)?;
        }
        self.rebuild_tallies::<R>()?;
        self.inner.marks.clear();
        self.inner.db.flush()?;
        Ok(())
    }

    fn keys_under(
        &self,
        tree: &sled::Tree,
        names: &[&str],
    ) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, StorageError> {
        let mut out = BTreeMap::new();
        for name in names {
            let mut prefix = name.as_bytes().to_vec();
            prefix.push(0);
            for item in tree.scan_prefix(prefix) {
                let (k, v) = item?;
                out.insert(k.to_vec(), v.to_vec());
            }
        }
        Ok(out)
    }
}
