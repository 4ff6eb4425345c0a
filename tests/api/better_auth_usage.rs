//! The better-auth Polar plugin's `usage()` (`@polar-sh/better-auth` from npm, pinned with its
//! peers in `tests/clients/better-auth/`) against Tollgate, as a seller's backend runs it:
//! `tests/clients/better-auth/usage.mjs` signs a user up (the plugin's
//! `createCustomerOnSignUp` makes the Tollgate customer, external id = the user's id), sends
//! usage through the plugin's `POST /usage/ingest` (`events.ingest` with the user's id as
//! `external_customer_id`) and reads it back through `GET /usage/meters/list` (a customer
//! session for that external id, then `GET /v1/customer-portal/meters/`). The plugin runs on
//! `@polar-sh/sdk` 0.47, which validates Tollgate's answers with zod: one that does not
//! validate is the plugin's 500, so every step must be a 200 with the right numbers, which
//! Tollgate's own API confirms.

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};
use crate::tools;

const CLIENT: &str = "tests/clients/better-auth";
/// The whole script: sign-up, four ingestions, the list (the packages are installed before).
const DEADLINE: Duration = Duration::from_secs(180);

fn report(out: &Output) -> String {
    format!(
        "usage.mjs ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// An organization access token of `org` with what the plugin's calls need.
async fn org_token(app: &TestApp, org: &str) -> String {
    let r = app
        .post_json(
            "/v1/organization-access-tokens/",
            Some(&app.token),
            &json!({"organization_id": org, "comment": "better-auth", "expires_in": null,
                    "scopes": ["customers:read", "customers:write", "customer_sessions:write",
                               "events:read", "events:write", "meters:read", "meters:write",
                               "customer_meters:read"]}),
        )
        .await;
    r.expect(201);
    r.body["token"].as_str().expect("the token").to_string()
}

async fn meter(app: &TestApp, token: &str, name: &str, aggregation: Value) -> String {
    let r = app
        .post_json(
            "/v1/meters/",
            Some(token),
            &json!({"name": name, "aggregation": aggregation,
                    "filter": {"conjunction": "and",
                               "clauses": [{"property": "name", "operator": "eq", "value": "chat"}]}}),
        )
        .await;
    r.expect(201);
    r.id()
}

/// A field of the plugin's answer: the SDK's objects name fields in camelCase.
fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> &'a Value {
    match &v[camel] {
        Value::Null => &v[snake],
        found => found,
    }
}

#[actix_web::test]
async fn the_better_auth_plugin_ingests_usage_and_lists_the_users_meters() {
    let app = spawn_app().await;
    let org = app
        .created_org_as(&app.token, "Usage seller", "usage-seller")
        .await;
    let org = org["id"].as_str().unwrap().to_string();
    let token = org_token(&app, &org).await;
    let calls = meter(&app, &token, "Chat calls", json!({"func": "count"})).await;
    let tokens = meter(
        &app,
        &token,
        "Chat tokens",
        json!({"func": "sum", "property": "tokens"}),
    )
    .await;

    let packages = tools::node_packages(CLIENT);
    let script = tools::node_script(&packages, &format!("{CLIENT}/usage.mjs"));
    let mut cmd = Command::new("node");
    cmd.arg(script)
        .args(["--server", &app.address, "--token", &token])
        // Three chats (200 tokens in all) and a search, which neither meter counts.
        .args(["--events", "chat:120,search:999,chat:30,chat:50"])
        .current_dir(&packages);
    let out = tools::run_async(cmd, DEADLINE).await;
    assert!(out.status.success(), "{}", report(&out));
    let got: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", report(&out));
    });
    let why = || format!("the plugin's report: {got:#}\n{}", report(&out));
    assert_eq!(got["sign_up"]["status"], 200, "{}", why());
    let user = got["user_id"].as_str().expect("the user's id").to_string();

    // Each ingestion: the SDK's parsed `EventsIngestResponse`.
    let ingests = got["ingests"].as_array().expect("the ingestions");
    assert_eq!(ingests.len(), 4, "{}", why());
    for i in ingests {
        assert_eq!(i["status"], 200, "{}", why());
        assert_eq!(
            i["body"],
            json!({"inserted": 1, "duplicates": 0}),
            "{}",
            why()
        );
    }

    // The customer the plugin created at sign-up, by the user's id.
    let r = app
        .get(&format!("/v1/customers/external/{user}"), Some(&token))
        .await;
    r.expect(200);
    assert_eq!(r.body["email"], "ada@example.com");
    let customer = r.id();

    // The meters list: a 200 only if the customer session and the page validated.
    let meters = &got["meters"];
    assert_eq!(meters["status"], 200, "{}", why());
    let page = match &meters["body"]["result"] {
        Value::Null => &meters["body"],
        result => result,
    };
    let items = page["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", why()));
    assert_eq!(items.len(), 2, "{}", why());
    assert_eq!(
        field(&page["pagination"], "totalCount", "total_count"),
        2,
        "{}",
        why()
    );
    let mut seen = Vec::new();
    for item in items {
        let meter_id = field(item, "meterId", "meter_id").as_str().unwrap();
        let consumed = field(item, "consumedUnits", "consumed_units")
            .as_f64()
            .unwrap();
        let credited = field(item, "creditedUnits", "credited_units")
            .as_i64()
            .unwrap();
        let balance = item["balance"].as_f64().unwrap();
        assert_eq!(field(item, "customerId", "customer_id"), customer.as_str());
        assert_eq!(item["meter"]["id"], meter_id);
        assert_eq!(credited, 0, "no credits granted: {item}");
        assert_eq!(balance, credited as f64 - consumed, "{item}");
        let want = if meter_id == calls {
            ("Chat calls", 3.0)
        } else if meter_id == tokens {
            ("Chat tokens", 200.0)
        } else {
            panic!("a meter of no one's: {item}")
        };
        assert_eq!((item["meter"]["name"].as_str().unwrap(), consumed), want);
        seen.push(meter_id.to_string());
    }
    seen.sort_unstable();
    let mut both = vec![calls.clone(), tokens.clone()];
    both.sort_unstable();
    assert_eq!(seen, both);

    // Tollgate's own view of what the plugin sent: four events of the user, by its external
    // id, with the metadata as given; the same consumption in the seller's customer meters.
    let r = app
        .get(
            &format!("/v1/events/?external_customer_id={user}&limit=100"),
            Some(&token),
        )
        .await;
    r.expect(200);
    assert_eq!(r.total_count(), 4);
    let mut names: Vec<(String, i64)> = r
        .items()
        .iter()
        .map(|e| {
            assert_eq!(e["source"], "user");
            assert_eq!(e["external_customer_id"], user.as_str());
            assert_eq!(e["metadata"]["endpoint"], "/v1/chat");
            assert_eq!(e["metadata"]["streamed"], true);
            assert_eq!(e["customer"]["id"], customer.as_str(), "{e}");
            (
                e["name"].as_str().unwrap().to_string(),
                e["metadata"]["tokens"].as_i64().unwrap(),
            )
        })
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            ("chat".to_string(), 30),
            ("chat".to_string(), 50),
            ("chat".to_string(), 120),
            ("search".to_string(), 999)
        ]
    );
    let r = app
        .get(
            &format!("/v1/customer-meters/?customer_id={customer}&meter_id={tokens}"),
            Some(&token),
        )
        .await;
    r.expect(200);
    assert_eq!(r.items().len(), 1);
    assert_eq!(r.items()[0]["consumed_units"], 200.0);
    assert_eq!(r.items()[0]["credited_units"], 0);
}
