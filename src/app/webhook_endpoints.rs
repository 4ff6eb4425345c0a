//! A seller's webhook endpoints: register, change, pause (and resume), delete; the delivery
//! log; redelivery of an event. Delivery itself is `crate::webhooks`; its target rules are
//! `crate::egress::target`.

use std::collections::HashMap;

use tollgate_storage::{Batch, Direction, Expect, StorageError, Stored};

use crate::api::version::{self, ApiVersion};
use crate::api::webhook::WebhookDeliveryView;
use crate::app::access::{can_access, organization_for_create, organizations_for_list};
use crate::app::listing::page_of;
use crate::app::paging::ListParams;
use crate::auth::Subject;
use crate::domain::ids::{OrganizationId, WebhookEndpointId, WebhookEventId};
use crate::domain::webhook::{
    NewWebhookEndpoint, WebhookDelivery, WebhookEndpoint, WebhookEndpointChange, WebhookEvent,
    WebhookEventState, WebhookPayload, WEBHOOK_DELIVERY_BY_ENDPOINT, WEBHOOK_DELIVERY_BY_ORG,
    WEBHOOK_ENDPOINT_ALL, WEBHOOK_ENDPOINT_BY_CREATED,
};
use crate::error::AppError;
use crate::field;
use crate::state::AppState;

/// Polar's secrets (`kit/crypto.py`, `generate_token(prefix="whsec_")`, what both creating an
/// endpoint and rotating its secret give): `whsec_`, 37 random characters of `[A-Za-z0-9]`,
/// then the CRC32 of those 37 in base62, zero-padded to 6; 49 characters in all.
fn generate_secret() -> String {
    use rand::distributions::{Alphanumeric, DistString};
    let token = Alphanumeric.sample_string(&mut rand::thread_rng(), 37);
    format!("whsec_{token}{}", crc32_base62(crc32(token.as_bytes())))
}

