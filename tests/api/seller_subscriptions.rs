//! `POST /v1/subscriptions/` (a free subscription the seller starts for an existing
//! customer: 201, no order) and `DELETE /v1/subscriptions/{id}` (ends it now, its keys
//! revoked): Polar's shapes and 422s, scopes and tenancy (polar-2026.md §8.2, §8.3).

use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::benefit_grants::shop;
use crate::helpers::{spawn_app, TestApp};

const SUBSCRIPTIONS: &str = "/v1/subscriptions/";

/// A free monthly product of `org` granting the license-key benefit `keys`.
async fn free_monthly(app: &TestApp, org: &str, keys: &str) -> String {
    let token = Some(app.token.as_str());
    let r = app
        .post_json(
            "/v1/products/",
            token,
            &json!({"name": "Community", "organization_id": org,
                    "prices": [{"type": "recurring", "amount_type": "free",
                                "recurring_interval": "month"}]}),
        )
        .await;
    r.expect(201);
    let product = r.id();
    app.post_json(
        &format!("/v1/products/{product}/benefits"),
        token,
        &json!({ "benefits": [keys] }),
    )
    .await
    .expect(200);
    product
}

async fn customer(app: &TestApp, org: &str, external_id: &str) -> String {
    let r = app
        .post_json(
            "/v1/customers/",
            Some(&app.token),
            &json!({"email": format!("{external_id}@example.com"), "organization_id": org,
                    "external_id": external_id}),
        )
        .await;
    r.expect(201);
    r.id()
}

async fn keys_of(app: &TestApp, customer: &str) -> Vec<Value> {
    app.get(
        &format!("/v1/license-keys/?customer_id={customer}"),
        Some(&app.token),
    )
    .await
    .items()
}

#[actix_web::test]
async fn a_seller_gives_a_free_subscription_and_ends_it() {
    let app = spawn_app().await;
    let shop = shop(&app, "gift").await;
    let product = free_monthly(&app, &shop.org, &shop.keys).await;
    let ada = customer(&app, &shop.org, "usr_1337").await;

    let r = app
        .post_json(
            SUBSCRIPTIONS,
            Some(&app.token),
            &json!({"product_id": product, "external_customer_id": "usr_1337",
                    "metadata": {"source": "api"}}),
        )
        .await;
    r.expect(201);
    let s = r.body.clone();
    assert_eq!(s["status"], "active");
    assert_eq!(s["customer_id"], ada.as_str());
    assert_eq!(s["product_id"], product.as_str());
    assert_eq!(s["checkout_id"], Value::Null);
    assert_eq!(s["amount"], 0);
    assert_eq!(s["metadata"], json!({"source": "api"}));
    assert_eq!(s["cancel_at_period_end"], false);
    let id = s["id"].as_str().unwrap().to_string();
    // No order; the benefit's key, granted with the subscription.
    let orders = app
        .get(&format!("/v1/orders/?customer_id={ada}"), Some(&app.token))
        .await;
    assert_eq!(orders.total_count(), 0);
    let keys = keys_of(&app, &ada).await;
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["status"], "granted");

    let r = app
        .send(app.request(
            reqwest::Method::DELETE,
            &format!("{SUBSCRIPTIONS}{id}"),
            Some(&app.token),
        ))
        .await;
    r.expect(200);
    assert_eq!(r.body["status"], "canceled");
    assert!(r.body["ended_at"].is_string());
    assert_eq!(r.body["ended_at"], r.body["canceled_at"]);
    assert_eq!(r.body["ends_at"], r.body["ended_at"]);
    assert_eq!(keys_of(&app, &ada).await[0]["status"], "revoked");

    let r = app
        .send(app.request(
            reqwest::Method::DELETE,
            &format!("{SUBSCRIPTIONS}{id}"),
            Some(&app.token),
        ))
        .await;
    assert_eq!(r.expect_error(403), "AlreadyCanceledSubscription");
}

#[actix_web::test]
async fn what_cannot_be_given_is_a_422_on_its_field() {
    let app = spawn_app().await;
    let shop = shop(&app, "refuse").await;
    let free = free_monthly(&app, &shop.org, &shop.keys).await;
    let ada = customer(&app, &shop.org, "ada").await;
    let post = |body: Value| {
        let app = &app;
        async move { app.post_json(SUBSCRIPTIONS, Some(&app.token), &body).await }
    };
    let r = post(json!({"product_id": shop.monthly, "customer_id": ada})).await;
    let e = r.expect_invalid_at(json!(["body", "product_id"]));
    assert!(e["msg"]
        .as_str()
        .unwrap()
        .starts_with("Product is not free."));
    let r = post(json!({"product_id": shop.one_time, "customer_id": ada})).await;
    let e = r.expect_invalid_at(json!(["body", "product_id"]));
    assert_eq!(e["msg"], "Product is not a recurring product.");
    let r = post(json!({"product_id": free, "external_customer_id": "nobody"})).await;
    let e = r.expect_invalid_at(json!(["body", "external_customer_id"]));
    assert_eq!(e["msg"], "Customer does not exist.");
    let r = post(json!({"product_id": free})).await;
    r.expect_invalid_at(json!(["body", "customer_id"]));
    let r = post(json!({"product_id": "not-a-uuid", "customer_id": ada})).await;
    r.expect_invalid_at(json!(["body", "product_id"]));
    let r = post(json!({"product_id": free, "customer_id": ada, "metadata": {"k": [1]}})).await;
    assert_eq!(r.status.as_u16(), 422);
}

#[actix_web::test]
async fn scopes_and_tenancy_hold() {
    let app = spawn_app().await;
    let shop = shop(&app, "mine").await;
    let free = free_monthly(&app, &shop.org, &shop.keys).await;
    let ada = customer(&app, &shop.org, "ada").await;
    let body = json!({"product_id": free, "customer_id": ada});

    // Reading is not writing.
    let (user, _) = app
        .new_user_with_scopes("reader@example.com", &[Scope::SubscriptionsRead])
        .await;
    let reader = app.issue_token(user, &[Scope::SubscriptionsRead]).await;
    let r = app.post_json(SUBSCRIPTIONS, Some(&reader), &body).await;
    r.expect_error(403);

    // Another seller sees neither the product nor the subscription.
    let (rival, _) = app
        .new_user_with_scopes("rival@example.com", &[Scope::SubscriptionsWrite])
        .await;
    let rival = app.issue_token(rival, &[Scope::SubscriptionsWrite]).await;
    let r = app.post_json(SUBSCRIPTIONS, Some(&rival), &body).await;
    let e = r.expect_invalid_at(json!(["body", "product_id"]));
    assert_eq!(e["msg"], "Product does not exist.");

    let r = app.post_json(SUBSCRIPTIONS, Some(&app.token), &body).await;
    r.expect(201);
    let id = r.id();
    let delete = |token: String| {
        let app = &app;
        let id = id.clone();
        async move {
            app.send(app.request(
                reqwest::Method::DELETE,
                &format!("{SUBSCRIPTIONS}{id}"),
                Some(&token),
            ))
            .await
        }
    };
    delete(rival).await.expect_error(404);
    delete(reader).await.expect_error(403);
    let r = app
        .send(app.request(
            reqwest::Method::DELETE,
            &format!("{SUBSCRIPTIONS}{id}"),
            None,
        ))
        .await;
    r.expect_error(401);
    // Still live.
    let r = app
        .get(&format!("{SUBSCRIPTIONS}{id}"), Some(&app.token))
        .await;
    assert_eq!(r.body["status"], "active");
}
