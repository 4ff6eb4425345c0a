//! The payment-method use cases called with commands, over the test processor.

use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::testing;
use crate::domain::ids::{CustomerId, OrganizationId};

async fn customer(state: &AppState, org: OrganizationId, email: &str) -> Customer {
    let c = Customer::new(CustomerId::new(), org, email.into(), state.now());
    let mut batch = Batch::new();
    batch.put(&c, Expect::Absent).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
    c
}

async fn reread(state: &AppState, c: &Customer) -> Customer {
    state
        .store
        .get::<Customer>(&c.id.key())
        .await
        .unwrap()
        .unwrap()
        .value
}

fn add_cmd(token: &str, set_default: bool) -> AddPaymentMethod {
    AddPaymentMethod {
        token: token.into(),
        set_default,
        return_url: "https://example.com/portal".into(),
    }
}

async fn added(state: &AppState, c: &Customer, token: &str, set_default: bool) -> PaymentMethod {
    match add(state, c, add_cmd(token, set_default)).await.unwrap() {
        SetupAnswer::Saved(m) => m,
        other => panic!("not saved: {other:?}"),
    }
}

const PAGE: ListParams = ListParams { page: 1, limit: 10 };

/// A live subscription of `c` of $9.00 a month (or free) billed with `token`.
async fn subscription(
    state: &AppState,
    c: &Customer,
    token: &str,
    amount: Option<i64>,
) -> crate::domain::ids::SubscriptionId {
    let mut s = crate::api::subscription::sample_subscriptions().remove(0);
    s.id = crate::domain::ids::SubscriptionId::new();
    s.organization_id = c.organization_id;
    s.customer_id = c.id;
    s.payment_token = Some(token.into());
    s.amount = amount;
    s.started_at = Some(state.now());
    s.ended_at = None;
    s.checkout_id = None;
    let mut batch = Batch::new();
    batch.put(&s, Expect::Absent).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
    s.id
}

/// The card a subscription is billed with, as stored.
async fn billed_with(state: &AppState, id: crate::domain::ids::SubscriptionId) -> Option<String> {
    state
        .store
        .get::<Subscription>(&id.key())
        .await
        .unwrap()
        .unwrap()
        .value
        .payment_token
}

#[actix_web::test]
async fn an_added_card_is_listed_once_described_and_can_be_the_default() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let c = customer(&app, org, "ada@example.com").await;
    let visa = added(&app, &c, "tok_visa", false).await;
    assert_eq!(visa.id, PaymentMethod::id_for(c.id, "tok_visa"));
    assert_eq!(visa.details.last4.as_deref(), Some("4242"));
    assert_eq!(reread(&app, &c).await.default_payment_method_id, None);
    // Adding the same card again is the same record.
    assert_eq!(added(&app, &c, "tok_visa", false).await, visa);
    let mc = added(&app, &c, "tok_mastercard", true).await;
    assert_eq!(
        reread(&app, &c).await.default_payment_method_id,
        Some(mc.id)
    );

    let (items, total) = list(&app, &c, PAGE).await.unwrap();
    assert_eq!(total, 2);
    let ids: Vec<_> = items.iter().map(|m| m.id).collect();
    assert!(ids.contains(&visa.id) && ids.contains(&mc.id), "{ids:?}");
    let (page, total) = list(&app, &c, ListParams { page: 2, limit: 1 })
        .await
        .unwrap();
    assert_eq!((page.len(), total), (1, 2));

    set_default(&app, &c, visa.id).await.unwrap();
    assert_eq!(
        reread(&app, &c).await.default_payment_method_id,
        Some(visa.id)
    );
}

#[actix_web::test]
async fn a_declined_card_is_refused_and_saves_nothing() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let c = customer(&app, org, "ada@example.com").await;
    let e = add(&app, &c, add_cmd("tok_decline_generic", true))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PaymentMethodSetupFailed);
    assert_eq!(list(&app, &c, PAGE).await.unwrap().1, 0);
    assert_eq!(reread(&app, &c).await.default_payment_method_id, None);
}

#[actix_web::test]
async fn another_customer_s_method_is_not_found_and_unchanged() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let ada = customer(&app, org, "ada@example.com").await;
    let bob = customer(&app, org, "bob@example.com").await;
    let visa = added(&app, &ada, "tok_visa", true).await;
    assert_eq!(
        set_default(&app, &bob, visa.id).await.unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(
        remove(&app, &bob, visa.id).await.unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(list(&app, &ada, PAGE).await.unwrap().1, 1);
    assert_eq!(list(&app, &bob, PAGE).await.unwrap().1, 0);
    assert_eq!(reread(&app, &bob).await.default_payment_method_id, None);
}

#[actix_web::test]
async fn a_paid_subscription_s_card_is_listed_and_handed_over_when_removed() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let c = customer(&app, org, "ada@example.com").await;
    let paid = subscription(&app, &c, "tok_chargeDeclined", Some(900)).await;
    let free = subscription(&app, &c, "tok_free", None).await;
    // The paid subscription's card becomes a record on the first read, once; the free
    // one's charges nothing and is not listed.
    let (items, total) = list(&app, &c, PAGE).await.unwrap();
    assert_eq!(total, 1);
    assert_eq!(list(&app, &c, PAGE).await.unwrap().1, 1);
    let billed = items[0].clone();
    assert_eq!(billed.processor_ref, "tok_chargeDeclined");
    assert_eq!(billed.details.last4.as_deref(), Some("0341"));

    // Its only card stays.
    let e = remove(&app, &c, billed.id).await.unwrap_err();
    assert_eq!(e.code(), Code::PaymentMethodInUseByActiveSubscription);
    assert_eq!(e.detail(), IN_USE);
    assert!(app
        .store
        .get::<PaymentMethod>(&billed.id.key())
        .await
        .unwrap()
        .is_some());
    // With another card saved, it goes: the subscription is billed with the other one,
    // which becomes the default.
    let visa = added(&app, &c, "tok_visa", false).await;
    remove(&app, &c, billed.id).await.unwrap();
    assert_eq!(billed_with(&app, paid).await.as_deref(), Some("tok_visa"));
    assert_eq!(billed_with(&app, free).await.as_deref(), Some("tok_free"));
    let (left, total) = list(&app, &c, PAGE).await.unwrap();
    assert_eq!(total, 1, "not saved again from the subscription");
    assert_eq!(left[0].id, visa.id);
    // Now the other one is the last card.
    let e = remove(&app, &c, visa.id).await.unwrap_err();
    assert_eq!(e.code(), Code::PaymentMethodInUseByActiveSubscription);
    assert_eq!(billed_with(&app, paid).await.as_deref(), Some("tok_visa"));
}

