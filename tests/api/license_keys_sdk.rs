//! License keys as today's Polar clients call them (issue 27): validate, activate and
//! deactivate with a token (`/v1/license-keys/…`, `license_keys:write`), the trailing-slash
//! spellings they send, rotation (organizer and customer portal), the shapes each version
//! answers, and the list filters they send.

use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::license_keys::{assert_activation_shape, assert_key_shape, spawn, KeyApp, Seeded};

const VALIDATE: &str = "/v1/license-keys/validate";
const ACTIVATE: &str = "/v1/license-keys/activate";
const DEACTIVATE: &str = "/v1/license-keys/deactivate";

async fn seeded(app: &KeyApp, slug: &str) -> Seeded {
    app.seeded(
        slug,
        json!({"prefix": "tg", "activations": {"limit": 2, "enable_customer_admin": true}}),
    )
    .await
}

// ---------------------------------------------------------------------------------------
// Validate, activate, deactivate with a token
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn a_token_validates_activates_and_deactivates_as_the_portal_does() {
    let app = spawn(None).await;
    let s = seeded(&app, "sdk-token").await;
    let token = Some(app.token.as_str());

    let r = app.post(VALIDATE, token, &s.body(json!({}))).await;
    r.expect(200);
    assert_key_shape(&r.body);
    assert_eq!(r.body["id"], s.key.id.to_string());
    assert_eq!(r.body["validations"], 1);
    assert!(r.body["activation"].is_null());

    let r = app
        .post(
            ACTIVATE,
            token,
            &s.body(json!({"label": "laptop", "meta": {"os": "linux"}})),
        )
        .await;
    r.expect(200);
    assert_activation_shape(&r.body);
    assert_eq!(r.body["label"], "laptop");
    assert_eq!(r.body["license_key"]["id"], s.key.id.to_string());
    let activation = r.id();

    // The same key through the portal and with the token: one counter.
    let r = app
        .validate(&s.body(json!({"activation_id": activation, "increment_usage": 2})))
        .await;
    r.expect(200);
    let r = app
        .post(
            VALIDATE,
            token,
            &s.body(json!({"activation_id": activation, "benefit_id": s.benefit,
                           "customer_id": s.customer, "increment_usage": 1})),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["activation"]["id"], activation.as_str());
    assert_eq!(
        (r.body["usage"].clone(), r.body["validations"].clone()),
        (json!(3), json!(3))
    );

    // The portal's refusals, with the portal's statuses and messages.
    let r = app
        .post(
            VALIDATE,
            token,
            &s.body(json!({"benefit_id": uuid::Uuid::new_v4()})),
        )
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    assert_eq!(
        r.body["detail"],
        "License key does not match given benefit."
    );
    let r = app
        .post(VALIDATE, token, &s.body(json!({"increment_usage": -1})))
        .await;
    r.expect_invalid_at(json!(["body", "increment_usage"]));
    app.post(ACTIVATE, token, &s.body(json!({"label": "desktop"})))
        .await
        .expect(200);
    let r = app
        .post(ACTIVATE, token, &s.body(json!({"label": "third"})))
        .await;
    assert_eq!(r.expect_error(403), "NotPermitted");
    assert_eq!(
        r.body["detail"],
        "License key activation limit already reached"
    );

    let r = app
        .post(
            DEACTIVATE,
            token,
            &s.body(json!({"activation_id": activation})),
        )
        .await;
    r.expect(204);
    assert!(r.body.is_null() || r.body == json!(""), "{}", r.body);
    let r = app
        .post(
            DEACTIVATE,
            token,
            &s.body(json!({"activation_id": activation})),
        )
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app
        .post(
            VALIDATE,
            token,
            &s.body(json!({"activation_id": activation})),
        )
        .await;
    r.expect_error(404);
    let r = app
        .post(VALIDATE, token, &s.body(json!({"organization_id": "nope"})))
        .await;
    r.expect_invalid_at(json!(["body", "organization_id"]));
}

