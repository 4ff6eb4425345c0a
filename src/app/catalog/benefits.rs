//! Benefits: what a product grants (a license key, a custom benefit, ads), created,
//! changed and soft-deleted by their organization.

use tollgate_storage::{Batch, Expect, Stored};

use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::page_of;
use crate::app::paging::ListParams;
use crate::auth::Subject;
use crate::domain::benefit::MeterCreditProperties;
use crate::domain::benefit::{
    Benefit, BenefitChange, BenefitProperties, BenefitType, DownloadablesProperties, NewBenefit,
    Visibility, BENEFIT_BY_TYPE, BENEFIT_OF_TYPE,
};
use crate::domain::file::{FileService, StoredFile};
use crate::domain::ids::{BenefitId, OrganizationId};
use crate::error::AppError;
use crate::state::AppState;

use super::found;

/// Which benefits a list shows: of these organizations (all the subject reaches when
/// empty), of these types (any when empty).
#[derive(Debug, Clone, Default)]
pub struct BenefitFilter {
    pub organization_id: Vec<OrganizationId>,
    pub types: Vec<BenefitType>,
}

/// One page of the benefits `subject` reaches, newest first, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &BenefitFilter,
    params: ListParams,
) -> Result<(Vec<Benefit>, u64), AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let (index, tenants): (&'static str, Vec<Vec<u8>>) = if filter.types.is_empty() {
        (BENEFIT_BY_TYPE, orgs.iter().map(|o| o.key()).collect())
    } else {
        (
            BENEFIT_OF_TYPE,
            orgs.iter()
                .flat_map(|o| {
                    filter
                        .types
                        .iter()
                        .map(move |t| Benefit::type_tenant(*o, *t))
                })
                .collect(),
        )
    };
    page_of::<Benefit>(state, index, &tenants, false, params, None).await
}

/// A benefit the subject may see, the writes so far included (`GET /v1/benefits/{id}`).
pub async fn get(state: &AppState, subject: Subject, id: BenefitId) -> Result<Benefit, AppError> {
    state.store.read_barrier().await?;
    Ok(benefit_for(state, subject, id).await?.value)
}

/// A benefit the subject may see, else 404.
pub async fn benefit_for(
    state: &AppState,
    subject: Subject,
    id: BenefitId,
) -> Result<Stored<Benefit>, AppError> {
    match state.store.get::<Benefit>(&id.key()).await? {
        Some(b)
            if b.value.deleted_at.is_none()
                && can_access(state, subject, b.value.organization_id).await? =>
        {
            Ok(b)
        }
        _ => Err(AppError::not_found()),
    }
}

/// Creates a benefit in an organization `subject` reaches.
pub async fn create(
    state: &AppState,
    subject: Subject,
    new: NewBenefit,
) -> Result<Benefit, AppError> {
    let NewBenefit {
        organization_id,
        description,
        properties,
        metadata,
        visibility,
    } = new;
    let organization_id = organization_for_create(state, subject, organization_id).await?;
    let properties_kind = properties.kind();
    let now = state.now();
    let properties = match properties {
        BenefitProperties::Downloadables(p) => {
            check_files(state, organization_id, &p).await?;
            BenefitProperties::Downloadables(stamped(p, None, now))
        }
        BenefitProperties::MeterCredit(m) => {
            check_meter(state, organization_id, &m).await?;
            BenefitProperties::MeterCredit(m)
        }
        other => other,
    };
    let benefit = Benefit {
        id: BenefitId::new(),
        organization_id,
        created_at: now,
        modified_at: None,
        description,
        selectable: true,
        deletable: true,
        properties,
        deleted_at: None,
        // Only a feature flag's visibility is configurable (the adapter refuses others).
        visibility: if properties_kind == BenefitType::FeatureFlag {
            visibility
        } else {
            Visibility::Public
        },
        metadata,
    };
    let mut batch = Batch::new();
    batch.put(&benefit, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok(benefit)
}

/// The benefit `id` as a change naming `kind` finds it: 404 when the subject can't see it,
/// 400 when it is of another type. An adapter asks this before it reads the change's
/// fields (their 422s come after).
pub async fn changeable(
    state: &AppState,
    subject: Subject,
    id: BenefitId,
    kind: BenefitType,
) -> Result<Benefit, AppError> {
    let current = benefit_for(state, subject, id).await?.value;
    check_kind(&current, kind)?;
    Ok(current)
}

fn check_kind(current: &Benefit, kind: BenefitType) -> Result<(), AppError> {
    if current.kind() != kind {
        return Err(AppError::bad_request(
            "The type of a benefit can't be changed.",
        ));
    }
    Ok(())
}

/// Changes a benefit's description, properties, metadata or (a feature flag's) visibility
/// (never its type).
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: BenefitId,
    change: BenefitChange,
) -> Result<Benefit, AppError> {
    let before = benefit_for(state, subject, id).await?.value;
    if let Some(BenefitProperties::Downloadables(p)) = &change.properties {
        check_kind(&before, change.kind)?;
        check_files(state, before.organization_id, p).await?;
    }
    if let Some(BenefitProperties::MeterCredit(m)) = &change.properties {
        check_kind(&before, change.kind)?;
        check_meter(state, before.organization_id, m).await?;
    }
    let now = state.now();
    let updated = state
        .store
        .update::<Benefit, AppError>(&id.key(), async |current| {
            if current.deleted_at.is_some() {
                return Err(AppError::not_found());
            }
            check_kind(current, change.kind)?;
            let mut benefit = current.clone();
            if let Some(d) = &change.description {
                benefit.description = d.clone();
            }
            if let Some(p) = &change.properties {
                let mut p = p.clone();
                // Properties without `allow_customer_rotation`, `grace_days` or `quantity`
                // keep the benefit's settings.
                if let (BenefitProperties::LicenseKeys(new), BenefitProperties::LicenseKeys(old)) =
                    (&mut p, &current.properties)
                {
                    if !change.rotation_given {
                        new.allow_customer_rotation = old.allow_customer_rotation;
                    }
                    if !change.grace_given {
                        new.grace_days = old.grace_days;
                    }
                    if !change.quantity_given {
                        new.quantity = old.quantity;
                    }
                }
                // A file archived before keeps the time it was archived.
                if let BenefitProperties::Downloadables(new) = p {
                    let previous = match &current.properties {
                        BenefitProperties::Downloadables(old) => Some(old),
                        _ => None,
                    };
                    p = BenefitProperties::Downloadables(stamped(new, previous, now));
                }
                benefit.properties = p;
            }
            if let Some(m) = &change.metadata {
                benefit.metadata = m.clone();
            }
            if let Some(vis) = change.visibility {
                if current.kind() == BenefitType::FeatureFlag {
                    benefit.visibility = vis;
                }
            }
            benefit.modified_at = Some(now);
            Ok(Some(benefit))
        })
        .await?;
    found(updated)
}

