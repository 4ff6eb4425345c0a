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

use serde_json::Value;
use tollgate_actors::ids::derived_uuid;
use tollgate_actors::license_key::{Activation, KeyStatus, LicenseKey};
use tollgate_storage::{Batch, Expect, StorageError};

use crate::api::license_key_import::{
    ImportedKey, ImportedKeyResult, LicenseKeyImport, LicenseKeyImportResult, MAX_IMPORTED_KEYS,
    MAX_KEY_CHARS,
};
use crate::api::Maybe;
use crate::app::access::can_access;
use crate::auth::Subject;
use crate::domain::customer::{customer_by_email, normalize_email, Customer};
use crate::domain::ids::{ActivationId, BenefitId, CustomerId, LicenseKeyId, OrganizationId};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

/// Keys per durable write.
const BATCH: usize = 200;
/// Polar's activation limit range.
const MAX_ACTIVATIONS: i64 = 50;

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

fn key_loc(i: usize, field: &str) -> Vec<Value> {
    loc!["body", "keys", i, field]
}

/// The checks of one key that need no store; the holder it names.
fn check_key(v: &mut Validator, i: usize, k: &ImportedKey) -> Option<KeyStatus> {
    let value = k.key.as_str();
    if value.is_empty()
        || value.chars().count() > MAX_KEY_CHARS
        || value.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        v.push(FieldError::new(
            "value_error",
            key_loc(i, "key"),
            "A key is 1 to 255 characters, without spaces or control characters.",
            Value::from(value),
        ));
    }
    match (&k.customer_id, &k.customer_email) {
        (None, None) => v.push(FieldError::new(
            "missing",
            key_loc(i, "customer_email"),
            "Either customer_id or customer_email is required.",
            Value::Null,
        )),
        (None, Some(email)) => {
            v.email(key_loc(i, "customer_email"), email);
        }
        _ => {}
    }
    // It may become a customer's name, which reaches message headers.
    if let Some(name) = &k.customer_name {
        v.header_safe(key_loc(i, "customer_name"), name);
    }
    let status = match k.status.as_deref() {
        None | Some("granted") => Some(KeyStatus::Granted),
        Some("disabled") => Some(KeyStatus::Disabled),
        Some("revoked") => Some(KeyStatus::Revoked),
        Some(other) => {
            v.push(
                FieldError::new(
                    "enum",
                    key_loc(i, "status"),
                    "Input should be 'granted', 'revoked' or 'disabled'",
                    Value::from(other),
                )
                .with_ctx(serde_json::json!({"expected": "'granted', 'revoked' or 'disabled'"})),
            );
            None
        }
    };
    if let Maybe::Value(n) = k.limit_activations {
        v.int_range(
            key_loc(i, "limit_activations"),
            n,
            Some(1),
            Some(MAX_ACTIVATIONS),
        );
    }
    if let Maybe::Value(n) = k.limit_usage {
        v.int_range(key_loc(i, "limit_usage"), n, Some(1), None);
    }
    for (field, n) in [("usage", k.usage), ("validations", k.validations)] {
        if let Some(n) = n {
            v.int_range(key_loc(i, field), n, Some(0), None);
        }
    }
    for (j, a) in k.activations.iter().enumerate() {
        if a.label.trim().is_empty() {
            v.push(FieldError::new(
                "string_too_short",
                loc!["body", "keys", i, "activations", j, "label"],
                "String should have at least 1 character",
                Value::from(a.label.as_str()),
            ));
        }
    }
    status
}

