//! Issue 47 through Polar's own clients: polar-sdk 1.0.2 (`tests/clients/python-1.0/
//! portal_billing.py`) and @polar-sh/sdk 1.0.1 (`tests/clients/node-1.0/portal_billing.mjs`),
//! each in the three API versions, drive the customer portal of a buyer whose renewal was
//! declined: billing details, payment methods listed, added and removed, the pending order
//! paid now, the plan changed, an e-mail change requested; every answer loads into the
//! SDK's models, every refusal into its typed errors.
//!
//! One server on a manual clock; six buyers of a 14-day trial bought with a card that saves
//! but never charges (`tok_chargeDeclined`), all past due after one sweep at the trial's
//! end, one buyer per run (paying an order is done once).

use std::process::{Command, Output};
use std::time::Duration as StdDuration;

use chrono::Duration;
use serde_json::{json, Value};
use tollgate::app::subscription::sweep_subscriptions;

use crate::helpers::TestApp;
use crate::recovery_link::{declining_trial, shop, spawn, status, t0};
use crate::tools;

/// The checks of each script (`N passed, 0 failed`).
const CHECKS: u32 = 8;

/// A past-due buyer's handles for a script.
struct Buyer {
    session: String,
    order: String,
    subscription: String,
}

async fn session_of(app: &TestApp, customer: &str) -> String {
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

/// The buyer's pending renewal order.
async fn pending_order(app: &TestApp, customer: &str) -> String {
    let r = app
        .get(
            &format!("/v1/orders/?customer_id={customer}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    let pending: Vec<Value> = r
        .items()
        .into_iter()
        .filter(|o| o["status"] == "pending")
        .collect();
    assert_eq!(pending.len(), 1, "{}", r.body);
    pending[0]["id"].as_str().unwrap().to_string()
}

/// A shop with "Pro" (the trial) and "Team" (the plan to move to); `n` buyers past due.
async fn past_due_buyers(
    app: &TestApp,
    clock: &tollgate_actors::ManualClock,
    n: usize,
) -> (String, Vec<Buyer>) {
    let acme = shop(app, "sdk-billing").await;
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": "Team", "organization_id": acme.org, "recurring_interval": "month",
                    "prices": [{"amount_type": "fixed", "price_amount": 2000,
                                "price_currency": "usd"}]}),
        )
        .await;
    r.expect(201);
    let team = r.id();
    let mut subs = Vec::new();
    for i in 0..n {
        subs.push(declining_trial(app, &acme.product, &format!("buyer{i}@sdk-billing.test")).await);
    }
    clock.set(t0() + Duration::days(14) + Duration::minutes(1));
    let report = sweep_subscriptions(&app.state).await.unwrap();
    assert_eq!(report.declined, n as u64, "{report:?}");
    let mut buyers = Vec::new();
    for s in subs {
        let subscription = s["id"].as_str().unwrap().to_string();
        assert_eq!(status(app, &subscription).await, "past_due");
        let customer = s["customer_id"].as_str().unwrap();
        buyers.push(Buyer {
            session: session_of(app, customer).await,
            order: pending_order(app, customer).await,
            subscription,
        });
    }
    (team, buyers)
}

fn report(suite: &str, out: &Output) -> String {
    format!(
        "{suite}:\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn with_buyer(cmd: &mut Command, app: &TestApp, buyer: &Buyer, product: &str, version: &str) {
    cmd.env("TOLLGATE_URL", &app.address)
        .env("TOLLGATE_SESSION", &buyer.session)
        .env("TOLLGATE_ORDER", &buyer.order)
        .env("TOLLGATE_SUBSCRIPTION", &buyer.subscription)
        .env("TOLLGATE_PRODUCT", product)
        .env("TOLLGATE_API_VERSION", version);
}

#[actix_web::test]
async fn polar_sdks_fix_a_declined_renewal_from_the_portal_in_every_version() {
    let python = tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let packages = tools::node_packages("tests/clients/node-1.0");
    let script = tools::node_script(&packages, "tests/clients/node-1.0/portal_billing.mjs");
    tools::node_script(&packages, "tests/clients/node-1.0/types.mjs");
    let (app, clock) = spawn().await;
    let (team, buyers) = past_due_buyers(&app, &clock, 6).await;
    let mut buyers = buyers.into_iter();
    for version in ["v2026_04", "v2026_10", "v2027_01"] {
        let buyer = buyers.next().unwrap();
        let mut cmd = Command::new(&python);
        cmd.arg(tools::repo_root().join("tests/clients/python-1.0/portal_billing.py"))
            .env("PYTHONUNBUFFERED", "1");
        with_buyer(&mut cmd, &app, &buyer, &team, version);
        let out = tools::run_async(cmd, StdDuration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            tools::tally(&stdout),
            Some((CHECKS, 0)),
            "{}",
            report(&format!("polar-sdk 1.0.2 {version}"), &out)
        );
        assert_eq!(status(&app, &buyer.subscription).await, "active");
    }
    for version in ["2026-04", "2026-10", "2027-01"] {
        let buyer = buyers.next().unwrap();
        let mut cmd = Command::new("node");
        cmd.arg(&script).current_dir(&packages);
        with_buyer(&mut cmd, &app, &buyer, &team, version);
        let out = tools::run_async(cmd, StdDuration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            tools::tally(&stdout),
            Some((CHECKS, 0)),
            "{}",
            report(&format!("@polar-sh/sdk 1.0.1 {version}"), &out)
        );
        assert_eq!(status(&app, &buyer.subscription).await, "active");
    }
}
