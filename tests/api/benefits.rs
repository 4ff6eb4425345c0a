//! Benefits: custom, ads and license keys; the denials as well as the successes.

use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::helpers::{spawn_app, TestApp};

async fn org(app: &TestApp, slug: &str) -> String {
    app.created_org_as(&app.token, "Benefits Org", slug).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn license_keys(org: &str, description: &str) -> Value {
    json!({
        "type": "license_keys",
        "description": description,
        "organization_id": org,
        "properties": {
            "prefix": "acme",
            "expires": {"ttl": 2, "timeframe": "month"},
            "activations": {"limit": 5, "enable_customer_admin": false},
            "limit_usage": 100,
        },
    })
}

#[actix_web::test]
async fn create_read_update_and_delete_each_type() {
    let app = spawn_app().await;
    let org = org(&app, "benefits-crud").await;
    let t = Some(app.token.as_str());

    let created = app
        .post_json("/v1/benefits/", t, &license_keys(&org, "Desktop key"))
        .await;
    created.expect(201);
    let id = created.id();
    assert_eq!(created.body["properties"]["activations"]["limit"], 5);
    // All four keys are always present, null when unset; Tollgate's rotation setting is
    // on unless turned off.
    let bare = app
        .post_json(
            "/v1/benefits/",
            t,
            &json!({"type": "license_keys", "description": "Bare key", "organization_id": org, "properties": {}}),
        )
        .await;
    bare.expect(201);
    assert_eq!(
        bare.body["properties"],
        json!({"prefix": null, "expires": null, "activations": null, "limit_usage": null,
               "allow_customer_rotation": true, "grace_days": 3, "quantity": "one_key"})
    );
    let custom = app
        .post_json(
            "/v1/benefits/",
            t,
            &json!({"type": "custom", "description": "A note", "organization_id": org, "properties": {"note": "Thanks!"}}),
        )
        .await;
    custom.expect(201);
    assert_eq!(custom.body["properties"]["note"], "Thanks!");
    let ads = app
        .post_json(
            "/v1/benefits/",
            t,
            &json!({"type": "ads", "description": "Sponsor", "organization_id": org, "properties": {"image_height": 100}}),
        )
        .await;
    ads.expect(201);
    assert_eq!(
        ads.body["properties"],
        json!({"image_height": 100, "image_width": 400})
    );

    let got = app.get(&format!("/v1/benefits/{id}"), t).await;
    got.expect(200);
    assert_eq!(got.body, created.body);

    let updated = app
        .patch_json(
            &format!("/v1/benefits/{id}"),
            t,
            &json!({"type": "license_keys", "description": "Renamed key", "properties": {"prefix": "new"}}),
        )
        .await;
    updated.expect(200);
    assert_eq!(updated.body["description"], "Renamed key");
    assert_eq!(updated.body["properties"]["prefix"], "new");
    assert!(!updated.body["modified_at"].is_null());

    // The type cannot change.
    let r = app
        .patch_json(
            &format!("/v1/benefits/{id}"),
            t,
            &json!({"type": "custom", "description": "Nope"}),
        )
        .await;
    assert_eq!(r.expect_error(400), "BadRequest");
    assert_eq!(r.body["detail"], "The type of a benefit can't be changed.");

    let deleted = app
        .send(app.request(Method::DELETE, &format!("/v1/benefits/{id}"), t))
        .await;
    deleted.expect(204);
    assert_eq!(
        app.get(&format!("/v1/benefits/{id}"), t)
            .await
            .expect_error(404),
        "ResourceNotFound"
    );
    let list = app
        .get(&format!("/v1/benefits/?organization_id={org}"), t)
        .await;
    list.expect(200);
    assert_eq!(list.total_count(), 3);
}

#[actix_web::test]
async fn validation_names_the_field() {
    let app = spawn_app().await;
    let org = org(&app, "benefits-validation").await;
    let t = Some(app.token.as_str());
    for (description, loc) in [("ab", "description"), (&"x".repeat(43)[..], "description")] {
        let r = app
            .post_json("/v1/benefits/", t, &license_keys(&org, description))
            .await;
        r.expect_invalid_at(json!(["body", loc]));
    }
    let mut bad = license_keys(&org, "Bad limits");
    bad["properties"]["activations"]["limit"] = json!(51);
    bad["properties"]["expires"]["ttl"] = json!(0);
    bad["properties"]["limit_usage"] = json!(0);
    let r = app.post_json("/v1/benefits/", t, &bad).await;
    let items = r.expect_validation();
    let locs: Vec<&Value> = items.iter().map(|i| &i["loc"]).collect();
    assert!(
        locs.contains(&&json!(["body", "properties", "activations", "limit"])),
        "{items:?}"
    );
    assert!(
        locs.contains(&&json!(["body", "properties", "expires", "ttl"])),
        "{items:?}"
    );
    assert!(
        locs.contains(&&json!(["body", "properties", "limit_usage"])),
        "{items:?}"
    );
    let r = app
        .post_json("/v1/benefits/", t, &json!({"type": "discord", "description": "Nope", "organization_id": org, "properties": {}}))
        .await;
    r.expect_validation();
    let r = app
        .post_json(
            "/v1/benefits/",
            t,
            &json!({"description": "No type", "organization_id": org, "properties": {}}),
        )
        .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "type"]))["type"],
        "missing"
    );
    // A user token must name its organization, and one it belongs to.
    let mut no_org = license_keys(&org, "No org");
    no_org.as_object_mut().unwrap().remove("organization_id");
    let r = app.post_json("/v1/benefits/", t, &no_org).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "organization_id"]))["msg"],
        "organization_id is required."
    );
    let (_, stranger) = app
        .new_user_with_scopes("stranger@example.com", &[Scope::BenefitsWrite])
        .await;
    let r = app
        .post_json(
            "/v1/benefits/",
            Some(&stranger),
            &license_keys(&org, "Not mine"),
        )
        .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "organization_id"]))["msg"],
        "Organization not found."
    );
}

