//! Discounts: list, find, create, update and (soft) delete (Polar's
//! `discount/endpoints.py` and `service.py`). Their rendering is `crate::app::views`.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};
use serde_json::Value;
use tollgate_storage::{Batch, Expect, StorageError, Stored};

use crate::api::discount::{
    parse_code, parse_datetime, DiscountCreate, DiscountTypeInput, DiscountUpdate, DurationInput,
};
use crate::api::metadata::parse_metadata;
use crate::api::Maybe;
use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::{compare_times, directed, nulls_last, sorted_page_of};
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::auth::Subject;
use crate::domain::discount::{
    discount_by_code, normalize_code, Discount, DiscountDuration, DiscountKind, DiscountType,
    DISCOUNT_BY_CODE, DISCOUNT_BY_CREATED, DISCOUNT_BY_NAME, DISCOUNT_BY_REDEMPTIONS,
};
use crate::domain::ids::{DiscountId, OrganizationId, ProductId};
use crate::domain::product::Product;
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

use super::found;

pub const CURRENCY: &str = "usd";

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DiscountSort {
    CreatedAt,
    Name,
    Code,
    RedemptionsCount,
}

impl SortField for DiscountSort {
    const FIELDS: &'static [(&'static str, DiscountSort)] = &[
        ("created_at", DiscountSort::CreatedAt),
        ("name", DiscountSort::Name),
        ("code", DiscountSort::Code),
        ("redemptions_count", DiscountSort::RedemptionsCount),
    ];
}

/// One criterion of the discount list, as its index orders it (names and codes
/// case-folded, no code last ascending).
fn compare(field: DiscountSort, descending: bool, a: &Discount, b: &Discount) -> Ordering {
    let ordering = match field {
        DiscountSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
        DiscountSort::Name => a.name.to_lowercase().cmp(&b.name.to_lowercase()),
        DiscountSort::Code => nulls_last(
            a.code.as_deref().map(normalize_code),
            b.code.as_deref().map(normalize_code),
        ),
        DiscountSort::RedemptionsCount => a.redemptions_count.cmp(&b.redemptions_count),
    };
    directed(ordering, descending)
}

/// Which discounts a list shows, and in what order.
#[derive(Debug, Clone)]
pub struct DiscountFilter {
    /// Of these organizations (all the subject reaches when empty).
    pub organization_id: Vec<OrganizationId>,
    /// Polar's `query`: a case-insensitive substring of the name or the code.
    pub query: Option<String>,
    pub sorting: Sorting<DiscountSort>,
}

impl Default for DiscountFilter {
    fn default() -> Self {
        Self {
            organization_id: Vec::new(),
            query: None,
            sorting: Sorting::by(DiscountSort::CreatedAt, true),
        }
    }
}

/// One page of the discounts `subject` reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &DiscountFilter,
    params: ListParams,
) -> Result<(Vec<Discount>, u64), ApiError> {
    let sorting = &filter.sorting;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    // The first criterion is served by an index (equal values follow creation order), the
    // others in memory.
    let (field, desc) = sorting.primary();
    let index = match field {
        DiscountSort::CreatedAt => DISCOUNT_BY_CREATED,
        DiscountSort::Name => DISCOUNT_BY_NAME,
        DiscountSort::Code => DISCOUNT_BY_CODE,
        DiscountSort::RedemptionsCount => DISCOUNT_BY_REDEMPTIONS,
    };
    // Polar's `query`: a case-insensitive substring of the name or the code.
    let needle = filter.query.as_ref().map(|s| s.to_lowercase());
    let matches = |d: &Discount| match &needle {
        Some(n) => {
            d.name.to_lowercase().contains(n.as_str())
                || d.code
                    .as_ref()
                    .is_some_and(|c| c.to_lowercase().contains(n.as_str()))
        }
        None => true,
    };
    let filter: Option<&dyn Fn(&Discount) -> bool> = if needle.is_some() {
        Some(&matches)
    } else {
        None
    };
    let several = sorting.several(compare);
    Ok(sorted_page_of::<Discount>(
        state,
        index,
        &tenants,
        desc,
        params,
        filter,
        several.as_deref(),
    )
    .await?)
}

/// A discount the subject may see, else 404.
pub async fn discount_for(
    state: &AppState,
    subject: Subject,
    id: DiscountId,
) -> Result<Stored<Discount>, ApiError> {
    match state.store.get::<Discount>(&id.key()).await? {
        Some(d)
            if !d.value.is_deleted()
                && can_access(state, subject, d.value.organization_id).await? =>
        {
            Ok(d)
        }
        _ => Err(ApiError::not_found()),
    }
}

fn code_taken(code: &str) -> ApiError {
    ApiError::invalid(
        loc!["body", "code"],
        "Discount with this code already exists.",
        Value::from(code),
    )
}

