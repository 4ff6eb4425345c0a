//! License keys: the hot path (validate, activate, deactivate for anyone who holds a key,
//! through the process's [`KeyDirectory`] and the key's actor), a customer's own keys, and
//! the organizer's reads and changes.
//!
//! The rendered customers the hot path answers with are cached in `AppState::customers`
//! (`crate::cache::CustomerCache`), invalidated by every customer write.

use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use actix::prelude::*;
use tollgate_actors::license_key::live::LiveValidated;
use tollgate_actors::license_key::search::{
    fragment_tenant, fragment_terms, matches_fragment, normalize_fragment, LICENSE_KEY_SEARCH,
};
use tollgate_actors::license_key::{
    live_activations, ActivateKey, ActivateLicenseKey, Activation, DeactivateKey,
    DeactivateLicenseKey, ErrorKind, GetLicenseKey, KeyChanges, KeyDirectory, KeyReply, KeyStatus,
    LicenseKey, LicenseKeyEntity, LicenseKeyError, MoveActivation, RotateKey, RotateLicenseKey,
    UpdateLicenseKey, ValidateKey, ValidateLicenseKey, LICENSE_KEY_BY_BENEFIT,
    LICENSE_KEY_BY_CREATED, LICENSE_KEY_BY_CUSTOMER,
};
use tollgate_actors::subscription::Subscription;
use tollgate_actors::{ActorError, EntityActor};

use crate::api::license_key::{
    Entitlement, LicenseKeyActivationCreated, LicenseKeyOrder, LicenseKeyRead,
    LicenseKeySubscription, LicenseKeyWithActivations, Purchase, RotatedLicenseKey,
    ValidatedLicenseKey,
};
use crate::api::version::{self, ApiVersion};
use crate::api::ListResource;
use crate::app::access::{can_access, organizations_for_list};
use crate::app::catalog::customers::search as customer_search;
use crate::app::listing::{directed, page_of, select_page};
use crate::app::paging::ListParams;
use crate::app::views::{key_customer, license_keys_page};
use crate::auth::Subject;
use crate::domain::benefit::{Benefit, BenefitProperties};
use crate::domain::ids::{BenefitId, CustomerId, LicenseKeyId, OrganizationId};
use crate::domain::order::Order;
use crate::domain::webhook::{LimitReached, LIMIT_REACHED};
use crate::error::{AppError, Code};
use crate::state::AppState;
use tollgate_storage::{Batch, Direction, StorageError};

/// A refusal of the license-key actor as the coded refusal it is; the key's refusal
/// `code` (`revoked`, `expired`, …) rides along as the reason. The one place actor errors
/// of keys become codes.
pub fn key_error(e: ActorError<LicenseKeyError>) -> AppError {
    match e {
        // Answered as every rate limit is: 429 with `Retry-After` and the policy.
        ActorError::Domain(LicenseKeyError::ReplacementRateLimited { retry_after_secs }) => {
            AppError::Limited(Box::new(crate::api::license_key::replacement_denied(
                retry_after_secs,
            )))
        }
        ActorError::Domain(e) => AppError::new(
            match e.kind() {
                ErrorKind::NotFound => Code::NotFound,
                ErrorKind::NotPermitted => Code::NotPermitted,
                ErrorKind::BadRequest => Code::BadRequest,
                ErrorKind::RotateNotPermitted => Code::RotateNotPermitted,
                ErrorKind::TooManyRequests => Code::TooManyRequests,
            },
            e.message(),
        )
        .with_reason(e.code()),
        ActorError::NotFound => unknown_key(),
        ActorError::AlreadyExists => AppError::conflict("The license key already exists."),
        ActorError::Unavailable(_) => AppError::unavailable(),
        ActorError::Storage(e) => e.into(),
    }
}

/// No such key (of this organization): Polar's 404, with the code `not_found`.
pub fn unknown_key() -> AppError {
    AppError::not_found().with_reason("not_found")
}

