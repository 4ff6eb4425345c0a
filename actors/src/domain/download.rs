//! What is counted of downloads (issue 50): the downloads themselves are derived from the
//! current grants (a `downloadables` benefit's files, for as long as the purchase grants
//! it), so only counts are stored: per downloadable (one file of one grant) for the portal,
//! and per file for the dashboard.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::Record;

use super::ids::{BenefitId, CustomerId, FileId, OrganizationId};
use crate::ids::derived_uuid;

/// The id of the downloadable of `file` by the grant `grant` (Polar's `Downloadable.id`):
/// stable for the pair, so its count survives every derivation.
pub fn downloadable_id(grant: uuid::Uuid, file: FileId) -> uuid::Uuid {
    derived_uuid(grant, &format!("downloadable:{file}"))
}

/// The downloads of one downloadable: Polar's `downloaded` and `last_downloaded_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DownloadStat {
    /// [`downloadable_id`].
    pub id: uuid::Uuid,
    pub organization_id: OrganizationId,
    pub customer_id: CustomerId,
    pub benefit_id: BenefitId,
    pub file_id: FileId,
    pub downloaded: u64,
    pub last_downloaded_at: Option<DateTime<Utc>>,
}

impl Record for DownloadStat {
    crate::record_v1!(DownloadStat, "download_stat");

    fn id_key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}

/// The downloads of one file, all grants together (the dashboard's count).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDownloads {
    pub file_id: FileId,
    pub organization_id: OrganizationId,
    pub downloaded: u64,
    pub last_downloaded_at: Option<DateTime<Utc>>,
}

impl Record for FileDownloads {
    crate::record_v1!(FileDownloads, "file_downloads");

    fn id_key(&self) -> Vec<u8> {
        self.file_id.key()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{at, uuid};

    #[test]
    fn a_downloadable_id_is_stable_per_grant_and_file() {
        let (grant, file) = (uuid(1), FileId(uuid(2)));
        let id = downloadable_id(grant, file);
        assert_eq!(id, downloadable_id(grant, file));
        assert_ne!(id, downloadable_id(uuid(3), file));
        assert_ne!(id, downloadable_id(grant, FileId(uuid(4))));
    }

    #[test]
    fn the_counts_round_trip() {
        let stat = DownloadStat {
            id: uuid(1),
            organization_id: OrganizationId(uuid(2)),
            customer_id: CustomerId(uuid(3)),
            benefit_id: BenefitId(uuid(4)),
            file_id: FileId(uuid(5)),
            downloaded: 3,
            last_downloaded_at: Some(at(1_700_000_000)),
        };
        assert_eq!(
            DownloadStat::decode(1, &stat.encode().unwrap()).unwrap(),
            stat
        );
        let total = FileDownloads {
            file_id: FileId(uuid(5)),
            organization_id: OrganizationId(uuid(2)),
            downloaded: 9,
            last_downloaded_at: None,
        };
        assert_eq!(
            FileDownloads::decode(1, &total.encode().unwrap()).unwrap(),
            total
        );
        assert!(FileDownloads::decode(2, &total.encode().unwrap()).is_err());
    }
}
