//! E-mail hardening (issue 44, parts 2, 4, 5 and the mail files of 6), against the real
//! server and a real SMTP server (`crate::mail::SmtpServer`, aiosmtpd), and a tarpit: a
//! TCP server that greets and then never answers.
//!
//! What is checked: names with line breaks refused by the API and the dashboard; a message
//! that cannot be built (stored by an older build) failed for good while every other
//! seller's mail flows, across restarts of the real binary; cancel/uncancel toggles
//! limited (429) and their notices coalesced while a sign-in code jumps the queue; a tarpit
//! holding one conversation no longer than `smtp_timeout_secs` and nobody else's mail at
//! all; a stuck sender reported by `/readyz` (503) and `/metrics`; receipts to one address
//! bounded; `.eml` files 0600 in a 0700 directory.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use actix_web::rt::time::sleep;
use chrono::Utc;
use serde_json::{json, Value};
use tollgate::config::{EmailTransport, Limit, Settings};
use tollgate::domain::ids::{MailMessageId, OrganizationId};
use tollgate::domain::mail::{MailKind, MailMessage, MailState};
use tollgate_storage::{Batch, Expect, Store, StoreConfig};

use crate::checkouts::{id_of, seed, store_values, Api};
use crate::dashboard::{assert_invalid, form_post, seller};
use crate::helpers::{spawn_app, spawn_app_with, TestApp};
use crate::mail::{buy, header, mail_settings, to, SmtpServer, FROM};

const START_DEADLINE: Duration = Duration::from_secs(30);
/// Generous: the machine is shared and slow.
const DEADLINE: Duration = Duration::from_secs(30);
const METRICS_TOKEN: &str = "scrape-me-0123456789-abcdefghijkl";

// ---------------------------------------------------------------------------------------
// Helpers

/// A TCP server on loopback that greets (`220`) the first `hold` connections and then never
/// answers them (it keeps them open), and forwards the others, byte for byte, to `forward`.
struct Tarpit {
    port: u16,
}

impl Tarpit {
    fn start(hold: usize, forward: Option<u16>) -> Tarpit {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding the tarpit");
        let port = listener.local_addr().expect("its address").port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for (n, conn) in listener.incoming().enumerate() {
                let Ok(mut conn) = conn else { continue };
                match forward {
                    Some(to) if n >= hold => {
                        std::thread::spawn(move || proxy(conn, to));
                    }
                    _ => {
                        let _ = conn.write_all(b"220 tarpit.test ESMTP\r\n");
                        held.push(conn);
                    }
                }
            }
        });
        Tarpit { port }
    }

    fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }
}

/// Copies bytes both ways between `client` and the SMTP server on `port` until either
/// closes.
fn proxy(client: TcpStream, port: u16) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", port)) else {
        return;
    };
    let pipe = |mut from: TcpStream, mut to: TcpStream| {
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if to.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                }
            }
            let _ = to.shutdown(std::net::Shutdown::Both);
        })
    };
    let (c2, s2) = match (client.try_clone(), server.try_clone()) {
        (Ok(c), Ok(s)) => (c, s),
        _ => return,
    };
    let a = pipe(client, server);
    let b = pipe(s2, c2);
    let _ = a.join();
    let _ = b.join();
}

async fn spawn_with(settings: Settings, dir: tempfile::TempDir) -> TestApp {
    spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await
}

/// Every message of the outbox.
async fn outbox(app: &TestApp) -> Vec<MailMessage> {
    store_values::<MailMessage>(&app.state.store).await
}

/// A pending message, due now, as an older build could have stored it.
fn stored_message(org: OrganizationId, kind: MailKind, to: &str, from_name: &str) -> MailMessage {
    let now = Utc::now();
    MailMessage {
        id: MailMessageId(uuid::Uuid::new_v4()),
        organization_id: org,
        created_at: now,
        modified_at: None,
        kind,
        to: to.into(),
        reply_to: None,
        from_name: from_name.into(),
        subject: format!("A message from {}", from_name.replace(['\r', '\n'], " ")),
        text: "Hello".into(),
        html: "<p>Hello</p>".into(),
        order_id: None,
        subscription_id: None,
        customer_id: None,
        state: MailState::Pending,
        attempts: Vec::new(),
        next_attempt_at: Some(now),
        attachments: Vec::new(),
    }
}

