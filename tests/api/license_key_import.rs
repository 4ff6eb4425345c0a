//! Keys a seller brings along (issue 32, part 4): `POST /v1/license-keys/import` takes
//! 1,000 keys with their holders and activations in one request, twice without effect the
//! second time; imported keys validate exactly like issued ones, with the strings the
//! other provider gave out; a value another key of the organization has is refused.

use serde_json::{json, Value};
use tollgate::domain::scope::Scope;

use crate::helpers::{spawn_app, TestApp};
use crate::versions::sell_key;

const IMPORT: &str = "/v1/license-keys/import";
const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";

/// Key `i` as the old provider issued it: ten keys per customer, one activation each
/// with conditions, some usage, every tenth disabled.
fn old_key(i: usize) -> Value {
    json!({
        "key": format!("OLD-{i:05}-ABCDEF"),
        "customer_email": format!("Buyer{}@Import.example", i / 10),
        "customer_name": "Old Buyer",
        "status": if i % 10 == 9 { "disabled" } else { "granted" },
        "usage": i % 7,
        "validations": i,
        "activations": [{"label": format!("machine-{i}"), "conditions": {"major": 2},
                         "meta": {"os": "linux"}}],
    })
}

#[actix_web::test]
async fn a_thousand_keys_import_twice_idempotently_and_validate_like_issued_ones() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "importer").await;
    let keys: Vec<Value> = (0..1000).map(old_key).collect();
    let body = json!({"organization_id": sale.org, "benefit_id": sale.benefit, "keys": keys});
    assert!(
        body.to_string().len() > 64 * 1024,
        "larger than the usual body limit"
    );
    let first = app.post_json(IMPORT, Some(&app.token), &body).await;
    first.expect(200);
    assert_eq!(first.body["created"], 1000);
    assert_eq!(first.body["unchanged"], 0);
    assert_eq!(first.body["customers_created"], 100);
    let again = app.post_json(IMPORT, Some(&app.token), &body).await;
    again.expect(200);
    assert_eq!(
        (
            &again.body["created"],
            &again.body["unchanged"],
            &again.body["customers_created"]
        ),
        (&json!(0), &json!(1000), &json!(0))
    );
    assert_eq!(first.body["items"][42]["id"], again.body["items"][42]["id"]);
    // One customer per address, whatever its case.
    assert_eq!(
        first.body["items"][0]["customer_id"],
        first.body["items"][9]["customer_id"]
    );
    let list = app
        .get(
            &format!("/v1/license-keys/?organization_id={}&limit=1", sale.org),
            Some(&app.token),
        )
        .await;
    assert_eq!(list.body["pagination"]["total_count"], 1001);

    // The strings the old provider gave out validate, with their activation and usage.
    let k = &first.body["items"][123];
    let id = k["id"].as_str().unwrap();
    let stored = app
        .get(&format!("/v1/license-keys/{id}"), Some(&app.token))
        .await;
    stored.expect(200);
    assert_eq!(stored.body["key"], "OLD-00123-ABCDEF");
    assert_eq!(stored.body["usage"], 123 % 7);
    assert_eq!(stored.body["limit_activations"], 3, "the benefit's");
    let activation = stored.body["activations"][0]["id"].clone();
    let r = app
        .post_json(
            VALIDATE,
            None,
            &json!({"key": "OLD-00123-ABCDEF", "organization_id": sale.org,
                    "activation_id": activation, "conditions": {"major": 2},
                    "increment_usage": 1}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["usage"], 123 % 7 + 1);
    assert_eq!(r.body["activation"]["label"], "machine-123");
    let r = app
        .post_json(
            VALIDATE,
            None,
            &json!({"key": "OLD-00123-ABCDEF", "organization_id": sale.org,
                    "activation_id": activation, "conditions": {"major": 3}}),
        )
        .await;
    assert_eq!(
        (r.status.as_u16(), &r.body["code"]),
        (404, &json!("conditions_mismatch"))
    );
    let r = app
        .post_json(
            VALIDATE,
            None,
            &json!({"key": "OLD-00009-ABCDEF", "organization_id": sale.org}),
        )
        .await;
    assert_eq!(r.body["code"], "disabled");
    // The activation limit holds: two more slots, then the limit.
    for label in ["a", "b"] {
        app.post_json(
            "/v1/customer-portal/license-keys/activate",
            None,
            &json!({"key": "OLD-00123-ABCDEF", "organization_id": sale.org, "label": label}),
        )
        .await
        .expect(200);
    }
    let r = app
        .post_json(
            "/v1/customer-portal/license-keys/activate",
            None,
            &json!({"key": "OLD-00123-ABCDEF", "organization_id": sale.org, "label": "c"}),
        )
        .await;
    assert_eq!(r.body["code"], "activation_limit_reached");
}

