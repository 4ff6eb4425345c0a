//! Property-based conformance of the running server to its own `/openapi.json`, with
//! schemathesis (pinned in `tests/clients/schemathesis/requirements.txt`): for a bounded
//! number of generated requests per operation, no 5xx, and every response has a documented
//! status, a documented content type and a body matching the documented schema.
//!
//! The same run by hand, against a server started with `cargo run --release`:
//!
//! ```sh
//! st run http://127.0.0.1:8000/openapi.json -H "Authorization: Bearer $(cat data/bootstrap-token)" \
//!   --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
//!   -n 10
//! ```
//!
//! CI uses a fixed seed and `SCHEMATHESIS_EXAMPLES` (default 8) examples per operation, and
//! runs it twice: on the default document, and on `/2026-10/openapi.json` with
//! `Polar-Version: 2026-10` on every request.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::helpers::{spawn_app, TestApp};
use crate::tools;

const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// A sold product, so the list and get operations have something to show: an organization
/// with a license-key benefit on a one-time product, and a completed purchase of it (order,
/// customer, license key).
async fn seed(app: &TestApp) {
    let token = Some(app.token.as_str());
    let org = app.create_org("Fuzz", "fuzz").await;
    org.expect(201);
    let org = org.id();
    let benefit = app
        .post_json(
            "/v1/benefits/",
            token,
            &json!({"type": "license_keys", "description": "Key", "organization_id": org,
                    "properties": {"prefix": "FZ", "activations": {"limit": 2, "enable_customer_admin": true}}}),
        )
        .await;
    benefit.expect(201);
    let product = app
        .post_json(
            "/v1/products/",
            token,
            &json!({"name": "App", "organization_id": org,
                    "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 900, "price_currency": "usd"}]}),
        )
        .await;
    product.expect(201);
    let product = product.id();
    app.post_json(
        &format!("/v1/products/{product}/benefits"),
        token,
        &json!({"benefits": [benefit.id()]}),
    )
    .await
    .expect(200);
    let checkout = app
        .post_json(
            "/v1/checkouts/custom/",
            token,
            &json!({"product_id": product}),
        )
        .await;
    checkout.expect(201);
    let secret = checkout.body["client_secret"].as_str().unwrap().to_string();
    app.post_json(
        &format!("/v1/checkouts/custom/client/{secret}/confirm"),
        None,
        &json!({"customer_name": "Ada", "customer_email": "ada@example.com",
                "customer_billing_address": {"country": "FR"}, "confirmation_token_id": "tok_visa"}),
    )
    .await
    .expect(200);
    for _ in 0..100 {
        let r = app
            .get(&format!("/v1/checkouts/custom/client/{secret}"), None)
            .await;
        if r.body["status"] == "succeeded" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the seeded checkout did not succeed");
}

#[actix_web::test]
async fn the_server_conforms_to_its_openapi_document() {
    conforms(None).await;
}

/// The same in an API version: its own document, every request with its `Polar-Version`.
#[actix_web::test]
async fn the_server_conforms_to_the_document_of_api_version_2026_10() {
    conforms(Some("2026-10")).await;
}

async fn conforms(version: Option<&str>) {
    let python = tools::python_venv("tests/clients/schemathesis/requirements.txt");
    let st = python.with_file_name("st");
    let app = spawn_app().await;
    seed(&app).await;
    let examples = std::env::var("SCHEMATHESIS_EXAMPLES").unwrap_or_else(|_| "8".to_string());
    let workdir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(st);
    let document = match version {
        Some(v) => format!("{}/{v}/openapi.json", app.address),
        None => format!("{}/openapi.json", app.address),
    };
    cmd.current_dir(workdir.path())
        .arg("run")
        .arg(document)
        .args(["-H", &format!("Authorization: Bearer {}", app.token)]);
    if let Some(v) = version {
        cmd.args(["-H", &format!("Polar-Version: {v}")]);
    }
    cmd
        .args([
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
            "--max-examples",
            &examples,
            "--seed",
            "20261122",
            "--request-timeout",
            "10",
            "--generation-database",
            "none",
            "--no-color",
        ])
        .env("PYTHONUNBUFFERED", "1");
    let out = tools::run_async(cmd, RUN_TIMEOUT).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "schemathesis found problems ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains(" passed") && !stdout.contains("unique failure"),
        "unexpected schemathesis summary:\n{stdout}"
    );
    println!("{stdout}");
}
