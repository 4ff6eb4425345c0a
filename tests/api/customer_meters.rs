//! `/v1/customer-meters/` and the portal's `/v1/customer-portal/meters/`: what a customer
//! consumed of each meter (its events by id and by external id merged), with integer
//! credited units; tenancy (`polar-2026.md` §7.4).

use serde_json::{json, Value};

use crate::events::{customer, ingested, org_token, seller};
use crate::helpers::TestApp;

const CUSTOMER_METERS: &str = "/v1/customer-meters/";
const PORTAL_METERS: &str = "/v1/customer-portal/meters/";

async fn meter(app: &TestApp, token: &str, org: &str, name: &str, aggregation: Value) -> String {
    let r = app
        .post_json(
            "/v1/meters/",
            Some(token),
            &json!({
                "name": name,
                "organization_id": org,
                "filter": {"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": "call"}]},
                "aggregation": aggregation,
            }),
        )
        .await;
    r.expect(201);
    r.id()
}

async fn session(app: &TestApp, token: &str, customer: &str) -> String {
    let r = app
        .post_json(
            "/v1/customer-sessions/",
            Some(token),
            &json!({"customer_id": customer}),
        )
        .await;
    r.expect(201);
    r.body["token"].as_str().unwrap().to_string()
}

#[actix_web::test]
async fn customer_meters_merchant_and_portal() {
    let app = crate::helpers::spawn_app().await;
    let (token, org) = seller(&app, "cm1@example.com", "cm-one").await;
    let jane = customer(&app, &token, &org, "jane@example.com", "usr_jane").await;
    let bob = customer(&app, &token, &org, "bob@example.com", "usr_bob").await;
    let calls = meter(&app, &token, &org, "Calls", json!({"func": "count"})).await;
    let tokens = meter(
        &app,
        &token,
        &org,
        "Tokens",
        json!({"func": "sum", "property": "tokens"}),
    )
    .await;
    let call = |who: Value, tokens: i64| {
        let mut e = json!({"name": "call", "metadata": {"tokens": tokens}});
        for (k, v) in who.as_object().unwrap() {
            e[k] = v.clone();
        }
        e
    };
    ingested(
        &app,
        &token,
        &org,
        vec![
            call(json!({"customer_id": jane}), 10),
            call(json!({"external_customer_id": "usr_jane"}), 15),
            call(json!({"external_customer_id": "usr_bob"}), 1),
            // No such customer (yet): no customer meter.
            call(json!({"external_customer_id": "ghost"}), 99),
        ],
        (4, 0),
    )
    .await;

    let r = app
        .get(
            &format!("{CUSTOMER_METERS}?customer_id={jane}&sorting=meter_name"),
            Some(&token),
        )
        .await;
    r.expect(200);
    assert_eq!(r.total_count(), 2);
    let items = r.items();
    assert_eq!(items[0]["meter"]["name"], "Calls");
    assert_eq!(items[0]["consumed_units"], 2.0);
    assert_eq!(items[1]["consumed_units"], 25.0);
    // `credited_units` is a JSON integer.
    assert!(items[1]["credited_units"].is_i64());
    assert_eq!(items[1]["credited_units"], 0);
    assert_eq!(items[1]["balance"], -25.0);
    assert_eq!(items[1]["customer"]["id"], json!(jane));
    assert_eq!(items[1]["meter_id"], json!(tokens));
    let id = items[1]["id"].as_str().unwrap().to_string();
    let one = app
        .get(&format!("{CUSTOMER_METERS}{id}"), Some(&token))
        .await;
    one.expect(200);
    assert_eq!(one.body["consumed_units"], 25.0);
    // All customers; by external id; by meter.
    assert_eq!(
        app.get(CUSTOMER_METERS, Some(&token)).await.total_count(),
        4
    );
    let r = app
        .get(
            &format!("{CUSTOMER_METERS}?external_customer_id=usr_bob&meter_id={calls}"),
            Some(&token),
        )
        .await;
    assert_eq!(r.total_count(), 1);
    assert_eq!(r.items()[0]["customer_id"], json!(bob));
    let r = app
        .get(
            &format!("{CUSTOMER_METERS}?sorting=-consumed_units&limit=1"),
            Some(&token),
        )
        .await;
    assert_eq!(r.items()[0]["consumed_units"], 25.0);

    // The portal: the session's customer's own meters only, with the short meter.
    let cst = session(&app, &token, &jane).await;
    let r = app
        .get(&format!("{PORTAL_METERS}?sorting=meter_name"), Some(&cst))
        .await;
    r.expect(200);
    assert_eq!(r.total_count(), 2);
    let first = &r.items()[0];
    assert_eq!(first["consumed_units"], 2.0);
    let keys: Vec<&String> = first["meter"].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4);
    assert!(first.get("customer").is_none());
    let r = app
        .get(&format!("{PORTAL_METERS}?query=tok"), Some(&cst))
        .await;
    assert_eq!(r.total_count(), 1);
    let r = app.get(&format!("{PORTAL_METERS}{id}"), Some(&cst)).await;
    r.expect(200);
    assert_eq!(r.body["consumed_units"], 25.0);
    let bob_cst = session(&app, &token, &bob).await;
    app.get(&format!("{PORTAL_METERS}{id}"), Some(&bob_cst))
        .await
        .expect_error(404);
    assert_eq!(
        app.get(PORTAL_METERS, Some(&bob_cst)).await.total_count(),
        2
    );

    // Archived meters leave the merchant's list unless named; the portal keeps them.
    app.patch_json(
        &format!("/v1/meters/{calls}"),
        Some(&token),
        &json!({"is_archived": true}),
    )
    .await
    .expect(200);
    let r = app
        .get(
            &format!("{CUSTOMER_METERS}?customer_id={jane}"),
            Some(&token),
        )
        .await;
    assert_eq!(r.total_count(), 1);
    let r = app
        .get(
            &format!("{CUSTOMER_METERS}?customer_id={jane}&meter_id={calls}"),
            Some(&token),
        )
        .await;
    assert_eq!(r.total_count(), 1);
    assert_eq!(app.get(PORTAL_METERS, Some(&cst)).await.total_count(), 2);
    // The customer's state lists its live meters.
    let r = app
        .get(&format!("/v1/customers/{jane}/state"), Some(&token))
        .await;
    r.expect(200);
    let meters = r.body["active_meters"].as_array().unwrap().clone();
    assert_eq!(meters.len(), 1);
    assert_eq!(meters[0]["meter_id"], json!(tokens));
    assert_eq!(meters[0]["consumed_units"], 25.0);
    assert!(meters[0]["credited_units"].is_i64());

    // Tenancy and scopes.
    let (other, other_org) = seller(&app, "cm2@example.com", "cm-two").await;
    assert_eq!(
        app.get(CUSTOMER_METERS, Some(&other)).await.total_count(),
        0
    );
    app.get(&format!("{CUSTOMER_METERS}{id}"), Some(&other))
        .await
        .expect_error(404);
    let no_scope = org_token(&app, &other, &other_org, &["meters:read"]).await;
    app.get(CUSTOMER_METERS, Some(&no_scope))
        .await
        .expect_error(403);
    app.get(PORTAL_METERS, None).await.expect_error(401);
}

