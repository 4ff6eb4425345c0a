//! Organizations: a user creates one (and becomes its member), lists the ones it belongs to
//! (an organization token: only its own), and changes their profile and settings.

use serde_json::Value;
use tollgate_storage::{Batch, Expect, StorageError};

use crate::api::organization::{OrganizationCreate, OrganizationUpdate};
use crate::api::Maybe;
use crate::app::access::organization_for;
use crate::app::listing::{compare_times, directed, sorted_page_of};
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::auth::Subject;
use crate::domain::ids::OrganizationId;
use crate::domain::membership::{Membership, MEMBER_ORGS_BY_CREATED, MEMBER_ORGS_BY_SLUG};
use crate::domain::organization::{
    parse_slug, FeatureSettings, Organization, SlugError, SubscribeSettings,
};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

use super::found;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OrgSort {
    CreatedAt,
    /// Polar's `name` sorts by slug.
    Name,
}

impl SortField for OrgSort {
    const FIELDS: &'static [(&'static str, OrgSort)] =
        &[("created_at", OrgSort::CreatedAt), ("name", OrgSort::Name)];

    /// Slugs are unique.
    fn is_unique(self) -> bool {
        self == OrgSort::Name
    }
}

/// Which organizations a list shows: the one with this slug, or all the subject reaches,
/// in this order.
#[derive(Debug, Clone)]
pub struct OrganizationFilter {
    pub slug: Option<String>,
    pub sorting: Sorting<OrgSort>,
}

impl Default for OrganizationFilter {
    fn default() -> Self {
        Self {
            slug: None,
            sorting: Sorting::by(OrgSort::CreatedAt, false),
        }
    }
}

/// One page of the organizations `subject` reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &OrganizationFilter,
    params: ListParams,
) -> Result<(Vec<Organization>, u64), ApiError> {
    let sorting = &filter.sorting;
    state.store.read_barrier().await?;

    let (orgs, total) = match (subject, filter.slug.clone()) {
        // A slug names at most one organization: look it up, then check access.
        (subject, Some(slug)) => {
            let found = match state
                .store
                .lookup_unique(&Organization::slug_key(&slug))
                .await?
                .and_then(|id| OrganizationId::from_key(&id))
            {
                Some(id) => organization_for(state, subject, id).await.ok(),
                None => None,
            };
            let all: Vec<Organization> = found.into_iter().map(|s| s.value).collect();
            let total = all.len() as u64;
            (
                all.into_iter().skip(params.offset() as usize).collect(),
                total,
            )
        }
        (Subject::Organization(own) | Subject::UserIn(_, own), None) => {
            let all: Vec<Organization> = organization_for(state, subject, own)
                .await
                .into_iter()
                .map(|s| s.value)
                .collect();
            let total = all.len() as u64;
            (
                all.into_iter().skip(params.offset() as usize).collect(),
                total,
            )
        }
        (Subject::User(user), None) => {
            // The user's memberships carry the organizations' sort fields: the first
            // criterion is served by an index (equal values follow the id), the others in
            // memory.
            let (field, desc) = sorting.primary();
            let index = match field {
                OrgSort::CreatedAt => MEMBER_ORGS_BY_CREATED,
                OrgSort::Name => MEMBER_ORGS_BY_SLUG,
            };
            let several = sorting.several(|field, desc, a: &Membership, b: &Membership| {
                let ordering = match field {
                    OrgSort::CreatedAt => {
                        compare_times(&a.organization_created_at, &b.organization_created_at)
                    }
                    OrgSort::Name => a.organization_slug.cmp(&b.organization_slug),
                };
                directed(ordering, desc)
            });
            let (memberships, total) = sorted_page_of::<Membership>(
                state,
                index,
                &[user.key()],
                desc,
                params,
                None,
                several.as_deref(),
            )
            .await?;
            let ids: Vec<Vec<u8>> = memberships
                .iter()
                .map(|m| m.organization_id.key())
                .collect();
            let orgs: Vec<Organization> = state
                .store
                .get_many::<Organization>(&ids)
                .await?
                .into_iter()
                .map(|s| s.value)
                .collect();
            (orgs, total)
        }
        (Subject::Anonymous | Subject::Customer(_) | Subject::Purchase(..), None) => {
            return Err(ApiError::Unauthorized)
        }
    };
    Ok((
        orgs.into_iter().take(params.limit as usize).collect(),
        total,
    ))
}

fn slug_error(e: SlugError, input: &str) -> FieldError {
    let msg = match e {
        SlugError::TooShort => {
            return FieldError::new(
                "string_too_short",
                loc!["body", "slug"],
                "String should have at least 3 characters",
                Value::from(input),
            )
            .with_ctx(serde_json::json!({"min_length": 3}))
        }
        SlugError::NotASlug => {
            "Value error, The slug can only contain ASCII letters, numbers and hyphens."
        }
        SlugError::Reserved => "Value error, This slug is reserved.",
    };
    FieldError::new("value_error", loc!["body", "slug"], msg, Value::from(input))
}

