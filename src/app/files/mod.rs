//! `/v1/files`: create a file with its upload plan, take its parts (local backend), mark
//! it uploaded (assembled, hashed and checked), list, rename and delete it; and the purge
//! of uploads never finished.
//!
//! Every change of a file's bytes moves the organization's [`FileUsage`] in the same write
//! (compare-and-swap), so concurrent uploads cannot pass `files.max_organization_bytes`
//! together. The declared size is reserved at creation and given back when the upload is
//! purged, refused or the file deleted.

mod parts;

pub use parts::{receive_part, PartQuery};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::Duration;
use tollgate_storage::{Batch, Expect, StorageError, Stored};

use crate::api::files::{FileRead, FileUpload, FileUploadMultipart, FileUploadPart};
use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::page_of;
use crate::app::paging::ListParams;
use crate::auth::Subject;
use crate::domain::file::{
    check_plan, FileChange, FileService, FileState, FileUsage, NewFile, PartPlan, StoredFile,
    UploadCompleted, FILE_OF_ORG, FILE_PENDING, MIN_PART_BYTES,
};
use crate::domain::ids::{FileId, OrganizationId};
use crate::error::AppError;
use crate::field;
use crate::files::{CompleteError, Delivery, DownloadAs, Expected, ObjectRef};
use crate::state::AppState;

/// Attempts of a usage compare-and-swap before giving up (busy).
const ATTEMPTS: usize = 16;

/// The object `f`'s bytes are stored as.
pub fn object_of(f: &StoredFile) -> ObjectRef {
    ObjectRef {
        organization_id: f.organization_id,
        file_id: f.id,
        path: f.path.clone(),
        mime_type: f.mime_type.clone(),
    }
}

fn sha256_of(loc: Vec<crate::error::Step>, given: &str) -> Result<[u8; 32], AppError> {
    STANDARD
        .decode(given)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
        .ok_or_else(|| AppError::invalid(loc, "Not a base64-encoded SHA-256 digest.", given))
}

fn non_negative(loc: Vec<crate::error::Step>, v: i64) -> Result<u64, AppError> {
    u64::try_from(v)
        .map_err(|_| AppError::invalid(loc, "Input should be greater than or equal to 0", v))
}

/// The file `id` if `subject` reaches its organization, else 404.
async fn file_for(
    state: &AppState,
    subject: Subject,
    id: FileId,
) -> Result<Stored<StoredFile>, AppError> {
    match state.store.get::<StoredFile>(&id.key()).await? {
        Some(f) if can_access(state, subject, f.value.organization_id).await? => Ok(f),
        _ => Err(AppError::not_found()),
    }
}

/// The upload plan of a create body, checked.
fn plan_of(body: &NewFile, size: u64) -> Result<Vec<PartPlan>, AppError> {
    let mut plan = Vec::with_capacity(body.parts.len());
    for (i, p) in body.parts.iter().enumerate() {
        let at = |f: &str| field!["upload", "parts", i, f];
        let number = u32::try_from(p.number)
            .map_err(|_| AppError::invalid(at("number"), "Not a part number.", p.number))?;
        let sha256 = match &p.checksum_sha256_base64 {
            Some(s) => Some(sha256_of(at("checksum_sha256_base64"), s)?),
            None => None,
        };
        plan.push(PartPlan {
            number,
            start: non_negative(at("chunk_start"), p.chunk_start)?,
            end: non_negative(at("chunk_end"), p.chunk_end)?,
            sha256,
        });
    }
    check_plan(size, &plan, MIN_PART_BYTES).map_err(|e| {
        let loc = match e.part {
            Some(i) => field!["upload", "parts", i, e.field],
            None => field!["upload", e.field],
        };
        AppError::invalid(loc, e.message, crate::error::Given::none())
    })?;
    Ok(plan)
}

/// Writes `batch` with the organization's usage moved by `delta` bytes (refused past
/// `cap`), retrying when another writer moved it first. `batch` builds the rest of the
/// write (the file's own change) each attempt.
async fn with_usage(
    state: &AppState,
    org: OrganizationId,
    delta: i64,
    cap: Option<u64>,
    mut batch: impl FnMut() -> Result<Batch, AppError>,
) -> Result<(), AppError> {
    for _ in 0..ATTEMPTS {
        let current = state.store.get::<FileUsage>(&org.key()).await?;
        let bytes = current.as_ref().map_or(0, |u| u.value.bytes);
        let next = bytes.saturating_add_signed(delta);
        if let Some(cap) = cap {
            if delta > 0 && next > cap {
                return Err(AppError::invalid(
                    field!["size"],
                    format!(
                        "The organization's files would hold {next} bytes, over its quota of {cap}."
                    ),
                    delta,
                ));
            }
        }
        let mut b = batch()?;
        let usage = FileUsage {
            organization_id: org,
            bytes: next,
        };
        let expect = current.map_or(Expect::Absent, |u| Expect::Rev(u.rev));
        b.put(&usage, expect)?;
        match state.store.commit_durable(&b).await {
            Ok(_) => return Ok(()),
            Err(StorageError::Conflict { collection, .. })
                if collection == <FileUsage as tollgate_storage::Record>::COLLECTION => {}
            Err(StorageError::Conflict { .. }) => return Err(AppError::not_found()),
            Err(e) => return Err(e.into()),
        }
    }
    Err(AppError::unavailable())
}

