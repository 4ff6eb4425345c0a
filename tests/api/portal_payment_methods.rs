//! The customer portal's saved payment methods over HTTP, with the test processor
//! (Polar's `/v1/customer-portal/customers/me/payment-methods`): the card a subscription
//! is billed with is listed, a card is added (and made the default: the subscriptions are
//! billed with it from then on), a declined one is refused, a removed card hands its
//! subscriptions to the default (or newest other) card, and the last card of a paid
//! subscription stays. Denials: another
//! customer's method (404, nothing changed), a setup another customer started (422), no
//! session (401), a seller's token (401), bodies that do not read (422).

use reqwest::Method;
use serde_json::{json, Value};
use tollgate_actors::domain::ids::SubscriptionId;
use tollgate_actors::domain::ids::{CustomerId, OrganizationId};
use tollgate_actors::domain::portal_link::PaymentSetup;
use tollgate_actors::subscription::Subscription;
use tollgate_storage::{Batch, Expect};

use crate::benefit_grants::{buy, shop};
use crate::helpers::{spawn_app, Reply, TestApp};

const METHODS: &str = "/v1/customer-portal/customers/me/payment-methods";
const ME: &str = "/v1/customer-portal/customers/me";

/// A customer session the seller opens for `customer`.
async fn session(app: &TestApp, customer: &str) -> String {
    let r = app
        .post_json(
            "/v1/customer-sessions/",
            Some(&app.token),
            &json!({ "customer_id": customer }),
        )
        .await;
    r.expect(201);
    r.body["token"].as_str().unwrap().to_string()
}

async fn add(app: &TestApp, token: &str, card: &str, set_default: bool) -> Reply {
    app.post_json(
        METHODS,
        Some(token),
        &json!({"confirmation_token_id": card, "set_default": set_default,
                "return_url": "https://shop.example.com/portal"}),
    )
    .await
}

async fn delete(app: &TestApp, token: Option<&str>, id: &str) -> Reply {
    app.send(app.request(Method::DELETE, &format!("{METHODS}/{id}"), token))
        .await
}

async fn listed(app: &TestApp, token: &str) -> Vec<Value> {
    let r = app.get(METHODS, Some(token)).await;
    r.expect(200);
    r.items()
}

async fn default_of(app: &TestApp, token: &str) -> Value {
    let r = app.get(ME, Some(token)).await;
    r.expect(200);
    r.body["default_payment_method_id"].clone()
}

