//! The subscription use cases called directly with their commands (no HTTP server).

use tollgate_actors::subscription::{Subscription, SubscriptionError};
use tollgate_actors::ActorError;
use tollgate_storage::{Batch, Expect};

use super::{
    cancel, change, subscription_refusal, uncancel, CancelSubscription, Context,
    SubscriptionChange, Toggler,
};
use crate::app::testing;
use crate::domain::ids::{OrganizationId, SubscriptionId};
use crate::error::Code;
use crate::state::AppState;

/// A live subscription of the organization, stored as a purchase leaves it.
async fn live_subscription(state: &AppState, org: OrganizationId) -> Subscription {
    let mut s = crate::api::subscription::sample_subscriptions()
        .into_iter()
        .find(|s| !s.cancel_at_period_end && s.ended_at.is_none())
        .expect("a live sample subscription");
    s.id = SubscriptionId::new();
    s.organization_id = org;
    let mut batch = Batch::new();
    batch.put(&s, Expect::Absent).expect("subscription");
    state.store.commit_durable(&batch).await.expect("seeded");
    s
}

#[actix_web::test]
async fn an_unknown_subscription_is_not_found() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let err = cancel(
        &app,
        subject,
        SubscriptionId::new(),
        CancelSubscription::at_period_end(),
    )
    .await
    .expect_err("no such subscription");
    assert_eq!(err.code(), Code::NotFound);
}

#[actix_web::test]
async fn another_organizations_subscription_is_not_found() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let (other, _) = testing::seller(&app).await;
    let s = live_subscription(&app, other).await;
    let err = uncancel(&app, subject, s.id)
        .await
        .expect_err("not reached");
    assert_eq!(err.code(), Code::NotFound);
}

#[actix_web::test]
async fn a_revoked_subscription_refuses_with_codes() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let s = live_subscription(&app, org).await;
    // Nothing asked: answered as it is.
    let same = change(
        &app,
        subject,
        s.id,
        SubscriptionChange::Nothing,
        Toggler::Seller,
    )
    .await
    .expect("nothing to change");
    assert_eq!(same.id, s.id);
    let revoked = cancel(&app, subject, s.id, CancelSubscription::now())
        .await
        .expect("revoked");
    assert!(revoked.ended_at.is_some());
    // Uncancel of an ended subscription: 400.
    let err = uncancel(&app, subject, s.id).await.expect_err("ended");
    assert_eq!(err.code(), Code::BadRequest);
    // Cancel again: the cancellation context's answer, 403 NotPermitted.
    let err = cancel(&app, subject, s.id, CancelSubscription::at_period_end())
        .await
        .expect_err("already canceled");
    assert_eq!(err.code(), Code::NotPermitted);
}

#[test]
fn already_canceled_answers_by_context_from_one_mapping() {
    let refused = |context| {
        subscription_refusal(
            ActorError::Domain(SubscriptionError::AlreadyCanceled),
            context,
        )
        .code()
    };
    assert_eq!(refused(Context::Cancellation), Code::NotPermitted);
    assert_eq!(
        refused(Context::PlanChange),
        Code::AlreadyCanceledSubscription
    );
    let mismatch = subscription_refusal(
        ActorError::Domain(SubscriptionError::CurrencyMismatch),
        Context::PlanChange,
    );
    assert_eq!(mismatch.code(), Code::Invalid);
    assert_eq!(
        subscription_refusal(ActorError::NotFound, Context::Cancellation).code(),
        Code::NotFound
    );
}

#[actix_web::test]
async fn toggling_over_the_limit_is_refused_with_when_to_retry() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let s = live_subscription(&app, org).await;
    let quota = app
        .settings
        .rate_limits
        .subscription_cancels_per_subscription;
    let mut refused = None;
    // Each cancel and uncancel that changes something counts; nothing else does.
    for i in 0..(2 * quota.requests + 2) {
        let answer = if i % 2 == 0 {
            cancel(&app, subject, s.id, CancelSubscription::at_period_end()).await
        } else {
            uncancel(&app, subject, s.id).await
        };
        if let Err(e) = answer {
            refused = Some((i, e));
            break;
        }
    }
    let (i, err) = refused.expect("refused once over the quota");
    assert_eq!(i, quota.requests, "the toggle after the quota is refused");
    assert_eq!(err.code(), Code::TooManyRequests);
    let crate::error::AppError::Limited(denied) = &err else {
        panic!("a rate-limit refusal carries its policy: {err:?}");
    };
    assert!(denied.retry_after_secs > 0);
    // Over HTTP: 429 with Retry-After, as before.
    let http = crate::error::ApiError::from(err);
    assert_eq!(http.code(), Code::TooManyRequests);
}
