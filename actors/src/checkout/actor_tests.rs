//! The checkout actor through the registry, over a temporary store: settlements apply to
//! the payment attempt they were decided on.

use std::time::Duration;

use chrono::Duration as Span;
use tollgate_storage::{Batch, Expect, StorageError, Store};

use super::*;
use crate::checkout::decide::tests::{create, ctx, fixed, ready, t0};
use crate::checkout::CheckoutStatus;
use crate::clock::SystemClock;
use crate::domain::ids::CheckoutId;
use crate::registry::{Registry, RegistryConfig};
use crate::testkit::ready as done;

/// Checkouts over `store`; `shared`: as a node on a shared database runs them (freshness
/// checks on).
fn registry_over(store: &Store, shared: bool) -> Registry<CheckoutEntity> {
    let config = RegistryConfig {
        arbiters: 2,
        mailbox_capacity: 1024,
        send_timeout: Duration::from_secs(30),
        idle_timeout: None,
        write_back: None,
        check_freshness: shared,
    };
    Registry::start(store.clone(), SystemClock::shared(), config).unwrap()
}

fn registry() -> (Registry<CheckoutEntity>, Store) {
    let store = Store::temporary().unwrap();
    (registry_over(&store, false), store)
}

/// A checkout confirmed once (`first`), declined, and confirmed again (`second`, stored).
fn confirmed_twice(store: &Store) -> (Checkout, Checkout) {
    let (first, second) = two_attempts();
    let mut batch = Batch::new();
    batch.put(&second, Expect::Absent).unwrap();
    done(store.commit(&batch)).unwrap();
    (first, second)
}

/// [`confirmed_twice`] on any store.
async fn confirmed_twice_on(store: &Store) -> (Checkout, Checkout) {
    let (first, second) = two_attempts();
    let mut batch = Batch::new();
    batch.put(&second, Expect::Absent).unwrap();
    store.commit(&batch).await.unwrap();
    (first, second)
}

fn two_attempts() -> (Checkout, Checkout) {
    let mut open = create(fixed(1000));
    open.id = CheckoutId::new();
    open.client_secret = format!("secret_{}", open.id);
    let first = open
        .confirm(ready(), ctx(Some("pm_1")), t0(), None)
        .unwrap();
    let again = t0() + Span::seconds(5);
    let second = first
        .reopen(again)
        .unwrap()
        .confirm(ready(), ctx(Some("pm_2")), again, None)
        .unwrap();
    (first, second)
}

fn settle(settlement: Settlement, attempt: Attempt) -> SettleCheckout {
    SettleCheckout {
        settlement,
        attempt,
        build: Box::new(|_: &Checkout| Ok(Batch::new())),
    }
}

async fn stored(store: &Store, id: CheckoutId) -> Stored<Checkout> {
    store.get::<Checkout>(&id.key()).await.unwrap().unwrap()
}

#[actix::test]
async fn a_decline_of_an_earlier_attempt_leaves_the_current_one_alone() {
    let (registry, store) = registry();
    let (first, second) = confirmed_twice(&store);
    // A node that read the first attempt before asking the processor comes back with its
    // decline while the buyer's second attempt is under way.
    let stale = registry
        .call(second.id, settle(Settlement::Reopen, first.attempt()))
        .await;
    assert!(
        matches!(stale, Err(ActorError::Domain(CheckoutError::Superseded))),
        "{stale:?}"
    );
    let kept = stored(&store, second.id).await;
    assert_eq!(
        (kept.rev, kept.value.status),
        (1, CheckoutStatus::Confirmed)
    );
    // Nor does that attempt's intent progress land on this one.
    let progress = Settlement::AwaitPayment {
        intent: "pi_first".into(),
        status: "processing".into(),
        client_secret: None,
    };
    let stale = registry
        .call(second.id, settle(progress, first.attempt()))
        .await;
    assert!(matches!(
        stale,
        Err(ActorError::Domain(CheckoutError::Superseded))
    ));
    assert_eq!(stored(&store, second.id).await.rev, 1);
    // The current attempt's decline reopens it.
    let reopened = registry
        .call(second.id, settle(Settlement::Reopen, second.attempt()))
        .await
        .unwrap();
    assert_eq!(reopened.status, CheckoutStatus::Open);
    let kept = stored(&store, second.id).await;
    assert_eq!((kept.rev, kept.value.status), (2, CheckoutStatus::Open));
}

