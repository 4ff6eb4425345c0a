//! Customers of an organization: list, find, create, update and (soft) delete (Polar's
//! `customer/endpoints.py` and `service.py`).

use std::cmp::Ordering;

use serde_json::Value;
use tollgate_storage::{Batch, Expect, StorageError, Stored};

use crate::api::customer::{
    check_tax_id, normalize_email_input, parse_address, parse_tax_id_input, CustomerCreate,
    CustomerUpdate,
};
use crate::api::metadata::parse_metadata;
use crate::api::Maybe;
use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::{compare_times, directed, nulls_last, sorted_page_of};
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::auth::Subject;
use crate::domain::customer::{
    customer_by_email, normalize_email, Address, Customer, CUSTOMER_BY_CREATED, CUSTOMER_BY_EMAIL,
    CUSTOMER_BY_NAME,
};
use crate::domain::ids::{CustomerId, OrganizationId};
use crate::domain::metadata::Metadata;
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

use super::found;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CustomerSort {
    CreatedAt,
    Email,
    Name,
}

impl SortField for CustomerSort {
    const FIELDS: &'static [(&'static str, CustomerSort)] = &[
        ("created_at", CustomerSort::CreatedAt),
        ("email", CustomerSort::Email),
        ("name", CustomerSort::Name),
    ];
}

/// One criterion of the customer list, as its index orders it (names case-folded, no name
/// last ascending).
fn compare(field: CustomerSort, descending: bool, a: &Customer, b: &Customer) -> Ordering {
    let ordering = match field {
        CustomerSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
        CustomerSort::Email => normalize_email(&a.email).cmp(&normalize_email(&b.email)),
        CustomerSort::Name => nulls_last(
            a.name.as_ref().map(|n| n.to_lowercase()),
            b.name.as_ref().map(|n| n.to_lowercase()),
        ),
    };
    directed(ordering, descending)
}

/// Which customers a list shows, and in what order.
#[derive(Debug, Clone)]
pub struct CustomerFilter {
    /// Of these organizations (all the subject reaches when empty).
    pub organization_id: Vec<OrganizationId>,
    /// Polar's `query`: a case-insensitive substring of the e-mail address or the name.
    pub query: Option<String>,
    pub sorting: Sorting<CustomerSort>,
}

impl Default for CustomerFilter {
    fn default() -> Self {
        Self {
            organization_id: Vec::new(),
            query: None,
            sorting: Sorting::by(CustomerSort::CreatedAt, true),
        }
    }
}

