//! Keys generated without an order (giveaways, bundles: issue 32, part 4) and claimed by a
//! customer. A generated key is a `ClaimableKey`, not a license key: it validates nowhere
//! until claimed. The claim writes, in one batch, the license key (id derived from the
//! claimable one: never two) and the claimable key marked claimed (at its revision: of two
//! customers claiming at once, one wins, the other is told it is taken).

use tollgate_actors::license_key::{generate_key, LicenseKey};
use tollgate_storage::{Batch, Expect, StorageError};

use crate::api::license_key::LicenseKeyRead;
use crate::api::license_key_import::{
    GeneratedKey, GeneratedKeys, LicenseKeyClaim, LicenseKeyGenerate,
};
use crate::app::access::can_access;
use crate::auth::Subject;
use crate::domain::benefit::{Benefit, BenefitProperties, LicenseKeyProperties};
use crate::domain::claimable_key::{ClaimableKey, ClaimableKeyId};
use crate::domain::customer::Customer;
use crate::domain::grants;
use crate::domain::ids::{BenefitId, OrganizationId};
use crate::error::{AppError, Code, Invalid};
use crate::field;
use crate::state::AppState;

/// The most keys one request generates.
pub const MAX_GENERATED: i64 = 1000;
/// Keys per durable write.
const BATCH: usize = 200;

/// Generate `count` claimable keys of benefit `benefit_id` of organization
/// `organization_id`.
#[derive(Debug, Clone)]
pub struct GenerateKeys {
    pub organization_id: OrganizationId,
    pub benefit_id: BenefitId,
    /// 1 to [`MAX_GENERATED`].
    pub count: i64,
}

impl From<LicenseKeyGenerate> for GenerateKeys {
    fn from(body: LicenseKeyGenerate) -> Self {
        GenerateKeys {
            organization_id: OrganizationId(body.organization_id),
            benefit_id: BenefitId(body.benefit_id),
            count: body.count,
        }
    }
}

/// Claim the generated key `key` of organization `organization_id`.
#[derive(Debug, Clone)]
pub struct ClaimKey {
    pub organization_id: OrganizationId,
    pub key: String,
}

impl From<LicenseKeyClaim> for ClaimKey {
    fn from(body: LicenseKeyClaim) -> Self {
        ClaimKey {
            organization_id: OrganizationId(body.organization_id),
            key: body.key,
        }
    }
}

/// The license-key benefit `id` of `org`, else an invalid `benefit_id` (generation and
/// import).
pub(crate) async fn key_benefit(
    state: &AppState,
    org: OrganizationId,
    id: BenefitId,
) -> Result<LicenseKeyProperties, AppError> {
    match state.store.get::<Benefit>(&id.key()).await? {
        Some(b) if b.value.organization_id == org && b.value.deleted_at.is_none() => {
            if let BenefitProperties::LicenseKeys(p) = b.value.properties {
                return Ok(p);
            }
        }
        _ => {}
    }
    Err(AppError::invalid(
        field!["benefit_id"],
        "Benefit does not exist or is not a license-key benefit of the organization.",
        id.0,
    ))
}

/// Generates `input.count` claimable keys of the benefit for `subject`.
pub async fn generate(
    state: &AppState,
    subject: Subject,
    input: GenerateKeys,
) -> Result<GeneratedKeys, AppError> {
    if input.count < 1 {
        return Err(Invalid::new(
            field!["count"],
            "Input should be greater than or equal to 1",
            input.count,
        )
        .kind("greater_than_equal")
        .with_ctx("ge", 1i64)
        .into());
    }
    if input.count > MAX_GENERATED {
        return Err(Invalid::new(
            field!["count"],
            format!("Input should be less than or equal to {MAX_GENERATED}"),
            input.count,
        )
        .kind("less_than_equal")
        .with_ctx("le", MAX_GENERATED)
        .into());
    }
    let org = input.organization_id;
    if !can_access(state, subject, org).await? {
        return Err(AppError::not_found());
    }
    let benefit = input.benefit_id;
    let props = key_benefit(state, org, benefit).await?;
    let now = state.now();
    let mut items = Vec::new();
    let mut batch = Batch::new();
    let mut in_batch = 0;
    for _ in 0..input.count {
        let k = ClaimableKey {
            id: ClaimableKeyId::new(),
            organization_id: org,
            benefit_id: benefit,
            key: generate_key(props.prefix.as_deref()),
            created_at: now,
            claimed_at: None,
            claimed_by: None,
        };
        batch.put(&k, Expect::Absent)?;
        items.push(GeneratedKey {
            id: k.id.0,
            key: k.key,
            benefit_id: benefit.0,
            created_at: now,
        });
        in_batch += 1;
        if in_batch == BATCH {
            state
                .store
                .commit_durable(&std::mem::take(&mut batch))
                .await?;
            in_batch = 0;
        }
    }
    if in_batch > 0 {
        state.store.commit_durable(&batch).await?;
    }
    Ok(GeneratedKeys { items })
}

fn taken() -> AppError {
    AppError::new(
        Code::LicenseKeyAlreadyClaimed,
        "This license key was already claimed by another customer.",
    )
    .with_reason("already_claimed")
}

/// No generated key of that value for this customer's organization.
fn unknown_key() -> AppError {
    AppError::not_found().with_reason("not_found")
}

/// Claims the generated key `input.key` for `customer` (signed in to the portal of its
/// organization): its license key, new or (claimed before by the same customer) as it is.
pub async fn claim(
    state: &AppState,
    customer: &Customer,
    input: ClaimKey,
) -> Result<LicenseKeyRead, AppError> {
    let org = input.organization_id;
    if org != customer.organization_id {
        return Err(unknown_key());
    }
    let Some(id) = state
        .store
        .lookup_unique(&ClaimableKey::value_key(org, &input.key))
        .await?
    else {
        return Err(unknown_key());
    };
    let Some(stored) = state.store.get::<ClaimableKey>(&id).await? else {
        return Err(unknown_key());
    };
    let claimable = stored.value;
    match claimable.claimed_by {
        Some(c) if c == customer.id => {
            let key = state
                .store
                .get::<LicenseKey>(&claimable.license_key_id().key())
                .await?
                .ok_or_else(unknown_key)?;
            return Ok(LicenseKeyRead::new(&key.value, customer));
        }
        Some(_) => return Err(taken()),
        None => {}
    }
    let props = key_benefit(state, org, claimable.benefit_id).await?;
    let now = state.now();
    let grant = grants::claim(claimable.benefit_id, &props, now);
    let key = LicenseKey::from_grant(
        claimable.license_key_id(),
        org,
        customer.id,
        &grant,
        claimable.key.clone(),
        None,
        None,
    );
    let mut claimed = claimable.clone();
    claimed.claimed_at = Some(now);
    claimed.claimed_by = Some(customer.id);
    let mut batch = Batch::new();
    batch.put(&claimed, Expect::Rev(stored.rev))?;
    batch.put(&key, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => Ok(LicenseKeyRead::new(&key, customer)),
        // Another claim won meanwhile.
        Err(StorageError::Conflict { .. } | StorageError::Unique { .. }) => Err(taken()),
        Err(e) => Err(e.into()),
    }
}
