//! `/v1/files` (issue 50, stage 1): create with an upload plan, parts sent to Tollgate's
//! signed part URLs, `/uploaded` (assembled, hashed, checked), list, patch, delete; Polar's
//! 422s; refused part URLs; the organization quota; tenancy and scopes; the purge of
//! unfinished uploads. The bytes are checked in the data dir (no download route yet).

use std::path::PathBuf;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{Duration, Utc};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tollgate::auth::Scope;
use tollgate::config::Settings;
use tollgate::domain::file::FileUsage;
use tollgate_actors::ManualClock;

use crate::binary::{big_part, server_pid, vm_hwm_kib, MIB5};
use crate::helpers::{assert_utc_timestamp, spawn_app, spawn_app_with, Reply, TestApp};

const FILES: &str = "/v1/files/";

fn sha(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

fn b64(d: [u8; 32]) -> String {
    STANDARD.encode(d)
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes that differ from position to position.
fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

/// A user holding `scopes` (plus organizations:write) and an organization of their own.
async fn seller(app: &TestApp, email: &str, slug: &str, scopes: &[Scope]) -> (String, String) {
    let mut all = vec![Scope::OrganizationsWrite];
    all.extend_from_slice(scopes);
    let (_, token) = app.new_user_with_scopes(email, &all).await;
    let org = app.created_org_as(&token, "Files Org", slug).await;
    (token, org["id"].as_str().unwrap().to_string())
}

async fn writer(app: &TestApp, email: &str, slug: &str) -> (String, String) {
    seller(app, email, slug, &[Scope::FilesWrite]).await
}

/// The create body for `bytes` cut at `cuts` (part boundaries), with a whole-file checksum
/// and per-part checksums when asked.
fn create_body(org: &str, name: &str, bytes: &[u8], cuts: &[usize], part_sums: bool) -> Value {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(bytes.len());
    let parts: Vec<Value> = bounds
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            let sum = part_sums.then(|| b64(sha(&bytes[w[0]..w[1]])));
            json!({"number": i + 1, "chunk_start": w[0], "chunk_end": w[1],
                   "checksum_sha256_base64": sum})
        })
        .collect();
    json!({
        "organization_id": org, "service": "downloadable", "name": name,
        "mime_type": "application/octet-stream", "size": bytes.len(),
        "checksum_sha256_base64": b64(sha(bytes)), "upload": {"parts": parts},
    })
}

/// PUTs `body` to a part's URL with its headers.
async fn put_part(app: &TestApp, url: &str, headers: &Value, body: Vec<u8>) -> Reply {
    let mut req = app.client.put(url).body(body);
    if let Some(h) = headers.as_object() {
        for (k, v) in h {
            req = req.header(k.as_str(), v.as_str().unwrap());
        }
    }
    Reply::read(req.send().await.expect("sending a part")).await
}

/// Sends every part of `upload` from `bytes`; answers the `/uploaded` body.
async fn send_parts(app: &TestApp, upload: &Value, bytes: &[u8]) -> Value {
    let mut done = Vec::new();
    for p in upload["upload"]["parts"].as_array().unwrap() {
        let (s, e) = (
            p["chunk_start"].as_u64().unwrap() as usize,
            p["chunk_end"].as_u64().unwrap() as usize,
        );
        let r = put_part(
            app,
            p["url"].as_str().unwrap(),
            &p["headers"],
            bytes[s..e].to_vec(),
        )
        .await;
        r.expect(200);
        let etag = r.header("etag");
        assert_eq!(etag, format!("\"{}\"", hex(&sha(&bytes[s..e]))));
        done.push(json!({"number": p["number"], "checksum_etag": etag,
                         "checksum_sha256_base64": p["checksum_sha256_base64"]}));
    }
    json!({"id": upload["upload"]["id"], "path": upload["upload"]["path"], "parts": done})
}

fn uploaded_path(id: &str) -> String {
    format!("{FILES}{id}/uploaded")
}

fn object(app: &TestApp, org: &str, id: &str) -> PathBuf {
    app.data_dir().join("files/objects").join(org).join(id)
}

fn uploads(app: &TestApp, id: &str) -> PathBuf {
    app.data_dir().join("files/uploads").join(id)
}

