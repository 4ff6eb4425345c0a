//! The dashboard's day counters ([`crate::domain::stats`]): how they are kept and read.
//!
//! - Orders, revenue and subscription starts/ends are projected from the store's change
//!   feed by the webhook fan-out ([`Projection`]), in the transaction that consumes the
//!   entries: every acknowledged order is counted exactly once, `kill -9` included.
//! - Validations are counted in memory on the hot path (one map lookup and an atomic add)
//!   and written at most [`VALIDATION_FLUSH`] later and at shutdown ([`ValidationCounters`]);
//!   `kill -9` can lose the last second's counts of the chart, never a key's own counters.
//!
//! Charts read one record per day of their range, never orders or keys.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use dashmap::DashMap;
use tollgate_storage::{Batch, Change, Expect, StorageError, Store};

use crate::domain::currency::Currency;
use crate::domain::ids::OrganizationId;
use crate::domain::order::Order;
use crate::domain::stats::{day_number, SalesDay, SalesTotals, ValidationDay};
use tollgate_actors::subscription::model::Subscription;

/// How often validation counts are written.
pub const VALIDATION_FLUSH: Duration = Duration::from_secs(1);

// ---------------------------------------------------------------------------------------
// Sales: projected from the change feed
// ---------------------------------------------------------------------------------------

/// The counter changes of one pass over the feed.
#[derive(Debug, Default)]
pub struct Projection {
    days: HashMap<(OrganizationId, i64), SalesDelta>,
    active: HashMap<OrganizationId, i64>,
}

#[derive(Debug, Default)]
struct SalesDelta {
    orders: u64,
    revenue: HashMap<String, i64>,
    started: u64,
    ended: u64,
}

