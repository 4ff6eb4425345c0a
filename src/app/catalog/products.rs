//! Products and their prices: list, find, create, update (prices replaced or archived,
//! custom fields attached), and the benefits a product grants. Their renderings are
//! `crate::app::views`.

use std::cmp::Ordering;
use std::collections::HashSet;

use serde_json::Value;
use tollgate_storage::{Batch, Expect, Stored};

use crate::api::metadata::parse_metadata;
use crate::api::price::{check_price_set, parse_price, Cadence, PriceInput};
use crate::api::product::{
    AttachedCustomFieldCreate, ProductBenefitsUpdate, ProductCadenceInput, ProductCreate,
    ProductUpdate, NAME_MIN_CHARS,
};
use crate::api::Maybe;
use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::{
    compare_times, directed, filtered_page, nulls_last, sorted_page_of, KeyOrder,
};
use crate::app::paging::{ListParams, Sorting};
use crate::auth::Subject;
use crate::domain::benefit::Benefit;
use crate::domain::custom_field::CustomField;
use crate::domain::ids::{BenefitId, CustomFieldId, OrganizationId, PriceId, ProductId};
use crate::domain::metadata::Metadata;
use crate::domain::product::{
    AttachedCustomField, Price, PriceKind, Product, ProductSort, RecurringInterval, Trial,
    MAX_INTERVAL_COUNT, MAX_TRIAL_COUNT, PRODUCT_BY_BENEFIT,
};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

use super::found;

// ---------------------------------------------------------------------------------------
// Helpers for other resources
// ---------------------------------------------------------------------------------------

/// A product the subject may see, else 404.
pub async fn product_for(
    state: &AppState,
    subject: Subject,
    id: ProductId,
) -> Result<Stored<Product>, ApiError> {
    match state.store.get::<Product>(&id.key()).await? {
        Some(p) if can_access(state, subject, p.value.organization_id).await? => Ok(p),
        _ => Err(ApiError::not_found()),
    }
}

/// The product owning a price (archived prices included), whoever may see it; callers
/// check access and whether the price is still on sale (`Product::active_price`).
pub async fn product_for_price(
    state: &AppState,
    id: PriceId,
) -> Result<Option<Stored<Product>>, ApiError> {
    Ok(crate::domain::product::product_for_price(&state.store, id).await?)
}

// ---------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------

/// One criterion of the product list, as its index orders it: names case-folded, the price
/// criteria by the oldest price on sale, a product without one last ascending.
fn compare(field: ProductSort, descending: bool, a: &Product, b: &Product) -> Ordering {
    let rank = |p: &Product, rank: fn(&PriceKind) -> i64| {
        p.first_active_price().map(|price| rank(&price.kind))
    };
    let ordering = match field {
        ProductSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
        ProductSort::Name => a.name.to_lowercase().cmp(&b.name.to_lowercase()),
        ProductSort::PriceType => {
            nulls_last(rank(a, PriceKind::type_rank), rank(b, PriceKind::type_rank))
        }
        ProductSort::PriceAmountType => nulls_last(
            rank(a, PriceKind::amount_type_rank),
            rank(b, PriceKind::amount_type_rank),
        ),
        ProductSort::PriceAmount => nulls_last(
            rank(a, PriceKind::amount_rank),
            rank(b, PriceKind::amount_rank),
        ),
    };
    directed(ordering, descending)
}

/// Which products a list shows, and in what order.
#[derive(Debug, Clone)]
pub struct ProductFilter {
    /// Of these organizations (all the subject reaches when empty).
    pub organization_id: Vec<OrganizationId>,
    /// Whose name contains this (case-insensitive).
    pub query: Option<String>,
    pub is_archived: Option<bool>,
    pub is_recurring: Option<bool>,
    /// Granting any of these benefits.
    pub benefit_id: Vec<BenefitId>,
    pub sorting: Sorting<ProductSort>,
}

