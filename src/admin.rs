//! Backups, restores and index checks (`tollgate backup`, `restore`, `check`).
//!
//! sled locks its directory, so a running service's store cannot be opened by another
//! process. A backup therefore asks the running service over HTTP:
//! `GET /v1/admin/backup`, allowed only to a personal access token of an admin user (the
//! bootstrap token), answers a consistent snapshot of the whole store
//! ([`tollgate_storage::Store::snapshot_to`]: commits pause while every tree is written, as
//! it is read, into a file of the data directory whose name is removed at once; then it
//! is streamed, and its disk freed when it is sent). No request names a path, so a token
//! cannot make the server write where it chooses. The CLI streams it to
//! `DIR/tollgate.snapshot.partial`, reads it through (whole, with its end marker), fsyncs
//! and renames it. Nothing holds the whole store in memory. `restore` and `check` open the
//! store directly: the service must be stopped.

use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use actix_web::{web, HttpResponse};
use anyhow::{bail, Context};
use tollgate_storage::{IndexReport, Record, Store};

use crate::domain::file::StoredFile;
use crate::domain::ids::FileId;
use crate::domain::scope::Scope;
use crate::domain::user::User;
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{AuthMethod, Requirement, SubjectKind};
use crate::extract::Auth;
use crate::files::backup::ManifestEntry;
use crate::state::AppState;

/// The file a backup directory holds.
pub const SNAPSHOT_FILE: &str = "tollgate.snapshot";

/// A user's personal access token; [`backup`] also requires the user to be an admin.
pub struct AdminToken;

impl Requirement for AdminToken {
    const SUBJECTS: &'static [SubjectKind] = &[SubjectKind::User];
    const SCOPES: &'static [Scope] = &[Scope::OrganizationsWrite];
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/admin/backup", { get => backup });
    crate::resource!(cfg, "/v1/admin/backup/files", { get => backup_files });
    crate::resource!(cfg, "/v1/admin/backup/files/{id}", { get => backup_file });
}

/// The directory of a backup that holds the uploaded files (`files/<org>/<id>`).
pub const FILES_DIR: &str = "files";

/// Refuses anyone but an admin user with a personal access token.
async fn admin_only(auth: &Auth<AdminToken>, state: &AppState) -> ApiResult<()> {
    let Some(user) = auth.subject().user() else {
        return Err(ApiError::NotPermitted(
            "Only an admin may take a backup.".into(),
        ));
    };
    let is_admin = state
        .store
        .get::<User>(&user.key())
        .await?
        .is_some_and(|u| u.value.is_admin);
    if !is_admin || auth.principal.method != AuthMethod::PersonalAccessToken {
        return Err(ApiError::NotPermitted(
            "A backup needs a personal access token of an admin user.".into(),
        ));
    }
    Ok(())
}

/// The uploaded files a backup copies (`tollgate backup`), as `ManifestEntry`s: none when
/// they live in an S3-compatible store (`[files.s3]`), which is its own durability.
async fn backup_files(
    auth: Auth<AdminToken>,
    state: web::Data<AppState>,
) -> ApiResult<web::Json<Vec<ManifestEntry>>> {
    admin_only(&auth, &state).await?;
    if state.settings.files.s3.is_some() {
        return Ok(web::Json(Vec::new()));
    }
    let files = state.store.scan::<StoredFile>().await?;
    Ok(web::Json(
        files
            .iter()
            .filter_map(|f| ManifestEntry::of(&f.value))
            .collect(),
    ))
}

/// The bytes of uploaded file `id`, streamed (`tollgate backup`).
async fn backup_file(
    auth: Auth<AdminToken>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    admin_only(&auth, &state).await?;
    let id: FileId = crate::extract::path_id("id", &id)?;
    let Some(f) = state.store.get::<StoredFile>(&id.key()).await? else {
        return Err(ApiError::NotFound("No such file.".into()));
    };
    let object = crate::files::ObjectRef {
        organization_id: f.value.organization_id,
        file_id: f.value.id,
        path: f.value.path.clone(),
        mime_type: f.value.mime_type.clone(),
    };
    let stream = state
        .files
        .backend
        .read(object)
        .await
        .map_err(|_| ApiError::NotFound("The file's bytes are missing.".into()))?;
    Ok(HttpResponse::Ok()
        .content_type("application/octet-stream")
        .insert_header(("Cache-Control", "no-store"))
        .no_chunking(f.value.size)
        .streaming(stream))
}