#[actix_web::test]
async fn the_default_card_bills_the_live_subscriptions_and_takes_over_a_removed_one() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let c = customer(&app, org, "ada@example.com").await;
    let monthly = subscription(&app, &c, "tok_visa", Some(900)).await;
    let yearly = subscription(&app, &c, "tok_visa", Some(9000)).await;
    let ended = subscription(&app, &c, "tok_visa", Some(900)).await;
    app.store
        .update::<Subscription, AppError>(&ended.key(), async |s: &Subscription| {
            Ok(Some(Subscription {
                ended_at: Some(s.created_at),
                ..s.clone()
            }))
        })
        .await
        .unwrap();
    let visa = added(&app, &c, "tok_visa", false).await;
    app.clock.advance(chrono::Duration::seconds(5));
    let mc = added(&app, &c, "tok_mastercard", true).await;
    // Made the default: the live subscriptions are billed with it, not the ended one.
    for s in [monthly, yearly] {
        assert_eq!(
            billed_with(&app, s).await.as_deref(),
            Some("tok_mastercard")
        );
    }
    assert_eq!(billed_with(&app, ended).await.as_deref(), Some("tok_visa"));
    set_default(&app, &c, visa.id).await.unwrap();
    for s in [monthly, yearly] {
        assert_eq!(billed_with(&app, s).await.as_deref(), Some("tok_visa"));
    }
    // A third card, newest; the default removed: the subscriptions go to the newest
    // other card, the new default.
    app.clock.advance(chrono::Duration::seconds(5));
    let amex = added(&app, &c, "tok_amex", false).await;
    set_default(&app, &c, mc.id).await.unwrap();
    remove(&app, &c, mc.id).await.unwrap();
    assert_eq!(
        reread(&app, &c).await.default_payment_method_id,
        Some(amex.id)
    );
    for s in [monthly, yearly] {
        assert_eq!(billed_with(&app, s).await.as_deref(), Some("tok_amex"));
    }
    // A card that is not the default hands its subscription to the default.
    app.subscriptions
        .call(monthly, SetPaymentMethod("tok_visa".into()))
        .await
        .unwrap();
    remove(&app, &c, visa.id).await.unwrap();
    for s in [monthly, yearly] {
        assert_eq!(billed_with(&app, s).await.as_deref(), Some("tok_amex"));
    }
    assert_eq!(
        reread(&app, &c).await.default_payment_method_id,
        Some(amex.id)
    );
}

#[actix_web::test]
async fn removing_the_default_makes_the_newest_other_method_the_default() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let c = customer(&app, org, "ada@example.com").await;
    let visa = added(&app, &c, "tok_visa", false).await;
    app.clock.advance(chrono::Duration::seconds(5));
    let mc = added(&app, &c, "tok_mastercard", true).await;
    remove(&app, &c, mc.id).await.unwrap();
    assert_eq!(
        reread(&app, &c).await.default_payment_method_id,
        Some(visa.id)
    );
    remove(&app, &c, visa.id).await.unwrap();
    assert_eq!(reread(&app, &c).await.default_payment_method_id, None);
    assert_eq!(
        remove(&app, &c, visa.id).await.unwrap_err().code(),
        Code::NotFound,
        "gone"
    );
}

async fn confirm_as(state: &AppState, c: &Customer, seti: &str) -> Result<SetupAnswer, AppError> {
    confirm(
        state,
        c,
        ConfirmPaymentMethod {
            setup_intent_id: seti.into(),
            set_default: true,
        },
    )
    .await
}

#[actix_web::test]
async fn only_a_setup_the_customer_started_is_confirmed() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let ada = customer(&app, org, "ada@example.com").await;
    let bob = customer(&app, org, "bob@example.com").await;
    let setup = PaymentSetup {
        setup_intent_id: "seti_test_ada".into(),
        organization_id: org,
        customer_id: ada.id,
        set_default: true,
        created_at: app.now(),
    };
    let mut batch = Batch::new();
    batch.put(&setup, Expect::Absent).unwrap();
    app.store.commit_durable(&batch).await.unwrap();
    for (who, seti) in [(&bob, "seti_test_ada"), (&ada, "seti_unknown")] {
        let AppError::Invalid(items) = confirm_as(&app, who, seti).await.unwrap_err() else {
            panic!("not a 422");
        };
        assert_eq!(items[0].msg, INVALID_SETUP);
    }
    // The test processor's setups never say which card: nothing to save.
    assert_eq!(
        confirm_as(&app, &ada, "seti_test_ada")
            .await
            .unwrap_err()
            .code(),
        Code::PaymentMethodSetupFailed
    );
    assert_eq!(list(&app, &ada, PAGE).await.unwrap().1, 0);
}
