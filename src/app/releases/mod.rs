//! Releases of a product (Tollgate's extension): drafts with their files per platform,
//! published once every file is uploaded and signed, yanked to withdraw them; the
//! organization's update-signing public keys; and the update feeds a license key reads
//! (`feed`).
//!
//! Tenancy is the product's: a release of an organization the subject does not reach is
//! 404. Signatures are computed once, at publish (`sign`).

pub mod feed;
pub mod sign;

use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Expect, StorageError, Stored};

use crate::api::releases::{ReleaseRead, UpdateSigningKeyRead};
use crate::app::access::{can_access, organizations_for_list};
use crate::app::listing::page_of;
use crate::app::paging::ListParams;
use crate::auth::Subject;
use crate::domain::benefit::{Benefit, BenefitType};
use crate::domain::file::StoredFile;
use crate::domain::ids::{BenefitId, OrganizationId, ProductId, ReleaseId};
use crate::domain::product::Product;
use crate::domain::release::{
    os_of, parse_version, Bundle, Channel, NewArtifact, NewRelease, Release, ReleaseArtifact,
    ReleaseChange, ReleaseStatus, PLATFORMS, RELEASE_OF_ORG,
};
use crate::error::{AppError, Given};
use crate::field;
use crate::state::AppState;

/// The release `id` if `subject` reaches its organization, else 404.
async fn release_for(
    state: &AppState,
    subject: Subject,
    id: ReleaseId,
) -> Result<Stored<Release>, AppError> {
    match state.store.get::<Release>(&id.key()).await? {
        Some(r) if can_access(state, subject, r.value.organization_id).await? => Ok(r),
        _ => Err(AppError::not_found()),
    }
}

fn channel_of(given: Option<&str>) -> Result<Channel, AppError> {
    match given {
        None => Ok(Channel::Stable),
        Some(s) => Channel::parse(s).ok_or_else(|| {
            AppError::invalid(
                field!["channel"],
                "Input should be 'stable', 'beta' or 'alpha'",
                s,
            )
        }),
    }
}

/// The artifacts of a body, checked: known platforms and bundles that fit them, one per
/// platform and bundle, each an uploaded-or-pending file of `org`.
async fn artifacts_of(
    state: &AppState,
    org: OrganizationId,
    given: &[NewArtifact],
) -> Result<Vec<ReleaseArtifact>, AppError> {
    let mut out: Vec<ReleaseArtifact> = Vec::with_capacity(given.len());
    for (i, a) in given.iter().enumerate() {
        if !PLATFORMS.contains(&a.platform.as_str()) {
            return Err(AppError::invalid(
                field!["artifacts", i, "platform"],
                format!("Input should be one of: {}", PLATFORMS.join(", ")),
                &a.platform,
            ));
        }
        let bundle = Bundle::parse(&a.bundle)
            .filter(|b| b.fits(os_of(&a.platform)))
            .ok_or_else(|| {
                AppError::invalid(
                    field!["artifacts", i, "bundle"],
                    format!("Not a bundle for {}.", a.platform),
                    &a.bundle,
                )
            })?;
        if out
            .iter()
            .any(|o| o.platform == a.platform && o.bundle == bundle)
        {
            return Err(AppError::invalid(
                field!["artifacts", i],
                "One file per platform and bundle.",
                Given::none(),
            ));
        }
        let file_id = a.file_id;
        let file = state.store.get::<StoredFile>(&file_id.key()).await?;
        let Some(file) = file.filter(|f| f.value.organization_id == org) else {
            return Err(AppError::invalid(
                field!["artifacts", i, "file_id"],
                "File not found.",
                a.file_id.0,
            ));
        };
        out.push(ReleaseArtifact {
            platform: a.platform.clone(),
            bundle,
            file_id,
            name: file.value.name.clone(),
            size: file.value.size,
            sha512: Vec::new(),
            signatures: None,
        });
    }
    Ok(out)
}

