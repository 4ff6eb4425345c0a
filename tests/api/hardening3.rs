//! Issue 44, "Hardening, round 3", parts 3 and 6: each test is an attack that worked
//! before.
//!
//! - 3: a stranger's wrong portal codes, typed from another client address, leave the
//!   buyer's code alive (the stranger's own client is still stopped), and a stranger
//!   asking for codes (or key resends) for the buyer's address never makes the buyer's
//!   own request 429;
//! - 6: a code request and a key resend answer no sooner than
//!   `rate_limits.mail_request_min_answer_ms`, known address or not.

use std::time::{Duration, Instant};

use serde_json::json;
use tollgate::config::Settings;
use tollgate::domain::mail::{MailKind, MailMessage};

use crate::benefit_grants::{buy, shop};
use crate::checkouts::store_values;
use crate::helpers::{spawn_app_with, TestApp};
use crate::oauth::Browser;
use crate::portal_pages::{ask_code, buyer, codes_for, portal_shop, roomy, status, type_code};

const REQUEST: &str = "/v1/customer-portal/customer-session/request";
const RESEND: &str = "/v1/customer-portal/license-keys/resend";

async fn app_with(tune: impl FnOnce(&mut Settings)) -> TestApp {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = Settings::for_tests(dir.path());
    tune(&mut settings);
    spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await
}

/// Requests reach the app from `127.0.0.1`, a trusted proxy: `X-Forwarded-For` names the
/// client.
fn behind_proxy(s: &mut Settings) {
    s.server.trusted_proxies = vec!["127.0.0.0/8".into()];
}

/// A browser whose requests come from the client address `ip`.
fn from(app: &TestApp, ip: &str) -> Browser {
    Browser::new(app).with_header("x-forwarded-for", ip)
}

// ---------------------------------------------------------------------------------------
// 3. A stranger locks a buyer out of the portal

#[actix_web::test]
async fn a_strangers_wrong_codes_leave_the_buyers_code_alive_and_stop_the_stranger() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = roomy(dir.path());
    behind_proxy(&mut settings);
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let shop = portal_shop(&app, "h3-guesses").await;
    let ada = buyer(&app, &shop, "ada@guesses.example").await;
    let slug = &shop.slug;

    // The buyer asks for a code at home.
    let mut home = from(&app, "198.51.100.7");
    let (code_form, code) = ask_code(&app, &mut home, slug, &ada.email).await;
    let code = code.expect("a code was sent");

    // A stranger types wrong codes for the buyer's address, far more than five.
    let mut stranger = from(&app, "203.0.113.9");
    let page = stranger.get(&format!("/portal/{slug}")).await;
    for i in 0..8 {
        let wrong = format!("WRONG{i}");
        status(
            &type_code(&mut stranger, slug, &page, &ada.email, &wrong).await,
            401,
        );
    }
    // The stranger is stopped: even the right code no longer works from there...
    status(
        &type_code(&mut stranger, slug, &page, &ada.email, &code).await,
        401,
    );
    // ...while the buyer signs in with it.
    let ok = type_code(&mut home, slug, &code_form, &ada.email, &code).await;
    status(&ok, 303);
    assert_eq!(ok.location, format!("/portal/{slug}/overview"));

    // The same client typing five wrong codes for its own address wears its code out
    // from there, as before; a new code from that client works again.
    let mut home = from(&app, "198.51.100.7");
    let (code_form, code) = ask_code(&app, &mut home, slug, &ada.email).await;
    for _ in 0..5 {
        status(
            &type_code(&mut home, slug, &code_form, &ada.email, "ZZZZZZ").await,
            401,
        );
    }
    status(
        &type_code(&mut home, slug, &code_form, &ada.email, &code.unwrap()).await,
        401,
    );
    let (code_form, code) = ask_code(&app, &mut home, slug, &ada.email).await;
    status(
        &type_code(&mut home, slug, &code_form, &ada.email, &code.unwrap()).await,
        303,
    );
}

