//! The license key aggregate: its state ([`model`]), its pure rules ([`decide`]), its stored
//! form and indexes, the in-memory key directory ([`directory`]) and the actor shell that
//! applies one command at a time per key.
//!
//! Keys are created outside any actor (checkout completion writes them with the order);
//! every later change goes through the key's actor, so its counters are never written by two
//! parties. A write that bypasses the actor must be followed by `Registry::reload(id)`.

pub mod decide;
pub mod directory;
pub mod model;

use actix::prelude::*;
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{
    Batch, Committed, Expect, IndexEntry, Record, StorageError, Store, Stored, UniqueKey,
};

use crate::domain::ids::{LicenseKeyId, OrganizationId};
use crate::entity::{CommandReply, Entity, EntityActor, Outcome};
use crate::error::ActorError;
pub use decide::{
    live_activations, ActivateKey, DeactivateKey, ErrorKind, JsonObject, KeyChanges,
    LicenseKeyError, ValidateKey, Validated,
};
pub use directory::KeyDirectory;
pub use model::{generate_key, Activation, KeyStatus, LicenseKey};

/// Organization | created_at: the organizer list.
pub const LICENSE_KEY_BY_CREATED: &str = "license_key_by_created";
/// Benefit | created_at: the organizer list filtered by benefit.
pub const LICENSE_KEY_BY_BENEFIT: &str = "license_key_by_benefit";
/// Customer | created_at: the customer-portal list.
pub const LICENSE_KEY_BY_CUSTOMER: &str = "license_key_by_customer";
/// `(organization, key)` → id: how validation finds a key.
pub const LICENSE_KEY_VALUE: &str = "license_key_value";

impl LicenseKey {
    pub fn value_key(org: OrganizationId, key: &str) -> UniqueKey {
        UniqueKey::new(LICENSE_KEY_VALUE, org.key(), key.as_bytes().to_vec())
    }
}

impl Record for LicenseKey {
    crate::record_v1!(LicenseKey, "license_key");
    const INDEXES: &'static [&'static str] = &[
        LICENSE_KEY_BY_CREATED,
        LICENSE_KEY_BY_BENEFIT,
        LICENSE_KEY_BY_CUSTOMER,
    ];
    const UNIQUES: &'static [&'static str] = &[LICENSE_KEY_VALUE];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        let created = KeyBuf::new()
            .i64(self.created_at.timestamp_micros())
            .into_vec();
        vec![
            IndexEntry::new(
                LICENSE_KEY_BY_CREATED,
                self.organization_id.key(),
                created.clone(),
            ),
            IndexEntry::new(
                LICENSE_KEY_BY_BENEFIT,
                self.benefit_id.key(),
                created.clone(),
            ),
            IndexEntry::new(LICENSE_KEY_BY_CUSTOMER, self.customer_id.key(), created),
        ]
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![LicenseKey::value_key(self.organization_id, &self.key)]
    }
}

/// The actor entity of this aggregate: its state is the stored snapshot with its revision.
pub enum LicenseKeyEntity {}

impl Entity for LicenseKeyEntity {
    type Id = LicenseKeyId;
    type State = Stored<LicenseKey>;
    const NAME: &'static str = "license_key";

    fn load(store: &Store, id: Self::Id) -> Result<Option<Self::State>, StorageError> {
        store.get(&id.key())
    }

    fn insert(state: &Self::State, batch: &mut Batch) -> Result<(), StorageError> {
        batch.put(&state.value, Expect::Absent).map(|_| ())
    }

    /// The aggregate is always the first write of its batches.
    fn on_commit(state: &mut Self::State, committed: &Committed) {
        if let Some(rev) = committed.revs.first() {
            state.rev = *rev;
        }
    }
}

/// What the customer-portal and organizer commands reply.
pub type KeyReply<T> = Result<T, ActorError<LicenseKeyError>>;
type Handled<T> = CommandReply<LicenseKeyEntity, T, LicenseKeyError>;

