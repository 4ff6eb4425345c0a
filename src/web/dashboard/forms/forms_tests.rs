//! The forms read what a seller types into commands: amounts in the currency's minor unit,
//! percentages in basis points, and what does not read named by its field.

use super::*;
use crate::app::testing::{app, seller};
use crate::domain::currency::Currency;
use crate::domain::discount::DiscountKind;
use crate::domain::product::{NewPrice, PriceKind, RecurringInterval};
use crate::domain::tax_settings::TaxBehaviorOption;
use crate::validate::Validator;

/// The kinds of the form's prices (their tax behaviour set aside).
fn kinds(prices: Option<Vec<NewPrice>>) -> Option<Vec<PriceKind>> {
    prices.map(|ps| ps.into_iter().map(|p| p.kind).collect())
}

#[test]
fn amounts_read_in_the_currencys_minor_unit_and_print_back() {
    let mut typed = Typed::default();
    assert_eq!(typed.amount("12.5", Currency::USD, "Price"), Some(1250));
    assert_eq!(typed.amount("9.99", Currency::USD, "Price"), Some(999));
    // Yen have no minor digits: 1200 typed is 1200 yen, and a fraction is no amount.
    assert_eq!(typed.amount("1200", Currency::JPY, "Price"), Some(1200));
    assert_eq!(typed.amount(" ", Currency::USD, "Price"), None);
    assert!(typed.0.is_empty());
    assert_eq!(typed.amount("12.5", Currency::JPY, "Price"), None);
    assert_eq!(typed.amount("19.999", Currency::USD, "Yearly price"), None);
    assert_eq!(
        typed.finish(Ok(())).unwrap_err().messages(),
        vec![
            "Price: Enter an amount like 19 or 19.99",
            "Yearly price: Enter an amount like 19 or 19.99"
        ]
    );
    assert_eq!(major_units(1250, Currency::USD), "12.50");
    assert_eq!(major_units(1500, Currency::JPY), "1500");
    assert_eq!(major_units(-5, Currency::USD), "-0.05");
}

#[test]
fn typed_values_read_or_are_named() {
    assert_eq!(basis_points("12.5"), Some(1250));
    assert_eq!(basis_points("100"), Some(10_000));
    assert_eq!(basis_points("0.05"), Some(5));
    assert_eq!(basis_points("12.345"), None);
    assert_eq!(basis_points("ten"), None);
    assert_eq!(text(" Pro "), Some("Pro".to_string()));
    assert_eq!(text("  "), None);
    assert!(ticked(&Some("on".into())) && !ticked(&None) && !ticked(&Some("false".into())));
    let mut typed = Typed::default();
    assert_eq!(typed.int(field!["usage"], "12", false), Some(12));
    assert_eq!(typed.int(field!["usage"], "", false), None);
    assert_eq!(typed.int(field!["usage"], "x1", false), None);
    assert_eq!(
        typed.finish(Ok(())).unwrap_err().messages(),
        vec!["usage: Input should be a valid integer, unable to parse string as an integer"]
    );
}

#[test]
fn slugs_from_names() {
    assert_eq!(slugify("  Acme Tools, Inc. "), "acme-tools-inc");
    assert_eq!(slugify("Élan"), "lan");
    assert_eq!(slugify("!!"), "");
}

#[test]
fn a_monthly_and_yearly_product_has_two_prices_in_cents() {
    let form = ProductForm {
        billing: "month_year".into(),
        amount: "15".into(),
        yearly_amount: "150.50".into(),
        ..ProductForm::default()
    };
    let (mut v, mut typed) = (Validator::new(), Typed::default());
    let code = Currency::DEFAULT.to_string();
    assert_eq!(
        kinds(form.prices(&mut v, &mut typed, Currency::USD)),
        Some(vec![
            PriceKind::RecurringFixed {
                interval: RecurringInterval::Month,
                currency: code.clone(),
                amount: 1500,
            },
            PriceKind::RecurringFixed {
                interval: RecurringInterval::Year,
                currency: code,
                amount: 15050,
            },
        ])
    );
    assert!(!v.has_errors() && typed.0.is_empty());
}

