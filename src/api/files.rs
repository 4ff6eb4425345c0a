//! The wire shapes of `/v1/files` (Polar's `file/schemas.py` and `aws/s3/schemas.py`):
//! `FileCreate`, `FileUpload`, `FileUploadCompleted`, `FilePatch` and the `FileRead` union
//! (discriminated by `service`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::domain::file::{
    CompletedPart, FileChange, FileState, NewFile, NewPart, StoredFile, UploadCompleted,
};

/// One promised part of an upload (`S3FileCreatePart`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct FileCreatePart {
    pub number: i64,
    pub chunk_start: i64,
    pub chunk_end: i64,
    #[serde(default)]
    pub checksum_sha256_base64: Option<String>,
}

/// `S3FileCreateMultipart`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct FileCreateMultipart {
    pub parts: Vec<FileCreatePart>,
}

/// `FileCreate`: `service` is `downloadable`, `product_media` or `organization_avatar`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct FileCreate {
    #[serde(default)]
    pub organization_id: Option<Uuid>,
    pub name: String,
    pub mime_type: String,
    pub size: i64,
    #[serde(default)]
    pub checksum_sha256_base64: Option<String>,
    pub upload: FileCreateMultipart,
    pub service: String,
    #[serde(default)]
    pub version: Option<String>,
}

/// One uploaded part as the client saw it (`S3FileUploadCompletedPart`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct FileUploadCompletedPart {
    pub number: i64,
    pub checksum_etag: String,
    pub checksum_sha256_base64: Option<String>,
}

/// `FileUploadCompleted`: the upload's id and path (as `FileUpload.upload` gave them) and
/// the parts' ETags.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct FileUploadCompleted {
    pub id: String,
    pub path: String,
    pub parts: Vec<FileUploadCompletedPart>,
}

/// `FilePatch`: empty strings change nothing (Polar).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct FilePatch {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
}

/// Polar's `human_readable_size`: powers of 1024, one decimal.
pub fn size_readable(size: u64) -> String {
    let mut num = size as f64;
    for unit in ["", "K", "M", "G", "T", "P", "E", "Z"] {
        if num.abs() < 1024.0 {
            return format!("{num:3.1} {unit}B");
        }
        num /= 1024.0;
    }
    format!("{num:.1} YB")
}

/// The fields every file answer has (`S3File` + `FileReadBase` without `created_at`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FileFields {
    pub id: Uuid,
    pub organization_id: Uuid,
    pub name: String,
    pub path: String,
    pub mime_type: String,
    pub size: u64,
    pub storage_version: Option<String>,
    pub checksum_etag: Option<String>,
    pub checksum_sha256_base64: Option<String>,
    pub checksum_sha256_hex: Option<String>,
    pub last_modified_at: Option<DateTime<Utc>>,
    pub size_readable: String,
    pub version: Option<String>,
    pub is_uploaded: bool,
    /// `downloadable`, `product_media` or `organization_avatar`.
    pub service: String,
}

impl From<&StoredFile> for FileFields {
    fn from(f: &StoredFile) -> Self {
        use base64::Engine;
        let (etag, sha, modified) = match &f.state {
            FileState::Uploaded {
                etag,
                sha256,
                last_modified_at,
                ..
            } => (Some(etag.clone()), Some(*sha256), Some(*last_modified_at)),
            FileState::Pending { .. } => (None, f.declared_sha256, None),
        };
        FileFields {
            id: f.id.0,
            organization_id: f.organization_id.0,
            name: f.name.clone(),
            path: f.path.clone(),
            mime_type: f.mime_type.clone(),
            size: f.size,
            storage_version: None,
            checksum_etag: etag,
            checksum_sha256_base64: sha
                .map(|d| base64::engine::general_purpose::STANDARD.encode(d)),
            checksum_sha256_hex: sha.map(|d| crate::domain::file::hex(&d)),
            last_modified_at: modified,
            size_readable: size_readable(f.size),
            version: f.version.clone(),
            is_uploaded: f.is_uploaded(),
            service: f.service.as_str().to_string(),
        }
    }
}

/// `FileRead` (`DownloadableFileRead`, `ProductMediaFileRead`, `OrganizationAvatarFileRead`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = FileRead)]
pub struct FileRead {
    #[serde(flatten)]
    pub file: FileFields,
    pub created_at: DateTime<Utc>,
    pub flagged_malicious_at: Option<DateTime<Utc>>,
}

impl From<&StoredFile> for FileRead {
    fn from(f: &StoredFile) -> Self {
        FileRead {
            file: FileFields::from(f),
            created_at: f.created_at,
            flagged_malicious_at: None,
        }
    }
}