/// CRC-32 (IEEE 802.3, zlib's `crc32`).
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A number in Polar's base62 (digits, then upper, then lower case), left-padded with `0` to
/// six characters (Polar's `_crc32_to_base62`).
fn crc32_base62(mut n: u32) -> String {
    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    while n > 0 {
        out.push(DIGITS[(n % 62) as usize]);
        n /= 62;
    }
    while out.len() < 6 {
        out.push(b'0');
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

fn check_url(state: &AppState, url: &str) -> Result<String, AppError> {
    state
        .webhooks
        .policy
        .check(url)
        .map(|u| u.to_string())
        .map_err(|why| AppError::invalid(field!["url"], why, url))
}

fn check_secret(secret: &str) -> Result<(), AppError> {
    if secret.chars().count() < 32 {
        return Err(AppError::invalid(
            field!["secret"],
            "String should have at least 32 characters",
            secret,
        ));
    }
    Ok(())
}

/// An endpoint's `api_version`: a supported version (`YYYY-MM`).
fn check_api_version(version: &str) -> Result<ApiVersion, AppError> {
    ApiVersion::parse(version).ok_or_else(|| {
        let expected = ApiVersion::ALL.map(|v| format!("'{v}'")).join(", ");
        AppError::invalid(
            field!["api_version"],
            format!("Input should be {expected}"),
            version,
        )
    })
}

fn check_name(name: &str) -> Result<(), AppError> {
    if name.chars().count() > 100 {
        return Err(AppError::invalid(
            field!["name"],
            "String should have at most 100 characters",
            name,
        ));
    }
    Ok(())
}

/// An endpoint the subject may see, else 404.
pub async fn endpoint_for(
    state: &AppState,
    subject: Subject,
    id: WebhookEndpointId,
) -> Result<Stored<WebhookEndpoint>, AppError> {
    match state.store.get::<WebhookEndpoint>(&id.key()).await? {
        Some(e) if can_access(state, subject, e.value.organization_id).await? => Ok(e),
        _ => Err(AppError::not_found()),
    }
}

/// An endpoint the subject may see (its writes so far read back), else 404.
pub async fn get(
    state: &AppState,
    subject: Subject,
    id: WebhookEndpointId,
) -> Result<WebhookEndpoint, AppError> {
    state.store.read_barrier().await?;
    Ok(endpoint_for(state, subject, id).await?.value)
}

/// Every organization's endpoints, once the writes so far are durable: the fan-out acts
/// only on what a crash can no longer undo, and renders a change only if someone listens.
pub async fn listening(
    state: &AppState,
) -> Result<HashMap<OrganizationId, Vec<WebhookEndpoint>>, StorageError> {
    state.store.read_barrier().await?;
    let mut endpoints: HashMap<OrganizationId, Vec<WebhookEndpoint>> = HashMap::new();
    let mut all = state
        .store
        .index_iter(WEBHOOK_ENDPOINT_ALL, &[Vec::new()], Direction::Asc)?;
    while let Some(id) = all.next().await {
        if let Some(e) = state.store.get::<WebhookEndpoint>(&id?).await? {
            endpoints
                .entry(e.value.organization_id)
                .or_default()
                .push(e.value);
        }
    }
    Ok(endpoints)
}

/// Puts the payload of an event whose payload is apart (`WebhookPayload`) in its
/// `payload`: what the delivery, the delivery log and the event cursor read. An event whose
/// payload record is missing (it goes only with its event) reads as archived, logged:
/// nothing to show or to send.
pub async fn load_payload(state: &AppState, e: &mut WebhookEvent) -> Result<(), StorageError> {
    load_payloads(state, [e]).await
}

/// [`load_payload`] for several events, in one read of the store (a payload shared by
/// several of them read once).
pub async fn load_payloads<'a>(
    state: &AppState,
    events: impl IntoIterator<Item = &'a mut WebhookEvent>,
) -> Result<(), StorageError> {
    let mut events: Vec<&mut WebhookEvent> = events
        .into_iter()
        .filter(|e| e.payload_apart && !e.archived)
        .collect();
    let mut wanted: Vec<Vec<u8>> = events.iter().map(|e| e.payload_key().key()).collect();
    wanted.sort();
    wanted.dedup();
    if wanted.is_empty() {
        return Ok(());
    }
    let found: HashMap<WebhookEventId, String> = state
        .store
        .get_many::<WebhookPayload>(&wanted)
        .await?
        .into_iter()
        .map(|p| (p.value.id, p.value.payload))
        .collect();
    for e in &mut events {
        match found.get(&e.payload_key()) {
            Some(payload) => e.payload = payload.clone(),
            None => {
                tracing::warn!(event = %e.id, "a webhook event's payload is missing; read as archived");
                e.archived = true;
            }
        }
    }
    Ok(())
}

/// An event the subject may see (of an organization it reaches), else 404.
pub async fn event_for(
    state: &AppState,
    subject: Subject,
    id: WebhookEventId,
) -> Result<Stored<WebhookEvent>, AppError> {
    match state.store.get::<WebhookEvent>(&id.key()).await? {
        Some(e) if can_access(state, subject, e.value.organization_id).await? => Ok(e),
        _ => Err(AppError::not_found()),
    }
}

/// One page of the endpoints of the organizations `subject` reaches (of `orgs` when not
/// empty), newest first, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    orgs: &[OrganizationId],
    params: ListParams,
) -> Result<(Vec<WebhookEndpoint>, u64), AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, orgs).await?;
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    page_of::<WebhookEndpoint>(
        state,
        WEBHOOK_ENDPOINT_BY_CREATED,
        &tenants,
        true,
        params,
        None,
    )
    .await
}

