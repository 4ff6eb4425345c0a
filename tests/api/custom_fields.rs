//! `/v1/custom-fields/`: CRUD for every field type, schema and service validation, list
//! filters, sorting and pagination, soft delete, and access control (reference sections 0,
//! 5, 6.4, 7, 8; Polar's `custom_field/` package).

use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate::domain::custom_field::CustomField;

use crate::helpers::{assert_utc_timestamp, spawn_app, Reply, TestApp};

const FIELDS: &str = "/v1/custom-fields/";
const UNKNOWN_ID: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";

fn field_path(id: &str) -> String {
    format!("{FIELDS}{id}")
}

/// A user holding `scopes` (plus organizations:write) and one organization of their own.
async fn seller(app: &TestApp, email: &str, slug: &str, scopes: &[Scope]) -> (String, String) {
    let mut all = vec![Scope::OrganizationsWrite];
    all.extend_from_slice(scopes);
    let (_, token) = app.new_user_with_scopes(email, &all).await;
    let org = app.created_org_as(&token, "Seller Org", slug).await;
    (token, org["id"].as_str().unwrap().to_string())
}

async fn writer(app: &TestApp, email: &str, slug: &str) -> (String, String) {
    seller(app, email, slug, &[Scope::CustomFieldsWrite]).await
}

async fn create(app: &TestApp, token: &str, body: &Value) -> Reply {
    app.post_json(FIELDS, Some(token), body).await
}

/// Creates a field and returns it, failing the test unless it is a 201.
async fn created(
    app: &TestApp,
    token: &str,
    org: &str,
    kind: &str,
    slug: &str,
    name: &str,
) -> Value {
    let properties = if kind == "select" {
        json!({"options": [{"value": "a", "label": "A"}]})
    } else {
        json!({})
    };
    let r = create(
        app,
        token,
        &json!({"type": kind, "slug": slug, "name": name, "organization_id": org, "properties": properties}),
    )
    .await;
    r.expect(201);
    r.body
}

async fn list(app: &TestApp, token: &str, query: &str) -> Reply {
    app.get(&format!("{FIELDS}?{query}"), Some(token)).await
}

async fn delete(app: &TestApp, token: Option<&str>, id: &str) -> Reply {
    app.send(app.request(Method::DELETE, &field_path(id), token))
        .await
}

#[track_caller]
fn assert_field_shape(v: &Value) {
    for key in [
        "id",
        "created_at",
        "modified_at",
        "metadata",
        "type",
        "slug",
        "name",
        "organization_id",
        "properties",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_utc_timestamp(&v["created_at"]);
    assert!(v["metadata"].is_object(), "{v}");
    assert!(v["properties"].is_object(), "{v}");
}

#[actix_web::test]
async fn crud_for_every_type() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "crud@example.com", "crud-org").await;
    let cases = [
        (
            "text",
            json!({"form_label": "Your note", "form_help_text": "Anything", "form_placeholder": "…", "textarea": true, "min_length": 1, "max_length": 200}),
        ),
        ("number", json!({"form_label": "Seats", "ge": 1, "le": 100})),
        ("date", json!({"ge": 1_704_067_200, "le": 1_735_689_600})),
        ("checkbox", json!({"form_label": "I agree"})),
        (
            "select",
            json!({"options": [{"value": "s", "label": "Small"}, {"value": "l", "label": "Large"}]}),
        ),
    ];
    for (kind, properties) in cases {
        let slug = format!("my-{kind}");
        let r = create(
            &app,
            &token,
            &json!({
                "type": kind,
                "slug": slug,
                "name": format!("My {kind}"),
                "organization_id": org,
                "properties": properties,
                "metadata": {"source": "test", "rank": 1, "on": true},
            }),
        )
        .await;
        r.expect(201);
        assert_field_shape(&r.body);
        assert_eq!(r.body["type"], kind);
        assert_eq!(r.body["slug"], slug.as_str());
        assert_eq!(r.body["organization_id"], org.as_str());
        assert_eq!(r.body["properties"], properties, "{kind}");
        assert_eq!(
            r.body["metadata"],
            json!({"source": "test", "rank": 1, "on": true})
        );
        assert_eq!(r.body["modified_at"], Value::Null);
        let id = r.id();

        let got = app.get(&field_path(&id), Some(&token)).await;
        got.expect(200);
        assert_eq!(got.body, r.body);

        let patched = app
            .patch_json(
                &field_path(&id),
                Some(&token),
                &json!({"type": kind, "name": format!("Renamed {kind}"), "slug": format!("renamed-{kind}"), "metadata": {"v": 2}}),
            )
            .await;
        patched.expect(200);
        assert_eq!(patched.body["name"], format!("Renamed {kind}"));
        assert_eq!(patched.body["slug"], format!("renamed-{kind}"));
        assert_eq!(patched.body["metadata"], json!({"v": 2}));
        assert_eq!(patched.body["properties"], properties, "unchanged");
        assert_utc_timestamp(&patched.body["modified_at"]);
        assert_eq!(patched.body["created_at"], r.body["created_at"]);

        delete(&app, Some(&token), &id).await.expect(204);
        let gone = app.get(&field_path(&id), Some(&token)).await;
        assert_eq!(gone.expect_error(404), "ResourceNotFound");
        delete(&app, Some(&token), &id).await.expect_error(404);
        app.patch_json(&field_path(&id), Some(&token), &json!({"type": kind}))
            .await
            .expect_error(404);
    }
    let r = list(&app, &token, "").await;
    r.expect(200);
    assert_eq!(
        r.total_count(),
        0,
        "deleted fields leave the list: {}",
        r.body
    );
}

