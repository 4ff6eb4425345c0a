//! The bodies today's Polar clients send (polar-sdk 1.0.2, @polar-sh/sdk 0.47 and 1.0.1)
//! and the 2026 fields they need in answers: products whose prices have no `type` (the
//! product says how it recurs), benefits with metadata and visibility, organization and
//! webhook-endpoint settings; a feature Tollgate does not have is a 422 naming the field.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app, Reply, TestApp};

async fn org(app: &TestApp, slug: &str) -> String {
    app.created_org_as(&app.token, slug, slug).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn create_product(app: &TestApp, body: Value) -> Reply {
    app.post_json("/v1/products/", Some(&app.token), &body)
        .await
}

#[actix_web::test]
async fn a_2026_product_body_without_price_types_is_sold_as_its_product_recurs() {
    let app = spawn_app().await;
    let org = org(&app, "bodies").await;

    // One-time: no `recurring_interval`.
    let r = create_product(
        &app,
        json!({"name": "Desktop app", "organization_id": org, "visibility": "public",
               "prices": [{"amount_type": "fixed", "price_amount": 2500, "price_currency": "usd"}]}),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["is_recurring"], false);
    assert_eq!(r.body["recurring_interval"], Value::Null);
    assert_eq!(r.body["prices"][0]["type"], "one_time");
    assert_eq!(r.body["prices"][0]["price_amount"], 2500);
    assert_eq!(r.body["prices"][0]["source"], "catalog");

    // Recurring: the product's interval is every price's.
    let r = create_product(
        &app,
        json!({"name": "Cloud plan", "organization_id": org, "recurring_interval": "year",
               "recurring_interval_count": 1, "trial_interval": null,
               "prices": [{"amount_type": "fixed", "price_amount": 9900}]}),
    )
    .await;
    r.expect(201);
    let plan = r.id();
    assert_eq!(r.body["is_recurring"], true);
    assert_eq!(r.body["recurring_interval"], "year");
    assert_eq!(r.body["recurring_interval_count"], 1);
    assert_eq!(r.body["prices"][0]["type"], "recurring");
    assert_eq!(r.body["prices"][0]["recurring_interval"], "year");

    // An update's new untyped price recurs as the product does.
    let old_price = r.body["prices"][0]["id"].clone();
    let r = app
        .patch_json(
            &format!("/v1/products/{plan}"),
            Some(&app.token),
            &json!({"prices": [{"amount_type": "fixed", "price_amount": 12900}]}),
        )
        .await;
    r.expect(200);
    let prices = r.body["prices"].as_array().unwrap();
    assert_eq!(prices.len(), 1, "{}", r.body);
    assert_ne!(prices[0]["id"], old_price);
    assert_eq!(prices[0]["recurring_interval"], "year");
    assert_eq!(prices[0]["price_amount"], 12900);

    // The seed's typed prices still work beside them.
    create_product(
        &app,
        json!({"name": "Legacy", "organization_id": org,
               "prices": [{"type": "one_time", "amount_type": "custom", "minimum_amount": 300}]}),
    )
    .await
    .expect(201);
}

#[actix_web::test]
async fn what_tollgate_does_not_sell_is_a_422_naming_the_field() {
    let app = spawn_app().await;
    let org = org(&app, "unsupported").await;
    let fixed = json!({"amount_type": "fixed", "price_amount": 1000});
    let cases = [
        (
            json!({"prices": [{"amount_type": "seat_based", "price_per_seat": 500}]}),
            json!(["body", "prices", 0, "seat_tiers"]),
        ),
        (
            // Metered unit prices are sold (tests/api/metered_prices.rs); tiered ones are not.
            json!({"prices": [{"amount_type": "metered_tiers", "meter_id": "x", "tiers": []}]}),
            json!(["body", "prices", 0, "amount_type"]),
        ),
        (
            json!({"recurring_interval": "fortnight", "prices": [fixed]}),
            json!(["body", "recurring_interval"]),
        ),
        (
            json!({"recurring_interval": "month", "recurring_interval_count": 1000, "prices": [fixed]}),
            json!(["body", "recurring_interval_count"]),
        ),
        (
            json!({"recurring_interval": "month", "trial_interval": "day", "prices": [fixed]}),
            json!(["body", "trial_interval_count"]),
        ),
        (
            json!({"trial_interval": "day", "trial_interval_count": 7, "prices": [fixed]}),
            json!(["body", "trial_interval"]),
        ),
        (
            json!({"visibility": "draft", "prices": [fixed]}),
            json!(["body", "visibility"]),
        ),
        (
            json!({"prices": [{"amount_type": "fixed", "price_amount": 1000, "price_currency": "xau"}]}),
            json!(["body", "prices", 0, "price_currency"]),
        ),
        (
            json!({"prices": [{"amount_type": "fixed", "price_amount": 1000, "tax_behavior": "gross"}]}),
            json!(["body", "prices", 0, "tax_behavior"]),
        ),
    ];
    for (extra, loc) in cases {
        let mut body = json!({"name": "Nope", "organization_id": org});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let r = create_product(&app, body.clone()).await;
        let item = r.expect_invalid_at(loc.clone());
        assert!(item["msg"].is_string(), "{body} → {}", r.body);
    }
    let r = create_product(
        &app,
        json!({"name": "Nope", "organization_id": org, "prices": [{"amount_type": "unit_based"}]}),
    )
    .await;
    let item = r.expect_invalid_at(json!(["body", "prices", 0, "amount_type"]));
    assert_eq!(
        item["msg"],
        "Value error, Unit-based pricing is not supported by Tollgate."
    );
    // Nothing was created.
    let list = app
        .get(
            &format!("/v1/products/?organization_id={org}"),
            Some(&app.token),
        )
        .await;
    assert_eq!(list.total_count(), 0);

    // Organization settings Tollgate cannot honour.
    let r = app
        .post_json(
            "/v1/organizations/",
            Some(&app.token),
            &json!({"name": "Graceful", "slug": "graceful",
                    "subscription_settings": {"allow_multiple_subscriptions": false,
                        "allow_customer_updates": true, "proration_behavior": "prorate",
                        "benefit_revocation_grace_period": 7, "prevent_trial_abuse": false}}),
        )
        .await;
    r.expect_invalid_at(json!([
        "body",
        "subscription_settings",
        "benefit_revocation_grace_period"
    ]));
}

#[actix_web::test]
async fn benefits_keep_metadata_and_are_public() {
    let app = spawn_app().await;
    let org = org(&app, "benefit-meta").await;
    let r = app
        .post_json(
            "/v1/benefits/",
            Some(&app.token),
            &json!({"type": "license_keys", "description": "Pro key", "organization_id": org,
                    "metadata": {"tier": "pro", "seats": 3}, "visibility": "public",
                    "properties": {"prefix": "PRO", "limit_usage": null}}),
        )
        .await;
    r.expect(201);
    let id = r.id();
    assert_eq!(r.body["metadata"], json!({"tier": "pro", "seats": 3}));
    assert_eq!(r.body["visibility"], "public");
    assert_eq!(r.body["visibility_configurable"], false);
    assert_eq!(r.body["is_deleted"], false);

    let path = format!("/v1/benefits/{id}");
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"type": "license_keys", "metadata": {"tier": "team"}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["metadata"], json!({"tier": "team"}));
    assert_eq!(r.body["description"], "Pro key");
    let r = app.get(&path, Some(&app.token)).await;
    assert_eq!(r.body["metadata"], json!({"tier": "team"}));

    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"type": "license_keys", "visibility": "private"}),
        )
        .await;
    let item = r.expect_invalid_at(json!(["body", "visibility"]));
    assert_eq!(
        item["msg"],
        "Visibility is not configurable for this benefit type and must be public."
    );
    let r = app
        .post_json(
            "/v1/benefits/",
            Some(&app.token),
            &json!({"type": "custom", "description": "Bad metadata", "organization_id": org,
                    "metadata": {"nested": {"no": 1}}, "properties": {"note": null}}),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
}

