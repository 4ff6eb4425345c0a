//! The whole catalog a checkout needs, built over HTTP only, checked against the response
//! models Polar's SDKs require (`shared/spec/clients.md` §4): every required key present,
//! non-null where the SDK requires it, timestamps in UTC.

use serde_json::{json, Value};

use crate::helpers::{assert_utc_timestamp, spawn_app};

/// `required`: keys that must be present and non-null; `nullable`: keys that must be
/// present (null allowed).
#[track_caller]
fn assert_shape(model: &str, v: &Value, required: &[&str], nullable: &[&str]) {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("{model} is not an object: {v}"));
    for key in required {
        let value = obj
            .get(*key)
            .unwrap_or_else(|| panic!("{model}: missing {key} in {v}"));
        assert!(!value.is_null(), "{model}: {key} is null in {v}");
    }
    for key in nullable {
        assert!(obj.contains_key(*key), "{model}: missing {key} in {v}");
    }
    for key in ["created_at", "modified_at"] {
        if let Some(t) = obj.get(key).filter(|t| !t.is_null()) {
            assert_utc_timestamp(t);
        }
    }
}

#[actix_web::test]
async fn the_setup_of_a_checkout_has_the_shapes_the_sdks_require() {
    let app = spawn_app().await;
    let token = app.token.clone();
    let org = app
        .created_org_as(&token, "Acme Software", "acme-software")
        .await;
    let org_id = org["id"].as_str().unwrap().to_string();

    // A license-key benefit with a prefix, an activation limit and an expiry.
    let benefit = app
        .post_json(
            "/v1/benefits/",
            Some(&token),
            &json!({
                "type": "license_keys",
                "description": "Desktop license",
                "organization_id": org_id,
                "properties": {
                    "prefix": "acme",
                    "expires": {"ttl": 1, "timeframe": "year"},
                    "activations": {"limit": 3, "enable_customer_admin": true},
                },
            }),
        )
        .await;
    benefit.expect(201);
    let b = &benefit.body;
    assert_shape(
        "BenefitLicenseKeys",
        b,
        &[
            "created_at",
            "id",
            "description",
            "selectable",
            "deletable",
            "organization_id",
            "properties",
            "type",
        ],
        &["modified_at"],
    );
    assert_eq!(b["type"], "license_keys");
    assert_shape(
        "BenefitLicenseKeysProperties",
        &b["properties"],
        &["prefix", "expires", "activations"],
        &["limit_usage"],
    );
    assert_shape(
        "BenefitLicenseKeyExpirationProperties",
        &b["properties"]["expires"],
        &["ttl", "timeframe"],
        &[],
    );
    assert_shape(
        "BenefitLicenseKeyActivationProperties",
        &b["properties"]["activations"],
        &["limit", "enable_customer_admin"],
        &[],
    );
    let benefit_id = b["id"].as_str().unwrap().to_string();

    // A monthly product, then the benefit attached to it.
    let product = app
        .post_json(
            "/v1/products/",
            Some(&token),
            &json!({
                "name": "Acme Pro",
                "organization_id": org_id,
                "prices": [{"type": "recurring", "amount_type": "fixed", "price_amount": 1500, "price_currency": "usd", "recurring_interval": "month"}],
            }),
        )
        .await;
    product.expect(201);
    let product_id = product.body["id"].as_str().unwrap().to_string();
    let attached = app
        .post_json(
            &format!("/v1/products/{product_id}/benefits"),
            Some(&token),
            &json!({"benefits": [benefit_id]}),
        )
        .await;
    attached.expect(200);
    let p = &attached.body;
    assert_shape(
        "Product",
        p,
        &[
            "created_at",
            "id",
            "name",
            "is_recurring",
            "is_archived",
            "organization_id",
            "metadata",
            "prices",
            "benefits",
            "medias",
            "attached_custom_fields",
        ],
        &["modified_at", "description"],
    );
    assert_eq!(p["is_recurring"], true);
    let price = &p["prices"][0];
    assert_shape(
        "ProductPriceRecurringFixed",
        price,
        &[
            "created_at",
            "id",
            "is_archived",
            "product_id",
            "price_currency",
            "price_amount",
            "recurring_interval",
            "amount_type",
            "type",
        ],
        &["modified_at"],
    );
    assert_eq!(
        (price["type"].as_str(), price["amount_type"].as_str()),
        (Some("recurring"), Some("fixed"))
    );
    assert_eq!(p["benefits"][0]["id"], benefit_id.as_str());
    assert_eq!(p["benefits"][0]["properties"]["prefix"], "acme");

    // A discount restricted to the product.
    let discount = app
        .post_json(
            "/v1/discounts/",
            Some(&token),
            &json!({
                "name": "Launch", "code": "LAUNCH", "type": "fixed", "amount": 500, "currency": "usd",
                "duration": "once", "max_redemptions": 100, "products": [product_id], "organization_id": org_id,
            }),
        )
        .await;
    discount.expect(201);
    let d = &discount.body;
    assert_shape(
        "DiscountFixedOnceForeverDuration",
        d,
        &[
            "duration",
            "type",
            "amount",
            "currency",
            "created_at",
            "id",
            "metadata",
            "name",
            "redemptions_count",
            "organization_id",
            "products",
        ],
        &[
            "modified_at",
            "code",
            "starts_at",
            "ends_at",
            "max_redemptions",
        ],
    );
    assert_shape(
        "DiscountProduct",
        &d["products"][0],
        &[
            "created_at",
            "id",
            "name",
            "is_recurring",
            "is_archived",
            "organization_id",
        ],
        &["modified_at", "description"],
    );

    // A customer with a billing address and a tax id.
    let customer = app
        .post_json(
            "/v1/customers/",
            Some(&token),
            &json!({
                "email": "buyer@example.com", "name": "Buyer", "organization_id": org_id,
                "billing_address": {"country": "FR", "city": "Paris"}, "tax_id": "FR61954506077",
            }),
        )
        .await;
    customer.expect(201);
    let c = &customer.body;
    assert_shape(
        "Customer",
        c,
        &[
            "created_at",
            "id",
            "metadata",
            "email",
            "email_verified",
            "organization_id",
            "avatar_url",
        ],
        &["modified_at", "name", "billing_address", "tax_id"],
    );
    assert_shape("Address", &c["billing_address"], &["country"], &[]);
    assert_eq!(c["tax_id"], json!(["FR61954506077", "eu_vat"]));

    // Everything is listed for its organization.
    for (path, total) in [
        (format!("/v1/benefits/?organization_id={org_id}"), 1),
        (format!("/v1/products/?organization_id={org_id}"), 1),
        (format!("/v1/discounts/?organization_id={org_id}"), 1),
        (format!("/v1/customers/?organization_id={org_id}"), 1),
    ] {
        let list = app.get(&path, Some(&token)).await;
        list.expect(200);
        assert_shape("ListResource", &list.body, &["items", "pagination"], &[]);
        assert_shape(
            "Pagination",
            &list.body["pagination"],
            &["total_count", "max_page"],
            &[],
        );
        assert_eq!(list.total_count(), total, "{path}");
    }
}