#[actix_web::test]
async fn properties_are_replaced_and_render_only_set_keys() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "props@example.com", "props-org").await;
    let r = create(
        &app,
        &token,
        &json!({"type": "text", "slug": "note", "name": "Note", "organization_id": org, "properties": {}}),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["properties"], json!({}));
    assert_eq!(r.body["metadata"], json!({}));
    let id = r.id();
    let p = app
        .patch_json(
            &field_path(&id),
            Some(&token),
            &json!({"type": "text", "properties": {"max_length": 10, "unknown": 1}}),
        )
        .await;
    p.expect(200);
    assert_eq!(p.body["properties"], json!({"max_length": 10}));
    let p = app
        .patch_json(
            &field_path(&id),
            Some(&token),
            &json!({"type": "text", "properties": {"textarea": false}, "name": null, "slug": null}),
        )
        .await;
    p.expect(200);
    assert_eq!(
        p.body["properties"],
        json!({"textarea": false}),
        "replaced, not merged"
    );
    assert_eq!(p.body["name"], "Note", "null leaves the name as is");
    assert_eq!(p.body["slug"], "note");
    // Renaming to its own slug is fine.
    app.patch_json(
        &field_path(&id),
        Some(&token),
        &json!({"type": "text", "slug": "note"}),
    )
    .await
    .expect(200);
}