/// The required benefits of a body: feature-flag benefits of `org`.
async fn required_of(
    state: &AppState,
    org: OrganizationId,
    ids: &[BenefitId],
) -> Result<Vec<BenefitId>, AppError> {
    let mut out = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        let b = state.store.get::<Benefit>(&id.key()).await?;
        let ok = b.is_some_and(|b| {
            b.value.organization_id == org
                && b.value.deleted_at.is_none()
                && b.value.kind() == BenefitType::FeatureFlag
        });
        if !ok {
            return Err(AppError::invalid(
                field!["required_benefit_ids", i],
                "Not a feature-flag benefit of the organization.",
                id.0,
            ));
        }
        if !out.contains(id) {
            out.push(*id);
        }
    }
    Ok(out)
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// `POST /v1/releases/`: a draft release of a product the subject reaches.
pub async fn create(
    state: &AppState,
    subject: Subject,
    body: NewRelease,
) -> Result<ReleaseRead, AppError> {
    let product_id = body.product_id;
    let product = match state.store.get::<Product>(&product_id.key()).await? {
        Some(p) if can_access(state, subject, p.value.organization_id).await? => p.value,
        _ => {
            return Err(AppError::invalid(
                field!["product_id"],
                "Product not found.",
                body.product_id.0,
            ))
        }
    };
    let version = parse_version(&body.version)
        .map_err(|m| AppError::invalid(field!["version"], m, &body.version))?
        .to_string();
    let channel = channel_of(body.channel.as_deref())?;
    let org = product.organization_id;
    let artifacts = artifacts_of(state, org, &body.artifacts).await?;
    let required_benefits = required_of(state, org, &body.required_benefits).await?;
    let release = Release {
        id: ReleaseId::new(),
        organization_id: org,
        product_id,
        version,
        channel,
        notes: non_empty(body.notes),
        status: ReleaseStatus::Draft,
        created_at: state.now(),
        modified_at: None,
        published_at: None,
        yanked_at: None,
        backdated_to: body.backdated_to,
        required_benefits,
        minimum_system_version: non_empty(body.minimum_system_version),
        build: non_empty(body.build),
        artifacts,
    };
    let mut batch = Batch::new();
    batch.put(&release, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => Ok((&release).into()),
        Err(StorageError::Unique { .. }) => Err(AppError::invalid(
            field!["version"],
            "The product has a release of this version.",
            &body.version,
        )),
        Err(e) => Err(e.into()),
    }
}

/// `GET /v1/releases/{id}`.
pub async fn get(state: &AppState, subject: Subject, id: ReleaseId) -> Result<Release, AppError> {
    Ok(release_for(state, subject, id).await?.value)
}

/// The filters of `GET /v1/releases/`.
#[derive(Debug, Clone, Default)]
pub struct ReleaseFilter {
    pub organization_id: Vec<OrganizationId>,
    pub product_id: Vec<ProductId>,
    pub channel: Vec<Channel>,
}

/// `GET /v1/releases/`: newest first.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &ReleaseFilter,
    params: ListParams,
) -> Result<(Vec<Release>, u64), AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    let keep = |r: &Release| {
        (filter.product_id.is_empty() || filter.product_id.contains(&r.product_id))
            && (filter.channel.is_empty() || filter.channel.contains(&r.channel))
    };
    let filtered = !filter.product_id.is_empty() || !filter.channel.is_empty();
    let only: Option<&dyn Fn(&Release) -> bool> = if filtered { Some(&keep) } else { None };
    page_of::<Release>(state, RELEASE_OF_ORG, &tenants, true, params, only).await
}

/// Changes release `id` by compare-and-swap with `apply` (which may refuse).
async fn change(
    state: &AppState,
    id: ReleaseId,
    apply: impl Fn(&Release, DateTime<Utc>) -> Result<Option<Release>, AppError>,
) -> Result<Release, AppError> {
    let now = state.now();
    let updated = state
        .store
        .update::<Release, AppError>(&id.key(), async |current| apply(current, now))
        .await?;
    match updated {
        Some(r) => Ok(r),
        None => state
            .store
            .get::<Release>(&id.key())
            .await?
            .map(|r| r.value)
            .ok_or_else(AppError::not_found),
    }
}

/// `PATCH /v1/releases/{id}`: absent fields stay; the files only of a draft.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: ReleaseId,
    patch: ReleaseChange,
) -> Result<Release, AppError> {
    let current = release_for(state, subject, id).await?.value;
    let org = current.organization_id;
    let channel = match &patch.channel {
        Some(c) => Some(channel_of(Some(c))?),
        None => None,
    };
    let artifacts = match &patch.artifacts {
        Some(_) if current.status != ReleaseStatus::Draft => {
            return Err(AppError::not_permitted(
                "Only a draft release's files can change.",
            ));
        }
        Some(a) => Some(artifacts_of(state, org, a).await?),
        None => None,
    };
    let required = match &patch.required_benefits {
        Some(ids) => Some(required_of(state, org, ids).await?),
        None => None,
    };
    change(state, id, |r, now| {
        let mut next = r.clone();
        if let Some(c) = channel {
            next.channel = c;
        }
        if patch.notes.is_some() {
            next.notes = non_empty(patch.notes.clone());
        }
        if patch.backdated_to.is_some() {
            next.backdated_to = patch.backdated_to;
        }
        if let Some(req) = &required {
            next.required_benefits = req.clone();
        }
        if patch.minimum_system_version.is_some() {
            next.minimum_system_version = non_empty(patch.minimum_system_version.clone());
        }
        if patch.build.is_some() {
            next.build = non_empty(patch.build.clone());
        }
        if let Some(a) = &artifacts {
            if r.status != ReleaseStatus::Draft {
                return Err(AppError::not_permitted(
                    "Only a draft release's files can change.",
                ));
            }
            next.artifacts = a.clone();
        }
        if next == *r {
            return Ok(None);
        }
        next.modified_at = Some(now);
        Ok(Some(next))
    })
    .await
}

