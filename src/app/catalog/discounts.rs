//! Discounts: list, find, create, update and (soft) delete (Polar's
//! `discount/endpoints.py` and `service.py`). Their rendering is `crate::app::views`.

use std::cmp::Ordering;

use tollgate_storage::{Batch, Expect, StorageError, Stored};

use crate::api::discount::DATES_OUT_OF_ORDER;
use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::{compare_times, directed, nulls_last, sorted_page_of};
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::auth::Subject;
use crate::domain::currency::Currency;
use crate::domain::discount::{
    discount_by_code, normalize_code, Discount, DiscountChange, DiscountDuration, DiscountKind,
    NewDiscount, DISCOUNT_BY_CODE, DISCOUNT_BY_CREATED, DISCOUNT_BY_NAME, DISCOUNT_BY_REDEMPTIONS,
};
use crate::domain::ids::{DiscountId, OrganizationId, ProductId};
use crate::domain::product::Product;
use crate::error::{AppError, Given};
use crate::field;
use crate::state::AppState;

use super::found;

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
) -> Result<(Vec<Discount>, u64), AppError> {
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
    sorted_page_of::<Discount>(
        state,
        index,
        &tenants,
        desc,
        params,
        filter,
        several.as_deref(),
    )
    .await
}

/// A discount the subject may see, the writes so far included (`GET /v1/discounts/{id}`).
pub async fn get(state: &AppState, subject: Subject, id: DiscountId) -> Result<Discount, AppError> {
    state.store.read_barrier().await?;
    Ok(discount_for(state, subject, id).await?.value)
}

/// A discount the subject may see, else 404.
pub async fn discount_for(
    state: &AppState,
    subject: Subject,
    id: DiscountId,
) -> Result<Stored<Discount>, AppError> {
    match state.store.get::<Discount>(&id.key()).await? {
        Some(d)
            if !d.value.is_deleted()
                && can_access(state, subject, d.value.organization_id).await? =>
        {
            Ok(d)
        }
        _ => Err(AppError::not_found()),
    }
}

fn code_taken(code: &str) -> AppError {
    AppError::invalid(
        field!["code"],
        "Discount with this code already exists.",
        code,
    )
}

/// Another live discount of the organization holds this code (case-insensitively).
async fn code_in_use(
    state: &AppState,
    org: OrganizationId,
    code: &str,
    except: Option<DiscountId>,
) -> Result<bool, AppError> {
    Ok(discount_by_code(&state.store, org, code)
        .await?
        .is_some_and(|d| Some(d.value.id) != except))
}

/// The products a discount is restricted to: each must be a product of the organization
/// (422 "Product not found." at its index); repeated ids count once.
async fn check_products(
    state: &AppState,
    org: OrganizationId,
    ids: &[ProductId],
) -> Result<Vec<ProductId>, AppError> {
    let mut out: Vec<ProductId> = Vec::new();
    for (index, pid) in ids.iter().copied().enumerate() {
        let found = state
            .store
            .get::<Product>(&pid.key())
            .await?
            .is_some_and(|p| p.value.organization_id == org);
        if !found {
            return Err(AppError::invalid(
                field!["products", index],
                "Product not found.",
                pid.0,
            ));
        }
        if !out.contains(&pid) {
            out.push(pid);
        }
    }
    Ok(out)
}

