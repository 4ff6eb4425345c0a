//! The HTTP layer under abuse: every error in the JSON shape (422 listing every field, 413
//! naming the real limit), CORS, and slow or greedy clients (head and body deadlines, idle
//! keep-alive, a cap on connections per address), tested over raw TCP where it matters.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use reqwest::header::CONTENT_TYPE;
use reqwest::Method;
use serde_json::{json, Value};
use tollgate::config::Settings;

use crate::helpers::{spawn_app, spawn_app_with, TestApp};

async fn spawn_with(change: impl FnOnce(&mut Settings)) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    change(&mut settings);
    spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await
}

fn addr(app: &TestApp) -> String {
    app.address.trim_start_matches("http://").to_string()
}

fn connect(app: &TestApp) -> TcpStream {
    let stream = TcpStream::connect(addr(app)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

/// Reads until the server closes the connection (or the read timeout); returns the text
/// and whether the server closed it.
fn read_until_closed(stream: &mut TcpStream) -> (String, bool) {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = loop {
        match stream.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
    };
    (String::from_utf8_lossy(&raw).to_string(), closed)
}

/// Reads one response with a `content-length` from a kept-alive connection.
fn read_one_response(stream: &mut TcpStream) -> String {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&raw).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= len {
                return text;
            }
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return text,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
}

fn status_of(text: &str) -> u16 {
    text.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"))
}

fn json_body(text: &str) -> Value {
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    let start = body
        .find('{')
        .unwrap_or_else(|| panic!("no JSON in {text:?}"));
    let end = body.rfind('}').unwrap();
    serde_json::from_str(&body[start..=end]).unwrap()
}

// ---- 422 lists every field, 413 names the limit -------------------------------------

#[actix_web::test]
async fn an_empty_organization_lists_both_missing_fields() {
    let app = spawn_app().await;
    let r = app
        .post_json("/v1/organizations/", Some(&app.token), &json!({}))
        .await;
    let items = r.expect_validation();
    let locs: Vec<Value> = items.iter().map(|i| i["loc"].clone()).collect();
    assert_eq!(
        locs,
        vec![json!(["body", "name"]), json!(["body", "slug"])],
        "{}",
        r.body
    );
    assert!(items.iter().all(|i| i["type"] == "missing"), "{}", r.body);
    assert_eq!(app.list_orgs(&app.token, "").await.total_count(), 0);
}

#[actix_web::test]
async fn type_errors_and_missing_fields_come_in_one_422() {
    let app = spawn_app().await;
    let r = app
        .post_json(
            "/v1/organizations/",
            Some(&app.token),
            &json!({"name": 5, "avatar_url": 7}),
        )
        .await;
    let items = r.expect_validation();
    let find = |loc: Value| {
        items
            .iter()
            .find(|i| i["loc"] == loc)
            .unwrap_or_else(|| panic!("{loc} not in {}", r.body))
            .clone()
    };
    assert_eq!(find(json!(["body", "name"]))["type"], "string_type");
    assert_eq!(find(json!(["body", "name"]))["input"], 5);
    assert_eq!(find(json!(["body", "slug"]))["type"], "missing");
    assert_eq!(find(json!(["body", "avatar_url"]))["type"], "string_type");
    assert_eq!(items.len(), 3, "{}", r.body);

    // Another body type: a product with nothing in it lists each required field.
    let r = app
        .post_json("/v1/products/", Some(&app.token), &json!({}))
        .await;
    let items = r.expect_validation();
    assert!(items.len() >= 2, "{}", r.body);
    assert!(items.iter().all(|i| i["type"] == "missing"), "{}", r.body);
    // And a valid body still works.
    app.create_org("Acme", "acme").await.expect(201);
}

#[actix_web::test]
async fn an_oversized_form_names_the_real_limit() {
    let app = spawn_with(|s| s.server.body_limit_bytes = 1000).await;
    let r = app
        .send(
            app.request(Method::POST, "/v1/oauth2/token", None)
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(format!(
                    "grant_type=client_credentials&x={}",
                    "a".repeat(5000)
                )),
        )
        .await;
    assert_eq!(r.expect_error(413), "PayloadTooLarge");
    let detail = r.body["detail"].as_str().unwrap();
    assert!(detail.contains("1000 bytes"), "{detail}");
    // A JSON body says the same.
    let r = app
        .post_json(
            "/v1/organizations/",
            Some(&app.token),
            &json!({"name": "x".repeat(2000), "slug": "big"}),
        )
        .await;
    assert_eq!(r.expect_error(413), "PayloadTooLarge");
    assert!(r.body["detail"].as_str().unwrap().contains("1000 bytes"));
}

// ---- CORS -----------------------------------------------------------------------------

async fn preflight(app: &TestApp, path: &str, origin: &str) -> reqwest::Response {
    app.client
        .request(Method::OPTIONS, app.url(path))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "authorization, content-type",
        )
        .send()
        .await
        .unwrap()
}