/// Another live discount of the organization holds this code (case-insensitively).
async fn code_in_use(
    state: &AppState,
    org: OrganizationId,
    code: &str,
    except: Option<DiscountId>,
) -> Result<bool, ApiError> {
    Ok(discount_by_code(&state.store, org, code)
        .await?
        .is_some_and(|d| Some(d.value.id) != except))
}

/// The products a discount is restricted to: each must be a product of the organization
/// (422 "Product not found." at its index); repeated ids count once.
async fn check_products(
    state: &AppState,
    org: OrganizationId,
    ids: &[uuid::Uuid],
) -> Result<Vec<ProductId>, ApiError> {
    let mut out: Vec<ProductId> = Vec::new();
    for (index, id) in ids.iter().enumerate() {
        let pid = ProductId(*id);
        let found = state
            .store
            .get::<Product>(&pid.key())
            .await?
            .is_some_and(|p| p.value.organization_id == org);
        if !found {
            return Err(ApiError::invalid(
                loc!["body", "products", index],
                "Product not found.",
                Value::from(id.to_string()),
            ));
        }
        if !out.contains(&pid) {
            out.push(pid);
        }
    }
    Ok(out)
}

fn ge(v: &mut Validator, field: &str, value: i64, min: i64) -> bool {
    v.int_range(loc!["body", field], value, Some(min), None)
}

fn missing(field: &str) -> FieldError {
    FieldError::new(
        "missing",
        loc!["body", field],
        "Field required",
        Value::Null,
    )
}

fn check_currency(v: &mut Validator, currency: &str) -> bool {
    if currency == CURRENCY {
        return true;
    }
    v.push(
        FieldError::new(
            "string_pattern_mismatch",
            loc!["body", "currency"],
            "String should match pattern 'usd'",
            Value::from(currency),
        )
        .with_ctx(serde_json::json!({"pattern": CURRENCY})),
    );
    false
}

fn datetime_field(v: &mut Validator, field: &str, value: Option<&Value>) -> Option<DateTime<Utc>> {
    match value {
        None | Some(Value::Null) => None,
        Some(value) => match parse_datetime(loc!["body", field], value) {
            Ok(t) => Some(t),
            Err(errors) => {
                errors.into_iter().for_each(|e| v.push(e));
                None
            }
        },
    }
}

/// The model-level rule, reported at `["body"]` as pydantic does.
fn check_dates(
    v: &mut Validator,
    starts_at: Option<DateTime<Utc>>,
    ends_at: Option<DateTime<Utc>>,
    raw: &Value,
) {
    if let (Some(s), Some(e)) = (starts_at, ends_at) {
        if s >= e {
            v.push(FieldError::new(
                "value_error",
                loc!["body"],
                "Value error, starts_at must be before ends_at",
                raw.clone(),
            ));
        }
    }
}

/// Creates a discount in an organization `subject` reaches. `raw`: the request body as
/// sent, which errors quote.
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: DiscountCreate,
    raw: &Value,
) -> Result<Discount, ApiError> {
    let mut v = Validator::new();
    v.min_chars(loc!["body", "name"], &input.name, 1);
    if let Some(n) = input.max_redemptions_per_customer {
        v.unsupported(
            loc!["body", "max_redemptions_per_customer"],
            n.into(),
            "A per-customer redemption limit",
        );
    }
    let kind = match input.kind {
        DiscountTypeInput::Fixed => {
            let currency = input.currency.clone().unwrap_or_else(|| CURRENCY.into());
            check_currency(&mut v, &currency);
            match input.amount {
                Some(amount) => {
                    ge(&mut v, "amount", amount, 0);
                    Some(DiscountKind::Fixed { amount, currency })
                }
                None => {
                    v.push(missing("amount"));
                    None
                }
            }
        }
        DiscountTypeInput::Percentage => match input.basis_points {
            Some(bp) => {
                v.int_range(loc!["body", "basis_points"], bp, Some(1), Some(10_000));
                Some(DiscountKind::Percentage { basis_points: bp })
            }
            None => {
                v.push(missing("basis_points"));
                None
            }
        },
    };
    let duration = match input.duration {
        DurationInput::Once => Some(DiscountDuration::Once),
        DurationInput::Forever => Some(DiscountDuration::Forever),
        DurationInput::Repeating => match input.duration_in_months {
            Some(months) => {
                ge(&mut v, "duration_in_months", months, 1);
                Some(DiscountDuration::Repeating { months })
            }
            None => {
                v.push(missing("duration_in_months"));
                None
            }
        },
    };
    let code = match input
        .code
        .as_deref()
        .map(|c| parse_code(loc!["body", "code"], c))
    {
        Some(Ok(code)) => code,
        Some(Err(errors)) => {
            errors.into_iter().for_each(|e| v.push(e));
            None
        }
        None => None,
    };
    let starts_at = datetime_field(&mut v, "starts_at", input.starts_at.as_ref());
    let ends_at = datetime_field(&mut v, "ends_at", input.ends_at.as_ref());
    if let Some(max) = input.max_redemptions {
        ge(&mut v, "max_redemptions", max, 1);
    }
    let metadata = match input.metadata.as_ref() {
        Some(m) => match parse_metadata("metadata", m) {
            Ok(m) => m,
            Err(errors) => {
                errors.into_iter().for_each(|e| v.push(e));
                Default::default()
            }
        },
        None => Default::default(),
    };
    if !v.has_errors() {
        check_dates(&mut v, starts_at, ends_at, raw);
    }
    v.finish()?;
    let (Some(kind), Some(duration)) = (kind, duration) else {
        return Err(ApiError::internal("discount validated but incomplete"));
    };

    let organization_id = organization_for_create(state, subject, input.organization_id).await?;
    if let Some(code) = &code {
        if code_in_use(state, organization_id, code, None).await? {
            return Err(code_taken(code));
        }
    }
    let product_ids = check_products(
        state,
        organization_id,
        input.products.as_deref().unwrap_or(&[]),
    )
    .await?;
    let discount = Discount {
        id: DiscountId::new(),
        organization_id,
        created_at: state.now(),
        modified_at: None,
        name: input.name,
        code,
        kind,
        duration,
        starts_at,
        ends_at,
        max_redemptions: input.max_redemptions,
        redemptions_count: 0,
        product_ids,
        metadata,
        deleted_at: None,
    };
    let mut batch = Batch::new();
    batch.put(&discount, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => {}
        // Lost a race for the code to a concurrent create.
        Err(StorageError::Unique { .. }) => {
            return Err(code_taken(discount.code.as_deref().unwrap_or_default()))
        }
        Err(e) => return Err(e.into()),
    }
    Ok(discount)
}

