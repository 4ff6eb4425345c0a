//! The Stripe payment processor end to end, against localstripe (a stateful fake Stripe,
//! pinned in `tests/clients/stripe/requirements.txt`, started per test by
//! `tests/clients/stripe/run_localstripe.py`, which patches in what it lacks:
//! `setup_future_usage`, and saving a method for off-session charges).
//!
//! Each test runs the real application with `payments.processor = "stripe"` pointed at its
//! own localstripe, whose webhook is registered for the application's
//! `/v1/integrations/stripe/webhook`. Buyers' cards are PaymentMethods created in
//! localstripe with the secret key; their `pm_…` ids are the confirm's
//! `confirmation_token_id`. What a purchase creates is read through the API (orders,
//! license keys, validation) and what was charged through localstripe's API.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::rt::time::sleep;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use reqwest::header::CONTENT_TYPE;
use reqwest::StatusCode;
use serde_json::{json, Value};
use sha2::Sha256;
use tempfile::TempDir;
use tollgate::app::subscription::sweep_subscriptions;
use tollgate::bootstrap::TOKEN_FILE;
use tollgate::config::{ProcessorKind, Settings};
use tollgate::payments::stripe::event_meta_key;
use tollgate::startup::Application;
use tollgate_actors::ManualClock;

use crate::binary::Binary;
use crate::checkout_pages::{assert_page, checkout_path, page};
use crate::checkouts::{
    buyer, by_price, client_get, confirm, created, get_by_id, id_of, secret, seed, Api, Catalog,
};
use crate::helpers::{client, send_checked, spawn_app_with, Reply, TestApp};
use crate::tools;

pub(crate) const SECRET_KEY: &str = "sk_test_tollgate_localstripe";
pub(crate) const PUBLISHABLE_KEY: &str = "pk_test_tollgate_localstripe";
pub(crate) const WEBHOOK_SECRET: &str = "whsec_tollgate_localstripe";
const WEBHOOK_PATH: &str = "/v1/integrations/stripe/webhook";
/// The id of our endpoint among localstripe's webhooks (registering it again replaces it).
const WEBHOOK_ID: &str = "tollgate";

/// localstripe's cards (`resources.py`, `PaymentMethod`).
pub(crate) const CARD_OK: &str = "4242424242424242";
pub(crate) const CARD_DECLINED: &str = "4000000000000341";
pub(crate) const CARD_3DS: &str = "4000000000003220";
const CARD_3DS_2: &str = "4000002760003184";

/// localstripe answers within this once started (first start includes Python's imports).
const START_DEADLINE: Duration = Duration::from_secs(30);
/// localstripe delivers a webhook ~1 s after the event; this is plenty.
const WEBHOOK_DEADLINE: Duration = Duration::from_secs(20);
/// The launcher exits on its own after this, should everything else fail to stop it.
const LOCALSTRIPE_MAX_SECONDS: u64 = 600;

// ---------------------------------------------------------------------------------------
// localstripe

/// A running localstripe. Dropping it closes its stdin (the launcher then exits) and kills
/// it, so a failing test never leaves one behind.
pub(crate) struct LocalStripe {
    child: Child,
    stdin: Option<ChildStdin>,
    /// `http://127.0.0.1:<port>`
    pub base: String,
    http: reqwest::Client,
    log: PathBuf,
    _dir: TempDir,
}

impl Drop for LocalStripe {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LocalStripe {
    /// Installs localstripe on first use, starts it on a free loopback port and waits until
    /// it answers.
    async fn start() -> LocalStripe {
        let python = tools::python_venv("tests/clients/stripe/requirements.txt");
        let dir = tempfile::tempdir().expect("creating localstripe's directory");
        let log = dir.path().join("localstripe.log");
        let mut child = Command::new(python)
            .arg(tools::repo_root().join("tests/clients/stripe/run_localstripe.py"))
            .args(["--max-seconds", &LOCALSTRIPE_MAX_SECONDS.to_string()])
            .current_dir(dir.path())
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(File::create(&log).expect("creating localstripe's log"))
            .spawn()
            .expect("starting localstripe");
        let stdin = child.stdin.take();
        // The launcher prints `PORT <n>` once it listens.
        let port = tools::announced_port(&mut child, START_DEADLINE);
        let mut ls = LocalStripe {
            child,
            stdin,
            base: String::new(),
            http: client(),
            log,
            _dir: dir,
        };
        let port = port.unwrap_or_else(|e| panic!("localstripe: {e}; log:\n{}", ls.log_text()));
        ls.base = format!("http://127.0.0.1:{port}");
        ls.wait_ready().await;
        ls
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    async fn wait_ready(&mut self) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("polling localstripe") {
                panic!(
                    "localstripe exited ({status}) before answering; log:\n{}",
                    self.log_text()
                );
            }
            let ready = self
                .http
                .get(self.url("/js.stripe.com/v3/"))
                .timeout(Duration::from_secs(2))
                .send()
                .await
                .is_ok_and(|r| r.status() == 200);
            if ready {
                return;
            }
            assert!(
                started.elapsed() < START_DEADLINE,
                "localstripe did not answer within {START_DEADLINE:?}; log:\n{}",
                self.log_text()
            );
            sleep(Duration::from_millis(100)).await;
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn read(resp: reqwest::Response) -> (StatusCode, Value) {
        let status = resp.status();
        let text = resp.text().await.expect("reading localstripe's answer");
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, body)
    }

    /// A form POST with the secret key, as Stripe's clients send.
    pub(crate) async fn post(&self, path: &str, form: &[(&str, &str)]) -> (StatusCode, Value) {
        let resp = self
            .http
            .post(self.url(path))
            .bearer_auth(SECRET_KEY)
            .form(form)
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {path} to localstripe: {e}"));
        Self::read(resp).await
    }

    /// A GET with the secret key that must answer 200.
    pub async fn get(&self, path: &str) -> Value {
        let resp = self
            .http
            .get(self.url(path))
            .bearer_auth(SECRET_KEY)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path} from localstripe: {e}"));
        let (status, body) = Self::read(resp).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    /// A card PaymentMethod, as Stripe.js would create it in the buyer's browser.
    pub(crate) async fn card(&self, number: &str) -> String {
        let (status, body) = self
            .post(
                "/v1/payment_methods",
                &[
                    ("type", "card"),
                    ("card[number]", number),
                    ("card[exp_month]", "12"),
                    ("card[exp_year]", "2034"),
                    ("card[cvc]", "123"),
                ],
            )
            .await;
        assert_eq!(status, 200, "creating a card: {body}");
        id_of(&body)
    }

    /// Sends our events to `url` signed with [`WEBHOOK_SECRET`] (all events, or `events`).
    async fn register_webhook(&self, url: &str, events: Option<&[&str]>) {
        let mut body = json!({"url": url, "secret": WEBHOOK_SECRET});
        if let Some(events) = events {
            body["events"] = json!(events);
        }
        let resp = self
            .http
            .post(self.url(&format!("/_config/webhooks/{WEBHOOK_ID}")))
            .json(&body)
            .send()
            .await
            .expect("registering the webhook");
        assert_eq!(resp.status(), 200, "registering the webhook");
    }

    pub async fn intent(&self, id: &str) -> Value {
        self.get(&format!("/v1/payment_intents/{id}")).await
    }

