//! Hardening, round 2: each attack performed against the real server, and the denials that
//! must still hold. One test per finding:
//!
//! 1. anonymous POSTs with fresh `Idempotency-Key`s store nothing; what a caller keeps is
//!    bounded and counted against its rate limit; a legitimate retry still replays;
//! 2. failures from other addresses never hold back the owner at their own address, while a
//!    brute force from one address still slows down;
//! 3. a loop over the consent page issues a bounded, throttled number of codes;
//! 4. deliveries ignore `HTTPS_PROXY` (a recording proxy sees nothing) and use
//!    `[webhooks] proxy` when set;
//! 5. every private IPv6 form is refused, and Tollgate itself by address and port;
//! 6. one e-mail normalisation for the limiter and the account lookup;
//! 7. forged CSRF pairs and cross-site form posts are refused on every page with a form;
//! 8. no secret is kept in a replay record or readable in a backup.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tollgate::config::{Limit, Settings};
use tollgate::domain::oauth2::{AuthorizationCode, OAUTH2_CODE_BY_GRANT};
use tollgate::idempotency::IdempotentResponse;

use crate::binary::Binary;
use crate::checkouts::{create_org, Api};
use crate::helpers::{bootstrap_token, client, spawn_app, spawn_app_with, TestApp};
use crate::oauth::{
    authorize_path, consent_form, obtain_code, post_consent, registered, signed_in,
    user_with_password, Browser, PASSWORD,
};

async fn app_with(tune: impl FnOnce(&mut Settings)) -> TestApp {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = Settings::for_tests(dir.path());
    tune(&mut settings);
    spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await
}

/// A raw request's status, headers and JSON body (no OpenAPI check: some of these answers
/// are refusals the attack provokes).
async fn raw(req: reqwest::RequestBuilder) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let resp = req.send().await.expect("sending the request");
    let status = resp.status();
    let headers = resp.headers().clone();
    let text = resp.text().await.expect("reading the body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, headers, body)
}

fn dir_size(path: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(path)
        .expect("reading a directory")
        .flatten()
    {
        let meta = entry.metadata().expect("metadata");
        total += if meta.is_dir() {
            dir_size(&entry.path())
        } else {
            meta.len()
        };
    }
    total
}

/// Whether `needle` occurs in any file under `path`.
fn found_in(path: &Path, needle: &[u8]) -> bool {
    std::fs::read_dir(path)
        .expect("reading a directory")
        .flatten()
        .any(|entry| {
            let p = entry.path();
            if p.is_dir() {
                found_in(&p, needle)
            } else {
                std::fs::read(&p)
                    .unwrap_or_default()
                    .windows(needle.len())
                    .any(|w| w == needle)
            }
        })
}

async fn stored_answers(app: &TestApp) -> usize {
    app.state
        .store
        .scan::<IdempotentResponse>()
        .await
        .unwrap()
        .len()
}

// ---------------------------------------------------------------------------------------
// 1. Idempotency-Key

#[actix_web::test]
async fn anonymous_posts_with_fresh_keys_store_nothing() {
    let app = spawn_app().await;
    // Settle the store (bootstrap, signing key...) before measuring.
    app.state.store.flush_blocking().unwrap();
    let before = dir_size(app.data_dir());
    let paths = [
        "/v1/no-such-route",
        "/v1/checkouts/custom/client/polar_c_x/confirm",
        "/v1/customers/",
    ];
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for round in 0..60 {
        let replies = join_all((0..50).map(|i| {
            let n = round * 50 + i;
            let path = paths[n % paths.len()];
            raw(app
                .client
                .post(app.url(path))
                .header("Idempotency-Key", format!("fresh-{n}"))
                .json(&json!({"customer_email": "a@example.com", "n": n})))
        }))
        .await;
        for (status, _, _) in replies {
            *statuses.entry(status.as_u16()).or_default() += 1;
        }
    }
    assert_eq!(statuses.values().sum::<usize>(), 3000);
    // Unknown routes 404, an unknown checkout 404, no credentials 401; beyond the caller's
    // quota of keys, 429. Nothing else.
    assert!(
        statuses.keys().all(|s| [401, 404, 429].contains(s)),
        "{statuses:?}"
    );
    assert!(statuses.contains_key(&429), "the key quota: {statuses:?}");
    app.state.store.flush_blocking().unwrap();
    let after = dir_size(app.data_dir());
    assert_eq!(stored_answers(&app).await, 0);
    assert!(
        after.saturating_sub(before) < 1024 * 1024,
        "the store grew by {} bytes",
        after - before
    );
}

