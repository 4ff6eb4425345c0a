//! The checkout session aggregate: its pure model (`model.rs`: the state machine;
//! `amounts.rs`: amounts, prices and validation), its stored form and indexes, and the
//! actor shell that applies one command at a time.

mod amounts;
pub mod model;
mod order;

use std::sync::Arc;

use actix::prelude::*;
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{
    Batch, Committed, Expect, IndexEntry, Record, StorageError, Store, Stored, UniqueKey,
};

use crate::domain::ids::{CheckoutId, CustomerId, SubscriptionId};
use crate::entity::{CommandReply, Entity, EntityActor, Outcome};
use crate::error::ActorError;
use crate::tax::TaxCalculator;
pub use model::{
    AppliedDiscount, Attempt, Changes, Checkout, CheckoutError, CheckoutStatus, ConfirmContext,
    Issue, NewCheckout,
};

pub const CHECKOUT_BY_CREATED: &str = "checkout_by_created";
pub const CHECKOUT_BY_EXPIRES: &str = "checkout_by_expires";
pub const CHECKOUT_PRODUCT_BY_CREATED: &str = "checkout_product_by_created";
pub const CHECKOUT_PRODUCT_BY_EXPIRES: &str = "checkout_product_by_expires";
/// Open checkouts by expiry time: what the expiry sweep walks.
pub const CHECKOUT_OPEN_BY_EXPIRY: &str = "checkout_open_by_expiry";
/// Confirmed checkouts whose payment is not settled: what recovery completes on start-up.
pub const CHECKOUT_CONFIRMED: &str = "checkout_confirmed";
pub const CHECKOUT_SECRET: &str = "checkout_secret";

fn time(t: chrono::DateTime<chrono::Utc>) -> Vec<u8> {
    KeyBuf::new().i64(t.timestamp_micros()).into_vec()
}

impl Checkout {
    pub fn secret_key(secret: &str) -> UniqueKey {
        UniqueKey::new(CHECKOUT_SECRET, Vec::new(), secret.as_bytes().to_vec())
    }
}

impl Record for Checkout {
    crate::record_v1!(Checkout, "checkout");
    /// Its changes are webhook events.
    const FEED: bool = true;
    const INDEXES: &'static [&'static str] = &[
        CHECKOUT_BY_CREATED,
        CHECKOUT_BY_EXPIRES,
        CHECKOUT_PRODUCT_BY_CREATED,
        CHECKOUT_PRODUCT_BY_EXPIRES,
        CHECKOUT_OPEN_BY_EXPIRY,
        CHECKOUT_CONFIRMED,
    ];
    const UNIQUES: &'static [&'static str] = &[CHECKOUT_SECRET];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        let org = self.organization_id.key();
        let product = self.product_id.key();
        let mut entries = vec![
            IndexEntry::new(CHECKOUT_BY_CREATED, org.clone(), time(self.created_at)),
            IndexEntry::new(CHECKOUT_BY_EXPIRES, org, time(self.expires_at)),
            IndexEntry::new(
                CHECKOUT_PRODUCT_BY_CREATED,
                product.clone(),
                time(self.created_at),
            ),
            IndexEntry::new(CHECKOUT_PRODUCT_BY_EXPIRES, product, time(self.expires_at)),
        ];
        match self.status {
            CheckoutStatus::Open => entries.push(IndexEntry::new(
                CHECKOUT_OPEN_BY_EXPIRY,
                Vec::new(),
                time(self.expires_at),
            )),
            CheckoutStatus::Confirmed => entries.push(IndexEntry::new(
                CHECKOUT_CONFIRMED,
                Vec::new(),
                time(self.created_at),
            )),
            _ => {}
        }
        entries
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![Checkout::secret_key(&self.client_secret)]
    }
}

/// The checkout actor's entity: its state is the stored snapshot with its revision.
pub enum CheckoutEntity {}