async fn status_of(client: &reqwest::Client, url: String) -> u16 {
    client
        .get(url)
        .send()
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

/// Polls `/readyz` until it answers `want` (at most `DEADLINE`).
async fn ready_becomes(app: &TestApp, want: u16) {
    let started = Instant::now();
    loop {
        let got = status_of(&app.client, app.url("/readyz")).await;
        if got == want {
            return;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "/readyz still answers {got}, not {want}"
        );
        sleep(Duration::from_millis(200)).await;
    }
}

async fn metrics_text(app: &TestApp) -> String {
    let r = app
        .client
        .get(app.url("/metrics"))
        .bearer_auth(METRICS_TOKEN)
        .send()
        .await
        .expect("scraping");
    assert_eq!(r.status(), 200);
    r.text().await.expect("the exposition")
}

/// The subscription a checkout started.
async fn subscription_of(api: Api<'_>, org: &str, checkout: &Value) -> Value {
    let subs = api
        .read(&format!(
            "/v1/subscriptions/?organization_id={org}&limit=100"
        ))
        .await;
    subs.expect(200);
    subs.items()
        .into_iter()
        .find(|s| s["checkout_id"] == id_of(checkout).as_str())
        .expect("the checkout's subscription")
}

// ---------------------------------------------------------------------------------------
// Part 2: names that reach a header

#[actix_web::test]
async fn names_with_control_characters_are_refused_by_the_api_and_the_dashboard() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let invalid_name = |r: &crate::helpers::Reply| {
        let e = r.expect_invalid_at(json!(["body", "name"]));
        assert_eq!(e["type"], "string_pattern_mismatch", "{e}");
    };
    // Organizations: create and update.
    for name in ["Shop\nX", "Shop\r\nBcc: victim@example.com", "Tab\tShop"] {
        let r = api
            .post(
                "/v1/organizations/",
                Some(api.token),
                &json!({"name": name, "slug": "shop-x"}),
            )
            .await;
        invalid_name(&r);
    }
    let cat = seed(api, "names").await;
    let r = api
        .patch(
            &format!("/v1/organizations/{}", cat.org),
            Some(api.token),
            &json!({"name": "Org\r\nnames"}),
        )
        .await;
    invalid_name(&r);
    let org = api.read(&format!("/v1/organizations/{}", cat.org)).await;
    assert_eq!(org.body["name"], "Org names", "unchanged");
    // Products: create and update.
    let r = api
        .post(
            "/v1/products/",
            Some(api.token),
            &json!({"name": "Ebook\r\nX", "organization_id": cat.org,
                    "prices": [{"type": "one_time", "amount_type": "free"}]}),
        )
        .await;
    invalid_name(&r);
    let r = api
        .patch(
            &format!("/v1/products/{}", cat.ebook),
            Some(api.token),
            &json!({"name": "Ebook\nX"}),
        )
        .await;
    invalid_name(&r);
    // Customers: create and update.
    let r = api
        .post(
            "/v1/customers/",
            Some(api.token),
            &json!({"email": "ada@example.com", "name": "Ada\nX", "organization_id": cat.org}),
        )
        .await;
    invalid_name(&r);
    let c = api
        .posted(
            "/v1/customers/",
            &json!({"email": "ada@example.com", "name": "Ada", "organization_id": cat.org}),
            201,
        )
        .await;
    let r = api
        .patch(
            &format!("/v1/customers/{}", id_of(&c)),
            Some(api.token),
            &json!({"name": "Ada\r\nX"}),
        )
        .await;
    invalid_name(&r);
    // A buyer's name on a checkout (it becomes a customer's): create, update, confirm.
    let invalid_buyer = |r: &crate::helpers::Reply| {
        let e = r.expect_invalid_at(json!(["body", "customer_name"]));
        assert_eq!(e["type"], "string_pattern_mismatch", "{e}");
    };
    let r = api
        .post(
            crate::checkouts::CHECKOUTS,
            Some(api.token),
            &json!({"product_price_id": cat.ebook_price, "customer_name": "Eve\r\nBcc: x@example.com"}),
        )
        .await;
    invalid_buyer(&r);
    let checkout =
        crate::checkouts::created(api, &crate::checkouts::by_price(&cat.ebook_price)).await;
    let secret = crate::checkouts::secret(&checkout);
    let r = api
        .patch(
            &crate::checkouts::client_path(&secret),
            None,
            &json!({"customer_name": "Eve\nX"}),
        )
        .await;
    invalid_buyer(&r);
    let mut body = crate::checkouts::buyer("eve@example.com");
    body["customer_name"] = json!("Eve\r\nX");
    invalid_buyer(&crate::checkouts::confirm(api, &secret, &body).await);
    // Names without control characters still go.
    let r = api
        .patch(
            &format!("/v1/organizations/{}", cat.org),
            Some(api.token),
            &json!({"name": "Café « Ünïcode » ✓"}),
        )
        .await;
    r.expect(200);

    // The dashboard's forms: the same 422, shown on the form.
    let (mut b, org) = seller(&app, "seller@example.com", "Dashboard shop").await;
    let page = form_post(
        &mut b,
        "/dashboard/organizations/new",
        &[("name", "Shop\nX")],
    )
    .await;
    assert_invalid(&page, "name");
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/settings"),
        &[("name", "Shop\r\nX")],
    )
    .await;
    assert_invalid(&page, "name");
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/products/new"),
        &[
            ("name", "Ebook\r\nX"),
            ("billing", "one_time"),
            ("amount_type", "fixed"),
            ("amount", "10"),
        ],
    )
    .await;
    assert_invalid(&page, "name");
}