/// The processor's reference of the card each subscription of `customer` is billed with.
async fn cards_billed(app: &TestApp, customer: &str) -> Vec<Option<String>> {
    let r = app
        .get(
            &format!("/v1/subscriptions/?customer_id={customer}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    let mut cards = Vec::new();
    for s in r.items() {
        let id: SubscriptionId = s["id"].as_str().unwrap().parse().unwrap();
        let stored = app
            .state
            .store
            .get::<Subscription>(&id.key())
            .await
            .unwrap();
        cards.push(stored.unwrap().value.payment_token);
    }
    cards
}

#[actix_web::test]
async fn a_subscriber_lists_adds_and_removes_cards_but_keeps_the_one_that_bills() {
    let app = spawn_app().await;
    let shop = shop(&app, "pm-shop").await;
    let ada = buy(&app, &shop.monthly, "ada@pm.example").await;
    let token = session(&app, &ada.customer).await;

    // The card the subscription is billed with (the checkout's) is listed.
    let items = listed(&app, &token).await;
    assert_eq!(items.len(), 1, "{items:?}");
    let billed = items[0].clone();
    assert_eq!(billed["type"], "card");
    assert_eq!(billed["processor"], "stripe");
    assert_eq!(billed["customer_id"], ada.customer.as_str());
    assert_eq!(
        billed["method_metadata"],
        json!({"brand": "visa", "last4": "4242", "exp_month": 12, "exp_year": 2030,
               "wallet": null})
    );
    assert_eq!(default_of(&app, &token).await, Value::Null);
    assert_eq!(
        cards_billed(&app, &ada.customer).await,
        [Some("tok_visa".into())]
    );

    // A new card, made the default: the subscription is billed with it.
    let r = add(&app, &token, "tok_mastercard", true).await;
    r.expect(201);
    assert_eq!(r.body["status"], "succeeded", "{}", r.body);
    let mc = r.body["payment_method"].clone();
    assert_eq!(mc["method_metadata"]["brand"], "mastercard");
    assert_eq!(mc["method_metadata"]["last4"], "4444");
    assert_eq!(default_of(&app, &token).await, mc["id"]);
    assert_eq!(
        cards_billed(&app, &ada.customer).await,
        [Some("tok_mastercard".into())]
    );
    let items = listed(&app, &token).await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["id"], mc["id"], "newest first");
    let r = app
        .get(&format!("{METHODS}?limit=1&page=2"), Some(&token))
        .await;
    r.expect(200);
    assert_eq!(r.items()[0]["id"], billed["id"]);
    assert_eq!(r.total_count(), 2);

    // A declined card is refused and saves nothing.
    let r = add(&app, &token, "tok_decline_insufficient_funds", false).await;
    assert_eq!(r.expect_error(400), "PaymentMethodSetupFailed");
    assert_eq!(listed(&app, &token).await.len(), 2);

    // The default card goes while another is saved: the subscription moves to the card
    // left, which becomes the default.
    delete(&app, Some(&token), mc["id"].as_str().unwrap())
        .await
        .expect(204);
    let items = listed(&app, &token).await;
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], billed["id"]);
    assert_eq!(default_of(&app, &token).await, billed["id"]);
    assert_eq!(
        cards_billed(&app, &ada.customer).await,
        [Some("tok_visa".into())]
    );
    delete(&app, Some(&token), mc["id"].as_str().unwrap())
        .await
        .expect_error(404);
    // The last card of the paid subscription stays.
    let r = delete(&app, Some(&token), billed["id"].as_str().unwrap()).await;
    assert_eq!(
        r.expect_error(400),
        "PaymentMethodInUseByActiveSubscription"
    );
    assert_eq!(
        r.body["detail"],
        "This payment method is still needed to bill a subscription. Add another one or \
         cancel the subscription first."
    );
    assert_eq!(listed(&app, &token).await.len(), 1);
    assert_eq!(
        cards_billed(&app, &ada.customer).await,
        [Some("tok_visa".into())]
    );
}

#[actix_web::test]
async fn bodies_that_do_not_read_are_422() {
    let app = spawn_app().await;
    let shop = shop(&app, "pm-bodies").await;
    let ada = buy(&app, &shop.monthly, "ada@bodies.example").await;
    let token = session(&app, &ada.customer).await;
    let post = |body: Value| {
        let app = &app;
        let token = token.clone();
        async move { app.post_json(METHODS, Some(&token), &body).await }
    };
    post(json!({"confirmation_token_id": "tok_visa", "set_default": true}))
        .await
        .expect_invalid_at(json!(["body", "return_url"]));
    post(
        json!({"confirmation_token_id": "tok_visa", "set_default": true,
                "return_url": "not a url"}),
    )
    .await
    .expect_invalid_at(json!(["body", "return_url"]));
    post(json!({"confirmation_token_id": "", "set_default": true,
                "return_url": "https://shop.example.com"}))
    .await
    .expect_invalid_at(json!(["body", "confirmation_token_id"]));
    post(json!({"confirmation_token_id": "tok_visa",
                "return_url": "https://shop.example.com"}))
    .await
    .expect_invalid_at(json!(["body", "set_default"]));
    app.post_json(
        &format!("{METHODS}/confirm"),
        Some(&token),
        &json!({"set_default": true}),
    )
    .await
    .expect_invalid_at(json!(["body", "setup_intent_id"]));
    delete(&app, Some(&token), "not-a-uuid")
        .await
        .expect_invalid_at(json!(["path", "id"]));
    // Nothing was saved beyond the subscription's card.
    assert_eq!(listed(&app, &token).await.len(), 1);
}

