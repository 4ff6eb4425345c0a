//! What the fan-out queues for the tax provider (the application's own fan-out runs the
//! `queue` of each change written here; the recorder does not run: the test server pays
//! through the test processor, without Stripe Tax). The recorder's calls to Stripe are
//! tested against localstripe in `tests/api/stripe_tax.rs`.

use std::time::{Duration, Instant};

use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::testing::{self, TestApp};
use crate::domain::ids::{OrderId, RefundId};
use crate::domain::order::OrderStatus;
use crate::domain::refund::RefundReason;

/// Waits (bounded) until the fan-out has consumed every change written so far.
async fn fanned_out(app: &TestApp) {
    let started = Instant::now();
    while app.store.pending_changes().await.expect("the feed") > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the fan-out did not consume the feed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn dues(app: &TestApp) -> Vec<TaxRecordDue> {
    fanned_out(app).await;
    let mut all: Vec<TaxRecordDue> = app
        .store
        .scan::<TaxRecordDue>()
        .await
        .expect("the queue")
        .into_iter()
        .map(|d| d.value)
        .collect();
    all.sort_by_key(|d| d.created_at);
    all
}

async fn put<R: tollgate_storage::Record>(app: &TestApp, record: &R) {
    let mut batch = Batch::new();
    batch.put(record, Expect::Any).expect("a record");
    app.store.commit_durable(&batch).await.expect("stored");
}

/// A pending order of a new seller, quoted by `provider_ref`: 1000 net and 190 tax.
async fn pending_order(app: &TestApp, provider_ref: Option<&str>) -> Order {
    let (org, _) = testing::seller(app).await;
    let paid = testing::paid_order(app, org, 1000, 190, "pi_1").await;
    let mut order = Order {
        id: OrderId::new(),
        status: OrderStatus::Pending,
        ..paid
    };
    order.tax.provider_ref = provider_ref.map(Into::into);
    put(app, &order).await;
    order
}

async fn pay(app: &TestApp, order: &Order) -> Order {
    let paid = Order {
        status: OrderStatus::Paid,
        ..order.clone()
    };
    put(app, &paid).await;
    paid
}

fn refund(order: &Order, amount: i64, tax_amount: i64, status: RefundStatus) -> Refund {
    Refund {
        id: RefundId::new(),
        organization_id: order.organization_id,
        created_at: chrono::Utc::now(),
        modified_at: None,
        status,
        reason: RefundReason::CustomerRequest,
        amount,
        tax_amount,
        currency: order.currency.clone(),
        order_id: order.id,
        subscription_id: None,
        customer_id: order.customer_id,
        revoke_benefits: false,
        comment: None,
        metadata: Default::default(),
        processor_id: None,
        failure: None,
    }
}

/// The queued reversal of `refund`.
fn reversal(queued: &[TaxRecordDue], refund: RefundId) -> Option<TaxAction> {
    queued
        .iter()
        .find(|d| matches!(d.action, TaxAction::Reverse { refund_id, .. } if refund_id == refund))
        .map(|d| d.action.clone())
}

#[actix_web::test]
async fn an_order_paid_on_a_stripe_tax_quote_is_queued_once() {
    let app = testing::app().await;
    let order = pending_order(&app, Some("taxcalc_123")).await;
    assert!(dues(&app).await.is_empty(), "not paid yet");
    let paid = pay(&app, &order).await;
    let queued = dues(&app).await;
    assert_eq!(queued.len(), 1);
    assert_eq!(
        (queued[0].order_id, queued[0].organization_id),
        (order.id, order.organization_id)
    );
    assert_eq!(
        queued[0].action,
        TaxAction::Record {
            calculation_id: "taxcalc_123".into()
        }
    );
    assert_eq!(queued[0].attempts, 0);
    // Another change of the paid order (a refund counted on it) queues nothing more.
    let later = Order {
        refunded_amount: 100,
        ..paid
    };
    put(&app, &later).await;
    assert_eq!(dues(&app).await, queued);
}

#[actix_web::test]
async fn orders_of_other_quotes_are_not_queued() {
    let app = testing::app().await;
    // The built-in rules (no provider reference) and a reference that is not a
    // calculation's.
    for provider_ref in [None, Some("txn_123")] {
        let order = pending_order(&app, provider_ref).await;
        pay(&app, &order).await;
    }
    assert!(dues(&app).await.is_empty());
}

#[actix_web::test]
async fn a_recorded_order_is_not_queued_again() {
    let app = testing::app().await;
    let order = pending_order(&app, Some("taxcalc_9")).await;
    put(
        &app,
        &TaxTransaction {
            id: TaxTransaction::id_for(order.id),
            organization_id: order.organization_id,
            order_id: order.id,
            calculation_id: "taxcalc_9".into(),
            transaction_id: Some("tax_9".into()),
            recorded_at: chrono::Utc::now(),
            reversals: Vec::new(),
        },
    )
    .await;
    pay(&app, &order).await;
    assert!(dues(&app).await.is_empty());
}

#[actix_web::test]
async fn succeeded_refunds_are_reversed_whole_or_by_their_amount() {
    let app = testing::app().await;
    let order = pending_order(&app, Some("taxcalc_7")).await;
    let order = pay(&app, &order).await;
    assert_eq!(dues(&app).await.len(), 1);
    // Pending: nothing yet; succeeded: a partial reversal of amount and tax, negative.
    let half = refund(&order, 500, 95, RefundStatus::Pending);
    put(&app, &half).await;
    assert_eq!(dues(&app).await.len(), 1);
    let half = Refund {
        status: RefundStatus::Succeeded,
        ..half
    };
    put(&app, &half).await;
    let queued = dues(&app).await;
    assert_eq!(queued.len(), 2);
    assert_eq!(
        reversal(&queued, half.id),
        Some(TaxAction::Reverse {
            refund_id: half.id,
            full: false,
            flat_amount: -595
        })
    );
    // Seen again (another change of the same refund): the same entry.
    let again = Refund {
        comment: Some("noted".into()),
        ..half.clone()
    };
    put(&app, &again).await;
    assert_eq!(dues(&app).await.len(), 2);
    // A failed refund is not reversed; the whole order is reversed whole.
    put(&app, &refund(&order, 1000, 190, RefundStatus::Failed)).await;
    let whole = refund(&order, 1000, 190, RefundStatus::Succeeded);
    put(&app, &whole).await;
    let queued = dues(&app).await;
    assert_eq!(queued.len(), 3);
    assert_eq!(
        reversal(&queued, whole.id),
        Some(TaxAction::Reverse {
            refund_id: whole.id,
            full: true,
            flat_amount: 0
        })
    );
}

#[actix_web::test]
async fn refunds_of_orders_without_a_calculation_or_reversed_already_are_not_queued() {
    let app = testing::app().await;
    let builtin = pending_order(&app, None).await;
    let builtin = pay(&app, &builtin).await;
    put(&app, &refund(&builtin, 500, 95, RefundStatus::Succeeded)).await;
    assert!(dues(&app).await.is_empty());

    let order = pending_order(&app, Some("taxcalc_8")).await;
    let r = refund(&order, 500, 95, RefundStatus::Succeeded);
    put(
        &app,
        &TaxTransaction {
            id: TaxTransaction::id_for(order.id),
            organization_id: order.organization_id,
            order_id: order.id,
            calculation_id: "taxcalc_8".into(),
            transaction_id: Some("tax_8".into()),
            recorded_at: chrono::Utc::now(),
            reversals: vec![TaxReversal {
                refund_id: r.id,
                transaction_id: Some("tax_8r".into()),
                full: false,
                flat_amount: -595,
                reversed_at: chrono::Utc::now(),
            }],
        },
    )
    .await;
    let order = pay(&app, &order).await;
    put(&app, &r).await;
    assert!(dues(&app).await.is_empty(), "recorded and reversed already");
    // A refund of the order not reversed yet is queued.
    let other = refund(&order, 100, 19, RefundStatus::Succeeded);
    put(&app, &other).await;
    assert_eq!(dues(&app).await.len(), 1);
}

#[actix_web::test]
async fn a_provider_that_does_not_answer_leaves_the_entry_for_later_with_its_cause() {
    let app = testing::app().await;
    let settings = crate::config::PaymentSettings {
        // Nothing listens there.
        stripe_api_base: "http://127.0.0.1:9".into(),
        ..crate::config::PaymentSettings::default()
    };
    let stripe = StripeTax::new(&settings).expect("a client");
    let order = pending_order(&app, Some("taxcalc_5")).await;
    let now = app.now();
    let record = TaxRecordDue::new(
        order.organization_id,
        order.id,
        TaxAction::Record {
            calculation_id: "taxcalc_5".into(),
        },
        now,
    );
    let r = refund(&order, 500, 95, RefundStatus::Succeeded);
    let reverse = TaxRecordDue::new(
        order.organization_id,
        order.id,
        reversal_of(&order, &r),
        now,
    );
    fanned_out(&app).await;
    put(&app, &record).await;
    put(&app, &reverse).await;

    let next = drain(&app, &stripe).await.expect("the store answers");
    // Both wait 2 s: the record for Stripe, the reversal for the record.
    assert_eq!(next, Some(Duration::from_secs(2)));
    let failed = dues(&app).await;
    assert_eq!(failed.len(), 2);
    for d in &failed {
        assert_eq!(d.attempts, 1, "{d:?}");
        assert_eq!(d.next_attempt_at, Some(now + chrono::Duration::seconds(2)));
    }
    let cause = |action: fn(&TaxAction) -> bool| {
        failed
            .iter()
            .find(|d| action(&d.action))
            .and_then(|d| d.last_error.clone())
            .unwrap_or_default()
    };
    let record_cause = cause(|a| matches!(a, TaxAction::Record { .. }));
    assert!(
        record_cause.contains("/v1/tax/transactions/create_from_calculation: unreachable"),
        "{record_cause}"
    );
    let reverse_cause = cause(|a| matches!(a, TaxAction::Reverse { .. }));
    assert_eq!(reverse_cause, "the order's transaction is not recorded yet");
    // Not due yet: nothing is sent, nothing changes.
    app.clock.advance(chrono::Duration::seconds(1));
    assert_eq!(
        drain(&app, &stripe).await.expect("the store answers"),
        Some(Duration::from_secs(1))
    );
    assert_eq!(dues(&app).await, failed);
    // Due again: tried again, waiting twice as long.
    app.clock.advance(chrono::Duration::seconds(1));
    drain(&app, &stripe).await.expect("the store answers");
    assert!(dues(&app).await.iter().all(|d| d.attempts == 2));
    // Nothing is recorded meanwhile.
    assert!(app
        .store
        .get::<TaxTransaction>(&TaxTransaction::id_for(order.id).key())
        .await
        .expect("the store")
        .is_none());
}
