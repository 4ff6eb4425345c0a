//! Files an organization uploads (`/v1/files`, Polar's `File`): the record, its upload plan
//! (the parts a client promised to send) and the organization's storage usage.
//!
//! A file is `Pending` from its creation until `/uploaded` assembled and verified its bytes,
//! then `Uploaded`. Only uploaded files are listed (Polar lists `is_uploaded` ones only). A
//! deleted file's record is removed with its bytes, in one write with the usage it frees.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

use super::ids::{FileId, OrganizationId};

/// S3's smallest part but the last (`EntityTooSmall`): enforced on every backend, so one
/// client works against all of them.
pub const MIN_PART_BYTES: u64 = 5 * 1024 * 1024;
/// Polar's (and S3's) most parts per upload.
pub const MAX_PARTS: usize = 10_000;

/// What a file is for (Polar's `FileServiceTypes`, without support-case attachments).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileService {
    Downloadable,
    ProductMedia,
    OrganizationAvatar,
}

impl FileService {
    pub const ALL: &'static [(&'static str, FileService)] = &[
        ("downloadable", FileService::Downloadable),
        ("product_media", FileService::ProductMedia),
        ("organization_avatar", FileService::OrganizationAvatar),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FileService::Downloadable => "downloadable",
            FileService::ProductMedia => "product_media",
            FileService::OrganizationAvatar => "organization_avatar",
        }
    }

    pub fn parse(s: &str) -> Option<FileService> {
        FileService::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, v)| *v)
    }

    /// Polar's size limit of the service, if any (product media 10 MB, avatars 1 MB).
    pub fn max_size(self) -> Option<u64> {
        match self {
            FileService::Downloadable => None,
            FileService::ProductMedia => Some(10 * 1024 * 1024),
            FileService::OrganizationAvatar => Some(1024 * 1024),
        }
    }

    /// Whether `mime` is allowed: images only for media and avatars
    /// (`^image\/(jpeg|png|gif|webp|svg\+xml)$`), anything for downloadables.
    pub fn accepts_mime(self, mime: &str) -> bool {
        match self {
            FileService::Downloadable => true,
            FileService::ProductMedia | FileService::OrganizationAvatar => matches!(
                mime,
                "image/jpeg" | "image/png" | "image/gif" | "image/webp" | "image/svg+xml"
            ),
        }
    }
}

/// One promised part: bytes `[start, end)` of the file, numbered from 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartPlan {
    pub number: u32,
    pub start: u64,
    pub end: u64,
    /// The SHA-256 the client declared for this part, if any.
    pub sha256: Option<[u8; 32]>,
}

impl PartPlan {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// Why an upload plan is refused: the index of the offending part (None: the plan as a
/// whole) and the field, with the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub part: Option<usize>,
    pub field: &'static str,
    pub message: String,
}

fn plan_error(part: Option<usize>, field: &'static str, message: impl Into<String>) -> PlanError {
    PlanError {
        part,
        field,
        message: message.into(),
    }
}

/// Checks that `parts` cover `[0, size)` exactly: numbered 1, 2, … in order, contiguous,
/// non-empty (one empty part for an empty file), at most [`MAX_PARTS`], and each part but
/// the last at least `min_part` bytes.
pub fn check_plan(size: u64, parts: &[PartPlan], min_part: u64) -> Result<(), PlanError> {
    if parts.is_empty() {
        return Err(plan_error(None, "parts", "At least one part is required."));
    }
    if parts.len() > MAX_PARTS {
        return Err(plan_error(
            None,
            "parts",
            format!("At most {MAX_PARTS} parts are allowed."),
        ));
    }
    let mut at = 0u64;
    for (i, p) in parts.iter().enumerate() {
        let expected = u32::try_from(i + 1).unwrap_or(u32::MAX);
        if p.number != expected {
            return Err(plan_error(
                Some(i),
                "number",
                format!("Parts must be numbered from 1 in order; expected {expected}."),
            ));
        }
        if p.start != at {
            return Err(plan_error(
                Some(i),
                "chunk_start",
                format!("The part must start at {at}, where the previous one ended."),
            ));
        }
        if p.end < p.start || (p.end == p.start && size != 0) {
            return Err(plan_error(
                Some(i),
                "chunk_end",
                "The part must end after its start.",
            ));
        }
        if p.end > size {
            return Err(plan_error(
                Some(i),
                "chunk_end",
                "The part ends after the end of the file.",
            ));
        }
        let last = i + 1 == parts.len();
        if !last && p.len() < min_part {
            return Err(plan_error(
                Some(i),
                "chunk_end",
                format!("Every part but the last must be at least {min_part} bytes."),
            ));
        }
        at = p.end;
    }
    if at != size {
        return Err(plan_error(
            None,
            "parts",
            format!("The parts cover {at} bytes, not the file's {size}."),
        ));
    }
    Ok(())
}