#[actix_web::test]
async fn what_one_caller_keeps_is_bounded_and_counted_and_a_retry_still_replays() {
    let app = app_with(|s| {
        s.idempotency.max_keys_per_caller = 3;
        s.rate_limits.idempotency_keys_per_caller = Limit::new(8, 3600);
    })
    .await;
    let org = app.created_org_as(&app.token, "Seller", "keys").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let post = |key: String, email: String| {
        let app = &app;
        let org = org.clone();
        async move {
            raw(app
                .request(Method::POST, "/v1/customers/", Some(&app.token))
                .header("Idempotency-Key", key)
                .json(&json!({"email": email, "organization_id": org})))
            .await
        }
    };
    let mut first = None;
    for i in 0..3 {
        let (status, _, body) = post(format!("k{i}"), format!("c{i}@example.com")).await;
        assert_eq!(status, 201, "{body}");
        first.get_or_insert(body);
    }
    assert_eq!(stored_answers(&app).await, 3);
    // A fourth new key: this caller keeps three answers at most.
    let (status, headers, body) = post("k3".into(), "c3@example.com".into()).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"], "TooManyRequests");
    assert!(headers.contains_key("retry-after"));
    // Nothing ran: no fourth customer.
    let list = app.get("/v1/customers/", Some(&app.token)).await;
    assert_eq!(list.total_count(), 3);
    // The retry of a stored key still replays.
    let (status, headers, body) = post("k0".into(), "c0@example.com".into()).await;
    assert_eq!(status, 201);
    assert_eq!(headers["idempotency-replayed"], "true");
    assert_eq!(Some(body), first);
    // Without a key the caller is not held back.
    let r = app
        .post_json(
            "/v1/customers/",
            Some(&app.token),
            &json!({"email": "nokey@example.com", "organization_id": org}),
        )
        .await;
    r.expect(201);
    // Every POST with a key counted against the caller's rate limit (8 per hour): five so
    // far, three more, then 429 with the "idempotency" policy.
    for i in 0..3 {
        post(format!("k0{i}"), "x@example.com".into()).await;
    }
    let (status, headers, body) = post("k0".into(), "c0@example.com".into()).await;
    assert_eq!(status, 429, "{body}");
    assert!(
        headers["ratelimit-policy"]
            .to_str()
            .unwrap()
            .contains("\"idempotency\";q=8;w=3600"),
        "{headers:?}"
    );
    // Another caller has its own bound.
    let (_, other) = app
        .new_user_with_scopes(
            "other@example.com",
            &[
                tollgate::auth::Scope::OrganizationsWrite,
                tollgate::auth::Scope::CustomersWrite,
            ],
        )
        .await;
    let theirs = app.created_org_as(&other, "Other", "other-keys").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, _, body) = raw(app
        .request(Method::POST, "/v1/customers/", Some(&other))
        .header("Idempotency-Key", "k0")
        .json(&json!({"email": "c0@example.com", "organization_id": theirs})))
    .await;
    assert_eq!(status, 201, "{body}");
}

// ---------------------------------------------------------------------------------------
// 2 and 6. Sign-in: no lock-out, one normalisation

/// A browser whose requests come from `ip` (through a trusted proxy on loopback).
fn from(app: &TestApp, ip: &str) -> Browser {
    Browser::new(app).with_header("x-forwarded-for", ip)
}

