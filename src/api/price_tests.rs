//! Unit tests of `price.rs`.

use super::*;
use crate::error::ApiError;

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
        Some(PriceInput::New(PriceKind::RecurringFixed { interval: domain::RecurringInterval::Month, currency: "usd".into(), amount: 1000 }))
    );
    assert_eq!(
        parse(
            json!({"type": "one_time", "amount_type": "custom", "minimum_amount": 100}),
            false
        )
        .unwrap(),
        Some(PriceInput::New(PriceKind::OneTimeCustom {
            currency: "usd".into(),
            minimum_amount: Some(100),
            maximum_amount: None,
            preset_amount: None
        }))
    );
    assert_eq!(
        parse(json!({"type": "one_time", "amount_type": "free"}), false).unwrap(),
        Some(PriceInput::New(PriceKind::OneTimeFree))
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
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].kind, "greater_than_equal");
    assert_eq!(e[1].kind, "string_pattern_mismatch");
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
    let Ok(Some(PriceInput::New(PriceKind::OneTimeSeatBased {
        currency,
        seat_tiers,
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
        Ok(Some(PriceInput::New(PriceKind::RecurringSeatBased { .. })))
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
        check_price_set(&mut v, kinds, &Value::Null);
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
    let out = serde_json::to_value(ProductPrice::new(ProductId::new(), &p)).unwrap_or_default();
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
        check_price_set(&mut v, kinds, &Value::Null);
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
