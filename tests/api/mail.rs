//! E-mail end to end, against a real SMTP server: `tests/clients/mail/smtp_server.py`
//! (aiosmtpd, pinned in `tests/clients/mail/requirements.txt`) on a loopback port, which
//! parses every message it receives with Python's `email` package and leaves it as JSON
//! (headers, the plain-text and HTML parts) beside the raw `.eml`.
//!
//! What is checked: the receipt of a purchase (headers, both parts, the amounts, the
//! license key read from the mail validating through the API) and the seller's copy; the
//! renewal receipt, the failed renewal, the cancellation and the end of a subscription, a
//! key the seller revokes (on a manual clock); a server down for a while, then refusing
//! once (451), then delivering once; `kill -9` of the real binary between the order and
//! the send; "send me my keys again" (same answer for every address, 429 past its limit,
//! the page); and the file transport. The HTML receipt is shown in headless Chromium at
//! phone and desktop widths (`<CARGO_TARGET_TMPDIR>/mail-screenshots`).

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use actix_web::rt::time::sleep;
use chrono::Utc;
use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::app::subscription::sweep_subscriptions;
use tollgate::config::{EmailTransport, Settings};
use tollgate::domain::ids::OrderId;
use tollgate::domain::mail::{MailMessage, MailState};
use tollgate_actors::subscription::Subscription;
use tollgate_actors::ManualClock;

use crate::checkouts::{buyer, by_price, confirm, created, id_of, secret, seed, Api, Catalog};
use crate::helpers::{spawn_app_with, TestApp};
use crate::tools;

/// The sending address of the tests' servers.
pub(crate) const FROM: &str = "Tollgate Test <shop@tollgate.test>";
/// The organization's address (its Reply-To).
const ORG_EMAIL: &str = "support@acme.test";
/// Plenty for a message to cross: the sender is woken at once, and retries every 200 ms.
const MAIL_DEADLINE: Duration = Duration::from_secs(20);
const START_DEADLINE: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------
// The SMTP server

/// A running aiosmtpd. Dropping it closes its stdin (it exits) and kills it.
pub(crate) struct SmtpServer {
    child: Child,
    stdin: Option<ChildStdin>,
    pub port: u16,
    dir: TempDir,
    log: PathBuf,
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nothing listens on (yet).
pub(crate) fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("binding a free port");
    l.local_addr().expect("its address").port()
}

impl SmtpServer {
    /// Starts the server on `port` (0: any), refusing the first `fail_first` messages
    /// with a 451.
    pub(crate) fn start(port: u16, fail_first: u32) -> SmtpServer {
        Self::start_with(port, fail_first, None)
    }

