//! Metrics for operators: `GET /metrics` in the Prometheus text format.
//!
//! Off unless `[metrics] token` is set (`TOLLGATE__METRICS__TOKEN`): without a token the
//! route answers 404, so nothing is public by default; with one, a scrape must send it as
//! `Authorization: Bearer <token>` (401 otherwise). Counters live in one registry per
//! process, encoded by the `prometheus` crate.

use std::time::Duration;

use std::sync::Mutex;

use prometheus::{
    Counter, CounterVec, Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec,
    IntGaugeVec, Opts, Registry, TextEncoder,
};
use tollgate_actors::RegistryStats;

/// The service's metrics.
pub struct Metrics {
    registry: Registry,
    /// The process collector's own names (`process_*`), without the `tollgate_` prefix.
    process: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    validations: IntCounterVec,
    payments: IntCounterVec,
    /// Read from the actors' registries and the store at each scrape.
    sampled: Mutex<Sampled>,
}

/// Metrics whose source keeps its own totals: copied in at each scrape (under one lock, so
/// two concurrent scrapes never add the same delta twice).
struct Sampled {
    actors_live: IntGaugeVec,
    actors_running: IntGaugeVec,
    actor_events: IntCounterVec,
    actor_sends: IntCounterVec,
    actor_send_seconds: CounterVec,
    actor_unavailable: IntCounterVec,
    flushes: IntCounter,
    flush_waiters: IntCounter,
    flush_seconds: Counter,
    flush_histograms: FlushHistograms,
    validation_paths: IntCounterVec,
    listener: IntGaugeVec,
    listener_reconnects: IntCounter,
    database: IntGaugeVec,
    database_outages: IntCounter,
    mail_workers: IntGaugeVec,
    mail_restarts: IntCounter,
    mail_panics: IntCounter,
}

/// The flusher's per-flush batch sizes and durations as two Prometheus histograms, from the
/// bucket counts the store keeps (`tollgate_storage::FlushStats`), copied at each scrape.
#[derive(Clone)]
struct FlushHistograms {
    last: std::sync::Arc<Mutex<tollgate_storage::FlushStats>>,
    descs: Vec<prometheus::core::Desc>,
}

const FLUSH_BATCH: (&str, &str) = (
    "store_flush_batch_size",
    "Durable writes answered per store flush",
);
const FLUSH_DURATION: (&str, &str) = (
    "store_flush_duration_seconds",
    "Duration of each store flush (fsync included)",
);

impl FlushHistograms {
    fn new() -> prometheus::Result<Self> {
        let desc = |(name, help): (&str, &str)| {
            prometheus::core::Desc::new(name.into(), help.into(), Vec::new(), Default::default())
        };
        Ok(FlushHistograms {
            last: Default::default(),
            descs: vec![desc(FLUSH_BATCH)?, desc(FLUSH_DURATION)?],
        })
    }

    fn family(
        (name, help): (&str, &str),
        bounds: &[f64],
        counts: &[u64],
        sum: f64,
    ) -> prometheus::proto::MetricFamily {
        use prometheus::proto::{Bucket, Histogram, Metric, MetricFamily, MetricType};
        let mut cumulative = 0;
        let buckets: Vec<Bucket> = bounds
            .iter()
            .zip(counts)
            .map(|(bound, n)| {
                cumulative += n;
                let mut b = Bucket::default();
                b.set_upper_bound(*bound);
                b.set_cumulative_count(cumulative);
                b
            })
            .collect();
        let mut h = Histogram::default();
        h.set_sample_count(counts.iter().sum());
        h.set_sample_sum(sum);
        h.set_bucket(buckets);
        let mut m = Metric::default();
        m.set_histogram(h);
        let mut f = MetricFamily::default();
        f.set_name(name.into());
        f.set_help(help.into());
        f.set_field_type(MetricType::HISTOGRAM);
        f.set_metric(vec![m]);
        f
    }
}

impl prometheus::core::Collector for FlushHistograms {
    fn desc(&self) -> Vec<&prometheus::core::Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<prometheus::proto::MetricFamily> {
        let s = *self.last.lock().unwrap_or_else(|e| e.into_inner());
        vec![
            Self::family(
                FLUSH_BATCH,
                &tollgate_storage::FLUSH_SIZE_BOUNDS,
                &s.sizes,
                s.waiters_served as f64,
            ),
            Self::family(
                FLUSH_DURATION,
                &tollgate_storage::FLUSH_SECONDS_BOUNDS,
                &s.durations,
                s.flush_seconds,
            ),
        ]
    }
}

