//! Settings: defaults in code < `config.toml` < `TOLLGATE__<SECTION>__<KEY>` environment
//! variables. Unknown keys, in the file or the environment, are errors that name the key.

use std::path::{Path, PathBuf};

use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    pub server: ServerSettings,
    pub storage: StorageSettings,
    pub auth: AuthSettings,
    pub actors: ActorSettings,
    pub log: LogSettings,
    pub bootstrap: BootstrapSettings,
    pub checkout: CheckoutSettings,
    pub jobs: JobSettings,
    pub oauth2: OAuth2Settings,
    pub payments: PaymentSettings,
    pub rate_limits: RateLimitSettings,
    pub cors: CorsSettings,
    pub retention: RetentionSettings,
    pub idempotency: IdempotencySettings,
    pub webhooks: WebhookSettings,
    pub license_keys: LicenseKeySettings,
    pub metrics: MetricsSettings,
    pub email: EmailSettings,
    pub tax: TaxConfig,
    pub files: FilesSettings,
    pub updates: UpdatesSettings,
}

/// `requests` per `per_secs` seconds, with bursts up to `requests`; `requests = 0` lifts
/// the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    pub requests: u32,
    pub per_secs: u64,
}

impl Limit {
    pub const fn new(requests: u32, per_secs: u64) -> Self {
        Self { requests, per_secs }
    }
}

/// Rate limits (429 with `Retry-After`, `RateLimit` and `RateLimit-Policy`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimitSettings {
    /// `false` turns every limit off (load tests, benchmarks).
    pub enabled: bool,
    /// Sign-in attempts per client address.
    pub sign_in_per_ip: Limit,
    /// Sign-in (and sign-up) attempts per account (e-mail address) from one client address.
    pub sign_in_per_account: Limit,
    /// Sign-in attempts per account from every address together, for browsers that have not
    /// signed in to it before (no device cookie); far above one address's quotas, so only a
    /// distributed guess is slowed and the owner's own browser never is.
    pub sign_in_per_account_total: Limit,
    /// Milliseconds a failed sign-in of an account from an address delays the next one from
    /// that address, doubled for each further failure up to `sign_in_backoff_max_ms`; a
    /// success resets it.
    pub sign_in_backoff_base_ms: u64,
    pub sign_in_backoff_max_ms: u64,
    /// Sign-ups per client address.
    pub sign_up_per_ip: Limit,
    /// Token, introspection and revocation requests per client address.
    pub oauth_per_ip: Limit,
    /// Token, introspection and revocation requests per OAuth client.
    pub oauth_per_client: Limit,
    /// Public license-key validate/activate/deactivate per client address.
    pub license_keys_per_ip: Limit,
    /// Public license-key validate/activate/deactivate per key.
    pub license_keys_per_key: Limit,
    /// Authenticated API calls per token.
    pub api_per_token: Limit,
    /// Checkout links followed (`GET /buy/{product_id}`, each creates a checkout) per
    /// client address.
    pub checkout_links_per_ip: Limit,
    /// OAuth authorization codes issued per user and client.
    pub authorization_codes_per_user: Limit,
    /// POSTs with an `Idempotency-Key` per caller (token or session subject; client
    /// address when anonymous).
    pub idempotency_keys_per_caller: Limit,
    /// "Send me my keys again" requests per client address.
    pub key_resends_per_ip: Limit,
    /// "Send me my keys again" requests for one e-mail address from one client address.
    pub key_resends_per_address_client: Limit,
    /// "Send me my keys again" requests per e-mail address (and organization), whoever
    /// asks: no inbox gets more; above `key_resends_per_address_client`, so one stranger
    /// never reaches it.
    pub key_resends_per_address: Limit,
    /// Customer-portal sign-in codes asked for, per client address.
    pub portal_codes_per_ip: Limit,
    /// Customer-portal sign-in codes asked for one e-mail address from one client address.
    pub portal_codes_per_address_client: Limit,
    /// Customer-portal sign-in codes sent to one e-mail address (and organization), whoever
    /// asks: far above `portal_codes_per_address_client`, so one stranger never reaches it.
    pub portal_codes_per_address: Limit,
    /// Customer-portal sign-in attempts (codes typed), per client address.
    pub portal_sign_ins_per_ip: Limit,
    /// Milliseconds a sign-in code request or a key resend takes at least to answer,
    /// whether or not the address is a customer (its timing must not tell); 0: no floor.
    pub mail_request_min_answer_ms: u64,
    /// Deactivations that name the activation by its `label` instead of its id, per key
    /// (within its organization): a slot can be freed without the id, not churned.
    pub deactivations_by_label_per_key: Limit,
    /// Cancellations and uncancellations of one subscription (API, portal, dashboard).
    pub subscription_cancels_per_subscription: Limit,
    /// Receipts e-mailed to one address (beyond it they wait, never dropped).
    pub receipts_per_address: Limit,
}