fn upload_view(state: &AppState, f: &StoredFile) -> Result<FileUpload, AppError> {
    let mut parts = Vec::new();
    let mut upload_id = String::new();
    if let FileState::Pending {
        upload_id: id,
        parts: plan,
        ..
    } = &f.state
    {
        upload_id = id.clone();
        let expires_at =
            state.now() + Duration::seconds(state.settings.files.upload_url_ttl_secs as i64);
        let object = object_of(f);
        for p in plan {
            let url = state
                .files
                .backend
                .part_url(&object, id, p, expires_at)
                .map_err(|e| AppError::internal(format!("file {}: part URL: {e}", f.id)))?;
            parts.push(FileUploadPart {
                number: p.number,
                chunk_start: p.start,
                chunk_end: p.end,
                checksum_sha256_base64: p.sha256.map(|d| STANDARD.encode(d)),
                url: url.url,
                // Whole seconds: the URL's expiry is.
                expires_at: chrono::DateTime::from_timestamp(expires_at.timestamp(), 0)
                    .unwrap_or(expires_at),
                headers: url.headers.into_iter().collect(),
            });
        }
    }
    Ok(FileUpload {
        file: f.into(),
        upload: FileUploadMultipart {
            id: upload_id,
            path: f.path.clone(),
            parts,
        },
    })
}

/// `POST /v1/files/`: the file, pending, with one signed URL per part.
pub async fn create(
    state: &AppState,
    subject: Subject,
    body: NewFile,
) -> Result<FileUpload, AppError> {
    let settings = &state.settings.files;
    let service = FileService::parse(&body.service).ok_or_else(|| {
        AppError::invalid(
            field!["service"],
            "Input tag does not match any of the expected tags: 'downloadable', 'product_media', 'organization_avatar'",
            &body.service,
        )
    })?;
    let size = non_negative(field!["size"], body.size)?;
    let cap = service
        .max_size()
        .map_or(settings.max_file_bytes, |m| m.min(settings.max_file_bytes));
    if size > cap {
        return Err(AppError::invalid(
            field!["size"],
            format!("Input should be less than or equal to {cap}"),
            body.size,
        ));
    }
    if !service.accepts_mime(&body.mime_type) {
        return Err(AppError::invalid(
            field!["mime_type"],
            "String should match pattern '^image\\/(jpeg|png|gif|webp|svg\\+xml)$'",
            &body.mime_type,
        ));
    }
    if body.name.trim().is_empty() {
        return Err(AppError::invalid(
            field!["name"],
            "String should have at least 1 character",
            &body.name,
        ));
    }
    let declared_sha256 = match &body.checksum_sha256_base64 {
        Some(s) => Some(sha256_of(field!["checksum_sha256_base64"], s)?),
        None => None,
    };
    let plan = plan_of(&body, size)?;
    let organization_id = organization_for_create(state, subject, body.organization_id).await?;
    let id = FileId::new();
    let path = StoredFile::object_path(service, organization_id, id, &body.name);
    let object = ObjectRef {
        organization_id,
        file_id: id,
        path: path.clone(),
        mime_type: body.mime_type.clone(),
    };
    let upload_id = state
        .files
        .backend
        .create_upload(object)
        .await
        .map_err(AppError::internal)?;
    let now = state.now();
    let file = StoredFile {
        id,
        organization_id,
        service,
        name: body.name.clone(),
        path,
        mime_type: body.mime_type.clone(),
        size,
        version: body.version.clone().filter(|v| !v.is_empty()),
        declared_sha256,
        created_at: now,
        modified_at: None,
        state: FileState::Pending {
            upload_id,
            parts: plan,
            expires_at: now + Duration::seconds(settings.pending_ttl_secs as i64),
        },
    };
    with_usage(
        state,
        organization_id,
        i64::try_from(size).unwrap_or(i64::MAX),
        Some(settings.max_organization_bytes),
        || {
            let mut b = Batch::new();
            b.put(&file, Expect::Absent)?;
            Ok(b)
        },
    )
    .await?;
    upload_view(state, &file)
}

