//! The events of issue 46 (`polar-2026.md` §5.3–5.4): `customer.state_changed` (one per
//! change that alters what `GET /v1/customers/{id}/state` answers, and only then),
//! `customer.deleted` (with `metadata.__external_id`), `checkout.expired` and
//! `discount.created|updated|deleted`, each in the shape polar-sdk 1.0.2's `validate_event`
//! loads, in the API version of the endpoint (2026-04, 2026-10, 2027-01).
//!
//! As in `subscription_events.rs`, the server runs on a `ManualClock` and the events are
//! read from the store as the fan-out records them, for paused endpoints.

use std::time::Duration as StdDuration;

use chrono::Duration;
use reqwest::Method;
use serde_json::{json, Value};
use tollgate::domain::ids::OrganizationId;
use tollgate_actors::domain::webhook::WebhookEvent;

use crate::subscriptions::{purchase, spawn_app_with_clock, t0, ClockApp};
use crate::tools;

/// The new types (and one old one, to see a change that alters no state).
const EVENTS: &[&str] = &[
    "customer.state_changed",
    "customer.deleted",
    "checkout.expired",
    "discount.created",
    "discount.updated",
    "discount.deleted",
    "license_key.updated",
];

const VERSIONS: &[&str] = &["2026-04", "2026-10", "2027-01"];

/// A paused endpoint of `version` subscribed to [`EVENTS`]; its id.
async fn endpoint(app: &ClockApp, org: OrganizationId, version: &str) -> String {
    let r = app
        .post_json(
            "/v1/webhooks/endpoints",
            Some(&app.token),
            &json!({"url": "https://hooks.example.com/tollgate", "format": "raw",
                    "events": EVENTS, "organization_id": org, "api_version": version,
                    "secret": SECRET}),
        )
        .await;
    r.expect(201);
    assert_eq!(
        r.body["events"],
        json!(EVENTS),
        "every new type is accepted"
    );
    let id = r.body["id"].as_str().unwrap().to_string();
    app.patch_json(
        &format!("/v1/webhooks/endpoints/{id}"),
        Some(&app.token),
        &json!({"enabled": false}),
    )
    .await
    .expect(200);
    id
}

const SECRET: &str = "whsec_c3RhdGUtZXZlbnRzLXRlc3Qtc2VjcmV0LTMyYnl0ZXM=";

/// Waits until the fan-out consumed every change written so far.
pub(crate) async fn settled(app: &ClockApp) {
    for _ in 0..2400 {
        if app.state.store.changes(None, 1).await.unwrap().is_empty() {
            return;
        }
        actix_web::rt::time::sleep(StdDuration::from_millis(25)).await;
    }
    panic!("the webhook fan-out did not catch up");
}

/// The bodies recorded for the endpoint, in order.
async fn bodies(app: &ClockApp, endpoint: &str) -> Vec<Value> {
    settled(app).await;
    let mut events: Vec<WebhookEvent> = crate::checkouts::webhook_events(&app.state)
        .await
        .into_iter()
        .filter(|e| e.endpoint_id.to_string() == endpoint)
        .collect();
    events.sort_by_key(|e| e.seq);
    events
        .iter()
        .map(|e| serde_json::from_str::<Value>(&e.payload).unwrap())
        .collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn states<'a>(events: &'a [Value], customer: &str) -> Vec<&'a Value> {
    of_type(events, "customer.state_changed")
        .into_iter()
        .filter(|e| e["data"]["id"] == customer)
        .collect()
}

async fn delete(app: &ClockApp, path: &str) {
    let r = app
        .send(app.request(Method::DELETE, path, Some(&app.token)))
        .await;
    r.expect(204);
}

