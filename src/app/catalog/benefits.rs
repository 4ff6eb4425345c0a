//! Benefits: what a product grants (a license key, a custom benefit, ads), created,
//! changed and soft-deleted by their organization.

use serde_json::Value;
use tollgate_storage::{Batch, Expect, Stored};

use crate::api::benefit::{BenefitCreate, BenefitUpdate};
use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::page_of;
use crate::app::paging::ListParams;
use crate::auth::Subject;
use crate::domain::benefit::{
    Benefit, BenefitProperties, BenefitType, BENEFIT_BY_TYPE, BENEFIT_OF_TYPE,
};
use crate::domain::ids::{BenefitId, OrganizationId};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

use super::found;
use super::products::body_metadata;

pub const DESCRIPTION_MIN: usize = 3;
pub const DESCRIPTION_MAX: usize = 42;

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
) -> Result<(Vec<Benefit>, u64), ApiError> {
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
    Ok(page_of::<Benefit>(state, index, &tenants, false, params, None).await?)
}

/// A benefit the subject may see, else 404.
pub async fn benefit_for(
    state: &AppState,
    subject: Subject,
    id: BenefitId,
) -> Result<Stored<Benefit>, ApiError> {
    match state.store.get::<Benefit>(&id.key()).await? {
        Some(b)
            if b.value.deleted_at.is_none()
                && can_access(state, subject, b.value.organization_id).await? =>
        {
            Ok(b)
        }
        _ => Err(ApiError::not_found()),
    }
}

/// `grace_days` as given in a license-key body: 0 to `MAX_GRACE_DAYS`.
fn check_grace_days(v: &mut Validator, given: Option<i64>) {
    if let Some(d) = given {
        v.int_range(
            loc!["body", "properties", "grace_days"],
            d,
            Some(0),
            Some(i64::from(crate::domain::benefit::MAX_GRACE_DAYS)),
        );
    }
}

fn check_properties(v: &mut Validator, p: &BenefitProperties) {
    if let BenefitProperties::LicenseKeys(k) = p {
        if let Some(e) = &k.expires {
            if e.ttl <= 0 {
                v.push(greater_than_zero(
                    loc!["body", "properties", "expires", "ttl"],
                    e.ttl,
                ));
            }
        }
        if let Some(a) = &k.activations {
            if a.limit <= 0 {
                v.push(greater_than_zero(
                    loc!["body", "properties", "activations", "limit"],
                    a.limit,
                ));
            } else {
                v.int_range(
                    loc!["body", "properties", "activations", "limit"],
                    a.limit,
                    None,
                    Some(50),
                );
            }
        }
        if let Some(n) = k.limit_usage {
            if n <= 0 {
                v.push(greater_than_zero(
                    loc!["body", "properties", "limit_usage"],
                    n,
                ));
            }
        }
    }
}

pub fn greater_than_zero(loc: Vec<Value>, input: i64) -> FieldError {
    FieldError::new(
        "greater_than",
        loc,
        "Input should be greater than 0",
        Value::from(input),
    )
    .with_ctx(serde_json::json!({"gt": 0}))
}

/// Polar's rule for the benefit types whose visibility is not configurable (all of
/// Tollgate's): only `public`.
fn check_visibility(v: &mut Validator, visibility: Option<&str>) {
    if let Some(other) = visibility.filter(|x| *x != "public") {
        v.push(FieldError::new(
            "value_error",
            loc!["body", "visibility"],
            "Visibility is not configurable for this benefit type and must be public.",
            other.into(),
        ));
    }
}

