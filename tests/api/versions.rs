//! API versions (`Polar-Version`), as Polar serves them: the header selects a version on
//! every path, every answer names the version it was served in, an unknown or malformed
//! version is 404 `{"detail": "Not Found"}`, fields exist from their version on, and each
//! version has its OpenAPI document.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app, TestApp};

const VERSIONS: [&str; 3] = ["2026-04", "2026-10", "2027-01"];

async fn get_in(
    app: &TestApp,
    path: &str,
    version: &str,
    token: Option<&str>,
) -> crate::helpers::Reply {
    app.send(
        app.request(Method::GET, path, token)
            .header("Polar-Version", version),
    )
    .await
}

#[actix_web::test]
async fn answers_name_the_version_they_were_served_in() {
    let app = spawn_app().await;
    let r = app.get("/healthz", None).await;
    r.expect(200);
    assert_eq!(
        r.header("polar-version"),
        "2026-04",
        "the default without a header"
    );
    for version in VERSIONS {
        let r = get_in(&app, "/v1/organizations/", version, Some(&app.token)).await;
        r.expect(200);
        assert_eq!(r.header("polar-version"), version);
        // Errors name it too.
        let r = get_in(&app, "/v1/organizations/", version, None).await;
        r.expect_error(401);
        assert_eq!(r.header("polar-version"), version);
    }
    // An empty header is no header.
    let r = get_in(&app, "/healthz", "", None).await;
    r.expect(200);
    assert_eq!(r.header("polar-version"), "2026-04");
}

