//! The better-auth Polar plugin (`@polar-sh/better-auth` from npm, pinned with its peers in
//! `tests/clients/better-auth/`) as a seller's backend runs it: its `webhooks({ secret,
//! onCustomerStateChanged, onPayload })` handler, served by better-auth, is Tollgate's
//! webhook endpoint. It verifies each real delivery and parses it with `@polar-sh/sdk`'s
//! `validateEvent` (a 400 otherwise), then calls the handlers: `customer.state_changed`
//! arrives and parses after a purchase, a renewal and a refund that revokes. The handlers
//! get the SDK's parsed objects (camelCase fields, dates as JavaScript's), logged as such.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::app::subscription::sweep_subscriptions;
use tollgate_actors::ManualClock;

use crate::checkouts::{buyer, by_price, confirm, created, id_of, secret, seed, Api};
use crate::helpers::{spawn_app_with, TestApp};
use crate::tools;

/// Installing the packages (first run) and starting Node.
const START_DEADLINE: Duration = Duration::from_secs(300);
/// How long a step waits for its deliveries.
const DEADLINE: Duration = Duration::from_secs(60);
const PATH: &str = "/api/auth/polar/webhooks";

/// The Node process serving the plugin; killed when dropped.
struct Plugin {
    child: Child,
    port: u16,
    log: PathBuf,
    stderr: PathBuf,
    _dir: TempDir,
}

