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
use crate::payments::{PaymentProcessor, TaxServices};

/// An organization's meters that count its new events, as of its meter generation.
pub type LiveMeters = (u64, Arc<Vec<crate::domain::meter::Meter>>);

/// This node's organizations' live meters, each with the meter generation it was read at
/// (`app::usage::meters`: the store checks the generation at each ingest, so an entry is
/// never trusted stale), and the meter backfill's wake-up (`app::usage::backfill`). A
/// field of the state: two apps in one process share nothing.
#[derive(Default)]
pub struct MeterCache {
    pub entries: dashmap::DashMap<crate::domain::ids::OrganizationId, LiveMeters>,
    /// Wakes the backfill job: a meter needs counting.
    pub backfill: tokio::sync::Notify,
}

impl MeterCache {
    /// Drops the organization's entry (its meters are read again at its next ingest).
    pub fn forget(&self, org: crate::domain::ids::OrganizationId) {
        self.entries.remove(&org);
    }
}

/// Everything a handler needs, shared by all workers.
pub struct AppState {
    pub store: Store,
    pub hasher: TokenHasher,
    pub settings: Arc<Settings>,
    /// Base URL of this service as clients reach it.
    pub public_url: String,
    pub clock: SharedClock,
    pub processor: Arc<dyn PaymentProcessor>,
    /// The tax services an organization's `tax.provider` picks from.
    pub tax: TaxServices,
    /// Checks business buyers' tax numbers with their registers (`[tax]`).
    pub tax_ids: Arc<crate::egress::tax_ids::TaxIdChecker>,
    pub checkouts: Registry<CheckoutEntity>,
    pub subscriptions: Registry<SubscriptionEntity>,
    pub license_keys: Registry<LicenseKeyEntity>,
    /// The RSA keys that sign id_tokens (loaded or generated on first use).
    pub signing_keys: crate::auth::keys::Keyring,
    /// Serializes a user's creations that a per-user cap bounds (OAuth clients, personal
    /// access tokens), so concurrent requests cannot pass the cap together.
    pub user_caps: dashmap::DashMap<UserId, Arc<tokio::sync::Mutex<()>>>,
    /// Every rate limit (`[rate_limits]`).
    pub limits: crate::ratelimit::RateLimits,
    /// The bounded pool password hashes run on (`auth.password_hash_*`).
    pub password_pool: crate::auth::password::HashPool,
    /// `server.trusted_proxies`, parsed (validated with the settings).
    pub trusted_proxies: crate::client_ip::TrustedProxies,
    /// The buyer's country from their IP address (`[checkout] geoip_database`).
    pub geoip: crate::geoip::GeoIp,
    /// Webhook delivery: wakes the endpoints' workers, holds the HTTP client and the
    /// target policy.
    pub webhooks: crate::egress::Hub,
    /// E-mail: the transport, the sender's address and the outbox's wake-up.
    pub mailer: Arc<crate::egress::mail::Mailer>,
    /// Customers as license keys render them, for the validation hot path.
    pub customers: Arc<crate::cache::CustomerCache>,
    /// The feature flags each purchase grants, for license-key answers (invalidated by
    /// the store's writes, as `customers`).
    pub entitlements: Arc<crate::cache::EntitlementCache>,
    /// What `GET /metrics` exposes.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Background jobs this node leads (see [`Leadership`]).
    pub jobs: Leadership,
    /// Validation outcomes per organization and day, for the dashboard's chart.
    pub validation_counts: crate::stats::ValidationCounters,
    /// Organizations' signers of license-key answers, as the hot path needs them.
    pub signers: crate::signature::Signers,
    /// On a shared store (PostgreSQL): this node's license keys for validation, counted in
    /// their tally rows without their actors (`tollgate_actors::license_key::shared`).
    pub shared_keys: Option<Arc<tollgate_actors::license_key::shared::SharedKeys>>,
    /// Wakes the invoice issuer (`crate::app::invoices::issue`): a document is due.
    pub invoicer: Arc<tokio::sync::Notify>,
    /// Wakes the recorder of tax transactions at the tax provider
    /// (`crate::app::tax_transactions`).
    pub tax_recorder: Arc<tokio::sync::Notify>,
    /// Wakes the re-check of unverified tax numbers (`crate::app::tax_id_checks`).
    pub tax_id_checks: Arc<tokio::sync::Notify>,
    /// Where the bytes of `/v1/files` live: `<data_dir>/files/` on this node, or the
    /// S3-compatible store of `[files.s3]`.
    pub files: crate::files::FileStore,
    /// The organizations' live meters as ingestion reads them, and the meter backfill's
    /// wake-up (`app::usage::meters`, `app::usage::backfill`).
    pub meters: Arc<MeterCache>,
    ready: AtomicBool,
}

