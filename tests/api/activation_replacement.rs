//! Activation replacement (behaviour.md, decisions of 2026-11-28): `activate` at the limit
//! with `"replace": "oldest"` or `{"label": …}` frees that live activation when the benefit
//! allows replacement (`activations.allow_replacement`), in one write of the key's actor;
//! rate-limited per key (429 with `Retry-After`, policy `replace`); else the usual 403.

use std::collections::HashSet;

use futures_util::future::join_all;
use serde_json::{json, Value};
use tollgate::domain::ids::LicenseKeyId;
use tollgate_actors::license_key::{LicenseKey, REPLACEMENTS_PER_WINDOW};

use crate::license_keys::{spawn, KeyApp};

/// Key properties with 3 activations, replacement allowed or not.
fn props(allow: bool) -> Value {
    json!({"activations": {"limit": 3, "enable_customer_admin": false, "allow_replacement": allow}})
}

/// An endpoint of `org` listening for the activation events, so the fan-out writes them.
async fn hook(app: &KeyApp, org: &str) {
    app.post(
        "/v1/webhooks/endpoints",
        Some(&app.token),
        &json!({"url": "https://hooks.example.com/tollgate", "format": "raw",
                "events": ["license_key.activated", "license_key.deactivated"],
                "organization_id": org}),
    )
    .await
    .expect(201);
}