#[actix_web::test]
async fn a_webhook_endpoint_keeps_its_api_version() {
    let app = spawn_app().await;
    let org = org(&app, "hooks-version").await;
    let create = |version: Option<&str>, body: Value| {
        let mut req = app
            .request(Method::POST, "/v1/webhooks/endpoints", Some(&app.token))
            .json(&body);
        if let Some(v) = version {
            req = req.header("Polar-Version", v);
        }
        app.send(req)
    };
    let hook = json!({"url": "https://example.com/hook", "format": "raw",
                      "events": ["order.paid"], "organization_id": org});

    // Left out: the request's version, else the default.
    let r = create(None, hook.clone()).await;
    r.expect(201);
    assert_eq!(r.body["api_version"], "2026-04");
    assert_eq!(r.body["uses_standard_webhook_signature"], false);
    let r = create(Some("2026-10"), hook.clone()).await;
    r.expect(201);
    assert_eq!(r.body["api_version"], "2026-10");

    let mut named = hook.clone();
    named["api_version"] = json!("2027-01");
    let r = create(None, named).await;
    r.expect(201);
    let id = r.id();
    assert_eq!(r.body["api_version"], "2027-01");
    let r = app
        .get(&format!("/v1/webhooks/endpoints/{id}"), Some(&app.token))
        .await;
    assert_eq!(r.body["api_version"], "2027-01");

    let r = app
        .patch_json(
            &format!("/v1/webhooks/endpoints/{id}"),
            Some(&app.token),
            &json!({"api_version": "2026-10"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["api_version"], "2026-10");

    let mut bad = hook.clone();
    bad["api_version"] = json!("2025-01");
    let r = create(None, bad).await;
    r.expect_invalid_at(json!(["body", "api_version"]));
}

/// Today's SDKs have no free price: in a named version a free price is a fixed price of 0;
/// without a header (the seed's and 0.47's shape) it stays `free`.
#[actix_web::test]
async fn a_free_price_is_a_fixed_price_of_zero_in_named_versions() {
    let app = spawn_app().await;
    let org = org(&app, "free-price").await;
    let r = create_product(
        &app,
        json!({"name": "Free tier", "organization_id": org,
               "prices": [{"type": "one_time", "amount_type": "free"}]}),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["prices"][0]["amount_type"], "free");
    let path = format!("/v1/products/{}", r.id());
    for version in ["2026-04", "2026-10", "2027-01"] {
        let r = app
            .send(
                app.request(Method::GET, &path, Some(&app.token))
                    .header("Polar-Version", version),
            )
            .await;
        r.expect(200);
        let price = &r.body["prices"][0];
        assert_eq!(price["amount_type"], "fixed", "{version}: {price}");
        assert_eq!(price["price_amount"], 0);
        assert_eq!(price["price_currency"], "usd");
    }
}

#[actix_web::test]
async fn an_organization_has_polars_2026_fields() {
    let app = spawn_app().await;
    let id = org(&app, "twenty-six").await;
    let r = app
        .patch_json(
            &format!("/v1/organizations/{id}"),
            Some(&app.token),
            &json!({"twitter_username": "acme", "blog": "https://acme.example"}),
        )
        .await;
    r.expect(200);
    let o = &r.body;
    assert_eq!(o["website"], "https://acme.example");
    assert_eq!(
        o["socials"],
        json!([{"platform": "x", "url": "https://x.com/acme"}])
    );
    assert_eq!(o["status"], "active");
    assert_eq!(o["default_presentment_currency"], "usd");
    assert_eq!(o["capabilities"]["checkout_payments"], true);
    assert_eq!(o["customer_email_settings"]["order_confirmation"], false);
    assert_eq!(
        o["dispute_settings"]["auto_accept_below_amount"],
        Value::Null
    );
    assert_eq!(o["notification_settings"]["new_order"], false);
    assert_eq!(o["embed_hosts"], json!([]));
}

/// A checkout's `external_customer_id` becomes its customer's `external_id` when the
/// purchase completes, unless another customer of the organization holds it.
#[actix_web::test]
async fn a_checkouts_external_customer_id_reaches_its_customer() {
    let app = spawn_app().await;
    let org = org(&app, "external-buyer").await;
    let product = create_product(
        &app,
        json!({"name": "Desktop app", "organization_id": org,
               "prices": [{"amount_type": "fixed", "price_amount": 1500}]}),
    )
    .await;
    product.expect(201);
    let product = product.id();
    let buy = |email: &'static str| {
        let app = &app;
        let product = product.clone();
        async move {
            let c = app
                .post_json(
                    "/v1/checkouts/",
                    Some(&app.token),
                    &json!({"products": [product], "external_customer_id": "user-42",
                            "customer_email": email}),
                )
                .await;
            c.expect(201);
            assert_eq!(c.body["external_customer_id"], "user-42");
            let secret = c.body["client_secret"].as_str().unwrap().to_string();
            let r = app
                .post_json(
                    &format!("/v1/checkouts/client/{secret}/confirm"),
                    None,
                    &json!({"customer_name": "Ada", "customer_billing_address": {"country": "FR"},
                            "confirmation_token_id": "tok_visa"}),
                )
                .await;
            r.expect(200);
            r.body["customer_id"].as_str().unwrap().to_string()
        }
    };
    let first = buy("ada@example.com").await;
    let r = app
        .get("/v1/customers/external/user-42", Some(&app.token))
        .await;
    r.expect(200);
    assert_eq!(r.body["id"], first.as_str());
    assert_eq!(r.body["external_id"], "user-42");

    // Another buyer with the same external id: the first customer keeps it.
    let second = buy("grace@example.com").await;
    assert_ne!(second, first);
    let r = app
        .get(&format!("/v1/customers/{second}"), Some(&app.token))
        .await;
    assert_eq!(r.body["external_id"], Value::Null);
    let r = app
        .get("/v1/customers/external/user-42", Some(&app.token))
        .await;
    assert_eq!(r.body["id"], first.as_str());
}

/// `GET /v1/orders/` by `external_customer_id` and `checkout_id`, as today's SDKs filter.
#[actix_web::test]
async fn orders_are_listed_by_external_customer_and_checkout() {
    let app = spawn_app().await;
    let org = org(&app, "order-filters").await;
    let product = create_product(
        &app,
        json!({"name": "Desktop app", "organization_id": org,
               "prices": [{"amount_type": "fixed", "price_amount": 1500}]}),
    )
    .await
    .id();
    let mut checkouts = Vec::new();
    for (email, external) in [("a@example.com", "user-a"), ("b@example.com", "user-b")] {
        let c = app
            .post_json(
                "/v1/checkouts/",
                Some(&app.token),
                &json!({"products": [product], "external_customer_id": external,
                        "customer_email": email}),
            )
            .await;
        c.expect(201);
        let secret = c.body["client_secret"].as_str().unwrap().to_string();
        app.post_json(
            &format!("/v1/checkouts/client/{secret}/confirm"),
            None,
            &json!({"customer_name": "Buyer", "customer_billing_address": {"country": "FR"},
                    "confirmation_token_id": "tok_visa"}),
        )
        .await
        .expect(200);
        checkouts.push(c.id());
    }
    let list = |query: String| {
        let app = &app;
        async move {
            let r = app
                .get(&format!("/v1/orders/?{query}"), Some(&app.token))
                .await;
            r.expect(200);
            r.items()
                .iter()
                .map(|o| o["checkout_id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        list("external_customer_id=user-a".into()).await,
        [checkouts[0].clone()]
    );
    assert_eq!(
        list(format!("checkout_id={}", checkouts[1])).await,
        [checkouts[1].clone()]
    );
    assert_eq!(
        list(format!(
            "external_customer_id=user-a&checkout_id={}",
            checkouts[1]
        ))
        .await,
        Vec::<String>::new()
    );
    assert!(list("external_customer_id=nobody".into()).await.is_empty());
    assert_eq!(list(String::new()).await.len(), 2);
}

/// polar-sdk 1.0.2's discounts carry `max_redemptions_per_customer`: Tollgate has no such
/// limit (`null`), and asking for one is a 422 naming it.
#[actix_web::test]
async fn a_per_customer_redemption_limit_is_refused() {
    let app = spawn_app().await;
    let org = org(&app, "per-customer").await;
    let body = |extra: Value| {
        let mut b = json!({"name": "Launch", "type": "percentage", "basis_points": 1000,
                           "duration": "once", "organization_id": org});
        b.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        b
    };
    let r = app
        .post_json(
            "/v1/discounts/",
            Some(&app.token),
            &body(json!({"max_redemptions_per_customer": 1})),
        )
        .await;
    r.expect_invalid_at(json!(["body", "max_redemptions_per_customer"]));
    let r = app
        .post_json(
            "/v1/discounts/",
            Some(&app.token),
            &body(json!({"max_redemptions_per_customer": null})),
        )
        .await;
    r.expect(201);
    assert_eq!(r.body["max_redemptions_per_customer"], Value::Null);
    let r = app
        .patch_json(
            &format!("/v1/discounts/{}", r.id()),
            Some(&app.token),
            &json!({"max_redemptions_per_customer": 2}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "max_redemptions_per_customer"]));
}
