//! The refund use cases called with commands, without a server.

use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::testing;
use crate::domain::order::{BillingReason, OrderStatus};
use crate::domain::refund::RefundReason;
use crate::error::{Code, Step};
use crate::payments::events::{RefundState, RefundUpdate};

/// A paid one-time order of $15.00 (tax $3.00) of the organization, paid by `pi_paid`.
async fn paid_order(state: &AppState, org: OrganizationId) -> Order {
    let customer = crate::api::subscription::sample_customer();
    let sub = &crate::api::subscription::sample_subscriptions()[0];
    let order = Order {
        id: OrderId::new(),
        organization_id: org,
        created_at: state.now(),
        modified_at: None,
        status: OrderStatus::Paid,
        amount: 1500,
        tax_amount: 300,
        refunded_amount: 0,
        refunded_tax_amount: 0,
        currency: "usd".into(),
        billing_reason: BillingReason::Purchase,
        billing_address: None,
        customer_id: customer.id,
        product_id: sub.product_id,
        product_price_id: sub.price_id,
        recurring: false,
        discount_id: None,
        subscription_id: None,
        checkout_id: None,
        metadata: Default::default(),
        custom_field_data: Default::default(),
        customer_email: customer.email,
        product_name: "Pro".into(),
        discount_name: None,
        payment_id: Some(format!("pi_paid_{}", org.0.simple())),
        refund_pending_amount: 0,
        refund_pending_tax_amount: 0,
        seats: None,
    };
    let mut batch = Batch::new();
    batch.put(&order, Expect::Absent).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
    order
}

fn request(order_id: OrderId, amount: i64) -> RefundRequest {
    RefundRequest {
        order_id,
        reason: RefundReason::CustomerRequest,
        amount,
        comment: None,
        revoke_benefits: false,
        metadata: Default::default(),
        end_subscription: None,
    }
}

fn invalid_path(e: &AppError) -> Vec<Step> {
    match e {
        AppError::Invalid(items) => items[0].path.clone(),
        other => panic!("not invalid fields: {other}"),
    }
}

#[actix_web::test]
async fn a_refund_of_an_unknown_order_is_an_invalid_order_id() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let err = create(&app, subject, request(OrderId::new(), 100))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert_eq!(invalid_path(&err), crate::field!["order_id"]);
}

#[actix_web::test]
async fn a_refund_of_another_organization_s_order_is_not_found_either() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let (other, _) = testing::seller(&app).await;
    let order = paid_order(&app, other).await;
    let err = crate::app::orders::order_for(&app, subject, order.id)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let err = create(&app, subject, request(order.id, 100))
        .await
        .unwrap_err();
    assert_eq!(invalid_path(&err), crate::field!["order_id"]);
}

#[actix_web::test]
async fn more_than_the_refundable_is_an_invalid_amount_and_a_refund_settles() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let order = paid_order(&app, org).await;
    let err = create(&app, subject, request(order.id, 1501))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert_eq!(invalid_path(&err), crate::field!["amount"]);

    let refund = create(&app, subject, request(order.id, 1500))
        .await
        .unwrap();
    assert_eq!(refund.status, RefundStatus::Succeeded);
    assert_eq!((refund.amount, refund.tax_amount), (1500, 300));
    let err = create(&app, subject, request(order.id, 1))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::RefundedAlready);
}

#[actix_web::test]
async fn a_subscription_s_benefits_are_not_revoked_by_a_refund_and_one_time_has_no_end() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let order = paid_order(&app, org).await;
    let mut ending = request(order.id, 100);
    ending.end_subscription = Some(EndSubscription::Now);
    let err = create(&app, subject, ending).await.unwrap_err();
    assert_eq!(invalid_path(&err), crate::field!["end_subscription"]);
}

#[actix_web::test]
async fn a_refund_made_at_the_processor_is_recorded_once_on_the_order_it_paid() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let order = paid_order(&app, org).await;
    let update = RefundUpdate {
        processor_id: format!("re_{}", org.0.simple()),
        refund_id: None,
        payment_id: order.payment_id.clone(),
        amount: 600,
        currency: "usd".into(),
        status: RefundState::Succeeded,
        reason: RefundReason::Duplicate,
    };
    from_processor(&app, &update).await.unwrap();
    from_processor(&app, &update).await.unwrap();
    let refunds = refunds_of_order(&app, order.id).await.unwrap();
    assert_eq!(refunds.len(), 1, "recorded once");
    assert_eq!(refunds[0].reason, RefundReason::Duplicate);
    assert_eq!(refunds[0].amount + refunds[0].tax_amount, 600);

    // A payment no order knows: ignored.
    let unknown = RefundUpdate {
        processor_id: "re_unknown".into(),
        payment_id: Some("pi_nobody".into()),
        ..update
    };
    from_processor(&app, &unknown).await.unwrap();
}

#[test]
fn a_multi_record_write_is_tried_a_bounded_number_of_times() {
    let mut attempts = Attempts::new();
    for _ in 0..WRITE_ATTEMPTS {
        attempts.next().expect("within the cap");
    }
    let err = attempts.next().unwrap_err();
    assert_eq!(err.code(), Code::AlreadyExists);
    assert_eq!(WRITE_ATTEMPTS, 8);
}