#[actix_web::test]
async fn create_validation_errors() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "valid@example.com", "valid-org").await;
    let body = |extra: Value| {
        let mut b = json!({"type": "text", "slug": "ok", "name": "Ok", "organization_id": org, "properties": {}});
        for (k, v) in extra.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    };

    for bad in ["Upper", "with space", "888!", "é"] {
        let r = create(&app, &token, &body(json!({"slug": bad}))).await;
        let item = r.expect_invalid_at(json!(["body", "text", "slug"]));
        assert_eq!(item["type"], "string_pattern_mismatch", "{bad}");
        assert_eq!(item["msg"], "String should match pattern '^[a-z0-9-_]+$'");
        assert_eq!(item["input"], bad);
    }
    let r = create(&app, &token, &body(json!({"slug": ""}))).await;
    let item = r.expect_invalid_at(json!(["body", "text", "slug"]));
    assert_eq!(item["type"], "string_too_short");
    assert_eq!(item["msg"], "String should have at least 1 character");

    let r = create(&app, &token, &body(json!({"name": ""}))).await;
    let item = r.expect_invalid_at(json!(["body", "text", "name"]));
    assert_eq!(item["type"], "string_too_short");

    // Select options: required, and each value and label a non-empty string.
    let r = create(
        &app,
        &token,
        &body(json!({"type": "select", "properties": {}})),
    )
    .await;
    let item = r.expect_invalid_at(json!(["body", "select", "properties", "options"]));
    assert_eq!(item["type"], "missing");
    assert_eq!(item["msg"], "Field required");
    let r = create(
        &app,
        &token,
        &body(json!({"type": "select", "properties": {"options": [{"value": "", "label": ""}]}})),
    )
    .await;
    let items = r.expect_validation();
    let locs: Vec<Value> = items.iter().map(|i| i["loc"].clone()).collect();
    assert_eq!(
        locs,
        vec![
            json!(["body", "select", "properties", "options", 0, "value"]),
            json!(["body", "select", "properties", "options", 0, "label"]),
        ]
    );
    assert_eq!(items[0]["type"], "string_too_short");
    let r = create(
        &app,
        &token,
        &body(json!({"type": "select", "properties": {"options": "a,b"}})),
    )
    .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "select", "properties", "options"]))["type"],
        "list_type"
    );
    // An empty list of options is accepted, as by Polar.
    create(
        &app,
        &token,
        &body(json!({"type": "select", "slug": "empty-select", "properties": {"options": []}})),
    )
    .await
    .expect(201);

    // Negative lengths, empty form texts, wrong scalar types.
    let r = create(
        &app,
        &token,
        &body(json!({"properties": {"min_length": -1, "form_label": "", "textarea": "maybe"}})),
    )
    .await;
    let items = r.expect_validation();
    assert_eq!(items.len(), 3, "{}", r.body);
    let ge = r.expect_invalid_at(json!(["body", "text", "properties", "min_length"]));
    assert_eq!(ge["type"], "greater_than_equal");
    assert_eq!(ge["msg"], "Input should be greater than or equal to 0");
    r.expect_invalid_at(json!(["body", "text", "properties", "form_label"]));
    r.expect_invalid_at(json!(["body", "text", "properties", "textarea"]));
    let r = create(
        &app,
        &token,
        &body(json!({"type": "number", "properties": {"ge": "x"}})),
    )
    .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "number", "properties", "ge"]))["type"],
        "int_parsing"
    );

    // Metadata keys are at most 40 characters.
    let long = "k".repeat(41);
    let r = create(
        &app,
        &token,
        &body(json!({"metadata": {long.clone(): "v"}})),
    )
    .await;
    let item = r.expect_invalid_at(json!(["body", "text", "metadata", long, "[key]"]));
    assert_eq!(item["type"], "string_too_long");
    assert_eq!(item["msg"], "String should have at most 40 characters");

    // Discriminator errors.
    let r = create(
        &app,
        &token,
        &json!({"slug": "x", "name": "X", "properties": {}}),
    )
    .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body"]))["type"],
        "union_tag_not_found"
    );
    let r = create(&app, &token, &body(json!({"type": "color"}))).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body"]))["type"],
        "union_tag_invalid"
    );

    // Missing required fields are all reported.
    let r = create(&app, &token, &json!({"type": "date"})).await;
    for field in ["slug", "name", "properties"] {
        assert_eq!(
            r.expect_invalid_at(json!(["body", "date", field]))["type"],
            "missing"
        );
    }

    // Organization resolution (reference 5).
    let mut no_org = body(json!({}));
    no_org.as_object_mut().unwrap().remove("organization_id");
    let r = create(&app, &token, &no_org).await;
    let item = r.expect_invalid_at(json!(["body", "organization_id"]));
    assert_eq!(item["type"], "missing");
    assert_eq!(item["msg"], "organization_id is required.");
    let r = create(&app, &token, &body(json!({"organization_id": UNKNOWN_ID}))).await;
    let item = r.expect_invalid_at(json!(["body", "organization_id"]));
    assert_eq!(item["msg"], "Organization not found.");
    let (_, other_org) = writer(&app, "other-valid@example.com", "other-valid-org").await;
    let r = create(&app, &token, &body(json!({"organization_id": other_org}))).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "organization_id"]))["msg"],
        "Organization not found."
    );
    let r = create(&app, &token, &body(json!({"organization_id": "nope"}))).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "text", "organization_id"]))["type"],
        "uuid_parsing"
    );

    // Nothing was created by the failed attempts.
    assert_eq!(list(&app, &token, "").await.total_count(), 1);
}