/// A consistent snapshot of the whole store, for `tollgate backup`: written as it is read
/// into a file of the data directory that no name leads to (removed as soon as it is
/// created: the disk it takes is freed when the answer is sent, or the process ends), then
/// streamed. Commits wait only while the file is written; memory holds a chunk at a time.
async fn backup(auth: Auth<AdminToken>, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    admin_only(&auth, &state).await?;
    let store = state.store.clone();
    let dir = state.settings.storage.data_dir.clone();
    let (file, records, bytes) = web::block(move || -> Result<_, ApiError> {
        let file = unnamed_file(&dir).map_err(ApiError::internal)?;
        let (mut file, records) = store.snapshot_to(std::io::BufWriter::new(file))?;
        file.flush().map_err(ApiError::internal)?;
        let mut file = file
            .into_inner()
            .map_err(|e| ApiError::internal(e.into_error()))?;
        use std::io::Seek;
        let bytes = file.stream_position().map_err(ApiError::internal)?;
        file.rewind().map_err(ApiError::internal)?;
        Ok((file, records, bytes))
    })
    .await
    .map_err(ApiError::internal)??;
    tracing::info!(records, bytes, "backup snapshot taken");
    Ok(HttpResponse::Ok()
        .content_type("application/octet-stream")
        .insert_header(("Cache-Control", "no-store"))
        .no_chunking(bytes)
        .streaming(crate::files::local::stream_file(tokio::fs::File::from_std(
            file,
        ))))
}

/// A new owner-only file in `dir`, read and written through the handle answered, its
/// name removed at once.
fn unnamed_file(dir: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(format!(".backup-{}.tmp", uuid::Uuid::new_v4()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// Creates `dir` (and its missing parents) owner-only (0700), or makes an existing one
/// so: the data directory and backups hold secrets. The mode is set explicitly, whatever
/// the umask.
pub fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot make {} owner-only", dir.display()))
}

/// `tollgate backup --to DIR`: fetches a snapshot from the running service at `url`.
pub async fn backup_to(url: &str, token: &str, dir: &Path) -> anyhow::Result<usize> {
    let file = dir.join(SNAPSHOT_FILE);
    if file.exists() {
        bail!(
            "{} already exists; choose an empty directory",
            file.display()
        );
    }
    create_private_dir(dir)?;
    // A connection for each request, none kept: checking and writing a large snapshot
    // outlasts the service's keep-alive, and a kept connection it closed meanwhile failed
    // the next request ("connection closed before message completed").
    // An hour at most: the service writes the snapshot before it answers, and a large
    // store's takes minutes to write and to send.
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(3600))
        .connect_timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(0)
        .build()?;
    let resp = client
        .get(format!("{}/v1/admin/backup", url.trim_end_matches('/')))
        .bearer_auth(token)
        .send()
        .await
        .with_context(|| format!("cannot reach the service at {url}"))?;
    let status = resp.status();
    if !status.is_success() {
        let body = resp.bytes().await.unwrap_or_default();
        bail!(
            "the service refused the backup ({status}): {}",
            String::from_utf8_lossy(&body)
        );
    }
    let partial = dir.join(format!("{SNAPSHOT_FILE}.partial"));
    let records = {
        // Owner-only (0600): a backup holds every record, secrets' hashes and webhook
        // signing secrets included. A partial file left by an earlier run is replaced.
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let _ = std::fs::remove_file(&partial);
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&partial)
            .with_context(|| format!("cannot write {}", partial.display()))?;
        // The mode above is filtered by the umask; this is not.
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        // Streamed to the file as it comes, a chunk in memory at a time.
        let mut out = std::io::BufWriter::new(f);
        let mut resp = resp;
        while let Some(chunk) = resp.chunk().await.context("reading the snapshot")? {
            out.write_all(&chunk)?;
        }
        let mut f = out.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        use std::io::Seek;
        f.rewind()?;
        snapshot_records(f).context("checking the snapshot")?
    };
    std::fs::rename(&partial, &file)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    backup_files_to(&client, url, token, dir).await?;
    Ok(records)
}

/// Reads a snapshot file through, entry by entry: whether it is whole (its end marker and
/// total), and how many records it holds.
fn snapshot_records(f: std::fs::File) -> anyhow::Result<usize> {
    let mut records = 0usize;
    let mut in_records = false;
    for item in tollgate_storage::SnapshotReader::new(std::io::BufReader::new(f))? {
        match item? {
            tollgate_storage::SnapshotItem::Tree(name) => in_records = name == "records",
            tollgate_storage::SnapshotItem::Entry(..) => records += usize::from(in_records),
        }
    }
    Ok(records)
}

