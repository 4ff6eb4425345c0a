//! Webhook delivery end to end: a receiver started by the test on a free loopback port
//! verifies every delivery with the pinned `standardwebhooks` library and, for the types it
//! knows, Polar's SDK helper; purchases, activations, failures with retries, `kill -9`, and
//! a dead endpoint beside a healthy one.

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::config::Settings;

use crate::binary::Binary;
use crate::checkouts::{buyer, by_price, confirm, created, id_of, secret, seed, Api};
use crate::helpers::{client, spawn_app_with, TestApp};
use crate::tools;

/// How long a test waits for deliveries before it fails.
const DEADLINE: Duration = Duration::from_secs(60);
const RECEIVER_START: Duration = Duration::from_secs(120);

/// The receiver process; killed when dropped.
pub(crate) struct Receiver {
    child: Child,
    port: u16,
    log: PathBuf,
    stderr: PathBuf,
    _dir: TempDir,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    pub(crate) fn start(secret: &str, fail_first: u32) -> Receiver {
        let python = tools::python_venv("tests/clients/python/requirements.txt");
        let dir = tempfile::tempdir().expect("creating the receiver's directory");
        let log = dir.path().join("received.jsonl");
        let stderr = dir.path().join("receiver.err");
        let mut child = Command::new(python)
            .arg(tools::repo_root().join("tests/clients/webhooks/receiver.py"))
            .args(["--secret", secret, "--max-seconds", "600"])
            .args(["--fail-first", &fail_first.to_string()])
            .arg("--log")
            .arg(&log)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr).expect("creating the receiver's stderr"))
            .spawn()
            .expect("starting the receiver");
        let port = tools::announced_port(&mut child, RECEIVER_START).unwrap_or_else(|e| {
            panic!(
                "the receiver: {e}; stderr:\n{}",
                std::fs::read_to_string(&stderr).unwrap_or_default()
            )
        });
        Receiver {
            child,
            port,
            log,
            stderr,
            _dir: dir,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://localhost:{}/hooks", self.port)
    }

    /// Every request received so far, in arrival order.
    pub(crate) fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    /// Waits until `done` holds for what was received; fails after [`DEADLINE`].
    pub(crate) async fn wait_for(&self, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let got = self.received();
            if done(&got) {
                return got;
            }
            if start.elapsed() > DEADLINE {
                panic!(
                    "no {what} within {DEADLINE:?}; received:\n{}\nstderr:\n{}",
                    got.iter()
                        .map(|v| format!("{} {} attempt {}", v["type"], v["id"], v["attempt"]))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

pub(crate) fn of_type<'a>(got: &'a [Value], kind: &str) -> Vec<&'a Value> {
    got.iter().filter(|v| v["type"] == kind).collect()
}

/// Every request verified by `standardwebhooks`, and by the SDK when it knows the type.
#[track_caller]
pub(crate) fn assert_verified(got: &[Value]) {
    for v in got {
        assert_eq!(v["verified"], true, "not verified: {v}");
        // A `whsec_` secret (every generated one): also verified as Standard Webhooks.
        if v.get("verified_standard").is_some() {
            assert_eq!(v["verified_standard"], true, "not verified as whsec_: {v}");
        }
        assert_eq!(v["content_type"], "application/json", "{v}");
        if let Some(sdk) = v.get("sdk") {
            assert!(
                !sdk.as_str().unwrap_or("error").starts_with("error"),
                "the SDK refused {}: {sdk}",
                v["type"]
            );
        }
        assert!(v["body"]["timestamp"].is_string(), "{v}");
    }
}

pub(crate) fn settings(dir: &Path) -> Settings {
    let mut s = Settings::for_tests(dir);
    s.webhooks.allow_private_targets = true;
    s.webhooks.retry_delays_secs = vec![0.2, 0.2, 0.2, 0.2, 0.2];
    s.webhooks.timeout_secs = 5.0;
    s.rate_limits.enabled = false;
    s
}

async fn app() -> TestApp {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let s = settings(dir.path());
    spawn_app_with(dir, s, tollgate_actors::SystemClock::shared()).await
}

/// Registers an endpoint; returns (id, secret).
async fn endpoint(api: Api<'_>, org: &str, url: &str, events: &[&str]) -> (String, String) {
    let e = api
        .posted(
            "/v1/webhooks/endpoints",
            &json!({"url": url, "format": "raw", "events": events, "organization_id": org}),
            201,
        )
        .await;
    (
        id_of(&e),
        e["secret"].as_str().expect("a secret").to_string(),
    )
}

const PURCHASE_EVENTS: &[&str] = &[
    "checkout.created",
    "checkout.updated",
    "order.created",
    "order.paid",
    "subscription.created",
    "subscription.active",
    "subscription.updated",
    "subscription.canceled",
    "benefit_grant.created",
    "license_key.created",
    "license_key.activated",
    "license_key.deactivated",
    "license_key.limit_reached",
    "customer.created",
];

#[actix_web::test]
async fn a_purchase_and_an_activation_reach_a_verifying_receiver() {
    let app = app().await;
    let api = Api::of(&app);
    let cat = seed(api, "hooks").await;
    // The secret is generated: start the receiver with it once known.
    let placeholder = endpoint(api, &cat.org, "http://localhost:9/x", &["order.created"]).await;
    let secret_of = placeholder.1;
    // Polar's format (`whsec_` + 43 characters): signed with its UTF-8 bytes, as Polar signs.
    assert!(
        secret_of.starts_with("whsec_") && secret_of.len() == 49,
        "{secret_of}"
    );
    let receiver = Receiver::start(&secret_of, 0);
    let r = app
        .patch_json(
            &format!("/v1/webhooks/endpoints/{}", placeholder.0),
            Some(&app.token),
            &json!({"url": receiver.url(), "events": PURCHASE_EVENTS}),
        )
        .await;
    r.expect(200);
    let endpoint_id = placeholder.0;

    let c = created(api, &by_price(&cat.monthly)).await;
    let confirmed = confirm(api, &secret(&c), &buyer("ada@example.com")).await;
    confirmed.expect(200);

    let got = receiver
        .wait_for("purchase events", |got| {
            [
                "checkout.created",
                "order.created",
                "order.paid",
                "subscription.created",
                "subscription.active",
                "benefit_grant.created",
                "license_key.created",
                "customer.created",
            ]
            .iter()
            .all(|t| !of_type(got, t).is_empty())
                && of_type(got, "license_key.created").len() == 2
                && of_type(got, "benefit_grant.created").len() == 2
                && of_type(got, "checkout.updated")
                    .iter()
                    .any(|v| v["body"]["data"]["status"] == "succeeded")
        })
        .await;
    assert_verified(&got);
    // Polar's own helper parsed every type it knows.
    assert!(
        of_type(&got, "order.created")[0]["sdk"] == "WebhookOrderCreatedPayload"
            && of_type(&got, "benefit_grant.created")
                .iter()
                .all(|v| v["sdk"] == "WebhookBenefitGrantCreatedPayload"),
        "{got:?}"
    );

    // The bodies are the resources exactly as the API returns them.
    let orders = app.get("/v1/orders/", Some(&app.token)).await;
    orders.expect(200);
    let order = &orders.items()[0];
    let order_event = &of_type(&got, "order.created")[0]["body"];
    assert_eq!(order_event["data"]["id"], order["id"]);
    assert_eq!(order_event["data"]["amount"], order["amount"]);
    assert_eq!(order_event["data"]["customer"]["email"], "ada@example.com");
    let subscription_event = &of_type(&got, "subscription.created")[0]["body"];
    assert_eq!(subscription_event["data"]["id"], order["subscription_id"]);
    let subscription = app
        .get(
            &format!(
                "/v1/subscriptions/{}",
                order["subscription_id"].as_str().unwrap()
            ),
            Some(&app.token),
        )
        .await;
    subscription.expect(200);
    assert_eq!(
        subscription_event["data"]["status"],
        subscription.body["status"]
    );
    let keys = app.get("/v1/license-keys/", Some(&app.token)).await;
    keys.expect(200);
    for key in keys.items() {
        let event = of_type(&got, "license_key.created")
            .into_iter()
            .find(|v| v["body"]["data"]["id"] == key["id"])
            .unwrap_or_else(|| panic!("no license_key.created for {key}"));
        assert_eq!(event["body"]["data"]["key"], key["key"]);
        assert_eq!(event["body"]["data"], key);
    }
    let grants = of_type(&got, "benefit_grant.created");
    assert!(grants.iter().all(|g| g["body"]["data"]["subscription_id"]
        == order["subscription_id"]
        && g["body"]["data"]["is_granted"] == true));
    let acme_grant = grants
        .iter()
        .find(|g| g["body"]["data"]["benefit_id"] == cat.acme_benefit.as_str())
        .expect("the acme benefit's grant");
    assert!(acme_grant["body"]["data"]["properties"]["display_key"]
        .as_str()
        .unwrap()
        .starts_with("****-"));
    // Events of one resource arrive in order: the checkout's creation first.
    let checkout_events: Vec<&Value> = got
        .iter()
        .filter(|v| v["body"]["data"]["id"] == c["id"])
        .collect();
    assert_eq!(checkout_events[0]["type"], "checkout.created");
    assert_eq!(
        checkout_events.last().unwrap()["body"]["data"]["status"],
        "succeeded"
    );

    // Activations: three allowed, the fourth refused and told.
    let key = keys
        .items()
        .into_iter()
        .find(|k| k["benefit_id"] == cat.acme_benefit.as_str())
        .expect("the acme key");
    let mut activation_ids = Vec::new();
    for i in 0..4 {
        let r = app
            .post_json(
                "/v1/customer-portal/license-keys/activate",
                None,
                &json!({"key": key["key"], "organization_id": cat.org, "label": format!("laptop {i}")}),
            )
            .await;
        if i < 3 {
            r.expect(200);
            activation_ids.push(r.body["id"].clone());
        } else {
            r.expect(403);
        }
    }
    let r = app
        .post_json(
            "/v1/customer-portal/license-keys/deactivate",
            None,
            &json!({"key": key["key"], "organization_id": cat.org, "activation_id": activation_ids[0]}),
        )
        .await;
    r.expect(204);
    let got = receiver
        .wait_for("activation events", |got| {
            of_type(got, "license_key.activated").len() == 3
                && of_type(got, "license_key.limit_reached").len() == 1
                && of_type(got, "license_key.deactivated").len() == 1
        })
        .await;
    assert_verified(&got);
    let activated: Vec<&Value> = of_type(&got, "license_key.activated");
    for (event, id) in activated.iter().zip(&activation_ids) {
        assert_eq!(&event["body"]["data"]["id"], id);
        assert_eq!(event["body"]["data"]["license_key"]["id"], key["id"]);
    }
    assert_eq!(
        of_type(&got, "license_key.deactivated")[0]["body"]["data"]["id"],
        activation_ids[0]
    );
    let limit = &of_type(&got, "license_key.limit_reached")[0]["body"]["data"];
    assert_eq!(limit["id"], key["id"]);
    assert_eq!(limit["limit_activations"], 3);
    // The key's events came in the order they happened.
    let key_events: Vec<&str> = got
        .iter()
        .filter(|v| {
            v["body"]["data"]["id"] == key["id"]
                || v["body"]["data"]["license_key"]["id"] == key["id"]
        })
        .map(|v| v["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        key_events,
        [
            "license_key.created",
            "license_key.activated",
            "license_key.activated",
            "license_key.activated",
            "license_key.limit_reached",
            "license_key.deactivated"
        ]
    );

    // The delivery log shows every attempt, newest first, all succeeded.
    let log = app
        .get(
            &format!("/v1/webhooks/deliveries?endpoint_id={endpoint_id}&limit=100"),
            Some(&app.token),
        )
        .await;
    log.expect(200);
    assert_eq!(log.total_count() as usize, got.len());
    for d in log.items() {
        assert_eq!(d["succeeded"], true, "{d}");
        assert_eq!(d["http_code"], 200);
        assert_eq!(d["response"], "ok");
        assert!(d["webhook_event"]["payload"].is_string());
    }
}

#[actix_web::test]
async fn a_failing_receiver_gets_the_same_event_until_it_answers() {
    let app = app().await;
    let api = Api::of(&app);
    let org = crate::checkouts::create_org(api, "retries").await;
    let secret = "a_secret_of_at_least_thirty_two_characters_!";
    let receiver = Receiver::start(secret, 3);
    let e = api
        .posted(
            "/v1/webhooks/endpoints",
            &json!({"url": receiver.url(), "format": "raw", "events": ["customer.created"], "organization_id": org, "secret": secret}),
            201,
        )
        .await;
    assert_eq!(e["secret"], secret);
    let customer = api
        .posted(
            "/v1/customers/",
            &json!({"email": "grace@example.com", "organization_id": org}),
            201,
        )
        .await;
    let got = receiver
        .wait_for("four attempts", |got| {
            got.iter().any(|v| v["answered"] == 200)
        })
        .await;
    assert_verified(&got);
    assert_eq!(got.len(), 4, "{got:?}");
    let ids: Vec<&Value> = got.iter().map(|v| &v["id"]).collect();
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "one webhook-id: {ids:?}"
    );
    assert_eq!(
        got.iter()
            .map(|v| v["answered"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [500, 500, 500, 200]
    );
    assert!(got
        .iter()
        .all(|v| v["body"]["data"]["id"] == customer["id"]));

    let log = app
        .get(
            &format!("/v1/webhooks/deliveries?endpoint_id={}", id_of(&e)),
            Some(&app.token),
        )
        .await;
    log.expect(200);
    let attempts = log.items();
    assert_eq!(attempts.len(), 4);
    // Newest first.
    assert_eq!(attempts[0]["succeeded"], true);
    assert_eq!(attempts[0]["http_code"], 200);
    for a in &attempts[1..] {
        assert_eq!(a["succeeded"], false);
        assert_eq!(a["http_code"], 500);
        assert_eq!(a["response"], "try again");
    }
    assert!(attempts
        .iter()
        .all(|a| a["webhook_event"]["id"] == *ids[0]
            && a["webhook_event"]["type"] == "customer.created"));
    assert_eq!(attempts[0]["webhook_event"]["succeeded"], true);
    assert_eq!(attempts[0]["webhook_event"]["last_http_code"], 200);

    // Redelivery sends the same event again, with the same id.
    let event_id = ids[0].as_str().unwrap();
    let r = app
        .post_json(
            &format!("/v1/webhooks/events/{event_id}/redeliver"),
            Some(&app.token),
            &json!({}),
        )
        .await;
    r.expect(202);
    let got = receiver
        .wait_for("a redelivery", |got| got.len() == 5)
        .await;
    assert_eq!(got[4]["id"], event_id);
    assert_eq!(got[4]["answered"], 200);
}

/// Accepts connections and never answers: a hung endpoint.
fn black_hole() -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binding");
    let port = listener.local_addr().expect("address").port();
    let handle = std::thread::spawn(move || {
        let mut held = Vec::new();
        let start = Instant::now();
        listener.set_nonblocking(true).expect("nonblocking");
        while start.elapsed() < Duration::from_secs(120) {
            match listener.accept() {
                Ok((s, _)) => held.push(s),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
    (port, handle)
}

#[actix_web::test]
async fn a_dead_endpoint_does_not_delay_a_healthy_one() {
    let app = app().await;
    let api = Api::of(&app);
    let org = crate::checkouts::create_org(api, "dead-and-alive").await;
    let (dead_port, _hole) = black_hole();
    endpoint(
        api,
        &org,
        &format!("http://localhost:{dead_port}/hooks"),
        &["customer.created"],
    )
    .await;
    let (_, secret) = endpoint(api, &org, "http://localhost:9/later", &["customer.created"]).await;
    let receiver = Receiver::start(&secret, 0);
    let list = app
        .get(
            &format!("/v1/webhooks/endpoints?organization_id={org}"),
            Some(&app.token),
        )
        .await;
    let healthy = list
        .items()
        .into_iter()
        .find(|e| e["url"] == "http://localhost:9/later")
        .expect("the healthy endpoint");
    app.patch_json(
        &format!("/v1/webhooks/endpoints/{}", healthy["id"].as_str().unwrap()),
        Some(&app.token),
        &json!({"url": receiver.url()}),
    )
    .await
    .expect(200);

    let mut delays = Vec::new();
    for i in 0..5 {
        let sent = Instant::now();
        api.posted(
            "/v1/customers/",
            &json!({"email": format!("c{i}@example.com"), "organization_id": org}),
            201,
        )
        .await;
        receiver
            .wait_for("the healthy delivery", |got| got.len() > i)
            .await;
        delays.push(sent.elapsed());
    }
    delays.sort();
    eprintln!(
        "healthy endpoint beside a hung one: median delivery {:?}, max {:?} (attempt timeout 5 s)",
        delays[2], delays[4]
    );
    // Every one of them well before the hung endpoint's first attempt could even time out.
    assert!(delays[4] < Duration::from_secs(4), "{delays:?}");
    assert_verified(&receiver.received());
}

#[actix_web::test]
async fn events_of_acknowledged_purchases_survive_kill_9() {
    let root = tempfile::tempdir().expect("a temporary directory");
    let data = root.path().join("data");
    std::fs::create_dir_all(&data).expect("creating the data directory");
    let env: &[(&str, &str)] = &[
        ("TOLLGATE__WEBHOOKS__ALLOW_PRIVATE_TARGETS", "true"),
        (
            "TOLLGATE__WEBHOOKS__RETRY_DELAYS_SECS",
            "[0.2, 0.2, 0.2, 0.2, 0.2]",
        ),
    ];
    let deadline = Duration::from_secs(30);
    let mut server = Binary::start(root.path(), &data, "first.log", env, deadline).await;
    let token = crate::helpers::bootstrap_token(&data);
    let http = client();
    let api = Api {
        base: &server.address,
        client: &http,
        token: &token,
    };
    let cat = seed(api, "crashy").await;
    let hook_secret = "crash_test_secret_of_more_than_32_chars";
    let receiver = Receiver::start(hook_secret, 0);
    api.posted(
        "/v1/webhooks/endpoints",
        &json!({"url": receiver.url(), "format": "raw", "events": ["order.created"], "organization_id": cat.org, "secret": hook_secret}),
        201,
    )
    .await;
    let mut orders = Vec::new();
    for i in 0..5 {
        let c = created(api, &by_price(&cat.ebook_price)).await;
        confirm(api, &secret(&c), &buyer(&format!("k{i}@example.com")))
            .await
            .expect(200);
        orders.push(id_of(&c));
    }
    // Right after the last acknowledgement: most events are not delivered yet.
    server.kill_9();
    drop(server);
    let before = receiver.received().len();
    let _server = Binary::start(root.path(), &data, "second.log", env, deadline).await;
    let got = receiver
        .wait_for("every order.created", |got| {
            let checkouts: std::collections::BTreeSet<&str> = got
                .iter()
                .filter_map(|v| v["body"]["data"]["checkout_id"].as_str())
                .collect();
            orders.iter().all(|o| checkouts.contains(o.as_str()))
        })
        .await;
    assert_verified(&got);
    // At least once: an event sent just before the kill may come again, with its id.
    let ids: std::collections::BTreeSet<&str> =
        got.iter().filter_map(|v| v["id"].as_str()).collect();
    assert_eq!(ids.len(), 5, "one event per order: {got:?}");
    eprintln!("kill -9: {before} of 5 delivered before the kill, the rest after the restart");
}

#[actix_web::test]
async fn an_endpoint_that_keeps_failing_is_disabled_and_can_be_enabled_again() {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut s = settings(dir.path());
    s.webhooks.disable_after_failures = 3;
    s.webhooks.disable_after_hours = 0.0;
    s.webhooks.retry_delays_secs = vec![0.05; 10];
    let app = spawn_app_with(dir, s, tollgate_actors::SystemClock::shared()).await;
    let api = Api::of(&app);
    let org = crate::checkouts::create_org(api, "failing").await;
    // A port nobody listens on: every attempt is refused.
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").expect("binding");
        l.local_addr().expect("address").port()
    };
    let (id, _) = endpoint(
        api,
        &org,
        &format!("http://localhost:{closed}/hooks"),
        &["customer.created"],
    )
    .await;
    api.posted(
        "/v1/customers/",
        &json!({"email": "nobody@example.com", "organization_id": org}),
        201,
    )
    .await;
    let path = format!("/v1/webhooks/endpoints/{id}");
    let start = Instant::now();
    loop {
        let e = app.get(&path, Some(&app.token)).await;
        e.expect(200);
        if e.body["enabled"] == false {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "never disabled: {}", e.body);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = app
        .get(
            &format!("/v1/webhooks/deliveries?endpoint_id={id}"),
            Some(&app.token),
        )
        .await;
    let attempts = log.items();
    assert!(attempts.len() >= 3, "{attempts:?}");
    assert!(attempts
        .iter()
        .all(|a| a["succeeded"] == false && a["http_code"].is_null()));
    assert!(attempts[0]["response"]
        .as_str()
        .unwrap()
        .starts_with("Could not connect"));
    // The seller turns it back on.
    let r = app
        .patch_json(&path, Some(&app.token), &json!({"enabled": true}))
        .await;
    r.expect(200);
    assert_eq!(r.body["enabled"], true);
}

#[actix_web::test]
async fn the_lifecycle_of_a_catalog_a_subscription_and_its_keys_is_told_in_order() {
    let app = app().await;
    let api = Api::of(&app);
    let cat = seed(api, "lifecycle").await;
    let hook_secret = "lifecycle_secret_of_at_least_32_characters";
    let receiver = Receiver::start(hook_secret, 0);
    let events = [
        "organization.updated",
        "benefit.created",
        "benefit.updated",
        "product.created",
        "product.updated",
        "customer.updated",
        "subscription.created",
        "subscription.updated",
        "subscription.active",
        "subscription.canceled",
        "subscription.uncanceled",
        "subscription.revoked",
        "benefit_grant.revoked",
        "license_key.updated",
        "license_key.revoked",
    ];
    api.posted(
        "/v1/webhooks/endpoints",
        &json!({"url": receiver.url(), "format": "raw", "events": events, "organization_id": cat.org, "secret": hook_secret}),
        201,
    )
    .await;
    let token = Some(app.token.as_str());

    // The catalog.
    app.patch_json(
        &format!("/v1/organizations/{}", cat.org),
        token,
        &json!({"name": "Lifecycle Inc"}),
    )
    .await
    .expect(200);
    let benefit = api
        .posted(
            "/v1/benefits/",
            &json!({"type": "custom", "description": "Support", "organization_id": cat.org, "properties": {"note": "Write to us"}}),
            201,
        )
        .await;
    app.patch_json(
        &format!("/v1/benefits/{}", id_of(&benefit)),
        token,
        &json!({"type": "custom", "description": "Priority support"}),
    )
    .await
    .expect(200);
    let product = api
        .posted(
            "/v1/products/",
            &json!({"name": "Add-on", "organization_id": cat.org, "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 900, "price_currency": "usd"}]}),
            201,
        )
        .await;
    app.patch_json(
        &format!("/v1/products/{}", id_of(&product)),
        token,
        &json!({"name": "Add-on Plus"}),
    )
    .await
    .expect(200);

    // A subscription, its keys, then cancel, uncancel and revoke.
    let c = created(api, &by_price(&cat.monthly)).await;
    confirm(api, &secret(&c), &buyer("lin@example.com"))
        .await
        .expect(200);
    let subscription_id = {
        let r = app.get("/v1/subscriptions/", token).await;
        id_of(&r.items()[0])
    };
    let keys = app.get("/v1/license-keys/", token).await.items();
    let key_id = id_of(&keys[0]);
    let key_path = format!("/v1/license-keys/{key_id}");
    app.patch_json(&key_path, token, &json!({"limit_activations": 5}))
        .await
        .expect(200);
    app.patch_json(&key_path, token, &json!({"status": "revoked"}))
        .await
        .expect(200);
    let sub_path = format!("/v1/subscriptions/{subscription_id}");
    for body in [
        json!({"cancel_at_period_end": true}),
        json!({"cancel_at_period_end": false}),
        json!({"revoke": true}),
    ] {
        app.patch_json(&sub_path, token, &body).await.expect(200);
    }

    let got = receiver
        .wait_for("the lifecycle", |got| {
            !of_type(got, "subscription.revoked").is_empty()
                && of_type(got, "benefit_grant.revoked").len() == 2
                && !of_type(got, "license_key.revoked").is_empty()
        })
        .await;
    assert_verified(&got);
    let kinds = |prefix: &str, id: &str| -> Vec<String> {
        got.iter()
            .filter(|v| {
                v["type"].as_str().unwrap().starts_with(prefix) && v["body"]["data"]["id"] == id
            })
            .map(|v| v["type"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(kinds("organization.", &cat.org), ["organization.updated"]);
    assert_eq!(
        of_type(&got, "organization.updated")[0]["body"]["data"]["name"],
        "Lifecycle Inc"
    );
    assert_eq!(
        kinds("benefit.", &id_of(&benefit)),
        ["benefit.created", "benefit.updated"]
    );
    assert_eq!(
        kinds("product.", &id_of(&product)),
        ["product.created", "product.updated"]
    );
    assert_eq!(
        of_type(&got, "product.updated")[0]["body"]["data"]["name"],
        "Add-on Plus"
    );
    assert_eq!(
        kinds("subscription.", &subscription_id),
        [
            "subscription.created",
            "subscription.active",
            "subscription.updated",
            "subscription.canceled",
            "subscription.updated",
            "subscription.uncanceled",
            "subscription.updated",
            "subscription.canceled",
            "subscription.revoked",
        ]
    );
    let revoked = &of_type(&got, "subscription.revoked")[0]["body"]["data"];
    assert_eq!(revoked["status"], "canceled");
    assert!(revoked["ended_at"].is_string());
    assert_eq!(
        kinds("license_key.", &key_id),
        ["license_key.updated", "license_key.revoked"]
    );
    let updated = &of_type(&got, "license_key.updated")[0]["body"]["data"];
    assert_eq!(updated["limit_activations"], 5);
    for grant in of_type(&got, "benefit_grant.revoked") {
        let g = &grant["body"]["data"];
        assert_eq!(g["is_revoked"], true);
        assert_eq!(g["is_granted"], false);
        assert_eq!(g["subscription_id"], subscription_id.as_str());
        assert_eq!(grant["sdk"], "WebhookBenefitGrantRevokedPayload");
    }
    // Nothing the endpoint did not subscribe to.
    assert!(got
        .iter()
        .all(|v| events.contains(&v["type"].as_str().unwrap())));
}

/// A bare HTTP server that answers every request with `response`; counts requests.
fn canned(response: Vec<u8>) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").expect("binding");
    let port = listener.local_addr().expect("address").port();
    let hits = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(50) {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            // Headers, then the body its Content-Length announces.
            while let Ok(n) = s.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).to_lowercase();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + len {
                        break;
                    }
                }
            }
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = s.write_all(&response);
        }
    });
    (port, hits)
}

#[actix_web::test]
async fn redirects_are_not_followed_and_answers_are_read_up_to_a_cap() {
    let app = app().await;
    let api = Api::of(&app);
    let org = crate::checkouts::create_org(api, "redirects").await;
    let receiver = Receiver::start("redirect_target_secret_of_32_characters!", 0);
    let redirect = format!(
        "HTTP/1.1 302 Found\r\nLocation: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        receiver.url()
    );
    let (redirecting, _) = canned(redirect.into_bytes());
    let mut big =
        b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\nConnection: close\r\n\r\n".to_vec();
    big.extend(std::iter::repeat_n(b'x', 1_000_000));
    let (chatty, _) = canned(big);
    let (redirect_id, _) = endpoint(
        api,
        &org,
        &format!("http://localhost:{redirecting}/hooks"),
        &["customer.created"],
    )
    .await;
    let (chatty_id, _) = endpoint(
        api,
        &org,
        &format!("http://localhost:{chatty}/hooks"),
        &["customer.created"],
    )
    .await;
    api.posted(
        "/v1/customers/",
        &json!({"email": "hops@example.com", "organization_id": org}),
        201,
    )
    .await;
    let attempts = |id: String| {
        let app = &app;
        async move {
            let start = Instant::now();
            loop {
                let log = app
                    .get(
                        &format!("/v1/webhooks/deliveries?endpoint_id={id}"),
                        Some(&app.token),
                    )
                    .await;
                log.expect(200);
                let items = log.items();
                if !items.is_empty() {
                    return items;
                }
                assert!(start.elapsed() < DEADLINE, "no attempt for {id}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    let redirected = attempts(redirect_id).await;
    assert_eq!(redirected[0]["http_code"], 302);
    assert_eq!(redirected[0]["succeeded"], false);
    let answered = attempts(chatty_id).await;
    assert_eq!(answered[0]["succeeded"], true);
    assert_eq!(answered[0]["response"].as_str().unwrap().len(), 2048);
    // The redirect's target never heard of it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(receiver.received().is_empty());
}

#[actix_web::test]
async fn delivered_events_and_their_log_are_purged_after_the_retention_period() {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let s = settings(dir.path());
    let (clock, shared) = tollgate_actors::ManualClock::shared(chrono::Utc::now());
    let app = spawn_app_with(dir, s, shared).await;
    let api = Api::of(&app);
    let org = crate::checkouts::create_org(api, "retention").await;
    let hook_secret = "retention_secret_of_at_least_32_chars";
    let receiver = Receiver::start(hook_secret, 0);
    let e = api
        .posted(
            "/v1/webhooks/endpoints",
            &json!({"url": receiver.url(), "format": "raw", "events": ["customer.created"], "organization_id": org, "secret": hook_secret}),
            201,
        )
        .await;
    let log_path = format!("/v1/webhooks/deliveries?endpoint_id={}", id_of(&e));
    let customer = |email: &'static str| {
        let org = org.clone();
        async move {
            api.posted(
                "/v1/customers/",
                &json!({"email": email, "organization_id": org}),
                201,
            )
            .await
        }
    };
    customer("old@example.com").await;
    receiver
        .wait_for("the first event", |got| got.len() == 1)
        .await;
    // 89 days later, a second one; then past 90 days for the first only.
    clock.advance(chrono::Duration::days(89));
    customer("new@example.com").await;
    receiver
        .wait_for("the second event", |got| got.len() == 2)
        .await;
    let deliveries = || async {
        let r = app.get(&log_path, Some(&app.token)).await;
        r.expect(200);
        r.items()
    };
    assert_eq!(deliveries().await.len(), 2);
    clock.advance(chrono::Duration::days(2));
    let purged = tollgate::webhooks::purge(&app.state)
        .await
        .expect("purging");
    assert_eq!(purged, 1);
    let left = deliveries().await;
    assert_eq!(left.len(), 1);
    assert!(left[0]["webhook_event"]["payload"]
        .as_str()
        .unwrap()
        .contains("new@example.com"));
    // Nothing more to purge until the second one is old enough.
    assert_eq!(tollgate::webhooks::purge(&app.state).await.unwrap(), 0);
}

#[actix_web::test]
async fn a_refund_that_revokes_benefits_is_told_to_a_verifying_receiver() {
    let app = app().await;
    let api = Api::of(&app);
    let cat = seed(api, "hooks-refund").await;
    let placeholder = endpoint(api, &cat.org, "http://localhost:9/x", &["order.created"]).await;
    let receiver = Receiver::start(&placeholder.1, 0);
    let events = [
        "refund.created",
        "refund.updated",
        "order.updated",
        "order.refunded",
        "license_key.revoked",
        "benefit_grant.revoked",
    ];
    app.patch_json(
        &format!("/v1/webhooks/endpoints/{}", placeholder.0),
        Some(&app.token),
        &json!({"url": receiver.url(), "events": events}),
    )
    .await
    .expect(200);
    let c = created(api, &by_price(&cat.ebook_price)).await;
    confirm(api, &secret(&c), &buyer("ada@example.com"))
        .await
        .expect(200);
    let orders = api
        .read(&format!("/v1/orders/?checkout_id={}", id_of(&c)))
        .await;
    let order = id_of(&orders.items()[0]);
    let refund = app
        .post_json(
            "/v1/refunds/",
            Some(&app.token),
            &json!({"order_id": order, "reason": "fraudulent", "amount": 2500, "revoke_benefits": true}),
        )
        .await;
    refund.expect(200);

    let got = receiver
        .wait_for("refund events", |got| {
            [
                "refund.created",
                "order.refunded",
                "license_key.revoked",
                "benefit_grant.revoked",
            ]
            .iter()
            .all(|t| !of_type(got, t).is_empty())
                // The refund's own update may be delivered after the others.
                && of_type(got, "refund.updated")
                    .iter()
                    .any(|e| e["body"]["data"]["status"] == "succeeded")
        })
        .await;
    assert_verified(&got);
    let created_event = of_type(&got, "refund.created")[0];
    assert_eq!(created_event["body"]["data"]["id"], refund.body["id"]);
    assert_eq!(created_event["body"]["data"]["order_id"], order.as_str());
    let refunded = of_type(&got, "order.refunded")[0];
    assert_eq!(refunded["body"]["data"]["status"], "refunded");
    assert_eq!(refunded["body"]["data"]["refunded_amount"], 2500);
    let revoked = of_type(&got, "license_key.revoked")[0];
    assert_eq!(revoked["body"]["data"]["status"], "revoked");
    let grant = of_type(&got, "benefit_grant.revoked")[0];
    assert!(grant["body"]["data"]["revoked_at"].is_string(), "{grant}");
    // The refund's own update (pending → succeeded) follows its creation.
    let updated = of_type(&got, "refund.updated");
    assert!(
        updated
            .iter()
            .any(|e| e["body"]["data"]["status"] == "succeeded"),
        "{got:?}"
    );
}