/// Removes file `id` (at revision `rev`) and gives its bytes back to the quota; then its
/// object and parts.
async fn remove(state: &AppState, f: &Stored<StoredFile>) -> Result<(), AppError> {
    let file = &f.value;
    let delta = -i64::try_from(file.size).unwrap_or(i64::MAX);
    with_usage(state, file.organization_id, delta, None, || {
        let mut b = Batch::new();
        b.delete::<StoredFile>(&file.id.key(), Expect::Rev(f.rev));
        Ok(b)
    })
    .await?;
    let backend = &state.files.backend;
    let upload_id = match &file.state {
        FileState::Pending { upload_id, .. } => upload_id.clone(),
        FileState::Uploaded { .. } => String::new(),
    };
    // Leftovers of a crash here are orphans `tollgate check` reports.
    if let Err(e) = backend.abort(object_of(file), upload_id).await {
        tracing::warn!(file = %file.id, error = %e, "files: parts not removed");
    }
    if let Err(e) = backend.delete(object_of(file)).await {
        tracing::warn!(file = %file.id, error = %e, "files: object not removed");
    }
    Ok(())
}

/// `POST /v1/files/{id}/uploaded`: assembles the parts, checks them and keeps the file.
pub async fn uploaded(
    state: &AppState,
    subject: Subject,
    id: FileId,
    body: UploadCompleted,
) -> Result<FileRead, AppError> {
    let stored = file_for(state, subject, id).await?;
    let file = &stored.value;
    let (upload_id, plan) = match &file.state {
        // Already done (a retry whose answer was lost): the same answer.
        FileState::Uploaded { .. } if body.path == file.path => return Ok(file.into()),
        FileState::Uploaded { .. } => {
            return Err(AppError::invalid(
                field!["path"],
                "Not this file's upload path.",
                &body.path,
            ))
        }
        FileState::Pending {
            upload_id, parts, ..
        } => (upload_id.clone(), parts.clone()),
    };
    if body.upload_id != upload_id {
        return Err(AppError::invalid(
            field!["id"],
            "Not this file's upload id.",
            &body.upload_id,
        ));
    }
    if body.path != file.path {
        return Err(AppError::invalid(
            field!["path"],
            "Not this file's upload path.",
            &body.path,
        ));
    }
    if body.parts.len() != plan.len() {
        return Err(AppError::invalid(
            field!["parts"],
            format!(
                "The upload has {} parts; every one must be listed, in order.",
                plan.len()
            ),
            crate::error::Given::none(),
        ));
    }
    for (i, (given, planned)) in body.parts.iter().zip(&plan).enumerate() {
        if given.number != i64::from(planned.number) {
            return Err(AppError::invalid(
                field!["parts", i, "number"],
                format!("Expected part {}.", planned.number),
                given.number,
            ));
        }
    }
    let expected = Expected {
        sha256: file.declared_sha256,
        etags: body
            .parts
            .iter()
            .map(|p| p.checksum_etag.trim().to_string())
            .collect(),
    };
    let outcome = state
        .files
        .backend
        .complete(object_of(file), upload_id.clone(), plan, expected)
        .await;
    let assembled = match outcome {
        Ok(a) => a,
        Err(CompleteError::MissingPart(n)) => {
            let i = n.saturating_sub(1) as usize;
            return Err(AppError::invalid(
                field!["parts", i],
                format!("Part {n} was not uploaded (or not in full)."),
                crate::error::Given::none(),
            ));
        }
        Err(CompleteError::WrongEtag(i)) => {
            return Err(AppError::invalid(
                field!["parts", i, "checksum_etag"],
                "Not the ETag of the uploaded part.",
                &body.parts[i].checksum_etag,
            ));
        }
        Err(CompleteError::Digest) => {
            remove(state, &stored).await?;
            return Err(AppError::invalid(
                field![],
                "The uploaded bytes' SHA-256 differs from the checksum_sha256_base64 given at creation: nothing was kept.",
                crate::error::Given::none(),
            ));
        }
        Err(CompleteError::Io(e)) => return Err(AppError::internal(e)),
    };
    let now = state.now();
    let done = state
        .store
        .update::<StoredFile, AppError>(&id.key(), async |current| match &current.state {
            FileState::Pending { upload_id: u, .. } if *u == upload_id => {
                let mut f = current.clone();
                f.state = FileState::Uploaded {
                    etag: assembled.etag.clone(),
                    last_modified_at: now,
                    sha256: assembled.sha256,
                    sha512: assembled.sha512.clone(),
                };
                f.modified_at = Some(now);
                Ok(Some(f))
            }
            FileState::Uploaded { .. } => Ok(None),
            FileState::Pending { .. } => Err(AppError::not_found()),
        })
        .await?;
    match done {
        Some(f) => Ok((&f).into()),
        // Uploaded by a concurrent call, or deleted meanwhile.
        None => match state.store.get::<StoredFile>(&id.key()).await? {
            Some(f) => Ok((&f.value).into()),
            None => {
                let _ = state.files.backend.delete(object_of(file)).await;
                Err(AppError::not_found())
            }
        },
    }
}