impl Default for RateLimitSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            sign_in_per_ip: Limit::new(30, 60),
            sign_in_per_account: Limit::new(10, 60),
            sign_in_per_account_total: Limit::new(300, 60),
            sign_in_backoff_base_ms: 500,
            sign_in_backoff_max_ms: 30_000,
            sign_up_per_ip: Limit::new(20, 3600),
            oauth_per_ip: Limit::new(300, 60),
            oauth_per_client: Limit::new(600, 60),
            license_keys_per_ip: Limit::new(100, 1),
            license_keys_per_key: Limit::new(50, 1),
            api_per_token: Limit::new(100, 1),
            checkout_links_per_ip: Limit::new(60, 60),
            authorization_codes_per_user: Limit::new(30, 60),
            idempotency_keys_per_caller: Limit::new(600, 60),
            key_resends_per_ip: Limit::new(10, 3600),
            key_resends_per_address_client: Limit::new(3, 3600),
            key_resends_per_address: Limit::new(10, 3600),
            portal_codes_per_ip: Limit::new(12, 3600),
            portal_codes_per_address_client: Limit::new(5, 3600),
            portal_codes_per_address: Limit::new(30, 3600),
            portal_sign_ins_per_ip: Limit::new(12, 600),
            mail_request_min_answer_ms: 250,
            deactivations_by_label_per_key: Limit::new(10, 3600),
            subscription_cancels_per_subscription: Limit::new(10, 3600),
            receipts_per_address: Limit::new(20, 3600),
        }
    }
}

impl RateLimitSettings {
    fn validate(&self) -> Result<(), ConfigError> {
        // Every `Limit` field, read through serde: a limit added later is checked too.
        let fields = serde_json::to_value(self).unwrap_or_default();
        let limits = fields.as_object().into_iter().flatten();
        for (name, limit) in limits.filter(|(_, v)| v.is_object()) {
            if limit["per_secs"] == 0 {
                return Err(ConfigError::Invalid(format!(
                    "rate_limits.{name}.per_secs: must be > 0 (set requests = 0 to lift the limit)"
                )));
            }
        }
        if self.sign_in_backoff_max_ms < self.sign_in_backoff_base_ms {
            return Err(ConfigError::Invalid(
                "rate_limits.sign_in_backoff_max_ms: must be >= sign_in_backoff_base_ms".into(),
            ));
        }
        Ok(())
    }
}

/// Cross-origin requests from browser apps.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CorsSettings {
    /// Origins (`https://app.example.com`) allowed to call the rest of the API from a
    /// browser; the public license-key, token, introspection, revocation, userinfo and
    /// `/.well-known/*` endpoints allow any origin.
    pub allowed_origins: Vec<String>,
}

/// What is purged, and when.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetentionSettings {
    /// Seconds between purges.
    pub interval_secs: u64,
    /// Hours a used or expired authorization code, an expired session, a revoked or expired
    /// token, or an expired checkout's transient data is kept before it is purged.
    pub grace_hours: u64,
    /// OAuth clients one user may register.
    pub max_oauth_clients_per_user: u32,
    /// Personal access tokens one user may hold.
    pub max_personal_access_tokens_per_user: u32,
    /// Organization access tokens (not deleted) one organization may hold.
    pub max_organization_access_tokens_per_organization: u32,
}

