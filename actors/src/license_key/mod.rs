//! The license key aggregate. Its files (the same roles in `checkout` and
//! `subscription`):
//!
//! * `mod.rs`: the stored record (collection, indexes, the key's unique value), the
//!   [`LicenseKeyEntity`] that runs it in an actor, and the re-exports; its tests (golden
//!   bytes) in `record_tests.rs`.
//! * `model.rs`: the state machine as types: states, commands, refusals.
//! * `decide.rs`: the pure rules that decide a command on a state, time passed in; its
//!   tests in `decide_tests.rs`.
//! * `actor.rs`: the messages and their handlers on the entity actor; its tests in
//!   `actor_tests.rs`, and over PostgreSQL in `remote_tests.rs`.
//! * `directory.rs`: the in-memory `(organization, key)` → id directory validation finds
//!   keys by.
//! * `live.rs`: plain validations answered without the mailbox, in batched mode.
//! * `shared.rs`: validations on a shared store (PostgreSQL), counted in the key's tally
//!   row without the actor; its tests in `shared_tests.rs`.
//!
//! Keys are created outside any actor (checkout completion writes them with the order);
//! every later change goes through the key's actor, so its counters are never written by two
//! parties. A write that bypasses the actor must be followed by `Registry::reload(id)`.

pub mod actor;
pub mod decide;
pub mod directory;
pub mod live;
pub mod model;
pub mod search;
pub mod shared;

use std::sync::Arc;

use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{
    Batch, Committed, Expect, IndexEntry, Record, StorageError, Store, Stored, UniqueKey,
};

use crate::domain::ids::{LicenseKeyId, OrganizationId};
use crate::entity::Entity;
pub use actor::{
    ActivateLicenseKey, DeactivateLicenseKey, GetLicenseKey, KeyReply, MoveActivation,
    RevokeLicenseKey, RotateLicenseKey, UpdateLicenseKey, ValidateLicenseKey,
};
pub use decide::live_activations;
pub use directory::KeyDirectory;
pub use model::{
    generate_key, ActivateKey, Activation, ActivationRef, DeactivateKey, ErrorKind, JsonObject,
    KeyChanges, KeyStatus, LicenseKey, LicenseKeyError, Replace, RotateKey, Rotated, ValidateKey,
    Validated, ERROR_CODES, REPLACEMENTS_PER_WINDOW, REPLACEMENT_WINDOW_HOURS, ROTATABLE,
};

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

/// A key as format version 1 stored it: without `paid_until`.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct LicenseKeyV1 {
    pub(crate) id: LicenseKeyId,
    pub(crate) organization_id: OrganizationId,
    pub(crate) customer_id: crate::domain::ids::CustomerId,
    pub(crate) benefit_id: crate::domain::ids::BenefitId,
    pub(crate) created_at: chrono::DateTime<chrono::Utc>,
    pub(crate) modified_at: Option<chrono::DateTime<chrono::Utc>>,
    pub(crate) key: String,
    pub(crate) status: KeyStatus,
    pub(crate) limit_activations: Option<i64>,
    pub(crate) usage: i64,
    pub(crate) limit_usage: Option<i64>,
    pub(crate) validations: i64,
    pub(crate) last_validated_at: Option<chrono::DateTime<chrono::Utc>>,
    pub(crate) expires_at: Option<chrono::DateTime<chrono::Utc>>,
    pub(crate) activations: Vec<Activation>,
    pub(crate) subscription_id: Option<crate::domain::ids::SubscriptionId>,
    pub(crate) order_id: Option<crate::domain::ids::OrderId>,
}

impl From<LicenseKeyV1> for LicenseKey {
    fn from(k: LicenseKeyV1) -> Self {
        LicenseKey {
            id: k.id,
            organization_id: k.organization_id,
            customer_id: k.customer_id,
            benefit_id: k.benefit_id,
            created_at: k.created_at,
            modified_at: k.modified_at,
            key: k.key,
            status: k.status,
            limit_activations: k.limit_activations,
            usage: k.usage,
            limit_usage: k.limit_usage,
            validations: k.validations,
            last_validated_at: k.last_validated_at,
            expires_at: k.expires_at,
            activations: k.activations,
            subscription_id: k.subscription_id,
            order_id: k.order_id,
            // Keys written before keys followed their subscription keep their own expiry
            // until the subscription's next paid period sets both.
            paid_until: None,
            allow_replacement: false,
            replacements: Vec::new(),
        }
    }
}