/// The filters of `GET /v1/files/`.
#[derive(Debug, Clone, Default)]
pub struct FileFilter {
    pub organization_id: Vec<OrganizationId>,
    pub ids: Vec<FileId>,
}

/// `GET /v1/files/`: uploaded files, newest first.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &FileFilter,
    params: ListParams,
) -> Result<(Vec<StoredFile>, u64), AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    let ids = &filter.ids;
    let by_id = |f: &StoredFile| ids.contains(&f.id);
    let only: Option<&dyn Fn(&StoredFile) -> bool> =
        if ids.is_empty() { None } else { Some(&by_id) };
    page_of::<StoredFile>(state, FILE_OF_ORG, &tenants, true, params, only).await
}

/// `PATCH /v1/files/{id}`: a new name or version (empty strings change nothing).
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: FileId,
    patch: FileChange,
) -> Result<FileRead, AppError> {
    file_for(state, subject, id).await?;
    let now = state.now();
    let name = patch.name.filter(|n| !n.is_empty());
    let version = patch.version.filter(|v| !v.is_empty());
    let updated = state
        .store
        .update::<StoredFile, AppError>(&id.key(), async |current| {
            let mut f = current.clone();
            if let Some(n) = &name {
                f.name = n.clone();
            }
            if let Some(v) = &version {
                f.version = Some(v.clone());
            }
            if f == *current {
                return Ok(None);
            }
            f.modified_at = Some(now);
            Ok(Some(f))
        })
        .await?;
    match updated {
        Some(f) => Ok((&f).into()),
        None => match state.store.get::<StoredFile>(&id.key()).await? {
            Some(f) => Ok((&f.value).into()),
            None => Err(AppError::not_found()),
        },
    }
}

/// `DELETE /v1/files/{id}`: the record, its bytes and its share of the quota.
pub async fn delete(state: &AppState, subject: Subject, id: FileId) -> Result<(), AppError> {
    // The file may change under the delete (its upload completing): read it again.
    for _ in 0..ATTEMPTS {
        let f = file_for(state, subject, id).await?;
        match remove(state, &f).await {
            Err(e) if e.code() == crate::error::Code::NotFound => continue,
            other => return other,
        }
    }
    Err(AppError::unavailable())
}

/// Purges uploads past their expiry (parts deleted, quota given back, record removed);
/// answers how many.
pub async fn purge_expired(state: &AppState) -> Result<usize, AppError> {
    let now = state.now();
    let until = StoredFile::expiry_key(now);
    let ids = state
        .store
        .index_range(FILE_PENDING, &[], &[], Some(&until))
        .await?;
    let mut purged = 0;
    for key in ids.into_iter().take(500) {
        let Some(f) = state.store.get::<StoredFile>(&key).await? else {
            continue;
        };
        let FileState::Pending { expires_at, .. } = &f.value.state else {
            continue;
        };
        if *expires_at > now {
            continue;
        }
        match remove(state, &f).await {
            Ok(()) => purged += 1,
            // Changed meanwhile (completed or deleted): nothing to purge.
            Err(e) if e.code() == crate::error::Code::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(purged)
}

/// How the uploaded file `f` reaches a client allowed to download it now (the caller
/// checked that): a presigned URL of the object store, or its bytes streamed. A file not
/// (or no longer) uploaded is 404.
pub async fn delivery(state: &AppState, f: &StoredFile) -> Result<Delivery, AppError> {
    if !matches!(f.state, FileState::Uploaded { .. }) {
        return Err(AppError::not_found());
    }
    let ttl = Duration::seconds(
        i64::try_from(state.settings.files.download_link_ttl_secs).unwrap_or(600),
    );
    let download = DownloadAs {
        name: f.name.clone(),
        mime_type: f.mime_type.clone(),
        expires: state.now() + ttl,
    };
    match state.files.backend.deliver(object_of(f), download).await {
        Ok(d) => Ok(d),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(AppError::not_found()),
        Err(e) => Err(AppError::internal(format!("file {}: {e}", f.id))),
    }
}
