//! `[storage]`: the embedded store (the default) or PostgreSQL, and how a node on
//! PostgreSQL behaves when the database is slow to notify or cannot be reached.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use tollgate_storage::{DurabilityMode, StoreConfig};

use super::ConfigError;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageSettings {
    /// "embedded" (sled under `data_dir`, one node; the default) or "postgres" (one
    /// schema of a PostgreSQL database, shared by every node configured alike).
    pub backend: StorageBackend,
    pub data_dir: PathBuf,
    /// "process" (survives kill -9) or "power" (also fdatasync; survives power loss).
    /// Embedded only: PostgreSQL's commit is its own durability point.
    pub durability: Durability,
    pub cache_capacity_mb: u64,
    /// Whether a new embedded store compresses its data (zstd); an existing one keeps its
    /// setting until `tollgate compact`.
    pub compression: bool,
    /// zstd's level, 1 (fastest) to 22 (smallest).
    pub compression_level: i32,
    /// With `backend = "postgres"`: `postgres://user:password@host:port/database`. Kept
    /// in a type that prints it without the password.
    pub url: tollgate_storage::DatabaseUrl,
    /// With `backend = "postgres"`: the schema holding Tollgate's tables (created if
    /// missing). Lower-case letters, digits and `_`.
    pub schema: String,
    /// With `backend = "postgres"`: connections per node.
    pub pool_size: usize,
    /// With `backend = "postgres"`: the trust window of the change listener, in ms. A node
    /// answers a plain validation from its copy of a key only while its listener has
    /// heard, less than this ago, a ping it sent itself through PostgreSQL's notifications
    /// (so every change committed before was heard); a change to a key (revoke, PATCH,
    /// activation, rotation) answers this long after its commit. 0: no listener, every
    /// validation reads the key's revision. Use the same value on every node.
    pub notify_window_ms: u64,
    /// With `backend = "postgres"`: while no connection to the database can be made, a
    /// plain validation (batched mode) of a key this node holds is answered from its copy
    /// for at most this many seconds after the listener last proved its copies current;
    /// its count is written once the database is back. A change committed meanwhile on a
    /// database this node cannot reach (a revoke through another node) can go unseen here
    /// for that long. 0: every validation answers 503 while the database is unreachable.
    /// Needs the listener (`notify_window_ms` > 0).
    pub outage_window_secs: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StorageBackend {
    #[default]
    Embedded,
    Postgres,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    #[default]
    Process,
    Power,
}

impl Default for StorageSettings {
    fn default() -> Self {
        Self {
            backend: StorageBackend::Embedded,
            data_dir: PathBuf::from("./data"),
            durability: Durability::Process,
            cache_capacity_mb: 128,
            compression: true,
            compression_level: 3,
            url: Default::default(),
            schema: "tollgate".into(),
            pool_size: 16,
            notify_window_ms: 100,
            outage_window_secs: 60,
        }
    }
}

impl StorageSettings {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=22).contains(&self.compression_level) {
            return Err(ConfigError::Invalid(format!(
                "storage.compression_level: zstd's levels are 1 to 22, got {}",
                self.compression_level
            )));
        }
        if self.backend != StorageBackend::Postgres {
            return Ok(());
        }
        if !self.url.is_postgres() {
            return Err(ConfigError::Invalid(
                "storage.url: with storage.backend = \"postgres\", expected postgres://user:password@host:port/database".into(),
            ));
        }
        let schema_ok = !self.schema.is_empty()
            && self.schema.len() <= 63
            && self
                .schema
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
            && self
                .schema
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !schema_ok {
            return Err(ConfigError::Invalid(format!(
                "storage.schema: expected lower-case letters, digits and _, got {:?}",
                self.schema
            )));
        }
        if self.pool_size == 0 {
            return Err(ConfigError::Invalid(
                "storage.pool_size: must be > 0".into(),
            ));
        }
        if self.notify_window_ms > 10_000 {
            return Err(ConfigError::Invalid(
                "storage.notify_window_ms: at most 10000 (every change to a key waits this long)"
                    .into(),
            ));
        }
        if self.outage_window_secs > 3_600 {
            return Err(ConfigError::Invalid(
                "storage.outage_window_secs: at most 3600 (a node cut off from the database \
                 may miss a revoke for this long)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The engine these settings name.
    pub fn backend(&self) -> tollgate_storage::Backend {
        match self.backend {
            StorageBackend::Embedded => tollgate_storage::Backend::Embedded,
            StorageBackend::Postgres => tollgate_storage::Backend::Postgres {
                url: self.url.clone(),
                schema: self.schema.clone(),
                pool_size: self.pool_size,
            },
        }
    }

    pub fn store_config(&self) -> StoreConfig {
        StoreConfig {
            data_dir: self.data_dir.clone(),
            durability: match self.durability {
                Durability::Process => DurabilityMode::Process,
                Durability::Power => DurabilityMode::Power,
            },
            cache_capacity_mb: self.cache_capacity_mb,
            compression: self.compression,
            compression_level: self.compression_level,
            flush_deadline: tollgate_storage::DEFAULT_FLUSH_DEADLINE,
            backend: self.backend(),
        }
    }
}