impl Default for RetentionSettings {
    fn default() -> Self {
        Self {
            interval_secs: 3600,
            grace_hours: 24,
            max_oauth_clients_per_user: 50,
            max_personal_access_tokens_per_user: 100,
            max_organization_access_tokens_per_organization: 100,
        }
    }
}

/// `Idempotency-Key` on POST requests.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IdempotencySettings {
    /// Hours a stored response answers a repeated key.
    pub ttl_hours: u64,
    /// Stored answers one caller (token or session subject; client address when
    /// anonymous) may keep; a new key beyond it is refused with 429.
    pub max_keys_per_caller: u64,
}

impl Default for IdempotencySettings {
    fn default() -> Self {
        Self {
            ttl_hours: 24,
            max_keys_per_caller: 10_000,
        }
    }
}

/// `GET /metrics` (Prometheus text format).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsSettings {
    /// Bearer token a scrape must send; empty (the default): `/metrics` answers 404.
    pub token: String,
}

/// License-key validation.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LicenseKeySettings {
    /// Milliseconds a key's validation statistics (`validations`, `last_validated_at`)
    /// may stay in memory before they are written: 0 = strict (every validation is durable
    /// before its reply); > 0 = batched (one write per key per interval; `kill -9` loses at
    /// most this interval's counts). Usage increments, activations and status changes are
    /// durable before their reply in both modes. On PostgreSQL each node adds its counts
    /// to every key's tally row as one additive delta per interval (nodes never conflict
    /// over them); strict mode there is one conditional statement per validation.
    pub stats_flush_ms: u64,
}

impl Default for LicenseKeySettings {
    fn default() -> Self {
        Self {
            stats_flush_ms: 1000,
        }
    }
}

/// Delivery of webhook events to sellers' endpoints.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebhookSettings {
    /// Allow endpoints on loopback, private, link-local and other non-public addresses
    /// (tests, local development). Tollgate's own address is refused regardless.
    pub allow_private_targets: bool,
    /// Seconds one delivery attempt may take, connection included.
    pub timeout_secs: f64,
    /// Seconds before each retry after a failed attempt (each with ±20% jitter); after
    /// the last one fails, the event is marked failed.
    pub retry_delays_secs: Vec<f64>,
    /// An endpoint is disabled after this many failed attempts in a row...
    pub disable_after_failures: u32,
    /// ...spanning at least this many hours without a success.
    pub disable_after_hours: f64,
    /// Days events and their delivery log are kept (Polar: 90).
    pub retention_days: u64,
    /// An egress proxy every delivery goes through (`http://host:port`); empty: none.
    /// Proxies from the environment (`HTTPS_PROXY`, ...) are never used for deliveries.
    /// The proxy resolves target names itself, so it must refuse non-public addresses.
    pub proxy: String,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        Self {
            allow_private_targets: false,
            timeout_secs: 10.0,
            retry_delays_secs: vec![5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 36000.0],
            disable_after_failures: 20,
            disable_after_hours: 24.0,
            retention_days: 90,
            proxy: String::new(),
        }
    }
}

impl WebhookSettings {
    fn validate(&self) -> Result<(), ConfigError> {
        let bad =
            |key: &str, why: &str| Err(ConfigError::Invalid(format!("webhooks.{key}: {why}")));
        if !(self.timeout_secs.is_finite() && self.timeout_secs > 0.0 && self.timeout_secs <= 300.0)
        {
            return bad("timeout_secs", "must be > 0 and <= 300");
        }
        if self
            .retry_delays_secs
            .iter()
            .any(|d| !(d.is_finite() && *d >= 0.0 && *d <= 7.0 * 86400.0))
        {
            return bad(
                "retry_delays_secs",
                "each delay must be between 0 and one week",
            );
        }
        if !(self.disable_after_hours.is_finite() && self.disable_after_hours >= 0.0) {
            return bad("disable_after_hours", "must be >= 0");
        }
        if self.retention_days == 0 {
            return bad("retention_days", "must be > 0");
        }
        let proxy = self.proxy.trim();
        if !proxy.is_empty() {
            match url::Url::parse(proxy) {
                Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {}
                _ => return bad("proxy", "must be an http:// or https:// URL, or empty"),
            }
        }
        Ok(())
    }
}