    /// [`SmtpServer::start`], requiring AUTH with `credentials` (user, password).
    pub(crate) fn start_with(
        port: u16,
        fail_first: u32,
        credentials: Option<(&str, &str)>,
    ) -> SmtpServer {
        let python = tools::python_venv("tests/clients/mail/requirements.txt");
        let dir = tempfile::tempdir().expect("creating the mailbox directory");
        let log = dir.path().join("smtp.log");
        let mut child = Command::new(python)
            .arg(tools::repo_root().join("tests/clients/mail/smtp_server.py"))
            .args(["--dir"])
            .arg(dir.path().join("inbox"))
            .args(["--port", &port.to_string()])
            .args(["--fail-first", &fail_first.to_string()])
            .args(["--max-seconds", "600"])
            .args(
                credentials
                    .map(|(u, p)| vec!["--user", u, "--password", p])
                    .unwrap_or_default(),
            )
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(File::create(&log).expect("creating the SMTP log"))
            .spawn()
            .expect("starting the SMTP server");
        let stdin = child.stdin.take();
        let port = tools::announced_port(&mut child, START_DEADLINE).unwrap_or_else(|e| {
            panic!(
                "the SMTP server: {e}; log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            )
        });
        SmtpServer {
            child,
            stdin,
            port,
            dir,
            log,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Every message received so far, in order, as the script parsed it.
    pub(crate) fn messages(&self) -> Vec<Value> {
        let Ok(entries) = std::fs::read_dir(self.dir.path().join("inbox")) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|p| {
                serde_json::from_str(&std::fs::read_to_string(p).expect("reading a message"))
                    .expect("a message's JSON")
            })
            .collect()
    }

    /// The bytes received of message `n` (its JSON's `n`), as its `.eml` holds them.
    pub(crate) fn eml(&self, n: u64) -> Vec<u8> {
        std::fs::read(self.dir.path().join("inbox").join(format!("{n:04}.eml")))
            .expect("reading a message's .eml")
    }

    /// Waits (bounded) until at least `n` messages have arrived; returns them all.
    pub(crate) async fn wait_for(&self, n: usize) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let got = self.messages();
            if got.len() >= n {
                return got;
            }
            assert!(
                started.elapsed() < MAIL_DEADLINE,
                "{} of {n} messages after {MAIL_DEADLINE:?}: {got:#?}\nSMTP log:\n{}",
                got.len(),
                self.log_text()
            );
            sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Settings of a server mailing through `smtp_url`, retrying every 200 ms.
pub(crate) fn mail_settings(data_dir: &Path, smtp_url: &str) -> Settings {
    let mut s = Settings::for_tests(data_dir);
    s.email.transport = EmailTransport::Smtp;
    s.email.smtp_url = smtp_url.into();
    s.email.from = FROM.into();
    s.email.retry_base_ms = 200;
    s.email.max_attempts = 50;
    s.email.smtp_timeout_secs = 5;
    // Cancellation notices leave at once (tests/api/mail_hardening.rs tries the window).
    s.email.notice_window_secs = 0;
    s
}

async fn spawn_mailing(smtp_url: &str, clock: tollgate_actors::SharedClock) -> TestApp {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let settings = mail_settings(dir.path(), smtp_url);
    spawn_app_with(dir, settings, clock).await
}

/// Gives the organization an e-mail address and an avatar, and asks for copies of orders.
async fn brand(api: Api<'_>, org: &str, copies: bool) {
    let r = api
        .patch(
            &format!("/v1/organizations/{org}"),
            Some(api.token),
            &json!({
                "email": ORG_EMAIL,
                "notification_settings": {"new_order": copies, "new_subscription": false},
            }),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["notification_settings"]["new_order"], copies);
}

/// Buys `price` as `email` (test processor), with a discount (its id), returns the checkout.
pub(crate) async fn buy(api: Api<'_>, price: &str, email: &str, discount: Option<&str>) -> Value {
    let mut body = by_price(price);
    if let Some(id) = discount {
        body["discount_id"] = json!(id);
    }
    let c = created(api, &body).await;
    let r = confirm(api, &secret(&c), &buyer(email)).await;
    r.expect(200);
    c
}

pub(crate) fn header<'a>(m: &'a Value, name: &str) -> &'a str {
    m["headers"][name]
        .as_str()
        .unwrap_or_else(|| panic!("no {name} header in {m:#}"))
}

fn text(m: &Value) -> &str {
    m["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no plain-text part in {m:#}"))
}

fn html(m: &Value) -> &str {
    m["html"]
        .as_str()
        .unwrap_or_else(|| panic!("no HTML part in {m:#}"))
}

/// The messages sent to `to`.
pub(crate) fn to<'a>(all: &'a [Value], to: &str) -> Vec<&'a Value> {
    all.iter()
        .filter(|m| header(m, "To").contains(to))
        .collect()
}

/// The license keys a message's text lists (`ACME-…` lines).
fn keys_in(m: &Value) -> Vec<String> {
    text(m)
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("ACME-") && !l.contains(' '))
        .map(str::to_string)
        .collect()
}

async fn validate(app: &TestApp, key: &str, org: &str) -> crate::helpers::Reply {
    app.post_json(
        "/v1/customer-portal/license-keys/validate",
        None,
        &json!({"key": key, "organization_id": org}),
    )
    .await
}

/// The outbox's messages of an order.
async fn outbox_of(app: &TestApp, order: &str) -> Vec<MailMessage> {
    let id = OrderId(uuid::Uuid::parse_str(order).expect("an order id"));
    tollgate::app::mail::messages_of_order(&app.state, id)
        .await
        .expect("reading the outbox")
}