/// Registers an endpoint (its secret generated unless given) and wakes its worker.
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: NewWebhookEndpoint,
) -> Result<WebhookEndpoint, AppError> {
    let NewWebhookEndpoint {
        url,
        name,
        secret,
        format,
        events,
        organization_id,
        api_version,
    } = input;
    let url = check_url(state, &url)?;
    // Left out: the version the request was served in.
    let api_version = match &api_version {
        Some(v) => check_api_version(v)?,
        None => version::active().unwrap_or(version::DEFAULT),
    };
    if let Some(secret) = &secret {
        check_secret(secret)?;
    }
    if let Some(name) = &name {
        check_name(name)?;
    }
    let organization_id =
        organization_for_create(state, subject, organization_id.map(|o| o.0)).await?;
    let endpoint = WebhookEndpoint {
        id: WebhookEndpointId::new(),
        organization_id,
        created_at: state.now(),
        modified_at: None,
        url,
        name: name.filter(|n| !n.trim().is_empty()),
        format,
        secret: secret.unwrap_or_else(generate_secret),
        events,
        enabled: true,
        consecutive_failures: 0,
        failing_since: None,
        disabled_reason: None,
        api_version: Some(api_version.as_str().to_string()),
    };
    let mut batch = Batch::new();
    batch.put(&endpoint, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    state.webhooks.wake(endpoint.id);
    Ok(endpoint)
}

/// Changes an endpoint; `enabled: true` resumes it (also after Tollgate disabled it), with
/// a fresh count of failures.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: WebhookEndpointId,
    update: WebhookEndpointChange,
) -> Result<WebhookEndpoint, AppError> {
    let url = match &update.url {
        Some(url) => Some(check_url(state, url)?),
        None => None,
    };
    if let Some(secret) = &update.secret {
        check_secret(secret)?;
    }
    if let Some(Some(name)) = &update.name {
        check_name(name)?;
    }
    let api_version = match &update.api_version {
        Some(v) => Some(check_api_version(v)?),
        None => None,
    };
    endpoint_for(state, subject, id).await?;
    let now = state.now();
    let updated = state
        .store
        .update::<WebhookEndpoint, AppError>(&id.key(), async |current| {
            let mut e = current.clone();
            if let Some(url) = &url {
                e.url = url.clone();
            }
            if let Some(name) = update.name.clone() {
                e.name = name.filter(|n| !n.trim().is_empty());
            }
            if let Some(secret) = &update.secret {
                e.secret = secret.clone();
            }
            if let Some(format) = update.format {
                e.format = format;
            }
            if let Some(events) = &update.events {
                e.events = events.clone();
            }
            if let Some(v) = api_version {
                e.api_version = Some(v.as_str().to_string());
            }
            if let Some(enabled) = update.enabled {
                if enabled && !e.enabled {
                    // Re-enabled by the seller: a fresh start.
                    e.consecutive_failures = 0;
                    e.failing_since = None;
                }
                e.enabled = enabled;
                e.disabled_reason = None;
            }
            e.modified_at = Some(now);
            Ok(Some(e))
        })
        .await?
        .ok_or_else(AppError::not_found)?;
    state.webhooks.wake(updated.id);
    Ok(updated)
}

/// Gives an endpoint a new generated secret (Polar's `PATCH /v1/webhooks/endpoints/{id}/secret`).
/// No grace period: every later attempt, retries of earlier events included, is signed
/// with it, since a delivery is signed when it is sent with the endpoint's secret of that
/// moment (`crate::webhooks::delivery`); nothing signed is stored.
pub async fn rotate_secret(
    state: &AppState,
    subject: Subject,
    id: WebhookEndpointId,
) -> Result<WebhookEndpoint, AppError> {
    endpoint_for(state, subject, id).await?;
    let now = state.now();
    let secret = generate_secret();
    let updated = state
        .store
        .update::<WebhookEndpoint, AppError>(&id.key(), async |current| {
            let mut e = current.clone();
            e.secret = secret.clone();
            e.modified_at = Some(now);
            Ok(Some(e))
        })
        .await?
        .ok_or_else(AppError::not_found)?;
    state.webhooks.wake(updated.id);
    Ok(updated)
}