/// The payloads of the events of type `kind` the fan-out wrote, once it has caught up with
/// every committed change.
async fn events(app: &KeyApp, kind: &str) -> Vec<Value> {
    for _ in 0..1200 {
        if app.state.store.changes(None, 1).await.unwrap().is_empty() {
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(
        app.state.store.changes(None, 1).await.unwrap().is_empty(),
        "the webhook fan-out did not catch up"
    );
    crate::checkouts::webhook_events(&app.state)
        .await
        .into_iter()
        .filter(|e| e.event_type == kind)
        .map(|e| serde_json::from_str(&e.payload).unwrap())
        .collect()
}

async fn stored(app: &KeyApp, id: LicenseKeyId) -> LicenseKey {
    app.state
        .store
        .get::<LicenseKey>(&id.key())
        .await
        .unwrap()
        .expect("the key")
        .value
}

/// 64 concurrent activations with `replace: "oldest"` on one key with limit 3 (through the
/// token route, which the per-key HTTP limit of the public one does not throttle): exactly
/// 3 live activations afterwards, one freed per replacement, the rest refused by the
/// replacement limit, no 5xx.
#[actix_web::test]
async fn sixty_four_concurrent_replacements_keep_three_live_and_free_one_each() {
    let app = spawn(None).await;
    let s = app.seeded("replace64", props(true)).await;
    assert!(
        s.key.allow_replacement,
        "the key carries the benefit's setting"
    );
    let bodies: Vec<Value> = (0..64)
        .map(|i| s.body(json!({"label": format!("machine {i}"), "replace": "oldest"})))
        .collect();
    let replies = join_all(
        bodies
            .iter()
            .map(|body| app.post("/v1/license-keys/activate", Some(&app.token), body)),
    )
    .await;
    assert!(replies.iter().all(|r| r.status.as_u16() < 500));
    let ok: Vec<String> = replies
        .iter()
        .filter(|r| r.status == 200)
        .map(|r| r.body["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ok.len(), 3 + REPLACEMENTS_PER_WINDOW);
    for r in replies.iter().filter(|r| r.status != 200) {
        assert_eq!(r.expect_error(429), "TooManyRequests");
        assert!(r.header("retry-after").parse::<u64>().unwrap() > 0);
        assert!(r
            .header("ratelimit-policy")
            .contains("\"replace\";q=5;w=86400"));
    }
    let k = stored(&app, s.key.id).await;
    let live: HashSet<String> = k
        .activations
        .iter()
        .filter(|a| a.deleted_at.is_none())
        .map(|a| a.id.to_string())
        .collect();
    let freed: HashSet<String> = k
        .activations
        .iter()
        .filter(|a| a.deleted_at.is_some())
        .map(|a| a.id.to_string())
        .collect();
    assert_eq!(live.len(), 3);
    // Each replacement freed exactly one (deactivations = successful activations - 3), each
    // one of the activations made, none twice.
    assert_eq!(freed.len(), ok.len() - 3);
    let made: HashSet<String> = ok.iter().cloned().collect();
    assert_eq!(made.len(), ok.len());
    assert_eq!(live.union(&freed).cloned().collect::<HashSet<_>>(), made);
    // The key's own view agrees: three activations.
    let r = app
        .get(&format!("/v1/license-keys/{}", s.key.id), Some(&app.token))
        .await;
    r.expect(200);
    assert_eq!(r.body["activations"].as_array().unwrap().len(), 3);
}

#[actix_web::test]
async fn replace_by_label_on_the_public_route_and_its_refusals() {
    let app = spawn(None).await;
    let s = app.seeded("replacelabel", props(true)).await;
    hook(&app, &s.org).await;
    let mut ids = Vec::new();
    for label in ["laptop", "desk", "tablet"] {
        // Below the limit `replace` is ignored: a normal activation.
        let r = app
            .activate(&s.body(json!({"label": label, "replace": "oldest"})))
            .await;
        r.expect(200);
        ids.push(r.body["id"].as_str().unwrap().to_string());
    }
    assert!(stored(&app, s.key.id)
        .await
        .activations
        .iter()
        .all(|a| a.deleted_at.is_none()));
    // At the limit without `replace`: the usual 403.
    let r = app.activate(&s.body(json!({"label": "phone"}))).await;
    assert_eq!(r.expect_error(403), "NotPermitted");
    assert_eq!(r.body["code"], "activation_limit_reached");
    // A label no live activation has: 404 activation_not_found, nothing freed.
    let r = app
        .activate(&s.body(json!({"label": "phone", "replace": {"label": "Desk"}})))
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    assert_eq!(r.body["code"], "activation_not_found");
    // The exact label: "desk" is freed, "phone" takes its slot.
    let r = app
        .activate(&s.body(json!({"label": "phone", "replace": {"label": "desk"}})))
        .await;
    r.expect(200);
    let phone = r.body["id"].as_str().unwrap().to_string();
    let k = stored(&app, s.key.id).await;
    let live: Vec<String> = k
        .activations
        .iter()
        .filter(|a| a.deleted_at.is_none())
        .map(|a| a.id.to_string())
        .collect();
    assert_eq!(live, vec![ids[0].clone(), ids[2].clone(), phone]);
    // The freed one sends what a deactivation sends.
    let deactivated = events(&app, "license_key.deactivated").await;
    assert_eq!(deactivated.len(), 1);
    assert_eq!(deactivated[0]["data"]["id"], ids[1]);
    assert_eq!(deactivated[0]["data"]["label"], "desk");
    assert_eq!(
        deactivated[0]["data"]["license_key_id"],
        s.key.id.to_string()
    );
    // The freed activation no longer validates.
    let r = app
        .validate(&s.body(json!({"activation_id": ids[1]})))
        .await;
    assert_eq!(r.body["code"], "activation_not_found");
    r.expect(404);
}

#[actix_web::test]
async fn a_benefit_without_replacement_answers_the_usual_403_and_bad_values_are_422() {
    let app = spawn(None).await;
    let s = app.seeded("noreplace", props(false)).await;
    assert!(!s.key.allow_replacement);
    for i in 0..3 {
        app.activate(&s.body(json!({"label": format!("m{i}")})))
            .await
            .expect(200);
    }
    for replace in [json!("oldest"), json!({"label": "m0"})] {
        let r = app
            .activate(&s.body(json!({"label": "new", "replace": replace})))
            .await;
        assert_eq!(r.expect_error(403), "NotPermitted");
        assert_eq!(r.body["code"], "activation_limit_reached");
    }
    // Invalid `replace` values: 422 in the one shape, located at body.replace, on both
    // routes, whatever the key's state.
    for bad in [
        json!("newest"),
        json!("OLDEST"),
        json!(1),
        json!(true),
        json!([]),
        json!({}),
        json!({"label": 5}),
        json!({"label": "m0", "other": 1}),
        json!({"id": "m0"}),
    ] {
        let body = s.body(json!({"label": "new", "replace": bad}));
        let r = app.activate(&body).await;
        let item = r.expect_invalid_at(json!(["body", "replace"]));
        assert_eq!(item["input"], bad);
        let r = app
            .post("/v1/license-keys/activate", Some(&app.token), &body)
            .await;
        r.expect_invalid_at(json!(["body", "replace"]));
    }
    // `null` is no replacement.
    let r = app
        .activate(&s.body(json!({"label": "new", "replace": null})))
        .await;
    assert_eq!(r.body["code"], "activation_limit_reached");
}

// ---------------------------------------------------------------------------------------
// The customer portal's "Move to a new device"

/// A bought key whose benefit allows replacement (the shop's "Locked" benefit, changed
/// before the purchase: a key carries the setting its benefit had when granted), at its
/// limit of 2; the portal offers "Move to a new device" for each activation, which frees it
/// (counted as a replacement); another customer's key is 404; a key whose benefit does not
/// allow replacement is 403.
#[actix_web::test]
async fn the_portal_moves_an_activation_to_a_new_device() {
    use crate::benefit_grants::{buy, key_of};
    use crate::portal_pages::{activate, buyer, portal_shop, roomy, signed_in, status, VALIDATE};

    let dir = tempfile::tempdir().unwrap();
    let settings = roomy(dir.path());
    let app =
        crate::helpers::spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let shop = portal_shop(&app, "acme-move").await;
    app.patch_json(
        &format!("/v1/benefits/{}", shop.locked_benefit),
        Some(&app.token),
        &json!({"type": "license_keys", "properties": {"prefix": "LOCK", "allow_customer_rotation": false,
                "activations": {"limit": 2, "enable_customer_admin": false, "allow_replacement": true}}}),
    )
    .await
    .expect(200);
    let ada = buyer(&app, &shop, "ada@move.example").await;
    let bought = buy(&app, &shop.locked_product, &ada.email).await;
    let lk = &key_of(&app, &bought.customer, &shop.locked_benefit).await[0];
    let (lk_id, lk_key) = (
        lk["id"].as_str().unwrap().to_string(),
        lk["key"].as_str().unwrap().to_string(),
    );
    let old = activate(&app, &shop.org, &lk_key, "old laptop").await;
    let slug = &shop.slug;
    let mut b = signed_in(&app, slug, &ada.email).await;
    let path = format!("/portal/{slug}/license-keys/{lk_id}");
    // Below the limit: nothing to move, the seller manages the activations.
    let page = b.get(&path).await;
    status(&page, 200);
    assert!(!page.body.contains("/move"));
    assert!(page.body.contains("Acme Tools manages this key"));
    let desk = activate(&app, &shop.org, &lk_key, "desk").await;
    let page = b.get(&path).await;
    assert!(page.body.contains("2 of 2"));
    assert!(page.body.contains("Move to a new device"));
    assert!(page
        .body
        .contains(&format!("{path}/activations/{old}/move")));
    assert!(page
        .body
        .contains(&format!("{path}/activations/{desk}/move")));
    // No deactivation: the seller does not let customers manage activations.
    assert!(!page.body.contains("/deactivate"));
    let csrf = page.csrf();

    let page = b
        .post(
            &format!("{path}/activations/{old}/move"),
            &[("csrf_token", &csrf)],
        )
        .await;
    status(&page, 303);
    assert_eq!(page.location, format!("{path}?done=moved"));
    let page = b.get(&page.location).await;
    assert!(page.body.contains("1 of 2"));
    assert!(page
        .body
        .contains("Start the application on your new device"));
    // The moved activation validates no more; the new device activates in its slot.
    app.post_json(
        VALIDATE,
        None,
        &json!({"key": lk_key, "organization_id": shop.org, "activation_id": old}),
    )
    .await
    .expect(404);
    activate(&app, &shop.org, &lk_key, "new laptop").await;
    // Moved already: 404.
    let page = b
        .post(
            &format!("{path}/activations/{old}/move"),
            &[("csrf_token", &csrf)],
        )
        .await;
    status(&page, 404);

    // Another customer's key: 404, and nothing changes.
    let grace = buyer(&app, &shop, "grace@move.example").await;
    let other = buy(&app, &shop.locked_product, &grace.email).await;
    let gk = &key_of(&app, &other.customer, &shop.locked_benefit).await[0];
    let gk_key = gk["key"].as_str().unwrap().to_string();
    let g1 = activate(&app, &shop.org, &gk_key, "g1").await;
    activate(&app, &shop.org, &gk_key, "g2").await;
    let page = b
        .post(
            &format!(
                "/portal/{slug}/license-keys/{}/activations/{g1}/move",
                gk["id"].as_str().unwrap()
            ),
            &[("csrf_token", &csrf)],
        )
        .await;
    status(&page, 404);
    app.post_json(
        VALIDATE,
        None,
        &json!({"key": gk_key, "organization_id": shop.org, "activation_id": g1}),
    )
    .await
    .expect(200);

    // Ada's app key: its benefit does not allow replacement: no button, and a post is 403.
    let a1 = activate(&app, &shop.org, &ada.key, "a1").await;
    activate(&app, &shop.org, &ada.key, "a2").await;
    let app_path = format!("/portal/{slug}/license-keys/{}", ada.key_id);
    let page = b.get(&app_path).await;
    assert!(page.body.contains("2 of 2"));
    assert!(!page.body.contains("/move"));
    let page = b
        .post(
            &format!("{app_path}/activations/{a1}/move"),
            &[("csrf_token", &csrf)],
        )
        .await;
    status(&page, 403);
    assert!(page.body.contains("does not let this key"), "{}", page.body);
}