#[actix_web::test]
async fn imports_are_refused_as_a_whole_naming_each_problem() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "import-refusals").await;
    let post = |keys: Value| {
        let app = &app;
        let body = json!({"organization_id": sale.org, "benefit_id": sale.benefit, "keys": keys});
        async move { app.post_json(IMPORT, Some(&app.token), &body).await }
    };
    // A value an issued key already has.
    let r = post(json!([{"key": sale.key, "customer_email": "x@import.example"}])).await;
    r.expect_invalid_at(json!(["body", "keys", 0, "key"]));
    for (keys, loc) in [
        (json!([]), json!(["body", "keys"])),
        (
            json!([{"key": "HAS SPACE", "customer_email": "x@import.example"}]),
            json!(["body", "keys", 0, "key"]),
        ),
        (
            json!([{"key": "NO-HOLDER"}]),
            json!(["body", "keys", 0, "customer_email"]),
        ),
        (
            json!([{"key": "BAD-MAIL", "customer_email": "nope"}]),
            json!(["body", "keys", 0, "customer_email"]),
        ),
        (
            json!([{"key": "BAD-NAME", "customer_email": "x@import.example", "customer_name": "Eve\r\nBcc: y@import.example"}]),
            json!(["body", "keys", 0, "customer_name"]),
        ),
        (
            json!([{"key": "BAD-STATUS", "customer_email": "x@import.example", "status": "lost"}]),
            json!(["body", "keys", 0, "status"]),
        ),
        (
            json!([{"key": "TWICE", "customer_email": "x@import.example"},
                   {"key": "TWICE", "customer_email": "x@import.example"}]),
            json!(["body", "keys", 1, "key"]),
        ),
        (
            json!([{"key": "MANY", "customer_email": "x@import.example", "limit_activations": 1,
                    "activations": [{"label": "a"}, {"label": "b"}]}]),
            json!(["body", "keys", 0, "activations"]),
        ),
        (
            json!([{"key": "STRANGER", "customer_id": "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e"}]),
            json!(["body", "keys", 0, "customer_id"]),
        ),
    ] {
        post(keys).await.expect_invalid_at(loc);
    }
    // Nothing of a refused import was written.
    let r = post(json!([{"key": "MANY", "customer_email": "y@import.example"}])).await;
    r.expect(200);
    assert_eq!(r.body["created"], 1);
    // Another benefit of the organization that is not a license-key one.
    let custom = app
        .post_json(
            "/v1/benefits/",
            Some(&app.token),
            &json!({"type": "custom", "description": "Help", "organization_id": sale.org,
                    "properties": {"note": "hi"}}),
        )
        .await;
    custom.expect(201);
    let r = app
        .post_json(
            IMPORT,
            Some(&app.token),
            &json!({"organization_id": sale.org, "benefit_id": custom.body["id"],
                    "keys": [{"key": "K1", "customer_email": "x@import.example"}]}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "benefit_id"]));
    denied(&app, &sale.org, &sale.benefit).await;
}

/// Scopes and tenancy: a read token may not import; another user's token finds nothing.
async fn denied(app: &TestApp, org: &str, benefit: &str) {
    let body = json!({"organization_id": org, "benefit_id": benefit,
                      "keys": [{"key": "DENIED", "customer_email": "x@import.example"}]});
    let (_, reader) = app
        .new_user_with_scopes("reader@import.example", &[Scope::LicenseKeysRead])
        .await;
    app.post_json(IMPORT, Some(&reader), &body)
        .await
        .expect(403);
    let (_, stranger) = app
        .new_user_with_scopes("stranger@import.example", &[Scope::LicenseKeysWrite])
        .await;
    app.post_json(IMPORT, Some(&stranger), &body)
        .await
        .expect(404);
    app.post_json(IMPORT, None, &body).await.expect(401);
}