impl Default for ProductFilter {
    fn default() -> Self {
        Self {
            organization_id: Vec::new(),
            query: None,
            is_archived: None,
            is_recurring: None,
            benefit_id: Vec::new(),
            sorting: Sorting::by(ProductSort::CreatedAt, true),
        }
    }
}

/// One page of the products `subject` reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &ProductFilter,
    params: ListParams,
) -> Result<(Vec<Product>, u64), ApiError> {
    let (is_archived, is_recurring) = (filter.is_archived, filter.is_recurring);
    let benefits = &filter.benefit_id;
    let sorting = &filter.sorting;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    // The first criterion is served by an index (equal values follow creation order), the
    // others in memory.
    let (field, descending) = sorting.primary();
    let several = sorting.several(compare);
    let needle = filter.query.as_ref().map(|s| s.to_lowercase());
    let filtered = needle.is_some() || is_archived.is_some() || is_recurring.is_some();
    let keep = |p: &Product| {
        needle
            .as_ref()
            .is_none_or(|n| p.name.to_lowercase().contains(n.as_str()))
            && is_archived.is_none_or(|a| p.is_archived == a)
            && is_recurring.is_none_or(|r| p.is_recurring == r)
    };
    let (items, total) = if benefits.is_empty() {
        let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
        let filter: Option<&dyn Fn(&Product) -> bool> = if filtered { Some(&keep) } else { None };
        sorted_page_of::<Product>(
            state,
            field.index(),
            &tenants,
            descending,
            params,
            filter,
            several.as_deref(),
        )
        .await?
    } else {
        // The products granting any of the benefits: the cost grows with their number.
        let tenants: Vec<Vec<u8>> = benefits.iter().map(|b| b.key()).collect();
        filtered_page::<Product>(
            state,
            PRODUCT_BY_BENEFIT,
            &tenants,
            &|p: &Product| orgs.contains(&p.organization_id) && keep(p),
            KeyOrder {
                key: &|p: &Product| p.sort_key(field),
                backwards: descending,
                several: several.as_deref(),
            },
            params,
        )
        .await?
    };
    Ok((items, total))
}

/// `metadata` of a body: absent (or, with `null_is_absent`, null) is `None`.
pub(super) fn body_metadata(
    v: &mut Validator,
    sent: &Maybe<Value>,
    null_is_absent: bool,
) -> Option<Metadata> {
    let null = Value::Null;
    let raw = match sent {
        Maybe::Absent => None,
        Maybe::Null if null_is_absent => None,
        Maybe::Null => Some(&null),
        Maybe::Value(m) => Some(m),
    };
    match raw {
        None => None,
        Some(m) => match parse_metadata("metadata", m) {
            Ok(m) => Some(m),
            Err(errors) => {
                for e in errors {
                    v.push(e);
                }
                None
            }
        },
    }
}

/// What a body's Polar 2026 recurrence fields say: the cadence (`recurring_interval`), its
/// count, and the trial. Each is `None` when the body names none; for the trial,
/// `Some(None)` is an explicit `null` (no trial).
#[derive(Debug, Default)]
struct BodyCadence {
    cadence: Option<Cadence>,
    count: Option<u32>,
    trial: Option<Option<Trial>>,
}

/// An interval name (`day`, `week`, `month`, `year`) at `field`, else a 422 in `v`.
fn interval_field(v: &mut Validator, field: &str, value: &Value) -> Option<RecurringInterval> {
    if let Some(i) = value.as_str().and_then(RecurringInterval::parse) {
        return Some(i);
    }
    v.push(
        FieldError::new(
            "enum",
            loc!["body", field],
            "Input should be 'day', 'week', 'month' or 'year'",
            value.clone(),
        )
        .with_ctx(serde_json::json!({"expected": "'day', 'week', 'month' or 'year'"})),
    );
    None
}