fn slug_taken(slug: &str) -> ApiError {
    ApiError::invalid(
        loc!["body", "slug"],
        "An organization with this slug already exists.",
        Value::from(slug),
    )
}

/// Creates an organization; the user who creates it is its first member.
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: OrganizationCreate,
) -> Result<Organization, ApiError> {
    let Some(user) = subject.user() else {
        return Err(ApiError::Unauthorized);
    };
    let mut v = Validator::new();
    let name = input.name.trim().to_string();
    if v.min_chars(loc!["body", "name"], &name, 3) {
        v.header_safe(loc!["body", "name"], &name);
    }
    let slug = match parse_slug(&input.slug) {
        Ok(s) => Some(s),
        Err(e) => {
            v.push(slug_error(e, &input.slug));
            None
        }
    };
    if let Some(url) = &input.avatar_url {
        v.http_url(loc!["body", "avatar_url"], url);
    }
    if let Some(s) = &input.subscription_settings {
        s.check_supported(&mut v, loc!["body", "subscription_settings"]);
    }
    v.finish()?;
    let Some(slug) = slug else {
        return Err(ApiError::internal("slug validated but missing"));
    };
    if state
        .store
        .lookup_unique(&Organization::slug_key(&slug))
        .await?
        .is_some()
    {
        return Err(slug_taken(&slug));
    }

    let now = state.now();
    let mut org = Organization::new(OrganizationId::new(), name, slug.clone(), now);
    org.avatar_url = input.avatar_url;
    if let Some(f) = input.feature_settings {
        org.feature_settings = FeatureSettings {
            issue_funding_enabled: Some(f.issue_funding_enabled),
        };
    }
    if let Some(s) = input.subscription_settings {
        org.subscription_settings = (&s).into();
        org.prevent_trial_abuse = s.prevent_trial_abuse;
    }
    let membership = Membership {
        user_id: user,
        organization_id: org.id,
        organization_created_at: org.created_at,
        organization_slug: org.slug.clone(),
        created_at: now,
    };
    let mut batch = Batch::new();
    batch.put(&org, Expect::Absent)?;
    batch.put(&membership, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => {}
        // Lost a race for the slug to a concurrent create.
        Err(StorageError::Unique { .. }) => return Err(slug_taken(&slug)),
        Err(e) => return Err(e.into()),
    }
    Ok(org)
}

fn set_string(target: &mut Option<String>, update: Maybe<String>) {
    if let Some(v) = update.into_update() {
        *target = v.filter(|s| !s.trim().is_empty());
    }
}

