//! "Pay now" called with commands over the test processor: a subscription whose renewal
//! the sweep declined (its order `pending`) is paid by the buyer with a saved or a new
//! card; the refusals (not the customer's, not in dunning, a card of someone else, a
//! charge under way, the attempts used up); a charge left waiting for the buyer (3-D
//! Secure) settled by `payment-status` or by the processor's webhook.

use chrono::Duration;
use tollgate_actors::subscription::{SubscriptionStatus, MAX_BUYER_ATTEMPTS};
use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::checkout::payment_event;
use crate::app::payment_methods;
use crate::app::testing;
use crate::domain::ids::{CustomerId, OrganizationId};
use crate::domain::payment_method::{AddPaymentMethod, SetupAnswer};
use crate::payments::events::{EventKind, ProcessorEvent};

struct PastDue {
    customer: Customer,
    subscription: SubscriptionId,
    order: OrderId,
}

async fn customer(state: &AppState, org: OrganizationId, email: &str) -> Customer {
    let c = Customer::new(CustomerId::new(), org, email.into(), state.now());
    let mut batch = Batch::new();
    batch.put(&c, Expect::Absent).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
    c
}

/// A customer's subscription billed with a card that cannot be charged, past its period
/// end and through the sweep: past due, its renewal order `pending`.
async fn past_due(app: &testing::TestApp, org: OrganizationId, email: &str) -> PastDue {
    let c = customer(app, org, email).await;
    let mut s = crate::api::subscription::sample_subscriptions().remove(0);
    s.id = SubscriptionId::new();
    s.organization_id = org;
    s.customer_id = c.id;
    s.customer_email = c.email.clone();
    s.payment_token = Some(crate::payments::CHARGE_DECLINED.into());
    s.amount = Some(900);
    s.currency = Some("usd".into());
    s.checkout_id = None;
    s.cancel_at_period_end = false;
    s.canceled_at = None;
    s.ends_at = None;
    s.discount_id = None;
    s.discount_name = None;
    let end = s.current_period_end.expect("a period end");
    let mut batch = Batch::new();
    batch.put(&s, Expect::Absent).unwrap();
    app.store.commit_durable(&batch).await.unwrap();
    app.clock.set(end + Duration::minutes(1));
    let report = crate::app::subscription::sweep_subscriptions(app)
        .await
        .unwrap();
    assert_eq!(report.declined, 1, "{report:?}");
    let order = renewal_order_id(s.id, s.cycles + 1);
    let stored = order_of(app, order).await;
    assert_eq!(stored.status, OrderStatus::Pending);
    assert!(stored.next_payment_attempt_at.is_some());
    PastDue {
        customer: c,
        subscription: s.id,
        order,
    }
}

async fn order_of(state: &AppState, id: OrderId) -> Order {
    state
        .store
        .get::<Order>(&id.key())
        .await
        .unwrap()
        .unwrap()
        .value
}

async fn subscription_of(state: &AppState, id: SubscriptionId) -> Subscription {
    state.subscriptions.call(id, GetSubscription).await.unwrap()
}

async fn saved(state: &AppState, c: &Customer, token: &str) -> PaymentMethod {
    let command = AddPaymentMethod {
        token: token.into(),
        set_default: false,
        return_url: "https://example.com/portal".into(),
    };
    match payment_methods::add(state, c, command).await.unwrap() {
        SetupAnswer::Saved(m) => m,
        other => panic!("not saved: {other:?}"),
    }
}

fn succeeded() -> Confirmation {
    Confirmation {
        status: ConfirmationStatus::Succeeded,
        client_secret: None,
        error: None,
    }
}

#[actix_web::test]
async fn a_declined_renewal_is_paid_now_with_a_saved_card() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let p = past_due(&app, org, "ada@example.com").await;
    let before = subscription_of(&app, p.subscription).await;
    assert_eq!(before.status, SubscriptionStatus::PastDue);
    assert_eq!(
        payment_status(&app, &p.customer, p.order).await.unwrap(),
        PaymentStatus {
            status: "failed",
            error: Some(DECLINED.into())
        }
    );
    let visa = saved(&app, &p.customer, "tok_visa").await;

    let answer = pay_now(&app, &p.customer, p.order, PayWith::Saved(visa.id))
        .await
        .unwrap();
    assert_eq!(answer, succeeded());
    let s = subscription_of(&app, p.subscription).await;
    assert_eq!(s.status, SubscriptionStatus::Active);
    assert_eq!(s.cycles, before.cycles + 1);
    assert_eq!((s.past_due_at, s.next_payment_attempt_at), (None, None));
    assert_eq!((s.buyer_attempts, s.payment_lock_until), (0, None));
    assert_eq!(s.payment_token.as_deref(), Some("tok_visa"));
    let order = order_of(&app, p.order).await;
    assert_eq!(order.status, OrderStatus::Paid);
    assert_eq!(order.next_payment_attempt_at, None);
    assert!(order
        .payment_id
        .as_deref()
        .is_some_and(|i| i.starts_with("pi_test_")));
    assert_eq!(
        payment_status(&app, &p.customer, p.order).await.unwrap(),
        PaymentStatus {
            status: "succeeded",
            error: None
        }
    );
    // Paid: not again.
    let e = pay_now(&app, &p.customer, p.order, PayWith::Saved(visa.id))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::OrderNotEligibleForRetry);
    assert_eq!(
        e.detail(),
        format!("Order {} is not eligible for payment retry.", p.order)
    );
}

