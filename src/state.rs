use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tollgate_actors::checkout::CheckoutEntity;
use tollgate_actors::license_key::LicenseKeyEntity;
use tollgate_actors::subscription::SubscriptionEntity;
use tollgate_actors::{Registry, SharedClock};
use tollgate_storage::Store;

use crate::auth::TokenHasher;
use crate::config::Settings;
use crate::domain::ids::UserId;
use crate::payments::{PaymentProcessor, TaxCalculator};

/// Everything a handler needs, shared by all workers.
pub struct AppState {
    pub store: Store,
    pub hasher: TokenHasher,
    pub settings: Arc<Settings>,
    /// Base URL of this service as clients reach it.
    pub public_url: String,
    pub clock: SharedClock,
    pub processor: Arc<dyn PaymentProcessor>,
    pub tax: Arc<dyn TaxCalculator>,
    pub checkouts: Registry<CheckoutEntity>,
    pub subscriptions: Registry<SubscriptionEntity>,
    pub license_keys: Registry<LicenseKeyEntity>,
    /// The RSA keys that sign id_tokens (loaded or generated on first use).
    pub signing_keys: crate::oauth2::keys::Keyring,
    /// Serializes a user's creations that a per-user cap bounds (OAuth clients, personal
    /// access tokens), so concurrent requests cannot pass the cap together.
    pub user_caps: dashmap::DashMap<UserId, Arc<tokio::sync::Mutex<()>>>,
    /// Every rate limit (`[rate_limits]`).
    pub limits: crate::ratelimit::RateLimits,
    /// The bounded pool password hashes run on (`auth.password_hash_*`).
    pub password_pool: crate::auth::password::HashPool,
    /// `server.trusted_proxies`, parsed (validated with the settings).
    pub trusted_proxies: crate::client_ip::TrustedProxies,
    /// Webhook delivery: wakes the endpoints' workers, holds the HTTP client and the
    /// target policy.
    pub webhooks: crate::webhooks::delivery::Hub,
    /// Customers as license keys render them, for the validation hot path.
    pub customers: Arc<crate::api::license_key::CustomerCache>,
    /// What `GET /metrics` exposes.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Validation outcomes per organization and day, for the dashboard's chart.
    pub validation_counts: crate::stats::ValidationCounters,
    ready: AtomicBool,
}

/// The parts of [`AppState`] that are built before it.
pub struct Services {
    pub clock: SharedClock,
    pub processor: Arc<dyn PaymentProcessor>,
    pub tax: Arc<dyn TaxCalculator>,
    pub checkouts: Registry<CheckoutEntity>,
    pub subscriptions: Registry<SubscriptionEntity>,
    pub license_keys: Registry<LicenseKeyEntity>,
    pub webhooks: crate::webhooks::delivery::Hub,
    pub metrics: Arc<crate::metrics::Metrics>,
}

impl AppState {
    pub fn new(
        store: Store,
        hasher: TokenHasher,
        settings: Arc<Settings>,
        public_url: String,
        services: Services,
    ) -> Self {
        let limits = crate::ratelimit::RateLimits::new(&settings.rate_limits);
        let password_pool = crate::auth::password::HashPool::new(
            settings.auth.password_hash_concurrency,
            settings.auth.password_hash_queue,
        );
        // Validated with the settings (`Settings::validate`), so this never falls back.
        let trusted_proxies =
            crate::client_ip::TrustedProxies::parse(&settings.server.trusted_proxies)
                .unwrap_or_default();
        let customers = Arc::new(crate::api::license_key::CustomerCache::default());
        let invalidate = customers.clone();
        store.watch(
            <crate::domain::customer::Customer as tollgate_storage::Record>::COLLECTION,
            move |id| invalidate.invalidate(id),
        );
        Self {
            customers,
            store,
            hasher,
            settings,
            public_url,
            clock: services.clock,
            processor: services.processor,
            tax: services.tax,
            checkouts: services.checkouts,
            subscriptions: services.subscriptions,
            license_keys: services.license_keys,
            signing_keys: crate::oauth2::keys::Keyring::default(),
            user_caps: dashmap::DashMap::new(),
            limits,
            password_pool,
            trusted_proxies,
            webhooks: services.webhooks,
            metrics: services.metrics,
            validation_counts: crate::stats::ValidationCounters::default(),
            ready: AtomicBool::new(false),
        }
    }

    /// The current time, from the injectable clock (tests move it by hand).
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
    }

    /// Holds the user's cap lock: count, then create, while it is held.
    pub async fn lock_user_caps(&self, user: UserId) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = self.user_caps.entry(user).or_default().clone();
        lock.lock_owned().await
    }
}
