//! Caches of renderings the hot path answers with, invalidated by the store's writes.

use std::sync::Arc;

use crate::api::license_key::{CustomerParts, Entitlement};
use crate::domain::benefit_grant::GrantSource;
use crate::domain::customer::Customer;
use crate::domain::ids::CustomerId;
use crate::domain::ids::{OrderId, SubscriptionId};

/// Rendered customers by id, for the validation hot path. Every write of a customer
/// invalidates its entry (`Store::watch`); an entry is only inserted if no customer was
/// written while it was being read, so a stale rendering can never stay.
///
/// On a store other nodes write too, their writes invalidate nothing here: entries then
/// live at most `ttl`.
#[derive(Default)]
pub struct CustomerCache {
    entries: dashmap::DashMap<CustomerId, (CustomerParts, std::time::Instant)>,
    /// Bumped by every customer write, before its entry is removed.
    epoch: std::sync::atomic::AtomicU64,
    ttl: Option<std::time::Duration>,
}

impl CustomerCache {
    /// At most this many customers are kept (beyond it, the cache is emptied).
    const CAPACITY: usize = 100_000;

    /// A cache whose entries also expire after `ttl`.
    pub fn expiring(ttl: std::time::Duration) -> Self {
        CustomerCache {
            ttl: Some(ttl),
            ..CustomerCache::default()
        }
    }

    /// Invalidates `id` (a customer write just committed).
    pub fn invalidate(&self, id: &[u8]) {
        use std::sync::atomic::Ordering;
        self.epoch.fetch_add(1, Ordering::SeqCst);
        if let Ok(bytes) = <[u8; 16]>::try_from(id) {
            self.entries
                .remove(&CustomerId(uuid::Uuid::from_bytes(bytes)));
        }
    }

    /// The rendered customer `id`, from the cache or `load`.
    ///
    /// `stale_for`: if `load` fails, an entry at most this old (expired or not) answers
    /// instead (a validation through a database outage, `storage.outage_window_secs`).
    pub async fn get<E, F>(
        &self,
        id: CustomerId,
        load: impl FnOnce() -> F,
        stale_for: Option<std::time::Duration>,
    ) -> Result<CustomerParts, E>
    where
        F: std::future::Future<Output = Result<Customer, E>>,
    {
        use std::sync::atomic::Ordering;
        if let Some(entry) = self.entries.get(&id) {
            let (parts, at) = entry.value();
            if self.ttl.is_none_or(|ttl| at.elapsed() < ttl) {
                return Ok(parts.clone());
            }
        }
        let epoch = self.epoch.load(Ordering::SeqCst);
        let parts = match load().await {
            Ok(customer) => CustomerParts::from(&customer),
            Err(e) => {
                return stale(self.entries.get(&id).as_deref(), stale_for).ok_or(e);
            }
        };
        if self.entries.len() >= Self::CAPACITY {
            self.entries.clear();
        }
        // Under the entry's shard lock: an invalidation either bumped the epoch before this
        // check (nothing is inserted) or removes the entry after this insert.
        if self.epoch.load(Ordering::SeqCst) == epoch {
            match self.entries.entry(id) {
                dashmap::Entry::Vacant(slot) => {
                    slot.insert((parts.clone(), std::time::Instant::now()));
                }
                // Expired: replaced (a fresh entry is left alone).
                dashmap::Entry::Occupied(mut slot) => {
                    if self.ttl.is_some_and(|ttl| slot.get().1.elapsed() >= ttl) {
                        slot.insert((parts.clone(), std::time::Instant::now()));
                    }
                }
            }
        }
        Ok(parts)
    }
}

/// The entitlements of a purchase (a one-time order or a subscription) by purchase, for
/// the validation hot path: the feature flags a key's purchase grants now
/// (`crate::app::license_keys::entitlements_of`). What they derive from is the purchase,
/// its product's benefits, the benefits and the order's refunds: a write of the order or
/// subscription removes its entry, a write of a product, benefit or refund (rare, and not
/// tied to one purchase by its id) empties the cache. As in [`CustomerCache`], an entry is
/// only inserted if nothing was invalidated while it was being read.
///
/// On a store other nodes write too, entries also expire after `ttl`.
/// A purchase's entitlements and when they were read.
type EntitlementEntry = (Arc<Vec<Entitlement>>, std::time::Instant);

#[derive(Default)]
pub struct EntitlementCache {
    /// By purchase: `(false, order id)` or `(true, subscription id)`.
    entries: dashmap::DashMap<(bool, uuid::Uuid), EntitlementEntry>,
    epoch: std::sync::atomic::AtomicU64,
    ttl: Option<std::time::Duration>,
}