    /// Every PaymentIntent, oldest first.
    pub async fn intents(&self) -> Vec<Value> {
        let mut all = list(&self.get("/v1/payment_intents?limit=100").await);
        all.sort_by_key(|i| i["created"].as_i64());
        all
    }

    async fn customers(&self) -> Vec<Value> {
        list(&self.get("/v1/customers?limit=100").await)
    }

    /// Events of one type.
    pub async fn events(&self, kind: &str) -> Vec<Value> {
        list(&self.get(&format!("/v1/events?type={kind}&limit=100")).await)
    }

    /// The event of `kind` about the intent `intent`.
    pub async fn event_for(&self, kind: &str, intent: &str) -> Value {
        let events = self.events(kind).await;
        let mine: Vec<Value> = events
            .into_iter()
            .filter(|e| e["data"]["object"]["id"] == intent)
            .collect();
        assert_eq!(mine.len(), 1, "{kind} events for {intent}: {mine:?}");
        mine[0].clone()
    }

    /// 3-D Secure, as the buyer's browser does it with the publishable key.
    pub(crate) async fn authenticate(
        &self,
        intent: &str,
        client_secret: &str,
        success: bool,
    ) -> Value {
        let resp = self
            .http
            .post(self.url(&format!(
                "/v1/payment_intents/{intent}/_authenticate?success={success}"
            )))
            .json(&json!({"key": PUBLISHABLE_KEY, "client_secret": client_secret}))
            .send()
            .await
            .expect("authenticating in localstripe");
        let (status, body) = Self::read(resp).await;
        assert_eq!(status, 200, "authenticating {intent}: {body}");
        body
    }
}

pub(crate) fn list(body: &Value) -> Vec<Value> {
    assert_eq!(body["has_more"], false, "more than one page: {body}");
    body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {body}"))
        .clone()
}

// ---------------------------------------------------------------------------------------
// The application, paying through localstripe

/// Settings of a server that charges through the localstripe at `api_base`.
fn stripe_settings(data_dir: &Path, api_base: &str) -> Settings {
    let mut settings = Settings::for_tests(data_dir);
    settings.payments.processor = ProcessorKind::Stripe;
    settings.payments.stripe_secret_key = SECRET_KEY.into();
    settings.payments.stripe_publishable_key = PUBLISHABLE_KEY.into();
    settings.payments.stripe_webhook_secret = WEBHOOK_SECRET.into();
    settings.payments.stripe_api_base = api_base.into();
    // localstripe serves its fake Stripe.js (with our additions) under its API base.
    settings.payments.stripe_js_url = format!("{api_base}/js.stripe.com/v3/");
    settings
}

/// The application (declared first: it stops before localstripe goes) and its localstripe.
pub(crate) struct Shop {
    pub app: TestApp,
    pub ls: LocalStripe,
    /// Set when the shop runs on a manual clock.
    pub clock: Option<Arc<ManualClock>>,
}

/// A server charging through a fresh localstripe, whose webhook points at it; on the
/// system clock, or on a manual one starting now (webhooks are signed with the real time).
pub(crate) async fn spawn_shop(manual_clock: bool) -> Shop {
    spawn_shop_with(manual_clock, |_| {}).await
}

/// [`spawn_shop`], its settings changed by `change` first (e.g. to mail through SMTP).
pub(crate) async fn spawn_shop_with(
    manual_clock: bool,
    change: impl FnOnce(&mut Settings),
) -> Shop {
    let ls = LocalStripe::start().await;
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = stripe_settings(dir.path(), &ls.base);
    change(&mut settings);
    let (clock, shared) = if manual_clock {
        let (clock, shared) = ManualClock::shared(Utc::now());
        (Some(clock), shared)
    } else {
        (None, tollgate_actors::SystemClock::shared())
    };
    let app = spawn_app_with(dir, settings, shared).await;
    ls.register_webhook(&app.url(WEBHOOK_PATH), None).await;
    Shop { app, ls, clock }
}

impl Shop {
    pub fn api(&self) -> Api<'_> {
        Api::of(&self.app)
    }

    /// Orders of `org` (through the API), oldest first.
    pub async fn orders(&self, org: &str) -> Vec<Value> {
        let r = self
            .api()
            .read(&format!(
                "/v1/orders/?organization_id={org}&limit=100&sorting=created_at"
            ))
            .await;
        r.expect(200);
        r.items()
    }

    pub(crate) async fn license_keys(&self, org: &str) -> Vec<Value> {
        let r = self
            .api()
            .read(&format!("/v1/license-keys?organization_id={org}&limit=100"))
            .await;
        r.expect(200);
        r.items()
    }

    /// Validates a key as a customer's app would; returns the key as validated.
    async fn validate(&self, key: &str, org: &str) -> Value {
        let r = self
            .app
            .post_json(
                "/v1/customer-portal/license-keys/validate",
                None,
                &json!({"key": key, "organization_id": org}),
            )
            .await;
        r.expect(200);
        r.body
    }

    /// Whether the server has recorded the event as handled.
    pub async fn handled(&self, event_id: &str) -> bool {
        self.app
            .state
            .store
            .get_meta(&event_meta_key(event_id))
            .await
            .expect("reading the store")
            .is_some()
    }

    /// Waits (bounded) until localstripe's delivery of `event_id` has been handled.
    pub async fn wait_handled(&self, event_id: &str) {
        let started = Instant::now();
        while !self.handled(event_id).await {
            assert!(
                started.elapsed() < WEBHOOK_DEADLINE,
                "event {event_id} was not handled within {WEBHOOK_DEADLINE:?}; localstripe log:\n{}",
                self.ls.log_text()
            );
            sleep(Duration::from_millis(100)).await;
        }
    }

    /// Posts a webhook body with the given `Stripe-Signature` header (or none).
    pub(crate) async fn deliver(&self, body: &[u8], signature: Option<&str>) -> Reply {
        let mut req = self
            .app
            .client
            .post(self.app.url(WEBHOOK_PATH))
            .header(CONTENT_TYPE, "application/json; charset=utf-8")
            .body(body.to_vec());
        if let Some(signature) = signature {
            req = req.header("Stripe-Signature", signature);
        }
        send_checked(req).await
    }

    /// Creates a checkout for `price` and confirms it, paying with the card `pm`.
    async fn buy(&self, price: &str, email: &str, pm: &str) -> (Value, Reply) {
        let c = created(self.api(), &by_price(price)).await;
        let r = confirm(self.api(), &secret(&c), &paying(email, pm)).await;
        (c, r)
    }
}

/// The confirm body of a buyer paying with the PaymentMethod `pm`.
pub(crate) fn paying(email: &str, pm: &str) -> Value {
    let mut body = buyer(email);
    body["confirmation_token_id"] = json!(pm);
    body
}

/// `t=<timestamp>,v1=<hex HMAC-SHA256 of "t.body">`, as Stripe signs (computed here, not
/// with Tollgate's own helper).
pub(crate) fn stripe_signature(body: &[u8], secret: &str, timestamp: i64) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("an HMAC key");
    mac.update(format!("{timestamp}.").as_bytes());
    mac.update(body);
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("t={timestamp},v1={hex}")
}

pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("no string {key} in {v}"))
}

/// The intent a confirmed (or settled) checkout names.
pub(crate) fn intent_of(checkout: &Value) -> String {
    str_of(&checkout["payment_processor_metadata"], "intent_id").to_string()
}