impl Drop for Plugin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Plugin {
    fn start(webhook_secret: &str) -> Plugin {
        let packages = tools::node_packages("tests/clients/better-auth");
        let script = tools::node_script(&packages, "tests/clients/better-auth/receiver.mjs");
        let dir = tempfile::tempdir().expect("a directory for the plugin's log");
        let log = dir.path().join("received.jsonl");
        let stderr = dir.path().join("plugin.err");
        let mut child = Command::new("node")
            .arg(script)
            .args(["--secret", webhook_secret, "--max-seconds", "600", "--log"])
            .arg(&log)
            .current_dir(&packages)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr).expect("the plugin's stderr"))
            .spawn()
            .expect("starting node");
        let port = tools::announced_port(&mut child, START_DEADLINE).unwrap_or_else(|e| {
            panic!(
                "the plugin: {e}; stderr:\n{}",
                std::fs::read_to_string(&stderr).unwrap_or_default()
            )
        });
        Plugin {
            child,
            port,
            log,
            stderr,
            _dir: dir,
        }
    }

    fn url(&self) -> String {
        format!("http://localhost:{}{PATH}", self.port)
    }

    fn lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    /// The states the plugin's `onCustomerStateChanged` received, in order.
    fn states(&self) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|l| l["kind"] == "onCustomerStateChanged")
            .collect()
    }

    /// Every request was answered 200 (verified, parsed, handled): a 400 is the plugin
    /// refusing a delivery.
    #[track_caller]
    fn assert_all_accepted(&self) {
        let refused: Vec<Value> = self
            .lines()
            .into_iter()
            .filter(|l| l["kind"] == "http" && l["status"] != 200)
            .collect();
        assert!(
            refused.is_empty(),
            "the plugin refused deliveries: {refused:?}\nstderr:\n{}",
            std::fs::read_to_string(&self.stderr).unwrap_or_default()
        );
    }

    /// Waits until a state received satisfies `done`; returns it. Fails after
    /// [`DEADLINE`] or as soon as the plugin refuses a delivery.
    async fn wait_for_state(&self, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        self.wait_for_state_after(0, what, done).await.1
    }

    /// As [`Plugin::wait_for_state`], among the states from the `skip`th on; with its
    /// position.
    async fn wait_for_state_after(
        &self,
        skip: usize,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> (usize, Value) {
        let started = Instant::now();
        loop {
            self.assert_all_accepted();
            if let Some(found) = self
                .states()
                .into_iter()
                .enumerate()
                .skip(skip)
                .find(|(_, s)| done(s))
            {
                return found;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "no customer.state_changed {what} within {DEADLINE:?}; received:\n{}\nstderr:\n{}",
                self.lines()
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
                std::fs::read_to_string(&self.stderr).unwrap_or_default()
            );
            actix_web::rt::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn time(v: &Value) -> DateTime<Utc> {
    v.as_str()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .unwrap_or_else(|| panic!("not a timestamp: {v}"))
        .with_timezone(&Utc)
}

/// A field of a state: the SDK's parsed objects name fields in camelCase, the API in
/// snake_case.
fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> &'a Value {
    match &v[camel] {
        Value::Null => &v[snake],
        found => found,
    }
}

fn benefit_ids(state: &Value) -> Vec<String> {
    let mut ids: Vec<String> = field(state, "grantedBenefits", "granted_benefits")
        .as_array()
        .unwrap_or_else(|| panic!("no granted benefits in {state}"))
        .iter()
        .map(|g| {
            field(g, "benefitId", "benefit_id")
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    ids.sort_unstable();
    ids
}

/// A state's grants: (grant id, benefit id), sorted.
fn grants(state: &Value) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = field(state, "grantedBenefits", "granted_benefits")
        .as_array()
        .unwrap_or_else(|| panic!("no granted benefits in {state}"))
        .iter()
        .map(|g| {
            (
                g["id"].as_str().unwrap().to_string(),
                field(g, "benefitId", "benefit_id")
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    all.sort_unstable();
    all
}

async fn api_state(app: &TestApp, customer: &str) -> Value {
    let r = app
        .get(&format!("/v1/customers/{customer}/state"), Some(&app.token))
        .await;
    r.expect(200);
    r.body
}

#[actix_web::test]
async fn the_better_auth_plugin_receives_the_state_after_a_purchase_a_renewal_and_a_refund() {
    let dir = tempfile::tempdir().expect("a data directory");
    let s = crate::webhooks::settings(dir.path());
    let (clock, shared) = ManualClock::shared(Utc::now());
    let app = spawn_app_with(dir, s, shared).await;
    let api = Api::of(&app);
    let cat = seed(api, "better-auth").await;
    // The secret is generated (Polar's format): the plugin starts with it once known.
    let e = api
        .posted(
            "/v1/webhooks/endpoints",
            &json!({"url": "http://localhost:9/x", "format": "raw",
                    "events": ["customer.state_changed"], "organization_id": cat.org}),
            201,
        )
        .await;
    let plugin = Plugin::start(e["secret"].as_str().unwrap());
    app.patch_json(
        &format!("/v1/webhooks/endpoints/{}", id_of(&e)),
        Some(&app.token),
        &json!({"url": plugin.url()}),
    )
    .await
    .expect(200);

    // A purchase of the monthly plan: a state with its subscription and both benefits.
    let c = created(api, &by_price(&cat.monthly)).await;
    confirm(api, &secret(&c), &buyer("ada@example.com"))
        .await
        .expect(200);
    let subs = api
        .read(&format!("/v1/subscriptions/?organization_id={}", cat.org))
        .await;
    subs.expect(200);
    let sub = subs.items()[0].clone();
    let customer = sub["customer_id"].as_str().unwrap().to_string();
    let bought = plugin
        .wait_for_state("after the purchase", |s| {
            s["data"]["id"] == customer.as_str()
                && s["data"]["activeSubscriptions"][0]["id"] == sub["id"]
        })
        .await;
    assert_eq!(bought["type"], "customer.state_changed");
    assert_eq!(bought["data"]["email"], "ada@example.com");
    let mut plan_benefits = vec![cat.acme_benefit.clone(), cat.plain_benefit.clone()];
    plan_benefits.sort_unstable();
    assert_eq!(benefit_ids(&bought["data"]), plan_benefits);

    // Renewed at the period's end: a state in the new period.
    let end = time(&sub["current_period_end"]);
    clock.set(end + chrono::Duration::hours(1));
    assert_eq!(sweep_subscriptions(&app.state).await.unwrap().renewed, 1);
    let renewed = plugin
        .wait_for_state("after the renewal", |s| {
            s["data"]["id"] == customer.as_str()
                && s["data"]["activeSubscriptions"][0]["currentPeriodStart"]
                    .as_str()
                    // The SDK parses dates to JavaScript's, to the millisecond.
                    .is_some_and(|t| {
                        DateTime::parse_from_rfc3339(t)
                            .is_ok_and(|t| t.timestamp_millis() == end.timestamp_millis())
                    })
        })
        .await;
    assert_eq!(
        renewed["data"]["activeSubscriptions"][0]["id"], sub["id"],
        "the same subscription, renewed"
    );

    // The e-book bought, then refunded with its benefits revoked: a state with its grant,
    // then one without it, the plan's grants as they were.
    let plan_grants = grants(&renewed["data"]);
    let before = plugin.states().len();
    let c = created(api, &by_price(&cat.ebook_price)).await;
    confirm(api, &secret(&c), &buyer("ada@example.com"))
        .await
        .expect(200);
    let orders = api
        .read(&format!(
            "/v1/orders/?organization_id={}&product_id={}",
            cat.org, cat.ebook
        ))
        .await;
    orders.expect(200);
    let ebook_order = id_of(&orders.items()[0]);
    let (at, with_ebook) = plugin
        .wait_for_state_after(before, "with the e-book's grant", |s| {
            grants(&s["data"]).len() > plan_grants.len()
        })
        .await;
    assert!(
        plan_grants
            .iter()
            .all(|g| grants(&with_ebook["data"]).contains(g)),
        "{with_ebook}"
    );
    app.post_json(
        "/v1/refunds/",
        Some(&app.token),
        &json!({"order_id": ebook_order, "reason": "customer_request", "amount": 2500,
                "revoke_benefits": true}),
    )
    .await
    .expect(200);
    let (_, refunded) = plugin
        .wait_for_state_after(at + 1, "after the refund", |s| {
            grants(&s["data"]) == plan_grants
        })
        .await;
    assert_eq!(refunded["type"], "customer.state_changed");
    assert_eq!(refunded["data"]["id"], customer.as_str());
    assert_eq!(
        refunded["data"]["activeSubscriptions"][0]["id"], sub["id"],
        "the plan is untouched by the e-book's refund"
    );
    assert_eq!(grants(&api_state(&app, &customer).await), plan_grants);

    // Every delivery verified and parsed by the plugin, and seen by `onPayload` too.
    plugin.assert_all_accepted();
    let lines = plugin.lines();
    let handled = lines
        .iter()
        .filter(|l| l["kind"] == "onPayload" && l["type"] == "customer.state_changed")
        .count();
    assert_eq!(handled, plugin.states().len());
    assert!(handled >= 3, "{lines:?}");
}