#[actix_web::test]
async fn another_customer_reaches_none_of_it() {
    let app = spawn_app().await;
    let shop = shop(&app, "pm-tenancy").await;
    let ada = buy(&app, &shop.monthly, "ada@tenancy.example").await;
    let bob = buy(&app, &shop.one_time, "bob@tenancy.example").await;
    let ada_token = session(&app, &ada.customer).await;
    let bob_token = session(&app, &bob.customer).await;
    let r = add(&app, &ada_token, "tok_mastercard", true).await;
    r.expect(201);
    let mc = r.body["payment_method"]["id"].as_str().unwrap().to_string();

    // Bob sees none of Ada's methods and cannot remove one.
    assert_eq!(listed(&app, &bob_token).await.len(), 0);
    delete(&app, Some(&bob_token), &mc).await.expect_error(404);
    assert_eq!(listed(&app, &ada_token).await.len(), 2);
    assert_eq!(default_of(&app, &ada_token).await, json!(mc));

    // Nor confirm a setup Ada started.
    let ada_id: CustomerId = ada.customer.parse().unwrap();
    let org: OrganizationId = shop.org.parse().unwrap();
    let setup = PaymentSetup {
        setup_intent_id: "seti_test_of_ada".into(),
        organization_id: org,
        customer_id: ada_id,
        set_default: true,
        created_at: chrono::Utc::now(),
    };
    let mut batch = Batch::new();
    batch.put(&setup, Expect::Absent).unwrap();
    app.state.store.commit_durable(&batch).await.unwrap();
    for seti in ["seti_test_of_ada", "seti_nobody_started"] {
        let item = app
            .post_json(
                &format!("{METHODS}/confirm"),
                Some(&bob_token),
                &json!({"setup_intent_id": seti, "set_default": true}),
            )
            .await
            .expect_invalid_at(json!(["body", "setup_intent_id"]));
        assert_eq!(item["msg"], "Invalid setup_intent_id.");
    }
    assert_eq!(default_of(&app, &bob_token).await, Value::Null);
}

#[actix_web::test]
async fn only_a_customer_session_reaches_the_methods() {
    let app = spawn_app().await;
    let shop = shop(&app, "pm-auth").await;
    let ada = buy(&app, &shop.monthly, "ada@auth.example").await;
    let token = session(&app, &ada.customer).await;
    let id = listed(&app, &token).await[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let body = json!({"confirmation_token_id": "tok_visa", "set_default": true,
                      "return_url": "https://shop.example.com"});
    let confirm = json!({"setup_intent_id": "seti_1", "set_default": true});
    for credentials in [None, Some(app.token.as_str())] {
        let seller = credentials.is_some();
        let check = |r: Reply| {
            let error = r.expect_error(401);
            if seller {
                assert_eq!(error, "invalid_token");
            }
        };
        check(app.get(METHODS, credentials).await);
        check(app.post_json(METHODS, credentials, &body).await);
        check(
            app.post_json(&format!("{METHODS}/confirm"), credentials, &confirm)
                .await,
        );
        check(delete(&app, credentials, &id).await);
    }
    // Nothing changed.
    assert_eq!(listed(&app, &token).await.len(), 1);
}

// ---------------------------------------------------------------------------------------
// The page

/// The ids of the cards a payment-methods page lists, in order.
fn listed_on(page: &crate::oauth::Page) -> Vec<String> {
    page.body
        .split("id=\"method-")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_string)
        .collect()
}

