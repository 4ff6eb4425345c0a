//! The subscription aggregate. Its files (the same roles in `checkout` and
//! `license_key`):
//!
//! * `mod.rs`: the stored record (collection, the list orderings and their indexes, the
//!   renewal sweep's index), the [`SubscriptionEntity`] that runs it in an actor, and the
//!   re-exports; its tests (orderings, golden bytes) in `record_tests.rs`.
//! * `model.rs`: the state machine as types: states, commands, refusals.
//! * `decide.rs`: the pure rules that decide a command on a state, time passed in; its
//!   tests (and those of `renewal.rs`) in `decide_tests.rs`.
//! * `actor.rs`: the messages and their handlers on the entity actor; its tests in
//!   `actor_tests.rs`.
//! * `renewal.rs`: renewal billing (periods, charges, dunning, the renewal order).
//! * `recovery.rs`: the buyer's own charge of a past-due renewal ("pay now"); its tests
//!   in `recovery_tests.rs`.
//! * `follow.rs`: the outbox that tells the license keys a period was paid.

pub mod actor;
pub mod decide;
pub mod follow;
pub mod model;
pub mod plan_change;
pub mod recovery;
mod renewal;
mod v1;
mod v2;
mod v3;

use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

pub use actor::{
    BeginRecovery, ChangePlan, ClearRevocations, GetSubscription, PlanRenewal, Renew, Renewed,
    SetPaymentMethod, SettleRecovery, SubscriptionReply, UpdateSubscription,
};
pub use follow::KeysPaidUntil;
pub use model::{Change, Purchase, Subscription, SubscriptionError, SubscriptionStatus};
pub use plan_change::{
    change_order_id, prorate, ChangeCharge, PlanChange, PlanTarget, ProrationBehavior,
};
pub use recovery::{
    Confirmation, ConfirmationStatus, PayWith, PaymentStatus, RecoveryOutcome, MAX_BUYER_ATTEMPTS,
    PAYMENT_LOCK,
};
pub use renewal::{
    add_intervals, renewal_order_id, trial_reminder_lead, PaymentOutcome, Renewal, RenewalCharge,
    RenewalPlan, RenewalTerms, DUNNING_PERIOD, RENEWAL_RETRY_DELAY,
};

use crate::domain::product::RecurringInterval;

/// Started subscriptions per organization by `started_at` (the default list order).
pub const SUBSCRIPTION_BY_STARTED: &str = "subscription_by_started";
/// The other orderings of `GET /v1/subscriptions/`, per organization, started ones only.
pub const SUBSCRIPTION_BY_CUSTOMER: &str = "subscription_by_customer";
pub const SUBSCRIPTION_BY_STATUS: &str = "subscription_by_status";
pub const SUBSCRIPTION_BY_PERIOD_END: &str = "subscription_by_period_end";
/// Amount per month ascending, nulls last.
pub const SUBSCRIPTION_BY_AMOUNT: &str = "subscription_by_amount";
/// Amount per month descending, nulls still last (Polar's `nulls_last()`), read forwards.
pub const SUBSCRIPTION_BY_AMOUNT_DESC: &str = "subscription_by_amount_desc";
pub const SUBSCRIPTION_BY_PRODUCT: &str = "subscription_by_product";
pub const SUBSCRIPTION_BY_DISCOUNT: &str = "subscription_by_discount";
/// Started subscriptions of one customer, product or discount, by `started_at` (filters).
pub const SUBSCRIPTION_OF_CUSTOMER: &str = "subscription_of_customer";
pub const SUBSCRIPTION_OF_PRODUCT: &str = "subscription_of_product";
pub const SUBSCRIPTION_OF_DISCOUNT: &str = "subscription_of_discount";
/// Subscriptions with a period to renew or end, by when that is due: what the renewal
/// sweep walks (tenant: empty).
pub const SUBSCRIPTION_DUE: &str = "subscription_due";
/// Subscriptions with license keys still to revoke (tenant: empty).
pub const SUBSCRIPTION_REVOKING: &str = "subscription_revoking";

/// Names longer than this sort by their first characters only (ties break on start time).
const NAME_SORT_CHARS: usize = 200;

/// Polar's `SubscriptionSortProperty`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubscriptionSort {
    Customer,
    Status,
    StartedAt,
    CurrentPeriodEnd,
    Amount,
    Product,
    Discount,
}

