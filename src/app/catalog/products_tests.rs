//! The product use cases called with commands, without a server.

use super::*;
use crate::app::testing;
use crate::domain::product::{RecurringInterval, Trial};
use crate::error::{Code, Step};

fn one_time() -> NewProduct {
    NewProduct {
        organization_id: None,
        name: "Hammer".into(),
        description: None,
        prices_sent: Default::default(),
        prices: vec![PriceKind::OneTimeFixed {
            currency: crate::domain::currency::Currency::DEFAULT.into(),
            amount: 1000,
        }
        .into()],
        metadata: Default::default(),
        recurring_interval_count: 1,
        trial: None,
        medias: Vec::new(),
        attached_custom_fields: Vec::new(),
    }
}

fn paths(err: AppError) -> Vec<Vec<Step>> {
    assert_eq!(err.code(), Code::Invalid, "{err:?}");
    let AppError::Invalid(fields) = err else {
        panic!("an invalid command");
    };
    fields.into_iter().map(|f| f.path).collect()
}

#[actix_web::test]
async fn a_change_is_checked_against_the_stored_product() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let product = create(&app, subject, one_time()).await.unwrap();
    let kept = product.prices[0].id;

    // An unknown price, a new period length and a trial on a one-time product, in order.
    let change = ProductChange {
        prices: Some(vec![PriceChange::Keep(PriceId::new())]),
        recurring_interval_count: Some(2),
        trial: Some(Some(Trial {
            interval: RecurringInterval::Day,
            count: 7,
        })),
        ..Default::default()
    };
    let err = update(&app, subject, product.id, change).await.unwrap_err();
    assert_eq!(
        paths(err),
        vec![
            field!["prices", 0],
            field!["recurring_interval_count"],
            field!["trial_interval"],
            field!["trial_interval_count"],
        ]
    );

    // A resulting set of two one-time prices: pydantic's too_long with its three parameters.
    let change = ProductChange {
        prices: Some(vec![
            PriceChange::Keep(kept),
            PriceChange::Add(PriceKind::OneTimeFree.into()),
        ]),
        ..Default::default()
    };
    let err = update(&app, subject, product.id, change).await.unwrap_err();
    let AppError::Invalid(fields) = err else {
        panic!("an invalid command");
    };
    assert_eq!(fields[0].path, field!["prices"]);
    assert_eq!(fields[0].kind, "too_long");
    assert_eq!(fields[0].ctx.len(), 3);

    let err = update(&app, subject, ProductId::new(), ProductChange::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);

    let renamed = update(
        &app,
        subject,
        product.id,
        ProductChange {
            name: Some("Mallet".into()),
            prices: Some(vec![PriceChange::Keep(kept)]),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(renamed.name, "Mallet");
    assert_eq!(renamed.active_prices().count(), 1);
}

/// A price keeps the tax behaviour it chose: a new price has its own, one kept by id keeps
/// the one it had, and a price without one follows the organization's default (`None`).
#[actix_web::test]
async fn prices_keep_the_tax_behaviour_they_chose() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let mut new = one_time();
    new.prices[0].tax_behavior = Some(TaxBehaviorOption::Inclusive);
    let product = create(&app, subject, new).await.unwrap();
    let first = product.prices[0].id;
    assert_eq!(
        product.price_tax_behavior(first),
        Some(TaxBehaviorOption::Inclusive)
    );
    assert_eq!(
        price_tax_behavior(&app, product.id, first).await.unwrap(),
        Some(TaxBehaviorOption::Inclusive)
    );

    // Kept by id: unchanged. Replaced: the new price has its own (none here).
    let kept = update(
        &app,
        subject,
        product.id,
        ProductChange {
            prices: Some(vec![PriceChange::Keep(first)]),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        kept.price_tax_behavior(first),
        Some(TaxBehaviorOption::Inclusive)
    );
    let replaced = update(
        &app,
        subject,
        product.id,
        ProductChange {
            prices: Some(vec![PriceChange::Add(NewPrice {
                kind: PriceKind::OneTimeFree,
                currency: crate::domain::currency::Currency::DEFAULT,
                tax_behavior: Some(TaxBehaviorOption::Exclusive),
            })]),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let second = replaced.first_active_price().map(|p| p.id).unwrap();
    assert_ne!(second, first);
    assert_eq!(
        replaced.price_tax_behavior(second),
        Some(TaxBehaviorOption::Exclusive)
    );
    // The archived price still answers what it was sold at.
    assert_eq!(
        price_tax_behavior(&app, product.id, first).await.unwrap(),
        Some(TaxBehaviorOption::Inclusive)
    );
    let plain = create(&app, subject, one_time()).await.unwrap();
    assert_eq!(
        price_tax_behavior(&app, plain.id, plain.prices[0].id)
            .await
            .unwrap(),
        None
    );
}