#[actix_web::test]
async fn slugs_are_unique_per_organization_including_deleted_fields() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "slug@example.com", "slug-org").await;
    let first = created(&app, &token, &org, "text", "size", "Size").await;
    let dup = |slug: &str, kind: &str| json!({"type": kind, "slug": slug, "name": "Again", "organization_id": org, "properties": {}});
    let r = create(&app, &token, &dup("size", "number")).await;
    let item = r.expect_invalid_at(json!(["body", "slug"]));
    assert_eq!(item["type"], "value_error");
    assert_eq!(item["msg"], "Custom field with this slug already exists.");
    assert_eq!(item["input"], "size");
    // Upper case never reaches the uniqueness check: the slug pattern refuses it.
    let r = create(&app, &token, &dup("SIZE", "text")).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "text", "slug"]))["type"],
        "string_pattern_mismatch"
    );
    // Another organization may use the same slug.
    let (token2, org2) = writer(&app, "slug2@example.com", "slug2-org").await;
    created(&app, &token2, &org2, "text", "size", "Size").await;

    // Renaming onto a taken slug is refused; the slug of a deleted field stays taken.
    let second = created(&app, &token, &org, "number", "count", "Count").await;
    let r = app
        .patch_json(
            &field_path(second["id"].as_str().unwrap()),
            Some(&token),
            &json!({"type": "number", "slug": "size"}),
        )
        .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "slug"]))["msg"],
        "Custom field with this slug already exists."
    );
    delete(&app, Some(&token), first["id"].as_str().unwrap())
        .await
        .expect(204);
    let r = create(&app, &token, &dup("size", "text")).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "slug"]))["msg"],
        "Custom field with this slug already exists."
    );
}

#[actix_web::test]
async fn the_type_cannot_change() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "type@example.com", "type-org").await;
    let f = created(&app, &token, &org, "text", "note", "Note").await;
    let r = app
        .patch_json(
            &field_path(f["id"].as_str().unwrap()),
            Some(&token),
            &json!({"type": "number", "name": "Count"}),
        )
        .await;
    let item = r.expect_invalid_at(json!(["body", "type"]));
    assert_eq!(item["type"], "value_error");
    assert_eq!(item["msg"], "The type of a custom field can't be changed.");
    assert_eq!(item["input"], "number");
    // `type` is required on update (it selects the schema).
    let r = app
        .patch_json(
            &field_path(f["id"].as_str().unwrap()),
            Some(&token),
            &json!({"name": "Count"}),
        )
        .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body"]))["type"],
        "union_tag_not_found"
    );
    let got = app
        .get(&field_path(f["id"].as_str().unwrap()), Some(&token))
        .await;
    assert_eq!(got.body["name"], "Note");
    // Update validation uses the same schema rules.
    let r = app
        .patch_json(
            &field_path(f["id"].as_str().unwrap()),
            Some(&token),
            &json!({"type": "text", "slug": "Bad Slug", "name": ""}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "text", "slug"]));
    r.expect_invalid_at(json!(["body", "text", "name"]));
}

