//! `GET /metrics`: off without `[metrics] token`, bearer-protected with one, and parsed by a
//! Prometheus text-format parser (prometheus-parse) as a scraper would.

use std::collections::HashMap;

use serde_json::json;
use tollgate::config::Settings;

use crate::helpers::{spawn_app, spawn_app_with, TestApp};

/// At least 32 characters: a shorter `[metrics] token` stops start-up.
const TOKEN: &str = "scrape-me-0123456789-abcdefghijkl";

async fn app_with_token() -> TestApp {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = Settings::for_tests(dir.path());
    settings.metrics.token = TOKEN.into();
    spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await
}

async fn raw_get(app: &TestApp, path: &str, token: Option<&str>) -> (u16, String, String) {
    let mut req = app.client.get(app.url(path));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.expect("sending the request");
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (status, ct, resp.text().await.expect("reading the body"))
}

/// Every sample of a scrape, keyed by metric name and sorted labels.
async fn scrape(app: &TestApp) -> HashMap<String, f64> {
    let (status, ct, text) = raw_get(app, "/metrics", Some(TOKEN)).await;
    assert_eq!(status, 200, "{text}");
    assert!(ct.starts_with("text/plain; version=0.0.4"), "{ct}");
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let parsed = prometheus_parse::Scrape::parse(lines).expect("a valid exposition");
    parsed
        .samples
        .into_iter()
        .map(|s| {
            let mut labels: Vec<String> =
                s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            labels.sort();
            let value = match s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => v,
                prometheus_parse::Value::Histogram(_) | prometheus_parse::Value::Summary(_) => {
                    f64::NAN
                }
            };
            (format!("{}{{{}}}", s.metric, labels.join(",")), value)
        })
        .collect()
}

fn value(samples: &HashMap<String, f64>, key: &str) -> f64 {
    samples.get(key).copied().unwrap_or(0.0)
}

#[actix_web::test]
async fn without_a_token_configured_metrics_do_not_exist() {
    let app = spawn_app().await;
    let (status, ct, body) = raw_get(&app, "/metrics", None).await;
    assert_eq!(status, 404, "{body}");
    assert!(ct.starts_with("application/json"), "{ct}");
    let (status, _, _) = raw_get(&app, "/metrics", Some(&app.token)).await;
    assert_eq!(status, 404, "not even for the admin's token");
}

