//! The buyer's billing details called with commands.

use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::testing;
use crate::domain::customer::Address;
use crate::domain::ids::{CustomerId, OrganizationId};
use crate::domain::payment_method::{AddPaymentMethod, SetupAnswer};

async fn customer(state: &AppState, org: OrganizationId, email: &str) -> Customer {
    let c = Customer::new(CustomerId::new(), org, email.into(), state.now());
    let mut batch = Batch::new();
    batch.put(&c, Expect::Absent).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
    c
}

fn address(country: &str) -> Address {
    Address::new(
        Some("1 rue de Rivoli"),
        None,
        Some("75001"),
        Some("Paris"),
        None,
        country,
    )
    .unwrap()
}

async fn card(state: &AppState, c: &Customer) -> PaymentMethodId {
    let added = crate::app::payment_methods::add(
        state,
        c,
        AddPaymentMethod {
            token: "tok_visa".into(),
            set_default: false,
            return_url: "https://example.com/portal".into(),
        },
    )
    .await
    .unwrap();
    match added {
        SetupAnswer::Saved(m) => m.id,
        other => panic!("not saved: {other:?}"),
    }
}

#[actix_web::test]
async fn the_name_address_and_tax_id_are_set_together() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let ada = customer(&app, org, "ada@example.com").await;
    let change = PortalCustomerUpdate {
        billing_name: Some("ACME SAS".into()),
        billing_address: Some(address("FR")),
        tax_id: Some(Some("FR61954506077".into())),
        default_payment_method_id: None,
    };
    let c = update_me(&app, &ada, change).await.unwrap();
    assert_eq!(c.billing_name.as_deref(), Some("ACME SAS"));
    assert_eq!(
        c.billing_address.as_ref().map(|a| a.country.as_str()),
        Some("FR")
    );
    assert_eq!(
        c.tax_id.as_ref().map(|t| t.value.as_str()),
        Some("FR61954506077")
    );
    assert!(c.modified_at.is_some());
    // Nothing asked: nothing written.
    let again = update_me(&app, &c, PortalCustomerUpdate::default())
        .await
        .unwrap();
    assert_eq!(again, c);
    // Clearing the tax id.
    let cleared = PortalCustomerUpdate {
        tax_id: Some(None),
        ..PortalCustomerUpdate::default()
    };
    assert_eq!(update_me(&app, &c, cleared).await.unwrap().tax_id, None);
}

#[actix_web::test]
async fn a_tax_id_is_checked_against_the_resulting_country() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let ada = customer(&app, org, "ada@example.com").await;
    let no_country = PortalCustomerUpdate {
        tax_id: Some(Some("FR61954506077".into())),
        ..PortalCustomerUpdate::default()
    };
    let e = update_me(&app, &ada, no_country).await.unwrap_err();
    assert_eq!(
        e.messages(),
        vec!["billing address: Country is required to validate tax ID."]
    );
    let held = update_me(
        &app,
        &ada,
        PortalCustomerUpdate {
            billing_address: Some(address("FR")),
            tax_id: Some(Some("FR61954506077".into())),
            ..PortalCustomerUpdate::default()
        },
    )
    .await
    .unwrap();
    // A new country re-checks the tax id held: a French VAT number is not American.
    let moved = PortalCustomerUpdate {
        billing_address: Some(address("US")),
        ..PortalCustomerUpdate::default()
    };
    let e = update_me(&app, &held, moved).await.unwrap_err();
    assert_eq!(e.messages(), vec!["tax id: Invalid tax ID."]);
    let stored = app
        .store
        .get::<Customer>(&ada.id.key())
        .await
        .unwrap()
        .unwrap()
        .value;
    assert_eq!(stored.billing_address, held.billing_address, "unchanged");
}

#[actix_web::test]
async fn the_default_card_must_be_the_customer_s() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let ada = customer(&app, org, "ada@example.com").await;
    let bob = customer(&app, org, "bob@example.com").await;
    let bobs = card(&app, &bob).await;
    let e = update_me(
        &app,
        &ada,
        PortalCustomerUpdate {
            billing_name: Some("Ada".into()),
            default_payment_method_id: Some(bobs),
            ..PortalCustomerUpdate::default()
        },
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), Code::Invalid);
    assert_eq!(
        e.messages(),
        vec!["default payment method id: Payment method not found."]
    );
    let stored = app
        .store
        .get::<Customer>(&ada.id.key())
        .await
        .unwrap()
        .unwrap()
        .value;
    assert_eq!(stored.billing_name, None, "nothing written");
    let adas = card(&app, &ada).await;
    let c = update_me(
        &app,
        &ada,
        PortalCustomerUpdate {
            default_payment_method_id: Some(adas),
            ..PortalCustomerUpdate::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(c.default_payment_method_id, Some(adas));
}
