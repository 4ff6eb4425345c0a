//! License keys, customer portal (reference 3.5 and 9.4): validate, activate and deactivate
//! without authentication, expiry on a manual clock, and the customer's own list and get.

use chrono::{Months, TimeZone, Utc};
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate_actors::ManualClock;

use crate::license_keys::{assert_activation_shape, assert_key_shape, spawn};

const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";

#[actix_web::test]
async fn validate_counts_and_checks_benefit_and_customer() {
    let app = spawn(None).await;
    let s = app.seeded("validate", json!({"prefix": "testing"})).await;

    let r = app.validate(&s.body(json!({}))).await;
    r.expect(200);
    assert_key_shape(&r.body);
    assert_eq!(r.body["validations"], 1);
    assert!(r.body["activation"].is_null());
    assert!(r.body.as_object().unwrap().contains_key("activation"));
    assert!(!r.body["last_validated_at"].is_null());

    let r = app
        .validate(&s.body(json!({"benefit_id": uuid::Uuid::new_v4()})))
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    assert_eq!(
        r.body["detail"],
        "License key does not match given benefit."
    );

    let r = app
        .validate(&s.body(json!({"benefit_id": s.benefit})))
        .await;
    assert_eq!(r.expect(200).body["validations"], 2);

    let r = app
        .validate(&s.body(json!({"benefit_id": s.benefit, "customer_id": s.customer})))
        .await;
    r.expect(200);
    assert_eq!(r.body["validations"], 3);
    assert_eq!(r.body["benefit_id"], s.benefit.as_str());
    assert!(r.body["key"].as_str().unwrap().starts_with("TESTING"));

    let r = app
        .validate(&s.body(json!({"customer_id": uuid::Uuid::new_v4()})))
        .await;
    r.expect_error(404);
    assert_eq!(r.body["detail"], "License key does not match given user.");

    // Refusals count nothing.
    let r = app
        .get(&format!("/v1/license-keys/{}", s.key.id), Some(&app.token))
        .await;
    assert_eq!(r.body["validations"], 3);
}

#[actix_web::test]
async fn unknown_keys_and_other_organizations_are_not_found() {
    let app = spawn(None).await;
    let s = app.seeded("lookup", json!({})).await;
    let other_org = app.org("lookup-other").await;
    for body in [
        json!({"key": "NOPE", "organization_id": s.org}),
        json!({"key": s.key.key, "organization_id": other_org}),
        json!({"key": s.key.key.to_lowercase(), "organization_id": s.org}),
    ] {
        let r = app.validate(&body).await;
        assert_eq!(r.expect_error(404), "ResourceNotFound");
        assert_eq!(r.body["detail"], "Not found");
        let r = app.activate(&json!({"label": "x", "key": body["key"], "organization_id": body["organization_id"]})).await;
        assert_eq!(r.body["detail"], "Not found");
        r.expect_error(404);
    }
    // A key granted after a failed lookup is found at once (misses are not remembered).
    let benefit = app.key_benefit(&s.org, json!({"prefix": "late"})).await;
    let late = app.grant(&s.org, &benefit, &s.customer).await;
    let body = json!({"key": late.key, "organization_id": s.org});
    let r = app.validate(&body).await;
    r.expect(200);
    // Its actor was never involved in the grant: the key came from the store.
    assert_eq!(r.body["id"], late.id.to_string());
}

#[actix_web::test]
async fn authorization_headers_are_ignored_and_bodies_are_checked() {
    let app = spawn(None).await;
    let s = app
        .seeded(
            "headers",
            json!({"activations": {"limit": 1, "enable_customer_admin": false}}),
        )
        .await;
    for token in ["polar_pat_invalid", "garbage", app.token.as_str()] {
        let r = app
            .call(
                reqwest::Method::POST,
                VALIDATE,
                Some(token),
                Some(&s.body(json!({}))),
            )
            .await;
        r.expect(200);
    }
    let r = app.validate(&json!({"organization_id": s.org})).await;
    r.expect_invalid_at(json!(["body", "key"]));
    let r = app
        .validate(&json!({"key": "K", "organization_id": "nope"}))
        .await;
    r.expect_invalid_at(json!(["body", "organization_id"]));
    let r = app
        .validate(&s.body(json!({"increment_usage": "many"})))
        .await;
    r.expect_invalid_at(json!(["body", "increment_usage"]));
    let r = app.validate(&s.body(json!({"conditions": [1]}))).await;
    r.expect_invalid_at(json!(["body", "conditions"]));
    let r = app.activate(&s.body(json!({}))).await;
    r.expect_invalid_at(json!(["body", "label"]));
    let r = app.deactivate(&s.body(json!({}))).await;
    r.expect_invalid_at(json!(["body", "activation_id"]));
    // Not an object, not JSON, or not declared as JSON: the shared 422s.
    for (content_type, body) in [
        (
            "application/json",
            format!("[\"{}\", \"{}\"]", s.key.key, s.org),
        ),
        ("application/json", "{\"key\": ".to_string()),
        ("text/plain", s.body(json!({})).to_string()),
    ] {
        let resp = app
            .client
            .post(format!("{}{VALIDATE}", app.address))
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .unwrap();
        crate::helpers::Reply::read(resp).await.expect_validation();
    }
    // Unknown fields are ignored; lax integers are accepted.
    let r = app
        .validate(&s.body(json!({"label": "ignored", "increment_usage": "2"})))
        .await;
    assert_eq!(r.expect(200).body["usage"], 2);
}

