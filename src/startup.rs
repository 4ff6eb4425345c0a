use std::net::TcpListener;
use std::sync::Arc;

use actix_http::error::DispatchError;
use actix_service::{fn_service, map_config, IntoServiceFactory, ServiceFactoryExt};
use actix_web::dev::{AppConfig, Server};
use actix_web::middleware::from_fn;
use actix_web::rt::net::TcpStream;
use actix_web::{web, App};

use crate::http_io::ShapedIo;
use tollgate_storage::Store;

use crate::auth::TokenHasher;
use crate::config::Settings;
use crate::error::ApiError;
use crate::state::AppState;

/// The route table: every module with routes, the JSON API first (its license-key hot
/// path leads), then the OAuth 2.0 endpoints, the pages, the API's documents and the
/// administration endpoints.
fn mount(cfg: &mut web::ServiceConfig) {
    crate::routes::configure(cfg);
    crate::oauth2::configure(cfg);
    crate::web::configure(cfg);
    crate::openapi::configure(cfg);
    crate::admin::configure(cfg);
}

/// No route matched: redirect (307) when the other spelling of a trailing slash exists, as
/// Starlette does for Polar; otherwise 404.
async fn unmatched(req: actix_web::HttpRequest) -> Result<actix_web::HttpResponse, ApiError> {
    let path = req.path();
    let other = match path.strip_suffix('/') {
        Some(stripped) if !stripped.is_empty() => stripped.to_string(),
        Some(_) => return Err(ApiError::not_found()),
        None => format!("{path}/"),
    };
    if req.resource_map().has_resource(&other) {
        let location = match req.query_string() {
            "" => other,
            q => format!("{other}?{q}"),
        };
        return Ok(actix_web::HttpResponse::TemporaryRedirect()
            .insert_header((actix_web::http::header::LOCATION, location))
            .finish());
    }
    Err(ApiError::not_found())
}

/// The configured payment processor (`payments.processor`).
fn payment_processor(
    settings: &Settings,
    store: &Store,
) -> anyhow::Result<Arc<dyn crate::payments::PaymentProcessor>> {
    Ok(match settings.payments.processor {
        crate::config::ProcessorKind::Test => Arc::new(crate::payments::TestProcessor::default()),
        crate::config::ProcessorKind::Stripe => {
            tracing::info!(api = %settings.payments.stripe_api_base, "payments go through Stripe");
            Arc::new(crate::payments::stripe::StripeProcessor::new(
                &settings.payments,
                store.clone(),
            )?)
        }
    })
}

/// The tax services: the built-in rules, and Stripe Tax when payments go through Stripe
/// (with the same key).
fn tax_services(settings: &Settings) -> anyhow::Result<crate::payments::TaxServices> {
    let stripe: Option<Arc<dyn crate::payments::TaxService>> = match settings.payments.processor {
        crate::config::ProcessorKind::Test => None,
        crate::config::ProcessorKind::Stripe => Some(Arc::new(
            crate::payments::stripe_tax::StripeTax::new(&settings.payments)?,
        )),
    };
    Ok(crate::payments::TaxServices::new(
        Arc::new(crate::payments::BuiltinTax),
        stripe,
    ))
}

/// SIGTERM and SIGINT stop the HTTP server gracefully (in-flight requests get
/// `server.shutdown_timeout_secs`), SIGQUIT at once; [`Application::run_until_stopped`] then
/// writes what is held in memory and flushes the store before returning.
/// The object store of `[files.s3]` (an endpoint it cannot use, or a bucket it cannot list,
/// stops start-up naming the key), or None for the data directory: then a shared store (several nodes) is warned
/// that each file's bytes stay on the node that took them.
async fn file_store(
    settings: &Settings,
    shared: bool,
) -> anyhow::Result<Option<Arc<dyn crate::files::FileBackend>>> {
    match &settings.files.s3 {
        Some(s3) => {
            let store = crate::files::s3::S3Files::new(s3).map_err(anyhow::Error::msg)?;
            store.probe().await.map_err(anyhow::Error::msg)?;
            tracing::info!(
                store = store.name(),
                "files: bytes in the S3-compatible store"
            );
            Ok(Some(Arc::new(store)))
        }
        None => {
            if shared {
                tracing::warn!(
                    "files: no [files.s3] with a shared store: each file's bytes stay under the \
                     data directory of the node that took them (set [files.s3] for several nodes)"
                );
            }
            Ok(None)
        }
    }
}