fn header(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_string())
}

#[actix_web::test]
async fn public_endpoints_allow_any_origin() {
    let app = spawn_app().await;
    for path in [
        "/v1/customer-portal/license-keys/validate",
        "/v1/customer-portal/license-keys/activate",
        "/v1/customer-portal/license-keys/deactivate",
        "/v1/oauth2/token",
        "/v1/oauth2/introspect",
        "/v1/oauth2/revoke",
        "/v1/oauth2/userinfo",
        "/.well-known/jwks.json",
        "/.well-known/openid-configuration",
    ] {
        let r = preflight(&app, path, "https://any.example").await;
        assert_eq!(r.status(), 204, "{path}");
        assert_eq!(
            header(&r, "access-control-allow-origin").as_deref(),
            Some("*")
        );
        let methods = header(&r, "access-control-allow-methods").unwrap();
        assert!(
            methods.contains("POST") && methods.contains("GET"),
            "{methods}"
        );
        let headers = header(&r, "access-control-allow-headers")
            .unwrap()
            .to_ascii_lowercase();
        assert!(
            headers.contains("authorization") && headers.contains("content-type"),
            "{headers}"
        );
        assert_eq!(header(&r, "access-control-allow-credentials"), None);
    }
    // The actual request carries the header too, even when it is an error.
    let r = app
        .send(
            app.request(Method::GET, "/.well-known/openid-configuration", None)
                .header("Origin", "https://any.example"),
        )
        .await;
    r.expect(200);
    assert_eq!(r.header("access-control-allow-origin"), "*");
    let r = app
        .send(
            app.request(
                Method::POST,
                "/v1/customer-portal/license-keys/validate",
                None,
            )
            .header("Origin", "https://any.example")
            .json(&json!({})),
        )
        .await;
    r.expect_validation();
    assert_eq!(r.header("access-control-allow-origin"), "*");
}

#[actix_web::test]
async fn the_rest_allows_only_configured_origins() {
    let app = spawn_with(|s| s.cors.allowed_origins = vec!["https://app.example.com".into()]).await;
    // Allowed: echoed, with Vary: Origin, no credentials.
    let r = preflight(&app, "/v1/organizations/", "https://app.example.com").await;
    assert_eq!(r.status(), 204);
    assert_eq!(
        header(&r, "access-control-allow-origin").as_deref(),
        Some("https://app.example.com")
    );
    assert!(header(&r, "vary").unwrap().contains("Origin"));
    assert_eq!(header(&r, "access-control-allow-credentials"), None);
    let r = app
        .send(
            app.request(Method::GET, "/v1/organizations/", Some(&app.token))
                .header("Origin", "https://app.example.com"),
        )
        .await;
    r.expect(200);
    assert_eq!(
        r.header("access-control-allow-origin"),
        "https://app.example.com"
    );
    // Anyone else: no CORS header at all; the preflight is not answered 204.
    for origin in [
        "https://evil.example",
        "https://app.example.com.evil.example",
        "null",
    ] {
        let r = preflight(&app, "/v1/organizations/", origin).await;
        assert_ne!(r.status(), 204, "{origin}");
        assert_eq!(header(&r, "access-control-allow-origin"), None, "{origin}");
        let r = app
            .send(
                app.request(Method::GET, "/v1/organizations/", Some(&app.token))
                    .header("Origin", origin),
            )
            .await;
        r.expect(200);
        assert!(r.headers.get("access-control-allow-origin").is_none());
    }
}

#[actix_web::test]
async fn by_default_no_origin_may_call_the_rest() {
    let app = spawn_app().await;
    let r = preflight(&app, "/v1/products/", "http://localhost:3000").await;
    assert_eq!(r.status(), 405);
    assert_eq!(header(&r, "access-control-allow-origin"), None);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"], "MethodNotAllowed");
}

// ---- slow and greedy clients ----------------------------------------------------------