#[actix_web::test]
async fn every_new_event_is_sent_in_polars_shape() {
    let app = spawn_app_with_clock().await;
    let token = Some(app.token.as_str());
    let org = app.org(&app.token, "state-events").await;
    let mut endpoints = Vec::new();
    for version in VERSIONS {
        endpoints.push(endpoint(&app, org, version).await);
    }
    let main = endpoints[0].clone();

    // Discounts: created, updated, deleted (the full discount each time, no marker).
    let d = app
        .post_json(
            "/v1/discounts/",
            token,
            &json!({"name": "Launch", "type": "fixed", "duration": "once", "amount": 1000,
                    "currency": "usd", "code": "LAUNCH", "organization_id": org}),
        )
        .await;
    d.expect(201);
    let discount = d.body["id"].as_str().unwrap().to_string();
    app.patch_json(
        &format!("/v1/discounts/{discount}"),
        token,
        &json!({"name": "Launch week"}),
    )
    .await
    .expect(200);
    delete(&app, &format!("/v1/discounts/{discount}")).await;
    let got = bodies(&app, &main).await;
    let kinds: Vec<&str> = got
        .iter()
        .filter(|e| e["data"]["id"] == discount.as_str())
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["discount.created", "discount.updated", "discount.deleted"]
    );
    let deleted = &of_type(&got, "discount.deleted")[0]["data"];
    assert_eq!(deleted["name"], "Launch week");
    assert_eq!(deleted["products"], json!([]));
    assert!(deleted.get("deleted_at").is_none(), "no deletion marker");

    // A customer: created and updated, each followed by its state.
    let c = app
        .post_json(
            "/v1/customers/",
            token,
            &json!({"email": "jane@example.com", "name": "Jane", "external_id": "usr_1337",
                    "organization_id": org}),
        )
        .await;
    c.expect(201);
    let customer_id = c.body["id"].as_str().unwrap().to_string();
    // A state reads as it is when the fan-out renders it: a fan-out slower than the two
    // requests (a loaded machine) would tell only the updated one. Let it catch up.
    settled(&app).await;
    app.patch_json(
        &format!("/v1/customers/{customer_id}"),
        token,
        &json!({"name": "Jane Doe"}),
    )
    .await
    .expect(200);
    let got = bodies(&app, &main).await;
    let told = states(&got, &customer_id);
    assert_eq!(told.len(), 2, "created, updated");
    assert_eq!(told[0]["data"]["name"], "Jane");
    assert_eq!(told[1]["data"]["name"], "Jane Doe");
    assert_eq!(told[1]["data"]["active_subscriptions"], json!([]));
    assert_eq!(told[1]["data"]["granted_benefits"], json!([]));
    assert_eq!(told[1]["data"]["active_meters"], json!([]));

    // A subscription to a product with a benefit: the state shows both.
    let b = app
        .post_json(
            "/v1/benefits/",
            token,
            &json!({"type": "custom", "description": "Support", "organization_id": org,
                    "metadata": {"tier": "pro", "seats": 3},
                    "properties": {"note": "Write to support@example.com"}}),
        )
        .await;
    b.expect(201);
    let benefit = b.body["id"].as_str().unwrap().to_string();
    let product = app.monthly(&app.token, org, "Pro", 1500).await;
    app.post_json(
        &format!("/v1/products/{}/benefits", product.id),
        token,
        &json!({ "benefits": [benefit] }),
    )
    .await
    .expect(200);
    let customer = app
        .state
        .store
        .get::<tollgate::domain::customer::Customer>(
            &tollgate::domain::ids::CustomerId(customer_id.parse().unwrap()).key(),
        )
        .await
        .unwrap()
        .unwrap()
        .value;
    let checkout = app
        .post_json("/v1/checkouts/", token, &json!({"products": [product.id]}))
        .await;
    checkout.expect(201);
    let checkout = checkout.body["id"].as_str().unwrap().to_string();
    let s = app
        .subscribe(purchase(&product, &customer, None), t0())
        .await;
    let got = bodies(&app, &main).await;
    let told = states(&got, &customer_id);
    let bought = &told.last().unwrap()["data"];
    let subs = bought["active_subscriptions"].as_array().unwrap();
    assert_eq!(subs.len(), 1);
    assert_eq!(subs[0]["id"], s.id.to_string());
    assert_eq!(subs[0]["status"], "active");
    assert_eq!(subs[0]["amount"], 1500);
    let grants = bought["granted_benefits"].as_array().unwrap();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0]["benefit_id"], benefit.as_str());
    assert_eq!(grants[0]["benefit_type"], "custom");
    assert_eq!(
        grants[0]["benefit_metadata"],
        json!({"tier": "pro", "seats": 3})
    );
    assert_eq!(grants[0]["properties"], json!({}));
    // The state the event carries is the state the API answers.
    let state = app
        .get(&format!("/v1/customers/{customer_id}/state"), token)
        .await;
    state.expect(200);
    assert_eq!(bought, &state.body);
    // Polar's `CustomerStateSubscription`, with the keys the SDK requires: checked here,
    // since polar-sdk 1.0.2 cannot load it (§5.3: its `status` is typed as a grant's).
    let keys: std::collections::BTreeSet<&str> = subs[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "id",
        "created_at",
        "modified_at",
        "custom_field_data",
        "metadata",
        "status",
        "amount",
        "currency",
        "recurring_interval",
        "current_period_start",
        "current_period_end",
        "trial_start",
        "trial_end",
        "cancel_at_period_end",
        "canceled_at",
        "started_at",
        "ends_at",
        "product_id",
        "discount_id",
        "seats",
        "units",
        "meters",
    ] {
        assert!(keys.contains(key), "{key} missing from {keys:?}");
    }

    // A change of a key that is not in the state: its event, no state.
    let key = app.key(&customer, s.id).await;
    app.patch_json(
        &format!("/v1/license-keys/{key}"),
        token,
        &json!({"limit_usage": 10}),
    )
    .await
    .expect(200);
    let got = bodies(&app, &main).await;
    assert_eq!(of_type(&got, "license_key.updated").len(), 1);
    assert_eq!(
        states(&got, &customer_id).len(),
        told.len(),
        "the state did not change"
    );

    // The benefit's metadata changes: every holder's state shows the new one.
    app.patch_json(
        &format!("/v1/benefits/{benefit}"),
        token,
        &json!({"type": "custom", "metadata": {"tier": "max"}}),
    )
    .await
    .expect(200);
    let got = bodies(&app, &main).await;
    let told = states(&got, &customer_id);
    assert_eq!(
        told.last().unwrap()["data"]["granted_benefits"][0]["benefit_metadata"],
        json!({"tier": "max"})
    );

    // A cancellation at the period end: the state says so.
    app.clock.set(t0() + Duration::days(5));
    app.patch_json(
        &format!("/v1/subscriptions/{}", s.id),
        token,
        &json!({"cancel_at_period_end": true}),
    )
    .await
    .expect(200);
    let got = bodies(&app, &main).await;
    let canceled = &states(&got, &customer_id).last().unwrap()["data"];
    assert_eq!(
        canceled["active_subscriptions"][0]["cancel_at_period_end"],
        true
    );

    // The checkout left open expires with the sweep.
    let swept = tollgate::app::checkout::sweep_expired(&app.state)
        .await
        .unwrap();
    assert_eq!(swept, 1);
    let got = bodies(&app, &main).await;
    let expired = of_type(&got, "checkout.expired");
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0]["data"]["id"], checkout.as_str());
    assert_eq!(expired[0]["data"]["status"], "expired");

    // The period ends: no subscription, no benefit.
    app.clock
        .set(s.current_period_end.unwrap() + Duration::minutes(5));
    assert_eq!(app.sweep().await.ended, 1);
    let got = bodies(&app, &main).await;
    let ended = &states(&got, &customer_id).last().unwrap()["data"];
    assert_eq!(ended["active_subscriptions"], json!([]));
    assert_eq!(ended["granted_benefits"], json!([]));

    // Deleted: `customer.deleted`, then its state.
    delete(&app, &format!("/v1/customers/{customer_id}")).await;
    let got = bodies(&app, &main).await;
    let about: Vec<&Value> = got
        .iter()
        .filter(|e| e["data"]["id"] == customer_id.as_str())
        .collect();
    let n = about.len();
    assert_eq!(about[n - 2]["type"], "customer.deleted");
    assert_eq!(about[n - 1]["type"], "customer.state_changed");
    let gone = &about[n - 2]["data"];
    assert!(gone["deleted_at"].is_string());
    assert_eq!(gone["external_id"], "usr_1337");
    assert_eq!(gone["metadata"]["__external_id"], "usr_1337");
    assert!(about[n - 1]["data"]["deleted_at"].is_string());

    // No state is told twice in a row: each differs from the one before.
    let told = states(&got, &customer_id);
    for pair in told.windows(2) {
        assert_ne!(pair[0]["data"], pair[1]["data"]);
    }
    for kind in EVENTS {
        assert!(!of_type(&got, kind).is_empty(), "no {kind}");
    }

    // Every endpoint got the same events in its version; polar-sdk 1.0.2 loads each
    // (but the states with an active subscription, see above) with its version's module.
    let mut checked = Vec::new();
    for (endpoint, version) in endpoints.iter().zip(VERSIONS) {
        let got = bodies(&app, endpoint).await;
        assert_eq!(got.len(), bodies(&app, &main).await.len());
        for body in got {
            assert_eq!(body["api_version"], *version);
            let polar = body["type"] != "license_key.updated";
            let loadable = body["type"] != "customer.state_changed"
                || body["data"]["active_subscriptions"] == json!([]);
            if polar && loadable {
                checked.push(body);
            }
        }
    }
    check_with_polar_sdk(&checked).await;
}

