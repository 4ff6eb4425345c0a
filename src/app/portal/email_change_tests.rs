//! The e-mail change called with commands: the code goes to the new address only, works
//! once and for a while, and the change ends the customer's other sessions.

use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::testing;
use crate::domain::ids::{CustomerId, OrganizationId};
use crate::domain::mail::MailMessage;

async fn customer(state: &AppState, org: OrganizationId, email: &str) -> Customer {
    let c = Customer::new(CustomerId::new(), org, email.into(), state.now());
    let mut batch = Batch::new();
    batch.put(&c, Expect::Absent).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
    c
}

async fn mails_to(state: &AppState, to: &str) -> Vec<MailMessage> {
    let mut all: Vec<MailMessage> = state
        .store
        .scan::<MailMessage>()
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.value)
        .filter(|m| m.to == to)
        .collect();
    all.sort_by_key(|m| m.created_at);
    all
}

/// The code of the last message to `to`.
async fn code_sent_to(state: &AppState, to: &str) -> String {
    let mails = mails_to(state, to).await;
    let text = &mails.last().expect("a message").text;
    text.split_whitespace()
        .find(|w| w.len() == EmailChange::LENGTH && well_formed(w))
        .unwrap_or_else(|| panic!("no code in {text}"))
        .to_string()
}

async fn session(state: &AppState, c: &Customer) -> CustomerSession {
    let opened = new_session(state, c);
    let mut batch = Batch::new();
    batch.put(&opened.session, Expect::Absent).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
    opened.session
}

async fn stored<R: tollgate_storage::Record>(state: &AppState, key: &[u8]) -> Option<R> {
    state.store.get::<R>(key).await.unwrap().map(|s| s.value)
}

#[actix_web::test]
async fn the_code_goes_to_the_new_address_and_changes_it_once() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let ada = customer(&app, org, "ada@example.com").await;
    let old_session = session(&app, &ada).await;
    request(&app, &ada, "Ada@New.example").await.unwrap();
    let code = code_sent_to(&app, "ada@new.example").await;
    assert!(
        mails_to(&app, "ada@example.com").await.is_empty(),
        "nothing to the old address yet"
    );
    assert!(check(&app, &code).await.unwrap());
    assert!(!check(&app, "ZZZZZZZZ").await.unwrap());
    // Nothing changed before the code is typed.
    let c: Customer = stored(&app, &ada.id.key()).await.unwrap();
    assert_eq!(c.email, "ada@example.com");

    let e = verify(&app, "ZZZZZZZZ", None).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidCustomerEmailUpdate);
    // Typed on another buyer's page: refused, and still good for its owner.
    let e = verify(&app, &code, Some(CustomerId::new()))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidCustomerEmailUpdate);
    let (opened, changed) = verify(&app, &code.to_lowercase(), Some(ada.id))
        .await
        .unwrap();
    assert_eq!(changed.email, "ada@new.example");
    assert!(changed.email_verified);
    let c: Customer = stored(&app, &ada.id.key()).await.unwrap();
    assert_eq!(c.email, "ada@new.example");
    // The old session ended, the new one is live; the old address was told.
    assert!(stored::<CustomerSession>(&app, &old_session.id.key())
        .await
        .is_none());
    assert!(stored::<CustomerSession>(&app, &opened.session.id.key())
        .await
        .is_some());
    let told = mails_to(&app, "ada@example.com").await;
    assert_eq!(told.len(), 1);
    assert!(told[0].text.contains("ada@new.example"), "{}", told[0].text);
    // Used: no more.
    assert_eq!(
        verify(&app, &code, None).await.unwrap_err().code(),
        Code::InvalidCustomerEmailUpdate
    );
}

#[actix_web::test]
async fn an_expired_code_a_taken_address_and_the_same_address_are_refused() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let ada = customer(&app, org, "ada@example.com").await;
    let e = request(&app, &ada, "ADA@example.com").await.unwrap_err();
    assert_eq!(
        e.messages(),
        vec!["email: New email is the same as your current email."]
    );

    request(&app, &ada, "late@example.com").await.unwrap();
    let late = code_sent_to(&app, "late@example.com").await;
    app.clock
        .advance(EmailChange::TTL + chrono::Duration::seconds(1));
    assert!(!check(&app, &late).await.unwrap());
    assert_eq!(
        verify(&app, &late, None).await.unwrap_err().code(),
        Code::InvalidCustomerEmailUpdate
    );

    request(&app, &ada, "bob@example.com").await.unwrap();
    let code = code_sent_to(&app, "bob@example.com").await;
    // Bob became a customer meanwhile: the address is his.
    customer(&app, org, "bob@example.com").await;
    let e = verify(&app, &code, None).await.unwrap_err();
    assert_eq!(e.code(), Code::Invalid);
    assert_eq!(
        e.messages(),
        vec!["token: This email address is already in use."]
    );
    let c: Customer = stored(&app, &ada.id.key()).await.unwrap();
    assert_eq!(c.email, "ada@example.com", "unchanged");
    // The code is spent.
    assert_eq!(
        verify(&app, &code, None).await.unwrap_err().code(),
        Code::InvalidCustomerEmailUpdate
    );
}

#[actix_web::test]
async fn a_new_request_replaces_the_earlier_code() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let ada = customer(&app, org, "ada@example.com").await;
    request(&app, &ada, "one@example.com").await.unwrap();
    let first = code_sent_to(&app, "one@example.com").await;
    request(&app, &ada, "two@example.com").await.unwrap();
    assert!(!check(&app, &first).await.unwrap());
    let second = code_sent_to(&app, "two@example.com").await;
    let (_, c) = verify(&app, &second, None).await.unwrap();
    assert_eq!(c.email, "two@example.com");
}