#[actix_web::test]
async fn expiry_follows_the_clock() {
    let start = Utc.with_ymd_and_hms(2025, 1, 15, 10, 0, 0).unwrap();
    let (clock, shared) = ManualClock::shared(start);
    let app = spawn(Some(shared)).await;
    let forever = app.seeded("forever", json!({"prefix": "testing"})).await;
    let day = app
        .seeded(
            "day",
            json!({"prefix": "testing", "expires": {"ttl": 1, "timeframe": "day"}}),
        )
        .await;
    let month = app
        .seeded(
            "month",
            json!({"prefix": "testing", "expires": {"ttl": 1, "timeframe": "month"}}),
        )
        .await;
    for s in [&forever, &day, &month] {
        app.validate(&s.body(json!({}))).await.expect(200);
    }
    let r = app
        .get(
            &format!("/v1/license-keys/{}", day.key.id),
            Some(&app.token),
        )
        .await;
    assert_eq!(r.body["expires_at"], "2025-01-16T10:00:00Z");

    clock.set(start + chrono::Duration::days(28));
    app.validate(&month.body(json!({}))).await.expect(200);
    let r = app.validate(&day.body(json!({}))).await;
    r.expect_error(404);
    assert_eq!(r.body["detail"], "License key has expired.");

    clock.set(start + chrono::Duration::days(1) + chrono::Duration::minutes(5));
    app.validate(&day.body(json!({}))).await.expect_error(404);

    clock.set(start.checked_add_months(Months::new(1)).unwrap() + chrono::Duration::minutes(5));
    let r = app.validate(&month.body(json!({}))).await;
    r.expect_error(404);
    assert_eq!(r.body["detail"], "License key has expired.");

    clock.set(start.checked_add_months(Months::new(120)).unwrap());
    let r = app.validate(&forever.body(json!({}))).await;
    r.expect(200);
    assert_eq!(r.body["last_validated_at"], "2035-01-15T10:00:00Z");
    // Nor does it activate (403, before the key's activation settings are looked at).
    let r = app.activate(&day.body(json!({"label": "late"}))).await;
    assert_eq!(r.expect_error(403), "NotPermitted");
    assert_eq!(r.body["detail"], "License key has expired.");
    // An expired key can still be read and re-dated by its organizer.
    let r = app
        .patch(
            &format!("/v1/license-keys/{}", day.key.id),
            Some(&app.token),
            &json!({"expires_at": null}),
        )
        .await;
    r.expect(200);
    app.validate(&day.body(json!({}))).await.expect(200);
}

#[actix_web::test]
async fn usage_limit_sequence() {
    let app = spawn(None).await;
    let s = app.seeded("usage", json!({"limit_usage": 10})).await;
    let r = app.validate(&s.body(json!({"increment_usage": 1}))).await;
    assert_eq!(r.expect(200).body["usage"], 1);
    let r = app.validate(&s.body(json!({"increment_usage": 8}))).await;
    assert_eq!(r.expect(200).body["usage"], 9);
    let r = app.validate(&s.body(json!({"increment_usage": 2}))).await;
    assert_eq!(r.expect_error(400), "BadRequest");
    assert_eq!(r.body["detail"], "License key only has 1 more usages.");
    let r = app.validate(&s.body(json!({"increment_usage": 1}))).await;
    assert_eq!(r.expect(200).body["usage"], 10);
    assert_eq!(r.body["validations"], 3);
    // A negative increment cannot lower the usage to get past the limit (a deviation
    // from Polar, which accepts one); nothing is counted.
    let r = app.validate(&s.body(json!({"increment_usage": -10}))).await;
    let item = r.expect_invalid_at(json!(["body", "increment_usage"]));
    assert_eq!(item["type"], "greater_than_equal", "{item}");
    assert_eq!(item["input"], -10, "{item}");
    let r = app.validate(&s.body(json!({}))).await;
    assert_eq!(r.expect(200).body["usage"], 10);
    assert_eq!(r.body["validations"], 4);
}