#[actix_web::test]
async fn token_commands_need_the_scope_and_an_organization_the_token_reaches() {
    let app = spawn(None).await;
    let s = seeded(&app, "sdk-denials").await;
    let act = app.activate(&s.body(json!({"label": "x"}))).await;
    act.expect(200);
    let activation = act.id();
    let bodies = [
        (VALIDATE, s.body(json!({}))),
        (ACTIVATE, s.body(json!({"label": "y"}))),
        (DEACTIVATE, s.body(json!({"activation_id": activation}))),
    ];

    for (path, body) in &bodies {
        // No token: 401, even though the portal's spelling needs none.
        let r = app.post(path, None, body).await;
        assert_eq!(r.expect_error(401), "Unauthorized", "{path}");
        let r = app.post(path, Some("polar_pat_nope"), body).await;
        assert_eq!(r.expect_error(401), "invalid_token", "{path}");
    }
    // Reading is not writing.
    let reader = app
        .user_with_scopes("reader@sdk.example", &[Scope::LicenseKeysRead])
        .await;
    for (path, body) in &bodies {
        let r = app.post(path, Some(&reader), body).await;
        assert_eq!(r.expect_error(403), "insufficient_scope", "{path}");
        assert!(
            r.www_authenticate().contains("license_keys:write"),
            "{path}"
        );
    }
    // Another organization's user, with the scope: the key is not found.
    let outsider = app
        .user_with_scopes("outsider@sdk.example", &[Scope::LicenseKeysWrite])
        .await;
    for (path, body) in &bodies {
        let r = app.post(path, Some(&outsider), body).await;
        assert_eq!(r.expect_error(404), "ResourceNotFound", "{path}");
        assert_eq!(r.body["detail"], "Not found", "{path}");
    }
    // An organization the token reaches, but not the key's: not found either.
    let other_org = app.org("sdk-denials-other").await;
    for (path, body) in &bodies {
        let mut body = body.clone();
        body["organization_id"] = json!(other_org);
        let r = app.post(path, Some(&app.token), &body).await;
        assert_eq!(r.expect_error(404), "ResourceNotFound", "{path}");
    }
    // A customer session is no organizer.
    let cst = app.customer_session(&s.org, &s.customer).await;
    let r = app.post(VALIDATE, Some(&cst), &bodies[0].1).await;
    r.expect_error(401);
    // Nothing above counted, activated or deactivated anything.
    let key = app
        .get(&format!("/v1/license-keys/{}", s.key.id), Some(&app.token))
        .await;
    key.expect(200);
    assert_eq!(key.body["validations"], 0);
    let live: Vec<Value> = key.body["activations"].as_array().unwrap().clone();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0]["id"], activation.as_str());
}

// ---------------------------------------------------------------------------------------
// Trailing slashes
// ---------------------------------------------------------------------------------------

/// Every license-key path the SDKs call is answered as they spell it, never with a
/// redirect (polar-sdk 1.0.2 follows none): `/v1/license-keys/` (1.0.x, 0.47) and
/// `/v1/license-keys` (the seed-era clients) alike.
#[actix_web::test]
async fn each_spelling_the_clients_call_is_answered_directly() {
    let app = spawn(None).await;
    let s = seeded(&app, "sdk-slash").await;
    let strict = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let cst = app.customer_session(&s.org, &s.customer).await;
    let list = format!("organization_id={}&page=1&limit=10", s.org);
    for (path, token) in [
        (format!("/v1/license-keys/?{list}"), app.token.clone()),
        (format!("/v1/license-keys?{list}"), app.token.clone()),
        (
            "/v1/customer-portal/license-keys/?page=1&limit=10".into(),
            cst.clone(),
        ),
        (format!("/v1/license-keys/{}", s.key.id), app.token.clone()),
        (
            format!("/v1/customer-portal/license-keys/{}", s.key.id),
            cst.clone(),
        ),
    ] {
        let r = crate::helpers::send_checked(
            strict
                .get(format!("{}{path}", app.address))
                .bearer_auth(&token)
                // As the 1.0 clients send it, on GETs too.
                .header("content-type", "application/json"),
        )
        .await;
        r.expect(200);
        assert!(r.content_type().starts_with("application/json"), "{path}");
        if path.contains('?') {
            assert_eq!(r.total_count(), 1, "{path}");
            assert_eq!(r.items()[0]["id"], s.key.id.to_string(), "{path}");
        } else {
            assert_eq!(r.body["id"], s.key.id.to_string(), "{path}");
        }
    }
    for path in [VALIDATE, "/v1/customer-portal/license-keys/validate"] {
        let r = crate::helpers::send_checked(
            strict
                .post(format!("{}{path}", app.address))
                .bearer_auth(&app.token)
                .json(&s.body(json!({}))),
        )
        .await;
        r.expect(200);
    }
    // Both list spellings are the one list, with the same denials.
    for path in ["/v1/license-keys/", "/v1/license-keys"] {
        let r = app.get(path, None).await;
        assert_eq!(r.expect_error(401), "Unauthorized", "{path}");
    }
}

// ---------------------------------------------------------------------------------------
// Rotate
// ---------------------------------------------------------------------------------------

/// `POST path` with a token and, if given, a `Polar-Version`, no body (as the SDKs send it).
async fn post_bare(
    app: &KeyApp,
    path: &str,
    token: Option<&str>,
    version: Option<&str>,
) -> crate::helpers::Reply {
    let mut req = app.client.post(format!("{}{path}", app.address));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(v) = version {
        req = req.header("Polar-Version", v);
    }
    crate::helpers::send_checked(req).await
}