async fn usage(app: &TestApp, org: &str) -> u64 {
    let org: uuid::Uuid = org.parse().unwrap();
    app.state
        .store
        .get::<FileUsage>(org.as_bytes())
        .await
        .unwrap()
        .map_or(0, |u| u.value.bytes)
}

async fn delete(app: &TestApp, token: &str, id: &str) -> Reply {
    app.send(app.request(Method::DELETE, &format!("{FILES}{id}"), Some(token)))
        .await
}

#[actix_web::test]
async fn a_file_is_created_uploaded_in_parts_listed_renamed_and_deleted() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "files@example.com", "files-org").await;
    let bytes = data(MIB5 + 1000);
    let r = app
        .post_json(
            FILES,
            Some(&token),
            &create_body(&org, "app.AppImage", &bytes, &[MIB5], true),
        )
        .await;
    r.expect(201);
    let upload = r.body.clone();
    let id = upload["id"].as_str().unwrap().to_string();
    let path = format!("downloadable/{org}/{id}/app.AppImage");
    assert_eq!(upload["path"], path);
    assert_eq!(upload["upload"]["path"], path);
    assert_eq!(upload["is_uploaded"], false);
    assert_eq!(upload["service"], "downloadable");
    assert_eq!(upload["size"], bytes.len());
    assert_eq!(upload["size_readable"], "5.0 MB");
    assert_eq!(upload["checksum_etag"], Value::Null);
    assert_eq!(upload["last_modified_at"], Value::Null);
    let parts = upload["upload"]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    let url = parts[0]["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{}/v1/files/{id}/parts/1?", app.address)),
        "{url}"
    );
    assert_eq!(
        parts[1]["headers"],
        json!({"x-amz-checksum-sha256": b64(sha(&bytes[MIB5..])),
               "x-amz-sdk-checksum-algorithm": "SHA256"})
    );
    assert_utc_timestamp(&parts[0]["expires_at"]);
    assert_eq!(usage(&app, &org).await, bytes.len() as u64);

    // Not listed until uploaded.
    let r = app.get(FILES, Some(&token)).await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);

    let done = send_parts(&app, &upload, &bytes).await;
    let r = app
        .post_json(&uploaded_path(&id), Some(&token), &done)
        .await;
    r.expect(200);
    let file = r.body.clone();
    assert_eq!(file["is_uploaded"], true);
    assert_eq!(file["checksum_sha256_hex"], hex(&sha(&bytes)));
    assert_eq!(file["checksum_sha256_base64"], b64(sha(&bytes)));
    let etag = file["checksum_etag"].as_str().unwrap();
    assert!(etag.starts_with('"') && etag.ends_with("-2\""), "{etag}");
    assert_utc_timestamp(&file["created_at"]);
    assert_utc_timestamp(&file["last_modified_at"]);
    assert_eq!(file["flagged_malicious_at"], Value::Null);
    // The bytes, assembled in the data dir; the parts gone.
    assert_eq!(std::fs::read(object(&app, &org, &id)).unwrap(), bytes);
    assert!(!uploads(&app, &id).exists());
    // A repeated /uploaded (its answer lost) answers the same file.
    let again = app
        .post_json(&uploaded_path(&id), Some(&token), &done)
        .await;
    again.expect(200);
    assert_eq!(again.body["checksum_etag"], file["checksum_etag"]);

    let r = app.get(FILES, Some(&token)).await;
    r.expect(200);
    assert_eq!(r.total_count(), 1);
    assert_eq!(r.items()[0], file);
    let r = app
        .get(
            &format!("{FILES}?ids={id}&organization_id={org}"),
            Some(&token),
        )
        .await;
    assert_eq!(r.total_count(), 1);
    let other = uuid::Uuid::new_v4();
    let r = app.get(&format!("{FILES}?ids={other}"), Some(&token)).await;
    assert_eq!(r.total_count(), 0);

    let r = app
        .patch_json(
            &format!("{FILES}{id}"),
            Some(&token),
            &json!({"name": "app-1.2.AppImage", "version": "1.2.0"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["name"], "app-1.2.AppImage");
    assert_eq!(r.body["version"], "1.2.0");
    assert_eq!(r.body["path"], path, "the key stays");
    let r = app
        .patch_json(
            &format!("{FILES}{id}"),
            Some(&token),
            &json!({"name": "", "version": ""}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["name"], "app-1.2.AppImage");
    assert_eq!(r.body["version"], "1.2.0");

    delete(&app, &token, &id).await.expect(204);
    assert!(!object(&app, &org, &id).exists());
    assert_eq!(usage(&app, &org).await, 0);
    assert_eq!(app.get(FILES, Some(&token)).await.total_count(), 0);
    delete(&app, &token, &id).await.expect_error(404);
    app.patch_json(&format!("{FILES}{id}"), Some(&token), &json!({"name": "x"}))
        .await
        .expect_error(404);
}

#[actix_web::test]
async fn bad_plans_and_fields_are_refused_with_polar_s_422s() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Settings::for_tests(dir.path());
    s.files.max_file_bytes = 20 * 1024 * 1024;
    let app = spawn_app_with(dir, s, tollgate_actors::SystemClock::shared()).await;
    let (token, org) = writer(&app, "plans@example.com", "plans-org").await;
    let small = data(100);
    let base = create_body(&org, "a.bin", &small, &[], false);
    let with = |f: &dyn Fn(&mut Value)| {
        let mut b = base.clone();
        f(&mut b);
        b
    };
    let cases: Vec<(Value, Value)> = vec![
        (
            with(&|b| {
                b["size"] = json!(21 * 1024 * 1024);
                b["upload"]["parts"][0]["chunk_end"] = json!(21 * 1024 * 1024);
            }),
            json!(["body", "size"]),
        ),
        (with(&|b| b["size"] = json!(-1)), json!(["body", "size"])),
        (
            with(&|b| {
                b["upload"]["parts"] = json!([
                    {"number": 1, "chunk_start": 0, "chunk_end": 50},
                    {"number": 2, "chunk_start": 60, "chunk_end": 100}]);
            }),
            json!(["body", "upload", "parts", 0, "chunk_end"]),
        ),
        (
            with(&|b| {
                b["size"] = json!(MIB5 + 100);
                b["upload"]["parts"] = json!([
                    {"number": 1, "chunk_start": 0, "chunk_end": MIB5},
                    {"number": 2, "chunk_start": MIB5 + 1, "chunk_end": MIB5 + 100}]);
            }),
            json!(["body", "upload", "parts", 1, "chunk_start"]),
        ),
        (
            with(&|b| b["upload"]["parts"][0]["chunk_end"] = json!(99)),
            json!(["body", "upload", "parts"]),
        ),
        (
            with(&|b| b["upload"]["parts"][0]["number"] = json!(2)),
            json!(["body", "upload", "parts", 0, "number"]),
        ),
        (
            with(&|b| b["upload"]["parts"] = json!([])),
            json!(["body", "upload", "parts"]),
        ),
        (
            with(&|b| {
                let parts: Vec<Value> = (0..10_001)
                    .map(|i| json!({"number": i + 1, "chunk_start": i, "chunk_end": i + 1}))
                    .collect();
                b["size"] = json!(10_001);
                b["upload"]["parts"] = json!(parts);
            }),
            json!(["body", "upload", "parts"]),
        ),
        (
            with(&|b| b["service"] = json!("product_media")),
            json!(["body", "mime_type"]),
        ),
        (
            with(&|b| {
                b["service"] = json!("organization_avatar");
                b["mime_type"] = json!("image/png");
                b["size"] = json!(2 * 1024 * 1024);
                b["upload"]["parts"][0]["chunk_end"] = json!(2 * 1024 * 1024);
            }),
            json!(["body", "size"]),
        ),
        (
            with(&|b| b["service"] = json!("support_case_attachment")),
            json!(["body", "service"]),
        ),
        (
            with(&|b| b["checksum_sha256_base64"] = json!("not base64!")),
            json!(["body", "checksum_sha256_base64"]),
        ),
        (
            with(&|b| b["upload"]["parts"][0]["checksum_sha256_base64"] = json!("AAAA")),
            json!(["body", "upload", "parts", 0, "checksum_sha256_base64"]),
        ),
        (with(&|b| b["name"] = json!("")), json!(["body", "name"])),
    ];
    for (body, loc) in cases {
        let r = app.post_json(FILES, Some(&token), &body).await;
        r.expect_invalid_at(loc);
    }
    // A missing field is FastAPI's "missing".
    let mut b = base.clone();
    b.as_object_mut().unwrap().remove("upload");
    let item = app
        .post_json(FILES, Some(&token), &b)
        .await
        .expect_invalid_at(json!(["body", "upload"]));
    assert_eq!(item["type"], "missing");
    // Nothing was reserved by the refusals.
    assert_eq!(usage(&app, &org).await, 0);
    // An image of product media within its 10 MB passes.
    let mut ok = base.clone();
    ok["service"] = json!("product_media");
    ok["mime_type"] = json!("image/png");
    app.post_json(FILES, Some(&token), &ok).await.expect(201);
}

#[actix_web::test]
async fn part_urls_refuse_tampering_expiry_a_wrong_length_and_a_wrong_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let s = Settings::for_tests(dir.path());
    let (clock, shared) = ManualClock::shared(Utc::now());
    let app = spawn_app_with(dir, s, shared).await;
    let (token, org) = writer(&app, "parts@example.com", "parts-org").await;
    let bytes = data(MIB5 + 10);
    let r = app
        .post_json(
            FILES,
            Some(&token),
            &create_body(&org, "b.bin", &bytes, &[MIB5], true),
        )
        .await;
    r.expect(201);
    let id = r.body["id"].as_str().unwrap().to_string();
    let parts = r.body["upload"]["parts"].as_array().unwrap().clone();
    let url1 = parts[0]["url"].as_str().unwrap().to_string();
    let url2 = parts[1]["url"].as_str().unwrap().to_string();
    let part2 = bytes[MIB5..].to_vec();

    // Forged: another signature, or the URL of part 2 used for part 1.
    let sig_at = url2.find("signature=").unwrap() + "signature=".len();
    // (The first character changed to another one: an "A" kept as "A" would be the
    // genuine signature, one URL in 64.)
    let other = if url2[sig_at..].starts_with('A') {
        "B"
    } else {
        "A"
    };
    let forged = format!("{}{other}{}", &url2[..sig_at], &url2[sig_at + 1..]);
    // (Refused before the body is read: small bodies, so that the answer is not a reset
    // of a connection still sending megabytes.)
    put_part(&app, &forged, &parts[1]["headers"], part2.clone())
        .await
        .expect_error(403);
    let swapped = url2.replace("/parts/2?", "/parts/1?");
    put_part(&app, &swapped, &json!({}), bytes[..10].to_vec())
        .await
        .expect_error(403);
    // Without the query: 422 at the query.
    let bare = url2.split('?').next().unwrap().to_string();
    put_part(&app, &bare, &json!({}), part2.clone())
        .await
        .expect_invalid_at(json!(["query", "upload_id"]));

    // A wrong length, short or long, and a wrong checksum: 400, nothing kept.
    put_part(&app, &url2, &json!({}), part2[..9].to_vec())
        .await
        .expect_error(400);
    let mut long = part2.clone();
    long.push(0);
    put_part(&app, &url2, &json!({}), long)
        .await
        .expect_error(400);
    let mut wrong = part2.clone();
    wrong[0] ^= 1;
    put_part(&app, &url2, &json!({}), wrong)
        .await
        .expect_error(400);
    let kept: Vec<_> = std::fs::read_dir(uploads(&app, &id))
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(
        kept.is_empty(),
        "nothing of a refused part is kept: {kept:?}"
    );
    // The right bytes pass.
    put_part(&app, &url2, &json!({}), part2.clone())
        .await
        .expect(200);
    assert!(uploads(&app, &id).join("00002.part").is_file());

    // Past the URL's expiry (upload_url_ttl_secs): 410.
    clock.advance(Duration::seconds(3601));
    put_part(&app, &url1, &json!({}), bytes[..10].to_vec())
        .await
        .expect_error(410);
    // A fresh create is unaffected; an unknown file with a good signature would be 404, as
    // is a file uploaded already (checked in the flow test through /uploaded).
    let _ = token;
}

