//! Issue 50, item 3: the `downloadables` benefit (Polar's properties and 422s), the customer
//! portal's downloadables list (Polar's `DownloadableRead`) and its signed links: a download
//! is byte-identical and counted; the same link stops at once when a refund revokes the
//! benefits or the subscription ends; a tampered link is 404, a malformed one 400, an
//! expired one 410; another customer sees nothing of it; the rate limits answer 429; and a
//! 200 MiB file goes through the link in bounded memory (real binary), on the local
//! directory and on an S3-speaking store (a 302 to a presigned GET).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{Duration, Utc};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tollgate::config::Settings;
use tollgate_actors::ManualClock;

use crate::benefit_grants::{buy, order_of, revoke, subscription_of};
use crate::binary::{big_part, server_pid, vm_hwm_kib, MIB5};
use crate::helpers::{spawn_app, spawn_app_with, Reply, TestApp};

const PORTAL: &str = "/v1/customer-portal/downloadables/";
const BENEFITS: &str = "/v1/benefits/";

fn b64(bytes: &[u8]) -> String {
    STANDARD.encode(Sha256::digest(bytes))
}

/// Bytes that differ from position to position.
fn data(len: usize, seed: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 31 + seed) % 251) as u8).collect()
}

/// A request to `base` + `path`, with a bearer token if given.
fn request(
    http: &reqwest::Client,
    base: &str,
    method: Method,
    path: &str,
    token: Option<&str>,
) -> reqwest::RequestBuilder {
    let req = http.request(method, format!("{base}{path}"));
    match token {
        Some(t) => req.bearer_auth(t),
        None => req,
    }
}

/// Creates a `downloadable` file of `size` bytes in `parts` parts (each `part(i)`, all 5
/// MiB but the last), sends them and marks it uploaded; answers its id.
async fn upload(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    org: &str,
    name: &str,
    size: usize,
    part: &dyn Fn(usize) -> Vec<u8>,
) -> String {
    let count = size.div_ceil(MIB5).max(1);
    let mut whole = Sha256::new();
    let mut plan = Vec::new();
    for i in 0..count {
        let p = part(i);
        whole.update(&p);
        let start = i * MIB5;
        plan.push(
            json!({"number": i + 1, "chunk_start": start, "chunk_end": start + p.len(),
                         "checksum_sha256_base64": b64(&p)}),
        );
    }
    let whole = STANDARD.encode(whole.finalize());
    let body = json!({"organization_id": org, "service": "downloadable", "name": name,
        "mime_type": "application/octet-stream", "size": size,
        "checksum_sha256_base64": whole, "upload": {"parts": plan}});
    let r = Reply::read(
        request(http, base, Method::POST, "/v1/files/", Some(token))
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect(201);
    let created = r.body.clone();
    let id = created["id"].as_str().unwrap().to_string();
    let mut done = Vec::new();
    for (i, p) in created["upload"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let mut req = http.put(p["url"].as_str().unwrap()).body(part(i));
        for (k, v) in p["headers"].as_object().unwrap() {
            req = req.header(k.as_str(), v.as_str().unwrap());
        }
        let r = Reply::read(req.send().await.unwrap()).await;
        r.expect(200);
        done.push(json!({"number": i + 1, "checksum_etag": r.header("etag"),
                         "checksum_sha256_base64": p["checksum_sha256_base64"]}));
    }
    let body =
        json!({"id": created["upload"]["id"], "path": created["upload"]["path"], "parts": done});
    Reply::read(
        request(
            http,
            base,
            Method::POST,
            &format!("/v1/files/{id}/uploaded"),
            Some(token),
        )
        .json(&body)
        .send()
        .await
        .unwrap(),
    )
    .await
    .expect(200);
    id
}

/// A small file uploaded through `app` (one part): its id.
async fn small_file(app: &TestApp, org: &str, name: &str, bytes: &[u8]) -> String {
    let owned = bytes.to_vec();
    upload(
        &app.client,
        &app.address,
        &app.token,
        org,
        name,
        bytes.len(),
        &move |_| owned.clone(),
    )
    .await
}

async fn create_benefit(app: &TestApp, org: &str, properties: Value) -> Reply {
    app.post_json(
        BENEFITS,
        Some(&app.token),
        &json!({"type": "downloadables", "description": "Downloads",
                "organization_id": org, "properties": properties}),
    )
    .await
}

/// A product of `org` granting `benefit`: one-time, or monthly.
async fn product(app: &TestApp, org: &str, benefit: &str, monthly: bool) -> String {
    let price = if monthly {
        json!({"type": "recurring", "amount_type": "fixed", "price_amount": 900,
               "price_currency": "usd", "recurring_interval": "month"})
    } else {
        json!({"type": "one_time", "amount_type": "fixed", "price_amount": 1900})
    };
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": if monthly { "Monthly" } else { "App" }, "organization_id": org,
                    "prices": [price]}),
        )
        .await;
    r.expect(201);
    let id = r.id();
    app.post_json(
        &format!("/v1/products/{id}/benefits"),
        Some(&app.token),
        &json!({ "benefits": [benefit] }),
    )
    .await
    .expect(200);
    id
}