async fn session_of(app: &TestApp, customer: &str) -> String {
    let r = app
        .post_json(
            "/v1/customer-sessions/",
            Some(&app.token),
            &json!({"customer_id": customer}),
        )
        .await;
    r.expect(201);
    r.body["token"].as_str().unwrap().to_string()
}

/// Keys generated without an order validate nowhere until a customer claims one; the
/// claim is the customer's license key, the same on a second claim, refused to anyone
/// else.
#[actix_web::test]
async fn generated_keys_become_the_license_key_of_the_customer_who_claims_them() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "giveaway").await;
    let generate = |count: i64| {
        let app = &app;
        let body = json!({"organization_id": sale.org, "benefit_id": sale.benefit, "count": count});
        async move {
            app.post_json("/v1/license-keys/generate", Some(&app.token), &body)
                .await
        }
    };
    for bad in [0, 1001] {
        generate(bad)
            .await
            .expect_invalid_at(json!(["body", "count"]));
    }
    let g = generate(3).await;
    g.expect(200);
    let items = g.body["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 3);
    let gift = items[0]["key"].as_str().unwrap().to_string();
    assert!(gift.starts_with("TG-"), "{gift}");
    // Not a license key until claimed.
    let validate = |key: String| {
        let app = &app;
        let body = json!({"key": key, "organization_id": sale.org});
        async move { app.post_json(VALIDATE, None, &body).await }
    };
    let r = validate(gift.clone()).await;
    assert_eq!(
        (r.status.as_u16(), &r.body["code"]),
        (404, &json!("not_found"))
    );

    let ada = session_of(&app, &sale.customer).await;
    let claim = |token: String, key: String| {
        let app = &app;
        let body = json!({"key": key, "organization_id": sale.org});
        async move {
            app.post_json(
                "/v1/customer-portal/license-keys/claim",
                Some(&token),
                &body,
            )
            .await
        }
    };
    let r = claim(ada.clone(), gift.clone()).await;
    r.expect(200);
    assert_eq!(r.body["key"], gift.as_str());
    assert_eq!(r.body["customer_id"], sale.customer.as_str());
    assert_eq!(r.body["limit_activations"], 3);
    let id = r.body["id"].clone();
    validate(gift.clone()).await.expect(200);
    // Again by the same customer: the same key.
    let r = claim(ada.clone(), gift.clone()).await;
    r.expect(200);
    assert_eq!(r.body["id"], id);
    // Another customer of the organization: taken.
    let bob = app
        .post_json(
            "/v1/customers/",
            Some(&app.token),
            &json!({"email": "bob@giveaway.example", "organization_id": sale.org}),
        )
        .await;
    bob.expect(201);
    let bob = session_of(&app, bob.body["id"].as_str().unwrap()).await;
    let r = claim(bob.clone(), gift.clone()).await;
    assert_eq!(
        (r.status.as_u16(), &r.body["code"]),
        (409, &json!("already_claimed"))
    );
    // An unknown value, and no session.
    let r = claim(bob.clone(), "TG-NOPE".into()).await;
    assert_eq!(
        (r.status.as_u16(), &r.body["code"]),
        (404, &json!("not_found"))
    );
    app.post_json(
        "/v1/customer-portal/license-keys/claim",
        None,
        &json!({"key": items[1]["key"], "organization_id": sale.org}),
    )
    .await
    .expect(401);
    // A stranger's token cannot generate for this organization.
    let (_, stranger) = app
        .new_user_with_scopes("stranger@giveaway.example", &[Scope::LicenseKeysWrite])
        .await;
    app.post_json(
        "/v1/license-keys/generate",
        Some(&stranger),
        &json!({"organization_id": sale.org, "benefit_id": sale.benefit, "count": 1}),
    )
    .await
    .expect(404);
}