#[actix_web::test]
async fn a_message_that_cannot_be_built_fails_for_good_and_mail_keeps_flowing_across_restarts() {
    use crate::binary::Binary;
    let smtp = SmtpServer::start(0, 0);
    let root = tempfile::tempdir().expect("creating a temporary directory");
    let data = root.path().join("data");
    std::fs::create_dir_all(&data).expect("creating the data directory");
    let url = smtp.url();
    let env = [
        ("TOLLGATE__EMAIL__TRANSPORT", "smtp"),
        ("TOLLGATE__EMAIL__SMTP_URL", url.as_str()),
        ("TOLLGATE__EMAIL__FROM", FROM),
        ("TOLLGATE__EMAIL__RETRY_BASE_MS", "100"),
        ("TOLLGATE__EMAIL__MAX_ATTEMPTS", "1000"),
    ];
    let http = crate::helpers::client();
    let token_of = |data: &std::path::Path| {
        std::fs::read_to_string(data.join(tollgate::bootstrap::TOKEN_FILE))
            .expect("reading the bootstrap token")
            .trim()
            .to_string()
    };

    // A first run sets up a seller, and stops.
    let mut server = Binary::start(root.path(), &data, "server-1.log", &env, START_DEADLINE).await;
    let token = token_of(&data);
    let cat = {
        let api = Api {
            base: &server.address,
            client: &http,
            token: &token,
        };
        seed(api, "poison-other").await
    };
    let before = smtp.messages().len();
    server.kill_9();
    drop(server);

    // An older build stored a message whose From name has a line break, first in line.
    let poison = {
        let store = Store::open(&StoreConfig::new(data.clone())).expect("opening the store");
        let mut m = stored_message(
            OrganizationId(uuid::Uuid::new_v4()),
            MailKind::OrderReceipt,
            "victim@example.com",
            "Shop\nX",
        );
        m.next_attempt_at = Some(Utc::now() - chrono::Duration::hours(1));
        let mut batch = Batch::new();
        batch.put(&m, Expect::Absent).unwrap();
        store.commit_durable(&batch).await.unwrap();
        store.flush_blocking().unwrap();
        m.id
    };

    // Each restart: the other seller's buyers get their receipts, the server stays ready.
    for (run, buyer) in [(2, "ada@example.com"), (3, "grace@example.com")] {
        let server = Binary::start(
            root.path(),
            &data,
            &format!("server-{run}.log"),
            &env,
            START_DEADLINE,
        )
        .await;
        {
            let api = Api {
                base: &server.address,
                client: &http,
                token: &token,
            };
            buy(api, &cat.ebook_price, buyer, None).await;
        }
        let all = smtp.wait_for(before + run - 1).await;
        assert_eq!(
            to(&all, buyer).len(),
            1,
            "run {run}: {all:#?}\n{}",
            server.log_text()
        );
        assert_eq!(
            status_of(&http, format!("{}/readyz", server.address)).await,
            200,
            "{}",
            server.log_text()
        );
        let mut server = server;
        server.kill_9();
    }
    assert!(to(&smtp.messages(), "victim@").is_empty());

    // The message that could not be built: failed for good at its first attempt, once.
    let store = Store::open(&StoreConfig::new(data.clone())).expect("opening the store");
    let m = store
        .get::<MailMessage>(&poison.key())
        .await
        .unwrap()
        .expect("the message")
        .value;
    assert_eq!(m.state, MailState::Failed, "{m:?}");
    assert_eq!(m.attempts.len(), 1, "never tried again: {:?}", m.attempts);
    assert!(
        m.attempts[0].answer.contains("cannot build"),
        "{:?}",
        m.attempts
    );
}