impl EntitlementCache {
    /// At most this many purchases are kept (beyond it, the cache is emptied).
    const CAPACITY: usize = 100_000;

    /// A cache whose entries also expire after `ttl`.
    pub fn expiring(ttl: std::time::Duration) -> Self {
        EntitlementCache {
            ttl: Some(ttl),
            ..EntitlementCache::default()
        }
    }

    /// The order `id` (its key bytes) was written.
    pub fn invalidate_order(&self, id: &[u8]) {
        if let Ok(bytes) = <[u8; 16]>::try_from(id) {
            self.remove(GrantSource::Order(OrderId(uuid::Uuid::from_bytes(bytes))));
        }
    }

    /// The subscription `id` (its key bytes) was written.
    pub fn invalidate_subscription(&self, id: &[u8]) {
        if let Ok(bytes) = <[u8; 16]>::try_from(id) {
            self.remove(GrantSource::Subscription(SubscriptionId(
                uuid::Uuid::from_bytes(bytes),
            )));
        }
    }

    fn remove(&self, source: GrantSource) {
        self.epoch.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.entries.remove(&Self::slot(source));
    }

    fn slot(source: GrantSource) -> (bool, uuid::Uuid) {
        match source {
            GrantSource::Order(id) => (false, id.0),
            GrantSource::Subscription(id) => (true, id.0),
        }
    }

    /// A product, benefit or refund was written: every entry may be stale.
    pub fn invalidate_all(&self) {
        self.epoch.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.entries.clear();
    }

    /// The entitlements of `source`, from the cache or `load`.
    ///
    /// `stale_for`: as [`CustomerCache::get`]'s.
    pub async fn get<E, F>(
        &self,
        source: GrantSource,
        load: impl FnOnce() -> F,
        stale_for: Option<std::time::Duration>,
    ) -> Result<Arc<Vec<Entitlement>>, E>
    where
        F: std::future::Future<Output = Result<Vec<Entitlement>, E>>,
    {
        use std::sync::atomic::Ordering;
        let slot = Self::slot(source);
        if let Some(entry) = self.entries.get(&slot) {
            let (found, at) = entry.value();
            if self.ttl.is_none_or(|ttl| at.elapsed() < ttl) {
                return Ok(found.clone());
            }
        }
        let epoch = self.epoch.load(Ordering::SeqCst);
        let found = match load().await {
            Ok(found) => Arc::new(found),
            Err(e) => {
                return stale(self.entries.get(&slot).as_deref(), stale_for).ok_or(e);
            }
        };
        if self.entries.len() >= Self::CAPACITY {
            self.entries.clear();
        }
        if self.epoch.load(Ordering::SeqCst) == epoch {
            self.entries
                .insert(slot, (found.clone(), std::time::Instant::now()));
        }
        Ok(found)
    }
}

/// `entry`'s value if it is at most `stale_for` old.
fn stale<T: Clone>(
    entry: Option<&(T, std::time::Instant)>,
    stale_for: Option<std::time::Duration>,
) -> Option<T> {
    let (value, at) = entry?;
    (at.elapsed() <= stale_for?).then(|| value.clone())
}