/// Signs each body as a delivery would and loads it with `validate_event` of polar-sdk
/// 1.0.2's module for its `api_version`: each must parse into its payload class.
async fn check_with_polar_sdk(bodies: &[Value]) {
    let python = tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let bodies: Vec<String> = bodies.iter().map(Value::to_string).collect();
    let input = json!({"secret": SECRET, "bodies": bodies}).to_string();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input.json");
    std::fs::write(&path, &input).unwrap();
    let mut cmd = std::process::Command::new(python);
    cmd.arg("-c").arg(SDK_CHECK).arg(&path);
    let out = tools::run_async(cmd, StdDuration::from_secs(120)).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "polar-sdk 1.0.2 refused a payload:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every new type was loaded in every version.
    for kind in EVENTS.iter().filter(|k| !k.starts_with("license_key.")) {
        for version in VERSIONS {
            let line = format!("ok v{} {kind}", version.replace('-', "_"));
            assert!(stdout.contains(&line), "{line} not in:\n{stdout}");
        }
    }
}

const SDK_CHECK: &str = r#"
import base64, hashlib, hmac, importlib, json, sys, time

given = json.load(open(sys.argv[1]))
secret = given["secret"]
failed = 0
for n, body in enumerate(given["bodies"]):
    parsed = json.loads(body)
    kind = parsed["type"]
    version = "v" + parsed["api_version"].replace("-", "_")
    webhooks = importlib.import_module(f"polar.{version}.webhooks")
    msg_id, ts = f"msg_{n}", str(int(time.time()))
    mac = hmac.new(secret.encode(), f"{msg_id}.{ts}.{body}".encode(), hashlib.sha256)
    headers = {"webhook-id": msg_id, "webhook-timestamp": ts,
               "webhook-signature": "v1," + base64.b64encode(mac.digest()).decode()}
    try:
        event = webhooks.validate_event(body, headers, secret)
        assert event.type == kind, (event.type, kind)
        print("ok", version, kind)
    except Exception as e:
        failed += 1
        print("FAIL", version, kind, repr(e), repr(e.__cause__)[:2000])
