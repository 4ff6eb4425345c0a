//! `/openapi.json` and `/docs`: the document covers exactly the routes the server
//! registers, is served as built, and the reference page renders it.

use serde_json::Value;

use crate::helpers::spawn_app;

#[actix_web::test]
async fn every_registered_route_is_documented_and_every_documented_one_registered() {
    let app = spawn_app().await;
    // Routes are recorded when a worker builds its App: once one has answered, they are.
    app.get("/healthz", None).await.expect(200);
    let registered = tollgate::resource::registered();
    let documented = tollgate::openapi::operations(tollgate::openapi::document());
    assert!(
        registered.len() > 40,
        "too few routes recorded: {registered:?}"
    );
    let undocumented: Vec<_> = registered.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "routes missing from the OpenAPI document: {undocumented:?}"
    );
    let unserved: Vec<_> = documented.difference(&registered).collect();
    assert!(
        unserved.is_empty(),
        "documented operations the server does not register: {unserved:?}"
    );
}

#[actix_web::test]
async fn the_document_is_served_as_openapi_3_1_json() {
    let app = spawn_app().await;
    let reply = app.get("/openapi.json", None).await;
    reply.expect(200);
    assert!(reply.content_type().starts_with("application/json"));
    assert_eq!(reply.body["openapi"], "3.1.0");
    assert_eq!(&reply.body, tollgate::openapi::document());
    let schemas = reply.body["components"]["schemas"].as_object().unwrap();
    for name in [
        "Checkout",
        "CheckoutPublicConfirmed",
        "LicenseKeyWithActivations",
        "Order",
        "Subscription",
        "HTTPValidationError",
    ] {
        assert!(schemas.contains_key(name), "schema {name} missing");
    }
    assert_eq!(
        reply.body["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
}

#[actix_web::test]
async fn the_reference_page_renders_every_operation() {
    let app = spawn_app().await;
    let resp = app.client.get(app.url("/docs")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let content_type = resp.headers()["content-type"].to_str().unwrap().to_string();
    assert!(content_type.starts_with("text/html"), "{content_type}");
    let page = resp.text().await.unwrap();
    assert!(page.starts_with("<!doctype html>"));
    assert!(page.contains("name=\"viewport\""));
    assert!(!page.contains("<script"), "the page must not need scripts");
    let doc: &Value = tollgate::openapi::document();
    for (method, path) in tollgate::openapi::operations(doc) {
        assert!(
            page.contains(&format!("<code>{path}</code>")),
            "{method} {path} not on the page"
        );
    }
}