#[actix_web::test]
async fn a_body_trickled_a_byte_a_second_gets_408_and_is_closed() {
    let app = spawn_with(|s| s.server.body_timeout_secs = 2).await;
    let mut stream = connect(&app);
    let token = app.token.clone();
    let head = format!(
        "POST /v1/organizations/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 40\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        for b in br#"{"name": "Slow", "slug": "slow", "x": 1}"#.iter().take(30) {
            if writer.write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    let (text, closed) =
        actix_web::rt::task::spawn_blocking(move || read_until_closed(&mut stream))
            .await
            .unwrap();
    assert_eq!(status_of(&text), 408, "{text}");
    assert!(closed, "the connection stays open: {text}");
    let v = json_body(&text);
    assert_eq!(v["error"], "RequestTimeout", "{v}");
    assert!(v["detail"].as_str().unwrap().contains("2 seconds"), "{v}");
    let _ = trickle.join();
    assert_eq!(app.list_orgs(&app.token, "").await.total_count(), 0);
    // A body that arrives in time is fine.
    app.create_org("Fast", "fast").await.expect(201);
}

#[actix_web::test]
async fn a_head_trickled_a_byte_a_second_is_cut_off() {
    let app = spawn_with(|s| s.server.request_head_timeout_ms = 1500).await;
    let mut stream = connect(&app);
    let mut writer = stream.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        for b in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ".iter() {
            if writer.write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    let (text, closed) =
        actix_web::rt::task::spawn_blocking(move || read_until_closed(&mut stream))
            .await
            .unwrap();
    assert!(closed, "the connection stays open: {text}");
    // actix-http answers this itself, before the application sees a request; the
    // connection wrapper gives it the JSON error body.
    assert_eq!(status_of(&text), 408, "{text}");
    assert_eq!(json_body(&text)["error"], "RequestTimeout", "{text}");
    assert!(
        text.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{text}"
    );
    let _ = trickle.join();
}

/// Sends `request` on a fresh connection and reads until the server closes it.
async fn raw_exchange(app: &TestApp, request: Vec<u8>) -> String {
    let mut stream = connect(app);
    actix_web::rt::task::spawn_blocking(move || {
        // The server may answer and close before it has read everything.
        let _ = stream.write_all(&request);
        let (text, closed) = read_until_closed(&mut stream);
        assert!(closed, "the connection stays open: {text}");
        text
    })
    .await
    .unwrap()
}

#[actix_web::test]
async fn errors_the_http_layer_answers_itself_are_json_too() {
    let app = spawn_app().await;
    // Over 96 headers, and a head over 128 KiB: 431.
    let mut many = b"GET /healthz HTTP/1.1\r\nHost: x\r\n".to_vec();
    for i in 0..120 {
        many.extend_from_slice(format!("X-H{i}: v\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    let mut long = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: ".to_vec();
    long.extend(std::iter::repeat_n(b'a', 140 * 1024));
    long.extend_from_slice(b"\r\n\r\n");
    for request in [many, long] {
        let text = raw_exchange(&app, request).await;
        assert_eq!(status_of(&text), 431, "{text}");
        let body = json_body(&text);
        assert_eq!(body["error"], "RequestHeaderFieldsTooLarge", "{text}");
        assert!(
            body["detail"].as_str().unwrap().contains("96 headers"),
            "{text}"
        );
    }
    // A head that is not HTTP: 400.
    let text = raw_exchange(
        &app,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n".to_vec(),
    )
    .await;
    assert_eq!(status_of(&text), 400, "{text}");
    assert_eq!(json_body(&text)["error"], "BadRequest", "{text}");
    // The connection wrapper leaves ordinary answers alone, kept alive or not.
    let (text, _) = get_healthz(&app).await;
    assert_eq!(status_of(&text), 200, "{text}");
    let r = app.get("/v1/organizations/", None).await;
    assert_eq!(r.expect_error(401), "Unauthorized");
}

#[actix_web::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let app = spawn_with(|s| s.server.keep_alive_secs = 1).await;
    let mut stream = connect(&app);
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let (text, closed) =
        actix_web::rt::task::spawn_blocking(move || read_until_closed(&mut stream))
            .await
            .unwrap();
    assert_eq!(status_of(&text), 200, "{text}");
    assert!(closed, "the idle connection stays open: {text}");
}

async fn get_healthz(app: &TestApp) -> (String, bool) {
    let mut stream = connect(app);
    actix_web::rt::task::spawn_blocking(move || {
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        read_until_closed(&mut stream)
    })
    .await
    .unwrap()
}

#[actix_web::test]
async fn connections_over_the_per_address_cap_are_refused_until_one_closes() {
    let app = spawn_with(|s| {
        s.server.max_connections_per_ip = 2;
        s.server.request_head_timeout_ms = 60_000;
        s.server.keep_alive_secs = 60;
    })
    .await;
    // Two connections, each served one request and kept open (so both are counted).
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = connect(&app);
        let text = actix_web::rt::task::spawn_blocking(move || {
            stream
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                .unwrap();
            let text = read_one_response(&mut stream);
            (stream, text)
        })
        .await
        .unwrap();
        assert_eq!(status_of(&text.1), 200, "{}", text.1);
        held.push(text.0);
    }
    let app_ref = &app;
    // The third is answered 429 in the JSON shape and closed, whatever it asks.
    let (text, closed) = get_healthz(app_ref).await;
    assert_eq!(status_of(&text), 429, "{text}");
    assert!(closed);
    assert!(
        text.to_ascii_lowercase().contains("retry-after: 1"),
        "{text}"
    );
    assert_eq!(json_body(&text)["error"], "TooManyRequests");
    // Once one held connection closes, a new one is served.
    drop(held);
    let mut served = false;
    for _ in 0..100 {
        let (text, closed) = get_healthz(app_ref).await;
        let _ = closed;
        if text.starts_with("HTTP/1.1 200") {
            served = true;
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(served, "no connection served after the held ones closed");
}