/// `DELETE /v1/releases/{id}`: drafts only (a published release is yanked instead).
pub async fn delete(state: &AppState, subject: Subject, id: ReleaseId) -> Result<(), AppError> {
    let r = release_for(state, subject, id).await?;
    if r.value.status != ReleaseStatus::Draft {
        return Err(AppError::not_permitted(
            "Only a draft release can be deleted; yank a published one.",
        ));
    }
    let mut batch = Batch::new();
    batch.delete::<Release>(&id.key(), Expect::Rev(r.rev));
    match state.store.commit_durable(&batch).await {
        Ok(_) => Ok(()),
        Err(StorageError::Conflict { .. }) => Err(AppError::conflict(
            "The release changed meanwhile; try again.",
        )),
        Err(e) => Err(e.into()),
    }
}

/// `POST /v1/releases/{id}/publish`: every file must be an uploaded file of the
/// organization; each is signed with the organization's update-signing key (made now if
/// it has none), then the release is published. Publishing a published release answers
/// it unchanged; a yanked one cannot come back.
pub async fn publish(
    state: &AppState,
    subject: Subject,
    id: ReleaseId,
) -> Result<Release, AppError> {
    let current = release_for(state, subject, id).await?.value;
    match current.status {
        ReleaseStatus::Published => return Ok(current),
        ReleaseStatus::Yanked => {
            return Err(AppError::not_permitted(
                "A yanked release cannot be published again.",
            ))
        }
        ReleaseStatus::Draft => {}
    }
    if current.artifacts.is_empty() {
        return Err(AppError::invalid(
            field!["artifacts"],
            "A release needs at least one file to be published.",
            Given::none(),
        ));
    }
    let mut files = Vec::with_capacity(current.artifacts.len());
    for (i, a) in current.artifacts.iter().enumerate() {
        let f = state.store.get::<StoredFile>(&a.file_id.key()).await?;
        match f {
            Some(f)
                if f.value.organization_id == current.organization_id && f.value.is_uploaded() =>
            {
                files.push(f.value)
            }
            _ => {
                return Err(AppError::invalid(
                    field!["artifacts", i, "file_id"],
                    "The file is not uploaded (or was deleted).",
                    a.file_id.0,
                ))
            }
        }
    }
    if files
        .iter()
        .enumerate()
        .any(|(i, f)| files[..i].iter().any(|g| g.name == f.name))
    {
        return Err(AppError::invalid(
            field!["artifacts"],
            "The release's files must have different names (their links end with them).",
            Given::none(),
        ));
    }
    let key = sign::ensure_key(state, current.organization_id)
        .await?
        .ok_or_else(AppError::not_found)?;
    let mut signed = Vec::with_capacity(files.len());
    for (a, f) in current.artifacts.iter().zip(&files) {
        let signatures = sign::sign_file(state, &key, f, &current.version).await?;
        let sha512 = match &f.state {
            crate::domain::file::FileState::Uploaded { sha512, .. } => sha512.clone(),
            crate::domain::file::FileState::Pending { .. } => Vec::new(),
        };
        signed.push(ReleaseArtifact {
            platform: a.platform.clone(),
            bundle: a.bundle,
            file_id: a.file_id,
            name: f.name.clone(),
            size: f.size,
            sha512,
            signatures: Some(signatures),
        });
    }
    change(state, id, |r, now| {
        let same_files = r.artifacts.len() == signed.len()
            && r.artifacts
                .iter()
                .zip(&signed)
                .all(|(a, s)| a.file_id == s.file_id && a.platform == s.platform);
        if r.status != ReleaseStatus::Draft || !same_files {
            return Err(AppError::conflict(
                "The release changed while it was being published; try again.",
            ));
        }
        let mut next = r.clone();
        next.artifacts = signed.clone();
        next.status = ReleaseStatus::Published;
        next.published_at = Some(now);
        next.modified_at = Some(now);
        Ok(Some(next))
    })
    .await
}

/// `POST /v1/releases/{id}/yank`: a published release leaves every feed and its links
/// stop at once; yanking a yanked release answers it unchanged.
pub async fn yank(state: &AppState, subject: Subject, id: ReleaseId) -> Result<Release, AppError> {
    release_for(state, subject, id).await?;
    change(state, id, |r, now| match r.status {
        ReleaseStatus::Yanked => Ok(None),
        ReleaseStatus::Draft => Err(AppError::not_permitted(
            "A draft release is deleted, not yanked.",
        )),
        ReleaseStatus::Published => {
            let mut next = r.clone();
            next.status = ReleaseStatus::Yanked;
            next.yanked_at = Some(now);
            next.modified_at = Some(now);
            Ok(Some(next))
        }
    })
    .await
}

/// `GET /v1/releases/signing-key?organization_id=`: the public keys to embed in an
/// application (the key is made on first use).
pub async fn signing_key(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
) -> Result<UpdateSigningKeyRead, AppError> {
    if !can_access(state, subject, org).await? {
        return Err(AppError::not_found());
    }
    let key = sign::ensure_key(state, org)
        .await?
        .ok_or_else(AppError::not_found)?;
    let signer = sign::signer_of(&key)?;
    Ok(UpdateSigningKeyRead {
        organization_id: org.0,
        sparkle_public_ed_key: signer.sparkle_public_key(),
        tauri_pubkey: signer.tauri_public_key(),
        minisign_public_key: signer.minisign_public_key(),
        created_at: key.created_at,
    })
}