/// Lower-case hex of `bytes` (digests on the wire and in ETags).
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Where a file is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileState {
    /// Created: waiting for its parts and `/uploaded` until `expires_at`, then purged.
    Pending {
        upload_id: String,
        parts: Vec<PartPlan>,
        expires_at: DateTime<Utc>,
    },
    /// Assembled and verified: `sha256`/`sha512` are the digests Tollgate computed.
    Uploaded {
        etag: String,
        last_modified_at: DateTime<Utc>,
        sha256: [u8; 32],
        /// 64 bytes (electron-updater's `sha512`).
        sha512: Vec<u8>,
    },
}

/// A file of an organization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredFile {
    pub id: FileId,
    pub organization_id: OrganizationId,
    pub service: FileService,
    pub name: String,
    /// Polar's object key, `{service}/{organization_id}/{id}/{name}`, fixed at creation.
    pub path: String,
    pub mime_type: String,
    pub size: u64,
    pub version: Option<String>,
    /// The whole-file SHA-256 the client declared at creation, checked at `/uploaded`.
    pub declared_sha256: Option<[u8; 32]>,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub state: FileState,
}

/// Uploaded files of an organization, by creation time.
pub const FILE_OF_ORG: &str = "file_of_org";
/// Pending files of every organization, by upload expiry (the purge job's worklist).
pub const FILE_PENDING: &str = "file_pending";

impl StoredFile {
    pub fn object_path(
        service: FileService,
        org: OrganizationId,
        id: FileId,
        name: &str,
    ) -> String {
        format!("{}/{org}/{id}/{name}", service.as_str())
    }

    pub fn is_uploaded(&self) -> bool {
        matches!(self.state, FileState::Uploaded { .. })
    }

    /// The sort key of [`FILE_OF_ORG`]: creation time, then id.
    pub fn created_key(&self) -> Vec<u8> {
        KeyBuf::new()
            .i64(self.created_at.timestamp_micros())
            .str(&self.id.to_string())
            .into_vec()
    }

    /// The sort key of [`FILE_PENDING`] for an expiry.
    pub fn expiry_key(at: DateTime<Utc>) -> Vec<u8> {
        KeyBuf::new().i64(at.timestamp_micros()).into_vec()
    }
}

impl Record for StoredFile {
    crate::record_v1!(StoredFile, "file");
    const INDEXES: &'static [&'static str] = &[FILE_OF_ORG, FILE_PENDING];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        match &self.state {
            FileState::Pending { expires_at, .. } => {
                let mut sort = StoredFile::expiry_key(*expires_at);
                sort.extend_from_slice(&self.id.key());
                vec![IndexEntry::new(FILE_PENDING, Vec::new(), sort)]
            }
            FileState::Uploaded { .. } => vec![IndexEntry::new(
                FILE_OF_ORG,
                self.organization_id.key(),
                self.created_key(),
            )],
        }
    }
}

/// The bytes an organization's files hold or reserve: the declared size of every pending
/// upload plus every uploaded file. Changed by compare-and-swap with the file it is about,
/// so concurrent uploads cannot pass the organization's cap together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileUsage {
    pub organization_id: OrganizationId,
    pub bytes: u64,
}

impl Record for FileUsage {
    crate::record_v1!(FileUsage, "file_usage");

    fn id_key(&self) -> Vec<u8> {
        self.organization_id.key()
    }
}

/// A part of a new file's upload plan, as the client sent it (checked by
/// [`check_plan`] once read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPart {
    pub number: i64,
    pub chunk_start: i64,
    pub chunk_end: i64,
    pub checksum_sha256_base64: Option<String>,
}

/// The command that creates a file (`POST /v1/files/`): its service, name, type, size,
/// declared checksum and upload plan, checked by the use case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFile {
    pub organization_id: Option<uuid::Uuid>,
    pub service: String,
    pub name: String,
    pub mime_type: String,
    pub size: i64,
    pub checksum_sha256_base64: Option<String>,
    pub version: Option<String>,
    pub parts: Vec<NewPart>,
}

/// A part the client says it sent: its ETag (and checksum) as the store answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletedPart {
    pub number: i64,
    pub checksum_etag: String,
    pub checksum_sha256_base64: Option<String>,
}

/// The command that completes an upload (`POST /v1/files/{id}/uploaded`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadCompleted {
    pub upload_id: String,
    pub path: String,
    pub parts: Vec<CompletedPart>,
}