/// The order of a checkout.
async fn order_of(api: Api<'_>, checkout: &Value) -> Value {
    let r = api
        .read(&format!("/v1/orders/?checkout_id={}", id_of(checkout)))
        .await;
    r.expect(200);
    let items = r.items();
    assert_eq!(items.len(), 1, "{items:?}");
    items[0].clone()
}

fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mail-screenshots")
}

// ---------------------------------------------------------------------------------------
// Tests

#[actix_web::test]
async fn a_purchase_mails_a_receipt_with_a_key_that_validates_and_the_seller_a_copy() {
    let smtp = SmtpServer::start(0, 0);
    let app = spawn_mailing(&smtp.url(), tollgate_actors::SystemClock::shared()).await;
    let api = Api::of(&app);
    let cat: Catalog = seed(api, "mail-receipt").await;
    brand(api, &cat.org, true).await;
    let checkout = buy(
        api,
        &cat.ebook_price,
        "ada@example.com",
        Some(&cat.discount),
    )
    .await;
    let order = order_of(api, &checkout).await;

    let all = smtp.wait_for(2).await;
    assert_eq!(all.len(), 2, "{all:#?}");
    let receipt = to(&all, "ada@example.com");
    assert_eq!(receipt.len(), 1, "{all:#?}");
    let m = receipt[0];
    assert_eq!(m["rcpt_tos"], json!(["ada@example.com"]));
    assert_eq!(m["mail_from"], "shop@tollgate.test");
    assert_eq!(header(m, "From"), "Org mail-receipt <shop@tollgate.test>");
    assert_eq!(header(m, "Reply-To"), ORG_EMAIL);
    assert_eq!(
        header(m, "Subject"),
        "Your receipt from Org mail-receipt: Ebook"
    );
    let sent_at = chrono::DateTime::parse_from_rfc3339(m["date"].as_str().expect("a Date"))
        .expect("an RFC 5322 Date");
    assert!(
        (Utc::now() - sent_at.with_timezone(&Utc))
            .num_minutes()
            .abs()
            < 5
    );
    let message_id = header(m, "Message-ID");
    assert!(
        message_id.starts_with('<') && message_id.ends_with("@tollgate.test>"),
        "{message_id}"
    );
    assert_eq!(m["content_type"], "multipart/alternative");
    for part in [text(m), html(m)] {
        for needle in ["Ebook", "$25.00", "-$5.00", "$20.00", "up to 3 activations"] {
            assert!(part.contains(needle), "{needle} missing:\n{part}");
        }
        assert!(part.contains("/confirmation"), "{part}");
        assert!(
            part.contains("/license-keys/resend?organization_id="),
            "{part}"
        );
    }
    // The key, read from the mail, validates.
    let keys = keys_in(m);
    assert_eq!(keys.len(), 1, "{}", text(m));
    assert!(html(m).contains(&keys[0]));
    let v = validate(&app, &keys[0], &cat.org).await;
    v.expect(200);
    assert_eq!(v.body["status"], "granted");
    assert_eq!(v.body["customer"]["email"], "ada@example.com");

    // The seller's copy: to the organization, answered to the buyer.
    let copy = to(&all, ORG_EMAIL);
    assert_eq!(copy.len(), 1, "{all:#?}");
    assert_eq!(header(copy[0], "Reply-To"), "ada@example.com");
    assert!(header(copy[0], "Subject").starts_with("New order: ada@example.com bought Ebook"));
    assert!(keys_in(copy[0]).is_empty(), "the seller gets no key");

    // The outbox: both sent once, each with the server's answer.
    let outbox = outbox_of(&app, &id_of(&order)).await;
    assert_eq!(outbox.len(), 2);
    for m in &outbox {
        assert_eq!(m.state, MailState::Sent, "{m:?}");
        assert_eq!(m.attempts.len(), 1);
        assert!(m.attempts[0].answer.starts_with("250"), "{:?}", m.attempts);
    }
    // Nothing more comes.
    sleep(Duration::from_millis(500)).await;
    assert_eq!(smtp.messages().len(), 2);

    // The HTML receipt in a browser, at phone and desktop widths.
    crate::browser::ensure_chromium();
    let shots = screenshot_dir();
    let page = std::env::temp_dir().join(format!("tollgate-receipt-{}.html", std::process::id()));
    std::fs::write(&page, html(m)).expect("writing the receipt");
    let url = format!("file://{}", page.display());
    crate::browser::run_script(
        "mail_receipt.py",
        &shots,
        &[("RECEIPT_URL", url.as_str()), ("KEY", keys[0].as_str())],
        Duration::from_secs(120),
        6,
    )
    .await;
    let _ = std::fs::remove_file(&page);
}