/// The process's key directory.
///
/// One per process rather than one per `AppState`, so the hot path reaches it without a
/// handle. That is safe even with several applications in one process (the tests): an entry is only a hint that the key's actor verifies (see
/// `KeyDirectory`), and organization ids are random, so stores never share entries.
pub fn directory() -> &'static KeyDirectory {
    static DIRECTORY: OnceLock<KeyDirectory> = OnceLock::new();
    DIRECTORY.get_or_init(KeyDirectory::new)
}

/// Sends a command to the actor of the key `(organization_id, key)`. A key this
/// organization does not have is "Not found". A directory entry that led to another key
/// (see `KeyDirectory`) is dropped, and the store's answer is tried once.
async fn call_by_key<M, T>(
    state: &AppState,
    organization_id: OrganizationId,
    key: &str,
    make: impl Fn() -> M,
) -> Result<T, AppError>
where
    M: Message<Result = KeyReply<T>> + Send + 'static,
    T: Send + 'static,
    EntityActor<LicenseKeyEntity>: Handler<M>,
{
    let Some(id) = directory()
        .resolve(&state.store, organization_id, key)
        .await?
    else {
        return Err(unknown_key());
    };
    call_resolved(state, organization_id, key, id, make).await
}

/// [`call_by_key`] once the directory resolved the key to `id`.
async fn call_resolved<M, T>(
    state: &AppState,
    organization_id: OrganizationId,
    key: &str,
    id: LicenseKeyId,
    make: impl Fn() -> M,
) -> Result<T, AppError>
where
    M: Message<Result = KeyReply<T>> + Send + 'static,
    T: Send + 'static,
    EntityActor<LicenseKeyEntity>: Handler<M>,
{
    let dir = directory();
    match state.license_keys.call(id, make()).await {
        Err(ActorError::Domain(LicenseKeyError::WrongKey) | ActorError::NotFound) => {
            dir.forget(organization_id, key);
            match dir.lookup(&state.store, organization_id, key).await? {
                Some(fresh) if fresh != id => state
                    .license_keys
                    .call(fresh, make())
                    .await
                    .map_err(key_error),
                _ => Err(unknown_key()),
            }
        }
        other => {
            if let Err(ActorError::Domain(
                LicenseKeyError::ActivationLimitReached | LicenseKeyError::InsufficientUsage { .. },
            )) = &other
            {
                limit_reached(state, id).await;
            }
            other.map_err(key_error)
        }
    }
}

/// Validates a key (`increment_usage` counts usage) for anyone who holds it: the hot path.
/// `(organization_id, key)` → id from the in-memory [`KeyDirectory`] (the store's unique
/// index on a miss), then, for a plain validation of a live key in batched mode, an answer
/// on this thread, else the key's actor, which applies the rules and replies once its
/// write is durable.
pub async fn validate(state: &AppState, cmd: ValidateKey) -> Result<ValidatedLicenseKey, AppError> {
    let Some(id) = directory()
        .resolve(&state.store, cmd.organization_id, &cmd.key)
        .await?
    else {
        return Err(unknown_key());
    };
    let answer = async {
        if let Some(shared) = &state.shared_keys {
            return validate_shared(state, shared, id, &cmd).await;
        }
        if let Some(live) = fast_validate(state, id, &cmd)? {
            let counts = Counts {
                validations: live.validations,
                last_validated_at: live.last_validated_at,
                usage: None,
            };
            return validated_answer(state, &live.key, live.activation.as_ref(), Some(counts))
                .await;
        }
        let validated = call_resolved(state, cmd.organization_id, &cmd.key, id, || {
            ValidateLicenseKey(cmd.clone())
        })
        .await?;
        validated_answer(state, &validated.key, validated.activation.as_ref(), None).await
    }
    .await;
    // The day counters of the dashboard: an existing key's answer, valid or refused (a
    // service that could not answer, 503 or 500, counts neither way).
    match &answer {
        Err(e) if e.is_failure() => {}
        _ => state
            .validation_counts
            .record(cmd.organization_id, state.now(), answer.is_ok()),
    }
    answer
}

/// The organization a token-authenticated key command names (`organization_id` of its
/// body): one `subject` reaches, else 404, as for a key it does not have.
pub async fn reachable(
    state: &AppState,
    subject: Subject,
    organization_id: OrganizationId,
) -> Result<(), AppError> {
    if can_access(state, subject, organization_id).await? {
        Ok(())
    } else {
        Err(unknown_key())
    }
}