/// A whole number in `1..=max` at `field`, else a 422 in `v`.
fn count_field(v: &mut Validator, field: &str, value: &Value, max: u32) -> Option<u32> {
    let Some(n) = value.as_i64() else {
        v.push(FieldError::new(
            "int_type",
            loc!["body", field],
            "Input should be a valid integer",
            value.clone(),
        ));
        return None;
    };
    if !v.int_range(loc!["body", field], n, Some(1), Some(i64::from(max))) {
        return None;
    }
    u32::try_from(n).ok()
}

/// Parses the recurrence fields of a body; the values Tollgate cannot sell (draft or
/// private products) and broken ones are 422s in `v`.
fn body_cadence(v: &mut Validator, c: &ProductCadenceInput) -> BodyCadence {
    let mut out = BodyCadence::default();
    if let Some(value) = &c.recurring_interval {
        out.cadence = interval_field(v, "recurring_interval", value).map(Cadence::Every);
    }
    if let Some(count) = c.recurring_interval_count.as_ref().filter(|n| !n.is_null()) {
        out.count = count_field(v, "recurring_interval_count", count, MAX_INTERVAL_COUNT);
    }
    let given = |x: &Maybe<Value>| !matches!(x, Maybe::Absent);
    let set = |x: &Maybe<Value>| matches!(x, Maybe::Value(x) if !x.is_null());
    match (set(&c.trial_interval), set(&c.trial_interval_count)) {
        (true, true) => {
            let interval = c
                .trial_interval
                .as_value()
                .and_then(|x| interval_field(v, "trial_interval", x));
            let count = c
                .trial_interval_count
                .as_value()
                .and_then(|x| count_field(v, "trial_interval_count", x, MAX_TRIAL_COUNT));
            if let (Some(interval), Some(count)) = (interval, count) {
                out.trial = Some(Some(Trial { interval, count }));
            }
        }
        (false, false) if given(&c.trial_interval) || given(&c.trial_interval_count) => {
            out.trial = Some(None);
        }
        (false, false) => {}
        (interval, _) => {
            let missing = if interval {
                "trial_interval_count"
            } else {
                "trial_interval"
            };
            v.push(FieldError::new(
                "missing",
                loc!["body", missing],
                "Both trial_interval and trial_interval_count must be set together.",
                Value::Null,
            ));
        }
    }
    if let Some(value) = c.visibility.as_ref().filter(|x| !x.is_null()) {
        match value.as_str() {
            Some("public") => {}
            Some("draft" | "private") => v.unsupported(
                loc!["body", "visibility"],
                value.clone(),
                "A draft or private product",
            ),
            _ => v.push(
                FieldError::new(
                    "enum",
                    loc!["body", "visibility"],
                    "Input should be 'draft', 'private' or 'public'",
                    value.clone(),
                )
                .with_ctx(serde_json::json!({"expected": "'draft', 'private' or 'public'"})),
            ),
        }
    }
    out
}

/// A trial on a product that does not recur: Polar's 422 on both trial fields.
fn refuse_one_time_trial(v: &mut Validator, c: &ProductCadenceInput) {
    for (field, value) in [
        ("trial_interval", &c.trial_interval),
        ("trial_interval_count", &c.trial_interval_count),
    ] {
        v.push(FieldError::new(
            "value_error",
            loc!["body", field],
            "Trial configuration is only supported on recurring products.",
            value.as_value().cloned().unwrap_or(Value::Null),
        ));
    }
}

