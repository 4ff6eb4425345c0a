//! Keys a seller brings along (issue 32, part 4): `POST /v1/license-keys/import`.
//!
//! Every key is checked before anything is written (one 422 lists every problem). A key's
//! id is derived from its organization and its value, so an import repeated (after a
//! timeout, or the whole file again) finds the keys it wrote and leaves them as they are;
//! a value that some other key of the organization already has is refused (the store's
//! unique index on `(organization, value)` holds this even against a concurrent write).
//! Holders are found by id or by e-mail address, and a customer is created for an address
//! the organization does not know yet. Keys are written in batches of [`BATCH`], each
//! durable before the next; an import cut short is finished by sending it again.

use std::collections::{HashMap, HashSet};

use tollgate_actors::ids::derived_uuid;
use tollgate_actors::license_key::model::{ImportKeys, KeyHolder, KeyToImport};
use tollgate_actors::license_key::{Activation, LicenseKey};
use tollgate_storage::{Batch, Expect, StorageError};

use crate::api::license_key_import::{ImportedKeyResult, LicenseKeyImportResult};
use crate::app::access::can_access;
use crate::auth::Subject;
use crate::domain::customer::{customer_by_email, normalize_email, Customer};
use crate::domain::ids::{ActivationId, BenefitId, CustomerId, LicenseKeyId, OrganizationId};
use crate::error::{AppError, Invalid};
use crate::field;
use crate::state::AppState;

/// Keys per durable write.
const BATCH: usize = 200;

/// The id of an imported key: the same for the same value of the same organization.
pub fn imported_key_id(org: OrganizationId, key: &str) -> LicenseKeyId {
    LicenseKeyId(derived_uuid(org.0, &format!("import:{key}")))
}

/// Who holds an imported key.
#[derive(Clone)]
enum Holder {
    Known(CustomerId),
    /// A customer this import creates (by normalized e-mail address).
    New(String),
}

/// Imports `cmd.keys` into `cmd.benefit_id` for `subject`, who must reach the
/// organization. The keys' shape is checked (by the adapter); what needs the store is
/// checked here, every key before anything is written (one invalid answer lists every
/// problem, key by key).
pub async fn import(
    state: &AppState,
    subject: Subject,
    cmd: ImportKeys,
) -> Result<LicenseKeyImportResult, AppError> {
    let org = cmd.organization_id;
    if !can_access(state, subject, org).await? {
        return Err(AppError::not_found());
    }
    let benefit_id = cmd.benefit_id;
    let props = crate::app::claimable_keys::key_benefit(state, org, benefit_id).await?;

    // Holders, and the keys already there.
    let mut problems = Vec::new();
    let mut holders = Vec::with_capacity(cmd.keys.len());
    let mut by_email: HashMap<String, Holder> = HashMap::new();
    let mut known: HashMap<CustomerId, bool> = HashMap::new();
    let mut existing: Vec<Option<LicenseKey>> = Vec::with_capacity(cmd.keys.len());
    for (i, k) in cmd.keys.iter().enumerate() {
        let holder =
            match &k.holder {
                KeyHolder::Customer(id) => {
                    let id = *id;
                    let ok =
                        match known.get(&id) {
                            Some(ok) => *ok,
                            None => {
                                let ok = state.store.get::<Customer>(&id.key()).await?.is_some_and(
                                    |c| c.value.organization_id == org && !c.value.is_deleted(),
                                );
                                known.insert(id, ok);
                                ok
                            }
                        };
                    if !ok {
                        problems.push(Invalid::new(
                            field!["keys", i, "customer_id"],
                            "Customer does not exist.",
                            id.to_string(),
                        ));
                    }
                    Holder::Known(id)
                }
                KeyHolder::Email(email) => {
                    let normalized = normalize_email(email);
                    match by_email.get(&normalized) {
                        Some(h) => h.clone(),
                        None => {
                            let h = match customer_by_email(&state.store, org, email).await? {
                                Some(c) => Holder::Known(c.value.id),
                                None => Holder::New(normalized.clone()),
                            };
                            by_email.insert(normalized, h.clone());
                            h
                        }
                    }
                }
            };
        holders.push(holder);
        let limit = match k.limit_activations {
            None => props.activations.map(|a| a.limit),
            Some(limit) => limit,
        };
        if let Some(limit) = limit {
            if k.activations.len() as i64 > limit {
                problems.push(Invalid::new(
                    field!["keys", i, "activations"],
                    format!("More activations than the key's limit of {limit}."),
                    k.activations.len() as i64,
                ));
            }
        }
        let id = imported_key_id(org, &k.key);
        let mine = state
            .store
            .get::<LicenseKey>(&id.key())
            .await?
            .map(|s| s.value);
        if mine.is_none() {
            let taken = state
                .store
                .lookup_unique(&LicenseKey::value_key(org, &k.key))
                .await?;
            if taken.is_some() {
                problems.push(Invalid::new(
                    field!["keys", i, "key"],
                    "A license key with this value already exists in the organization.",
                    k.key.as_str(),
                ));
            }
        }
        existing.push(mine);
    }
    if !problems.is_empty() {
        return Err(AppError::Invalid(problems));
    }

    // New customers get their ids now (one per address), with the name first given.
    let now = state.now();
    let mut new_customers: HashMap<String, Customer> = HashMap::new();
    for (k, h) in cmd.keys.iter().zip(&holders) {
        if let Holder::New(email) = h {
            new_customers.entry(email.clone()).or_insert_with(|| {
                let mut c = Customer::new(CustomerId::new(), org, email.clone(), now);
                c.name = k.customer_name.clone().filter(|n| !n.trim().is_empty());
                c
            });
        }
    }
    let mut customers = Vec::with_capacity(holders.len());
    for h in &holders {
        customers.push(match h {
            Holder::Known(id) => *id,
            Holder::New(email) => new_customers
                .get(email)
                .map(|c| c.id)
                .ok_or_else(|| AppError::internal("an imported holder without a customer"))?,
        });
    }

    let mut result = LicenseKeyImportResult {
        created: 0,
        unchanged: 0,
        customers_created: 0,
        items: Vec::with_capacity(cmd.keys.len()),
    };
    let mut written_customers: HashSet<CustomerId> = HashSet::new();
    let mut batch = Batch::new();
    let mut in_batch = 0;
    for (i, k) in cmd.keys.iter().enumerate() {
        let customer = customers[i];
        if let Some(before) = &existing[i] {
            result.unchanged += 1;
            result.items.push(ImportedKeyResult {
                id: before.id.0,
                display_key: before.display_key(),
                customer_id: before.customer_id.0,
                created: false,
            });
            continue;
        }
        if let Holder::New(email) = &holders[i] {
            if let Some(c) = new_customers.get(email) {
                if written_customers.insert(c.id) {
                    batch.put(c, Expect::Absent)?;
                    result.customers_created += 1;
                }
            }
        }
        let key = imported_key(k, org, benefit_id, customer, &props, now);
        result.items.push(ImportedKeyResult {
            id: key.id.0,
            display_key: key.display_key(),
            customer_id: customer.0,
            created: true,
        });
        batch.put(&key, Expect::Absent)?;
        result.created += 1;
        in_batch += 1;
        if in_batch == BATCH {
            commit(state, std::mem::take(&mut batch)).await?;
            in_batch = 0;
        }
    }
    if in_batch > 0 {
        commit(state, batch).await?;
    }
    Ok(result)
}

