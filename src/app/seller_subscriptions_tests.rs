//! A seller's free subscriptions, started and ended through the use cases (no HTTP server).

use super::*;
use crate::app::catalog::{benefits, customers};
use crate::app::testing;
use crate::auth::Subject;
use crate::domain::benefit::{BenefitProperties, LicenseKeyProperties, NewBenefit};
use crate::domain::currency::Currency;
use crate::domain::customer::NewCustomer;
use crate::domain::ids::{CustomerId, OrganizationId, PriceId, ProductId};
use crate::domain::metadata::Metadata;
use crate::domain::organization::Organization;
use crate::domain::product::{Price, RecurringInterval};
use crate::error::Code;
use tollgate_actors::license_key::KeyStatus;
use tollgate_actors::subscription::SubscriptionStatus;
use tollgate_storage::{Batch, Expect};

/// A monthly product of `org` at `amount` cents (`None`: free), granting `benefit_ids`.
async fn monthly(
    state: &AppState,
    org: OrganizationId,
    amount: Option<i64>,
    benefit_ids: Vec<crate::domain::ids::BenefitId>,
) -> Product {
    let now = state.now();
    let interval = RecurringInterval::Month;
    let kind = match amount {
        None => PriceKind::RecurringFree { interval },
        Some(amount) => PriceKind::RecurringFixed {
            interval,
            currency: crate::domain::currency::Currency::DEFAULT.to_string(),
            amount,
        },
    };
    let product = Product {
        id: ProductId::new(),
        organization_id: org,
        created_at: now,
        modified_at: None,
        name: "Team plan".into(),
        description: None,
        is_recurring: true,
        is_archived: false,
        is_tax_applicable: true,
        metadata: Default::default(),
        prices: vec![Price {
            id: PriceId::new(),
            created_at: now,
            modified_at: None,
            is_archived: false,
            kind,
        }],
        benefit_ids,
        media_ids: Vec::new(),
        attached_custom_fields: Vec::new(),
        recurring_interval_count: 1,
        trial: None,
        price_tax_behavior: Vec::new(),
        free_price_currency: Vec::new(),
    };
    let mut batch = Batch::new();
    batch.put(&product, Expect::Absent).expect("product");
    state.store.commit_durable(&batch).await.expect("seeded");
    product
}

async fn customer(state: &AppState, subject: Subject, external_id: &str) -> CustomerId {
    customers::create(
        state,
        subject,
        NewCustomer {
            organization_id: None,
            email: format!("{external_id}@example.com"),
            name: Some("Ada".into()),
            billing_address: None,
            tax_number: None,
            metadata: Metadata::default(),
            external_id: Some(external_id.into()),
        },
    )
    .await
    .expect("customer")
    .id
}

fn invalid_field(err: &AppError) -> (Vec<crate::error::Step>, String) {
    match err {
        AppError::Invalid(items) => (items[0].path.clone(), items[0].msg.clone()),
        other => panic!("not an invalid command: {other:?}"),
    }
}

#[actix_web::test]
async fn a_free_subscription_grants_its_keys_and_ends_with_them() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let benefit = benefits::create(
        &app,
        subject,
        NewBenefit {
            organization_id: None,
            description: "Team licence".into(),
            properties: BenefitProperties::LicenseKeys(LicenseKeyProperties::default()),
            metadata: Default::default(),
            visibility: Default::default(),
        },
    )
    .await
    .expect("benefit");
    let product = monthly(&app, org, None, vec![benefit.id]).await;
    customer(&app, subject, "ada-1").await;
    let s = create(
        &app,
        subject,
        NewSubscription {
            product_id: product.id,
            customer: Subscriber::External("ada-1".into()),
            metadata: Metadata::default(),
        },
    )
    .await
    .expect("started");
    assert_eq!(s.status, SubscriptionStatus::Active);
    assert!(s.checkout_id.is_none());
    assert_eq!(s.license_key_ids.len(), 1, "the benefit's key");
    let key_id = s.license_key_ids[0];
    let key = app
        .store
        .get::<LicenseKey>(&key_id.key())
        .await
        .unwrap()
        .expect("key written with the subscription");
    assert_eq!(key.value.status, KeyStatus::Granted);
    assert_eq!(key.value.subscription_id, Some(s.id));

    let ended = crate::app::subscription::revoke(&app, subject, s.id)
        .await
        .expect("revoked");
    assert!(ended.ended_at.is_some());
    let key = app
        .store
        .get::<LicenseKey>(&key_id.key())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(key.value.status, KeyStatus::Revoked, "its key goes with it");
    // Once ended, Polar's 403 AlreadyCanceledSubscription.
    let err = crate::app::subscription::revoke(&app, subject, s.id)
        .await
        .expect_err("already ended");
    assert_eq!(err.code(), Code::AlreadyCanceledSubscription);
}

