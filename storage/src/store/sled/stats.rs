//! The embedded store's size report (see [`crate::Store::storage_stats`]): every tree's
//! keys and bytes by name, and the file's size on disk.

use crate::store::stats::{Grouper, StorageStats};
use crate::StorageError;

use super::Embedded;

impl Embedded {
    pub(crate) fn storage_stats(&self) -> Result<StorageStats, StorageError> {
        let db = &self.inner.db;
        let mut areas = Vec::new();
        let mut names: Vec<Vec<u8>> = db.tree_names().into_iter().map(|n| n.to_vec()).collect();
        names.sort();
        for name in names {
            let tree = db.open_tree(&name)?;
            let mut grouper = Grouper::default();
            for item in tree.iter() {
                let (k, v) = item?;
                grouper.add(&k, v.len());
            }
            let area = grouper.finish(&String::from_utf8_lossy(&name));
            if !area.groups.is_empty() {
                areas.push(area);
            }
        }
        Ok(StorageStats {
            engine: "embedded",
            on_disk: db.size_on_disk()?,
            areas,
            tables: Vec::new(),
        })
    }
}
