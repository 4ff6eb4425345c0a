//! First start: an admin user and a personal access token with every scope, so the service
//! can be used without a browser. The token is written to `<data_dir>/bootstrap-token`
//! (mode 0600); only the file's path is logged.

use std::io::Write;
use std::path::{Path, PathBuf};

use tollgate_storage::{Batch, Expect, Store};

use crate::auth::service::{new_pat, new_user};
use crate::auth::{ScopeSet, TokenHasher};
use crate::domain::user::User;

pub const TOKEN_FILE: &str = "bootstrap-token";
const MARKER: &str = "bootstrap";
const SECRET: &str = "server_secret";

/// Waits for the store-wide bootstrap lock (at once on the embedded store): what keeps two
/// nodes starting on one database from generating two secrets or two admins.
pub async fn exclusive(store: &Store) -> anyhow::Result<tollgate_storage::JobLock> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(lock) = store.try_lock("bootstrap").await? {
            return Ok(lock);
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "another node held the bootstrap lock for a minute"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The token-hashing key: the configured one, else the one generated on first start.
pub async fn server_secret(store: &Store, configured: &str) -> anyhow::Result<Vec<u8>> {
    if !configured.is_empty() {
        return Ok(configured.as_bytes().to_vec());
    }
    if let Some(secret) = store.get_meta(SECRET).await? {
        return Ok(secret);
    }
    let secret = crate::auth::tokens::generate_secret();
    let mut batch = Batch::new();
    batch.put_meta(SECRET, secret.clone());
    store.commit_durable(&batch).await?;
    Ok(secret)
}

/// Creates the admin and its token once; returns the token file's path when it did.
pub async fn run(
    store: &Store,
    hasher: &TokenHasher,
    data_dir: &Path,
    admin_email: &str,
) -> anyhow::Result<Option<PathBuf>> {
    if store.get_meta(MARKER).await?.is_some() {
        return Ok(None);
    }
    let now = chrono::Utc::now();
    let user = match store.lookup_unique(&User::email_key(admin_email)).await? {
        Some(id) => store
            .get::<User>(&id)
            .await?
            .map(|u| u.value)
            .ok_or_else(|| anyhow::anyhow!("user index points at a missing user"))?,
        None => {
            let mut admin = new_user(admin_email, None, true, now);
            admin.email_verified = true;
            admin
        }
    };
    let (pat, token) = new_pat(
        hasher,
        user.id,
        ScopeSet::all_grantable(),
        "bootstrap",
        None,
        now,
    );
    // The file first: if we die before the commit, the next start simply does this again.
    let path = data_dir.join(TOKEN_FILE);
    write_private(&path, &token)?;
    let mut batch = Batch::new();
    batch.put(&user, Expect::Any)?;
    batch.put(&pat, Expect::Absent)?;
    batch.put_meta(MARKER, now.to_rfc3339().into_bytes());
    store.commit_durable(&batch).await?;
    tracing::info!(path = %path.display(), admin = %admin_email, "created the admin user; its access token is in this file");
    Ok(Some(path))
}

fn write_private(path: &Path, contents: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    Ok(())
}