#[actix_web::test]
async fn a_new_card_that_pays_is_saved_and_bills_the_next_renewals() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let p = past_due(&app, org, "ada@example.com").await;
    let answer = pay_now(
        &app,
        &p.customer,
        p.order,
        PayWith::New("tok_mastercard".into()),
    )
    .await
    .unwrap();
    assert_eq!(answer, succeeded());
    let s = subscription_of(&app, p.subscription).await;
    assert_eq!(s.status, SubscriptionStatus::Active);
    assert_eq!(s.payment_token.as_deref(), Some("tok_mastercard"));
    let id = PaymentMethod::id_for(p.customer.id, "tok_mastercard");
    let method = app.store.get::<PaymentMethod>(&id.key()).await.unwrap();
    assert_eq!(
        method.map(|m| m.value.details.last4),
        Some(Some("4444".into()))
    );
    let c = app
        .store
        .get::<Customer>(&p.customer.id.key())
        .await
        .unwrap()
        .unwrap()
        .value;
    assert_eq!(c.default_payment_method_id, Some(id), "it had no default");
}

#[actix_web::test]
async fn pay_now_refusals() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let p = past_due(&app, org, "ada@example.com").await;
    let other = customer(&app, org, "eve@example.com").await;
    let eves = saved(&app, &other, "tok_visa").await;
    let before = subscription_of(&app, p.subscription).await;

    // Another customer's order is not there.
    let e = pay_now(&app, &other, p.order, PayWith::New("tok_visa".into()))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    let e = payment_status(&app, &other, p.order).await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    // Nor is another customer's card the buyer's.
    let e = pay_now(&app, &p.customer, p.order, PayWith::Saved(eves.id))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PaymentRetryValidationError);
    assert_eq!(subscription_of(&app, p.subscription).await, before);

    // A charge under way holds the payment.
    let terms = renewal_terms(&app, &before).await.unwrap();
    app.subscriptions
        .call(
            p.subscription,
            BeginRecovery {
                terms,
                method: "tok_visa".into(),
            },
        )
        .await
        .unwrap();
    let e = pay_now(&app, &p.customer, p.order, PayWith::New("tok_visa".into()))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PaymentAlreadyInProgress);
    app.clock
        .advance(tollgate_actors::subscription::PAYMENT_LOCK);

    // Declines are answers, each counted; then the buyer's attempts are used up.
    for n in 0..MAX_BUYER_ATTEMPTS {
        let answer = pay_now(
            &app,
            &p.customer,
            p.order,
            PayWith::New("tok_decline_generic".into()),
        )
        .await
        .unwrap();
        assert_eq!(answer.status, ConfirmationStatus::Failed, "attempt {n}");
        assert_eq!(answer.error.as_deref(), Some(DECLINED));
        assert_eq!(
            subscription_of(&app, p.subscription).await.buyer_attempts,
            n + 1
        );
    }
    let e = pay_now(&app, &p.customer, p.order, PayWith::New("tok_visa".into()))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::ManualRetryLimitExceeded);
    let s = subscription_of(&app, p.subscription).await;
    assert_eq!(s.status, SubscriptionStatus::PastDue);
    assert_eq!(order_of(&app, p.order).await.status, OrderStatus::Pending);
    assert_eq!(
        payment_status(&app, &p.customer, p.order)
            .await
            .unwrap()
            .status,
        "failed"
    );
}