#[actix_web::test]
async fn renewals_failures_cancellations_ends_and_revoked_keys_are_mailed() {
    let smtp = SmtpServer::start(0, 0);
    let (clock, shared) = ManualClock::shared(Utc::now());
    let app = spawn_mailing(&smtp.url(), shared).await;
    let api = Api::of(&app);
    let cat = seed(api, "mail-subs").await;
    brand(api, &cat.org, false).await;

    // Two subscribers and a one-time buyer.
    let renews = buy(api, &cat.monthly, "grace@example.com", None).await;
    let cancels = buy(api, &cat.monthly, "alan@example.com", None).await;
    let ebook = buy(api, &cat.ebook_price, "edsger@example.com", None).await;
    let receipts = smtp.wait_for(3).await;
    for who in ["grace@", "alan@", "edsger@"] {
        let got = to(&receipts, who);
        assert_eq!(got.len(), 1, "{who}: {receipts:#?}");
        assert!(header(got[0], "Subject").starts_with("Your receipt from"));
    }
    let subs = api
        .read(&format!(
            "/v1/subscriptions/?organization_id={}&limit=100",
            cat.org
        ))
        .await;
    subs.expect(200);
    let sub_of = |c: &Value| {
        subs.items()
            .into_iter()
            .find(|s| s["checkout_id"] == id_of(c).as_str())
            .expect("the checkout's subscription")
    };
    let grace = sub_of(&renews);
    let alan = sub_of(&cancels);

    // Alan cancels at the period's end.
    let r = api
        .patch(
            &format!("/v1/subscriptions/{}", id_of(&alan)),
            Some(api.token),
            &json!({"cancel_at_period_end": true}),
        )
        .await;
    r.expect(200);
    let all = smtp.wait_for(4).await;
    let canceled = to(&all, "alan@");
    assert_eq!(canceled.len(), 2, "{all:#?}");
    let m = canceled[1];
    assert!(header(m, "Subject").starts_with("Your Acme Pro subscription was canceled"));
    assert!(
        text(m).contains("You will not be charged again"),
        "{}",
        text(m)
    );
    assert!(text(m).contains("until "), "{}", text(m));

    // A month later Grace renews: a renewal receipt with the subscription's keys.
    let end = chrono::DateTime::parse_from_rfc3339(grace["current_period_end"].as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc);
    clock.set(end + chrono::Duration::minutes(1));
    sweep_subscriptions(&app.state).await.expect("sweeping");
    let all = smtp.wait_for(6).await;
    let grace_mail = to(&all, "grace@");
    let renewal = grace_mail
        .iter()
        .find(|m| header(m, "Subject").starts_with("Your Acme Pro subscription renewed"))
        .unwrap_or_else(|| panic!("no renewal receipt: {all:#?}"));
    assert!(
        text(renewal).contains("$15.00 / month"),
        "{}",
        text(renewal)
    );
    assert_eq!(keys_in(renewal).len(), 1, "{}", text(renewal));
    // Alan's subscription ended at its period's end: that is said too.
    let alan_mail = to(&all, "alan@");
    assert!(
        alan_mail
            .iter()
            .any(|m| header(m, "Subject").starts_with("Your Acme Pro subscription has ended")),
        "{all:#?}"
    );

    // Grace's card stops working: the next renewal fails, and says when it is tried again.
    let id = tollgate::domain::ids::SubscriptionId(
        uuid::Uuid::parse_str(grace["id"].as_str().unwrap()).unwrap(),
    );
    let stored = app
        .state
        .store
        .get::<Subscription>(&id.key())
        .await
        .unwrap()
        .unwrap();
    let mut s = stored.value;
    s.payment_token = Some("tok_decline_insufficient_funds".into());
    let mut batch = tollgate_storage::Batch::new();
    batch
        .put(&s, tollgate_storage::Expect::Rev(stored.rev))
        .unwrap();
    app.state.store.commit_durable(&batch).await.unwrap();
    let next_end = s.current_period_end.unwrap();
    clock.set(next_end + chrono::Duration::minutes(1));
    let before = smtp.messages().len();
    sweep_subscriptions(&app.state).await.expect("sweeping");
    let all = smtp.wait_for(before + 1).await;
    let failed = all[before..]
        .iter()
        .find(|m| header(m, "Subject").starts_with("Payment failed for your Acme Pro"))
        .unwrap_or_else(|| panic!("no failure notice: {all:#?}"));
    assert_eq!(header(failed, "To"), "grace@example.com");
    let retry = tollgate::app::mail::date(next_end + chrono::Duration::days(3));
    let gives_up = tollgate::app::mail::date(next_end + chrono::Duration::days(9));
    for part in [text(failed), html(failed)] {
        assert!(part.contains(&retry), "{retry} missing:\n{part}");
        assert!(part.contains(&gives_up), "{gives_up} missing:\n{part}");
    }

    // The seller revokes Edsger's key: he is told which.
    let keys = api
        .read(&format!(
            "/v1/license-keys?organization_id={}&limit=100",
            cat.org
        ))
        .await;
    let edsger_key = keys
        .items()
        .into_iter()
        .find(|k| k["customer"]["email"] == "edsger@example.com")
        .expect("Edsger's key");
    let before = smtp.messages().len();
    let r = api
        .patch(
            &format!("/v1/license-keys/{}", id_of(&edsger_key)),
            Some(api.token),
            &json!({"status": "revoked"}),
        )
        .await;
    r.expect(200);
    let all = smtp.wait_for(before + 1).await;
    let revoked = &all[before];
    assert_eq!(header(revoked, "To"), "edsger@example.com");
    assert!(header(revoked, "Subject").starts_with("A license key was revoked"));
    assert!(
        text(revoked).contains(edsger_key["key"].as_str().unwrap()),
        "{}",
        text(revoked)
    );
    let _ = ebook;

    // Nothing was sent twice.
    sleep(Duration::from_millis(500)).await;
    let all = smtp.messages();
    let mut ids: Vec<&str> = all.iter().map(|m| header(m, "Message-ID")).collect();
    ids.sort();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "a Message-ID twice: {all:#?}");
}