#[actix_web::test]
async fn uploaded_checks_the_upload_id_path_parts_and_the_whole_file_checksum() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "complete@example.com", "complete-org").await;
    let bytes = data(1000);
    let r = app
        .post_json(
            FILES,
            Some(&token),
            &create_body(&org, "c.bin", &bytes, &[], false),
        )
        .await;
    r.expect(201);
    let upload = r.body.clone();
    let id = upload["id"].as_str().unwrap().to_string();

    // Before the part arrives: 422 at the missing part.
    let early = json!({"id": upload["upload"]["id"], "path": upload["upload"]["path"],
        "parts": [{"number": 1, "checksum_etag": "\"x\"", "checksum_sha256_base64": null}]});
    app.post_json(&uploaded_path(&id), Some(&token), &early)
        .await
        .expect_invalid_at(json!(["body", "parts", 0]));
    let done = send_parts(&app, &upload, &bytes).await;
    let mut wrong_id = done.clone();
    wrong_id["id"] = json!("local~0000");
    app.post_json(&uploaded_path(&id), Some(&token), &wrong_id)
        .await
        .expect_invalid_at(json!(["body", "id"]));
    let mut wrong_path = done.clone();
    wrong_path["path"] = json!(format!("downloadable/{org}/{id}/other.bin"));
    app.post_json(&uploaded_path(&id), Some(&token), &wrong_path)
        .await
        .expect_invalid_at(json!(["body", "path"]));
    let mut wrong_etag = done.clone();
    wrong_etag["parts"][0]["checksum_etag"] = json!(format!("\"{}\"", hex(&[0u8; 32])));
    app.post_json(&uploaded_path(&id), Some(&token), &wrong_etag)
        .await
        .expect_invalid_at(json!(["body", "parts", 0, "checksum_etag"]));
    let mut no_parts = done.clone();
    no_parts["parts"] = json!([]);
    app.post_json(&uploaded_path(&id), Some(&token), &no_parts)
        .await
        .expect_invalid_at(json!(["body", "parts"]));
    // The part is still there after these refusals: the right call passes.
    app.post_json(&uploaded_path(&id), Some(&token), &done)
        .await
        .expect(200);

    // A whole-file checksum the bytes do not match: 422, nothing kept, quota back.
    let mut body = create_body(&org, "d.bin", &bytes, &[], false);
    body["checksum_sha256_base64"] = json!(b64(sha(b"something else")));
    let r = app.post_json(FILES, Some(&token), &body).await;
    r.expect(201);
    let bad = r.body.clone();
    let bad_id = bad["id"].as_str().unwrap().to_string();
    assert_eq!(usage(&app, &org).await, 2000);
    let done = send_parts(&app, &bad, &bytes).await;
    let r = app
        .post_json(&uploaded_path(&bad_id), Some(&token), &done)
        .await;
    let item = r.expect_invalid_at(json!(["body"]));
    assert!(item["msg"].as_str().unwrap().contains("SHA-256"), "{item}");
    assert!(!uploads(&app, &bad_id).exists());
    assert!(!object(&app, &org, &bad_id).exists());
    assert!(!app
        .data_dir()
        .join("files/tmp")
        .read_dir()
        .unwrap()
        .any(|_| true));
    assert_eq!(usage(&app, &org).await, 1000);
    app.post_json(&uploaded_path(&bad_id), Some(&token), &done)
        .await
        .expect_error(404);
}

