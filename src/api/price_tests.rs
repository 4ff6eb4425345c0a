//! Unit tests of `price.rs`.

use super::*;
use crate::domain::ids::{OrganizationId, ProductId};
use crate::domain::tax_settings::TaxBehaviorOption;
use crate::error::ApiError;

/// A product selling `price` only, every price on the organization's default behaviour.
pub(crate) fn product_of(price: &Price) -> Product {
    Product {
        id: ProductId::new(),
        organization_id: OrganizationId::new(),
        created_at: price.created_at,
        modified_at: None,
        name: "Product".into(),
        description: None,
        is_recurring: price.kind.is_recurring(),
        is_archived: false,
        is_tax_applicable: true,
        metadata: Default::default(),
        prices: vec![price.clone()],
        benefit_ids: Vec::new(),
        media_ids: Vec::new(),
        attached_custom_fields: Vec::new(),
        recurring_interval_count: 1,
        trial: None,
        price_tax_behavior: Vec::new(),
        free_price_currency: Vec::new(),
    }
}

fn parse(raw: Value, existing: bool) -> Result<Option<PriceInput>, Vec<FieldError>> {
    let mut v = Validator::new();
    let loc = crate::loc!["body", "prices", 0];
    let out = parse_price(&mut v, &loc, &raw, existing, None);
    match v.finish() {
        Ok(()) => Ok(out),
        Err(ApiError::Validation(items)) => Err(items),
        Err(e) => panic!("{e:?}"),
    }
}

#[test]
fn parses_every_price_shape() {
    assert_eq!(
        parse(json!({"type": "recurring", "amount_type": "fixed", "price_amount": 1000, "recurring_interval": "month"}), false).unwrap(),
        Some(PriceInput::New(PriceKind::RecurringFixed { interval: domain::RecurringInterval::Month, currency: "usd".into(), amount: 1000 }.into()))
    );
    assert_eq!(
        parse(
            json!({"type": "one_time", "amount_type": "custom", "minimum_amount": 100}),
            false
        )
        .unwrap(),
        Some(PriceInput::New(
            PriceKind::OneTimeCustom {
                currency: "usd".into(),
                minimum_amount: Some(100),
                maximum_amount: None,
                preset_amount: None
            }
            .into()
        ))
    );
    assert_eq!(
        parse(json!({"type": "one_time", "amount_type": "free"}), false).unwrap(),
        Some(PriceInput::New(PriceKind::OneTimeFree.into()))
    );
    let id = uuid::Uuid::new_v4();
    assert_eq!(
        parse(json!({"id": id.to_string(), "type": "one_time"}), true).unwrap(),
        Some(PriceInput::Existing(PriceId(id)))
    );
}

#[test]
fn reports_each_bad_field() {
    let e = parse(json!({"type": "recurring", "amount_type": "custom"}), false).unwrap_err();
    assert_eq!(e[0].kind, "literal_error");
    assert_eq!(e[0].loc, crate::loc!["body", "prices", 0, "amount_type"]);
    let e = parse(json!({"type": "one_time", "amount_type": "fixed", "price_amount": 49, "price_currency": "eur"}), false).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].kind, "minimum_price");
    assert_eq!(e[0].msg, "Amount must be at least €0.50");
    let e = parse(json!({"type": "one_time", "amount_type": "fixed", "price_amount": -1, "price_currency": "xau"}), false).unwrap_err();
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].kind, "enum");
    assert_eq!(e[1].kind, "greater_than_equal");
    let e = parse(json!({"type": "one_time"}), false).unwrap_err();
    assert_eq!(e[0].kind, "missing");
    assert_eq!(e[0].loc, crate::loc!["body", "prices", 0, "amount_type"]);
}