/// Properties a body asked for (their archive times unknown), with the times: a file
/// archived before keeps its time, one archived now gets `now`.
fn stamped(
    p: DownloadablesProperties,
    previous: Option<&DownloadablesProperties>,
    now: chrono::DateTime<chrono::Utc>,
) -> DownloadablesProperties {
    let archived: Vec<_> = p.archived.iter().map(|(f, _)| (*f, true)).collect();
    DownloadablesProperties::from_wire(p.files, &archived, previous, now)
}

/// Every file of a downloadables benefit must be a `downloadable` file of the benefit's
/// organization, uploaded (Polar's 422 "File not found." at the file's index).
async fn check_files(
    state: &AppState,
    organization_id: OrganizationId,
    p: &DownloadablesProperties,
) -> Result<(), AppError> {
    for (i, id) in p.files.iter().enumerate() {
        let usable = state
            .store
            .get::<StoredFile>(&id.key())
            .await?
            .is_some_and(|f| {
                f.value.organization_id == organization_id
                    && f.value.service == FileService::Downloadable
                    && f.value.is_uploaded()
            });
        if !usable {
            return Err(AppError::invalid(
                crate::field!["properties", "files", i],
                "File not found.",
                id.0,
            ));
        }
    }
    Ok(())
}

/// The meter a `meter_credit` benefit credits must be one of the benefit's organization
/// (Polar's 422 "This meter does not exist." at `properties.meter_id`).
async fn check_meter(
    state: &AppState,
    organization_id: OrganizationId,
    m: &MeterCreditProperties,
) -> Result<(), AppError> {
    if super::meter_references::meter_of(state, organization_id, m.meter_id)
        .await?
        .is_none()
    {
        return Err(AppError::invalid(
            crate::field!["properties", "meter_id"],
            "This meter does not exist.",
            m.meter_id.0,
        ));
    }
    Ok(())
}

/// Soft-deletes a benefit (one marked deletable).
pub async fn delete(state: &AppState, subject: Subject, id: BenefitId) -> Result<(), AppError> {
    benefit_for(state, subject, id).await?;
    let now = state.now();
    state
        .store
        .update::<Benefit, AppError>(&id.key(), async |current| {
            if current.deleted_at.is_some() {
                return Err(AppError::not_found());
            }
            if !current.deletable {
                return Err(AppError::not_permitted("This benefit can't be deleted."));
            }
            let mut benefit = current.clone();
            benefit.deleted_at = Some(now);
            benefit.modified_at = Some(now);
            Ok(Some(benefit))
        })
        .await?;
    Ok(())
}

#[cfg(test)]
#[path = "benefits_tests.rs"]
mod tests;