impl SubscriptionSort {
    pub const ALL: &'static [(&'static str, SubscriptionSort)] = &[
        ("customer", SubscriptionSort::Customer),
        ("status", SubscriptionSort::Status),
        ("started_at", SubscriptionSort::StartedAt),
        ("current_period_end", SubscriptionSort::CurrentPeriodEnd),
        ("amount", SubscriptionSort::Amount),
        ("product", SubscriptionSort::Product),
        ("discount", SubscriptionSort::Discount),
    ];

    /// The index serving this order, and whether it is read backwards.
    pub fn index(self, descending: bool) -> (&'static str, bool) {
        match self {
            SubscriptionSort::Customer => (SUBSCRIPTION_BY_CUSTOMER, descending),
            SubscriptionSort::Status => (SUBSCRIPTION_BY_STATUS, descending),
            SubscriptionSort::StartedAt => (SUBSCRIPTION_BY_STARTED, descending),
            SubscriptionSort::CurrentPeriodEnd => (SUBSCRIPTION_BY_PERIOD_END, descending),
            SubscriptionSort::Amount if descending => (SUBSCRIPTION_BY_AMOUNT_DESC, false),
            SubscriptionSort::Amount => (SUBSCRIPTION_BY_AMOUNT, false),
            SubscriptionSort::Product => (SUBSCRIPTION_BY_PRODUCT, descending),
            SubscriptionSort::Discount => (SUBSCRIPTION_BY_DISCOUNT, descending),
        }
    }
}

fn name_key(name: &str) -> KeyBuf {
    let folded: String = name.to_lowercase().chars().take(NAME_SORT_CHARS).collect();
    KeyBuf::new().str(&folded)
}

impl Subscription {
    /// Polar's status order: incomplete < incomplete_expired < trialing < active <
    /// active and set to cancel < past_due < canceled < unpaid.
    pub fn status_rank(&self) -> u8 {
        match self.status {
            SubscriptionStatus::Incomplete => 1,
            SubscriptionStatus::IncompleteExpired => 2,
            SubscriptionStatus::Trialing => 3,
            SubscriptionStatus::Active if self.cancel_at_period_end => 5,
            SubscriptionStatus::Active => 4,
            SubscriptionStatus::PastDue => 6,
            SubscriptionStatus::Canceled => 7,
            SubscriptionStatus::Unpaid => 8,
        }
    }

    /// The amount per month, `None` for a free subscription: per period divided by the
    /// months a period spans (a yearly amount by 12), a weekly one times 52 / 12, a daily
    /// one times 365 / 12, in integer arithmetic as PostgreSQL divides integers.
    pub fn monthly_amount(&self) -> Option<i64> {
        let count = i64::from(self.recurring_interval_count.max(1));
        self.amount.map(|a| match self.recurring_interval {
            RecurringInterval::Month => a / count,
            RecurringInterval::Year => a / (12 * count),
            RecurringInterval::Week => a.saturating_mul(52) / (12 * count),
            RecurringInterval::Day => a.saturating_mul(365) / (12 * count),
        })
    }

    fn started_key(&self) -> KeyBuf {
        KeyBuf::new().i64(self.started_at.map_or(i64::MIN, |t| t.timestamp_micros()))
    }

    /// The sort key of this subscription in the index of `sort` read in direction
    /// `descending` (see [`SubscriptionSort::index`]); ties break on `started_at`.
    pub fn sort_key(&self, sort: SubscriptionSort, descending: bool) -> Vec<u8> {
        let then = |k: KeyBuf| {
            let mut v = k.into_vec();
            v.extend_from_slice(self.started_key().as_slice());
            v
        };
        match sort {
            SubscriptionSort::StartedAt => self.started_key().into_vec(),
            SubscriptionSort::Customer => then(name_key(&self.customer_email)),
            SubscriptionSort::Status => then(KeyBuf::new().u8(self.status_rank())),
            SubscriptionSort::CurrentPeriodEnd => {
                then(KeyBuf::new().opt_i64(self.current_period_end.map(|t| t.timestamp_micros())))
            }
            SubscriptionSort::Amount => match (descending, self.monthly_amount()) {
                (false, amount) => then(KeyBuf::new().opt_i64(amount)),
                (true, Some(a)) => KeyBuf::new()
                    .u8(0)
                    .desc(KeyBuf::new().i64(a).fixed(self.started_key().as_slice()))
                    .into_vec(),
                (true, None) => KeyBuf::new().u8(1).desc(self.started_key()).into_vec(),
            },
            SubscriptionSort::Product => then(name_key(&self.product_name)),
            SubscriptionSort::Discount => then(match &self.discount_name {
                Some(n) => KeyBuf::new().u8(0).fixed(name_key(n).as_slice()),
                None => KeyBuf::new().u8(1),
            }),
        }
    }
}

impl Record for Subscription {
    const COLLECTION: &'static str = "subscription";
    /// 2: interval counts, trials, plan changes (`v1.rs` decodes version 1); 3: seats
    /// (`v2.rs` decodes version 2); 4: the recovery of a declined renewal (`v3.rs` decodes
    /// version 3; earlier versions read with the retry they had).
    const VERSION: u16 = 4;

    fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
        match version {
            1 => {
                tollgate_storage::codec::decode::<v1::SubscriptionV1>(Self::COLLECTION, 1, payload)
                    .map(|s| Subscription::from(s).with_recovery_derived())
            }
            2 => {
                tollgate_storage::codec::decode::<v2::SubscriptionV2>(Self::COLLECTION, 2, payload)
                    .map(|s| Subscription::from(s).with_recovery_derived())
            }
            3 => {
                tollgate_storage::codec::decode::<v3::SubscriptionV3>(Self::COLLECTION, 3, payload)
                    .map(|s| Subscription::from(s).with_recovery_derived())
            }
            4 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    /// Its changes are webhook events, except the bookkeeping a customer never sees (the
    /// key revocations still to run, the saved payment method, and the `modified_at` such
    /// bookkeeping bumps).
    const FEED: bool = true;
    const INDEXES: &'static [&'static str] = &[
        SUBSCRIPTION_BY_STARTED,
        SUBSCRIPTION_BY_CUSTOMER,
        SUBSCRIPTION_BY_STATUS,
        SUBSCRIPTION_BY_PERIOD_END,
        SUBSCRIPTION_BY_AMOUNT,
        SUBSCRIPTION_BY_AMOUNT_DESC,
        SUBSCRIPTION_BY_PRODUCT,
        SUBSCRIPTION_BY_DISCOUNT,
        SUBSCRIPTION_OF_CUSTOMER,
        SUBSCRIPTION_OF_PRODUCT,
        SUBSCRIPTION_OF_DISCOUNT,
        SUBSCRIPTION_DUE,
        SUBSCRIPTION_REVOKING,
    ];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        let mut entries = Vec::new();
        // Polar lists started subscriptions only.
        if self.started_at.is_some() {
            let org = self.organization_id.key();
            for &(_, sort) in SubscriptionSort::ALL {
                for descending in [false, true] {
                    let (index, _) = sort.index(descending);
                    entries.push(IndexEntry::new(
                        index,
                        org.clone(),
                        self.sort_key(sort, descending),
                    ));
                }
            }
            let started = self.started_key().into_vec();
            entries.push(IndexEntry::new(
                SUBSCRIPTION_OF_CUSTOMER,
                self.customer_id.key(),
                started.clone(),
            ));
            entries.push(IndexEntry::new(
                SUBSCRIPTION_OF_PRODUCT,
                self.product_id.key(),
                started.clone(),
            ));
            if let Some(d) = self.discount_id {
                entries.push(IndexEntry::new(SUBSCRIPTION_OF_DISCOUNT, d.key(), started));
            }
        }
        if let Some(due) = self.due_at() {
            entries.push(IndexEntry::new(
                SUBSCRIPTION_DUE,
                Vec::new(),
                KeyBuf::new().i64(due.timestamp_micros()).into_vec(),
            ));
        }
        if !self.pending_revocations.is_empty() {
            entries.push(IndexEntry::new(
                SUBSCRIPTION_REVOKING,
                Vec::new(),
                KeyBuf::new()
                    .i64(
                        self.modified_at
                            .unwrap_or(self.created_at)
                            .timestamp_micros(),
                    )
                    .into_vec(),
            ));
        }
        entries
    }

    fn feed_digest(&self) -> Option<Vec<u8>> {
        let mut visible = self.clone();
        visible.pending_revocations.clear();
        visible.payment_token = None;
        // The retry schedule and the buyer's charges under way are bookkeeping too (a
        // retry declined again, a payment lock taken, are no event; `past_due_at` moves
        // with the status).
        visible.last_attempt_at = None;
        visible.next_payment_attempt_at = None;
        visible.buyer_attempts = 0;
        visible.payment_lock_until = None;
        visible.recovery_intent = None;
        // A write that changes nothing else (the bookkeeping above) is no event.
        visible.modified_at = None;
        tollgate_storage::codec::encode(&visible).ok()
    }
}

/// The actor entity of this aggregate: its state is the stored snapshot with its revision.
pub enum SubscriptionEntity {}

impl crate::entity::Entity for SubscriptionEntity {
    type Id = crate::domain::ids::SubscriptionId;
    type State = tollgate_storage::Stored<Subscription>;
    const NAME: &'static str = "subscription";
    const COLLECTION: Option<&'static str> =
        Some(<Subscription as tollgate_storage::Record>::COLLECTION);
    type Extension = ();

    async fn load(
        store: &tollgate_storage::Store,
        id: Self::Id,
    ) -> Result<Option<Self::State>, tollgate_storage::StorageError> {
        store.get(&id.key()).await
    }

    fn insert(
        state: &Self::State,
        batch: &mut tollgate_storage::Batch,
    ) -> Result<(), tollgate_storage::StorageError> {
        batch
            .put(&state.value, tollgate_storage::Expect::Absent)
            .map(|_| ())
    }

    fn revision(state: &Self::State) -> Option<u64> {
        Some(state.rev)
    }

    async fn hold(
        store: &tollgate_storage::Store,
        id: Self::Id,
    ) -> Result<
        Option<(Option<Self::State>, tollgate_storage::Holding)>,
        tollgate_storage::StorageError,
    > {
        store.hold::<Subscription>(&id.key()).await
    }

    async fn stored_revision(
        store: &tollgate_storage::Store,
        id: Self::Id,
    ) -> Result<Option<u64>, tollgate_storage::StorageError> {
        store.revision::<Subscription>(&id.key()).await
    }

    /// The aggregate is always the first write of its batches.
    fn on_commit(state: &mut Self::State, committed: &tollgate_storage::Committed) {
        if let Some(rev) = committed.revs.first() {
            state.rev = *rev;
        }
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