// ---------------------------------------------------------------------------------------
// Part 4: notices are bounded; sign-in codes never wait behind them

#[actix_web::test]
async fn toggles_are_limited_and_coalesced_and_a_sign_in_code_jumps_the_queue() {
    let smtp = SmtpServer::start(0, 0);
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = mail_settings(dir.path(), &smtp.url());
    settings.email.notice_window_secs = 5;
    let app = spawn_with(settings, dir).await;
    let api = Api::of(&app);
    let cat = seed(api, "toggles").await;
    let subscribed = buy(api, &cat.monthly, "alan@example.com", None).await;
    buy(api, &cat.ebook_price, "grace@example.com", None).await;
    smtp.wait_for(2).await;
    let sub = id_of(&subscription_of(api, &cat.org, &subscribed).await);

    // A backlog of notices to someone else, due before the code is asked for.
    let org = OrganizationId(uuid::Uuid::parse_str(&cat.org).unwrap());
    let mut batch = Batch::new();
    for _ in 0..600 {
        let m = stored_message(
            org,
            MailKind::SubscriptionEnded,
            "backlog@example.com",
            "Org toggles",
        );
        batch.put(&m, Expect::Absent).unwrap();
    }
    app.state.store.commit_durable(&batch).await.unwrap();
    app.state.mailer.wake();

    // Grace asks for a sign-in code: it arrives within seconds, whatever the backlog.
    let asked = Instant::now();
    let r = api
        .post(
            "/v1/customer-portal/customer-session/request",
            None,
            &json!({"email": "grace@example.com", "organization_id": cat.org}),
        )
        .await;
    r.expect(202);
    loop {
        let all = smtp.messages();
        let codes: Vec<&Value> = to(&all, "grace@example.com")
            .into_iter()
            .filter(|m| header(m, "Subject").starts_with("Access your"))
            .collect();
        if !codes.is_empty() {
            break;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(5),
            "no sign-in code after {:?}; {} messages sent",
            asked.elapsed(),
            all.len()
        );
        sleep(Duration::from_millis(50)).await;
    }

    // 60 toggles of one subscription (each asks for the other state): the first ones go,
    // the rest are refused with 429.
    let mut went = 0;
    let mut refused = 0;
    let mut canceled = false;
    for i in 0..60 {
        let r = api
            .patch(
                &format!("/v1/subscriptions/{sub}"),
                Some(api.token),
                &json!({"cancel_at_period_end": !canceled}),
            )
            .await;
        match r.status.as_u16() {
            200 => {
                assert_eq!(refused, 0, "a toggle went after one was refused");
                assert_eq!(r.body["cancel_at_period_end"], !canceled, "{}", r.body);
                canceled = !canceled;
                went += 1;
            }
            429 => {
                assert_eq!(r.body["error"], "TooManyRequests", "{}", r.body);
                assert!(!r.header("retry-after").is_empty());
                assert!(r.header("ratelimit-policy").contains("subscription"));
                refused += 1;
            }
            s => panic!("toggle {i}: {s} {}", r.body),
        }
    }
    assert_eq!(
        went, 10,
        "rate_limits.subscription_cancels_per_subscription"
    );
    assert_eq!(refused, 50);

    // The notices: one per window at most, and none for a cancellation undone (the last
    // toggle that went was an uncancel).
    let started = Instant::now();
    loop {
        let notices: Vec<MailMessage> = outbox(&app)
            .await
            .into_iter()
            .filter(|m| m.kind == MailKind::SubscriptionCanceled)
            .collect();
        assert!(notices.len() <= 2, "{notices:#?}");
        if notices.iter().all(|m| !m.is_pending()) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{notices:#?}");
        sleep(Duration::from_millis(200)).await;
    }
    let sent = to(&smtp.messages(), "alan@example.com")
        .into_iter()
        .filter(|m| header(m, "Subject").contains("canceled"))
        .count();
    assert_eq!(sent, 0, "every cancellation was undone within the window");
}

/// The buyer and the seller each have their share of a subscription's toggles: a buyer
/// toggling in the portal until refused never stops the seller's own change.
#[actix_web::test]
async fn a_buyer_toggling_in_the_portal_never_stops_the_sellers_changes() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "toggle-share").await;
    let checkout = buy(api, &cat.monthly, "alan@example.com", None).await;
    let sub = subscription_of(api, &cat.org, &checkout).await;
    let id = sub["id"].as_str().unwrap().to_string();
    let session = api
        .posted(
            "/v1/customer-sessions/",
            &json!({"customer_id": sub["customer_id"]}),
            201,
        )
        .await;
    let token = session["token"].as_str().unwrap().to_string();
    let mut canceled = false;
    let mut went = 0;
    loop {
        let r = api
            .patch(
                &format!("/v1/customer-portal/subscriptions/{id}"),
                Some(&token),
                &json!({"cancel_at_period_end": !canceled}),
            )
            .await;
        if r.status == 429 {
            break;
        }
        r.expect(200);
        canceled = !canceled;
        went += 1;
        assert!(went <= 10, "the buyer's toggles are limited");
    }
    assert_eq!(went, 10);
    let r = api
        .patch(
            &format!("/v1/subscriptions/{id}"),
            Some(api.token),
            &json!({"cancel_at_period_end": !canceled}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["cancel_at_period_end"], !canceled);
}

