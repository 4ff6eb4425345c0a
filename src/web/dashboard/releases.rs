//! Releases: the organization's releases (every product), a form for a new draft (a
//! product, a version, a channel, notes and an uploaded file per platform), publish and
//! yank buttons, and the update-signing public keys to paste into an application.
//!
//! Everything goes through `crate::app::releases`, the use cases of `/v1/releases/`: the
//! same tenancy, rules and refusals (a 422 is shown next to the form, what was typed kept).

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::{
    fmt, form_refusal, of_org, posted, see_other, Dash, Fail, Layout, ListQuery, PageResult, Pager,
    CHOICES,
};
use crate::api::releases::{ReleaseArtifactCreate, ReleaseCreate, UpdateSigningKeyRead};
use crate::app::catalog::products::{self, ProductFilter};
use crate::app::files::{self, FileFilter};
use crate::app::paging::ListParams;
use crate::app::releases::{self, ReleaseFilter};
use crate::domain::file::StoredFile;
use crate::domain::ids::ReleaseId;
use crate::domain::product::{Product, ProductSort};
use crate::domain::release::{Bundle, Release, PLATFORMS};
use crate::extract::{path_id, Sorting};
use crate::state::AppState;

/// File rows the form offers.
const ROWS: usize = 3;

/// The new-release form; the files as three parallel lists (one row each, an empty file
/// leaves its row out).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ReleaseForm {
    pub product_id: String,
    pub version: String,
    pub channel: String,
    pub notes: String,
    pub platform: Vec<String>,
    pub bundle: Vec<String>,
    pub file_id: Vec<String>,
}

impl ReleaseForm {
    /// Row `i`'s platform, bundle and file ("" when absent).
    pub fn platform_at(&self, i: &usize) -> &str {
        self.platform.get(*i).map_or("", String::as_str)
    }

    pub fn bundle_at(&self, i: &usize) -> &str {
        self.bundle.get(*i).map_or("", String::as_str)
    }

    pub fn file_at(&self, i: &usize) -> &str {
        self.file_id.get(*i).map_or("", String::as_str)
    }

    fn body(&self) -> Result<ReleaseCreate, String> {
        let product_id = self
            .product_id
            .parse()
            .map_err(|_| "Choose a product.".to_string())?;
        let mut artifacts = Vec::new();
        for (i, file) in self.file_id.iter().enumerate() {
            if file.is_empty() {
                continue;
            }
            artifacts.push(ReleaseArtifactCreate {
                platform: self.platform.get(i).cloned().unwrap_or_default(),
                bundle: self.bundle.get(i).cloned().unwrap_or_default(),
                file_id: file
                    .parse()
                    .map_err(|_| format!("File {}: not a file.", i + 1))?,
            });
        }
        Ok(ReleaseCreate {
            product_id,
            version: self.version.clone(),
            channel: Some(self.channel.clone()).filter(|c| !c.is_empty()),
            notes: Some(self.notes.clone()).filter(|n| !n.trim().is_empty()),
            backdated_to: None,
            required_benefit_ids: Vec::new(),
            minimum_system_version: None,
            build: None,
            artifacts,
        })
    }
}

#[derive(Template)]
#[template(path = "dashboard/releases.html")]
struct ReleasesPage {
    layout: Layout,
    releases: Vec<Release>,
    products: Vec<Product>,
    files: Vec<StoredFile>,
    keys: UpdateSigningKeyRead,
    pager: Pager,
    form: ReleaseForm,
    errors: Vec<String>,
    platforms: &'static [&'static str],
    bundles: Vec<&'static str>,
    rows: Vec<usize>,
}

impl ReleasesPage {
    /// The name of a product of the page.
    fn product_name(&self, r: &Release) -> String {
        self.products
            .iter()
            .find(|p| p.id == r.product_id)
            .map_or_else(|| r.product_id.to_string(), |p| p.name.clone())
    }
}

async fn render(
    dash: &Dash,
    req: &HttpRequest,
    layout: Layout,
    form: ReleaseForm,
    status: u16,
    errors: Vec<String>,
) -> PageResult {
    let state = &dash.state;
    let q = ListQuery::of(req);
    let params = q.params();
    let filter = ReleaseFilter {
        organization_id: vec![layout.org],
        ..ReleaseFilter::default()
    };
    let (releases, total) = releases::list(state, dash.subject(), &filter, params).await?;
    let choices = ListParams {
        page: 1,
        limit: CHOICES,
    };
    let product_filter = ProductFilter {
        organization_id: vec![layout.org],
        is_archived: Some(false),
        sorting: Sorting::by(ProductSort::CreatedAt, true),
        ..ProductFilter::default()
    };
    let (products, _) = products::list(state, dash.subject(), &product_filter, choices).await?;
    let file_filter = FileFilter {
        organization_id: vec![layout.org],
        ids: Vec::new(),
    };
    let (files, _) = files::list(state, dash.subject(), &file_filter, choices).await?;
    let keys = releases::signing_key(state, dash.subject(), layout.org).await?;
    let pager = Pager::new(total, params, &layout.at("/releases"), req);
    dash.page(
        status,
        &ReleasesPage {
            layout,
            releases,
            products,
            files,
            keys,
            pager,
            form,
            errors,
            platforms: PLATFORMS,
            bundles: Bundle::ALL.iter().map(|b| b.as_str()).collect(),
            rows: (0..ROWS).collect(),
        },
    )
}

pub async fn releases_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "releases", "Releases").await?;
    let form = ReleaseForm {
        channel: "stable".into(),
        ..ReleaseForm::default()
    };
    render(&dash, &req, layout, form, 200, Vec::new()).await
}

/// Creates a draft; back to the list, or the form with its problems.
pub async fn release_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let layout = dash.layout(&path, "releases", "Releases").await?;
    let form: ReleaseForm = posted(&bytes)?;
    let body = match form.body() {
        Ok(b) => b,
        Err(problem) => return render(&dash, &req, layout, form, 422, vec![problem]).await,
    };
    match releases::create(&state, dash.subject(), body.into()).await {
        Ok(r) => Ok(see_other(
            &layout.at(&format!("/releases#release-{}", r.id)),
        )),
        Err(e) => {
            let (status, errors) = form_refusal(e)?;
            render(&dash, &req, layout, form, status, errors).await
        }
    }
}

/// A release of the page's organization (else 404).
async fn release_of(dash: &Dash, layout: &Layout, id: &str) -> Result<ReleaseId, Fail> {
    let id: ReleaseId = path_id("id", id)?;
    let r = releases::get(&dash.state, dash.subject(), id).await?;
    of_org(layout, r.organization_id, id)
}

/// Publishes (signs every file) or yanks a release; refusals show on the list page.
async fn act(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
    publish: bool,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let layout = dash.layout(&path.0, "releases", "Releases").await?;
    let id = release_of(&dash, &layout, &path.1).await?;
    let done = if publish {
        releases::publish(&state, dash.subject(), id).await
    } else {
        releases::yank(&state, dash.subject(), id).await
    };
    match done {
        Ok(_) => Ok(see_other(&layout.at(&format!("/releases#release-{id}")))),
        Err(e) => {
            let (status, errors) = form_refusal(e)?;
            render(&dash, &req, layout, ReleaseForm::default(), status, errors).await
        }
    }
}

pub async fn release_publish(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    act(state, req, path, bytes, true).await
}

pub async fn release_yank(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    act(state, req, path, bytes, false).await
}