/// A customer session (`polar_cst_…`) for `customer`, opened by the seller.
async fn session(app: &TestApp, customer: &str) -> String {
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

async fn list(app: &TestApp, cst: &str, query: &str) -> Reply {
    let r = app.get(&format!("{PORTAL}{query}"), Some(cst)).await;
    r.expect(200);
    r
}

/// The status and bytes a download link answers (no credentials).
async fn fetch(app: &TestApp, url: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let r = app.client.get(url).send().await.unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.bytes().await.unwrap().to_vec())
}

fn url_of(item: &Value) -> String {
    item["file"]["download"]["url"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn org(app: &TestApp, slug: &str) -> String {
    app.created_org_as(&app.token, slug, slug).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn count_of(app: &TestApp, file: &str) -> u64 {
    let id: uuid::Uuid = file.parse().unwrap();
    tollgate::app::downloadables::file_downloads(&app.state, tollgate::domain::ids::FileId(id))
        .await
        .unwrap()
}

#[actix_web::test]
async fn a_downloadables_benefit_is_created_and_changed_with_polars_properties() {
    let app = spawn_app().await;
    let org = org(&app, "dl-props").await;
    let a = small_file(&app, &org, "a.zip", &data(1000, 1)).await;
    let b = small_file(&app, &org, "b.zip", &data(2000, 2)).await;

    let r = create_benefit(&app, &org, json!({"files": [a, b]})).await;
    r.expect(201);
    assert_eq!(r.body["type"], "downloadables");
    assert_eq!(
        r.body["properties"],
        json!({"archived": {}, "files": [a, b]})
    );
    let id = r.id();
    let read = app.get(&format!("{BENEFITS}{id}"), Some(&app.token)).await;
    read.expect(200);
    assert_eq!(read.body["properties"], r.body["properties"]);

    // Archive one: read back as Polar's `{id: true}`.
    let r = app
        .patch_json(
            &format!("{BENEFITS}{id}"),
            Some(&app.token),
            &json!({"type": "downloadables",
                    "properties": {"files": [a, b], "archived": {b.clone(): true}}}),
        )
        .await;
    r.expect(200);
    assert_eq!(
        r.body["properties"],
        json!({"archived": {b.clone(): true}, "files": [a, b]})
    );
    // The type filter finds it.
    let l = app
        .get(
            &format!("{BENEFITS}?organization_id={org}&type=downloadables"),
            Some(&app.token),
        )
        .await;
    l.expect(200);
    assert_eq!(l.total_count(), 1);

    // 422s: no file; an unknown file; another organization's file; a pending upload.
    let e = create_benefit(&app, &org, json!({"files": []}))
        .await
        .expect_invalid_at(json!(["body", "properties", "files"]));
    assert_eq!(e["type"], "too_short", "{e}");
    let unknown = uuid::Uuid::new_v4().to_string();
    let e = create_benefit(&app, &org, json!({"files": [a, unknown]}))
        .await
        .expect_invalid_at(json!(["body", "properties", "files", 1]));
    assert_eq!(e["msg"], "File not found.");
    let other = org_of_other(&app).await;
    let theirs = small_file(&app, &other, "c.zip", &data(10, 3)).await;
    create_benefit(&app, &org, json!({"files": [theirs]}))
        .await
        .expect_invalid_at(json!(["body", "properties", "files", 0]));
    let pending = app
        .post_json(
            "/v1/files/",
            Some(&app.token),
            &json!({"organization_id": org, "service": "downloadable", "name": "p.bin",
                    "mime_type": "application/octet-stream", "size": 3,
                    "upload": {"parts": [{"number": 1, "chunk_start": 0, "chunk_end": 3}]}}),
        )
        .await;
    pending.expect(201);
    app.patch_json(
        &format!("{BENEFITS}{id}"),
        Some(&app.token),
        &json!({"type": "downloadables", "properties": {"files": [a, pending.id()]}}),
    )
    .await
    .expect_invalid_at(json!(["body", "properties", "files", 1]));
}

async fn org_of_other(app: &TestApp) -> String {
    org(app, "dl-other").await
}

#[actix_web::test]
async fn a_purchase_downloads_its_files_until_a_refund_revokes_the_benefits() {
    let app = spawn_app().await;
    let org = org(&app, "dl-shop").await;
    let (bytes_a, bytes_b) = (data(1000, 1), data(MIB5 + 10, 2));
    let a = small_file(&app, &org, "a.zip", &bytes_a).await;
    let b = upload(
        &app.client,
        &app.address,
        &app.token,
        &org,
        "b.bin",
        bytes_b.len(),
        &|i| bytes_b[i * MIB5..((i + 1) * MIB5).min(bytes_b.len())].to_vec(),
    )
    .await;
    let r = create_benefit(&app, &org, json!({"files": [a, b]})).await;
    r.expect(201);
    let benefit = r.id();
    let one_time = product(&app, &org, &benefit, false).await;
    let ada = buy(&app, &one_time, "ada@example.com").await;
    let cst = session(&app, &ada.customer).await;

    let r = list(&app, &cst, "").await;
    assert_eq!(r.total_count(), 2);
    let items = r.items();
    let keys: Vec<&str> = items[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["benefit_id", "file", "id"]);
    assert_eq!(items[0]["benefit_id"], benefit.as_str());
    assert_eq!(items[0]["file"]["id"], a.as_str());
    assert_eq!(items[1]["file"]["id"], b.as_str());
    let file = &items[0]["file"];
    assert_eq!(file["name"], "a.zip");
    assert_eq!(file["size"], 1000);
    assert_eq!(file["service"], "downloadable");
    assert_eq!(file["is_uploaded"], true);
    assert!(file.get("created_at").is_none(), "FileDownload has none");
    assert_eq!(file["download"]["headers"], json!({}));
    let url = url_of(&items[0]);
    assert!(
        url.starts_with(&format!("{}{PORTAL}", app.address)),
        "{url}"
    );
    let expires: chrono::DateTime<Utc> = file["download"]["expires_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(expires > Utc::now() + Duration::seconds(500));
    // The id is stable.
    assert_eq!(list(&app, &cst, "").await.items()[0]["id"], items[0]["id"]);

    // Byte-identical, as an attachment, counted.
    assert_eq!(count_of(&app, &a).await, 0);
    let (status, headers, body) = fetch(&app, &url).await;
    assert_eq!(status, 200);
    assert_eq!(body, bytes_a);
    assert!(headers["content-disposition"]
        .to_str()
        .unwrap()
        .starts_with("attachment"));
    let (status, _, body) = fetch(&app, &url_of(&items[1])).await;
    assert_eq!(status, 200);
    assert!(body == bytes_b, "the 5 MiB file differs");
    assert_eq!(count_of(&app, &a).await, 1);
    assert_eq!(count_of(&app, &b).await, 1);

    // Filter by benefit.
    assert_eq!(
        list(&app, &cst, &format!("?benefit_id={benefit}"))
            .await
            .total_count(),
        2
    );
    let none = uuid::Uuid::new_v4();
    assert_eq!(
        list(&app, &cst, &format!("?benefit_id={none}"))
            .await
            .total_count(),
        0
    );
    assert_eq!(list(&app, &cst, "?limit=1&page=2").await.items().len(), 1);

    // Tampered, malformed: 404, 400 in Polar's error shape.
    let mut forged = url.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == 'A' { 'B' } else { 'A' });
    let (status, _, body) = fetch(&app, &forged).await;
    assert_eq!(status, 404);
    let err: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(err["error"], "ResourceNotFound", "{err}");
    // The claim of file a with the signature of file b's link: 404.
    let (claim_a, _) = url.rsplit_once('/').unwrap().1.split_once('.').unwrap();
    let b_url = url_of(&items[1]);
    let (_, sig_b) = b_url.rsplit_once('/').unwrap().1.split_once('.').unwrap();
    let swapped = format!("{}{PORTAL}{claim_a}.{sig_b}", app.address);
    assert_eq!(fetch(&app, &swapped).await.0, 404);
    let (status, _, body) = fetch(&app, &format!("{}{PORTAL}not-a-token", app.address)).await;
    assert_eq!(status, 400);
    let err: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(err["error"], "BadRequest", "{err}");

    // Another customer sees none of it.
    let other_benefit = create_benefit(&app, &org, json!({"files": [a]})).await.id();
    let other_product = product(&app, &org, &other_benefit, false).await;
    let bob = buy(&app, &other_product, "bob@example.com").await;
    let bob_cst = session(&app, &bob.customer).await;
    let bob_items = list(&app, &bob_cst, "").await.items();
    assert_eq!(bob_items.len(), 1);
    assert_eq!(bob_items[0]["benefit_id"], other_benefit.as_str());
    assert_ne!(bob_items[0]["id"], items[0]["id"]);
    assert_eq!(
        list(&app, &bob_cst, &format!("?benefit_id={benefit}"))
            .await
            .total_count(),
        0
    );
    // Without a customer session: 401.
    app.get(PORTAL, None).await.expect(401);

    // Archived after Ada bought: she keeps it, a later buyer does not get it.
    app.patch_json(
        &format!("{BENEFITS}{benefit}"),
        Some(&app.token),
        &json!({"type": "downloadables",
                "properties": {"files": [a, b], "archived": {b.clone(): true}}}),
    )
    .await
    .expect(200);
    assert_eq!(list(&app, &cst, "").await.total_count(), 2);
    let carl = buy(&app, &one_time, "carl@example.com").await;
    let carl_cst = session(&app, &carl.customer).await;
    let carl_items = list(&app, &carl_cst, "").await.items();
    assert_eq!(carl_items.len(), 1);
    assert_eq!(carl_items[0]["file"]["id"], a.as_str());

    // A refund that revokes the benefits: the SAME link is 404 at once, the list empty.
    let order = order_of(&app, &ada.checkout).await;
    app.post_json(
        "/v1/refunds/",
        Some(&app.token),
        &json!({"order_id": order, "reason": "customer_request", "amount": 100,
                "revoke_benefits": true}),
    )
    .await
    .expect(200);
    assert_eq!(fetch(&app, &url).await.0, 404);
    assert_eq!(list(&app, &cst, "").await.total_count(), 0);
    assert_eq!(
        count_of(&app, &a).await,
        1,
        "a refused download is not counted"
    );

    // A deleted file leaves the lists and its links.
    let carl_url = url_of(&carl_items[0]);
    assert_eq!(fetch(&app, &carl_url).await.0, 200);
    app.send(app.request(Method::DELETE, &format!("/v1/files/{a}"), Some(&app.token)))
        .await
        .expect(204);
    assert_eq!(fetch(&app, &carl_url).await.0, 404);
    assert_eq!(list(&app, &carl_cst, "").await.total_count(), 0);
}

#[actix_web::test]
async fn a_subscription_link_expires_and_stops_when_the_subscription_ends() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings::for_tests(dir.path());
    let (clock, shared) = ManualClock::shared(Utc::now());
    let app = spawn_app_with(dir, settings, shared).await;
    let org = org(&app, "dl-monthly").await;
    let bytes = data(4096, 5);
    let file = small_file(&app, &org, "app.dmg", &bytes).await;
    let benefit = create_benefit(&app, &org, json!({"files": [file]}))
        .await
        .id();
    let monthly = product(&app, &org, &benefit, true).await;
    let ada = buy(&app, &monthly, "ada@example.com").await;
    let cst = session(&app, &ada.customer).await;
    let items = list(&app, &cst, "").await.items();
    assert_eq!(items.len(), 1);
    let url = url_of(&items[0]);
    let (status, _, body) = fetch(&app, &url).await;
    assert_eq!((status, body), (200, bytes.clone()));

    // Past its TTL (600 s): 410 ResourceUnavailable; a fresh link works.
    clock.advance(Duration::seconds(601));
    let (status, _, body) = fetch(&app, &url).await;
    assert_eq!(status, 410);
    let err: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(err["error"], "ResourceUnavailable", "{err}");
    let fresh = url_of(&list(&app, &cst, "").await.items()[0]);
    assert_eq!(fetch(&app, &fresh).await.0, 200);

    // The subscription ends: the fresh link is 404 at once.
    let sub = subscription_of(&app, &ada.customer).await;
    revoke(&app, &sub).await;
    assert_eq!(fetch(&app, &fresh).await.0, 404);
    assert_eq!(list(&app, &cst, "").await.total_count(), 0);
}

#[actix_web::test]
async fn downloads_are_limited_per_customer_and_per_address() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.files.download_limit_per_customer = 2;
    settings.files.download_limit_per_address = 3;
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let org = org(&app, "dl-limits").await;
    let file = small_file(&app, &org, "a.zip", &data(100, 7)).await;
    let benefit = create_benefit(&app, &org, json!({"files": [file]}))
        .await
        .id();
    let one_time = product(&app, &org, &benefit, false).await;
    let ada = buy(&app, &one_time, "ada@example.com").await;
    let bob = buy(&app, &one_time, "bob@example.com").await;
    let ada_url = url_of(
        &list(&app, &session(&app, &ada.customer).await, "")
            .await
            .items()[0],
    );
    let bob_url = url_of(
        &list(&app, &session(&app, &bob.customer).await, "")
            .await
            .items()[0],
    );

    for _ in 0..2 {
        let (status, headers, _) = fetch(&app, &ada_url).await;
        assert_eq!(status, 200);
        assert!(headers.contains_key("ratelimit-policy"));
    }
    // Ada's third: her quota (2) is out.
    let (status, headers, body) = fetch(&app, &ada_url).await;
    assert_eq!(status, 429, "{}", String::from_utf8_lossy(&body));
    assert!(
        headers["retry-after"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            >= 1
    );
    let err: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(err["error"], "TooManyRequests", "{err}");
    // Bob from the same address: the address's quota (3) is out.
    let (status, _, _) = fetch(&app, &bob_url).await;
    assert_eq!(status, 429);
    // Only the downloads served were counted.
    assert_eq!(count_of(&app, &file).await, 2);
}

/// A JSON call to the binary; its answer.
async fn call(
    http: &reqwest::Client,
    base: &str,
    method: Method,
    path: &str,
    token: &str,
    body: &Value,
) -> Reply {
    Reply::read(
        request(http, base, method, path, Some(token))
            .json(body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// The bucket of the 200 MiB journey over S3.
const BIG_BUCKET: &str = "tollgate-downloads";

/// The 200 MiB journey against the real binary, on the local directory (`s3` None) or on
/// `s3`'s bucket: a 200 MiB file uploaded in 40 parts of 5 MiB (to the server, or to the
/// store's presigned part URLs), granted by a one-time product, bought, listed in the
/// portal and downloaded through its link: streamed by the server (local), or a 302 to a
/// presigned GET on the store that the test follows itself (S3). Byte-identical, named in
/// `Content-Disposition`, and the server's peak resident memory (VmHWM) stays under 100
/// MiB. Then a refund that revokes the benefits: the same link answers 404, no redirect.
/// Answers the server's VmHWM in KiB once ready, before the download and after it.
async fn a_200_mib_journey(s3: Option<&crate::s3_server::S3Server>) -> [u64; 3] {
    use crate::binary::Binary;
    let root = tempfile::tempdir().unwrap();
    let data_dir = root.path().join("data");
    std::fs::create_dir_all(&data_dir).unwrap();
    let env = match s3 {
        Some(s3) => {
            s3.create_bucket(BIG_BUCKET);
            s3.env(BIG_BUCKET)
        }
        None => Vec::new(),
    };
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let ready = std::time::Duration::from_secs(60);
    let server = Binary::start(root.path(), &data_dir, "server.log", &env, ready).await;
    let pid = server_pid(&data_dir);
    let idle = vm_hwm_kib(pid);
    let token = crate::helpers::bootstrap_token(&data_dir);
    let http = crate::helpers::client();
    // The portal link is followed by hand: a redirect is part of what is checked.
    let nofollow = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(600))
        .connect_timeout(std::time::Duration::from_secs(5))
        .build()
        .unwrap();
    let base = server.address.clone();

    let org = call(
        &http,
        &base,
        Method::POST,
        "/v1/organizations/",
        &token,
        &json!({"name": "Big Downloads", "slug": "big-downloads"}),
    )
    .await;
    org.expect(201);
    let org = org.id();
    const PARTS: usize = 40;
    const NAME: &str = "Big App 2.0.bin";
    let size = PARTS * MIB5;
    let mut whole = Sha256::new();
    for i in 0..PARTS {
        whole.update(big_part(i));
    }
    let whole: [u8; 32] = whole.finalize().into();
    let file = upload(&http, &base, &token, &org, NAME, size, &big_part).await;
    if let Some(s3) = s3 {
        // The bytes went to the store, not through the server.
        let objects = s3.objects(BIG_BUCKET);
        assert_eq!(objects.len(), 1, "{objects:?}");
        let len = std::fs::metadata(s3.object_path(BIG_BUCKET, &objects[0]))
            .unwrap()
            .len();
        assert_eq!(len as usize, size);
        assert_eq!(walk_files(&data_dir.join("files")), 0);
    }
    let benefit = call(
        &http,
        &base,
        Method::POST,
        BENEFITS,
        &token,
        &json!({"type": "downloadables", "description": "The big file",
                "organization_id": org, "properties": {"files": [file]}}),
    )
    .await;
    benefit.expect(201);
    let product = call(
        &http,
        &base,
        Method::POST,
        "/v1/products/",
        &token,
        &json!({"name": "Big", "organization_id": org,
                "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 1900}]}),
    )
    .await;
    product.expect(201);
    let product = product.id();
    call(
        &http,
        &base,
        Method::POST,
        &format!("/v1/products/{product}/benefits"),
        &token,
        &json!({"benefits": [benefit.id()]}),
    )
    .await
    .expect(200);
    let checkout = call(
        &http,
        &base,
        Method::POST,
        "/v1/checkouts/custom/",
        &token,
        &json!({"product_id": product}),
    )
    .await;
    checkout.expect(201);
    let secret = checkout.body["client_secret"].as_str().unwrap().to_string();
    Reply::read(
        http.post(format!(
            "{base}/v1/checkouts/custom/client/{secret}/confirm"
        ))
        .json(
            &json!({"customer_name": "Ada", "customer_email": "ada@example.com",
                      "customer_billing_address": {"country": "FR"},
                      "confirmation_token_id": "tok_visa"}),
        )
        .send()
        .await
        .unwrap(),
    )
    .await
    .expect(200);
    let get = |path: String, bearer: String| {
        let req = request(&http, &base, Method::GET, &path, Some(&bearer));
        async move { Reply::read(req.send().await.unwrap()).await }
    };
    let mut customer = None;
    for _ in 0..200 {
        let c = get(
            format!("/v1/checkouts/custom/{}", checkout.id()),
            token.clone(),
        )
        .await;
        if c.body["status"] == "succeeded" {
            customer = c.body["customer_id"].as_str().map(String::from);
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let customer = customer.expect("the checkout succeeded");
    let cst = call(
        &http,
        &base,
        Method::POST,
        "/v1/customer-sessions/",
        &token,
        &json!({"customer_id": customer}),
    )
    .await;
    cst.expect(201);
    let cst = cst.body["token"].as_str().unwrap().to_string();
    let listed = get(PORTAL.to_string(), cst.clone()).await;
    listed.expect(200);
    assert_eq!(listed.total_count(), 1);
    let url = url_of(&listed.items()[0]);
    assert!(url.starts_with(&format!("{base}{PORTAL}")), "{url}");

    let before = vm_hwm_kib(pid);
    let r = nofollow.get(&url).send().await.unwrap();
    let mut r = match s3 {
        None => r,
        Some(s3) => {
            assert_eq!(r.status().as_u16(), 302, "the link redirects to the store");
            let location = r.headers()["location"].to_str().unwrap().to_string();
            assert!(
                location.starts_with(&format!("{}/{BIG_BUCKET}/", s3.endpoint)),
                "{location}"
            );
            assert!(location.contains("X-Amz-Signature="), "{location}");
            nofollow.get(&location).send().await.unwrap()
        }
    };
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(
        r.headers()["content-length"].to_str().unwrap(),
        size.to_string()
    );
    assert_eq!(
        r.headers()["content-disposition"],
        format!("attachment; filename=\"{NAME}\"").as_str()
    );
    let mut got = Sha256::new();
    let mut n = 0usize;
    while let Some(chunk) = r.chunk().await.unwrap() {
        n += chunk.len();
        got.update(&chunk);
    }
    assert_eq!(n, size);
    assert_eq!(
        <[u8; 32]>::from(got.finalize()),
        whole,
        "not byte-identical"
    );
    let peak = vm_hwm_kib(pid);
    assert!(peak < 100 * 1024, "VmHWM {peak} KiB is over 100 MiB");

    // A refund that revokes the benefits: the same link is 404 at once, never a redirect.
    let orders = get(
        format!("/v1/orders/?checkout_id={}", checkout.id()),
        token.clone(),
    )
    .await;
    orders.expect(200);
    assert_eq!(orders.total_count(), 1);
    let order = orders.items()[0]["id"].as_str().unwrap().to_string();
    call(
        &http,
        &base,
        Method::POST,
        "/v1/refunds/",
        &token,
        &json!({"order_id": order, "reason": "customer_request", "amount": 100,
                "revoke_benefits": true}),
    )
    .await
    .expect(200);
    let r = nofollow.get(&url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    assert!(r.headers().get("location").is_none());
    let err: Value = r.json().await.unwrap();
    assert_eq!(err["error"], "ResourceNotFound", "{err}");
    drop(server);
    [idle, before, peak]
}

/// How many files are under `dir`, at any depth.
fn walk_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                walk_files(&p)
            } else {
                1
            }
        })
        .sum()
}

/// The 200 MiB journey on the local directory: the server streams the file itself.
#[actix_web::test]
async fn a_200_mib_file_downloads_through_the_portal_link_in_bounded_memory() {
    let [idle, before, peak] = a_200_mib_journey(None).await;
    eprintln!(
        "local: VmHWM ready {} MiB, after the 200 MiB upload {} MiB, after the download {} MiB",
        idle / 1024,
        before / 1024,
        peak / 1024
    );
}

/// The 200 MiB journey on an S3-speaking store (s3s-fs, checking every signature): the parts
/// go to the store, the portal link is a 302 to a presigned GET.
#[actix_web::test]
async fn a_200_mib_file_on_s3_downloads_through_the_portal_link_in_bounded_memory() {
    let s3 = crate::s3_server::S3Server::start();
    let [idle, before, peak] = a_200_mib_journey(Some(&s3)).await;
    eprintln!(
        "S3: VmHWM ready {} MiB, after the 200 MiB upload {} MiB, after the download {} MiB",
        idle / 1024,
        before / 1024,
        peak / 1024
    );
}

/// polar-sdk 1.0.2 in each API version's module (`tests/clients/python-1.0/downloadables.py`):
/// `benefits.create` of a downloadables benefit, a purchase, and
/// `customer_portal.downloadables.list` with the customer session, loaded into the SDK's
/// models; the listed link downloads the bytes.
#[actix_web::test]
async fn polar_sdk_1_0_creates_a_downloadables_benefit_and_lists_the_downloads() {
    use std::process::Command;
    let python = crate::tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let app = spawn_app().await;
    for version in ["v2026_04", "v2026_10", "v2027_01"] {
        let mut cmd = Command::new(&python);
        cmd.arg(crate::tools::repo_root().join("tests/clients/python-1.0/downloadables.py"))
            .env("TOLLGATE_URL", &app.address)
            .env("TOLLGATE_TOKEN", &app.token)
            .env("TOLLGATE_API_VERSION", version)
            .env("PYTHONUNBUFFERED", "1");
        let out = crate::tools::run_async(cmd, std::time::Duration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            crate::tools::tally(&stdout),
            Some((4, 0)),
            "{version}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The receipt of a purchase granting downloadables links to the portal's downloads (its
/// sign-in page; no download token in a mail), in text and HTML; one without does not.
#[actix_web::test]
async fn the_receipt_links_to_the_portal_downloads() {
    use tollgate::domain::mail::MailMessage;
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.email.transport = tollgate::config::EmailTransport::File;
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let org = org(&app, "dl-mail").await;
    let file = small_file(&app, &org, "a.zip", &data(100, 9)).await;
    let benefit = create_benefit(&app, &org, json!({"files": [file]}))
        .await
        .id();
    let with_files = product(&app, &org, &benefit, false).await;
    let note = app
        .post_json(
            BENEFITS,
            Some(&app.token),
            &json!({"type": "custom", "description": "Thanks", "organization_id": org,
                    "properties": {"note": "Hi"}}),
        )
        .await
        .id();
    let without = product(&app, &org, &note, false).await;
    let receipt = |checkout: String| {
        let app = &app;
        async move {
            let order: uuid::Uuid = order_of(app, &checkout).await.parse().unwrap();
            let id = tollgate_actors::ids::derived_uuid(order, "mail:receipt");
            for _ in 0..200 {
                if let Some(m) = app
                    .state
                    .store
                    .get::<MailMessage>(id.as_bytes())
                    .await
                    .unwrap()
                {
                    return m.value;
                }
                actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            panic!("no receipt");
        }
    };
    let m = receipt(buy(&app, &with_files, "ada@example.com").await.checkout).await;
    let link = format!("{}/portal/dl-mail#downloads", app.address);
    for part in [&m.text, &m.html] {
        assert!(part.contains(&link), "{part}");
        assert!(part.contains("Download your files"), "{part}");
        assert!(!part.contains(PORTAL), "no download token in a mail");
    }
    let m = receipt(buy(&app, &without, "bob@example.com").await.checkout).await;
    assert!(!m.text.contains("#downloads"), "{}", m.text);
}

fn screenshot_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("portal-downloads-screenshots")
}

/// The portal's overview shows a "Downloads" section with each file (name, version, size)
/// and its link, which answers the bytes, in headless Chromium
/// (`tests/clients/browser/downloads.py`); screenshots at phone and desktop sizes under
/// `<CARGO_TARGET_TMPDIR>/portal-downloads-screenshots`.
#[actix_web::test]
async fn the_portal_lists_the_downloads_in_a_real_browser() {
    crate::browser::ensure_chromium();
    let app = spawn_app().await;
    let org = org(&app, "acme-downloads").await;
    let app_bytes = data(1_234_567, 11);
    let first = small_file(&app, &org, "Acme-1.2.0.dmg", &app_bytes).await;
    app.patch_json(
        &format!("/v1/files/{first}"),
        Some(&app.token),
        &json!({"version": "1.2.0"}),
    )
    .await
    .expect(200);
    let second = small_file(&app, &org, "Acme-1.2.0-setup.exe", &data(2_048_000, 12)).await;
    let benefit = create_benefit(&app, &org, json!({"files": [first, second]}))
        .await
        .id();
    let one_time = product(&app, &org, &benefit, false).await;
    let ada = buy(&app, &one_time, "ada@example.com").await;
    let s = app
        .post_json(
            "/v1/customer-sessions/",
            Some(&app.token),
            &json!({"customer_id": ada.customer}),
        )
        .await;
    s.expect(201);
    let portal_url = s.body["customer_portal_url"].as_str().unwrap().to_string();
    let size = app_bytes.len().to_string();
    crate::browser::run_script(
        "downloads.py",
        &screenshot_dir(),
        &[
            ("TOLLGATE_URL", app.address.as_str()),
            ("PORTAL_URL", portal_url.as_str()),
            ("FILE_NAMES", "Acme-1.2.0.dmg,Acme-1.2.0-setup.exe"),
            ("FIRST_SIZE", size.as_str()),
        ],
        std::time::Duration::from_secs(180),
        8,
    )
    .await;
}

/// The dashboard's Files page in headless Chromium (`tests/clients/browser/dashboard_files.py`):
/// a 6 MiB file uploaded in the browser through the API (two parts from `Blob.slice`),
/// each part with the SHA-256 the browser computed (checked by the server), listed,
/// renamed, deleted. Screenshots under
/// `<CARGO_TARGET_TMPDIR>/dashboard-files-screenshots`.
#[actix_web::test]
async fn the_dashboard_uploads_lists_renames_and_deletes_files_in_a_real_browser() {
    crate::browser::ensure_chromium();
    let app = spawn_app().await;
    let local = tempfile::tempdir().unwrap();
    let upload = local.path().join("Acme-2.1.0.AppImage");
    std::fs::write(&upload, data(6 * 1024 * 1024, 13)).unwrap();
    let shots =
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard-files-screenshots");
    crate::browser::run_script(
        "dashboard_files.py",
        &shots,
        &[
            ("TOLLGATE_URL", app.address.as_str()),
            ("UPLOAD_FILE", upload.to_str().unwrap()),
        ],
        std::time::Duration::from_secs(240),
        10,
    )
    .await;
}

/// The Files pages and forms as the dashboard's other sections: a member renders the page
/// (its CSP lets its own script connect, nothing else) and renames and deletes through its
/// forms (CSRF-checked); another seller's organization and files are 404; the script is
/// served.
#[actix_web::test]
async fn the_dashboard_files_pages_keep_the_dashboards_rules() {
    use crate::dashboard::{assert_csrf_refused, assert_status, form_post, seller};
    use tollgate::auth::Scope;
    let app = spawn_app().await;
    let user = crate::oauth::user_with_password(&app, "files@example.com").await;
    let token = app
        .issue_token(user, &[Scope::OrganizationsWrite, Scope::FilesWrite])
        .await;
    let org = app.created_org_as(&token, "Files Shop", "files-shop").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let bytes = data(10, 1);
    let file = upload(
        &app.client,
        &app.address,
        &token,
        &org,
        "a.zip",
        bytes.len(),
        &|_| bytes.clone(),
    )
    .await;
    let mut b = crate::oauth::signed_in(&app, "files@example.com").await;
    let page = b.get(&format!("/dashboard/{org}/files")).await;
    assert_status(&page, 200);
    assert!(page.body.contains("a.zip"), "{}", page.body);
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("connect-src 'self'"),
        "{csp}"
    );
    let js = b.get("/dashboard/assets/files.js").await;
    assert_status(&js, 200);
    assert!(js.body.contains("/v1/files/"));

    let rename = format!("/dashboard/{org}/files/{file}");
    assert_csrf_refused(&mut b, &rename, &[("name", "b.zip")]).await;
    let r = form_post(&mut b, &rename, &[("name", "b.zip"), ("version", "1.0")]).await;
    assert_status(&r, 303);
    let listed = app
        .get(&format!("/v1/files/?organization_id={org}"), Some(&token))
        .await;
    assert_eq!(listed.items()[0]["name"], "b.zip");
    assert_eq!(listed.items()[0]["version"], "1.0");

    // Another seller: the organization and the file are not found.
    let (mut other, _) = seller(&app, "other-files@example.com", "Other Shop").await;
    assert_status(&other.get(&format!("/dashboard/{org}/files")).await, 404);
    let r = form_post(&mut other, &rename, &[("name", "stolen.zip")]).await;
    assert_status(&r, 404);
    let r = form_post(&mut other, &format!("{rename}/delete"), &[]).await;
    assert_status(&r, 404);

    let r = form_post(&mut b, &format!("{rename}/delete"), &[]).await;
    assert_status(&r, 303);
    app.get(&format!("/v1/files/?organization_id={org}"), Some(&token))
        .await
        .expect(200);
    assert_eq!(
        app.get(&format!("/v1/files/?organization_id={org}"), Some(&token))
            .await
            .total_count(),
        0
    );
}