/// [`validate`] for a token holder (`POST /v1/license-keys/validate`): the same rules and
/// answer, for a key of an organization `subject` reaches.
pub async fn validate_as(
    state: &AppState,
    subject: Subject,
    cmd: ValidateKey,
) -> Result<ValidatedLicenseKey, AppError> {
    reachable(state, subject, cmd.organization_id).await?;
    validate(state, cmd).await
}

/// [`activate`] for a token holder (`POST /v1/license-keys/activate`).
pub async fn activate_as(
    state: &AppState,
    subject: Subject,
    cmd: ActivateKey,
) -> Result<LicenseKeyActivationCreated, AppError> {
    reachable(state, subject, cmd.organization_id).await?;
    activate(state, cmd).await
}

/// A plain validation of a key whose actor is live, answered on this thread (batched mode,
/// see `tollgate_actors::license_key::live`); `None`: go through the actor.
fn fast_validate(
    state: &AppState,
    id: LicenseKeyId,
    cmd: &ValidateKey,
) -> Result<Option<LiveValidated>, AppError> {
    // Another writer may have changed the key: only its actor, which checks, answers.
    if state.license_keys.config().check_freshness {
        return Ok(None);
    }
    match state
        .license_keys
        .extension()
        .validate(&state.store, id, cmd, state.now())
    {
        Some(Ok(validated)) => Ok(Some(validated)),
        // A stale directory entry: the actor path refreshes it.
        Some(Err(LicenseKeyError::WrongKey)) | None => Ok(None),
        Some(Err(e)) => Err(key_error(ActorError::Domain(e))),
    }
}

/// On a shared store (PostgreSQL): the validation through this node's
/// [`SharedKeys`](tollgate_actors::license_key::shared::SharedKeys), counted in the key's
/// tally row; a directory entry that led to another key (rotated elsewhere) is dropped
/// and the store's answer tried once.
async fn validate_shared(
    state: &AppState,
    shared: &tollgate_actors::license_key::shared::SharedKeys,
    id: LicenseKeyId,
    cmd: &ValidateKey,
) -> Result<ValidatedLicenseKey, AppError> {
    let mut outcome = shared.validate(id, cmd, state.now()).await;
    if let Err(ActorError::Domain(LicenseKeyError::WrongKey) | ActorError::NotFound) = &outcome {
        let dir = directory();
        dir.forget(cmd.organization_id, &cmd.key);
        outcome = match dir
            .lookup(&state.store, cmd.organization_id, &cmd.key)
            .await?
        {
            Some(fresh) if fresh != id => shared.validate(fresh, cmd, state.now()).await,
            _ => return Err(unknown_key()),
        };
    }
    match outcome {
        Ok(v) => {
            let counts = Counts {
                validations: v.validations,
                last_validated_at: v.last_validated_at,
                usage: Some(v.usage),
            };
            validated_answer(state, &v.key, v.activation.as_ref(), Some(counts)).await
        }
        Err(e) => {
            if let ActorError::Domain(LicenseKeyError::InsufficientUsage { .. }) = &e {
                limit_reached(state, id).await;
            }
            Err(key_error(e))
        }
    }
}

/// The counters an answer shows when its key does not hold them (the fast path's counts,
/// or the tally row's on a shared store).
struct Counts {
    validations: i64,
    last_validated_at: chrono::DateTime<chrono::Utc>,
    usage: Option<i64>,
}

/// The answer to a validation; `counts`: the counters it shows, when `key` does not hold
/// them.
async fn validated_answer(
    state: &AppState,
    key: &LicenseKey,
    activation: Option<&Activation>,
    counts: Option<Counts>,
) -> Result<ValidatedLicenseKey, AppError> {
    let customer = state
        .customers
        .get(
            key.customer_id,
            || key_customer(state, key),
            through_outage(state),
        )
        .await?;
    let entitlements = entitlements_of(state, key, customer.view.deleted_at.is_some()).await?;
    let mut answer =
        ValidatedLicenseKey::new(key, &customer, activation).with_entitlements(entitlements);
    if let Some(counts) = counts {
        answer.validations = counts.validations;
        answer.last_validated_at = Some(counts.last_validated_at);
        if let Some(usage) = counts.usage {
            answer.usage = usage;
        }
    }
    // Validated just now: inside its grace, the answer says until when.
    answer.grace_until = answer.last_validated_at.and_then(|at| key.grace_until(at));
    if serves_purchase() {
        answer = answer.with_purchase(purchase_of(state, key).await?);
    }
    Ok(answer)
}

