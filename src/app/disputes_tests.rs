//! Accepting a dispute, called with commands (the test processor closes a dispute as
//! Stripe does: lost).

use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::testing;
use crate::domain::order::{BillingReason, Order, OrderStatus};

/// A paid one-time order of the organization, paid by `payment`.
async fn paid_order(state: &AppState, org: OrganizationId, payment: &str) -> Order {
    let customer = crate::api::subscription::sample_customer();
    let sub = &crate::api::subscription::sample_subscriptions()[0];
    let order = Order {
        id: OrderId::new(),
        organization_id: org,
        created_at: state.now(),
        modified_at: None,
        status: OrderStatus::Paid,
        amount: 2500,
        tax_amount: 0,
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
        payment_id: Some(payment.to_string()),
        refund_pending_amount: 0,
        refund_pending_tax_amount: 0,
        seats: None,
    };
    let mut batch = Batch::new();
    batch.put(&order, Expect::Absent).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
    order
}

/// The processor reports a dispute `dp` of the order's payment with `status`.
async fn reported(state: &AppState, order: &Order, dp: &str, status: DisputeStatus) -> Dispute {
    let update = DisputeUpdate {
        processor_id: dp.into(),
        payment_id: order.payment_id.clone(),
        status,
        amount: 2500,
        currency: "usd".into(),
        reason: Some("fraudulent".into()),
        evidence_due_by: Some(state.now() + chrono::Duration::days(7)),
    };
    from_processor(state, &update).await.unwrap();
    let id = state
        .store
        .lookup_unique(&processor_key(dp))
        .await
        .unwrap()
        .expect("recorded");
    state
        .store
        .get::<Dispute>(&id)
        .await
        .unwrap()
        .unwrap()
        .value
}

#[actix_web::test]
async fn accepting_loses_the_dispute_and_takes_the_access_back_once() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let order = paid_order(&app, org, "pi_accept_1").await;
    let d = reported(&app, &order, "dp_accept_1", DisputeStatus::NeedsResponse).await;
    assert_eq!(d.revoked_at, None);

    // Another seller: not found, and nothing changes.
    let (_, stranger) = testing::seller(&app).await;
    let err = accept(&app, stranger, d.id).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let err = accept(&app, subject, DisputeId::new()).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(
        dispute_for(&app, subject, d.id).await.unwrap().status,
        DisputeStatus::NeedsResponse
    );

    let lost = accept(&app, subject, d.id).await.unwrap();
    assert_eq!(lost.id, d.id);
    assert_eq!(lost.status, DisputeStatus::Lost);
    assert!(
        lost.revoked_at.is_some(),
        "a lost dispute revokes the order's keys"
    );
    assert_eq!(
        lost.amount, d.amount,
        "the processor's answer keeps what was recorded"
    );
    assert_eq!(lost.evidence_due_by, d.evidence_due_by);

    // Accepted again: no longer awaiting a response.
    let err = accept(&app, subject, d.id).await.unwrap_err();
    assert_eq!(err.code(), Code::DisputeNotOpenError);
    assert!(
        err.to_string().contains("is not awaiting a response"),
        "{err}"
    );
    assert_eq!(
        dispute_for(&app, subject, d.id).await.unwrap().revoked_at,
        lost.revoked_at,
        "revoked once"
    );
}

#[actix_web::test]
async fn only_a_dispute_that_needs_a_response_can_be_accepted() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    for (n, status) in [
        DisputeStatus::UnderReview,
        DisputeStatus::Won,
        DisputeStatus::Prevented,
        DisputeStatus::EarlyWarning,
    ]
    .into_iter()
    .enumerate()
    {
        let order = paid_order(&app, org, &format!("pi_status_{n}")).await;
        let d = reported(&app, &order, &format!("dp_status_{n}"), status).await;
        let err = accept(&app, subject, d.id).await.unwrap_err();
        assert_eq!(err.code(), Code::DisputeNotOpenError, "{status:?}");
        assert_eq!(err.code().status(), 409);
        let after = dispute_for(&app, subject, d.id).await.unwrap();
        assert_eq!(after.status, status, "nothing closed");
        assert_eq!(after.revoked_at, None);
    }
}