/// Which payment processor charges buyers, and its credentials.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PaymentSettings {
    /// `test` (built in, no network) or `stripe`.
    pub processor: ProcessorKind,
    /// Stripe secret key (`sk_…`); required with `processor = "stripe"`.
    pub stripe_secret_key: String,
    /// Stripe publishable key (`pk_…`), given to the hosted checkout page.
    pub stripe_publishable_key: String,
    /// Signing secret of the Stripe webhook endpoint (`whsec_…`).
    pub stripe_webhook_secret: String,
    /// Base URL of Stripe's API (tests point it at a local fake).
    pub stripe_api_base: String,
    /// Where the hosted checkout page loads Stripe.js from; the page's Content-Security-Policy
    /// allows scripts from this URL's origin (tests point it at a local fake's).
    pub stripe_js_url: String,
    /// A file holding the domain-association file Apple Pay asks for (Stripe's Dashboard
    /// gives it), served as is at `/.well-known/apple-developer-merchantid-domain-association`;
    /// empty: not served (404). Read once at start-up ([`PaymentSettings::validate`]).
    pub apple_pay_domain_association: String,
    /// That file's content once read (by `validate`; read it with
    /// [`PaymentSettings::apple_pay_file`]).
    #[serde(skip)]
    pub apple_pay_file: std::sync::Arc<std::sync::OnceLock<String>>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProcessorKind {
    #[default]
    Test,
    Stripe,
}

/// Stripe's own API.
pub const STRIPE_API_BASE: &str = "https://api.stripe.com";

/// Stripe.js, from Stripe.
pub const STRIPE_JS_URL: &str = "https://js.stripe.com/v3/";

impl Default for PaymentSettings {
    fn default() -> Self {
        Self {
            processor: ProcessorKind::Test,
            stripe_secret_key: String::new(),
            stripe_publishable_key: String::new(),
            stripe_webhook_secret: String::new(),
            stripe_api_base: STRIPE_API_BASE.into(),
            stripe_js_url: STRIPE_JS_URL.into(),
            apple_pay_domain_association: String::new(),
            apple_pay_file: Default::default(),
        }
    }
}

/// Keys never reach a log line, not even through `{:?}` of the settings.
impl std::fmt::Debug for PaymentSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = |s: &str| {
            if s.is_empty() {
                "<unset>"
            } else {
                "<redacted>"
            }
        };
        f.debug_struct("PaymentSettings")
            .field("processor", &self.processor)
            .field("stripe_secret_key", &set(&self.stripe_secret_key))
            .field("stripe_publishable_key", &set(&self.stripe_publishable_key))
            .field("stripe_webhook_secret", &set(&self.stripe_webhook_secret))
            .field("stripe_api_base", &self.stripe_api_base)
            .field("stripe_js_url", &self.stripe_js_url)
            .field(
                "apple_pay_domain_association",
                &self.apple_pay_domain_association,
            )
            .finish()
    }
}

impl PaymentSettings {
    /// The Apple Pay domain-association file's content, when one is configured (read by
    /// [`PaymentSettings::validate`], which start-up runs).
    pub fn apple_pay_file(&self) -> Option<&str> {
        self.apple_pay_file.get().map(String::as_str)
    }

    /// Reads the Apple Pay domain-association file named by the settings (once): a path
    /// that cannot be read, or an empty file, stops start-up naming the key.
    fn read_apple_pay_file(&self) -> Result<(), ConfigError> {
        let path = self.apple_pay_domain_association.trim();
        if path.is_empty() || self.apple_pay_file.get().is_some() {
            return Ok(());
        }
        let bad = |why: String| {
            ConfigError::Invalid(format!(
                "payments.apple_pay_domain_association: {path}: {why}"
            ))
        };
        // Apple's file is a few kilobytes of hex; anything much larger is not it.
        const MAX_BYTES: u64 = 64 * 1024;
        let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
        if !meta.is_file() || meta.len() > MAX_BYTES {
            return Err(bad(format!("expected a file of at most {MAX_BYTES} bytes")));
        }
        let content = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        if content.trim().is_empty() {
            return Err(bad("the file is empty".into()));
        }
        let _ = self.apple_pay_file.set(content);
        Ok(())
    }