/// Imports `input.keys` into `input.benefit_id` for `subject`, who must reach the
/// organization.
pub async fn import(
    state: &AppState,
    subject: Subject,
    input: LicenseKeyImport,
) -> Result<LicenseKeyImportResult, ApiError> {
    let org = OrganizationId(input.organization_id);
    let mut v = Validator::new();
    if input.keys.is_empty() || input.keys.len() > MAX_IMPORTED_KEYS {
        v.push(FieldError::new(
            if input.keys.is_empty() {
                "too_short"
            } else {
                "too_long"
            },
            loc!["body", "keys"],
            "An import takes 1 to 1000 keys.",
            Value::from(input.keys.len()),
        ));
    }
    let mut statuses = Vec::with_capacity(input.keys.len());
    let mut seen: HashSet<&str> = HashSet::new();
    for (i, k) in input.keys.iter().enumerate() {
        statuses.push(check_key(&mut v, i, k));
        if !seen.insert(k.key.as_str()) {
            v.push(FieldError::new(
                "value_error",
                key_loc(i, "key"),
                "This key is already in the request.",
                Value::from(k.key.as_str()),
            ));
        }
    }
    v.finish()?;
    if !can_access(state, subject, org).await? {
        return Err(ApiError::not_found());
    }
    let benefit_id = BenefitId(input.benefit_id);
    let props = crate::app::claimable_keys::key_benefit(state, org, benefit_id).await?;

    // Holders, and the keys already there.
    let mut v = Validator::new();
    let mut holders = Vec::with_capacity(input.keys.len());
    let mut by_email: HashMap<String, Holder> = HashMap::new();
    let mut known: HashMap<CustomerId, bool> = HashMap::new();
    let mut existing: Vec<Option<LicenseKey>> = Vec::with_capacity(input.keys.len());
    for (i, k) in input.keys.iter().enumerate() {
        let holder =
            match (k.customer_id, &k.customer_email) {
                (Some(id), _) => {
                    let id = CustomerId(id);
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
                        v.push(FieldError::new(
                            "value_error",
                            key_loc(i, "customer_id"),
                            "Customer does not exist.",
                            Value::from(id.to_string()),
                        ));
                    }
                    Holder::Known(id)
                }
                (None, Some(email)) => {
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
                // Refused by the first checks.
                (None, None) => return Err(ApiError::internal("an imported key without a holder")),
            };
        holders.push(holder);
        let limit = match k.limit_activations {
            Maybe::Absent => props.activations.map(|a| a.limit),
            Maybe::Null => None,
            Maybe::Value(n) => Some(n),
        };
        if let Some(limit) = limit {
            if k.activations.len() as i64 > limit {
                v.push(FieldError::new(
                    "value_error",
                    key_loc(i, "activations"),
                    format!("More activations than the key's limit of {limit}."),
                    Value::from(k.activations.len()),
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
                v.push(FieldError::new(
                    "value_error",
                    key_loc(i, "key"),
                    "A license key with this value already exists in the organization.",
                    Value::from(k.key.as_str()),
                ));
            }
        }
        existing.push(mine);
    }
    v.finish()?;

    // New customers get their ids now (one per address), with the name first given.
    let now = state.now();
    let mut new_customers: HashMap<String, Customer> = HashMap::new();
    for (k, h) in input.keys.iter().zip(&holders) {
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
                .ok_or_else(|| ApiError::internal("an imported holder without a customer"))?,
        });
    }

    let mut result = LicenseKeyImportResult {
        created: 0,
        unchanged: 0,
        customers_created: 0,
        items: Vec::with_capacity(input.keys.len()),
    };
    let mut written_customers: HashSet<CustomerId> = HashSet::new();
    let mut batch = Batch::new();
    let mut in_batch = 0;
    for (i, k) in input.keys.iter().enumerate() {
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
        let key = imported_key(k, org, benefit_id, customer, &props, statuses[i], now);
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
async fn commit(state: &AppState, batch: Batch) -> Result<(), ApiError> {
    match state.store.commit_durable(&batch).await {
        Ok(_) => Ok(()),
        Err(StorageError::Unique { .. } | StorageError::Conflict { .. }) => {
            Err(ApiError::Conflict(
                "Another import of these keys or customers ran at the same time; send it again."
                    .into(),
            ))
        }
        Err(e) => Err(e.into()),
    }
}

/// The record of an imported key: the benefit's limits unless the key names its own.
fn imported_key(
    k: &ImportedKey,
    org: OrganizationId,
    benefit_id: BenefitId,
    customer: CustomerId,
    props: &crate::domain::benefit::LicenseKeyProperties,
    status: Option<KeyStatus>,
    now: chrono::DateTime<chrono::Utc>,
) -> LicenseKey {
    let id = imported_key_id(org, &k.key);
    let pick = |m: &Maybe<i64>, default: Option<i64>| match m {
        Maybe::Absent => default,
        Maybe::Null => None,
        Maybe::Value(n) => Some(*n),
    };
    let activations = k
        .activations
        .iter()
        .enumerate()
        .map(|(j, a)| Activation {
            id: ActivationId(derived_uuid(id.0, &format!("activation:{j}"))),
            label: a.label.clone(),
            meta: Value::Object(a.meta.clone().unwrap_or_default()).to_string(),
            conditions: Value::Object(a.conditions.clone().unwrap_or_default()).to_string(),
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
        status: status.unwrap_or(KeyStatus::Granted),
        limit_activations: pick(&k.limit_activations, props.activations.map(|a| a.limit)),
        usage: k.usage.unwrap_or(0),
        limit_usage: pick(&k.limit_usage, props.limit_usage),
        validations: k.validations.unwrap_or(0),
        last_validated_at: None,
        expires_at: k.expires_at,
        activations,
        subscription_id: None,
        order_id: None,
        paid_until: None,
    }
}