/// Polls the checkout (by its client secret) until it is `status`, bounded.
pub(crate) async fn wait_status(shop: &Shop, client_secret: &str, status: &str) -> Value {
    let started = Instant::now();
    loop {
        let r = client_get(shop.api(), client_secret).await;
        r.expect(200);
        if r.body["status"] == status {
            return r.body;
        }
        assert!(
            started.elapsed() < WEBHOOK_DEADLINE,
            "the checkout is still {} after {WEBHOOK_DEADLINE:?}; localstripe log:\n{}",
            r.body["status"],
            shop.ls.log_text()
        );
        sleep(Duration::from_millis(200)).await;
    }
}

/// The orders of one checkout.
pub(crate) fn orders_of<'a>(orders: &'a [Value], checkout: &str) -> Vec<&'a Value> {
    orders
        .iter()
        .filter(|o| o["checkout_id"] == checkout)
        .collect()
}

// ---------------------------------------------------------------------------------------
// Tests

#[actix_web::test]
async fn an_approved_card_pays_and_the_stripe_customer_is_created_once() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let cat: Catalog = seed(api, "stripe-ok").await;
    let pm = shop.ls.card(CARD_OK).await;

    let (c, r) = shop.buy(&cat.ebook_price, "ada@example.com", &pm).await;
    r.expect(200);
    let id = id_of(&c);
    assert_eq!(r.body["status"], "confirmed", "{}", r.body);
    assert_eq!(r.body["payment_processor"], "stripe");
    let meta = &r.body["payment_processor_metadata"];
    assert_eq!(meta["intent_status"], "succeeded", "{}", r.body);
    let intent_id = intent_of(&r.body);
    assert!(intent_id.starts_with("pi_"), "{intent_id}");
    let customer_id = str_of(&r.body, "customer_id").to_string();

    // Succeeded on every read.
    let g = client_get(api, &secret(&c)).await;
    g.expect(200);
    assert_eq!(g.body["status"], "succeeded");
    let g = get_by_id(api, &id).await;
    g.expect(200);
    assert_eq!(g.body["status"], "succeeded");
    assert_eq!(intent_of(&g.body), intent_id);

    // One order, for the price, and a key that validates.
    let orders = shop.orders(&cat.org).await;
    assert_eq!(orders.len(), 1, "{orders:?}");
    let o = &orders[0];
    assert_eq!(o["checkout_id"], id.as_str());
    assert_eq!(o["amount"], 2500);
    assert_eq!(o["currency"], "usd");
    assert_eq!(o["billing_reason"], "purchase");
    assert_eq!(o["customer_id"], customer_id.as_str());
    let keys = shop.license_keys(&cat.org).await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    let v = shop.validate(str_of(&keys[0], "key"), &cat.org).await;
    assert_eq!(v["status"], "granted");
    assert_eq!(v["customer_id"], customer_id.as_str());

    // In Stripe: the amount, our checkout, the card and a customer with the buyer's e-mail.
    let pi = shop.ls.intent(&intent_id).await;
    assert_eq!(pi["status"], "succeeded", "{pi}");
    assert_eq!(pi["amount"], 2500);
    assert_eq!(pi["currency"], "usd");
    assert_eq!(pi["payment_method"], pm.as_str());
    assert_eq!(pi["metadata"]["checkout_id"], id.as_str());
    assert_eq!(pi["metadata"]["organization_id"], cat.org.as_str());
    // A one-time price keeps nothing for later.
    assert_eq!(pi["setup_future_usage"], Value::Null, "{pi}");
    assert_eq!(pi["off_session"], false, "{pi}");
    let cus = str_of(&pi, "customer").to_string();
    assert!(cus.starts_with("cus_"), "{pi}");
    let customer = shop.ls.get(&format!("/v1/customers/{cus}")).await;
    assert_eq!(customer["email"], "ada@example.com");
    assert_eq!(customer["name"], "Ada Lovelace");
    assert_eq!(
        customer["metadata"]["tollgate_customer_id"],
        customer_id.as_str()
    );

    // localstripe's payment_intent.succeeded arrives after the checkout has succeeded:
    // acknowledged, nothing more.
    let event = shop
        .ls
        .event_for("payment_intent.succeeded", &intent_id)
        .await;
    shop.wait_handled(str_of(&event, "id")).await;
    assert_eq!(shop.orders(&cat.org).await.len(), 1);

    // The same buyer again (another purchase, another card): the same Stripe customer.
    let pm2 = shop.ls.card(CARD_OK).await;
    let (c2, r) = shop.buy(&cat.monthly, "ada@example.com", &pm2).await;
    r.expect(200);
    assert_eq!(r.body["customer_id"], customer_id.as_str());
    let pi2 = shop.ls.intent(&intent_of(&r.body)).await;
    assert_ne!(pi2["id"], pi["id"]);
    assert_eq!(pi2["customer"], cus.as_str(), "{pi2}");
    assert_eq!(pi2["metadata"]["checkout_id"], id_of(&c2).as_str());
    assert_eq!(pi2["amount"], 1500);
    let customers = shop.ls.customers().await;
    assert_eq!(customers.len(), 1, "Stripe customers: {customers:?}");
    assert_eq!(
        client_get(api, &secret(&c2)).await.body["status"],
        "succeeded"
    );
    assert_eq!(shop.orders(&cat.org).await.len(), 2);

    // Another buyer gets a customer of their own.
    let pm3 = shop.ls.card(CARD_OK).await;
    let (_, r) = shop.buy(&cat.ebook_price, "grace@example.com", &pm3).await;
    r.expect(200);
    let pi3 = shop.ls.intent(&intent_of(&r.body)).await;
    assert_ne!(pi3["customer"], cus.as_str());
    let customers = shop.ls.customers().await;
    assert_eq!(customers.len(), 2, "Stripe customers: {customers:?}");
    let cus3 = shop
        .ls
        .get(&format!("/v1/customers/{}", str_of(&pi3, "customer")))
        .await;
    assert_eq!(cus3["email"], "grace@example.com");
}