    /// A processor that cannot work stops start-up with a message naming the key.
    fn validate(&self) -> Result<(), ConfigError> {
        self.read_apple_pay_file()?;
        if self.processor != ProcessorKind::Stripe {
            return Ok(());
        }
        let bad = |key: &str, why: &str| {
            Err(ConfigError::Invalid(format!(
                "payments.{key}: {why} (needed with payments.processor = \"stripe\")"
            )))
        };
        if !(self.stripe_secret_key.starts_with("sk_") || self.stripe_secret_key.starts_with("rk_"))
        {
            return bad(
                "stripe_secret_key",
                "expected a Stripe secret key (sk_… or rk_…)",
            );
        }
        if !self.stripe_publishable_key.starts_with("pk_") {
            return bad(
                "stripe_publishable_key",
                "expected a Stripe publishable key (pk_…)",
            );
        }
        if !self.stripe_webhook_secret.starts_with("whsec_") {
            return bad(
                "stripe_webhook_secret",
                "expected a webhook signing secret (whsec_…)",
            );
        }
        match url::Url::parse(&self.stripe_api_base) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
            _ => return bad("stripe_api_base", "expected an http(s) URL"),
        }
        // Buyers' browsers run this script next to their card number: https only, except on
        // the loopback interface (a local fake in tests).
        match url::Url::parse(&self.stripe_js_url) {
            Ok(u) if u.scheme() == "https" && u.host().is_some() => Ok(()),
            Ok(u) if u.scheme() == "http" && is_loopback(&u) => Ok(()),
            _ => bad(
                "stripe_js_url",
                "expected an https:// URL (http:// only on 127.0.0.1, [::1] or localhost)",
            ),
        }
    }
}

fn is_loopback(u: &url::Url) -> bool {
    match u.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    }
}

mod email;
pub use email::{EmailSettings, EmailTransport};

mod files;
pub use files::{FilesSettings, S3Settings};

mod updates;
pub use updates::UpdatesSettings;

mod tax;
pub use tax::{TaxConfig, HMRC_URL, VIES_URL};

mod storage;
pub use storage::{Durability, StorageBackend, StorageSettings};