/// A write of the import; a concurrent write of the same key or address (an import sent
/// twice at once) is a 409: sending the import again finishes it.
async fn commit(state: &AppState, batch: Batch) -> Result<(), AppError> {
    match state.store.commit_durable(&batch).await {
        Ok(_) => Ok(()),
        Err(StorageError::Unique { .. } | StorageError::Conflict { .. }) => {
            Err(AppError::conflict(
                "Another import of these keys or customers ran at the same time; send it again.",
            ))
        }
        Err(e) => Err(e.into()),
    }
}

/// The record of an imported key: the benefit's limits unless the key names its own.
fn imported_key(
    k: &KeyToImport,
    org: OrganizationId,
    benefit_id: BenefitId,
    customer: CustomerId,
    props: &crate::domain::benefit::LicenseKeyProperties,
    now: chrono::DateTime<chrono::Utc>,
) -> LicenseKey {
    let id = imported_key_id(org, &k.key);
    let pick = |m: Option<Option<i64>>, default: Option<i64>| m.unwrap_or(default);
    let activations = k
        .activations
        .iter()
        .enumerate()
        .map(|(j, a)| Activation {
            id: ActivationId(derived_uuid(id.0, &format!("activation:{j}"))),
            label: a.label.clone(),
            meta: serde_json::to_string(&a.meta).unwrap_or_default(),
            conditions: serde_json::to_string(&a.conditions).unwrap_or_default(),
            created_at: a.created_at.unwrap_or(now),
            modified_at: None,
            deleted_at: None,
        })
        .collect();
    LicenseKey {
        id,
        organization_id: org,
        customer_id: customer,
        benefit_id,
        created_at: now,
        modified_at: None,
        key: k.key.clone(),
        status: k.status,
        limit_activations: pick(k.limit_activations, props.activations.map(|a| a.limit)),
        usage: k.usage,
        limit_usage: pick(k.limit_usage, props.limit_usage),
        validations: k.validations,
        last_validated_at: None,
        expires_at: k.expires_at,
        activations,
        subscription_id: None,
        order_id: None,
        paid_until: None,
        allow_replacement: props.activations.is_some_and(|a| a.allow_replacement),
        replacements: Vec::new(),
    }
}

#[cfg(test)]
#[path = "license_key_import_tests.rs"]
mod tests;
