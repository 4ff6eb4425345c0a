//! Machine-readable refusals (issue 32, part 1): every refusal of validate, activate,
//! deactivate and rotate keeps Polar's status, `error` and `detail`, and adds a `code` from
//! a documented table, produced here through the public routes one by one, with the order
//! of the checks (the first failing one wins).

use serde_json::{json, Value};
use tollgate_actors::license_key::ERROR_CODES;

use crate::helpers::{spawn_app, Reply, TestApp};
use crate::versions::{sell_key, Sale};

const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";
const ACTIVATE: &str = "/v1/customer-portal/license-keys/activate";
const DEACTIVATE: &str = "/v1/customer-portal/license-keys/deactivate";
const UNKNOWN: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";

/// The refusal's status, `error`, `detail` and `code`, checked against the table.
fn refused(r: &Reply, status: u16, error: &str, code: &str) {
    assert_eq!(r.status.as_u16(), status, "{}", r.body);
    assert_eq!(r.body["error"], error, "{}", r.body);
    assert_eq!(r.body["code"], code, "{}", r.body);
    assert!(r.body["detail"].is_string(), "{}", r.body);
    assert!(ERROR_CODES.contains(&code), "{code} is not in the table");
}

async fn validate(app: &TestApp, sale: &Sale, extra: Value) -> Reply {
    let mut body = json!({"key": sale.key, "organization_id": sale.org});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    app.post_json(VALIDATE, None, &body).await
}

async fn activate(app: &TestApp, sale: &Sale, label: &str, conditions: Value) -> Reply {
    app.post_json(
        ACTIVATE,
        None,
        &json!({"key": sale.key, "organization_id": sale.org, "label": label,
                "conditions": conditions}),
    )
    .await
}

async fn update(app: &TestApp, sale: &Sale, body: Value) {
    app.patch_json(
        &format!("/v1/license-keys/{}", sale.key_id),
        Some(&app.token),
        &body,
    )
    .await
    .expect(200);
}

#[actix_web::test]
async fn each_refusal_carries_its_code_in_the_order_of_the_checks() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "codes").await;

    // No such key, here or through the token route.
    let r = app
        .post_json(
            VALIDATE,
            None,
            &json!({"key": "TG-NOPE", "organization_id": sale.org}),
        )
        .await;
    refused(&r, 404, "ResourceNotFound", "not_found");
    assert_eq!(r.body["detail"], "Not found");
    let r = app
        .post_json(
            "/v1/license-keys/validate",
            Some(&app.token),
            &json!({"key": "TG-NOPE", "organization_id": sale.org}),
        )
        .await;
    refused(&r, 404, "ResourceNotFound", "not_found");

    // Activations: three allowed, the fourth refused; an unknown one not found.
    let first = activate(&app, &sale, "laptop", json!({"major": 1})).await;
    first.expect(200);
    let activation = first.body["id"].as_str().unwrap().to_string();
    activate(&app, &sale, "desktop", json!({}))
        .await
        .expect(200);
    activate(&app, &sale, "tablet", json!({})).await.expect(200);
    let r = activate(&app, &sale, "phone", json!({})).await;
    refused(&r, 403, "NotPermitted", "activation_limit_reached");
    let r = validate(&app, &sale, json!({"activation_id": UNKNOWN})).await;
    refused(&r, 404, "ResourceNotFound", "activation_not_found");
    let r = app
        .post_json(
            DEACTIVATE,
            None,
            &json!({"key": sale.key, "organization_id": sale.org, "activation_id": UNKNOWN}),
        )
        .await;
    refused(&r, 404, "ResourceNotFound", "activation_not_found");
    let r = validate(
        &app,
        &sale,
        json!({"activation_id": activation, "conditions": {"major": 2}}),
    )
    .await;
    refused(&r, 404, "ResourceNotFound", "conditions_mismatch");
    let r = validate(&app, &sale, json!({"benefit_id": UNKNOWN})).await;
    refused(&r, 404, "ResourceNotFound", "benefit_mismatch");
    let r = validate(&app, &sale, json!({"customer_id": UNKNOWN})).await;
    refused(&r, 404, "ResourceNotFound", "customer_mismatch");

    // Usage.
    update(&app, &sale, json!({"limit_usage": 2})).await;
    validate(&app, &sale, json!({"increment_usage": 2}))
        .await
        .expect(200);
    let r = validate(&app, &sale, json!({"increment_usage": 1})).await;
    refused(&r, 400, "BadRequest", "usage_limit_reached");
    assert_eq!(r.body["detail"], "License key only has 0 more usages.");
    update(&app, &sale, json!({"limit_usage": null})).await;
    let r = validate(&app, &sale, json!({"increment_usage": i64::MAX})).await;
    refused(&r, 400, "BadRequest", "usage_out_of_range");

    // A key without an activation limit needs no activation.
    update(&app, &sale, json!({"limit_activations": null})).await;
    let r = activate(&app, &sale, "spare", json!({})).await;
    refused(&r, 403, "NotPermitted", "activation_not_required");
    update(&app, &sale, json!({"limit_activations": 3})).await;

    // Expired; then disabled (status before expiry); then revoked.
    update(&app, &sale, json!({"expires_at": "2020-01-01T00:00:00Z"})).await;
    let r = validate(&app, &sale, json!({})).await;
    refused(&r, 404, "ResourceNotFound", "expired");
    let r = activate(&app, &sale, "again", json!({})).await;
    refused(&r, 403, "NotPermitted", "expired");
    update(&app, &sale, json!({"status": "disabled"})).await;
    let r = validate(&app, &sale, json!({})).await;
    refused(&r, 404, "ResourceNotFound", "disabled");
    assert_eq!(r.body["detail"], "License key is no longer active.");
    let r = activate(&app, &sale, "again", json!({})).await;
    refused(&r, 403, "NotPermitted", "disabled");
    update(&app, &sale, json!({"status": "revoked"})).await;
    let r = validate(&app, &sale, json!({"benefit_id": UNKNOWN})).await;
    refused(&r, 404, "ResourceNotFound", "revoked");
    let r = app
        .post_json(
            &format!("/v1/license-keys/{}/rotate", sale.key_id),
            Some(&app.token),
            &json!({}),
        )
        .await;
    refused(&r, 400, "RotateNotPermitted", "rotation_not_permitted");

    // Errors that are not about a key have no code.
    let r = app
        .post_json(VALIDATE, None, &json!({"organization_id": sale.org}))
        .await;
    assert_eq!(r.status.as_u16(), 422);
    assert!(r.body.get("code").is_none());
    let r = app.get("/v1/products/nope", Some(&app.token)).await;
    assert!(r.body.get("code").is_none(), "{}", r.body);
}

