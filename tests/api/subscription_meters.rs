//! Issue 51: a subscription carries its metered prices (`prices[]`, its own price first)
//! and the running usage of each (`meters[]`: what its customer consumed of the price's
//! meter in the open period, the credits in it, what the renewal would bill for it now),
//! in the seller's API (`Subscription`), the portal (`CustomerSubscription`) and the
//! customer state (`active_subscriptions[].meters`), checked to the cent against the
//! renewal order that then bills it; on a manual clock.

use std::collections::BTreeSet;

use chrono::Duration;
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate_actors::ids::derived_uuid;
use tollgate_actors::subscription::renewal_order_id;

use crate::subscriptions::{purchase, spawn_app_with_clock, t0, ClockApp};
use crate::usage_billing::{calls, meter, price_of, product};

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn set(keys: &[&str]) -> BTreeSet<String> {
    keys.iter().map(|k| k.to_string()).collect()
}

async fn portal_token(app: &ClockApp, customer: &str) -> String {
    let r = app
        .post_json(
            "/v1/customer-sessions/",
            Some(&app.token),
            &json!({ "customer_id": customer }),
        )
        .await;
    r.expect(201);
    r.body["token"].as_str().unwrap().to_string()
}

#[actix_web::test]
async fn a_subscription_lists_its_metered_prices_and_their_running_usage() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "sub-meters").await;
    let meter_id = meter(&app, org).await;
    let product = product(&app, org, &meter_id, None).await;
    let customer = app.customer(&app.token, org, "jane@example.com").await;
    let fixed = price_of(&product, false);
    let metered = price_of(&product, true);
    let mut bought = purchase(&product, &customer, None);
    bought.price = fixed.clone();
    bought.amount = Some(1500);
    let s = app.subscribe(bought, t0()).await;
    let cid = customer.id.to_string();
    let expected_id = derived_uuid(s.id.0, &format!("subscription_meter:{meter_id}")).to_string();

    // Nothing used yet: one meter at 0.
    let r = app
        .get(&format!("/v1/subscriptions/{}", s.id), Some(&app.token))
        .await;
    r.expect(200);
    let prices: Vec<&str> = r.body["prices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        prices,
        [fixed.id.to_string(), metered.id.to_string()],
        "its own price first, then the metered one"
    );
    assert_eq!(r.body["prices"][1]["amount_type"], "metered_unit");
    assert_eq!(r.body["prices"][1]["meter"]["id"], meter_id.as_str());
    let m = &r.body["meters"][0];
    assert_eq!(r.body["meters"].as_array().unwrap().len(), 1, "{}", r.body);
    assert_eq!(
        (&m["consumed_units"], &m["credited_units"], &m["amount"]),
        (&json!(0.0), &json!(0), &json!(0))
    );

    // 1,250 calls: 6.25 so far, the same every read, in every form.
    app.clock.set(t0() + Duration::days(3));
    assert_eq!(calls(&app, org, &cid, "p1", 1250).await["inserted"], 1250);
    let r = app
        .get(&format!("/v1/subscriptions/{}", s.id), Some(&app.token))
        .await;
    r.expect(200);
    let m = r.body["meters"][0].clone();
    assert_eq!(
        keys(&m),
        set(&[
            "created_at",
            "modified_at",
            "id",
            "consumed_units",
            "credited_units",
            "amount",
            "meter_id",
            "meter"
        ])
    );
    assert_eq!(m["id"], expected_id.as_str());
    assert_eq!(m["meter_id"], meter_id.as_str());
    assert_eq!(m["meter"]["name"], "API calls");
    assert_eq!(m["meter"]["aggregation"]["func"], "count");
    assert_eq!(m["consumed_units"], 1250.0);
    assert_eq!(m["credited_units"], 0);
    assert_eq!(m["amount"], 625);

    // The list renders the same.
    let r = app
        .get(
            &format!("/v1/subscriptions/?organization_id={org}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["items"][0]["meters"][0], m);

    // The customer state: the meter without its `meter`.
    let r = app
        .get(&format!("/v1/customers/{cid}/state"), Some(&app.token))
        .await;
    r.expect(200);
    let sm = &r.body["active_subscriptions"][0]["meters"][0];
    assert_eq!(
        keys(sm),
        set(&[
            "created_at",
            "modified_at",
            "id",
            "consumed_units",
            "credited_units",
            "amount",
            "meter_id"
        ])
    );
    assert_eq!((&sm["id"], &sm["amount"]), (&m["id"], &json!(625)));

    // The portal: the meter's id, dates and name only.
    let portal = portal_token(&app, &cid).await;
    let r = app
        .get(
            &format!("/v1/customer-portal/subscriptions/{}", s.id),
            Some(&portal),
        )
        .await;
    r.expect(200);
    let pm = &r.body["meters"][0];
    assert_eq!(
        keys(&pm["meter"]),
        set(&["id", "created_at", "modified_at", "name"])
    );
    assert_eq!(
        (&pm["id"], &pm["consumed_units"], &pm["amount"]),
        (&m["id"], &json!(1250.0), &json!(625))
    );
    assert_eq!(r.body["prices"].as_array().unwrap().len(), 2);
    let r = app
        .get("/v1/customer-portal/subscriptions/", Some(&portal))
        .await;
    r.expect(200);
    assert_eq!(r.body["items"][0]["meters"][0]["amount"], 625);

    // The renewal bills what the meter said, and the meter starts anew.
    app.clock
        .set(s.current_period_end.unwrap() + Duration::minutes(5));
    assert_eq!(app.sweep().await.renewed, 1);
    let order = app.order(renewal_order_id(s.id, 1)).await.unwrap();
    assert_eq!(order.usage_amount(), 625);
    let r = app
        .get(&format!("/v1/subscriptions/{}", s.id), Some(&app.token))
        .await;
    r.expect(200);
    assert_eq!(r.body["meters"][0]["id"], expected_id.as_str());
    assert_eq!(
        (
            &r.body["meters"][0]["consumed_units"],
            &r.body["meters"][0]["amount"]
        ),
        (&json!(0.0), &json!(0))
    );
    // 3 calls: 1.5 cents, rounded half away from zero as the renewal rounds.
    calls(&app, org, &cid, "p2", 3).await;
    let r = app
        .get(&format!("/v1/subscriptions/{}", s.id), Some(&app.token))
        .await;
    assert_eq!(r.body["meters"][0]["amount"], 2);
}

#[actix_web::test]
async fn subscription_meters_are_the_sellers_own_and_need_the_scope() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "sub-meters-denials").await;
    let meter_id = meter(&app, org).await;
    let product = product(&app, org, &meter_id, None).await;
    let customer = app.customer(&app.token, org, "jane@example.com").await;
    let mut bought = purchase(&product, &customer, None);
    bought.price = price_of(&product, false);
    bought.amount = Some(1500);
    let s = app.subscribe(bought, t0()).await;
    calls(&app, org, &customer.id.to_string(), "x", 10).await;

    // Another seller (every subscription scope) does not see it.
    let other = app
        .user_with_scopes(
            "other@example.com",
            &[Scope::SubscriptionsRead, Scope::CustomersRead],
        )
        .await;
    app.get(&format!("/v1/subscriptions/{}", s.id), Some(&other))
        .await
        .expect(404);
    let r = app.get("/v1/subscriptions/", Some(&other)).await;
    r.expect(200);
    assert_eq!(r.body["items"], json!([]));
    // A token without `subscriptions:read` is refused.
    let no_scope = app
        .user_with_scopes("noscope@example.com", &[Scope::CustomersRead])
        .await;
    app.get(&format!("/v1/subscriptions/{}", s.id), Some(&no_scope))
        .await
        .expect(403);
    // Another customer's portal does not see it.
    let joe = app.customer(&app.token, org, "joe@example.com").await;
    let portal = portal_token(&app, &joe.id.to_string()).await;
    app.get(
        &format!("/v1/customer-portal/subscriptions/{}", s.id),
        Some(&portal),
    )
    .await
    .expect(404);
    let r = app
        .get(&format!("/v1/customers/{}/state", joe.id), Some(&app.token))
        .await;
    r.expect(200);
    assert_eq!(r.body["active_subscriptions"], json!([]));
}