/// The command that renames a file or sets its version (empty strings change nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileChange {
    pub name: Option<String>,
    pub version: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(number: u32, start: u64, end: u64) -> PartPlan {
        PartPlan {
            number,
            start,
            end,
            sha256: None,
        }
    }

    const MIB5: u64 = MIN_PART_BYTES;

    #[test]
    fn a_plan_covering_the_file_passes() {
        assert_eq!(check_plan(10, &[part(1, 0, 10)], MIB5), Ok(()));
        let two = [part(1, 0, MIB5), part(2, MIB5, MIB5 + 1)];
        assert_eq!(check_plan(MIB5 + 1, &two, MIB5), Ok(()));
        assert_eq!(check_plan(0, &[part(1, 0, 0)], MIB5), Ok(()));
    }

    #[test]
    fn gaps_overlaps_and_short_plans_are_refused() {
        let gap = [part(1, 0, MIB5), part(2, MIB5 + 1, MIB5 + 2)];
        assert_eq!(
            check_plan(MIB5 + 2, &gap, MIB5).unwrap_err().field,
            "chunk_start"
        );
        let overlap = [part(1, 0, MIB5), part(2, MIB5 - 1, MIB5 + 2)];
        assert_eq!(
            check_plan(MIB5 + 2, &overlap, MIB5).unwrap_err().part,
            Some(1)
        );
        let short = check_plan(20, &[part(1, 0, 10)], MIB5).unwrap_err();
        assert_eq!((short.part, short.field), (None, "parts"));
        let long = check_plan(5, &[part(1, 0, 10)], MIB5).unwrap_err();
        assert_eq!(long.field, "chunk_end");
        assert_eq!(check_plan(5, &[], MIB5).unwrap_err().field, "parts");
        assert_eq!(
            check_plan(5, &[part(1, 0, 0)], MIB5).unwrap_err().field,
            "chunk_end"
        );
    }

    #[test]
    fn numbers_must_run_from_one_and_small_parts_only_last() {
        let err = check_plan(10, &[part(2, 0, 10)], MIB5).unwrap_err();
        assert_eq!((err.part, err.field), (Some(0), "number"));
        let small = [part(1, 0, 10), part(2, 10, 20)];
        let err = check_plan(20, &small, MIB5).unwrap_err();
        assert_eq!((err.part, err.field), (Some(0), "chunk_end"));
        // With no minimum the same plan passes.
        assert_eq!(check_plan(20, &small, 1), Ok(()));
    }

    #[test]
    fn more_than_ten_thousand_parts_are_refused() {
        let parts: Vec<PartPlan> = (0..=MAX_PARTS as u64)
            .map(|i| part(i as u32 + 1, i, i + 1))
            .collect();
        let err = check_plan(parts.len() as u64, &parts, 1).unwrap_err();
        assert_eq!((err.part, err.field), (None, "parts"));
    }

    #[test]
    fn only_pending_files_are_in_the_purge_index_and_uploaded_in_the_list() {
        let now = Utc::now();
        let mut f = StoredFile {
            id: FileId::new(),
            organization_id: OrganizationId::new(),
            service: FileService::Downloadable,
            name: "a.bin".into(),
            path: String::new(),
            mime_type: "application/octet-stream".into(),
            size: 1,
            version: None,
            declared_sha256: None,
            created_at: now,
            modified_at: None,
            state: FileState::Pending {
                upload_id: "u".into(),
                parts: vec![part(1, 0, 1)],
                expires_at: now,
            },
        };
        let names: Vec<&str> = f.index_entries().iter().map(|e| e.index).collect();
        assert_eq!(names, [FILE_PENDING]);
        f.state = FileState::Uploaded {
            etag: "\"x-1\"".into(),
            last_modified_at: now,
            sha256: [0; 32],
            sha512: vec![0; 64],
        };
        let names: Vec<&str> = f.index_entries().iter().map(|e| e.index).collect();
        assert_eq!(names, [FILE_OF_ORG]);
        let bytes = f.encode().unwrap();
        assert_eq!(StoredFile::decode(1, &bytes).unwrap(), f);
    }

    #[test]
    fn media_and_avatars_take_images_only() {
        assert!(FileService::ProductMedia.accepts_mime("image/png"));
        assert!(!FileService::OrganizationAvatar.accepts_mime("application/pdf"));
        assert!(FileService::Downloadable.accepts_mime("application/x-anything"));
        assert_eq!(
            FileService::parse("product_media"),
            Some(FileService::ProductMedia)
        );
        assert_eq!(FileService::parse("support_case_attachment"), None);
    }
}