/// One part of an upload, with where to send it (`S3FileUploadPart`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FileUploadPart {
    pub number: u32,
    pub chunk_start: u64,
    pub chunk_end: u64,
    pub checksum_sha256_base64: Option<String>,
    pub url: String,
    pub expires_at: DateTime<Utc>,
    pub headers: std::collections::BTreeMap<String, String>,
}

/// `S3FileUploadMultipart`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FileUploadMultipart {
    pub id: String,
    pub path: String,
    pub parts: Vec<FileUploadPart>,
}

/// `FileUpload`: the file, not uploaded yet, with its upload.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FileUpload {
    #[serde(flatten)]
    pub file: FileFields,
    pub upload: FileUploadMultipart,
}

/// One answer of each shape, for the document's tests: a file just created, with its
/// upload, and the same file uploaded.
impl From<FileCreate> for NewFile {
    fn from(b: FileCreate) -> Self {
        NewFile {
            organization_id: b.organization_id,
            service: b.service,
            name: b.name,
            mime_type: b.mime_type,
            size: b.size,
            checksum_sha256_base64: b.checksum_sha256_base64,
            version: b.version,
            parts: b
                .upload
                .parts
                .into_iter()
                .map(|p| NewPart {
                    number: p.number,
                    chunk_start: p.chunk_start,
                    chunk_end: p.chunk_end,
                    checksum_sha256_base64: p.checksum_sha256_base64,
                })
                .collect(),
        }
    }
}

impl From<FileUploadCompleted> for UploadCompleted {
    fn from(b: FileUploadCompleted) -> Self {
        UploadCompleted {
            upload_id: b.id,
            path: b.path,
            parts: b
                .parts
                .into_iter()
                .map(|p| CompletedPart {
                    number: p.number,
                    checksum_etag: p.checksum_etag,
                    checksum_sha256_base64: p.checksum_sha256_base64,
                })
                .collect(),
        }
    }
}

impl From<FilePatch> for FileChange {
    fn from(p: FilePatch) -> Self {
        FileChange {
            name: p.name,
            version: p.version,
        }
    }
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use crate::domain::file::{FileService, PartPlan};
    use crate::domain::ids::{FileId, OrganizationId};
    let id = FileId(Uuid::from_u128(0xf1));
    let org = OrganizationId(Uuid::from_u128(0x0a));
    let at = DateTime::<Utc>::UNIX_EPOCH;
    let part = PartPlan {
        number: 1,
        start: 0,
        end: 11,
        sha256: Some([7; 32]),
    };
    let mut file = StoredFile {
        id,
        organization_id: org,
        service: FileService::Downloadable,
        name: "app.zip".into(),
        path: StoredFile::object_path(FileService::Downloadable, org, id, "app.zip"),
        mime_type: "application/zip".into(),
        size: 11,
        version: Some("1.0.0".into()),
        declared_sha256: Some([9; 32]),
        created_at: at,
        modified_at: None,
        state: FileState::Pending {
            upload_id: "local~0123".into(),
            parts: vec![part.clone()],
            expires_at: at,
        },
    };
    let upload = FileUpload {
        file: FileFields::from(&file),
        upload: FileUploadMultipart {
            id: "local~0123".into(),
            path: file.path.clone(),
            parts: vec![FileUploadPart {
                number: part.number,
                chunk_start: part.start,
                chunk_end: part.end,
                checksum_sha256_base64: Some("BwcH".into()),
                url: "https://tollgate.example/v1/files/f1/parts/1?expires=0&signature=x".into(),
                expires_at: at,
                headers: [("x-amz-checksum-sha256".to_string(), "BwcH".to_string())].into(),
            }],
        },
    };
    file.state = FileState::Uploaded {
        etag: "\"abc-1\"".into(),
        last_modified_at: at,
        sha256: [9; 32],
        sha512: vec![1; 64],
    };
    let json = |v: serde_json::Result<serde_json::Value>| v.unwrap_or_default();
    vec![
        ("FileUpload", json(serde_json::to_value(upload))),
        (
            "FileRead",
            json(serde_json::to_value(FileRead::from(&file))),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::size_readable;

    #[test]
    fn sizes_read_as_polar_writes_them() {
        assert_eq!(size_readable(10_485_760), "10.0 MB");
        assert_eq!(size_readable(5), "5.0 B");
        assert_eq!(size_readable(1536), "1.5 KB");
        assert_eq!(size_readable(200 * 1024 * 1024), "200.0 MB");
    }
}