/// Deletes an endpoint; its worker sees it gone and stops, its pending events are never
/// sent.
pub async fn delete(
    state: &AppState,
    subject: Subject,
    id: WebhookEndpointId,
) -> Result<(), AppError> {
    let current = endpoint_for(state, subject, id).await?;
    let mut batch = Batch::new();
    batch.delete::<WebhookEndpoint>(&id.key(), Expect::Rev(current.rev));
    state.store.commit_durable(&batch).await?;
    state.webhooks.wake(id);
    Ok(())
}

/// One page of the delivery log (every attempt, newest first) of `endpoints` (or of the
/// organizations `subject` reaches, of `orgs` when not empty), and its total.
pub async fn deliveries(
    state: &AppState,
    subject: Subject,
    endpoints: &[WebhookEndpointId],
    orgs: &[OrganizationId],
    params: ListParams,
) -> Result<(Vec<WebhookDeliveryView>, u64), AppError> {
    state.store.read_barrier().await?;
    let (index, tenants): (&'static str, Vec<Vec<u8>>) = if endpoints.is_empty() {
        let orgs = organizations_for_list(state, subject, orgs).await?;
        (
            WEBHOOK_DELIVERY_BY_ORG,
            orgs.iter().map(|o| o.key()).collect(),
        )
    } else {
        let mut tenants = Vec::new();
        for id in endpoints {
            // An endpoint the caller cannot see filters to nothing, like an unknown id.
            if let Ok(e) = endpoint_for(state, subject, *id).await {
                if orgs.is_empty() || orgs.contains(&e.value.organization_id) {
                    tenants.push(id.key());
                }
            }
        }
        (WEBHOOK_DELIVERY_BY_ENDPOINT, tenants)
    };
    let (items, total) =
        page_of::<WebhookDelivery>(state, index, &tenants, true, params, None).await?;
    // The page's events and their payloads, one read each.
    let keys: Vec<Vec<u8>> = items.iter().map(|d| d.event_id.key()).collect();
    let mut events: Vec<WebhookEvent> = state
        .store
        .get_many::<WebhookEvent>(&keys)
        .await?
        .into_iter()
        .map(|e| e.value)
        .collect();
    load_payloads(state, events.iter_mut()).await?;
    let events: HashMap<WebhookEventId, WebhookEvent> =
        events.into_iter().map(|e| (e.id, e)).collect();
    let views = items
        .iter()
        .filter_map(|d| WebhookDeliveryView::new(d, events.get(&d.event_id)?))
        .collect();
    Ok((views, total))
}

/// Sends an event again (it goes back to pending, its worker is woken).
pub async fn redeliver(
    state: &AppState,
    subject: Subject,
    id: WebhookEventId,
) -> Result<(), AppError> {
    event_for(state, subject, id).await?;
    let now = state.now();
    let updated = state
        .store
        .update::<WebhookEvent, AppError>(&id.key(), async |current| {
            if current.archived {
                return Err(AppError::conflict(
                    "This event is archived: its payload is gone and it can't be redelivered.",
                ));
            }
            if state
                .store
                .get::<WebhookEndpoint>(&current.endpoint_id.key())
                .await?
                .is_none()
            {
                return Err(AppError::not_found());
            }
            let mut e = current.clone();
            e.state = WebhookEventState::Pending;
            e.next_attempt_at = None;
            e.modified_at = Some(now);
            Ok(Some(e))
        })
        .await;
    match updated {
        Ok(Some(e)) => {
            state.webhooks.wake(e.endpoint_id);
            Ok(())
        }
        Ok(None) => Err(AppError::not_found()),
        Err(tollgate_storage::UpdateError::Storage(tollgate_storage::StorageError::Conflict {
            ..
        })) => Err(AppError::conflict(
            "The event is being delivered right now; retry.",
        )),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
#[path = "webhook_endpoints_tests.rs"]
mod tests;
