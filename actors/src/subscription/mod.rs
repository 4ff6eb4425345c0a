//! The subscription aggregate.

pub mod model;

use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

pub use model::{Subscription, SubscriptionStatus};

/// Started subscriptions per organization by `started_at` (the default list order).
pub const SUBSCRIPTION_BY_STARTED: &str = "subscription_by_started";
/// Subscriptions with a period to renew or end, by `current_period_end`: what the renewal
/// sweep walks.
pub const SUBSCRIPTION_DUE: &str = "subscription_due";

impl Record for Subscription {
    crate::record_v1!(Subscription, "subscription");
    const INDEXES: &'static [&'static str] = &[SUBSCRIPTION_BY_STARTED, SUBSCRIPTION_DUE];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        let mut entries = Vec::new();
        if let Some(started) = self.started_at {
            entries.push(IndexEntry::new(
                SUBSCRIPTION_BY_STARTED,
                self.organization_id.key(),
                KeyBuf::new().i64(started.timestamp_micros()).into_vec(),
            ));
        }
        let renewing = matches!(
            self.status,
            SubscriptionStatus::Active | SubscriptionStatus::Trialing | SubscriptionStatus::PastDue
        );
        if let (true, Some(end)) = (renewing, self.current_period_end) {
            entries.push(IndexEntry::new(
                SUBSCRIPTION_DUE,
                Vec::new(),
                KeyBuf::new().i64(end.timestamp_micros()).into_vec(),
            ));
        }
        entries
    }
}

/// The actor entity of this aggregate: its state is the stored snapshot with its revision.
pub enum SubscriptionEntity {}

impl crate::entity::Entity for SubscriptionEntity {
    type Id = crate::domain::ids::SubscriptionId;
    type State = tollgate_storage::Stored<Subscription>;
    const NAME: &'static str = "subscription";

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