impl Entity for CheckoutEntity {
    type Id = CheckoutId;
    type State = Stored<Checkout>;
    const NAME: &'static str = "checkout";
    const COLLECTION: Option<&'static str> =
        Some(<Checkout as tollgate_storage::Record>::COLLECTION);
    type Extension = ();

    async fn load(store: &Store, id: CheckoutId) -> Result<Option<Self::State>, StorageError> {
        store.get(&id.key()).await
    }

    fn insert(state: &Self::State, batch: &mut Batch) -> Result<(), StorageError> {
        batch.put(&state.value, Expect::Absent).map(|_| ())
    }

    fn revision(state: &Self::State) -> Option<u64> {
        Some(state.rev)
    }

    async fn hold(
        store: &Store,
        id: CheckoutId,
    ) -> Result<Option<(Option<Self::State>, tollgate_storage::Holding)>, StorageError> {
        store.hold::<Checkout>(&id.key()).await
    }

    async fn stored_revision(store: &Store, id: CheckoutId) -> Result<Option<u64>, StorageError> {
        store.revision::<Checkout>(&id.key()).await
    }

    /// The checkout is always the first write of its batches.
    fn on_commit(state: &mut Self::State, committed: &Committed) {
        if let Some(rev) = committed.revs.first() {
            state.rev = *rev;
        }
    }
}

pub type CheckoutReply = Result<Checkout, ActorError<CheckoutError>>;

/// Reads the checkout (its status as seen now).
#[derive(Message)]
#[rtype(result = "CheckoutReply")]
pub struct GetCheckout;

#[derive(Message)]
#[rtype(result = "CheckoutReply")]
pub struct UpdateCheckout {
    pub changes: Changes,
    pub tax: Arc<dyn TaxCalculator>,
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
    pub tax: Arc<dyn TaxCalculator>,
    pub attach: Attach,
}

/// How a confirmed checkout's payment ended.
#[derive(Debug, Clone)]
pub enum Settlement {
    Succeeded {
        intent: Option<String>,
        subscription: Option<SubscriptionId>,
    },
    /// Declined while confirming: the checkout is open again.
    Reopen,
    /// The payment is under way: stays confirmed, with the intent recorded.
    AwaitPayment {
        intent: String,
        status: String,
        client_secret: Option<String>,
    },
    Failed,
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
            let current = match &msg.settlement {
                Settlement::Succeeded { .. } => true,
                Settlement::AwaitPayment { intent, .. } => {
                    s.value.is_attempt(&msg.attempt)
                        || s.value.pending_intent() == Some(intent.as_str())
                }
                Settlement::Reopen | Settlement::Failed => s.value.is_attempt(&msg.attempt),
            };
            if !current && s.value.status == CheckoutStatus::Confirmed {
                return Err(domain(CheckoutError::Superseded));
            }
            let next = match &msg.settlement {
                Settlement::Succeeded {
                    intent,
                    subscription,
                } => s.value.succeed(intent.as_deref(), *subscription, now),
                Settlement::Reopen => s.value.reopen(now),
                Settlement::AwaitPayment {
                    intent,
                    status,
                    client_secret,
                } => s
                    .value
                    .await_payment(intent, status, client_secret.as_deref(), now),
                Settlement::Failed => s.value.fail(now),
            }
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
mod actor_tests;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::domain::discount::{DiscountDuration, DiscountKind};
    use crate::domain::ids::{DiscountId, OrganizationId, PriceId, ProductId};
    use crate::domain::product::{Price, PriceKind};
    use crate::golden::{address, at, custom_field_data, hex, metadata, tax_id, uuid};