/// A subscription (fixed 15.00 + half a cent per call, capped at 100.00) whose customer
/// called 1,250 times, an unattached `meter_credit` benefit of the meter, and a portal
/// session of the customer: what the SDK scripts read.
struct Journey {
    app: ClockApp,
    product: String,
    benefit: String,
    meter: String,
    subscription: String,
    customer: String,
    session: String,
}

async fn journey(slug: &str) -> Journey {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, slug).await;
    let meter_id = meter(&app, org).await;
    let product = product(&app, org, &meter_id, Some(10_000)).await;
    let customer = app.customer(&app.token, org, "jane@example.com").await;
    let mut bought = purchase(&product, &customer, None);
    bought.price = price_of(&product, false);
    bought.amount = Some(1500);
    let s = app.subscribe(bought, t0()).await;
    app.clock.set(t0() + Duration::days(3));
    calls(&app, org, &customer.id.to_string(), "sdk", 1250).await;
    let b = app
        .post_json(
            "/v1/benefits/",
            Some(&app.token),
            &json!({"type": "meter_credit", "description": "100 API calls",
                    "organization_id": org,
                    "properties": {"meter_id": meter_id, "units": 100, "rollover": true}}),
        )
        .await;
    b.expect(201);
    let session = portal_token(&app, &customer.id.to_string()).await;
    Journey {
        product: product.id.to_string(),
        benefit: b.body["id"].as_str().unwrap().to_string(),
        meter: meter_id,
        subscription: s.id.to_string(),
        customer: customer.id.to_string(),
        session,
        app,
    }
}