/// Tollgate's entitlements of `key`: the feature flags its customer holds from the key's
/// order or subscription (`benefit_grants::feature_flags_of`), none for a deleted
/// customer (`deleted`) or a key no purchase granted. From `AppState::entitlements`, which
/// the store's writes of the purchase, products, benefits and refunds invalidate: a
/// validation reads the store only after such a write.
pub async fn entitlements_of(
    state: &AppState,
    key: &LicenseKey,
    deleted: bool,
) -> Result<std::sync::Arc<Vec<Entitlement>>, AppError> {
    use crate::domain::benefit_grant::GrantSource;
    let source = match (key.subscription_id, key.order_id) {
        (Some(s), _) => GrantSource::Subscription(s),
        (None, Some(o)) => GrantSource::Order(o),
        (None, None) => return Ok(std::sync::Arc::default()),
    };
    if deleted {
        return Ok(std::sync::Arc::default());
    }
    state
        .entitlements
        .get(
            source,
            || async move {
                let flags = crate::app::benefit_grants::feature_flags_of(state, source).await?;
                Ok::<_, AppError>(flags.iter().map(Entitlement::from).collect())
            },
            through_outage(state),
        )
        .await
}

/// While the database cannot be reached (PostgreSQL), how old a cached customer or
/// entitlement list may be in a validation's answer: the outage window, as old as the
/// key's own copy may be (`SharedKeys`); `None` otherwise.
fn through_outage(state: &AppState) -> Option<std::time::Duration> {
    let window = state.shared_keys.as_ref()?.outage_window();
    let down = matches!(
        state.store.database(),
        Some(tollgate_storage::DatabaseState::Unreachable { .. })
    );
    (down && !window.is_zero()).then_some(window)
}

/// Whether the answer being built shows what granted its key (2027-01 on): the only cost
/// the default shape pays for it is this check.
fn serves_purchase() -> bool {
    version::serves_since(ApiVersion::V2027_01)
}

/// The subscription or order that granted `key`, as 2027-01 shows them, once durable
/// (see [`durable_answer`]).
async fn purchase_of(state: &AppState, key: &LicenseKey) -> Result<Purchase, AppError> {
    let mut purchase = Purchase::default();
    if let Some(id) = key.subscription_id {
        purchase.subscription = state
            .store
            .get::<Subscription>(&id.key())
            .await?
            .map(|s| LicenseKeySubscription::from(&s.value));
    }
    if let Some(id) = key.order_id {
        purchase.order = state
            .store
            .get::<Order>(&id.key())
            .await?
            .map(|o| LicenseKeyOrder::from(&o.value));
    }
    durable_answer(state, Ok(purchase)).await
}

/// Activates a key for a device (an activation with its label and conditions), for anyone
/// who holds the key.
pub async fn activate(
    state: &AppState,
    cmd: ActivateKey,
) -> Result<LicenseKeyActivationCreated, AppError> {
    let (mut key, activation) = call_by_key(state, cmd.organization_id, &cmd.key, || {
        ActivateLicenseKey(cmd.clone())
    })
    .await?;
    if state.shared_keys.is_some() {
        // The actor's copy of the counters may be old there: show the stored ones.
        key = live_key(state, key.id).await?;
    }
    let customer = key_customer(state, &key).await?;
    let purchase = if serves_purchase() {
        purchase_of(state, &key).await?
    } else {
        Purchase::default()
    };
    let mut created = LicenseKeyActivationCreated::new(&key, &activation, &customer, purchase);
    let entitlements = entitlements_of(state, &key, customer.deleted_at.is_some()).await?;
    created.license_key = created.license_key.with_entitlements(entitlements);
    Ok(created)
}