#[actix_web::test]
async fn what_cannot_be_given_is_refused_on_its_field() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let (other_org, _) = testing::seller(&app).await;
    let paid = monthly(&app, org, Some(1900), Vec::new()).await;
    let free = monthly(&app, org, None, Vec::new()).await;
    let theirs = monthly(&app, other_org, None, Vec::new()).await;
    let ada = customer(&app, subject, "ada-2").await;
    let command = |product_id, customer| NewSubscription {
        product_id,
        customer,
        metadata: Metadata::default(),
    };

    let err = create(&app, subject, command(paid.id, Subscriber::Id(ada)))
        .await
        .expect_err("not free");
    assert_eq!(invalid_field(&err).0, field!["product_id"]);
    assert!(invalid_field(&err).1.starts_with("Product is not free."));

    // Another organization's product does not exist for this seller.
    let err = create(&app, subject, command(theirs.id, Subscriber::Id(ada)))
        .await
        .expect_err("not theirs");
    assert_eq!(
        invalid_field(&err),
        (field!["product_id"], NO_PRODUCT.into())
    );

    let err = create(
        &app,
        subject,
        command(free.id, Subscriber::Id(CustomerId::new())),
    )
    .await
    .expect_err("no such customer");
    assert_eq!(
        invalid_field(&err),
        (field!["customer_id"], NO_CUSTOMER.into())
    );
    let err = create(
        &app,
        subject,
        command(free.id, Subscriber::External("nobody".into())),
    )
    .await
    .expect_err("no such external customer");
    assert_eq!(
        invalid_field(&err),
        (field!["external_customer_id"], NO_CUSTOMER.into())
    );
}

#[actix_web::test]
async fn a_stranger_cannot_revoke() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let (_, stranger) = testing::seller(&app).await;
    let free = monthly(&app, org, None, Vec::new()).await;
    let ada = customer(&app, subject, "ada-3").await;
    let s = create(
        &app,
        subject,
        NewSubscription {
            product_id: free.id,
            customer: Subscriber::Id(ada),
            metadata: Metadata::default(),
        },
    )
    .await
    .expect("started");
    let err = crate::app::subscription::revoke(&app, stranger, s.id)
        .await
        .expect_err("not theirs");
    assert_eq!(err.code(), Code::NotFound);
}

/// Makes `currency` the default presentment currency of `org`.
async fn default_to(state: &AppState, org: OrganizationId, currency: Currency) {
    let mut o = state
        .store
        .get::<Organization>(&org.key())
        .await
        .unwrap()
        .expect("organization")
        .value;
    o.default_presentment_currency = currency;
    let mut batch = Batch::new();
    batch.put(&o, Expect::Any).expect("organization");
    state.store.commit_durable(&batch).await.expect("stored");
}

#[actix_web::test]
async fn a_free_subscription_is_in_the_organizations_default_currency() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let eur = Currency::parse("eur").expect("eur");
    default_to(&app, org, eur).await;
    customer(&app, subject, "ada-eur").await;
    let command = |product_id| NewSubscription {
        product_id,
        customer: Subscriber::External("ada-eur".into()),
        metadata: Metadata::default(),
    };
    // Free in dollars only: not on sale in euros (Polar's 422 on product_id).
    let usd_only = monthly(&app, org, None, Vec::new()).await;
    let err = create(&app, subject, command(usd_only.id))
        .await
        .expect_err("no euro price");
    assert_eq!(
        invalid_field(&err),
        (field!["product_id"], NO_PRICE_IN_CURRENCY.into())
    );
    // Free in euros: the subscription is in euros.
    let mut in_eur = monthly(&app, org, None, Vec::new()).await;
    in_eur.free_price_currency = vec![(in_eur.prices[0].id, eur)];
    let mut batch = Batch::new();
    batch.put(&in_eur, Expect::Any).expect("product");
    app.store.commit_durable(&batch).await.expect("stored");
    let s = create(&app, subject, command(in_eur.id))
        .await
        .expect("started");
    assert_eq!(s.currency.as_deref(), Some("eur"));
    assert_eq!(s.price_id, in_eur.prices[0].id);
}