/// Keeps `cache` in step with the writes of `store` (see [`EntitlementCache`]).
pub fn watch_entitlements(store: &tollgate_storage::Store, cache: &Arc<EntitlementCache>) {
    use tollgate_storage::Record;
    let c = cache.clone();
    store.watch(crate::domain::order::Order::COLLECTION, move |id| {
        c.invalidate_order(id)
    });
    let c = cache.clone();
    store.watch(
        tollgate_actors::subscription::Subscription::COLLECTION,
        move |id| c.invalidate_subscription(id),
    );
    for collection in [
        crate::domain::product::Product::COLLECTION,
        crate::domain::benefit::Benefit::COLLECTION,
        crate::domain::refund::Refund::COLLECTION,
    ] {
        let c = cache.clone();
        store.watch(collection, move |_| c.invalidate_all());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn the_customer_cache_never_keeps_a_rendering_older_than_a_write() {
        let c = crate::api::subscription::sample_customer();
        let cache = CustomerCache::default();
        let loaded = |c: Customer| async move { Ok::<_, ()>(c) };
        // A write while loading: the rendering is served but not kept.
        let parts = cache
            .get(
                c.id,
                || {
                    cache.invalidate(&c.id.key());
                    loaded(c.clone())
                },
                None,
            )
            .await
            .unwrap();
        assert_eq!(parts.view.email, c.email);
        assert!(cache.entries.is_empty());
        // Kept otherwise, until the next write.
        cache.get(c.id, || loaded(c.clone()), None).await.unwrap();
        assert_eq!(cache.entries.len(), 1);
        let mut renamed = c.clone();
        renamed.name = Some("Other".into());
        let hit = cache
            .get(c.id, || loaded(renamed.clone()), None)
            .await
            .unwrap();
        assert_eq!(hit.view.name, c.name, "served from the cache");
        cache.invalidate(&c.id.key());
        let fresh = cache
            .get(c.id, || loaded(renamed.clone()), None)
            .await
            .unwrap();
        assert_eq!(fresh.view.name.as_deref(), Some("Other"));
    }

    #[actix_web::test]
    async fn an_expired_rendering_answers_a_failed_load_only_when_allowed_and_recent() {
        let c = crate::api::subscription::sample_customer();
        let cache = CustomerCache::expiring(std::time::Duration::from_millis(1));
        let ok = |c: Customer| async move { Ok::<_, &str>(c) };
        let down = || async { Err::<Customer, _>("unreachable") };
        cache.get(c.id, || ok(c.clone()), None).await.unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        // Expired, and the load fails: an error unless a stale entry is allowed.
        assert_eq!(cache.get(c.id, down, None).await.err(), Some("unreachable"));
        let day = std::time::Duration::from_secs(86_400);
        let stale = cache.get(c.id, down, Some(day)).await.unwrap();
        assert_eq!(stale.view.email, c.email);
        // Older than allowed: the error.
        let brief = std::time::Duration::from_millis(2);
        assert_eq!(
            cache.get(c.id, down, Some(brief)).await.err(),
            Some("unreachable")
        );
        // Nothing cached: the error.
        let other = CustomerCache::default();
        assert!(other.get(c.id, down, Some(day)).await.is_err());
        // Entitlements likewise.
        let source = GrantSource::Order(OrderId(uuid::Uuid::from_u128(9)));
        let flags = EntitlementCache::expiring(std::time::Duration::from_millis(1));
        flags
            .get(source, || async { Ok::<_, &str>(Vec::new()) }, None)
            .await
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let failed = || async { Err::<Vec<Entitlement>, _>("unreachable") };
        assert!(flags.get(source, failed, None).await.is_err());
        assert!(flags.get(source, failed, Some(day)).await.is_ok());
    }

    #[actix_web::test]
    async fn the_entitlement_cache_drops_a_purchase_on_its_write_and_all_on_a_catalog_write() {
        let order = OrderId(uuid::Uuid::from_u128(7));
        let source = GrantSource::Order(order);
        let flag = |d: &str| Entitlement {
            benefit_id: uuid::Uuid::from_u128(9),
            description: d.into(),
            metadata: Default::default(),
            created_at: chrono::DateTime::UNIX_EPOCH,
            updated_at: chrono::DateTime::UNIX_EPOCH,
        };
        let loaded = |d: &'static str| async move { Ok::<_, ()>(vec![flag(d)]) };
        let cache = EntitlementCache::default();
        // Invalidated while loading: served, not kept.
        let got = cache
            .get(
                source,
                || {
                    cache.invalidate_all();
                    loaded("a")
                },
                None,
            )
            .await
            .unwrap();
        assert_eq!(got[0].description, "a");
        assert!(cache.entries.is_empty());
        cache.get(source, || loaded("a"), None).await.unwrap();
        let hit = cache.get(source, || loaded("b"), None).await.unwrap();
        assert_eq!(hit[0].description, "a", "served from the cache");
        // Another purchase's write leaves it; its own order's write drops it.
        cache.invalidate_order(&uuid::Uuid::from_u128(8).into_bytes());
        cache.invalidate_subscription(&order.0.into_bytes());
        assert_eq!(
            cache.get(source, || loaded("b"), None).await.unwrap()[0].description,
            "a"
        );
        cache.invalidate_order(&order.0.into_bytes());
        assert_eq!(
            cache.get(source, || loaded("b"), None).await.unwrap()[0].description,
            "b"
        );
        cache.invalidate_all();
        assert_eq!(
            cache.get(source, || loaded("c"), None).await.unwrap()[0].description,
            "c"
        );
    }

    #[actix_web::test]
    async fn an_expiring_cache_reloads_after_its_ttl() {
        let c = crate::api::subscription::sample_customer();
        let cache = CustomerCache::expiring(std::time::Duration::ZERO);
        let loaded = |c: Customer| async move { Ok::<_, ()>(c) };
        cache.get(c.id, || loaded(c.clone()), None).await.unwrap();
        let mut renamed = c.clone();
        renamed.name = Some("Elsewhere".into());
        // Another node renamed the customer (no local write invalidated the entry).
        let seen = cache
            .get(c.id, || loaded(renamed.clone()), None)
            .await
            .unwrap();
        assert_eq!(seen.view.name.as_deref(), Some("Elsewhere"));
    }
}
