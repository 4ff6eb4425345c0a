//! The license key's rules as pure functions: no actor, no storage, no clock. Each takes the
//! key as it is, the command and `now`, and returns the key as it must become (or why not).
//! The checks and messages are Polar's (`polar-reference.md` 3.5), in Polar's order.
//!
//! The actor (`actor.rs`) calls these one message at a time, which is what makes
//! `increment_usage` safe under concurrency: two requests never see the same `usage`.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::model::{
    ActivateKey, Activation, ActivationRef, DeactivateKey, JsonObject, KeyChanges, KeyStatus,
    LicenseKey, LicenseKeyError, Replace, Rotated, ValidateKey, Validated, REPLACEMENTS_PER_WINDOW,
    REPLACEMENT_WINDOW_HOURS, ROTATABLE,
};
use crate::domain::ids::{ActivationId, OrganizationId};

/// Deactivated activations kept in the snapshot for the record. They are invisible to the
/// API (a deactivated activation answers "Not found" everywhere), so older ones are dropped:
/// the snapshot, rewritten on every validation, stays bounded however often a customer
/// activates and deactivates.
pub const KEPT_DEACTIVATED: usize = 10;

/// Step 1 of every customer-portal command: the command names this very key.
fn check_identity(
    key: &LicenseKey,
    organization_id: OrganizationId,
    value: &str,
) -> Result<(), LicenseKeyError> {
    if key.organization_id == organization_id && key.key == value {
        Ok(())
    } else {
        Err(LicenseKeyError::WrongKey)
    }
}

/// The live (not deactivated) activation `id` of this key.
fn live_activation(key: &LicenseKey, id: ActivationId) -> Result<&Activation, LicenseKeyError> {
    key.activations
        .iter()
        .find(|a| a.id == id && a.deleted_at.is_none())
        .ok_or(LicenseKeyError::ActivationNotFound)
}

/// Activations that are not deactivated, in creation order.
pub fn live_activations(key: &LicenseKey) -> impl Iterator<Item = &Activation> {
    key.activations.iter().filter(|a| a.deleted_at.is_none())
}

/// Validates the key (reference 3.5, checks 1 to 8, in that order) and counts the
/// validation. Returns the key to store.
pub fn validate(
    key: &LicenseKey,
    cmd: &ValidateKey,
    now: DateTime<Utc>,
) -> Result<Validated, LicenseKeyError> {
    let checked = check_validation(key, cmd, now)?;
    let activation = checked.activation.cloned();
    let mut next = key.clone();
    next.validations = next.validations.saturating_add(1);
    next.last_validated_at = Some(now);
    next.usage = checked.usage;
    Ok(Validated {
        key: next,
        activation,
    })
}

/// What a validation that passes every check gives, before anything is counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked<'k> {
    /// The activation the command named, if any.
    pub activation: Option<&'k Activation>,
    /// The key's usage once the command's increment is added.
    pub usage: i64,
}

/// The checks of [`validate`], without counting: the key may be shared (see `live`).
pub fn check_validation<'k>(
    key: &'k LicenseKey,
    cmd: &ValidateKey,
    now: DateTime<Utc>,
) -> Result<Checked<'k>, LicenseKeyError> {
    check_identity(key, cmd.organization_id, &cmd.key)?;
    if key.status != KeyStatus::Granted {
        return Err(LicenseKeyError::NotActive { status: key.status });
    }
    if key.expires_at.is_some_and(|at| now >= at) {
        return Err(LicenseKeyError::Expired);
    }
    let activation = match cmd.activation_id {
        Some(id) => {
            let activation = live_activation(key, id)?;
            let required = stored_object(&activation.conditions);
            if !required.is_empty() && !py_object_eq(&cmd.conditions, &required) {
                return Err(LicenseKeyError::ConditionsMismatch);
            }
            Some(activation)
        }
        None => None,
    };
    if cmd.benefit_id.is_some_and(|b| b != key.benefit_id) {
        return Err(LicenseKeyError::BenefitMismatch);
    }
    if cmd.customer_id.is_some_and(|c| c != key.customer_id) {
        return Err(LicenseKeyError::CustomerMismatch);
    }
    // Python truthiness: 0 and null increment nothing; a 0 limit is no limit.
    let increment = cmd.increment_usage.filter(|&n| n != 0);
    if let (Some(inc), Some(limit)) = (increment, key.limit_usage.filter(|&l| l != 0)) {
        let remaining = i128::from(limit) - i128::from(key.usage);
        if i128::from(inc) > remaining {
            return Err(LicenseKeyError::InsufficientUsage { remaining });
        }
    }
    let usage = match increment {
        Some(inc) => key
            .usage
            .checked_add(inc)
            .ok_or(LicenseKeyError::UsageOutOfRange)?,
        None => key.usage,
    };
    Ok(Checked { activation, usage })
}