#[actix_web::test]
async fn list_filters_orders_and_pages() {
    let app = spawn_app().await;
    let org = org(&app, "benefits-list").await;
    let t = Some(app.token.as_str());
    for n in 0..7 {
        app.post_json("/v1/benefits/", t, &license_keys(&org, &format!("Key {n}")))
            .await
            .expect(201);
    }
    for n in 0..4 {
        app.post_json(
            "/v1/benefits/",
            t,
            &json!({"type": "custom", "description": format!("Note {n}"), "organization_id": org, "properties": {}}),
        )
        .await
        .expect(201);
    }
    let all = app
        .get(&format!("/v1/benefits/?organization_id={org}&limit=5"), t)
        .await;
    all.expect(200);
    assert_eq!((all.total_count(), all.max_page()), (11, 3));
    // Polar's order: by type (custom before license_keys), then creation time.
    let types: Vec<String> = all
        .items()
        .iter()
        .map(|b| b["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        types,
        vec!["custom", "custom", "custom", "custom", "license_keys"]
    );
    let page3 = app
        .get(
            &format!("/v1/benefits/?organization_id={org}&limit=5&page=3"),
            t,
        )
        .await;
    assert_eq!(page3.items().len(), 1);
    assert_eq!(page3.items()[0]["description"], "Key 6");
    let keys = app
        .get("/v1/benefits/?type=license_keys&limit=100", t)
        .await;
    assert_eq!(keys.total_count(), 7);
    let both = app
        .get("/v1/benefits/?type=license_keys&type=custom", t)
        .await;
    assert_eq!(both.total_count(), 11);
    let r = app.get("/v1/benefits/?type=bogus", t).await;
    r.expect_validation();
}

#[actix_web::test]
async fn denials() {
    let app = spawn_app().await;
    let org = org(&app, "benefits-denials").await;
    let t = Some(app.token.as_str());
    let id = app
        .post_json("/v1/benefits/", t, &license_keys(&org, "Guarded"))
        .await
        .id();

    assert_eq!(
        app.get("/v1/benefits/", None).await.expect_error(401),
        "Unauthorized"
    );
    let (_, read_only) = app
        .new_user_with_scopes("reader@example.com", &[Scope::BenefitsRead])
        .await;
    let r = app
        .post_json(
            "/v1/benefits/",
            Some(&read_only),
            &license_keys(&org, "Nope"),
        )
        .await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    let (_, products_only) = app
        .new_user_with_scopes("products@example.com", &[Scope::ProductsRead])
        .await;
    assert_eq!(
        app.get("/v1/benefits/", Some(&products_only))
            .await
            .expect_error(403),
        "insufficient_scope"
    );

    // Another organization's member sees nothing of it.
    let (_, other) = app
        .new_user_with_scopes(
            "other@example.com",
            &[Scope::BenefitsWrite, Scope::OrganizationsWrite],
        )
        .await;
    app.created_org_as(&other, "Other Org", "benefits-other")
        .await;
    assert_eq!(
        app.get(&format!("/v1/benefits/{id}"), Some(&other))
            .await
            .expect_error(404),
        "ResourceNotFound"
    );
    let r = app
        .patch_json(
            &format!("/v1/benefits/{id}"),
            Some(&other),
            &json!({"type": "license_keys", "description": "Mine now"}),
        )
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app
        .send(app.request(Method::DELETE, &format!("/v1/benefits/{id}"), Some(&other)))
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let list = app
        .get(
            &format!("/v1/benefits/?organization_id={org}"),
            Some(&other),
        )
        .await;
    list.expect(200);
    assert_eq!(list.total_count(), 0);
    assert_eq!(
        app.get("/v1/benefits/not-a-uuid", t)
            .await
            .expect_error(422),
        "RequestValidationError"
    );
}
