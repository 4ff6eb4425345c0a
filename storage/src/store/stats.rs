//! What the store holds, by size (`tollgate storage stats`): on the embedded store each
//! tree's keys and bytes by collection or index name (the key's text before its first 0
//! byte) and the file's size on disk; on PostgreSQL each table's heap, index and TOAST
//! bytes, and the rows of `records` and `idx` by collection or index name.

use crate::{StorageError, Store};

use super::Engine;

/// Keys and bytes under one name (a collection, an index, a unique key's name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupStats {
    pub name: String,
    pub keys: u64,
    pub key_bytes: u64,
    pub value_bytes: u64,
}

/// One tree (embedded) or table (PostgreSQL) by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AreaStats {
    pub area: String,
    /// Largest first.
    pub groups: Vec<GroupStats>,
}

impl AreaStats {
    pub fn keys(&self) -> u64 {
        self.groups.iter().map(|g| g.keys).sum()
    }

    pub fn bytes(&self) -> u64 {
        self.groups
            .iter()
            .map(|g| g.key_bytes + g.value_bytes)
            .sum()
    }
}

/// A PostgreSQL table's size on disk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableSize {
    pub table: String,
    pub rows: u64,
    pub heap_bytes: u64,
    pub index_bytes: u64,
    pub toast_bytes: u64,
    pub total_bytes: u64,
}

/// The store's size report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageStats {
    pub engine: &'static str,
    /// The embedded store's file and blobs (sled's `size_on_disk`); the sum of the tables'
    /// total on PostgreSQL.
    pub on_disk: u64,
    /// By tree (embedded) or table (PostgreSQL's `records`, `idx`, `uniques`, `counters`).
    pub areas: Vec<AreaStats>,
    /// PostgreSQL only.
    pub tables: Vec<TableSize>,
}

impl StorageStats {
    /// How many records `collection` holds (its keys in the records' tree or table).
    pub fn records_of(&self, collection: &str) -> u64 {
        self.areas
            .iter()
            .filter(|a| a.area == "records")
            .flat_map(|a| a.groups.iter())
            .filter(|g| g.name == collection)
            .map(|g| g.keys)
            .sum()
    }

    /// The logical bytes of every key and value.
    pub fn logical_bytes(&self) -> u64 {
        self.areas.iter().map(AreaStats::bytes).sum()
    }

    /// The report as text lines (sizes in bytes).
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!("engine: {}", self.engine)];
        for t in &self.tables {
            out.push(format!(
                "table {}: rows {} heap {} index {} toast {} total {}",
                t.table, t.rows, t.heap_bytes, t.index_bytes, t.toast_bytes, t.total_bytes
            ));
        }
        for a in &self.areas {
            out.push(format!(
                "{} {}: keys {} bytes {}",
                if self.tables.is_empty() {
                    "tree"
                } else {
                    "rows of"
                },
                a.area,
                a.keys(),
                a.bytes()
            ));
            for g in &a.groups {
                out.push(format!(
                    "  {} {}: keys {} key_bytes {} value_bytes {}",
                    a.area, g.name, g.keys, g.key_bytes, g.value_bytes
                ));
            }
        }
        out.push(format!("logical bytes: {}", self.logical_bytes()));
        out.push(format!("on disk: {}", self.on_disk));
        out
    }
}

/// Groups keys by their name (the text before the first 0 byte; `-` for keys without
/// one, such as the feed's sequence numbers).
#[derive(Default)]
pub(crate) struct Grouper {
    groups: std::collections::BTreeMap<String, GroupStats>,
}

impl Grouper {
    pub(crate) fn add(&mut self, key: &[u8], value_len: usize) {
        let name = match key.iter().position(|b| *b == 0) {
            Some(end) if end > 0 && key[..end].iter().all(|b| b.is_ascii_graphic()) => {
                std::str::from_utf8(&key[..end]).unwrap_or("-")
            }
            _ => "-",
        };
        let g = self
            .groups
            .entry(name.to_string())
            .or_insert_with(|| GroupStats {
                name: name.to_string(),
                ..GroupStats::default()
            });
        g.keys += 1;
        g.key_bytes += key.len() as u64;
        g.value_bytes += value_len as u64;
    }

    pub(crate) fn finish(self, area: &str) -> AreaStats {
        let mut groups: Vec<GroupStats> = self.groups.into_values().collect();
        groups.sort_by(|a, b| {
            (b.key_bytes + b.value_bytes)
                .cmp(&(a.key_bytes + a.value_bytes))
                .then_with(|| a.name.cmp(&b.name))
        });
        AreaStats {
            area: area.to_string(),
            groups,
        }
    }
}

impl Store {
    /// What the store holds, by size: reads every key (embedded) or asks the catalog and
    /// groups the rows (PostgreSQL), so it takes as long as the store is large. Meant for
    /// a stopped service (`tollgate storage stats`) or a benchmark.
    pub async fn storage_stats(&self) -> Result<StorageStats, StorageError> {
        match &self.engine {
            Engine::Embedded(e) => e.storage_stats(),
            Engine::Postgres(pg) => Box::pin(pg.storage_stats()).await,
        }
    }
}

/// The bytes of the files under `path` (a file's own size; 0 for what cannot be read):
/// what a folder of the data directory occupies.
pub fn bytes_under(path: &std::path::Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| bytes_under(&e.path()))
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_group_by_their_name_and_the_largest_come_first() {
        let mut g = Grouper::default();
        g.add(b"order\0abc", 10);
        g.add(b"order\0abd", 20);
        g.add(b"customer\0x", 5);
        g.add(&7u64.to_be_bytes(), 3);
        let area = g.finish("records");
        assert_eq!(area.groups[0].name, "order");
        assert_eq!(area.groups[0].keys, 2);
        assert_eq!(area.groups[0].key_bytes, 18);
        assert_eq!(area.groups[0].value_bytes, 30);
        assert_eq!(area.keys(), 4);
        assert!(area.groups.iter().any(|g| g.name == "-" && g.keys == 1));
        let stats = StorageStats {
            engine: "embedded",
            areas: vec![area],
            ..StorageStats::default()
        };
        assert_eq!(stats.records_of("order"), 2);
        assert_eq!(stats.records_of("refund"), 0);
    }
}