/// Activates the key on a new instance (reference 3.5 `/activate`), in Polar's order: the
/// key must be granted and not expired (403s; earlier Polar checked neither), then take
/// activations and have a free slot. The counters do not move, as in Polar.
///
/// At the limit, a command that names an activation to free (`replace`, Tollgate's) on a key
/// whose benefit allows replacement frees it and takes its slot, in this one change: the
/// live activations never pass the limit and each replacement frees exactly one (see
/// [`to_replace`]). Below the limit `replace` is ignored.
pub fn activate(
    key: &LicenseKey,
    cmd: &ActivateKey,
    id: ActivationId,
    now: DateTime<Utc>,
) -> Result<(LicenseKey, Activation), LicenseKeyError> {
    check_identity(key, cmd.organization_id, &cmd.key)?;
    if key.status != KeyStatus::Granted {
        return Err(LicenseKeyError::ActivationOfInactiveKey { status: key.status });
    }
    if key.expires_at.is_some_and(|at| now >= at) {
        return Err(LicenseKeyError::ActivationOfExpiredKey);
    }
    let limit = match key.limit_activations {
        None | Some(0) => return Err(LicenseKeyError::ActivationNotRequired),
        Some(limit) => limit,
    };
    let mut next = key.clone();
    if at_limit(key, limit) {
        let freed = match (&cmd.replace, key.allow_replacement) {
            (Some(which), true) => to_replace(key, which)?,
            _ => return Err(LicenseKeyError::ActivationLimitReached),
        };
        free_for_replacement(&mut next, freed, now)?;
    }
    let activation = Activation {
        id,
        label: cmd.label.clone(),
        meta: Value::Object(cmd.meta.clone()).to_string(),
        conditions: Value::Object(cmd.conditions.clone()).to_string(),
        created_at: now,
        modified_at: None,
        deleted_at: None,
    };
    next.activations.push(activation.clone());
    Ok((next, activation))
}

/// Whether the key's live activations take all of its `limit`.
fn at_limit(key: &LicenseKey, limit: i64) -> bool {
    i64::try_from(live_activations(key).count()).unwrap_or(i64::MAX) >= limit
}

/// The live activation `which` names: the oldest (first created; the first stored on a
/// tie), or the most recent one with exactly that label (`activation_not_found` if none).
pub fn to_replace(key: &LicenseKey, which: &Replace) -> Result<ActivationId, LicenseKeyError> {
    let found = match which {
        Replace::Oldest => live_activations(key)
            .enumerate()
            .min_by_key(|(i, a)| (a.created_at, *i))
            .map(|(_, a)| a.id),
        Replace::Label(label) => live_activations(key)
            .filter(|a| a.label == *label)
            .max_by_key(|a| a.created_at)
            .map(|a| a.id),
    };
    found.ok_or(LicenseKeyError::ActivationNotFound)
}

/// Deactivates the live activation `id` of `next` as a replacement: counted against the
/// key's [`REPLACEMENTS_PER_WINDOW`] (`ReplacementRateLimited` over it, with the seconds
/// until the oldest counted one leaves the window).
fn free_for_replacement(
    next: &mut LicenseKey,
    id: ActivationId,
    now: DateTime<Utc>,
) -> Result<(), LicenseKeyError> {
    let window = chrono::Duration::hours(REPLACEMENT_WINDOW_HOURS);
    next.replacements.retain(|at| *at + window > now);
    if next.replacements.len() >= REPLACEMENTS_PER_WINDOW {
        let oldest = next.replacements.iter().min().copied().unwrap_or(now);
        let wait = (oldest + window - now).num_seconds().max(1);
        return Err(LicenseKeyError::ReplacementRateLimited {
            retry_after_secs: u64::try_from(wait).unwrap_or(1),
        });
    }
    next.replacements.push(now);
    for a in next.activations.iter_mut().filter(|a| a.id == id) {
        a.deleted_at = Some(now);
        a.modified_at = Some(now);
    }
    prune_deactivated(&mut next.activations);
    Ok(())
}

/// Frees the live activation `id` so that the key activates on another device (the
/// customer portal's "move to another device", Tollgate's). Only on a granted, unexpired
/// key whose benefit allows replacement (else `ActivationLimitReached`, the refusal an
/// activation at the limit would get), and counted as a replacement
/// (`ReplacementRateLimited` over the limit); an activation that is not live is
/// `ActivationNotFound`.
pub fn free_for_move(
    key: &LicenseKey,
    id: ActivationId,
    now: DateTime<Utc>,
) -> Result<LicenseKey, LicenseKeyError> {
    if key.status != KeyStatus::Granted {
        return Err(LicenseKeyError::ActivationOfInactiveKey { status: key.status });
    }
    if key.expires_at.is_some_and(|at| now >= at) {
        return Err(LicenseKeyError::ActivationOfExpiredKey);
    }
    let id = live_activation(key, id)?.id;
    if !key.allow_replacement {
        return Err(LicenseKeyError::ActivationLimitReached);
    }
    let mut next = key.clone();
    free_for_replacement(&mut next, id, now)?;
    next.modified_at = Some(now);
    Ok(next)
}