#[actix_web::test]
async fn the_organization_quota_holds_under_concurrent_creates() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Settings::for_tests(dir.path());
    s.files.max_organization_bytes = 10_000;
    let app = spawn_app_with(dir, s, tollgate_actors::SystemClock::shared()).await;
    let (token, org) = writer(&app, "quota@example.com", "quota-org").await;
    let bytes = data(3000);
    let body = create_body(&org, "q.bin", &bytes, &[], false);
    let replies =
        futures_util::future::join_all((0..10).map(|_| app.post_json(FILES, Some(&token), &body)))
            .await;
    let created: Vec<&Reply> = replies.iter().filter(|r| r.status == 201).collect();
    assert_eq!(
        created.len(),
        3,
        "3 × 3000 fit in 10 000, a fourth does not"
    );
    for r in replies.iter().filter(|r| r.status != 201) {
        r.expect_invalid_at(json!(["body", "size"]));
    }
    assert_eq!(usage(&app, &org).await, 9000);
    // A deleted (pending) file gives its bytes back.
    delete(&app, &token, &created[0].id()).await.expect(204);
    assert_eq!(usage(&app, &org).await, 6000);
    app.post_json(FILES, Some(&token), &body).await.expect(201);
}

#[actix_web::test]
async fn other_organizations_get_404_and_missing_scopes_403() {
    let app = spawn_app().await;
    let (token, org) = seller(
        &app,
        "owner@example.com",
        "owner-org",
        &[Scope::FilesWrite, Scope::OrganizationAccessTokensWrite],
    )
    .await;
    let (stranger, _) = writer(&app, "stranger@example.com", "stranger-org").await;
    let (reader, _) = seller(
        &app,
        "reader@example.com",
        "reader-org",
        &[Scope::FilesRead],
    )
    .await;
    let (nothing, _) = seller(&app, "nothing@example.com", "nothing-org", &[]).await;
    let bytes = data(10);
    let r = app
        .post_json(
            FILES,
            Some(&token),
            &create_body(&org, "t.bin", &bytes, &[], false),
        )
        .await;
    r.expect(201);
    let upload = r.body.clone();
    let id = upload["id"].as_str().unwrap().to_string();
    let done = send_parts(&app, &upload, &bytes).await;

    // Another organization's token: 404 on the file, nothing listed.
    app.post_json(&uploaded_path(&id), Some(&stranger), &done)
        .await
        .expect_error(404);
    app.patch_json(
        &format!("{FILES}{id}"),
        Some(&stranger),
        &json!({"name": "x"}),
    )
    .await
    .expect_error(404);
    delete(&app, &stranger, &id).await.expect_error(404);
    app.post_json(&uploaded_path(&id), Some(&token), &done)
        .await
        .expect(200);
    assert_eq!(app.get(FILES, Some(&stranger)).await.total_count(), 0);
    // Creating in someone else's organization: 422 at organization_id, as products.
    app.post_json(
        FILES,
        Some(&stranger),
        &create_body(&org, "s.bin", &bytes, &[], false),
    )
    .await
    .expect_invalid_at(json!(["body", "organization_id"]));

    // files:read lists (its own organizations) but cannot write; no files scope: 403.
    app.get(FILES, Some(&reader)).await.expect(200);
    app.post_json(
        FILES,
        Some(&reader),
        &create_body(&org, "r.bin", &bytes, &[], false),
    )
    .await
    .expect_error(403);
    app.get(FILES, Some(&nothing)).await.expect_error(403);
    app.get(FILES, None).await.expect_error(401);

    // An organization access token picks its own organization.
    let oat = app
        .post_json(
            "/v1/organization-access-tokens/",
            Some(&token),
            &json!({"organization_id": org, "comment": "CI", "scopes": ["files:write"]}),
        )
        .await;
    oat.expect(201);
    let oat = oat.body["token"].as_str().unwrap().to_string();
    let mut body = create_body(&org, "o.bin", &bytes, &[], false);
    body.as_object_mut().unwrap().remove("organization_id");
    let r = app.post_json(FILES, Some(&oat), &body).await;
    r.expect(201);
    assert_eq!(r.body["organization_id"], org);
    assert_eq!(app.get(FILES, Some(&oat)).await.total_count(), 1);
}