/// Parses every item of `prices`; `None` if any is invalid (the errors are in `v`). A
/// price without `type` recurs as `cadence` says.
fn parse_prices(
    v: &mut Validator,
    prices: &[Value],
    allow_existing: bool,
    cadence: Option<Cadence>,
) -> Option<Vec<PriceInput>> {
    let mut out = Vec::with_capacity(prices.len());
    let mut ok = true;
    for (i, raw) in prices.iter().enumerate() {
        let loc = loc!["body", "prices", i];
        match parse_price(v, &loc, raw, allow_existing, cadence) {
            Some(p) => out.push(p),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

/// There is no file service: no file id names an uploaded product media.
fn check_medias(v: &mut Validator, medias: Option<&Vec<uuid::Uuid>>) {
    for (i, id) in medias.into_iter().flatten().enumerate() {
        v.push(FieldError::new(
            "value_error",
            loc!["body", "medias", i],
            "File does not exist or is not yet uploaded.",
            Value::from(id.to_string()),
        ));
    }
}

/// The custom fields to attach, in the order given; each must be a live custom field of
/// the product's organization, attached once.
async fn attached_fields(
    state: &AppState,
    v: &mut Validator,
    organization_id: OrganizationId,
    list: &[AttachedCustomFieldCreate],
) -> Result<Vec<AttachedCustomField>, ApiError> {
    let mut out: Vec<AttachedCustomField> = Vec::with_capacity(list.len());
    for (i, a) in list.iter().enumerate() {
        let id = CustomFieldId(a.custom_field_id);
        let exists = state
            .store
            .get::<CustomField>(&id.key())
            .await?
            .is_some_and(|f| {
                f.value.organization_id == organization_id && f.value.deleted_at.is_none()
            });
        let input = Value::from(id.to_string());
        if !exists {
            v.push(FieldError::new(
                "value_error",
                loc!["body", "attached_custom_fields", i],
                "Custom field does not exist.",
                input,
            ));
        } else if out.iter().any(|o| o.custom_field_id == id) {
            v.push(FieldError::new(
                "value_error",
                loc!["body", "attached_custom_fields", i],
                "Custom field is already attached.",
                input,
            ));
        } else {
            out.push(AttachedCustomField {
                custom_field_id: id,
                required: a.required,
                order: i as i64,
            });
        }
    }
    Ok(out)
}

fn new_price(kind: PriceKind, now: chrono::DateTime<chrono::Utc>) -> Price {
    Price {
        id: PriceId::new(),
        created_at: now,
        modified_at: None,
        is_archived: false,
        kind,
    }
}

/// Creates a product with its prices in an organization `subject` reaches. `raw`: the
/// request body as sent, which errors about the price set quote.
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: ProductCreate,
    raw: &Value,
) -> Result<Product, ApiError> {
    let mut v = Validator::new();
    if v.min_chars(loc!["body", "name"], &input.name, NAME_MIN_CHARS) {
        v.header_safe(loc!["body", "name"], &input.name);
    }
    let said = body_cadence(&mut v, &input.cadence);
    let cadence = said.cadence.unwrap_or(Cadence::OneTime);
    let kinds: Option<Vec<PriceKind>> = parse_prices(&mut v, &input.prices, false, Some(cadence))
        .map(|ps| {
            ps.into_iter()
                .filter_map(|p| match p {
                    PriceInput::New(k) => Some(k),
                    PriceInput::Existing(_) => None,
                })
                .collect()
        });
    if let Some(kinds) = &kinds {
        let refs: Vec<&PriceKind> = kinds.iter().collect();
        check_price_set(&mut v, &refs, raw.get("prices").unwrap_or(&Value::Null));
    }
    let metadata = body_metadata(&mut v, &input.metadata, false).unwrap_or_default();
    let recurring = kinds
        .as_ref()
        .is_some_and(|k| !k.is_empty() && k.iter().all(PriceKind::is_recurring));
    let trial = said.trial.flatten();
    if trial.is_some() && kinds.is_some() && !recurring {
        refuse_one_time_trial(&mut v, &input.cadence);
    }
    v.finish()?;
    let kinds = kinds.unwrap_or_default();

    let organization_id = organization_for_create(state, subject, input.organization_id).await?;
    let mut v = Validator::new();
    check_medias(&mut v, input.medias.as_ref());
    let attached = attached_fields(
        state,
        &mut v,
        organization_id,
        input.attached_custom_fields.as_deref().unwrap_or_default(),
    )
    .await?;
    v.finish()?;

    let now = state.now();
    let product = Product {
        id: ProductId::new(),
        organization_id,
        created_at: now,
        modified_at: None,
        name: input.name,
        description: input.description.filter(|d| !d.is_empty()),
        is_recurring: kinds.iter().all(PriceKind::is_recurring),
        is_archived: false,
        is_tax_applicable: true,
        metadata,
        prices: kinds.into_iter().map(|k| new_price(k, now)).collect(),
        benefit_ids: Vec::new(),
        media_ids: Vec::new(),
        attached_custom_fields: attached,
        recurring_interval_count: if recurring {
            said.count.unwrap_or(1)
        } else {
            1
        },
        trial: trial.filter(|_| recurring),
    };
    let mut batch = Batch::new();
    batch.put(&product, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok(product)
}

/// Applies `prices` of an update: listed existing prices stay, new ones are added, every
/// other non-archived price is archived. The resulting set must be a valid price set.
fn apply_prices(
    v: &mut Validator,
    product: &mut Product,
    inputs: &[PriceInput],
    raw: &Value,
    now: chrono::DateTime<chrono::Utc>,
) {
    if inputs.is_empty() {
        v.push(FieldError::new(
            "too_short",
            loc!["body", "prices"],
            "At least one price is required.",
            raw.clone(),
        ));
        return;
    }
    let mut kept: HashSet<PriceId> = HashSet::new();
    let mut added: Vec<PriceKind> = Vec::new();
    let mut unknown = false;
    for (i, input) in inputs.iter().enumerate() {
        match input {
            PriceInput::Existing(id) => {
                if product.active_price(*id).is_some() {
                    kept.insert(*id);
                } else {
                    unknown = true;
                    v.push(FieldError::new(
                        "value_error",
                        loc!["body", "prices", i],
                        "Price does not exist.",
                        Value::from(id.to_string()),
                    ));
                }
            }
            PriceInput::New(kind) => added.push(kind.clone()),
        }
    }
    if unknown {
        return;
    }
    let resulting: Vec<&PriceKind> = product
        .active_prices()
        .filter(|p| kept.contains(&p.id))
        .map(|p| &p.kind)
        .chain(added.iter())
        .collect();
    check_price_set(v, &resulting, raw);
    if v.has_errors() {
        return;
    }
    for price in product.prices.iter_mut() {
        if !price.is_archived && !kept.contains(&price.id) {
            price.is_archived = true;
            price.modified_at = Some(now);
        }
    }
    product
        .prices
        .extend(added.into_iter().map(|k| new_price(k, now)));
    let recurring = product.active_prices().all(|p| p.kind.is_recurring());
    product.is_recurring = recurring;
}

/// Changes a product: name, description, archived, metadata, its price set (listed prices
/// stay, new ones are added, the rest archived), its attached custom fields. `raw`: the
/// request body as sent.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: ProductId,
    input: ProductUpdate,
    raw: &Value,
) -> Result<Product, ApiError> {
    let mut v = Validator::new();
    if let Some(name) = &input.name {
        if v.min_chars(loc!["body", "name"], name, NAME_MIN_CHARS) {
            v.header_safe(loc!["body", "name"], name);
        }
    }
    let body = body_cadence(&mut v, &input.cadence);
    let said = body.cadence;
    let metadata = body_metadata(&mut v, &input.metadata, true);
    let raw_prices = raw.get("prices").cloned().unwrap_or(Value::Null);
    // Not found is told after the body's errors, as for every other body.
    let stored = product_for(state, subject, id).await;
    // New prices without `type` recur as the body says, else as the product does now (a
    // product sold both monthly and yearly has no single cadence: `type` is needed).
    let cadence = said.or_else(|| match &stored {
        Ok(p) => match p.value.recurring_interval() {
            Some(i) => Some(Cadence::Every(i)),
            None if !p.value.is_recurring => Some(Cadence::OneTime),
            None => None,
        },
        Err(_) => None,
    });
    let prices = match &input.prices {
        Some(list) => parse_prices(&mut v, list, true, cadence),
        None => None,
    };
    v.finish()?;
    stored?;
    let now = state.now();
    let updated = state
        .store
        .update::<Product, ApiError>(&id.key(), async |current| {
            let mut product = current.clone();
            let mut v = Validator::new();
            if let Some(inputs) = &prices {
                apply_prices(&mut v, &mut product, inputs, &raw_prices, now);
            }
            // A period's length is what subscriptions were sold at: it never changes.
            if let Some(count) = body.count {
                if count != product.recurring_interval_count {
                    v.push(FieldError::new(
                        "value_error",
                        loc!["body", "recurring_interval_count"],
                        "The billing interval count of a product cannot be changed.",
                        Value::from(count),
                    ));
                }
            }
            match body.trial {
                Some(Some(_)) if !product.is_recurring => {
                    refuse_one_time_trial(&mut v, &input.cadence)
                }
                Some(trial) => product.trial = trial,
                None => {}
            }
            if input.medias.is_some() {
                check_medias(&mut v, input.medias.as_ref());
            }
            if let Some(list) = &input.attached_custom_fields {
                product.attached_custom_fields =
                    attached_fields(state, &mut v, product.organization_id, list).await?;
            }
            v.finish()?;
            if let Some(name) = &input.name {
                product.name = name.clone();
            }
            if let Some(d) = input.description.as_ref().filter(|d| !d.is_empty()) {
                product.description = Some(d.clone());
            }
            if let Some(archived) = input.is_archived {
                product.is_archived = archived;
            }
            if let Some(m) = &metadata {
                product.metadata = m.clone();
            }
            product.modified_at = Some(now);
            Ok(Some(product))
        })
        .await?;
    found(updated)
}

/// Replaces the benefits a product grants, in the order given (`POST
/// /v1/products/{id}/benefits`). A benefit that can't be selected can't be added or removed.
pub async fn update_benefits(
    state: &AppState,
    subject: Subject,
    id: ProductId,
    input: ProductBenefitsUpdate,
) -> Result<Product, ApiError> {
    let requested: Vec<BenefitId> = input.benefits.into_iter().map(BenefitId).collect();
    product_for(state, subject, id).await?;
    let updated = state
        .store
        .update::<Product, ApiError>(&id.key(), async |current| {
            let mut product = current.clone();
            let previous = &current.benefit_ids;
            let mut v = Validator::new();
            let mut next: Vec<BenefitId> = Vec::with_capacity(requested.len());
            for (i, benefit_id) in requested.iter().enumerate() {
                let input = Value::from(benefit_id.to_string());
                let benefit = state
                    .store
                    .get::<Benefit>(&benefit_id.key())
                    .await?
                    .map(|b| b.value)
                    .filter(|b| {
                        b.deleted_at.is_none() && b.organization_id == product.organization_id
                    });
                match benefit {
                    None => v.push(FieldError::new(
                        "value_error",
                        loc!["body", "benefits", i],
                        "Benefit does not exist.",
                        input,
                    )),
                    Some(b) if !b.selectable && !previous.contains(&b.id) => {
                        v.push(FieldError::new(
                            "value_error",
                            loc!["body", "benefits", i],
                            "Benefit is not selectable.",
                            input,
                        ))
                    }
                    Some(b) => {
                        if !next.contains(&b.id) {
                            next.push(b.id);
                        }
                    }
                }
            }
            // A benefit that can't be selected can't be removed either.
            for removed in previous.iter().filter(|b| !requested.contains(b)) {
                let locked = state
                    .store
                    .get::<Benefit>(&removed.key())
                    .await?
                    .is_some_and(|b| b.value.deleted_at.is_none() && !b.value.selectable);
                if locked {
                    v.push(FieldError::new(
                        "value_error",
                        loc!["body", "benefits"],
                        "Benefit is not selectable.",
                        Value::from(removed.to_string()),
                    ));
                }
            }
            v.finish()?;
            // Polar keeps `modified_at`: only the association rows change.
            product.benefit_ids = next;
            Ok(Some(product))
        })
        .await?;
    found(updated)
}