#[actix_web::test]
async fn the_page_lists_adds_makes_default_and_removes_cards() {
    use crate::portal_pages::{buyer, portal_shop, roomy, signed_in, status};
    let dir = tempfile::tempdir().unwrap();
    let settings = roomy(dir.path());
    let app =
        crate::helpers::spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let shop = portal_shop(&app, "acme-cards").await;
    let ada = buyer(&app, &shop, "ada@cards.example").await;
    let bob = buyer(&app, &shop, "bob@cards.example").await;
    let slug = &shop.slug;
    let path = format!("/portal/{slug}/payment-methods");
    let mut b = signed_in(&app, slug, &ada.email).await;

    // The subscription's card, listed without a default.
    let page = b.get(&path).await;
    status(&page, 200);
    let cards = listed_on(&page);
    assert_eq!(cards.len(), 1, "{}", page.body);
    let billed = cards[0].clone();
    assert!(page.body.contains("Visa •••• 4242"), "{}", page.body);
    assert!(page.body.contains("Expires 12/2030"));
    assert!(!page.body.contains(">Default<"));
    let csrf = page.csrf();

    // Add a card, made the default.
    let added = b
        .post(
            &path,
            &[
                ("csrf_token", &csrf),
                ("action", "add"),
                ("token", "tok_mastercard"),
                ("set_default", "on"),
            ],
        )
        .await;
    status(&added, 303);
    assert_eq!(added.location, format!("{path}?done=added"));
    let page = b.get(&added.location).await;
    assert!(page.body.contains("Card added."));
    assert!(page.body.contains("Mastercard •••• 4444"));
    let cards = listed_on(&page);
    assert_eq!(cards.len(), 2);
    let mc = cards.iter().find(|c| **c != billed).unwrap().clone();
    let token = session(&app, &ada.customer).await;
    assert_eq!(default_of(&app, &token).await, json!(mc));

    // A declined card: the page again, with the processor's reason, 400.
    let page = b
        .post(
            &path,
            &[
                ("csrf_token", &csrf),
                ("action", "add"),
                ("token", "tok_decline_generic"),
            ],
        )
        .await;
    status(&page, 400);
    assert!(page.body.contains("declined"), "{}", page.body);
    // No token: 422.
    let page = b
        .post(&path, &[("csrf_token", &csrf), ("action", "add")])
        .await;
    status(&page, 422);

    // Make the subscription's card the default again.
    let page = b
        .post(
            &path,
            &[
                ("csrf_token", &csrf),
                ("action", "default"),
                ("method_id", &billed),
            ],
        )
        .await;
    status(&page, 303);
    assert_eq!(default_of(&app, &token).await, json!(billed));
    assert_eq!(
        cards_billed(&app, &ada.customer).await,
        [Some("tok_visa".into())]
    );

    // The spare card goes; then the default one, the subscription moving to the other.
    let spare = b
        .post(
            &path,
            &[
                ("csrf_token", &csrf),
                ("action", "add"),
                ("token", "tok_amex_spare"),
            ],
        )
        .await;
    status(&spare, 303);
    let spare = listed_on(&b.get(&path).await)
        .into_iter()
        .find(|c| *c != billed && *c != mc)
        .unwrap();
    let page = b
        .post(
            &path,
            &[
                ("csrf_token", &csrf),
                ("action", "remove"),
                ("method_id", &spare),
            ],
        )
        .await;
    status(&page, 303);
    let page = b
        .post(
            &path,
            &[
                ("csrf_token", &csrf),
                ("action", "remove"),
                ("method_id", &billed),
            ],
        )
        .await;
    status(&page, 303);
    assert_eq!(default_of(&app, &token).await, json!(mc));
    assert_eq!(
        cards_billed(&app, &ada.customer).await,
        [Some("tok_mastercard".into())]
    );
    // The last card of the paid subscription stays.
    let page = b
        .post(
            &path,
            &[
                ("csrf_token", &csrf),
                ("action", "remove"),
                ("method_id", &mc),
            ],
        )
        .await;
    status(&page, 400);
    assert!(page.body.contains("still needed to bill a subscription"));
    assert_eq!(listed_on(&b.get(&path).await), vec![mc.clone()]);
    let billed = mc;

    // Another buyer's card is a 404 page and stays; a forged form changes nothing.
    let mut bob_browser = signed_in(&app, slug, &bob.email).await;
    let bob_csrf = bob_browser.get(&path).await.csrf();
    for action in ["default", "remove"] {
        let page = bob_browser
            .post(
                &path,
                &[
                    ("csrf_token", &bob_csrf),
                    ("action", action),
                    ("method_id", &billed),
                ],
            )
            .await;
        status(&page, 404);
    }
    let page = b
        .post(
            &path,
            &[
                ("csrf_token", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
                ("action", "add"),
                ("token", "tok_visa"),
            ],
        )
        .await;
    status(&page, 403);
    assert_eq!(listed_on(&b.get(&path).await), vec![billed]);
    // Signed out: to the sign-in page.
    let page = crate::oauth::Browser::new(&app).get(&path).await;
    status(&page, 303);
    assert_eq!(page.location, format!("/portal/{slug}"));
}