#[actix_web::test]
async fn unfinished_uploads_are_purged_after_their_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let s = Settings::for_tests(dir.path());
    let (clock, shared) = ManualClock::shared(Utc::now());
    let app = spawn_app_with(dir, s, shared).await;
    let (token, org) = writer(&app, "purge@example.com", "purge-org").await;
    let bytes = data(MIB5 + 5);
    let r = app
        .post_json(
            FILES,
            Some(&token),
            &create_body(&org, "p.bin", &bytes, &[MIB5], false),
        )
        .await;
    r.expect(201);
    let id = r.body["id"].as_str().unwrap().to_string();
    let part = &r.body["upload"]["parts"][0];
    put_part(
        &app,
        part["url"].as_str().unwrap(),
        &json!({}),
        bytes[..MIB5].to_vec(),
    )
    .await
    .expect(200);
    // Not yet expired: kept.
    assert_eq!(
        tollgate::app::files::purge_expired(&app.state)
            .await
            .unwrap(),
        0
    );
    assert!(uploads(&app, &id).exists());
    clock.advance(Duration::seconds(24 * 3600 + 1));
    assert_eq!(
        tollgate::app::files::purge_expired(&app.state)
            .await
            .unwrap(),
        1
    );
    assert!(!uploads(&app, &id).exists());
    assert_eq!(usage(&app, &org).await, 0);
    delete(&app, &token, &id).await.expect_error(404);
}

