//! The way out: what Tollgate sends to the internet on a seller's behalf (webhook
//! deliveries), and the rules it obeys (`target`: no private or loopback address, no
//! Tollgate itself, never an environment proxy). A leaf: it holds handles the state keeps,
//! and imports nothing that holds or reads the state; the delivery workers
//! (`crate::webhooks::delivery`) use it.

pub mod mail;
pub mod target;
pub mod tax_id;
pub mod tax_ids;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::config::WebhookSettings;
use crate::domain::ids::WebhookEndpointId;
use target::TargetPolicy;

/// Wakes endpoint workers, holds the delivery clients and the target policy; owned by
/// `AppState`.
pub struct Hub {
    wake_tx: mpsc::UnboundedSender<WebhookEndpointId>,
    wake_rx: Mutex<Option<mpsc::UnboundedReceiver<WebhookEndpointId>>>,
    /// One client per target port (each resolver refuses Tollgate's own addresses on its
    /// port), or one through `webhooks.proxy`.
    clients: dashmap::DashMap<u16, reqwest::Client>,
    timeout: Duration,
    proxy: Option<String>,
    pub policy: TargetPolicy,
    /// When each key's last limit notice was written (see
    /// `crate::app::license_keys::limit_reached`).
    pub limit_notices: dashmap::DashMap<crate::domain::ids::LicenseKeyId, Instant>,
}

impl Hub {
    pub fn new(settings: &WebhookSettings, policy: TargetPolicy) -> anyhow::Result<Self> {
        let (wake_tx, wake_rx) = mpsc::unbounded_channel();
        let hub = Self {
            wake_tx,
            wake_rx: Mutex::new(Some(wake_rx)),
            clients: dashmap::DashMap::new(),
            timeout: Duration::from_secs_f64(settings.timeout_secs),
            proxy: (!settings.proxy.trim().is_empty()).then(|| settings.proxy.trim().to_string()),
            policy,
            limit_notices: dashmap::DashMap::new(),
        };
        // Fails at start-up on a proxy URL reqwest does not take.
        hub.client(443)?;
        Ok(hub)
    }

    /// Whether deliveries go through `webhooks.proxy`.
    pub fn proxied(&self) -> bool {
        self.proxy.is_some()
    }

    /// The client for deliveries to `port`. Never a proxy from the environment
    /// (`HTTPS_PROXY` and friends): the proxy would resolve the name and the address check
    /// would never run. Without `webhooks.proxy`, names resolve through the policy's
    /// guarded resolver for that port; with it, the proxy connects.
    pub fn client(&self, port: u16) -> Result<reqwest::Client, reqwest::Error> {
        let key = if self.proxy.is_some() { 0 } else { port };
        if let Some(c) = self.clients.get(&key) {
            return Ok(c.clone());
        }
        let builder = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.timeout)
            .connect_timeout(self.timeout)
            .user_agent(concat!("Tollgate-Webhooks/", env!("CARGO_PKG_VERSION")));
        let client = match &self.proxy {
            Some(proxy) => builder.proxy(reqwest::Proxy::all(proxy)?).build()?,
            None => builder.dns_resolver(self.policy.resolver(port)).build()?,
        };
        self.clients.insert(key, client.clone());
        Ok(client)
    }

    /// The receiving end of [`Hub::wake`], taken once by the workers' supervisor.
    pub fn take_wake_receiver(&self) -> Option<mpsc::UnboundedReceiver<WebhookEndpointId>> {
        self.wake_rx
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Tells the endpoint's worker there is something to look at (starting it if needed).
    pub fn wake(&self, endpoint: WebhookEndpointId) {
        let _ = self.wake_tx.send(endpoint);
    }
}