/// polar-sdk 1.0.2 (every API version) loads the subscription with its metered price and
/// usage, from the seller's API, the customer state and the portal
/// (tests/clients/python-1.0/metered.py).
#[actix_web::test]
async fn polar_sdk_1_0_loads_subscriptions_with_their_meters() {
    use std::process::Command;
    let python = crate::tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let j = journey("sub-meters-py").await;
    for version in ["v2026_04", "v2026_10", "v2027_01"] {
        let mut cmd = Command::new(&python);
        cmd.arg(crate::tools::repo_root().join("tests/clients/python-1.0/metered.py"))
            .env("TOLLGATE_URL", &j.app.address)
            .env("TOLLGATE_TOKEN", &j.app.token)
            .env("TOLLGATE_API_VERSION", version)
            .env("PRODUCT_ID", &j.product)
            .env("BENEFIT_ID", &j.benefit)
            .env("METER_ID", &j.meter)
            .env("SUBSCRIPTION_ID", &j.subscription)
            .env("CUSTOMER_ID", &j.customer)
            .env("TOLLGATE_SESSION", &j.session)
            .env("PYTHONUNBUFFERED", "1");
        let out = crate::tools::run_async(cmd, std::time::Duration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            crate::tools::tally(&stdout),
            Some((7, 0)),
            "{version}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// @polar-sh/sdk 1.0.1 (every API version): the same reads, each answer checked against
/// the package's declared types (tests/clients/node-1.0/subscription_meters.mjs).
#[actix_web::test]
async fn polar_js_sdk_1_0_reads_subscriptions_with_their_meters() {
    use std::process::Command;
    let packages = crate::tools::node_packages("tests/clients/node-1.0");
    let script =
        crate::tools::node_script(&packages, "tests/clients/node-1.0/subscription_meters.mjs");
    crate::tools::node_script(&packages, "tests/clients/node-1.0/types.mjs");
    let j = journey("sub-meters-js").await;
    for version in ["2026-04", "2026-10", "2027-01"] {
        let mut cmd = Command::new("node");
        cmd.arg(&script)
            .current_dir(&packages)
            .env("TOLLGATE_URL", &j.app.address)
            .env("TOLLGATE_TOKEN", &j.app.token)
            .env("TOLLGATE_SESSION", &j.session)
            .env("TOLLGATE_API_VERSION", version)
            .env("SUBSCRIPTION_ID", &j.subscription)
            .env("CUSTOMER_ID", &j.customer)
            .env("METER_ID", &j.meter);
        let out = crate::tools::run_async(cmd, std::time::Duration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            crate::tools::tally(&stdout),
            Some((4, 0)),
            "@polar-sh/sdk 1.0.1 {version}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
