//! Customers of an organization: list, find (by id or by the seller's `external_id`),
//! create, update and (soft) delete (Polar's `customer/endpoints.py` and `service.py`).

use std::cmp::Ordering;

use tollgate_storage::{Batch, Direction, Expect, StorageError, Stored};

use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::{
    compare_times, directed, nulls_last, rarest_probe, select_page, sorted_page_of,
};
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::auth::Subject;
use crate::domain::customer::{
    customer_by_email, customer_by_external_id, matches_search, normalize_email, probe,
    search_tenant, validate_tax_id, Address, Customer, CustomerChange, NewCustomer, Probe, TaxId,
    CUSTOMER_BY_CREATED, CUSTOMER_BY_EMAIL, CUSTOMER_BY_NAME, CUSTOMER_EXTERNAL_ID,
    CUSTOMER_SEARCH,
};
use crate::domain::ids::{CustomerId, OrganizationId};
use crate::error::{AppError, Given, Invalid};
use crate::field;
use crate::state::AppState;

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
    /// Polar's `query`: a case-insensitive substring of the e-mail address or the name
    /// (the billing name is the name), or a prefix of the external id; below 3 characters,
    /// the beginning of a word of the address or the name, or of the external id
    /// (`domain::customer::search`). Read from the search index, never a scan.
    pub query: Option<String>,
    /// Polar's `email`: this address exactly, case-insensitively.
    pub email: Option<String>,
    pub sorting: Sorting<CustomerSort>,
}

impl Default for CustomerFilter {
    fn default() -> Self {
        Self {
            organization_id: Vec::new(),
            query: None,
            email: None,
            sorting: Sorting::by(CustomerSort::CreatedAt, true),
        }
    }
}

/// The store's meta key saying the search indexes of the records written before them
/// (customers, license keys) were built.
const SEARCH_INDEXES_BUILT: &str = "search_indexes_v1";

/// Once per store, at start before anything is served: builds the search entries
/// (`CUSTOMER_SEARCH`, `LICENSE_KEY_SEARCH`) of the customers and license keys written by
/// a build without them, by rebuilding those two types' derived keys from their records,
/// then marks the store. On PostgreSQL the rebuild holds the records table in share mode,
/// so other nodes' writes wait for it; on the embedded store nothing else writes yet.
pub async fn ensure_search_indexes(store: &tollgate_storage::Store) -> Result<(), StorageError> {
    if store.get_meta(SEARCH_INDEXES_BUILT).await?.is_some() {
        return Ok(());
    }
    tracing::info!("building the search indexes of existing customers and license keys");
    store.rebuild_indexes::<Customer>().await?;
    store
        .rebuild_indexes::<tollgate_actors::license_key::LicenseKey>()
        .await?;
    let mut batch = Batch::new();
    batch.put_meta(SEARCH_INDEXES_BUILT, b"1".to_vec());
    store.commit_durable(&batch).await?;
    Ok(())
}

/// The customers of `orgs` that match `needle` (lower-cased, not empty), read from the
/// search index ([`CUSTOMER_SEARCH`]): the candidates under the needle's rarest term, in
/// creation order (backwards if `descending`), kept by [`matches_search`]. The cost grows
/// with that term's customers, never with all of them.
pub async fn search(
    state: &AppState,
    orgs: &[OrganizationId],
    needle: &str,
    descending: bool,
) -> Result<Vec<Customer>, AppError> {
    let Probe::Terms(terms) = probe(needle) else {
        return Err(AppError::internal("an empty needle searches nothing"));
    };
    let probes: Vec<Vec<Vec<u8>>> = terms
        .iter()
        .map(|t| orgs.iter().map(|o| search_tenant(*o, t)).collect())
        .collect();
    let direction = if descending {
        Direction::Desc
    } else {
        Direction::Asc
    };
    let ids = rarest_probe(state, CUSTOMER_SEARCH, &probes, direction).await?;
    let mut found = Vec::new();
    for chunk in ids.chunks(256) {
        for c in state.store.get_many::<Customer>(chunk).await? {
            if !c.value.is_deleted() && matches_search(&c.value, needle) {
                found.push(c.value);
            }
        }
    }
    Ok(found)
}