/// Deactivates one live activation, which frees its slot (reference 3.5 `/deactivate`).
pub fn deactivate(
    key: &LicenseKey,
    cmd: &DeactivateKey,
    now: DateTime<Utc>,
) -> Result<LicenseKey, LicenseKeyError> {
    check_identity(key, cmd.organization_id, &cmd.key)?;
    let id = match &cmd.activation_id {
        ActivationRef::Id(id) => live_activation(key, *id)?.id,
        // The most recent live activation with the label (the last created wins a tie).
        ActivationRef::Label(label) => key
            .activations
            .iter()
            .filter(|a| a.deleted_at.is_none() && a.label == *label)
            .max_by_key(|a| a.created_at)
            .map(|a| a.id)
            .ok_or(LicenseKeyError::ActivationNotFound)?,
    };
    let mut next = key.clone();
    for a in next.activations.iter_mut().filter(|a| a.id == id) {
        a.deleted_at = Some(now);
        a.modified_at = Some(now);
    }
    prune_deactivated(&mut next.activations);
    Ok(next)
}

/// Keeps the live activations and the [`KEPT_DEACTIVATED`] most recently deactivated ones,
/// in their original order.
fn prune_deactivated(activations: &mut Vec<Activation>) {
    let mut deactivated: Vec<(DateTime<Utc>, ActivationId)> = activations
        .iter()
        .filter_map(|a| a.deleted_at.map(|at| (at, a.id)))
        .collect();
    if deactivated.len() <= KEPT_DEACTIVATED {
        return;
    }
    deactivated.sort();
    let drop: Vec<ActivationId> = deactivated[..deactivated.len() - KEPT_DEACTIVATED]
        .iter()
        .map(|(_, id)| *id)
        .collect();
    activations.retain(|a| !drop.contains(&a.id));
}

/// Applies an organizer's update (reference 3.4): only the fields sent, no other checks
/// (`usage` may exceed `limit_usage`).
pub fn update(key: &LicenseKey, changes: &KeyChanges, now: DateTime<Utc>) -> LicenseKey {
    let mut next = key.clone();
    if let Some(status) = changes.status {
        next.status = status;
    }
    if let Some(usage) = changes.usage {
        next.usage = usage;
    }
    if let Some(limit) = changes.limit_activations {
        next.limit_activations = limit;
    }
    if let Some(limit) = changes.limit_usage {
        next.limit_usage = limit;
    }
    if let Some(paid_until) = changes.paid_until {
        next.paid_until = paid_until;
    }
    if let Some(expires_at) = changes.expires_at {
        next.expires_at = expires_at;
    }
    next.modified_at = Some(now);
    next
}

/// Revokes a granted key (its grant ended). `None` when there is nothing to do: a revoked
/// or disabled key stays as it is.
pub fn revoke(key: &LicenseKey, now: DateTime<Utc>) -> Option<LicenseKey> {
    if key.status != KeyStatus::Granted {
        return None;
    }
    let mut next = key.clone();
    next.status = KeyStatus::Revoked;
    next.modified_at = Some(now);
    Some(next)
}

/// Gives the key a new value (reference: Polar's `LicenseKeyService.rotate`): the same
/// record, status, usage, limits, expiry and activations, and `value` (drawn by the caller
/// with the benefit's prefix) in place of the old one, which validates no more. Only a
/// granted or disabled key may be rotated.
pub fn rotate(
    key: &LicenseKey,
    value: String,
    now: DateTime<Utc>,
) -> Result<Rotated, LicenseKeyError> {
    if !ROTATABLE.contains(&key.status) {
        return Err(LicenseKeyError::RotateNotPermitted { status: key.status });
    }
    let mut next = key.clone();
    let previous = std::mem::replace(&mut next.key, value);
    next.modified_at = Some(now);
    Ok(Rotated {
        key: next,
        previous,
    })
}

/// A JSON object stored as text; anything unreadable counts as empty (no condition).
pub fn stored_object(text: &str) -> JsonObject {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

/// Python's `==` on two decoded JSON objects, which is how Polar compares conditions:
/// numbers compare by value (`1 == 1.0`), and `true`/`false` equal `1`/`0`.
pub fn py_object_eq(a: &JsonObject, b: &JsonObject) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, va)| b.get(k).is_some_and(|vb| py_eq(va, vb)))
}

fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => py_object_eq(x, y),
        (Value::Bool(x), Value::Bool(y)) => x == y,
        _ => match (py_number(a), py_number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// A number (or a bool, which Python treats as 0/1) as an exact value where possible.
#[derive(Debug, PartialEq)]
enum PyNumber {
    Int(i128),
    Float(f64),
}

fn py_number(v: &Value) -> Option<PyNumber> {
    let n = match v {
        Value::Bool(b) => return Some(PyNumber::Int(i128::from(*b))),
        Value::Number(n) => n,
        _ => return None,
    };
    if let Some(i) = n.as_i64() {
        Some(PyNumber::Int(i128::from(i)))
    } else if let Some(u) = n.as_u64() {
        Some(PyNumber::Int(i128::from(u)))
    } else {
        let f = n.as_f64()?;
        // An integral float equals the integer of the same value.
        if f.fract() == 0.0 && f.abs() < 1e30 {
            Some(PyNumber::Int(f as i128))
        } else {
            Some(PyNumber::Float(f))
        }
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "replace_tests.rs"]
mod replace_tests;
