//! The dashboard's usage billing pages in a real browser: `tests/clients/browser/meters.py`
//! drives headless Chromium (as `browser.rs` does) against a server seeded here through
//! the API (a seller with a password, an organization, two customers, a meter of LLM
//! tokens and a month of events): the Meters list, a meter made with two clause rows, a
//! meter's chart for everyone and for one customer, a customer's usage, and a product with
//! a metered price. It must end with `N passed, 0 failed`. Screenshots at phone and desktop
//! sizes are left under `<CARGO_TARGET_TMPDIR>/meters-screenshots` (and copied to
//! `TOLLGATE_SHOTS_COPY` when set).

use std::path::PathBuf;
use std::time::Duration;

use chrono::Utc;
use serde_json::json;

use crate::browser::{ensure_chromium, run_script};
use crate::events::{customer, ingested, USAGE_SCOPES};
use crate::helpers::spawn_app;
use crate::oauth::{user_with_password, PASSWORD};

/// The script takes well under a minute; this only stops a hung browser.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);

/// Fewer checks than this means the script stopped early.
const MIN_CHECKS: u32 = 40;

#[actix_web::test]
async fn a_seller_reads_usage_and_prices_it_in_a_real_browser() {
    ensure_chromium();
    let app = spawn_app().await;
    let email = "usage-seller@example.com";
    let user = user_with_password(&app, email).await;
    let token = app.issue_token(user, USAGE_SCOPES).await;
    let org = app.created_org_as(&token, "Usage Shop", "usage-shop").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let ada = customer(&app, &token, &org, "ada@example.com", "ada").await;
    let bob = customer(&app, &token, &org, "bob@example.com", "bob").await;
    let r = app
        .post_json(
            "/v1/meters/",
            Some(&token),
            &json!({"name": "LLM tokens", "organization_id": org, "unit": "token",
                "filter": {"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": "llm_call"}]},
                "aggregation": {"func": "sum", "property": "metadata.tokens"}}),
        )
        .await;
    r.expect(201);
    let meter = r.id();
    // Two months of events, every 11 hours, alternately Ada's and Bob's.
    let now = Utc::now();
    let events = (1..130)
        .map(|i: i64| {
            json!({"name": "llm_call", "customer_id": if i % 2 == 0 { &ada } else { &bob },
                "timestamp": (now - chrono::Duration::hours(11 * i)).to_rfc3339(),
                "metadata": {"tokens": 100 + (i * 37) % 250, "model": "gpt-5"}})
        })
        .collect();
    ingested(&app, &token, &org, events, (129, 0)).await;
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("meters-screenshots");
    run_script(
        "meters.py",
        &shots,
        &[
            ("TOLLGATE_URL", app.address.as_str()),
            ("SELLER_EMAIL", email),
            ("SELLER_PASSWORD", PASSWORD),
            ("ORG_ID", org.as_str()),
            ("METER_ID", meter.as_str()),
            ("CUSTOMER_ID", ada.as_str()),
            ("CUSTOMER_EMAIL", "ada@example.com"),
        ],
        SCRIPT_TIMEOUT,
        MIN_CHECKS,
    )
    .await;
    if let Some(copy) = std::env::var_os("TOLLGATE_SHOTS_COPY") {
        let copy = PathBuf::from(copy);
        std::fs::create_dir_all(&copy).expect("creating the copy directory");
        for entry in std::fs::read_dir(&shots).expect("the screenshots") {
            let path = entry.expect("an entry").path();
            if let Some(name) = path.file_name() {
                std::fs::copy(&path, copy.join(name)).expect("copying a screenshot");
            }
        }
    }
}