/// Creates a discount in an organization `subject` reaches: its code must be free there,
/// its products of the organization.
pub async fn create(
    state: &AppState,
    subject: Subject,
    new: NewDiscount,
) -> Result<Discount, AppError> {
    let organization_id = organization_for_create(state, subject, new.organization_id).await?;
    if let Some(code) = &new.code {
        if code_in_use(state, organization_id, code, None).await? {
            return Err(code_taken(code));
        }
    }
    let product_ids = check_products(state, organization_id, &new.products).await?;
    let discount = Discount {
        id: DiscountId::new(),
        organization_id,
        created_at: state.now(),
        modified_at: None,
        name: new.name,
        code: new.code,
        kind: new.kind,
        other_amounts: new.other_amounts,
        duration: new.duration,
        starts_at: new.starts_at,
        ends_at: new.ends_at,
        max_redemptions: new.max_redemptions,
        redemptions_count: 0,
        product_ids,
        metadata: new.metadata,
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

fn redeemed_error(field: &str, current: impl Into<Given>) -> AppError {
    AppError::invalid(
        field![field],
        "This field cannot be changed because the discount has already been redeemed.",
        current,
    )
}

/// A field of a change, the amounts it asks for and what the discount has in that field.
type WantedAmounts = (&'static str, Vec<(Currency, i64)>, Given);

/// The amounts a change gives a fixed discount, the field that named them and the value
/// the discount has in it (what a refusal quotes, as for the other fields): `amounts`
/// replaces them all; the deprecated `amount` and `currency` make them `{currency:
/// amount}`, the one not sent taken from the discount's first amount (Polar's conversion
/// of the pair). `None`: the change names none of them.
fn amounts_wanted(current: &Discount, change: &DiscountChange) -> Option<WantedAmounts> {
    let now = current.fixed_amounts();
    let (first_currency, first_amount) = now.first().copied().unwrap_or((Currency::DEFAULT, 0));
    if let Some(amounts) = &change.amounts {
        let held: std::collections::BTreeMap<String, i64> =
            now.iter().map(|(c, a)| (c.to_string(), *a)).collect();
        return Some(("amounts", amounts.clone(), Given::of(&held)));
    }
    if change.amount.is_none() && change.currency.is_none() {
        return None;
    }
    let currency = change.currency.unwrap_or(first_currency);
    let amount = change.amount.unwrap_or(first_amount);
    let (field, held) = match change.amount {
        Some(a) if a != first_amount || change.currency.is_none() => {
            ("amount", Given::from(first_amount))
        }
        _ => ("currency", Given::from(first_currency.code())),
    };
    Some((field, vec![(currency, amount)], held))
}

/// Applies a change to a copy of the discount: type and duration cannot change, and the
/// amounts and months cannot change once the discount has been redeemed (Polar's 422
/// names the field sent).
async fn apply_change(
    state: &AppState,
    current: &Discount,
    change: &DiscountChange,
) -> Result<Discount, AppError> {
    let mut d = current.clone();
    if let Some(duration) = change.duration {
        if duration != d.duration.duration_type() {
            return Err(AppError::invalid(
                field!["duration"],
                "Duration cannot be changed.",
                duration.as_str(),
            ));
        }
    }
    if let Some(kind) = change.kind {
        if kind != d.discount_type() {
            return Err(AppError::invalid(
                field!["type"],
                "Type cannot be changed.",
                kind.as_str(),
            ));
        }
    }
    let redeemed = d.redemptions_count > 0;
    match &mut d.kind {
        DiscountKind::Fixed { .. } => {
            if let Some((field, amounts, given)) = amounts_wanted(current, change) {
                if redeemed && amounts != current.fixed_amounts() {
                    return Err(redeemed_error(field, given));
                }
                d.set_fixed_amounts(&amounts);
            }
        }
        DiscountKind::Percentage { basis_points } => {
            if let Some(new) = change.basis_points {
                if redeemed && new != *basis_points {
                    return Err(redeemed_error("basis_points", *basis_points));
                }
                *basis_points = new;
            }
        }
    }
    if let (Some(m), DiscountDuration::Repeating { months }) =
        (change.duration_in_months, &mut d.duration)
    {
        if redeemed && m != *months {
            return Err(redeemed_error("duration_in_months", *months));
        }
        *months = m;
    }
    if let Some(name) = &change.name {
        d.name = name.clone();
    }
    if let Some(code) = &change.code {
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
    if let Some(s) = change.starts_at {
        d.starts_at = s;
    }
    if let Some(e) = change.ends_at {
        d.ends_at = e;
    }
    if let Some(m) = change.max_redemptions {
        d.max_redemptions = m;
    }
    if let (Some(s), Some(e)) = (d.starts_at, d.ends_at) {
        if s >= e {
            // A rule on the whole command: no field (the adapter quotes the body).
            return Err(AppError::invalid(
                Vec::new(),
                DATES_OUT_OF_ORDER,
                Given::none(),
            ));
        }
    }
    if let Some(ids) = &change.products {
        d.product_ids = check_products(state, d.organization_id, ids).await?;
    }
    if let Some(m) = &change.metadata {
        d.metadata = m.clone();
    }
    Ok(d)
}

/// Changes a discount (what redemptions allow to change once it was redeemed).
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: DiscountId,
    change: DiscountChange,
) -> Result<Discount, AppError> {
    discount_for(state, subject, id).await?;
    let now = state.now();
    let mut code = None;
    let updated = state
        .store
        .update::<Discount, AppError>(&id.key(), async |current| {
            if current.is_deleted() {
                return Err(AppError::not_found());
            }
            let mut discount = apply_change(state, current, &change).await?;
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
pub async fn delete(state: &AppState, subject: Subject, id: DiscountId) -> Result<(), AppError> {
    discount_for(state, subject, id).await?;
    let now = state.now();
    state
        .store
        .update::<Discount, AppError>(&id.key(), async |current| {
            if current.is_deleted() {
                return Err(AppError::not_found());
            }
            let mut discount = current.clone();
            discount.deleted_at = Some(now);
            discount.modified_at = Some(now);
            Ok(Some(discount))
        })
        .await?;
    Ok(())
}

#[cfg(test)]
#[path = "discounts_tests.rs"]
mod tests;