/// Asks for a code or a key resend (`path`) for `email` of `org` from the client address
/// `ip`; the answer's status.
async fn ask_from(app: &TestApp, path: &str, ip: &str, email: &str, org: &str) -> u16 {
    app.request(reqwest::Method::POST, path, None)
        .header("x-forwarded-for", ip)
        .json(&json!({"email": email, "organization_id": org}))
        .send()
        .await
        .expect("sending the request")
        .status()
        .as_u16()
}

#[actix_web::test]
async fn a_stranger_asking_for_codes_never_spends_the_buyers_own_quota() {
    // The default limits: five codes per address and client an hour.
    let app = app_with(behind_proxy).await;
    let shop = shop(&app, "h3-quota").await;
    let email = "ada@quota.example";
    buy(&app, &shop.one_time, email).await;
    let ask = |ip: &'static str| ask_from(&app, REQUEST, ip, email, &shop.org);
    // The stranger asks until it is refused.
    let mut answers = Vec::new();
    for _ in 0..7 {
        answers.push(ask("203.0.113.9").await);
    }
    assert_eq!(answers, [202, 202, 202, 202, 202, 429, 429]);
    let sent = codes_for(&app, email).await.len();
    assert_eq!(sent, 5);
    // The buyer, at their own address, still gets a code.
    assert_eq!(ask("198.51.100.7").await, 202);
    assert_eq!(codes_for(&app, email).await.len(), sent + 1);
}

#[actix_web::test]
async fn a_stranger_asking_for_key_resends_never_spends_the_buyers_own_quota() {
    // The default limits: three resends per address and client an hour.
    let app = app_with(behind_proxy).await;
    let shop = shop(&app, "h3-resend").await;
    let email = "ada@resend.example";
    buy(&app, &shop.one_time, email).await;
    let ask = |ip: &'static str| ask_from(&app, RESEND, ip, email, &shop.org);
    let resent = || async {
        store_values::<MailMessage>(&app.state.store)
            .await
            .into_iter()
            .filter(|m| m.kind == MailKind::KeysResent && m.to.eq_ignore_ascii_case(email))
            .count()
    };
    let mut answers = Vec::new();
    for _ in 0..5 {
        answers.push(ask("203.0.113.9").await);
    }
    assert_eq!(answers, [202, 202, 202, 429, 429]);
    assert_eq!(resent().await, 3);
    // The buyer, at their own address, still gets their keys.
    assert_eq!(ask("198.51.100.7").await, 202);
    assert_eq!(resent().await, 4);
}

// ---------------------------------------------------------------------------------------
// 6. Who bought, told by the timing of a code request or a key resend

#[actix_web::test]
async fn a_code_request_and_a_key_resend_take_the_floor_known_address_or_not() {
    // A floor far above what either path costs here, so that both answer at it.
    let floor = Duration::from_millis(1500);
    let app = app_with(|s| {
        s.rate_limits.mail_request_min_answer_ms = 1500;
        s.rate_limits.portal_codes_per_ip = tollgate::config::Limit::new(100, 3600);
        s.rate_limits.key_resends_per_ip = tollgate::config::Limit::new(100, 3600);
    })
    .await;
    let shop = shop(&app, "h3-timing").await;
    buy(&app, &shop.one_time, "ada@timing.example").await;
    for path in [REQUEST, RESEND] {
        for email in ["ada@timing.example", "nobody@timing.example"] {
            let started = Instant::now();
            let r = app
                .post_json(
                    path,
                    None,
                    &json!({"email": email, "organization_id": shop.org}),
                )
                .await;
            let took = started.elapsed();
            r.expect(202);
            assert!(took >= floor, "{path} for {email} answered in {took:?}");
        }
    }
    // The known address was sent its code (the floor delays the answer, not the work).
    assert_eq!(codes_for(&app, "ada@timing.example").await.len(), 1);
}

