//! Releases and update feeds (issue 50, item 4): the seller's `/v1/releases/` (drafts,
//! publish with signatures, yank, tenancy and scopes), and the feeds a license key reads:
//! electron-updater's YAML, Tauri's JSON and Sparkle's appcast, with their signed links;
//! the key's product, status, expiry and entitlements decide what it sees.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use blake2::Blake2b512;
use chrono::{DateTime, Duration, Utc};
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::{Digest, Sha256, Sha512};
use tollgate::auth::Scope;
use tollgate::config::Settings;
use tollgate_actors::ManualClock;

use crate::entitlements::{flag_id, set_benefits};
use crate::helpers::{spawn_app, spawn_app_with, Reply, TestApp};
use crate::versions::{sell_key, Sale};

const RELEASES: &str = "/v1/releases/";

/// Bytes that differ from position to position, seeded.
pub(crate) fn data(len: usize, seed: usize) -> Vec<u8> {
    (0..len)
        .map(|i| ((i * 31 + seed * 7) % 251) as u8)
        .collect()
}

/// Uploads `bytes` as a downloadable file of `org` named `name` (one part); its id.
pub(crate) async fn upload(app: &TestApp, org: &str, name: &str, bytes: &[u8]) -> String {
    upload_as(app, &app.token, org, name, bytes).await
}

