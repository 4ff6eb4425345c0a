//! The customer use cases called directly, with commands (no HTTP server).

use super::*;
use crate::app::testing;
use crate::domain::metadata::Metadata;
use crate::error::Code;

fn new_customer(email: &str, external_id: Option<&str>) -> NewCustomer {
    NewCustomer {
        organization_id: None,
        email: email.into(),
        name: Some("Ada".into()),
        billing_address: None,
        tax_number: None,
        metadata: Metadata::default(),
        external_id: external_id.map(str::to_string),
    }
}

fn paths(err: &AppError) -> Vec<Vec<crate::error::Step>> {
    match err {
        AppError::Invalid(items) => items.iter().map(|i| i.path.clone()).collect(),
        other => panic!("not invalid fields: {other:?}"),
    }
}

#[actix_web::test]
async fn a_customer_of_another_organization_is_not_found() {
    let app = testing::app().await;
    let (_, seller) = testing::seller(&app).await;
    let (_, stranger) = testing::seller(&app).await;
    let customer = create(&app, seller, new_customer("ada@example.com", Some("ada-1")))
        .await
        .expect("created");
    let err = get(&app, stranger, customer.id)
        .await
        .expect_err("not theirs");
    assert_eq!(err.code(), Code::NotFound);
    let err = update(&app, stranger, customer.id, CustomerChange::default())
        .await
        .expect_err("not theirs");
    assert_eq!(err.code(), Code::NotFound);
    let err = delete(&app, stranger, customer.id)
        .await
        .expect_err("not theirs");
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(
        get_external(&app, seller, "ada-1").await.expect("found").id,
        customer.id
    );
}

#[actix_web::test]
async fn taken_address_and_external_id_are_both_reported() {
    let app = testing::app().await;
    let (_, seller) = testing::seller(&app).await;
    create(&app, seller, new_customer("ada@example.com", Some("ada-1")))
        .await
        .expect("created");
    let err = create(&app, seller, new_customer("ada@example.com", Some("ada-1")))
        .await
        .expect_err("both taken");
    assert_eq!(paths(&err), vec![field!["email"], field!["external_id"]]);
    // A tax number needs a country.
    let mut taxed = new_customer("bob@example.com", None);
    taxed.tax_number = Some("FR61954506077".into());
    let err = create(&app, seller, taxed).await.expect_err("no address");
    assert_eq!(paths(&err), vec![field!["billing_address"]]);
}

#[actix_web::test]
async fn an_external_id_once_set_stays() {
    let app = testing::app().await;
    let (_, seller) = testing::seller(&app).await;
    let customer = create(&app, seller, new_customer("ada@example.com", Some("ada-1")))
        .await
        .expect("created");
    let change = CustomerChange {
        external_id: Some(Some("ada-2".into())),
        ..CustomerChange::default()
    };
    let err = update(&app, seller, customer.id, change)
        .await
        .expect_err("set already");
    assert_eq!(paths(&err), vec![field!["external_id"]]);
}

#[actix_web::test]
async fn creating_needs_a_reachable_organization() {
    let app = testing::app().await;
    let (_, seller) = testing::seller(&app).await;
    let (other, _) = testing::seller(&app).await;
    let mut elsewhere = new_customer("ada@example.com", None);
    elsewhere.organization_id = Some(other);
    let err = create(&app, seller, elsewhere)
        .await
        .expect_err("not reached");
    assert_eq!(paths(&err), vec![field!["organization_id"]]);
    let err = create(
        &app,
        Subject::Anonymous,
        new_customer("ada@example.com", None),
    )
    .await
    .expect_err("no one");
    assert_eq!(err.code(), Code::Unauthorized);
}