#[actix::test]
async fn concurrent_answers_about_one_attempt_settle_it_once_and_a_success_always_lands() {
    let (registry, store) = registry();
    let (first, second) = confirmed_twice(&store);
    // The confirm's own answer and a sweep's answer for the same attempt, at once: the
    // first to land reopens it; the other finds it no longer confirmed.
    let (a, b) = tokio::join!(
        registry.call(second.id, settle(Settlement::Reopen, second.attempt())),
        registry.call(second.id, settle(Settlement::Reopen, second.attempt())),
    );
    let refused = [&a, &b]
        .iter()
        .filter(|r| {
            matches!(
                r,
                Err(ActorError::Domain(CheckoutError::WrongStatus { .. }))
            )
        })
        .count();
    assert_eq!((a.is_ok() as usize + b.is_ok() as usize, refused), (1, 1));
    assert_eq!(stored(&store, second.id).await.rev, 2);

    // Money taken is never refused for being of an earlier attempt.
    let (_, other) = confirmed_twice(&store);
    let paid = registry
        .call(
            other.id,
            settle(
                Settlement::Succeeded {
                    intent: Some("pi_paid".into()),
                    subscription: None,
                },
                first.attempt(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(paid.status, CheckoutStatus::Succeeded);
    assert_eq!(
        stored(&store, other.id).await.value.status,
        CheckoutStatus::Succeeded
    );
}

/// On a shared database (PostgreSQL), commands that queue behind a write are decided and
/// written together; one command whose write is refused must not take the others' answers
/// with it.
#[actix::test]
async fn a_refused_write_in_a_group_fails_only_its_own_command() {
    let Some(schema) = tollgate_storage::testing::fresh_schema("grouped_refusal") else {
        return;
    };
    let store = Store::postgres(&schema.url, &schema.schema, 8)
        .await
        .expect("reaching the test database");
    let registry = registry_over(&store, true);
    let (_, checkout) = confirmed_twice_on(&store).await;
    // A record of another collection that the refused command claims to create.
    let taken = crate::license_key::actor::tests::new_key(None, None);
    let mut batch = Batch::new();
    batch.put(&taken, Expect::Absent).unwrap();
    store.commit(&batch).await.unwrap();

    for round in 0..5 {
        let intent = format!("pi_{round}");
        let progress = Settlement::AwaitPayment {
            intent: intent.clone(),
            status: "processing".into(),
            client_secret: None,
        };
        let current = stored(&store, checkout.id).await.value.attempt();
        let claim = taken.clone();
        let refused = SettleCheckout {
            settlement: Settlement::AwaitPayment {
                intent,
                status: "requires_action".into(),
                client_secret: None,
            },
            attempt: current.clone(),
            build: Box::new(move |_: &Checkout| {
                let mut b = Batch::new();
                b.put(&claim, Expect::Absent)?;
                Ok(b)
            }),
        };
        // A write in flight, then readers, the refused command and more readers queued
        // behind it (the command at fault in the middle of its group).
        let reads = || {
            futures_util::future::join_all((0..3).map(|_| registry.call(checkout.id, GetCheckout)))
        };
        let (first, before, bad, after) = tokio::join!(
            registry.call(checkout.id, settle(progress, current)),
            reads(),
            registry.call(checkout.id, refused),
            reads(),
        );
        first.unwrap();
        assert!(
            matches!(bad, Err(ActorError::Storage(StorageError::Conflict { .. }))),
            "{bad:?}"
        );
        for read in before.into_iter().chain(after) {
            assert_eq!(read.unwrap().status, CheckoutStatus::Confirmed);
        }
    }
}