#[actix_web::test]
async fn activation_limit_and_validation_with_an_activation() {
    let app = spawn(None).await;
    let s = app
        .seeded(
            "activation",
            json!({"activations": {"limit": 1, "enable_customer_admin": false}}),
        )
        .await;
    let r = app.activate(&s.body(json!({"label": "test"}))).await;
    r.expect(200);
    assert_activation_shape(&r.body);
    assert_key_shape(&r.body["license_key"]);
    let activation = r.id();

    let r = app
        .validate(&s.body(json!({"activation_id": uuid::Uuid::new_v4()})))
        .await;
    r.expect_error(404);
    assert_eq!(r.body["detail"], "Not found");
    let r = app
        .validate(&s.body(json!({"activation_id": activation})))
        .await;
    r.expect(200);
    assert_eq!(r.body["activation"]["id"], activation.as_str());
    assert_activation_shape(&r.body["activation"]);

    // Limit 1: a second activation is refused until the first is deactivated.
    let r = app.activate(&s.body(json!({"label": "second"}))).await;
    assert_eq!(r.expect_error(403), "NotPermitted");
    assert_eq!(
        r.body["detail"],
        "License key activation limit already reached"
    );
    let r = app
        .deactivate(&s.body(json!({"activation_id": activation})))
        .await;
    r.expect(204);
    assert_eq!(r.body, Value::String(String::new()), "204 has no body");
    let r = app
        .deactivate(&s.body(json!({"activation_id": activation})))
        .await;
    assert_eq!(r.body["detail"], "Not found");
    r.expect_error(404);
    let r = app
        .validate(&s.body(json!({"activation_id": activation})))
        .await;
    r.expect_error(404);
    app.activate(&s.body(json!({"label": "again"})))
        .await
        .expect(200);
}

#[actix_web::test]
async fn conditions_label_and_meta() {
    let app = spawn(None).await;
    let s = app
        .seeded(
            "conditions",
            json!({"activations": {"limit": 5, "enable_customer_admin": false}}),
        )
        .await;
    let conditions = json!({"ip": "192.168.0.1", "fingerprint": "abc123"});
    let meta = json!({"os": "macOS", "version": 14, "nested": {"a": [1, 2]}});
    let r = app
        .activate(&s.body(json!({"label": "office mac", "conditions": conditions, "meta": meta})))
        .await;
    r.expect(200);
    assert_eq!(r.body["label"], "office mac");
    assert_eq!(r.body["meta"], meta);
    assert!(r.body.get("conditions").is_none());
    let activation = r.id();

    let r = app
        .validate(&s.body(json!({"activation_id": activation})))
        .await;
    r.expect_error(404);
    assert_eq!(
        r.body["detail"],
        "License key does not match required conditions"
    );
    let r = app
        .validate(
            &s.body(json!({"activation_id": activation, "conditions": {"ip": "192.168.0.1"}})),
        )
        .await;
    r.expect_error(404);
    let r = app
        .validate(&s.body(json!({"activation_id": activation, "conditions": conditions})))
        .await;
    r.expect(200);
    assert_eq!(r.body["activation"]["meta"], meta);
    // Conditions are not checked without an activation id.
    app.validate(&s.body(json!({"conditions": {"other": true}})))
        .await
        .expect(200);
}

#[actix_web::test]
async fn a_key_without_activations_cannot_be_activated() {
    let app = spawn(None).await;
    let s = app.seeded("noact", json!({})).await;
    let r = app.activate(&s.body(json!({"label": "x"}))).await;
    assert_eq!(r.expect_error(403), "NotPermitted");
    assert_eq!(r.body["detail"], "License key does not require activation");
}

