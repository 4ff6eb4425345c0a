//! An organization's ed25519 keys for signed license-key answers (`crate::signature`) and
//! offline license files: generated on first use (the first signed answer, JWKS read or
//! seller's look), rotated by the seller with the old public keys kept published, and the
//! `sign_every_answer` setting.
//!
//! Keys are only ever made for an organization that exists: a request naming any other
//! id is answered unsigned, and writes nothing.

use std::sync::Arc;

use tollgate_storage::{Batch, Expect, StorageError};

use crate::api::license_signing::{
    LicenseKeyJwk, LicenseKeyJwks, LicenseKeySigning, LicenseKeySigningKey,
};
use crate::app::access::can_access;
use crate::auth::Subject;
use crate::domain::ids::OrganizationId;
use crate::domain::license_signing::{LicenseSigning, LicenseSigningKey};
use crate::domain::organization::Organization;
use crate::error::AppError;
use crate::signature::{OrgSigner, Signer, Signing};
use crate::state::AppState;

fn new_key(now: chrono::DateTime<chrono::Utc>) -> LicenseSigningKey {
    let (seed, public, kid) = Signer::generate();
    LicenseSigningKey {
        kid,
        seed: seed.to_vec(),
        public: public.to_vec(),
        created_at: now,
        retired_at: None,
    }
}

fn org_signer(rec: &LicenseSigning) -> Option<OrgSigner> {
    let key = rec.current()?;
    Some(OrgSigner {
        every_answer: rec.sign_every_answer,
        signer: Arc::new(Signer::from_seed(key.kid.clone(), &key.seed)?),
    })
}

async fn exists(state: &AppState, org: OrganizationId) -> Result<bool, AppError> {
    Ok(state
        .store
        .get::<Organization>(&org.key())
        .await?
        .is_some_and(|o| o.value.deleted_at.is_none()))
}

/// The organization's keys, made on first use (`None`: no such organization).
async fn ensure(state: &AppState, org: OrganizationId) -> Result<Option<LicenseSigning>, AppError> {
    if let Some(rec) = state.store.get::<LicenseSigning>(&org.key()).await? {
        return Ok(Some(rec.value));
    }
    if !exists(state, org).await? {
        return Ok(None);
    }
    let now = state.now();
    let rec = LicenseSigning {
        organization_id: org,
        sign_every_answer: false,
        keys: vec![new_key(now)],
        modified_at: now,
    };
    let mut batch = Batch::new();
    batch.put(&rec, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => {
            state.signers.put(org, org_signer(&rec));
            Ok(Some(rec))
        }
        // Another request (or node) made them first: theirs.
        Err(StorageError::Conflict { .. }) => Ok(state
            .store
            .get::<LicenseSigning>(&org.key())
            .await?
            .map(|r| r.value)),
        Err(e) => Err(e.into()),
    }
}

/// How an answer about a key of `org` is signed: when the request asked (`requested`) or
/// the organization signs every answer; `None`: unsigned.
pub async fn for_answer(
    state: &AppState,
    org: uuid::Uuid,
    requested: Vec<crate::signature::Requested>,
) -> Result<Option<Signing>, AppError> {
    let org = OrganizationId(org);
    let cached = match state.signers.cached(org) {
        Some(cached) => cached,
        None => {
            let loaded = state
                .store
                .get::<LicenseSigning>(&org.key())
                .await?
                .and_then(|r| org_signer(&r.value));
            state.signers.put(org, loaded.clone());
            loaded
        }
    };
    let signer = match cached {
        Some(s) if s.every_answer || !requested.is_empty() => s.signer,
        Some(_) => return Ok(None),
        None if !requested.is_empty() => match ensure(state, org).await? {
            Some(rec) => match org_signer(&rec) {
                Some(s) => s.signer,
                None => return Ok(None),
            },
            None => return Ok(None),
        },
        None => return Ok(None),
    };
    Ok(Some(Signing::new(
        signer,
        requested,
        state.now().timestamp(),
    )))
}