#[actix_web::test]
async fn a_message_waits_out_a_server_that_is_down_then_refuses_then_is_delivered_once() {
    let port = free_port();
    let app = spawn_mailing(
        &format!("smtp://127.0.0.1:{port}"),
        tollgate_actors::SystemClock::shared(),
    )
    .await;
    let api = Api::of(&app);
    let cat = seed(api, "mail-down").await;
    let checkout = buy(api, &cat.ebook_price, "ada@example.com", None).await;
    let order = id_of(&order_of(api, &checkout).await);

    // Nobody listens: attempts fail and are logged, the message stays pending.
    let started = Instant::now();
    loop {
        let outbox = outbox_of(&app, &order).await;
        if outbox.len() == 1 && outbox[0].attempts.len() >= 3 {
            assert_eq!(outbox[0].state, MailState::Pending);
            assert!(outbox[0].attempts.iter().all(|a| !a.ok));
            break;
        }
        assert!(started.elapsed() < MAIL_DEADLINE, "{outbox:?}");
        sleep(Duration::from_millis(100)).await;
    }

    // The server comes up and refuses once (451), then accepts.
    let smtp = SmtpServer::start(port, 1);
    let all = smtp.wait_for(1).await;
    sleep(Duration::from_secs(1)).await;
    assert_eq!(smtp.messages().len(), 1, "delivered once: {all:#?}");
    let outbox = outbox_of(&app, &order).await;
    let m = &outbox[0];
    assert_eq!(m.state, MailState::Sent, "{m:?}");
    let last = m.attempts.last().unwrap();
    assert!(
        last.ok && last.answer.starts_with("250"),
        "{:?}",
        m.attempts
    );
    assert!(
        m.attempts.iter().any(|a| a.answer.contains("451")),
        "the refusal is logged: {:?}",
        m.attempts
    );
    assert_eq!(keys_in(&smtp.messages()[0]).len(), 1);
}