/// An update's fields, checked on their own (before the discount is looked up).
struct Changes {
    name: Option<String>,
    code: Option<Option<String>>,
    starts_at: Option<Option<DateTime<Utc>>>,
    ends_at: Option<Option<DateTime<Utc>>>,
    max_redemptions: Option<Option<i64>>,
    metadata: Option<crate::domain::metadata::Metadata>,
}

fn check_update(input: &DiscountUpdate) -> Result<Changes, ApiError> {
    let mut v = Validator::new();
    if let Maybe::Value(n) = input.max_redemptions_per_customer {
        v.unsupported(
            loc!["body", "max_redemptions_per_customer"],
            n.into(),
            "A per-customer redemption limit",
        );
    }
    let name = match &input.name {
        Maybe::Value(n) => v.min_chars(loc!["body", "name"], n, 1).then(|| n.clone()),
        _ => None,
    };
    let code = match &input.code {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(c) => match parse_code(loc!["body", "code"], c) {
            Ok(c) => Some(c),
            Err(errors) => {
                errors.into_iter().for_each(|e| v.push(e));
                None
            }
        },
    };
    let mut datetime = |field: &str, value: &Maybe<Value>| match value {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(x) => Some(datetime_field(&mut v, field, Some(x))),
    };
    let starts_at = datetime("starts_at", &input.starts_at);
    let ends_at = datetime("ends_at", &input.ends_at);
    let max_redemptions = match input.max_redemptions {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(m) => {
            ge(&mut v, "max_redemptions", m, 1);
            Some(Some(m))
        }
    };
    if let Maybe::Value(m) = input.duration_in_months {
        ge(&mut v, "duration_in_months", m, 1);
    }
    if let Maybe::Value(a) = input.amount {
        ge(&mut v, "amount", a, 0);
    }
    if let Maybe::Value(c) = &input.currency {
        check_currency(&mut v, c);
    }
    if let Maybe::Value(bp) = input.basis_points {
        v.int_range(loc!["body", "basis_points"], bp, Some(1), Some(10_000));
    }
    let metadata = match &input.metadata {
        Maybe::Value(m) => match parse_metadata("metadata", m) {
            Ok(m) => Some(m),
            Err(errors) => {
                errors.into_iter().for_each(|e| v.push(e));
                None
            }
        },
        _ => None,
    };
    v.finish()?;
    Ok(Changes {
        name,
        code,
        starts_at,
        ends_at,
        max_redemptions,
        metadata,
    })
}

fn redeemed_error(field: &str, current: Value) -> FieldError {
    FieldError::new(
        "value_error",
        loc!["body", field],
        "This field cannot be changed because the discount has already been redeemed.",
        current,
    )
}