async fn sign_in_from(app: &TestApp, b: &mut Browser, email: &str, password: &str) -> StatusCode {
    let page = b.get("/oauth2/login").await;
    let csrf = page.csrf();
    let page = b
        .post(
            "/oauth2/login",
            &[
                ("csrf_token", csrf.as_str()),
                ("email", email),
                ("password", password),
            ],
        )
        .await;
    let _ = app;
    page.status
}

#[actix_web::test]
async fn failures_from_elsewhere_never_hold_back_the_owner_at_their_own_address() {
    let app = app_with(|s| {
        s.server.trusted_proxies = vec!["127.0.0.0/8".into()];
        s.rate_limits.sign_in_backoff_base_ms = 30_000;
        s.rate_limits.sign_in_backoff_max_ms = 60_000;
        s.rate_limits.sign_in_per_account_total = Limit::new(1000, 60);
    })
    .await;
    let email = "victim@example.com";
    user_with_password(&app, email).await;
    // An attacker hammers the account with wrong passwords from rotating addresses (each
    // address's first try gets through, and is then delayed 30 s).
    let mut refused = 0;
    for i in 0..40 {
        let mut attacker = from(&app, &format!("203.0.113.{}", i % 20));
        match sign_in_from(&app, &mut attacker, email, "wrong password").await {
            StatusCode::UNAUTHORIZED => {}
            StatusCode::TOO_MANY_REQUESTS => refused += 1,
            other => panic!("the attacker got {other}"),
        }
    }
    assert_eq!(refused, 20, "each address's second try is delayed");
    // The owner, at their own address, signs in at once.
    let mut owner = from(&app, "198.51.100.7");
    assert_eq!(
        sign_in_from(&app, &mut owner, email, PASSWORD).await,
        StatusCode::SEE_OTHER
    );
    // A real brute force from one address still slows down: its second try waits.
    let mut brute = from(&app, "192.0.2.50");
    assert_eq!(
        sign_in_from(&app, &mut brute, email, "guess 1").await,
        StatusCode::UNAUTHORIZED
    );
    let page = {
        let csrf = brute.get("/oauth2/login").await.csrf();
        brute
            .post(
                "/oauth2/login",
                &[
                    ("csrf_token", csrf.as_str()),
                    ("email", email),
                    ("password", PASSWORD),
                ],
            )
            .await
    };
    assert_eq!(
        page.status,
        StatusCode::TOO_MANY_REQUESTS,
        "even the right password waits"
    );
    let retry: u64 = page.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((29..=30).contains(&retry), "{retry}");
}

