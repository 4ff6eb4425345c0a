//! Unit tests of the checkout use cases called with commands (no HTTP server): what they
//! refuse, as codes and command fields.

use super::*;
use crate::app::testing;
use crate::domain::ids::PriceId;
use crate::domain::product::{Price, PriceKind};
use tollgate_actors::checkout::{CheckoutTarget, CreateCheckout, CustomFieldInput};
use tollgate_storage::{Batch, Expect};

/// A one-time product of `org` at 10 dollars, stored.
async fn product(state: &AppState, org: OrganizationId) -> Product {
    let now = state.now();
    let product = Product {
        id: ProductId::new(),
        organization_id: org,
        created_at: now,
        modified_at: None,
        name: "Pro licence".into(),
        description: None,
        is_recurring: false,
        is_archived: false,
        is_tax_applicable: true,
        metadata: Default::default(),
        prices: vec![Price {
            id: PriceId::new(),
            created_at: now,
            modified_at: None,
            is_archived: false,
            kind: PriceKind::OneTimeFixed {
                currency: crate::api::checkout::DEFAULT_CURRENCY.into(),
                amount: 1000,
            },
        }],
        benefit_ids: Vec::new(),
        media_ids: Vec::new(),
        attached_custom_fields: Vec::new(),
        recurring_interval_count: 1,
        trial: None,
        price_tax_behavior: Vec::new(),
        free_price_currency: Vec::new(),
    };
    let mut batch = Batch::new();
    batch.put(&product, Expect::Absent).expect("product");
    state.store.commit_durable(&batch).await.expect("stored");
    product
}

/// Create a checkout for `target`, nothing else said.
fn command(target: CheckoutTarget) -> CreateCheckout {
    CreateCheckout {
        target,
        seats: None,
        min_seats: None,
        max_seats: None,
        amount: None,
        discount_id: None,
        allow_discount_codes: true,
        customer_id: None,
        customer_name: None,
        customer_email: None,
        customer_ip_address: None,
        customer_billing_address: None,
        customer_tax_id: None,
        is_business_customer: false,
        customer_billing_name: None,
        customer_metadata: Default::default(),
        metadata: Default::default(),
        custom_field_data: CustomFieldInput::empty(),
        subscription_id: None,
        success_url: None,
        embed_origin: None,
        expires_at: None,
        require_billing_address: false,
        allow_trial: true,
        external_customer_id: None,
        return_url: None,
        trial: None,
        currency: None,
        locale: None,
    }
}

fn paths(e: &AppError) -> Vec<Vec<Step>> {
    match e {
        AppError::Invalid(items) => items.iter().map(|i| i.path.clone()).collect(),
        other => panic!("expected invalid fields, got {other}"),
    }
}

#[actix_web::test]
async fn a_product_of_another_organization_is_an_invalid_product_id() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let (other, _) = testing::seller(&app).await;
    let theirs = product(&app, other).await;

    let err = create(&app, subject, command(CheckoutTarget::Product(theirs.id)))
        .await
        .expect_err("not the seller's product");
    assert_eq!(err.code(), Code::Invalid);
    assert_eq!(paths(&err), vec![field!["product_id"]]);

    // Every unknown reference of the command is reported, in the body's order.
    let (org, subject) = testing::seller(&app).await;
    let ours = product(&app, org).await;
    let mut cmd = command(CheckoutTarget::Products(vec![ours.id]));
    cmd.discount_id = Some(crate::domain::ids::DiscountId::new());
    cmd.customer_id = Some(CustomerId::new());
    let err = create(&app, subject, cmd)
        .await
        .expect_err("unknown references");
    assert_eq!(
        paths(&err),
        vec![field!["discount_id"], field!["customer_id"]]
    );
}

#[actix_web::test]
async fn an_expired_checkout_is_not_open_to_updates() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let ours = product(&app, org).await;
    let checkout = create(&app, subject, command(CheckoutTarget::Product(ours.id)))
        .await
        .expect("created");
    assert_eq!(checkout.product_id, ours.id);

    app.clock.advance(Duration::days(2));
    let err = update(&app, subject, checkout.id, ChangeCheckout::default())
        .await
        .expect_err("expired");
    assert_eq!(err.code(), Code::NotOpenCheckout);
    assert_eq!(
        err.detail(),
        format!("Checkout {} is not open: expired", checkout.id)
    );
}

#[actix_web::test]
async fn an_update_naming_what_does_not_exist_is_refused_by_command_fields() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let ours = product(&app, org).await;
    let (other, _) = testing::seller(&app).await;
    let theirs = product(&app, other).await;
    let checkout = create(&app, subject, command(CheckoutTarget::Product(ours.id)))
        .await
        .expect("created");

    // A product not in the checkout's list and an unknown discount: both reported, in the
    // body's order.
    let change = ChangeCheckout {
        product_id: Some(theirs.id),
        discount_id: Some(Some(crate::domain::ids::DiscountId::new())),
        ..ChangeCheckout::default()
    };
    let err = update(&app, subject, checkout.id, change)
        .await
        .expect_err("unknown references");
    assert_eq!(err.code(), Code::Invalid);
    assert_eq!(
        paths(&err),
        vec![field!["product_id"], field!["discount_id"]]
    );

    // The buyer's unknown code, where codes are allowed.
    let change = ChangeCheckout {
        discount_code: Some(Some("NOPE".into())),
        ..ChangeCheckout::default()
    };
    let secret = checkout.client_secret.clone();
    let err = update_as_buyer(&app, &secret, change)
        .await
        .expect_err("unknown code");
    assert_eq!(paths(&err), vec![field!["discount_code"]]);
}
