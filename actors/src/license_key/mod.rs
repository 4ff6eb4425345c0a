//! The license key aggregate.

pub mod model;

use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use crate::domain::ids::OrganizationId;
pub use model::{generate_key, Activation, KeyStatus, LicenseKey};

pub const LICENSE_KEY_BY_CREATED: &str = "license_key_by_created";
pub const LICENSE_KEY_BY_BENEFIT: &str = "license_key_by_benefit";
/// `(organization, key)` → id: how validation finds a key.
pub const LICENSE_KEY_VALUE: &str = "license_key_value";

impl LicenseKey {
    pub fn value_key(org: OrganizationId, key: &str) -> UniqueKey {
        UniqueKey::new(LICENSE_KEY_VALUE, org.key(), key.as_bytes().to_vec())
    }
}

impl Record for LicenseKey {
    crate::record_v1!(LicenseKey, "license_key");
    const INDEXES: &'static [&'static str] = &[LICENSE_KEY_BY_CREATED, LICENSE_KEY_BY_BENEFIT];
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
            IndexEntry::new(LICENSE_KEY_BY_BENEFIT, self.benefit_id.key(), created),
        ]
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![LicenseKey::value_key(self.organization_id, &self.key)]
    }
}

/// The actor entity of this aggregate: its state is the stored snapshot with its revision.
pub enum LicenseKeyEntity {}

impl crate::entity::Entity for LicenseKeyEntity {
    type Id = crate::domain::ids::LicenseKeyId;
    type State = tollgate_storage::Stored<LicenseKey>;
    const NAME: &'static str = "license_key";

    fn load(
        store: &tollgate_storage::Store,
        id: Self::Id,
    ) -> Result<Option<Self::State>, tollgate_storage::StorageError> {
        store.get(&id.key())
    }

    fn insert(
        state: &Self::State,
        batch: &mut tollgate_storage::Batch,
    ) -> Result<(), tollgate_storage::StorageError> {
        batch
            .put(&state.value, tollgate_storage::Expect::Absent)
            .map(|_| ())
    }

    /// The aggregate is always the first write of its batches.
    fn on_commit(state: &mut Self::State, committed: &tollgate_storage::Committed) {
        if let Some(rev) = committed.revs.first() {
            state.rev = *rev;
        }
    }
}

/// Revokes a granted key (its subscription ended). Idempotent: a key that is already
/// revoked or disabled is left as it is. Replies with the key as it now is.
#[derive(actix::Message)]
#[rtype(result = "Result<LicenseKey, crate::error::ActorError>")]
pub struct RevokeLicenseKey;

impl actix::Handler<RevokeLicenseKey> for crate::entity::EntityActor<LicenseKeyEntity> {
    type Result =
        crate::entity::CommandReply<LicenseKeyEntity, LicenseKey, std::convert::Infallible>;

    fn handle(&mut self, _: RevokeLicenseKey, ctx: &mut actix::Context<Self>) -> Self::Result {
        self.execute(ctx, |s, now| {
            if s.value.status != KeyStatus::Granted {
                return Ok(crate::entity::Outcome::reply(s.value.clone()));
            }
            let mut next = s.value.clone();
            next.status = KeyStatus::Revoked;
            next.modified_at = Some(now);
            let mut batch = tollgate_storage::Batch::new();
            batch.put(&next, tollgate_storage::Expect::Rev(s.rev))?;
            let reply = next.clone();
            Ok(crate::entity::Outcome::commit(
                batch,
                tollgate_storage::Stored {
                    rev: s.rev,
                    value: next,
                },
                reply,
            ))
        })
    }
}