sys.exit(1 if failed else 0)
"#;

/// The receiver (`tests/clients/webhooks/receiver.py`) run with polar-sdk 1.0.2; killed
/// when dropped.
struct Receiver {
    child: std::process::Child,
    port: u16,
    log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    fn start() -> Receiver {
        let python = tools::python_venv("tests/clients/webhooks/requirements-sdk-1.0.txt");
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("received.jsonl");
        let mut child = std::process::Command::new(python)
            .arg(tools::repo_root().join("tests/clients/webhooks/receiver.py"))
            .args(["--secret", SECRET, "--max-seconds", "600", "--log"])
            .arg(&log)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("starting the receiver");
        let port = tools::announced_port(&mut child, StdDuration::from_secs(120))
            .unwrap_or_else(|e| panic!("the receiver: {e}"));
        Receiver {
            child,
            port,
            log,
            _dir: dir,
        }
    }

    fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Waits until `n` distinct events (`webhook-id`s) arrived.
    async fn wait_for(&self, n: usize) -> Vec<Value> {
        let start = std::time::Instant::now();
        loop {
            let got = self.received();
            let ids: std::collections::HashSet<&str> =
                got.iter().filter_map(|v| v["id"].as_str()).collect();
            if ids.len() >= n {
                return got;
            }
            assert!(
                start.elapsed() < StdDuration::from_secs(60),
                "{} of {n} deliveries: {got:?}",
                got.len()
            );
            tokio::time::sleep(StdDuration::from_millis(50)).await;
        }
    }
}