impl Projection {
    /// Counts one feed entry; `now`: when a subscription's change is attributed.
    pub fn add(&mut self, change: &Change, now: DateTime<Utc>) -> Result<(), StorageError> {
        if change.is::<Order>() {
            // An order counts on the day it was created, once: when it is written paid (a
            // `pending` renewal counts when its retry pays it). Revenue is net of refunds:
            // what a refund gives back comes off the day it is given back.
            match (change.before::<Order>()?, change.after::<Order>()?) {
                (before, Some(order))
                    if order.status.was_paid()
                        && !before.as_ref().is_some_and(|b| b.status.was_paid()) =>
                {
                    let d = self.day(order.organization_id, day_number(order.created_at));
                    d.orders += 1;
                    *d.revenue.entry(order.currency.to_lowercase()).or_default() +=
                        order.amount - order.refunded_amount;
                }
                (Some(before), Some(after)) if after.refunded_amount != before.refunded_amount => {
                    let d = self.day(after.organization_id, day_number(now));
                    *d.revenue.entry(after.currency.to_lowercase()).or_default() -=
                        after.refunded_amount - before.refunded_amount;
                }
                _ => {}
            }
        } else if change.is::<Subscription>() {
            let active = |s: &Option<Subscription>| {
                s.as_ref()
                    .is_some_and(|s| s.status.is_active() && s.ended_at.is_none())
            };
            let (before, after) = (
                change.before::<Subscription>()?,
                change.after::<Subscription>()?,
            );
            let Some(org) = after
                .as_ref()
                .or(before.as_ref())
                .map(|s| s.organization_id)
            else {
                return Ok(());
            };
            match (active(&before), active(&after)) {
                (false, true) => {
                    self.day(org, day_number(now)).started += 1;
                    *self.active.entry(org).or_default() += 1;
                }
                (true, false) => {
                    self.day(org, day_number(now)).ended += 1;
                    *self.active.entry(org).or_default() -= 1;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn day(&mut self, org: OrganizationId, day: i64) -> &mut SalesDelta {
        self.days.entry((org, day)).or_default()
    }

    /// Adds the counts to the stored records, in `batch` (the projector is their only
    /// writer, so a read and a put cannot race).
    pub async fn write(self, store: &Store, batch: &mut Batch) -> Result<(), StorageError> {
        for ((org, day), delta) in self.days {
            let (mut rec, expect) = match store.get::<SalesDay>(&SalesDay::key(org, day)).await? {
                Some(s) => (s.value, Expect::Rev(s.rev)),
                None => (SalesDay::empty(org, day), Expect::Absent),
            };
            rec.orders += delta.orders;
            for (currency, amount) in delta.revenue {
                *rec.revenue.entry(currency).or_default() += amount;
            }
            rec.subscriptions_started += delta.started;
            rec.subscriptions_ended += delta.ended;
            batch.put(&rec, expect)?;
        }
        for (org, delta) in self.active {
            let (mut rec, expect) = match store.get::<SalesTotals>(&org.key()).await? {
                Some(s) => (s.value, Expect::Rev(s.rev)),
                None => (
                    SalesTotals {
                        organization_id: org,
                        active_subscriptions: 0,
                    },
                    Expect::Absent,
                ),
            };
            rec.active_subscriptions += delta;
            batch.put(&rec, expect)?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Validations: counted in memory, written every second
// ---------------------------------------------------------------------------------------

/// Validation outcomes not yet written, per organization and day.
///
/// A flush writes the counts and takes them out of the pending map in one step under
/// `flushing`, which readers hold too ([`ValidationCounters::read`]): a chart never sees a
/// count twice (stored and pending) or not at all. Counting never takes that lock.
#[derive(Debug, Default)]
pub struct ValidationCounters {
    pending: DashMap<(OrganizationId, i64), [AtomicU64; 2]>,
    flushing: tokio::sync::Mutex<()>,
}

impl ValidationCounters {
    /// Counts one validation of a key of `org`: valid, or refused.
    pub fn record(&self, org: OrganizationId, now: DateTime<Utc>, valid: bool) {
        let key = (org, day_number(now));
        let slot = usize::from(!valid);
        if let Some(c) = self.pending.get(&key) {
            c[slot].fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.pending.entry(key).or_default()[slot].fetch_add(1, Ordering::Relaxed);
    }

    /// Held while reading stored counts and [`Self::pending`]: no flush moves counts from
    /// one to the other meanwhile.
    pub async fn reading(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.flushing.lock().await
    }

    /// Counts not yet written for one day: (succeeded, refused).
    pub fn pending(&self, org: OrganizationId, day: i64) -> (u64, u64) {
        self.pending
            .get(&(org, day))
            .map(|c| (c[0].load(Ordering::Relaxed), c[1].load(Ordering::Relaxed)))
            .unwrap_or_default()
    }

    /// Writes the pending counts (durably before it returns) and takes them out of the
    /// pending map; returns how many days it wrote. Counts that arrive meanwhile stay
    /// pending for the next flush; a write the store refuses leaves every count pending.
    pub async fn flush(&self, store: &Store) -> Result<usize, StorageError> {
        let written = {
            let _moving = self.flushing.lock().await;
            let taken: Vec<((OrganizationId, i64), u64, u64)> = self
                .pending
                .iter()
                .map(|e| {
                    let c = e.value();
                    (
                        *e.key(),
                        c[0].load(Ordering::Relaxed),
                        c[1].load(Ordering::Relaxed),
                    )
                })
                .filter(|(_, ok, refused)| ok + refused > 0)
                .collect();
            if taken.is_empty() {
                None
            } else {
                let mut batch = Batch::new();
                for ((org, day), ok, refused) in &taken {
                    // Conditional: on a shared database another node flushes its own
                    // counts of the same day; a lost race leaves these pending.
                    let (mut rec, expect) = match store
                        .get::<ValidationDay>(&ValidationDay::key(*org, *day))
                        .await?
                    {
                        Some(s) => (s.value, Expect::Rev(s.rev)),
                        None => (ValidationDay::empty(*org, *day), Expect::Absent),
                    };
                    rec.succeeded += ok;
                    rec.refused += refused;
                    batch.put(&rec, expect)?;
                }
                // Visible at once; the counts leave the pending map in the same step.
                let committed = store.commit(&batch).await?;
                for (key, ok, refused) in &taken {
                    if let Some(c) = self.pending.get(key) {
                        c[0].fetch_sub(*ok, Ordering::Relaxed);
                        c[1].fetch_sub(*refused, Ordering::Relaxed);
                    }
                }
                Some((committed.seq, taken.len()))
            }
        };
        // Days with nothing pending leave the map (an increment holds the entry's shard, so
        // none is lost between the check and the removal).
        self.pending
            .retain(|_, c| c[0].load(Ordering::Relaxed) + c[1].load(Ordering::Relaxed) > 0);
        match written {
            None => Ok(0),
            Some((seq, days)) => {
                store.durable(seq).await?;
                Ok(days)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------

/// One day of the charts.
#[derive(Debug, Clone, PartialEq)]
pub struct DayPoint {
    pub day: i64,
    pub orders: u64,
    /// Revenue in each currency sold that day (in its minor unit).
    pub revenue: BTreeMap<Currency, i64>,
    pub active_subscriptions: i64,
    pub validations_succeeded: u64,
    pub validations_refused: u64,
}

/// The days `from..=to` of an organization (at most a few hundred: the caller bounds the
/// range), from the store and the validation counts not yet written to it; `today`
/// anchors the running subscription total. Revenue is per currency.
pub async fn days(
    store: &Store,
    counts: &ValidationCounters,
    org: OrganizationId,
    from: i64,
    to: i64,
    today: i64,
) -> Result<Vec<DayPoint>, StorageError> {
    let sales = |day: i64| async move {
        Ok::<_, StorageError>(
            store
                .get::<SalesDay>(&SalesDay::key(org, day))
                .await?
                .map(|s| s.value),
        )
    };
    // Active at the end of day D = active now - (started - ended) on the days after D.
    let mut active = store
        .get::<SalesTotals>(&org.key())
        .await?
        .map(|s| s.value.active_subscriptions)
        .unwrap_or(0);
    let mut day = today;
    while day > to {
        if let Some(s) = sales(day).await? {
            active -= s.subscriptions_started as i64 - s.subscriptions_ended as i64;
        }
        day -= 1;
    }
    let mut out = Vec::with_capacity(usize::try_from(to - from + 1).unwrap_or(0));
    for day in (from..=to).rev() {
        let s = sales(day).await?;
        let (v, (pending_ok, pending_refused)) = {
            let _reading = counts.reading().await;
            let stored = store
                .get::<ValidationDay>(&ValidationDay::key(org, day))
                .await
                .map(|r| r.map(|s| s.value));
            (stored, counts.pending(org, day))
        };
        let v = v?;
        out.push(DayPoint {
            day,
            orders: s.as_ref().map_or(0, |s| s.orders),
            revenue: s
                .as_ref()
                .map(|s| {
                    s.revenue
                        .iter()
                        .filter_map(|(code, amount)| Some((Currency::from_code(code)?, *amount)))
                        .collect()
                })
                .unwrap_or_default(),
            active_subscriptions: active.max(0),
            validations_succeeded: v.as_ref().map_or(0, |v| v.succeeded) + pending_ok,
            validations_refused: v.as_ref().map_or(0, |v| v.refused) + pending_refused,
        });
        if let Some(s) = &s {
            active -= s.subscriptions_started as i64 - s.subscriptions_ended as i64;
        }
    }
    out.reverse();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::order::{BillingReason, OrderStatus};
    use tollgate_actors::subscription::model::SubscriptionStatus;

    fn order(org: OrganizationId, amount: i64, at: DateTime<Utc>) -> Order {
        let customer = crate::api::subscription::sample_customer();
        let sub = &crate::api::subscription::sample_subscriptions()[0];
        Order {
            id: crate::domain::ids::OrderId::new(),
            organization_id: org,
            created_at: at,
            modified_at: None,
            status: OrderStatus::Paid,
            amount,
            tax_amount: 0,
            refunded_amount: 0,
            refunded_tax_amount: 0,
            currency: "usd".into(),
            billing_reason: BillingReason::Purchase,
            billing_address: None,
            customer_id: customer.id,
            product_id: sub.product_id,
            product_price_id: sub.price_id,
            recurring: false,
            discount_id: None,
            subscription_id: None,
            checkout_id: None,
            metadata: Default::default(),
            custom_field_data: Default::default(),
            customer_email: customer.email,
            product_name: "Pro".into(),
            discount_name: None,
            payment_id: None,
            refund_pending_amount: 0,
            refund_pending_tax_amount: 0,
            seats: None,
            next_payment_attempt_at: None,
            last_payment: None,
            tax: crate::domain::order::OrderTax::default(),
            invoice: crate::domain::order::InvoiceState::None,
            usage_lines: Vec::new(),
        }
    }

    /// Writes `batch`, then projects and consumes every feed entry, as the fan-out does.
    async fn project(store: &Store, batch: Batch, now: DateTime<Utc>) {
        store.commit_durable(&batch).await.unwrap();
        let changes = store.changes(None, 100).await.unwrap();
        let mut p = Projection::default();
        let mut out = Batch::new();
        for c in &changes {
            p.add(c, now).unwrap();
        }
        p.write(store, &mut out).await.unwrap();
        out.consume_changes(&changes.iter().map(|c| c.seq).collect::<Vec<_>>());
        store.commit_durable(&out).await.unwrap();
    }

    async fn sales(store: &Store, org: OrganizationId, day: i64) -> SalesDay {
        store
            .get::<SalesDay>(&SalesDay::key(org, day))
            .await
            .unwrap()
            .map(|s| s.value)
            .unwrap_or_else(|| SalesDay::empty(org, day))
    }

    async fn active(store: &Store, org: OrganizationId) -> i64 {
        store
            .get::<SalesTotals>(&org.key())
            .await
            .unwrap()
            .map_or(0, |s| s.value.active_subscriptions)
    }

    /// What a chart reads for one day: stored plus pending, under the readers' lock.
    async fn seen(
        store: &Store,
        c: &ValidationCounters,
        org: OrganizationId,
        day: i64,
    ) -> (u64, u64) {
        let _reading = c.reading().await;
        let stored = store
            .get::<ValidationDay>(&ValidationDay::key(org, day))
            .await
            .unwrap()
            .map_or((0, 0), |s| (s.value.succeeded, s.value.refused));
        let pending = c.pending(org, day);
        (stored.0 + pending.0, stored.1 + pending.1)
    }

    #[actix_web::test]
    async fn readers_never_see_a_count_twice_or_not_at_all_while_flushes_run() {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        let store = Store::temporary().unwrap();
        let counters = Arc::new(ValidationCounters::default());
        let org = OrganizationId::new();
        let now = Utc::now();
        let day = day_number(now);
        // Counted so far (raised before each count), and a reader on another thread that
        // checks what a chart would show: never less than before (a count briefly lost),
        // never more than counted (a count seen twice).
        let recorded = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let (store, counters, recorded, stop) = (
                store.clone(),
                counters.clone(),
                recorded.clone(),
                stop.clone(),
            );
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                let (mut last, mut reads) = (0, 0u64);
                while !stop.load(Ordering::SeqCst) {
                    let (ok, refused) = runtime.block_on(seen(&store, &counters, org, day));
                    let total = ok + refused;
                    assert!(total >= last, "a count vanished: {total} after {last}");
                    assert!(
                        total <= recorded.load(Ordering::SeqCst),
                        "a count seen twice: {total}"
                    );
                    last = total;
                    reads += 1;
                }
                reads
            })
        };
        let mut expected = (0, 0);
        for round in 0..200u64 {
            for i in 0..(round % 7 + 1) {
                let valid = i % 3 != 0;
                // Raised first: what the reader compares with is never below what it
                // may see.
                recorded.fetch_add(1, Ordering::SeqCst);
                counters.record(org, now, valid);
                if valid {
                    expected.0 += 1;
                } else {
                    expected.1 += 1;
                }
            }
            counters.flush(&store).await.unwrap();
        }
        stop.store(true, Ordering::SeqCst);
        assert!(reader.join().unwrap() > 0);
        assert_eq!(seen(&store, &counters, org, day).await, expected);
        // Everything written, nothing left pending, and the map holds no empty day.
        assert_eq!(counters.pending(org, day), (0, 0));
        assert!(counters.pending.is_empty());
    }

    #[actix_web::test]
    async fn orders_count_once_on_their_day_and_subscriptions_move_the_active_total() {
        let store = Store::temporary().unwrap();
        let org = OrganizationId::new();
        let now = Utc::now();
        let today = day_number(now);
        let yesterday = now - chrono::Duration::days(1);
        // Two orders today, one yesterday; a refund takes its amount off the revenue of
        // the day it is given (the order still counts as an order).
        let mut b = Batch::new();
        let mut first = order(org, 2500, now);
        b.put(&first, Expect::Absent).unwrap();
        b.put(&order(org, 1000, now), Expect::Absent).unwrap();
        b.put(&order(org, 700, yesterday), Expect::Absent).unwrap();
        project(&store, b, now).await;
        first.status = OrderStatus::Refunded;
        first.refunded_amount = 2500;
        let mut b = Batch::new();
        b.put(&first, Expect::Any).unwrap();
        project(&store, b, now).await;
        let day = sales(&store, org, today).await;
        assert_eq!(
            (day.orders, day.revenue.get("usd").copied()),
            (2, Some(1000))
        );
        // Another change of the order counts nothing.
        first.metadata = Default::default();
        first.modified_at = Some(now);
        let mut b = Batch::new();
        b.put(&first, Expect::Any).unwrap();
        project(&store, b, now).await;
        assert_eq!(
            sales(&store, org, today).await.revenue.get("usd").copied(),
            Some(1000)
        );
        assert_eq!(sales(&store, org, today - 1).await.orders, 1);
        // A pending renewal (declined) counts nothing; paid by a retry, it counts once.
        let mut pending = order(org, 900, yesterday);
        pending.status = OrderStatus::Pending;
        let mut b = Batch::new();
        b.put(&pending, Expect::Absent).unwrap();
        project(&store, b, now).await;
        assert_eq!(sales(&store, org, today - 1).await.orders, 1);
        pending.status = OrderStatus::Paid;
        pending.modified_at = Some(now);
        for _ in 0..2 {
            let mut b = Batch::new();
            b.put(&pending, Expect::Any).unwrap();
            project(&store, b, now).await;
        }
        let paid_day = sales(&store, org, today - 1).await;
        assert_eq!(
            (paid_day.orders, paid_day.revenue.get("usd").copied()),
            (2, Some(1600))
        );
        // Another organization's counters are untouched.
        assert_eq!(sales(&store, OrganizationId::new(), today).await.orders, 0);

        // A subscription created active counts +1; canceled, -1; a change that keeps it
        // active counts nothing.
        let mut sub = crate::api::subscription::sample_subscriptions()[0].clone();
        sub.organization_id = org;
        sub.status = SubscriptionStatus::Active;
        sub.ended_at = None;
        let mut b = Batch::new();
        b.put(&sub, Expect::Any).unwrap();
        project(&store, b, now).await;
        assert_eq!(active(&store, org).await, 1);
        sub.cancel_at_period_end = true;
        let mut b = Batch::new();
        b.put(&sub, Expect::Any).unwrap();
        project(&store, b, now).await;
        assert_eq!(active(&store, org).await, 1);
        sub.status = SubscriptionStatus::Canceled;
        sub.ended_at = Some(now);
        let mut b = Batch::new();
        b.put(&sub, Expect::Any).unwrap();
        project(&store, b, now).await;
        assert_eq!(active(&store, org).await, 0);
        let day = sales(&store, org, today).await;
        assert_eq!((day.subscriptions_started, day.subscriptions_ended), (1, 1));
    }

    #[actix_web::test]
    async fn the_chart_days_rebuild_the_active_total_backwards() {
        let store = Store::temporary().unwrap();
        let org = OrganizationId::new();
        let today = 20_000;
        // Two started three days ago, one more yesterday, one ended today: 2 active now.
        let put = |day: i64, started: u64, ended: u64| {
            let mut s = SalesDay::empty(org, day);
            s.subscriptions_started = started;
            s.subscriptions_ended = ended;
            s
        };
        let mut b = Batch::new();
        b.put(&put(today - 3, 2, 0), Expect::Any).unwrap();
        b.put(&put(today - 1, 1, 0), Expect::Any).unwrap();
        b.put(&put(today, 0, 1), Expect::Any).unwrap();
        b.put(
            &SalesTotals {
                organization_id: org,
                active_subscriptions: 2,
            },
            Expect::Any,
        )
        .unwrap();
        store.commit_durable(&b).await.unwrap();
        let active: Vec<i64> = days(
            &store,
            &ValidationCounters::default(),
            org,
            today - 4,
            today,
            today,
        )
        .await
        .unwrap()
        .iter()
        .map(|p| p.active_subscriptions)
        .collect();
        assert_eq!(active, vec![0, 2, 2, 3, 2]);
        // A range ending before today counts back from today.
        let earlier: Vec<i64> = days(
            &store,
            &ValidationCounters::default(),
            org,
            today - 4,
            today - 2,
            today,
        )
        .await
        .unwrap()
        .iter()
        .map(|p| p.active_subscriptions)
        .collect();
        assert_eq!(earlier, vec![0, 2, 2]);
    }

    #[actix_web::test]
    async fn validation_counts_flush_add_up_and_keep_what_arrives_later() {
        let store = Store::temporary().unwrap();
        let counters = ValidationCounters::default();
        let org = OrganizationId::new();
        let now = Utc::now();
        let day = day_number(now);
        for _ in 0..3 {
            counters.record(org, now, true);
        }
        counters.record(org, now, false);
        assert_eq!(counters.pending(org, day), (3, 1));
        assert_eq!(counters.flush(&store).await.unwrap(), 1);
        assert_eq!(counters.pending(org, day), (0, 0));
        counters.record(org, now, true);
        assert_eq!(counters.flush(&store).await.unwrap(), 1);
        assert_eq!(counters.flush(&store).await.unwrap(), 0);
        let rec = store
            .get::<ValidationDay>(&ValidationDay::key(org, day))
            .await
            .unwrap()
            .unwrap()
            .value;
        assert_eq!((rec.succeeded, rec.refused), (4, 1));
        // Another organization's counts are its own.
        let other = OrganizationId::new();
        counters.record(other, now, false);
        counters.flush(&store).await.unwrap();
        let rec = store
            .get::<ValidationDay>(&ValidationDay::key(other, day))
            .await
            .unwrap()
            .unwrap()
            .value;
        assert_eq!((rec.succeeded, rec.refused), (0, 1));
    }
}