/// [`for_answer`] for a token holder's command: signed only for an organization the token
/// reaches (any other is a 404 that names no key).
pub async fn for_subject(
    state: &AppState,
    subject: Subject,
    org: uuid::Uuid,
    requested: Vec<crate::signature::Requested>,
) -> Result<Option<Signing>, AppError> {
    if !can_access(state, subject, OrganizationId(org)).await? {
        return Ok(None);
    }
    for_answer(state, org, requested).await
}

/// The signer of `org`'s license files (its keys made on first use); 404 for no such
/// organization.
pub async fn signer(state: &AppState, org: OrganizationId) -> Result<Arc<Signer>, AppError> {
    ensure(state, org)
        .await?
        .as_ref()
        .and_then(org_signer)
        .map(|s| s.signer)
        .ok_or_else(AppError::not_found)
}

/// The public JWKS of `org` (keys made on first use); 404 for no such organization.
pub async fn jwks(state: &AppState, org: OrganizationId) -> Result<LicenseKeyJwks, AppError> {
    let rec = ensure(state, org).await?.ok_or_else(AppError::not_found)?;
    Ok(LicenseKeyJwks {
        keys: rec
            .keys
            .iter()
            .map(|k| LicenseKeyJwk::new(&k.kid, &k.public))
            .collect(),
    })
}

fn view(state: &AppState, rec: &LicenseSigning) -> LicenseKeySigning {
    LicenseKeySigning {
        organization_id: rec.organization_id.0,
        sign_every_answer: rec.sign_every_answer,
        jwks_url: jwks_url(state, rec.organization_id),
        keys: rec
            .keys
            .iter()
            .map(|k| LicenseKeySigningKey {
                kid: k.kid.clone(),
                created_at: k.created_at,
                retired_at: k.retired_at,
                public_key_hex: k.public.iter().map(|b| format!("{b:02x}")).collect(),
                jwk: LicenseKeyJwk::new(&k.kid, &k.public),
            })
            .collect(),
    }
}

/// Where the organization's JWKS is published.
pub fn jwks_url(state: &AppState, org: OrganizationId) -> String {
    format!(
        "{}/v1/customer-portal/license-keys/jwks?organization_id={}",
        state.public_url.trim_end_matches('/'),
        org.0
    )
}

async fn reachable(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
) -> Result<(), AppError> {
    if can_access(state, subject, org).await? {
        Ok(())
    } else {
        Err(AppError::not_found())
    }
}

/// `GET /v1/license-keys/signing`.
pub async fn get(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
) -> Result<LicenseKeySigning, AppError> {
    reachable(state, subject, org).await?;
    let rec = ensure(state, org).await?.ok_or_else(AppError::not_found)?;
    Ok(view(state, &rec))
}

/// Changes the organization's signing record by compare-and-swap (its keys made first).
async fn change(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    apply: impl Fn(&mut LicenseSigning, chrono::DateTime<chrono::Utc>),
) -> Result<LicenseKeySigning, AppError> {
    reachable(state, subject, org).await?;
    ensure(state, org).await?.ok_or_else(AppError::not_found)?;
    let updated = state
        .store
        .update::<LicenseSigning, AppError>(&org.key(), async |current| {
            let mut next = current.clone();
            apply(&mut next, state.now());
            Ok(Some(next))
        })
        .await?
        .ok_or_else(AppError::not_found)?;
    state.signers.put(org, org_signer(&updated));
    Ok(view(state, &updated))
}

/// `PATCH /v1/license-keys/signing`.
pub async fn set_every_answer(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    on: bool,
) -> Result<LicenseKeySigning, AppError> {
    change(state, subject, org, |rec, now| {
        rec.sign_every_answer = on;
        rec.modified_at = now;
    })
    .await
}

/// `POST /v1/license-keys/signing/rotate`.
pub async fn rotate(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
) -> Result<LicenseKeySigning, AppError> {
    let key = new_key(state.now());
    change(state, subject, org, move |rec, now| {
        rec.rotate(key.clone(), now)
    })
    .await
}