#[actix_web::test]
async fn a_scrape_needs_the_configured_bearer_token() {
    let app = app_with_token().await;
    for token in [
        None,
        Some("wrong"),
        Some(app.token.as_str()),
        Some("scrape-me-0123456789-abcdefghijk"),
    ] {
        let (status, ct, body) = raw_get(&app, "/metrics", token).await;
        assert_eq!(status, 401, "{token:?}: {body}");
        assert!(ct.starts_with("application/json"), "{ct}");
    }
    // The scheme is case-insensitive (RFC 6750), as on the API.
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let resp = app
            .client
            .get(app.url("/metrics"))
            .header("authorization", format!("{scheme} {TOKEN}"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{scheme}");
    }
    let resp = app
        .client
        .get(app.url("/metrics"))
        .header("authorization", format!("Basic {TOKEN}"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401, "another scheme");
}

#[actix_web::test]
async fn a_metrics_token_under_32_characters_stops_start_up() {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = Settings::for_tests(dir.path());
    settings.metrics.token = "scrape-me-0123456789".into();
    let err = match tollgate::startup::Application::build(settings).await {
        Ok(_) => panic!("a 20-character metrics token was accepted"),
        Err(e) => format!("{e:#}"),
    };
    assert!(err.contains("metrics.token") && err.contains("32"), "{err}");
}

#[actix_web::test]
async fn store_flushes_follow_durable_writes() {
    let app = app_with_token().await;
    let before = scrape(&app).await;
    app.create_org("Metrics", "metrics").await.expect(201);
    let after = scrape(&app).await;
    let flushes = "tollgate_store_flushes_total{}";
    assert!(
        value(&after, flushes) > value(&before, flushes),
        "creating an organization is a durable write"
    );
    // Per-flush batch sizes and durations: histograms whose counts are the flushes, read
    // from the same snapshot as the totals.
    let (_, _, text) = raw_get(&app, "/metrics", Some(TOKEN)).await;
    let line = |name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in:\n{text}"))
    };
    let flushes = line("tollgate_store_flushes_total ");
    assert!(flushes >= 1.0);
    assert_eq!(line("tollgate_store_flush_batch_size_count "), flushes);
    assert_eq!(
        line("tollgate_store_flush_duration_seconds_count "),
        flushes
    );
    assert_eq!(
        line("tollgate_store_flush_batch_size_sum "),
        line("tollgate_store_flush_waiters_total ")
    );
    assert_eq!(
        line("tollgate_store_flush_batch_size_bucket{le=\"+Inf\"} "),
        flushes
    );
    assert!(text.contains("# TYPE tollgate_store_flush_duration_seconds histogram"));
    assert!(text.contains("tollgate_store_flush_batch_size_bucket{le=\"1\"} "));
}

#[actix_web::test]
async fn payments_and_key_actors_are_counted() {
    use crate::checkouts::{buyer, by_price, confirm, created, secret, seed, Api};
    let app = app_with_token().await;
    let api = Api::of(&app);
    let cat = seed(api, "metrics-pay").await;
    let before = scrape(&app).await;

    let paid = created(api, &by_price(&cat.ebook_price)).await;
    confirm(api, &secret(&paid), &buyer("ada@example.com"))
        .await
        .expect(200);
    let declined = created(api, &by_price(&cat.ebook_price)).await;
    let mut card = buyer("bob@example.com");
    card["confirmation_token_id"] = json!("tok_decline_insufficient_funds");
    confirm(api, &secret(&declined), &card).await.expect(400);

    let after = scrape(&app).await;
    let delta = |k: &str| value(&after, k) - value(&before, k);
    assert_eq!(
        delta("tollgate_checkout_payments_total{outcome=succeeded}"),
        1.0
    );
    assert_eq!(
        delta("tollgate_checkout_payments_total{outcome=declined}"),
        1.0
    );
    // The purchase granted a license key; its actor is spawned when the key is first used.
    let keys = app
        .client
        .get(app.url("/v1/license-keys/?limit=1"))
        .bearer_auth(&app.token)
        .send()
        .await
        .expect("listing keys");
    let keys: serde_json::Value = keys.json().await.expect("keys");
    let key = keys["items"][0]["key"].as_str().expect("a key").to_string();
    let r = app
        .client
        .post(app.url("/v1/customer-portal/license-keys/validate"))
        .json(&json!({"key": key, "organization_id": cat.org}))
        .send()
        .await
        .expect("validating");
    assert_eq!(r.status(), 200);
    let after = scrape(&app).await;
    assert_eq!(value(&after, "tollgate_actors_live{kind=license_key}"), 1.0);
    assert_eq!(
        value(
            &after,
            "tollgate_actor_events_total{event=spawned,kind=license_key}"
        ),
        1.0
    );
    assert_eq!(
        value(&after, "tollgate_license_validations_total{outcome=valid}"),
        1.0
    );
    // The checkouts went through their actors; none was refused.
    assert!(value(&after, "tollgate_actor_sends_total{kind=checkout}") >= 2.0);
    assert!(value(&after, "tollgate_actor_send_seconds_total{kind=checkout}") > 0.0);
    assert_eq!(
        value(
            &after,
            "tollgate_actor_unavailable_total{kind=checkout,reason=mailbox_full}"
        ),
        0.0
    );
    assert!(after.contains_key("tollgate_actor_unavailable_total{kind=license_key,reason=timeout}"));
    assert!(
        after.contains_key("tollgate_actor_unavailable_total{kind=license_key,reason=contended}")
    );
    assert!(after.contains_key("tollgate_actor_events_total{event=redecide,kind=license_key}"));
}

#[actix_web::test]
async fn counters_move_with_traffic() {
    let app = app_with_token().await;
    let before = scrape(&app).await;
    for _ in 0..3 {
        let (status, _, _) = raw_get(&app, "/healthz", None).await;
        assert_eq!(status, 200);
    }
    let org = uuid::Uuid::new_v4().to_string();
    for body in [
        json!({"key": "NOPE", "organization_id": org}),
        json!({"key": "NOPE", "organization_id": org}),
        json!({"key": "NOPE", "organization_id": org, "increment_usage": -1}),
    ] {
        let resp = app
            .client
            .post(app.url("/v1/customer-portal/license-keys/validate"))
            .json(&body)
            .send()
            .await
            .expect("validating");
        assert!(resp.status().is_client_error());
    }
    let after = scrape(&app).await;
    let healthz = r#"tollgate_http_requests_total{method=GET,route=/healthz,status=2xx}"#;
    assert_eq!(value(&after, healthz) - value(&before, healthz), 3.0);
    let latency = r#"tollgate_http_request_duration_seconds_count{route=/healthz}"#;
    assert_eq!(value(&after, latency) - value(&before, latency), 3.0);
    let validate = r#"tollgate_http_requests_total{method=POST,route=/v1/customer-portal/license-keys/validate,status=4xx}"#;
    assert_eq!(value(&after, validate), 3.0);
    assert_eq!(
        value(
            &after,
            r#"tollgate_license_validations_total{outcome=not_found}"#
        ),
        2.0
    );
    assert_eq!(
        value(
            &after,
            r#"tollgate_license_validations_total{outcome=invalid}"#
        ),
        1.0
    );
    assert!(value(&after, "process_resident_memory_bytes{}") > 1e6);
    // Sampled from the store and the registries: start-up (bootstrap) already flushed.
    assert!(value(&after, "tollgate_store_flushes_total{}") >= 1.0);
    assert!(
        value(&after, "tollgate_store_flush_waiters_total{}")
            >= value(&after, "tollgate_store_flushes_total{}")
    );
    assert!(value(&after, "tollgate_store_flush_seconds_total{}") > 0.0);
    for kind in ["checkout", "subscription", "license_key"] {
        assert!(
            after.contains_key(&format!("tollgate_actors_live{{kind={kind}}}")),
            "{kind}"
        );
    }
    // Labels are templates, never a raw path.
    assert!(
        after.keys().all(|k| !k.contains(&org)),
        "no raw path in labels"
    );
}