/// The customer portal's "move to another device" on the customer's key `id`: frees the
/// live activation `activation` so that the key activates on the next device that starts
/// the application, counted as a replacement (the page cannot know which device "this" one
/// is: the browser is not the application). 404 for a key or activation that is not the
/// customer's, 403 when the key's benefit does not allow replacement, 429 over the key's
/// replacements.
pub async fn move_activation(
    state: &AppState,
    customer: &crate::domain::customer::Customer,
    id: LicenseKeyId,
    activation: crate::domain::ids::ActivationId,
) -> Result<LicenseKey, AppError> {
    let k = crate::app::portal::key(state, customer, id).await?;
    if !live_activations(&k).any(|a| a.id == activation) {
        return Err(AppError::not_found().with_reason("activation_not_found"));
    }
    if !k.allow_replacement {
        return Err(AppError::not_permitted(
            "The seller does not let this key's activations move to another device.",
        ));
    }
    state
        .license_keys
        .call(k.id, MoveActivation(activation))
        .await
        .map_err(key_error)
}

/// Removes an activation of a key, for anyone who holds the key: named by its id, or by
/// its label (the most recent live one with it; the adapters rate-limit those per key).
pub async fn deactivate(state: &AppState, cmd: DeactivateKey) -> Result<(), AppError> {
    call_by_key(state, cmd.organization_id, &cmd.key, || {
        DeactivateLicenseKey(cmd.clone())
    })
    .await?;
    Ok(())
}

/// One page of a customer's keys, in creation order, from the customer's index.
pub async fn customer_keys(
    state: &AppState,
    customer: CustomerId,
    orgs: &[OrganizationId],
    benefit: Option<BenefitId>,
    purchase: Option<crate::app::portal::purchase::PurchaseScope>,
    params: ListParams,
) -> Result<ListResource<LicenseKeyRead>, AppError> {
    let (items, total) =
        customer_key_records(state, customer, orgs, benefit, purchase, params).await?;
    license_keys_page(state, items, total, params).await
}

/// [`customer_keys`] as stored records, and their total.
pub async fn customer_key_records(
    state: &AppState,
    customer: CustomerId,
    orgs: &[OrganizationId],
    benefit: Option<BenefitId>,
    purchase: Option<crate::app::portal::purchase::PurchaseScope>,
    params: ListParams,
) -> Result<(Vec<LicenseKey>, u64), AppError> {
    let tenants = [customer.key()];
    let wanted = |k: &LicenseKey| {
        (orgs.is_empty() || orgs.contains(&k.organization_id))
            && benefit.is_none_or(|b| b == k.benefit_id)
            && purchase.is_none_or(|p| p.has_key(k))
    };
    let filter: Option<&dyn Fn(&LicenseKey) -> bool> =
        if orgs.is_empty() && benefit.is_none() && purchase.is_none() {
            None
        } else {
            Some(&wanted)
        };
    page_of::<LicenseKey>(
        state,
        LICENSE_KEY_BY_CUSTOMER,
        &tenants,
        false,
        params,
        filter,
    )
    .await
}

/// The customer's key with its activations, if the benefit lets the customer manage
/// them (else `[]`); 404 for a key of anyone else.
pub async fn customer_key(
    state: &AppState,
    customer: CustomerId,
    key: LicenseKey,
) -> Result<LicenseKeyWithActivations, AppError> {
    if key.customer_id != customer {
        return Err(AppError::not_found());
    }
    let customer_admin = state
        .store
        .get::<Benefit>(&key.benefit_id.key())
        .await?
        .is_some_and(|b| match &b.value.properties {
            BenefitProperties::LicenseKeys(p) => {
                p.activations.is_some_and(|a| a.enable_customer_admin)
            }
            _ => false,
        });
    let owner = key_customer(state, &key).await?;
    Ok(LicenseKeyWithActivations::new(
        &key,
        &owner,
        !customer_admin,
    ))
}

/// Answers a read once everything it read is durable. The barrier is taken *after* the
/// reads, so it covers every write they could have seen; one taken before them would not
/// cover a write committed in between.
pub async fn durable_answer<T, E: From<StorageError>>(
    state: &AppState,
    answer: Result<T, E>,
) -> Result<T, E> {
    state.store.read_barrier().await?;
    answer
}

