//! The event cursor (behaviour.md, decisions of 2026-11-28): `GET /v1/webhooks/events?
//! organization_id=&after=&limit=` answers the organization's events, the webhooks'
//! payloads, numbered in commit order; a consumer killed (`kill -9`) mid-stream resumes
//! from the last number it kept and gets everything once. Tenancy, scopes and validation.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::helpers::{spawn_app, TestApp};

const CURSOR: &str = "/v1/webhooks/events";
const DEADLINE: Duration = Duration::from_secs(60);

/// A user holding `scopes` (plus organizations:write) and one organization of their own.
async fn seller(app: &TestApp, email: &str, slug: &str, scopes: &[Scope]) -> (String, String) {
    let mut all = vec![Scope::OrganizationsWrite];
    all.extend_from_slice(scopes);
    let (_, token) = app.new_user_with_scopes(email, &all).await;
    let org = app.created_org_as(&token, "Seller Org", slug).await;
    (token, org["id"].as_str().unwrap().to_string())
}

async fn settled(app: &TestApp) {
    let start = Instant::now();
    while !app.state.store.changes(None, 1).await.unwrap().is_empty() {
        assert!(
            start.elapsed() < DEADLINE,
            "the webhook fan-out did not catch up"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn customers(app: &TestApp, token: &str, org: &str, from: usize, n: usize) {
    for i in from..from + n {
        app.post_json(
            "/v1/customers/",
            Some(token),
            &json!({"email": format!("buyer{i}@example.com"), "organization_id": org}),
        )
        .await
        .expect(201);
    }
    settled(app).await;
}

/// Every event of `org`, read in pages of `limit`.
async fn read_all(app: &TestApp, token: &str, org: &str, limit: u64) -> Vec<Value> {
    let mut all = Vec::new();
    let mut after: Option<u64> = None;
    loop {
        let q = match after {
            Some(a) => format!("{CURSOR}?organization_id={org}&limit={limit}&after={a}"),
            None => format!("{CURSOR}?organization_id={org}&limit={limit}"),
        };
        let r = app.get(&q, Some(token)).await;
        r.expect(200);
        let items = r.body["items"].as_array().unwrap().clone();
        assert!(items.len() as u64 <= limit);
        if items.is_empty() {
            assert_eq!(r.body["next"], after.unwrap_or(0));
            return all;
        }
        assert_eq!(r.body["next"], items.last().unwrap()["seq"]);
        after = r.body["next"].as_u64();
        all.extend(items);
    }
}

#[actix_web::test]
async fn the_cursor_answers_the_webhook_payloads_in_commit_order() {
    let app = spawn_app().await;
    let (token, org) = seller(
        &app,
        "cursor@example.com",
        "cursor-org",
        &[Scope::WebhooksWrite, Scope::CustomersWrite],
    )
    .await;
    // A paused endpoint for `customer.created`, to compare payloads.
    let e = app
        .post_json(
            "/v1/webhooks/endpoints",
            Some(&token),
            &json!({"url": "https://hooks.example.com/t", "format": "raw",
                    "events": ["customer.created"], "organization_id": org}),
        )
        .await;
    e.expect(201);
    let endpoint = e.body["id"].as_str().unwrap().to_string();
    app.patch_json(
        &format!("/v1/webhooks/endpoints/{endpoint}"),
        Some(&token),
        &json!({"enabled": false}),
    )
    .await
    .expect(200);
    customers(&app, &token, &org, 0, 4).await;

    let all = read_all(&app, &token, &org, 3).await;
    // Each customer: created, then its state; numbered 1, 2, 3, … without a gap.
    let seqs: Vec<u64> = all.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=8).collect::<Vec<u64>>());
    let types: Vec<&str> = all.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["customer.created", "customer.state_changed"].repeat(4)
    );
    for (i, pair) in all.chunks(2).enumerate() {
        assert_eq!(pair[0]["data"]["email"], format!("buyer{i}@example.com"));
        assert_eq!(pair[0]["data"]["id"], pair[1]["data"]["id"]);
        let keys: Vec<&String> = pair[0].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["data", "seq", "timestamp", "type"]);
    }
    // The same payloads as the webhooks.
    let sent: Vec<Value> = crate::checkouts::webhook_events(&app.state)
        .await
        .into_iter()
        .filter(|e| e.endpoint_id.to_string() == endpoint)
        .map(|e| serde_json::from_str(&e.payload).unwrap())
        .collect();
    assert_eq!(sent.len(), 4);
    for body in sent {
        let logged = all
            .iter()
            .find(|e| e["type"] == "customer.created" && e["data"]["id"] == body["data"]["id"])
            .unwrap();
        assert_eq!(logged["data"], body["data"]);
        assert_eq!(logged["timestamp"], body["timestamp"]);
    }
    // Without `after`: from the oldest kept; the default page holds them all.
    let r = app
        .get(&format!("{CURSOR}?organization_id={org}"), Some(&token))
        .await;
    r.expect(200);
    assert_eq!(r.body["items"].as_array().unwrap().len(), 8);
    assert_eq!(r.body["next"], 8);
    // A user of one organization need not name it.
    let r = app.get(&format!("{CURSOR}?after=6"), Some(&token)).await;
    r.expect(200);
    assert_eq!(r.body["items"].as_array().unwrap().len(), 2);
}