#[actix_web::test]
async fn revoked_keys_neither_validate_nor_activate() {
    let app = spawn(None).await;
    let s = app
        .seeded(
            "revoked",
            json!({"activations": {"limit": 2, "enable_customer_admin": false}}),
        )
        .await;
    app.validate(&s.body(json!({}))).await.expect(200);
    let r = app
        .patch(
            &format!("/v1/license-keys/{}", s.key.id),
            Some(&app.token),
            &json!({"status": "revoked"}),
        )
        .await;
    r.expect(200);
    let r = app.validate(&s.body(json!({}))).await;
    r.expect_error(404);
    assert_eq!(r.body["detail"], "License key is no longer active.");
    // Polar refuses it too (it once did not), so that an activation always answers a
    // granted key (polar-sdk 1.0's `GrantedLicenseKey`).
    let r = app.activate(&s.body(json!({"label": "x"}))).await;
    assert_eq!(r.expect_error(403), "NotPermitted");
    assert_eq!(
        r.body["detail"],
        "License key is no longer active. This license key can not be activated."
    );
    // Granted again, it activates.
    app.patch(
        &format!("/v1/license-keys/{}", s.key.id),
        Some(&app.token),
        &json!({"status": "granted"}),
    )
    .await
    .expect(200);
    app.activate(&s.body(json!({"label": "x"})))
        .await
        .expect(200);
}

#[actix_web::test]
async fn the_customer_sees_its_own_keys() {
    let app = spawn(None).await;
    let admin = app
        .seeded(
            "portal",
            json!({"activations": {"limit": 3, "enable_customer_admin": true}}),
        )
        .await;
    let hidden = app
        .key_benefit(
            &admin.org,
            json!({"activations": {"limit": 3, "enable_customer_admin": false}}),
        )
        .await;
    let hidden_key = app.grant(&admin.org, &hidden, &admin.customer).await;
    let other_customer = app.customer(&admin.org, "someone@else.example").await;
    let foreign = app.grant(&admin.org, &admin.benefit, &other_customer).await;
    for key in [&admin.key, &hidden_key] {
        app.activate(&json!({"key": key.key, "organization_id": admin.org, "label": "m"}))
            .await
            .expect(200);
    }
    let cst = app.customer_session(&admin.org, &admin.customer).await;

    let r = app
        .get("/v1/customer-portal/license-keys/", Some(&cst))
        .await;
    r.expect(200);
    assert_eq!(r.total_count(), 2);
    let ids: Vec<String> = r
        .items()
        .iter()
        .map(|k| k["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        ids,
        vec![admin.key.id.to_string(), hidden_key.id.to_string()]
    );
    for item in r.items() {
        assert_key_shape(&item);
    }
    let r = app
        .get(
            &format!("/v1/customer-portal/license-keys/?benefit_id={hidden}"),
            Some(&cst),
        )
        .await;
    assert_eq!(r.total_count(), 1);
    let r = app
        .get(
            &format!(
                "/v1/customer-portal/license-keys/?organization_id={}",
                uuid::Uuid::new_v4()
            ),
            Some(&cst),
        )
        .await;
    assert_eq!(r.total_count(), 0);

    // Activations only where the benefit lets the customer manage them.
    let r = app
        .get(
            &format!("/v1/customer-portal/license-keys/{}", admin.key.id),
            Some(&cst),
        )
        .await;
    r.expect(200);
    assert_key_shape(&r.body);
    assert_eq!(r.body["activations"].as_array().unwrap().len(), 1);
    let r = app
        .get(
            &format!("/v1/customer-portal/license-keys/{}", hidden_key.id),
            Some(&cst),
        )
        .await;
    assert_eq!(r.expect(200).body["activations"], json!([]));
    // Someone else's key.
    let r = app
        .get(
            &format!("/v1/customer-portal/license-keys/{}", foreign.id),
            Some(&cst),
        )
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");

    // Anonymous → 401; a user with the portal scope has no customers here; an organizer
    // token without the portal scope → 403.
    app.get("/v1/customer-portal/license-keys/", None)
        .await
        .expect_error(401);
    let user = app
        .user_with_scopes("portal@example.com", &[Scope::CustomerPortalRead])
        .await;
    let r = app
        .get("/v1/customer-portal/license-keys/", Some(&user))
        .await;
    assert_eq!(r.expect(200).total_count(), 0);
    let r = app
        .get(
            &format!("/v1/customer-portal/license-keys/{}", admin.key.id),
            Some(&user),
        )
        .await;
    r.expect_error(404);
    let organizer = app
        .user_with_scopes("keys@example.com", &[Scope::LicenseKeysRead])
        .await;
    let r = app
        .get("/v1/customer-portal/license-keys/", Some(&organizer))
        .await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
}