/// Creates a benefit in an organization `subject` reaches.
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: BenefitCreate,
) -> Result<Benefit, ApiError> {
    let grace_given = match &input {
        BenefitCreate::LicenseKeys(c) => c.properties.grace_days,
        _ => None,
    };
    let (description, organization_id, properties, metadata, visibility) = match input {
        BenefitCreate::Custom(c) => (
            c.description,
            c.organization_id,
            c.properties.into(),
            c.metadata,
            c.visibility,
        ),
        BenefitCreate::Ads(c) => (
            c.description,
            c.organization_id,
            c.properties.into(),
            c.metadata,
            c.visibility,
        ),
        BenefitCreate::LicenseKeys(c) => (
            c.description,
            c.organization_id,
            c.properties.into(),
            c.metadata,
            c.visibility,
        ),
    };
    let mut v = Validator::new();
    check_visibility(&mut v, visibility.as_deref());
    let metadata = body_metadata(&mut v, &metadata, false).unwrap_or_default();
    if v.min_chars(loc!["body", "description"], &description, DESCRIPTION_MIN) {
        v.max_chars(loc!["body", "description"], &description, DESCRIPTION_MAX);
    }
    check_properties(&mut v, &properties);
    check_grace_days(&mut v, grace_given);
    v.finish()?;
    let organization_id = organization_for_create(state, subject, organization_id).await?;
    let benefit = Benefit {
        id: BenefitId::new(),
        organization_id,
        created_at: state.now(),
        modified_at: None,
        description,
        selectable: true,
        deletable: true,
        properties,
        deleted_at: None,
        metadata,
    };
    let mut batch = Batch::new();
    batch.put(&benefit, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok(benefit)
}

/// Changes a benefit's description or properties (never its type).
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: BenefitId,
    input: BenefitUpdate,
) -> Result<Benefit, ApiError> {
    // Properties without `allow_customer_rotation` or `grace_days` keep the benefit's
    // settings.
    let mut rotation_given = false;
    let mut grace_given = None;
    let (kind, description, properties, metadata, visibility): (
        _,
        _,
        Option<BenefitProperties>,
        _,
        _,
    ) = match input {
        BenefitUpdate::Custom(u) => (
            BenefitType::Custom,
            u.description,
            u.properties.map(Into::into),
            u.metadata,
            u.visibility,
        ),
        BenefitUpdate::Ads(u) => (
            BenefitType::Ads,
            u.description,
            u.properties.map(Into::into),
            u.metadata,
            u.visibility,
        ),
        BenefitUpdate::LicenseKeys(u) => {
            rotation_given = u
                .properties
                .as_ref()
                .is_some_and(|p| p.allow_customer_rotation.is_some());
            grace_given = u.properties.as_ref().and_then(|p| p.grace_days);
            (
                BenefitType::LicenseKeys,
                u.description,
                u.properties.map(Into::into),
                u.metadata,
                u.visibility,
            )
        }
    };
    benefit_for(state, subject, id).await?;
    let now = state.now();
    let updated = state
        .store
        .update::<Benefit, ApiError>(&id.key(), async |current| {
            if current.deleted_at.is_some() {
                return Err(ApiError::not_found());
            }
            if current.kind() != kind {
                return Err(ApiError::BadRequest(
                    "The type of a benefit can't be changed.".into(),
                ));
            }
            let mut v = Validator::new();
            let mut benefit = current.clone();
            if let Some(d) = &description {
                if v.min_chars(loc!["body", "description"], d, DESCRIPTION_MIN)
                    && v.max_chars(loc!["body", "description"], d, DESCRIPTION_MAX)
                {
                    benefit.description = d.clone();
                }
            }
            if let Some(p) = &properties {
                check_properties(&mut v, p);
                check_grace_days(&mut v, grace_given);
                let mut p = p.clone();
                if let (BenefitProperties::LicenseKeys(new), BenefitProperties::LicenseKeys(old)) =
                    (&mut p, &current.properties)
                {
                    if !rotation_given {
                        new.allow_customer_rotation = old.allow_customer_rotation;
                    }
                    if grace_given.is_none() {
                        new.grace_days = old.grace_days;
                    }
                }
                benefit.properties = p;
            }
            check_visibility(&mut v, visibility.as_deref());
            if let Some(m) = body_metadata(&mut v, &metadata, true) {
                benefit.metadata = m;
            }
            v.finish()?;
            benefit.modified_at = Some(now);
            Ok(Some(benefit))
        })
        .await?;
    found(updated)
}

/// Soft-deletes a benefit (one marked deletable).
pub async fn delete(state: &AppState, subject: Subject, id: BenefitId) -> Result<(), ApiError> {
    benefit_for(state, subject, id).await?;
    let now = state.now();
    state
        .store
        .update::<Benefit, ApiError>(&id.key(), async |current| {
            if current.deleted_at.is_some() {
                return Err(ApiError::not_found());
            }
            if !current.deletable {
                return Err(ApiError::NotPermitted(
                    "This benefit can't be deleted.".into(),
                ));
            }
            let mut benefit = current.clone();
            benefit.deleted_at = Some(now);
            benefit.modified_at = Some(now);
            Ok(Some(benefit))
        })
        .await?;
    Ok(())
}
