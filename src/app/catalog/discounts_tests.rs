//! The discount use cases called with commands, without a server.

use chrono::Duration;

use super::*;
use crate::app::testing;
use crate::domain::currency::Currency;
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
        other_amounts: Vec::new(),
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

/// A change of `amounts` replaces them all; the deprecated `amount` keeps the first
/// currency; once redeemed, neither may change (nor the months), while the same values
/// pass.
#[actix_web::test]
async fn amounts_change_until_the_first_redemption() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let mut new = ten_off("MULTI");
    new.other_amounts = vec![(Currency::EUR, 900)];
    new.duration = DiscountDuration::Repeating { months: 3 };
    let d = create(&app, subject, new).await.unwrap();
    assert_eq!(
        d.fixed_amounts(),
        vec![(Currency::DEFAULT, 1000), (Currency::EUR, 900)]
    );

    let amounts = vec![(Currency::EUR, 800), (Currency::JPY, 1200)];
    let change = DiscountChange {
        amounts: Some(amounts.clone()),
        ..Default::default()
    };
    let d = update(&app, subject, d.id, change).await.unwrap();
    assert_eq!(d.fixed_amounts(), amounts);

    let change = DiscountChange {
        amount: Some(700),
        ..Default::default()
    };
    let d = update(&app, subject, d.id, change).await.unwrap();
    assert_eq!(d.fixed_amounts(), vec![(Currency::EUR, 700)]);

    app.store
        .update::<Discount, AppError>(&d.id.key(), async |current| {
            let mut redeemed = current.clone();
            redeemed.record_redemption();
            Ok(Some(redeemed))
        })
        .await
        .unwrap();
    let refused = [
        (
            DiscountChange {
                amounts: Some(vec![(Currency::EUR, 600)]),
                ..Default::default()
            },
            field!["amounts"],
        ),
        (
            DiscountChange {
                amount: Some(600),
                ..Default::default()
            },
            field!["amount"],
        ),
        (
            DiscountChange {
                currency: Some(Currency::JPY),
                ..Default::default()
            },
            field!["currency"],
        ),
        (
            DiscountChange {
                duration_in_months: Some(4),
                ..Default::default()
            },
            field!["duration_in_months"],
        ),
    ];
    for (change, path) in refused {
        let err = update(&app, subject, d.id, change).await.unwrap_err();
        assert_eq!(paths(err), vec![path]);
    }
    let same = DiscountChange {
        amount: Some(700),
        currency: Some(Currency::EUR),
        duration_in_months: Some(3),
        name: Some("Renamed".into()),
        ..Default::default()
    };
    let d = update(&app, subject, d.id, same).await.unwrap();
    assert_eq!(d.name, "Renamed");
    assert_eq!(d.fixed_amounts(), vec![(Currency::EUR, 700)]);
}
