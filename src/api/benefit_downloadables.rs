//! The `downloadables` benefit's properties in Polar's shape:
//! `BenefitDownloadablesCreateProperties` / `BenefitDownloadablesProperties`, `{archived:
//! {file id: bool}, files: [file id]}` (at least one file).
//!
//! The record keeps when each file was archived ([`DownloadablesProperties`]); a body only
//! says which are, so the times this adapter gives are placeholders the use case replaces
//! (`DownloadablesProperties::from_wire` with the benefit's current properties and the
//! clock).

use std::collections::BTreeMap;

use chrono::DateTime;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::domain::benefit::DownloadablesProperties;
use crate::domain::ids::FileId;
use crate::error::FieldError;
use crate::loc;
use crate::validate::Validator;

/// `{archived, files}`: the files, in order, and which of them are archived (granted to
/// earlier buyers, not to later ones).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BenefitDownloadablesProperties {
    #[serde(default)]
    pub archived: BTreeMap<Uuid, bool>,
    pub files: Vec<Uuid>,
}

impl From<&DownloadablesProperties> for BenefitDownloadablesProperties {
    fn from(p: &DownloadablesProperties) -> Self {
        // The archived files only (a file not named is not archived).
        BenefitDownloadablesProperties {
            archived: p.archived.iter().map(|(f, _)| (f.0, true)).collect(),
            files: p.files.iter().map(|f| f.0).collect(),
        }
    }
}

/// The properties as the record holds them, the archive times unknown yet (see the
/// module's documentation); files named twice count once.
impl From<BenefitDownloadablesProperties> for DownloadablesProperties {
    fn from(p: BenefitDownloadablesProperties) -> Self {
        let mut files: Vec<FileId> = Vec::with_capacity(p.files.len());
        for f in p.files {
            if !files.contains(&FileId(f)) {
                files.push(FileId(f));
            }
        }
        let archived: Vec<(FileId, bool)> = p
            .archived
            .into_iter()
            .map(|(f, a)| (FileId(f), a))
            .collect();
        DownloadablesProperties::from_wire(files, &archived, None, DateTime::UNIX_EPOCH)
    }
}

/// Polar's `Len(min_length=1)` on `files`.
pub(super) fn check(v: &mut Validator, p: &DownloadablesProperties) {
    if p.files.is_empty() {
        v.push(
            FieldError::new(
                "too_short",
                loc!["body", "properties", "files"],
                "List should have at least 1 item after validation, not 0",
                serde_json::Value::Array(Vec::new()),
            )
            .with_ctx(
                serde_json::json!({"field_type": "List", "min_length": 1, "actual_length": 0}),
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_wire_form_round_trips_through_the_record() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let body: BenefitDownloadablesProperties =
            serde_json::from_value(json!({"files": [a, b, a], "archived": {b.to_string(): true}}))
                .unwrap();
        let record = DownloadablesProperties::from(body);
        assert_eq!(record.files, vec![FileId(a), FileId(b)]);
        assert_eq!(record.active_files(), vec![FileId(a)]);
        let back = serde_json::to_value(BenefitDownloadablesProperties::from(&record)).unwrap();
        assert_eq!(
            back,
            json!({"archived": {b.to_string(): true}, "files": [a, b]})
        );
        // `archived` may be left out.
        let body: BenefitDownloadablesProperties =
            serde_json::from_value(json!({"files": [a]})).unwrap();
        assert!(body.archived.is_empty());
    }
}
