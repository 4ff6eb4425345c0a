//! The recovery link's use cases over a temporary store and a manual clock.

use chrono::Duration;
use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::portal::sign_in::session_of;
use crate::app::testing;
use crate::domain::customer::Customer;
use crate::domain::ids::CustomerId;

async fn customer(state: &AppState, org: OrganizationId, email: &str) -> Customer {
    let c = Customer::new(CustomerId::new(), org, email.into(), state.now());
    let mut batch = Batch::new();
    batch.put(&c, Expect::Absent).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
    c
}

/// A past-due subscription of `c` whose period ended an hour ago.
fn past_due(state: &AppState, c: &Customer) -> Subscription {
    let mut s = crate::api::subscription::sample_subscriptions().remove(0);
    s.id = SubscriptionId::new();
    s.organization_id = c.organization_id;
    s.customer_id = c.id;
    s.current_period_end = Some(state.now() - Duration::hours(1));
    s
}

async fn stored(state: &AppState, token: &str) -> Option<RecoveryLink> {
    state
        .store
        .get::<RecoveryLink>(&token_hash(state, token))
        .await
        .unwrap()
        .map(|l| l.value)
}

#[actix_web::test]
async fn a_link_opens_a_session_of_its_customer_once() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let c = customer(&app, org, "ada@example.com").await;
    let s = past_due(&app, &c);
    let until = app.now() + Duration::days(2);
    let mail = MailMessageId(uuid::Uuid::new_v4());
    let token = issue(&app, mail, &s, until).await.unwrap();
    assert_eq!(token.len(), TOKEN_LENGTH);
    let link = stored(&app, &token).await.expect("stored by its hash");
    assert_eq!(
        (link.customer_id, link.subscription_id, link.expires_at),
        (c.id, s.id, until)
    );
    assert_eq!(link.used_at, None);

    let r = open(&app, org, &token).await.unwrap();
    assert_eq!(r.subscription_id, s.id);
    let (session, who) = session_of(&app, &r.opened.token)
        .await
        .unwrap()
        .expect("a live session");
    assert_eq!(who.id, c.id);
    assert!(!session.is_limited(), "a full portal session");
    assert_eq!(
        stored(&app, &token).await.unwrap().used_at,
        Some(app.now()),
        "used"
    );

    // Twice: refused, and no other session.
    let err = open(&app, org, &token).await.unwrap_err();
    assert_eq!(err.code(), Code::Unauthorized);
    assert_eq!(err.detail(), "This link has expired or was already used.");
}

#[actix_web::test]
async fn the_same_message_makes_the_same_link_and_a_replay_never_revives_a_used_one() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let c = customer(&app, org, "ada@example.com").await;
    let s = past_due(&app, &c);
    let until = app.now() + Duration::days(2);
    let mail = MailMessageId(uuid::Uuid::new_v4());
    let token = issue(&app, mail, &s, until).await.unwrap();
    assert_eq!(token, token_of(&app, mail), "derived from the message");
    let other = token_of(&app, MailMessageId(uuid::Uuid::new_v4()));
    assert_ne!(token, other, "another message, another link");
    open(&app, org, &token).await.unwrap();

    // The fan-out decides the message again: the same link, still used.
    assert_eq!(issue(&app, mail, &s, until).await.unwrap(), token);
    assert!(stored(&app, &token).await.unwrap().used_at.is_some());
    assert_eq!(
        open(&app, org, &token).await.unwrap_err().code(),
        Code::Unauthorized
    );
}

#[actix_web::test]
async fn an_expired_tampered_foreign_or_orphaned_link_is_refused_and_left_unused() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let (other_org, _) = testing::seller(&app).await;
    let c = customer(&app, org, "ada@example.com").await;
    let s = past_due(&app, &c);
    let until = app.now() + Duration::days(2);
    let token = issue(&app, MailMessageId(uuid::Uuid::new_v4()), &s, until)
        .await
        .unwrap();

    // Another organization's portal.
    assert_eq!(
        open(&app, other_org, &token).await.unwrap_err().code(),
        Code::Unauthorized
    );
    // One character changed; cut short; not a token at all.
    let mut tampered = token.clone().into_bytes();
    tampered[0] = if tampered[0] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    for bad in [tampered.as_str(), &token[..20], "", "../../etc/passwd"] {
        assert_eq!(
            open(&app, org, bad).await.unwrap_err().code(),
            Code::Unauthorized,
            "{bad}"
        );
    }
    assert_eq!(stored(&app, &token).await.unwrap().used_at, None);

    // Past its day.
    app.clock.set(until);
    assert_eq!(
        open(&app, org, &token).await.unwrap_err().code(),
        Code::Unauthorized
    );
    app.clock.set(until - Duration::seconds(1));
    // A customer deleted meanwhile signs in no more.
    let mut gone = c.clone();
    gone.deleted_at = Some(app.now());
    let mut batch = Batch::new();
    batch.put(&gone, Expect::Any).unwrap();
    app.store.commit_durable(&batch).await.unwrap();
    assert_eq!(
        open(&app, org, &token).await.unwrap_err().code(),
        Code::Unauthorized
    );
    assert_eq!(stored(&app, &token).await.unwrap().used_at, None);
}

#[actix_web::test]
async fn access_stops_when_the_keys_grace_ends_else_when_dunning_gives_up() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let c = customer(&app, org, "ada@example.com").await;
    let s = past_due(&app, &c);
    let end = s.current_period_end.unwrap();
    let grace = end + Duration::days(3);
    assert_eq!(access_stops(&s, Some(grace), app.now()), grace);
    assert_eq!(access_stops(&s, None, app.now()), end + DUNNING_PERIOD);
    // A retry after the grace: the keys stopped already, the link lives until dunning ends.
    assert_eq!(
        access_stops(&s, Some(grace), grace + Duration::minutes(1)),
        end + DUNNING_PERIOD
    );
    assert_eq!(
        url(&app, "acme", "T"),
        format!(
            "{}/portal/acme/recover/T",
            app.public_url.trim_end_matches('/')
        )
    );
}