/// Raises a counter to a total kept elsewhere (totals only grow).
fn raise_to<P>(counter: &prometheus::core::GenericCounter<P>, total: P::T)
where
    P: prometheus::core::Atomic,
    P::T: PartialOrd + std::ops::Sub<Output = P::T>,
{
    let now = counter.get();
    if total > now {
        counter.inc_by(total - now);
    }
}

/// Request latency buckets, in seconds (100 µs to 10 s).
const LATENCY_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

impl Metrics {
    pub fn new() -> Result<Self, prometheus::Error> {
        let registry = Registry::new_custom(Some("tollgate".into()), None)?;
        let requests = IntCounterVec::new(
            Opts::new(
                "http_requests_total",
                "HTTP requests answered, by method, route template and status class",
            ),
            &["method", "route", "status"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "Time from a request's arrival at the application to its answer, by route template",
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
            &["route"],
        )?;
        let validations = IntCounterVec::new(
            Opts::new(
                "license_validations_total",
                "License-key validations by outcome: valid, refused (inactive, expired, \
                 usage, conditions, ...), not_found, invalid (422), rate_limited, unavailable",
            ),
            &["outcome"],
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(validations.clone()))?;
        let payments = IntCounterVec::new(
            Opts::new(
                "checkout_payments_total",
                "What the payment processor answered for confirmed checkouts: succeeded \
                 (the purchase is completed), pending, declined, or error (processor \
                 unavailable; recovery settles it later)",
            ),
            &["outcome"],
        )?;
        registry.register(Box::new(payments.clone()))?;
        let sampled = Sampled {
            actors_live: IntGaugeVec::new(
                Opts::new(
                    "actors_live",
                    "Aggregate actors accepting messages, by kind",
                ),
                &["kind"],
            )?,
            actors_running: IntGaugeVec::new(
                Opts::new(
                    "actors_running",
                    "Aggregate actors that exist (passivating ones included), by kind",
                ),
                &["kind"],
            )?,
            actor_events: IntCounterVec::new(
                Opts::new(
                    "actor_events_total",
                    "Actor life-cycle events by kind: spawned, restarted (after a panic), \
                     passivated, write_back (deferred counters written), redecide (a command \
                     decided again after its conditional write lost to another writer), refresh \
                     (a snapshot reloaded because another writer changed it), group_write and \
                     grouped_command (on PostgreSQL: writes of coalesced command groups, and the \
                     commands in them)",
                ),
                &["kind", "event"],
            )?,
            actor_sends: IntCounterVec::new(
                Opts::new(
                    "actor_sends_total",
                    "Messages sent to aggregate actors, by kind",
                ),
                &["kind"],
            )?,
            actor_send_seconds: CounterVec::new(
                Opts::new(
                    "actor_send_seconds_total",
                    "Time from sending a message to an actor to its reply (mailbox wait, \
                     handling, and the durable write the reply waits for), by kind; per \
                     message: divide by actor_sends_total",
                ),
                &["kind"],
            )?,
            actor_unavailable: IntCounterVec::new(
                Opts::new(
                    "actor_unavailable_total",
                    "Messages refused with 503, by kind and reason (mailbox_full, timeout, \
                     closed, passivated, reply_lost)",
                ),
                &["kind", "reason"],
            )?,
            flushes: IntCounter::new("store_flushes_total", "Group-commit flushes of the store")?,
            flush_waiters: IntCounter::new(
                "store_flush_waiters_total",
                "Durable writes the flushes answered (per flush: divide by store_flushes_total)",
            )?,
            flush_seconds: Counter::new(
                "store_flush_seconds_total",
                "Seconds spent in store flushes (per flush: divide by store_flushes_total)",
            )?,
            flush_histograms: FlushHistograms::new()?,
            validation_paths: IntCounterVec::new(
                Opts::new(
                    "license_validation_paths_total",
                    "On PostgreSQL: how validations were answered: memory (this node's copy, \
                     trusted through the change listener), checked (after reading the key's \
                     revision), counted (one conditional statement: increments, strict mode) \
                     or outage (this node's copy while the database was unreachable, within \
                     storage.outage_window_secs)",
                ),
                &["path"],
            )?,
            listener: IntGaugeVec::new(
                Opts::new(
                    "store_listener",
                    "On PostgreSQL: 1 for the change listener's state (connected or down)",
                ),
                &["state"],
            )?,
            listener_reconnects: IntCounter::new(
                "store_listener_reconnects_total",
                "On PostgreSQL: times the change listener lost its connection",
            )?,
            database: IntGaugeVec::new(
                Opts::new(
                    "store_database",
                    "On PostgreSQL: 1 for what this node can do with its database: writable, \
                     read_only (unreachable; validations of keys held answered from memory) \
                     or down (unreachable; nothing answered without it)",
                ),
                &["state"],
            )?,
            database_outages: IntCounter::new(
                "store_database_outages_total",
                "On PostgreSQL: times no connection to the database could be made (each \
                 outage once, until a connection succeeded)",
            )?,
            mail_workers: IntGaugeVec::new(
                Opts::new(
                    "mail_sender_workers",
                    "E-mail sender workers by state: running, or stuck (not back within \
                     email.stuck_after_secs: stuck or dead; /readyz answers 503 meanwhile)",
                ),
                &["state"],
            )?,
            mail_restarts: IntCounter::new(
                "mail_sender_restarts_total",
                "E-mail sender workers restarted by their supervisor after they stopped",
            )?,
            mail_panics: IntCounter::new(
                "mail_sender_panics_total",
                "Messages whose building or sending panicked (each recorded as failed for good)",
            )?,
        };
        registry.register(Box::new(sampled.mail_workers.clone()))?;
        registry.register(Box::new(sampled.mail_restarts.clone()))?;
        registry.register(Box::new(sampled.mail_panics.clone()))?;
        registry.register(Box::new(sampled.actors_live.clone()))?;
        registry.register(Box::new(sampled.actors_running.clone()))?;
        registry.register(Box::new(sampled.actor_events.clone()))?;
        registry.register(Box::new(sampled.actor_sends.clone()))?;
        registry.register(Box::new(sampled.actor_send_seconds.clone()))?;
        registry.register(Box::new(sampled.actor_unavailable.clone()))?;
        registry.register(Box::new(sampled.flushes.clone()))?;
        registry.register(Box::new(sampled.flush_histograms.clone()))?;
        registry.register(Box::new(sampled.flush_waiters.clone()))?;
        registry.register(Box::new(sampled.flush_seconds.clone()))?;
        registry.register(Box::new(sampled.validation_paths.clone()))?;
        registry.register(Box::new(sampled.listener.clone()))?;
        registry.register(Box::new(sampled.listener_reconnects.clone()))?;
        registry.register(Box::new(sampled.database.clone()))?;
        registry.register(Box::new(sampled.database_outages.clone()))?;
        // Resident and virtual memory, CPU seconds, open files and threads of this process.
        let process = Registry::new();
        process.register(Box::new(
            prometheus::process_collector::ProcessCollector::for_self(),
        ))?;
        Ok(Self {
            registry,
            process,
            requests,
            latency,
            validations,
            payments,
            sampled: Mutex::new(sampled),
        })
    }

    /// One answered request (the logging middleware calls it for every request).
    pub fn request(&self, method: &str, route: &str, status: u16, took: Duration) {
        let class = match status {
            100..=199 => "1xx",
            200..=299 => "2xx",
            300..=399 => "3xx",
            400..=499 => "4xx",
            _ => "5xx",
        };
        self.requests
            .with_label_values(&[method, route, class])
            .inc();
        self.latency
            .with_label_values(&[route])
            .observe(took.as_secs_f64());
    }

    /// One license-key validation, by the status of its answer.
    pub fn validation(&self, status: u16) {
        let outcome = match status {
            200 => "valid",
            404 => "not_found",
            422 => "invalid",
            429 => "rate_limited",
            500..=599 => "unavailable",
            _ => "refused",
        };
        self.validations.with_label_values(&[outcome]).inc();
    }

    /// Copies the actors' totals (per kind: `checkout`, `subscription`, `license_key`) and
    /// the store's flush totals in.
    pub fn sample(&self, kinds: [(&str, RegistryStats); 3], flush: tollgate_storage::FlushStats) {
        let s = self.sampled.lock().unwrap_or_else(|e| e.into_inner());
        for (kind, stats) in kinds {
            s.actors_live
                .with_label_values(&[kind])
                .set(i64::try_from(stats.live).unwrap_or(i64::MAX));
            s.actors_running
                .with_label_values(&[kind])
                .set(i64::try_from(stats.running).unwrap_or(i64::MAX));
            for (event, total) in [
                ("spawned", stats.spawned_total),
                ("restarted", stats.restarts_total),
                ("passivated", stats.passivations_total),
                ("write_back", stats.write_backs_total),
                ("redecide", stats.redecides_total),
                ("refresh", stats.refreshes_total),
                ("group_write", stats.group_writes_total),
                ("grouped_command", stats.grouped_commands_total),
            ] {
                raise_to(&s.actor_events.with_label_values(&[kind, event]), total);
            }
            raise_to(&s.actor_sends.with_label_values(&[kind]), stats.sends_total);
            raise_to(
                &s.actor_send_seconds.with_label_values(&[kind]),
                stats.send_seconds_total,
            );
            for (reason, total) in stats.unavailable_total {
                raise_to(
                    &s.actor_unavailable.with_label_values(&[kind, reason]),
                    total,
                );
            }
        }
        raise_to(&s.flushes, flush.flushes);
        raise_to(&s.flush_waiters, flush.waiters_served);
        raise_to(&s.flush_seconds, flush.flush_seconds);
        *s.flush_histograms
            .last
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = flush;
    }

    /// Copies the shared store's validation paths and listener state in (PostgreSQL).
    pub fn sample_shared(&self, keys: &tollgate_actors::license_key::shared::SharedKeys) {
        let s = self.sampled.lock().unwrap_or_else(|e| e.into_inner());
        let paths = keys.paths();
        for (path, total) in [
            ("memory", paths.memory),
            ("checked", paths.checked),
            ("counted", paths.counted),
            ("outage", paths.outage),
        ] {
            raise_to(&s.validation_paths.with_label_values(&[path]), total);
        }
        if let Some(connected) = keys.listening() {
            s.listener
                .with_label_values(&["connected"])
                .set(i64::from(connected));
            s.listener
                .with_label_values(&["down"])
                .set(i64::from(!connected));
        }
        raise_to(&s.listener_reconnects, keys.listener_reconnects());
    }

    /// Copies the database's state in (PostgreSQL): `readiness` as `/readyz` says it, and
    /// the outages so far.
    pub fn sample_database(&self, readiness: &crate::api::health::DatabaseReadiness, outages: u64) {
        let s = self.sampled.lock().unwrap_or_else(|e| e.into_inner());
        for state in ["writable", "read_only", "down"] {
            s.database
                .with_label_values(&[state])
                .set(i64::from(readiness.label() == state));
        }
        raise_to(&s.database_outages, outages);
    }

    /// One answer of the payment processor about a confirmed checkout (`succeeded`,
    /// `pending`, `declined` or `error`).
    /// The e-mail sender's health, copied at each scrape: its workers, how many are stuck,
    /// and its totals of restarts and panics.
    pub fn sample_mail(&self, workers: usize, stuck: usize, restarts: u64, panics: u64) {
        let s = self.sampled.lock().unwrap_or_else(|e| e.into_inner());
        let gauge = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        s.mail_workers
            .with_label_values(&["running"])
            .set(gauge(workers.saturating_sub(stuck)));
        s.mail_workers
            .with_label_values(&["stuck"])
            .set(gauge(stuck));
        raise_to(&s.mail_restarts, restarts);
        raise_to(&s.mail_panics, panics);
    }

    pub fn payment(&self, outcome: &str) {
        self.payments.with_label_values(&[outcome]).inc();
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> Result<String, prometheus::Error> {
        let mut families = self.registry.gather();
        families.extend(self.process.gather());
        let mut out = Vec::new();
        TextEncoder::new().encode(&families, &mut out)?;
        String::from_utf8(out).map_err(|e| prometheus::Error::Msg(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_validations_are_counted_by_label() {
        let m = Metrics::new().unwrap();
        m.request("GET", "/healthz", 200, Duration::from_micros(300));
        m.request("GET", "/healthz", 204, Duration::from_micros(300));
        m.request("POST", "/v1/products/", 422, Duration::from_millis(3));
        m.validation(200);
        m.validation(403);
        m.validation(404);
        let text = m.render().unwrap();
        for line in [
            r#"tollgate_http_requests_total{method="GET",route="/healthz",status="2xx"} 2"#,
            r#"tollgate_http_requests_total{method="POST",route="/v1/products/",status="4xx"} 1"#,
            r#"tollgate_http_request_duration_seconds_bucket{route="/healthz",le="0.0005"} 2"#,
            r#"tollgate_license_validations_total{outcome="valid"} 1"#,
            r#"tollgate_license_validations_total{outcome="refused"} 1"#,
            r#"tollgate_license_validations_total{outcome="not_found"} 1"#,
        ] {
            assert!(text.contains(line), "{line} missing from:\n{text}");
        }
        assert!(text.contains("process_resident_memory_bytes "), "{text}");
    }
}