#[actix_web::test]
async fn an_unknown_or_malformed_version_is_not_found_on_every_path() {
    let app = spawn_app().await;
    for version in ["2025-10", "2026-07", "2026-4", "2026-04-01", "latest", "v1"] {
        for path in [
            "/healthz",
            "/v1/organizations/",
            "/openapi.json",
            "/nowhere",
        ] {
            // Not through `app.send`: these 404s are not the documented operations'.
            let r = crate::helpers::Reply::read(
                app.request(Method::GET, path, Some(&app.token))
                    .header("Polar-Version", version)
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert_eq!(r.status, 404, "{version} {path}: {}", r.body);
            assert_eq!(r.body, json!({"detail": "Not Found"}), "{version} {path}");
            assert!(r.content_type().starts_with("application/json"));
            assert!(
                r.headers.get("polar-version").is_none(),
                "{version} {path}: an unserved version is not named"
            );
        }
    }
    // Nothing ran: a create in an unknown version creates nothing.
    let r = app
        .request(Method::POST, "/v1/organizations/", Some(&app.token))
        .header("Polar-Version", "2099-01")
        .json(&json!({"name": "Ghost", "slug": "ghost"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let list = app.list_orgs(&app.token, "slug=ghost").await;
    assert_eq!(list.total_count(), 0);
}

#[actix_web::test]
async fn a_browser_may_send_and_read_the_version_header() {
    let app = spawn_app().await;
    let r = app
        .client
        .request(
            Method::OPTIONS,
            app.url("/v1/customer-portal/license-keys/validate"),
        )
        .header("Origin", "https://shop.example")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "authorization, polar-version",
        )
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let allowed = r.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(allowed.contains("polar-version"), "{allowed}");
    let r = app
        .client
        .post(app.url("/v1/customer-portal/license-keys/validate"))
        .header("Origin", "https://shop.example")
        .header("Polar-Version", "2026-10")
        .json(&json!({"key": "nope", "organization_id": uuid::Uuid::new_v4()}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.headers()["polar-version"], "2026-10");
    let exposed = r.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(exposed.contains("polar-version"), "{exposed}");
}

#[actix_web::test]
async fn each_version_has_its_openapi_document() {
    let app = spawn_app().await;
    let default = app.get("/openapi.json", None).await;
    default.expect(200);
    let key = |doc: &Value| doc["components"]["schemas"]["LicenseKeyRead"]["properties"].clone();
    assert!(
        key(&default.body)["member_id"].is_null(),
        "no member in the default shape"
    );
    for version in VERSIONS {
        let r = app.get(&format!("/{version}/openapi.json"), None).await;
        r.expect(200);
        assert_eq!(r.body["openapi"], "3.1.0");
        assert_eq!(r.body["info"]["version"], version);
        assert_eq!(
            &r.body,
            tollgate::openapi::document_for(tollgate::api::version::ApiVersion::parse(version))
        );
        let member = key(&r.body)["member_id"].is_object();
        assert_eq!(
            member,
            version != "2026-04",
            "{version}: member_id from 2026-10 on"
        );
        // 2027-01 adds `tiers`, `minimum_units` and `maximum_units` to a seat-based price
        // (`seat_tiers` stays for @polar-sh/sdk 1.0.1's 2027-01 types).
        for schema in [
            "ProductPriceRecurringSeatBased",
            "ProductPriceOneTimeSeatBased",
        ] {
            let props = &r.body["components"]["schemas"][schema]["properties"];
            let required = &r.body["components"]["schemas"][schema]["required"];
            let new = version == "2027-01";
            assert!(props.is_object(), "{version}: {schema} is a component");
            assert!(props["seat_tiers"].is_object(), "{version} {schema}");
            for field in ["tiers", "minimum_units", "maximum_units"] {
                assert_eq!(props[field].is_object(), new, "{version} {schema} {field}");
            }
            let names: Vec<&str> = required
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            assert!(names.contains(&"seat_tiers"), "{version} {schema}");
            assert_eq!(names.contains(&"tiers"), new, "{version} {schema}");
        }
    }
    for bad in ["2025-10", "2026-7", "v1"] {
        app.get(&format!("/{bad}/openapi.json"), None)
            .await
            .expect_error(404);
    }
}

/// A field that exists from 2026-10 on (a license key's `member_id`, `member`): absent
/// without a header and in 2026-04, sent (as null: Tollgate has no members) from 2026-10.
#[actix_web::test]
async fn version_gated_fields_are_sent_from_their_version_on() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "versions").await;
    let path = format!("/v1/license-keys/{}", sale.key_id);
    let r = app.get(&path, Some(&app.token)).await;
    r.expect(200);
    assert!(r.body.get("member_id").is_none(), "{}", r.body);
    for version in VERSIONS {
        let r = get_in(&app, &path, version, Some(&app.token)).await;
        r.expect(200);
        let has = r.body.get("member_id").is_some() && r.body.get("member").is_some();
        assert_eq!(has, version != "2026-04", "{version}: {}", r.body);
        if has {
            assert_eq!(r.body["member_id"], Value::Null);
            assert_eq!(r.body["member"], Value::Null);
        }
    }
}

/// What [`sell_key`] leaves behind.
#[allow(dead_code)] // each suite reads what it needs
pub struct Sale {
    pub org: String,
    pub benefit: String,
    pub product: String,
    pub customer: String,
    pub key_id: String,
    pub key: String,
}

/// A one-time sale through the API, as a seller and a buyer make it: an organization
/// (slug `slug`), a license-key benefit (prefix `TG`, 3 activations), a $19 product granting
/// it, a checkout paid with the test processor; returns the granted key.
pub async fn sell_key(app: &TestApp, slug: &str) -> Sale {
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
                    "properties": {"prefix": "TG", "activations": {"limit": 3, "enable_customer_admin": true}}}),
        )
        .await;
    benefit.expect(201);
    let benefit = benefit.id();
    let product = app
        .post_json(
            "/v1/products/",
            token,
            &json!({"name": "Pro", "organization_id": org,
                    "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 1900}]}),
        )
        .await;
    product.expect(201);
    let product = product.id();
    app.post_json(
        &format!("/v1/products/{product}/benefits"),
        token,
        &json!({"benefits": [benefit]}),
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
        &json!({"customer_name": "Ada Lovelace", "customer_email": format!("ada@{slug}.example"),
                "customer_billing_address": {"country": "FR"}, "confirmation_token_id": "tok_visa"}),
    )
    .await
    .expect(200);
    let mut keys = Vec::new();
    for _ in 0..100 {
        keys = app
            .get(&format!("/v1/license-keys/?organization_id={org}"), token)
            .await
            .items();
        if !keys.is_empty() {
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let key = keys.first().expect("the sale granted a key");
    Sale {
        org,
        benefit,
        product,
        customer: key["customer_id"].as_str().unwrap().to_string(),
        key_id: key["id"].as_str().unwrap().to_string(),
        key: key["key"].as_str().unwrap().to_string(),
    }
}