// ---------------------------------------------------------------------------------------
// 6. Tokens answered to a POST with an Idempotency-Key, kept in plain text

/// A POST of `body` to `path` with `Idempotency-Key: key` from the client `ip`: status,
/// whether it was a replay, and the JSON body.
async fn post_keyed(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    key: &str,
    ip: &str,
    body: &serde_json::Value,
) -> (u16, bool, serde_json::Value) {
    let resp = app
        .request(reqwest::Method::POST, path, token)
        .header("Idempotency-Key", key)
        .header("x-forwarded-for", ip)
        .json(body)
        .send()
        .await
        .expect("sending the request");
    let status = resp.status().as_u16();
    let replayed = resp.headers().contains_key("idempotency-replayed");
    let body = resp.json().await.unwrap_or(serde_json::Value::Null);
    (status, replayed, body)
}

/// Every file under `dir`, read whole.
fn files_under(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.push((path, bytes));
            }
        }
    }
    out
}

#[actix_web::test]
async fn tokens_answered_to_an_idempotent_post_are_sealed_at_rest_and_replayed_to_their_client_only(
) {
    let app = app_with(behind_proxy).await;
    let shop = shop(&app, "h3-sealed").await;
    let email = "ada@sealed.example";
    let bought = buy(&app, &shop.one_time, email).await;
    let admin = Some(app.token.as_str());
    let here = "198.51.100.7";

    // An organization access token, a customer session, a portal sign-in: each twice with
    // its key, the second a replay of the same token.
    let oat_body = json!({"organization_id": shop.org, "comment": "CI", "expires_in": "P30D",
                          "scopes": ["products:read"]});
    let session_body = json!({"customer_id": bought.customer});
    let mut tokens = Vec::new();
    for (path, key, body, want) in [
        ("/v1/organization-access-tokens/", "oat-1", &oat_body, 201),
        ("/v1/customer-sessions/", "cst-1", &session_body, 201),
    ] {
        let (status, replayed, first) = post_keyed(&app, path, admin, key, here, body).await;
        assert_eq!((status, replayed), (want, false), "{path}: {first}");
        let (status, replayed, again) = post_keyed(&app, path, admin, key, here, body).await;
        assert_eq!((status, replayed), (want, true), "{path}: {again}");
        assert_eq!(again["token"], first["token"], "{path}");
        tokens.push(first["token"].as_str().unwrap().to_string());
    }
    assert!(tokens[0].starts_with("polar_oat_") && tokens[1].starts_with("polar_cst_"));

    let ask = app
        .request(reqwest::Method::POST, REQUEST, None)
        .header("x-forwarded-for", here)
        .json(&json!({"email": email, "organization_id": shop.org}))
        .send()
        .await
        .unwrap();
    assert_eq!(ask.status().as_u16(), 202);
    let code = codes_for(&app, email).await.into_iter().next().unwrap();
    let auth = "/v1/customer-portal/customer-session/authenticate";
    let body = json!({ "code": code });
    let (status, _, first) = post_keyed(&app, auth, None, "auth-1", here, &body).await;
    assert_eq!(status, 200, "{first}");
    let (status, replayed, again) = post_keyed(&app, auth, None, "auth-1", here, &body).await;
    assert_eq!((status, replayed), (200, true));
    assert_eq!(again["token"], first["token"]);
    tokens.push(first["token"].as_str().unwrap().to_string());
    // Another client with the same key and code is not handed the buyer's session.
    let (status, _, other) = post_keyed(&app, auth, None, "auth-1", "203.0.113.9", &body).await;
    assert_eq!(status, 401, "{other}");
    assert!(other.get("token").is_none());

    // Nothing under the data directory holds any of the tokens (nor its secret part).
    app.state.store.flush_blocking().unwrap();
    for (path, bytes) in files_under(app.data_dir()) {
        for token in &tokens {
            let secret = &token.as_bytes()[token.len() - 24..];
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret),
                "{} holds {token}",
                path.display()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// 6. A key import above 64 KiB with an Idempotency-Key

#[actix_web::test]
async fn a_key_import_above_64_kib_runs_and_replays_with_an_idempotency_key() {
    let app = crate::helpers::spawn_app().await;
    let sale = crate::versions::sell_key(&app, "h3-import").await;
    let keys: Vec<serde_json::Value> = (0..1000)
        .map(|i| {
            json!({"key": format!("OLD-{i:05}-ABCDEFGHIJKLMNOP"),
                        "customer_email": format!("buyer{}@import.example", i / 10)})
        })
        .collect();
    let body = json!({"organization_id": sale.org, "benefit_id": sale.benefit, "keys": keys});
    assert!(body.to_string().len() > 64 * 1024);
    let admin = Some(app.token.as_str());
    let path = "/v1/license-keys/import";
    let (status, replayed, first) =
        post_keyed(&app, path, admin, "import-1", "127.0.0.1", &body).await;
    assert_eq!((status, replayed), (200, false), "{first}");
    assert_eq!(first["created"], 1000);
    let (status, replayed, again) =
        post_keyed(&app, path, admin, "import-1", "127.0.0.1", &body).await;
    assert_eq!((status, replayed), (200, true), "{again}");
    assert_eq!(again, first, "the very same answer");
}

// ---------------------------------------------------------------------------------------
// 6. Files holding secrets created readable by others under umask 022

/// Runs the real binary with `args` under umask 022 (through `sh`), as a service started by
/// hand would be.
fn under_umask_022(root: &std::path::Path, data: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg("umask 022 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_tollgate"))
        .current_dir(root)
        .env_remove("RUST_LOG")
        .env("TOLLGATE__STORAGE__DATA_DIR", data)
        .env("TOLLGATE__SERVER__WORKERS", "1")
        .env("TOLLGATE__LOG__LEVEL", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    cmd
}

/// Kills the server when the test ends, however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[actix_web::test]
async fn the_data_directory_and_backups_are_owner_only_under_umask_022() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address = format!("http://127.0.0.1:{port}");
    let _server = Killed(
        under_umask_022(root.path(), &data)
            .env("TOLLGATE__SERVER__BIND", format!("127.0.0.1:{port}"))
            .arg("serve")
            .spawn()
            .expect("starting the server"),
    );
    let client = crate::helpers::client();
    let started = Instant::now();
    loop {
        let ready = client
            .get(format!("{address}/readyz"))
            .timeout(Duration::from_secs(2))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ready {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "never ready");
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    // Something written, then a backup taken with the CLI (also under umask 022).
    let token = crate::helpers::bootstrap_token(&data);
    let r = client
        .post(format!("{address}/v1/organizations/"))
        .bearer_auth(&token)
        .json(&json!({"name": "Modes", "slug": "modes"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let backup = root.path().join("backup");
    let mut cli = under_umask_022(root.path(), &data)
        .args([
            "backup",
            "--to",
            backup.to_str().unwrap(),
            "--url",
            &address,
        ])
        .spawn()
        .expect("starting the backup");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = cli.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = cli.kill();
            panic!("the backup hung");
        }
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success());

    let mut seen = 0;
    for top in [&data, &backup] {
        let mut todo = vec![top.clone()];
        while let Some(dir) = todo.pop() {
            let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{} is {mode:o}", dir.display());
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    todo.push(path);
                } else {
                    let mode = meta.permissions().mode();
                    assert_eq!(mode & 0o077, 0, "{} is {mode:o}", path.display());
                    seen += 1;
                }
            }
        }
    }
    // The store's `db` and `conf`, the bootstrap token, the snapshot at least.
    assert!(seen >= 4, "{seen} files");
    assert!(data.join("db").exists() && data.join("conf").exists());
}