/// A URL with its password replaced (for logs).
pub fn redacted_url(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("redacted"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) if raw.is_empty() => String::new(),
        Err(_) => "<not a URL>".into(),
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OAuth2Settings {
    /// Lifetime of access tokens from the authorization_code grant (Polar: 10 days).
    pub access_token_ttl_secs: u64,
    /// Lifetime of access tokens from the refresh_token grant (Polar: 1 hour).
    pub refreshed_access_token_ttl_secs: u64,
    /// Lifetime of authorization codes (single use).
    pub authorization_code_ttl_secs: u64,
    /// Unexpired, unexchanged codes one user may hold for one client; a new code drops
    /// the oldest beyond it.
    pub max_outstanding_codes: usize,
    /// Lifetime of id_tokens; also how long a rotated signing key stays published.
    pub id_token_ttl_secs: u64,
    /// Lifetime of a browser session on the authorization pages.
    pub session_ttl_secs: u64,
    /// Size of generated RSA signing keys.
    pub signing_key_bits: usize,
    /// Generate the signing key at the first start (else when first needed; tests use this
    /// to skip RSA key generation in the many servers that never sign a token).
    pub generate_signing_key_on_start: bool,
}

impl Default for OAuth2Settings {
    fn default() -> Self {
        Self {
            access_token_ttl_secs: 864_000,
            refreshed_access_token_ttl_secs: 3600,
            authorization_code_ttl_secs: 300,
            max_outstanding_codes: 10,
            id_token_ttl_secs: 3600,
            session_ttl_secs: 604_800,
            signing_key_bits: 2048,
            generate_signing_key_on_start: true,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CheckoutSettings {
    /// Seconds a new checkout stays open (Polar: 30 minutes).
    pub ttl_secs: u64,
    /// A MaxMind-format database (`.mmdb`, country or city) the seller provides: a
    /// checkout without an explicit currency is presented in the currency of the country
    /// of the buyer's IP address. Empty (the default): no lookup, the organization's
    /// default currency.
    pub geoip_database: std::path::PathBuf,
}

impl Default for CheckoutSettings {
    fn default() -> Self {
        Self {
            ttl_secs: 1800,
            geoip_database: std::path::PathBuf::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JobSettings {
    /// Seconds between sweeps: expiring checkouts, renewing or ending subscriptions,
    /// revoking the license keys of ended subscriptions.
    pub sweep_interval_secs: u64,
    /// Seconds a checkout may stay `confirmed` (paid for, not yet completed) before a sweep
    /// completes it: the confirm that should have (its node died between the charge and the
    /// completion, or the processor did not answer) is given up on. The completion is safe
    /// to run twice (one order, one charge per idempotency key).
    pub confirmed_grace_secs: u64,
}

impl Default for JobSettings {
    fn default() -> Self {
        Self {
            sweep_interval_secs: 15,
            confirmed_grace_secs: 60,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSettings {
    /// Address and port to listen on; port 0 picks a free port.
    pub bind: String,
    /// The service's public base URL; derived from the bind address when empty.
    pub public_url: String,
    /// HTTP worker threads; 0 means one per core.
    pub workers: usize,
    /// Largest accepted request body, in bytes.
    pub body_limit_bytes: usize,
    /// Largest body of `POST /v1/license-keys/import` (an authenticated bulk import of up
    /// to 1,000 keys), in bytes.
    pub import_body_limit_bytes: usize,
    /// Seconds to let in-flight requests finish on shutdown.
    pub shutdown_timeout_secs: u64,
    /// Milliseconds a client has to send a request's head (line and headers).
    pub request_head_timeout_ms: u64,
    /// Seconds a client has to send a request's body.
    pub body_timeout_secs: u64,
    /// Seconds an idle keep-alive connection stays open.
    pub keep_alive_secs: u64,
    /// Connections one client address may hold open at once.
    pub max_connections_per_ip: usize,
    /// Addresses (or CIDR ranges) of reverse proxies whose `X-Forwarded-For` is believed;
    /// empty: the client address is always the peer's.
    pub trusted_proxies: Vec<String>,
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8000".into(),
            public_url: String::new(),
            workers: 0,
            body_limit_bytes: 64 * 1024,
            import_body_limit_bytes: 4 * 1024 * 1024,
            shutdown_timeout_secs: 10,
            request_head_timeout_ms: 5000,
            body_timeout_secs: 30,
            keep_alive_secs: 5,
            max_connections_per_ip: 256,
            trusted_proxies: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthSettings {
    /// Key for the HMAC-SHA256 hashes of tokens. Empty: generated on first start and kept
    /// in the store.
    pub secret: String,
    /// Base URL of the browser-facing authorization pages; empty means `public_url`.
    pub auth_url: String,
    /// Password hashes (argon2id, 19 MiB each) computed at once; 0 means one per core.
    pub password_hash_concurrency: usize,
    /// Password checks that may wait for a hashing slot; more answer 503 at once.
    pub password_hash_queue: usize,
}

impl Default for AuthSettings {
    fn default() -> Self {
        Self {
            secret: String::new(),
            auth_url: String::new(),
            password_hash_concurrency: 0,
            password_hash_queue: 32,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ActorSettings {
    /// Arbiters (threads) aggregate actors are spread over; 0 means one per core.
    pub arbiters: usize,
    pub mailbox_capacity: usize,
    /// How long a request waits for an actor's reply before answering 503.
    pub send_timeout_ms: u64,
    /// Actors idle this long are evicted from memory.
    pub idle_timeout_secs: u64,
}

impl Default for ActorSettings {
    fn default() -> Self {
        Self {
            arbiters: 0,
            mailbox_capacity: 256,
            send_timeout_ms: 5000,
            idle_timeout_secs: 300,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogSettings {
    /// Filter in `RUST_LOG` syntax; `RUST_LOG` itself wins when set.
    pub level: String,
    /// "pretty" or "json".
    pub format: LogFormat,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Pretty,
    Json,
}

impl Default for LogSettings {
    fn default() -> Self {
        Self {
            level: "info".into(),
            format: LogFormat::Pretty,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BootstrapSettings {
    /// E-mail of the admin user created on first start with an empty store.
    pub admin_email: String,
}

impl Default for BootstrapSettings {
    fn default() -> Self {
        Self {
            admin_email: "admin@tollgate.localhost".into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration file {0} does not exist")]
    Missing(PathBuf),
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

impl Settings {
    /// Loads `path` (skipped when `required` is false and it does not exist), then the
    /// environment.
    pub fn load(path: &Path, required: bool) -> Result<Settings, ConfigError> {
        if required && !path.exists() {
            return Err(ConfigError::Missing(path.to_path_buf()));
        }
        Self::from_figment(
            Figment::from(Serialized::defaults(Settings::default()))
                .merge(Toml::file(path))
                .merge(Env::prefixed("TOLLGATE__").split("__")),
        )
    }

    fn from_figment(figment: Figment) -> Result<Settings, ConfigError> {
        let settings: Settings = figment.extract().map_err(|e| {
            let messages: Vec<String> = e
                .into_iter()
                .map(|e| {
                    let key = e.path.join(".");
                    if key.is_empty() {
                        e.kind.to_string()
                    } else {
                        format!("{key}: {}", e.kind)
                    }
                })
                .collect();
            ConfigError::Invalid(messages.join("; "))
        })?;
        settings.validate()?;
        Ok(settings)
    }

    /// Checks what serde cannot: `load` calls it, and so does `Application::build` for
    /// settings made in code.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.server.bind.parse::<std::net::SocketAddr>().is_err()
            && !self.server.bind.contains(':')
        {
            return Err(ConfigError::Invalid(format!(
                "server.bind: expected address:port, got {:?}",
                self.server.bind
            )));
        }
        if self.server.body_limit_bytes == 0 {
            return Err(ConfigError::Invalid(
                "server.body_limit_bytes: must be > 0".into(),
            ));
        }
        if self.server.import_body_limit_bytes == 0 {
            return Err(ConfigError::Invalid(
                "server.import_body_limit_bytes: must be > 0".into(),
            ));
        }
        if self.actors.mailbox_capacity == 0 {
            return Err(ConfigError::Invalid(
                "actors.mailbox_capacity: must be > 0".into(),
            ));
        }
        crate::client_ip::TrustedProxies::parse(&self.server.trusted_proxies)
            .map_err(ConfigError::Invalid)?;
        self.email.validate()?;
        if self.oauth2.max_outstanding_codes == 0 {
            return Err(ConfigError::Invalid(
                "oauth2.max_outstanding_codes: must be > 0".into(),
            ));
        }
        let metrics_token = self.metrics.token.trim();
        if !metrics_token.is_empty() && metrics_token.chars().count() < 32 {
            return Err(ConfigError::Invalid(
                "metrics.token: must have at least 32 characters (or be empty to turn /metrics off)"
                    .into(),
            ));
        }
        self.rate_limits.validate()?;
        self.webhooks.validate()?;
        self.tax.validate()?;
        self.storage.validate()?;
        self.files.validate()?;
        self.updates.validate()?;
        self.payments.validate()
    }

    /// Settings for tests: port 0 on loopback, data in `data_dir`.
    pub fn for_tests(data_dir: &Path) -> Settings {
        let mut s = Settings::default();
        s.server.bind = "127.0.0.1:0".into();
        s.server.workers = 2;
        s.storage.data_dir = data_dir.to_path_buf();
        s.storage.cache_capacity_mb = 16;
        s.log.level = "warn".into();
        s.oauth2.generate_signing_key_on_start = false;
        // Tests that read mail choose a transport; the others send none.
        s.email.transport = EmailTransport::None;
        s
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
