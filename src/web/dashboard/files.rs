//! Files: the organization's downloadable files (name, version, size, when uploaded, how
//! many times downloaded through the portal), renamed and deleted by forms, and uploaded in
//! the browser by `/dashboard/assets/files.js` through the API itself, as Polar's dashboard
//! does: `POST /v1/files/` (the dashboard's session), each part `PUT` to its signed URL
//! (`Blob.slice`), then `POST /v1/files/{id}/uploaded`. The page is the one dashboard page
//! with a script: its Content-Security-Policy allows this service's scripts and
//! connections, nothing else.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use super::{form_refusal, posted, see_other, Dash, Fail, Layout, PageResult};
use crate::api::files::{size_readable, FilePatch};
use crate::app::files::{self, FileFilter};
use crate::app::paging::ListParams;
use crate::domain::file::FileService;
use crate::domain::ids::FileId;
use crate::extract::path_id;
use crate::state::AppState;

const SCRIPT: &str = include_str!("../../../templates/dashboard/files.js");
const CSP: &str = "default-src 'none'; script-src 'self'; connect-src 'self'; \
                   style-src 'unsafe-inline'; img-src https: data:; frame-ancestors 'none'";
/// The most files the page lists.
const LISTED: u64 = 100;

/// One file of the list.
pub struct FileRow {
    pub id: String,
    pub name: String,
    pub version: String,
    pub size: String,
    pub uploaded: String,
    pub downloads: u64,
}

/// A file a downloadables benefit's form offers.
pub struct FileChoice {
    pub id: String,
    pub name: String,
    pub detail: String,
}

/// The organization's uploaded downloadable files, those `attached` first in their order
/// (the order a benefit gives them in), then the others, newest first.
pub async fn file_choices(
    dash: &Dash,
    layout: &Layout,
    attached: &[String],
) -> Result<Vec<FileChoice>, Fail> {
    let filter = FileFilter {
        organization_id: vec![layout.org],
        ids: Vec::new(),
    };
    let params = ListParams {
        page: 1,
        limit: LISTED,
    };
    let (found, _) = files::list(&dash.state, dash.subject(), &filter, params).await?;
    let mut choices: Vec<(usize, FileChoice)> = found
        .iter()
        .filter(|f| f.service == FileService::Downloadable)
        .map(|f| {
            let id = f.id.to_string();
            let rank = attached.iter().position(|a| *a == id).unwrap_or(usize::MAX);
            let detail = match &f.version {
                Some(v) => format!("{v} · {}", size_readable(f.size)),
                None => size_readable(f.size),
            };
            (
                rank,
                FileChoice {
                    id,
                    name: f.name.clone(),
                    detail,
                },
            )
        })
        .collect();
    choices.sort_by_key(|(rank, _)| *rank);
    Ok(choices.into_iter().map(|(_, c)| c).collect())
}

#[derive(Template)]
#[template(path = "dashboard/files.html")]
struct FilesPage {
    layout: Layout,
    files: Vec<FileRow>,
    errors: Vec<String>,
}

/// The page (with the script's CSP) over `files` and `errors`.
async fn page(dash: &Dash, layout: Layout, status: u16, errors: Vec<String>) -> PageResult {
    let filter = FileFilter {
        organization_id: vec![layout.org],
        ids: Vec::new(),
    };
    let params = ListParams {
        page: 1,
        limit: LISTED,
    };
    let (found, _) = files::list(&dash.state, dash.subject(), &filter, params).await?;
    let mut rows = Vec::new();
    for f in found
        .iter()
        .filter(|f| f.service == FileService::Downloadable)
    {
        rows.push(FileRow {
            id: f.id.to_string(),
            name: f.name.clone(),
            version: f.version.clone().unwrap_or_default(),
            size: size_readable(f.size),
            uploaded: f.created_at.format("%Y-%m-%d %H:%M UTC").to_string(),
            downloads: crate::app::downloadables::file_downloads(&dash.state, f.id).await?,
        });
    }
    let mut res = dash.page(
        status,
        &FilesPage {
            layout,
            files: rows,
            errors,
        },
    )?;
    res.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    Ok(res)
}

pub async fn files_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "files", "Files").await?;
    page(&dash, layout, 200, Vec::new()).await
}

/// The rename form: a new name and version (empty: unchanged, as `PATCH /v1/files/{id}`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FileForm {
    pub name: String,
    pub version: String,
}

pub async fn file_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let (org, id) = path.into_inner();
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: FileForm = posted(&bytes)?;
    let layout = dash.layout(&org, "files", "Files").await?;
    let id: FileId = path_id("id", &id)?;
    let patch = FilePatch {
        name: Some(form.name.trim().to_string()),
        version: Some(form.version.trim().to_string()),
    };
    match files::update(&state, dash.subject(), id, patch.into()).await {
        Ok(_) => Ok(see_other(&layout.at("/files"))),
        Err(e) => {
            let (status, errors) = form_refusal(e)?;
            page(&dash, layout, status, errors).await
        }
    }
}

pub async fn file_delete(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let (org, id) = path.into_inner();
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let layout = dash.layout(&org, "files", "Files").await?;
    let id: FileId = path_id("id", &id)?;
    files::delete(&state, dash.subject(), id).await?;
    Ok(see_other(&layout.at("/files")))
}

/// `GET /dashboard/assets/files.js`.
pub async fn script() -> Result<HttpResponse, Fail> {
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/javascript; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .body(SCRIPT))
}
