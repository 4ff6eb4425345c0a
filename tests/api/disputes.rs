//! `POST /v1/disputes/{id}/accept` (Polar's `dispute/endpoints.py` `accept`: scope
//! `disputes:write`, 200 `Dispute`, 404, 409 `DisputeNotOpenError`) end to end against
//! localstripe: a payment with Stripe's disputed test card is disputed at Stripe
//! (`charge.dispute.created`), the seller accepts, Tollgate closes it at Stripe
//! (`POST /v1/disputes/{id}/close`), and the dispute is lost with what a lost dispute does
//! in Tollgate: the order's license keys are revoked.

use std::time::{Duration, Instant};

use actix_web::rt::time::sleep;
use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::checkouts::{by_price, confirm, created, id_of, secret, seed};
use crate::helpers::Reply;
use crate::stripe::{intent_of, list, orders_of, paying, spawn_shop, str_of, Shop};

/// Stripe's test card whose payments are disputed as fraudulent.
const CARD_DISPUTED: &str = "4000000000000259";
const UNKNOWN_ID: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";
/// localstripe opens the dispute about two seconds after the payment.
const DISPUTE_DEADLINE: Duration = Duration::from_secs(30);

async fn accept(shop: &Shop, token: Option<&str>, id: &str) -> Reply {
    let app = &shop.app;
    app.send(app.request(Method::POST, &format!("/v1/disputes/{id}/accept"), token))
        .await
}

/// Waits (bounded) for the dispute Stripe opened on the order.
async fn dispute_of(shop: &Shop, order: &str) -> Value {
    let started = Instant::now();
    loop {
        let r = shop
            .api()
            .read(&format!("/v1/disputes/?order_id={order}"))
            .await;
        r.expect(200);
        if let Some(d) = r.items().first() {
            return d.clone();
        }
        assert!(
            started.elapsed() < DISPUTE_DEADLINE,
            "no dispute within {DISPUTE_DEADLINE:?}; localstripe log:\n{}",
            shop.ls.log_text()
        );
        sleep(Duration::from_millis(100)).await;
    }
}

async fn validate(shop: &Shop, key: &str, org: &str) -> Reply {
    shop.app
        .post_json(
            "/v1/customer-portal/license-keys/validate",
            None,
            &json!({"key": key, "organization_id": org}),
        )
        .await
}

#[actix_web::test]
async fn accepting_a_dispute_closes_it_at_stripe_loses_it_and_revokes_the_keys() {
    let shop = spawn_shop(false).await;
    let api = shop.api();
    let cat = seed(api, "dispute-accept").await;
    let pm = shop.ls.card(CARD_DISPUTED).await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    let r = confirm(api, &secret(&c), &paying("ada@example.com", &pm)).await;
    r.expect(200);
    let intent = intent_of(&r.body);
    let order = orders_of(&shop.orders(&cat.org).await, &id_of(&c))[0].clone();
    let oid = str_of(&order, "id").to_string();
    let keys = shop.license_keys(&cat.org).await;
    let key = str_of(&keys[0], "key").to_string();
    validate(&shop, &key, &cat.org).await.expect(200);

    // Stripe disputes the payment: recorded, open.
    let d = dispute_of(&shop, &oid).await;
    let id = str_of(&d, "id").to_string();
    assert_eq!(d["status"], "needs_response");
    assert_eq!(d["resolved"], false);
    assert_eq!(d["closed"], false);
    assert_eq!(d["amount"], 2500);
    assert_eq!(d["reason"], "fraudulent");
    assert!(d["evidence_due_by"].is_string(), "{d}");
    let at_stripe = list(&shop.ls.get("/v1/disputes").await);
    assert_eq!(at_stripe.len(), 1, "{at_stripe:?}");
    assert_eq!(at_stripe[0]["payment_intent"], intent.as_str());
    let processor_id = str_of(&at_stripe[0], "id").to_string();

    // Refused: no token, the read scope only, another organization's seller.
    let r = accept(&shop, None, &id).await;
    assert_eq!(r.status, 401, "{}", r.body);
    let (_, reader) = shop
        .app
        .new_user_with_scopes("reader@example.com", &[Scope::DisputesRead])
        .await;
    let r = accept(&shop, Some(&reader), &id).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(r.body["error"], "insufficient_scope");
    let (_, stranger) = shop
        .app
        .new_user_with_scopes("stranger@example.com", &[Scope::DisputesWrite])
        .await;
    for target in [id.as_str(), UNKNOWN_ID] {
        let r = accept(&shop, Some(&stranger), target).await;
        assert_eq!(r.status, 404, "{target}: {}", r.body);
        assert_eq!(r.body["error"], "ResourceNotFound");
    }
    let r = accept(&shop, Some(api.token), UNKNOWN_ID).await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = accept(&shop, Some(api.token), "not-a-uuid").await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.body["detail"][0]["loc"], json!(["path", "id"]));
    // None of that touched it, here or at Stripe; the key still works.
    let r = api.read(&format!("/v1/disputes/{id}")).await;
    r.expect(200);
    assert_eq!(r.body["status"], "needs_response");
    let at_stripe = shop.ls.get(&format!("/v1/disputes/{processor_id}")).await;
    assert_eq!(at_stripe["status"], "needs_response");
    validate(&shop, &key, &cat.org).await.expect(200);

    // Accepted: closed at Stripe, lost here, the order's key revoked at once.
    let r = accept(&shop, Some(api.token), &id).await;
    r.expect(200);
    assert_eq!(r.body["id"], id.as_str());
    assert_eq!(r.body["status"], "lost");
    assert_eq!(r.body["resolved"], true);
    assert_eq!(r.body["closed"], true);
    assert_eq!(r.body["past_due"], false);
    assert_eq!(r.body["order_id"], oid.as_str());
    assert_eq!(r.body["customer"]["email"], "ada@example.com");
    let at_stripe = shop.ls.get(&format!("/v1/disputes/{processor_id}")).await;
    assert_eq!(at_stripe["status"], "lost");
    let v = validate(&shop, &key, &cat.org).await;
    assert_eq!(v.status, 404, "a lost dispute's key is refused: {}", v.body);

    // Stripe's own `charge.dispute.closed` arrives after: still one dispute, lost.
    let closed = {
        let started = Instant::now();
        loop {
            let events = shop.ls.events("charge.dispute.closed").await;
            if let Some(e) = events.first() {
                break e.clone();
            }
            assert!(
                started.elapsed() < DISPUTE_DEADLINE,
                "no charge.dispute.closed"
            );
            sleep(Duration::from_millis(100)).await;
        }
    };
    assert_eq!(closed["data"]["object"]["status"], "lost");
    shop.wait_handled(str_of(&closed, "id")).await;
    let r = api.read(&format!("/v1/disputes/?order_id={oid}")).await;
    r.expect(200);
    let all = r.items();
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["status"], "lost");

    // Accepted again: not awaiting a response any more, and Stripe is not asked.
    let r = accept(&shop, Some(api.token), &id).await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(r.body["error"], "DisputeNotOpenError");
    assert_eq!(
        r.body["detail"],
        format!("Dispute {id} is not awaiting a response.")
    );
    assert_eq!(shop.ls.events("charge.dispute.closed").await.len(), 1);
}