/// One page of the customers `subject` reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &CustomerFilter,
    params: ListParams,
) -> Result<(Vec<Customer>, u64), AppError> {
    let sorting = &filter.sorting;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let needle = filter
        .query
        .as_ref()
        .map(|s| s.to_lowercase())
        .filter(|n| !n.is_empty());
    let matches = |c: &Customer| needle.as_deref().is_none_or(|n| matches_search(c, n));
    if let Some(email) = &filter.email {
        // At most one customer per organization has the address: found through its
        // unique key, without a scan.
        let mut found = Vec::new();
        for org in &orgs {
            if let Some(c) = customer_by_email(&state.store, *org, email).await? {
                if matches(&c.value) {
                    found.push(Ok(c.value));
                }
            }
        }
        let order = |a: &Customer, b: &Customer| sorting.compare(a, b, compare);
        return select_page(found, &order, params);
    }
    let (field, desc) = sorting.primary();
    if let Some(needle) = &needle {
        // Candidates in creation order, in the direction of the first criterion: ties of
        // every criterion keep it, as they keep the index's (creation time, then id).
        let found = search(state, &orgs, needle, desc).await?;
        let order = |a: &Customer, b: &Customer| {
            compare(field, desc, a, b).then_with(|| sorting.compare(a, b, compare))
        };
        return select_page(found.into_iter().map(Ok), &order, params);
    }
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    // The first criterion is served by an index (equal values follow creation order), the
    // others in memory.
    let index = match field {
        CustomerSort::CreatedAt => CUSTOMER_BY_CREATED,
        CustomerSort::Email => CUSTOMER_BY_EMAIL,
        CustomerSort::Name => CUSTOMER_BY_NAME,
    };
    let several = sorting.several(compare);
    sorted_page_of::<Customer>(
        state,
        index,
        &tenants,
        desc,
        params,
        None,
        several.as_deref(),
    )
    .await
}

/// A customer the subject may see, else 404.
pub async fn customer_for(
    state: &AppState,
    subject: Subject,
    id: CustomerId,
) -> Result<Stored<Customer>, AppError> {
    match state.store.get::<Customer>(&id.key()).await? {
        Some(c)
            if !c.value.is_deleted()
                && can_access(state, subject, c.value.organization_id).await? =>
        {
            Ok(c)
        }
        _ => Err(AppError::not_found()),
    }
}

/// The customer with this external id among the organizations the subject reaches, else
/// 404. A user reaching several organizations that each have a customer with that id gets
/// Polar's 409 `AmbiguousExternalCustomerID`.
pub async fn customer_for_external(
    state: &AppState,
    subject: Subject,
    external_id: &str,
) -> Result<Stored<Customer>, AppError> {
    let mut found = None;
    for org in organizations_for_list(state, subject, &[]).await? {
        if let Some(c) = customer_by_external_id(&state.store, org, external_id).await? {
            if found.is_some() {
                return Err(AppError::ambiguous_external_customer_id());
            }
            found = Some(c);
        }
    }
    found.ok_or_else(AppError::not_found)
}

fn external_id_taken(external_id: &str) -> Invalid {
    Invalid::new(
        field!["external_id"],
        "A customer with this external ID already exists.",
        external_id,
    )
}

fn email_taken(email: &str) -> Invalid {
    Invalid::new(
        field!["email"],
        "A customer with this email address already exists.",
        email,
    )
}

/// The 422 of a write that lost a race for a unique value (`constraint`).
fn taken(constraint: &str, customer: &Customer) -> AppError {
    match (constraint, &customer.external_id) {
        (CUSTOMER_EXTERNAL_ID, Some(external_id)) => external_id_taken(external_id).into(),
        _ => email_taken(&customer.email).into(),
    }
}

/// A tax number checked against the billing address's country (Polar's rule): no address
/// is a `missing` billing address; a number the country does not accept is an invalid
/// tax id.
pub(crate) fn tax_id_for(number: &str, address: Option<&Address>) -> Result<TaxId, AppError> {
    let Some(address) = address else {
        return Err(Invalid::new(
            field!["billing_address"],
            "Country is required to validate tax ID.",
            Given::none(),
        )
        .kind("missing")
        .into());
    };
    validate_tax_id(number, &address.country)
        .map_err(|_| AppError::invalid(field!["tax_id"], "Invalid tax ID.", number))
}

/// A customer the subject may see (its writes so far read back), else 404.
pub async fn get(state: &AppState, subject: Subject, id: CustomerId) -> Result<Customer, AppError> {
    state.store.read_barrier().await?;
    Ok(customer_for(state, subject, id).await?.value)
}