#[actix_web::test]
async fn another_organization_sees_nothing_and_the_scope_is_required() {
    let app = spawn_app().await;
    let (token, org) = seller(
        &app,
        "owner@example.com",
        "owner-org",
        &[Scope::WebhooksRead, Scope::CustomersWrite],
    )
    .await;
    customers(&app, &token, &org, 0, 2).await;
    assert_eq!(read_all(&app, &token, &org, 10).await.len(), 4);

    // A seller of another organization, naming this one or not: nothing of it.
    let (stranger, own) = seller(
        &app,
        "stranger@example.com",
        "stranger-org",
        &[Scope::WebhooksRead, Scope::OrganizationAccessTokensWrite],
    )
    .await;
    for q in [
        format!("{CURSOR}?organization_id={org}"),
        format!("{CURSOR}?organization_id={org}&after=0"),
        CURSOR.to_string(),
        format!("{CURSOR}?organization_id={own}"),
    ] {
        let r = app.get(&q, Some(&stranger)).await;
        r.expect(200);
        assert_eq!(r.body["items"], json!([]), "{q}");
    }
    // An organization access token of the other organization: nothing either.
    let oat = app
        .post_json(
            "/v1/organization-access-tokens/",
            Some(&stranger),
            &json!({"organization_id": own, "comment": "Backend", "scopes": ["webhooks:read"]}),
        )
        .await;
    oat.expect(201);
    let oat = oat.body["token"].as_str().unwrap().to_string();
    let r = app.get(CURSOR, Some(&oat)).await;
    r.expect(200);
    assert_eq!(r.body["items"], json!([]));
    let r = app
        .get(&format!("{CURSOR}?organization_id={org}"), Some(&oat))
        .await;
    r.expect(200);
    assert_eq!(r.body["items"], json!([]));

    // Without `webhooks:read`: 403; without a token: 401.
    let (customers_only, _) = seller(
        &app,
        "customers@example.com",
        "customers-org",
        &[Scope::CustomersRead],
    )
    .await;
    let r = app.get(CURSOR, Some(&customers_only)).await;
    r.expect(403);
    assert_eq!(r.body["error"], "insufficient_scope");
    app.get(CURSOR, None).await.expect(401);
}