#[actix_web::test]
async fn keys_are_sent_again_on_request_and_nobody_learns_who_bought() {
    let smtp = SmtpServer::start(0, 0);
    let app = spawn_mailing(&smtp.url(), tollgate_actors::SystemClock::shared()).await;
    let api = Api::of(&app);
    let cat = seed(api, "mail-resend").await;
    buy(api, &cat.ebook_price, "ada@example.com", None).await;
    smtp.wait_for(1).await;

    let resend = |email: &str| {
        let body = json!({"email": email, "organization_id": cat.org});
        let app = &app;
        async move {
            app.post_json("/v1/customer-portal/license-keys/resend", None, &body)
                .await
        }
    };
    // A buyer and a stranger get the same answer.
    let known = resend("ADA@example.com").await;
    known.expect(202);
    let unknown = resend("nobody@example.com").await;
    unknown.expect(202);
    assert_eq!(known.body, unknown.body);
    let all = smtp.wait_for(2).await;
    let again = &all[1];
    assert_eq!(header(again, "To"), "ada@example.com");
    assert!(header(again, "Subject").starts_with("Your license keys"));
    assert_eq!(keys_in(again), keys_in(&all[0]));
    sleep(Duration::from_millis(500)).await;
    assert_eq!(smtp.messages().len(), 2, "nothing for the stranger");

    // Bad input.
    let r = app
        .post_json(
            "/v1/customer-portal/license-keys/resend",
            None,
            &json!({"email": "not-an-address", "organization_id": cat.org}),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.body["detail"][0]["loc"], json!(["body", "email"]));
    let r = app
        .post_json(
            "/v1/customer-portal/license-keys/resend",
            None,
            &json!({"email": "ada@example.com"}),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.body);

    // Three per address per hour: the fourth for Ada is refused, with Retry-After.
    resend("ada@example.com").await.expect(202);
    resend("ada@example.com").await.expect(202);
    let r = resend("ada@example.com").await;
    assert_eq!(r.status, 429, "{}", r.body);
    assert!(r.header("retry-after").parse::<u64>().unwrap() > 0);
    // A stranger's address is limited just the same.
    for _ in 0..3 {
        resend("eve@example.com").await.expect(202);
    }
    assert_eq!(resend("eve@example.com").await.status, 429);

    // The page.
    let page = app
        .client
        .get(app.url(&format!("/license-keys/resend?organization_id={}", cat.org)))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let body = page.text().await.unwrap();
    assert!(body.contains("Get your license keys again"), "{body}");
    assert!(body.contains("Org mail-resend"), "{body}");
    let unknown_org = app
        .client
        .get(app.url(&format!(
            "/license-keys/resend?organization_id={}",
            uuid::Uuid::new_v4()
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown_org.status(), 404);
    let post = |email: &'static str| {
        app.client
            .post(app.url("/license-keys/resend"))
            .form(&[("email", email), ("organization_id", cat.org.as_str())])
            .send()
    };
    let r = post("grace@example.com").await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("we have sent them"));
    let r = post("nope").await.unwrap();
    assert_eq!(r.status(), 422);
    assert!(r.text().await.unwrap().contains("Enter the e-mail address"));
}

#[actix_web::test]
async fn the_file_transport_leaves_each_message_as_an_eml_file() {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let data = dir.path().to_path_buf();
    let mut settings = Settings::for_tests(&data);
    settings.email.transport = EmailTransport::File;
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let api = Api::of(&app);
    let cat = seed(api, "mail-file").await;
    buy(api, &cat.ebook_price, "ada@example.com", None).await;
    let mail = data.join("mail");
    let started = Instant::now();
    let file = loop {
        let found: Vec<PathBuf> = std::fs::read_dir(&mail)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        if let Some(f) = found
            .iter()
            .find(|p| p.extension().is_some_and(|x| x == "eml"))
        {
            break f.clone();
        }
        assert!(
            started.elapsed() < MAIL_DEADLINE,
            "no .eml in {}",
            mail.display()
        );
        sleep(Duration::from_millis(100)).await;
    };
    let eml = std::fs::read_to_string(&file).expect("reading the .eml");
    for needle in [
        "To: ada@example.com",
        "Subject: Your receipt from Org mail-file: Ebook",
        "Content-Type: multipart/alternative",
        "Message-ID: <",
    ] {
        assert!(eml.contains(needle), "{needle} missing:\n{eml}");
    }
    assert!(eml.contains("ACME-"), "{eml}");
}