/// Writes `next` over the snapshot `s` and replies `reply` once that is durable.
fn store_and_reply<R, Er>(
    s: &Stored<LicenseKey>,
    next: LicenseKey,
    reply: R,
) -> Result<Outcome<Stored<LicenseKey>, R>, ActorError<Er>> {
    let mut batch = Batch::new();
    batch.put(&next, Expect::Rev(s.rev))?;
    Ok(Outcome::commit(
        batch,
        Stored {
            rev: s.rev,
            value: next,
        },
        reply,
    ))
}

fn refused(e: LicenseKeyError) -> ActorError<LicenseKeyError> {
    ActorError::Domain(e)
}

/// `POST /v1/customer-portal/license-keys/validate`: counts the validation (and the usage)
/// durably before replying.
#[derive(Message)]
#[rtype(result = "KeyReply<Validated>")]
pub struct ValidateLicenseKey(pub ValidateKey);

impl Handler<ValidateLicenseKey> for EntityActor<LicenseKeyEntity> {
    type Result = Handled<Validated>;

    fn handle(&mut self, msg: ValidateLicenseKey, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let validated = decide::validate(&s.value, &msg.0, now).map_err(refused)?;
            let next = validated.key.clone();
            store_and_reply(s, next, validated)
        })
    }
}

/// `POST /v1/customer-portal/license-keys/activate`: replies the key and the new activation.
#[derive(Message)]
#[rtype(result = "KeyReply<(LicenseKey, Activation)>")]
pub struct ActivateLicenseKey(pub ActivateKey);

impl Handler<ActivateLicenseKey> for EntityActor<LicenseKeyEntity> {
    type Result = Handled<(LicenseKey, Activation)>;

    fn handle(&mut self, msg: ActivateLicenseKey, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let id = crate::domain::ids::ActivationId::new();
            let (next, activation) =
                decide::activate(&s.value, &msg.0, id, now).map_err(refused)?;
            let reply = (next.clone(), activation);
            store_and_reply(s, next, reply)
        })
    }
}

/// `POST /v1/customer-portal/license-keys/deactivate`.
#[derive(Message)]
#[rtype(result = "KeyReply<()>")]
pub struct DeactivateLicenseKey(pub DeactivateKey);

impl Handler<DeactivateLicenseKey> for EntityActor<LicenseKeyEntity> {
    type Result = Handled<()>;

    fn handle(&mut self, msg: DeactivateLicenseKey, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let next = decide::deactivate(&s.value, &msg.0, now).map_err(refused)?;
            store_and_reply(s, next, ())
        })
    }
}

/// `PATCH /v1/license-keys/{id}`: replies the key as updated.
#[derive(Message)]
#[rtype(result = "KeyReply<LicenseKey>")]
pub struct UpdateLicenseKey(pub KeyChanges);

impl Handler<UpdateLicenseKey> for EntityActor<LicenseKeyEntity> {
    type Result = Handled<LicenseKey>;

    fn handle(&mut self, msg: UpdateLicenseKey, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let next = decide::update(&s.value, &msg.0, now);
            let reply = next.clone();
            store_and_reply(s, next, reply)
        })
    }
}

/// Reads the key as its actor holds it (once durable).
#[derive(Message)]
#[rtype(result = "KeyReply<LicenseKey>")]
pub struct GetLicenseKey;

impl Handler<GetLicenseKey> for EntityActor<LicenseKeyEntity> {
    type Result = Handled<LicenseKey>;

    fn handle(&mut self, _: GetLicenseKey, _: &mut Context<Self>) -> Self::Result {
        self.read(|s, _| Ok(s.value.clone()))
    }
}

/// Revokes a granted key (its subscription ended). Idempotent: a key that is already
/// revoked or disabled is left as it is. Replies with the key as it now is.
#[derive(Message)]
#[rtype(result = "Result<LicenseKey, crate::error::ActorError>")]
pub struct RevokeLicenseKey;

impl Handler<RevokeLicenseKey> for EntityActor<LicenseKeyEntity> {
    type Result = CommandReply<LicenseKeyEntity, LicenseKey, std::convert::Infallible>;

    fn handle(&mut self, _: RevokeLicenseKey, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, |s, now| match decide::revoke(&s.value, now) {
            None => Ok(Outcome::reply(s.value.clone())),
            Some(next) => {
                let reply = next.clone();
                store_and_reply(s, next, reply)
            }
        })
    }
}

#[cfg(test)]
mod actor_tests;
