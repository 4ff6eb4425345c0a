//! The discount use cases called with commands, without a server.

use chrono::Duration;

use super::*;
use crate::app::testing;
use crate::domain::discount::DiscountType;
use crate::error::{Code, Step};

fn ten_off(code: &str) -> NewDiscount {
    NewDiscount {
        organization_id: None,
        name: "Ten off".into(),
        code: Some(code.into()),
        kind: DiscountKind::Fixed {
            amount: 1000,
            currency: crate::domain::currency::Currency::DEFAULT.into(),
        },
        duration: DiscountDuration::Once,
        starts_at: None,
        ends_at: None,
        max_redemptions: None,
        products: Vec::new(),
        metadata: Default::default(),
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
async fn codes_types_and_dates_are_checked_against_the_store() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let discount = create(&app, subject, ten_off("TENOFF")).await.unwrap();

    let err = create(&app, subject, ten_off("tenoff")).await.unwrap_err();
    assert_eq!(paths(err), vec![field!["code"]]);

    let err = create(
        &app,
        subject,
        NewDiscount {
            products: vec![ProductId::new()],
            ..ten_off("OTHER")
        },
    )
    .await
    .unwrap_err();
    assert_eq!(paths(err), vec![field!["products", 0]]);

    let change = DiscountChange {
        kind: Some(DiscountType::Percentage),
        ..Default::default()
    };
    let err = update(&app, subject, discount.id, change)
        .await
        .unwrap_err();
    assert_eq!(paths(err), vec![field!["type"]]);

    // The dates rule holds for the dates a change leaves: a rule on the whole command.
    let now = app.now();
    let starts = DiscountChange {
        starts_at: Some(Some(now + Duration::days(5))),
        ..Default::default()
    };
    update(&app, subject, discount.id, starts).await.unwrap();
    let ends = DiscountChange {
        ends_at: Some(Some(now)),
        ..Default::default()
    };
    let err = update(&app, subject, discount.id, ends).await.unwrap_err();
    assert_eq!(paths(err), vec![Vec::<Step>::new()]);

    let (_, stranger) = testing::seller(&app).await;
    let err = get(&app, stranger, discount.id).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
}