/// polar-sdk 1.0.2 (every API version): ingest, a meter, its quantities, the events, the
/// customer meters and the portal's (tests/clients/python-1.0/usage.py).
#[actix_web::test]
async fn polar_sdk_1_0_usage_journey() {
    use std::process::Command;
    use std::time::Duration;

    let python = crate::tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let app = crate::helpers::spawn_app().await;
    let (token, org) = seller(&app, "cm-sdk@example.com", "cm-sdk").await;
    let oat = org_token(
        &app,
        &token,
        &org,
        &[
            "events:read",
            "events:write",
            "meters:read",
            "meters:write",
            "customer_meters:read",
        ],
    )
    .await;
    for version in ["v2026_04", "v2026_10", "v2027_01"] {
        let external = format!("sdk_{version}");
        let id = customer(
            &app,
            &token,
            &org,
            &format!("{version}@example.com"),
            &external,
        )
        .await;
        let cst = session(&app, &token, &id).await;
        let mut cmd = Command::new(&python);
        cmd.arg(crate::tools::repo_root().join("tests/clients/python-1.0/usage.py"))
            .env("PYTHONUNBUFFERED", "1")
            .env("TOLLGATE_URL", &app.address)
            .env("TOLLGATE_TOKEN", &oat)
            .env("TOLLGATE_SESSION", &cst)
            .env("TOLLGATE_EXTERNAL_ID", &external)
            .env("TOLLGATE_API_VERSION", version);
        let out = crate::tools::run_async(cmd, Duration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            crate::tools::tally(&stdout),
            Some((7, 0)),
            "polar-sdk 1.0.2 {version}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// @polar-sh/sdk 1.0.1 (every API version): the same journey, each answer checked against
/// the package's declared types (tests/clients/node-1.0/usage.mjs).
#[actix_web::test]
async fn polar_js_sdk_1_0_usage_journey() {
    use std::process::Command;
    use std::time::Duration;

    let packages = crate::tools::node_packages("tests/clients/node-1.0");
    let script = crate::tools::node_script(&packages, "tests/clients/node-1.0/usage.mjs");
    crate::tools::node_script(&packages, "tests/clients/node-1.0/types.mjs");
    let app = crate::helpers::spawn_app().await;
    let (token, org) = seller(&app, "cm-js@example.com", "cm-js").await;
    let oat = org_token(
        &app,
        &token,
        &org,
        &[
            "events:read",
            "events:write",
            "meters:read",
            "meters:write",
            "customer_meters:read",
        ],
    )
    .await;
    for version in ["2026-04", "2026-10", "2027-01"] {
        let external = format!("js_{version}");
        let id = customer(
            &app,
            &token,
            &org,
            &format!("js{version}@example.com"),
            &external,
        )
        .await;
        let cst = session(&app, &token, &id).await;
        let mut cmd = Command::new("node");
        cmd.arg(&script)
            .current_dir(&packages)
            .env("TOLLGATE_URL", &app.address)
            .env("TOLLGATE_TOKEN", &oat)
            .env("TOLLGATE_SESSION", &cst)
            .env("TOLLGATE_EXTERNAL_ID", &external)
            .env("TOLLGATE_API_VERSION", version);
        let out = crate::tools::run_async(cmd, Duration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            crate::tools::tally(&stdout),
            Some((6, 0)),
            "@polar-sh/sdk 1.0.1 {version}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