/// The buyer's charge as a 3-D Secure card leaves it: begun, then waiting on `intent`.
async fn waiting(app: &testing::TestApp, p: &PastDue, intent: &str) {
    let current = subscription_of(app, p.subscription).await;
    let terms = renewal_terms(app, &current).await.unwrap();
    let charge = app
        .subscriptions
        .call(
            p.subscription,
            BeginRecovery {
                terms: terms.clone(),
                method: "pm_3ds".into(),
            },
        )
        .await
        .unwrap();
    let tax = tax_quote(app, p.customer.id, None, charge.amount, &charge.currency)
        .await
        .unwrap();
    let settlement = Settlement {
        customer: &p.customer,
        order: p.order,
        subscription: p.subscription,
        terms,
        cycle: charge.cycle,
        total: charge.amount + tax.added_tax(),
        tax,
    };
    let answer = settlement
        .apply(
            app,
            ChargeOutcome::Pending {
                intent_id: intent.into(),
                status: "requires_action".into(),
                client_secret: Some(format!("{intent}_secret")),
            },
        )
        .await
        .unwrap();
    assert_eq!(answer.status, ConfirmationStatus::RequiresAction);
    assert_eq!(answer.client_secret, Some(format!("{intent}_secret")));
    let s = subscription_of(app, p.subscription).await;
    assert_eq!(s.recovery_intent.as_deref(), Some(intent));
    assert!(s.payment_locked(app.now()));
}

#[actix_web::test]
async fn a_charge_waiting_for_the_buyer_is_settled_when_its_status_is_asked() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let p = past_due(&app, org, "ada@example.com").await;
    waiting(&app, &p, "pi_test_3ds").await;
    let order = order_of(&app, p.order).await;
    assert_eq!(
        order.last_payment.map(|a| (a.status, a.intent_id)),
        Some((PaymentAttemptStatus::Pending, Some("pi_test_3ds".into())))
    );
    // The test processor's payments have all gone through once asked.
    assert_eq!(
        payment_status(&app, &p.customer, p.order).await.unwrap(),
        PaymentStatus {
            status: "succeeded",
            error: None
        }
    );
    let s = subscription_of(&app, p.subscription).await;
    assert_eq!(s.status, SubscriptionStatus::Active);
    assert_eq!(s.recovery_intent, None);
    let order = order_of(&app, p.order).await;
    assert_eq!(order.status, OrderStatus::Paid);
    assert_eq!(order.payment_id.as_deref(), Some("pi_test_3ds"));
}

fn event(id: &str, kind: EventKind) -> ProcessorEvent {
    ProcessorEvent {
        id: id.into(),
        kind,
    }
}

fn update(order: OrderId, intent: &str, outcome: ChargeOutcome) -> PaymentUpdate {
    PaymentUpdate {
        payment_id: intent.into(),
        checkout_id: None,
        order_id: Some(order),
        outcome,
    }
}

#[actix_web::test]
async fn the_processor_s_events_settle_a_pay_now_charge_by_its_order() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let p = past_due(&app, org, "ada@example.com").await;
    waiting(&app, &p, "pi_3ds_first").await;
    let declined = || ChargeOutcome::Declined {
        message: Some("Your card was not authenticated.".into()),
    };

    // A failure of a payment the subscription does not wait on changes nothing.
    let before = subscription_of(&app, p.subscription).await;
    let failed = EventKind::PaymentFailed(update(p.order, "pi_other", declined()));
    assert!(payment_event(&app, &event("evt_1", failed)).await.unwrap());
    assert_eq!(subscription_of(&app, p.subscription).await, before);

    // The awaited one's failure counts as the buyer's attempt and frees the payment.
    let failed = EventKind::PaymentFailed(update(p.order, "pi_3ds_first", declined()));
    assert!(payment_event(&app, &event("evt_2", failed)).await.unwrap());
    let s = subscription_of(&app, p.subscription).await;
    assert_eq!(s.status, SubscriptionStatus::PastDue);
    assert_eq!(
        (s.buyer_attempts, s.payment_lock_until, s.recovery_intent),
        (1, None, None)
    );
    assert_eq!(
        payment_status(&app, &p.customer, p.order).await.unwrap(),
        PaymentStatus {
            status: "failed",
            error: Some("Your card was not authenticated.".into())
        }
    );

    // The next one goes through: the renewal is paid by it.
    waiting(&app, &p, "pi_3ds_second").await;
    let paid = EventKind::PaymentSucceeded(update(
        p.order,
        "pi_3ds_second",
        ChargeOutcome::Succeeded {
            intent_id: "pi_3ds_second".into(),
            payment_method: Some("pm_3ds".into()),
        },
    ));
    assert!(payment_event(&app, &event("evt_3", paid.clone()))
        .await
        .unwrap());
    let s = subscription_of(&app, p.subscription).await;
    assert_eq!(s.status, SubscriptionStatus::Active);
    assert_eq!(s.payment_token.as_deref(), Some("pm_3ds"));
    let order = order_of(&app, p.order).await;
    assert_eq!(order.status, OrderStatus::Paid);
    assert_eq!(order.payment_id.as_deref(), Some("pi_3ds_second"));
    // The same payment told again (another event id) is a no-op.
    assert!(payment_event(&app, &event("evt_4", paid)).await.unwrap());
    assert_eq!(subscription_of(&app, p.subscription).await, s);
}