#[actix_web::test]
async fn rotation_gives_a_new_value_and_the_old_one_stops_validating_at_once() {
    let app = spawn(None).await;
    let s = seeded(&app, "sdk-rotate").await;
    let token = Some(app.token.as_str());
    let key_path = format!("/v1/license-keys/{}", s.key.id);
    // A key with history: an activation, usage, validations, limits changed.
    let act = app.activate(&s.body(json!({"label": "laptop"}))).await;
    act.expect(200);
    let activation = act.id();
    app.validate(&s.body(json!({"increment_usage": 2})))
        .await
        .expect(200);
    app.patch(&key_path, token, &json!({"limit_usage": 40}))
        .await
        .expect(200);
    let before = app.get(&key_path, token).await;
    before.expect(200);

    let r = post_bare(&app, &format!("{key_path}/rotate"), token, None).await;
    r.expect(200);
    assert_key_shape(&r.body);
    let new_value = r.body["key"].as_str().unwrap().to_string();
    assert_ne!(new_value, s.key.key);
    assert!(new_value.starts_with("TG-"), "{new_value}");
    assert_eq!(new_value.len(), s.key.key.len());
    assert_eq!(r.body["id"], s.key.id.to_string());
    assert_eq!(
        r.body["display_key"],
        format!("****-{}", &new_value[new_value.len() - 6..])
    );
    for k in [
        "status",
        "usage",
        "validations",
        "limit_usage",
        "limit_activations",
        "expires_at",
        "customer_id",
        "benefit_id",
        "organization_id",
    ] {
        assert_eq!(r.body[k], before.body[k], "{k}");
    }

    // The old value is refused at once, on every path; the new one validates.
    let old = s.body(json!({}));
    let new = json!({"key": new_value, "organization_id": s.org});
    let r = app.validate(&old).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    assert_eq!(r.body["detail"], "Not found");
    app.post(VALIDATE, token, &old).await.expect_error(404);
    app.activate(&s.body(json!({"label": "x"})))
        .await
        .expect_error(404);
    let r = app.validate(&new).await;
    r.expect(200);
    assert_eq!(
        r.body["validations"],
        before.body["validations"].as_i64().unwrap() + 1
    );
    let r = app
        .validate(&json!({"key": new_value, "organization_id": s.org,
                          "activation_id": activation}))
        .await;
    r.expect(200);
    assert_eq!(r.body["activation"]["id"], activation.as_str());
    // Reads show the new value, with the activation kept.
    let after = app.get(&key_path, token).await;
    assert_eq!(after.body["key"], new_value.as_str());
    assert_eq!(after.body["activations"].as_array().map(Vec::len), Some(1));
    let list = app
        .get(
            &format!("/v1/license-keys/?organization_id={}", s.org),
            token,
        )
        .await;
    assert_eq!(list.items()[0]["key"], new_value.as_str());

    // Twice in a row: each value replaces the last.
    let r = post_bare(&app, &format!("{key_path}/rotate"), token, None).await;
    r.expect(200);
    let third = r.body["key"].as_str().unwrap().to_string();
    app.validate(&new).await.expect_error(404);
    app.validate(&json!({"key": third, "organization_id": s.org}))
        .await
        .expect(200);
}

#[actix_web::test]
async fn only_granted_or_disabled_keys_rotate() {
    let app = spawn(None).await;
    let s = seeded(&app, "sdk-rotate-status").await;
    let token = Some(app.token.as_str());
    let key_path = format!("/v1/license-keys/{}", s.key.id);
    let rotate = format!("{key_path}/rotate");

    app.patch(&key_path, token, &json!({"status": "disabled"}))
        .await
        .expect(200);
    let r = post_bare(&app, &rotate, token, None).await;
    r.expect(200);
    assert_eq!(r.body["status"], "disabled");
    let disabled_value = r.body["key"].as_str().unwrap().to_string();

    app.patch(&key_path, token, &json!({"status": "revoked"}))
        .await
        .expect(200);
    let r = post_bare(&app, &rotate, token, None).await;
    assert_eq!(r.expect_error(400), "RotateNotPermitted");
    assert_eq!(
        r.body["detail"],
        "License key cannot be rotated in its current status. Current status: revoked. \
         Allowed statuses: disabled, granted."
    );
    // Nothing changed.
    let key = app.get(&key_path, token).await;
    assert_eq!(key.body["key"], disabled_value.as_str());
}

