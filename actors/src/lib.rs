//! `tollgate-actors`: the actor runtime the aggregates (checkout, subscription, license key)
//! run on, plus the typed ids and the clock that the domain uses. No HTTP types here.
//!
//! # Design
//!
//! One actor per aggregate instance ([`EntityActor<E>`]), generic over an [`Entity`] that
//! says how to load and insert the aggregate's snapshot. A [`Registry<E>`] per aggregate type
//! finds or spawns entities by id, spreads them over one arbiter per core, bounds their
//! mailboxes, times out every send, retries a message once when its entity was passivated or
//! died, and evicts idle entities. Entity handlers call the aggregate's pure `decide` through
//! [`EntityActor::execute`], which commits, swaps the state and replies only once the write
//! is durable, without holding the mailbox during the flush.
//!
//! # Layout
//!
//! The modules import each other in one direction only: `ids`, `clock`, `error` and
//! `mailbox` at the bottom; `domain` (the plain records) on `ids`; `tax` (the tax request
//! and quote the rules take as data) on `domain`; `entity` (the shell, and
//! in `entity::shared` what it shares with the registry) on those; `registry` on `entity`;
//! the aggregates `checkout`, `subscription` (which reads checkouts) and `license_key` on
//! `domain` and `entity`, never on `registry`. Every aggregate has the same files: `mod.rs`
//! (the stored record and its entity), `model.rs` (the state machine's types), `decide.rs`
//! (the pure rules), `actor.rs` (the messages and their handlers), and its own extras.
//!
//! # Plugging in an aggregate
//!
//! ```ignore
//! pub enum CheckoutEntity {}
//!
//! impl Entity for CheckoutEntity {
//!     type Id = CheckoutId;
//!     type State = Stored<CheckoutSnapshot>; // snapshot + revision
//!     type Extension = ();
//!     const NAME: &'static str = "checkout";
//!     async fn load(store: &Store, id: CheckoutId) -> Result<Option<Self::State>, StorageError> {
//!         store.get(&id.key()).await
//!     }
//!     fn insert(state: &Self::State, batch: &mut Batch) -> Result<(), StorageError> {
//!         batch.put(&state.value, Expect::Absent).map(|_| ())
//!     }
//!     fn on_commit(state: &mut Self::State, committed: &Committed) {
//!         state.rev = committed.revs.first().copied().unwrap_or(state.rev);
//!     }
//! }
//!
//! #[derive(Message)]
//! #[rtype(result = "Result<CheckoutView, ActorError<CheckoutError>>")]
//! pub struct Update(pub UpdateCheckout);
//!
//! impl Handler<Update> for EntityActor<CheckoutEntity> {
//!     type Result = CommandReply<CheckoutEntity, CheckoutView, CheckoutError>;
//!     fn handle(&mut self, Update(cmd): Update, ctx: &mut Context<Self>) -> Self::Result {
//!         self.execute(ctx, |s, now| {
//!             let next = decide::update(&s.value, cmd, now).map_err(ActorError::Domain)?;
//!             let mut batch = Batch::new();
//!             batch.put(&next, Expect::Rev(s.rev))?;
//!             let view = CheckoutView::from(&next);
//!             Ok(Outcome::commit(batch, Stored { rev: s.rev, value: next }, view))
//!         })
//!     }
//! }
//!
//! // HTTP handler (in `tollgate`):
//! async fn update(reg: web::Data<Registry<CheckoutEntity>>, id: web::Path<CheckoutId>,
//!                 body: web::Json<UpdateCheckout>) -> Result<HttpResponse, ApiError> {
//!     let view = reg.call(id.into_inner(), Update(body.into_inner())).await?;
//!     Ok(HttpResponse::Ok().json(view))
//! }
//! ```

pub mod checkout;
pub mod clock;
pub mod domain;
pub mod entity;
pub mod error;
pub mod ids;
pub mod license_key;
mod mailbox;
pub mod registry;
pub mod subscription;
pub mod tax;

pub use clock::{Clock, ManualClock, SharedClock, SystemClock};
pub use entity::{CommandReply, Entity, EntityActor, Outcome, Passivate, Reload, Reply};
pub use error::{ActorError, Unavailable};
#[doc(hidden)]
pub use mailbox::Mail;
pub use registry::{Registry, RegistryConfig, RegistryStats};

#[cfg(test)]
mod golden;
#[cfg(test)]
mod registry_tests;
#[cfg(test)]
mod testkit;
