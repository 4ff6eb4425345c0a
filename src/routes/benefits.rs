use actix_web::{web, HttpResponse};
use serde_json::Value;
use tollgate_storage::{Batch, Expect, StorageError, Stored};

use crate::api::benefit::{
    BenefitCreate, BenefitLicenseKeysProperties, BenefitUpdate, BenefitView,
};
use crate::api::{Created, ListResource};
use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::{page_of, render};
use crate::domain::benefit::{
    Benefit, BenefitProperties, BenefitType, BENEFIT_BY_TYPE, BENEFIT_OF_TYPE,
};
use crate::domain::ids::{BenefitId, OrganizationId};
use crate::error::{ApiError, ApiResult};
use crate::extract::auth::{BenefitsRead, BenefitsWrite};
use crate::extract::RawQuery;
use crate::extract::{path_id, Auth, ListParams, QueryParams, Subject, ValidJson};
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/benefits/", { get => list, post => create });
    crate::resource!(cfg, "/v1/benefits/{id}", { get => get, patch => update, delete => delete });
}

pub const DESCRIPTION_MIN: usize = 3;
pub const DESCRIPTION_MAX: usize = 42;

pub(crate) async fn list(
    auth: Auth<BenefitsRead>,
    state: web::Data<AppState>,
    query: RawQuery,
) -> ApiResult<web::Json<ListResource<BenefitView>>> {
    let mut q = QueryParams::parse(&query.0);
    let params = ListParams::from_query(&mut q);
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    let types = q.enums("type", BenefitType::ALL);
    q.finish()?;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(&state, auth.subject(), &orgs).await?;
    let (index, tenants): (&'static str, Vec<Vec<u8>>) = if types.is_empty() {
        (BENEFIT_BY_TYPE, orgs.iter().map(|o| o.key()).collect())
    } else {
        (
            BENEFIT_OF_TYPE,
            orgs.iter()
                .flat_map(|o| types.iter().map(move |t| Benefit::type_tenant(*o, *t)))
                .collect(),
        )
    };
    let (items, total) = page_of::<Benefit>(&state, index, &tenants, false, params, None).await?;
    Ok(web::Json(render(&items, total, params, |b| {
        BenefitView::from(b)
    })))
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

pub fn greater_than_zero(loc: Vec<Value>, input: i64) -> crate::error::FieldError {
    crate::error::FieldError::new(
        "greater_than",
        loc,
        "Input should be greater than 0",
        Value::from(input),
    )
    .with_ctx(serde_json::json!({"gt": 0}))
}

fn license_props(p: BenefitLicenseKeysProperties) -> BenefitProperties {
    p.into()
}

pub(crate) async fn create(
    auth: Auth<BenefitsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<BenefitCreate>,
) -> ApiResult<Created<BenefitView>> {
    let (description, organization_id, properties) = match body.into_inner() {
        BenefitCreate::Custom(c) => (c.description, c.organization_id, c.properties.into()),
        BenefitCreate::Ads(c) => (c.description, c.organization_id, c.properties.into()),
        BenefitCreate::LicenseKeys(c) => (
            c.description,
            c.organization_id,
            license_props(c.properties),
        ),
    };
    let mut v = Validator::new();
    if v.min_chars(loc!["body", "description"], &description, DESCRIPTION_MIN) {
        v.max_chars(loc!["body", "description"], &description, DESCRIPTION_MAX);
    }
    check_properties(&mut v, &properties);
    v.finish()?;
    let organization_id = organization_for_create(&state, auth.subject(), organization_id).await?;
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
    };
    let mut batch = Batch::new();
    batch.put(&benefit, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok(Created(BenefitView::from(&benefit)))
}

pub(crate) async fn get(
    auth: Auth<BenefitsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<BenefitView>> {
    let id: BenefitId = path_id("id", &id)?;
    state.store.read_barrier().await?;
    let benefit = benefit_for(&state, auth.subject(), id).await?;
    Ok(web::Json(BenefitView::from(&benefit.value)))
}

pub(crate) async fn update(
    auth: Auth<BenefitsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<BenefitUpdate>,
) -> ApiResult<web::Json<BenefitView>> {
    let id: BenefitId = path_id("id", &id)?;
    let (kind, description, properties) = match body.into_inner() {
        BenefitUpdate::Custom(u) => (
            BenefitType::Custom,
            u.description,
            u.properties.map(Into::into),
        ),
        BenefitUpdate::Ads(u) => (
            BenefitType::Ads,
            u.description,
            u.properties.map(Into::into),
        ),
        BenefitUpdate::LicenseKeys(u) => (
            BenefitType::LicenseKeys,
            u.description,
            u.properties.map(license_props),
        ),
    };
    for _ in 0..5 {
        let current = benefit_for(&state, auth.subject(), id).await?;
        if current.value.kind() != kind {
            return Err(ApiError::BadRequest(
                "The type of a benefit can't be changed.".into(),
            ));
        }
        let mut v = Validator::new();
        let mut benefit = current.value.clone();
        if let Some(d) = &description {
            if v.min_chars(loc!["body", "description"], d, DESCRIPTION_MIN)
                && v.max_chars(loc!["body", "description"], d, DESCRIPTION_MAX)
            {
                benefit.description = d.clone();
            }
        }
        if let Some(p) = &properties {
            check_properties(&mut v, p);
            benefit.properties = p.clone();
        }
        v.finish()?;
        benefit.modified_at = Some(state.now());
        let mut batch = Batch::new();
        batch.put(&benefit, Expect::Rev(current.rev))?;
        match state.store.commit_durable(&batch).await {
            Ok(_) => return Ok(web::Json(BenefitView::from(&benefit))),
            Err(StorageError::Conflict { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::Conflict(
        "The benefit is being modified concurrently; retry.".into(),
    ))
}

pub(crate) async fn delete(
    auth: Auth<BenefitsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: BenefitId = path_id("id", &id)?;
    let current = benefit_for(&state, auth.subject(), id).await?;
    if !current.value.deletable {
        return Err(ApiError::NotPermitted(
            "This benefit can't be deleted.".into(),
        ));
    }
    let mut benefit = current.value;
    let now = state.now();
    benefit.deleted_at = Some(now);
    benefit.modified_at = Some(now);
    let mut batch = Batch::new();
    batch.put(&benefit, Expect::Rev(current.rev))?;
    state.store.commit_durable(&batch).await?;
    Ok(HttpResponse::NoContent().finish())
}