    /// Every optional field set: a confirmed checkout of a custom price with all its bounds,
    /// a repeating percentage discount, a resolved customer with address and tax id, a
    /// pending payment intent, and metadata and custom field data of every value kind.
    fn full_checkout() -> Checkout {
        Checkout {
            id: CheckoutId(uuid(1)),
            organization_id: OrganizationId(uuid(2)),
            created_at: at(0),
            modified_at: Some(at(60)),
            status: CheckoutStatus::Confirmed,
            client_secret: "polar_c_secret".into(),
            expires_at: at(3600),
            success_url: Some("https://shop.test/done/{CHECKOUT_ID}".into()),
            embed_origin: Some("https://shop.test".into()),
            product_id: ProductId(uuid(3)),
            price: Price {
                id: PriceId(uuid(4)),
                created_at: at(0),
                modified_at: Some(at(30)),
                is_archived: true,
                kind: PriceKind::OneTimeCustom {
                    currency: "usd".into(),
                    minimum_amount: Some(500),
                    maximum_amount: Some(9000),
                    preset_amount: Some(1500),
                },
            },
            amount: Some(1500),
            currency: Some("usd".into()),
            tax_amount: Some(300),
            discount: Some(AppliedDiscount {
                id: DiscountId(uuid(5)),
                name: "Launch".into(),
                code: Some("LAUNCH".into()),
                kind: DiscountKind::Percentage { basis_points: 2500 },
                duration: DiscountDuration::Repeating { months: 3 },
            }),
            allow_discount_codes: true,
            customer_id: Some(CustomerId(uuid(6))),
            customer_name: Some("Jane".into()),
            customer_email: Some("jane@example.com".into()),
            customer_ip_address: Some("192.0.2.1".into()),
            customer_billing_address: Some(address()),
            customer_tax_id: Some(tax_id()),
            customer_metadata: metadata(),
            metadata: metadata(),
            custom_field_data: custom_field_data(),
            payment_processor_metadata: BTreeMap::from([
                ("intent_id".to_string(), "pi_1".to_string()),
                ("intent_status".to_string(), "processing".to_string()),
            ]),
            subscription_id: Some(SubscriptionId(uuid(7))),
            confirmation_token: Some("tok_visa".into()),
            customer_id_before_confirm: Some(CustomerId(uuid(8))),
        }
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let c = full_checkout();
        assert_eq!((Checkout::COLLECTION, Checkout::VERSION), ("checkout", 1));
        let bytes = c.encode().unwrap_or_default();
        assert_eq!(Checkout::decode(1, &bytes).ok(), Some(c));
        assert_eq!(hex(&bytes), GOLDEN_V1, "checkout format v1 changed");
    }

    const GOLDEN_V1: &str = "\
        1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30\
        315430303a30303a30305a0114313937302d30312d30315430303a30313a30305a020e706f6c61725f635f73\
        656372657414313937302d30312d30315430313a30303a30305a012468747470733a2f2f73686f702e746573\
        742f646f6e652f7b434845434b4f55545f49447d011168747470733a2f2f73686f702e746573741000000000\
        000000000000000000000003100000000000000000000000000000000414313937302d30312d30315430303a\
        30303a30305a0114313937302d30312d30315430303a30303a33305a01030375736401fbe80301fb504601fb\
        b80b01fbb80b010375736401fb5802011000000000000000000000000000000005064c61756e636801064c41\
        554e434801fb881302060101100000000000000000000000000000000601044a616e6501106a616e65406578\
        616d706c652e636f6d01093139322e302e322e3101010931204d61696e205374010541707420320107483258\
        2031593401084d6f6e747265616c010543412d514302434101093132333435363738320a0304706c616e0003\
        70726f057365617473010505747269616c02010304706c616e000370726f057365617473010505747269616c\
        020105056167726565030004626f726e0414323032342d30352d30315430303a30303a30305a05636f756e74\
        020e05656d70747900046e6f7465010268690209696e74656e745f69640470695f310d696e74656e745f7374\
        617475730a70726f63657373696e670110000000000000000000000000000000070108746f6b5f7669736101\
        1000000000000000000000000000000008";
}