/// One page of the customers `subject` reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &CustomerFilter,
    params: ListParams,
) -> Result<(Vec<Customer>, u64), ApiError> {
    let sorting = &filter.sorting;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    // The first criterion is served by an index (equal values follow creation order), the
    // others in memory.
    let (field, desc) = sorting.primary();
    let index = match field {
        CustomerSort::CreatedAt => CUSTOMER_BY_CREATED,
        CustomerSort::Email => CUSTOMER_BY_EMAIL,
        CustomerSort::Name => CUSTOMER_BY_NAME,
    };
    // Polar's `query`: a case-insensitive substring of the e-mail address or the name.
    let needle = filter.query.as_ref().map(|s| s.to_lowercase());
    let matches = |c: &Customer| match &needle {
        Some(n) => {
            c.email.to_lowercase().contains(n.as_str())
                || c.name
                    .as_ref()
                    .is_some_and(|m| m.to_lowercase().contains(n.as_str()))
        }
        None => true,
    };
    let filter: Option<&dyn Fn(&Customer) -> bool> = if needle.is_some() {
        Some(&matches)
    } else {
        None
    };
    let several = sorting.several(compare);
    sorted_page_of::<Customer>(
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

/// A customer the subject may see, else 404.
pub async fn customer_for(
    state: &AppState,
    subject: Subject,
    id: CustomerId,
) -> Result<Stored<Customer>, ApiError> {
    match state.store.get::<Customer>(&id.key()).await? {
        Some(c)
            if !c.value.is_deleted()
                && can_access(state, subject, c.value.organization_id).await? =>
        {
            Ok(c)
        }
        _ => Err(ApiError::not_found()),
    }
}

fn email_taken(email: &str) -> ApiError {
    ApiError::invalid(
        loc!["body", "email"],
        "A customer with this email address already exists.",
        Value::from(email),
    )
}

fn check_email(v: &mut Validator, raw: &str) -> Option<String> {
    let email = normalize_email_input(raw);
    v.email(loc!["body", "email"], &email).then_some(email)
}

fn check_address(v: &mut Validator, value: &Value) -> Option<Address> {
    match parse_address(value, loc!["body", "billing_address"]) {
        Ok(a) => Some(a),
        Err(errors) => {
            errors.into_iter().for_each(|e| v.push(e));
            None
        }
    }
}

fn check_tax_input(v: &mut Validator, value: &Value) -> Option<String> {
    match parse_tax_id_input(value, loc!["body", "tax_id"]) {
        Ok(t) => t,
        Err(errors) => {
            errors.into_iter().for_each(|e| v.push(e));
            None
        }
    }
}

fn check_metadata(v: &mut Validator, value: &Value) -> Metadata {
    match parse_metadata("metadata", value) {
        Ok(m) => m,
        Err(errors) => {
            errors.into_iter().for_each(|e| v.push(e));
            Metadata::default()
        }
    }
}

fn tax_error(errors: Vec<FieldError>) -> ApiError {
    ApiError::Validation(errors)
}

/// Creates a customer in an organization `subject` reaches; its e-mail address must be
/// free there.
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: CustomerCreate,
) -> Result<Customer, ApiError> {
    let mut v = Validator::new();
    let email = check_email(&mut v, &input.email);
    let billing_address = match &input.billing_address {
        Some(Value::Null) | None => None,
        Some(value) => check_address(&mut v, value),
    };
    let tax_number = input
        .tax_id
        .as_ref()
        .and_then(|value| check_tax_input(&mut v, value));
    let metadata = input
        .metadata
        .as_ref()
        .map(|m| check_metadata(&mut v, m))
        .unwrap_or_default();
    v.finish()?;
    let Some(email) = email else {
        return Err(ApiError::internal("email validated but missing"));
    };

    let organization_id = organization_for_create(state, subject, input.organization_id).await?;
    if customer_by_email(&state.store, organization_id, &email)
        .await?
        .is_some()
    {
        return Err(email_taken(&email));
    }
    let tax_id = match &tax_number {
        Some(number) => Some(
            check_tax_id(
                number,
                billing_address.as_ref(),
                loc!["body", "billing_address"],
                loc!["body", "tax_id"],
            )
            .map_err(tax_error)?,
        ),
        None => None,
    };
    let mut customer = Customer::new(CustomerId::new(), organization_id, email, state.now());
    customer.name = input.name;
    customer.billing_address = billing_address;
    customer.tax_id = tax_id;
    customer.metadata = metadata;
    let mut batch = Batch::new();
    batch.put(&customer, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => {}
        // Lost a race for the address to a concurrent create.
        Err(StorageError::Unique { .. }) => return Err(email_taken(&customer.email)),
        Err(e) => return Err(e.into()),
    }
    Ok(customer)
}

/// An update's fields, checked on their own (before the customer is looked up).
struct Changes {
    email: Option<String>,
    billing_address: Option<Option<Address>>,
    /// `Some(None)` clears the tax id.
    tax_number: Option<Option<String>>,
    metadata: Option<Metadata>,
}

fn check_update(input: &CustomerUpdate) -> Result<Changes, ApiError> {
    let mut v = Validator::new();
    let email = input.email.as_value().and_then(|e| check_email(&mut v, e));
    let billing_address = match &input.billing_address {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(value) => Some(check_address(&mut v, value)),
    };
    let tax_number = match &input.tax_id {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(value) => Some(check_tax_input(&mut v, value)),
    };
    let metadata = input.metadata.as_value().map(|m| check_metadata(&mut v, m));
    v.finish()?;
    Ok(Changes {
        email,
        billing_address,
        tax_number,
        metadata,
    })
}

/// Applies an update to a copy of the customer. A new e-mail address must be free in the
/// organization and resets `email_verified`; a new tax id, or a new billing address under
/// an existing one, is validated against the resulting country.
async fn apply_update(
    state: &AppState,
    current: &Customer,
    input: &CustomerUpdate,
    changes: &Changes,
) -> Result<Customer, ApiError> {
    let mut c = current.clone();
    if let Some(email) = &changes.email {
        if normalize_email(email) != normalize_email(&c.email) {
            let taken = customer_by_email(&state.store, c.organization_id, email)
                .await?
                .is_some_and(|other| other.value.id != c.id);
            if taken {
                return Err(email_taken(email));
            }
            c.email_verified = false;
        }
        c.email = email.clone();
    }
    if let Some(name) = input.name.clone().into_update() {
        c.name = name;
    }
    if let Some(address) = &changes.billing_address {
        c.billing_address = address.clone();
    }
    let address_loc = || loc!["body", "billing_address"];
    let tax_loc = || loc!["body", "tax_id"];
    match &changes.tax_number {
        Some(None) => c.tax_id = None,
        Some(Some(number)) => {
            c.tax_id = Some(
                check_tax_id(number, c.billing_address.as_ref(), address_loc(), tax_loc())
                    .map_err(tax_error)?,
            );
        }
        None => {
            if changes.billing_address.is_some() {
                if let Some(existing) = &c.tax_id {
                    c.tax_id = Some(
                        check_tax_id(
                            &existing.value,
                            c.billing_address.as_ref(),
                            address_loc(),
                            tax_loc(),
                        )
                        .map_err(tax_error)?,
                    );
                }
            }
        }
    }
    if let Some(m) = &changes.metadata {
        c.metadata = m.clone();
    }
    Ok(c)
}

/// Changes a customer: a new e-mail address must be free in the organization (and resets
/// `email_verified`); a tax id is checked against the resulting country.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: CustomerId,
    input: CustomerUpdate,
) -> Result<Customer, ApiError> {
    let changes = check_update(&input)?;
    customer_for(state, subject, id).await?;
    let now = state.now();
    let mut email = None;
    let updated = state
        .store
        .update::<Customer, ApiError>(&id.key(), async |current| {
            if current.is_deleted() {
                return Err(ApiError::not_found());
            }
            let mut customer = apply_update(state, current, &input, &changes).await?;
            customer.modified_at = Some(now);
            email = Some(customer.email.clone());
            Ok(Some(customer))
        })
        .await;
    match updated {
        // Lost a race for the address to another customer.
        Err(tollgate_storage::UpdateError::Storage(StorageError::Unique { .. })) => {
            Err(email_taken(email.as_deref().unwrap_or_default()))
        }
        other => found(other?),
    }
}

/// Soft-deletes a customer: no longer listed or found; its orders keep it.
pub async fn delete(state: &AppState, subject: Subject, id: CustomerId) -> Result<(), ApiError> {
    customer_for(state, subject, id).await?;
    let now = state.now();
    state
        .store
        .update::<Customer, ApiError>(&id.key(), async |current| {
            if current.is_deleted() {
                return Err(ApiError::not_found());
            }
            let mut customer = current.clone();
            customer.deleted_at = Some(now);
            customer.modified_at = Some(now);
            Ok(Some(customer))
        })
        .await?;
    Ok(())
}
