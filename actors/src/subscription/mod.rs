//! The subscription aggregate: its pure model (`model.rs`: the state machine;
//! `renewal.rs`: periods, renewal charges and dunning), its stored form and indexes, and
//! the actor shell that applies one command at a time.

pub mod actor;
pub mod model;
mod renewal;

use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

pub use actor::{
    ClearRevocations, GetSubscription, PlanRenewal, Renew, Renewed, SubscriptionReply,
    UpdateSubscription,
};
pub use model::{
    add_intervals, renewal_order_id, Change, PaymentOutcome, Purchase, Renewal, RenewalCharge,
    RenewalPlan, RenewalTerms, Subscription, SubscriptionError, SubscriptionStatus,
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

    /// The amount per month (a yearly amount divided by 12, in integer arithmetic as
    /// PostgreSQL divides integers), `None` for a free subscription.
    pub fn monthly_amount(&self) -> Option<i64> {
        self.amount.map(|a| match self.recurring_interval {
            RecurringInterval::Month => a,
            RecurringInterval::Year => a / 12,
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
    crate::record_v1!(Subscription, "subscription");
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
mod tests {
    use super::*;
    use crate::domain::custom_field::CustomFieldData;
    use crate::domain::ids::{CustomerId, OrganizationId, PriceId, ProductId, SubscriptionId};
    use crate::domain::metadata::Metadata;
    use crate::domain::product::{Price, PriceKind};
    use chrono::{Duration, TimeZone, Utc};

    fn sub(amount: Option<i64>, interval: RecurringInterval) -> Subscription {
        let t0 = Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
        let kind = match amount {
            Some(amount) => PriceKind::RecurringFixed {
                interval,
                currency: "usd".into(),
                amount,
            },
            None => PriceKind::RecurringFree { interval },
        };
        let p = Purchase {
            organization_id: OrganizationId::new(),
            customer_id: CustomerId::new(),
            customer_email: "a@b.co".into(),
            product_id: ProductId::new(),
            product_name: "P".into(),
            price: Price {
                id: PriceId::new(),
                created_at: t0,
                modified_at: None,
                is_archived: false,
                kind,
            },
            amount: None,
            discount: None,
            checkout_id: None,
            metadata: Metadata::default(),
            custom_field_data: CustomFieldData::default(),
            payment_token: None,
            license_key_ids: Vec::new(),
        };
        Subscription::new_from_purchase(SubscriptionId::new(), p, t0).unwrap()
    }

    fn sorted(subs: &[Subscription], sort: SubscriptionSort, descending: bool) -> Vec<usize> {
        let (_, backwards) = sort.index(descending);
        let mut keyed: Vec<(Vec<u8>, usize)> = subs
            .iter()
            .enumerate()
            .map(|(i, s)| (s.sort_key(sort, descending), i))
            .collect();
        keyed.sort();
        if backwards {
            keyed.reverse();
        }
        keyed.into_iter().map(|(_, i)| i).collect()
    }

    #[test]
    fn amount_sorts_per_month_with_nulls_last_both_ways() {
        let subs = [
            sub(Some(1000), RecurringInterval::Month),
            sub(None, RecurringInterval::Month),
            sub(Some(6000), RecurringInterval::Year), // 500 per month
            sub(Some(2000), RecurringInterval::Month),
        ];
        assert_eq!(sorted(&subs, SubscriptionSort::Amount, false), [2, 0, 3, 1]);
        assert_eq!(sorted(&subs, SubscriptionSort::Amount, true), [3, 0, 2, 1]);
    }

    #[test]
    fn status_sorts_in_polar_order() {
        let active = sub(Some(1), RecurringInterval::Month);
        let mut canceling = active.clone();
        canceling.cancel_at_period_end = true;
        let mut past_due = active.clone();
        past_due.status = SubscriptionStatus::PastDue;
        let mut canceled = active.clone();
        canceled.status = SubscriptionStatus::Canceled;
        let subs = [canceled, past_due, canceling, active];
        assert_eq!(sorted(&subs, SubscriptionSort::Status, false), [3, 2, 1, 0]);
        assert_eq!(sorted(&subs, SubscriptionSort::Status, true), [0, 1, 2, 3]);
    }

    #[test]
    fn only_started_subscriptions_are_listed_and_only_live_ones_are_due() {
        let s = sub(Some(1), RecurringInterval::Month);
        let names: Vec<&str> = s.index_entries().iter().map(|e| e.index).collect();
        assert!(names.contains(&SUBSCRIPTION_BY_STARTED));
        assert!(names.contains(&SUBSCRIPTION_DUE));
        assert!(!names.contains(&SUBSCRIPTION_REVOKING));
        assert!(!names.contains(&SUBSCRIPTION_OF_DISCOUNT));

        let mut incomplete = s.clone();
        incomplete.started_at = None;
        incomplete.status = SubscriptionStatus::Incomplete;
        assert!(incomplete.index_entries().is_empty());

        let mut revoked = s.clone();
        revoked.license_key_ids = vec![crate::domain::ids::LicenseKeyId::new()];
        let revoked = revoked
            .revoke(None, None, s.created_at + Duration::days(1))
            .unwrap();
        let names: Vec<&str> = revoked.index_entries().iter().map(|e| e.index).collect();
        assert!(!names.contains(&SUBSCRIPTION_DUE));
        assert!(names.contains(&SUBSCRIPTION_REVOKING));
        assert!(names.contains(&SUBSCRIPTION_BY_STARTED));
    }

    /// Every optional field set, a past-due yearly subscription set to cancel, keys granted
    /// and still to revoke, and metadata and custom field data of every value kind.
    fn full_subscription() -> Subscription {
        use crate::domain::ids::{CheckoutId, DiscountId, LicenseKeyId};
        use crate::golden::{at, custom_field_data, metadata, uuid};
        Subscription {
            id: SubscriptionId(uuid(1)),
            organization_id: OrganizationId(uuid(2)),
            created_at: at(0),
            modified_at: Some(at(60)),
            amount: Some(1500),
            currency: Some("usd".into()),
            recurring_interval: RecurringInterval::Year,
            status: SubscriptionStatus::PastDue,
            current_period_start: at(120),
            current_period_end: Some(at(180)),
            cancel_at_period_end: true,
            canceled_at: Some(at(240)),
            started_at: Some(at(300)),
            ends_at: Some(at(360)),
            ended_at: Some(at(420)),
            customer_id: CustomerId(uuid(3)),
            product_id: ProductId(uuid(4)),
            price_id: PriceId(uuid(5)),
            discount_id: Some(DiscountId(uuid(6))),
            checkout_id: Some(CheckoutId(uuid(7))),
            metadata: metadata(),
            custom_field_data: custom_field_data(),
            customer_cancellation_reason: Some("too_expensive".into()),
            customer_cancellation_comment: Some("Later".into()),
            license_key_ids: vec![LicenseKeyId(uuid(8)), LicenseKeyId(uuid(9))],
            pending_revocations: vec![LicenseKeyId(uuid(9))],
            cycles: 3,
            payment_token: Some("tok_visa".into()),
            customer_email: "jane@example.com".into(),
            product_name: "Pro".into(),
            discount_name: Some("Launch".into()),
        }
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let s = full_subscription();
        assert_eq!(
            (Subscription::COLLECTION, Subscription::VERSION),
            ("subscription", 1)
        );
        let bytes = s.encode().unwrap_or_default();
        assert_eq!(Subscription::decode(1, &bytes).ok(), Some(s));
        assert_eq!(
            crate::golden::hex(&bytes),
            GOLDEN_V1,
            "subscription format v1 changed"
        );
    }

    const GOLDEN_V1: &str = "\
        1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30\
        315430303a30303a30305a0114313937302d30312d30315430303a30313a30305a01fbb80b01037573640104\
        14313937302d30312d30315430303a30323a30305a0114313937302d30312d30315430303a30333a30305a01\
        0114313937302d30312d30315430303a30343a30305a0114313937302d30312d30315430303a30353a30305a\
        0114313937302d30312d30315430303a30363a30305a0114313937302d30312d30315430303a30373a30305a\
        1000000000000000000000000000000003100000000000000000000000000000000410000000000000000000\
        0000000000000501100000000000000000000000000000000601100000000000000000000000000000000703\
        04706c616e000370726f057365617473010505747269616c020105056167726565030004626f726e04143230\
        32342d30352d30315430303a30303a30305a05636f756e74020e05656d70747900046e6f746501026869010d\
        746f6f5f657870656e7369766501054c61746572021000000000000000000000000000000008100000000000\
        0000000000000000000009011000000000000000000000000000000009030108746f6b5f76697361106a616e\
        65406578616d706c652e636f6d0350726f01064c61756e6368";
}