/// A key as format version 2 stored it: version 1 and `paid_until`, without
/// `allow_replacement` and `replacements` (bincode writes the nested version 1 fields
/// inline, so these are exactly version 2's bytes).
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct LicenseKeyV2 {
    pub(crate) v1: LicenseKeyV1,
    pub(crate) paid_until: Option<chrono::DateTime<chrono::Utc>>,
}

impl From<LicenseKeyV2> for LicenseKey {
    fn from(k: LicenseKeyV2) -> Self {
        LicenseKey {
            paid_until: k.paid_until,
            // Keys granted before replacement existed never replace (the benefit's
            // default), until the seller's benefit grants new ones.
            ..LicenseKey::from(k.v1)
        }
    }
}

impl Record for LicenseKey {
    const COLLECTION: &'static str = "license_key";
    const VERSION: u16 = 3;

    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        match version {
            1 => Ok(
                tollgate_storage::codec::decode::<LicenseKeyV1>(Self::COLLECTION, 1, payload)?
                    .into(),
            ),
            2 => Ok(
                tollgate_storage::codec::decode::<LicenseKeyV2>(Self::COLLECTION, 2, payload)?
                    .into(),
            ),
            3 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    /// Its changes are webhook events, except the validation counters (`usage`,
    /// `validations`, `last_validated_at`), which live in the key's counters' row.
    const FEED: bool = true;
    const INDEXES: &'static [&'static str] = &[
        LICENSE_KEY_BY_CREATED,
        LICENSE_KEY_BY_BENEFIT,
        LICENSE_KEY_BY_CUSTOMER,
        search::LICENSE_KEY_SEARCH,
    ];
    const UNIQUES: &'static [&'static str] = &[LICENSE_KEY_VALUE];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        let created = KeyBuf::new()
            .i64(self.created_at.timestamp_micros())
            .into_vec();
        let mut entries = vec![
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
            IndexEntry::new(
                LICENSE_KEY_BY_CUSTOMER,
                self.customer_id.key(),
                created.clone(),
            ),
        ];
        // What a seller types of the key (`search`): uncounted.
        entries.extend(search::key_terms(&self.key).iter().map(|term| {
            IndexEntry::uncounted(
                search::LICENSE_KEY_SEARCH,
                search::fragment_tenant(self.organization_id, term),
                created.clone(),
            )
        }));
        entries
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![LicenseKey::value_key(self.organization_id, &self.key)]
    }

    /// The counters live in a row of their own (PostgreSQL: a tally row, where nodes count
    /// validations without rewriting or conflicting over the key, issue 33; embedded: the
    /// tallies tree, where the actor writes back its counts without rewriting the key).
    const TALLIED: bool = true;

    fn tally(&self) -> (tollgate_storage::Tally, Option<i64>) {
        (
            // Storage's named counters: the usage is the bounded one (its limit below),
            // a validation is a hit.
            tollgate_storage::Tally {
                bounded: self.usage,
                hits: self.validations,
                last_hit_us: self.last_validated_at.map(|t| t.timestamp_micros()),
            },
            // A limit of 0 is none, as in Polar.
            self.limit_usage.filter(|&l| l != 0),
        )
    }

    fn set_tally(&mut self, tally: &tollgate_storage::Tally) {
        self.usage = tally.bounded;
        self.validations = tally.hits;
        self.last_validated_at = tally
            .last_hit_us
            .and_then(chrono::DateTime::<chrono::Utc>::from_timestamp_micros);
    }

    fn feed_digest(&self) -> Option<Vec<u8>> {
        let watched = (
            self.status,
            self.limit_activations,
            self.limit_usage,
            self.expires_at,
            &self.activations,
            &self.customer_id,
            // A rotation (`license_key.updated`).
            &self.key,
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

    /// The validation counters held in memory (batched mode), written to the key's
    /// counters' row at the stored revision: a few bytes, the key record untouched.
    fn write_back(state: &Self::State, batch: &mut Batch) -> Result<(), StorageError> {
        batch.write_tally(&*state.value, state.rev);
        Ok(())
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
