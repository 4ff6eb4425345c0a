//! Products and their prices: list, find, create, update (prices replaced or archived,
//! custom fields attached), and the benefits a product grants. Their renderings are
//! `crate::app::views`.

use std::cmp::Ordering;
use std::collections::HashSet;

use tollgate_storage::{Batch, Expect, Stored};

use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::{
    compare_times, directed, filtered_page, nulls_last, sorted_page_of, KeyOrder,
};
use crate::app::paging::{ListParams, Sorting};
use crate::auth::Subject;
use crate::domain::benefit::Benefit;
use crate::domain::currency::Currency;
use crate::domain::custom_field::CustomField;
use crate::domain::ids::{BenefitId, OrganizationId, PriceId, ProductId};
use crate::domain::product::{
    price_sets_problem, AsSent, AttachField, AttachedCustomField, NewPrice, NewProduct,
    PriceChange, PriceKind, PriceSetProblem, Product, ProductChange, ProductSort,
    PRODUCT_BY_BENEFIT,
};
use crate::domain::tax_settings::TaxBehaviorOption;
use crate::error::{AppError, Given, Invalid};
use crate::field;
use crate::state::AppState;

use super::found;
use super::meter_references::{metered_price_refusals, PriceAt};

// ---------------------------------------------------------------------------------------
// Helpers for other resources
// ---------------------------------------------------------------------------------------

/// A product the subject may see, the writes so far included (`GET /v1/products/{id}`).
pub async fn get(state: &AppState, subject: Subject, id: ProductId) -> Result<Product, AppError> {
    state.store.read_barrier().await?;
    Ok(product_for(state, subject, id).await?.value)
}

/// A product the subject may see, else 404.
pub async fn product_for(
    state: &AppState,
    subject: Subject,
    id: ProductId,
) -> Result<Stored<Product>, AppError> {
    match state.store.get::<Product>(&id.key()).await? {
        Some(p) if can_access(state, subject, p.value.organization_id).await? => Ok(p),
        _ => Err(AppError::not_found()),
    }
}

/// The product owning a price (archived prices included), whoever may see it; callers
/// check access and whether the price is still on sale (`Product::active_price`).
pub async fn product_for_price(
    state: &AppState,
    id: PriceId,
) -> Result<Option<Stored<Product>>, AppError> {
    Ok(crate::domain::product::product_for_price(&state.store, id).await?)
}