/// A stored key the subject may see, else 404 (also for another organization's key).
pub async fn key_for(
    state: &AppState,
    subject: Subject,
    id: LicenseKeyId,
) -> Result<LicenseKey, AppError> {
    match state.store.get::<LicenseKey>(&id.key()).await? {
        Some(k) if can_access(state, subject, k.value.organization_id).await? => Ok(k.value),
        _ => Err(AppError::not_found()),
    }
}

/// The key as its actor holds it: with the validation counters it has answered so far,
/// which batched mode (`license_keys.stats_flush_ms`) writes to the store only later.
///
/// On a shared store: the stored key (its counters from its tally row) with the
/// validations this node has counted and not written yet.
pub async fn live_key(state: &AppState, id: LicenseKeyId) -> Result<LicenseKey, AppError> {
    if let Some(shared) = &state.shared_keys {
        let mut key = state
            .store
            .get::<LicenseKey>(&id.key())
            .await?
            .ok_or_else(unknown_key)?
            .value;
        key.validations = key.validations.saturating_add(shared.pending_of(id));
        if let Some(at) = shared.pending_last(id) {
            if key.last_validated_at.is_none_or(|t| t < at) {
                key.last_validated_at = Some(at);
            }
        }
        return Ok(key);
    }
    state
        .license_keys
        .call(id, GetLicenseKey)
        .await
        .map_err(key_error)
}

/// One page of the keys `subject` reaches: of `orgs` (all its organizations when empty),
/// or of `benefits`; with one of `statuses` (any when empty); matching `query` (Tollgate's
/// extension, see [`search`]) when there is one.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &KeyFilter<'_>,
    params: ListParams,
) -> Result<ListResource<LicenseKeyRead>, AppError> {
    let (items, total) = match filter.query.map(str::trim).filter(|q| !q.is_empty()) {
        Some(query) => search(state, subject, filter, query, false, params).await?,
        None => {
            records_with(
                state,
                subject,
                filter.orgs,
                filter.benefits,
                filter.statuses,
                false,
                params,
            )
            .await?
        }
    };
    license_keys_page(state, items, total, params).await
}

/// Which keys a list shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyFilter<'a> {
    /// Of these organizations (all the subject reaches when empty).
    pub orgs: &'a [OrganizationId],
    /// Of these benefits (any when empty).
    pub benefits: &'a [BenefitId],
    /// With one of these statuses (any when empty).
    pub statuses: &'a [KeyStatus],
    /// What a seller typed (see [`search`]).
    pub query: Option<&'a str>,
}

/// The keys of the filter's organizations (benefits, statuses) that `query` finds, as
/// stored records in creation order (newest first if `newest_first`), one page and their
/// total: the keys it is a fragment of (`license_key::search`: the start of a segment of at
/// least 4 characters, or the end, case-insensitively, `****-` dropped), and the keys of
/// the customers it finds (the customer search's needle, or a customer's id). Read from the
/// search indexes and `LICENSE_KEY_BY_CUSTOMER`: the cost grows with the matches, never
/// with all the keys.
pub async fn search(
    state: &AppState,
    subject: Subject,
    filter: &KeyFilter<'_>,
    query: &str,
    newest_first: bool,
    params: ListParams,
) -> Result<(Vec<LicenseKey>, u64), AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, filter.orgs).await?;
    let mut ids: BTreeSet<Vec<u8>> = BTreeSet::new();
    let fragment = normalize_fragment(query);
    if let Some(terms) = fragment_terms(&fragment) {
        let tenants: Vec<Vec<u8>> = orgs
            .iter()
            .flat_map(|o| terms.iter().map(|t| fragment_tenant(*o, t)))
            .collect();
        ids.extend(
            state
                .store
                .index_iter(LICENSE_KEY_SEARCH, &tenants, Direction::Asc)?
                .collect()
                .await?,
        );
    }
    let mut customers: Vec<Vec<u8>> = customer_search(state, &orgs, &query.to_lowercase(), false)
        .await?
        .iter()
        .map(|c| c.id.key())
        .collect();
    if let Ok(id) = query.parse::<CustomerId>() {
        customers.push(id.key());
    }
    let by_customer = !customers.is_empty();
    if by_customer {
        ids.extend(
            state
                .store
                .index_iter(LICENSE_KEY_BY_CUSTOMER, &customers, Direction::Asc)?
                .collect()
                .await?,
        );
    }
    let ids: Vec<Vec<u8>> = ids.into_iter().collect();
    let mut found = Vec::new();
    for chunk in ids.chunks(256) {
        for k in state.store.get_many::<LicenseKey>(chunk).await? {
            let k = k.value;
            let wanted = orgs.contains(&k.organization_id)
                && (filter.benefits.is_empty() || filter.benefits.contains(&k.benefit_id))
                && (filter.statuses.is_empty() || filter.statuses.contains(&k.status))
                && (matches_fragment(&k.key, &fragment)
                    || (by_customer && customers.contains(&k.customer_id.key())));
            if wanted {
                found.push(Ok(k));
            }
        }
    }
    // `LICENSE_KEY_BY_CREATED`'s order: creation time, then id.
    let order = |a: &LicenseKey, b: &LicenseKey| {
        let ordering = (a.created_at.timestamp_micros(), a.id.key())
            .cmp(&(b.created_at.timestamp_micros(), b.id.key()));
        directed(ordering, newest_first)
    };
    select_page(found, &order, params)
}