#[actix_web::test]
async fn a_product_form_is_refused_with_the_apis_problems_then_its_amounts_by_label() {
    let app = app().await;
    let (org, subject) = seller(&app).await;
    let form = ProductForm {
        name: "x".into(),
        amount: "abc".into(),
        ..ProductForm::default()
    };
    let err = create_product(&app, subject, org, &form).await.unwrap_err();
    assert_eq!(
        err.messages(),
        vec![
            "name: String should have at least 3 characters",
            "Price: Enter an amount like 19 or 19.99"
        ]
    );
    // Under the API's minimum: the API's rule, at the price's amount.
    let form = ProductForm {
        name: "Field Guide".into(),
        amount: "0.10".into(),
        ..ProductForm::default()
    };
    let err = create_product(&app, subject, org, &form).await.unwrap_err();
    assert_eq!(
        err.messages(),
        vec!["prices › 0 › price amount: Amount must be at least $0.50"]
    );
    let form = ProductForm {
        name: "Field Guide".into(),
        amount: "19.99".into(),
        ..form
    };
    let product = create_product(&app, subject, org, &form).await.unwrap();
    assert_eq!(product.prices.len(), 1);
    assert_eq!(
        product.prices[0].kind,
        PriceKind::OneTimeFixed {
            currency: Currency::DEFAULT.to_string(),
            amount: 1999,
        }
    );
}

#[actix_web::test]
async fn a_product_form_sets_the_same_prices_in_other_currencies() {
    let app = app().await;
    let (org, subject) = seller(&app).await;
    let form = ProductForm {
        name: "World Pro".into(),
        billing: "month_year".into(),
        amount: "10".into(),
        yearly_amount: "100".into(),
        other_prices: "EUR 9.00 90.00\nJPY 1500 15000".into(),
        ..ProductForm::default()
    };
    let product = create_product(&app, subject, org, &form).await.unwrap();
    let prices: Vec<(Currency, Option<i64>)> = product
        .prices
        .iter()
        .map(|p| (product.currency_of(p), p.kind.fixed_amount()))
        .collect();
    assert_eq!(
        prices,
        vec![
            (Currency::USD, Some(1000)),
            (Currency::USD, Some(10000)),
            (Currency::EUR, Some(900)),
            (Currency::EUR, Some(9000)),
            (Currency::JPY, Some(1500)),
            (Currency::JPY, Some(15000)),
        ]
    );
    // Each currency's bounds, at the price they belong to (¥80 at the least).
    let form = ProductForm {
        name: "Yen".into(),
        amount: "10".into(),
        other_prices: "JPY 79".into(),
        ..ProductForm::default()
    };
    let err = create_product(&app, subject, org, &form).await.unwrap_err();
    assert_eq!(
        err.messages(),
        vec!["prices › 1 › price amount: Amount must be at least ¥80"]
    );
    // The prices above in euros, without dollars: the organization's default is missing.
    let form = ProductForm {
        name: "Euro only".into(),
        currency: "EUR".into(),
        amount: "10".into(),
        ..ProductForm::default()
    };
    let err = create_product(&app, subject, org, &form).await.unwrap_err();
    assert_eq!(
        err.messages(),
        vec!["prices: The organization's default presentment currency must be present in the prices."]
    );
    let form = ProductForm {
        other_prices: "USD 11".into(),
        ..form
    };
    let product = create_product(&app, subject, org, &form).await.unwrap();
    assert_eq!(product.currencies(), vec![Currency::EUR, Currency::USD]);
    let form = ProductForm {
        other_prices: "EUR 11".into(),
        ..form
    };
    let err = create_product(&app, subject, org, &form).await.unwrap_err();
    assert_eq!(
        err.messages(),
        vec!["Prices in other currencies: EUR is the currency of the prices above"]
    );
}

#[actix_web::test]
async fn a_discount_form_reads_its_percentage_in_basis_points() {
    let app = app().await;
    let (org, subject) = seller(&app).await;
    let form = DiscountForm {
        name: "Spring".into(),
        percent: "12.5".into(),
        ..DiscountForm::default()
    };
    let discount = create_discount(&app, subject, org, &form).await.unwrap();
    assert_eq!(
        discount.kind,
        DiscountKind::Percentage { basis_points: 1250 }
    );
    let form = DiscountForm {
        percent: "12.345".into(),
        ..form
    };
    let err = create_discount(&app, subject, org, &form)
        .await
        .unwrap_err();
    assert_eq!(
        err.messages(),
        vec!["Percent off: Enter an amount like 19 or 19.99"]
    );
}