#[actix_web::test]
async fn a_purchase_acknowledged_before_kill_9_is_mailed_once_after_the_restart() {
    use crate::binary::Binary;
    let port = free_port();
    let root = tempfile::tempdir().expect("creating a temporary directory");
    let data = root.path().join("data");
    std::fs::create_dir_all(&data).expect("creating the data directory");
    let url = format!("smtp://127.0.0.1:{port}");
    let env = [
        ("TOLLGATE__EMAIL__TRANSPORT", "smtp"),
        ("TOLLGATE__EMAIL__SMTP_URL", url.as_str()),
        ("TOLLGATE__EMAIL__FROM", FROM),
        ("TOLLGATE__EMAIL__RETRY_BASE_MS", "100"),
        ("TOLLGATE__EMAIL__MAX_ATTEMPTS", "1000"),
    ];
    let mut server = Binary::start(root.path(), &data, "server-1.log", &env, START_DEADLINE).await;
    let token = std::fs::read_to_string(data.join(tollgate::bootstrap::TOKEN_FILE))
        .expect("reading the bootstrap token")
        .trim()
        .to_string();
    let http = crate::helpers::client();
    let org = {
        let api = Api {
            base: &server.address,
            client: &http,
            token: &token,
        };
        let cat = seed(api, "mail-kill").await;
        // Acknowledged, then killed at once: the mail server is not even up.
        buy(api, &cat.ebook_price, "ada@example.com", None).await;
        cat.org
    };
    server.kill_9();

    let smtp = SmtpServer::start(port, 0);
    let server = Binary::start(root.path(), &data, "server-2.log", &env, START_DEADLINE).await;
    let all = smtp.wait_for(1).await;
    sleep(Duration::from_secs(2)).await;
    let all_now = smtp.messages();
    assert_eq!(
        all_now.len(),
        1,
        "sent once: {all:#?}\n{}",
        server.log_text()
    );
    let keys = keys_in(&all_now[0]);
    assert_eq!(keys.len(), 1, "{}", text(&all_now[0]));
    let r = http
        .post(format!(
            "{}/v1/customer-portal/license-keys/validate",
            server.address
        ))
        .json(&json!({"key": keys[0], "organization_id": org}))
        .send()
        .await
        .expect("validating");
    assert_eq!(r.status(), 200);
}

#[actix_web::test]
async fn smtp_credentials_are_used_and_refused_ones_are_retried_not_dropped() {
    let smtp = SmtpServer::start_with(0, 0, Some(("tollgate", "s3cret")));
    // Refused credentials: the attempts fail with the server's 535, the message waits.
    let wrong = spawn_mailing(
        &format!("smtp://tollgate:wrong@127.0.0.1:{}", smtp.port),
        tollgate_actors::SystemClock::shared(),
    )
    .await;
    let api = Api::of(&wrong);
    let cat = seed(api, "mail-auth-wrong").await;
    let checkout = buy(api, &cat.ebook_price, "ada@example.com", None).await;
    let order = id_of(&order_of(api, &checkout).await);
    let started = Instant::now();
    loop {
        let outbox = outbox_of(&wrong, &order).await;
        if outbox.len() == 1 && outbox[0].attempts.len() >= 2 {
            assert_eq!(outbox[0].state, MailState::Pending, "{outbox:?}");
            assert!(
                outbox[0].attempts.iter().all(|a| a.answer.contains("535")),
                "{:?}",
                outbox[0].attempts
            );
            assert!(
                outbox[0]
                    .attempts
                    .iter()
                    .all(|a| !a.answer.contains("wrong")),
                "the password is never recorded"
            );
            break;
        }
        assert!(started.elapsed() < MAIL_DEADLINE, "{outbox:?}");
        sleep(Duration::from_millis(100)).await;
    }
    assert!(smtp.messages().is_empty());

    // The right ones: delivered, as that user.
    let right = spawn_mailing(
        &format!("smtp://tollgate:s3cret@127.0.0.1:{}", smtp.port),
        tollgate_actors::SystemClock::shared(),
    )
    .await;
    let api = Api::of(&right);
    let cat = seed(api, "mail-auth-right").await;
    buy(api, &cat.ebook_price, "grace@example.com", None).await;
    let all = smtp.wait_for(1).await;
    assert_eq!(all[0]["auth_user"], "tollgate");
    assert_eq!(header(&all[0], "To"), "grace@example.com");
}