#[actix_web::test]
async fn a_declined_card_reopens_the_checkout_and_another_card_pays_it() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let cat = seed(api, "stripe-declined").await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    let (id, s) = (id_of(&c), secret(&c));

    let bad = shop.ls.card(CARD_DECLINED).await;
    let r = confirm(api, &s, &paying("ada@example.com", &bad)).await;
    assert_eq!(r.expect_error(400), "PaymentError", "{}", r.body);
    assert_eq!(
        r.body["detail"],
        "The payment failed: Your card was declined. Please try again with a different payment method."
    );
    let g = client_get(api, &s).await;
    g.expect(200);
    assert_eq!(g.body["status"], "open");
    assert_eq!(g.body["payment_processor_metadata"], json!({}));
    assert!(shop.orders(&cat.org).await.is_empty());
    assert!(shop.license_keys(&cat.org).await.is_empty());
    // Stripe has the failed attempt, for our checkout.
    let intents = shop.ls.intents().await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    let failed = &intents[0];
    assert_eq!(failed["status"], "requires_payment_method", "{failed}");
    assert_eq!(failed["metadata"]["checkout_id"], id.as_str());
    assert_eq!(failed["last_payment_error"]["code"], "card_declined");

    // The same checkout, a good card: paid.
    let good = shop.ls.card(CARD_OK).await;
    let r = confirm(api, &s, &paying("ada@example.com", &good)).await;
    r.expect(200);
    assert_eq!(r.body["status"], "confirmed");
    let paid = intent_of(&r.body);
    assert_ne!(paid, str_of(failed, "id"));
    assert_eq!(client_get(api, &s).await.body["status"], "succeeded");
    let orders = shop.orders(&cat.org).await;
    assert_eq!(orders.len(), 1, "{orders:?}");
    assert_eq!(orders[0]["checkout_id"], id.as_str());
    assert_eq!(orders[0]["amount"], 2500);
    let keys = shop.license_keys(&cat.org).await;
    assert_eq!(keys.len(), 1);
    shop.validate(str_of(&keys[0], "key"), &cat.org).await;
    let pi = shop.ls.intent(&paid).await;
    assert_eq!(pi["status"], "succeeded");
    assert_eq!(pi["payment_method"], good.as_str());
    // Both attempts charged the same Stripe customer.
    assert_eq!(pi["customer"], failed["customer"]);

    // The failed attempt's payment_intent.payment_failed, arriving late, changes nothing.
    let event = shop
        .ls
        .event_for("payment_intent.payment_failed", str_of(failed, "id"))
        .await;
    shop.wait_handled(str_of(&event, "id")).await;
    let event = shop.ls.event_for("payment_intent.succeeded", &paid).await;
    shop.wait_handled(str_of(&event, "id")).await;
    let g = get_by_id(api, &id).await;
    assert_eq!(g.body["status"], "succeeded");
    assert_eq!(intent_of(&g.body), paid);
    assert_eq!(shop.orders(&cat.org).await.len(), 1);
}

/// Confirms a checkout of `price` with a 3-D Secure card: it stays `confirmed`, waiting on
/// the intent. Returns the checkout, its client secret, the intent and its client secret.
async fn confirm_3ds(shop: &Shop, price: &str, card: &str) -> (Value, String, String, String) {
    let api = shop.api();
    let c = created(api, &by_price(price)).await;
    let s = secret(&c);
    let pm = shop.ls.card(card).await;
    let r = confirm(api, &s, &paying("ada@example.com", &pm)).await;
    r.expect(200);
    assert_eq!(r.body["status"], "confirmed", "{}", r.body);
    let meta = &r.body["payment_processor_metadata"];
    assert_eq!(meta["intent_status"], "requires_action", "{}", r.body);
    let intent = intent_of(&r.body);
    let intent_secret = str_of(meta, "intent_client_secret").to_string();
    assert!(
        intent_secret.starts_with(&format!("{intent}_secret_")),
        "{intent_secret}"
    );
    let pi = shop.ls.intent(&intent).await;
    assert_eq!(pi["status"], "requires_action", "{pi}");
    assert_eq!(pi["client_secret"], intent_secret.as_str());
    assert_eq!(pi["metadata"]["checkout_id"], id_of(&c).as_str());
    (c, s, intent, intent_secret)
}

#[actix_web::test]
async fn a_3d_secure_payment_completes_through_the_signed_webhook() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let cat = seed(api, "stripe-3ds").await;
    let (c, s, intent, intent_secret) = confirm_3ds(&shop, &cat.ebook_price, CARD_3DS).await;
    let id = id_of(&c);

    // Waiting on the buyer: confirmed, nothing bought yet.
    let g = get_by_id(api, &id).await;
    g.expect(200);
    assert_eq!(g.body["status"], "confirmed");
    assert_eq!(
        g.body["payment_processor_metadata"]["intent_status"],
        "requires_action"
    );
    let g = client_get(api, &s).await;
    assert_eq!(g.body["status"], "confirmed");
    assert_eq!(
        g.body["payment_processor_metadata"]["intent_client_secret"],
        intent_secret.as_str()
    );
    assert!(shop.orders(&cat.org).await.is_empty());
    assert!(shop.license_keys(&cat.org).await.is_empty());

    // The buyer authenticates; Stripe tells us through the webhook.
    let pi = shop.ls.authenticate(&intent, &intent_secret, true).await;
    assert_eq!(pi["status"], "succeeded", "{pi}");
    let g = wait_status(&shop, &s, "succeeded").await;
    assert_eq!(intent_of(&g), intent);
    let event = shop.ls.event_for("payment_intent.succeeded", &intent).await;
    assert!(shop.handled(str_of(&event, "id")).await);

    let orders = shop.orders(&cat.org).await;
    assert_eq!(orders.len(), 1, "{orders:?}");
    assert_eq!(orders[0]["checkout_id"], id.as_str());
    assert_eq!(orders[0]["amount"], 2500);
    let g = get_by_id(api, &id).await;
    assert_eq!(g.body["status"], "succeeded");
    assert_eq!(
        g.body["payment_processor_metadata"]["intent_status"],
        "succeeded"
    );
    assert!(g.body["payment_processor_metadata"]
        .get("intent_client_secret")
        .is_none());
    let keys = shop.license_keys(&cat.org).await;
    assert_eq!(keys.len(), 1);
    let v = shop.validate(str_of(&keys[0], "key"), &cat.org).await;
    assert_eq!(v["status"], "granted");

    // Another 3-D Secure card, whose authentication fails: Stripe's
    // payment_intent.payment_failed reopens the checkout, and the buyer pays with a card
    // that needs no authentication.
    let (c2, s2, intent2, secret2) = confirm_3ds(&shop, &cat.ebook_price, CARD_3DS_2).await;
    let id2 = id_of(&c2);
    let pi = shop.ls.authenticate(&intent2, &secret2, false).await;
    assert_eq!(pi["status"], "requires_payment_method", "{pi}");
    let g = wait_status(&shop, &s2, "open").await;
    assert_eq!(g["payment_processor_metadata"], json!({}), "{g}");
    let event = shop
        .ls
        .event_for("payment_intent.payment_failed", &intent2)
        .await;
    assert!(shop.handled(str_of(&event, "id")).await);
    assert!(orders_of(&shop.orders(&cat.org).await, &id2).is_empty());
    let good = shop.ls.card(CARD_OK).await;
    let r = confirm(api, &s2, &paying("ada@example.com", &good)).await;
    r.expect(200);
    assert_eq!(
        r.body["payment_processor_metadata"]["intent_status"],
        "succeeded"
    );
    assert_eq!(client_get(api, &s2).await.body["status"], "succeeded");
    let orders = shop.orders(&cat.org).await;
    assert_eq!(orders_of(&orders, &id2).len(), 1, "{orders:?}");
    assert_eq!(orders.len(), 2);
}