/// A 200 MiB file in 40 parts of 5 MiB through the real binary: the server's peak resident
/// memory (VmHWM) stays under 100 MiB (parts are streamed to disk, assembly reads and writes
/// 1 MiB blocks); the stored bytes are the sent ones; and the acknowledged `/uploaded`
/// survives `kill -9` (the file still listed, its bytes intact, after a restart).
#[actix_web::test]
async fn a_200_mib_upload_streams_in_bounded_memory_and_survives_kill_9() {
    use crate::binary::Binary;
    let root = tempfile::tempdir().unwrap();
    let data_dir = root.path().join("data");
    std::fs::create_dir_all(&data_dir).unwrap();
    let ready = std::time::Duration::from_secs(60);
    let server = Binary::start(root.path(), &data_dir, "server-1.log", &[], ready).await;
    let pid = server_pid(&data_dir);
    let token = crate::helpers::bootstrap_token(&data_dir);
    let http = crate::helpers::client();
    let base = server.address.clone();

    const PARTS: usize = 40;
    let size = PARTS * MIB5;
    let mut whole = Sha256::new();
    let mut parts = Vec::new();
    for i in 0..PARTS {
        let p = big_part(i);
        whole.update(&p);
        parts.push(
            json!({"number": i + 1, "chunk_start": i * MIB5, "chunk_end": (i + 1) * MIB5,
                          "checksum_sha256_base64": b64(sha(&p))}),
        );
    }
    let whole: [u8; 32] = whole.finalize().into();
    let org = http
        .post(format!("{base}/v1/organizations/"))
        .bearer_auth(&token)
        .json(&json!({"name": "Big Org", "slug": "big-org"}))
        .send()
        .await
        .unwrap();
    let org = Reply::read(org).await;
    org.expect(201);
    let org = org.id();
    let create = json!({"organization_id": org, "service": "downloadable", "name": "big.bin",
        "mime_type": "application/octet-stream", "size": size,
        "checksum_sha256_base64": b64(whole), "upload": {"parts": parts}});
    let r = Reply::read(
        http.post(format!("{base}/v1/files/"))
            .bearer_auth(&token)
            .json(&create)
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect(201);
    let upload = r.body.clone();
    let id = upload["id"].as_str().unwrap().to_string();
    let idle = vm_hwm_kib(pid);
    let mut done = Vec::new();
    for (i, p) in upload["upload"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let mut req = http.put(p["url"].as_str().unwrap()).body(big_part(i));
        for (k, v) in p["headers"].as_object().unwrap() {
            req = req.header(k.as_str(), v.as_str().unwrap());
        }
        let r = Reply::read(req.send().await.unwrap()).await;
        r.expect(200);
        done.push(json!({"number": i + 1, "checksum_etag": r.header("etag"),
                         "checksum_sha256_base64": p["checksum_sha256_base64"]}));
    }
    let body =
        json!({"id": upload["upload"]["id"], "path": upload["upload"]["path"], "parts": done});
    let r = Reply::read(
        http.post(format!("{base}/v1/files/{id}/uploaded"))
            .bearer_auth(&token)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["checksum_sha256_hex"], hex(&whole));
    let peak = vm_hwm_kib(pid);
    eprintln!(
        "VmHWM idle {} MiB, after the 200 MiB upload {} MiB",
        idle / 1024,
        peak / 1024
    );
    assert!(peak < 100 * 1024, "VmHWM {peak} KiB is over 100 MiB");

    // Acknowledged, then killed: the file is there after a restart, its bytes intact.
    server.kill_9_now();
    drop(server);
    let server = Binary::start(root.path(), &data_dir, "server-2.log", &[], ready).await;
    let r = Reply::read(
        http.get(format!("{}/v1/files/", server.address))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect(200);
    assert_eq!(r.total_count(), 1);
    assert_eq!(r.items()[0]["id"], id);
    let blob = data_dir.join("files/objects").join(&org).join(&id);
    let mut file = std::fs::File::open(&blob).unwrap();
    let mut stored = Sha256::new();
    let copied = std::io::copy(&mut file, &mut stored).unwrap();
    assert_eq!(copied as usize, size);
    assert_eq!(<[u8; 32]>::from(stored.finalize()), whole);
}

/// `tollgate backup` copies the uploaded files beside the snapshot (SHA-256 verified),
/// `restore` puts them back into the new data dir, `check` finds them and reports a missing
/// object and an orphan; a tampered file in the backup fails the restore.
#[actix_web::test]
async fn uploaded_files_travel_with_backup_and_restore_and_check_finds_gaps() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "backup@example.com", "backup-org").await;
    let bytes = data(MIB5 + 77);
    let r = app
        .post_json(
            FILES,
            Some(&token),
            &create_body(&org, "b.bin", &bytes, &[MIB5], false),
        )
        .await;
    r.expect(201);
    let upload = r.body.clone();
    let id = upload["id"].as_str().unwrap().to_string();
    let done = send_parts(&app, &upload, &bytes).await;
    app.post_json(&uploaded_path(&id), Some(&token), &done)
        .await
        .expect(200);
    // A pending upload is not backed up.
    app.post_json(
        FILES,
        Some(&token),
        &create_body(&org, "p.bin", &bytes[..10], &[], false),
    )
    .await
    .expect(201);

    let backups = tempfile::tempdir().unwrap();
    tollgate::admin::backup_to(&app.address, &app.token, backups.path())
        .await
        .unwrap();
    let copy = backups.path().join("files").join(&org).join(&id);
    assert_eq!(std::fs::read(&copy).unwrap(), bytes);
    assert_eq!(
        std::fs::read_dir(backups.path().join("files"))
            .unwrap()
            .count(),
        1
    );

    let target = tempfile::tempdir().unwrap();
    let data_dir = target.path().join("data");
    let config = Settings::for_tests(&data_dir).storage.store_config();
    tollgate::admin::restore_from(backups.path(), &config)
        .await
        .unwrap();
    let restored = data_dir.join("files/objects").join(&org).join(&id);
    assert_eq!(std::fs::read(&restored).unwrap(), bytes);
    let store = tollgate_storage::Store::open(&config).unwrap();
    let report = tollgate::admin::check_files(&store, &data_dir)
        .await
        .unwrap();
    assert_eq!(report.checked, 1);
    assert!(report.is_clean(), "{report:?}");
    // An object cut short, and one no record names.
    std::fs::write(&restored, &bytes[..10]).unwrap();
    std::fs::write(
        data_dir.join("files/objects").join(&org).join("stray"),
        b"x",
    )
    .unwrap();
    let report = tollgate::admin::check_files(&store, &data_dir)
        .await
        .unwrap();
    assert_eq!(report.missing.len(), 1, "{report:?}");
    assert!(report.missing[0].starts_with(&id), "{report:?}");
    assert_eq!(report.orphans, [format!("objects/{org}/stray")]);
    drop(store);

    // A backup whose file was altered does not restore.
    let mut altered = bytes.clone();
    altered[5] ^= 1;
    std::fs::write(&copy, &altered).unwrap();
    let other = tempfile::tempdir().unwrap();
    let config = Settings::for_tests(&other.path().join("data"))
        .storage
        .store_config();
    let err = tollgate::admin::restore_from(backups.path(), &config)
        .await
        .unwrap_err();
    assert!(
        format!("{err:#}").contains("not the recorded ones"),
        "{err:#}"
    );
}