fn spawn_signal_handler(handle: actix_web::dev::ServerHandle) {
    actix_web::rt::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int), Ok(mut quit)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::quit()),
        ) else {
            tracing::error!("cannot install the signal handlers");
            return;
        };
        let graceful = tokio::select! {
            _ = term.recv() => true,
            _ = int.recv() => true,
            _ = quit.recv() => false,
        };
        tracing::info!(graceful, "stop signal received");
        handle.stop(graceful).await;
    });
}

/// The running service: bound, wired, serving until SIGTERM/SIGINT or [`Application::stop`].
pub struct Application {
    port: u16,
    server: Server,
    state: web::Data<AppState>,
}

/// Sets the process's umask to 077, so that every file and directory it creates from now
/// on is owner-only whatever the umask it was started with: the store's files (which the
/// storage engine creates with its own modes), backups, the bootstrap token, mail files.
/// `main` calls it first; what Tollgate creates itself also gets explicit modes
/// (`crate::admin::create_private_dir`).
pub fn owner_only_files() {
    use rustix::fs::Mode;
    rustix::process::umask(Mode::RWXG | Mode::RWXO);
}

impl Application {
    pub async fn build(settings: Settings) -> anyhow::Result<Self> {
        Self::build_with_clock(settings, tollgate_actors::SystemClock::shared()).await
    }

