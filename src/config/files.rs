//! `[files]`: the limits of `/v1/files` and the lifetime of its links.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Uploaded files (`/v1/files`): their caps, the lifetime of their links and the purge of
/// uploads never finished. The bytes live under `<data_dir>/files/`, or in `[files.s3]`.
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
    /// The S3-compatible store of the bytes; unset: the data directory.
    pub s3: Option<S3Settings>,
    /// Downloads through the portal's links one customer may make per window (0: no
    /// limit; `[rate_limits] enabled = false` turns it off too).
    pub download_limit_per_customer: u32,
    /// Downloads through the portal's links one client address may make per window.
    pub download_limit_per_address: u32,
    /// The window of the two download limits, in seconds.
    pub download_limit_window_secs: u64,
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
            s3: None,
            download_limit_per_customer: 50,
            download_limit_per_address: 20,
            download_limit_window_secs: 3600,
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
        if self.download_limit_window_secs == 0 {
            return bad("download_limit_window_secs");
        }
        if let Some(s3) = &self.s3 {
            s3.validate()?;
        }
        Ok(())
    }
}

/// `[files.s3]`: an S3-compatible object store holding the files' bytes (several nodes
/// share it); without it they live under `<data_dir>/files/` on the node that took them.
/// The keys come from the file or, better, the environment
/// (`TOLLGATE__FILES__S3__ACCESS_KEY_ID`, `TOLLGATE__FILES__S3__SECRET_ACCESS_KEY`).
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct S3Settings {
    /// The store's URL, e.g. `https://s3.eu-central-1.amazonaws.com` or
    /// `http://127.0.0.1:9000`.
    pub endpoint: String,
    pub region: String,
    pub bucket: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    /// `endpoint/bucket/key` (true) or `bucket.endpoint/key` (false).
    pub path_style: bool,
    /// Whether a plain `http://` endpoint is accepted (a local or test store).
    pub allow_http: bool,
}

impl Default for S3Settings {
    fn default() -> Self {
        Self {
            endpoint: String::new(),
            region: "us-east-1".into(),
            bucket: String::new(),
            access_key_id: String::new(),
            secret_access_key: String::new(),
            path_style: true,
            allow_http: false,
        }
    }
}

/// Keys never reach a log line, not even through `{:?}` of the settings.
impl std::fmt::Debug for S3Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = |s: &str| {
            if s.is_empty() {
                "<unset>"
            } else {
                "<redacted>"
            }
        };
        f.debug_struct("S3Settings")
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("bucket", &self.bucket)
            .field("access_key_id", &set(&self.access_key_id))
            .field("secret_access_key", &set(&self.secret_access_key))
            .field("path_style", &self.path_style)
            .field("allow_http", &self.allow_http)
            .finish()
    }
}

impl S3Settings {
    /// A store that cannot work stops start-up with a message naming the key.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let bad =
            |key: &str, why: String| Err(ConfigError::Invalid(format!("files.s3.{key}: {why}")));
        match url::Url::parse(self.endpoint.trim()) {
            Ok(u) if u.host().is_none() => {
                return bad("endpoint", format!("{:?} names no host", self.endpoint))
            }
            Ok(u) if u.scheme() == "https" => {}
            Ok(u) if u.scheme() == "http" && self.allow_http => {}
            Ok(u) if u.scheme() == "http" => {
                return bad(
                    "endpoint",
                    "a plain http:// endpoint needs files.s3.allow_http = true".into(),
                )
            }
            Ok(u) => return bad("endpoint", format!("unsupported scheme {:?}", u.scheme())),
            Err(e) => return bad("endpoint", format!("{:?}: {e}", self.endpoint)),
        }
        if self.region.trim().is_empty() {
            return bad("region", "must not be empty".into());
        }
        // S3's bucket names: 3–63 lowercase letters, digits, dots and hyphens.
        let b = &self.bucket;
        if !(3..=63).contains(&b.len())
            || !b
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'.' || c == b'-')
        {
            return bad(
                "bucket",
                format!("{b:?} is not a bucket name (3–63 of a-z, 0-9, '.', '-')"),
            );
        }
        if self.access_key_id.trim().is_empty() {
            return bad("access_key_id", "must be set".into());
        }
        if self.secret_access_key.is_empty() {
            return bad("secret_access_key", "must be set".into());
        }
        Ok(())
    }
}