#[test]
fn parses_seat_based_prices_and_their_tiers() {
    let raw = json!({"type": "one_time", "amount_type": "seat_based", "seat_tiers": {
        "tiers": [{"min_seats": 5, "max_seats": null, "price_per_seat": 800},
                  {"min_seats": 1, "max_seats": 4, "price_per_seat": 1000}],
        "minimum_seats": 99}});
    let Ok(Some(PriceInput::New(NewPrice {
        kind: PriceKind::OneTimeSeatBased {
            currency,
            seat_tiers,
        },
        tax_behavior: None,
        ..
    }))) = parse(raw, false)
    else {
        panic!("seat-based price refused");
    };
    assert_eq!(currency, "usd");
    assert_eq!(seat_tiers.tier_type, domain::SeatTierType::Volume);
    assert_eq!(seat_tiers.tiers()[0].min_seats, 1);
    assert_eq!(
        (seat_tiers.minimum_seats(), seat_tiers.maximum_seats()),
        (1, None)
    );
    let raw = json!({"type": "recurring", "recurring_interval": "month", "amount_type": "seat_based",
        "seat_tiers": {"seat_tier_type": "graduated", "tiers": [{"min_seats": 1, "price_per_seat": 0}]}});
    assert!(matches!(
        parse(raw, false),
        Ok(Some(PriceInput::New(NewPrice {
            kind: PriceKind::RecurringSeatBased { .. },
            ..
        })))
    ));
    let err = |raw: Value| parse(raw, false).err().unwrap_or_default();
    let base = |tiers: Value| json!({"type": "one_time", "amount_type": "seat_based", "seat_tiers": tiers});
    let e = err(json!({"type": "one_time", "amount_type": "seat_based"}));
    assert_eq!(
        (e[0].kind.as_str(), e[0].loc.clone()),
        ("missing", crate::loc!["body", "prices", 0, "seat_tiers"])
    );
    let e = err(base(json!({"tiers": []})));
    assert_eq!(
        (e[0].kind.as_str(), e[0].loc.clone()),
        (
            "too_short",
            crate::loc!["body", "prices", 0, "seat_tiers", "tiers"]
        )
    );
    let e = err(base(
        json!({"tiers": [{"min_seats": 0, "price_per_seat": -1}]}),
    ));
    assert_eq!(e.len(), 2);
    assert_eq!(
        e[0].loc,
        crate::loc!["body", "prices", 0, "seat_tiers", "tiers", 0, "min_seats"]
    );
    assert_eq!(
        e[1].loc,
        crate::loc![
            "body",
            "prices",
            0,
            "seat_tiers",
            "tiers",
            0,
            "price_per_seat"
        ]
    );
    let e = err(base(
        json!({"seat_tier_type": "stepped", "tiers": [{"min_seats": 1, "price_per_seat": 1}]}),
    ));
    assert_eq!(
        e[0].loc,
        crate::loc!["body", "prices", 0, "seat_tiers", "seat_tier_type"]
    );
    let e = err(base(
        json!({"tiers": [{"min_seats": 1, "max_seats": 3, "price_per_seat": 1},
                                        {"min_seats": 5, "price_per_seat": 1}]}),
    ));
    assert_eq!(e[0].kind, "value_error");
    assert_eq!(
        e[0].msg,
        "Value error, Gap or overlap between tiers: tier ending at 3 and tier starting at 5"
    );
    let e = err(base(
        json!({"tiers": [{"min_seats": 1, "price_per_seat": 1},
                                        {"min_seats": 2, "price_per_seat": 1}]}),
    ));
    assert_eq!(
        e[0].msg,
        "Value error, Only the last tier can have unlimited max_seats (None)"
    );
}