#[actix_web::test]
async fn rotation_needs_the_scope_and_a_reachable_key() {
    let app = spawn(None).await;
    let s = seeded(&app, "sdk-rotate-denials").await;
    let rotate = format!("/v1/license-keys/{}/rotate", s.key.id);
    let r = post_bare(&app, &rotate, None, None).await;
    assert_eq!(r.expect_error(401), "Unauthorized");
    let reader = app
        .user_with_scopes("reader@rotate.example", &[Scope::LicenseKeysRead])
        .await;
    let r = post_bare(&app, &rotate, Some(&reader), None).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    let outsider = app
        .user_with_scopes("outsider@rotate.example", &[Scope::LicenseKeysWrite])
        .await;
    let r = post_bare(&app, &rotate, Some(&outsider), None).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let cst = app.customer_session(&s.org, &s.customer).await;
    post_bare(&app, &rotate, Some(&cst), None)
        .await
        .expect_error(401);
    let r = post_bare(
        &app,
        &format!("/v1/license-keys/{}/rotate", uuid::Uuid::new_v4()),
        Some(&app.token),
        None,
    )
    .await;
    r.expect_error(404);
    let r = post_bare(&app, "/v1/license-keys/nope/rotate", Some(&app.token), None).await;
    r.expect_invalid_at(json!(["path", "id"]));
    // None of it changed the key.
    app.validate(&s.body(json!({}))).await.expect(200);
}

#[actix_web::test]
async fn a_customer_rotates_its_own_keys_only() {
    let app = spawn(None).await;
    let s = seeded(&app, "sdk-portal-rotate").await;
    let other_customer = app.customer(&s.org, "other@portal-rotate.example").await;
    let foreign = app.grant(&s.org, &s.benefit, &other_customer).await;
    let cst = app.customer_session(&s.org, &s.customer).await;
    let path = |id: &dyn std::fmt::Display| format!("/v1/customer-portal/license-keys/{id}/rotate");

    let r = post_bare(&app, &path(&s.key.id), Some(&cst), None).await;
    r.expect(200);
    assert_key_shape(&r.body);
    let new_value = r.body["key"].as_str().unwrap().to_string();
    assert!(new_value.starts_with("TG-"));
    app.validate(&s.body(json!({}))).await.expect_error(404);
    app.validate(&json!({"key": new_value, "organization_id": s.org}))
        .await
        .expect(200);
    let mine = app
        .get(
            &format!("/v1/customer-portal/license-keys/{}", s.key.id),
            Some(&cst),
        )
        .await;
    assert_eq!(mine.body["key"], new_value.as_str());

    // Another customer's key: not found, and untouched.
    let r = post_bare(&app, &path(&foreign.id), Some(&cst), None).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    app.validate(&json!({"key": foreign.key, "organization_id": s.org}))
        .await
        .expect(200);
    // A session, nothing else: anonymous 401; a user with the scope sees no customer's keys.
    post_bare(&app, &path(&s.key.id), None, None)
        .await
        .expect_error(401);
    let user = app
        .user_with_scopes("user@portal-rotate.example", &[Scope::CustomerPortalWrite])
        .await;
    post_bare(&app, &path(&s.key.id), Some(&user), None)
        .await
        .expect_error(404);
    let reader = app
        .user_with_scopes("reader@portal-rotate.example", &[Scope::CustomerPortalRead])
        .await;
    post_bare(&app, &path(&s.key.id), Some(&reader), None)
        .await
        .expect_error(403);
    // Revoked: the organizer's rule.
    app.patch(
        &format!("/v1/license-keys/{}", s.key.id),
        Some(&app.token),
        &json!({"status": "revoked"}),
    )
    .await
    .expect(200);
    let r = post_bare(&app, &path(&s.key.id), Some(&cst), None).await;
    assert_eq!(r.expect_error(400), "RotateNotPermitted");
}

/// `RotatedLicenseKey` in each version: `member_id`/`member` from 2026-10 on.
#[actix_web::test]
async fn the_rotated_key_has_its_versions_fields() {
    let app = spawn(None).await;
    let s = seeded(&app, "sdk-rotate-versions").await;
    let rotate = format!("/v1/license-keys/{}/rotate", s.key.id);
    for (version, member) in [
        (None, false),
        (Some("2026-04"), false),
        (Some("2026-10"), true),
        (Some("2027-01"), true),
    ] {
        let r = post_bare(&app, &rotate, Some(&app.token), version).await;
        r.expect(200);
        assert_eq!(r.body.get("member_id").is_some(), member, "{version:?}");
        assert_eq!(r.body.get("member").is_some(), member, "{version:?}");
        for k in ["subscription", "order"] {
            assert!(r.body.get(k).is_none(), "{version:?}: {k}");
        }
    }
}
