//! The checkout actor's messages and their handlers: each decides through the rules of
//! `decide.rs` on the state the entity holds, and writes the checkout (with whatever the
//! caller's `attach` or `build` adds to the same transaction) conditional on its revision.

use actix::prelude::*;
use tollgate_storage::{Batch, Expect, Stored};

use super::model::{Attempt, Changes, Checkout, CheckoutError, ConfirmContext, Settlement};
use super::CheckoutEntity;
use crate::domain::ids::CustomerId;
use crate::entity::{CommandReply, EntityActor, Outcome};
use crate::error::ActorError;
use crate::tax::TaxQuote;

pub type CheckoutReply = Result<Checkout, ActorError<CheckoutError>>;

/// Reads the checkout (its status as seen now).
#[derive(Message)]
#[rtype(result = "CheckoutReply")]
pub struct GetCheckout;

#[derive(Message)]
#[rtype(result = "CheckoutReply")]
pub struct UpdateCheckout {
    pub changes: Changes,
    /// The tax quoted for the checkout as these changes leave it (see
    /// [`Checkout::tax_request`]); `None`: no tax.
    pub tax: Option<TaxQuote>,
}

/// Records the confirmed checkout's side effects: builds, from the confirmed checkout, the
/// writes that go into the same transaction (customer found or created, discount
/// redemption, customer session) and names the customer.
pub type Attach =
    Box<dyn FnMut(&Checkout) -> Result<(CustomerId, Batch), ActorError<CheckoutError>> + Send>;

#[derive(Message)]
#[rtype(result = "CheckoutReply")]
pub struct ConfirmCheckout {
    pub changes: Changes,
    pub confirmation_token: Option<String>,
    pub discount_redeemable: bool,
    pub price_archived: bool,
    /// The tax quoted for the checkout as it is confirmed; `None`: no tax.
    pub tax: Option<TaxQuote>,
    pub attach: Attach,
}

/// Builds the writes that settle a checkout, from the settled checkout.
pub type Build = Box<dyn FnMut(&Checkout) -> Result<Batch, ActorError<CheckoutError>> + Send>;

/// Settles a confirmed checkout; `build` adds the records of the outcome (order,
/// subscription, license keys; or undoing a discount redemption) to the same transaction.
#[derive(Message)]
#[rtype(result = "CheckoutReply")]
pub struct SettleCheckout {
    pub settlement: Settlement,
    /// The attempt the processor answered about (`Checkout::attempt` of the checkout the
    /// settler read before asking). A decline or an intent's progress for an attempt the
    /// checkout has moved on from is refused with `CheckoutError::Superseded`; a success
    /// is applied whatever the attempt: money was taken for this checkout.
    pub attempt: Attempt,
    pub build: Build,
}

/// Persists expiry if the checkout is open and past `expires_at`.
#[derive(Message)]
#[rtype(result = "CheckoutReply")]
pub struct ExpireCheckout;

fn domain(e: CheckoutError) -> ActorError<CheckoutError> {
    ActorError::Domain(e)
}

impl Handler<GetCheckout> for EntityActor<CheckoutEntity> {
    type Result = CommandReply<CheckoutEntity, Checkout, CheckoutError>;

    fn handle(&mut self, _: GetCheckout, ctx: &mut Context<Self>) -> Self::Result {
        self.read(ctx, |s, now| {
            let mut c = s.value.clone();
            c.status = c.effective_status(now);
            Ok(c)
        })
    }
}

impl Handler<UpdateCheckout> for EntityActor<CheckoutEntity> {
    type Result = CommandReply<CheckoutEntity, Checkout, CheckoutError>;

    fn handle(&mut self, msg: UpdateCheckout, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let next = s
                .value
                .update(msg.changes.clone(), now, msg.tax.as_ref())
                .map_err(domain)?;
            let mut batch = Batch::new();
            batch.put(&next, Expect::Rev(s.rev))?;
            let reply = next.clone();
            Ok(Outcome::commit(
                batch,
                Stored {
                    rev: s.rev,
                    value: next,
                },
                reply,
            ))
        })
    }
}

impl Handler<ConfirmCheckout> for EntityActor<CheckoutEntity> {
    type Result = CommandReply<CheckoutEntity, Checkout, CheckoutError>;

    fn handle(&mut self, mut msg: ConfirmCheckout, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let context = ConfirmContext {
                confirmation_token: msg.confirmation_token.as_deref(),
                discount_redeemable: msg.discount_redeemable,
                price_archived: msg.price_archived,
            };
            let confirmed = s
                .value
                .confirm(msg.changes.clone(), context, now, msg.tax.as_ref())
                .map_err(domain)?;
            let (customer, extra) = (msg.attach)(&confirmed)?;
            let next = confirmed.with_customer(customer);
            let mut batch = Batch::new();
            batch.put(&next, Expect::Rev(s.rev))?;
            batch.append(extra);
            let reply = next.clone();
            Ok(Outcome::commit(
                batch,
                Stored {
                    rev: s.rev,
                    value: next,
                },
                reply,
            ))
        })
    }
}

impl Handler<SettleCheckout> for EntityActor<CheckoutEntity> {
    type Result = CommandReply<CheckoutEntity, Checkout, CheckoutError>;

    fn handle(&mut self, mut msg: SettleCheckout, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| {
            let next = s
                .value
                .settle(&msg.settlement, &msg.attempt, now)
                .map_err(domain)?;
            let extra = (msg.build)(&next)?;
            let mut batch = Batch::new();
            batch.put(&next, Expect::Rev(s.rev))?;
            batch.append(extra);
            let reply = next.clone();
            Ok(Outcome::commit(
                batch,
                Stored {
                    rev: s.rev,
                    value: next,
                },
                reply,
            ))
        })
    }
}

impl Handler<ExpireCheckout> for EntityActor<CheckoutEntity> {
    type Result = CommandReply<CheckoutEntity, Checkout, CheckoutError>;

    fn handle(&mut self, _: ExpireCheckout, ctx: &mut Context<Self>) -> Self::Result {
        self.execute(ctx, move |s, now| match s.value.expire(now) {
            Some(next) => {
                let mut batch = Batch::new();
                batch.put(&next, Expect::Rev(s.rev))?;
                let reply = next.clone();
                Ok(Outcome::commit(
                    batch,
                    Stored {
                        rev: s.rev,
                        value: next,
                    },
                    reply,
                ))
            }
            None => Ok(Outcome::reply(s.value.clone())),
        })
    }
}

#[cfg(test)]
#[path = "actor_tests.rs"]
mod tests;