/// [`upload`] with `token`.
pub(crate) async fn upload_as(
    app: &TestApp,
    token: &str,
    org: &str,
    name: &str,
    bytes: &[u8],
) -> String {
    let sum = STANDARD.encode(Sha256::digest(bytes));
    let r = app
        .post_json(
            "/v1/files/",
            Some(token),
            &json!({"organization_id": org, "service": "downloadable", "name": name,
                    "mime_type": "application/octet-stream", "size": bytes.len(),
                    "checksum_sha256_base64": sum,
                    "upload": {"parts": [{"number": 1, "chunk_start": 0, "chunk_end": bytes.len()}]}}),
        )
        .await;
    r.expect(201);
    let part = &r.body["upload"]["parts"][0];
    let put = app
        .client
        .put(part["url"].as_str().unwrap())
        .body(bytes.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    let etag = put.headers()["etag"].to_str().unwrap().to_string();
    let id = r.body["id"].as_str().unwrap().to_string();
    app.post_json(
        &format!("/v1/files/{id}/uploaded"),
        Some(token),
        &json!({"id": r.body["upload"]["id"], "path": r.body["upload"]["path"],
                "parts": [{"number": 1, "checksum_etag": etag}]}),
    )
    .await
    .expect(200);
    id
}

/// A license-key benefit, a product granting it and a paid checkout in `org`, made with
/// `token` (a member's); the product's id and the granted key.
pub(crate) async fn sale_in(app: &TestApp, token: &str, org: &str) -> (String, String) {
    let t = Some(token);
    let benefit = app
        .post_json(
            "/v1/benefits/",
            t,
            &json!({"type": "license_keys", "description": "Key", "organization_id": org,
                    "properties": {"prefix": "RS"}}),
        )
        .await;
    benefit.expect(201);
    let product = app
        .post_json(
            "/v1/products/",
            t,
            &json!({"name": "Release Shop App", "organization_id": org,
                    "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 1900}]}),
        )
        .await;
    product.expect(201);
    let product = product.id();
    app.post_json(
        &format!("/v1/products/{product}/benefits"),
        t,
        &json!({"benefits": [benefit.id()]}),
    )
    .await
    .expect(200);
    let checkout = app
        .post_json("/v1/checkouts/custom/", t, &json!({"product_id": product}))
        .await;
    checkout.expect(201);
    let secret = checkout.body["client_secret"].as_str().unwrap().to_string();
    app.post_json(
        &format!("/v1/checkouts/custom/client/{secret}/confirm"),
        None,
        &json!({"customer_name": "Ada Lovelace", "customer_email": "ada@release-shop.example",
                "customer_billing_address": {"country": "FR"}, "confirmation_token_id": "tok_visa"}),
    )
    .await
    .expect(200);
    for _ in 0..100 {
        let keys = app
            .get(&format!("/v1/license-keys/?organization_id={org}"), t)
            .await
            .items();
        if let Some(k) = keys.first() {
            return (product, k["key"].as_str().unwrap().to_string());
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the sale granted no key");
}

async fn create(app: &TestApp, body: Value) -> Reply {
    app.post_json(RELEASES, Some(&app.token), &body).await
}

/// A published release of `product`: `version` on `channel` with `artifacts`
/// (`[platform, bundle, file_id]`) and `extra` fields.
pub(crate) async fn published(
    app: &TestApp,
    product: &str,
    version: &str,
    channel: &str,
    artifacts: &[(&str, &str, &str)],
    extra: Value,
) -> Value {
    let mut body = json!({"product_id": product, "version": version, "channel": channel,
                          "notes": format!("Notes of {version}"),
        "artifacts": artifacts.iter().map(|(p, b, f)| json!({"platform": p, "bundle": b, "file_id": f})).collect::<Vec<_>>()});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let r = create(app, body).await;
    r.expect(201);
    let r = app
        .post_json(
            &format!("{RELEASES}{}/publish", r.id()),
            Some(&app.token),
            &json!({}),
        )
        .await;
    r.expect(200);
    r.body.clone()
}

/// A feed request with the key in `Authorization: Bearer`.
async fn feed(app: &TestApp, path: &str, key: Option<&str>) -> reqwest::Response {
    let mut req = app.client.get(app.url(path));
    if let Some(k) = key {
        req = req.header("authorization", format!("Bearer {k}"));
    }
    req.send().await.unwrap()
}

/// The value of a top-level key of the feed's YAML (written with JSON strings).
fn yaml_value(yaml: &str, key: &str) -> Option<Value> {
    yaml.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
        .map(|v| serde_json::from_str(v).unwrap_or(Value::String(v.into())))
}

/// The `files[]` urls, sha512s and sizes of the YAML.
fn yaml_files(yaml: &str) -> Vec<(String, String, u64)> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(url) = l.strip_prefix("  - url: ") {
            let sha = lines[i + 1].strip_prefix("    sha512: ").unwrap();
            let size = lines[i + 2].strip_prefix("    size: ").unwrap();
            out.push((
                serde_json::from_str(url).unwrap(),
                serde_json::from_str(sha).unwrap(),
                size.parse().unwrap(),
            ));
        }
    }
    out
}

async fn electron_version(app: &TestApp, product: &str, file: &str, key: &str) -> Option<String> {
    let r = feed(
        app,
        &format!("/v1/updates/{product}/stable/{file}"),
        Some(key),
    )
    .await;
    if r.status() == 404 {
        return None;
    }
    assert_eq!(r.status(), 200);
    let yaml = r.text().await.unwrap();
    yaml_value(&yaml, "version").map(|v| v.as_str().unwrap().to_string())
}

pub(crate) async fn signing_key(app: &TestApp, org: &str) -> Value {
    let r = app
        .get(
            &format!("{RELEASES}signing-key?organization_id={org}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    r.body.clone()
}

fn verify_sparkle(pk_b64: &str, sig_b64: &str, bytes: &[u8]) -> bool {
    let pk: [u8; 32] = STANDARD.decode(pk_b64).unwrap().try_into().unwrap();
    let pk = VerifyingKey::from_bytes(&pk).unwrap();
    let sig = Signature::from_slice(&STANDARD.decode(sig_b64).unwrap()).unwrap();
    pk.verify(bytes, &sig).is_ok()
}

/// Tauri's check: the minisign signature (base64 of the .sig text) of `bytes` under the
/// Tauri `pubkey`, global signature and trusted comment included; answers the comment.
fn verify_tauri(pubkey: &str, signature: &str, bytes: &[u8]) -> Option<String> {
    let pub_text = String::from_utf8(STANDARD.decode(pubkey).ok()?).ok()?;
    let praw = STANDARD.decode(pub_text.lines().nth(1)?).ok()?;
    let pk = VerifyingKey::from_bytes(&praw[10..42].try_into().ok()?).ok()?;
    let text = String::from_utf8(STANDARD.decode(signature).ok()?).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let raw = STANDARD.decode(lines[1]).ok()?;
    if &raw[..2] != b"ED" || raw[2..10] != praw[2..10] {
        return None;
    }
    let sig = Signature::from_slice(&raw[10..74]).ok()?;
    pk.verify(&Blake2b512::digest(bytes), &sig).ok()?;
    let trusted = lines[2].strip_prefix("trusted comment: ")?;
    let mut global = raw[10..74].to_vec();
    global.extend_from_slice(trusted.as_bytes());
    let gsig = Signature::from_slice(&STANDARD.decode(lines[3]).ok()?).ok()?;
    pk.verify(&global, &gsig).ok()?;
    Some(trusted.to_string())
}

pub(crate) async fn set_key(app: &TestApp, key_id: &str, body: Value) {
    app.patch_json(
        &format!("/v1/license-keys/{key_id}"),
        Some(&app.token),
        &body,
    )
    .await
    .expect(200);
}

#[actix_web::test]
async fn a_release_is_drafted_published_with_signatures_and_yanked() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "rel-seller").await;
    let linux = data(3000, 1);
    let mac = data(2000, 2);
    let f_linux = upload(&app, &sale.org, "App-1.0.0.AppImage", &linux).await;
    let f_mac = upload(&app, &sale.org, "App-1.0.0.zip", &mac).await;

    // 422s: not a semantic version, unknown platform, a bundle of another OS, an unknown
    // product, a file of another organization.
    let base =
        |v: &str, arts: Value| json!({"product_id": sale.product, "version": v, "artifacts": arts});
    create(&app, base("1.0", json!([])))
        .await
        .expect_invalid_at(json!(["body", "version"]));
    create(
        &app,
        base(
            "1.0.0",
            json!([{"platform": "beos-x86", "bundle": "zip", "file_id": f_linux}]),
        ),
    )
    .await
    .expect_invalid_at(json!(["body", "artifacts", 0, "platform"]));
    create(
        &app,
        base(
            "1.0.0",
            json!([{"platform": "linux-x86_64", "bundle": "dmg", "file_id": f_linux}]),
        ),
    )
    .await
    .expect_invalid_at(json!(["body", "artifacts", 0, "bundle"]));
    create(
        &app,
        json!({"product_id": uuid::Uuid::new_v4(), "version": "1.0.0"}),
    )
    .await
    .expect_invalid_at(json!(["body", "product_id"]));
    let other = sell_key(&app, "rel-other").await;
    let f_other = upload(&app, &other.org, "Other.AppImage", &linux).await;
    create(
        &app,
        base(
            "1.0.0",
            json!([{"platform": "linux-x86_64", "bundle": "appimage", "file_id": f_other}]),
        ),
    )
    .await
    .expect_invalid_at(json!(["body", "artifacts", 0, "file_id"]));

    // A draft; the version is unique per product.
    let r = create(
        &app,
        base(
            "1.0.0",
            json!([{"platform": "linux-x86_64", "bundle": "appimage", "file_id": f_linux},
                   {"platform": "darwin-universal", "bundle": "zip", "file_id": f_mac}]),
        ),
    )
    .await;
    r.expect(201);
    let id = r.id();
    assert_eq!(r.body["status"], "draft");
    assert_eq!(r.body["channel"], "stable");
    assert_eq!(r.body["artifacts"][0]["signature"], Value::Null);
    create(&app, base("1.0.0", json!([])))
        .await
        .expect_invalid_at(json!(["body", "version"]));

    // A draft is in no feed.
    assert_eq!(
        electron_version(&app, &sale.product, "latest-linux.yml", &sale.key).await,
        None
    );

    // Changed while a draft; then published: signed.
    let r = app
        .patch_json(
            &format!("{RELEASES}{id}"),
            Some(&app.token),
            &json!({"notes": "First <b>release</b>", "build": "100"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["notes"], "First <b>release</b>");
    let r = app
        .post_json(
            &format!("{RELEASES}{id}/publish"),
            Some(&app.token),
            &json!({}),
        )
        .await;
    r.expect(200);
    let rel = r.body.clone();
    assert_eq!(rel["status"], "published");
    assert!(rel["published_at"].is_string());
    let keys = signing_key(&app, &sale.org).await;
    let a = &rel["artifacts"][0];
    assert_eq!(a["name"], "App-1.0.0.AppImage");
    assert_eq!(a["size"], 3000);
    assert_eq!(a["sha512"], STANDARD.encode(Sha512::digest(&linux)));
    assert!(verify_sparkle(
        keys["sparkle_public_ed_key"].as_str().unwrap(),
        a["ed_signature"].as_str().unwrap(),
        &linux
    ));
    assert!(!verify_sparkle(
        keys["sparkle_public_ed_key"].as_str().unwrap(),
        a["ed_signature"].as_str().unwrap(),
        &mac
    ));
    let trusted = verify_tauri(
        keys["tauri_pubkey"].as_str().unwrap(),
        a["signature"].as_str().unwrap(),
        &linux,
    )
    .expect("the minisign signature verifies");
    assert!(
        trusted.ends_with("\tfile:App-1.0.0.AppImage\tversion:1.0.0"),
        "{trusted}"
    );
    // The key is the organization's for good: the same on every read.
    assert_eq!(signing_key(&app, &sale.org).await, keys);
    // Publishing again answers it unchanged; its files no longer change; not deleted.
    let again = app
        .post_json(
            &format!("{RELEASES}{id}/publish"),
            Some(&app.token),
            &json!({}),
        )
        .await;
    again.expect(200);
    assert_eq!(again.body["artifacts"], rel["artifacts"]);
    let r = app
        .patch_json(
            &format!("{RELEASES}{id}"),
            Some(&app.token),
            &json!({"artifacts": []}),
        )
        .await;
    assert_eq!(r.expect_error(403), "NotPermitted");
    let r = app
        .send(app.request(Method::DELETE, &format!("{RELEASES}{id}"), Some(&app.token)))
        .await;
    assert_eq!(r.expect_error(403), "NotPermitted");

    // Listed, filtered by product and channel.
    let list = app
        .get(
            &format!("{RELEASES}?product_id={}&channel=stable", sale.product),
            Some(&app.token),
        )
        .await;
    list.expect(200);
    assert_eq!(list.total_count(), 1);
    let none = app
        .get(
            &format!("{RELEASES}?product_id={}&channel=beta", sale.product),
            Some(&app.token),
        )
        .await;
    assert_eq!(none.total_count(), 0);

    // A draft without uploaded files cannot be published; a draft is deleted.
    let pending = app
        .post_json(
            "/v1/files/",
            Some(&app.token),
            &json!({"organization_id": sale.org, "service": "downloadable", "name": "x.deb",
                    "mime_type": "application/octet-stream", "size": 3,
                    "upload": {"parts": [{"number": 1, "chunk_start": 0, "chunk_end": 3}]}}),
        )
        .await;
    pending.expect(201);
    let d = create(
        &app,
        base(
            "1.1.0",
            json!([{"platform": "linux-x86_64", "bundle": "deb", "file_id": pending.id()}]),
        ),
    )
    .await;
    d.expect(201);
    app.post_json(
        &format!("{RELEASES}{}/publish", d.id()),
        Some(&app.token),
        &json!({}),
    )
    .await
    .expect_invalid_at(json!(["body", "artifacts", 0, "file_id"]));
    // Two files of one name: their links would be the same; refused before any signing.
    let same_a = upload(&app, &sale.org, "Same.zip", &linux).await;
    let same_b = upload(&app, &sale.org, "Same.zip", &mac).await;
    let dup = create(
        &app,
        base(
            "1.2.0",
            json!([{"platform": "linux-x86_64", "bundle": "zip", "file_id": same_a},
                   {"platform": "darwin-universal", "bundle": "zip", "file_id": same_b}]),
        ),
    )
    .await;
    dup.expect(201);
    app.post_json(
        &format!("{RELEASES}{}/publish", dup.id()),
        Some(&app.token),
        &json!({}),
    )
    .await
    .expect_invalid_at(json!(["body", "artifacts"]));
    app.send(app.request(
        Method::DELETE,
        &format!("{RELEASES}{}", d.id()),
        Some(&app.token),
    ))
    .await
    .expect(204);
    app.get(&format!("{RELEASES}{}", d.id()), Some(&app.token))
        .await
        .expect_error(404);

    // Tenancy and scopes: another organization's token sees nothing; no products scope 403.
    let (_, stranger) = app
        .new_user_with_scopes(
            "stranger@rel.example",
            &[
                Scope::ProductsRead,
                Scope::ProductsWrite,
                Scope::OrganizationsWrite,
            ],
        )
        .await;
    app.created_org_as(&stranger, "Stranger", "rel-stranger")
        .await;
    app.get(&format!("{RELEASES}{id}"), Some(&stranger))
        .await
        .expect_error(404);
    app.post_json(&format!("{RELEASES}{id}/yank"), Some(&stranger), &json!({}))
        .await
        .expect_error(404);
    app.get(
        &format!("{RELEASES}signing-key?organization_id={}", sale.org),
        Some(&stranger),
    )
    .await
    .expect_error(404);
    assert_eq!(app.get(RELEASES, Some(&stranger)).await.total_count(), 0);
    let (_, reader) = app
        .new_user_with_scopes("files@rel.example", &[Scope::FilesRead])
        .await;
    let r = app.get(RELEASES, Some(&reader)).await;
    assert_eq!(r.status.as_u16(), 403);

    // Yanked: out of every feed at once, its links stop.
    let yaml = feed(
        &app,
        &format!("/v1/updates/{}/stable/latest-linux.yml", sale.product),
        Some(&sale.key),
    )
    .await
    .text()
    .await
    .unwrap();
    let (url, _, _) = yaml_files(&yaml).remove(0);
    assert_eq!(app.client.get(&url).send().await.unwrap().status(), 200);
    let r = app
        .post_json(
            &format!("{RELEASES}{id}/yank"),
            Some(&app.token),
            &json!({}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["status"], "yanked");
    assert_eq!(
        electron_version(&app, &sale.product, "latest-linux.yml", &sale.key).await,
        None
    );
    assert_eq!(app.client.get(&url).send().await.unwrap().status(), 404);
    let r = app
        .post_json(
            &format!("{RELEASES}{id}/publish"),
            Some(&app.token),
            &json!({}),
        )
        .await;
    assert_eq!(r.expect_error(403), "NotPermitted");
}

/// Two products of one organization, the sale's key granted by the first.
async fn second_product(app: &TestApp, sale: &Sale) -> String {
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": "Other", "organization_id": sale.org,
                    "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 900}]}),
        )
        .await;
    r.expect(201);
    r.id()
}

#[actix_web::test]
async fn feeds_answer_a_granted_key_of_the_product_and_nobody_else() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "feed-auth").await;
    let bytes = data(1500, 3);
    let f = upload(&app, &sale.org, "App-1.0.0.AppImage", &bytes).await;
    published(
        &app,
        &sale.product,
        "1.0.0",
        "stable",
        &[("linux-x86_64", "appimage", &f)],
        json!({}),
    )
    .await;
    let path = format!("/v1/updates/{}/stable/latest-linux.yml", sale.product);

    // The key in `Authorization: Bearer`, `License`, or `?key=`.
    let r = feed(&app, &path, Some(&sale.key)).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "private, no-store");
    let license = app
        .client
        .get(app.url(&path))
        .header("authorization", format!("License {}", sale.key))
        .send()
        .await
        .unwrap();
    assert_eq!(license.status(), 200);
    let query = app
        .client
        .get(app.url(&format!("{path}?key={}", sale.key)))
        .send()
        .await
        .unwrap();
    assert_eq!(query.status(), 200);

    // No key, an unknown key: 401.
    assert_eq!(feed(&app, &path, None).await.status(), 401);
    assert_eq!(feed(&app, &path, Some("TG-NOT-A-KEY")).await.status(), 401);
    // A key of another organization's product: unknown here, 401.
    let other = sell_key(&app, "feed-other").await;
    assert_eq!(feed(&app, &path, Some(&other.key)).await.status(), 401);
    // The key on a product of its organization that does not grant it: 404.
    let p2 = second_product(&app, &sale).await;
    let r = feed(
        &app,
        &format!("/v1/updates/{p2}/stable/latest-linux.yml"),
        Some(&sale.key),
    )
    .await;
    assert_eq!(r.status(), 404);
    let r = feed(
        &app,
        &format!("/v1/updates/{p2}/stable/tauri/linux/x86_64/0.1.0"),
        Some(&sale.key),
    )
    .await;
    assert_eq!(r.status(), 404);
    // An unknown product: nothing to tell apart from a wrong key.
    let r = feed(
        &app,
        &format!(
            "/v1/updates/{}/stable/latest-linux.yml",
            uuid::Uuid::new_v4()
        ),
        Some(&sale.key),
    )
    .await;
    assert_eq!(r.status(), 401);

    // Reading feeds is not a validation: nothing counted.
    let k = app
        .get(
            &format!("/v1/license-keys/{}", sale.key_id),
            Some(&app.token),
        )
        .await;
    assert_eq!(k.body["validations"], 0, "{}", k.body);
    assert_eq!(k.body["last_validated_at"], Value::Null);

    // The download link works for the file, byte for byte; tampered 403, with the key
    // header instead of a signature 200, without either 401.
    let yaml = feed(&app, &path, Some(&sale.key))
        .await
        .text()
        .await
        .unwrap();
    let (url, sha, size) = yaml_files(&yaml).remove(0);
    assert_eq!(size, 1500);
    assert_eq!(sha, STANDARD.encode(Sha512::digest(&bytes)));
    assert!(url.contains("/App-1.0.0.AppImage?"), "{url}");
    let got = app.client.get(&url).send().await.unwrap();
    assert_eq!(got.status(), 200);
    assert_eq!(got.headers()["cache-control"], "private, no-store");
    assert_eq!(got.bytes().await.unwrap().to_vec(), bytes);
    let tampered = url.replace("signature=", "signature=A");
    assert_eq!(
        app.client.get(&tampered).send().await.unwrap().status(),
        403
    );
    let bare = url.split('?').next().unwrap().to_string();
    assert_eq!(app.client.get(&bare).send().await.unwrap().status(), 401);
    let with_key = app
        .client
        .get(&bare)
        .header("authorization", format!("Bearer {}", sale.key))
        .send()
        .await
        .unwrap();
    assert_eq!(with_key.status(), 200);
    assert_eq!(with_key.bytes().await.unwrap().to_vec(), bytes);

    // Revoked: the feed and the link it gave stop at once.
    set_key(&app, &sale.key_id, json!({"status": "revoked"})).await;
    assert_eq!(feed(&app, &path, Some(&sale.key)).await.status(), 403);
    assert_eq!(app.client.get(&url).send().await.unwrap().status(), 403);
    set_key(&app, &sale.key_id, json!({"status": "disabled"})).await;
    assert_eq!(feed(&app, &path, Some(&sale.key)).await.status(), 403);
    set_key(&app, &sale.key_id, json!({"status": "granted"})).await;
    assert_eq!(feed(&app, &path, Some(&sale.key)).await.status(), 200);
}

#[actix_web::test]
async fn channels_are_cumulative_and_each_format_lists_what_the_key_may_have() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "feed-chan").await;
    let mut files = Vec::new();
    for (i, v) in ["1.0.0", "1.1.0-beta.1", "1.2.0-alpha.1"]
        .iter()
        .enumerate()
    {
        let lin = data(1000 + i, i);
        let mac = data(800 + i, 10 + i);
        let fl = upload(&app, &sale.org, &format!("App-{v}.AppImage"), &lin).await;
        let fm = upload(&app, &sale.org, &format!("App-{v}.zip"), &mac).await;
        let fw = upload(&app, &sale.org, &format!("App-{v}.exe"), &lin).await;
        files.push((fl, fm, fw, lin, mac));
    }
    for ((v, c), (fl, fm, fw, _, _)) in [
        ("1.0.0", "stable"),
        ("1.1.0-beta.1", "beta"),
        ("1.2.0-alpha.1", "alpha"),
    ]
    .iter()
    .zip(&files)
    {
        published(
            &app,
            &sale.product,
            v,
            c,
            &[
                ("linux-x86_64", "appimage", fl),
                ("darwin-universal", "zip", fm),
                ("windows-x86_64", "nsis", fw),
            ],
            json!({"build": format!("{}", v.len())}),
        )
        .await;
    }
    // A draft 2.0.0 is in no channel.
    let fd = upload(&app, &sale.org, "App-2.0.0.AppImage", &data(10, 9)).await;
    create(
        &app,
        json!({"product_id": sale.product, "version": "2.0.0",
               "artifacts": [{"platform": "linux-x86_64", "bundle": "appimage", "file_id": fd}]}),
    )
    .await
    .expect(201);

    let p = &sale.product;
    let ver = |yaml: &str| yaml_value(yaml, "version").unwrap();
    let get = |path: String| {
        let app = &app;
        let key = sale.key.clone();
        async move {
            let r = feed(app, &path, Some(&key)).await;
            assert_eq!(r.status(), 200, "{path}");
            r.text().await.unwrap()
        }
    };
    // electron: the channel of the path, or of the file (`beta-linux.yml`); `latest` is stable.
    assert_eq!(
        ver(&get(format!("/v1/updates/{p}/stable/latest-linux.yml")).await),
        "1.0.0"
    );
    assert_eq!(
        ver(&get(format!("/v1/updates/{p}/latest/latest-linux.yml")).await),
        "1.0.0"
    );
    assert_eq!(
        ver(&get(format!("/v1/updates/{p}/beta/latest-linux.yml")).await),
        "1.1.0-beta.1"
    );
    assert_eq!(
        ver(&get(format!("/v1/updates/{p}/stable/beta-linux.yml")).await),
        "1.1.0-beta.1"
    );
    assert_eq!(
        ver(&get(format!("/v1/updates/{p}/alpha/latest.yml")).await),
        "1.2.0-alpha.1"
    );
    let mac = get(format!("/v1/updates/{p}/stable/latest-mac.yml")).await;
    assert!(yaml_files(&mac)[0].0.contains("/App-1.0.0.zip?"), "{mac}");
    let win = get(format!("/v1/updates/{p}/stable/latest.yml")).await;
    assert!(yaml_files(&win)[0].0.contains("/App-1.0.0.exe?"), "{win}");
    assert_eq!(yaml_value(&win, "releaseNotes").unwrap(), "Notes of 1.0.0");
    // No artifact for the platform: 404.
    let r = feed(
        &app,
        &format!("/v1/updates/{p}/stable/latest-linux-arm64.yml"),
        Some(&sale.key),
    )
    .await;
    assert_eq!(r.status(), 404);
    let r = feed(
        &app,
        &format!("/v1/updates/{p}/nightly/latest.yml"),
        Some(&sale.key),
    )
    .await;
    assert_eq!(r.status(), 422);

    // Tauri: 200 with the newest when newer, else 204; its signature verifies.
    let keys = signing_key(&app, &sale.org).await;
    let r = feed(
        &app,
        &format!("/v1/updates/{p}/beta/tauri/linux/x86_64/1.0.0"),
        Some(&sale.key),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "private, no-store");
    let t: Value = r.json().await.unwrap();
    assert_eq!(t["version"], "1.1.0-beta.1");
    assert_eq!(t["notes"], "Notes of 1.1.0-beta.1");
    DateTime::parse_from_rfc3339(t["pub_date"].as_str().unwrap()).unwrap();
    let body = app
        .client
        .get(t["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(body.status(), 200);
    let body = body.bytes().await.unwrap().to_vec();
    assert_eq!(body, files[1].3);
    let trusted = verify_tauri(
        keys["tauri_pubkey"].as_str().unwrap(),
        t["signature"].as_str().unwrap(),
        &body,
    )
    .expect("verifies");
    assert!(trusted.ends_with("version:1.1.0-beta.1"), "{trusted}");
    let r = feed(
        &app,
        &format!("/v1/updates/{p}/beta/tauri/linux/x86_64/1.1.0-beta.1"),
        Some(&sale.key),
    )
    .await;
    assert_eq!(r.status(), 204);
    let r = feed(
        &app,
        &format!("/v1/updates/{p}/stable/tauri/linux/x86_64/1.1.0"),
        Some(&sale.key),
    )
    .await;
    assert_eq!(r.status(), 204);
    let r = feed(
        &app,
        &format!("/v1/updates/{p}/stable/tauri/darwin/aarch64/0.9.0"),
        Some(&sale.key),
    )
    .await;
    assert_eq!(r.status(), 204, "no app_tar_gz for macOS: nothing");

    // Sparkle: every allowed release, newest first, the channel on non-stable items, the
    // signature of each archive.
    let xml = get(format!("/v1/updates/{p}/alpha/appcast.xml")).await;
    let versions: Vec<&str> = xml
        .split("<sparkle:shortVersionString>")
        .skip(1)
        .map(|s| s.split('<').next().unwrap())
        .collect();
    assert_eq!(versions, ["1.2.0-alpha.1", "1.1.0-beta.1", "1.0.0"]);
    assert_eq!(xml.matches("<sparkle:channel>").count(), 2);
    let stable = get(format!("/v1/updates/{p}/stable/appcast.xml")).await;
    assert_eq!(stable.matches("<item>").count(), 1);
    let sig = stable
        .split("sparkle:edSignature=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert!(verify_sparkle(
        keys["sparkle_public_ed_key"].as_str().unwrap(),
        sig,
        &files[0].4
    ));
    let url = stable
        .split("<enclosure url=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .replace("&amp;", "&");
    let got = app.client.get(&url).send().await.unwrap();
    assert_eq!(got.bytes().await.unwrap().to_vec(), files[0].4);
}

#[actix_web::test]
async fn a_key_sees_the_releases_published_before_its_expiry_even_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let s = Settings::for_tests(dir.path());
    let start = Utc::now();
    let (clock, shared) = ManualClock::shared(start);
    let app = spawn_app_with(dir, s, shared).await;
    let sale = sell_key(&app, "feed-expiry").await;
    let p = sale.product.clone();
    let mut ids = Vec::new();
    for v in ["1.0.0", "1.1.0"] {
        let f = upload(&app, &sale.org, &format!("App-{v}.AppImage"), &data(500, 1)).await;
        ids.push(f);
    }
    published(
        &app,
        &p,
        "1.0.0",
        "stable",
        &[("linux-x86_64", "appimage", &ids[0])],
        json!({}),
    )
    .await;
    // A year of updates from the sale.
    let expiry = start + Duration::days(365);
    set_key(
        &app,
        &sale.key_id,
        json!({"expires_at": expiry.to_rfc3339()}),
    )
    .await;
    clock.set(start + Duration::days(400));
    // Released after the key expired: not for it; the key still reads the feed.
    published(
        &app,
        &p,
        "1.1.0",
        "stable",
        &[("linux-x86_64", "appimage", &ids[1])],
        json!({}),
    )
    .await;
    assert_eq!(
        electron_version(&app, &p, "latest-linux.yml", &sale.key)
            .await
            .as_deref(),
        Some("1.0.0")
    );
    let r = feed(
        &app,
        &format!("/v1/updates/{p}/stable/tauri/linux/x86_64/1.0.0"),
        Some(&sale.key),
    )
    .await;
    assert_eq!(r.status(), 204);
    // A fix backdated to before the expiry reaches it.
    let f = upload(&app, &sale.org, "App-1.0.1.AppImage", &data(400, 5)).await;
    published(
        &app,
        &p,
        "1.0.1",
        "stable",
        &[("linux-x86_64", "appimage", &f)],
        json!({"backdated_to": (start + Duration::days(100)).to_rfc3339()}),
    )
    .await;
    assert_eq!(
        electron_version(&app, &p, "latest-linux.yml", &sale.key)
            .await
            .as_deref(),
        Some("1.0.1")
    );
    // The key renewed (a later expiry): it sees 1.1.0.
    set_key(
        &app,
        &sale.key_id,
        json!({"expires_at": (start + Duration::days(800)).to_rfc3339()}),
    )
    .await;
    assert_eq!(
        electron_version(&app, &p, "latest-linux.yml", &sale.key)
            .await
            .as_deref(),
        Some("1.1.0")
    );
    // Without expiry: everything.
    set_key(&app, &sale.key_id, json!({"expires_at": null})).await;
    assert_eq!(
        electron_version(&app, &p, "latest-linux.yml", &sale.key)
            .await
            .as_deref(),
        Some("1.1.0")
    );
}

#[actix_web::test]
async fn a_release_with_entitlements_is_for_keys_whose_purchase_grants_them() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "feed-flags").await;
    let pro = flag_id(&app, &sale.org, "Pro builds", json!({})).await;
    let team = flag_id(&app, &sale.org, "Team builds", json!({})).await;
    set_benefits(&app, &sale.product, &[&sale.benefit, &pro]).await;
    let p = &sale.product;
    let f1 = upload(&app, &sale.org, "App-1.0.0.AppImage", &data(100, 1)).await;
    let f2 = upload(&app, &sale.org, "App-1.1.0.AppImage", &data(100, 2)).await;
    let f3 = upload(&app, &sale.org, "App-1.2.0.AppImage", &data(100, 3)).await;
    published(
        &app,
        p,
        "1.0.0",
        "stable",
        &[("linux-x86_64", "appimage", &f1)],
        json!({}),
    )
    .await;
    published(
        &app,
        p,
        "1.1.0",
        "stable",
        &[("linux-x86_64", "appimage", &f2)],
        json!({"required_benefit_ids": [pro]}),
    )
    .await;
    published(
        &app,
        p,
        "1.2.0",
        "stable",
        &[("linux-x86_64", "appimage", &f3)],
        json!({"required_benefit_ids": [pro, team]}),
    )
    .await;
    // The key's purchase grants `pro`, not `team`.
    assert_eq!(
        electron_version(&app, p, "latest-linux.yml", &sale.key)
            .await
            .as_deref(),
        Some("1.1.0")
    );
    // Not a feature flag of the organization: 422.
    create(
        &app,
        json!({"product_id": p, "version": "3.0.0", "required_benefit_ids": [sale.benefit]}),
    )
    .await
    .expect_invalid_at(json!(["body", "required_benefit_ids", 0]));
    // The product grants `team` too: its keys see 1.2.0 at once.
    set_benefits(&app, p, &[&sale.benefit, &pro, &team]).await;
    assert_eq!(
        electron_version(&app, p, "latest-linux.yml", &sale.key)
            .await
            .as_deref(),
        Some("1.2.0")
    );
    // No longer `pro`: back to 1.0.0.
    set_benefits(&app, p, &[&sale.benefit]).await;
    assert_eq!(
        electron_version(&app, p, "latest-linux.yml", &sale.key)
            .await
            .as_deref(),
        Some("1.0.0")
    );
}

