//! The customer portal's downloadables in Polar's shapes (`DownloadableRead`,
//! `FileDownload`, `S3DownloadURL`): `GET /v1/customer-portal/downloadables/` lists them,
//! each file with a signed link that expires.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::files::FileFields;
use crate::domain::file::StoredFile;

/// `S3DownloadURL`: where to download the file until `expires_at` (no headers needed).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct S3DownloadUrl {
    pub url: String,
    pub headers: BTreeMap<String, String>,
    pub expires_at: DateTime<Utc>,
}

/// `FileDownload`: the file's fields (without `created_at`) and its link.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FileDownload {
    #[serde(flatten)]
    pub file: FileFields,
    pub download: S3DownloadUrl,
}

/// `DownloadableRead`: one file a benefit grants the customer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DownloadableRead {
    pub id: Uuid,
    pub benefit_id: Uuid,
    pub file: FileDownload,
}

impl DownloadableRead {
    pub fn new(
        id: Uuid,
        benefit_id: Uuid,
        file: &StoredFile,
        url: String,
        expires_at: DateTime<Utc>,
    ) -> Self {
        DownloadableRead {
            id,
            benefit_id,
            file: FileDownload {
                file: FileFields::from(file),
                download: S3DownloadUrl {
                    url,
                    headers: BTreeMap::new(),
                    expires_at,
                },
            },
        }
    }
}

/// One listed downloadable, for the document's tests.
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use crate::domain::file::{FileService, FileState};
    use crate::domain::ids::{FileId, OrganizationId};
    let (id, org) = (
        FileId(Uuid::from_u128(0xf1)),
        OrganizationId(Uuid::from_u128(0x0a)),
    );
    let at = DateTime::<Utc>::UNIX_EPOCH;
    let file = StoredFile {
        id,
        organization_id: org,
        service: FileService::Downloadable,
        name: "app.zip".into(),
        path: StoredFile::object_path(FileService::Downloadable, org, id, "app.zip"),
        mime_type: "application/zip".into(),
        size: 11,
        version: Some("1.0.0".into()),
        declared_sha256: None,
        created_at: at,
        modified_at: None,
        state: FileState::Uploaded {
            etag: "\"abc-1\"".into(),
            last_modified_at: at,
            sha256: [9; 32],
            sha512: vec![1; 64],
        },
    };
    let d = DownloadableRead::new(
        Uuid::from_u128(0xd1),
        Uuid::from_u128(0xbe05),
        &file,
        "https://tollgate.example/v1/customer-portal/downloadables/abc.def".into(),
        DateTime::<Utc>::UNIX_EPOCH,
    );
    vec![(
        "DownloadableRead",
        serde_json::to_value(d).unwrap_or_default(),
    )]
}
