//! The license key actor's messages and their handlers: each decides through the rules of
//! `decide.rs` on the key the entity holds and writes it conditional on its revision; a
//! plain validation in batched mode only counts, in memory (see `live.rs`), and the counters
//! are written back to the key's counters' row (`Batch::write_tally`), not in the key. On a
//! store several nodes write (PostgreSQL) validations do not come here (see `shared.rs`).

use std::sync::Arc;

use actix::prelude::*;
use tollgate_storage::{Batch, Expect, Stored};

use super::decide;
use super::model::{
    generate_key, ActivateKey, Activation, DeactivateKey, KeyChanges, LicenseKey, LicenseKeyError,
    RotateKey, Rotated, ValidateKey, Validated,
};
use super::{KeyState, LicenseKeyEntity};
use crate::entity::{CommandReply, EntityActor, Outcome};
use crate::error::ActorError;

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
        if self.store().is_shared() {
            // There a write of the key carries no counters: validations are counted by
            // `shared::SharedKeys`, never here.
            return self.reply(Err(ActorError::Storage(
                tollgate_storage::StorageError::Io(
                    "on this store license keys are validated through SharedKeys".into(),
                ),
            )));
        }
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
            // Counters and usage only: written to the key's counters' row, at its revision.
            let mut batch = Batch::new();
            batch.write_tally(&validated.key, s.rev);
            let state = Stored {
                rev: s.rev,
                value: Arc::new(validated.key.clone()),
            };
            Ok(Outcome::commit(batch, state, validated))
        })
    }
}

/// `POST /v1/customer-portal/license-keys/activate`: replies the key and the new activation.
/// At the limit with `replace` on a key that allows it, the freed activation and the new
/// one are one write ([`decide::activate`]): one message at a time on the key, each write
/// conditional on the revision it read, so concurrent replacements never leave more live
/// activations than the limit and each frees exactly one.
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

/// The customer portal's "move to another device": frees the live activation so that the
/// key activates on the next device, counted as a replacement ([`decide::free_for_move`]).
/// Replies the key as it now is.
#[derive(Message)]
#[rtype(result = "KeyReply<LicenseKey>")]
pub struct MoveActivation(pub crate::domain::ids::ActivationId);

impl Handler<MoveActivation> for EntityActor<LicenseKeyEntity> {
    type Result = Handled<LicenseKey>;

    fn handle(&mut self, msg: MoveActivation, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let next = decide::free_for_move(&s.value, msg.0, now).map_err(refused)?;
            let reply = next.clone();
            store_and_reply(s, next, reply)
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
            let mut batch = Batch::new();
            batch.put(&next, Expect::Rev(s.rev))?;
            // Where the counters live apart from the key (PostgreSQL), the usage set is
            // written there; elsewhere the key carries it and this does nothing.
            if let Some(usage) = msg.0.usage {
                batch.set_bounded::<LicenseKey>(&next.id.key(), usage);
            }
            let state = Stored {
                rev: s.rev,
                value: Arc::new(next),
            };
            Ok(Outcome::commit(batch, state, reply))
        })
    }
}

/// `POST /v1/license-keys/{id}/rotate` (and the customer portal's): replies the key with its
/// new value, and the old one.
///
/// The write is a full `put`: the key's unique value (`LICENSE_KEY_VALUE`, how validation
/// finds it) is replaced in the same transaction on every engine, so from the reply on the
/// old value resolves to nothing. A published state (the fast path) is replaced before the
/// reply, and an in-memory directory entry of the old value only leads here, where
/// `WrongKey` answers it.
#[derive(Message)]
#[rtype(result = "KeyReply<Rotated>")]
pub struct RotateLicenseKey(pub RotateKey);

impl Handler<RotateLicenseKey> for EntityActor<LicenseKeyEntity> {
    type Result = Handled<Rotated>;

    fn handle(&mut self, msg: RotateLicenseKey, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let value = generate_key(msg.0.prefix.as_deref());
            let rotated = decide::rotate(&s.value, value, now).map_err(refused)?;
            let next = rotated.key.clone();
            store_and_reply(s, next, rotated)
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
#[path = "remote_tests.rs"]
pub(crate) mod remote_tests;
#[cfg(test)]
#[path = "actor_tests.rs"]
pub(crate) mod tests;