/// The tax behaviour price `price` of product `product` chose (`None`: the organization's
/// default, also for a product or price no longer stored). Prices never change their
/// behaviour, so what a checkout or a subscription sold at is read from the product.
pub async fn price_tax_behavior(
    state: &AppState,
    product: ProductId,
    price: PriceId,
) -> Result<Option<TaxBehaviorOption>, AppError> {
    Ok(state
        .store
        .get::<Product>(&product.key())
        .await?
        .and_then(|p| p.value.price_tax_behavior(price)))
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
) -> Result<(Vec<Product>, u64), AppError> {
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

/// Whether an active (non-archived) product of `org` has no price in `currency` (what
/// refuses that currency as the organization's default).
pub async fn any_active_lacking(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    currency: Currency,
) -> Result<bool, AppError> {
    let filter = ProductFilter {
        organization_id: vec![org],
        is_archived: Some(false),
        ..ProductFilter::default()
    };
    let mut page = 1;
    loop {
        let params = ListParams { page, limit: 100 };
        let (items, total) = list(state, subject, &filter, params).await?;
        if items.iter().any(|p| !p.sells_in(currency)) {
            return Ok(true);
        }
        if items.is_empty() || page.saturating_mul(100) >= total {
            return Ok(false);
        }
        page += 1;
    }
}

/// The refusal of prices that leave out the organization's default currency.
fn default_currency_refusal(n: usize, sent: &AsSent) -> Invalid {
    price_set_refusal(PriceSetProblem::DefaultCurrencyMissing, n, sent)
}

/// There is no file service: no file id names an uploaded product media.
fn check_medias(medias: &[uuid::Uuid]) -> Vec<Invalid> {
    medias
        .iter()
        .enumerate()
        .map(|(i, id)| {
            Invalid::new(
                field!["medias", i],
                "File does not exist or is not yet uploaded.",
                *id,
            )
        })
        .collect()
}

/// The custom fields to attach, in the order given; each must be a live custom field of
/// the product's organization, attached once. The refused ones are in `invalid`.
async fn attached_fields(
    state: &AppState,
    invalid: &mut Vec<Invalid>,
    organization_id: OrganizationId,
    list: &[AttachField],
) -> Result<Vec<AttachedCustomField>, AppError> {
    let mut out: Vec<AttachedCustomField> = Vec::with_capacity(list.len());
    for (i, a) in list.iter().enumerate() {
        let id = a.custom_field_id;
        let exists = state
            .store
            .get::<CustomField>(&id.key())
            .await?
            .is_some_and(|f| {
                f.value.organization_id == organization_id && f.value.deleted_at.is_none()
            });
        if !exists {
            invalid.push(Invalid::new(
                field!["attached_custom_fields", i],
                "Custom field does not exist.",
                id.0,
            ));
        } else if out.iter().any(|o| o.custom_field_id == id) {
            invalid.push(Invalid::new(
                field!["attached_custom_fields", i],
                "Custom field is already attached.",
                id.0,
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

/// Creates a product with its prices in an organization `subject` reaches; its media and
/// custom fields are checked there.
pub async fn create(
    state: &AppState,
    subject: Subject,
    new: NewProduct,
) -> Result<Product, AppError> {
    let organization_id = organization_for_create(state, subject, new.organization_id).await?;
    let mut invalid = Vec::new();
    let default = super::organizations::default_currency(state, organization_id).await?;
    if !new.prices.iter().any(|p| p.currency == default) {
        invalid.push(default_currency_refusal(new.prices.len(), &new.prices_sent));
    }
    let priced: Vec<PriceAt> = new
        .prices
        .iter()
        .enumerate()
        .map(|(index, p)| PriceAt {
            index,
            currency: p.currency,
            kind: &p.kind,
            added: true,
        })
        .collect();
    invalid.extend(metered_price_refusals(state, organization_id, &priced).await?);
    invalid.extend(check_medias(&new.medias));
    let attached = attached_fields(
        state,
        &mut invalid,
        organization_id,
        &new.attached_custom_fields,
    )
    .await?;
    if !invalid.is_empty() {
        return Err(AppError::Invalid(invalid));
    }
    let now = state.now();
    let recurring = new.prices.iter().all(|p| p.kind.is_recurring());
    let mut product = Product {
        id: ProductId::new(),
        organization_id,
        created_at: now,
        modified_at: None,
        name: new.name,
        description: new.description,
        is_recurring: recurring,
        is_archived: false,
        is_tax_applicable: true,
        metadata: new.metadata,
        prices: Vec::new(),
        benefit_ids: Vec::new(),
        media_ids: Vec::new(),
        attached_custom_fields: attached,
        recurring_interval_count: new.recurring_interval_count,
        trial: new.trial,
        price_tax_behavior: Vec::new(),
        free_price_currency: Vec::new(),
    };
    for price in new.prices {
        product.add_price(price, now);
    }
    let mut batch = Batch::new();
    batch.put(&product, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok(product)
}

/// Applies `prices` of an update: listed existing prices stay, new ones are added, every
/// other non-archived price is archived. The resulting set must be a valid price set; the
/// refusals (quoting `sent`, the list as sent) are pushed on `invalid`.
fn apply_prices(
    invalid: &mut Vec<Invalid>,
    product: &mut Product,
    (changes, sent): (&[PriceChange], &AsSent),
    default: Currency,
    now: chrono::DateTime<chrono::Utc>,
) {
    if changes.is_empty() {
        invalid.push(
            Invalid::new(
                field!["prices"],
                "At least one price is required.",
                Given::of(sent),
            )
            .kind("too_short"),
        );
        return;
    }
    let mut kept: HashSet<PriceId> = HashSet::new();
    let mut added: Vec<NewPrice> = Vec::new();
    let mut unknown = false;
    for (i, change) in changes.iter().enumerate() {
        match change {
            PriceChange::Keep(id) => {
                if product.active_price(*id).is_some() {
                    kept.insert(*id);
                } else {
                    unknown = true;
                    invalid.push(Invalid::new(
                        field!["prices", i],
                        "Price does not exist.",
                        id.0,
                    ));
                }
            }
            PriceChange::Add(price) => added.push(price.clone()),
        }
    }
    if unknown {
        return;
    }
    let resulting: Vec<(Currency, &PriceKind)> = product
        .active_prices()
        .filter(|p| kept.contains(&p.id))
        .map(|p| (product.currency_of(p), &p.kind))
        .chain(added.iter().map(|p| (p.currency, &p.kind)))
        .collect();
    if let Some((problem, n)) = price_sets_problem(&resulting, Some(default)) {
        invalid.push(price_set_refusal(problem, n, sent));
        return;
    }
    for price in product.prices.iter_mut() {
        if !price.is_archived && !kept.contains(&price.id) {
            price.is_archived = true;
            price.modified_at = Some(now);
        }
    }
    // A kept price keeps the behaviour it chose; a new one has its own.
    for price in added {
        product.add_price(price, now);
    }
    let recurring = product.active_prices().all(|p| p.kind.is_recurring());
    product.is_recurring = recurring;
}

/// The refusal of a resulting price set of `n` prices (pydantic's list errors).
fn price_set_refusal(problem: PriceSetProblem, n: usize, sent: &AsSent) -> Invalid {
    let at = |msg: String| Invalid::new(field!["prices"], msg, Given::of(sent));
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    match problem {
        PriceSetProblem::TooShort { min } => at(format!(
            "List should have at least {min} item after validation, not {n}"
        ))
        .kind("too_short")
        .with_ctx("field_type", "List")
        .with_ctx("min_length", u32::try_from(min).unwrap_or(u32::MAX))
        .with_ctx("actual_length", n32),
        PriceSetProblem::TooLong { max } => {
            let unit = if max == 1 { "item" } else { "items" };
            at(format!(
                "List should have at most {max} {unit} after validation, not {n}"
            ))
            .kind("too_long")
            .with_ctx("field_type", "List")
            .with_ctx("max_length", u32::try_from(max).unwrap_or(u32::MAX))
            .with_ctx("actual_length", n32)
        }
        PriceSetProblem::Mixed => {
            at("Value error, Recurring and one-time prices can't be mixed.".into())
        }
        PriceSetProblem::SameInterval => {
            at("Value error, Only one price per interval is allowed.".into())
        }
        PriceSetProblem::DifferentStructure => {
            at("All price currencies must define the same set of price types.".into())
        }
        PriceSetProblem::DefaultCurrencyMissing => at(
            "The organization's default presentment currency must be present in the prices.".into(),
        ),
    }
}

/// Changes a product: name, description, archived, metadata, its price set (listed prices
/// stay, new ones are added, the rest archived), its attached custom fields. The rules
/// that need the stored product are checked here, in the order of Polar's 422.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: ProductId,
    change: ProductChange,
) -> Result<Product, AppError> {
    let stored = product_for(state, subject, id).await?;
    let default =
        super::organizations::default_currency(state, stored.value.organization_id).await?;
    if let Some(changes) = &change.prices {
        let current = &stored.value;
        let priced: Vec<PriceAt> = changes
            .iter()
            .enumerate()
            .filter_map(|(index, c)| match c {
                PriceChange::Keep(id) => current.active_price(*id).map(|p| PriceAt {
                    index,
                    currency: current.currency_of(p),
                    kind: &p.kind,
                    added: false,
                }),
                PriceChange::Add(p) => Some(PriceAt {
                    index,
                    currency: p.currency,
                    kind: &p.kind,
                    added: true,
                }),
            })
            .collect();
        let refused = metered_price_refusals(state, current.organization_id, &priced).await?;
        if !refused.is_empty() {
            return Err(AppError::Invalid(refused));
        }
    }
    let now = state.now();
    let updated = state
        .store
        .update::<Product, AppError>(&id.key(), async |current| {
            let mut product = current.clone();
            let mut invalid = Vec::new();
            if let Some(changes) = &change.prices {
                apply_prices(
                    &mut invalid,
                    &mut product,
                    (changes, &change.prices_sent),
                    default,
                    now,
                );
            }
            // A period's length is what subscriptions were sold at: it never changes.
            if let Some(count) = change.recurring_interval_count {
                if count != product.recurring_interval_count {
                    invalid.push(Invalid::new(
                        field!["recurring_interval_count"],
                        "The billing interval count of a product cannot be changed.",
                        count,
                    ));
                }
            }
            match change.trial {
                Some(Some(trial)) if !product.is_recurring => {
                    let msg = "Trial configuration is only supported on recurring products.";
                    invalid.push(Invalid::new(
                        field!["trial_interval"],
                        msg,
                        trial.interval.as_str(),
                    ));
                    invalid.push(Invalid::new(
                        field!["trial_interval_count"],
                        msg,
                        trial.count,
                    ));
                }
                Some(trial) => product.trial = trial,
                None => {}
            }
            if let Some(medias) = &change.medias {
                invalid.extend(check_medias(medias));
            }
            if let Some(list) = &change.attached_custom_fields {
                product.attached_custom_fields =
                    attached_fields(state, &mut invalid, product.organization_id, list).await?;
            }
            if !invalid.is_empty() {
                return Err(AppError::Invalid(invalid));
            }
            if let Some(name) = &change.name {
                product.name = name.clone();
            }
            if let Some(d) = &change.description {
                product.description = Some(d.clone());
            }
            if let Some(archived) = change.is_archived {
                product.is_archived = archived;
            }
            if let Some(m) = &change.metadata {
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
    requested: Vec<BenefitId>,
) -> Result<Product, AppError> {
    product_for(state, subject, id).await?;
    let updated = state
        .store
        .update::<Product, AppError>(&id.key(), async |current| {
            let mut product = current.clone();
            let previous = &current.benefit_ids;
            let mut invalid = Vec::new();
            let mut next: Vec<BenefitId> = Vec::with_capacity(requested.len());
            for (i, benefit_id) in requested.iter().enumerate() {
                let benefit = state
                    .store
                    .get::<Benefit>(&benefit_id.key())
                    .await?
                    .map(|b| b.value)
                    .filter(|b| {
                        b.deleted_at.is_none() && b.organization_id == product.organization_id
                    });
                match benefit {
                    None => invalid.push(Invalid::new(
                        field!["benefits", i],
                        "Benefit does not exist.",
                        benefit_id.0,
                    )),
                    Some(b) if !b.selectable && !previous.contains(&b.id) => {
                        invalid.push(Invalid::new(
                            field!["benefits", i],
                            "Benefit is not selectable.",
                            benefit_id.0,
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
                    invalid.push(Invalid::new(
                        field!["benefits"],
                        "Benefit is not selectable.",
                        removed.0,
                    ));
                }
            }
            if !invalid.is_empty() {
                return Err(AppError::Invalid(invalid));
            }
            // Polar keeps `modified_at`: only the association rows change.
            product.benefit_ids = next;
            Ok(Some(product))
        })
        .await?;
    found(updated)
}

#[cfg(test)]
#[path = "products_tests.rs"]
mod tests;
