//! The license key aggregate: its state ([`model`]), its pure rules ([`decide`]), its stored
//! form and indexes, the in-memory key directory ([`directory`]) and the actor shell that
//! applies one command at a time per key.
//!
//! Keys are created outside any actor (checkout completion writes them with the order);
//! every later change goes through the key's actor, so its counters are never written by two
//! parties. A write that bypasses the actor must be followed by `Registry::reload(id)`.

pub mod decide;
pub mod directory;
pub mod live;
pub mod model;

use std::sync::Arc;

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
    /// Its changes are webhook events, except the validation counters (`usage`,
    /// `validations`, `last_validated_at`): the hot path stays a compare-and-swap.
    const FEED: bool = true;
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

    fn feed_digest(&self) -> Option<Vec<u8>> {
        let watched = (
            self.status,
            self.limit_activations,
            self.limit_usage,
            self.expires_at,
            &self.activations,
            &self.customer_id,
        );
        // Encoding a value that was just encoded as part of the record cannot fail; if it
        // ever did, the whole payload counts.
        tollgate_storage::codec::encode(&watched).ok()
    }
}

/// The actor entity of this aggregate: its state is the stored snapshot with its revision,
/// shared (`Arc`) with its publication for the validation fast path (`live`), so a live
/// key is held once.
pub enum LicenseKeyEntity {}

/// A license key actor's state.
pub type KeyState = Stored<Arc<LicenseKey>>;

impl Entity for LicenseKeyEntity {
    type Id = LicenseKeyId;
    type State = KeyState;
    const NAME: &'static str = "license_key";
    const COLLECTION: Option<&'static str> =
        Some(<LicenseKey as tollgate_storage::Record>::COLLECTION);
    type Extension = live::LiveKeys;

    async fn load(store: &Store, id: Self::Id) -> Result<Option<Self::State>, StorageError> {
        Ok(store.get::<LicenseKey>(&id.key()).await?.map(|s| Stored {
            rev: s.rev,
            value: Arc::new(s.value),
        }))
    }

    fn insert(state: &Self::State, batch: &mut Batch) -> Result<(), StorageError> {
        batch.put(&*state.value, Expect::Absent).map(|_| ())
    }

    fn revision(state: &Self::State) -> Option<u64> {
        Some(state.rev)
    }

    async fn hold(
        store: &Store,
        id: Self::Id,
    ) -> Result<Option<(Option<Self::State>, tollgate_storage::Holding)>, StorageError> {
        Ok(store
            .hold::<LicenseKey>(&id.key())
            .await?
            .map(|(stored, holding)| {
                let state = stored.map(|s| Stored {
                    rev: s.rev,
                    value: Arc::new(s.value),
                });
                (state, holding)
            }))
    }

    async fn stored_revision(store: &Store, id: Self::Id) -> Result<Option<u64>, StorageError> {
        store.revision::<LicenseKey>(&id.key()).await
    }

    /// The aggregate is always the first write of its batches.
    fn on_commit(state: &mut Self::State, committed: &Committed) {
        if let Some(rev) = committed.revs.first() {
            state.rev = *rev;
        }
    }

    fn publish(
        ext: &live::LiveKeys,
        id: LicenseKeyId,
        state: &Self::State,
        durable_after: u64,
        wake: &actix::Recipient<crate::entity::AbsorbSoon>,
    ) {
        ext.publish(id, state.value.clone(), durable_after, wake);
    }

    fn absorb(ext: &live::LiveKeys, id: LicenseKeyId, state: &mut Self::State) -> bool {
        ext.absorb(id, &mut state.value)
    }

    fn retire(ext: &live::LiveKeys, id: LicenseKeyId, state: &mut Self::State) -> bool {
        ext.retire(id, &mut state.value)
    }

    /// The validation counters held in memory (batched mode), over the stored key: only
    /// counters changed, so no index entry, unique key or feed digest does.
    fn write_back(state: &Self::State, batch: &mut Batch) -> Result<(), StorageError> {
        batch
            .put_keeping_keys(&*state.value, Expect::Rev(state.rev))
            .map(|_| ())
    }
}

/// What the customer-portal and organizer commands reply.
pub type KeyReply<T> = Result<T, ActorError<LicenseKeyError>>;
type Handled<T> = CommandReply<LicenseKeyEntity, T, LicenseKeyError>;

/// Writes `next` over the snapshot `s` and replies `reply` once that is durable.
fn store_and_reply<R, Er>(
    s: &KeyState,
    next: LicenseKey,
    reply: R,
) -> Result<Outcome<KeyState, R>, ActorError<Er>> {
    let mut batch = Batch::new();
    batch.put(&next, Expect::Rev(s.rev))?;
    Ok(Outcome::commit(
        batch,
        Stored {
            rev: s.rev,
            value: Arc::new(next),
        },
        reply,
    ))
}

fn refused(e: LicenseKeyError) -> ActorError<LicenseKeyError> {
    ActorError::Domain(e)
}

