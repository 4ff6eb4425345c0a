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
        prices: vec![PriceKind::OneTimeFixed {
            currency: crate::domain::currency::Currency::DEFAULT.into(),
            amount: 1000,
        }],
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
            PriceChange::Add(PriceKind::OneTimeFree),
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
