//! `/v1/files/`: create a file with its upload, send its parts (to Tollgate's signed part
//! URLs on the local backend), mark it uploaded, list, rename and delete it
//! (`crate::app::files`).

use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::StreamExt;

use crate::api::files::{FileCreate, FilePatch, FileRead, FileUpload, FileUploadCompleted};
use crate::api::{Created, ListResource};
use crate::app::files::{self, FileFilter, PartQuery};
use crate::app::listing::render;
use crate::auth::{Scope, SubjectKind};
use crate::domain::file::StoredFile;
use crate::domain::ids::FileId;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::auth::Requirement;
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, ValidJson};
use crate::files::{attachment, Delivery};
use crate::state::AppState;

/// `files:read` (or `files:write`), as Polar's `FileRead` dependency.
pub struct FilesRead;
impl Requirement for FilesRead {
    const SUBJECTS: &'static [SubjectKind] = &[SubjectKind::User, SubjectKind::Organization];
    const SCOPES: &'static [Scope] = &[Scope::WebDefault, Scope::FilesRead, Scope::FilesWrite];
}

/// `files:write`.
pub struct FilesWrite;
impl Requirement for FilesWrite {
    const SUBJECTS: &'static [SubjectKind] = &[SubjectKind::User, SubjectKind::Organization];
    const SCOPES: &'static [Scope] = &[Scope::WebDefault, Scope::FilesWrite];
}

const FILES: &str = "/v1/files/";

pub fn configure(cfg: &mut web::ServiceConfig) {
    // A plan of up to 10 000 parts passes the 64 KiB body limit: a bulk body
    // (`server.import_body_limit_bytes`), as license-key imports.
    crate::resource::record("get", FILES);
    crate::resource::record("post", FILES);
    crate::resource::record_bulk(FILES);
    cfg.service(
        web::resource(FILES)
            .app_data(crate::extract::json::BulkBody)
            .route(web::get().to(list))
            .route(web::post().to(create)),
    );
    crate::resource!(cfg, "/v1/files/{id}", { patch => update, delete => delete });
    crate::resource!(cfg, "/v1/files/{id}/uploaded", { post => uploaded });
    crate::resource!(cfg, "/v1/files/{id}/parts/{number}", { put => put_part });
}

pub(crate) async fn list(
    auth: Auth<FilesRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<FileRead>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let filter = FileFilter {
        organization_id: q.ids("organization_id"),
        ids: q.ids("ids"),
    };
    q.finish()?;
    let (items, total) = files::list(&state, auth.subject(), &filter, params).await?;
    Ok(web::Json(render(&items, total, params, |f| {
        FileRead::from(f)
    })))
}

pub(crate) async fn create(
    auth: Auth<FilesWrite>,
    state: web::Data<AppState>,
    body: ValidJson<FileCreate>,
) -> ApiResult<Created<FileUpload>> {
    let upload = files::create(&state, auth.subject(), body.into_inner().into()).await?;
    Ok(Created(upload))
}

pub(crate) async fn uploaded(
    auth: Auth<FilesWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<FileUploadCompleted>,
) -> ApiResult<web::Json<FileRead>> {
    let id: FileId = path_id("id", &id)?;
    let file = files::uploaded(&state, auth.subject(), id, body.into_inner().into()).await?;
    Ok(web::Json(file))
}

pub(crate) async fn update(
    auth: Auth<FilesWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<FilePatch>,
) -> ApiResult<web::Json<FileRead>> {
    let id: FileId = path_id("id", &id)?;
    let file = files::update(&state, auth.subject(), id, body.into_inner().into()).await?;
    Ok(web::Json(file))
}

pub(crate) async fn delete(
    auth: Auth<FilesWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: FileId = path_id("id", &id)?;
    files::delete(&state, auth.subject(), id).await?;
    Ok(HttpResponse::NoContent().finish())
}

fn query_error(name: &str, given: &str) -> ApiError {
    ApiError::validation(FieldError::new(
        "missing",
        vec!["query".into(), name.into()],
        "A signed part URL needs upload_id, expires and signature.",
        given.into(),
    ))
}

/// The signed query of a part URL (`upload_id`, `expires`, `signature`).
fn part_query(req: &HttpRequest) -> Result<PartQuery, ApiError> {
    let (mut upload_id, mut expires, mut signature) = (None, None, None);
    for (k, v) in form_urlencoded::parse(req.query_string().as_bytes()) {
        match k.as_ref() {
            "upload_id" => upload_id = Some(v.into_owned()),
            "expires" => expires = Some(v.into_owned()),
            "signature" => signature = Some(v.into_owned()),
            _ => {}
        }
    }
    let upload_id = upload_id.ok_or_else(|| query_error("upload_id", ""))?;
    let raw = expires.unwrap_or_default();
    let expires = raw
        .parse::<i64>()
        .map_err(|_| query_error("expires", &raw))?;
    let signature = signature.ok_or_else(|| query_error("signature", ""))?;
    Ok(PartQuery {
        upload_id,
        expires,
        signature,
    })
}

/// `PUT /v1/files/{id}/parts/{number}`: the body streamed to disk, never held whole; the
/// answer's `ETag` is the part's quoted hex SHA-256.
pub(crate) async fn put_part(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let (id, number) = path.into_inner();
    let id: FileId = path_id("id", &id)?;
    let number: u32 = number.parse().map_err(|_| {
        ApiError::validation(FieldError::new(
            "int_parsing",
            vec!["path".into(), "number".into()],
            "Input should be a valid integer, unable to parse string as an integer",
            number.clone().into(),
        ))
    })?;
    let query = part_query(&req)?;
    let body = payload
        .map(|chunk| chunk.map_err(|e| e.to_string()))
        .boxed_local();
    let etag = files::receive_part(&state, id, number, query, body).await?;
    Ok(HttpResponse::Ok()
        .insert_header((actix_web::http::header::ETAG, etag))
        .finish())
}

/// The answer to a download the caller has allowed: `302` to the object store's presigned
/// URL, or the bytes streamed with their length, type and `attachment` name. Never cached
/// (a link is per customer and checked at each request).
pub(crate) fn download_response(delivery: Delivery, file: &StoredFile) -> HttpResponse {
    use actix_web::http::header;
    match delivery {
        Delivery::Redirect(url) => HttpResponse::Found()
            .insert_header((header::LOCATION, url))
            .insert_header((header::CACHE_CONTROL, "private, no-store"))
            .finish(),
        Delivery::Stream(body) => HttpResponse::Ok()
            .insert_header((header::CONTENT_TYPE, file.mime_type.as_str()))
            .insert_header((header::CONTENT_DISPOSITION, attachment(&file.name)))
            .insert_header((header::CACHE_CONTROL, "private, no-store"))
            .insert_header(("X-Content-Type-Options", "nosniff"))
            .no_chunking(file.size)
            .streaming(body),
    }
}
