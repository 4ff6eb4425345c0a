//! `/v1/refunds/` with the test processor: full and partial refunds and what they do to
//! the order, the limits (more than is left, a free order, an order refunded in full,
//! concurrent refunds), tenancy and scopes, the keys of a refund that revokes benefits
//! (refused at once by validation, in both durability modes), the webhook events and the
//! buyer's e-mail.

use serde_json::{json, Value};

use crate::checkouts::{buyer, by_price, confirm, created, id_of, secret, seed, Api, Catalog};
use crate::helpers::{spawn_app, spawn_app_with, Reply, TestApp};
use tollgate::auth::Scope;

const REFUNDS: &str = "/v1/refunds/";

async fn buy(api: Api<'_>, price: &str, email: &str) -> Value {
    let c = created(api, &by_price(price)).await;
    confirm(api, &secret(&c), &buyer(email)).await.expect(200);
    let r = api
        .read(&format!("/v1/orders/?checkout_id={}", id_of(&c)))
        .await;
    r.expect(200);
    r.items()[0].clone()
}

async fn refund(app: &TestApp, token: &str, body: &Value) -> Reply {
    app.post_json(REFUNDS, Some(token), body).await
}

async fn order(app: &TestApp, id: &str) -> Value {
    let r = app.get(&format!("/v1/orders/{id}"), Some(&app.token)).await;
    r.expect(200);
    r.body
}

async fn validate(app: &TestApp, key: &str, org: &str) -> Reply {
    app.post_json(
        "/v1/customer-portal/license-keys/validate",
        None,
        &json!({"key": key, "organization_id": org}),
    )
    .await
}