/// Delivered for real: the receiver verifies each signature and loads each body with
/// polar-sdk 1.0.2's `validate_event` in the endpoint's version.
#[actix_web::test]
async fn the_new_events_are_delivered_and_verified_by_polar_sdk_1_0() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = tollgate::config::Settings::for_tests(dir.path());
    settings.webhooks.allow_private_targets = true;
    settings.rate_limits.enabled = false;
    settings.webhooks.timeout_secs = 30.0;
    let app =
        crate::helpers::spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let token = Some(app.token.as_str());
    let receiver = Receiver::start();
    let org = app
        .created_org_as(&app.token, "Deliveries", "deliveries")
        .await;
    let org = org["id"].as_str().unwrap().to_string();
    let types = [
        "customer.state_changed",
        "customer.deleted",
        "discount.created",
        "discount.updated",
        "discount.deleted",
    ];
    for version in VERSIONS {
        app.post_json(
            "/v1/webhooks/endpoints",
            token,
            &json!({"url": format!("http://localhost:{}/hooks", receiver.port), "format": "raw",
                    "events": types, "organization_id": org, "api_version": version,
                    "secret": SECRET}),
        )
        .await
        .expect(201);
    }
    let d = app
        .post_json(
            "/v1/discounts/",
            token,
            &json!({"name": "Tenth", "type": "percentage", "basis_points": 1000,
                    "duration": "forever", "organization_id": org}),
        )
        .await;
    d.expect(201);
    let discount = d.body["id"].as_str().unwrap().to_string();
    app.patch_json(
        &format!("/v1/discounts/{discount}"),
        token,
        &json!({"metadata": {"campaign": "spring"}}),
    )
    .await
    .expect(200);
    let r = app
        .send(app.request(Method::DELETE, &format!("/v1/discounts/{discount}"), token))
        .await;
    r.expect(204);
    let c = app
        .post_json(
            "/v1/customers/",
            token,
            &json!({"email": "ada@example.com", "external_id": "ada-1", "organization_id": org}),
        )
        .await;
    c.expect(201);
    let customer = c.body["id"].as_str().unwrap().to_string();
    // The creation's state first: changes of one customer that the dispatcher finds in
    // one pass are told as one state (its latest), so a deletion right behind the
    // creation could otherwise fold both into one.
    receiver.wait_for(3 * 4).await;
    let r = app
        .send(app.request(Method::DELETE, &format!("/v1/customers/{customer}"), token))
        .await;
    r.expect(204);

    // Per version: 3 discount events, the state at creation, the deletion and its state
    // (each once: an attempt the SDK's first import made slow may be sent again).
    let got = receiver.wait_for(3 * 6).await;
    let mut ids = std::collections::HashSet::new();
    let got: Vec<Value> = got
        .into_iter()
        .filter(|v| ids.insert(v["id"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(got.len(), 18, "{got:?}");
    for v in &got {
        assert_eq!(v["verified"], true, "{v}");
        let kind = v["type"].as_str().unwrap();
        let class = v["sdk"].as_str().unwrap_or_default();
        assert!(
            class.starts_with("Webhook") && class.ends_with("Payload"),
            "{kind} in {}: {class}",
            v["body"]["api_version"]
        );
    }
    for version in VERSIONS {
        let kinds: Vec<&str> = got
            .iter()
            .filter(|v| v["body"]["api_version"] == *version)
            .map(|v| v["type"].as_str().unwrap())
            .collect();
        let mut sorted = kinds.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            [
                "customer.deleted",
                "customer.state_changed",
                "customer.state_changed",
                "discount.created",
                "discount.deleted",
                "discount.updated"
            ],
            "{version}"
        );
    }
    let deleted = got
        .iter()
        .find(|v| v["type"] == "customer.deleted")
        .unwrap();
    assert_eq!(
        deleted["body"]["data"]["metadata"]["__external_id"],
        "ada-1"
    );
}

/// A renewal and a plan change each tell the new state once.
#[actix_web::test]
async fn a_renewal_and_a_plan_change_each_tell_the_new_state() {
    let app = spawn_app_with_clock().await;
    let token = Some(app.token.as_str());
    let org = app.org(&app.token, "state-renewal").await;
    let main = endpoint(&app, org, "2026-04").await;
    let mut benefits = Vec::new();
    for description in ["Support", "Priority support"] {
        let b = app
            .post_json(
                "/v1/benefits/",
                token,
                &json!({"type": "custom", "description": description, "organization_id": org,
                        "properties": {"note": "Write to us"}}),
            )
            .await;
        b.expect(201);
        benefits.push(b.body["id"].as_str().unwrap().to_string());
    }
    let pro = app.monthly(&app.token, org, "Pro", 1500).await;
    let max = app.monthly(&app.token, org, "Max", 4000).await;
    for (product, granted) in [(&pro, &benefits[..1]), (&max, &benefits[..])] {
        app.post_json(
            &format!("/v1/products/{}/benefits", product.id),
            token,
            &json!({ "benefits": granted }),
        )
        .await
        .expect(200);
    }
    let customer = app.customer(&app.token, org, "jane@example.com").await;
    let id = customer.id.to_string();
    let s = app.subscribe(purchase(&pro, &customer, None), t0()).await;
    let end = s.current_period_end.unwrap();
    let before = states(&bodies(&app, &main).await, &id).len();

    // Renewed: one state, in the new period.
    app.clock.set(end + Duration::hours(1));
    assert_eq!(app.sweep().await.renewed, 1);
    let got = bodies(&app, &main).await;
    let told = states(&got, &id);
    assert_eq!(told.len(), before + 1);
    let renewed = &told.last().unwrap()["data"]["active_subscriptions"][0];
    let start =
        chrono::DateTime::parse_from_rfc3339(renewed["current_period_start"].as_str().unwrap())
            .unwrap();
    assert_eq!(start, end);

    // Upgraded: one state, with the new product and both benefits.
    app.patch_json(
        &format!("/v1/subscriptions/{}", s.id),
        token,
        &json!({"product_id": max.id, "proration_behavior": "prorate"}),
    )
    .await
    .expect(200);
    let got = bodies(&app, &main).await;
    let told = states(&got, &id);
    assert_eq!(told.len(), before + 2);
    let upgraded = &told.last().unwrap()["data"];
    assert_eq!(
        upgraded["active_subscriptions"][0]["product_id"],
        max.id.to_string()
    );
    let mut granted: Vec<&str> = upgraded["granted_benefits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["benefit_id"].as_str().unwrap())
        .collect();
    granted.sort_unstable();
    let mut expected: Vec<&str> = benefits.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(granted, expected);
    let state = app.get(&format!("/v1/customers/{id}/state"), token).await;
    assert_eq!(upgraded, &state.body);
}