/// The parts of [`AppState`] that are built before it.
pub struct Services {
    pub clock: SharedClock,
    pub processor: Arc<dyn PaymentProcessor>,
    /// The tax services an organization's `tax.provider` picks from.
    pub tax: TaxServices,
    /// Checks business buyers' tax numbers with their registers (`[tax]`).
    pub tax_ids: Arc<crate::egress::tax_ids::TaxIdChecker>,
    pub checkouts: Registry<CheckoutEntity>,
    pub subscriptions: Registry<SubscriptionEntity>,
    pub license_keys: Registry<LicenseKeyEntity>,
    pub webhooks: crate::egress::Hub,
    pub mailer: Arc<crate::egress::mail::Mailer>,
    pub metrics: Arc<crate::metrics::Metrics>,
    pub shared_keys: Option<Arc<tollgate_actors::license_key::shared::SharedKeys>>,
    /// The GeoIP database (`[checkout] geoip_database`), opened.
    pub geoip: crate::geoip::GeoIp,
    /// The object store of `[files.s3]`, when one is configured (else the data dir).
    pub object_store: Option<Arc<dyn crate::files::FileBackend>>,
}

impl AppState {
    pub fn new(
        store: Store,
        hasher: TokenHasher,
        settings: Arc<Settings>,
        public_url: String,
        services: Services,
    ) -> Self {
        let limits = crate::ratelimit::RateLimits::new(&settings.rate_limits)
            .with_downloads(&settings.files);
        let password_pool = crate::auth::password::HashPool::new(
            settings.auth.password_hash_concurrency,
            settings.auth.password_hash_queue,
        );
        // Validated with the settings (`Settings::validate`), so this never falls back.
        let trusted_proxies =
            crate::client_ip::TrustedProxies::parse(&settings.server.trusted_proxies)
                .unwrap_or_default();
        // Other nodes' customer writes invalidate nothing here: expire entries too.
        let customers = Arc::new(if !store.is_shared() {
            crate::cache::CustomerCache::default()
        } else {
            crate::cache::CustomerCache::expiring(std::time::Duration::from_secs(2))
        });
        let invalidate = customers.clone();
        store.watch(
            <crate::domain::customer::Customer as tollgate_storage::Record>::COLLECTION,
            move |id| invalidate.invalidate(id),
        );
        let entitlements = Arc::new(if !store.is_shared() {
            crate::cache::EntitlementCache::default()
        } else {
            crate::cache::EntitlementCache::expiring(std::time::Duration::from_secs(2))
        });
        crate::cache::watch_entitlements(&store, &entitlements);
        let files = crate::files::FileStore::new(match services.object_store {
            Some(store) => store,
            None => Arc::new(crate::files::local::LocalFiles::new(
                &settings.storage.data_dir,
                hasher.clone(),
                public_url.clone(),
            )),
        });
        Self {
            files,
            customers,
            entitlements,
            store,
            hasher,
            settings,
            public_url,
            clock: services.clock,
            processor: services.processor,
            tax: services.tax,
            tax_ids: services.tax_ids,
            checkouts: services.checkouts,
            subscriptions: services.subscriptions,
            license_keys: services.license_keys,
            signing_keys: crate::auth::keys::Keyring::default(),
            user_caps: dashmap::DashMap::new(),
            limits,
            password_pool,
            trusted_proxies,
            geoip: services.geoip,
            webhooks: services.webhooks,
            mailer: services.mailer,
            metrics: services.metrics,
            jobs: Leadership::default(),
            validation_counts: crate::stats::ValidationCounters::default(),
            signers: crate::signature::Signers::default(),
            shared_keys: services.shared_keys,
            invoicer: Arc::new(tokio::sync::Notify::new()),
            tax_recorder: Arc::new(tokio::sync::Notify::new()),
            tax_id_checks: Arc::new(tokio::sync::Notify::new()),
            meters: Arc::default(),
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

    /// What this node can do with its database (`/readyz`, `/metrics`); `None` on the
    /// embedded store.
    pub fn database_readiness(&self) -> Option<crate::api::health::DatabaseReadiness> {
        let db = self.store.database()?;
        let left = self.shared_keys.as_ref().and_then(|k| k.outage_left());
        Some(crate::api::health::DatabaseReadiness::of(db, left))
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

/// Which background jobs this node runs. On the embedded store there is one node and it
/// runs them all. On a shared database a job runs on the node holding its store lock
/// ([`Store::try_lock`]): taken by the first node that asks, kept while that node lives,
/// freed by the database when it dies (or its connection does: the holder notices and asks
/// again), then taken by the next node that asks. Every job is
/// safe to run on two nodes at once (conditional writes, derived ids, idempotency keys);
/// the lock only keeps them from doing the same work twice.
#[derive(Default)]
pub struct Leadership {
    jobs: tokio::sync::Mutex<Jobs>,
}

#[derive(Default)]
struct Jobs {
    held: std::collections::HashMap<&'static str, tollgate_storage::JobLock>,
    /// When another node last held a job's lock: asking again sooner costs a database
    /// session each time (callers ask every second, once per webhook endpoint), for an
    /// answer that is the same.
    refused: std::collections::HashMap<&'static str, std::time::Instant>,
    /// Failed attempts in a row per job (the database down): the first is logged, then
    /// one a minute.
    failing: std::collections::HashMap<&'static str, crate::telemetry::Failures>,
}

/// How long a node that found a job's lock taken waits before asking again.
const ASK_AGAIN_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

impl Leadership {
    /// Whether this node runs job `name` now (taking its lock if it is free).
    pub async fn lead(&self, store: &Store, name: &'static str) -> bool {
        let mut jobs = self.jobs.lock().await;
        match jobs.held.get(name) {
            Some(lock) if !lock.is_lost() => return true,
            Some(_) => {
                // Its connection is gone, and the database freed the lock with it: another
                // node may run the job now. Stop, and ask again like any node.
                jobs.held.remove(name);
                tracing::warn!(
                    job = name,
                    "lost the job's lock with its database connection"
                );
            }
            None => {}
        }
        if jobs
            .refused
            .get(name)
            .is_some_and(|at| at.elapsed() < ASK_AGAIN_AFTER)
        {
            return false;
        }
        match store.try_lock(name).await {
            Ok(Some(lock)) => {
                if store.is_shared() {
                    tracing::info!(job = name, "this node now runs the job");
                }
                jobs.refused.remove(name);
                jobs.failing.remove(name);
                jobs.held.insert(name, lock);
                true
            }
            Ok(None) => {
                jobs.failing.remove(name);
                jobs.refused.insert(name, std::time::Instant::now());
                false
            }
            Err(e) => {
                if let Some(n) = jobs.failing.entry(name).or_default().failed() {
                    tracing::warn!(job = name, error = %e, attempts = n, "cannot take the job's lock");
                }
                jobs.refused.insert(name, std::time::Instant::now());
                false
            }
        }
    }
}
