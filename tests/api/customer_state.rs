//! `GET /v1/customers/{id}/state` and `GET /v1/customers/external/{external_id}/state`:
//! the customer in Polar's `CustomerState` shape with its active subscriptions, the
//! benefits it holds now and (none) meters; scopes and tenancy.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::benefit_grants::{buy, key_of, order_of, revoke, shop, subscription_of};
use crate::helpers::{assert_utc_timestamp, spawn_app, TestApp};

fn state_path(id: &str) -> String {
    format!("/v1/customers/{id}/state")
}

fn external_state_path(id: &str) -> String {
    format!("/v1/customers/external/{id}/state")
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

async fn set_external_id(app: &TestApp, customer: &str, external_id: &str) {
    app.patch_json(
        &format!("/v1/customers/{customer}"),
        Some(&app.token),
        &json!({ "external_id": external_id }),
    )
    .await
    .expect(200);
}

#[actix_web::test]
async fn a_state_is_the_customer_its_active_subscriptions_and_its_benefits() {
    let app = spawn_app().await;
    let shop = shop(&app, "state").await;
    let ada = buy(&app, &shop.one_time, "ada@state.example").await;
    set_external_id(&app, &ada.customer, "ext-ada").await;

    let r = app.get(&state_path(&ada.customer), Some(&app.token)).await;
    r.expect(200);
    let state = r.body.clone();
    // The customer's own keys, then the three lists.
    let customer = app
        .get(&format!("/v1/customers/{}", ada.customer), Some(&app.token))
        .await
        .body;
    let mut expected = keys(&customer);
    expected
        .extend(["active_subscriptions", "granted_benefits", "active_meters"].map(String::from));
    assert_eq!(keys(&state), expected);
    for (k, v) in customer.as_object().unwrap() {
        assert_eq!(&state[k], v, "{k}");
    }
    assert_eq!(state["type"], "individual");
    assert_eq!(state["external_id"], "ext-ada");
    assert_eq!(state["active_subscriptions"], json!([]));
    assert_eq!(state["active_meters"], json!([]));
    let granted = state["granted_benefits"].as_array().unwrap();
    let kinds: BTreeSet<(String, String)> = granted
        .iter()
        .map(|g| {
            (
                g["benefit_id"].as_str().unwrap().to_string(),
                g["benefit_type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        BTreeSet::from([
            (shop.keys.clone(), "license_keys".to_string()),
            (shop.note.clone(), "custom".to_string()),
        ])
    );
    let key = &key_of(&app, &ada.customer, &shop.keys).await[0];
    for g in granted {
        assert_eq!(
            keys(g),
            [
                "id",
                "created_at",
                "modified_at",
                "granted_at",
                "benefit_id",
                "benefit_type",
                "benefit_metadata",
                "properties"
            ]
            .map(String::from)
            .into_iter()
            .collect()
        );
        assert_utc_timestamp(&g["granted_at"]);
        assert_eq!(g["benefit_metadata"], json!({}));
        if g["benefit_id"] == shop.keys.as_str() {
            assert_eq!(
                g["properties"],
                json!({"license_key_id": key["id"], "display_key": key["display_key"]})
            );
        } else {
            assert_eq!(g["properties"], json!({}));
        }
    }
    // The same grants as the grants list shows.
    let listed = app
        .get(
            &format!(
                "/v1/benefit-grants/?customer_id={}&is_granted=true",
                ada.customer
            ),
            Some(&app.token),
        )
        .await;
    let ids = |items: &[Value]| -> BTreeSet<String> {
        items
            .iter()
            .map(|g| g["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(granted), ids(&listed.items()));

    // By external id: the same state.
    let r = app
        .get(&external_state_path("ext-ada"), Some(&app.token))
        .await;
    r.expect(200);
    assert_eq!(r.body, state);

    // Every API version serves the same shape (each answer is checked against its
    // version's document).
    for version in ["2026-04", "2026-10", "2027-01"] {
        for path in [state_path(&ada.customer), "/v1/benefit-grants/".to_string()] {
            let r = app
                .send(
                    app.request(reqwest::Method::GET, &path, Some(&app.token))
                        .header("Polar-Version", version),
                )
                .await;
            r.expect(200);
            assert_eq!(r.header("polar-version"), version);
        }
    }
}

#[actix_web::test]
async fn active_subscriptions_are_listed_until_they_end() {
    let app = spawn_app().await;
    let shop = shop(&app, "state-subs").await;
    let bob = buy(&app, &shop.monthly, "bob@state.example").await;
    let sub = subscription_of(&app, &bob.customer).await;
    let full = app
        .get(&format!("/v1/subscriptions/{sub}"), Some(&app.token))
        .await
        .body;

    let state = app.get(&state_path(&bob.customer), Some(&app.token)).await;
    state.expect(200);
    let subs = state.body["active_subscriptions"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(subs.len(), 1);
    let s = &subs[0];
    // Polar's real status: polar-sdk 1.0.2 wrongly types it "granted" | "disabled".
    assert_eq!(s["status"], "active");
    for k in [
        "id",
        "created_at",
        "modified_at",
        "amount",
        "currency",
        "recurring_interval",
        "current_period_start",
        "current_period_end",
        "cancel_at_period_end",
        "canceled_at",
        "started_at",
        "ends_at",
        "product_id",
        "discount_id",
        "price_id",
        "metadata",
    ] {
        assert_eq!(s[k], full[k], "{k}");
    }
    assert_eq!(
        (s["amount"].clone(), s["currency"].clone()),
        (json!(900), json!("usd"))
    );
    for k in ["trial_start", "trial_end", "seats", "units"] {
        assert!(s[k].is_null(), "{k}");
    }
    assert_eq!(s["meters"], json!([]));
    assert_eq!(s["custom_field_data"], json!({}));
    let granted = state.body["granted_benefits"].as_array().unwrap().clone();
    assert_eq!(granted.len(), 1);
    assert_eq!(granted[0]["benefit_id"], shop.keys.as_str());

    // Ended: neither the subscription nor its grant is in the state any more.
    revoke(&app, &sub).await;
    let state = app.get(&state_path(&bob.customer), Some(&app.token)).await;
    assert_eq!(state.body["active_subscriptions"], json!([]));
    assert_eq!(state.body["granted_benefits"], json!([]));
}

#[actix_web::test]
async fn a_state_is_read_with_customers_read_within_the_callers_organizations() {
    let app = spawn_app().await;
    let shop = shop(&app, "state-guard").await;
    let ada = buy(&app, &shop.one_time, "ada@guard.example").await;
    set_external_id(&app, &ada.customer, "ext-guard").await;
    let paths = [state_path(&ada.customer), external_state_path("ext-guard")];

    for p in &paths {
        let r = app.get(p, None).await;
        assert_eq!(r.expect_error(401), "Unauthorized");
    }
    let (user, rival) = app
        .new_user_with_scopes("rival@example.com", &[Scope::CustomersRead])
        .await;
    for p in &paths {
        let r = app.get(p, Some(&rival)).await;
        assert_eq!(r.expect_error(404), "ResourceNotFound", "{p}");
    }
    let no_scope = app.issue_token(user, &[Scope::BenefitsRead]).await;
    for p in &paths {
        let r = app.get(p, Some(&no_scope)).await;
        assert_eq!(r.expect_error(403), "insufficient_scope");
    }
    for p in [
        state_path(&uuid::Uuid::new_v4().to_string()),
        external_state_path("nobody"),
    ] {
        let r = app.get(&p, Some(&app.token)).await;
        assert_eq!(r.expect_error(404), "ResourceNotFound");
    }
    let r = app.get(&state_path("nope"), Some(&app.token)).await;
    r.expect_invalid_at(json!(["path", "id"]));
}

/// How many grants the customer holds, by its state and by the grants list.
async fn granted(app: &TestApp, customer: &str) -> (usize, u64) {
    let state = app.get(&state_path(customer), Some(&app.token)).await;
    state.expect(200);
    let listed = app
        .get(
            &format!("/v1/benefit-grants/?customer_id={customer}&is_granted=true"),
            Some(&app.token),
        )
        .await;
    (
        state.body["granted_benefits"].as_array().unwrap().len(),
        listed.total_count(),
    )
}

/// A refund that revokes the benefits ends the order's grants: the state and the grants
/// list no longer show them (a refund that keeps them changes nothing).
#[actix_web::test]
async fn a_refund_that_revokes_the_benefits_ends_their_grants() {
    let app = spawn_app().await;
    let shop = shop(&app, "refunded").await;
    let ada = buy(&app, &shop.one_time, "ada@refunded.example").await;
    let order = order_of(&app, &ada.checkout).await;
    assert_eq!(granted(&app, &ada.customer).await, (2, 2));
    // A partial refund that keeps the benefits: still granted.
    app.post_json(
        "/v1/refunds/",
        Some(&app.token),
        &json!({"order_id": order, "reason": "customer_request", "amount": 100,
                "revoke_benefits": false}),
    )
    .await
    .expect(200);
    assert_eq!(granted(&app, &ada.customer).await, (2, 2));
    app.post_json(
        "/v1/refunds/",
        Some(&app.token),
        &json!({"order_id": order, "reason": "customer_request", "amount": 100,
                "revoke_benefits": true}),
    )
    .await
    .expect(200);
    assert_eq!(granted(&app, &ada.customer).await, (0, 0));
    let revoked = app
        .get(
            &format!(
                "/v1/benefit-grants/?customer_id={}&is_granted=false",
                ada.customer
            ),
            Some(&app.token),
        )
        .await;
    assert_eq!(revoked.total_count(), 2);
    for g in revoked.items() {
        assert!(g["revoked_at"].is_string(), "{g}");
    }
}