#[actix_web::test]
async fn bad_parameters_are_422s() {
    let app = spawn_app().await;
    let (token, org) = seller(&app, "v@example.com", "v-org", &[Scope::WebhooksRead]).await;
    let other = uuid::Uuid::new_v4();
    for (query, loc, kind) in [
        ("after=-1".to_string(), "after", "greater_than_equal"),
        ("after=abc".to_string(), "after", "int_parsing"),
        ("limit=0".to_string(), "limit", "greater_than_equal"),
        ("limit=1001".to_string(), "limit", "less_than_equal"),
        ("limit=x".to_string(), "limit", "int_parsing"),
        (
            format!("organization_id={org}&organization_id={other}"),
            "organization_id",
            "value_error",
        ),
        (
            "organization_id=nope".to_string(),
            "organization_id",
            "uuid_parsing",
        ),
    ] {
        let r = app.get(&format!("{CURSOR}?{query}"), Some(&token)).await;
        let error = r.expect_invalid_at(json!(["query", loc]));
        assert_eq!(error["type"], kind, "{query}: {}", r.body);
    }
    app.get(&format!("{CURSOR}?limit=1000&after=0"), Some(&token))
        .await
        .expect(200);
}

/// The consumer: reads pages of 3 after the last `seq` of its log (dropping a line torn
/// by a kill), appends one line per event (fsynced) and sleeps a little after each, until
/// killed.
const CONSUMER: &str = r#"
import json, os, sys, time, urllib.request
base, token, org, log = sys.argv[1:5]
after = None
if os.path.exists(log):
    data = open(log, "rb").read()
    whole = data[: data.rfind(b"\n") + 1]
    if len(whole) != len(data):
        open(log, "wb").write(whole)
    lines = whole.decode().splitlines()
    if lines:
        after = json.loads(lines[-1])["seq"]
out = open(log, "a")
while True:
    q = f"organization_id={org}&limit=3" + ("" if after is None else f"&after={after}")
    req = urllib.request.Request(f"{base}/v1/webhooks/events?{q}",
                                 headers={"Authorization": f"Bearer {token}"})
    page = json.load(urllib.request.urlopen(req, timeout=30))
    for item in page["items"]:
        out.write(json.dumps({"seq": item["seq"], "type": item["type"],
                              "id": item["data"].get("id")}) + "\n")
        out.flush()
        os.fsync(out.fileno())
        after = item["seq"]
        time.sleep(0.02)
    if not page["items"]:
        time.sleep(0.05)
"#;

struct Consumer(Child);

impl Drop for Consumer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn consumer(app: &TestApp, token: &str, org: &str, log: &std::path::Path) -> Consumer {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    Consumer(
        Command::new(python)
            .arg("-c")
            .arg(CONSUMER)
            .args([app.address.as_str(), token, org])
            .arg(log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("starting the consumer"),
    )
}

fn lines(log: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

async fn until_lines(log: &std::path::Path, n: usize) {
    let start = Instant::now();
    while lines(log).len() < n {
        assert!(
            start.elapsed() < DEADLINE,
            "the consumer kept {} of {n} events",
            lines(log).len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[actix_web::test]
async fn a_consumer_killed_mid_stream_resumes_and_gets_everything_once() {
    let app = spawn_app().await;
    let (token, org) = seller(
        &app,
        "kill@example.com",
        "kill-org",
        &[Scope::WebhooksRead, Scope::CustomersWrite],
    )
    .await;
    customers(&app, &token, &org, 0, 10).await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("consumed.jsonl");

    let mut first = consumer(&app, &token, &org, &log);
    until_lines(&log, 5).await;
    // kill -9, mid-stream.
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let kept = lines(&log).len();
    assert!(kept >= 5);
    // More happens while it is down.
    customers(&app, &token, &org, 10, 3).await;
    let total = read_all(&app, &token, &org, 1000).await;
    assert_eq!(total.len(), 26);

    let _second = consumer(&app, &token, &org, &log);
    until_lines(&log, total.len()).await;
    let got = lines(&log);
    // Nothing missed, nothing twice, in order.
    let seqs: Vec<u64> = got.iter().map(|l| l["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=26).collect::<Vec<u64>>());
    for (line, event) in got.iter().zip(&total) {
        assert_eq!(line["type"], event["type"]);
        assert_eq!(line["id"], event["data"]["id"]);
    }
}
