//! `[files]`: the limits of `/v1/files` and the lifetime of its links.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Uploaded files (`/v1/files`): their caps, the lifetime of their links and the purge of
/// uploads never finished. The bytes live under `<data_dir>/files/`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FilesSettings {
    /// The largest file, in bytes (a larger `size` is refused with 422).
    pub max_file_bytes: u64,
    /// Bytes one organization's files may hold together, uploads in progress included.
    pub max_organization_bytes: u64,
    /// Seconds a part upload URL works (`upload.parts[].expires_at`).
    pub upload_url_ttl_secs: u64,
    /// Seconds a download link works (Polar's presign TTL: 600).
    pub download_link_ttl_secs: u64,
    /// Seconds an upload may stay unfinished (no `/uploaded`) before it is purged: its
    /// parts deleted, its bytes given back to the organization's quota.
    pub pending_ttl_secs: u64,
    /// Seconds between purges of unfinished uploads.
    pub purge_interval_secs: u64,
}

impl Default for FilesSettings {
    fn default() -> Self {
        Self {
            max_file_bytes: 5 * 1024 * 1024 * 1024,
            max_organization_bytes: 50 * 1024 * 1024 * 1024,
            upload_url_ttl_secs: 3600,
            download_link_ttl_secs: 600,
            pending_ttl_secs: 24 * 3600,
            purge_interval_secs: 3600,
        }
    }
}

impl FilesSettings {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str| Err(ConfigError::Invalid(format!("files.{key}: must be > 0")));
        if self.max_file_bytes == 0 {
            return bad("max_file_bytes");
        }
        if self.max_organization_bytes == 0 {
            return bad("max_organization_bytes");
        }
        if self.upload_url_ttl_secs == 0 {
            return bad("upload_url_ttl_secs");
        }
        if self.download_link_ttl_secs == 0 {
            return bad("download_link_ttl_secs");
        }
        if self.pending_ttl_secs < self.upload_url_ttl_secs {
            return Err(ConfigError::Invalid(
                "files.pending_ttl_secs: must be at least files.upload_url_ttl_secs".into(),
            ));
        }
        if self.purge_interval_secs == 0 {
            return bad("purge_interval_secs");
        }
        Ok(())
    }
}