#[actix_web::test]
async fn list_filters_sorting_and_pagination() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "list@example.com", "list-org").await;
    // (type, slug, name), created in this order.
    let specs = [
        ("text", "delta", "Zebra"),
        ("number", "alpha", "banana"),
        ("select", "charlie", "Apple"),
        ("checkbox", "bravo", "cherry"),
        ("date", "echo", "Date of birth"),
        ("text", "foxtrot", "apple pie"),
    ];
    for (kind, slug, name) in specs {
        created(&app, &token, &org, kind, slug, name).await;
    }
    let slugs = |r: &Reply| r.slugs();

    // Default: slug ascending.
    let r = list(&app, &token, "").await;
    r.expect(200);
    assert_eq!(r.total_count(), 6);
    assert_eq!(r.max_page(), 1);
    assert_eq!(
        slugs(&r),
        ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    );
    for item in r.items() {
        assert_field_shape(&item);
    }
    let r = list(&app, &token, "sorting=-slug").await;
    assert_eq!(
        slugs(&r),
        ["foxtrot", "echo", "delta", "charlie", "bravo", "alpha"]
    );
    let r = list(&app, &token, "sorting=created_at").await;
    assert_eq!(
        slugs(&r),
        ["delta", "alpha", "charlie", "bravo", "echo", "foxtrot"]
    );
    let r = list(&app, &token, "sorting=-created_at").await;
    assert_eq!(
        slugs(&r),
        ["foxtrot", "echo", "bravo", "charlie", "alpha", "delta"]
    );
    // Names sort case-insensitively.
    let r = list(&app, &token, "sorting=name").await;
    assert_eq!(
        slugs(&r),
        ["charlie", "foxtrot", "alpha", "bravo", "echo", "delta"]
    );
    // Types sort alphabetically (checkbox, date, number, select, text), ties by slug.
    let r = list(&app, &token, "sorting=type").await;
    assert_eq!(
        slugs(&r),
        ["bravo", "echo", "alpha", "charlie", "delta", "foxtrot"]
    );
    // Several criteria: type, then name descending.
    let r = list(&app, &token, "sorting=type&sorting=-name&limit=3&page=2").await;
    assert_eq!(r.total_count(), 6);
    assert_eq!(r.max_page(), 2);
    assert_eq!(slugs(&r), ["charlie", "delta", "foxtrot"]);

    // Filters: type (repeatable), query (name or slug, case-insensitive), organization.
    let r = list(&app, &token, "type=text").await;
    assert_eq!(slugs(&r), ["delta", "foxtrot"]);
    let r = list(&app, &token, "type=text&type=checkbox&sorting=-slug").await;
    assert_eq!(slugs(&r), ["foxtrot", "delta", "bravo"]);
    assert_eq!(r.total_count(), 3);
    let r = list(&app, &token, "query=APPLE").await;
    assert_eq!(slugs(&r), ["charlie", "foxtrot"]);
    let r = list(&app, &token, "query=ch").await;
    assert_eq!(
        slugs(&r),
        ["bravo", "charlie", "echo"],
        "name cherry, slugs charlie and echo"
    );
    let r = list(&app, &token, "query=apple&type=text").await;
    assert_eq!(slugs(&r), ["foxtrot"]);
    let r = list(&app, &token, &format!("organization_id={org}")).await;
    assert_eq!(r.total_count(), 6);
    let r = list(&app, &token, &format!("organization_id={UNKNOWN_ID}")).await;
    assert_eq!(r.total_count(), 0);

    // Pagination.
    let r = list(&app, &token, "limit=4&page=2").await;
    assert_eq!(slugs(&r), ["echo", "foxtrot"]);
    assert_eq!((r.total_count(), r.max_page()), (6, 2));
    let r = list(&app, &token, "limit=4&page=3").await;
    assert!(r.items().is_empty());
    assert_eq!(r.total_count(), 6);
    let r = list(&app, &token, "query=a&limit=2&page=2").await;
    assert_eq!(r.total_count(), 6, "every field has an a: {}", r.body);
    assert_eq!(slugs(&r), ["charlie", "delta"]);

    // Bad parameters.
    let r = list(&app, &token, "sorting=size").await;
    assert_eq!(
        r.expect_invalid_at(json!(["query", "sorting", 0]))["type"],
        "enum"
    );
    let r = list(&app, &token, "type=color").await;
    assert_eq!(
        r.expect_invalid_at(json!(["query", "type", 0]))["type"],
        "enum"
    );
    let r = list(&app, &token, "page=0").await;
    r.expect_invalid_at(json!(["query", "page"]));
    let r = list(&app, &token, "organization_id=nope").await;
    r.expect_invalid_at(json!(["query", "organization_id"]));
}

