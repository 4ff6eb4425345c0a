//! Every error has the documented JSON shape, `{"error": .., "detail": ..}` with a JSON
//! content type, whatever went wrong: body, route, method, path or query.

use futures_util::future::join_all;
use reqwest::header::CONTENT_TYPE;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};

const ORGS: &str = "/v1/organizations/";

async fn post_raw(
    app: &TestApp,
    content_type: Option<&str>,
    body: impl Into<String>,
) -> crate::helpers::Reply {
    let mut req = app
        .request(Method::POST, ORGS, Some(&app.token))
        .body(body.into());
    if let Some(ct) = content_type {
        req = req.header(CONTENT_TYPE, ct);
    }
    app.send(req).await
}

#[actix_web::test]
async fn malformed_json_is_422_json_invalid_in_the_body() {
    let app = spawn_app().await;
    for body in [
        r#"{"name": "Acme", "slug": "#,
        "{",
        "not json at all",
        r#"{"a":1,}"#,
    ] {
        let r = post_raw(&app, Some("application/json"), body).await;
        let items = r.expect_validation();
        assert_eq!(items[0]["type"], "json_invalid", "{body}: {}", r.body);
        assert_eq!(items[0]["loc"][0], "body", "{body}: {}", r.body);
    }
}

#[actix_web::test]
async fn malformed_json_on_patch_is_422_too() {
    let app = spawn_app().await;
    let org = app.created_org_as(&app.token, "Acme", "acme").await;
    let path = format!("{ORGS}{}", org["id"].as_str().unwrap());
    let r = app
        .send(
            app.request(Method::PATCH, &path, Some(&app.token))
                .header(CONTENT_TYPE, "application/json")
                .body("{\"name\": }"),
        )
        .await;
    let items = r.expect_validation();
    assert_eq!(items[0]["type"], "json_invalid");
    assert_eq!(items[0]["loc"][0], "body");
}

#[actix_web::test]
async fn text_plain_body_is_422_model_attributes_type() {
    let app = spawn_app().await;
    let r = post_raw(
        &app,
        Some("text/plain"),
        r#"{"name": "Acme", "slug": "acme"}"#,
    )
    .await;
    let items = r.expect_validation();
    assert_eq!(items[0]["type"], "model_attributes_type", "{}", r.body);
    assert_eq!(items[0]["loc"], json!(["body"]));
    // Nothing was created.
    let list = app.list_orgs(&app.token, "").await;
    assert_eq!(list.total_count(), 0);
}

#[actix_web::test]
async fn a_json_array_body_is_422_model_attributes_type() {
    let app = spawn_app().await;
    let r = post_raw(&app, Some("application/json"), "[1, 2]").await;
    let items = r.expect_validation();
    assert_eq!(items[0]["type"], "model_attributes_type", "{}", r.body);
    assert_eq!(items[0]["loc"], json!(["body"]));
}

#[actix_web::test]
async fn empty_body_is_422_missing() {
    let app = spawn_app().await;
    let r = post_raw(&app, Some("application/json"), "").await;
    let items = r.expect_validation();
    assert_eq!(items[0]["type"], "missing", "{}", r.body);
    assert_eq!(items[0]["loc"], json!(["body"]));
}

