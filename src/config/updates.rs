//! `[updates]`: the update feeds' signed artifact links.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Update feeds (`/v1/updates/…`, docs/updates.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UpdatesSettings {
    /// Seconds an artifact link of a feed works (an updater may download a while after it
    /// read the feed; the key and the release are checked again at the download).
    pub link_ttl_secs: u64,
}

impl Default for UpdatesSettings {
    fn default() -> Self {
        Self {
            link_ttl_secs: 3600,
        }
    }
}

impl UpdatesSettings {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if self.link_ttl_secs == 0 {
            return Err(ConfigError::Invalid(
                "updates.link_ttl_secs: must be > 0".into(),
            ));
        }
        Ok(())
    }
}