/// The table, as docs/integrating.md publishes it: every code the domain can give is listed, once.
#[test]
fn the_published_table_lists_every_code_once() {
    let readme =
        std::fs::read_to_string(crate::tools::repo_root().join("docs/integrating.md")).unwrap();
    for code in ERROR_CODES {
        assert!(
            readme.contains(&format!("`{code}`")),
            "docs/integrating.md does not list `{code}`"
        );
    }
    let mut sorted = ERROR_CODES.to_vec();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), ERROR_CODES.len());
}

/// A buyer who lost an `activation_id` frees the slot by the activation's label: the most
/// recent live one with it; no such label is `activation_not_found`; neither field is a
/// 422; deactivations by label are rate-limited per key.
#[actix_web::test]
async fn a_slot_is_freed_by_its_label_when_the_id_is_lost() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "by-label").await;
    let old = activate(&app, &sale, "laptop", json!({})).await;
    old.expect(200);
    activate(&app, &sale, "desktop", json!({}))
        .await
        .expect(200);
    let new = activate(&app, &sale, "laptop", json!({})).await;
    new.expect(200);
    activate(&app, &sale, "tablet", json!({})).await.expect(403);
    let body = |label: &str| json!({"key": sale.key, "organization_id": sale.org, "label": label});
    app.post_json(DEACTIVATE, None, &body("laptop"))
        .await
        .expect(204);
    // The most recent "laptop" went; the older one still validates, the newer is gone.
    validate(&app, &sale, json!({"activation_id": old.body["id"]}))
        .await
        .expect(200);
    let r = validate(&app, &sale, json!({"activation_id": new.body["id"]})).await;
    refused(&r, 404, "ResourceNotFound", "activation_not_found");
    // The slot is free again.
    activate(&app, &sale, "tablet", json!({})).await.expect(200);
    let r = app.post_json(DEACTIVATE, None, &body("phone")).await;
    refused(&r, 404, "ResourceNotFound", "activation_not_found");
    let r = app
        .post_json(
            DEACTIVATE,
            None,
            &json!({"key": sale.key, "organization_id": sale.org}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "activation_id"]));
    // The token route takes the label too.
    let r = app
        .post_json(
            "/v1/license-keys/deactivate",
            Some(&app.token),
            &body("desktop"),
        )
        .await;
    r.expect(204);
    // Ten by label per key and hour (the default), then 429 for this key only.
    let mut limited = None;
    for _ in 0..12 {
        let r = app.post_json(DEACTIVATE, None, &body("none-left")).await;
        if r.status.as_u16() == 429 {
            limited = Some(r);
            break;
        }
    }
    let r = limited.expect("deactivations by label are rate-limited");
    assert!(r.headers.get("retry-after").is_some());
    // By id, the same key is not limited by it.
    let again = activate(&app, &sale, "spare", json!({})).await;
    again.expect(200);
    app.post_json(
        DEACTIVATE,
        None,
        &json!({"key": sale.key, "organization_id": sale.org, "activation_id": again.body["id"]}),
    )
    .await
    .expect(204);
}