#[actix_web::test]
async fn json_without_a_content_type_or_with_a_json_suffix_is_accepted() {
    let app = spawn_app().await;
    post_raw(&app, None, r#"{"name": "Acme", "slug": "acme"}"#)
        .await
        .expect(201);
    post_raw(
        &app,
        Some("application/json; charset=utf-8"),
        r#"{"name": "Acme Two", "slug": "acme-two"}"#,
    )
    .await
    .expect(201);
}

#[actix_web::test]
async fn a_wrongly_typed_field_names_its_location() {
    let app = spawn_app().await;
    let r = app
        .post_json(ORGS, Some(&app.token), &json!({"name": 5, "slug": "acme"}))
        .await;
    let item = r.expect_invalid_at(json!(["body", "name"]));
    assert_eq!(item["type"], "string_type", "{item}");
    assert_eq!(item["input"], 5);
}

#[actix_web::test]
async fn oversized_body_is_413_with_json() {
    let app = spawn_app().await;
    let big = "x".repeat(64 * 1024 + 1);
    let body = json!({"name": big, "slug": "big-org"}).to_string();
    assert!(body.len() > 64 * 1024);
    let r = post_raw(&app, Some("application/json"), body).await;
    let error = r.expect_error(413);
    assert_eq!(error, "PayloadTooLarge", "{}", r.body);
    // The server is still fine afterwards, and nothing was created.
    let list = app.list_orgs(&app.token, "").await;
    list.expect(200);
    assert_eq!(list.total_count(), 0);
}

#[actix_web::test]
async fn a_body_just_under_the_limit_is_read() {
    let app = spawn_app().await;
    // Unknown fields are ignored, so padding goes into one.
    let mut body = json!({"name": "Acme", "slug": "acme", "padding": ""});
    let overhead = body.to_string().len();
    body["padding"] = Value::from("p".repeat(64 * 1024 - overhead));
    assert_eq!(body.to_string().len(), 64 * 1024);
    post_raw(&app, Some("application/json"), body.to_string())
        .await
        .expect(201);
}

#[actix_web::test]
async fn unknown_routes_are_404_resource_not_found() {
    let app = spawn_app().await;
    for (method, path) in [
        (Method::GET, "/v1/nope"),
        (Method::GET, "/nope"),
        (Method::POST, "/v1/nope/"),
        (
            Method::GET,
            "/v1/organizations/00000000-0000-4000-8000-000000000000/extra",
        ),
        (Method::DELETE, "/"),
    ] {
        let r = app
            .send(app.request(method.clone(), path, Some(&app.token)))
            .await;
        let error = r.expect_error(404);
        assert_eq!(error, "ResourceNotFound", "{method} {path}: {}", r.body);
        assert_eq!(r.body["detail"], "Not found");
    }
}

#[actix_web::test]
async fn unknown_routes_are_404_even_without_credentials() {
    let app = spawn_app().await;
    let r = app.get("/v1/nope", None).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
}

#[actix_web::test]
async fn wrong_method_is_405_with_json() {
    let app = spawn_app().await;
    let id = "00000000-0000-4000-8000-000000000000";
    for (method, path) in [
        (Method::DELETE, ORGS.to_string()),
        (Method::PUT, ORGS.to_string()),
        (Method::PATCH, ORGS.to_string()),
        (Method::POST, format!("{ORGS}{id}")),
        (Method::DELETE, format!("{ORGS}{id}")),
        (Method::PUT, format!("{ORGS}{id}")),
    ] {
        let r = app
            .send(app.request(method.clone(), &path, Some(&app.token)))
            .await;
        assert_eq!(r.status, 405, "{method} {path}: {}", r.body);
        let error = r.expect_error(405);
        assert_eq!(error, "MethodNotAllowed", "{method} {path}: {}", r.body);
    }
}

#[actix_web::test]
async fn bad_uuid_in_path_is_422_uuid_parsing() {
    let app = spawn_app().await;
    for path in [
        format!("{ORGS}not-a-uuid"),
        format!("{ORGS}12345"),
        format!("{ORGS}00000000-0000-4000-8000-00000000000g"),
    ] {
        let r = app.get(&path, Some(&app.token)).await;
        let item = r.expect_invalid_at(json!(["path", "id"]));
        assert_eq!(item["type"], "uuid_parsing", "{path}: {item}");
    }
    let r = app
        .patch_org("not-a-uuid", &app.token, &json!({"name": "Whatever"}))
        .await;
    let item = r.expect_invalid_at(json!(["path", "id"]));
    assert_eq!(item["type"], "uuid_parsing");
    assert_eq!(item["input"], "not-a-uuid");
}

#[actix_web::test]
async fn page_and_limit_must_be_positive_integers() {
    let app = spawn_app().await;
    for (query, key) in [
        ("page=0", "page"),
        ("page=-1", "page"),
        ("limit=0", "limit"),
        ("limit=-5", "limit"),
        ("page=abc", "page"),
        ("limit=ten", "limit"),
    ] {
        let r = app.list_orgs(&app.token, query).await;
        r.expect_invalid_at(json!(["query", key]));
    }
    let r = app.list_orgs(&app.token, "page=0&limit=0").await;
    let items = r.expect_validation();
    assert_eq!(items.len(), 2, "both errors reported at once: {}", r.body);
}

#[actix_web::test]
async fn unknown_sorting_is_422_enum() {
    let app = spawn_app().await;
    let r = app.list_orgs(&app.token, "sorting=bogus").await;
    let item = r.expect_invalid_at(json!(["query", "sorting", 0]));
    assert_eq!(item["type"], "enum", "{item}");
    assert_eq!(item["input"], "bogus");
    let r = app
        .list_orgs(&app.token, "sorting=name&sorting=-bogus")
        .await;
    let item = r.expect_invalid_at(json!(["query", "sorting", 1]));
    assert_eq!(item["type"], "enum", "{item}");
}

#[actix_web::test]
async fn limit_above_100_is_clamped_to_100() {
    let app = spawn_app().await;
    let slugs: Vec<String> = (0..101).map(|i| format!("clamp-{i:03}")).collect();
    for chunk in slugs.chunks(10) {
        let replies = join_all(chunk.iter().map(|s| app.create_org(s, s))).await;
        for r in replies {
            r.expect(201);
        }
    }
    let r = app.list_orgs(&app.token, "limit=1000").await;
    r.expect(200);
    assert_eq!(r.total_count(), 101);
    assert_eq!(r.items().len(), 100, "a page holds at most 100 items");
    assert_eq!(r.max_page(), 2, "max_page uses the clamped limit");
    let r = app.list_orgs(&app.token, "limit=1000&page=2").await;
    assert_eq!(r.items().len(), 1);
    assert_eq!(r.total_count(), 101);
}

#[actix_web::test]
async fn unknown_query_parameters_are_ignored() {
    let app = spawn_app().await;
    app.list_orgs(&app.token, "whatever=1&is_member=true")
        .await
        .expect(200);
}

#[actix_web::test]
async fn wrong_method_on_health_endpoints_is_405() {
    let app = spawn_app().await;
    for path in ["/healthz", "/readyz"] {
        let r = app.send(app.request(Method::POST, path, None)).await;
        assert_eq!(r.status, 405, "POST {path}: {}", r.body);
        assert_eq!(r.expect_error(405), "MethodNotAllowed");
    }
}

#[actix_web::test]
async fn deeply_nested_json_is_a_422_not_a_crash() {
    let app = spawn_app().await;
    let depth = 10_000;
    let body = format!(
        r#"{{"name": "Acme", "slug": "nested", "x": {}{}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let r = post_raw(&app, Some("application/json"), body).await;
    let items = r.expect_validation();
    assert_eq!(items[0]["type"], "json_invalid", "{}", r.body);
    app.get("/healthz", None).await.expect(200);
}

/// Sends a request with a chunked body over a raw connection (reqwest sends a length for
/// every body it can) and returns the status line, headers and body of the answer.
async fn raw_chunked_post(app: &TestApp, path: &str, body: &[u8]) -> (u16, String, String) {
    let address = app.address.clone();
    let token = app.token.clone();
    let path = path.to_string();
    let body = body.to_vec();
    // Blocking I/O off the test's runtime thread, which also drives the server.
    actix_web::rt::task::spawn_blocking(move || {
        raw_chunked_post_blocking(&address, &token, &path, &body)
    })
    .await
    .unwrap()
}

fn raw_chunked_post_blocking(
    address: &str,
    token: &str,
    path: &str,
    body: &[u8],
) -> (u16, String, String) {
    use std::io::{Read, Write};
    use std::time::Duration;
    let addr = address.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\
         Connection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    for chunk in body.chunks(4096) {
        let mut frame = format!("{:x}\r\n", chunk.len()).into_bytes();
        frame.extend_from_slice(chunk);
        frame.extend_from_slice(b"\r\n");
        // The server may answer and stop reading before the body ends.
        if stream.write_all(&frame).is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    (status, head.to_ascii_lowercase(), body.to_string())
}

#[actix_web::test]
async fn an_oversized_chunked_body_is_413_with_json() {
    let app = spawn_app().await;
    let body = json!({"name": "x".repeat(70 * 1024), "slug": "chunked"}).to_string();
    let (status, head, body) = raw_chunked_post(&app, ORGS, body.as_bytes()).await;
    assert_eq!(status, 413, "{head}\n{body}");
    assert!(head.contains("content-type: application/json"), "{head}");
    // The body may itself be chunked; the JSON object is inside.
    let start = body
        .find('{')
        .unwrap_or_else(|| panic!("no JSON in {body:?}"));
    let end = body.rfind('}').unwrap();
    let v: Value = serde_json::from_str(&body[start..=end]).unwrap();
    assert_eq!(v["error"], "PayloadTooLarge", "{v}");
    assert!(v.get("detail").is_some());
    assert_eq!(app.list_orgs(&app.token, "").await.total_count(), 0);
}

#[actix_web::test]
async fn a_small_chunked_body_is_read() {
    let app = spawn_app().await;
    let body = json!({"name": "Chunky", "slug": "chunky"}).to_string();
    let (status, head, body) = raw_chunked_post(&app, ORGS, body.as_bytes()).await;
    assert_eq!(status, 201, "{head}\n{body}");
}

#[actix_web::test]
async fn huge_page_and_limit_values_do_not_overflow() {
    let app = spawn_app().await;
    app.create_org("Acme", "acme").await.expect(201);
    let max = i64::MAX;
    let r = app.list_orgs(&app.token, &format!("page={max}")).await;
    r.expect(200);
    assert!(r.items().is_empty());
    assert_eq!(r.total_count(), 1);
    let r = app
        .list_orgs(&app.token, &format!("page={max}&limit={max}"))
        .await;
    r.expect(200);
    assert!(r.items().is_empty());
    let r = app.list_orgs(&app.token, &format!("limit={max}")).await;
    r.expect(200);
    assert_eq!(r.items().len(), 1);
    assert_eq!(r.max_page(), 1);
}