/// The key the order granted.
async fn key_of(app: &TestApp, org: &str, email: &str) -> String {
    let r = app
        .get(
            &format!("/v1/license-keys?organization_id={org}&limit=100"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    r.items()
        .into_iter()
        .find(|k| k["customer"]["email"] == email)
        .and_then(|k| k["key"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no key for {email}"))
}

#[actix_web::test]
async fn a_partial_then_a_full_refund_follow_the_order_and_then_nothing_more() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat: Catalog = seed(api, "refunds").await;
    let o = buy(api, &cat.ebook_price, "ada@example.com").await;
    let oid = id_of(&o);

    let r = refund(
        &app,
        &app.token,
        &json!({"order_id": oid, "reason": "customer_request", "amount": 1000,
                "comment": "asked nicely", "metadata": {"ticket": "T-1"}}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["status"], "succeeded");
    assert_eq!(r.body["amount"], 1000);
    assert_eq!(r.body["tax_amount"], 0);
    assert_eq!(r.body["currency"], "usd");
    assert_eq!(r.body["order_id"], oid.as_str());
    assert_eq!(r.body["organization_id"], cat.org.as_str());
    assert_eq!(r.body["reason"], "customer_request");
    assert_eq!(r.body["revoke_benefits"], false);
    assert_eq!(r.body["metadata"]["ticket"], "T-1");
    assert_eq!(r.body["dispute"], Value::Null);
    assert!(
        r.body.get("comment").is_none(),
        "the comment is never shown"
    );
    let o = order(&app, &oid).await;
    assert_eq!(o["status"], "partially_refunded");
    assert_eq!(o["refunded_amount"], 1000);
    // In a named API version the answer is 201, as Polar's since 2026-02.
    let versioned = app
        .client
        .post(app.url(REFUNDS))
        .bearer_auth(&app.token)
        .header("Polar-Version", "2026-04")
        .json(&json!({"order_id": oid, "reason": "other", "amount": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(versioned.status(), 201);

    // More than is left: refused, nothing changes.
    let r = refund(
        &app,
        &app.token,
        &json!({"order_id": oid, "reason": "other", "amount": 1500}),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.body["detail"][0]["loc"], json!(["body", "amount"]));
    assert_eq!(order(&app, &oid).await["refunded_amount"], 1001);

    // The rest: refunded in full; a further one is 403 RefundedAlready.
    refund(
        &app,
        &app.token,
        &json!({"order_id": oid, "reason": "duplicate", "amount": 1499}),
    )
    .await
    .expect(200);
    let o = order(&app, &oid).await;
    assert_eq!(o["status"], "refunded");
    assert_eq!(o["refunded_amount"], 2500);
    let r = refund(
        &app,
        &app.token,
        &json!({"order_id": oid, "reason": "other", "amount": 1}),
    )
    .await;
    assert_eq!(r.expect_error(403), "RefundedAlready", "{}", r.body);

    // The list: newest first, filters and sorting.
    let list = app
        .get(&format!("{REFUNDS}?order_id={oid}"), Some(&app.token))
        .await;
    list.expect(200);
    let items = list.items();
    assert_eq!(items.len(), 3);
    assert_eq!(items[0]["amount"], 1499);
    assert_eq!(list.body["pagination"]["total_count"], 3);
    let by_amount = app
        .get(&format!("{REFUNDS}?sorting=amount"), Some(&app.token))
        .await;
    by_amount.expect(200);
    assert_eq!(by_amount.items()[0]["amount"], 1);
    let none = app
        .get(&format!("{REFUNDS}?succeeded=false"), Some(&app.token))
        .await;
    none.expect(200);
    assert!(none.items().is_empty());
    let bad = app
        .get(&format!("{REFUNDS}?sorting=color"), Some(&app.token))
        .await;
    assert_eq!(bad.status, 422);
}

#[actix_web::test]
async fn bad_input_other_organizations_free_orders_and_scopes_are_refused() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "refund-denials").await;
    let o = buy(api, &cat.ebook_price, "ada@example.com").await;
    let oid = id_of(&o);
    for (body, loc) in [
        (
            json!({"order_id": oid, "reason": "because", "amount": 100}),
            "reason",
        ),
        (
            json!({"order_id": oid, "reason": "dispute_prevention", "amount": 100}),
            "reason",
        ),
        (
            json!({"order_id": oid, "reason": "other", "amount": 0}),
            "amount",
        ),
        (
            json!({"order_id": oid, "reason": "other", "amount": -5}),
            "amount",
        ),
        (
            json!({"order_id": uuid::Uuid::new_v4(), "reason": "other", "amount": 1}),
            "order_id",
        ),
    ] {
        let r = refund(&app, &app.token, &body).await;
        assert_eq!(r.status, 422, "{body}: {}", r.body);
        assert_eq!(
            r.body["detail"][0]["loc"],
            json!(["body", loc]),
            "{}",
            r.body
        );
    }
    let r = refund(
        &app,
        &app.token,
        &json!({"order_id": oid, "reason": "other"}),
    )
    .await;
    assert_eq!(r.status, 422);

    // A free order: nothing to give back.
    let free = buy(api, &cat.free_price, "grace@example.com").await;
    let r = refund(
        &app,
        &app.token,
        &json!({"order_id": id_of(&free), "reason": "other", "amount": 1}),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.body);

    // A subscription's order cannot revoke its benefits (Polar).
    let sub = buy(api, &cat.monthly, "alan@example.com").await;
    let r = refund(
        &app,
        &app.token,
        &json!({"order_id": id_of(&sub), "reason": "other", "amount": 100, "revoke_benefits": true}),
    )
    .await;
    assert_eq!(r.expect_error(400), "RevokeSubscriptionBenefitsProhibited");

    // Another seller: the order does not exist for them, and their list is empty.
    let (_, other) = app
        .new_user_with_scopes(
            "intruder@example.com",
            &[Scope::RefundsRead, Scope::RefundsWrite, Scope::OrdersRead],
        )
        .await;
    let r = refund(
        &app,
        &other,
        &json!({"order_id": oid, "reason": "other", "amount": 100}),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.body["detail"][0]["loc"], json!(["body", "order_id"]));
    refund(
        &app,
        &app.token,
        &json!({"order_id": oid, "reason": "other", "amount": 100}),
    )
    .await
    .expect(200);
    let theirs = app.get(REFUNDS, Some(&other)).await;
    theirs.expect(200);
    assert!(theirs.items().is_empty(), "{}", theirs.body);

    // Scopes: reading needs refunds:read (or write), refunding refunds:write.
    let (_, reader) = app
        .new_user_with_scopes("reader@example.com", &[Scope::RefundsRead])
        .await;
    app.get(REFUNDS, Some(&reader)).await.expect(200);
    let r = refund(
        &app,
        &reader,
        &json!({"order_id": oid, "reason": "other", "amount": 1}),
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let (_, orders_only) = app
        .new_user_with_scopes("orders@example.com", &[Scope::OrdersRead])
        .await;
    assert_eq!(app.get(REFUNDS, Some(&orders_only)).await.status, 403);
    assert_eq!(app.get(REFUNDS, None).await.status, 401);
    assert_eq!(order(&app, &oid).await["refunded_amount"], 100);
}

#[actix_web::test]
async fn concurrent_refunds_never_give_back_more_than_was_paid() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "refund-race").await;
    let o = buy(api, &cat.ebook_price, "ada@example.com").await;
    let oid = id_of(&o);
    // Eight refunds of $10 at once on a $25 order: two pass, the others are refused.
    let body = json!({"order_id": oid, "reason": "duplicate", "amount": 1000});
    let answers =
        futures_util::future::join_all((0..8).map(|_| refund(&app, &app.token, &body))).await;
    let ok = answers.iter().filter(|r| r.status == 200).count();
    assert_eq!(ok, 2, "{answers:?}");
    assert!(answers.iter().all(|r| r.status == 200 || r.status == 422));
    let o = order(&app, &oid).await;
    assert_eq!(o["refunded_amount"], 2000);
    assert_eq!(o["status"], "partially_refunded");
}

async fn revoked_keys_are_refused_at_once(app: TestApp) {
    let api = Api::of(&app);
    let cat = seed(api, "refund-revoke").await;
    let o = buy(api, &cat.ebook_price, "ada@example.com").await;
    let key = key_of(&app, &cat.org, "ada@example.com").await;
    validate(&app, &key, &cat.org).await.expect(200);
    let r = refund(
        &app,
        &app.token,
        &json!({"order_id": id_of(&o), "reason": "fraudulent", "amount": 2500, "revoke_benefits": true}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["revoke_benefits"], true);
    // The very next validation refuses it.
    let v = validate(&app, &key, &cat.org).await;
    assert_eq!(v.status, 404, "{}", v.body);
    let k = app
        .get(
            &format!("/v1/license-keys?organization_id={}", cat.org),
            Some(&app.token),
        )
        .await;
    assert_eq!(k.items()[0]["status"], "revoked");
}

#[actix_web::test]
async fn a_refund_that_revokes_benefits_refuses_the_keys_at_once_with_strict_counters() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = tollgate::config::Settings::for_tests(dir.path());
    settings.license_keys.stats_flush_ms = 0;
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    revoked_keys_are_refused_at_once(app).await;
}

#[actix_web::test]
async fn a_refund_that_revokes_benefits_refuses_the_keys_at_once_with_batched_counters() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = tollgate::config::Settings::for_tests(dir.path());
    settings.license_keys.stats_flush_ms = 1000;
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    revoked_keys_are_refused_at_once(app).await;
}

#[actix_web::test]
async fn the_sellers_setting_revokes_on_a_full_refund_and_a_subscription_can_end_with_its_refund() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "refund-options").await;
    // The setting, as the dashboard's settings page stores it.
    let org_id: tollgate::domain::ids::OrganizationId = cat.org.parse().unwrap();
    let admin = tollgate::auth::Subject::User(admin_id(&app).await);
    tollgate::app::catalog::organizations::set_refund_settings(
        &app.state,
        admin,
        org_id,
        tollgate::domain::organization::RefundSettings {
            revoke_benefits_on_full_refund: true,
        },
    )
    .await
    .expect("setting the refund settings");

    // A partial refund keeps the key; the rest (a full refund) revokes it.
    let o = buy(api, &cat.ebook_price, "ada@example.com").await;
    let key = key_of(&app, &cat.org, "ada@example.com").await;
    let r = refund(
        &app,
        &app.token,
        &json!({"order_id": id_of(&o), "reason": "other", "amount": 500}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["revoke_benefits"], false);
    validate(&app, &key, &cat.org).await.expect(200);
    let o2 = buy(api, &cat.ebook_price, "grace@example.com").await;
    let key2 = key_of(&app, &cat.org, "grace@example.com").await;
    let r = refund(
        &app,
        &app.token,
        &json!({"order_id": id_of(&o2), "reason": "other", "amount": 2500}),
    )
    .await;
    r.expect(200);
    assert_eq!(
        r.body["revoke_benefits"], true,
        "a full refund, by the seller's setting"
    );
    assert_eq!(validate(&app, &key2, &cat.org).await.status, 404);

    // A subscription's order: end_subscription ends it with the refund.
    let sub_order = buy(api, &cat.monthly, "alan@example.com").await;
    let sub_id = sub_order["subscription_id"].as_str().unwrap().to_string();
    let bad = refund(&app, &app.token, &json!({"order_id": id_of(&sub_order), "reason": "other", "amount": 100, "end_subscription": "someday"})).await;
    assert_eq!(bad.status, 422);
    assert_eq!(
        bad.body["detail"][0]["loc"],
        json!(["body", "end_subscription"])
    );
    let one_time = refund(
        &app,
        &app.token,
        &json!({"order_id": id_of(&o), "reason": "other", "amount": 1, "end_subscription": "now"}),
    )
    .await;
    assert_eq!(one_time.status, 422, "{}", one_time.body);
    refund(&app, &app.token, &json!({"order_id": id_of(&sub_order), "reason": "customer_request", "amount": 1500, "end_subscription": "now"}))
        .await
        .expect(200);
    let s = app
        .get(&format!("/v1/subscriptions/{sub_id}"), Some(&app.token))
        .await;
    s.expect(200);
    assert_eq!(s.body["status"], "canceled", "{}", s.body);
    assert!(s.body["ended_at"].is_string(), "{}", s.body);
    assert_eq!(order(&app, &id_of(&sub_order)).await["status"], "refunded");
}

/// The bootstrap admin (who created the seeded organizations).
async fn admin_id(app: &TestApp) -> tollgate::domain::ids::UserId {
    let key = tollgate::domain::user::User::email_key(&app.state.settings.bootstrap.admin_email);
    let id = app
        .state
        .store
        .lookup_unique(&key)
        .await
        .unwrap()
        .expect("the admin");
    tollgate::domain::ids::UserId::from_key(&id).expect("a user id")
}