#[actix_web::test]
async fn webhooks_without_a_valid_signature_change_nothing_and_replays_are_acknowledged() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let cat = seed(api, "stripe-hooks").await;
    // localstripe keeps its payment_intent.succeeded to itself: this test delivers it.
    shop.ls
        .register_webhook(&shop.app.url(WEBHOOK_PATH), Some(&["customer.created"]))
        .await;
    let (c, s, intent, intent_secret) = confirm_3ds(&shop, &cat.ebook_price, CARD_3DS).await;
    let id = id_of(&c);
    shop.ls.authenticate(&intent, &intent_secret, true).await;
    let event = shop.ls.event_for("payment_intent.succeeded", &intent).await;
    let event_id = str_of(&event, "id").to_string();
    let body = serde_json::to_vec_pretty(&event).unwrap();
    let now = Utc::now().timestamp();

    let refused = |r: &Reply, why: &str| {
        assert_eq!(r.expect_error(400), "BadRequest", "{why}: {}", r.body);
        let detail = r.body["detail"].as_str().unwrap_or_default();
        assert!(detail.contains("Stripe signature"), "{why}: {detail}");
    };
    let cases: Vec<(&str, Option<String>, Vec<u8>)> = vec![
        ("no signature", None, body.clone()),
        (
            "another secret",
            Some(stripe_signature(&body, "whsec_someone_else", now)),
            body.clone(),
        ),
        (
            "a stale timestamp",
            Some(stripe_signature(&body, WEBHOOK_SECRET, now - 3600)),
            body.clone(),
        ),
        (
            "a timestamp from the future",
            Some(stripe_signature(&body, WEBHOOK_SECRET, now + 3600)),
            body.clone(),
        ),
        (
            "another body",
            Some(stripe_signature(&body, WEBHOOK_SECRET, now)),
            String::from_utf8(body.clone())
                .unwrap()
                .replace("2500", "1")
                .into_bytes(),
        ),
        (
            "no v1 signature",
            Some(format!("t={now},v0=abc")),
            body.clone(),
        ),
        ("garbage", Some("not a signature".into()), body.clone()),
    ];
    for (why, signature, body) in &cases {
        let r = shop.deliver(body, signature.as_deref()).await;
        refused(&r, why);
    }
    // Nothing changed.
    assert_eq!(client_get(api, &s).await.body["status"], "confirmed");
    assert!(shop.orders(&cat.org).await.is_empty());
    assert!(!shop.handled(&event_id).await);

    // Signed: the checkout completes.
    let r = shop
        .deliver(&body, Some(&stripe_signature(&body, WEBHOOK_SECRET, now)))
        .await;
    r.expect(200);
    assert_eq!(r.body, json!({"received": true, "duplicate": false}));
    assert_eq!(get_by_id(api, &id).await.body["status"], "succeeded");
    assert_eq!(shop.orders(&cat.org).await.len(), 1);
    assert!(shop.handled(&event_id).await);

    // Replayed (signed again, later): acknowledged as a duplicate, nothing created.
    let later = Utc::now().timestamp() + 5;
    let r = shop
        .deliver(&body, Some(&stripe_signature(&body, WEBHOOK_SECRET, later)))
        .await;
    r.expect(200);
    assert_eq!(r.body, json!({"received": true, "duplicate": true}));
    let orders = shop.orders(&cat.org).await;
    assert_eq!(orders.len(), 1, "{orders:?}");
    assert_eq!(shop.license_keys(&cat.org).await.len(), 1);
}

#[actix_web::test]
async fn one_event_delivered_twice_at_once_completes_the_checkout_once() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let cat = seed(api, "stripe-race").await;
    shop.ls
        .register_webhook(&shop.app.url(WEBHOOK_PATH), Some(&["customer.created"]))
        .await;
    let (c, s, intent, intent_secret) = confirm_3ds(&shop, &cat.monthly, CARD_3DS).await;
    let id = id_of(&c);
    shop.ls.authenticate(&intent, &intent_secret, true).await;
    let event = shop.ls.event_for("payment_intent.succeeded", &intent).await;
    let body = serde_json::to_vec(&event).unwrap();
    let signature = stripe_signature(&body, WEBHOOK_SECRET, Utc::now().timestamp());

    let (a, b) = futures_util::future::join(
        shop.deliver(&body, Some(&signature)),
        shop.deliver(&body, Some(&signature)),
    )
    .await;
    a.expect(200);
    b.expect(200);
    assert_eq!(client_get(api, &s).await.body["status"], "succeeded");
    let orders = shop.orders(&cat.org).await;
    assert_eq!(orders.len(), 1, "{orders:?}");
    assert_eq!(orders[0]["checkout_id"], id.as_str());
    assert_eq!(orders[0]["billing_reason"], "subscription_create");
    // One subscription, one key per benefit (the plan has two).
    let subs = api
        .read(&format!(
            "/v1/subscriptions/?organization_id={}&limit=100",
            cat.org
        ))
        .await;
    subs.expect(200);
    assert_eq!(subs.items().len(), 1, "{}", subs.body);
    assert_eq!(shop.license_keys(&cat.org).await.len(), 2);

    // And once more each, concurrently: duplicates.
    let later = stripe_signature(&body, WEBHOOK_SECRET, Utc::now().timestamp() + 1);
    let (a, b) = futures_util::future::join(
        shop.deliver(&body, Some(&later)),
        shop.deliver(&body, Some(&later)),
    )
    .await;
    assert_eq!(a.body["duplicate"], true, "{}", a.body);
    assert_eq!(b.body["duplicate"], true, "{}", b.body);
    assert_eq!(shop.orders(&cat.org).await.len(), 1);
}

#[actix_web::test]
async fn a_subscription_keeps_the_card_and_renews_off_session() {
    let shop = spawn_shop(true).await;
    let clock = shop.clock.clone().expect("a manual clock");
    let api = shop.api();
    let cat = seed(api, "stripe-renew").await;
    let pm = shop.ls.card(CARD_OK).await;
    let (c, r) = shop.buy(&cat.monthly, "ada@example.com", &pm).await;
    r.expect(200);
    let id = id_of(&c);
    let first = shop.ls.intent(&intent_of(&r.body)).await;
    assert_eq!(first["status"], "succeeded", "{first}");
    assert_eq!(first["amount"], 1500);
    // Kept for renewals, as Stripe needs for a later off-session charge.
    assert_eq!(first["setup_future_usage"], "off_session", "{first}");
    assert_eq!(first["off_session"], false);
    let cus = str_of(&first, "customer").to_string();
    let method = shop.ls.get(&format!("/v1/payment_methods/{pm}")).await;
    assert_eq!(
        method["customer"],
        cus.as_str(),
        "saved for the customer: {method}"
    );
    // localstripe's own payment_intent.succeeded, handled before the clock moves on (its
    // signature would look stale to a clock a month ahead).
    let event = shop
        .ls
        .event_for("payment_intent.succeeded", str_of(&first, "id"))
        .await;
    shop.wait_handled(str_of(&event, "id")).await;

    let subs = api
        .read(&format!(
            "/v1/subscriptions/?organization_id={}&limit=100",
            cat.org
        ))
        .await;
    subs.expect(200);
    let sub = subs.items()[0].clone();
    assert_eq!(sub["checkout_id"], id.as_str());
    assert_eq!(sub["status"], "active");
    let period_end: DateTime<Utc> = str_of(&sub, "current_period_end").parse().unwrap();

    // A month later the sweep renews it: a charge of the saved card, off-session.
    clock.set(period_end + chrono::Duration::minutes(1));
    sweep_subscriptions(&shop.app.state)
        .await
        .expect("sweeping subscriptions");
    let intents = shop.ls.intents().await;
    assert_eq!(intents.len(), 2, "{intents:?}");
    let renewal = &intents[1];
    assert_ne!(renewal["id"], first["id"]);
    assert_eq!(renewal["status"], "succeeded", "{renewal}");
    assert_eq!(renewal["off_session"], true, "{renewal}");
    assert_eq!(renewal["setup_future_usage"], Value::Null, "{renewal}");
    assert_eq!(renewal["payment_method"], pm.as_str());
    assert_eq!(renewal["customer"], cus.as_str());
    assert_eq!(renewal["amount"], 1500);
    assert_eq!(renewal["currency"], "usd");
    assert_eq!(renewal["metadata"]["subscription_id"], sub["id"]);
    assert!(
        renewal["metadata"].get("checkout_id").is_none(),
        "{renewal}"
    );

    let orders = shop.orders(&cat.org).await;
    assert_eq!(orders.len(), 2, "{orders:?}");
    let cycle: Vec<&Value> = orders
        .iter()
        .filter(|o| o["billing_reason"] == "subscription_cycle")
        .collect();
    assert_eq!(cycle.len(), 1, "{orders:?}");
    assert_eq!(cycle[0]["amount"], 1500);
    assert_eq!(cycle[0]["subscription_id"], sub["id"]);
    let g = api
        .read(&format!("/v1/subscriptions/{}", str_of(&sub, "id")))
        .await;
    g.expect(200);
    assert_eq!(g.body["status"], "active");
    let new_end: DateTime<Utc> = str_of(&g.body, "current_period_end").parse().unwrap();
    assert!(new_end > period_end, "{}", g.body);

    // The same sweep again charges nothing more.
    sweep_subscriptions(&shop.app.state)
        .await
        .expect("sweeping subscriptions");
    assert_eq!(shop.ls.intents().await.len(), 2);
    assert_eq!(shop.orders(&cat.org).await.len(), 2);
}