#[test]
fn a_seat_based_price_is_sold_alone() {
    let tiers = domain::SeatTiers::new(
        domain::SeatTierType::Volume,
        vec![domain::SeatTier {
            min_seats: 1,
            max_seats: None,
            price_per_seat: 500,
        }],
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    let seats = PriceKind::RecurringSeatBased {
        interval: domain::RecurringInterval::Month,
        currency: "usd".into(),
        seat_tiers: tiers.clone(),
    };
    let year = PriceKind::RecurringFixed {
        interval: domain::RecurringInterval::Year,
        currency: "usd".into(),
        amount: 1000,
    };
    let one_time = PriceKind::OneTimeSeatBased {
        currency: "usd".into(),
        seat_tiers: tiers,
    };
    let check = |kinds: &[&PriceKind]| {
        let mut v = Validator::new();
        let pairs: Vec<(Currency, &PriceKind)> = kinds
            .iter()
            .map(|k| {
                (
                    k.currency()
                        .and_then(Currency::from_code)
                        .unwrap_or_default(),
                    *k,
                )
            })
            .collect();
        check_price_set(&mut v, &pairs, &Value::Null);
        v.finish().err()
    };
    assert!(check(&[&seats]).is_none());
    assert!(check(&[&one_time]).is_none());
    assert!(check(&[&seats, &year]).is_some());
    assert!(check(&[&seats, &seats]).is_some());
    assert!(check(&[&one_time, &PriceKind::OneTimeFree]).is_some());
    // The output names the tiers and the seat counts they allow.
    let p = Price {
        id: PriceId::new(),
        created_at: chrono::Utc::now(),
        modified_at: None,
        is_archived: false,
        kind: seats,
    };
    let out = serde_json::to_value(ProductPrice::new(&product_of(&p), &p, &[])).unwrap_or_default();
    assert_eq!(out["amount_type"], "seat_based");
    assert_eq!(out["price_currency"], "usd");
    assert_eq!(
        out["seat_tiers"],
        json!({"seat_tier_type": "volume", "minimum_seats": 1, "maximum_seats": null,
               "tiers": [{"min_seats": 1, "max_seats": null, "price_per_seat": 500}]})
    );
}

#[test]
fn price_sets() {
    let month = PriceKind::RecurringFixed {
        interval: domain::RecurringInterval::Month,
        currency: "usd".into(),
        amount: 100,
    };
    let year = PriceKind::RecurringFixed {
        interval: domain::RecurringInterval::Year,
        currency: "usd".into(),
        amount: 1000,
    };
    let check = |kinds: &[&PriceKind]| {
        let mut v = Validator::new();
        let pairs: Vec<(Currency, &PriceKind)> = kinds
            .iter()
            .map(|k| {
                (
                    k.currency()
                        .and_then(Currency::from_code)
                        .unwrap_or_default(),
                    *k,
                )
            })
            .collect();
        check_price_set(&mut v, &pairs, &Value::Null);
        v.finish().err()
    };
    assert!(check(&[&month, &year]).is_none());
    assert!(check(&[&month, &month]).is_some());
    assert!(check(&[&month, &year, &month]).is_some());
    assert!(check(&[&PriceKind::OneTimeFree]).is_none());
    assert!(check(&[&PriceKind::OneTimeFree, &PriceKind::OneTimeFree]).is_some());
    assert!(check(&[&month, &PriceKind::OneTimeFree]).is_some());
    assert!(check(&[
        &month,
        &PriceKind::RecurringFree {
            interval: domain::RecurringInterval::Year
        }
    ])
    .is_some());
    assert!(check(&[]).is_some());
}

/// `tax_behavior` on a new price: the three options, null or absent for the
/// organization's default, anything else Polar's enum error at the price's key; an
/// existing price (`{"id": …}`) ignores it (it keeps the behaviour it has).
#[test]
fn a_new_price_reads_its_tax_behaviour() {
    let with = |b: Value| json!({"type": "one_time", "amount_type": "fixed", "price_amount": 1000, "tax_behavior": b});
    let behaviour = |raw: Value| match parse(raw, true) {
        Ok(Some(PriceInput::New(p))) => Ok(p.tax_behavior),
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(e),
    };
    for option in TaxBehaviorOption::ALL {
        assert_eq!(behaviour(with(json!(option.as_str()))), Ok(Some(option)));
    }
    assert_eq!(behaviour(with(Value::Null)), Ok(None));
    assert_eq!(
        behaviour(json!({"type": "one_time", "amount_type": "free"})),
        Ok(None)
    );
    for bad in [
        json!("gross"),
        json!("Inclusive"),
        json!(1),
        json!({"a": 1}),
    ] {
        let errors = behaviour(with(bad.clone())).unwrap_err();
        assert_eq!(errors.len(), 1, "{bad}");
        let e = serde_json::to_value(&errors[0]).unwrap_or_default();
        assert_eq!(e["type"], "enum");
        assert_eq!(e["loc"], json!(["body", "prices", 0, "tax_behavior"]));
        assert_eq!(
            e["msg"],
            "Input should be 'location', 'inclusive' or 'exclusive'"
        );
        assert_eq!(e["input"], bad);
        assert_eq!(
            e["ctx"]["expected"],
            "'location', 'inclusive' or 'exclusive'"
        );
    }
    // Other problems of the price are reported with it.
    let errors = parse(
        json!({"type": "one_time", "amount_type": "fixed", "tax_behavior": "gross"}),
        false,
    )
    .unwrap_err();
    assert_eq!(errors.len(), 2);
    let id = uuid::Uuid::new_v4();
    assert_eq!(
        parse(json!({"id": id, "tax_behavior": "gross"}), true),
        Ok(Some(PriceInput::Existing(PriceId(id))))
    );
}

/// A rendered price answers the behaviour it chose, `null` when it follows the
/// organization's default.
#[test]
fn a_price_renders_its_tax_behaviour() {
    let p = Price {
        id: PriceId::new(),
        created_at: chrono::Utc::now(),
        modified_at: None,
        is_archived: false,
        kind: PriceKind::OneTimeFixed {
            currency: "eur".into(),
            amount: 1190,
        },
    };
    let mut product = product_of(&p);
    let render = |product: &Product| {
        serde_json::to_value(ProductPrice::new(product, &p, &[])).unwrap_or_default()
            ["tax_behavior"]
            .clone()
    };
    assert_eq!(render(&product), Value::Null);
    product
        .price_tax_behavior
        .push((p.id, TaxBehaviorOption::Inclusive));
    assert_eq!(render(&product), json!("inclusive"));
    let recurring = Price {
        kind: PriceKind::RecurringFixed {
            interval: domain::RecurringInterval::Month,
            currency: "eur".into(),
            amount: 500,
        },
        ..p.clone()
    };
    product.prices = vec![recurring.clone()];
    product.price_tax_behavior = vec![(p.id, TaxBehaviorOption::Exclusive)];
    let out = serde_json::to_value(ProductPriceRecurring::new(&product, &recurring, &[]))
        .unwrap_or_default();
    assert_eq!(out["tax_behavior"], "exclusive");
}