#[actix_web::test]
async fn a_distributed_guess_meets_the_account_ceiling_but_the_owners_browser_does_not() {
    let app = app_with(|s| {
        s.server.trusted_proxies = vec!["127.0.0.0/8".into()];
        s.rate_limits.sign_in_backoff_base_ms = 0;
        s.rate_limits.sign_in_per_account_total = Limit::new(5, 3600);
    })
    .await;
    let email = "owner@example.com";
    user_with_password(&app, email).await;
    // The owner's browser has signed in before: it holds the account's device cookie.
    let mut owner = from(&app, "198.51.100.7");
    assert_eq!(
        sign_in_from(&app, &mut owner, email, PASSWORD).await,
        StatusCode::SEE_OTHER
    );
    assert!(owner.cookie_header().contains("tollgate_device="));
    for i in 0..4 {
        let mut attacker = from(&app, &format!("203.0.113.{i}"));
        assert_eq!(
            sign_in_from(&app, &mut attacker, email, "wrong").await,
            StatusCode::UNAUTHORIZED
        );
    }
    // The sixth attempt at the account from a browser it never saw: the ceiling.
    let mut attacker = from(&app, "203.0.113.99");
    let csrf = attacker.get("/oauth2/login").await.csrf();
    let page = attacker
        .post(
            "/oauth2/login",
            &[
                ("csrf_token", csrf.as_str()),
                ("email", email),
                ("password", "wrong"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(
        page.headers["ratelimit-policy"]
            .to_str()
            .unwrap()
            .contains("\"account_total\";q=5"),
        "{:?}",
        page.headers
    );
    // The owner's own browser is not held back by it.
    assert_eq!(
        sign_in_from(&app, &mut owner, email, PASSWORD).await,
        StatusCode::SEE_OTHER
    );
    // A device cookie of another account does not count for this one.
    let mut forged = from(&app, "198.51.100.8");
    let cookie = owner
        .cookie_header()
        .split("; ")
        .find_map(|c| c.strip_prefix("tollgate_device="))
        .unwrap()
        .to_string();
    forged.set_cookie("tollgate_device", &cookie);
    assert_eq!(
        sign_in_from(&app, &mut forged, "someone-else@example.com", "x").await,
        StatusCode::UNAUTHORIZED
    );
    forged.set_cookie("tollgate_device", "forged-value");
    assert_eq!(
        sign_in_from(&app, &mut forged, email, PASSWORD).await,
        StatusCode::TOO_MANY_REQUESTS
    );
}

#[actix_web::test]
async fn unicode_variants_of_one_address_are_one_account_everywhere() {
    let app = app_with(|s| {
        s.rate_limits.sign_in_backoff_base_ms = 30_000;
    })
    .await;
    user_with_password(&app, "kate@example.com").await;
    // A failure under the KELVIN SIGN spelling delays the ASCII one (same account, same
    // address)...
    let mut b = Browser::new(&app);
    assert_eq!(
        sign_in_from(&app, &mut b, "\u{212A}ate@example.com", "wrong").await,
        StatusCode::UNAUTHORIZED
    );
    let mut b = Browser::new(&app);
    assert_eq!(
        sign_in_from(&app, &mut b, "kate@example.com", PASSWORD).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    let mut b = Browser::new(&app);
    assert_eq!(
        sign_in_from(&app, &mut b, "KATE@EXAMPLE.COM", PASSWORD).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    // ...and a sign-up with it creates no second account.
    let mut b = Browser::new(&app);
    let csrf = b.get("/oauth2/signup").await.csrf();
    let page = b
        .post(
            "/oauth2/signup",
            &[
                ("csrf_token", csrf.as_str()),
                ("email", "\u{212A}ATE@example.com"),
                ("password", "another password"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    let users = app
        .state
        .store
        .scan::<tollgate::domain::user::User>()
        .await
        .unwrap();
    assert_eq!(
        users
            .iter()
            .filter(
                |u| tollgate_actors::domain::email::normalize_email(&u.value.email)
                    == "kate@example.com"
            )
            .count(),
        1
    );
}

// ---------------------------------------------------------------------------------------
// 3. Authorization codes

async fn codes_of(app: &TestApp, user: tollgate::domain::ids::UserId, client_id: &str) -> usize {
    app.state
        .store
        .index_range(
            OAUTH2_CODE_BY_GRANT,
            &AuthorizationCode::grant_tenant(user, client_id),
            &[],
            None,
        )
        .await
        .unwrap()
        .len()
}

#[actix_web::test]
async fn a_consent_loop_issues_a_throttled_and_bounded_number_of_codes() {
    let app = app_with(|s| {
        s.rate_limits.authorization_codes_per_user = Limit::new(25, 3600);
        s.oauth2.max_outstanding_codes = 5;
    })
    .await;
    let client = registered(&app, "client_secret_post", "openid").await;
    let client_id = client["client_id"].as_str().unwrap().to_string();
    let user = user_with_password(&app, "looper@example.com").await;
    let mut b = signed_in(&app, "looper@example.com").await;
    let first = obtain_code(&app, &mut b, &client_id, "openid", &[]).await;
    assert!(first.starts_with("polar_ac_"));
    // Consent given: every authorize now answers a code at once. Loop over it.
    let mut issued = 1;
    let mut refused = 0;
    for _ in 0..40 {
        let page = b.get(&authorize_path(&client_id, "openid", &[])).await;
        match page.status {
            StatusCode::FOUND => {
                assert!(page.location_param("code").is_some());
                issued += 1;
            }
            StatusCode::TOO_MANY_REQUESTS => {
                assert!(page.content_type.starts_with("text/html"));
                assert!(page.headers.contains_key("retry-after"));
                refused += 1;
            }
            other => panic!("{other}: {}", page.body),
        }
        assert!(codes_of(&app, user, &client_id).await <= 5);
    }
    assert_eq!((issued, refused), (25, 16));
    assert_eq!(codes_of(&app, user, &client_id).await, 5);
    // The oldest codes were dropped: the first no longer exchanges.
    let r = crate::oauth::token_request(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &first),
            ("redirect_uri", crate::oauth::REDIRECT),
            ("client_id", &client_id),
            ("client_secret", client["client_secret"].as_str().unwrap()),
        ],
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    // Another user is not throttled by this one.
    let mut other = signed_in(&app, "other@example.com").await;
    let page = other.get(&authorize_path(&client_id, "openid", &[])).await;
    assert_eq!(page.status, 200, "the consent page");
    let consent = post_consent(&mut other, &consent_form(&page, "allow", &[])).await;
    assert_eq!(consent.status, StatusCode::FOUND, "{}", consent.body);
}

// ---------------------------------------------------------------------------------------
// 4 and 5. Webhook targets

/// A TCP server that records the first line of every connection and answers 403.
fn recording_proxy() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binding");
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(100) {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = [0u8; 2048];
            let n = s.read(&mut buf).unwrap_or(0);
            let text = String::from_utf8_lossy(&buf[..n]);
            log.lock()
                .unwrap()
                .push(text.lines().next().unwrap_or("").to_string());
            let _ = s.write_all(
                b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    (port, seen)
}

/// Creates an endpoint for `product.created` at `url` and a product, and waits until the
/// delivery log has an attempt; returns its recorded answer.
async fn first_attempt(api: Api<'_>, org: &str, url: &str) -> String {
    let endpoint = api
        .posted(
            "/v1/webhooks/endpoints",
            &json!({"url": url, "format": "raw", "events": ["product.created"], "organization_id": org}),
            201,
        )
        .await;
    let id = endpoint["id"].as_str().unwrap().to_string();
    api.posted(
        "/v1/products/",
        &json!({"name": "Hooked", "organization_id": org,
                "prices": [{"type": "one_time", "amount_type": "free"}]}),
        201,
    )
    .await;
    let started = Instant::now();
    loop {
        let r = api
            .read(&format!("/v1/webhooks/deliveries?endpoint_id={id}"))
            .await;
        if let Some(d) = r.body["items"].as_array().and_then(|i| i.first()) {
            assert_eq!(d["succeeded"], false, "{d}");
            return d["response"].as_str().unwrap_or_default().to_string();
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no delivery attempt: {}",
            r.body
        );
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

#[actix_web::test]
async fn deliveries_ignore_environment_proxies() {
    let (port, seen) = recording_proxy();
    let proxy = format!("http://127.0.0.1:{port}");
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let server = Binary::start(
        root.path(),
        &data,
        "server.log",
        &[
            ("HTTPS_PROXY", proxy.as_str()),
            ("https_proxy", proxy.as_str()),
            ("HTTP_PROXY", proxy.as_str()),
            ("http_proxy", proxy.as_str()),
            ("ALL_PROXY", proxy.as_str()),
            ("all_proxy", proxy.as_str()),
            ("NO_PROXY", ""),
            ("no_proxy", ""),
        ],
        Duration::from_secs(60),
    )
    .await;
    let token = bootstrap_token(&data);
    let http = client();
    let api = Api {
        base: &server.address,
        client: &http,
        token: &token,
    };
    let org = create_org(api, "proxied").await;
    // A name that resolves nowhere here: before the fix reqwest handed it to the proxy
    // (`CONNECT db.internal.corp:5432`), skipping the address check.
    let answer = first_attempt(api, &org, "https://db.internal.corp:5432/").await;
    assert!(answer.starts_with("Could not connect"), "{answer}");
    assert!(
        seen.lock().unwrap().is_empty(),
        "the proxy saw {:?}",
        seen.lock().unwrap()
    );
}

#[actix_web::test]
async fn a_configured_proxy_is_used_and_refused_addresses_never_reach_it() {
    let (port, seen) = recording_proxy();
    let app = app_with(|s| {
        s.webhooks.proxy = format!("http://127.0.0.1:{port}");
        s.webhooks.retry_delays_secs = vec![3600.0];
        s.rate_limits.enabled = false;
    })
    .await;
    let api = Api::of(&app);
    let org = create_org(api, "explicit-proxy").await;
    let answer = first_attempt(api, &org, "https://hooks.example.test/in").await;
    assert!(answer.starts_with("Could not connect"), "{answer}");
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        ["CONNECT hooks.example.test:443 HTTP/1.1"]
    );
    // A literal private address never reaches the proxy either (refused when saved).
    let r = api
        .post(
            "/v1/webhooks/endpoints",
            Some(api.token),
            &json!({"url": "https://[::ffff:10.0.0.1]/", "format": "raw",
                    "events": ["product.created"], "organization_id": org}),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[actix_web::test]
async fn every_private_ipv6_form_is_refused() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "ipv6").await;
    for url in [
        "https://[::127.0.0.1]/",
        "https://[::7f00:1]/",
        "https://[2002:7f00:1::1]/",
        "https://[2002:a00:1::1]/",
        "https://[fec0::1]/",
        "https://[100::1]/",
        "https://[64:ff9b::7f00:1]/",
        "https://[64:ff9b::a9fe:a9fe]/",
        "https://[64:ff9b:1::808:808]/",
        "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
        "https://[::ffff:169.254.169.254]/",
        "https://[fd00:ec2::254]/",
        "https://[ff02::1]/",
        "https://[3fff::1]/",
        "https://192.0.0.170/",
        "https://192.88.99.1/",
    ] {
        let r = api
            .post(
                "/v1/webhooks/endpoints",
                Some(api.token),
                &json!({"url": url, "format": "raw", "events": ["product.created"],
                        "organization_id": org}),
            )
            .await;
        assert_eq!(r.status, 422, "{url}: {}", r.body);
        assert_eq!(r.body["detail"][0]["loc"], json!(["body", "url"]), "{url}");
    }
    // Public addresses, in either family, are fine.
    for url in [
        "https://[2a00:1450:4001::1]/",
        "https://[64:ff9b::808:808]/",
    ] {
        api.posted(
            "/v1/webhooks/endpoints",
            &json!({"url": url, "format": "raw", "events": ["product.created"],
                    "organization_id": org}),
            201,
        )
        .await;
    }
}

#[actix_web::test]
async fn tollgate_itself_is_refused_by_address_and_port_under_any_name() {
    let app = app_with(|s| {
        s.webhooks.allow_private_targets = true;
        s.webhooks.retry_delays_secs = vec![3600.0];
        s.rate_limits.enabled = false;
    })
    .await;
    let api = Api::of(&app);
    let org = create_org(api, "itself").await;
    let port = app.address.rsplit(':').next().unwrap().to_string();
    // This machine's host name (it resolves to one of its addresses), on Tollgate's port.
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost.localdomain".into());
    use std::net::ToSocketAddrs;
    let resolves = (host.as_str(), 1).to_socket_addrs().is_ok();
    // Literal forms are refused when saved...
    for url in [
        format!("http://127.0.0.2:{port}/"),
        format!("https://[::ffff:127.0.0.1]:{port}/"),
        format!("https://0.0.0.0:{port}/"),
    ] {
        let r = api
            .post(
                "/v1/webhooks/endpoints",
                Some(api.token),
                &json!({"url": url, "format": "raw", "events": ["product.created"],
                        "organization_id": org}),
            )
            .await;
        assert_eq!(r.status, 422, "{url}: {}", r.body);
    }
    // ...and a name is refused when it is resolved to connect.
    if resolves {
        let answer = first_attempt(api, &org, &format!("https://{host}:{port}/v1/x")).await;
        assert!(answer.contains("Tollgate itself"), "{host}: {answer}");
    }
}

// ---------------------------------------------------------------------------------------
// 7. CSRF

/// Posts `fields` to `path` with the CSRF token of `b`'s page `page`, adding `extra`
/// headers; returns the status.
async fn post_with(
    b: &mut Browser,
    page: &str,
    path: &str,
    fields: &[(&str, &str)],
    token: Option<&str>,
) -> StatusCode {
    let csrf = match token {
        Some(t) => t.to_string(),
        None => b.get(page).await.csrf(),
    };
    let mut form = vec![("csrf_token", csrf.as_str())];
    form.extend_from_slice(fields);
    b.post(path, &form).await.status
}

#[actix_web::test]
async fn forged_csrf_pairs_and_cross_site_posts_are_refused_on_every_form() {
    let app = spawn_app().await;
    user_with_password(&app, "csrf@example.com").await;
    let login = [("email", "csrf@example.com"), ("password", PASSWORD)];

    // An attacker-chosen pair (a planted cookie and a field to match) is refused.
    let mut b = Browser::new(&app);
    let chosen = "a".repeat(43);
    b.set_cookie("tollgate_csrf", &chosen);
    assert_eq!(
        post_with(
            &mut b,
            "/oauth2/login",
            "/oauth2/login",
            &login,
            Some(&chosen)
        )
        .await,
        StatusCode::FORBIDDEN
    );
    // So is a valid pair sent cross-site, by Origin or by Sec-Fetch-Site.
    for (name, value) in [
        ("origin", "https://evil.example"),
        ("origin", "null"),
        ("sec-fetch-site", "cross-site"),
        ("sec-fetch-site", "same-site"),
    ] {
        let mut b = Browser::new(&app).with_header(name, value);
        assert_eq!(
            post_with(&mut b, "/oauth2/login", "/oauth2/login", &login, None).await,
            StatusCode::FORBIDDEN,
            "{name}: {value}"
        );
        let mut b = Browser::new(&app).with_header(name, value);
        assert_eq!(
            post_with(
                &mut b,
                "/oauth2/signup",
                "/oauth2/signup",
                &[("email", "new@example.com"), ("password", PASSWORD)],
                None
            )
            .await,
            StatusCode::FORBIDDEN,
            "{name}: {value}"
        );
    }
    // A same-origin post with the server's token works (the browser's own Origin).
    let mut b = Browser::new(&app)
        .with_header("origin", &app.address)
        .with_header("sec-fetch-site", "same-origin");
    assert_eq!(
        post_with(&mut b, "/oauth2/login", "/oauth2/login", &login, None).await,
        StatusCode::SEE_OTHER
    );
    // The token is bound to the session: the one from before sign-in no longer works, and
    // another browser's token never does.
    let mut signed = signed_in(&app, "csrf@example.com").await;
    let before = Browser::new(&app).get("/oauth2/login").await.csrf();
    assert_eq!(
        post_with(
            &mut signed,
            "",
            "/settings/tokens",
            &[("comment", "x"), ("expires_in_days", "30")],
            Some(&before)
        )
        .await,
        StatusCode::FORBIDDEN
    );
    let mut other = signed_in(&app, "other-csrf@example.com").await;
    let theirs = other.get("/settings/tokens").await.csrf();
    assert_eq!(
        post_with(
            &mut signed,
            "",
            "/settings/tokens",
            &[("comment", "x")],
            Some(&theirs)
        )
        .await,
        StatusCode::FORBIDDEN
    );
    // Tokens page, dashboard, consent and sign-out: cross-site refused, same-site fine.
    let client = registered(&app, "client_secret_post", "openid").await;
    let client_id = client["client_id"].as_str().unwrap().to_string();
    for (name, value) in [
        ("origin", "https://evil.example"),
        ("sec-fetch-site", "cross-site"),
    ] {
        let mut b = signed_in(&app, "csrf@example.com").await;
        let token = b.get("/settings/tokens").await.csrf();
        let mut evil = b.with_header(name, value);
        assert_eq!(
            post_with(
                &mut evil,
                "",
                "/settings/tokens",
                &[("comment", "x")],
                Some(&token)
            )
            .await,
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            post_with(
                &mut evil,
                "",
                "/dashboard/organizations/new",
                &[("name", "Evil"), ("slug", "evil")],
                Some(&token)
            )
            .await,
            StatusCode::FORBIDDEN
        );
        let mut b = signed_in(&app, "csrf@example.com").await;
        let page = b.get(&authorize_path(&client_id, "openid", &[])).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let form = consent_form(&page, "allow", &[]);
        let mut evil = b.with_header(name, value);
        let consent = post_consent(&mut evil, &form).await;
        assert_eq!(consent.status, StatusCode::FORBIDDEN, "{}", consent.body);
        assert_eq!(
            post_with(&mut evil, "", "/oauth2/logout", &[], Some(&token)).await,
            StatusCode::FORBIDDEN
        );
    }
    let mut b = signed_in(&app, "csrf@example.com").await;
    let status = post_with(
        &mut b,
        "/dashboard/organizations/new",
        "/dashboard/organizations/new",
        &[("name", "Mine"), ("slug", "mine")],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    // The hosted checkout's API takes JSON only: a cross-site form post is refused before
    // anything happens.
    let (status, _, body) = raw(app
        .client
        .post(app.url("/v1/checkouts/custom/client/polar_c_x/confirm"))
        .header("origin", "https://evil.example")
        .header("sec-fetch-site", "cross-site")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("customer_email=a%40example.com"))
    .await;
    assert!(
        status.is_client_error() && status != 404,
        "{status}: {body}"
    );
}

// ---------------------------------------------------------------------------------------
// 8. Secrets at rest

#[actix_web::test]
async fn no_secret_is_kept_in_a_replay_record_or_readable_in_a_backup() {
    let app = spawn_app().await;
    let b = signed_in(&app, "secrets@example.com").await;
    let pat = json!({"comment": "ci", "scopes": ["organizations:read"]});
    // With a key: refused before anything runs, with a clear 422.
    let (status, _, body) = raw(b
        .request(Method::POST, "/v1/personal_access_tokens/")
        .header("Idempotency-Key", "pat-1")
        .json(&pat))
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["detail"][0]["type"], "idempotency_key_not_allowed");
    assert_eq!(
        body["detail"][0]["loc"],
        json!(["header", "idempotency-key"])
    );
    let (status, _, body) = raw(b
        .request(Method::POST, "/v1/oauth2/register")
        .header("Idempotency-Key", "client-1")
        .json(&json!({"client_name": "X", "redirect_uris": ["http://localhost:8000/cb"]})))
    .await;
    assert_eq!(status, 422, "{body}");
    let (status, _, body) = raw(app
        .client
        .post(app.url("/v1/oauth2/token"))
        .header("Idempotency-Key", "exchange-1")
        .form(&[("grant_type", "authorization_code"), ("code", "polar_ac_x")]))
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(stored_answers(&app).await, 0);
    // Without it, the secrets are created (and shown once).
    let (status, _, body) = raw(b
        .request(Method::POST, "/v1/personal_access_tokens/")
        .json(&pat))
    .await;
    assert_eq!(status, 201, "{body}");
    let token = body["token"].as_str().unwrap().to_string();
    let client = registered(&app, "client_secret_post", "openid").await;
    let client_secret = client["client_secret"].as_str().unwrap().to_string();
    let registration = client["registration_access_token"]
        .as_str()
        .unwrap()
        .to_string();

    // Neither the data directory nor a backup holds any of them.
    app.state.store.flush_blocking().unwrap();
    let backups = tempfile::tempdir().unwrap();
    tollgate::admin::backup_to(&app.address, &app.token, backups.path())
        .await
        .unwrap();
    for secret in [&token, &client_secret, &registration] {
        assert!(
            !found_in(app.data_dir(), secret.as_bytes()),
            "{secret} in the data dir"
        );
        assert!(
            !found_in(backups.path(), secret.as_bytes()),
            "{secret} in the backup"
        );
    }
    // The backup is readable by its owner only.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(backups.path().join(tollgate::admin::SNAPSHOT_FILE))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
}
