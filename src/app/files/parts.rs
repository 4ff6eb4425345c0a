//! `PUT /v1/files/{id}/parts/{n}?upload_id=…&expires=…&signature=…`: a part sent to
//! Tollgate's own signed URL (local backend). No bearer token: the URL is the credential.
//!
//! Answers, as close to S3's as Polar's API allows: a forged or altered URL 403
//! `NotPermitted`; an expired one 410 `ResourceUnavailable` (Polar's expired download
//! token); an unknown file, upload or part, or a file already uploaded, 404; a body of the
//! wrong length or whose SHA-256 is not the part's declared checksum 400 `BadRequest`
//! (S3's `IncompleteBody`/`BadDigest`), nothing of it kept.

use actix_web::web::Bytes;
use futures_util::stream::LocalBoxStream;

use crate::domain::file::{FileState, StoredFile};
use crate::domain::ids::FileId;
use crate::error::{AppError, Code};
use crate::files::signed::{self, Checked};
use crate::files::{part_etag, ObjectRef, PartRefused};
use crate::state::AppState;

/// The signed query of a part URL.
#[derive(Debug, Clone)]
pub struct PartQuery {
    pub upload_id: String,
    pub expires: i64,
    pub signature: String,
}

/// Takes part `number` of file `id` from `body`; answers its ETag.
pub async fn receive_part(
    state: &AppState,
    id: FileId,
    number: u32,
    query: PartQuery,
    body: LocalBoxStream<'_, Result<Bytes, String>>,
) -> Result<String, AppError> {
    match signed::check(
        &state.hasher,
        id,
        &query.upload_id,
        number,
        query.expires,
        &query.signature,
        state.now(),
    ) {
        Checked::Good => {}
        Checked::Forged => {
            return Err(AppError::not_permitted(
                "The signature of this upload URL does not match.",
            ))
        }
        Checked::Expired => {
            return Err(AppError::new(
                Code::ResourceUnavailable,
                "This upload URL has expired.",
            ))
        }
    }
    let Some(stored) = state.store.get::<StoredFile>(&id.key()).await? else {
        return Err(AppError::not_found());
    };
    let file = stored.value;
    let FileState::Pending {
        upload_id, parts, ..
    } = &file.state
    else {
        return Err(AppError::not_found());
    };
    if *upload_id != query.upload_id {
        return Err(AppError::not_found());
    }
    let Some(part) = parts.iter().find(|p| p.number == number) else {
        return Err(AppError::not_found());
    };
    let object = ObjectRef {
        organization_id: file.organization_id,
        file_id: file.id,
        path: file.path.clone(),
        mime_type: file.mime_type.clone(),
    };
    match state
        .files
        .backend
        .receive_part(&object, part, body)
        .await
    {
        Ok(digest) => Ok(part_etag(&digest)),
        Err(PartRefused::Length { expected, received }) => Err(AppError::bad_request(format!(
            "The part must be {expected} bytes (chunk_end - chunk_start); {received} or more were sent."
        ))),
        Err(PartRefused::Checksum) => Err(AppError::bad_request(
            "The part's SHA-256 differs from its declared checksum_sha256_base64.",
        )),
        Err(PartRefused::Body(e)) => Err(AppError::bad_request(format!(
            "The request body broke off: {e}"
        ))),
        Err(PartRefused::Unsupported) => Err(AppError::not_found()),
        Err(PartRefused::Io(e)) => Err(AppError::internal(e)),
    }
}