#[actix_web::test]
async fn a_stripe_processor_without_keys_is_refused_at_start() {
    // From the configuration file: refused, naming the key.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[payments]\nprocessor = \"stripe\"\n").unwrap();
    let err = Settings::load(&config, true).expect_err("a Stripe processor without keys");
    assert!(
        err.to_string().contains("payments.stripe_secret_key"),
        "{err}"
    );
    std::fs::write(
        &config,
        "[payments]\nprocessor = \"stripe\"\nstripe_secret_key = \"sk_test_1\"\n\
         stripe_publishable_key = \"pk_test_1\"\n",
    )
    .unwrap();
    let err =
        Settings::load(&config, true).expect_err("a Stripe processor without a webhook secret");
    assert!(
        err.to_string().contains("payments.stripe_webhook_secret"),
        "{err}"
    );

    // Settings built in code are checked too when the application is built.
    let data = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(data.path());
    settings.payments.processor = ProcessorKind::Stripe;
    let err = Application::build(settings)
        .await
        .err()
        .expect("an application charging Stripe without a key");
    assert!(format!("{err:#}").contains("stripe_secret_key"), "{err:#}");
    let data = tempfile::tempdir().unwrap();
    let mut settings = stripe_settings(data.path(), "http://127.0.0.1:9");
    settings.payments.stripe_webhook_secret = String::new();
    let err = Application::build(settings)
        .await
        .err()
        .expect("an application taking unsigned webhooks");
    assert!(
        format!("{err:#}").contains("stripe_webhook_secret"),
        "{err:#}"
    );
}

// ---------------------------------------------------------------------------------------
// Start-up reconciliation, on the real binary over a kept data directory

/// How long the binary may take to report ready (start-up recovery included).
const READY_DEADLINE: Duration = Duration::from_secs(30);

/// Starts the binary over `root/data` (settings from the environment, as deployed), charging
/// through `ls`, and waits until `/readyz` answers.
async fn start_binary(root: &Path, run: u32, ls: &LocalStripe) -> Binary {
    Binary::start(
        root,
        &root.join("data"),
        &format!("server-{run}.log"),
        &[
            ("TOLLGATE__PAYMENTS__PROCESSOR", "stripe"),
            ("TOLLGATE__PAYMENTS__STRIPE_SECRET_KEY", SECRET_KEY),
            (
                "TOLLGATE__PAYMENTS__STRIPE_PUBLISHABLE_KEY",
                PUBLISHABLE_KEY,
            ),
            ("TOLLGATE__PAYMENTS__STRIPE_WEBHOOK_SECRET", WEBHOOK_SECRET),
            ("TOLLGATE__PAYMENTS__STRIPE_API_BASE", &ls.base),
        ],
        READY_DEADLINE,
    )
    .await
}

#[actix_web::test]
async fn payments_settled_while_the_server_was_down_are_reconciled_at_the_next_start() {
    let ls = LocalStripe::start().await;
    let root = tempfile::tempdir().expect("creating a temporary directory");
    let http = client();
    let server = start_binary(root.path(), 1, &ls).await;
    let token = std::fs::read_to_string(root.path().join("data").join(TOKEN_FILE))
        .expect("reading the bootstrap token")
        .trim()
        .to_string();
    ls.register_webhook(&format!("{}{WEBHOOK_PATH}", server.address), None)
        .await;

    // Three buyers reach 3-D Secure; then the server goes away (kill -9).
    let (cat, waiting) = {
        let api = Api {
            base: &server.address,
            client: &http,
            token: &token,
        };
        let cat = seed(api, "stripe-restart").await;
        let mut waiting = Vec::new();
        for (i, card) in [CARD_3DS, CARD_3DS_2, CARD_3DS].into_iter().enumerate() {
            let c = created(api, &by_price(&cat.ebook_price)).await;
            let pm = ls.card(card).await;
            let r = confirm(api, &secret(&c), &paying(&format!("b{i}@example.com"), &pm)).await;
            r.expect(200);
            let meta = &r.body["payment_processor_metadata"];
            assert_eq!(meta["intent_status"], "requires_action", "{}", r.body);
            waiting.push((
                id_of(&c),
                secret(&c),
                intent_of(&r.body),
                str_of(meta, "intent_client_secret").to_string(),
            ));
        }
        (cat, waiting)
    };
    drop(server);

    // Meanwhile in Stripe: the first buyer authenticates, the second fails to, the third
    // does nothing. The webhooks find nobody to deliver to.
    ls.authenticate(&waiting[0].2, &waiting[0].3, true).await;
    ls.authenticate(&waiting[1].2, &waiting[1].3, false).await;
    sleep(Duration::from_millis(1500)).await;

    // The next start asks Stripe how each stands before it reports ready (the webhook
    // still points at the old address, so nothing else can settle them).
    let server = start_binary(root.path(), 2, &ls).await;
    let api = Api {
        base: &server.address,
        client: &http,
        token: &token,
    };
    assert!(
        server
            .log_text()
            .contains("completed confirmed checkouts left by a previous run"),
        "{}",
        server.log_text()
    );
    let (paid, failed, pending) = (&waiting[0], &waiting[1], &waiting[2]);
    let g = get_by_id(api, &paid.0).await;
    g.expect(200);
    assert_eq!(g.body["status"], "succeeded", "{}", g.body);
    assert_eq!(
        g.body["payment_processor_metadata"]["intent_id"],
        paid.2.as_str()
    );
    let g = get_by_id(api, &failed.0).await;
    assert_eq!(g.body["status"], "open", "{}", g.body);
    let g = get_by_id(api, &pending.0).await;
    assert_eq!(g.body["status"], "confirmed", "{}", g.body);
    assert_eq!(
        g.body["payment_processor_metadata"]["intent_status"],
        "requires_action"
    );
    let r = api
        .read(&format!(
            "/v1/orders/?organization_id={}&limit=100",
            cat.org
        ))
        .await;
    r.expect(200);
    let orders = r.items();
    assert_eq!(orders.len(), 1, "{orders:?}");
    assert_eq!(orders[0]["checkout_id"], paid.0.as_str());
    assert_eq!(orders[0]["amount"], 2500);

    // The one still waiting completes through the webhook, once registered again.
    ls.register_webhook(&format!("{}{WEBHOOK_PATH}", server.address), None)
        .await;
    ls.authenticate(&pending.2, &pending.3, true).await;
    let started = Instant::now();
    loop {
        let r = client_get(api, &pending.1).await;
        if r.body["status"] == "succeeded" {
            break;
        }
        assert!(
            started.elapsed() < WEBHOOK_DEADLINE,
            "still {} after {WEBHOOK_DEADLINE:?}; server log:\n{}",
            r.body["status"],
            server.log_text()
        );
        sleep(Duration::from_millis(200)).await;
    }
    // The buyer whose authentication failed pays with another card.
    let good = ls.card(CARD_OK).await;
    let r = confirm(api, &failed.1, &paying("b1@example.com", &good)).await;
    r.expect(200);
    let r = api
        .read(&format!(
            "/v1/orders/?organization_id={}&limit=100",
            cat.org
        ))
        .await;
    assert_eq!(r.items().len(), 3, "{}", r.body);

    // A third start has nothing left to reconcile.
    drop(server);
    let server = start_binary(root.path(), 3, &ls).await;
    let api = Api {
        base: &server.address,
        client: &http,
        token: &token,
    };
    let r = api
        .read(&format!(
            "/v1/orders/?organization_id={}&limit=100",
            cat.org
        ))
        .await;
    assert_eq!(r.items().len(), 3, "{}", r.body);
    // Three starts, charges, webhooks and reconciliations: no key ever reached a log.
    drop(server);
    for run in 1..=3 {
        let log = std::fs::read_to_string(root.path().join(format!("server-{run}.log")))
            .expect("reading a server log");
        assert!(log.contains("payments go through Stripe"), "{log}");
        for secret in [SECRET_KEY, WEBHOOK_SECRET] {
            assert!(!log.contains(secret), "a Stripe key is in the log:\n{log}");
        }
    }
}

