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

// ---------------------------------------------------------------------------------------
// Shapes, per version
// ---------------------------------------------------------------------------------------

/// A sale through the API of a product with this `price` granting a license-key benefit
/// (prefix `TG`, 2 activations): returns the organization and the granted key (`id`, `key`).
async fn sell(app: &crate::helpers::TestApp, slug: &str, price: Value) -> (String, Value) {
    let token = Some(app.token.as_str());
    let org = app.created_org_as(&app.token, slug, slug).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let benefit = app
        .post_json(
            "/v1/benefits/",
            token,
            &json!({"type": "license_keys", "description": "Key", "organization_id": org,
                    "properties": {"prefix": "TG", "activations": {"limit": 2, "enable_customer_admin": true}}}),
        )
        .await;
    benefit.expect(201);
    let product = app
        .post_json(
            "/v1/products/",
            token,
            &json!({"name": "Pro", "organization_id": org, "prices": [price]}),
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
        &json!({"customer_name": "Ada", "customer_email": format!("ada@{slug}.example"),
                "customer_billing_address": {"country": "FR"}, "confirmation_token_id": "tok_visa"}),
    )
    .await
    .expect(200);
    for _ in 0..100 {
        let keys = app
            .get(&format!("/v1/license-keys/?organization_id={org}"), token)
            .await
            .items();
        if let Some(key) = keys.first() {
            return (org, key.clone());
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the sale granted no key");
}

async fn post_in(
    app: &crate::helpers::TestApp,
    path: &str,
    version: Option<&str>,
    token: Option<&str>,
    body: &Value,
) -> crate::helpers::Reply {
    let mut req = app.request(reqwest::Method::POST, path, token).json(body);
    if let Some(v) = version {
        req = req.header("Polar-Version", v);
    }
    app.send(req).await
}

const VERSIONED: [&str; 6] = [
    "member_id",
    "member",
    "subscription_id",
    "subscription",
    "order_id",
    "order",
];

fn versioned_keys(v: &Value) -> Vec<&'static str> {
    VERSIONED
        .iter()
        .copied()
        .filter(|k| v.get(*k).is_some())
        .collect()
}

/// Every key rendering carries `created_at` and `modified_at` (@polar-sh/sdk 0.47 requires
/// both, with an offset), in the default shape too; the activation's key is a superset of
/// `LicenseKeyRead` (0.47) and `GrantedLicenseKey` (1.0).
#[actix_web::test]
async fn every_key_rendering_has_its_timestamps() {
    let app = spawn(None).await;
    let s = seeded(&app, "sdk-timestamps").await;
    let token = Some(app.token.as_str());
    let cst = app.customer_session(&s.org, &s.customer).await;
    let act = app.activate(&s.body(json!({"label": "laptop"}))).await;
    act.expect(200);
    let token_act = app
        .post(ACTIVATE, token, &s.body(json!({"label": "desktop"})))
        .await;
    token_act.expect(200);
    let activation = act.id();
    let key_path = format!("/v1/license-keys/{}", s.key.id);
    let renderings = [
        app.get(&key_path, token).await.body,
        app.get(&format!("{key_path}/activations/{activation}"), token)
            .await
            .body["license_key"]
            .clone(),
        app.get("/v1/license-keys/", token).await.items()[0].clone(),
        app.get(
            &format!("/v1/customer-portal/license-keys/{}", s.key.id),
            Some(&cst),
        )
        .await
        .body,
        app.get("/v1/customer-portal/license-keys/", Some(&cst))
            .await
            .items()[0]
            .clone(),
        app.validate(&s.body(json!({}))).await.body,
        app.post(VALIDATE, token, &s.body(json!({}))).await.body,
        act.body["license_key"].clone(),
        token_act.body["license_key"].clone(),
        app.patch(&key_path, token, &json!({"limit_usage": 9}))
            .await
            .body,
    ];
    for (i, v) in renderings.iter().enumerate() {
        assert_key_shape(v);
        crate::helpers::assert_utc_timestamp(&v["created_at"]);
        let created = chrono::DateTime::parse_from_rfc3339(v["created_at"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{i}: created_at {e}: {v}"));
        assert_eq!(
            created.timestamp(),
            s.key.created_at.timestamp(),
            "{i}: {v}"
        );
        assert!(
            v.as_object().unwrap().contains_key("modified_at"),
            "{i}: {v}"
        );
        if !v["modified_at"].is_null() {
            crate::helpers::assert_utc_timestamp(&v["modified_at"]);
        }
        assert!(
            versioned_keys(v).is_empty(),
            "{i}: the default shape has none: {v}"
        );
    }
    // The organizer's change stamped it.
    assert!(!renderings[9]["modified_at"].is_null());
    // The activation answers the granted key.
    assert_eq!(act.body["license_key"]["status"], "granted");
    assert_eq!(act.body["license_key_id"], s.key.id.to_string());
}

/// From 2027-01, validate and activate answers say what granted the key: the one-time
/// order (`order_id`, `order`: id, created_at, status, paid) or the subscription
/// (`subscription_id`, `subscription`: id, status, period, cancel_at_period_end, ends_at);
/// older versions and the default shape do not, and other renderings never do.
#[actix_web::test]
async fn from_2027_01_validate_and_activate_say_what_granted_the_key() {
    let app = crate::helpers::spawn_app().await;
    let (org, one_time) = sell(
        &app,
        "sdk-granted-order",
        json!({"type": "one_time", "amount_type": "fixed", "price_amount": 1900}),
    )
    .await;
    let (sub_org, recurring) = sell(
        &app,
        "sdk-granted-sub",
        json!({"type": "recurring", "amount_type": "fixed", "price_amount": 900,
               "price_currency": "usd", "recurring_interval": "month"}),
    )
    .await;
    let orders = app
        .get(
            &format!("/v1/orders/?organization_id={org}"),
            Some(&app.token),
        )
        .await
        .items();
    let order = &orders[0];
    let subscriptions = app
        .get(
            &format!("/v1/subscriptions/?organization_id={sub_org}"),
            Some(&app.token),
        )
        .await
        .items();
    let subscription = &subscriptions[0];

    for (org, key, granted_by) in [
        (&org, &one_time, "order"),
        (&sub_org, &recurring, "subscription"),
    ] {
        let body = json!({"key": key["key"], "organization_id": org});
        for (version, expected) in [
            (None, 0),
            (Some("2026-04"), 0),
            (Some("2026-10"), 2),
            (Some("2027-01"), 6),
        ] {
            for path in ["/v1/customer-portal/license-keys/validate", VALIDATE] {
                let r = post_in(&app, path, version, Some(&app.token), &body).await;
                r.expect(200);
                assert_eq!(
                    versioned_keys(&r.body).len(),
                    expected,
                    "{version:?} {path}: {}",
                    r.body
                );
                if expected == 6 {
                    check_granted_by(&r.body, granted_by, order, subscription);
                }
            }
            let mut activate = body.clone();
            activate["label"] = json!(format!("{version:?}"));
            let r = post_in(
                &app,
                "/v1/customer-portal/license-keys/activate",
                version,
                None,
                &activate,
            )
            .await;
            r.expect(200);
            let k = &r.body["license_key"];
            assert_eq!(versioned_keys(k).len(), expected, "{version:?}: {k}");
            if expected == 6 {
                check_granted_by(k, granted_by, order, subscription);
            }
            // Free the slot for the next version.
            let deactivate = json!({"key": key["key"], "organization_id": org,
                                    "activation_id": r.body["id"]});
            post_in(&app, DEACTIVATE, version, Some(&app.token), &deactivate)
                .await
                .expect(204);
            // Reads never carry them (LicenseKeyRead, LicenseKeyWithActivations).
            let mut req = app.request(
                reqwest::Method::GET,
                &format!("/v1/license-keys/{}", key["id"].as_str().unwrap()),
                Some(&app.token),
            );
            if let Some(v) = version {
                req = req.header("Polar-Version", v);
            }
            let r = app.send(req).await;
            r.expect(200);
            assert_eq!(
                versioned_keys(&r.body).len(),
                expected.min(2),
                "{version:?}"
            );
        }
    }
}

#[track_caller]
fn check_granted_by(v: &Value, granted_by: &str, order: &Value, subscription: &Value) {
    if granted_by == "order" {
        assert_eq!(v["order_id"], order["id"], "{v}");
        assert_eq!(
            v["order"],
            json!({"id": order["id"], "created_at": order["created_at"],
                   "status": "paid", "paid": true}),
            "{v}"
        );
        assert!(
            v["subscription_id"].is_null() && v["subscription"].is_null(),
            "{v}"
        );
    } else {
        assert_eq!(v["subscription_id"], subscription["id"], "{v}");
        let s = &v["subscription"];
        assert_eq!(s["id"], subscription["id"]);
        assert_eq!(s["status"], "active");
        for k in [
            "current_period_start",
            "current_period_end",
            "cancel_at_period_end",
            "ends_at",
        ] {
            assert_eq!(s[k], subscription[k], "{k}: {v}");
        }
        assert!(v["order_id"].is_null() && v["order"].is_null(), "{v}");
    }
}

// ---------------------------------------------------------------------------------------
// List filters
// ---------------------------------------------------------------------------------------

/// `GET /v1/license-keys/` honours every filter the clients send: `organization_id`,
/// `benefit_id` (each repeatable), `status` (repeatable: any of them), `page` and `limit`;
/// an unknown status is a 422, never ignored.
#[actix_web::test]
async fn the_list_honours_status_and_benefit_filters() {
    let app = spawn(None).await;
    let s = seeded(&app, "sdk-filters").await;
    let token = Some(app.token.as_str());
    let second = app.key_benefit(&s.org, json!({"prefix": "two"})).await;
    let granted = app.grant(&s.org, &s.benefit, &s.customer).await;
    let disabled = app.grant(&s.org, &second, &s.customer).await;
    let revoked = app.grant(&s.org, &second, &s.customer).await;
    for (key, status) in [(&disabled, "disabled"), (&revoked, "revoked")] {
        app.patch(
            &format!("/v1/license-keys/{}", key.id),
            token,
            &json!({"status": status}),
        )
        .await
        .expect(200);
    }
    // Another organization's revoked key, which no filter of this one shows.
    let other = seeded(&app, "sdk-filters-other").await;
    app.patch(
        &format!("/v1/license-keys/{}", other.key.id),
        token,
        &json!({"status": "revoked"}),
    )
    .await
    .expect(200);

    let ids = |r: &crate::helpers::Reply| -> Vec<String> {
        r.items()
            .iter()
            .map(|k| k["id"].as_str().unwrap().to_string())
            .collect()
    };
    let org = format!("organization_id={}", s.org);
    for (query, expected) in [
        (org.clone(), vec![&s.key, &granted, &disabled, &revoked]),
        (format!("{org}&status=granted"), vec![&s.key, &granted]),
        (
            format!("{org}&status=revoked&status=disabled"),
            vec![&disabled, &revoked],
        ),
        (format!("{org}&status=disabled"), vec![&disabled]),
        (
            format!("{org}&benefit_id={second}&status=revoked"),
            vec![&revoked],
        ),
        (
            format!(
                "benefit_id={}&benefit_id={second}&status=granted",
                s.benefit
            ),
            vec![&s.key, &granted],
        ),
        (
            format!("{org}&status=granted&status=revoked&limit=1&page=2"),
            vec![&granted],
        ),
    ] {
        for path in ["/v1/license-keys/", "/v1/license-keys"] {
            let r = app.get(&format!("{path}?{query}"), token).await;
            r.expect(200);
            let want: Vec<String> = expected.iter().map(|k| k.id.to_string()).collect();
            assert_eq!(ids(&r), want, "{path}?{query}");
            for k in r.items() {
                assert_key_shape(&k);
            }
        }
    }
    let r = app
        .get(
            &format!("/v1/license-keys/?{org}&status=granted&status=revoked&limit=1"),
            token,
        )
        .await;
    assert_eq!((r.total_count(), r.max_page()), (3, 3));
    // Every organization the token reaches, revoked only.
    let r = app.get("/v1/license-keys/?status=revoked", token).await;
    assert_eq!(
        ids(&r),
        vec![revoked.id.to_string(), other.key.id.to_string()]
    );
    // An unknown status is refused, with where it was.
    let r = app
        .get("/v1/license-keys/?status=granted&status=paused", token)
        .await;
    let e = r.expect_invalid_at(json!(["query", "status", 1]));
    assert_eq!(e["type"], "enum");
    // The portal's own filter (a single benefit) is honoured as well.
    let cst = app.customer_session(&s.org, &s.customer).await;
    let r = app
        .get(
            &format!("/v1/customer-portal/license-keys/?benefit_id={second}"),
            Some(&cst),
        )
        .await;
    assert_eq!(
        ids(&r),
        vec![disabled.id.to_string(), revoked.id.to_string()]
    );
}