/// Copies every uploaded file into `dir/files/<org>/<id>` (streamed, SHA-256 verified
/// against the service's manifest, each fsynced before its rename); answers how many.
/// Taken after the snapshot: a file deleted in between is skipped (`restore` then reports
/// it), one uploaded in between is copied but not restored.
pub async fn backup_files_to(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    dir: &Path,
) -> anyhow::Result<usize> {
    use sha2::{Digest, Sha256};
    let base = url.trim_end_matches('/');
    let resp = client
        .get(format!("{base}/v1/admin/backup/files"))
        .bearer_auth(token)
        .send()
        .await
        .context("listing the files")?;
    if !resp.status().is_success() {
        bail!("the service refused the list of files ({})", resp.status());
    }
    let manifest: Vec<ManifestEntry> = resp.json().await.context("reading the list of files")?;
    if manifest.is_empty() {
        // None uploaded, or all in an S3-compatible store: the backup holds no file bytes
        // (and `restore` then restores none).
        return Ok(0);
    }
    let files = dir.join(FILES_DIR);
    create_private_dir(&files)?;
    let mut copied = 0;
    for entry in &manifest {
        let mut resp = client
            .get(format!("{base}/v1/admin/backup/files/{}", entry.id))
            .bearer_auth(token)
            .send()
            .await
            .with_context(|| format!("fetching file {}", entry.id))?;
        if resp.status() == reqwest::StatusCode::NOT_FOUND {
            continue; // deleted since the list
        }
        if !resp.status().is_success() {
            bail!("the service refused file {} ({})", entry.id, resp.status());
        }
        let target = files.join(entry.relative());
        let org_dir = target.parent().map(Path::to_path_buf).unwrap_or_default();
        create_private_dir(&org_dir)?;
        let partial = target.with_extension("partial");
        let mut out = {
            use std::os::unix::fs::OpenOptionsExt;
            let _ = std::fs::remove_file(&partial);
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&partial)
                .with_context(|| format!("cannot write {}", partial.display()))?
        };
        let mut sha = Sha256::new();
        let mut len = 0u64;
        while let Some(chunk) = resp.chunk().await.context("reading a file")? {
            sha.update(&chunk);
            out.write_all(&chunk)?;
            len += chunk.len() as u64;
        }
        out.sync_all()?;
        drop(out);
        if len != entry.size || crate::domain::file::hex(&sha.finalize()) != entry.sha256 {
            let _ = std::fs::remove_file(&partial);
            bail!(
                "file {}: the bytes received are not the recorded ones",
                entry.id
            );
        }
        std::fs::rename(&partial, &target)?;
        std::fs::File::open(&org_dir)?.sync_all()?;
        copied += 1;
    }
    Ok(copied)
}

/// Puts the uploaded files of the restored store back from `dir/files/` into
/// `<data_dir>/files/objects/`, each verified against its record's size and SHA-256;
/// answers (restored, missing from the backup).
pub async fn restore_files(
    store: &Store,
    dir: &Path,
    data_dir: &Path,
) -> anyhow::Result<(usize, Vec<String>)> {
    let mut restored = 0;
    let mut missing = Vec::new();
    if !dir.join(FILES_DIR).is_dir() {
        // A backup of a service whose files live in an S3-compatible store (or that had
        // none): their bytes stay in the bucket.
        tracing::info!("the backup holds no uploaded files' bytes: none restored");
        return Ok((0, missing));
    }
    for f in store.scan::<StoredFile>().await? {
        let Some(entry) = ManifestEntry::of(&f.value) else {
            continue;
        };
        let source = dir.join(FILES_DIR).join(entry.relative());
        let Ok(from) = std::fs::File::open(&source) else {
            missing.push(entry.id.clone());
            continue;
        };
        let target = data_dir.join("files/objects").join(entry.relative());
        crate::files::backup::copy_verified(from, &target, &entry)
            .with_context(|| format!("restoring {}", source.display()))?;
        restored += 1;
    }
    Ok((restored, missing))
}

/// `tollgate check` of the uploaded files with these settings: with `[files.s3]` the
/// objects are in the bucket, which `check` does not read (nothing reported); else as
/// [`check_files`].
pub async fn check_files_with(
    store: &Store,
    settings: &crate::config::Settings,
) -> anyhow::Result<crate::files::backup::FilesReport> {
    if settings.files.s3.is_some() {
        tracing::info!("files: the objects are in the S3-compatible store; not checked");
        return Ok(crate::files::backup::FilesReport::default());
    }
    check_files(store, &settings.storage.data_dir).await
}