/// [`customer_for_external`], its writes so far read back.
pub async fn get_external(
    state: &AppState,
    subject: Subject,
    external_id: &str,
) -> Result<Customer, AppError> {
    state.store.read_barrier().await?;
    Ok(customer_for_external(state, subject, external_id)
        .await?
        .value)
}

/// Creates a customer in an organization `subject` reaches; its e-mail address (and its
/// external id) must be free there.
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: NewCustomer,
) -> Result<Customer, AppError> {
    let organization_id =
        organization_for_create(state, subject, input.organization_id.map(|o| o.0)).await?;
    let email = input.email;
    // Both uniqueness errors at once, as Polar reports them.
    let mut taken_errors = Vec::new();
    if customer_by_email(&state.store, organization_id, &email)
        .await?
        .is_some()
    {
        taken_errors.push(email_taken(&email));
    }
    if let Some(external_id) = &input.external_id {
        if customer_by_external_id(&state.store, organization_id, external_id)
            .await?
            .is_some()
        {
            taken_errors.push(external_id_taken(external_id));
        }
    }
    if !taken_errors.is_empty() {
        return Err(AppError::Invalid(taken_errors));
    }
    let tax_id = match &input.tax_number {
        Some(number) => Some(tax_id_for(number, input.billing_address.as_ref())?),
        None => None,
    };
    let mut customer = Customer::new(CustomerId::new(), organization_id, email, state.now());
    customer.name = input.name;
    customer.billing_address = input.billing_address;
    customer.tax_id = tax_id;
    customer.metadata = input.metadata;
    customer.external_id = input.external_id;
    let mut batch = Batch::new();
    batch.put(&customer, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => {}
        // Lost a race for the address or the external id to a concurrent create.
        Err(StorageError::Unique { constraint }) => return Err(taken(constraint, &customer)),
        Err(e) => return Err(e.into()),
    }
    Ok(customer)
}