    /// Builds the service with a given clock (tests pass a `ManualClock`).
    pub async fn build_with_clock(
        settings: Settings,
        clock: tollgate_actors::SharedClock,
    ) -> anyhow::Result<Self> {
        settings.validate()?;
        // Owner-only before the store creates anything in it (see `owner_only_files`).
        crate::admin::create_private_dir(&settings.storage.data_dir)?;
        let store = Store::connect(&settings.storage.store_config()).await?;
        tracing::info!(engine = store.engine_name(), "store open");
        // Nodes starting together on one database take turns here: one generates the
        // token secret and the admin, the others read them.
        let first_start = crate::bootstrap::exclusive(&store).await?;
        let secret = crate::bootstrap::server_secret(&store, &settings.auth.secret).await?;
        let hasher = TokenHasher::new(&secret);
        crate::bootstrap::run(
            &store,
            &hasher,
            &settings.storage.data_dir,
            &settings.bootstrap.admin_email,
        )
        .await?;
        crate::app::catalog::customers::ensure_search_indexes(&store).await?;

        let shared_keys = shared_keys(&store, &settings).await?;

        let listener = TcpListener::bind(&settings.server.bind)?;
        let addr = listener.local_addr()?;
        let public_url = if settings.server.public_url.is_empty() {
            format!("http://{addr}")
        } else {
            settings.server.public_url.trim_end_matches('/').to_string()
        };
        let registry = tollgate_actors::RegistryConfig {
            arbiters: settings.actors.arbiters,
            mailbox_capacity: settings.actors.mailbox_capacity,
            send_timeout: std::time::Duration::from_millis(settings.actors.send_timeout_ms),
            idle_timeout: Some(std::time::Duration::from_secs(
                settings.actors.idle_timeout_secs,
            )),
            write_back: None,
            // This process alone writes the embedded store; a shared database has other
            // writers, so answers that write nothing check their revision first.
            check_freshness: store.is_shared(),
        };
        let services = crate::state::Services {
            checkouts: tollgate_actors::Registry::start(
                store.clone(),
                clock.clone(),
                registry.clone(),
            )?,
            subscriptions: tollgate_actors::Registry::start(
                store.clone(),
                clock.clone(),
                registry.clone(),
            )?,
            license_keys: tollgate_actors::Registry::start(
                store.clone(),
                clock.clone(),
                tollgate_actors::RegistryConfig {
                    write_back: (settings.license_keys.stats_flush_ms > 0).then(|| {
                        std::time::Duration::from_millis(settings.license_keys.stats_flush_ms)
                    }),
                    ..registry
                },
            )?,
            processor: payment_processor(&settings, &store)?,
            tax: tax_services(&settings)?,
            tax_ids: Arc::new(crate::egress::tax_ids::TaxIdChecker::from_config(
                &settings.tax,
            )?),
            webhooks: crate::egress::Hub::new(
                &settings.webhooks,
                crate::egress::target::TargetPolicy::new(
                    settings.webhooks.allow_private_targets,
                    &public_url,
                    Some(addr),
                ),
            )?,
            mailer: Arc::new(crate::egress::mail::Mailer::new(
                &settings.email,
                &settings.storage.data_dir,
            )?),
            metrics: Arc::new(crate::metrics::Metrics::new()?),
            shared_keys,
            geoip: crate::geoip::GeoIp::open(&settings.checkout.geoip_database)
                .map_err(anyhow::Error::msg)?,
            object_store: file_store(&settings, store.is_shared()).await?,
            clock,
        };
        let settings = Arc::new(settings);
        let state = web::Data::new(AppState::new(
            store,
            hasher,
            settings.clone(),
            public_url,
            services,
        ));

        let app_state = state.clone();
        let body_limit = settings.server.body_limit_bytes;
        let cors = web::Data::new(crate::cors::CorsPolicy::new(&settings.cors.allowed_origins));
        let connections =
            crate::middleware::ConnectionCounter::new(settings.server.max_connections_per_ip);
        let server_settings = &settings.server;
        let inflight = web::Data::new(crate::idempotency::InFlight::new());
        let make_app = move || {
            App::new()
                .app_data(app_state.clone())
                .app_data(cors.clone())
                .app_data(inflight.clone())
                .app_data(web::PayloadConfig::new(body_limit))
                .wrap(from_fn(crate::middleware::log_and_shape_errors))
                .wrap(from_fn(crate::idempotency::idempotency))
                .wrap(from_fn(crate::middleware::guard_connections))
                .wrap(from_fn(crate::cors::cors))
                .wrap(from_fn(crate::middleware::api_version))
                .configure(mount)
                .default_service(web::to(unmatched))
        };
        // actix-web's `HttpServer`, assembled by hand so that every connection goes
        // through `ShapedIo` (JSON bodies for the errors actix-http writes by itself).
        let head_timeout =
            std::time::Duration::from_millis(server_settings.request_head_timeout_ms);
        let keep_alive = std::time::Duration::from_secs(server_settings.keep_alive_secs);
        // Signals are handled below, not by actix-server: after a signal it stops the whole
        // actix System 300 ms after the HTTP server, which would race the work that follows
        // the server's stop (writing the license keys' batched counters, the final flush).
        let mut builder = actix_server::Server::build()
            .shutdown_timeout(settings.server.shutdown_timeout_secs)
            .disable_signals();
        if settings.server.workers > 0 {
            builder = builder.workers(settings.server.workers);
        }
        let server = builder
            .listen("tollgate", listener, move || {
                let connections = connections.clone();
                let app = make_app()
                    .into_factory()
                    .map_err(|err: actix_web::Error| err.error_response());
                let http = actix_http::HttpService::build()
                    .keep_alive(keep_alive)
                    .client_request_timeout(head_timeout)
                    .local_addr(addr)
                    .on_connect_ext(move |io: &ShapedIo<TcpStream>, data| {
                        if let Some(peer) = io.peer_addr() {
                            data.insert(connections.open(peer.ip()));
                        }
                    })
                    // actix-web's own host/address fallback (its constructor is private);
                    // nothing here builds URLs from it: links use `server.public_url`.
                    .h1(map_config(app, |_| AppConfig::default()));
                fn_service(|io: TcpStream| async move {
                    let peer = io.peer_addr().ok();
                    Ok::<_, DispatchError>((ShapedIo::new(io), peer))
                })
                .and_then(http)
            })?
            .run();
        spawn_signal_handler(server.handle());
        // Checkouts a crash left confirmed are completed before the service reports ready.
        let recovered = crate::app::checkout::recover(&state).await?;
        if recovered > 0 {
            tracing::info!(
                recovered,
                "completed confirmed checkouts left by a previous run"
            );
        }
        // The id_token signing key exists from the first start on, stored and published.
        if settings.oauth2.generate_signing_key_on_start {
            state
                .signing_keys
                .ensure(&state.store, settings.oauth2.signing_key_bits, state.now())
                .await?;
        }
        // Held until here: the signing key too is made once, by the first node.
        drop(first_start);
        crate::jobs::start(state.clone()).await?;
        state.set_ready(true);
        tracing::info!(%addr, "listening");
        Ok(Self {
            port: addr.port(),
            server,
            state,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn state(&self) -> web::Data<AppState> {
        self.state.clone()
    }

    /// A handle that stops the server gracefully (as SIGTERM does).
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    /// Serves until stopped, drains in-flight requests, then flushes the store.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        self.server.await?;
        self.state.set_ready(false);
        // A failed store cannot flush (and sled's flush may never return then); everything
        // acknowledged is durable already.
        if !self.state.store.health().is_healthy() {
            tracing::warn!("stopped without a final flush: the store has failed");
            return Ok(());
        }
        // Validation counters held in memory (batched mode) are written before the flush.
        if let Some(shared) = &self.state.shared_keys {
            match shared.flush().await {
                Ok(n) => tracing::info!(validations = n, "license key counters written"),
                Err(e) => {
                    tracing::warn!(error = %e, "license key counters not written at shutdown")
                }
            }
        }
        let keys = self.state.license_keys.passivate_all().await;
        tracing::info!(
            keys,
            write_backs = self.state.license_keys.stats().write_backs_total,
            "license keys passivated"
        );
        if let Err(e) = self.state.validation_counts.flush(&self.state.store).await {
            tracing::warn!(error = %e, "validation day counters not written at shutdown");
        }
        self.state.store.flush_blocking()?;
        tracing::info!("stopped; store flushed");
        Ok(())
    }
}

/// On a shared store (PostgreSQL): every key has its tally row (keys copied in or written
/// by an older build get theirs), the change listener runs, and this node's validations
/// go through [`SharedKeys`](tollgate_actors::license_key::shared::SharedKeys), whose
/// batched counts a task adds to the store every `license_keys.stats_flush_ms`. `None` on
/// the embedded store.
async fn shared_keys(
    store: &Store,
    settings: &Settings,
) -> anyhow::Result<Option<Arc<tollgate_actors::license_key::shared::SharedKeys>>> {
    use tollgate_actors::license_key::{shared::SharedKeys, LicenseKey};
    if !store.is_shared() {
        return Ok(None);
    }
    let backfilled = store.ensure_tallies::<LicenseKey>().await?;
    if backfilled > 0 {
        tracing::info!(keys = backfilled, "license keys given their tally rows");
    }
    let window = settings.storage.notify_window_ms;
    let watch = (window > 0).then(|| store.listen(std::time::Duration::from_millis(window)));
    let flush_ms = settings.license_keys.stats_flush_ms;
    let keys = SharedKeys::new(
        store.clone(),
        watch.flatten(),
        flush_ms == 0,
        settings.actors.idle_timeout_secs,
        std::time::Duration::from_secs(settings.storage.outage_window_secs),
    );
    if flush_ms > 0 {
        let weak = Arc::downgrade(&keys);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(std::time::Duration::from_millis(flush_ms));
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut failures = crate::telemetry::Failures::default();
            loop {
                every.tick().await;
                let Some(keys) = weak.upgrade() else { return };
                match keys.flush().await {
                    Ok(written) => {
                        if let Some(n) = failures.succeeded() {
                            tracing::info!(
                                validations = written,
                                failed_flushes = n,
                                "license key counters written after the store came back"
                            );
                        }
                    }
                    Err(e) => {
                        if let Some(n) = failures.failed() {
                            tracing::warn!(error = %e, failed_flushes = n, "license key counters not written; kept for the next flush");
                        }
                    }
                }
            }
        });
    }
    Ok(Some(keys))
}