/// `tollgate check` of the uploaded files: each uploaded file's object present with its
/// size, and no object or upload that no record names.
pub async fn check_files(
    store: &Store,
    data_dir: &Path,
) -> anyhow::Result<crate::files::backup::FilesReport> {
    let files: Vec<StoredFile> = store
        .scan::<StoredFile>()
        .await?
        .into_iter()
        .map(|s| s.value)
        .collect();
    Ok(crate::files::backup::check(
        &data_dir.join("files"),
        &files,
    )?)
}

/// `tollgate restore --from DIR`: loads a backup into an empty (or missing) data dir.
pub async fn restore_from(
    dir: &Path,
    config: &tollgate_storage::StoreConfig,
) -> anyhow::Result<usize> {
    let file = dir.join(SNAPSHOT_FILE);
    let open =
        || std::fs::File::open(&file).with_context(|| format!("cannot open {}", file.display()));
    // Read through once before anything is written: a damaged file is refused whole.
    let records = snapshot_records(open()?).context("checking the snapshot")?;
    let data = &config.data_dir;
    if data.exists()
        && std::fs::read_dir(data)
            .with_context(|| format!("cannot read {}", data.display()))?
            .next()
            .is_some()
    {
        bail!(
            "the data directory {} is not empty; restore only into an empty one",
            data.display()
        );
    }
    let store = Store::open(config).context("opening the new store")?;
    store
        .restore_from_reader(std::io::BufReader::new(open()?))
        .await?;
    let (files, missing) = restore_files(&store, dir, data).await?;
    if files > 0 {
        tracing::info!(files, "uploaded files restored");
    }
    if !missing.is_empty() {
        // Deleted between the snapshot and the copy of the files: `tollgate check` lists them.
        tracing::warn!(?missing, "files of the snapshot missing from the backup");
    }
    Ok(records)
}

/// What `tollgate check` found for one record type.
#[derive(Debug)]
pub struct CheckLine {
    pub collection: &'static str,
    pub report: IndexReport,
    pub repaired: bool,
}

async fn check_one<R: Record>(store: &Store, repair: bool) -> anyhow::Result<CheckLine> {
    let report = store.verify_indexes::<R>().await?;
    let repaired = repair && !report.is_clean();
    if repaired {
        store.rebuild_indexes::<R>().await?;
        let again = store.verify_indexes::<R>().await?;
        if !again.is_clean() {
            bail!(
                "the indexes of {} are still wrong after a rebuild",
                R::COLLECTION
            );
        }
    }
    Ok(CheckLine {
        collection: R::COLLECTION,
        report,
        repaired,
    })
}

/// Something done once per record type the service stores ([`each_record_type`]).
pub trait RecordTypes {
    fn visit<R: Record>(&mut self);
}

/// Calls `v.visit::<R>()` for every record type the service stores: the one list that
/// whole-store checks and copies go through.
pub fn each_record_type(v: &mut impl RecordTypes) {
    use crate::domain::*;
    use tollgate_actors::{checkout, license_key, subscription};
    v.visit::<organization::Organization>();
    v.visit::<membership::Membership>();
    v.visit::<user::User>();
    v.visit::<pat::PersonalAccessToken>();
    v.visit::<organization_access_token::OrganizationAccessToken>();
    v.visit::<benefit::Benefit>();
    v.visit::<product::Product>();
    v.visit::<discount::Discount>();
    v.visit::<customer::Customer>();
    v.visit::<customer_session::CustomerSession>();
    v.visit::<customer_session::CustomerSessionCode>();
    v.visit::<custom_field::CustomField>();
    v.visit::<meter::Meter>();
    v.visit::<file::StoredFile>();
    v.visit::<file::FileUsage>();
    v.visit::<download::DownloadStat>();
    v.visit::<download::FileDownloads>();
    v.visit::<order::Order>();
    v.visit::<oauth2::OAuth2Client>();
    v.visit::<oauth2::OAuth2Grant>();
    v.visit::<oauth2::AuthorizationCode>();
    v.visit::<oauth2::SpentAuthorizationCode>();
    v.visit::<oauth2::OAuth2Token>();
    v.visit::<oauth2::SigningKey>();
    v.visit::<oauth2::BrowserSession>();
    v.visit::<checkout::Checkout>();
    v.visit::<checkout_link::CheckoutLink>();
    v.visit::<subscription::Subscription>();
    v.visit::<subscription::KeysPaidUntil>();
    v.visit::<license_key::LicenseKey>();
    v.visit::<webhook::WebhookEndpoint>();
    v.visit::<webhook::WebhookEvent>();
    v.visit::<webhook::WebhookPayload>();
    v.visit::<crate::app::event_log::LoggedEvent>();
    v.visit::<crate::app::event_log::EventLogHead>();
    v.visit::<crate::app::event_log::CustomerStateDigest>();
    v.visit::<webhook::WebhookDelivery>();
    v.visit::<mail::MailMessage>();
    v.visit::<refund::Refund>();
    v.visit::<dispute::Dispute>();
    v.visit::<crate::domain::invoice::Invoice>();
    v.visit::<crate::domain::invoice::DocumentSequence>();
    v.visit::<crate::domain::invoice::DocumentDue>();
    v.visit::<crate::domain::tax_transaction::TaxTransaction>();
    v.visit::<crate::domain::tax_transaction::TaxRecordDue>();
    v.visit::<crate::domain::tax_id_check::TaxIdCheck>();
    v.visit::<stats::SalesDay>();
    v.visit::<stats::SalesTotals>();
    v.visit::<stats::ValidationDay>();
}