fn apply_update(org: &mut Organization, input: &OrganizationUpdate) -> Result<(), ApiError> {
    let mut v = Validator::new();
    if let Maybe::Value(name) = &input.name {
        let name = name.trim();
        // A blank name means "unchanged", as in Polar.
        if !name.is_empty()
            && v.min_chars(loc!["body", "name"], name, 3)
            && v.header_safe(loc!["body", "name"], name)
        {
            org.name = name.to_string();
        }
    }
    match &input.avatar_url {
        Maybe::Value(url) => {
            if v.http_url(loc!["body", "avatar_url"], url) {
                org.avatar_url = Some(url.clone());
            }
        }
        Maybe::Null => org.avatar_url = None,
        Maybe::Absent => {}
    }
    match input.default_upfront_split_to_contributors {
        Maybe::Value(n) => {
            if v.int_range(
                loc!["body", "default_upfront_split_to_contributors"],
                n,
                Some(0),
                Some(100),
            ) {
                org.default_upfront_split_to_contributors = Some(n);
            }
        }
        Maybe::Null => org.default_upfront_split_to_contributors = None,
        Maybe::Absent => {}
    }
    if let Maybe::Value(b) = input.pledge_badge_show_amount {
        org.pledge_badge_show_amount = b;
    }
    if let Maybe::Value(n) = input.pledge_minimum_amount {
        if v.int_range(loc!["body", "pledge_minimum_amount"], n, Some(0), None) {
            org.pledge_minimum_amount = n;
        }
    }
    match &input.billing_email {
        Maybe::Value(e) => {
            if v.email(loc!["body", "billing_email"], e) {
                org.billing_email = Some(e.clone());
            }
        }
        Maybe::Null => org.billing_email = None,
        Maybe::Absent => {}
    }
    match &input.email {
        Maybe::Value(e) => {
            if v.email(loc!["body", "email"], e) {
                org.email = Some(e.clone());
            }
        }
        Maybe::Null => org.email = None,
        Maybe::Absent => {}
    }
    for (field, target, value, max) in [
        ("bio", &mut org.bio, &input.bio, 1000usize),
        ("company", &mut org.company, &input.company, 200),
        ("blog", &mut org.blog, &input.blog, 500),
        ("location", &mut org.location, &input.location, 200),
        (
            "twitter_username",
            &mut org.twitter_username,
            &input.twitter_username,
            50,
        ),
        (
            "default_badge_custom_content",
            &mut org.default_badge_custom_content,
            &input.default_badge_custom_content,
            500,
        ),
    ] {
        if let Maybe::Value(s) = value {
            if !v.max_chars(loc!["body", field], s, max) {
                continue;
            }
        }
        set_string(target, value.clone());
    }
    let total = match input.total_monthly_spending_limit {
        Maybe::Absent => org.total_monthly_spending_limit,
        Maybe::Null => None,
        Maybe::Value(n) => {
            v.int_range(
                loc!["body", "total_monthly_spending_limit"],
                n,
                Some(0),
                None,
            );
            Some(n)
        }
    };
    let per_user = match input.per_user_monthly_spending_limit {
        Maybe::Absent => org.per_user_monthly_spending_limit,
        Maybe::Null => None,
        Maybe::Value(n) => {
            v.int_range(
                loc!["body", "per_user_monthly_spending_limit"],
                n,
                Some(0),
                None,
            );
            Some(n)
        }
    };
    if let Some(p) = per_user {
        match total {
            None => v.push(FieldError::new(
                "value_error",
                loc!["body", "per_user_monthly_spending_limit"],
                "Value error, Per user spending limit requires a total spending limit.",
                Value::from(p),
            )),
            Some(t) if p > t => v.push(FieldError::new(
                "value_error",
                loc!["body", "per_user_monthly_spending_limit"],
                "Value error, Per user spending limit cannot exceed the total spending limit.",
                Value::from(p),
            )),
            _ => {}
        }
    }
    org.total_monthly_spending_limit = total;
    org.per_user_monthly_spending_limit = per_user;
    if let Maybe::Value(p) = &input.profile_settings {
        let s = &mut org.profile_settings;
        if let Some(x) = p.enabled.clone().into_update() {
            s.enabled = x;
        }
        if let Some(x) = p.description.clone().into_update() {
            if let Some(d) = &x {
                v.max_chars(loc!["body", "profile_settings", "description"], d, 160);
            }
            s.description = x;
        }
        if let Some(x) = p.featured_projects.clone().into_update() {
            s.featured_projects = x;
        }
        if let Some(x) = p.featured_organizations.clone().into_update() {
            s.featured_organizations = x;
        }
        if let Some(x) = p.links.clone().into_update() {
            if let Some(links) = &x {
                for (i, l) in links.iter().enumerate() {
                    v.http_url(loc!["body", "profile_settings", "links", i], l);
                }
            }
            s.links = x;
        }
        if let Some(x) = p.accent_color.clone().into_update() {
            s.accent_color = x;
        }
        match &p.subscribe {
            Maybe::Value(sub) => s.subscribe = Some(SubscribeSettings::from(sub)),
            Maybe::Null => s.subscribe = None,
            Maybe::Absent => {}
        }
    }
    if let Maybe::Value(f) = &input.feature_settings {
        if let Some(x) = f.issue_funding_enabled.clone().into_update() {
            org.feature_settings.issue_funding_enabled = x;
        }
    }
    if let Maybe::Value(s) = &input.subscription_settings {
        s.check_supported(&mut v, loc!["body", "subscription_settings"]);
        org.subscription_settings = s.into();
        org.prevent_trial_abuse = s.prevent_trial_abuse;
    }
    if let Maybe::Value(n) = &input.notification_settings {
        org.notification_settings = crate::domain::organization::NotificationSettings {
            new_order: n.new_order,
            new_subscription: n.new_subscription,
        };
    }
    v.finish()
}

/// Sets what a refund does beyond the money (the dashboard's setting).
pub async fn set_refund_settings(
    state: &AppState,
    subject: Subject,
    id: OrganizationId,
    settings: crate::domain::organization::RefundSettings,
) -> Result<Organization, ApiError> {
    organization_for(state, subject, id).await?;
    let now = state.now();
    let updated = state
        .store
        .update::<Organization, ApiError>(&id.key(), async |current| {
            let mut org = current.clone();
            org.refund_settings = settings;
            org.modified_at = Some(now);
            Ok(Some(org))
        })
        .await?;
    updated.ok_or_else(ApiError::not_found)
}

/// Changes an organization's profile and settings.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: OrganizationId,
    input: OrganizationUpdate,
) -> Result<Organization, ApiError> {
    organization_for(state, subject, id).await?;
    let now = state.now();
    let updated = state
        .store
        .update::<Organization, ApiError>(&id.key(), async |current| {
            let mut org = current.clone();
            apply_update(&mut org, &input)?;
            org.modified_at = Some(now);
            Ok(Some(org))
        })
        .await?;
    found(updated)
}