/// A file of several parts (11 MiB: read back by the backend in many chunks, twice) is
/// signed at publish without being held whole: both signatures verify over its bytes.
#[actix_web::test]
async fn a_large_file_is_signed_from_its_chunks() {
    const MIB: usize = 1024 * 1024;
    let app = spawn_app().await;
    let sale = sell_key(&app, "feed-large").await;
    let bytes = data(11 * MIB + 3, 7);
    let cuts = [0, 5 * MIB, 10 * MIB, bytes.len()];
    let parts: Vec<Value> = cuts
        .windows(2)
        .enumerate()
        .map(|(i, w)| json!({"number": i + 1, "chunk_start": w[0], "chunk_end": w[1]}))
        .collect();
    let r = app
        .post_json(
            "/v1/files/",
            Some(&app.token),
            &json!({"organization_id": sale.org, "service": "downloadable", "name": "Big.AppImage",
                    "mime_type": "application/octet-stream", "size": bytes.len(),
                    "upload": {"parts": parts}}),
        )
        .await;
    r.expect(201);
    let mut done = Vec::new();
    for (i, p) in r.body["upload"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let put = app
            .client
            .put(p["url"].as_str().unwrap())
            .body(bytes[cuts[i]..cuts[i + 1]].to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(put.status(), 200);
        let etag = put.headers()["etag"].to_str().unwrap().to_string();
        done.push(json!({"number": i + 1, "checksum_etag": etag}));
    }
    let file = r.id();
    app.post_json(
        &format!("/v1/files/{file}/uploaded"),
        Some(&app.token),
        &json!({"id": r.body["upload"]["id"], "path": r.body["upload"]["path"], "parts": done}),
    )
    .await
    .expect(200);
    let rel = published(
        &app,
        &sale.product,
        "3.0.0",
        "stable",
        &[("linux-x86_64", "appimage", &file)],
        json!({}),
    )
    .await;
    let keys = signing_key(&app, &sale.org).await;
    let a = &rel["artifacts"][0];
    assert_eq!(a["size"], bytes.len());
    assert!(verify_sparkle(
        keys["sparkle_public_ed_key"].as_str().unwrap(),
        a["ed_signature"].as_str().unwrap(),
        &bytes
    ));
    let trusted = verify_tauri(
        keys["tauri_pubkey"].as_str().unwrap(),
        a["signature"].as_str().unwrap(),
        &bytes,
    );
    assert!(trusted.is_some_and(|t| t.ends_with("version:3.0.0")));
    let mut other = bytes.clone();
    other[6 * MIB] ^= 1;
    assert!(!verify_sparkle(
        keys["sparkle_public_ed_key"].as_str().unwrap(),
        a["ed_signature"].as_str().unwrap(),
        &other
    ));
}

/// A customer portal session (`polar_cst_…`) for `customer`, opened by the seller.
async fn portal_session(app: &TestApp, customer: &str) -> String {
    let r = app
        .post_json(
            "/v1/customer-sessions/",
            Some(&app.token),
            &json!({"customer_id": customer}),
        )
        .await;
    r.expect(201);
    r.body["token"].as_str().unwrap().to_string()
}

/// A second paid checkout of `sale`'s product by the same buyer: the id of the new key.
async fn buy_again(app: &TestApp, sale: &Sale, slug: &str) -> String {
    let checkout = app
        .post_json(
            "/v1/checkouts/custom/",
            Some(&app.token),
            &json!({"product_id": sale.product}),
        )
        .await;
    checkout.expect(201);
    let secret = checkout.body["client_secret"].as_str().unwrap().to_string();
    app.post_json(
        &format!("/v1/checkouts/custom/client/{secret}/confirm"),
        None,
        &json!({"customer_name": "Ada Lovelace", "customer_email": format!("ada@{slug}.example"),
                "customer_billing_address": {"country": "FR"}, "confirmation_token_id": "tok_visa"}),
    )
    .await
    .expect(200);
    for _ in 0..100 {
        let keys = app
            .get(
                &format!("/v1/license-keys/?organization_id={}", sale.org),
                Some(&app.token),
            )
            .await
            .items();
        if let Some(k) = keys.iter().find(|k| k["id"] != sale.key_id.as_str()) {
            assert_eq!(k["customer_id"], sale.customer.as_str(), "{k}");
            return k["id"].as_str().unwrap().to_string();
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the second sale granted no key");
}

#[actix_web::test]
async fn a_portal_session_reads_the_feeds_of_products_its_customer_holds_a_key_of() {
    let dir = tempfile::tempdir().unwrap();
    let s = Settings::for_tests(dir.path());
    let start = Utc::now();
    let (clock, shared) = ManualClock::shared(start);
    let app = spawn_app_with(dir, s, shared).await;
    let sale = sell_key(&app, "feed-cst").await;
    let p = sale.product.clone();
    let bytes = data(1200, 9);
    let f = upload(&app, &sale.org, "App-1.0.0.AppImage", &bytes).await;
    published(
        &app,
        &p,
        "1.0.0",
        "stable",
        &[("linux-x86_64", "appimage", &f)],
        json!({}),
    )
    .await;
    let path = format!("/v1/updates/{p}/stable/latest-linux.yml");
    let tauri = format!("/v1/updates/{p}/stable/tauri/linux/x86_64/0.1.0");
    let appcast = format!("/v1/updates/{p}/stable/appcast.xml");

    // Denied first. Another organization's customer: 404 (the product is not told).
    let other = sell_key(&app, "feed-cst-other").await;
    let others = portal_session(&app, &other.customer).await;
    for q in [&path, &tauri, &appcast] {
        assert_eq!(feed(&app, q, Some(&others)).await.status(), 404, "{q}");
    }
    // A customer of the organization without a key: 404.
    let c = app
        .post_json(
            "/v1/customers/",
            Some(&app.token),
            &json!({"email": "nokey@feed-cst.example", "organization_id": sale.org}),
        )
        .await;
    c.expect(201);
    let nokey = portal_session(&app, &c.id()).await;
    for q in [&path, &tauri, &appcast] {
        assert_eq!(feed(&app, q, Some(&nokey)).await.status(), 404, "{q}");
    }
    // The customer whose key is revoked (or disabled): 404, it holds no granted key.
    let cst = portal_session(&app, &sale.customer).await;
    set_key(&app, &sale.key_id, json!({"status": "revoked"})).await;
    assert_eq!(feed(&app, &path, Some(&cst)).await.status(), 404);
    set_key(&app, &sale.key_id, json!({"status": "disabled"})).await;
    assert_eq!(feed(&app, &tauri, Some(&cst)).await.status(), 404);
    // No credentials, an unknown session: 401.
    assert_eq!(feed(&app, &path, None).await.status(), 401);
    let unknown = feed(&app, &path, Some("polar_cst_notasession")).await;
    assert_eq!(unknown.status(), 401);

    // Granted again: the session reads every format.
    set_key(&app, &sale.key_id, json!({"status": "granted"})).await;
    let r = feed(&app, &path, Some(&cst)).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "private, no-store");
    let yaml = r.text().await.unwrap();
    assert_eq!(yaml_value(&yaml, "version"), Some(json!("1.0.0")));
    let r = feed(&app, &tauri, Some(&cst)).await;
    assert_eq!(r.status(), 200);
    let update: Value = r.json().await.unwrap();
    assert_eq!(update["version"], "1.0.0");
    assert_eq!(feed(&app, &appcast, Some(&cst)).await.status(), 200);
    // Another product of the organization, which the key is not of: 404.
    let p2 = second_product(&app, &sale).await;
    let r = feed(
        &app,
        &format!("/v1/updates/{p2}/stable/latest-linux.yml"),
        Some(&cst),
    )
    .await;
    assert_eq!(r.status(), 404);

    // The link names the customer, never the session; it downloads without credentials,
    // as does the session itself on the bare path.
    let (url, _, size) = yaml_files(&yaml).remove(0);
    assert_eq!(size, 1200);
    assert!(
        url.contains(&format!("customer_id={}", sale.customer)),
        "{url}"
    );
    assert!(!url.contains(&cst) && !url.contains("key_id="), "{url}");
    let got = app.client.get(&url).send().await.unwrap();
    assert_eq!(got.status(), 200);
    assert_eq!(got.bytes().await.unwrap().to_vec(), bytes);
    assert_eq!(
        update["url"].as_str().map(|u| u.contains("customer_id=")),
        Some(true)
    );
    let bare = url.split('?').next().unwrap().to_string();
    let with_session = app
        .client
        .get(&bare)
        .header("authorization", format!("Bearer {cst}"))
        .send()
        .await
        .unwrap();
    assert_eq!(with_session.status(), 200);
    assert_eq!(with_session.bytes().await.unwrap().to_vec(), bytes);
    // Another customer's id put in the link: forged, 403.
    let forged = url.replace(&sale.customer, &other.customer);
    assert_eq!(app.client.get(&forged).send().await.unwrap().status(), 403);
    // The link checks the customer's keys at download: revoked since, 404 at once.
    set_key(&app, &sale.key_id, json!({"status": "revoked"})).await;
    assert_eq!(app.client.get(&url).send().await.unwrap().status(), 404);
    set_key(&app, &sale.key_id, json!({"status": "granted"})).await;
    assert_eq!(app.client.get(&url).send().await.unwrap().status(), 200);

    // Two keys of the product: what they allow together. The first has a year of
    // updates, the second two; 1.1.0 comes out after the first expired.
    let second = buy_again(&app, &sale, "feed-cst").await;
    set_key(
        &app,
        &sale.key_id,
        json!({"expires_at": (start + Duration::days(365)).to_rfc3339()}),
    )
    .await;
    set_key(
        &app,
        &second,
        json!({"expires_at": (start + Duration::days(730)).to_rfc3339()}),
    )
    .await;
    clock.set(start + Duration::days(400));
    let f = upload(&app, &sale.org, "App-1.1.0.AppImage", &data(700, 2)).await;
    published(
        &app,
        &p,
        "1.1.0",
        "stable",
        &[("linux-x86_64", "appimage", &f)],
        json!({}),
    )
    .await;
    // (The session of an hour has run out meanwhile: 401; a new one reads.)
    assert_eq!(feed(&app, &path, Some(&cst)).await.status(), 401);
    let cst = portal_session(&app, &sale.customer).await;
    assert_eq!(
        electron_version(&app, &p, "latest-linux.yml", &cst)
            .await
            .as_deref(),
        Some("1.1.0")
    );
    assert_eq!(
        electron_version(&app, &p, "latest-linux.yml", &sale.key)
            .await
            .as_deref(),
        Some("1.0.0")
    );
    // The second key revoked: the first's rule alone.
    set_key(&app, &second, json!({"status": "revoked"})).await;
    assert_eq!(
        electron_version(&app, &p, "latest-linux.yml", &cst)
            .await
            .as_deref(),
        Some("1.0.0")
    );
}

#[actix_web::test]
async fn tauris_static_latest_json_lists_the_newest_release_per_platform_and_bundle() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "feed-latest").await;
    let p = sale.product.clone();
    let latest = format!("/v1/updates/{p}/stable/tauri/latest.json");
    // Nothing published yet: 204, Tauri's "no update". Without a key: 401.
    assert_eq!(feed(&app, &latest, Some(&sale.key)).await.status(), 204);
    assert_eq!(feed(&app, &latest, None).await.status(), 401);
    let files: Vec<(&str, &str, &str, Vec<u8>)> = vec![
        (
            "linux-x86_64",
            "appimage",
            "App_1.0.0_amd64.AppImage",
            data(900, 1),
        ),
        ("linux-x86_64", "deb", "App_1.0.0_amd64.deb", data(800, 2)),
        (
            "darwin-aarch64",
            "app_tar_gz",
            "App.app.tar.gz",
            data(700, 3),
        ),
        (
            "windows-x86_64",
            "nsis",
            "App_1.0.0_x64-setup.exe",
            data(600, 4),
        ),
        // Not a bundle Tauri installs: not listed.
        (
            "darwin-aarch64",
            "dmg",
            "App_1.0.0_aarch64.dmg",
            data(500, 5),
        ),
    ];
    let mut artifacts = Vec::new();
    for (platform, bundle, name, bytes) in &files {
        let id = upload(&app, &sale.org, name, bytes).await;
        artifacts.push((*platform, *bundle, id));
    }
    let refs: Vec<(&str, &str, &str)> = artifacts
        .iter()
        .map(|(p, b, f)| (*p, *b, f.as_str()))
        .collect();
    published(&app, &p, "1.0.0", "stable", &refs, json!({})).await;
    // A beta is not in the stable file.
    let f = upload(&app, &sale.org, "App_1.1.0_amd64.AppImage", &data(300, 6)).await;
    published(
        &app,
        &p,
        "1.1.0-beta.1",
        "beta",
        &[("linux-x86_64", "appimage", &f)],
        json!({}),
    )
    .await;

    let r = feed(&app, &latest, Some(&sale.key)).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "private, no-store");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["version"], "1.0.0");
    assert_eq!(body["notes"], "Notes of 1.0.0");
    assert!(DateTime::parse_from_rfc3339(body["pub_date"].as_str().unwrap()).is_ok());
    let platforms = body["platforms"].as_object().unwrap();
    let mut keys: Vec<&str> = platforms.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "darwin-aarch64",
            "darwin-aarch64-app",
            "linux-x86_64",
            "linux-x86_64-appimage",
            "linux-x86_64-deb",
            "windows-x86_64",
            "windows-x86_64-nsis"
        ]
    );
    // `{os}-{arch}` is the preferred bundle; every entry downloads its file, whose
    // signature verifies under the organization's Tauri key.
    assert_eq!(
        platforms["linux-x86_64"]["url"],
        platforms["linux-x86_64-appimage"]["url"]
    );
    let pubkey = signing_key(&app, &sale.org).await["tauri_pubkey"]
        .as_str()
        .unwrap()
        .to_string();
    for (key, name) in [
        ("linux-x86_64-appimage", "App_1.0.0_amd64.AppImage"),
        ("linux-x86_64-deb", "App_1.0.0_amd64.deb"),
        ("darwin-aarch64-app", "App.app.tar.gz"),
        ("windows-x86_64-nsis", "App_1.0.0_x64-setup.exe"),
    ] {
        let bytes = &files.iter().find(|f| f.2 == name).unwrap().3;
        let url = platforms[key]["url"].as_str().unwrap();
        let got = app.client.get(url).send().await.unwrap();
        assert_eq!(got.status(), 200, "{key}");
        assert_eq!(&got.bytes().await.unwrap().to_vec(), bytes, "{key}");
        let sig = platforms[key]["signature"].as_str().unwrap();
        let comment = verify_tauri(&pubkey, sig, bytes).expect("the signature verifies");
        assert!(comment.contains("version:1.0.0"), "{comment}");
        assert!(verify_tauri(&pubkey, sig, &data(10, 0)).is_none());
    }
    // The beta file shows the beta; a portal session reads it too.
    let cst = portal_session(&app, &sale.customer).await;
    let r = feed(
        &app,
        &format!("/v1/updates/{p}/beta/tauri/latest.json"),
        Some(&cst),
    )
    .await;
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["version"], "1.1.0-beta.1");
    let keys: Vec<&String> = body["platforms"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["linux-x86_64", "linux-x86_64-appimage"]);
    // Another organization's session: 404.
    let other = sell_key(&app, "feed-latest-other").await;
    let others = portal_session(&app, &other.customer).await;
    assert_eq!(feed(&app, &latest, Some(&others)).await.status(), 404);
}