/// Verifies (and with `repair`, rebuilds) the indexes, counters and unique keys of every
/// record type against its records, on either engine.
pub async fn check(store: &Store, repair: bool) -> anyhow::Result<Vec<CheckLine>> {
    type Check = for<'a> fn(
        &'a Store,
        bool,
    )
        -> Pin<Box<dyn Future<Output = anyhow::Result<CheckLine>> + Send + 'a>>;
    fn one<R: Record>(
        store: &Store,
        repair: bool,
    ) -> Pin<Box<dyn Future<Output = anyhow::Result<CheckLine>> + Send + '_>> {
        Box::pin(check_one::<R>(store, repair))
    }
    struct Checks(Vec<Check>);
    impl RecordTypes for Checks {
        fn visit<R: Record>(&mut self) {
            self.0.push(one::<R>);
        }
    }
    let mut checks = Checks(Vec::new());
    each_record_type(&mut checks);
    let mut lines = Vec::with_capacity(checks.0.len());
    for check in checks.0 {
        lines.push(check(store, repair).await?);
    }
    Ok(lines)
}

/// `tollgate storage copy --to postgres://…`: copies this (stopped) embedded store into an
/// empty PostgreSQL schema in one transaction, revisions kept, then verifies every record
/// type's index entries, counters and unique keys there. Returns the number of records and
/// the verification's lines.
pub async fn copy_to_postgres(
    store: &Store,
    url: &str,
    schema: &str,
) -> anyhow::Result<(usize, Vec<CheckLine>)> {
    let snapshot = store.snapshot().context("reading the embedded store")?;
    let pg = Store::postgres(url, schema, 2)
        .await
        .with_context(|| format!("cannot reach the database (schema {schema})"))?;
    pg.restore(&snapshot)
        .await
        .with_context(|| format!("copying into schema {schema}"))?;
    // License keys keep their counters in tally rows there (from the copied records).
    pg.ensure_tallies::<tollgate_actors::license_key::LicenseKey>()
        .await
        .with_context(|| format!("giving the license keys their tally rows (schema {schema})"))?;
    let lines = check(&pg, false).await?;
    Ok((snapshot.record_count(), lines))
}

/// The text `tollgate check` prints, and whether the store is (now) clean.
pub fn describe(lines: &[CheckLine]) -> (String, bool) {
    let mut out = String::new();
    let mut clean = true;
    for l in lines {
        let r = &l.report;
        if r.is_clean() {
            out.push_str(&format!("{}: ok\n", l.collection));
            continue;
        }
        if !l.repaired {
            clean = false;
        }
        out.push_str(&format!(
            "{}: {} missing, {} extra index entries, {} wrong counters{}\n",
            l.collection,
            r.missing.len(),
            r.extra.len(),
            r.wrong_counters.len(),
            if l.repaired { " (repaired)" } else { "" }
        ));
    }
    (out, clean)
}

/// Where the CLI finds the running service and the admin token.
pub fn default_url(settings: &crate::config::Settings) -> String {
    if !settings.server.public_url.is_empty() {
        return settings.server.public_url.clone();
    }
    format!("http://{}", settings.server.bind)
}

pub fn default_token_file(settings: &crate::config::Settings) -> PathBuf {
    settings.storage.data_dir.join(crate::bootstrap::TOKEN_FILE)
}
