//! Issue 50: the grants of a `downloadables` benefit carry the files they give now
//! (Polar's `BenefitGrantDownloadablesProperties`, `{files: [file id]}`) in
//! `GET /v1/benefit-grants/`, the customer state, the customer portal's benefit grants and
//! the `benefit_grant.*` webhooks, the same files as the portal's downloads: a file
//! archived after the grant stays, a later grant does not get it, a revoked grant has none.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::benefit_grants::{buy, revoke, subscription_of, GRANTS};
use crate::helpers::{spawn_app, Reply, TestApp};

/// A `downloadable` file of `org` holding `bytes`, uploaded in one part: its id.
async fn file(app: &TestApp, org: &str, name: &str, bytes: &[u8]) -> String {
    let sum = STANDARD.encode(Sha256::digest(bytes));
    let r = app
        .post_json(
            "/v1/files/",
            Some(&app.token),
            &json!({"organization_id": org, "service": "downloadable", "name": name,
                    "mime_type": "application/octet-stream", "size": bytes.len(),
                    "checksum_sha256_base64": sum,
                    "upload": {"parts": [{"number": 1, "chunk_start": 0,
                        "chunk_end": bytes.len(), "checksum_sha256_base64": sum}]}}),
        )
        .await;
    r.expect(201);
    let id = r.id();
    let part = &r.body["upload"]["parts"][0];
    let mut req = app
        .client
        .put(part["url"].as_str().unwrap())
        .body(bytes.to_vec());
    for (k, v) in part["headers"].as_object().unwrap() {
        req = req.header(k.as_str(), v.as_str().unwrap());
    }
    let put = Reply::read(req.send().await.unwrap()).await;
    put.expect(200);
    app.post_json(
        &format!("/v1/files/{id}/uploaded"),
        Some(&app.token),
        &json!({"id": r.body["upload"]["id"], "path": r.body["upload"]["path"],
                "parts": [{"number": 1, "checksum_etag": put.header("etag"),
                           "checksum_sha256_base64": sum}]}),
    )
    .await
    .expect(200);
    id
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
            &json!({"name": "Downloads", "organization_id": org, "prices": [price]}),
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

/// The only grant of `customer` in `GET /v1/benefit-grants/`.
async fn grant_of(app: &TestApp, customer: &str) -> Value {
    let r = app
        .get(
            &format!("{GRANTS}?customer_id={customer}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    let items = r.items();
    assert_eq!(items.len(), 1, "{}", r.body);
    items[0].clone()
}

/// The `benefit_grant.created` payloads of the organization's event cursor (waits, bounded,
/// for the fan-out to log `count` of them).
async fn created_events(app: &TestApp, org: &str, count: usize) -> Vec<Value> {
    for _ in 0..200 {
        let r = app
            .get(
                &format!("/v1/webhooks/events?organization_id={org}&limit=100"),
                Some(&app.token),
            )
            .await;
        r.expect(200);
        let found: Vec<Value> = r
            .items()
            .into_iter()
            .filter(|e| e["type"] == "benefit_grant.created")
            .collect();
        if found.len() >= count {
            return found;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the benefit_grant.created events were not logged");
}

#[actix_web::test]
async fn a_downloadables_grant_names_the_files_it_gives_everywhere_polar_shows_grants() {
    let app = spawn_app().await;
    let org = app.created_org_as(&app.token, "dlg", "dlg").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let a = file(&app, &org, "a.zip", b"first file").await;
    let b = file(&app, &org, "b.zip", b"second file").await;
    let r = app
        .post_json(
            "/v1/benefits/",
            Some(&app.token),
            &json!({"type": "downloadables", "description": "Downloads",
                    "organization_id": org, "properties": {"files": [a, b]}}),
        )
        .await;
    r.expect(201);
    let benefit = r.id();
    let one_time = product(&app, &org, &benefit, false).await;
    let ada = buy(&app, &one_time, "ada@example.com").await.customer;

    // The seller's list.
    let grant = grant_of(&app, &ada).await;
    assert_eq!(grant["properties"], json!({"files": [a, b]}), "{grant}");
    // The customer state.
    let state = app
        .get(&format!("/v1/customers/{ada}/state"), Some(&app.token))
        .await;
    state.expect(200);
    assert_eq!(
        state.body["granted_benefits"][0]["properties"],
        json!({"files": [a, b]}),
        "{}",
        state.body
    );
    // The portal's grants, and its downloads: the same files.
    let cst = app
        .post_json(
            "/v1/customer-sessions/",
            Some(&app.token),
            &json!({"customer_id": ada}),
        )
        .await;
    cst.expect(201);
    let cst = cst.body["token"].as_str().unwrap().to_string();
    let portal = app
        .get("/v1/customer-portal/benefit-grants/", Some(&cst))
        .await;
    portal.expect(200);
    assert_eq!(portal.items()[0]["properties"], json!({"files": [a, b]}));
    let downloads = app
        .get("/v1/customer-portal/downloadables/", Some(&cst))
        .await;
    downloads.expect(200);
    let mut downloaded: Vec<String> = downloads
        .items()
        .iter()
        .map(|d| d["file"]["id"].as_str().unwrap().to_string())
        .collect();
    downloaded.sort();
    let mut granted = vec![a.clone(), b.clone()];
    granted.sort();
    assert_eq!(downloaded, granted);
    // The webhook.
    let events = created_events(&app, &org, 1).await;
    assert_eq!(events[0]["data"]["customer_id"], ada.as_str());
    assert_eq!(
        events[0]["data"]["properties"],
        json!({"files": [a, b]}),
        "{}",
        events[0]
    );

    // `b` archived: Ada's grant keeps it, a later buyer's does not get it.
    app.patch_json(
        &format!("/v1/benefits/{benefit}"),
        Some(&app.token),
        &json!({"type": "downloadables",
                "properties": {"files": [a, b], "archived": {b.clone(): true}}}),
    )
    .await
    .expect(200);
    assert_eq!(
        grant_of(&app, &ada).await["properties"],
        json!({"files": [a, b]})
    );
    let bob = buy(&app, &one_time, "bob@example.com").await.customer;
    assert_eq!(
        grant_of(&app, &bob).await["properties"],
        json!({"files": [a]})
    );
    let events = created_events(&app, &org, 2).await;
    let bobs = events
        .iter()
        .find(|e| e["data"]["customer_id"] == bob.as_str())
        .unwrap();
    assert_eq!(bobs["data"]["properties"], json!({"files": [a]}));

    // A revoked grant gives nothing: `{}`, as Polar's revocation leaves it.
    let monthly = product(&app, &org, &benefit, true).await;
    let cy = buy(&app, &monthly, "cy@example.com").await.customer;
    assert_eq!(
        grant_of(&app, &cy).await["properties"],
        json!({"files": [a]})
    );
    revoke(&app, &subscription_of(&app, &cy).await).await;
    let revoked = grant_of(&app, &cy).await;
    assert_eq!(revoked["is_revoked"], true);
    assert_eq!(revoked["properties"], json!({}));
}