/// [`list`] as stored records (in creation order, or newest first), and their total,
/// whatever their status.
pub async fn records(
    state: &AppState,
    subject: Subject,
    orgs: &[OrganizationId],
    benefits: &[BenefitId],
    newest_first: bool,
    params: ListParams,
) -> Result<(Vec<LicenseKey>, u64), AppError> {
    records_with(state, subject, orgs, benefits, &[], newest_first, params).await
}

/// [`records`] with one of `statuses` (any when empty). The status is no index's key: a
/// status filter scans the organizations' (or benefits') entries and counts them, so its
/// cost grows with those tenants' keys (`page_of`).
async fn records_with(
    state: &AppState,
    subject: Subject,
    orgs: &[OrganizationId],
    benefits: &[BenefitId],
    statuses: &[KeyStatus],
    newest_first: bool,
    params: ListParams,
) -> Result<(Vec<LicenseKey>, u64), AppError> {
    let orgs = organizations_for_list(state, subject, orgs).await?;
    // Both lists are index range reads in `created_at` order: by organization, or by the
    // benefits (of reachable organizations) asked for.
    let (index, tenants): (&'static str, Vec<Vec<u8>>) = if benefits.is_empty() {
        (
            LICENSE_KEY_BY_CREATED,
            orgs.iter().map(|o| o.key()).collect(),
        )
    } else {
        let mut tenants = Vec::new();
        for b in benefits {
            let reachable = state
                .store
                .get::<Benefit>(&b.key())
                .await?
                .is_some_and(|benefit| orgs.contains(&benefit.value.organization_id));
            if reachable && !tenants.contains(&b.key()) {
                tenants.push(b.key());
            }
        }
        (LICENSE_KEY_BY_BENEFIT, tenants)
    };
    let wanted = |k: &LicenseKey| statuses.contains(&k.status);
    let filter: Option<&dyn Fn(&LicenseKey) -> bool> = if statuses.is_empty() {
        None
    } else {
        Some(&wanted)
    };
    page_of::<LicenseKey>(state, index, &tenants, newest_first, params, filter).await
}

/// Changes a key (status, expiry, limits) as `subject`, through its actor.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: LicenseKeyId,
    changes: KeyChanges,
) -> Result<LicenseKeyRead, AppError> {
    key_for(state, subject, id).await?;
    let mut key = state
        .license_keys
        .call(id, UpdateLicenseKey(changes))
        .await
        .map_err(key_error)?;
    if state.shared_keys.is_some() {
        // The actor's copy of the counters may be old there: show the stored ones.
        key = live_key(state, id).await?;
    }
    let customer = key_customer(state, &key).await?;
    Ok(LicenseKeyRead::new(&key, &customer))
}