/// Applies a change to a copy of the customer. A new e-mail address must be free in the
/// organization and resets `email_verified`; a new tax id, or a new billing address under
/// an existing one, is validated against the resulting country.
async fn apply_update(
    state: &AppState,
    current: &Customer,
    changes: &CustomerChange,
) -> Result<Customer, AppError> {
    let mut c = current.clone();
    // Polar's rules: an external id, once set, cannot be changed (nor cleared); a new one
    // must be free in the organization.
    if let Some(external_id) = &changes.external_id {
        if *external_id != c.external_id {
            if c.external_id.is_some() {
                return Err(AppError::invalid(
                    field!["external_id"],
                    "Customer external ID cannot be updated.",
                    external_id.clone(),
                ));
            }
            if let Some(new) = external_id {
                let held = customer_by_external_id(&state.store, c.organization_id, new)
                    .await?
                    .is_some_and(|other| other.value.id != c.id);
                if held {
                    return Err(external_id_taken(new).into());
                }
            }
            c.external_id = external_id.clone();
        }
    }
    if let Some(email) = &changes.email {
        if normalize_email(email) != normalize_email(&c.email) {
            let taken = customer_by_email(&state.store, c.organization_id, email)
                .await?
                .is_some_and(|other| other.value.id != c.id);
            if taken {
                return Err(email_taken(email).into());
            }
            c.email_verified = false;
        }
        c.email = email.clone();
    }
    if let Some(name) = changes.name.clone() {
        c.name = name;
    }
    if let Some(address) = &changes.billing_address {
        c.billing_address = address.clone();
    }
    match &changes.tax_number {
        Some(None) => c.tax_id = None,
        Some(Some(number)) => {
            c.tax_id = Some(tax_id_for(number, c.billing_address.as_ref())?);
        }
        None => {
            if changes.billing_address.is_some() {
                if let Some(existing) = &c.tax_id {
                    c.tax_id = Some(tax_id_for(&existing.value, c.billing_address.as_ref())?);
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
    changes: CustomerChange,
) -> Result<Customer, AppError> {
    customer_for(state, subject, id).await?;
    let now = state.now();
    let mut attempted = None;
    let updated = state
        .store
        .update::<Customer, AppError>(&id.key(), async |current| {
            if current.is_deleted() {
                return Err(AppError::not_found());
            }
            let mut customer = apply_update(state, current, &changes).await?;
            customer.modified_at = Some(now);
            attempted = Some(customer.clone());
            Ok(Some(customer))
        })
        .await;
    match (updated, attempted) {
        // Lost a race for the address or the external id to another customer.
        (
            Err(tollgate_storage::UpdateError::Storage(StorageError::Unique { constraint })),
            Some(customer),
        ) => Err(taken(constraint, &customer)),
        (other, _) => found(other?),
    }
}

/// `PATCH /v1/customers/external/{external_id}`: [`update`] of the customer with that
/// external id; the body's own `external_id` is ignored (Polar's `CustomerUpdateExternalID`
/// has none).
pub async fn update_external(
    state: &AppState,
    subject: Subject,
    external_id: &str,
    mut changes: CustomerChange,
) -> Result<Customer, AppError> {
    changes.external_id = None;
    let customer = customer_for_external(state, subject, external_id).await?;
    update(state, subject, customer.value.id, changes).await
}

/// `DELETE /v1/customers/external/{external_id}`: [`delete`] of the customer with that
/// external id.
pub async fn delete_external(
    state: &AppState,
    subject: Subject,
    external_id: &str,
) -> Result<(), AppError> {
    let customer = customer_for_external(state, subject, external_id).await?;
    delete(state, subject, customer.value.id).await
}

/// What [`attach_external_id`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExternalIdOutcome {
    /// The customer had none and now holds it.
    Attached,
    /// The customer already held this one.
    Unchanged,
    /// The customer holds another one, which stays (Polar never changes it).
    KeptOwn(String),
    /// Another live customer of the organization holds it; nothing changed.
    HeldByAnother(CustomerId),
}

/// Gives a customer the seller's external id (a checkout's `external_customer_id`, once the
/// purchase created or found its customer), under Polar's rules: only a customer without
/// one takes it, and only if no other live customer of its organization holds it. Safe to
/// repeat; a deleted or unknown customer is a 404.
pub async fn attach_external_id(
    state: &AppState,
    id: CustomerId,
    external_id: &str,
) -> Result<ExternalIdOutcome, AppError> {
    if external_id.is_empty() {
        return Ok(ExternalIdOutcome::Unchanged);
    }
    let now = state.now();
    let mut outcome = ExternalIdOutcome::Unchanged;
    let result = state
        .store
        .update::<Customer, AppError>(&id.key(), async |current| {
            if current.is_deleted() {
                return Err(AppError::not_found());
            }
            match &current.external_id {
                Some(own) if own == external_id => {
                    outcome = ExternalIdOutcome::Unchanged;
                    return Ok(None);
                }
                Some(own) => {
                    outcome = ExternalIdOutcome::KeptOwn(own.clone());
                    return Ok(None);
                }
                None => {}
            }
            if let Some(other) =
                customer_by_external_id(&state.store, current.organization_id, external_id).await?
            {
                outcome = ExternalIdOutcome::HeldByAnother(other.value.id);
                return Ok(None);
            }
            let mut customer = current.clone();
            customer.adopt_external_id(external_id);
            customer.modified_at = Some(now);
            outcome = ExternalIdOutcome::Attached;
            Ok(Some(customer))
        })
        .await;
    match result {
        Ok(Some(_)) => Ok(outcome),
        Ok(None) => Err(AppError::not_found()),
        Err(tollgate_storage::UpdateError::Storage(StorageError::Unique { .. })) => {
            // Lost a race for it to another customer.
            let org = state
                .store
                .get::<Customer>(&id.key())
                .await?
                .map(|c| c.value.organization_id);
            let holder = match org {
                Some(org) => customer_by_external_id(&state.store, org, external_id)
                    .await?
                    .map(|c| c.value.id),
                None => None,
            };
            holder
                .map(ExternalIdOutcome::HeldByAnother)
                .ok_or_else(|| AppError::conflict("The customer changed; retry."))
        }
        Err(e) => Err(e.into()),
    }
}

/// Soft-deletes a customer: no longer listed or found; its orders keep it.
pub async fn delete(state: &AppState, subject: Subject, id: CustomerId) -> Result<(), AppError> {
    customer_for(state, subject, id).await?;
    let now = state.now();
    state
        .store
        .update::<Customer, AppError>(&id.key(), async |current| {
            if current.is_deleted() {
                return Err(AppError::not_found());
            }
            let mut customer = current.clone();
            customer.deleted_at = Some(now);
            customer.modified_at = Some(now);
            Ok(Some(customer))
        })
        .await?;
    Ok(())
}

#[cfg(test)]
#[path = "customers_tests.rs"]
mod tests;