#[test]
fn seat_tiers_read_one_a_line_and_are_checked_by_the_apis_rules() {
    use crate::domain::product::{SeatTier, SeatTierType, SeatTiers};
    let form = ProductForm {
        billing: "year".into(),
        amount_type: "seat_based".into(),
        seat_tiers: "5+ 8.50\n\n 1 - 4   10 \n".into(),
        ..ProductForm::default()
    };
    let (mut v, mut typed) = (Validator::new(), Typed::default());
    let tiers = SeatTiers::new(
        SeatTierType::Volume,
        vec![
            SeatTier {
                min_seats: 1,
                max_seats: Some(4),
                price_per_seat: 1000,
            },
            SeatTier {
                min_seats: 5,
                max_seats: None,
                price_per_seat: 850,
            },
        ],
    )
    .unwrap();
    assert_eq!(
        kinds(form.prices(&mut v, &mut typed, Currency::USD)),
        Some(vec![PriceKind::RecurringSeatBased {
            interval: RecurringInterval::Year,
            currency: Currency::DEFAULT.to_string(),
            seat_tiers: tiers,
        }])
    );
    assert!(!v.has_errors() && typed.0.is_empty());

    // One count a tier ("3 9"), graduated, one-time.
    let form = ProductForm {
        amount_type: "seat_based".into(),
        seat_tier_type: "graduated".into(),
        seat_tiers: "3 9\n1-2 10".into(),
        ..ProductForm::default()
    };
    let (mut v, mut typed) = (Validator::new(), Typed::default());
    let Some(kinds) = kinds(form.prices(&mut v, &mut typed, Currency::USD)) else {
        panic!("{:?} {:?}", v.finish().err(), typed.0);
    };
    let PriceKind::OneTimeSeatBased { seat_tiers, .. } = &kinds[0] else {
        panic!("{kinds:?}");
    };
    assert_eq!(seat_tiers.tier_type, SeatTierType::Graduated);
    assert_eq!(seat_tiers.maximum_seats(), Some(3));
    assert_eq!(seat_tiers.amount(3), Some(2900));

    // A line that does not read is the form's problem (the API's rules are not asked);
    // tiers that read but overlap are the API's.
    for (lines, from_form) in [("1-4 ten", true), ("x 10", true), ("1-4 10\n4+ 8", false)] {
        let form = ProductForm {
            amount_type: "seat_based".into(),
            seat_tiers: lines.into(),
            ..ProductForm::default()
        };
        let (mut v, mut typed) = (Validator::new(), Typed::default());
        assert_eq!(
            form.prices(&mut v, &mut typed, Currency::USD),
            None,
            "{lines}"
        );
        assert_eq!(!typed.0.is_empty(), from_form, "{lines}");
        assert_eq!(v.has_errors(), !from_form, "{lines}");
    }
}

/// The product form's tax behaviour applies to each of its prices; empty is the
/// organization's default, and a value that is not a behaviour is refused at the price.
#[test]
fn the_product_forms_tax_behaviour_goes_on_each_price() {
    let form = |tax_behavior: &str| ProductForm {
        billing: "month_year".into(),
        amount: "15".into(),
        yearly_amount: "150".into(),
        tax_behavior: tax_behavior.into(),
        ..ProductForm::default()
    };
    let behaviours = |f: ProductForm| {
        let (mut v, mut typed) = (Validator::new(), Typed::default());
        f.prices(&mut v, &mut typed, Currency::USD)
            .map(|ps| ps.into_iter().map(|p| p.tax_behavior).collect::<Vec<_>>())
    };
    assert_eq!(behaviours(form("")), Some(vec![None, None]));
    let inclusive = Some(TaxBehaviorOption::Inclusive);
    assert_eq!(
        behaviours(form("inclusive")),
        Some(vec![inclusive, inclusive])
    );
    let (mut v, mut typed) = (Validator::new(), Typed::default());
    assert_eq!(
        form("gross").prices(&mut v, &mut typed, Currency::USD),
        None
    );
    assert_eq!(typed.0.len(), 1);
    assert_eq!(typed.0[0].path, field!["prices", 0, "tax_behavior"]);
    assert_eq!(typed.0[0].kind, "enum");
}