/// Rotates a key `subject` reaches (`POST /v1/license-keys/{id}/rotate`): see
/// [`rotate_key`].
pub async fn rotate(
    state: &AppState,
    subject: Subject,
    id: LicenseKeyId,
) -> Result<RotatedLicenseKey, AppError> {
    let key = key_for(state, subject, id).await?;
    rotate_key(state, key).await
}

/// Rotates one of the customer's own keys (`POST /v1/customer-portal/license-keys/{id}/rotate`);
/// 404 for anyone else's, 403 when the key's benefit does not let customers rotate
/// (`allow_customer_rotation`).
pub async fn customer_rotate(
    state: &AppState,
    customer: CustomerId,
    id: LicenseKeyId,
) -> Result<RotatedLicenseKey, AppError> {
    match state.store.get::<LicenseKey>(&id.key()).await? {
        Some(k) if k.value.customer_id == customer => {
            if !customer_may_rotate(state, &k.value).await? {
                return Err(AppError::not_permitted(
                    "The seller does not let customers rotate this license key.",
                ));
            }
            rotate_key(state, k.value).await
        }
        _ => Err(AppError::not_found()),
    }
}

/// Whether the key's benefit lets its customer rotate it (a deleted benefit's keys: yes,
/// as before the setting).
pub async fn customer_may_rotate(state: &AppState, key: &LicenseKey) -> Result<bool, AppError> {
    Ok(state
        .store
        .get::<Benefit>(&key.benefit_id.key())
        .await?
        .is_none_or(|b| match &b.value.properties {
            BenefitProperties::LicenseKeys(p) => p.allow_customer_rotation,
            _ => true,
        }))
}

/// Gives the key a new value with its benefit's prefix, through its actor (Polar's
/// `LicenseKeyService.rotate`): the same record, status, usage, limits, expiry and
/// activations; only a granted or disabled key (else 400 `RotateNotPermitted`). The store
/// replaces the key's unique value in the same transaction, so the old value validates no
/// more from the reply on, on every engine; this process's directory drops it at once.
async fn rotate_key(state: &AppState, key: LicenseKey) -> Result<RotatedLicenseKey, AppError> {
    let prefix = state
        .store
        .get::<Benefit>(&key.benefit_id.key())
        .await?
        .and_then(|b| match b.value.properties {
            BenefitProperties::LicenseKeys(p) => p.prefix,
            _ => None,
        });
    let rotated = state
        .license_keys
        .call(key.id, RotateLicenseKey(RotateKey { prefix }))
        .await
        .map_err(key_error)?;
    let mut key = rotated.key;
    if state.shared_keys.is_some() {
        key = live_key(state, key.id).await?;
    }
    directory().forget(key.organization_id, &rotated.previous);
    directory().remember(key.organization_id, &key.key, key.id);
    let customer = key_customer(state, &key).await?;
    Ok(RotatedLicenseKey::new(&key, &customer))
}

/// A refused activation or usage increment: records a `license_key.limit_reached` notice,
/// at most one per key per [`LIMIT_NOTICE_EVERY`] (a client retrying in a loop must not
/// flood the seller).
async fn limit_reached(state: &AppState, key: LicenseKeyId) {
    let now = Instant::now();
    let mut fresh = false;
    state
        .webhooks
        .limit_notices
        .entry(key)
        .and_modify(|last| {
            if now.duration_since(*last) >= LIMIT_NOTICE_EVERY {
                *last = now;
                fresh = true;
            }
        })
        .or_insert_with(|| {
            fresh = true;
            now
        });
    if !fresh {
        return;
    }
    let notice = LimitReached {
        license_key_id: key,
    };
    let Ok(payload) = serde_json::to_vec(&notice) else {
        return;
    };
    let mut batch = Batch::new();
    batch.notice(LIMIT_REACHED, key.key(), payload);
    // The refusal does not wait for it: a crash may lose this notice, never a change.
    if let Err(e) = state.store.commit(&batch).await {
        tracing::warn!(error = %e, "cannot record a limit notice");
    }
}

/// The least time between two `license_key.limit_reached` events of one key.
pub const LIMIT_NOTICE_EVERY: Duration = Duration::from_secs(60);

#[cfg(test)]
#[path = "license_keys_tests.rs"]
mod tests;