#[actix_web::test]
async fn a_refund_mails_the_buyer_what_comes_back_and_which_keys_stop() {
    let smtp = SmtpServer::start(0, 0);
    let app = spawn_mailing(&smtp.url(), tollgate_actors::SystemClock::shared()).await;
    let api = Api::of(&app);
    let cat = seed(api, "mail-refund").await;
    let checkout = buy(api, &cat.ebook_price, "ada@example.com", None).await;
    let order = id_of(&order_of(api, &checkout).await);
    let receipt = smtp.wait_for(1).await;
    let key = keys_in(&receipt[0]).remove(0);
    app.post_json(
        "/v1/refunds/",
        Some(&app.token),
        &json!({"order_id": order, "reason": "customer_request", "amount": 2500, "revoke_benefits": true}),
    )
    .await
    .expect(200);
    // The refund's message and the revoked key's notice leave at once, from two of the
    // sender's workers: in either order.
    let started = Instant::now();
    let m = loop {
        let all = smtp.wait_for(2).await;
        if let Some(m) = all
            .iter()
            .find(|m| header(m, "Subject").starts_with("Your refund for Ebook"))
        {
            break m.clone();
        }
        assert!(
            started.elapsed() < MAIL_DEADLINE,
            "no refund message: {all:#?}"
        );
        sleep(Duration::from_millis(100)).await;
    };
    let m = &m;
    assert_eq!(header(m, "To"), "ada@example.com");
    for part in [text(m), html(m)] {
        assert!(part.contains("$25.00"), "{part}");
        assert!(part.contains("no longer work"), "{part}");
        assert!(part.contains(&key), "{part}");
    }
    // Listed with the order's messages.
    let outbox = outbox_of(&app, &order).await;
    assert_eq!(outbox.len(), 2);
}

#[actix_web::test]
async fn settled_messages_are_purged_after_the_retention_period_and_pending_ones_kept() {
    let (clock, shared) = ManualClock::shared(Utc::now());
    // Nobody listens on this port: the receipt stays pending.
    let app = spawn_mailing(&format!("smtp://127.0.0.1:{}", free_port()), shared).await;
    let api = Api::of(&app);
    let cat = seed(api, "mail-purge").await;
    let checkout = buy(api, &cat.ebook_price, "ada@example.com", None).await;
    let order = id_of(&order_of(api, &checkout).await);
    let started = Instant::now();
    while outbox_of(&app, &order).await.is_empty() {
        assert!(started.elapsed() < MAIL_DEADLINE, "no receipt decided");
        sleep(Duration::from_millis(50)).await;
    }
    // A message sent long ago, beside it.
    let mut sent = outbox_of(&app, &order).await.remove(0);
    sent.id = tollgate::domain::ids::MailMessageId(uuid::Uuid::new_v4());
    sent.state = MailState::Sent;
    sent.next_attempt_at = None;
    let mut batch = tollgate_storage::Batch::new();
    batch.put(&sent, tollgate_storage::Expect::Absent).unwrap();
    app.state.store.commit_durable(&batch).await.unwrap();
    assert_eq!(outbox_of(&app, &order).await.len(), 2);

    // Within the retention period nothing goes; past it, the settled one does.
    assert_eq!(tollgate::mail::purge(&app.state).await.unwrap(), 0);
    clock.set(Utc::now() + chrono::Duration::days(91));
    assert_eq!(tollgate::mail::purge(&app.state).await.unwrap(), 1);
    let left = outbox_of(&app, &order).await;
    assert_eq!(left.len(), 1);
    assert_eq!(
        left[0].state,
        MailState::Pending,
        "a pending message is kept"
    );
}