#[actix_web::test]
async fn the_checkout_page_loads_stripe_js_from_the_configured_url_and_allows_only_its_origin() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let cat = seed(api, "stripe-page").await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    let r = page(&shop.app, &checkout_path(&c)).await;
    let body = assert_page(&r, 200);
    let js = format!("{}/js.stripe.com/v3/", shop.ls.base);
    assert!(
        body.contains(&format!("<script src=\"{js}\"></script>")),
        "{body}"
    );
    assert!(body.contains(&format!("data-stripe-key=\"{PUBLISHABLE_KEY}\"")));
    assert!(body.contains("id=\"card-element\""));
    assert!(!body.contains("id=\"test-card\""));
    let csp = r.header("content-security-policy");
    let origin = &shop.ls.base;
    for directive in [
        format!("script-src 'self' {origin};"),
        format!("connect-src 'self' {origin};"),
        format!("frame-src {origin};"),
        "default-src 'none';".to_string(),
    ] {
        assert!(csp.contains(&directive), "{directive:?} not in {csp}");
    }
    // That URL serves Stripe.js, with what the page needs of it.
    let script = client().get(&js).send().await.expect("fetching Stripe.js");
    assert_eq!(script.status(), 200);
    let text = script.text().await.unwrap();
    assert!(text.contains("createPaymentMethod = (data)"), "{text}");

    // A free checkout loads no processor script at all.
    let free = created(api, &by_price(&cat.free_price)).await;
    let r = page(&shop.app, &checkout_path(&free)).await;
    let body = assert_page(&r, 200);
    assert!(!body.contains("js.stripe.com"), "{body}");
    assert!(r
        .header("content-security-policy")
        .contains("script-src 'self';"));
}

#[actix_web::test]
async fn a_failed_authentication_reopens_the_checkout_at_the_next_confirm_without_the_webhook() {
    let shop = spawn_shop(false).await;
    // Stripe tells us of successes only: a failed authentication is learnt by asking.
    shop.ls
        .register_webhook(
            &shop.app.url(WEBHOOK_PATH),
            Some(&["payment_intent.succeeded"]),
        )
        .await;
    let api = shop.api();
    let cat = seed(api, "stripe-3ds-retry").await;
    let (c, s, intent, intent_secret) = confirm_3ds(&shop, &cat.ebook_price, CARD_3DS).await;
    let id = id_of(&c);

    // While the buyer's bank still asks, paying again is refused: the checkout waits.
    let good = shop.ls.card(CARD_OK).await;
    let r = confirm(api, &s, &paying("ada@example.com", &good)).await;
    assert_eq!(r.expect_error(403), "NotOpenCheckout", "{}", r.body);
    assert_eq!(client_get(api, &s).await.body["status"], "confirmed");

    // The authentication fails; no webhook comes.
    let pi = shop.ls.authenticate(&intent, &intent_secret, false).await;
    assert_eq!(pi["status"], "requires_payment_method", "{pi}");
    assert_eq!(client_get(api, &s).await.body["status"], "confirmed");

    // The buyer pays with another card at once: the failed attempt is found, and this one
    // charged.
    let r = confirm(api, &s, &paying("ada@example.com", &good)).await;
    r.expect(200);
    assert_eq!(
        r.body["payment_processor_metadata"]["intent_status"],
        "succeeded"
    );
    assert_ne!(intent_of(&r.body), intent);
    assert_eq!(client_get(api, &s).await.body["status"], "succeeded");
    let orders = shop.orders(&cat.org).await;
    assert_eq!(orders_of(&orders, &id).len(), 1, "{orders:?}");
    assert_eq!(orders.len(), 1);
}