#[actix_web::test]
async fn access_control() {
    let app = spawn_app().await;
    let (token, org) = writer(&app, "owner@example.com", "owner-org").await;
    let f = created(&app, &token, &org, "text", "secret", "Secret").await;
    let id = f["id"].as_str().unwrap().to_string();

    // No token: 401 with the Bearer challenge.
    for r in [
        app.get(FIELDS, None).await,
        app.get(&field_path(&id), None).await,
        app.post_json(FIELDS, None, &json!({})).await,
        app.patch_json(&field_path(&id), None, &json!({"type": "text"}))
            .await,
        delete(&app, None, &id).await,
    ] {
        assert_eq!(r.expect_error(401), "Unauthorized");
        assert!(r.www_authenticate().contains("Bearer realm=\"polar\""));
    }
    // An unknown token: 401 invalid_token.
    let r = app.get(FIELDS, Some("polar_pat_nope")).await;
    r.expect(401);
    assert_eq!(r.body["error"], "invalid_token");

    // A token without a custom_fields scope: 403 insufficient_scope.
    let (_, products_only) = app
        .new_user_with_scopes("products@example.com", &[Scope::ProductsRead])
        .await;
    let r = app.get(FIELDS, Some(&products_only)).await;
    r.expect(403);
    assert_eq!(r.body["error"], "insufficient_scope");
    assert!(
        r.www_authenticate()
            .contains("scope=\"web_default custom_fields:read custom_fields:write\""),
        "{}",
        r.www_authenticate()
    );
    let r = app
        .post_json(FIELDS, Some(&products_only), &json!({"type": "text"}))
        .await;
    r.expect(403);
    assert!(
        r.www_authenticate()
            .contains("scope=\"web_default custom_fields:write\""),
        "{}",
        r.www_authenticate()
    );

    // custom_fields:read reads but does not write.
    let (reader, reader_org) = seller(
        &app,
        "reader@example.com",
        "reader-org",
        &[Scope::CustomFieldsRead],
    )
    .await;
    list(&app, &reader, "").await.expect(200);
    let r = create(
        &app,
        &reader,
        &json!({"type": "text", "slug": "x", "name": "X", "organization_id": reader_org, "properties": {}}),
    )
    .await;
    r.expect(403);
    assert_eq!(r.body["error"], "insufficient_scope");

    // Another organization's field: 404 everywhere, and absent from lists.
    let (stranger, stranger_org) = writer(&app, "stranger@example.com", "stranger-org").await;
    created(&app, &stranger, &stranger_org, "text", "mine", "Mine").await;
    assert_eq!(
        app.get(&field_path(&id), Some(&stranger))
            .await
            .expect_error(404),
        "ResourceNotFound"
    );
    app.patch_json(
        &field_path(&id),
        Some(&stranger),
        &json!({"type": "text", "name": "Hacked"}),
    )
    .await
    .expect_error(404);
    delete(&app, Some(&stranger), &id).await.expect_error(404);
    let r = list(&app, &stranger, "").await;
    assert_eq!(r.slugs(), ["mine"]);
    let r = list(&app, &stranger, &format!("organization_id={org}")).await;
    assert_eq!(r.total_count(), 0);
    let r = list(&app, &token, "").await;
    assert_eq!(r.slugs(), ["secret"]);
    // Still intact for its owner.
    let got = app.get(&field_path(&id), Some(&token)).await;
    got.expect(200);
    assert_eq!(got.body["name"], "Secret");

    // The bootstrap admin holds every scope but belongs to neither organization.
    let r = list(&app, &app.token, "").await;
    r.expect(200);
    assert_eq!(r.total_count(), 0, "the admin is a member of neither");

    // Unknown and malformed ids.
    app.get(&field_path(UNKNOWN_ID), Some(&token))
        .await
        .expect_error(404);
    let r = app.get(&field_path("nope"), Some(&token)).await;
    assert_eq!(
        r.expect_invalid_at(json!(["path", "id"]))["type"],
        "uuid_parsing"
    );
}

#[actix_web::test]
async fn lists_span_every_organization_of_the_user() {
    let app = spawn_app().await;
    let (token, org_a) = writer(&app, "multi@example.com", "multi-a").await;
    let org_b = app.created_org_as(&token, "Second", "multi-b").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    created(&app, &token, &org_a, "text", "b-field", "B").await;
    created(&app, &token, &org_b, "text", "a-field", "A").await;
    created(&app, &token, &org_b, "number", "c-field", "C").await;
    let r = list(&app, &token, "").await;
    assert_eq!(r.slugs(), ["a-field", "b-field", "c-field"]);
    let r = list(&app, &token, &format!("organization_id={org_b}")).await;
    assert_eq!(r.slugs(), ["a-field", "c-field"]);
    let r = list(
        &app,
        &token,
        &format!("organization_id={org_a}&organization_id={org_b}&type=text"),
    )
    .await;
    assert_eq!(r.slugs(), ["a-field", "b-field"]);
    // The same slug may exist once per organization.
    created(&app, &token, &org_b, "checkbox", "b-field", "B too").await;
    let r = list(&app, &token, "query=b-field").await;
    assert_eq!(r.total_count(), 2);
    let report = app
        .state
        .store
        .verify_indexes::<CustomField>()
        .await
        .unwrap();
    assert!(report.is_clean(), "{report:?}");
}