/// `POST /v1/customer-portal/license-keys/validate`: counts the validation, and the usage.
///
/// The usage (`increment_usage`) is durable before the reply, always. A plain validation
/// changes only statistics (`validations`, `last_validated_at`): in batched mode (the
/// registry's `write_back` interval, `license_keys.stats_flush_ms`) they change in memory
/// and the reply goes at once, the counters following within one interval; in strict mode
/// they are durable before the reply too.
#[derive(Message)]
#[rtype(result = "KeyReply<Validated>")]
pub struct ValidateLicenseKey(pub ValidateKey);

impl Handler<ValidateLicenseKey> for EntityActor<LicenseKeyEntity> {
    type Result = Handled<Validated>;

    fn handle(&mut self, msg: ValidateLicenseKey, ctx: &mut Context<Self>) -> Self::Result {
        let plain = msg.0.increment_usage.is_none_or(|n| n == 0);
        if plain && self.defers_writes() {
            // Answered from memory: first make sure memory is what is stored.
            self.refresh(ctx);
            let now = self.now();
            return match decide::validate(&self.state().value, &msg.0, now) {
                Ok(validated) => {
                    let rev = self.state().rev;
                    self.defer(
                        ctx,
                        Stored {
                            rev,
                            value: Arc::new(validated.key.clone()),
                        },
                    );
                    // Once whatever durable change the key shows is durable (at once,
                    // unless a write of this key is still being flushed).
                    self.reply(Ok(validated))
                }
                Err(e) => self.reply(Err(refused(e))),
            };
        }
        self.execute(ctx, move |s, now| {
            let validated = decide::validate(&s.value, &msg.0, now).map_err(refused)?;
            // Counters and usage only: none of the key's derived keys changes.
            let mut batch = Batch::new();
            batch.put_keeping_keys(&validated.key, Expect::Rev(s.rev))?;
            let state = Stored {
                rev: s.rev,
                value: Arc::new(validated.key.clone()),
            };
            Ok(Outcome::commit(batch, state, validated))
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

    fn handle(&mut self, _: GetLicenseKey, ctx: &mut Context<Self>) -> Self::Result {
        self.read(ctx, |s, _| Ok((*s.value).clone()))
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
            None => Ok(Outcome::reply((*s.value).clone())),
            Some(next) => {
                let reply = next.clone();
                store_and_reply(s, next, reply)
            }
        })
    }
}

#[cfg(test)]
pub(crate) mod actor_tests;
#[cfg(test)]
mod remote_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{
        ActivationId, BenefitId, CustomerId, OrderId, OrganizationId, SubscriptionId,
    };
    use crate::golden::{at, hex, uuid};

    /// Every optional field set: a disabled key with limits, usage and validations, one
    /// activation (deactivated, so every one of its dates is set), and what granted it.
    fn full_key() -> LicenseKey {
        LicenseKey {
            id: LicenseKeyId(uuid(1)),
            organization_id: OrganizationId(uuid(2)),
            customer_id: CustomerId(uuid(3)),
            benefit_id: BenefitId(uuid(4)),
            created_at: at(0),
            modified_at: Some(at(60)),
            key: "TESTING-00000000-0000-4000-8000-000000000001".into(),
            status: KeyStatus::Disabled,
            limit_activations: Some(5),
            usage: 7,
            limit_usage: Some(100),
            validations: 300,
            last_validated_at: Some(at(120)),
            expires_at: Some(at(86_400)),
            activations: vec![Activation {
                id: ActivationId(uuid(5)),
                label: "laptop".into(),
                meta: r#"{"os":"linux"}"#.into(),
                conditions: r#"{"major":1}"#.into(),
                created_at: at(30),
                modified_at: Some(at(40)),
                deleted_at: Some(at(50)),
            }],
            subscription_id: Some(SubscriptionId(uuid(6))),
            order_id: Some(OrderId(uuid(7))),
        }
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let k = full_key();
        assert_eq!(
            (LicenseKey::COLLECTION, LicenseKey::VERSION),
            ("license_key", 1)
        );
        let bytes = k.encode().unwrap_or_default();
        assert_eq!(LicenseKey::decode(1, &bytes).ok(), Some(k));
        assert_eq!(hex(&bytes), GOLDEN_V1, "license key format v1 changed");
    }

    const GOLDEN_V1: &str = "\
        1000000000000000000000000000000001100000000000000000000000000000000210000000000000000000\
        00000000000003100000000000000000000000000000000414313937302d30312d30315430303a30303a3030\
        5a0114313937302d30312d30315430303a30313a30305a2c54455354494e472d30303030303030302d303030\
        302d343030302d383030302d30303030303030303030303102010a0e01c8fb58020114313937302d30312d30\
        315430303a30323a30305a0114313937302d30312d30325430303a30303a30305a0110000000000000000000\
        00000000000005066c6170746f700e7b226f73223a226c696e7578227d0b7b226d616a6f72223a317d143139\
        37302d30312d30315430303a30303a33305a0114313937302d30312d30315430303a30303a34305a01143139\
        37302d30312d30315430303a30303a35305a0110000000000000000000000000000000060110000000000000\
        00000000000000000007";
}
