//! Caches of renderings the hot path answers with, invalidated by the store's writes.

use crate::api::license_key::CustomerParts;
use crate::domain::customer::Customer;
use crate::domain::ids::CustomerId;

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
    pub async fn get<E, F>(
        &self,
        id: CustomerId,
        load: impl FnOnce() -> F,
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
        let parts = CustomerParts::from(&load().await?);
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
            .get(c.id, || {
                cache.invalidate(&c.id.key());
                loaded(c.clone())
            })
            .await
            .unwrap();
        assert_eq!(parts.view.email, c.email);
        assert!(cache.entries.is_empty());
        // Kept otherwise, until the next write.
        cache.get(c.id, || loaded(c.clone())).await.unwrap();
        assert_eq!(cache.entries.len(), 1);
        let mut renamed = c.clone();
        renamed.name = Some("Other".into());
        let hit = cache.get(c.id, || loaded(renamed.clone())).await.unwrap();
        assert_eq!(hit.view.name, c.name, "served from the cache");
        cache.invalidate(&c.id.key());
        let fresh = cache.get(c.id, || loaded(renamed.clone())).await.unwrap();
        assert_eq!(fresh.view.name.as_deref(), Some("Other"));
    }

    #[actix_web::test]
    async fn an_expiring_cache_reloads_after_its_ttl() {
        let c = crate::api::subscription::sample_customer();
        let cache = CustomerCache::expiring(std::time::Duration::ZERO);
        let loaded = |c: Customer| async move { Ok::<_, ()>(c) };
        cache.get(c.id, || loaded(c.clone())).await.unwrap();
        let mut renamed = c.clone();
        renamed.name = Some("Elsewhere".into());
        // Another node renamed the customer (no local write invalidated the entry).
        let seen = cache.get(c.id, || loaded(renamed.clone())).await.unwrap();
        assert_eq!(seen.view.name.as_deref(), Some("Elsewhere"));
    }
}
