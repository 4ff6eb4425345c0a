//! The checkout session aggregate. Its files (the same roles in `subscription` and
//! `license_key`):
//!
//! * `mod.rs`: the stored record (collection, indexes, unique key), the
//!   [`CheckoutEntity`] that runs it in an actor, and the re-exports; its tests (golden
//!   bytes) in `record_tests.rs`.
//! * `model.rs`: the state machine as types: states, commands, refusals.
//! * `decide.rs`: the pure rules that decide a command on a state, time passed in; its
//!   tests (and those of `amounts.rs`) in `decide_tests.rs`.
//! * `actor.rs`: the messages and their handlers on the entity actor; its tests in
//!   `actor_tests.rs`.
//! * `amounts.rs`: what a checkout costs and requires (price, amounts, tax, validation).
//! * `order.rs`: the first order of a settled checkout.
//! * `command.rs`: the commands the use cases take (create, change), parsed by the adapters.
//! * `v1.rs` to `v4.rs`: the record's earlier format versions, decoded into the current one.

pub mod actor;
mod amounts;
pub mod command;
pub mod decide;
pub mod model;
mod order;
mod v1;
mod v2;
mod v3;
mod v4;
mod v5;

use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{
    Batch, Committed, Expect, IndexEntry, Record, StorageError, Store, Stored, UniqueKey,
};

use crate::domain::ids::CheckoutId;
use crate::entity::Entity;

pub use actor::{
    Attach, Build, CheckoutReply, ConfirmCheckout, ExpireCheckout, GetCheckout, SettleCheckout,
    UpdateCheckout,
};
pub use amounts::DEFAULT_CUSTOM_AMOUNT;
pub use command::{ChangeCheckout, CheckoutTarget, CreateCheckout, CustomFieldInput};
pub use model::{
    AppliedDiscount, Attempt, BillingAddressFields, Changes, Checkout, CheckoutError,
    CheckoutStatus, CheckoutTerms, ConfirmContext, FieldMode, Issue, NewCheckout, Settlement,
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
    const COLLECTION: &'static str = "checkout";
    /// 2: the list of products and the 2026 fields (`v1.rs` decodes version 1); 3: trials
    /// (`v2.rs` decodes version 2).
    /// 4: seats (`v3.rs` decodes version 3); 5: the seller's bounds on the seats (`v4.rs`
    /// decodes version 4); 6: business buyers and the tax breakdown (`v5.rs` decodes
    /// version 5); 7: `locale` (version 6 is version 7 without it at the end, read with
    /// none).
    const VERSION: u16 = 7;

    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        match version {
            1 => tollgate_storage::codec::decode::<v1::CheckoutV1>(Self::COLLECTION, 1, payload)
                .map(Checkout::from),
            2 => tollgate_storage::codec::decode::<v2::CheckoutV2>(Self::COLLECTION, 2, payload)
                .map(Checkout::from),
            3 => tollgate_storage::codec::decode::<v3::CheckoutV3>(Self::COLLECTION, 3, payload)
                .map(Into::into),
            4 => tollgate_storage::codec::decode::<v4::CheckoutV4>(Self::COLLECTION, 4, payload)
                .map(Into::into),
            5 => tollgate_storage::codec::decode::<v5::CheckoutV5>(Self::COLLECTION, 5, payload)
                .map(Into::into),
            // bincode is positional: a version-6 record is a version-7 one without the
            // `locale` at the end, so it reads with `None` (one 0 byte) appended.
            6 => {
                let mut bytes = payload.to_vec();
                bytes.extend(tollgate_storage::codec::encode(&None::<String>)?);
                tollgate_storage::codec::decode(Self::COLLECTION, 6, &bytes)
            }
            7 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

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

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