/// Applies an update to a copy of the discount: type and duration cannot change, and the
/// amount cannot change once the discount has been redeemed.
async fn apply_update(
    state: &AppState,
    current: &Discount,
    input: &DiscountUpdate,
    changes: &Changes,
    raw: &Value,
) -> Result<Discount, ApiError> {
    let mut d = current.clone();
    if let Maybe::Value(duration) = input.duration {
        let same = matches!(
            (duration, d.duration),
            (DurationInput::Once, DiscountDuration::Once)
                | (DurationInput::Forever, DiscountDuration::Forever)
                | (DurationInput::Repeating, DiscountDuration::Repeating { .. })
        );
        if !same {
            return Err(ApiError::invalid(
                loc!["body", "duration"],
                "Duration cannot be changed.",
                raw.get("duration").cloned().unwrap_or(Value::Null),
            ));
        }
    }
    if let Maybe::Value(kind) = input.kind {
        let same = matches!(
            (kind, d.discount_type()),
            (DiscountTypeInput::Fixed, DiscountType::Fixed)
                | (DiscountTypeInput::Percentage, DiscountType::Percentage)
        );
        if !same {
            return Err(ApiError::invalid(
                loc!["body", "type"],
                "Type cannot be changed.",
                raw.get("type").cloned().unwrap_or(Value::Null),
            ));
        }
    }
    let redeemed = d.redemptions_count > 0;
    match &mut d.kind {
        DiscountKind::Fixed { amount, currency } => {
            if let Maybe::Value(new) = input.amount {
                if redeemed && new != *amount {
                    return Err(ApiError::validation(redeemed_error(
                        "amount",
                        Value::from(*amount),
                    )));
                }
                *amount = new;
            }
            if let Maybe::Value(new) = &input.currency {
                if redeemed && new != currency {
                    return Err(ApiError::validation(redeemed_error(
                        "currency",
                        Value::from(currency.as_str()),
                    )));
                }
                *currency = new.clone();
            }
        }
        DiscountKind::Percentage { basis_points } => {
            if let Maybe::Value(new) = input.basis_points {
                if redeemed && new != *basis_points {
                    return Err(ApiError::validation(redeemed_error(
                        "basis_points",
                        Value::from(*basis_points),
                    )));
                }
                *basis_points = new;
            }
        }
    }
    if let (Maybe::Value(m), DiscountDuration::Repeating { months }) =
        (&input.duration_in_months, &mut d.duration)
    {
        *months = *m;
    }
    if let Some(name) = &changes.name {
        d.name = name.clone();
    }
    if let Some(code) = &changes.code {
        if let Some(c) = code {
            let unchanged = d
                .code
                .as_deref()
                .is_some_and(|old| normalize_code(old) == normalize_code(c));
            if !unchanged && code_in_use(state, d.organization_id, c, Some(d.id)).await? {
                return Err(code_taken(c));
            }
        }
        d.code = code.clone();
    }
    if let Some(s) = changes.starts_at {
        d.starts_at = s;
    }
    if let Some(e) = changes.ends_at {
        d.ends_at = e;
    }
    if let Some(m) = changes.max_redemptions {
        d.max_redemptions = m;
    }
    let mut v = Validator::new();
    check_dates(&mut v, d.starts_at, d.ends_at, raw);
    v.finish()?;
    if let Maybe::Value(ids) = &input.products {
        d.product_ids = check_products(state, d.organization_id, ids).await?;
    }
    if let Some(m) = &changes.metadata {
        d.metadata = m.clone();
    }
    Ok(d)
}

/// Changes a discount (what redemptions allow to change once it was redeemed). `raw`: the
/// request body as sent.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: DiscountId,
    input: DiscountUpdate,
    raw: &Value,
) -> Result<Discount, ApiError> {
    let changes = check_update(&input)?;
    discount_for(state, subject, id).await?;
    let now = state.now();
    let mut code = None;
    let updated = state
        .store
        .update::<Discount, ApiError>(&id.key(), async |current| {
            if current.is_deleted() {
                return Err(ApiError::not_found());
            }
            let mut discount = apply_update(state, current, &input, &changes, raw).await?;
            discount.modified_at = Some(now);
            code = discount.code.clone();
            Ok(Some(discount))
        })
        .await;
    match updated {
        Err(tollgate_storage::UpdateError::Storage(StorageError::Unique { .. })) => {
            Err(code_taken(code.as_deref().unwrap_or_default()))
        }
        other => found(other?),
    }
}

/// Soft-deletes a discount: it is no longer listed or redeemable; orders keep it.
pub async fn delete(state: &AppState, subject: Subject, id: DiscountId) -> Result<(), ApiError> {
    discount_for(state, subject, id).await?;
    let now = state.now();
    state
        .store
        .update::<Discount, ApiError>(&id.key(), async |current| {
            if current.is_deleted() {
                return Err(ApiError::not_found());
            }
            let mut discount = current.clone();
            discount.deleted_at = Some(now);
            discount.modified_at = Some(now);
            Ok(Some(discount))
        })
        .await?;
    Ok(())
}