#[actix_web::test]
async fn receipts_to_one_address_are_bounded() {
    let smtp = SmtpServer::start(0, 0);
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = mail_settings(dir.path(), &smtp.url());
    settings.rate_limits.receipts_per_address = Limit::new(3, 3600);
    let app = spawn_with(settings, dir).await;
    let api = Api::of(&app);
    let cat = seed(api, "receipt-flood").await;
    for _ in 0..8 {
        buy(api, &cat.ebook_price, "inbox@example.com", None).await;
    }
    buy(api, &cat.ebook_price, "other@example.com", None).await;
    let all = smtp.wait_for(4).await;
    assert_eq!(to(&all, "other@example.com").len(), 1, "{all:#?}");
    // A while later: still three to the flooded inbox; the others wait, not dropped.
    sleep(Duration::from_secs(3)).await;
    let all = smtp.messages();
    assert_eq!(to(&all, "inbox@example.com").len(), 3, "{all:#?}");
    let waiting: Vec<MailMessage> = outbox(&app)
        .await
        .into_iter()
        .filter(|m| m.to == "inbox@example.com" && m.is_pending())
        .collect();
    assert_eq!(waiting.len(), 5, "{waiting:#?}");
    for m in &waiting {
        assert!(m.attempts.is_empty(), "{m:?}");
        assert!(m.next_attempt_at.is_some_and(|at| at > Utc::now()), "{m:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Part 5: a server that accepts and never answers

#[actix_web::test]
async fn a_tarpit_holds_one_conversation_for_the_timeout_and_nobody_elses_mail() {
    let smtp = SmtpServer::start(0, 0);
    // The first conversation is held; the others reach the real server.
    let tarpit = Tarpit::start(1, Some(smtp.port));
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = mail_settings(dir.path(), &tarpit.url());
    settings.email.smtp_timeout_secs = 8;
    settings.email.workers = 4;
    let app = spawn_with(settings, dir).await;
    let api = Api::of(&app);
    let cat = seed(api, "tarpit").await;
    let bought = Instant::now();
    for who in ["a@example.com", "b@example.com", "c@example.com"] {
        buy(api, &cat.ebook_price, who, None).await;
    }
    // Two arrive while the third is held, well before the timeout.
    let started = Instant::now();
    while smtp.messages().len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "one held conversation held the others: {:#?}",
            smtp.messages()
        );
        sleep(Duration::from_millis(100)).await;
    }
    // The held one is given up after the timeout (a transient failure) and sent again.
    let all = smtp.wait_for(3).await;
    assert!(bought.elapsed() >= Duration::from_secs(7), "{all:#?}");
    // The server has it; the sender records the attempt just after.
    let started = Instant::now();
    let failed: Vec<MailMessage> = loop {
        let failed: Vec<MailMessage> = outbox(&app)
            .await
            .into_iter()
            .filter(|m| m.attempts.iter().any(|a| !a.ok))
            .collect();
        if failed.len() != 1 || failed[0].state == MailState::Sent {
            break failed;
        }
        assert!(started.elapsed() < DEADLINE, "{failed:#?}");
        sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert!(
        failed[0].attempts[0].answer.contains("smtp_timeout_secs")
            || failed[0].attempts[0].answer.contains("timed out"),
        "{:?}",
        failed[0].attempts
    );
    assert_eq!(failed[0].state, MailState::Sent);
}

#[actix_web::test]
async fn a_stuck_sender_makes_readyz_answer_503_and_shows_in_the_metrics() {
    let tarpit = Tarpit::start(usize::MAX, None);
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = mail_settings(dir.path(), &tarpit.url());
    settings.email.smtp_timeout_secs = 60;
    settings.email.workers = 1;
    settings.email.stuck_after_secs = 2;
    settings.metrics.token = METRICS_TOKEN.into();
    let app = spawn_with(settings, dir).await;
    let api = Api::of(&app);
    ready_becomes(&app, 200).await;
    let text = metrics_text(&app).await;
    assert!(
        text.contains("tollgate_mail_sender_workers{state=\"running\"} 2"),
        "{text}"
    );
    assert!(
        text.contains("tollgate_mail_sender_workers{state=\"stuck\"} 0"),
        "{text}"
    );
    let cat = seed(api, "stuck").await;
    buy(api, &cat.ebook_price, "ada@example.com", None).await;
    // The only general worker sits in the tarpit's conversation.
    ready_becomes(&app, 503).await;
    let r = app.get("/readyz", None).await;
    assert!(
        r.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("E-mail sender")),
        "{}",
        r.body
    );
    let text = metrics_text(&app).await;
    assert!(
        text.contains("tollgate_mail_sender_workers{state=\"stuck\"} 1"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------
// Part 6: the mail files

#[actix_web::test]
async fn eml_files_are_0600_in_a_0700_directory() {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let data = dir.path().to_path_buf();
    // A mail directory left readable by everyone (an older build, a loose umask).
    let mail = data.join("mail");
    std::fs::create_dir_all(&mail).unwrap();
    std::fs::set_permissions(&mail, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut settings = Settings::for_tests(&data);
    settings.email.transport = EmailTransport::File;
    let app = spawn_with(settings, dir).await;
    let api = Api::of(&app);
    let cat = seed(api, "mail-modes").await;
    buy(api, &cat.ebook_price, "ada@example.com", None).await;
    let started = Instant::now();
    let file: PathBuf = loop {
        let found: Vec<PathBuf> = std::fs::read_dir(&mail)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        if let Some(f) = found
            .into_iter()
            .find(|p| p.extension().is_some_and(|x| x == "eml"))
        {
            break f;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "no .eml in {}",
            mail.display()
        );
        sleep(Duration::from_millis(100)).await;
    };
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600, "{}", file.display());
    assert_eq!(mode(&mail), 0o700);
    drop(app);
}