#[actix_web::test]
async fn refunds_go_to_stripe_once_and_a_refund_made_at_stripe_is_recorded_once() {
    use tollgate::payments::{RefundOutcome, RefundRequest};
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let cat = seed(api, "stripe-refunds").await;
    let pm = shop.ls.card(CARD_OK).await;
    let (c, r) = shop.buy(&cat.ebook_price, "ada@example.com", &pm).await;
    r.expect(200);
    let intent = intent_of(&r.body);
    let order = orders_of(&shop.orders(&cat.org).await, &id_of(&c))[0].clone();
    let oid = str_of(&order, "id").to_string();
    let refund = |amount: i64| {
        let body = json!({"order_id": oid, "reason": "customer_request", "amount": amount});
        let app = &shop.app;
        async move { app.post_json("/v1/refunds/", Some(&app.token), &body).await }
    };
    let stripe_refunds = || async {
        list(
            &shop
                .ls
                .get(&format!("/v1/refunds?payment_intent={intent}&limit=100"))
                .await,
        )
    };
    let order_now = || async {
        let r = api.read(&format!("/v1/orders/{oid}")).await;
        r.expect(200);
        r.body
    };

    // A partial refund: one Stripe refund of that amount, named after ours.
    let first = refund(1000).await;
    first.expect(200);
    assert_eq!(first.body["status"], "succeeded");
    let at_stripe = stripe_refunds().await;
    assert_eq!(at_stripe.len(), 1, "{at_stripe:?}");
    assert_eq!(at_stripe[0]["amount"], 1000);
    assert_eq!(at_stripe[0]["reason"], "requested_by_customer");
    assert_eq!(at_stripe[0]["metadata"]["refund_id"], first.body["id"]);
    assert_eq!(order_now().await["status"], "partially_refunded");

    // More than is left: refused here, and nothing is asked of Stripe.
    let r = refund(1501).await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(stripe_refunds().await.len(), 1);

    // The same refund asked again (a retry after a lost answer): the same Stripe refund.
    let again = shop
        .app
        .state
        .processor
        .refund(RefundRequest {
            payment_id: Some(intent.clone()),
            amount: 1000,
            currency: "usd".into(),
            idempotency_key: format!("refund:{}", str_of(&first.body, "id")),
            reason: "requested_by_customer",
            metadata: vec![("refund_id".into(), str_of(&first.body, "id").to_string())],
        })
        .await
        .expect("Stripe answers");
    assert_eq!(
        again,
        RefundOutcome::Succeeded {
            processor_id: str_of(&at_stripe[0], "id").to_string()
        }
    );
    assert_eq!(stripe_refunds().await.len(), 1);

    // A refund made in Stripe's dashboard: its signed events record it once.
    let (status, outside) = shop
        .ls
        .post(
            "/v1/refunds",
            &[("payment_intent", intent.as_str()), ("amount", "500")],
        )
        .await;
    assert_eq!(status, 200, "{outside}");
    let created = shop
        .ls
        .event_for("refund.created", str_of(&outside, "id"))
        .await;
    shop.wait_handled(str_of(&created, "id")).await;
    let refunded = shop.ls.events("charge.refunded").await;
    for e in &refunded {
        shop.wait_handled(str_of(e, "id")).await;
    }
    let ours = api.read(&format!("/v1/refunds/?order_id={oid}")).await;
    ours.expect(200);
    assert_eq!(ours.items().len(), 2, "{}", ours.body);
    assert_eq!(order_now().await["refunded_amount"], 1500);
    // Delivered again (a replay with a fresh signature): still once.
    let body = serde_json::to_vec(&created).unwrap();
    let now = Utc::now().timestamp();
    let r = shop
        .deliver(&body, Some(&stripe_signature(&body, WEBHOOK_SECRET, now)))
        .await;
    r.expect(200);
    assert_eq!(r.body["duplicate"], true);
    let ours = api.read(&format!("/v1/refunds/?order_id={oid}")).await;
    assert_eq!(ours.items().len(), 2);

    // The rest: refunded in full here and at Stripe.
    let last = refund(1000).await;
    last.expect(200);
    let o = order_now().await;
    assert_eq!(o["status"], "refunded");
    assert_eq!(o["refunded_amount"], 2500);
    let total: i64 = stripe_refunds()
        .await
        .iter()
        .map(|r| r["amount"].as_i64().unwrap())
        .sum();
    assert_eq!(total, 2500);
}

#[actix_web::test]
async fn a_lost_dispute_revokes_the_keys_and_forged_events_change_nothing() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let cat = seed(api, "stripe-disputes").await;
    let pm = shop.ls.card(CARD_OK).await;
    let (c, r) = shop.buy(&cat.ebook_price, "ada@example.com", &pm).await;
    r.expect(200);
    let intent = intent_of(&r.body);
    let order = orders_of(&shop.orders(&cat.org).await, &id_of(&c))[0].clone();
    let oid = str_of(&order, "id").to_string();
    let keys = shop.license_keys(&cat.org).await;
    let key = str_of(&keys[0], "key").to_string();
    shop.validate(&key, &cat.org).await;

    let due = Utc::now().timestamp() + 7 * 86_400;
    let event = |id: &str, kind: &str, status: &str| {
        json!({
            "id": id, "object": "event", "type": kind, "created": Utc::now().timestamp(),
            "data": {"object": {
                "id": "dp_tollgate_1", "object": "dispute", "amount": 2500, "currency": "usd",
                "payment_intent": intent, "status": status, "reason": "fraudulent",
                "evidence_details": {"due_by": due},
            }},
        })
    };
    let send = |e: Value, secret: &'static str| {
        let body = serde_json::to_vec(&e).unwrap();
        let sig = stripe_signature(&body, secret, Utc::now().timestamp());
        let shop = &shop;
        async move { shop.deliver(&body, Some(&sig)).await }
    };
    let disputes = || async {
        let r = api.read(&format!("/v1/disputes/?order_id={oid}")).await;
        r.expect(200);
        r.items()
    };

    // Opened: recorded on the order; the key still works.
    send(
        event("evt_dp_1", "charge.dispute.created", "needs_response"),
        WEBHOOK_SECRET,
    )
    .await
    .expect(200);
    let d = disputes().await;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["status"], "needs_response");
    assert_eq!(d[0]["resolved"], false);
    assert_eq!(d[0]["amount"], 2500);
    assert_eq!(d[0]["reason"], "fraudulent");
    assert_eq!(d[0]["customer"]["email"], "ada@example.com");
    let one = api
        .read(&format!("/v1/disputes/{}", str_of(&d[0], "id")))
        .await;
    one.expect(200);
    shop.validate(&key, &cat.org).await;

    // A forged "won" changes nothing.
    let forged = send(
        event("evt_dp_forged", "charge.dispute.closed", "won"),
        "whsec_forged",
    )
    .await;
    assert_eq!(forged.status, 400, "{}", forged.body);
    assert_eq!(disputes().await[0]["status"], "needs_response");

    // Lost: the key is refused at once; delivered twice, still one dispute.
    for _ in 0..2 {
        send(
            event("evt_dp_2", "charge.dispute.closed", "lost"),
            WEBHOOK_SECRET,
        )
        .await
        .expect(200);
    }
    let d = disputes().await;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["status"], "lost");
    assert_eq!(d[0]["resolved"], true);
    assert_eq!(d[0]["closed"], true);
    // A late event of an earlier stage (issue 44, part 6) leaves it lost.
    for (i, late) in ["needs_response", "under_review"].iter().enumerate() {
        send(
            event(&format!("evt_dp_late_{i}"), "charge.dispute.updated", late),
            WEBHOOK_SECRET,
        )
        .await
        .expect(200);
        let d = disputes().await;
        assert_eq!(d[0]["status"], "lost", "after a late {late}");
        assert_eq!(d[0]["resolved"], true);
    }
    let v = shop
        .app
        .post_json(
            "/v1/customer-portal/license-keys/validate",
            None,
            &json!({"key": key, "organization_id": cat.org}),
        )
        .await;
    assert_eq!(v.status, 404, "{}", v.body);
    // Another seller sees no dispute.
    let (_, other) = shop
        .app
        .new_user_with_scopes("other@example.com", &[tollgate::auth::Scope::DisputesRead])
        .await;
    let theirs = shop.app.get("/v1/disputes/", Some(&other)).await;
    theirs.expect(200);
    assert!(theirs.items().is_empty());
    let r = shop
        .app
        .get(
            &format!("/v1/disputes/{}", str_of(&d[0], "id")),
            Some(&other),
        )
        .await;
    assert_eq!(r.status, 404);
}
